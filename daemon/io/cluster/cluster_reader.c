/* cluster_reader.c - following the stream: entries checked and applied in order, snapshots, desyncs. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The replies that go on reading: each sends the command the next answers. */
static void cluster_on_check(redisAsyncContext *ac, void *r, void *priv);
static void cluster_on_snapshot(redisAsyncContext *ac, void *r, void *priv);

static bool acceptable(struct cluster *c, const redisReply *e)
{
	const redisReply *fields = e->element[1];
	size_t bytes = 0;

	for (size_t i = 0; i < fields->elements; i++)
		bytes += cluster_reply_text(fields->element[i]) ? fields->element[i]->len : 0;
	if (bytes > c->cfg->max_entry_bytes) {
		c->oversized++;
		c->apply_errors++;
		log_warning("cluster: the entry at %s has %zu bytes, more than [cluster] max_entry_bytes (%llu): refused",
			    e->element[0]->str, bytes, (unsigned long long)c->cfg->max_entry_bytes);
		return false;
	}
	if (c->key == NULL)
		return true;
	struct sign_field f[7];
	cluster_change_fields(c, fields, f);
	const redisReply *mac = cluster_field(fields, "mac");
	if (sign_check(c->key, "bloomd change", f, 7, cluster_reply_text(mac), cluster_reply_text(mac) ? mac->len : 0))
		return true;
	c->unauthenticated++;
	log_limited(&c->unauthenticated_logged, 60, LOG_LEVEL_WARNING,
		    "cluster: the entry at %s is %s [cluster] key_file's key: not applied", e->element[0]->str,
		    mac ? "not signed with" : "not signed, and this node needs");
	return false;
}

/* The entry at id is done with (applied, refused or passed): the cursor moves past it, unless LATER. */
static enum cluster_apply entry_done(struct cluster *c, const char *id, const struct change_id *change)
{
	if (change && seen_record(c->seen, change) < 0) {
		cluster_set_error(c, ERROR_READER, "out of memory for the changes applied; tried again");
		return CLUSTER_APPLY_LATER;
	}
	if (c->blocked_at[0]) {
		log_info("cluster: the entry at %s is applied: going on", c->blocked_at);
		c->blocked_at[0] = '\0';
		c->retry_seconds = 0;
		cluster_clear_error(c, ERROR_READER);
	}
	snprintf(c->cursor, sizeof(c->cursor), "%s", id);
	c->cursor_dirty = true;
	return CLUSTER_APPLIED;
}

/*
 * What came of applying the entry at id (rc: cb.apply's; what: "OP ENTRY
 * from NODE"): CLUSTER_APPLY_LATER when it could not be applied now (the
 * state cannot be written, no memory): the cursor stays before it, to be
 * tried again. An entry refused for what it says is counted and passed.
 */
static enum cluster_apply entry_applied(struct cluster *c, const char *id, const struct change_id *change,
					enum cluster_apply rc, const char *err, const char *what)
{
	if (rc == CLUSTER_APPLY_LATER) {
		c->apply_errors++;
		snprintf(c->blocked_at, sizeof(c->blocked_at), "%s", id);
		cluster_set_error(c, ERROR_READER, "%s (%s) cannot be applied now: %s; tried again, the cursor stays before it",
			  what, id, err);
		return CLUSTER_APPLY_LATER;
	}
	if (rc == CLUSTER_APPLY_REFUSED) {
		c->apply_errors++;
		log_warning("cluster: %s (%s): %s", what, id, err);
	} else {
		c->applied++;
	}
	return entry_done(c, id, change);
}

static void note_delay(struct cluster *c, const char *id)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000, at = cluster_parse_id(id).ms;
	c->delay_ms[c->ndelays++ % DELAYS] = ms > at ? (uint32_t)(ms - at) : 0;
	stats_observe(&c->delay_seconds, ms > at ? (double)(ms - at) / 1000 : 0);
}

/* Apply one entry and move the cursor past it: APPLIED (whatever came of it), LATER or STARTED. */
static enum cluster_apply apply_entry(struct cluster *c, const redisReply *e)
{
	char err[256], what[sizeof(c->applying.what)];
	const char *id = e->element[0]->str;

	const redisReply *op = cluster_field(e->element[1], "op"), *entry = cluster_field(e->element[1], "entry"),
			 *node = cluster_field(e->element[1], "node"), *expires = cluster_field(e->element[1], "expires");
	const redisReply *data = cluster_field(e->element[1], "data");
	struct change_id change = { .seq = 0 };
	if (!acceptable(c, e))
		return entry_done(c, id, NULL);
	bool identified = cluster_change_of(e, &change);
	if (identified && seen_already(c->seen, &change)) { /* a re-send: its first copy counted */
		c->duplicates++;
		return entry_done(c, id, NULL);
	}
	int kind = op && op->type == REDIS_REPLY_STRING ? cluster_op_kind(op->str) : -1;
	if (kind < 0 || !entry || entry->type != REDIS_REPLY_STRING) {
		c->apply_errors++;
		return entry_done(c, id, identified ? &change : NULL);
	}
	struct cluster_op o = {
		.kind = (enum cluster_op_kind)kind, .entry = entry->str,
		.expires = expires && expires->type == REDIS_REPLY_STRING ? strtoull(expires->str, NULL, 10) : 0,
		.data = data && data->type == REDIS_REPLY_STRING ? data->str : "",
		.data_len = data && data->type == REDIS_REPLY_STRING ? data->len : 0,
		.node = node && node->type == REDIS_REPLY_STRING ? node->str : "?",
	};
	if (strcmp(o.node, c->cfg->node) != 0)
		note_delay(c, id);
	snprintf(what, sizeof(what), "%s %.64s from %.64s", op->str, entry->str, o.node);
	enum cluster_apply rc = c->cb.apply(c->cb.ctx, &o, err, sizeof(err));
	if (rc == CLUSTER_APPLY_STARTED) {
		c->applying = (struct cluster_applying){ .on = true, .change = change, .identified = identified };
		snprintf(c->applying.id, sizeof(c->applying.id), "%s", id);
		snprintf(c->applying.what, sizeof(c->applying.what), "%s", what);
		return CLUSTER_APPLY_STARTED;
	}
	return entry_applied(c, id, identified ? &change : NULL, rc, err, what);
}

/* An entry could not be applied now: the reader waits, longer each time, and reads again from it. */
static void retry_later(struct cluster *c)
{
	c->state = READER_STALE;
	c->stale_since = time(NULL);
	c->retry_seconds = c->retry_seconds ? (c->retry_seconds * 2 > RETRY_MAX_SECONDS ? RETRY_MAX_SECONDS
										: c->retry_seconds * 2)
					    : STALE_RETRY_SECONDS;
}

void cluster_applied(struct cluster *c, enum cluster_apply rc, const char *err)
{
	if (!c->applying.on || c->applying.snapshot)
		return;
	c->applying.on = false;
	if (entry_applied(c, c->applying.id, c->applying.identified ? &c->applying.change : NULL, rc, err,
			  c->applying.what) == CLUSTER_APPLY_LATER)
		retry_later(c);
	else
		cluster_reader_read(c); /* what the batch held after it is read again */
}

/* XREAD's entries of our one stream: [[stream, [entry, ...]]], every entry shaped; NULL if not so. */
static const redisReply *xread_entries(const redisReply *r)
{
	if (!cluster_reply_array(r, 1, false) || !cluster_reply_array(r->element[0], 2, false) || !cluster_reply_text(r->element[0]->element[0]) ||
	    !cluster_reply_array(r->element[0]->element[1], 0, true))
		return NULL;
	const redisReply *entries = r->element[0]->element[1];
	for (size_t i = 0; i < entries->elements; i++)
		if (!cluster_entry_shaped(entries->element[i]))
			return NULL;
	return entries;
}

/*
 * Apply entries in order: APPLIED when all are done with, or STARTED or
 * LATER (from the one that stopped there; reading waits or pauses).
 */
static enum cluster_apply apply_entries(struct cluster *c, const redisReply *entries)
{
	for (size_t i = 0; entries && i < entries->elements; i++) {
		enum cluster_apply rc = apply_entry(c, entries->element[i]);
		if (rc == CLUSTER_APPLY_LATER)
			retry_later(c);
		if (rc != CLUSTER_APPLIED)
			return rc;
	}
	return CLUSTER_APPLIED;
}

/*
 * The check before a read found the stream trimmed past us (or this node
 * new): what the read gave skips entries, so it is dropped and the snapshot
 * is asked for first. Whether it was.
 */
static bool snapshot_first(struct cluster *c)
{
	if (!c->gap)
		return false;
	const char *argv[] = { "HGETALL", c->snapshot_key };
	(void)cluster_sent(&c->reader, redisAsyncCommandArgv(c->reader.ac, cluster_on_snapshot, c, 2, argv, NULL),
			   "HGETALL (the snapshot)");
	return true;
}

static bool send_check(struct cluster *c);

static void on_read(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply == NULL || c->closing)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		cluster_set_error(c, ERROR_READER, "XREAD: %s", reply->str);
		c->state = READER_STALE;
		c->stale_since = time(NULL);
		return;
	}
	const redisReply *entries = xread_entries(reply);
	if (reply->type != REDIS_REPLY_NIL && entries == NULL) {
		cluster_bad_reply(&c->reader, "XREAD", reply);
		return;
	}
	if (snapshot_first(c))
		return;
	if (apply_entries(c, entries) != CLUSTER_APPLIED)
		return;
	if (c->resyncing && (entries == NULL || entries->elements < READ_COUNT)) {
		c->resyncing = c->rebuilding = false;
		cluster_clear_error(c, ERROR_READER);
		log_info("cluster: in step with the stream again (at %s)", c->cursor);
	}
	cluster_reader_read(c);
}

/* ---- entries one at a time, their size asked first ---- */

/*
 * The size of the entry after the cursor, asked of Redis so that its bytes
 * stay there: [ID, bytes of its fields], or an empty array at the end.
 */
static const char PEEK_SCRIPT[] =
	"local e = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', 1)\n"
	"if #e == 0 then return {} end\n"
	"local n = 0\n"
	"for _, v in ipairs(e[1][2]) do n = n + #v end\n"
	"return {e[1][1], n}\n";

static void peek(struct cluster *c);

static void on_one(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply == NULL || c->closing)
		return;
	bool shaped = cluster_reply_array(reply, 0, true);
	for (size_t i = 0; shaped && i < reply->elements; i++)
		shaped = cluster_entry_shaped(reply->element[i]);
	if (!shaped) {
		cluster_bad_reply(&c->reader, "XRANGE", reply);
		return;
	}
	if (apply_entries(c, reply) == CLUSTER_APPLIED)
		peek(c);
}

static void on_peek(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;
	char from[ID_MAX + 1];

	(void)ac;
	if (reply == NULL || c->closing || snapshot_first(c))
		return;
	if (cluster_reply_array(reply, 0, false)) { /* caught up: XREAD, as usual, from here */
		c->careful = false;
		log_info("cluster: past the large entries: reading in batches again (at %s)", c->cursor);
		cluster_reader_read(c);
		return;
	}
	if (!cluster_reply_array(reply, 2, false) || !cluster_reply_text(reply->element[0]) ||
	    !cluster_id_valid(reply->element[0]->str) || reply->element[1]->type != REDIS_REPLY_INTEGER) {
		if (reply->type == REDIS_REPLY_ERROR)
			cluster_set_error(c, ERROR_READER, "EVAL (the size of the next entry): %s", reply->str);
		cluster_bad_reply(&c->reader, "EVAL", reply);
		return;
	}
	const char *id = reply->element[0]->str;
	if ((unsigned long long)reply->element[1]->integer > c->cfg->max_entry_bytes) {
		c->oversized++;
		c->apply_errors++;
		log_warning("cluster: the entry at %s has %lld bytes, more than [cluster] max_entry_bytes (%llu): refused unread",
			    id, reply->element[1]->integer, (unsigned long long)c->cfg->max_entry_bytes);
		if (entry_done(c, id, NULL) == 0)
			peek(c);
		return;
	}
	snprintf(from, sizeof(from), "(%s", c->cursor);
	const char *argv[] = { "XRANGE", c->cfg->stream, from, "+", "COUNT", "1" };
	(void)cluster_sent(&c->reader, redisAsyncCommandArgv(c->reader.ac, on_one, c, 6, argv, NULL), "XRANGE");
}

static void peek(struct cluster *c)
{
	char from[ID_MAX + 1];

	if (!c->reader.up || c->applying.on)
		return;
	snprintf(from, sizeof(from), "(%s", c->cursor);
	const char *argv[] = { "EVAL", PEEK_SCRIPT, "1", c->cfg->stream, from };
	/* One at a time too, the stream may have been trimmed past us. */
	if (send_check(c) &&
	    cluster_sent(&c->reader, redisAsyncCommandArgv(c->reader.ac, on_peek, c, 5, argv, NULL), "EVAL (the next entry's size)"))
		c->state = READER_READING;
}

void cluster_reader_too_much(struct cluster *c)
{
	log_warning("cluster: a read from the stream passed %llu bytes unfinished: an entry over [cluster] max_entry_bytes? The connection is dropped, and entries are read one at a time, their size asked first",
		    (unsigned long long)cluster_read_bound(c));
	c->careful = true;
	redisAsyncFree(c->reader.ac); /* the rest of the reply is not read */
}

unsigned long long cluster_read_bound(const struct cluster *c)
{
	return 2ull * c->cfg->max_entry_bytes + (1u << 20);
}

/*
 * XINFO STREAM as Redis gives it, less the fields of its first and last
 * entries (their IDs stay): an entry over max_entry_bytes at either end
 * would otherwise come over with every check.
 */
static const char INFO_SCRIPT[] =
	"local i = redis.call('XINFO', 'STREAM', KEYS[1])\n"
	"for k = 1, #i - 1, 2 do\n"
	"  if (i[k] == 'first-entry' or i[k] == 'last-entry') and type(i[k + 1]) == 'table' then\n"
	"    i[k + 1] = {i[k + 1][1], {}}\n"
	"  end\n"
	"end\n"
	"return i\n";

/* The check that goes right before each read (cluster_on_check). */
static bool send_check(struct cluster *c)
{
	const char *info[] = { "EVAL", INFO_SCRIPT, "1", c->cfg->stream };

	return cluster_sent(&c->reader, redisAsyncCommandArgv(c->reader.ac, cluster_on_check, c, 4, info, NULL),
			    "EVAL (the stream's check)");
}

/*
 * XINFO STREAM (less the entries' fields) and XREAD, sent together so that
 * Redis runs them back to back: the first says whether the stream was
 * trimmed past our cursor, in which case what the second returns has
 * skipped entries and is dropped. Entries read one at a time (careful) are
 * checked the same way.
 */
void cluster_reader_read(struct cluster *c)
{
	const char *argv[] = { "XREAD", "COUNT", TEXT(READ_COUNT), "BLOCK", READ_BLOCK_MS, "STREAMS", c->cfg->stream, c->cursor };

	if (c->careful) {
		peek(c);
		return;
	}
	if (!c->reader.up || c->applying.on)
		return;
	if (send_check(c) && cluster_sent(&c->reader, redisAsyncCommandArgv(c->reader.ac, on_read, c, 8, argv, NULL), "XREAD"))
		c->state = READER_READING;
}

/* The changes a snapshot covers, by identity: a re-send after it is passed here as on the node that made it. */
static void take_seen(struct cluster *c, const char *lines)
{
	if (lines == NULL) /* a snapshot from bloomd 0.7 */
		return;
	seen_clear(c->seen);
	seen_take_text(c->seen, lines);
}

/*
 * Whether a snapshot holds every change this node applied (its seen lines
 * cover the node's): one that lacks any is older than the node's state (an
 * old signed snapshot put back, a stream made anew around it) and taking it
 * would undo changes. 1 fresh, 0 not (lacking says which), -1 no memory.
 */
static int snapshot_fresh(const struct cluster *c, const char *lines, struct change_id *lacking)
{
	struct cluster_seen *theirs = seen_new();

	if (theirs == NULL || (lines && seen_take_text(theirs, lines) < 0)) {
		seen_free(theirs);
		return -1;
	}
	bool fresh = seen_covers(theirs, c->seen, lacking);
	seen_free(theirs);
	return fresh;
}

static bool snapshot_signed(const struct cluster *c, const redisReply *hash)
{
	struct sign_field f[5] = { { c->cfg->stream, strlen(c->cfg->stream) }, cluster_text_field(cluster_field(hash, "id")),
				   cluster_text_field(cluster_field(hash, "node")), cluster_text_field(cluster_field(hash, "data")),
				   cluster_text_field(cluster_field(hash, "seen")) };
	const char *mac = cluster_reply_text(cluster_field(hash, "mac"));

	return sign_check(c->key, "bloomd snapshot", f, 5, mac, mac ? cluster_field(hash, "mac")->len : 0);
}

/* A new node found no snapshot to start from: it reads the stream from its start. */
static void join_done(struct cluster *c)
{
	c->joining = false;
	c->join_checked = true;
	c->gap = false;
	cluster_clear_error(c, ERROR_READER);
	cluster_reader_read(c);
}

/*
 * Why the snapshot in reply cannot be taken: 1 with why said (what it
 * refuses for the key or as a rollback is counted), 0 if it can be, -1
 * without memory.
 */
static int snapshot_refused(struct cluster *c, const redisReply *reply, char *why, size_t len)
{
	const redisReply *id = cluster_field(reply, "id"), *data = cluster_field(reply, "data");
	const char *trimmed = c->trimmed_to;
	struct change_id lacking;

	if (id && cluster_reply_text(id) && cluster_id_valid(id->str) && c->last_generated[0] && cluster_id_cmp(id->str, c->last_generated) > 0) {
		snprintf(why, len, "desync: the snapshot's ID %s is past the stream's last entry %s: not taken (run `bloomctl cluster snapshot` on a node that is up to date)",
			 id->str, c->last_generated);
		return 1;
	}
	if (id == NULL || data == NULL || id->type != REDIS_REPLY_STRING || data->type != REDIS_REPLY_STRING ||
	    !cluster_id_valid(id->str) || cluster_id_cmp(id->str, trimmed) < 0) {
		snprintf(why, len, "the stream was trimmed past this node (at %s; it starts at %s) and no snapshot reaches there: run `bloomctl cluster snapshot` on a node that is up to date",
			 c->cursor, trimmed);
		return 1;
	}
	if (c->key && !snapshot_signed(c, reply)) {
		snprintf(why, len, "the snapshot at %s is not signed with [cluster] key_file's key: not taken", id->str);
		c->unauthenticated++;
		return 1;
	}
	int fresh = snapshot_fresh(c, cluster_reply_text(cluster_field(reply, "seen")), &lacking);
	if (fresh < 0)
		return -1;
	if (fresh == 0) {
		c->rollbacks += strcmp(c->rollback_at, id->str) != 0;
		snprintf(c->rollback_at, sizeof(c->rollback_at), "%s", id->str);
		snprintf(why, len, "desync: the snapshot at %s lacks changes this node applied (%s's, up to %llu of its start %016llx): older than what it holds, not taken (a rollback?); run `bloomctl cluster snapshot` on a node that is up to date",
			 id->str, lacking.node, (unsigned long long)lacking.seq, (unsigned long long)lacking.incarnation);
		return 1;
	}
	return 0;
}

/* The reader waits (stale), and looks again after a pause. */
static void reader_waits(struct cluster *c, const char *why)
{
	cluster_set_error(c, ERROR_READER, "%s", why);
	c->state = READER_STALE;
	c->stale_since = time(NULL);
}

/* The snapshot at id is the entries now: the stream is read on from it. */
static void snapshot_taken(struct cluster *c, const char *id, const char *seen)
{
	take_seen(c, seen);
	if (c->joining)
		log_info("cluster: a new node: started from the snapshot at %s, then the stream after it", id);
	else
		log_info("cluster: the stream was trimmed past this node: started again from the snapshot at %s", id);
	c->joining = false;
	c->join_checked = true;
	snprintf(c->cursor, sizeof(c->cursor), "%s", id);
	c->cursor_dirty = true;
	c->restored++;
	cluster_clear_error(c, ERROR_READER);
	cluster_reader_read(c);
}

static void cluster_on_snapshot(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;
	char err[256], why[400];

	(void)ac;
	if (reply == NULL || c->closing)
		return;
	const redisReply *id = cluster_field(reply, "id"), *data = cluster_field(reply, "data");
	if (c->joining && (id == NULL || data == NULL)) { /* none: the stream from its start is all there is */
		join_done(c);
		return;
	}
	int refused = snapshot_refused(c, reply, why, sizeof(why));
	if (refused > 0 && c->joining) {
		log_warning("cluster: a new node: %s; it reads the stream from its start instead", why);
		join_done(c);
		return;
	}
	if (refused) {
		reader_waits(c, refused > 0 ? why : "out of memory for the snapshot's changes; tried again");
		return;
	}
	/* The reply goes when this returns: what a restore in slices needs after it is copied. */
	const char *seen = cluster_reply_text(cluster_field(reply, "seen"));
	char *seen_kept = seen ? strdup(seen) : NULL;
	if (seen && seen_kept == NULL) {
		reader_waits(c, "out of memory for the snapshot's changes; tried again");
		return;
	}
	enum cluster_apply rc = c->cb.restore(c->cb.ctx, data->str, data->len, err, sizeof(err));
	if (rc == CLUSTER_APPLY_STARTED) {
		c->applying = (struct cluster_applying){ .on = true, .snapshot = true, .seen = seen_kept };
		snprintf(c->applying.id, sizeof(c->applying.id), "%s", id->str);
		snprintf(c->applying.what, sizeof(c->applying.what), "the snapshot at %s", id->str);
		return;
	}
	free(seen_kept);
	if (rc == CLUSTER_APPLIED)
		snapshot_taken(c, id->str, seen);
	else
		cluster_restored(c, rc, err);
}

void cluster_restored(struct cluster *c, enum cluster_apply rc, const char *err)
{
	char why[400];

	if (c->applying.on && c->applying.snapshot) {
		c->applying.on = false;
		if (rc == CLUSTER_APPLIED)
			snapshot_taken(c, c->applying.id, c->applying.seen);
		free(c->applying.seen);
		c->applying.seen = NULL;
	}
	if (rc != CLUSTER_APPLIED) {
		snprintf(why, sizeof(why), "restoring the snapshot: %s", err);
		reader_waits(c, why);
	}
}

static uint64_t integer_field(const redisReply *r, const char *name)
{
	const redisReply *v = cluster_field(r, name);

	return v && v->type == REDIS_REPLY_INTEGER ? (uint64_t)v->integer : 0;
}

/* The stream is followed again from its start; what was applied, by identity, is passed. */
static void follow_from_start(struct cluster *c)
{
	c->desyncs++;
	c->resyncing = true;
	c->gap = false;
	snprintf(c->cursor, sizeof(c->cursor), "0-0");
	c->cursor_dirty = true;
	c->own_last[0] = '\0'; /* this node's changes in the old stream are not ahead of the new one's place */
	c->digest.divergent = false; /* a place of the old stream: the new one's is compared afresh */
	c->digest.differing = 0;
}

/*
 * The cursor is past the stream's last entry: the stream was deleted and made
 * anew, went back (a Redis restored from an older dump), or an entry with a
 * forged ID moved the cursor. Whatever the stream holds now was never
 * applied here: follow it again from its start (from its snapshot if it was
 * trimmed), said as desync until caught up, never as following.
 */
static void cluster_desync(struct cluster *c, const char *last_id)
{
	cluster_set_error(c, ERROR_READER, "desync: this node's cursor %s is past the stream's last entry %s (the stream was made anew or went back, or an ID was forged): following it again from its start",
		  c->cursor, last_id);
	follow_from_start(c);
}

/*
 * The stream this node followed is gone, or was made anew: Redis lost its
 * data (restarted without persistence, or failed over to a replica that
 * had not had it). What the nodes hold is then the only copy of the
 * entries: each publishes it as the snapshot, so a node that joins later
 * starts from it, and follows the stream again from its start (what it has
 * applied, by identity, it passes).
 */
static void stream_lost(struct cluster *c, const char *how)
{
	follow_from_start(c);
	c->rebuilding = true;
	c->republish = true; /* by cluster_tick, once the writer is up */
	cluster_set_error(c, ERROR_READER, "rebuilding: the stream %s (Redis lost its data?): this node's entries are published as the snapshot, and it follows the stream again from its start",
			  how);
}

/*
 * XINFO STREAM: has the stream been trimmed past our cursor? It has when
 * entries were ever taken out of it (entries-added above its length) and the
 * cursor is before its first entry (or at 0-0: a new node), and not at its
 * end. (A cursor just before the first entry looks the same: it costs a
 * restore from the snapshot, never an entry.) Then the snapshot must reach
 * the first entry still there.
 */
static void cluster_on_check(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply == NULL || c->closing)
		return;
	const redisReply *first = cluster_field(reply, "first-entry"), *last = cluster_field(reply, "last-generated-id");
	uint64_t added = integer_field(reply, "entries-added"), length = integer_field(reply, "length");
	const char *first_id = first && first->type == REDIS_REPLY_ARRAY && first->elements == 2 &&
			       first->element[0]->type == REDIS_REPLY_STRING ? first->element[0]->str : NULL;
	if (cluster_reply_text(last) && cluster_id_valid(last->str)) {
		snprintf(c->last_generated, sizeof(c->last_generated), "%s", last->str);
		if (cluster_id_cmp(c->cursor, last->str) > 0) {
			cluster_desync(c, last->str);
			return;
		}
	}
	bool fresh = strcmp(c->cursor, "0-0") == 0;
	bool missing = reply->type == REDIS_REPLY_ERROR && reply->str && strstr(reply->str, "no such key");
	/* Never trimmed, yet it starts after an entry this node applied: not the stream it followed. */
	bool made_anew = first_id && cluster_field(reply, "entries-added") && added <= length &&
			 cluster_id_cmp(first_id, c->cursor) > 0;
	if (!fresh && (missing || made_anew)) {
		stream_lost(c, missing ? "is gone" : "was made anew (it starts after this node's place, and was never trimmed)");
		return;
	}
	c->gap = !(reply->type == REDIS_REPLY_ERROR || last == NULL || last->type != REDIS_REPLY_STRING ||
		   cluster_id_cmp(c->cursor, last->str) >= 0 || added <= length ||
		   (!fresh && first_id && cluster_id_cmp(c->cursor, first_id) >= 0));
	if (c->gap) {
		snprintf(c->trimmed_to, sizeof(c->trimmed_to), "%s", first_id ? first_id : last->str);
	} else if (fresh && !c->join_checked && seen_empty(c->seen)) {
		c->joining = c->gap = true; /* the snapshot first: after a Redis that lost its data, the stream is not all */
		snprintf(c->trimmed_to, sizeof(c->trimmed_to), "0-0");
	} else if (c->state != READER_STALE && !c->resyncing) {
		cluster_clear_error(c, ERROR_READER); /* the writer's problems are the writer's to clear */
	}
}
