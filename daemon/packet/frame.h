/* frame.h - a packet as a source hands it to the engine, and what becomes of it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_FRAME_H
#define BLOOMD_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * The packet layer's input: capture (libpcap), inline (netfilter queues) and
 * the workers fill one and hand it on; nothing here knows where it came from.
 */
struct capture_packet {
	int link;                  /* DLT_ of the source */
	const uint8_t *frame;
	size_t caplen, wirelen;
	struct timespec ts;
	uint64_t index;            /* 1-based, per source */
};

/*
 * The most packets a source hands on at once. The engine hashes all their
 * addresses first and queries the filter for all of them together, so the
 * blocks of later packets are fetched while earlier ones are tested.
 */
#define PACKET_BATCH_MAX 64

/*
 * Copies of the frames of a batch, kept past their source's buffer, which
 * it reuses for the next packet (libpcap's, the netfilter queue's).
 */
struct frame_copies {
	uint8_t *bytes;
	size_t used, size;
};

/*
 * A copy of frame's len bytes, or NULL: they do not fit beside the copies
 * kept (hand the batch on, clear them, and copy again), or no memory.
 */
const uint8_t *frame_copy(struct frame_copies *fc, const uint8_t *frame, size_t len);
/* The batch is handed on: its copies' room is free again. */
static inline void frame_copies_clear(struct frame_copies *fc)
{
	fc->used = 0;
}
void frame_copies_free(struct frame_copies *fc);

/*
 * What becomes of a judged packet (inline): accepted; dropped; or rejected,
 * dropped with word to its sender (a TCP reset or an ICMP unreachable, which
 * the ruleset sends: inline.h).
 */
enum verdict { VERDICT_ACCEPT, VERDICT_DROP, VERDICT_REJECT };

#endif
