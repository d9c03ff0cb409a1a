/* Unit tests for communityid.c: the Community ID spec's baseline vectors (seed 0, base64). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <string.h>

#include "communityid.h"
#include "packet.h"
#include "test.h"

/* proto, source, destination, ports (-1: none; ICMP: type and code), the ID the spec gives. */
static const struct vector {
	int proto;
	const char *saddr, *daddr;
	int sport, dport;
	const char *id;
} VECTORS[] = {
	{ 58, "fe80::200:86ff:fe05:80da", "fe80::260:97ff:fe07:69ea", 135, 136, "1:dGHyGvjMfljg6Bppwm3bg0LO8TY=" },
	{ 58, "fe80::260:97ff:fe07:69ea", "fe80::200:86ff:fe05:80da", 136, 135, "1:dGHyGvjMfljg6Bppwm3bg0LO8TY=" },
	{ 58, "fe80::260:97ff:fe07:69ea", "fe80::200:86ff:fe05:80da", 135, 136, "1:zavyT/cezQr1fmImYCwYnMXbgck=" },
	{ 58, "fe80::200:86ff:fe05:80da", "fe80::260:97ff:fe07:69ea", 136, 135, "1:zavyT/cezQr1fmImYCwYnMXbgck=" },
	{ 58, "3ffe:501:1800:2345::2", "3ffe:507:0:1:200:86ff:fe05:80da", 3, 0, "1:2ObVBgIn28oZvibYZhZMBgh7WdQ=" },
	{ 58, "3ffe:501:410:0:2c0:dfff:fe47:33e", "3ffe:507:0:1:200:86ff:fe05:80da", 1, 4, "1:hLZd0XGWojozrvxqE0dWB1iM6R0=" },
	{ 58, "3ffe:507:0:1:200:86ff:fe05:80da", "3ffe:501:0:1001::2", 128, 129, "1:+TW+HtLHvV1xnGhV1lv7XoJrqQg=" },
	{ 58, "3ffe:501:0:1001::2", "3ffe:507:0:1:200:86ff:fe05:80da", 129, 128, "1:+TW+HtLHvV1xnGhV1lv7XoJrqQg=" },
	{ 58, "fe80::200:86ff:fe05:80da", "ff02::2", 133, 134, "1:hO+sN4H+MG5MY/8hIrXPqc4ZQz0=" },
	{ 58, "fe80::260:97ff:fe07:69ea", "ff02::1", 134, 133, "1:pkvHqCL88/tg1k4cPigmZXUtL00=" },
	{ 1, "192.168.0.89", "192.168.0.1", 8, 0, "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=" },
	{ 1, "192.168.0.1", "192.168.0.89", 0, 8, "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=" },
	{ 1, "10.0.0.1", "10.0.0.2", 11, 0, "1:YHxtAirCG//0OzkcVAukqKQN9xM=" },
	{ 6, "2001:470:e5bf:dead:4957:2174:e82c:4887", "2607:f8b0:400c:c03::1a", 63943, 25, "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4=" },
	{ 6, "2607:f8b0:400c:c03::1a", "2001:470:e5bf:dead:4957:2174:e82c:4887", 25, 63943, "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4=" },
	{ 132, "192.168.170.8", "192.168.170.56", 7, 7, "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs=" },
	{ 132, "192.168.170.56", "192.168.170.8", 7, 7, "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs=" },
	{ 6, "128.232.110.120", "66.35.250.204", 34855, 80, "1:LQU9qZlK+B5F3KDmev6m5PMibrg=" },
	{ 6, "66.35.250.204", "128.232.110.120", 80, 34855, "1:LQU9qZlK+B5F3KDmev6m5PMibrg=" },
	{ 17, "192.168.1.52", "8.8.8.8", 54585, 53, "1:d/FP5EW3wiY1vCndhwleRRKHowQ=" },
	{ 17, "8.8.8.8", "192.168.1.52", 53, 54585, "1:d/FP5EW3wiY1vCndhwleRRKHowQ=" },
	{ 46, "10.1.12.1", "10.1.12.2", -1, -1, "1:KHlLkgoJW7ifUTyTSgyVfkFHzKw=" },
	{ 46, "10.1.12.2", "10.1.12.1", -1, -1, "1:KHlLkgoJW7ifUTyTSgyVfkFHzKw=" },
};

static size_t address(const char *text, uint8_t out[16])
{
	if (inet_pton(AF_INET, text, out) == 1)
		return 4;
	assert_int_equal(inet_pton(AF_INET6, text, out), 1);
	return 16;
}

static void baseline_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(VECTORS) / sizeof(VECTORS[0]); i++) {
		const struct vector *t = &VECTORS[i];
		uint8_t s[16], d[16];
		char id[COMMUNITYID_LEN];
		size_t alen = address(t->saddr, s);
		address(t->daddr, d);
		communityid_v1(0, s, d, alen, (uint8_t)t->proto, t->sport >= 0, (uint16_t)t->sport,
			       (uint16_t)t->dport, id);
		if (strcmp(id, t->id) != 0)
			fail_msg("vector %zu (%d %s -> %s): got %s, want %s", i, t->proto, t->saddr, t->daddr, id, t->id);
	}
}

/* From a parsed packet: ICMP's type and code come from its header, as do SCTP's ports. */
static void from_a_packet_view(void **state)
{
	static const uint8_t icmp[] = { 8, 0, 0, 0 }, sctp[] = { 0, 7, 0, 7, 0, 0, 0, 0 };
	struct packet_view v = { .family = 4, .ip_proto = 1, .payload = icmp, .payload_len = sizeof(icmp) };
	uint8_t s[16], d[16];
	char id[COMMUNITYID_LEN];

	(void)state;
	address("192.168.0.89", s);
	address("192.168.0.1", d);
	v.src = s;
	v.dst = d;
	assert_int_equal(communityid_of(&v, 0, id), 0);
	assert_string_equal(id, "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=");
	address("192.168.170.8", s);
	address("192.168.170.56", d);
	v.ip_proto = 132;
	v.payload = sctp;
	v.payload_len = sizeof(sctp);
	assert_int_equal(communityid_of(&v, 0, id), 0);
	assert_string_equal(id, "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs=");
	v.family = 0;
	assert_int_equal(communityid_of(&v, 0, id), -1);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(baseline_vectors),
	cmocka_unit_test(from_a_packet_view),
};

TEST_MAIN("communityid", tests)
