/* privilege.h - giving up privileges once the capture is open. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_PRIVILEGE_H
#define BLOOMD_PRIVILEGE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Called once the capture is open, the socket bound and the state loaded:
 * when running as root and user is set, give the files in own (the state
 * directory and what is in it, the socket) to user (and to its group,
 * unless keep_group: the socket keeps [control] group), then switch to
 * user and its groups. Then, whoever bloomd runs as, give up every
 * capability (effective, permitted, inheritable, ambient) and the means to
 * regain any (no_new_privs), but those keep names: PRIVILEGE_NET_ADMIN, which
 * the kernel checks on every verdict sent to a netfilter queue and on
 * nftables; PRIVILEGE_BPF (CAP_BPF, CAP_PERFMON), with which mode = xdp
 * loads a larger program later and swaps it in.
 * Returns 0, or -1 with a message: a process that was to switch users and
 * could not must not go on as root.
 */
struct privilege_file {
	const char *path;          /* NULL: none */
	bool keep_group;
};

#define PRIVILEGE_NET_ADMIN 1u
#define PRIVILEGE_BPF 2u

int privilege_drop(const char *user, const struct privilege_file *own, size_t nown, unsigned keep,
		   char *err, size_t errlen);

#endif
