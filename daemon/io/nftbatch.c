/* nftbatch.c - elements added to and deleted from an inet table's address sets, as one netlink batch. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "nftbatch.h"

#include <endian.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "arena.h"
#include "error.h"

#define SEND_BUFFER (16 << 20)     /* bytes: a batch of some hundred thousand changes in one send */
#define MESSAGE_ROOM 256           /* bytes at most one element's message takes */

struct nft_batch {
	struct mnl_socket *nl;
	unsigned portid, seq;
	char *table;
	char *buf;                 /* the messages queued, after the batch's begin */
	size_t len, cap;
	unsigned messages;         /* element messages queued */
	size_t last;               /* where the last of them starts: it alone asks for an ack */
};

struct nft_batch *nft_batch_open(const char *table, char *err, size_t errlen)
{
	struct nft_batch *b = calloc(1, sizeof(*b));
	int size = SEND_BUFFER;

	if (b == NULL || (b->table = strdup(table)) == NULL) {
		error_set(err, errlen, "nftables: out of memory");
		nft_batch_close(b);
		return NULL;
	}
	if ((b->nl = mnl_socket_open(NETLINK_NETFILTER)) == NULL || mnl_socket_bind(b->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		error_set(err, errlen, "nftables: netlink: %s", strerror(errno));
		nft_batch_close(b);
		return NULL;
	}
	struct timeval wait = { .tv_sec = 5 };
	int one = 1;
	if (setsockopt(mnl_socket_get_fd(b->nl), SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(mnl_socket_get_fd(b->nl), SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	/* An answer is waited for 5 s at most; an error comes back without the request in it. */
	(void)setsockopt(mnl_socket_get_fd(b->nl), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	(void)mnl_socket_setsockopt(b->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	b->portid = mnl_socket_get_portid(b->nl);
	b->seq = (unsigned)time(NULL) << 8;
	return b;
}

void nft_batch_close(struct nft_batch *b)
{
	if (b == NULL)
		return;
	if (b->nl)
		mnl_socket_close(b->nl);
	free(b->buf);
	free(b->table);
	free(b);
}

bool nft_batch_pending(const struct nft_batch *b)
{
	return b->messages > 0;
}

/* A message header of type at the end of the queue (room made for one message), with its nfgenmsg. */
static struct nlmsghdr *put_message(struct nft_batch *b, unsigned type, unsigned flags, unsigned family, unsigned res_id)
{
	if (array_grow((void **)&b->buf, &b->cap, b->len + MESSAGE_ROOM, 1) < 0)
		return NULL;
	memset(b->buf + b->len, 0, MESSAGE_ROOM);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(b->buf + b->len);
	nlh->nlmsg_type = (uint16_t)type;
	nlh->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	nlh->nlmsg_seq = ++b->seq;
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = (uint8_t)family;
	g->version = NFNETLINK_V0;
	g->res_id = htobe16((uint16_t)res_id);
	return nlh;
}

/* One element of a message: its key, and what the kernel holds with it. */
struct element {
	const uint8_t *key;
	size_t len;
	uint64_t timeout_s;        /* 0: none */
	uint32_t flags;            /* NFT_SET_ELEM_INTERVAL_END for an interval's end */
	bool open;                 /* an interval that reaches the top of the address space: it has no end */
};

/* The batch's begin, before its first message. */
static int begin(struct nft_batch *b)
{
	if (b->len > 0)
		return 0;
	struct nlmsghdr *nlh = put_message(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	if (nlh == NULL)
		return -1;
	b->len = nlh->nlmsg_len;
	return 0;
}

static void put_one(struct nlmsghdr *nlh, const struct element *e)
{
	/* nft's own mark of an open interval (NFTNL_UDATA_SET_ELEM_FLAGS: NFTNL_SET_ELEM_F_INTERVAL_OPEN), so it lists it right */
	static const uint8_t OPEN[] = { 1, 4, 1, 0, 0, 0 };
	struct nlattr *elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	struct nlattr *k = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);

	mnl_attr_put(nlh, NFTA_DATA_VALUE, e->len, e->key);
	mnl_attr_nest_end(nlh, k);
	if (e->timeout_s)
		mnl_attr_put_u64(nlh, NFTA_SET_ELEM_TIMEOUT, htobe64(e->timeout_s * 1000));
	if (e->flags)
		mnl_attr_put_u32(nlh, NFTA_SET_ELEM_FLAGS, htobe32(e->flags));
	if (e->open)
		mnl_attr_put(nlh, NFTA_SET_ELEM_USERDATA, sizeof(OPEN), OPEN);
	mnl_attr_nest_end(nlh, elem);
}

/* A message of n elements (an address: one; a net: its start and, unless open, its end) queued. */
static int put_elements(struct nft_batch *b, unsigned msg, unsigned flags, const char *set, const struct element *e,
			size_t n)
{
	if (begin(b) < 0)
		return -1;
	struct nlmsghdr *nlh = put_message(b, (NFNL_SUBSYS_NFTABLES << 8) | msg, flags, NFPROTO_INET, 0);
	if (nlh == NULL)
		return -1;
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, b->table);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, set);
	struct nlattr *list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	for (size_t i = 0; i < n; i++)
		put_one(nlh, &e[i]);
	mnl_attr_nest_end(nlh, list);
	b->last = b->len;
	b->len += nlh->nlmsg_len;
	b->messages++;
	return 0;
}

static int put_element(struct nft_batch *b, unsigned msg, unsigned flags, const char *set, const uint8_t *key,
		       size_t len, uint64_t timeout_s)
{
	const struct element e = { .key = key, .len = len, .timeout_s = timeout_s };

	return put_elements(b, msg, flags, set, &e, 1);
}

/*
 * A net as an interval set holds it: its first address, and the first
 * address past it flagged as the interval's end; a net that reaches the
 * top of the address space has no end (an open interval). 2 or 1 elements
 * in e; end is their keys' room.
 */
static size_t net_elements(const uint8_t *addr, size_t len, unsigned prefix, uint64_t timeout_s, uint8_t end[16],
			   struct element e[2])
{
	bool carry = prefix == 0; /* a /0 reaches the top */

	memcpy(end, addr, len);
	if (prefix > 0) { /* end = addr + 2^(bits - prefix): the prefix's last bit, carried up */
		size_t i = (prefix - 1) / 8;
		unsigned sum = end[i] + (0x80u >> ((prefix - 1) % 8));
		end[i] = (uint8_t)sum;
		carry = sum > 0xff;
		while (carry && i-- > 0)
			carry = ++end[i] == 0;
	}
	e[0] = (struct element){ .key = addr, .len = len, .timeout_s = timeout_s, .open = carry };
	if (carry)
		return 1;
	e[1] = (struct element){ .key = end, .len = len, .flags = NFT_SET_ELEM_INTERVAL_END };
	return 2;
}

int nft_batch_add_net(struct nft_batch *b, const char *set, const uint8_t *addr, size_t len, unsigned prefix,
		      uint64_t timeout_s)
{
	uint8_t end[16];
	struct element e[2];
	size_t n = net_elements(addr, len, prefix, timeout_s, end, e);

	return put_elements(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, set, e, n);
}

int nft_batch_delete_net(struct nft_batch *b, const char *set, const uint8_t *addr, size_t len, unsigned prefix)
{
	uint8_t end[16];
	struct element e[2];
	size_t n = net_elements(addr, len, prefix, 0, end, e);

	if (put_elements(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, set, e, n) < 0)
		return -1;
	return put_elements(b, NFT_MSG_DELSETELEM, 0, set, e, n);
}

const char *nft_timeout_text(uint64_t ms, char *out, size_t len)
{
	static const struct {
		uint64_t ms;
		const char *unit;
	} PARTS[] = { { 86400000, "d" }, { 3600000, "h" }, { 60000, "m" }, { 1000, "s" }, { 1, "ms" } };
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(PARTS) / sizeof(PARTS[0]); i++) {
		uint64_t n = ms / PARTS[i].ms;
		ms %= PARTS[i].ms;
		if ((n || (ms == 0 && at == 0 && PARTS[i].ms == 1)) && at < len)
			at += (size_t)snprintf(out + at, len - at, "%llu%s", (unsigned long long)n, PARTS[i].unit);
	}
	return out;
}

int nft_batch_add(struct nft_batch *b, const char *set, const uint8_t *key, size_t len, uint64_t timeout_s)
{
	return put_element(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, set, key, len, timeout_s);
}

int nft_batch_delete(struct nft_batch *b, const char *set, const uint8_t *key, size_t len)
{
	if (put_element(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, set, key, len, 0) < 0)
		return -1;
	return put_element(b, NFT_MSG_DELSETELEM, 0, set, key, len, 0);
}

/*
 * The kernel's answers read until the last element's ack: the errors of
 * any before it come first (the kernel reports each, then undoes the
 * batch whole). Only the last asks for an ack: ten thousand acks would
 * overflow the socket.
 */
static int read_acks(struct nft_batch *b, unsigned first_seq, unsigned last_seq, char *err, size_t errlen)
{
	char buf[1 << 16];
	int refused = 0;

	for (;;) {
		ssize_t n = mnl_socket_recvfrom(b->nl, buf, sizeof(buf));
		if (n < 0) {
			error_set(err, errlen, "nftables: netlink: %s", errno == EAGAIN ? "no answer in 5 s" : strerror(errno));
			return -1;
		}
		int rest = (int)n;
		for (const struct nlmsghdr *nlh = (const void *)buf; mnl_nlmsg_ok(nlh, rest); nlh = mnl_nlmsg_next(nlh, &rest)) {
			if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_seq < first_seq || nlh->nlmsg_seq > last_seq)
				continue;
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
			if (e->error && !refused)
				refused = -e->error;
			if (nlh->nlmsg_seq != last_seq)
				continue;
			if (refused)
				error_set(err, errlen, "nftables: the kernel refused an element of table inet %s: %s", b->table,
					  strerror(refused));
			return refused ? -1 : 0;
		}
	}
}

int nft_batch_commit(struct nft_batch *b, char *err, size_t errlen)
{
	if (b->messages == 0)
		return 0;
	struct nlmsghdr *last = (struct nlmsghdr *)(b->buf + b->last);
	unsigned first_seq = ((struct nlmsghdr *)b->buf)->nlmsg_seq, last_seq = last->nlmsg_seq;
	last->nlmsg_flags |= NLM_F_ACK;
	struct nlmsghdr *end = put_message(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	int rc = end ? 0 : -1;
	if (rc == 0) {
		b->len += end->nlmsg_len;
		if (mnl_socket_sendto(b->nl, b->buf, b->len) < 0) {
			error_set(err, errlen, "nftables: netlink: %s", strerror(errno));
			rc = -1;
		} else {
			rc = read_acks(b, first_seq, last_seq, err, errlen);
		}
	} else {
		error_set(err, errlen, "nftables: out of memory");
	}
	b->len = 0;
	b->messages = 0;
	return rc;
}
