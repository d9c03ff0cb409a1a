/* cluster_seen.c - which changes of the stream were applied: each change's identity, re-sends known. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_seen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen_record {
	struct change_id id;       /* id.seq: the highest applied */
	uint64_t touched;          /* when last applied, in records taken: the oldest goes at SEEN_MAX */
};

struct cluster_seen {
	struct seen_record *r;
	size_t n, cap;
	uint64_t clock;
};

struct cluster_seen *seen_new(void)
{
	return calloc(1, sizeof(struct cluster_seen));
}

void seen_free(struct cluster_seen *s)
{
	if (s == NULL)
		return;
	free(s->r);
	free(s);
}

void seen_clear(struct cluster_seen *s)
{
	s->n = 0;
}

bool seen_empty(const struct cluster_seen *s)
{
	return s->n == 0;
}

/* The record of id's (node, incarnation), or NULL. A few nodes, a few starts each: a walk is enough. */
static struct seen_record *find(const struct cluster_seen *s, const struct change_id *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].id.incarnation == id->incarnation && strcmp(s->r[i].id.node, id->node) == 0)
			return &s->r[i];
	return NULL;
}

bool seen_already(const struct cluster_seen *s, const struct change_id *id)
{
	const struct seen_record *r = find(s, id);

	return r && r->id.seq >= id->seq;
}

/* A slot for a new (node, incarnation): a new one, or the one longest untouched at SEEN_MAX. */
static struct seen_record *make_room(struct cluster_seen *s)
{
	if (s->n == SEEN_MAX) {
		size_t oldest = 0;
		for (size_t i = 1; i < s->n; i++)
			if (s->r[i].touched < s->r[oldest].touched)
				oldest = i;
		return &s->r[oldest];
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct seen_record *grown = realloc(s->r, cap * sizeof(*grown));
		if (grown == NULL)
			return NULL;
		s->r = grown;
		s->cap = cap;
	}
	return &s->r[s->n++];
}

int seen_record(struct cluster_seen *s, const struct change_id *id)
{
	struct seen_record *r = find(s, id);

	if (r == NULL) {
		if ((r = make_room(s)) == NULL)
			return -1;
		r->id = *id;
	} else if (id->seq > r->id.seq) {
		r->id.seq = id->seq;
	}
	r->touched = ++s->clock;
	return 0;
}

void seen_format_id(uint64_t incarnation, uint64_t seq, char *out, size_t len)
{
	snprintf(out, len, "%016" PRIx64 "-%" PRIu64, incarnation, seq);
}

int seen_parse_id(const char *text, uint64_t *incarnation, uint64_t *seq)
{
	char *end;

	if (strspn(text, "0123456789abcdef") != 16 || text[16] != '-' || text[17] < '0' || text[17] > '9')
		return -1;
	*incarnation = strtoull(text, NULL, 16);
	*seq = strtoull(text + 17, &end, 10);
	return *end == '\0' && *seq > 0 ? 0 : -1;
}

char *seen_text(const struct cluster_seen *s, size_t *len)
{
	char *text = NULL, id[48];
	FILE *f = open_memstream(&text, len);

	if (f == NULL)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		seen_format_id(s->r[i].id.incarnation, s->r[i].id.seq, id, sizeof(id));
		fprintf(f, "seen %s %s\n", s->r[i].id.node, id);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int seen_take_line(struct cluster_seen *s, const char *line)
{
	struct change_id id = { 0 };
	char node[SEEN_NODE_MAX + 1], text[48];

	if (sscanf(line, "seen %64s %47s", node, text) != 2 || strlen(node) >= SEEN_NODE_MAX ||
	    seen_parse_id(text, &id.incarnation, &id.seq) < 0) {
		errno = EINVAL;
		return -1;
	}
	memcpy(id.node, node, strlen(node) + 1);
	return seen_record(s, &id);
}

int seen_take_text(struct cluster_seen *s, const char *text)
{
	for (const char *p = text; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
		char line[160];
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (seen_take_line(s, line) < 0 && errno == ENOMEM)
			return -1;
	}
	return 0;
}

bool seen_covers(const struct cluster_seen *newer, const struct cluster_seen *older, struct change_id *lacking)
{
	for (size_t i = 0; i < older->n; i++)
		if (!seen_already(newer, &older->r[i].id)) {
			if (lacking)
				*lacking = older->r[i].id;
			return false;
		}
	return true;
}
