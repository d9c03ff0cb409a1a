/* service_state.c - the daemon's durable state: loading it, snapshots, the journal's sync, rebuilds. */
#include "service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "error.h"
#include "log.h"
#include "packet.h"
#include "service_internal.h"
#include "stats.h"

/* ---- loading ---- */

struct loading {
	struct service *s;
	const struct persist_header *h;
	uint64_t now;
};

static int make_matcher(struct service *s, const struct hash_key *keys)
{
	struct match_config mc = service_match_config(s->cfg);
	char err[256];

	mc.keys = keys;
	if (keys)
		mc.algo = keys[0].algo;
	s->matcher = matcher_new(&mc, err, sizeof(err));
	if (s->matcher == NULL)
		log_error("%s", err);
	else if (s->engine.scratch == NULL && (s->engine.scratch = matcher_scratch_new()) == NULL)
		log_error("out of memory for the loop's scratch");
	return s->matcher && s->engine.scratch ? 0 : -1;
}

_Static_assert(PERSIST_WINDOW_UNKNOWN == MATCH_WINDOW_ANY, "a snapshot that does not say lets the matcher choose");

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
	if (matcher_add_restored(s->matcher, e, group, window, err, sizeof(err)) < 0 ||
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
		uint32_t left;
		matcher_release(s->matcher, e, MATCH_HOLDER_DEFAULT, &left);
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
	struct journal_recovery how;
	int rc;

	if (statedir_open(&s->state, dir, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	ld->h = &h;
	rc = snapshot_read(&s->state, &h, restore_entry, ld, err, sizeof(err));
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
	s->journal = journal_open(&s->state, s->generation, replay_record, ld, &how, err, sizeof(err));
	if (s->journal == NULL && how.read_only) {
		log_error("%s: the journal is intact and left as it is, but bloomd must write beside it: remount the file system holding %s read-write",
			  err, dir);
		return -1;
	}
	if (s->journal == NULL) {
		log_error("%s; it is left as it is: restore it from a backup, or move it away to start from the snapshot without the changes made since",
			  err);
		return -1;
	}
	if (how.torn_bytes)
		log_warning("%s/journal: its last record was torn (a crash while writing it): its %zu bytes are dropped",
			    dir, how.torn_bytes);
	if (how.missing)
		log_warning("%s/journal is missing beside snapshot generation %llu: any change made since that snapshot is lost; starting from the snapshot",
			    dir, (unsigned long long)s->generation);
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
	s->started = time(NULL);
	if ((s->ttl = ttl_new()) == NULL)
		return -1;
	if (use_store && cfg->store_dir && !check_only) {
		if (load_state(s, &ld) < 0)
			return -1;
	} else if (make_matcher(s, NULL) < 0) {
		return -1;
	}
	if (service_thresholds_load(cfg, &s->thresholds, log_problem, NULL) < 0)
		return -1;
	/* A list that is refused or cannot be read is logged and left out (or kept from the state): bloomd starts. */
	if (service_lists_load(s, cfg, true, refused) < 0)
		return -1;
	if (check_only)
		return 0;
	if (service_action_open(s) < 0)
		return -1;
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

/* The snapshot holds the local list; the other lists come from their files (or lists/ beside it). */
static int save_entry(void *ctx, const struct entry *e, unsigned group, unsigned window, uint32_t holders)
{
	struct saving *sv = ctx;

	if (!(holders & MATCH_HOLDER_DEFAULT))
		return 0;
	return snapshot_put(sv->w, e, group, window, ttl_get(sv->ttl, e));
}

static int save_state(struct service *s, char *err, size_t errlen)
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
	sv.w = snapshot_begin(&s->state, &h, err, errlen);
	if (sv.w == NULL)
		return -1;
	if (matcher_foreach_placed(s->matcher, 0, save_entry, &sv) != 0) {
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
	if (s->journal_stale) {
		log_error("%s: refusing changes until a snapshot and a new journal can be written", err);
		return -1;
	}
	if (s->store_error[0] && s->lists_unkept == 0) {
		log_info("a snapshot and a new journal are written: changes are accepted again");
		s->store_error[0] = '\0';
	}
	return 0;
}

int service_give_state(struct service *s, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	return statedir_give(&s->state, uid, gid, err, errlen);
}

int service_save(struct service *s, char *err, size_t errlen)
{
	int rc = save_state(s, err, errlen);

	if (s->journal) {
		s->last_save = time(NULL);
		s->last_save_ok = rc == 0;
	}
	return rc;
}

int service_sync(struct service *s, bool sync_now)
{
	char err[512];

	if (s->journal == NULL)
		return 0;
	/* With [cluster], a change is durable once in the journal and in the outbox alike. */
	if (journal_flush(s->journal, sync_now && s->cfg->fsync != CONFIG_FSYNC_NO, err, sizeof(err)) < 0 ||
	    (s->cluster && cluster_outbox_error(s->cluster, err, sizeof(err)) < 0)) {
		if (s->store_error[0] == '\0')
			log_error("%s: changes are refused until the state can be written again", err);
		snprintf(s->store_error, sizeof(s->store_error), "%s", err);
		return -1;
	}
	if (s->store_error[0] && s->lists_unkept == 0) {
		log_info("the state is written again: changes are accepted");
		s->store_error[0] = '\0';
	}
	return 0;
}

/* ---- rebuilds ---- */

json_t *service_rebuild_json(const struct rebuild_result *r)
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
	service_reply_to(s, waiter, service_rebuild_json(r));
	if (s->rebuild_again) {
		char err[256];
		s->rebuild_again = false;
		log_info("rebuilding again: the filter settings changed during that rebuild");
		if (service_rebuild(s, matcher_rounds(s->matcher), 0, err, sizeof(err)) < 0)
			log_error("rebuild after reload: %s", err);
	}
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
