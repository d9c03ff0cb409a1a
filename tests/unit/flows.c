/* Unit tests for flows.c: once per flow per entry, exactly within capacity, the least recent forgotten past it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>

#include "flows.h"
#include "test.h"

/* UDP flow i: 192.0.2.(i / 256).(i % 256) port 1024 + i to 10.0.0.1 port 53, or its reply. */
static struct packet_view flow(unsigned i, bool reply, uint8_t a[4], uint8_t b[4])
{
	struct packet_view v = { .family = 4, .ip_proto = 17 };

	a[0] = 192, a[1] = 0, a[2] = (uint8_t)(i >> 8), a[3] = (uint8_t)i;
	b[0] = 10, b[1] = 0, b[2] = 0, b[3] = 1;
	v.src = reply ? b : a;
	v.dst = reply ? a : b;
	v.sport = reply ? 53 : (uint16_t)(1024 + i);
	v.dport = reply ? (uint16_t)(1024 + i) : 53;
	return v;
}

/* n flows, each seen (request, then reply) rounds times in turn: the alerts counted. */
static unsigned alerts(struct flows *f, unsigned n, unsigned rounds, time_t now)
{
	static const uint8_t key[] = { 8, 10, 0, 0, 0 };
	uint8_t a[4], b[4];
	unsigned k = 0;

	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < n; i++) {
			struct packet_view v = flow(i, r % 2, a, b);
			k += flows_first(f, &v, ENTRY_NET, key, sizeof(key), now);
		}
	return k;
}

static void once_per_flow_within_capacity(void **state)
{
	struct flows *f = flows_new(1000, 60);

	(void)state;
	assert_non_null(f);
	assert_int_equal(alerts(f, 1000, 4, 100), 1000); /* a reply is the same flow */
	assert_int_equal(flows_evicted(f), 0);
	assert_int_equal(alerts(f, 1000, 1, 161), 1000); /* quiet past the timeout: alerts again */
	flows_free(f);
}

/* 1,500 flows through a table of 1,000, twice: each is forgotten before it comes back, and counted. */
static void past_capacity_the_least_recent_goes(void **state)
{
	struct flows *f = flows_new(1000, 60);

	(void)state;
	assert_non_null(f);
	static const uint8_t key[] = { 8, 10, 0, 0, 0 };
	uint8_t a[4], b[4];
	struct packet_view newest = flow(1499, false, a, b);

	assert_int_equal(alerts(f, 1500, 2, 100), 3000);
	assert_int_equal(flows_evicted(f), 2000);
	assert_false(flows_first(f, &newest, ENTRY_NET, key, sizeof(key), 100)); /* the last thousand are there */
	flows_free(f);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(once_per_flow_within_capacity),
	cmocka_unit_test(past_capacity_the_least_recent_goes),
};

TEST_MAIN("flows", tests)
