/* matcher_copy.h - copies of the matcher kept in step by the log of its changes, and a matcher freed. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_MATCHER_COPY_H
#define BLOOMD_MATCHER_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "entry.h"

/*
 * What follows the entry set without changing it: the workers' copy, the
 * XDP set and the nft mirror. Each change made to the matcher (matcher.h) is
 * logged; a copy replays the log, a view outside the matcher reads which
 * entries it named.
 */
struct matcher;

/* Any matcher: one of matcher.h's, or a copy. */
void matcher_free(struct matcher *m);

/*
 * A copy of m that shares no memory with it (entries, filters, secrets and
 * kernels; not a rebuild in progress, nor m's counters), to be checked
 * against by other threads while m changes; NULL without memory.
 */
struct matcher *matcher_clone(const struct matcher *m);

/*
 * A copy kept in step by replaying m's changes: matcher_record(m, log) puts
 * each change made to m from then on (hold, release, rehold, remove,
 * set_simd) into log, and matcher_replay makes them to the copy, which then
 * is what m is: O(changes), not O(entries). A change a copy cannot replay (a
 * build or a rebuild swapped in, a change that failed half-way, one the log
 * had no memory for) makes the log whole: the copy must be made again
 * (matcher_clone). Replaying relies on the matcher being deterministic: the
 * same changes to equal matchers leave them equal.
 */
struct matcher_log;
struct matcher_log *matcher_log_new(void);
void matcher_log_free(struct matcher_log *log);
void matcher_log_clear(struct matcher_log *log);
/* log NULL: stop recording. */
void matcher_record(struct matcher *m, struct matcher_log *log);
/* 0, or -1 with a message (whole, or out of memory): copy is then of no use and must be made again. */
int matcher_replay(struct matcher *copy, const struct matcher_log *log, char *err, size_t errlen);

/*
 * For a view of some entries kept outside the matcher (the XDP set, the nft
 * mirror), which asks the matcher what each is now: cb for each entry a
 * hold, release or remove in log named (but a hold or release of the
 * staging holder alone: a version being staged is no one's yet), and each
 * a rehold moved into or out of its "to" holders (a list's new version: its
 * diff), in order; in
 * *reheld the holders its reholds moved entries from (an entry held by one
 * of them may have changed without being named: if the view acts on them,
 * it looks at every entry). Returns 0; or 1, without calling cb, when the
 * log is whole: any entry may have changed, and the view must look at all
 * of them again.
 */
typedef void (*matcher_log_entry_cb)(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len);
int matcher_log_entries(const struct matcher_log *log, matcher_log_entry_cb cb, void *ctx, uint32_t *reheld);

#endif
