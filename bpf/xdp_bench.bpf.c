// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* xdp_bench.bpf.c - the benchmark's peers of bloomd's XDP program, and the front that feeds them keys. */

/*
 * BPF_PROG_TEST_RUN repeats one packet; the front program writes the next
 * key of an array into its source address and tail-calls the program under
 * test, so each repetition looks a different key up (cold cache, as live
 * traffic would). Every program under test parses the frame the same way
 * and looks up the source and the destination address: a hash map, an LPM
 * trie of host prefixes, the kernel's bloom-filter map (membership only, no
 * confirmation) and a floor that only parses.
 */

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xdp_parse.h"

struct addr16 {
	__u8 b[16];
};

const volatile __u32 nkeys = 1;
const volatile __u32 family = 4;
__u64 counter;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct addr16);
	__uint(max_entries, 1);    /* set at load */
} keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
} target SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} hash4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct addr16);
	__type(value, __u32);
	__uint(max_entries, 1);
} hash6 SEC(".maps");

struct lpm4_key {
	__u32 prefixlen;
	__u32 addr;
};

struct lpm6_key {
	__u32 prefixlen;
	struct addr16 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm4_key);
	__type(value, __u32);
	__uint(max_entries, 1);
} lpm4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm6_key);
	__type(value, __u32);
	__uint(max_entries, 1);
} lpm6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__type(value, __u32);
	__uint(max_entries, 1);
	__uint(map_extra, 3);      /* hashes: set at load */
} bloom4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__type(value, struct addr16);
	__uint(max_entries, 1);
	__uint(map_extra, 3);
} bloom6 SEC(".maps");

SEC("xdp")
int bench_front(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 i = (__u32)(counter++ % nkeys);
	struct addr16 *k = bpf_map_lookup_elem(&keys, &i);

	if (!k)
		return XDP_ABORTED;
	if (family == 4) {
		if (data + 14 + 16 > end)
			return XDP_ABORTED;
		__builtin_memcpy(data + 14 + 12, k->b, 4);
	} else {
		if (data + 14 + 24 > end)
			return XDP_ABORTED;
		__builtin_memcpy(data + 14 + 8, k->b, 16);
	}
	bpf_tail_call(ctx, &target, 0);
	return XDP_ABORTED;
}

/* The frame's two addresses, as bloomd's program reads them (xdp_parse.h). */
struct ends {
	int v6;
	__u32 s4, d4;
	struct addr16 s6, d6;
};

static __always_inline int parse(struct xdp_md *ctx, struct ends *e)
{
	__u8 addr[2][16] = {};
	__u32 alen = 0;

	if (xdp_parse_addresses(ctx, addr, &alen) <= 0)
		return 0;
	e->v6 = alen == 16;
	__builtin_memcpy(&e->s4, addr[0], 4);
	__builtin_memcpy(&e->d4, addr[1], 4);
	__builtin_memcpy(&e->s6, addr[0], 16);
	__builtin_memcpy(&e->d6, addr[1], 16);
	return 1;
}

SEC("xdp")
int peer_floor(struct xdp_md *ctx)
{
	struct ends e;

	return parse(ctx, &e) ? XDP_PASS : XDP_ABORTED;
}

SEC("xdp")
int peer_hash(struct xdp_md *ctx)
{
	struct ends e;

	if (!parse(ctx, &e))
		return XDP_PASS;
	if (!e.v6)
		return bpf_map_lookup_elem(&hash4, &e.s4) || bpf_map_lookup_elem(&hash4, &e.d4) ? XDP_DROP : XDP_PASS;
	return bpf_map_lookup_elem(&hash6, &e.s6) || bpf_map_lookup_elem(&hash6, &e.d6) ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int peer_lpm(struct xdp_md *ctx)
{
	struct ends e;

	if (!parse(ctx, &e))
		return XDP_PASS;
	if (!e.v6) {
		struct lpm4_key s = { 32, e.s4 }, d = { 32, e.d4 };
		return bpf_map_lookup_elem(&lpm4, &s) || bpf_map_lookup_elem(&lpm4, &d) ? XDP_DROP : XDP_PASS;
	}
	struct lpm6_key s = { 128, e.s6 }, d = { 128, e.d6 };
	return bpf_map_lookup_elem(&lpm6, &s) || bpf_map_lookup_elem(&lpm6, &d) ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int peer_bloom(struct xdp_md *ctx)
{
	struct ends e;

	if (!parse(ctx, &e))
		return XDP_PASS;
	if (!e.v6)
		return bpf_map_peek_elem(&bloom4, &e.s4) == 0 || bpf_map_peek_elem(&bloom4, &e.d4) == 0 ? XDP_DROP : XDP_PASS;
	return bpf_map_peek_elem(&bloom6, &e.s6) == 0 || bpf_map_peek_elem(&bloom6, &e.d6) == 0 ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL"; /* GPL-compatible: the GPL-only helpers stay */
