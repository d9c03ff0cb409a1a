/* matcher.h - the matcher's builder: entries held and released, filters built and rebuilt, copies kept in step. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_MATCHER_H
#define BLOOMD_MATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "filter.h"
#include "hash.h"
#include "matcher_copy.h"
#include "matcher_view.h"
#include "packet.h"
#include "simd.h"

/*
 * The control plane's side of the matcher (matcher_view.h is the packet
 * path's). Two filters, each a counting store with its exact store behind it:
 *
 *   addresses   addr, net and pair keys, hashed as kind byte + key (XXH3).
 *               Per packet: addr(src), addr(dst), pair(src,dst), and
 *               net(prefix of src and dst) for each prefix length in use.
 *   signatures  the first W bytes ("window") of each signature. Per packet,
 *               every W-byte window of the payload goes through a one-word
 *               prefilter (sigscan.h, eight positions at a time), the few
 *               that pass through this filter, and a window it accepts is
 *               looked up exactly: each signature starting with it is
 *               compared in full at that offset.
 *
 * Probes go to the filter in batches so their cache misses overlap. Nothing
 * is reported unless the exact store confirms it.
 */

struct matcher_config {
	enum filter_layout layout;
	unsigned choices;
	unsigned hashes;        /* 0: the best for the size (sizing_best) */
	unsigned rounds;        /* offline rounds when built; 0: sizing_default_rounds */
	uint64_t memory;        /* bytes for both filters; 0: use bits_per_entry */
	double bits_per_entry;
	double bits_per_window; /* the signature filter's, in place of bits_per_entry; 0: the same */
	unsigned window;        /* signature window W, 1..64 */
	enum hash_algo algo;
	const struct hash_key *keys; /* [2]: address and signature secrets (a snapshot's); NULL: fresh */
};

struct matcher;

/* A matcher with no entries; NULL with a message if cfg is invalid. */
struct matcher *matcher_new(const struct matcher_config *cfg, char *err, size_t errlen);

/*
 * Add an entry held by holders (not 0), or add holders to it. Returns 0 if
 * added, 1 if it was present already, -1 with a message and errno (EINVAL:
 * a signature shorter than the window; ENOMEM). Before matcher_build, entries are only
 * stored; after it they go into the filter.
 */
int matcher_hold(struct matcher *m, const struct entry *e, uint32_t holders, char *err, size_t errlen);
/* A hint from a caller that knows e is held soon (a list's lines read ahead): the store's line for it is asked for now. */
void matcher_prefetch(const struct matcher *m, const struct entry *e);

/* matcher_hold by MATCHER_HOLDER_DEFAULT. */
int matcher_add(struct matcher *m, const struct entry *e, char *err, size_t errlen);

/*
 * Take holders away from an entry; with none left it is removed. Returns 0
 * (*left: its holders now, 0 if removed), or 1 if it was not stored.
 */
int matcher_release(struct matcher *m, const struct entry *e, uint32_t holders, uint32_t *left);

/*
 * Move every entry's hold from holder `from` to holder `to` at once (one
 * call, so no packet sees half of it): an entry held by from is held by to
 * instead; one held by to but not from loses to (and goes if no one else
 * holds it). from = 0 takes to from every entry (a flush). Staging a list's
 * new version under a spare holder and reholding it onto the list's own is
 * ipset's swap. Returns the entries that lost to; *gained (if not NULL):
 * those that gained it.
 */
uint64_t matcher_rehold(struct matcher *m, uint32_t from, uint32_t to, uint64_t *gained);

/*
 * Remove an entry whoever holds it: from its exact store and, once built, from its counting
 * store. Returns 0 if removed, 1 if it was not there. A removed signature's
 * window keeps its prefilter bits until the filters are built again.
 */
int matcher_remove(struct matcher *m, const struct entry *e);

/*
 * Before matcher_build_restored: add an entry whose group (in a filter of the
 * same secret) is known, as saved in a snapshot, and for a signature the
 * offset of the window it was indexed by (MATCHER_WINDOW_ANY: choose one, as
 * matcher_add does). Returns as matcher_add.
 */
#define MATCHER_WINDOW_ANY 0xffffu
int matcher_add_restored(struct matcher *m, const struct entry *e, unsigned group, unsigned window, char *err,
			 size_t errlen);

/* Size both filters for the entries stored and fill them (offline rounds). */
int matcher_build(struct matcher *m, char *err, size_t errlen);
/*
 * The same by online insertion, each entry in its least loaded choice as
 * it comes: one pass, for a start that protects at once; a background
 * rebuild with matcher_rounds brings the offline rounds' accuracy after.
 */
int matcher_build_online(struct matcher *m, char *err, size_t errlen);
/* Entries were placed online into the built filters (a list read after a snapshot's): not optimised until a rebuild with rounds. */
void matcher_placed_online(struct matcher *m);

/*
 * Build both filters with the given parameters ([0] addresses, [1]
 * signatures), counting each entry in its restored group: no rounds, so a
 * restart costs one pass. Entries whose groups do not fit are re-chosen.
 */
int matcher_build_restored(struct matcher *m, const struct filter_params params[2], char *err,
			   size_t errlen);

/*
 * Background rebuild, in three steps (four with prepare):
 *
 *   prepare (any thread, optional) allocates and touches the copies' memory,
 *           so that begin copies into warm pages;
 *   begin   (matcher's thread) sizes the new filters for the entries
 *           stored now (or given params [2]);
 *   copy    (matcher's thread) copies each filter's key hashes and groups,
 *           budget keys a call, so that the loop serves packets and control
 *           in between (changes meanwhile are followed in the copy); once
 *           it returns 1 the copy is whole and every add and remove is
 *           logged from then on;
 *   run     (any thread) counts the copies into new counting stores and
 *           runs the offline rounds; touches nothing of the matcher;
 *   finish  (matcher's thread) replays the logged changes onto the new
 *           stores, mirroring the exact store's index moves, and swaps them
 *           in. Costs O(changes during the rebuild), not O(entries).
 *
 * The old filters answer every packet until the swap, so no entry is ever
 * missed. One rebuild at a time. finish and free both free r.
 */
struct matcher_rebuild;
/* Room for this many keys in each filter (matcher_keys_count); NULL without memory. */
struct matcher_rebuild *matcher_rebuild_prepare(uint64_t addr_keys, uint64_t sig_windows);
/* Whether prepared has room for m's keys now (else begin allocates, in the caller's thread). */
bool matcher_rebuild_prepared_for(const struct matcher_rebuild *prepared, const struct matcher *m);
/* prepared: from matcher_rebuild_prepare, or NULL; taken over (freed on failure). */
struct matcher_rebuild *matcher_rebuild_begin(struct matcher *m, struct matcher_rebuild *prepared,
					    unsigned rounds, const struct filter_params *params,
					    char *err, size_t errlen);
/* 1 when the copy is whole, 0 when there is more, -1 without memory (err says so; free r). */
int matcher_rebuild_copy(struct matcher *m, struct matcher_rebuild *r, size_t budget, char *err, size_t errlen);
int matcher_rebuild_run(struct matcher_rebuild *r, char *err, size_t errlen);
/*
 * Optional, between run and finish, to keep finish short when many changes
 * arrive meanwhile: catch_up (matcher's thread) hands the changes logged so
 * far over to r and returns their number; apply (any thread) applies them.
 */
size_t matcher_rebuild_catch_up(struct matcher *m, struct matcher_rebuild *r);
int matcher_rebuild_apply(struct matcher_rebuild *r, char *err, size_t errlen);
int matcher_rebuild_finish(struct matcher *m, struct matcher_rebuild *r, char *err, size_t errlen);
/* From any thread: make a matcher_rebuild_run in progress give up at its next round. */
void matcher_rebuild_stop(struct matcher_rebuild *r);
/* Abandon a rebuild (begun, run or not): the matcher keeps its filters. */
void matcher_rebuild_free(struct matcher *m, struct matcher_rebuild *r);

/*
 * matcher_check_with on the matcher's own scratch, whose counters
 * matcher_counters reads: for tools and tests that
 * check on the matcher's one thread. The daemon's loop has a scratch of its own.
 */
size_t matcher_check(struct matcher *m, const struct packet_view *v, struct matcher_hit *hits,
		     size_t max);

/*
 * The SIMD level of the filters' and the prefilter's kernels, at most level
 * (default: simd_best()); tests and benchmarks compare them. -1 where the CPU
 * lacks level.
 */
int matcher_set_simd(struct matcher *m, enum simd_level level);

/* Whether matcher_reconfigure would take cfg: 0, or -1 with a message (nothing changes). */
int matcher_check_config(const struct matcher_config *cfg, char *err, size_t errlen);

/*
 * Take the filter settings of cfg (layout, choices, hashes, rounds, memory,
 * bits per entry; not the window, hash or keys): they shape the next
 * rebuild. Returns 1 if any changed, 0 if not, -1 with a message.
 */
int matcher_reconfigure(struct matcher *m, const struct matcher_config *cfg, char *err, size_t errlen);

#endif
