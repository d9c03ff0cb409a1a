/* events.h - matches out, to files: one JSON object a line, and a pcap of the matched packets. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_EVENTS_H
#define BLOOMD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "alert.h"

struct events;

/* What the outputs are, and how events look. */
struct events_options {
	const char *json_path;    /* "-" for stdout, NULL for none */
	const char *pcap_path;    /* NULL for none; opened at the first match, with its link type */
	unsigned snaplen;
	unsigned filemode;        /* the files' mode, whatever the umask */
	const char *host;         /* eve's host (the sensor's name), NULL for none */
	bool extended;            /* matches and blocked at the top too, not only in alert.context */
};

/* Open the outputs: NULL with a message on failure. */
struct events *events_open(const struct events_options *o, char *err, size_t errlen);

/*
 * Write one event for a packet with n confirmed hits (n > 0) and their
 * labels (p->labels). Returns 0, or -1 with a message (a write error; the
 * caller reports it).
 */
int events_write(struct events *ev, const struct event_packet *p, const struct matcher_found *hits, size_t n,
		 char *err, size_t errlen);

/*
 * Where events go before the file: sink takes each line (with its newline)
 * and returns 0, or -1 when it cannot take it now; the line then goes to the
 * events file, if there is one, and is counted (events_sink_refused).
 */
typedef int (*event_sink_cb)(void *ctx, const char *line, size_t len);
void events_set_sink(struct events *ev, event_sink_cb cb, void *ctx);
uint64_t events_sink_refused(const struct events *ev);

/*
 * A line the sink took and could not deliver after all (its Redis answered
 * an error, or the connection dropped with it in flight): to the events
 * file, counted as the sink's refusals are. -1 when there is no file or it
 * cannot be written: the event is lost, and counted (events_lost). So are
 * the events the file's buffer held when a write or a flush of it failed
 * (events_flush; a full disk, say): none is lost uncounted.
 */
int events_write_fallback(struct events *ev, const char *line, size_t len);
uint64_t events_lost(const struct events *ev);
/* Why the events file last failed (strerror), or "". */
const char *events_error(const struct events *ev);

/* Push buffered events out (after each batch of packets). */
void events_flush(struct events *ev);

/* Matched packets left out of the pcap because their link type differs from the file's. */
uint64_t events_pcap_skipped(const struct events *ev);

void events_close(struct events *ev);


#endif
