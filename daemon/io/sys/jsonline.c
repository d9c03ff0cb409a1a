/* jsonline.c - a jansson value rendered compact, the bytes json_dumpb gives, without its cost per value. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "jsonline.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The room left: at moves on as bytes are put; a put that does not fit fails the render. */
struct line {
	char *at, *end;
};

static bool put(struct line *l, const char *bytes, size_t n)
{
	if ((size_t)(l->end - l->at) < n)
		return false;
	memcpy(l->at, bytes, n);
	l->at += n;
	return true;
}

/*
 * Whether any of w's eight bytes is below 0x20, above 0x7f, a quote or a
 * backslash. (x - 0x01..01 * n) & ~x & 0x80..80 is nonzero exactly when some
 * byte of x is below n (n <= 0x80, every byte below 0x80): for n = 1 after an
 * XOR, some byte equal to the XORed one.
 */
static bool word_not_plain(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = ones << 7;
	uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');

	return ((w | ((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash)) & highs) != 0;
}

/* What jansson writes as it is, between the quotes: printable ASCII but the quote and the backslash. */
static bool plain(const char *s, size_t n)
{
	size_t i = 0;

	for (uint64_t w; i + 8 <= n; i += 8)
		if (memcpy(&w, s + i, 8), word_not_plain(w))
			return false;
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
			return false;
	}
	return true;
}

/* v, whole, by jansson: for escapes, UTF-8 and reals. */
static bool put_by_jansson(struct line *l, const json_t *v)
{
	size_t room = (size_t)(l->end - l->at), n = json_dumpb(v, l->at, room, JSON_COMPACT | JSON_ENCODE_ANY);

	if (n == 0 || n > room)
		return false;
	l->at += n;
	return true;
}

static bool put_string(struct line *l, const char *s, size_t n, const json_t *v)
{
	if (plain(s, n))
		return put(l, "\"", 1) && put(l, s, n) && put(l, "\"", 1);
	if (v != NULL)
		return put_by_jansson(l, v);
	json_t *key = json_stringn_nocheck(s, n); /* a key that needs escaping: rare */
	bool ok = key != NULL && put_by_jansson(l, key);
	json_decref(key);
	return ok;
}

/* As "%" JSON_INTEGER_FORMAT prints it. */
static bool put_integer(struct line *l, json_int_t v)
{
	char digits[24], *p = digits + sizeof(digits);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	return put(l, p, (size_t)(digits + sizeof(digits) - p));
}

static bool put_value(struct line *l, const json_t *v, unsigned depth);

static bool put_object(struct line *l, const json_t *o, unsigned depth)
{
	json_t *obj = (json_t *)(uintptr_t)o; /* jansson's iterators take a mutable object; nothing here changes it */
	bool first = true;

	if (!put(l, "{", 1))
		return false;
	for (void *it = json_object_iter(obj); it != NULL; it = json_object_iter_next(obj, it), first = false)
		if ((!first && !put(l, ",", 1)) ||
		    !put_string(l, json_object_iter_key(it), json_object_iter_key_len(it), NULL) || !put(l, ":", 1) ||
		    !put_value(l, json_object_iter_value(it), depth + 1))
			return false;
	return put(l, "}", 1);
}

static bool put_array(struct line *l, const json_t *a, unsigned depth)
{
	size_t n = json_array_size(a);

	if (!put(l, "[", 1))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((i > 0 && !put(l, ",", 1)) || !put_value(l, json_array_get(a, i), depth + 1))
			return false;
	return put(l, "]", 1);
}

static bool put_value(struct line *l, const json_t *v, unsigned depth)
{
	if (v == NULL || depth > JSONLINE_DEPTH)
		return false;
	switch (json_typeof(v)) {
	case JSON_OBJECT: return put_object(l, v, depth);
	case JSON_ARRAY: return put_array(l, v, depth);
	case JSON_STRING: return put_string(l, json_string_value(v), json_string_length(v), v);
	case JSON_INTEGER: return put_integer(l, json_integer_value(v));
	case JSON_TRUE: return put(l, "true", 4);
	case JSON_FALSE: return put(l, "false", 5);
	case JSON_NULL: return put(l, "null", 4);
	default: return put_by_jansson(l, v); /* a real */
	}
}

size_t jsonline_render(const json_t *v, char *buf, size_t size)
{
	struct line l = { buf, buf + size };

	return put_value(&l, v, 0) ? (size_t)(l.at - buf) : 0;
}
