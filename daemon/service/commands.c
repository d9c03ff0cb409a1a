/* commands.c - the control protocol's commands: parse a line, act on the service, reply. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "commands.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands_internal.h"
#include "entry.h"
#include "error.h"
#include "log.h"
#include "state.h"
#include "stats.h"

/* ---- entry commands ---- */

static int cmd_add(struct command *c)
{
	struct entry e;
	char *ttl_text, err[256];
	uint64_t ttl = 0, expiry = 0;

	if (command_take_option(c->args, "--ttl", &ttl_text)) {
		if (!entry_seconds(ttl_text, &ttl) || ttl == 0 || ttl > ENTRY_TTL_MAX)
			return command_fail(c, "--ttl: expected a time from 1s to 3650d such as 90, 90s, 15m, 4h or 7d, got '%s'",
					    ttl_text);
		expiry = (uint64_t)time(NULL) + ttl;
	}
	if (command_parse_entry(c, "add", &e) < 0)
		return -1;
	int rc = service_add(c->s, &e, expiry, SERVICE_FROM_OPERATOR, err, sizeof(err));
	if (rc < 0)
		return command_fail(c, "add: %s", err);
	json_object_set_new(c->reply, "added", json_boolean(rc == 0));
	json_object_set_new(c->reply, "entry", command_entry_json(&e));
	if (expiry)
		json_object_set_new(c->reply, "expires", json_integer((json_int_t)expiry));
	return 0;
}

static int cmd_del(struct command *c)
{
	struct entry e;
	char err[256];

	uint32_t still_held;

	if (command_parse_entry(c, "del", &e) < 0)
		return -1;
	int rc = service_del(c->s, &e, SERVICE_FROM_OPERATOR, &still_held, err, sizeof(err));
	if (rc < 0)
		return command_fail(c, "del: %s", err);
	json_object_set_new(c->reply, "deleted", json_boolean(rc == 0));
	json_object_set_new(c->reply, "entry", command_entry_json(&e));
	/* An entry a feed holds stays: del takes only the local list's hold. */
	if (still_held)
		json_object_set_new(c->reply, "still_held_by", service_holders_json(c->s, still_held));
	return 0;
}

/* Entries covering an address: their texts, which lists hold each, and all of those lists. */
struct covering {
	const struct service *s;
	json_t *entries, *lists;
	uint32_t holders;
};

static int add_covering(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct covering *cv = ctx;
	json_t *text = command_entry_json(e);

	(void)group;
	cv->holders |= holders;
	json_object_set_new(cv->lists, json_string_value(text), service_holders_json(cv->s, holders));
	json_array_append_new(cv->entries, text);
	return 0;
}

static int find_covering(struct command *c, const uint8_t *addr, size_t alen, const char *name)
{
	struct covering cv = { c->s, json_array(), json_object(), 0 };

	service_covering(c->s, addr, alen, add_covering, &cv);
	json_object_set_new(c->reply, name, cv.entries);
	json_object_set_new(c->reply, "lists", cv.lists);
	json_object_set_new(c->reply, "exempt_by", service_holders_json(c->s, cv.holders & service_pass_holders(c->s)));
	return 0;
}

/* `match ADDRESS`: the addr and net entries that cover it (what alerts on it as source or destination). */
static int cmd_match(struct command *c)
{
	uint8_t addr[16];
	int family, alen = entry_parse_ip(c->args, addr, &family);

	if (alen < 0)
		return command_fail(c, "match: expected an IPv4 or IPv6 address, got '%.64s'", c->args);
	find_covering(c, addr, (size_t)alen, "entries");
	json_object_set_new(c->reply, "covered", json_boolean(json_array_size(json_object_get(c->reply, "entries")) > 0));
	return 0;
}

static int cmd_query(struct command *c)
{
	struct entry e;
	bool filter;

	if (command_parse_entry(c, "query", &e) < 0)
		return -1;
	uint64_t expiry;
	uint32_t holders;
	bool present = service_lookup(c->s, &e, &filter, &expiry, &holders);
	json_object_set_new(c->reply, "present", json_boolean(present));
	json_object_set_new(c->reply, "held_by", service_holders_json(c->s, holders));
	json_object_set_new(c->reply, "exempt_by", service_holders_json(c->s, holders & service_pass_holders(c->s)));
	json_object_set_new(c->reply, "filter", json_boolean(filter));
	json_object_set_new(c->reply, "entry", command_entry_json(&e));
	if (expiry)
		json_object_set_new(c->reply, "expires", json_integer((json_int_t)expiry));
	/* exact membership; but a net may cover an address, so that it alerts all the same */
	if (e.kind == ENTRY_ADDR)
		find_covering(c, e.key, e.len, "covered_by");
	return 0;
}

static int cmd_stats(struct command *c)
{
	json_object_set_new(c->reply, "stats", service_stats(c->s));
	return 0;
}

static int cmd_metrics(struct command *c)
{
	char *text = service_metrics(c->s);

	if (text == NULL)
		return command_fail(c, "metrics: out of memory");
	json_object_set_new(c->reply, "metrics", json_string(text));
	free(text);
	return 0;
}

static int cmd_version(struct command *c)
{
	json_object_set_new(c->reply, "version", json_string(BLOOMD_VERSION));
	json_object_set_new(c->reply, "state_format", json_integer(STATE_VERSION));
	return 0;
}

/* ---- state ---- */

static int cmd_rebuild(struct command *c)
{
	bool wait = command_take_flag(c->args, "--wait");
	char *rounds_text, err[256];
	unsigned long long rounds = service_rounds(c->s);

	if (command_take_option(c->args, "--rounds", &rounds_text) &&
	    command_parse_count(c, "--rounds", rounds_text, 1000, &rounds) < 0)
		return -1;
	wait = command_take_flag(c->args, "--wait") || wait;
	if (c->args[0])
		return command_fail(c, "rebuild: unexpected '%.40s'", c->args);
	uint64_t waiter = wait ? control_hold(c->cl) : 0;
	if (service_rebuild(c->s, (unsigned)rounds, waiter, err, sizeof(err)) < 0) {
		if (wait)
			control_release(c->cl);
		return command_fail(c, "rebuild: %s", err);
	}
	if (wait) {
		return command_reply_later(c);
	}
	json_object_set_new(c->reply, "started", json_true());
	json_object_set_new(c->reply, "rounds", json_integer((json_int_t)rounds));
	return 0;
}

static int cmd_save(struct command *c)
{
	char err[512];

	if (c->args[0])
		return command_fail(c, "save: unexpected '%.40s'", c->args);
	uint64_t waiter = control_hold(c->cl);
	if (service_save(c->s, waiter, err, sizeof(err)) < 0) {
		control_release(c->cl);
		return command_fail(c, "save: %s", err);
	}
	return command_reply_later(c);
}

/*
 * `replay - [--wait] [--name NAME]`, with the pcap file passed open
 * (SCM_RIGHTS): bloomd opens no file a client names, which might be one only
 * bloomd's user may read, or a FIFO that blocks the loop. NAME, the rest of
 * the line, is what events and stats call it.
 */
static int cmd_replay(struct command *c)
{
	const char *name = "(a file passed open)";
	char *at = strstr(c->args, "--name ");
	char err[256];

	if (at && (at == c->args || at[-1] == ' ')) {
		name = at + 7;
		*at = '\0';
		command_strip_end(c->args);
	}
	bool wait = command_take_flag(c->args, "--wait");
	int fd = control_client_take_fd(c->cl);
	if (strcmp(c->args, "-") != 0) {
		if (fd >= 0)
			close(fd);
		return command_fail(c, "replay: bloomd opens no file a client names: pass it open with `replay -` (bloomctl replay PCAP does)");
	}
	if (fd < 0)
		return command_fail(c, "replay -: no open file came with the command (bloomctl replay PCAP passes one)");
	uint64_t waiter = wait ? control_hold(c->cl) : 0;
	if (service_replay_fd(c->s, fd, name, waiter, err, sizeof(err)) < 0) {
		if (wait)
			control_release(c->cl);
		return command_fail(c, "replay: %s", err);
	}
	if (wait)
		return command_reply_later(c);
	json_object_set_new(c->reply, "queued", json_true());
	return 0;
}

/* The reply comes once every list's file is taken or refused, a slice at a time. */
static int cmd_reload(struct command *c)
{
	if (service_reload_for(c->s, control_hold(c->cl)) < 0) {
		control_release(c->cl);
		return command_fail(c, "reload: out of memory");
	}
	return command_reply_later(c);
}

/* ---- lists ---- */

static int cmd_lists(struct command *c)
{
	if (c->args[0])
		return command_fail(c, "lists: unexpected '%.40s'", c->args);
	json_object_set_new(c->reply, "lists", service_lists_json(c->s));
	return 0;
}

/*
 * `replace LIST`: its file read again; `replace LIST -` with the new version
 * passed open, for a list without a file (bloomd opens no file a client names).
 */
static int cmd_replace(struct command *c)
{
	char *name = c->args, *dash = strchr(c->args, ' ');
	int fd = control_client_take_fd(c->cl);
	char err[512];

	if (dash) {
		*dash++ = '\0';
		if (strcmp(command_trim(dash), "-") != 0) {
			if (fd >= 0)
				close(fd);
			return command_fail(c, "replace: bloomd opens no file a client names: pass it open with `replace LIST -` (bloomctl replace LIST FILE does)");
		}
		if (fd < 0)
			return command_fail(c, "replace %.64s -: no open file came with the command", name);
	} else if (fd >= 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) { /* a list with a url is fetched now; the reply comes when it is done */
		uint64_t waiter = control_hold(c->cl);
		int fetching = service_list_fetch(c->s, name, waiter, err, sizeof(err));
		if (fetching != 1)
			control_release(c->cl);
		if (fetching < 0)
			return command_fail(c, "replace: %s", err);
		if (fetching == 1)
			return command_reply_later(c);
	}
	/* The version is taken a slice at a time: the reply comes when it is taken or refused. */
	uint64_t waiter = control_hold(c->cl);
	if (service_list_replace(c->s, name, fd, waiter, err, sizeof(err)) < 0) {
		control_release(c->cl);
		return command_fail(c, "replace: %s", err);
	}
	return command_reply_later(c);
}

static int cmd_flush(struct command *c)
{
	char err[512];
	uint64_t waiter = control_hold(c->cl);

	if (service_list_flush(c->s, c->args, SERVICE_FROM_OPERATOR, waiter, err, sizeof(err)) < 0) {
		control_release(c->cl);
		return command_fail(c, "flush: %s", err);
	}
	return command_reply_later(c);
}

/* `cluster status`, `cluster snapshot`. */
static int cmd_cluster(struct command *c)
{
	char err[512];
	json_t *status = service_cluster_status(c->s);

	if (status == NULL)
		return command_fail(c, "cluster: no [cluster] redis is set");
	if (strcmp(c->args, "status") == 0) {
		json_object_set_new(c->reply, "cluster", status);
		return 0;
	}
	json_decref(status);
	if (strcmp(c->args, "snapshot") != 0)
		return command_fail(c, "cluster: expected status or snapshot, got '%.40s'", c->args);
	if (!control_client_trusted(c->cl))
		return command_fail(c, "cluster snapshot: not allowed for this user");
	uint64_t waiter = control_hold(c->cl);
	if (service_cluster_snapshot(c->s, waiter, err, sizeof(err)) < 0) {
		control_release(c->cl);
		return command_fail(c, "cluster snapshot: %s", err);
	}
	return command_reply_later(c);
}

/* `blocked`: the addresses in the [action] sets, with the seconds each has left. */
static int cmd_blocked(struct command *c)
{
	char err[256];

	if (c->args[0])
		return command_fail(c, "blocked: unexpected '%.40s'", c->args);
	if (service_blocked(c->s, c->reply, err, sizeof(err)) < 0)
		return command_fail(c, "%s", err);
	return 0;
}

/* `unblock ADDRESS`: out of the set now; back only if it matches again. */
static int cmd_unblock(struct command *c)
{
	uint8_t addr[16];
	char err[256];
	int family;

	if (entry_parse_ip(c->args, addr, &family) < 0)
		return command_fail(c, "unblock: expected an IPv4 or IPv6 address, got '%.64s'", c->args);
	int rc = service_unblock(c->s, addr, family, err, sizeof(err));
	if (rc < 0)
		return command_fail(c, "%s", err);
	json_object_set_new(c->reply, "unblocked", json_boolean(rc > 0));
	json_object_set_new(c->reply, "address", json_string(c->args));
	return 0;
}

static int cmd_help(struct command *c);

static const struct {
	const char *name;
	bool changes;
	int (*run)(struct command *c);
	const char *usage;
} COMMANDS[] = {
#define COMMAND(name, changes, usage, cli_usage, cli_help) { #name, changes, cmd_##name, usage },
#include "commands.def"
#undef COMMAND
};

static int cmd_help(struct command *c)
{
	json_t *usage = json_array();

	for (size_t i = 0; i < sizeof(COMMANDS) / sizeof(COMMANDS[0]); i++)
		json_array_append_new(usage, json_string(COMMANDS[i].usage));
	json_object_set_new(c->reply, "commands", usage);
	return 0;
}

static void run_command(struct commands *cmds, struct control_client *cl, char *line)
{
	struct command c = { .s = cmds->s, .cl = cl, .reply = json_pack("{s:b}", "ok", 1) };
	char *word = command_trim(line), *args = word;

	while (*args && !isspace((unsigned char)*args))
		args++;
	if (*args)
		*args++ = '\0';
	c.args = command_trim(args);
	size_t i = 0, n = sizeof(COMMANDS) / sizeof(COMMANDS[0]);
	while (i < n && strcmp(COMMANDS[i].name, word) != 0)
		i++;
	if (word[0] == '\0')
		command_fail(&c, "empty line: expected a command (help lists them)");
	else if (i == n)
		command_fail(&c, "unknown command '%.32s' (help lists them)", word);
	else if (COMMANDS[i].changes && !control_client_trusted(cl))
		command_fail(&c, "%s: not allowed for this user (root, bloomd's user or the [control] group only)", word);
	else
		COMMANDS[i].run(&c);
	if (c.reply && i < n && COMMANDS[i].changes)
		command_reply_change(cmds, cl, c.reply);
	else if (c.reply)
		command_send_json(cl, c.reply);
}

struct commands *commands_new(struct service *s)
{
	struct commands *cmds = calloc(1, sizeof(*cmds));

	if (cmds)
		cmds->s = s;
	return cmds;
}

void commands_free(struct commands *cmds)
{
	if (cmds)
		json_decref(cmds->held_reply);
	free(cmds);
}

void commands_line(void *commands, struct control_client *cl, const char *line, size_t len)
{
	struct commands *cmds = commands;
	char *copy;

	if (strlen(line) != len) {
		/* A NUL inside a line: not a text command; a load stream gets it as a bad line. */
		if (*control_client_data(cl))
			command_stream_reject(cmds, cl, "NUL byte in line");
		else
			command_send_json(cl, json_pack("{s:b,s:s}", "ok", 0, "error", "NUL byte in the command line"));
		return;
	}
	copy = strdup(line);
	if (copy == NULL) {
		command_send_json(cl, json_pack("{s:b,s:s}", "ok", 0, "error", "out of memory"));
		return;
	}
	if (*control_client_data(cl))
		command_stream_line(cmds, cl, copy);
	else
		run_command(cmds, cl, copy);
	free(copy);
}

void commands_burst(void *commands, bool replied)
{
	struct commands *cmds = commands;

	if (cmds->streaming) /* a load's lines parsed ahead are added within the burst that brought them */
		command_stream_flush(cmds, cmds->streaming);
	/* Every worker checks against the change before it is acknowledged. */
	service_propagate(cmds->s);
	command_acknowledge_held(cmds, replied);
}

void commands_gone(void *commands, struct control_client *cl)
{
	command_stream_flush(commands, cl); /* none are left after a burst; but never a line dropped */
	command_stream_free(cl);
	command_forget_held(commands, cl);
}
