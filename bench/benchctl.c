/* benchctl.c - bloombench control: bulk load through the control socket, and a rebuild under load. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "ctlconn.h"
#include "synth.h"


struct control_options {
	uint64_t entries, packets;
	unsigned rounds, runs, replays;
	const char *bloomd;
	bool json;
};

/* One command on its own connection; its reply (NULL if none; quiet: no message then). */
static json_t *command(const char *sock, const char *line, bool quiet)
{
	struct ctlconn c = { .fd = -1, .quiet = quiet };
	json_t *reply = NULL;

	if (ctlconn_open(&c, BENCH_PROG, sock) == 0 && ctlconn_send(&c, line, strlen(line)) == 0)
		reply = ctlconn_reply(&c);
	ctlconn_close(&c);
	return reply;
}

/* bloomd with a socket and a state directory in dir; its pid, or -1. */
static pid_t start_bloomd(const char *bloomd, const char *dir, const char *sock)
{
	char conf[PATH_MAX];
	FILE *f;
	pid_t pid;

	snprintf(conf, sizeof(conf), "%s/bloomd.conf", dir);
	if ((f = fopen(conf, "w")) == NULL)
		return -1;
	/* No auto-rebuild: the one measured is the only one (it also sizes the filters for the load). */
	fprintf(f, "[filter]\nauto_rebuild = no\n[control]\nsocket = %s\n[store]\ndir = %s/state\n"
		   "[output]\nevents =\n", sock, dir);
	fclose(f);
	if ((pid = fork()) == 0) {
		execl(bloomd, bloomd, "-c", conf, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && pid > 0; i++) {
		json_t *r = command(sock, "version\n", true);
		if (r) {
			json_decref(r);
			return pid;
		}
		usleep(50000);
	}
	return -1;
}

static void stop_bloomd(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/*
 * The list loaded by the bloomctl beside bloomd (`bloomctl --json load`),
 * as an operator would: its reading and writing are part of the time.
 * Seconds, or -1.
 */
static double load_list(const char *bloomd, const char *sock, const char *list, uint64_t *added)
{
	char bloomctl[PATH_MAX], out[4096];
	const char *slash = strrchr(bloomd, '/');
	int pipefd[2];
	size_t len = 0;
	int status;

	snprintf(bloomctl, sizeof(bloomctl), "%.*sbloomctl", slash ? (int)(slash - bloomd + 1) : 0, bloomd);
	if (pipe(pipefd) < 0)
		return -1;
	double t0 = bench_now_ns();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		close(pipefd[0]);
		execl(bloomctl, bloomctl, "-s", sock, "--json", "load", list, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (pid > 0 && len < sizeof(out) - 1) { /* its one JSON line */
		ssize_t got = read(pipefd[0], out + len, sizeof(out) - 1 - len);
		if (got > 0)
			len += (size_t)got;
		else if (got == 0 || errno != EINTR)
			break;
	}
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	double seconds = (bench_now_ns() - t0) / 1e9;
	out[len] = '\0';
	json_t *r = json_loads(out, 0, NULL);
	/* the random list may hold a few repeats */
	*added = (uint64_t)(json_integer_value(json_object_get(r, "added")) +
			    json_integer_value(json_object_get(r, "present")));
	json_decref(r);
	return seconds;
}

/* Each run's rebuild: its seconds, the loop held in all and at most at once, the replays' longest gap. */
struct rebuild_runs {
	double seconds[100], stall_ms[100], hold_ms[100], gap_ms[100];
};

/*
 * Queue o->replays replays of pcap (each waited for on its own connection),
 * then rebuild with --wait while they run. Fills run k of runs.
 */
static int rebuild_under_load(const char *sock, const char *pcap, const struct control_options *o,
			      struct rebuild_runs *runs, unsigned k)
{
	struct ctlconn conns[64];
	char line[PATH_MAX + 32];
	unsigned n = o->replays;
	json_t *r;

	for (unsigned i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "replay %s --wait\n", pcap);
		conns[i] = (struct ctlconn){ .fd = -1 };
		if (ctlconn_open(&conns[i], BENCH_PROG, sock) < 0 || ctlconn_send(&conns[i], line, strlen(line)) < 0)
			return -1;
	}
	usleep(100000); /* the replays are running */
	snprintf(line, sizeof(line), "rebuild --rounds %u --wait\n", o->rounds);
	r = command(sock, line, false);
	if (r == NULL || !json_is_true(json_object_get(r, "ok"))) {
		const char *why = json_string_value(json_object_get(r, "error"));
		fprintf(stderr, BENCH_PROG ": control: rebuild: %s\n", why ? why : "no reply");
		json_decref(r);
		return -1;
	}
	runs->seconds[k] = json_real_value(json_object_get(r, "seconds"));
	runs->stall_ms[k] = json_real_value(json_object_get(r, "max_stall_ms"));
	runs->hold_ms[k] = json_real_value(json_object_get(r, "longest_hold_ms"));
	json_decref(r);
	runs->gap_ms[k] = 0;
	for (unsigned i = 0; i < n; i++) {
		r = ctlconn_reply(&conns[i]);
		double gap = json_real_value(json_object_get(r, "max_gap_ms"));
		if (gap > runs->gap_ms[k])
			runs->gap_ms[k] = gap;
		json_decref(r);
		ctlconn_close(&conns[i]);
	}
	return 0;
}

static int parse(int argc, char **argv, struct control_options *o)
{
	static const struct option opts[] = {
		{ "entries", required_argument, NULL, 'n' }, { "packets", required_argument, NULL, 'p' },
		{ "rounds", required_argument, NULL, 'r' },  { "runs", required_argument, NULL, 'R' },
		{ "replays", required_argument, NULL, 'q' }, { "bloomd", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },	     { NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': rc |= cli_u64(BENCH_PROG, "--entries", optarg, 1000, 100000000, &o->entries); break;
		case 'p': rc |= cli_u64(BENCH_PROG, "--packets", optarg, 1000, 100000000, &o->packets); break;
		case 'r': rc |= cli_unsigned(BENCH_PROG, "--rounds", optarg, 1, 1000, &o->rounds); break;
		case 'R': rc |= cli_unsigned(BENCH_PROG, "--runs", optarg, 1, 100, &o->runs); break;
		case 'q': rc |= cli_unsigned(BENCH_PROG, "--replays", optarg, 1, 64, &o->replays); break;
		case 'b': o->bloomd = optarg; break;
		case 'j': o->json = true; break;
		default: return -1;
		}
	}
	return rc;
}

/* The medians of the runs (each array sorted). */
static void report(const struct control_options *o, double load_s, struct rebuild_runs *runs)
{
	double rebuild_s = bench_median(runs->seconds, o->runs), stall = bench_median(runs->stall_ms, o->runs),
	       hold = bench_median(runs->hold_ms, o->runs), gap = bench_median(runs->gap_ms, o->runs);

	if (o->json) {
		char name[2][64];
		snprintf(name[0], sizeof(name[0]), "load-%llu", (unsigned long long)o->entries);
		snprintf(name[1], sizeof(name[1]), "rebuild-%llu", (unsigned long long)o->entries);
		cli_print_json(json_pack("{s:[{s:s,s:f,s:f},{s:s,s:f,s:i,s:f,s:f,s:f}]}", "rows", "name", name[0],
					 "seconds", load_s, "entries_per_second", (double)o->entries / load_s,
					 "name", name[1], "seconds", rebuild_s, "rounds", (int)o->rounds,
					 "max_stall_ms", stall, "longest_hold_ms", hold, "replay_max_gap_ms", gap));
		return;
	}
	printf("control: %llu addr and pair entries through the socket, median of %u runs\n",
	       (unsigned long long)o->entries, o->runs);
	printf("  load (bloomctl load)      %8.2f s   %8.0f entries/s\n", load_s, (double)o->entries / load_s);
	printf("  rebuild, %2u rounds        %8.2f s   loop held %.2f ms in all, %.2f ms at most at once;\n"
	       "                                        longest gap between packet batches of a replay\n"
	       "                                        meanwhile %.2f ms\n",
	       o->rounds, rebuild_s, stall, hold, gap);
}

int bench_control(int argc, char **argv)
{
	struct control_options o = { .entries = 1000000, .packets = 500000, .rounds = 10, .runs = 3,
				     .replays = 16 };
	char dir[] = "/tmp/bloombench-XXXXXX", sock[PATH_MAX], list[PATH_MAX], pcap[PATH_MAX],
	     self[PATH_MAX], bloomd[PATH_MAX], err[256];
	double load[100];
	static struct rebuild_runs runs;
	int rc = 1;

	if (parse(argc, argv, &o) < 0 || mkdtemp(dir) == NULL) {
		fprintf(stderr, "usage: " BENCH_PROG " control [--entries N] [--packets N] [--rounds R] [--runs R] [--replays Q] [--bloomd PATH] [--json]\n");
		return 2;
	}
	if (o.bloomd == NULL) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		char *slash = strrchr(self, '/');
		snprintf(bloomd, sizeof(bloomd), "%.*s/bloomd", slash ? (int)(slash - self) : 1, slash ? self : ".");
		o.bloomd = bloomd;
	}
	snprintf(sock, sizeof(sock), "%s/ctl.sock", dir);
	snprintf(list, sizeof(list), "%s/entries.list", dir);
	snprintf(pcap, sizeof(pcap), "%s/traffic.pcap", dir);
	struct synth_random sr = { .packets = o.packets, .entries = o.entries, .seed = 7, .list = list };
	if (synth_random_capture(pcap, &sr, err, sizeof(err)) < 0) {
		fprintf(stderr, BENCH_PROG ": control: %s\n", err);
		goto out;
	}
	for (unsigned r = 0; r < o.runs; r++) {
		char cmd[PATH_MAX + 16];
		uint64_t added = 0;
		snprintf(cmd, sizeof(cmd), "rm -rf %s/state", dir);
		if (system(cmd) != 0)
			goto out;
		pid_t pid = start_bloomd(o.bloomd, dir, sock);
		if (pid < 0) {
			fprintf(stderr, BENCH_PROG ": control: cannot start %s\n", o.bloomd);
			goto out;
		}
		load[r] = load_list(o.bloomd, sock, list, &added);
		int ok = load[r] > 0 && added == o.entries &&
			 rebuild_under_load(sock, pcap, &o, &runs, r) == 0;
		stop_bloomd(pid);
		if (!ok) {
			fprintf(stderr, BENCH_PROG ": control: run %u failed (%llu of %llu entries taken)\n", r,
				(unsigned long long)added, (unsigned long long)o.entries);
			goto out;
		}
	}
	report(&o, bench_median(load, o.runs), &runs);
	rc = 0;
out:
	unlink(list);
	unlink(pcap);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
