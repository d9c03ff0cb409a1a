/* error.c - the caller's error buffer that library functions fill in. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

void error_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void error_printable(char *text)
{
	for (char *c = text; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
}
