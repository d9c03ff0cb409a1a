/* commands.h - the control protocol's commands: parse a line, act on the service, reply. */
#ifndef BLOOMD_COMMANDS_H
#define BLOOMD_COMMANDS_H

#include <stddef.h>

#include "control.h"
#include "service.h"
#include "version.h"

/*
 * One command a line, one JSON reply line each ({"ok":true,...} or
 * {"ok":false,"error":"..."}), documented in bloomctl(8):
 *
 *   add ENTRY [--ttl SECONDS]   del ENTRY   query ENTRY   match ADDRESS
 *   load - (entry lines follow, then a line ".")
 *   list [--kind KIND]   stats   metrics   version   help
 *   rebuild [--rounds N] [--wait]   save   reload
 *   replay - [--wait] [--name NAME] (the pcap passed open, SCM_RIGHTS)
 *
 * add, del, load, rebuild, save, replay and reload change state: they are
 * refused to peers control_client_trusted does not trust.
 */

/* The control callbacks, with the service as ctx. */
void commands_line(void *service, struct control_client *cl, const char *line, size_t len);
void commands_burst(void *service, bool replied);
void commands_gone(void *service, struct control_client *cl);

#endif
