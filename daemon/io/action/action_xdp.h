/* action_xdp.h - the XDP program on an interface: loaded, filled, attached through a link, swapped, and its events. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ACTION_XDP_H
#define BLOOMD_ACTION_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "entry.h"
#include "xdp_layout.h"

/*
 * bpf/xdp_drop.bpf.c, built into bloomd as a libbpf skeleton. One
 * "generation" is the program with its filter and table maps, sized for a
 * number of entries (xdpset.h keeps them); the ring buffer of events and the
 * per-CPU counters outlive generations. A set that fills up is replaced by a
 * larger generation, filled before bpf_link_update swaps it in: the old one
 * drops every listed key until the swap, the new one from it on.
 *
 * The program is attached through a BPF link that only this process holds:
 * when bloomd exits, however it exits, the kernel detaches it and traffic
 * flows (fail-open, as inline's bypass).
 */

struct event_base;
struct action_xdp;

struct action_xdp_options {
	const char *interface;
	enum xdp_attach attach;
	unsigned events_rate;      /* events a second at most */
	unsigned choices;          /* of the filter: the daemon's [filter] choices */
	double bits_per_entry;
	uint64_t capacity;         /* entries the first generation is sized for */
	uint64_t long_capacity;    /* of them with keys longer than XDP_KEY_INLINE (IPv6) */
	bool probe_only;           /* tests: drop on the filter's word for the source address alone */
	const char *pin_path;      /* where a pinned link is (bpffs), or NULL: never look */
	bool pin;                  /* pin the link there: the program outlives bloomd */
};

/* A dropped packet's event, as the program sent it. */
typedef void (*action_xdp_event_cb)(void *ctx, const struct xdp_event *e);

/*
 * Load a first generation (not attached yet: fill it, then xdp_attach).
 * base NULL: no events read (tests). NULL with a message: no BPF, no
 * permission, no such interface.
 */
struct action_xdp *action_xdp_open(struct event_base *base, const struct action_xdp_options *o, action_xdp_event_cb cb, void *ctx, char *err,
		     size_t errlen);
void action_xdp_close(struct action_xdp *x);

/*
 * Attach to the interface: native (in the driver) or generic; auto tries
 * native and, failing, takes generic with the reason in warn (else warn is
 * ""). A link pinned at pin_path (a bloomd before this one, with pin) is
 * taken over instead, its program replaced by this one in one step, so the
 * listed addresses stay dropped across the restart; without pin it is then
 * unpinned, and goes with this process. With pin a new link is pinned
 * there. -1 with a message.
 */
int action_xdp_attach(struct action_xdp *x, char *warn, size_t warnlen, char *err, size_t errlen);
/* Whether xdp_attach took over a pinned link. */
bool action_xdp_adopted(const struct action_xdp *x);
/* "native" or "generic" once attached (as the kernel says), else "detached". */
const char *action_xdp_attach_name(const struct action_xdp *x);

/* As xdpset_put, growing into a new generation when the set is full or due; -1 with a message. */
int action_xdp_put(struct action_xdp *x, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action, char *err,
	    size_t errlen);
bool action_xdp_remove(struct action_xdp *x, enum entry_kind kind, const uint8_t *key, size_t len);
/*
 * xdpset's sweep, across a growth: end is -1 when the program grew (or
 * begin found no memory) meanwhile, and nothing was removed; the caller then
 * finds what to remove itself.
 */
int action_xdp_sweep_begin(struct action_xdp *x);
int action_xdp_sweep_end(struct action_xdp *x);
typedef int (*action_xdp_entry_cb)(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action);
int action_xdp_foreach(const struct action_xdp *x, action_xdp_entry_cb cb, void *ctx);

struct action_xdp_counts {
	uint64_t passed, dropped, exempted, events_suppressed, unparsed;
	uint64_t entries, capacity, generations;
	size_t filter_bytes, table_bytes;
};
void action_xdp_counts(const struct action_xdp *x, struct action_xdp_counts *out);

/* Whether the interface runs bloomd's program now (asked of the kernel: another tool may have detached it). */
bool action_xdp_attached(const struct action_xdp *x);

/* Tests and the benchmark: the program's fd now, and the key's hash as it computes it. */
int action_xdp_program_fd(const struct action_xdp *x);
const struct filter *action_xdp_filter(const struct action_xdp *x);
struct hash128 action_xdp_hash(const struct action_xdp *x, enum entry_kind kind, const uint8_t *key, size_t len);

#endif
