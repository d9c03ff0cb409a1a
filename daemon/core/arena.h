/* arena.h - growable parallel arrays, and a byte arena that compacts away removed bytes. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ARENA_H
#define BLOOMD_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One of a table's parallel arrays: where its pointer is, and its element size. */
struct array_spec {
	void **p;
	size_t size;
};

/*
 * Grow n parallel arrays, all of capacity *cap, to hold at least need
 * elements (doubling, from 64). Returns 0, or -1 without memory: then *cap is
 * unchanged, and an array that did grow keeps its old elements either way.
 */
int arrays_grow(const struct array_spec *arrays, size_t n, size_t *cap, size_t need);

/* The same for one array. */
int array_grow(void **p, size_t *cap, size_t need, size_t size);

/*
 * Ask the kernel for 2 MiB pages under an allocation of bytes at p, when it
 * is large enough for them to matter (a hint: the kernel may not have them).
 */
void memory_prefer_huge(void *p, size_t bytes);

/* A copy of n bytes at p (NULL for n = 0), or NULL with *failed set. */
void *array_dup(const void *p, size_t n, bool *failed);

/*
 * Variable-length byte strings, appended; a removed one's bytes are garbage
 * until the owner compacts, which it does when arena_wants_compact says so,
 * walking its live strings with arena_compact_move.
 */
struct arena {
	uint8_t *bytes;
	size_t len, cap, garbage;
};

/* Append len bytes; their offset, or -1 without memory. */
int64_t arena_put(struct arena *a, const void *bytes, size_t len);
void arena_drop(struct arena *a, size_t len);
bool arena_wants_compact(const struct arena *a);

/* A compaction in progress: begin, move every live string once, then end. */
struct arena_compaction {
	uint8_t *fresh;
	size_t len;
};

/* false without memory (the garbage stays; a later remove tries again). */
bool arena_compact_begin(const struct arena *a, struct arena_compaction *c);
/* Copy the string at *offset into the new arena and point *offset at it. */
void arena_compact_move(const struct arena *a, struct arena_compaction *c, uint64_t *offset, size_t len);
void arena_compact_end(struct arena *a, struct arena_compaction *c);

void arena_free(struct arena *a);

/* *dst: a copy of src's live bytes and garbage alike (offsets stay valid); -1 without memory. */
int arena_copy(struct arena *dst, const struct arena *src);

#endif
