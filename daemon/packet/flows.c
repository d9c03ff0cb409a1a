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
	uint8_t buf[PACKET_FLOW_ENDS_MAX + 1 + ENTRY_MAX_KEY];
	bool src_first;
	size_t n = packet_flow_ends(v, buf, &src_first);

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
