/* capture.h - libpcap sources (live interfaces and pcap files) inside the libevent loop. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CAPTURE_H
#define BLOOMD_CAPTURE_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "frame.h"

/*
 * Live: a non-blocking pcap handle whose selectable fd is a persistent read
 * event, plus the timer pcap_get_required_select_timeout asks for; each
 * wake-up dispatches at most CAPTURE_BATCH packets.
 * File: a file cannot be polled, so an event made active by hand dispatches
 * CAPTURE_BATCH packets and re-activates itself until the end of the file;
 * the loop serves its other events (signals, control clients) in between.
 * Either way the packets go on in batches (capture_callbacks.batch_max).
 */

#define CAPTURE_BATCH 256

struct capture;


/* count packets, in order (their frames valid during the call). */
typedef void (*capture_packets_cb)(void *ctx, struct capture *cap, const struct capture_packet *p, size_t count);
/* A source ended: error is NULL at the end of a file, else what went wrong. */
typedef void (*capture_done_cb)(void *ctx, struct capture *cap, const char *error);
/* After each batch (flush outputs). */
typedef void (*capture_batch_cb)(void *ctx, struct capture *cap);

struct capture_callbacks {
	capture_packets_cb packets;
	capture_batch_cb batch;
	capture_done_cb done;
	void *ctx;
	/*
	 * Packets handed on at once, at most PACKET_BATCH_MAX: libpcap reuses a
	 * packet's bytes once its callback returns, so each is copied out until
	 * the batch is full or the dispatch ends. 0 or 1: each in place, alone.
	 */
	unsigned batch_max;
};

struct capture_live_options {
	const char *interface;
	unsigned snaplen;
	bool promisc;
	uint64_t buffer_size;      /* 0: libpcap's default */
	const char *bpf;           /* NULL: everything */
	/* Non-zero: join this PACKET_FANOUT group (by flow hash), sharing the traffic with its other members. */
	unsigned fanout_group;
};

/* NULL with a message (libpcap's own words) when the file cannot be opened or filtered. */
struct capture *capture_open_file(struct event_base *base, const char *path, const char *bpf,
				  const struct capture_callbacks *cb, char *err, size_t errlen);
/* The same from a file open for reading, which it takes over (closed on error too); name names it. */
struct capture *capture_open_fd(struct event_base *base, int fd, const char *name, const char *bpf,
				const struct capture_callbacks *cb, char *err, size_t errlen);
struct capture *capture_open_live(struct event_base *base, const struct capture_live_options *o,
				  const struct capture_callbacks *cb, char *err, size_t errlen);
void capture_free(struct capture *cap);

/* Whether bpf compiles (for Ethernet; NULL or "" does): 0, or -1 with libpcap's words. */
int capture_check_bpf(const char *bpf, unsigned snaplen, char *err, size_t errlen);

const char *capture_name(const struct capture *cap);
bool capture_is_live(const struct capture *cap);
int capture_link(const struct capture *cap);
/* libpcap's name for the link type ("EN10MB"), or "unknown". */
const char *capture_link_name(const struct capture *cap);
uint64_t capture_packets(const struct capture *cap);

/* Kernel counters of a live source; -1 for a file or on error. */
int capture_stats(struct capture *cap, uint64_t *received, uint64_t *dropped,
		  uint64_t *if_dropped);

#endif
