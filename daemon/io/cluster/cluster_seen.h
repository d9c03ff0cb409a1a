/* cluster_seen.h - which changes of the stream were applied: each change's identity, re-sends known. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CLUSTER_SEEN_H
#define BLOOMD_CLUSTER_SEEN_H

/*
 * Every change a node publishes carries an identity: the node's name, the
 * incarnation (a random number drawn at each start of the node) and a
 * sequence number counted from 1 within the incarnation. A node that
 * crashed after Redis took a change, but before it knew, sends it again
 * after its restart, under its first identity; the stream then holds it
 * twice. The first time counts: later copies are duplicates, and every node
 * passes them, so a stale re-send never undoes a change made after it.
 *
 * What was applied is the highest sequence of each (node, incarnation), kept
 * with the cursor (and in the stream's snapshot), so a restart and a node
 * restored from the snapshot pass the same duplicates. At most SEEN_MAX
 * incarnations are remembered; the one longest unheard of goes first.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEEN_MAX 4096
#define SEEN_NODE_MAX 64

struct cluster_seen;

struct change_id {
	char node[SEEN_NODE_MAX];
	uint64_t incarnation;
	uint64_t seq;
};

struct cluster_seen *seen_new(void);
void seen_free(struct cluster_seen *s);
void seen_clear(struct cluster_seen *s);
bool seen_empty(const struct cluster_seen *s);

/* Whether id was applied already (this change, or a later one of its incarnation). */
bool seen_already(const struct cluster_seen *s, const struct change_id *id);
/* id was applied (or passed for good). -1 without memory. */
int seen_record(struct cluster_seen *s, const struct change_id *id);

/* "INCARNATION-SEQ" (hex, decimal) for the stream, and back; -1 if text is not one. */
void seen_format_id(uint64_t incarnation, uint64_t seq, char *out, size_t len);
int seen_parse_id(const char *text, uint64_t *incarnation, uint64_t *seq);

/* All of it as lines "seen NODE INCARNATION-SEQ" (caller frees), or NULL without memory. */
char *seen_text(const struct cluster_seen *s, size_t *len);
/* One such line taken in; 0, or -1 if it is not one (errno EINVAL) or without memory (ENOMEM). */
int seen_take_line(struct cluster_seen *s, const char *line);
/* Every line of text (seen_text's) taken in; lines that are not one are skipped. -1 without memory. */
int seen_take_text(struct cluster_seen *s, const char *text);

/*
 * Whether newer holds every change older does: for each (node,
 * incarnation) of older, newer has it too, with a sequence as high. If
 * not, *lacking (if not NULL) is one it lacks. A snapshot whose changes do
 * not cover those a node applied is older than the node's state, or from
 * another history: taking it would undo changes.
 */
bool seen_covers(const struct cluster_seen *newer, const struct cluster_seen *older, struct change_id *lacking);

#endif
