/* service_fetch.c - the lists with a url: fetched every refresh by bloomd-fetch, each new version taken as a file's is. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <errno.h>
#include <fcntl.h>
#include <event2/event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "fetch.h"
#include "log.h"
#include "service_internal.h"

#define STATUS_MAX 4096       /* bloomd-fetch's status line is a few hundred bytes */
#define DEADLINE_SLACK 15     /* seconds past fetch_timeout before the fetch is killed */

/* One list's fetches: the version held's validators, the one under way, and what came of the last. */
struct list_fetch {
	struct service *s;
	int slot;
	char name[LIST_NAME_MAX];
	char *url;                     /* the url the validators are for; NULL: the slot has none */
	struct event *timer;           /* the next fetch, or the deadline of the one under way */
	struct event *reader;          /* its status line */
	struct fetch_child child;      /* pid 0: none under way */
	char status[STATUS_MAX];
	size_t len;
	uint64_t waiter;               /* a replace waiting for the fetch under way, or 0 */
	bool taking;                   /* its version is being taken in slices (version_taken follows) */
	char etag[FETCH_VALIDATOR_MAX], last_modified[FETCH_VALIDATOR_MAX]; /* of the version held */
	uint64_t started, answered;    /* Unix seconds: the last fetch's start; the server's last 200 or 304 taken */
	uint64_t new_versions, not_modified, failed, refused;
	struct fetch_result last;
	bool any;                      /* last holds a result */
	bool stale;                    /* the last fetch failed or was refused: the list is as it was */
	uint64_t stale_since;          /* Unix seconds: the first failure of the stale spell */
	uint64_t stale_failures;       /* fetches failed or refused in it */
	struct log_limit failures_logged;
	bool stale_told;               /* the stale spell was logged: its end will be */
	char *headers;                 /* source = crowdsec: "X-Api-Key: KEY\n", read at start */
	bool whole_next, whole_asked;  /* crowdsec: ask with startup=true (first, after a gap); the one under way did */
};

struct service_fetches {
	char program[PATH_MAX];
	struct list_fetch list[LISTS_SLOTS];
};

static void fetch_timer_cb(evutil_socket_t fd, short what, void *arg);

/* ---- the validators kept in the state directory: a restart asks conditionally, and not before refresh ---- */

static void kept_name(const struct list_fetch *lf, char *rel, size_t len, bool tmp)
{
	snprintf(rel, len, "fetch/%s%s", lf->name, tmp ? ".tmp" : "");
}

static void keep_validators(struct list_fetch *lf)
{
	char rel[LIST_NAME_MAX + 16], tmp[LIST_NAME_MAX + 16];
	json_t *o = json_pack("{s:s,s:s,s:s,s:I}", "url", lf->url, "etag", lf->etag, "last_modified", lf->last_modified,
			      "answered", (json_int_t)lf->answered);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	struct state_dir *dir = service_statedir(lf->s);
	int fd = text && dir ? state_dir_create(dir, (kept_name(lf, tmp, sizeof(tmp), true), tmp), 0) : -1;

	kept_name(lf, rel, sizeof(rel), false);
	/* Written after the version is kept (fsync'd), never before: a lost copy only costs a whole download. */
	if (fd >= 0 && (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0 ||
			state_dir_rename(dir, tmp, rel) < 0))
		log_warning("list %s: cannot keep its fetch validators: %s", lf->name, strerror(errno));
	else if (fd < 0 && dir)
		log_warning("list %s: cannot keep its fetch validators: %s", lf->name, text ? strerror(errno) : "out of memory");
	free(text);
	json_decref(o);
}

/* The validators of the version the list started with, if they are for its url. */
static void read_validators(struct list_fetch *lf)
{
	char rel[LIST_NAME_MAX + 16], text[2048];
	struct state_dir *dir = service_statedir(lf->s);
	int fd = dir ? state_dir_open_file(dir, (kept_name(lf, rel, sizeof(rel), false), rel), O_RDONLY) : -1;
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;

	if (fd >= 0)
		close(fd);
	json_t *o = n > 0 ? json_loadb(text, (size_t)n, 0, NULL) : NULL;
	const char *url = json_string_value(json_object_get(o, "url"));
	if (url && strcmp(url, lf->url) == 0 && lf->s->lists.slot[lf->slot].version > 0) {
		const char *etag = json_string_value(json_object_get(o, "etag"));
		const char *modified = json_string_value(json_object_get(o, "last_modified"));
		snprintf(lf->etag, sizeof(lf->etag), "%s", etag ? etag : "");
		snprintf(lf->last_modified, sizeof(lf->last_modified), "%s", modified ? modified : "");
		lf->answered = lf->started = (uint64_t)json_integer_value(json_object_get(o, "answered"));
	}
	json_decref(o);
}

/* ---- one fetch ---- */

static void arm(struct list_fetch *lf, uint64_t seconds)
{
	struct timeval tv = { .tv_sec = (time_t)seconds };

	if (event_add(lf->timer, &tv) < 0)
		log_error("list %s: cannot schedule its next fetch: out of memory", lf->name);
}

static void schedule_next(struct list_fetch *lf)
{
	const struct list_config *lc = lf->s->lists.slot[lf->slot].cfg;
	uint64_t now = service_now(), due = lf->started + lc->refresh;

	arm(lf, lf->started == 0 || due <= now ? 0 : due - now);
}

static json_t *result_json(const struct list_fetch *lf)
{
	static const char *const outcome[] = { [FETCH_NEW] = "new", [FETCH_NOT_MODIFIED] = "not_modified",
					       [FETCH_FAILED] = "failed" };
	json_t *o = json_pack("{s:s,s:I,s:I,s:f}", "result", outcome[lf->last.outcome], "http", (json_int_t)lf->last.http,
			      "bytes", (json_int_t)lf->last.bytes, "seconds", lf->last.seconds);

	if (o && lf->last.error[0])
		json_object_set_new(o, "error", json_string(lf->last.error));
	return o;
}

/*
 * When the body's relative times were stated: its Last-Modified (a file a
 * server publishes, its timeouts counted from when it was written), else
 * when it was asked for. Never later than asked.
 */
static uint64_t body_stated(const struct list_fetch *lf)
{
	struct tm tm = { 0 };
	const char *end = strptime(lf->last.last_modified, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	time_t t = end && *end == '\0' ? timegm(&tm) : (time_t)-1;

	return t > 0 && (uint64_t)t < lf->started ? (uint64_t)t : lf->started;
}

/*
 * A list's fetch going stale (since when, why) or current again (after how
 * long, how many failures): each said once, and a failure that recurs
 * meanwhile, or a list that keeps flapping, at most once a minute with the
 * count between. A refusal's own reason is logged where it is found
 * (service_list_loaded), as limited.
 */
static void note_staleness(struct list_fetch *lf, bool stale)
{
	uint64_t now = service_now();
	bool failed = lf->last.outcome == FETCH_FAILED;
	time_t told = lf->failures_logged.last;

	if (stale && !lf->stale) {
		lf->stale_since = now;
		lf->stale_failures = 0;
		log_limited(&lf->failures_logged, 60, LOG_LEVEL_ERROR, "list %s: stale, it keeps its previous version: %s %s%s",
			    lf->name, lf->url, failed ? "cannot be fetched: " : "answered what is refused",
			    failed ? lf->last.error : "");
		lf->stale_told = lf->failures_logged.last != told;
	} else if (stale && failed) {
		log_limited(&lf->failures_logged, 60, LOG_LEVEL_ERROR, "list %s: still stale (%llu s): %s: %s", lf->name,
			    (unsigned long long)(now - lf->stale_since), lf->url, lf->last.error);
		lf->stale_told |= lf->failures_logged.last != told;
	} else if (!stale && lf->stale && lf->stale_told) {
		log_info("list %s: current again after %llu s stale and %llu failed or refused fetches", lf->name,
			 (unsigned long long)(now - lf->stale_since), (unsigned long long)lf->stale_failures);
	}
	lf->stale_failures += stale;
	lf->stale = stale;
}

/* What came of the fetch: the version taken (rc 0) or refused (-1), or none brought (rc 0). */
static void fetch_done(struct list_fetch *lf, int rc)
{
	struct list_state *l = &lf->s->lists.slot[lf->slot];

	if (lf->last.outcome == FETCH_NEW && rc == 0) {
		lf->new_versions++;
		snprintf(lf->etag, sizeof(lf->etag), "%s", lf->last.etag);
		snprintf(lf->last_modified, sizeof(lf->last_modified), "%s", lf->last.last_modified);
	} else if (lf->last.outcome == FETCH_NEW) {
		lf->refused++;
		if (lf->last.error[0] == '\0')
			snprintf(lf->last.error, sizeof(lf->last.error), "%s", l->last.error);
	} else if (lf->last.outcome == FETCH_NOT_MODIFIED) {
		lf->not_modified++;
		log_debug("list %s: %s not modified", lf->name, lf->url);
	} else {
		lf->failed++;
	}
	note_staleness(lf, lf->last.outcome == FETCH_FAILED || rc < 0);
	if (lf->stale) /* a CrowdSec change may be missed (the LAPI moves on at each answer): all is asked for again */
		lf->whole_next = true;
	else if (lf->whole_asked)
		lf->whole_next = false;
	if (!lf->stale) {
		lf->answered = lf->started;
		keep_validators(lf);
	}
	if (lf->waiter) {
		json_t *reply = json_pack("{s:b,s:o}", "ok", lf->last.outcome != FETCH_FAILED && rc == 0, "fetch", result_json(lf));
		if (reply && lf->last.outcome == FETCH_NEW)
			json_object_set_new(reply, "load", service_list_load_json(lf->s, lf->slot));
		if (reply && (lf->last.outcome == FETCH_FAILED || rc < 0))
			json_object_set_new(reply, "error", json_sprintf("list %s keeps its previous version: %s", lf->name,
									 lf->last.error));
		service_propagate(lf->s); /* the version reaches the workers before the reply */
		service_reply_to(lf->s, lf->waiter, reply);
		lf->waiter = 0;
	}
}

static void version_taken(struct service *s, int list, int rc, void *ctx)
{
	struct list_fetch *lf = ctx;

	(void)s;
	(void)list;
	lf->taking = false;
	fetch_done(lf, rc);
}

/*
 * A 200's body, taken as the list's new version a slice at a time (or
 * refused by its guards, as a file's would be): 0 when begun
 * (version_taken follows), -1 when it cannot be.
 */
static int take_version(struct list_fetch *lf)
{
	FILE *f = fdopen(lf->child.body_fd, "r");
	struct feed_spec spec = lf->s->lists.slot[lf->slot].cfg->format;

	if (f == NULL) {
		snprintf(lf->last.error, sizeof(lf->last.error), "cannot read the body: %s", strerror(errno));
		return -1;
	}
	lf->child.body_fd = -1; /* f has it */
	spec.stream_whole = lf->whole_asked;
	spec.stream_only = lf->headers != NULL; /* the LAPI's stream was asked for */
	if (service_slices_take_file(lf->s, lf->slot, f, lf->url, &spec, body_stated(lf), version_taken, lf,
				     lf->last.error, sizeof(lf->last.error)) < 0)
		return -1;
	lf->taking = true;
	return 0;
}

static void fetched(struct list_fetch *lf)
{
	if (lf->last.outcome == FETCH_NEW && take_version(lf) == 0)
		return;
	fetch_done(lf, lf->last.outcome == FETCH_NEW ? -1 : 0);
}

static void status_cb(evutil_socket_t fd, short what, void *arg)
{
	struct list_fetch *lf = arg;
	ssize_t n;

	(void)what;
	while ((n = read(fd, lf->status + lf->len, sizeof(lf->status) - 1 - lf->len)) > 0)
		lf->len += (size_t)n;
	if (n < 0 && errno == EAGAIN && lf->len < sizeof(lf->status) - 1)
		return;
	event_del(lf->reader);
	event_free(lf->reader);
	lf->reader = NULL;
	fetch_finish(&lf->child, lf->status, lf->len, &lf->last);
	lf->any = true;
	fetched(lf);
	if (lf->child.body_fd >= 0)
		close(lf->child.body_fd);
	lf->child.body_fd = -1;
	schedule_next(lf);
}

/* The LAPI's decision stream for lc: whole (startup=true) or the changes since this bouncer last asked. */
static void crowdsec_url(const struct list_config *lc, bool whole, char *url, size_t len)
{
	const char *const names[] = { "scopes", "origins", "scenarios_containing", "scenarios_not_containing" };
	const char *const values[] = { lc->scopes, lc->origins, lc->scenarios_containing, lc->scenarios_not_containing };
	size_t base = strlen(lc->url), at;

	while (base > 0 && lc->url[base - 1] == '/')
		base--;
	at = (size_t)snprintf(url, len, "%.*s/v1/decisions/stream?startup=%s", (int)base, lc->url, whole ? "true" : "false");
	for (size_t i = 0; i < 4 && at < len; i++)
		if (values[i]) /* the configuration let through only what a query carries as it is */
			at += (size_t)snprintf(url + at, len - at, "&%s=%s", names[i], values[i]);
}

static int start_fetch(struct list_fetch *lf, char *err, size_t errlen)
{
	const struct list_config *lc = lf->s->lists.slot[lf->slot].cfg;
	char stream[4096];
	struct fetch_request rq = { .url = lc->url, .etag = lf->etag, .last_modified = lf->last_modified,
				    .ca_file = lc->ca_file, .max_size = lc->max_size, .timeout = lc->fetch_timeout };

	if (lf->headers) { /* CrowdSec's stream: asked with the bouncer's key, never conditionally */
		lf->whole_asked = lf->whole_next;
		crowdsec_url(lc, lf->whole_asked, stream, sizeof(stream));
		rq = (struct fetch_request){ .url = stream, .ca_file = lc->ca_file, .max_size = lc->max_size,
					     .timeout = lc->fetch_timeout, .headers = lf->headers };
	}
	lf->started = service_now();
	lf->len = 0;
	if (fetch_start(lf->s->versions.fetches->program, &rq, &lf->child, err, errlen) < 0)
		return -1;
	lf->reader = event_new(lf->s->base, lf->child.status_fd, EV_READ | EV_PERSIST, status_cb, lf);
	if (lf->reader == NULL || event_add(lf->reader, NULL) < 0) {
		fetch_cancel(&lf->child);
		error_set(err, errlen, "out of memory for the fetch");
		return -1;
	}
	arm(lf, lc->fetch_timeout + DEADLINE_SLACK);
	return 0;
}

/* Stop the fetch under way (its waiter told why). */
static void cancel(struct list_fetch *lf, const char *why)
{
	if (lf->reader) {
		event_free(lf->reader);
		lf->reader = NULL;
	}
	if (lf->child.pid > 0)
		fetch_cancel(&lf->child);
	if (lf->waiter)
		service_reply_to(lf->s, lf->waiter, json_pack("{s:b,s:s}", "ok", false, "error", why));
	lf->waiter = 0;
}

static void fetch_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct list_fetch *lf = arg;
	char err[512];

	(void)fd;
	(void)what;
	if (lf->child.pid > 0) { /* the deadline: bloomd-fetch's own timeout did not end it */
		snprintf(lf->last.error, sizeof(lf->last.error), "bloomd-fetch did not finish within %u s: killed",
			 lf->s->lists.slot[lf->slot].cfg->fetch_timeout + DEADLINE_SLACK);
		lf->last.outcome = FETCH_FAILED;
		lf->any = true;
		lf->failed++;
		log_error("list %s: %s", lf->name, lf->last.error);
		cancel(lf, lf->last.error);
		schedule_next(lf);
		return;
	}
	if (start_fetch(lf, err, sizeof(err)) < 0) {
		lf->failed++;
		log_error("list %s: %s", lf->name, err);
		schedule_next(lf);
	}
}

/* ---- the lists' fetches as the configuration says ---- */

static void forget(struct list_fetch *lf)
{
	if (lf->taking) /* its version is taken first: lf is version_taken's */
		service_slices_settle(lf->s);
	cancel(lf, "the list's url changed or the list is gone (reload)");
	if (lf->timer)
		event_free(lf->timer);
	free(lf->url);
	free(lf->headers);
	*lf = (struct list_fetch){ .child = { .body_fd = -1, .status_fd = -1 } };
}

/*
 * A CrowdSec bouncer's key from path as the header that carries it (caller
 * frees), or NULL with a message. Read at start, before privileges go: the
 * file may be root's alone; others must not read it.
 */
static char *api_key_header(const char *path, char *err, size_t errlen)
{
	char key[512], *header = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO would hold the start */
	bool regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	ssize_t n = regular ? read(fd, key, sizeof(key) - 1) : -1;
	int error = fd >= 0 && !regular ? EINVAL : errno;

	if (fd >= 0)
		close(fd);
	if (n < 0) {
		error_set(err, errlen, "api_key_file %s: %s", path, error == EINVAL ? "not a regular file" : strerror(error));
		return NULL;
	}
	if (st.st_mode & S_IROTH) {
		explicit_bzero(key, sizeof(key));
		error_set(err, errlen, "api_key_file %s: every user may read it (chmod o-r %s)", path, path);
		return NULL;
	}
	key[n] = '\0';
	key[strcspn(key, "\r\n")] = '\0';
	bool one_word = key[0] != '\0';
	for (const char *c = key; *c; c++)
		one_word &= *c > ' ' && *c != 0x7f;
	if (!one_word)
		error_set(err, errlen, "api_key_file %s: not a key on one line (what cscli bouncers add printed)", path);
	else if (asprintf(&header, "X-Api-Key: %s\n", key) < 0) {
		error_set(err, errlen, "out of memory");
		header = NULL;
	}
	explicit_bzero(key, sizeof(key));
	return header;
}

/* Slot i's fetch made for its url (its validators read back at the first configuration). */
static int adopt(struct service *s, int i, bool starting)
{
	struct list_fetch *lf = &s->versions.fetches->list[i];
	const struct list_state *l = &s->lists.slot[i];

	if (lf->url && strcmp(lf->name, l->name) == 0 && strcmp(lf->url, l->cfg->url) == 0 &&
	    (lf->headers != NULL) == (l->cfg->source == LIST_SOURCE_CROWDSEC)) { /* its key too: read once, at start */
		if (lf->child.pid == 0)
			schedule_next(lf); /* refresh may have changed */
		return 0;
	}
	forget(lf);
	lf->s = s;
	lf->slot = i;
	snprintf(lf->name, sizeof(lf->name), "%s", l->name);
	lf->url = strdup(l->cfg->url);
	lf->timer = event_new(s->base, -1, 0, fetch_timer_cb, lf);
	if (lf->url == NULL || lf->timer == NULL) {
		forget(lf);
		return -1;
	}
	if (l->cfg->source == LIST_SOURCE_CROWDSEC) {
		char err[512];
		if ((lf->headers = api_key_header(l->cfg->api_key_file, err, sizeof(err))) == NULL) {
			log_error("list %s: %s; the list is not fetched", l->name, err);
			forget(lf);
			return 0;
		}
		lf->whole_next = true; /* what changed while bloomd was not asking is unknown */
		schedule_next(lf);
		return 0;
	}
	if (starting)
		read_validators(lf);
	schedule_next(lf);
	return 0;
}

int service_fetch_configure(struct service *s, bool starting)
{
	char err[512];
	bool any = false;

	for (int i = 0; i < LISTS_SLOTS; i++)
		any |= s->lists.slot[i].name[0] && s->lists.slot[i].cfg && s->lists.slot[i].cfg->url;
	if (s->versions.fetches == NULL && !any)
		return 0;
	if (s->versions.fetches == NULL) {
		if ((s->versions.fetches = calloc(1, sizeof(*s->versions.fetches))) == NULL) {
			log_error("out of memory for the lists' fetches");
			return -1;
		}
		for (int i = 0; i < LISTS_SLOTS; i++)
			s->versions.fetches->list[i].child = (struct fetch_child){ .body_fd = -1, .status_fd = -1 };
	}
	if (any && s->versions.fetches->program[0] == '\0' &&
	    fetch_program(s->versions.fetches->program, sizeof(s->versions.fetches->program), err, sizeof(err)) < 0) {
		s->versions.fetches->program[0] = '\0';
		log_error("%s", err);
		return -1;
	}
	for (int i = 0; i < LISTS_SLOTS; i++) {
		const struct list_state *l = &s->lists.slot[i];
		if (l->name[0] == '\0' || l->cfg == NULL || l->cfg->url == NULL)
			forget(&s->versions.fetches->list[i]);
		else if (adopt(s, i, starting) < 0) {
			log_error("list %s: out of memory for its fetches", l->name);
			return -1;
		}
	}
	return 0;
}

/* Slot i's fetch, or NULL if the list has no url. */
static struct list_fetch *fetch_of(const struct service *s, int i)
{
	return i >= 0 && s->versions.fetches && s->versions.fetches->list[i].url ? &s->versions.fetches->list[i] : NULL;
}

int service_list_fetch(struct service *s, const char *name, uint64_t waiter, char *err, size_t errlen)
{
	struct list_fetch *lf = fetch_of(s, lists_find(&s->lists, name));

	if (lf == NULL)
		return 0;
	if (lf->child.pid > 0 || lf->waiter || lf->taking) {
		error_set(err, errlen, "list %s: a fetch of %s is under way", lf->name, lf->url);
		return -1;
	}
	event_del(lf->timer);
	if (start_fetch(lf, err, errlen) < 0) {
		schedule_next(lf);
		return -1;
	}
	lf->waiter = waiter;
	return 1;
}

static json_t *fetch_json(const struct list_fetch *lf)
{
	const struct list_config *lc = lf->s->lists.slot[lf->slot].cfg;
	json_t *o = json_pack("{s:s,s:I,s:b,s:I,s:I,s:I,s:I}", "url", lf->url, "refresh", (json_int_t)lc->refresh,
			      "under_way", lf->child.pid > 0, "new", (json_int_t)lf->new_versions, "not_modified",
			      (json_int_t)lf->not_modified, "failed", (json_int_t)lf->failed, "refused",
			      (json_int_t)lf->refused);

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "state", json_string(!lf->any ? "starting" : lf->stale ? "stale" : "current"));
	if (lf->headers)
		json_object_set_new(o, "source", json_string("crowdsec"));
	json_object_set_new(o, "started", lf->started ? json_integer((json_int_t)lf->started) : json_null());
	json_object_set_new(o, "answered", lf->answered ? json_integer((json_int_t)lf->answered) : json_null());
	if (lf->stale)
		json_object_set_new(o, "stale_since", json_integer((json_int_t)lf->stale_since));
	uint64_t next = lf->started + lc->refresh, now = service_now();
	json_object_set_new(o, "next", lf->child.pid > 0 || lf->taking ? json_null()
				       : json_integer((json_int_t)(lf->started == 0 || next < now ? now : next)));
	if (lf->etag[0])
		json_object_set_new(o, "etag", json_string(lf->etag));
	if (lf->last_modified[0])
		json_object_set_new(o, "last_modified", json_string(lf->last_modified));
	if (lf->any)
		json_object_set_new(o, "last", result_json(lf));
	return o;
}

json_t *service_lists_json(struct service *s)
{
	json_t *lists = service_lists_own_json(s), *o;
	size_t at;

	json_array_foreach(lists, at, o) {
		const struct list_fetch *lf = fetch_of(s, lists_find(&s->lists, json_string_value(json_object_get(o, "name"))));
		if (lf)
			json_object_set_new(o, "fetch", fetch_json(lf));
	}
	return lists;
}

json_t *service_fetches_stats(const struct service *s)
{
	if (s->versions.fetches == NULL)
		return NULL;
	json_t *out = json_object();

	for (int i = 0; i < LISTS_SLOTS && out; i++) {
		const struct list_fetch *lf = &s->versions.fetches->list[i];
		if (lf->url)
			json_object_set_new(out, lf->name,
					    json_pack("{s:I,s:I,s:I,s:I,s:I,s:i,s:I,s:I}", "new", (json_int_t)lf->new_versions,
						      "not_modified", (json_int_t)lf->not_modified, "failed",
						      (json_int_t)lf->failed, "refused", (json_int_t)lf->refused,
						      "answered", (json_int_t)lf->answered, "stale", lf->stale, "stale_since",
						      (json_int_t)(lf->stale ? lf->stale_since : 0), "refresh",
						      (json_int_t)lf->s->lists.slot[lf->slot].cfg->refresh));
	}
	return out;
}

void service_fetch_stop(struct service *s)
{
	if (s->versions.fetches == NULL)
		return;
	for (int i = 0; i < LISTS_SLOTS; i++)
		forget(&s->versions.fetches->list[i]);
	free(s->versions.fetches);
	s->versions.fetches = NULL;
}
