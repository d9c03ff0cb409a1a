/* hash.c - keyed 128-bit hashing of entry bytes (XXH3 or SipHash-1-3). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "hash.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
/* libxxhash's header-only mode: XXH3 inlined into hash_bytes, no call per key. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rng.h"

int hash_key_random(struct hash_key *key, enum hash_algo algo)
{
	size_t got = 0;

	key->algo = algo;
	while (got < sizeof(key->secret)) {
		ssize_t n = getrandom(key->secret + got, sizeof(key->secret) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

void hash_key_from_seed(struct hash_key *key, enum hash_algo algo, uint64_t seed)
{
	key->algo = algo;
	for (size_t i = 0; i < sizeof(key->secret); i += 8) {
		uint64_t word = rng_splitmix64(&seed);
		memcpy(key->secret + i, &word, 8);
	}
}

bool hash_key_equal(const struct hash_key *a, const struct hash_key *b)
{
	return a->algo == b->algo && memcmp(a->secret, b->secret, sizeof(a->secret)) == 0;
}

const char *hash_algo_name(enum hash_algo algo)
{
	return algo == HASH_SIPHASH13 ? "siphash13" : "xxh3";
}

int hash_algo_parse(const char *name, enum hash_algo *algo)
{
	if (strcmp(name, "xxh3") == 0)
		*algo = HASH_XXH3;
	else if (strcmp(name, "siphash13") == 0)
		*algo = HASH_SIPHASH13;
	else
		return -1;
	return 0;
}

static inline uint64_t load64_le(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

#define SIPROUND                                                              \
	do {                                                                  \
		v0 += v1; v1 = rng_rotl(v1, 13); v1 ^= v0; v0 = rng_rotl(v0, 32); \
		v2 += v3; v3 = rng_rotl(v3, 16); v3 ^= v2;                    \
		v0 += v3; v3 = rng_rotl(v3, 21); v3 ^= v0;                    \
		v2 += v1; v1 = rng_rotl(v1, 17); v1 ^= v2; v2 = rng_rotl(v2, 32); \
	} while (0)

struct hash128 hash_siphash128(const uint8_t key[16], const void *data, size_t len,
			       unsigned c_rounds, unsigned d_rounds)
{
	const uint8_t *in = data;
	uint64_t k0 = load64_le(key), k1 = load64_le(key + 8);
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
	uint64_t v1 = 0x646f72616e646f6dULL ^ k1 ^ 0xee; /* 0xee: 128-bit output */
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
	uint64_t v3 = 0x7465646279746573ULL ^ k1;
	size_t full = len & ~(size_t)7;
	struct hash128 out;

	for (size_t off = 0; off < full; off += 8) {
		uint64_t m = load64_le(in + off);
		v3 ^= m;
		for (unsigned r = 0; r < c_rounds; r++)
			SIPROUND;
		v0 ^= m;
	}
	uint64_t last = (uint64_t)len << 56;
	for (size_t i = 0; i < (len & 7); i++)
		last |= (uint64_t)in[full + i] << (8 * i);
	v3 ^= last;
	for (unsigned r = 0; r < c_rounds; r++)
		SIPROUND;
	v0 ^= last;

	v2 ^= 0xee;
	for (unsigned r = 0; r < d_rounds; r++)
		SIPROUND;
	out.lo = v0 ^ v1 ^ v2 ^ v3;
	v1 ^= 0xdd;
	for (unsigned r = 0; r < d_rounds; r++)
		SIPROUND;
	out.hi = v0 ^ v1 ^ v2 ^ v3;
	return out;
}

struct hash128 hash_bytes_domain(const struct hash_key *key, unsigned d, const void *data,
				 size_t len)
{
	struct hash128 h;

	/* XXH3 wants at least XXH3_SECRET_SIZE_MIN (136) bytes: 192 - 8 * 6 = 144 is left. */
	if (key->algo == HASH_SIPHASH13)
		return hash_siphash128(key->secret + 16 * d, data, len, 1, 3);
	XXH128_hash_t x = XXH3_128bits_withSecret(data, len, key->secret + 8 * d,
						  sizeof(key->secret) - 8 * d);
	h.lo = x.low64;
	h.hi = x.high64;
	return h;
}

struct hash128 hash_bytes(const struct hash_key *key, const void *data, size_t len)
{
	return hash_bytes_domain(key, 0, data, len);
}

uint64_t hash_bytes64(const struct hash_key *key, const void *data, size_t len)
{
	if (key->algo == HASH_SIPHASH13)
		return hash_bytes_domain(key, 0, data, len).lo;
	return XXH3_64bits_withSecret(data, len, key->secret, sizeof(key->secret));
}
