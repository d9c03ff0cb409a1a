/* config_keys.c - the key table: every key of the file, how it is read, where it goes, whether a reload applies it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"
#include "inline.h"

/* A field of struct config, or of struct list_config for [list NAME]. */
#define FIELD(f) .offset = offsetof(struct config, f), .size = sizeof(((struct config *)0)->f)
#define LIST_FIELD(f) .offset = offsetof(struct list_config, f), .size = sizeof(((struct list_config *)0)->f)
#define NAMES(...) .names = (const char *const[]){ __VA_ARGS__, NULL }
#define QUERY_VALUE "words of letters, digits and . _ - / : joined by commas"
#define CROWDSEC_SCOPES "ip, range or both, joined by a comma (the scopes bloomd enforces)"
#define CROWDSEC_ORIGINS "CrowdSec's origins joined by commas: crowdsec, cscli, CAPI, lists, console, cscli-import, appsec"
#define RESTART .restart = true

/* An offset of 0 is "no given flag": there both structs keep a pointer, never a flag. */
_Static_assert(offsetof(struct config, path) == 0 && offsetof(struct list_config, name) == 0,
	       "offset 0 holds a pointer in both structs");
/* KEY_CHOICE writes an int into an enum field, and KEY_UINT an unsigned into a uint32_t. */
_Static_assert(sizeof(enum config_fsync) == sizeof(int) && sizeof(enum log_target) == sizeof(int) &&
		       sizeof(enum log_format) == sizeof(int),
	       "enums are int-sized");
_Static_assert(sizeof(uint32_t) == sizeof(unsigned), "sid is read as an unsigned");

static int read_queues(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	struct config_queues *q = (struct config_queues *)((char *)base + k->offset);

	if (inline_parse_queues(value, &q->first, &q->last) == 0)
		return 1;
	config_problem(ld, "queue: expected a queue number or a range N-M (at most 64 queues), got '%s'", value);
	return 0;
}

static int read_layout(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	if (filter_layout_parse(value, (enum filter_layout *)((char *)base + k->offset)) == 0)
		return 1;
	config_problem(ld, "layout: expected classic or blocked, got '%s'", value);
	return 0;
}

static int read_hash(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	if (hash_algo_parse(value, (enum hash_algo *)((char *)base + k->offset)) == 0)
		return 1;
	config_problem(ld, "hash: expected xxh3 or siphash13, got '%s'", value);
	return 0;
}

static int read_level(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	if (log_level_parse(value, (enum log_level *)((char *)base + k->offset)) == 0)
		return 1;
	config_problem(ld, "level: expected error, warning, info or debug, got '%s'", value);
	return 0;
}

/* events: a path, "-", or redis. What takes a restart is going to Redis or not (the field). */
static int read_events(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	struct config *c = base;

	(void)k;
	if ((c->events_redis = strcmp(value, "redis") == 0))
		return 1;
	return config_set_string(ld, &c->events, value, true);
}

/* An octal file mode such as 0640: who may read the events (a log shipper in bloomd's group, say). */
static int read_filemode(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	char *end;
	unsigned long mode = strtoul(value, &end, 8);

	if (value[0] < '0' || value[0] > '7' || *end != '\0' || mode > 0777) {
		config_problem(ld, "filemode: expected an octal mode from 0 to 0777 (0640), got '%s'", value);
		return 0;
	}
	*(unsigned *)((char *)base + k->offset) = (unsigned)mode;
	return 1;
}

/* ADDRESS:PORT, [IPV6]:PORT; the address is checked when the listener opens. */
static bool listen_address(const char *value)
{
	const char *colon = strrchr(value, ':');
	char *end;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;

	return colon && colon > value && colon[1] >= '0' && colon[1] <= '9' && *end == '\0' && port >= 1 &&
	       port <= 65535;
}

static const struct config_key KEYS[] = {
	{ "capture", "interface", KEY_STRING, FIELD(interface), RESTART },
	{ "capture", "file", KEY_PATHS, FIELD(files), .many = true, RESTART },
	{ "capture", "bpf", KEY_STRING, FIELD(bpf), RESTART },
	{ "capture", "snaplen", KEY_UINT, FIELD(snaplen), .min = 64, .max = 262144, RESTART },
	{ "capture", "promisc", KEY_BOOL, FIELD(promisc), RESTART },
	/* libpcap takes an int */
	{ "capture", "buffer_size", KEY_SIZE, FIELD(buffer_size), .min = 0, .max = INT32_MAX, RESTART },
	{ "capture", "mode", KEY_CHOICE, FIELD(mode), NAMES("passive", "inline", "xdp"), RESTART },
	{ "capture", "xdp_mode", KEY_CHOICE, FIELD(xdp_attach), NAMES("auto", "native", "generic"), RESTART },
	{ "capture", "xdp_events_rate", KEY_UINT, FIELD(xdp_events_rate), .min = 0, .max = 1000000, RESTART },
	{ "capture", "xdp_pin", KEY_BOOL, FIELD(xdp_pin), RESTART },
	{ "capture", "xdp_pin_dir", KEY_PATH, FIELD(xdp_pin_dir), RESTART },
	{ "capture", "queue", KEY_CUSTOM, FIELD(queue), .parse = read_queues, RESTART },
	{ "capture", "fail_open", KEY_BOOL, FIELD(fail_open), RESTART },
	{ "capture", "queue_maxlen", KEY_UINT, FIELD(queue_maxlen), .min = 0, .max = 1u << 24, RESTART },
	{ "capture", "reject_mark", KEY_MARK, FIELD(reject_mark), RESTART },
	{ "capture", "workers", KEY_UINT, FIELD(workers), .min = 1, .max = CONFIG_MAX_WORKERS, RESTART },
	{ "capture", "batch", KEY_UINT, FIELD(batch), .min = 1, .max = PACKET_BATCH_MAX, .word = "auto", RESTART },
	{ "capture", "tcp_connections", KEY_UINT, FIELD(tcp_connections), .min = 0, .max = 1u << 26, RESTART },

	/* memory: at least a block for each filter; at most what a filter may have */
	{ "filter", "memory", KEY_SIZE, FIELD(memory), .min = 1024, .max = FILTER_MAX_BITS / 8 },
	{ "filter", "bits_per_entry", KEY_NUMBER, FIELD(bits_per_entry), .min = 1, .max = 64 },
	{ "filter", "layout", KEY_CUSTOM, FIELD(layout), .parse = read_layout },
	{ "filter", "choices", KEY_UINT, FIELD(choices), .min = 1, .max = FILTER_MAX_CHOICES },
	{ "filter", "hashes", KEY_UINT, FIELD(hashes), .min = 1, .max = FILTER_MAX_HASHES, .word = "auto" },
	{ "filter", "rounds", KEY_UINT, FIELD(rounds), .min = 1, .max = 1000, .word = "auto" },
	{ "filter", "fpr_target", KEY_NUMBER, FIELD(fpr_target), .min = 0, .max = 0x1.fffffffffffffp-1,
	  .expect = "a rate from 0 (none) to below 1" },
	{ "filter", "auto_rebuild", KEY_BOOL, FIELD(auto_rebuild) },
	{ "filter", "hash", KEY_CUSTOM, FIELD(hash), .parse = read_hash, RESTART },

	{ "list", "file", KEY_CUSTOM, LIST_FIELD(file), .parse = config_list_file },
	{ "list", "format", KEY_CUSTOM, LIST_FIELD(format), .parse = config_list_format },
	{ "list", "set", KEY_CUSTOM, LIST_FIELD(format.set), .parse = config_list_set },
	{ "list", "category", KEY_STRING, LIST_FIELD(category) },
	{ "list", "severity", KEY_UINT, LIST_FIELD(severity), .min = 1, .max = 255 },
	{ "list", "sid", KEY_UINT, LIST_FIELD(sid), .min = 1, .max = 2147483647u },
	{ "list", "signature", KEY_STRING, LIST_FIELD(signature) },
	{ "list", "action", KEY_CUSTOM, LIST_FIELD(action), .parse = config_list_action },
	{ "list", "pass", KEY_CHOICE, LIST_FIELD(pass_packet), NAMES("address", "packet") },
	{ "list", "max_bad", KEY_NUMBER, LIST_FIELD(max_bad), .min = 0, .max = 1, .expect = "a fraction from 0 to 1" },
	{ "list", "min_entries", KEY_UINT, LIST_FIELD(min_entries), .min = 0, .max = 1000000000 },
	{ "list", "max_removed", KEY_NUMBER, LIST_FIELD(max_removed), .min = 0, .max = 1,
	  .expect = "a fraction from 0 to 1", .word = "off", .word_is = 1 },
	{ "list", "categories", KEY_CUSTOM, LIST_FIELD(categories), .parse = config_list_categories },
	{ "list", "url", KEY_CUSTOM, LIST_FIELD(url), .parse = config_list_url },
	{ "list", "refresh", KEY_SECONDS, LIST_FIELD(refresh), .min = 1, .max = 30 * 86400 },
	{ "list", "fetch_timeout", KEY_SECONDS, LIST_FIELD(fetch_timeout), .min = 1, .max = 3600 },
	{ "list", "max_size", KEY_SIZE, LIST_FIELD(max_size), .min = 1024, .max = 1ULL << 32 },
	{ "list", "ca_file", KEY_PATH, LIST_FIELD(ca_file), .empty_none = true },
	{ "list", "source", KEY_CHOICE, LIST_FIELD(source), NAMES("feed", "crowdsec") },
	{ "list", "api_key_file", KEY_PATH, LIST_FIELD(api_key_file), .empty_none = true },
	{ "list", "scopes", KEY_STRING, LIST_FIELD(scopes), .valid = config_crowdsec_scopes, .expect = CROWDSEC_SCOPES,
	  .empty_none = true },
	{ "list", "origins", KEY_STRING, LIST_FIELD(origins), .valid = config_crowdsec_origins,
	  .expect = CROWDSEC_ORIGINS, .empty_none = true },
	{ "list", "scenarios_containing", KEY_STRING, LIST_FIELD(scenarios_containing), .valid = config_query_value,
	  .expect = QUERY_VALUE, .empty_none = true },
	{ "list", "scenarios_not_containing", KEY_STRING, LIST_FIELD(scenarios_not_containing),
	  .valid = config_query_value, .expect = QUERY_VALUE, .empty_none = true },

	{ "entries", "file", KEY_CUSTOM, .parse = config_entries_file, .many = true },

	{ "signatures", "window", KEY_UINT, FIELD(window), .min = 1, .max = 64, RESTART },
	{ "signatures", "bits_per_window", KEY_NUMBER, FIELD(bits_per_window), .min = 1, .max = 64 },

	{ "output", "events", KEY_CUSTOM, FIELD(events_redis), .parse = read_events, RESTART },
	{ "output", "events_fallback", KEY_PATH, FIELD(events_fallback), .empty_none = true },
	{ "output", "pcap", KEY_PATH, FIELD(pcap) },
	{ "output", "alerts", KEY_CHOICE, FIELD(alert_once_per_flow), NAMES("every", "once_per_flow") },
	{ "output", "threshold_file", KEY_PATH, FIELD(threshold_file), .empty_none = true },
	{ "output", "eve", KEY_CHOICE, FIELD(eve_extended), NAMES("strict", "extended") },
	{ "output", "sensor_name", KEY_STRING, FIELD(sensor_name), .empty_none = true },
	{ "output", "filemode", KEY_CUSTOM, FIELD(filemode), .parse = read_filemode },
	{ "output", "flow_timeout", KEY_UINT, FIELD(flow_timeout), .min = 1, .max = 86400 },

	{ "action", "set", KEY_STRING, FIELD(action.set4), .valid = config_nft_set,
	  .expect = "FAMILY TABLE SET (inet bloomd blocked)", .empty_none = true, RESTART },
	{ "action", "set6", KEY_STRING, FIELD(action.set6), .valid = config_nft_set,
	  .expect = "FAMILY TABLE SET (inet bloomd blocked)", .empty_none = true, RESTART },
	{ "action", "manage", KEY_BOOL, FIELD(action.manage), RESTART },
	{ "action", "at_stop", KEY_CHOICE, FIELD(action.remove_at_stop), NAMES("keep", "remove"), RESTART },
	{ "action", "protect", KEY_STRING, FIELD(action.protect), .valid = config_net_list,
	  .expect = "addresses or nets, comma separated (192.0.2.0/24,2001:db8::1)", RESTART },
	{ "action", "protect_infrastructure", KEY_BOOL, FIELD(action.protect_infrastructure), RESTART },
	{ "action", "table", KEY_STRING, FIELD(action.table), .valid = config_nft_name,
	  .expect = "a table name nft takes (letters, digits, _ - .)", RESTART },
	{ "action", "priority", KEY_INT, FIELD(action.priority), .min = -1000, .max = 1000, RESTART },
	{ "action", "timeout", KEY_UINT, FIELD(action.timeout), .min = 1, .max = 86400 * 365, RESTART },
	{ "action", "rate", KEY_UINT, FIELD(action.rate), .min = 1, .max = 100000, RESTART },
	/* stored as 1 source, 2 destination, 3 both */
	{ "action", "block", KEY_CHOICE, FIELD(action.block), NAMES("src", "dst", "both"), .min = 1, RESTART },

	{ "cluster", "redis", KEY_STRING, FIELD(cluster.redis), .valid = config_redis_address,
	  .expect = "unix:/PATH or tcp://HOST:PORT", .empty_none = true, RESTART },
	{ "cluster", "sentinels", KEY_STRING, FIELD(cluster.sentinels), .valid = config_sentinel_list,
	  .expect = "HOST:PORT[,HOST:PORT...] (at most 8)", .empty_none = true, RESTART },
	{ "cluster", "sentinel_master", KEY_STRING, FIELD(cluster.sentinel_master), .valid = config_plain_name,
	  .expect = "a name without blanks", RESTART },
	{ "cluster", "wait_replicas", KEY_UINT, FIELD(cluster.wait_replicas), .min = 0, .max = 16, RESTART },
	{ "cluster", "password", KEY_STRING, FIELD(cluster.password), RESTART },
	{ "cluster", "user", KEY_STRING, FIELD(cluster.user), .valid = config_plain_name,
	  .expect = "a Redis ACL user's name, without blanks", RESTART },
	{ "cluster", "tls", KEY_BOOL, FIELD(cluster.tls), RESTART },
	{ "cluster", "tls_ca_file", KEY_PATH, FIELD(cluster.tls_ca_file), .empty_none = true, RESTART },
	{ "cluster", "tls_cert_file", KEY_PATH, FIELD(cluster.tls_cert_file), .empty_none = true, RESTART },
	{ "cluster", "tls_key_file", KEY_PATH, FIELD(cluster.tls_key_file), .empty_none = true, RESTART },
	{ "cluster", "tls_server_name", KEY_STRING, FIELD(cluster.tls_server_name), .valid = config_plain_name,
	  .expect = "a host name without blanks", .empty_none = true, RESTART },
	{ "cluster", "stream", KEY_STRING, FIELD(cluster.stream), .valid = config_plain_name,
	  .expect = "a name without blanks", RESTART },
	{ "cluster", "node", KEY_STRING, FIELD(cluster.node), .valid = config_plain_name,
	  .expect = "a name without blanks", RESTART },
	{ "cluster", "maxlen", KEY_UINT, FIELD(cluster.maxlen), .min = 1000, .max = 1000000000, RESTART },
	{ "cluster", "snapshot_every", KEY_UINT, FIELD(cluster.snapshot_every), .min = 0, .max = 86400 * 7, RESTART },
	{ "cluster", "events_key", KEY_STRING, FIELD(cluster.events_key), .valid = config_plain_name,
	  .expect = "a name without blanks", RESTART },
	{ "cluster", "events_type", KEY_CHOICE, FIELD(cluster.events_stream), NAMES("list", "stream"), RESTART },
	{ "cluster", "events_pending", KEY_UINT, FIELD(cluster.events_pending), .min = 1, .max = 10000000, RESTART },
	{ "cluster", "key_file", KEY_PATH, FIELD(cluster.key_file), .empty_none = true, RESTART },
	{ "cluster", "max_entry_bytes", KEY_SIZE, FIELD(cluster.max_entry_bytes), .min = 4096, .max = 512u << 20,
	  RESTART },
	{ "cluster", "max_prefix4", KEY_UINT, FIELD(cluster.max_prefix4), .min = 0, .max = 32, RESTART },
	{ "cluster", "max_prefix6", KEY_UINT, FIELD(cluster.max_prefix6), .min = 0, .max = 128, RESTART },
	{ "cluster", "timeout", KEY_UINT, FIELD(cluster.timeout), .min = 1, .max = 3600, RESTART },
	{ "cluster", "digest_every", KEY_UINT, FIELD(cluster.digest_every), .min = 0, .max = 3600, RESTART },

	{ "metrics", "listen", KEY_STRING, FIELD(metrics_listen), .valid = listen_address,
	  .expect = "ADDRESS:PORT (127.0.0.1:9153, [::1]:9153)", .empty_none = true, RESTART },
	{ "metrics", "max_connections", KEY_UINT, FIELD(metrics_max_connections), .min = 1, .max = 1024, RESTART },
	{ "metrics", "timeout", KEY_UINT, FIELD(metrics_timeout), .min = 1, .max = 300, RESTART },

	{ "control", "socket", KEY_PATH, FIELD(socket), .empty_none = true,
	  .given = offsetof(struct config, socket_set), RESTART },
	{ "control", "group", KEY_STRING, FIELD(group), RESTART },
	{ "control", "max_clients", KEY_UINT, FIELD(max_clients), .min = 1, .max = 4096, RESTART },
	{ "control", "idle_timeout", KEY_UINT, FIELD(idle_timeout), .min = 1, .max = 86400, RESTART },

	{ "store", "dir", KEY_PATH, FIELD(store_dir), .empty_none = true, .given = offsetof(struct config, store_set),
	  RESTART },
	/* in the order of enum config_fsync */
	{ "store", "fsync", KEY_CHOICE, FIELD(fsync), NAMES("no", "everysec", "always"),
	  .expect = "always, everysec or no" },
	{ "store", "journal_max", KEY_SIZE, FIELD(journal_max), .min = 4096, .max = 1ULL << 40 },

	{ "service", "user", KEY_STRING, FIELD(user), .empty_none = true, RESTART },

	{ "log", "level", KEY_CUSTOM, FIELD(log_level), .parse = read_level },
	{ "log", "target", KEY_CHOICE, FIELD(log_target), NAMES("stderr", "syslog") },
	{ "log", "format", KEY_CHOICE, FIELD(log_format), NAMES("text", "json") },
};

#define NKEYS (sizeof(KEYS) / sizeof(KEYS[0]))

/* Edits (insert, delete, change, swap of two neighbours) from a to b, up to 3 (more is 3). */
static unsigned edits(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned d[3][64];

	if (la >= 63 || lb >= 63 || (la > lb ? la - lb : lb - la) >= 3)
		return 3;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned *row = d[i % 3], *up = d[(i - 1) % 3], *up2 = d[(i + 1) % 3];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned best = up[j - 1] + (a[i - 1] != b[j - 1]);
			best = up[j] + 1 < best ? up[j] + 1 : best;
			best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && up2[j - 2] + 1 < best)
				best = up2[j - 2] + 1;
			row[j] = best;
		}
	}
	return d[la % 3][lb] < 3 ? d[la % 3][lb] : 3;
}

const char *config_key_near(const char *section, const char *name)
{
	const char *near = NULL;
	unsigned best = 3;

	for (size_t i = 0; i < NKEYS; i++) {
		unsigned e = strcmp(KEYS[i].section, section) == 0 ? edits(name, KEYS[i].name) : 3;
		if (e < best) {
			best = e;
			near = KEYS[i].name;
		}
	}
	return near;
}

const struct config_key *config_key_find(const char *section, const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(KEYS[i].section, section) == 0 && strcmp(KEYS[i].name, name) == 0)
			return &KEYS[i];
	return NULL;
}

bool config_section_known(const char *name, size_t len)
{
	if (config_list_section(name, len))
		return true;
	for (size_t i = 0; i < NKEYS; i++)
		if (strlen(KEYS[i].section) == len && strncmp(KEYS[i].section, name, len) == 0)
			return true;
	return false;
}

bool config_key_at(size_t i, struct config_key_about *out)
{
	if (i >= NKEYS)
		return false;
	*out = (struct config_key_about){ KEYS[i].section, KEYS[i].name, KEYS[i].restart };
	return true;
}

static int read_choice(struct loader *ld, const struct config_key *k, void *field, const char *value)
{
	char expect[256] = "";
	size_t n = 0;

	for (; k->names[n]; n++)
		if (strcmp(value, k->names[n]) == 0) {
			int v = (int)n + (int)k->min;
			if (k->size == sizeof(bool))
				*(bool *)field = v != 0;
			else
				memcpy(field, &v, sizeof(v));
			return 1;
		}
	for (size_t i = 0; i < n; i++)
		snprintf(expect + strlen(expect), sizeof(expect) - strlen(expect), "%s%s", k->names[i],
			 i + 2 < n ? ", " : i + 2 == n ? " or " : "");
	config_problem(ld, "%s: expected %s, got '%s'", k->name, k->expect ? k->expect : expect, value);
	return 0;
}

static int read_string(struct loader *ld, const struct config_key *k, char **field, const char *value)
{
	if (value[0] == '\0' && k->empty_none) {
		free(*field);
		*field = NULL;
		return 1;
	}
	if (k->valid && !k->valid(value)) {
		config_problem(ld, "%s: expected %s, got '%s'", k->name, k->expect, value);
		return 0;
	}
	return config_set_string(ld, field, value, k->type == KEY_PATH);
}

static int read_value(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	void *field = (char *)base + k->offset;
	struct config_paths *paths = field;

	if (k->word && strcmp(value, k->word) == 0) {
		if (k->type == KEY_UINT)
			*(unsigned *)field = (unsigned)k->word_is;
		else
			*(double *)field = k->word_is;
		return 1;
	}
	switch (k->type) {
	case KEY_UINT:
		return config_set_uint(ld, k->name, value, (unsigned)k->min, (unsigned)k->max, k->word, field);
	case KEY_INT:
		return config_set_int(ld, k->name, value, (int)k->min, (int)k->max, field);
	case KEY_NUMBER:
		return config_set_number(ld, k->name, value, k->min, k->max, k->expect, field);
	case KEY_SIZE:
		return config_set_size(ld, k->name, value, (uint64_t)k->min, (uint64_t)k->max, field);
	case KEY_SECONDS:
		return config_set_seconds(ld, k->name, value, (unsigned)k->min, (unsigned)k->max, field);
	case KEY_BOOL:
		return config_set_bool(ld, k->name, value, field);
	case KEY_MARK:
		return config_set_mark(ld, k->name, value, field);
	case KEY_CHOICE:
		return read_choice(ld, k, field, value);
	case KEY_STRING:
	case KEY_PATH:
		return read_string(ld, k, field, value);
	case KEY_PATHS:
		return config_push_path(ld, &paths->path, &paths->n, value);
	case KEY_CUSTOM:
		return k->parse(ld, k, base, value);
	}
	return 0;
}

int config_key_set(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	if (k->given)
		*(bool *)((char *)base + k->given) = true;
	return read_value(ld, k, base, value);
}

bool config_same_string(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static bool same_value(const struct config_key *k, const void *a, const void *b)
{
	const struct config_paths *pa = a, *pb = b;

	switch (k->type) {
	case KEY_STRING:
	case KEY_PATH:
		return config_same_string(*(char *const *)a, *(char *const *)b);
	case KEY_PATHS:
		if (pa->n != pb->n)
			return false;
		for (size_t i = 0; i < pa->n; i++)
			if (strcmp(pa->path[i], pb->path[i]) != 0)
				return false;
		return true;
	default:
		return memcmp(a, b, k->size) == 0;
	}
}

static void swap_bytes(void *a, void *b, size_t n)
{
	unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++) {
		unsigned char t = x[i];
		x[i] = y[i];
		y[i] = t;
	}
}

void config_keep_running(struct config *running, struct config *fresh,
			 void (*changed)(void *ctx, const char *what), void *ctx)
{
	char what[64];

	for (size_t i = 0; i < NKEYS; i++) {
		const struct config_key *k = &KEYS[i];
		if (!k->restart)
			continue;
		void *r = (char *)running + k->offset, *f = (char *)fresh + k->offset;
		if (!same_value(k, r, f)) {
			snprintf(what, sizeof(what), "[%s] %s", k->section, k->name);
			changed(ctx, what);
		}
		swap_bytes(r, f, k->size);
	}
}

/* The field's size is what the key's type reads into: a row naming the wrong field would write past it. */
static bool field_fits(const struct config_key *k)
{
	switch (k->type) {
	case KEY_UINT:
	case KEY_SECONDS:
		return k->size == sizeof(unsigned);
	case KEY_INT:
		return k->size == sizeof(int);
	case KEY_NUMBER:
		return k->size == sizeof(double);
	case KEY_SIZE:
		return k->size == sizeof(uint64_t);
	case KEY_BOOL:
		return k->size == sizeof(bool);
	case KEY_MARK:
		return k->size == sizeof(uint32_t);
	case KEY_CHOICE:
		return k->names && (k->size == sizeof(bool) || k->size == sizeof(int));
	case KEY_STRING:
	case KEY_PATH:
		return k->size == sizeof(char *) && (k->valid == NULL || k->expect);
	case KEY_PATHS:
		return k->size == sizeof(struct config_paths);
	case KEY_CUSTOM:
		return k->parse != NULL;
	}
	return false;
}

int config_keys_check(char *err, size_t errlen)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (!field_fits(&KEYS[i])) {
			snprintf(err, errlen, "[%s] %s: its field does not fit its type", KEYS[i].section, KEYS[i].name);
			return -1;
		}
		if (config_key_find(KEYS[i].section, KEYS[i].name) != &KEYS[i]) {
			snprintf(err, errlen, "[%s] %s is in the table twice", KEYS[i].section, KEYS[i].name);
			return -1;
		}
	}
	return 0;
}
