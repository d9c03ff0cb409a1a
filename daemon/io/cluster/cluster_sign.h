/* cluster_sign.h - changes and snapshots in the stream signed with a shared key (HMAC-SHA256, nettle). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CLUSTER_SIGN_H
#define BLOOMD_CLUSTER_SIGN_H

/*
 * With [cluster] key_file, every change a node publishes carries a field
 * mac: the HMAC-SHA256, under the key every node shares, of a purpose word
 * and the change's fields (the stream's name, the node, the change's
 * identity, op, expires, entry, data), each as a 4-byte little-endian length
 * and its bytes, so no two different changes sign the same. A snapshot is
 * signed the same way (stream, id, node, data, seen). What does not check
 * out is not applied.
 */

#include <nettle/hmac.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIGN_KEY_MIN 16
#define SIGN_KEY_MAX 1024
#define SIGN_HEX 64 /* the MAC in hex */

struct sign_key {
	uint8_t bytes[SIGN_KEY_MAX];
	size_t len;
	struct hmac_sha256_ctx keyed; /* HMAC's state after the key: copied for each MAC, not keyed again */
};

/* Make k's keyed state from its bytes (sign_key_load does; for a key set by hand). */
void sign_key_ready(struct sign_key *k);

struct sign_field {
	const char *p;
	size_t len;
};

/*
 * The key in path: a regular file that only its owner may read (mode 0600
 * or 0400), of 16 to 1024 bytes (a trailing newline is not part of it).
 * Read at start, before the privilege drop. -1 with a message naming it.
 */
int sign_key_load(struct sign_key *k, const char *path, char *err, size_t errlen);

/* The MAC of purpose and the n fields, as SIGN_HEX hex digits and a NUL. */
void sign_fields(const struct sign_key *k, const char *purpose, const struct sign_field *f, size_t n,
		 char out[SIGN_HEX + 1]);

/* Whether mac (maclen bytes; NULL: none) is that MAC, compared in constant time. */
bool sign_check(const struct sign_key *k, const char *purpose, const struct sign_field *f, size_t n, const char *mac,
		size_t maclen);

#endif
