/* action.c - addresses that matched, added to an nftables set with a timeout. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "action.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action_batch.h"
#include "action_mirror.h"
#include "action_monitor.h"
#include "action_protect.h"
#include "action_shape.h"
#include "check.h"
#include "entry.h"
#include "error.h"
#include "keytable.h"

#define NS 1000000000ull
#define HOST_READ_EVERY 10         /* checks: the host's addresses read anew */
#define ELEMENTS_A_STATEMENT 4096
#define SETTLE_SLICE_NS (10 * 1000000ull) /* the loop's time a settle takes before it lets others in */
#define SETTLE_STEP_SLOTS 4096     /* the mirror's records' slots looked at in one step */
#define ELEMENTS_A_TRANSACTION 8192 /* the lists' elements' changes committed together (about, at most) */

/* An address in the set: until is when its element runs out (CLOCK_MONOTONIC ns). */
struct blocked_key {
	uint8_t family, addr[16];
};

struct blocked {
	struct blocked_key key;
	uint64_t until;
};

struct action {
	struct nft_ctx *nft;
	char *set[2];              /* [0] IPv4, [1] IPv6: "inet bloomd blocked4" */
	char *table;               /* manage: "bloomd"; NULL: the sets are the operator's */
	bool remove_at_stop;
	int priority;
	unsigned timeout, rate;
	uint64_t *sent;            /* when the last rate additions went out, a ring */
	unsigned nsent, oldest;
	struct keytable *slots;    /* struct blocked, by address */
	struct action_protect *protect;   /* never blocked: the host's own, loopback, [action] protect */
	bool protected_said;       /* the first address passed over is logged */
	unsigned checks;           /* action_check's calls: the host's addresses are read every tenth */
	struct action_mirror *mirror; /* manage: the lists' addresses and nets */
	struct action_monitor *watch;   /* manage: what others change in the table */
	struct action_shape *shape;   /* manage: the table's sets, chains and rules as made (action_check compares) */
	struct action_batch *batch;   /* manage: the blocked sets' elements, changed one by one */
	struct action_batch *mirror_batch; /* manage: the lists' elements, changed by action_settle's steps */
	uint32_t generation;       /* manage: the kernel's, read before a commit of bloomd's own */
	bool missed;               /* manage: another committed while the watch was paused: everything told again */
	bool batches_unheard;      /* manage: the kernel drops the batches' own announcements: no pause around them */
	struct action_stats st;
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

static struct blocked_key key_of(const uint8_t *addr, int family)
{
	struct blocked_key k = { .family = (uint8_t)family };

	memcpy(k.addr, addr, addr_len(family));
	return k;
}

static struct blocked *find(const struct action *a, const uint8_t *addr, int family)
{
	struct blocked_key k = key_of(addr, family);

	return keytable_find(a->slots, &k);
}

static int forget_run_out(void *ctx, void *rec)
{
	return ((struct blocked *)rec)->until <= *(const uint64_t *)ctx;
}

/* Forget the addresses whose elements have run out. */
static void sweep(struct action *a, uint64_t now)
{
	keytable_each(a->slots, forget_run_out, &now);
}

/* Remember addr until until; -1 without memory. */
static int remember(struct action *a, const uint8_t *addr, int family, uint64_t until)
{
	struct blocked_key k = key_of(addr, family);
	bool added;
	struct blocked *b = keytable_put(a->slots, &k, &added);

	if (b == NULL)
		return -1;
	b->until = until;
	return 0;
}

/* ---- the rate ---- */

/* Whether one more addition keeps to rate in every one-second window; if so, it is counted. */
static bool within_rate(struct action *a, uint64_t now)
{
	BLOOMD_CHECK(a->nsent <= a->rate && a->oldest < a->rate);
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
static int run(struct action *a, const char *cmd, char *err, size_t errlen)
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
static json_t *run_json(struct action *a, const char *cmd, bool terse, char *err, size_t errlen)
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

/*
 * Around a commit of bloomd's own the watch is paused: it need not hear of
 * it. Another's commit meanwhile goes unheard too, so the kernel's
 * generation is read on both sides: moved by more than the generations
 * bloomd's own transaction made, and everything is told again (a->missed).
 * A transaction that changes nothing (an element added again that is
 * there) makes none: counting it as one would hide another's commit.
 */
static void pause_watch(struct action *a)
{
	if (a->watch == NULL)
		return;
	if (action_batch_generation(a->batch, &a->generation) < 0)
		a->missed = true;
	action_monitor_pause(a->watch);
}

static void resume_watch(struct action *a, unsigned made)
{
	uint32_t now;

	if (a->watch == NULL)
		return;
	action_monitor_resume(a->watch);
	if (action_batch_generation(a->batch, &now) < 0 || now - a->generation > made)
		a->missed = true;
}

/*
 * Run cmd, a commit of bloomd's own: the watch, paused meanwhile, does not
 * hear of it. nft does not say whether its transaction made a generation,
 * so cmd must always change the table (it makes it, or deletes it); the
 * changes that may be none go by a batch.
 */
static int commit(struct action *a, const char *cmd, char *err, size_t errlen)
{
	pause_watch(a);
	int rc = run(a, cmd, err, errlen);
	resume_watch(a, rc == 0);
	return rc;
}

/*
 * A batch's elements committed: 0, or -1 (err). The watch hears on, where
 * the kernel drops the batch's own announcements (action_monitor_ignore):
 * another's commit meanwhile is heard for what it is, a neighbour's to its
 * own table or a change to this one. Else it is paused meanwhile.
 */
static int commit_batch(struct action *a, struct action_batch *batch, char *err, size_t errlen)
{
	if (!action_batch_pending(batch))
		return 0;
	if (a->batches_unheard)
		return action_batch_commit(batch, err, errlen) < 0 ? -1 : 0;
	pause_watch(a);
	int rc = action_batch_commit(batch, err, errlen);
	resume_watch(a, rc == 1);
	return rc < 0 ? -1 : 0;
}

/* addr into or out of a blocked set: by the batch (manage), else an nft command to the operator's set. */
static int change_blocked(struct action *a, bool add, const uint8_t *addr, int family, char *err, size_t errlen)
{
	char text[INET6_ADDRSTRLEN], cmd[400], timeout[64];

	if (a->batch) {
		const char *set = family == 4 ? "blocked4" : "blocked6";
		int rc = add ? action_batch_add(a->batch, set, addr, addr_len(family), a->timeout)
			     : action_batch_delete(a->batch, set, addr, addr_len(family));
		if (rc < 0)
			error_set(err, errlen, "[action]: out of memory");
		return rc < 0 ? -1 : commit_batch(a, a->batch, err, errlen);
	}
	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
	if (add)
		snprintf(cmd, sizeof(cmd), "add element %s { %s timeout %s }", a->set[family == 6], text,
			 action_timeout_text((uint64_t)a->timeout * 1000, timeout, sizeof(timeout)));
	else
		snprintf(cmd, sizeof(cmd), "delete element %s { %s }", a->set[family == 6], text);
	return commit(a, cmd, err, errlen);
}

/* The text a FILE of commands was written to, run as one transaction; -1 (err) out of memory or refused. */
static int commit_written(struct action *a, FILE *f, char **cmd, char *err, size_t errlen)
{
	int rc = fclose(f) == 0 ? ((*cmd)[0] ? commit(a, *cmd, err, errlen) : 0) /* fclose sets *cmd */
				: (error_set(err, errlen, "[action]: out of memory"), -1);
	free(*cmd);
	return rc;
}

/* "add element SET { A timeout Nms, ... }" for the remembered addresses of family, 4096 a statement. */
struct element_writer {
	const struct action *a;
	FILE *f;
	int family;
	uint64_t now;
	unsigned n;
};

static int put_element(void *ctx, void *rec)
{
	struct element_writer *w = ctx;
	const struct blocked *b = rec;
	char text[INET6_ADDRSTRLEN];

	if (b->until <= w->now || b->key.family != w->family)
		return 0;
	if (w->n % ELEMENTS_A_STATEMENT == 0)
		fprintf(w->f, "%sadd element %s { ", w->n ? " }\n" : "", w->a->set[w->family == 6]);
	else
		fputs(", ", w->f);
	inet_ntop(w->family == 4 ? AF_INET : AF_INET6, b->key.addr, text, sizeof(text));
	fprintf(w->f, "%s timeout ", text);
	fputs(action_timeout_text((b->until - w->now + 999999) / 1000000, text, sizeof(text)), w->f);
	w->n++;
	return 0;
}

static void put_elements(struct action *a, int family, uint64_t now, FILE *f)
{
	struct element_writer w = { a, f, family, now, 0 };

	keytable_each(a->slots, put_element, &w);
	if (w.n)
		fputs(" }\n", f);
}

/* Each of the nets never blocked (protected4 and 6) once, those another holds left out: intervals must not overlap. */
typedef void (*protected_cb)(void *ctx, const uint8_t *addr, size_t alen, unsigned prefix);

static void each_protected(const struct action *a, protected_cb cb, void *ctx)
{
	size_t n;
	const struct entry_cidr *nets = action_protect_nets(a->protect, &n);

	for (size_t i = 0; i < n; i++) {
		size_t alen = nets[i].len - 1u;
		bool held = false;
		for (size_t j = 0; j < n && !held; j++)
			held = j != i && nets[j].len == nets[i].len && nets[j].key[0] <= nets[i].key[0] &&
			       entry_net_holds(nets[j].key, nets[i].key + 1, alen) && (nets[j].key[0] < nets[i].key[0] || j < i);
		if (!held)
			cb(ctx, nets[i].key + 1, alen, nets[i].key[0]);
	}
}

struct protected_writer {
	const struct action *a;
	FILE *f;
};

static void write_protected(void *ctx, const uint8_t *addr, size_t alen, unsigned prefix)
{
	const struct protected_writer *w = ctx;
	char text[INET6_ADDRSTRLEN];

	inet_ntop(alen == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
	fprintf(w->f, "add element inet %s protected%d { %s/%u }\n", w->a->table, alen == 4 ? 4 : 6, text, prefix);
}

static void put_protected(const struct action *a, FILE *f)
{
	struct protected_writer w = { a, f };

	each_protected(a, write_protected, &w);
}

/*
 * A chain's rules, all accepts before any drop: a packet to or from an
 * exempt address (pass = packet) passes; an address blocked on a match, or
 * listed (unless it is the host's, protected, or passed), is dropped.
 */
static void put_chain(FILE *f, const char *hook, int priority, bool source_too)
{
	static const char *const side[2] = { "saddr", "daddr" };

	fprintf(f, "  chain %s { type filter hook %s priority %d; policy accept;\n", hook, hook, priority);
	for (int s = source_too ? 0 : 1; s < 2; s++)
		for (int v = 4; v <= 6; v += 2)
			fprintf(f, "    %s %s @exempt%d accept; %s %s @exemptnets%d accept;\n", v == 4 ? "ip" : "ip6", side[s], v,
				v == 4 ? "ip" : "ip6", side[s], v);
	for (int s = source_too ? 0 : 1; s < 2; s++)
		for (int v = 4; v <= 6; v += 2) {
			const char *ip = v == 4 ? "ip" : "ip6";
			fprintf(f, "    %s %s @blocked%d counter drop;\n", ip, side[s], v);
			for (int nets = 0; nets < 2; nets++)
				fprintf(f, "    %s %s != @protected%d %s %s != @passed%d %s %s != @passednets%d %s %s @listed%s%d counter drop;\n",
					ip, side[s], v, ip, side[s], v, ip, side[s], v, ip, side[s], nets ? "nets" : "", v);
		}
	fputs("  }\n", f);
}

/*
 * The lists' elements, a statement a line, committed one statement at a
 * time: what the kernel refuses costs its own statement, not the table.
 * The number refused (the first one's error in err).
 */
static unsigned commit_each_statement(struct action *a, char *elements, char *err, size_t errlen)
{
	char why[512];
	unsigned refused = 0;

	for (char *line = elements, *end; line && *line; line = end) {
		end = strchr(line, '\n');
		if (end)
			*end++ = '\0';
		if (commit(a, line, why, sizeof(why)) < 0 && refused++ == 0)
			error_set(err, errlen, "%s", why);
	}
	return refused;
}

/* The table's sets, chains and rules, with the blocked and protected addresses: all but the lists' elements. */
static void put_shape(struct action *a, FILE *f, uint64_t now)
{
	fprintf(f, "add table inet %s\ndelete table inet %s\ntable inet %s {\n", a->table, a->table, a->table);
	fputs("  set blocked4 { type ipv4_addr; flags timeout; }\n  set blocked6 { type ipv6_addr; flags timeout; }\n"
	      "  set protected4 { type ipv4_addr; flags interval; }\n  set protected6 { type ipv6_addr; flags interval; }\n", f);
	action_mirror_declare(f);
	put_chain(f, "prerouting", a->priority, true);
	put_chain(f, "output", a->priority, false);
	fputs("}\n", f);
	put_elements(a, 4, now, f);
	put_elements(a, 6, now, f);
	put_protected(a, f);
}

/*
 * bloomd's table made again in one transaction (whatever was there goes:
 * "add" then "delete" works whether it was there or not), with every
 * address and net it holds, each for the time it has left; its shape kept
 * for action_check. Should the kernel refuse that (not for want of
 * permission), the table is made without the lists' elements, which then
 * go in a statement at a time: 1, the first refusal in err and each
 * counted, if some did not.
 */
static int make_table(struct action *a, char *err, size_t errlen)
{
	char *cmd = NULL, *elements = NULL;
	size_t len, elements_len;
	FILE *f = open_memstream(&cmd, &len), *g = open_memstream(&elements, &elements_len);
	uint64_t now = now_ns();
	unsigned refused = 0;

	if (g)
		action_mirror_write_all(a->mirror, g, (uint64_t)time(NULL));
	if (f == NULL || g == NULL || fclose(g) != 0) {
		if (f)
			fclose(f);
		free(cmd);
		free(elements);
		error_set(err, errlen, "[action]: out of memory");
		return -1;
	}
	put_shape(a, f, now);
	fputs(elements, f);
	if (commit_written(a, f, &cmd, err, errlen) < 0) {
		if (strstr(err, "Operation not permitted") || (f = open_memstream(&cmd, &len)) == NULL) {
			free(elements);
			return -1;
		}
		put_shape(a, f, now);
		if (commit_written(a, f, &cmd, err, errlen) < 0) {
			free(elements);
			return -1;
		}
		refused = commit_each_statement(a, elements, err, errlen);
		a->st.errors += refused;
	}
	free(elements);
	if (action_shape_keep(a->shape, err, errlen) < 0)
		return -1;
	return refused ? 1 : 0;
}

static void write_shape(struct action *a, FILE *f)
{
	put_shape(a, f, now_ns());
}

/* The commands write puts in a FILE, run as one transaction; -1 (err) out of memory or refused. */
static int commit_writing(struct action *a, void (*write)(struct action *a, FILE *f), char *err, size_t errlen)
{
	char *cmd = NULL;
	size_t len;
	FILE *f = open_memstream(&cmd, &len);

	if (f == NULL) {
		error_set(err, errlen, "[action]: out of memory");
		return -1;
	}
	write(a, f);
	return commit_written(a, f, &cmd, err, errlen);
}

/*
 * bloomd's table made again, its shape with the blocked and protected
 * addresses in one transaction, and the lists' elements told again by the
 * settles that follow, a step at a time: a repair that never holds the
 * loop for the lists' size. 0, or -1 (err).
 */
static int remake(struct action *a, char *err, size_t errlen)
{
	action_batch_discard(a->mirror_batch); /* what it held is told again */
	action_batch_discard(a->batch);
	a->missed = false; /* all of it is told again */
	if (commit_writing(a, write_shape, err, errlen) < 0 || action_shape_keep(a->shape, err, errlen) < 0)
		return -1;
	action_mirror_retell(a->mirror);
	return 0;
}

/* The elements of the set of family as nft lists them (JSON; caller frees), or NULL (no such set). */
static json_t *set_elements(struct action *a, int family, json_t **listing, char *err, size_t errlen)
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

/* The addresses a set of bloomd's table holds now (a table left by a bloomd before): remembered. */
static void adopt(struct action *a, int family)
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
		int val_family;
		if (val && left > 0 && entry_parse_ip(val, addr, &val_family) > 0 && val_family == family &&
		    remember(a, addr, family, now + (uint64_t)left * NS) == 0)
			a->st.taken_over++;
	}
	json_decref(listing); /* NULL when there is no such table yet */
}

static void add_counter(void *ctx, const char *set, uint64_t packets, uint64_t bytes)
{
	json_t *out = ctx, *sum = json_object_get(out, set);

	if (set[0] == '\0')
		return;
	if (sum == NULL)
		json_object_set_new(out, set, sum = json_pack("{s:I,s:I}", "packets", (json_int_t)0, "bytes", (json_int_t)0));
	json_object_set_new(sum, "packets", json_integer(json_integer_value(json_object_get(sum, "packets")) + (json_int_t)packets));
	json_object_set_new(sum, "bytes", json_integer(json_integer_value(json_object_get(sum, "bytes")) + (json_int_t)bytes));
}

json_t *action_dropped(struct action *a)
{
	char ignored[300];
	json_t *out = json_object();

	if (a->shape)
		action_shape_counters(a->shape, add_counter, out, ignored, sizeof(ignored));
	return out;
}

/* Whether bloomd's table does what it did when made (a table that cannot be read does not). */
static bool table_there(struct action *a)
{
	char ignored[300];

	return action_shape_same(a->shape, ignored, sizeof(ignored)) == 1;
}

/* ---- what others changed ---- */

/* Each element bloomd knows of, in the set of kind of the other's change, put back or taken out again. */
struct answer {
	struct action *a;
	bool shape_changed;        /* a rule, chain or set, or the table: its shape looked at again */
	bool protected_changed;    /* a protected set's element: those sets written whole again */
	bool failed;               /* out of memory for an answer */
	long answered;
};

static void answer_blocked(struct answer *r, const struct action_monitor_change *c, int family)
{
	const struct blocked *b = find(r->a, c->key, family);
	const char *set = family == 4 ? "blocked4" : "blocked6";
	uint64_t now = now_ns();
	int rc;

	if (!c->added && b && b->until > now + NS)
		rc = action_batch_add(r->a->batch, set, c->key, addr_len(family), (b->until - now) / NS);
	else if (c->added && !(b && b->until > now))
		rc = action_batch_delete(r->a->batch, set, c->key, addr_len(family));
	else
		return;
	r->failed |= rc < 0;
	r->answered++;
}

static void on_change(void *ctx, const struct action_monitor_change *c)
{
	struct answer *r = ctx;
	int family = c->len == 4 ? 4 : 6;

	if (!c->element || (c->len != 4 && c->len != 16)) {
		r->shape_changed = true;
		return;
	}
	if (strncmp(c->set, "blocked", 7) == 0)
		answer_blocked(r, c, family);
	else if (strncmp(c->set, "protected", 9) == 0)
		r->protected_changed = true; /* few elements, written whole */
	else {
		int rc = action_mirror_answer(r->a->mirror, c->set, c->key, family, c->added, r->a->mirror_batch,
					   (uint64_t)time(NULL));
		r->failed |= rc < 0;
		r->answered += rc > 0;
	}
}

struct batch_writer {
	struct action *a;
	uint64_t now;
	bool failed;
};

static void queue_protected(void *ctx, const uint8_t *addr, size_t alen, unsigned prefix)
{
	struct batch_writer *w = ctx;

	w->failed |= action_batch_add_net(w->a->batch, alen == 4 ? "protected4" : "protected6", addr, alen, prefix, 0) < 0;
}

/* The protected sets emptied and filled again, queued in the batch. -1 without memory. */
static int refill_protected(struct action *a)
{
	struct batch_writer w = { a, now_ns(), false };

	w.failed |= action_batch_flush(a->batch, "protected4") < 0 || action_batch_flush(a->batch, "protected6") < 0;
	each_protected(a, queue_protected, &w);
	return w.failed ? -1 : 0;
}

static int queue_blocked(void *ctx, void *rec)
{
	struct batch_writer *w = ctx;
	const struct blocked *b = rec;

	if (b->until > w->now + NS)
		w->failed |= action_batch_add(w->a->batch, b->key.family == 4 ? "blocked4" : "blocked6", b->key.addr,
					   addr_len(b->key.family), (b->until - w->now) / NS) < 0;
	return 0;
}

/*
 * What the table holds unknown (the kernel's announcements lost: a flush of
 * a million elements announces each; or another committed while the watch
 * was paused), its shape as made: the blocked and protected addresses
 * added again (those there stay as they are) over netlink, since nft's own
 * commands read every interval set's elements first; the lists' elements
 * told again by the settles that follow. -1 without memory.
 */
static int retell(struct action *a)
{
	struct batch_writer w = { a, now_ns(), false };

	a->st.lost++;
	a->missed = false;
	keytable_each(a->slots, queue_blocked, &w);
	each_protected(a, queue_protected, &w);
	action_mirror_retell(a->mirror);
	return w.failed ? -1 : 0;
}

/*
 * What others changed, answered: an element of a blocked set put back or
 * taken out again, one by one; the protected sets written whole; the
 * lists' elements told again by the settles that follow (an interval
 * set's whole, flushed first if another added to it); the table made again
 * if its shape is no longer what was made. 1 if something was answered, 0
 * if there was nothing to, -1 (err).
 */
static int answer_changes(struct action *a, char *err, size_t errlen)
{
	struct answer r = { a, false, false, false, 0 };
	int lost = action_monitor_read(a->watch, on_change, &r, err, errlen);
	bool unknown = lost == 1 || a->missed; /* what the table holds */
	bool shape_gone = (unknown || r.shape_changed) && !table_there(a) && !table_there(a);

	if (lost < 0)
		return -1;
	if (r.failed || shape_gone || (r.protected_changed && refill_protected(a) < 0) ||
	    commit_batch(a, a->batch, err, errlen) < 0)
		return remake(a, err, errlen) < 0 ? -1 : 1;
	if (unknown) { /* after the refill: an interval added twice in one transaction could be refused */
		r.answered++;
		if (retell(a) < 0 || commit_batch(a, a->batch, err, errlen) < 0)
			return remake(a, err, errlen) < 0 ? -1 : 1;
	}
	if (commit_batch(a, a->mirror_batch, err, errlen) < 0)
		return remake(a, err, errlen) < 0 ? -1 : 1;
	return r.answered > 0 || r.protected_changed;
}

/* ---- the interface ---- */

static int open_operators_sets(struct action *a, const struct action_options *o, char *err, size_t errlen)
{
	char cmd[300];

	if ((o->set4 && (a->set[0] = strdup(o->set4)) == NULL) || (o->set6 && (a->set[1] = strdup(o->set6)) == NULL)) {
		error_set(err, errlen, "[action]: out of memory");
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "list set %s", a->set[i]);
		if (a->set[i] && run(a, cmd, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* manage: the table taken over (its blocked addresses), the lists' elements told by fill, all made in one transaction. */
static int open_table(struct action *a, const struct action_options *o, char *err, size_t errlen)
{
	if ((a->table = strdup(o->table)) == NULL || asprintf(&a->set[0], "inet %s blocked4", o->table) < 0 ||
	    asprintf(&a->set[1], "inet %s blocked6", o->table) < 0 || (a->mirror = action_mirror_new(o->table)) == NULL) {
		error_set(err, errlen, "[action]: out of memory");
		return -1;
	}
	if ((a->watch = action_monitor_open(o->table, err, errlen)) == NULL ||
	    (a->shape = action_shape_open(o->table, err, errlen)) == NULL ||
	    (a->batch = action_batch_open(o->table, err, errlen)) == NULL ||
	    (a->mirror_batch = action_batch_open(o->table, err, errlen)) == NULL)
		return -1;
	action_mirror_protect(a->mirror, a->protect);
	uint32_t ports[2] = { action_batch_portid(a->batch), action_batch_portid(a->mirror_batch) };
	a->batches_unheard = action_monitor_ignore(a->watch, ports, 2) == 0;
	adopt(a, 4);
	adopt(a, 6);
	if (o->fill && o->fill(o->fill_ctx, a->mirror) < 0) {
		error_set(err, errlen, "[action]: out of memory for the lists' elements");
		return -1;
	}
	int rc = make_table(a, err, errlen);
	if (rc < 0) {
		free(a->table); /* nothing of ours to delete */
		a->table = NULL;
		return -1;
	}
	if (rc == 0)
		err[0] = '\0';
	return 0;
}

struct action *action_open(const struct action_options *o, char *err, size_t errlen)
{
	struct action *a = calloc(1, sizeof(*a));

	if (a == NULL || (a->nft = nft_ctx_new(NFT_CTX_DEFAULT)) == NULL ||
	    (a->sent = calloc(o->rate, sizeof(*a->sent))) == NULL ||
	    (a->slots = keytable_new(sizeof(struct blocked), sizeof(struct blocked_key))) == NULL) {
		error_set(err, errlen, "[action]: out of memory");
		action_close(a);
		return NULL;
	}
	nft_ctx_buffer_output(a->nft);
	nft_ctx_buffer_error(a->nft);
	a->timeout = o->timeout;
	a->rate = o->rate;
	a->priority = o->priority;
	a->remove_at_stop = o->remove_at_stop;
	struct action_protect_options po = { .list = o->protect, .infrastructure = o->protect_infrastructure,
					     .peers = o->peers };
	if ((a->protect = action_protect_new(&po, err, errlen)) == NULL ||
	    (o->table ? open_table(a, o, err, errlen) : open_operators_sets(a, o, err, errlen)) < 0) {
		action_close(a);
		return NULL;
	}
	return a;
}

void action_close(struct action *a)
{
	char cmd[200], err[300];

	if (a == NULL)
		return;
	if (a->table && a->nft && a->remove_at_stop) {
		snprintf(cmd, sizeof(cmd), "delete table inet %s", a->table);
		commit(a, cmd, err, sizeof(err));
	}
	if (a->nft)
		nft_ctx_free(a->nft);
	free(a->set[0]);
	free(a->set[1]);
	free(a->table);
	free(a->sent);
	keytable_free(a->slots);
	action_protect_free(a->protect);
	action_mirror_free(a->mirror);
	action_monitor_close(a->watch);
	action_shape_close(a->shape);
	action_batch_close(a->batch);
	action_batch_close(a->mirror_batch);
	free(a);
}

int action_block(struct action *a, const uint8_t *addr, int family, char *err, size_t errlen)
{
	const char *set = a->set[family == 6];
	char text[INET6_ADDRSTRLEN];
	uint64_t now = now_ns();

	if (set == NULL)
		return 0;
	if (action_protect_holds(a->protect, addr, family)) {
		a->st.protected++;
		inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
		if (!a->protected_said)
			error_set(err, errlen, "[action]: %s is the host's own, loopback, its resolver, gateway or peer, or in [action] protect: never blocked (counted: set_action.protected)",
				  text);
		a->protected_said = true;
		return 0;
	}
	const struct blocked *b = find(a, addr, family);
	if (b && b->until > now) {
		a->st.repeated++;
		return 0;
	}
	if (!within_rate(a, now)) {
		a->st.rate_limited++;
		return 0;
	}
	if (change_blocked(a, true, addr, family, err, errlen) < 0) {
		a->st.errors++;
		return -1;
	}
	a->st.added++;
	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
	if (remember(a, addr, family, now + (uint64_t)a->timeout * NS) < 0) {
		error_set(err, errlen, "[action]: out of memory for the addresses blocked; %s may be sent again", text);
		return -1;
	}
	return 1;
}

int action_unblock(struct action *a, const uint8_t *addr, int family, char *err, size_t errlen)
{
	struct blocked *b = find(a, addr, family);

	if (b == NULL || b->until <= now_ns())
		return 0;
	keytable_remove(a->slots, b);
	a->st.unblocked++;
	return change_blocked(a, false, addr, family, err, errlen) < 0 ? -1 : 1;
}

struct action_mirror *action_lists_mirror(struct action *a)
{
	return a->mirror;
}

int action_settle(struct action *a, char *err, size_t errlen)
{
	uint64_t began = now_ns();

	if (a->mirror == NULL)
		return 0;
	for (;;) {
		int more = action_mirror_settle(a->mirror, NULL, a->mirror_batch, (uint64_t)time(NULL), SETTLE_STEP_SLOTS);
		if (more < 0) { /* out of memory: what was told is unknown */
			a->st.errors++;
			return remake(a, err, errlen) < 0 ? -1 : 1;
		}
		bool slice_over = more == 0 || now_ns() - began >= SETTLE_SLICE_NS;
		if ((slice_over || action_batch_queued(a->mirror_batch) >= ELEMENTS_A_TRANSACTION) &&
		    commit_batch(a, a->mirror_batch, err, errlen) < 0) {
			a->st.errors++;
			return remake(a, err, errlen) < 0 ? -1 : 1; /* the kernel's sets were not as told */
		}
		if (slice_over)
			return more;
	}
}

bool action_syncing(const struct action *a)
{
	return a->mirror && action_mirror_syncing(a->mirror);
}

int action_watch_fd(const struct action *a)
{
	return a->watch ? action_monitor_fd(a->watch) : -1;
}

int action_watched(struct action *a, char *err, size_t errlen)
{
	int rc = a->watch ? answer_changes(a, err, errlen) : 0;

	a->st.restored += rc > 0;
	return rc;
}

int action_check(struct action *a, char *err, size_t errlen)
{
	sweep(a, now_ns());
	bool host_moved = ++a->checks % HOST_READ_EVERY == 0 && action_protect_read_host(a->protect); /* DHCP, a new interface */
	if (a->table == NULL)
		return 0;
	/* Read twice before it is made again: a dump that meets another's transaction half-way can differ. */
	if (!table_there(a) && !table_there(a)) {
		if (remake(a, err, errlen) < 0)
			return -1;
		a->st.restored++;
		return 1;
	}
	if (a->missed) { /* another's commit went unheard: what it changed is put right */
		if (retell(a) < 0 || commit_batch(a, a->batch, err, errlen) < 0)
			return remake(a, err, errlen) < 0 ? -1 : 1;
		a->st.restored++;
		return 1;
	}
	if (host_moved && (refill_protected(a) < 0 || commit_batch(a, a->batch, err, errlen) < 0)) {
		a->st.errors++;
		return remake(a, err, errlen) < 0 ? -1 : 1; /* the protected sets were not as told */
	}
	return 0;
}

struct blocked_walk {
	action_cb cb;
	void *ctx;
	uint64_t now, count;
};

static int walk_blocked(void *ctx, void *rec)
{
	struct blocked_walk *w = ctx;
	const struct blocked *b = rec;

	if (b->until <= w->now)
		return 0;
	w->count++;
	if (w->cb && w->cb(w->ctx, b->key.addr, b->key.family, (unsigned)((b->until - w->now + NS - 1) / NS)))
		return -1;
	return 0;
}

int action_foreach(const struct action *a, action_cb cb, void *ctx)
{
	struct blocked_walk w = { cb, ctx, now_ns(), 0 };

	return keytable_each(a->slots, walk_blocked, &w) < 0 ? 1 : 0; /* the walk changes nothing */
}

void action_stats(const struct action *a, struct action_stats *out)
{
	struct blocked_walk w = { NULL, NULL, now_ns(), 0 };
	struct action_mirror_counts m = { 0 };

	keytable_each(a->slots, walk_blocked, &w);
	if (a->mirror)
		action_mirror_counts(a->mirror, &m);
	*out = a->st;
	out->blocked = w.count;
	out->listed = m.elements[SET_MIRROR_LISTED];
	out->passed = m.elements[SET_MIRROR_PASSED];
	out->exempt = m.elements[SET_MIRROR_EXEMPT];
	out->hidden = m.hidden;
	out->protected_listed = m.protected_listed;
	out->neighbours = a->watch ? action_monitor_neighbours(a->watch) : 0;
}
