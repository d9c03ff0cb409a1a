/* service_cluster.c - the daemon in a cluster: its changes to the stream, the stream's to it, events to Redis. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"

/* ---- what the stream asks of the daemon ---- */


static enum cluster_apply apply_op(void *ctx, const struct cluster_op *op, char *err, size_t errlen)
{
	struct entry e;
	struct service *s = ctx;
	uint32_t still_held;

	if (op->kind == CLUSTER_REPLACE)
		return service_list_from_cluster(s, op->entry, op->data, op->data_len, err, errlen);
	if (op->kind == CLUSTER_FLUSH)
		return service_list_from_cluster(s, op->entry, NULL, 0, err, errlen);
	if (entry_parse(op->entry, &e, err, errlen) != 1) {
		error_set(err, errlen, "not an entry");
		return CLUSTER_APPLY_REFUSED;
	}
	if (op->kind == CLUSTER_ADD && service_entry_too_broad(s, &e, err, errlen))
		return CLUSTER_APPLY_REFUSED;
	int rc = op->kind == CLUSTER_ADD ? service_add(s, &e, op->expires, SERVICE_FROM_STREAM, err, errlen)
					 : service_del(s, &e, SERVICE_FROM_STREAM, &still_held, err, errlen);
	return service_stream_outcome(s, rc);
}

struct dumping {
	const struct service *s;
	char *text;
	size_t len;
	FILE *f;
};

static int dump_entry(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	char text[ENTRY_TEXT_MAX];
	struct dumping *d = ctx;

	(void)group;
	if (!(holders & MATCHER_HOLDER_DEFAULT))
		return 0;
	fprintf(d->f, "%s %s", entry_kind_name(e->kind), entry_format_value(e->kind, e->key, e->len, text, sizeof(text)));
	uint64_t expires = service_expiry(d->s, e);
	if (expires)
		fprintf(d->f, " expires=%llu", (unsigned long long)expires);
	return fputc('\n', d->f) == EOF ? -1 : 0;
}

/* The local list as entry lines, for a snapshot (the caller frees), or NULL without memory. */
static char *dump_local(const struct service *s, size_t *len)
{
	struct dumping d = { .s = s };

	if ((d.f = open_memstream(&d.text, &d.len)) == NULL)
		return NULL;
	int rc = matcher_foreach(s->matcher, 0, dump_entry, &d);
	if (fclose(d.f) != 0 || rc != 0) {
		free(d.text);
		return NULL;
	}
	*len = d.len;
	return d.text;
}

/* In a child: the lines made and sent to Redis on a connection of its own. */
static int dump_and_send(void *ctx, char *err, size_t errlen)
{
	struct service *s = ctx;
	size_t len;
	char *data = dump_local(s, &len);

	if (data == NULL) {
		error_set(err, errlen, "out of memory for the snapshot's entries");
		return -1;
	}
	return cluster_snapshot_send(s->cluster.redis, data, len, err, errlen);
}

static void dump_sent(void *ctx, const char *error)
{
	struct service *s = ctx;

	s->cluster.dumper = NULL;
	cluster_snapshot_sent(s->cluster.redis, error);
}

/*
 * A snapshot's entries are made and sent by a child from the daemon's
 * memory as it was at the fork (state_fork.h), as the state's snapshot is: at
 * a million entries the loop would be held a fifth of a second, at ten
 * million two seconds. Where no child can be started, the loop does it.
 */
static int dump_begin(void *ctx)
{
	struct service *s = ctx;
	char err[256];
	size_t len;

	if ((s->cluster.dumper = state_fork_start(s->base, dump_and_send, dump_sent, s, err, sizeof(err))) != NULL)
		return 0;
	log_warning("cluster: the snapshot: %s: it is made in the loop instead", err);
	char *data = dump_local(s, &len);
	if (data == NULL)
		return -1;
	cluster_snapshot_made(s->cluster.redis, data, len, NULL);
	free(data);
	return 0;
}

/* The snapshot began is in Redis, or not: its waiters told; those that asked meanwhile get the next. */
static void snapshot_sent(void *ctx, const char *error)
{
	struct service *s = ctx;
	struct service_cluster *sc = &s->cluster;
	char err[256];

	for (;;) {
		json_t *reply = error ? json_pack("{s:b,s:s+}", "ok", false, "error", "cluster snapshot: ", error)
				      : json_pack("{s:b,s:s}", "ok", true, "snapshot", "sent");
		bool again = service_waiters_tell(s, &sc->snapshot_waiting, &sc->snapshot_again, reply);
		json_decref(reply);
		if (!again || cluster_snapshot(sc->redis, err, sizeof(err)) >= 0)
			return;
		error = err;
	}
}

static enum cluster_apply restore_local(void *ctx, const char *lines, size_t len, char *err, size_t errlen)
{
	return service_slices_restore(ctx, lines, len, err, errlen);
}

/* ---- the daemon's side ---- */

static int event_to_redis(void *ctx, const char *line, size_t len)
{
	struct service *s = ctx;

	return s->cluster.redis ? cluster_event(s->cluster.redis, line, len) : -1;
}

static bool applied_durable(void *ctx)
{
	return service_state_settled(ctx);
}

/* An event Redis did not take after all: to the fallback file. */
static void event_from_redis(void *ctx, const char *line, size_t len)
{
	struct service *s = ctx;

	if (s->events && events_write_fallback(s->events, line, len) < 0)
		log_limited(&s->cluster.events_lost_logged, 60, LOG_LEVEL_ERROR,
			    "an event Redis did not take is lost: %s", s->cfg->events_fallback ? "the fallback file cannot be written"
											: "no [output] events_fallback is set");
}

void service_cluster_events(struct service *s, struct events *ev)
{
	if (s->cfg->events_redis)
		events_set_sink(ev, event_to_redis, s);
}

static void republish_lists(void *ctx)
{
	service_share_lists_again(ctx);
}

/* ---- what this node holds, for the fleet's digests ---- */

/* The lists the stream fills on every node alike: the local list, and those with no file or url. */
static bool shared_list(const struct service *s, int i)
{
	const struct list_state *l = &s->lists.slot[i];

	return l->name[0] && (i == 0 || (l->cfg && l->cfg->file == NULL && l->cfg->url == NULL));
}

struct due_sums {
	uint64_t count, entries, ends;
};

static void add_due(void *ctx, unsigned kind, const uint8_t *key, size_t len, uint64_t expiry)
{
	struct due_sums *d = ctx;

	d->count++;
	d->entries += matcher_entry_digest(kind, key, len);
	d->ends += state_ttl_item_digest(kind, key, len, expiry);
}

/*
 * Each shared list as "NAME COUNT ENTRIES ENDS", a line each (the caller
 * frees): its entries' count, the sum of their digests (kept by the
 * matcher as they come and go) and of their expiries' (kept by the list's
 * ttl table), less the entries that end at or before horizon, so that a
 * node whose sweep has not yet taken them says the same as one whose has.
 */
static char *digest_lists(void *ctx, uint64_t horizon)
{
	const struct service *s = ctx;
	uint64_t counts[32];
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	matcher_count_holders(s->matcher, false, counts);
	for (int i = 0; i < LISTS_SLOTS; i++) {
		if (!shared_list(s, i))
			continue;
		const struct state_ttl *t = i == 0 ? service_local_expiries(s) : s->lists.expiry[i];
		struct due_sums due = { 0 };
		if (t)
			state_ttl_due(t, horizon, add_due, &due);
		fprintf(f, "%s %llu %016llx %016llx\n", s->lists.slot[i].name, (unsigned long long)(counts[i] - due.count),
			(unsigned long long)(matcher_holder_digest(s->matcher, (unsigned)i) - due.entries),
			(unsigned long long)((t ? state_ttl_sum(t) : 0) - due.ends));
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* Whether this node holds what op (an add or del of the local list) made: a lost one of its own is sent again only then. */
static bool still_holds(void *ctx, const struct cluster_op *op)
{
	const struct service *s = ctx;
	struct entry e;
	char err[128];

	if ((op->kind != CLUSTER_ADD && op->kind != CLUSTER_DEL) || entry_parse(op->entry, &e, err, sizeof(err)) != 1)
		return false;
	bool held = matcher_holders(s->matcher, &e) & MATCHER_HOLDER_DEFAULT;
	return op->kind == CLUSTER_ADD ? held && service_expiry(s, &e) == op->expires : !held;
}

int service_cluster_start(struct service *s)
{
	const struct cluster_callbacks cb = { apply_op,	       restore_local, dump_begin,  snapshot_sent, applied_durable,
					      event_from_redis, republish_lists, digest_lists, still_holds, s };
	char err[512];

	if (!config_cluster_on(s->cfg))
		return 0;
	s->cluster.redis = cluster_open(s->base, &s->cfg->cluster, service_journaled(s) ? service_statedir(s) : NULL,
				  s->cfg->fsync == CONFIG_FSYNC_ALWAYS, &cb, err, sizeof(err));
	if (s->cluster.redis == NULL) {
		log_error("cluster: %s", err);
		return -1;
	}
	log_info("cluster: node %s following %s on %s%s", s->cfg->cluster.node, s->cfg->cluster.stream,
		 s->cfg->cluster.redis ? "" : "the master the sentinels name: ",
		 s->cfg->cluster.redis ? s->cfg->cluster.redis : s->cfg->cluster.sentinels);
	return 0;
}

int service_cluster_snapshot(struct service *s, uint64_t waiter, char *err, size_t errlen)
{
	struct service_cluster *sc = &s->cluster;

	if (sc->redis == NULL) {
		error_set(err, errlen, "no [cluster] redis is set");
		return -1;
	}
	/* One on its way may hold entries older than a change this waiter made: it gets the next. */
	int rc = 1;
	if (sc->snapshot_waiting.n == 0) {
		/* Waiting first: the snapshot may be in before cluster_snapshot returns. */
		if (service_waiters_add(&sc->snapshot_waiting, waiter) < 0)
			goto oom;
		if ((rc = cluster_snapshot(sc->redis, err, errlen)) != 0 && waiter)
			sc->snapshot_waiting.n--;
	}
	if (rc < 0)
		return -1;
	if (rc == 1 && service_waiters_add(&sc->snapshot_again, waiter) < 0)
		goto oom;
	if (rc == 0) /* a snapshot begun holds the local list; the stream gets the shared lists' versions */
		service_share_lists_again(s);
	return 0;
oom:
	error_set(err, errlen, "out of memory");
	return -1;
}

json_t *service_cluster_status(const struct service *s)
{
	return s->cluster.redis ? cluster_status(s->cluster.redis) : NULL;
}

void service_cluster_tick(struct service *s)
{
	if (s->cluster.redis)
		cluster_tick(s->cluster.redis);
}

void service_cluster_stop(struct service *s)
{
	struct service_cluster *sc = &s->cluster;

	/* The control socket is closed: no one is left to tell. */
	service_waiters_free(&sc->snapshot_again);
	service_waiters_free(&sc->snapshot_waiting);
	state_fork_finish(sc->dumper); /* a snapshot on its way reaches Redis first */
	cluster_close(sc->redis); /* its cursor and outbox written first */
	sc->redis = NULL;
}

int service_cluster_outbox_error(const struct service *s, char *err, size_t errlen)
{
	return s->cluster.redis ? cluster_outbox_error(s->cluster.redis, err, errlen) : 0;
}
