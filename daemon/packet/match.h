/* match.h - the matcher's builder: entries held and released, filters built and rebuilt, copies kept in step. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_MATCH_H
#define BLOOMD_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "filter.h"
#include "hash.h"
#include "match_view.h"
#include "packet.h"
#include "simd.h"

/*
 * The control plane's side of the matcher (match_view.h is the packet
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

struct match_config {
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


struct match_filter_info {
	uint64_t entries;    /* keys in the filter (signature windows for sig) */
	uint64_t bits;
	unsigned choices, hashes;
	size_t bytes;        /* the bit filter (and, for signatures, the prefilter): what a scan reads */
	size_t store_bytes;  /* counting store and exact store */
	double fill, fpr_predicted;
	enum simd_level kernel;      /* of the filter's queries */
	enum simd_level scan_kernel; /* signatures: of the prefilter scan */
};

struct matcher;

/* A matcher with no entries; NULL with a message if cfg is invalid. */
struct matcher *matcher_new(const struct match_config *cfg, char *err, size_t errlen);
void matcher_free(struct matcher *m);

/*
 * A copy of m that shares no memory with it (entries, filters, secrets and
 * kernels; not a rebuild in progress, nor m's counters), to be checked
 * against by other threads while m changes; NULL without memory.
 */
struct matcher *matcher_clone(const struct matcher *m);

/* Grows by one or more at every change of entries, filters or kernels: whether a copy is behind. */
uint64_t matcher_changes(const struct matcher *m);

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
struct match_log;
struct match_log *match_log_new(void);
void match_log_free(struct match_log *log);
void match_log_clear(struct match_log *log);
/* log NULL: stop recording. */
void matcher_record(struct matcher *m, struct match_log *log);
/* 0, or -1 with a message (whole, or out of memory): copy is then of no use and must be made again. */
int matcher_replay(struct matcher *copy, const struct match_log *log, char *err, size_t errlen);

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
typedef void (*match_log_entry_cb)(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len);
int match_log_entries(const struct match_log *log, match_log_entry_cb cb, void *ctx, uint32_t *reheld);


/*
 * Add an entry held by holders (not 0), or add holders to it. Returns 0 if
 * added, 1 if it was present already, -1 with a message and errno (EINVAL:
 * a signature shorter than the window; ENOMEM). Before matcher_build, entries are only
 * stored; after it they go into the filter.
 */
int matcher_hold(struct matcher *m, const struct entry *e, uint32_t holders, char *err, size_t errlen);

/* matcher_hold by MATCH_HOLDER_DEFAULT. */
int matcher_add(struct matcher *m, const struct entry *e, char *err, size_t errlen);

/* An entry's holders; 0 if it is not stored. */
uint32_t matcher_holders(const struct matcher *m, const struct entry *e);

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

/* Whether e is stored; *filter_says: whether the filter alone would say yes. */
bool matcher_lookup(const struct matcher *m, const struct entry *e, bool *filter_says);

/*
 * Before matcher_build_restored: add an entry whose group (in a filter of the
 * same secret) is known, as saved in a snapshot, and for a signature the
 * offset of the window it was indexed by (MATCH_WINDOW_ANY: choose one, as
 * matcher_add does). Returns as matcher_add.
 */
#define MATCH_WINDOW_ANY 0xffffu
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
/*
 * Whether the filters' placement is the offline rounds' (or a snapshot's, as
 * it was kept, or needs none: one choice, no entries): false after
 * matcher_build_online until a rebuild with rounds is in.
 */
bool matcher_optimised(const struct matcher *m);
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
struct match_rebuild;
/* Room for this many keys in each filter (matcher_keys_count); NULL without memory. */
struct match_rebuild *matcher_rebuild_prepare(uint64_t addr_keys, uint64_t sig_windows);
/* Whether prepared has room for m's keys now (else begin allocates, in the caller's thread). */
bool matcher_rebuild_prepared_for(const struct match_rebuild *prepared, const struct matcher *m);
/* prepared: from matcher_rebuild_prepare, or NULL; taken over (freed on failure). */
struct match_rebuild *matcher_rebuild_begin(struct matcher *m, struct match_rebuild *prepared,
					    unsigned rounds, const struct filter_params *params,
					    char *err, size_t errlen);
/* 1 when the copy is whole, 0 when there is more, -1 without memory (err says so; free r). */
int matcher_rebuild_copy(struct matcher *m, struct match_rebuild *r, size_t budget, char *err, size_t errlen);
int matcher_rebuild_run(struct match_rebuild *r, char *err, size_t errlen);
/*
 * Optional, between run and finish, to keep finish short when many changes
 * arrive meanwhile: catch_up (matcher's thread) hands the changes logged so
 * far over to r and returns their number; apply (any thread) applies them.
 */
size_t matcher_rebuild_catch_up(struct matcher *m, struct match_rebuild *r);
int matcher_rebuild_apply(struct match_rebuild *r, char *err, size_t errlen);
int matcher_rebuild_finish(struct matcher *m, struct match_rebuild *r, char *err, size_t errlen);
/* From any thread: make a matcher_rebuild_run in progress give up at its next round. */
void matcher_rebuild_stop(struct match_rebuild *r);
/* Abandon a rebuild (begun, run or not): the matcher keeps its filters. */
void matcher_rebuild_free(struct matcher *m, struct match_rebuild *r);

/*
 * Whether a rebuild would help now: the configuration asks for over 1.25
 * times a filter's size for its entries, or for half of it or less; or, after a tenth of its
 * entries changed since it was built, it is over half full or its predicted
 * FPR is over fpr_target (0: no target).
 */
bool matcher_rebuild_wanted(const struct matcher *m, double fpr_target);

/*
 * matcher_check_with on the matcher's own scratch, whose counters
 * matcher_counters reads: for tools and tests that
 * check on the matcher's one thread. The daemon's loop has a scratch of its own.
 */
size_t matcher_check(struct matcher *m, const struct packet_view *v, struct match_hit *hits,
		     size_t max);

const struct match_counters *matcher_counters(const struct matcher *m, enum entry_kind kind);
uint64_t matcher_entries(const struct matcher *m, enum entry_kind kind);
/* Entries stored, all kinds. */
uint64_t matcher_entries_all(const struct matcher *m);

/*
 * The SIMD level of the filters' and the prefilter's kernels, at most level
 * (default: simd_best()); tests and benchmarks compare them. -1 where the CPU
 * lacks level.
 */
int matcher_set_simd(struct matcher *m, enum simd_level level);

/* Shape and state of the address (sig = 0) or signature (sig = 1) filter. */
void matcher_filter_info(const struct matcher *m, int sig, struct match_filter_info *info);
/*
 * The most signatures one window indexes: what a packet position whose
 * window is that one is checked against (each signature takes the window
 * of its own the fewest others share). Walks every signature.
 */
size_t matcher_sig_window_max(const struct matcher *m);

/* Whether matcher_reconfigure would take cfg: 0, or -1 with a message (nothing changes). */
int matcher_check_config(const struct match_config *cfg, char *err, size_t errlen);

/*
 * Take the filter settings of cfg (layout, choices, hashes, rounds, memory,
 * bits per entry; not the window, hash or keys): they shape the next
 * rebuild. Returns 1 if any changed, 0 if not, -1 with a message.
 */
int matcher_reconfigure(struct matcher *m, const struct match_config *cfg, char *err, size_t errlen);

/* The offline rounds a rebuild runs by default. */
unsigned matcher_rounds(const struct matcher *m);

/* Keys in the address (sig = 0) or signature filter (windows, for signatures). */
uint64_t matcher_keys_count(const struct matcher *m, int sig);

/* The hash secrets: [0] addresses, [1] signatures (to save them). */
void matcher_keys(const struct matcher *m, struct hash_key keys[2]);

/* Parameters of the address (sig = 0) or signature filter; false while it has none. */
bool matcher_params(const struct matcher *m, int sig, struct filter_params *p);

/*
 * Call cb for every entry (or every entry of kind only, 0: all) with the
 * group its filter key is counted in and its holders; stops at, and returns,
 * cb's first non-zero result. Order: addresses, then signatures window by
 * window.
 */
typedef int (*match_entry_cb)(void *ctx, const struct entry *e, unsigned group, uint32_t holders);
int matcher_foreach(const struct matcher *m, enum entry_kind only, match_entry_cb cb, void *ctx);
/* The same, with each signature's window offset (0 for addresses): what a snapshot keeps. */
typedef int (*match_placed_cb)(void *ctx, const struct entry *e, unsigned group, unsigned window, uint32_t holders);
int matcher_foreach_placed(const struct matcher *m, enum entry_kind only, match_placed_cb cb, void *ctx);

/*
 * The entries that cover an address (4 or 16 bytes): its addr entry and the
 * net entries whose prefix holds it, longest prefix first. Pairs are
 * directed and need the other end: they are not among them.
 */
void matcher_covering(const struct matcher *m, const uint8_t *addr, size_t alen, match_entry_cb cb,
		      void *ctx);

/*
 * A walk over the entries in steps, with changes between them (a listing
 * sent as the client reads it). Entries are visited from the last index
 * down: a removal moves the last entry into the hole, which is then either
 * visited already or still ahead, so every entry present from the first
 * step to the last is visited at least once (one moved ahead, twice); one
 * added meanwhile may be or not.
 */
struct match_cursor {
	int part;                  /* 0 addresses, 1 signatures, 2 done */
	size_t next;               /* entries of the part below this index are still to visit */
	bool started;
};

/*
 * How many entries each holder bit holds (counts[b] for bit b), of all of
 * them or of those staged too (MATCH_HOLDER_STAGING): kept as holders
 * change, so that stats can ask at every scrape.
 */
void matcher_count_holders(const struct matcher *m, bool staged, uint64_t counts[32]);
/*
 * An entry's digest, XXH3-64 of its key seeded with its kind + 1; and the
 * sum of those of every entry holder bit holds (kept as holders change), so
 * that two sets of entries compare in any order.
 */
uint64_t matcher_entry_digest(unsigned kind, const uint8_t *key, size_t len);
uint64_t matcher_holder_digest(const struct matcher *m, unsigned bit);

/*
 * Visit up to max more entries (whole signature windows); *cur says where
 * it stopped, and when done. held: only the entries one of its holder bits
 * holds (0: every one); one skipped costs 1/32 of a visit, so a walk for a
 * small list beside many entries is quick.
 */
void matcher_walk(const struct matcher *m, enum entry_kind only, uint32_t held, struct match_cursor *cur,
		  size_t max, match_entry_cb cb, void *ctx);

#endif
