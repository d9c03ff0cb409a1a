/* service.c - the running daemon: entries, durable state, sources, rebuilds, housekeeping. */
#include "service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "error.h"
#include "log.h"
#include "packet.h"
#include "stats.h"

static uint64_t now_s(void)
{
	return (uint64_t)time(NULL);
}

static struct match_config match_config_of(const struct config *cfg)
{
	return (struct match_config){
		.layout = cfg->layout, .choices = cfg->choices, .hashes = cfg->hashes,
		.rounds = cfg->rounds, .memory = cfg->memory, .bits_per_entry = cfg->bits_per_entry,
		.bits_per_window = cfg->bits_per_window, .window = cfg->window, .algo = cfg->hash,
	};
}

/* ---- entries ---- */

static int journal_op(struct service *s, enum persist_op op, const struct entry *e, uint64_t expiry,
		      char *err, size_t errlen)
{
	if (s->journal_stale) {
		error_set(err, errlen, "the state directory cannot take a new journal (see the log): changes are refused until it can");
		return -1;
	}
	if (s->journal && journal_append(s->journal, op, e, expiry) < 0) {
		error_set(err, errlen, "out of memory for the journal: the change was not made");
		return -1;
	}
	return 0;
}

/* keep: an entry present already keeps its expiry (entry lists); else it takes expiry. */
static int add_entry(struct service *s, const struct entry *e, uint64_t expiry, bool keep,
		     char *err, size_t errlen)
{
	int rc = matcher_add(s->matcher, e, err, errlen);

	if (rc < 0 || (rc == 1 && (keep || ttl_get(s->ttl, e) == expiry)))
		return rc;
	if (ttl_set(s->ttl, e, expiry) < 0 || journal_op(s, PERSIST_ADD, e, expiry, err, errlen) < 0) {
		if (rc == 0)
			matcher_remove(s->matcher, e);
		ttl_set(s->ttl, e, 0);
		error_set(err, errlen, "out of memory: the entry was not added");
		return -1;
	}
	return rc;
}

int service_add(struct service *s, const struct entry *e, uint64_t expiry, char *err,
		size_t errlen)
{
	return add_entry(s, e, expiry, false, err, errlen);
}

int service_del(struct service *s, const struct entry *e, char *err, size_t errlen)
{
	bool filter_says;

	if (!matcher_lookup(s->matcher, e, &filter_says))
		return 1;
	if (journal_op(s, PERSIST_DEL, e, 0, err, errlen) < 0)
		return -1; /* not journaled: not done, or a restart would bring it back */
	matcher_remove(s->matcher, e);
	ttl_set(s->ttl, e, 0);
	return 0;
}

/* ---- loading ---- */

struct loading {
	struct service *s;
	const struct persist_header *h;
	uint64_t now, added, present;
	unsigned problems;
};

static int make_matcher(struct service *s, const struct hash_key *keys)
{
	struct match_config mc = match_config_of(s->cfg);
	char err[256];

	mc.keys = keys;
	if (keys)
		mc.algo = keys[0].algo;
	s->matcher = matcher_new(&mc, err, sizeof(err));
	if (s->matcher == NULL)
		log_error("%s", err);
	return s->matcher ? 0 : -1;
}

static int restore_entry(void *ctx, const struct entry *e, unsigned group, uint64_t expiry)
{
	struct loading *ld = ctx;
	struct service *s = ld->s;
	char err[256];

	if (s->matcher == NULL) {
		struct hash_key keys[2] = { ld->h->filter[0].key, ld->h->filter[1].key };
		if (make_matcher(s, keys) < 0)
			return -1;
	}
	if (expiry && expiry <= ld->now)
		return 0; /* expired while bloomd was down */
	if (matcher_add_restored(s->matcher, e, group, err, sizeof(err)) < 0 ||
	    ttl_set(s->ttl, e, expiry) < 0) {
		log_error("snapshot: %s", err);
		return -1;
	}
	return 0;
}

static int replay_record(void *ctx, enum persist_op op, const struct entry *e, uint64_t expiry)
{
	struct loading *ld = ctx;
	struct service *s = ld->s;
	char err[256], text[ENTRY_TEXT_MAX];

	if (op == PERSIST_DEL || (expiry && expiry <= ld->now)) {
		matcher_remove(s->matcher, e);
		ttl_set(s->ttl, e, 0);
		return 0;
	}
	if (matcher_add(s->matcher, e, err, sizeof(err)) < 0 || ttl_set(s->ttl, e, expiry) < 0) {
		log_error("journal: %s %s: %s", entry_kind_name(e->kind),
			  entry_format_value(e->kind, e->key, e->len, text, sizeof(text)), err);
		return -1;
	}
	return 0;
}

/* The snapshot and the journal, if there is a store. */
static int load_state(struct service *s, struct loading *ld)
{
	const char *dir = s->cfg->store_dir;
	struct persist_header h;
	char err[512];
	bool dropped;
	int rc;

	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		log_error("[store] dir %s: %s", dir, strerror(errno));
		return -1;
	}
	ld->h = &h;
	rc = snapshot_read(dir, &h, restore_entry, ld, err, sizeof(err));
	if (rc < 0) {
		log_error("%s; it is left as it is: move it away to start without it", err);
		return -1;
	}
	if (rc == 0 && h.window != s->cfg->window) {
		log_error("%s/snapshot was made with a signature window of %u bytes, the configuration says %u: set [signatures] window back, or move the state away",
			  dir, h.window, s->cfg->window);
		return -1;
	}
	if (s->matcher == NULL) {
		struct hash_key keys[2] = { h.filter[0].key, h.filter[1].key };
		if (make_matcher(s, rc == 0 ? keys : NULL) < 0)
			return -1;
	}
	s->restored = rc == 0;
	if (rc == 0) {
		struct filter_params params[2] = { h.filter[0].params, h.filter[1].params };
		if (matcher_build_restored(s->matcher, params, err, sizeof(err)) < 0) {
			log_error("%s", err);
			return -1;
		}
		if (h.algo != s->cfg->hash)
			log_warning("the state was made with hash %s, which it keeps; [filter] hash applies to a new state directory",
				    hash_algo_name(h.algo));
	}
	s->generation = h.generation;
	s->journal = journal_open(dir, s->generation, replay_record, ld, &dropped, err, sizeof(err));
	if (s->journal == NULL) {
		log_error("%s; it is left as it is: move it away to start without it", err);
		return -1;
	}
	if (dropped)
		log_warning("%s/journal: its last record was torn (a crash while writing it) and is dropped", dir);
	return 0;
}

static int add_listed(void *ctx, const struct entry *e, char *err, size_t errlen)
{
	struct loading *ld = ctx;
	int rc = add_entry(ld->s, e, 0, true, err, errlen);

	ld->added += rc == 0;
	ld->present += rc == 1;
	return rc < 0 ? -1 : 0;
}

static void list_problem(void *ctx, const char *message)
{
	struct loading *ld = ctx;

	log_error("%s", message);
	ld->problems++;
}

int service_load(struct service *s, struct config *cfg, bool use_store, bool check_only,
		 uint64_t listed[2])
{
	struct loading ld = { .s = s, .now = now_s() };
	char err[512];

	s->cfg = cfg;
	s->started = time(NULL);
	if ((s->ttl = ttl_new()) == NULL)
		return -1;
	if (use_store && cfg->store_dir && !check_only) {
		if (load_state(s, &ld) < 0)
			return -1;
	} else if (make_matcher(s, NULL) < 0) {
		return -1;
	}
	for (size_t i = 0; i < cfg->nentry_files; i++)
		entry_list_load(cfg->entry_files[i], add_listed, list_problem, &ld);
	listed[0] = ld.added;
	listed[1] = ld.present;
	if (ld.problems)
		return -1;
	if (check_only)
		return 0;
	/* Without a snapshot the filters are built here, with their rounds. */
	if (!s->restored && matcher_build(s->matcher, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	service_sync(s, true);
	return 0;
}

/* ---- durable state ---- */

struct saving {
	struct snapshot_writer *w;
	const struct ttl *ttl;
};

static int save_entry(void *ctx, const struct entry *e, unsigned group)
{
	struct saving *sv = ctx;

	return snapshot_put(sv->w, e, group, ttl_get(sv->ttl, e));
}

int service_save(struct service *s, char *err, size_t errlen)
{
	struct persist_header h = { .generation = s->generation + 1, .window = s->cfg->window };
	struct hash_key keys[2];
	struct saving sv = { .ttl = s->ttl };

	if (s->journal == NULL) {
		error_set(err, errlen, "no state is kept: set [store] dir");
		return -1;
	}
	matcher_keys(s->matcher, keys);
	h.algo = keys[0].algo;
	for (int i = 0; i < 2; i++) {
		h.filter[i].present = matcher_params(s->matcher, i, &h.filter[i].params);
		h.filter[i].key = keys[i];
	}
	/* The next journal first: once the snapshot is in, only a rename is left to do. */
	if (journal_prepare(s->journal, h.generation, err, errlen) < 0)
		return -1;
	sv.w = snapshot_begin(s->cfg->store_dir, &h, err, errlen);
	if (sv.w == NULL)
		return -1;
	if (matcher_foreach(s->matcher, 0, save_entry, &sv) != 0) {
		error_set(err, errlen, "%s/snapshot.tmp: write error", s->cfg->store_dir);
		snapshot_abort(sv.w);
		return -1;
	}
	if (snapshot_commit(sv.w, err, errlen) < 0)
		return -1;
	s->generation++;
	/* The new snapshot holds everything: a crash from here on leaves an older journal, ignored. */
	/*
	 * If the new journal cannot take over, changes appended to the old one
	 * would be ignored after a restart: refuse them until a save succeeds.
	 */
	s->journal_stale = journal_switch(s->journal, err, errlen) < 0;
	if (s->journal_stale)
		log_error("%s: refusing changes until a snapshot and a new journal can be written", err);
	return s->journal_stale ? -1 : 0;
}

void service_sync(struct service *s, bool sync_now)
{
	char err[512];

	static struct log_limit limit;

	if (s->journal && journal_flush(s->journal, sync_now && s->cfg->fsync != CONFIG_FSYNC_NO, err,
					sizeof(err)) < 0)
		log_limited(&limit, 60, LOG_LEVEL_ERROR, "%s", err);
}

/* ---- rebuilds ---- */

static void reply_to(struct service *s, uint64_t waiter, json_t *reply)
{
	struct control_client *cl = waiter && s->control ? control_find(s->control, waiter) : NULL;

	if (cl) {
		char *text = json_dumps(reply, JSON_COMPACT);
		if (text)
			control_reply(cl, text, strlen(text));
		free(text);
		control_release(cl);
	}
	json_decref(reply);
}

static json_t *rebuild_json(const struct rebuild_result *r)
{
	return json_pack("{s:b,s:f,s:f,s:i,s:s*}", "ok", r->ok, "seconds", r->seconds, "max_stall_ms",
			 r->stall_ms, "rounds", (int)r->rounds, "error", r->ok ? NULL : r->error);
}

static void rebuild_done(void *ctx, const struct rebuild_result *r)
{
	struct service *s = ctx;
	uint64_t waiter = s->rebuild_waiter;

	s->rebuild = NULL;
	s->rebuild_waiter = 0;
	s->rebuilds++;
	s->last_rebuild = *r;
	if (r->ok)
		log_info("rebuild done: %u rounds in %.2f s, the loop held for %.2f ms", r->rounds,
			 r->seconds, r->stall_ms);
	else
		log_error("rebuild failed (the filters are unchanged): %s", r->error);
	reply_to(s, waiter, rebuild_json(r));
}

int service_rebuild(struct service *s, unsigned rounds, uint64_t waiter, char *err, size_t errlen)
{
	if (s->rebuild) {
		error_set(err, errlen, "a rebuild is running already");
		return -1;
	}
	s->rebuild = rebuild_start(s->base, s->matcher, rounds, rebuild_done, s, err, errlen);
	if (s->rebuild == NULL)
		return -1;
	s->rebuild_waiter = waiter;
	return 0;
}

/* ---- sources ---- */

static double elapsed_ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

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
	double gap = elapsed_ms(&s->last_batch, &t);
	if (gap > s->replay_max_gap_ms)
		s->replay_max_gap_ms = gap;
	s->last_batch = t;
}

static void start_next_file(struct service *s);

#define MAX_SOURCES 1000 /* replays remembered in stats */

static void record_source(struct service *s, const char *name, uint64_t packets, const char *error)
{
	if (json_array_size(s->sources) >= MAX_SOURCES)
		json_array_remove(s->sources, 0);
	json_array_append_new(s->sources, json_pack("{s:s,s:I,s:s?}", "name", name, "packets",
						    (json_int_t)packets, "error", error));
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
	reply_to(s, it->waiter,
		 json_pack("{s:b,s:s,s:I,s:I,s:f,s:s*}", "ok", error == NULL, "file", it->path,
			   "packets", (json_int_t)packets, "matched",
			   (json_int_t)(s->engine.stats.matched_packets - s->replay_matched_before),
			   "max_gap_ms", s->replay_max_gap_ms, "error", error));
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
		s->replaying = capture_open_file(s->base, s->current->path, s->cfg->bpf, callbacks(s),
						 err, sizeof(err));
		if (s->replaying) {
			warn_unsupported_link(s->replaying);
			return;
		}
		finish_item(s, 0, err);
	}
	if (s->current == NULL && s->one_shot)
		event_base_loopexit(s->base, NULL);
}

int service_replay(struct service *s, const char *path, uint64_t waiter, char *err, size_t errlen)
{
	struct replay_item *it = calloc(1, sizeof(*it));

	if (it == NULL || (it->path = strdup(path)) == NULL) {
		free(it);
		error_set(err, errlen, "out of memory");
		return -1;
	}
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

int service_capture_live(struct service *s, const char *interface)
{
	struct capture_live_options o = {
		.interface = interface, .snaplen = s->cfg->snaplen, .promisc = s->cfg->promisc,
		.buffer_size = s->cfg->buffer_size, .bpf = s->cfg->bpf,
	};
	char err[512];

	s->live = capture_open_live(s->base, &o, callbacks(s), err, sizeof(err));
	if (s->live == NULL) {
		log_error("%s", err);
		return -1;
	}
	warn_unsupported_link(s->live);
	log_info("capturing on %s (%s)", interface, capture_link_name(s->live));
	return 0;
}

/* ---- housekeeping ---- */

static void expire_entries(struct service *s)
{
	static struct entry e;
	uint64_t now = now_s();

	while (ttl_pop_expired(s->ttl, now, &e) == 1) {
		matcher_remove(s->matcher, &e);
		journal_op(s, PERSIST_DEL, &e, 0, NULL, 0);
	}
}

#define PROBLEM_REPORT_SECONDS 60

/*
 * Malformed packets and kernel drops are counted per packet, never logged
 * one by one: at most once a minute, one warning says how many there were.
 */
static void report_packet_problems(struct service *s)
{
	char text[768];
	size_t len = 0;
	time_t now = time(NULL);
	uint64_t received, dropped, if_dropped;

	if (now - s->problems_reported < PROBLEM_REPORT_SECONDS)
		return;
	for (int st = PACKET_OK + 1; st < PACKET_STATUS_COUNT; st++) {
		uint64_t delta = s->engine.stats.status[st] - s->problems_seen[st];
		s->problems_seen[st] = s->engine.stats.status[st];
		if (delta == 0 || st == PACKET_NOT_IP || len >= sizeof(text) - 64)
			continue;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%llu %s", len ? ", " : "",
					(unsigned long long)delta, packet_status_name((enum packet_status)st));
	}
	if (len) {
		log_warning("packets not checked in full since the last report: %s (see stats, parse)", text);
		s->problems_reported = now;
	}
	if (s->live && capture_stats(s->live, &received, &dropped, &if_dropped) == 0 &&
	    dropped + if_dropped > s->drops_seen) {
		log_warning("the kernel dropped %llu packets since the last report (more [capture] buffer_size?)",
			    (unsigned long long)(dropped + if_dropped - s->drops_seen));
		s->drops_seen = dropped + if_dropped;
		s->problems_reported = now;
	}
}

static void housekeeping_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	char err[512];

	(void)fd;
	(void)what;
	expire_entries(s);
	service_sync(s, true); /* everysec's second; with always, the expiries */
	report_packet_problems(s);
	if (s->cfg->auto_rebuild && s->rebuild == NULL &&
	    matcher_rebuild_wanted(s->matcher, s->cfg->fpr_target)) {
		log_info("rebuilding: the filters have outgrown their shape");
		if (service_rebuild(s, matcher_rounds(s->matcher), 0, err, sizeof(err)) < 0)
			log_error("auto-rebuild: %s", err);
	}
	if (s->journal && (journal_bytes(s->journal) > s->cfg->journal_max || s->journal_stale) &&
	    service_save(s, err, sizeof(err)) < 0)
		log_error("snapshot: %s", err);
}

/* ---- start and stop ---- */

int service_start(struct service *s, struct event_base *base, const struct control_options *control)
{
	char err[512];
	struct timeval second = { .tv_sec = 1 };

	s->base = base;
	s->sources = json_array();
	s->events = events_open(s->cfg->events, s->cfg->pcap, s->cfg->snaplen, err, sizeof(err));
	if (s->events == NULL || s->sources == NULL) {
		log_error("%s", s->events ? "out of memory" : err);
		return -1;
	}
	s->engine.matcher = s->matcher;
	s->engine.events = s->events;
	if (control) {
		s->control = control_open(base, control, err, sizeof(err));
		if (s->control == NULL) {
			log_error("%s", err);
			return -1;
		}
	}
	s->housekeeping = event_new(base, -1, EV_PERSIST, housekeeping_cb, s);
	if (s->housekeeping == NULL || event_add(s->housekeeping, &second) < 0)
		return -1;
	return 0;
}

void service_stop(struct service *s)
{
	char err[512];

	rebuild_cancel(s->rebuild);
	s->rebuild = NULL;
	control_close(s->control);
	s->control = NULL;
	if (s->base && s->journal && journal_records(s->journal) > 0 && service_save(s, err, sizeof(err)) < 0)
		log_error("final snapshot: %s (the journal keeps the changes)", err);
	if (s->journal)
		service_sync(s, true);
	journal_close(s->journal);
	capture_free(s->replaying);
	capture_free(s->live);
	if (s->current) {
		free(s->current->path);
		free(s->current);
	}
	while (s->queue) {
		struct replay_item *next = s->queue->next;
		free(s->queue->path);
		free(s->queue);
		s->queue = next;
	}
	if (s->housekeeping)
		event_free(s->housekeeping);
	events_close(s->events);
	matcher_free(s->matcher);
	ttl_free(s->ttl);
	json_decref(s->sources);
}

/* ---- reload, reopen, stats ---- */

int service_reopen(struct service *s, char *err, size_t errlen)
{
	struct events *ev = events_open(s->cfg->events, s->cfg->pcap, s->cfg->snaplen, err, errlen);

	if (ev == NULL)
		return -1;
	s->engine.stats.pcap_skipped += events_pcap_skipped(s->events);
	events_close(s->events);
	s->events = s->engine.events = ev;
	return 0;
}

static void collect_problem(void *ctx, const char *message)
{
	json_array_append_new(ctx, json_string(message));
}

static bool same_string(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static void swap_strings(char **a, char **b)
{
	char *t = *a;

	*a = *b;
	*b = t;
}

static bool same_files(const struct config *a, const struct config *b)
{
	if (a->nfiles != b->nfiles)
		return false;
	for (size_t i = 0; i < a->nfiles; i++)
		if (strcmp(a->files[i], b->files[i]) != 0)
			return false;
	return true;
}

static void swap_files(struct config *a, struct config *b)
{
	char **files = a->files;
	size_t n = a->nfiles;

	a->files = b->files;
	a->nfiles = b->nfiles;
	b->files = files;
	b->nfiles = n;
}

/*
 * Settings read once at start: a reload keeps the running ones and says so.
 * Swapping is its own inverse, so a refused reload calls this again to undo it.
 */
static void keep_start_settings(struct config *running, struct config *fresh, json_t *restart)
{
	if (fresh->window != running->window || fresh->hash != running->hash)
		json_array_append_new(restart, json_string("[signatures] window and [filter] hash"));
	fresh->window = running->window;
	fresh->hash = running->hash;
	if (!same_string(fresh->socket, running->socket) || !same_string(fresh->group, running->group) ||
	    fresh->max_clients != running->max_clients || fresh->idle_timeout != running->idle_timeout)
		json_array_append_new(restart, json_string("[control]"));
	swap_strings(&fresh->socket, &running->socket);
	swap_strings(&fresh->group, &running->group);
	fresh->max_clients = running->max_clients;
	fresh->idle_timeout = running->idle_timeout;
	if (!same_string(fresh->store_dir, running->store_dir))
		json_array_append_new(restart, json_string("[store] dir"));
	swap_strings(&fresh->store_dir, &running->store_dir);
	if (!same_string(fresh->interface, running->interface) || !same_files(fresh, running) ||
	    !same_string(fresh->bpf, running->bpf) || fresh->snaplen != running->snaplen ||
	    fresh->promisc != running->promisc || fresh->buffer_size != running->buffer_size)
		json_array_append_new(restart, json_string("[capture]"));
	swap_strings(&fresh->interface, &running->interface);
	swap_files(fresh, running);
	swap_strings(&fresh->bpf, &running->bpf);
	fresh->snaplen = running->snaplen;
	fresh->promisc = running->promisc;
	fresh->buffer_size = running->buffer_size;
}

int service_reload(struct service *s, json_t **problems)
{
	json_t *found = json_array(), *restart = json_array();
	struct config *fresh = config_load(s->cfg->path, collect_problem, found), *old = s->cfg;
	struct match_config mc;
	struct loading ld = { .s = s, .now = now_s() };
	char err[512];
	int changed;

	*problems = found;
	if (fresh == NULL) {
		json_decref(restart);
		return -1;
	}
	keep_start_settings(old, fresh, restart);
	mc = match_config_of(fresh);
	if ((changed = matcher_reconfigure(s->matcher, &mc, err, sizeof(err))) < 0) {
		json_array_append_new(found, json_string(err));
		goto refuse;
	}
	if (!same_string(fresh->user, old->user))
		json_array_append_new(restart, json_string("[service] user"));
	s->cfg = fresh;
	log_setup(fresh->log_level, fresh->log_target);
	if ((!same_string(fresh->events, old->events) || !same_string(fresh->pcap, old->pcap)) &&
	    service_reopen(s, err, sizeof(err)) < 0) {
		s->cfg = old;
		json_array_append_new(found, json_string(err));
		goto refuse;
	}
	config_free(old);
	for (size_t i = 0; i < fresh->nentry_files; i++)
		entry_list_load(fresh->entry_files[i], add_listed, list_problem, &ld);
	if (ld.problems)
		json_array_append_new(found, json_sprintf("%u bad lines in the entry lists (logged); the rest was loaded", ld.problems));
	if (changed && s->rebuild == NULL && service_rebuild(s, matcher_rounds(s->matcher), 0, err, sizeof(err)) < 0)
		log_error("rebuild after reload: %s", err);
	if (json_array_size(restart))
		log_warning("reload: some settings take effect at the next restart");
	log_info("configuration reloaded: %llu entries added from the lists", (unsigned long long)ld.added);
	json_decref(found);
	*problems = json_pack("{s:I,s:b,s:o}", "added", (json_int_t)ld.added, "rebuild", changed > 0,
			      "restart_needed", restart);
	return 0;
refuse:
	keep_start_settings(old, fresh, restart); /* swaps the running strings back */
	config_free(fresh);
	json_decref(restart);
	return -1;
}

json_t *service_stats(struct service *s)
{
	struct stats st = s->engine.stats;
	uint64_t received, dropped, if_dropped;
	json_t *o;

	st.pcap_skipped += events_pcap_skipped(s->events);
	o = stats_json(&st, s->matcher);
	json_object_set_new(o, "uptime_seconds", json_integer((json_int_t)(time(NULL) - s->started)));
	json_object_set_new(o, "ttl_entries", json_integer((json_int_t)ttl_count(s->ttl)));
	json_object_set_new(o, "rebuild",
			    json_pack("{s:b,s:I,s:o}", "running", s->rebuild != NULL, "count",
				      (json_int_t)s->rebuilds, "last",
				      s->rebuilds ? rebuild_json(&s->last_rebuild) : json_null()));
	if (s->journal)
		json_object_set_new(o, "store",
				    json_pack("{s:s,s:I,s:I,s:I,s:s}", "dir", s->cfg->store_dir, "generation",
					      (json_int_t)s->generation, "journal_records",
					      (json_int_t)journal_records(s->journal), "journal_bytes",
					      (json_int_t)journal_bytes(s->journal), "fsync",
					      config_fsync_name(s->cfg->fsync)));
	if (s->control)
		json_object_set_new(o, "control", json_pack("{s:i,s:I}", "clients", (int)control_clients(s->control),
							    "rejected", (json_int_t)control_rejected(s->control)));
	if (s->live && capture_stats(s->live, &received, &dropped, &if_dropped) == 0)
		json_object_set_new(o, "capture", json_pack("{s:s,s:I,s:I,s:I}", "interface", capture_name(s->live),
							    "received", (json_int_t)received, "dropped",
							    (json_int_t)dropped, "if_dropped", (json_int_t)if_dropped));
	json_object_set(o, "sources", s->sources);
	return o;
}
