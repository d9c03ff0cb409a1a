/* keytable.c - fixed-size records found by a key at their start. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "keytable.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hash.h"

#define FIRST_SLOTS 64

struct keytable {
	size_t rec_size, key_size;
	unsigned char *recs;       /* nslots records */
	unsigned char *used;       /* by slot: 1 if it holds a record */
	size_t nslots, count;      /* nslots a power of two */
	struct hash_key secret;
};

static unsigned char *rec_at(const struct keytable *t, size_t i)
{
	return t->recs + i * t->rec_size;
}

static size_t home_of(const struct keytable *t, const void *key)
{
	return (size_t)hash_bytes(&t->secret, key, t->key_size).lo & (t->nslots - 1);
}

/* The slot holding key, or the free slot where it would go. */
static size_t slot_of(const struct keytable *t, const void *key)
{
	size_t i = home_of(t, key);

	while (t->used[i] && memcmp(rec_at(t, i), key, t->key_size) != 0)
		i = (i + 1) & (t->nslots - 1);
	return i;
}

static int alloc_slots(struct keytable *t, size_t nslots)
{
	t->recs = calloc(nslots, t->rec_size);
	t->used = calloc(nslots, 1);
	t->nslots = nslots;
	return t->recs && t->used ? 0 : -1;
}

struct keytable *keytable_new(size_t rec_size, size_t key_size)
{
	struct keytable *t = calloc(1, sizeof(*t));

	BLOOMD_CHECK(key_size > 0 && key_size <= rec_size);
	if (t == NULL)
		return NULL;
	t->rec_size = rec_size;
	t->key_size = key_size;
	if (hash_key_random(&t->secret, HASH_XXH3) < 0 || alloc_slots(t, FIRST_SLOTS) < 0) {
		keytable_free(t);
		return NULL;
	}
	return t;
}

void keytable_free(struct keytable *t)
{
	if (t == NULL)
		return;
	free(t->recs);
	free(t->used);
	free(t);
}

static int grow(struct keytable *t)
{
	struct keytable old = *t;

	if (alloc_slots(t, 2 * old.nslots) < 0) {
		free(t->recs);
		free(t->used);
		*t = old;
		return -1;
	}
	for (size_t i = 0; i < old.nslots; i++) {
		if (!old.used[i])
			continue;
		size_t j = slot_of(t, rec_at(&old, i));
		memcpy(rec_at(t, j), rec_at(&old, i), t->rec_size);
		t->used[j] = 1;
	}
	free(old.recs);
	free(old.used);
	return 0;
}

void *keytable_find(const struct keytable *t, const void *key)
{
	size_t i = slot_of(t, key);

	return t->used[i] ? rec_at(t, i) : NULL;
}

void *keytable_put(struct keytable *t, const void *key, bool *added)
{
	size_t i = slot_of(t, key);

	*added = !t->used[i];
	if (!*added)
		return rec_at(t, i);
	if (2 * (t->count + 1) > t->nslots) {
		if (grow(t) < 0)
			return NULL;
		i = slot_of(t, key);
	}
	unsigned char *rec = rec_at(t, i);
	memset(rec, 0, t->rec_size);
	memcpy(rec, key, t->key_size);
	t->used[i] = 1;
	t->count++;
	BLOOMD_CHECK(2 * t->count <= t->nslots); /* at most half full: probes end */
	return rec;
}

/* Free slot i, moving back the records after it that would no longer be found. */
static void free_slot(struct keytable *t, size_t i)
{
	size_t mask = t->nslots - 1;

	for (size_t j = (i + 1) & mask; t->used[j]; j = (j + 1) & mask) {
		size_t home = home_of(t, rec_at(t, j));
		if (((j - home) & mask) >= ((j - i) & mask)) { /* i lies between its home and j */
			memcpy(rec_at(t, i), rec_at(t, j), t->rec_size);
			i = j;
		}
	}
	t->used[i] = 0;
	t->count--;
}

void keytable_remove(struct keytable *t, void *rec)
{
	size_t i = (size_t)((unsigned char *)rec - t->recs) / t->rec_size;

	BLOOMD_CHECK(i < t->nslots && t->used[i]);
	free_slot(t, i);
}

size_t keytable_count(const struct keytable *t)
{
	return t->count;
}

size_t keytable_slots(const struct keytable *t)
{
	return t->nslots;
}

int keytable_each_at(struct keytable *t, size_t *at, size_t n, keytable_cb cb, void *ctx)
{
	size_t i = *at, end = i < t->nslots && n < t->nslots - i ? i + n : t->nslots;

	while (i < end) {
		if (!t->used[i]) {
			i++;
			continue;
		}
		int rc = cb(ctx, rec_at(t, i));
		if (rc < 0) {
			*at = i;
			return rc;
		}
		if (rc > 0)
			free_slot(t, i); /* another may have moved into i */
		else
			i++;
	}
	*at = i;
	return i >= t->nslots;
}

int keytable_each(struct keytable *t, keytable_cb cb, void *ctx)
{
	size_t at = 0;
	int rc = keytable_each_at(t, &at, SIZE_MAX, cb, ctx);

	return rc < 0 ? rc : 0;
}
