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

void command_note_rejected(struct load_stream *ls, const char *where, const char *err)
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

void command_stream_free(struct control_client *cl)
{
	struct load_stream *ls = *control_client_data(cl);

	if (ls) {
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

/* A line of a `load -` stream. */
void command_stream_line(struct commands *cmds, struct control_client *cl, char *line)
{
	struct service *s = cmds->s;
	struct load_stream *ls = *control_client_data(cl);
	struct entry e;
	char err[256], where[32];

	if (strcmp(line, ".") == 0) {
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
	snprintf(where, sizeof(where), "line %llu", (unsigned long long)ls->line);
	uint64_t expires;
	int rc = entry_parse_expiry(line, &e, (uint64_t)time(NULL), &expires, err, sizeof(err));
	if (rc == 0)
		return; /* a blank or comment line: nothing to add */
	if (rc > 0)
		rc = service_add(s, &e, expires, SERVICE_FROM_OPERATOR, err, sizeof(err));
	if (rc < 0) { /* the offending text in full, after why */
		char why[400];
		snprintf(why, sizeof(why), "%s: '", err);
		size_t n = strlen(why);
		char *full = malloc(n + strlen(line) + 2);
		if (full) {
			memcpy(full, why, n);
			strcpy(full + n, line);
			strcat(full, "'");
		}
		command_note_rejected(ls, where, full ? full : err);
		free(full);
	}
	else if (rc == 0)
		ls->added++;
	else
		ls->present++;
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

