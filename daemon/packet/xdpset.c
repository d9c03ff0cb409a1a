/* xdpset.c - the entries the XDP program decides on: a blocked filter and an exact table, in its layout. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "xdpset.h"

#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "counting.h"
#include "error.h"
#include "entry_hash.h"
#include "sizing.h"

/* The program knows the kinds by number (bpf/xdp_drop.bpf.c). */
_Static_assert(ENTRY_ADDR == 1 && ENTRY_NET == 2 && ENTRY_PAIR == 3, "kinds as the XDP program numbers them");
_Static_assert(sizeof(struct xdp_bucket) == 64, "a bucket is a cache line");
_Static_assert(sizeof(struct xdp_block) * 8 == FILTER_BLOCK_BITS, "a block is the filter's");

struct xdpset {
	struct xdpset_shape shape;
	struct hash_key key;
	struct counting *counting;  /* the filter's counters, and its bits as the program's copy should be */
	struct xdpset_memory mem;
	uint64_t count, gone;
	uint32_t *free_long;        /* long key indices free, a stack */
	uint64_t nfree_long;
	uint8_t *kept;              /* while a sweep runs: by slot, put since it began */
	uint32_t net_count[2][XDP_NET_LENS];
};

int xdpset_shape_for(uint64_t capacity, uint64_t long_capacity, unsigned choices, double bits_per_entry,
		     struct xdpset_shape *out, char *err, size_t errlen)
{
	struct sizing_choice best;
	uint64_t slots;

	capacity = capacity < 64 ? 64 : capacity;
	long_capacity = long_capacity < 16 ? 16 : long_capacity > capacity ? capacity : long_capacity;
	if (sizing_best(FILTER_BLOCKED, choices, bits_per_entry, 1, &best, err, errlen) < 0)
		return -1;
	out->capacity = capacity;
	out->long_capacity = long_capacity;
	out->params = (struct filter_params){
		.layout = FILTER_BLOCKED, .choices = choices, .hashes = best.hashes,
		.bits = sizing_round_bits(FILTER_BLOCKED, (uint64_t)((double)capacity * bits_per_entry + 0.5)),
	};
	slots = capacity + capacity / 2; /* at most two thirds full */
	if (slots / XDP_BUCKET_SLOTS + 1 > UINT32_MAX || out->params.bits / FILTER_BLOCK_BITS > UINT32_MAX) {
		error_set(err, errlen, "%llu entries are more than an XDP map holds", (unsigned long long)capacity);
		return -1;
	}
	out->nbuckets = (uint32_t)(slots / XDP_BUCKET_SLOTS + 1);
	return 0;
}

struct xdpset *xdpset_new(const struct xdpset_shape *shape, const struct hash_key *key, const struct xdpset_memory *mem,
			  char *err, size_t errlen)
{
	struct xdpset *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		error_set(err, errlen, "out of memory for the XDP set");
		return NULL;
	}
	if (key->algo != HASH_XXH3) {
		error_set(err, errlen, "the XDP program hashes with XXH3 only");
		free(s);
		return NULL;
	}
	s->shape = *shape;
	s->key = *key;
	s->mem = *mem;
	s->counting = counting_new(&shape->params, key, 0x5eed, err, errlen);
	s->free_long = malloc(shape->long_capacity * sizeof(*s->free_long));
	if (s->counting == NULL || s->free_long == NULL) {
		if (s->counting)
			error_set(err, errlen, "out of memory for the XDP set");
		xdpset_free(s);
		return NULL;
	}
	for (uint64_t i = 0; i < shape->long_capacity; i++)
		s->free_long[i] = (uint32_t)(shape->long_capacity - 1 - i); /* index 0 handed out first */
	s->nfree_long = shape->long_capacity;
	memset(mem->words, 0, shape->params.bits / 8);
	memset(mem->buckets, 0, (size_t)shape->nbuckets * sizeof(struct xdp_bucket));
	memset(mem->long_keys, 0, shape->long_capacity * sizeof(struct xdp_long_key));
	memset(mem->live, 0, sizeof(*mem->live));
	return s;
}

void xdpset_free(struct xdpset *s)
{
	if (s == NULL)
		return;
	counting_free(s->counting);
	free(s->free_long);
	free(s->kept);
	free(s);
}

struct hash128 xdpset_hash(const struct xdpset *s, enum entry_kind kind, const uint8_t *key, size_t len)
{
	return entry_hash(&s->key, kind, key, len);
}

/* The key's bytes as its slot and long key hold them: zero past len, whole words. */
static void key_words(const uint8_t *key, size_t len, uint64_t w[XDP_KEY_MAX / 8])
{
	memset(w, 0, XDP_KEY_MAX);
	memcpy(w, key, len);
}

static uint32_t slot_tag(struct hash128 h)
{
	return (uint32_t)(h.lo >> 32);
}

static bool slot_holds(const struct xdpset *s, const struct xdp_slot *slot, struct hash128 h, enum entry_kind kind,
		       const uint64_t w[XDP_KEY_MAX / 8], size_t len)
{
	if (slot->state != XDP_SLOT_FULL || slot->tag != slot_tag(h) || slot->kind != kind || slot->len != len)
		return false;
	if (len <= XDP_KEY_INLINE)
		return slot->key == w[0];
	return memcmp(s->mem.long_keys[slot->key].w, w, XDP_KEY_MAX) == 0;
}

/* The slot holding the key, or NULL; *free_slot (if not NULL): the first empty or removed one on its way. */
static struct xdp_slot *find(const struct xdpset *s, struct hash128 h, enum entry_kind kind, const uint64_t w[],
			     size_t len, struct xdp_slot **free_slot)
{
	if (free_slot)
		*free_slot = NULL;
	for (unsigned p = 0; p < XDP_TABLE_PROBES; p++) {
		struct xdp_bucket *b = &s->mem.buckets[xdpset_bucket(h, p, s->shape.nbuckets)];
		for (unsigned i = 0; i < XDP_BUCKET_SLOTS; i++) {
			struct xdp_slot *slot = &b->slot[i];
			if (slot->state != XDP_SLOT_FULL && free_slot && *free_slot == NULL)
				*free_slot = slot;
			if (slot->state == XDP_SLOT_EMPTY)
				return NULL;
			if (slot_holds(s, slot, h, kind, w, len))
				return slot;
		}
	}
	return NULL;
}

/* The program's copy of the block group g of h lies in, brought equal to the counters'. */
static void write_block(struct xdpset *s, struct hash128 h, unsigned g)
{
	uint64_t b = filter_group_block(&s->shape.params, h, g);
	const uint64_t *src = counting_filter(s->counting)->words + b * FILTER_BLOCK_WORDS;
	uint64_t *dst = s->mem.words + b * FILTER_BLOCK_WORDS;

	for (unsigned i = 0; i < FILTER_BLOCK_WORDS; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

static int net_family(size_t len)
{
	return len == 1 + 16;
}

/* A net's prefix length, counted; the first of its length is published after its slot and bits. */
static void net_length_in(struct xdpset *s, const uint8_t *key, size_t len)
{
	int f = net_family(len);
	struct xdp_live *live = s->mem.live;

	if (s->net_count[f][key[0]]++ > 0)
		return;
	uint32_t n = live->n_net_lens[f];
	live->net_lens[f][n] = key[0];
	__atomic_store_n(&live->n_net_lens[f], n + 1, __ATOMIC_RELEASE);
}

/* The last of a length gone: the last length in use moves into its place (a reader that counted it still finds it). */
static void net_length_out(struct xdpset *s, const uint8_t *key, size_t len)
{
	int f = net_family(len);
	struct xdp_live *live = s->mem.live;

	if (--s->net_count[f][key[0]] > 0)
		return;
	uint32_t n = live->n_net_lens[f];
	for (uint32_t i = 0; i < n; i++)
		if (live->net_lens[f][i] == key[0]) {
			live->net_lens[f][i] = live->net_lens[f][n - 1];
			break;
		}
	__atomic_store_n(&live->n_net_lens[f], n - 1, __ATOMIC_RELEASE);
}

/* Pass entries held; a pass entry counts before it is in force, and after it is gone. */
static void pass_count_change(struct xdpset *s, int by)
{
	__atomic_store_n(&s->mem.live->pass_count, s->mem.live->pass_count + (uint32_t)by, __ATOMIC_RELEASE);
}

static bool key_fits(enum entry_kind kind, size_t len)
{
	switch (kind) {
	case ENTRY_ADDR:
		return len == 4 || len == 16;
	case ENTRY_NET:
		return len == 5 || len == 17;
	case ENTRY_PAIR:
		return len == 8 || len == 32;
	default:
		return false;
	}
}

int xdpset_put(struct xdpset *s, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action)
{
	struct xdp_slot *free_slot;
	uint64_t w[XDP_KEY_MAX / 8];

	if (!key_fits(kind, len))
		return -1;
	key_words(key, len, w);
	struct hash128 h = xdpset_hash(s, kind, key, len);
	struct xdp_slot *slot = find(s, h, kind, w, len, &free_slot);
	if (s->kept && (slot || free_slot))
		s->kept[(slot ? slot : free_slot) - &s->mem.buckets[0].slot[0]] = 1;
	if (slot) {
		bool was_pass = XDP_SLOT_ACTION(slot->flags) & XDP_ACTION_PASS, is_pass = action & XDP_ACTION_PASS;
		if (was_pass != is_pass)
			pass_count_change(s, is_pass ? 1 : -1);
		__atomic_store_n(&slot->flags, (uint8_t)((slot->flags & 0xf0) | action), __ATOMIC_RELEASE);
		return 0;
	}
	if (free_slot == NULL || (len > XDP_KEY_INLINE && s->nfree_long == 0))
		return 1;
	unsigned g = counting_choose(s->counting, h);
	if (free_slot->state == XDP_SLOT_GONE)
		s->gone--;
	if (len > XDP_KEY_INLINE) {
		uint32_t index = s->free_long[--s->nfree_long];
		memcpy(s->mem.long_keys[index].w, w, XDP_KEY_MAX);
		free_slot->key = index;
	} else {
		free_slot->key = w[0];
	}
	free_slot->tag = slot_tag(h);
	free_slot->kind = (uint8_t)kind;
	free_slot->len = (uint8_t)len;
	free_slot->flags = (uint8_t)(action | g << 4);
	if (action & XDP_ACTION_PASS) /* counted before the program can find it: no key after a drop is skipped */
		pass_count_change(s, 1);
	__atomic_store_n(&free_slot->state, XDP_SLOT_FULL, __ATOMIC_RELEASE);
	counting_add(s->counting, h, g);
	write_block(s, h, g);
	if (kind == ENTRY_NET)
		net_length_in(s, key, len);
	__atomic_store_n(&s->mem.live->kind_count[kind], s->mem.live->kind_count[kind] + 1, __ATOMIC_RELEASE);
	s->count++;
	return 0;
}

/* The key in slot, as it was put. */
static const uint8_t *slot_key(const struct xdpset *s, const struct xdp_slot *slot)
{
	return slot->len > XDP_KEY_INLINE ? (const uint8_t *)s->mem.long_keys[slot->key].w : (const uint8_t *)&slot->key;
}

/* The entry in slot (hash h) let go: emptied before its bits are cleared and its long key freed. */
static void remove_slot(struct xdpset *s, struct xdp_slot *slot, struct hash128 h)
{
	enum entry_kind kind = slot->kind;
	size_t len = slot->len;
	uint8_t key[XDP_KEY_MAX];

	memcpy(key, slot_key(s, slot), len);
	__atomic_store_n(&slot->state, XDP_SLOT_GONE, __ATOMIC_RELEASE);
	if (XDP_SLOT_ACTION(slot->flags) & XDP_ACTION_PASS)
		pass_count_change(s, -1);
	(void)counting_remove(s->counting, h, XDP_SLOT_GROUP(slot->flags)); /* counted when put: cannot fail */
	write_block(s, h, XDP_SLOT_GROUP(slot->flags));
	if (len > XDP_KEY_INLINE)
		s->free_long[s->nfree_long++] = (uint32_t)slot->key;
	if (kind == ENTRY_NET)
		net_length_out(s, key, len);
	__atomic_store_n(&s->mem.live->kind_count[kind], s->mem.live->kind_count[kind] - 1, __ATOMIC_RELEASE);
	s->count--;
	s->gone++;
}

bool xdpset_remove(struct xdpset *s, enum entry_kind kind, const uint8_t *key, size_t len)
{
	uint64_t w[XDP_KEY_MAX / 8];

	if (!key_fits(kind, len))
		return false;
	key_words(key, len, w);
	struct hash128 h = xdpset_hash(s, kind, key, len);
	struct xdp_slot *slot = find(s, h, kind, w, len, NULL);
	if (slot == NULL)
		return false;
	remove_slot(s, slot, h);
	return true;
}

int xdpset_sweep_begin(struct xdpset *s)
{
	free(s->kept);
	s->kept = calloc((size_t)s->shape.nbuckets * XDP_BUCKET_SLOTS, 1);
	return s->kept ? 0 : -1;
}

uint64_t xdpset_sweep_end(struct xdpset *s)
{
	uint64_t removed = 0;
	struct xdp_slot *slots = &s->mem.buckets[0].slot[0];

	for (uint64_t i = 0; s->kept && i < (uint64_t)s->shape.nbuckets * XDP_BUCKET_SLOTS; i++)
		if (slots[i].state == XDP_SLOT_FULL && !s->kept[i]) {
			remove_slot(s, &slots[i], xdpset_hash(s, slots[i].kind, slot_key(s, &slots[i]), slots[i].len));
			removed++;
		}
	free(s->kept);
	s->kept = NULL;
	return removed;
}

unsigned xdpset_action(const struct xdpset *s, enum entry_kind kind, const uint8_t *key, size_t len)
{
	uint64_t w[XDP_KEY_MAX / 8];

	if (!key_fits(kind, len))
		return 0;
	key_words(key, len, w);
	const struct xdp_slot *slot = find(s, xdpset_hash(s, kind, key, len), kind, w, len, NULL);
	return slot ? XDP_SLOT_ACTION(slot->flags) : 0;
}

int xdpset_foreach(const struct xdpset *s, xdpset_cb cb, void *ctx)
{
	for (uint32_t b = 0; b < s->shape.nbuckets; b++)
		for (unsigned i = 0; i < XDP_BUCKET_SLOTS; i++) {
			const struct xdp_slot *slot = &s->mem.buckets[b].slot[i];
			int r;
			if (slot->state == XDP_SLOT_FULL &&
			    (r = cb(ctx, slot->kind, slot_key(s, slot), slot->len, XDP_SLOT_ACTION(slot->flags))) != 0)
				return r;
		}
	return 0;
}

uint64_t xdpset_count(const struct xdpset *s)
{
	return s->count;
}

uint64_t xdpset_long_count(const struct xdpset *s)
{
	return s->shape.long_capacity - s->nfree_long;
}

bool xdpset_due(const struct xdpset *s)
{
	return s->count > s->shape.capacity || s->gone > (uint64_t)s->shape.nbuckets * XDP_BUCKET_SLOTS / 4;
}

const struct filter *xdpset_filter(const struct xdpset *s)
{
	return counting_filter(s->counting);
}

void xdpset_params(const struct xdpset_shape *shape, const struct hash_key *key, struct xdp_params *out)
{
	const struct filter_params *p = &shape->params;

	memset(out, 0, sizeof(*out));
	out->nblocks = p->bits / FILTER_BLOCK_BITS;
	out->hashes = p->hashes;
	out->choices = p->choices;
	out->nbuckets = shape->nbuckets;
	memcpy(out->salts, BLOCK_SALT32, sizeof(out->salts));
	memcpy(out->secret, key->secret, sizeof(out->secret));
}
