/* alert.h - what the engine hands on about a match: the packet, its hits, their labels. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ALERT_H
#define BLOOMD_ALERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "entry.h"
#include "frame.h"
#include "handshake.h"
#include "matcher_view.h"
#include "packet.h"

/*
 * The engine (packet layer) does no I/O: it emits each alert through a
 * callback (alert_emit_cb), which the daemon points at events.h's writer.
 */

/* The packet an event is about. */
struct event_packet {
	struct timespec ts;
	uint64_t index;            /* 1-based in its file; live: since start */
	const char *filename;      /* the pcap file, or NULL when live */
	const char *interface;     /* the interface, or NULL when replaying */
	int link;
	const uint8_t *frame;
	size_t caplen, wirelen;
	const struct packet_view *view;
	enum verdict verdict;      /* inline: dropped or rejected is eve's action "blocked" */
	enum sender_proof sender;  /* whether a TCP handshake proved its sender, or why not */
	const uint8_t *blocked[2]; /* addresses this packet put into a blocking set ([action]) */
	size_t nblocked;
	const struct event_label *labels; /* each hit's */
	size_t top;                /* the hit whose labels the alert carries (the most severe) */
	const char *const *list_names; /* by holder bit (NULL or "": none), to name every list holding a hit */
};

/* What an alert says of the entry it is about: eve's alert object, from its list. */
struct event_label {
	const char *list, *signature;
	char category[ENTRY_CATEGORY_MAX]; /* "" for none */
	unsigned severity, rev;
	uint32_t sid;
};

/* Fill *out for entry (kind, key) with these holders (matcher.h); false: use the defaults. */
typedef bool (*event_label_cb)(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len, uint32_t holders,
			       struct event_label *out);

/*
 * Emit one alert for a packet with n confirmed hits (n > 0) and their labels
 * (p->labels): 0, or -1 with a message (the engine counts and reports it).
 */
typedef int (*alert_emit_cb)(void *ctx, const struct event_packet *p, const struct matcher_found *hits, size_t n,
			     char *err, size_t errlen);

#endif
