/* action_monitor.h - what others change in an nftables table, as the kernel announces it (netlink, NFNLGRP_NFTABLES). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ACTION_MONITOR_H
#define BLOOMD_ACTION_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The kernel announces every change to the ruleset to the listeners of
 * NFNLGRP_NFTABLES, a transaction at a time, each closed by a new generation
 * that names the process that made it. action_monitor reads them without
 * blocking, keeps those that touch one inet table, and hands on the
 * transactions of other processes: an element added to or deleted from one
 * of its sets (the key as the kernel holds it), or anything else (a rule,
 * chain or set made or deleted, the table itself). Its owner pauses it
 * around its own commits, which it need not hear about, and which at a
 * million elements would overflow any socket buffer.
 */
struct action_monitor;

struct action_monitor_change {
	bool element;              /* an element; else the table's shape (a rule, chain, set, the table) */
	bool added;                /* element: added (else deleted) */
	bool interval_end;         /* element: the end of an interval (its key is the first address past it) */
	char set[64];
	size_t len;                /* element: its key's bytes (4, 16) */
	uint8_t key[16];
};

/* NULL with a message (no netlink, no CAP_NET_ADMIN). */
struct action_monitor *action_monitor_open(const char *table, char *err, size_t errlen);
void action_monitor_close(struct action_monitor *w);
int action_monitor_fd(const struct action_monitor *w);

/* Stop and start hearing the kernel (around one's own commits). */
void action_monitor_pause(struct action_monitor *w);
void action_monitor_resume(struct action_monitor *w);

/*
 * The announcements of the commits made through these netlink sockets (by
 * their port ids) dropped by the kernel before they reach the watch, their
 * new generations alone kept: the watch need not pause around them, so
 * another's commit meanwhile is heard, not guessed at. A socket filter
 * (classic BPF): 0, or -1 (errno) if the kernel refuses it.
 */
int action_monitor_ignore(struct action_monitor *w, const uint32_t *portids, size_t n);

/* Transactions of other processes that did not touch the table: a neighbour's, not tampering. */
uint64_t action_monitor_neighbours(const struct action_monitor *w);

/*
 * Hand on what others changed, read until nothing is pending or for 32
 * datagrams at most (the descriptor stays readable for the rest): 0, or 1
 * when announcements were lost (the socket overflowed, or a transaction
 * changed more than 65,536 things: look at everything), or -1 with a
 * message.
 */
typedef void (*action_monitor_cb)(void *ctx, const struct action_monitor_change *c);
int action_monitor_read(struct action_monitor *w, action_monitor_cb cb, void *ctx, char *err, size_t errlen);

#endif
