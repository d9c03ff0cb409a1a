/* Unit tests for cluster_sign.c: the key file's checks, and MACs that catch any change of any field. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_sign.h"
#include "test.h"

static char path[] = "/tmp/bloomd-key-XXXXXX";

static void write_key(const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void key_file_checked(void **state)
{
	struct sign_key k;
	char err[256];

	(void)state;
	write_key("0123456789abcdef0123\n", 0644);
	assert_int_equal(sign_key_load(&k, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "others may read it"));
	write_key("short\n", 0600);
	assert_int_equal(sign_key_load(&k, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "16 to 1024 bytes"));
	write_key("0123456789abcdef0123\n", 0600);
	assert_int_equal(sign_key_load(&k, path, err, sizeof(err)), 0);
	assert_int_equal(k.len, 20); /* the newline is not part of it */
	assert_int_equal(sign_key_load(&k, "/nonexistent/key", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/key"));
}

static void any_change_is_caught(void **state)
{
	struct sign_key k = { .len = 16 }, other = { .len = 16 };
	char mac[SIGN_HEX + 1];
	struct sign_field f[3] = { { "bloomd:entries", 14 }, { "add", 3 }, { "addr 192.0.2.1", 14 } };

	(void)state;
	memcpy(k.bytes, "0123456789abcdef", 16);
	memcpy(other.bytes, "0123456789abcdeF", 16);
	sign_key_ready(&k);
	sign_key_ready(&other);
	sign_fields(&k, "bloomd change", f, 3, mac);
	/* HMAC-SHA256 of "bloomd change\0" and each field as a 4-byte little-endian length and its bytes, as
	 * Python's hmac module computes it: the format bloomd.conf(5) documents, for other tools to check. */
	assert_string_equal(mac, "fc32c0d5d51b19ad8a82a93ceb1ea943dbeb39689c1529908cd9d49802ea0dc9");
	assert_true(sign_check(&k, "bloomd change", f, 3, mac, SIGN_HEX));
	assert_false(sign_check(&other, "bloomd change", f, 3, mac, SIGN_HEX));
	assert_false(sign_check(&k, "bloomd snapshot", f, 3, mac, SIGN_HEX)); /* the purpose is signed */
	assert_false(sign_check(&k, "bloomd change", f, 3, NULL, 0));
	assert_false(sign_check(&k, "bloomd change", f, 3, mac, SIGN_HEX - 1));
	/* The same bytes split between fields otherwise: lengths are signed too. */
	struct sign_field moved[3] = { { "bloomd:entries", 14 }, { "adda", 4 }, { "ddr 192.0.2.1", 13 } };
	assert_false(sign_check(&k, "bloomd change", moved, 3, mac, SIGN_HEX));
	struct sign_field other_entry[3] = { { "bloomd:entries", 14 }, { "add", 3 }, { "addr 192.0.2.2", 14 } };
	assert_false(sign_check(&k, "bloomd change", other_entry, 3, mac, SIGN_HEX));
	mac[0] = mac[0] == '0' ? '1' : '0';
	assert_false(sign_check(&k, "bloomd change", f, 3, mac, SIGN_HEX));
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(key_file_checked),
	cmocka_unit_test(any_change_is_caught),
};

int main(void)
{
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return 1;
	close(fd);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	rc = cmocka_run_group_tests_name("cluster_sign", tests, NULL, NULL);
	unlink(path);
	return rc;
}
