/* Unit tests for feed.c: each format's lines, written from its documented form, good and malformed. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed.h"
#include "test.h"

static uint64_t first_expires; /* of the last read's first entry that expires */

struct collected {
	unsigned entries, bad;
	char text[4096], last_bad[512], last_why[256];
	unsigned last_line;
	bool change;
	uint64_t skipped;
};

static int collect_entry(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
			 int role, char *err, size_t errlen)
{
	struct collected *c = ctx;
	char value[ENTRY_TEXT_MAX];

	if (e->kind == ENTRY_SIG && e->len < 3) {
		snprintf(err, errlen, "too short");
		return -1;
	}
	c->entries += role != FEED_DELETED;
	if (expires && first_expires == 0)
		first_expires = expires;
	snprintf(c->text + strlen(c->text), sizeof(c->text) - strlen(c->text), "%s %s%s", entry_kind_name(e->kind),
		 entry_format_value(e->kind, e->key, e->len, value, sizeof(value)), expires ? " (expires)" : "");
	if (role == FEED_EXCEPTION)
		strcat(c->text, " (exception)");
	if (role == FEED_DELETED)
		strcat(c->text, " (deleted)");
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

/* Read text as format (only the ipset set named, if set); returns what was collected. */
static const char (*category_names)[ENTRY_CATEGORY_MAX]; /* iprep's, for the next read */
static bool stream_whole;                                /* crowdsec-json's, for the next read */

static size_t lines_a_call; /* 0: feed_read whole; else feed_file_read that many lines a call */

/* f read as spec says, by feed_read or a few lines a call; its counts summed. */
static int read_counted(FILE *f, const struct feed_spec *spec, struct collected *c, struct feed_counts *n)
{
	struct feed_file ff;
	struct feed_counts part;
	char err[256];
	int rc;

	if (lines_a_call == 0)
		return feed_read(f, spec, 1000, collect_entry, collect_bad, c, n, err, sizeof(err));
	*n = (struct feed_counts){ 0 };
	assert_int_equal(feed_file_open(&ff, f, spec, 1000), 0);
	do {
		rc = feed_file_read(&ff, lines_a_call, collect_entry, collect_bad, c, &part, err, sizeof(err));
		assert_true(part.lines <= lines_a_call || spec->format == FEED_CROWDSEC_JSON);
		n->lines += part.lines;
		n->entries += part.entries;
		n->bad += part.bad;
		n->skipped += part.skipped;
		n->change |= part.change;
	} while (rc == 1);
	feed_file_close(&ff);
	return rc;
}

static struct collected *read_set(const char *format, const char *set, const char *text, size_t len)
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
	first_expires = 0;
	assert_int_equal(feed_spec_parse(format, &spec, err, sizeof(err)), 0);
	snprintf(spec.set, sizeof(spec.set), "%s", set);
	spec.category_names = category_names;
	spec.stream_whole = stream_whole;
	assert_int_equal(read_counted(f, &spec, &c, &n), 0);
	c.change = n.change;
	c.skipped = n.skipped;
	assert_int_equal(n.entries, c.entries);
	assert_int_equal(n.bad, c.bad);
	fclose(f);
	free(copy);
	return &c;
}

static struct collected *read_as(const char *format, const char *text, size_t len)
{
	return read_set(format, "", text, len);
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
	assert_string_equal(c->text, "net 192.0.2.0/24;addr 198.51.100.7 (expires);");
	assert_int_equal(first_expires, 1000 + 3600); /* the timeout left when it was saved: a TTL */
	assert_int_equal(c->bad, 3);
	assert_non_null(strstr(c->last_why, "not an ipset add"));
}

/* An ipset save of several sets: set = NAME takes only that one's lines (timeout 0: never expires). */
static void ipset_one_set(void **state)
{
	static const char saved[] = "create allow hash:ip family inet\nadd allow 10.0.0.1\n"
				    "create block hash:net family inet timeout 600\nadd block 192.0.2.0/24 timeout 0\n"
				    "add block 198.51.100.9 timeout 599\nadd allow 10.0.0.2\n";
	struct collected *c = read_set("ipset", "block", saved, 0);

	(void)state;
	assert_string_equal(c->text, "net 192.0.2.0/24;addr 198.51.100.9 (expires);");
	c = read_as("ipset", saved, 0);
	assert_int_equal(c->entries, 4);
	/* a vertical tab or form feed among an add line's options is a blank (it looped for ever: fuzz-feed) */
	c = read_as("ipset", "create b hash:ip\nadd b 192.0.2.7 \v\t\f timeout\v5\n", 0);
	assert_string_equal(c->text, "addr 192.0.2.7 (expires);");
}

/*
 * A whole `ipset save` holding a set bloomd cannot hold (hash:ip,port): that
 * set is skipped whole, its lines counted, not taken as bad lines; the
 * others are read.
 */
static void ipset_other_types(void **state)
{
	static const char saved[] = "create web hash:ip,port family inet\nadd web 192.0.2.1,tcp:80\nadd web 192.0.2.2,udp:53\n"
				    "create block hash:ip family inet\nadd block 192.0.2.9\n"
				    "create macs hash:mac\nadd macs 00:11:22:33:44:55\nadd block 192.0.2.10\n";
	struct collected *c = read_as("ipset", saved, 0);
	struct feed_counts n;
	char err[256], copy[sizeof(saved)];
	struct feed_spec spec;

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.9;addr 192.0.2.10;");
	assert_int_equal(c->bad, 0);
	memcpy(copy, saved, sizeof(saved));
	FILE *f = fmemopen(copy, sizeof(saved) - 1, "r");
	assert_int_equal(feed_spec_parse("ipset", &spec, err, sizeof(err)), 0);
	assert_int_equal(feed_read(f, &spec, 0, collect_entry, collect_bad, c, &n, err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(n.skipped, 3);
	assert_string_equal(n.skipped_what, "sets web (hash:ip,port), macs (hash:mac)");
}

/* Spamhaus's drop_v4.json: an object a line, the metadata line last; an error page is a bad line. */
static void spamhaus_json(void **state)
{
	static const char drop[] =
		"{\"cidr\":\"1.10.16.0/20\",\"sblid\":\"SBL256894\",\"rir\":\"apnic\"}\n"
		"{\"cidr\":\"2001:db8::/32\",\"sblid\":\"SBL1\",\"rir\":\"ripencc\"}\r\n"
		"<html>503</html>\n{\"sblid\":\"SBL2\"}\n"
		"{\"type\":\"metadata\",\"timestamp\":1764000000,\"size\":123,\"records\":2,"
		"\"copyright\":\"(c) 2026 The Spamhaus Project SLU\",\"terms\":\"https://www.spamhaus.org/drop/terms/\"}\n";
	struct collected *c = read_as("spamhaus-json", drop, 0);

	(void)state;
	assert_string_equal(c->text, "net 1.10.16.0/20;net 2001:db8::/32;");
	assert_int_equal(c->bad, 2);
	assert_int_equal(c->last_line, 4);
}

/* Zeek intel: columns by the #fields line, in any order; only address and subnet indicators. */
static void zeek_intel(void **state)
{
	static const char intel[] = "#separator \\x09\n#fields\tindicator\tindicator_type\tmeta.source\tmeta.desc\n"
				    "192.0.2.1\tIntel::ADDR\tfeed-a\tC2 host\n198.51.100.0/24\tIntel::SUBNET\tfeed-a\t-\n"
				    "evil.example\tIntel::DOMAIN\tfeed-b\t-\n2001:db8::1\tIntel::ADDR\tfeed-a\t-\n"
				    "not-an-ip\tIntel::ADDR\tx\t-\nlonely\n";
	struct collected *c = read_as("zeek-intel", intel, 0);

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.1;net 198.51.100.0/24;addr 2001:db8::1;");
	assert_int_equal(c->bad, 2);
	c = read_as("zeek-intel", "#fields\tmeta.source\tindicator_type\tindicator\nx\tIntel::ADDR\t192.0.2.5\n", 0);
	assert_string_equal(c->text, "addr 192.0.2.5;");
	c = read_as("zeek-intel", "#fields\tsomething\n", 0);
	assert_non_null(strstr(c->last_why, "#fields names no indicator"));
}

/* Suricata's iprep: address,category,score; the category a label, score 0 nothing. */
static void iprep(void **state)
{
	struct collected *c = read_as("iprep", "192.0.2.1,1,100\n198.51.100.0/24,6,50\n192.0.2.9,2,0\n# x\n"
						"192.0.2.10,61,5\n192.0.2.11,1\n",
				      0);

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.1 [iprep-1 0];net 198.51.100.0/24 [iprep-6 0];");
	assert_int_equal(c->bad, 2);

	/* With the categories file's short names: a named category is its name, the others stay iprep-N. */
	static char names[FEED_IPREP_CATEGORIES + 1][ENTRY_CATEGORY_MAX] = { [1] = "BadHosts" };
	category_names = (const char(*)[ENTRY_CATEGORY_MAX])names;
	c = read_as("iprep", "192.0.2.1,1,100\n198.51.100.0/24,6,50\n", 0);
	category_names = NULL;
	assert_string_equal(c->text, "addr 192.0.2.1 [BadHosts 0];net 198.51.100.0/24 [iprep-6 0];");
}

/* CrowdSec: cscli's alerts with their decisions, the LAPI stream's "new", a bare array; durations as TTLs. */
static void crowdsec_json(void **state)
{
	static const char cscli[] =
		"[{\"id\":1,\"scenario\":\"crowdsecurity/ssh-bf\",\"decisions\":["
		"{\"duration\":\"3h59m51.123456789s\",\"id\":10,\"origin\":\"crowdsec\",\"scenario\":\"crowdsecurity/ssh-bf\","
		"\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"},"
		"{\"duration\":\"1h\",\"scope\":\"Range\",\"type\":\"ban\",\"value\":\"198.51.100.0/24\",\"scenario\":\"crowdsecurity/http probing\"},"
		"{\"duration\":\"4h\",\"scope\":\"Country\",\"type\":\"ban\",\"value\":\"XX\"},"
		"{\"duration\":\"4h\",\"scope\":\"Ip\",\"type\":\"captcha\",\"value\":\"192.0.2.7\"},"
		"{\"duration\":\"-5m2s\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.8\"},"
		"{\"duration\":\"forever\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.9\"}]}]";
	struct collected *c = read_as("crowdsec-json", cscli, 0);

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.1 (expires) [crowdsecurity/ssh-bf 0];"
				     "net 198.51.100.0/24 (expires) [crowdsecurity/http_probing 0];");
	assert_int_equal(first_expires, 1000 + 3 * 3600 + 59 * 60 + 52); /* rounded up */
	assert_int_equal(c->bad, 1);
	assert_string_equal(c->last_bad, "192.0.2.9"); /* a run-out decision holds nothing; a bad duration is bad */
	c = read_as("crowdsec-json", "{\"new\":[{\"duration\":\"500ms\",\"scope\":\"ip\",\"type\":\"ban\","
				     "\"value\":\"2001:db8::1\"}],\"deleted\":null}",
		    0);
	assert_string_equal(c->text, "addr 2001:db8::1 (expires);");
	assert_int_equal(read_as("crowdsec-json", "null", 0)->entries, 0); /* no decisions at all */
	/* Simulated: CrowdSec enforces them nowhere, as a decision or as a whole alert. */
	c = read_as("crowdsec-json", "[{\"simulated\":false,\"decisions\":["
				     "{\"duration\":\"1h\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.30\",\"simulated\":true},"
				     "{\"duration\":\"1h\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.31\",\"simulated\":false}]},"
				     "{\"simulated\":true,\"decisions\":[{\"duration\":\"1h\",\"scope\":\"Ip\",\"type\":\"ban\","
				     "\"value\":\"192.0.2.32\"}]}]",
		    0);
	assert_string_equal(c->text, "addr 192.0.2.31 (expires);");
	assert_int_equal(c->skipped, 2); /* counted, one of a simulated decision, one of a simulated alert */
	c = read_as("crowdsec-json", "[{\"decisions\": [", 0);
	assert_int_equal(c->bad, 1); /* a truncated download: one bad line, so max_bad refuses it */
	c = read_as("crowdsec-json", "+--------+-------------+\n|   ID   |   Source    |\n", 0);
	assert_int_equal(c->bad, 1); /* cscli's table: the line says what to run instead */
	assert_non_null(strstr(c->last_why, "cscli's table, not its JSON: write it with cscli decisions list -o json"));
}

/*
 * The LAPI's stream without startup=true is a change: its deleted bans
 * leave the list (first), its new ones join it; asked for with startup=true
 * it is whole, its deleted (the expired) left aside. cscli's output is whole.
 */
static void crowdsec_stream_change(void **state)
{
	static const char delta[] =
		"{\"deleted\":[{\"duration\":\"-12ms\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.7\"},"
		"{\"duration\":\"-1s\",\"scope\":\"Ip\",\"type\":\"captcha\",\"value\":\"192.0.2.8\"},"
		"{\"duration\":\"-1s\",\"scope\":\"Range\",\"type\":\"ban\",\"value\":\"198.51.100.0/24\"}],"
		"\"new\":[{\"duration\":\"1h\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.7\"}]}";
	struct collected *c = read_as("crowdsec-json", delta, 0);

	(void)state;
	assert_true(c->change);
	assert_string_equal(c->text, "addr 192.0.2.7 (deleted);net 198.51.100.0/24 (deleted);addr 192.0.2.7 (expires);");
	assert_int_equal(c->entries, 1);
	c = read_as("crowdsec-json", "{\"deleted\":null,\"new\":null}", 0);
	assert_true(c->change); /* nothing changed: not an empty list */
	assert_int_equal(c->entries, 0);
	stream_whole = true;
	c = read_as("crowdsec-json", delta, 0);
	stream_whole = false;
	assert_false(c->change);
	assert_string_equal(c->text, "addr 192.0.2.7 (expires);");
	c = read_as("crowdsec-json", "[{\"decisions\":[{\"duration\":\"1h\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"}]}]", 0);
	assert_false(c->change);
}

/*
 * Where the LAPI's stream was asked for, only a stream answers: what a
 * proxy, a captive portal or a wrong path sends ({}, an error object, [])
 * is refused by name, never read as a version of no decisions.
 */
static void crowdsec_stream_only(void **state)
{
	static const char *const not_streams[] = { "{}", "{\"message\":\"access forbidden\"}", "[]", "{\"new\":5}",
						    "{\"deleted\":\"x\",\"new\":null}", "null" };
	struct feed_spec spec;
	struct feed_counts n;
	struct collected c = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(feed_spec_parse("crowdsec-json", &spec, err, sizeof(err)), 0);
	spec.stream_only = true;
	for (size_t i = 0; i < sizeof(not_streams) / sizeof(not_streams[0]); i++) {
		char text[64];
		snprintf(text, sizeof(text), "%s", not_streams[i]);
		FILE *f = fmemopen(text, strlen(text), "r");
		err[0] = '\0';
		assert_int_equal(feed_read(f, &spec, 1000, collect_entry, collect_bad, &c, &n, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "not a decision stream"));
		assert_non_null(strstr(err, not_streams[i])); /* what came back, named */
		fclose(f);
	}
	assert_int_equal(c.entries, 0);
	char empty[] = "{\"new\":null,\"deleted\":null}";
	FILE *f = fmemopen(empty, strlen(empty), "r");
	assert_int_equal(feed_read(f, &spec, 1000, collect_entry, collect_bad, &c, &n, err, sizeof(err)), 0);
	assert_true(n.change);
	fclose(f);
}

/* A decision's duration as Go's time.ParseDuration reads it: 1 if taken (its TTL in *seconds), 0 if bad. */
static int decision_lasting(const char *duration, uint64_t *seconds)
{
	char doc[256];

	snprintf(doc, sizeof(doc), "[{\"duration\":\"%s\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"}]",
		 duration);
	struct collected *c = read_as("crowdsec-json", doc, 0);
	*seconds = first_expires ? first_expires - 1000 : 0;
	return c->bad == 0;
}

/* Go's grammar, [-+]?([0-9]*(\.[0-9]*)?UNIT)+ or 0: what C's strtod also takes (1e3, 0x10, inf) is refused. */
static void crowdsec_go_durations(void **state)
{
	static const char *const refused[] = { "1e3s", "0x10s", "inf", "infs", "nans", "5", "1.5", ".s", "s", "1d", "1hh",
					       "1h-5m", "--5s", "1 h", "", "+", "3000000h" };
	static const struct {
		const char *text;
		uint64_t seconds;
	} taken[] = { { "3h59m51s", 14391 }, { "1.5h", 5400 }, { ".5s", 1 }, { "1.s", 1 }, { "+90s", 90 },
		      { "87600h", 315360000 }, { "1h0m0.000000001s", 3601 }, { "2000ms", 2 }, { "1500000us", 2 },
		      { "1\u00b5s", 1 }, { "1\u03bcs", 1 }, { "3ns", 1 } };
	uint64_t seconds;

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (decision_lasting(refused[i], &seconds))
			fail_msg("'%s' was taken as a duration", refused[i]);
	}
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		if (!decision_lasting(taken[i].text, &seconds) || seconds != taken[i].seconds)
			fail_msg("'%s': %llu seconds, not %llu", taken[i].text, (unsigned long long)seconds,
				 (unsigned long long)taken[i].seconds);
	}
	assert_true(decision_lasting("0", &seconds)); /* Go's bare 0: run out, holds nothing, not bad */
	assert_true(decision_lasting("-5m2s", &seconds));
}

/* ::ffff:a.b.c.d in a Suricata dataset is IPv4, as Suricata reads it; elsewhere it stays IPv6. */
static void mapped_addresses(void **state)
{
	struct collected *c = read_as("suricata-dataset", "::ffff:192.0.2.1\n::ffff:198.51.100.0/120\n2001:db8::1\n", 0);

	(void)state;
	assert_string_equal(c->text, "addr 192.0.2.1;net 198.51.100.0/24;addr 2001:db8::1;");
	c = read_as("plain", "::ffff:192.0.2.1\n", 0);
	assert_string_equal(c->text, "addr ::ffff:192.0.2.1;");
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
				     "net 203.0.113.0/28 (expires) (exception);addr 192.0.2.9;");
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

/*
 * A file read a few lines a call (as a list's version is taken, a slice at
 * a time) gives what it gives read whole: a CSV header's column, Zeek's
 * #fields, ipset's skipped sets, a byte order mark, bad lines' numbers, a
 * CrowdSec document (read whole by its first call).
 */
static void read_in_parts_as_whole(void **state)
{
	for (lines_a_call = 1; lines_a_call <= 3; lines_a_call++) {
		native_lines_and_bad_ones(state);
		csv_columns(state);
		zeek_intel(state);
		ipset_other_types(state);
		byte_order_mark(state);
		crowdsec_json(state);
	}
	lines_a_call = 0;
}

/* What a read told its callbacks, in order: "a<value>" ahead, "e<value>" an entry, "b<line>" a bad line. */
struct told {
	char seq[96][64];
	unsigned n;
};

static void tell(struct told *t, char what, const char *value)
{
	assert_true(t->n < 96);
	snprintf(t->seq[t->n++], sizeof(t->seq[0]), "%c%.40s", what, value);
}

static void told_ahead(void *ctx, const struct entry *e)
{
	char value[ENTRY_TEXT_MAX];

	tell(ctx, 'a', entry_format_value(e->kind, e->key, e->len, value, sizeof(value)));
}

static int told_entry(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
		      int role, char *err, size_t errlen)
{
	char value[ENTRY_TEXT_MAX];

	(void)expires, (void)labels, (void)role;
	entry_format_value(e->kind, e->key, e->len, value, sizeof(value));
	tell(ctx, 'e', value);
	if (strcmp(value, "192.0.2.13") == 0) { /* refused by its callback: a bad line too */
		snprintf(err, errlen, "refused");
		return -1;
	}
	return 0;
}

static void told_bad(void *ctx, unsigned line, const char *text, const char *why)
{
	char n[16];

	(void)text, (void)why;
	snprintf(n, sizeof(n), "%u", line);
	tell(ctx, 'b', n);
}

/* Where "<what><value>" is in t's sequence; -1 if it is not. */
static int told_at(const struct told *t, char what, const char *value)
{
	char want[64];

	snprintf(want, sizeof(want), "%c%.40s", what, value);
	for (unsigned i = 0; i < t->n; i++)
		if (strcmp(t->seq[i], want) == 0)
			return (int)i;
	return -1;
}

/*
 * Lines are read ahead of their entries' callbacks (each entry told to
 * ahead first, FEED_AHEAD lines at most before it is added), yet entries
 * and bad lines, the callback's refusals among them, come in the file's
 * order, with their own line numbers; a call of 5 lines reads no further.
 */
static void read_ahead_keeps_order(void **state)
{
	char text[2048] = "", value[32];
	struct told t = { .n = 0 };
	struct feed_file ff;
	struct feed_spec spec;
	struct feed_counts n;
	char err[256];

	(void)state;
	for (unsigned i = 1; i <= 40; i++) {
		if (i % 10 == 7)
			strcat(text, "not an address\n");
		else
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "192.0.2.%u\n", i);
	}
	FILE *f = fmemopen(text, strlen(text), "r");
	assert_int_equal(feed_spec_parse("plain", &spec, err, sizeof(err)), 0);
	assert_int_equal(feed_file_open(&ff, f, &spec, 0), 0);
	ff.ahead = told_ahead;
	assert_int_equal(feed_file_read(&ff, 5, told_entry, told_bad, &t, &n, err, sizeof(err)), 1);
	assert_int_equal(n.lines, 5);
	assert_int_equal(told_at(&t, 'a', "192.0.2.6"), -1); /* the sixth line is the next call's */
	assert_int_equal(feed_file_read(&ff, SIZE_MAX, told_entry, told_bad, &t, &n, err, sizeof(err)), 0);
	feed_file_close(&ff);
	fclose(f);
	int last = -1;
	for (unsigned i = 1; i <= 40; i++) {
		char line[16];
		snprintf(value, sizeof(value), "192.0.2.%u", i);
		snprintf(line, sizeof(line), "%u", i);
		int at = i % 10 == 7 ? told_at(&t, 'b', line) : told_at(&t, 'e', value);
		assert_true(at > last); /* in the file's order */
		last = at;
		if (i % 10 == 7)
			continue;
		int ahead = told_at(&t, 'a', value);
		assert_true(ahead >= 0 && ahead < at);
		if (i == 13)
			assert_true(told_at(&t, 'b', "13") == at + 1);
	}
	assert_int_equal(t.n, 36 + 36 + 4 + 1); /* each entry told twice, 4 lines bad and one refused */
}

/* The most bytes in use (glibc's count) when a bad line was reported, past a baseline. */
static size_t in_use_baseline, in_use_peak;

static size_t in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void peak_bad(void *ctx, unsigned line, const char *text, const char *why)
{
	size_t now = in_use();

	(void)ctx, (void)line, (void)text, (void)why;
	if (now > in_use_baseline && now - in_use_baseline > in_use_peak)
		in_use_peak = now - in_use_baseline;
}

static int ignore_entry(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
			int role, char *err, size_t errlen)
{
	(void)ctx, (void)e, (void)expires, (void)labels, (void)role, (void)err, (void)errlen;
	return 0;
}

/*
 * A file of lines a MiB long each (all bad) is held a line at a time, as a
 * line-by-line read holds it: reading ahead stops at a long line, and lets
 * go of its buffer once it is reported (where 16 lines ahead held 32 MiB).
 */
static void long_lines_held_one_at_a_time(void **state)
{
	size_t line = 1u << 20, lines = 24;
	char *text = malloc(lines * (line + 16));
	size_t len = 0;
	struct feed_file ff;
	struct feed_spec spec;
	struct feed_counts n;
	char err[256];

	(void)state;
	for (size_t i = 0; i < lines; i++) {
		len += (size_t)sprintf(text + len, "192.0.2.%zu\n", i);
		memset(text + len, 'x', line);
		len += line;
		text[len++] = '\n';
	}
	FILE *f = fmemopen(text, len, "r");
	assert_int_equal(feed_spec_parse("plain", &spec, err, sizeof(err)), 0);
	assert_int_equal(feed_file_open(&ff, f, &spec, 0), 0);
	in_use_baseline = in_use();
	in_use_peak = 0;
	assert_int_equal(feed_file_read(&ff, SIZE_MAX, ignore_entry, peak_bad, NULL, &n, err, sizeof(err)), 0);
	feed_file_close(&ff);
	fclose(f);
	free(text);
	assert_int_equal(n.bad, lines);
	assert_int_equal(n.entries, lines);
	assert_true(in_use_peak < (8u << 20));
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(native_lines_and_bad_ones), cmocka_unit_test(plain_and_netset),
	cmocka_unit_test(spamhaus_drop),             cmocka_unit_test(ipset_save), cmocka_unit_test(ipset_nomatch), cmocka_unit_test(byte_order_mark),
	cmocka_unit_test(csv_columns),               cmocka_unit_test(suricata_dataset),
	cmocka_unit_test(formats_are_named),         cmocka_unit_test(ipset_one_set), cmocka_unit_test(spamhaus_json),
	cmocka_unit_test(zeek_intel),                cmocka_unit_test(iprep), cmocka_unit_test(crowdsec_json), cmocka_unit_test(crowdsec_stream_change), cmocka_unit_test(crowdsec_stream_only),
	cmocka_unit_test(crowdsec_go_durations), cmocka_unit_test(ipset_other_types),
	cmocka_unit_test(mapped_addresses),           cmocka_unit_test(read_in_parts_as_whole), cmocka_unit_test(read_ahead_keeps_order), cmocka_unit_test(long_lines_held_one_at_a_time),
};

TEST_MAIN("feed", tests)
