/* inline.c - packets from netfilter queues (NFQUEUE), judged in the event loop: accepted or dropped. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "inline.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "error.h"
#include "packet.h"
#include "stats.h"

#define MAX_QUEUES 64
#define BATCH PACKET_BATCH_MAX     /* messages read in one wake-up */
#define RECV_BUFFER (4u << 20)     /* the socket's, so that bursts wait there */
#define LATENCIES 1024
#define FAIL_OPEN_MAXLEN 65536     /* more than RECV_BUFFER holds */

/* A packet read, waiting for its verdict with the rest of its batch. */
struct held {
	struct nfq_q_handle *qh;
	uint32_t id;
	unsigned k;                /* its queue's index; nqueues: not one of ours */
	bool judged;               /* by the callback; else its verdict is known already */
	enum verdict verdict;
	struct timespec received;
};

struct inline_queue {
	struct nfq_handle *h;
	struct nfq_q_handle *qh[MAX_QUEUES];
	unsigned first, nqueues;
	uint32_t reject_mark;
	struct event *ev;
	inline_packets_cb packets;
	inline_batch_cb batch;
	unsigned batch_max;
	/* The batch: every packet read, in order; those the callback judges, and their copies. */
	struct held held[BATCH];
	unsigned nheld;
	struct capture_packet judging[BATCH];
	enum verdict verdicts[BATCH];
	unsigned njudging;
	struct frame_copies copies;
	void *ctx;
	char *buf;
	size_t buflen;
	uint64_t index;
	struct inline_stats st;
	struct timespec received;  /* of the message being handled */
	uint32_t latency_ns[LATENCIES];
	uint64_t nlatency;
	/* Accepts wait for the end of the batch: one verdict accepts every packet up to an ID. */
	uint32_t accept_upto[MAX_QUEUES];
	unsigned accepts[MAX_QUEUES];      /* packets waiting for that verdict, per queue */
	uint32_t last_id[MAX_QUEUES];      /* the last packet ID read, per queue (the kernel's start at 1) */
	struct timespec waiting[BATCH];    /* when each was read, for the latency */
	unsigned nwaiting;
};

int inline_parse_queues(const char *text, unsigned *first, unsigned *last)
{
	char *end;
	unsigned long a = strtoul(text, &end, 10), b = a;

	if (end == text)
		return -1;
	if (*end == '-') {
		const char *second = end + 1;
		b = strtoul(second, &end, 10);
		if (end == second)
			return -1;
	}
	if (*end != '\0' || b < a || b > 65535 || b - a >= MAX_QUEUES)
		return -1;
	*first = (unsigned)a;
	*last = (unsigned)b;
	return 0;
}

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)(b->tv_sec - a->tv_sec) * 1000000000u + (uint64_t)b->tv_nsec - (uint64_t)a->tv_nsec;
}

/* The verdict latency histogram's bounds, in seconds: 1 µs to 100 ms. */
static const double VERDICT_BOUNDS[] = { 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 1e-2, 1e-1 };
_Static_assert(sizeof(VERDICT_BOUNDS) / sizeof(VERDICT_BOUNDS[0]) <= STATS_BOUNDS_MAX, "the histogram holds them");

static void note_latency(struct inline_queue *q, const struct timespec *read, const struct timespec *done)
{
	uint64_t ns = ns_between(read, done);

	q->latency_ns[q->nlatency++ % LATENCIES] = (uint32_t)ns;
	stats_observe(&q->st.verdict_seconds, (double)ns / 1e9);
}

/* The accepts waiting, one batch verdict a queue ("every packet up to this ID"). */
static void flush_accepts(struct inline_queue *q)
{
	struct timespec done;

	for (unsigned k = 0; k < q->nqueues; k++) {
		if (q->accepts[k] == 0)
			continue;
		if (nfq_set_verdict_batch(q->qh[k], q->accept_upto[k], NF_ACCEPT) < 0)
			q->st.verdict_errors += q->accepts[k];
		else
			q->st.accepted += q->accepts[k];
		q->accepts[k] = 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &done);
	for (unsigned i = 0; i < q->nwaiting; i++)
		note_latency(q, &q->waiting[i], &done);
	q->nwaiting = 0;
}

/* A packet's verdict, sent (a drop or a reject) or left to the accepts' batch verdict. */
static void give_verdict(struct inline_queue *q, const struct held *h, enum verdict verdict)
{
	struct timespec done;

	if (verdict == VERDICT_ACCEPT) { /* its verdict goes with the batch's */
		if (h->k == q->nqueues || q->nwaiting == BATCH)
			flush_accepts(q);
		if (h->k < q->nqueues) {
			q->accept_upto[h->k] = h->id;
			q->accepts[h->k]++;
			q->waiting[q->nwaiting++] = h->received;
			return;
		}
	}
	/* A drop at once (a batch verdict would accept it); its ID is below the accepts that follow. */
	int rc = verdict == VERDICT_REJECT ? nfq_set_verdict2(h->qh, h->id, NF_REPEAT, q->reject_mark, 0, NULL)
					   : nfq_set_verdict(h->qh, h->id, verdict == VERDICT_DROP ? NF_DROP : NF_ACCEPT, 0, NULL);
	if (rc < 0)
		q->st.verdict_errors++;
	else if (verdict == VERDICT_DROP)
		q->st.dropped++;
	else if (verdict == VERDICT_REJECT)
		q->st.rejected++;
	else
		q->st.accepted++;
	clock_gettime(CLOCK_MONOTONIC, &done);
	note_latency(q, &h->received, &done);
}

/* The packets held judged together, and each given its verdict in the order they came. */
static void judge_held(struct inline_queue *q)
{
	unsigned j = 0;

	if (q->njudging > 0)
		q->packets(q->ctx, q->judging, q->njudging, q->verdicts);
	if (q->njudging > q->st.largest_batch)
		q->st.largest_batch = q->njudging;
	for (unsigned i = 0; i < q->nheld; i++) {
		const struct held *h = &q->held[i];
		give_verdict(q, h, h->judged ? q->verdicts[j++] : h->verdict);
	}
	q->nheld = q->njudging = 0;
	frame_copies_clear(&q->copies);
}

/* p to be judged with the batch, copied out of the socket's buffer; false: no copy can be had. */
static bool hold_for_judging(struct inline_queue *q, struct capture_packet p)
{
	const uint8_t *copy = frame_copy(&q->copies, p.frame, p.caplen);

	if (copy == NULL) {
		judge_held(q);
		if ((copy = frame_copy(&q->copies, p.frame, p.caplen)) == NULL)
			return false;
	}
	p.frame = copy;
	q->judging[q->njudging++] = p;
	return true;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data)
{
	struct inline_queue *q = data;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	unsigned char *payload;
	int len = nfq_get_payload(nfa, &payload);

	(void)msg;
	if (ph == NULL)
		return 0;
	struct held h = { .qh = qh, .id = ntohl(ph->packet_id), .verdict = VERDICT_ACCEPT, .received = q->received };
	while (h.k < q->nqueues && q->qh[h.k] != qh)
		h.k++;
	if (h.k < q->nqueues) { /* IDs the kernel gave that never reached us: accepted unjudged (fail-open) */
		q->st.unjudged += h.id - q->last_id[h.k] - 1u;
		q->last_id[h.k] = h.id;
	}
	q->st.packets++;
	if (q->reject_mark && nfq_get_nfmark(nfa) == q->reject_mark) {
		/* rejected already, and back: the ruleset has no rule rejecting the mark */
		h.verdict = VERDICT_DROP;
		q->st.reject_unruled++;
	} else if (len > 0) {
		struct capture_packet p = {
			.link = PACKET_LINK_RAW, .frame = payload, .caplen = (size_t)len, .wirelen = (size_t)len,
			.index = ++q->index,
		};
		clock_gettime(CLOCK_REALTIME, &p.ts);
		h.judged = true;
		if (q->batch_max <= 1 || !hold_for_judging(q, p)) {
			judge_held(q); /* those held first; then this one alone, as it lies in the socket's buffer */
			q->judging[q->njudging++] = p;
			q->held[q->nheld++] = h;
			judge_held(q);
			return 0;
		}
	}
	q->held[q->nheld++] = h;
	if (q->batch_max <= 1 || q->njudging >= q->batch_max || q->nheld == BATCH)
		judge_held(q);
	return 0;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct inline_queue *q = arg;

	(void)what;
	for (int i = 0; i < BATCH; i++) {
		ssize_t n = recv(fd, q->buf, q->buflen, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == ENOBUFS) { /* the kernel could not queue to us: those packets went per fail_open */
				q->st.lost++;
				continue;
			}
			break; /* EAGAIN: all read */
		}
		struct nlmsghdr *nlh = (struct nlmsghdr *)(void *)q->buf;
		if ((size_t)n >= NLMSG_LENGTH(sizeof(struct nlmsgerr)) && nlh->nlmsg_type == NLMSG_ERROR) {
			/* A verdict the kernel refused (EPERM without CAP_NET_ADMIN): its packet waits in the queue. */
			struct nlmsgerr *e = NLMSG_DATA(nlh);
			q->st.verdict_errors += e->error != 0;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &q->received);
		nfq_handle_packet(q->h, q->buf, (int)n);
	}
	judge_held(q);
	flush_accepts(q);
	if (q->batch)
		q->batch(q->ctx);
}

struct inline_queue *inline_open(struct event_base *base, const struct inline_options *o, inline_packets_cb packets,
				 inline_batch_cb batch, void *ctx, char *err, size_t errlen)
{
	struct inline_queue *q = calloc(1, sizeof(*q));
	if (q)
		q->st.verdict_seconds = (struct stats_histogram){ .bounds = VERDICT_BOUNDS,
								  .nbounds = sizeof(VERDICT_BOUNDS) / sizeof(VERDICT_BOUNDS[0]) };

	if (q == NULL || (q->buf = malloc(o->snaplen + 4096)) == NULL) {
		error_set(err, errlen, "out of memory");
		free(q);
		return NULL;
	}
	q->buflen = o->snaplen + 4096;
	q->packets = packets;
	q->batch = batch;
	q->batch_max = o->batch_max;
	q->ctx = ctx;
	q->first = o->first;
	q->reject_mark = o->reject_mark;
	if ((q->h = nfq_open()) == NULL) {
		error_set(err, errlen, "inline: cannot open netfilter queue's netlink socket: %s", strerror(errno));
		goto fail;
	}
	nfnl_rcvbufsiz(nfq_nfnlh(q->h), RECV_BUFFER);
	/*
	 * Fail-open, the kernel accepts a packet it cannot queue and counts it
	 * nowhere. When the socket is what is full, the packet has taken an ID
	 * first, and the gap shows it (unjudged); when the queue is, it has not.
	 * So by default the queue is made long enough for the socket to fill first.
	 */
	unsigned maxlen = o->maxlen ? o->maxlen : o->fail_open ? FAIL_OPEN_MAXLEN : 0;
	for (unsigned n = o->first; n <= o->last; n++, q->nqueues++) {
		struct nfq_q_handle *qh = nfq_create_queue(q->h, (uint16_t)n, on_packet, q);
		if (qh == NULL) {
			error_set(err, errlen, "inline: cannot bind netfilter queue %u: %s (bloomd needs CAP_NET_ADMIN, and no other program may hold the queue)",
				  n, strerror(errno));
			goto fail;
		}
		q->qh[q->nqueues] = qh;
		if (nfq_set_mode(qh, NFQNL_COPY_PACKET, o->snaplen) < 0 ||
		    (maxlen && nfq_set_queue_maxlen(qh, maxlen) < 0) ||
		    (o->fail_open && nfq_set_queue_flags(qh, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN) < 0)) {
			error_set(err, errlen, "inline: cannot set up netfilter queue %u: %s", n, strerror(errno));
			q->nqueues++;
			goto fail;
		}
	}
	q->ev = event_new(base, nfq_fd(q->h), EV_READ | EV_PERSIST, on_readable, q);
	if (q->ev == NULL || event_add(q->ev, NULL) < 0) {
		error_set(err, errlen, "inline: out of memory");
		goto fail;
	}
	return q;
fail:
	inline_close(q);
	return NULL;
}

void inline_close(struct inline_queue *q)
{
	if (q == NULL)
		return;
	if (q->ev)
		event_free(q->ev);
	for (unsigned i = 0; i < q->nqueues; i++)
		nfq_destroy_queue(q->qh[i]);
	if (q->h)
		nfq_close(q->h);
	frame_copies_free(&q->copies);
	free(q->buf);
	free(q);
}

/* The kernel's counters of our queues, from /proc/net/netfilter/nfnetlink_queue. */
static void kernel_counters(const struct inline_queue *q, struct inline_stats *out)
{
	FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "re");
	unsigned num, portid, total, mode, range, seq, one;
	unsigned long long qdropped, udropped;

	if (f == NULL)
		return;
	while (fscanf(f, "%u %u %u %u %u %llu %llu %u %u", &num, &portid, &total, &mode, &range, &qdropped,
		      &udropped, &seq, &one) == 9)
		if (num >= q->first && num < q->first + q->nqueues) {
			out->queue_dropped += qdropped;
			out->user_dropped += udropped;
		}
	fclose(f);
}

void inline_stats(const struct inline_queue *q, struct inline_stats *out)
{
	*out = q->st;
	out->queue_dropped = out->user_dropped = 0;
	kernel_counters(q, out);
	stats_percentiles(q->latency_ns, LATENCIES, q->nlatency, &out->verdict_ns_p50, &out->verdict_ns_p99);
}
