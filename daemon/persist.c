/* persist.c - durable state: snapshot files, and the byte and file helpers the journal shares. */
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

/* ---- little-endian bytes ---- */

void persist_put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t persist_get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int persist_buf_reserve(struct buf *b, size_t more)
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

void persist_buf_put(struct buf *b, uint64_t v, int n)
{
	persist_put_le(b->p + b->len, v, n);
	b->len += (size_t)n;
}

void persist_buf_bytes(struct buf *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* ---- files ---- */

void persist_path_join(char *out, size_t outlen, const char *dir, const char *name)
{
	snprintf(out, outlen, "%s/%s", dir, name);
}

int persist_write_all(int fd, const uint8_t *p, size_t n)
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

int persist_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

const char *persist_strerror(int e)
{
	if (e == ELOOP)
		return "a symbolic link (links in the state directory are never followed)";
	if (e == EINVAL)
		return "not a regular file";
	return strerror(e);
}

int persist_create(const char *path, int flags)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return -1;
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
}

int persist_open_existing(const char *path, int flags)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* The whole file in memory; -1 with errno (ENOENT: no file). */
int persist_read_file(const char *path, struct buf *b)
{
	int fd = persist_open_existing(path, O_RDONLY);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || persist_buf_reserve(b, (size_t)st.st_size + 1) < 0)
		goto fail;
	for (;;) {
		if (persist_buf_reserve(b, 65536) < 0)
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
bool persist_entry_valid(unsigned kind, const uint8_t *key, size_t len)
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

struct snapshot_writer {
	char tmp[4096], final[4096], dir[4096];
	FILE *f;
	XXH3_state_t *sum;
	uint64_t entries;
	bool failed;
};

static void header_encode(const struct persist_header *h, uint8_t *p)
{
	memcpy(p, SNAPSHOT_MAGIC, MAGIC_LEN);
	p += MAGIC_LEN;
	persist_put_le(p, PERSIST_VERSION, 4);
	persist_put_le(p + 4, h->generation, 8);
	persist_put_le(p + 12, h->window, 4);
	persist_put_le(p + 16, h->algo, 4);
	p += 20;
	for (int i = 0; i < 2; i++, p += FILTER_RECORD) {
		const struct persist_filter *f = &h->filter[i];
		p[0] = f->present;
		p[1] = (uint8_t)f->params.layout;
		p[2] = (uint8_t)f->params.choices;
		p[3] = (uint8_t)f->params.hashes;
		persist_put_le(p + 4, f->params.bits, 8);
		memcpy(p + 12, f->key.secret, HASH_SECRET_SIZE);
	}
	persist_put_le(p, h->entries, 8);
}

/* The writer's stream is its own: unlocked writes (a million entries, a lock each, cost 40%). */
static void writer_out(struct snapshot_writer *w, const void *p, size_t n)
{
	if (fwrite_unlocked(p, 1, n, w->f) != n)
		w->failed = true;
	XXH3_64bits_update(w->sum, p, n);
}

struct snapshot_writer *snapshot_begin(const char *dir, const struct persist_header *h, char *err,
				       size_t errlen)
{
	struct snapshot_writer *w = calloc(1, sizeof(*w));
	uint8_t header[SNAPSHOT_HEADER];

	if (w == NULL || (w->sum = XXH3_createState()) == NULL) {
		error_set(err, errlen, "out of memory for a snapshot");
		goto fail;
	}
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	persist_path_join(w->tmp, sizeof(w->tmp), dir, "snapshot.tmp");
	persist_path_join(w->final, sizeof(w->final), dir, "snapshot");
	int fd = persist_create(w->tmp, 0);
	if (fd < 0 || (w->f = fdopen(fd, "wb")) == NULL) {
		error_set(err, errlen, "%s: %s", w->tmp, persist_strerror(errno));
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
	snapshot_abort(w);
	return NULL;
}

int snapshot_put(struct snapshot_writer *w, const struct entry *e, unsigned group,
		 uint64_t expiry)
{
	uint8_t record[ENTRY_FIXED + ENTRY_MAX_KEY];

	record[0] = (uint8_t)e->kind;
	record[1] = (uint8_t)group;
	persist_put_le(record + 2, e->len, 2);
	persist_put_le(record + 4, expiry, 8);
	memcpy(record + ENTRY_FIXED, e->key, e->len);
	writer_out(w, record, ENTRY_FIXED + e->len);
	w->entries++;
	return w->failed ? -1 : 0;
}

void snapshot_abort(struct snapshot_writer *w)
{
	if (w == NULL)
		return;
	if (w->f) {
		fclose(w->f);
		unlink(w->tmp);
	}
	XXH3_freeState(w->sum);
	free(w);
}

/* The entry count sits just before the entries; the checksum covers it, so it is summed last. */
static int snapshot_finish(struct snapshot_writer *w)
{
	uint8_t count[8], sum[8];

	persist_put_le(count, w->entries, 8);
	XXH3_64bits_update(w->sum, count, 8);
	persist_put_le(sum, XXH3_64bits_digest(w->sum), 8);
	if (w->failed || fwrite(sum, 1, 8, w->f) != 8 ||
	    fseek(w->f, SNAPSHOT_HEADER - 8, SEEK_SET) < 0 || fwrite(count, 1, 8, w->f) != 8 ||
	    fflush(w->f) != 0 || fsync(fileno(w->f)) < 0)
		return -1;
	return 0;
}

int snapshot_commit(struct snapshot_writer *w, char *err, size_t errlen)
{
	int rc = 0;

	if (snapshot_finish(w) < 0) {
		error_set(err, errlen, "%s: %s", w->tmp, persist_strerror(errno ? errno : EIO));
		snapshot_abort(w);
		return -1;
	}
	if (fclose(w->f) != 0 || rename(w->tmp, w->final) < 0 || persist_fsync_dir(w->dir) < 0) {
		error_set(err, errlen, "%s: %s", w->final, persist_strerror(errno));
		unlink(w->tmp);
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
uint64_t persist_snapshot_checksum(const uint8_t *file, size_t len)
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

static bool snapshot_sum_ok(const struct buf *b)
{
	return persist_snapshot_checksum(b->p, b->len) == persist_get_le(b->p + b->len - 8, 8);
}

static int header_decode(const struct buf *b, struct persist_header *h, const char *path,
			 char *err, size_t errlen)
{
	const uint8_t *p = b->p + MAGIC_LEN;
	uint64_t version;

	if (b->len < SNAPSHOT_HEADER + 8 || memcmp(b->p, SNAPSHOT_MAGIC, MAGIC_LEN) != 0) {
		error_set(err, errlen, "%s: not a bloomd snapshot (%s)", path,
			  b->len < SNAPSHOT_HEADER + 8 ? "too short" : "bad magic");
		return -1;
	}
	if ((version = persist_get_le(p, 4)) != PERSIST_VERSION) {
		error_set(err, errlen, "%s: snapshot format version %llu is not supported (this bloomd reads version %d)",
			  path, (unsigned long long)version, PERSIST_VERSION);
		return -1;
	}
	if (!snapshot_sum_ok(b)) {
		error_set(err, errlen, "%s: checksum mismatch: the snapshot is corrupt", path);
		return -1;
	}
	h->generation = persist_get_le(p + 4, 8);
	h->window = (unsigned)persist_get_le(p + 12, 4);
	h->algo = (enum hash_algo)persist_get_le(p + 16, 4);
	p += 20;
	for (int i = 0; i < 2; i++, p += FILTER_RECORD) {
		struct persist_filter *f = &h->filter[i];
		f->present = p[0] != 0;
		f->params = (struct filter_params){ .layout = p[1], .choices = p[2], .hashes = p[3],
						    .bits = persist_get_le(p + 4, 8) };
		f->key.algo = h->algo;
		memcpy(f->key.secret, p + 12, HASH_SECRET_SIZE);
		if (f->present && filter_params_check(&f->params, NULL, 0) < 0) {
			error_set(err, errlen, "%s: invalid filter parameters", path);
			return -1;
		}
	}
	h->entries = persist_get_le(p, 8);
	return 0;
}

static int entries_decode(const struct buf *b, const struct persist_header *h, persist_entry_cb cb,
			  void *ctx, const char *path, char *err, size_t errlen)
{
	size_t at = SNAPSHOT_HEADER, end = b->len - 8;
	static struct entry e; /* large; one at a time */

	for (uint64_t i = 0; i < h->entries; i++) {
		if (end - at < ENTRY_FIXED)
			goto bad;
		const uint8_t *p = b->p + at;
		e.kind = p[0];
		e.len = (uint16_t)persist_get_le(p + 2, 2);
		if (end - at - ENTRY_FIXED < e.len || p[1] >= FILTER_MAX_CHOICES ||
		    !persist_entry_valid(p[0], p + ENTRY_FIXED, e.len))
			goto bad;
		memcpy(e.key, p + ENTRY_FIXED, e.len);
		if (cb(ctx, &e, p[1], persist_get_le(p + 4, 8)) < 0)
			return -1;
		at += ENTRY_FIXED + e.len;
	}
	if (at == end)
		return 0;
bad:
	error_set(err, errlen, "%s: invalid entry at offset %zu", path, at);
	return -1;
}

int snapshot_read(const char *dir, struct persist_header *h, persist_entry_cb cb, void *ctx,
		  char *err, size_t errlen)
{
	char path[4096];
	struct buf b = { 0 };
	int rc;

	memset(h, 0, sizeof(*h));
	persist_path_join(path, sizeof(path), dir, "snapshot");
	if (persist_read_file(path, &b) < 0) {
		free(b.p);
		if (errno == ENOENT)
			return 1;
		error_set(err, errlen, "%s: %s", path, persist_strerror(errno));
		return -1;
	}
	rc = header_decode(&b, h, path, err, errlen);
	if (rc == 0)
		rc = entries_decode(&b, h, cb, ctx, path, err, errlen);
	free(b.p);
	return rc;
}

/* ---- lists' last versions ---- */

static int lists_dir(const char *dir, char *out, size_t outlen)
{
	persist_path_join(out, outlen, dir, "lists");
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

int persist_list_save(const char *dir, const char *name, persist_lines_cb write_lines, void *ctx,
		      char *err, size_t errlen)
{
	char sub[4096], path[4200], tmp[4200];
	FILE *f = NULL;
	int fd = -1;

	if (lists_dir(dir, sub, sizeof(sub)) < 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/%s", sub, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", sub, name);
	if ((fd = persist_create(tmp, O_CREAT | O_EXCL | O_CLOEXEC)) < 0 || (f = fdopen(fd, "w")) == NULL)
		goto fail;
	fd = -1;
	if (write_lines(ctx, f) < 0 || fflush(f) == EOF || fsync(fileno(f)) < 0)
		goto fail;
	if (fclose(f) == EOF) {
		f = NULL;
		goto fail;
	}
	f = NULL;
	if (rename(tmp, path) < 0 || persist_fsync_dir(sub) < 0)
		goto fail;
	return 0;
fail:
	error_set(err, errlen, "%s/lists/%s: %s", dir, name, persist_strerror(errno));
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
}

FILE *persist_list_open(const char *dir, const char *name)
{
	char path[4200];
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "%s/lists/%s", dir, name);
	if ((fd = persist_open_existing(path, O_RDONLY)) < 0)
		return NULL;
	if ((f = fdopen(fd, "r")) == NULL)
		close(fd);
	return f;
}

int persist_list_remove(const char *dir, const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/lists/%s", dir, name);
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}
