/* Unit tests for jsonline.c: the bytes json_dumpb gives, for random values, hostile strings and every short buffer. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>

#include "jsonline.h"
#include "rng.h"
#include "test.h"

#define TREES 20000
#define LINE_MAX_BYTES 8192

/* Bytes chosen to hit every branch of the escaping: plain, quote, backslash, controls, DEL, UTF-8, not UTF-8. */
static const char *const PIECES[] = {
	"a", "Z", " ", "0", "/", "~", "\x7f", "\"", "\\", "\n", "\t", "\b", "\f", "\r", "\x01", "\x1f",
	"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf", /* é, €, an emoji, U+D7FF */
	"\xc3", "\xff", "\x80", "\xed\xa0\x80",                       /* cut, never, a lone continuation, a surrogate */
};
#define PIECES_N (sizeof(PIECES) / sizeof(PIECES[0]))
#define UTF8_PIECES 20 /* the pieces before these four are valid UTF-8 alone */

/*
 * A string of up to 24 pieces: plain ASCII half the time, else plain with
 * each piece, one in eight, any other (valid UTF-8 unless any_bytes), so
 * that a lone quote, control or non-ASCII byte falls at every place of an
 * eight-byte word.
 */
static size_t random_text(struct rng *r, char *out, bool any_bytes)
{
	size_t n = 0, count = rng_next(r) % 25;
	bool ascii = rng_next(r) & 1;

	for (size_t i = 0; i < count; i++) {
		bool special = !ascii && rng_next(r) % 8 == 0;
		const char *p = special ? PIECES[rng_next(r) % (any_bytes ? PIECES_N : UTF8_PIECES)] : PIECES[rng_next(r) % 6];
		memcpy(out + n, p, strlen(p));
		n += strlen(p);
	}
	if (!ascii && rng_next(r) % 8 == 0)
		out[n++] = '\0'; /* a NUL inside: jansson writes \u0000 */
	return n;
}

static json_int_t random_integer(struct rng *r)
{
	static const json_int_t EDGES[] = { 0, 1, -1, 9, 10, -10, INT64_MAX, INT64_MIN, INT64_MIN + 1, 1LL << 53 };

	if (rng_next(r) % 3 == 0)
		return EDGES[rng_next(r) % (sizeof(EDGES) / sizeof(EDGES[0]))];
	return (json_int_t)rng_next(r) >> (rng_next(r) % 64);
}

static json_t *random_value(struct rng *r, unsigned depth, bool any_bytes)
{
	char text[128];
	size_t n;

	switch (depth >= 4 ? 2 + rng_next(r) % 6 : rng_next(r) % 8) {
	case 0: {
		json_t *o = json_object();
		for (size_t i = rng_next(r) % 5; i > 0; i--) {
			n = random_text(r, text, false); /* see jsonline.h: a key not UTF-8 is refused, where jansson cuts it */
			json_object_setn_new_nocheck(o, text, n, random_value(r, depth + 1, any_bytes));
		}
		return o;
	}
	case 1: {
		json_t *a = json_array();
		for (size_t i = rng_next(r) % 5; i > 0; i--)
			json_array_append_new(a, random_value(r, depth + 1, any_bytes));
		return a;
	}
	case 2: return json_integer(random_integer(r));
	case 3: return json_real((double)(int64_t)rng_next(r) / (double)(1 + rng_next(r) % 1000));
	case 4: return rng_next(r) & 1 ? json_true() : json_false();
	case 5: return json_null();
	default: n = random_text(r, text, any_bytes); return json_stringn_nocheck(text, n);
	}
}

/* jsonline_render and json_dumpb agree on v: the same bytes, or both refuse it. */
static void assert_same_as_jansson(const json_t *v)
{
	static char ours[LINE_MAX_BYTES], theirs[LINE_MAX_BYTES];
	size_t a = jsonline_render(v, ours, sizeof(ours));
	size_t b = json_dumpb(v, theirs, sizeof(theirs), JSON_COMPACT | JSON_ENCODE_ANY);

	assert_true(b <= sizeof(theirs));
	if (a != b || memcmp(ours, theirs, a) != 0)
		fail_msg("jsonline gave %zu bytes '%.*s', jansson %zu '%.*s'", a, (int)a, ours, b, (int)b, theirs);
}

static void random_values_match_jansson(void **state)
{
	struct rng r;

	(void)state;
	rng_seed(&r, 20261129);
	for (int i = 0; i < TREES; i++) {
		json_t *v = random_value(&r, 0, false);
		assert_same_as_jansson(v);
		json_decref(v);
	}
}

/* A string or key that is not UTF-8: jansson refuses the value, and so does jsonline. */
static void bytes_not_utf8_refused_alike(void **state)
{
	struct rng r;
	size_t refused = 0;

	(void)state;
	rng_seed(&r, 7);
	for (int i = 0; i < TREES; i++) {
		json_t *v = random_value(&r, 0, true);
		char buf[LINE_MAX_BYTES];
		refused += jsonline_render(v, buf, sizeof(buf)) == 0;
		assert_same_as_jansson(v);
		json_decref(v);
	}
	assert_true(refused > TREES / 20); /* the values above did reach the bytes jansson refuses */
}

/* Every room short of the whole line: 0, and not a byte written past it. */
static void short_rooms_refused_in_bounds(void **state)
{
	struct rng r;

	(void)state;
	rng_seed(&r, 11);
	for (int i = 0; i < 200; i++) {
		json_t *v = random_value(&r, 0, false);
		char whole[LINE_MAX_BYTES], buf[LINE_MAX_BYTES + 1];
		size_t len = jsonline_render(v, whole, sizeof(whole));
		assert_true(len > 0);
		for (size_t room = 0; room <= len; room++) {
			memset(buf, '#', sizeof(buf));
			size_t got = jsonline_render(v, buf, room);
			assert_int_equal(got, room == len ? len : 0);
			assert_int_equal(buf[room], '#');
		}
		assert_memory_equal(buf, whole, len);
		json_decref(v);
	}
}

/* Nesting past JSONLINE_DEPTH is left to jansson, which renders it; a loop, which jansson refuses, too. */
static void deep_and_looped_left_to_jansson(void **state)
{
	json_t *top = json_array(), *at = top;
	char buf[LINE_MAX_BYTES];

	(void)state;
	for (int i = 0; i < JSONLINE_DEPTH; i++) {
		json_t *inner = json_array();
		json_array_append_new(at, inner);
		at = inner;
	}
	assert_int_equal(jsonline_render(top, buf, sizeof(buf)), 2 * (JSONLINE_DEPTH + 1));
	json_array_append_new(at, json_array());
	assert_int_equal(jsonline_render(top, buf, sizeof(buf)), 0);
	assert_int_equal(json_dumpb(top, buf, sizeof(buf), JSON_COMPACT), 2 * (JSONLINE_DEPTH + 2));

	json_array_append(at, top); /* a loop */
	assert_int_equal(jsonline_render(top, buf, sizeof(buf)), 0);
	assert_int_equal(json_dumpb(top, buf, sizeof(buf), JSON_COMPACT), 0);
	json_array_clear(at);
	json_decref(top);
}

/* An event's shape, keys in the order they were set, as an events file holds it. */
static void event_line_in_key_order(void **state)
{
	json_t *ev = json_pack("{s:s, s:I, s:s, s:s, s:{s:s, s:i, s:[{s:s, s:s, s:[s, s]}]}}", "timestamp",
			       "2026-01-01T00:00:00.001000+0000", "flow_id", (json_int_t)4162499224839256, "event_type",
			       "alert", "pcap_filename", "/tmp/a \"b\".pcap", "alert", "action", "allowed", "gid", 1,
			       "matches", "kind", "addr", "entry", "192.0.2.11", "lists", "drop", "caf\xc3\xa9");
	const char *want = "{\"timestamp\":\"2026-01-01T00:00:00.001000+0000\",\"flow_id\":4162499224839256,"
			   "\"event_type\":\"alert\",\"pcap_filename\":\"/tmp/a \\\"b\\\".pcap\",\"alert\":{\"action\":"
			   "\"allowed\",\"gid\":1,\"matches\":[{\"kind\":\"addr\",\"entry\":\"192.0.2.11\",\"lists\":"
			   "[\"drop\",\"caf\xc3\xa9\"]}]}}";
	char buf[LINE_MAX_BYTES];

	(void)state;
	assert_non_null(ev);
	size_t len = jsonline_render(ev, buf, sizeof(buf));
	assert_int_equal(len, strlen(want));
	assert_memory_equal(buf, want, len);
	json_decref(ev);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(random_values_match_jansson),
	cmocka_unit_test(bytes_not_utf8_refused_alike),
	cmocka_unit_test(short_rooms_refused_in_bounds),
	cmocka_unit_test(deep_and_looped_left_to_jansson),
	cmocka_unit_test(event_line_in_key_order),
};

TEST_MAIN("jsonline", tests)
