/* config_cluster.c - [cluster] (entries shared through a Redis stream, events to Redis) and [action] (nftables sets). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_internal.h"

int config_cluster_defaults(struct config *c)
{
	char host[256] = "bloomd";

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	c->action.timeout = 3600;
	c->action.rate = 100;
	c->action.block = 1;
	c->action.priority = -10;
	c->action.table = strdup("bloomd");
	c->cluster.maxlen = 1000000;
	c->cluster.events_pending = 10000;
	c->cluster.max_entry_bytes = 2 << 20;
	c->cluster.max_prefix4 = 8;
	c->cluster.max_prefix6 = 32;
	c->cluster.stream = strdup("bloomd:entries");
	c->cluster.events_key = strdup("bloomd:events");
	c->cluster.node = strdup(host);
	return c->cluster.stream && c->cluster.events_key && c->cluster.node && c->action.table ? 0 : -1;
}

static bool redis_address(const char *value)
{
	if (strncmp(value, "unix:", 5) == 0)
		return value[5] == '/';
	if (strncmp(value, "tcp://", 6) != 0)
		return false;
	const char *colon = strrchr(value + 6, ':');
	char *end;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	return colon && colon > value + 6 && *end == '\0' && port > 0 && port < 65536;
}

int config_cluster_key(struct loader *ld, const char *key, const char *value)
{
	struct cluster_config *cc = &ld->c->cluster;

	if (strcmp(key, "redis") == 0) {
		if (value[0] && !redis_address(value)) {
			config_problem(ld, "redis: expected unix:/PATH or tcp://HOST:PORT, got '%s'", value);
			return 0;
		}
		return value[0] ? config_set_string(ld, &cc->redis, value, false) : 1;
	}
	if (strcmp(key, "password") == 0)
		return config_set_string(ld, &cc->password, value, false);
	if (strcmp(key, "stream") == 0 || strcmp(key, "node") == 0 || strcmp(key, "events_key") == 0) {
		if (value[0] == '\0' || strchr(value, ' ')) {
			config_problem(ld, "%s: expected a name without blanks, got '%s'", key, value);
			return 0;
		}
		return config_set_string(ld, key[0] == 's' ? &cc->stream : key[0] == 'n' ? &cc->node : &cc->events_key,
					 value, false);
	}
	if (strcmp(key, "maxlen") == 0)
		return config_set_uint(ld, key, value, 1000, 1000000000, &cc->maxlen);
	if (strcmp(key, "snapshot_every") == 0)
		return config_set_uint(ld, key, value, 0, 86400 * 7, &cc->snapshot_every);
	if (strcmp(key, "events_pending") == 0)
		return config_set_uint(ld, key, value, 1, 10000000, &cc->events_pending);
	if (strcmp(key, "key_file") == 0)
		return value[0] ? config_set_string(ld, &cc->key_file, value, true) : 1;
	if (strcmp(key, "max_entry_bytes") == 0)
		return config_set_size(ld, key, value, 4096, 512u << 20, &cc->max_entry_bytes);
	if (strcmp(key, "max_prefix4") == 0)
		return config_set_uint(ld, key, value, 0, 32, &cc->max_prefix4);
	if (strcmp(key, "max_prefix6") == 0)
		return config_set_uint(ld, key, value, 0, 128, &cc->max_prefix6);
	if (strcmp(key, "events_type") == 0) {
		if (strcmp(value, "list") == 0 || strcmp(value, "stream") == 0)
			return cc->events_stream = value[0] == 's', 1;
		config_problem(ld, "events_type: expected list or stream, got '%s'", value);
		return 0;
	}
	return -1;
}

void config_cluster_validate(struct loader *ld)
{
	if (ld->c->events_redis && ld->c->cluster.redis == NULL)
		config_problem(ld, "[output] events = redis needs [cluster] redis");
}

void config_cluster_free(struct config *c)
{
	free(c->cluster.redis);
	free(c->cluster.password);
	free(c->cluster.key_file);
	free(c->cluster.stream);
	free(c->cluster.node);
	free(c->cluster.events_key);
	free(c->events_fallback);
	free(c->action.set4);
	free(c->action.set6);
	free(c->action.table);
}

/* A name nft takes: letters, digits, _ - . and a letter first. */
static bool nft_char(char c)
{
	return isalnum((unsigned char)c) || (c != '\0' && strchr("_-.", c));
}

static bool nft_name(const char *value)
{
	if (!isalpha((unsigned char)*value) || strlen(value) > 64)
		return false;
	for (const char *p = value; *p; p++)
		if (!nft_char(*p))
			return false;
	return true;
}

void config_action_validate(struct loader *ld)
{
	struct action_config *a = &ld->c->action;

	if (!a->manage)
		return;
	ld->line = ld->manage_line;
	if (a->set4 || a->set6) {
		config_problem(ld, "[action] manage = yes: bloomd's table has its own sets (blocked4, blocked6): leave set and set6 out");
		return;
	}
	if (asprintf(&a->set4, "inet %s blocked4", a->table) < 0 || asprintf(&a->set6, "inet %s blocked6", a->table) < 0)
		config_problem(ld, "out of memory");
	ld->line = 0;
}

/* "inet bloomd blocked": a family, a table and a set, in names nft takes. */
static bool set_name(const char *value)
{
	int words = 0;

	for (const char *p = value; *p; p++) {
		if (*p == ' ')
			continue;
		if (p == value || p[-1] == ' ')
			words++;
		if (!nft_char(*p))
			return false;
	}
	return words == 3;
}

int config_action_key(struct loader *ld, const char *key, const char *value)
{
	struct action_config *a = &ld->c->action;

	if (strcmp(key, "set") == 0 || strcmp(key, "set6") == 0) {
		if (value[0] && !set_name(value)) {
			config_problem(ld, "%s: expected FAMILY TABLE SET (inet bloomd blocked), got '%s'", key, value);
			return 0;
		}
		return value[0] ? config_set_string(ld, key[3] ? &a->set6 : &a->set4, value, false) : 1;
	}
	if (strcmp(key, "manage") == 0) {
		ld->manage_line = ld->line;
		return config_set_bool(ld, key, value, &a->manage);
	}
	if (strcmp(key, "table") == 0) {
		if (!nft_name(value)) {
			config_problem(ld, "table: expected a table name nft takes (letters, digits, _ - .), got '%s'", value);
			return 0;
		}
		return config_set_string(ld, &a->table, value, false);
	}
	if (strcmp(key, "priority") == 0) {
		char *end;
		long v = strtol(value, &end, 10);
		if (end == value || *end || v < -1000 || v > 1000) {
			config_problem(ld, "priority: expected a number from -1000 to 1000, got '%s'", value);
			return 0;
		}
		a->priority = (int)v;
		return 1;
	}
	if (strcmp(key, "timeout") == 0)
		return config_set_uint(ld, key, value, 1, 86400 * 365, &a->timeout);
	if (strcmp(key, "rate") == 0)
		return config_set_uint(ld, key, value, 1, 100000, &a->rate);
	if (strcmp(key, "block") == 0) {
		a->block = strcmp(value, "src") == 0 ? 1 : strcmp(value, "dst") == 0 ? 2 : strcmp(value, "both") == 0 ? 3 : 0;
		if (a->block)
			return 1;
		config_problem(ld, "block: expected src, dst or both, got '%s'", value);
		return 0;
	}
	return -1;
}
