/* matcher_rebuild.c - the matcher's filters: their sizes, and building and rebuilding them off the loop. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "matcher_internal.h"
#include "sizing.h"

/* A filter of about bits bits for n keys, shaped by the configuration. */
static int params_for(const struct matcher_config *cfg, uint64_t bits, uint64_t n,
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
void matcher_use_simd(struct counting *c, enum simd_level level)
{
	(void)counting_set_simd(c, simd_capped(level)); /* the scalar kernel never fails */
}

/*
 * Bits per key of each filter: [0] addresses, [1] signature windows. The
 * signature filter only sees the positions level 1 passes, so it may have
 * fewer (bits_per_window).
 */
double matcher_bits_per_key(const struct matcher_config *cfg, int sig)
{
	double bpe = cfg->bits_per_entry > 0 ? cfg->bits_per_entry : 16;

	return sig && cfg->bits_per_window > 0 ? cfg->bits_per_window : bpe;
}

/* An empty counting store for a filter that had none (its first key after the build). */
int matcher_counting_for(const struct matcher *m, struct keyed_filter *kf, uint64_t bits,
		       char *err, size_t errlen)
{
	struct filter_params p;

	if (params_for(&m->cfg, bits, 1, &p, err, errlen) < 0)
		return -1;
	kf->counting = counting_new(&p, &kf->key, counting_seed(kf), err, errlen);
	if (kf->counting)
		matcher_use_simd(kf->counting, m->simd);
	return kf->counting ? 0 : -1;
}

/* The bits each filter should have for the entries stored now: [0] addresses, [1] signatures. */
static void wanted_bits(const struct matcher *m, uint64_t bits[2])
{
	double want[2] = { (double)store_count(m->addr.store) * matcher_bits_per_key(&m->cfg, 0),
			   (double)store_count(m->sig.store) * matcher_bits_per_key(&m->cfg, 1) };

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
	bool in_range;             /* every group copied is below params.choices (else restored from others) */
	size_t copied;             /* keys 0..copied-1 are the store's, while the copy is made */
	size_t n, cap, touched;   /* touched: the arrays' first entries written once (part_reserve) */
	struct hash128 *hashes;
	uint8_t *groups;
	uint64_t *words;           /* signatures: each window's word, for the new prefilter */
	struct counting *counting; /* the result */
	struct store_op *taken;    /* changes handed over by matcher_rebuild_catch_up */
	size_t ntaken;
};

struct matcher_rebuild {
	unsigned rounds, window;
	bool restored;               /* the groups are a snapshot's, kept as they were */
	bool direct;                 /* a build on the loop: each key counted as it is copied, its hash not kept */
	bool copying;                /* the copy is being made, a slice at a time (matcher_rebuild_copy) */
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

void matcher_rebuild_free(struct matcher *m, struct matcher_rebuild *r)
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

/*
 * Room for n keys, what is copied kept, and the first n touched, so that the
 * copy into them does not page-fault in the loop. The room past them is
 * not: the store takes the groups array as it is, resident only as far as
 * it was written. The hashes only where they are kept (not direct), the
 * words only for the signatures.
 */
static int part_reserve(struct rebuild_part *p, size_t n, bool hashes, bool words)
{
	struct array_spec arrays[3] = { { (void **)&p->groups, sizeof(*p->groups) } };
	size_t from = p->touched, k = 1;

	if (n <= from)
		return 0;
	if (hashes)
		arrays[k++] = (struct array_spec){ (void **)&p->hashes, sizeof(*p->hashes) };
	if (words)
		arrays[k++] = (struct array_spec){ (void **)&p->words, sizeof(*p->words) };
	if (arrays_grow(arrays, k, &p->cap, n) < 0)
		return -1;
	if (hashes)
		memset(p->hashes + from, 0, (n - from) * sizeof(*p->hashes));
	memset(p->groups + from, 0, n - from);
	if (words)
		memset(p->words + from, 0, (n - from) * sizeof(*p->words));
	p->touched = n;
	return 0;
}

struct matcher_rebuild *matcher_rebuild_prepare(uint64_t addr_keys, uint64_t sig_windows)
{
	struct matcher_rebuild *r = calloc(1, sizeof(*r));

	if (r && (part_reserve(&r->part[0], addr_keys, true, false) < 0 ||
		  part_reserve(&r->part[1], sig_windows, true, true) < 0)) {
		matcher_rebuild_free(NULL, r);
		return NULL;
	}
	return r;
}

bool matcher_rebuild_prepared_for(const struct matcher_rebuild *r, const struct matcher *m)
{
	return store_count(m->addr.store) <= r->part[0].cap && store_count(m->sig.store) <= r->part[1].cap;
}

uint64_t matcher_keys_count(const struct matcher *m, int sig)
{
	return store_count(sig ? m->sig.store : m->addr.store);
}

/* Set up one filter's share; its keys are copied by matcher_rebuild_copy (counted as they are, direct). */
static int part_begin(const struct matcher *m, const struct keyed_filter *kf,
		      const struct filter_params *given, uint64_t bits, bool direct, struct rebuild_part *p,
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
	if (part_reserve(p, n, !direct, sig) < 0) {
		error_set(err, errlen, "out of memory copying %zu keys for a rebuild", n);
		return -1;
	}
	p->active = true;
	p->key = kf->key;
	p->seed = counting_seed(kf);
	if (direct && (p->counting = counting_new(&p->params, &p->key, p->seed, err, errlen)) == NULL)
		return -1;
	p->groups_valid = kf->groups_valid &&
			  (kf->counting == NULL || kf->counting->params.choices == p->params.choices) &&
			  (m->built || (given && given->bits));
	p->in_range = true;
	p->copied = p->n = 0;
	return 0;
}

/* matcher_rebuild_begin, or with direct a build on the loop (rebuild_now). */
static struct matcher_rebuild *rebuild_begin(struct matcher *m, struct matcher_rebuild *prepared, unsigned rounds,
					     const struct filter_params *params, bool direct, char *err, size_t errlen)
{
	struct matcher_rebuild *r = prepared;
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
	r->direct = direct;
	r->rounds = rounds;
	r->restored = params != NULL;
	r->window = m->cfg.window;
	r->simd = m->simd;
	wanted_bits(m, bits);
	if (part_begin(m, &m->addr, params ? &params[0] : NULL, bits[0], r->direct, &r->part[0], err, errlen) < 0 ||
	    part_begin(m, &m->sig, params ? &params[1] : NULL, bits[1], r->direct, &r->part[1], err, errlen) < 0) {
		matcher_rebuild_free(m, r);
		return NULL;
	}
	r->copying = true;
	m->rebuilding = r;
	return r;
}

struct matcher_rebuild *matcher_rebuild_begin(struct matcher *m, struct matcher_rebuild *prepared,
					    unsigned rounds, const struct filter_params *params,
					    char *err, size_t errlen)
{
	return rebuild_begin(m, prepared, rounds, params, false, err, errlen);
}

/* Keys from..to-1 into the copy: each hashed again, and its group. */
static void copy_keys(const struct matcher *m, const struct keyed_filter *kf, struct rebuild_part *p, size_t from,
		      size_t to)
{
	for (size_t i = from; i < to; i++) {
		unsigned g = store_group(kf->store, i);
		p->hashes[i] = matcher_key_hash(m, kf, i);
		p->groups[i] = (uint8_t)g;
		p->in_range &= g < p->params.choices;
	}
}

/*
 * Direct: keys from..to-1 counted as they are hashed, each in its group if
 * that is known, else placed greedily (the first round); each key's lines
 * asked for COUNTING_AHEAD keys before it is counted.
 */
static void count_keys(const struct matcher *m, const struct keyed_filter *kf, struct rebuild_part *p,
		       size_t from, size_t to)
{
	struct hash128 ahead[COUNTING_AHEAD];

	for (size_t i = from; i < to + COUNTING_AHEAD; i++) {
		struct hash128 *slot = &ahead[i % COUNTING_AHEAD]; /* key i - COUNTING_AHEAD's, then key i's */
		if (i >= from + COUNTING_AHEAD) {
			size_t k = i - COUNTING_AHEAD;
			unsigned g = store_group(kf->store, k);
			bool in_range = g < p->params.choices;
			p->in_range &= in_range;
			if (!p->groups_valid || !in_range) /* placed greedily; its lines asked for already */
				g = counting_choose(p->counting, *slot);
			counting_add(p->counting, *slot, g);
			p->groups[k] = (uint8_t)g;
		}
		if (i < to) {
			*slot = matcher_key_hash(m, kf, i);
			counting_prefetch(p->counting, *slot);
		}
	}
}

/*
 * Up to budget more of a filter's keys copied (or counted, direct): from the
 * store as it is now (it may have grown or shrunk since the last slice;
 * matcher_rebuild_copy_moves kept what was copied in step). 1 when all are,
 * 0 if not yet, -1 without memory.
 */
static int part_copy(const struct matcher *m, const struct keyed_filter *kf, struct rebuild_part *p,
		     size_t *budget)
{
	size_t n = store_count(kf->store), from = p->copied;
	size_t to = n - from < *budget ? n : from + *budget;
	bool sig = kf == &m->sig;

	if (part_reserve(p, n, p->counting == NULL, sig) < 0)
		return -1;
	if (p->counting)
		count_keys(m, kf, p, from, to);
	else
		copy_keys(m, kf, p, from, to);
	if (sig)
		memcpy(p->words + from, m->words + from, (to - from) * sizeof(*p->words));
	p->copied = to;
	*budget -= to - from;
	return to == n;
}

int matcher_rebuild_copy(struct matcher *m, struct matcher_rebuild *r, size_t budget, char *err, size_t errlen)
{
	int done = 1;

	for (int i = 0; i < 2 && r->copying; i++) {
		const struct keyed_filter *kf = i ? &m->sig : &m->addr;
		int rc = r->part[i].active ? part_copy(m, kf, &r->part[i], &budget) : 1;
		if (rc < 0) {
			error_set(err, errlen, "out of memory copying %zu keys for a rebuild", store_count(kf->store));
			return -1;
		}
		done &= rc;
	}
	if (!done || !r->copying)
		return done;
	/* Copied whole: from now on, each change is logged for the rounds' result to replay. */
	for (int i = 0; i < 2; i++) {
		struct keyed_filter *kf = i ? &m->sig : &m->addr;
		struct rebuild_part *p = &r->part[i];
		p->n = p->copied;
		p->groups_valid = p->groups_valid && p->in_range;
		kf->nlog = 0;
		kf->log_lost = false;
	}
	r->copying = false;
	return 1;
}

bool matcher_rebuild_copying(const struct matcher_rebuild *r)
{
	return r->copying;
}

void matcher_rebuild_copy_moves(struct matcher *m, struct keyed_filter *kf, size_t index)
{
	struct rebuild_part *p = &m->rebuilding->part[kf == &m->sig];
	size_t last = store_count(kf->store) - 1;

	if (index < p->copied) { /* the copy's key at index becomes the store's last, as the store's does */
		unsigned g = store_group(kf->store, last);
		p->hashes[index] = matcher_key_hash(m, kf, last);
		p->groups[index] = (uint8_t)g;
		p->in_range &= g < p->params.choices;
		if (kf == &m->sig)
			p->words[index] = m->words[last];
	}
	if (p->copied > last)
		p->copied = last;
}

/* Count every key in a new store: in its group if known, else greedily; then the rounds. */
static int part_run(struct rebuild_part *p, unsigned rounds, const atomic_bool *stop, char *err,
		    size_t errlen)
{
	if (p->counting) /* direct: counted as they were copied */
		return 0;
	p->counting = counting_new(&p->params, &p->key, p->seed, err, errlen);
	if (p->counting == NULL)
		return -1;
	if (p->groups_valid) {
		counting_add_all(p->counting, p->hashes, p->groups, p->n);
	} else {
		for (size_t i = 0; i < p->n; i++)
			p->groups[i] = (uint8_t)counting_insert(p->counting, p->hashes[i]);
		rounds = rounds ? rounds - 1 : 0; /* the greedy pass was the first round */
	}
	/* Visited in block order where that pays; without memory for it, in their own. */
	uint32_t *order = rounds && counting_order_pays(p->counting, p->n)
				  ? counting_order(p->counting, p->hashes, p->groups, p->n)
				  : NULL;
	int rc = 0;
	for (unsigned round = 0; round < rounds && rc == 0; round++) {
		if (atomic_load_explicit(stop, memory_order_relaxed)) {
			error_set(err, errlen, "the rebuild was called off");
			rc = -1;
		} else {
			counting_rebuild(p->counting, p->hashes, p->groups, p->n, 1);
		}
	}
	if (order)
		counting_unorder(p->hashes, p->groups, p->n, order);
	return rc;
}

void matcher_rebuild_stop(struct matcher_rebuild *r)
{
	atomic_store(&r->stop, true);
}

int matcher_rebuild_run(struct matcher_rebuild *r, char *err, size_t errlen)
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
			const struct array_spec arrays[] = {
				{ (void **)&p->hashes, sizeof(*p->hashes) },
				{ (void **)&p->groups, sizeof(*p->groups) },
			};
			if (arrays_grow(arrays, 2, &p->cap, p->n + 1) < 0)
				return -1;
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

size_t matcher_rebuild_catch_up(struct matcher *m, struct matcher_rebuild *r)
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

int matcher_rebuild_apply(struct matcher_rebuild *r, char *err, size_t errlen)
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

int matcher_rebuild_finish(struct matcher *m, struct matcher_rebuild *r, char *err, size_t errlen)
{
	int rc = 0;
	bool kept = r->restored; /* a snapshot's groups, each still valid: its placement as it was */

	for (int i = 0; i < 2; i++)
		kept &= !r->part[i].active || r->part[i].groups_valid;
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
		if (store_take_groups(kf->store, &p->groups, &p->cap) < 0) {
			error_set(err, errlen, "out of memory taking the rebuild's groups");
			rc = -1;
			break;
		}
		counting_free(kf->counting);
		kf->counting = p->counting;
		p->counting = NULL;
		matcher_use_simd(kf->counting, m->simd);
		kf->groups_valid = true;
		kf->changes = 0;
	}
	if (rc == 0 && r->scan) {
		sigscan_free(m->scan);
		m->scan = r->scan;
		r->scan = NULL;
	}
	if (rc == 0) {
		m->built = true;
		/* The greedy pass is the first round: more than one is the offline placement. */
		m->optimised = kept || r->rounds > 1 || m->cfg.choices == 1 ||
			       store_count(m->addr.store) + store_count(m->sig.store) == 0;
	}
	m->changes++;
	if (rc == 0)
		matcher_log_rebuilt(m);
	else
		matcher_log_reshaped(m);
	matcher_rebuild_free(m, r);
	return rc;
}

/*
 * A build on the loop. One without rounds (the start's, each key placed
 * greedily, or a snapshot's, each counted in its group) is made direct:
 * each key is counted as it is hashed, with no copy of the hashes, which
 * was 16 bytes an entry more at the start's peak.
 */
static int rebuild_now(struct matcher *m, unsigned rounds, const struct filter_params *params,
		       char *err, size_t errlen)
{
	struct matcher_rebuild *r = rebuild_begin(m, NULL, rounds, params, rounds == 0, err, errlen);

	if (r == NULL)
		return -1;
	if (matcher_rebuild_copy(m, r, SIZE_MAX, err, errlen) < 0 || matcher_rebuild_run(r, err, errlen) < 0) {
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

int matcher_build_online(struct matcher *m, char *err, size_t errlen)
{
	if (m->cfg.rounds == 0)
		m->cfg.rounds = sizing_default_rounds(m->cfg.choices);
	return rebuild_now(m, 0, NULL, err, errlen);
}

bool matcher_optimised(const struct matcher *m)
{
	return m->optimised;
}

void matcher_placed_online(struct matcher *m)
{
	m->optimised = false;
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

int matcher_check_config(const struct matcher_config *cfg, char *err, size_t errlen)
{
	if (cfg->choices < 1 || cfg->choices > FILTER_MAX_CHOICES || cfg->hashes > FILTER_MAX_HASHES) {
		error_set(err, errlen, "choices must be 1 to 3 and hashes 0 (best) to %d",
			  FILTER_MAX_HASHES);
		return -1;
	}
	return 0;
}

int matcher_reconfigure(struct matcher *m, const struct matcher_config *cfg, char *err, size_t errlen)
{
	struct matcher_config *now = &m->cfg;
	unsigned rounds = cfg->rounds ? cfg->rounds : sizing_default_rounds(cfg->choices);
	bool changed;

	if (matcher_check_config(cfg, err, errlen) < 0)
		return -1;
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
