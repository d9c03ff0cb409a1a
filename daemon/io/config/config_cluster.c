/* config_cluster.c - [cluster] (entries shared through a Redis stream, events to Redis) and [action] (nftables sets). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_internal.h"
#include "entry.h"

char *config_host_name(void)
{
	char host[256] = "bloomd";

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	return strdup(host);
}

int config_cluster_defaults(struct config *c)
{
	c->action.timeout = 3600;
	c->action.rate = 100;
	c->action.protect_infrastructure = true;
	c->action.block = 1;
	c->action.priority = -10;
	c->action.table = strdup("bloomd");
	c->cluster.maxlen = 1000000;
	c->cluster.events_pending = 10000;
	c->cluster.max_entry_bytes = 2 << 20;
	c->cluster.max_prefix4 = 8;
	c->cluster.max_prefix6 = 32;
	c->cluster.timeout = 5;
	c->cluster.digest_every = 20;
	c->cluster.stream = strdup("bloomd:entries");
	c->cluster.events_key = strdup("bloomd:events");
	c->cluster.node = config_host_name();
	return c->cluster.stream && c->cluster.events_key && c->cluster.node && c->action.table ? 0 : -1;
}

bool config_redis_address(const char *value)
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

/* A Redis key or a node's name: not empty, no blanks. */
bool config_plain_name(const char *value)
{
	return value[0] != '\0' && strchr(value, ' ') == NULL;
}

/* "HOST:PORT[,HOST:PORT...]", at most CLUSTER_SENTINELS_MAX of them. */
bool config_sentinel_list(const char *value)
{
	unsigned n = 0;

	for (const char *p = value; *p; n++) {
		size_t len = strcspn(p, ",");
		char one[300];
		if (len == 0 || len >= sizeof(one) - 6 || n == CLUSTER_SENTINELS_MAX)
			return false;
		snprintf(one, sizeof(one), "tcp://%.*s", (int)len, p);
		if (!config_redis_address(one))
			return false;
		p += len + (p[len] == ',');
	}
	return n > 0;
}

/* "ADDR[/PREFIX][,ADDR[/PREFIX]...]": IPv4 or IPv6 addresses and nets. */
bool config_net_list(const char *value)
{
	uint8_t key[ENTRY_CIDR_MAX];

	for (const char *p = value; *p;) {
		size_t len = strcspn(p, ",");
		char one[64];
		if (len == 0 || len >= sizeof(one))
			return false;
		snprintf(one, sizeof(one), "%.*s", (int)len, p);
		if (entry_parse_cidr(one, key, NULL, 0) < 0)
			return false;
		p += len + (p[len] == ',');
	}
	return value[0] != '\0';
}

void config_cluster_validate(struct loader *ld)
{
	struct cluster_config *k = &ld->c->cluster;

	if (ld->c->events_redis && !config_cluster_on(ld->c))
		config_problem(ld, "[output] events = redis needs [cluster] redis (or sentinels)");
	if (k->redis && k->sentinels)
		config_problem(ld, "[cluster] redis and sentinels: one or the other (the sentinels name the master)");
	if ((k->sentinels != NULL) != (k->sentinel_master != NULL))
		config_problem(ld, "[cluster] sentinels and sentinel_master go together: the sentinels, and the master's name with them");
	if (k->user && !k->password)
		config_problem(ld, "[cluster] user needs password (AUTH user password)");
	if (!k->tls && (k->tls_ca_file || k->tls_cert_file || k->tls_key_file || k->tls_server_name))
		config_problem(ld, "[cluster] tls_ca_file, tls_cert_file, tls_key_file and tls_server_name need tls = yes");
	if ((k->tls_cert_file != NULL) != (k->tls_key_file != NULL))
		config_problem(ld, "[cluster] tls_cert_file and tls_key_file go together: the client certificate, and its key");
	if (k->tls && k->redis && strncmp(k->redis, "unix:", 5) == 0)
		config_problem(ld, "[cluster] tls = yes needs redis = tcp://HOST:PORT (or sentinels): Redis speaks TLS on TCP only");
}

bool config_cluster_on(const struct config *c)
{
	return c->cluster.redis || c->cluster.sentinels;
}

void config_cluster_free(struct config *c)
{
	free(c->cluster.redis);
	free(c->cluster.sentinels);
	free(c->cluster.sentinel_master);
	free(c->cluster.password);
	free(c->cluster.user);
	free(c->cluster.tls_ca_file);
	free(c->cluster.tls_cert_file);
	free(c->cluster.tls_key_file);
	free(c->cluster.tls_server_name);
	free(c->cluster.key_file);
	free(c->cluster.stream);
	free(c->cluster.node);
	free(c->cluster.events_key);
	free(c->events_fallback);
	free(c->action.set4);
	free(c->action.set6);
	free(c->action.table);
	free(c->action.protect);
}

/* A name nft takes: letters, digits, _ - . and a letter first. */
static bool nft_char(char c)
{
	return isalnum((unsigned char)c) || (c != '\0' && strchr("_-.", c));
}

bool config_nft_name(const char *value)
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
	ld->line = config_key_line(ld, "action", "manage");
	if (a->set4 || a->set6) {
		config_problem(ld, "[action] manage = yes: bloomd's table has its own sets (blocked4, blocked6): leave set and set6 out");
		return;
	}
	if (asprintf(&a->set4, "inet %s blocked4", a->table) < 0 || asprintf(&a->set6, "inet %s blocked6", a->table) < 0)
		config_problem(ld, "out of memory");
	ld->line = 0;
}

/* "inet bloomd blocked": a family, a table and a set, in names nft takes. */
bool config_nft_set(const char *value)
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
