/* match.c - per-packet checks: address and signature probes, confirmation, counters. */
#include "match.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "counting.h"
#include "error.h"
#include "sigscan.h"
#include "sizing.h"
#include "store.h"

#define MAX_PROBES (3 + 2 * 129)  /* addr src, addr dst, pair, and a net probe per side and length */
#define SIG_CHUNK 256 /* positions level 1 scans at a time; at most MAX_PROBES */
#define NO_SIG UINT32_MAX

/* Counting store plus the bookkeeping both filters share. */
struct keyed_filter {
	struct hash_key key;
	struct store *store;
	struct counting *counting; /* NULL until built, or while empty */
};

struct sig_entry {
	uint64_t offset;           /* into sig_arena */
	uint16_t len;
	uint32_t next;             /* next signature with the same window, or NO_SIG */
};

struct matcher {
	struct match_config cfg;
	bool built;
	struct keyed_filter addr;  /* addr, net, pair */
	uint64_t kind_entries[MATCH_KINDS];
	uint32_t net_count[2][129]; /* [v4, v6][prefix length]: net entries */
	uint8_t net_lens[2][129];   /* the lengths in use, longest first */
	unsigned n_net_lens[2];

	struct keyed_filter sig;   /* the windows: the first W bytes of each signature */
	struct sigscan *scan;      /* window hashing and the per-byte prefilter */
	uint32_t *heads;           /* per window (store index): first signature id */
	size_t heads_cap;
	struct sig_entry *sigs;
	size_t nsigs, sigs_cap;
	uint32_t free_sigs;        /* removed ids, chained through next; reused first */
	uint8_t *sig_arena;
	size_t arena_len, arena_cap, arena_garbage;

	struct match_counters counters[MATCH_KINDS];
	uint64_t hits_dropped;

	/* Scratch for one packet's probes (no allocation per packet). */
	const uint8_t *probe_key[MAX_PROBES];   /* into the packet, or into net_key */
	uint8_t probe_len[MAX_PROBES];
	uint8_t probe_kind[MAX_PROBES];
	struct hash128 probe_hash[MAX_PROBES];
	bool probe_hit[MAX_PROBES];
	uint8_t net_key[2 * 129][24];           /* prefix length + network, whole words */
};

static int keyed_filter_init(struct keyed_filter *kf, enum hash_algo algo)
{
	if (hash_key_random(&kf->key, algo) < 0)
		return -1;
	kf->store = store_new();
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
	m->free_sigs = NO_SIG;
	if (keyed_filter_init(&m->addr, cfg->algo) < 0 || keyed_filter_init(&m->sig, cfg->algo) < 0 ||
	    (m->scan = sigscan_new(cfg->window, &m->sig.key, err, errlen)) == NULL)
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
	store_free(m->addr.store);
	counting_free(m->addr.counting);
	store_free(m->sig.store);
	counting_free(m->sig.counting);
	sigscan_free(m->scan);
	free(m->heads);
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

static int counting_for(const struct matcher *m, struct keyed_filter *kf, uint64_t bits,
			char *err, size_t errlen);

/* Once built, a new key goes straight into its filter. */
static int filter_in(struct matcher *m, struct keyed_filter *kf, size_t index, char *err,
		     size_t errlen)
{
	if (!m->built)
		return 0;
	if (kf->counting == NULL &&
	    counting_for(m, kf, (uint64_t)ceil(1024 * (m->cfg.bits_per_entry > 0 ? m->cfg.bits_per_entry : 16)),
			 err, errlen) < 0)
		return -1;
	store_groups(kf->store)[index] =
		(uint8_t)counting_insert(kf->counting, store_hashes(kf->store)[index]);
	return 0;
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

static int add_address(struct matcher *m, const struct entry *e, char *err, size_t errlen)
{
	ssize_t index = store_add(m->addr.store, addr_hash(m, e->kind, e->key, e->len),
				  (uint8_t)e->kind, e->key, e->len, 0);

	if (index < 0) {
		if (errno == EEXIST)
			return 1;
		error_set(err, errlen, "out of memory adding an entry");
		return -1;
	}
	if (filter_in(m, &m->addr, (size_t)index, err, errlen) < 0)
		return -1;
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

static int add_signature(struct matcher *m, const struct entry *e, char *err, size_t errlen)
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
		    (index = store_add(m->sig.store, h, 0, e->key, w, 0)) < 0)
			goto nomem;
		m->heads[index] = id;
		if (filter_in(m, &m->sig, (size_t)index, err, errlen) < 0)
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
		return add_signature(m, e, err, errlen);
	return add_address(m, e, err, errlen);
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
	if (m->addr.counting)
		counting_remove(m->addr.counting, h, store_groups(m->addr.store)[at]);
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
static void remove_window(struct matcher *m, size_t index, struct hash128 h)
{
	size_t last = store_count(m->sig.store) - 1;

	if (m->sig.counting)
		counting_remove(m->sig.counting, h, store_groups(m->sig.store)[index]);
	store_remove(m->sig.store, index);
	m->heads[index] = m->heads[last]; /* the store moved its last window to index too */
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
		remove_window(m, (size_t)index, h);
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

/* ---- building ---- */

static int counting_for(const struct matcher *m, struct keyed_filter *kf, uint64_t bits,
			char *err, size_t errlen)
{
	const struct match_config *cfg = &m->cfg;
	uint64_t n = store_count(kf->store);
	struct filter_params p = { .layout = cfg->layout, .choices = cfg->choices };
	struct sizing_choice ch = { .hashes = cfg->hashes };
	uint64_t seed;

	p.bits = sizing_round_bits(cfg->layout, bits < FILTER_BLOCK_BITS ? FILTER_BLOCK_BITS : bits);
	if (ch.hashes == 0) {
		double bpe = n ? (double)p.bits / (double)n : 64.0;
		if (sizing_best(cfg->layout, cfg->choices, bpe > 64 ? 64 : bpe < 1 ? 1 : bpe,
				cfg->rounds, &ch, err, errlen) < 0)
			return -1;
	}
	p.hashes = ch.hashes;
	memcpy(&seed, kf->key.secret + 8, sizeof(seed));
	kf->counting = counting_new(&p, &kf->key, seed, err, errlen);
	if (kf->counting == NULL)
		return -1;
	const struct hash128 *h = store_hashes(kf->store);
	uint8_t *groups = store_groups(kf->store);
	for (uint64_t i = 0; i < n; i++)
		groups[i] = (uint8_t)counting_insert(kf->counting, h[i]);
	if (cfg->rounds > 1)
		counting_rebuild(kf->counting, h, groups, n, cfg->rounds - 1);
	return 0;
}

int matcher_build(struct matcher *m, char *err, size_t errlen)
{
	uint64_t na = store_count(m->addr.store), ns = store_count(m->sig.store);
	uint64_t bits_a, bits_s;

	if (m->cfg.rounds == 0)
		m->cfg.rounds = sizing_default_rounds(m->cfg.choices);
	if (m->cfg.memory) {
		/* Share the budget in proportion to the keys each filter holds. */
		uint64_t total = m->cfg.memory * 8;
		bits_a = na + ns ? (uint64_t)((double)total * (double)na / (double)(na + ns)) : 0;
		bits_s = total - bits_a;
		if (m->cfg.layout == FILTER_BLOCKED)
			bits_a -= bits_a % FILTER_BLOCK_BITS;
	} else {
		bits_a = (uint64_t)ceil((double)na * m->cfg.bits_per_entry);
		bits_s = (uint64_t)ceil((double)ns * m->cfg.bits_per_entry);
	}
	if ((na && counting_for(m, &m->addr, bits_a, err, errlen) < 0) ||
	    (ns && counting_for(m, &m->sig, bits_s, err, errlen) < 0))
		return -1;
	if (sigscan_reserve(m->scan, ns) < 0) {
		error_set(err, errlen, "out of memory for the signature prefilter");
		return -1;
	}
	for (size_t i = 0; i < ns; i++) {
		uint8_t kind;
		const uint8_t *window;
		size_t len;
		store_entry(m->sig.store, i, &kind, &window, &len);
		sigscan_add(m->scan, sigscan_word(m->scan, window));
	}
	m->built = true;
	return 0;
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

void matcher_set_simd(struct matcher *m, bool on)
{
	sigscan_set_simd(m->scan, on);
	if (m->addr.counting)
		m->addr.counting->filter->simd = on && m->addr.counting->filter->simd;
	if (m->sig.counting)
		m->sig.counting->filter->simd = on && m->sig.counting->filter->simd;
}

void matcher_filter_info(const struct matcher *m, int sig, struct match_filter_info *info)
{
	const struct keyed_filter *kf = sig ? &m->sig : &m->addr;

	memset(info, 0, sizeof(*info));
	info->entries = store_count(kf->store);
	info->store_bytes = store_bytes(kf->store);
	if (sig)
		info->store_bytes += m->sigs_cap * sizeof(*m->sigs) + m->arena_cap +
				     m->heads_cap * sizeof(*m->heads);
	if (kf->counting == NULL)
		return;
	const struct filter *f = counting_filter(kf->counting);
	info->bits = f->params.bits;
	info->choices = f->params.choices;
	info->hashes = f->params.hashes;
	info->bytes = filter_bytes(f);
	info->store_bytes += counting_bytes(kf->counting) - info->bytes;
	if (sig)
		info->bytes += sigscan_bytes(m->scan);
	info->fill = filter_fill(f);
	info->fpr_predicted = filter_fpr_from_fill(f);
}
