/* cluster.c - sensors sharing their entries through a Redis stream, and events to Redis: connections, lag, the whole. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_internal.h"

#include <hiredis/adapters/libevent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cluster_seen.h"
#include "cluster_sign.h"
#include "error.h"
#include "log.h"
#include "state_dir.h"
#include "stats.h"

/* ---- connections ---- */

/*
 * Bytes arrived on k's socket (hiredis reads them): it is not cut off. On
 * the reader, an unfinished reply past cluster_read_bound holds an entry
 * too large to take: it is not read to its end (the reader goes careful).
 */
static void heard_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *k = arg;
	struct cluster *c = k->c;

	(void)fd;
	(void)what;
	k->heard_at = time(NULL);
	if (k == &c->reader && k->ac && k->ac->c.reader->len - k->ac->c.reader->pos > cluster_read_bound(c))
		cluster_reader_too_much(c);
}

/*
 * Connected: an error that named this connection's failure, or the
 * sentinels' on the way to it, no longer stands (another, such as a
 * desync or a WAIT short of replicas, does until its own end).
 */
static void forget_connection_error(struct conn *k)
{
	const char *error = k->c->errors[k->slot];
	size_t n = strlen(k->name);

	if ((strncmp(error, k->name, n) == 0 && strncmp(error + n, " connection", 11) == 0) ||
	    strncmp(error, "sentinel", 8) == 0)
		cluster_clear_error(k->c, k->slot);
}

static void on_connect(const redisAsyncContext *ac, int status)
{
	struct conn *k = ac->data;
	char why[TLS_WHY_MAX + 8];

	if (status != REDIS_OK) {
		cluster_set_error(k->c, k->slot, "%s connection: %s", k->name,
				  cluster_tls_why(k->tls_why, ac->errstr, why, sizeof(why)));
		k->ac = NULL; /* hiredis frees it */
		if (k->c->cfg->sentinels)
			k->c->master_known = false; /* asked again before the next try */
		return;
	}
	k->up = true;
	forget_connection_error(k);
	cluster_check_role(k->c, k);
	k->heard_at = time(NULL);
	k->heard = event_new(k->c->base, ac->c.fd, EV_READ | EV_PERSIST, heard_cb, k);
	if (k->heard == NULL || event_add(k->heard, NULL) < 0) { /* unheard, it would be taken for silent */
		cluster_set_error(k->c, k->slot, "%s connection: out of memory: dropped and made again", k->name);
		cluster_drop(k);
		return;
	}
	if (k == &k->c->reader)
		k->c->timed_out = false;
	if (k == &k->c->writer) {
		k->c->heal.wanted = true; /* a failover, perhaps: are this node's acknowledged changes still there? */
		cluster_writer_connected(k->c);
	} else {
		cluster_reader_read(k->c);
	}
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
	struct conn *k = ac->data;
	char why[TLS_WHY_MAX + 8];

	if (status != REDIS_OK && !k->c->closing)
		cluster_set_error(k->c, k->slot, "%s connection lost: %s", k->name,
				  cluster_tls_why(k->tls_why, ac->errstr, why, sizeof(why)));
	k->ac = NULL;
	k->up = false;
	if (k->c->cfg->sentinels)
		k->c->master_known = false; /* a failover, perhaps: asked again before the next connection */
	if (k->heard) /* before hiredis closes the socket */
		event_free(k->heard);
	k->heard = NULL;
	if (k == &k->c->reader)
		k->c->state = k->c->timed_out ? READER_STALE : READER_IDLE;
	else
		k->c->events_pending = 0; /* their replies will not come */
}

static void on_auth(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	struct conn *k = priv;

	(void)ac;
	if (reply && reply->type == REDIS_REPLY_ERROR)
		cluster_set_error(k->c, k->slot, "AUTH%s: %s", k->c->cfg->user ? " (user and password)" : "", reply->str);
}

static void connect_one(struct cluster *c, struct conn *k)
{
	const struct redis_where *w = &c->master;
	redisAsyncContext *ac;

	if (!c->master_known)
		return;
	ac = w->path[0] ? redisAsyncConnectUnix(w->path) : redisAsyncConnect(w->host, w->port);
	if (ac == NULL)
		return;
	char why[TLS_WHY_MAX + 8];
	if (ac->err || cluster_tls_start(c, &ac->c, w->host, k->tls_why) < 0) {
		/* Refused at once (a TLS handshake on a socket refused): as on_connect does, the sentinels asked again. */
		cluster_set_error(c, k->slot, "%s connection: %s", k->name,
				  ac->err ? ac->errstr : cluster_tls_why(k->tls_why, ac->errstr, why, sizeof(why)));
		redisAsyncFree(ac);
		if (c->cfg->sentinels)
			c->master_known = false;
		return;
	}
	if (!w->path[0])
		redisEnableKeepAlive(&ac->c); /* a peer gone without a word is found even while nothing is asked */
	ac->data = k;
	k->ac = ac;
	k->heard_at = time(NULL);
	redisLibeventAttach(ac, c->base);
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	const char *auth[3];
	int n = cluster_auth_argv(c, auth);
	if (n)
		(void)cluster_sent(k, redisAsyncCommandArgv(ac, on_auth, k, n, auth, NULL), "AUTH");
}

/*
 * A connection that has not connected, or has waited for a reply without
 * hearing a byte, for longer than limit seconds is dropped (its callbacks get
 * no reply) and made again at once: a partition drops packets without a
 * word, and TCP alone would wait for many minutes. The reader, dropped so,
 * is stale until it follows the stream again.
 */
static void drop_if_silent(struct cluster *c, struct conn *k, unsigned limit)
{
	time_t now = time(NULL);

	if (k->ac == NULL)
		return;
	if (k->up && k->ac->replies.head == NULL) { /* nothing asked: nothing to wait for */
		k->heard_at = now;
		return;
	}
	if (now - k->heard_at <= (time_t)limit)
		return;
	cluster_set_error(c, k->slot, "%s: %s in %u s (a partition, or Redis stalled): the connection is dropped and made again",
			  k->name, k->up ? "no reply" : "not connected", limit);
	if (k == &c->reader) {
		c->timed_out = true;
		c->state = READER_STALE;
		c->stale_since = now;
	}
	cluster_drop(k);
}

/* ---- lag ---- */

/*
 * The lag is counted in Redis, so that no entry's bytes come over for it
 * (one over max_entry_bytes would): how many entries follow the cursor, up
 * to a cap, and the last of them.
 */
static const char LAG_SCRIPT[] =
	"local e = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])\n"
	"if #e == 0 then return {0, ''} end\n"
	"return {#e, e[#e][1]}\n";

static void on_lag(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	c->lag_asked = false;
	if (reply == NULL || c->closing || reply->type == REDIS_REPLY_ERROR)
		return;
	if (!cluster_reply_array(reply, 2, false) || reply->element[0]->type != REDIS_REPLY_INTEGER ||
	    reply->element[0]->integer < 0 || reply->element[1]->type != REDIS_REPLY_STRING ||
	    (reply->element[0]->integer > 0 && !cluster_id_valid(reply->element[1]->str))) {
		cluster_bad_reply(&c->writer, "EVAL (the lag)", reply);
		return;
	}
	size_t n = (size_t)reply->element[0]->integer;
	c->lag_entries = n > LAG_CAP ? LAG_CAP : n;
	c->lag_capped = n > LAG_CAP;
	if (n)
		snprintf(c->last_id_seen, sizeof(c->last_id_seen), "%s", reply->element[1]->str);
}

static void measure_lag(struct cluster *c)
{
	char from[ID_MAX + 1], count[16];

	if (!c->writer.up || c->lag_asked)
		return;
	snprintf(from, sizeof(from), "(%s", c->cursor);
	snprintf(count, sizeof(count), "%d", LAG_CAP + 1);
	const char *argv[] = { "EVAL", LAG_SCRIPT, "1", c->cfg->stream, from, count };
	c->lag_asked = cluster_sent(&c->writer, redisAsyncCommandArgv(c->writer.ac, on_lag, c, 6, argv, NULL), "EVAL (the lag)");
}

/* ---- the whole ---- */

/* The add-to-apply delay histogram's bounds, in seconds: 1 ms to 5 minutes. */
static const double DELAY_BOUNDS[] = { 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300 };
_Static_assert(sizeof(DELAY_BOUNDS) / sizeof(DELAY_BOUNDS[0]) <= STATS_BOUNDS_MAX, "the histogram holds them");

struct cluster *cluster_open(struct event_base *base, const struct cluster_config *cfg,
			     const struct state_dir *state, bool sync_always, const struct cluster_callbacks *cb,
			     char *err, size_t errlen)
{
	struct cluster *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		error_set(err, errlen, "out of memory");
		return NULL;
	}
	c->dir = state;
	c->next_seq = 1;
	c->delay_seconds = (struct stats_histogram){ .bounds = DELAY_BOUNDS, .nbounds = sizeof(DELAY_BOUNDS) / sizeof(DELAY_BOUNDS[0]) };
	if ((c->seen = seen_new()) == NULL ||
	    getrandom(&c->incarnation, sizeof(c->incarnation), 0) != (ssize_t)sizeof(c->incarnation)) {
		error_set(err, errlen, "out of memory (or no randomness) for the cluster");
		seen_free(c->seen);
		free(c);
		return NULL;
	}
	c->base = base;
	c->own = *cfg;
	c->own.redis = cfg->redis ? strdup(cfg->redis) : NULL;
	c->own.sentinels = cfg->sentinels ? strdup(cfg->sentinels) : NULL;
	c->own.sentinel_master = cfg->sentinel_master ? strdup(cfg->sentinel_master) : NULL;
	c->own.password = cfg->password ? strdup(cfg->password) : NULL;
	c->own.user = cfg->user ? strdup(cfg->user) : NULL;
	c->own.tls_server_name = cfg->tls_server_name ? strdup(cfg->tls_server_name) : NULL;
	c->own.tls_ca_file = c->own.tls_cert_file = c->own.tls_key_file = NULL; /* read by cluster_tls_open, not kept */
	c->own.stream = strdup(cfg->stream);
	c->own.node = strdup(cfg->node);
	c->own.events_key = strdup(cfg->events_key);
	c->cfg = &c->own;
	c->cb = *cb;
	c->out.fd = -1;
	if ((cfg->redis && !c->own.redis) || (cfg->sentinels && !c->own.sentinels) ||
	    (cfg->sentinel_master && !c->own.sentinel_master) || (cfg->password && !c->own.password) ||
	    (cfg->user && !c->own.user) || (cfg->tls_server_name && !c->own.tls_server_name) || !c->own.stream ||
	    !c->own.node || !c->own.events_key) {
		error_set(err, errlen, "out of memory");
		cluster_close(c);
		return NULL;
	}
	c->sync_always = sync_always;
	if (cfg->key_file && ((c->key = malloc(sizeof(*c->key))) == NULL ||
			      sign_key_load(c->key, cfg->key_file, err, errlen) < 0)) {
		if (c->key == NULL)
			error_set(err, errlen, "out of memory");
		cluster_close(c);
		return NULL;
	}
	if (cluster_tls_open(c, cfg, err, errlen) < 0) {
		cluster_close(c);
		return NULL;
	}
	c->master_known = cfg->redis && cluster_where_parse(cfg->redis, &c->master);
	c->reader = (struct conn){ .c = c, .name = "Redis reader", .slot = ERROR_READER };
	c->writer = (struct conn){ .c = c, .name = "Redis writer", .slot = ERROR_WRITER };
	snprintf(c->snapshot_key, sizeof(c->snapshot_key), "%s:snapshot", cfg->stream);
	snprintf(c->nodes_key, sizeof(c->nodes_key), "%s:nodes", cfg->stream);
	snprintf(c->digests_key, sizeof(c->digests_key), "%s:digests", cfg->stream);
	if (cluster_load_cursor(c, err, errlen) < 0 || cluster_load_outbox(c, err, errlen) < 0) {
		cluster_close(c);
		return NULL;
	}
	cluster_tick(c);
	return c;
}

void cluster_tick(struct cluster *c)
{
	BLOOMD_ON_LOOP();
	/* The reader's XREAD blocks READ_BLOCK_MS when there is nothing new: that long on top. */
	drop_if_silent(c, &c->reader, c->cfg->timeout + (unsigned)atoi(READ_BLOCK_MS) / 1000);
	drop_if_silent(c, &c->writer, c->cfg->timeout);
	cluster_sentinel_tick(c);
	if (c->reader.ac == NULL)
		connect_one(c, &c->reader);
	if (c->writer.ac == NULL)
		connect_one(c, &c->writer);
	unsigned wait = c->blocked_at[0] ? c->retry_seconds : STALE_RETRY_SECONDS;
	if (c->state == READER_STALE && c->reader.up && time(NULL) - c->stale_since >= (time_t)wait)
		cluster_reader_read(c);
	cluster_save_cursor(c);
	if (c->out.failed)
		cluster_rewrite_outbox(c);
	cluster_sync_outbox(c);
	cluster_writer_tick(c);
	cluster_heal_tick(c);
	cluster_digest_tick(c);
	char err[256];
	if (c->republish && c->writer.up) { /* tried again each second until it is sent */
		if (cluster_snapshot(c, err, sizeof(err)) < 0) {
			log_warning("cluster: publishing this node's entries as the snapshot: %s", err);
		} else {
			log_info("cluster: this node's entries are published as the snapshot, and its shared lists' versions, "
				 "for nodes that join after the loss");
			c->republish = false;
			c->cb.republish_lists(c->cb.ctx);
		}
	}
	/* Up to date (as the last lag check found): a snapshot now and then, for nodes behind the trim. */
	if (c->cfg->snapshot_every && c->state == READER_READING && c->lag_entries == 0 && !c->lag_asked &&
	    time(NULL) - c->last_snapshot >= (time_t)c->cfg->snapshot_every)
		cluster_snapshot(c, err, sizeof(err));
	measure_lag(c);
}

void cluster_close(struct cluster *c)
{
	if (c == NULL)
		return;
	c->cursor_dirty = c->cursor_dirty || c->applied;
	cluster_save_cursor(c);
	cluster_sync_outbox(c);
	c->closing = true;
	cluster_sentinel_close(c);
	if (c->reader.ac)
		redisAsyncFree(c->reader.ac);
	if (c->writer.ac)
		redisAsyncFree(c->writer.ac);
	for (size_t i = c->out.head; i < c->out.n; i++)
		free(c->out.lines[i]);
	free(c->out.lines);
	if (c->out.fd >= 0)
		close(c->out.fd);
	free(c->own.redis);
	free(c->own.sentinels);
	free(c->own.sentinel_master);
	free(c->own.password);
	free(c->own.user);
	free(c->own.tls_server_name);
	cluster_tls_close(c);
	free(c->own.stream);
	free(c->own.node);
	free(c->own.events_key);
	seen_free(c->seen);
	cluster_digest_close(c);
	free(c->applying.seen);
	free(c->snap.seen);
	if (c->key)
		memset(c->key, 0, sizeof(*c->key));
	free(c->key);
	free(c);
}

/* p50 and p99 of the delays kept, in ms; null while there are none. */
static json_t *delays_json(const struct cluster *c)
{
	uint32_t p50, p99;

	if (c->ndelays == 0)
		return json_null();
	stats_percentiles(c->delay_ms, DELAYS, c->ndelays, &p50, &p99);
	return json_pack("{s:I,s:I,s:I}", "samples", (json_int_t)(c->ndelays < DELAYS ? c->ndelays : DELAYS), "p50",
			 (json_int_t)p50, "p99", (json_int_t)p99);
}

static json_t *errors_json(const struct cluster *c)
{
	json_t *o = json_object();

	for (int i = 0; i < ERROR_SLOTS && o; i++)
		json_object_set_new(o, CLUSTER_ERROR_SLOT_NAMES[i], c->errors[i][0] ? json_string(c->errors[i]) : json_null());
	return o;
}

json_t *cluster_status(const struct cluster *c)
{
	double lag_seconds = 0;
	char master[300] = "";

	if (c->master_known)
		cluster_where_text(&c->master, master, sizeof(master));

	if (c->lag_entries && cluster_id_cmp(c->last_id_seen, c->cursor) > 0)
		lag_seconds = (double)(cluster_parse_id(c->last_id_seen).ms - cluster_parse_id(c->cursor).ms) / 1000;
	json_t *o = json_pack("{s:s,s:s,s:s,s:b,s:b,s:s,s:s,s:I,s:b,s:f,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:o,s:o,s:{s:I,s:I,s:I},s:s*,s:o}",
			 "node", c->cfg->node, "redis", c->cfg->redis ? c->cfg->redis : c->cfg->sentinels, "stream", c->cfg->stream, "reader_connected",
			 c->reader.up, "writer_connected", c->writer.up, "state",
			 c->rebuilding ? "rebuilding"
			 : c->resyncing || (c->state == READER_STALE && strncmp(c->errors[ERROR_READER], "desync", 6) == 0) ? "desync"
			 : c->state == READER_READING ? (c->digest.divergent ? "divergent" : "following")
			 : c->state == READER_STALE ? "stale" : "connecting",
			 "last_id", c->cursor, "lag_entries", (json_int_t)c->lag_entries, "lag_entries_capped",
			 c->lag_capped, "lag_seconds", lag_seconds, "delay_ms", delays_json(c), "applied",
			 (json_int_t)c->applied, "apply_errors",
			 (json_int_t)c->apply_errors, "published", (json_int_t)c->published, "outbox",
			 (json_int_t)(c->out.n - c->out.head), "restored_from_snapshot", (json_int_t)c->restored, "desyncs", (json_int_t)c->desyncs, "rollbacks_refused", (json_int_t)c->rollbacks, "duplicates", (json_int_t)c->duplicates, "unauthenticated", (json_int_t)c->unauthenticated,
			 "oversized", (json_int_t)c->oversized, "signed", c->key != NULL, "blocked_at",
			 c->blocked_at[0] ? json_string(c->blocked_at) : json_null(), "applying",
			 c->applying.on ? json_string(c->applying.id) : json_null(),
			 "events", "sent", (json_int_t)c->events_sent, "pending", (json_int_t)c->events_pending,
			 "failed", (json_int_t)c->events_failed, "error", cluster_newest_error(c), "errors", errors_json(c));
	if (o) {
		json_object_set_new(o, "delay_seconds", stats_histogram_json(&c->delay_seconds));
		json_object_set_new(o, "restoring", json_boolean(c->applying.on && c->applying.snapshot));
		json_object_set_new(o, "master", master[0] ? json_string(master) : json_null());
		json_object_set_new(o, "wait_replicas", json_integer(c->cfg->wait_replicas));
		json_object_set_new(o, "tls", json_boolean(c->tls != NULL));
		json_object_set_new(o, "divergent", json_boolean(c->digest.divergent));
		json_object_set_new(o, "digest", cluster_digest_status(c));
		json_object_set_new(o, "user", c->cfg->user ? json_string(c->cfg->user) : json_null());
		json_object_set_new(o, "publish_refused", c->publish_refused[0] ? json_string(c->publish_refused) : json_null());
	}
	return o;
}

