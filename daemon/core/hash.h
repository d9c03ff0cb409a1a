/* hash.h - keyed 128-bit hashing of entry bytes (XXH3 or SipHash-1-3). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_HASH_H
#define BLOOMD_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every filter has its own random secret, so an attacker who does not know it
 * cannot craft keys that collide in the filter or flood one block. The secret
 * is part of the filter's identity: filters built with different secrets
 * cannot be merged, and the secret is saved with the filter.
 *
 *   XXH3      fast keyed hash (libxxhash, 192-byte secret); the default.
 *   SIPHASH13 SipHash-1-3 with 128-bit output, keyed by the first 16 secret
 *             bytes: a PRF, for operators who want one; slower.
 */
enum hash_algo {
	HASH_XXH3 = 0,
	HASH_SIPHASH13 = 1,
};

#define HASH_SECRET_SIZE 192

struct hash_key {
	enum hash_algo algo;
	uint8_t secret[HASH_SECRET_SIZE];
};

struct hash128 {
	uint64_t lo;
	uint64_t hi;
};

/* Fill key with a fresh secret from getrandom(2). Returns 0, or -1 with errno set. */
int hash_key_random(struct hash_key *key, enum hash_algo algo);

/* Fill key deterministically from seed (tests and simulations only). */
void hash_key_from_seed(struct hash_key *key, enum hash_algo algo, uint64_t seed);

bool hash_key_equal(const struct hash_key *a, const struct hash_key *b);

/* Name of an algorithm ("xxh3", "siphash13"), and the reverse; -1 if unknown. */
const char *hash_algo_name(enum hash_algo algo);
int hash_algo_parse(const char *name, enum hash_algo *algo);

/* The keyed 128-bit hash of len bytes at data. */
struct hash128 hash_bytes(const struct hash_key *key, const void *data, size_t len);
/* A keyed 64-bit hash of len bytes at data, for tables that need no more (about half hash_bytes' work with XXH3). */
uint64_t hash_bytes64(const struct hash_key *key, const void *data, size_t len);

/*
 * The same under domain d (0..HASH_MAX_DOMAIN): each domain keys the hash with
 * another part of the secret, so equal bytes in different domains (an entry's
 * kind) hash independently without being copied behind a prefix.
 * hash_bytes is domain 0.
 */
#define HASH_MAX_DOMAIN 6
struct hash128 hash_bytes_domain(const struct hash_key *key, unsigned d, const void *data,
				 size_t len);

/*
 * SipHash-c-d with 128-bit output (Aumasson & Bernstein), the general form:
 * hash_bytes uses c = 1, d = 3; tests check c = 2, d = 4 against the
 * reference vectors.
 */
struct hash128 hash_siphash128(const uint8_t key[16], const void *data, size_t len,
			       unsigned c_rounds, unsigned d_rounds);

#endif
