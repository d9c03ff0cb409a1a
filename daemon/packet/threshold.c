/* threshold.c - Suricata's threshold.config: threshold and suppress rules for alerts. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "threshold.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "entry.h"
#include "hash.h"
#include "recent.h"

#define TRACKED_MAX 65536          /* what rules track (addresses, pairs, rules), counted at once: about 4 MiB */
#define MAX_NETS 64

enum rule_kind { RULE_SUPPRESS, RULE_THRESHOLD };
enum track { TRACK_NONE, TRACK_SRC, TRACK_DST, TRACK_EITHER, TRACK_BOTH, TRACK_RULE };
enum type { TYPE_LIMIT, TYPE_THRESHOLD, TYPE_BOTH };

struct rule {
	enum rule_kind kind;
	uint32_t gid, sid;
	enum track track;
	enum type type;
	unsigned count, seconds;
	struct entry_cidr nets[MAX_NETS];
	unsigned nnets;
};

struct slot {
	time_t start;              /* the period's first alert */
	unsigned count;            /* seen in the period */
};

struct thresholds {
	struct rule *rules;
	size_t nrules, cap;
	struct hash_key secret;
	struct recent *slots;      /* struct slot, by the hash of a rule and what it tracks */
};

/* ---- reading ---- */

struct reader {
	const char *path;
	unsigned line, problems;
	threshold_error_cb on_error;
	void *ctx;
};

static void problem(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(struct reader *r, const char *fmt, ...)
{
	char text[400], msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s:%u: %s", r->path, r->line, text);
	r->on_error(r->ctx, msg);
	r->problems++;
}

static int parse_net(const char *text, struct entry_cidr *n)
{
	int len = entry_parse_cidr(text, n->key, NULL, 0);

	n->len = len < 0 ? 0 : (uint8_t)len;
	return len < 0 ? -1 : 0;
}

/* "ip A", "ip [A, B]": the networks into r. */
static int parse_ips(struct reader *rd, char *value, struct rule *r)
{
	char *p = value, *tok, *save = NULL;

	if (*p == '[') {
		size_t n = strlen(p);
		if (p[n - 1] != ']') {
			problem(rd, "ip: a list ends with ']'");
			return -1;
		}
		p[n - 1] = '\0';
		p++;
	}
	for (tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		tok = entry_trim(tok);
		if (r->nnets == MAX_NETS) {
			problem(rd, "ip: at most %d addresses or networks", MAX_NETS);
			return -1;
		}
		if (parse_net(tok, &r->nets[r->nnets++]) < 0) {
			problem(rd, "ip: '%s' is not an address or a network (variables such as $HOME_NET are not read)", tok);
			return -1;
		}
	}
	return 0;
}

static int parse_count(struct reader *rd, const char *key, const char *value, unsigned long max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(value, &end, 10);

	if (!isdigit((unsigned char)*value) || *end != '\0' || errno || v > max) {
		problem(rd, "%s: expected a whole number up to %lu, got '%s'", key, max, value);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int find_word(const char *value, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(value, words[i]) == 0)
			return i;
	return -1;
}

/* One "key value" option of a rule. */
static int option(struct reader *rd, struct rule *r, char *key, char *value)
{
	static const char *const tracks[] = { "", "by_src", "by_dst", "by_either", "by_both", "by_rule" };
	static const char *const types[] = { "limit", "threshold", "both" };
	unsigned v;

	if (strcmp(key, "gen_id") == 0 || strcmp(key, "sig_id") == 0) {
		if (parse_count(rd, key, value, UINT32_MAX, &v) < 0)
			return -1;
		*(key[0] == 'g' ? &r->gid : &r->sid) = v;
		return 0;
	}
	if (strcmp(key, "track") == 0) {
		int t = find_word(value, tracks, 6);
		bool fits = r->kind == RULE_SUPPRESS ? t == TRACK_SRC || t == TRACK_DST || t == TRACK_EITHER
						     : t > 0 && t != TRACK_EITHER;
		if (!fits) {
			if (r->kind == RULE_SUPPRESS)
				problem(rd, "track: a suppress tracks by_src, by_dst or by_either, got '%s'", value);
			else
				problem(rd, "track: a threshold tracks by_src, by_dst, by_both or by_rule, got '%s'", value);
			return -1;
		}
		r->track = (enum track)t;
		return 0;
	}
	if (r->kind == RULE_THRESHOLD && strcmp(key, "type") == 0) {
		int t = find_word(value, types, 3);
		if (t < 0) {
			problem(rd, "type: expected limit, threshold or both, got '%s'", value);
			return -1;
		}
		r->type = (enum type)t;
		return 0;
	}
	if (r->kind == RULE_THRESHOLD && strcmp(key, "count") == 0)
		return parse_count(rd, key, value, 1000000000, &r->count);
	if (r->kind == RULE_THRESHOLD && strcmp(key, "seconds") == 0)
		return parse_count(rd, key, value, 86400 * 365, &r->seconds);
	if (r->kind == RULE_SUPPRESS && strcmp(key, "ip") == 0)
		return parse_ips(rd, value, r);
	problem(rd, "unknown option '%s' for a %s rule", key, r->kind == RULE_SUPPRESS ? "suppress" : "threshold");
	return -1;
}

/* A rule's options, "key value" separated by commas (an ip list's commas inside its brackets). */
static int parse_options(struct reader *rd, struct rule *r, char *p)
{
	while (*(p = entry_trim(p))) {
		char *comma = p, *space;
		int depth = 0;
		for (; *comma && (depth || *comma != ','); comma++)
			depth += *comma == '[' ? 1 : *comma == ']' ? -1 : 0;
		char *next = *comma ? comma + 1 : comma;
		*comma = '\0';
		if ((space = strpbrk(p, " \t")) == NULL) {
			problem(rd, "'%s' has no value", entry_trim(p));
			return -1;
		}
		*space = '\0';
		if (option(rd, r, entry_trim(p), entry_trim(space + 1)) < 0)
			return -1;
		p = next;
	}
	return 0;
}

static int parse_rule(struct reader *rd, char *line, struct rule *r)
{
	char *p = entry_trim(line), *word = p;

	while (*p && !isspace((unsigned char)*p))
		p++;
	if (*p)
		*p++ = '\0';
	memset(r, 0, sizeof(*r));
	if (strcmp(word, "suppress") == 0) {
		r->kind = RULE_SUPPRESS;
	} else if (strcmp(word, "threshold") == 0 || strcmp(word, "event_filter") == 0) {
		r->kind = RULE_THRESHOLD;
		r->type = (enum type)-1;
	} else {
		problem(rd, "unknown rule '%s' (threshold, event_filter or suppress; rate_filter is not read)", word);
		return -1;
	}
	if (parse_options(rd, r, p) < 0)
		return -1;
	if (r->kind == RULE_THRESHOLD && ((int)r->type < 0 || r->track == TRACK_NONE || r->count == 0 || r->seconds == 0)) {
		problem(rd, "a threshold needs type, track, count (1 or more) and seconds (1 or more)");
		return -1;
	}
	if (r->kind == RULE_SUPPRESS && (r->track == TRACK_NONE) != (r->nnets == 0)) {
		problem(rd, "a suppress gives track and ip together, or neither");
		return -1;
	}
	return 0;
}

struct thresholds *thresholds_load(const char *path, threshold_error_cb on_error, void *ctx)
{
	struct reader rd = { .path = path, .on_error = on_error, .ctx = ctx };
	struct thresholds *t = calloc(1, sizeof(*t));
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;

	if (t == NULL || f == NULL || hash_key_random(&t->secret, HASH_XXH3) < 0 ||
	    (t->slots = recent_new(TRACKED_MAX, sizeof(struct slot))) == NULL) {
		char msg[600];
		snprintf(msg, sizeof(msg), "%s: %s", path, f ? "out of memory" : strerror(errno));
		on_error(ctx, msg);
		goto fail;
	}
	while (getline(&line, &cap, f) >= 0) {
		rd.line++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		if (*entry_trim(line) == '\0')
			continue;
		if (array_grow((void **)&t->rules, &t->cap, t->nrules + 1, sizeof(*t->rules)) < 0) {
			problem(&rd, "out of memory");
			break;
		}
		if (parse_rule(&rd, line, &t->rules[t->nrules]) == 0)
			t->nrules++;
	}
	free(line);
	fclose(f);
	f = NULL;
	if (rd.problems == 0)
		return t;
fail:
	if (f)
		fclose(f);
	thresholds_free(t);
	return NULL;
}

void thresholds_free(struct thresholds *t)
{
	if (t == NULL)
		return;
	free(t->rules);
	recent_free(t->slots);
	free(t);
}

uint64_t thresholds_evicted(const struct thresholds *t)
{
	return recent_evicted(t->slots);
}

unsigned thresholds_rules(const struct thresholds *t)
{
	return (unsigned)t->nrules;
}

/* ---- deciding ---- */

static bool covers(const struct rule *r, uint32_t gid, uint32_t sid)
{
	return (r->gid == 0 || r->gid == gid) && (r->sid == 0 || r->sid == sid);
}

static bool in_nets(const struct rule *r, const uint8_t *addr, int family)
{
	for (unsigned i = 0; i < r->nnets; i++)
		if (entry_cidr_holds(&r->nets[i], addr, family))
			return true;
	return false;
}

static bool suppressed(const struct rule *r, const struct packet_view *v)
{
	if (r->track == TRACK_NONE)
		return true;
	if (v->family == 0)
		return false;
	bool src = in_nets(r, v->src, v->family), dst = in_nets(r, v->dst, v->family);
	return r->track == TRACK_SRC ? src : r->track == TRACK_DST ? dst : src || dst;
}

/* The slot counting rule i's alerts for what it tracks in v; NULL without memory. */
static struct slot *slot_for(struct thresholds *t, size_t i, const struct packet_view *v)
{
	const struct rule *r = &t->rules[i];
	uint8_t key[8 + 1 + 32] = { 0 };
	size_t alen = v->family == 6 ? 16 : v->family == 4 ? 4 : 0, n = 8;

	memcpy(key, &i, sizeof(i) < 8 ? sizeof(i) : 8);
	key[n++] = v->family;
	if (alen && (r->track == TRACK_SRC || r->track == TRACK_BOTH))
		memcpy(key + n, v->src, alen), n += alen;
	if (alen && (r->track == TRACK_DST || r->track == TRACK_BOTH))
		memcpy(key + n, v->dst, alen), n += alen;
	bool fresh;
	return recent_use(t->slots, hash_bytes(&t->secret, key, n).lo, &fresh); /* a new one is zeroed */
}

static bool counted(const struct rule *r, struct slot *s, time_t now)
{
	if (s == NULL)
		return true; /* without memory: an alert more, never one missed */
	if (s->count == 0 || now - s->start >= (time_t)r->seconds || now < s->start) {
		s->start = now;
		s->count = 0;
	}
	s->count++;
	switch (r->type) {
	case TYPE_LIMIT:
		return s->count <= r->count;
	case TYPE_THRESHOLD:
		if (s->count < r->count)
			return false;
		s->count = 0; /* every count-th */
		s->start = now;
		return true;
	case TYPE_BOTH:
		return s->count == r->count;
	}
	return true;
}

bool thresholds_pass(struct thresholds *t, uint32_t gid, uint32_t sid, const struct packet_view *v,
		     time_t now)
{
	size_t general = t->nrules;

	for (size_t i = 0; i < t->nrules; i++)
		if (t->rules[i].kind == RULE_SUPPRESS && covers(&t->rules[i], gid, sid) && suppressed(&t->rules[i], v))
			return false;
	for (size_t i = 0; i < t->nrules; i++) {
		const struct rule *r = &t->rules[i];
		if (r->kind != RULE_THRESHOLD || !covers(r, gid, sid))
			continue;
		if (r->sid == sid)
			return counted(r, slot_for(t, i, v), now);
		if (general == t->nrules)
			general = i;
	}
	return general == t->nrules || counted(&t->rules[general], slot_for(t, general, v), now);
}
