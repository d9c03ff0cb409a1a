/* Unit tests for hash.c: reference vectors, keying, determinism. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>

#include "hash.h"
#include "hash_inline.h"
#include "test.h"

/* SipHash-2-4-128 reference vectors (Aumasson & Bernstein), key 00..0f, message 00..len-1. */
static const uint8_t SIP128[3][16] = {
	{ 0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93 },
	{ 0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b, 0x22, 0xfc, 0x45 },
	{ 0x81, 0x77, 0x22, 0x8d, 0xa4, 0xa4, 0x5d, 0xc7, 0xfc, 0xa3, 0x8b, 0xde, 0xf6, 0x0a, 0xff, 0xe4 },
};

static void siphash_reference_vectors(void **state)
{
	uint8_t key[16], msg[16], out[16];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = msg[i] = (uint8_t)i;
	for (size_t len = 0; len < 3; len++) {
		struct hash128 h = hash_siphash128(key, msg, len, 2, 4);
		for (int i = 0; i < 8; i++) {
			out[i] = (uint8_t)(h.lo >> (8 * i));
			out[8 + i] = (uint8_t)(h.hi >> (8 * i));
		}
		assert_memory_equal(out, SIP128[len], 16);
	}
}

static void same_key_same_hash(void **state)
{
	struct hash_key a, b;

	(void)state;
	for (int algo = HASH_XXH3; algo <= HASH_SIPHASH13; algo++) {
		hash_key_from_seed(&a, (enum hash_algo)algo, 42);
		hash_key_from_seed(&b, (enum hash_algo)algo, 42);
		assert_true(hash_key_equal(&a, &b));
		struct hash128 x = hash_bytes(&a, "192.0.2.1", 9), y = hash_bytes(&b, "192.0.2.1", 9);
		assert_true(x.lo == y.lo && x.hi == y.hi);
	}
}

static void keys_change_the_hash(void **state)
{
	struct hash_key a, b, s;

	(void)state;
	hash_key_from_seed(&a, HASH_XXH3, 1);
	hash_key_from_seed(&b, HASH_XXH3, 2);
	hash_key_from_seed(&s, HASH_SIPHASH13, 1);
	assert_false(hash_key_equal(&a, &b));
	assert_false(hash_key_equal(&a, &s)); /* same secret, other algorithm */
	struct hash128 x = hash_bytes(&a, "abc", 3), y = hash_bytes(&b, "abc", 3);
	struct hash128 z = hash_bytes(&s, "abc", 3);
	assert_true(x.lo != y.lo && x.hi != y.hi);
	assert_true(x.lo != z.lo && x.hi != z.hi);
}

static void random_keys_differ(void **state)
{
	struct hash_key a, b;

	(void)state;
	assert_int_equal(hash_key_random(&a, HASH_XXH3), 0);
	assert_int_equal(hash_key_random(&b, HASH_XXH3), 0);
	assert_false(hash_key_equal(&a, &b));
}

static void every_byte_counts(void **state)
{
	struct hash_key key;
	uint8_t buf[64] = { 0 };

	(void)state;
	for (int algo = HASH_XXH3; algo <= HASH_SIPHASH13; algo++) {
		hash_key_from_seed(&key, (enum hash_algo)algo, 7);
		for (size_t len = 1; len <= sizeof(buf); len++) {
			struct hash128 base = hash_bytes(&key, buf, len);
			for (size_t i = 0; i < len; i++) {
				buf[i] ^= 1;
				struct hash128 h = hash_bytes(&key, buf, len);
				buf[i] ^= 1;
				assert_true(h.lo != base.lo || h.hi != base.hi);
			}
		}
	}
}

/* The inlined hash is hash.c's, bit for bit: every length to 64 bytes, every domain, both algorithms. */
static void inlined_is_the_same_hash(void **state)
{
	uint8_t bytes[64];
	struct hash_key key;

	(void)state;
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 37 + 11);
	for (int algo = HASH_XXH3; algo <= HASH_SIPHASH13; algo++) {
		hash_key_from_seed(&key, (enum hash_algo)algo, 42);
		for (unsigned d = 0; d <= HASH_MAX_DOMAIN; d++)
			for (size_t len = 0; len <= sizeof(bytes); len++) {
				struct hash128 a = hash_bytes_domain(&key, d, bytes, len), b = hash_inline_domain(&key, d, bytes, len);
				assert_true(a.lo == b.lo && a.hi == b.hi);
			}
	}
}

static void algo_names_round_trip(void **state)
{
	enum hash_algo algo;

	(void)state;
	assert_int_equal(hash_algo_parse("xxh3", &algo), 0);
	assert_int_equal(algo, HASH_XXH3);
	assert_int_equal(hash_algo_parse(hash_algo_name(HASH_SIPHASH13), &algo), 0);
	assert_int_equal(algo, HASH_SIPHASH13);
	assert_int_equal(hash_algo_parse("md5", &algo), -1);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(siphash_reference_vectors), cmocka_unit_test(same_key_same_hash),
	cmocka_unit_test(keys_change_the_hash),	     cmocka_unit_test(random_keys_differ),
	cmocka_unit_test(every_byte_counts),	     cmocka_unit_test(algo_names_round_trip),
	cmocka_unit_test(inlined_is_the_same_hash),
};

TEST_MAIN("hash", tests)
