/* Fuzz harness: feed_line in every format on any line (crowdsec-json: feed_read on a whole document); an entry it gives is one entry_parse takes back; any lines read whole and in parts give the same. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An entry a whole document gave: one entry_parse takes back. */
static int check_entry(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
		       int role, char *err, size_t errlen)
{
	char text[ENTRY_TEXT_MAX + 8], value[ENTRY_TEXT_MAX];
	struct entry again;

	(void)ctx, (void)expires, (void)labels, (void)role, (void)err, (void)errlen;
	snprintf(text, sizeof(text), "%s %s", entry_kind_name(e->kind), entry_format_value(e->kind, e->key, e->len, value, sizeof(value)));
	if (entry_parse(text, &again, NULL, 0) != 1 || again.kind != e->kind || again.len != e->len ||
	    memcmp(again.key, e->key, e->len) != 0)
		abort();
	return 0;
}

static void ignore_bad(void *ctx, unsigned line, const char *text, const char *why)
{
	(void)ctx, (void)line, (void)text, (void)why;
}

/* What a read told its callbacks: a digest of each entry (its role, kind and bytes) and bad line (its number), in order. */
struct tally {
	uint64_t digest;
	unsigned entries, bad;
};

static void mix(struct tally *t, uint64_t v)
{
	t->digest = (t->digest ^ v) * 0x100000001b3ULL;
}

static int tally_entry(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
		       int role, char *err, size_t errlen)
{
	struct tally *t = ctx;

	(void)expires, (void)labels, (void)err, (void)errlen;
	t->entries++;
	mix(t, (uint64_t)role << 8 | e->kind);
	for (size_t i = 0; i < e->len; i++)
		mix(t, e->key[i]);
	return 0;
}

static void tally_bad(void *ctx, unsigned line, const char *text, const char *why)
{
	struct tally *t = ctx;

	(void)text, (void)why;
	t->bad++;
	mix(t, 1ULL << 32 | line);
}

/* text read whole, and again per lines a call (as a list's version is taken, in slices): the callbacks hear the same. */
static void read_whole_and_in_parts(char *text, size_t len, const struct feed_spec *spec, size_t per)
{
	struct tally whole = { 0 }, parts = { 0 };
	struct feed_counts n;
	struct feed_file ff;
	char err[256];
	FILE *f = fmemopen(text, len, "r");

	if (f == NULL)
		return;
	feed_read(f, spec, 1000, tally_entry, tally_bad, &whole, &n, err, sizeof(err));
	rewind(f);
	if (feed_file_open(&ff, f, spec, 1000) == 0) {
		while (feed_file_read(&ff, per, tally_entry, tally_bad, &parts, &n, err, sizeof(err)) == 1)
			continue;
		if (whole.digest != parts.digest || whole.entries != parts.entries || whole.bad != parts.bad)
			abort();
	}
	feed_file_close(&ff);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = { "bloomd", "plain", "netset", "drop", "ipset", "csv:2", "csv:ip",
					       "suricata-dataset", "spamhaus-json", "zeek-intel", "iprep", "crowdsec-json" };
	const size_t nformats = sizeof(formats) / sizeof(formats[0]);
	static struct entry e, again;
	static char text[ENTRY_TEXT_MAX + 8], value[ENTRY_TEXT_MAX], err[256];
	struct feed_spec spec;
	struct feed_reader r;
	struct entry_labels labels;
	uint64_t expires;

	if (size == 0)
		return 0;
	char *line = malloc(size);
	memcpy(line, data + 1, size - 1); /* the first byte picks the format */
	line[size - 1] = '\0';
	if (feed_spec_parse(formats[data[0] % nformats], &spec, err, sizeof(err)) < 0)
		abort();
	if (spec.format == FEED_CROWDSEC_JSON) { /* a whole document, not lines */
		struct feed_counts counts;
		FILE *f = fmemopen(line, size - 1, "r");
		if (f && feed_read(f, &spec, 1000, check_entry, ignore_bad, NULL, &counts, err, sizeof(err)) < 0)
			abort();
		if (f)
			fclose(f);
		free(line);
		return 0;
	}
	if (size > 1) /* every line of it, read ahead whole and in parts of 1 to 5 lines */
		read_whole_and_in_parts(line, size - 1, &spec, 1 + data[0] / nformats % 5);
	feed_reader_init(&r, &spec, 1000);
	for (int pass = 0; pass < 2; pass++) /* a CSV's first line may be its header */
		if (feed_line(&r, line, &e, &expires, &labels, err, sizeof(err)) == 1) {
			entry_format_value(e.kind, e.key, e.len, value, sizeof(value));
			strcpy(text, entry_kind_name(e.kind));
			strcat(text, " ");
			strcat(text, value);
			if (entry_parse(text, &again, NULL, 0) != 1 || again.kind != e.kind || again.len != e.len ||
			    memcmp(again.key, e.key, e.len) != 0)
				abort();
		}
	free(line);
	return 0;
}
