/* action.h - bloomd's nftables table: the addresses that matched, and the lists mirrored; the kernel drops. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ACTION_H
#define BLOOMD_ACTION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct action_mirror;

/*
 * Through libnftables: "add element FAMILY TABLE SET { ADDRESS timeout Ns }".
 *
 * Every address in the set is remembered with when its element runs out
 * (an exact table, no collisions): an address is not sent again while its
 * element is there, and the addresses can be listed (action_foreach) and
 * lifted (action_unblock). At most rate additions go out in any window
 * of one second (a sliding window of the last rate additions' times), so
 * the table holds at most rate x timeout addresses: 64 bytes each, at most
 * (100 x 3600 x 64 bytes, 23 MB, with the defaults).
 *
 * With a table of its own (manage), bloomd makes the table: the sets of the
 * addresses blocked on a match (blocked4, blocked6), of the addresses never
 * blocked (protected4, protected6: the host's own, loopback, [action]
 * protect), the lists' addresses and nets (action_mirror.h: listed, passed,
 * exempt) and the chains that act on them. It takes over the table a bloomd
 * before it left (its blocked addresses, with the time they have left) and
 * makes it anew in one transaction with the lists' elements in, so nothing
 * is let through meanwhile; at close it leaves it unless told to remove it.
 * Later changes to the lists' elements reach it in slices (action_settle).
 * What others change in it is heard from the kernel (action_monitor.h) and
 * answered at once (action_watched); action_check, every second,
 * compares what the table does with what was made. A repair makes the
 * table's shape again in one transaction, and the lists' elements follow
 * in slices: it never holds the caller for the lists' size.
 * Without manage, the sets are the operator's: they must exist, of type
 * ipv4_addr (or ipv6_addr for set6) with flags timeout.
 */
struct action;

struct action_options {
	const char *set4, *set6;   /* "inet bloomd blocked"; NULL: none for that family (manage: unused) */
	unsigned timeout;          /* seconds an address stays */
	unsigned rate;             /* additions in any one second at most */
	const char *table;         /* manage: the inet table bloomd owns ("bloomd"); NULL: the operator's sets */
	int priority;              /* manage: its chains' priority */
	bool remove_at_stop;       /* manage: action_close deletes the table (else it stays, and drops) */
	const char *protect;       /* "NET,ADDR,..." never blocked, beside the host's addresses and loopback; NULL: none */
	bool protect_infrastructure; /* the host's resolvers, gateways and peers never blocked either (action_protect.h) */
	const char *peers;         /* "HOST,...": the peers (Redis, sentinels, feeds' hosts) for protect_infrastructure */
	/* manage: tells the mirror the lists' elements before the table is made (-1: no memory); NULL: none. */
	int (*fill)(void *ctx, struct action_mirror *m);
	void *fill_ctx;
};

struct action_stats {
	uint64_t added, repeated, rate_limited, errors;
	uint64_t unblocked;        /* lifted by action_unblock */
	uint64_t restored;         /* times what others changed in the table was undone (manage) */
	uint64_t lost;             /* manage: times the kernel's announcements of changes were lost (all told again) */
	uint64_t taken_over;       /* addresses found in the table at start (a bloomd before left it) */
	uint64_t protected;        /* additions passed over: the host's own address, loopback, [action] protect */
	uint64_t blocked;          /* addresses in the set now, as bloomd knows them */
	uint64_t listed, passed, exempt; /* manage: the lists' elements in the kernel's sets */
	uint64_t hidden;           /* manage: nets of a list that another of its nets holds (not in the kernel's set) */
	uint64_t neighbours;       /* manage: other processes' commits that left the table alone (not tampering) */
	uint64_t protected_listed; /* manage: listed addresses that are protected (a decision for a resolver): never dropped */
};

/*
 * NULL with a message (no such set, no CAP_NET_ADMIN; manage: the table
 * could not be made). manage: made, err is "" or what nft refused of the
 * lists' elements (a statement of them each, counted in errors).
 */
struct action *action_open(const struct action_options *o, char *err, size_t errlen);
/*
 * manage: the table stays, with its sets and their elements, so the kernel
 * goes on dropping while bloomd is stopped and the next start takes it over
 * (fail-closed); with remove_at_stop it goes (fail-open).
 */
void action_close(struct action *a);

/*
 * Block addr (4 or 16 bytes, family 4 or 6): 1 added, 0 already there, over
 * the rate or protected (the host's own addresses, read from its interfaces
 * at open and every tenth check, loopback and [action] protect: never
 * blocked, counted; err says so the first time an address is passed over),
 * -1 refused (err).
 */
int action_block(struct action *a, const uint8_t *addr, int family, char *err, size_t errlen);

/* Lift a block: 1 lifted, 0 not blocked, -1 nft refused (err; bloomd forgets it all the same). */
int action_unblock(struct action *a, const uint8_t *addr, int family, char *err, size_t errlen);

/*
 * manage: whether the table does what it did when made (its sets' types
 * and flags, its chains' hooks, priorities and policies, its rules'
 * expressions: a listing of it, compared), made again in one transaction
 * if not; and every tenth call the host's addresses read again, the
 * protected sets rewritten when they moved. 1 if the table was made again
 * (its lists' elements then follow by action_settle), 0 if all was
 * there, -1 (err). Without manage, only forgets the addresses
 * whose time ran out.
 */
int action_check(struct action *a, char *err, size_t errlen);

/* manage: the lists' elements (NULL without manage); what they tell it goes in at action_settle. */
struct action_mirror *action_lists_mirror(struct action *a);
/*
 * The mirror's changes, for a slice of the loop's time (10 ms) at most,
 * committed in transactions of a few thousand elements; one the kernel
 * refuses (its sets not as bloomd told them) makes the table again, its
 * lists' elements told again by the calls that follow. 1 if more calls
 * are needed, 0 when the kernel is in step, -1 (err).
 */
int action_settle(struct action *a, char *err, size_t errlen);
/* manage: whether the lists' elements are still on their way to the kernel (action_settle has more to do). */
bool action_syncing(const struct action *a);

/*
 * manage: the descriptor on which the kernel announces changes (-1 without
 * manage), and what to do when it is readable: another's change undone (a
 * blocked or protected element at once; the lists' elements told again by
 * the action_settle calls that follow: action_syncing), every
 * element told again when announcements were lost, the table made again
 * when its shape changed. 1 if something was undone, 0, or -1 (err).
 */
int action_watch_fd(const struct action *a);
int action_watched(struct action *a, char *err, size_t errlen);

/* Each address blocked now, with the seconds it has left; stops at cb's first non-zero. */
typedef int (*action_cb)(void *ctx, const uint8_t *addr, int family, unsigned seconds_left);
int action_foreach(const struct action *a, action_cb cb, void *ctx);

void action_stats(const struct action *a, struct action_stats *out);

/*
 * manage: what each set's drop rules dropped since the table was made (nft's
 * counters), by set: {"listed4": {"packets": N, "bytes": N}, ...}; {}
 * without manage or when the table cannot be listed. Caller frees.
 */
json_t *action_dropped(struct action *a);

#endif
