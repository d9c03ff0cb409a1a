/* feed_internal.h - what the feed files share: feed.c (the line formats) uses feed_json.c and feed_address.c. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_FEED_INTERNAL_H
#define BLOOMD_FEED_INTERNAL_H

#include "feed.h"

#define FEED_TOKEN_MAX 128 /* an address, a network, a CSV field */

/* feed_address.c: an address (addr) or a network (net; a whole-length one is its address): 0, or -1 with a message. */
int feed_address(const char *text, struct entry *e, char *err, size_t errlen);
/* An IPv4-mapped IPv6 address or network (::ffff:a.b.c.d) made the IPv4 one it is; others left. */
void feed_unmap_v4(struct entry *e);

/* feed_json.c: a line of Spamhaus's DROP in JSON, as feed_line. */
int feed_spamhaus_json_line(const char *line, struct entry *e, char *err, size_t errlen);
/* A CrowdSec document read whole, each decision a line, as feed_read (stream_whole, stream_only: spec's). */
int feed_crowdsec_read(FILE *f, const struct feed_spec *spec, uint64_t now, feed_entry_cb on_entry, feed_bad_cb on_bad,
		       void *ctx, struct feed_counts *counts, char *err, size_t errlen);

#endif
