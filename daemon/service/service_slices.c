/* service_slices.c - a list's version from the stream read, kept and taken a slice at a time. */
#include "service.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"
#include "persist.h"
#include "service_internal.h"

/*
 * A version of a million entries takes about a second to read, keep and
 * take at once; the loop would hold capture and control that long. So each
 * turn of the loop does one slice, and the loop serves its other events in
 * between:
 *   READING   SLICE_LINES lines staged under the staging bit (no match yet)
 *   KEEPING   SLICE_BYTES of the version written to its kept copy; at the
 *             end, fsync and rename: taken only once kept, as any version
 *   ADDING    a walk over the entries: those staged get the list's bit
 *   REMOVING  a walk: those the list holds that were not staged lose it
 *   then lists_take, which has nothing left to add or remove, only the
 *   staging bit to clear (one pass over the holders, no filter work).
 * Packets see the old version until ADDING, then both, then the new one:
 * an entry in both versions is never out. The walks may miss an entry
 * (one moved meanwhile, a rebuild); lists_take then does what they missed.
 */
#define SLICE_LINES 16384
#define SLICE_BYTES (4u << 20)
#define SLICE_VISITS 32768

enum slicing_phase { READING, KEEPING, ADDING, REMOVING };

struct slicing {
	struct service *s;
	struct event *next;        /* the next slice, after the loop's other events */
	enum slicing_phase phase;
	int list;
	char *data;                /* the version's entry lines (a copy) */
	size_t len, at;            /* read or kept up to at */
	struct list_load r;
	struct service_bad_lines bad;
	struct persist_list_writer *kept;
	struct match_cursor walk;
	uint64_t added, removed;
	char *picked;              /* the entries one walk slice picked: kind, length, key, ... */
	size_t npicked, picked_cap;
};

static void slicing_free(struct slicing *sl)
{
	if (sl->next)
		event_free(sl->next);
	persist_list_abandon(sl->kept);
	free(sl->picked);
	free(sl->data);
	free(sl);
}

/* Done (rc: 0, or -1 with err): the cluster reads on. */
static void finish(struct slicing *sl, int rc, const char *err)
{
	struct service *s = sl->s;
	enum cluster_apply outcome = service_stream_outcome(s, rc);

	s->fleet.slicing = NULL;
	slicing_free(sl);
	if (s->fleet.cluster)
		cluster_applied(s->fleet.cluster, outcome, err);
}

/* Refused for why: the list keeps its previous version. false: no more slices. */
static bool refuse(struct slicing *sl, const char *why)
{
	char err[sizeof(sl->r.error) + 16];

	if (!sl->r.refused) /* lists_stage_done refused it already */
		lists_unstage(&sl->s->lists, sl->s->matcher, sl->list, &sl->r, why);
	service_list_loaded(sl->s, sl->list, "the cluster", &sl->bad, &sl->r);
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

/* Each returns whether there is more to do; when not, sl is gone. */
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
	if (sl->at < sl->len)
		return true;
	if (lists_stage_done(&s->lists, s->matcher, sl->list, true, &sl->r) < 0)
		return refuse(sl, sl->r.error);
	sl->at = 0;
	sl->phase = service_journaled(s) ? KEEPING : ADDING;
	if (!service_journaled(s) ||
	    (sl->kept = persist_list_begin(service_statedir(s), s->lists.slot[sl->list].name, err, sizeof(err))) != NULL)
		return true;
	return unkept(sl, err);
}

/*
 * The version as received is its kept copy: read again at start, it gives
 * the same entries.
 */
static bool keep_slice(struct slicing *sl)
{
	size_t n = sl->len - sl->at < SLICE_BYTES ? sl->len - sl->at : SLICE_BYTES;
	char err[512];
	int rc = persist_list_write(sl->kept, sl->data + sl->at, n, err, sizeof(err));

	sl->at += n;
	if (rc == 0 && sl->at < sl->len)
		return true;
	if (rc == 0) {
		rc = persist_list_end(sl->kept, err, sizeof(err));
		sl->kept = NULL;
	}
	if (rc < 0)
		return unkept(sl, err);
	sl->phase = ADDING;
	return true;
}

static int pick(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct slicing *sl = ctx;
	uint32_t bit = 1u << sl->list;
	bool want = sl->phase == ADDING ? (holders & LISTS_STAGING) && !(holders & bit)
					: (holders & bit) && !(holders & LISTS_STAGING);

	(void)group;
	if (!want)
		return 0;
	if (sl->npicked + 3 + e->len > sl->picked_cap) {
		size_t cap = sl->picked_cap ? sl->picked_cap * 2 : 65536;
		char *grown = realloc(sl->picked, cap);
		if (grown == NULL)
			return 0; /* lists_take does it */
		sl->picked = grown;
		sl->picked_cap = cap;
	}
	sl->picked[sl->npicked++] = (char)e->kind;
	memcpy(sl->picked + sl->npicked, &e->len, 2);
	memcpy(sl->picked + sl->npicked + 2, e->key, e->len);
	sl->npicked += 2 + e->len;
	return 0;
}

/* One slice of a walk: pick, then change (a walk's callback must not change the matcher). */
static bool walk_slice(struct slicing *sl)
{
	struct entry e;
	struct service *s = sl->s;
	uint32_t bit = 1u << sl->list, left;
	char err[256];

	sl->npicked = 0;
	matcher_walk(s->matcher, 0, &sl->walk, SLICE_VISITS, pick, sl);
	for (size_t at = 0; at < sl->npicked; at += 3 + e.len) {
		e.kind = (enum entry_kind)sl->picked[at];
		memcpy(&e.len, sl->picked + at + 1, 2);
		memcpy(e.key, sl->picked + at + 3, e.len);
		if (sl->phase == ADDING)
			sl->added += matcher_hold(s->matcher, &e, bit, err, sizeof(err)) >= 0;
		else
			sl->removed += matcher_release(s->matcher, &e, bit, &left) == 0;
	}
	if (sl->walk.part < 2)
		return true;
	sl->walk = (struct match_cursor){ .started = false };
	if (sl->phase == ADDING) {
		sl->phase = REMOVING;
		return true;
	}
	sl->r.added = sl->added;
	sl->r.removed = sl->removed;
	lists_take(&s->lists, s->matcher, sl->list, service_now(), &sl->r);
	s->lists.slot[sl->list].last = sl->r;
	service_list_loaded(s, sl->list, "the cluster", &sl->bad, &sl->r);
	finish(sl, 0, "");
	return false;
}

/* One slice; false when the version is done with (taken or refused), and sl gone. */
static bool one_slice(struct slicing *sl)
{
	return sl->phase == READING ? read_slice(sl) : sl->phase == KEEPING ? keep_slice(sl) : walk_slice(sl);
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

enum cluster_apply service_slices_start(struct service *s, int i, const char *data, size_t len, char *err,
					size_t errlen)
{
	struct slicing *sl = calloc(1, sizeof(*sl));

	service_slices_settle(s);
	if (sl == NULL || (sl->data = malloc(len + 1)) == NULL ||
	    (sl->next = evtimer_new(s->base, next_slice, sl)) == NULL) {
		if (sl)
			slicing_free(sl);
		error_set(err, errlen, "out of memory");
		return CLUSTER_APPLY_LATER;
	}
	memcpy(sl->data, data, len);
	sl->len = len;
	sl->s = s;
	sl->list = i;
	sl->bad = (struct service_bad_lines){ .list = s->lists.slot[i].name, .source = "the cluster" };
	s->fleet.slicing = sl;
	again(sl);
	return CLUSTER_APPLY_STARTED;
}

void service_slices_settle(struct service *s)
{
	while (s->fleet.slicing && one_slice(s->fleet.slicing))
		;
}

void service_slices_cancel(struct service *s)
{
	if (s->fleet.slicing == NULL)
		return;
	lists_unstage(&s->lists, s->matcher, s->fleet.slicing->list, &s->fleet.slicing->r, "stopped before it was taken");
	slicing_free(s->fleet.slicing);
	s->fleet.slicing = NULL;
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

bool service_version_too_broad(const struct service *s, const char *data, size_t len, char *err, size_t errlen)
{
	static struct entry e;
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
