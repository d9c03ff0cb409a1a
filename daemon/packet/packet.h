/* packet.h - bounds-checked, zero-copy parsing of captured packets down to L4. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_PACKET_H
#define BLOOMD_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * packet_parse reads a captured frame (caplen bytes of a wirelen-byte packet)
 * through a bounds-checked reader (the commonest frame after one check of its
 * lengths); it never casts packet bytes to structs and never reads past
 * caplen. It fills a packet_view with pointers into the frame:
 *
 *   link header ─► [VLAN tags]* ─► IPv4 | IPv6 (+ extension headers, capped)
 *                                     └─► TCP | UDP | other ─► payload
 *
 * Addresses are known whenever the IP header parsed; ports only where an L4
 * header was present and complete (the first fragment). The payload is the
 * TCP/UDP payload, or the IP payload for other protocols and for later
 * fragments, cut to what was captured and to what the IP length says.
 * A problem stops the walk and is counted by reason; what was parsed before
 * it stays valid.
 */

/* Link types, by their LINKTYPE_/DLT_ numbers (pcap-linktype(7)). */
enum packet_link {
	PACKET_LINK_NULL = 0,      /* BSD loopback, host byte order AF */
	PACKET_LINK_EN10MB = 1,    /* Ethernet */
	PACKET_LINK_RAW = 12,      /* DLT_RAW as libpcap reports it on Linux */
	PACKET_LINK_RAW_101 = 101, /* LINKTYPE_RAW in files */
	PACKET_LINK_LOOP = 108,    /* OpenBSD loopback, network byte order AF */
	PACKET_LINK_LINUX_SLL = 113,
	PACKET_LINK_IPV4 = 228,
	PACKET_LINK_IPV6 = 229,
	PACKET_LINK_LINUX_SLL2 = 276,
};

enum packet_status {
	PACKET_OK = 0,
	PACKET_UNKNOWN_LINK,    /* link type not supported */
	PACKET_TRUNC_LINK,      /* captured bytes end inside the link header or a VLAN tag */
	PACKET_NOT_IP,          /* ARP, STP, ...: nothing to check */
	PACKET_TRUNC_IP,        /* captured bytes end inside the IP header */
	PACKET_BAD_IP_VERSION,  /* version field disagrees with the link layer */
	PACKET_BAD_IP_HEADER,   /* IPv4 IHL < 5, or total length < header length (0: checked in full) */
	PACKET_TRUNC_EXT,       /* captured bytes end inside an IPv6 extension header */
	PACKET_TOO_MANY_EXT,    /* more IPv6 extension headers than we walk */
	PACKET_TRUNC_L4,        /* captured bytes end inside the TCP/UDP header */
	PACKET_BAD_L4_HEADER,   /* TCP data offset < 5, UDP length < 8 */
	PACKET_STATUS_COUNT
};

#define PACKET_MAX_VLANS 8
#define PACKET_MAX_EXT_HEADERS 8

enum packet_l4 {
	PACKET_L4_NONE = 0, /* no L4 header: later fragment, other protocol, or truncated */
	PACKET_L4_TCP,
	PACKET_L4_UDP,
};

struct packet_view {
	enum packet_status status;
	uint8_t family;            /* 0 (no IP), 4 or 6 */
	uint8_t ip_proto;          /* the upper-layer protocol number */
	bool fragment;             /* part of a fragmented datagram */
	bool later_fragment;       /* not the first fragment: no L4 header */
	enum packet_l4 l4;
	unsigned nvlans;
	uint16_t vlans[PACKET_MAX_VLANS]; /* outermost first */
	const uint8_t *link_src;   /* Ethernet: the frame's source address (6 bytes), else NULL */
	const uint8_t *src, *dst;  /* 4 or 16 bytes each, inside the frame */
	uint16_t sport, dport;
	const uint8_t *tcp;        /* the TCP header, options and all (l4 TCP), else NULL */
	const uint8_t *payload;    /* NULL when there is none */
	size_t payload_len;
};

/* Parse a frame of link type link; always fills view (status says how far it got). */
void packet_parse(int link, const uint8_t *frame, size_t caplen, size_t wirelen,
		  struct packet_view *view);

/*
 * The same by the general walk alone: packet_parse reads the commonest frame
 * (untagged Ethernet, IPv4 without options, TCP or UDP, whole) in one go,
 * and the tests check that both give the same view.
 */
void packet_parse_walk(int link, const uint8_t *frame, size_t caplen, size_t wirelen,
		       struct packet_view *view);

/*
 * v's protocol and its two ends (address, then port) in one order,
 * whichever way the packet goes, written to out (PACKET_FLOW_ENDS_MAX bytes
 * at most): their length. *src_first: whether v's source is the first end.
 */
#define PACKET_FLOW_ENDS_MAX (2 + 2 * (16 + 2))
size_t packet_flow_ends(const struct packet_view *v, uint8_t *out, bool *src_first);
/* Whether v's source (address, then port) is its flow's first end. */
bool packet_flow_src_first(const struct packet_view *v);

/* Whether bloomd can parse this link type. */
bool packet_link_supported(int link);

/* A short name for a status, for counters ("truncated_ip", ...). */
const char *packet_status_name(enum packet_status status);

/* "TCP", "UDP", "ICMP", "IPv6-ICMP", ... or the number as text (buf: 8 bytes at least). */
const char *packet_proto_name(uint8_t proto, char *buf, size_t len);

#endif
