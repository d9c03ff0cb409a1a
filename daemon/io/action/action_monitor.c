/* action_monitor.c - what others change in an nftables table, as the kernel announces it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "action_monitor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/filter.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arena.h"
#include "check.h"
#include "error.h"

#define RECEIVE_BUFFER (8 << 20)   /* bytes: a flush of some ten thousand elements announced without loss */
#define TRANSACTION_MAX 65536      /* changes kept of one transaction; a larger one is as good as lost (look at everything) */
#define READS_A_CALL 32            /* datagrams read by one action_monitor_read: the rest wait for the next */

struct action_monitor {
	struct mnl_socket *nl;
	char *table;
	bool paused;
	struct action_monitor_change *pending;  /* the transaction being read, until its new generation */
	size_t npending, cap;
	bool too_large;            /* the transaction being read has more than TRANSACTION_MAX changes */
	bool overflowed;
	uint64_t neighbours;       /* other processes' transactions that did not touch the table */
	_Alignas(8) char buf[1 << 17]; /* past the largest datagram the kernel sends a listener; netlink headers aligned */
};

static int membership(struct action_monitor *w, int option)
{
	int group = NFNLGRP_NFTABLES;

	return mnl_socket_setsockopt(w->nl, option, &group, sizeof(group));
}

struct action_monitor *action_monitor_open(const char *table, char *err, size_t errlen)
{
	struct action_monitor *w = calloc(1, sizeof(*w));
	int size = RECEIVE_BUFFER;

	if (w == NULL || (w->table = strdup(table)) == NULL) {
		error_set(err, errlen, "nftables watch: out of memory");
		action_monitor_close(w);
		return NULL;
	}
	if ((w->nl = mnl_socket_open(NETLINK_NETFILTER)) == NULL || mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    membership(w, NETLINK_ADD_MEMBERSHIP) < 0 ||
	    fcntl(mnl_socket_get_fd(w->nl), F_SETFL, O_NONBLOCK) < 0) {
		error_set(err, errlen, "nftables watch: netlink: %s", strerror(errno));
		action_monitor_close(w);
		return NULL;
	}
	/* Past net.core.rmem_max where CAP_NET_ADMIN allows; the default otherwise. */
	if (setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return w;
}

void action_monitor_close(struct action_monitor *w)
{
	if (w == NULL)
		return;
	if (w->nl)
		mnl_socket_close(w->nl);
	free(w->pending);
	free(w->table);
	free(w);
}

int action_monitor_fd(const struct action_monitor *w)
{
	return mnl_socket_get_fd(w->nl);
}

void action_monitor_pause(struct action_monitor *w)
{
	if (!w->paused && membership(w, NETLINK_DROP_MEMBERSHIP) == 0)
		w->paused = true;
}

void action_monitor_resume(struct action_monitor *w)
{
	if (w->paused && membership(w, NETLINK_ADD_MEMBERSHIP) == 0)
		w->paused = false;
}

int action_monitor_ignore(struct action_monitor *w, const uint32_t *portids, size_t n)
{
	enum { MAX_PORTS = 8 };
	struct sock_filter code[4 + 2 * MAX_PORTS];
	unsigned len = 0;
	uint16_t newgen = (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWGEN);

	if (n > MAX_PORTS) {
		errno = EINVAL;
		return -1;
	}
	/* A netlink header's fields are in host order, and BPF loads read network order: hence htons and htonl. */
	/* A new generation always passes: it closes a transaction, whoever made it. */
	code[len++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_H | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_type));
	code[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(newgen), (uint8_t)(2 * n + 1), 0);
	code[len++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_pid));
	for (size_t i = 0; i < n; i++) {
		code[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(portids[i]), 0, 1);
		code[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0); /* one of ours: dropped */
	}
	code[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffff);
	struct sock_fprog prog = { .len = (unsigned short)len, .filter = code };
	return setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

uint64_t action_monitor_neighbours(const struct action_monitor *w)
{
	return w->neighbours;
}

/* ---- one announcement ---- */

struct reading {
	struct action_monitor *w;
	action_monitor_cb cb;
	void *ctx;
};

static struct action_monitor_change *more(struct action_monitor *w)
{
	if (w->too_large || w->npending == TRANSACTION_MAX) {
		w->too_large = true;
		return NULL;
	}
	if (array_grow((void **)&w->pending, &w->cap, w->npending + 1, sizeof(*w->pending)) < 0) {
		w->overflowed = true; /* without memory to keep it, the change is as good as lost */
		return NULL;
	}
	struct action_monitor_change *c = &w->pending[w->npending++];
	memset(c, 0, sizeof(*c));
	return c;
}

/* An element's key and flags, out of an NFTA_LIST_ELEM. */
static void read_element(const struct nlattr *elem, struct action_monitor_change *c)
{
	struct nlattr *a, *b; /* not const: libmnl's loops cast them */

	mnl_attr_for_each_nested(a, elem) {
		if (mnl_attr_get_type(a) == NFTA_SET_ELEM_FLAGS && mnl_attr_get_payload_len(a) == 4)
			c->interval_end = ntohl(mnl_attr_get_u32(a)) & NFT_SET_ELEM_INTERVAL_END;
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_KEY)
			continue;
		mnl_attr_for_each_nested(b, a) {
			size_t len = mnl_attr_get_payload_len(b);
			if (mnl_attr_get_type(b) == NFTA_DATA_VALUE && len <= sizeof(c->key)) {
				memcpy(c->key, mnl_attr_get_payload(b), len);
				c->len = len;
			}
		}
	}
}

static void read_elements(struct action_monitor *w, const struct nlmsghdr *nlh, bool added)
{
	struct nlattr *a, *elem; /* not const: libmnl's loops cast them */
	char set[64] = "";

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == NFTA_SET_ELEM_LIST_SET)
			snprintf(set, sizeof(set), "%.*s", (int)mnl_attr_get_payload_len(a), mnl_attr_get_str(a));
	}
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_LIST_ELEMENTS)
			continue;
		mnl_attr_for_each_nested(elem, a) {
			struct action_monitor_change *c = more(w);
			if (c == NULL)
				return;
			c->element = true;
			c->added = added;
			memcpy(c->set, set, sizeof(set));
			read_element(elem, c);
		}
	}
}

/* The pid a new generation names (the process that committed it), or 0. */
static uint32_t generation_pid(const struct nlmsghdr *nlh)
{
	struct nlattr *a; /* not const: libmnl's loops cast them */

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
		if (mnl_attr_get_type(a) == NFTA_GEN_PROC_PID && mnl_attr_get_payload_len(a) == 4)
			return ntohl(mnl_attr_get_u32(a));
	return 0;
}

/* Whether the message is about the inet table watched (attribute 1 names the table in every kind of message). */
static bool ours(const struct action_monitor *w, const struct nlmsghdr *nlh)
{
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
	struct nlattr *a; /* not const: libmnl's loops cast them */

	if (g->nfgen_family != NFPROTO_INET)
		return false;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
		if (mnl_attr_get_type(a) == 1)
			return mnl_attr_get_payload_len(a) >= 1 &&
			       strncmp(mnl_attr_get_payload(a), w->table, mnl_attr_get_payload_len(a)) == 0 &&
			       strlen(w->table) + 1 == mnl_attr_get_payload_len(a);
	return false;
}

static int on_message(const struct nlmsghdr *nlh, void *data)
{
	struct reading *r = data;
	struct action_monitor *w = r->w;
	unsigned type = NFNL_MSG_TYPE(nlh->nlmsg_type);

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct nfgenmsg))
		return MNL_CB_OK;
	if (type == NFT_MSG_NEWGEN) {
		bool another = generation_pid(nlh) != (uint32_t)getpid();
		w->neighbours += another && w->npending == 0 && !w->too_large;
		if (another && w->too_large)
			w->overflowed = true;
		else if (another)
			for (size_t i = 0; i < w->npending; i++)
				r->cb(r->ctx, &w->pending[i]);
		w->npending = 0;
		w->too_large = false;
		return MNL_CB_OK;
	}
	if (!ours(w, nlh))
		return MNL_CB_OK;
	if (type == NFT_MSG_NEWSETELEM || type == NFT_MSG_DELSETELEM) {
		read_elements(w, nlh, type == NFT_MSG_NEWSETELEM);
	} else {
		struct action_monitor_change *c = more(w);
		if (c)
			c->element = false;
	}
	return MNL_CB_OK;
}

int action_monitor_read(struct action_monitor *w, action_monitor_cb cb, void *ctx, char *err, size_t errlen)
{
	char *buf = w->buf;
	struct reading r = { w, cb, ctx };

	BLOOMD_ON_LOOP();
	for (int reads = 0; reads < READS_A_CALL; reads++) {
		ssize_t n = mnl_socket_recvfrom(w->nl, buf, sizeof(w->buf));
		if (n < 0 && errno == ENOBUFS) {
			w->overflowed = true;
			w->npending = 0; /* a transaction in part: what it was is lost either way */
			w->too_large = false;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			error_set(err, errlen, "nftables watch: %s", strerror(errno));
			return -1;
		}
		if (w->overflowed)
			continue; /* lost: the owner looks at everything, so what follows is only read out */
		if (mnl_cb_run(buf, (size_t)n, 0, 0, on_message, &r) < 0) {
			error_set(err, errlen, "nftables watch: an announcement not understood: %s", strerror(errno));
			return -1;
		}
	}
	bool lost = w->overflowed;
	w->overflowed = false;
	return lost ? 1 : 0;
}
