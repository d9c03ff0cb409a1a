/* communityid.c - the Community ID of a packet's flow (version 1), as Zeek and Suricata write it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "communityid.h"

#include <nettle/base64.h>
#include <nettle/sha1.h>
#include <stdbool.h>
#include <string.h>

#define PROTO_ICMP 1
#define PROTO_ICMP6 58
#define PROTO_SCTP 132

/*
 * ICMP types that have a counterpart (a request and its reply): their port
 * pair is (type, counterpart), ordered like ports; any other is one-way,
 * (type, code) as it is. The spec's table, router solicitation's included
 * one way only.
 */
static int icmp_counterpart(uint8_t proto, uint8_t type)
{
	static const uint8_t v4[][2] = { { 8, 0 }, { 0, 8 }, { 13, 14 }, { 14, 13 }, { 15, 16 },
					 { 16, 15 }, { 10, 9 }, { 17, 18 }, { 18, 17 } };
	static const uint8_t v6[][2] = { { 128, 129 }, { 129, 128 }, { 133, 134 }, { 134, 133 },
					 { 135, 136 }, { 136, 135 }, { 130, 131 }, { 131, 130 },
					 { 139, 140 }, { 140, 139 }, { 144, 145 }, { 145, 144 } };
	const uint8_t (*map)[2] = proto == PROTO_ICMP ? v4 : v6;
	size_t n = proto == PROTO_ICMP ? sizeof(v4) / sizeof(v4[0]) : sizeof(v6) / sizeof(v6[0]);

	for (size_t i = 0; i < n; i++)
		if (map[i][0] == type)
			return map[i][1];
	return -1;
}

/* (a, ap) before (b, bp): addresses first, then ports. */
static bool ordered(const uint8_t *a, const uint8_t *b, size_t alen, uint16_t ap, uint16_t bp)
{
	int c = memcmp(a, b, alen);

	return c < 0 || (c == 0 && ap < bp);
}

void communityid_v1(uint16_t seed, const uint8_t *saddr, const uint8_t *daddr, size_t alen,
		    uint8_t proto, int has_ports, uint16_t sport, uint16_t dport,
		    char out[COMMUNITYID_LEN])
{
	bool one_way = false;
	struct sha1_ctx sha;
	uint8_t digest[SHA1_DIGEST_SIZE], head[2] = { (uint8_t)(seed >> 8), (uint8_t)seed };
	uint8_t tail[2] = { proto, 0 };

	if (has_ports && (proto == PROTO_ICMP || proto == PROTO_ICMP6)) {
		int counterpart = icmp_counterpart(proto, (uint8_t)sport); /* sport: type, dport: code */
		if (counterpart >= 0)
			dport = (uint16_t)counterpart;
		else
			one_way = true;
	}
	if (!one_way && !ordered(saddr, daddr, alen, sport, dport)) {
		const uint8_t *a = saddr;
		uint16_t p = sport;
		saddr = daddr, daddr = a;
		sport = dport, dport = p;
	}
	sha1_init(&sha);
	sha1_update(&sha, sizeof(head), head);
	sha1_update(&sha, alen, saddr);
	sha1_update(&sha, alen, daddr);
	sha1_update(&sha, sizeof(tail), tail);
	if (has_ports) {
		uint8_t ports[4] = { (uint8_t)(sport >> 8), (uint8_t)sport, (uint8_t)(dport >> 8), (uint8_t)dport };
		sha1_update(&sha, sizeof(ports), ports);
	}
	sha1_digest(&sha, sizeof(digest), digest);
	out[0] = '1';
	out[1] = ':';
	base64_encode_raw((char *)out + 2, sizeof(digest), digest);
	out[2 + BASE64_ENCODE_RAW_LENGTH(SHA1_DIGEST_SIZE)] = '\0';
}

int communityid_of(const struct packet_view *v, uint16_t seed, char out[COMMUNITYID_LEN])
{
	size_t alen = v->family == 4 ? 4 : 16;
	const uint8_t *l4 = v->payload;
	uint16_t sport = v->sport, dport = v->dport;
	int has_ports = v->l4 != PACKET_L4_NONE;

	out[0] = '\0';
	if (v->family == 0)
		return -1;
	/* ICMP: type and code; SCTP: the ports its header starts with (a first fragment only). */
	if (!has_ports && !v->later_fragment && l4 &&
	    ((v->ip_proto == PROTO_ICMP && v->family == 4) || (v->ip_proto == PROTO_ICMP6 && v->family == 6)) &&
	    v->payload_len >= 2) {
		sport = l4[0];
		dport = l4[1];
		has_ports = 1;
	} else if (!has_ports && !v->later_fragment && l4 && v->ip_proto == PROTO_SCTP && v->payload_len >= 4) {
		sport = (uint16_t)(l4[0] << 8 | l4[1]);
		dport = (uint16_t)(l4[2] << 8 | l4[3]);
		has_ports = 1;
	}
	communityid_v1(seed, v->src, v->dst, alen, v->ip_proto, has_ports, sport, dport, out);
	return 0;
}
