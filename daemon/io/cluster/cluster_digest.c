/* cluster_digest.c - divergence seen and healed: each node's digest of what it holds, and its lost changes sent again. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "error.h"

/*
 * Nodes that applied the stream to the same place hold the same entries.
 * Each node publishes, once a period ([cluster] digest_every), a digest of
 * each shared list at the place it has reached (HSET STREAM:digests NODE
 * "HORIZON CURSOR" and a line a list: its count and a keyed hash of its
 * entries and their ends), and half a period later reads the others': one
 * at the same place and horizon that differs is a divergence, said in the
 * status (divergent), a metric and one log line, until they agree again.
 *
 * What makes nodes diverge is a stream that lost changes it had taken
 * (a failover or a split brain with wait_replicas = 0): the node that made
 * them holds them still. So each node keeps its newest acknowledged
 * changes with the ID the stream gave them, and at each new connection of
 * its writer and at each divergence looks for them in the stream: one that
 * is gone (not trimmed: the stream still reaches back past it) and that
 * the node still holds as it made it is sent again, with its identity, so
 * nodes that had it pass it as a duplicate and the others take it.
 */

#define HEAL_CHUNK 500               /* looked for in one EVAL */

/* ---- lost changes, sent again ---- */

/* An outbox line, "@CHANGE OP EXPIRES ENTRY[\x1fDATA]", as an op (entry copied into entry). */
static bool line_op(const char *line, struct cluster_op *op, char *entry, size_t len)
{
	char kind[8];
	unsigned long long expires;
	int at = 0;

	if (sscanf(line, "@%*s %7s %llu %n", kind, &expires, &at) != 2 || at == 0 || cluster_op_kind(kind) < 0)
		return false;
	snprintf(entry, len, "%.*s", (int)strcspn(line + at, "\x1f"), line + at);
	*op = (struct cluster_op){ .kind = (enum cluster_op_kind)cluster_op_kind(kind), .entry = entry, .expires = expires };
	return true;
}

/* The ring's entry was found gone from the stream: sent again if this node still holds what it made. */
static bool send_again(struct cluster *c, struct acked_change *a)
{
	struct cluster_op op;
	char entry[512];
	char *line;

	if (a->line == NULL || !line_op(a->line, &op, entry, sizeof(entry)) || !c->cb.holds(c->cb.ctx, &op) ||
	    (line = strdup(a->line)) == NULL)
		return false;
	if (cluster_outbox_append(c, line) < 0) {
		free(line);
		return false;
	}
	c->heal.bytes -= strlen(a->line);
	free(a->line); /* kept again, with its new ID, once the stream takes it */
	a->line = NULL;
	return true;
}

static void look_next(struct cluster *c);

static void on_missing(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	struct cluster_heal *h = &c->heal;
	redisReply *reply = r;
	size_t chunk = h->chunk;

	(void)ac;
	h->asking = false;
	if (reply == NULL || c->closing)
		return; /* looked for again at the next connection */
	if (!cluster_reply_array(reply, 0, true)) {
		cluster_bad_reply(&c->writer, "EVAL (changes the stream lost)", reply);
		return;
	}
	size_t resent = 0;
	for (size_t i = 0; i < reply->elements; i++) {
		const redisReply *at = reply->element[i];
		if (at->type == REDIS_REPLY_INTEGER && at->integer >= 1 && (size_t)at->integer <= chunk)
			resent += send_again(c, cluster_heal_at(h, h->looked + (size_t)at->integer - 1));
	}
	h->resent += resent;
	if (resent)
		log_warning("cluster: %zu of this node's acknowledged changes are not in the stream any more (a failover or a "
			    "split brain lost them): sent again", resent);
	h->looked += chunk;
	look_next(c);
}

static void look_next(struct cluster *c)
{
	struct cluster_heal *h = &c->heal;
	const char *argv[3 + 2 * HEAL_CHUNK + 2];
	char changes[HEAL_CHUNK][48];
	int argc = 0;

	while (h->looked < h->n && cluster_heal_at(h, h->looked)->line == NULL)
		h->looked++;
	if (h->looked >= h->n || !c->writer.up) {
		h->looked = 0;
		return;
	}
	argv[argc++] = "EVAL";
	argv[argc++] = CLUSTER_MISSING_SCRIPT;
	argv[argc++] = "1";
	argv[argc++] = c->cfg->stream;
	for (size_t i = 0; i < HEAL_CHUNK && h->looked + i < h->n; i++) {
		const struct acked_change *a = cluster_heal_at(h, h->looked + i);
		changes[i][0] = '\0';
		if (a->line)
			sscanf(a->line, "@%47s", changes[i]);
		argv[argc++] = a->id;
		argv[argc++] = changes[i];
	}
	h->chunk = (size_t)(argc - 4) / 2;
	h->asking = cluster_sent(&c->writer, redisAsyncCommandArgv(c->writer.ac, on_missing, c, argc, argv, NULL),
				 "EVAL (the heal's look)");
}

void cluster_heal_tick(struct cluster *c)
{
	struct cluster_heal *h = &c->heal;

	if (!h->wanted || h->asking || !c->writer.up)
		return;
	h->wanted = false;
	h->looked = 0;
	look_next(c);
}

/* ---- digests ---- */

/* Each list's line made keyed ("NAME COUNT HASH"): with [cluster] key_file, its MAC; else XXH3-128 seeded by the stream. */
static void keyed_line(const struct cluster *c, const char *line, size_t len, FILE *out)
{
	char name[LIST_NAME_MAX];
	unsigned long long count;

	if (sscanf(line, "%63s %llu", name, &count) != 2)
		return;
	if (c->key) {
		char mac[SIGN_HEX + 1];
		struct sign_field f[2] = { { c->cfg->stream, strlen(c->cfg->stream) }, { line, len } };
		sign_fields(c->key, "bloomd digest", f, 2, mac);
		fprintf(out, "%s %llu %.32s\n", name, count, mac);
		return;
	}
	XXH128_hash_t h = XXH3_128bits_withSeed(line, len, XXH3_64bits(c->cfg->stream, strlen(c->cfg->stream)));
	fprintf(out, "%s %llu %016" PRIx64 "%016" PRIx64 "\n", name, count, h.high64, h.low64);
}

/* "HORIZON PLACE" and the lists' keyed lines, or NULL. */
static char *make_digest(struct cluster *c, uint64_t horizon, const char *place)
{
	char *lists = c->cb.digest(c->cb.ctx, horizon), *text = NULL;
	size_t len;
	FILE *f = lists ? open_memstream(&text, &len) : NULL;

	if (f) {
		fprintf(f, "%" PRIu64 " %s\n", horizon, place);
		for (const char *p = lists; *p;) {
			size_t n = strcspn(p, "\n");
			keyed_line(c, p, n, f);
			p += n + (p[n] == '\n');
		}
		if (fclose(f) != 0) {
			free(text);
			text = NULL;
		}
	}
	free(lists);
	return text;
}

/* The line of list name in a digest's text ("NAME COUNT HASH"), its length in *len; NULL if it has none. */
static const char *list_line(const char *text, const char *name, size_t *len)
{
	size_t n = strlen(name);

	for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
		*len = strcspn(p + 1, "\n");
		if (strncmp(p + 1, name, n) == 0 && p[1 + n] == ' ')
			return p + 1;
	}
	return NULL;
}

/* Whether a node's digest (other) differs from mine at the same place: why into why. -1: not at the same place. */
static int differs(const char *mine, const char *node, const char *other, char *why, size_t len)
{
	size_t head = strcspn(mine, "\n");

	if (strncmp(mine, other, head) != 0 || other[head] != '\n')
		return -1;
	for (const char *p = strchr(mine, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
		size_t n = strcspn(p + 1, "\n"), theirs_len;
		char name[LIST_NAME_MAX];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(p + 1, " \n"), p + 1);
		const char *theirs = list_line(other, name, &theirs_len);
		if (theirs && (theirs_len != n || memcmp(theirs, p + 1, n) != 0)) {
			unsigned long long here = 0, there = 0;
			sscanf(p + 1, "%*s %llu", &here);
			sscanf(theirs, "%*s %llu", &there);
			snprintf(why, len, "list %s differs from node %s's at stream ID %.*s (%llu entries here, %llu there)",
				 name, node, (int)strcspn(strchr(mine, ' ') + 1, "\n"), strchr(mine, ' ') + 1, here, there);
			return 1;
		}
	}
	return 0;
}

static void found_divergent(struct cluster *c, char *why)
{
	struct cluster_digest *d = &c->digest;

	error_printable(why); /* a node's name is Redis's text: no forged log line, always valid JSON */
	if (!d->divergent) {
		d->found++;
		d->divergent_since = time(NULL);
		log_warning("cluster: divergent: %s: looking for changes of this node's the stream lost", why);
		c->heal.wanted = true;
	}
	d->divergent = true;
	snprintf(d->divergence, sizeof(d->divergence), "%s", why);
}

static void on_digests(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	struct cluster_digest *d = &c->digest;
	redisReply *reply = r;
	int agreed = 0;

	(void)ac;
	d->asking = false;
	if (reply == NULL || c->closing)
		return;
	d->compared = true;
	if (!cluster_reply_array(reply, 0, true) || reply->elements % 2 || d->mine == NULL) {
		if (d->mine)
			cluster_bad_reply(&c->writer, "HGETALL (the digests)", reply);
		return;
	}
	for (size_t i = 0; i + 1 < reply->elements; i += 2) {
		const char *node = cluster_reply_text(reply->element[i]), *text = cluster_reply_text(reply->element[i + 1]);
		char why[300];
		if (node == NULL || text == NULL || strcmp(node, c->cfg->node) == 0)
			continue;
		int rc = differs(d->mine, node, text, why, sizeof(why));
		if (rc == 1) { /* said once two periods in a row find it: a node just past a desync is not divergent */
			if (++d->differing >= 2)
				found_divergent(c, why);
			return;
		}
		agreed += rc == 0;
	}
	if (agreed) {
		d->differing = 0;
		if (d->divergent)
			log_info("cluster: no longer divergent: this node's lists agree with %d other node%s", agreed, agreed > 1 ? "s" : "");
		d->divergent = false;
		d->divergence[0] = '\0';
		d->compared_at = time(NULL);
	}
}

static void on_digest_written(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply == NULL || c->closing || reply->type != REDIS_REPLY_ERROR)
		return;
	cluster_set_error(c, ERROR_WRITER, "the digest (HSET): %s", reply->str);
	if (strncmp(reply->str, "READONLY", 8) == 0) { /* the master became a replica (a failover): find the new one */
		c->master_known = c->cfg->sentinels == NULL;
		cluster_drop(&c->writer);
	}
}

/*
 * Up to date, nothing being applied, and no change of this node's ahead of
 * its cursor (a local change is in force before the stream has it): the
 * place this node's entries stand at is the cursor.
 */
static bool settled(const struct cluster *c)
{
	return c->state == READER_READING && !c->resyncing && !c->rebuilding && c->lag_entries == 0 && !c->lag_asked &&
	       !c->applying.on && !c->blocked_at[0] && c->out.head == c->out.n && cluster_id_cmp(c->cursor, c->own_last) >= 0;
}

/*
 * The place a digest is made at: the newest entry in the stream at or
 * before the cursor, which nodes that applied the same entries share even
 * when one's cursor is on an entry since deleted (XDEL leaves the cursor
 * where it was). Its ID alone comes back, not the entry.
 */
static const char PLACE_SCRIPT[] =
	"local e = redis.call('XREVRANGE', KEYS[1], ARGV[1], '-', 'COUNT', 1)\n"
	"if #e == 0 then return '0-0' end\n"
	"return e[1][1]\n";

static void on_place(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	struct cluster_digest *d = &c->digest;
	redisReply *reply = r;
	unsigned every = c->cfg->digest_every;
	uint64_t window = (uint64_t)time(NULL) / every;

	(void)ac;
	d->placing = false;
	if (reply == NULL || c->closing)
		return;
	if (reply->type == REDIS_REPLY_ERROR) { /* NOPERM, say: no digest, the connection kept */
		cluster_set_error(c, ERROR_WRITER, "EVAL (the digest's place): %s", reply->str);
		return;
	}
	const char *place = cluster_reply_text(reply);
	if (place == NULL || !cluster_id_valid(place)) {
		cluster_bad_reply(&c->writer, "EVAL (the digest's place)", reply);
		return;
	}
	/* Moved meanwhile (the lag, asked after this, is not back yet: settled() would wait on it): again next tick. */
	if (strcmp(d->placed_at, c->cursor) != 0 || c->out.head != c->out.n || c->applying.on || c->state != READER_READING)
		return;
	char *mine = make_digest(c, (window + 1) * every, place);
	if (mine == NULL)
		return;
	free(d->mine);
	d->mine = mine;
	d->window = window;
	d->compared = d->asking = false;
	const char *argv[] = { "HSET", c->digests_key, c->cfg->node, mine };
	(void)cluster_sent(&c->writer, redisAsyncCommandArgv(c->writer.ac, on_digest_written, c, 4, argv, NULL),
			   "HSET (the digest)");
}

void cluster_digest_tick(struct cluster *c)
{
	struct cluster_digest *d = &c->digest;
	unsigned every = c->cfg->digest_every;
	time_t now = time(NULL);

	if (every == 0 || !c->writer.up)
		return;
	uint64_t window = (uint64_t)now / every;
	if (window != d->window && !d->placing && settled(c)) {
		snprintf(d->placed_at, sizeof(d->placed_at), "%s", c->cursor);
		const char *argv[] = { "EVAL", PLACE_SCRIPT, "1", c->cfg->stream, d->placed_at };
		d->placing = cluster_sent(&c->writer, redisAsyncCommandArgv(c->writer.ac, on_place, c, 5, argv, NULL),
					  "EVAL (the digest's place)");
		return;
	}
	/* Half a period on, when the others have written theirs for this one. */
	if (window == d->window && d->mine && !d->compared && !d->asking && (uint64_t)now % every >= every / 2) {
		const char *argv[] = { "HGETALL", c->digests_key };
		d->asking = cluster_sent(&c->writer, redisAsyncCommandArgv(c->writer.ac, on_digests, c, 2, argv, NULL),
					 "HGETALL (the digests)");
	}
}

void cluster_digest_close(struct cluster *c)
{
	free(c->digest.mine);
	c->digest.mine = NULL;
	for (size_t i = 0; c->heal.ring && i < c->heal.n; i++)
		free(cluster_heal_at(&c->heal, i)->line);
	free(c->heal.ring);
	c->heal.ring = NULL;
	free(c->out.ids);
	c->out.ids = NULL;
}

json_t *cluster_digest_status(const struct cluster *c)
{
	const struct cluster_digest *d = &c->digest;

	return json_pack("{s:b,s:s*,s:I,s:I,s:I,s:I}", "divergent", d->divergent, "divergence",
			 d->divergent ? d->divergence : NULL, "divergences", (json_int_t)d->found, "divergent_since",
			 (json_int_t)(d->divergent ? d->divergent_since : 0), "resent", (json_int_t)c->heal.resent,
			 "acknowledged_kept", (json_int_t)c->heal.n);
}
