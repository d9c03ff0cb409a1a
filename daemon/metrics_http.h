/* metrics_http.h - an HTTP listener for Prometheus: GET /metrics, nothing else. */
#ifndef BLOOMD_METRICS_HTTP_H
#define BLOOMD_METRICS_HTTP_H

#include <stddef.h>

struct event_base;
struct metrics_http;

/* The exposition text now (caller frees), or NULL without memory. */
typedef char *(*metrics_text_cb)(void *ctx);

/*
 * Listen on listen ("127.0.0.1:9153", "[::1]:9153") in base. A scrape is
 * answered in the loop, from text(ctx); any other path is a 404, any other
 * method a 501 (libevent's answer). NULL with a message if the address cannot be bound.
 */
struct metrics_http *metrics_http_open(struct event_base *base, const char *listen, metrics_text_cb text,
				       void *ctx, char *err, size_t errlen);
void metrics_http_close(struct metrics_http *m);

#endif
