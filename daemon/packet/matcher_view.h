/* matcher_view.h - the matcher read, never changed: a packet checked, what it found, the entries and filters read. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_MATCHER_VIEW_H
#define BLOOMD_MATCHER_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "filter.h"
#include "frame.h"
#include "hash.h"
#include "packet.h"
#include "simd.h"

/*
 * The read-only side of the matcher (matcher.h builds and changes it): the
 * engine, the workers, the events and every service file but the entry
 * set's owner include this and nothing of the builder (tests/layers.t).
 * Every function here takes the matcher const and writes only to
 * what the caller passes, so it is safe from any thread while no one
 * changes the matcher (the workers' copies are published with RCU).
 */
struct matcher;

#define MATCHER_KINDS 5        /* indexed by enum entry_kind; 0 unused */
#define MATCHER_MAX_HITS 64

struct matcher_counters {
	uint64_t probes;     /* filter queries */
	uint64_t positives;  /* the filter said yes */
	uint64_t confirmed;  /* the exact store agreed */
};

struct matcher_hit {
	enum entry_kind kind;
	uint32_t id;         /* which entry: see matcher_hit_key */
	uint32_t offset;     /* sig: first offset in the scanned payload */
};

/*
 * Every entry has holders, a set of up to 32 (the bits of a uint32_t; the
 * daemon gives bit 0 to operators' entries and one bit to each entry list).
 * An entry stays while anyone holds it: a reference count that cannot count
 * one holder twice.
 */
#define MATCHER_HOLDER_DEFAULT 1u
/*
 * The bit a version being read is held under before it is anyone's: an
 * entry held by it alone is no match (matcher_found leaves it out), so a
 * version can be read in slices while packets are checked.
 */
#define MATCHER_HOLDER_STAGING (1u << 31)

/*
 * Check one parsed packet against a matcher no one changes meanwhile; writes
 * up to max distinct confirmed hits (each entry once, a signature at its
 * first offset) and returns their number. The probes' scratch and the
 * counters are the caller's (one per thread: the loop has its own, as each
 * worker has), so any number of threads may check one matcher at once.
 */
struct matcher_scratch;
struct matcher_scratch *matcher_scratch_new(void);
void matcher_scratch_free(struct matcher_scratch *sc);
size_t matcher_check_with(const struct matcher *m, struct matcher_scratch *sc, const struct packet_view *v,
			  struct matcher_hit *hits, size_t max);
/*
 * The same for count packets (at most PACKET_BATCH_MAX): packet i's hits
 * go to hits[i], their number to n[i], as matcher_check_with would give
 * them one packet at a time, with the same counters. Every packet's
 * addresses are hashed and queried before any is confirmed, so the filter
 * fetches later packets' blocks while it tests earlier ones.
 */
void matcher_check_batch(const struct matcher *m, struct matcher_scratch *sc, const struct packet_view *v, size_t count,
			 struct matcher_hit (*hits)[MATCHER_MAX_HITS], size_t *n);
const struct matcher_counters *matcher_scratch_counters(const struct matcher_scratch *sc, enum entry_kind kind);
uint64_t matcher_scratch_hits_dropped(const struct matcher_scratch *sc);

/* A hit with what reporting needs of its entry; key points into the matcher (valid until it changes). */
struct matcher_found {
	enum entry_kind kind;
	uint32_t offset;           /* sig: first offset in the scanned payload */
	uint32_t holders;
	const uint8_t *key;
	uint16_t len;
};
/* The n hits' entries, but those held only by MATCHER_HOLDER_STAGING; how many are left. */
size_t matcher_found(const struct matcher *m, const struct matcher_hit *hits, size_t n, struct matcher_found *out);

/* The key of a hit's entry, for reporting. */
void matcher_hit_key(const struct matcher *m, const struct matcher_hit *hit, const uint8_t **key,
		     size_t *len);

/*
 * What the control plane reads of the entry set: entries and their holders,
 * walks over them, the filters' shape. Like the checks above, none of these
 * changes the matcher; matcher.h has what does, and its owner (the daemon's
 * lists.c) alone calls it.
 */
struct matcher_filter_info {
	uint64_t entries;    /* keys in the filter (signature windows for sig) */
	uint64_t bits;
	unsigned choices, hashes;
	size_t bytes;        /* the bit filter (and, for signatures, the prefilter): what a scan reads */
	size_t store_bytes;  /* counting store and exact store */
	double fill, fpr_predicted;
	enum simd_level kernel;      /* of the filter's queries */
	enum simd_level scan_kernel; /* signatures: of the prefilter scan */
	bool scan_gathers;           /* signatures, avx2: the prefilter's words read by a gather (sigscan.h) */
};

/* Grows by one or more at every change of entries, filters or kernels: whether a copy is behind. */
uint64_t matcher_changes(const struct matcher *m);

/* An entry's holders; 0 if it is not stored. */
uint32_t matcher_holders(const struct matcher *m, const struct entry *e);

/* Whether e is stored; *filter_says: whether the filter alone would say yes. */
bool matcher_lookup(const struct matcher *m, const struct entry *e, bool *filter_says);

/*
 * Whether the filters' placement is the offline rounds' (or a snapshot's, as
 * it was kept, or needs none: one choice, no entries): false after
 * matcher_build_online until a rebuild with rounds is in.
 */
bool matcher_optimised(const struct matcher *m);

/*
 * Whether a rebuild would help now: the configuration asks for over 1.25
 * times a filter's size for its entries, or for half of it or less; or, after a tenth of its
 * entries changed since it was built, it is over half full or its predicted
 * FPR is over fpr_target (0: no target).
 */
bool matcher_rebuild_wanted(const struct matcher *m, double fpr_target);

const struct matcher_counters *matcher_counters(const struct matcher *m, enum entry_kind kind);
uint64_t matcher_entries(const struct matcher *m, enum entry_kind kind);
/* Entries stored, all kinds. */
uint64_t matcher_entries_all(const struct matcher *m);

/* Shape and state of the address (sig = 0) or signature (sig = 1) filter. */
void matcher_filter_info(const struct matcher *m, int sig, struct matcher_filter_info *info);
/*
 * The most signatures one window indexes: what a packet position whose
 * window is that one is checked against (each signature takes the window
 * of its own the fewest others share). Walks every signature.
 */
size_t matcher_sig_window_max(const struct matcher *m);

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
typedef int (*matcher_entry_cb)(void *ctx, const struct entry *e, unsigned group, uint32_t holders);
int matcher_foreach(const struct matcher *m, enum entry_kind only, matcher_entry_cb cb, void *ctx);
/* The same, with each signature's window offset (0 for addresses): what a snapshot keeps. */
typedef int (*matcher_placed_cb)(void *ctx, const struct entry *e, unsigned group, unsigned window, uint32_t holders);
int matcher_foreach_placed(const struct matcher *m, enum entry_kind only, matcher_placed_cb cb, void *ctx);

/*
 * The entries that cover an address (4 or 16 bytes): its addr entry and the
 * net entries whose prefix holds it, longest prefix first. Pairs are
 * directed and need the other end: they are not among them.
 */
void matcher_covering(const struct matcher *m, const uint8_t *addr, size_t alen, matcher_entry_cb cb,
		      void *ctx);

/*
 * A walk over the entries in steps, with changes between them (a listing
 * sent as the client reads it). Entries are visited from the last index
 * down: a removal moves the last entry into the hole, which is then either
 * visited already or still ahead, so every entry present from the first
 * step to the last is visited at least once (one moved ahead, twice); one
 * added meanwhile may be or not.
 */
struct matcher_cursor {
	int part;                  /* 0 addresses, 1 signatures, 2 done */
	size_t next;               /* entries of the part below this index are still to visit */
	bool started;
};

/*
 * How many entries each holder bit holds (counts[b] for bit b), of all of
 * them or of those staged too (MATCHER_HOLDER_STAGING): kept as holders
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
void matcher_walk(const struct matcher *m, enum entry_kind only, uint32_t held, struct matcher_cursor *cur,
		  size_t max, matcher_entry_cb cb, void *ctx);

#endif
