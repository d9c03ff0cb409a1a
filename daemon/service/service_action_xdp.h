/* service_action_xdp.h - mode = xdp: the XDP set kept equal to the dropping and pass lists, its drops reported. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_ACTION_XDP_H
#define BLOOMD_SERVICE_ACTION_XDP_H

#include <jansson.h>
#include <stdbool.h>

#include "log.h"
#include "service.h"

struct action_xdp;

/* Owned by: service_action_xdp.c */
struct service_action_xdp {
	struct action_xdp *program;       /* [capture] mode = xdp, or NULL */
	char interface[32];
	char pin_path[512];        /* [capture] xdp_pin_dir/interface */
	struct log_limit errors_logged;
};

/*
 * The changes recorded since the last propagation made to the XDP set
 * (every entry again when the log cannot say which, or the lists' actions
 * changed).
 */
void service_action_xdp_sync(struct service *s);
/* The program loaded and filled (-1 logged); then attached, once the changes are recorded. */
int service_action_xdp_open(struct service *s, const char *interface);
int service_action_xdp_attach(struct service *s);
/* The program detached (unless pinned) and freed. */
void service_stop_xdp(struct service *s);
/* Whether the XDP set follows the lists; stats' "xdp" (NULL: not in mode = xdp). */
bool service_action_xdp_on(const struct service *s);
json_t *service_action_xdp_stats(const struct service *s);

#endif
