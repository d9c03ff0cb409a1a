/* xdp_parse.h - a frame's addresses as bloomd's XDP program and its benchmark's peers read them. */
/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef BLOOMD_XDP_PARSE_H
#define BLOOMD_XDP_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

/* VLAN tags read, at most: a frame with more is not parsed (passed on, and counted). */
#define XDP_VLAN_TAGS_MAX 8
#define XDP_ETH_P_QINQ_OLD 0x9100 /* the tag of QinQ before 802.1ad, as packet.c reads it too */

static __always_inline int xdp_vlan_tag(__u16 proto)
{
	return proto == __builtin_bswap16(ETH_P_8021Q) || proto == __builtin_bswap16(ETH_P_8021AD) ||
	       proto == __builtin_bswap16(XDP_ETH_P_QINQ_OLD);
}

/*
 * Ethernet, up to XDP_VLAN_TAGS_MAX VLAN tags (802.1Q, 802.1ad, 0x9100),
 * then IPv4 or IPv6: the source and destination addresses into addr
 * (left-aligned, the rest untouched) and their length (4 or 16) into *alen:
 * 1. 0 for a frame of another protocol; -1 for one that cannot be read to
 * its addresses (cut short, or more tags than that).
 */
static __always_inline int xdp_parse_addresses(struct xdp_md *ctx, __u8 addr[2][16], __u32 *alen)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u64 off = sizeof(*eth);

	if ((void *)(eth + 1) > end)
		return -1;
	__u16 proto = eth->h_proto;
	for (int i = 0; i < XDP_VLAN_TAGS_MAX && xdp_vlan_tag(proto); i++) {
		__u16 *tag = data + off;
		if ((void *)(tag + 2) > end)
			return -1;
		proto = tag[1];
		off += 4;
	}
	if (xdp_vlan_tag(proto))
		return -1;
	if (proto == __builtin_bswap16(ETH_P_IP)) {
		struct iphdr *ip = data + off;
		if ((void *)(ip + 1) > end)
			return -1;
		*alen = 4;
		__builtin_memcpy(addr[0], &ip->saddr, 4);
		__builtin_memcpy(addr[1], &ip->daddr, 4);
		return 1;
	}
	if (proto == __builtin_bswap16(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data + off;
		if ((void *)(ip6 + 1) > end)
			return -1;
		*alen = 16;
		__builtin_memcpy(addr[0], &ip6->saddr, 16);
		__builtin_memcpy(addr[1], &ip6->daddr, 16);
		return 1;
	}
	return 0;
}

#endif
