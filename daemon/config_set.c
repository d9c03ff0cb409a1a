/* config_set.c - what every section's keys share: a problem said with its line, and the setters. */
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
		    unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (!isdigit((unsigned char)value[0]) || *end != '\0' || errno || v < min || v > max) {
		config_problem(ld, "%s: expected a whole number from %u to %u, got '%s'", key, min, max, value);
		return 0;
	}
	*out = (unsigned)v;
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

/* Bits per entry or per window: a number from 1 to 64. */
int config_set_bits(struct loader *ld, const char *key, const char *value, double *out)
{
	char *end;
	double v = strtod(value, &end);

	if (end == value || *end != '\0' || !(v >= 1 && v <= 64)) {
		config_problem(ld, "%s: expected a number from 1 to 64, got '%s'", key, value);
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
