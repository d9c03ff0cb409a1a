/* hash_inline.h - hash.h's XXH3 inlined, for the files that hash a key per packet. */
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

#endif
