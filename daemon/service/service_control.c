/* service_control.c - the sockets bloomd answers on: the control socket and the metrics endpoint. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics_http.h"
#include "service_internal.h"

int service_control_open(struct service *s, const struct control_options *control, char *(*scrape)(void *ctx))
{
	char err[512];

	if (control) {
		s->control.control = control_open(s->base, control, err, sizeof(err));
		if (s->control.control == NULL) {
			log_error("%s", err);
			return -1;
		}
	}
	if (s->cfg->metrics_listen) {
		struct metrics_limits limits = { s->cfg->metrics_max_connections, s->cfg->metrics_timeout };
		s->control.metrics = metrics_http_open(s->base, s->cfg->metrics_listen, &limits, scrape, s, err, sizeof(err));
		if (s->control.metrics == NULL) {
			log_error("%s", err);
			return -1;
		}
		log_info("metrics for Prometheus on http://%s/metrics", s->cfg->metrics_listen);
	}
	return 0;
}

void service_control_close(struct service *s)
{
	control_close(s->control.control);
	s->control.control = NULL;
	metrics_http_close(s->control.metrics);
	s->control.metrics = NULL;
}

void service_reply_to(struct service *s, uint64_t waiter, json_t *reply)
{
	struct control_client *cl = waiter && s->control.control ? control_find(s->control.control, waiter) : NULL;

	if (cl) {
		/* Exactly one reply: the client pairs replies with its commands in order. */
		char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
		if (text)
			control_reply(cl, text, strlen(text));
		else
			control_reply(cl, "{\"ok\":false,\"error\":\"out of memory for the reply\"}", 49);
		free(text);
		control_release(cl);
	}
	json_decref(reply);
}

int service_waiters_add(struct service_waiters *w, uint64_t id)
{
	if (id == 0)
		return 0;
	uint64_t *ids = realloc(w->ids, (w->n + 1) * sizeof(*ids));
	if (ids == NULL)
		return -1;
	w->ids = ids;
	w->ids[w->n++] = id;
	return 0;
}

bool service_waiters_tell(struct service *s, struct service_waiters *w, struct service_waiters *next, json_t *reply)
{
	for (size_t i = 0; i < w->n; i++)
		service_reply_to(s, w->ids[i], json_deep_copy(reply));
	free(w->ids);
	*w = *next;
	*next = (struct service_waiters){ 0 };
	return w->n > 0;
}

void service_waiters_free(struct service_waiters *w)
{
	free(w->ids);
	*w = (struct service_waiters){ 0 };
}

void service_control_stats(const struct service *s, json_t *o)
{
	if (s->control.control)
		json_object_set_new(o, "control", json_pack("{s:i,s:I}", "clients", (int)control_clients(s->control.control),
							    "rejected", (json_int_t)control_rejected(s->control.control)));
	if (s->control.metrics) {
		struct metrics_http_stats ms;
		metrics_http_get_stats(s->control.metrics, &ms);
		json_object_set_new(o, "metrics_http", json_pack("{s:i,s:I,s:I,s:I,s:I}", "connections", (int)ms.open,
								 "scrapes", (json_int_t)ms.scrapes, "refused",
								 (json_int_t)ms.refused, "timed_out", (json_int_t)ms.timed_out,
								 "accept_errors", (json_int_t)ms.accept_errors));
	}
}
