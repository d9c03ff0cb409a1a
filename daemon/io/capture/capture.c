/* capture.c - libpcap sources (live interfaces and pcap files) inside the libevent loop. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "capture.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

/* Packets copied out of libpcap's buffer until they are handed on together. */
struct held_packets {
	struct capture_packet p[PACKET_BATCH_MAX];
	size_t count;
	struct frame_copies copies; /* their frames */
};

struct capture {
	pcap_t *pcap;
	char *name;
	bool live;
	int link;
	uint64_t packets;
	struct event *ev;          /* file: activated by hand; live: the fd */
	struct event *timer;       /* live: a read again while libpcap asks for one */
	struct timeval timer_every; /* what the timer runs at; zero when it does not */
	struct capture_callbacks cb;
	bool finished;
	long ns_per_tick;          /* of the handle's timestamp fraction: 1 (nano) or 1000 (micro) */
	struct held_packets held;
	struct capture_packet alone; /* a packet handed on by itself */
};

static void hand_on(struct capture *cap)
{
	size_t count = cap->held.count;

	if (count == 0)
		return;
	cap->held.count = 0;
	frame_copies_clear(&cap->held.copies);
	cap->cb.packets(cap->cb.ctx, cap, cap->held.p, count);
}

/*
 * Where packet h goes: its slot in the batch, its frame copied beside the
 * others (the batch handed on first when full); or, when no batch is wanted
 * or no copy can be had, cap->alone, its frame libpcap's. Filled in place:
 * a packet built on the stack and copied in cost a stalled load a packet.
 */
static struct capture_packet *slot_for(struct capture *cap, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct held_packets *held = &cap->held;
	const uint8_t *copy = NULL;

	if (cap->cb.batch_max > 1 && (copy = frame_copy(&held->copies, bytes, h->caplen)) == NULL) {
		hand_on(cap);
		copy = frame_copy(&held->copies, bytes, h->caplen);
	}
	if (copy == NULL) {
		cap->alone.frame = bytes;
		return &cap->alone;
	}
	held->p[held->count].frame = copy;
	return &held->p[held->count++];
}

static void on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct capture *cap = (struct capture *)user;
	struct capture_packet *p = slot_for(cap, h, bytes);
	/* tv_usec holds nanoseconds when the handle was opened for them */
	long nsec = (long)h->ts.tv_usec * cap->ns_per_tick;

	p->link = cap->link;
	p->caplen = h->caplen;
	p->wirelen = h->len;
	p->ts.tv_sec = h->ts.tv_sec;
	p->ts.tv_nsec = nsec < 0 || nsec >= 1000000000 ? 0 : nsec; /* a corrupt fraction: keep the second */
	p->index = ++cap->packets;
	if (p == &cap->alone)
		cap->cb.packets(cap->cb.ctx, cap, p, 1);
	else if (cap->held.count >= cap->cb.batch_max || cap->held.count == PACKET_BATCH_MAX)
		hand_on(cap);
}

static void finish(struct capture *cap, const char *error)
{
	if (cap->finished)
		return;
	cap->finished = true;
	if (cap->ev)
		event_del(cap->ev);
	if (cap->timer)
		event_del(cap->timer);
	cap->cb.done(cap->cb.ctx, cap, error);
}

/* One batch of packets, then the batch callback; returns pcap_dispatch's count. */
static int dispatch_batch(struct capture *cap)
{
	int n = pcap_dispatch(cap->pcap, CAPTURE_BATCH, on_packet, (u_char *)cap);

	hand_on(cap);
	if (cap->cb.batch)
		cap->cb.batch(cap->cb.ctx, cap);
	return n;
}

static void replay_cb(evutil_socket_t fd, short what, void *arg)
{
	struct capture *cap = arg;
	int n = dispatch_batch(cap);

	(void)fd;
	(void)what;
	if (n > 0)
		event_active(cap->ev, EV_READ, 0); /* more to read: after the loop's other events */
	else
		finish(cap, n == 0 ? NULL : pcap_geterr(cap->pcap));
}

/*
 * libpcap may ask, at any read, to be read again within a time, and stop asking later.
 * Linux's asks after the interface goes down: only a read on a timeout then sees that
 * the interface is gone, as the socket says nothing more. Not less than 50 ms apart
 * (libpcap asks for 1), so an interface left down costs 20 reads a second, not 1,000.
 */
static int follow_read_timeout(struct capture *cap)
{
	static const struct timeval at_least = { 0, 50000 };
	const struct timeval *asked = pcap_get_required_select_timeout(cap->pcap);
	struct timeval every = { 0, 0 };

	if (asked != NULL)
		every = evutil_timercmp(asked, &at_least, <) ? at_least : *asked;
	if (evutil_timercmp(&every, &cap->timer_every, ==))
		return 0;
	cap->timer_every = every;
	if (asked == NULL)
		return event_del(cap->timer);
	return event_add(cap->timer, &every);
}

static void live_cb(evutil_socket_t fd, short what, void *arg)
{
	struct capture *cap = arg;

	(void)fd;
	(void)what;
	if (dispatch_batch(cap) < 0)
		finish(cap, pcap_geterr(cap->pcap));
	else if (follow_read_timeout(cap) < 0)
		finish(cap, "cannot set the capture's read timer");
}

static int set_bpf(struct capture *cap, const char *bpf, char *err, size_t errlen)
{
	struct bpf_program prog;

	if (bpf == NULL || bpf[0] == '\0')
		return 0;
	if (pcap_compile(cap->pcap, &prog, bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		error_set(err, errlen, "bad bpf filter '%s': %s", bpf, pcap_geterr(cap->pcap));
		return -1;
	}
	int rc = pcap_setfilter(cap->pcap, &prog);
	pcap_freecode(&prog);
	if (rc < 0) {
		error_set(err, errlen, "cannot set bpf filter: %s", pcap_geterr(cap->pcap));
		return -1;
	}
	return 0;
}

int capture_check_bpf(const char *bpf, unsigned snaplen, char *err, size_t errlen)
{
	struct bpf_program prog;
	pcap_t *dead;

	if (bpf == NULL || bpf[0] == '\0')
		return 0;
	if ((dead = pcap_open_dead(DLT_EN10MB, (int)snaplen)) == NULL) {
		error_set(err, errlen, "out of memory");
		return -1;
	}
	int rc = pcap_compile(dead, &prog, bpf, 1, PCAP_NETMASK_UNKNOWN);
	if (rc < 0)
		error_set(err, errlen, "bad bpf filter '%s': %s", bpf, pcap_geterr(dead));
	else
		pcap_freecode(&prog);
	pcap_close(dead);
	return rc < 0 ? -1 : 0;
}

static struct capture *capture_alloc(const char *name, const struct capture_callbacks *cb)
{
	struct capture *cap = calloc(1, sizeof(*cap));

	if (cap == NULL)
		return NULL;
	cap->name = strdup(name);
	if (cap->name == NULL) {
		free(cap);
		return NULL;
	}
	cap->cb = *cb;
	cap->ns_per_tick = 1;
	return cap;
}

/* A file source from a path (fd < 0) or an open descriptor (taken over, path only its name). */
static struct capture *open_file(struct event_base *base, const char *path, int fd, const char *bpf,
				 const struct capture_callbacks *cb, char *err, size_t errlen)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct capture *cap = capture_alloc(path, cb);
	FILE *f = NULL;

	if (cap == NULL || (fd >= 0 && (f = fdopen(fd, "rb")) == NULL)) {
		error_set(err, errlen, "out of memory");
		if (fd >= 0)
			close(fd);
		capture_free(cap);
		return NULL;
	}
	cap->pcap = f ? pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf)
		      : pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (cap->pcap == NULL) {
		if (f)
			fclose(f);
		error_set(err, errlen, "%s", errbuf);
		goto fail;
	}
	cap->link = pcap_datalink(cap->pcap);
	cap->ns_per_tick = pcap_get_tstamp_precision(cap->pcap) == PCAP_TSTAMP_PRECISION_NANO ? 1 : 1000;
	if (set_bpf(cap, bpf, err, errlen) < 0)
		goto fail;
	cap->ev = event_new(base, -1, 0, replay_cb, cap);
	if (cap->ev == NULL) {
		error_set(err, errlen, "cannot create an event");
		goto fail;
	}
	event_active(cap->ev, EV_READ, 0);
	return cap;
fail:
	capture_free(cap);
	return NULL;
}

struct capture *capture_open_file(struct event_base *base, const char *path, const char *bpf,
				  const struct capture_callbacks *cb, char *err, size_t errlen)
{
	return open_file(base, path, -1, bpf, cb, err, errlen);
}

struct capture *capture_open_fd(struct event_base *base, int fd, const char *name, const char *bpf,
				const struct capture_callbacks *cb, char *err, size_t errlen)
{
	return open_file(base, name, fd, bpf, cb, err, errlen);
}

static int activate(struct capture *cap, const struct capture_live_options *o, char *err,
		    size_t errlen)
{
	int rc;

	pcap_set_snaplen(cap->pcap, (int)o->snaplen);
	pcap_set_promisc(cap->pcap, o->promisc);
	pcap_set_timeout(cap->pcap, 100);
	if (o->buffer_size)
		pcap_set_buffer_size(cap->pcap, (int)o->buffer_size);
	/* Nanoseconds where the platform gives them; either way the fraction is read as what it is. */
	(void)pcap_set_tstamp_precision(cap->pcap, PCAP_TSTAMP_PRECISION_NANO);
	rc = pcap_activate(cap->pcap);
	if (rc < 0) {
		const char *why = rc == PCAP_ERROR ? pcap_geterr(cap->pcap) : pcap_statustostr(rc);
		error_set(err, errlen, "cannot capture on %s: %s", o->interface, why);
		return -1;
	}
	cap->ns_per_tick = pcap_get_tstamp_precision(cap->pcap) == PCAP_TSTAMP_PRECISION_NANO ? 1 : 1000;
	return 0;
}

/*
 * By flow hash, so a flow's packets stay with one member; defragmented first,
 * so a fragment goes where its flow does.
 */
static int join_fanout(struct capture *cap, unsigned group, char *err, size_t errlen)
{
	uint32_t arg = (group & 0xffff) | (uint32_t)(PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG) << 16;

	if (group == 0)
		return 0;
	if (setsockopt(pcap_fileno(cap->pcap), SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) < 0) {
		error_set(err, errlen, "%s: cannot join fanout group %u: %s", cap->name, group, strerror(errno));
		return -1;
	}
	return 0;
}

struct capture *capture_open_live(struct event_base *base, const struct capture_live_options *o,
				  const struct capture_callbacks *cb, char *err, size_t errlen)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct capture *cap = capture_alloc(o->interface, cb);
	int fd;

	if (cap == NULL) {
		error_set(err, errlen, "out of memory");
		return NULL;
	}
	cap->live = true;
	cap->pcap = pcap_create(o->interface, errbuf);
	if (cap->pcap == NULL) {
		error_set(err, errlen, "cannot capture on %s: %s", o->interface, errbuf);
		goto fail;
	}
	if (activate(cap, o, err, errlen) < 0 || set_bpf(cap, o->bpf, err, errlen) < 0 ||
	    join_fanout(cap, o->fanout_group, err, errlen) < 0)
		goto fail;
	cap->link = pcap_datalink(cap->pcap);
	if (pcap_setnonblock(cap->pcap, 1, errbuf) < 0 || (fd = pcap_get_selectable_fd(cap->pcap)) < 0) {
		error_set(err, errlen, "%s cannot be polled: %s", o->interface, errbuf);
		goto fail;
	}
	cap->ev = event_new(base, fd, EV_READ | EV_PERSIST, live_cb, cap);
	if (cap->ev == NULL || event_add(cap->ev, NULL) < 0) {
		error_set(err, errlen, "cannot watch %s", o->interface);
		goto fail;
	}
	cap->timer = event_new(base, -1, EV_PERSIST, live_cb, cap);
	if (cap->timer == NULL || follow_read_timeout(cap) < 0) {
		error_set(err, errlen, "cannot start the capture timer");
		goto fail;
	}
	return cap;
fail:
	capture_free(cap);
	return NULL;
}

void capture_free(struct capture *cap)
{
	if (cap == NULL)
		return;
	if (cap->ev)
		event_free(cap->ev);
	if (cap->timer)
		event_free(cap->timer);
	if (cap->pcap)
		pcap_close(cap->pcap);
	frame_copies_free(&cap->held.copies);
	free(cap->name);
	free(cap);
}

const char *capture_name(const struct capture *cap)
{
	return cap->name;
}

bool capture_is_live(const struct capture *cap)
{
	return cap->live;
}

int capture_link(const struct capture *cap)
{
	return cap->link;
}

const char *capture_link_name(const struct capture *cap)
{
	const char *name = pcap_datalink_val_to_name(cap->link);

	return name ? name : "unknown";
}

uint64_t capture_packets(const struct capture *cap)
{
	return cap->packets;
}

int capture_stats(struct capture *cap, uint64_t *received, uint64_t *dropped, uint64_t *if_dropped)
{
	struct pcap_stat st;

	if (!cap->live || pcap_stats(cap->pcap, &st) < 0)
		return -1;
	*received = st.ps_recv;
	*dropped = st.ps_drop;
	*if_dropped = st.ps_ifdrop;
	return 0;
}
