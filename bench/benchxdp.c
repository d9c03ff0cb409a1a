/* benchxdp.c - bloomd's XDP program against BPF peers, per packet through BPF_PROG_TEST_RUN. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "action_xdp.h"
#include "bench.h"
#include "rng.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "xdp_bench.skel.h"
#pragma GCC diagnostic pop

/*
 * Per packet, nanoseconds: BPF_PROG_TEST_RUN's mean over --repeat
 * repetitions, each looking up another key (the front program writes it
 * into the source address and tail-calls the program under test), the
 * median of --runs such runs with their spread. Every program looks up the
 * source and the destination address; bloomd's also holds its entries'
 * table (the confirmation), the peers' only the keys; xdp-filter is
 * xdp-tools' own program, its maps raised from 10,000 to the size.
 */

#define BLOOM_HASHES 7             /* the kernel map's, for about 1% at 10 bits a key */

struct xdp_opts {
	uint64_t sizes[4];
	unsigned nsizes, runs;
	uint32_t repeat;
};

struct bench_keys {
	uint64_t n;
	uint8_t (*present)[16], (*absent)[16];
};

static void random_keys(struct rng *r, uint8_t (*k)[16], uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = rng_next(r), b = rng_next(r);
		memcpy(k[i], &a, 8);
		memcpy(k[i] + 8, &b, 8);
	}
}

/* A frame of family with a fixed destination (listed nowhere); the front writes the source. */
static size_t bench_frame(uint8_t *buf, int family)
{
	memset(buf, 0, 128);
	if (family == 4) {
		buf[12] = 0x08, buf[14] = 0x45, buf[14 + 9] = 17;
		buf[14 + 16] = 198, buf[14 + 17] = 18, buf[14 + 19] = 1;
		return 14 + 28;
	}
	buf[12] = 0x86, buf[13] = 0xdd, buf[14] = 0x60, buf[14 + 6] = 17;
	buf[14 + 24] = 0x20, buf[14 + 25] = 0x01, buf[14 + 26] = 0x0d, buf[14 + 27] = 0xb8, buf[14 + 39] = 1;
	return 14 + 48;
}

struct bench_run {
	struct xdp_bench *skel;
	void *keys;                /* the front's key array, mmapped */
	size_t keys_len;
	int family;
};

/* ns per packet: the median of runs, and their spread. */
static void measure(struct bench_run *br, int prog_fd, const uint8_t (*keys)[16], uint64_t n, const struct xdp_opts *o,
		    double *median, double *lo, double *hi)
{
	uint8_t frame[128];
	size_t len = bench_frame(frame, br->family);
	double t[BENCH_MAX_RUNS];
	uint32_t zero = 0;

	memcpy(br->keys, keys, n * 16);
	bpf_map_update_elem(bpf_map__fd(br->skel->maps.target), &zero, &prog_fd, BPF_ANY);
	for (unsigned r = 0; r < o->runs; r++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = (uint32_t)len, .repeat = o->repeat);
		if (bpf_prog_test_run_opts(bpf_program__fd(br->skel->progs.bench_front), &opts) < 0)
			t[r] = -1;
		else
			t[r] = opts.duration;
	}
	*lo = *hi = t[0];
	for (unsigned r = 1; r < o->runs; r++) {
		*lo = t[r] < *lo ? t[r] : *lo;
		*hi = t[r] > *hi ? t[r] : *hi;
	}
	*median = bench_median(t, o->runs);
}

static struct xdp_bench *peers_load(uint64_t n, int family, char *err, size_t errlen)
{
	struct xdp_bench *skel = xdp_bench__open();
	uint32_t n4 = family == 4 ? (uint32_t)n : 1, n6 = family == 6 ? (uint32_t)n : 1;

	if (skel == NULL) {
		snprintf(err, errlen, "cannot open the peers' programs: %s", strerror(errno));
		return NULL;
	}
	skel->rodata->nkeys = (uint32_t)n;
	skel->rodata->family = (uint32_t)family;
	bpf_map__set_max_entries(skel->maps.keys, (uint32_t)n);
	bpf_map__set_max_entries(skel->maps.hash4, n4);
	bpf_map__set_max_entries(skel->maps.hash6, n6);
	bpf_map__set_max_entries(skel->maps.lpm4, n4);
	bpf_map__set_max_entries(skel->maps.lpm6, n6);
	bpf_map__set_max_entries(skel->maps.bloom4, n4);
	bpf_map__set_max_entries(skel->maps.bloom6, n6);
	bpf_map__set_map_extra(skel->maps.bloom4, BLOOM_HASHES);
	bpf_map__set_map_extra(skel->maps.bloom6, BLOOM_HASHES);
	int rc = xdp_bench__load(skel);
	if (rc < 0) {
		snprintf(err, errlen, "the kernel refused the peers' programs: %s", strerror(-rc));
		xdp_bench__destroy(skel);
		return NULL;
	}
	return skel;
}

/* The peers' maps and bloomd's set, each holding the present keys. */
static int fill(struct xdp_bench *skel, struct action_xdp *x, const struct bench_keys *k, int family, char *err, size_t errlen)
{
	size_t alen = family == 4 ? 4 : 16;
	uint32_t one = 1;
	struct { uint32_t plen; uint8_t a[16]; } lpm = { .plen = (uint32_t)alen * 8 };
	int hash_fd = bpf_map__fd(family == 4 ? skel->maps.hash4 : skel->maps.hash6);
	int lpm_fd = bpf_map__fd(family == 4 ? skel->maps.lpm4 : skel->maps.lpm6);
	int bloom_fd = bpf_map__fd(family == 4 ? skel->maps.bloom4 : skel->maps.bloom6);

	for (uint64_t i = 0; i < k->n; i++) {
		const uint8_t *key = k->present[i];
		memcpy(lpm.a, key, 16);
		if (bpf_map_update_elem(hash_fd, key, &one, BPF_ANY) < 0 || bpf_map_update_elem(lpm_fd, &lpm, &one, BPF_ANY) < 0 ||
		    bpf_map_update_elem(bloom_fd, NULL, key, BPF_ANY) < 0) {
			snprintf(err, errlen, "cannot fill the peers' maps: %s", strerror(errno));
			return -1;
		}
		if (action_xdp_put(x, ENTRY_ADDR, key, alen, XDP_ACTION_DROP, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/*
 * xdp-filter (xdp-tools) as Debian ships it: its allow-mode IP program, whose
 * per-CPU hash maps of addresses (10,000 as shipped) are raised to n and
 * not pinned. NULL (the reason in err) where xdp-tools is not installed.
 */
#define XDPFILT_FLAG_SRC 1 /* xdp-filter's MAP_FLAG_SRC and MAP_FLAG_DST */
#define XDPFILT_FLAG_DST 2

static struct bpf_object *xdp_filter_load(uint64_t n, char *err, size_t errlen)
{
	glob_t g;
	struct bpf_object *obj = NULL;
	struct bpf_map *map;

	if (glob("/usr/lib/*/bpf/xdpfilt_alw_ip.o", 0, NULL, &g) != 0 &&
	    glob("/usr/lib/bpf/xdpfilt_alw_ip.o", 0, NULL, &g) != 0) {
		snprintf(err, errlen, "no xdpfilt_alw_ip.o (xdp-tools)");
		return NULL;
	}
	obj = bpf_object__open_file(g.gl_pathv[0], NULL);
	globfree(&g);
	if (obj == NULL) {
		snprintf(err, errlen, "cannot open xdp-filter's program: %s", strerror(errno));
		return NULL;
	}
	bpf_object__for_each_map(map, obj) {
		bpf_map__set_pin_path(map, NULL);
		if (strcmp(bpf_map__name(map), "filter_ipv4") == 0 || strcmp(bpf_map__name(map), "filter_ipv6") == 0)
			bpf_map__set_max_entries(map, (uint32_t)n);
	}
	int rc = bpf_object__load(obj);
	if (rc < 0) {
		snprintf(err, errlen, "the kernel refused xdp-filter's program: %s", strerror(-rc));
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

/* Its map of family holding the keys, for source and destination alike. */
static int xdp_filter_fill(struct bpf_object *obj, const struct bench_keys *k, int family, char *err, size_t errlen)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *flags = calloc((size_t)(ncpus > 0 ? ncpus : 1), sizeof(uint64_t));
	int fd = bpf_object__find_map_fd_by_name(obj, family == 4 ? "filter_ipv4" : "filter_ipv6");

	for (int c = 0; flags && c < ncpus; c++)
		flags[c] = XDPFILT_FLAG_SRC | XDPFILT_FLAG_DST;
	for (uint64_t i = 0; flags && fd >= 0 && i < k->n; i++)
		if (bpf_map_update_elem(fd, k->present[i], flags, BPF_ANY) < 0) {
			snprintf(err, errlen, "cannot fill xdp-filter's map: %s", strerror(errno));
			free(flags);
			return -1;
		}
	free(flags);
	return fd >= 0 ? 0 : -1;
}

static const char *const PROGRAMS[] = { "bloomd", "hash map", "LPM trie", "bloom map", "xdp-filter", "parse floor" };
#define NPROGRAMS 6

static int program_fd(const struct xdp_bench *skel, const struct action_xdp *x, struct bpf_object *action_xdp_filter, unsigned p)
{
	switch (p) {
	case 0:
		return action_xdp_program_fd(x);
	case 1:
		return bpf_program__fd(skel->progs.peer_hash);
	case 2:
		return bpf_program__fd(skel->progs.peer_lpm);
	case 3:
		return bpf_program__fd(skel->progs.peer_bloom);
	case 4:
		return action_xdp_filter ? bpf_program__fd(bpf_object__next_program(action_xdp_filter, NULL)) : -1;
	default:
		return bpf_program__fd(skel->progs.peer_floor);
	}
}

static int bench_size(uint64_t n, int family, const struct xdp_opts *o, char *err, size_t errlen)
{
	struct rng r;
	struct bench_keys k = { .n = n, .present = malloc(n * 16), .absent = malloc(n * 16) };
	struct action_xdp_options xo = { .events_rate = 0, .choices = 2, .bits_per_entry = 16, .capacity = n,
				  .long_capacity = family == 6 ? n : 0 };
	struct action_xdp *x = NULL;
	struct bench_run br = { .family = family };
	struct bpf_object *action_xdp_filter = NULL;
	int rc = -1;

	rng_seed(&r, 0xbe7c4 + n + (uint64_t)family);
	if (k.present == NULL || k.absent == NULL)
		goto out;
	random_keys(&r, k.present, n);
	random_keys(&r, k.absent, n);
	if ((x = action_xdp_open(NULL, &xo, NULL, NULL, err, errlen)) == NULL ||
	    (br.skel = peers_load(n, family, err, errlen)) == NULL || fill(br.skel, x, &k, family, err, errlen) < 0)
		goto out;
	br.keys_len = (n * 16 + 4095) & ~(size_t)4095;
	br.keys = mmap(NULL, br.keys_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(br.skel->maps.keys), 0);
	if (br.keys == MAP_FAILED) {
		br.keys = NULL;
		snprintf(err, errlen, "cannot map the keys: %s", strerror(errno));
		goto out;
	}
	char why[256] = "";
	action_xdp_filter = xdp_filter_load(n, why, sizeof(why));
	if (action_xdp_filter && xdp_filter_fill(action_xdp_filter, &k, family, why, sizeof(why)) < 0) {
		bpf_object__close(action_xdp_filter);
		action_xdp_filter = NULL;
	}
	double absent[NPROGRAMS][3], present[NPROGRAMS][3];
	for (unsigned p = 0; p < NPROGRAMS; p++) {
		int fd = program_fd(br.skel, x, action_xdp_filter, p);
		if (fd < 0)
			continue;
		measure(&br, fd, (const uint8_t(*)[16])k.absent, n, o, &absent[p][0], &absent[p][1], &absent[p][2]);
		measure(&br, fd, (const uint8_t(*)[16])k.present, n, o, &present[p][0], &present[p][1], &present[p][2]);
	}
	for (unsigned p = 0; p < NPROGRAMS; p++)
		if (program_fd(br.skel, x, action_xdp_filter, p) < 0)
			printf("%-12s IPv%d %8llu  skipped: %s\n", PROGRAMS[p], family, (unsigned long long)n, why);
		else
			printf("%-12s IPv%d %8llu  %7.1f [%5.1f-%5.1f]  %5.2fx  %7.1f [%5.1f-%5.1f]  %5.2fx\n", PROGRAMS[p], family,
		       (unsigned long long)n, absent[p][0], absent[p][1], absent[p][2], absent[p][0] / absent[1][0],
		       present[p][0], present[p][1], present[p][2], present[p][0] / present[1][0]);
	rc = 0;
out:
	bpf_object__close(action_xdp_filter);
	if (br.keys)
		munmap(br.keys, br.keys_len);
	xdp_bench__destroy(br.skel);
	action_xdp_close(x);
	free(k.present);
	free(k.absent);
	return rc;
}

static int parse_opts(int argc, char **argv, struct xdp_opts *o)
{
	static const struct option LONG[] = { { "sizes", required_argument, NULL, 's' },
					      { "runs", required_argument, NULL, 'r' },
					      { "repeat", required_argument, NULL, 'n' },
					      { NULL, 0, NULL, 0 } };
	int c;

	*o = (struct xdp_opts){ .sizes = { 100000, 1000000 }, .nsizes = 2, .runs = 5, .repeat = 1000000 };
	while ((c = getopt_long(argc, argv, "", LONG, NULL)) != -1) {
		char *text = optarg, *tok;
		switch (c) {
		case 's':
			o->nsizes = 0;
			while ((tok = strsep(&text, ",")) != NULL && o->nsizes < 4)
				o->sizes[o->nsizes++] = strtoull(tok, NULL, 10);
			break;
		case 'r':
			o->runs = (unsigned)atoi(optarg);
			break;
		case 'n':
			o->repeat = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		default:
			return -1;
		}
	}
	for (unsigned i = 0; i < o->nsizes; i++)
		if (o->sizes[i] < 64 || o->sizes[i] > 16000000)
			return -1;
	return o->runs >= 1 && o->runs <= BENCH_MAX_RUNS && o->repeat >= 1 ? 0 : -1;
}

int bench_xdp(int argc, char **argv)
{
	struct xdp_opts o;
	char err[512];

	if (parse_opts(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: " BENCH_PROG " xdp [--sizes N,N] [--runs R] [--repeat N]\n");
		return 2;
	}
	printf("XDP per packet (BPF_PROG_TEST_RUN, ns, median of %u runs [min-max] of %u packets; each packet\n"
	       "another key, source and destination looked up; x: against the hash map in the same run)\n", o.runs,
	       o.repeat);
	printf("%-12s %4s %8s  %-23s %6s  %-23s %6s\n", "program", "", "entries", "key absent", "", "key present", "");
	for (unsigned i = 0; i < o.nsizes; i++)
		for (int family = 4; family <= 6; family += 2)
			if (bench_size(o.sizes[i], family, &o, err, sizeof(err)) < 0) {
				printf("xdp: skipped: %s\n", err);
				return 0;
			}
	return 0;
}
