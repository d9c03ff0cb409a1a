/* action_mirror.c - the dropping and pass lists' addresses and nets, as nftables elements of bloomd's table. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "action_mirror.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "action_batch.h"
#include "action_protect.h"
#include "arena.h"
#include "check.h"
#include "keytable.h"

#define ELEMENTS_A_STATEMENT 4096
#define SETS (SET_MIRROR_KINDS * 4)

static const char *const set_names[SETS] = {
	"listed4", "listednets4", "listed6", "listednets6", "passed4", "passednets4", "passed6", "passednets6",
	"exempt4", "exemptnets4", "exempt6", "exemptnets6",
};

struct mirror_key {
	uint8_t kind, family, prefix, nets;
	uint8_t addr[16];
};

/* An address or net: wanted (until), and what the kernel was told (told_until). */
struct mirrored {
	struct mirror_key key;
	uint32_t until, told_until;   /* Unix seconds; 0: no time limit */
	uint8_t wanted, told, in, mark;
	uint8_t retell;               /* told, but whether the kernel still has it is unknown: added again (a no-op if there) */
	uint8_t pass_wanted;          /* a net: wanted when the nets' pass under way began (what it works from) */
};

/*
 * The settle under way, a step at a time: every address (after a sweep),
 * the addresses changed, or the nets of some sets, first their deletions
 * (PASS_NETS_OUT: an interval added must not meet one on its way out) then
 * their additions (PASS_NETS_IN).
 */
enum pass_kind { PASS_NONE, PASS_ADDRESSES, PASS_CHANGED, PASS_NETS_OUT, PASS_NETS_IN };

struct pass {
	enum pass_kind kind;
	size_t at;                    /* the slot (or the changed address) looked at next */
	size_t slots;                 /* the table's slots when the walk began: more, and it begins again */
	unsigned sets;                /* PASS_NETS_*: by set index, those whose nets are settled */
};

struct action_mirror {
	char *table;
	struct keytable *addrs, *nets; /* struct mirrored: apart, so that the nets' passes walk only the nets */
	struct mirror_key *dirty;     /* addresses changed, settled after the pass under way */
	size_t ndirty, dirty_cap;
	bool all_dirty;               /* a sweep: every address to be looked at by the next pass */
	unsigned nets_dirty;          /* by set index: its nets' cover to be worked out again by the next pass */
	unsigned nets_retold, nets_flushed; /* by set index: told again (flushed) before the next pass over them */
	uint8_t sweep_mark;
	struct pass pass;
	const struct action_protect *protect; /* what no list drops (the accept rules keep it): counted when listed */
	uint64_t protected_listed;    /* listed addresses it holds, each time one was put (a decision for the resolver) */
	char first_protected[64];     /* the first of them, to be logged once */
};

static unsigned set_index(unsigned kind, int family, bool nets)
{
	return kind * 4 + (family == 6) * 2 + nets;
}

const char *action_mirror_set_name(enum action_mirror_kind kind, int family, bool nets)
{
	return set_names[set_index(kind, family, nets)];
}

void action_mirror_declare(FILE *f)
{
	for (unsigned i = 0; i < SETS; i++)
		fprintf(f, "  set %s { type %s; flags %stimeout; }\n", set_names[i], (i & 2) ? "ipv6_addr" : "ipv4_addr",
			(i & 1) ? "interval, " : "");
}

struct action_mirror *action_mirror_new(const char *table)
{
	struct action_mirror *m = calloc(1, sizeof(*m));

	if (m == NULL || (m->table = strdup(table)) == NULL ||
	    (m->addrs = keytable_new(sizeof(struct mirrored), sizeof(struct mirror_key))) == NULL ||
	    (m->nets = keytable_new(sizeof(struct mirrored), sizeof(struct mirror_key))) == NULL) {
		action_mirror_free(m);
		return NULL;
	}
	return m;
}

void action_mirror_free(struct action_mirror *m)
{
	if (m == NULL)
		return;
	keytable_free(m->addrs);
	keytable_free(m->nets);
	free(m->dirty);
	free(m->table);
	free(m);
}

static struct mirror_key key_of(unsigned kind, const uint8_t *addr, int family, unsigned prefix)
{
	unsigned bits = family == 4 ? 32 : 128;
	struct mirror_key k = { .kind = (uint8_t)kind, .family = (uint8_t)family, .prefix = (uint8_t)prefix };

	k.nets = prefix < bits;
	memcpy(k.addr, addr, family == 4 ? 4 : 16);
	return k;
}

static struct keytable *table_of(const struct action_mirror *m, const struct mirror_key *k)
{
	return k->nets ? m->nets : m->addrs;
}

static int note_dirty(struct action_mirror *m, const struct mirror_key *k)
{
	if (k->nets) {
		m->nets_dirty |= 1u << set_index(k->kind, k->family, true);
		return 0;
	}
	if (m->all_dirty)
		return 0;
	if (array_grow((void **)&m->dirty, &m->dirty_cap, m->ndirty + 1, sizeof(*m->dirty)) < 0)
		return -1;
	m->dirty[m->ndirty++] = *k;
	return 0;
}

int action_mirror_put(struct action_mirror *m, enum action_mirror_kind kind, const uint8_t *addr, int family, unsigned prefix,
		   uint64_t until)
{
	struct mirror_key k = key_of(kind, addr, family, prefix);
	bool added;
	struct mirrored *r = keytable_put(table_of(m, &k), &k, &added);

	if (r == NULL)
		return -1;
	/* An end past what 32 bits of Unix time hold (February 2106): no timeout in the kernel, bloomd removes it. */
	uint32_t until32 = until > UINT32_MAX ? 0 : (uint32_t)until;

	r->mark = m->sweep_mark;
	if (r->wanted && r->until == until32)
		return 0;
	if (!r->wanted && kind == SET_MIRROR_LISTED && !k.nets && m->protect && action_protect_holds(m->protect, addr, family)) {
		if (m->protected_listed++ == 0) /* in the set still: the protected accept rules come before its drop */
			inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, m->first_protected, sizeof(m->first_protected));
	}
	r->wanted = 1;
	r->until = until32;
	return note_dirty(m, &k);
}

void action_mirror_drop(struct action_mirror *m, enum action_mirror_kind kind, const uint8_t *addr, int family, unsigned prefix)
{
	struct mirror_key k = key_of(kind, addr, family, prefix);
	struct mirrored *r = keytable_find(table_of(m, &k), &k);

	if (r == NULL || !r->wanted)
		return;
	r->wanted = 0;
	if (note_dirty(m, &k) < 0)
		m->all_dirty = true; /* no room to say which: every one is looked at */
}

void action_mirror_sweep_begin(struct action_mirror *m)
{
	m->sweep_mark++;
	m->all_dirty = true; /* what the sweep puts is looked at whole by the next pass */
}

static int unmark_unput(void *ctx, void *rec)
{
	struct mirrored *r = rec;
	struct action_mirror *m = ctx;

	if (r->mark != m->sweep_mark)
		r->wanted = 0;
	return 0;
}

void action_mirror_sweep_end(struct action_mirror *m)
{
	keytable_each(m->addrs, unmark_unput, m);
	keytable_each(m->nets, unmark_unput, m);
	m->nets_dirty = ~0u;
}

/* ---- writing nft's commands ---- */

/* A set's additions, gathered: nft reads a statement of 4096 elements in the time it takes one of a single element. */
struct additions {
	char *text;
	size_t len;
	FILE *f;                   /* NULL until the first */
	unsigned n;
};

struct writer {
	FILE *f;
	struct action_batch *batch;   /* the elements, if not f */
	bool failed;               /* out of memory for the batch or the additions */
	const char *table;
	uint64_t now;
	struct additions adds[SETS]; /* by set index: written to f after the deletions, at the end */
};

/* Each set's additions to f, in statements of ELEMENTS_A_STATEMENT, after whatever was written there. */
static void close_statements(struct writer *w)
{
	for (unsigned i = 0; i < SETS; i++) {
		struct additions *a = &w->adds[i];
		if (a->f == NULL)
			continue;
		fputs(" }\n", a->f);
		w->failed |= fclose(a->f) != 0 || fwrite(a->text, 1, a->len, w->f) != a->len;
		free(a->text);
		*a = (struct additions){ 0 };
	}
}

static void element_text(const struct mirror_key *k, char *out, size_t outlen)
{
	inet_ntop(k->family == 4 ? AF_INET : AF_INET6, k->addr, out, (socklen_t)outlen);
	if (k->nets)
		snprintf(out + strlen(out), outlen - strlen(out), "/%u", k->prefix);
}

static uint64_t seconds_left(const struct writer *w, const struct mirrored *r)
{
	return r->until == 0 ? 0 : r->until > w->now + 1 ? r->until - w->now : 1;
}

static void write_add(struct writer *w, const struct mirrored *r)
{
	char text[INET6_ADDRSTRLEN + 8];
	int set = (int)set_index(r->key.kind, r->key.family, r->key.nets);

	if (w->batch) {
		unsigned alen = r->key.family == 4 ? 4 : 16;
		w->failed |= (r->key.nets ? action_batch_add_net(w->batch, set_names[set], r->key.addr, alen, r->key.prefix,
							     seconds_left(w, r))
					  : action_batch_add(w->batch, set_names[set], r->key.addr, alen, seconds_left(w, r))) < 0;
		return;
	}
	struct additions *a = &w->adds[set];
	if (a->f == NULL && (a->f = open_memstream(&a->text, &a->len)) == NULL) {
		w->failed = true;
		return;
	}
	if (a->n % ELEMENTS_A_STATEMENT == 0)
		fprintf(a->f, "%sadd element inet %s %s { ", a->n ? " }\n" : "", w->table, set_names[set]);
	else
		fputs(", ", a->f);
	a->n++;
	element_text(&r->key, text, sizeof(text));
	fputs(text, a->f);
	if (r->until)
		fprintf(a->f, " timeout %s", action_timeout_text(seconds_left(w, r) * 1000, text, sizeof(text)));
}

/* Deleted whether the kernel still holds it or has let it run out: added first, in the same transaction. */
static void write_delete(struct writer *w, const struct mirrored *r)
{
	char text[INET6_ADDRSTRLEN + 8];
	const char *set = set_names[set_index(r->key.kind, r->key.family, r->key.nets)];

	if (w->batch) {
		unsigned alen = r->key.family == 4 ? 4 : 16;
		w->failed |= (r->key.nets ? action_batch_delete_net(w->batch, set, r->key.addr, alen, r->key.prefix)
					  : action_batch_delete(w->batch, set, r->key.addr, alen)) < 0;
		return;
	}
	element_text(&r->key, text, sizeof(text));
	fprintf(w->f, "add element inet %s %s { %s }\ndelete element inet %s %s { %s }\n", w->table, set, text, w->table,
		set, text);
}

/* Whether the kernel's element runs out too early or too late by over a second. */
static bool time_moved(const struct mirrored *r)
{
	if ((r->until == 0) != (r->told_until == 0))
		return true;
	return r->until > r->told_until + 1 || r->told_until > r->until + 1;
}

/* An element's wanted state, in the kernel or not, written; the record gone when neither. */
static void settle_one(struct writer *w, struct mirrored *r, bool in)
{
	if (r->told && (!in || time_moved(r))) {
		write_delete(w, r);
		r->told = 0;
	} else if (r->told && r->retell) {
		write_add(w, r);
	}
	r->retell = 0;
	if (in && !r->told && (r->until == 0 || r->until > w->now)) {
		write_add(w, r);
		r->told = 1;
		r->told_until = r->until;
	}
}

/* ---- the nets of a set: only those no other holds ---- */

static bool held_by_shorter(const struct action_mirror *m, const struct mirror_key *k)
{
	struct mirror_key up = *k;
	unsigned alen = k->family == 4 ? 4 : 16;

	for (int p = k->prefix - 1; p >= 0; p--) {
		unsigned byte = (unsigned)p / 8;
		up.addr[byte] &= (uint8_t)(0xff00u >> (p % 8));
		memset(up.addr + byte + 1, 0, alen - byte - 1);
		up.prefix = (uint8_t)p;
		const struct mirrored *r = keytable_find(m->nets, &up);
		if (r && r->pass_wanted)
			return true;
	}
	return false;
}

struct nets_pass {
	struct action_mirror *m;
	struct writer *w;
};

/* PASS_NETS_OUT: whether each net goes in worked out; those told that no longer do (or whose time moved) out. */
static int settle_net_out(void *ctx, void *rec)
{
	struct nets_pass *p = ctx;
	struct mirrored *r = rec;

	if (!(p->m->pass.sets & (1u << set_index(r->key.kind, r->key.family, true))))
		return 0;
	r->in = r->pass_wanted && !held_by_shorter(p->m, &r->key);
	if (r->told)
		settle_one(p->w, r, r->in); /* one whose time moved goes out and in again, in one transaction */
	return 0;
}

/* PASS_NETS_IN: the nets that go in and are not, in; a record neither wanted nor told, gone. */
static int settle_net_in(void *ctx, void *rec)
{
	struct nets_pass *p = ctx;
	struct mirrored *r = rec;

	if (!(p->m->pass.sets & (1u << set_index(r->key.kind, r->key.family, true))))
		return 0;
	if (!r->told)
		settle_one(p->w, r, r->in && r->wanted);
	return !r->wanted && !r->told;
}

static int settle_address(void *ctx, void *rec)
{
	struct writer *w = ctx;
	struct mirrored *r = rec;

	settle_one(w, r, r->wanted);
	return !r->wanted && !r->told;
}

/*
 * A nets' pass works from what was wanted when it began: a net put between
 * its steps might otherwise go in beside one that holds it (each looked
 * at before the other changed). What changes meanwhile, the next pass
 * settles.
 */
static int begin_nets_pass(void *ctx, void *rec)
{
	const struct action_mirror *m = ctx;
	struct mirrored *r = rec;

	r->pass_wanted = r->wanted && (m->pass.sets & (1u << set_index(r->key.kind, r->key.family, true)));
	return 0;
}

/* The next pass begun, from what is dirty; false when there is none (in step). */
static bool begin_pass(struct action_mirror *m)
{
	struct pass *p = &m->pass;

	*p = (struct pass){ PASS_NONE, 0, 0, 0 };
	if (m->all_dirty) {
		p->kind = PASS_ADDRESSES;
		p->slots = keytable_slots(m->addrs);
		m->all_dirty = false;
		m->ndirty = 0; /* this pass sees them */
	} else if (m->ndirty > 0) {
		p->kind = PASS_CHANGED;
	} else if (m->nets_dirty) {
		p->kind = PASS_NETS_OUT;
		p->slots = keytable_slots(m->nets);
		p->sets = m->nets_dirty;
		m->nets_dirty = 0;
		m->nets_retold &= ~p->sets; /* this pass tells them: what is lost after it begins is told by the next */
		m->nets_flushed &= ~p->sets;
		keytable_each(m->nets, begin_nets_pass, m);
	}
	return p->kind != PASS_NONE;
}

/* A walk of table from the pass's slot, for at most *budget slots; whether it is done. */
static bool walk(struct pass *p, struct keytable *t, keytable_cb cb, void *ctx, size_t *budget)
{
	size_t from = p->at;

	if (keytable_slots(t) != p->slots) { /* grown: every record moved */
		p->slots = keytable_slots(t);
		from = p->at = 0;
	}
	bool done = keytable_each_at(t, &p->at, *budget, cb, ctx) == 1;
	*budget -= p->at - from < *budget ? p->at - from : *budget;
	return done;
}

/* The changed addresses from the pass's place, at most *budget of them; whether all are settled. */
static bool settle_changed(struct action_mirror *m, struct writer *w, size_t *budget)
{
	for (; m->pass.at < m->ndirty && *budget > 0; m->pass.at++, --*budget) {
		struct mirrored *r = keytable_find(m->addrs, &m->dirty[m->pass.at]);
		if (r && settle_address(w, r))
			keytable_remove(m->addrs, r);
	}
	if (m->pass.at < m->ndirty)
		return false;
	m->ndirty = 0;
	return true;
}

/* One step of the pass under way (one begun if none is); 1 if more remain, 0 when in step. */
static int step(struct action_mirror *m, struct writer *w, size_t *budget)
{
	struct nets_pass np = { m, w };
	bool done = false;

	if (m->pass.kind == PASS_NONE && !begin_pass(m))
		return 0;
	switch (m->pass.kind) {
	case PASS_ADDRESSES:
		done = walk(&m->pass, m->addrs, settle_address, w, budget);
		break;
	case PASS_CHANGED:
		done = settle_changed(m, w, budget);
		break;
	case PASS_NETS_OUT:
		if (walk(&m->pass, m->nets, settle_net_out, &np, budget)) {
			m->pass.kind = PASS_NETS_IN;
			m->pass.at = 0;
		}
		break;
	case PASS_NETS_IN:
		done = walk(&m->pass, m->nets, settle_net_in, &np, budget);
		break;
	case PASS_NONE:
		break;
	}
	if (done) {
		m->pass.kind = PASS_NONE;
		close_statements(w); /* a pass's additions before the next pass's deletions */
	}
	return 1;
}

int action_mirror_settle(struct action_mirror *m, FILE *f, struct action_batch *batch, uint64_t now, size_t records)
{
	struct writer w = { .f = f, .batch = batch, .table = m->table, .now = now };
	size_t budget = records ? records : 1;
	int more = 1;

	while (budget > 0 && (more = step(m, &w, &budget)) == 1)
		;
	if (more == 1 && m->pass.kind == PASS_NONE && !m->all_dirty && m->ndirty == 0 && m->nets_dirty == 0)
		more = 0;
	close_statements(&w);
	return (f && ferror(f)) || w.failed ? -1 : more;
}

bool action_mirror_syncing(const struct action_mirror *m)
{
	return m->pass.kind != PASS_NONE || m->all_dirty || m->ndirty > 0 || m->nets_dirty;
}

/* Every record marked by mark, and the pass under way given up: the next settles look at all of them. */
static void settle_all_again(struct action_mirror *m, keytable_cb mark)
{
	keytable_each(m->addrs, mark, NULL);
	keytable_each(m->nets, mark, NULL);
	m->pass.kind = PASS_NONE;
	m->all_dirty = true;
	m->ndirty = 0;
	m->nets_dirty = ~0u;
}

static int mark_retell(void *ctx, void *rec)
{
	struct mirrored *r = rec;

	(void)ctx;
	r->retell = r->told; /* still told: one no longer wanted goes out (a net before one that holds it comes in) */
	return 0;
}

void action_mirror_retell(struct action_mirror *m)
{
	settle_all_again(m, mark_retell);
}

static int forget_told(void *ctx, void *rec)
{
	(void)ctx;
	((struct mirrored *)rec)->told = 0;
	return 0;
}

void action_mirror_write_all(struct action_mirror *m, FILE *f, uint64_t now)
{
	settle_all_again(m, forget_told);
	while (action_mirror_settle(m, f, NULL, now, SIZE_MAX) == 1)
		;
}

struct set_told {
	unsigned set;
	bool flushed;
};

static int retell_net(void *ctx, void *rec)
{
	const struct set_told *t = ctx;
	struct mirrored *r = rec;

	if (set_index(r->key.kind, r->key.family, true) != t->set)
		return 0;
	if (t->flushed)
		r->told = 0;
	else
		r->retell = r->told;
	return 0;
}

int action_mirror_answer(struct action_mirror *m, const char *set, const uint8_t *addr, int family, bool added,
		      struct action_batch *batch, uint64_t now)
{
	for (unsigned i = 0; i < SETS; i++) {
		if (strcmp(set, set_names[i]) != 0)
			continue;
		if (i & 1) { /* an interval set's: its nets told again whole, after a flush if another added to it */
			struct set_told t = { i, added };
			if ((added ? m->nets_flushed : m->nets_retold) & (1u << i))
				return 1; /* already, for an earlier element of the same change */
			if (added && action_batch_flush(batch, set) < 0)
				return -1;
			keytable_each(m->nets, retell_net, &t);
			m->nets_dirty |= 1u << i;
			m->nets_retold |= 1u << i;
			m->nets_flushed |= added ? 1u << i : 0;
			return 1;
		}
		struct mirror_key k = key_of(i / 4, addr, family, family == 4 ? 32 : 128);
		struct mirrored *r = keytable_find(m->addrs, &k);
		bool there = r && r->told && (r->told_until == 0 || r->told_until > now);
		if (!added && there) {
			r->retell = 1;
			return note_dirty(m, &k) < 0 ? -1 : 1;
		}
		if (added && !there)
			return action_batch_delete(batch, set, addr, family == 4 ? 4 : 16) < 0 ? -1 : 1;
		return 0;
	}
	return 0;
}

static int count_one(void *ctx, void *rec)
{
	struct action_mirror_counts *out = ctx;
	const struct mirrored *r = rec;

	out->elements[r->key.kind] += r->told;
	out->hidden += r->key.nets && r->wanted && !r->told;
	return 0;
}

void action_mirror_protect(struct action_mirror *m, const struct action_protect *p)
{
	m->protect = p;
}

const char *action_mirror_first_protected(const struct action_mirror *m)
{
	return m->protected_listed ? m->first_protected : NULL;
}

void action_mirror_counts(const struct action_mirror *m, struct action_mirror_counts *out)
{
	memset(out, 0, sizeof(*out));
	out->protected_listed = m->protected_listed;
	/* counting changes nothing */
	keytable_each((struct keytable *)m->addrs, count_one, out);
	keytable_each((struct keytable *)m->nets, count_one, out);
}
