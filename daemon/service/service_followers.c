/* service_followers.c - the log of the matcher's changes its followers (workers' copy, XDP set, nft mirror) read. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include "matcher_copy.h"
#include "service_internal.h"

const struct matcher_log *service_followers_log(const struct service *s, bool *whole)
{
	*whole = s->capture.actions_stale;
	return s->capture.changes;
}

void service_followers_all(struct service *s)
{
	s->capture.actions_stale = true;
	s->capture.actions_changed++;
}

uint64_t service_followers_all_asked(const struct service *s)
{
	return s->capture.actions_changed;
}

void service_follower_gone(struct service *s, unsigned follower)
{
	struct service_capture *src = &s->capture;

	src->followers &= ~follower;
	if (src->followers)
		return;
	if (src->publisher)
		event_free(src->publisher);
	src->publisher = NULL;
	if (s->matcher)
		matcher_record(s->matcher, NULL);
	matcher_log_free(src->changes);
	src->changes = NULL;
}
