/* entry.h - the entry syntax shared by lists, commands and events: parse and format. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ENTRY_H
#define BLOOMD_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One entry per line; '#' starts a comment (outside quotes):
 *
 *   addr 192.0.2.1                  source or destination is this address
 *   net  198.51.100.0/24            source or destination inside the prefix
 *   pair 192.0.2.1 203.0.113.9      directed: source, then destination
 *   sig  hex:474554202f6574632f706173737764
 *   sig  "GET /etc/passwd"          C escapes: \\ \" \n \r \t \0 \xHH
 *
 * An entry's key is the bytes the filter and the store see:
 *   addr  the address (4 or 16 bytes)
 *   net   prefix length, then the network address (5 or 17 bytes)
 *   pair  source then destination (8 or 32 bytes)
 *   sig   the signature's bytes
 */
enum entry_kind {
	ENTRY_ADDR = 1,
	ENTRY_NET = 2,
	ENTRY_PAIR = 3,
	ENTRY_SIG = 4,
};

#define ENTRY_MAX_SIG 2048
#define ENTRY_MAX_KEY ENTRY_MAX_SIG
/* Longest canonical text: "sig hex:" and two digits a byte. */
#define ENTRY_TEXT_MAX (8 + 2 * ENTRY_MAX_SIG + 1)

struct entry {
	enum entry_kind kind;
	uint16_t len;
	uint8_t key[ENTRY_MAX_KEY];
};

/*
 * Parse one entry from text (a whole line; comments and surrounding blanks
 * allowed). Returns 1 with *e filled, 0 for a blank or comment-only line, -1
 * with a message in err.
 */
int entry_parse(const char *text, struct entry *e, char *err, size_t errlen);

/*
 * An address or ADDRESS/LENGTH alone (blanks and a '#' comment around it
 * allowed), as "addr TEXT" or "net TEXT" would parse: a feed's column,
 * read without building that line. 0 with *e filled, or -1.
 */
int entry_parse_address(const char *text, struct entry *e);

/*
 * The same, where the entry may be followed by when it expires: expires=N
 * (Unix seconds, as list writes it) or ttl=TIME (from now: 90, 90s, 15m,
 * 4h, 7d, 1h30m; at most ENTRY_TTL_MAX). *expires is 0 when neither is given.
 */
int entry_parse_expiry(const char *text, struct entry *e, uint64_t now, uint64_t *expires, char *err,
		       size_t errlen);

#define ENTRY_TTL_MAX (10ULL * 365 * 86400)

/*
 * A time as entry lists, commands and the configuration write one (90, 90s,
 * 15m, 1h, 1d, 1h30m: units from days down, each once) in seconds, at most
 * 2^32 - 1; false if it is not one.
 */
bool entry_seconds(const char *value, uint64_t *out);

/* Labels an entry of a list may carry: category=WORD severity=N ("" and 0 when not given). */
#define ENTRY_CATEGORY_MAX 64
struct entry_labels {
	char category[ENTRY_CATEGORY_MAX]; /* letters, digits and . _ - : / */
	unsigned severity;                 /* 1 (highest) to 255 */
};

/* Whether a category label is one: 1 to 63 letters, digits and . _ - : / */
bool entry_category_valid(const char *category);

/* entry_parse_expiry, with labels after the entry too (in any order with expires= or ttl=). */
int entry_parse_labelled(const char *text, struct entry *e, uint64_t now, uint64_t *expires,
			 struct entry_labels *labels, char *err, size_t errlen);

/* The kind's name ("addr", ...), and the reverse (-1 if unknown). */
const char *entry_kind_name(enum entry_kind kind);
int entry_kind_parse(const char *name, enum entry_kind *kind);

/* An address as inet_ntop writes it (family 4 or 6); "?" if it does not fit. Returns buf. */
const char *entry_format_addr(const uint8_t *addr, int family, char *buf, size_t len);

/*
 * The canonical value of (kind, key) — inet_ntop addresses, the network of a
 * net, lowercase "hex:" for every sig — without the kind: "192.0.2.1 203.0.113.9".
 * Returns buf.
 */
const char *entry_format_value(enum entry_kind kind, const uint8_t *key, size_t len, char *buf,
			       size_t buflen);

/* s with its blanks cut at both ends: its end in place, the start returned. */
char *entry_trim(char *s);

/* An IPv4 or IPv6 address into out (16 bytes of room), *family 4 or 6: its length (4 or 16), or -1. */
int entry_parse_ip(const char *text, uint8_t *out, int *family);

/*
 * "ADDRESS" or "ADDRESS/LENGTH", IPv4 or IPv6, as a net entry's key: key[0]
 * the length (the address's whole length when none is given), then the
 * network, its host bits cleared. The key's length (5 or 17), or -1 with a
 * message. The one reader of an address or net in bloomd, for every caller.
 */
#define ENTRY_CIDR_MAX 17
int entry_parse_cidr(const char *text, uint8_t key[ENTRY_CIDR_MAX], char *err, size_t errlen);

/* Whether addr (alen bytes) lies in a net key's prefix (key: length, then the network). */
bool entry_net_holds(const uint8_t *key, const uint8_t *addr, size_t alen);

/* An address or net held apart from the entries ([action] protect, threshold.config's ip): its key and length. */
struct entry_cidr {
	uint8_t len;                 /* 5 (IPv4) or 17 (IPv6) */
	uint8_t key[ENTRY_CIDR_MAX]; /* as a net entry's */
};
/* Whether addr of family (4 or 6) lies in c. */
static inline bool entry_cidr_holds(const struct entry_cidr *c, const uint8_t *addr, int family)
{
	size_t alen = family == 4 ? 4 : 16;

	return c->len == 1 + alen && entry_net_holds(c->key, addr, alen);
}

/* Address family (4 or 6) of an addr, net or pair key; 0 for a sig. */
int entry_family(enum entry_kind kind, size_t len);


/*
 * Entries packed one after another (kind, length in 2 bytes, key), for what
 * a walk picks and changes only once it is done (a walk's callback must not
 * change the matcher), or what waits to be applied later.
 */
struct entry_run {
	uint8_t *bytes;
	size_t len, cap;
};

/* e added at the run's end: 0, or -1 without memory (the run as it was). */
int entry_run_add(struct entry_run *run, const struct entry *e);
/* The entry at *at into e, and *at past it: false at the run's end. */
bool entry_run_next(const struct entry_run *run, size_t *at, struct entry *e);
/* Emptied, its memory kept / freed. */
void entry_run_clear(struct entry_run *run);
void entry_run_free(struct entry_run *run);

#endif
