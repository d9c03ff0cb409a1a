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

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(limit_threshold_both),
	cmocka_unit_test(suppress_by_address),
	cmocka_unit_test(problems_name_their_lines),
};

TEST_MAIN("threshold", tests)
