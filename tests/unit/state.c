/* Unit tests for state.c and state_journal.c: round trips, torn journals, corrupt and foreign files, crashes mid-save. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "state_io.h"
#include "test.h"

#define JOURNAL_FIRST_RECORD (8 + 4 + 8 + 8) /* after the header: magic, version, generation, checksum */

static char dir[] = "/tmp/bloomd-persist-XXXXXX";
static struct state_dir sd;

static void entry_of(unsigned i, struct entry *e)
{
	e->kind = i % 2 ? ENTRY_SIG : ENTRY_ADDR;
	if (e->kind == ENTRY_ADDR) {
		e->len = 4;
		memcpy(e->key, (uint8_t[]){ 192, 0, 2, (uint8_t)i }, 4);
	} else {
		e->len = (uint16_t)snprintf((char *)e->key, sizeof(e->key), "signature-%u", i);
	}
}

static void path(char *out, const char *name)
{
	snprintf(out, 256, "%s/%s", dir, name);
}

static void clean(void)
{
	char p[256];

	path(p, "snapshot");
	unlink(p);
	path(p, "journal");
	unlink(p);
	path(p, "journal.tmp");
	unlink(p);
}

struct seen {
	unsigned n, adds, dels;
	uint64_t expiry_sum;
	unsigned groups;
	bool version_1;          /* the snapshot says no window */
};

/* The window offset entry i is saved with: a signature's 0 to 2 (its windows of 8 fit), an address's 0. */
static unsigned window_of(unsigned i)
{
	return i % 2 ? i % 3 : 0;
}

static int count_entry(void *ctx, const struct entry *e, unsigned group, unsigned window, uint64_t expiry)
{
	struct seen *s = ctx;
	struct entry want;

	entry_of(s->n, &want);
	assert_int_equal(e->kind, want.kind);
	assert_memory_equal(e->key, want.key, want.len);
	assert_int_equal(window, s->version_1 ? STATE_WINDOW_UNKNOWN : window_of(s->n));
	s->n++;
	s->groups += group;
	s->expiry_sum += expiry;
	return 0;
}

static void write_snapshot(unsigned n, uint64_t gen)
{
	struct state_header h = { .generation = gen, .window = 8, .algo = HASH_XXH3 };
	struct state_snapshot_writer *w;
	struct entry e;

	h.filter[0] = (struct state_filter){ .present = true, .params = { .layout = FILTER_BLOCKED, .bits = 1 << 16, .choices = 2, .hashes = 7 } };
	memset(h.filter[0].key.secret, 0xab, HASH_SECRET_SIZE);
	w = state_snapshot_begin(&sd, &h, NULL, 0);
	assert_non_null(w);
	for (unsigned i = 0; i < n; i++) {
		entry_of(i, &e);
		assert_int_equal(state_snapshot_put(w, &e, i % 2, window_of(i), i), 0);
	}
	assert_int_equal(state_snapshot_commit(w, NULL, 0), 0);
}

static void snapshot_round_trip(void **state)
{
	struct state_header h;
	struct seen s = { 0 };

	(void)state;
	clean();
	assert_int_equal(state_snapshot_read(&sd, &h, count_entry, &s, NULL, 0), 1); /* none yet */
	write_snapshot(1000, 7);
	assert_int_equal(state_snapshot_read(&sd, &h, count_entry, &s, NULL, 0), 0);
	assert_int_equal(s.n, 1000);
	assert_int_equal(s.groups, 500);
	assert_int_equal(s.expiry_sum, 999 * 1000 / 2);
	assert_int_equal(h.generation, 7);
	assert_int_equal(h.entries, 1000);
	assert_true(h.filter[0].present && !h.filter[1].present);
	assert_int_equal(h.filter[0].params.hashes, 7);
	assert_int_equal(h.filter[0].key.secret[100], 0xab);
}

/* A snapshot of format 1 (before signatures said their window) still reads, each window unknown. */
static void version_1_snapshot_reads(void **state)
{
	char p[256];
	struct state_header h;
	struct seen s = { .version_1 = true };
	struct stat st;

	(void)state;
	clean();
	write_snapshot(10, 3);
	path(p, "snapshot");
	assert_int_equal(stat(p, &st), 0);
	uint8_t *v2 = malloc((size_t)st.st_size), *v1 = malloc((size_t)st.st_size);
	FILE *f = fopen(p, "rb");
	assert_int_equal(fread(v2, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	/* The header with version 1, then each record without its two window bytes. */
	size_t at = SNAPSHOT_HEADER, out = SNAPSHOT_HEADER;
	memcpy(v1, v2, SNAPSHOT_HEADER);
	state_put_le(v1 + MAGIC_LEN, 1, 4);
	for (unsigned i = 0; i < 10; i++) {
		size_t len = state_get_le(v2 + at + 2, 2);
		memcpy(v1 + out, v2 + at, ENTRY_FIXED_V1);
		memcpy(v1 + out + ENTRY_FIXED_V1, v2 + at + ENTRY_FIXED, len);
		at += ENTRY_FIXED + len;
		out += ENTRY_FIXED_V1 + len;
	}
	state_put_le(v1 + out, state_snapshot_checksum(v1, out + 8), 8);
	f = fopen(p, "wb");
	assert_int_equal(fwrite(v1, 1, out + 8, f), out + 8);
	fclose(f);
	assert_int_equal(state_snapshot_read(&sd, &h, count_entry, &s, NULL, 0), 0);
	assert_int_equal(h.version, 1);
	assert_int_equal(s.n, 10);
	free(v1);
	free(v2);
}

/* Flip one byte anywhere: refused, and the file is left as it was. */
static void corrupt_snapshot_refused(void **state)
{
	char p[256], err[256];
	struct state_header h;
	struct stat before, after;

	(void)state;
	clean();
	write_snapshot(50, 1);
	path(p, "snapshot");
	stat(p, &before);
	for (off_t at = 0; at < before.st_size; at += 37) {
		int fd = open(p, O_RDWR);
		uint8_t b;
		assert_int_equal(pread(fd, &b, 1, at), 1);
		b ^= 0x10;
		assert_int_equal(pwrite(fd, &b, 1, at), 1);
		struct seen s = { 0 };
		assert_int_equal(state_snapshot_read(&sd, &h, count_entry, &s, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "snapshot"));
		b ^= 0x10;
		assert_int_equal(pwrite(fd, &b, 1, at), 1);
		close(fd);
	}
	stat(p, &after);
	assert_int_equal(after.st_size, before.st_size);
	/* An unknown format version is named as such. */
	int fd = open(p, O_RDWR);
	assert_int_equal(pwrite(fd, "\x09", 1, 8), 1);
	close(fd);
	assert_int_equal(state_snapshot_read(&sd, &h, count_entry, &(struct seen){ 0 }, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "version 9 is not supported"));
}

static int count_record(void *ctx, enum state_op op, const struct entry *e, uint64_t expiry)
{
	struct seen *s = ctx;

	(void)e;
	s->adds += op == STATE_ADD;
	s->dels += op == STATE_DEL;
	s->expiry_sum += expiry;
	return 0;
}

static void journal_write(uint64_t gen, unsigned adds)
{
	struct state_journal_recovery how;
	struct state_journal *j = state_journal_open(&sd, gen, count_record, &(struct seen){ 0 }, &how, NULL, 0);
	struct entry e;

	assert_non_null(j);
	for (unsigned i = 0; i < adds; i++) {
		entry_of(i, &e);
		assert_int_equal(state_journal_append(j, STATE_ADD, &e, 5), 0);
	}
	entry_of(0, &e);
	assert_int_equal(state_journal_append(j, STATE_DEL, &e, 0), 0);
	assert_int_equal(state_journal_flush(j, true, NULL, 0), 0);
	state_journal_close(j);
}

static void journal_replays_and_drops_a_torn_tail(void **state)
{
	char p[256];
	struct state_journal_recovery how;
	struct seen s = { 0 };
	struct stat st;

	(void)state;
	clean();
	journal_write(3, 10);
	struct state_journal *j = state_journal_open(&sd, 3, count_record, &s, &how, NULL, 0);
	assert_non_null(j);
	assert_int_equal(s.adds, 10);
	assert_int_equal(s.dels, 1);
	assert_int_equal(how.torn_bytes, 0);
	state_journal_close(j);
	/* Cut the last record short: it is dropped, the rest replayed, the file trimmed. */
	path(p, "journal");
	stat(p, &st);
	assert_int_equal(truncate(p, st.st_size - 3), 0);
	memset(&s, 0, sizeof(s));
	j = state_journal_open(&sd, 3, count_record, &s, &how, NULL, 0);
	assert_non_null(j);
	assert_true(how.torn_bytes > 0);
	assert_int_equal(s.adds, 10);
	assert_int_equal(s.dels, 0);
	state_journal_close(j);
	/* Appends after the trim are read back. */
	journal_write(3, 2);
	memset(&s, 0, sizeof(s));
	j = state_journal_open(&sd, 3, count_record, &s, &how, NULL, 0);
	assert_int_equal(s.adds, 12);
	assert_int_equal(how.torn_bytes, 0);
	state_journal_close(j);
}

static void journal_corruption_and_generations(void **state)
{
	char p[256], err[256];
	struct state_journal_recovery how;
	struct seen s = { 0 };

	(void)state;
	clean();
	journal_write(4, 10);
	/* A bad record in the middle is an error, not a silent loss. */
	path(p, "journal");
	int fd = open(p, O_RDWR);
	assert_int_equal(pwrite(fd, "\xff", 1, 60), 1);
	close(fd);
	assert_null(state_journal_open(&sd, 4, count_record, &s, &how, err, sizeof(err)));
	assert_non_null(strstr(err, "offset"));
	/* Newer than the snapshot: refused. */
	assert_null(state_journal_open(&sd, 3, count_record, &s, &how, err, sizeof(err)));
	assert_non_null(strstr(err, "generation 4"));
	/*
	 * A length in the middle made too long, so it runs past the end: not a
	 * torn last record, as whole records follow it. Refused, file untouched.
	 */
	clean();
	journal_write(4, 10);
	struct stat st;
	stat(p, &st);
	fd = open(p, O_RDWR);
	assert_int_equal(pwrite(fd, "\x00\x04", 2, JOURNAL_FIRST_RECORD), 2); /* 1024 bytes */
	close(fd);
	memset(&s, 0, sizeof(s));
	assert_null(state_journal_open(&sd, 4, count_record, &s, &how, err, sizeof(err)));
	assert_non_null(strstr(err, "a whole record follows"));
	struct stat after;
	stat(p, &after);
	assert_int_equal(after.st_size, st.st_size);
	/* Older than the snapshot (a crash during a save): replaced by an empty one. */
	memset(&s, 0, sizeof(s));
	struct state_journal *j = state_journal_open(&sd, 5, count_record, &s, &how, NULL, 0);
	assert_non_null(j);
	assert_int_equal(s.adds + s.dels, 0);
	assert_int_equal(state_journal_records(j), 0);
	assert_false(how.missing);
	state_journal_close(j);
	/* Missing beside a snapshot: said, not silent. */
	unlink(p);
	j = state_journal_open(&sd, 5, count_record, &s, &how, NULL, 0);
	assert_non_null(j);
	assert_true(how.missing);
	state_journal_close(j);
}

/* The records replayed, in order: "+N" an add of entry N, "-N" a delete. */
struct order {
	char text[256];
};

static int order_record(void *ctx, enum state_op op, const struct entry *e, uint64_t expiry)
{
	struct order *o = ctx;
	size_t at = strlen(o->text);

	(void)expiry;
	snprintf(o->text + at, sizeof(o->text) - at, "%s%c%u", at ? " " : "", op == STATE_ADD ? '+' : '-',
		 e->kind == ENTRY_ADDR ? e->key[3] : 0);
	return 0;
}

static struct state_journal *reopen(uint64_t gen, struct order *o, struct state_journal_recovery *how)
{
	memset(o, 0, sizeof(*o));
	struct state_journal *j = state_journal_open(&sd, gen, order_record, o, how, NULL, 0);
	assert_non_null(j);
	return j;
}

static void append_flush(struct state_journal *j, enum state_op op, unsigned i)
{
	struct entry e;

	entry_of(i, &e);
	assert_int_equal(state_journal_append(j, op, &e, 0), 0);
	assert_int_equal(state_journal_flush(j, true, NULL, 0), 0);
}

static bool file_there(const char *name)
{
	char p[256];

	path(p, name);
	return access(p, F_OK) == 0;
}

/*
 * A snapshot written while changes go on: from the divert the changes go to
 * journal.tmp. A crash before the snapshot is in leaves the journal and
 * journal.tmp, replayed in that order over the old snapshot; a crash after
 * it is in, before the switch, leaves journal.tmp the journal of the new one.
 */
static void journal_diverted_survives_a_crash_at_each_step(void **state)
{
	struct state_journal_recovery how;
	struct order o;
	char p[256];

	(void)state;
	clean();
	struct state_journal *j = reopen(3, &o, &how);
	append_flush(j, STATE_ADD, 2);
	append_flush(j, STATE_DEL, 2);
	assert_int_equal(state_journal_prepare(j, 4, NULL, 0), 0);
	assert_int_equal(state_journal_divert(j, NULL, 0), 0);
	assert_true(state_journal_diverted(j));
	assert_int_equal(state_journal_records(j), 0);
	append_flush(j, STATE_ADD, 2);
	append_flush(j, STATE_ADD, 4);
	state_journal_close(j); /* a crash while snapshot 4 is written */

	j = reopen(3, &o, &how);
	assert_string_equal(o.text, "+2 -2 +2 +4");
	assert_true(how.unfinished_save);
	assert_true(state_journal_diverted(j));
	assert_int_equal(state_journal_records(j), 2);
	assert_int_equal(state_journal_prepare(j, 4, NULL, 0), -1); /* its journal.tmp is wanted still */
	append_flush(j, STATE_DEL, 4); /* goes on in journal.tmp */
	state_journal_close(j);
	j = reopen(3, &o, &how);
	assert_string_equal(o.text, "+2 -2 +2 +4 -4");
	state_journal_close(j);

	/* A torn last record of journal.tmp is cut off as the journal's would be. */
	path(p, "journal.tmp");
	struct stat st;
	stat(p, &st);
	assert_int_equal(truncate(p, st.st_size - 3), 0);
	j = reopen(3, &o, &how);
	assert_string_equal(o.text, "+2 -2 +2 +4");
	assert_string_equal(how.torn_file, "journal.tmp");
	state_journal_close(j);

	/* Snapshot 4 in, the switch not made: journal.tmp is its journal, the old one ignored. */
	j = reopen(4, &o, &how);
	assert_string_equal(o.text, "+2 +4");
	assert_false(how.unfinished_save);
	assert_false(how.missing);
	assert_false(state_journal_diverted(j));
	assert_false(file_there("journal.tmp"));
	state_journal_close(j);
	j = reopen(4, &o, &how);
	assert_string_equal(o.text, "+2 +4");

	/* The whole way: after the switch, the new journal alone. */
	assert_int_equal(state_journal_prepare(j, 5, NULL, 0), 0);
	assert_int_equal(state_journal_divert(j, NULL, 0), 0);
	append_flush(j, STATE_ADD, 6);
	assert_int_equal(state_journal_switch(j, NULL, 0), 0);
	assert_false(state_journal_diverted(j));
	append_flush(j, STATE_ADD, 8);
	state_journal_close(j);
	j = reopen(5, &o, &how);
	assert_string_equal(o.text, "+6 +8");
	assert_false(file_there("journal.tmp"));

	/* A journal.tmp of no later generation (a save that failed before it diverted) is not replayed. */
	assert_int_equal(state_journal_prepare(j, 5, NULL, 0), 0);
	state_journal_close(j);
	j = reopen(5, &o, &how);
	assert_string_equal(o.text, "+6 +8");
	assert_false(state_journal_diverted(j));
	state_journal_close(j);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(snapshot_round_trip),
	cmocka_unit_test(version_1_snapshot_reads),
	cmocka_unit_test(corrupt_snapshot_refused),
	cmocka_unit_test(journal_replays_and_drops_a_torn_tail),
	cmocka_unit_test(journal_corruption_and_generations),
	cmocka_unit_test(journal_diverted_survives_a_crash_at_each_step),
};

int main(void)
{
	int rc;

	if (mkdtemp(dir) == NULL || state_dir_open(&sd, dir, NULL, 0) < 0)
		return 1;
	cmocka_set_message_output(CM_OUTPUT_TAP);
	rc = cmocka_run_group_tests_name("state", tests, NULL, NULL);
	clean();
	state_dir_close(&sd);
	rmdir(dir);
	return rc;
}
