/* metrics_http.h - an HTTP listener for Prometheus: GET /metrics, nothing else, on bounded connections. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_METRICS_HTTP_H
#define BLOOMD_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct metrics_http;

/* The exposition text now (caller frees), or NULL without memory. */
typedef char *(*metrics_text_cb)(void *ctx);

struct metrics_limits {
	unsigned max_connections; /* open at once; one more is answered 503 and closed */
	unsigned timeout_seconds; /* a connection's whole life, request and reply: bytes trickling in do not extend it */
};

struct metrics_http_stats {
	unsigned open;            /* connections now */
	uint64_t scrapes;         /* answered 200 */
	uint64_t refused;         /* turned away at max_connections (or without memory) */
	uint64_t timed_out;       /* cut off at timeout_seconds */
	uint64_t accept_errors;   /* accept(2) failed (no descriptor left): the listener paused a second */
};

/*
 * Listen on listen ("127.0.0.1:9153", "[::1]:9153") in base. A scrape is
 * answered in the loop, from text(ctx), and the connection closed; any
 * other path is a 404, any other method a 405. When accept(2) fails (no
 * descriptor left) the listener pauses a second instead of spinning. NULL
 * with a message if the address cannot be bound.
 */
struct metrics_http *metrics_http_open(struct event_base *base, const char *listen, const struct metrics_limits *limits,
				       metrics_text_cb text, void *ctx, char *err, size_t errlen);
void metrics_http_get_stats(const struct metrics_http *m, struct metrics_http_stats *out);
void metrics_http_close(struct metrics_http *m);

#endif
