/* notify.c - telling the service manager how bloomd is doing (sd_notify), and its watchdog. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "notify.h"

#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>
#include <time.h>

void notify_ready(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void notify_reloading(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		   (unsigned long long)t.tv_sec * 1000000ULL + (unsigned long long)t.tv_nsec / 1000);
}

void notify_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}

static void ping_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

struct event *notify_watchdog_start(struct event_base *base)
{
	uint64_t usec;
	struct event *ev;

	if (sd_watchdog_enabled(0, &usec) <= 0)
		return NULL;
	struct timeval half = { .tv_sec = (time_t)(usec / 2 / 1000000), .tv_usec = (suseconds_t)(usec / 2 % 1000000) };
	ev = event_new(base, -1, EV_PERSIST, ping_cb, NULL);
	if (ev == NULL || event_add(ev, &half) < 0) {
		if (ev)
			event_free(ev);
		return NULL;
	}
	sd_notify(0, "WATCHDOG=1");
	return ev;
}
