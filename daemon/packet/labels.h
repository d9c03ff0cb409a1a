/* labels.h - the labels entries carry inline in a list (category=, severity=), per entry and list. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_LABELS_H
#define BLOOMD_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"

/*
 * A table of (entry, holder) -> labels, for the few entries that carry their
 * own: an alert on such an entry says its category and severity in place of
 * its list's. An entry is known by a keyed 128-bit hash of its kind and key,
 * not by its bytes, so a labelled signature costs 24 bytes here. Holders are
 * the lists' holder bits (matcher.h) by number, 0..31.
 */
struct labels;

struct labels *labels_new(void);
void labels_free(struct labels *t);

/* Give e, as held by holder, these labels. 0, or -1 without memory (or past 65,535 categories). */
int labels_set(struct labels *t, const struct entry *e, unsigned holder, const struct entry_labels *l);

/* The labels holder gave the entry (kind, key); false if none. */
bool labels_get(const struct labels *t, enum entry_kind kind, const uint8_t *key, size_t len, unsigned holder,
		struct entry_labels *out);

/*
 * holder to's labels are dropped, and from's become to's (a list's staged
 * version taken); from < 0 only drops to's (a list flushed or gone).
 */
void labels_move(struct labels *t, int from, unsigned to);

/* Labels held. */
size_t labels_count(const struct labels *t);

#endif
