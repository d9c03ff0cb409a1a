/* log.h - the daemon's log: four levels, to stderr (journald adds the rest) or syslog. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_LOG_H
#define BLOOMD_LOG_H

#include <stdint.h>
#include <time.h>

enum log_level { LOG_LEVEL_ERROR = 0, LOG_LEVEL_WARNING, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };
enum log_target { LOG_TARGET_STDERR = 0, LOG_TARGET_SYSLOG };
/* json: each message one object, as Suricata's engine log in eve (event_type engine). */
enum log_format { LOG_FORMAT_TEXT = 0, LOG_FORMAT_JSON };

/* Messages above max are dropped; syslog uses facility daemon. Default: info, stderr, text. */
void log_setup(enum log_level max, enum log_target target, enum log_format format);

/* "error", "warning", "info" or "debug" to its level; -1 if unknown. */
int log_level_parse(const char *name, enum log_level *level);

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * For a problem that recurs (a full disk under the event log, say): at most
 * one line per interval seconds, which tells how many were held back since
 * the last. Zero-initialise the limit.
 */
struct log_limit {
	time_t last;
	uint64_t held;
};
void log_limited(struct log_limit *limit, unsigned interval, enum log_level level, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));

#endif
