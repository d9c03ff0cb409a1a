/* entry_hash.h - an address, net or pair entry's keyed hash, as the filters and the XDP program take it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ENTRY_HASH_H
#define BLOOMD_ENTRY_HASH_H

#include "entry.h"
#include "hash_inline.h"

/*
 * The kind is the hash's domain, so equal bytes of two kinds hash apart; a
 * pair's hash is made from its two addresses' (hash_pair), which a packet
 * has already. Each length a key of the kind can have is a constant
 * (hash_inline_either), so XXH3's short-key path is compiled in place; with
 * the kind a constant too, the switch goes. bpf/xdp_drop.bpf.c computes the
 * same.
 */
static inline struct hash128 entry_hash(const struct hash_key *key, enum entry_kind kind, const uint8_t *bytes,
					size_t len)
{
	switch (kind) {
	case ENTRY_ADDR:
		return hash_inline_either(key, ENTRY_ADDR, bytes, len, 4, 16);
	case ENTRY_NET:
		return hash_inline_either(key, ENTRY_NET, bytes, len, 5, 17);
	case ENTRY_PAIR:
		return hash_pair(hash_inline_either(key, ENTRY_ADDR, bytes, len / 2, 4, 16),
				 hash_inline_either(key, ENTRY_ADDR, bytes + len / 2, len / 2, 4, 16));
	default:
		return hash_inline_domain(key, kind, bytes, len);
	}
}

#endif
