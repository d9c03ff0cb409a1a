/* setmirror.c - the dropping and pass lists' addresses and nets, as nftables elements of bloomd's table. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "setmirror.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "keytable.h"
#include "nftbatch.h"

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
};

struct set_mirror {
	char *table;
	struct keytable *recs;
	struct mirror_key *dirty;     /* changed since the last settle */
	size_t ndirty, dirty_cap;
	bool all_dirty;               /* a sweep: every record looked at */
	unsigned nets_dirty;          /* by set index: its nets' cover to be worked out again */
	uint8_t sweep_mark;
};

static unsigned set_index(unsigned kind, int family, bool nets)
{
	return kind * 4 + (family == 6) * 2 + nets;
}

const char *set_mirror_set_name(enum set_mirror_kind kind, int family, bool nets)
{
	return set_names[set_index(kind, family, nets)];
}

void set_mirror_declare(FILE *f)
{
	for (unsigned i = 0; i < SETS; i++)
		fprintf(f, "  set %s { type %s; flags %stimeout; }\n", set_names[i], (i & 2) ? "ipv6_addr" : "ipv4_addr",
			(i & 1) ? "interval, " : "");
}

struct set_mirror *set_mirror_new(const char *table)
{
	struct set_mirror *m = calloc(1, sizeof(*m));

	if (m == NULL || (m->table = strdup(table)) == NULL ||
	    (m->recs = keytable_new(sizeof(struct mirrored), sizeof(struct mirror_key))) == NULL) {
		set_mirror_free(m);
		return NULL;
	}
	return m;
}

void set_mirror_free(struct set_mirror *m)
{
	if (m == NULL)
		return;
	keytable_free(m->recs);
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

static int note_dirty(struct set_mirror *m, const struct mirror_key *k)
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

int set_mirror_put(struct set_mirror *m, enum set_mirror_kind kind, const uint8_t *addr, int family, unsigned prefix,
		   uint64_t until)
{
	struct mirror_key k = key_of(kind, addr, family, prefix);
	bool added;
	struct mirrored *r = keytable_put(m->recs, &k, &added);

	if (r == NULL)
		return -1;
	/* An end past what 32 bits of Unix time hold (February 2106): no timeout in the kernel, bloomd removes it. */
	uint32_t until32 = until > UINT32_MAX ? 0 : (uint32_t)until;

	r->mark = m->sweep_mark;
	if (r->wanted && r->until == until32)
		return 0;
	r->wanted = 1;
	r->until = until32;
	return note_dirty(m, &k);
}

void set_mirror_drop(struct set_mirror *m, enum set_mirror_kind kind, const uint8_t *addr, int family, unsigned prefix)
{
	struct mirror_key k = key_of(kind, addr, family, prefix);
	struct mirrored *r = keytable_find(m->recs, &k);

	if (r == NULL || !r->wanted)
		return;
	r->wanted = 0;
	if (note_dirty(m, &k) < 0)
		m->all_dirty = true; /* no room to say which: every one is looked at */
}

void set_mirror_sweep_begin(struct set_mirror *m)
{
	m->sweep_mark++;
	m->all_dirty = true; /* what the sweep puts is looked at whole at the next settle */
}

static int unmark_unput(void *ctx, void *rec)
{
	struct mirrored *r = rec;
	struct set_mirror *m = ctx;

	if (r->mark != m->sweep_mark)
		r->wanted = 0;
	return 0;
}

void set_mirror_sweep_end(struct set_mirror *m)
{
	keytable_each(m->recs, unmark_unput, m);
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
	struct nft_batch *batch;   /* the elements, if not f */
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
		w->failed |= (r->key.nets ? nft_batch_add_net(w->batch, set_names[set], r->key.addr, alen, r->key.prefix,
							     seconds_left(w, r))
					  : nft_batch_add(w->batch, set_names[set], r->key.addr, alen, seconds_left(w, r))) < 0;
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
		fprintf(a->f, " timeout %s", nft_timeout_text(seconds_left(w, r) * 1000, text, sizeof(text)));
}

/* Deleted whether the kernel still holds it or has let it run out: added first, in the same transaction. */
static void write_delete(struct writer *w, const struct mirrored *r)
{
	char text[INET6_ADDRSTRLEN + 8];
	const char *set = set_names[set_index(r->key.kind, r->key.family, r->key.nets)];

	if (w->batch) {
		unsigned alen = r->key.family == 4 ? 4 : 16;
		w->failed |= (r->key.nets ? nft_batch_delete_net(w->batch, set, r->key.addr, alen, r->key.prefix)
					  : nft_batch_delete(w->batch, set, r->key.addr, alen)) < 0;
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
	}
	if (in && !r->told && (r->until == 0 || r->until > w->now)) {
		write_add(w, r);
		r->told = 1;
		r->told_until = r->until;
	}
}

/* ---- the nets of a set: only those no other holds ---- */

static bool held_by_shorter(const struct set_mirror *m, const struct mirror_key *k)
{
	struct mirror_key up = *k;
	unsigned alen = k->family == 4 ? 4 : 16;

	for (int p = k->prefix - 1; p >= 0; p--) {
		unsigned byte = (unsigned)p / 8;
		up.addr[byte] &= (uint8_t)(0xff00u >> (p % 8));
		memset(up.addr + byte + 1, 0, alen - byte - 1);
		up.prefix = (uint8_t)p;
		const struct mirrored *r = keytable_find(m->recs, &up);
		if (r && r->wanted)
			return true;
	}
	return false;
}

struct nets_pass {
	struct set_mirror *m;
	struct writer *w;
	unsigned sets;             /* by set index: those whose nets are settled */
	bool adding;               /* the second pass: deletions are all written */
};

static int settle_net(void *ctx, void *rec)
{
	struct nets_pass *p = ctx;
	struct mirrored *r = rec;

	if (!r->key.nets || !(p->sets & (1u << set_index(r->key.kind, r->key.family, true))))
		return 0;
	if (!p->adding) { /* first every deletion: an interval added must not meet one on its way out */
		r->in = r->wanted && !held_by_shorter(p->m, &r->key);
		if (r->told && (!r->in || time_moved(r))) {
			write_delete(p->w, r);
			r->told = 0;
		}
		return 0;
	}
	settle_one(p->w, r, r->in);
	return !r->wanted && !r->told;
}

static int settle_address(void *ctx, void *rec)
{
	struct writer *w = ctx;
	struct mirrored *r = rec;

	if (r->key.nets)
		return 0;
	settle_one(w, r, r->wanted);
	return !r->wanted && !r->told;
}

int set_mirror_settle(struct set_mirror *m, FILE *f, struct nft_batch *batch, uint64_t now)
{
	struct writer w = { .f = f, .batch = batch, .table = m->table, .now = now };

	if (m->all_dirty) {
		keytable_each(m->recs, settle_address, &w);
		m->nets_dirty = ~0u;
	}
	for (size_t i = 0; i < m->ndirty && !m->all_dirty; i++) {
		struct mirrored *r = keytable_find(m->recs, &m->dirty[i]);
		if (r && settle_address(&w, r))
			keytable_remove(m->recs, r);
	}
	if (m->nets_dirty) {
		struct nets_pass p = { m, &w, m->nets_dirty, false };
		keytable_each(m->recs, settle_net, &p);
		p.adding = true;
		keytable_each(m->recs, settle_net, &p);
	}
	close_statements(&w);
	m->ndirty = 0;
	m->all_dirty = false;
	m->nets_dirty = 0;
	return ferror(f) || w.failed ? -1 : 0;
}

static int forget_told(void *ctx, void *rec)
{
	(void)ctx;
	((struct mirrored *)rec)->told = 0;
	return 0;
}

void set_mirror_write_all(struct set_mirror *m, FILE *f, uint64_t now)
{
	keytable_each(m->recs, forget_told, NULL);
	m->all_dirty = true;
	set_mirror_settle(m, f, NULL, now);
}

static int write_told_net(void *ctx, void *rec)
{
	const struct mirrored *r = rec;

	if (r->key.nets && r->told)
		write_add(ctx, r);
	return 0;
}

void set_mirror_write_nets(struct set_mirror *m, FILE *f, uint64_t now)
{
	struct writer w = { .f = f, .table = m->table, .now = now };

	keytable_each(m->recs, write_told_net, &w);
	close_statements(&w);
}

int set_mirror_answer(struct set_mirror *m, const char *set, const uint8_t *addr, int family, bool added, FILE *f,
		      uint64_t now)
{
	struct writer w = { .f = f, .table = m->table, .now = now };
	char text[INET6_ADDRSTRLEN];

	for (unsigned i = 0; i < SETS; i++) {
		if (strcmp(set, set_names[i]) != 0 || (i & 1))
			continue;
		struct mirror_key k = key_of(i / 4, addr, family, family == 4 ? 32 : 128);
		const struct mirrored *r = keytable_find(m->recs, &k);
		bool there = r && r->told && (r->told_until == 0 || r->told_until > now);
		if (!added && there) {
			write_add(&w, r);
			close_statements(&w);
			return 1;
		}
		if (added && !there) {
			inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
			fprintf(f, "delete element inet %s %s { %s }\n", m->table, set, text);
			return 1;
		}
	}
	return 0;
}

static int count_one(void *ctx, void *rec)
{
	struct set_mirror_counts *out = ctx;
	const struct mirrored *r = rec;

	out->elements[r->key.kind] += r->told;
	out->hidden += r->key.nets && r->wanted && !r->told;
	return 0;
}

void set_mirror_counts(const struct set_mirror *m, struct set_mirror_counts *out)
{
	memset(out, 0, sizeof(*out));
	keytable_each((struct keytable *)m->recs, count_one, out); /* counting changes nothing */
}
