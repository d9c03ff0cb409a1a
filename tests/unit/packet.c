/* Unit tests for packet.c: layers, truncation at every byte, and random bytes against a guard page. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "packet.h"
#include "rng.h"
#include "synth.h"
#include "test.h"

static uint8_t frame[SYNTH_MAX_FRAME];

/* A buffer whose end touches an unreadable page: reading one byte too far crashes. */
static uint8_t *guarded;
static size_t guarded_size;

static const uint8_t *place_at_guard(const uint8_t *data, size_t len)
{
	uint8_t *at = guarded + guarded_size - len;

	memcpy(at, data, len);
	return at;
}

static struct synth_packet base(int link, int family)
{
	static const uint8_t payload[] = "hello, world";
	struct synth_packet p = { .link = link, .family = family, .proto = 6, .sport = 1234,
				  .dport = 80, .payload = payload, .payload_len = 12 };

	memset(p.src, 0x11, 16);
	memset(p.dst, 0x22, 16);
	return p;
}

static void layers_are_found(void **state)
{
	static const int links[] = { PACKET_LINK_EN10MB, PACKET_LINK_LINUX_SLL, PACKET_LINK_LINUX_SLL2,
				     PACKET_LINK_RAW, PACKET_LINK_RAW_101, PACKET_LINK_NULL, PACKET_LINK_LOOP };
	struct packet_view v;

	(void)state;
	for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		for (int family = 4; family <= 6; family += 2) {
			struct synth_packet p = base(links[l], family);
			size_t len = synth_build(&p, frame);
			packet_parse(links[l], place_at_guard(frame, len), len, len, &v);
			assert_int_equal(v.status, PACKET_OK);
			assert_int_equal(v.family, family);
			assert_int_equal(v.l4, PACKET_L4_TCP);
			assert_int_equal(v.sport, 1234);
			assert_int_equal(v.dport, 80);
			assert_int_equal(v.payload_len, 12);
			assert_memory_equal(v.payload, "hello, world", 12);
			assert_int_equal(v.src[0], 0x11);
			assert_int_equal(v.dst[family == 4 ? 3 : 15], 0x22);
		}
	}
}

static void vlans_and_extension_headers(void **state)
{
	struct synth_packet p = base(PACKET_LINK_EN10MB, 6);
	struct packet_view v;

	(void)state;
	p.nvlans = 3;
	p.vlans[0] = 10, p.vlans[1] = 20, p.vlans[2] = 4095;
	p.qinq = true;
	p.next = 3;
	p.ext[0] = SYNTH_EXT_HBH, p.ext[1] = SYNTH_EXT_RT, p.ext[2] = SYNTH_EXT_DST;
	size_t len = synth_build(&p, frame);
	packet_parse(PACKET_LINK_EN10MB, place_at_guard(frame, len), len, len, &v);
	assert_int_equal(v.status, PACKET_OK);
	assert_int_equal(v.nvlans, 3);
	assert_int_equal(v.vlans[2], 4095);
	assert_int_equal(v.ip_proto, 6);
	assert_int_equal(v.payload_len, 12);

	p.next = PACKET_MAX_EXT_HEADERS + 1;
	for (unsigned i = 0; i < p.next; i++)
		p.ext[i] = SYNTH_EXT_DST;
	len = synth_build(&p, frame);
	packet_parse(PACKET_LINK_EN10MB, place_at_guard(frame, len), len, len, &v);
	assert_int_equal(v.status, PACKET_TOO_MANY_EXT);
	assert_int_equal(v.family, 6); /* the addresses still count */
}

static void fragments(void **state)
{
	struct synth_packet p = base(PACKET_LINK_EN10MB, 4);
	struct packet_view v;

	(void)state;
	p.frag_offset = 1480;
	size_t len = synth_build(&p, frame);
	packet_parse(PACKET_LINK_EN10MB, place_at_guard(frame, len), len, len, &v);
	assert_true(v.fragment && v.later_fragment);
	assert_int_equal(v.l4, PACKET_L4_NONE);
	assert_int_equal(v.payload_len, 12); /* the IP payload, no TCP header */

	p = base(PACKET_LINK_EN10MB, 6);
	p.next = 1;
	p.ext[0] = SYNTH_EXT_FRAG;
	p.ext_frag_more = true;
	len = synth_build(&p, frame);
	packet_parse(PACKET_LINK_EN10MB, place_at_guard(frame, len), len, len, &v);
	assert_true(v.fragment && !v.later_fragment);
	assert_int_equal(v.l4, PACKET_L4_TCP);
}

/* Cut a good frame at every length: never a crash, and a status that says where it stopped. */
static void truncation_at_every_byte(void **state)
{
	(void)state;
	for (int family = 4; family <= 6; family += 2) {
		struct synth_packet p = base(PACKET_LINK_EN10MB, family);
		p.nvlans = 1;
		size_t len = synth_build(&p, frame);
		size_t ip = 18, l4 = ip + (family == 4 ? 20 : 40);
		for (size_t cut = 0; cut < len; cut++) {
			struct packet_view v;
			packet_parse(PACKET_LINK_EN10MB, place_at_guard(frame, cut), cut, len, &v);
			if (cut < ip)
				assert_int_equal(v.status, PACKET_TRUNC_LINK);
			else if (cut < l4)
				assert_int_equal(v.status, PACKET_TRUNC_IP);
			else if (cut < l4 + 20)
				assert_int_equal(v.status, PACKET_TRUNC_L4);
			else
				assert_true(v.status == PACKET_OK && v.payload_len == cut - l4 - 20);
		}
	}
}

static void bad_headers(void **state)
{
	struct synth_packet p = base(PACKET_LINK_RAW, 4);
	struct packet_view v;
	size_t len = synth_build(&p, frame);

	(void)state;
	frame[0] = 0x44; /* IHL 4 */
	packet_parse(PACKET_LINK_RAW, place_at_guard(frame, len), len, len, &v);
	assert_int_equal(v.status, PACKET_BAD_IP_HEADER);
	frame[0] = 0x45;
	frame[2] = 0, frame[3] = 10; /* total length below the header */
	packet_parse(PACKET_LINK_RAW, place_at_guard(frame, len), len, len, &v);
	assert_int_equal(v.status, PACKET_BAD_IP_HEADER);
	packet_parse(PACKET_LINK_IPV6, place_at_guard(frame, len), len, len, &v);
	assert_int_equal(v.status, PACKET_BAD_IP_VERSION);
	frame[0] = 0x75;
	packet_parse(PACKET_LINK_RAW, place_at_guard(frame, len), len, len, &v);
	assert_int_equal(v.status, PACKET_BAD_IP_VERSION);
	packet_parse(4242, place_at_guard(frame, len), len, len, &v);
	assert_int_equal(v.status, PACKET_UNKNOWN_LINK);
	assert_false(packet_link_supported(4242));
}

/* Random frames and random mutations of good ones, on every link type. */
static void random_bytes_never_overread(void **state)
{
	static const int links[] = { PACKET_LINK_EN10MB, PACKET_LINK_LINUX_SLL, PACKET_LINK_LINUX_SLL2,
				     PACKET_LINK_RAW, PACKET_LINK_IPV4, PACKET_LINK_IPV6,
				     PACKET_LINK_NULL, PACKET_LINK_LOOP };
	struct rng r;

	(void)state;
	rng_seed(&r, 2026);
	for (int i = 0; i < 200000; i++) {
		int link = links[rng_below(&r, sizeof(links) / sizeof(links[0]))];
		struct synth_packet p = base(link, rng_below(&r, 2) ? 4 : 6);
		p.nvlans = (unsigned)rng_below(&r, 3);
		p.next = p.family == 6 ? (unsigned)rng_below(&r, 4) : 0;
		for (unsigned e = 0; e < p.next; e++)
			p.ext[e] = (enum synth_ext)rng_below(&r, 4);
		size_t len = synth_build(&p, frame);
		for (int m = (int)rng_below(&r, 6); m >= 0; m--)
			frame[rng_below(&r, len)] = (uint8_t)rng_next(&r);
		size_t cut = rng_below(&r, len + 1);
		struct packet_view v;
		const uint8_t *at = place_at_guard(frame, cut);
		packet_parse(link, at, cut, len, &v);
		if (v.payload)
			assert_true(v.payload >= at && v.payload + v.payload_len <= at + cut);
		if (v.family)
			assert_true(v.src >= at && v.dst + (v.family == 4 ? 4 : 16) <= at + cut);
	}
}

static void assert_views_equal(const struct packet_view *a, const struct packet_view *b, int frame_no)
{
	if (a->status != b->status || a->family != b->family || a->ip_proto != b->ip_proto ||
	    a->fragment != b->fragment || a->later_fragment != b->later_fragment || a->l4 != b->l4 ||
	    a->nvlans != b->nvlans || memcmp(a->vlans, b->vlans, sizeof(a->vlans)) != 0 || a->src != b->src ||
	    a->dst != b->dst || a->sport != b->sport || a->dport != b->dport || a->payload != b->payload ||
	    a->payload_len != b->payload_len)
		fail_msg("frame %d: packet_parse gives status %d, payload %zu; the walk %d, %zu", frame_no,
			 (int)a->status, a->payload_len, (int)b->status, b->payload_len);
}

/*
 * packet_parse reads the commonest frame (untagged Ethernet, IPv4 without
 * options, TCP or UDP) in one go: on such frames and their mutations (any
 * header byte, the capture cut anywhere, any wire length), it must give
 * the view the general walk gives.
 */
static void common_frames_read_as_the_walk_reads_them(void **state)
{
	static const uint8_t payload[64];
	struct rng r;
	int ok = 0;

	(void)state;
	rng_seed(&r, 61);
	for (int i = 0; i < 200000; i++) {
		struct synth_packet p = base(PACKET_LINK_EN10MB, 4);
		p.proto = rng_below(&r, 2) ? 6 : 17;
		p.payload = payload;
		p.payload_len = rng_below(&r, sizeof(payload) + 1);
		p.nvlans = rng_below(&r, 8) == 0;
		size_t len = synth_build(&p, frame);
		for (int m = (int)rng_below(&r, 3); m > 0; m--) /* the headers' bytes, Ethernet to L4 */
			frame[rng_below(&r, len < 54 ? len : 54)] = (uint8_t)rng_next(&r);
		size_t cut = rng_below(&r, 4) ? len : rng_below(&r, len + 1);
		size_t wire = rng_below(&r, 4) ? len : rng_below(&r, 3) == 0 ? 0 : rng_below(&r, len + 8);
		const uint8_t *at = place_at_guard(frame, cut);
		struct packet_view fast, walk;
		packet_parse(PACKET_LINK_EN10MB, at, cut, wire, &fast);
		packet_parse_walk(PACKET_LINK_EN10MB, at, cut, wire, &walk);
		assert_views_equal(&fast, &walk, i);
		ok += walk.status == PACKET_OK && walk.nvlans == 0 && !walk.fragment;
	}
	print_message("# %d of 200,000 frames whole and untagged\n", ok);
	assert_true(ok > 100000);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(layers_are_found),	     cmocka_unit_test(vlans_and_extension_headers),
	cmocka_unit_test(fragments),		     cmocka_unit_test(truncation_at_every_byte),
	cmocka_unit_test(bad_headers),		     cmocka_unit_test(random_bytes_never_overread),
	cmocka_unit_test(common_frames_read_as_the_walk_reads_them),
};

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	guarded_size = (SYNTH_MAX_FRAME + page - 1) / page * page;
	uint8_t *map = mmap(NULL, guarded_size + page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || mprotect(map + guarded_size, page, PROT_NONE) < 0)
		return 1;
	guarded = map;
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("packet", tests, NULL, NULL);
}
