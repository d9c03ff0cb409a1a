/* Unit tests for state_dir.c and the kept list versions: links, FIFOs and strangers' files refused, checksums checked. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state.h"
#include "state_dir.h"
#include "test.h"

static char dir[] = "/tmp/bloomd-statedir-XXXXXX";
static char outside[] = "/tmp/bloomd-outside-XXXXXX";
static struct state_dir sd;

static void at(char *out, const char *base, const char *rel)
{
	snprintf(out, 256, "%s/%s", base, rel);
}

static void write_text(const char *base, const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	at(p, base, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void reset(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/* %s/.[!.]* %s/*", dir, dir, outside);
	assert_int_equal(system(cmd), 0);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void regular_files_open_and_links_are_refused(void **state)
{
	char p[256], q[256];
	int fd;

	(void)state;
	reset();
	write_text(dir, "journal", "x");
	fd = state_dir_open_file(&sd, "journal", O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	errno = 0;
	assert_int_equal(state_dir_open_file(&sd, "snapshot", O_RDONLY), -1);
	assert_int_equal(errno, ENOENT);
	/* A link at the file itself. */
	write_text(outside, "target", "secret");
	at(p, outside, "target");
	at(q, dir, "snapshot");
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(state_dir_open_file(&sd, "snapshot", O_RDONLY), -1);
	assert_int_equal(errno, ELOOP);
	/* A link in place of lists/: neither read through nor written through. */
	at(q, dir, "lists");
	assert_int_equal(symlink(outside, q), 0);
	assert_int_equal(state_dir_open_file(&sd, "lists/target", O_RDONLY), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(state_dir_create(&sd, "lists/new", 0), -1);
	assert_int_equal(errno, ELOOP);
	at(p, outside, "new");
	assert_int_equal(access(p, F_OK), -1);
	/* Paths that leave the directory are no state paths. */
	assert_int_equal(state_dir_open_file(&sd, "../x", O_RDONLY), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(state_dir_open_file(&sd, "lists/a/b", O_RDONLY), -1);
	assert_int_equal(errno, EINVAL);
}

static void create_replaces_what_was_planted(void **state)
{
	char p[256], q[256], text[16] = "";
	int fd;

	(void)state;
	reset();
	write_text(outside, "target", "secret");
	at(p, outside, "target");
	at(q, dir, "snapshot.tmp");
	assert_int_equal(symlink(p, q), 0);
	fd = state_dir_create(&sd, "snapshot.tmp", 0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "mine", 4), 4);
	close(fd);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_string_equal(text, "secret");
	struct stat st;
	assert_int_equal(lstat(q, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	/* lists/ is made on demand, 0700, and a rename stays inside it. */
	fd = state_dir_create(&sd, "lists/.a.tmp", 0);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(state_dir_rename(&sd, "lists/.a.tmp", "lists/a"), 0);
	assert_int_equal(state_dir_sync(&sd, "lists/a"), 0);
	at(p, dir, "lists");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(state_dir_rename(&sd, "snapshot.tmp", "lists/b"), -1);
	assert_int_equal(state_dir_unlink(&sd, "lists/a"), 0);
	assert_int_equal(state_dir_unlink(&sd, "lists/a"), 0); /* gone already: no error */
}

/* A FIFO at a state path: refused at once, for reading and for writing, never waited on. */
static void fifos_are_refused_at_once(void **state)
{
	char p[256];
	struct timespec t0;

	(void)state;
	reset();
	at(p, dir, "journal");
	assert_int_equal(mkfifo(p, 0600), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(state_dir_open_file(&sd, "journal", O_RDONLY), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(state_dir_open_file(&sd, "journal", O_WRONLY | O_APPEND), -1);
	assert_int_equal(errno, EINVAL);
	assert_true(seconds_since(&t0) < 1.0);
	assert_non_null(strstr(state_dir_strerror(EINVAL), "not a regular file"));
	/* A FIFO where lists/ should be is not a directory either. */
	at(p, dir, "lists");
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(state_dir_open_file(&sd, "lists/x", O_RDONLY), -1);
	assert_int_equal(errno, EINVAL);
}

static void kept_versions_round_trip_and_damage_is_refused(void **state)
{
	static const char lines[] = "addr 192.0.2.1 category=scanner\nnet 198.51.100.0/24\n";
	struct state_list kept;
	char err[512], p[256];

	(void)state;
	reset();
	assert_int_equal(state_list_read(&sd, "feed", &kept, err, sizeof(err)), 1);
	assert_int_equal(state_list_save(&sd, "feed", lines, strlen(lines), err, sizeof(err)), 0);
	assert_int_equal(state_list_read(&sd, "feed", &kept, err, sizeof(err)), 0);
	assert_false(kept.unchecked);
	assert_non_null(strstr(kept.text, lines));
	assert_null(strstr(kept.text, "xxh3")); /* the checksum line is not part of the text */
	free(kept.text);

	/* One flipped byte in an entry: refused whole, with the file named. */
	at(p, dir, "lists/feed");
	FILE *f = fopen(p, "r+");
	assert_non_null(f);
	fseek(f, 60, SEEK_SET);
	int c = fgetc(f);
	fseek(f, 60, SEEK_SET);
	fputc(c ^ 0x01, f);
	fclose(f);
	assert_int_equal(state_list_read(&sd, "feed", &kept, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "lists/feed"));
	assert_non_null(strstr(err, "checksum"));

	/* Cut short: the checksum line is gone. */
	assert_int_equal(state_list_save(&sd, "feed", lines, strlen(lines), err, sizeof(err)), 0);
	assert_int_equal(truncate(p, 70), 0);
	assert_int_equal(state_list_read(&sd, "feed", &kept, err, sizeof(err)), -1);

	/* Not bloomd's at all. */
	write_text(dir, "lists/feed", "addr 192.0.2.1\n");
	assert_int_equal(state_list_read(&sd, "feed", &kept, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "header"));

	/* Written by 0.7: taken, said to be unchecked. */
	write_text(dir, "lists/feed", "# bloomd: the last version taken of this list\naddr 192.0.2.1\n");
	assert_int_equal(state_list_read(&sd, "feed", &kept, err, sizeof(err)), 0);
	assert_true(kept.unchecked);
	free(kept.text);
}

/* The temporary file of a failed save does not stay behind. */
static void a_failed_save_leaves_the_kept_version(void **state)
{
	static const char lines[] = "addr 192.0.2.1\n";
	struct state_list kept;
	char err[512], p[256];

	(void)state;
	reset();
	assert_int_equal(state_list_save(&sd, "feed", lines, strlen(lines), err, sizeof(err)), 0);
	/* A directory at the final name: the rename fails. */
	at(p, dir, "lists/other");
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(state_list_save(&sd, "other", lines, strlen(lines), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "lists/other"));
	at(p, dir, "lists/.other.tmp");
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(state_list_read(&sd, "feed", &kept, err, sizeof(err)), 0);
	free(kept.text);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(regular_files_open_and_links_are_refused),
	cmocka_unit_test(create_replaces_what_was_planted),
	cmocka_unit_test(fifos_are_refused_at_once),
	cmocka_unit_test(kept_versions_round_trip_and_damage_is_refused),
	cmocka_unit_test(a_failed_save_leaves_the_kept_version),
};

int main(void)
{
	char cmd[300];
	int rc;

	if (mkdtemp(dir) == NULL || mkdtemp(outside) == NULL || state_dir_open(&sd, dir, NULL, 0) < 0)
		return 1;
	cmocka_set_message_output(CM_OUTPUT_TAP);
	rc = cmocka_run_group_tests_name("state_dir", tests, NULL, NULL);
	state_dir_close(&sd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, outside);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
