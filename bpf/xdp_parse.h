/* xdp_parse.h - a frame's addresses as bloomd's XDP program and its benchmark's peers read them. */
#ifndef BLOOMD_XDP_PARSE_H
#define BLOOMD_XDP_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

/*
 * Ethernet, up to two VLAN tags (802.1Q or 802.1ad), then IPv4 or IPv6:
 * the source and destination addresses into addr (left-aligned, the rest
 * untouched) and their length (4 or 16) into *alen. 0 for anything else,
 * or a frame cut short.
 */
static __always_inline int xdp_parse_addresses(struct xdp_md *ctx, __u8 addr[2][16], __u32 *alen)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u64 off = sizeof(*eth);

	if ((void *)(eth + 1) > end)
		return 0;
	__u16 proto = eth->h_proto;
	for (int i = 0; i < 2; i++) {
		if (proto != __builtin_bswap16(ETH_P_8021Q) && proto != __builtin_bswap16(ETH_P_8021AD))
			break;
		__u16 *tag = data + off;
		if ((void *)(tag + 2) > end)
			return 0;
		proto = tag[1];
		off += 4;
	}
	if (proto == __builtin_bswap16(ETH_P_IP)) {
		struct iphdr *ip = data + off;
		if ((void *)(ip + 1) > end)
			return 0;
		*alen = 4;
		__builtin_memcpy(addr[0], &ip->saddr, 4);
		__builtin_memcpy(addr[1], &ip->daddr, 4);
		return 1;
	}
	if (proto == __builtin_bswap16(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data + off;
		if ((void *)(ip6 + 1) > end)
			return 0;
		*alen = 16;
		__builtin_memcpy(addr[0], &ip6->saddr, 16);
		__builtin_memcpy(addr[1], &ip6->daddr, 16);
		return 1;
	}
	return 0;
}

#endif
