/* service_state.h - the daemon's durable state: the state directory, the journal, snapshots, the local list's expiry. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_STATE_H
#define BLOOMD_SERVICE_STATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "service.h"
#include "state.h"
#include "state_dir.h"
#include "state_fork.h"
#include "state_ttl.h"

/* Control clients waiting for a reply (control_hold's ids). */
struct service_waiters {
	uint64_t *ids;
	size_t n;
};

/* Owned by: service_state_journal.c service_state.c service_change.c */
struct service_state {
	struct state_dir dir;       /* the state directory (fd -1: none) */
	struct state_journal *journal;   /* NULL: no durable state */
	uint64_t generation;
	bool journal_stale;        /* a snapshot went in but its journal did not: changes refused */
	time_t last_save;          /* when the last snapshot was tried (0: never) */
	bool last_save_ok;
	char store_error[512];     /* why the state cannot be written now ("": it can); changes refused */
	uint32_t lists_unkept;     /* lists whose version could not be kept (holder bits): store_error stays */
	time_t next_save_try;      /* with a list not kept: when housekeeping keeps it again */
	time_t next_snapshot_try;  /* after a snapshot failed: when housekeeping tries again */
	unsigned snapshot_failures; /* snapshots failed since the last one in */
	struct state_fork *saver;     /* the snapshot being written, in a child; NULL: none */
	struct service_waiters save_waiting, save_again; /* bloomctl save: for that one, for the next */
	bool restored;             /* the filters came from a snapshot */
	struct state_ttl *ttl;           /* the local list's expiry times */
};

/* service_state_journal.c: no state directory yet; the expiry times freed. */
void service_state_init(struct service *s);
void service_state_free(struct service *s);
/* Whether there is a journal (a [store] dir); the state directory, or NULL when there is none. */
bool service_journaled(const struct service *s);
struct state_dir *service_statedir(struct service *s);
/* Whether what was applied is as durable as the fsync policy makes local changes (the cluster's cursor waits for it). */
bool service_state_settled(const struct service *s);
/* The lists whose versions could not be kept (holder bits); list i's is kept now (changes are accepted once none is left). */
uint32_t service_lists_unkept(const struct service *s);
void service_list_kept(struct service *s, int i);
/* List i's version could not be kept (err): changes are refused until housekeeping keeps it. */
void service_list_unkept(struct service *s, int i, const char *err);
/* stats' "store", or NULL without a state directory; "ttl_entries". */
json_t *service_store_json(const struct service *s);
uint64_t service_ttl_entries(const struct service *s);

/* Journal a change (when there is a store); -1 with a message when it cannot be. */
int service_journal_op(struct service *s, enum state_op op, const struct entry *e, uint64_t expiry,
		       char *err, size_t errlen);

/* service_state.c: at stop, a final snapshot (when the journal has records since the last), the journal synced and closed. */
void service_state_close(struct service *s);
/* Housekeeping: a snapshot when the journal has grown past journal_max or cannot be trusted; lists kept again. */
void service_state_housekeeping(struct service *s);

/*
 * service_change.c: the entries whose time ran out by now (the local
 * list's deleted, the lists' released), a slice of them: whether more may
 * be left (to be called again at once, after the loop's other events).
 */
bool service_expire(struct service *s, uint64_t now);

#endif
