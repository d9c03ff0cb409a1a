/* setaction.c - addresses that matched, added to an nftables set with a timeout. */
#include "setaction.h"

#include <arpa/inet.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hash.h"

#define RECENT_BITS 14             /* 16,384 addresses remembered as added */

struct recent {
	uint64_t key;              /* 0: empty */
	time_t until;
};

struct set_action {
	struct nft_ctx *nft;
	char *set4, *set6;
	unsigned timeout, rate;
	double tokens;
	time_t refilled;
	struct hash_key secret;
	struct recent recent[1u << RECENT_BITS];
	struct set_action_stats st;
};

/* Run one nft command; -1 with nft's own message. */
static int run(struct set_action *a, const char *cmd, char *err, size_t errlen)
{
	if (nft_run_cmd_from_buffer(a->nft, cmd) == 0)
		return 0;
	const char *why = nft_ctx_get_error_buffer(a->nft);
	char msg[300];
	snprintf(msg, sizeof(msg), "%s", why && why[0] ? why : "refused");
	msg[strcspn(msg, "\n")] = '\0';
	error_set(err, errlen, "nft %s: %s", cmd, msg);
	return -1;
}

struct set_action *set_action_open(const struct set_action_options *o, char *err, size_t errlen)
{
	struct set_action *a = calloc(1, sizeof(*a));
	char cmd[300];

	if (a == NULL || hash_key_random(&a->secret, HASH_XXH3) < 0 || (a->nft = nft_ctx_new(NFT_CTX_DEFAULT)) == NULL ||
	    (o->set4 && (a->set4 = strdup(o->set4)) == NULL) || (o->set6 && (a->set6 = strdup(o->set6)) == NULL)) {
		error_set(err, errlen, "[action]: out of memory");
		set_action_close(a);
		return NULL;
	}
	nft_ctx_buffer_output(a->nft);
	nft_ctx_buffer_error(a->nft);
	a->timeout = o->timeout;
	a->rate = o->rate;
	a->tokens = o->rate;
	for (int i = 0; i < 2; i++) {
		const char *set = i ? a->set6 : a->set4;
		if (set == NULL)
			continue;
		snprintf(cmd, sizeof(cmd), "list set %s", set);
		if (run(a, cmd, err, errlen) < 0) {
			set_action_close(a);
			return NULL;
		}
	}
	return a;
}

void set_action_close(struct set_action *a)
{
	if (a == NULL)
		return;
	if (a->nft)
		nft_ctx_free(a->nft);
	free(a->set4);
	free(a->set6);
	free(a);
}

int set_action_block(struct set_action *a, const uint8_t *addr, int family, time_t now, char *err, size_t errlen)
{
	const char *set = family == 4 ? a->set4 : a->set6;
	char text[INET6_ADDRSTRLEN], cmd[400];

	if (set == NULL)
		return 0;
	if (now > a->refilled) { /* the bucket refills at rate a second, up to rate */
		a->tokens += (double)(now - a->refilled) * a->rate;
		if (a->tokens > a->rate)
			a->tokens = a->rate;
		a->refilled = now;
	}
	size_t len = family == 4 ? 4 : 16;
	struct hash128 h = hash_bytes(&a->secret, addr, len);
	struct recent *r = &a->recent[h.lo & ((1u << RECENT_BITS) - 1)];
	if (r->key == (h.hi | 1) && now < r->until) {
		a->st.repeated++;
		return 0;
	}
	if (a->tokens < 1) {
		a->st.rate_limited++;
		return 0;
	}
	r->key = h.hi | 1; /* added: not sent again while its element is in the set */
	r->until = now + (time_t)a->timeout;
	a->tokens -= 1;
	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
	snprintf(cmd, sizeof(cmd), "add element %s { %s timeout %us }", set, text, a->timeout);
	if (run(a, cmd, err, errlen) < 0) {
		a->st.errors++;
		r->key = 0; /* not in: may be tried again */
		return -1;
	}
	a->st.added++;
	return 1;
}

void set_action_stats(const struct set_action *a, struct set_action_stats *out)
{
	*out = a->st;
}
