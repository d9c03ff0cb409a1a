/* Unit tests for threshold.c: Suricata's threshold and suppress rules, read and applied. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "threshold.h"

struct problems {
	unsigned n;
	char last[4][512];
};

static void collect(void *ctx, const char *message)
{
	struct problems *p = ctx;

	snprintf(p->last[p->n++ % 4], sizeof(p->last[0]), "%s", message);
}

static bool any_has(const struct problems *p, const char *text)
{
	for (unsigned i = 0; i < p->n && i < 4; i++)
		if (strstr(p->last[i], text))
			return true;
	return false;
}

static struct thresholds *load(const char *text, struct problems *p)
{
	char path[] = "/tmp/bloomd-threshold-XXXXXX";
	int fd = mkstemp(path);

	assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	memset(p, 0, sizeof(*p));
	struct thresholds *t = thresholds_load(path, collect, p);
	unlink(path);
	return t;
}

/* A UDP packet from src to dst (IPv4 text). */
static struct packet_view packet(const char *src, const char *dst)
{
	static uint8_t a[4], b[4];
	struct packet_view v = { .family = 4, .src = a, .dst = b, .ip_proto = 17 };

	inet_pton(AF_INET, src, a);
	inet_pton(AF_INET, dst, b);
	return v;
}

static unsigned passes(struct thresholds *t, uint32_t sid, const char *src, time_t from, int n)
{
	unsigned k = 0;

	for (int i = 0; i < n; i++) {
		struct packet_view v = packet(src, "10.0.0.1");
		k += thresholds_pass(t, 1, sid, &v, from + i);
	}
	return k;
}

static void limit_threshold_both(void **state)
{
	struct problems p;
	struct thresholds *t = load("# comment\n"
				    "threshold gen_id 1, sig_id 100, type limit, track by_src, count 2, seconds 60\n"
				    "threshold gen_id 1, sig_id 200, type threshold, track by_src, count 3, seconds 60\n"
				    "event_filter gen_id 1, sig_id 300, type both, track by_rule, count 3, seconds 60\n"
				    "threshold gen_id 1, sig_id 0, type limit, track by_dst, count 1, seconds 10\n",
				    &p);

	(void)state;
	assert_non_null(t);
	assert_int_equal(thresholds_rules(t), 4);
	assert_int_equal(passes(t, 100, "192.0.2.1", 0, 10), 2);  /* at most 2 a minute ... */
	assert_int_equal(passes(t, 100, "192.0.2.2", 0, 10), 2);  /* ... per source */
	assert_int_equal(passes(t, 100, "192.0.2.1", 60, 10), 2); /* a new period */
	assert_int_equal(passes(t, 200, "192.0.2.1", 0, 9), 3);   /* every third */
	assert_int_equal(passes(t, 300, "192.0.2.1", 0, 2), 0);   /* both: not before the third ... */
	assert_int_equal(passes(t, 300, "192.0.2.9", 2, 5), 1);   /* ... then once (by_rule: any source) */
	assert_int_equal(passes(t, 999, "192.0.2.1", 0, 5), 1);   /* sig_id 0: the rest of gen_id 1 */
	thresholds_free(t);
}

static void suppress_by_address(void **state)
{
	struct problems p;
	struct thresholds *t = load("suppress gen_id 1, sig_id 100, track by_src, ip [192.0.2.0/24, 2001:db8::/32]\n"
				    "suppress gen_id 1, sig_id 200\n"
				    "suppress gen_id 0, sig_id 0, track by_either, ip 198.51.100.7\n",
				    &p);
	struct packet_view v;

	(void)state;
	assert_non_null(t);
	v = packet("192.0.2.55", "10.0.0.1");
	assert_false(thresholds_pass(t, 1, 100, &v, 0));
	v = packet("10.0.0.1", "192.0.2.55");
	assert_true(thresholds_pass(t, 1, 100, &v, 0));  /* by_src: the destination does not count */
	assert_false(thresholds_pass(t, 1, 200, &v, 0)); /* no track: every alert of it */
	v = packet("10.0.0.1", "198.51.100.7");
	assert_false(thresholds_pass(t, 1, 12345, &v, 0)); /* by_either, every signature */
	v = packet("10.0.0.1", "10.0.0.2");
	assert_true(thresholds_pass(t, 1, 12345, &v, 0));
	thresholds_free(t);
}

static void problems_name_their_lines(void **state)
{
	struct problems p;

	(void)state;
	assert_null(load("threshold gen_id 1, sig_id 1, type sometimes, track by_src, count 1, seconds 1\n"
			 "suppress gen_id 1, sig_id 2, track by_src, ip $HOME_NET\n"
			 "rate_filter gen_id 1, sig_id 3, track by_rule, count 1, seconds 1, new_action drop, timeout 5\n"
			 "threshold gen_id 1, sig_id 4, type limit, track by_src\n",
			 &p));
	assert_int_equal(p.n, 4);
	assert_true(any_has(&p, ":1: type: expected limit, threshold or both, got 'sometimes'"));
	assert_true(any_has(&p, ":2: ip: '$HOME_NET' is not an address"));
	assert_true(any_has(&p, ":3: unknown rule 'rate_filter'"));
	assert_true(any_has(&p, ":4: a threshold needs type, track, count"));
}

/*
 * Suricata's semantics, per tracked address, at one time (no period ends):
 * the n-th alert of an address passes under limit while n <= count, under
 * threshold when n is a multiple of count, under both when n == count.
 */
static bool model_passes(const char *type, unsigned count, unsigned n)
{
	return strcmp(type, "limit") == 0 ? n <= count : strcmp(type, "threshold") == 0 ? n % count == 0 : n == count;
}

/* addrs addresses, each alerting times times, in rounds; what passes counted (and checked one by one against the model). */
static unsigned alerts_of(const char *type, const char *track, unsigned count, unsigned addrs, unsigned times,
			  uint64_t *evicted)
{
	char rules[200];
	struct problems p;
	uint8_t a[4] = { 10, 0, 0, 0 }, b[4] = { 192, 0, 2, 1 };
	struct packet_view v = { .family = 4, .src = a, .dst = b, .ip_proto = 17 };
	bool by_src = strcmp(track, "by_src") == 0;
	unsigned passed = 0;

	snprintf(rules, sizeof(rules), "threshold gen_id 1, sig_id 7, type %s, track %s, count %u, seconds 3600\n", type,
		 track, count);
	struct thresholds *t = load(rules, &p);
	assert_non_null(t);
	for (unsigned n = 1; n <= times; n++)
		for (unsigned i = 0; i < addrs; i++) {
			uint8_t *x = by_src ? a : b;
			x[1] = (uint8_t)(i >> 16), x[2] = (uint8_t)(i >> 8), x[3] = (uint8_t)i;
			bool pass = thresholds_pass(t, 1, 7, &v, 1000);
			if (addrs <= 65536)
				assert_int_equal(pass, model_passes(type, count, n));
			passed += pass;
		}
	*evicted = thresholds_evicted(t);
	thresholds_free(t);
	return passed;
}

/*
 * 20,000 addresses (by source, by destination), each alerting twice, for
 * each type: exactly what the model says, the same every run (each load
 * draws a new hash secret); past 65,536 addresses the table forgets the
 * least recently counted, and says how many.
 */
static void tables_count_exactly_within_capacity(void **state)
{
	static const char *const types[] = { "limit", "threshold", "both" }, *const tracks[] = { "by_src", "by_dst" };
	uint64_t evicted;

	(void)state;
	for (int ty = 0; ty < 3; ty++)
		for (int tr = 0; tr < 2; tr++)
			for (unsigned count = 1; count <= 2; count++) {
				unsigned want = 0;
				for (unsigned n = 1; n <= 2; n++)
					want += model_passes(types[ty], count, n) ? 20000 : 0;
				for (int run = 0; run < 2; run++) {
					assert_int_equal(alerts_of(types[ty], tracks[tr], count, 20000, 2, &evicted), want);
					assert_int_equal(evicted, 0);
				}
			}
	/* 70,000 sources in turn, twice: each second round's alert finds its count gone (limit 1: all pass again). */
	assert_int_equal(alerts_of("limit", "by_src", 1, 70000, 2, &evicted), 140000);
	assert_int_equal(evicted, 2 * 70000 - 65536);
	assert_int_equal(alerts_of("limit", "by_src", 1, 65536, 2, &evicted), 65536);
	assert_int_equal(evicted, 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(limit_threshold_both),
	cmocka_unit_test(suppress_by_address),
	cmocka_unit_test(problems_name_their_lines),
	cmocka_unit_test(tables_count_exactly_within_capacity),
};

TEST_MAIN("threshold", tests)
