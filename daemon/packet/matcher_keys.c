/* matcher_keys.c - a key into and out of its filter as it is stored and removed, and into a rebuild's log. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdlib.h>

#include "matcher_internal.h"

/* Note a change for the rebuild in progress; if it cannot be noted, that rebuild is void. */
static void log_op(struct keyed_filter *kf, struct store_op op)
{
	if (kf->nlog == kf->log_cap) {
		size_t cap = kf->log_cap ? 2 * kf->log_cap : 1024;
		struct store_op *log = realloc(kf->log, cap * sizeof(*log));
		if (log == NULL) {
			kf->log_lost = true;
			return;
		}
		kf->log = log;
		kf->log_cap = cap;
	}
	kf->log[kf->nlog++] = op;
}

/*
 * A key just stored at index (its hash h): once built it goes straight into
 * the filter (and into the log of a rebuild in progress); before that it
 * waits for matcher_build, its group meaningful only when restored.
 */
int matcher_filter_in(struct matcher *m, struct keyed_filter *kf, size_t index, struct hash128 h, bool restored,
		    char *err, size_t errlen)
{
	if (!m->built) {
		kf->groups_valid = kf->groups_valid && restored;
		return 0;
	}
	if (kf->counting == NULL &&
	    matcher_counting_for(m, kf, (uint64_t)ceil(1024 * matcher_bits_per_key(&m->cfg, kf == &m->sig)), err, errlen) < 0)
		return -1;
	store_set_group(kf->store, index, counting_insert(kf->counting, h));
	kf->changes++;
	if (m->rebuilding && !matcher_rebuild_copying(m->rebuilding)) /* else a later slice copies it */
		log_op(kf, (struct store_op){ .add = true, .hash = h, .word = kf == &m->sig ? m->words[index] : 0 });
	return 0;
}

/* A key about to leave index: out of its filter, and into the log of a rebuild in progress. */
void matcher_filter_out(struct matcher *m, struct keyed_filter *kf, size_t index)
{
	if (kf->counting)
		counting_remove(kf->counting, matcher_key_hash(m, kf, index), store_group(kf->store, index));
	kf->changes++;
	if (m->rebuilding && matcher_rebuild_copying(m->rebuilding))
		matcher_rebuild_copy_moves(m, kf, index);
	else if (m->rebuilding)
		log_op(kf, (struct store_op){ .add = false, .index = (uint32_t)index });
}
