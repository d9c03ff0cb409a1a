// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* xdp_drop.bpf.c - bloomd at the driver: a packet's addresses through the daemon's filter, confirmed exactly. */

/*
 * Per packet: the source and destination addresses, their pair and, for
 * each prefix length the table's nets have, the two networks; each key is
 * hashed as the daemon hashes it (XXH3-128 under the key's domain of the
 * secret), tested against the blocked filter, and only a key the filter
 * passes is looked up in the exact table. A key held by a pass list exempts
 * its side (the source's keys, the destination's) from being judged, and the
 * packet if it is a pair or its list says pass = packet; a key held by a
 * dropping list on a side not exempt (a pair: unless both ends are) drops it.
 * Everything else, non-IP frames included, goes on to the stack untouched.
 */

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xdp_layout.h"
#include "xdp_parse.h"

/* entry.h's kinds: each is a domain of the secret. */
#define KIND_ADDR 1
#define KIND_NET 2
#define KIND_PAIR 3

#define PRIME32_2 0x85EBCA77U
#define PRIME64_1 0x9E3779B185EBCA87ULL
#define PRIME64_2 0xC2B2AE3D27D4EB4FULL
#define PRIME64_4 0x85EBCA77C2B2AE63ULL

const volatile struct xdp_params params;
struct xdp_live live;
__u64 rate_second, rate_count;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xdp_block);
	__uint(max_entries, 1);    /* set at load */
} filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xdp_bucket);
	__uint(max_entries, 1);    /* set at load */
} table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xdp_long_key);
	__uint(max_entries, 1);    /* set at load */
} long_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, XDP_COUNTERS);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XDP_EVENTS_BYTES);
} events SEC(".maps");

struct h128 {
	__u64 lo, hi;
};

/* ---- XXH3-128, the paths of 4 to 8, 9 to 16 and 17 to 32 bytes (xxhash.h, seed 0) ---- */

static __always_inline struct h128 mult64to128(__u64 a, __u64 b)
{
	__u64 lo_lo = (a & 0xffffffff) * (b & 0xffffffff);
	__u64 hi_lo = (a >> 32) * (b & 0xffffffff);
	__u64 lo_hi = (a & 0xffffffff) * (b >> 32);
	__u64 hi_hi = (a >> 32) * (b >> 32);
	__u64 cross = (lo_lo >> 32) + (hi_lo & 0xffffffff) + lo_hi;
	struct h128 r = { (cross << 32) | (lo_lo & 0xffffffff), (hi_lo >> 32) + (cross >> 32) + hi_hi };
	return r;
}

static __always_inline __u64 fold64(__u64 a, __u64 b)
{
	struct h128 p = mult64to128(a, b);
	return p.lo ^ p.hi;
}

static __always_inline __u64 avalanche(__u64 h)
{
	h ^= h >> 37;
	h *= 0x165667919E3779F9ULL;
	return h ^ (h >> 32);
}

static __always_inline __u64 swap64(__u64 x)
{
	return __builtin_bswap64(x);
}

/* The secret's word i of domain d (the daemon keys domain d with the secret from byte 8d). */
static __always_inline __u64 sec(unsigned d, unsigned i)
{
	return params.secret[d + i];
}

static __always_inline __u64 read64(const __u8 *p)
{
	__u64 v;
	__builtin_memcpy(&v, p, 8);
	return v;
}

static __always_inline __u32 read32(const __u8 *p)
{
	__u32 v;
	__builtin_memcpy(&v, p, 4);
	return v;
}

static __always_inline struct h128 xxh_4to8(const __u8 *in, __u32 len, unsigned d)
{
	__u64 input64 = read32(in) + ((__u64)read32(in + len - 4) << 32);
	__u64 keyed = input64 ^ (sec(d, 2) ^ sec(d, 3));
	struct h128 m = mult64to128(keyed, PRIME64_1 + ((__u64)len << 2));

	m.hi += m.lo << 1;
	m.lo ^= m.hi >> 3;
	m.lo ^= m.lo >> 35;
	m.lo *= 0x9FB21C651E98DF25ULL;
	m.lo ^= m.lo >> 28;
	m.hi = avalanche(m.hi);
	return m;
}

static __always_inline struct h128 xxh_9to16(const __u8 *in, __u32 len, unsigned d)
{
	__u64 bitflipl = sec(d, 4) ^ sec(d, 5), bitfliph = sec(d, 6) ^ sec(d, 7);
	__u64 input_lo = read64(in), input_hi = read64(in + len - 8);
	struct h128 m = mult64to128(input_lo ^ input_hi ^ bitflipl, PRIME64_1);

	m.lo += (__u64)(len - 1) << 54;
	input_hi ^= bitfliph;
	m.hi += input_hi + (input_hi & 0xffffffff) * (PRIME32_2 - 1);
	m.lo ^= swap64(m.hi);
	struct h128 h = mult64to128(m.lo, PRIME64_2);
	h.hi += m.hi * PRIME64_2;
	h.lo = avalanche(h.lo);
	h.hi = avalanche(h.hi);
	return h;
}

static __always_inline __u64 mix16(const __u8 *in, unsigned d, unsigned i)
{
	return fold64(read64(in) ^ sec(d, i), read64(in + 8) ^ sec(d, i + 1));
}

static __always_inline struct h128 xxh_17to32(const __u8 *in, __u32 len, unsigned d)
{
	struct h128 acc = { len * PRIME64_1, 0 };
	const __u8 *in2 = in + len - 16;

	acc.lo += mix16(in, d, 0);
	acc.lo ^= read64(in2) + read64(in2 + 8);
	acc.hi += mix16(in2, d, 2);
	acc.hi ^= read64(in) + read64(in + 8);
	struct h128 h = { acc.lo + acc.hi, acc.lo * PRIME64_1 + acc.hi * PRIME64_4 + len * PRIME64_2 };
	h.lo = avalanche(h.lo);
	h.hi = 0 - avalanche(h.hi);
	return h;
}

/* A key of 4, 5, 16 or 17 bytes (an address, a net key) under domain d. */
static __always_inline struct h128 key_hash(const __u8 *in, __u32 len, unsigned d)
{
	if (len <= 8)
		return xxh_4to8(in, len, d);
	if (len <= 16)
		return xxh_9to16(in, len, d);
	return xxh_17to32(in, len, d);
}

/* matcher_internal.h's pair_hash: from the two addresses' hashes. */
static __always_inline struct h128 pair_hash(struct h128 s, struct h128 d)
{
	struct h128 h = { s.lo ^ d.hi * 0x9e3779b97f4a7c15ULL, d.lo ^ s.hi * 0xc2b2ae3d27d4eb4fULL };
	return h;
}

/* ---- the blocked filter (block.h) ---- */

static const __u64 GROUP_MUL[XDP_MAX_CHOICES][2] = {
	{ 1, 1 },
	{ 0x9e3779b97f4a7c15ULL, 0xd6e8feb86659fd93ULL },
	{ 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL },
};

/* The exact table's bucket probe p of a key looks at (xdpset_bucket's). */
static __always_inline __u32 bucket_index(struct h128 h, __u32 p)
{
	__u32 x = (__u32)(h.hi >> 32) + p * ((__u32)h.lo | 1);

	return (__u32)(((__u64)x * params.nbuckets) >> 32);
}

/*
 * A group whose first four bits are set is likely a held key's (a stranger's
 * passes one time in sixteen at half fill): its first bucket is read then,
 * the value unused, so that the table's cache miss runs while the group's
 * other bits are tested, not after them.
 */
static __always_inline void table_touch(struct h128 h)
{
	__u32 index = bucket_index(h, 0);
	struct xdp_bucket *b = bpf_map_lookup_elem(&table, &index);

	if (b)
		(void)*(volatile __u8 *)&b->slot[0].state;
}

static __always_inline int group_covers(struct h128 h, unsigned g)
{
	__u64 x = h.lo * GROUP_MUL[g][0];
	__u32 y32 = (h.hi * GROUP_MUL[g][1]) >> 32;
	__u64 b = xdp_range_reduce32(x, params.nblocks << params.folds); /* blocks fit 32 bits: xdpset_shape_for */

	if (params.folds)
		b %= params.nblocks;
	__u32 index = (__u32)b;
	struct xdp_block *block = bpf_map_lookup_elem(&filter, &index);
	if (!block)
		return 0;
	for (unsigned i = 0; i < XDP_MAX_HASHES; i += 4) {
		__u64 all = 1;
		for (unsigned j = 0; j < 4; j++) {
			if (i + j >= params.hashes)
				break;
			__u32 pos = (__u32)(y32 * params.salts[i + j]) >> 23;
			all &= block->w[(pos >> 6) & 7] >> (pos & 63);
		}
		if (!(all & 1))
			return 0;
		if (i == 0)
			table_touch(h);
		if (i + 4 >= params.hashes)
			break;
	}
	return 1;
}

static __always_inline int filter_says(struct h128 h)
{
	for (unsigned g = 0; g < XDP_MAX_CHOICES; g++) {
		if (g >= params.choices)
			break;
		if (group_covers(h, g))
			return 1;
	}
	return 0;
}

/* ---- the exact table ---- */

struct key {
	__u64 w[XDP_KEY_MAX / 8];
	__u8 kind, len;
};

/* Whether slot s holds k (hash h): the whole key compared, in the slot or in the long keys. */
static __always_inline int slot_holds(const struct xdp_slot *s, const struct key *k, struct h128 h)
{
	if (*(volatile __u8 *)&s->state != XDP_SLOT_FULL || s->tag != (__u32)(h.lo >> 32) || s->kind != k->kind ||
	    s->len != k->len)
		return 0;
	if (k->len <= XDP_KEY_INLINE)
		return s->key == k->w[0];
	__u32 index = (__u32)s->key;
	struct xdp_long_key *lk = bpf_map_lookup_elem(&long_keys, &index);
	return lk && lk->w[0] == k->w[0] && lk->w[1] == k->w[1] && lk->w[2] == k->w[2] && lk->w[3] == k->w[3];
}

/*
 * The action of the table's entry for k (hash lo, hi), or 0: xdpset_bucket's
 * probes, slot by slot. A global function: the verifier checks it once, not
 * once for every kind of key that calls it.
 */
__noinline int table_action(const struct key *k, __u64 lo, __u64 hi)
{
	struct h128 h = { lo, hi };

	if (!k)
		return 0;
	for (__u32 p = 0; p < XDP_TABLE_PROBES; p++) {
		__u32 index = bucket_index(h, p);
		struct xdp_bucket *b = bpf_map_lookup_elem(&table, &index);
		if (!b)
			return 0;
		for (int i = 0; i < XDP_BUCKET_SLOTS; i++) {
			struct xdp_slot *s = &b->slot[i];
			if (*(volatile __u8 *)&s->state == XDP_SLOT_EMPTY)
				return 0;
			if (slot_holds(s, k, h))
				return XDP_SLOT_ACTION(s->flags);
		}
	}
	return 0;
}

/* The side of the packet a key is about. */
enum side { SIDE_SRC, SIDE_DST, SIDE_PAIR, SIDES };

/*
 * What the packet's keys say so far: the actions seen, by side, and the kind
 * (and a net's prefix length) of each side's first dropping key. The key
 * itself is made again from the packet for the event: kept whole, three keys
 * were 120 bytes to clear for every packet, on a stack of 512.
 */
struct verdict {
	int actions;
	int side[SIDES];
	__u8 drop_kind[SIDES];
	__u8 drop_plen[SIDES];
};

static __always_inline void check_key(struct verdict *v, const struct key *k, struct h128 h, enum side side)
{
	if (!filter_says(h))
		return;
	int action = table_action(k, h.lo, h.hi);
	if ((action & XDP_ACTION_DROP) && !(v->side[side] & XDP_ACTION_DROP)) {
		v->drop_kind[side] = k->kind;
		v->drop_plen[side] = *(const __u8 *)k->w; /* a net key's first byte */
	}
	v->side[side] |= action;
	v->actions |= action;
}

/* The side whose dropping key drops the packet, or -1 if it passes (exempt, or nothing dropping). */
static __always_inline int dropping_side(const struct verdict *v)
{
	int pass_src = v->side[SIDE_SRC] & XDP_ACTION_PASS, pass_dst = v->side[SIDE_DST] & XDP_ACTION_PASS;

	if ((v->actions & XDP_ACTION_PASS_PACKET) || (v->side[SIDE_PAIR] & XDP_ACTION_PASS))
		return -1;
	if (!pass_src && (v->side[SIDE_SRC] & XDP_ACTION_DROP))
		return SIDE_SRC;
	if (!pass_dst && (v->side[SIDE_DST] & XDP_ACTION_DROP))
		return SIDE_DST;
	if (!(pass_src && pass_dst) && (v->side[SIDE_PAIR] & XDP_ACTION_DROP))
		return SIDE_PAIR;
	return -1;
}

/* A dropping key found and no pass entry held: the other keys cannot change the verdict. */
static __always_inline int decided(const struct verdict *v)
{
	return (v->actions & XDP_ACTION_DROP) && !live.pass_count;
}

/* ---- the packet ---- */

struct packet {
	__u8 addr[2][16];          /* source, destination */
	__u32 alen;                /* 4 or 16 */
	struct verdict *v;
};

static __always_inline void net_key(struct key *k, const __u8 *addr, __u32 alen, __u32 plen)
{
	__u64 w[2] = { 0, 0 };

	__builtin_memcpy(w, addr, 16);
	for (int i = 0; i < 2; i++) {
		__u32 bits = plen > 64u * i ? plen - 64u * i : 0;
		__u64 keep = bits >= 64 ? ~0ULL : bits ? ~0ULL << (64 - bits) : 0;
		w[i] &= swap64(keep);
	}
	if (alen == 4)
		w[0] &= 0xffffffff;  /* the daemon's key holds the address's bytes only */
	__u8 *b = (__u8 *)k->w;
	k->w[0] = k->w[1] = k->w[2] = k->w[3] = 0;
	b[0] = (__u8)plen;
	__builtin_memcpy(b + 1, w, 16);
	if (alen == 4)
		k->w[0] &= 0xffffffffffULL;
	else
		k->w[2] &= 0xff;
	k->kind = KIND_NET;
	k->len = 1 + alen;
}

static __always_inline void count(enum xdp_counter c)
{
	__u32 index = c;
	__u64 *n = bpf_map_lookup_elem(&counters, &index);

	if (n)
		*n += 1;
}

/*
 * At most live.events_rate events in any window of 2^30 ns (1.07 s: a
 * shift, where a second would be a division on every drop), across the
 * CPUs: so never more than events_rate in a second.
 */
static __always_inline int event_allowed(__u64 now)
{
	__u64 window = now >> 30;

	if (window != rate_second) {
		rate_second = window;
		rate_count = 0;
	}
	return __sync_fetch_and_add(&rate_count, 1) < live.events_rate;
}

static __always_inline void addr_key(struct key *k, const __u8 *addr, __u32 alen)
{
	k->w[0] = k->w[1] = k->w[2] = k->w[3] = 0;
	__builtin_memcpy(k->w, addr, 16);
	if (alen == 4)
		k->w[0] &= 0xffffffff, k->w[1] = 0;
	k->kind = KIND_ADDR;
	k->len = alen;
}

/* The pair key: source then destination, whole words, zero past them. */
static __always_inline void pair_key(struct key *k, const struct packet *p)
{
	__builtin_memcpy(k->w, p->addr[0], 16);
	__builtin_memcpy((__u8 *)k->w + 16, p->addr[1], 16);
	if (p->alen == 4) {
		k->w[0] = (k->w[0] & 0xffffffff) | (k->w[2] << 32);
		k->w[1] = k->w[2] = k->w[3] = 0;
	}
	k->kind = KIND_PAIR;
	k->len = 2 * p->alen;
}

/* Side's first dropping key, made again from the packet. */
static __always_inline void dropping_key(struct key *k, const struct packet *p, int side)
{
	const struct verdict *v = p->v;
	const __u8 *addr = side == SIDE_DST ? p->addr[1] : p->addr[0];
	__u8 kind = side == SIDE_PAIR  ? v->drop_kind[SIDE_PAIR]
		    : side == SIDE_DST ? v->drop_kind[SIDE_DST]
				       : v->drop_kind[SIDE_SRC];
	__u8 plen = side == SIDE_DST ? v->drop_plen[SIDE_DST] : v->drop_plen[SIDE_SRC]; /* a pair is never a net */

	if (kind == KIND_PAIR)
		pair_key(k, p);
	else if (kind == KIND_NET)
		net_key(k, addr, p->alen, plen);
	else
		addr_key(k, addr, p->alen);
}

static __always_inline void send_event(struct xdp_md *ctx, const struct packet *p, int side)
{
	__u64 now = live.events_rate ? bpf_ktime_get_ns() : 0;

	if (!live.events_rate || !event_allowed(now)) {
		count(XDP_EVENTS_SUPPRESSED);
		return;
	}
	struct xdp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(XDP_EVENTS_SUPPRESSED);
		return;
	}
	__u32 wirelen = ctx->data_end - ctx->data, caplen = wirelen < XDP_EVENT_FRAME ? wirelen : XDP_EVENT_FRAME;
	barrier_var(caplen);
	caplen = ((caplen - 1) & (XDP_EVENT_FRAME - 1)) + 1; /* 1..128, as the verifier wants it shown */
	e->ts_ns = now;
	e->wirelen = wirelen;
	struct key why;
	dropping_key(&why, p, side);
	e->kind = why.kind;
	e->len = why.len;
	__builtin_memcpy(e->key, why.w, sizeof(e->key));
	if (bpf_xdp_load_bytes(ctx, 0, e->frame, caplen) < 0)
		caplen = 0;
	e->caplen = caplen;
	bpf_ringbuf_submit(e, 0);
}

/* The addr keys of both ends and their pair (its hash made from theirs), hashes hs and hd. */
static __always_inline void check_addresses(struct packet *p, struct h128 hs)
{
	struct key k;

	if (live.kind_count[KIND_ADDR]) {
		addr_key(&k, p->addr[0], p->alen);
		check_key(p->v, &k, hs, SIDE_SRC);
		if (decided(p->v))
			return; /* the destination's hash not even made */
	}
	addr_key(&k, p->addr[1], p->alen);
	struct h128 hd = key_hash((const __u8 *)k.w, p->alen, KIND_ADDR);
	if (live.kind_count[KIND_ADDR])
		check_key(p->v, &k, hd, SIDE_DST);
	if (live.kind_count[KIND_PAIR] && !decided(p->v)) {
		pair_key(&k, p);
		check_key(p->v, &k, pair_hash(hs, hd), SIDE_PAIR);
	}
}

/* Prefix length j in use: both ends' networks (a bpf_loop callback: one copy for every length). */
struct net_walk {
	struct packet *p;
	__u32 v6;
};

static long check_net_len(__u32 j, void *arg)
{
	struct net_walk *walk = arg;
	struct packet *p = walk->p;
	struct key k;

	if (j >= XDP_NET_LENS)
		return 1;
	asm volatile("%[j] &= 0xff" : [j] "+r"(j)); /* bounded in the register that indexes, as the verifier must see */
	__u32 plen = walk->v6 ? live.net_lens[1][j] : live.net_lens[0][j];
	net_key(&k, p->addr[0], p->alen, plen);
	check_key(p->v, &k, key_hash((const __u8 *)k.w, k.len, KIND_NET), SIDE_SRC);
	if (decided(p->v))
		return 1;
	net_key(&k, p->addr[1], p->alen, plen);
	check_key(p->v, &k, key_hash((const __u8 *)k.w, k.len, KIND_NET), SIDE_DST);
	return decided(p->v);
}

SEC("xdp")
int bloomd_xdp(struct xdp_md *ctx)
{
	struct verdict v = { 0 };
	struct packet p = { .v = &v };
	struct key k;

	int parsed = xdp_parse_addresses(ctx, p.addr, &p.alen);
	if (parsed <= 0) {
		if (parsed < 0) /* the capture behind the program sees it: never let through unsaid */
			count(XDP_UNPARSED);
		count(XDP_PASSED);
		return XDP_PASS;
	}
	if (params.probe_only || live.kind_count[KIND_ADDR] || live.kind_count[KIND_PAIR]) {
		addr_key(&k, p.addr[0], p.alen);
		struct h128 hs = key_hash((const __u8 *)k.w, p.alen, KIND_ADDR);
		if (params.probe_only)
			return filter_says(hs) ? XDP_DROP : XDP_PASS;
		check_addresses(&p, hs);
	}
	struct net_walk walk = { &p, p.alen == 16 };
	__u32 lens = live.kind_count[KIND_NET] && !decided(&v) ? live.n_net_lens[walk.v6] : 0;
	if (lens > XDP_NET_LENS)
		lens = XDP_NET_LENS;
	if (lens)
		bpf_loop(lens, check_net_len, &walk, 0);

	int side = dropping_side(&v);
	if (side >= 0) {
		count(XDP_DROPPED);
		send_event(ctx, &p, side);
		return XDP_DROP;
	}
	if (v.actions & XDP_ACTION_PASS)
		count(XDP_EXEMPTED);
	count(XDP_PASSED);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL"; /* GPL-compatible: the GPL-only helpers stay */
