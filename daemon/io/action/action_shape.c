/* action_shape.c - what an nftables table does, read from the kernel by netlink. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "action_shape.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "error.h"

struct action_shape {
	struct mnl_socket *nl;
	unsigned portid, seq;
	char *table;
	FILE *bytes;               /* the shape being read */
	char *read;                /* its bytes, once read */
	size_t read_len;
	char *kept;                /* the shape kept */
	size_t kept_len;
	action_shape_counter_cb counter_cb;
	void *counter_ctx;
	_Alignas(8) char buf[1 << 16]; /* a dump's request and replies, netlink headers aligned */
};

struct action_shape *action_shape_open(const char *table, char *err, size_t errlen)
{
	struct action_shape *s = calloc(1, sizeof(*s));

	if (s == NULL || (s->table = strdup(table)) == NULL) {
		error_set(err, errlen, "nftables: out of memory");
		action_shape_close(s);
		return NULL;
	}
	if ((s->nl = mnl_socket_open(NETLINK_NETFILTER)) == NULL || mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		error_set(err, errlen, "nftables: netlink: %s", strerror(errno));
		action_shape_close(s);
		return NULL;
	}
	s->portid = mnl_socket_get_portid(s->nl);
	s->seq = (unsigned)time(NULL);
	return s;
}

void action_shape_close(struct action_shape *s)
{
	if (s == NULL)
		return;
	if (s->nl)
		mnl_socket_close(s->nl);
	free(s->read);
	free(s->kept);
	free(s->table);
	free(s);
}

/* ---- the bytes of a shape ---- */

static void put_attr(FILE *f, const struct nlattr *a, const void *payload, size_t len)
{
	uint16_t type = mnl_attr_get_type(a), l = (uint16_t)len;

	fwrite(&type, sizeof(type), 1, f);
	fwrite(&l, sizeof(l), 1, f);
	fwrite(payload, 1, len, f);
}

/* A rule's expressions: each one's name and data, a counter's data left out (what it counted). */
static void put_expressions(FILE *f, const struct nlattr *list)
{
	struct nlattr *elem, *a; /* not const: libmnl's loops cast them */

	mnl_attr_for_each_nested(elem, list) {
		const char *name = "";
		mnl_attr_for_each_nested(a, elem)
			if (mnl_attr_get_type(a) == NFTA_EXPR_NAME)
				name = mnl_attr_get_str(a);
		mnl_attr_for_each_nested(a, elem)
			if (mnl_attr_get_type(a) == NFTA_EXPR_NAME ||
			    (mnl_attr_get_type(a) == NFTA_EXPR_DATA && strcmp(name, "counter") != 0))
				put_attr(f, a, mnl_attr_get_payload(a), mnl_attr_get_payload_len(a));
	}
}

/* Whether attribute type of a message of this kind says what the table does (not a handle, a use count, a counter). */
static bool kept_attr(unsigned msg, unsigned type)
{
	switch (msg) {
	case NFT_MSG_NEWSET:
		return type == NFTA_SET_NAME || type == NFTA_SET_FLAGS || type == NFTA_SET_KEY_TYPE || type == NFTA_SET_KEY_LEN;
	case NFT_MSG_NEWCHAIN:
		return type == NFTA_CHAIN_NAME || type == NFTA_CHAIN_HOOK || type == NFTA_CHAIN_POLICY || type == NFTA_CHAIN_TYPE;
	case NFT_MSG_NEWRULE:
		return type == NFTA_RULE_CHAIN;
	default:
		return false;
	}
}

/* The lookup an expression's data holds: its set, and whether it is negated. */
static void read_lookup(const struct nlattr *data, const char **set, bool *negated)
{
	struct nlattr *a; /* not const: libmnl's loops cast them */

	mnl_attr_for_each_nested(a, data) {
		if (mnl_attr_get_type(a) == NFTA_LOOKUP_SET)
			*set = mnl_attr_get_str(a);
		if (mnl_attr_get_type(a) == NFTA_LOOKUP_FLAGS && mnl_attr_get_payload_len(a) == 4)
			*negated = ntohl(mnl_attr_get_u32(a)) & NFT_LOOKUP_F_INV;
	}
}

/* A rule's counter and the set it matches, handed to the counters' callback. */
static void count_rule(struct action_shape *s, const struct nlattr *list)
{
	struct nlattr *elem, *a, *b; /* not const: libmnl's loops cast them */
	const char *set = "";
	uint64_t packets = 0, bytes = 0;
	bool counted = false;

	mnl_attr_for_each_nested(elem, list) {
		const char *name = "";
		const struct nlattr *data = NULL;
		mnl_attr_for_each_nested(a, elem) {
			if (mnl_attr_get_type(a) == NFTA_EXPR_NAME)
				name = mnl_attr_get_str(a);
			if (mnl_attr_get_type(a) == NFTA_EXPR_DATA)
				data = a;
		}
		if (data && strcmp(name, "lookup") == 0) {
			const char *named = "";
			bool negated = false;
			read_lookup(data, &named, &negated);
			if (!negated)
				set = named;
		} else if (data && strcmp(name, "counter") == 0) {
			counted = true;
			mnl_attr_for_each_nested(b, data) {
				if (mnl_attr_get_type(b) == NFTA_COUNTER_PACKETS)
					packets = be64toh(mnl_attr_get_u64(b));
				if (mnl_attr_get_type(b) == NFTA_COUNTER_BYTES)
					bytes = be64toh(mnl_attr_get_u64(b));
			}
		}
	}
	if (counted)
		s->counter_cb(s->counter_ctx, set, packets, bytes);
}

/* Whether a message is of the table read (attribute 1 names the table in sets, chains and rules alike). */
static bool of_table(const struct action_shape *s, const struct nlmsghdr *nlh)
{
	struct nlattr *a; /* not const: libmnl's loops cast them */

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
		if (mnl_attr_get_type(a) == 1)
			return strcmp(mnl_attr_get_str(a), s->table) == 0;
	return false;
}

static int on_dumped(const struct nlmsghdr *nlh, void *data)
{
	struct action_shape *s = data;
	unsigned msg = NFNL_MSG_TYPE(nlh->nlmsg_type);
	struct nlattr *a; /* not const: libmnl's loops cast them */
	uint8_t kind = (uint8_t)msg;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct nfgenmsg) || !of_table(s, nlh))
		return MNL_CB_OK;
	if (s->counter_cb) {
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
			if (msg == NFT_MSG_NEWRULE && mnl_attr_get_type(a) == NFTA_RULE_EXPRESSIONS)
				count_rule(s, a);
		return MNL_CB_OK;
	}
	fwrite(&kind, 1, 1, s->bytes);
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (msg == NFT_MSG_NEWRULE && mnl_attr_get_type(a) == NFTA_RULE_EXPRESSIONS)
			put_expressions(s->bytes, a);
		else if (kept_attr(msg, mnl_attr_get_type(a)))
			put_attr(s->bytes, a, mnl_attr_get_payload(a), mnl_attr_get_payload_len(a));
	}
	return MNL_CB_OK;
}

/* One dump (sets, chains or rules of the inet family), each message to on_dumped. */
static int dump(struct action_shape *s, unsigned msg, char *err, size_t errlen)
{
	char *buf = s->buf;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned seq = ++s->seq;

	BLOOMD_ON_LOOP();
	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = NFPROTO_INET;
	g->version = NFNETLINK_V0;
	g->res_id = 0;
	if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0) {
		error_set(err, errlen, "nftables: netlink: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(s->nl, buf, sizeof(s->buf));
		if (n < 0) {
			error_set(err, errlen, "nftables: netlink: %s", strerror(errno));
			return -1;
		}
		int rc = mnl_cb_run(buf, (size_t)n, seq, s->portid, on_dumped, s);
		if (rc == MNL_CB_STOP)
			return 0;
		if (rc < 0) {
			error_set(err, errlen, "nftables: netlink dump: %s", strerror(errno));
			return -1;
		}
	}
}

/* The shape now, into s->read. */
static int read_shape(struct action_shape *s, char *err, size_t errlen)
{
	static const unsigned what[] = { NFT_MSG_GETSET, NFT_MSG_GETCHAIN, NFT_MSG_GETRULE };

	free(s->read);
	s->read = NULL;
	if ((s->bytes = open_memstream(&s->read, &s->read_len)) == NULL) {
		error_set(err, errlen, "nftables: out of memory");
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]) && rc == 0; i++)
		rc = dump(s, what[i], err, errlen);
	if (fclose(s->bytes) != 0 && rc == 0) {
		error_set(err, errlen, "nftables: out of memory");
		rc = -1;
	}
	s->bytes = NULL;
	return rc;
}

int action_shape_same(struct action_shape *s, char *err, size_t errlen)
{
	if (read_shape(s, err, errlen) < 0)
		return -1;
	return s->kept && s->read_len == s->kept_len && memcmp(s->read, s->kept, s->kept_len) == 0;
}

int action_shape_keep(struct action_shape *s, char *err, size_t errlen)
{
	if (read_shape(s, err, errlen) < 0)
		return -1;
	free(s->kept);
	s->kept = s->read;
	s->kept_len = s->read_len;
	s->read = NULL;
	return 0;
}

int action_shape_counters(struct action_shape *s, action_shape_counter_cb cb, void *ctx, char *err, size_t errlen)
{
	s->counter_cb = cb;
	s->counter_ctx = ctx;
	int rc = dump(s, NFT_MSG_GETRULE, err, errlen);
	s->counter_cb = NULL;
	return rc;
}
