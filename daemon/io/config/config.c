/* config.c - the INI configuration: defaults, parsing with inih, validation with file:line. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_internal.h"
#include "inline.h"
#include "sizing.h"

#define CONFIG_MAX_BYTES (1 << 20) /* a configuration is a few KiB; more is not one */

static void count_problem(void *ctx, const char *message)
{
	(void)message;
	(*(unsigned *)ctx)++;
}

/* The local list, with its default labels. */
static int lists_default(struct config *c)
{
	unsigned problems = 0;
	struct loader ld = { .c = c, .on_error = count_problem, .ctx = &problems };

	config_lists_validate(&ld);
	return problems ? -1 : 0;
}

struct config *config_defaults(void)
{
	struct config *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->snaplen = 262144;
	c->fail_open = true;
	c->workers = 1;
	c->xdp_events_rate = 1000;
	c->reject_mark = CONFIG_REJECT_MARK;
	c->promisc = true;
	c->bits_per_entry = 16;
	c->layout = FILTER_BLOCKED;
	c->choices = 2;
	c->hash = HASH_XXH3;
	c->window = 8;
	c->bits_per_window = 12;
	c->fpr_target = 0.001;
	c->auto_rebuild = true;
	c->max_clients = 64;
	c->metrics_max_connections = 64;
	c->metrics_timeout = 10;
	c->idle_timeout = 300;
	c->fsync = CONFIG_FSYNC_EVERYSEC;
	c->journal_max = 64 << 20;
	c->log_level = LOG_LEVEL_INFO;
	c->log_target = LOG_TARGET_STDERR;
	c->events = strdup("-");
	c->flow_timeout = 300;
	c->tcp_connections = 65536;
	c->filemode = 0640;
	c->socket = strdup("/run/bloomd/control.sock");
	c->store_dir = strdup("/var/lib/bloomd");
	c->xdp_pin_dir = strdup("/sys/fs/bpf/bloomd");
	c->sensor_name = config_host_name();
	if (c->events == NULL || c->sensor_name == NULL || c->socket == NULL || c->store_dir == NULL ||
	    c->xdp_pin_dir == NULL || lists_default(c) < 0 ||
	    config_cluster_defaults(c) < 0) {
		config_free(c);
		return NULL;
	}
	return c;
}

void config_free(struct config *c)
{
	if (c == NULL)
		return;
	free(c->path);
	free(c->interface);
	for (size_t i = 0; i < c->files.n; i++)
		free(c->files.path[i]);
	free(c->files.path);
	free(c->bpf);
	config_lists_free(c);
	config_cluster_free(c);
	free(c->metrics_listen);
	free(c->threshold_file);
	free(c->sensor_name);
	free(c->events);
	free(c->pcap);
	free(c->socket);
	free(c->xdp_pin_dir);
	free(c->group);
	free(c->store_dir);
	free(c->user);
	free(c);
}

const char *config_fsync_name(enum config_fsync f)
{
	return f == CONFIG_FSYNC_ALWAYS ? "always" : f == CONFIG_FSYNC_EVERYSEC ? "everysec" : "no";
}

/*
 * inih's line reader: whole lines from the file read at once, counted. inih
 * reads into a buffer of num bytes and would take the rest of a longer line
 * as a line of its own (a long comment's tail becoming a setting): such a
 * line, or one holding a NUL, is reported and given to inih as empty, and a
 * comment line, whatever its length, is given as empty.
 * Section headers are checked here, where the line is known.
 */
static char *reader(char *str, int num, void *stream)
{
	struct loader *ld = stream;
	char *p = str, *close;

	if (ld->at >= ld->len)
		return NULL;
	const char *start = ld->text + ld->at, *nl = memchr(start, '\n', ld->len - ld->at);
	size_t len = nl ? (size_t)(nl - start) + 1 : ld->len - ld->at;
	ld->at += len;
	ld->line++;
	size_t lead = 0;
	while (lead < len && (start[lead] == ' ' || start[lead] == '\t'))
		lead++;
	if (lead < len && (start[lead] == ';' || start[lead] == '#')) {
		len = 0; /* a comment, however long */
	} else if (memchr(start, '\0', len)) {
		config_problem(ld, "a NUL byte in the line: not read");
		len = 0;
	} else if (len + 1 > (size_t)num) {
		config_problem(ld, "line longer than %d bytes: not read (the limit)", num - 2);
		len = 0;
	}
	memcpy(str, start, len);
	str[len] = '\0';
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '[' && (close = strchr(p, ']')) != NULL && !config_section_known(p + 1, (size_t)(close - p - 1)))
		config_problem(ld, "unknown section [%.*s]", (int)(close - p - 1), p + 1);
	return str;
}

/* The whole file, if it is a regular one of sensible size (a directory or /dev/zero is not). */
static int read_whole(struct loader *ld, const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0) {
		config_problem(ld, "cannot read: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX_BYTES) {
		if (S_ISREG(st.st_mode))
			config_problem(ld, "larger than %d bytes: not a configuration", CONFIG_MAX_BYTES);
		else
			config_problem(ld, "not a regular file");
		close(fd);
		return -1;
	}
	ld->text = malloc((size_t)st.st_size + 1);
	while (ld->text && (n = read(fd, ld->text + ld->len, (size_t)st.st_size - ld->len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			config_problem(ld, "cannot read: %s", strerror(errno));
			close(fd);
			return -1;
		}
		ld->len += (size_t)n;
		if (ld->len == (size_t)st.st_size)
			break;
	}
	close(fd);
	if (ld->text == NULL) {
		config_problem(ld, "out of memory");
		return -1;
	}
	ld->text[ld->len] = '\0';
	return 0;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
	struct loader *ld = user;
	bool list = config_list_section(section, strlen(section));
	void *base = ld->c;

	if (section[0] == '\0')
		return config_problem(ld, "'%s' is outside any [section]", key), 1;
	if (!config_section_known(section, strlen(section)))
		return 1; /* reported with its header */
	if (list && (base = config_list_named(ld, section + 5)) == NULL)
		return 1;
	const struct config_key *k = config_key_find(list ? "list" : section, key);
	const char *near = k ? NULL : config_key_near(list ? "list" : section, key);
	if (k == NULL && near)
		config_problem(ld, "unknown key '%s' in [%s]: did you mean '%s'?", key, section, near);
	else if (k == NULL)
		config_problem(ld, "unknown key '%s' in [%s]", key, section);
	else if (!config_key_repeated(ld, section, key, k->many))
		config_key_set(ld, k, base, value);
	return 1; /* problems are counted, not returned: go on and find them all */
}

/* Two keys that exclude each other: both given is a problem, said at the later one. */
static void not_both(struct loader *ld, const char *section, const char *a, const char *b)
{
	unsigned la = config_key_line(ld, section, a), lb = config_key_line(ld, section, b);

	ld->line = la > lb ? la : lb;
	if (la && lb)
		config_problem(ld, "give [%s] %s or %s, not both (lines %u and %u)", section, a, b, la, lb);
}

/* Rules about the whole, checked once everything is read. */
static void validate(struct loader *ld)
{
	struct config *c = ld->c;

	not_both(ld, "filter", "memory", "bits_per_entry");
	not_both(ld, "capture", "interface", "file");
	c->inline_mode = c->mode == CAPTURE_INLINE;
	c->xdp_mode = c->mode == CAPTURE_XDP;
	ld->line = config_key_line(ld, "capture", "mode");
	if (c->xdp_mode && c->interface == NULL)
		config_problem(ld, "[capture] mode = xdp needs [capture] interface: the one its program is attached to");
	ld->line = config_key_line(ld, "capture", "interface");
	if (c->inline_mode && ld->line)
		config_problem(ld, "[capture] mode = inline takes its packets from netfilter queues (queue), not an interface");
	ld->line = config_key_line(ld, "capture", "workers");
	if (c->inline_mode && c->workers > c->queue.last - c->queue.first + 1)
		config_problem(ld, "[capture] workers = %u, but queue gives %u queue(s): each worker needs one at least",
			       c->workers, c->queue.last - c->queue.first + 1);
	ld->line = 0;
	config_action_validate(ld); /* before the lists: with sets, a list drops unless it says otherwise */
	config_lists_validate(ld);
	config_cluster_validate(ld);
	if (c->events_redis) { /* the file output is the fallback's: events Redis cannot take go there */
		free(c->events);
		c->events = c->events_fallback ? strdup(c->events_fallback) : NULL;
	}
	if (c->events && c->events[0] == '\0') {
		free(c->events);
		c->events = NULL;
	}
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return NULL;
	return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

struct config *config_load(const char *path, config_error_cb on_error, void *ctx)
{
	struct loader ld = { .on_error = on_error, .ctx = ctx };
	char *dir = NULL;
	int rc;

	ld.c = config_defaults();
	if (ld.c == NULL || (ld.c->path = strdup(path)) == NULL) {
		on_error(ctx, "out of memory");
		config_free(ld.c);
		return NULL;
	}
	if (read_whole(&ld, path) < 0) {
		free(ld.text);
		config_free(ld.c);
		return NULL;
	}
	dir = dir_of(path);
	ld.dir = dir;
	rc = ini_parse_stream(reader, &ld, handler, &ld);
	free(ld.text);
	if (rc > 0) {
		/* The handler returns 1 always, so a positive rc is inih's own syntax error. */
		ld.line = (unsigned)rc;
		config_problem(&ld, "syntax error: expected [section], key = value, or a comment");
	} else if (rc < 0) {
		config_problem(&ld, "out of memory reading the file");
	}
	validate(&ld);
	config_keys_seen_free(&ld);
	free(dir);
	if (ld.problems) {
		config_free(ld.c);
		return NULL;
	}
	return ld.c;
}
