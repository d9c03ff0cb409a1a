/* main.c - bloomd: options, signals, and the wiring from capture to events. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "commands.h"
#include "config.h"
#include "log.h"
#include "notify.h"
#include "preflight.h"
#include "privilege.h"
#include "service.h"
#include "version.h"

#define DEFAULT_CONFIG "/etc/bloomd/bloomd.conf"

static void usage(FILE *out)
{
	fprintf(out, "usage: bloomd [-c FILE] [-r PCAP]... [-i IFACE] [-n [--strict]]\n"
		     "  -c FILE   configuration (default " DEFAULT_CONFIG ")\n"
		     "  -r PCAP   replay a pcap/pcapng file (repeatable), print statistics, exit\n"
		     "  -i IFACE  capture live on IFACE until SIGTERM or SIGINT\n"
		     "  -n        check the configuration and entry lists, then exit\n"
		     "  --strict  with -n: a list that would be refused (or cannot be read) fails the check\n"
		     "  --version bloomd's version\n"
		     "With neither -r nor -i (nor a source in the configuration), bloomd waits\n"
		     "for commands on its control socket (bloomctl replay ...).\n");
}

static void report_problem(void *ctx, const char *message)
{
	unsigned *problems = ctx;

	fprintf(stderr, "bloomd: %s\n", message);
	(*problems)++;
}

static void print_stats(struct service *s)
{
	json_t *o = service_stats(s);

	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(o);
}

static void on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
	struct service *s = arg;

	(void)what;
	notify_stopping();
	log_info("%s: stopping", strsignal((int)sig));
	event_base_loopbreak(service_base(s));
}

/* A reload by SIGHUP done: what was wrong logged, the outputs reopened (log rotation) either way. */
static void signal_reloaded(struct service *s, int rc, json_t *result, void *ctx)
{
	char err[512];

	(void)ctx;
	if (rc < 0) {
		size_t i;
		json_t *problem;
		json_array_foreach(result, i, problem)
			log_error("reload: %s", json_string_value(problem));
		log_error("reload refused: the running configuration is kept");
	}
	json_decref(result);
	if (service_reopen(s, err, sizeof(err)) < 0)
		log_error("reopen: %s (the old outputs are kept)", err);
	notify_ready("reloaded");
}

/* SIGHUP: reload the configuration; systemd hears it is done once every list is taken or refused. */
static void on_reload_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	notify_reloading();
	service_reload(arg, signal_reloaded, NULL);
}

static void on_reopen_signal(evutil_socket_t sig, short what, void *arg)
{
	char err[512];

	(void)sig;
	(void)what;
	if (service_reopen(arg, err, sizeof(err)) < 0)
		log_error("reopen: %s (the old outputs are kept)", err);
	else
		log_info("outputs reopened");
}

struct options {
	const char *config;
	char **files;
	size_t nfiles;
	const char *interface;
	bool check_only;
	bool strict;               /* -n: a list refused fails the check */
};

static int parse_options(int argc, char **argv, struct options *o)
{
	int c;

	o->config = DEFAULT_CONFIG;
	o->files = calloc((size_t)argc, sizeof(*o->files));
	if (o->files == NULL)
		return -1;
	static const struct option long_options[] = {
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "strict", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};

	while ((c = getopt_long(argc, argv, "c:r:i:nh", long_options, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'r': o->files[o->nfiles++] = optarg; break;
		case 'i': o->interface = optarg; break;
		case 'n': o->check_only = true; break;
		case 'S': o->strict = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("bloomd %s\n", BLOOMD_VERSION); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bloomd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->strict && !o->check_only) {
		fprintf(stderr, "bloomd: --strict goes with -n\n");
		return -1;
	}
	if (o->nfiles && o->interface) {
		fprintf(stderr, "bloomd: give -r or -i, not both\n");
		return -1;
	}
	return 0;
}

/* What this run does: replay files, capture live, or wait for commands. */
struct plan {
	bool one_shot;
	bool inline_mode;          /* judge packets from netfilter queues */
	bool xdp_mode;             /* drop at interface's driver, capture behind it */
	const char *interface;
	char **files;
	size_t nfiles;
};

static struct plan plan_of(const struct options *o, const struct config *cfg)
{
	struct plan p = { 0 };

	if (o->nfiles) {
		p.files = o->files;
		p.nfiles = o->nfiles;
	} else if (!o->interface && cfg->files.n) {
		p.files = cfg->files.path;
		p.nfiles = cfg->files.n;
	}
	p.one_shot = p.nfiles > 0;
	if (!p.one_shot)
		p.interface = o->interface ? o->interface : cfg->interface;
	p.inline_mode = !p.one_shot && !o->interface && cfg->inline_mode;
	p.xdp_mode = !p.one_shot && p.interface && cfg->xdp_mode;
	return p;
}

/* Hand the state and the socket to [service] user, switch, drop every capability. */
static int drop_to_service_user(struct service *s, const struct config *cfg)
{
	char err[512];
	/* The socket keeps [control] group, which control_open gave it. */
	struct privilege_file own[] = { { cfg->socket, cfg->group != NULL } };
	struct passwd *pw = cfg->user && geteuid() == 0 ? getpwnam(cfg->user) : NULL;
	bool net_admin = cfg->inline_mode || cfg->action.set4 || cfg->action.set6;
	unsigned keep = (net_admin ? PRIVILEGE_NET_ADMIN : 0) | (cfg->xdp_mode ? PRIVILEGE_NET_ADMIN | PRIVILEGE_BPF : 0);

	/* Everything the state holds, lists/ and the cluster's files included (a missing user is privilege_drop's to say). */
	if (pw && service_give_state(s, pw->pw_uid, pw->pw_gid, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	if (privilege_drop(cfg->user, own, 1, keep, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	if (cfg->user)
		log_info("running as %s, with %s", cfg->user,
			 keep & PRIVILEGE_BPF ? "CAP_NET_ADMIN, CAP_BPF and CAP_PERFMON alone (a larger XDP program swapped in)"
			 : net_admin ? "CAP_NET_ADMIN alone (verdicts, nftables sets)" : "no capabilities");
	return 0;
}

static void say_ready(const struct service *s, const struct plan *p)
{
	char status[256];

	if (p->xdp_mode)
		snprintf(status, sizeof(status), "dropping at the driver of %s (XDP), capturing behind it", p->interface);
	else if (p->interface)
		snprintf(status, sizeof(status), "capturing on %s", p->interface);
	else if (p->inline_mode)
		snprintf(status, sizeof(status), "judging packets from netfilter queues %u-%u",
			 service_config(s)->queue.first, service_config(s)->queue.last);
	else if (p->one_shot)
		snprintf(status, sizeof(status), "replaying %zu files", p->nfiles);
	else
		snprintf(status, sizeof(status), "waiting for commands on %s", service_config(s)->socket);
	notify_ready(status);
}

/*
 * The signals the loop handles. They are blocked from the first line of main
 * until the loop's handlers are in place, and again once they are gone: a
 * SIGUSR1 or SIGHUP while a large list loads, or a SIGTERM during the final
 * snapshot, would otherwise end the process with its default action.
 */
static const int LOOP_SIGNALS[4] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };

static void loop_signals(int how)
{
	sigset_t set;

	sigemptyset(&set);
	for (int i = 0; i < 4; i++)
		sigaddset(&set, LOOP_SIGNALS[i]);
	sigprocmask(how, &set, NULL);
}

static int run(struct service *s, const struct plan *p)
{
	struct event *watchdog;
	struct event *sigs[4];
	event_callback_fn handlers[4] = { on_stop_signal, on_stop_signal, on_reload_signal, on_reopen_signal };
	char err[256];

	struct event_base *base = service_base(s);

	for (int i = 0; i < 4; i++) {
		sigs[i] = evsignal_new(base, LOOP_SIGNALS[i], handlers[i], s);
		if (sigs[i] == NULL || event_add(sigs[i], NULL) < 0) {
			log_error("cannot watch signal %s: out of memory", strsignal(LOOP_SIGNALS[i]));
			for (int j = 0; j <= i; j++)
				if (sigs[j])
					event_free(sigs[j]);
			return 1;
		}
	}
	loop_signals(SIG_UNBLOCK); /* one that came while loading is handled now */
	service_set_one_shot(s, p->one_shot);
	for (size_t i = 0; i < p->nfiles; i++)
		if (service_replay(s, p->files[i], 0, err, sizeof(err)) < 0) {
			log_error("%s", err);
			service_fail(s);
		}
	if (p->xdp_mode && service_capture_xdp(s, p->interface) < 0)
		service_fail(s);
	else if (!p->xdp_mode && p->interface && service_capture_live(s, p->interface) < 0)
		service_fail(s);
	else if (p->inline_mode && service_capture_inline(s) < 0)
		service_fail(s);
	else if (!p->one_shot && !p->interface && !p->inline_mode)
		log_info("waiting for commands on %s", service_config(s)->socket);
	bool running = drop_to_service_user(s, service_config(s)) == 0 && service_run_threads(s) == 0;
	if (running)
		say_ready(s, p);
	else
		service_fail(s);
	watchdog = notify_watchdog_start(base);
	if (running && (service_exit_code(s) == 0 || p->one_shot)) /* one bad file: the others still run */
		event_base_dispatch(base);
	if (watchdog)
		event_free(watchdog);
	if (p->one_shot) {
		print_stats(s);
	} else if (service_is_live(s)) {
		uint64_t packets, matched;
		service_counts(s, &packets, &matched);
		log_info("stopped: %llu packets, %llu matched", (unsigned long long)packets,
			 (unsigned long long)matched);
	}
	loop_signals(SIG_BLOCK);
	for (int i = 0; i < 4; i++)
		event_free(sigs[i]);
	return service_exit_code(s);
}

/*
 * The event loop. A replay's batches follow one another as events made
 * active again from their own callback, which libevent runs before it
 * polls again: without a bound, control, timers (the watchdog's too) and
 * the cluster's sockets would wait for the whole file. So it polls at least
 * every LOOP_POLL_MS of callbacks.
 */
#define LOOP_POLL_MS 5

static struct event_base *loop_new(void)
{
	const struct timeval most = { 0, LOOP_POLL_MS * 1000 };
	struct event_config *cfg = event_config_new();
	struct event_base *base = NULL;

	if (cfg == NULL)
		return NULL;
	if (event_config_set_max_dispatch_interval(cfg, &most, -1, 0) == 0)
		base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}

int main(int argc, char **argv)
{
	struct service *s;
	struct commands *cmds = NULL;
	struct options o = { 0 };
	struct config *cfg;
	struct event_base *base = NULL;
	unsigned problems = 0;
	unsigned refused = 0;
	int rc = 1;

	check_mark_loop_thread(); /* this thread runs the loop; the workers and the rebuild's are made later */

	loop_signals(SIG_BLOCK);
	signal(SIGPIPE, SIG_IGN);
	s = service_new();
	if (s == NULL || parse_options(argc, argv, &o) < 0) {
		service_free(s);
		free(o.files);
		return s ? 2 : 1;
	}
	if ((cfg = config_load(o.config, report_problem, &problems)) == NULL)
		goto out;
	log_setup(cfg->log_level, cfg->log_target, cfg->log_format);
	struct plan p = plan_of(&o, cfg);
	bool use_socket = cfg->socket && (!p.one_shot || cfg->socket_set);
	bool use_store = cfg->store_dir && (!p.one_shot || cfg->store_set);
	/* Before anything is loaded: a second bloomd must not remake the first's nft table. */
	if (use_socket && !o.check_only && control_still_answered(cfg->socket)) {
		log_error("%s: another bloomd is answering on this socket", cfg->socket);
		goto out;
	}
	if (service_load(s, cfg, use_store, o.check_only, &refused) < 0)
		goto out;
	if (o.check_only) {
		struct preflight_plan pp = { .interface = p.interface, .files = p.files, .nfiles = p.nfiles,
					     .socket = use_socket, .store = use_store, .xdp = p.xdp_mode };
		if (preflight_check(cfg, &pp, report_problem, &problems) > 0)
			goto out;
		if (refused && o.strict) {
			printf("bloomd: %s: %u of %zu lists refused (see above): --strict fails the check\n", o.config,
			       refused, cfg->nlists);
			goto out;
		}
		printf("bloomd: %s: configuration ok, %llu entries in %zu lists", o.config,
		       (unsigned long long)service_entries(s), cfg->nlists);
		if (refused)
			printf(" (%u refused: see above; bloomd starts without them)", refused);
		printf("\n");
		/* The default state directory may already hold another run's entries: say which one a start reads. */
		if (use_store)
			printf("bloomd: state kept in %s%s\n", cfg->store_dir,
			       cfg->store_set ? "" : " (the default: [store] dir is not set)");
		else
			printf("bloomd: no state kept (files replayed without [store] dir)\n");
		rc = 0;
		goto out;
	}
	if (!p.one_shot && geteuid() == 0 && cfg->user == NULL)
		log_warning("running as root: set [service] user, so that bloomd is not root once capture is open");
	if (!p.one_shot && service_entries(s) == 0)
		log_warning("no entries: nothing will match until some are added (bloomctl add, or [entries] file)");
	if (!p.one_shot && !p.interface && !p.inline_mode && !use_socket) {
		log_error("nothing to do: give -r PCAP or -i IFACE, [capture] file or interface, or a [control] socket");
		rc = 2;
		goto out;
	}
	struct control_options co = {
		.path = cfg->socket, .group = cfg->group, .max_clients = cfg->max_clients,
		.idle_timeout = cfg->idle_timeout, .line = commands_line, .burst = commands_burst,
		.gone = commands_gone, .ctx = cmds = commands_new(s),
	};
	char err[512];
	if (use_socket && cmds == NULL) {
		log_error("out of memory");
		goto out;
	}
	if (use_socket && preflight_socket_dir(cfg->socket, cfg->user, err, sizeof(err)) < 0) {
		log_error("%s", err);
		goto out;
	}
	if ((base = loop_new()) == NULL) {
		log_error("cannot start the event loop");
		goto out;
	}
	if (service_start(s, base, use_socket ? &co : NULL) == 0)
		rc = run(s, &p);
out:
	service_free(s); /* the configuration with it, once service_load took it */
	commands_free(cmds);
	if (base)
		event_base_free(base);
	free(o.files);
	return rc;
}
