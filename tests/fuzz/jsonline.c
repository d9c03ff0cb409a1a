/* Fuzz harness: jsonline_render gives json_dumpb's bytes for any JSON text, and for any bytes as strings. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input parsed as JSON, or, after a first byte of 0, as strings of raw bytes split at each 0xff. */
static json_t *value_of(const uint8_t *data, size_t size)
{
	if (size == 0 || data[0] != 0)
		return json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	json_t *strings = json_array();
	const uint8_t *from = data + 1, *end = data + size;
	for (const uint8_t *at = from; strings != NULL && at <= end; at++)
		if (at == end || *at == 0xff) {
			json_array_append_new(strings, json_stringn_nocheck((const char *)from, (size_t)(at - from)));
			from = at + 1;
		}
	return strings;
}

/* How deep v's containers nest: 0 for a scalar. Each child's depth taken once. */
static unsigned depth_of(const json_t *v)
{
	unsigned deepest = 0, d;
	const char *key;
	json_t *inner;
	size_t i;

	if (json_is_array(v))
		json_array_foreach(v, i, inner)
			if ((d = depth_of(inner)) > deepest)
				deepest = d;
	if (json_is_object(v))
		json_object_foreach((json_t *)(uintptr_t)v, key, inner)
			if ((d = depth_of(inner)) > deepest)
				deepest = d;
	return json_is_array(v) || json_is_object(v) ? deepest + 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char ours[1 << 16], theirs[1 << 16];
	json_t *v = value_of(data, size);

	if (v == NULL)
		return 0;
	size_t a = jsonline_render(v, ours, sizeof(ours));
	size_t b = json_dumpb(v, theirs, sizeof(theirs), JSON_COMPACT | JSON_ENCODE_ANY);
	/* An event line must be what jansson would have written; what jsonline leaves to jansson, too deep. */
	if (a != 0 ? a != b || memcmp(ours, theirs, a) != 0 : b != 0 && b <= sizeof(theirs) && depth_of(v) <= JSONLINE_DEPTH)
		abort();
	json_decref(v);
	return 0;
}
