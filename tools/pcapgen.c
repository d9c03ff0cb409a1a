/* pcapgen.c - write deterministic synthetic pcap files, from a spec or at random. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "entry.h"
#include "packet.h"
#include "synth.h"

#define PROG "pcapgen"
#define BASE_TIME 1767225600 /* 2026-01-01T00:00:00Z: packet i is i milliseconds later */

static const struct {
	const char *name;
	int link;
} LINKS[] = {
	{ "en10mb", PACKET_LINK_EN10MB }, { "sll", PACKET_LINK_LINUX_SLL },
	{ "sll2", PACKET_LINK_LINUX_SLL2 }, { "raw", PACKET_LINK_RAW_101 },
	{ "ipv4", PACKET_LINK_IPV4 },	  { "ipv6", PACKET_LINK_IPV6 },
	{ "null", PACKET_LINK_NULL },	  { "loop", PACKET_LINK_LOOP },
};

struct writer {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	const char *path;
	int link;
	unsigned snaplen;
	uint64_t count;
	uint8_t frame[SYNTH_MAX_FRAME];
};

static int writer_open(struct writer *w)
{
	/* LINKTYPE_RAW (101) is written as DLT_RAW; libpcap maps it back when reading. */
	int dlt = w->link == PACKET_LINK_RAW_101 ? PACKET_LINK_RAW : w->link;

	w->dead = pcap_open_dead(dlt, (int)w->snaplen);
	if (w->dead == NULL || (w->dumper = pcap_dump_open(w->dead, w->path)) == NULL) {
		fprintf(stderr, PROG ": cannot write %s: %s\n", w->path, w->dead ? pcap_geterr(w->dead) : "no memory");
		return -1;
	}
	return 0;
}

static void writer_put(struct writer *w, size_t len, size_t caplen)
{
	struct pcap_pkthdr h;

	h.ts.tv_sec = BASE_TIME + (time_t)(w->count / 1000);
	h.ts.tv_usec = (suseconds_t)(w->count % 1000) * 1000;
	h.len = (bpf_u_int32)len;
	h.caplen = (bpf_u_int32)(caplen < len ? caplen : len);
	pcap_dump((u_char *)w->dumper, &h, w->frame);
	w->count++;
}

static void writer_close(struct writer *w)
{
	if (w->dumper)
		pcap_dump_close(w->dumper);
	if (w->dead)
		pcap_close(w->dead);
}

/* ---- spec mode ---- */

struct spec_line {
	const char *file;
	unsigned line;
};

static void bad(const struct spec_line *at, const char *what, const char *token)
{
	fprintf(stderr, PROG ": %s:%u: %s '%s'\n", at->file, at->line, what, token);
}

static int parse_address(const char *text, uint8_t *out, int *family)
{
	if (inet_pton(AF_INET, text, out) == 1)
		return *family = 4, 0;
	if (inet_pton(AF_INET6, text, out) == 1)
		return *family = 6, 0;
	return -1;
}

static int parse_proto(const char *v, uint8_t *proto)
{
	static const struct { const char *name; uint8_t n; } names[] = {
		{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "icmp6", 58 },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i].name) == 0)
			return *proto = names[i].n, 0;
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end || n > 255)
		return -1;
	*proto = (uint8_t)n;
	return 0;
}

/* "S", "SA", "PA", "R": TCP's flags by letter (FIN SYN RST PSH ACK URG). */
static int parse_tcp_flags(const char *v, uint8_t *flags)
{
	static const char LETTERS[] = "FSRPAU";

	*flags = 0;
	for (; *v; v++) {
		const char *at = strchr(LETTERS, *v);
		if (at == NULL)
			return -1;
		*flags |= (uint8_t)(1u << (at - LETTERS));
	}
	return *flags ? 0 : -1;
}

static int parse_ext(const char *v, struct synth_packet *p)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (p->next == SYNTH_MAX_EXT)
			return -1;
		if (strcmp(t, "hbh") == 0) p->ext[p->next++] = SYNTH_EXT_HBH;
		else if (strcmp(t, "dst") == 0) p->ext[p->next++] = SYNTH_EXT_DST;
		else if (strcmp(t, "rt") == 0) p->ext[p->next++] = SYNTH_EXT_RT;
		else if (strcmp(t, "frag") == 0) p->ext[p->next++] = SYNTH_EXT_FRAG;
		else return -1;
	}
	return 0;
}

/* Next token; a value may be a "quoted string" with blanks and escapes in it. */
static char *next_token(char **cursor)
{
	char *p = *cursor, *start;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0' || *p == '#')
		return NULL;
	start = p;
	while (*p && !isspace((unsigned char)*p)) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p != '"')
				break;
		}
		p++;
	}
	if (*p)
		*p++ = '\0';
	*cursor = p;
	return start;
}

/* payload= takes the sig entry syntax: hex:... or a quoted string with C escapes. */
static int append_payload(const char *v, uint8_t *buf, size_t *len)
{
	static struct entry e;
	char line[ENTRY_TEXT_MAX + 8];

	snprintf(line, sizeof(line), "sig %s", v);
	if (entry_parse(line, &e, NULL, 0) != 1 || *len + e.len > SYNTH_MAX_FRAME / 2)
		return -1;
	memcpy(buf + *len, e.key, e.len);
	*len += e.len;
	return 0;
}

static int packet_token(const struct spec_line *at, char *tok, struct synth_packet *p,
			uint8_t *payload, size_t *snap)
{
	char *eq = strchr(tok, '=');
	const char *v = eq ? eq + 1 : "";
	unsigned long n = 0;
	int family;

	if (eq)
		*eq = '\0';
	if (eq && isdigit((unsigned char)*v))
		n = strtoul(v, NULL, 10);
	if (strcmp(tok, "src") == 0 || strcmp(tok, "dst") == 0) {
		if (parse_address(v, tok[0] == 's' ? p->src : p->dst, &family) < 0)
			return bad(at, "not an address:", v), -1;
		if (p->family && p->family != family)
			return bad(at, "src and dst of different families:", v), -1;
		p->family = family;
	} else if (strcmp(tok, "proto") == 0) {
		if (parse_proto(v, &p->proto) < 0)
			return bad(at, "unknown protocol", v), -1;
	} else if (strcmp(tok, "sport") == 0) p->sport = (uint16_t)n;
	else if (strcmp(tok, "dport") == 0) p->dport = (uint16_t)n;
	else if (strcmp(tok, "ipopts") == 0) p->ip_options = (unsigned)n & ~3u;
	else if (strcmp(tok, "iplen") == 0) {
		p->set_ip_length = true;
		p->ip_length = (uint16_t)n;
	}
	else if (strcmp(tok, "frag") == 0) p->frag_offset = (uint16_t)(n & ~7u);
	else if (strcmp(tok, "mf") == 0) p->more_fragments = true;
	else if (strcmp(tok, "fragoff6") == 0) p->ext_frag_offset = (uint16_t)(n & ~7u);
	else if (strcmp(tok, "mf6") == 0) p->ext_frag_more = true;
	else if (strcmp(tok, "qinq") == 0) p->qinq = true;
	else if (strcmp(tok, "llc") == 0) p->llc = true;
	else if (strcmp(tok, "snap") == 0) *snap = n;
	else if (strcmp(tok, "fill") == 0) {
		if (p->payload_len + n > SYNTH_MAX_FRAME / 2)
			return bad(at, "fill too long:", v), -1;
		memset(payload + p->payload_len, '.', n);
		p->payload_len += n;
	} else if (strcmp(tok, "payload") == 0) {
		if (append_payload(v, payload, &p->payload_len) < 0)
			return bad(at, "bad payload (hex:DIGITS or \"text\"):", v), -1;
	} else if (strcmp(tok, "ext") == 0) {
		if (parse_ext(v, p) < 0)
			return bad(at, "bad ext list (hbh,dst,rt,frag):", v), -1;
	} else if (strcmp(tok, "flags") == 0) {
		if (parse_tcp_flags(v, &p->tcp_flags) < 0)
			return bad(at, "bad TCP flags (letters of FSRPAU):", v), -1;
	} else if (strcmp(tok, "seq") == 0 || strcmp(tok, "ack") == 0) {
		char *end;
		unsigned long long x = strtoull(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end || x > UINT32_MAX)
			return bad(at, "not a 32-bit number:", v), -1;
		*(tok[0] == 's' ? &p->tcp_seq : &p->tcp_ack) = (uint32_t)x;
	} else if (strcmp(tok, "smac") == 0) {
		if (!isdigit((unsigned char)*v) || n < 1 || n > 255)
			return bad(at, "not a source address's last byte (1 to 255):", v), -1;
		p->smac = (uint8_t)n;
	} else if (strcmp(tok, "wscale") == 0) {
		if (!isdigit((unsigned char)*v) || n > 14)
			return bad(at, "not a window scale (0 to 14):", v), -1;
		p->tcp_wscale = (uint8_t)(n + 1);
	} else if (strcmp(tok, "vlan") == 0) {
		char *end;
		for (const char *q = v; *q && p->nvlans < SYNTH_MAX_VLANS; q = *end ? end + 1 : end)
			p->vlans[p->nvlans++] = (uint16_t)strtoul(q, &end, 10);
	} else {
		return bad(at, "unknown packet field", tok), -1;
	}
	return 0;
}

static int spec_packet(struct writer *w, const struct spec_line *at, char *rest)
{
	static uint8_t payload[SYNTH_MAX_FRAME / 2];
	struct synth_packet p = { .link = w->link, .proto = 17, .sport = 1024, .dport = 80, .payload = payload };
	size_t snap = 0, len;
	char *tok;

	while ((tok = next_token(&rest)) != NULL)
		if (packet_token(at, tok, &p, payload, &snap) < 0)
			return -1;
	if (p.family == 0)
		return bad(at, "packet needs", "src=ADDR dst=ADDR"), -1;
	if ((len = synth_build(&p, w->frame)) == 0)
		return bad(at, "packet too large", "payload"), -1;
	writer_put(w, len, snap ? snap : len);
	return 0;
}

static int run_spec(FILE *in, const char *name, struct writer *w)
{
	char *line = NULL, *rest, *word;
	size_t cap = 0;
	struct spec_line at = { name, 0 };
	int rc = 0;

	while (rc == 0 && getline(&line, &cap, in) >= 0) {
		at.line++;
		rest = line;
		if ((word = next_token(&rest)) == NULL)
			continue;
		if (strcmp(word, "link") == 0 || strcmp(word, "snaplen") == 0) {
			char *v = next_token(&rest);
			if (w->dumper) {
				bad(&at, "must come before the first packet:", word);
				rc = -1;
			} else if (word[0] == 's') {
				w->snaplen = v ? (unsigned)strtoul(v, NULL, 10) : 0;
			} else {
				size_t i = 0;
				while (i < sizeof(LINKS) / sizeof(LINKS[0]) && (!v || strcmp(v, LINKS[i].name)))
					i++;
				if (i == sizeof(LINKS) / sizeof(LINKS[0])) {
					bad(&at, "unknown link type", v ? v : "");
					rc = -1;
				} else {
					w->link = LINKS[i].link;
				}
			}
		} else if (strcmp(word, "packet") == 0) {
			if (!w->dumper && writer_open(w) < 0)
				rc = -1;
			else
				rc = spec_packet(w, &at, rest);
		} else {
			bad(&at, "expected link, snaplen or packet, got", word);
			rc = -1;
		}
	}
	free(line);
	if (rc == 0 && !w->dumper)
		rc = writer_open(w); /* an empty capture is a capture too */
	return rc;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " -o OUT.pcap [SPEC|-]\n"
		"       " PROG " -o OUT.pcap --random --packets N [--entries E --list FILE]\n"
		"              [--payload BYTES] [--seed S]\n"
		"SPEC lines:  link en10mb|sll|sll2|raw|ipv4|ipv6|null|loop    (before packets)\n"
		"             snaplen N\n"
		"             packet src=A dst=B [proto=tcp|udp|icmp|icmp6|N] [sport=N] [dport=N]\n"
		"                    [vlan=ID,...] [qinq] [llc] [ipopts=N] [iplen=N] [frag=OFF] [mf]\n"
		"                    [ext=hbh,dst,rt,frag] [fragoff6=OFF] [mf6]\n"
		"                    [flags=SAFRPU] [seq=N] [ack=N] [wscale=N] [smac=N]\n"
		"                    [payload=\"text\"|payload=hex:..]... [fill=N] [snap=N]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "random", no_argument, NULL, 'R' },	     { "packets", required_argument, NULL, 'p' },
		{ "entries", required_argument, NULL, 'e' }, { "list", required_argument, NULL, 'l' },
		{ "payload", required_argument, NULL, 'P' }, { "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },	     { NULL, 0, NULL, 0 },
	};
	static struct writer w = { .link = PACKET_LINK_EN10MB, .snaplen = 262144 };
	struct synth_random ro = { .seed = 1 };
	bool random_mode = false;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': w.path = optarg; break;
		case 'R': random_mode = true; break;
		case 'p': rc |= cli_u64(PROG, "--packets", optarg, 0, 1ULL << 32, &ro.packets); break;
		case 'e': rc |= cli_u64(PROG, "--entries", optarg, 0, 1ULL << 28, &ro.entries); break;
		case 'l': ro.list = optarg; break;
		case 'P': rc |= cli_unsigned(PROG, "--payload", optarg, 0, 1400, &ro.payload); break;
		case 's': rc |= cli_u64(PROG, "--seed", optarg, 0, UINT64_MAX, &ro.seed); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (rc || w.path == NULL) {
		usage(stderr);
		return 2;
	}
	if (random_mode) {
		char err[256];
		rc = synth_random_capture(w.path, &ro, err, sizeof(err));
		if (rc < 0)
			fprintf(stderr, PROG ": %s\n", err);
		return rc < 0 ? 1 : 0;
	} else {
		const char *spec = optind < argc ? argv[optind] : "-";
		FILE *in = strcmp(spec, "-") == 0 ? stdin : fopen(spec, "r");
		if (in == NULL) {
			fprintf(stderr, PROG ": cannot read %s\n", spec);
			return 1;
		}
		rc = run_spec(in, spec, &w);
		if (in != stdin)
			fclose(in);
	}
	writer_close(&w);
	return rc < 0 ? 1 : 0;
}
