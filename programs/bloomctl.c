/* bloomctl.c - the operator's client: commands to bloomd's control socket; `calc` locally. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctlconn.h"
#include "filter.h"
#include "sizing.h"
#include "version.h"

#define PROG "bloomctl"
#define DEFAULT_SOCKET "/run/bloomd/control.sock"
#define MAX_LINE 8192           /* the daemon's cap on a command line */

/* Exit codes: 0 success/present, 1 absent, 2 usage or daemon error. */
enum { EXIT_ABSENT = 1, EXIT_USAGE = 2 };

struct calc_request {
	enum filter_layout layout;
	unsigned choices, rounds;
	uint64_t entries;
	double fpr, bits_per_entry;
	uint64_t memory;
	bool json;
};

struct calc_result {
	uint64_t bits;
	struct sizing_choice choice;
};

/* The commands the daemon knows, as bloomctl takes them (commands.def), and bloomctl's own. */
static void usage(FILE *out)
{
	fprintf(out, "usage: " PROG " [-s SOCKET] [--json] COMMAND [ARGS]\n");
#define COMMAND(name, changes, usage, cli_usage, cli_help) \
	fprintf(out, strlen(cli_usage) < 30 ? "  %-30s%s\n" : "  %s  %s\n", cli_usage, cli_help);
#include "commands.def"
#undef COMMAND
	fprintf(out,
		"  calc --entries N (--fpr P | --bits-per-entry B | --memory SIZE)\n"
		"       [--layout classic|blocked] [--choices C] [--rounds R]   size a filter (local)\n"
		"The socket: -s, else $BLOOMD_SOCKET, else " DEFAULT_SOCKET ".\n"
		"  --version                     bloomctl's version\n"
		"Exit: 0 done or present, 1 absent, 2 usage or daemon error (text and --json alike).\n");
}

/* Smallest bits per entry whose predicted FPR is at most p (bisection; FPR falls with b). */
static int bits_per_entry_for_fpr(const struct calc_request *rq, double *b, char *err,
				  size_t errlen)
{
	struct sizing_choice ch;
	double lo = 1.0, hi = 64.0;

	if (sizing_best(rq->layout, rq->choices, hi, rq->rounds, &ch, err, errlen) < 0)
		return -1;
	if (ch.fpr > rq->fpr) {
		snprintf(err, errlen, "--fpr %g needs more than 64 bits per entry", rq->fpr);
		return -1;
	}
	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;
		if (sizing_best(rq->layout, rq->choices, mid, rq->rounds, &ch, err, errlen) < 0)
			return -1;
		if (ch.fpr <= rq->fpr)
			hi = mid;
		else
			lo = mid;
	}
	*b = hi;
	return 0;
}

static int calc_size(const struct calc_request *rq, struct calc_result *out, char *err,
		     size_t errlen)
{
	double b = rq->bits_per_entry;

	if (rq->memory) {
		/* A budget: round down to whole blocks, never past it. */
		out->bits = rq->memory * 8;
		if (rq->layout == FILTER_BLOCKED)
			out->bits -= out->bits % FILTER_BLOCK_BITS;
	} else {
		if (rq->fpr > 0 && rq->layout == FILTER_CLASSIC && rq->choices == 1)
			out->bits = sizing_bits_for_fpr(rq->entries, rq->fpr); /* the textbook size */
		else if (rq->fpr > 0 && bits_per_entry_for_fpr(rq, &b, err, errlen) < 0)
			return -1;
		if (!(rq->fpr > 0 && rq->layout == FILTER_CLASSIC && rq->choices == 1))
			out->bits = (uint64_t)ceil((double)rq->entries * b);
		out->bits = sizing_round_bits(rq->layout, out->bits);
	}
	if (out->bits < FILTER_MIN_BITS || out->bits < rq->entries) {
		snprintf(err, errlen, "%llu bits is less than one bit per entry for %llu entries",
			 (unsigned long long)out->bits, (unsigned long long)rq->entries);
		return -1;
	}
	return sizing_best(rq->layout, rq->choices, (double)out->bits / (double)rq->entries,
			   rq->rounds, &out->choice, err, errlen);
}

static void calc_print(const struct calc_request *rq, const struct calc_result *r)
{
	uint64_t bytes = (r->bits + 7) / 8;

	if (rq->json) {
		json_t *o = json_pack("{s:s,s:i,s:I,s:I,s:I,s:i,s:i,s:f}", "layout",
				      filter_layout_name(rq->layout), "choices", (int)rq->choices,
				      "entries", (json_int_t)rq->entries, "bits", (json_int_t)r->bits,
				      "bytes", (json_int_t)bytes, "hashes", (int)r->choice.hashes,
				      "rounds", (int)rq->rounds, "fpr_predicted", r->choice.fpr);
		cli_print_json(o);
		return;
	}
	printf("layout          %s\n", filter_layout_name(rq->layout));
	printf("choices         %u\n", rq->choices);
	printf("entries         %llu\n", (unsigned long long)rq->entries);
	printf("bits            %llu (%.2f per entry)\n", (unsigned long long)r->bits,
	       (double)r->bits / (double)rq->entries);
	printf("bytes           %llu (%.2f MiB)\n", (unsigned long long)bytes, bytes / 1048576.0);
	printf("hashes          %u\n", r->choice.hashes);
	printf("rounds          %u%s\n", rq->rounds, rq->rounds > 1 ? " (offline rebuild)" : " (online)");
	printf("fpr_predicted   %.4g\n", r->choice.fpr);
}

static int parse_calc(int argc, char **argv, struct calc_request *rq)
{
	static const struct option opts[] = {
		{ "entries", required_argument, NULL, 'n' }, { "fpr", required_argument, NULL, 'p' },
		{ "bits-per-entry", required_argument, NULL, 'b' },
		{ "memory", required_argument, NULL, 'm' },  { "choices", required_argument, NULL, 'c' },
		{ "layout", required_argument, NULL, 'l' },  { "rounds", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },	     { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o, rc = 0, sizes = 0;

	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'n': rc |= cli_u64(PROG " calc", "--entries", optarg, 1, 1ULL << 36, &rq->entries); break;
		case 'p': rc |= cli_double(PROG " calc", "--fpr", optarg, 1e-15, 0.5, &rq->fpr); sizes++; break;
		case 'b': rc |= cli_double(PROG " calc", "--bits-per-entry", optarg, 1, 64, &rq->bits_per_entry); sizes++; break;
		case 'c': rc |= cli_unsigned(PROG " calc", "--choices", optarg, 1, FILTER_MAX_CHOICES, &rq->choices); break;
		case 'r': rc |= cli_unsigned(PROG " calc", "--rounds", optarg, 1, 1000, &rq->rounds); break;
		case 'j': rq->json = cli_errors_json = true; break;
		case 'm':
			sizes++;
			if (sizing_parse_size(optarg, &rq->memory) < 0) {
				cli_error(PROG " calc: --memory: expected a size such as 4MiB, 512KiB or 1048576, got '%s'", optarg);
				rc = -1;
			}
			break;
		case 'l': rc |= cli_layout(PROG " calc", "--layout", optarg, &rq->layout); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (rc == 0 && optind < argc) {
		cli_error(PROG " calc: unexpected argument '%s'", argv[optind]);
		rc = -1;
	}
	if (rc == 0 && (rq->entries == 0 || sizes != 1)) {
		cli_error(PROG " calc: give --entries and exactly one of --fpr, --bits-per-entry, --memory");
		rc = -1;
	}
	return rc;
}

static int cmd_calc(int argc, char **argv)
{
	struct calc_request rq = { .layout = FILTER_BLOCKED, .choices = 2 };
	struct calc_result res;
	char err[256];

	if (parse_calc(argc, argv, &rq) < 0)
		return EXIT_USAGE;
	if (rq.rounds == 0)
		rq.rounds = sizing_default_rounds(rq.choices);
	if (calc_size(&rq, &res, err, sizeof(err)) < 0) {
		cli_error(PROG " calc: %s", err);
		return EXIT_USAGE;
	}
	calc_print(&rq, &res);
	return 0;
}

/* ---- printing replies ---- */

/* Nested objects as dotted keys, one "key value" a line. */
static void print_flat(const char *prefix, json_t *v)
{
	const char *key;
	json_t *member;
	char name[256];

	if (json_is_object(v)) {
		json_object_foreach(v, key, member) {
			snprintf(name, sizeof(name), "%s%s%s", prefix, prefix[0] ? "." : "", key);
			print_flat(name, member);
		}
		return;
	}
	if (json_is_null(v))
		return;
	char *text = json_is_string(v) ? strdup(json_string_value(v)) : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(6));
	printf("%-40s %s\n", prefix, text ? text : "?");
	free(text);
}

static void print_errors(json_t *errors, const char *file)
{
	size_t i;
	json_t *e;

	json_array_foreach(errors, i, e) {
		const char *msg = json_string_value(e);
		unsigned long line;
		int used = 0;
		if (file && sscanf(msg, "line %lu: %n", &line, &used) == 1 && used > 0)
			fprintf(stderr, "%s:%lu: %s\n", file, line, msg + used);
		else
			fprintf(stderr, "%s\n", msg);
	}
}

/* " (lists a, b)" of an array of list names, or "". */
static const char *lists_text(json_t *names, char *buf, size_t len)
{
	size_t i, n = 0;
	json_t *name;

	buf[0] = '\0';
	json_array_foreach(names, i, name)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", i ? ", " : " (list ", json_string_value(name));
	if (n && n + 1 < len)
		strcat(buf, ")");
	return buf;
}

/* The pass lists that exempt an entry or address, if any. */
static void print_exempt(json_t *names)
{
	char buf[512];

	if (json_array_size(names))
		printf("exempt%s: a pass list holds it; no other list drops, rejects, alerts or blocks on it\n",
		       lists_text(names, buf, sizeof(buf)));
}

/* seconds as an operator reads an age or a wait: "45 s", "12 min", "3 h", "2 d". */
static const char *span(long long seconds, char *buf, size_t len)
{
	if (seconds < 0)
		seconds = 0;
	if (seconds < 120)
		snprintf(buf, len, "%lld s", seconds);
	else if (seconds < 7200)
		snprintf(buf, len, "%lld min", seconds / 60);
	else if (seconds < 2 * 86400)
		snprintf(buf, len, "%lld h", seconds / 3600);
	else
		snprintf(buf, len, "%lld d", seconds / 86400);
	return buf;
}

/* A fetched list's line: its state, the age of its last success, its next fetch, its last error shortened. */
static void print_fetch(json_t *fetch, bool taking)
{
	const char *state = json_string_value(json_object_get(fetch, "state"));
	json_t *answered = json_object_get(fetch, "answered"), *next = json_object_get(fetch, "next");
	const char *error = json_string_value(json_object_get(json_object_get(fetch, "last"), "error"));
	long long now = (long long)time(NULL);
	char a[32], b[32];

	if (taking || json_is_true(json_object_get(fetch, "under_way")))
		state = "taking";
	printf("  %s", state ? state : "?");
	if (json_object_get(fetch, "stale_since"))
		printf(" for %s", span(now - json_integer_value(json_object_get(fetch, "stale_since")), a, sizeof(a)));
	printf("; last success %s%s", json_is_integer(answered) ? span(now - json_integer_value(answered), a, sizeof(a)) : "never",
	       json_is_integer(answered) ? " ago" : "");
	if (json_is_integer(next))
		printf("; next fetch in %s", span(json_integer_value(next) - now, b, sizeof(b)));
	printf("; %lld new, %lld not modified, %lld failed, %lld refused\n",
	       (long long)json_integer_value(json_object_get(fetch, "new")),
	       (long long)json_integer_value(json_object_get(fetch, "not_modified")),
	       (long long)json_integer_value(json_object_get(fetch, "failed")),
	       (long long)json_integer_value(json_object_get(fetch, "refused")));
	if (error && strcmp(state ? state : "", "current") != 0)
		printf("  last error: %.160s%s\n", error, strlen(error) > 160 ? "..." : "");
}

static void print_list(json_t *l)
{
	json_t *last = json_object_get(l, "last_load"), *fetch = json_object_get(l, "fetch");
	const char *file = json_string_value(json_object_get(l, "file")), *url = json_string_value(json_object_get(l, "url"));
	const char *source = fetch && json_object_get(fetch, "source") ? "crowdsec" : url ? "url" : file ? "file" : "bloomctl";
	bool taking = json_is_true(json_object_get(l, "taking"));
	bool refused = last && !json_is_true(json_object_get(last, "taken"));

	printf("%s: %lld entries, %s %s (%s), version %lld, category %s, severity %lld, sid %lld, action %s\n",
	       json_string_value(json_object_get(l, "name")), (long long)json_integer_value(json_object_get(l, "entries")),
	       source, url ? url : file ? file : "replace and add", json_string_value(json_object_get(l, "format")),
	       (long long)json_integer_value(json_object_get(l, "version")),
	       json_string_value(json_object_get(l, "category")) ? json_string_value(json_object_get(l, "category")) : "-",
	       (long long)json_integer_value(json_object_get(l, "severity")),
	       (long long)json_integer_value(json_object_get(l, "sid")), json_string_value(json_object_get(l, "action")));
	if (fetch)
		print_fetch(fetch, taking);
	else
		printf("  %s\n", taking ? "taking" : refused ? "refused" : "current");
	if (json_object_get(l, "kernel"))
		printf("  kernel's sets: %s\n", json_string_value(json_object_get(l, "kernel")));
	if (refused)
		printf("  last version refused: %s\n", json_string_value(json_object_get(last, "error")));
	else if (last)
		printf("  last version: %lld added, %lld removed (%lld entries read, %lld bad lines skipped)\n",
		       (long long)json_integer_value(json_object_get(last, "added")),
		       (long long)json_integer_value(json_object_get(last, "removed")),
		       (long long)json_integer_value(json_object_get(last, "entries")),
		       (long long)json_integer_value(json_object_get(last, "bad")));
}

/* The human-readable form of a reply; returns the exit code. */
static int print_reply(const char *command, json_t *r, const char *file)
{
	char names[512];

	if (strcmp(command, "query") == 0) {
		bool present = json_is_true(json_object_get(r, "present"));
		json_t *covering = json_object_get(r, "covered_by");
		printf("%s: %s%s%s\n", json_string_value(json_object_get(r, "entry")),
		       present ? "present" : "absent",
		       present ? "" : json_is_true(json_object_get(r, "filter")) ? " (the filter alone would say yes)" : "",
		       lists_text(json_object_get(r, "held_by"), names, sizeof(names)));
		if (!present && json_array_size(covering))
			printf("  but covered by %s (bloomctl match lists all)\n",
			       json_string_value(json_array_get(covering, 0)));
		print_exempt(json_object_get(r, "exempt_by"));
		return present ? 0 : EXIT_ABSENT;
	}
	if (strcmp(command, "match") == 0) {
		size_t i;
		json_t *e;
		json_array_foreach(json_object_get(r, "entries"), i, e)
			printf("%s%s\n", json_string_value(e),
			       lists_text(json_object_get(json_object_get(r, "lists"), json_string_value(e)), names, sizeof(names)));
		print_exempt(json_object_get(r, "exempt_by"));
		return json_is_true(json_object_get(r, "covered")) ? 0 : EXIT_ABSENT;
	}
	if (strcmp(command, "add") == 0 || strcmp(command, "del") == 0) {
		bool done = json_is_true(json_object_get(r, command[0] == 'a' ? "added" : "deleted"));
		printf("%s: %s\n", json_string_value(json_object_get(r, "entry")),
		       command[0] == 'a' ? (done ? "added" : "already present") : (done ? "deleted" : "absent from the local list"));
		if (json_array_size(json_object_get(r, "still_held_by")))
			printf("  still held by%s: it stays until they let it go\n",
			       lists_text(json_object_get(r, "still_held_by"), names, sizeof(names)));
		return command[0] == 'd' && !done ? EXIT_ABSENT : 0;
	}
	if (strcmp(command, "list") == 0) {
		size_t i;
		json_t *e;
		json_array_foreach(json_object_get(r, "entries"), i, e)
			puts(json_string_value(e));
		return 0;
	}
	if (strcmp(command, "lists") == 0) {
		size_t i;
		json_t *l;
		json_array_foreach(json_object_get(r, "lists"), i, l)
			print_list(l);
		return 0;
	}
	if (strcmp(command, "reload") == 0) { /* a refusal is said by the caller, from the error */
		size_t i;
		json_t *l;
		printf("configuration reloaded%s\n", json_is_true(json_object_get(r, "rebuild")) ? "; the filters are rebuilt" : "");
		json_array_foreach(json_object_get(r, "restart_needed"), i, l)
			printf("  %s: changed, in force at the next start\n", json_string_value(l));
		json_array_foreach(json_object_get(r, "lists"), i, l)
			print_list(l);
		return 0;
	}
	if (strcmp(command, "replace") == 0) {
		json_t *load = json_object_get(r, "load");
		printf("version taken: %lld entries read, %lld added, %lld removed, %lld bad lines skipped\n",
		       (long long)json_integer_value(json_object_get(load, "entries")),
		       (long long)json_integer_value(json_object_get(load, "added")),
		       (long long)json_integer_value(json_object_get(load, "removed")),
		       (long long)json_integer_value(json_object_get(load, "bad")));
		return 0;
	}
	if (strcmp(command, "blocked") == 0) {
		size_t i;
		json_t *b;
		json_array_foreach(json_object_get(r, "blocked"), i, b)
			printf("%s %llds left\n", json_string_value(json_object_get(b, "address")),
			       (long long)json_integer_value(json_object_get(b, "seconds_left")));
		if ((size_t)json_integer_value(json_object_get(r, "count")) > json_array_size(json_object_get(r, "blocked")))
			printf("(%lld in all; the first %zu shown)\n", (long long)json_integer_value(json_object_get(r, "count")),
			       json_array_size(json_object_get(r, "blocked")));
		return 0;
	}
	if (strcmp(command, "unblock") == 0) {
		bool done = json_is_true(json_object_get(r, "unblocked"));
		printf("%s: %s\n", json_string_value(json_object_get(r, "address")),
		       done ? "unblocked (back only if it matches again)" : "not blocked");
		return done ? 0 : EXIT_ABSENT;
	}
	if (strcmp(command, "flush") == 0) {
		printf("flushed: %lld entries left the list\n", (long long)json_integer_value(json_object_get(r, "removed")));
		return 0;
	}
	if (strcmp(command, "metrics") == 0) {
		fputs(json_string_value(json_object_get(r, "metrics")), stdout);
		return 0;
	}
	if (strcmp(command, "load") == 0) {
		json_int_t rejected = json_integer_value(json_object_get(r, "rejected"));
		printf("added %lld, already present %lld, rejected %lld\n",
		       (long long)json_integer_value(json_object_get(r, "added")),
		       (long long)json_integer_value(json_object_get(r, "present")), (long long)rejected);
		print_errors(json_object_get(r, "errors"), file);
		if ((size_t)rejected > json_array_size(json_object_get(r, "errors")))
			fprintf(stderr, "(the first %zu of %lld rejected lines are shown)\n",
				json_array_size(json_object_get(r, "errors")), (long long)rejected);
		return rejected ? EXIT_USAGE : 0;
	}
	json_object_del(r, "ok");
	print_flat("", strcmp(command, "stats") == 0 ? json_object_get(r, "stats") : r);
	return 0;
}

/* ---- commands ---- */

struct remote {
	const char *socket;
	bool json;
};

/* Join args into one line: "command arg arg ...". */
static char *join(const char *command, int argc, char **argv)
{
	size_t len = strlen(command) + 2;
	char *line;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if ((line = malloc(len)) == NULL)
		return NULL;
	strcpy(line, command);
	for (int i = 0; i < argc; i++) {
		strcat(line, " ");
		strcat(line, argv[i]);
	}
	strcat(line, "\n");
	return line;
}

/*
 * `replay PCAP [--wait]`: bloomd opens no file a client names, so the file is
 * opened here, with this user's rights, and passed open with `replay -`,
 * named by its absolute path for events and stats.
 */
static int send_replay(struct ctlconn *c, int argc, char **argv)
{
	char path[PATH_MAX], line[PATH_MAX + 64];
	bool wait = argc == 2 && strcmp(argv[1], "--wait") == 0;

	if (argc < 1 || argc > 2 || (argc == 2 && !wait) || strcmp(argv[0], "--wait") == 0) {
		cli_error(PROG " replay: give one PCAP file, then --wait if you want its result");
		return -1;
	}
	/* O_NONBLOCK: a FIFO opens at once (and bloomd refuses it) instead of waiting for a writer. */
	int fd = open(argv[0], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		cli_error(PROG " replay: %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (realpath(argv[0], path) == NULL)
		snprintf(path, sizeof(path), "%s", argv[0]);
	snprintf(line, sizeof(line), "replay -%s --name %s\n", wait ? " --wait" : "", path);
	int rc = ctlconn_send_fd(c, line, strlen(line), fd);
	close(fd);
	return rc;
}

/* `replace LIST [FILE]`: FILE is opened here and passed open, as replay's is. */
static int send_replace(struct ctlconn *c, int argc, char **argv)
{
	char line[256];

	if (argc < 1 || argc > 2 || strlen(argv[0]) > 128) {
		cli_error(PROG " replace: give a LIST, then a FILE for a list without a file of its own");
		return -1;
	}
	if (argc == 1) {
		snprintf(line, sizeof(line), "replace %s\n", argv[0]);
		return ctlconn_send(c, line, strlen(line));
	}
	int fd = open(argv[1], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		cli_error(PROG " replace: %s: %s", argv[1], strerror(errno));
		return -1;
	}
	snprintf(line, sizeof(line), "replace %s -\n", argv[0]);
	int rc = ctlconn_send_fd(c, line, strlen(line), fd);
	close(fd);
	return rc;
}

/*
 * `load FILE|-`: the list streamed as `load -`, its lines, then ".". The
 * lines go out gathered, a write for up to LOAD_CHUNK bytes, and always
 * before a read that could wait: a write a line made the daemon take a
 * socket buffer a line (2,000,000 lines took it 2.8 s, a fifth of it in
 * the kernel), and lines from a slow pipe must still reach it before its
 * idle timeout.
 */
#define LOAD_CHUNK (64u << 10)

struct load_sender {
	struct ctlconn *c;
	bool failed;                   /* a write to the daemon failed (and said so) */
	size_t out_len, in_len, in_at; /* in: bytes read, the first in_at of them sent or skipped */
	char out[LOAD_CHUNK];
	char in[LOAD_CHUNK];           /* more than a line: MAX_LINE and its newline */
};

static int load_flush(struct load_sender *ls)
{
	if (ctlconn_send(ls->c, ls->out, ls->out_len) < 0)
		ls->failed = true;
	ls->out_len = 0;
	return ls->failed ? -1 : 0;
}

static int load_put(struct load_sender *ls, const char *text, size_t len)
{
	if (ls->out_len + len > sizeof(ls->out) && load_flush(ls) < 0)
		return -1;
	memcpy(ls->out + ls->out_len, text, len);
	ls->out_len += len;
	return 0;
}

/*
 * The next line's length with its newline (one is added to a last line
 * without), after reading more if it is not whole yet; 0 at the end, -1
 * after a message (a read error, or a line longer than MAX_LINE).
 */
static ssize_t load_next_line(struct load_sender *ls, int fd, const char *path, unsigned long lineno)
{
	for (;;) {
		char *line = ls->in + ls->in_at, *nl = memchr(line, '\n', ls->in_len - ls->in_at);
		size_t have = ls->in_len - ls->in_at;
		if (nl && (size_t)(nl - line) <= MAX_LINE)
			return nl - line + 1;
		if (nl || have > MAX_LINE) {
			cli_error(PROG ": %s:%lu: line longer than %d bytes; the load stops there", path, lineno, MAX_LINE);
			return -1;
		}
		memmove(ls->in, line, have);
		ls->in_len = have;
		ls->in_at = 0;
		if (load_flush(ls) < 0) /* before a read that may wait */
			return -1;
		ssize_t got = read(fd, ls->in + have, sizeof(ls->in) - 1 - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cli_error(PROG ": %s:%lu: %s; the load stops there", path, lineno, strerror(errno));
			return -1;
		}
		ls->in_len += (size_t)got;
		if (got == 0) {
			if (have == 0)
				return 0;
			ls->in[ls->in_len++] = '\n'; /* the room left for it */
		}
	}
}

/* 0, 1 when the load stopped early (after a message), -1 when the connection failed. */
static int send_list(struct ctlconn *c, const char *path)
{
	bool from_stdin = strcmp(path, "-") == 0;
	int fd = from_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	struct load_sender *ls = NULL;
	unsigned long lineno = 0;
	ssize_t len;
	int rc = -1;

	if (fd < 0 || (ls = calloc(1, sizeof(*ls))) == NULL) {
		cli_error(PROG ": %s: %s", path, strerror(fd < 0 ? errno : ENOMEM));
		goto out;
	}
	ls->c = c;
	rc = load_put(ls, "load -\n", 7);
	while (rc == 0 && (len = load_next_line(ls, fd, path, ++lineno)) != 0) {
		const char *line = ls->in + ls->in_at;
		if (len < 0) {
			rc = ls->failed ? -1 : 1;
			break;
		}
		ls->in_at += (size_t)len;
		if (!(len == 2 && line[0] == '.')) /* it would end the stream; not an entry anyway */
			rc = load_put(ls, line, (size_t)len);
	}
	if (rc >= 0 && (load_put(ls, ".\n", 2) < 0 || load_flush(ls) < 0))
		rc = -1;
out:
	free(ls);
	if (fd >= 0 && !from_stdin)
		close(fd);
	return rc;
}

static int run_remote(const struct remote *rm, const char *command, int argc, char **argv)
{
	struct ctlconn c = { .fd = -1 };
	char *line = NULL;
	const char *file = NULL;
	int rc = EXIT_USAGE, sent;

	if (ctlconn_open(&c, PROG, rm->socket) < 0)
		goto out;
	if (strcmp(command, "load") == 0) {
		if (argc != 1) {
			cli_error(PROG " load: give one FILE, or - for standard input");
			goto out;
		}
		file = strcmp(argv[0], "-") == 0 ? "-" : argv[0];
		sent = send_list(&c, argv[0]);
	} else if (strcmp(command, "replay") == 0) {
		sent = send_replay(&c, argc, argv);
	} else if (strcmp(command, "replace") == 0) {
		sent = send_replace(&c, argc, argv);
	} else {
		if ((line = join(command, argc, argv)) == NULL)
			goto out;
		sent = ctlconn_send(&c, line, strlen(line));
	}
	if (sent < 0)
		goto out;
	json_t *reply = ctlconn_reply(&c);
	if (reply == NULL)
		goto out;
	if (!json_is_true(json_object_get(reply, "ok"))) {
		fprintf(stderr, PROG " %s: %s\n", command, json_string_value(json_object_get(reply, "error")));
		json_t *problems = json_object_get(reply, "problems"), *l;
		if (problems)
			print_errors(problems, NULL);
		size_t i;
		json_array_foreach(json_object_get(reply, "lists"), i, l) /* a reload's refused lists */
			if (json_object_get(l, "last_load") && !json_is_true(json_object_get(json_object_get(l, "last_load"), "taken")))
				fprintf(stderr, "  list %s: %s\n", json_string_value(json_object_get(l, "name")),
					json_string_value(json_object_get(json_object_get(l, "last_load"), "error")));
		if (rm->json) { /* the reply itself too, for scripts */
			char *text = json_dumps(reply, JSON_COMPACT);
			puts(text ? text : "{}");
			free(text);
		}
		rc = EXIT_USAGE;
	} else if (rm->json) {
		char *text = json_dumps(reply, JSON_COMPACT);
		puts(text ? text : "{}");
		free(text);
		rc = 0;
		if (strcmp(command, "query") == 0 && !json_is_true(json_object_get(reply, "present")))
			rc = EXIT_ABSENT;
		if (strcmp(command, "del") == 0 && !json_is_true(json_object_get(reply, "deleted")))
			rc = EXIT_ABSENT;
		if (strcmp(command, "match") == 0 && !json_is_true(json_object_get(reply, "covered")))
			rc = EXIT_ABSENT;
		if (strcmp(command, "load") == 0 && json_integer_value(json_object_get(reply, "rejected")) > 0)
			rc = EXIT_USAGE; /* as in text: some lines were rejected */
	} else {
		rc = print_reply(command, reply, file && strcmp(file, "-") != 0 ? file : NULL);
	}
	if (sent > 0)
		rc = EXIT_USAGE; /* a load stopped early */
	json_decref(reply);
out:
	free(line);
	ctlconn_close(&c);
	return rc;
}

static const char *const REMOTE[] = {
#define COMMAND(name, changes, usage, cli_usage, cli_help) #name,
#include "commands.def"
#undef COMMAND
};

int main(int argc, char **argv)
{
	struct remote rm = { .socket = getenv("BLOOMD_SOCKET") };
	int i = 1;

	signal(SIGPIPE, SIG_IGN);
	if (rm.socket == NULL || rm.socket[0] == '\0')
		rm.socket = DEFAULT_SOCKET;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
			rm.socket = argv[++i];
		} else if (strcmp(argv[i], "--json") == 0) {
			rm.json = cli_errors_json = true;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf(PROG " %s\n", BLOOMD_VERSION);
			return 0;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			cli_error(PROG ": unknown option '%s'", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[i], "calc") == 0)
		return cmd_calc(argc - i, argv + i);
	/* --json may also come after the command */
	int n = 0;
	for (int j = i + 1; j < argc; j++)
		if (strcmp(argv[j], "--json") == 0)
			rm.json = cli_errors_json = true;
		else
			argv[i + 1 + n++] = argv[j];
	for (size_t k = 0; k < sizeof(REMOTE) / sizeof(REMOTE[0]); k++)
		if (strcmp(argv[i], REMOTE[k]) == 0)
			return run_remote(&rm, argv[i], n, argv + i + 1);
	cli_error(PROG ": unknown command '%s'", argv[i]);
	usage(stderr);
	return EXIT_USAGE;
}
