/* matcher.c - per-packet checks: address and signature probes, confirmation, counters. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "matcher.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "matcher_internal.h"

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

struct matcher *matcher_new(const struct matcher_config *cfg, char *err, size_t errlen)
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
	free(m->hot);
	free(m->sigs);
	arena_free(&m->sig_arena);
	free(m);
}

static int keyed_filter_copy(struct keyed_filter *dst, const struct keyed_filter *src)
{
	*dst = (struct keyed_filter){ .key = src->key, .groups_valid = src->groups_valid, .changes = src->changes };
	dst->store = store_clone(src->store);
	if (src->counting)
		dst->counting = counting_clone(src->counting);
	return dst->store == NULL || (src->counting && dst->counting == NULL) ? -1 : 0;
}

struct matcher *matcher_clone(const struct matcher *m)
{
	struct matcher *c = malloc(sizeof(*c));
	bool failed = false;

	if (c == NULL)
		return NULL;
	*c = *m;
	c->rebuilding = NULL;
	c->log = NULL;
	c->addr.store = c->sig.store = NULL;
	c->addr.counting = c->sig.counting = NULL;
	c->addr.log = c->sig.log = NULL;
	c->heads = array_dup(m->heads, m->window_cap * sizeof(*m->heads), &failed);
	c->words = array_dup(m->words, m->window_cap * sizeof(*m->words), &failed);
	c->sigs = array_dup(m->sigs, m->sigs_cap * sizeof(*m->sigs), &failed);
	c->scan = sigscan_clone(m->scan);
	failed |= matcher_hot_copy(c, m) < 0;
	c->own = (struct matcher_scratch){ 0 };
	c->sig_arena = (struct arena){ 0 };
	if (failed || c->scan == NULL || keyed_filter_copy(&c->addr, &m->addr) < 0 ||
	    keyed_filter_copy(&c->sig, &m->sig) < 0 || arena_copy(&c->sig_arena, &m->sig_arena) < 0) {
		matcher_free(c);
		return NULL;
	}
	return c;
}

uint64_t matcher_changes(const struct matcher *m)
{
	return m->changes;
}

/* ---- per packet ---- */

static size_t add_hit(struct matcher_scratch *sc, struct matcher_hit *hits, size_t n, size_t max,
		      enum entry_kind kind, uint32_t id, uint32_t offset)
{
	for (size_t i = 0; i < n; i++)
		if (hits[i].kind == kind && hits[i].id == id)
			return n; /* each entry once a packet */
	if (n == max) {
		sc->hits_dropped++; /* matched, but past what one event reports */
		return n;
	}
	hits[n] = (struct matcher_hit){ kind, id, offset };
	return n + 1;
}

static size_t put_probe(struct matcher_scratch *sc, size_t n, size_t packet, enum entry_kind kind, const uint8_t *key,
			size_t len, struct hash128 h)
{
	sc->counters[kind].probes++; /* kind is a constant where this is inlined: one add */
	sc->probe_packet[n] = (uint8_t)packet;
	sc->probe_key[n] = key;
	sc->probe_len[n] = (uint8_t)len;
	sc->probe_kind[n] = (uint8_t)kind;
	sc->probe_hash[n] = h;
	return n + 1;
}

/* A net entry's key for the plen-bit prefix of addr: prefix length, network (whole words). */
static void net_key_of(const uint8_t *addr, size_t alen, unsigned plen, uint8_t k[24])
{
	uint64_t w[2] = { 0, 0 };

	memcpy(w, addr, alen);
	for (int i = 0; i < 2; i++) {
		unsigned bits = plen > 64u * i ? plen - 64u * i : 0; /* of this word kept */
		uint64_t keep = bits >= 64 ? ~0ULL : bits ? ~0ULL << (64 - bits) : 0;
		w[i] &= __builtin_bswap64(keep); /* the address is big-endian in memory */
	}
	k[0] = (uint8_t)plen;
	memcpy(k + 1, w, 16);
}

static size_t put_net_probe(const struct matcher *m, struct matcher_scratch *sc, size_t n, size_t packet, const uint8_t *addr,
			    size_t alen, unsigned plen)
{
	uint8_t *k = sc->net_key[n];

	net_key_of(addr, alen, plen, k);
	return put_probe(sc, n, packet, ENTRY_NET, k, 1 + alen, addr_hash(m, ENTRY_NET, k, 1 + alen));
}

/* The most address probes a packet of v's family may need: addr src, addr dst, pair, two per net length. */
static size_t address_probes_max(const struct matcher *m, const struct packet_view *v)
{
	return 3 + 2 * (size_t)m->n_net_lens[v->family == 6];
}

/* Packet number packet's address probes, hashed, after the first probes; the probes there are then. */
static size_t put_addresses(const struct matcher *m, struct matcher_scratch *sc, const struct packet_view *v,
			    size_t probes, size_t packet)
{
	size_t alen = v->family == 4 ? 4 : 16;
	int v6 = v->family == 6;

	if (m->kind_entries[ENTRY_ADDR] || m->kind_entries[ENTRY_PAIR]) {
		struct hash128 hs = addr_hash(m, ENTRY_ADDR, v->src, alen), hd = addr_hash(m, ENTRY_ADDR, v->dst, alen);
		if (m->kind_entries[ENTRY_ADDR]) {
			probes = put_probe(sc, probes, packet, ENTRY_ADDR, v->src, alen, hs);
			probes = put_probe(sc, probes, packet, ENTRY_ADDR, v->dst, alen, hd);
		}
		/* Source and destination are adjacent in both IP headers: the pair key is already there. */
		if (m->kind_entries[ENTRY_PAIR] && v->dst == v->src + alen)
			probes = put_probe(sc, probes, packet, ENTRY_PAIR, v->src, 2 * alen, hash_pair(hs, hd));
	}
	for (unsigned i = 0; i < m->n_net_lens[v6]; i++) {
		probes = put_net_probe(m, sc, probes, packet, v->src, alen, m->net_lens[v6][i]);
		probes = put_net_probe(m, sc, probes, packet, v->dst, alen, m->net_lens[v6][i]);
	}
	return probes;
}

/* The probes put, queried together; each the filter takes, confirmed in the store and added to its packet's hits. */
static void confirm_addresses(const struct matcher *m, struct matcher_scratch *sc, size_t probes,
			      struct matcher_hit *hits, size_t stride, size_t *n, size_t max)
{
	filter_query_batch(counting_filter(m->addr.counting), sc->probe_hash, probes, sc->probe_hit);
	for (size_t i = 0; i < probes; i++) {
		uint64_t eight;
		/* The filter takes few probes: eight it did not take are passed over at once. */
		if (i + 8 <= probes && (memcpy(&eight, &sc->probe_hit[i], 8), eight == 0)) {
			i += 7;
			continue;
		}
		if (!sc->probe_hit[i])
			continue;
		enum entry_kind kind = sc->probe_kind[i];
		struct matcher_counters *c = &sc->counters[kind];
		c->positives++;
		ssize_t at = store_find(m->addr.store, sc->probe_hash[i], (uint8_t)kind,
					sc->probe_key[i], sc->probe_len[i]);
		if (at < 0)
			continue;
		c->confirmed++;
		size_t p = sc->probe_packet[i];
		n[p] = add_hit(sc, hits + p * stride, n[p], max, kind, (uint32_t)at, 0);
	}
}

/*
 * A window the filter accepted: find it exactly, then every signature
 * indexed by it, each checked where it would start (its window's offset in
 * it before at).
 */
static size_t confirm_window(const struct matcher *m, struct matcher_scratch *sc, const uint8_t *payload, size_t len, size_t at,
			     struct hash128 h, struct matcher_hit *hits, size_t n, size_t max)
{
	ssize_t index = store_find(m->sig.store, h, 0, payload + at, m->cfg.window);
	bool matched = false;

	if (index < 0)
		return n;
	for (uint32_t id = m->heads[index]; id != NO_SIG; id = m->sigs[id].next) {
		const struct sig_entry *s = &m->sigs[id];
		size_t start = at - s->window;
		if (s->window <= at && start + s->len <= len &&
		    memcmp(m->sig_arena.bytes + s->offset, payload + start, s->len) == 0) {
			matched = true;
			n = add_hit(sc, hits, n, max, ENTRY_SIG, id, (uint32_t)start);
		}
	}
	sc->counters[ENTRY_SIG].confirmed += matched;
	return n;
}

/* Whether hit a goes after hit b: later start, or the same start and shorter. */
static bool starts_after(const struct matcher *m, const struct matcher_hit *a, const struct matcher_hit *b)
{
	return a->offset > b->offset || (a->offset == b->offset && m->sigs[a->id].len < m->sigs[b->id].len);
}

/*
 * Signatures are found where their windows are, not where they start:
 * reported in the order they start, the longest first at one start. A few
 * hits at most: insertion sort.
 */
static void sort_by_start(const struct matcher *m, struct matcher_hit *hits, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct matcher_hit h = hits[i];
		size_t j = i;
		for (; j > 0 && starts_after(m, &hits[j - 1], &h); j--)
			hits[j] = hits[j - 1];
		hits[j] = h;
	}
}

/* Level 1 picks the candidate positions; the signature filter and then the store confirm. */
static size_t check_signatures(const struct matcher *m, struct matcher_scratch *sc, const uint8_t *p, size_t len,
			       struct matcher_hit *hits, size_t n, size_t max)
{
	const struct filter *f = counting_filter(m->sig.counting);
	size_t positions = len - m->cfg.window + 1, first = n;
	uint32_t candidates[SIG_CHUNK];

	for (size_t from = 0; from < positions;) {
		size_t count = sigscan_candidates(m->scan, p, positions, from, candidates, SIG_CHUNK, &from);
		for (size_t j = 0; j < count; j++)
			sc->probe_hash[j] = sigscan_hash(m->scan, sigscan_word(m->scan, p + candidates[j]));
		filter_query_batch(f, sc->probe_hash, count, sc->probe_hit);
		for (size_t j = 0; j < count; j++) {
			if (!sc->probe_hit[j])
				continue;
			sc->counters[ENTRY_SIG].positives++;
			n = confirm_window(m, sc, p, len, candidates[j], sc->probe_hash[j], hits, n, max);
		}
	}
	sc->counters[ENTRY_SIG].probes += positions;
	sort_by_start(m, hits + first, n - first);
	return n;
}

/*
 * count packets, packet i's hits at hits + i * stride: the addresses of as
 * many packets as the probes hold are queried at once, then each packet's
 * payload is scanned, so each packet's hits come in the order one packet
 * alone would give them.
 */
static void check_packets(const struct matcher *m, struct matcher_scratch *sc, const struct packet_view *v, size_t count,
			  struct matcher_hit *hits, size_t stride, size_t *n, size_t max)
{
	size_t probes = 0;

	for (size_t i = 0; i < count; i++) {
		n[i] = 0;
		if (v[i].family == 0 || m->addr.counting == NULL)
			continue;
		if (probes + address_probes_max(m, &v[i]) > BATCH_PROBES) {
			confirm_addresses(m, sc, probes, hits, stride, n, max);
			probes = 0;
		}
		probes = put_addresses(m, sc, &v[i], probes, i);
	}
	if (probes > 0)
		confirm_addresses(m, sc, probes, hits, stride, n, max);
	for (size_t i = 0; i < count; i++)
		if (v[i].payload != NULL && m->sig.counting != NULL && v[i].payload_len >= m->cfg.window)
			n[i] = check_signatures(m, sc, v[i].payload, v[i].payload_len, hits + i * stride, n[i], max);
}

size_t matcher_check_with(const struct matcher *m, struct matcher_scratch *sc, const struct packet_view *v,
			  struct matcher_hit *hits, size_t max)
{
	size_t n;

	check_packets(m, sc, v, 1, hits, max, &n, max);
	return n;
}

void matcher_check_batch(const struct matcher *m, struct matcher_scratch *sc, const struct packet_view *v, size_t count,
			 struct matcher_hit (*hits)[MATCHER_MAX_HITS], size_t *n)
{
	BLOOMD_CHECK(count <= PACKET_BATCH_MAX);
	check_packets(m, sc, v, count, hits[0], MATCHER_MAX_HITS, n, MATCHER_MAX_HITS);
}

size_t matcher_check(struct matcher *m, const struct packet_view *v, struct matcher_hit *hits,
		     size_t max)
{
	return matcher_check_with(m, &m->own, v, hits, max);
}

struct matcher_scratch *matcher_scratch_new(void)
{
	return calloc(1, sizeof(struct matcher_scratch));
}

void matcher_scratch_free(struct matcher_scratch *sc)
{
	free(sc);
}

const struct matcher_counters *matcher_scratch_counters(const struct matcher_scratch *sc, enum entry_kind kind)
{
	return &sc->counters[kind];
}

uint64_t matcher_scratch_hits_dropped(const struct matcher_scratch *sc)
{
	return sc->hits_dropped;
}

static uint32_t matcher_hit_holders(const struct matcher *m, const struct matcher_hit *hit)
{
	return hit->kind == ENTRY_SIG ? m->sigs[hit->id].holders : store_holders(m->addr.store, hit->id);
}

size_t matcher_found(const struct matcher *m, const struct matcher_hit *hits, size_t n, struct matcher_found *out)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		size_t len;
		uint32_t holders = matcher_hit_holders(m, &hits[i]);
		if ((holders & ~MATCHER_HOLDER_STAGING) == 0)
			continue;
		out[kept] = (struct matcher_found){ .kind = hits[i].kind, .offset = hits[i].offset, .holders = holders };
		matcher_hit_key(m, &hits[i], &out[kept].key, &len);
		out[kept++].len = (uint16_t)len;
	}
	return kept;
}

void matcher_hit_key(const struct matcher *m, const struct matcher_hit *hit, const uint8_t **key,
		     size_t *len)
{
	if (hit->kind == ENTRY_SIG) {
		*key = m->sig_arena.bytes + m->sigs[hit->id].offset;
		*len = m->sigs[hit->id].len;
	} else {
		uint8_t kind;
		store_entry(m->addr.store, hit->id, &kind, key, len);
	}
}

const struct matcher_counters *matcher_counters(const struct matcher *m, enum entry_kind kind)
{
	return &m->own.counters[kind];
}

uint64_t matcher_entries(const struct matcher *m, enum entry_kind kind)
{
	return m->kind_entries[kind];
}

uint64_t matcher_entries_all(const struct matcher *m)
{
	uint64_t n = 0;

	for (int k = 0; k < MATCHER_KINDS; k++)
		n += m->kind_entries[k];
	return n;
}

int matcher_set_simd(struct matcher *m, enum simd_level level)
{
	if (!simd_cpu_has(level))
		return -1;
	m->changes++;
	matcher_log_simd(m, level);
	m->simd = level;
	if (m->scan)
		sigscan_set_simd(m->scan, level);
	if (m->addr.counting)
		matcher_use_simd(m->addr.counting, level);
	if (m->sig.counting)
		matcher_use_simd(m->sig.counting, level);
	return 0;
}

void matcher_filter_info(const struct matcher *m, int sig, struct matcher_filter_info *info)
{
	const struct keyed_filter *kf = sig ? &m->sig : &m->addr;

	memset(info, 0, sizeof(*info));
	info->kernel = simd_capped(m->simd);
	info->scan_kernel = m->scan ? sigscan_simd(m->scan) : SIMD_SCALAR;
	info->scan_gathers = m->scan && sigscan_gathers(m->scan);
	info->entries = store_count(kf->store);
	info->store_bytes = store_bytes(kf->store);
	if (sig)
		info->store_bytes += m->sigs_cap * sizeof(*m->sigs) + m->sig_arena.cap +
				     m->window_cap * (sizeof(*m->heads) + sizeof(*m->words));
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

int matcher_foreach_placed(const struct matcher *m, enum entry_kind only, matcher_placed_cb cb, void *ctx)
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
		rc = cb(ctx, &e, store_group(m->addr.store, i), 0, store_holders(m->addr.store, i));
	}
	if (only && only != ENTRY_SIG)
		return rc;
	e.kind = ENTRY_SIG;
	for (size_t w = 0; w < store_count(m->sig.store) && rc == 0; w++)
		for (uint32_t id = m->heads[w]; id != NO_SIG && rc == 0; id = m->sigs[id].next) {
			e.len = m->sigs[id].len;
			memcpy(e.key, m->sig_arena.bytes + m->sigs[id].offset, e.len);
			rc = cb(ctx, &e, store_group(m->sig.store, w), m->sigs[id].window, m->sigs[id].holders);
		}
	return rc;
}

struct unplaced {
	matcher_entry_cb cb;
	void *ctx;
};

static int unplaced_cb(void *ctx, const struct entry *e, unsigned group, unsigned window, uint32_t holders)
{
	const struct unplaced *u = ctx;

	(void)window;
	return u->cb(u->ctx, e, group, holders);
}

int matcher_foreach(const struct matcher *m, enum entry_kind only, matcher_entry_cb cb, void *ctx)
{
	struct unplaced u = { cb, ctx };

	return matcher_foreach_placed(m, only, unplaced_cb, &u);
}

/* Entry i of the address store, if of kind only (or any). */
static bool address_at(const struct matcher *m, size_t i, enum entry_kind only, struct entry *e)
{
	uint8_t kind;
	const uint8_t *key;
	size_t len;

	store_entry(m->addr.store, i, &kind, &key, &len);
	if (only && kind != only)
		return false;
	e->kind = kind;
	e->len = (uint16_t)len;
	memcpy(e->key, key, len);
	return true;
}

/* Every signature of window w that one of held's bits holds (held 0: every one); how many were visited. */
static size_t window_walk(const struct matcher *m, size_t w, uint32_t held, matcher_entry_cb cb, void *ctx)
{
	struct entry e; /* not static: a const matcher may be read from any thread */
	size_t n = 0;

	e.kind = ENTRY_SIG;
	for (uint32_t id = m->heads[w]; id != NO_SIG; id = m->sigs[id].next) {
		if (held && !(m->sigs[id].holders & held))
			continue;
		e.len = m->sigs[id].len;
		memcpy(e.key, m->sig_arena.bytes + m->sigs[id].offset, e.len);
		cb(ctx, &e, store_group(m->sig.store, w), m->sigs[id].holders);
		n++;
	}
	return n;
}

/*
 * An entry skipped for its holders costs a walk this fraction of one visited
 * (a look at its holders); passed over in a block held by none of the walk's
 * holders, a fraction WALK_BLOCK_SKIP times smaller still.
 */
#define WALK_SKIP_COST 32
#define WALK_BLOCK_SKIP 16

void matcher_walk(const struct matcher *m, enum entry_kind only, uint32_t held, struct matcher_cursor *cur,
		  size_t max, matcher_entry_cb cb, void *ctx)
{
	struct entry e;
	size_t done = 0, looked = 0;

	if (!cur->started) {
		*cur = (struct matcher_cursor){ .part = only == ENTRY_SIG ? 1 : 0, .next = SIZE_MAX, .started = true };
	}
	while (cur->part < 2 && done < max && looked < max * WALK_SKIP_COST) {
		const struct store *st = cur->part ? m->sig.store : m->addr.store;
		if (cur->next > store_count(st))
			cur->next = store_count(st); /* removals since: start below the end */
		if (cur->next == 0) {
			bool sigs_too = cur->part == 0 && (only == 0 || only == ENTRY_SIG);
			cur->part = sigs_too ? 1 : 2;
			cur->next = SIZE_MAX;
			continue;
		}
		if (cur->part == 0 && held) { /* on to the next entry held, as far as the budget reaches */
			size_t reach = (max * WALK_SKIP_COST - looked) * WALK_BLOCK_SKIP;
			size_t floor = cur->next > reach ? cur->next - reach : 0;
			ssize_t at = store_held_below(st, cur->next, floor, held);
			size_t to = at >= 0 ? (size_t)at + 1 : floor;
			looked += (cur->next - to) / WALK_BLOCK_SKIP;
			cur->next = to;
			if (at < 0)
				continue;
		}
		size_t i = --cur->next;
		looked++;
		if (cur->part == 1) {
			done += window_walk(m, i, held, cb, ctx);
			continue;
		}
		uint32_t holders = store_holders(m->addr.store, i);
		if (held && !(holders & held))
			continue;
		if (address_at(m, i, only, &e))
			cb(ctx, &e, store_group(m->addr.store, i), holders);
		done++; /* bounded by what is looked at, listed or not */
	}
}

void matcher_covering(const struct matcher *m, const uint8_t *addr, size_t alen, matcher_entry_cb cb,
		      void *ctx)
{
	struct entry e;
	int v6 = alen == 16;

	e.kind = ENTRY_ADDR;
	e.len = (uint16_t)alen;
	memcpy(e.key, addr, alen);
	ssize_t at = store_find(m->addr.store, addr_hash(m, ENTRY_ADDR, e.key, alen), ENTRY_ADDR, e.key, alen);
	if (at >= 0)
		cb(ctx, &e, 0, store_holders(m->addr.store, (size_t)at));
	e.kind = ENTRY_NET;
	e.len = (uint16_t)(1 + alen);
	for (unsigned i = 0; i < m->n_net_lens[v6]; i++) {
		uint8_t k[24];
		net_key_of(addr, alen, m->net_lens[v6][i], k);
		memcpy(e.key, k, 1 + alen);
		at = store_find(m->addr.store, addr_hash(m, ENTRY_NET, e.key, e.len), ENTRY_NET, e.key, e.len);
		if (at >= 0)
			cb(ctx, &e, 0, store_holders(m->addr.store, (size_t)at));
	}
}

/* ---- a copy kept in step: the changes a log recorded, made again ---- */

static int replay_one(struct matcher *copy, const struct change *c, const uint8_t *key, char *err, size_t errlen)
{
	struct entry e;
	uint32_t left;

	e.kind = (enum entry_kind)c->kind;
	e.len = c->len;
	memcpy(e.key, key, c->len);
	switch (c->op) {
	case CHANGE_HOLD:
		return matcher_hold(copy, &e, c->a, err, errlen) < 0 ? -1 : 0;
	case CHANGE_RELEASE:
		matcher_release(copy, &e, c->a, &left);
		return 0;
	case CHANGE_REHOLD:
		matcher_rehold(copy, c->a, c->b, NULL);
		return 0;
	case CHANGE_REMOVE:
		matcher_remove(copy, &e);
		return 0;
	case CHANGE_SIMD:
		return matcher_set_simd(copy, (enum simd_level)c->a);
	case CHANGE_NAMED:
		return 0; /* the rehold before it made it so */
	}
	error_set(err, errlen, "a change of unknown kind %u in the log", c->op);
	return -1;
}

int matcher_replay(struct matcher *copy, const struct matcher_log *log, char *err, size_t errlen)
{
	if (matcher_log_whole(log)) {
		error_set(err, errlen, "the changes cannot be replayed (a build, or a change not recorded)");
		return -1;
	}
	struct change c;
	const uint8_t *key;
	size_t at = 0;

	while (matcher_log_next(log, &at, &c, &key))
		if (replay_one(copy, &c, key, err, errlen) < 0)
			return -1;
	return 0;
}
