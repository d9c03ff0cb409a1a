/* feed_json.c - the feeds published as JSON: Spamhaus's DROP (an object a line) and CrowdSec's decisions (one document). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "feed_internal.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"

/* Spamhaus's DROP in JSON: {"cidr":"1.10.16.0/20","sblid":"SBL256894","rir":"apnic"} a line. */
int feed_spamhaus_json_line(const char *line, struct entry *e, char *err, size_t errlen)
{
	json_error_t why;
	json_t *o;

	if (line[strspn(line, " \t\r\n")] == '\0')
		return 0;
	if ((o = json_loads(line, JSON_DISABLE_EOF_CHECK, &why)) == NULL || !json_is_object(o)) {
		error_set(err, errlen, "not a JSON object%s%s", o ? "" : ": ", o ? "" : why.text);
		json_decref(o);
		return -1;
	}
	const char *cidr = json_string_value(json_object_get(o, "cidr"));
	int rc = cidr ? (feed_address(cidr, e, err, errlen) < 0 ? -1 : 1) : 0;
	if (cidr == NULL && json_object_get(o, "type") == NULL) { /* the metadata line has a type, and no cidr */
		error_set(err, errlen, "an object with no \"cidr\"");
		rc = -1;
	}
	json_decref(o);
	return rc;
}

/* Go's largest duration, 2^63-1 ns, in seconds: a longer one is refused, as time.ParseDuration does. */
#define GO_DURATION_MAX 9223372036.854775807

/* One unit of Go's duration at *p, its seconds into *seconds and p moved past it; false if none is. */
static bool go_unit(const char **p, double *seconds)
{
	static const struct {
		const char *unit;
		double seconds;
	} UNITS[] = { { "ns", 1e-9 }, { "us", 1e-6 }, { "\u00b5s", 1e-6 }, { "\u03bcs", 1e-6 }, { "ms", 1e-3 },
		      { "s", 1 },     { "m", 60 },    { "h", 3600 } };
	size_t len = strcspn(*p, "0123456789.");

	for (size_t u = 0; u < sizeof(UNITS) / sizeof(UNITS[0]); u++)
		if (len > 0 && strlen(UNITS[u].unit) == len && strncmp(*p, UNITS[u].unit, len) == 0) {
			*seconds = UNITS[u].seconds;
			*p += len;
			return true;
		}
	return false;
}

/*
 * Go's duration, as time.ParseDuration reads it (CrowdSec writes it so):
 * [-+]?([0-9]*(\.[0-9]*)?UNIT)+ or "0", e.g. "3h59m51.5s", "500ms", "-5m2s"
 * for one past. In seconds, into *out; -1 if it is not one (1e3s, 0x10s,
 * inf, a unit missing or unknown).
 */
static int go_duration(const char *p, double *out)
{
	double total = 0, sign = *p == '-' ? -1 : 1;

	p += *p == '-' || *p == '+';
	if (strcmp(p, "0") == 0)
		return *out = 0, 0;
	if (*p == '\0')
		return -1;
	while (*p) {
		double whole = 0, fraction = 0, scale = 1, unit;
		const char *start = p;
		for (; isdigit((unsigned char)*p); p++)
			whole = whole * 10 + (*p - '0');
		bool digits = p != start;
		if (*p == '.')
			for (p++; isdigit((unsigned char)*p); p++, digits = true)
				fraction += (*p - '0') * (scale /= 10);
		if (!digits || !go_unit(&p, &unit))
			return -1;
		total += (whole + fraction) * unit;
		if (total > GO_DURATION_MAX)
			return -1;
	}
	*out = sign * total;
	return 0;
}

/* A decision's address: 1 for an Ip or Range ban, 0 for another (a country, a captcha), -1 with a message. */
static int decision_entry(const json_t *d, struct entry *e, char *err, size_t errlen)
{
	const char *scope = json_string_value(json_object_get(d, "scope"));
	const char *value = json_string_value(json_object_get(d, "value"));
	const char *type = json_string_value(json_object_get(d, "type"));

	if (scope == NULL || value == NULL) {
		error_set(err, errlen, "a decision with no scope or value");
		return -1;
	}
	if ((strcasecmp(scope, "ip") != 0 && strcasecmp(scope, "range") != 0) || (type && strcmp(type, "ban") != 0))
		return 0; /* a country, an AS; a captcha: not an address to block */
	return feed_address(value, e, err, errlen) < 0 ? -1 : 1;
}

/* One CrowdSec decision held: its duration from now a TTL, its scenario the category. */
static int crowdsec_decision(const json_t *d, uint64_t now, struct entry *e, uint64_t *expires,
			     struct entry_labels *labels, char *err, size_t errlen)
{
	const char *duration = json_string_value(json_object_get(d, "duration"));
	const char *scenario = json_string_value(json_object_get(d, "scenario"));
	double seconds = 0;
	int rc = decision_entry(d, e, err, errlen);

	*expires = 0;
	*labels = (struct entry_labels){ 0 };
	if (rc <= 0)
		return rc;
	if (duration && go_duration(duration, &seconds) < 0) {
		error_set(err, errlen, "duration '%.40s' is not Go's (3h59m51s)", duration);
		return -1;
	}
	if (duration && seconds <= 0)
		return 0; /* it has run out */
	*expires = duration ? now + (uint64_t)ceil(seconds) : 0;
	for (size_t i = 0; scenario && scenario[i] && i + 1 < sizeof(labels->category); i++) /* as labels allow */
		labels->category[i] = isalnum((unsigned char)scenario[i]) || strchr("._-:/", scenario[i]) ? scenario[i] : '_';
	return FEED_HOLD;
}

/*
 * The decisions in a CrowdSec document: cscli's alerts (each with
 * "decisions"; a simulated alert's are marked simulated), the LAPI stream's
 * "new", or bare ones.
 */
static json_t *crowdsec_decisions(json_t *doc)
{
	json_t *out = json_array(), *v, *d, *list = json_is_object(doc) ? json_object_get(doc, "new") : doc;
	size_t i, j;

	json_array_foreach(list, i, v) {
		json_t *decisions = json_object_get(v, "decisions");
		if (!json_is_array(decisions)) {
			json_array_append(out, v);
			continue;
		}
		json_array_foreach(decisions, j, d) {
			if (json_is_true(json_object_get(v, "simulated")))
				json_object_set_new(d, "simulated", json_true());
			json_array_append(out, d);
		}
	}
	return out;
}

/* Each decision of list as a line from line on: held, or (deleted) leaving the list. */
static void crowdsec_each(const json_t *list, bool deleted, uint64_t now, feed_entry_cb on_entry, feed_bad_cb on_bad,
			  void *ctx, struct feed_counts *counts)
{
	struct entry e;
	char text[FEED_TOKEN_MAX + 2], problem[256];
	const json_t *d;
	size_t i;

	json_array_foreach(list, i, d) {
		uint64_t expires = 0;
		struct entry_labels labels = { 0 };
		if (json_is_true(json_object_get(d, "simulated"))) { /* CrowdSec enforces it nowhere: nor does bloomd */
			counts->lines++;
			counts->skipped++;
			snprintf(counts->skipped_what, sizeof(counts->skipped_what), "simulated decisions");
			continue;
		}
		int rc = deleted ? decision_entry(d, &e, problem, sizeof(problem))
				 : crowdsec_decision(d, now, &e, &expires, &labels, problem, sizeof(problem));
		if (rc > 0 && on_entry(ctx, &e, expires, labels.category[0] ? &labels : NULL, deleted ? FEED_DELETED : FEED_HOLD,
				       problem, sizeof(problem)))
			rc = -1;
		counts->lines++;
		counts->entries += rc > 0 && !deleted;
		if (rc < 0) {
			counts->bad++;
			snprintf(text, sizeof(text), "%s", json_string_value(json_object_get(d, "value")) ?: "(decision)");
			error_printable(text);
			on_bad(ctx, (unsigned)counts->lines, text, problem);
		}
	}
}

/* Whether doc is the LAPI's stream: {"new": [...] or null, "deleted": [...] or null}, one of them at least. */
static bool is_stream(const json_t *doc)
{
	const json_t *added = json_object_get(doc, "new"), *deleted = json_object_get(doc, "deleted");

	return json_is_object(doc) && (added || deleted) && (!added || json_is_array(added) || json_is_null(added)) &&
	       (!deleted || json_is_array(deleted) || json_is_null(deleted));
}

/* What came back instead of a stream, as an operator reads it: its JSON, cut short. */
static void not_a_stream(const json_t *doc, char *err, size_t errlen)
{
	char *text = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
	char shown[100];

	snprintf(shown, sizeof(shown), "%s", text ? text : "?");
	if (text && strlen(text) >= sizeof(shown))
		memcpy(shown + sizeof(shown) - 4, "...", 4);
	error_printable(shown);
	error_set(err, errlen, "the answer is not a decision stream ({\"new\": [...], \"deleted\": [...]}) but %s: "
		  "the list keeps its decisions", shown);
	free(text);
}

/*
 * A CrowdSec document, read whole: each decision counts as a line. A stream
 * document not asked for whole is a change: its deleted decisions first,
 * then its new ones (a decision replaced is in both). Where the stream was
 * asked for, anything else (an error object a proxy sends, {}, []) is
 * refused: taken as a version, it would lift every ban.
 */
int feed_crowdsec_read(FILE *f, const struct feed_spec *spec, uint64_t now, feed_entry_cb on_entry, feed_bad_cb on_bad,
		       void *ctx, struct feed_counts *counts, char *err, size_t errlen)
{
	json_error_t why;
	int first = getc(f); /* cscli's table opens with + or | */
	json_t *doc = (ungetc(first, f), json_loadf(f, JSON_DECODE_ANY, &why)), *decisions;
	char text[FEED_TOKEN_MAX + 2];

	if (doc == NULL && ferror(f)) {
		error_set(err, errlen, "read error: %s", strerror(errno));
		return -1;
	}
	if (doc == NULL) { /* one bad "line": the version is refused whole (max_bad) */
		counts->lines = counts->bad = 1;
		snprintf(text, sizeof(text), "%s", why.source);
		error_printable(text);
		on_bad(ctx, (unsigned)why.line, text,
		       first == '+' || first == '|' ? "cscli's table, not its JSON: write it with cscli decisions list -o json -l 0 --no-simu"
						    : why.text);
		return 0;
	}
	bool stream = is_stream(doc);
	if (spec->stream_only && !stream) {
		not_a_stream(doc, err, errlen);
		json_decref(doc);
		return -1;
	}
	counts->change = stream && !spec->stream_whole;
	if (counts->change)
		crowdsec_each(json_object_get(doc, "deleted"), true, now, on_entry, on_bad, ctx, counts);
	decisions = crowdsec_decisions(doc);
	crowdsec_each(decisions, false, now, on_entry, on_bad, ctx, counts);
	json_decref(decisions);
	json_decref(doc);
	return 0;
}
