/* cluster_sign.c - changes and snapshots in the stream signed with a shared key (HMAC-SHA256, nettle). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_sign.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

int sign_key_load(struct sign_key *k, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t got = 0;

	k->len = 0;
	if (fd < 0 || fstat(fd, &st) < 0) {
		error_set(err, errlen, "[cluster] key_file %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		error_set(err, errlen, "[cluster] key_file %s: %s (chmod 600 %s)", path,
			  S_ISREG(st.st_mode) ? "others may read it" : "not a regular file", path);
		goto fail;
	}
	got = read(fd, k->bytes, sizeof(k->bytes));
	if (got > 0 && k->bytes[got - 1] == '\n')
		got--;
	if (got < SIGN_KEY_MIN || st.st_size > (off_t)sizeof(k->bytes)) {
		error_set(err, errlen, "[cluster] key_file %s: a key of %d to %d bytes is needed (head -c 32 /dev/urandom | base64 > %s)",
			  path, SIGN_KEY_MIN, SIGN_KEY_MAX, path);
		goto fail;
	}
	k->len = (size_t)got;
	sign_key_ready(k);
	close(fd);
	return 0;
fail:
	memset(k->bytes, 0, sizeof(k->bytes));
	if (fd >= 0)
		close(fd);
	return -1;
}

void sign_key_ready(struct sign_key *k)
{
	hmac_sha256_set_key(&k->keyed, k->len, k->bytes);
}

static void mac_of(const struct sign_key *k, const char *purpose, const struct sign_field *f, size_t n,
		   uint8_t out[SHA256_DIGEST_SIZE])
{
	struct hmac_sha256_ctx ctx = k->keyed;

	hmac_sha256_update(&ctx, strlen(purpose) + 1, (const uint8_t *)purpose);
	for (size_t i = 0; i < n; i++) {
		uint8_t len[4] = { (uint8_t)f[i].len, (uint8_t)(f[i].len >> 8), (uint8_t)(f[i].len >> 16),
				   (uint8_t)(f[i].len >> 24) };
		hmac_sha256_update(&ctx, sizeof(len), len);
		hmac_sha256_update(&ctx, f[i].len, (const uint8_t *)f[i].p);
	}
	hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

void sign_fields(const struct sign_key *k, const char *purpose, const struct sign_field *f, size_t n,
		 char out[SIGN_HEX + 1])
{
	static const char HEX[] = "0123456789abcdef";
	uint8_t mac[SHA256_DIGEST_SIZE];

	mac_of(k, purpose, f, n, mac);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++) {
		out[2 * i] = HEX[mac[i] >> 4];
		out[2 * i + 1] = HEX[mac[i] & 15];
	}
	out[SIGN_HEX] = '\0';
}

bool sign_check(const struct sign_key *k, const char *purpose, const struct sign_field *f, size_t n, const char *mac,
		size_t maclen)
{
	char want[SIGN_HEX + 1];

	if (mac == NULL || maclen != SIGN_HEX)
		return false;
	sign_fields(k, purpose, f, n, want);
	return memeql_sec(want, mac, SIGN_HEX) != 0;
}
