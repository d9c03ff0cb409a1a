/* service_rebuild.c - the filters rebuilt in the background: on request, after a reload, when they outgrow their shape. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include "error.h"
#include "log.h"
#include "service_internal.h"

static json_t *result_json(const struct state_rebuild_result *r)
{
	return json_pack("{s:b,s:f,s:f,s:f,s:i,s:s*}", "ok", r->ok, "seconds", r->seconds, "max_stall_ms",
			 r->stall_ms, "longest_hold_ms", r->longest_hold_ms, "rounds", (int)r->rounds, "error",
			 r->ok ? NULL : r->error);
}

static void rebuild_done(void *ctx, const struct state_rebuild_result *r)
{
	struct service *s = ctx;
	struct service_rebuilding *rb = &s->rebuilding;
	uint64_t waiter = rb->waiter;

	rb->task = NULL;
	rb->waiter = 0;
	rb->count++;
	rb->last = *r;
	if (r->ok)
		log_info("rebuild done: %u rounds in %.2f s, the loop held for %.2f ms in all, %.2f ms at most at once",
			 r->rounds, r->seconds, r->stall_ms, r->longest_hold_ms);
	else
		log_error("rebuild failed (the filters are unchanged): %s", r->error);
	service_propagate(s); /* the result reaches the workers before the reply */
	service_reply_to(s, waiter, result_json(r));
	if (rb->again) {
		char err[256];
		unsigned rounds = rb->again_rounds ? rb->again_rounds : matcher_rounds(s->matcher);
		waiter = rb->again_waiter;
		rb->again = false;
		rb->again_rounds = 0;
		rb->again_waiter = 0;
		log_info("rebuilding again: %s", waiter ? "asked for while that one ran" : "the filter settings changed during that rebuild");
		if (service_rebuild(s, rounds, waiter, err, sizeof(err)) < 0) {
			log_error("rebuild: %s", err);
			service_reply_to(s, waiter, json_pack("{s:b,s:s}", "ok", false, "error", err));
		}
	}
}

int service_rebuild(struct service *s, unsigned rounds, uint64_t waiter, char *err, size_t errlen)
{
	struct service_rebuilding *rb = &s->rebuilding;

	if (rb->task && waiter && rb->waiter == 0 && rb->again_waiter == 0) {
		/* One bloomd started itself (the start's, a reload's): this one follows it, and is answered then. */
		rb->again = true;
		rb->again_rounds = rounds;
		rb->again_waiter = waiter;
		return 0;
	}
	if (rb->task) {
		error_set(err, errlen, "a rebuild is running already");
		return -1;
	}
	rb->task = state_rebuild_start(s->base, s->matcher, rounds, rebuild_done, s, err, errlen);
	if (rb->task == NULL)
		return -1;
	rb->waiter = waiter;
	return 0;
}

void service_rebuild_settings_changed(struct service *s)
{
	char err[256];

	/* The one running has the old settings: another follows it. */
	if (s->rebuilding.task)
		s->rebuilding.again = true;
	else if (service_rebuild(s, matcher_rounds(s->matcher), 0, err, sizeof(err)) < 0)
		log_error("rebuild after reload: %s", err);
}

void service_rebuild_optimise(struct service *s)
{
	char err[256];

	if (matcher_optimised(s->matcher) || s->rebuilding.task)
		return;
	log_info("the entries were placed in the filters online, so that bloomd protects at once: their %u offline rounds run in the background",
		 matcher_rounds(s->matcher));
	if (service_rebuild(s, matcher_rounds(s->matcher), 0, err, sizeof(err)) < 0)
		log_error("the filters' offline rounds: %s (bloomctl rebuild runs them)", err);
}

void service_rebuild_if_outgrown(struct service *s)
{
	char err[256];

	if (!s->cfg->auto_rebuild || s->rebuilding.task || !matcher_rebuild_wanted(s->matcher, s->cfg->fpr_target))
		return;
	log_info("rebuilding: the filters have outgrown their shape");
	if (service_rebuild(s, matcher_rounds(s->matcher), 0, err, sizeof(err)) < 0)
		log_error("auto-rebuild: %s", err);
}

json_t *service_rebuild_stats(const struct service *s)
{
	const struct service_rebuilding *rb = &s->rebuilding;

	return json_pack("{s:b,s:b,s:I,s:o}", "running", rb->task != NULL, "optimised", matcher_optimised(s->matcher),
			 "count", (json_int_t)rb->count, "last", rb->count ? result_json(&rb->last) : json_null());
}

void service_rebuild_cancel(struct service *s)
{
	state_rebuild_cancel(s->rebuilding.task);
	s->rebuilding.task = NULL;
}
