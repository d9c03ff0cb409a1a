/* protect.c - the addresses never blocked: the host's own (read from its interfaces), loopback, and the operator's nets. */
#include "protect.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "error.h"

struct protect {
	struct protect_net *nets;  /* the configured first, then the host's own and loopback */
	size_t n, cap, configured;
};

int protect_net_parse(const char *text, struct protect_net *out)
{
	char addr[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(text, '/');
	size_t len = slash ? (size_t)(slash - text) : strlen(text);

	if (len >= sizeof(addr))
		return -1;
	snprintf(addr, sizeof(addr), "%.*s", (int)len, text);
	*out = (struct protect_net){ 0 };
	out->family = strchr(addr, ':') ? 6 : 4;
	if (inet_pton(out->family == 4 ? AF_INET : AF_INET6, addr, out->addr) != 1)
		return -1;
	unsigned max = out->family == 4 ? 32 : 128;
	char *end = NULL;
	unsigned long prefix = slash ? strtoul(slash + 1, &end, 10) : max;
	if ((slash && (end == slash + 1 || *end != '\0')) || prefix > max)
		return -1;
	out->prefix = (uint8_t)prefix;
	return 0;
}

static bool in_net(const struct protect_net *n, const uint8_t *addr, int family)
{
	unsigned whole = n->prefix / 8, rest = n->prefix % 8;

	return n->family == family && memcmp(n->addr, addr, whole) == 0 &&
	       (rest == 0 || ((n->addr[whole] ^ addr[whole]) & (0xff << (8 - rest))) == 0);
}

bool protect_holds(const struct protect *p, const uint8_t *addr, int family)
{
	for (size_t i = 0; i < p->n; i++)
		if (in_net(&p->nets[i], addr, family))
			return true;
	return false;
}

static int protect_add(struct protect *p, const struct protect_net *n)
{
	if (array_grow((void **)&p->nets, &p->cap, p->n + 1, sizeof(*p->nets)) < 0)
		return -1;
	p->nets[p->n++] = *n;
	return 0;
}

void protect_read_host(struct protect *p)
{
	struct ifaddrs *list, *i;
	struct protect_net n;

	p->n = p->configured;
	if (protect_net_parse("127.0.0.0/8", &n) == 0)
		protect_add(p, &n);
	if (protect_net_parse("::1", &n) == 0)
		protect_add(p, &n);
	if (getifaddrs(&list) < 0)
		return; /* the last reading's are gone: only loopback and the configured nets until the next */
	for (i = list; i; i = i->ifa_next) {
		int af = i->ifa_addr ? i->ifa_addr->sa_family : AF_UNSPEC;
		n = (struct protect_net){ .family = af == AF_INET ? 4 : 6, .prefix = af == AF_INET ? 32 : 128 };
		if (af == AF_INET)
			memcpy(n.addr, &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr, 4);
		else if (af == AF_INET6)
			memcpy(n.addr, &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr, 16);
		if (af == AF_INET || af == AF_INET6)
			protect_add(p, &n);
	}
	freeifaddrs(list);
}

struct protect *protect_new(const char *list, char *err, size_t errlen)
{
	struct protect *p = calloc(1, sizeof(*p));
	struct protect_net n;

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
			protect_free(p);
			return NULL;
		}
		at += len + (at[len] == ',');
	}
	p->configured = p->n;
	protect_read_host(p);
	return p;
}

void protect_free(struct protect *p)
{
	if (p == NULL)
		return;
	free(p->nets);
	free(p);
}
