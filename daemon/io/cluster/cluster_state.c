/* cluster_state.c - the cluster's stream IDs, its problems, and its state files: the cursor and the outbox. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

const char *const CLUSTER_ERROR_SLOT_NAMES[ERROR_SLOTS] = { "reader", "writer", "files" };

/* ---- IDs ---- */

struct stream_id cluster_parse_id(const char *text)
{
	struct stream_id id = { 0, 0 };
	char *end;

	id.ms = strtoull(text, &end, 10);
	if (*end == '-')
		id.seq = strtoull(end + 1, NULL, 10);
	return id;
}

int cluster_id_cmp(const char *a, const char *b)
{
	struct stream_id x = cluster_parse_id(a), y = cluster_parse_id(b);

	if (x.ms != y.ms)
		return x.ms < y.ms ? -1 : 1;
	return x.seq < y.seq ? -1 : x.seq > y.seq;
}

/* in with each byte that is not printable ASCII as \xNN: a server's garbage named, and always valid in JSON. */
static void escape(const char *in, char *out, size_t len)
{
	size_t at = 0;

	for (; *in && at + 5 < len; in++) {
		unsigned char b = (unsigned char)*in;
		if (b < 0x20 || b >= 0x7f)
			at += (size_t)snprintf(out + at, len - at, "\\x%02x", b);
		else
			out[at++] = (char)b;
	}
	out[at] = '\0';
}

void cluster_set_error(struct cluster *c, enum error_slot slot, const char *fmt, ...)
{
	char raw[sizeof(c->errors[0])], text[sizeof(c->errors[0])];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	escape(raw, text, sizeof(text));
	if (strcmp(text, c->errors[slot]) != 0)
		log_warning("cluster: %s", text);
	snprintf(c->errors[slot], sizeof(c->errors[slot]), "%s", text);
	c->error_seq[slot] = ++c->errors_set;
}

void cluster_clear_error(struct cluster *c, enum error_slot slot)
{
	c->errors[slot][0] = '\0';
}

/* The newest problem still standing, or NULL. */
const char *cluster_newest_error(const struct cluster *c)
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
int cluster_load_cursor(struct cluster *c, char *err, size_t errlen)
{
	char path[4200];
	FILE *f;
	int fd;

	snprintf(c->cursor, sizeof(c->cursor), "0-0");
	if (c->dir == NULL)
		return 0;
	if ((fd = state_dir_open_file(c->dir, CURSOR_FILE, O_RDONLY)) < 0 || (f = fdopen(fd, "r")) == NULL) {
		if (errno == ENOENT)
			return 0;
		error_set(err, errlen, "%s: %s", state_dir_name(c->dir, CURSOR_FILE, path, sizeof(path)),
			  state_dir_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	if (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		struct stream_id id = cluster_parse_id(line);
		snprintf(c->cursor, sizeof(c->cursor), "%" PRIu64 "-%" PRIu64, id.ms, id.seq);
	}
	while (getline(&line, &cap, f) > 0) /* the changes applied up to the cursor, by identity */
		seen_take_line(c->seen, line);
	free(line);
	fclose(f);
	return 0;
}

void cluster_save_cursor(struct cluster *c)
{
	char path[4200];

	if (c->dir == NULL || !c->cursor_dirty || !c->cb.durable(c->cb.ctx))
		return;
	int fd = state_dir_create(c->dir, CURSOR_TMP, 0);
	size_t n = strlen(c->cursor), seen_len = 0;
	char *seen = seen_text(c->seen, &seen_len);
	if (fd < 0 || seen == NULL || write(fd, c->cursor, n) != (ssize_t)n || write(fd, "\n", 1) != 1 ||
	    write(fd, seen, seen_len) != (ssize_t)seen_len || fsync(fd) < 0 ||
	    state_dir_rename(c->dir, CURSOR_TMP, CURSOR_FILE) < 0) {
		cluster_set_error(c, ERROR_FILES, "%s: cannot be written: %s", state_dir_name(c->dir, CURSOR_FILE, path, sizeof(path)),
			  state_dir_strerror(errno));
	} else {
		c->cursor_dirty = false;
	}
	free(seen);
	if (fd >= 0)
		close(fd);
}

int cluster_outbox_push(struct cluster *c, char *line)
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
int cluster_load_outbox(struct cluster *c, char *err, size_t errlen)
{
	char path[4200], *line = NULL;
	size_t cap = 0;
	ssize_t got;

	c->out.fd = -1;
	if (c->dir == NULL)
		return 0;
	c->out.fd = state_dir_open_file(c->dir, OUTBOX_FILE, O_RDWR | O_APPEND);
	if (c->out.fd < 0 && errno == ENOENT)
		c->out.fd = state_dir_create(c->dir, OUTBOX_FILE, O_RDWR | O_APPEND);
	FILE *f = c->out.fd >= 0 ? fdopen(dup(c->out.fd), "r") : NULL;
	if (f == NULL) {
		error_set(err, errlen, "%s: %s", state_dir_name(c->dir, OUTBOX_FILE, path, sizeof(path)),
			  state_dir_strerror(errno));
		return -1;
	}
	while ((got = getline(&line, &cap, f)) > 0) {
		if (line[got - 1] != '\n')
			break; /* torn by a crash: never acknowledged */
		line[got - 1] = '\0';
		char *copy = line[0] == '@' ? strdup(line) : with_identity(c, line); /* 0.7's had none */
		if (copy == NULL || cluster_outbox_push(c, copy) < 0) {
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
void cluster_outbox_failed(struct cluster *c, int e)
{
	char path[4200];

	c->out.failed = true;
	cluster_set_error(c, ERROR_FILES, "%s: %s: changes are refused until it can be written (tried each second)",
		  state_dir_name(c->dir, OUTBOX_FILE, path, sizeof(path)), strerror(e));
}

void cluster_sync_outbox(struct cluster *c)
{
	if (c->out.fd < 0 || !c->out.dirty || c->out.failed)
		return;
	if (fdatasync(c->out.fd) == 0)
		c->out.dirty = false;
	else
		cluster_outbox_failed(c, errno); /* the kernel may have dropped the pages: only a new file is trusted */
}

/* After a failure: the changes not yet in the stream written to a new outbox, fsync'd, renamed in place. */
void cluster_rewrite_outbox(struct cluster *c)
{
	struct outbox *o = &c->out;
	int fd = state_dir_create(c->dir, OUTBOX_TMP, O_RDWR | O_APPEND);

	for (size_t i = o->head; fd >= 0 && i < o->n; i++)
		if (write(fd, o->lines[i], strlen(o->lines[i])) != (ssize_t)strlen(o->lines[i]) || write(fd, "\n", 1) != 1) {
			close(fd);
			fd = -1;
		}
	if (fd < 0 || fdatasync(fd) < 0 || state_dir_rename(c->dir, OUTBOX_TMP, OUTBOX_FILE) < 0 ||
	    state_dir_sync(c->dir, OUTBOX_FILE) < 0) {
		if (fd >= 0)
			close(fd);
		state_dir_unlink(c->dir, OUTBOX_TMP);
		return;
	}
	close(o->fd);
	o->fd = fd;
	o->failed = o->dirty = false;
	cluster_clear_error(c, ERROR_FILES);
	log_info("cluster: the outbox is written again (%zu changes in it)", o->n - o->head);
}

int cluster_outbox_error(const struct cluster *c, char *err, size_t errlen)
{
	if (!c->out.failed)
		return 0;
	error_set(err, errlen, "%s", c->errors[ERROR_FILES]);
	return -1;
}

/* ---- this node's acknowledged changes, kept for healing (cluster_digest.c) ---- */

struct acked_change *cluster_heal_at(const struct cluster_heal *h, size_t i)
{
	return &h->ring[(h->start + i) % HEAL_KEEP];
}

static void ring_drop_oldest(struct cluster_heal *h)
{
	struct acked_change *a = cluster_heal_at(h, 0);

	if (a->line)
		h->bytes -= strlen(a->line);
	free(a->line);
	a->line = NULL;
	h->start = (h->start + 1) % HEAL_KEEP;
	h->n--;
	h->looked -= h->looked > 0;
}

void cluster_heal_keep(struct cluster *c, char *line, const char *id)
{
	struct cluster_heal *h = &c->heal;

	if (!id[0] || (h->ring == NULL && (h->ring = calloc(HEAL_KEEP, sizeof(*h->ring))) == NULL)) {
		free(line);
		return;
	}
	while (h->n && (h->n == HEAL_KEEP || h->bytes + strlen(line) > HEAL_BYTES)) {
		if (h->asking) { /* a look in flight counts on the places it sent: this one is not kept */
			free(line);
			return;
		}
		ring_drop_oldest(h);
	}
	struct acked_change *a = cluster_heal_at(h, h->n++);
	a->line = line;
	snprintf(a->id, sizeof(a->id), "%s", id);
	h->bytes += strlen(line);
}

/* AUTH [user] password, or 0 without a password. */
int cluster_auth_argv(const struct cluster *c, const char *argv[3])
{
	if (c->cfg->password == NULL)
		return 0;
	argv[0] = "AUTH";
	argv[1] = c->cfg->user ? c->cfg->user : c->cfg->password;
	argv[2] = c->cfg->password;
	return c->cfg->user ? 3 : 2;
}
