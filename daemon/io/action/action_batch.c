/* action_batch.c - elements added to and deleted from an inet table's address sets, as one netlink batch. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "action_batch.h"

#include <arpa/inet.h>
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
#define ELEMENTS_A_MESSAGE 512     /* their list is a netlink attribute: 64 KiB at most */
#define MESSAGE_ROOM (ELEMENTS_A_MESSAGE * 96 + 512) /* bytes at most one message takes */
#define SETS_A_BATCH 16

/* One element queued: its key, and what the kernel holds with it. */
struct element {
	uint8_t key[16];
	uint8_t len;
	bool end;                  /* an interval's end (NFT_SET_ELEM_INTERVAL_END) */
	bool open;                 /* an interval that reaches the top of the address space: it has no end */
	uint64_t timeout_s;        /* 0: none */
};

struct elements {
	struct element *e;
	size_t n, cap;
};

/*
 * A set's changes, sent in this order whatever order they were queued in:
 * its flush; the additions that precede deletions (so that an element the
 * kernel let run out is no error); the deletions; the additions. An
 * element is added and deleted at most once a batch, so only an interval
 * added where another goes depends on the order, and it comes after.
 */
struct set_queue {
	char name[32];
	bool flush;
	struct elements before, out, in;
};

struct action_batch {
	struct mnl_socket *nl;
	unsigned portid, seq;
	char *table;
	struct set_queue sets[SETS_A_BATCH];
	unsigned nsets;
	size_t queued;             /* elements (and flushes) queued */
	char *buf;                 /* the messages being sent */
	size_t len, cap;
};

struct action_batch *action_batch_open(const char *table, char *err, size_t errlen)
{
	struct action_batch *b = calloc(1, sizeof(*b));
	int size = SEND_BUFFER;

	if (b == NULL || (b->table = strdup(table)) == NULL) {
		error_set(err, errlen, "nftables: out of memory");
		action_batch_close(b);
		return NULL;
	}
	if ((b->nl = mnl_socket_open(NETLINK_NETFILTER)) == NULL || mnl_socket_bind(b->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		error_set(err, errlen, "nftables: netlink: %s", strerror(errno));
		action_batch_close(b);
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

void action_batch_discard(struct action_batch *b)
{
	for (unsigned i = 0; i < b->nsets; i++) {
		struct set_queue *q = &b->sets[i];
		q->flush = false;
		q->before.n = q->out.n = q->in.n = 0;
	}
	b->queued = 0;
}

void action_batch_close(struct action_batch *b)
{
	if (b == NULL)
		return;
	if (b->nl)
		mnl_socket_close(b->nl);
	for (unsigned i = 0; i < b->nsets; i++) {
		free(b->sets[i].before.e);
		free(b->sets[i].out.e);
		free(b->sets[i].in.e);
	}
	free(b->buf);
	free(b->table);
	free(b);
}

bool action_batch_pending(const struct action_batch *b)
{
	return b->queued > 0;
}

size_t action_batch_queued(const struct action_batch *b)
{
	return b->queued;
}

/* The queue of the set named, made if it is new; NULL when SETS_A_BATCH are in use (or the name is too long). */
static struct set_queue *queue_of(struct action_batch *b, const char *set)
{
	for (unsigned i = 0; i < b->nsets; i++)
		if (strcmp(b->sets[i].name, set) == 0)
			return &b->sets[i];
	if (b->nsets == SETS_A_BATCH || strlen(set) >= sizeof(b->sets[0].name))
		return NULL;
	struct set_queue *q = &b->sets[b->nsets++];
	snprintf(q->name, sizeof(q->name), "%s", set);
	return q;
}

static int push(struct action_batch *b, struct elements *list, const struct element *e, size_t n)
{
	if (array_grow((void **)&list->e, &list->cap, list->n + n, sizeof(*list->e)) < 0)
		return -1;
	memcpy(list->e + list->n, e, n * sizeof(*e));
	list->n += n;
	b->queued += n;
	return 0;
}

/*
 * A net as an interval set holds it: its first address, and the first
 * address past it flagged as the interval's end; a net that reaches the
 * top of the address space has no end (an open interval). 2 or 1 elements
 * in e.
 */
static size_t net_elements(const uint8_t *addr, size_t len, unsigned prefix, uint64_t timeout_s, struct element e[2])
{
	bool carry = prefix == 0; /* a /0 reaches the top */

	e[0] = (struct element){ .len = (uint8_t)len, .timeout_s = timeout_s };
	memcpy(e[0].key, addr, len);
	e[1] = (struct element){ .len = (uint8_t)len, .end = true };
	memcpy(e[1].key, addr, len);
	if (prefix > 0) { /* end = addr + 2^(bits - prefix): the prefix's last bit, carried up */
		size_t i = (prefix - 1) / 8;
		unsigned sum = e[1].key[i] + (0x80u >> ((prefix - 1) % 8));
		e[1].key[i] = (uint8_t)sum;
		carry = sum > 0xff;
		while (carry && i-- > 0)
			carry = ++e[1].key[i] == 0;
	}
	e[0].open = carry;
	return carry ? 1 : 2;
}

/* n elements (an address, or a net's start and end) queued into set: added, or deleted (added before, deleted). */
static int queue(struct action_batch *b, const char *set, bool add, const struct element *e, size_t n)
{
	struct set_queue *q = queue_of(b, set);

	if (q == NULL)
		return -1;
	if (add)
		return push(b, &q->in, e, n);
	struct element plain[2];
	for (size_t i = 0; i < n; i++) { /* the addition before a deletion: no time limit, not an open interval */
		plain[i] = e[i];
		plain[i].timeout_s = 0;
	}
	return push(b, &q->before, plain, n) < 0 ? -1 : push(b, &q->out, e, n);
}

int action_batch_add_net(struct action_batch *b, const char *set, const uint8_t *addr, size_t len, unsigned prefix,
		      uint64_t timeout_s)
{
	struct element e[2];

	return queue(b, set, true, e, net_elements(addr, len, prefix, timeout_s, e));
}

int action_batch_delete_net(struct action_batch *b, const char *set, const uint8_t *addr, size_t len, unsigned prefix)
{
	struct element e[2];

	return queue(b, set, false, e, net_elements(addr, len, prefix, 0, e));
}

int action_batch_add(struct action_batch *b, const char *set, const uint8_t *key, size_t len, uint64_t timeout_s)
{
	struct element e = { .len = (uint8_t)len, .timeout_s = timeout_s };

	memcpy(e.key, key, len);
	return queue(b, set, true, &e, 1);
}

int action_batch_delete(struct action_batch *b, const char *set, const uint8_t *key, size_t len)
{
	struct element e = { .len = (uint8_t)len };

	memcpy(e.key, key, len);
	return queue(b, set, false, &e, 1);
}

int action_batch_flush(struct action_batch *b, const char *set)
{
	struct set_queue *q = queue_of(b, set);

	if (q == NULL)
		return -1;
	b->queued += !q->flush;
	q->flush = true;
	return 0;
}

const char *action_timeout_text(uint64_t ms, char *out, size_t len)
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

/* ---- the messages ---- */

/* A message header of type at the end of the buffer (room made for one message), with its nfgenmsg. */
static struct nlmsghdr *put_message(struct action_batch *b, unsigned type, unsigned flags, unsigned family, unsigned res_id)
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
	if (e->end)
		mnl_attr_put_u32(nlh, NFTA_SET_ELEM_FLAGS, htobe32(NFT_SET_ELEM_INTERVAL_END));
	if (e->open)
		mnl_attr_put(nlh, NFTA_SET_ELEM_USERDATA, sizeof(OPEN), OPEN);
	mnl_attr_nest_end(nlh, elem);
}

/*
 * Messages of msg for set: n elements (none: the whole set, a flush), at
 * most ELEMENTS_A_MESSAGE a message, an interval's start and end never
 * apart. -1 without memory.
 */
static int put_messages(struct action_batch *b, unsigned msg, unsigned flags, const char *set, const struct element *e,
			size_t n)
{
	size_t at = 0;

	do {
		struct nlmsghdr *nlh = put_message(b, (NFNL_SUBSYS_NFTABLES << 8) | msg, flags, NFPROTO_INET, 0);
		if (nlh == NULL)
			return -1;
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, b->table);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, set);
		if (n > 0) {
			struct nlattr *list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
			size_t last = at + ELEMENTS_A_MESSAGE < n ? at + ELEMENTS_A_MESSAGE : n;
			if (last < n && e[last].end)
				last++; /* with its start */
			for (; at < last; at++)
				put_one(nlh, &e[at]);
			mnl_attr_nest_end(nlh, list);
		}
		b->len += nlh->nlmsg_len;
	} while (at < n);
	return 0;
}

/*
 * The batch's first message: the table "made" again, which changes nothing
 * (no flags given). It asks for an echo: the kernel then tells this socket
 * the generation the batch commits (NEWGEN, with this message's sequence
 * number) whoever else listens, and tells nothing when the batch changed
 * nothing (an element added that was there): no generation is made then.
 */
static int put_echo(struct action_batch *b)
{
	struct nlmsghdr *nlh = put_message(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE, NLM_F_ECHO, NFPROTO_INET, 0);

	if (nlh == NULL)
		return -1;
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, b->table);
	b->len += nlh->nlmsg_len;
	return 0;
}

/* The batch's messages, between its begin and end: the echo, then each set's in the order struct set_queue gives. */
static int put_batch(struct action_batch *b, unsigned *first_seq, unsigned *last_seq)
{
	b->len = 0;
	struct nlmsghdr *nlh = put_message(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	if (nlh == NULL)
		return -1;
	b->len = nlh->nlmsg_len;
	*first_seq = b->seq + 1;
	if (put_echo(b) < 0)
		return -1;
	for (unsigned i = 0; i < b->nsets; i++) {
		const struct set_queue *q = &b->sets[i];
		if ((q->flush && put_messages(b, NFT_MSG_DELSETELEM, 0, q->name, NULL, 0) < 0) ||
		    (q->before.n && put_messages(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, q->name, q->before.e, q->before.n) < 0) ||
		    (q->out.n && put_messages(b, NFT_MSG_DELSETELEM, 0, q->name, q->out.e, q->out.n) < 0) ||
		    (q->in.n && put_messages(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, q->name, q->in.e, q->in.n) < 0))
			return -1;
	}
	*last_seq = b->seq;
	size_t last = b->len; /* the last message: it alone asks for an ack */
	for (size_t at = 0; at < b->len; at += ((struct nlmsghdr *)(b->buf + at))->nlmsg_len)
		last = at;
	((struct nlmsghdr *)(b->buf + last))->nlmsg_flags |= NLM_F_ACK;
	if ((nlh = put_message(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES)) == NULL)
		return -1;
	b->len += nlh->nlmsg_len;
	return 0;
}

/*
 * The kernel's answers read until the last element's ack: the errors of
 * any before it come first (the kernel reports each, then undoes the
 * batch whole), and the echo of the generation committed before them.
 * Only the last asks for an ack: ten thousand acks would overflow the
 * socket. 1 if a generation was made, 0 if nothing changed, -1 (err).
 */
static int read_acks(struct action_batch *b, unsigned first_seq, unsigned last_seq, char *err, size_t errlen)
{
	char buf[1 << 16];
	int refused = 0;
	bool made = false;

	for (;;) {
		ssize_t n = mnl_socket_recvfrom(b->nl, buf, sizeof(buf));
		if (n < 0) {
			error_set(err, errlen, "nftables: netlink: %s", errno == EAGAIN ? "no answer in 5 s" : strerror(errno));
			return -1;
		}
		int rest = (int)n;
		for (const struct nlmsghdr *nlh = (const void *)buf; mnl_nlmsg_ok(nlh, rest); nlh = mnl_nlmsg_next(nlh, &rest)) {
			made |= nlh->nlmsg_seq == first_seq && nlh->nlmsg_type == ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN);
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
			return refused ? -1 : made;
		}
	}
}

uint32_t action_batch_portid(const struct action_batch *b)
{
	return b->portid;
}

int action_batch_generation(struct action_batch *b, uint32_t *gen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned seq = ++b->seq;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETGEN;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	if (mnl_socket_sendto(b->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(b->nl, buf, sizeof(buf));
		if (n < 0)
			return -1;
		int rest = (int)n;
		for (nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, rest); nlh = mnl_nlmsg_next(nlh, &rest)) {
			if (nlh->nlmsg_seq != seq)
				continue; /* an answer to an earlier request, left unread */
			if (nlh->nlmsg_type == NLMSG_ERROR)
				return -1;
			struct nlattr *a; /* not const: libmnl's loops cast them */
			mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
				if (mnl_attr_get_type(a) == NFTA_GEN_ID && mnl_attr_get_payload_len(a) == 4) {
					*gen = ntohl(mnl_attr_get_u32(a));
					return 0;
				}
			return -1;
		}
	}
}

int action_batch_commit(struct action_batch *b, char *err, size_t errlen)
{
	unsigned first_seq, last_seq;
	int rc = 0;

	if (b->queued == 0)
		return 0;
	if (put_batch(b, &first_seq, &last_seq) < 0) {
		error_set(err, errlen, "nftables: out of memory");
		rc = -1;
	} else if (mnl_socket_sendto(b->nl, b->buf, b->len) < 0) {
		error_set(err, errlen, "nftables: netlink: %s", strerror(errno));
		rc = -1;
	} else {
		rc = read_acks(b, first_seq, last_seq, err, errlen);
	}
	action_batch_discard(b);
	return rc;
}
