/* main.c - bloomd: options, signals, and the wiring from capture to events. */
#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "config.h"
#include "engine.h"
#include "entry.h"
#include "events.h"
#include "log.h"
#include "match.h"
#include "packet.h"
#include "stats.h"

#define DEFAULT_CONFIG "/etc/bloomd/bloomd.conf"

struct daemon {
	struct config *cfg;
	struct matcher *matcher;
	struct events *events;
	struct event_base *base;
	struct engine engine;
	char **files;              /* to replay, in order */
	size_t nfiles, next_file;
	struct capture *source;    /* the file being replayed, or the live interface */
	bool one_shot;             /* replaying files: exit when done */
	int exit_code;
	json_t *sources;           /* per source: name, packets, error */
};

static void usage(FILE *out)
{
	fprintf(out, "usage: bloomd [-c FILE] [-r PCAP]... [-i IFACE] [-n]\n"
		     "  -c FILE   configuration (default " DEFAULT_CONFIG ")\n"
		     "  -r PCAP   replay a pcap/pcapng file (repeatable), print statistics, exit\n"
		     "  -i IFACE  capture live on IFACE until SIGTERM or SIGINT\n"
		     "  -n        check the configuration and entry lists, then exit\n");
}

static void report_problem(void *ctx, const char *message)
{
	unsigned *problems = ctx;

	fprintf(stderr, "bloomd: %s\n", message);
	(*problems)++;
}

struct list_load {
	struct matcher *m;
	unsigned problems;
	uint64_t added, duplicates;
};

static int add_listed(void *ctx, const struct entry *e, char *err, size_t errlen)
{
	struct list_load *ll = ctx;
	int rc = matcher_add(ll->m, e, err, errlen);

	if (rc == 0)
		ll->added++;
	else if (rc == 1)
		ll->duplicates++;
	return rc < 0 ? -1 : 0;
}

static void list_problem(void *ctx, const char *message)
{
	struct list_load *ll = ctx;

	fprintf(stderr, "bloomd: %s\n", message);
	ll->problems++;
}

/* Load every entry list; report all problems. Returns how many there were. */
static unsigned load_entries(struct daemon *d, uint64_t *added, uint64_t *duplicates)
{
	struct list_load ll = { .m = d->matcher };

	for (size_t i = 0; i < d->cfg->nentry_files; i++)
		entry_list_load(d->cfg->entry_files[i], add_listed, list_problem, &ll);
	*added = ll.added;
	*duplicates = ll.duplicates;
	return ll.problems;
}

static void on_packet(void *ctx, struct capture *cap, const struct capture_packet *p)
{
	struct daemon *d = ctx;

	engine_packet(&d->engine, p, capture_name(cap), capture_is_live(cap));
}

static void on_batch(void *ctx, struct capture *cap)
{
	struct daemon *d = ctx;

	(void)cap;
	events_flush(d->events);
}

static void start_next_file(struct daemon *d);

static void next_file_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	capture_free(d->source); /* not from inside its own callback */
	d->source = NULL;
	start_next_file(d);
}

static void record_source(struct daemon *d, const char *name, uint64_t packets, const char *error)
{
	json_array_append_new(d->sources, json_pack("{s:s,s:I,s:s?}", "name", name, "packets",
						    (json_int_t)packets, "error", error));
}

static void on_done(void *ctx, struct capture *cap, const char *error)
{
	struct daemon *d = ctx;

	record_source(d, capture_name(cap), capture_packets(cap), error);
	if (error) {
		log_error("%s: %s", capture_name(cap), error);
		d->exit_code = 1;
	}
	if (capture_is_live(cap)) {
		event_base_loopbreak(d->base);
		return;
	}
	event_base_once(d->base, -1, EV_TIMEOUT, next_file_cb, d, NULL);
}

static const struct capture_callbacks *callbacks(struct daemon *d)
{
	static struct capture_callbacks cb = { on_packet, on_batch, on_done, NULL };

	cb.ctx = d;
	return &cb;
}

static void warn_unsupported_link(const struct capture *cap)
{
	if (!packet_link_supported(capture_link(cap)))
		log_warning("%s: link type %s (%d) is not supported: its packets are counted, not checked",
			    capture_name(cap), capture_link_name(cap), capture_link(cap));
}

/* Replay the files in order; a file that cannot be opened is an error, the rest still run. */
static void start_next_file(struct daemon *d)
{
	char err[512];

	while (d->next_file < d->nfiles) {
		const char *path = d->files[d->next_file++];
		d->source = capture_open_file(d->base, path, d->cfg->bpf, callbacks(d), err, sizeof(err));
		if (d->source) {
			warn_unsupported_link(d->source);
			return;
		}
		log_error("%s: %s", path, err);
		record_source(d, path, 0, err);
		d->exit_code = 1;
	}
	event_base_loopexit(d->base, NULL);
}

static void on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	log_info("%s: stopping", strsignal((int)sig));
	event_base_loopbreak(d->base);
}

static int start_live(struct daemon *d, const char *interface)
{
	struct capture_live_options o = {
		.interface = interface, .snaplen = d->cfg->snaplen, .promisc = d->cfg->promisc,
		.buffer_size = d->cfg->buffer_size, .bpf = d->cfg->bpf,
	};
	char err[512];

	d->source = capture_open_live(d->base, &o, callbacks(d), err, sizeof(err));
	if (d->source == NULL) {
		log_error("%s", err);
		return -1;
	}
	warn_unsupported_link(d->source);
	log_info("capturing on %s (%s)", interface, capture_link_name(d->source));
	return 0;
}

static void print_stats(struct daemon *d)
{
	d->engine.stats.pcap_skipped = events_pcap_skipped(d->events);
	json_t *o = stats_json(&d->engine.stats, d->matcher);
	uint64_t received, dropped, if_dropped;

	if (d->source && capture_stats(d->source, &received, &dropped, &if_dropped) == 0)
		json_object_set_new(o, "capture", json_pack("{s:I,s:I,s:I}", "received", (json_int_t)received,
							    "dropped", (json_int_t)dropped, "if_dropped", (json_int_t)if_dropped));
	json_object_set(o, "sources", d->sources);
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(o);
}

struct options {
	const char *config;
	char **files;
	size_t nfiles;
	const char *interface;
	bool check_only;
};

static int parse_options(int argc, char **argv, struct options *o)
{
	int c;

	o->config = DEFAULT_CONFIG;
	o->files = calloc((size_t)argc, sizeof(*o->files));
	if (o->files == NULL)
		return -1;
	while ((c = getopt(argc, argv, "c:r:i:nh")) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'r': o->files[o->nfiles++] = optarg; break;
		case 'i': o->interface = optarg; break;
		case 'n': o->check_only = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bloomd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->nfiles && o->interface) {
		fprintf(stderr, "bloomd: give -r or -i, not both\n");
		return -1;
	}
	return 0;
}

static struct matcher *make_matcher(const struct config *cfg)
{
	struct match_config mc = {
		.layout = cfg->layout, .choices = cfg->choices, .hashes = cfg->hashes,
		.rounds = cfg->rounds, .memory = cfg->memory, .bits_per_entry = cfg->bits_per_entry,
		.window = cfg->window, .algo = cfg->hash,
	};
	char err[256];
	struct matcher *m = matcher_new(&mc, err, sizeof(err));

	if (m == NULL)
		log_error("%s", err);
	return m;
}

/* Configuration, entries and outputs; returns 0, 1 (problems reported) or -1 (check only, fine). */
static int setup(struct daemon *d, const struct options *o)
{
	unsigned problems = 0;
	uint64_t added, duplicates;
	char err[512];

	d->cfg = config_load(o->config, report_problem, &problems);
	if (d->cfg == NULL || (d->matcher = make_matcher(d->cfg)) == NULL)
		return 1;
	if (load_entries(d, &added, &duplicates) > 0)
		return 1;
	if (o->check_only) {
		printf("bloomd: %s: configuration ok, %llu entries (%llu listed more than once)\n",
		       o->config, (unsigned long long)added, (unsigned long long)duplicates);
		return -1;
	}
	if (matcher_build(d->matcher, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return 1;
	}
	d->events = events_open(d->cfg->events, d->cfg->pcap, d->cfg->snaplen, err, sizeof(err));
	if (d->events == NULL) {
		log_error("%s", err);
		return 1;
	}
	d->engine.matcher = d->matcher;
	d->engine.events = d->events;
	return 0;
}

static int run(struct daemon *d, const struct options *o)
{
	struct event *sigs[2];
	const char *interface = o->interface ? o->interface : o->nfiles ? NULL : d->cfg->interface;

	d->base = event_base_new();
	d->sources = json_array();
	if (d->base == NULL || d->sources == NULL) {
		log_error("cannot start the event loop");
		return 1;
	}
	sigs[0] = evsignal_new(d->base, SIGINT, on_stop_signal, d);
	sigs[1] = evsignal_new(d->base, SIGTERM, on_stop_signal, d);
	for (int i = 0; i < 2; i++)
		event_add(sigs[i], NULL);
	if (o->nfiles || (!interface && d->cfg->nfiles)) {
		d->files = o->nfiles ? o->files : d->cfg->files;
		d->nfiles = o->nfiles ? o->nfiles : d->cfg->nfiles;
		d->one_shot = true;
		start_next_file(d);
	} else if (interface) {
		if (start_live(d, interface) < 0)
			d->exit_code = 1;
	} else {
		log_error("nothing to capture: give -r PCAP or -i IFACE, or [capture] file or interface");
		d->exit_code = 2;
	}
	if (d->exit_code == 0 || d->one_shot)
		event_base_dispatch(d->base);
	if (d->one_shot)
		print_stats(d);
	else if (d->source)
		log_info("stopped: %llu packets, %llu matched", (unsigned long long)d->engine.stats.packets,
			 (unsigned long long)d->engine.stats.matched_packets);
	for (int i = 0; i < 2; i++)
		event_free(sigs[i]);
	return d->exit_code;
}

int main(int argc, char **argv)
{
	struct daemon d = { 0 };
	struct options o = { 0 };
	int rc;

	signal(SIGPIPE, SIG_IGN);
	if (parse_options(argc, argv, &o) < 0) {
		free(o.files);
		return 2;
	}
	rc = setup(&d, &o);
	if (rc == 0)
		rc = run(&d, &o);
	else if (rc < 0)
		rc = 0;
	capture_free(d.source);
	events_close(d.events);
	matcher_free(d.matcher);
	config_free(d.cfg);
	json_decref(d.sources);
	if (d.base)
		event_base_free(d.base);
	free(o.files);
	return rc;
}
