/* action_protect.h - the addresses never blocked: the host's own (read from its interfaces), loopback, and the operator's nets. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ACTION_PROTECT_H
#define BLOOMD_ACTION_PROTECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A set action ([action] set or manage) asks before it blocks: an address
 * the host holds, a loopback one or one in [action] protect is never put
 * into a drop set, so a listed net that holds the server's address never
 * cuts the server off. The host's addresses are read with getifaddrs(3) at
 * action_protect_new and again at each action_protect_read_host.
 *
 * With infrastructure, what the host needs to work is kept the same way,
 * whoever asks for its ban (a CrowdSec decision, a feed, a forged packet):
 * its resolvers (resolv.conf's nameservers), its default gateways (the
 * kernel's routes, /proc/net/route and ipv6_route), read again with its
 * addresses; and its peers (Redis, the sentinels, the feeds' and LAPI's
 * hosts), resolved once at action_protect_new.
 */
struct action_protect;
struct entry_cidr; /* entry.h */

struct action_protect_options {
	const char *list;          /* "NET,ADDR,..." ([action] protect) or NULL */
	bool infrastructure;       /* the resolvers, gateways and peers too */
	const char *peers;         /* "HOST,HOST,...": names or addresses, or NULL */
};

/* NULL with a message naming what in list is not an address or net (or no memory); a peer not resolved is left out. */
struct action_protect *action_protect_new(const struct action_protect_options *o, char *err, size_t errlen);
void action_protect_free(struct action_protect *p);

/* The host's addresses read anew (an interface added, an address changed): whether they changed. */
bool action_protect_read_host(struct action_protect *p);

/* The nets never blocked, *n of them (the configured, the peers, loopback, the host's): valid until the next read. */
const struct entry_cidr *action_protect_nets(const struct action_protect *p, size_t *n);

/* Whether addr (4 or 16 bytes, family 4 or 6) is one never to block. */
bool action_protect_holds(const struct action_protect *p, const uint8_t *addr, int family);

#endif
