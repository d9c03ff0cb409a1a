/* journal.c - durable state: the journal of changes since the snapshot. */
#include "persist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "error.h"
#include "persist_io.h"

struct journal {
	char dir[4096], path[4096];
	int fd;
	struct buf queue;
	uint64_t records, bytes;
	bool unsynced;
	int next_fd;               /* a prepared journal.tmp, or -1 */
};

int journal_prepare(struct journal *j, uint64_t gen, char *err, size_t errlen)
{
	char tmp[4200];
	uint8_t h[JOURNAL_HEADER];

	memcpy(h, JOURNAL_MAGIC, MAGIC_LEN);
	persist_put_le(h + MAGIC_LEN, PERSIST_VERSION, 4);
	persist_put_le(h + MAGIC_LEN + 4, gen, 8);
	persist_put_le(h + MAGIC_LEN + 12, XXH3_64bits(h, MAGIC_LEN + 12), 8);
	snprintf(tmp, sizeof(tmp), "%s.tmp", j->path);
	if (j->next_fd >= 0)
		close(j->next_fd);
	/* O_APPEND now: the same descriptor appends to the journal once it is renamed into place. */
	j->next_fd = open(tmp, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (j->next_fd < 0 || persist_write_all(j->next_fd, h, sizeof(h)) < 0 || fsync(j->next_fd) < 0) {
		error_set(err, errlen, "%s: %s", tmp, strerror(errno));
		if (j->next_fd >= 0) {
			close(j->next_fd);
			unlink(tmp);
		}
		j->next_fd = -1;
		return -1;
	}
	return 0;
}

int journal_switch(struct journal *j, char *err, size_t errlen)
{
	char tmp[4200];

	snprintf(tmp, sizeof(tmp), "%s.tmp", j->path);
	if (j->next_fd < 0 || rename(tmp, j->path) < 0 || persist_fsync_dir(j->dir) < 0) {
		error_set(err, errlen, "%s: %s", j->path, j->next_fd < 0 ? "no journal prepared" : strerror(errno));
		return -1;
	}
	if (j->fd >= 0)
		close(j->fd);
	j->fd = j->next_fd;
	j->next_fd = -1;
	j->queue.len = 0; /* what was queued is in the snapshot just committed */
	j->records = 0;
	j->bytes = JOURNAL_HEADER;
	j->unsynced = false;
	return 0;
}

/* A fresh journal for gen, renamed over the old one. */
static int journal_create(struct journal *j, uint64_t gen, char *err, size_t errlen)
{
	if (journal_prepare(j, gen, err, errlen) < 0)
		return -1;
	return journal_switch(j, err, errlen);
}

/* Replay the records of b; *valid: where the good records end. */
static int journal_replay(const struct buf *b, size_t *valid, journal_record_cb cb, void *ctx,
			  struct journal *j, char *err, size_t errlen)
{
	static struct entry e;
	size_t at = JOURNAL_HEADER;

	while (at < b->len) {
		const uint8_t *p = b->p + at;
		size_t left = b->len - at;
		if (left < 4)
			break; /* torn length */
		size_t body = (size_t)persist_get_le(p, 4);
		if (body < RECORD_FIXED || body > RECORD_MAX_BODY) {
			error_set(err, errlen, "%s: corrupt record at offset %zu (length %zu)", j->path, at, body);
			return -1;
		}
		if (left < 4 + body + 8)
			break; /* torn body */
		if (XXH3_64bits(p, 4 + body) != persist_get_le(p + 4 + body, 8)) {
			if (left == 4 + body + 8)
				break; /* the last record, half written */
			error_set(err, errlen, "%s: checksum mismatch in the record at offset %zu", j->path, at);
			return -1;
		}
		const uint8_t *r = p + 4;
		e.kind = r[1];
		e.len = (uint16_t)persist_get_le(r + 2, 2);
		if ((r[0] != PERSIST_ADD && r[0] != PERSIST_DEL) || body != (size_t)RECORD_FIXED + e.len ||
		    !persist_entry_valid(r[1], r + RECORD_FIXED, e.len)) {
			error_set(err, errlen, "%s: invalid record at offset %zu", j->path, at);
			return -1;
		}
		memcpy(e.key, r + RECORD_FIXED, e.len);
		if (cb(ctx, (enum persist_op)r[0], &e, persist_get_le(r + 4, 8)) < 0)
			return -1;
		j->records++;
		at += 4 + body + 8;
	}
	*valid = at;
	return 0;
}

/* Check the header; 1: older than gen (to be replaced). */
static int journal_header(const struct buf *b, uint64_t gen, const char *path, char *err,
			  size_t errlen)
{
	if (b->len < JOURNAL_HEADER || memcmp(b->p, JOURNAL_MAGIC, MAGIC_LEN) != 0 ||
	    XXH3_64bits(b->p, MAGIC_LEN + 12) != persist_get_le(b->p + MAGIC_LEN + 12, 8)) {
		error_set(err, errlen, "%s: not a bloomd journal, or its header is corrupt", path);
		return -1;
	}
	uint64_t version = persist_get_le(b->p + MAGIC_LEN, 4), jgen = persist_get_le(b->p + MAGIC_LEN + 4, 8);
	if (version != PERSIST_VERSION) {
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

struct journal *journal_open(const char *dir, uint64_t gen, journal_record_cb cb, void *ctx,
			     bool *dropped, char *err, size_t errlen)
{
	struct journal *j = calloc(1, sizeof(*j));
	struct buf b = { 0 };
	size_t valid = 0;
	int stale = 1;

	*dropped = false;
	if (j == NULL) {
		error_set(err, errlen, "out of memory for the journal");
		return NULL;
	}
	j->fd = j->next_fd = -1;
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	persist_path_join(j->path, sizeof(j->path), dir, "journal");
	if (persist_read_file(j->path, &b) < 0 && errno != ENOENT) {
		error_set(err, errlen, "%s: %s", j->path, strerror(errno));
		goto fail;
	}
	if (b.p && (stale = journal_header(&b, gen, j->path, err, errlen)) < 0)
		goto fail;
	if (stale) {
		if (journal_create(j, gen, err, errlen) < 0)
			goto fail;
	} else {
		if (journal_replay(&b, &valid, cb, ctx, j, err, errlen) < 0)
			goto fail;
		j->fd = open(j->path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (j->fd < 0 || (valid < b.len && (ftruncate(j->fd, (off_t)valid) < 0 || fsync(j->fd) < 0))) {
			error_set(err, errlen, "%s: %s", j->path, strerror(errno));
			goto fail;
		}
		*dropped = valid < b.len;
		j->bytes = valid;
	}
	free(b.p);
	return j;
fail:
	free(b.p);
	journal_close(j);
	return NULL;
}

void journal_close(struct journal *j)
{
	if (j == NULL)
		return;
	if (j->fd >= 0)
		close(j->fd);
	if (j->next_fd >= 0)
		close(j->next_fd);
	free(j->queue.p);
	free(j);
}

int journal_append(struct journal *j, enum persist_op op, const struct entry *e, uint64_t expiry)
{
	size_t body = RECORD_FIXED + e->len;
	struct buf *q = &j->queue;

	if (persist_buf_reserve(q, 4 + body + 8) < 0)
		return -1;
	uint8_t *start = q->p + q->len;
	persist_buf_put(q, body, 4);
	persist_buf_put(q, op, 1);
	persist_buf_put(q, e->kind, 1);
	persist_buf_put(q, e->len, 2);
	persist_buf_put(q, expiry, 8);
	persist_buf_bytes(q, e->key, e->len);
	persist_buf_put(q, XXH3_64bits(start, 4 + body), 8);
	j->records++;
	return 0;
}

int journal_flush(struct journal *j, bool sync, char *err, size_t errlen)
{
	if (j->queue.len) {
		if (persist_write_all(j->fd, j->queue.p, j->queue.len) < 0) {
			error_set(err, errlen, "%s: %s", j->path, strerror(errno));
			return -1;
		}
		j->bytes += j->queue.len;
		j->queue.len = 0;
		j->unsynced = true;
	}
	if (sync && j->unsynced) {
		if (fdatasync(j->fd) < 0) {
			error_set(err, errlen, "%s: fsync: %s", j->path, strerror(errno));
			return -1;
		}
		j->unsynced = false;
	}
	return 0;
}

uint64_t journal_records(const struct journal *j)
{
	return j->records;
}

uint64_t journal_bytes(const struct journal *j)
{
	return j->bytes + j->queue.len;
}

bool journal_unsynced(const struct journal *j)
{
	return j->unsynced || j->queue.len > 0;
}
