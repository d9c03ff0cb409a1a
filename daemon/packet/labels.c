/* labels.c - the labels entries carry inline in a list, per entry and list. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "hash.h"

#define MAX_CATEGORIES 65535

struct record {
	struct hash128 id;         /* the entry's */
	uint8_t holder, severity;
	uint16_t category;         /* index + 1 into categories; 0: none */
};

struct labels {
	struct hash_key secret;
	struct record *records;
	size_t n, cap;
	uint32_t *slots;           /* record index + 1; 0: empty */
	size_t nslots;             /* a power of two, at least twice n */
	char **categories;
	size_t ncategories, categories_cap;
};

struct labels *labels_new(void)
{
	struct labels *t = calloc(1, sizeof(*t));

	if (t == NULL || hash_key_random(&t->secret, HASH_XXH3) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

void labels_free(struct labels *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->ncategories; i++)
		free(t->categories[i]);
	free(t->categories);
	free(t->records);
	free(t->slots);
	free(t);
}

size_t labels_count(const struct labels *t)
{
	return t->n;
}

static struct hash128 id_of(const struct labels *t, enum entry_kind kind, const uint8_t *key, size_t len)
{
	return hash_bytes_domain(&t->secret, kind, key, len);
}

static size_t slot_of(const struct labels *t, struct hash128 id, unsigned holder)
{
	return (size_t)((id.lo ^ (holder * 0x9e3779b97f4a7c15ULL)) & (t->nslots - 1));
}

/* The slot holding (id, holder), or the empty one where it would go. */
static size_t find(const struct labels *t, struct hash128 id, unsigned holder)
{
	size_t i = slot_of(t, id, holder);

	while (t->slots[i]) {
		const struct record *r = &t->records[t->slots[i] - 1];
		if (r->holder == holder && r->id.lo == id.lo && r->id.hi == id.hi)
			return i;
		i = (i + 1) & (t->nslots - 1);
	}
	return i;
}

static void index_records(struct labels *t)
{
	memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	for (size_t k = 0; k < t->n; k++)
		t->slots[find(t, t->records[k].id, t->records[k].holder)] = (uint32_t)(k + 1);
}

/* A larger index for n + 1 records. */
static int grow_index(struct labels *t)
{
	size_t nslots = 64;

	while (nslots < 2 * (t->n + 1))
		nslots *= 2;
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	if (slots == NULL)
		return -1;
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	index_records(t);
	return 0;
}

static int category_index(struct labels *t, const char *name, uint16_t *out)
{
	*out = 0;
	if (name[0] == '\0')
		return 0;
	for (size_t i = 0; i < t->ncategories; i++)
		if (strcmp(t->categories[i], name) == 0)
			return *out = (uint16_t)(i + 1), 0;
	if (t->ncategories == MAX_CATEGORIES ||
	    array_grow((void **)&t->categories, &t->categories_cap, t->ncategories + 1, sizeof(char *)) < 0 ||
	    (t->categories[t->ncategories] = strdup(name)) == NULL)
		return -1;
	*out = (uint16_t)++t->ncategories;
	return 0;
}

int labels_set(struct labels *t, const struct entry *e, unsigned holder, const struct entry_labels *l)
{
	struct hash128 id = id_of(t, e->kind, e->key, e->len);
	uint16_t category;

	if (category_index(t, l->category, &category) < 0)
		return -1;
	if (2 * (t->n + 1) > t->nslots && grow_index(t) < 0)
		return -1;
	size_t i = find(t, id, holder);
	if (t->slots[i] == 0) {
		if (array_grow((void **)&t->records, &t->cap, t->n + 1, sizeof(*t->records)) < 0)
			return -1;
		t->records[t->n] = (struct record){ .id = id, .holder = (uint8_t)holder };
		t->slots[i] = (uint32_t)++t->n;
	}
	struct record *r = &t->records[t->slots[i] - 1];
	r->severity = (uint8_t)l->severity;
	r->category = category;
	return 0;
}

bool labels_get(const struct labels *t, enum entry_kind kind, const uint8_t *key, size_t len, unsigned holder,
		struct entry_labels *out)
{
	if (t->n == 0)
		return false;
	struct hash128 id = id_of(t, kind, key, len);
	size_t i = find(t, id, holder);
	if (t->slots[i] == 0)
		return false;
	const struct record *r = &t->records[t->slots[i] - 1];
	*out = (struct entry_labels){ .severity = r->severity };
	if (r->category)
		snprintf(out->category, sizeof(out->category), "%s", t->categories[r->category - 1]);
	return true;
}

void labels_move(struct labels *t, int from, unsigned to)
{
	size_t kept = 0;

	for (size_t k = 0; k < t->n; k++) {
		struct record r = t->records[k];
		if (r.holder == to)
			continue;
		if (from >= 0 && r.holder == (unsigned)from)
			r.holder = (uint8_t)to;
		t->records[kept++] = r;
	}
	if (t->nslots == 0)
		return; /* never held any */
	t->n = kept;
	index_records(t); /* no more records than the index had: nothing to allocate, nothing to fail */
}
