/* jsonline.h - a jansson value rendered compact, the bytes json_dumpb gives, without its cost per value. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_JSONLINE_H
#define BLOOMD_JSONLINE_H

#include <jansson.h>
#include <stddef.h>

/*
 * json_dumpb checks every container for a loop through a hash table it fills
 * and empties, decodes every string's UTF-8 a code point at a time and
 * formats every integer with snprintf: about 100 instructions a byte of an
 * event line. Here the structure, the integers and the strings of printable
 * ASCII (nearly all of an event) are written directly; any other string, and
 * any real, is still rendered by jansson, so escaping and UTF-8 stay its own.
 */

/* How deep containers nest before jsonline_render leaves the value to jansson (which finds loops). */
#define JSONLINE_DEPTH 32

/*
 * v rendered into buf as json_dumpb(v, buf, size, JSON_COMPACT |
 * JSON_ENCODE_ANY) renders it, byte for byte; returns its length, or 0 where
 * it does not fit in size bytes, nests deeper than JSONLINE_DEPTH or holds a
 * string jansson refuses (not UTF-8). On 0, buf holds nothing to use: the
 * caller asks jansson, which renders it or says why not. No terminating NUL.
 * One difference: an object key that is not UTF-8 is refused here, where
 * json_dumpb writes it cut short at the bad byte (jansson 2.14 does not check
 * that key's dump) and goes on.
 */
size_t jsonline_render(const json_t *v, char *buf, size_t size);

#endif
