/* match_view.h - what the packet path may do with a matcher: check a packet, read what it found. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_MATCH_VIEW_H
#define BLOOMD_MATCH_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "frame.h"
#include "packet.h"

/*
 * The read-only side of the matcher (match.h builds and changes it): the
 * engine, the workers and the events include this and nothing of the
 * builder. Every function here takes the matcher const and writes only to
 * what the caller passes, so it is safe from any thread while no one
 * changes the matcher (the workers' copies are published with RCU).
 */
struct matcher;

#define MATCH_KINDS 5        /* indexed by enum entry_kind; 0 unused */
#define MATCH_MAX_HITS 64

struct match_counters {
	uint64_t probes;     /* filter queries */
	uint64_t positives;  /* the filter said yes */
	uint64_t confirmed;  /* the exact store agreed */
};

struct match_hit {
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
#define MATCH_HOLDER_DEFAULT 1u
/*
 * The bit a version being read is held under before it is anyone's: an
 * entry held by it alone is no match (matcher_found leaves it out), so a
 * version can be read in slices while packets are checked.
 */
#define MATCH_HOLDER_STAGING (1u << 31)

/*
 * Check one parsed packet against a matcher no one changes meanwhile; writes
 * up to max distinct confirmed hits (each entry once, a signature at its
 * first offset) and returns their number. The probes' scratch and the
 * counters are the caller's (one per thread: the loop has its own, as each
 * worker has), so any number of threads may check one matcher at once.
 */
struct match_scratch;
struct match_scratch *matcher_scratch_new(void);
void matcher_scratch_free(struct match_scratch *sc);
size_t matcher_check_with(const struct matcher *m, struct match_scratch *sc, const struct packet_view *v,
			  struct match_hit *hits, size_t max);
/*
 * The same for count packets (at most PACKET_BATCH_MAX): packet i's hits
 * go to hits[i], their number to n[i], as matcher_check_with would give
 * them one packet at a time, with the same counters. Every packet's
 * addresses are hashed and queried before any is confirmed, so the filter
 * fetches later packets' blocks while it tests earlier ones.
 */
void matcher_check_batch(const struct matcher *m, struct match_scratch *sc, const struct packet_view *v, size_t count,
			 struct match_hit (*hits)[MATCH_MAX_HITS], size_t *n);
/* The address filter's bytes (0 while it is not built): what its probes read. */
size_t matcher_address_filter_bytes(const struct matcher *m);
const struct match_counters *matcher_scratch_counters(const struct match_scratch *sc, enum entry_kind kind);
uint64_t matcher_scratch_hits_dropped(const struct match_scratch *sc);

/* A hit with what reporting needs of its entry; key points into the matcher (valid until it changes). */
struct match_found {
	enum entry_kind kind;
	uint32_t offset;           /* sig: first offset in the scanned payload */
	uint32_t holders;
	const uint8_t *key;
	uint16_t len;
};
/* The n hits' entries, but those held only by MATCH_HOLDER_STAGING; how many are left. */
size_t matcher_found(const struct matcher *m, const struct match_hit *hits, size_t n, struct match_found *out);

/* The key of a hit's entry, for reporting. */
void matcher_hit_key(const struct matcher *m, const struct match_hit *hit, const uint8_t **key,
		     size_t *len);

#endif
