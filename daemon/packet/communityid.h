/* communityid.h - the Community ID of a packet's flow (version 1), as Zeek and Suricata write it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_COMMUNITYID_H
#define BLOOMD_COMMUNITYID_H

#include <stddef.h>
#include <stdint.h>

#include "packet.h"

/*
 * "1:" and the base64 of the SHA-1 of: the seed (16 bits), the flow's two
 * addresses and ports in a canonical order (so both directions of a flow
 * give the same ID), the protocol and a zero byte. ICMP and ICMPv6 use type
 * and code as ports, and type and counterpart type for request/reply types
 * (Corelight's community-id-spec, whose baseline vectors the tests check).
 * SCTP's ports are read from its header; other protocols have none.
 */
#define COMMUNITYID_LEN 31 /* "1:" + 28 base64 characters + NUL */

/* The ID of v's flow into out; -1 (out empty) when v has no IP addresses. */
int communityid_of(const struct packet_view *v, uint16_t seed, char out[COMMUNITYID_LEN]);

/* The same from the parts (addresses of alen bytes, 4 or 16; has_ports 0 for none). */
void communityid_v1(uint16_t seed, const uint8_t *saddr, const uint8_t *daddr, size_t alen,
		    uint8_t proto, int has_ports, uint16_t sport, uint16_t dport,
		    char out[COMMUNITYID_LEN]);

#endif
