/* setaction.h - addresses that matched, added to an nftables set with a timeout: the kernel drops the rest. */
#ifndef BLOOMD_SETACTION_H
#define BLOOMD_SETACTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Through libnftables: "add element FAMILY TABLE SET { ADDRESS timeout Ns }".
 *
 * Every address in the set is remembered with when its element runs out
 * (an exact table, no collisions): an address is not sent again while its
 * element is there, and the addresses can be listed (set_action_foreach) and
 * lifted (set_action_unblock). At most rate additions go out in any window
 * of one second (a sliding window of the last rate additions' times), so
 * the table holds at most rate x timeout addresses: 64 bytes each, at most
 * (100 x 3600 x 64 bytes, 23 MB, with the defaults).
 *
 * With a table of its own (manage), bloomd makes the table, both sets
 * (flags timeout) and the chains that drop what they hold, takes over the
 * one a bloomd before it left (its addresses, with the time they have left),
 * and leaves it at close unless told to remove it; set_action_check, called every second, puts back what a
 * flush, a table deleted or a firewall reload took away, every address with
 * the time it has left. Without, the sets are the operator's: they must
 * exist, of type ipv4_addr (or ipv6_addr for set6) with flags timeout.
 */
struct set_action;

struct set_action_options {
	const char *set4, *set6;   /* "inet bloomd blocked"; NULL: none for that family (manage: unused) */
	unsigned timeout;          /* seconds an address stays */
	unsigned rate;             /* additions in any one second at most */
	const char *table;         /* manage: the inet table bloomd owns ("bloomd"); NULL: the operator's sets */
	int priority;              /* manage: its chains' priority */
	bool remove_at_stop;       /* manage: set_action_close deletes the table (else it stays, and drops) */
	const char *protect;       /* "NET,ADDR,..." never blocked, beside the host's addresses and loopback; NULL: none */
};

struct set_action_stats {
	uint64_t added, repeated, rate_limited, errors;
	uint64_t unblocked;        /* lifted by set_action_unblock */
	uint64_t restored;         /* times the table or its addresses were put back (manage) */
	uint64_t taken_over;       /* addresses found in the table at start (a bloomd before left it) */
	uint64_t protected;        /* additions passed over: the host's own address, loopback, [action] protect */
	uint64_t blocked;          /* addresses in the set now, as bloomd knows them */
};

/* NULL with a message (no such set, no CAP_NET_ADMIN; manage: the table could not be made). */
struct set_action *set_action_open(const struct set_action_options *o, char *err, size_t errlen);
/*
 * manage: the table stays, with its sets and their elements, so the kernel
 * goes on dropping while bloomd is stopped and the next start takes it over
 * (fail-closed); with remove_at_stop it goes (fail-open).
 */
void set_action_close(struct set_action *a);

/*
 * Block addr (4 or 16 bytes, family 4 or 6): 1 added, 0 already there, over
 * the rate or protected (the host's own addresses, read from its interfaces
 * at open and every tenth check, loopback and [action] protect: never
 * blocked, counted; err says so the first time an address is passed over),
 * -1 refused (err).
 */
int set_action_block(struct set_action *a, const uint8_t *addr, int family, char *err, size_t errlen);

/* Lift a block: 1 lifted, 0 not blocked, -1 nft refused (err; bloomd forgets it all the same). */
int set_action_unblock(struct set_action *a, const uint8_t *addr, int family, char *err, size_t errlen);

/*
 * manage: whether the table, its sets and chains are there (the table made
 * again if not), and (every tenth call) whether the sets hold every address
 * they should, by address: only the missing ones go back, each with the time
 * it has left, and the others keep their elements as they are. What looks
 * gone is looked at a second time before anything is put back. 1 if
 * something was put back, 0 if all was there, -1 (err) if it could not be.
 * Without manage, only forgets the addresses whose time ran out.
 */
int set_action_check(struct set_action *a, char *err, size_t errlen);

/* Each address blocked now, with the seconds it has left; stops at cb's first non-zero. */
typedef int (*set_action_cb)(void *ctx, const uint8_t *addr, int family, unsigned seconds_left);
int set_action_foreach(const struct set_action *a, set_action_cb cb, void *ctx);

void set_action_stats(const struct set_action *a, struct set_action_stats *out);

#endif
