/* nft-has.c - how many of these addresses an inet table's set holds, asked of the kernel one at a time over netlink. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nft-has TABLE SET ADDRESS...: prints how many the set holds. Each is one
 * NFT_MSG_GETSETELEM for its key (no dump): nft's own get element reads
 * the whole set first, which, while another process commits, is dumped
 * again from the start each time and can take minutes at 100,000
 * elements. Exit 2 on an error other than "not there".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 if the set holds key (len bytes), 0 if not, -1 on another error. */
static int holds(struct mnl_socket *nl, const char *table, const char *set, const void *key, size_t len, unsigned seq)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_GETSETELEM;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = NFPROTO_INET;
	g->version = NFNETLINK_V0;
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, set);
	struct nlattr *elements = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	struct nlattr *elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	struct nlattr *k = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);
	mnl_attr_put(nlh, NFTA_DATA_VALUE, len, key);
	mnl_attr_nest_end(nlh, k);
	mnl_attr_nest_end(nlh, elem);
	mnl_attr_nest_end(nlh, elements);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	int rc;
	do {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -1;
		rc = mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(nl), NULL, NULL);
	} while (rc > 0);
	if (rc < 0)
		return errno == ENOENT ? 0 : -1;
	return 1;
}

int main(int argc, char **argv)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
	unsigned count = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: nft-has TABLE SET ADDRESS...\n");
		return 2;
	}
	if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("nft-has: netlink");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		unsigned char key[16];
		size_t len = inet_pton(AF_INET, argv[i], key) == 1 ? 4 : inet_pton(AF_INET6, argv[i], key) == 1 ? 16 : 0;
		int rc = len ? holds(nl, argv[1], argv[2], key, len, (unsigned)i) : -1;
		if (rc < 0) {
			fprintf(stderr, "nft-has: %s: %s\n", argv[i], len ? strerror(errno) : "not an address");
			return 2;
		}
		count += (unsigned)rc;
	}
	mnl_socket_close(nl);
	printf("%u\n", count);
	return 0;
}
