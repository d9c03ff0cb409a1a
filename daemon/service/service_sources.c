/* service_sources.c - the daemon's packet sources: the queue of files to replay and the live interface. */
#include "service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "packet.h"
#include "service_internal.h"
#include "stats.h"
#include "xdp.h"

/* ---- sources ---- */

static void on_packet(void *ctx, struct capture *cap, const struct capture_packet *p)
{
	struct service *s = ctx;

	engine_packet(&s->engine, p, capture_name(cap), capture_is_live(cap));
}

static void on_batch(void *ctx, struct capture *cap)
{
	struct service *s = ctx;
	struct timespec t;

	events_flush(s->events);
	if (cap != s->replaying)
		return;
	/* The longest wait between batches of a replay: what anything else in the loop cost it. */
	clock_gettime(CLOCK_MONOTONIC, &t);
	double gap = clock_ms_between(&s->last_batch, &t);
	if (gap > s->replay_max_gap_ms)
		s->replay_max_gap_ms = gap;
	s->last_batch = t;
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
	if (json_array_size(s->sources) >= MAX_SOURCES)
		json_array_remove(s->sources, 0);
	json_t *source = json_pack("{s:o,s:I}", "name", text_json(name), "packets", (json_int_t)packets);
	if (source && error)
		json_object_set_new(source, "error", text_json(error));
	json_array_append_new(s->sources, source);
}

/* A queued file is done (or could not be opened): tell whoever waits for it. */
static void finish_item(struct service *s, uint64_t packets, const char *error)
{
	struct replay_item *it = s->current;

	record_source(s, it->path, packets, error);
	if (error) {
		log_error("%s: %s", it->path, error);
		if (s->one_shot)
			s->exit_code = 1;
	}
	json_t *reply = json_pack("{s:b,s:o,s:I,s:I,s:f}", "ok", error == NULL, "file", text_json(it->path),
				  "packets", (json_int_t)packets, "matched",
				  (json_int_t)(s->engine.stats.matched_packets - s->replay_matched_before),
				  "max_gap_ms", s->replay_max_gap_ms);
	if (reply && error)
		json_object_set_new(reply, "error", text_json(error));
	service_reply_to(s, it->waiter, reply);
	free(it->path);
	free(it);
	s->current = NULL;
}

static void next_file_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;

	(void)fd;
	(void)what;
	capture_free(s->replaying); /* not from inside its own callback */
	s->replaying = NULL;
	finish_item(s, s->current_packets, s->current_error[0] ? s->current_error : NULL);
	start_next_file(s);
}

static void on_done(void *ctx, struct capture *cap, const char *error)
{
	struct service *s = ctx;

	if (capture_is_live(cap)) {
		if (error)
			log_error("%s: %s", capture_name(cap), error);
		s->exit_code = 1;
		event_base_loopbreak(s->base);
		return;
	}
	s->current_packets = capture_packets(cap);
	snprintf(s->current_error, sizeof(s->current_error), "%s", error ? error : "");
	event_base_once(s->base, -1, EV_TIMEOUT, next_file_cb, s, NULL);
}

static const struct capture_callbacks *callbacks(struct service *s)
{
	static struct capture_callbacks cb = { on_packet, on_batch, on_done, NULL };

	cb.ctx = s;
	return &cb;
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
	if (s->current == NULL && s->queue == NULL)
		event_base_loopexit(s->base, NULL);
}

/* Replay the queue in order; a file that cannot be opened is an error, the rest still run. */
static void start_next_file(struct service *s)
{
	char err[512];

	while (s->current == NULL && s->queue) {
		s->current = s->queue;
		s->queue = s->queue->next;
		if (s->queue == NULL)
			s->queue_tail = NULL;
		s->replay_matched_before = s->engine.stats.matched_packets;
		s->replay_max_gap_ms = 0;
		clock_gettime(CLOCK_MONOTONIC, &s->last_batch);
		struct replay_item *it = s->current;
		s->replaying = it->fd >= 0 ? capture_open_fd(s->base, it->fd, it->path, s->cfg->bpf, callbacks(s),
							     err, sizeof(err))
					   : capture_open_file(s->base, it->path, s->cfg->bpf, callbacks(s),
							       err, sizeof(err));
		it->fd = -1; /* the capture's now, or closed */
		if (s->replaying) {
			warn_unsupported_link(s->replaying);
			return;
		}
		finish_item(s, 0, err);
	}
	if (s->current == NULL && s->one_shot)
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
	if (s->queue_tail)
		s->queue_tail->next = it;
	else
		s->queue = it;
	s->queue_tail = it;
	if (s->base && s->current == NULL)
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
	engine_report(&s->engine, &m->packet, &v, m->found, m->n, m->exempt, m->source, true, m->verdict);
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
	workers_read(s->workers, s->matcher);
	if (matcher_replay(s->replica, s->changes, err, sizeof(err)) < 0) {
		matcher_free(s->replica);
		if ((s->replica = matcher_clone(s->matcher)) == NULL) {
			lose_workers(s, "out of memory copying the filters");
			return;
		}
	}
	workers_read(s->workers, s->replica);
}

void service_propagate(struct service *s)
{
	if (s->changes == NULL || (matcher_changes(s->matcher) == s->published && !s->actions_stale && !s->mirror_stale))
		return;
	if (s->xdp)
		service_xdp_sync(s);
	service_mirror_sync(s);
	s->actions_stale = false;
	if (s->workers)
		publish_to_workers(s);
	if (s->changes) /* the workers may have been lost */
		match_log_clear(s->changes);
	s->published = matcher_changes(s->matcher);
}

static void propagate_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	service_propagate(arg);
}

int service_record_changes(struct service *s)
{
	struct timeval every = { 0, PUBLISH_MS * 1000 };

	if (s->changes)
		return 0;
	if ((s->changes = match_log_new()) == NULL) {
		log_error("out of memory for the log of changes");
		return -1;
	}
	matcher_record(s->matcher, s->changes);
	s->published = matcher_changes(s->matcher);
	s->publisher = event_new(s->base, -1, EV_PERSIST, propagate_cb, s);
	if (s->publisher == NULL || event_add(s->publisher, &every) < 0) {
		log_error("cannot start the publishing timer");
		return -1;
	}
	return 0;
}

static int start_workers(struct service *s, const struct workers_options *o)
{
	char err[512];

	service_propagate(s); /* the XDP set, if any, in step before the copy is made */
	s->replica = matcher_clone(s->matcher);
	if (s->replica == NULL || service_record_changes(s) < 0) {
		log_error("workers: out of memory copying the filters");
		return -1;
	}
	struct workers_callbacks cb = { on_worker_match, on_worker_batch, on_worker_failed, s };
	s->workers = workers_start(s->base, o, s->replica, &cb, err, sizeof(err));
	if (s->workers == NULL) {
		log_error("%s", err);
		return -1;
	}
	workers_set_verdicts(s->workers, s->engine.drop_holders, s->engine.reject_holders, s->engine.pass_holders,
			     s->engine.pass_packet_holders);
	return 0;
}

int service_run_workers(struct service *s)
{
	char err[256];

	if (s->workers && workers_run(s->workers, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	return 0;
}

/* No more changes recorded: once neither the workers' copy nor the XDP set follows them. */
static void stop_recording(struct service *s)
{
	if (s->workers || s->xdp || s->table_watch)
		return;
	if (s->publisher)
		event_free(s->publisher);
	s->publisher = NULL;
	if (s->matcher)
		matcher_record(s->matcher, NULL);
	match_log_free(s->changes);
	s->changes = NULL;
}

void service_stop_workers(struct service *s)
{
	workers_stop(s->workers);
	s->workers = NULL;
	matcher_free(s->replica);
	s->replica = NULL;
	stop_recording(s);
}

void service_stop_xdp(struct service *s)
{
	xdp_close(s->xdp); /* the link closed: the kernel detaches the program (unless it is pinned) */
	s->xdp = NULL;
	stop_recording(s);
}

int service_capture_live(struct service *s, const char *interface)
{
	struct capture_live_options o = {
		.interface = interface, .snaplen = s->cfg->snaplen, .promisc = s->cfg->promisc,
		.buffer_size = s->cfg->buffer_size, .bpf = s->cfg->bpf,
	};
	char err[512];

	if (s->cfg->workers > 1) {
		struct workers_options wo = { .count = s->cfg->workers, .live = o };
		wo.live.fanout_group = (unsigned)getpid() & 0xffff;
		snprintf(s->queue_name, sizeof(s->queue_name), "%s", interface);
		if (start_workers(s, &wo) < 0)
			return -1;
		log_info("capturing on %s with %u workers (one PACKET_FANOUT group, by flow)", interface, s->cfg->workers);
		return 0;
	}
	s->live = capture_open_live(s->base, &o, callbacks(s), err, sizeof(err));
	if (s->live == NULL) {
		log_error("%s", err);
		return -1;
	}
	warn_unsupported_link(s->live);
	log_info("capturing on %s (%s)", interface, capture_link_name(s->live));
	return 0;
}

/* ---- xdp: listed addresses dropped in the driver, the rest captured ---- */

int service_capture_xdp(struct service *s, const char *interface)
{
	if (service_xdp_open(s, interface) < 0 || service_record_changes(s) < 0 || service_xdp_attach(s) < 0)
		return -1;
	return service_capture_live(s, interface);
}

/* ---- inline: packets from netfilter queues ---- */

static enum verdict on_queued(void *ctx, const struct capture_packet *p)
{
	struct service *s = ctx;

	return engine_packet(&s->engine, p, s->queue_name, true);
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
				    .maxlen = c->queue_maxlen, .snaplen = c->snaplen, .reject_mark = c->reject_mark };
	char err[512];

	if (c->queue.first == c->queue.last)
		snprintf(s->queue_name, sizeof(s->queue_name), "nfqueue%u", c->queue.first);
	else
		snprintf(s->queue_name, sizeof(s->queue_name), "nfqueue%u-%u", c->queue.first, c->queue.last);
	s->engine.inline_mode = true;
	if (c->workers > 1) {
		struct workers_options wo = { .count = c->workers, .inline_mode = true, .queues = o };
		if (start_workers(s, &wo) < 0)
			return -1;
	} else if ((s->inline_queue = inline_open(s->base, &o, on_queued, on_queued_batch, s, err, sizeof(err))) == NULL) {
		log_error("%s", err);
		return -1;
	}
	log_info("inline on %s with %u worker(s): a match of a dropping list is dropped, all else accepted (%s)",
		 s->queue_name, c->workers, c->fail_open ? "fail-open: a full queue accepts" : "fail-closed: a full queue drops");
	return 0;
}

void service_reply_to(struct service *s, uint64_t waiter, json_t *reply)
{
	struct control_client *cl = waiter && s->control ? control_find(s->control, waiter) : NULL;

	service_propagate(s); /* a rebuild's or a replace's result reaches the workers first */
	if (cl) {
		/* Exactly one reply: the client pairs replies with its commands in order. */
		char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
		if (text)
			control_reply(cl, text, strlen(text));
		else
			control_reply(cl, "{\"ok\":false,\"error\":\"out of memory for the reply\"}", 49);
		free(text);
		control_release(cl);
	}
	json_decref(reply);
}
