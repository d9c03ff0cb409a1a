/* bench.h - what the benchmark commands share (bench.c), and the commands bloombench.c runs. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_BENCH_H
#define BLOOMD_BENCH_H

#define BENCH_PROG "bloombench"
#define BENCH_MAX_RUNS 51 /* --runs at most */

double bench_now_ns(void);
/* Median of n values (sorts them). */
double bench_median(double *v, unsigned n);

/* bloombench filter: lookups and inserts against libbloom; bloombench hash: XXH3 against SipHash. */
int bench_filter_cmd(int argc, char **argv);
int bench_hash(int argc, char **argv);
/* benchbest.c: bloomd's blocked filter against Boost.Bloom and RocksDB's FastLocalBloom. */
int bench_peers(int argc, char **argv);

/* bloombench replay: bloomd's packet path against a bare pcap_dispatch loop. */
int bench_replay(int argc, char **argv);
/* bloombench signatures: signature scanning against Hyperscan. */
int bench_signatures(int argc, char **argv);

/* bloombench similar: entry sets that look alike (shared prefixes) against random ones. */
int bench_similar(int argc, char **argv);

struct matcher;
/* A matcher as the daemon makes it by default, with signature windows of window bytes. */
struct matcher *bench_matcher(unsigned window);

/* benchxdp.c: bloomd's XDP program against a BPF hash map, an LPM trie and the bloom-filter map. */
int bench_xdp(int argc, char **argv);

/* bloombench control: bulk load through the control socket, and a rebuild under load. */
int bench_control(int argc, char **argv);

#endif
