/* metrics_http.c - an HTTP listener for Prometheus: GET /metrics, nothing else, on bounded connections. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "metrics_http.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "error.h"
#include "listener.h"

/*
 * Why not evhttp: its timeouts are per read, so a client trickling a byte a
 * second holds its connection for ever, and it has no limit on connections
 * at all (1,100 of them used every descriptor bloomd had). A scrape is one
 * request on one connection, so this listener answers exactly that: the
 * request line and headers (at most MAX_REQUEST bytes) within the
 * connection's whole time, then one reply with Connection: close.
 */
#define MAX_REQUEST 8192 /* a scrape's request is a few hundred bytes */

struct metrics_conn {
	struct metrics_http *m;
	struct bufferevent *bev;
	struct event *deadline;  /* the whole connection, however slowly it trickles */
	struct metrics_conn *prev, *next;
};

struct metrics_http {
	struct event_base *base;
	struct listener *listener;
	metrics_text_cb text;
	void *ctx;
	struct metrics_limits limits;
	struct metrics_conn *conns;
	struct metrics_http_stats stats;
};

static void conn_free(struct metrics_conn *k)
{
	struct metrics_http *m = k->m;

	if (k->prev)
		k->prev->next = k->next;
	else
		m->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	m->stats.open--;
	bufferevent_free(k->bev);
	event_free(k->deadline);
	free(k);
}

/* Queue the reply and close once it is written (write_cb); nothing more is read. */
static void reply(struct metrics_conn *k, int code, const char *reason, const char *body, size_t len, bool head)
{
	struct evbuffer *out = bufferevent_get_output(k->bev);

	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			    code, reason, code == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8",
			    len);
	if (!head)
		evbuffer_add(out, body, len);
	bufferevent_disable(k->bev, EV_READ);
	bufferevent_enable(k->bev, EV_WRITE);
}

static void reply_text(struct metrics_conn *k, int code, const char *reason, const char *body)
{
	reply(k, code, reason, body, strlen(body), false);
}

/* The request line, once the headers are whole: METHOD SP TARGET SP HTTP/1.x. */
static void answer(struct metrics_conn *k, const char *line)
{
	char method[8], target[256], version[16];

	if (sscanf(line, "%7s %255s %15s", method, target, version) != 3 || strncmp(version, "HTTP/1.", 7) != 0) {
		reply_text(k, 400, "Bad Request", "bloomd: not an HTTP/1 request line\n");
		return;
	}
	bool head = strcmp(method, "HEAD") == 0;
	if (!head && strcmp(method, "GET") != 0) {
		reply_text(k, 405, "Method Not Allowed", "bloomd serves GET and HEAD only\n");
		return;
	}
	target[strcspn(target, "?")] = '\0';
	if (strcmp(target, "/metrics") != 0) {
		reply_text(k, 404, "Not Found", "bloomd serves /metrics only\n");
		return;
	}
	char *text = k->m->text(k->m->ctx);
	if (text == NULL) {
		reply_text(k, 500, "Internal Server Error", "out of memory\n");
		return;
	}
	k->m->stats.scrapes++;
	reply(k, 200, "OK", text, strlen(text), head);
	free(text);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct metrics_conn *k = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);

	if (end.pos < 0)
		end = evbuffer_search(in, "\n\n", 2, NULL);
	if (end.pos < 0) {
		if (evbuffer_get_length(in) > MAX_REQUEST)
			reply_text(k, 431, "Request Header Fields Too Large", "bloomd: request too large\n");
		return;
	}
	size_t n;
	char *line = evbuffer_readln(in, &n, EVBUFFER_EOL_CRLF);
	if (line == NULL || n > MAX_REQUEST)
		reply_text(k, 400, "Bad Request", "bloomd: no request line\n");
	else
		answer(k, line);
	free(line);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		conn_free(arg); /* the reply is out: Connection: close */
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_free(arg);
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct metrics_conn *k = arg;

	(void)fd;
	(void)what;
	k->m->stats.timed_out++;
	conn_free(k);
}

/* More connections than allowed are not taken: the listener sends them a short answer. */
static bool take_conn(void *arg, int fd)
{
	struct metrics_http *m = arg;
	struct metrics_conn *k;
	struct timeval whole = { .tv_sec = m->limits.timeout_seconds };

	if (m->stats.open >= m->limits.max_connections || (k = calloc(1, sizeof(*k))) == NULL)
		return false;
	k->m = m;
	k->bev = bufferevent_socket_new(m->base, fd, BEV_OPT_CLOSE_ON_FREE);
	k->deadline = evtimer_new(m->base, deadline_cb, k);
	if (k->bev == NULL || k->deadline == NULL || evtimer_add(k->deadline, &whole) < 0) {
		if (k->bev)
			bufferevent_free(k->bev);
		else
			evutil_closesocket(fd);
		if (k->deadline)
			event_free(k->deadline);
		free(k);
		m->stats.refused++;
		return true; /* closed here */
	}
	k->next = m->conns;
	if (m->conns)
		m->conns->prev = k;
	m->conns = k;
	m->stats.open++;
	bufferevent_setcb(k->bev, read_cb, write_cb, event_cb, k);
	bufferevent_setwatermark(k->bev, EV_READ, 0, MAX_REQUEST + 1);
	bufferevent_enable(k->bev, EV_READ);
	return true;
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

/* The socket address of ADDRESS:PORT (a name is looked up, as a configuration may say localhost). */
static int listen_address(const char *listen, struct sockaddr_storage *ss, int *len)
{
	struct evutil_addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
					 .ai_flags = EVUTIL_AI_PASSIVE }, *found = NULL;
	char host[64], port_text[8];
	unsigned port;

	if (split_listen(listen, host, sizeof(host), &port) < 0)
		return -1;
	snprintf(port_text, sizeof(port_text), "%u", port);
	if (evutil_getaddrinfo(host, port_text, &hints, &found) != 0 || found == NULL ||
	    found->ai_addrlen > sizeof(*ss)) {
		if (found)
			evutil_freeaddrinfo(found);
		return -1;
	}
	memcpy(ss, found->ai_addr, found->ai_addrlen);
	*len = (int)found->ai_addrlen;
	evutil_freeaddrinfo(found);
	return 0;
}

struct metrics_http *metrics_http_open(struct event_base *base, const char *listen, const struct metrics_limits *limits,
				       metrics_text_cb text, void *ctx, char *err, size_t errlen)
{
	struct metrics_http *m = calloc(1, sizeof(*m));
	struct sockaddr_storage ss;
	int len;

	if (m == NULL) {
		error_set(err, errlen, "[metrics] listen: out of memory");
		return NULL;
	}
	m->base = base;
	m->text = text;
	m->ctx = ctx;
	m->limits = *limits;
	if (listen_address(listen, &ss, &len) < 0) {
		error_set(err, errlen, "[metrics] listen: '%s' is not ADDRESS:PORT of this host", listen);
		goto fail;
	}
	static const struct listener_options lo = {
		.busy = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	};
	m->listener = listener_bind(base, (struct sockaddr *)&ss, (socklen_t)len, &lo, take_conn, m);
	if (m->listener == NULL) {
		error_set(err, errlen, "[metrics] listen: cannot listen on %s: %s (an address of this host, a port not in use?)",
			  listen, strerror(errno));
		goto fail;
	}
	return m;
fail:
	metrics_http_close(m);
	return NULL;
}

void metrics_http_get_stats(const struct metrics_http *m, struct metrics_http_stats *out)
{
	*out = m->stats;
	out->refused += listener_turned_away(m->listener);
	out->accept_errors = listener_accept_errors(m->listener);
}

void metrics_http_close(struct metrics_http *m)
{
	if (m == NULL)
		return;
	while (m->conns)
		conn_free(m->conns);
	listener_free(m->listener);
	free(m);
}
