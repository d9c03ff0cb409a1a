/* state_journal.c - durable state: the journal of changes since the snapshot. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "error.h"
#include "state_io.h"

#define JOURNAL_FILE "journal"
#define JOURNAL_TMP "journal.tmp"  /* the journal of the snapshot being written */
#define JOURNAL_NEW "journal.new"  /* a fresh journal, before it is renamed into place */

struct state_journal {
	const struct state_dir *d;
	char path[4200];            /* for messages */
	int fd;                     /* where records go: the journal, or journal.tmp once diverted */
	struct state_buf queue;
	uint64_t records, bytes;    /* of the file fd writes */
	bool unsynced;
	bool broken;               /* an fsync failed: what the file holds is unknown until a snapshot */
	int next_fd;               /* a prepared journal.tmp, not yet taking records, or -1 */
	int old_fd;                /* diverted: the journal the snapshot being written replaces, or -1 */
	bool broke_diverted;       /* journal.tmp broke: the snapshot being written does not mend it */
};

/* rel created anew with a header for gen, fsync'd: its descriptor (appending), or -1 with a message. */
static int header_file(struct state_journal *j, const char *rel, uint64_t gen, char *err, size_t errlen)
{
	char path[4200];
	uint8_t h[JOURNAL_HEADER];

	memcpy(h, JOURNAL_MAGIC, MAGIC_LEN);
	state_put_le(h + MAGIC_LEN, STATE_JOURNAL_VERSION, 4);
	state_put_le(h + MAGIC_LEN + 4, gen, 8);
	state_put_le(h + MAGIC_LEN + 12, XXH3_64bits(h, MAGIC_LEN + 12), 8);
	/* O_APPEND now: the same descriptor appends to the journal once it is renamed into place. */
	int fd = state_dir_create(j->d, rel, O_APPEND);
	if (fd < 0 || state_write_all(fd, h, sizeof(h)) < 0 || fsync(fd) < 0) {
		state_dir_name(j->d, rel, path, sizeof(path));
		error_set(err, errlen, "%s: %s", path, state_dir_strerror(errno));
		if (fd >= 0) {
			close(fd);
			state_dir_unlink(j->d, rel);
		}
		return -1;
	}
	return fd;
}

int state_journal_prepare(struct state_journal *j, uint64_t gen, char *err, size_t errlen)
{
	if (j->old_fd >= 0) {
		error_set(err, errlen, "%s: a snapshot is being written: its journal takes the changes", j->path);
		return -1;
	}
	if (j->next_fd >= 0)
		close(j->next_fd);
	j->next_fd = header_file(j, JOURNAL_TMP, gen, err, errlen);
	if (j->next_fd < 0)
		return -1;
	/* Changes acknowledged in it before the snapshot is in are found after a power cut only if its name is on disk. */
	if (state_dir_sync(j->d, JOURNAL_TMP) < 0) {
		error_set(err, errlen, "%s: %s", j->path, state_dir_strerror(errno));
		close(j->next_fd);
		j->next_fd = -1;
		return -1;
	}
	return 0;
}

int state_journal_divert(struct state_journal *j, char *err, size_t errlen)
{
	if (j->next_fd < 0) {
		error_set(err, errlen, "%s: no journal prepared", j->path);
		return -1;
	}
	/* What is still queued is in the snapshot too; after it, replaying it again changes nothing. */
	j->old_fd = j->fd;
	j->fd = j->next_fd;
	j->next_fd = -1;
	j->records = 0;
	j->bytes = JOURNAL_HEADER;
	j->unsynced = false;
	j->broke_diverted = false;
	return 0;
}

bool state_journal_diverted(const struct state_journal *j)
{
	return j->old_fd >= 0;
}

int state_journal_switch(struct state_journal *j, char *err, size_t errlen)
{
	if (j->old_fd < 0 || state_dir_rename(j->d, JOURNAL_TMP, JOURNAL_FILE) < 0 ||
	    state_dir_sync(j->d, JOURNAL_FILE) < 0) {
		error_set(err, errlen, "%s: %s", j->path, j->old_fd < 0 ? "no snapshot was being written" : state_dir_strerror(errno));
		return -1;
	}
	close(j->old_fd);
	j->old_fd = -1;
	/* The snapshot holds all the broken journal held; a break of journal.tmp since, it does not. */
	j->broken = j->broke_diverted;
	j->broke_diverted = false;
	return 0;
}

/* A fresh journal for gen, renamed over the old one (journal.tmp, maybe still wanted, is left alone). */
static int journal_create(struct state_journal *j, uint64_t gen, char *err, size_t errlen)
{
	j->fd = header_file(j, JOURNAL_NEW, gen, err, errlen);
	if (j->fd < 0)
		return -1;
	if (state_dir_rename(j->d, JOURNAL_NEW, JOURNAL_FILE) < 0 || state_dir_sync(j->d, JOURNAL_FILE) < 0) {
		error_set(err, errlen, "%s: %s", j->path, state_dir_strerror(errno));
		return -1;
	}
	j->bytes = JOURNAL_HEADER;
	return 0;
}

static void mark_broken(struct state_journal *j)
{
	j->broken = true;
	if (j->old_fd >= 0)
		j->broke_diverted = true;
}

/* Whether a whole record with a good checksum starts at p (left bytes on). */
static bool whole_record_at(const uint8_t *p, size_t left)
{
	if (left < 4 + RECORD_FIXED + 8)
		return false;
	size_t body = (size_t)state_get_le(p, 4);
	return body >= RECORD_FIXED && body <= RECORD_MAX_BODY && left >= 4 + body + 8 &&
	       XXH3_64bits(p, 4 + body) == state_get_le(p + 4 + body, 8);
}

/*
 * Whether the bytes from at to the end can be one record cut short by a
 * crash: none of them starts a whole record. (A length damaged in the
 * middle of the journal also runs past the end, but whole records follow.)
 */
static bool torn_tail(const struct state_buf *b, size_t at, size_t *whole_at)
{
	for (size_t i = at + 1; i < b->len; i++)
		if (whole_record_at(b->p + i, b->len - i)) {
			*whole_at = i;
			return false;
		}
	return true;
}

/* Replay the records of b; *valid: where the good records end. */
static int journal_replay(const struct state_buf *b, size_t *valid, state_journal_record_cb cb, void *ctx,
			  struct state_journal *j, const char *path, char *err, size_t errlen)
{
	struct entry e;
	size_t at = JOURNAL_HEADER;

	while (at < b->len) {
		const uint8_t *p = b->p + at;
		size_t left = b->len - at;
		if (left < 4)
			break; /* torn length */
		size_t body = (size_t)state_get_le(p, 4);
		if (body < RECORD_FIXED || body > RECORD_MAX_BODY) {
			error_set(err, errlen, "%s: corrupt record at offset %zu (length %zu)", path, at, body);
			return -1;
		}
		size_t whole_at;
		if (left < 4 + body + 8) {
			if (torn_tail(b, at, &whole_at))
				break; /* torn body */
			error_set(err, errlen, "%s: the record at offset %zu claims %zu bytes, past the end of the file, but a whole record follows at offset %zu: a damaged length, not a torn last record",
				  path, at, body, whole_at);
			return -1;
		}
		if (XXH3_64bits(p, 4 + body) != state_get_le(p + 4 + body, 8)) {
			if (left == 4 + body + 8)
				break; /* the last record, half written */
			error_set(err, errlen, "%s: checksum mismatch in the record at offset %zu", path, at);
			return -1;
		}
		const uint8_t *r = p + 4;
		e.kind = r[1];
		e.len = (uint16_t)state_get_le(r + 2, 2);
		if ((r[0] != STATE_ADD && r[0] != STATE_DEL) || body != (size_t)RECORD_FIXED + e.len ||
		    !state_entry_valid(r[1], r + RECORD_FIXED, e.len)) {
			error_set(err, errlen, "%s: invalid record at offset %zu", path, at);
			return -1;
		}
		memcpy(e.key, r + RECORD_FIXED, e.len);
		if (cb(ctx, (enum state_op)r[0], &e, state_get_le(r + 4, 8)) < 0)
			return -1;
		j->records++;
		at += 4 + body + 8;
	}
	*valid = at;
	return 0;
}

/* Check the header; 1: older than gen (to be replaced). */
static int journal_header(const struct state_buf *b, uint64_t gen, const char *path, char *err,
			  size_t errlen)
{
	if (b->len < JOURNAL_HEADER || memcmp(b->p, JOURNAL_MAGIC, MAGIC_LEN) != 0 ||
	    XXH3_64bits(b->p, MAGIC_LEN + 12) != state_get_le(b->p + MAGIC_LEN + 12, 8)) {
		error_set(err, errlen, "%s: not a bloomd journal, or its header is corrupt", path);
		return -1;
	}
	uint64_t version = state_get_le(b->p + MAGIC_LEN, 4), jgen = state_get_le(b->p + MAGIC_LEN + 4, 8);
	if (version != STATE_JOURNAL_VERSION) {
		error_set(err, errlen, "%s: journal format version %llu is not supported", path,
			  (unsigned long long)version);
		return -1;
	}
	if (jgen > gen) {
		error_set(err, errlen, "%s: journal of generation %llu follows a snapshot that is missing (the snapshot is generation %llu)",
			  path, (unsigned long long)jgen, (unsigned long long)gen);
		return -1;
	}
	return jgen < gen;
}

/* Replay rel's records, read into b, and open it to append after the last whole one: its descriptor, or -1. */
static int replay_file(struct state_journal *j, const char *rel, const struct state_buf *b, state_journal_record_cb cb, void *ctx,
		       struct state_journal_recovery *how, char *err, size_t errlen)
{
	char path[4200];
	size_t valid = 0;

	state_dir_name(j->d, rel, path, sizeof(path));
	j->records = 0;
	if (journal_replay(b, &valid, cb, ctx, j, path, err, errlen) < 0)
		return -1;
	int fd = state_dir_open_file(j->d, rel, O_WRONLY | O_APPEND);
	if (fd < 0 || (valid < b->len && (ftruncate(fd, (off_t)valid) < 0 || fsync(fd) < 0))) {
		how->read_only = errno == EROFS;
		error_set(err, errlen, "%s: %s", path, state_dir_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (valid < b->len) {
		how->torn_bytes = b->len - valid;
		how->torn_file = rel;
	}
	j->bytes = valid;
	return fd;
}

/* journal.tmp's generation, if its header is whole (else it was cut short while prepared, before any record). */
static bool tmp_generation(const struct state_buf *t, uint64_t *gen)
{
	if (t->p == NULL || t->len < JOURNAL_HEADER || memcmp(t->p, JOURNAL_MAGIC, MAGIC_LEN) != 0 ||
	    XXH3_64bits(t->p, MAGIC_LEN + 12) != state_get_le(t->p + MAGIC_LEN + 12, 8) ||
	    state_get_le(t->p + MAGIC_LEN, 4) != STATE_JOURNAL_VERSION)
		return false;
	*gen = state_get_le(t->p + MAGIC_LEN + 4, 8);
	return true;
}

/*
 * rel whole into b (b->p NULL if there is none): 0, or -1 with a message.
 * link_is_none: a link there is taken for none (bloomd never makes one:
 * a prepare replaces it, as it does a stale file).
 */
static int read_if_there(const struct state_dir *d, const char *rel, struct state_buf *b, bool link_is_none, char *err,
			 size_t errlen)
{
	char path[4200];

	if (state_read_file(d, rel, b) == 0 || errno == ENOENT || (link_is_none && errno == ELOOP))
		return 0;
	state_dir_name(d, rel, path, sizeof(path));
	error_set(err, errlen, "%s: %s", path, state_dir_strerror(errno));
	return -1;
}

struct state_journal *state_journal_open(const struct state_dir *d, uint64_t gen, state_journal_record_cb cb, void *ctx,
			     struct state_journal_recovery *how, char *err, size_t errlen)
{
	struct state_journal *j = calloc(1, sizeof(*j));
	struct state_buf b = { 0 }, t = { 0 };
	uint64_t tmp_gen = 0;
	int stale = 1;

	*how = (struct state_journal_recovery){ 0 };
	if (j == NULL) {
		error_set(err, errlen, "out of memory for the journal");
		return NULL;
	}
	j->fd = j->next_fd = j->old_fd = -1;
	j->d = d;
	state_dir_name(d, JOURNAL_FILE, j->path, sizeof(j->path));
	if (read_if_there(d, JOURNAL_FILE, &b, false, err, errlen) < 0 ||
	    read_if_there(d, JOURNAL_TMP, &t, true, err, errlen) < 0)
		goto fail;
	how->missing = b.p == NULL && gen > 0;
	if (b.p && (stale = journal_header(&b, gen, j->path, err, errlen)) < 0)
		goto fail;
	bool tmp_whole = tmp_generation(&t, &tmp_gen);
	if (!stale) {
		j->fd = replay_file(j, JOURNAL_FILE, &b, cb, ctx, how, err, errlen);
	} else if (tmp_whole && tmp_gen == gen) {
		/* A crash after a snapshot went in, before its journal did: journal.tmp is the journal. */
		if (state_dir_rename(d, JOURNAL_TMP, JOURNAL_FILE) < 0 || state_dir_sync(d, JOURNAL_FILE) < 0) {
			how->read_only = errno == EROFS;
			error_set(err, errlen, "%s: %s", j->path, state_dir_strerror(errno));
			goto fail;
		}
		how->missing = false;
		tmp_whole = false;
		j->fd = replay_file(j, JOURNAL_FILE, &t, cb, ctx, how, err, errlen);
	} else if (journal_create(j, gen, err, errlen) < 0) {
		how->read_only = errno == EROFS;
		goto fail;
	}
	if (j->fd < 0)
		goto fail;
	if (tmp_whole && tmp_gen == gen + 1) {
		/* A crash while a snapshot was written: the changes made since it began follow the journal's. */
		j->old_fd = j->fd;
		j->fd = replay_file(j, JOURNAL_TMP, &t, cb, ctx, how, err, errlen);
		if (j->fd < 0)
			goto fail;
		how->unfinished_save = true;
	}
	free(b.p);
	free(t.p);
	return j;
fail:
	free(b.p);
	free(t.p);
	state_journal_close(j);
	return NULL;
}

void state_journal_close(struct state_journal *j)
{
	if (j == NULL)
		return;
	if (j->fd >= 0)
		close(j->fd);
	if (j->next_fd >= 0)
		close(j->next_fd);
	if (j->old_fd >= 0)
		close(j->old_fd);
	free(j->queue.p);
	free(j);
}

int state_journal_append(struct state_journal *j, enum state_op op, const struct entry *e, uint64_t expiry)
{
	size_t body = RECORD_FIXED + e->len;
	struct state_buf *q = &j->queue;

	if (state_buf_reserve(q, 4 + body + 8) < 0)
		return -1;
	uint8_t *start = q->p + q->len;
	state_buf_put(q, body, 4);
	state_buf_put(q, op, 1);
	state_buf_put(q, e->kind, 1);
	state_buf_put(q, e->len, 2);
	state_buf_put(q, expiry, 8);
	state_buf_bytes(q, e->key, e->len);
	state_buf_put(q, XXH3_64bits(start, 4 + body), 8);
	j->records++;
	return 0;
}

int state_journal_flush(struct state_journal *j, bool sync, char *err, size_t errlen)
{
	if (j->broken) {
		error_set(err, errlen, "%s: an fsync failed, so what it holds is unknown: a snapshot must replace it", j->path);
		return -1;
	}
	if (j->queue.len) {
		if (state_write_all(j->fd, j->queue.p, j->queue.len) < 0) {
			int write_errno = errno;
			/*
			 * Part of the queue may be in the file: cut it back to the
			 * records written whole before, so a later try appends the
			 * whole queue again after them, and no torn record is left
			 * in the middle. The queue stays, to be written then.
			 */
			if (ftruncate(j->fd, (off_t)j->bytes) < 0)
				mark_broken(j);
			error_set(err, errlen, "%s: %s", j->path, strerror(write_errno));
			return -1;
		}
		j->bytes += j->queue.len;
		j->queue.len = 0;
		j->unsynced = true;
	}
	if (sync && j->unsynced) {
		/* After a failed fsync the kernel may have dropped the pages and report the next one clean. */
		if (fdatasync(j->fd) < 0) {
			mark_broken(j);
			error_set(err, errlen, "%s: fsync: %s", j->path, state_dir_strerror(errno));
			return -1;
		}
		j->unsynced = false;
	}
	return 0;
}

bool state_journal_broken(const struct state_journal *j)
{
	return j->broken;
}

uint64_t state_journal_records(const struct state_journal *j)
{
	return j->records;
}

uint64_t state_journal_bytes(const struct state_journal *j)
{
	return j->bytes + j->queue.len;
}

bool state_journal_unsynced(const struct state_journal *j)
{
	return j->unsynced || j->queue.len > 0;
}
