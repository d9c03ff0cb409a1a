/* hash_inline.h - hash.h's XXH3 inlined, for the files that hash a key per packet. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_HASH_INLINE_H
#define BLOOMD_HASH_INLINE_H

/*
 * hash_bytes_domain is a call into hash.c and XXH3's generic entry; where a
 * key is hashed for every probe (the matcher's addresses, a filter's
 * one-key query) the same hash, bit for bit, is compiled in place, so the
 * compiler sees the key's length and takes XXH3's short-key path directly.
 */

#include "hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline struct hash128 hash_inline_domain(const struct hash_key *key, unsigned d, const void *data, size_t len)
{
	if (key->algo != HASH_XXH3)
		return hash_bytes_domain(key, d, data, len);
	XXH128_hash_t x = XXH3_128bits_withSecret(data, len, key->secret + 8 * d, sizeof(key->secret) - 8 * d);
	return (struct hash128){ .lo = x.low64, .hi = x.high64 };
}

/*
 * The same for a key of one of two lengths, a or b, each hashed with its
 * length a constant (a and b must be): XXH3's short-key path for it is then
 * compiled in place, where with the length a variable the compiler calls
 * XXH3's whole dispatch (6% of a replay's time, for the address probes).
 */
static inline struct hash128 hash_inline_either(const struct hash_key *key, unsigned d, const void *data, size_t len,
						size_t a, size_t b)
{
	if (len == a)
		return hash_inline_domain(key, d, data, a);
	if (len == b)
		return hash_inline_domain(key, d, data, b);
	return hash_inline_domain(key, d, data, len);
}

/*
 * A pair's hash is made from its two addresses' hashes, which a packet needs
 * for its addr probes anyway; the mix is asymmetric, so (a, b) and (b, a)
 * hash apart. The XDP program (bpf/xdp_drop.bpf.c) computes the same.
 */
static inline struct hash128 hash_pair(struct hash128 src, struct hash128 dst)
{
	struct hash128 h = {
		.lo = src.lo ^ dst.hi * 0x9e3779b97f4a7c15ULL,
		.hi = dst.lo ^ src.hi * 0xc2b2ae3d27d4eb4fULL,
	};
	return h;
}

#endif
