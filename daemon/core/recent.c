/* recent.c - the keys seen most recently, at most a fixed number, each with a small value: an exact LRU table. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "recent.h"

#include <stdlib.h>
#include <string.h>

#include "keytable.h"

#define NONE UINT32_MAX

/* Where a key's node is: the index. */
struct place {
	uint64_t key;
	uint32_t node;
};

/* A key in the order of use: a doubly linked list through the nodes, most recent first. */
struct node {
	uint64_t key;
	uint32_t newer, older;
};

struct recent {
	struct keytable *index;    /* struct place, by key */
	struct node *nodes;        /* capacity of them; count in use */
	unsigned char *values;     /* value_size bytes a node */
	size_t capacity, count, value_size;
	uint32_t newest, oldest;
	uint64_t evicted;
};

struct recent *recent_new(size_t capacity, size_t value_size)
{
	struct recent *r = calloc(1, sizeof(*r));

	if (r == NULL || capacity == 0 || capacity >= NONE || (r->index = keytable_new(sizeof(struct place), sizeof(uint64_t))) == NULL ||
	    (r->nodes = calloc(capacity, sizeof(*r->nodes))) == NULL ||
	    (r->values = calloc(capacity, value_size ? value_size : 1)) == NULL) {
		recent_free(r);
		return NULL;
	}
	r->capacity = capacity;
	r->value_size = value_size;
	r->newest = r->oldest = NONE;
	return r;
}

void recent_free(struct recent *r)
{
	if (r == NULL)
		return;
	keytable_free(r->index);
	free(r->nodes);
	free(r->values);
	free(r);
}

static void unlink_node(struct recent *r, uint32_t i)
{
	struct node *n = &r->nodes[i];

	if (n->newer != NONE)
		r->nodes[n->newer].older = n->older;
	else
		r->newest = n->older;
	if (n->older != NONE)
		r->nodes[n->older].newer = n->newer;
	else
		r->oldest = n->newer;
}

static void link_newest(struct recent *r, uint32_t i)
{
	struct node *n = &r->nodes[i];

	n->newer = NONE;
	n->older = r->newest;
	if (r->newest != NONE)
		r->nodes[r->newest].newer = i;
	r->newest = i;
	if (r->oldest == NONE)
		r->oldest = i;
}

/* A node for a new key: a free one, or the least recently used one's, its key forgotten. */
static uint32_t take_node(struct recent *r)
{
	if (r->count < r->capacity)
		return (uint32_t)r->count++;
	uint32_t i = r->oldest;
	unlink_node(r, i);
	keytable_remove(r->index, keytable_find(r->index, &r->nodes[i].key));
	r->evicted++;
	return i;
}

void *recent_use(struct recent *r, uint64_t key, bool *fresh)
{
	bool added;
	struct place *p = keytable_put(r->index, &key, &added);

	if (p == NULL)
		return NULL;
	*fresh = added;
	if (!added) {
		unlink_node(r, p->node);
		link_newest(r, p->node);
		return r->values + (size_t)p->node * r->value_size;
	}
	uint32_t i = take_node(r);
	p = keytable_find(r->index, &key); /* the removal of the one pushed out may have moved it */
	p->node = i;
	r->nodes[i].key = key;
	link_newest(r, i);
	memset(r->values + (size_t)i * r->value_size, 0, r->value_size);
	return r->values + (size_t)i * r->value_size;
}

uint64_t recent_evicted(const struct recent *r)
{
	return r->evicted;
}

size_t recent_count(const struct recent *r)
{
	return r->count;
}
