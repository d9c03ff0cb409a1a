/* notify.h - telling the service manager how bloomd is doing (sd_notify), and its watchdog. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_NOTIFY_H
#define BLOOMD_NOTIFY_H

#include <event2/event.h>

/*
 * All of these do nothing when bloomd was not started by systemd with
 * Type=notify (no NOTIFY_SOCKET), so bloomd works the same either way.
 */

/* READY=1, with a status line for systemctl status. */
void notify_ready(const char *status);
/* RELOADING=1 (then notify_ready when the reload is done). */
void notify_reloading(void);
/* STOPPING=1. */
void notify_stopping(void);

/*
 * If the manager asks for watchdog pings (WatchdogSec=), send WATCHDOG=1
 * from a timer in base at half the interval: a loop that is stuck stops
 * pinging, and the manager restarts bloomd. Returns the timer (the caller
 * frees it), or NULL when no watchdog is wanted.
 */
struct event *notify_watchdog_start(struct event_base *base);

#endif
