/* xdp_layout.h - what the XDP program and the daemon share: its parameters, the exact table, events, counters. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_XDP_LAYOUT_H
#define BLOOMD_XDP_LAYOUT_H

/*
 * Included by bpf/xdp_drop.bpf.c (clang -target bpf) and by the daemon, so
 * only fixed-size types. The program's filter is the daemon's blocked filter
 * (filter.h, block.h) word for word: blocks of eight 64-bit words in an
 * mmap-able array the daemon writes; a key's hash is XXH3-128 keyed by the
 * filter's secret, as hash.h computes it.
 *
 * Behind the filter, the exact table: buckets of one cache line, four
 * 16-byte slots each. Probe p of a key looks at bucket
 * ((hash.hi >> 32) + p * (hash.lo | 1)) (32 bits) reduced to nbuckets by
 * multiply-shift, for p < XDP_TABLE_PROBES (double hashing over buckets);
 * a slot is never moved, and a removed one becomes GONE, passed over, until
 * the next generation. A key of at most 8 bytes (an IPv4 address, net or
 * pair) sits in its slot; a longer one (IPv6) in the long keys, by index.
 * Either way the whole key is compared: a drop is never decided by the
 * filter alone.
 */

#include <linux/types.h>

#define XDP_KEY_MAX 32         /* an IPv6 pair */
#define XDP_KEY_INLINE 8       /* keys up to this long sit in their slot */
#define XDP_BUCKET_SLOTS 4
#define XDP_TABLE_PROBES 16    /* buckets looked at, at most */
#define XDP_MAX_HASHES 32      /* FILTER_MAX_HASHES */
#define XDP_MAX_CHOICES 3      /* FILTER_MAX_CHOICES */
#define XDP_NET_LENS 129       /* prefix lengths 0..128 */
#define XDP_EVENT_FRAME 128    /* bytes of a dropped frame its event carries */

enum xdp_slot_state { XDP_SLOT_EMPTY = 0, XDP_SLOT_FULL = 1, XDP_SLOT_GONE = 2 };

/*
 * What a key held in the table does to a packet: a drop entry drops it; a
 * pass entry exempts its own side (an address never judged bad), and one
 * with XDP_ACTION_PASS_PACKET too (pass = packet) the whole packet.
 */
enum xdp_entry_action { XDP_ACTION_DROP = 1, XDP_ACTION_PASS = 2, XDP_ACTION_PASS_PACKET = 4 };

struct xdp_slot {
	__u32 tag;                 /* the key's hash.lo >> 32 */
	__u8 state;                /* enum xdp_slot_state, written last on add and first on remove */
	__u8 kind;                 /* enum entry_kind */
	__u8 len;
	__u8 flags;                /* the action (enum xdp_entry_action) | the filter group << 4 (the daemon's) */
	__u64 key;                 /* len <= XDP_KEY_INLINE: the key, zero past len; else its long key's index */
};

#define XDP_SLOT_ACTION(flags) ((flags) & 0xf)
#define XDP_SLOT_GROUP(flags) ((flags) >> 4)

struct xdp_bucket {
	struct xdp_slot slot[XDP_BUCKET_SLOTS];
};

struct xdp_long_key {
	__u64 w[XDP_KEY_MAX / 8];  /* zero past len */
};

struct xdp_block {
	__u64 w[8];
};

/* Fixed for one loaded program (.rodata): a new size or secret is a new program, swapped in. */
struct xdp_params {
	__u64 nblocks;             /* of the filter as it is (folded) */
	__u32 folds, hashes, choices;
	__u32 nbuckets;            /* of the table */
	__u32 probe_only;          /* tests: drop when the filter alone says yes for the source address */
	__u32 salts[XDP_MAX_HASHES];
	__u64 secret[24];          /* the filter's 192-byte XXH3 secret */
};

/*
 * block.h's block_range_reduce (the high word of x * n) for n < 2^32, as
 * the program's filter map counts its blocks (xdpset_shape_for): two
 * multiplies where BPF, which has no 64 x 64 -> 128 multiply, takes four
 * for the whole product. x_hi * n + (x_lo * n >> 32) never overflows.
 */
static inline __u64 xdp_range_reduce32(__u64 x, __u64 n)
{
	return ((x >> 32) * n + (((x & 0xffffffff) * n) >> 32)) >> 32;
}

/* Changed while the program runs (.bss): the prefix lengths the table's nets have, per family. */
struct xdp_live {
	__u32 kind_count[4];       /* entries held, by kind (addr 1, net 2, pair 3): a kind with none is not probed */
	__u32 pass_count;          /* pass entries held: with none, the first dropping key decides */
	__u32 n_net_lens[2];       /* [0] IPv4, [1] IPv6 */
	__u8 net_lens[2][256];     /* XDP_NET_LENS used; a byte's worth, so that an index masked to 8 bits is in bounds */
	__u32 events_rate;         /* events a second at most */
};

/* XDP_UNPARSED: frames passed because they could not be read to their addresses (cut short, too many tags). */
enum xdp_counter { XDP_PASSED, XDP_DROPPED, XDP_EXEMPTED, XDP_EVENTS_SUPPRESSED, XDP_UNPARSED, XDP_COUNTERS };

/* The event ring's bytes: bloomd makes it, once, and each program it loads reuses it. */
#define XDP_EVENTS_BYTES (1u << 18)

/* One dropped packet, through the ring buffer. */
struct xdp_event {
	__u64 ts_ns;               /* CLOCK_MONOTONIC */
	__u32 wirelen, caplen;     /* caplen: of frame */
	__u8 kind, len, pad[6];    /* the entry that dropped it */
	__u64 key[XDP_KEY_MAX / 8];
	__u8 frame[XDP_EVENT_FRAME];
};

#endif
