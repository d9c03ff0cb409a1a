/* service_state.c - the daemon's durable state: loading it, snapshots, the journal's sync. */
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
	    ttl_set(s->durable.ttl, e, expiry) < 0) {
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
		ttl_set(s->durable.ttl, e, 0);
		return 0;
	}
	if (matcher_add(s->matcher, e, err, sizeof(err)) < 0 || ttl_set(s->durable.ttl, e, expiry) < 0) {
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

	if (statedir_open(&s->durable.dir, dir, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	ld->h = &h;
	rc = snapshot_read(&s->durable.dir, &h, restore_entry, ld, err, sizeof(err));
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
	s->durable.restored = rc == 0;
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
	s->durable.generation = h.generation;
	s->durable.journal = journal_open(&s->durable.dir, s->durable.generation, replay_record, ld, &how, err, sizeof(err));
	if (s->durable.journal == NULL && how.read_only) {
		log_error("%s: the journal is intact and left as it is, but bloomd must write beside it: remount the file system holding %s read-write",
			  err, dir);
		return -1;
	}
	if (s->durable.journal == NULL) {
		log_error("%s; it is left as it is: restore it from a backup, or move it away to start from the snapshot without the changes made since",
			  err);
		return -1;
	}
	if (how.torn_bytes)
		log_warning("%s/journal: its last record was torn (a crash while writing it): its %zu bytes are dropped",
			    dir, how.torn_bytes);
	if (how.missing)
		log_warning("%s/journal is missing beside snapshot generation %llu: any change made since that snapshot is lost; starting from the snapshot",
			    dir, (unsigned long long)s->durable.generation);
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
	if ((s->durable.ttl = ttl_new()) == NULL)
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
	if (s->durable.restored && matcher_entries_all(s->matcher) > restored)
		matcher_placed_online(s->matcher);
	if (check_only)
		return 0;
	if (service_action_open(s) < 0)
		return -1;
	/*
	 * Without a snapshot the filters are built here by online insertion, a
	 * pass: bloomd protects at once, and the offline rounds follow in a
	 * background rebuild once it runs (service_rebuild_optimise).
	 */
	if (!s->durable.restored && matcher_build_online(s->matcher, err, sizeof(err)) < 0) {
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
	struct persist_header h = { .generation = s->durable.generation + 1, .window = s->cfg->window };
	struct hash_key keys[2];
	struct saving sv = { .ttl = s->durable.ttl };

	if (s->durable.journal == NULL) {
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
	if (journal_prepare(s->durable.journal, h.generation, err, errlen) < 0)
		return -1;
	sv.w = snapshot_begin(&s->durable.dir, &h, err, errlen);
	if (sv.w == NULL)
		return -1;
	if (matcher_foreach_placed(s->matcher, 0, save_entry, &sv) != 0) {
		error_set(err, errlen, "%s/snapshot.tmp: write error", s->cfg->store_dir);
		snapshot_abort(sv.w);
		return -1;
	}
	if (snapshot_commit(sv.w, err, errlen) < 0)
		return -1;
	s->durable.generation++;
	/* The new snapshot holds everything: a crash from here on leaves an older journal, ignored. */
	/*
	 * If the new journal cannot take over, changes appended to the old one
	 * would be ignored after a restart: refuse them until a save succeeds.
	 */
	s->durable.journal_stale = journal_switch(s->durable.journal, err, errlen) < 0;
	if (s->durable.journal_stale) {
		log_error("%s: refusing changes until a snapshot and a new journal can be written", err);
		return -1;
	}
	if (s->durable.store_error[0] && s->durable.lists_unkept == 0) {
		log_info("a snapshot and a new journal are written: changes are accepted again");
		s->durable.store_error[0] = '\0';
	}
	return 0;
}

int service_give_state(struct service *s, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	return statedir_give(&s->durable.dir, uid, gid, err, errlen);
}

int service_save(struct service *s, char *err, size_t errlen)
{
	int rc = save_state(s, err, errlen);

	if (s->durable.journal) {
		s->durable.last_save = time(NULL);
		s->durable.last_save_ok = rc == 0;
	}
	return rc;
}

int service_sync(struct service *s, bool sync_now)
{
	char err[512];

	if (s->durable.journal == NULL)
		return 0;
	/* With [cluster], a change is durable once in the journal and in the outbox alike. */
	if (journal_flush(s->durable.journal, sync_now && s->cfg->fsync != CONFIG_FSYNC_NO, err, sizeof(err)) < 0 ||
	    service_fleet_outbox_error(s, err, sizeof(err)) < 0) {
		if (s->durable.store_error[0] == '\0')
			log_error("%s: changes are refused until the state can be written again", err);
		snprintf(s->durable.store_error, sizeof(s->durable.store_error), "%s", err);
		return -1;
	}
	if (s->durable.store_error[0] && s->durable.lists_unkept == 0) {
		log_info("the state is written again: changes are accepted");
		s->durable.store_error[0] = '\0';
	}
	return 0;
}

#define SAVE_RETRY_SECONDS 10

void service_durable_housekeeping(struct service *s)
{
	struct service_durable *d = &s->durable;
	char err[512];

	if (d->journal && (journal_bytes(d->journal) > s->cfg->journal_max || d->journal_stale) &&
	    !journal_broken(d->journal) && service_save(s, err, sizeof(err)) < 0)
		log_error("snapshot: %s", err);
	if (d->lists_unkept && time(NULL) >= d->next_save_try) {
		service_lists_keep_again(s);
		d->next_save_try = time(NULL) + SAVE_RETRY_SECONDS;
	}
	/* A failed fsync: only a snapshot and a new journal make the state durable again. */
	if (d->journal && journal_broken(d->journal) && time(NULL) >= d->next_save_try) {
		if (service_save(s, err, sizeof(err)) < 0) {
			log_error("snapshot to replace the journal whose fsync failed: %s (tried again in %d s)", err,
				  SAVE_RETRY_SECONDS);
			d->next_save_try = time(NULL) + SAVE_RETRY_SECONDS;
		}
	}
}

void service_durable_close(struct service *s)
{
	char err[512];

	if (s->base && s->durable.journal && journal_records(s->durable.journal) > 0 && service_save(s, err, sizeof(err)) < 0)
		log_error("final snapshot: %s (the journal keeps the changes)", err);
	if (s->durable.journal)
		service_sync(s, true);
	journal_close(s->durable.journal);
	s->durable.journal = NULL;
	statedir_close(&s->durable.dir);
}
