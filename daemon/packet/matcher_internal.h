/* matcher_internal.h - the matcher's state, shared by the match files. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_MATCHER_INTERNAL_H
#define BLOOMD_MATCHER_INTERNAL_H

/*
 * Only the match files include this. They form a tree: matcher.c (the
 * per-packet checks, what the daemon asks of the matcher, and replaying a
 * log onto a copy) uses matcher_entries.c (the stores, the signature index
 * and its arena); both use matcher_rebuild.c (the filters' sizes, build and
 * rebuild); all three use matcher_log.c (the changes recorded, a plain buffer
 * that calls none of them).
 */

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "counting.h"
#include "entry_hash.h"
#include "matcher.h"
#include "sigscan.h"
#include "store.h"

#define ADDR_PROBES (3 + 2 * 129) /* one packet's: addr src, addr dst, pair, and a net probe per side and length */
/* A batch's address probes queried at once: a full batch of packets with no net lengths (3 each), or one packet's most. */
#define BATCH_PROBES (3 * PACKET_BATCH_MAX > ADDR_PROBES ? 3 * PACKET_BATCH_MAX : ADDR_PROBES)
/* Positions level 1 scans at a time: most packets in one go, so the filter batches are long (10% at 1M). */
#define SIG_CHUNK 1024
#define MAX_PROBES (SIG_CHUNK > BATCH_PROBES ? SIG_CHUNK : BATCH_PROBES)
#define NO_SIG UINT32_MAX

/*
 * A change to a filter's store made while a rebuild runs, replayed onto the
 * rebuilt filter before the swap: an add appended an entry; a remove moved
 * the last entry into index.
 */
struct store_op {
	bool add;
	uint32_t index;            /* remove: the index emptied */
	struct hash128 hash;       /* add: the new entry's hash */
	uint64_t word;             /* add to the signature filter: the window's word */
};

/* One checking thread's probes (no allocation per packet) and counters. */
struct matcher_scratch {
	struct matcher_counters counters[MATCHER_KINDS];
	uint64_t hits_dropped;
	const uint8_t *probe_key[BATCH_PROBES];   /* into the packet, or into net_key */
	uint8_t probe_len[BATCH_PROBES];
	uint8_t probe_kind[BATCH_PROBES];
	uint8_t probe_packet[BATCH_PROBES];       /* which of the batch's packets asked */
	struct hash128 probe_hash[MAX_PROBES];
	bool probe_hit[MAX_PROBES];
	uint8_t net_key[BATCH_PROBES][24];       /* by probe number: prefix length + network, whole words */
};

/* Counting store plus the bookkeeping both filters share. */
struct keyed_filter {
	struct hash_key key;
	struct store *store;
	struct counting *counting; /* NULL until built, or while empty */
	bool groups_valid;         /* the store's groups say where each entry is counted */
	struct store_op *log;      /* while a rebuild runs */
	size_t nlog, log_cap;
	bool log_lost;             /* a change could not be logged: that rebuild is void */
	uint64_t changes;          /* adds and removes since the last build */
};

struct sig_entry {
	uint64_t offset;           /* into sig_arena */
	uint16_t len;
	uint16_t window;           /* where in it the window it is indexed by starts */
	uint32_t next;             /* next signature with the same window, or NO_SIG */
	uint32_t holders;          /* who holds it (matcher.h) */
};

struct matcher {
	struct matcher_config cfg;
	bool built;
	bool optimised;            /* matcher_optimised */
	enum simd_level simd;      /* the filters' and the prefilter's kernels at most this */
	struct matcher_rebuild *rebuilding; /* the rebuild in progress, or NULL */
	struct keyed_filter addr;  /* addr, net, pair */
	uint64_t kind_entries[MATCHER_KINDS];
	/* Kept as holders change, for each holder bit: the entries it holds, those of them staged too, their digest. */
	uint64_t held[32], held_staged[32], held_digest[32];
	uint32_t net_count[2][129]; /* [v4, v6][prefix length]: net entries */
	uint8_t net_lens[2][129];   /* the lengths in use, longest first */
	unsigned n_net_lens[2];

	struct keyed_filter sig;   /* the windows: W bytes of each signature (matcher_windows.c says which) */
	struct sigscan *scan;      /* window hashing and the per-byte prefilter */
	uint32_t *heads;           /* per window (store index): first signature id */
	uint64_t *words;           /* per window (store index): its word, for rebuilding the prefilter */
	size_t window_cap;         /* of heads and words */
	struct sig_entry *sigs;
	size_t nsigs, sigs_cap;
	uint32_t free_sigs;        /* removed ids, chained through next; reused first */
	struct arena sig_arena;    /* the signatures' bytes */
	uint64_t *hot;             /* windows two signatures contain (matcher_windows.c), by word; 0: empty */
	size_t hot_cap, hot_n;

	uint64_t changes;          /* matcher_changes */
	struct matcher_log *log;     /* where its changes are recorded (matcher_record), or NULL */
	struct matcher_scratch own;  /* matcher_check's */
};

/* An address entry's hash in the address filter; the kind selects the hash's domain. */
static inline struct hash128 addr_hash(const struct matcher *m, enum entry_kind kind, const uint8_t *key, size_t len)
{
	return entry_hash(&m->addr.key, kind, key, len);
}

/*
 * The filter's hash of the key at index, made again from its bytes (a
 * signature window's from its word): the store keeps only its high word
 * (store.h).
 */
static inline struct hash128 matcher_key_hash(const struct matcher *m, const struct keyed_filter *kf, size_t index)
{
	uint8_t kind;
	const uint8_t *bytes;
	size_t len;

	if (kf == &m->sig)
		return sigscan_hash(m->scan, m->words[index]);
	store_entry(kf->store, index, &kind, &bytes, &len);
	return addr_hash(m, (enum entry_kind)kind, bytes, len);
}

/* matcher_entries.c */

/* Bits per key of a filter: [0] addresses, [1] signature windows. */
double matcher_bits_per_key(const struct matcher_config *cfg, int sig);

/* matcher_log.c: record a change made (reshaped: one a copy cannot replay; it is copied whole). */
void matcher_log_hold(struct matcher *m, const struct entry *e, uint32_t holders);
void matcher_log_release(struct matcher *m, const struct entry *e, uint32_t holders);
void matcher_log_rehold(struct matcher *m, uint32_t from, uint32_t to);
void matcher_log_named(struct matcher *m, const struct entry *e);
void matcher_log_remove(struct matcher *m, const struct entry *e);
void matcher_log_simd(struct matcher *m, unsigned level);
void matcher_log_reshaped(struct matcher *m);
/* The filters rebuilt: a copy is made again, but the entries and their holders are as they were (the views need not look). */
void matcher_log_rebuilt(struct matcher *m);

/* matcher_rebuild.c */

/* Queries of the counting store's filter with the best kernel up to level. */
void matcher_use_simd(struct counting *c, enum simd_level level);

/* An empty counting store for a filter that had none (its first key after the build). */
int matcher_counting_for(const struct matcher *m, struct keyed_filter *kf, uint64_t bits,
		       char *err, size_t errlen);

/*
 * While a rebuild's copy is being made (copying), changes are not logged:
 * an add lands past what is copied (a later slice takes it), and a remove
 * at index, just before the store moves its last key there, is mirrored
 * in the copy by copy_moves.
 */
bool matcher_rebuild_copying(const struct matcher_rebuild *r);
void matcher_rebuild_copy_moves(struct matcher *m, struct keyed_filter *kf, size_t index);

/*
 * Where a signature stands among the windows: the offset of the window it
 * is (or would be) indexed by, that window's index (-1: none yet) and the
 * id before it there; its own id if it is stored, else NO_SIG (prev: the
 * chain's last).
 */
struct sig_place {
	unsigned window;
	ssize_t index;
	uint32_t id, prev;
	uint64_t word;
	struct hash128 h;
};

/* The windows a signature may be indexed by: the first MATCHER_WINDOW_CANDIDATES offsets. */
#define MATCHER_WINDOW_CANDIDATES 64
struct sig_windows {
	unsigned n;
	uint64_t word[MATCHER_WINDOW_CANDIDATES];
	struct hash128 h[MATCHER_WINDOW_CANDIDATES];
};

/* matcher_windows.c: e found in whichever window holds it, else the window it should take; keys (or NULL): its windows. */
void matcher_place_signature(const struct matcher *m, const struct entry *e, struct sig_place *out,
			   struct sig_windows *keys);
/* p set to e's window at offset window (a snapshot's). */
void matcher_place_at(const struct matcher *m, const struct entry *e, unsigned window, struct sig_place *p);
/* After signature self (e) was added: the others indexed by a window it also contains move off it. */
void matcher_spread(struct matcher *m, const struct entry *e, uint32_t self, const struct sig_windows *keys);
/* dst's hot windows a copy of src's; -1 without memory. */
int matcher_hot_copy(struct matcher *dst, const struct matcher *src);
/* matcher_windows.c: a new window at p, indexed by id (heads); -1 (nothing changed) without memory. */
int matcher_new_window(struct matcher *m, const struct entry *e, struct sig_place *p, uint32_t id, int group,
		     char *err, size_t errlen);
/* The window at index gone (the store's last moves there, and its heads and word). */
void matcher_remove_window(struct matcher *m, size_t index);

/*
 * matcher_keys.c: the key just stored at index (its hash h) into its filter once built
 * (and a rebuild's log; before the build it waits, its group meaningful
 * only when restored); -1 without memory. And the key about to leave index
 * out of it.
 */
int matcher_filter_in(struct matcher *m, struct keyed_filter *kf, size_t index, struct hash128 h, bool restored,
		    char *err, size_t errlen);
void matcher_filter_out(struct matcher *m, struct keyed_filter *kf, size_t index);

/* One change: what its call was given. Records lie end to end in the log's arena. */
struct change {
	uint8_t op;                /* enum change_op */
	uint8_t kind;              /* the entry's */
	uint16_t len;              /* the key's bytes, which follow */
	uint32_t a, b;             /* holders; rehold's from and to; set_simd's level */
};

/* CHANGE_NAMED: an entry a rehold moved into or out of its "to" holders, for the views (matcher_log_entries); the rehold itself is replayed. */
enum change_op { CHANGE_HOLD, CHANGE_RELEASE, CHANGE_REHOLD, CHANGE_REMOVE, CHANGE_SIMD, CHANGE_NAMED };

/* The change at *at in log, and its key's bytes; *at moves past them. false at the end. */
bool matcher_log_next(const struct matcher_log *log, size_t *at, struct change *out, const uint8_t **key);
/* Whether a change could not be recorded: the log cannot make a copy what the matcher is. */
bool matcher_log_whole(const struct matcher_log *log);

#endif
