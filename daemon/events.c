/* events.c - matches out: one JSON object a line, and a pcap of the matched packets. */
#include "events.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "error.h"

struct events {
	FILE *json;
	bool json_is_stdout;
	char *pcap_path;
	unsigned snaplen;
	pcap_t *dead;             /* the handle pcap_dump needs: link type and snaplen */
	pcap_dumper_t *dumper;
	int dump_link;
	uint64_t written, pcap_skipped;
	char *text;               /* scratch for an entry's canonical text */
	char *line;               /* scratch for an event's JSON, LINE_BYTES */
};

/* An event line is rendered here and written once: json_dumpf writes token by token. */
#define LINE_BYTES (64u << 10)

struct events *events_open(const char *json_path, const char *pcap_path, unsigned snaplen,
			   char *err, size_t errlen)
{
	struct events *ev = calloc(1, sizeof(*ev));

	if (ev == NULL || (ev->text = malloc(ENTRY_TEXT_MAX)) == NULL ||
	    (ev->line = malloc(LINE_BYTES)) == NULL) {
		error_set(err, errlen, "out of memory");
		goto fail;
	}
	ev->snaplen = snaplen;
	if (json_path && strcmp(json_path, "-") == 0) {
		ev->json = stdout;
		ev->json_is_stdout = true;
	} else if (json_path) {
		ev->json = fopen(json_path, "a");
		if (ev->json == NULL) {
			error_set(err, errlen, "cannot open events file %s: %s", json_path, strerror(errno));
			goto fail;
		}
	}
	if (pcap_path && (ev->pcap_path = strdup(pcap_path)) == NULL) {
		error_set(err, errlen, "out of memory");
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

	if (ev->pcap_path == NULL)
		return 0;
	if (ev->dumper == NULL && open_dump(ev, p->link, err, errlen) < 0)
		return -1;
	if (p->link != ev->dump_link) {
		ev->pcap_skipped++;
		return 0;
	}
	hdr.ts.tv_sec = p->ts.tv_sec;
	hdr.ts.tv_usec = p->ts.tv_nsec; /* the dumper was opened for nanoseconds */
	hdr.caplen = (bpf_u_int32)p->caplen;
	hdr.len = (bpf_u_int32)p->wirelen;
	pcap_dump((u_char *)ev->dumper, &hdr, p->frame);
	return 0;
}

static json_t *ip_text(const uint8_t *addr, int family)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *timestamp(const struct timespec *ts)
{
	char buf[64];
	struct tm tm;
	time_t secs = ts->tv_sec;

	gmtime_r(&secs, &tm);
	size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%06ldZ", ts->tv_nsec / 1000);
	return json_string(buf);
}

static json_t *event_json(struct events *ev, const struct event_packet *p,
			  const struct matcher *m, const struct match_hit *hits, size_t n)
{
	const struct packet_view *v = p->view;
	json_t *o = json_object(), *matches = json_array();
	char proto[8];

	json_object_set_new(o, "timestamp", timestamp(&p->ts));
	json_object_set_new(o, "event_type", json_string("alert"));
	json_object_set_new(o, "pcap_cnt", json_integer((json_int_t)p->index));
	if (p->filename)
		json_object_set_new(o, "pcap_filename", json_string(p->filename));
	if (p->interface)
		json_object_set_new(o, "in_iface", json_string(p->interface));
	if (v->family) {
		json_object_set_new(o, "src_ip", ip_text(v->src, v->family));
		if (v->l4 != PACKET_L4_NONE)
			json_object_set_new(o, "src_port", json_integer(v->sport));
		json_object_set_new(o, "dest_ip", ip_text(v->dst, v->family));
		if (v->l4 != PACKET_L4_NONE)
			json_object_set_new(o, "dest_port", json_integer(v->dport));
		json_object_set_new(o, "proto", json_string(packet_proto_name(v->ip_proto, proto, sizeof(proto))));
	}
	if (v->nvlans) {
		json_t *vlans = json_array();
		for (unsigned i = 0; i < v->nvlans; i++)
			json_array_append_new(vlans, json_integer(v->vlans[i]));
		json_object_set_new(o, "vlan", vlans);
	}
	for (size_t i = 0; i < n; i++) {
		const uint8_t *key;
		size_t len;
		matcher_hit_key(m, &hits[i], &key, &len);
		json_t *hit = json_pack("{s:s,s:s}", "kind", entry_kind_name(hits[i].kind), "entry",
					entry_format_value(hits[i].kind, key, len, ev->text, ENTRY_TEXT_MAX));
		if (hits[i].kind == ENTRY_SIG)
			json_object_set_new(hit, "offset", json_integer(hits[i].offset));
		json_array_append_new(matches, hit);
	}
	json_object_set_new(o, "matches", matches);
	return o;
}

static int write_line(struct events *ev, const json_t *o)
{
	size_t len = json_dumpb(o, ev->line, LINE_BYTES - 1, JSON_COMPACT);
	int rc = 0;

	if (len > 0 && len < LINE_BYTES) {
		ev->line[len] = '\n';
		return fwrite(ev->line, 1, len + 1, ev->json) == len + 1 ? 0 : -1;
	}
	char *big = json_dumps(o, JSON_COMPACT); /* an event with very many matches */
	if (big == NULL || fputs(big, ev->json) == EOF || fputc('\n', ev->json) == EOF)
		rc = -1;
	free(big);
	return rc;
}

int events_write(struct events *ev, const struct event_packet *p, const struct matcher *m,
		 const struct match_hit *hits, size_t n, char *err, size_t errlen)
{
	int rc = 0;

	if (ev->json) {
		json_t *o = event_json(ev, p, m, hits, n);
		if (write_line(ev, o) < 0) {
			error_set(err, errlen, "cannot write an event: %s", strerror(errno));
			rc = -1;
		}
		json_decref(o);
	}
	if (dump_packet(ev, p, err, errlen) < 0)
		rc = -1;
	ev->written++;
	return rc;
}

void events_flush(struct events *ev)
{
	if (ev->json)
		fflush(ev->json);
	if (ev->dumper)
		pcap_dump_flush(ev->dumper);
}

uint64_t events_written(const struct events *ev)
{
	return ev->written;
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
	free(ev->pcap_path);
	free(ev->text);
	free(ev->line);
	free(ev);
}
