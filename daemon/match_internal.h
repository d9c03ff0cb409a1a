/* match_internal.h - the matcher's state, shared by the match files. */
#ifndef BLOOMD_MATCH_INTERNAL_H
#define BLOOMD_MATCH_INTERNAL_H

/*
 * Only the match files include this. They form a tree: match.c (the
 * per-packet checks, what the daemon asks of the matcher, and replaying a
 * log onto a copy) uses match_entries.c (the stores, the signature index
 * and its arena); both use match_rebuild.c (the filters' sizes, build and
 * rebuild); all three use match_log.c (the changes recorded, a plain buffer
 * that calls none of them).
 */

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "counting.h"
#include "match.h"
#include "sigscan.h"
#include "store.h"

#define ADDR_PROBES (3 + 2 * 129) /* addr src, addr dst, pair, and a net probe per side and length */
/* Positions level 1 scans at a time: most packets in one go, so the filter batches are long (10% at 1M). */
#define SIG_CHUNK 1024
#define MAX_PROBES (SIG_CHUNK > ADDR_PROBES ? SIG_CHUNK : ADDR_PROBES)
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
struct match_scratch {
	struct match_counters counters[MATCH_KINDS];
	uint64_t hits_dropped;
	const uint8_t *probe_key[ADDR_PROBES];   /* into the packet, or into net_key */
	uint8_t probe_len[ADDR_PROBES];
	uint8_t probe_kind[ADDR_PROBES];
	struct hash128 probe_hash[MAX_PROBES];
	bool probe_hit[MAX_PROBES];
	uint8_t net_key[ADDR_PROBES][24];       /* by probe number: prefix length + network, whole words */
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
	uint32_t next;             /* next signature with the same window, or NO_SIG */
	uint32_t holders;          /* who holds it (match.h) */
};

struct matcher {
	struct match_config cfg;
	bool built;
	enum simd_level simd;      /* the filters' and the prefilter's kernels at most this */
	struct match_rebuild *rebuilding; /* the rebuild in progress, or NULL */
	struct keyed_filter addr;  /* addr, net, pair */
	uint64_t kind_entries[MATCH_KINDS];
	uint32_t net_count[2][129]; /* [v4, v6][prefix length]: net entries */
	uint8_t net_lens[2][129];   /* the lengths in use, longest first */
	unsigned n_net_lens[2];

	struct keyed_filter sig;   /* the windows: the first W bytes of each signature */
	struct sigscan *scan;      /* window hashing and the per-byte prefilter */
	uint32_t *heads;           /* per window (store index): first signature id */
	uint64_t *words;           /* per window (store index): its word, for rebuilding the prefilter */
	size_t window_cap;         /* of heads and words */
	struct sig_entry *sigs;
	size_t nsigs, sigs_cap;
	uint32_t free_sigs;        /* removed ids, chained through next; reused first */
	struct arena sig_arena;    /* the signatures' bytes */

	uint64_t changes;          /* matcher_changes */
	struct match_log *log;     /* where its changes are recorded (matcher_record), or NULL */
	struct match_scratch own;  /* matcher_check's */
};

/*
 * A pair's hash is made from its two addresses' hashes, which a packet needs
 * for its addr probes anyway; the mix is asymmetric, so (a, b) and (b, a)
 * hash apart.
 */
static inline struct hash128 pair_hash(struct hash128 src, struct hash128 dst)
{
	struct hash128 h = {
		.lo = src.lo ^ dst.hi * 0x9e3779b97f4a7c15ULL,
		.hi = dst.lo ^ src.hi * 0xc2b2ae3d27d4eb4fULL,
	};
	return h;
}

static inline struct hash128 one_addr_hash(const struct matcher *m, const uint8_t *addr, size_t len)
{
	return hash_bytes_domain(&m->addr.key, ENTRY_ADDR, addr, len);
}

/* An address entry's hash; the kind selects the hash's domain. */
static inline struct hash128 addr_hash(const struct matcher *m, unsigned kind, const uint8_t *key,
				size_t len)
{
	if (kind == ENTRY_PAIR)
		return pair_hash(one_addr_hash(m, key, len / 2), one_addr_hash(m, key + len / 2, len / 2));
	return hash_bytes_domain(&m->addr.key, kind, key, len);
}

/* match_entries.c */

/* Bits per key of a filter: [0] addresses, [1] signature windows. */
double match_bits_per_key(const struct match_config *cfg, int sig);

/* match_log.c: record a change made (reshaped: one a copy cannot replay; it is copied whole). */
void match_log_hold(struct matcher *m, const struct entry *e, uint32_t holders);
void match_log_release(struct matcher *m, const struct entry *e, uint32_t holders);
void match_log_rehold(struct matcher *m, uint32_t from, uint32_t to);
void match_log_remove(struct matcher *m, const struct entry *e);
void match_log_simd(struct matcher *m, unsigned level);
void match_log_reshaped(struct matcher *m);

/* match_rebuild.c */

/* Queries of the counting store's filter with the best kernel up to level. */
void match_use_simd(struct counting *c, enum simd_level level);

/* An empty counting store for a filter that had none (its first key after the build). */
int match_counting_for(const struct matcher *m, struct keyed_filter *kf, uint64_t bits,
		       char *err, size_t errlen);

/* One change: what its call was given. Records lie end to end in the log's arena. */
struct change {
	uint8_t op;                /* enum change_op */
	uint8_t kind;              /* the entry's */
	uint16_t len;              /* the key's bytes, which follow */
	uint32_t a, b;             /* holders; rehold's from and to; set_simd's level */
};

enum change_op { CHANGE_HOLD, CHANGE_RELEASE, CHANGE_REHOLD, CHANGE_REMOVE, CHANGE_SIMD };

/* The change at *at in log, and its key's bytes; *at moves past them. false at the end. */
bool match_log_next(const struct match_log *log, size_t *at, struct change *out, const uint8_t **key);
/* Whether a change could not be recorded: the log cannot make a copy what the matcher is. */
bool match_log_whole(const struct match_log *log);

#endif
