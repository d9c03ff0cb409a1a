/* workers.c - packet sources on threads of their own, checked against the matcher published to them. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * liburcu's read side inline: no call per batch. Not under ThreadSanitizer,
 * which cannot follow liburcu's own barriers: there the library's calls,
 * which it does not instrument, do the same.
 */
#if !defined(__SANITIZE_THREAD__)
#define _LGPL_SOURCE
#endif
#include "workers.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#include "check.h"
#include "engine.h"
#include "error.h"
#include "log.h"
#include "packet.h"

/*
 * ThreadSanitizer does not see liburcu's barriers: it is told what a grace
 * period orders. A worker going offline releases what it read in its batch;
 * the loop, once synchronize_rcu has returned, acquires it from every worker
 * before it writes what they read. A worker still online is not covered, so
 * a write that skipped the grace period is still reported.
 */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define GRACE_RELEASE(w) __tsan_release(&(w)->online)
#define GRACE_ACQUIRE(w) __tsan_acquire(&(w)->online)
#else
#define GRACE_RELEASE(w) ((void)0)
#define GRACE_ACQUIRE(w) ((void)0)
#endif

#define RING_SLOTS 1024    /* matched packets a worker may have waiting for the loop */
#define TICK_MS 250        /* kernel counters copied out, and idle workers' own */

/* A matched packet in a ring: the match, then the frame and the keys it points into. */
struct handoff {
	struct worker_match m;
	uint8_t bytes[];
};

/* One producer (the worker), one consumer (the loop); head and tail only grow. */
struct ring {
	_Atomic size_t head, tail;
	struct handoff *slot[RING_SLOTS];
};

struct worker {
	struct workers *pool;
	pthread_t thread;
	bool started;
	struct event_base *base;
	int stop_fd;
	struct event *stop, *tick;
	struct capture *cap;
	struct inline_queue *queue;
	char source[40];

	/* the worker thread's alone */
	struct matcher_scratch *scratch;
	struct handshakes *handshakes; /* its connections' (the fan-out keeps both ways on one worker); NULL: off */
	const struct matcher *m;   /* the published matcher, while online */
	bool online, pushed;
	struct stats stats;
	uint64_t handoff_lost;
	struct packet_batch batch;
	struct matcher_found found[MATCHER_MAX_HITS]; /* the hits' entries, a packet at a time */

	struct ring ring;
	_Atomic bool failed;       /* its source stopped (error says why): the loop hears of it */
	char error[256];
	pthread_mutex_t lock;      /* of shared: the worker writes it once a batch, the loop reads it */
	struct workers_totals shared;
};

struct workers {
	const struct matcher *_Atomic current; /* published (release), read at a batch's start (acquire) */
	_Atomic uint32_t drop_holders, reject_holders, pass_holders, pass_packet_holders;
	bool inline_mode;
	struct event_base *loop;
	int wake_fd;               /* a worker's ring has matches */
	struct event *wake;
	workers_match_cb match;
	workers_batch_cb batch;
	workers_failed_cb failed;
	void *ctx;
	unsigned n;
	struct worker w[];
};

/* ---- in a worker's thread ---- */

static void go_online(struct worker *w)
{
	if (w->online)
		return;
	rcu_thread_online();
	w->m = atomic_load_explicit(&w->pool->current, memory_order_acquire);
	w->online = true;
}

static void copy_out(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->shared.stats = w->stats;
	for (int k = 0; k < MATCHER_KINDS; k++)
		w->shared.counters[k] = *matcher_scratch_counters(w->scratch, (enum entry_kind)k);
	w->shared.hits_dropped = matcher_scratch_hits_dropped(w->scratch);
	w->shared.handoff_lost = w->handoff_lost;
	pthread_mutex_unlock(&w->lock);
}

static void wake_loop(struct worker *w)
{
	uint64_t one = 1;

	if (write(w->pool->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the count is at its limit, so the loop is being woken anyway */
	}
}

/* The batch is done: no matcher is read until the next one, and the loop hears of any match. */
static void batch_end(struct worker *w)
{
	if (w->online) {
		w->m = NULL;
		GRACE_RELEASE(w);
		rcu_thread_offline();
		w->online = false;
	}
	copy_out(w);
	if (w->pushed) {
		wake_loop(w);
		w->pushed = false;
	}
}

/* Copy the packet and its hits' entries into the ring; false if it is full. */
static bool hand_off(struct worker *w, const struct capture_packet *p, enum verdict verdict, unsigned exempt,
		     enum sender_proof sender, size_t n)
{
	size_t head = atomic_load_explicit(&w->ring.head, memory_order_acquire);
	size_t tail = atomic_load_explicit(&w->ring.tail, memory_order_relaxed);
	size_t bytes = p->caplen;

	for (size_t i = 0; i < n; i++)
		bytes += w->found[i].len;
	BLOOMD_CHECK(tail - head <= RING_SLOTS); /* the loop never takes more than the worker gave */
	struct handoff *h = tail - head < RING_SLOTS ? malloc(sizeof(*h) + bytes) : NULL;
	if (h == NULL)
		return false;
	h->m = (struct worker_match){ .packet = *p, .source = w->source, .verdict = verdict, .exempt = exempt,
				      .sender = sender, .n = n };
	memcpy(h->bytes, p->frame, p->caplen);
	h->m.packet.frame = h->bytes;
	uint8_t *at = h->bytes + p->caplen;
	for (size_t i = 0; i < n; i++) {
		h->m.found[i] = w->found[i];
		memcpy(at, w->found[i].key, w->found[i].len);
		h->m.found[i].key = at;
		at += w->found[i].len;
	}
	w->ring.slot[tail % RING_SLOTS] = h;
	atomic_store_explicit(&w->ring.tail, tail + 1, memory_order_release);
	return true;
}

/* What the lists make of packet p, parsed as v, with its n hits; a match handed to the loop; its verdict. */
static enum verdict judge(struct worker *w, const struct capture_packet *p, const struct packet_view *v,
			  const struct matcher_hit *hits, size_t n, enum sender_proof sender)
{
	if (n == 0 || (n = matcher_found(w->m, hits, n, w->found)) == 0)
		return VERDICT_ACCEPT;
	uint32_t pass_holders = atomic_load_explicit(&w->pool->pass_holders, memory_order_relaxed);
	uint32_t held = engine_held(w->found, n), passing = held & pass_holders;
	unsigned exempt = 0;
	if (passing) {
		stats_passed(&w->stats, passing);
		n = engine_exempt(v, w->found, n, passing, pass_holders,
				  atomic_load_explicit(&w->pool->pass_packet_holders, memory_order_relaxed), &exempt);
		if (n == 0)
			return VERDICT_ACCEPT;
		held = engine_held(w->found, n);
	}
	enum verdict verdict = VERDICT_ACCEPT;
	uint32_t dropping = atomic_load_explicit(&w->pool->drop_holders, memory_order_relaxed) |
			    atomic_load_explicit(&w->pool->reject_holders, memory_order_relaxed);
	if (w->pool->inline_mode)
		verdict = engine_verdict(atomic_load_explicit(&w->pool->drop_holders, memory_order_relaxed),
					 atomic_load_explicit(&w->pool->reject_holders, memory_order_relaxed), held);
	stats_matched(&w->stats, held, verdict == VERDICT_ACCEPT ? 0 : held & dropping);
	if (hand_off(w, p, verdict, exempt, sender, n))
		w->pushed = true;
	else
		w->handoff_lost++;
	return verdict;
}

/* count packets parsed and checked against the published matcher at once, then judged in order. */
static void judge_batch(struct worker *w, const struct capture_packet *p, size_t count, enum verdict *verdicts)
{
	struct packet_batch *b = &w->batch;

	go_online(w);
	engine_check_batch(w->m, w->scratch, &w->stats, w->handshakes, p, count, b);
	for (size_t i = 0; i < count; i++) {
		enum verdict verdict = judge(w, &p[i], &b->views[i], b->hits[i], b->nhits[i],
					     (enum sender_proof)b->senders[i]);
		if (verdicts)
			verdicts[i] = verdict;
	}
}

static void on_captured(void *ctx, struct capture *cap, const struct capture_packet *p, size_t count)
{
	(void)cap;
	judge_batch(ctx, p, count, NULL);
}

static void on_capture_batch(void *ctx, struct capture *cap)
{
	struct worker *w = ctx;

	(void)cap;
	batch_end(w);
}

/* The capture stopped (the interface went away): the loop is told, as it would be of its own. */
static void on_capture_done(void *ctx, struct capture *cap, const char *error)
{
	struct worker *w = ctx;

	(void)cap;
	snprintf(w->error, sizeof(w->error), "%s", error ? error : "the capture ended");
	atomic_store_explicit(&w->failed, true, memory_order_release);
	wake_loop(w);
	event_base_loopbreak(w->base);
}

static void on_queued(void *ctx, const struct capture_packet *p, size_t count, enum verdict *verdicts)
{
	judge_batch(ctx, p, count, verdicts);
}

static void on_queued_batch(void *ctx)
{
	struct worker *w = ctx;

	batch_end(w);
}

/* The kernel's counters, every TICK_MS (reading them costs a syscall or a file). */
static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	struct workers_totals t = { 0 };

	(void)fd;
	(void)what;
	if (w->cap)
		capture_stats(w->cap, &t.received, &t.dropped, &t.if_dropped);
	if (w->queue)
		inline_stats(w->queue, &t.queues);
	pthread_mutex_lock(&w->lock);
	w->shared.received = t.received;
	w->shared.dropped = t.dropped;
	w->shared.if_dropped = t.if_dropped;
	w->shared.queues = t.queues;
	pthread_mutex_unlock(&w->lock);
	copy_out(w);
}

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	uint64_t count;

	(void)what;
	if (read(fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_error("%s: %s", w->source, strerror(errno));
	event_base_loopbreak(w->base);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	rcu_register_thread();
	rcu_thread_offline(); /* online only within a batch */
	event_base_dispatch(w->base);
	if (w->online)
		batch_end(w);
	rcu_unregister_thread();
	return NULL;
}

/* ---- in the loop's thread ---- */

/* Report every match waiting in the rings. */
static void drain(struct workers *ws)
{
	for (unsigned i = 0; i < ws->n; i++) {
		struct ring *r = &ws->w[i].ring;
		size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
		size_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		BLOOMD_CHECK(tail - head <= RING_SLOTS);
		for (; head != tail; head++) {
			struct handoff *h = r->slot[head % RING_SLOTS];
			ws->match(ws->ctx, &h->m);
			free(h);
			atomic_store_explicit(&r->head, head + 1, memory_order_release);
		}
	}
	if (ws->batch)
		ws->batch(ws->ctx);
	for (unsigned i = 0; i < ws->n; i++)
		if (atomic_exchange_explicit(&ws->w[i].failed, false, memory_order_acquire) && ws->failed)
			ws->failed(ws->ctx, ws->w[i].source, ws->w[i].error);
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
	uint64_t count;

	(void)what;
	if (read(fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_error("workers: %s", strerror(errno));
	drain(arg);
}

/* Worker i's share of the queues first..last: a contiguous part, the parts as even as can be. */
static struct inline_options queues_of(const struct workers_options *o, unsigned i)
{
	struct inline_options q = o->queues;
	unsigned total = o->queues.last - o->queues.first + 1;

	q.first = o->queues.first + i * total / o->count;
	q.last = o->queues.first + (i + 1) * total / o->count - 1;
	return q;
}

static int open_source(struct worker *w, const struct workers_options *o, unsigned i, char *err, size_t errlen)
{
	struct timeval tick = { 0, TICK_MS * 1000 };

	if (o->inline_mode) {
		struct inline_options q = queues_of(o, i);
		q.batch_max = engine_batch_max(o->batch);
		if (q.first == q.last)
			snprintf(w->source, sizeof(w->source), "nfqueue%u", q.first);
		else
			snprintf(w->source, sizeof(w->source), "nfqueue%u-%u", q.first, q.last);
		w->queue = inline_open(w->base, &q, on_queued, on_queued_batch, w, err, errlen);
		if (w->queue == NULL)
			return -1;
	} else {
		struct capture_callbacks cb = { on_captured, on_capture_batch, on_capture_done, w,
						engine_batch_max(o->batch) };
		snprintf(w->source, sizeof(w->source), "%s", o->live.interface);
		w->cap = capture_open_live(w->base, &o->live, &cb, err, errlen);
		if (w->cap == NULL)
			return -1;
	}
	w->stop = event_new(w->base, w->stop_fd, EV_READ | EV_PERSIST, stop_cb, w);
	w->tick = event_new(w->base, -1, EV_PERSIST, tick_cb, w);
	if (w->stop == NULL || w->tick == NULL || event_add(w->stop, NULL) < 0 || event_add(w->tick, &tick) < 0) {
		error_set(err, errlen, "workers: out of memory");
		return -1;
	}
	return 0;
}

static int worker_init(struct workers *ws, unsigned i, const struct workers_options *o, char *err, size_t errlen)
{
	struct worker *w = &ws->w[i];

	w->pool = ws;
	w->stop_fd = -1;
	pthread_mutex_init(&w->lock, NULL);
	if ((w->scratch = matcher_scratch_new()) == NULL || (w->base = event_base_new()) == NULL ||
	    (o->handshakes && (w->handshakes = handshakes_new(o->handshakes, o->handshake_idle,
							       &w->stats.handshakes)) == NULL) ||
	    (w->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		error_set(err, errlen, "workers: cannot set up worker %u: %s", i, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	return open_source(w, o, i, err, errlen);
}

static void worker_free(struct worker *w)
{
	if (w->stop)
		event_free(w->stop);
	if (w->tick)
		event_free(w->tick);
	capture_free(w->cap);
	inline_close(w->queue);
	if (w->base)
		event_base_free(w->base);
	if (w->stop_fd >= 0)
		close(w->stop_fd);
	matcher_scratch_free(w->scratch);
	handshakes_free(w->handshakes);
	pthread_mutex_destroy(&w->lock);
}

struct workers *workers_start(struct event_base *loop, const struct workers_options *o, const struct matcher *m,
			      const struct workers_callbacks *cb, char *err, size_t errlen)
{
	struct workers *ws = calloc(1, sizeof(*ws) + o->count * sizeof(ws->w[0]));

	if (ws == NULL) {
		error_set(err, errlen, "workers: out of memory");
		return NULL;
	}
	atomic_init(&ws->current, m);
	ws->inline_mode = o->inline_mode;
	ws->loop = loop;
	ws->match = cb->match;
	ws->batch = cb->batch;
	ws->failed = cb->failed;
	ws->ctx = cb->ctx;
	ws->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ws->wake = ws->wake_fd < 0 ? NULL : event_new(loop, ws->wake_fd, EV_READ | EV_PERSIST, wake_cb, ws);
	if (ws->wake == NULL || event_add(ws->wake, NULL) < 0) {
		error_set(err, errlen, "workers: cannot make the wake-up eventfd: %s", strerror(errno));
		workers_stop(ws);
		return NULL;
	}
	for (; ws->n < o->count; ws->n++)
		if (worker_init(ws, ws->n, o, err, errlen) < 0) {
			ws->n++; /* freed with the rest */
			workers_stop(ws);
			return NULL;
		}
	return ws;
}

int workers_run(struct workers *ws, char *err, size_t errlen)
{
	sigset_t all, before;
	int rc = 0;

	/* Signals are the loop's: a worker starts with every one blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	for (unsigned i = 0; i < ws->n && rc == 0; i++) {
		char name[16];
		rc = pthread_create(&ws->w[i].thread, NULL, worker_main, &ws->w[i]);
		ws->w[i].started = rc == 0;
		snprintf(name, sizeof(name), "worker%u", (unsigned)(uint8_t)i); /* at most 64; top -H shows it */
		if (rc == 0)
			pthread_setname_np(ws->w[i].thread, name);
	}
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (rc != 0)
		error_set(err, errlen, "workers: cannot start a thread: %s", strerror(rc));
	return rc == 0 ? 0 : -1;
}

void workers_stop(struct workers *ws)
{
	uint64_t one = 1;

	if (ws == NULL)
		return;
	for (unsigned i = 0; i < ws->n; i++)
		if (ws->w[i].started && write(ws->w[i].stop_fd, &one, sizeof(one)) < 0)
			log_error("workers: cannot stop worker %u: %s", i, strerror(errno));
	for (unsigned i = 0; i < ws->n; i++)
		if (ws->w[i].started)
			pthread_join(ws->w[i].thread, NULL);
	ws->failed = NULL; /* stopping: no more news */
	if (ws->match)
		drain(ws);
	for (unsigned i = 0; i < ws->n; i++)
		worker_free(&ws->w[i]);
	if (ws->wake)
		event_free(ws->wake);
	if (ws->wake_fd >= 0)
		close(ws->wake_fd);
	free(ws);
}

void workers_read(struct workers *ws, const struct matcher *m)
{
	atomic_store_explicit(&ws->current, m, memory_order_release);
	synchronize_rcu();
	for (unsigned i = 0; i < ws->n; i++)
		GRACE_ACQUIRE(&ws->w[i]);
}

void workers_set_verdicts(struct workers *ws, uint32_t drop_holders, uint32_t reject_holders, uint32_t pass_holders,
			  uint32_t pass_packet_holders)
{
	atomic_store_explicit(&ws->pass_holders, pass_holders, memory_order_relaxed);
	atomic_store_explicit(&ws->pass_packet_holders, pass_packet_holders, memory_order_relaxed);
	atomic_store_explicit(&ws->drop_holders, drop_holders, memory_order_relaxed);
	atomic_store_explicit(&ws->reject_holders, reject_holders, memory_order_relaxed);
}

unsigned workers_count(const struct workers *ws)
{
	return ws->n;
}

static void add_counters(struct workers_totals *t, const struct workers_totals *w)
{
	stats_add(&t->stats, &w->stats);
	for (int k = 0; k < MATCHER_KINDS; k++)
		stats_add_counters(&t->counters[k], &w->counters[k]);
	t->hits_dropped += w->hits_dropped;
	t->handoff_lost += w->handoff_lost;
	t->received += w->received;
	t->dropped += w->dropped;
	t->if_dropped += w->if_dropped;
	struct inline_stats *q = &t->queues;
	q->packets += w->queues.packets;
	q->accepted += w->queues.accepted;
	q->dropped += w->queues.dropped;
	q->rejected += w->queues.rejected;
	q->reject_unruled += w->queues.reject_unruled;
	q->unjudged += w->queues.unjudged;
	q->verdict_errors += w->queues.verdict_errors;
	q->lost += w->queues.lost;
	q->queue_dropped += w->queues.queue_dropped;
	q->user_dropped += w->queues.user_dropped;
	stats_histogram_add(&q->verdict_seconds, &w->queues.verdict_seconds);
	if (w->queues.verdict_ns_p50 > q->verdict_ns_p50)
		q->verdict_ns_p50 = w->queues.verdict_ns_p50;
	if (w->queues.verdict_ns_p99 > q->verdict_ns_p99)
		q->verdict_ns_p99 = w->queues.verdict_ns_p99;
	if (w->queues.largest_batch > q->largest_batch)
		q->largest_batch = w->queues.largest_batch;
}

void workers_totals(struct workers *ws, struct workers_totals *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < ws->n; i++) {
		struct workers_totals one;
		pthread_mutex_lock(&ws->w[i].lock);
		one = ws->w[i].shared;
		pthread_mutex_unlock(&ws->w[i].lock);
		add_counters(out, &one);
		if (i < 64)
			out->packets[i] = one.stats.packets;
	}
}
