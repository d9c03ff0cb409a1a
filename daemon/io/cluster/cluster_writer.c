/* cluster_writer.c - to the stream: local changes from the outbox, events, snapshots. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

/* ---- the writer: changes, events, snapshots ---- */

#define BATCH_CHANGES 4096          /* changes in one MULTI/EXEC at most */
#define BATCH_BYTES (4u << 20)      /* and bytes (one change may be more) */

static void cluster_writer_flush(struct cluster *c); /* a batch done sends the next */

/*
 * An error reply to a write: NOPERM says this node's Redis user may not
 * write (a following-only node): said once, in the log and the status,
 * until a batch is taken.
 */
static void note_write_refused(struct cluster *c, const redisReply *reply)
{
	char why[sizeof(c->publish_refused)];

	if (reply == NULL || reply->type != REDIS_REPLY_ERROR || strncmp(reply->str, "NOPERM", 6) != 0)
		return;
	snprintf(why, sizeof(why), "%s", reply->str);
	error_printable(why);
	if (c->publish_refused[0] == '\0')
		log_warning("cluster: Redis refuses this node's writes (%s): it follows the stream, but its own changes "
			    "wait in the outbox and are not shared", why);
	memcpy(c->publish_refused, why, sizeof(why));
}

/*
 * The changes go in batches, MULTI, an XADD each, EXEC, one batch in flight
 * at a time. Redis refuses a command it cannot take (out of memory, a
 * replica, a failed save) when it queues it, and then runs none of the
 * batch: so a batch is in the stream whole or not at all, and one sent again
 * never lands after a later change of its node. (XADDs pipelined one by one
 * could see one refused and the next taken; sent again after it, the first
 * was passed everywhere as a duplicate.)
 */
static void on_queued(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply && !c->closing && reply->type == REDIS_REPLY_ERROR) {
		cluster_set_error(c, ERROR_WRITER, "XADD: %s (the batch is not taken: kept and sent again)", reply->str);
		note_write_refused(c, reply);
	}
}

/* Whether EXEC's reply holds an ID for each of the n changes of the batch. */
static bool batch_taken(const redisReply *reply, size_t n)
{
	if (!cluster_reply_array(reply, n, false))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!cluster_reply_text(reply->element[i]) || !cluster_id_valid(reply->element[i]->str))
			return false;
	return true;
}

/* The batch in flight is in the stream (and on its replicas, as asked): out of the outbox; the next goes. */
static void batch_done(struct cluster *c)
{
	struct outbox *o = &c->out;
	size_t n = o->sent - o->head;

	cluster_clear_error(c, ERROR_WRITER);
	c->publish_refused[0] = '\0';
	o->written[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		cluster_heal_keep(c, o->lines[o->head], i < o->ids_n ? o->ids[i] : "");
		o->lines[o->head++] = NULL;
	}
	o->ids_n = 0;
	c->published += n;
	if (o->head == o->n) {
		o->head = o->sent = o->n = 0;
		if (o->fd >= 0 && ftruncate(o->fd, 0) == 0)
			o->dirty = true;
	}
	cluster_writer_flush(c);
}

/*
 * The batch stays in the outbox and the connection is made again: if it is
 * in the stream (written), the next connection checks that it still is and
 * waits for replicas again; if not, it is sent again (a copy is passed as a
 * duplicate).
 */
static void batch_again(struct cluster *c)
{
	c->out.asking = false;
	cluster_drop(&c->writer);
}

/* A reply about the batch in flight, or NULL when there is none to take (the connection lost, closing, no batch). */
static const redisReply *batch_reply(struct cluster *c, void *r)
{
	if (r == NULL || c->closing || c->out.sent == c->out.head)
		return NULL;
	c->out.asking = false;
	return r;
}

/* WAIT's answer: the replicas that have the batch. */
static void on_waited(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	const redisReply *reply = batch_reply(c, r);

	(void)ac;
	if (reply == NULL)
		return;
	if (reply->type == REDIS_REPLY_INTEGER && reply->integer >= (long long)c->cfg->wait_replicas) {
		batch_done(c);
		return;
	}
	if (reply->type == REDIS_REPLY_INTEGER) /* in the stream once: asked again each second (cluster_writer_tick) */
		cluster_set_error(c, ERROR_WRITER, "WAIT: %lld of [cluster] wait_replicas (%u) replicas have the batch: it stays in the outbox, and is waited for again",
				  reply->integer, c->cfg->wait_replicas);
	else if (reply->type == REDIS_REPLY_ERROR)
		cluster_set_error(c, ERROR_WRITER, "WAIT: %s (the batch stays in the outbox)", reply->str);
	else
		cluster_bad_reply(&c->writer, "WAIT", reply);
	if (reply->type != REDIS_REPLY_INTEGER)
		batch_again(c);
}

/* Half the timeout: the writer is dropped if it hears nothing for the whole of it. */
static void ask_replicas(struct cluster *c)
{
	c->out.asking = cluster_sent(&c->writer, redisAsyncCommand(c->writer.ac, on_waited, c, "WAIT %u %u",
								       c->cfg->wait_replicas, c->cfg->timeout * 500),
				     "WAIT");
}

void cluster_writer_tick(struct cluster *c)
{
	if (c->writer.up && c->out.written[0] && !c->out.asking && c->out.sent != c->out.head)
		ask_replicas(c);
}

/*
 * Whether the batch written on a connection now lost is in the stream still
 * (its first entry, with its change's identity: CLUSTER_MISSING_SCRIPT says
 * which of the pairs it is given are not). If it is, this node's mark goes
 * to STREAM:nodes first, a write, so that WAIT on this new connection
 * covers the batch too; if not (a failover lost it), it is sent again.
 */
static void on_still(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	const redisReply *reply = batch_reply(c, r);

	(void)ac;
	if (reply == NULL)
		return;
	if (!cluster_reply_array(reply, 0, true) || reply->elements > 1) {
		if (reply->type == REDIS_REPLY_ERROR)
			cluster_set_error(c, ERROR_WRITER, "EVAL (the batch in the stream): %s", reply->str);
		else
			cluster_bad_reply(&c->writer, "EVAL (the batch in the stream)", reply);
		batch_again(c);
		return;
	}
	if (reply->elements == 0) {
		const char *argv[] = { "HSET", c->nodes_key, c->cfg->node, c->out.written };
		if (cluster_sent(&c->writer, redisAsyncCommandArgv(c->writer.ac, NULL, NULL, 4, argv, NULL), "HSET (the mark)"))
			ask_replicas(c);
		return;
	}
	log_info("cluster: a batch of %zu changes written at %s is not in the stream any more (a failover lost it): sent again",
		 c->out.sent - c->out.head, c->out.written);
	c->out.written[0] = '\0';
	c->out.sent = c->out.head;
	cluster_writer_flush(c);
}

void cluster_writer_connected(struct cluster *c)
{
	struct outbox *o = &c->out;
	char change[48] = "";

	o->asking = false;
	if (!o->written[0] || o->sent == o->head) { /* what was in flight, not written, goes again */
		o->written[0] = '\0';
		o->sent = o->head;
		cluster_writer_flush(c);
		return;
	}
	sscanf(o->lines[o->head], "@%47s", change);
	const char *argv[] = { "EVAL", CLUSTER_MISSING_SCRIPT, "1", c->cfg->stream, o->written, change };
	o->asking = cluster_sent(&c->writer, redisAsyncCommandArgv(c->writer.ac, on_still, c, 6, argv, NULL),
				 "EVAL (the batch in the stream)");
}

static void on_exec(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;
	struct outbox *o = &c->out;
	size_t n = o->sent - o->head;

	(void)ac;
	if (reply == NULL || c->closing || n == 0)
		return; /* a lost connection: on_connect sends them again */
	if (!batch_taken(reply, n)) {
		if (reply->type == REDIS_REPLY_ERROR)
			cluster_set_error(c, ERROR_WRITER, "EXEC: %s (the changes are kept and sent again)", reply->str);
		else
			cluster_bad_reply(&c->writer, "EXEC", reply);
		batch_again(c);
		return;
	}
	if (n > o->ids_cap) {
		char (*ids)[ID_MAX] = realloc(o->ids, n * sizeof(*ids));
		if (ids) {
			o->ids = ids;
			o->ids_cap = n;
		}
	}
	snprintf(c->own_last, sizeof(c->own_last), "%s", reply->element[n - 1]->str);
	o->ids_n = n <= o->ids_cap ? n : 0; /* without memory, the batch is not kept for healing */
	for (size_t i = 0; i < o->ids_n; i++)
		snprintf(o->ids[i], ID_MAX, "%s", reply->element[i]->str);
	if (c->cfg->wait_replicas == 0) {
		batch_done(c);
		return;
	}
	snprintf(o->written, sizeof(o->written), "%s", reply->element[0]->str);
	ask_replicas(c);
}

/* Whether it was sent (else the connection is dropped: the batch goes again on the next). */
static bool send_change(struct cluster *c, const char *line)
{
	char change[48] = "", op[8] = "?", expires[24] = "0", maxlen[16];
	char *data = NULL;

	sscanf(line, "@%47s", change);
	line += strcspn(line, " ") + (line[strcspn(line, " ")] == ' ');
	const char *p = strchr(line, ' '), *entry = p ? strchr(p + 1, ' ') : NULL;
	sscanf(line, "%7s %23s", op, expires);
	entry = entry ? entry + 1 : "?";
	const char *sep = strchr(entry, '\x1f');
	size_t entry_len = sep ? (size_t)(sep - entry) : strlen(entry);
	if (sep && (data = strdup(sep + 1)) != NULL)
		for (char *q = data; *q; q++)
			if (*q == '\x1f')
				*q = '\n';
	snprintf(maxlen, sizeof(maxlen), "%u", c->cfg->maxlen);
	char mac[SIGN_HEX + 1] = "";
	const char *argv[] = { "XADD", c->cfg->stream, "MAXLEN", "~", maxlen, "*", "node", c->cfg->node,
			       "change", change, "op", op, "expires", expires, "entry", entry, "data", data ? data : "",
			       "mac", mac };
	size_t lens[20];
	for (int i = 0; i < 18; i++)
		lens[i] = strlen(argv[i]);
	lens[15] = entry_len;
	if (c->key) {
		struct sign_field f[7] = { { argv[1], lens[1] } };
		for (int i = 0; i < 6; i++)
			f[i + 1] = (struct sign_field){ argv[7 + 2 * i], lens[7 + 2 * i] };
		sign_fields(c->key, "bloomd change", f, 7, mac);
		lens[18] = 3;
		lens[19] = SIGN_HEX;
	}
	int rc = redisAsyncCommandArgv(c->writer.ac, on_queued, c, c->key ? 20 : 18, argv, lens);
	free(data);
	return cluster_sent(&c->writer, rc, "XADD");
}

static void cluster_writer_flush(struct cluster *c)
{
	struct outbox *o = &c->out;
	size_t bytes = 0;

	if (!c->writer.up || o->head != o->sent || o->sent == o->n)
		return; /* down, a batch in flight, or nothing to send */
	/* A part refused drops the connection, and with it the MULTI Redis holds: the batch goes again whole. */
	if (!cluster_sent(&c->writer, redisAsyncCommand(c->writer.ac, on_queued, c, "MULTI"), "MULTI"))
		return;
	do {
		bytes += strlen(o->lines[o->sent]);
		if (!send_change(c, o->lines[o->sent++]))
			return;
	} while (o->sent < o->n && o->sent - o->head < BATCH_CHANGES && bytes < BATCH_BYTES);
	(void)cluster_sent(&c->writer, redisAsyncCommand(c->writer.ac, on_exec, c, "EXEC"), "EXEC");
}

int cluster_publish(struct cluster *c, const struct cluster_op *op, char *err, size_t errlen)
{
	char *line;

	char id[48];

	if (op->data_len + strlen(op->entry) > c->cfg->max_entry_bytes) {
		error_set(err, errlen, "%zu bytes, more than [cluster] max_entry_bytes (%llu): not shared, as no node would take it",
			  op->data_len + strlen(op->entry), (unsigned long long)c->cfg->max_entry_bytes);
		return -1;
	}
	seen_format_id(c->incarnation, c->next_seq++, id, sizeof(id));
	if (asprintf(&line, "@%s %s %" PRIu64 " %s%s%.*s", id, CLUSTER_OP_NAMES[op->kind], op->expires, op->entry,
		     op->data ? "\x1f" : "", op->data ? (int)op->data_len : 0, op->data ? op->data : "") < 0) {
		error_set(err, errlen, "out of memory for the cluster's outbox");
		return -1;
	}
	for (char *q = strchr(line, '\x1f'); q && *q; q++) /* one line in the outbox file */
		if (*q == '\n')
			*q = '\x1f';
	if (cluster_outbox_append(c, line) < 0) {
		free(line);
		error_set(err, errlen, "out of memory for the cluster's outbox");
		return -1;
	}
	return 0;
}

/* line (taken) into the outbox, its file (fsync'd with sync_always), and on to the stream; -1 without memory. */
int cluster_outbox_append(struct cluster *c, char *line)
{
	if (cluster_outbox_push(c, line) < 0)
		return -1;
	if (c->out.fd >= 0 && !c->out.failed) {
		size_t n = strlen(line);
		if (write(c->out.fd, line, n) != (ssize_t)n || write(c->out.fd, "\n", 1) != 1)
			cluster_outbox_failed(c, errno ? errno : EIO);
		c->out.dirty = true;
		if (c->sync_always)
			cluster_sync_outbox(c);
	}
	cluster_writer_flush(c);
	return 0;
}

/* An event in flight: kept until Redis says it took it, and handed back otherwise. */
struct event_in_flight {
	struct cluster *c;
	size_t len;
	char line[];
};

/*
 * Redis's answer to an event, or NULL when none will come (the connection
 * lost, or closed by cluster_close): anything but the reply its command
 * gives hands the event back (cb.event_lost: to the fallback file).
 */
static void on_event_sent(redisAsyncContext *ac, void *r, void *priv)
{
	struct event_in_flight *ev = priv;
	struct cluster *c = ev->c;
	redisReply *reply = r;
	bool taken = reply && (c->cfg->events_stream ? cluster_reply_text(reply) != NULL : reply->type == REDIS_REPLY_INTEGER);

	(void)ac;
	if (c->events_pending)
		c->events_pending--;
	if (taken) {
		c->events_sent++;
	} else {
		c->events_failed++;
		note_write_refused(c, reply);
		if (reply && reply->type == REDIS_REPLY_ERROR)
			cluster_set_error(c, ERROR_WRITER, "events: %s (sent to the fallback instead)", reply->str);
		else if (reply)
			cluster_set_error(c, ERROR_WRITER, "events: a reply of an unexpected shape (type %d): sent to the fallback instead",
				  reply->type);
		c->cb.event_lost(c->cb.ctx, ev->line, ev->len);
	}
	free(ev);
}

int cluster_event(struct cluster *c, const char *line, size_t len)
{
	char maxlen[16];

	struct event_in_flight *ev;

	if (!c->writer.up || c->events_pending >= c->cfg->events_pending ||
	    (ev = malloc(sizeof(*ev) + len)) == NULL)
		return -1;
	ev->c = c;
	ev->len = len;
	memcpy(ev->line, line, len);
	len -= len && line[len - 1] == '\n';
	snprintf(maxlen, sizeof(maxlen), "%u", c->cfg->maxlen);
	int rc;
	if (c->cfg->events_stream) {
		const char *argv[] = { "XADD", c->cfg->events_key, "MAXLEN", "~", maxlen, "*", "event", line };
		size_t lens[] = { 4, strlen(argv[1]), 6, 1, strlen(maxlen), 1, 5, len };
		rc = redisAsyncCommandArgv(c->writer.ac, on_event_sent, ev, 8, argv, lens);
	} else {
		const char *argv[] = { "RPUSH", c->cfg->events_key, line };
		size_t lens[] = { 5, strlen(argv[1]), len };
		rc = redisAsyncCommandArgv(c->writer.ac, on_event_sent, ev, 3, argv, lens);
	}
	if (rc != REDIS_OK) { /* not queued: the caller writes it to the fallback */
		free(ev);
		return -1;
	}
	c->events_pending++;
	return 0;
}

static void snapshot_over(struct cluster *c, const char *error)
{
	c->snap.making = false;
	free(c->snap.seen);
	c->snap.seen = NULL;
	if (!c->closing)
		c->cb.snapshot_sent(c->cb.ctx, error);
}

static void on_snapshot_written(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply && !c->closing && reply->type == REDIS_REPLY_ERROR) {
		cluster_set_error(c, ERROR_WRITER, "snapshot: %s", reply->str);
		note_write_refused(c, reply);
	}
	snapshot_over(c, reply == NULL ? "the connection to Redis was lost" :
			 reply->type == REDIS_REPLY_ERROR ? reply->str : NULL);
}

int cluster_snapshot(struct cluster *c, char *err, size_t errlen)
{
	if (!c->writer.up) {
		error_set(err, errlen, "not connected to Redis (%s)", cluster_newest_error(c) ? cluster_newest_error(c) : "connecting");
		return -1;
	}
	if (c->snap.making)
		return 1;
	c->last_snapshot = time(NULL);
	/* The place and what was seen as they stand now: the entries are fixed now too (cb.dump). */
	snprintf(c->snap.id, sizeof(c->snap.id), "%s", c->cursor);
	if ((c->snap.seen = seen_text(c->seen, &c->snap.seen_len)) == NULL) {
		error_set(err, errlen, "out of memory");
		return -1;
	}
	c->snap.making = true;
	if (c->cb.dump(c->cb.ctx) < 0) {
		c->snap.making = false;
		free(c->snap.seen);
		c->snap.seen = NULL;
		error_set(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* The snapshot's HSET, signed: argv and lens of 12 (10 without a key), mac its room. */
static int snapshot_argv(const struct cluster *c, const char *data, size_t len, const char *argv[12], size_t lens[12],
			 char mac[SIGN_HEX + 1])
{
	const char *a[12] = { "HSET", c->snapshot_key, "id", c->snap.id, "data", data, "node", c->cfg->node, "seen",
			      c->snap.seen, "mac", mac };
	size_t l[12] = { 4, strlen(c->snapshot_key), 2, strlen(c->snap.id), 4, len, 4, strlen(c->cfg->node), 4,
			 c->snap.seen_len, 3, SIGN_HEX };

	mac[0] = '\0';
	if (c->key) {
		struct sign_field f[5] = { { c->cfg->stream, strlen(c->cfg->stream) }, { a[3], l[3] }, { a[7], l[7] },
					   { a[5], l[5] }, { a[9], l[9] } };
		sign_fields(c->key, "bloomd snapshot", f, 5, mac);
	}
	memcpy(argv, a, sizeof(a));
	memcpy(lens, l, sizeof(l));
	return c->key ? 12 : 10;
}

void cluster_snapshot_made(struct cluster *c, const char *data, size_t len, const char *error)
{
	const char *argv[12];
	size_t lens[12];
	char mac[SIGN_HEX + 1];

	if (error || !c->writer.up) {
		snapshot_over(c, error ? error : "not connected to Redis");
		return;
	}
	int argc = snapshot_argv(c, data, len, argv, lens, mac);
	if (redisAsyncCommandArgv(c->writer.ac, on_snapshot_written, c, argc, argv, lens) != REDIS_OK)
		snapshot_over(c, "not connected to Redis");
}

int cluster_snapshot_send(const struct cluster *c, const char *data, size_t len, char *err, size_t errlen)
{
	const struct timeval limit = { SNAPSHOT_SEND_SECONDS, 0 };
	const struct redis_where *w = &c->master;
	const char *argv[12];
	size_t lens[12];
	char mac[SIGN_HEX + 1];
	redisContext *rc = w->path[0] ? redisConnectUnixWithTimeout(w->path, limit)
				       : redisConnectWithTimeout(w->host, w->port, limit);
	redisReply *reply = NULL;
	bool failed = true;

	if (rc == NULL || rc->err) {
		error_set(err, errlen, "connecting to Redis: %s", rc ? rc->errstr : "out of memory");
		goto done;
	}
	char tls_why[TLS_WHY_MAX], why[TLS_WHY_MAX + 8];
	if (cluster_tls_start(c, rc, w->host, tls_why) < 0) {
		error_set(err, errlen, "connecting to Redis: %s", cluster_tls_why(tls_why, rc->errstr, why, sizeof(why)));
		goto done;
	}
	redisSetTimeout(rc, limit);
	const char *auth[3];
	int n = cluster_auth_argv(c, auth);
	if (n) {
		reply = redisCommandArgv(rc, n, auth, NULL);
		if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
			error_set(err, errlen, "AUTH: %s", reply ? reply->str : rc->errstr);
			goto done;
		}
		freeReplyObject(reply);
		reply = NULL;
	}
	int argc = snapshot_argv(c, data, len, argv, lens, mac);
	reply = redisCommandArgv(rc, argc, argv, lens);
	failed = reply == NULL || reply->type == REDIS_REPLY_ERROR;
	if (failed)
		error_set(err, errlen, "%s", reply ? reply->str : rc->errstr);
done:
	if (reply)
		freeReplyObject(reply);
	if (rc)
		redisFree(rc);
	return failed ? -1 : 0;
}

void cluster_snapshot_sent(struct cluster *c, const char *error)
{
	if (error && !c->closing)
		cluster_set_error(c, ERROR_WRITER, "snapshot: %s", error);
	snapshot_over(c, error);
}
