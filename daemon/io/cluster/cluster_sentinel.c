/* cluster_sentinel.c - where the master is: [cluster] redis, or asked of Redis Sentinels (and checked with ROLE). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_internal.h"

#include <hiredis/adapters/libevent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * As the Sentinel client guidelines say: the sentinels are asked in turn,
 * one at a time, "SENTINEL get-master-addr-by-name NAME"; the first that
 * answers with an address names the master, which the reader and the writer
 * then connect to, and each checks with ROLE that it is a master (a
 * sentinel behind a failover can name a replica). Every lost connection
 * asks again, so a failover is followed at the next connection. A sentinel
 * that does not answer within [cluster] timeout is left for the next.
 */

bool cluster_where_parse(const char *text, struct redis_where *w)
{
	*w = (struct redis_where){ 0 };
	if (strncmp(text, "unix:", 5) == 0) {
		snprintf(w->path, sizeof(w->path), "%s", text + 5);
		return true;
	}
	const char *host = strncmp(text, "tcp://", 6) == 0 ? text + 6 : text, *colon = strrchr(host, ':');
	if (colon == NULL || colon == host || (size_t)(colon - host) >= sizeof(w->host))
		return false;
	snprintf(w->host, sizeof(w->host), "%.*s", (int)(colon - host), host);
	w->port = atoi(colon + 1);
	return w->port > 0 && w->port < 65536;
}

void cluster_where_text(const struct redis_where *w, char *out, size_t len)
{
	if (w->path[0])
		snprintf(out, len, "unix:%s", w->path);
	else
		snprintf(out, len, "%s:%d", w->host, w->port);
}

/* The n-th sentinel of "HOST:PORT,HOST:PORT" (counting round), or false. */
static bool nth_sentinel(const char *list, unsigned n, struct redis_where *w)
{
	unsigned count = 1;

	for (const char *p = list; *p; p++)
		count += *p == ',';
	const char *p = list;
	for (unsigned i = 0; i < n % count; i++)
		p += strcspn(p, ",") + 1;
	char one[300];
	snprintf(one, sizeof(one), "%.*s", (int)strcspn(p, ","), p);
	return cluster_where_parse(one, w);
}

/* The sentinel being asked is let go (its context returned); the next is asked next time, unless this one answered. */
static redisAsyncContext *let_go(struct cluster *c, bool answered)
{
	redisAsyncContext *ac = c->ask.ac;

	c->ask.ac = NULL;
	c->ask.next += !answered;
	return ac;
}

static void on_master_addr(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;
	struct redis_where w = { 0 };

	if (reply == NULL || c->closing || ac != c->ask.ac)
		return;
	if (cluster_reply_array(reply, 2, false) && cluster_reply_text(reply->element[0]) &&
	    cluster_reply_text(reply->element[1]) && strlen(reply->element[0]->str) < sizeof(w.host)) {
		snprintf(w.host, sizeof(w.host), "%s", reply->element[0]->str);
		w.port = atoi(reply->element[1]->str);
	}
	for (const char *h = w.host; *h && w.port; h++)
		if ((unsigned char)*h <= ' ' || (unsigned char)*h >= 0x7f) {
			cluster_set_error(c, ERROR_READER, "sentinel %s:%d: names a master whose host holds control characters "
					  "or bytes that are not ASCII ('%s'): refused", ac->c.tcp.host, ac->c.tcp.port, w.host);
			redisAsyncDisconnect(let_go(c, false));
			return;
		}
	if (w.port <= 0 || w.port >= 65536) {
		cluster_set_error(c, ERROR_READER, "sentinel %s:%d: %s", ac->c.tcp.host, ac->c.tcp.port,
				  reply->type == REDIS_REPLY_ERROR ? reply->str : "does not know the master by [cluster] sentinel_master's name");
		redisAsyncDisconnect(let_go(c, false));
		return;
	}
	if (!c->master_known && (strcmp(w.host, c->master.host) != 0 || w.port != c->master.port))
		log_info("cluster: the sentinels name %s:%d as the master of %s", w.host, w.port, c->cfg->sentinel_master);
	c->master = w;
	c->master_known = true;
	redisAsyncDisconnect(let_go(c, true)); /* asked first next time */
}

static void on_ask_connect(const redisAsyncContext *ac, int status)
{
	struct cluster *c = ac->data;

	char why[TLS_WHY_MAX + 8];

	if (status == REDIS_OK)
		return;
	cluster_set_error(c, ERROR_READER, "sentinel: %s", cluster_tls_why(c->ask.tls_why, ac->errstr, why, sizeof(why)));
	if (c->ask.ac == ac)
		let_go(c, false); /* hiredis frees it */
}

static void on_ask_disconnect(const redisAsyncContext *ac, int status)
{
	struct cluster *c = ac->data;
	char why[TLS_WHY_MAX + 8];

	if (c->ask.ac != ac)
		return;
	if (status != REDIS_OK) /* what hiredis could not read (garbage, not RESP) is named */
		cluster_set_error(c, ERROR_READER, "sentinel %s:%d: %s", ac->c.tcp.host, ac->c.tcp.port,
				  cluster_tls_why(c->ask.tls_why, ac->errstr[0] ? ac->errstr : "connection lost", why, sizeof(why)));
	let_go(c, false);
}

/* Ask the next sentinel where the master is. */
static void ask_next(struct cluster *c)
{
	struct redis_where w;

	if (!nth_sentinel(c->cfg->sentinels, c->ask.next, &w))
		return;
	redisAsyncContext *ac = redisAsyncConnect(w.host, w.port);
	if (ac == NULL)
		return;
	if (ac->err) {
		cluster_set_error(c, ERROR_READER, "sentinel %s:%d: %s", w.host, w.port, ac->errstr);
		redisAsyncFree(ac);
		c->ask.next++;
		return;
	}
	if (cluster_tls_start(c, &ac->c, w.host, c->ask.tls_why) < 0) {
		char why[TLS_WHY_MAX + 8];
		cluster_set_error(c, ERROR_READER, "sentinel %s:%d: %s", w.host, w.port,
				  cluster_tls_why(c->ask.tls_why, ac->errstr, why, sizeof(why)));
		redisAsyncFree(ac);
		c->ask.next++;
		return;
	}
	ac->data = c;
	c->ask.ac = ac;
	c->ask.since = time(NULL);
	redisLibeventAttach(ac, c->base);
	redisAsyncSetConnectCallback(ac, on_ask_connect);
	redisAsyncSetDisconnectCallback(ac, on_ask_disconnect);
	const char *argv[] = { "SENTINEL", "get-master-addr-by-name", c->cfg->sentinel_master };
	if (redisAsyncCommandArgv(ac, on_master_addr, c, 3, argv, NULL) != REDIS_OK) { /* no memory: not connected yet */
		cluster_set_error(c, ERROR_READER, "sentinel %s:%d: SENTINEL not sent (out of memory): asking the next", w.host,
				  w.port);
		redisAsyncFree(let_go(c, false));
	}
}

void cluster_sentinel_tick(struct cluster *c)
{
	if (c->cfg->sentinels == NULL || c->master_known)
		return;
	if (c->ask.ac && time(NULL) - c->ask.since > (time_t)c->cfg->timeout) {
		cluster_set_error(c, ERROR_READER, "sentinel: no answer in %u s: asking the next", c->cfg->timeout);
		redisAsyncFree(let_go(c, false));
	}
	if (c->ask.ac == NULL)
		ask_next(c);
}

void cluster_sentinel_close(struct cluster *c)
{
	redisAsyncContext *ac = let_go(c, false);

	if (ac)
		redisAsyncFree(ac);
}

static void on_role(redisAsyncContext *ac, void *r, void *priv)
{
	struct conn *k = priv;
	redisReply *reply = r;

	if (reply == NULL || k->c->closing || k->ac != ac)
		return;
	const char *role = cluster_reply_array(reply, 0, true) && reply->elements ? cluster_reply_text(reply->element[0]) : NULL;
	if (role && strcmp(role, "master") == 0)
		return;
	cluster_set_error(k->c, k->slot, "%s: %s:%d is not the master (ROLE: %s): asking the sentinels again", k->name,
			  k->c->master.host, k->c->master.port, role ? role : "?");
	k->c->master_known = false;
	cluster_drop(k);
}

void cluster_check_role(struct cluster *c, struct conn *k)
{
	if (c->cfg->sentinels)
		(void)cluster_sent(k, redisAsyncCommand(k->ac, on_role, k, "ROLE"), "ROLE");
}
