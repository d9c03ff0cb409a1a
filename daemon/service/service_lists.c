/* service_lists.c - the daemon's entry lists: loaded at start and reload, replaced, flushed, kept. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"


/* ---- kept versions ---- */

/* The entries held by holder as entry lines, with their labels from label_slot (caller frees), or NULL. */
static char *entries_text(struct service *s, uint32_t holder, unsigned label_slot, size_t *len)
{
	struct service_list_lines sl = { .s = s, .holder = holder, .label_slot = label_slot };
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (f == NULL)
		return NULL;
	sl.f = f;
	int rc = matcher_foreach(s->matcher, 0, service_list_line, &sl);
	if (fclose(f) != 0 || rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* List i's version as entry lines (caller frees), or NULL. */
static char *version_text(struct service *s, int i, size_t *len)
{
	return entries_text(s, 1u << i, (unsigned)i, len);
}

/* Keep text (entry lines) as list i's version. -1 with a message. */
static int keep_text(struct service *s, int i, const char *text, size_t len, char *err, size_t errlen)
{
	int rc = state_list_save(service_statedir(s), s->lists.slot[i].name, text, len, err, errlen);

	if (rc < 0)
		service_list_unkept(s, i, err);
	return rc;
}

/* Keep the entries held by holder (labels from label_slot) as list i's version. -1 with a message. */
static int keep(struct service *s, int i, uint32_t holder, unsigned label_slot, char *err, size_t errlen)
{
	size_t len = 0;
	char *text = entries_text(s, holder, label_slot, &len);
	int rc;

	if (text == NULL) {
		error_set(err, errlen, "list %s: out of memory for its kept version", s->lists.slot[i].name);
		return -1;
	}
	rc = keep_text(s, i, text, len, err, errlen);
	free(text);
	return rc;
}

void service_lists_keep_again(struct service *s)
{
	uint32_t unkept = service_lists_unkept(s);
	char err[512];

	for (int i = 1; i < LISTS_SLOTS; i++) {
		if (!(unkept & (1u << i)))
			continue;
		if (s->lists.slot[i].name[0] == '\0' || keep(s, i, 1u << i, (unsigned)i, err, sizeof(err)) == 0)
			service_list_kept(s, i);
	}
}

/* ---- loading ---- */

/* Where a version comes from: a file (kept before it is taken), or the kept copy itself. */
enum version_source { FROM_FEED, FROM_KEPT };

/*
 * Load list i from f (called source), its relative times stated at stated
 * (0: now); logs what came of it. With a state directory, a version from a
 * feed is taken only once kept. 0 if taken, -1 if refused.
 */
static int load_from(struct service *s, int i, FILE *f, const char *source, const struct feed_spec *spec,
		     enum version_source from, uint64_t stated)
{
	struct service_bad_lines b = { .list = s->lists.slot[i].name, .source = source };
	struct list_clock clock = { .now = service_now(), .stated = stated ? stated : service_now() };
	struct list_load r;
	char err[512];

	service_slices_settle(s); /* the staging bit is free */
	int rc = lists_stage(&s->lists, s->matcher, i, f, spec, &clock, from == FROM_FEED, service_log_bad_line, &b, &r);
	if (rc == 0 && service_journaled(s) && from == FROM_FEED &&
	    keep(s, i, LISTS_STAGING, LISTS_SLOTS, err, sizeof(err)) < 0) {
		char why[sizeof(r.error)];
		snprintf(why, sizeof(why), "it could not be kept for the next start: %.200s", err);
		lists_unstage(&s->lists, s->matcher, i, &r, why);
		rc = -1;
	}
	if (rc == 0)
		service_action_mirror_taken(s, i, lists_take(&s->lists, s->matcher, i, service_now(), &r));
	service_list_loaded(s, i, source, &b, &r);
	return rc;
}

/* A list's failure to be read at all, said as a load that was refused. */
static void note_unreadable(struct service *s, int i, const char *path, int error)
{
	struct list_state *l = &s->lists.slot[i];

	l->last = (struct list_load){ .refused = true };
	error_set(l->last.error, sizeof(l->last.error), "%s: %s", path, strerror(error));
	log_error("list %s: cannot read %s: %s; the list keeps its previous version", l->name, path, strerror(error));
}

/*
 * The version kept in the state directory, when the list has none yet. A
 * damaged copy stops the start, as a damaged snapshot does: -1.
 */
static int load_saved(struct service *s, int i)
{
	struct feed_spec native = { .format = FEED_BLOOMD };
	struct list_state *l = &s->lists.slot[i];
	struct state_list kept;
	char err[512];
	int rc;

	if (!service_journaled(s) || l->version > 0)
		return 0;
	if ((rc = state_list_read(service_statedir(s), l->name, &kept, err, sizeof(err))) != 0) {
		if (rc < 0)
			log_error("list %s: %s; it is left as it is: give the list its file, or move the copy away to start the list without it",
				  l->name, err);
		return rc < 0 ? -1 : 0;
	}
	if (kept.unchecked)
		log_warning("list %s: its kept version was written without a checksum (bloomd 0.7 or before); it is rewritten with one",
			    l->name);
	FILE *f = kept.len ? fmemopen(kept.text, kept.len, "r") : NULL;
	struct list_load last = l->last; /* what the file's load found stays what is reported */
	if (f && load_from(s, i, f, "the version kept in the state directory", &native,
			   kept.unchecked ? FROM_FEED : FROM_KEPT, 0) == 0)
		log_warning("list %s: started from the version kept in %s/lists", l->name, s->cfg->store_dir);
	l->last = last;
	if (f)
		fclose(f);
	free(kept.text);
	return 0;
}

/*
 * When a file's relative times were stated: when it was written, as ipset
 * save's timeouts and cscli's durations count from then (never later than now).
 */
static uint64_t file_stated(FILE *f)
{
	struct stat st;
	uint64_t now = service_now();

	if (fstat(fileno(f), &st) < 0 || st.st_mtime <= 0 || (uint64_t)st.st_mtime > now)
		return now;
	return (uint64_t)st.st_mtime;
}

/* Read list i's file (if it has one); -1 if it was refused or could not be read. */
static int load_file(struct service *s, int i)
{
	const struct list_config *lc = s->lists.slot[i].cfg;
	FILE *f;
	int rc;

	if (lc->file == NULL)
		return 0;
	if ((f = fopen(lc->file, "re")) == NULL) {
		note_unreadable(s, i, lc->file, errno);
		return -1;
	}
	rc = load_from(s, i, f, lc->file, &lc->format, FROM_FEED, file_stated(f));
	fclose(f);
	return rc;
}

/* Whether file, in lists/, revs/ or fetch/, is a configured list's: NAME, or its temporary NAME.tmp or .NAME.tmp. */
static bool configured_lists_file(const struct lists *ls, const char *file)
{
	char name[LIST_NAME_MAX + 8];
	size_t len = strlen(file);

	if (lists_find(ls, file) >= 0)
		return true;
	if (len <= 4 || len >= sizeof(name) || strcmp(file + len - 4, ".tmp") != 0)
		return false;
	memcpy(name, file, len - 4);
	name[len - 4] = '\0';
	return lists_find(ls, name) >= 0 || (name[0] == '.' && lists_find(ls, name + 1) >= 0);
}

struct forgetting {
	struct service *s;
	const char *sub;
};

static void forget_file(void *ctx, const char *file)
{
	struct forgetting *f = ctx;
	char rel[LIST_NAME_MAX + 32], where[4200];

	if (configured_lists_file(&f->s->lists, file) || snprintf(rel, sizeof(rel), "%s/%s", f->sub, file) >= (int)sizeof(rel))
		return;
	state_dir_name(service_statedir(f->s), rel, where, sizeof(where));
	if (state_dir_unlink(service_statedir(f->s), rel) < 0)
		log_error("%s: no list of that name is configured, but it cannot be removed: %s", where,
			  state_dir_strerror(errno));
	else
		log_info("%s removed: no list of that name is configured", where);
}

/* What the state keeps for a list (its version, revision and fetch validators) goes once the list does. */
static void forget_dropped_lists(struct service *s)
{
	static const char *const subs[] = { "lists", "revs", "fetch" };

	if (service_statedir(s) == NULL) /* no state kept */
		return;
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		struct forgetting f = { s, subs[i] };
		char where[4200];
		if (state_dir_each(service_statedir(s), subs[i], forget_file, &f) < 0)
			log_error("%s: %s", state_dir_name(service_statedir(s), subs[i], where, sizeof(where)),
				  state_dir_strerror(errno));
	}
}

/* The running lists brought in line with cfg: their holders, actions and followers; -1 (logged) when they cannot be. */
static int configure(struct service *s, const struct config *cfg)
{
	char err[256];

	service_slices_settle(s); /* before a list it is for can go */
	if (lists_configure(&s->lists, s->matcher, cfg, err, sizeof(err)) < 0) {
		log_error("lists: %s", err);
		return -1;
	}
	forget_dropped_lists(s);
	uint32_t roles[] = { s->engine.drop_holders, s->engine.reject_holders, s->engine.pass_holders,
			     s->engine.pass_packet_holders };
	s->engine.drop_holders = lists_acting(&s->lists, LIST_ACTION_DROP);
	s->engine.reject_holders = lists_acting(&s->lists, LIST_ACTION_REJECT);
	s->engine.pass_holders = lists_acting(&s->lists, LIST_ACTION_PASS);
	s->engine.pass_packet_holders = lists_passing_packets(&s->lists);
	/* A list that acts otherwise changes what its every entry does: the XDP set and the table look at all. */
	if (roles[0] != s->engine.drop_holders || roles[1] != s->engine.reject_holders ||
	    roles[2] != s->engine.pass_holders || roles[3] != s->engine.pass_packet_holders)
		service_followers_all(s);
	service_workers_verdicts(s);
	return 0;
}

int service_lists_load(struct service *s, const struct config *cfg, unsigned *refused)
{
	*refused = 0;
	if (configure(s, cfg) < 0) {
		*refused = 1;
		return 0;
	}
	for (int i = 1; i < LISTS_SLOTS; i++) {
		if (s->lists.slot[i].name[0] == '\0')
			continue;
		/* A CrowdSec stream document may be a change: it applies to the version kept, read first. */
		bool kept_first = s->lists.slot[i].cfg->format.format == FEED_CROWDSEC_JSON;
		if (kept_first && load_saved(s, i) < 0)
			return -1;
		*refused += load_file(s, i) < 0;
		if (!kept_first && load_saved(s, i) < 0)
			return -1;
	}
	return 0;
}

static void reload_taken(struct service *s, int list, int rc, void *ctx)
{
	struct service_lists_reloading *rl = ctx;

	(void)list;
	rl->refused += rc < 0;
	if (--rl->pending == 0)
		rl->done(s, rl->refused, rl->ctx);
}

/* List i's file, to be taken a slice at a time (rl told); false if it was refused at once (logged). */
static bool reload_file(struct service *s, int i, struct service_lists_reloading *rl)
{
	const struct list_config *lc = s->lists.slot[i].cfg;
	FILE *f = fopen(lc->file, "re");
	char err[512];

	if (f == NULL) {
		note_unreadable(s, i, lc->file, errno);
		return false;
	}
	rl->pending++;
	if (service_slices_take_file(s, i, f, lc->file, &lc->format, file_stated(f), reload_taken, rl, err,
				     sizeof(err)) == 0)
		return true;
	rl->pending--;
	log_error("list %s: %s; the list keeps its previous version", s->lists.slot[i].name, err);
	return false;
}

void service_lists_reload(struct service *s, const struct config *cfg, struct service_lists_reloading *rl,
			  service_lists_reloaded_cb done, void *ctx)
{
	*rl = (struct service_lists_reloading){ .pending = 1, .done = done, .ctx = ctx }; /* 1: this call's, so done comes last */
	if (configure(s, cfg) < 0)
		rl->refused = 1;
	else
		for (int i = 1; i < LISTS_SLOTS; i++)
			if (s->lists.slot[i].name[0] && s->lists.slot[i].cfg->file && !reload_file(s, i, rl))
				rl->refused++;
	reload_taken(s, 0, 0, rl);
}

/* ---- labels ---- */

static bool label_entry(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len, uint32_t holders,
			struct event_label *out)
{
	struct entry_labels labels;
	const struct service *s = ctx;
	const struct list_state *l = lists_labelling(&s->lists, holders, kind, key, len, &labels);

	if (l == NULL)
		return false;
	*out = (struct event_label){ .list = l->name, .signature = l->cfg->signature, .severity = labels.severity,
				     .sid = l->cfg->sid, .rev = l->rev ? l->rev : 1};
	memcpy(out->category, labels.category, sizeof(out->category));
	return true;
}

void service_label_hits(struct service *s)
{
	s->engine.label = label_entry;
	s->engine.label_ctx = s;
	for (int i = 0; i < LISTS_SLOTS; i++) /* the slots' names stay where they are: point once */
		s->lists.names[i] = s->lists.slot[i].name;
	s->engine.list_names = s->lists.names;
}

/* ---- commands ---- */

static int list_named(struct service *s, const char *name, char *err, size_t errlen)
{
	int i = lists_find(&s->lists, name);

	if (i < 0)
		error_set(err, errlen, "no list is named '%.64s' (bloomctl lists shows them)", name);
	else if (i == 0)
		error_set(err, errlen, "the %s list holds what bloomctl add and load add: change it with add, del and load",
			  LIST_LOCAL);
	return i > 0 ? i : -1;
}

static json_t *load_json(const struct list_load *r)
{
	json_t *o = json_pack("{s:b,s:I,s:I,s:I,s:I,s:I}", "taken", !r->refused, "lines", (json_int_t)r->lines,
			      "entries", (json_int_t)r->entries, "bad", (json_int_t)r->bad, "added",
			      (json_int_t)r->added, "removed", (json_int_t)r->removed);

	if (o && r->error[0])
		json_object_set_new(o, "error", json_string(r->error));
	if (o && r->skipped_what[0]) {
		json_object_set_new(o, "skipped", json_integer((json_int_t)r->skipped));
		json_object_set_new(o, "skipped_what", json_string(r->skipped_what));
	}
	return o;
}

json_t *service_list_load_json(const struct service *s, int i)
{
	return load_json(&s->lists.slot[i].last);
}

void service_share_lists_again(struct service *s)
{
	for (int i = 1; i < LISTS_SLOTS; i++) {
		const struct list_state *l = &s->lists.slot[i];
		size_t len = 0;
		if (l->name[0] == '\0' || l->cfg == NULL || l->version == 0 || !service_shares(s, SERVICE_FROM_OPERATOR, i))
			continue;
		char *text = version_text(s, i, &len);
		if (text)
			service_share_list(s, SERVICE_FROM_OPERATOR, i, text, len);
		else
			log_error("cluster: list %s: out of memory to publish its version again", l->name);
		free(text);
	}
}

/* Who waits for a version replaced: told when it is taken or refused. */
struct replacing {
	uint64_t waiter;
	bool shared;       /* passed open: the other nodes take the version this one took */
};

static void replaced(struct service *s, int i, int rc, void *ctx)
{
	struct replacing *rp = ctx;
	const struct list_state *l = &s->lists.slot[i];
	json_t *reply = json_pack("{s:b,s:o}", "ok", rc == 0, "load", service_list_load_json(s, i));
	size_t len;
	char *text = rc == 0 && rp->shared && service_shares(s, SERVICE_FROM_OPERATOR, i) ? version_text(s, i, &len) : NULL;

	if (text)
		service_share_list(s, SERVICE_FROM_OPERATOR, i, text, len);
	free(text);
	if (reply && rc < 0)
		json_object_set_new(reply, "error", json_sprintf("replace: list %s keeps its previous version: %s", l->name,
								 l->last.error));
	service_propagate(s); /* the version reaches the workers before the reply */
	service_reply_to(s, rp->waiter, reply);
	free(rp);
}

int service_list_replace(struct service *s, const char *name, int fd, uint64_t waiter, char *err, size_t errlen)
{
	int i = list_named(s, name, err, errlen);
	const struct list_config *lc = i > 0 ? s->lists.slot[i].cfg : NULL;
	struct replacing *rp = NULL;
	struct stat st;
	FILE *f = NULL;

	if (i < 0 || (fd >= 0 && (lc->file || lc->url))) {
		if (i >= 0)
			error_set(err, errlen, "list %s reads %s: %s and run replace %s without a file", name,
				  lc->file ? lc->file : lc->url, lc->file ? "write the new version there" : "publish it there",
				  name);
		goto refuse;
	}
	if (fd < 0 && lc->file == NULL) {
		error_set(err, errlen, "list %s has no file: pass its new version (bloomctl replace %s FILE)", name, name);
		return -1;
	}
	if (fd < 0 && (f = fopen(lc->file, "re")) == NULL) {
		note_unreadable(s, i, lc->file, errno);
		error_set(err, errlen, "list %s keeps its previous version: %s", name, s->lists.slot[i].last.error);
		return -1;
	}
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (f = fdopen(fd, "r")) == NULL)) {
		error_set(err, errlen, "the file passed is not a regular file (it is read in the event loop)");
		goto refuse;
	}
	if ((rp = malloc(sizeof(*rp))) == NULL) {
		fclose(f);
		error_set(err, errlen, "out of memory");
		return -1;
	}
	*rp = (struct replacing){ .waiter = waiter, .shared = fd >= 0 };
	if (service_slices_take_file(s, i, f, fd >= 0 ? "the file passed" : lc->file, &lc->format, file_stated(f), replaced,
				     rp, err, errlen) < 0) {
		free(rp);
		return -1;
	}
	return 0;
refuse:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Who waits for a flush: told once the list is empty (its empty version kept and taken) or not. */
struct flushing {
	uint64_t waiter;
	enum service_origin from;
};

static void flushed(struct service *s, int i, int rc, void *ctx)
{
	struct flushing *fl = ctx;
	const struct list_state *l = &s->lists.slot[i];
	json_t *reply;

	if (rc == 0) {
		service_share_list(s, fl->from, i, NULL, 0);
		reply = json_pack("{s:b,s:I}", "ok", true, "removed", (json_int_t)l->last.removed);
	} else {
		reply = json_pack("{s:b,s:o}", "ok", false, "error",
				  json_sprintf("flush: list %s keeps its entries: %s", l->name, l->last.error));
	}
	service_propagate(s); /* the empty list reaches the workers before the reply */
	service_reply_to(s, fl->waiter, reply);
	free(fl);
}

int service_list_flush(struct service *s, const char *name, enum service_origin from, uint64_t waiter, char *err,
		       size_t errlen)
{
	int i = list_named(s, name, err, errlen);
	struct flushing *fl = i >= 0 ? malloc(sizeof(*fl)) : NULL;

	if (i < 0)
		return -1;
	if (fl == NULL) {
		error_set(err, errlen, "out of memory");
		return -1;
	}
	*fl = (struct flushing){ .waiter = waiter, .from = from };
	if (service_slices_flush(s, i, flushed, fl, err, errlen) < 0) {
		free(fl);
		return -1;
	}
	return 0;
}

enum cluster_apply service_list_from_cluster(struct service *s, const char *name, const char *data, size_t len,
					     char *err, size_t errlen)
{
	int i = lists_find(&s->lists, name);

	if (i <= 0 || s->lists.slot[i].cfg->file || s->lists.slot[i].cfg->url) {
		error_set(err, errlen, "no list without a file or url is named '%.64s' here", name);
		return CLUSTER_APPLY_REFUSED;
	}
	if (data == NULL)
		return service_slices_flush(s, i, NULL, NULL, err, errlen) == 0 ? CLUSTER_APPLY_STARTED : CLUSTER_APPLY_LATER;
	return service_slices_start(s, i, data, len, err, errlen);
}

json_t *service_lists_own_json(struct service *s)
{
	uint64_t counts[LISTS_SLOTS];
	json_t *out = json_array();
	char format[FEED_COLUMN_NAME + 8];

	uint32_t acting = s->engine.drop_holders | s->engine.reject_holders | s->engine.pass_holders;

	lists_count(&s->lists, s->matcher, counts);
	for (int i = 0; i < LISTS_SLOTS && out; i++) {
		const struct list_state *l = &s->lists.slot[i];
		if (l->name[0] == '\0' || l->cfg == NULL)
			continue;
		const struct list_config *lc = l->cfg;
		json_t *o = json_pack("{s:s,s:s*,s:s*,s:s,s:I,s:i,s:i,s:o,s:s*,s:i,s:s,s:I,s:s}", "name", l->name, "file",
				      lc->file, "url", lc->url, "format", i == 0 ? "bloomctl" : feed_spec_name(&lc->format, format, sizeof(format)),
				      "entries", (json_int_t)counts[i], "version", (int)l->version, "rev", (int)(l->rev ? l->rev : 1), "loaded",
				      l->loaded ? json_integer((json_int_t)l->loaded) : json_null(), "category",
				      lc->category, "severity", (int)lc->severity, "action",
				      config_list_action_name(lc->action), "sid", (json_int_t)lc->sid,
				      "signature", lc->signature);
		if (o && i > 0 && (l->version || l->last.refused))
			json_object_set_new(o, "last_load", load_json(&l->last));
		if (o && i == service_slices_list(s)) /* a new version is being taken, a slice at a time */
			json_object_set_new(o, "taking", json_true());
		if (o && service_action_mirror_on(s) && (acting & (1u << i))) /* its entries in bloomd's nft table */
			json_object_set_new(o, "kernel", json_string(service_action_mirror_syncing(s) ? "syncing" : "in step"));
		json_array_append_new(out, o);
	}
	return out;
}

json_t *service_lists_stats(const struct service *s, const struct stats *totals)
{
	uint64_t counts[LISTS_SLOTS];
	json_t *out = json_object();

	lists_count(&s->lists, s->matcher, counts);
	for (int i = 0; i < LISTS_SLOTS && out; i++) {
		const struct list_state *l = &s->lists.slot[i];
		if (l->name[0])
			json_object_set_new(out, l->name,
					    json_pack("{s:I,s:i,s:I,s:b,s:I,s:I,s:I,s:I,s:I}", "entries", (json_int_t)counts[i],
						      "version", (int)l->version, "loaded", (json_int_t)l->loaded, "ok",
						      !l->last.refused, "refused", (json_int_t)l->refusals, "passed",
						      (json_int_t)totals->passed_by[i], "matched", (json_int_t)totals->matched_by[i],
						      "dropped", (json_int_t)totals->dropped_by[i], "blocked",
						      (json_int_t)totals->blocked_by[i]));
	}
	return out;
}

uint32_t service_list_holder(const struct service *s, const char *name)
{
	int i = lists_find(&s->lists, name);

	return i < 0 ? 0 : 1u << i;
}

uint32_t service_pass_holders(const struct service *s)
{
	return s->engine.pass_holders;
}

json_t *service_holders_json(const struct service *s, uint32_t holders)
{
	json_t *names = json_array();

	for (int i = 0; i < LISTS_SLOTS && names; i++)
		if ((holders & (1u << i)) && s->lists.slot[i].name[0])
			json_array_append_new(names, json_string(s->lists.slot[i].name));
	return names;
}
