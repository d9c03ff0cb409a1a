/* commands_reply.c - what every command shares: replies sent, errors made, arguments taken apart. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "commands_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

void command_send_json(struct control_client *cl, json_t *reply)
{
	char *text = json_dumps(reply, JSON_COMPACT);

	if (text == NULL)
		text = strdup("{\"ok\":false,\"error\":\"out of memory\"}");
	if (text)
		control_reply(cl, text, strlen(text));
	free(text);
	json_decref(reply);
}

void command_reply_change(struct commands *cmds, struct control_client *cl, json_t *reply)
{
	if (service_config(cmds->s)->fsync != CONFIG_FSYNC_ALWAYS || !service_unsynced(cmds->s) || cmds->held ||
	    !json_is_true(json_object_get(reply, "ok"))) {
		command_send_json(cl, reply);
		return;
	}
	cmds->held = cl;
	cmds->held_reply = reply;
	control_hold(cl);
}

void command_acknowledge_held(struct commands *cmds, bool replied)
{
	bool always = service_config(cmds->s)->fsync == CONFIG_FSYNC_ALWAYS;
	/* fsync = always: durable before it is acknowledged; a load in progress acknowledges at its end */
	int rc = service_sync(cmds->s, always && (replied || cmds->held));

	if (cmds->held == NULL)
		return;
	json_t *reply = cmds->held_reply;
	if (rc < 0) {
		json_decref(reply);
		reply = json_pack("{s:b,s:s+}", "ok", 0, "error",
				  "the change was made in memory but is not durable (", service_store_error(cmds->s),
				  "): it is lost if bloomd stops before the state can be written; changes are refused until then");
	}
	command_send_json(cmds->held, reply);
	control_release(cmds->held);
	cmds->held = NULL;
	cmds->held_reply = NULL;
}

void command_forget_held(struct commands *cmds, struct control_client *cl)
{
	if (cmds->held == cl) {
		json_decref(cmds->held_reply);
		cmds->held = NULL;
		cmds->held_reply = NULL;
	}
}

int command_fail(struct command *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error_printable(msg);
	json_object_clear(c->reply);
	json_object_set_new(c->reply, "ok", json_false());
	json_object_set_new(c->reply, "error", json_string(msg));
	return -1;
}

/* The reply is sent another way, or later (--wait, load -): none now. */
int command_reply_later(struct command *c)
{
	json_decref(c->reply);
	c->reply = NULL;
	return 0;
}

/* ---- arguments ---- */

char *command_trim(char *p)
{
	char *end;

	while (isspace((unsigned char)*p))
		p++;
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return p;
}

void command_strip_end(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* Cut a trailing "flag" off args; whether it was there. */
bool command_take_flag(char *args, const char *flag)
{
	size_t n = strlen(args), f = strlen(flag);

	if (n < f || strcmp(args + n - f, flag) != 0 || (n > f && !isspace((unsigned char)args[n - f - 1])))
		return false;
	args[n - f] = '\0';
	command_strip_end(args);
	return true;
}

/* Cut a trailing "option VALUE" off args; *value points into args. */
bool command_take_option(char *args, const char *option, char **value)
{
	char *last = strrchr(args, ' ');
	size_t n, o = strlen(option);

	if (last == NULL)
		return false;
	n = (size_t)(last - args);
	while (n > 0 && args[n - 1] == ' ')
		n--; /* the end of the word before the value */
	if (n < o || strncmp(args + n - o, option, o) != 0 || (n > o && args[n - o - 1] != ' ') ||
	    strchr(last + 1, '"'))
		return false; /* (a quote: the words are inside a quoted signature) */
	*value = last + 1;
	args[n - o] = '\0';
	command_strip_end(args);
	return true;
}

int command_parse_count(struct command *c, const char *name, const char *text, unsigned long long max,
		       unsigned long long *out)
{
	char *end;

	if (!isdigit((unsigned char)text[0]) || (*out = strtoull(text, &end, 10), *end) || *out > max)
		return command_fail(c, "%s: expected a whole number up to %llu, got '%.20s'", name, max, text);
	return 0;
}

int command_parse_entry(struct command *c, const char *what, struct entry *e)
{
	char err[256];
	int rc = entry_parse(c->args, e, err, sizeof(err));

	if (rc < 0)
		return command_fail(c, "%s: %s", what, err);
	if (rc == 0)
		return command_fail(c, "%s: expected an entry (addr, net, pair or sig)", what);
	return 0;
}

json_t *command_entry_json(const struct entry *e)
{
	char text[ENTRY_TEXT_MAX];

	entry_format_value(e->kind, e->key, e->len, text, sizeof(text));
	return json_sprintf("%s %s", entry_kind_name(e->kind), text);
}
