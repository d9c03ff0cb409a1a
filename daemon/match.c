/* match.c - per-packet checks: address and signature probes, confirmation, counters. */
#include "match.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "counting.h"
#include "error.h"
#include "sigscan.h"
#include "sizing.h"
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
	size_t heads_cap;
	uint64_t *words;           /* per window (store index): its word, for rebuilding the prefilter */
	size_t words_cap;
	struct sig_entry *sigs;
	size_t nsigs, sigs_cap;
	uint32_t free_sigs;        /* removed ids, chained through next; reused first */
	uint8_t *sig_arena;
	size_t arena_len, arena_cap, arena_garbage;

	struct match_counters counters[MATCH_KINDS];
	uint64_t hits_dropped;

	/* Scratch for one packet's probes (no allocation per packet). */
	const uint8_t *probe_key[ADDR_PROBES];   /* into the packet, or into net_key */
	uint8_t probe_len[ADDR_PROBES];
	uint8_t probe_kind[ADDR_PROBES];
	struct hash128 probe_hash[MAX_PROBES];
	bool probe_hit[MAX_PROBES];
	uint8_t net_key[ADDR_PROBES][24];       /* by probe number: prefix length + network, whole words */
};

static int keyed_filter_init(struct keyed_filter *kf, enum hash_algo algo,
			     const struct hash_key *key)
{
	if (key)
		kf->key = *key;
	else if (hash_key_random(&kf->key, algo) < 0)
		return -1;
	kf->store = store_new();
	kf->groups_valid = true; /* vacuously, while empty */
	return kf->store ? 0 : -1;
}

struct matcher *matcher_new(const struct match_config *cfg, char *err, size_t errlen)
{
	struct matcher *m;

	if (cfg->window < 1 || cfg->window > 64) {
		error_set(err, errlen, "signature window must be 1 to 64 bytes (got %u)", cfg->window);
		return NULL;
	}
	if (cfg->choices < 1 || cfg->choices > FILTER_MAX_CHOICES || cfg->hashes > FILTER_MAX_HASHES) {
		error_set(err, errlen, "choices must be 1 to 3 and hashes 0 (best) to %d",
			  FILTER_MAX_HASHES);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		goto nomem;
	m->cfg = *cfg;
	m->cfg.keys = NULL; /* copied below; the caller's array need not outlive this call */
	m->simd = simd_best();
	m->free_sigs = NO_SIG;
	if (keyed_filter_init(&m->addr, cfg->algo, cfg->keys ? &cfg->keys[0] : NULL) < 0 ||
	    keyed_filter_init(&m->sig, cfg->algo, cfg->keys ? &cfg->keys[1] : NULL) < 0 ||
	    (m->scan = sigscan_new(cfg->window, &m->sig.key, err, errlen)) == NULL ||
	    sigscan_reserve(m->scan, 0) < 0) /* signatures added before any is built need it */
		goto nomem;
	return m;
nomem:
	error_set(err, errlen, "out of memory (or no randomness for the hash secrets)");
	matcher_free(m);
	return NULL;
}

void matcher_free(struct matcher *m)
{
	if (m == NULL)
		return;
	matcher_rebuild_free(m, m->rebuilding);
	store_free(m->addr.store);
	counting_free(m->addr.counting);
	free(m->addr.log);
	store_free(m->sig.store);
	counting_free(m->sig.counting);
	free(m->sig.log);
	sigscan_free(m->scan);
	free(m->heads);
	free(m->words);
	free(m->sigs);
	free(m->sig_arena);
	free(m);
}

/* ---- hashing ---- */

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
static struct hash128 addr_hash(const struct matcher *m, unsigned kind, const uint8_t *key,
				size_t len)
{
	if (kind == ENTRY_PAIR)
		return pair_hash(one_addr_hash(m, key, len / 2), one_addr_hash(m, key + len / 2, len / 2));
	return hash_bytes_domain(&m->addr.key, kind, key, len);
}

/* ---- adding entries ---- */

/*
 * Bits per key of each filter: [0] addresses, [1] signature windows. The
 * signature filter only sees the positions level 1 passes, so it may have
 * fewer (bits_per_window).
 */
static double bits_per_key(const struct match_config *cfg, int sig)
{
	double bpe = cfg->bits_per_entry > 0 ? cfg->bits_per_entry : 16;

	return sig && cfg->bits_per_window > 0 ? cfg->bits_per_window : bpe;
}

static int counting_for(const struct matcher *m, struct keyed_filter *kf, uint64_t bits,
			char *err, size_t errlen);

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
 * A key just stored at index: once built it goes straight into the filter
 * (and into the log of a rebuild in progress); before that it waits for
 * matcher_build, its group meaningful only when restored.
 */
static int filter_in(struct matcher *m, struct keyed_filter *kf, size_t index, uint64_t word,
		     bool restored, char *err, size_t errlen)
{
	if (!m->built) {
		kf->groups_valid = kf->groups_valid && restored;
		return 0;
	}
	if (kf->counting == NULL &&
	    counting_for(m, kf, (uint64_t)ceil(1024 * bits_per_key(&m->cfg, kf == &m->sig)), err, errlen) < 0)
		return -1;
	struct hash128 h = store_hashes(kf->store)[index];
	store_groups(kf->store)[index] = (uint8_t)counting_insert(kf->counting, h);
	kf->changes++;
	if (m->rebuilding)
		log_op(kf, (struct store_op){ .add = true, .hash = h, .word = word });
	return 0;
}

/* A key about to leave index: out of its filter, and into the log of a rebuild in progress. */
static void filter_out(struct matcher *m, struct keyed_filter *kf, size_t index)
{
	if (kf->counting)
		counting_remove(kf->counting, store_hashes(kf->store)[index],
				store_groups(kf->store)[index]);
	kf->changes++;
	if (m->rebuilding)
		log_op(kf, (struct store_op){ .add = false, .index = (uint32_t)index });
}

/* The prefix lengths in use, longest first: one net probe per side and length. */
static void net_lengths_refresh(struct matcher *m, int v6)
{
	unsigned n = 0;

	for (int l = v6 ? 128 : 32; l >= 0; l--)
		if (m->net_count[v6][l])
			m->net_lens[v6][n++] = (uint8_t)l;
	m->n_net_lens[v6] = n;
}

static void net_length_used(struct matcher *m, int v6, unsigned len)
{
	if (m->net_count[v6][len]++ == 0)
		net_lengths_refresh(m, v6);
}

static int add_address(struct matcher *m, const struct entry *e, int group, char *err,
		       size_t errlen)
{
	ssize_t index = store_add(m->addr.store, addr_hash(m, e->kind, e->key, e->len),
				  (uint8_t)e->kind, e->key, e->len, (uint8_t)(group < 0 ? 0 : group));

	if (index < 0) {
		if (errno == EEXIST)
			return 1;
		error_set(err, errlen, "out of memory adding an entry");
		return -1;
	}
	if (filter_in(m, &m->addr, (size_t)index, 0, group >= 0, err, errlen) < 0) {
		store_remove(m->addr.store, (size_t)index);
		return -1;
	}
	m->kind_entries[e->kind]++;
	if (e->kind == ENTRY_NET)
		net_length_used(m, e->len == 17, e->key[0]);
	return 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static uint32_t new_sig(struct matcher *m, const struct entry *e)
{
	uint32_t id;

	if (grow((void **)&m->sig_arena, &m->arena_cap, m->arena_len + e->len, 1) < 0)
		return NO_SIG;
	if (m->free_sigs != NO_SIG) {
		id = m->free_sigs;
		m->free_sigs = m->sigs[id].next;
	} else {
		if (grow((void **)&m->sigs, &m->sigs_cap, m->nsigs + 1, sizeof(*m->sigs)) < 0)
			return NO_SIG;
		id = (uint32_t)m->nsigs++;
	}
	memcpy(m->sig_arena + m->arena_len, e->key, e->len);
	m->sigs[id] = (struct sig_entry){ m->arena_len, e->len, NO_SIG };
	m->arena_len += e->len;
	return id;
}

static int add_signature(struct matcher *m, const struct entry *e, int group, char *err,
			 size_t errlen)
{
	unsigned w = m->cfg.window;
	struct hash128 h;
	ssize_t index;
	uint32_t id;

	if (e->len < w) {
		error_set(err, errlen, "signature of %u bytes is shorter than the window (%u bytes)",
			  e->len, w);
		return -1;
	}
	uint64_t word = sigscan_word(m->scan, e->key);
	h = sigscan_hash(m->scan, word);
	index = store_find(m->sig.store, h, 0, e->key, w);
	if (index >= 0) {
		/* Walk by index: new_sig may move m->sigs, so no pointer into it survives. */
		uint32_t last = NO_SIG;
		for (uint32_t at = m->heads[index]; at != NO_SIG; last = at, at = m->sigs[at].next) {
			const struct sig_entry *s = &m->sigs[at];
			if (s->len == e->len && memcmp(m->sig_arena + s->offset, e->key, e->len) == 0)
				return 1;
		}
		if ((id = new_sig(m, e)) == NO_SIG)
			goto nomem;
		if (last == NO_SIG)
			m->heads[index] = id;
		else
			m->sigs[last].next = id;
	} else {
		if ((id = new_sig(m, e)) == NO_SIG ||
		    grow((void **)&m->heads, &m->heads_cap, store_count(m->sig.store) + 1, sizeof(*m->heads)) < 0 ||
		    grow((void **)&m->words, &m->words_cap, store_count(m->sig.store) + 1, sizeof(*m->words)) < 0 ||
		    (index = store_add(m->sig.store, h, 0, e->key, w, (uint8_t)(group < 0 ? 0 : group))) < 0)
			goto nomem;
		m->heads[index] = id;
		m->words[index] = word;
		if (filter_in(m, &m->sig, (size_t)index, word, group >= 0, err, errlen) < 0)
			return -1;
		if (m->built)
			sigscan_add(m->scan, word);
	}
	m->kind_entries[ENTRY_SIG]++;
	return 0;
nomem:
	error_set(err, errlen, "out of memory adding a signature");
	return -1;
}

int matcher_add(struct matcher *m, const struct entry *e, char *err, size_t errlen)
{
	if (e->kind == ENTRY_SIG)
		return add_signature(m, e, -1, err, errlen);
	return add_address(m, e, -1, err, errlen);
}

int matcher_add_restored(struct matcher *m, const struct entry *e, unsigned group, char *err,
			 size_t errlen)
{
	if (m->built || group >= FILTER_MAX_CHOICES) {
		error_set(err, errlen, m->built ? "the filters are built already" :
			  "group %u is out of range", group);
		return -1;
	}
	if (e->kind == ENTRY_SIG)
		return add_signature(m, e, (int)group, err, errlen);
	return add_address(m, e, (int)group, err, errlen);
}

/* ---- removing and looking up ---- */

static void net_length_unused(struct matcher *m, int v6, unsigned len)
{
	if (--m->net_count[v6][len] == 0)
		net_lengths_refresh(m, v6);
}

static int remove_address(struct matcher *m, const struct entry *e)
{
	struct hash128 h = addr_hash(m, e->kind, e->key, e->len);
	ssize_t at = store_find(m->addr.store, h, (uint8_t)e->kind, e->key, e->len);

	if (at < 0)
		return 1;
	filter_out(m, &m->addr, (size_t)at);
	store_remove(m->addr.store, (size_t)at);
	m->kind_entries[e->kind]--;
	if (e->kind == ENTRY_NET)
		net_length_unused(m, e->len == 17, e->key[0]);
	return 0;
}

/* Rewrite the signature arena without the bytes of removed signatures. */
static void sig_arena_compact(struct matcher *m)
{
	uint8_t *fresh = malloc(m->arena_len - m->arena_garbage + 1);
	size_t len = 0;

	if (fresh == NULL)
		return; /* keep the garbage; try again later */
	for (size_t w = 0; w < store_count(m->sig.store); w++)
		for (uint32_t id = m->heads[w]; id != NO_SIG; id = m->sigs[id].next) {
			memcpy(fresh + len, m->sig_arena + m->sigs[id].offset, m->sigs[id].len);
			m->sigs[id].offset = len;
			len += m->sigs[id].len;
		}
	free(m->sig_arena);
	m->sig_arena = fresh;
	m->arena_cap = m->arena_len - m->arena_garbage + 1;
	m->arena_len = len;
	m->arena_garbage = 0;
}

/* The last signature of a window takes the window with it (its prefilter bits stay). */
static void remove_window(struct matcher *m, size_t index)
{
	size_t last = store_count(m->sig.store) - 1;

	filter_out(m, &m->sig, index);
	store_remove(m->sig.store, index);
	m->heads[index] = m->heads[last]; /* the store moved its last window to index too */
	m->words[index] = m->words[last];
}

static int remove_signature(struct matcher *m, const struct entry *e)
{
	unsigned w = m->cfg.window;

	if (e->len < w)
		return 1;
	struct hash128 h = sigscan_hash(m->scan, sigscan_word(m->scan, e->key));
	ssize_t index = store_find(m->sig.store, h, 0, e->key, w);
	if (index < 0)
		return 1;
	uint32_t prev = NO_SIG, id = m->heads[index];
	for (; id != NO_SIG; prev = id, id = m->sigs[id].next)
		if (m->sigs[id].len == e->len &&
		    memcmp(m->sig_arena + m->sigs[id].offset, e->key, e->len) == 0)
			break;
	if (id == NO_SIG)
		return 1;
	if (prev == NO_SIG)
		m->heads[index] = m->sigs[id].next;
	else
		m->sigs[prev].next = m->sigs[id].next;
	m->arena_garbage += m->sigs[id].len;
	m->sigs[id].next = m->free_sigs;
	m->free_sigs = id;
	m->kind_entries[ENTRY_SIG]--;
	if (m->heads[index] == NO_SIG)
		remove_window(m, (size_t)index);
	if (m->arena_garbage > 4096 && m->arena_garbage * 2 > m->arena_len)
		sig_arena_compact(m);
	return 0;
}

int matcher_remove(struct matcher *m, const struct entry *e)
{
	return e->kind == ENTRY_SIG ? remove_signature(m, e) : remove_address(m, e);
}

bool matcher_lookup(const struct matcher *m, const struct entry *e, bool *filter_says)
{
	*filter_says = false;
	if (e->kind != ENTRY_SIG) {
		struct hash128 h = addr_hash(m, e->kind, e->key, e->len);
		if (m->addr.counting)
			*filter_says = filter_query(counting_filter(m->addr.counting), h);
		return store_find(m->addr.store, h, (uint8_t)e->kind, e->key, e->len) >= 0;
	}
	if (e->len < m->cfg.window)
		return false;
	struct hash128 h = sigscan_hash(m->scan, sigscan_word(m->scan, e->key));
	if (m->sig.counting)
		*filter_says = filter_query(counting_filter(m->sig.counting), h);
	ssize_t index = store_find(m->sig.store, h, 0, e->key, m->cfg.window);
	for (uint32_t id = index < 0 ? NO_SIG : m->heads[index]; id != NO_SIG; id = m->sigs[id].next)
		if (m->sigs[id].len == e->len &&
		    memcmp(m->sig_arena + m->sigs[id].offset, e->key, e->len) == 0)
			return true;
	return false;
}

/* ---- building and rebuilding ---- */

/* A filter of about bits bits for n keys, shaped by the configuration. */
static int params_for(const struct match_config *cfg, uint64_t bits, uint64_t n,
		      struct filter_params *p, char *err, size_t errlen)
{
	struct sizing_choice ch = { .hashes = cfg->hashes };

	*p = (struct filter_params){ .layout = cfg->layout, .choices = cfg->choices };
	p->bits = sizing_round_bits(cfg->layout, bits < FILTER_BLOCK_BITS ? FILTER_BLOCK_BITS : bits);
	if (ch.hashes == 0) {
		double bpe = n ? (double)p->bits / (double)n : 64.0;
		if (sizing_best(cfg->layout, cfg->choices, bpe > 64 ? 64 : bpe < 1 ? 1 : bpe,
				cfg->rounds, &ch, err, errlen) < 0)
			return -1;
	}
	p->hashes = ch.hashes;
	return 0;
}

static uint64_t counting_seed(const struct keyed_filter *kf)
{
	uint64_t seed;

	memcpy(&seed, kf->key.secret + 8, sizeof(seed));
	return seed;
}

/* Queries of the counting store's filter with the best kernel up to level. */
static void use_simd(struct counting *c, enum simd_level level)
{
	(void)filter_set_simd(c->filter, simd_capped(level)); /* the scalar kernel never fails */
}

/* An empty counting store for a filter that had none (its first key after the build). */
static int counting_for(const struct matcher *m, struct keyed_filter *kf, uint64_t bits,
			char *err, size_t errlen)
{
	struct filter_params p;

	if (params_for(&m->cfg, bits, 1, &p, err, errlen) < 0)
		return -1;
	kf->counting = counting_new(&p, &kf->key, counting_seed(kf), err, errlen);
	if (kf->counting)
		use_simd(kf->counting, m->simd);
	return kf->counting ? 0 : -1;
}

/* The bits each filter should have for the entries stored now: [0] addresses, [1] signatures. */
static void wanted_bits(const struct matcher *m, uint64_t bits[2])
{
	double want[2] = { (double)store_count(m->addr.store) * bits_per_key(&m->cfg, 0),
			   (double)store_count(m->sig.store) * bits_per_key(&m->cfg, 1) };

	if (m->cfg.memory) {
		/* Share the budget in proportion to what each filter would have by bits per key. */
		uint64_t total = m->cfg.memory * 8;
		bits[0] = want[0] + want[1] > 0 ? (uint64_t)((double)total * want[0] / (want[0] + want[1])) : 0;
		bits[1] = total - bits[0];
		if (m->cfg.layout == FILTER_BLOCKED)
			bits[0] -= bits[0] % FILTER_BLOCK_BITS;
	} else {
		bits[0] = (uint64_t)ceil(want[0]);
		bits[1] = (uint64_t)ceil(want[1]);
	}
}

/* One filter's share of a rebuild: private copies in, a new counting store out. */
struct rebuild_part {
	bool active;
	struct filter_params params;
	struct hash_key key;
	uint64_t seed;
	bool groups_valid;         /* groups[] are counted groups (same choices) */
	size_t n, cap;
	struct hash128 *hashes;
	uint8_t *groups;
	uint64_t *words;           /* signatures: each window's word, for the new prefilter */
	struct counting *counting; /* the result */
	struct store_op *taken;    /* changes handed over by matcher_rebuild_catch_up */
	size_t ntaken;
};

struct match_rebuild {
	unsigned rounds, window;
	enum simd_level simd;
	atomic_bool stop;            /* set from another thread: run gives up between rounds */
	struct rebuild_part part[2]; /* addresses, signatures */
	struct sigscan *scan;        /* the new prefilter */
};

static void part_free(struct rebuild_part *p)
{
	free(p->hashes);
	free(p->groups);
	free(p->words);
	free(p->taken);
	counting_free(p->counting);
}

void matcher_rebuild_free(struct matcher *m, struct match_rebuild *r)
{
	if (r == NULL)
		return;
	if (m && m->rebuilding == r)
		m->rebuilding = NULL;
	for (int i = 0; i < 2; i++)
		part_free(&r->part[i]);
	sigscan_free(r->scan);
	free(r);
}

/* Room for n keys (touched, so that the copy into it does not page-fault in the loop). */
static int part_reserve(struct rebuild_part *p, size_t n, bool words)
{
	if (n <= p->cap)
		return 0;
	struct hash128 *h = realloc(p->hashes, n * sizeof(*h));
	if (h)
		p->hashes = h;
	uint8_t *g = realloc(p->groups, n);
	if (g)
		p->groups = g;
	uint64_t *w = words ? realloc(p->words, n * sizeof(*w)) : NULL;
	if (w)
		p->words = w;
	if (h == NULL || g == NULL || (words && w == NULL))
		return -1;
	memset(p->hashes, 0, n * sizeof(*h));
	memset(p->groups, 0, n);
	if (words)
		memset(p->words, 0, n * sizeof(*w));
	p->cap = n;
	return 0;
}

struct match_rebuild *matcher_rebuild_prepare(uint64_t addr_keys, uint64_t sig_windows)
{
	struct match_rebuild *r = calloc(1, sizeof(*r));

	if (r && (part_reserve(&r->part[0], addr_keys, false) < 0 ||
		  part_reserve(&r->part[1], sig_windows, true) < 0)) {
		matcher_rebuild_free(NULL, r);
		return NULL;
	}
	return r;
}

bool matcher_rebuild_prepared_for(const struct match_rebuild *r, const struct matcher *m)
{
	return store_count(m->addr.store) <= r->part[0].cap && store_count(m->sig.store) <= r->part[1].cap;
}

uint64_t matcher_keys_count(const struct matcher *m, int sig)
{
	return store_count(sig ? m->sig.store : m->addr.store);
}

/* Copy what the worker needs of one filter. */
static int part_begin(const struct matcher *m, const struct keyed_filter *kf,
		      const struct filter_params *given, uint64_t bits, struct rebuild_part *p,
		      char *err, size_t errlen)
{
	size_t n = store_count(kf->store);
	bool sig = kf == &m->sig;

	if (n == 0)
		return 0;
	if (given && given->bits) /* given, for a filter that existed */
		p->params = *given;
	else if (params_for(&m->cfg, bits, n, &p->params, err, errlen) < 0)
		return -1;
	if (filter_params_check(&p->params, err, errlen) < 0)
		return -1;
	if (part_reserve(p, n, sig) < 0) {
		error_set(err, errlen, "out of memory copying %zu keys for a rebuild", n);
		return -1;
	}
	p->active = true;
	p->key = kf->key;
	p->seed = counting_seed(kf);
	p->groups_valid = kf->groups_valid &&
			  (kf->counting == NULL || kf->counting->params.choices == p->params.choices) &&
			  (m->built || (given && given->bits));
	p->n = n;
	memcpy(p->hashes, store_hashes(kf->store), n * sizeof(*p->hashes));
	memcpy(p->groups, store_groups((struct store *)kf->store), n);
	if (sig)
		memcpy(p->words, m->words, n * sizeof(*p->words));
	for (size_t i = 0; i < n && p->groups_valid; i++)
		p->groups_valid = p->groups[i] < p->params.choices; /* restored from other parameters */
	return 0;
}

struct match_rebuild *matcher_rebuild_begin(struct matcher *m, struct match_rebuild *prepared,
					    unsigned rounds, const struct filter_params *params,
					    char *err, size_t errlen)
{
	struct match_rebuild *r = prepared;
	uint64_t bits[2];

	if (m->rebuilding) {
		error_set(err, errlen, "a rebuild is running already");
		matcher_rebuild_free(NULL, prepared);
		return NULL;
	}
	if (r == NULL && (r = calloc(1, sizeof(*r))) == NULL) {
		error_set(err, errlen, "out of memory for a rebuild");
		return NULL;
	}
	r->rounds = rounds;
	r->window = m->cfg.window;
	r->simd = m->simd;
	wanted_bits(m, bits);
	if (part_begin(m, &m->addr, params ? &params[0] : NULL, bits[0], &r->part[0], err, errlen) < 0 ||
	    part_begin(m, &m->sig, params ? &params[1] : NULL, bits[1], &r->part[1], err, errlen) < 0) {
		matcher_rebuild_free(m, r);
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		struct keyed_filter *kf = i ? &m->sig : &m->addr;
		kf->nlog = 0;
		kf->log_lost = false;
	}
	m->rebuilding = r;
	return r;
}

/* Count every key in a new store: in its group if known, else greedily; then the rounds. */
static int part_run(struct rebuild_part *p, unsigned rounds, const atomic_bool *stop, char *err,
		    size_t errlen)
{
	p->counting = counting_new(&p->params, &p->key, p->seed, err, errlen);
	if (p->counting == NULL)
		return -1;
	if (p->groups_valid) {
		for (size_t i = 0; i < p->n; i++)
			counting_add(p->counting, p->hashes[i], p->groups[i]);
	} else {
		for (size_t i = 0; i < p->n; i++)
			p->groups[i] = (uint8_t)counting_insert(p->counting, p->hashes[i]);
		rounds = rounds ? rounds - 1 : 0; /* the greedy pass was the first round */
	}
	for (unsigned round = 0; round < rounds; round++) {
		if (atomic_load_explicit(stop, memory_order_relaxed)) {
			error_set(err, errlen, "the rebuild was called off");
			return -1;
		}
		counting_rebuild(p->counting, p->hashes, p->groups, p->n, 1);
	}
	return 0;
}

void matcher_rebuild_stop(struct match_rebuild *r)
{
	atomic_store(&r->stop, true);
}

int matcher_rebuild_run(struct match_rebuild *r, char *err, size_t errlen)
{
	struct rebuild_part *sig = &r->part[1];

	for (int i = 0; i < 2; i++)
		if (r->part[i].active && part_run(&r->part[i], r->rounds, &r->stop, err, errlen) < 0)
			return -1;
	if (!sig->active)
		return 0;
	r->scan = sigscan_new(r->window, &sig->key, err, errlen);
	if (r->scan == NULL || sigscan_reserve(r->scan, sig->n) < 0) {
		error_set(err, errlen, "out of memory for the signature prefilter");
		return -1;
	}
	for (size_t i = 0; i < sig->n; i++)
		sigscan_add(r->scan, sig->words[i]);
	sigscan_set_simd(r->scan, r->simd);
	return 0;
}

/* Apply changes logged since the copy, mirroring the store's index moves. */
static int part_apply(struct rebuild_part *p, const struct store_op *ops, size_t nops,
		      struct sigscan *scan)
{
	for (size_t i = 0; i < nops; i++) {
		const struct store_op *op = &ops[i];
		if (op->add) {
			if (p->n == p->cap) {
				size_t cap = 2 * p->cap + 64;
				struct hash128 *h = realloc(p->hashes, cap * sizeof(*h));
				if (h)
					p->hashes = h;
				uint8_t *g = realloc(p->groups, cap);
				if (g)
					p->groups = g;
				if (h == NULL || g == NULL)
					return -1;
				p->cap = cap;
			}
			p->hashes[p->n] = op->hash;
			p->groups[p->n] = (uint8_t)counting_insert(p->counting, op->hash);
			p->n++;
			if (scan)
				sigscan_add(scan, op->word);
		} else {
			size_t at = op->index, last = --p->n;
			counting_remove(p->counting, p->hashes[at], p->groups[at]);
			p->hashes[at] = p->hashes[last];
			p->groups[at] = p->groups[last];
		}
	}
	return 0;
}

size_t matcher_rebuild_catch_up(struct matcher *m, struct match_rebuild *r)
{
	size_t moved = 0;

	for (int i = 0; i < 2; i++) {
		struct keyed_filter *kf = i ? &m->sig : &m->addr;
		struct rebuild_part *p = &r->part[i];
		if (!p->active || p->ntaken)
			continue;
		free(p->taken);
		p->taken = kf->log;
		p->ntaken = kf->nlog;
		moved += kf->nlog;
		kf->log = NULL;
		kf->nlog = kf->log_cap = 0;
	}
	return moved;
}

int matcher_rebuild_apply(struct match_rebuild *r, char *err, size_t errlen)
{
	for (int i = 0; i < 2; i++) {
		struct rebuild_part *p = &r->part[i];
		if (p->active && part_apply(p, p->taken, p->ntaken, i ? r->scan : NULL) < 0) {
			error_set(err, errlen, "out of memory replaying the changes made during the rebuild");
			return -1;
		}
		p->ntaken = 0;
	}
	return 0;
}

int matcher_rebuild_finish(struct matcher *m, struct match_rebuild *r, char *err, size_t errlen)
{
	int rc = 0;

	for (int i = 0; i < 2 && rc == 0; i++) {
		struct keyed_filter *kf = i ? &m->sig : &m->addr;
		struct rebuild_part *p = &r->part[i];
		if (kf->log_lost || p->ntaken ||
		    (p->active && (part_apply(p, kf->log, kf->nlog, i ? r->scan : NULL) < 0 ||
				   p->n != store_count(kf->store)))) {
			error_set(err, errlen, "out of memory replaying the changes made during the rebuild");
			rc = -1;
		}
	}
	for (int i = 0; i < 2 && rc == 0; i++) {
		struct keyed_filter *kf = i ? &m->sig : &m->addr;
		struct rebuild_part *p = &r->part[i];
		if (!p->active)
			continue;
		memcpy(store_groups(kf->store), p->groups, p->n);
		counting_free(kf->counting);
		kf->counting = p->counting;
		p->counting = NULL;
		use_simd(kf->counting, m->simd);
		kf->groups_valid = true;
		kf->changes = 0;
	}
	if (rc == 0 && r->scan) {
		sigscan_free(m->scan);
		m->scan = r->scan;
		r->scan = NULL;
	}
	if (rc == 0)
		m->built = true;
	matcher_rebuild_free(m, r);
	return rc;
}

static int rebuild_now(struct matcher *m, unsigned rounds, const struct filter_params *params,
		       char *err, size_t errlen)
{
	struct match_rebuild *r = matcher_rebuild_begin(m, NULL, rounds, params, err, errlen);

	if (r == NULL)
		return -1;
	if (matcher_rebuild_run(r, err, errlen) < 0) {
		matcher_rebuild_free(m, r);
		return -1;
	}
	return matcher_rebuild_finish(m, r, err, errlen);
}

int matcher_build(struct matcher *m, char *err, size_t errlen)
{
	if (m->cfg.rounds == 0)
		m->cfg.rounds = sizing_default_rounds(m->cfg.choices);
	return rebuild_now(m, m->cfg.rounds, NULL, err, errlen);
}

int matcher_build_restored(struct matcher *m, const struct filter_params params[2], char *err,
			   size_t errlen)
{
	if (m->cfg.rounds == 0)
		m->cfg.rounds = sizing_default_rounds(m->cfg.choices);
	return rebuild_now(m, 0, params, err, errlen);
}

bool matcher_rebuild_wanted(const struct matcher *m, double fpr_target)
{
	uint64_t bits[2];

	if (m->rebuilding || !m->built)
		return false;
	wanted_bits(m, bits);
	for (int i = 0; i < 2; i++) {
		const struct keyed_filter *kf = i ? &m->sig : &m->addr;
		uint64_t n = store_count(kf->store);
		if (kf->counting == NULL || n == 0)
			continue;
		const struct filter *f = counting_filter(kf->counting);
		double have = (double)f->params.bits;
		bits[i] = sizing_round_bits(m->cfg.layout, bits[i] < FILTER_BLOCK_BITS ? FILTER_BLOCK_BITS : bits[i]);
		bool changed = kf->changes * 10 >= n;
		/* Resize: sized for the entries now, it takes a quarter more of them to want it again. */
		if (have > 2 * (double)bits[i] || 1.25 * have < (double)bits[i])
			return true;
		if (changed && (filter_fill(f) > 0.5 ||
				(fpr_target > 0 && filter_fpr_from_fill(f) > fpr_target)))
			return true;
	}
	return false;
}

/* ---- per packet ---- */

static size_t add_hit(struct matcher *m, struct match_hit *hits, size_t n, size_t max,
		      enum entry_kind kind, uint32_t id, uint32_t offset)
{
	for (size_t i = 0; i < n; i++)
		if (hits[i].kind == kind && hits[i].id == id)
			return n; /* each entry once a packet */
	if (n == max) {
		m->hits_dropped++; /* matched, but past what one event reports */
		return n;
	}
	hits[n] = (struct match_hit){ kind, id, offset };
	return n + 1;
}

static size_t put_probe(struct matcher *m, size_t n, enum entry_kind kind, const uint8_t *key,
			size_t len, struct hash128 h)
{
	m->probe_key[n] = key;
	m->probe_len[n] = (uint8_t)len;
	m->probe_kind[n] = (uint8_t)kind;
	m->probe_hash[n] = h;
	return n + 1;
}

/* A net key, prefix length then network address, built with whole-word stores. */
static size_t put_net_probe(struct matcher *m, size_t n, const uint8_t *addr, size_t alen,
			    unsigned plen)
{
	uint8_t *k = m->net_key[n];
	uint64_t w[2] = { 0, 0 };

	memcpy(w, addr, alen);
	for (int i = 0; i < 2; i++) {
		unsigned bits = plen > 64u * i ? plen - 64u * i : 0; /* of this word kept */
		uint64_t keep = bits >= 64 ? ~0ULL : bits ? ~0ULL << (64 - bits) : 0;
		w[i] &= __builtin_bswap64(keep); /* the address is big-endian in memory */
	}
	k[0] = (uint8_t)plen;
	memcpy(k + 1, w, 16);
	return put_probe(m, n, ENTRY_NET, k, 1 + alen, addr_hash(m, ENTRY_NET, k, 1 + alen));
}

static size_t check_addresses(struct matcher *m, const struct packet_view *v,
			      struct match_hit *hits, size_t n, size_t max)
{
	size_t alen = v->family == 4 ? 4 : 16, probes = 0;
	int v6 = v->family == 6;

	if (m->kind_entries[ENTRY_ADDR] || m->kind_entries[ENTRY_PAIR]) {
		struct hash128 hs = one_addr_hash(m, v->src, alen), hd = one_addr_hash(m, v->dst, alen);
		if (m->kind_entries[ENTRY_ADDR]) {
			probes = put_probe(m, probes, ENTRY_ADDR, v->src, alen, hs);
			probes = put_probe(m, probes, ENTRY_ADDR, v->dst, alen, hd);
		}
		/* Source and destination are adjacent in both IP headers: the pair key is already there. */
		if (m->kind_entries[ENTRY_PAIR] && v->dst == v->src + alen)
			probes = put_probe(m, probes, ENTRY_PAIR, v->src, 2 * alen, pair_hash(hs, hd));
	}
	for (unsigned i = 0; i < m->n_net_lens[v6]; i++) {
		probes = put_net_probe(m, probes, v->src, alen, m->net_lens[v6][i]);
		probes = put_net_probe(m, probes, v->dst, alen, m->net_lens[v6][i]);
	}
	filter_query_batch(counting_filter(m->addr.counting), m->probe_hash, probes, m->probe_hit);
	for (size_t i = 0; i < probes; i++) {
		enum entry_kind kind = m->probe_kind[i];
		struct match_counters *c = &m->counters[kind];
		c->probes++;
		if (!m->probe_hit[i])
			continue;
		c->positives++;
		ssize_t at = store_find(m->addr.store, m->probe_hash[i], (uint8_t)kind,
					m->probe_key[i], m->probe_len[i]);
		if (at < 0)
			continue;
		c->confirmed++;
		n = add_hit(m, hits, n, max, kind, (uint32_t)at, 0);
	}
	return n;
}

/* A window the filter accepted: find it exactly, then every signature that starts with it. */
static size_t confirm_window(struct matcher *m, const uint8_t *payload, size_t len, size_t at,
			     struct hash128 h, struct match_hit *hits, size_t n, size_t max)
{
	ssize_t index = store_find(m->sig.store, h, 0, payload + at, m->cfg.window);
	bool matched = false;

	if (index < 0)
		return n;
	for (uint32_t id = m->heads[index]; id != NO_SIG; id = m->sigs[id].next) {
		const struct sig_entry *s = &m->sigs[id];
		if (at + s->len <= len && memcmp(m->sig_arena + s->offset, payload + at, s->len) == 0) {
			matched = true;
			n = add_hit(m, hits, n, max, ENTRY_SIG, id, (uint32_t)at);
		}
	}
	m->counters[ENTRY_SIG].confirmed += matched;
	return n;
}

/* Level 1 picks the candidate positions; the signature filter and then the store confirm. */
static size_t check_signatures(struct matcher *m, const uint8_t *p, size_t len,
			       struct match_hit *hits, size_t n, size_t max)
{
	const struct filter *f = counting_filter(m->sig.counting);
	size_t positions = len - m->cfg.window + 1;
	uint32_t candidates[SIG_CHUNK];

	for (size_t from = 0; from < positions;) {
		size_t count = sigscan_candidates(m->scan, p, positions, from, candidates, SIG_CHUNK, &from);
		for (size_t j = 0; j < count; j++)
			m->probe_hash[j] = sigscan_hash(m->scan, sigscan_word(m->scan, p + candidates[j]));
		filter_query_batch(f, m->probe_hash, count, m->probe_hit);
		for (size_t j = 0; j < count; j++) {
			if (!m->probe_hit[j])
				continue;
			m->counters[ENTRY_SIG].positives++;
			n = confirm_window(m, p, len, candidates[j], m->probe_hash[j], hits, n, max);
		}
	}
	m->counters[ENTRY_SIG].probes += positions;
	return n;
}

size_t matcher_check(struct matcher *m, const struct packet_view *v, struct match_hit *hits,
		     size_t max)
{
	size_t n = 0;

	if (v->family != 0 && m->addr.counting != NULL)
		n = check_addresses(m, v, hits, n, max);
	if (v->payload != NULL && m->sig.counting != NULL && v->payload_len >= m->cfg.window)
		n = check_signatures(m, v->payload, v->payload_len, hits, n, max);
	return n;
}

void matcher_hit_key(const struct matcher *m, const struct match_hit *hit, const uint8_t **key,
		     size_t *len)
{
	if (hit->kind == ENTRY_SIG) {
		*key = m->sig_arena + m->sigs[hit->id].offset;
		*len = m->sigs[hit->id].len;
	} else {
		uint8_t kind;
		store_entry(m->addr.store, hit->id, &kind, key, len);
	}
}

const struct match_counters *matcher_counters(const struct matcher *m, enum entry_kind kind)
{
	return &m->counters[kind];
}

uint64_t matcher_hits_dropped(const struct matcher *m)
{
	return m->hits_dropped;
}

uint64_t matcher_entries(const struct matcher *m, enum entry_kind kind)
{
	return m->kind_entries[kind];
}

int matcher_set_simd(struct matcher *m, enum simd_level level)
{
	if (!simd_cpu_has(level))
		return -1;
	m->simd = level;
	if (m->scan)
		sigscan_set_simd(m->scan, level);
	if (m->addr.counting)
		use_simd(m->addr.counting, level);
	if (m->sig.counting)
		use_simd(m->sig.counting, level);
	return 0;
}

void matcher_filter_info(const struct matcher *m, int sig, struct match_filter_info *info)
{
	const struct keyed_filter *kf = sig ? &m->sig : &m->addr;

	memset(info, 0, sizeof(*info));
	info->kernel = simd_capped(m->simd);
	info->scan_kernel = m->scan ? sigscan_simd(m->scan) : SIMD_SCALAR;
	info->entries = store_count(kf->store);
	info->store_bytes = store_bytes(kf->store);
	if (sig)
		info->store_bytes += m->sigs_cap * sizeof(*m->sigs) + m->arena_cap +
				     m->heads_cap * sizeof(*m->heads) + m->words_cap * sizeof(*m->words);
	if (kf->counting == NULL)
		return;
	const struct filter *f = counting_filter(kf->counting);
	info->bits = f->params.bits;
	info->choices = f->params.choices;
	info->hashes = f->params.hashes;
	info->bytes = filter_bytes(f);
	info->kernel = filter_simd(f);
	info->store_bytes += counting_bytes(kf->counting) - info->bytes;
	if (sig)
		info->bytes += sigscan_bytes(m->scan);
	info->fill = filter_fill(f);
	info->fpr_predicted = filter_fpr_from_fill(f);
}

void matcher_keys(const struct matcher *m, struct hash_key keys[2])
{
	keys[0] = m->addr.key;
	keys[1] = m->sig.key;
}

bool matcher_params(const struct matcher *m, int sig, struct filter_params *p)
{
	const struct keyed_filter *kf = sig ? &m->sig : &m->addr;

	if (kf->counting == NULL)
		return false;
	*p = kf->counting->params;
	return true;
}

int matcher_foreach(const struct matcher *m, enum entry_kind only, match_entry_cb cb, void *ctx)
{
	struct entry e;
	int rc = 0;

	for (size_t i = 0; i < store_count(m->addr.store) && rc == 0; i++) {
		uint8_t kind;
		const uint8_t *key;
		size_t len;
		store_entry(m->addr.store, i, &kind, &key, &len);
		if (only && kind != only)
			continue;
		e.kind = kind;
		e.len = (uint16_t)len;
		memcpy(e.key, key, len);
		rc = cb(ctx, &e, m->addr.store->groups[i]);
	}
	if (only && only != ENTRY_SIG)
		return rc;
	e.kind = ENTRY_SIG;
	for (size_t w = 0; w < store_count(m->sig.store) && rc == 0; w++)
		for (uint32_t id = m->heads[w]; id != NO_SIG && rc == 0; id = m->sigs[id].next) {
			e.len = m->sigs[id].len;
			memcpy(e.key, m->sig_arena + m->sigs[id].offset, e.len);
			rc = cb(ctx, &e, m->sig.store->groups[w]);
		}
	return rc;
}

int matcher_reconfigure(struct matcher *m, const struct match_config *cfg, char *err, size_t errlen)
{
	struct match_config *now = &m->cfg;
	unsigned rounds = cfg->rounds ? cfg->rounds : sizing_default_rounds(cfg->choices);
	bool changed;

	if (cfg->choices < 1 || cfg->choices > FILTER_MAX_CHOICES || cfg->hashes > FILTER_MAX_HASHES) {
		error_set(err, errlen, "choices must be 1 to 3 and hashes 0 (best) to %d",
			  FILTER_MAX_HASHES);
		return -1;
	}
	changed = cfg->layout != now->layout || cfg->choices != now->choices ||
		  cfg->hashes != now->hashes || rounds != now->rounds || cfg->memory != now->memory ||
		  cfg->bits_per_entry != now->bits_per_entry || cfg->bits_per_window != now->bits_per_window;
	now->layout = cfg->layout;
	now->choices = cfg->choices;
	now->hashes = cfg->hashes;
	now->rounds = rounds;
	now->memory = cfg->memory;
	now->bits_per_entry = cfg->bits_per_entry;
	now->bits_per_window = cfg->bits_per_window;
	return changed;
}

unsigned matcher_rounds(const struct matcher *m)
{
	return m->cfg.rounds ? m->cfg.rounds : sizing_default_rounds(m->cfg.choices);
}
