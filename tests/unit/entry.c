/* Unit tests for entry.c: every kind parses to its key and prints back canonically. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "entry.h"
#include "rng.h"
#include "test.h"

static struct entry E;

static const char *canonical(const char *line)
{
	static char text[ENTRY_TEXT_MAX], err[128];

	if (entry_parse(line, &E, err, sizeof(err)) != 1)
		return err;
	return entry_format_value(E.kind, E.key, E.len, text, sizeof(text));
}

static void kinds_parse_and_print(void **state)
{
	static const struct { const char *line, *value; enum entry_kind kind; size_t len; } cases[] = {
		{ "addr 192.0.2.1", "192.0.2.1", ENTRY_ADDR, 4 },
		{ "  addr   2001:DB8:0::1  ", "2001:db8::1", ENTRY_ADDR, 16 },
		{ "net 198.51.100.7/24", "198.51.100.0/24", ENTRY_NET, 5 },
		{ "net 10.1.2.3/0", "0.0.0.0/0", ENTRY_NET, 5 },
		{ "net 10.1.2.3/32", "10.1.2.3/32", ENTRY_NET, 5 },
		{ "net 2001:db8:ff::1/33", "2001:db8::/33", ENTRY_NET, 17 },
		{ "pair 192.0.2.1 203.0.113.9", "192.0.2.1 203.0.113.9", ENTRY_PAIR, 8 },
		{ "pair ::1 ::2 # directed", "::1 ::2", ENTRY_PAIR, 32 },
		{ "sig hex:474554", "hex:474554", ENTRY_SIG, 3 },
		{ "sig HEX:4A4b", "hex:4a4b", ENTRY_SIG, 2 },
		{ "sig \"GET /\\x41\\n\\0\\\\\\\"\"", "hex:474554202f410a005c22", ENTRY_SIG, 10 },
		{ "sig \"a#b\" # comment", "hex:612362", ENTRY_SIG, 3 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_string_equal(canonical(cases[i].line), cases[i].value);
		assert_int_equal(E.kind, cases[i].kind);
		assert_int_equal(E.len, cases[i].len);
	}
}

static void blank_and_comment_lines(void **state)
{
	(void)state;
	assert_int_equal(entry_parse("", &E, NULL, 0), 0);
	assert_int_equal(entry_parse("   \n", &E, NULL, 0), 0);
	assert_int_equal(entry_parse("# addr 1.2.3.4", &E, NULL, 0), 0);
}

static void errors_name_the_problem(void **state)
{
	static const struct { const char *line, *word; } cases[] = {
		{ "host 1.2.3.4", "unknown entry kind" },
		{ "addr 1.2.3", "addr needs" },
		{ "addr", "addr needs" },
		{ "net 10.0.0.0", "ADDRESS/LENGTH" },
		{ "net 10.0.0.0/33", "prefix length" },
		{ "net ::/129", "prefix length" },
		{ "net 10.0.0.0/x", "prefix length" },
		{ "pair 1.2.3.4", "two addresses" },
		{ "pair 1.2.3.4 ::1", "mixes" },
		{ "sig hex:4", "hex digit" },
		{ "sig hex:zz", "hex digit" },
		{ "sig \"open", "closing quote" },
		{ "sig \"\\q\"", "unknown escape" },
		{ "sig \"\\x4\"", "two hex digits" },
		{ "sig \"\"", "empty" },
		{ "sig plain", "hex:" },
		{ "addr 1.2.3.4 5.6.7.8", "unexpected text" },
	};
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		assert_int_equal(entry_parse(cases[i].line, &E, err, sizeof(err)), -1);
		if (strstr(err, cases[i].word) == NULL)
			fail_msg("'%s': error '%s' lacks '%s'", cases[i].line, err, cases[i].word);
	}
}

static void long_signature_limits(void **state)
{
	size_t n = ENTRY_MAX_SIG + 1;
	char *line = malloc(8 + 2 * n + 1);
	char err[128];

	(void)state;
	strcpy(line, "sig hex:");
	for (size_t i = 0; i < n; i++)
		memcpy(line + 8 + 2 * i, "ab", 2);
	line[8 + 2 * n] = '\0';
	assert_int_equal(entry_parse(line, &E, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than"));
	line[8 + 2 * (n - 1)] = '\0';
	assert_int_equal(entry_parse(line, &E, err, sizeof(err)), 1);
	assert_int_equal(E.len, ENTRY_MAX_SIG);
	free(line);
}

/* IPv4 addresses are formatted by hand: as inet_ntop does, for every octet value in every place. */
static void addresses_print_as_inet_ntop(void **state)
{
	char ours[INET6_ADDRSTRLEN], libc[INET6_ADDRSTRLEN];
	uint8_t a[16];
	struct rng r;

	(void)state;
	rng_seed(&r, 5);
	for (unsigned i = 0; i < 256 * 4 + 20000; i++) {
		uint64_t x = rng_next(&r);
		memcpy(a, &x, 8);
		if (i < 256 * 4)
			a[i / 256] = (uint8_t)i; /* each octet takes each value */
		assert_string_equal(entry_format_addr(a, 4, ours, sizeof(ours)),
				    inet_ntop(AF_INET, a, libc, sizeof(libc)));
	}
	memset(a, 0, sizeof(a));
	a[15] = 1;
	assert_string_equal(entry_format_addr(a, 6, ours, sizeof(ours)), "::1");
	assert_string_equal(entry_format_addr(a, 4, ours, 7), "?"); /* "0.0.0.0" and its NUL need 8 */
}

/* An entry may be followed by when it expires: expires=UNIXTIME (as list writes) or ttl=TIME (4h, 1h30m). */
static void expiry_after_an_entry(void **state)
{
	struct entry e;
	uint64_t expires;
	char err[256];

	(void)state;
	assert_int_equal(entry_parse_expiry("addr 192.0.2.1 expires=1800000000", &e, 1000, &expires, err, sizeof(err)), 1);
	assert_int_equal(expires, 1800000000);
	assert_int_equal(entry_parse_expiry("sig \"a b expires=5\" ttl=60 # note", &e, 1000, &expires, err, sizeof(err)), 1);
	assert_int_equal(e.len, 13); /* the quoted text is the signature, attribute words inside it included */
	assert_int_equal(expires, 1060);
	assert_int_equal(entry_parse_expiry("net 10.0.0.0/8", &e, 1000, &expires, err, sizeof(err)), 1);
	assert_int_equal(expires, 0);
	assert_int_equal(entry_parse_expiry("addr 192.0.2.1 ttl=0", &e, 1000, &expires, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'ttl=0' (expires=UNIXTIME or ttl=TIME may follow)"));
	assert_int_equal(entry_parse_expiry("addr 192.0.2.1 ttl=4h", &e, 1000, &expires, err, sizeof(err)), 1);
	assert_int_equal(expires, 1000 + 4 * 3600);
	assert_int_equal(entry_parse_expiry("addr 192.0.2.1 ttl=1d2h30m", &e, 1000, &expires, err, sizeof(err)), 1);
	assert_int_equal(expires, 1000 + 86400 + 2 * 3600 + 1800);
	assert_int_equal(entry_parse_expiry("addr 192.0.2.1 ttl=3651d", &e, 1000, &expires, err, sizeof(err)), -1);
	assert_int_equal(entry_parse_expiry("addr 192.0.2.1 ttl=4x", &e, 1000, &expires, err, sizeof(err)), -1);
	assert_int_equal(entry_parse_expiry("addr 192.0.2.1 expires=soon", &e, 1000, &expires, err, sizeof(err)), -1);
	assert_int_equal(entry_parse_expiry("addr 192.0.2.1 colour=red", &e, 1000, &expires, err, sizeof(err)), -1);
	/* the plain parser takes none */
	assert_int_equal(entry_parse("addr 192.0.2.1 ttl=60", &e, err, sizeof(err)), -1);
}

/* An address or a network alone parses as "addr TEXT" or "net TEXT" does, or is refused as they are. */
static void an_address_alone_parses_as_its_line(void **state)
{
	static const char *texts[] = {
		"192.0.2.1", "  2001:DB8:0::1  ", "198.51.100.7/24", "10.1.2.3/0", "2001:db8:ff::1/33",
		"192.0.2.1 # a comment", "192.0.2.1#", "::ffff:192.0.2.1", "192.0.2.256", "192.0.2.1/33",
		"192.0.2.1/", "/24", "", "   ", "# 192.0.2.1", "192.0.2.1 x", "192.0.2.1/24 24", "1.2.3.4/024",
		"2001:db8::/129", "10.0.0.0/8x",
		"1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa:bbbb:cccc:dddd:eeee:ffff", /* past the word */
	};
	struct entry alone, line;
	char text[128], err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		snprintf(text, sizeof(text), "%s %s", strchr(texts[i], '/') ? "net" : "addr", texts[i]);
		int want = entry_parse(text, &line, err, sizeof(err)) == 1 ? 0 : -1;
		assert_int_equal(entry_parse_address(texts[i], &alone), want);
		if (want < 0)
			continue;
		assert_int_equal(alone.kind, line.kind);
		assert_int_equal(alone.len, line.len);
		assert_memory_equal(alone.key, line.key, line.len);
	}
}

/* A run gives back what was added, in order, across its growth (the longest signatures among them). */
/* The one reader of an address or net: bare or with a length, host bits cleared, the length said. */
static void a_cidr_parses_bare_or_with_its_length(void **state)
{
	static const struct { const char *text, *net; int len; } cases[] = {
		{ "192.0.2.7", "192.0.2.7/32", 5 },        { "192.0.2.7/24", "192.0.2.0/24", 5 },
		{ "2001:db8::1", "2001:db8::1/128", 17 }, { "2001:db8:1:2::9/33", "2001:db8::/33", 17 },
		{ "10.1.2.3/0", "0.0.0.0/0", 5 },
	};
	static const char *const refused[] = { "192.0.2.7/33", "2001:db8::/129", "192.0.2.7/", "192.0.2.7/-1",
					       "192.0.2.7/24x", "192.0.2", "not-an-address", "",
					       "1111:2222:3333:4444:5555:6666:7777:8888:9999/64" };
	uint8_t key[ENTRY_CIDR_MAX];
	char text[ENTRY_TEXT_MAX], err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(entry_parse_cidr(cases[i].text, key, err, sizeof(err)), cases[i].len);
		assert_string_equal(entry_format_value(ENTRY_NET, key, (size_t)cases[i].len, text, sizeof(text)), cases[i].net);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		err[0] = '\0';
		assert_int_equal(entry_parse_cidr(refused[i], key, err, sizeof(err)), -1);
		assert_true(strstr(err, "is not an IPv4 or IPv6 address") || strstr(err, "prefix length must be"));
	}
}

static void a_run_gives_back_its_entries(void **state)
{
	static struct entry in, out;
	struct entry_run run = { .bytes = NULL };
	size_t at = 0, n = 0;

	(void)state;
	for (unsigned i = 0; i < 100; i++) {
		in.kind = i % 2 ? ENTRY_SIG : ENTRY_ADDR;
		in.len = i % 2 ? ENTRY_MAX_SIG : 4;
		memset(in.key, (int)i, in.len);
		assert_int_equal(entry_run_add(&run, &in), 0);
	}
	assert_true(run.cap > 65536); /* it grew */
	while (entry_run_next(&run, &at, &out)) {
		assert_int_equal(out.kind, n % 2 ? ENTRY_SIG : ENTRY_ADDR);
		assert_int_equal(out.len, n % 2 ? ENTRY_MAX_SIG : 4);
		assert_int_equal(out.key[0], n);
		assert_int_equal(out.key[out.len - 1], n);
		n++;
	}
	assert_int_equal(n, 100);
	entry_run_clear(&run);
	at = 0;
	assert_false(entry_run_next(&run, &at, &out));
	entry_run_free(&run);
	assert_null(run.bytes);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(a_run_gives_back_its_entries),
	cmocka_unit_test(a_cidr_parses_bare_or_with_its_length),
	cmocka_unit_test(an_address_alone_parses_as_its_line),
	cmocka_unit_test(expiry_after_an_entry),
	cmocka_unit_test(kinds_parse_and_print),    cmocka_unit_test(blank_and_comment_lines),
	cmocka_unit_test(errors_name_the_problem),  cmocka_unit_test(long_signature_limits),
	cmocka_unit_test(addresses_print_as_inet_ntop),
};

TEST_MAIN("entry", tests)
