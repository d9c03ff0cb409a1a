/* Fuzz harness: snapshot, journal and kept list files with valid checksums around any content. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "feed.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static struct state_dir sd;

static int take_entry(void *ctx, const struct entry *e, unsigned group, unsigned window, uint64_t expiry)
{
	(void)ctx;
	(void)group;
	(void)window;
	(void)expiry;
	return e->len > 0 ? 0 : -1;
}

static int take_record(void *ctx, enum state_op op, const struct entry *e, uint64_t expiry)
{
	(void)ctx;
	(void)op;
	(void)expiry;
	return e->len > 0 ? 0 : -1;
}

static void write_file(const char *name, const uint8_t *p, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) != NULL) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

/* data as a snapshot, its checksum made right so that the parser behind it is reached. */
static void snapshot_case(const uint8_t *data, size_t size)
{
	uint8_t *file = malloc(size + 8);
	struct state_header h;

	if (file == NULL)
		return;
	memcpy(file, data, size);
	uint64_t sum = state_snapshot_checksum(file, size + 8);
	for (int i = 0; i < 8; i++)
		file[size + i] = (uint8_t)(sum >> (8 * i));
	write_file("snapshot", file, size + 8);
	state_snapshot_read(&sd, &h, take_entry, NULL, NULL, 0);
	free(file);
}

/* data as journal records: each chunk [u16 length][body] gets its length and checksum framed. */
static void journal_case(const uint8_t *data, size_t size)
{
	char path[128];
	struct state_journal_recovery how;
	struct state_journal *j;

	snprintf(path, sizeof(path), "%s/journal", dir);
	unlink(path);
	j = state_journal_open(&sd, 0, take_record, NULL, &how, NULL, 0); /* a valid, empty journal */
	state_journal_close(j);
	FILE *f = fopen(path, "ab");
	if (f == NULL)
		return;
	while (size >= 2) {
		size_t body = (size_t)(data[0] | data[1] << 8) % 2100;
		data += 2;
		size -= 2;
		if (body > size)
			body = size;
		uint8_t rec[4 + 2100 + 8];
		rec[0] = (uint8_t)body;
		rec[1] = (uint8_t)(body >> 8);
		rec[2] = rec[3] = 0;
		memcpy(rec + 4, data, body);
		uint64_t sum = XXH3_64bits(rec, 4 + body);
		for (int i = 0; i < 8; i++)
			rec[4 + body + i] = (uint8_t)(sum >> (8 * i));
		fwrite(rec, 1, 4 + body + 8, f);
		data += body;
		size -= body;
	}
	fclose(f);
	state_journal_close(state_journal_open(&sd, 0, take_record, NULL, &how, NULL, 0));
}

static int take_line(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
		     int role, char *err, size_t errlen)
{
	(void)ctx;
	(void)expires;
	(void)labels;
	(void)role;
	(void)err;
	(void)errlen;
	return e->len > 0 ? 0 : -1;
}

static void skip_bad(void *ctx, unsigned line, const char *text, const char *why)
{
	(void)ctx;
	(void)line;
	(void)text;
	(void)why;
}

/*
 * data as a kept list version: odd first bytes as they are, even ones between
 * the header and a checksum made right, so the entry parser behind it is reached.
 */
static void list_case(const uint8_t *data, size_t size)
{
	static const char header[] = "# bloomd: a list's last version taken, format 2\n";
	char path[128];
	struct state_list kept;
	FILE *f;

	snprintf(path, sizeof(path), "%s/lists", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/lists/fuzz", dir);
	if ((f = fopen(path, "wb")) == NULL)
		return;
	if (size > 0 && (data[0] & 1)) {
		fwrite(data, 1, size, f);
	} else {
		XXH3_state_t *sum = XXH3_createState();
		XXH3_64bits_reset(sum);
		XXH3_64bits_update(sum, header, sizeof(header) - 1);
		XXH3_64bits_update(sum, data, size);
		fprintf(f, "%s", header);
		fwrite(data, 1, size, f);
		fprintf(f, "# xxh3 %016llx\n", (unsigned long long)XXH3_64bits_digest(sum));
		XXH3_freeState(sum);
	}
	fclose(f);
	if (state_list_read(&sd, "fuzz", &kept, NULL, 0) != 0)
		return;
	struct feed_spec native = { .format = FEED_BLOOMD };
	struct feed_counts n;
	FILE *text = kept.len ? fmemopen(kept.text, kept.len, "r") : NULL;
	if (text) {
		feed_read(text, &native, 0, take_line, skip_bad, NULL, &n, NULL, 0);
		fclose(text);
	}
	free(kept.text);
}

static void clean(void)
{
	char path[128];

	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir,
			 (const char *[]){ "snapshot", "journal", "journal.tmp", "lists/fuzz", "lists" }[i]);
		remove(path);
	}
	state_dir_close(&sd);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/bloomd-fuzz-state-%d", (int)getpid());
		mkdir(dir, 0700);
		if (state_dir_open(&sd, dir, NULL, 0) < 0)
			abort();
		atexit(clean);
	}
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0: snapshot_case(data + 1, size - 1); break;
	case 1: journal_case(data + 1, size - 1); break;
	default: list_case(data + 1, size - 1); break;
	}
	return 0;
}
