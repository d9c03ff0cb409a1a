/* flows.c - which entries alerted on which flows lately: alert once per flow per entry. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "flows.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "recent.h"

struct flows {
	struct hash_key secret;
	unsigned timeout;
	struct recent *seen;       /* time_t: when each (flow, entry) was last seen */
};

struct flows *flows_new(size_t capacity, unsigned timeout_seconds)
{
	struct flows *f = calloc(1, sizeof(*f));

	if (f == NULL || hash_key_random(&f->secret, HASH_XXH3) < 0 ||
	    (f->seen = recent_new(capacity, sizeof(time_t))) == NULL) {
		flows_free(f);
		return NULL;
	}
	f->timeout = timeout_seconds;
	return f;
}

void flows_free(struct flows *f)
{
	if (f == NULL)
		return;
	recent_free(f->seen);
	free(f);
}

uint64_t flows_evicted(const struct flows *f)
{
	return recent_evicted(f->seen);
}

/* The flow's two ends in one order, whichever way the packet goes, then the entry. */
static uint64_t key_of(const struct flows *f, const struct packet_view *v, enum entry_kind kind,
		       const uint8_t *key, size_t len)
{
	uint8_t buf[2 + 2 * (16 + 2) + 1 + ENTRY_MAX_KEY];
	size_t alen = v->family == 4 ? 4 : 16, n = 0;
	uint8_t a[18], b[18];

	memcpy(a, v->src, alen);
	memcpy(b, v->dst, alen);
	a[alen] = (uint8_t)(v->sport >> 8), a[alen + 1] = (uint8_t)v->sport;
	b[alen] = (uint8_t)(v->dport >> 8), b[alen + 1] = (uint8_t)v->dport;
	bool swap = memcmp(a, b, alen + 2) > 0;
	buf[n++] = v->ip_proto;
	buf[n++] = (uint8_t)alen;
	memcpy(buf + n, swap ? b : a, alen + 2);
	n += alen + 2;
	memcpy(buf + n, swap ? a : b, alen + 2);
	n += alen + 2;
	buf[n++] = (uint8_t)kind;
	memcpy(buf + n, key, len);
	n += len;
	return hash_bytes(&f->secret, buf, n).lo;
}

bool flows_first(struct flows *f, const struct packet_view *v, enum entry_kind kind,
		 const uint8_t *key, size_t len, time_t now)
{
	bool fresh;
	time_t *seen = recent_use(f->seen, key_of(f, v, kind, key, len), &fresh);

	if (seen == NULL)
		return true; /* without memory: an alert more, never one missed */
	bool first = fresh || now - *seen > (time_t)f->timeout || now < *seen;
	*seen = now;
	return first;
}
