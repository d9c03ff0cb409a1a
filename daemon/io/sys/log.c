/* log.c - the daemon's log: four levels, to stderr (journald adds the rest) or syslog. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "log.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

static enum log_level max_level = LOG_LEVEL_INFO;
static enum log_target target = LOG_TARGET_STDERR;
static enum log_format format = LOG_FORMAT_TEXT;

static const char *const LABELS[] = { "error", "warning", "info", "debug" };
static const int PRIORITIES[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

void log_setup(enum log_level max, enum log_target to, enum log_format how)
{
	max_level = max;
	format = how;
	if (to == LOG_TARGET_SYSLOG && target != LOG_TARGET_SYSLOG)
		openlog("bloomd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	else if (to != LOG_TARGET_SYSLOG && target == LOG_TARGET_SYSLOG)
		closelog();
	target = to;
}

int log_level_parse(const char *name, enum log_level *level)
{
	for (int l = LOG_LEVEL_ERROR; l <= LOG_LEVEL_DEBUG; l++)
		if (strcmp(name, LABELS[l]) == 0) {
			*level = (enum log_level)l;
			return 0;
		}
	return -1;
}

/*
 * One message, one line: text from outside (a stream entry, a feed's line, a
 * file name) may hold a newline or a terminal escape, which would forge a
 * log line of its own. Control bytes become \n, \r, \t or \xHH.
 */
static void one_line(const char *in, char *out, size_t outlen)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < outlen; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			out[o++] = (char)*p;
			continue;
		}
		const char *named = *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : *p == '\t' ? "\\t" : NULL;
		o += (size_t)(named ? snprintf(out + o, outlen - o, "%s", named)
				    : snprintf(out + o, outlen - o, "\\x%02x", *p));
	}
	out[o] = '\0';
}

/*
 * The message as one eve record: {"timestamp", "log_level", "event_type":
 * "engine", "engine": {"message", "module"}}, the shape of Suricata's engine
 * log, which its schema takes. line is ASCII but for bytes from outside,
 * which may not be UTF-8: those become '?'. NULL without memory.
 */
static char *json_line(enum log_level level, char *line)
{
	static const char *const EVE_LEVELS[] = { "Error", "Warning", "Info", "Debug" };
	struct timespec now;
	struct tm tm;
	char stamp[64];

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp + n, sizeof(stamp) - n, ".%06ld+0000", now.tv_nsec / 1000);
	json_t *message = json_string(line);
	if (message == NULL) {
		for (char *p = line; *p; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		message = json_string(line);
	}
	json_t *o = json_pack("{s:s,s:s,s:s,s:{s:o,s:s}}", "timestamp", stamp, "log_level", EVE_LEVELS[level],
			      "event_type", "engine", "engine", "message", message, "module", "bloomd");
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return text;
}

static void emit(enum log_level level, const char *fmt, va_list ap)
{
	char text[1024], line[1024 * 2];

	if (level > max_level)
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	one_line(text, line, sizeof(line));
	char *json = format == LOG_FORMAT_JSON ? json_line(level, line) : NULL;
	if (json && target == LOG_TARGET_SYSLOG)
		syslog(PRIORITIES[level], "%s", json);
	else if (json)
		fprintf(stderr, "%s\n", json);
	else if (target == LOG_TARGET_SYSLOG)
		syslog(PRIORITIES[level], "%s", line);
	else
		fprintf(stderr, "bloomd: %s: %s\n", LABELS[level], line);
	free(json);
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

static void emit_args(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit_args(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, fmt, ap);
	va_end(ap);
}

void log_limited(struct log_limit *limit, unsigned interval, enum log_level level, const char *fmt,
		 ...)
{
	char line[900];
	va_list ap;
	time_t now = time(NULL);

	if (limit->last && now - limit->last < (time_t)interval) {
		limit->held++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (limit->held)
		emit_args(level, "%s (%llu more since the last report)", line,
			  (unsigned long long)limit->held);
	else
		emit_args(level, "%s", line);
	limit->last = now;
	limit->held = 0;
}
