/* cli.h - option parsing shared by the command-line tools. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CLI_H
#define BLOOMD_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "filter.h"

/*
 * Parse text as a whole number (or a real, for cli_double) in [min, max].
 * On error prints "PROG: OPTION: ..." to stderr and returns -1.
 */
int cli_u64(const char *prog, const char *option, const char *text, uint64_t min, uint64_t max,
	    uint64_t *out);
int cli_unsigned(const char *prog, const char *option, const char *text, unsigned min,
		 unsigned max, unsigned *out);
int cli_double(const char *prog, const char *option, const char *text, double min, double max,
	       double *out);

/* Parse a filter layout (classic, blocked); on error as above. */
int cli_layout(const char *prog, const char *option, const char *text, enum filter_layout *out);

/* Print o as one compact JSON line on stdout, then release it. */
void cli_print_json(json_t *o);

/*
 * A client-side error (the arguments, a file, the connection): one line on
 * standard error, or, once cli_errors_json is set (bloomctl --json), the
 * object {"ok":false,"error":TEXT} on standard output, as the daemon's own
 * errors come, so a script reads one shape.
 */
extern bool cli_errors_json;
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
