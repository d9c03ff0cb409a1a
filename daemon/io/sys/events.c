/* events.c - matches out: one JSON object a line, and a pcap of the matched packets. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "events.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <sys/stat.h>
#include <unistd.h>

#include "communityid.h"
#include "entry.h"
#include "error.h"
#include "jsonline.h"

/*
 * Events are rare and arrive cold, so their cost is mostly jansson's
 * allocations and rendering. Each shape of event (file or live, with or
 * without ports, with or without VLANs) is built once, with its keys in
 * order; an event updates the values in place (a value that did not change
 * is not set again). Match objects come from a pool the same way. The line
 * is rendered by jsonline, with json_dumpb's bytes.
 */
enum {
	SHAPE_LIVE = 1,
	SHAPE_IP = 2,
	SHAPE_PORTS = 4,
	SHAPE_VLAN = 8,
	SHAPES = 16,
};

struct event_shape {
	json_t *obj;                        /* owns the values below */
	json_t *ts, *flow_id, *cnt, *source, *src, *sport, *dst, *dport, *proto, *community, *direction, *vlan;
	json_t *action, *sid, *rev, *signature, *category, *severity; /* of the alert object */
	json_t *attacker_ip, *attacker_port, *target_ip, *target_port; /* alert.source and alert.target */
	json_t *context, *matches;          /* alert.context, and its matches */
	json_t *sender;                     /* alert.context.sender: "verified", or why not */
};

struct match_shape {
	json_t *obj;                        /* owns kind, entry, list, lists and offset */
	json_t *kind, *entry, *list, *lists, *offset;
};

struct events {
	struct event_shape shapes[SHAPES];
	struct match_shape pool[2][MATCHER_MAX_HITS]; /* [with an offset][index in the event] */
	FILE *json;
	bool json_is_stdout;
	char *pcap_path;
	unsigned snaplen, filemode;
	char *host;               /* eve's host, or NULL */
	bool extended;            /* matches and blocked at the top too */
	pcap_t *dead;             /* the handle pcap_dump needs: link type and snaplen */
	pcap_dumper_t *dumper;
	int dump_link;
	uint64_t written, pcap_skipped;
	char *text;               /* scratch for an entry's canonical text */
	event_sink_cb sink;       /* takes each event first, or NULL */
	void *sink_ctx;
	uint64_t sink_refused;    /* events the sink could not take (or deliver): to the file, or dropped */
	uint64_t lost;            /* events the file could not take: handed back by the sink, or lost in a failed flush */
	uint64_t unflushed;       /* lines written to the file's buffer since its last flush */
	char error[200];          /* why the file last failed, or "" */
	char *line;               /* scratch for an event's JSON, LINE_BYTES */
	char stamp[64];           /* the last event's timestamp; its date and time are stamp_len bytes */
	size_t stamp_len;
	time_t stamp_sec;         /* the second they are of */
};

/* An event line is rendered here and written once: json_dumpf writes token by token. */
#define LINE_BYTES (64u << 10)

/*
 * The file's mode, whatever the umask, if it is a regular file bloomd owns
 * (one made by root before the switch to bloomd's user is left as it is).
 */
static int set_mode(int fd, unsigned mode, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) == mode))
		return 0;
	if (fchmod(fd, (mode_t)mode) == 0)
		return 0;
	error_set(err, errlen, "cannot set the mode of %s to %04o: %s", path, mode, strerror(errno));
	return -1;
}

/*
 * Never through a link: it may be opened as root in a directory bloomd's
 * user owns. Not a FIFO either: opening one with no reader, or writing to a
 * slow one, would stop the packet path.
 */
static FILE *open_events_file(const char *path, unsigned mode, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, (mode_t)mode);
	struct stat st;
	FILE *f = NULL;
	/* ENXIO: a FIFO with no reader */
	bool refused = fd < 0 ? errno == ENXIO : fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode);

	if (fd >= 0 && !refused && fcntl(fd, F_SETFL, O_APPEND) == 0) {
		if (set_mode(fd, mode, path, err, errlen) < 0) {
			close(fd);
			return NULL;
		}
		f = fdopen(fd, "a");
	}
	if (f == NULL) {
		error_set(err, errlen, "cannot open events file %s: %s", path,
			  refused ? "not a regular file or a device (a FIFO would stop the packet path)" : strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

struct events *events_open(const struct events_options *o, char *err, size_t errlen)
{
	struct events *ev = calloc(1, sizeof(*ev));

	if (ev == NULL || (ev->text = malloc(ENTRY_TEXT_MAX)) == NULL || (ev->line = malloc(LINE_BYTES)) == NULL ||
	    (o->host && (ev->host = strdup(o->host)) == NULL) ||
	    (o->pcap_path && (ev->pcap_path = strdup(o->pcap_path)) == NULL)) {
		error_set(err, errlen, "out of memory");
		goto fail;
	}
	ev->snaplen = o->snaplen;
	ev->filemode = o->filemode;
	ev->extended = o->extended;
	if (o->json_path && strcmp(o->json_path, "-") == 0) {
		ev->json = stdout;
		ev->json_is_stdout = true;
	} else if (o->json_path && (ev->json = open_events_file(o->json_path, o->filemode, err, errlen)) == NULL) {
		goto fail;
	}
	return ev;
fail:
	events_close(ev);
	return NULL;
}

static int open_dump(struct events *ev, int link, char *err, size_t errlen)
{
	ev->dead = pcap_open_dead_with_tstamp_precision(link, (int)ev->snaplen, PCAP_TSTAMP_PRECISION_NANO);
	if (ev->dead == NULL) {
		error_set(err, errlen, "cannot prepare the match pcap");
		return -1;
	}
	ev->dumper = pcap_dump_open(ev->dead, ev->pcap_path);
	if (ev->dumper == NULL) {
		error_set(err, errlen, "cannot open %s: %s", ev->pcap_path, pcap_geterr(ev->dead));
		pcap_close(ev->dead);
		ev->dead = NULL;
		free(ev->pcap_path);
		ev->pcap_path = NULL; /* do not try again for every packet */
		return -1;
	}
	ev->dump_link = link;
	return 0;
}

static int dump_packet(struct events *ev, const struct event_packet *p, char *err, size_t errlen)
{
	struct pcap_pkthdr hdr;
	bool opened = ev->dumper == NULL;

	if (ev->pcap_path == NULL)
		return 0;
	if (opened && open_dump(ev, p->link, err, errlen) < 0)
		return -1;
	/* A mode that cannot be set is said once, and the packets still go in. */
	int rc = opened ? set_mode(fileno(pcap_dump_file(ev->dumper)), ev->filemode, ev->pcap_path, err, errlen) : 0;
	if (p->link != ev->dump_link) {
		ev->pcap_skipped++;
		return rc;
	}
	hdr.ts.tv_sec = p->ts.tv_sec;
	hdr.ts.tv_usec = p->ts.tv_nsec; /* the dumper was opened for nanoseconds */
	hdr.caplen = (bpf_u_int32)p->caplen;
	hdr.len = (bpf_u_int32)p->wirelen;
	pcap_dump((u_char *)ev->dumper, &hdr, p->frame);
	return rc;
}

/*
 * Text bloomd wrote itself (addresses, numbers, names, hex): ASCII, so
 * jansson need not check it. Set only when it changed: a set allocates.
 */
static void set_ascii(json_t *string, const char *text)
{
	size_t n = strlen(text);

	if (json_string_length(string) != n || memcmp(json_string_value(string), text, n) != 0)
		json_string_setn_nocheck(string, text, n);
}

/*
 * A file or interface name: any bytes. Set only when it changes (it is the same
 * for a whole source); a name that is not UTF-8 has its bytes outside printable
 * ASCII shown as '?', rather than the event keeping the name before it.
 */
static void set_name(json_t *string, const char *name)
{
	if (strcmp(json_string_value(string), name) == 0 || json_string_set(string, name) == 0)
		return;
	char *shown = strdup(name);
	if (shown == NULL) {
		set_ascii(string, "?");
		return;
	}
	error_printable(shown);
	set_ascii(string, shown);
	free(shown);
}

/*
 * Suricata's form, with an offset, not Z: "2026-01-01T00:00:00.001000+0000".
 * The date and time are formatted when the second changes. tm starts as the
 * epoch's, so that a second gmtime refuses (none a capture's 32-bit seconds
 * give) still formats bytes that are defined.
 */
static const char *timestamp(struct events *ev, const struct timespec *ts)
{
	if (ev->stamp_len == 0 || ts->tv_sec != ev->stamp_sec) {
		struct tm tm = { .tm_year = 70, .tm_mday = 1 };
		gmtime_r(&ts->tv_sec, &tm);
		ev->stamp_len = strftime(ev->stamp, sizeof(ev->stamp) - sizeof(".000000+0000"), "%Y-%m-%dT%H:%M:%S", &tm);
		ev->stamp_sec = ts->tv_sec;
	}
	char *fraction = ev->stamp + ev->stamp_len;
	long us = ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000 ? ts->tv_nsec / 1000 : 0;
	fraction[0] = '.';
	for (int i = 6; i >= 1; i--, us /= 10)
		fraction[i] = (char)('0' + us % 10);
	memcpy(fraction + 7, "+0000", sizeof("+0000"));
	return ev->stamp;
}

/* Add key with a placeholder value; returns the value (borrowed). */
static json_t *slot(json_t *obj, const char *key, json_t *placeholder)
{
	json_object_set_new_nocheck(obj, key, placeholder);
	return placeholder;
}

static struct event_shape *shape_for(struct events *ev, unsigned bits)
{
	struct event_shape *s = &ev->shapes[bits];

	if (s->obj != NULL)
		return s;
	s->obj = json_object();
	s->ts = slot(s->obj, "timestamp", json_string(""));
	if (bits & SHAPE_IP)
		s->flow_id = slot(s->obj, "flow_id", json_integer(0));
	json_object_set_new_nocheck(s->obj, "event_type", json_string("alert"));
	s->cnt = slot(s->obj, "pcap_cnt", json_integer(0));
	s->source = slot(s->obj, bits & SHAPE_LIVE ? "in_iface" : "pcap_filename", json_string(""));
	if (ev->host)
		json_object_set_new(s->obj, "host", json_string(ev->host));
	if (bits & SHAPE_IP) {
		s->src = slot(s->obj, "src_ip", json_string(""));
		if (bits & SHAPE_PORTS)
			s->sport = slot(s->obj, "src_port", json_integer(0));
		s->dst = slot(s->obj, "dest_ip", json_string(""));
		if (bits & SHAPE_PORTS)
			s->dport = slot(s->obj, "dest_port", json_integer(0));
		s->proto = slot(s->obj, "proto", json_string(""));
		s->community = slot(s->obj, "community_id", json_string(""));
		if (bits & SHAPE_PORTS)
			s->direction = slot(s->obj, "direction", json_string(""));
	}
	if (bits & SHAPE_VLAN)
		s->vlan = slot(s->obj, "vlan", json_array());
	json_t *alert = slot(s->obj, "alert", json_object());
	s->action = slot(alert, "action", json_string("allowed"));
	json_object_set_new_nocheck(alert, "gid", json_integer(1));
	s->sid = slot(alert, "signature_id", json_integer(0));
	s->rev = slot(alert, "rev", json_integer(0));
	s->signature = slot(alert, "signature", json_string(""));
	s->category = slot(alert, "category", json_string(""));
	s->severity = slot(alert, "severity", json_integer(0));
	if (bits & SHAPE_IP) { /* Suricata's, for a rule with the target keyword: the listed side is the source */
		json_t *source = slot(alert, "source", json_object()), *target = slot(alert, "target", json_object());
		s->attacker_ip = slot(source, "ip", json_string(""));
		s->target_ip = slot(target, "ip", json_string(""));
		if (bits & SHAPE_PORTS) {
			s->attacker_port = slot(source, "port", json_integer(0));
			s->target_port = slot(target, "port", json_integer(0));
		}
	}
	/* bloomd's own detail: where Suricata's schema allows it (what keywords such as dataset add) */
	s->context = slot(alert, "context", json_object());
	s->matches = slot(s->context, "matches", json_array());
	/* Whether a TCP handshake proved the packet's sender (handshake.h): a ban on a forgeable one is a forger's choice. */
	json_object_set_new_nocheck(s->context, "sender_verified", json_false());
	s->sender = slot(s->context, "sender", json_string(""));
	/* Whether alert.source is an address a list names (an address or net hit), not just the packet's sender. */
	json_object_set_new_nocheck(s->context, "source_listed", json_false());
	if (ev->extended) /* and where bloomd 0.9 had it */
		json_object_set_nocheck(s->obj, "matches", s->matches);
	return s;
}

static struct match_shape *match_for(struct events *ev, bool with_offset, size_t i)
{
	struct match_shape *m = &ev->pool[with_offset][i];

	if (m->obj != NULL)
		return m;
	m->obj = json_object();
	m->kind = slot(m->obj, "kind", json_string(""));
	m->entry = slot(m->obj, "entry", json_string(""));
	m->list = slot(m->obj, "list", json_string(""));
	m->lists = slot(m->obj, "lists", json_array());
	if (with_offset)
		m->offset = slot(m->obj, "offset", json_integer(0));
	return m;
}


/* Every list holding an entry, by name, in the order of their holder bits. */
static void name_lists(json_t *lists, uint32_t holders, const char *const *names)
{
	json_array_clear(lists);
	for (unsigned b = 0; names && b < 32; b++)
		if ((holders & (1u << b)) && names[b] && names[b][0])
			json_array_append_new(lists, json_string(names[b]));
}

/* The addresses this packet put into blocking sets: rare, so a key of its own, not in the cached shape. */
static void set_blocked(struct events *ev, struct event_shape *s, const struct event_packet *p)
{
	char buf[INET6_ADDRSTRLEN];

	if (p->nblocked == 0) {
		json_object_del(s->context, "blocked");
		json_object_del(s->obj, "blocked");
		return;
	}
	json_t *blocked = json_array();
	for (size_t i = 0; i < p->nblocked; i++)
		json_array_append_new(blocked, json_string(entry_format_addr(p->blocked[i], p->view->family, buf, sizeof(buf))));
	json_object_set(s->context, "blocked", blocked);
	if (ev->extended)
		json_object_set(s->obj, "blocked", blocked);
	json_decref(blocked);
}

/*
 * Whether the entry hit holds the packet's destination and not its source:
 * an address or net there. A pair's first address is the packet's source,
 * and a signature's sender is it too.
 */
static bool listed_side_is_dst(const struct matcher_found *hit, const struct packet_view *v)
{
	size_t alen = v->family == 4 ? 4 : 16;

	if (hit->kind == ENTRY_ADDR && hit->len == alen)
		return memcmp(hit->key, v->src, alen) != 0 && memcmp(hit->key, v->dst, alen) == 0;
	if (hit->kind == ENTRY_NET && hit->len == alen + 1)
		return !entry_net_holds(hit->key, v->src, alen) && entry_net_holds(hit->key, v->dst, alen);
	return false;
}

/* alert.source (the listed side, the attacker to a tool that bans it) and alert.target (the other). */
static void set_sides(struct event_shape *s, const struct packet_view *v, bool dst_listed, bool ports)
{
	char buf[INET6_ADDRSTRLEN];

	set_ascii(s->attacker_ip, entry_format_addr(dst_listed ? v->dst : v->src, v->family, buf, sizeof(buf)));
	set_ascii(s->target_ip, entry_format_addr(dst_listed ? v->src : v->dst, v->family, buf, sizeof(buf)));
	if (ports) {
		json_integer_set(s->attacker_port, dst_listed ? v->dport : v->sport);
		json_integer_set(s->target_port, dst_listed ? v->sport : v->dport);
	}
}

/* The event's JSON object, owned by ev: valid until the next event. */
static json_t *event_json(struct events *ev, const struct event_packet *p, const struct matcher_found *hits,
			  size_t n)
{
	const struct packet_view *v = p->view;
	unsigned bits = (p->interface ? SHAPE_LIVE : 0) | (v->family ? SHAPE_IP : 0) |
			(v->family && v->l4 != PACKET_L4_NONE ? SHAPE_PORTS : 0) | (v->nvlans ? SHAPE_VLAN : 0);
	struct event_shape *s = shape_for(ev, bits);
	char buf[INET6_ADDRSTRLEN + 32];

	set_ascii(s->ts, timestamp(ev, &p->ts));
	json_integer_set(s->cnt, (json_int_t)p->index);
	set_name(s->source, p->interface ? p->interface : p->filename ? p->filename : "");
	if (bits & SHAPE_IP) {
		set_ascii(s->src, entry_format_addr(v->src, v->family, buf, sizeof(buf)));
		set_ascii(s->dst, entry_format_addr(v->dst, v->family, buf, sizeof(buf)));
		set_ascii(s->proto, packet_proto_name(v->ip_proto, buf, sizeof(buf)));
		char id[COMMUNITYID_LEN];
		communityid_of(v, 0, id);
		set_ascii(s->community, id);
		/* The same both ways, as the Community ID is; kept within a double's exact integers. */
		json_integer_set(s->flow_id, (json_int_t)(XXH3_64bits(id, strlen(id)) & ((1ULL << 53) - 1)));
	}
	if (bits & SHAPE_PORTS) {
		json_integer_set(s->sport, v->sport);
		json_integer_set(s->dport, v->dport);
		/* No flow state says who opened it: the side with the lower port is taken for the server. */
		set_ascii(s->direction, v->dport <= v->sport ? "to_server" : "to_client");
	}
	if (bits & SHAPE_VLAN) {
		json_array_clear(s->vlan);
		for (unsigned i = 0; i < v->nvlans; i++)
			json_array_append_new(s->vlan, json_integer(v->vlans[i]));
	}
	json_array_clear(s->matches);
	for (size_t i = 0; i < n; i++) {
		bool sig = hits[i].kind == ENTRY_SIG;
		struct match_shape *ms = match_for(ev, sig, i);
		set_ascii(ms->kind, entry_kind_name(hits[i].kind));
		set_ascii(ms->entry, entry_format_value(hits[i].kind, hits[i].key, hits[i].len, ev->text, ENTRY_TEXT_MAX));
		set_name(ms->list, p->labels[i].list);
		name_lists(ms->lists, hits[i].holders, p->list_names);
		if (sig)
			json_integer_set(ms->offset, hits[i].offset);
		json_array_append(s->matches, ms->obj);
	}
	set_ascii(s->action, p->verdict != VERDICT_ACCEPT ? "blocked" : "allowed");
	json_object_set_new_nocheck(s->context, "sender_verified", json_boolean(p->sender == SENDER_VERIFIED));
	set_ascii(s->sender, sender_proof_name(p->sender));
	json_object_set_new_nocheck(s->context, "source_listed",
				    json_boolean(hits[p->top].kind == ENTRY_ADDR || hits[p->top].kind == ENTRY_NET));
	set_blocked(ev, s, p);
	const struct event_label *top = &p->labels[p->top];
	json_integer_set(s->sid, top->sid);
	json_integer_set(s->rev, top->rev);
	set_name(s->signature, top->signature);
	set_name(s->category, top->category);
	json_integer_set(s->severity, top->severity);
	if (bits & SHAPE_IP)
		set_sides(s, v, listed_side_is_dst(&hits[p->top], v), bits & SHAPE_PORTS);
	return s->obj;
}

/* The event's line (with its newline) in ev->line, or in *big (caller frees) for a very large one. */
static size_t render_line(struct events *ev, const json_t *o, char **big)
{
	size_t len = jsonline_render(o, ev->line, LINE_BYTES - 1);

	*big = NULL;
	if (len > 0) {
		ev->line[len] = '\n';
		return len + 1;
	}
	char *text = json_dumps(o, JSON_COMPACT); /* an event with very many matches, or deeper than jsonline goes */
	if (text == NULL)
		return 0;
	size_t n = strlen(text);
	char *grown = realloc(text, n + 2);
	if (grown == NULL) {
		free(text);
		return 0;
	}
	grown[n] = '\n';
	grown[n + 1] = '\0';
	*big = grown;
	return n + 1;
}

/*
 * The file failed (a full disk): what its buffer held is lost, counted and
 * dropped, so that the next events start afresh.
 */
static void file_failed(struct events *ev, int error)
{
	snprintf(ev->error, sizeof(ev->error), "%s", strerror(error));
	ev->lost += ev->unflushed;
	ev->unflushed = 0;
	__fpurge(ev->json);
	clearerr(ev->json);
}

static int write_line(struct events *ev, const json_t *o)
{
	char *big;
	size_t len = render_line(ev, o, &big);
	const char *line = big ? big : ev->line;
	int rc = 0;

	if (len == 0)
		return -1;
	if (ev->sink && ev->sink(ev->sink_ctx, line, len) == 0) {
		free(big);
		return 0;
	}
	ev->sink_refused += ev->sink != NULL;
	if (ev->json && fwrite(line, 1, len, ev->json) != len) {
		rc = -1;
		file_failed(ev, errno); /* this line is the caller's to count; those buffered before it are lost */
	} else if (ev->json) {
		ev->unflushed++;
	}
	free(big);
	return rc;
}

void events_set_sink(struct events *ev, event_sink_cb cb, void *ctx)
{
	ev->sink = cb;
	ev->sink_ctx = ctx;
}

uint64_t events_sink_refused(const struct events *ev)
{
	return ev->sink_refused;
}

int events_write_fallback(struct events *ev, const char *line, size_t len)
{
	ev->sink_refused++;
	/* Flushed at once: this comes from Redis's replies, not after a batch of packets that flushes. */
	if (ev->json == NULL) {
		ev->lost++;
		return -1;
	}
	if (fwrite(line, 1, len, ev->json) != len || fflush(ev->json) != 0) {
		ev->lost++;
		file_failed(ev, errno);
		return -1;
	}
	ev->unflushed = 0;
	return 0;
}

uint64_t events_lost(const struct events *ev)
{
	return ev->lost;
}

const char *events_error(const struct events *ev)
{
	return ev->error;
}

int events_write(struct events *ev, const struct event_packet *p, const struct matcher_found *hits, size_t n,
		 char *err, size_t errlen)
{
	int rc = 0;

	if ((ev->json || ev->sink) && write_line(ev, event_json(ev, p, hits, n)) < 0) {
		error_set(err, errlen, "cannot write an event: %s", strerror(errno));
		rc = -1;
	}
	if (dump_packet(ev, p, err, errlen) < 0)
		rc = -1;
	ev->written++;
	return rc;
}

void events_flush(struct events *ev)
{
	if (ev->json && fflush(ev->json) != 0)
		file_failed(ev, errno);
	else
		ev->unflushed = 0;
	if (ev->dumper)
		pcap_dump_flush(ev->dumper);
}

uint64_t events_pcap_skipped(const struct events *ev)
{
	return ev->pcap_skipped;
}

void events_close(struct events *ev)
{
	if (ev == NULL)
		return;
	if (ev->json && !ev->json_is_stdout)
		fclose(ev->json);
	else if (ev->json)
		fflush(ev->json);
	if (ev->dumper)
		pcap_dump_close(ev->dumper);
	if (ev->dead)
		pcap_close(ev->dead);
	for (int i = 0; i < SHAPES; i++)
		json_decref(ev->shapes[i].obj);
	for (int o = 0; o < 2; o++)
		for (int i = 0; i < MATCHER_MAX_HITS; i++)
			json_decref(ev->pool[o][i].obj);
	free(ev->pcap_path);
	free(ev->text);
	free(ev->line);
	free(ev->host);
	free(ev);
}
