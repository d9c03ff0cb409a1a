/* preflight.c - what a start needs from the system: made where it can be, checked by -n. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "preflight.h"

#include "fetch.h"

#include <errno.h>
#include <grp.h>
#include <net/if.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "action.h"
#include "action_xdp.h"
#include "capture.h"
#include "error.h"

#define PATH_BYTES 4096

/* The directory a path lies in ("." for a bare name). */
static void directory_of(const char *path, char out[PATH_BYTES])
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(out, PATH_BYTES, ".");
	else if (slash == path)
		snprintf(out, PATH_BYTES, "/");
	else
		snprintf(out, PATH_BYTES, "%.*s", (int)(slash - path), path);
}

int preflight_socket_dir(const char *socket_path, const char *user, char *err, size_t errlen)
{
	char dir[PATH_BYTES];
	struct passwd *pw = NULL;

	directory_of(socket_path, dir);
	if (mkdir(dir, 0755) < 0) {
		if (errno == EEXIST)
			return 0;
		error_set(err, errlen, "cannot make the socket's directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if (user && geteuid() == 0 && (pw = getpwnam(user)) != NULL &&
	    chown(dir, pw->pw_uid, pw->pw_gid) < 0) {
		error_set(err, errlen, "%s: cannot give it to %s: %s", dir, user, strerror(errno));
		return -1;
	}
	return 0;
}

struct checking {
	preflight_problem_cb on_problem;
	void *ctx;
	unsigned problems;
};

__attribute__((format(printf, 2, 3))) static void problem(struct checking *c, const char *fmt, ...)
{
	char message[PATH_BYTES + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	c->on_problem(c->ctx, message);
	c->problems++;
}

/*
 * A directory bloomd writes in (is_dir), or a file it appends to: there and
 * writable, or absent with a writable parent to be made in.
 */
static void check_writable(struct checking *c, const char *key, const char *path, bool is_dir)
{
	char parent[PATH_BYTES];
	struct stat st;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode) != is_dir)
			problem(c, "%s %s: %s", key, path, is_dir ? "not a directory" : "a directory");
		else if (!is_dir && S_ISFIFO(st.st_mode))
			problem(c, "%s %s: a FIFO (a slow reader, or none, would stop the packet path)", key, path);
		else if (access(path, is_dir ? W_OK | X_OK : W_OK) < 0)
			problem(c, "%s %s: cannot write %s: %s", key, path, is_dir ? "in it" : "it",
				strerror(errno));
		return;
	}
	int stat_errno = errno;
	directory_of(path, parent);
	if (stat_errno != ENOENT)
		problem(c, "%s %s: %s", key, path, strerror(stat_errno));
	else if (access(parent, W_OK | X_OK) < 0)
		problem(c, "%s %s does not exist and cannot be made in %s: %s", key, path, parent,
			strerror(errno));
}

/* Whether this process is in group gid (so it may give a file to it). */
static bool in_group(gid_t gid)
{
	gid_t groups[256];
	int n = getgroups(256, groups);

	if (getegid() == gid)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

static void check_socket(struct checking *c, const struct config *cfg)
{
	char dir[PATH_BYTES];

	if (strlen(cfg->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		problem(c, "[control] socket %s: too long for a socket path (at most %zu bytes)",
			cfg->socket, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	directory_of(cfg->socket, dir);
	check_writable(c, "[control] socket's directory", dir, true);
	struct group *g = cfg->group ? getgrnam(cfg->group) : NULL;
	if (cfg->group && g == NULL)
		problem(c, "[control] group '%s' does not exist", cfg->group);
	else if (g && geteuid() != 0 && !in_group(g->gr_gid))
		problem(c, "[control] group '%s': bloomd's user is not in it, so the socket cannot be given to it (under systemd: SupplementaryGroups=%s)",
			cfg->group, cfg->group);
}

/* A list with a url needs bloomd-fetch beside bloomd, and its ca_file readable. */
static void check_fetches(struct checking *c, const struct config *cfg)
{
	char path[4096], err[512];
	bool checked = false;

	for (size_t i = 0; i < cfg->nlists; i++) {
		const struct list_config *l = &cfg->lists[i];
		if (l->url && !checked && fetch_program(path, sizeof(path), err, sizeof(err)) < 0)
			problem(c, "[list %s] url: %s", l->name, err);
		checked |= l->url != NULL;
		if (l->ca_file && access(l->ca_file, R_OK) < 0)
			problem(c, "[list %s] ca_file %s: %s", l->name, l->ca_file, strerror(errno));
	}
}

/* The XDP program loaded (not attached) and let go: the kernel's BPF and the capabilities to use it. */
static void check_xdp(struct checking *c, const struct config *cfg, const char *interface)
{
	struct action_xdp_options o = { .interface = interface, .choices = cfg->choices, .bits_per_entry = cfg->bits_per_entry,
				 .capacity = 64 };
	char err[512];
	struct action_xdp *x = if_nametoindex(interface) ? action_xdp_open(NULL, &o, NULL, NULL, err, sizeof(err)) : NULL;

	if (x == NULL && if_nametoindex(interface))
		problem(c, "[capture] mode = xdp: %s", err);
	action_xdp_close(x);
}

unsigned preflight_check(const struct config *cfg, const struct preflight_plan *plan,
			 preflight_problem_cb on_problem, void *ctx)
{
	struct checking c = { .on_problem = on_problem, .ctx = ctx };
	char err[512];

	struct stat st;
	if (plan->store && cfg->store_dir) {
		check_writable(&c, "[store] dir", cfg->store_dir, true);
		if (stat(cfg->store_dir, &st) == 0 && (st.st_mode & S_IWOTH))
			problem(&c, "[store] dir %s is writable by every user: refused (chmod o-w %s)",
				cfg->store_dir, cfg->store_dir);
	}
	if (plan->socket && cfg->socket)
		check_socket(&c, cfg);
	if (cfg->user && getpwnam(cfg->user) == NULL)
		problem(&c, "[service] user '%s' does not exist", cfg->user);
	if (cfg->events && strcmp(cfg->events, "-") != 0)
		check_writable(&c, "[output] events", cfg->events, false);
	if (cfg->pcap)
		check_writable(&c, "[output] pcap", cfg->pcap, false);
	for (size_t i = 0; i < plan->nfiles; i++)
		if (access(plan->files[i], R_OK) < 0)
			problem(&c, "cannot read %s: %s", plan->files[i], strerror(errno));
	check_fetches(&c, cfg);
	if (plan->interface && if_nametoindex(plan->interface) == 0)
		problem(&c, "interface %s: %s", plan->interface, strerror(errno));
	if (capture_check_bpf(cfg->bpf, cfg->snaplen, err, sizeof(err)) < 0)
		problem(&c, "[capture] bpf: %s", err);
	if (plan->xdp)
		check_xdp(&c, cfg, plan->interface);
	if (plan->nfiles == 0 && !cfg->action.manage && (cfg->action.set4 || cfg->action.set6)) { /* the sets must be there (replays block nothing) */
		struct action_options o = { .set4 = cfg->action.set4, .set6 = cfg->action.set6,
						.timeout = cfg->action.timeout, .rate = cfg->action.rate };
		struct action *a = action_open(&o, err, sizeof(err));
		if (a == NULL)
			problem(&c, "%s (the set must exist, with flags timeout; bloomd needs CAP_NET_ADMIN)", err);
		action_close(a);
	}
	return c.problems;
}
