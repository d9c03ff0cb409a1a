/* cli.c - option parsing shared by the command-line tools. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cli_u64(const char *prog, const char *option, const char *text, uint64_t min, uint64_t max,
	    uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (!isdigit((unsigned char)text[0]) || *end != '\0' || errno != 0 || v < min || v > max) {
		cli_error("%s: %s: expected a whole number from %llu to %llu, got '%s'", prog,
			option, (unsigned long long)min, (unsigned long long)max, text);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_unsigned(const char *prog, const char *option, const char *text, unsigned min,
		 unsigned max, unsigned *out)
{
	uint64_t v;

	if (cli_u64(prog, option, text, min, max, &v) < 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int cli_double(const char *prog, const char *option, const char *text, double min, double max,
	       double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end != '\0' || errno != 0 || !(v >= min && v <= max)) {
		cli_error("%s: %s: expected a number from %g to %g, got '%s'", prog, option,
			min, max, text);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_layout(const char *prog, const char *option, const char *text, enum filter_layout *out)
{
	if (filter_layout_parse(text, out) < 0) {
		cli_error("%s: %s: expected classic or blocked, got '%s'", prog, option, text);
		return -1;
	}
	return 0;
}

void cli_print_json(json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));

	if (text != NULL)
		puts(text);
	free(text);
	json_decref(o);
}

bool cli_errors_json;

void cli_error(const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!cli_errors_json) {
		fprintf(stderr, "%s\n", text);
		return;
	}
	json_t *o = json_pack("{s:b,s:s}", "ok", false, "error", text);
	if (o == NULL) /* not UTF-8 (a file name): its bytes as they are, on standard error */
		fprintf(stderr, "%s\n", text);
	else
		cli_print_json(o);
}
