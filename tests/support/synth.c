/* synth.c - build synthetic frames (link, VLANs, IPv4/IPv6, extension headers, L4, payload). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "synth.h"

#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "packet.h"
#include "rng.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t ipv4_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static size_t link_header(const struct synth_packet *p, uint8_t *out)
{
	uint16_t type = p->family == 4 ? 0x0800 : 0x86dd;
	size_t n = 0;

	switch (p->link) {
	case PACKET_LINK_EN10MB:
		memcpy(out, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
		if (p->smac)
			out[11] = p->smac;
		n = 12;
		for (unsigned i = 0; i < p->nvlans; i++, n += 4) {
			put16(out + n, i == 0 && p->qinq ? 0x88a8 : 0x8100);
			put16(out + n + 2, p->vlans[i]);
		}
		if (p->llc) {
			put16(out + n, 0); /* the 802.3 length, fixed up by the caller */
			memcpy(out + n + 2, "\xaa\xaa\x03\x00\x00\x00", 6);
			put16(out + n + 8, type);
			return n + 10;
		}
		put16(out + n, type);
		return n + 2;
	case PACKET_LINK_LINUX_SLL:
		memset(out, 0, 16);
		put16(out + 2, 1);
		put16(out + 4, 6);
		put16(out + 14, type);
		return 16;
	case PACKET_LINK_LINUX_SLL2:
		memset(out, 0, 20);
		put16(out, type);
		out[11] = 6;
		return 20;
	case PACKET_LINK_NULL: {
		uint32_t af = p->family == 4 ? 2 : 30;
		memcpy(out, &af, 4); /* host byte order, as the link type says */
		return 4;
	}
	case PACKET_LINK_LOOP:
		memset(out, 0, 4);
		out[3] = p->family == 4 ? 2 : 30;
		return 4;
	default: /* raw IP */
		return 0;
	}
}

static size_t l4_header(const struct synth_packet *p, uint8_t *out)
{
	if (p->proto == 6) {
		size_t hlen = p->tcp_wscale ? 24 : 20;
		memset(out, 0, hlen);
		put16(out, p->sport);
		put16(out + 2, p->dport);
		for (int i = 0; i < 4; i++) {
			out[4 + i] = (uint8_t)(p->tcp_seq >> (24 - 8 * i));
			out[8 + i] = (uint8_t)(p->tcp_ack >> (24 - 8 * i));
		}
		out[12] = (uint8_t)(hlen / 4 << 4);
		out[13] = p->tcp_flags ? p->tcp_flags : 0x18; /* PSH ACK */
		put16(out + 14, 65535);
		if (p->tcp_wscale) /* window scale (RFC 7323), then a NOP */
			out[20] = 3, out[21] = 3, out[22] = (uint8_t)(p->tcp_wscale - 1), out[23] = 1;
		return hlen;
	}
	if (p->proto == 17) {
		memset(out, 0, 8);
		put16(out, p->sport);
		put16(out + 2, p->dport);
		put16(out + 4, (uint16_t)(8 + p->payload_len));
		return 8;
	}
	if (p->proto == 1 || p->proto == 58) {
		memset(out, 0, 8);
		out[0] = p->proto == 1 ? 8 : 128; /* echo request */
		return 8;
	}
	return 0;
}

static uint8_t ext_number(enum synth_ext e)
{
	return e == SYNTH_EXT_HBH ? 0 : e == SYNTH_EXT_DST ? 60 : e == SYNTH_EXT_RT ? 43 : 44;
}

size_t synth_build(const struct synth_packet *p, uint8_t *out)
{
	size_t ip_hlen = p->family == 4 ? 20 + p->ip_options : 40 + 8 * (size_t)p->next;
	size_t l4_max = 20, n = link_header(p, out), ip = n;

	if (n + ip_hlen + l4_max + p->payload_len > SYNTH_MAX_FRAME)
		return 0;
	n += ip_hlen;
	/* Later fragments carry no L4 header. */
	bool later = p->frag_offset != 0 || p->ext_frag_offset != 0;
	size_t l4 = later ? 0 : l4_header(p, out + n);
	n += l4;
	memcpy(out + n, p->payload, p->payload_len);
	n += p->payload_len;
	if (p->family == 4) {
		uint8_t *h = out + ip;
		memset(h, 0, ip_hlen);
		h[0] = (uint8_t)(0x40 | ip_hlen / 4);
		put16(h + 2, p->set_ip_length ? p->ip_length : (uint16_t)(n - ip));
		put16(h + 4, 0x1234);
		put16(h + 6, (uint16_t)((p->more_fragments ? 0x2000 : 0) | p->frag_offset / 8));
		h[8] = 64;
		h[9] = p->proto;
		memcpy(h + 12, p->src, 4);
		memcpy(h + 16, p->dst, 4);
		memset(h + 20, 1, p->ip_options); /* NOPs */
		put16(h + 10, ipv4_checksum(h, ip_hlen));
	} else {
		uint8_t *h = out + ip;
		memset(h, 0, ip_hlen);
		h[0] = 0x60;
		put16(h + 4, p->set_ip_length ? p->ip_length : (uint16_t)(n - ip - 40));
		h[6] = p->next ? ext_number(p->ext[0]) : p->proto;
		h[7] = 64;
		memcpy(h + 8, p->src, 16);
		memcpy(h + 24, p->dst, 16);
		for (unsigned i = 0; i < p->next; i++) {
			uint8_t *e = h + 40 + 8 * i;
			e[0] = i + 1 < p->next ? ext_number(p->ext[i + 1]) : p->proto;
			if (p->ext[i] == SYNTH_EXT_FRAG)
				put16(e + 2, (uint16_t)((p->ext_frag_offset & 0xfff8) | p->ext_frag_more));
			else if (p->ext[i] == SYNTH_EXT_HBH || p->ext[i] == SYNTH_EXT_DST)
				e[2] = 1, e[3] = 4; /* a PadN option filling the header */
		}
	}
	if (p->link == PACKET_LINK_EN10MB && p->llc)
		put16(out + 12 + 4 * p->nvlans, (uint16_t)(n - 14 - 4 * p->nvlans));
	return n;
}

static void random_v4(struct rng *r, uint8_t *a, bool to)
{
	uint32_t v = (uint32_t)rng_next(r);

	a[0] = to ? 198 : 10;
	a[1] = to ? (uint8_t)(18 + (v >> 31)) : (uint8_t)(v >> 16);
	a[2] = (uint8_t)(v >> 8);
	a[3] = (uint8_t)v;
}

/* A listed source: in 11.0.0.0/8, where random traffic (from 10.0.0.0/8) never goes. */
static void listed_v4(struct rng *r, uint8_t *a)
{
	uint32_t v = (uint32_t)rng_next(r);

	a[0] = 11;
	a[1] = (uint8_t)(v >> 16);
	a[2] = (uint8_t)(v >> 8);
	a[3] = (uint8_t)v;
}

/*
 * The listed (source, destination) pairs: entries / 2 of them, each an addr and
 * a pair entry. Only the packets planted with a listed pair match.
 */
static int write_list(const struct synth_random *o, struct rng *r, uint8_t (*listed)[8],
		      uint64_t nlisted, char *err, size_t errlen)
{
	FILE *list = o->list ? fopen(o->list, "w") : NULL;

	if (o->list && list == NULL) {
		error_set(err, errlen, "cannot write %s", o->list);
		return -1;
	}
	for (uint64_t i = 0; i < o->entries; i++) {
		char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
		uint8_t *pair = listed[i / 2 % nlisted];
		if (i % 2 == 0) {
			listed_v4(r, pair);
			random_v4(r, pair + 4, true);
		}
		inet_ntop(AF_INET, pair, a, sizeof(a));
		inet_ntop(AF_INET, pair + 4, b, sizeof(b));
		if (list && i % 2 == 0)
			fprintf(list, "addr %s\n", a);
		else if (list)
			fprintf(list, "pair %s %s\n", a, b);
	}
	if (list)
		fclose(list);
	return 0;
}

#define SYNTH_OPEN_CONNS 4096

/* One connection of synth_random's tcp traffic: its ends and each side's next sequence number. */
struct synth_conn {
	uint8_t client[4], server[4];
	uint16_t sport;
	uint32_t next[2];
};

/*
 * Segment step (0 to 7) of connection c into p: a new connection at 0 (a
 * listed pair's one time in a thousand), the SYN; 1 the SYN-ACK, 2 the ACK,
 * then data, client and server in turn.
 */
static void tcp_segment(struct synth_conn *c, unsigned step, struct rng *r, uint8_t (*listed)[8], uint64_t nlisted,
			size_t payload, struct synth_packet *p)
{
	bool from_server = step == 1 || (step > 2 && step % 2 == 0);
	size_t len = step > 2 ? payload : 0;

	if (step == 0) {
		if (nlisted && rng_below(r, 1000) == 0) {
			const uint8_t *pair = listed[rng_below(r, nlisted)];
			memcpy(c->client, pair, 4);
			memcpy(c->server, pair + 4, 4);
		} else {
			random_v4(r, c->client, false);
			random_v4(r, c->server, true);
		}
		c->sport = (uint16_t)(1024 + rng_below(r, 60000));
		c->next[0] = (uint32_t)rng_next(r);
		c->next[1] = (uint32_t)rng_next(r);
	}
	memcpy(p->src, from_server ? c->server : c->client, 4);
	memcpy(p->dst, from_server ? c->client : c->server, 4);
	p->proto = 6;
	p->sport = from_server ? 80 : c->sport;
	p->dport = from_server ? c->sport : 80;
	p->smac = from_server ? 2 : 1; /* each side's packets from its own side of the link */
	p->tcp_flags = step == 0 ? 0x02 : step == 1 ? 0x12 : step == 2 ? 0x10 : 0x18;
	p->tcp_seq = c->next[from_server];
	p->tcp_ack = step == 0 ? 0 : c->next[!from_server];
	p->payload_len = len;
	c->next[from_server] += (uint32_t)len + (step < 2);
}

int synth_random_capture(const char *pcap_path, const struct synth_random *o, char *err,
			 size_t errlen)
{
	static uint8_t payload[1500], frame[SYNTH_MAX_FRAME];
	struct synth_packet p = { .link = PACKET_LINK_EN10MB, .family = 4, .proto = 17,
				  .sport = 40000, .dport = 53, .payload = payload,
				  .payload_len = o->payload > sizeof(payload) ? sizeof(payload) : o->payload };
	uint64_t nlisted = o->entries / 2 ? o->entries / 2 : 1;
	uint8_t (*listed)[8] = calloc(nlisted, sizeof(*listed));
	pcap_t *dead = pcap_open_dead(PACKET_LINK_EN10MB, 65535);
	pcap_dumper_t *dumper = dead ? pcap_dump_open(dead, pcap_path) : NULL;
	struct synth_conn *conns = NULL;
	struct rng r;
	int rc = -1;

	rng_seed(&r, o->seed);
	if (listed == NULL || dumper == NULL) {
		error_set(err, errlen, "cannot write %s", pcap_path);
		goto done;
	}
	if (write_list(o, &r, listed, nlisted, err, errlen) < 0)
		goto done;
	for (unsigned i = 0; i < p.payload_len; i++)
		payload[i] = (uint8_t)rng_next(&r);
	size_t payload_len = p.payload_len;
	if (o->tcp && (conns = calloc(SYNTH_OPEN_CONNS, sizeof(*conns))) == NULL)
		goto done;
	for (uint64_t i = 0; i < o->packets; i++) {
		struct pcap_pkthdr h = { .ts = { .tv_sec = 1767225600 + (time_t)(i / 1000000),
						 .tv_usec = (suseconds_t)(i % 1000000) } };
		if (o->tcp) {
			tcp_segment(&conns[i % SYNTH_OPEN_CONNS], (unsigned)(i / SYNTH_OPEN_CONNS % 8), &r, listed,
				    o->entries ? nlisted : 0, payload_len, &p);
		} else if (o->entries && rng_below(&r, 1000) == 0) {
			const uint8_t *pair = listed[rng_below(&r, nlisted)];
			memcpy(p.src, pair, 4);
			memcpy(p.dst, pair + 4, 4);
		} else {
			random_v4(&r, p.src, false);
			random_v4(&r, p.dst, true);
		}
		h.len = h.caplen = (bpf_u_int32)synth_build(&p, frame);
		pcap_dump((u_char *)dumper, &h, frame);
	}
	rc = 0;
done:
	if (dumper)
		pcap_dump_close(dumper);
	if (dead)
		pcap_close(dead);
	free(listed);
	free(conns);
	return rc;
}
