/* benchpath.c - bloombench replay and signatures: the packet path against its peers. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <event2/event.h>
#include <getopt.h>
#include <hs/hs.h>
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "capture.h"
#include "cli.h"
#include "engine.h"
#include "entry.h"
#include "events.h"
#include "feed.h"
#include "matcher.h"
#include "rng.h"
#include "synth.h"


struct path_opts {
	uint64_t packets, entries, megabytes;
	unsigned runs;
	char sizes[128];
	bool json, no_events;
	bool stages;               /* replay: what each stage of the path costs a packet */
	bool tcp;                  /* replay: TCP connections, the handshake table on and off */
	bool shared_prefix;        /* signatures: every one starts "GET /wp-", and so does every payload */
};

static int parse_path_opts(int argc, char **argv, struct path_opts *o)
{
	static const struct option opts[] = {
		{ "packets", required_argument, NULL, 'p' }, { "entries", required_argument, NULL, 'e' },
		{ "runs", required_argument, NULL, 'r' },    { "sizes", required_argument, NULL, 's' },
		{ "megabytes", required_argument, NULL, 'm' }, { "json", no_argument, NULL, 'j' },
		{ "no-events", no_argument, NULL, 'E' }, { "tcp", no_argument, NULL, 'T' },	 { "shared-prefix", no_argument, NULL, 'P' },
		{ "stages", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': rc |= cli_u64(BENCH_PROG, "--packets", optarg, 1000, 1ULL << 30, &o->packets); break;
		case 'e': rc |= cli_u64(BENCH_PROG, "--entries", optarg, 0, 1ULL << 26, &o->entries); break;
		case 'r': rc |= cli_unsigned(BENCH_PROG, "--runs", optarg, 1, BENCH_MAX_RUNS, &o->runs); break;
		case 'm': rc |= cli_u64(BENCH_PROG, "--megabytes", optarg, 1, 4096, &o->megabytes); break;
		case 's': snprintf(o->sizes, sizeof(o->sizes), "%s", optarg); break;
		case 'j': o->json = true; break;
		case 'E': o->no_events = true; break;
		case 'P': o->shared_prefix = true; break;
		case 'S': o->stages = true; break;
		case 'T': o->tcp = true; break;
		default: return -1;
		}
	}
	return rc;
}

/* The daemon's defaults (conf/bloomd.conf). */
/* ---- replay ---- */

static volatile uint64_t sink;

static void bare_cb(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	(void)user;
	sink += h->caplen + bytes[0];
}

static double bare_loop(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, errbuf);
	double t0;

	if (p == NULL)
		return -1;
	t0 = bench_now_ns();
	pcap_dispatch(p, -1, bare_cb, NULL);
	t0 = bench_now_ns() - t0;
	pcap_close(p);
	return t0;
}

#define BENCH_TCP_CONNECTIONS 65536 /* [capture] tcp_connections' default */
static uint64_t bench_handshakes; /* the last replay's handshake table, bytes */

struct replay_run {
	struct engine engine;
	struct event_base *base;
};

static void replay_packets(void *ctx, struct capture *cap, const struct capture_packet *p, size_t count)
{
	struct replay_run *rr = ctx;

	engine_batch(&rr->engine, p, count, capture_name(cap), false, NULL);
}

static void replay_done(void *ctx, struct capture *cap, const char *error)
{
	struct replay_run *rr = ctx;

	(void)cap;
	if (error)
		fprintf(stderr, BENCH_PROG ": replay: %s\n", error);
	event_base_loopexit(rr->base, NULL);
}

static int emit_event(void *ctx, const struct event_packet *p, const struct matcher_found *hits, size_t n, char *err,
		      size_t errlen)
{
	return events_write(ctx, p, hits, n, err, errlen);
}

/* The daemon's path: the capture module in a libevent loop, the engine (batch packets at once), events to /dev/null. */
static double bloomd_loop(const char *path, struct matcher *m, struct events *ev, unsigned batch, bool track)
{
	struct replay_run rr = { .engine = { .matcher = m, .scratch = matcher_scratch_new(), .emit = emit_event,
					     .emit_ctx = ev } };
	struct capture_callbacks cb = { replay_packets, NULL, replay_done, &rr, batch };
	char err[256];
	double t0;

	/* the daemon's default: its TCP handshakes tracked ([capture] tcp_connections) */
	if (track)
		rr.engine.replay_handshakes = handshakes_new(BENCH_TCP_CONNECTIONS, HANDSHAKE_IDLE_SECONDS,
							     &rr.engine.stats.handshakes);
	bench_handshakes = rr.engine.stats.handshakes.bytes;
	rr.base = event_base_new();
	t0 = bench_now_ns();
	struct capture *cap = capture_open_file(rr.base, path, NULL, &cb, err, sizeof(err));
	if (cap == NULL) {
		event_base_free(rr.base);
		matcher_scratch_free(rr.engine.scratch);
		handshakes_free(rr.engine.replay_handshakes);
		return -1;
	}
	event_base_dispatch(rr.base);
	t0 = bench_now_ns() - t0;
	capture_free(cap);
	event_base_free(rr.base);
	matcher_scratch_free(rr.engine.scratch);
	handshakes_free(rr.engine.replay_handshakes);
	sink += rr.engine.stats.matched_packets;
	return t0;
}

static int add_entry_cb(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
			int role, char *err, size_t errlen)
{
	(void)expires;
	(void)labels;
	(void)role;
	return matcher_add(ctx, e, err, errlen) < 0 ? -1 : 0;
}

static void print_problem(void *ctx, unsigned line, const char *text, const char *why)
{
	(void)ctx;
	fprintf(stderr, BENCH_PROG ": line %u: %s: '%s'\n", line, why, text);
}

/* ---- replay --stages ---- */

/*
 * The path a stage more at a time, each pass over the whole capture: capture
 * (the capture module batching packets in the loop, nothing done with them),
 * then parse, stats, check (hashing, the filters' probes, the exact store's
 * confirmation, the signature scan: matcher_check_batch) and judge (the
 * verdict and the events). A stage's cost is its pass less the one before.
 */
enum stage { STAGE_CAPTURE, STAGE_PARSE, STAGE_STATS, STAGE_CHECK, STAGE_JUDGE, STAGES };
static const char *const STAGE_NAMES[STAGES] = { "capture", "parse", "stats", "check", "judge+events" };

struct stage_run {
	struct replay_run rr;
	enum stage upto;
};

static void stage_packets(void *ctx, struct capture *cap, const struct capture_packet *p, size_t count)
{
	struct stage_run *sr = ctx;
	struct engine *e = &sr->rr.engine;
	struct packet_batch *b = &e->batch;

	switch (sr->upto) {
	case STAGE_CAPTURE:
		sink += count;
		break;
	case STAGE_PARSE:
	case STAGE_STATS:
		for (size_t i = 0; i < count; i++) {
			packet_parse(p[i].link, p[i].frame, p[i].caplen, p[i].wirelen, &b->views[i]);
			if (sr->upto == STAGE_STATS)
				stats_count(&e->stats, p[i].wirelen, b->views[i].status);
		}
		sink += b->views[count - 1].status;
		break;
	case STAGE_CHECK:
		engine_check_batch(e->matcher, e->scratch, &e->stats, e->replay_handshakes, p, count, b);
		sink += b->nhits[count - 1];
		break;
	default:
		engine_batch(e, p, count, capture_name(cap), false, NULL);
	}
}

static void stage_done(void *ctx, struct capture *cap, const char *error)
{
	replay_done(&((struct stage_run *)ctx)->rr, cap, error);
}

static double stage_loop(const char *path, struct matcher *m, struct events *ev, enum stage upto)
{
	struct stage_run sr = { .rr = { .engine = { .matcher = m, .scratch = matcher_scratch_new(), .emit = emit_event,
						    .emit_ctx = ev } }, .upto = upto };
	struct capture_callbacks cb = { stage_packets, NULL, stage_done, &sr, PACKET_BATCH_MAX };
	char err[256];

	sr.rr.engine.replay_handshakes = handshakes_new(BENCH_TCP_CONNECTIONS, HANDSHAKE_IDLE_SECONDS,
							&sr.rr.engine.stats.handshakes);
	sr.rr.base = event_base_new();
	double t0 = bench_now_ns();
	struct capture *cap = capture_open_file(sr.rr.base, path, NULL, &cb, err, sizeof(err));
	if (cap)
		event_base_dispatch(sr.rr.base);
	t0 = bench_now_ns() - t0;
	capture_free(cap);
	event_base_free(sr.rr.base);
	matcher_scratch_free(sr.rr.engine.scratch);
	handshakes_free(sr.rr.engine.replay_handshakes);
	return cap ? t0 : -1;
}

/* The CPU's model, as /proc/cpuinfo names it. */
static void cpu_model(char *out, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(out, len, "unknown");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			snprintf(out, len, "%s", strchr(line, ':') + 2);
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
}

/* Time-stamp counter ticks a nanosecond (0 where there is none to read). */
static double tsc_per_ns(void)
{
#if defined(__x86_64__)
	double t0 = bench_now_ns();
	uint64_t c0 = __builtin_ia32_rdtsc();
	usleep(200000);
	return (double)(__builtin_ia32_rdtsc() - c0) / (bench_now_ns() - t0);
#else
	return 0;
#endif
}

/* For each kernel the CPU has, with no entries and with m's: each stage's ns and cycles a packet, medians of o->runs. */
static void replay_stages(const struct path_opts *o, const char *pcap, struct matcher *m, struct events *ev,
			  json_t *rows)
{
	struct matcher *empty = bench_matcher(8), *with[2] = { empty, m };
	double ghz = tsc_per_ns(), t[BENCH_MAX_RUNS], read_ns;
	char model[128], err[256];

	if (empty == NULL || matcher_build(empty, err, sizeof(err)) < 0) {
		fprintf(stderr, BENCH_PROG ": replay --stages: a matcher with no entries: %s\n", empty ? err : "out of memory");
		matcher_free(empty);
		return;
	}

	for (unsigned r = 0; r < o->runs; r++)
		t[r] = bare_loop(pcap) / (double)o->packets;
	read_ns = bench_median(t, o->runs);
	cpu_model(model, sizeof(model));
	if (!o->json) {
		printf("stages: ns a packet (TSC cycles at %.2f GHz), each the pass up to it less the one before; %s\n", ghz,
		       model);
		printf("  %-7s %8s %14s", "kernel", "entries", "read");
		for (int s = 0; s < STAGES; s++)
			printf(" %14s", STAGE_NAMES[s]);
		printf("\n");
	}
	for (int level = SIMD_LEVELS - 1; level >= 0; level--) {
		if (!simd_cpu_has((enum simd_level)level))
			continue;
		for (int w = 0; w < 2; w++) {
			double up[STAGES], before = read_ns;
			if (matcher_set_simd(with[w], (enum simd_level)level) < 0)
				continue;
			for (int s = 0; s < STAGES; s++) {
				for (unsigned r = 0; r < o->runs; r++)
					t[r] = stage_loop(pcap, with[w], ev, (enum stage)s) / (double)o->packets;
				up[s] = bench_median(t, o->runs);
			}
			json_t *row = json_pack("{s:s,s:s,s:s,s:I,s:f,s:f}", "name", "replay-stages", "cpu", model, "kernel",
						simd_name((enum simd_level)level), "entries",
						(json_int_t)(w ? o->entries : 0), "read_ns", read_ns, "tsc_per_ns", ghz);
			if (!o->json)
				printf("  %-7s %8llu %6.1f (%5.0f)", simd_name((enum simd_level)level),
				       (unsigned long long)(w ? o->entries : 0), read_ns, read_ns * ghz);
			for (int s = 0; s < STAGES; s++) {
				double ns = up[s] - before;
				before = up[s];
				json_object_set_new(row, STAGE_NAMES[s], json_real(ns));
				if (!o->json)
					printf(" %6.1f (%5.0f)", ns, ns * ghz);
			}
			if (!o->json)
				printf("\n");
			json_array_append_new(rows, row);
		}
	}
	matcher_free(empty);
}

/* The synthetic entry list into m: 0, or -1 after saying what was wrong. */
static int load_list(struct matcher *m, const char *path)
{
	struct feed_spec native = { .format = FEED_BLOOMD };
	struct feed_counts n;
	char err[256];
	FILE *f = fopen(path, "r");
	int rc = f ? feed_read(f, &native, 0, add_entry_cb, print_problem, m, &n, err, sizeof(err)) : -1;

	if (f)
		fclose(f);
	return rc < 0 || n.bad ? -1 : 0;
}

/* bloomd's path against the bare loop, for each kernel the CPU has, at the daemon's batch and at 1. */
static void replay_ratios(const struct path_opts *o, const char *pcap, struct matcher *m, struct events *ev, json_t *rows)
{
	static const unsigned batches[] = { PACKET_BATCH_MAX, 1 }; /* batch = auto, and one at a time */
	double bare[BENCH_MAX_RUNS], ours[SIMD_LEVELS][2][BENCH_MAX_RUNS];

	/* Each kernel the CPU has, interleaved with the bare loop so they share the machine's moods. */
	for (unsigned r = 0; r < o->runs; r++) {
		bare[r] = o->packets / (bare_loop(pcap) / 1e9);
		for (int level = SIMD_LEVELS - 1; level >= 0; level--)
			for (int i = 0; i < 2 && matcher_set_simd(m, (enum simd_level)level) == 0; i++) {
				int b = (i + (int)r) % 2; /* each first in every other run */
				ours[level][b][r] = o->packets / (bloomd_loop(pcap, m, ev, batches[b], true) / 1e9);
			}
	}
	double b = bench_median(bare, o->runs);
	if (!o->json) {
		printf("replay: %llu packets of 60 bytes, %llu addr+pair entries (one packet in a thousand "
		       "matches), events %s, median of %u runs\n", (unsigned long long)o->packets,
		       (unsigned long long)o->entries, o->no_events ? "off" : "to /dev/null", o->runs);
		printf("  bare pcap_dispatch loop          %8.2f Mpps\n", b / 1e6);
	}
	for (int level = SIMD_LEVELS - 1; level >= 0; level--) {
		if (!simd_cpu_has((enum simd_level)level))
			continue;
		for (int k = 0; k < 2; k++) {
			double d = bench_median(ours[level][k], o->runs);
			json_array_append_new(rows, json_pack("{s:s,s:s,s:I,s:I,s:I,s:b,s:f,s:f,s:f}", "name", "replay",
				"kernel", simd_name((enum simd_level)level), "batch", (json_int_t)batches[k],
				"packets", (json_int_t)o->packets, "entries", (json_int_t)o->entries, "events", !o->no_events,
				"bloomd_pps", d, "bare_pps", b, "ratio", d / b));
			if (!o->json)
				printf("  bloomd packet path, %-7s batch %2u  %8.2f Mpps   ratio %.2f\n",
				       simd_name((enum simd_level)level), batches[k], d / 1e6, d / b);
		}
	}
}

/* TCP connections replayed with the handshake table and without it, at batch = auto, for each kernel the CPU has. */
static void replay_tracking(const struct path_opts *o, const char *pcap, struct matcher *m, struct events *ev,
			    json_t *rows)
{
	double bare[BENCH_MAX_RUNS], ours[SIMD_LEVELS][2][BENCH_MAX_RUNS];
	uint64_t bytes = 0;

	for (unsigned r = 0; r < o->runs; r++) {
		bare[r] = o->packets / (bare_loop(pcap) / 1e9);
		for (int level = SIMD_LEVELS - 1; level >= 0; level--)
			for (int i = 0; i < 2 && matcher_set_simd(m, (enum simd_level)level) == 0; i++) {
				int t = (i + (int)r) % 2; /* each first in every other run */
				ours[level][t][r] = o->packets / (bloomd_loop(pcap, m, ev, PACKET_BATCH_MAX, t == 0) / 1e9);
				bytes = t == 0 ? bench_handshakes : bytes;
			}
	}
	double b = bench_median(bare, o->runs);
	if (!o->json)
		printf("replay, TCP: %llu segments of 4,096 connections open at once (8 a connection), %llu entries, "
		       "median of %u runs; the handshake table %.1f MiB\n  bare pcap_dispatch loop          %8.2f Mpps\n",
		       (unsigned long long)o->packets, (unsigned long long)o->entries, o->runs, bytes / 1048576.0, b / 1e6);
	for (int level = SIMD_LEVELS - 1; level >= 0; level--) {
		if (!simd_cpu_has((enum simd_level)level))
			continue;
		double on = bench_median(ours[level][0], o->runs), off = bench_median(ours[level][1], o->runs);
		json_array_append_new(rows, json_pack("{s:s,s:s,s:I,s:I,s:f,s:f,s:f,s:f,s:I}", "name", "replay-tcp", "kernel",
			simd_name((enum simd_level)level), "packets", (json_int_t)o->packets, "entries", (json_int_t)o->entries,
			"tracked_pps", on, "untracked_pps", off, "bare_pps", b, "tracked_over_untracked", on / off,
			"table_bytes", (json_int_t)bytes));
		if (!o->json)
			printf("  %-7s handshakes tracked %8.2f Mpps (ratio %.2f), not tracked %8.2f Mpps (ratio %.2f): "
			       "%.1f ns a segment, %.2fx\n", simd_name((enum simd_level)level), on / 1e6, on / b, off / 1e6,
			       off / b, 1e9 / on - 1e9 / off, on / off);
	}
}

int bench_replay(int argc, char **argv)
{
	struct path_opts o = { .packets = 2000000, .entries = 100000, .runs = 5 };
	char dir[] = "/tmp/bloombench-XXXXXX", pcap[64], list[64];
	struct matcher *m = bench_matcher(8);
	struct events *ev;

	if (parse_path_opts(argc, argv, &o) < 0 || m == NULL || mkdtemp(dir) == NULL)
		return 2;
	/* Events go to /dev/null, as the daemon writes them; --no-events leaves them out. */
	struct events_options eo = { .json_path = o.no_events ? NULL : "/dev/null", .snaplen = 65535, .filemode = 0640 };
	ev = events_open(&eo, NULL, 0);
	if (ev == NULL)
		return 1;
	snprintf(pcap, sizeof(pcap), "%s/traffic.pcap", dir);
	snprintf(list, sizeof(list), "%s/entries.list", dir);
	struct synth_random sr = { .packets = o.packets, .entries = o.entries, .seed = 42, .list = list, .tcp = o.tcp,
				   .payload = o.tcp ? 6 : 0 }; /* TCP: 60-byte frames too */
	char err[256];
	if (synth_random_capture(pcap, &sr, err, sizeof(err)) < 0 ||
	    load_list(m, list) < 0 || matcher_build(m, err, sizeof(err)) < 0) {
		fprintf(stderr, BENCH_PROG ": replay: setup failed\n");
		return 1;
	}
	json_t *rows = json_array();
	if (o.stages)
		replay_stages(&o, pcap, m, ev, rows);
	else if (o.tcp)
		replay_tracking(&o, pcap, m, ev, rows);
	else
		replay_ratios(&o, pcap, m, ev, rows);
	if (o.json)
		cli_print_json(json_pack("{s:o}", "rows", rows));
	else
		json_decref(rows);
	unlink(pcap);
	unlink(list);
	rmdir(dir);
	matcher_free(m);
	events_close(ev);
	return 0;
}

/* ---- signatures ---- */

struct sig_set {
	uint64_t n;
	uint8_t *bytes;    /* n signatures, 32 bytes apart */
	uint8_t *len;
	uint8_t *data;     /* the payloads, PAYLOAD bytes each */
	size_t npayloads;
};

#define PAYLOAD 1400
#define SIG_STRIDE 32

#define SHARED_PREFIX "GET /wp-"

/*
 * n random signatures of 8 to 32 bytes; payloads of random bytes with one
 * planted in every 8th. shared: the worst case of a window of their first
 * bytes, every signature (16 to 32 bytes) starting with SHARED_PREFIX and
 * every payload that prefix over and over.
 */
static int make_sig_set(struct sig_set *s, uint64_t n, uint64_t megabytes, bool shared)
{
	struct rng r;

	rng_seed(&r, n);
	s->n = n;
	s->npayloads = (size_t)(megabytes << 20) / PAYLOAD;
	s->bytes = malloc(n * SIG_STRIDE);
	s->len = malloc(n);
	s->data = malloc(s->npayloads * PAYLOAD);
	if (!s->bytes || !s->len || !s->data)
		return -1;
	for (uint64_t i = 0; i < n * SIG_STRIDE; i++)
		s->bytes[i] = (uint8_t)rng_next(&r);
	for (uint64_t i = 0; i < n; i++) {
		s->len[i] = (uint8_t)(shared ? 16 + rng_below(&r, 17) : 8 + rng_below(&r, 25));
		if (shared)
			memcpy(s->bytes + i * SIG_STRIDE, SHARED_PREFIX, 8);
	}
	for (size_t i = 0; i < s->npayloads * PAYLOAD; i++)
		s->data[i] = shared ? (uint8_t)SHARED_PREFIX[i % 8] : (uint8_t)rng_next(&r);
	for (size_t p = 0; p < s->npayloads; p += 8) {
		uint64_t id = rng_below(&r, n);
		memcpy(s->data + p * PAYLOAD + rng_below(&r, PAYLOAD - 32), s->bytes + id * SIG_STRIDE, s->len[id]);
	}
	return 0;
}

static void free_sig_set(struct sig_set *s)
{
	free(s->bytes);
	free(s->len);
	free(s->data);
}

struct scan_result {
	double build_s, mbps, level_mbps[SIMD_LEVELS]; /* bloomd: each kernel the CPU has */
	uint64_t matches;
	size_t bytes;        /* everything: for bloomd, filters and the exact store */
	size_t scan_bytes;   /* bloomd: what the scan reads per byte (prefilter and filter) */
	bool avx2_gathers;   /* bloomd: its avx2 kernel reads the prefilter by a gather (timed at start) */
};

static int bloomd_signatures(const struct sig_set *s, unsigned runs, struct scan_result *out)
{
	struct matcher *m = bench_matcher(8);
	struct entry *e = malloc(sizeof(*e));
	struct matcher_hit hits[MATCHER_MAX_HITS];
	struct matcher_filter_info fi;
	double t[BENCH_MAX_RUNS];

	if (m == NULL || e == NULL)
		return -1;
	double t0 = bench_now_ns();
	e->kind = ENTRY_SIG;
	for (uint64_t i = 0; i < s->n; i++) {
		e->len = s->len[i];
		memcpy(e->key, s->bytes + i * SIG_STRIDE, e->len);
		matcher_add(m, e, NULL, 0);
	}
	matcher_build(m, NULL, 0);
	out->build_s = (bench_now_ns() - t0) / 1e9;
	for (int level = SIMD_LEVELS - 1; level >= 0; level--) {
		if (matcher_set_simd(m, (enum simd_level)level) < 0)
			continue;
		for (unsigned r = 0; r < runs; r++) {
			uint64_t matches = 0;
			t0 = bench_now_ns();
			for (size_t p = 0; p < s->npayloads; p++) {
				struct packet_view v = { .payload = s->data + p * PAYLOAD, .payload_len = PAYLOAD };
				matches += matcher_check(m, &v, hits, MATCHER_MAX_HITS);
			}
			t[r] = (double)(s->npayloads * PAYLOAD) / 1048576.0 / ((bench_now_ns() - t0) / 1e9);
			if (out->matches && matches != out->matches)
				fprintf(stderr, BENCH_PROG ": the %s kernel found %llu matches, the others %llu\n",
					simd_name((enum simd_level)level), (unsigned long long)matches,
					(unsigned long long)out->matches);
			out->matches = matches;
		}
		out->level_mbps[level] = bench_median(t, runs);
		matcher_filter_info(m, 1, &fi);
		if (level == SIMD_AVX2)
			out->avx2_gathers = fi.scan_gathers;
	}
	out->mbps = out->level_mbps[simd_best()];
	matcher_filter_info(m, 1, &fi);
	out->bytes = fi.bytes + fi.store_bytes;
	out->scan_bytes = fi.bytes;
	matcher_free(m);
	free(e);
	return 0;
}

static int on_hs_match(unsigned id, unsigned long long from, unsigned long long to,
		       unsigned flags, void *ctx)
{
	(void)id, (void)from, (void)to, (void)flags;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* Hyperscan's literal API, each signature reported once a payload (HS_FLAG_SINGLEMATCH). */
static int hyperscan_signatures(const struct sig_set *s, unsigned runs, struct scan_result *out)
{
	const char **exprs = malloc(s->n * sizeof(*exprs));
	unsigned *flags = malloc(s->n * sizeof(*flags)), *ids = malloc(s->n * sizeof(*ids));
	size_t *lens = malloc(s->n * sizeof(*lens)), db_size = 0, scratch_size = 0;
	hs_database_t *db = NULL;
	hs_compile_error_t *cerr = NULL;
	hs_scratch_t *scratch = NULL;
	double t[BENCH_MAX_RUNS];
	int rc = -1;

	if (!exprs || !flags || !ids || !lens)
		goto done;
	for (uint64_t i = 0; i < s->n; i++) {
		exprs[i] = (const char *)(s->bytes + i * SIG_STRIDE);
		flags[i] = HS_FLAG_SINGLEMATCH;
		ids[i] = (unsigned)i;
		lens[i] = s->len[i];
	}
	double t0 = bench_now_ns();
	if (hs_compile_lit_multi(exprs, flags, ids, lens, (unsigned)s->n, HS_MODE_BLOCK, NULL, &db, &cerr) != HS_SUCCESS) {
		fprintf(stderr, BENCH_PROG ": hyperscan: %s\n", cerr ? cerr->message : "compile failed");
		hs_free_compile_error(cerr);
		goto done;
	}
	if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS)
		goto done;
	out->build_s = (bench_now_ns() - t0) / 1e9;
	for (unsigned r = 0; r < runs; r++) {
		uint64_t matches = 0;
		t0 = bench_now_ns();
		for (size_t p = 0; p < s->npayloads; p++)
			hs_scan(db, (const char *)s->data + p * PAYLOAD, PAYLOAD, 0, scratch, on_hs_match, &matches);
		t[r] = (double)(s->npayloads * PAYLOAD) / 1048576.0 / ((bench_now_ns() - t0) / 1e9);
		out->matches = matches;
	}
	out->mbps = bench_median(t, runs);
	hs_database_size(db, &db_size);
	hs_scratch_size(scratch, &scratch_size);
	out->bytes = db_size + scratch_size;
	rc = 0;
done:
	hs_free_scratch(scratch);
	hs_free_database(db);
	free(exprs);
	free(flags);
	free(ids);
	free(lens);
	return rc;
}

int bench_signatures(int argc, char **argv)
{
	struct path_opts o = { .megabytes = 16, .runs = 3, .sizes = "1000,100000,1000000" };
	json_t *rows = json_array();
	char *save = NULL;

	if (parse_path_opts(argc, argv, &o) < 0)
		return 2;
	if (!o.json && o.shared_prefix)
		printf("signatures, shared prefix: 16-32 byte signatures all starting \"" SHARED_PREFIX "\", %llu MiB of 1400-byte\n"
		       "payloads of that prefix repeated (one signature planted in every 8th), median of %u runs; ",
		       (unsigned long long)o.megabytes, o.runs);
	else if (!o.json)
		printf("signatures: random 8-32 byte signatures, %llu MiB of 1400-byte random payloads "
		       "(one signature planted in every 8th), median of %u runs; ", (unsigned long long)o.megabytes, o.runs);
	if (!o.json)
		printf("memory: bloomd's over\nHyperscan's (database + scratch), all of it and the filters a scan reads;\n"
		       "avx2-g, avx2-l: the avx2 kernel reading the prefilter by a gather, or by eight loads (timed at start)\n"
		       "%10s %7s %12s %10s %8s %10s %10s %8s %8s %8s %8s %10s\n", "sigs", "kernel", "bloomd_MB/s", "hs_MB/s",
		       "speed", "bloomd_MB", "filter_MB", "hs_MB", "memory", "filters", "build_s", "hs_build_s");
	for (char *tok = strtok_r(o.sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct sig_set s = { 0 };
		struct scan_result b = { 0 }, h = { 0 };
		uint64_t n = strtoull(tok, NULL, 10);
		if (n == 0 || make_sig_set(&s, n, o.megabytes, o.shared_prefix) < 0 || bloomd_signatures(&s, o.runs, &b) < 0 ||
		    hyperscan_signatures(&s, o.runs, &h) < 0) {
			free_sig_set(&s);
			return 1;
		}
		if (b.matches != h.matches)
			fprintf(stderr, BENCH_PROG ": signatures %llu: bloomd found %llu matches, hyperscan %llu\n",
				(unsigned long long)n, (unsigned long long)b.matches, (unsigned long long)h.matches);
		char name[32];
		snprintf(name, sizeof(name), "%s-%llu", o.shared_prefix ? "sig-shared" : "sig", (unsigned long long)n);
		for (int level = SIMD_LEVELS - 1; level >= 0; level--) {
			if (!simd_cpu_has((enum simd_level)level))
				continue;
			double mbps = b.level_mbps[level];
			/* avx2 reads the prefilter by a gather where the CPU runs that faster (sigscan.h) */
			const char *kernel = level != SIMD_AVX2 ? simd_name((enum simd_level)level)
					     : b.avx2_gathers ? "avx2-g" : "avx2-l";
			json_array_append_new(rows, json_pack("{s:s,s:s,s:b,s:f,s:f,s:I,s:I,s:I,s:f,s:f,s:I,s:I}",
				"name", name, "kernel", simd_name((enum simd_level)level), "gather",
				level == SIMD_AVX2 && b.avx2_gathers, "bloomd_mbps", mbps, "hyperscan_mbps", h.mbps,
				"bloomd_bytes", (json_int_t)b.bytes, "bloomd_filter_bytes", (json_int_t)b.scan_bytes,
				"hyperscan_bytes", (json_int_t)h.bytes, "bloomd_build_s", b.build_s,
				"hyperscan_build_s", h.build_s, "bloomd_matches", (json_int_t)b.matches,
				"hyperscan_matches", (json_int_t)h.matches));
			if (!o.json)
				printf("%10llu %7s %12.1f %10.1f %7.2fx %10.1f %10.2f %8.1f %7.3fx %7.3fx %8.2f %10.2f\n",
				       (unsigned long long)n, kernel, mbps, h.mbps, mbps / h.mbps, b.bytes / 1048576.0,
				       b.scan_bytes / 1048576.0, h.bytes / 1048576.0, (double)b.bytes / (double)h.bytes,
				       (double)b.scan_bytes / (double)h.bytes, b.build_s, h.build_s);
		}
		free_sig_set(&s);
	}
	if (o.json)
		cli_print_json(json_pack("{s:o}", "rows", rows));
	else
		json_decref(rows);
	return 0;
}
