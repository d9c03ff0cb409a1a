/* service_capture.c - the daemon's packet sources: the queue of files to replay and the live interface. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "action_xdp.h"
#include "clock.h"
#include "error.h"
#include "log.h"
#include "matcher_copy.h"
#include "packet.h"
#include "service_internal.h"
#include "stats.h"

/* ---- sources ---- */

static void on_packets(void *ctx, struct capture *cap, const struct capture_packet *p, size_t count)
{
	struct service *s = ctx;

	engine_batch(&s->engine, p, count, capture_name(cap), capture_is_live(cap), NULL);
}

/* The batch the loop's sources hand on. */
static unsigned batch_max(const struct service *s)
{
	return engine_batch_max(s->cfg->batch);
}

static void on_batch(void *ctx, struct capture *cap)
{
	struct service *s = ctx;
	struct timespec t;

	events_flush(s->events);
	if (cap != s->capture.replaying)
		return;
	/* The longest wait between batches of a replay: what anything else in the loop cost it. */
	clock_gettime(CLOCK_MONOTONIC, &t);
	double gap = clock_ms_between(&s->capture.last_batch, &t);
	if (gap > s->capture.replay_max_gap_ms)
		s->capture.replay_max_gap_ms = gap;
	s->capture.last_batch = t;
}

static void start_next_file(struct service *s);

#define MAX_SOURCES 1000 /* replays remembered in stats */

/*
 * A name or message for JSON: file names are any bytes, and a string that is
 * not UTF-8 would make the whole reply fail (and go unsent); its bytes
 * outside printable ASCII are shown as '?' instead. NULL stays JSON null.
 */
static json_t *text_json(const char *text)
{
	json_t *j;

	if (text == NULL)
		return json_null();
	if ((j = json_string(text)) != NULL)
		return j;
	char *shown = strdup(text);
	if (shown == NULL)
		return json_string("?");
	error_printable(shown);
	j = json_string(shown);
	free(shown);
	return j;
}

static void record_source(struct service *s, const char *name, uint64_t packets, const char *error)
{
	if (json_array_size(s->capture.replayed) >= MAX_SOURCES)
		json_array_remove(s->capture.replayed, 0);
	json_t *source = json_pack("{s:o,s:I}", "name", text_json(name), "packets", (json_int_t)packets);
	if (source && error)
		json_object_set_new(source, "error", text_json(error));
	json_array_append_new(s->capture.replayed, source);
}

/* A queued file is done (or could not be opened): tell whoever waits for it. */
static void finish_item(struct service *s, uint64_t packets, const char *error)
{
	struct replay_item *it = s->capture.current;

	record_source(s, it->path, packets, error);
	if (error) {
		log_error("%s: %s", it->path, error);
		if (s->capture.one_shot)
			s->capture.exit_code = 1;
	}
	json_t *reply = json_pack("{s:b,s:o,s:I,s:I,s:f}", "ok", error == NULL, "file", text_json(it->path),
				  "packets", (json_int_t)packets, "matched",
				  (json_int_t)(s->engine.stats.matched_packets - s->capture.replay_matched_before),
				  "max_gap_ms", s->capture.replay_max_gap_ms);
	if (reply && error)
		json_object_set_new(reply, "error", text_json(error));
	service_propagate(s);
	service_reply_to(s, it->waiter, reply);
	free(it->path);
	free(it);
	s->capture.current = NULL;
}

static void next_file_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;

	(void)fd;
	(void)what;
	capture_free(s->capture.replaying); /* not from inside its own callback */
	s->capture.replaying = NULL;
	finish_item(s, s->capture.current_packets, s->capture.current_error[0] ? s->capture.current_error : NULL);
	start_next_file(s);
}

static void on_done(void *ctx, struct capture *cap, const char *error)
{
	struct service *s = ctx;

	if (capture_is_live(cap)) {
		if (error)
			log_error("%s: %s", capture_name(cap), error);
		s->capture.exit_code = 1;
		event_base_loopbreak(s->base);
		return;
	}
	s->capture.current_packets = capture_packets(cap);
	snprintf(s->capture.current_error, sizeof(s->capture.current_error), "%s", error ? error : "");
	event_base_once(s->base, -1, EV_TIMEOUT, next_file_cb, s, NULL);
}

/* A capture's callbacks (it keeps a copy). */
static struct capture_callbacks callbacks(struct service *s)
{
	return (struct capture_callbacks){ on_packets, on_batch, on_done, s, batch_max(s) };
}

static void warn_unsupported_link(const struct capture *cap)
{
	if (!packet_link_supported(capture_link(cap)))
		log_warning("%s: link type %s (%d) is not supported: its packets are counted, not checked",
			    capture_name(cap), capture_link_name(cap), capture_link(cap));
}

/*
 * One-shot: exit once nothing is left to replay, checked from the loop. An
 * exit asked for at once, when the first of several files cannot be opened
 * before the loop runs, could end it before the next file (queued right
 * after) was done: its packets counted, its source and its events not.
 */
static void exit_if_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;

	(void)fd;
	(void)what;
	if (s->capture.current == NULL && s->capture.queue == NULL)
		event_base_loopexit(s->base, NULL);
}

/* Replay the queue in order; a file that cannot be opened is an error, the rest still run. */
static void start_next_file(struct service *s)
{
	char err[512];

	while (s->capture.current == NULL && s->capture.queue) {
		s->capture.current = s->capture.queue;
		s->capture.queue = s->capture.queue->next;
		if (s->capture.queue == NULL)
			s->capture.queue_tail = NULL;
		s->capture.replay_matched_before = s->engine.stats.matched_packets;
		handshakes_clear(s->engine.replay_handshakes); /* a capture's senders proven by its own packets alone */
		s->capture.replay_max_gap_ms = 0;
		clock_gettime(CLOCK_MONOTONIC, &s->capture.last_batch);
		struct replay_item *it = s->capture.current;
		struct capture_callbacks cb = callbacks(s);
		s->capture.replaying = it->fd >= 0 ? capture_open_fd(s->base, it->fd, it->path, s->cfg->bpf, &cb, err,
							     sizeof(err))
					   : capture_open_file(s->base, it->path, s->cfg->bpf, &cb, err, sizeof(err));
		it->fd = -1; /* the capture's now, or closed */
		if (s->capture.replaying) {
			warn_unsupported_link(s->capture.replaying);
			return;
		}
		finish_item(s, 0, err);
	}
	if (s->capture.current == NULL && s->capture.one_shot)
		event_base_once(s->base, -1, EV_TIMEOUT, exit_if_idle_cb, s, NULL);
}

static int queue_item(struct service *s, const char *path, int fd, uint64_t waiter, char *err,
		      size_t errlen)
{
	struct replay_item *it = calloc(1, sizeof(*it));

	if (it == NULL || (it->path = strdup(path)) == NULL) {
		free(it);
		error_set(err, errlen, "out of memory");
		return -1;
	}
	it->fd = fd;
	it->waiter = waiter;
	if (s->capture.queue_tail)
		s->capture.queue_tail->next = it;
	else
		s->capture.queue = it;
	s->capture.queue_tail = it;
	if (s->base && s->capture.current == NULL)
		start_next_file(s);
	return 0;
}

int service_replay(struct service *s, const char *path, uint64_t waiter, char *err, size_t errlen)
{
	return queue_item(s, path, -1, waiter, err, errlen);
}

int service_replay_fd(struct service *s, int fd, const char *name, uint64_t waiter, char *err,
		      size_t errlen)
{
	struct stat st;

	/* A FIFO or a device could block the loop a replay reads on, or never end. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		error_set(err, errlen, "%s: not a regular file (a replay reads its file in the event loop)", name);
		close(fd);
		return -1;
	}
	if (queue_item(s, name, fd, waiter, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	return 0;
}

/* ---- workers: live packets checked on threads of their own ---- */

#define PUBLISH_MS 20

static void on_worker_match(void *ctx, const struct worker_match *m)
{
	struct service *s = ctx;
	struct packet_view v;

	packet_parse(m->packet.link, m->packet.frame, m->packet.caplen, m->packet.wirelen, &v);
	engine_report(&s->engine, &m->packet, &v, m->found, m->n, m->exempt, m->source, true, m->verdict, m->sender);
}

static void on_worker_batch(void *ctx)
{
	struct service *s = ctx;

	events_flush(s->events);
}

/* As when the loop's own capture stops: bloomd exits with an error (systemd restarts it). */
static void on_worker_failed(void *ctx, const char *source, const char *error)
{
	struct service *s = ctx;

	log_error("%s: %s", source, error);
	service_fail(s);
	event_base_loopbreak(s->base);
}

/* The copy could not be brought in step: the workers stop (the queues pass packets, bypass). */
static void lose_workers(struct service *s, const char *why)
{
	log_error("workers: %s: stopping (the journal and snapshot have every change)", why);
	service_stop_workers(s);
	service_fail(s);
	event_base_loopbreak(s->base);
}

/* The workers' copy brought in step with the matcher's changes since it last was. */
static void publish_to_workers(struct service *s)
{
	char err[256];

	/* Nothing changes the loop's matcher while the workers read it, and the copy meanwhile catches up. */
	workers_read(s->capture.workers, s->matcher);
	if (matcher_replay(s->capture.replica, s->capture.changes, err, sizeof(err)) < 0) {
		matcher_free(s->capture.replica);
		if ((s->capture.replica = matcher_clone(s->matcher)) == NULL) {
			lose_workers(s, "out of memory copying the filters");
			return;
		}
	}
	workers_read(s->capture.workers, s->capture.replica);
}

void service_propagate(struct service *s)
{
	struct service_capture *src = &s->capture;

	if (src->changes == NULL ||
	    (matcher_changes(s->matcher) == src->published && !src->actions_stale && !service_action_mirror_behind(s)))
		return;
	if (service_action_xdp_on(s))
		service_action_xdp_sync(s);
	service_action_mirror_sync(s);
	src->actions_stale = false;
	if (src->workers)
		publish_to_workers(s);
	if (src->changes) /* the workers may have been lost */
		matcher_log_clear(src->changes);
	src->published = matcher_changes(s->matcher);
}

static void propagate_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	service_propagate(arg);
}

int service_record_changes(struct service *s, unsigned follower)
{
	struct service_capture *src = &s->capture;
	struct timeval every = { 0, PUBLISH_MS * 1000 };

	src->followers |= follower;
	if (src->changes)
		return 0;
	if ((src->changes = matcher_log_new()) == NULL) {
		log_error("out of memory for the log of changes");
		return -1;
	}
	matcher_record(s->matcher, src->changes);
	src->published = matcher_changes(s->matcher);
	src->publisher = event_new(s->base, -1, EV_PERSIST, propagate_cb, s);
	if (src->publisher == NULL || event_add(src->publisher, &every) < 0) {
		log_error("cannot start the publishing timer");
		return -1;
	}
	return 0;
}

static int start_workers(struct service *s, const struct workers_options *o)
{
	char err[512];

	service_propagate(s); /* the XDP set, if any, in step before the copy is made */
	s->capture.replica = matcher_clone(s->matcher);
	if (s->capture.replica == NULL || service_record_changes(s, SERVICE_FOLLOWS_WORKERS) < 0) {
		log_error("workers: out of memory copying the filters");
		return -1;
	}
	struct workers_callbacks cb = { on_worker_match, on_worker_batch, on_worker_failed, s };
	s->capture.workers = workers_start(s->base, o, s->capture.replica, &cb, err, sizeof(err));
	if (s->capture.workers == NULL) {
		log_error("%s", err);
		return -1;
	}
	service_workers_verdicts(s);
	return 0;
}

int service_run_workers(struct service *s)
{
	char err[256];

	if (s->capture.workers && workers_run(s->capture.workers, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	return 0;
}

void service_stop_workers(struct service *s)
{
	workers_stop(s->capture.workers);
	s->capture.workers = NULL;
	matcher_free(s->capture.replica);
	s->capture.replica = NULL;
	service_follower_gone(s, SERVICE_FOLLOWS_WORKERS);
}

void service_workers_verdicts(struct service *s)
{
	if (s->capture.workers)
		workers_set_verdicts(s->capture.workers, s->engine.drop_holders, s->engine.reject_holders,
				     s->engine.pass_holders, s->engine.pass_packet_holders);
}

int service_capture_live(struct service *s, const char *interface)
{
	struct capture_live_options o = {
		.interface = interface, .snaplen = s->cfg->snaplen, .promisc = s->cfg->promisc,
		.buffer_size = s->cfg->buffer_size, .bpf = s->cfg->bpf,
	};
	char err[512];

	if (s->cfg->workers > 1) {
		struct workers_options wo = { .count = s->cfg->workers, .live = o, .batch = s->cfg->batch,
					      .handshakes = s->cfg->tcp_connections,
					      .handshake_idle = HANDSHAKE_IDLE_SECONDS };
		wo.live.fanout_group = (unsigned)getpid() & 0xffff;
		snprintf(s->capture.queue_name, sizeof(s->capture.queue_name), "%s", interface);
		if (start_workers(s, &wo) < 0)
			return -1;
		log_info("capturing on %s with %u workers (one PACKET_FANOUT group, by flow)", interface, s->cfg->workers);
		return 0;
	}
	struct capture_callbacks cb = callbacks(s);
	s->capture.live = capture_open_live(s->base, &o, &cb, err, sizeof(err));
	if (s->capture.live == NULL) {
		log_error("%s", err);
		return -1;
	}
	warn_unsupported_link(s->capture.live);
	log_info("capturing on %s (%s)", interface, capture_link_name(s->capture.live));
	return 0;
}

/* ---- xdp: listed addresses dropped in the driver, the rest captured ---- */

int service_capture_xdp(struct service *s, const char *interface)
{
	if (service_action_xdp_open(s, interface) < 0 || service_record_changes(s, SERVICE_FOLLOWS_XDP) < 0 || service_action_xdp_attach(s) < 0)
		return -1;
	return service_capture_live(s, interface);
}

/* ---- inline: packets from netfilter queues ---- */

static void on_queued(void *ctx, const struct capture_packet *p, size_t count, enum verdict *verdicts)
{
	struct service *s = ctx;

	engine_batch(&s->engine, p, count, s->capture.queue_name, true, verdicts);
}

static void on_queued_batch(void *ctx)
{
	struct service *s = ctx;

	events_flush(s->events);
}

int service_capture_inline(struct service *s)
{
	const struct config *c = s->cfg;
	struct inline_options o = { .first = c->queue.first, .last = c->queue.last, .fail_open = c->fail_open,
				    .maxlen = c->queue_maxlen, .snaplen = c->snaplen, .reject_mark = c->reject_mark,
				    .batch_max = batch_max(s) };
	char err[512];

	if (c->queue.first == c->queue.last)
		snprintf(s->capture.queue_name, sizeof(s->capture.queue_name), "nfqueue%u", c->queue.first);
	else
		snprintf(s->capture.queue_name, sizeof(s->capture.queue_name), "nfqueue%u-%u", c->queue.first, c->queue.last);
	s->engine.inline_mode = true;
	if (c->workers > 1) {
		struct workers_options wo = { .count = c->workers, .inline_mode = true, .queues = o, .batch = c->batch,
					      .handshakes = c->tcp_connections, .handshake_idle = HANDSHAKE_IDLE_SECONDS };
		if (start_workers(s, &wo) < 0)
			return -1;
	} else if ((s->capture.inline_queue = inline_open(s->base, &o, on_queued, on_queued_batch, s, err, sizeof(err))) == NULL) {
		log_error("%s", err);
		return -1;
	}
	log_info("inline on %s with %u worker(s): a match of a dropping list is dropped, all else accepted (%s)",
		 s->capture.queue_name, c->workers, c->fail_open ? "fail-open: a full queue accepts" : "fail-closed: a full queue drops");
	return 0;
}

bool service_is_live(const struct service *s)
{
	return s->capture.live != NULL || s->capture.workers != NULL;
}

void service_set_one_shot(struct service *s, bool one_shot)
{
	s->capture.one_shot = one_shot;
}

int service_exit_code(const struct service *s)
{
	return s->capture.exit_code;
}

void service_fail(struct service *s)
{
	s->capture.exit_code = 1;
}

int service_capture_start(struct service *s)
{
	s->capture.replayed = json_array();
	return s->capture.replayed ? 0 : -1;
}

static void free_item(struct replay_item *it)
{
	if (it->fd >= 0)
		close(it->fd);
	free(it->path);
	free(it);
}

void service_capture_close(struct service *s)
{
	struct service_capture *src = &s->capture;

	capture_free(src->replaying);
	src->replaying = NULL;
	capture_free(src->live);
	src->live = NULL;
	inline_close(src->inline_queue);
	src->inline_queue = NULL;
	if (src->current)
		free_item(src->current);
	src->current = NULL;
	while (src->queue) {
		struct replay_item *next = src->queue->next;
		free_item(src->queue);
		src->queue = next;
	}
	src->queue_tail = NULL;
	json_decref(src->replayed);
	src->replayed = NULL;
}

void service_packet_totals(struct service *s, struct workers_totals *t)
{
	if (s->capture.workers)
		workers_totals(s->capture.workers, t);
	else
		memset(t, 0, sizeof(*t));
	stats_add(&t->stats, &s->engine.stats);
	for (int k = 0; k < MATCHER_KINDS; k++)
		stats_add_counters(&t->counters[k], matcher_scratch_counters(s->engine.scratch, (enum entry_kind)k));
	t->hits_dropped += matcher_scratch_hits_dropped(s->engine.scratch);
	if (s->capture.inline_queue)
		inline_stats(s->capture.inline_queue, &t->queues);
	if (s->capture.live)
		capture_stats(s->capture.live, &t->received, &t->dropped, &t->if_dropped);
}

static json_t *workers_json(const struct service *s, const struct workers_totals *t)
{
	json_t *packets = json_array();

	for (unsigned i = 0; i < workers_count(s->capture.workers) && i < 64; i++)
		json_array_append_new(packets, json_integer((json_int_t)t->packets[i]));
	return json_pack("{s:i,s:o,s:I}", "count", (int)workers_count(s->capture.workers), "packets", packets, "handoff_lost",
			 (json_int_t)t->handoff_lost);
}

static json_t *inline_json(const struct service *s, const struct inline_stats *is)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I}}", "queue", s->capture.queue_name,
			      "packets", (json_int_t)is->packets, "accepted", (json_int_t)is->accepted,
			      "dropped", (json_int_t)is->dropped, "rejected", (json_int_t)is->rejected,
			      "reject_unruled", (json_int_t)is->reject_unruled, "verdict_errors",
			      (json_int_t)is->verdict_errors, "lost", (json_int_t)is->lost,
			      "unjudged", (json_int_t)is->unjudged,
			      "queue_dropped", (json_int_t)is->queue_dropped, "user_dropped",
			      (json_int_t)is->user_dropped, "verdict_ns", "p50",
			      (json_int_t)is->verdict_ns_p50, "p99", (json_int_t)is->verdict_ns_p99);

	json_object_set_new(o, "verdict_seconds", stats_histogram_json(&is->verdict_seconds));
	json_object_set_new(o, "largest_batch", json_integer(is->largest_batch));
	return o;
}

void service_capture_stats(const struct service *s, json_t *o, const struct workers_totals *t)
{
	const struct service_capture *src = &s->capture;

	json_object_set_new(o, "packet_batch", json_integer(batch_max(s)));
	if (src->workers)
		json_object_set_new(o, "workers", workers_json(s, t));
	if (src->inline_queue || (src->workers && s->cfg->inline_mode))
		json_object_set_new(o, "inline", inline_json(s, &t->queues));
	if (src->live || (src->workers && !s->cfg->inline_mode))
		json_object_set_new(o, "capture", json_pack("{s:s,s:I,s:I,s:I}", "interface",
							    src->live ? capture_name(src->live) : src->queue_name,
							    "received", (json_int_t)t->received, "dropped",
							    (json_int_t)t->dropped, "if_dropped", (json_int_t)t->if_dropped));
	json_object_set(o, "sources", src->replayed);
	if (src->replaying)
		json_object_set_new(o, "replaying", json_pack("{s:o,s:I}", "name", text_json(src->current->path),
							      "packets", (json_int_t)capture_packets(src->replaying)));
	size_t queued = 0;
	for (const struct replay_item *it = src->queue; it; it = it->next)
		queued++;
	json_object_set_new(o, "replays_queued", json_integer((json_int_t)queued));
}
