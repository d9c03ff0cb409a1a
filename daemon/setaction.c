/* setaction.c - addresses that matched, added to an nftables set with a timeout. */
#include "setaction.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "error.h"
#include "hash.h"
#include "protect.h"

#define NS 1000000000ull
#define FIRST_SLOTS 1024
#define ELEMENTS_CHECKED_EVERY 10  /* checks: the set's addresses, against the table's */
#define ELEMENTS_A_STATEMENT 4096

/*
 * An address in the set: until is when its element runs out (CLOCK_MONOTONIC ns); 0: a free slot.
 * listed: the element check that last found it in the kernel's set.
 */
struct blocked {
	uint64_t until;
	uint32_t listed;
	uint8_t family;
	uint8_t addr[16];
};

struct set_action {
	struct nft_ctx *nft;
	char *set[2];              /* [0] IPv4, [1] IPv6: "inet bloomd blocked4" */
	char *table;               /* manage: "bloomd"; NULL: the sets are the operator's */
	bool remove_at_stop;
	int priority;
	unsigned timeout, rate;
	uint64_t *sent;            /* when the last rate additions went out, a ring */
	unsigned nsent, oldest;
	struct hash_key secret;
	struct blocked *slots;     /* open addressing, linear probing; at most half full */
	size_t nslots, count;
	unsigned checks;           /* set_action_check's calls; an element check's stamp */
	struct protect *protect;   /* never blocked: the host's own, loopback, [action] protect */
	bool protected_said;       /* the first address passed over is logged */
	unsigned host_reads;       /* set_action_check's calls: the host's addresses are read every tenth */
	struct set_action_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * NS + (uint64_t)t.tv_nsec;
}

static size_t addr_len(int family)
{
	return family == 4 ? 4 : 16;
}

/* ---- the addresses in the set ---- */

static size_t home_of(const struct set_action *a, const uint8_t *addr, int family)
{
	return (size_t)hash_bytes(&a->secret, addr, addr_len(family)).lo & (a->nslots - 1);
}

/* The slot of addr, or of the free slot where it would go. */
static size_t slot_of(const struct set_action *a, const uint8_t *addr, int family)
{
	size_t i = home_of(a, addr, family);

	while (a->slots[i].until && !(a->slots[i].family == family && memcmp(a->slots[i].addr, addr, addr_len(family)) == 0))
		i = (i + 1) & (a->nslots - 1);
	return i;
}

/* Free slot i, moving back the entries after it that would no longer be found (no tombstones). */
static void free_slot(struct set_action *a, size_t i)
{
	size_t mask = a->nslots - 1;

	for (size_t j = (i + 1) & mask; a->slots[j].until; j = (j + 1) & mask) {
		size_t home = home_of(a, a->slots[j].addr, a->slots[j].family);
		if (((j - home) & mask) >= ((j - i) & mask)) { /* i lies between its home and j */
			a->slots[i] = a->slots[j];
			i = j;
		}
	}
	a->slots[i].until = 0;
	a->count--;
}

/* Forget the addresses whose elements have run out. */
static void sweep(struct set_action *a, uint64_t now)
{
	for (size_t i = 0; i < a->nslots;)
		if (a->slots[i].until && a->slots[i].until <= now)
			free_slot(a, i); /* another may have moved into i */
		else
			i++;
}

static int grow(struct set_action *a)
{
	struct blocked *old = a->slots;
	size_t n = a->nslots;
	struct blocked *more = calloc(2 * n, sizeof(*more));

	if (more == NULL)
		return -1;
	a->slots = more;
	a->nslots = 2 * n;
	for (size_t i = 0; i < n; i++)
		if (old[i].until)
			a->slots[slot_of(a, old[i].addr, old[i].family)] = old[i];
	free(old);
	return 0;
}

/* Remember addr until until; -1 without memory. */
static int remember(struct set_action *a, const uint8_t *addr, int family, uint64_t until, uint64_t now)
{
	if (2 * (a->count + 1) > a->nslots) {
		sweep(a, now);
		if (2 * (a->count + 1) > a->nslots && grow(a) < 0)
			return -1;
	}
	struct blocked *b = &a->slots[slot_of(a, addr, family)];
	if (b->until == 0)
		a->count++;
	BLOOMD_ASSERT(2 * a->count <= a->nslots); /* at most half full: probes end */
	*b = (struct blocked){ .until = until, .family = (uint8_t)family };
	memcpy(b->addr, addr, addr_len(family));
	return 0;
}

/* ---- the rate ---- */

/* Whether one more addition keeps to rate in every one-second window; if so, it is counted. */
static bool within_rate(struct set_action *a, uint64_t now)
{
	BLOOMD_ASSERT(a->nsent <= a->rate && a->oldest < a->rate);
	if (a->nsent == a->rate) {
		if (now - a->sent[a->oldest] < NS)
			return false;
		a->sent[a->oldest] = now;
		a->oldest = (a->oldest + 1) % a->rate;
		return true;
	}
	a->sent[(a->oldest + a->nsent++) % a->rate] = now;
	return true;
}

/* ---- nft ---- */

/* Run nft commands; -1 with nft's own message (its first line). */
static int run(struct set_action *a, const char *cmd, char *err, size_t errlen)
{
	if (nft_run_cmd_from_buffer(a->nft, cmd) == 0)
		return 0;
	const char *why = nft_ctx_get_error_buffer(a->nft);
	char msg[300], shown[120];
	snprintf(msg, sizeof(msg), "%s", why && why[0] ? why : "refused");
	msg[strcspn(msg, "\n")] = '\0';
	snprintf(shown, sizeof(shown), "%s", cmd);
	shown[strcspn(shown, "\n")] = '\0';
	error_set(err, errlen, "nft %s: %s", shown, msg);
	return -1;
}

/* nft's output of cmd as JSON (terse: no elements), or NULL with a message. */
static json_t *run_json(struct set_action *a, const char *cmd, bool terse, char *err, size_t errlen)
{
	unsigned flags = nft_ctx_output_get_flags(a->nft);

	nft_ctx_output_set_flags(a->nft, flags | NFT_CTX_OUTPUT_JSON | (terse ? NFT_CTX_OUTPUT_TERSE : 0));
	int rc = run(a, cmd, err, errlen);
	nft_ctx_output_set_flags(a->nft, flags);
	if (rc < 0)
		return NULL;
	json_error_t jerr;
	json_t *out = json_loads(nft_ctx_get_output_buffer(a->nft), 0, &jerr);
	if (out == NULL)
		error_set(err, errlen, "nft %s: output not understood: %s", cmd, jerr.text);
	return out;
}

/* "add element SET { A timeout Nms, ... }" for the remembered addresses of family, 4096 a statement. */
static void put_elements(const struct set_action *a, int family, uint64_t now, FILE *f)
{
	char text[INET6_ADDRSTRLEN];
	unsigned n = 0;

	for (size_t i = 0; i < a->nslots; i++) {
		const struct blocked *b = &a->slots[i];
		if (b->until <= now || b->family != family)
			continue;
		if (n % ELEMENTS_A_STATEMENT == 0)
			fprintf(f, "%sadd element %s { ", n ? " }\n" : "", a->set[family == 6]);
		else
			fputs(", ", f);
		inet_ntop(family == 4 ? AF_INET : AF_INET6, b->addr, text, sizeof(text));
		fprintf(f, "%s timeout %llums", text, (unsigned long long)((b->until - now + 999999) / 1000000));
		n++;
	}
	if (n)
		fputs(" }\n", f);
}

/*
 * bloomd's table made again in one transaction (whatever was there goes:
 * "add" then "delete" works whether it was there or not), with every
 * address remembered, for the time it has left.
 */
static int make_table(struct set_action *a, char *err, size_t errlen)
{
	char *cmd = NULL;
	size_t len;
	FILE *f = open_memstream(&cmd, &len);
	uint64_t now = now_ns();

	if (f == NULL) {
		error_set(err, errlen, "[action]: out of memory");
		return -1;
	}
	fprintf(f, "add table inet %s\ndelete table inet %s\n"
		   "table inet %s {\n"
		   "  set blocked4 { type ipv4_addr; flags timeout; }\n"
		   "  set blocked6 { type ipv6_addr; flags timeout; }\n"
		   "  chain prerouting { type filter hook prerouting priority %d; policy accept;\n"
		   "    ip saddr @blocked4 drop; ip6 saddr @blocked6 drop; ip daddr @blocked4 drop; ip6 daddr @blocked6 drop; }\n"
		   "  chain output { type filter hook output priority %d; policy accept;\n"
		   "    ip daddr @blocked4 drop; ip6 daddr @blocked6 drop; }\n"
		   "}\n",
		a->table, a->table, a->table, a->priority, a->priority);
	put_elements(a, 4, now, f);
	put_elements(a, 6, now, f);
	int rc = fclose(f) == 0 ? run(a, cmd, err, errlen) : (error_set(err, errlen, "[action]: out of memory"), -1);
	free(cmd);
	return rc;
}

/* The elements of the set of family as nft lists them (JSON; caller frees), or NULL (no such set). */
static json_t *set_elements(struct set_action *a, int family, json_t **listing, char *err, size_t errlen)
{
	char cmd[200];
	size_t i;
	json_t *item;

	snprintf(cmd, sizeof(cmd), "list set %s", a->set[family == 6]);
	if ((*listing = run_json(a, cmd, false, err, errlen)) == NULL)
		return NULL;
	json_array_foreach(json_object_get(*listing, "nftables"), i, item)
		if (json_object_get(item, "set"))
			return json_object_get(json_object_get(item, "set"), "elem"); /* NULL while empty */
	return NULL;
}

/* The addresses a set of bloomd's table holds now (a table left by a bloomd killed): remembered. */
static void adopt(struct set_action *a, int family)
{
	char err[300];
	uint8_t addr[16];
	size_t i;
	json_t *listing, *elem;
	json_t *elems = set_elements(a, family, &listing, err, sizeof(err));
	uint64_t now = now_ns();

	json_array_foreach(elems, i, elem) {
		json_t *e = json_object_get(elem, "elem");
		const char *val = json_string_value(json_object_get(e, "val"));
		json_int_t left = json_integer_value(json_object_get(e, "expires"));
		if (val && left > 0 && inet_pton(family == 4 ? AF_INET : AF_INET6, val, addr) == 1 &&
		    remember(a, addr, family, now + (uint64_t)left * NS, now) == 0)
			a->st.taken_over++;
	}
	json_decref(listing); /* NULL when there is no such table yet */
}

/* Whether the terse listing of bloomd's table shows both sets and both chains with their six rules. */
static bool table_whole(const json_t *listing)
{
	unsigned sets = 0, chains = 0, rules = 0;
	size_t i;
	json_t *item;

	json_array_foreach(json_object_get(listing, "nftables"), i, item) {
		const char *name = json_string_value(json_object_get(json_object_get(item, "set"), "name"));
		const char *chain = json_string_value(json_object_get(json_object_get(item, "chain"), "name"));
		sets += name && (strcmp(name, "blocked4") == 0 || strcmp(name, "blocked6") == 0);
		chains += chain && (strcmp(chain, "prerouting") == 0 || strcmp(chain, "output") == 0);
		rules += json_object_get(item, "rule") != NULL;
	}
	return sets == 2 && chains == 2 && rules == 6;
}

/* Whether one terse listing of bloomd's table shows it whole (a listing that fails shows nothing). */
static bool table_there(struct set_action *a)
{
	char cmd[200], ignored[300];

	snprintf(cmd, sizeof(cmd), "list table inet %s", a->table);
	json_t *listing = run_json(a, cmd, true, ignored, sizeof(ignored));
	bool whole = listing && table_whole(listing);
	json_decref(listing);
	return whole;
}

/* Mark the remembered addresses of family that the kernel's set lists (listed = stamp); -1 if it cannot be listed. */
static int mark_listed(struct set_action *a, int family, uint32_t stamp, char *err, size_t errlen)
{
	uint8_t addr[16];
	size_t i;
	json_t *listing, *elem;
	json_t *elems = set_elements(a, family, &listing, err, errlen);

	if (listing == NULL)
		return -1;
	json_array_foreach(elems, i, elem) {
		const char *val = json_string_value(json_object_get(json_object_get(elem, "elem"), "val"));
		if (val && inet_pton(family == 4 ? AF_INET : AF_INET6, val, addr) == 1) {
			struct blocked *b = &a->slots[slot_of(a, addr, family)];
			if (b->until)
				b->listed = stamp;
		}
	}
	json_decref(listing);
	return 0;
}

/* Mark (listed = stamp) the remembered addresses that one listing of each set shows; the number of the others. */
static long count_unlisted(struct set_action *a, uint32_t stamp, uint64_t soon, char *err, size_t errlen)
{
	long unlisted = 0;

	for (int family = 4; family <= 6; family += 2)
		if (a->set[family == 6] && mark_listed(a, family, stamp, err, errlen) < 0)
			return -1;
	for (size_t i = 0; i < a->nslots; i++)
		unlisted += a->slots[i].until > soon && a->slots[i].listed != stamp;
	return unlisted;
}

/*
 * Put back, each with the time it has left, the addresses bloomd remembers
 * with over two seconds left that the kernel's sets have lost; the others
 * are left as they are (their timeout too). A listing taken while a set
 * fills was seen to come back short (its cause not found), so an address
 * counts as lost only when a second listing lacks it too. The number put
 * back, or -1.
 */
static long put_back_missing(struct set_action *a, char *err, size_t errlen)
{
	uint64_t now = now_ns(), soon = now + 2 * NS;
	uint32_t stamp = a->checks;
	char *cmd = NULL;
	size_t len;
	long missing = count_unlisted(a, stamp, soon, err, errlen);

	if (missing > 0)
		missing = count_unlisted(a, stamp, soon, err, errlen);
	if (missing <= 0)
		return missing;
	FILE *f = open_memstream(&cmd, &len);
	if (f == NULL) {
		error_set(err, errlen, "[action]: out of memory");
		return -1;
	}
	for (size_t i = 0; i < a->nslots; i++) {
		const struct blocked *b = &a->slots[i];
		if (b->until <= soon || b->listed == stamp)
			continue;
		char text[INET6_ADDRSTRLEN];
		inet_ntop(b->family == 4 ? AF_INET : AF_INET6, b->addr, text, sizeof(text));
		fprintf(f, "add element %s { %s timeout %llums }\n", a->set[b->family == 6], text,
			(unsigned long long)((b->until - now + 999999) / 1000000));
	}
	int rc = fclose(f) == 0 ? run(a, cmd, err, errlen) : (error_set(err, errlen, "[action]: out of memory"), -1);
	free(cmd);
	return rc < 0 ? -1 : missing;
}

/* ---- the interface ---- */

struct set_action *set_action_open(const struct set_action_options *o, char *err, size_t errlen)
{
	struct set_action *a = calloc(1, sizeof(*a));
	char cmd[300];

	if (a == NULL || hash_key_random(&a->secret, HASH_XXH3) < 0 || (a->nft = nft_ctx_new(NFT_CTX_DEFAULT)) == NULL ||
	    (a->sent = calloc(o->rate, sizeof(*a->sent))) == NULL ||
	    (a->slots = calloc(FIRST_SLOTS, sizeof(*a->slots))) == NULL) {
		error_set(err, errlen, "[action]: out of memory");
		set_action_close(a);
		return NULL;
	}
	a->nslots = FIRST_SLOTS;
	nft_ctx_buffer_output(a->nft);
	nft_ctx_buffer_error(a->nft);
	a->timeout = o->timeout;
	a->rate = o->rate;
	a->priority = o->priority;
	a->remove_at_stop = o->remove_at_stop;
	if ((a->protect = protect_new(o->protect, err, errlen)) == NULL) {
		set_action_close(a);
		return NULL;
	}
	bool ok = true;
	if (o->table) {
		ok = (a->table = strdup(o->table)) != NULL && asprintf(&a->set[0], "inet %s blocked4", o->table) >= 0 &&
		     asprintf(&a->set[1], "inet %s blocked6", o->table) >= 0;
	} else {
		ok = (!o->set4 || (a->set[0] = strdup(o->set4))) && (!o->set6 || (a->set[1] = strdup(o->set6)));
	}
	if (!ok) {
		error_set(err, errlen, "[action]: out of memory");
		set_action_close(a);
		return NULL;
	}
	if (a->table) {
		adopt(a, 4);
		adopt(a, 6);
		if (make_table(a, err, errlen) < 0) {
			free(a->table); /* nothing of ours to delete */
			a->table = NULL;
			set_action_close(a);
			return NULL;
		}
		return a;
	}
	for (int i = 0; i < 2; i++) {
		if (a->set[i] == NULL)
			continue;
		snprintf(cmd, sizeof(cmd), "list set %s", a->set[i]);
		if (run(a, cmd, err, errlen) < 0) {
			set_action_close(a);
			return NULL;
		}
	}
	return a;
}

void set_action_close(struct set_action *a)
{
	char cmd[200], err[300];

	if (a == NULL)
		return;
	if (a->table && a->nft && a->remove_at_stop) {
		snprintf(cmd, sizeof(cmd), "delete table inet %s", a->table);
		run(a, cmd, err, sizeof(err));
	}
	if (a->nft)
		nft_ctx_free(a->nft);
	free(a->set[0]);
	free(a->set[1]);
	free(a->table);
	free(a->sent);
	free(a->slots);
	protect_free(a->protect);
	free(a);
}

int set_action_block(struct set_action *a, const uint8_t *addr, int family, char *err, size_t errlen)
{
	const char *set = a->set[family == 6];
	char text[INET6_ADDRSTRLEN], cmd[400];
	uint64_t now = now_ns();

	if (set == NULL)
		return 0;
	if (protect_holds(a->protect, addr, family)) {
		a->st.protected++;
		inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
		if (!a->protected_said)
			error_set(err, errlen, "[action]: %s is the host's own, loopback or in [action] protect: never blocked (counted: set_action.protected)",
				  text);
		a->protected_said = true;
		return 0;
	}
	const struct blocked *b = &a->slots[slot_of(a, addr, family)];
	if (b->until > now) {
		a->st.repeated++;
		return 0;
	}
	if (!within_rate(a, now)) {
		a->st.rate_limited++;
		return 0;
	}
	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
	snprintf(cmd, sizeof(cmd), "add element %s { %s timeout %us }", set, text, a->timeout);
	if (run(a, cmd, err, errlen) < 0) {
		a->st.errors++;
		return -1;
	}
	a->st.added++;
	if (remember(a, addr, family, now + (uint64_t)a->timeout * NS, now) < 0) {
		error_set(err, errlen, "[action]: out of memory for the addresses blocked; %s may be sent again", text);
		return -1;
	}
	return 1;
}

int set_action_unblock(struct set_action *a, const uint8_t *addr, int family, char *err, size_t errlen)
{
	char text[INET6_ADDRSTRLEN], cmd[400];
	size_t i = slot_of(a, addr, family);

	if (a->slots[i].until <= now_ns())
		return 0;
	free_slot(a, i);
	a->st.unblocked++;
	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
	snprintf(cmd, sizeof(cmd), "delete element %s { %s }", a->set[family == 6], text);
	return run(a, cmd, err, errlen) < 0 ? -1 : 1;
}

int set_action_check(struct set_action *a, char *err, size_t errlen)
{
	sweep(a, now_ns());
	if (++a->host_reads % ELEMENTS_CHECKED_EVERY == 0)
		protect_read_host(a->protect); /* addresses come and go (DHCP, a new interface) */
	if (a->table == NULL)
		return 0;
	/* Looked at twice before it is made again: a listing taken while the sets fill can come back short. */
	if (!table_there(a) && !table_there(a)) {
		if (make_table(a, err, errlen) < 0)
			return -1;
		a->st.restored++;
		return 1;
	}
	if (++a->checks % ELEMENTS_CHECKED_EVERY != 1)
		return 0;
	long put_back = put_back_missing(a, err, errlen);
	if (put_back <= 0)
		return put_back < 0 ? -1 : 0;
	a->st.restored++;
	return 1;
}

int set_action_foreach(const struct set_action *a, set_action_cb cb, void *ctx)
{
	uint64_t now = now_ns();
	int rc = 0;

	for (size_t i = 0; i < a->nslots && rc == 0; i++)
		if (a->slots[i].until > now)
			rc = cb(ctx, a->slots[i].addr, a->slots[i].family, (unsigned)((a->slots[i].until - now + NS - 1) / NS));
	return rc;
}

void set_action_stats(const struct set_action *a, struct set_action_stats *out)
{
	uint64_t now = now_ns();

	*out = a->st;
	out->blocked = 0;
	for (size_t i = 0; i < a->nslots; i++)
		out->blocked += a->slots[i].until > now;
}
