/* setaction.h - addresses that matched, added to an nftables set with a timeout: the kernel drops the rest. */
#ifndef BLOOMD_SETACTION_H
#define BLOOMD_SETACTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * Through libnftables: "add element FAMILY TABLE SET { ADDRESS timeout Ns }".
 * An address added is not sent again until its timeout has run (a fixed
 * table of recent ones, keyed), and at most rate additions a second go out
 * (a token bucket): an attack from many addresses is not a flood of
 * netlink calls. The set must exist, of type ipv4_addr (or ipv6_addr for
 * set6) with flags timeout; it is checked at start.
 */
struct set_action;

struct set_action_options {
	const char *set4, *set6;   /* "inet bloomd blocked"; NULL: none for that family */
	unsigned timeout;          /* seconds an address stays */
	unsigned rate;             /* additions a second at most */
};

struct set_action_stats {
	uint64_t added, repeated, rate_limited, errors;
};

/* NULL with a message (no such set, no CAP_NET_ADMIN). */
struct set_action *set_action_open(const struct set_action_options *o, char *err, size_t errlen);
void set_action_close(struct set_action *a);

/* Block addr (4 or 16 bytes, family 4 or 6): 1 added, 0 already there or over the rate, -1 refused (err). */
int set_action_block(struct set_action *a, const uint8_t *addr, int family, time_t now, char *err, size_t errlen);

void set_action_stats(const struct set_action *a, struct set_action_stats *out);

#endif
