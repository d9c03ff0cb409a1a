/* handshake.h - which TCP connections this sensor saw open whole: a packet's sender proven, or why not. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_HANDSHAKE_H
#define BLOOMD_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "packet.h"

/*
 * Anyone can forge a datagram's source address; nobody off the path can
 * complete a TCP handshake in its name. The tracker follows each TCP
 * connection's handshake as the sensor sees it: the client's SYN (its
 * initial sequence number), the server's SYN-ACK acknowledging exactly that
 * number, the client's ACK acknowledging exactly the server's. From then on
 * both ends are proven, for the segments that fit the connection's sequence
 * windows (each side's next sequence number as seen, give or take the
 * window its peer advertised, and an acknowledgement of no more than the
 * peer has sent): a blind forger has to guess both numbers. A second
 * SYN-ACK with another sequence number (a forger answering for the server)
 * marks the connection conflicting, never proven. A SYN-ACK that came from
 * the link neighbour the SYN came from (Ethernet's source address) is one
 * sender writing both ways: a forger outside, naming two hosts inside, puts
 * both on the outside link while the real answer stays inside; never
 * proven either (one_sided). An in-window RST ends a connection.
 *
 * The table is bounded (capacity connections, in probe windows of
 * HANDSHAKE_PROBE slots). A new SYN takes a free or idle slot, else the
 * oldest half-open one in its window (a SYN flood pushes out half-open
 * handshakes, never proven ones); with none, it is refused and counted,
 * and its connection's packets say flow_table_full. Nothing is ever proven
 * by an eviction: a slot taken anew starts at the SYN. Each worker keeps its
 * own table (the fan-out keeps a connection's both ways on one worker).
 */
struct handshakes;

/* How long the daemon's tables keep a proven connection that has gone quiet (idle TCP sessions last). */
#define HANDSHAKE_IDLE_SECONDS 3600

/* What is known of a packet's sender. */
enum sender_proof {
	SENDER_VERIFIED = 0,     /* TCP, a handshake seen whole, the segment within its windows */
	SENDER_UDP,              /* a datagram: nothing proves its source */
	SENDER_ICMP,
	SENDER_OTHER,            /* another protocol, a later fragment, no IP: no handshake */
	SENDER_NO_HANDSHAKE,     /* TCP, no completed handshake seen for its connection */
	SENDER_OUT_OF_WINDOW,    /* TCP, a proven connection, this segment outside its windows */
	SENDER_CONFLICT,         /* TCP, two different answers to one SYN: one was forged */
	SENDER_TABLE_FULL,       /* TCP, its connection not tracked: the table was full */
	SENDER_NOT_TRACKED,      /* tracking off, or a packet the tracker did not see (an XDP drop) */
	SENDER_ONE_SIDED,        /* TCP, the SYN-ACK came from the SYN's link neighbour: one writer both ways */
	SENDER_PROOF_COUNT
};

/* "verified", "udp", "icmp", "other", "no_handshake", "out_of_window", "conflict", "flow_table_full", "not_tracked", "one_sided". */
const char *sender_proof_name(enum sender_proof proof);

struct handshakes_stats {
	uint64_t opened;         /* SYNs that took a slot */
	uint64_t verified;       /* handshakes seen whole */
	uint64_t wrong_ack;      /* SYN-ACKs or final ACKs acknowledging another number: not proof */
	uint64_t conflicts;      /* second, different SYN-ACKs */
	uint64_t one_sided;      /* SYN-ACKs from the SYN's own link neighbour */
	uint64_t out_of_window;  /* segments of proven connections outside their windows (RSTs too) */
	uint64_t resets;         /* in-window RSTs that ended a connection */
	uint64_t evicted;        /* half-open handshakes pushed out by a new SYN */
	uint64_t refused;        /* SYNs with no slot: the table full of proven connections */
	uint64_t tracked;        /* connections held now */
	uint64_t capacity, bytes;
};

/*
 * A table of capacity connections (rounded up to a power of two), idle ones
 * forgotten after idle_seconds, counting into *st (the caller's; its
 * capacity and bytes add this table's until handshakes_free, so that
 * several may count into one); NULL without memory.
 */
struct handshakes *handshakes_new(size_t capacity, unsigned idle_seconds, struct handshakes_stats *st);
void handshakes_free(struct handshakes *h);
/* Every connection forgotten (a replay starts from none): nothing is proven until seen anew. */
void handshakes_clear(struct handshakes *h);

/* The slot v's connection would use, asked of memory ahead (a batch hashes all its packets first): its key. */
uint64_t handshakes_prefetch(const struct handshakes *h, const struct packet_view *v);

/*
 * Packet v at now (packet time), in capture order: the connection's state
 * moved on, and what it proves of v's sender. key: handshakes_prefetch's
 * for v (0: worked out here). h NULL (tracking off): what v's protocol
 * says, SENDER_NOT_TRACKED for TCP.
 */
enum sender_proof handshakes_see(struct handshakes *h, const struct packet_view *v, uint64_t key, time_t now);

#endif
