/* Fuzz harness: snapshot and journal files with valid checksums around any content. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "persist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static int take_entry(void *ctx, const struct entry *e, unsigned group, uint64_t expiry)
{
	(void)ctx;
	(void)group;
	(void)expiry;
	return e->len > 0 ? 0 : -1;
}

static int take_record(void *ctx, enum persist_op op, const struct entry *e, uint64_t expiry)
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
	struct persist_header h;

	if (file == NULL)
		return;
	memcpy(file, data, size);
	uint64_t sum = persist_snapshot_checksum(file, size + 8);
	for (int i = 0; i < 8; i++)
		file[size + i] = (uint8_t)(sum >> (8 * i));
	write_file("snapshot", file, size + 8);
	snapshot_read(dir, &h, take_entry, NULL, NULL, 0);
	free(file);
}

/* data as journal records: each chunk [u16 length][body] gets its length and checksum framed. */
static void journal_case(const uint8_t *data, size_t size)
{
	char path[128];
	struct journal_recovery how;
	struct journal *j;

	snprintf(path, sizeof(path), "%s/journal", dir);
	unlink(path);
	j = journal_open(dir, 0, take_record, NULL, &how, NULL, 0); /* a valid, empty journal */
	journal_close(j);
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
	journal_close(journal_open(dir, 0, take_record, NULL, &how, NULL, 0));
}

static void clean(void)
{
	char path[128];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, (const char *[]){ "snapshot", "journal", "journal.tmp" }[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/bloomd-fuzz-state-%d", (int)getpid());
		mkdir(dir, 0700);
		atexit(clean);
	}
	if (size < 1)
		return 0;
	if (data[0] & 1)
		snapshot_case(data + 1, size - 1);
	else
		journal_case(data + 1, size - 1);
	return 0;
}
