/* synth.h - build synthetic frames (link, VLANs, IPv4/IPv6, extension headers, L4, payload). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SYNTH_H
#define BLOOMD_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYNTH_MAX_FRAME 65600
#define SYNTH_MAX_VLANS 8
#define SYNTH_MAX_EXT 10

enum synth_ext { SYNTH_EXT_HBH, SYNTH_EXT_DST, SYNTH_EXT_RT, SYNTH_EXT_FRAG };

struct synth_packet {
	int link;                   /* a PACKET_LINK_ value */
	unsigned nvlans;
	uint16_t vlans[SYNTH_MAX_VLANS];
	bool qinq;                  /* outer tag 802.1ad (0x88a8) */
	bool llc;                   /* 802.3 length + LLC/SNAP instead of Ethernet II */
	uint8_t smac;               /* Ethernet: the source address's last byte (0: 1, 02:00:00:00:00:01) */
	int family;                 /* 4 or 6 */
	uint8_t src[16], dst[16];
	uint8_t proto;              /* 6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6, or any */
	uint16_t sport, dport;
	unsigned ip_options;        /* IPv4 option bytes (a multiple of 4) */
	bool set_ip_length;         /* write ip_length as the IPv4 total (IPv6 payload) length */
	uint16_t ip_length;
	uint16_t frag_offset;       /* bytes, a multiple of 8 */
	bool more_fragments;
	unsigned next;              /* IPv6 extension headers, in order */
	enum synth_ext ext[SYNTH_MAX_EXT];
	uint16_t ext_frag_offset;   /* for a SYNTH_EXT_FRAG header */
	bool ext_frag_more;
	const uint8_t *payload;
	size_t payload_len;
	/* TCP: flags (0: PSH ACK), sequence and acknowledgement numbers, and a window scale option if wscale > 0 (shift wscale - 1) */
	uint8_t tcp_flags, tcp_wscale;
	uint32_t tcp_seq, tcp_ack;
};

/* Write the frame into out (SYNTH_MAX_FRAME bytes); returns its length, or 0 if it does not fit. */
size_t synth_build(const struct synth_packet *p, uint8_t *out);

/*
 * Benchmark traffic: packets small UDP/IPv4 packets (payload bytes each)
 * from 10/8 to 198.18/15, written to pcap_path; if list is set, entries addr
 * and pair entries written there, their sources from 11/8, which the traffic
 * does not use: only the one packet in a thousand planted with a listed pair
 * matches. Deterministic for a seed. With tcp, each connection is eight
 * segments (its handshake, then data from either side, each within its
 * window), 4,096 connections interleaved.
 */
struct synth_random {
	uint64_t packets, entries, seed;
	unsigned payload;
	const char *list;
	bool tcp;                   /* TCP connections instead: SYN, SYN-ACK, ACK, then data both ways, 4,096 open at once */
};

int synth_random_capture(const char *pcap_path, const struct synth_random *o, char *err,
			 size_t errlen);

#endif
