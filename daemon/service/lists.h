/* lists.h - the entry set's owner: the running lists, a holder each, versions swapped in whole, labels for alerts. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_LISTS_H
#define BLOOMD_LISTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "config.h"
#include "feed.h"
#include "filter.h"
#include "hash.h"
#include "labels.h"
#include "log.h"
#include "matcher_view.h"
#include "state_ttl.h"

/*
 * Each list holds its entries under a holder bit of its own (matcher.h): bit
 * 0 is the local list (what bloomctl adds), the others are given out as
 * lists appear in the configuration and taken back when they go. Bit 31 is
 * kept for staging (MATCHER_HOLDER_STAGING: no match on its own): a new
 * version is read under it and then reheld onto the list's bit in one step
 * (matcher_rehold), or dropped whole if refused, so packets see the old
 * version or the new one, never a mix. A version from the cluster is taken
 * in slices instead (service_slices.c): old, then both, then new.
 */
#define LISTS_SLOTS 31
#define LISTS_STAGING MATCHER_HOLDER_STAGING

/* What the last load of a list found. */
struct list_load {
	uint64_t lines, entries, bad; /* entries: lines that gave one */
	uint64_t skipped;             /* lines of parts it cannot hold, skipped whole (ipset's other set types) */
	char skipped_what[256];       /* which parts */
	uint64_t added, removed;      /* to and from the list, when taken */
	bool refused;                 /* the list kept its previous version */
	char error[300];              /* why it was refused, or "" */
};

struct list_state {
	char name[LIST_NAME_MAX];     /* "" for a free slot */
	unsigned version;             /* versions taken */
	unsigned rev;                 /* eve's rev: 1 at the first version, +1 each time a version changes the entries */
	uint64_t digest;              /* of the entries the list holds, once known (service_revs.c) */
	bool digest_known;            /* since start: else the revision kept in the state directory is read */
	time_t loaded;                /* when the last version was taken (0: never) */
	struct list_load last;
	uint64_t refusals;            /* versions refused */
	struct log_limit refusals_logged;
	const struct list_config *cfg;
};

/* An exception of the version being staged (ipset's nomatch): a network, or an address at full length. */
struct list_exception {
	uint8_t alen, bits;           /* 4 or 16 bytes; prefix length */
	uint8_t addr[16];
};

struct lists {
	struct list_state slot[LISTS_SLOTS]; /* by holder bit */
	const char *names[LISTS_SLOTS];      /* slot[i].name, for the events (engine.list_names) */
	struct labels *labels;               /* the labels entries carry inline, by list */
	struct list_exception *exceptions;   /* the staged version's, applied when it is done */
	size_t nexceptions, exceptions_cap;
	struct state_ttl *expiry[LISTS_SLOTS + 1]; /* by slot, the entries with a time to live; [LISTS_SLOTS]: the staged */
	bool staged_change;                  /* the staged version is a change to the list's current one */
	struct state_ttl *staged_deleted;          /* the entries it deletes (a set: their time is 1) */
};

/*
 * lists.c owns the entry set: it alone changes which entries the matcher
 * holds and for whom (matcher_hold, release, rehold and the builds, in
 * matcher.h); every other file reads it through matcher_view.h and asks for a
 * change by name below (tests/layers.t). So the holder bits, and the order
 * that keeps every entry held while it moves, are decided in one file.
 */

/* The matcher cfg's [filter] and [signatures] describe; keys: a snapshot's secrets ([2]), or NULL for fresh ones. */
struct matcher *lists_matcher_new(const struct config *cfg, const struct hash_key *keys, char *err, size_t errlen);
/* Whether lists_refilter would take cfg: 0, or -1 with a message. */
int lists_check_filter(const struct config *cfg, char *err, size_t errlen);
/* cfg's filter settings for the next rebuild (checked first); whether any changed. */
bool lists_refilter(struct matcher *m, const struct config *cfg);

/*
 * A start: a snapshot's entries each in its kept group and signature window
 * (STATE_WINDOW_UNKNOWN: the matcher chooses), then the filters built
 * with the snapshot's parameters (restored non-NULL, [2]) or by online
 * insertion (NULL). Entries added after the build (a list read after a
 * snapshot's) are placed online: lists_placed_online says so.
 */
int lists_restore_entry(struct matcher *m, const struct entry *e, unsigned group, unsigned window, char *err,
			size_t errlen);
int lists_build(struct matcher *m, const struct filter_params *restored, char *err, size_t errlen);
void lists_placed_online(struct matcher *m);

/* The local list (slot 0, what bloomctl and the journal add): e held by it, -1 with a message. */
int lists_local_hold(struct matcher *m, const struct entry *e, char *err, size_t errlen);
/* Ask for the memory a hold of e will touch (its slot in the store), some entries before it. */
void lists_prefetch(const struct matcher *m, const struct entry *e);
/* e no longer the local list's: 0 (*left: who holds it now), or 1 if it was not stored. */
int lists_local_release(struct matcher *m, const struct entry *e, uint32_t *left);

/*
 * A version taken in slices (service_slices.c): one entry of the staged
 * version held by list i, or one the staged version lacks released from
 * it, ahead of the lists_take that ends it. true once done (false: no
 * memory, or not held: lists_take does what is left).
 */
bool lists_take_entry(struct matcher *m, int i, const struct entry *e);
bool lists_drop_entry(struct matcher *m, int i, const struct entry *e);

/*
 * While the cluster's snapshot is restored: an entry marked (held by
 * LISTS_STAGING, no match on its own) is one the snapshot has, or an
 * operator changed meanwhile, and is not undone by the snapshot's end;
 * lists_unmark_all drops every mark once it is done.
 */
int lists_mark(struct matcher *m, const struct entry *e, char *err, size_t errlen);
void lists_unmark_all(struct matcher *m);

/* -1 without memory. */
int lists_init(struct lists *ls);
void lists_free(struct lists *ls);

/* When list slot (LISTS_SLOTS: the version staged) lets entry e go; 0: never. */
uint64_t lists_expiry(const struct lists *ls, unsigned slot, const struct entry *e);

/*
 * The lists' entries whose time to live (a feed's ipset timeout, CrowdSec
 * duration, expires=) has run out by now are released from the list that
 * gave it, unless a version being staged holds them too: at most *budget
 * of them looked at (each one taken off it). How many were released.
 */
uint64_t lists_expire(struct lists *ls, struct matcher *m, uint64_t now, size_t *budget);

/*
 * Follow cfg's lists: a new one gets a slot, one no longer there is flushed
 * (its entries released) and its slot freed. -1 with a message if there is
 * no slot left (nothing changed).
 */
int lists_configure(struct lists *ls, struct matcher *m, const struct config *cfg, char *err,
		    size_t errlen);

/* The holder bits of the lists whose action is action. */
uint32_t lists_acting(const struct lists *ls, enum list_action action);
/* Those of the pass lists with pass = packet (a packet they hold any part of is exempt). */
uint32_t lists_passing_packets(const struct lists *ls);

/* The list's slot (its holder bit), or -1. */
int lists_find(const struct lists *ls, const char *name);

/*
 * When a version is read (now: what has run out is left out), and when its
 * source stated the times it gives relative to then (a CrowdSec duration, an
 * ipset timeout, ttl=): a file's modification, a fetch's answer. Anchored
 * there, reading the same document again never extends an entry's time.
 */
struct list_clock {
	uint64_t now, stated;
};

/*
 * Read a new version of list i from f under the staging bit, or refuse it:
 * when f cannot be read to its end, an entry cannot be stored (no memory),
 * more than the list's max_bad of its lines are bad, or (guarded: a version
 * from a feed, not one kept by bloomd) a feed guard says no: fewer entries
 * than min_entries, or more of the list's entries removed than max_removed.
 * Exceptions (ipset's nomatch) are taken out of the version's networks that
 * hold them: such a network is held as the prefixes that remain (as many as
 * the prefix lengths between the two), so an address the kernel's set says
 * is not in it is not in the list either, the longest prefix deciding. Bad lines go to
 * on_bad. Returns 0 if it can be taken: the caller then keeps it (its
 * entries are those held by LISTS_STAGING, their labels in slot
 * LISTS_SLOTS) and takes it (lists_take) or drops it (lists_unstage).
 * Returns -1 if refused: the staged version is dropped, r says why.
 */
int lists_stage(struct lists *ls, struct matcher *m, int i, FILE *f, const struct feed_spec *spec,
		const struct list_clock *clock, bool guarded, feed_bad_cb on_bad, void *ctx, struct list_load *r);
/*
 * lists_stage in parts, for a version read a slice at a time: each part
 * from its own f adds to r (start it zeroed), -1 once one fails (r->error);
 * then lists_stage_done refuses the whole as lists_stage would (-1,
 * unstaged) or lets it be taken (0).
 */
int lists_stage_more(struct lists *ls, struct matcher *m, FILE *f, const struct feed_spec *spec,
		     const struct list_clock *clock, feed_bad_cb on_bad, void *ctx, struct list_load *r);
/*
 * The same from a file read a part at a time (feed_file_open, its times
 * stated when it was opened; now: what has run out is left out): at most
 * max_lines lines a call; 1 while there are more, 0 at its end, -1 once
 * the version fails.
 */
int lists_stage_lines(struct lists *ls, struct matcher *m, struct feed_file *ff, size_t max_lines, uint64_t now,
		      feed_bad_cb on_bad, void *ctx, struct list_load *r);
int lists_stage_done(struct lists *ls, struct matcher *m, int i, bool guarded, struct list_load *r);
/*
 * The staged version becomes list i's, in one step (r gets what was added
 * and removed). Whether either version had times to live: an entry in
 * both may have another now, which changes nothing the matcher logs.
 */
bool lists_take(struct lists *ls, struct matcher *m, int i, uint64_t now, struct list_load *r);
/* The staged version dropped whole, refused for why: list i keeps its previous one. */
void lists_unstage(struct lists *ls, struct matcher *m, int i, struct list_load *r, const char *why);


/*
 * The labels an alert on entry (kind, key) held by holders carries: of each
 * list that holds it, the entry's own labels there, else the list's; the
 * most severe of them (the lower slot on a tie). NULL if no list holds it.
 */
const struct list_state *lists_labelling(const struct lists *ls, uint32_t holders, enum entry_kind kind,
					 const uint8_t *key, size_t len, struct entry_labels *out);

/* The entries each list holds ([slot]); one pass over every entry. */
void lists_count(const struct lists *ls, const struct matcher *m, uint64_t counts[LISTS_SLOTS]);

#endif
