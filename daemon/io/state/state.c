/* state.c - durable state: snapshot files, and the byte and file helpers the journal shares. */
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

#include "check.h"
#include "error.h"
#include "state_dir.h"
#include "state_io.h"

/* ---- little-endian bytes ---- */

void state_put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t state_get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int state_buf_reserve(struct state_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;

	if (b->len + more <= b->cap)
		return 0;
	while (cap < b->len + more)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (p == NULL)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

void state_buf_put(struct state_buf *b, uint64_t v, int n)
{
	state_put_le(b->p + b->len, v, n);
	b->len += (size_t)n;
}

void state_buf_bytes(struct state_buf *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* ---- files ---- */

int state_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int state_read_file(const struct state_dir *d, const char *rel, struct state_buf *b)
{
	int fd = state_dir_open_file(d, rel, O_RDONLY);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || state_buf_reserve(b, (size_t)st.st_size + 1) < 0)
		goto fail;
	for (;;) {
		if (state_buf_reserve(b, 65536) < 0)
			goto fail;
		ssize_t r = read(fd, b->p + b->len, b->cap - b->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		b->len += (size_t)r;
	}
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

/* Whether (kind, key) is something entry_parse could have produced. */
bool state_entry_valid(unsigned kind, const uint8_t *key, size_t len)
{
	switch (kind) {
	case ENTRY_ADDR: return len == 4 || len == 16;
	case ENTRY_NET:  return (len == 5 && key[0] <= 32) || (len == 17 && key[0] <= 128);
	case ENTRY_PAIR: return len == 8 || len == 32;
	case ENTRY_SIG:  return len >= 1 && len <= ENTRY_MAX_SIG;
	default:         return false;
	}
}

/* ---- snapshot ---- */

#define SNAPSHOT_FILE "snapshot"
#define SNAPSHOT_TMP "snapshot.tmp"

struct state_snapshot_writer {
	const struct state_dir *d;
	FILE *f;
	XXH3_state_t *sum;
	uint64_t entries;
	bool failed;
};

_Static_assert(FILTER_RECORD == 4 + 8 + HASH_SECRET_SIZE, "a filter's record: shape bytes, bits, secret");
_Static_assert(SNAPSHOT_HEADER == MAGIC_LEN + 20 + 2 * FILTER_RECORD + 8, "the header as header_encode writes it");

static void header_encode(const struct state_header *h, uint8_t *p)
{
	memcpy(p, SNAPSHOT_MAGIC, MAGIC_LEN);
	p += MAGIC_LEN;
	state_put_le(p, STATE_VERSION, 4);
	state_put_le(p + 4, h->generation, 8);
	state_put_le(p + 12, h->window, 4);
	state_put_le(p + 16, h->algo, 4);
	p += 20;
	for (int i = 0; i < 2; i++, p += FILTER_RECORD) {
		const struct state_filter *f = &h->filter[i];
		p[0] = f->present;
		p[1] = (uint8_t)f->params.layout;
		p[2] = (uint8_t)f->params.choices;
		p[3] = (uint8_t)f->params.hashes;
		state_put_le(p + 4, f->params.bits, 8);
		memcpy(p + 12, f->key.secret, HASH_SECRET_SIZE);
	}
	state_put_le(p, h->entries, 8);
}

/* The writer's stream is its own: unlocked writes (a million entries, a lock each, cost 40%). */
static void writer_out(struct state_snapshot_writer *w, const void *p, size_t n)
{
	if (fwrite_unlocked(p, 1, n, w->f) != n)
		w->failed = true;
	XXH3_64bits_update(w->sum, p, n);
}

struct state_snapshot_writer *state_snapshot_begin(const struct state_dir *d, const struct state_header *h, char *err,
				       size_t errlen)
{
	struct state_snapshot_writer *w = calloc(1, sizeof(*w));
	uint8_t header[SNAPSHOT_HEADER];
	char name[4200];

	if (w == NULL || (w->sum = XXH3_createState()) == NULL) {
		error_set(err, errlen, "out of memory for a snapshot");
		goto fail;
	}
	w->d = d;
	int fd = state_dir_create(d, SNAPSHOT_TMP, 0);
	if (fd < 0 || (w->f = fdopen(fd, "wb")) == NULL) {
		error_set(err, errlen, "%s: %s", state_dir_name(d, SNAPSHOT_TMP, name, sizeof(name)),
			  state_dir_strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	XXH3_64bits_reset(w->sum);
	header_encode(h, header);
	/* The entry count is patched in at commit, and summed then. */
	if (fwrite(header, 1, sizeof(header), w->f) != sizeof(header))
		w->failed = true;
	XXH3_64bits_update(w->sum, header, sizeof(header) - 8);
	return w;
fail:
	state_snapshot_abort(w);
	return NULL;
}

int state_snapshot_put(struct state_snapshot_writer *w, const struct entry *e, unsigned group, unsigned window,
		 uint64_t expiry)
{
	uint8_t record[ENTRY_FIXED + ENTRY_MAX_KEY];

	record[0] = (uint8_t)e->kind;
	record[1] = (uint8_t)group;
	state_put_le(record + 2, e->len, 2);
	state_put_le(record + 4, expiry, 8);
	state_put_le(record + ENTRY_FIXED_V1, window, 2);
	memcpy(record + ENTRY_FIXED, e->key, e->len);
	writer_out(w, record, ENTRY_FIXED + e->len);
	w->entries++;
	return w->failed ? -1 : 0;
}

void state_snapshot_abort(struct state_snapshot_writer *w)
{
	if (w == NULL)
		return;
	if (w->f) {
		fclose(w->f);
		state_dir_unlink(w->d, SNAPSHOT_TMP);
	}
	XXH3_freeState(w->sum);
	free(w);
}

/* The entry count sits just before the entries; the checksum covers it, so it is summed last. */
static int snapshot_finish(struct state_snapshot_writer *w)
{
	uint8_t count[8], sum[8];

	state_put_le(count, w->entries, 8);
	XXH3_64bits_update(w->sum, count, 8);
	state_put_le(sum, XXH3_64bits_digest(w->sum), 8);
	if (w->failed || fwrite(sum, 1, 8, w->f) != 8 ||
	    fseek(w->f, SNAPSHOT_HEADER - 8, SEEK_SET) < 0 || fwrite(count, 1, 8, w->f) != 8 ||
	    fflush(w->f) != 0 || fsync(fileno(w->f)) < 0)
		return -1;
	return 0;
}

int state_snapshot_commit(struct state_snapshot_writer *w, char *err, size_t errlen)
{
	char name[4200];
	int rc = 0;

	if (snapshot_finish(w) < 0) {
		error_set(err, errlen, "%s: %s", state_dir_name(w->d, SNAPSHOT_TMP, name, sizeof(name)),
			  state_dir_strerror(errno ? errno : EIO));
		state_snapshot_abort(w);
		return -1;
	}
	if (fclose(w->f) != 0 || state_dir_rename(w->d, SNAPSHOT_TMP, SNAPSHOT_FILE) < 0 ||
	    state_dir_sync(w->d, SNAPSHOT_FILE) < 0) {
		error_set(err, errlen, "%s: %s", state_dir_name(w->d, SNAPSHOT_FILE, name, sizeof(name)),
			  state_dir_strerror(errno));
		state_dir_unlink(w->d, SNAPSHOT_TMP);
		rc = -1;
	}
	w->f = NULL;
	XXH3_freeState(w->sum);
	free(w);
	return rc;
}

/*
 * The checksum covers the file with the entry count taken out of the header
 * and summed last, as the writer streams it.
 */
uint64_t state_snapshot_checksum(const uint8_t *file, size_t len)
{
	XXH3_state_t *s = XXH3_createState();
	uint64_t sum;

	if (s == NULL || len < SNAPSHOT_HEADER + 8) {
		XXH3_freeState(s);
		return 0;
	}
	XXH3_64bits_reset(s);
	XXH3_64bits_update(s, file, SNAPSHOT_HEADER - 8);
	XXH3_64bits_update(s, file + SNAPSHOT_HEADER, len - SNAPSHOT_HEADER - 8);
	XXH3_64bits_update(s, file + SNAPSHOT_HEADER - 8, 8);
	sum = XXH3_64bits_digest(s);
	XXH3_freeState(s);
	return sum;
}

static bool snapshot_sum_ok(const struct state_buf *b)
{
	return state_snapshot_checksum(b->p, b->len) == state_get_le(b->p + b->len - 8, 8);
}

static int header_decode(const struct state_buf *b, struct state_header *h, const char *path,
			 char *err, size_t errlen)
{
	const uint8_t *p = b->p + MAGIC_LEN;
	uint64_t version;

	if (b->len < SNAPSHOT_HEADER + 8 || memcmp(b->p, SNAPSHOT_MAGIC, MAGIC_LEN) != 0) {
		error_set(err, errlen, "%s: not a bloomd snapshot (%s)", path,
			  b->len < SNAPSHOT_HEADER + 8 ? "too short" : "bad magic");
		return -1;
	}
	if ((version = state_get_le(p, 4)) != STATE_VERSION && version != 1) {
		error_set(err, errlen, "%s: snapshot format version %llu is not supported (this bloomd reads versions 1 to %d)",
			  path, (unsigned long long)version, STATE_VERSION);
		return -1;
	}
	h->version = (unsigned)version;
	if (!snapshot_sum_ok(b)) {
		error_set(err, errlen, "%s: checksum mismatch: the snapshot is corrupt", path);
		return -1;
	}
	h->generation = state_get_le(p + 4, 8);
	h->window = (unsigned)state_get_le(p + 12, 4);
	h->algo = (enum hash_algo)state_get_le(p + 16, 4);
	p += 20;
	for (int i = 0; i < 2; i++, p += FILTER_RECORD) {
		struct state_filter *f = &h->filter[i];
		f->present = p[0] != 0;
		f->params = (struct filter_params){ .layout = p[1], .choices = p[2], .hashes = p[3],
						    .bits = state_get_le(p + 4, 8) };
		f->key.algo = h->algo;
		memcpy(f->key.secret, p + 12, HASH_SECRET_SIZE);
		if (f->present && filter_params_check(&f->params, NULL, 0) < 0) {
			error_set(err, errlen, "%s: invalid filter parameters", path);
			return -1;
		}
	}
	h->entries = state_get_le(p, 8);
	return 0;
}

static int entries_decode(const struct state_buf *b, const struct state_header *h, state_entry_cb cb,
			  void *ctx, const char *path, char *err, size_t errlen)
{
	size_t at = SNAPSHOT_HEADER, end = b->len - 8, fixed = h->version == 1 ? ENTRY_FIXED_V1 : ENTRY_FIXED;
	struct entry e;

	for (uint64_t i = 0; i < h->entries; i++) {
		if (end - at < fixed)
			goto bad;
		const uint8_t *p = b->p + at;
		e.kind = p[0];
		e.len = (uint16_t)state_get_le(p + 2, 2);
		unsigned window = fixed == ENTRY_FIXED ? (unsigned)state_get_le(p + ENTRY_FIXED_V1, 2) : STATE_WINDOW_UNKNOWN;
		if (end - at - fixed < e.len || p[1] >= FILTER_MAX_CHOICES || !state_entry_valid(p[0], p + fixed, e.len) ||
		    (window != STATE_WINDOW_UNKNOWN && (p[0] == ENTRY_SIG ? window + h->window > e.len : window != 0)))
			goto bad;
		memcpy(e.key, p + fixed, e.len);
		if (cb(ctx, &e, p[1], window, state_get_le(p + 4, 8)) < 0)
			return -1;
		at += fixed + e.len;
	}
	if (at == end)
		return 0;
bad:
	error_set(err, errlen, "%s: invalid entry at offset %zu", path, at);
	return -1;
}

int state_snapshot_read(const struct state_dir *d, struct state_header *h, state_entry_cb cb, void *ctx,
		  char *err, size_t errlen)
{
	char path[4200];
	struct state_buf b = { 0 };
	int rc;

	memset(h, 0, sizeof(*h));
	state_dir_name(d, SNAPSHOT_FILE, path, sizeof(path));
	if (state_read_file(d, SNAPSHOT_FILE, &b) < 0) {
		free(b.p);
		if (errno == ENOENT)
			return 1;
		error_set(err, errlen, "%s: %s", path, state_dir_strerror(errno));
		return -1;
	}
	rc = header_decode(&b, h, path, err, errlen);
	if (rc == 0)
		rc = entries_decode(&b, h, cb, ctx, path, err, errlen);
	free(b.p);
	return rc;
}

/* ---- lists' last versions ---- */

/*
 * A kept version is text a person can read: a header line, the entry lines,
 * and a last line with the XXH3-64 of every byte before it. A copy written by
 * 0.7 or before has the old header and no checksum line.
 */
#define LIST_HEADER "# bloomd: a list's last version taken, format 2\n"
#define LIST_HEADER_V1 "# bloomd: the last version taken of this list\n"
#define LIST_SUM_PREFIX "# xxh3 "
#define LIST_SUM_LINE (sizeof(LIST_SUM_PREFIX) - 1 + 16 + 1)

static void list_paths(const char *name, char *path, size_t pathlen, char *tmp, size_t tmplen)
{
	snprintf(path, pathlen, "lists/%s", name);
	snprintf(tmp, tmplen, "lists/.%s.tmp", name);
}

struct state_list_writer {
	const struct state_dir *d;
	char path[4200], tmp[4200];
	int fd;
	XXH3_state_t *sum;
};

/* The message for errno, naming the file. */
static void list_failed(struct state_list_writer *w, char *err, size_t errlen)
{
	char shown[8400];
	int e = errno;

	error_set(err, errlen, "%s: %s", state_dir_culprit(w->d, w->path, shown, sizeof(shown)), state_dir_strerror(e));
}

void state_list_abandon(struct state_list_writer *w)
{
	if (w == NULL)
		return;
	if (w->fd >= 0)
		close(w->fd);
	state_dir_unlink(w->d, w->tmp);
	XXH3_freeState(w->sum);
	free(w);
}

struct state_list_writer *state_list_begin(const struct state_dir *d, const char *name, char *err, size_t errlen)
{
	struct state_list_writer *w = calloc(1, sizeof(*w));

	if (w == NULL || (w->sum = XXH3_createState()) == NULL) {
		free(w);
		error_set(err, errlen, "out of memory");
		return NULL;
	}
	w->d = d;
	list_paths(name, w->path, sizeof(w->path), w->tmp, sizeof(w->tmp));
	XXH3_64bits_reset(w->sum);
	if ((w->fd = state_dir_create(d, w->tmp, 0)) < 0)
		list_failed(w, err, errlen);
	if (w->fd < 0 || state_list_write(w, LIST_HEADER, sizeof(LIST_HEADER) - 1, err, errlen) < 0) {
		state_list_abandon(w);
		return NULL;
	}
	return w;
}

int state_list_write(struct state_list_writer *w, const char *text, size_t len, char *err, size_t errlen)
{
	XXH3_64bits_update(w->sum, text, len);
	if (state_write_all(w->fd, (const uint8_t *)text, len) == 0)
		return 0;
	list_failed(w, err, errlen);
	return -1;
}

int state_list_end(struct state_list_writer *w, char *err, size_t errlen)
{
	char sum[LIST_SUM_LINE + 1];
	int fd = w->fd;

	snprintf(sum, sizeof(sum), LIST_SUM_PREFIX "%016llx\n", (unsigned long long)XXH3_64bits_digest(w->sum));
	w->fd = -1;
	if (state_write_all(fd, (const uint8_t *)sum, LIST_SUM_LINE) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		goto fail;
	}
	if (close(fd) < 0 || state_dir_rename(w->d, w->tmp, w->path) < 0 || state_dir_sync(w->d, w->path) < 0)
		goto fail;
	XXH3_freeState(w->sum);
	free(w);
	return 0;
fail:
	list_failed(w, err, errlen);
	state_list_abandon(w);
	return -1;
}

int state_list_save(const struct state_dir *d, const char *name, const char *text, size_t len, char *err,
		      size_t errlen)
{
	struct state_list_writer *w = state_list_begin(d, name, err, errlen);

	if (w == NULL)
		return -1;
	if (state_list_write(w, text, len, err, errlen) < 0) {
		state_list_abandon(w);
		return -1;
	}
	return state_list_end(w, err, errlen);
}

/* Whether b (a whole kept copy, format 2) ends with the checksum of what comes before it. */
static bool list_sum_ok(const struct state_buf *b, size_t *body_end)
{
	char want[LIST_SUM_LINE + 1];

	if (b->len < sizeof(LIST_HEADER) - 1 + LIST_SUM_LINE)
		return false;
	*body_end = b->len - LIST_SUM_LINE;
	snprintf(want, sizeof(want), LIST_SUM_PREFIX "%016llx\n",
		 (unsigned long long)XXH3_64bits(b->p, *body_end));
	return memcmp(b->p + *body_end, want, LIST_SUM_LINE) == 0;
}

int state_list_read(const struct state_dir *d, const char *name, struct state_list *out, char *err,
		      size_t errlen)
{
	char path[4200], tmp[4200], shown[8400];
	struct state_buf b = { 0 };
	size_t end;

	*out = (struct state_list){ 0 };
	list_paths(name, path, sizeof(path), tmp, sizeof(tmp));
	state_dir_name(d, path, shown, sizeof(shown));
	if (state_read_file(d, path, &b) < 0) {
		int e = errno;
		free(b.p);
		if (e == ENOENT)
			return 1;
		error_set(err, errlen, "%s: %s", state_dir_culprit(d, path, shown, sizeof(shown)), state_dir_strerror(e));
		return -1;
	}
	if (b.len >= sizeof(LIST_HEADER_V1) - 1 && memcmp(b.p, LIST_HEADER_V1, sizeof(LIST_HEADER_V1) - 1) == 0) {
		out->unchecked = true;
		end = b.len;
	} else if (b.len < sizeof(LIST_HEADER) - 1 || memcmp(b.p, LIST_HEADER, sizeof(LIST_HEADER) - 1) != 0) {
		error_set(err, errlen, "%s: not a kept list version (its first line is not bloomd's header)", shown);
		goto fail;
	} else if (!list_sum_ok(&b, &end)) {
		error_set(err, errlen, "%s: checksum mismatch: the kept version is damaged (or cut short)", shown);
		goto fail;
	}
	b.p[end] = '\0'; /* in the buffer: it holds the checksum line, or one more byte than read */
	out->text = (char *)b.p;
	out->len = end;
	return 0;
fail:
	free(b.p);
	return -1;
}
