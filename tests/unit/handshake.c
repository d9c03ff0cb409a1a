/* Unit tests for handshake.c: a sender proven by a handshake seen whole, and the evasions that must not prove one. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>

#include "handshake.h"
#include "test.h"

enum { FIN = 0x01, SYN = 0x02, RST = 0x04, PSH = 0x08, ACK = 0x10 };

/* A TCP segment as the parser hands it on: the header (with a window scale option when scale >= 0) and a payload. */
struct seg {
	uint8_t src[16], dst[16], tcp[24], payload[64];
	struct packet_view v;
};

static void put32(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)(x >> 24), p[1] = (uint8_t)(x >> 16), p[2] = (uint8_t)(x >> 8), p[3] = (uint8_t)x;
}

/* Client 192.0.2.1:40000 <-> server 198.51.100.7:80 (reply: the server's way); family 6: 2001:db8::1 and ::7. */
static struct packet_view *make(struct seg *s, int family, bool reply, uint8_t flags, uint32_t seq, uint32_t ack,
				size_t len, int scale)
{
	uint8_t a[16] = { 192, 0, 2, 1 }, b[16] = { 198, 51, 100, 7 };

	if (family == 6) {
		uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, b6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 7 };
		memcpy(a, a6, 16);
		memcpy(b, b6, 16);
	}
	memcpy(s->src, reply ? b : a, 16);
	memcpy(s->dst, reply ? a : b, 16);
	memset(s->tcp, 0, sizeof(s->tcp));
	put32(s->tcp + 4, seq);
	put32(s->tcp + 8, ack);
	s->tcp[12] = (scale >= 0 ? 6 : 5) << 4;
	s->tcp[13] = flags;
	s->tcp[14] = 0xff, s->tcp[15] = 0xff;
	if (scale >= 0)
		s->tcp[20] = 3, s->tcp[21] = 3, s->tcp[22] = (uint8_t)scale, s->tcp[23] = 1;
	memset(s->payload, 'x', sizeof(s->payload));
	s->v = (struct packet_view){ .family = (uint8_t)family, .ip_proto = 6, .l4 = PACKET_L4_TCP, .src = s->src,
				     .dst = s->dst, .sport = reply ? 80 : 40000, .dport = reply ? 40000 : 80,
				     .tcp = s->tcp, .payload = len ? s->payload : NULL, .payload_len = len };
	return &s->v;
}

static enum sender_proof see(struct handshakes *h, bool reply, uint8_t flags, uint32_t seq, uint32_t ack, size_t len)
{
	struct seg s;

	return handshakes_see(h, make(&s, 4, reply, flags, seq, ack, len, -1), 0, 100);
}

#define C_ISN 1000u
#define S_ISN 5000000u

/* SYN, SYN-ACK, ACK: the third proves both ends. */
static void open_connection(struct handshakes *h)
{
	assert_int_equal(see(h, false, SYN, C_ISN, 0, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, true, SYN | ACK, S_ISN, C_ISN + 1, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, false, ACK, C_ISN + 1, S_ISN + 1, 0), SENDER_VERIFIED);
}

static void a_handshake_seen_whole_proves_both_ends(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);

	(void)state;
	open_connection(h);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, S_ISN + 1, 40), SENDER_VERIFIED);
	assert_int_equal(see(h, true, PSH | ACK, S_ISN + 1, C_ISN + 41, 20), SENDER_VERIFIED);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 41, S_ISN + 21, 10), SENDER_VERIFIED);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, S_ISN + 21, 40), SENDER_VERIFIED); /* a retransmission */
	assert_int_equal(st.verified, 1);
	assert_int_equal(st.tracked, 1);
	handshakes_free(h);
	assert_int_equal(st.tracked, 0);
	assert_int_equal(st.capacity, 0);
}

static void datagrams_and_others_are_never_proven(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);
	uint8_t a[4] = { 192, 0, 2, 1 }, b[4] = { 198, 51, 100, 7 };
	struct packet_view udp = { .family = 4, .ip_proto = 17, .l4 = PACKET_L4_UDP, .src = a, .dst = b };
	struct packet_view icmp = { .family = 4, .ip_proto = 1, .src = a, .dst = b };
	struct packet_view gre = { .family = 4, .ip_proto = 47, .src = a, .dst = b };
	struct packet_view later = { .family = 4, .ip_proto = 6, .later_fragment = true, .src = a, .dst = b };
	struct seg s;

	(void)state;
	assert_int_equal(handshakes_see(h, &udp, 0, 100), SENDER_UDP);
	assert_int_equal(handshakes_see(h, &icmp, 0, 100), SENDER_ICMP);
	assert_int_equal(handshakes_see(h, &gre, 0, 100), SENDER_OTHER);
	assert_int_equal(handshakes_see(h, &later, 0, 100), SENDER_OTHER);
	assert_int_equal(handshakes_see(NULL, &udp, 0, 100), SENDER_UDP);
	assert_int_equal(handshakes_see(NULL, make(&s, 4, false, ACK, 1, 1, 0, -1), 0, 100), SENDER_NOT_TRACKED);
	assert_string_equal(sender_proof_name(SENDER_TABLE_FULL), "flow_table_full");
	assert_string_equal(sender_proof_name(SENDER_VERIFIED), "verified");
	handshakes_free(h);
}

/* A forger's segment with no handshake behind it, and one that acknowledges a number it never saw. */
static void no_handshake_no_proof(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);

	(void)state;
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, S_ISN + 1, 40), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, false, SYN, C_ISN, 0, 0), SENDER_NO_HANDSHAKE);
	/* the forger never sees the server's SYN-ACK: it guesses the number */
	assert_int_equal(see(h, true, SYN | ACK, S_ISN, C_ISN + 1, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, false, ACK, C_ISN + 1, S_ISN + 2, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, 12345, 40), SENDER_NO_HANDSHAKE);
	assert_int_equal(st.wrong_ack, 2);
	assert_int_equal(st.verified, 0);
	handshakes_free(h);
}

/* A SYN-ACK that acknowledges another number than the SYN's is no answer to it. */
static void a_syn_ack_with_the_wrong_ack_is_no_answer(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);

	(void)state;
	assert_int_equal(see(h, false, SYN, C_ISN, 0, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, true, SYN | ACK, 777, C_ISN + 2, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, false, ACK, C_ISN + 1, 778, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(st.verified, 0);
	assert_int_equal(st.wrong_ack, 1);
	handshakes_free(h);
}

/* A forger answering for the server: two different SYN-ACKs to one SYN prove nothing, whichever came first. */
static void a_forged_syn_ack_makes_a_conflict(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);

	(void)state;
	assert_int_equal(see(h, false, SYN, C_ISN, 0, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, true, SYN | ACK, 31337, C_ISN + 1, 0), SENDER_NO_HANDSHAKE); /* the forger's */
	assert_int_equal(see(h, true, SYN | ACK, S_ISN, C_ISN + 1, 0), SENDER_CONFLICT);     /* the server's */
	assert_int_equal(see(h, false, ACK, C_ISN + 1, 31338, 0), SENDER_CONFLICT);
	assert_int_equal(see(h, false, ACK, C_ISN + 1, S_ISN + 1, 0), SENDER_CONFLICT);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, S_ISN + 1, 30), SENDER_CONFLICT);
	assert_int_equal(st.conflicts, 1);
	assert_int_equal(st.verified, 0);
	handshakes_free(h);
}

/*
 * A forger outside naming two hosts inside writes both ways onto the
 * outside link (the server's real answer goes to the client inside): its
 * SYN-ACK comes from the SYN's own link neighbour. Never proven; a real
 * answer, from the other side of the link, is.
 */
static void a_syn_ack_from_the_syns_own_neighbour_proves_nothing(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);
	static const uint8_t upstream[6] = { 2, 0, 0, 0, 0, 0xa }, inside[6] = { 2, 0, 0, 0, 0, 0xb };
	struct seg s;
	struct packet_view *v;

	(void)state;
	v = make(&s, 4, false, SYN, C_ISN, 0, 0, -1);
	v->link_src = upstream;
	assert_int_equal(handshakes_see(h, v, 0, 100), SENDER_NO_HANDSHAKE);
	v = make(&s, 4, true, SYN | ACK, S_ISN, C_ISN + 1, 0, -1);
	v->link_src = upstream;
	assert_int_equal(handshakes_see(h, v, 0, 100), SENDER_ONE_SIDED);
	v = make(&s, 4, false, ACK, C_ISN + 1, S_ISN + 1, 0, -1);
	v->link_src = upstream;
	assert_int_equal(handshakes_see(h, v, 0, 100), SENDER_ONE_SIDED);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, S_ISN + 1, 30), SENDER_ONE_SIDED);
	assert_int_equal(st.one_sided, 1);
	assert_int_equal(st.verified, 0);
	handshakes_clear(h);
	/* the same handshake with the answer from the other side of the link */
	v = make(&s, 4, false, SYN, C_ISN, 0, 0, -1);
	v->link_src = upstream;
	handshakes_see(h, v, 0, 100);
	v = make(&s, 4, true, SYN | ACK, S_ISN, C_ISN + 1, 0, -1);
	v->link_src = inside;
	assert_int_equal(handshakes_see(h, v, 0, 100), SENDER_NO_HANDSHAKE);
	v = make(&s, 4, false, ACK, C_ISN + 1, S_ISN + 1, 0, -1);
	v->link_src = upstream;
	assert_int_equal(handshakes_see(h, v, 0, 100), SENDER_VERIFIED);
	assert_string_equal(sender_proof_name(SENDER_ONE_SIDED), "one_sided");
	handshakes_free(h);
}

/* The client named never sent the SYN: its RST to the server's answer ends the handshake. */
static void the_named_clients_reset_ends_the_handshake(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);

	(void)state;
	assert_int_equal(see(h, false, SYN, C_ISN, 0, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, true, SYN | ACK, S_ISN, C_ISN + 1, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, false, RST, C_ISN + 1, 0, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, false, ACK, C_ISN + 1, S_ISN + 1, 0), SENDER_NO_HANDSHAKE);
	assert_int_equal(st.verified, 0);
	assert_int_equal(st.tracked, 0);
	handshakes_free(h);
}

/* An RST out of the window is not the connection's and ends nothing; one in it does. */
static void reset_injection(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);

	(void)state;
	open_connection(h);
	assert_int_equal(see(h, true, RST, S_ISN + 1 + 0x40000000u, 0, 0), SENDER_OUT_OF_WINDOW);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, S_ISN + 1, 40), SENDER_VERIFIED);
	assert_int_equal(see(h, true, RST, S_ISN + 1, 0, 0), SENDER_VERIFIED);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 41, S_ISN + 1, 40), SENDER_NO_HANDSHAKE);
	assert_int_equal(st.resets, 1);
	assert_int_equal(st.out_of_window, 1);
	handshakes_free(h);
}

/* Segments whose numbers the connection never reached, either way. */
static void out_of_window_segments(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);

	(void)state;
	open_connection(h);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1 + 200000, S_ISN + 1, 40), SENDER_OUT_OF_WINDOW);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1 - 200000, S_ISN + 1, 40), SENDER_OUT_OF_WINDOW);
	/* acknowledging what the server never sent */
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, S_ISN + 1 + 200000, 40), SENDER_OUT_OF_WINDOW);
	/* overlapping what was sent already: a retransmission, in the window */
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1, S_ISN + 1, 40), SENDER_VERIFIED);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 21, S_ISN + 1, 40), SENDER_VERIFIED);
	/* ahead of the sensor, within the server's window: segments it missed */
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 61 + 30000, S_ISN + 1, 40), SENDER_VERIFIED);
	assert_int_equal(st.out_of_window, 3);
	handshakes_free(h);
}

/* With window scaling agreed, a server that advertised 64 KiB << 7 lets the client run 8 MiB ahead. */
static void scaled_windows(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);
	struct seg s;

	(void)state;
	assert_int_equal(handshakes_see(h, make(&s, 4, false, SYN, C_ISN, 0, 0, 7), 0, 100), SENDER_NO_HANDSHAKE);
	assert_int_equal(handshakes_see(h, make(&s, 4, true, SYN | ACK, S_ISN, C_ISN + 1, 0, 7), 0, 100),
			 SENDER_NO_HANDSHAKE);
	assert_int_equal(see(h, false, ACK, C_ISN + 1, S_ISN + 1, 0), SENDER_VERIFIED);
	assert_int_equal(see(h, true, ACK, S_ISN + 1, C_ISN + 1, 0), SENDER_VERIFIED); /* its window, scaled */
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1 + (4u << 20), S_ISN + 1, 40), SENDER_VERIFIED);
	assert_int_equal(see(h, false, PSH | ACK, C_ISN + 1 + (64u << 20), S_ISN + 1, 40), SENDER_OUT_OF_WINDOW);
	handshakes_free(h);
}

static void ipv6_connections(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);
	struct seg s;

	(void)state;
	assert_int_equal(handshakes_see(h, make(&s, 6, false, SYN, C_ISN, 0, 0, -1), 0, 100), SENDER_NO_HANDSHAKE);
	assert_int_equal(handshakes_see(h, make(&s, 6, true, SYN | ACK, S_ISN, C_ISN + 1, 0, -1), 0, 100),
			 SENDER_NO_HANDSHAKE);
	/* the IPv4 connection with the same ports is another */
	assert_int_equal(see(h, false, ACK, C_ISN + 1, S_ISN + 1, 0), SENDER_NO_HANDSHAKE);
	struct packet_view *v = make(&s, 6, false, ACK, C_ISN + 1, S_ISN + 1, 0, -1);
	assert_int_equal(handshakes_see(h, v, handshakes_prefetch(h, v), 100), SENDER_VERIFIED);
	assert_int_equal(handshakes_see(h, make(&s, 6, true, PSH | ACK, S_ISN + 1, C_ISN + 1, 9, -1), 0, 100),
			 SENDER_VERIFIED);
	handshakes_free(h);
}

/* Connection i: client 10.(i>>16).(i>>8).i:1024+i to 198.51.100.7:80. */
static enum sender_proof see_conn(struct handshakes *h, unsigned i, bool reply, uint8_t flags, uint32_t seq,
				  uint32_t ack, time_t now)
{
	struct seg s;
	struct packet_view *v = make(&s, 4, reply, flags, seq, ack, 0, -1);
	uint8_t *client = reply ? s.dst : s.src;

	client[0] = 10, client[1] = (uint8_t)(i >> 16), client[2] = (uint8_t)(i >> 8), client[3] = (uint8_t)i;
	if (reply)
		v->dport = (uint16_t)(1024 + i);
	else
		v->sport = (uint16_t)(1024 + i);
	return handshakes_see(h, v, 0, now);
}

/*
 * A SYN flood: it pushes out half-open handshakes, never proven
 * connections; past them, new SYNs are refused and say so; nothing is ever
 * proven by a slot taken anew.
 */
static void a_syn_flood_proves_nothing_and_evicts_no_proven_connection(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(64, 60, &st);

	(void)state;
	assert_int_equal(st.capacity, 64);
	unsigned n = 0; /* connections proven one after another, until a bucket full of them refuses a SYN */
	for (; st.refused == 0 && n < 100000; n++) {
		see_conn(h, n, false, SYN, C_ISN, 0, 100);
		see_conn(h, n, true, SYN | ACK, S_ISN, C_ISN + 1, 100);
		see_conn(h, n, false, ACK, C_ISN + 1, S_ISN + 1, 100);
	}
	uint64_t proven = st.verified;
	assert_true(st.refused == 1 && proven == n - 1 && proven <= 64);
	/* the flood: 10,000 SYNs, then their forged final ACKs */
	for (unsigned i = 1000; i < 11000; i++)
		see_conn(h, i, false, SYN, C_ISN, 0, 101);
	unsigned full = 0;
	for (unsigned i = 1000; i < 11000; i++) {
		enum sender_proof p = see_conn(h, i, false, ACK, C_ISN + 1, S_ISN + 1, 101);
		assert_int_not_equal(p, SENDER_VERIFIED);
		full += p == SENDER_TABLE_FULL;
	}
	assert_true(st.refused > 0);
	assert_true(full > 0);
	/* every proven connection still is */
	uint64_t still = 0;
	for (unsigned i = 0; i < n; i++)
		still += see_conn(h, i, false, ACK, C_ISN + 1, S_ISN + 1, 102) == SENDER_VERIFIED;
	assert_int_equal(still, proven);
	/* a handshake pushed out half-way: its answer and final ACK prove nothing */
	see_conn(h, 20000, false, SYN, C_ISN, 0, 103);
	for (unsigned i = 30000; i < 40000; i++)
		see_conn(h, i, false, SYN, C_ISN, 0, 103);
	see_conn(h, 20000, true, SYN | ACK, S_ISN, C_ISN + 1, 103);
	enum sender_proof late = see_conn(h, 20000, false, ACK, C_ISN + 1, S_ISN + 1, 103);
	assert_true(st.evicted > 0);
	assert_int_not_equal(late, SENDER_VERIFIED);
	handshakes_free(h);
}

/* Idle connections are forgotten: half-open ones after 30 s, proven ones after the idle time. */
static void idle_connections_are_forgotten(void **state)
{
	struct handshakes_stats st = { 0 };
	struct handshakes *h = handshakes_new(1024, 60, &st);

	(void)state;
	open_connection(h);
	assert_int_equal(see_conn(h, 0, false, SYN, C_ISN, 0, 100), SENDER_NO_HANDSHAKE);
	struct seg s;
	assert_int_equal(handshakes_see(h, make(&s, 4, false, ACK, C_ISN + 1, S_ISN + 1, 0, -1), 0, 150),
			 SENDER_VERIFIED);
	assert_int_equal(handshakes_see(h, make(&s, 4, false, ACK, C_ISN + 1, S_ISN + 1, 0, -1), 0, 211),
			 SENDER_NO_HANDSHAKE);
	assert_int_equal(see_conn(h, 0, true, SYN | ACK, S_ISN, C_ISN + 1, 131), SENDER_NO_HANDSHAKE);
	assert_int_equal(see_conn(h, 0, false, ACK, C_ISN + 1, S_ISN + 1, 131), SENDER_NO_HANDSHAKE);
	handshakes_clear(h);
	assert_int_equal(st.tracked, 0);
	handshakes_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_handshake_seen_whole_proves_both_ends),
		cmocka_unit_test(datagrams_and_others_are_never_proven),
		cmocka_unit_test(no_handshake_no_proof),
		cmocka_unit_test(a_syn_ack_with_the_wrong_ack_is_no_answer),
		cmocka_unit_test(a_forged_syn_ack_makes_a_conflict),
		cmocka_unit_test(a_syn_ack_from_the_syns_own_neighbour_proves_nothing),
		cmocka_unit_test(the_named_clients_reset_ends_the_handshake),
		cmocka_unit_test(reset_injection),
		cmocka_unit_test(out_of_window_segments),
		cmocka_unit_test(scaled_windows),
		cmocka_unit_test(ipv6_connections),
		cmocka_unit_test(a_syn_flood_proves_nothing_and_evicts_no_proven_connection),
		cmocka_unit_test(idle_connections_are_forgotten),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("handshake", tests, NULL, NULL);
}
