/* feed.c - entry lists in the formats feeds come in. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "feed_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#define LINE_MAX_BYTES (16 + 4 * ENTRY_MAX_SIG)
/* The longest text an entry's line may be read as, its line ending with it: longer is bad. */
#define LINE_READ_MAX (LINE_MAX_BYTES + 2)

static const char *const format_names[] = {
	[FEED_BLOOMD] = "bloomd", [FEED_PLAIN] = "plain", [FEED_NETSET] = "netset",
	[FEED_DROP] = "drop", [FEED_IPSET] = "ipset", [FEED_CSV] = "csv",
	[FEED_SURICATA_DATASET] = "suricata-dataset", [FEED_SPAMHAUS_JSON] = "spamhaus-json",
	[FEED_ZEEK_INTEL] = "zeek-intel", [FEED_IPREP] = "iprep", [FEED_CROWDSEC_JSON] = "crowdsec-json",
};

int feed_spec_parse(const char *text, struct feed_spec *spec, char *err, size_t errlen)
{
	*spec = (struct feed_spec){ 0 };
	if (strncmp(text, "csv:", 4) == 0) {
		const char *col = text + 4;
		char *end;
		spec->format = FEED_CSV;
		if (isdigit((unsigned char)*col)) {
			unsigned long n = strtoul(col, &end, 10);
			if (*end != '\0' || n < 1 || n > 1000) {
				error_set(err, errlen, "csv column '%s' is not a number from 1 to 1000", col);
				return -1;
			}
			spec->column = (unsigned)n;
		} else if (*col == '\0' || strlen(col) >= sizeof(spec->column_name)) {
			error_set(err, errlen, "csv: needs a column, its number (csv:2) or its header's name (csv:ip)");
			return -1;
		} else {
			snprintf(spec->column_name, sizeof(spec->column_name), "%s", col);
		}
		return 0;
	}
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (i != FEED_CSV && strcmp(text, format_names[i]) == 0) {
			spec->format = (enum feed_format)i;
			return 0;
		}
	error_set(err, errlen,
		  "unknown format '%.40s' (bloomd, plain, netset, drop, ipset, csv:COLUMN, suricata-dataset, spamhaus-json, "
		  "zeek-intel, iprep or crowdsec-json)",
		  text);
	return -1;
}

const char *feed_spec_name(const struct feed_spec *spec, char *buf, size_t len)
{
	if (spec->format != FEED_CSV)
		snprintf(buf, len, "%s", format_names[spec->format]);
	else if (spec->column)
		snprintf(buf, len, "csv:%u", spec->column);
	else
		snprintf(buf, len, "csv:%s", spec->column_name);
	return buf;
}

void feed_reader_init(struct feed_reader *r, const struct feed_spec *spec, uint64_t now)
{
	*r = (struct feed_reader){ .spec = *spec, .now = now, .column = spec->column };
	if (spec->format == FEED_ZEEK_INTEL) /* until a #fields line says otherwise */
		*r = (struct feed_reader){ .spec = *spec, .now = now, .column = 1, .type_column = 2 };
}

/* ---- pieces of a line ---- */

static const char *skip_blanks(const char *p)
{
	while (*p && isspace((unsigned char)*p)) /* every blank next_word stops at: \v and \f too, or it never moves on */
		p++;
	return p;
}

/* The next blank-separated word into out (cut at len - 1); returns what follows it. */
static const char *next_word(const char *p, char *out, size_t len)
{
	size_t n = 0;

	p = skip_blanks(p);
	while (*p && !isspace((unsigned char)*p)) {
		if (n + 1 < len)
			out[n++] = *p;
		p++;
	}
	out[n] = '\0';
	return p;
}

/* A line cut at its first comment character (c); whether anything but blanks is left. */
static bool cut_comment(char *line, char c)
{
	char *hash = strchr(line, c);

	if (hash)
		*hash = '\0';
	return *skip_blanks(line) != '\0';
}

/* A plain line: its first word is the address (a netset's or a dataset's, too). */
static int plain_line(char *line, char comment, struct entry *e, char *err, size_t errlen)
{
	char word[FEED_TOKEN_MAX + 2];
	const char *rest;

	if (!cut_comment(line, comment))
		return 0;
	rest = next_word(line, word, sizeof(word));
	if (*skip_blanks(rest) != '\0') {
		error_set(err, errlen, "more than an address on the line");
		return -1;
	}
	return feed_address(word, e, err, errlen) < 0 ? -1 : 1;
}

/*
 * An add line's options (after its element): nomatch, and timeout N (the
 * seconds left when it was saved; 0: none). A comment "..." may hold anything.
 */
static bool ipset_options(const char *p, unsigned long *timeout)
{
	char word[FEED_TOKEN_MAX + 2];
	bool quoted = false, nomatch = false, timeout_next = false;

	*timeout = 0;
	while (*(p = skip_blanks(p))) {
		p = next_word(p, word, sizeof(word));
		size_t n = strlen(word);
		if (quoted)
			quoted = !(n > 0 && word[n - 1] == '"');
		else if (word[0] == '"')
			quoted = !(n > 1 && word[n - 1] == '"');
		else if (timeout_next)
			*timeout = strtoul(word, NULL, 10);
		nomatch |= !quoted && word[0] != '"' && strcmp(word, "nomatch") == 0;
		timeout_next = !quoted && strcmp(word, "timeout") == 0;
	}
	return nomatch;
}

/* Whether set is one skipped, its name as skipped_sets writes it ("NAME (" opens each). */
static bool ipset_skipped(const struct feed_reader *r, const char *set)
{
	char opening[FEED_TOKEN_MAX + 4];
	size_t n = (size_t)snprintf(opening, sizeof(opening), "%s (", set);
	const char *at = r->skipped_sets;

	while ((at = strstr(at, opening)) != NULL) {
		if (at == r->skipped_sets || at[-1] == ' ')
			return true;
		at += n;
	}
	return false;
}

/* A create line: a set of a type holding more than addresses and networks is noted, to skip its lines. */
static void ipset_create(struct feed_reader *r, const char *p)
{
	char set[FEED_TOKEN_MAX + 2], type[FEED_TOKEN_MAX + 2];
	size_t used = strlen(r->skipped_sets);

	p = next_word(p, set, sizeof(set));
	next_word(p, type, sizeof(type));
	if (strcmp(type, "hash:ip") == 0 || strcmp(type, "hash:net") == 0 || strcmp(type, "bitmap:ip") == 0 ||
	    ipset_skipped(r, set))
		return;
	int n = snprintf(r->skipped_sets + used, sizeof(r->skipped_sets) - used, "%s%s (%s)", used ? ", " : "sets ", set, type);
	if ((size_t)n >= sizeof(r->skipped_sets) - used) /* no room: a name cut short would skip the wrong set */
		r->skipped_sets[used] = '\0';
}

/* "add SET ADDRESS [options]" (only set's, if named); create lines (and a COMMIT) hold nothing. */
static int ipset_line(struct feed_reader *r, char *line, struct entry *e, uint64_t *expires, char *err, size_t errlen)
{
	char word[FEED_TOKEN_MAX + 2];
	const char *p;

	if (!cut_comment(line, '#'))
		return 0;
	p = next_word(line, word, sizeof(word));
	if (strcmp(word, "create") == 0 || strcmp(word, "-N") == 0) {
		ipset_create(r, p);
		return 0;
	}
	if (strcmp(word, "COMMIT") == 0)
		return 0;
	if (strcmp(word, "add") != 0 && strcmp(word, "-A") != 0) {
		error_set(err, errlen, "not an ipset add or create line");
		return -1;
	}
	p = next_word(p, word, sizeof(word)); /* the set's name */
	if (r->spec.set[0] && strcmp(word, r->spec.set) != 0)
		return 0;
	if (r->skipped_sets[0] && ipset_skipped(r, word)) {
		r->skipped++;
		return 0;
	}
	p = next_word(p, word, sizeof(word));
	if (strchr(word, '-') || strchr(word, ',')) {
		error_set(err, errlen, "a range or a compound element (%.60s): only addresses and networks", word);
		return -1;
	}
	if (feed_address(word, e, err, errlen) < 0)
		return -1;
	unsigned long timeout;
	bool nomatch = ipset_options(p, &timeout);
	*expires = timeout ? r->now + timeout : 0;
	return nomatch ? FEED_EXCEPTION : FEED_HOLD;
}

/* Field n (from 1) of a CSV line, quotes and "" undone; -1 if the line has fewer. */
static int csv_field(const char *line, unsigned n, char *out, size_t len)
{
	const char *p = line;

	for (unsigned i = 1;; i++) {
		size_t k = 0;
		bool quoted = *p == '"';
		p += quoted;
		while (*p && (quoted || (*p != ',' && *p != '\r' && *p != '\n'))) {
			if (quoted && *p == '"') {
				if (p[1] != '"') {
					p++;
					quoted = false;
					continue;
				}
				p++;
			}
			if (i == n && k + 1 < len)
				out[k++] = *p;
			p++;
		}
		if (i == n) {
			out[k] = '\0';
			return 0;
		}
		if (*p != ',')
			return -1;
		p++;
	}
}

/* s's blanks cut at both ends, s where it was. */
static void trim_in_place(char *s)
{
	const char *start = entry_trim(s);

	memmove(s, start, strlen(start) + 1);
}

/* The column named in the header line; 0 if it is not there. */
static unsigned csv_find_column(const char *line, const char *name)
{
	char field[FEED_TOKEN_MAX + 2];

	for (unsigned i = 1; i <= 1000 && csv_field(line, i, field, sizeof(field)) == 0; i++) {
		trim_in_place(field);
		if (strcasecmp(field, name) == 0)
			return i;
	}
	return 0;
}

static int csv_line(struct feed_reader *r, char *line, struct entry *e, char *err, size_t errlen)
{
	char field[FEED_TOKEN_MAX + 2];

	if (*skip_blanks(line) == '\0' || *skip_blanks(line) == '#')
		return 0;
	if (r->column == 0) { /* named: the first line is the header */
		if ((r->column = csv_find_column(line, r->spec.column_name)) == 0) {
			error_set(err, errlen, "the header has no column '%s'", r->spec.column_name);
			return -1;
		}
		r->header_seen = 1;
		return 0;
	}
	if (csv_field(line, r->column, field, sizeof(field)) < 0) {
		error_set(err, errlen, "no column %u", r->column);
		return -1;
	}
	trim_in_place(field);
	if (feed_address(field, e, err, errlen) == 0)
		return 1;
	/* A numbered column's first line may be a header: a name, not an address. */
	if (!r->header_seen && r->line == 1 && !isdigit((unsigned char)field[0]) && !strchr(field, ':')) {
		r->header_seen = 1;
		return 0;
	}
	error_set(err, errlen, "column %u is not an address or a network", r->column);
	return -1;
}

static int dataset_line(char *line, struct entry *e, char *err, size_t errlen)
{
	char *comma = strchr(line, ',');

	if (comma) /* datarep: address,reputation */
		*comma = '\0';
	int rc = plain_line(line, '#', e, err, errlen);
	if (rc > 0) /* Suricata reads ::ffff:a.b.c.d as a.b.c.d */
		feed_unmap_v4(e);
	return rc;
}

/* Field n (from 1) of a line split at sep, into out; -1 if there are fewer. */
static int split_field(const char *line, char sep, unsigned n, char *out, size_t len)
{
	for (unsigned i = 1; i < n; i++)
		if ((line = strchr(line, sep)) == NULL)
			return -1;
		else
			line++;
	size_t k = strcspn(line, (char[]){ sep, '\r', '\n', '\0' });
	snprintf(out, len, "%.*s", (int)k, line);
	return 0;
}

/* "#fields indicator indicator_type meta.source ...": where the two columns are. */
static int zeek_fields(struct feed_reader *r, const char *line, char *err, size_t errlen)
{
	char name[FEED_TOKEN_MAX + 2];

	r->column = r->type_column = 0;
	for (unsigned i = 2; split_field(line, '\t', i, name, sizeof(name)) == 0; i++) {
		if (strcmp(name, "indicator") == 0)
			r->column = i - 1;
		else if (strcmp(name, "indicator_type") == 0)
			r->type_column = i - 1;
	}
	if (r->column && r->type_column)
		return 0;
	error_set(err, errlen, "#fields names no indicator and indicator_type");
	return -1;
}

/* A Zeek intel line: its indicator, if its type is Intel::ADDR or Intel::SUBNET. */
static int zeek_intel_line(struct feed_reader *r, const char *line, struct entry *e, char *err, size_t errlen)
{
	char value[FEED_TOKEN_MAX + 2], type[FEED_TOKEN_MAX + 2];

	if (strncmp(line, "#fields\t", 8) == 0)
		return zeek_fields(r, line, err, errlen) < 0 ? -1 : 0;
	if (line[0] == '#' || *skip_blanks(line) == '\0')
		return 0;
	if (r->column == 0 || split_field(line, '\t', r->column, value, sizeof(value)) < 0 ||
	    split_field(line, '\t', r->type_column, type, sizeof(type)) < 0) {
		error_set(err, errlen, "fewer tab-separated fields than #fields names");
		return -1;
	}
	if (strcmp(type, "Intel::ADDR") != 0 && strcmp(type, "Intel::SUBNET") != 0)
		return 0; /* a domain, a URL, a hash: not bloomd's */
	return feed_address(value, e, err, errlen) < 0 ? -1 : 1;
}

/* Suricata's iprep: "address,category,score"; the category (its name if the list has them) is the entry's label. */
static int iprep_line(const struct feed_spec *spec, char *line, struct entry *e, struct entry_labels *labels,
		      char *err, size_t errlen)
{
	char addr[FEED_TOKEN_MAX + 2], category[FEED_TOKEN_MAX + 2], score[FEED_TOKEN_MAX + 2];
	char *end;

	if (!cut_comment(line, '#'))
		return 0;
	if (split_field(line, ',', 1, addr, sizeof(addr)) < 0 || split_field(line, ',', 2, category, sizeof(category)) < 0 ||
	    split_field(line, ',', 3, score, sizeof(score)) < 0) {
		error_set(err, errlen, "expected address,category,score");
		return -1;
	}
	trim_in_place(addr);
	trim_in_place(category);
	trim_in_place(score);
	char *end_score;
	unsigned long n = strtoul(category, &end, 10), s = strtoul(score, &end_score, 10);
	if (!isdigit((unsigned char)category[0]) || *end || n > FEED_IPREP_CATEGORIES || !isdigit((unsigned char)score[0]) || *end_score ||
	    s > 127) {
		error_set(err, errlen, "expected a category from 0 to 60 and a score from 0 to 127");
		return -1;
	}
	if (feed_address(addr, e, err, errlen) < 0)
		return -1;
	if (spec->category_names && spec->category_names[n][0])
		memcpy(labels->category, spec->category_names[n], sizeof(labels->category));
	else
		snprintf(labels->category, sizeof(labels->category), "iprep-%lu", n);
	return s > 0;
}

int feed_line(struct feed_reader *r, const char *text, struct entry *e, uint64_t *expires,
	      struct entry_labels *labels, char *err, size_t errlen)
{
	char line[LINE_MAX_BYTES + 2];
	size_t len = strlen(text);

	*expires = 0;
	*labels = (struct entry_labels){ 0 };
	r->line++;
	if (r->spec.format == FEED_BLOOMD)
		return entry_parse_labelled(text, e, r->now, expires, labels, err, errlen);
	if (len > LINE_MAX_BYTES) {
		error_set(err, errlen, "line longer than %d bytes", LINE_MAX_BYTES);
		return -1;
	}
	memcpy(line, text, len + 1);
	switch (r->spec.format) {
	case FEED_PLAIN:
	case FEED_NETSET:
		return plain_line(line, '#', e, err, errlen);
	case FEED_DROP:
		return plain_line(line, ';', e, err, errlen);
	case FEED_IPSET:
		return ipset_line(r, line, e, expires, err, errlen);
	case FEED_CSV:
		return csv_line(r, line, e, err, errlen);
	case FEED_SURICATA_DATASET:
		return dataset_line(line, e, err, errlen);
	case FEED_SPAMHAUS_JSON:
		return feed_spamhaus_json_line(line, e, err, errlen);
	case FEED_ZEEK_INTEL:
		return zeek_intel_line(r, line, e, err, errlen);
	case FEED_IPREP:
		return iprep_line(&r->spec, line, e, labels, err, errlen);
	case FEED_CROWDSEC_JSON:
		error_set(err, errlen, "crowdsec-json is read as a whole document, not by line");
		return -1;
	case FEED_BLOOMD:
		break;
	}
	return -1;
}

/* ---- files ---- */

static void report_bad(feed_bad_cb on_bad, void *ctx, unsigned lineno, char *line, const char *why)
{
	size_t n = strlen(line);

	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	error_printable(line);
	on_bad(ctx, lineno, line, why);
}

/* A line read ahead of its entry's callback: its text, and what feed_line made of it. */
struct feed_pending {
	struct entry e;
	char *text;
	size_t cap;
	unsigned lineno;
	int rc;
	uint64_t expires;
	struct entry_labels labels;
	char why[256];
};

int feed_file_open(struct feed_file *ff, FILE *f, const struct feed_spec *spec, uint64_t now)
{
	*ff = (struct feed_file){ .f = f };
	feed_reader_init(&ff->r, spec, now);
	return (ff->pending = calloc(FEED_AHEAD, sizeof(*ff->pending))) == NULL ? -1 : 0;
}

void feed_file_close(struct feed_file *ff)
{
	for (size_t i = 0; ff->pending && i < FEED_AHEAD; i++)
		free(ff->pending[i].text);
	free(ff->pending);
	ff->pending = NULL;
}

/* Line p (got bytes in p->text), the reader's next, made into p's entry or p's reason it is bad. */
static void parse_line(struct feed_reader *r, struct feed_pending *p, ssize_t got)
{
	char *line = p->text;

	if (r->line == 0 && got >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) { /* a UTF-8 BOM */
		memmove(line, line + 3, (size_t)got - 2);
		got -= 3;
	}
	if (memchr(line, '\0', (size_t)got) != NULL) {
		error_set(p->why, sizeof(p->why), "NUL byte in the line (not a text file?)");
		r->line++;
		p->rc = -1;
	} else {
		p->rc = feed_line(r, line, &p->e, &p->expires, &p->labels, p->why, sizeof(p->why));
	}
	p->lineno = r->line;
}

/* Line p through the callbacks, counted in counts. */
static void deliver_line(struct feed_pending *p, feed_entry_cb on_entry, feed_bad_cb on_bad, void *ctx,
			 struct feed_counts *counts)
{
	int rc = p->rc;

	counts->lines++;
	if (rc > 0) {
		bool labelled = p->labels.category[0] || p->labels.severity;
		if (on_entry(ctx, &p->e, p->expires, labelled ? &p->labels : NULL, rc, p->why, sizeof(p->why)) != 0)
			rc = -1;
	}
	if (rc < 0) {
		counts->bad++;
		report_bad(on_bad, ctx, p->lineno, p->text, p->why);
	}
	counts->entries += rc > 0;
}

/*
 * Up to max_lines lines read and parsed, and each entry told to ff->ahead,
 * before the first goes through the callbacks: each line's memory (a store
 * slot, at random in a table of a gigabyte) is then on its way while the
 * ones before it are added. A line longer than any entry's (bad) ends
 * them, so that a file of such lines is held one at a time, as it would be
 * read line by line. Returns the lines read; *got < 0 at the end.
 */
static size_t read_ahead(struct feed_file *ff, size_t max_lines, void *ctx, ssize_t *got)
{
	size_t n = 0;

	while (n < max_lines && n < FEED_AHEAD) {
		struct feed_pending *p = &ff->pending[n];
		if ((*got = getline(&p->text, &p->cap, ff->f)) < 0)
			break;
		parse_line(&ff->r, p, *got);
		if (p->rc > 0 && ff->ahead)
			ff->ahead(ctx, &p->e);
		n++;
		if (*got > LINE_READ_MAX)
			break;
	}
	return n;
}

/* Lines read ahead let go of a long line's buffer once it is reported (an entry's fits in a few KiB). */
static void release_long_lines(struct feed_file *ff, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct feed_pending *p = &ff->pending[i];
		if (p->cap > 2 * LINE_READ_MAX) {
			free(p->text);
			p->text = NULL;
			p->cap = 0;
		}
	}
}

int feed_file_read(struct feed_file *ff, size_t max_lines, feed_entry_cb on_entry, feed_bad_cb on_bad, void *ctx,
		   struct feed_counts *counts, char *err, size_t errlen)
{
	uint64_t skipped_before = ff->r.skipped;
	ssize_t got = 0;

	*counts = (struct feed_counts){ 0 };
	if (ff->r.spec.format == FEED_CROWDSEC_JSON) /* one document: read whole, whatever max_lines says */
		return feed_crowdsec_read(ff->f, &ff->r.spec, ff->r.now, on_entry, on_bad, ctx, counts, err,
					  errlen);
	for (size_t left = max_lines; left > 0 && got >= 0;) {
		size_t n = read_ahead(ff, left, ctx, &got);
		for (size_t i = 0; i < n; i++)
			deliver_line(&ff->pending[i], on_entry, on_bad, ctx, counts);
		release_long_lines(ff, n);
		left -= n;
	}
	counts->skipped = ff->r.skipped - skipped_before;
	snprintf(counts->skipped_what, sizeof(counts->skipped_what), "%.*s", (int)sizeof(counts->skipped_what) - 1,
		 ff->r.skipped_sets);
	if (ferror(ff->f)) {
		error_set(err, errlen, "read error: %s", strerror(errno));
		return -1;
	}
	return got >= 0 && !feof(ff->f) ? 1 : 0;
}

int feed_read(FILE *f, const struct feed_spec *spec, uint64_t now, feed_entry_cb on_entry,
	      feed_bad_cb on_bad, void *ctx, struct feed_counts *counts, char *err, size_t errlen)
{
	struct feed_file ff;
	int rc;

	if (feed_file_open(&ff, f, spec, now) < 0) {
		*counts = (struct feed_counts){ 0 };
		error_set(err, errlen, "out of memory");
		return -1;
	}
	rc = feed_file_read(&ff, SIZE_MAX, on_entry, on_bad, ctx, counts, err, errlen);
	feed_file_close(&ff);
	return rc;
}
