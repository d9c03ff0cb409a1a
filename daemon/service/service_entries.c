/* service_entries.c - the local list's entries: added and deleted, journaled first, published to the stream. */
#include "service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"

int service_journal_op(struct service *s, enum persist_op op, const struct entry *e, uint64_t expiry,
			char *err, size_t errlen)
{
	if (s->journal_stale) {
		error_set(err, errlen, "the state directory cannot take a new journal (see the log): changes are refused until it can");
		return -1;
	}
	if (s->store_error[0]) {
		error_set(err, errlen, "the state cannot be written (%.300s): changes are refused until it can be (retried every second); nothing was changed",
			  s->store_error);
		return -1;
	}
	if (s->journal && journal_append(s->journal, op, e, expiry) < 0) {
		error_set(err, errlen, "out of memory for the journal: the change was not made");
		return -1;
	}
	return 0;
}

/*
 * The local list's hold on e, with its expiry: journaled first, so a change
 * not written is not made. Other lists' holds on it are theirs: an entry a
 * list holds is added to the local list all the same.
 */
int service_add(struct service *s, const struct entry *e, uint64_t expiry, char *err,
		size_t errlen)
{
	uint64_t before = ttl_get(s->ttl, e);
	bool was_local = matcher_holders(s->matcher, e) & MATCH_HOLDER_DEFAULT;
	uint32_t left;

	if (was_local && before == expiry)
		return 1;
	if (matcher_hold(s->matcher, e, MATCH_HOLDER_DEFAULT, err, errlen) < 0)
		return -1;
	/* Undone on failure: a new hold goes, one there already keeps its expiry; the real cause is said. */
	if (ttl_set(s->ttl, e, expiry) < 0) {
		error_set(err, errlen, "out of memory for the entry's expiry: the entry was not %s",
			  was_local ? "changed" : "added");
	} else if (service_journal_op(s, PERSIST_ADD, e, expiry, err, errlen) == 0) {
		service_cluster_publish(s, CLUSTER_ADD, e, expiry);
		if (was_local)
			service_mirror_entry(s, e); /* its time changed, its holders did not: no change is logged */
		return was_local ? 1 : 0;
	}
	if (!was_local)
		matcher_release(s->matcher, e, MATCH_HOLDER_DEFAULT, &left);
	ttl_set(s->ttl, e, was_local ? before : 0);
	return -1;
}

int service_del(struct service *s, const struct entry *e, uint32_t *still_held, char *err, size_t errlen)
{
	uint32_t holders = matcher_holders(s->matcher, e);

	*still_held = holders & ~MATCH_HOLDER_DEFAULT;
	if (!(holders & MATCH_HOLDER_DEFAULT)) {
		/* Not here (yet): other nodes may have it, and the operator wants it gone from all. */
		service_cluster_publish(s, CLUSTER_DEL, e, 0);
		return 1;
	}
	if (service_journal_op(s, PERSIST_DEL, e, 0, err, errlen) < 0)
		return -1; /* not journaled: not done, or a restart would bring it back */
	matcher_release(s->matcher, e, MATCH_HOLDER_DEFAULT, still_held);
	ttl_set(s->ttl, e, 0);
	service_cluster_publish(s, CLUSTER_DEL, e, 0);
	return 0;
}
