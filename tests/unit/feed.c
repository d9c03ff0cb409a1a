/* Unit tests for feed.c: each format's lines, written from its documented form, good and malformed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed.h"
#include "test.h"

struct collected {
	unsigned entries, bad;
	char text[4096], last_bad[512], last_why[256];
	unsigned last_line;
};

static int collect_entry(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
			 bool exception, char *err, size_t errlen)
{
	struct collected *c = ctx;
	char value[ENTRY_TEXT_MAX];

	if (e->kind == ENTRY_SIG && e->len < 3) {
		snprintf(err, errlen, "too short");
		return -1;
	}
	c->entries++;
	snprintf(c->text + strlen(c->text), sizeof(c->text) - strlen(c->text), "%s %s%s", entry_kind_name(e->kind),
		 entry_format_value(e->kind, e->key, e->len, value, sizeof(value)), expires ? " (expires)" : "");
	if (exception)
		strcat(c->text, " (exception)");
	if (labels)
		snprintf(c->text + strlen(c->text), sizeof(c->text) - strlen(c->text), " [%s %u]", labels->category,
			 labels->severity);
	strcat(c->text, ";");
	return 0;
}

static void collect_bad(void *ctx, unsigned line, const char *text, const char *why)
{
	struct collected *c = ctx;

	c->bad++;
	c->last_line = line;
	snprintf(c->last_bad, sizeof(c->last_bad), "%s", text);
	snprintf(c->last_why, sizeof(c->last_why), "%s", why);
}

/* Read text as format; returns what was collected. */
static struct collected *read_as(const char *format, const char *text, size_t len)
{
	static struct collected c;
	struct feed_spec spec;
	struct feed_counts n;
	char err[256];
	size_t n_bytes = len ? len : strlen(text);
	char *copy = malloc(n_bytes + 1);
	FILE *f;

	memcpy(copy, text, n_bytes);
	f = fmemopen(copy, n_bytes, "r");
	memset(&c, 0, sizeof(c));
	assert_int_equal(feed_spec_parse(format, &spec, err, sizeof(err)), 0);
	assert_int_equal(feed_read(f, &spec, 1000, collect_entry, collect_bad, &c, &n, err, sizeof(err)), 0);
	assert_int_equal(n.entries, c.entries);
	assert_int_equal(n.bad, c.bad);
	fclose(f);
	free(copy);
	return &c;
}

static void native_lines_and_bad_ones(void **state)
{
	static const char text[] = "addr 192.0.2.1 category=scanner severity=1\n# comment\n\naddr 300.1.1.1\nsig \"ab\"\n"
				   "sig \"abc\" ttl=10\nbogus\naddr 1.1.1.1\0\naddr 192.0.2.2 severity=0\nnet 10.0.0.0/8 severity=3\n";
	struct collected *c = read_as("bloomd", text, sizeof(text) - 1);

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.1 [scanner 1];sig hex:616263 (expires);net 10.0.0.0/8 [ 3];");
	assert_int_equal(c->bad, 5);
	assert_int_equal(c->last_line, 9);
	assert_non_null(strstr(c->last_why, "severity=1..255"));
}

/* A plain list and FireHOL's netset: an address or a CIDR a line, '#' comments; a /32 is an address. */
static void plain_and_netset(void **state)
{
	static const char netset[] = "#\n# firehol_level1\n#\n0.0.0.0/8\n1.10.16.0/20\n203.0.113.7/32\n2001:db8::/32\n  198.51.100.9  \n";
	struct collected *c = read_as("netset", netset, 0);

	(void)state;
	assert_string_equal(c->text, "net 0.0.0.0/8;net 1.10.16.0/20;addr 203.0.113.7;net 2001:db8::/32;addr 198.51.100.9;");
	c = read_as("plain", "192.0.2.1\n<html>503 Service Unavailable</html>\n2001:db8::1\n192.0.2.1 extra\n", 0);
	assert_string_equal(c->text, "addr 192.0.2.1;addr 2001:db8::1;");
	assert_int_equal(c->bad, 2);
	assert_int_equal(c->last_line, 4);
	assert_string_equal(c->last_bad, "192.0.2.1 extra"); /* the offending text, in full */
}

/* Spamhaus DROP: "network ; SBL id", ';' comment lines. */
static void spamhaus_drop(void **state)
{
	static const char drop[] = "; Spamhaus DROP List 2026/11/23 - (c) 2026 The Spamhaus Project\n"
				   "; Last-Modified: Mon, 23 Nov 2026 12:00:00 GMT\n"
				   "1.10.16.0/20 ; SBL256894\n2.56.192.0/22 ; SBL459831\n; end\nnot-a-net ; SBL1\n";
	struct collected *c = read_as("drop", drop, 0);

	(void)state;
	assert_string_equal(c->text, "net 1.10.16.0/20;net 2.56.192.0/22;");
	assert_int_equal(c->bad, 1);
	assert_int_equal(c->last_line, 6);
}

/* `ipset save`: create lines skipped, add lines give their element; ranges and compound elements are refused. */
static void ipset_save(void **state)
{
	static const char saved[] = "create blocklist hash:net family inet hashsize 1024 maxelem 65536\n"
				    "add blocklist 192.0.2.0/24\nadd blocklist 198.51.100.7 timeout 3600\n"
				    "add blocklist 10.0.0.1-10.0.0.9\nadd blocklist 10.0.0.1,tcp:80\nflush blocklist\n";
	struct collected *c = read_as("ipset", saved, 0);

	(void)state;
	assert_string_equal(c->text, "net 192.0.2.0/24;addr 198.51.100.7;");
	assert_int_equal(c->bad, 3);
	assert_non_null(strstr(c->last_why, "not an ipset add"));
}

/* A UTF-8 byte order mark opening a file is skipped: the first entry is read, a first comment stays one. */
static void byte_order_mark(void **state)
{
	struct collected *c = read_as("plain", "\xef\xbb\xbf" "192.0.2.1\n192.0.2.2\n", 0);

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.1;addr 192.0.2.2;");
	assert_int_equal(c->bad, 0);
	c = read_as("drop", "\xef\xbb\xbf" "; Spamhaus DROP List\n198.51.100.0/24 ; SBL1\n", 0);
	assert_string_equal(c->text, "net 198.51.100.0/24;");
	assert_int_equal(c->bad, 0);
}

/* nomatch makes an element an exception; "nomatch" inside a comment does not. */
static void ipset_nomatch(void **state)
{
	static const char saved[] = "add blk 198.51.100.64/26\nadd blk 198.51.100.70 nomatch\n"
				    "add blk 203.0.113.0/28 timeout 60 nomatch comment \"x\"\n"
				    "add blk 192.0.2.9 comment \"not nomatch here\"\n";
	struct collected *c = read_as("ipset", saved, 0);

	(void)state;
	assert_string_equal(c->text, "net 198.51.100.64/26;addr 198.51.100.70 (exception);"
				     "net 203.0.113.0/28 (exception);addr 192.0.2.9;");
	assert_int_equal(c->bad, 0);
}

/* CSV: a column by number (a header line skipped) or by the header's name; quotes undone. */
static void csv_columns(void **state)
{
	static const char csv[] = "first_seen,ip,\"malware, family\"\n"
				  "2026-11-01,192.0.2.1,\"Emotet\"\n2026-11-02,\"2001:db8::5\",x\n# comment\n2026-11-03,nonsense,y\n2026-11-04\n";
	struct collected *c = read_as("csv:2", csv, 0);

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.1;addr 2001:db8::5;");
	assert_int_equal(c->bad, 2);
	c = read_as("csv:ip", csv, 0);
	assert_string_equal(c->text, "addr 192.0.2.1;addr 2001:db8::5;");
	c = read_as("csv:address", csv, 0);
	assert_int_equal(c->entries, 0);
	assert_non_null(strstr(c->last_why, "no column 'address'"));
}

/* Suricata datasets of type ip: an address a line; datarep's "address,reputation". */
static void suricata_dataset(void **state)
{
	struct collected *c = read_as("suricata-dataset", "192.0.2.1\n2001:db8::1,100\nexample.com\n", 0);

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.1;addr 2001:db8::1;");
	assert_int_equal(c->bad, 1);
}

static void formats_are_named(void **state)
{
	struct feed_spec spec;
	char err[256], name[80];

	(void)state;
	assert_int_equal(feed_spec_parse("csv:0", &spec, err, sizeof(err)), -1);
	assert_int_equal(feed_spec_parse("csv:", &spec, err, sizeof(err)), -1);
	assert_int_equal(feed_spec_parse("json", &spec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown format 'json'"));
	assert_int_equal(feed_spec_parse("csv:7", &spec, err, sizeof(err)), 0);
	assert_string_equal(feed_spec_name(&spec, name, sizeof(name)), "csv:7");
	assert_int_equal(feed_spec_parse("suricata-dataset", &spec, err, sizeof(err)), 0);
	assert_string_equal(feed_spec_name(&spec, name, sizeof(name)), "suricata-dataset");
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(native_lines_and_bad_ones), cmocka_unit_test(plain_and_netset),
	cmocka_unit_test(spamhaus_drop),             cmocka_unit_test(ipset_save), cmocka_unit_test(ipset_nomatch), cmocka_unit_test(byte_order_mark),
	cmocka_unit_test(csv_columns),               cmocka_unit_test(suricata_dataset),
	cmocka_unit_test(formats_are_named),
};

TEST_MAIN("feed", tests)
