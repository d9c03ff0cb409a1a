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
 * packet has them), the same both ways. A fixed table of (flow, entry)
 * keys, each with when it was last seen (packet time): an entry alerts on a
 * flow the first time, then not again until the flow has been quiet for it
 * for the timeout. The table never grows: two keys that want one slot
 * share it, the newer one evicting the older, which can only mean one
 * alert more, never one missed.
 */
struct flows;

/* A table of 2^bits slots, keyed with a random secret; NULL without memory. */
struct flows *flows_new(unsigned bits, unsigned timeout_seconds);
void flows_free(struct flows *f);

/* Whether entry (kind, its key) should alert on v's flow at now; either way, now is remembered. */
bool flows_first(struct flows *f, const struct packet_view *v, enum entry_kind kind,
		 const uint8_t *key, size_t len, time_t now);

#endif
