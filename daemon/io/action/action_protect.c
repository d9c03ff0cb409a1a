/* action_protect.c - the addresses never blocked: the host's own (read from its interfaces), loopback, and the operator's nets. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "action_protect.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "entry.h"
#include "error.h"

struct action_protect {
	struct entry_cidr *nets;  /* the configured first, then the host's own and loopback */
	size_t n, cap, configured;
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

static void read_host(struct action_protect *p)
{
	struct ifaddrs *list, *i;
	struct entry_cidr n;

	p->n = p->configured;
	if (protect_net_parse("127.0.0.0/8", &n) == 0)
		protect_add(p, &n);
	if (protect_net_parse("::1", &n) == 0)
		protect_add(p, &n);
	if (getifaddrs(&list) < 0)
		return; /* the last reading's are gone: only loopback and the configured nets until the next */
	for (i = list; i; i = i->ifa_next) {
		int af = i->ifa_addr ? i->ifa_addr->sa_family : AF_UNSPEC;
		if (af == AF_INET) {
			n = (struct entry_cidr){ .len = 5, .key = { 32 } };
			memcpy(n.key + 1, &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr, 4);
		} else if (af == AF_INET6) {
			n = (struct entry_cidr){ .len = 17, .key = { 128 } };
			memcpy(n.key + 1, &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		protect_add(p, &n);
	}
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

struct action_protect *action_protect_new(const char *list, char *err, size_t errlen)
{
	struct action_protect *p = calloc(1, sizeof(*p));
	struct entry_cidr n;

	if (p == NULL) {
		error_set(err, errlen, "[action] protect: out of memory");
		return NULL;
	}
	for (const char *at = list ? list : ""; *at;) {
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
