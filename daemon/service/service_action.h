/* service_action.h - [action]: the nftables sets bloomd blocks addresses in, and with manage its own table mirroring the lists. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_ACTION_H
#define BLOOMD_SERVICE_ACTION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "action.h"
#include "log.h"
#include "service.h"

/* Owned by: service_action.c service_action_mirror.c */
struct service_action {
	struct action *sets;   /* [action] set, or NULL */
	struct event *table_watch; /* manage: the kernel's announcements of changes to the table */
	struct event *settler;     /* manage: the next slice of the lists' elements' way to the kernel */
	uint32_t rereading;        /* manage: the lists whose entries are read again (service_action_mirror_taken) */
	struct matcher_cursor reread_at; /* and where that walk is */
	bool mirror_stale;         /* the nft mirror missed a change (no memory): every entry looked at again */
	bool protected_said;       /* a listed address that is protected was logged (once) */
	uint64_t filled_after;     /* service_followers_all_asked when the mirror was filled whole (at open) */
	struct log_limit errors_logged;
};

/*
 * service_action.c: the sets opened at load (service_action_open) wired to
 * the engine and the loop (-1 logged); checked once a second (gone sets put
 * back); their stats ("set_action", "set_dropped"); closed.
 */
int service_action_start(struct service *s);
void service_action_check(struct service *s);
void service_action_stats(const struct service *s, json_t *o);
void service_action_stop(struct service *s);

/*
 * [action]: the sets opened (manage: the table made with the lists'
 * elements in), as soon as the lists are loaded, before the filters are
 * built: the kernel drops what the lists hold while bloomd is still
 * starting. -1 logged.
 */
int service_action_open(struct service *s);
void service_action_mirror_sync(struct service *s);
int service_action_mirror_start(struct service *s);
void service_action_mirror_stop(struct service *s);
/*
 * Whether the table follows the lists (manage); whether it missed a change
 * and must be looked at whole; whether the lists' elements are still on
 * their way to the kernel (a settle goes on in slices of the loop).
 */
bool service_action_mirror_on(const struct service *s);
bool service_action_mirror_behind(const struct service *s);
bool service_action_mirror_syncing(const struct service *s);
/* The next slice of the settle asked for, if one is due (the table made again, another's change answered). */
void service_action_mirror_settle(struct service *s);
/* e told to the table now, with its holders and expiry as they are (an expiry changed without a change of holders). */
void service_action_mirror_entry(struct service *s, const struct entry *e);
/*
 * List i took a version; timed: either version had times to live. Then the
 * list's entries are read again, a slice at a time, each told to the table
 * with the time it has now (one kept by the version may have another).
 */
void service_action_mirror_taken(struct service *s, int i, bool timed);
/* Whether a dropping list holds addr in the table (addr or a net holding it): the lists' names in names, if so. */
bool service_action_mirror_listing(const struct service *s, const uint8_t *addr, int family, char *names, size_t size);

#endif
