/* feed.h - entry lists in the formats feeds come in: bloomd's own, plain, netset, DROP, ipset, CSV, Suricata datasets. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_FEED_H
#define BLOOMD_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "entry.h"

/*
 * One entry per line in every format; what a line may hold:
 *
 *   bloomd            entry.h's syntax (addr, net, pair, sig); after it expires= or ttl=,
 *                     and labels: category=WORD severity=N
 *   plain, netset     an address or a network (CIDR); '#' comments (FireHOL's .netset)
 *   drop              Spamhaus DROP: "192.0.2.0/24 ; SBL123", ';' comments
 *   ipset             `ipset save` output: "add SET 192.0.2.1 [options]"; with the option
 *                     nomatch, an exception inside the list (as the kernel has it); timeout N
 *                     expires it N seconds on; with set, only that set's lines. A set created
 *                     of a type that holds more than addresses and networks (hash:ip,port,
 *                     hash:mac, list:set, ...) is skipped whole, its lines counted as skipped
 *   csv:N, csv:NAME   one column of a CSV file, by number (from 1) or by the header's name
 *   suricata-dataset  a Suricata dataset of type ip, ipv4 or ipv6: an address a line,
 *                     or "address,reputation" (datarep); ::ffff:a.b.c.d is IPv4, as Suricata reads it
 *   spamhaus-json     Spamhaus's DROP in JSON (drop_v4.json, drop_v6.json): an object a line
 *                     with "cidr"; the closing {"type":"metadata"} holds nothing
 *   zeek-intel        a Zeek intel file: tab-separated, columns named by its #fields line;
 *                     Intel::ADDR and Intel::SUBNET indicators (other types hold nothing)
 *   iprep             Suricata's IP reputation: "address,category,score"; the category
 *                     becomes the entry's category label, a score of 0 holds nothing
 *   crowdsec-json     CrowdSec's decisions (cscli decisions list -o json, or the LAPI's
 *                     stream): one JSON document; Ip and Range ban decisions, their duration
 *                     their time to live (run out: nothing), their scenario the category label
 *                     (read whole, not by line). A stream document ({"new", "deleted"}) is
 *                     a change to the list's current version (its deleted decisions leave
 *                     it), unless spec's stream_whole says it was asked for with startup=true;
 *                     with spec's stream_only (the LAPI's stream was asked for), anything
 *                     but a stream document is refused: never a version of 0 decisions
 *
 * An address alone is an addr entry, a network a net entry (a /32 or /128
 * network is its address). A UTF-8 byte order mark opening a file is
 * skipped. A line that is blank or only a comment holds
 * nothing; so does a CSV header.
 */
enum feed_format {
	FEED_BLOOMD,
	FEED_PLAIN,
	FEED_NETSET,
	FEED_DROP,
	FEED_IPSET,
	FEED_CSV,
	FEED_SURICATA_DATASET,
	FEED_SPAMHAUS_JSON,
	FEED_ZEEK_INTEL,
	FEED_IPREP,
	FEED_CROWDSEC_JSON,
};

#define FEED_COLUMN_NAME 64

struct feed_spec {
	enum feed_format format;
	unsigned column;                  /* csv: 1-based, or 0 with column_name */
	char column_name[FEED_COLUMN_NAME];
	char set[FEED_COLUMN_NAME];       /* ipset: only this set's lines ("": every set's) */
	/* iprep: category N's short name at [N] ("": iprep-N), NULL for none; the caller owns it */
	const char (*category_names)[ENTRY_CATEGORY_MAX];
	bool stream_whole;                /* crowdsec-json: a stream document is whole (startup=true) */
	bool stream_only;                 /* crowdsec-json: only a stream document answers (the LAPI's stream) */
};

/* "plain", "csv:3", "csv:ip", ...: 0, or -1 with a message. */
int feed_spec_parse(const char *text, struct feed_spec *spec, char *err, size_t errlen);
/* The format's name as written in the configuration ("csv:3"). Returns buf. */
const char *feed_spec_name(const struct feed_spec *spec, char *buf, size_t len);

/* A reader's state across the lines of one file (a CSV file's header). */
struct feed_reader {
	struct feed_spec spec;
	uint64_t now;                     /* for ttl= */
	unsigned line;                    /* lines read so far */
	unsigned column;                  /* csv: the column found, once known; zeek-intel: the indicator's */
	unsigned type_column;             /* zeek-intel: the indicator_type's */
	int header_seen;
	char skipped_sets[1024];          /* ipset: "NAME (TYPE), ..." of the sets skipped (as many as fit) */
	uint64_t skipped;                 /* ipset: their add lines */
};

void feed_reader_init(struct feed_reader *r, const struct feed_spec *spec, uint64_t now);

/* The highest category number Suricata's iprep takes. */
#define FEED_IPREP_CATEGORIES 60

/* What an entry read is to its version. */
#define FEED_HOLD 1      /* an entry it holds */
#define FEED_EXCEPTION 2 /* an exception inside its networks (ipset's nomatch) */
#define FEED_DELETED 3   /* one that leaves the list's current version (a CrowdSec stream's deleted) */

/*
 * One line (without or with its newline). Returns FEED_HOLD with *e,
 * *expires (0: never) and *labels (none: "" and 0) filled, FEED_EXCEPTION
 * the same for an exception, 0 for a line that holds no entry, -1 with a
 * message.
 */
int feed_line(struct feed_reader *r, const char *line, struct entry *e, uint64_t *expires,
	      struct entry_labels *labels, char *err, size_t errlen);

/* What reading a file found. */
struct feed_counts {
	uint64_t lines, entries, bad;
	bool change;      /* the file is a change to the list's current version, not a whole one */
	uint64_t skipped; /* lines of parts it cannot hold, skipped whole (ipset's other set types) */
	char skipped_what[256]; /* which parts: "NAME (TYPE), ..." */
};

/*
 * Each entry read (labels: NULL if it has none; role: FEED_HOLD,
 * FEED_EXCEPTION or FEED_DELETED); a non-zero return makes its line bad,
 * with a message in err.
 */
typedef int (*feed_entry_cb)(void *ctx, const struct entry *e, uint64_t expires,
			     const struct entry_labels *labels, int role, char *err, size_t errlen);
/* Each bad line: its number, its text (printable, as long as it is) and why. */
typedef void (*feed_bad_cb)(void *ctx, unsigned line, const char *text, const char *why);

/*
 * Read every line of f. Returns 0, or -1 with a message when f cannot be
 * read to its end (what was read so far has gone through the callbacks).
 */
int feed_read(FILE *f, const struct feed_spec *spec, uint64_t now, feed_entry_cb on_entry,
	      feed_bad_cb on_bad, void *ctx, struct feed_counts *counts, char *err, size_t errlen);

/*
 * The same a part at a time, for a file read while the loop serves other
 * events: open (-1 without memory), then read at most max_lines lines a
 * call, each call's counts its own (skipped_what: the sets so far), until it returns 0
 * (the end) or -1 (a read error, with a message); then close (f stays the
 * caller's). A crowdsec-json document is read whole by its first call.
 * Lines are read FEED_AHEAD at a time, each parsed before the first goes
 * through the callbacks.
 */
#define FEED_AHEAD 16
struct feed_pending;
struct feed_file {
	FILE *f;
	struct feed_reader r;
	struct feed_pending *pending;     /* FEED_AHEAD lines read ahead (an entry is 2 KiB: not on the stack) */
	/*
	 * NULL, or told of each entry FEED_AHEAD lines at most before on_entry
	 * has it (same ctx), to ask for the memory its add will touch: the
	 * entries go through on_entry, and bad lines through on_bad, in the
	 * file's order all the same.
	 */
	void (*ahead)(void *ctx, const struct entry *e);
};
int feed_file_open(struct feed_file *ff, FILE *f, const struct feed_spec *spec, uint64_t now);
int feed_file_read(struct feed_file *ff, size_t max_lines, feed_entry_cb on_entry, feed_bad_cb on_bad, void *ctx,
		   struct feed_counts *counts, char *err, size_t errlen);
void feed_file_close(struct feed_file *ff);

#endif
