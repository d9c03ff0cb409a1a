/* service_slices.c - a list's new version read, kept and taken a slice at a time. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"
#include "state.h"

/*
 * A version of a million entries takes about a second to read, keep and
 * take at once, and a flush of as many a quarter of one; the loop would
 * hold capture and control that long. So each
 * turn of the loop does one slice, and the loop serves its other events in
 * between:
 *   READING   SLICE_LINES lines staged under the staging bit (no match yet)
 *   KEEPING   the version written to its kept copy, SLICE_BYTES of it as
 *             received from the stream, or SLICE_VISITS entries of a walk
 *             over those staged from a file; at the end, fsync and rename:
 *             taken only once kept, as any version
 *   ADDING    a walk over the entries: those staged get the list's bit
 *   REMOVING  a walk: those the list holds that were not staged lose it
 *   then lists_take, which has nothing left to add or remove, only the
 *   staging bit to clear (one pass over the holders, no filter work).
 * Packets see the old version until ADDING, then both, then the new one:
 * an entry in both versions is never out. The walks may miss an entry
 * added meanwhile (one moved ahead of them); lists_take then does what they
 * missed. An entry staged is never released before the version is taken,
 * so the keeping walk visits every one of them.
 *
 * A snapshot from the stream is restored into the local list the same
 * way, each change journaled as a command's: READING adds its entries
 * (marked staged), REMOVING deletes the local entries not marked, and the
 * marks go. A change an operator makes meanwhile marks its entry too
 * (service_change.c, while service_stream_restoring says so): it comes
 * after the snapshot, which must not undo it (the stream brings it back,
 * but only once the snapshot is in). The snapshot may wait behind a list
 * version, which has the staging bit: changes made from the moment it is
 * received are remembered, and marked when it begins.
 */
#define SLICE_LINES 4096
#define SLICE_BYTES (4u << 20)
#define SLICE_VISITS 8192

enum slicing_phase { READING, KEEPING, ADDING, REMOVING };

struct slicing {
	struct service *s;
	struct slicing *queued;    /* the version to take after this one, or NULL */
	struct event *next;        /* the next slice, after the loop's other events */
	enum slicing_phase phase;
	int list;
	bool restore;              /* a snapshot restored into the local list, not a list's version */
	bool flush;                /* an empty version, meant: the guards let it through */
	char *data;                /* from the stream: the version's or snapshot's entry lines (a copy); else NULL */
	size_t len, at;            /* read or kept up to at */
	FILE *file;                /* from a file: it (taken over), read by feed */
	struct feed_file feed;
	char source[128];          /* where the version comes from, for the log */
	service_slices_done_cb done;
	void *done_ctx;
	struct list_load r;
	struct service_bad_lines bad;
	struct state_list_writer *kept;
	struct matcher_cursor walk;
	uint64_t added, removed;
	struct entry_run picked;   /* the entries one walk slice picked */
};

static void slicing_free(struct slicing *sl)
{
	if (sl->next)
		event_free(sl->next);
	state_list_abandon(sl->kept);
	if (sl->file) {
		feed_file_close(&sl->feed);
		fclose(sl->file);
	}
	entry_run_free(&sl->picked);
	free(sl->data);
	free(sl);
}

static void again(struct slicing *sl);

/*
 * Done (rc: 0, or -1 with err): the cluster reads on, or whoever took the
 * file is told; the version queued after it begins.
 */
static void finish(struct slicing *sl, int rc, const char *err)
{
	struct service *s = sl->s;
	service_slices_done_cb done = sl->done;
	void *ctx = sl->done_ctx;
	int list = sl->list;
	bool restore = sl->restore;

	if ((s->versions.slicing = sl->queued) != NULL)
		again(s->versions.slicing);
	slicing_free(sl);
	if (done)
		done(s, list, rc, ctx);
	else if (restore)
		service_stream_restored(s, rc, err);
	else
		service_stream_applied(s, rc, err);
}

/* A snapshot restored (rc 0), or not (-1, err: the cluster asks for it again later): its marks go. */
static bool restore_done(struct slicing *sl, int rc, const char *err)
{
	lists_unmark_all(sl->s->matcher);
	finish(sl, rc, err);
	return false;
}

/* Refused for why: the list keeps its previous version. false: no more slices. */
static bool refuse(struct slicing *sl, const char *why)
{
	char err[sizeof(sl->r.error) + 16];

	if (!sl->r.refused) /* lists_stage_done refused it already */
		lists_unstage(&sl->s->lists, sl->s->matcher, sl->list, &sl->r, why);
	service_list_loaded(sl->s, sl->list, sl->source, &sl->bad, &sl->r);
	error_set(err, sizeof(err), "refused: %s", sl->r.error);
	finish(sl, -1, err);
	return false;
}

/* The kept copy could not be written (err): refused, and changes wait until it can be. */
static bool unkept(struct slicing *sl, const char *err)
{
	char why[sizeof(sl->r.error)];

	service_list_unkept(sl->s, sl->list, err);
	snprintf(why, sizeof(why), "it could not be kept for the next start: %.200s", err);
	return refuse(sl, why);
}

/* The end of the line SLICE_LINES lines on from at (or the data's end). */
static size_t slice_end(const struct slicing *sl)
{
	size_t end = sl->at;

	for (unsigned n = 0; n < SLICE_LINES && end < sl->len; n++) {
		const char *nl = memchr(sl->data + end, '\n', sl->len - end);
		end = nl ? (size_t)(nl - sl->data) + 1 : sl->len;
	}
	return end;
}

int service_list_line(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	char text[ENTRY_TEXT_MAX];
	struct service_list_lines *sl = ctx;
	struct entry_labels own;

	(void)group;
	if (!(holders & sl->holder) || sl->failed)
		return sl->failed ? -1 : 0;
	entry_format_value(e->kind, e->key, e->len, text, sizeof(text));
	if (fprintf(sl->f, "%s %s", entry_kind_name(e->kind), text) < 0)
		sl->failed = true;
	if (labels_get(sl->s->lists.labels, e->kind, e->key, e->len, sl->label_slot, &own)) {
		if (own.category[0])
			fprintf(sl->f, " category=%s", own.category);
		if (own.severity)
			fprintf(sl->f, " severity=%u", own.severity);
	}
	uint64_t expires = lists_expiry(&sl->s->lists, sl->label_slot, e);
	if (expires)
		fprintf(sl->f, " expires=%llu", (unsigned long long)expires);
	if (fputc('\n', sl->f) == EOF)
		sl->failed = true;
	return sl->failed ? -1 : 0;
}

/* Each returns whether there is more to do; when not, sl is gone. */

/* All read: refused now (max_bad, guards), or on to be kept. */
static bool read_done(struct slicing *sl)
{
	struct service *s = sl->s;
	char err[512];

	if (lists_stage_done(&s->lists, s->matcher, sl->list, !sl->flush, &sl->r) < 0)
		return refuse(sl, sl->r.error);
	sl->at = 0;
	sl->phase = service_journaled(s) ? KEEPING : ADDING;
	if (!service_journaled(s) ||
	    (sl->kept = state_list_begin(service_statedir(s), s->lists.slot[sl->list].name, err, sizeof(err))) != NULL)
		return true;
	return unkept(sl, err);
}

static bool service_version_too_broad(const struct service *s, const char *data, size_t len, char *err, size_t errlen)
{
	struct entry e;
	char line[ENTRY_TEXT_MAX + 256];

	for (size_t at = 0; at < len;) {
		const char *nl = memchr(data + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (data + at)) : len - at;
		bool net = n >= 4 && memcmp(data + at, "net ", 4) == 0;
		if (net)
			snprintf(line, sizeof(line), "%.*s", (int)n, data + at);
		at += n + 1;
		if (net && entry_parse_labelled(line, &e, 0, &(uint64_t){ 0 }, &(struct entry_labels){ 0 }, NULL, 0) == 1 &&
		    service_entry_too_broad(s, &e, err, errlen))
			return true;
	}
	return false;
}

static bool read_slice(struct slicing *sl)
{
	static const struct feed_spec native = { .format = FEED_BLOOMD };
	struct service *s = sl->s;
	size_t end = slice_end(sl);
	char err[512];

	if (service_version_too_broad(s, sl->data + sl->at, end - sl->at, err, sizeof(err)))
		return refuse(sl, err);
	if (end > sl->at) {
		FILE *f = fmemopen(sl->data + sl->at, end - sl->at, "r");
		if (f == NULL)
			return refuse(sl, "out of memory");
		struct list_clock clock = { service_now(), service_now() }; /* its times are absolute (expires=) */
		int rc = lists_stage_more(&s->lists, s->matcher, f, &native, &clock, service_log_bad_line,
					  &sl->bad, &sl->r);
		fclose(f);
		sl->at = end;
		if (rc < 0)
			return refuse(sl, sl->r.error);
	}
	return sl->at < sl->len || read_done(sl);
}

/*
 * A slice of a snapshot's lines, each added to the local list and marked,
 * unless marked already (said twice, or changed here meanwhile).
 */
static bool restore_slice(struct slicing *sl)
{
	struct entry e;
	struct service *s = sl->s;
	size_t end = slice_end(sl), cap = 0;
	char *line = NULL, err[256];
	uint64_t expires;
	int rc = 0;
	FILE *f = end > sl->at ? fmemopen(sl->data + sl->at, end - sl->at, "r") : NULL;

	if (end > sl->at && f == NULL)
		return restore_done(sl, -1, "out of memory");
	service_stream_restoring(s, RESTORE_BEGUN); /* those changed while it waited are marked too */
	while (f && rc == 0 && getline(&line, &cap, f) > 0) {
		if (entry_parse_expiry(line, &e, service_now(), &expires, err, sizeof(err)) != 1 ||
		    (matcher_holders(s->matcher, &e) & LISTS_STAGING))
			continue;
		if (lists_mark(s->matcher, &e, err, sizeof(err)) < 0 ||
		    service_add(s, &e, expires, SERVICE_FROM_STREAM, err, sizeof(err)) < 0)
			rc = -1;
	}
	free(line);
	if (f)
		fclose(f);
	if (rc < 0)
		return restore_done(sl, -1, err);
	sl->at = end;
	if (sl->at == sl->len)
		sl->phase = REMOVING;
	return true;
}

static bool read_file_slice(struct slicing *sl)
{
	struct service *s = sl->s;
	int rc = lists_stage_lines(&s->lists, s->matcher, &sl->feed, SLICE_LINES, service_now(), service_log_bad_line,
				   &sl->bad, &sl->r);

	if (rc < 0)
		return refuse(sl, sl->r.error);
	return rc > 0 || read_done(sl);
}

/* Kept (rc 0; else err says why not): on to add it. */
static bool kept(struct slicing *sl, int rc, char *err, size_t errlen)
{
	if (rc == 0) {
		rc = state_list_end(sl->kept, err, errlen);
		sl->kept = NULL;
	}
	if (rc < 0)
		return unkept(sl, err);
	sl->phase = ADDING;
	return true;
}

/*
 * The version as received is its kept copy: read again at start, it gives
 * the same entries.
 */
static bool keep_slice(struct slicing *sl)
{
	size_t n = sl->len - sl->at < SLICE_BYTES ? sl->len - sl->at : SLICE_BYTES;
	char err[512];
	int rc = state_list_write(sl->kept, sl->data + sl->at, n, err, sizeof(err));

	sl->at += n;
	if (rc == 0 && sl->at < sl->len)
		return true;
	return kept(sl, rc, err, sizeof(err));
}

/* A version read from a file is kept as the entries it staged, in bloomd's own format. */
static bool keep_walk_slice(struct slicing *sl)
{
	struct service *s = sl->s;
	struct service_list_lines lines = { .s = s, .holder = LISTS_STAGING, .label_slot = LISTS_SLOTS };
	char *text = NULL, err[512];
	size_t len = 0;
	int rc = -1;

	error_set(err, sizeof(err), "out of memory for its kept version");
	if ((lines.f = open_memstream(&text, &len)) != NULL) {
		matcher_walk(s->matcher, 0, LISTS_STAGING, &sl->walk, SLICE_VISITS, service_list_line, &lines);
		rc = fclose(lines.f) == 0 && !lines.failed ? 0 : -1;
	}
	if (rc == 0)
		rc = state_list_write(sl->kept, text, len, err, sizeof(err));
	free(text);
	if (rc == 0 && sl->walk.part < 2)
		return true;
	sl->walk = (struct matcher_cursor){ .started = false };
	return kept(sl, rc, err, sizeof(err));
}

static int pick(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct slicing *sl = ctx;
	uint32_t bit = 1u << sl->list;
	bool want = sl->phase == ADDING ? (holders & LISTS_STAGING) && !(holders & bit)
					: (holders & bit) && !(holders & LISTS_STAGING);

	(void)group;
	if (want)
		entry_run_add(&sl->picked, e); /* without memory, lists_take does it */
	return 0;
}

/* One slice of a walk: pick, then change (a walk's callback must not change the matcher). */
static bool walk_slice(struct slicing *sl)
{
	struct entry e;
	struct service *s = sl->s;
	uint32_t bit = 1u << sl->list, left;
	char err[256];

	entry_run_clear(&sl->picked);
	/* Adding: the entries staged; removing: those the list holds. */
	matcher_walk(s->matcher, 0, sl->phase == ADDING ? LISTS_STAGING : bit, &sl->walk, SLICE_VISITS, pick, sl);
	for (size_t at = 0; entry_run_next(&sl->picked, &at, &e);) {
		if (sl->phase == ADDING)
			sl->added += lists_take_entry(s->matcher, sl->list, &e);
		else if (!sl->restore)
			sl->removed += lists_drop_entry(s->matcher, sl->list, &e);
		else if (service_del(s, &e, SERVICE_FROM_STREAM, &left, err, sizeof(err)) < 0)
			return restore_done(sl, -1, err);
	}
	if (sl->walk.part < 2)
		return true;
	sl->walk = (struct matcher_cursor){ .started = false };
	if (sl->restore)
		return restore_done(sl, 0, "");
	if (sl->phase == ADDING) {
		sl->phase = REMOVING;
		return true;
	}
	sl->r.added = sl->added;
	sl->r.removed = sl->removed;
	service_action_mirror_taken(s, sl->list, lists_take(&s->lists, s->matcher, sl->list, service_now(), &sl->r));
	s->lists.slot[sl->list].last = sl->r;
	service_list_loaded(s, sl->list, sl->source, &sl->bad, &sl->r);
	finish(sl, 0, "");
	return false;
}

/* One slice; false when the version is done with (taken or refused), and sl gone. */
static bool one_slice(struct slicing *sl)
{
	switch (sl->phase) {
	case READING:
		return sl->restore ? restore_slice(sl) : sl->file ? read_file_slice(sl) : read_slice(sl);
	case KEEPING:
		return sl->file ? keep_walk_slice(sl) : keep_slice(sl);
	default:
		return walk_slice(sl);
	}
}

/*
 * The next slice after the loop has polled: a timer of no time (an event
 * made active again from its own callback would run before any poll).
 */
static void again(struct slicing *sl)
{
	static const struct timeval now = { 0, 0 };

	evtimer_add(sl->next, &now);
}

static void next_slice(evutil_socket_t fd, short what, void *arg)
{
	struct slicing *sl = arg;

	(void)fd;
	(void)what;
	if (one_slice(sl))
		again(sl);
}

/* A slicing of list i's version from source, to start (NULL without memory). */
static struct slicing *slicing_new(struct service *s, int i, const char *source)
{
	struct slicing *sl = calloc(1, sizeof(*sl));

	if (sl == NULL || (sl->next = evtimer_new(s->base, next_slice, sl)) == NULL) {
		free(sl);
		return NULL;
	}
	sl->s = s;
	sl->list = i;
	snprintf(sl->source, sizeof(sl->source), "%s", source);
	sl->bad = (struct service_bad_lines){ .list = s->lists.slot[i].name, .source = sl->source };
	return sl;
}

/* Begun now, or queued after the versions being taken (one at a time: the staging bit is theirs). */
static void slicing_go(struct slicing *sl)
{
	struct slicing **last = &sl->s->versions.slicing;

	while (*last)
		last = &(*last)->queued;
	*last = sl;
	if (sl->s->versions.slicing == sl)
		again(sl);
}

/* List i's version, or the snapshot (restore), from the stream's data: begun or queued. */
static enum cluster_apply from_stream(struct service *s, int i, bool restore, const char *data, size_t len,
				      char *err, size_t errlen)
{
	struct slicing *sl = slicing_new(s, i, "the cluster");

	if (sl == NULL || (sl->data = malloc(len + 1)) == NULL) {
		if (sl)
			slicing_free(sl);
		error_set(err, errlen, "out of memory");
		return CLUSTER_APPLY_LATER;
	}
	memcpy(sl->data, data, len);
	sl->len = len;
	sl->restore = restore;
	if (restore) /* it may wait behind a list version: changes from now on come after it */
		service_stream_restoring(s, RESTORE_WAITING);
	slicing_go(sl);
	return CLUSTER_APPLY_STARTED;
}

enum cluster_apply service_slices_start(struct service *s, int i, const char *data, size_t len, char *err,
					size_t errlen)
{
	return from_stream(s, i, false, data, len, err, errlen);
}

enum cluster_apply service_slices_restore(struct service *s, const char *data, size_t len, char *err, size_t errlen)
{
	return from_stream(s, 0, true, data, len, err, errlen);
}

int service_slices_take_file(struct service *s, int i, FILE *f, const char *source, const struct feed_spec *spec,
			     uint64_t stated, service_slices_done_cb done, void *ctx, char *err, size_t errlen)
{
	struct slicing *sl = slicing_new(s, i, source);

	if (sl == NULL || feed_file_open(&sl->feed, f, spec, stated ? stated : service_now()) < 0) {
		if (sl)
			slicing_free(sl); /* its feed_file is closed: free does nothing to it */
		fclose(f);
		error_set(err, errlen, "out of memory");
		return -1;
	}
	sl->file = f;
	sl->done = done;
	sl->done_ctx = ctx;
	slicing_go(sl);
	return 0;
}

int service_slices_flush(struct service *s, int i, service_slices_done_cb done, void *ctx, char *err, size_t errlen)
{
	struct slicing *sl = slicing_new(s, i, "flush");

	if (sl == NULL || (sl->data = strdup("")) == NULL) {
		if (sl)
			slicing_free(sl);
		error_set(err, errlen, "out of memory");
		return -1;
	}
	sl->flush = true;
	sl->done = done;
	sl->done_ctx = ctx;
	slicing_go(sl);
	return 0;
}

int service_slices_list(const struct service *s)
{
	return s->versions.slicing && !s->versions.slicing->restore ? s->versions.slicing->list : -1;
}

void service_slices_settle(struct service *s)
{
	while (s->versions.slicing) /* the one begun, then those queued */
		one_slice(s->versions.slicing);
}

void service_slices_cancel(struct service *s)
{
	struct slicing *sl, *first = s->versions.slicing;

	/*
	 * A version already kept is what the next start reads: it is taken
	 * now (its last walks, a second or so at a million entries), so its
	 * client is told the truth. One still being read or kept is refused,
	 * and the next start has the one before.
	 */
	while (first && s->versions.slicing == first && !first->restore && first->phase >= ADDING)
		one_slice(first);
	for (bool begun = true; (sl = s->versions.slicing) != NULL; begun = false) {
		service_slices_done_cb done = sl->done;
		void *ctx = sl->done_ctx;
		int list = sl->list;

		if (sl->restore) { /* its marks go; the next start restores it again */
			if (begun)
				lists_unmark_all(s->matcher);
			service_stream_restoring(s, RESTORE_NONE);
		} else if (begun) /* not yet kept: what it staged goes, and its list says why */
			lists_unstage(&s->lists, s->matcher, list, &sl->r, "stopped before it was taken");
		else if (done) /* queued: refused all the same */
			s->lists.slot[list].last = (struct list_load){ .refused = true, .error = "stopped before it was taken" };
		s->versions.slicing = sl->queued;
		slicing_free(sl);
		/* A version from a file is refused; one from the stream is applied again at the next start. */
		if (done)
			done(s, list, -1, ctx);
	}
}

/* Whether e is a net broader than [cluster] max_prefix4 or max_prefix6 allow from the stream. */
bool service_entry_too_broad(const struct service *s, const struct entry *e, char *err, size_t errlen)
{
	unsigned most = e->len == 5 ? s->cfg->cluster.max_prefix4 : s->cfg->cluster.max_prefix6;

	if (e->kind != ENTRY_NET || e->key[0] >= most)
		return false;
	error_set(err, errlen, "a /%u net is broader than [cluster] max_prefix%c (/%u) lets the stream add: refused",
		  e->key[0], e->len == 5 ? '4' : '6', most);
	return true;
}
