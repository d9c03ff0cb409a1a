/* Fuzz harness: any bytes on the control socket of a running service (framing and commands). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "control.h"
#include "service.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct service *s;
static struct event_base *base;
static char dir[64], sock[96];
static int client = -1;

static void ignore(void *ctx, const char *message)
{
	(void)ctx;
	(void)message;
}

/* A service with a few entries, no store, its socket in a temporary directory. */
static int setup(void)
{
	char conf[128], list[128];
	unsigned refused;
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/bloomd-fuzz-control-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(sock, sizeof(sock), "%s/ctl.sock", dir);
	snprintf(conf, sizeof(conf), "%s/bloomd.conf", dir);
	snprintf(list, sizeof(list), "%s/entries.list", dir);
	if ((f = fopen(list, "w")) == NULL)
		return -1;
	fputs("addr 10.0.0.1\npair 10.0.0.1 10.0.0.2\nnet 10.0.0.0/8\nsig \"GET /etc/passwd\"\n", f);
	fclose(f);
	if ((f = fopen(conf, "w")) == NULL)
		return -1;
	fprintf(f, "[entries]\nfile = %s\n[control]\nsocket = %s\n[store]\ndir =\n[output]\nevents =\n"
		   "[log]\nlevel = error\n", list, sock);
	fclose(f);
	struct config *cfg = config_load(conf, ignore, NULL);
	if (cfg == NULL || (base = event_base_new()) == NULL)
		return -1;
	log_setup(cfg->log_level, cfg->log_target, cfg->log_format);
	struct control_options co = {
		.path = sock, .max_clients = 4, .idle_timeout = 60, .line = commands_line,
		.burst = commands_burst, .gone = commands_gone, .ctx = NULL,
	};
	if ((s = service_new()) == NULL)
		return -1;
	if ((co.ctx = commands_new(s)) == NULL)
		return -1;
	if (service_load(s, cfg, false, false, &refused) < 0 || service_start(s, base, &co) < 0)
		return -1;
	return 0;
}

static int connect_client(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	if (client >= 0)
		close(client);
	strcpy(sun.sun_path, sock);
	client = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (client < 0 || connect(client, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		return -1;
	event_base_loop(base, EVLOOP_NONBLOCK); /* accept it */
	return 0;
}

/* Run the loop until the daemon has nothing more to say; a closed connection is reopened. */
static void pump(void)
{
	static char reply[1 << 16];

	for (int idle = 0; idle < 3;) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		ssize_t r = read(client, reply, sizeof(reply));
		if (r > 0) {
			idle = 0;
			continue;
		}
		if (r == 0 || (r < 0 && errno != EAGAIN)) {
			connect_client();
			return;
		}
		idle++;
		usleep(idle * 200);
	}
}

/* Commands that make bloomd open files by name would read whatever the fuzzer names (stdin). */
static int opens_files(const uint8_t *data, size_t size)
{
	static const char *const words[] = { "replay", "reload", "load" };

	for (size_t w = 0; w < 3; w++)
		for (size_t i = 0; i + strlen(words[w]) <= size; i++)
			if (memcmp(data + i, words[w], strlen(words[w])) == 0 &&
			    !(w == 2 && i + 6 <= size && memcmp(data + i, "load -", 6) == 0))
				return 1;
	return 0;
}

static void clean(void)
{
	char path[128];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, (const char *[]){ "entries.list", "bloomd.conf", "ctl.sock" }[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;

	if (!ready) {
		atexit(clean);
		if (setup() < 0 || connect_client() < 0)
			abort();
		ready = 1;
	}
	if (opens_files(data, size))
		return 0;
	if (size && write(client, data, size) < 0 && errno != EAGAIN)
		connect_client();
	if (write(client, "\n", 1) < 0 && errno != EAGAIN)
		connect_client();
	pump();
	return 0;
}
