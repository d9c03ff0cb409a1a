/* service_upkeep.h - the daemon's own upkeep: the once-a-second housekeeping, problems reported, uptime, reloads. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_UPKEEP_H
#define BLOOMD_SERVICE_UPKEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "packet.h"
#include "service.h"

/* Owned by: service_upkeep.c service_reload.c */
struct service_upkeep {
	struct event *timer;       /* housekeeping, once a second */
	struct event *expiring;    /* the rest of the entries whose time ran out, a slice a turn */
	time_t started;
	time_t last_reload;        /* when the last reload was tried (0: never) */
	bool last_reload_ok;
	time_t problems_reported;  /* the last warning about malformed or dropped packets */
	uint64_t problems_seen[PACKET_STATUS_COUNT], drops_seen, event_errors_seen, unruled_seen;
};

/* service_upkeep.c: started now; housekeeping started (-1 logged) and stopped; stats' uptime and process. */
void service_upkeep_init(struct service *s);
int service_upkeep_start(struct service *s);
void service_upkeep_stop(struct service *s);
void service_upkeep_stats(const struct service *s, json_t *o);

#endif
