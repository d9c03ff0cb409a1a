/* feed_address.c - an address or a network as the feeds write them: the entry it is. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "feed_internal.h"

#include <string.h>

#include "error.h"

/* An address ("addr") or a network ("net"; a whole-length one is its address). */
int feed_address(const char *text, struct entry *e, char *err, size_t errlen)
{
	if (strlen(text) > FEED_TOKEN_MAX || entry_parse_address(text, e) < 0) {
		error_set(err, errlen, "not an address or a network");
		return -1;
	}
	if (e->kind == ENTRY_NET && e->key[0] == 8 * (e->len - 1)) {
		memmove(e->key, e->key + 1, --e->len);
		e->kind = ENTRY_ADDR;
	}
	return 0;
}

/* An IPv4-mapped IPv6 address or network (::ffff:a.b.c.d) as the IPv4 one it is. */
void feed_unmap_v4(struct entry *e)
{
	static const uint8_t MAPPED[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	bool net = e->kind == ENTRY_NET;
	uint8_t *a = e->key + net;

	if (e->len != 16u + net || memcmp(a, MAPPED, 12) != 0 || (net && e->key[0] < 96))
		return;
	memmove(a, a + 12, 4);
	e->len = 4u + net;
	if (net)
		e->key[0] -= 96;
}
