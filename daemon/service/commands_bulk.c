/* commands_bulk.c - the commands that move many entries: load (lines in) and list (parts out). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands_internal.h"
#include "error.h"

#define LOAD_ERROR_MAX (512 + 8192) /* a reason and a whole line (the control protocol's longest) */

/* ---- load ---- */

static void note_rejected(struct load_stream *ls, const char *where, const char *err)
{
	char msg[LOAD_ERROR_MAX];

	ls->rejected++;
	if (json_array_size(ls->errors) >= MAX_REPORTED_ERRORS)
		return;
	snprintf(msg, sizeof(msg), "%s%s%s", where ? where : "", where ? ": " : "", err);
	error_printable(msg);
	json_array_append_new(ls->errors, json_string(msg));
}

static void load_result(json_t *reply, const struct load_stream *ls)
{
	json_object_set_new(reply, "added", json_integer((json_int_t)ls->added));
	json_object_set_new(reply, "present", json_integer((json_int_t)ls->present));
	json_object_set_new(reply, "rejected", json_integer((json_int_t)ls->rejected));
	json_object_set(reply, "errors", ls->errors);
}

/* A line parsed ahead of its add: its entry, or why it is not one, and its text for an error. */
struct load_line {
	struct entry e;
	uint64_t expires, number;
	int rc;                    /* entry_parse_expiry's: 1 an entry, -1 bad */
	char why[256];
	char *text;
	size_t cap;
};

void command_stream_free(struct control_client *cl)
{
	struct load_stream *ls = *control_client_data(cl);

	if (ls) {
		for (size_t i = 0; ls->ahead && i < LOAD_AHEAD; i++)
			free(ls->ahead[i].text);
		free(ls->ahead);
		json_decref(ls->errors);
		free(ls);
		*control_client_data(cl) = NULL;
	}
}

int cmd_load(struct command *c)
{
	struct load_stream *ls = calloc(1, sizeof(*ls));

	if (ls == NULL || (ls->errors = json_array()) == NULL) {
		free(ls);
		return command_fail(c, "load: out of memory");
	}
	*control_client_data(c->cl) = ls;
	if (strcmp(c->args, "-") == 0) {
		ls->refused = !control_client_trusted(c->cl);
		return command_reply_later(c); /* after the "." line */
	}
	/* Not a path: bloomd opens no file a client names (it may be one only bloomd's user can read). */
	command_stream_free(c->cl);
	return command_fail(c, "load: give - and the entries on the following lines, then \".\" (bloomctl load FILE streams a file so)");
}

/* Line l added (if it is an entry), and counted; a rejected one noted with its text in full, after why. */
static void load_line_add(struct service *s, struct load_stream *ls, struct load_line *l)
{
	char where[32];
	int rc = l->rc;

	if (rc > 0)
		rc = service_add(s, &l->e, l->expires, SERVICE_FROM_OPERATOR, l->why, sizeof(l->why));
	if (rc == 0)
		ls->added++;
	else if (rc > 0)
		ls->present++;
	if (rc >= 0)
		return;
	char *full = malloc(strlen(l->why) + strlen(l->text) + 5);
	if (full)
		sprintf(full, "%s: '%s'", l->why, l->text);
	snprintf(where, sizeof(where), "line %llu", (unsigned long long)l->number);
	note_rejected(ls, where, full ? full : l->why);
	free(full);
}

void command_stream_flush(struct commands *cmds, struct control_client *cl)
{
	struct load_stream *ls = *control_client_data(cl);

	for (size_t i = 0; ls && i < ls->nahead; i++)
		load_line_add(cmds->s, ls, &ls->ahead[i]);
	if (ls)
		ls->nahead = 0;
	if (cmds->streaming == cl)
		cmds->streaming = NULL;
}

/* The line just counted rejected whole, after the lines parsed ahead of it: the errors in the lines' order. */
static void reject_line(struct commands *cmds, struct control_client *cl, struct load_stream *ls, const char *why)
{
	char where[32];

	command_stream_flush(cmds, cl);
	snprintf(where, sizeof(where), "line %llu", (unsigned long long)ls->line);
	note_rejected(ls, where, why);
}

void command_stream_reject(struct commands *cmds, struct control_client *cl, const char *why)
{
	struct load_stream *ls = *control_client_data(cl);

	ls->line++;
	reject_line(cmds, cl, ls, why);
}

/* line parsed into the next of ls's lines ahead: 1 an entry or a bad line, 0 none (a blank or a comment), -1 out of memory. */
static int load_line_parse(struct load_stream *ls, const char *line)
{
	if (ls->ahead == NULL && (ls->ahead = calloc(LOAD_AHEAD, sizeof(*ls->ahead))) == NULL)
		return -1;
	struct load_line *l = &ls->ahead[ls->nahead];
	size_t len = strlen(line);
	if (len >= l->cap) {
		char *text = realloc(l->text, len + 1);
		if (text == NULL)
			return -1;
		l->text = text;
		l->cap = len + 1;
	}
	l->number = ls->line;
	l->rc = entry_parse_expiry(line, &l->e, (uint64_t)time(NULL), &l->expires, l->why, sizeof(l->why));
	if (l->rc == 0)
		return 0;
	memcpy(l->text, line, len + 1);
	return 1;
}

/* A line of a `load -` stream: its entry added LOAD_AHEAD lines later at most, or at the end of the burst. */
void command_stream_line(struct commands *cmds, struct control_client *cl, char *line)
{
	struct load_stream *ls = *control_client_data(cl);

	if (strcmp(line, ".") == 0) {
		command_stream_flush(cmds, cl);
		json_t *reply = json_pack("{s:b}", "ok", !ls->refused);
		if (ls->refused)
			json_object_set_new(reply, "error", json_string("load: not allowed for this user"));
		else
			load_result(reply, ls);
		command_stream_free(cl);
		command_reply_change(cmds, cl, reply);
		return;
	}
	ls->line++;
	if (ls->refused)
		return;
	int rc = load_line_parse(ls, line);
	if (rc < 0) {
		reject_line(cmds, cl, ls, "out of memory");
		return;
	}
	if (rc == 0)
		return;
	struct load_line *l = &ls->ahead[ls->nahead++];
	if (l->rc > 0)
		service_prefetch(cmds->s, &l->e);
	cmds->streaming = cl;
	if (ls->nahead == LOAD_AHEAD)
		command_stream_flush(cmds, cl);
}

/* ---- reading ---- */

/*
 * A listing goes out in pieces of LIST_PIECE bytes, a step of LIST_STEP
 * entries at a time, and only as the client reads it (control_stream): a
 * million entries are 40 MB, and clients that list and never read must not
 * make bloomd hold 40 MB for each of them.
 */
#define LIST_PIECE (64u << 10)
#define LIST_STEP 2048

struct listing {
	struct service *s;
	struct control_client *cl;
	enum entry_kind kind;
	uint32_t holder;           /* only the entries this list holds; 0: all */
	struct matcher_cursor cursor;
	uint64_t count;
	size_t len;
	char piece[LIST_PIECE];
};

static void list_put(struct listing *l, const char *text, size_t len)
{
	if (l->len + len > sizeof(l->piece)) {
		control_reply_part(l->cl, l->piece, l->len);
		l->len = 0;
	}
	memcpy(l->piece + l->len, text, len);
	l->len += len;
}

/* Canonical entries are plain ASCII (addresses, hex), so they go into JSON as they are. */
static int list_entry(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	char text[ENTRY_TEXT_MAX];
	struct listing *l = ctx;
	const char *kind = entry_kind_name(e->kind);

	(void)group;
	if (l->holder && !(holders & l->holder))
		return 0;
	entry_format_value(e->kind, e->key, e->len, text, sizeof(text));
	if (l->count++)
		list_put(l, ",", 1);
	list_put(l, "\"", 1);
	list_put(l, kind, strlen(kind));
	list_put(l, " ", 1);
	list_put(l, text, strlen(text));
	uint64_t expires = service_expiry(l->s, e);
	if (expires) {
		int n = snprintf(text, ENTRY_TEXT_MAX, " expires=%llu", (unsigned long long)expires);
		list_put(l, text, (size_t)n);
	}
	list_put(l, "\"", 1);
	return 0;
}

static bool list_more(void *ctx, struct control_client *cl)
{
	static const char head[] = "{\"ok\":true,\"entries\":[";
	struct listing *l = ctx;
	char end[64];

	l->cl = cl;
	if (!l->cursor.started)
		list_put(l, head, sizeof(head) - 1);
	service_walk(l->s, l->kind, l->holder, &l->cursor, LIST_STEP, list_entry, l);
	control_reply_part(cl, l->piece, l->len);
	l->len = 0;
	if (l->cursor.part < 2)
		return false;
	int n = snprintf(end, sizeof(end), "],\"count\":%llu}", (unsigned long long)l->count);
	control_reply(cl, end, (size_t)n);
	return true;
}

int cmd_list(struct command *c)
{
	char *kind_text, *list_text;
	enum entry_kind kind = 0;
	uint32_t holder = 0;
	struct listing *l;

	if (command_take_option(c->args, "--kind", &kind_text) && entry_kind_parse(kind_text, &kind) < 0)
		return command_fail(c, "list: unknown kind '%.20s' (addr, net, pair or sig)", kind_text);
	if (command_take_option(c->args, "--list", &list_text) && (holder = service_list_holder(c->s, list_text)) == 0)
		return command_fail(c, "list: no list is named '%.64s' (bloomctl lists shows them)", list_text);
	if (command_take_option(c->args, "--kind", &kind_text) && entry_kind_parse(kind_text, &kind) < 0)
		return command_fail(c, "list: unknown kind '%.20s' (addr, net, pair or sig)", kind_text);
	if (c->args[0])
		return command_fail(c, "list: unexpected '%.40s'", c->args);
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return command_fail(c, "list: out of memory");
	l->s = c->s;
	l->kind = kind;
	l->holder = holder;
	control_stream(c->cl, list_more, l, free);
	return command_reply_later(c);
}

