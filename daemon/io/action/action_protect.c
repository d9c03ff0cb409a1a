/* action_protect.c - the addresses never blocked: the host's own (read from its interfaces), loopback, and the operator's nets. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "action_protect.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "entry.h"
#include "error.h"

struct action_protect {
	struct entry_cidr *nets;  /* the configured first, then the peers, then the host's own and loopback */
	size_t n, cap, configured; /* configured: the configured and the peers, kept across reads */
	bool infrastructure;
};

/* "192.0.2.0/24", "2001:db8::1": 0, or -1 if text is not an address or net. */
static int protect_net_parse(const char *text, struct entry_cidr *out)
{
	*out = (struct entry_cidr){ 0 }; /* whole: reads of the host's addresses are compared as bytes */
	int len = entry_parse_cidr(text, out->key, NULL, 0);
	if (len < 0)
		return -1;
	out->len = (uint8_t)len;
	return 0;
}

bool action_protect_holds(const struct action_protect *p, const uint8_t *addr, int family)
{
	for (size_t i = 0; i < p->n; i++)
		if (entry_cidr_holds(&p->nets[i], addr, family))
			return true;
	return false;
}

static int protect_add(struct action_protect *p, const struct entry_cidr *n)
{
	if (array_grow((void **)&p->nets, &p->cap, p->n + 1, sizeof(*p->nets)) < 0)
		return -1;
	p->nets[p->n++] = *n;
	return 0;
}

static void add_address(struct action_protect *p, int family, const void *addr)
{
	struct entry_cidr n = { .len = family == AF_INET ? 5 : 17, .key = { family == AF_INET ? 32 : 128 } };

	memcpy(n.key + 1, addr, family == AF_INET ? 4 : 16);
	protect_add(p, &n);
}

/* An interface's or a resolved name's address; other families are not addresses to block. */
static void add_sockaddr(struct action_protect *p, const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET)
		add_address(p, AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	else if (sa && sa->sa_family == AF_INET6)
		add_address(p, AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
}

/* resolv.conf's nameservers (a scope suffix, "%eth0", cut). */
static void read_resolvers(struct action_protect *p)
{
	FILE *f = fopen("/etc/resolv.conf", "re");
	char line[256], addr[64];
	unsigned char bytes[16];

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " nameserver %63[0-9A-Fa-f:.]", addr) != 1)
			continue;
		if (inet_pton(AF_INET, addr, bytes) == 1)
			add_address(p, AF_INET, bytes);
		else if (inet_pton(AF_INET6, addr, bytes) == 1)
			add_address(p, AF_INET6, bytes);
	}
	if (f)
		fclose(f);
}

/* The kernel's default routes' gateways: /proc/net/route (hex, host order) and /proc/net/ipv6_route. */
static void read_gateways(struct action_protect *p)
{
	char line[512];
	FILE *f = fopen("/proc/net/route", "re");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned dest, gateway, flags, mask;
		if (sscanf(line, "%*s %x %x %x %*d %*d %*d %x", &dest, &gateway, &flags, &mask) == 4 && dest == 0 &&
		    mask == 0 && (flags & 2 /* RTF_GATEWAY */))
			add_address(p, AF_INET, &gateway); /* the file's hex is the address's bytes in host order */
	}
	if (f)
		fclose(f);
	f = fopen("/proc/net/ipv6_route", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char dest[33], gateway[33];
		unsigned prefix;
		unsigned char bytes[16];
		if (sscanf(line, "%32s %x %*s %*s %32s", dest, &prefix, gateway) != 3 || prefix != 0 ||
		    strspn(gateway, "0") == 32)
			continue;
		for (int i = 0; i < 16; i++)
			sscanf(gateway + 2 * i, "%2hhx", &bytes[i]);
		add_address(p, AF_INET6, bytes);
	}
	if (f)
		fclose(f);
}

static void read_host(struct action_protect *p)
{
	struct ifaddrs *list, *i;
	struct entry_cidr n;

	p->n = p->configured;
	if (p->infrastructure) {
		read_resolvers(p);
		read_gateways(p);
	}
	if (protect_net_parse("127.0.0.0/8", &n) == 0)
		protect_add(p, &n);
	if (protect_net_parse("::1", &n) == 0)
		protect_add(p, &n);
	if (getifaddrs(&list) < 0)
		return; /* the last reading's are gone: only loopback and the configured nets until the next */
	for (i = list; i; i = i->ifa_next)
		add_sockaddr(p, i->ifa_addr);
	freeifaddrs(list);
}

bool action_protect_read_host(struct action_protect *p)
{
	struct entry_cidr *before = malloc(p->n * sizeof(*before) + 1);
	size_t nbefore = p->n;

	if (before)
		memcpy(before, p->nets, p->n * sizeof(*before));
	read_host(p);
	bool moved = before == NULL || nbefore != p->n || memcmp(before, p->nets, p->n * sizeof(*before)) != 0;
	free(before);
	return moved;
}

const struct entry_cidr *action_protect_nets(const struct action_protect *p, size_t *n)
{
	*n = p->n;
	return p->nets;
}

/* Each peer's addresses, as the resolver gives them now (a name not resolved adds none). */
static void add_peers(struct action_protect *p, const char *peers)
{
	for (const char *at = peers ? peers : ""; *at;) {
		size_t len = strcspn(at, ",");
		char host[256];
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *r;
		snprintf(host, sizeof(host), "%.*s", (int)(len < sizeof(host) ? len : sizeof(host) - 1), at);
		if (host[0] && getaddrinfo(host, NULL, &hints, &res) == 0) {
			for (r = res; r; r = r->ai_next)
				add_sockaddr(p, r->ai_addr);
			freeaddrinfo(res);
		}
		at += len + (at[len] == ',');
	}
}

struct action_protect *action_protect_new(const struct action_protect_options *o, char *err, size_t errlen)
{
	struct action_protect *p = calloc(1, sizeof(*p));
	struct entry_cidr n;

	if (p == NULL) {
		error_set(err, errlen, "[action] protect: out of memory");
		return NULL;
	}
	for (const char *at = o->list ? o->list : ""; *at;) {
		size_t len = strcspn(at, ",");
		char one[64];
		snprintf(one, sizeof(one), "%.*s", (int)(len < sizeof(one) ? len : sizeof(one) - 1), at);
		if (protect_net_parse(one, &n) < 0 || protect_add(p, &n) < 0) {
			error_set(err, errlen, "[action] protect: '%s' is not an address or net (or no memory)", one);
			action_protect_free(p);
			return NULL;
		}
		at += len + (at[len] == ',');
	}
	p->infrastructure = o->infrastructure;
	if (o->infrastructure)
		add_peers(p, o->peers);
	p->configured = p->n;
	read_host(p);
	return p;
}

void action_protect_free(struct action_protect *p)
{
	if (p == NULL)
		return;
	free(p->nets);
	free(p);
}
