/* action_batch.h - elements added to and deleted from an inet table's address sets: one netlink batch, one transaction. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ACTION_BATCH_H
#define BLOOMD_ACTION_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * libnftables reads every element of the table's interval sets before each
 * command (50 ms a command with ten thousand nets), so the elements of
 * address (hash) sets that change one by one go to the kernel here: each a
 * NEWSETELEM or DELSETELEM message, all between a batch's begin and end,
 * committed by the kernel as one transaction or refused whole. A deletion
 * is sent as an addition then a deletion, so an element the kernel has
 * already let run out is no error.
 */
struct action_batch;

struct action_batch *action_batch_open(const char *table, char *err, size_t errlen);
void action_batch_close(struct action_batch *b);

/* Queue: key (4 or 16 bytes) into set with timeout_s seconds (0: none), or out of it. -1 without memory. */
int action_batch_add(struct action_batch *b, const char *set, const uint8_t *key, size_t len, uint64_t timeout_s);
int action_batch_delete(struct action_batch *b, const char *set, const uint8_t *key, size_t len);
/*
 * Queue: the net addr/prefix (addr 4 or 16 bytes, its host bits 0) into an
 * interval set with timeout_s seconds (0: none), or out of it, as the
 * kernel holds it: its first address, and the first past it marked as the
 * interval's end (none for a net that reaches the top of the address
 * space). nft itself takes about 130 ms for each net it deletes from a set
 * of 100,000: this costs microseconds. -1 without memory.
 */
int action_batch_add_net(struct action_batch *b, const char *set, const uint8_t *addr, size_t len, unsigned prefix,
		      uint64_t timeout_s);
int action_batch_delete_net(struct action_batch *b, const char *set, const uint8_t *addr, size_t len, unsigned prefix);
/*
 * A timeout of ms milliseconds (> 0) as nft's text takes it: in days,
 * hours, minutes, seconds and milliseconds ("1157d9h46m40s"), since nft
 * refuses one part that large ("100000000s": value too large). The kernel
 * takes up to about 213,000 days. Returns out.
 */
const char *action_timeout_text(uint64_t ms, char *out, size_t len);

/* Queue: every element of set out (a flush). -1 without memory. */
int action_batch_flush(struct action_batch *b, const char *set);

/* Whether anything is queued; how many messages (an element's addition or deletion, a flush). */
bool action_batch_pending(const struct action_batch *b);
size_t action_batch_queued(const struct action_batch *b);
/* What is queued dropped unsent. */
void action_batch_discard(struct action_batch *b);

/*
 * The kernel's ruleset generation (one more at each transaction anyone
 * commits that changes something) in *gen: 0, or -1 (no answer).
 */
int action_batch_generation(struct action_batch *b, uint32_t *gen);

/*
 * What is queued, sent and committed (the queue emptied either way): 1 if
 * the kernel made a generation of it, 0 if it had nothing to change (an
 * element added that it held: no generation is made), -1 with the
 * kernel's refusal. An old kernel that echoes the generation only to a
 * socket that listens makes every commit say 0.
 */
int action_batch_commit(struct action_batch *b, char *err, size_t errlen);

/* The netlink port id the batch commits from (what the kernel's announcements of its commits carry). */
uint32_t action_batch_portid(const struct action_batch *b);

#endif
