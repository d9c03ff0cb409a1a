/* config.c - the INI configuration: defaults, parsing with inih, validation with file:line. */
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
	c->socket = strdup("/run/bloomd/control.sock");
	c->store_dir = strdup("/var/lib/bloomd");
	if (c->events == NULL || c->socket == NULL || c->store_dir == NULL || lists_default(c) < 0 ||
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
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
	free(c->bpf);
	config_lists_free(c);
	config_cluster_free(c);
	free(c->metrics_listen);
	free(c->threshold_file);
	free(c->events);
	free(c->pcap);
	free(c->socket);
	free(c->group);
	free(c->store_dir);
	free(c->user);
	free(c);
}

const char *config_fsync_name(enum config_fsync f)
{
	return f == CONFIG_FSYNC_ALWAYS ? "always" : f == CONFIG_FSYNC_EVERYSEC ? "everysec" : "no";
}

static bool known_section(const char *name, size_t len)
{
	static const char *const sections[] = { "capture", "filter", "entries", "signatures", "output",
						       "control", "store", "service", "log", "metrics",
						       "cluster", "action" };

	if (config_list_section(name, len))
		return true;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (strlen(sections[i]) == len && strncmp(sections[i], name, len) == 0)
			return true;
	return false;
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
	if (*p == '[' && (close = strchr(p, ']')) != NULL && !known_section(p + 1, (size_t)(close - p - 1)))
		config_problem(ld, "unknown section [%.*s]", (int)(close - p - 1), p + 1);
	return str;
}

/* A key given twice is a mistake either way: which line was meant? (Lists may repeat.) */
static bool repeated(struct loader *ld, const char *section, const char *key)
{
	char name[64];

	if ((strcmp(section, "entries") == 0 || strcmp(section, "capture") == 0) && strcmp(key, "file") == 0)
		return false;
	snprintf(name, sizeof(name), "%s.%s", section, key);
	for (size_t i = 0; i < ld->nseen; i++)
		if (strcmp(ld->seen[i].name, name) == 0) {
			config_problem(ld, "[%s] %s is given again (first at line %u)", section, key, ld->seen[i].line);
			return true;
		}
	if (ld->nseen < MAX_KEYS_SEEN) {
		snprintf(ld->seen[ld->nseen].name, sizeof(ld->seen[0].name), "%s", name);
		ld->seen[ld->nseen++].line = ld->line;
	}
	return false;
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

static int capture_key(struct loader *ld, const char *key, const char *value)
{
	struct config *c = ld->c;

	if (strcmp(key, "interface") == 0) {
		ld->interface_line = ld->line;
		return config_set_string(ld, &c->interface, value, false);
	}
	if (strcmp(key, "file") == 0) {
		ld->file_line = ld->line;
		return config_push_path(ld, &c->files, &c->nfiles, value);
	}
	if (strcmp(key, "bpf") == 0)
		return config_set_string(ld, &c->bpf, value, false);
	if (strcmp(key, "snaplen") == 0)
		return config_set_uint(ld, key, value, 64, 262144, &c->snaplen);
	if (strcmp(key, "promisc") == 0)
		return config_set_bool(ld, key, value, &c->promisc);
	if (strcmp(key, "buffer_size") == 0)
		return config_set_size(ld, key, value, 0, INT32_MAX, &c->buffer_size); /* libpcap takes an int */
	if (strcmp(key, "mode") == 0) {
		if (strcmp(value, "passive") == 0 || strcmp(value, "inline") == 0)
			return c->inline_mode = value[0] == 'i', 1;
		config_problem(ld, "mode: expected passive or inline, got '%s'", value);
		return 0;
	}
	if (strcmp(key, "queue") == 0) {
		if (inline_parse_queues(value, &c->queue_first, &c->queue_last) == 0)
			return 1;
		config_problem(ld, "queue: expected a queue number or a range N-M (at most 64 queues), got '%s'", value);
		return 0;
	}
	if (strcmp(key, "fail_open") == 0)
		return config_set_bool(ld, key, value, &c->fail_open);
	if (strcmp(key, "queue_maxlen") == 0)
		return config_set_uint(ld, key, value, 0, 1u << 24, &c->queue_maxlen);
	if (strcmp(key, "reject_mark") == 0)
		return config_set_mark(ld, key, value, &c->reject_mark);
	if (strcmp(key, "workers") == 0) {
		ld->workers_line = ld->line;
		return config_set_uint(ld, key, value, 1, CONFIG_MAX_WORKERS, &c->workers);
	}
	return -1;
}

static int filter_key(struct loader *ld, const char *key, const char *value)
{
	struct config *c = ld->c;
	char *end;

	if (strcmp(key, "memory") == 0) {
		ld->memory_line = ld->line;
		/* at least a block for each filter; at most what a filter may have */
		return config_set_size(ld, key, value, 1024, FILTER_MAX_BITS / 8, &c->memory);
	}
	if (strcmp(key, "bits_per_entry") == 0) {
		ld->bpe_line = ld->line;
		return config_set_bits(ld, key, value, &c->bits_per_entry);
	}
	if (strcmp(key, "layout") == 0) {
		if (filter_layout_parse(value, &c->layout) < 0) {
			config_problem(ld, "layout: expected classic or blocked, got '%s'", value);
			return 0;
		}
		return 1;
	}
	if (strcmp(key, "choices") == 0)
		return config_set_uint(ld, key, value, 1, FILTER_MAX_CHOICES, &c->choices);
	if (strcmp(key, "hashes") == 0) {
		if (strcmp(value, "auto") == 0)
			return c->hashes = 0, 1;
		return config_set_uint(ld, key, value, 1, FILTER_MAX_HASHES, &c->hashes);
	}
	if (strcmp(key, "rounds") == 0) {
		if (strcmp(value, "auto") == 0)
			return c->rounds = 0, 1;
		return config_set_uint(ld, key, value, 1, 1000, &c->rounds);
	}
	if (strcmp(key, "fpr_target") == 0) {
		c->fpr_target = strtod(value, &end);
		if (end == value || *end != '\0' || !(c->fpr_target >= 0 && c->fpr_target < 1)) {
			config_problem(ld, "fpr_target: expected a rate from 0 (none) to below 1, got '%s'", value);
			return 0;
		}
		return 1;
	}
	if (strcmp(key, "auto_rebuild") == 0)
		return config_set_bool(ld, key, value, &c->auto_rebuild);
	if (strcmp(key, "hash") == 0) {
		if (hash_algo_parse(value, &c->hash) < 0) {
			config_problem(ld, "hash: expected xxh3 or siphash13, got '%s'", value);
			return 0;
		}
		return 1;
	}
	return -1;
}

/* An empty value turns an optional path off. */
static int set_optional_path(struct loader *ld, char **slot, bool *set, const char *value)
{
	*set = true;
	if (value[0] == '\0') {
		free(*slot);
		*slot = NULL;
		return 1;
	}
	return config_set_string(ld, slot, value, true);
}

static int control_key(struct loader *ld, const char *key, const char *value)
{
	struct config *c = ld->c;

	if (strcmp(key, "socket") == 0)
		return set_optional_path(ld, &c->socket, &c->socket_set, value);
	if (strcmp(key, "group") == 0)
		return config_set_string(ld, &c->group, value, false);
	if (strcmp(key, "max_clients") == 0)
		return config_set_uint(ld, key, value, 1, 4096, &c->max_clients);
	if (strcmp(key, "idle_timeout") == 0)
		return config_set_uint(ld, key, value, 1, 86400, &c->idle_timeout);
	return -1;
}

static int store_key(struct loader *ld, const char *key, const char *value)
{
	struct config *c = ld->c;

	if (strcmp(key, "dir") == 0)
		return set_optional_path(ld, &c->store_dir, &c->store_set, value);
	if (strcmp(key, "fsync") == 0) {
		for (int f = CONFIG_FSYNC_NO; f <= CONFIG_FSYNC_ALWAYS; f++)
			if (strcmp(value, config_fsync_name((enum config_fsync)f)) == 0)
				return c->fsync = (enum config_fsync)f, 1;
		config_problem(ld, "fsync: expected always, everysec or no, got '%s'", value);
		return 0;
	}
	if (strcmp(key, "journal_max") == 0)
		return config_set_size(ld, key, value, 4096, 1ULL << 40, &c->journal_max);
	return -1;
}

static int log_key(struct loader *ld, const char *key, const char *value)
{
	struct config *c = ld->c;

	if (strcmp(key, "level") == 0) {
		if (log_level_parse(value, &c->log_level) < 0) {
			config_problem(ld, "level: expected error, warning, info or debug, got '%s'", value);
			return 0;
		}
		return 1;
	}
	if (strcmp(key, "target") == 0) {
		if (strcmp(value, "stderr") == 0 || strcmp(value, "syslog") == 0)
			return c->log_target = value[1] == 'y' ? LOG_TARGET_SYSLOG : LOG_TARGET_STDERR, 1;
		config_problem(ld, "target: expected stderr or syslog, got '%s'", value);
		return 0;
	}
	return -1;
}

static int set_alerts(struct loader *ld, const char *value)
{
	if (strcmp(value, "every") == 0 || strcmp(value, "once_per_flow") == 0) {
		ld->c->alert_once_per_flow = value[0] == 'o';
		return 1;
	}
	config_problem(ld, "alerts: expected every or once_per_flow, got '%s'", value);
	return 0;
}

/* ADDRESS:PORT, [IPV6]:PORT; the address is checked when the listener opens. */
static int metrics_listen(struct loader *ld, const char *value)
{
	const char *colon = strrchr(value, ':');
	unsigned port;

	if (colon == NULL || colon == value) {
		config_problem(ld, "listen: expected ADDRESS:PORT (127.0.0.1:9153, [::1]:9153), got '%s'", value);
		return 0;
	}
	if (config_set_uint(ld, "listen's port", colon + 1, 1, 65535, &port) == 0)
		return 0;
	return config_set_string(ld, &ld->c->metrics_listen, value, false);
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
	struct loader *ld = user;
	struct config *c = ld->c;
	int rc = -1;

	if (!known_section(section, strlen(section)) && section[0] != '\0')
		return 1; /* reported with its header */
	if (repeated(ld, section, key))
		return 1;
	if (strcmp(section, "capture") == 0)
		rc = capture_key(ld, key, value);
	else if (strcmp(section, "filter") == 0)
		rc = filter_key(ld, key, value);
	else if (strcmp(section, "entries") == 0 && strcmp(key, "file") == 0)
		rc = config_entries_file(ld, value);
	else if (config_list_section(section, strlen(section)))
		rc = config_list_key(ld, section, key, value);
	else if (strcmp(section, "metrics") == 0 && strcmp(key, "listen") == 0)
		rc = value[0] ? metrics_listen(ld, value) : 1;
	else if (strcmp(section, "metrics") == 0 && strcmp(key, "max_connections") == 0)
		rc = config_set_uint(ld, key, value, 1, 1024, &c->metrics_max_connections);
	else if (strcmp(section, "metrics") == 0 && strcmp(key, "timeout") == 0)
		rc = config_set_uint(ld, key, value, 1, 300, &c->metrics_timeout);
	else if (strcmp(section, "signatures") == 0 && strcmp(key, "window") == 0)
		rc = config_set_uint(ld, key, value, 1, 64, &c->window);
	else if (strcmp(section, "signatures") == 0 && strcmp(key, "bits_per_window") == 0)
		rc = config_set_bits(ld, key, value, &c->bits_per_window);
	else if (strcmp(section, "output") == 0 && strcmp(key, "events") == 0)
		rc = (c->events_redis = strcmp(value, "redis") == 0) ? 1 : config_set_string(ld, &c->events, value, true);
	else if (strcmp(section, "output") == 0 && strcmp(key, "events_fallback") == 0)
		rc = value[0] ? config_set_string(ld, &c->events_fallback, value, true) : 1;
	else if (strcmp(section, "cluster") == 0)
		rc = config_cluster_key(ld, key, value);
	else if (strcmp(section, "action") == 0)
		rc = config_action_key(ld, key, value);
	else if (strcmp(section, "output") == 0 && strcmp(key, "pcap") == 0)
		rc = config_set_string(ld, &c->pcap, value, true);
	else if (strcmp(section, "output") == 0 && strcmp(key, "alerts") == 0)
		rc = set_alerts(ld, value);
	else if (strcmp(section, "output") == 0 && strcmp(key, "threshold_file") == 0)
		rc = value[0] ? config_set_string(ld, &c->threshold_file, value, true) : 1;
	else if (strcmp(section, "output") == 0 && strcmp(key, "flow_timeout") == 0)
		rc = config_set_uint(ld, key, value, 1, 86400, &c->flow_timeout);
	else if (strcmp(section, "control") == 0)
		rc = control_key(ld, key, value);
	else if (strcmp(section, "store") == 0)
		rc = store_key(ld, key, value);
	else if (strcmp(section, "service") == 0 && strcmp(key, "user") == 0)
		rc = value[0] ? config_set_string(ld, &c->user, value, false) : 1;
	else if (strcmp(section, "log") == 0)
		rc = log_key(ld, key, value);
	else if (section[0] == '\0')
		return config_problem(ld, "'%s' is outside any [section]", key), 1;
	if (rc < 0)
		config_problem(ld, "unknown key '%s' in [%s]", key, section);
	return 1; /* problems are counted, not returned: go on and find them all */
}

/* Rules about the whole, checked once everything is read. */
static void validate(struct loader *ld)
{
	struct config *c = ld->c;

	ld->line = ld->bpe_line > ld->memory_line ? ld->bpe_line : ld->memory_line;
	if (ld->memory_line && ld->bpe_line)
		config_problem(ld, "give [filter] memory or bits_per_entry, not both (lines %u and %u)",
			ld->memory_line, ld->bpe_line);
	ld->line = ld->file_line > ld->interface_line ? ld->file_line : ld->interface_line;
	if (ld->interface_line && ld->file_line)
		config_problem(ld, "give [capture] interface or file, not both (lines %u and %u)",
			ld->interface_line, ld->file_line);
	if (c->inline_mode && ld->interface_line)
		config_problem(ld, "[capture] mode = inline takes its packets from netfilter queues (queue), not an interface");
	ld->line = ld->workers_line;
	if (c->inline_mode && c->workers > c->queue_last - c->queue_first + 1)
		config_problem(ld, "[capture] workers = %u, but queue gives %u queue(s): each worker needs one at least",
			       c->workers, c->queue_last - c->queue_first + 1);
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
	free(dir);
	if (ld.problems) {
		config_free(ld.c);
		return NULL;
	}
	return ld.c;
}
