/* commands.h - the control protocol's commands: parse a line, act on the service, reply. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_COMMANDS_H
#define BLOOMD_COMMANDS_H

#include <stddef.h>

#include "control.h"
#include "service.h"
#include "version.h"

/*
 * One command a line, one JSON reply line each ({"ok":true,...} or
 * {"ok":false,"error":"..."}). The commands are those of commands.def, which
 * bloomctl(8) documents; those that change state are refused to peers
 * control_client_trusted does not trust.
 */

/* The commands of one service: the control callbacks take them as ctx. NULL without memory. */
struct commands;
struct commands *commands_new(struct service *s);
/* Once the control socket is closed (service_free): a reply still held goes with them. */
void commands_free(struct commands *cmds);

void commands_line(void *commands, struct control_client *cl, const char *line, size_t len);
void commands_burst(void *commands, bool replied);
void commands_gone(void *commands, struct control_client *cl);

#endif
