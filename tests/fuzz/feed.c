/* Fuzz harness: feed_line in every format on any line (crowdsec-json: feed_read on a whole document); an entry it gives is one entry_parse takes back. */
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
