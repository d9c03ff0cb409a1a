/* cluster.c - sensors sharing their entries through a Redis stream, and events to Redis. */
#include "cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cluster_seen.h"
#include "cluster_sign.h"
#include "error.h"
#include "log.h"
#include "stats.h"
#include "statedir.h"

#define READ_COUNT 1000          /* entries an XREAD returns at most */
#define TEXT_OF(x) #x
#define TEXT(x) TEXT_OF(x)
#define READ_BLOCK_MS "2000"     /* how long it waits for one */
#define LAG_CAP 1000             /* lag counted up to this many entries */
#define STALE_RETRY_SECONDS 2
#define RETRY_MAX_SECONDS 30
#define ID_MAX 48
#define DELAYS 1024               /* the last so many propagation delays, for their percentiles */

/* Where a problem was met: each is cleared by that side's next success only. */
enum error_slot { ERROR_READER, ERROR_WRITER, ERROR_FILES, ERROR_SLOTS };
static const char *const ERROR_SLOT_NAMES[ERROR_SLOTS] = { "reader", "writer", "files" };

struct stream_id {
	uint64_t ms, seq;
};

/* One connection: reader or writer. */
struct conn {
	struct cluster *c;
	redisAsyncContext *ac;     /* NULL: down */
	bool up;                   /* connected (and authenticated, if asked) */
	const char *name;
	enum error_slot slot;      /* where its problems are said */
};

/* The outbox: changes journaled here, not yet acknowledged by the stream. */
struct outbox {
	char **lines;              /* "@CHANGE-ID OP EXPIRES ENTRY[\x1fDATA]": DATA's newlines as \x1f */
	size_t head, sent, n, cap; /* [head, sent) in flight, [sent, n) waiting */
	int fd;                    /* cluster.outbox, or -1 */
	bool dirty;                /* written, not fsync'd */
	bool failed;               /* a write or fsync failed: the file is not trusted until written anew */
};

struct cluster {
	struct event_base *base;
	const struct cluster_config *cfg;
	struct cluster_callbacks cb;
	const struct statedir *dir; /* the state directory, or NULL */
	bool sync_always;
	struct conn reader, writer;
	char snapshot_key[256];

	char cursor[ID_MAX];       /* last stream ID applied */
	bool cursor_dirty;
	enum { READER_IDLE, READER_READING, READER_STALE } state;
	bool gap;                  /* the last check found the stream trimmed past the cursor */
	bool resyncing;            /* the cursor was past the stream's end: following it again from its start */
	uint64_t desyncs;
	char last_generated[ID_MAX]; /* the stream's last ID, as the last check found it */
	char blocked_at[ID_MAX];   /* an entry that could not be applied now, tried again; "" when none */
	struct {                   /* an entry the daemon applies in slices (CLUSTER_APPLY_STARTED): reading waits */
		bool on;
		char id[ID_MAX];
		struct change_id change;
		bool identified;
		char what[200];    /* "replace LIST from NODE", for messages */
	} applying;
	unsigned retry_seconds;    /* how long until it is (doubling up to RETRY_MAX_SECONDS) */
	time_t stale_since;
	struct outbox out;

	uint64_t applied, apply_errors, published, restored, duplicates;
	uint64_t incarnation;      /* this start's, drawn at random: with next_seq, each change's identity */
	uint64_t next_seq;
	struct cluster_seen *seen; /* the changes applied, by identity: a re-send is passed */
	struct sign_key *key;      /* [cluster] key_file's: changes and snapshots signed and checked; NULL: none */
	uint64_t unauthenticated, oversized; /* entries passed: no or a wrong mac; larger than max_entry_bytes */
	struct log_limit unauthenticated_logged;
	uint64_t events_sent, events_pending, events_failed;
	char last_id_seen[ID_MAX]; /* the stream's newest ID, from the lag check */
	char trimmed_to[ID_MAX];   /* where a snapshot must reach, when the stream was trimmed past us */
	struct cluster_config own; /* a copy: a reload frees the configuration's */
	uint64_t lag_entries;
	bool lag_capped, lag_asked;
	time_t last_snapshot;      /* when this node last published one (snapshot_every) */
	char errors[ERROR_SLOTS][300]; /* the last problem of the reader, the writer, the state files; "" when none */
	uint64_t error_seq[ERROR_SLOTS]; /* when each was set, to say the newest */
	uint64_t errors_set;
	bool closing;
	/* How long other nodes' changes took to be applied here: from their XADD (the ID's time) on. */
	uint32_t delay_ms[DELAYS];
	uint64_t ndelays;
};

/* ---- IDs ---- */

static struct stream_id parse_id(const char *text)
{
	struct stream_id id = { 0, 0 };
	char *end;

	id.ms = strtoull(text, &end, 10);
	if (*end == '-')
		id.seq = strtoull(end + 1, NULL, 10);
	return id;
}

static int id_cmp(const char *a, const char *b)
{
	struct stream_id x = parse_id(a), y = parse_id(b);

	if (x.ms != y.ms)
		return x.ms < y.ms ? -1 : 1;
	return x.seq < y.seq ? -1 : x.seq > y.seq;
}

static void set_error(struct cluster *c, enum error_slot slot, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_error(struct cluster *c, enum error_slot slot, const char *fmt, ...)
{
	char text[sizeof(c->errors[0])];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (strcmp(text, c->errors[slot]) != 0)
		log_warning("cluster: %s", text);
	snprintf(c->errors[slot], sizeof(c->errors[slot]), "%s", text);
	c->error_seq[slot] = ++c->errors_set;
}

static void clear_error(struct cluster *c, enum error_slot slot)
{
	c->errors[slot][0] = '\0';
}

/* The newest problem still standing, or NULL. */
static const char *newest_error(const struct cluster *c)
{
	const char *newest = NULL;
	uint64_t at = 0;

	for (int i = 0; i < ERROR_SLOTS; i++)
		if (c->errors[i][0] && c->error_seq[i] >= at) {
			newest = c->errors[i];
			at = c->error_seq[i];
		}
	return newest;
}

/* ---- state files ---- */

#define CURSOR_FILE "cluster.cursor"
#define CURSOR_TMP "cluster.cursor.tmp"
#define OUTBOX_FILE "cluster.outbox"

/* The cursor a previous run saved; none: from the start. A cursor that is no regular file stops the start. */
static int load_cursor(struct cluster *c, char *err, size_t errlen)
{
	char path[4200];
	FILE *f;
	int fd;

	snprintf(c->cursor, sizeof(c->cursor), "0-0");
	if (c->dir == NULL)
		return 0;
	if ((fd = statedir_open_file(c->dir, CURSOR_FILE, O_RDONLY)) < 0 || (f = fdopen(fd, "r")) == NULL) {
		if (errno == ENOENT)
			return 0;
		error_set(err, errlen, "%s: %s", statedir_name(c->dir, CURSOR_FILE, path, sizeof(path)),
			  statedir_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	if (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		struct stream_id id = parse_id(line);
		snprintf(c->cursor, sizeof(c->cursor), "%" PRIu64 "-%" PRIu64, id.ms, id.seq);
	}
	while (getline(&line, &cap, f) > 0) /* the changes applied up to the cursor, by identity */
		seen_take_line(c->seen, line);
	free(line);
	fclose(f);
	return 0;
}

static void save_cursor(struct cluster *c)
{
	char path[4200];

	if (c->dir == NULL || !c->cursor_dirty || !c->cb.durable(c->cb.ctx))
		return;
	int fd = statedir_create(c->dir, CURSOR_TMP, 0);
	size_t n = strlen(c->cursor), seen_len = 0;
	char *seen = seen_text(c->seen, &seen_len);
	if (fd < 0 || seen == NULL || write(fd, c->cursor, n) != (ssize_t)n || write(fd, "\n", 1) != 1 ||
	    write(fd, seen, seen_len) != (ssize_t)seen_len || fsync(fd) < 0 ||
	    statedir_rename(c->dir, CURSOR_TMP, CURSOR_FILE) < 0) {
		set_error(c, ERROR_FILES, "%s: cannot be written: %s", statedir_name(c->dir, CURSOR_FILE, path, sizeof(path)),
			  statedir_strerror(errno));
	} else {
		c->cursor_dirty = false;
	}
	free(seen);
	if (fd >= 0)
		close(fd);
}

static int outbox_push(struct cluster *c, char *line)
{
	struct outbox *o = &c->out;

	if (o->n == o->cap) {
		if (o->head > 0) { /* slide what is left to the front */
			memmove(o->lines, o->lines + o->head, (o->n - o->head) * sizeof(*o->lines));
			o->n -= o->head;
			o->sent -= o->head;
			o->head = 0;
		}
		if (o->n == o->cap) {
			size_t cap = o->cap ? 2 * o->cap : 256;
			char **grown = realloc(o->lines, cap * sizeof(*grown));
			if (grown == NULL)
				return -1;
			o->lines = grown;
			o->cap = cap;
		}
	}
	o->lines[o->n++] = line;
	return 0;
}

/* "@CHANGE-ID line", the change's identity the next of this start's (caller frees), or NULL. */
static char *with_identity(struct cluster *c, const char *line)
{
	char id[48], *out;

	seen_format_id(c->incarnation, c->next_seq++, id, sizeof(id));
	return asprintf(&out, "@%s %s", id, line) < 0 ? NULL : out;
}

/* The outbox a previous run left: its changes are sent again, each under the identity it had. */
static int load_outbox(struct cluster *c, char *err, size_t errlen)
{
	char path[4200], *line = NULL;
	size_t cap = 0;
	ssize_t got;

	c->out.fd = -1;
	if (c->dir == NULL)
		return 0;
	c->out.fd = statedir_open_file(c->dir, OUTBOX_FILE, O_RDWR | O_APPEND);
	if (c->out.fd < 0 && errno == ENOENT)
		c->out.fd = statedir_create(c->dir, OUTBOX_FILE, O_RDWR | O_APPEND);
	FILE *f = c->out.fd >= 0 ? fdopen(dup(c->out.fd), "r") : NULL;
	if (f == NULL) {
		error_set(err, errlen, "%s: %s", statedir_name(c->dir, OUTBOX_FILE, path, sizeof(path)),
			  statedir_strerror(errno));
		return -1;
	}
	while ((got = getline(&line, &cap, f)) > 0) {
		if (line[got - 1] != '\n')
			break; /* torn by a crash: never acknowledged */
		line[got - 1] = '\0';
		char *copy = line[0] == '@' ? strdup(line) : with_identity(c, line); /* 0.7's had none */
		if (copy == NULL || outbox_push(c, copy) < 0) {
			free(copy);
			break;
		}
	}
	free(line);
	fclose(f);
	if (c->out.n)
		log_info("cluster: %zu changes not yet in the stream are sent again", c->out.n);
	return 0;
}

#define OUTBOX_TMP "cluster.outbox.tmp"

/* The outbox could not be written or fsync'd: said, and no change is acknowledged until it is written anew. */
static void outbox_failed(struct cluster *c, int e)
{
	char path[4200];

	c->out.failed = true;
	set_error(c, ERROR_FILES, "%s: %s: changes are refused until it can be written (tried each second)",
		  statedir_name(c->dir, OUTBOX_FILE, path, sizeof(path)), strerror(e));
}

static void sync_outbox(struct cluster *c)
{
	if (c->out.fd < 0 || !c->out.dirty || c->out.failed)
		return;
	if (fdatasync(c->out.fd) == 0)
		c->out.dirty = false;
	else
		outbox_failed(c, errno); /* the kernel may have dropped the pages: only a new file is trusted */
}

/* After a failure: the changes not yet in the stream written to a new outbox, fsync'd, renamed in place. */
static void rewrite_outbox(struct cluster *c)
{
	struct outbox *o = &c->out;
	int fd = statedir_create(c->dir, OUTBOX_TMP, O_RDWR | O_APPEND);

	for (size_t i = o->head; fd >= 0 && i < o->n; i++)
		if (write(fd, o->lines[i], strlen(o->lines[i])) != (ssize_t)strlen(o->lines[i]) || write(fd, "\n", 1) != 1) {
			close(fd);
			fd = -1;
		}
	if (fd < 0 || fdatasync(fd) < 0 || statedir_rename(c->dir, OUTBOX_TMP, OUTBOX_FILE) < 0 ||
	    statedir_sync(c->dir, OUTBOX_FILE) < 0) {
		if (fd >= 0)
			close(fd);
		statedir_unlink(c->dir, OUTBOX_TMP);
		return;
	}
	close(o->fd);
	o->fd = fd;
	o->failed = o->dirty = false;
	clear_error(c, ERROR_FILES);
	log_info("cluster: the outbox is written again (%zu changes in it)", o->n - o->head);
}

int cluster_outbox_error(const struct cluster *c, char *err, size_t errlen)
{
	if (!c->out.failed)
		return 0;
	error_set(err, errlen, "%s", c->errors[ERROR_FILES]);
	return -1;
}

/* ---- connections ---- */

static void writer_flush(struct cluster *c);
static void reader_read(struct cluster *c);
static void on_snapshot(redisAsyncContext *ac, void *r, void *priv);
static void on_check(redisAsyncContext *ac, void *r, void *priv);

static void on_connect(const redisAsyncContext *ac, int status)
{
	struct conn *k = ac->data;

	if (status != REDIS_OK) {
		set_error(k->c, k->slot, "%s connection: %s", k->name, ac->errstr);
		k->ac = NULL; /* hiredis frees it */
		return;
	}
	k->up = true;
	if (k == &k->c->writer) {
		k->c->out.sent = k->c->out.head; /* what was in flight on a lost connection goes again */
		writer_flush(k->c);
	} else {
		reader_read(k->c);
	}
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
	struct conn *k = ac->data;

	if (status != REDIS_OK && !k->c->closing)
		set_error(k->c, k->slot, "%s connection lost: %s", k->name, ac->errstr);
	k->ac = NULL;
	k->up = false;
	if (k == &k->c->reader)
		k->c->state = READER_IDLE;
	else
		k->c->events_pending = 0; /* their replies will not come */
}

static void on_auth(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	struct conn *k = priv;

	(void)ac;
	if (reply && reply->type == REDIS_REPLY_ERROR)
		set_error(k->c, k->slot, "AUTH: %s", reply->str);
}

static void connect_one(struct cluster *c, struct conn *k)
{
	const char *where = c->cfg->redis;
	redisAsyncContext *ac;

	if (strncmp(where, "unix:", 5) == 0) {
		ac = redisAsyncConnectUnix(where + 5);
	} else {
		char host[256];
		const char *colon = strrchr(where + 6, ':');
		snprintf(host, sizeof(host), "%.*s", (int)(colon - where - 6), where + 6);
		ac = redisAsyncConnect(host, atoi(colon + 1));
	}
	if (ac == NULL)
		return;
	if (ac->err) {
		set_error(c, k->slot, "%s connection: %s", k->name, ac->errstr);
		redisAsyncFree(ac);
		return;
	}
	ac->data = k;
	k->ac = ac;
	redisLibeventAttach(ac, c->base);
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	if (c->cfg->password) {
		const char *argv[] = { "AUTH", c->cfg->password };
		redisAsyncCommandArgv(ac, on_auth, k, 2, argv, NULL);
	}
}

/* ---- the reader: following the stream ---- */


/* A field of a flat [name, value, ...] reply, or NULL. */
static const redisReply *field(const redisReply *r, const char *name)
{
	if (r == NULL || r->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (size_t i = 0; i + 1 < r->elements; i += 2)
		if (r->element[i]->type == REDIS_REPLY_STRING && strcmp(r->element[i]->str, name) == 0)
			return r->element[i + 1];
	return NULL;
}

/* A reply's type checked before its value is read: its text (a bulk or status string), or NULL. */
static const char *reply_text(const redisReply *r)
{
	return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) ? r->str : NULL;
}

/* Whether r is an array of n elements (any number: n == 0 and any). */
static bool reply_array(const redisReply *r, size_t n, bool any)
{
	return r && r->type == REDIS_REPLY_ARRAY && (any || r->elements == n);
}

/* A stream ID as Redis writes it: MS-SEQ, both decimal. */
static bool id_valid(const char *text)
{
	size_t ms = strspn(text, "0123456789");

	return text && ms > 0 && ms <= 20 && text[ms] == '-' && strspn(text + ms + 1, "0123456789") > 0 &&
	       strlen(text + ms + 1) == strspn(text + ms + 1, "0123456789") && strlen(text + ms + 1) <= 20;
}

/* A stream entry as XREAD and XRANGE give it: [ID, [field, value, ...]]. */
static bool entry_shaped(const redisReply *e)
{
	return reply_array(e, 2, false) && reply_text(e->element[0]) && id_valid(e->element[0]->str) &&
	       reply_array(e->element[1], 0, true);
}

/*
 * A reply of a shape its command never gives (a fake or broken server): an
 * error on that connection, which is dropped and made again (cluster_tick).
 */
static void bad_reply(struct conn *k, const char *command, const redisReply *r)
{
	set_error(k->c, k->slot, "%s: a reply of an unexpected shape (type %d): the %s connection is dropped", command,
		  r ? r->type : -1, k->name);
	if (k->ac)
		redisAsyncDisconnect(k->ac);
}

static const char *const OP_NAMES[] = { [CLUSTER_ADD] = "add", [CLUSTER_DEL] = "del",
					 [CLUSTER_REPLACE] = "replace", [CLUSTER_FLUSH] = "flush" };

static int op_kind(const char *name)
{
	for (int k = 0; k < 4; k++)
		if (strcmp(name, OP_NAMES[k]) == 0)
			return k;
	return -1;
}

/* The entry's identity (fields node and change); false for one without (from bloomd 0.7). */
static bool change_of(const redisReply *e, struct change_id *id)
{
	const char *node = reply_text(field(e->element[1], "node")), *change = reply_text(field(e->element[1], "change"));

	if (node == NULL || change == NULL || seen_parse_id(change, &id->incarnation, &id->seq) < 0)
		return false;
	snprintf(id->node, sizeof(id->node), "%s", node);
	return true;
}

/* A reply's text and length as a signed field ("" when it is missing or not text). */
static struct sign_field text_field(const redisReply *r)
{
	return reply_text(r) ? (struct sign_field){ r->str, r->len } : (struct sign_field){ "", 0 };
}

/* The fields a change is signed over, the stream's name first (a change is not moved to another stream). */
static void change_fields(const struct cluster *c, const redisReply *fields, struct sign_field out[7])
{
	static const char *const NAMES[] = { "node", "change", "op", "expires", "entry", "data" };

	out[0] = (struct sign_field){ c->cfg->stream, strlen(c->cfg->stream) };
	for (int i = 0; i < 6; i++)
		out[i + 1] = text_field(field(fields, NAMES[i]));
}

/*
 * Whether an entry may be applied at all: not larger than max_entry_bytes
 * (refused before any of it is parsed), and, with a key, signed with it.
 * What is not is counted and passed, never applied nor tried again.
 */
static bool acceptable(struct cluster *c, const redisReply *e)
{
	const redisReply *fields = e->element[1];
	size_t bytes = 0;

	for (size_t i = 0; i < fields->elements; i++)
		bytes += reply_text(fields->element[i]) ? fields->element[i]->len : 0;
	if (bytes > c->cfg->max_entry_bytes) {
		c->oversized++;
		c->apply_errors++;
		log_warning("cluster: the entry at %s has %zu bytes, more than [cluster] max_entry_bytes (%llu): refused",
			    e->element[0]->str, bytes, (unsigned long long)c->cfg->max_entry_bytes);
		return false;
	}
	if (c->key == NULL)
		return true;
	struct sign_field f[7];
	change_fields(c, fields, f);
	const redisReply *mac = field(fields, "mac");
	if (sign_check(c->key, "bloomd change", f, 7, reply_text(mac), reply_text(mac) ? mac->len : 0))
		return true;
	c->unauthenticated++;
	log_limited(&c->unauthenticated_logged, 60, LOG_LEVEL_WARNING,
		    "cluster: the entry at %s is %s [cluster] key_file's key: not applied", e->element[0]->str,
		    mac ? "not signed with" : "not signed, and this node needs");
	return false;
}

/* The entry at id is done with (applied, refused or passed): the cursor moves past it. -1 if not now. */
static int entry_done(struct cluster *c, const char *id, const struct change_id *change)
{
	if (change && seen_record(c->seen, change) < 0) {
		set_error(c, ERROR_READER, "out of memory for the changes applied; tried again");
		return -1;
	}
	if (c->blocked_at[0]) {
		log_info("cluster: the entry at %s is applied: going on", c->blocked_at);
		c->blocked_at[0] = '\0';
		c->retry_seconds = 0;
		clear_error(c, ERROR_READER);
	}
	snprintf(c->cursor, sizeof(c->cursor), "%s", id);
	c->cursor_dirty = true;
	return 0;
}

/*
 * What came of applying the entry at id (rc: cb.apply's; what: "OP ENTRY
 * from NODE"): -1 when it could not be applied now (the state cannot be
 * written, no memory): the cursor stays before it, to be tried again. An
 * entry refused for what it says is counted and passed.
 */
static int entry_applied(struct cluster *c, const char *id, const struct change_id *change, int rc, const char *err,
			 const char *what)
{
	if (rc == CLUSTER_APPLY_LATER) {
		c->apply_errors++;
		snprintf(c->blocked_at, sizeof(c->blocked_at), "%s", id);
		set_error(c, ERROR_READER, "%s (%s) cannot be applied now: %s; tried again, the cursor stays before it",
			  what, id, err);
		return -1;
	}
	if (rc < 0) {
		c->apply_errors++;
		log_warning("cluster: %s (%s): %s", what, id, err);
	} else {
		c->applied++;
	}
	return entry_done(c, id, change);
}

static void note_delay(struct cluster *c, const char *id)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000, at = parse_id(id).ms;
	c->delay_ms[c->ndelays++ % DELAYS] = ms > at ? (uint32_t)(ms - at) : 0;
}

/* apply_entry's answers besides 0: try again later, or the daemon applies it in slices (reading waits). */
enum { ENTRY_LATER = -1, ENTRY_STARTED = 1 };

/* Apply one entry and move the cursor past it: 0, ENTRY_LATER or ENTRY_STARTED. */
static int apply_entry(struct cluster *c, const redisReply *e)
{
	char err[256], what[sizeof(c->applying.what)];
	const char *id = e->element[0]->str;

	const redisReply *op = field(e->element[1], "op"), *entry = field(e->element[1], "entry"),
			 *node = field(e->element[1], "node"), *expires = field(e->element[1], "expires");
	const redisReply *data = field(e->element[1], "data");
	struct change_id change = { .seq = 0 };
	if (!acceptable(c, e))
		return entry_done(c, id, NULL);
	bool identified = change_of(e, &change);
	if (identified && seen_already(c->seen, &change)) { /* a re-send: its first copy counted */
		c->duplicates++;
		return entry_done(c, id, NULL);
	}
	int kind = op && op->type == REDIS_REPLY_STRING ? op_kind(op->str) : -1;
	if (kind < 0 || !entry || entry->type != REDIS_REPLY_STRING) {
		c->apply_errors++;
		return entry_done(c, id, identified ? &change : NULL);
	}
	struct cluster_op o = {
		.kind = (enum cluster_op_kind)kind, .entry = entry->str,
		.expires = expires && expires->type == REDIS_REPLY_STRING ? strtoull(expires->str, NULL, 10) : 0,
		.data = data && data->type == REDIS_REPLY_STRING ? data->str : "",
		.data_len = data && data->type == REDIS_REPLY_STRING ? data->len : 0,
		.node = node && node->type == REDIS_REPLY_STRING ? node->str : "?",
	};
	if (strcmp(o.node, c->cfg->node) != 0)
		note_delay(c, id);
	snprintf(what, sizeof(what), "%s %.64s from %.64s", op->str, entry->str, o.node);
	int rc = c->cb.apply(c->cb.ctx, &o, err, sizeof(err));
	if (rc == CLUSTER_APPLY_STARTED) {
		c->applying.on = true;
		snprintf(c->applying.id, sizeof(c->applying.id), "%s", id);
		c->applying.change = change;
		c->applying.identified = identified;
		snprintf(c->applying.what, sizeof(c->applying.what), "%s", what);
		return ENTRY_STARTED;
	}
	return entry_applied(c, id, identified ? &change : NULL, rc, err, what);
}

/* An entry could not be applied now: the reader waits, longer each time, and reads again from it. */
static void retry_later(struct cluster *c)
{
	c->state = READER_STALE;
	c->stale_since = time(NULL);
	c->retry_seconds = c->retry_seconds ? (c->retry_seconds * 2 > RETRY_MAX_SECONDS ? RETRY_MAX_SECONDS
										: c->retry_seconds * 2)
					    : STALE_RETRY_SECONDS;
}

void cluster_applied(struct cluster *c, int rc, const char *err)
{
	if (!c->applying.on)
		return;
	c->applying.on = false;
	if (entry_applied(c, c->applying.id, c->applying.identified ? &c->applying.change : NULL, rc, err,
			  c->applying.what) < 0)
		retry_later(c);
	else
		reader_read(c); /* what the batch held after it is read again */
}

/* XREAD's entries of our one stream: [[stream, [entry, ...]]], every entry shaped; NULL if not so. */
static const redisReply *xread_entries(const redisReply *r)
{
	if (!reply_array(r, 1, false) || !reply_array(r->element[0], 2, false) || !reply_text(r->element[0]->element[0]) ||
	    !reply_array(r->element[0]->element[1], 0, true))
		return NULL;
	const redisReply *entries = r->element[0]->element[1];
	for (size_t i = 0; i < entries->elements; i++)
		if (!entry_shaped(entries->element[i]))
			return NULL;
	return entries;
}

static void on_read(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply == NULL || c->closing)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		set_error(c, ERROR_READER, "XREAD: %s", reply->str);
		c->state = READER_STALE;
		c->stale_since = time(NULL);
		return;
	}
	const redisReply *entries = xread_entries(reply);
	if (reply->type != REDIS_REPLY_NIL && entries == NULL) {
		bad_reply(&c->reader, "XREAD", reply);
		return;
	}
	if (c->gap) { /* the stream was trimmed past us: what XREAD gave skips entries; the snapshot first */
		const char *argv[] = { "HGETALL", c->snapshot_key };
		redisAsyncCommandArgv(c->reader.ac, on_snapshot, c, 2, argv, NULL);
		return;
	}
	for (size_t i = 0; entries && i < entries->elements; i++) {
		int rc = apply_entry(c, entries->element[i]);
		if (rc == ENTRY_STARTED) /* cluster_applied goes on */
			return;
		if (rc == ENTRY_LATER) { /* again later, from the entry that failed */
			retry_later(c);
			return;
		}
	}
	if (c->resyncing && (entries == NULL || entries->elements < READ_COUNT)) {
		c->resyncing = false;
		clear_error(c, ERROR_READER);
		log_info("cluster: in step with the stream again (at %s)", c->cursor);
	}
	reader_read(c);
}

/*
 * XINFO STREAM and XREAD, sent together so that Redis runs them back to
 * back: the first says whether the stream was trimmed past our cursor, in
 * which case what the second returns has skipped entries and is dropped.
 */
static void reader_read(struct cluster *c)
{
	const char *info[] = { "XINFO", "STREAM", c->cfg->stream };
	const char *argv[] = { "XREAD", "COUNT", TEXT(READ_COUNT), "BLOCK", READ_BLOCK_MS, "STREAMS", c->cfg->stream, c->cursor };

	if (!c->reader.up || c->applying.on)
		return;
	c->state = READER_READING;
	redisAsyncCommandArgv(c->reader.ac, on_check, c, 3, info, NULL);
	redisAsyncCommandArgv(c->reader.ac, on_read, c, 8, argv, NULL);
}

/* The changes a snapshot covers, by identity: a re-send after it is passed here as on the node that made it. */
static void take_seen(struct cluster *c, const char *lines)
{
	if (lines == NULL) /* a snapshot from bloomd 0.7 */
		return;
	seen_clear(c->seen);
	for (const char *p = lines; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
		char line[160];
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		seen_take_line(c->seen, line);
	}
}

static bool snapshot_signed(const struct cluster *c, const redisReply *hash)
{
	struct sign_field f[5] = { { c->cfg->stream, strlen(c->cfg->stream) }, text_field(field(hash, "id")),
				   text_field(field(hash, "node")), text_field(field(hash, "data")),
				   text_field(field(hash, "seen")) };
	const char *mac = reply_text(field(hash, "mac"));

	return sign_check(c->key, "bloomd snapshot", f, 5, mac, mac ? field(hash, "mac")->len : 0);
}

static void on_snapshot(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;
	char err[256];

	(void)ac;
	if (reply == NULL || c->closing)
		return;
	const redisReply *id = field(reply, "id"), *data = field(reply, "data");
	const char *trimmed = c->trimmed_to;
	if (id && reply_text(id) && id_valid(id->str) && c->last_generated[0] && id_cmp(id->str, c->last_generated) > 0) {
		set_error(c, ERROR_READER, "desync: the snapshot's ID %s is past the stream's last entry %s: not taken (run `bloomctl cluster snapshot` on a node that is up to date)",
			  id->str, c->last_generated);
		c->state = READER_STALE;
		c->stale_since = time(NULL);
		return;
	}
	if (id == NULL || data == NULL || id->type != REDIS_REPLY_STRING || data->type != REDIS_REPLY_STRING ||
	    !id_valid(id->str) || id_cmp(id->str, trimmed) < 0) {
		set_error(c, ERROR_READER, "the stream was trimmed past this node (at %s; it starts at %s) and no snapshot reaches there: run `bloomctl cluster snapshot` on a node that is up to date",
			  c->cursor, trimmed);
		c->state = READER_STALE;
		c->stale_since = time(NULL);
		return;
	}
	if (c->key && !snapshot_signed(c, reply)) {
		set_error(c, ERROR_READER, "the snapshot at %s is not signed with [cluster] key_file's key: not taken", id->str);
		c->unauthenticated++;
		c->state = READER_STALE;
		c->stale_since = time(NULL);
		return;
	}
	if (c->cb.restore(c->cb.ctx, data->str, data->len, err, sizeof(err)) < 0) {
		set_error(c, ERROR_READER, "restoring the snapshot: %s", err);
		c->state = READER_STALE;
		c->stale_since = time(NULL);
		return;
	}
	take_seen(c, reply_text(field(reply, "seen")));
	log_info("cluster: the stream was trimmed past this node: started again from the snapshot at %s", id->str);
	snprintf(c->cursor, sizeof(c->cursor), "%s", id->str);
	c->cursor_dirty = true;
	c->restored++;
	clear_error(c, ERROR_READER);
	reader_read(c);
}

static uint64_t integer_field(const redisReply *r, const char *name)
{
	const redisReply *v = field(r, name);

	return v && v->type == REDIS_REPLY_INTEGER ? (uint64_t)v->integer : 0;
}

/*
 * The cursor is past the stream's last entry: the stream was deleted and made
 * anew, went back (a Redis restored from an older dump), or an entry with a
 * forged ID moved the cursor. Whatever the stream holds now was never
 * applied here: follow it again from its start (from its snapshot if it was
 * trimmed), said as desync until caught up, never as following.
 */
static void desync(struct cluster *c, const char *last_id)
{
	set_error(c, ERROR_READER, "desync: this node's cursor %s is past the stream's last entry %s (the stream was made anew or went back, or an ID was forged): following it again from its start",
		  c->cursor, last_id);
	c->desyncs++;
	c->resyncing = true;
	c->gap = false;
	snprintf(c->cursor, sizeof(c->cursor), "0-0");
	c->cursor_dirty = true;
}

/*
 * XINFO STREAM: has the stream been trimmed past our cursor? It has when
 * entries were ever taken out of it (entries-added above its length) and the
 * cursor is before its first entry (or at 0-0: a new node), and not at its
 * end. (A cursor just before the first entry looks the same: it costs a
 * restore from the snapshot, never an entry.) Then the snapshot must reach
 * the first entry still there.
 */
static void on_check(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply == NULL || c->closing)
		return;
	const redisReply *first = field(reply, "first-entry"), *last = field(reply, "last-generated-id");
	uint64_t added = integer_field(reply, "entries-added"), length = integer_field(reply, "length");
	const char *first_id = first && first->type == REDIS_REPLY_ARRAY && first->elements == 2 &&
			       first->element[0]->type == REDIS_REPLY_STRING ? first->element[0]->str : NULL;
	if (reply_text(last) && id_valid(last->str)) {
		snprintf(c->last_generated, sizeof(c->last_generated), "%s", last->str);
		if (id_cmp(c->cursor, last->str) > 0) {
			desync(c, last->str);
			return;
		}
	}
	bool fresh = strcmp(c->cursor, "0-0") == 0;
	c->gap = !(reply->type == REDIS_REPLY_ERROR || last == NULL || last->type != REDIS_REPLY_STRING ||
		   id_cmp(c->cursor, last->str) >= 0 || added <= length ||
		   (!fresh && first_id && id_cmp(c->cursor, first_id) >= 0));
	if (c->gap)
		snprintf(c->trimmed_to, sizeof(c->trimmed_to), "%s", first_id ? first_id : last->str);
	else if (c->state != READER_STALE && !c->resyncing)
		clear_error(c, ERROR_READER); /* the writer's problems are the writer's to clear */
}


/* ---- the writer: changes, events, snapshots ---- */

static void on_added(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;
	struct outbox *o = &c->out;

	(void)ac;
	if (reply == NULL || c->closing || o->head == o->sent)
		return; /* a lost connection: on_connect sends them again */
	if (reply->type == REDIS_REPLY_ERROR || !reply_text(reply) || !id_valid(reply->str)) {
		if (reply->type == REDIS_REPLY_ERROR)
			set_error(c, ERROR_WRITER, "XADD: %s (the change is kept and sent again)", reply->str);
		else
			bad_reply(&c->writer, "XADD", reply);
		o->sent = o->head; /* again at the next connection */
		redisAsyncDisconnect(c->writer.ac);
		return;
	}
	clear_error(c, ERROR_WRITER);
	free(o->lines[o->head]);
	o->lines[o->head++] = NULL;
	c->published++;
	if (o->head == o->n) {
		o->head = o->sent = o->n = 0;
		if (o->fd >= 0 && ftruncate(o->fd, 0) == 0)
			o->dirty = true;
	}
}

static void send_change(struct cluster *c, const char *line)
{
	char change[48] = "", op[8] = "?", expires[24] = "0", maxlen[16];
	char *data = NULL;

	sscanf(line, "@%47s", change);
	line += strcspn(line, " ") + (line[strcspn(line, " ")] == ' ');
	const char *p = strchr(line, ' '), *entry = p ? strchr(p + 1, ' ') : NULL;
	sscanf(line, "%7s %23s", op, expires);
	entry = entry ? entry + 1 : "?";
	const char *sep = strchr(entry, '\x1f');
	size_t entry_len = sep ? (size_t)(sep - entry) : strlen(entry);
	if (sep && (data = strdup(sep + 1)) != NULL)
		for (char *q = data; *q; q++)
			if (*q == '\x1f')
				*q = '\n';
	snprintf(maxlen, sizeof(maxlen), "%u", c->cfg->maxlen);
	char mac[SIGN_HEX + 1] = "";
	const char *argv[] = { "XADD", c->cfg->stream, "MAXLEN", "~", maxlen, "*", "node", c->cfg->node,
			       "change", change, "op", op, "expires", expires, "entry", entry, "data", data ? data : "",
			       "mac", mac };
	size_t lens[20];
	for (int i = 0; i < 18; i++)
		lens[i] = strlen(argv[i]);
	lens[15] = entry_len;
	if (c->key) {
		struct sign_field f[7] = { { argv[1], lens[1] } };
		for (int i = 0; i < 6; i++)
			f[i + 1] = (struct sign_field){ argv[7 + 2 * i], lens[7 + 2 * i] };
		sign_fields(c->key, "bloomd change", f, 7, mac);
		lens[18] = 3;
		lens[19] = SIGN_HEX;
	}
	redisAsyncCommandArgv(c->writer.ac, on_added, c, c->key ? 20 : 18, argv, lens);
	free(data);
}

static void writer_flush(struct cluster *c)
{
	struct outbox *o = &c->out;

	while (c->writer.up && o->sent < o->n)
		send_change(c, o->lines[o->sent++]);
}

int cluster_publish(struct cluster *c, const struct cluster_op *op, char *err, size_t errlen)
{
	char *line;

	char id[48];

	if (op->data_len + strlen(op->entry) > c->cfg->max_entry_bytes) {
		error_set(err, errlen, "%zu bytes, more than [cluster] max_entry_bytes (%llu): not shared, as no node would take it",
			  op->data_len + strlen(op->entry), (unsigned long long)c->cfg->max_entry_bytes);
		return -1;
	}
	seen_format_id(c->incarnation, c->next_seq++, id, sizeof(id));
	if (asprintf(&line, "@%s %s %" PRIu64 " %s%s%.*s", id, OP_NAMES[op->kind], op->expires, op->entry,
		     op->data ? "\x1f" : "", op->data ? (int)op->data_len : 0, op->data ? op->data : "") < 0) {
		error_set(err, errlen, "out of memory for the cluster's outbox");
		return -1;
	}
	for (char *q = strchr(line, '\x1f'); q && *q; q++) /* one line in the outbox file */
		if (*q == '\n')
			*q = '\x1f';
	if (outbox_push(c, line) < 0) {
		free(line);
		error_set(err, errlen, "out of memory for the cluster's outbox");
		return -1;
	}
	if (c->out.fd >= 0 && !c->out.failed) {
		size_t n = strlen(line);
		if (write(c->out.fd, line, n) != (ssize_t)n || write(c->out.fd, "\n", 1) != 1)
			outbox_failed(c, errno ? errno : EIO);
		c->out.dirty = true;
		if (c->sync_always)
			sync_outbox(c);
	}
	writer_flush(c);
	return 0;
}

/* An event in flight: kept until Redis says it took it, and handed back otherwise. */
struct event_in_flight {
	struct cluster *c;
	size_t len;
	char line[];
};

/*
 * Redis's answer to an event, or NULL when none will come (the connection
 * lost, or closed by cluster_close): anything but the reply its command
 * gives hands the event back (cb.event_lost: to the fallback file).
 */
static void on_event_sent(redisAsyncContext *ac, void *r, void *priv)
{
	struct event_in_flight *ev = priv;
	struct cluster *c = ev->c;
	redisReply *reply = r;
	bool taken = reply && (c->cfg->events_stream ? reply_text(reply) != NULL : reply->type == REDIS_REPLY_INTEGER);

	(void)ac;
	if (c->events_pending)
		c->events_pending--;
	if (taken) {
		c->events_sent++;
	} else {
		c->events_failed++;
		if (reply && reply->type == REDIS_REPLY_ERROR)
			set_error(c, ERROR_WRITER, "events: %s (sent to the fallback instead)", reply->str);
		else if (reply)
			set_error(c, ERROR_WRITER, "events: a reply of an unexpected shape (type %d): sent to the fallback instead",
				  reply->type);
		c->cb.event_lost(c->cb.ctx, ev->line, ev->len);
	}
	free(ev);
}

int cluster_event(struct cluster *c, const char *line, size_t len)
{
	char maxlen[16];

	struct event_in_flight *ev;

	if (!c->writer.up || c->events_pending >= c->cfg->events_pending ||
	    (ev = malloc(sizeof(*ev) + len)) == NULL)
		return -1;
	ev->c = c;
	ev->len = len;
	memcpy(ev->line, line, len);
	len -= len && line[len - 1] == '\n';
	snprintf(maxlen, sizeof(maxlen), "%u", c->cfg->maxlen);
	int rc;
	if (c->cfg->events_stream) {
		const char *argv[] = { "XADD", c->cfg->events_key, "MAXLEN", "~", maxlen, "*", "event", line };
		size_t lens[] = { 4, strlen(argv[1]), 6, 1, strlen(maxlen), 1, 5, len };
		rc = redisAsyncCommandArgv(c->writer.ac, on_event_sent, ev, 8, argv, lens);
	} else {
		const char *argv[] = { "RPUSH", c->cfg->events_key, line };
		size_t lens[] = { 5, strlen(argv[1]), len };
		rc = redisAsyncCommandArgv(c->writer.ac, on_event_sent, ev, 3, argv, lens);
	}
	if (rc != REDIS_OK) { /* not queued: the caller writes it to the fallback */
		free(ev);
		return -1;
	}
	c->events_pending++;
	return 0;
}

static void on_snapshot_written(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	if (reply && !c->closing && reply->type == REDIS_REPLY_ERROR)
		set_error(c, ERROR_WRITER, "snapshot: %s", reply->str);
}

int cluster_snapshot(struct cluster *c, char *err, size_t errlen)
{
	size_t len;

	if (!c->writer.up) {
		error_set(err, errlen, "not connected to Redis (%s)", newest_error(c) ? newest_error(c) : "connecting");
		return -1;
	}
	c->last_snapshot = time(NULL);
	char *data = c->cb.dump(c->cb.ctx, &len);
	if (data == NULL) {
		error_set(err, errlen, "out of memory");
		return -1;
	}
	size_t seen_len = 0;
	char *seen = seen_text(c->seen, &seen_len);
	if (seen == NULL) {
		free(data);
		error_set(err, errlen, "out of memory");
		return -1;
	}
	char mac[SIGN_HEX + 1] = "";
	const char *argv[] = { "HSET", c->snapshot_key, "id", c->cursor, "data", data, "node", c->cfg->node, "seen", seen,
			       "mac", mac };
	size_t lens[] = { 4, strlen(c->snapshot_key), 2, strlen(c->cursor), 4, len, 4, strlen(c->cfg->node), 4, seen_len,
			  3, SIGN_HEX };
	if (c->key) {
		struct sign_field f[5] = { { c->cfg->stream, strlen(c->cfg->stream) }, { argv[3], lens[3] },
					   { argv[7], lens[7] }, { argv[5], lens[5] }, { argv[9], lens[9] } };
		sign_fields(c->key, "bloomd snapshot", f, 5, mac);
	}
	redisAsyncCommandArgv(c->writer.ac, on_snapshot_written, c, c->key ? 12 : 10, argv, lens);
	free(data);
	free(seen);
	return 0;
}

/* ---- lag ---- */

static void on_lag_range(redisAsyncContext *ac, void *r, void *priv)
{
	struct cluster *c = priv;
	redisReply *reply = r;

	(void)ac;
	c->lag_asked = false;
	if (reply == NULL || c->closing || reply->type == REDIS_REPLY_ERROR)
		return;
	for (size_t i = 0; reply->type == REDIS_REPLY_ARRAY && i < reply->elements; i++)
		if (!entry_shaped(reply->element[i]))
			reply = NULL;
	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
		bad_reply(&c->writer, "XRANGE", r);
		return;
	}
	c->lag_entries = reply->elements > LAG_CAP ? LAG_CAP : reply->elements;
	c->lag_capped = reply->elements > LAG_CAP;
	if (reply->elements)
		snprintf(c->last_id_seen, sizeof(c->last_id_seen), "%s", reply->element[reply->elements - 1]->element[0]->str);
}

static void measure_lag(struct cluster *c)
{
	char from[ID_MAX + 1], count[16];

	if (!c->writer.up || c->lag_asked)
		return;
	snprintf(from, sizeof(from), "(%s", c->cursor);
	snprintf(count, sizeof(count), "%d", LAG_CAP + 1);
	const char *argv[] = { "XRANGE", c->cfg->stream, from, "+", "COUNT", count };
	c->lag_asked = true;
	redisAsyncCommandArgv(c->writer.ac, on_lag_range, c, 6, argv, NULL);
}

/* ---- the whole ---- */

struct cluster *cluster_open(struct event_base *base, const struct cluster_config *cfg,
			     const struct statedir *state, bool sync_always, const struct cluster_callbacks *cb,
			     char *err, size_t errlen)
{
	struct cluster *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		error_set(err, errlen, "out of memory");
		return NULL;
	}
	c->dir = state;
	c->next_seq = 1;
	if ((c->seen = seen_new()) == NULL ||
	    getrandom(&c->incarnation, sizeof(c->incarnation), 0) != (ssize_t)sizeof(c->incarnation)) {
		error_set(err, errlen, "out of memory (or no randomness) for the cluster");
		seen_free(c->seen);
		free(c);
		return NULL;
	}
	c->base = base;
	c->own = *cfg;
	c->own.redis = strdup(cfg->redis);
	c->own.password = cfg->password ? strdup(cfg->password) : NULL;
	c->own.stream = strdup(cfg->stream);
	c->own.node = strdup(cfg->node);
	c->own.events_key = strdup(cfg->events_key);
	c->cfg = &c->own;
	c->cb = *cb;
	c->out.fd = -1;
	if (!c->own.redis || (cfg->password && !c->own.password) || !c->own.stream || !c->own.node || !c->own.events_key) {
		error_set(err, errlen, "out of memory");
		cluster_close(c);
		return NULL;
	}
	c->sync_always = sync_always;
	if (cfg->key_file && ((c->key = malloc(sizeof(*c->key))) == NULL ||
			      sign_key_load(c->key, cfg->key_file, err, errlen) < 0)) {
		if (c->key == NULL)
			error_set(err, errlen, "out of memory");
		cluster_close(c);
		return NULL;
	}
	c->reader = (struct conn){ .c = c, .name = "Redis reader", .slot = ERROR_READER };
	c->writer = (struct conn){ .c = c, .name = "Redis writer", .slot = ERROR_WRITER };
	snprintf(c->snapshot_key, sizeof(c->snapshot_key), "%s:snapshot", cfg->stream);
	if (load_cursor(c, err, errlen) < 0 || load_outbox(c, err, errlen) < 0) {
		cluster_close(c);
		return NULL;
	}
	cluster_tick(c);
	return c;
}

void cluster_tick(struct cluster *c)
{
	if (c->reader.ac == NULL)
		connect_one(c, &c->reader);
	if (c->writer.ac == NULL)
		connect_one(c, &c->writer);
	unsigned wait = c->blocked_at[0] ? c->retry_seconds : STALE_RETRY_SECONDS;
	if (c->state == READER_STALE && c->reader.up && time(NULL) - c->stale_since >= (time_t)wait)
		reader_read(c);
	save_cursor(c);
	if (c->out.failed)
		rewrite_outbox(c);
	sync_outbox(c);
	/* Up to date (as the last lag check found): a snapshot now and then, for nodes behind the trim. */
	char err[256];
	if (c->cfg->snapshot_every && c->state == READER_READING && c->lag_entries == 0 && !c->lag_asked &&
	    time(NULL) - c->last_snapshot >= (time_t)c->cfg->snapshot_every)
		cluster_snapshot(c, err, sizeof(err));
	measure_lag(c);
}

void cluster_close(struct cluster *c)
{
	if (c == NULL)
		return;
	c->cursor_dirty = c->cursor_dirty || c->applied;
	save_cursor(c);
	sync_outbox(c);
	c->closing = true;
	if (c->reader.ac)
		redisAsyncFree(c->reader.ac);
	if (c->writer.ac)
		redisAsyncFree(c->writer.ac);
	for (size_t i = c->out.head; i < c->out.n; i++)
		free(c->out.lines[i]);
	free(c->out.lines);
	if (c->out.fd >= 0)
		close(c->out.fd);
	free(c->own.redis);
	free(c->own.password);
	free(c->own.stream);
	free(c->own.node);
	free(c->own.events_key);
	seen_free(c->seen);
	if (c->key)
		memset(c->key, 0, sizeof(*c->key));
	free(c->key);
	free(c);
}

/* p50 and p99 of the delays kept, in ms; null while there are none. */
static json_t *delays_json(const struct cluster *c)
{
	uint32_t p50, p99;

	if (c->ndelays == 0)
		return json_null();
	stats_percentiles(c->delay_ms, DELAYS, c->ndelays, &p50, &p99);
	return json_pack("{s:I,s:I,s:I}", "samples", (json_int_t)(c->ndelays < DELAYS ? c->ndelays : DELAYS), "p50",
			 (json_int_t)p50, "p99", (json_int_t)p99);
}

static json_t *errors_json(const struct cluster *c)
{
	json_t *o = json_object();

	for (int i = 0; i < ERROR_SLOTS && o; i++)
		json_object_set_new(o, ERROR_SLOT_NAMES[i], c->errors[i][0] ? json_string(c->errors[i]) : json_null());
	return o;
}

json_t *cluster_status(const struct cluster *c)
{
	double lag_seconds = 0;

	if (c->lag_entries && id_cmp(c->last_id_seen, c->cursor) > 0)
		lag_seconds = (double)(parse_id(c->last_id_seen).ms - parse_id(c->cursor).ms) / 1000;
	return json_pack("{s:s,s:s,s:s,s:b,s:b,s:s,s:s,s:I,s:b,s:f,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:o,s:o,s:{s:I,s:I,s:I},s:s*,s:o}",
			 "node", c->cfg->node, "redis", c->cfg->redis, "stream", c->cfg->stream, "reader_connected",
			 c->reader.up, "writer_connected", c->writer.up, "state",
			 c->resyncing || (c->state == READER_STALE && strncmp(c->errors[ERROR_READER], "desync", 6) == 0) ? "desync"
			 : c->state == READER_READING ? "following" : c->state == READER_STALE ? "stale" : "connecting",
			 "last_id", c->cursor, "lag_entries", (json_int_t)c->lag_entries, "lag_entries_capped",
			 c->lag_capped, "lag_seconds", lag_seconds, "delay_ms", delays_json(c), "applied",
			 (json_int_t)c->applied, "apply_errors",
			 (json_int_t)c->apply_errors, "published", (json_int_t)c->published, "outbox",
			 (json_int_t)(c->out.n - c->out.head), "restored_from_snapshot", (json_int_t)c->restored, "desyncs", (json_int_t)c->desyncs, "duplicates", (json_int_t)c->duplicates, "unauthenticated", (json_int_t)c->unauthenticated,
			 "oversized", (json_int_t)c->oversized, "signed", c->key != NULL, "blocked_at",
			 c->blocked_at[0] ? json_string(c->blocked_at) : json_null(), "applying",
			 c->applying.on ? json_string(c->applying.id) : json_null(),
			 "events", "sent", (json_int_t)c->events_sent, "pending", (json_int_t)c->events_pending,
			 "failed", (json_int_t)c->events_failed, "error", newest_error(c), "errors", errors_json(c));
}
