/* metrics_http.c - an HTTP listener for Prometheus: GET /metrics, nothing else. */
#include "metrics_http.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#define REQUEST_SECONDS 10  /* a client that sends nothing is cut off */
#define MAX_HEADERS 8192    /* a scrape's request is a few hundred bytes */

struct metrics_http {
	struct evhttp *http;
	metrics_text_cb text;
	void *ctx;
};

static void reply_text(struct evhttp_request *req, int code, const char *reason, const char *body)
{
	struct evbuffer *out = evbuffer_new();

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  code == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8");
	if (out && body)
		evbuffer_add(out, body, strlen(body));
	evhttp_send_reply(req, code, reason, out);
	if (out)
		evbuffer_free(out);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct metrics_http *m = arg;
	const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));

	if (path == NULL || strcmp(path, "/metrics") != 0) {
		reply_text(req, 404, "Not Found", "bloomd serves /metrics only\n");
		return;
	}
	char *text = m->text(m->ctx);
	if (text == NULL) {
		reply_text(req, 500, "Internal Server Error", "out of memory\n");
		return;
	}
	reply_text(req, 200, "OK", evhttp_request_get_command(req) == EVHTTP_REQ_HEAD ? NULL : text);
	free(text);
}

/* "ADDRESS:PORT" or "[ADDRESS]:PORT" split; -1 if it is neither. */
static int split_listen(const char *listen, char *host, size_t hostlen, unsigned *port)
{
	const char *colon = strrchr(listen, ':');
	size_t n;

	if (colon == NULL)
		return -1;
	if (listen[0] == '[') {
		if (colon == listen || colon[-1] != ']')
			return -1;
		listen++;
		n = (size_t)(colon - 1 - listen);
	} else {
		n = (size_t)(colon - listen);
	}
	if (n == 0 || n >= hostlen)
		return -1;
	memcpy(host, listen, n);
	host[n] = '\0';
	char *end;
	unsigned long p = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || p == 0 || p > 65535)
		return -1;
	*port = (unsigned)p;
	return 0;
}

struct metrics_http *metrics_http_open(struct event_base *base, const char *listen, metrics_text_cb text,
				       void *ctx, char *err, size_t errlen)
{
	struct metrics_http *m = calloc(1, sizeof(*m));
	char host[64];
	unsigned port;

	if (m == NULL || (m->http = evhttp_new(base)) == NULL) {
		error_set(err, errlen, "[metrics] listen: out of memory");
		free(m);
		return NULL;
	}
	m->text = text;
	m->ctx = ctx;
	evhttp_set_timeout(m->http, REQUEST_SECONDS);
	evhttp_set_max_headers_size(m->http, MAX_HEADERS);
	evhttp_set_max_body_size(m->http, 0);
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_gencb(m->http, on_request, m);
	if (split_listen(listen, host, sizeof(host), &port) < 0) {
		error_set(err, errlen, "[metrics] listen: '%s' is not ADDRESS:PORT", listen);
		goto fail;
	}
	if (evhttp_bind_socket(m->http, host, (uint16_t)port) != 0) {
		error_set(err, errlen, "[metrics] listen: cannot listen on %s (an address of this host, a port not in use?)",
			  listen);
		goto fail;
	}
	return m;
fail:
	metrics_http_close(m);
	return NULL;
}

void metrics_http_close(struct metrics_http *m)
{
	if (m == NULL)
		return;
	evhttp_free(m->http);
	free(m);
}
