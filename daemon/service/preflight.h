/* preflight.h - what a start needs from the system: made where it can be, checked by -n. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_PREFLIGHT_H
#define BLOOMD_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * The directory the control socket lives in (/run/bloomd): when it is
 * missing, make it (mode 0755) and, when running as root with a [service]
 * user, give it to that user, as systemd's RuntimeDirectory= would. Its own
 * parent must exist. Returns 0, or -1 with a message naming the directory.
 */
int preflight_socket_dir(const char *socket_path, const char *user, char *err, size_t errlen);

/* What this run would use, as main decides it from the options and the configuration. */
struct preflight_plan {
	const char *interface;     /* NULL: none */
	char *const *files;        /* pcap files to replay */
	size_t nfiles;
	bool socket;               /* the control socket */
	bool store;                /* the state directory */
	bool xdp;                  /* mode = xdp on interface */
};

typedef void (*preflight_problem_cb)(void *ctx, const char *message);

/*
 * Check, without changing anything, what a start with this configuration
 * and plan would need: the state directory and the socket's directory exist
 * or can be made, the socket path fits, the user and group exist, the output
 * files can be written, the replay files read, the interface exists, the
 * BPF filter compiles, the nftables sets of [action] exist, and for mode =
 * xdp that the kernel takes the XDP program (BPF, and the capabilities to
 * load it; attaching is left to the start). Each problem is reported through on_problem, naming
 * the key and the path; returns their number.
 */
unsigned preflight_check(const struct config *cfg, const struct preflight_plan *plan,
			 preflight_problem_cb on_problem, void *ctx);

#endif
