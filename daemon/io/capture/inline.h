/* inline.h - packets from netfilter queues (NFQUEUE), judged in the event loop: accepted or dropped. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_INLINE_H
#define BLOOMD_INLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "stats.h"

/*
 * The queues first..last are bound on one netlink socket (libnetfilter_queue),
 * read in the loop as a read event: every message waiting is taken at once
 * (up to PACKET_BATCH_MAX), its packets judged by the callback batch_max at
 * a time (copied out of the socket's buffer meanwhile) or one by one, and
 * given their verdicts in the order they came. A drop's verdict is sent at
 * once; the accepts wait for the end of the read, where one verdict per
 * queue accepts every packet up to the last ID accepted (packets the socket
 * lost, below it, go with them: fail-open). The kernel sends the IP
 * packet (raw IP: link type PACKET_LINK_RAW), copied up to snaplen bytes.
 *
 * fail_open sets NFQA_CFG_F_FAIL_OPEN: a packet that finds the queue full is
 * accepted by the kernel instead of dropped. With the rule's `bypass`, a
 * queue nobody listens to (bloomd stopped) lets packets through too; without
 * both, a slow or stopped bloomd drops traffic (fail-closed).
 */
struct inline_queue;
struct event_base;

struct inline_options {
	unsigned first, last;      /* queue numbers */
	bool fail_open;
	unsigned maxlen;           /* packets a queue holds in the kernel; 0: 65,536 fail-open, else the kernel's */
	unsigned snaplen;
	uint32_t reject_mark;
	unsigned batch_max;        /* packets judged at once, at most PACKET_BATCH_MAX; 0 or 1: each as it is read */
};

/*
 * Judge count packets, in order: verdicts[i] gets packet i's (their frames
 * are valid during the call). A rejected one goes back to the start of its hook
 * (NF_REPEAT) carrying reject_mark, for the ruleset's rule ahead of the
 * queue rule (`meta mark 0xb10c reject`) to reject: a packet comes back
 * with that mark only if no such rule took it, and is then dropped and
 * counted (reject_unruled), never queued round again.
 */
typedef void (*inline_packets_cb)(void *ctx, const struct capture_packet *p, size_t count, enum verdict *verdicts);
/* After each batch (flush outputs). */
typedef void (*inline_batch_cb)(void *ctx);

/* NULL with a message (no CAP_NET_ADMIN, a queue bound by another process, ...). */
struct inline_queue *inline_open(struct event_base *base, const struct inline_options *o, inline_packets_cb packets,
				 inline_batch_cb batch, void *ctx, char *err, size_t errlen);
void inline_close(struct inline_queue *q);

struct inline_stats {
	uint64_t packets, accepted, dropped, rejected;
	uint64_t reject_unruled;   /* came back marked: no rule rejected them (dropped instead) */
	uint64_t verdict_errors;   /* verdicts the kernel did not take */
	uint64_t lost;             /* messages the socket lost (ENOBUFS): their packets went as fail_open says */
	uint64_t unjudged;         /* packets the kernel let through without a verdict (gaps in the IDs) */
	unsigned largest_batch;    /* the most packets judged at once */
	uint64_t queue_dropped;    /* the kernel's: the queue was full */
	uint64_t user_dropped;     /* the kernel's: the netlink socket was full */
	uint32_t verdict_ns_p50, verdict_ns_p99; /* from reading a packet to its verdict, the last 1024 */
	struct stats_histogram verdict_seconds;  /* the same, every packet since start */
};

void inline_stats(const struct inline_queue *q, struct inline_stats *out);

/* "0" or "0-3": 0, or -1 (last < first, or past 65535). */
int inline_parse_queues(const char *text, unsigned *first, unsigned *last);

#endif
