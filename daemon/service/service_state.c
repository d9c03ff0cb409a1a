/* service_state.c - the daemon's state ([store]): loading it, snapshots, the journal's sync. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "error.h"
#include "log.h"
#include "packet.h"
#include "service_internal.h"
#include "state_fork.h"
#include "stats.h"

/* ---- loading ---- */

struct loading {
	struct service *s;
	const struct state_header *h;
	uint64_t now;
};

static int make_matcher(struct service *s, const struct hash_key *keys)
{
	char err[256];

	s->matcher = lists_matcher_new(s->cfg, keys, err, sizeof(err));
	if (s->matcher == NULL)
		log_error("%s", err);
	else if (s->engine.scratch == NULL && (s->engine.scratch = matcher_scratch_new()) == NULL)
		log_error("out of memory for the loop's scratch");
	return s->matcher && s->engine.scratch ? 0 : -1;
}

static int restore_entry(void *ctx, const struct entry *e, unsigned group, unsigned window, uint64_t expiry)
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
	if (lists_restore_entry(s->matcher, e, group, window, err, sizeof(err)) < 0 ||
	    state_ttl_set(s->state.ttl, e, expiry) < 0) {
		log_error("snapshot: %s", err);
		return -1;
	}
	return 0;
}

static int replay_record(void *ctx, enum state_op op, const struct entry *e, uint64_t expiry)
{
	struct loading *ld = ctx;
	struct service *s = ld->s;
	char err[256], text[ENTRY_TEXT_MAX];

	if (op == STATE_DEL || (expiry && expiry <= ld->now)) {
		uint32_t left;
		lists_local_release(s->matcher, e, &left);
		state_ttl_set(s->state.ttl, e, 0);
		return 0;
	}
	if (lists_local_hold(s->matcher, e, err, sizeof(err)) < 0 || state_ttl_set(s->state.ttl, e, expiry) < 0) {
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
	struct state_header h;
	char err[512];
	struct state_journal_recovery how;
	int rc;

	if (state_dir_open(&s->state.dir, dir, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	ld->h = &h;
	rc = state_snapshot_read(&s->state.dir, &h, restore_entry, ld, err, sizeof(err));
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
	s->state.restored = rc == 0;
	if (rc == 0) {
		struct filter_params params[2] = { h.filter[0].params, h.filter[1].params };
		if (lists_build(s->matcher, params, err, sizeof(err)) < 0) {
			log_error("%s", err);
			return -1;
		}
		if (h.algo != s->cfg->hash)
			log_warning("the state was made with hash %s, which it keeps; [filter] hash applies to a new state directory",
				    hash_algo_name(h.algo));
	}
	s->state.generation = h.generation;
	s->state.journal = state_journal_open(&s->state.dir, s->state.generation, replay_record, ld, &how, err, sizeof(err));
	if (s->state.journal == NULL && how.read_only) {
		log_error("%s: the journal is intact and left as it is, but bloomd must write beside it: remount the file system holding %s read-write",
			  err, dir);
		return -1;
	}
	if (s->state.journal == NULL) {
		log_error("%s; it is left as it is: restore it from a backup, or move it away to start from the snapshot without the changes made since",
			  err);
		return -1;
	}
	if (how.torn_bytes)
		log_warning("%s/%s: its last record was torn (a crash while writing it): its %zu bytes are dropped",
			    dir, how.torn_file, how.torn_bytes);
	if (how.unfinished_save)
		log_warning("%s/journal.tmp: bloomd stopped while a snapshot was written: the changes made meanwhile are replayed after the journal's, and the snapshot is written again",
			    dir);
	if (how.missing)
		log_warning("%s/journal is missing beside snapshot generation %llu: any change made since that snapshot is lost; starting from the snapshot",
			    dir, (unsigned long long)s->state.generation);
	return 0;
}

static void log_problem(void *ctx, const char *message)
{
	(void)ctx;
	log_error("%s", message);
}

int service_load(struct service *s, struct config *cfg, bool use_store, bool check_only,
		 unsigned *refused)
{
	struct loading ld = { .s = s, .now = service_now() };
	char err[512];

	s->cfg = cfg;
	if ((s->state.ttl = state_ttl_new()) == NULL)
		return -1;
	if (use_store && cfg->store_dir && !check_only) {
		if (load_state(s, &ld) < 0)
			return -1;
	} else if (make_matcher(s, NULL) < 0) {
		return -1;
	}
	if (service_thresholds_load(cfg, &s->engine.thresholds, log_problem, NULL) < 0)
		return -1;
	/* A list that is refused or cannot be read is logged and left out (or kept from the state): bloomd starts. */
	uint64_t restored = matcher_entries_all(s->matcher);
	if (service_lists_load(s, cfg, refused) < 0)
		return -1;
	/* The snapshot holds the local list: the lists' entries went into its filters online. */
	if (s->state.restored && matcher_entries_all(s->matcher) > restored)
		lists_placed_online(s->matcher);
	if (check_only)
		return 0;
	if (service_action_open(s) < 0)
		return -1;
	/*
	 * Without a snapshot the filters are built here by online insertion, a
	 * pass: bloomd protects at once, and the offline rounds follow in a
	 * background rebuild once it runs (service_rebuild_optimise).
	 */
	if (!s->state.restored && lists_build(s->matcher, NULL, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	service_sync(s, true);
	return 0;
}

/* ---- snapshots ---- */

/*
 * A snapshot is written by a child (state_fork.h) from the daemon's memory as
 * it was at the fork, while the loop goes on: the changes made meanwhile go
 * to the journal of the snapshot being written (state_journal_divert), so the
 * snapshot and that journal hold everything together, crash or not.
 */

#define SAVE_RETRY_SECONDS 10
/* A snapshot that keeps failing (a full disk) is tried again at doubling waits, up to this. */
#define SNAPSHOT_RETRY_MAX_SECONDS 600

struct saving {
	struct state_snapshot_writer *w;
	const struct state_ttl *ttl;
};

/* The snapshot holds the local list; the other lists come from their files (or lists/ beside it). */
static int save_entry(void *ctx, const struct entry *e, unsigned group, unsigned window, uint32_t holders)
{
	struct saving *sv = ctx;

	if (!(holders & MATCHER_HOLDER_DEFAULT))
		return 0;
	return state_snapshot_put(sv->w, e, group, window, state_ttl_get(sv->ttl, e));
}

/* The snapshot of generation gen, written and committed. */
static int save_write(struct service *s, uint64_t gen, char *err, size_t errlen)
{
	struct state_header h = { .generation = gen, .window = s->cfg->window };
	struct hash_key keys[2];
	struct saving sv = { .ttl = s->state.ttl };

	matcher_keys(s->matcher, keys);
	h.algo = keys[0].algo;
	for (int i = 0; i < 2; i++) {
		h.filter[i].present = matcher_params(s->matcher, i, &h.filter[i].params);
		h.filter[i].key = keys[i];
	}
	sv.w = state_snapshot_begin(&s->state.dir, &h, err, errlen);
	if (sv.w == NULL)
		return -1;
	if (matcher_foreach_placed(s->matcher, 0, save_entry, &sv) != 0) {
		error_set(err, errlen, "%s/snapshot.tmp: write error", s->cfg->store_dir);
		state_snapshot_abort(sv.w);
		return -1;
	}
	return state_snapshot_commit(sv.w, err, errlen);
}

/* From here the next snapshot's journal takes the changes (still, if an earlier try left it so). */
static int save_divert(struct service *s, char *err, size_t errlen)
{
	struct state_journal *j = s->state.journal;

	if (j == NULL) {
		error_set(err, errlen, "no state is kept: set [store] dir");
		return -1;
	}
	if (s->state.journal_stale) {
		error_set(err, errlen, "%s", service_store_error(s));
		return -1;
	}
	if (state_journal_diverted(j))
		return 0;
	/* What the old journal holds reaches the disk as the fsync policy says, as if it stayed. */
	service_sync(s, true);
	if (state_journal_prepare(j, s->state.generation + 1, err, errlen) < 0)
		return -1;
	return state_journal_divert(j, err, errlen);
}

/* The next generation's snapshot is in: its journal takes over (that alone, when an earlier switch failed). */
static int save_done(struct service *s, char *err, size_t errlen)
{
	struct service_state *d = &s->state;

	if (!d->journal_stale)
		d->generation++;
	/* Refused until the switch is made: a start reads the new snapshot with the old journal ignored. */
	d->journal_stale = state_journal_switch(d->journal, err, errlen) < 0;
	if (d->journal_stale) {
		log_error("%s: refusing changes until a snapshot and a new journal can be written", err);
		return -1;
	}
	if (d->store_error[0] && d->lists_unkept == 0 && !state_journal_broken(d->journal)) {
		log_info("a snapshot and a new journal are written: changes are accepted again");
		d->store_error[0] = '\0';
	}
	return 0;
}

/* In one go, on the loop (at stop). */
static int save_now(struct service *s, char *err, size_t errlen)
{
	struct service_state *d = &s->state;
	int rc;

	if (d->journal_stale)
		rc = save_done(s, err, errlen);
	else
		rc = save_divert(s, err, errlen) < 0 || save_write(s, d->generation + 1, err, errlen) < 0 ? -1 :
		     save_done(s, err, errlen);
	d->last_save = time(NULL);
	d->last_save_ok = rc == 0;
	return rc;
}

static json_t *save_reply(struct service *s, int rc, const char *err)
{
	if (rc < 0)
		return json_pack("{s:b,s:s+}", "ok", false, "error", "save: ", err);
	return json_pack("{s:b,s:I}", "ok", true, "generation", (json_int_t)s->state.generation);
}

static int save_job(void *ctx, char *err, size_t errlen)
{
	struct service *s = ctx;

	return save_write(s, s->state.generation + 1, err, errlen);
}

static void save_start(struct service *s);

/* A snapshot is in (rc 0) or not (err): said, its waiters told; those asked for meanwhile get the next. */
static void save_finished(struct service *s, int rc, const char *err)
{
	struct service_state *d = &s->state;

	d->last_save = time(NULL);
	d->last_save_ok = rc == 0;
	d->snapshot_failures = rc < 0 ? d->snapshot_failures + 1 : 0;
	if (rc < 0 && !d->journal_stale) {
		/* Each try forks and writes everything while journal.tmp grows: the waits double. */
		unsigned shift = d->snapshot_failures - 1 < 6 ? d->snapshot_failures - 1 : 6;
		int wait = SAVE_RETRY_SECONDS << shift;
		if (wait > SNAPSHOT_RETRY_MAX_SECONDS)
			wait = SNAPSHOT_RETRY_MAX_SECONDS;
		log_error("snapshot: %s (tried again in %d s)", err, wait);
		d->next_snapshot_try = time(NULL) + wait;
	}
	json_t *reply = save_reply(s, rc, err);
	/* Those asked for while that one was written: their changes may not be in it. */
	bool again = service_waiters_tell(s, &d->save_waiting, &d->save_again, reply);
	json_decref(reply);
	if (again)
		save_start(s);
}

static void save_ended(void *ctx, const char *error)
{
	struct service *s = ctx;
	char err[512];
	int rc = -1;

	s->state.saver = NULL;
	if (error)
		snprintf(err, sizeof(err), "%s", error);
	else
		rc = save_done(s, err, sizeof(err));
	save_finished(s, rc, err);
}

/* A snapshot begun, by a child; by the loop itself if none can be started (fork refused for memory). */
static void save_start(struct service *s)
{
	struct service_state *d = &s->state;
	char err[512];

	if (save_divert(s, err, sizeof(err)) < 0) {
		save_finished(s, -1, err);
		return;
	}
	d->saver = state_fork_start(s->base, save_job, save_ended, s, err, sizeof(err));
	if (d->saver)
		return;
	log_warning("snapshot: %s: it is written in the loop instead", err);
	int rc = save_write(s, d->generation + 1, err, sizeof(err)) < 0 ? -1 : save_done(s, err, sizeof(err));
	save_finished(s, rc, err);
}

int service_give_state(struct service *s, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	return state_dir_give(&s->state.dir, uid, gid, err, errlen);
}

int service_save(struct service *s, uint64_t waiter, char *err, size_t errlen)
{
	struct service_state *d = &s->state;
	bool running = d->saver != NULL;

	if (d->journal == NULL) {
		error_set(err, errlen, "no state is kept: set [store] dir");
		return -1;
	}
	/* The one being written may have begun before a change this waiter wants in: it waits for the next. */
	if (service_waiters_add(running ? &d->save_again : &d->save_waiting, waiter) < 0) {
		error_set(err, errlen, "out of memory");
		return -1;
	}
	if (!running)
		save_start(s);
	return 0;
}

int service_sync(struct service *s, bool sync_now)
{
	char err[512];

	if (s->state.journal == NULL)
		return 0;
	/* With [cluster], a change is durable once in the journal and in the outbox alike. */
	if (state_journal_flush(s->state.journal, sync_now && s->cfg->fsync != CONFIG_FSYNC_NO, err, sizeof(err)) < 0 ||
	    service_cluster_outbox_error(s, err, sizeof(err)) < 0) {
		if (s->state.store_error[0] == '\0')
			log_error("%s: changes are refused until the state can be written again", err);
		snprintf(s->state.store_error, sizeof(s->state.store_error), "%s", err);
		return -1;
	}
	if (s->state.store_error[0] && s->state.lists_unkept == 0) {
		log_info("the state is written again: changes are accepted");
		s->state.store_error[0] = '\0';
	}
	return 0;
}

void service_state_housekeeping(struct service *s)
{
	struct service_state *d = &s->state;
	char err[512];

	if (d->lists_unkept && time(NULL) >= d->next_save_try) {
		service_lists_keep_again(s);
		d->next_save_try = time(NULL) + SAVE_RETRY_SECONDS;
	}
	if (d->journal == NULL || d->saver)
		return;
	if (d->journal_stale) {
		(void)save_done(s, err, sizeof(err));
		return;
	}
	/* Past journal_max, a journal whose fsync failed, or a start that found a snapshot cut short. */
	bool wanted = state_journal_bytes(d->journal) > s->cfg->journal_max || state_journal_broken(d->journal) ||
		      state_journal_diverted(d->journal);
	if (wanted && time(NULL) >= d->next_snapshot_try)
		save_start(s);
}

void service_state_close(struct service *s)
{
	struct service_state *d = &s->state;
	char err[512];

	/* The control socket is closed: nobody is left to hear of a snapshot, or to want another. */
	service_waiters_free(&d->save_again);
	state_fork_finish(d->saver);
	service_waiters_free(&d->save_waiting);
	if (s->base && d->journal && (state_journal_records(d->journal) > 0 || state_journal_diverted(d->journal)) &&
	    save_now(s, err, sizeof(err)) < 0)
		log_error("final snapshot: %s (the journal keeps the changes)", err);
	if (d->journal)
		service_sync(s, true);
	state_journal_close(d->journal);
	d->journal = NULL;
	state_dir_close(&d->dir);
}
