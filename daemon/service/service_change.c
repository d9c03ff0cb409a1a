/* service_change.c - the one way a change reaches the entries, and what its origin sends it on to. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "error.h"
#include "lists.h"
#include "log.h"
#include "service_internal.h"

/*
 * What a change's origin decides, here alone:
 *
 *   origin     journal                              the stream
 *   operator   written first, or the change refused  sent, for the fleet to apply
 *   stream     written first, or tried again later   not sent back
 *   expiry     tried (a restart expires it again)    not sent: each node expires its own
 *
 * A list's new version or flush goes to the stream only from an operator,
 * and only for a list without a file or url (the others are each node's
 * to read). The workers' copy, the XDP set and the nft mirror follow every
 * change alike (service_record_changes); an operator's reply waits until
 * the workers have it (commands_burst).
 */
static bool journal_required(enum service_origin from)
{
	return from != SERVICE_FROM_EXPIRY;
}

static bool shared(const struct service *s, enum service_origin from)
{
	return from == SERVICE_FROM_OPERATOR && s->cluster.redis != NULL;
}

static int journal(struct service *s, enum service_origin from, enum state_op op, const struct entry *e,
		   uint64_t expiry, char *err, size_t errlen)
{
	int rc = service_journal_op(s, op, e, expiry, err, errlen);

	return journal_required(from) ? rc : 0;
}

static void share(struct service *s, enum service_origin from, enum cluster_op_kind kind, const struct entry *e,
		  uint64_t expires)
{
	char text[ENTRY_TEXT_MAX + 8];
	char value[ENTRY_TEXT_MAX], err[256];

	if (!shared(s, from))
		return;
	snprintf(text, sizeof(text), "%s %s", entry_kind_name(e->kind),
		 entry_format_value(e->kind, e->key, e->len, value, sizeof(value)));
	struct cluster_op op = { .kind = kind, .entry = text, .expires = expires };
	if (cluster_publish(s->cluster.redis, &op, err, sizeof(err)) < 0)
		log_error("cluster: %s: %s", text, err);
}

bool service_shares(const struct service *s, enum service_origin from, int i)
{
	const struct list_config *lc = s->lists.slot[i].cfg;

	return shared(s, from) && lc->file == NULL && lc->url == NULL;
}

void service_share_list(struct service *s, enum service_origin from, int i, const char *data, size_t len)
{
	enum cluster_op_kind kind = data ? CLUSTER_REPLACE : CLUSTER_FLUSH;
	char err[256];

	if (!service_shares(s, from, i))
		return;
	struct cluster_op op = { .kind = kind, .entry = s->lists.slot[i].name, .data = data, .data_len = len };
	if (cluster_publish(s->cluster.redis, &op, err, sizeof(err)) < 0)
		log_error("cluster: %s list %s: %s", data ? "replace" : "flush", op.entry, err);
}

enum cluster_apply service_stream_outcome(const struct service *s, int rc)
{
	if (rc >= 0)
		return CLUSTER_APPLIED;
	/* Not the change's fault but the disk's: the stream waits at it. */
	return s->state.store_error[0] || s->state.journal_stale ? CLUSTER_APPLY_LATER : CLUSTER_APPLY_REFUSED;
}

void service_stream_applied(struct service *s, int rc, const char *err)
{
	if (s->cluster.redis)
		cluster_applied(s->cluster.redis, service_stream_outcome(s, rc), err);
}

static void mark_failed(const char *err)
{
	log_warning("a change made while the cluster's snapshot is restored may be undone by it until the stream brings it back: %s",
		    err);
}

void service_stream_restoring(struct service *s, enum service_restore state)
{
	struct service_cluster *sc = &s->cluster;
	struct entry e;
	char err[256];

	if (state == RESTORE_BEGUN && sc->restore == RESTORE_WAITING)
		for (size_t at = 0; entry_run_next(&sc->changed_meanwhile, &at, &e);)
			if (lists_mark(s->matcher, &e, err, sizeof(err)) < 0)
				mark_failed(err);
	if (state != RESTORE_WAITING)
		entry_run_free(&sc->changed_meanwhile);
	sc->restore = state;
}

/* A change an operator made after the snapshot came: marked (or remembered), so that the snapshot does not undo it. */
static void mark_past_snapshot(struct service *s, enum service_origin from, const struct entry *e)
{
	char err[256] = "out of memory";

	if (!shared(s, from) || s->cluster.restore == RESTORE_NONE)
		return;
	if (s->cluster.restore == RESTORE_WAITING ? entry_run_add(&s->cluster.changed_meanwhile, e) < 0
						 : lists_mark(s->matcher, e, err, sizeof(err)) < 0)
		mark_failed(err);
}

void service_stream_restored(struct service *s, int rc, const char *err)
{
	service_stream_restoring(s, RESTORE_NONE);
	if (s->cluster.redis)
		cluster_restored(s->cluster.redis, rc == 0 ? CLUSTER_APPLIED : CLUSTER_APPLY_LATER, err);
}

/*
 * The local list's hold on e, with its expiry. The matcher holds it first
 * and is undone when the journal cannot take it, so a change not written is
 * not made. Other lists' holds on it are theirs: an entry a list holds is
 * added to the local list all the same.
 */
int service_add(struct service *s, const struct entry *e, uint64_t expiry, enum service_origin from, char *err,
		size_t errlen)
{
	BLOOMD_ON_LOOP();
	uint64_t before = state_ttl_get(s->state.ttl, e);
	bool was_local = matcher_holders(s->matcher, e) & MATCHER_HOLDER_DEFAULT;
	uint32_t left;

	if (was_local && before == expiry)
		return 1;
	if (lists_local_hold(s->matcher, e, err, errlen) < 0)
		return -1;
	/* Undone on failure: a new hold goes, one there already keeps its expiry; the real cause is said. */
	if (state_ttl_set(s->state.ttl, e, expiry) < 0) {
		error_set(err, errlen, "out of memory for the entry's expiry: the entry was not %s",
			  was_local ? "changed" : "added");
	} else if (journal(s, from, STATE_ADD, e, expiry, err, errlen) == 0) {
		share(s, from, CLUSTER_ADD, e, expiry);
		mark_past_snapshot(s, from, e);
		if (was_local)
			service_action_mirror_entry(s, e); /* its time changed, its holders did not: no change is logged */
		return was_local ? 1 : 0;
	}
	if (!was_local)
		lists_local_release(s->matcher, e, &left);
	state_ttl_set(s->state.ttl, e, was_local ? before : 0);
	return -1;
}

void service_prefetch(const struct service *s, const struct entry *e)
{
	lists_prefetch(s->matcher, e);
}

int service_del(struct service *s, const struct entry *e, enum service_origin from, uint32_t *still_held, char *err,
		size_t errlen)
{
	BLOOMD_ON_LOOP();
	uint32_t holders = matcher_holders(s->matcher, e);

	*still_held = holders & ~MATCHER_HOLDER_DEFAULT;
	if (!(holders & MATCHER_HOLDER_DEFAULT)) {
		/* Not here (yet): other nodes may have it, and the operator wants it gone from all. */
		share(s, from, CLUSTER_DEL, e, 0);
		mark_past_snapshot(s, from, e);
		return 1;
	}
	if (journal(s, from, STATE_DEL, e, 0, err, errlen) < 0)
		return -1; /* not journaled: not done, or a restart would bring it back */
	lists_local_release(s->matcher, e, still_held);
	state_ttl_set(s->state.ttl, e, 0);
	share(s, from, CLUSTER_DEL, e, 0);
	mark_past_snapshot(s, from, e);
	return 0;
}

/* Entries whose time ran out at once (a feed's decisions of one duration) go this many a turn of the loop. */
#define EXPIRE_SLICE 16384

bool service_expire(struct service *s, uint64_t now)
{
	struct entry e;
	uint32_t left;
	size_t budget = EXPIRE_SLICE;

	while (budget && state_ttl_pop_expired(s->state.ttl, now, &e) == 1) {
		budget--;
		service_del(s, &e, SERVICE_FROM_EXPIRY, &left, NULL, 0);
	}
	/* A list's run out too; its kept version says when (expires=), so a restart does not bring them back. */
	lists_expire(&s->lists, s->matcher, now, &budget);
	return budget == 0;
}
