/* service_rebuild.h - the filters rebuilt in the background: on request, after a reload, when they outgrow their shape. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_REBUILD_H
#define BLOOMD_SERVICE_REBUILD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "service.h"
#include "state_rebuild.h"

/* Owned by: service_rebuild.c */
struct service_rebuilding {
	struct state_rebuild *task;      /* the one running, or NULL */
	bool again;                /* another when it is done: the settings changed, or a client asked */
	unsigned again_rounds;     /* its rounds (0: the configuration's) */
	uint64_t again_waiter;     /* the client that asked for it, or 0 */
	uint64_t waiter;           /* the control client waiting for it, or 0 */
	uint64_t count;
	struct state_rebuild_result last;
};

/* At start (once the privileges are given up), filters built online: their offline rounds in a background rebuild (logged). */
void service_rebuild_optimise(struct service *s);
/* The filter settings changed (a reload): a rebuild now, or after the one running. */
void service_rebuild_settings_changed(struct service *s);
/* Housekeeping: with auto_rebuild, a rebuild when the filters have outgrown their shape. */
void service_rebuild_if_outgrown(struct service *s);
/* stats' "rebuild"; the one running stopped (bloomd stops). */
json_t *service_rebuild_stats(const struct service *s);
void service_rebuild_cancel(struct service *s);

#endif
