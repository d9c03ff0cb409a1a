/* service_upkeep.c - the daemon's own upkeep: the once-a-second housekeeping, problems reported, uptime. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "packet.h"
#include "service_internal.h"
#include "stats.h"

#define PROBLEM_REPORT_SECONDS 60

/*
 * Malformed packets and kernel drops are counted per packet, never logged
 * one by one: at most once a minute, one warning says how many there were.
 */
static void report_packet_problems(struct service *s)
{
	struct service_upkeep *u = &s->upkeep;
	char text[768];
	size_t len = 0;
	time_t now = time(NULL);
	struct workers_totals t;

	if (now - u->problems_reported < PROBLEM_REPORT_SECONDS)
		return;
	service_packet_totals(s, &t);
	for (int st = PACKET_OK + 1; st < PACKET_STATUS_COUNT; st++) {
		uint64_t delta = t.stats.status[st] - u->problems_seen[st];
		u->problems_seen[st] = t.stats.status[st];
		if (delta == 0 || st == PACKET_NOT_IP || len >= sizeof(text) - 64)
			continue;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%llu %s", len ? ", " : "",
					(unsigned long long)delta, packet_status_name((enum packet_status)st));
	}
	if (len) {
		log_warning("packets not checked in full since the last report: %s (see stats, parse)", text);
		u->problems_reported = now;
	}
	if (t.queues.reject_unruled > u->unruled_seen) {
		log_warning("%llu rejected packets came back to the queue and were dropped: no rule ahead of the queue "
			    "rule rejects mark 0x%x (meta mark 0x%x reject)",
			    (unsigned long long)(t.queues.reject_unruled - u->unruled_seen), s->cfg->reject_mark,
			    s->cfg->reject_mark);
		u->unruled_seen = t.queues.reject_unruled;
		u->problems_reported = now;
	}
	uint64_t event_errors = s->engine.stats.event_errors + events_lost(s->events);
	if (event_errors > u->event_errors_seen) {
		const char *why = events_error(s->events)[0] ? events_error(s->events) : s->engine.event_error;
		log_error("%llu events could not be written since the last report (see stats, event_errors): %s",
			  (unsigned long long)(event_errors - u->event_errors_seen), why);
		u->event_errors_seen = event_errors;
		u->problems_reported = now;
	}
	if (t.dropped + t.if_dropped > u->drops_seen) {
		log_warning("the kernel dropped %llu packets since the last report (more [capture] buffer_size?)",
			    (unsigned long long)(t.dropped + t.if_dropped - u->drops_seen));
		u->drops_seen = t.dropped + t.if_dropped;
		u->problems_reported = now;
	}
}

/* More entries ran out than a slice takes: the next slice after the loop's other events. */
static void expire_more(struct service *s)
{
	static const struct timeval now = { 0, 0 };

	evtimer_add(s->upkeep.expiring, &now);
}

static void expiring_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;

	(void)fd;
	(void)what;
	if (service_expire(s, service_now()))
		expire_more(s);
	service_sync(s, false); /* written; the next second's housekeeping fsyncs them */
}

static void housekeeping_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;

	(void)fd;
	(void)what;
	if (!evtimer_pending(s->upkeep.expiring, NULL) && service_expire(s, service_now()))
		expire_more(s);
	service_sync(s, true); /* everysec's second; with always, the expiries */
	service_cluster_tick(s);
	service_action_check(s);
	report_packet_problems(s);
	service_rebuild_if_outgrown(s);
	service_state_housekeeping(s);
}

void service_upkeep_init(struct service *s)
{
	s->upkeep.started = time(NULL);
	s->upkeep.last_reload_ok = true; /* the configuration of the start was taken: alerts on a failed reload stay quiet */
}

int service_upkeep_start(struct service *s)
{
	struct timeval second = { .tv_sec = 1 };

	s->upkeep.timer = event_new(s->base, -1, EV_PERSIST, housekeeping_cb, s);
	s->upkeep.expiring = evtimer_new(s->base, expiring_cb, s);
	if (s->upkeep.timer == NULL || s->upkeep.expiring == NULL || event_add(s->upkeep.timer, &second) < 0) {
		log_error("cannot start the housekeeping timer");
		return -1;
	}
	return 0;
}

void service_upkeep_stop(struct service *s)
{
	if (s->upkeep.timer)
		event_free(s->upkeep.timer);
	s->upkeep.timer = NULL;
	if (s->upkeep.expiring)
		event_free(s->upkeep.expiring);
	s->upkeep.expiring = NULL;
}

/* The process's own figures, from the kernel: what Prometheus's process_* metrics say. */
static json_t *process_json(time_t started)
{
	unsigned long long pages = 0, resident = 0;
	unsigned long long page = (unsigned long long)sysconf(_SC_PAGESIZE);
	FILE *statm = fopen("/proc/self/statm", "re");
	DIR *fds = opendir("/proc/self/fd");
	json_int_t open_fds = -1; /* less the directory's own descriptor, counted below */
	struct rusage ru = { 0 };
	struct rlimit rl = { 0 };

	if (statm == NULL || fscanf(statm, "%llu %llu", &pages, &resident) != 2)
		pages = resident = 0;
	if (statm)
		fclose(statm);
	for (struct dirent *d; fds && (d = readdir(fds)) != NULL;)
		open_fds += d->d_name[0] != '.';
	if (fds)
		closedir(fds);
	getrusage(RUSAGE_SELF, &ru);
	getrlimit(RLIMIT_NOFILE, &rl);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	return json_pack("{s:I,s:f,s:I,s:I,s:I,s:I}", "start_time_seconds", (json_int_t)started, "cpu_seconds", cpu,
			 "resident_memory_bytes", (json_int_t)(resident * page), "virtual_memory_bytes",
			 (json_int_t)(pages * page), "open_fds", fds ? open_fds : 0, "max_fds",
			 (json_int_t)(rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : rl.rlim_cur));
}

void service_upkeep_stats(const struct service *s, json_t *o)
{
	json_object_set_new(o, "uptime_seconds", json_integer((json_int_t)(time(NULL) - s->upkeep.started)));
	json_object_set_new(o, "process", process_json(s->upkeep.started));
}
