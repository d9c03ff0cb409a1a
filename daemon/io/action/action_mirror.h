/* action_mirror.h - the dropping and pass lists' addresses and nets, as nftables elements of bloomd's table. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ACTION_MIRROR_H
#define BLOOMD_ACTION_MIRROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * What the kernel should hold, and what it was told to: an element per
 * address (sets listed4, passed4, exempt4 and their 6s, hash sets) and per
 * net (listednets4 ..., interval sets), each with its entry's own time left
 * (none when the entry has none). The kernel refuses overlapping intervals,
 * so of the nets of one set only those no other of them holds go in: a
 * 10.0.0.0/8 hides 10.1.0.0/16 until it goes, and then the /16 goes in.
 *
 * Changes are told with action_mirror_put and action_mirror_drop (or between
 * action_mirror_sweep_begin and _end, where what was not put is dropped), then
 * action_mirror_settle, a step at a time, brings the kernel in step: an
 * element added once, re-added when its time changes by more than a
 * second, deleted with "add" before "delete" so that an element the kernel
 * already let run out is no error in the transaction. A step looks at a
 * bounded number of records, so a million changes never hold the caller.
 */
enum action_mirror_kind {
	SET_MIRROR_LISTED,         /* a dropping list's: dropped, from or to it */
	SET_MIRROR_PASSED,         /* a pass list's (pass = address): never judged bad */
	SET_MIRROR_EXEMPT,         /* a pass list's with pass = packet: a packet from or to it is let through */
	SET_MIRROR_KINDS
};

struct action_mirror;

/* table: bloomd's table's name ("bloomd"). NULL without memory. */
struct action_mirror *action_mirror_new(const char *table);
void action_mirror_free(struct action_mirror *m);

/* The sets' names and declarations, written inside "table inet T { ... }". */
void action_mirror_declare(FILE *f);
/* The name of kind's set for family (4 or 6), nets or addresses: "listednets6". */
const char *action_mirror_set_name(enum action_mirror_kind kind, int family, bool nets);

/*
 * addr (4 or 16 bytes, family 4 or 6) with prefix (the family's full length:
 * an address) wanted in kind's sets until until (Unix seconds; 0: no time
 * limit). -1 without memory.
 */
int action_mirror_put(struct action_mirror *m, enum action_mirror_kind kind, const uint8_t *addr, int family, unsigned prefix,
		   uint64_t until);
/* No longer wanted there (nothing if it was not). */
void action_mirror_drop(struct action_mirror *m, enum action_mirror_kind kind, const uint8_t *addr, int family, unsigned prefix);

/* A sweep: what is not put between begin and end is dropped at end. */
void action_mirror_sweep_begin(struct action_mirror *m);
void action_mirror_sweep_end(struct action_mirror *m);

/*
 * One step toward the kernel's sets being what is wanted: at most records
 * slots of the records' tables looked at, the changes they need written
 * to f as nft commands, or queued in batch when it is given, nets as
 * their intervals' elements (nft's own deletion of a net from a large
 * interval set takes some hundred milliseconds each); the mirror then
 * counts them as done. What a step wrote is one transaction: deletions
 * before additions. A change made between steps is settled by a later
 * one. now: Unix seconds. 1 if more steps are needed, 0 when in step, -1
 * without memory (the table made anew puts it right).
 */
struct action_batch;
int action_mirror_settle(struct action_mirror *m, FILE *f, struct action_batch *batch, uint64_t now, size_t records);
/* Whether a settle has more to do. */
bool action_mirror_syncing(const struct action_mirror *m);

/*
 * What the kernel holds unknown (its sets made anew, or its announcements
 * lost): each element wanted told again by the settles that follow (an
 * element the kernel has is added again, which changes nothing), each told
 * and no longer wanted taken out.
 */
void action_mirror_retell(struct action_mirror *m);

/* Every element wanted, for the table made anew (its sets empty), counted as done. */
void action_mirror_write_all(struct action_mirror *m, FILE *f, uint64_t now);

/*
 * Another's change to an element of one of the sets (by name): an address
 * deleted while bloomd wants it there is told again by the next settle;
 * one added while bloomd does not want it is queued out in batch; an
 * interval set's element (a start or an end) has that set's nets told
 * again whole, after its flush (queued) when another added to it. 1 if
 * answered, 0 if there was nothing to answer, -1 without memory.
 */
int action_mirror_answer(struct action_mirror *m, const char *set, const uint8_t *addr, int family, bool added,
		      struct action_batch *batch, uint64_t now);

struct action_mirror_counts {
	uint64_t elements[SET_MIRROR_KINDS];  /* in the kernel, as bloomd told it */
	uint64_t hidden;                      /* nets another net of their set holds */
	uint64_t protected_listed;            /* listed addresses that are protected: put, never dropped (the accept rules) */
};
void action_mirror_counts(const struct action_mirror *m, struct action_mirror_counts *out);

/*
 * What is protected (action_protect.h): a listed address it holds, a
 * decision for the host's resolver say, is counted as it is put (it stays
 * in the set, where the protected sets' accept rules come first, so that
 * it drops nothing and is in step again the moment it is no longer
 * protected); the first of them for the log, NULL while there is none.
 */
struct action_protect;
void action_mirror_protect(struct action_mirror *m, const struct action_protect *p);
const char *action_mirror_first_protected(const struct action_mirror *m);

#endif
