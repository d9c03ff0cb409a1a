/* error.h - the caller's error buffer that library functions fill in. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ERROR_H
#define BLOOMD_ERROR_H

#include <stddef.h>

/*
 * Library code never prints: a failing function writes one line naming the
 * problem into the caller's buffer (err may be NULL) and returns -1 or NULL.
 */
void error_set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Bytes outside printable ASCII as '?', in place: names and messages that may
 * be any bytes (file names, lines from the wire) made fit for a log line or
 * for JSON, which wants UTF-8.
 */
void error_printable(char *text);

#endif
