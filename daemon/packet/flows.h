/* flows.h - which entries alerted on which flows lately: alert once per flow per entry. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_FLOWS_H
#define BLOOMD_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "entry.h"
#include "packet.h"

/*
 * A flow is its protocol and its two ends (addresses, and ports where the
 * packet has them), the same both ways. A table of (flow, entry) keys (a
 * 64-bit hash, keyed with a random secret), each with when it was last
 * seen (packet time): an entry alerts on a flow the first time, then not
 * again until the flow has been quiet for it for the timeout. Up to
 * capacity keys it is exact; past it, a new key takes the place of the one
 * seen least recently (counted: flows_evicted), which can only mean an
 * alert more, never one missed, and depends only on the packets' order.
 */
struct flows;

/* A table of capacity (flow, entry) keys; NULL without memory. */
struct flows *flows_new(size_t capacity, unsigned timeout_seconds);
void flows_free(struct flows *f);
/* Keys pushed out to make room: each may have meant an alert more. */
uint64_t flows_evicted(const struct flows *f);

/* Whether entry (kind, its key) should alert on v's flow at now; either way, now is remembered. */
bool flows_first(struct flows *f, const struct packet_view *v, enum entry_kind kind,
		 const uint8_t *key, size_t len, time_t now);

#endif
