/* arena.c - growable parallel arrays, and a byte arena that compacts away removed bytes. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Arrays this large are looked up at random: 2 MiB pages spare them most TLB misses. */
#define HUGE_FROM (4u << 20)

void memory_prefer_huge(void *p, size_t bytes)
{
	if (p == NULL || bytes < HUGE_FROM)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from = (uintptr_t)p & ~(page - 1);
	(void)madvise((void *)from, (uintptr_t)p + bytes - from, MADV_HUGEPAGE); /* a hint: failure is harmless */
}

int arrays_grow(const struct array_spec *arrays, size_t n, size_t *cap, size_t need)
{
	size_t fresh = *cap ? *cap : 64;
	int rc = 0;

	if (need <= *cap)
		return 0;
	while (fresh < need)
		fresh *= 2;
	for (size_t i = 0; i < n; i++) {
		void *q = realloc(*arrays[i].p, fresh * arrays[i].size);
		if (q == NULL)
			rc = -1;
		else
			memory_prefer_huge(*arrays[i].p = q, fresh * arrays[i].size);
	}
	if (rc == 0)
		*cap = fresh;
	return rc;
}

int array_grow(void **p, size_t *cap, size_t need, size_t size)
{
	return arrays_grow(&(struct array_spec){ p, size }, 1, cap, need);
}

void *array_dup(const void *p, size_t n, bool *failed)
{
	void *copy;

	if (n == 0)
		return NULL;
	copy = malloc(n);
	if (copy == NULL)
		*failed = true;
	else
		memcpy(copy, p, n);
	return copy;
}

int64_t arena_put(struct arena *a, const void *bytes, size_t len)
{
	if (array_grow((void **)&a->bytes, &a->cap, a->len + len, 1) < 0)
		return -1;
	memcpy(a->bytes + a->len, bytes, len);
	a->len += len;
	return (int64_t)(a->len - len);
}

void arena_drop(struct arena *a, size_t len)
{
	a->garbage += len;
}

bool arena_wants_compact(const struct arena *a)
{
	return a->garbage > 4096 && a->garbage * 2 > a->len;
}

bool arena_compact_begin(const struct arena *a, struct arena_compaction *c)
{
	c->fresh = malloc(a->len - a->garbage + 1);
	c->len = 0;
	return c->fresh != NULL;
}

void arena_compact_move(const struct arena *a, struct arena_compaction *c, uint64_t *offset, size_t len)
{
	memcpy(c->fresh + c->len, a->bytes + *offset, len);
	*offset = c->len;
	c->len += len;
}

void arena_compact_end(struct arena *a, struct arena_compaction *c)
{
	free(a->bytes);
	a->bytes = c->fresh;
	a->cap = a->len - a->garbage + 1;
	a->len = c->len;
	a->garbage = 0;
}

void arena_free(struct arena *a)
{
	free(a->bytes);
	*a = (struct arena){ 0 };
}

int arena_copy(struct arena *dst, const struct arena *src)
{
	bool failed = false;

	*dst = *src;
	dst->bytes = array_dup(src->bytes, src->len, &failed);
	dst->cap = src->len;
	return failed ? -1 : 0;
}
