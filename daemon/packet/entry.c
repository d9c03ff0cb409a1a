/* entry.c - the entry syntax shared by lists, commands and events: parse and format. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "entry.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"


static const char *const KIND_NAMES[] = { NULL, "addr", "net", "pair", "sig" };

const char *entry_kind_name(enum entry_kind kind)
{
	return kind >= ENTRY_ADDR && kind <= ENTRY_SIG ? KIND_NAMES[kind] : "?";
}

int entry_kind_parse(const char *name, enum entry_kind *kind)
{
	for (int k = ENTRY_ADDR; k <= ENTRY_SIG; k++)
		if (strcmp(name, KIND_NAMES[k]) == 0) {
			*kind = (enum entry_kind)k;
			return 0;
		}
	return -1;
}

int entry_family(enum entry_kind kind, size_t len)
{
	switch (kind) {
	case ENTRY_ADDR: return len == 4 ? 4 : 6;
	case ENTRY_NET: return len == 5 ? 4 : 6;
	case ENTRY_PAIR: return len == 8 ? 4 : 6;
	default: return 0;
	}
}

/* Copy the next blank-separated word of *text into word; 0 if none. */
static size_t next_word(const char **text, char *word, size_t size)
{
	const char *p = *text;
	size_t n = 0;

	while (isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p)) {
		if (n + 1 < size)
			word[n] = *p;
		n++;
		p++;
	}
	word[n < size ? n : size - 1] = '\0';
	*text = p;
	return n;
}

char *entry_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

int entry_parse_ip(const char *word, uint8_t *out, int *family)
{
	if (inet_pton(AF_INET, word, out) == 1) {
		*family = 4;
		return 4;
	}
	if (inet_pton(AF_INET6, word, out) == 1) {
		*family = 6;
		return 16;
	}
	return -1;
}

int entry_parse_cidr(const char *text, uint8_t key[ENTRY_CIDR_MAX], char *err, size_t errlen)
{
	char addr[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(text, '/');
	size_t alen = slash ? (size_t)(slash - text) : strlen(text);
	int family, len = -1;
	char *end;

	if (alen < sizeof(addr)) {
		memcpy(addr, text, alen);
		addr[alen] = '\0';
		len = entry_parse_ip(addr, key + 1, &family);
	}
	if (len < 0) {
		error_set(err, errlen, "'%.*s' is not an IPv4 or IPv6 address", (int)(alen < 64 ? alen : 64), text);
		return -1;
	}
	long plen = len * 8;
	if (slash) {
		plen = strtol(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end != '\0' || plen > len * 8) {
			error_set(err, errlen, "prefix length must be 0 to %d, got '%s'", len * 8, slash + 1);
			return -1;
		}
	}
	key[0] = (uint8_t)plen;
	for (int bit = (int)plen; bit < len * 8; bit++) /* keep the network part only */
		key[1 + bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
	return 1 + len;
}

static int parse_net(const char *word, struct entry *e, char *err, size_t errlen)
{
	if (strchr(word, '/') == NULL) {
		error_set(err, errlen, "net needs ADDRESS/LENGTH, got '%s'", word);
		return -1;
	}
	int len = entry_parse_cidr(word, e->key, err, errlen);
	if (len < 0)
		return -1;
	e->len = (uint16_t)len;
	return 0;
}

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int parse_sig_hex(const char *p, struct entry *e, char *err, size_t errlen)
{
	size_t n = 0;

	for (; *p && !isspace((unsigned char)*p); p += 2) {
		int hi = hex_value((unsigned char)p[0]), lo = p[1] ? hex_value((unsigned char)p[1]) : -1;
		if (hi < 0 || lo < 0) {
			error_set(err, errlen, "bad hex digit in signature near '%.8s'", p);
			return -1;
		}
		if (n == ENTRY_MAX_SIG) {
			error_set(err, errlen, "signature longer than %d bytes", ENTRY_MAX_SIG);
			return -1;
		}
		e->key[n++] = (uint8_t)(hi << 4 | lo);
	}
	e->len = (uint16_t)n;
	return (int)n;
}

/* A quoted signature with C escapes; *p is past the opening quote, left past the closing one. */
static int parse_sig_quoted(const char **pp, struct entry *e, char *err, size_t errlen)
{
	const char *p = *pp;
	size_t n = 0;

	for (;; p++) {
		int c = (unsigned char)*p;
		if (c == '\0') {
			error_set(err, errlen, "signature has no closing quote");
			return -1;
		}
		if (c == '"')
			break;
		if (c == '\\') {
			switch (*++p) {
			case '\\': c = '\\'; break;
			case '"': c = '"'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case '0': c = 0; break;
			case 'x': {
				int hi = hex_value((unsigned char)p[1]), lo = hi >= 0 ? hex_value((unsigned char)p[2]) : -1;
				if (hi < 0 || lo < 0) {
					error_set(err, errlen, "\\x needs two hex digits");
					return -1;
				}
				c = hi << 4 | lo;
				p += 2;
				break;
			}
			default:
				error_set(err, errlen, "unknown escape '\\%c' in signature", *p ? *p : ' ');
				return -1;
			}
		}
		if (n == ENTRY_MAX_SIG) {
			error_set(err, errlen, "signature longer than %d bytes", ENTRY_MAX_SIG);
			return -1;
		}
		e->key[n++] = (uint8_t)c;
	}
	*pp = p + 1;
	e->len = (uint16_t)n;
	return (int)n;
}

static int parse_sig(const char **p, struct entry *e, char *err, size_t errlen)
{
	int n;

	while (isspace((unsigned char)**p))
		(*p)++;
	if (**p == '"') {
		(*p)++;
		n = parse_sig_quoted(p, e, err, errlen);
	} else if (strncasecmp(*p, "hex:", 4) == 0) {
		*p += 4;
		n = parse_sig_hex(*p, e, err, errlen);
		while (**p && !isspace((unsigned char)**p))
			(*p)++;
	} else {
		error_set(err, errlen, "sig needs hex:DIGITS or a \"quoted string\"");
		return -1;
	}
	if (n == 0) {
		error_set(err, errlen, "empty signature");
		return -1;
	}
	return n < 0 ? -1 : 0;
}

/* Blank or '#' comment to the end? */
static bool rest_is_empty(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return *p == '\0' || *p == '#';
}

/* The entry at the start of text; *rest: what follows it. 1, 0 (blank or comment) or -1. */
static int parse_entry_at(const char *text, struct entry *e, const char **rest, char *err, size_t errlen)
{
	char kind[16], a[INET6_ADDRSTRLEN + 8], b[INET6_ADDRSTRLEN + 8];
	const char *p = text;
	int fa, fb, la, lb;

	if (rest_is_empty(p))
		return 0;
	next_word(&p, kind, sizeof(kind));
	if (entry_kind_parse(kind, &e->kind) < 0) {
		error_set(err, errlen, "unknown entry kind '%s' (addr, net, pair or sig)", kind);
		return -1;
	}
	switch (e->kind) {
	case ENTRY_SIG:
		if (parse_sig(&p, e, err, errlen) < 0)
			return -1;
		break;
	case ENTRY_ADDR:
		if (next_word(&p, a, sizeof(a)) == 0 || (la = entry_parse_ip(a, e->key, &fa)) < 0) {
			error_set(err, errlen, "addr needs an IPv4 or IPv6 address, got '%s'", a);
			return -1;
		}
		e->len = (uint16_t)la;
		break;
	case ENTRY_NET:
		if (next_word(&p, a, sizeof(a)) == 0) {
			error_set(err, errlen, "net needs ADDRESS/LENGTH");
			return -1;
		}
		if (parse_net(a, e, err, errlen) < 0)
			return -1;
		break;
	case ENTRY_PAIR:
		next_word(&p, a, sizeof(a));
		next_word(&p, b, sizeof(b));
		if ((la = entry_parse_ip(a, e->key, &fa)) < 0 || (lb = entry_parse_ip(b, e->key + la, &fb)) < 0) {
			error_set(err, errlen, "pair needs two addresses, source then destination");
			return -1;
		}
		if (fa != fb) {
			error_set(err, errlen, "pair mixes IPv%d and IPv%d addresses", fa, fb);
			return -1;
		}
		e->len = (uint16_t)(la + lb);
		break;
	}
	*rest = p;
	return 1;
}

int entry_parse(const char *text, struct entry *e, char *err, size_t errlen)
{
	const char *rest;
	int rc = parse_entry_at(text, e, &rest, err, errlen);

	if (rc == 1 && !rest_is_empty(rest)) {
		error_set(err, errlen, "unexpected text after the entry: '%.20s'", rest);
		return -1;
	}
	return rc;
}

int entry_parse_address(const char *text, struct entry *e)
{
	char word[INET6_ADDRSTRLEN + 8];
	const char *p = text;
	int family, len;

	if (next_word(&p, word, sizeof(word)) >= sizeof(word) || !rest_is_empty(p))
		return -1;
	if (strchr(word, '/')) {
		e->kind = ENTRY_NET;
		return parse_net(word, e, NULL, 0);
	}
	if ((len = entry_parse_ip(word, e->key, &family)) < 0)
		return -1;
	e->kind = ENTRY_ADDR;
	e->len = (uint16_t)len;
	return 0;
}

bool entry_category_valid(const char *category)
{
	size_t n = strlen(category);

	if (n == 0 || n >= ENTRY_CATEGORY_MAX)
		return false;
	for (const char *q = category; *q; q++)
		if (!isalnum((unsigned char)*q) && !strchr("._-:/", *q))
			return false;
	return true;
}

bool entry_seconds(const char *value, uint64_t *out)
{
	static const struct {
		char unit;
		unsigned seconds;
	} UNITS[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	const char *p = value;
	uint64_t total = 0;
	size_t next = 0; /* units go from days down to seconds, each at most once */

	while (*p && isdigit((unsigned char)*p) && total <= UINT32_MAX) {
		char *end;
		uint64_t n = strtoull(p, &end, 10);
		size_t u = next;
		while (u < 4 && *end != UNITS[u].unit)
			u++;
		if (*end == '\0' && p == value)
			u = 3; /* a bare number: seconds */
		else if (u == 4)
			break;
		total += n > UINT32_MAX ? (uint64_t)UINT32_MAX + 1 : n * UNITS[u].seconds;
		next = u + 1;
		p = *end ? end + 1 : end;
	}
	*out = total;
	return *p == '\0' && p != value && total <= UINT32_MAX;
}

/* One option word after an entry: expires=, ttl= or (with labels) category=, severity=. -1 if it is none. */
static int parse_option(const char *word, uint64_t now, uint64_t *expires, struct entry_labels *labels)
{
	bool ttl = strncmp(word, "ttl=", 4) == 0, at = strncmp(word, "expires=", 8) == 0;
	char *end;

	if (labels && strncmp(word, "category=", 9) == 0) {
		const char *c = word + 9;
		if (!entry_category_valid(c))
			return -1;
		memcpy(labels->category, c, strlen(c) + 1);
		return 0;
	}
	if (labels && strncmp(word, "severity=", 9) == 0) {
		unsigned long v = isdigit((unsigned char)word[9]) ? strtoul(word + 9, &end, 10) : 0;
		if (v < 1 || v > 255 || *end != '\0')
			return -1;
		labels->severity = (unsigned)v;
		return 0;
	}
	uint64_t v = 0;
	if (ttl && (!entry_seconds(word + 4, &v) || v == 0 || v > ENTRY_TTL_MAX))
		return -1;
	if (at && (!isdigit((unsigned char)word[8]) || (v = strtoull(word + 8, &end, 10)) == 0 || *end != '\0' ||
		   v > (1ULL << 40)))
		return -1;
	if (!ttl && !at)
		return -1;
	*expires = ttl ? now + v : v;
	return 0;
}

int entry_parse_labelled(const char *text, struct entry *e, uint64_t now, uint64_t *expires,
			 struct entry_labels *labels, char *err, size_t errlen)
{
	const char *p;
	char word[96];
	int rc = parse_entry_at(text, e, &p, err, errlen);

	*expires = 0;
	if (labels)
		*labels = (struct entry_labels){ 0 };
	while (rc == 1 && !rest_is_empty(p)) {
		const char *start = p;
		next_word(&p, word, sizeof(word));
		if (parse_option(word, now, expires, labels) < 0) {
			while (isspace((unsigned char)*start))
				start++;
			error_set(err, errlen, "unexpected text after the entry: '%.40s' (%s may follow)", start,
				  labels ? "expires=UNIXTIME, ttl=TIME, category=WORD or severity=1..255"
					 : "expires=UNIXTIME or ttl=TIME");
			return -1;
		}
	}
	return rc;
}

int entry_parse_expiry(const char *text, struct entry *e, uint64_t now, uint64_t *expires, char *err,
		       size_t errlen)
{
	return entry_parse_labelled(text, e, now, expires, NULL, err, errlen);
}

/* The dotted quad by hand: glibc's inet_ntop goes through sprintf, a fifth of an event's cost. */
static void format_ipv4(const uint8_t *addr, char *out)
{
	for (int i = 0; i < 4; i++) {
		unsigned v = addr[i];
		if (v >= 100)
			*out++ = (char)('0' + v / 100);
		if (v >= 10)
			*out++ = (char)('0' + v / 10 % 10);
		*out++ = (char)('0' + v % 10);
		*out++ = i < 3 ? '.' : '\0';
	}
}

const char *entry_format_addr(const uint8_t *addr, int family, char *buf, size_t len)
{
	if (family == 4 && len >= INET_ADDRSTRLEN)
		format_ipv4(addr, buf);
	else if (inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

const char *entry_format_value(enum entry_kind kind, const uint8_t *key, size_t len, char *buf,
			       size_t buflen)
{
	char a[INET6_ADDRSTRLEN];
	int family = entry_family(kind, len);
	size_t alen = family == 4 ? 4 : 16;

	switch (kind) {
	case ENTRY_ADDR:
		entry_format_addr(key, family, buf, buflen);
		break;
	case ENTRY_NET:
		snprintf(buf, buflen, "%s/%u", entry_format_addr(key + 1, family, a, sizeof(a)), key[0]);
		break;
	case ENTRY_PAIR: {
		size_t n = strlen(entry_format_addr(key, family, buf, buflen));
		if (n + 1 < buflen) {
			buf[n] = ' ';
			entry_format_addr(key + alen, family, buf + n + 1, buflen - n - 1);
		}
		break;
	}
	case ENTRY_SIG: {
		static const char digits[] = "0123456789abcdef";
		size_t n = 0;
		if (buflen < 5)
			break;
		memcpy(buf, "hex:", 4);
		n = 4;
		for (size_t i = 0; i < len && n + 2 < buflen; i++) {
			buf[n++] = digits[key[i] >> 4];
			buf[n++] = digits[key[i] & 15];
		}
		buf[n] = '\0';
		break;
	}
	default:
		snprintf(buf, buflen, "?");
	}
	return buf;
}

bool entry_net_holds(const uint8_t *key, const uint8_t *addr, size_t alen)
{
	unsigned bits = key[0], whole = bits / 8, rest = bits % 8;

	if (whole > alen || memcmp(key + 1, addr, whole) != 0)
		return false;
	return rest == 0 || ((key[1 + whole] ^ addr[whole]) & (0xff << (8 - rest))) == 0;
}

int entry_run_add(struct entry_run *run, const struct entry *e)
{
	if (run->len + 3 + e->len > run->cap) {
		size_t cap = run->cap ? 2 * run->cap : 65536; /* either is room for the longest entry */
		uint8_t *grown = realloc(run->bytes, cap);
		if (grown == NULL)
			return -1;
		run->bytes = grown;
		run->cap = cap;
	}
	run->bytes[run->len] = (uint8_t)e->kind;
	memcpy(run->bytes + run->len + 1, &e->len, 2);
	memcpy(run->bytes + run->len + 3, e->key, e->len);
	run->len += 3 + e->len;
	return 0;
}

bool entry_run_next(const struct entry_run *run, size_t *at, struct entry *e)
{
	if (*at >= run->len)
		return false;
	e->kind = (enum entry_kind)run->bytes[*at];
	memcpy(&e->len, run->bytes + *at + 1, 2);
	memcpy(e->key, run->bytes + *at + 3, e->len);
	*at += 3 + e->len;
	return true;
}

void entry_run_clear(struct entry_run *run)
{
	run->len = 0;
}

void entry_run_free(struct entry_run *run)
{
	free(run->bytes);
	*run = (struct entry_run){ .bytes = NULL };
}
