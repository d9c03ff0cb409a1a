/* log.c - the daemon's few log calls: to stderr, one line each, with a level. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

/* Messages above this level are dropped. */
static const enum log_level max_level = LOG_LEVEL_INFO;

static const char *const LABELS[] = { "error", "warning", "info", "debug" };

static void emit(enum log_level level, const char *fmt, va_list ap)
{
	char line[1024];

	if (level > max_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "bloomd: %s: %s\n", LABELS[level], line);
}

#define LOG_FN(name, level)                     \
	void name(const char *fmt, ...)         \
	{                                       \
		va_list ap;                     \
		va_start(ap, fmt);              \
		emit(level, fmt, ap);           \
		va_end(ap);                     \
	}

LOG_FN(log_error, LOG_LEVEL_ERROR)
LOG_FN(log_warning, LOG_LEVEL_WARNING)
LOG_FN(log_info, LOG_LEVEL_INFO)
LOG_FN(log_debug, LOG_LEVEL_DEBUG)
