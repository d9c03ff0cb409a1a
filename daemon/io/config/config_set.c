/* config_set.c - what every section's keys share: a problem said with its line, and the setters. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sizing.h"

void config_problem(struct loader *ld, const char *fmt, ...)
{
	char msg[600], text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (ld->line)
		snprintf(msg, sizeof(msg), "%s:%u: %s", ld->c->path, ld->line, text);
	else
		snprintf(msg, sizeof(msg), "%s: %s", ld->c->path, text);
	ld->on_error(ld->ctx, msg);
	ld->problems++;
}

/* A path from the file: relative ones are taken from the config file's directory. */
static char *resolve(const struct loader *ld, const char *value)
{
	char *out;

	/* Empty stays empty ("none"), not the config file's directory. */
	if (value[0] == '\0' || value[0] == '/' || strcmp(value, "-") == 0 || ld->dir == NULL)
		return strdup(value);
	if (asprintf(&out, "%s/%s", ld->dir, value) < 0)
		return NULL;
	return out;
}

int config_set_string(struct loader *ld, char **slot, const char *value, bool path)
{
	char *s = path ? resolve(ld, value) : strdup(value);

	if (s == NULL) {
		config_problem(ld, "out of memory");
		return 0;
	}
	free(*slot);
	*slot = s;
	return 1;
}

int config_push_path(struct loader *ld, char ***list, size_t *n, const char *value)
{
	char **grown = realloc(*list, (*n + 1) * sizeof(**list));
	char *s;

	if (grown == NULL || (s = resolve(ld, value)) == NULL) {
		if (grown)
			*list = grown;
		config_problem(ld, "out of memory");
		return 0;
	}
	*list = grown;
	(*list)[(*n)++] = s;
	return 1;
}

int config_set_uint(struct loader *ld, const char *key, const char *value, unsigned min,
		    unsigned max, const char *word, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (!isdigit((unsigned char)value[0]) || *end != '\0' || errno || v < min || v > max) {
		config_problem(ld, "%s: expected a whole number from %u to %u%s%s%s, got '%s'", key, min, max,
			       word ? " or '" : "", word ? word : "", word ? "'" : "", value);
		return 0;
	}
	*out = (unsigned)v;
	return 1;
}

int config_set_int(struct loader *ld, const char *key, const char *value, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (end == value || *end != '\0' || errno || v < min || v > max) {
		config_problem(ld, "%s: expected a number from %d to %d, got '%s'", key, min, max, value);
		return 0;
	}
	*out = (int)v;
	return 1;
}

/* A packet mark: 1 to 0xffffffff, in decimal or 0x hex (0 is no mark at all). */
int config_set_mark(struct loader *ld, const char *key, const char *value, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(value, &end, 0);
	if (!isdigit((unsigned char)value[0]) || *end != '\0' || errno || v == 0 || v > UINT32_MAX) {
		config_problem(ld, "%s: expected a packet mark from 1 to 0xffffffff (decimal or 0x hex), got '%s'", key,
			       value);
		return 0;
	}
	*out = (uint32_t)v;
	return 1;
}

/* A number from min to max, or the expect text's kind of one. */
int config_set_number(struct loader *ld, const char *key, const char *value, double min, double max,
		      const char *expect, double *out)
{
	char *end;
	double v = strtod(value, &end);

	if (end == value || *end != '\0' || !(v >= min && v <= max)) {
		if (expect)
			config_problem(ld, "%s: expected %s, got '%s'", key, expect, value);
		else
			config_problem(ld, "%s: expected a number from %g to %g, got '%s'", key, min, max, value);
		return 0;
	}
	*out = v;
	return 1;
}

int config_set_bool(struct loader *ld, const char *key, const char *value, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };

	for (int i = 0; i < 4; i++) {
		if (strcasecmp(value, yes[i]) == 0)
			return *out = true, 1;
		if (strcasecmp(value, no[i]) == 0)
			return *out = false, 1;
	}
	config_problem(ld, "%s: expected yes or no, got '%s'", key, value);
	return 0;
}

int config_set_size(struct loader *ld, const char *key, const char *value, uint64_t min, uint64_t max,
		    uint64_t *out)
{
	uint64_t v;

	if (sizing_parse_size(value, &v) < 0) {
		config_problem(ld, "%s: expected a size such as 4MiB, 512KiB or 65536, got '%s'", key, value);
		return 0;
	}
	if (v < min || v > max) {
		config_problem(ld, "%s: expected a size from %llu to %llu bytes, got '%s'", key, (unsigned long long)min,
			(unsigned long long)max, value);
		return 0;
	}
	*out = v;
	return 1;
}

int config_set_seconds(struct loader *ld, const char *key, const char *value, unsigned min, unsigned max,
		       unsigned *out)
{
	uint64_t total;

	if (!entry_seconds(value, &total) || total < min || total > max) {
		config_problem(ld, "%s: expected a time from %us to %us such as 90s, 15m, 1h or 1d, got '%s'", key, min, max,
			       value);
		return 0;
	}
	*out = (unsigned)total;
	return 1;
}

static char *seen_name(const char *section, const char *key)
{
	char *name;

	return asprintf(&name, "%s.%s", section, key) < 0 ? NULL : name;
}

unsigned config_key_line(const struct loader *ld, const char *section, const char *key)
{
	char *name = seen_name(section, key);
	unsigned line = 0;

	for (size_t i = 0; name && i < ld->nseen && line == 0; i++)
		if (strcmp(ld->seen[i].name, name) == 0)
			line = ld->seen[i].line;
	free(name);
	return line;
}

static void remember(struct loader *ld, const char *section, const char *key)
{
	if (ld->nseen == ld->seen_cap) {
		size_t cap = ld->seen_cap ? 2 * ld->seen_cap : 64;
		struct seen_key *grown = realloc(ld->seen, cap * sizeof(*grown));
		if (grown == NULL) {
			config_problem(ld, "out of memory");
			return;
		}
		ld->seen = grown;
		ld->seen_cap = cap;
	}
	if ((ld->seen[ld->nseen].name = seen_name(section, key)) == NULL) {
		config_problem(ld, "out of memory");
		return;
	}
	ld->seen[ld->nseen++].line = ld->line;
}

/* A key given twice is a mistake either way: which line was meant? (Lists of paths may repeat.) */
bool config_key_repeated(struct loader *ld, const char *section, const char *key, bool many)
{
	unsigned first = config_key_line(ld, section, key);

	if (first && !many) {
		config_problem(ld, "[%s] %s is given again (first at line %u)", section, key, first);
		return true;
	}
	if (!first)
		remember(ld, section, key);
	return false;
}

void config_keys_seen_free(struct loader *ld)
{
	for (size_t i = 0; i < ld->nseen; i++)
		free(ld->seen[i].name);
	free(ld->seen);
}
