/* packet.c - bounds-checked, zero-copy parsing of captured packets down to L4. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "packet.h"

#include <stdio.h>
#include <string.h>

/* A cursor over the captured bytes; every read checks what is left. */
struct reader {
	const uint8_t *p;
	size_t left;
};

static bool need(const struct reader *r, size_t n)
{
	return r->left >= n;
}

static uint16_t peek16(const struct reader *r, size_t at)
{
	return (uint16_t)(r->p[at] << 8 | r->p[at + 1]);
}

static void skip(struct reader *r, size_t n)
{
	r->p += n;
	r->left -= n;
}

enum {
	ETHERTYPE_IPV4 = 0x0800,
	ETHERTYPE_IPV6 = 0x86dd,
	ETHERTYPE_VLAN = 0x8100,
	ETHERTYPE_QINQ = 0x88a8,
	ETHERTYPE_QINQ_OLD = 0x9100,
	IPPROTO_HOPOPTS_ = 0,
	IPPROTO_ICMP_ = 1,
	IPPROTO_TCP_ = 6,
	IPPROTO_UDP_ = 17,
	IPPROTO_ROUTING_ = 43,
	IPPROTO_FRAGMENT_ = 44,
	IPPROTO_AH_ = 51,
	IPPROTO_ICMPV6_ = 58,
	IPPROTO_NONE_ = 59,
	IPPROTO_DSTOPTS_ = 60,
	IPPROTO_MH_ = 135,
};

static void parse_l4(struct reader *r, struct packet_view *v)
{
	/* Other protocols: what follows the IP headers is the payload. */
	v->payload = r->left ? r->p : NULL;
	v->payload_len = r->left;
	if (v->later_fragment || (v->ip_proto != IPPROTO_TCP_ && v->ip_proto != IPPROTO_UDP_))
		return;
	if (v->ip_proto == IPPROTO_TCP_) {
		if (!need(r, 20)) {
			v->status = PACKET_TRUNC_L4;
			return;
		}
		size_t hlen = (size_t)(r->p[12] >> 4) * 4;
		if (hlen < 20) {
			v->status = PACKET_BAD_L4_HEADER;
			return;
		}
		if (!need(r, hlen)) {
			v->status = PACKET_TRUNC_L4;
			return;
		}
		v->sport = peek16(r, 0);
		v->dport = peek16(r, 2);
		v->l4 = PACKET_L4_TCP;
		v->tcp = r->p;
		skip(r, hlen);
	} else {
		if (!need(r, 8)) {
			v->status = PACKET_TRUNC_L4;
			return;
		}
		size_t ulen = peek16(r, 4);
		/* 0 is a jumbogram's UDP length; otherwise it bounds the payload. */
		if (ulen != 0 && ulen < 8) {
			v->status = PACKET_BAD_L4_HEADER;
			return;
		}
		v->sport = peek16(r, 0);
		v->dport = peek16(r, 2);
		v->l4 = PACKET_L4_UDP;
		skip(r, 8);
		if (ulen != 0 && ulen - 8 < r->left)
			r->left = ulen - 8;
	}
	v->payload = r->left ? r->p : NULL;
	v->payload_len = r->left;
}

static void parse_ipv4(struct reader *r, struct packet_view *v)
{
	if (!need(r, 20)) {
		v->status = PACKET_TRUNC_IP;
		return;
	}
	if (r->p[0] >> 4 != 4) {
		v->status = PACKET_BAD_IP_VERSION;
		return;
	}
	/* The fixed header is whole: its addresses are checked whatever follows. */
	size_t ihl = (size_t)(r->p[0] & 0x0f) * 4, total = peek16(r, 2);
	uint16_t frag = peek16(r, 6);
	v->family = 4;
	v->ip_proto = r->p[9];
	v->src = r->p + 12;
	v->dst = r->p + 16;
	v->fragment = (frag & 0x3fff) != 0; /* MF set or offset non-zero */
	v->later_fragment = (frag & 0x1fff) != 0;
	if (ihl < 20 || (total < ihl && total != 0)) {
		v->status = PACKET_BAD_IP_HEADER;
		return;
	}
	if (!need(r, ihl)) {
		v->status = PACKET_TRUNC_IP;
		return;
	}
	/*
	 * The datagram ends at the total length, or where the capture does. A
	 * total of 0 is what captures of segmentation-offloaded packets record:
	 * the capture bounds the datagram, and the packet is counted as malformed
	 * although every layer of it is checked.
	 */
	if (total != 0 && total < r->left)
		r->left = total;
	skip(r, ihl);
	parse_l4(r, v);
	if (total == 0 && v->status == PACKET_OK)
		v->status = PACKET_BAD_IP_HEADER;
}

static bool is_ext_header(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS_ || nh == IPPROTO_ROUTING_ || nh == IPPROTO_FRAGMENT_ ||
	       nh == IPPROTO_DSTOPTS_ || nh == IPPROTO_AH_ || nh == IPPROTO_MH_;
}

static void parse_ipv6(struct reader *r, struct packet_view *v)
{
	if (!need(r, 40)) {
		v->status = PACKET_TRUNC_IP;
		return;
	}
	if (r->p[0] >> 4 != 6) {
		v->status = PACKET_BAD_IP_VERSION;
		return;
	}
	size_t plen = peek16(r, 4);
	uint8_t nh = r->p[6];
	v->family = 6;
	v->src = r->p + 8;
	v->dst = r->p + 24;
	skip(r, 40);
	/* Payload length 0 is a jumbogram (its length is in a hop-by-hop option): use the capture. */
	if (plen != 0 && plen < r->left)
		r->left = plen;
	for (unsigned n = 0; is_ext_header(nh); n++) {
		if (n == PACKET_MAX_EXT_HEADERS) {
			v->status = PACKET_TOO_MANY_EXT;
			return;
		}
		if (!need(r, 8)) {
			v->status = PACKET_TRUNC_EXT;
			return;
		}
		size_t len;
		if (nh == IPPROTO_FRAGMENT_) {
			uint16_t off = peek16(r, 2);
			v->fragment = true;
			v->later_fragment |= (off & 0xfff8) != 0;
			len = 8;
		} else if (nh == IPPROTO_AH_) {
			len = ((size_t)r->p[1] + 2) * 4;
		} else {
			len = ((size_t)r->p[1] + 1) * 8;
		}
		if (!need(r, len)) {
			v->status = PACKET_TRUNC_EXT;
			return;
		}
		nh = r->p[0];
		skip(r, len);
	}
	v->ip_proto = nh;
	if (nh == IPPROTO_NONE_) {
		v->payload = NULL; /* "no next header": whatever follows is not a payload */
		return;
	}
	parse_l4(r, v);
}

static void parse_ip_by_version(struct reader *r, struct packet_view *v)
{
	if (!need(r, 1)) {
		v->status = PACKET_TRUNC_IP;
		return;
	}
	switch (r->p[0] >> 4) {
	case 4: parse_ipv4(r, v); break;
	case 6: parse_ipv6(r, v); break;
	default: v->status = PACKET_BAD_IP_VERSION;
	}
}

static void parse_ethertype(struct reader *r, uint16_t type, struct packet_view *v)
{
	if (type == ETHERTYPE_IPV4)
		parse_ipv4(r, v);
	else if (type == ETHERTYPE_IPV6)
		parse_ipv6(r, v);
	else
		v->status = PACKET_NOT_IP;
}

static void parse_ethernet(struct reader *r, struct packet_view *v)
{
	if (!need(r, 14)) {
		v->status = PACKET_TRUNC_LINK;
		return;
	}
	uint16_t type = peek16(r, 12);
	v->link_src = r->p + 6;
	skip(r, 14);
	/* Peel 802.1Q / 802.1ad tags, any number, recording the first few IDs. */
	while (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ || type == ETHERTYPE_QINQ_OLD) {
		if (!need(r, 4)) {
			v->status = PACKET_TRUNC_LINK;
			return;
		}
		if (v->nvlans < PACKET_MAX_VLANS)
			v->vlans[v->nvlans++] = peek16(r, 0) & 0x0fff;
		type = peek16(r, 2);
		skip(r, 4);
	}
	/* 802.3 length field: IP only behind an LLC/SNAP header. */
	if (type < 0x0600) {
		if (!need(r, 8)) {
			v->status = PACKET_TRUNC_LINK;
			return;
		}
		if (r->p[0] != 0xaa || r->p[1] != 0xaa || r->p[2] != 0x03) {
			v->status = PACKET_NOT_IP;
			return;
		}
		type = peek16(r, 6);
		skip(r, 8);
	}
	parse_ethertype(r, type, v);
}

/* Linux cooked capture (SLL, SLL2): a header of len bytes with the ethertype at type_at. */
static void parse_cooked(struct reader *r, size_t len, size_t type_at, struct packet_view *v)
{
	if (!need(r, len)) {
		v->status = PACKET_TRUNC_LINK;
		return;
	}
	uint16_t type = peek16(r, type_at);
	skip(r, len);
	parse_ethertype(r, type, v);
}

/* BSD loopback: a 4-byte address family in host (NULL) or network (LOOP) byte order. */
static void parse_loopback(struct reader *r, bool network_order, struct packet_view *v)
{
	if (!need(r, 4)) {
		v->status = PACKET_TRUNC_LINK;
		return;
	}
	uint32_t af;
	memcpy(&af, r->p, 4);
	if (network_order)
		af = __builtin_bswap32(af);
	/* A capture may come from a host of the other byte order: accept either. */
	if (af > 0xffff)
		af = __builtin_bswap32(af);
	skip(r, 4);
	if (af == 2)
		parse_ipv4(r, v);
	else if (af == 10 || af == 24 || af == 28 || af == 30) /* Linux, NetBSD, FreeBSD, macOS */
		parse_ipv6(r, v);
	else
		v->status = PACKET_NOT_IP;
}

bool packet_link_supported(int link)
{
	switch (link) {
	case PACKET_LINK_NULL: case PACKET_LINK_EN10MB: case PACKET_LINK_RAW:
	case PACKET_LINK_RAW_101: case PACKET_LINK_LOOP: case PACKET_LINK_LINUX_SLL:
	case PACKET_LINK_IPV4: case PACKET_LINK_IPV6: case PACKET_LINK_LINUX_SLL2:
		return true;
	default:
		return false;
	}
}

/*
 * The frame most traffic is: Ethernet without tags, IPv4 without options,
 * TCP or UDP, not a fragment, its lengths within what was captured. Read in
 * one go into the view the walk below gives it; anything else (such a frame
 * the walk would mark as bad included) is left to the walk: false.
 */
static bool parse_common(const uint8_t *f, size_t len, struct packet_view *v)
{
	if (len < 14 + 20 + 8 || (f[12] << 8 | f[13]) != ETHERTYPE_IPV4 || f[14] != 0x45)
		return false;
	const uint8_t *ip = f + 14, *l4 = ip + 20;
	size_t total = (size_t)(ip[2] << 8 | ip[3]), hlen, left;
	uint8_t proto = ip[9];

	if ((ip[6] & 0x3f) || ip[7] || total > len - 14 || total < 20 + 8)
		return false; /* a fragment; a datagram cut short, or shorter than its headers */
	left = total - 20;
	if (proto == IPPROTO_UDP_) {
		size_t ulen = (size_t)(l4[4] << 8 | l4[5]);
		if (ulen < 8) /* 0: a jumbogram's */
			return false;
		hlen = 8;
		if (ulen < left)
			left = ulen;
	} else if (proto == IPPROTO_TCP_) {
		if (left < 20 || (hlen = (size_t)(l4[12] >> 4) * 4) < 20 || hlen > left)
			return false;
	} else {
		return false;
	}
	*v = (struct packet_view){
		.family = 4, .ip_proto = proto, .l4 = proto == IPPROTO_TCP_ ? PACKET_L4_TCP : PACKET_L4_UDP,
		.link_src = f + 6, .src = ip + 12, .dst = ip + 16, .sport = (uint16_t)(l4[0] << 8 | l4[1]),
		.dport = (uint16_t)(l4[2] << 8 | l4[3]), .tcp = proto == IPPROTO_TCP_ ? l4 : NULL,
		.payload = left > hlen ? l4 + hlen : NULL,
		.payload_len = left - hlen,
	};
	return true;
}

void packet_parse(int link, const uint8_t *frame, size_t caplen, size_t wirelen,
		  struct packet_view *v)
{
	size_t len = caplen < wirelen || wirelen == 0 ? caplen : wirelen;

	if (link != PACKET_LINK_EN10MB || !parse_common(frame, len, v))
		packet_parse_walk(link, frame, caplen, wirelen, v);
}

void packet_parse_walk(int link, const uint8_t *frame, size_t caplen, size_t wirelen,
		       struct packet_view *v)
{
	struct reader r = { frame, caplen < wirelen || wirelen == 0 ? caplen : wirelen };

	memset(v, 0, sizeof(*v));
	switch (link) {
	case PACKET_LINK_EN10MB:
		parse_ethernet(&r, v);
		break;
	case PACKET_LINK_LINUX_SLL:
		parse_cooked(&r, 16, 14, v);
		break;
	case PACKET_LINK_LINUX_SLL2:
		parse_cooked(&r, 20, 0, v);
		break;
	case PACKET_LINK_RAW:
	case PACKET_LINK_RAW_101:
		parse_ip_by_version(&r, v);
		break;
	case PACKET_LINK_IPV4:
		parse_ipv4(&r, v);
		break;
	case PACKET_LINK_IPV6:
		parse_ipv6(&r, v);
		break;
	case PACKET_LINK_NULL:
	case PACKET_LINK_LOOP:
		parse_loopback(&r, link == PACKET_LINK_LOOP, v);
		break;
	default:
		v->status = PACKET_UNKNOWN_LINK;
	}
}

bool packet_flow_src_first(const struct packet_view *v)
{
	if (v->family == 4) { /* as numbers: the bytes' order, without a call to memcmp */
		uint32_t src = (uint32_t)v->src[0] << 24 | (uint32_t)v->src[1] << 16 | (uint32_t)v->src[2] << 8 | v->src[3];
		uint32_t dst = (uint32_t)v->dst[0] << 24 | (uint32_t)v->dst[1] << 16 | (uint32_t)v->dst[2] << 8 | v->dst[3];
		return src != dst ? src < dst : v->sport <= v->dport;
	}
	int by_address = memcmp(v->src, v->dst, 16);
	return by_address ? by_address < 0 : v->sport <= v->dport;
}

/* An end (address, then port) at out: its bytes. Sizes the compiler knows, so that the copies are moves. */
static size_t put_end(uint8_t *out, const uint8_t *addr, uint16_t port, bool v4)
{
	size_t alen = v4 ? 4 : 16;

	if (v4)
		memcpy(out, addr, 4);
	else
		memcpy(out, addr, 16);
	out[alen] = (uint8_t)(port >> 8), out[alen + 1] = (uint8_t)port;
	return alen + 2;
}

size_t packet_flow_ends(const struct packet_view *v, uint8_t *out, bool *src_first)
{
	bool v4 = v->family == 4;
	size_t n = 2;

	*src_first = packet_flow_src_first(v);
	out[0] = v->ip_proto;
	out[1] = v4 ? 4 : 16;
	n += put_end(out + n, *src_first ? v->src : v->dst, *src_first ? v->sport : v->dport, v4);
	n += put_end(out + n, *src_first ? v->dst : v->src, *src_first ? v->dport : v->sport, v4);
	return n;
}

const char *packet_status_name(enum packet_status status)
{
	static const char *const names[PACKET_STATUS_COUNT] = {
		[PACKET_OK] = "ok",
		[PACKET_UNKNOWN_LINK] = "unknown_link",
		[PACKET_TRUNC_LINK] = "truncated_link",
		[PACKET_NOT_IP] = "not_ip",
		[PACKET_TRUNC_IP] = "truncated_ip",
		[PACKET_BAD_IP_VERSION] = "bad_ip_version",
		[PACKET_BAD_IP_HEADER] = "bad_ip_header",
		[PACKET_TRUNC_EXT] = "truncated_ext_header",
		[PACKET_TOO_MANY_EXT] = "too_many_ext_headers",
		[PACKET_TRUNC_L4] = "truncated_l4",
		[PACKET_BAD_L4_HEADER] = "bad_l4_header",
	};

	return status < PACKET_STATUS_COUNT ? names[status] : "unknown";
}

const char *packet_proto_name(uint8_t proto, char *buf, size_t len)
{
	switch (proto) {
	case IPPROTO_TCP_: return "TCP";
	case IPPROTO_UDP_: return "UDP";
	case IPPROTO_ICMP_: return "ICMP";
	case IPPROTO_ICMPV6_: return "IPv6-ICMP";
	case 47: return "GRE";
	case 132: return "SCTP";
	default:
		snprintf(buf, len, "%u", proto);
		return buf;
	}
}
