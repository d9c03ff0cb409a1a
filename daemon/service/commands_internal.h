/* commands_internal.h - what the command files share; no one else includes it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_COMMANDS_INTERNAL_H
#define BLOOMD_COMMANDS_INTERNAL_H

/*
 * A tree: commands.c (dispatch and the short commands) uses
 * commands_bulk.c (the two that move many entries: load, a stream of lines
 * in, and list, a stream of parts out), and both use commands_reply.c
 * (replies, errors, arguments), which uses neither.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "commands.h"

#define MAX_REPORTED_ERRORS 20

/*
 * A `load -` in progress on one client: entry lines until ".". They are
 * parsed LOAD_AHEAD at a time, each entry's slot in the store asked for,
 * before the first is added (as a list's file is read: feed.h); the adds
 * and their errors keep the lines' order, and none waits past its burst.
 */
#define LOAD_AHEAD 16
struct load_line;
struct load_stream {
	bool refused;              /* not trusted: read to the end, add nothing */
	uint64_t line, added, present, rejected;
	json_t *errors;
	struct load_line *ahead;   /* LOAD_AHEAD lines (an entry is 2 KiB), allocated at the first */
	size_t nahead;             /* parsed, not yet added */
};

/*
 * With fsync = always a change is acknowledged only once it is durable: its
 * reply waits, with the client held (so no later line of it runs first),
 * for the fsync at the end of the burst, and becomes an error if that
 * fails. One at most: a held client sends no more lines in the burst.
 */
struct commands {
	struct service *s;
	struct control_client *held; /* the client whose change's reply waits, or NULL */
	struct control_client *streaming; /* the client of this burst with lines of a load parsed ahead, or NULL */
	json_t *held_reply;
};

struct command {
	struct service *s;
	struct control_client *cl;
	char *args;                /* after the command word; options are cut off its end */
	json_t *reply;             /* ok replies add their fields here */
};
/* commands_reply.c */
/* Send reply (and free it); a change's with command_reply_change (it may wait for its fsync). */
void command_send_json(struct control_client *cl, json_t *reply);
void command_reply_change(struct commands *cmds, struct control_client *cl, json_t *reply);
/*
 * At the end of a burst: sync the state (fsync = always: if anything was
 * replied, or a change's reply is held) and send the held reply, or an error
 * if the sync failed; and a held reply forgotten with its client.
 */
void command_acknowledge_held(struct commands *cmds, bool replied);
void command_forget_held(struct commands *cmds, struct control_client *cl);
/* Make c's reply an error; -1. */
int command_fail(struct command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The reply comes later (or was sent in parts): none now. */
int command_reply_later(struct command *c);

/* Arguments: trim blanks; cut a trailing flag or "option VALUE" off args; parse a count or an entry. */
char *command_trim(char *p);
void command_strip_end(char *s);
bool command_take_flag(char *args, const char *flag);
bool command_take_option(char *args, const char *option, char **value);
int command_parse_count(struct command *c, const char *name, const char *text, unsigned long long max,
			unsigned long long *out);
int command_parse_entry(struct command *c, const char *what, struct entry *e);
json_t *command_entry_json(const struct entry *e);

/* commands_bulk.c */
int cmd_load(struct command *c);
int cmd_list(struct command *c);
/* A line of a load stream; a rejected line of it; the stream gone with its client. */
void command_stream_line(struct commands *cmds, struct control_client *cl, char *line);
/* The lines of cl's `load -` parsed ahead, added now (at the end of a burst, before a bad line is noted). */
void command_stream_flush(struct commands *cmds, struct control_client *cl);
/* The next line of cl's `load -` rejected whole (a NUL byte in it), after the lines before it. */
void command_stream_reject(struct commands *cmds, struct control_client *cl, const char *why);
void command_stream_free(struct control_client *cl);

#endif
