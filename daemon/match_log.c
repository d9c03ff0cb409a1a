/* match_log.c - a matcher's changes recorded, for a copy of it to replay. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "match.h"
#include "match_internal.h"

/* One change: what its call was given. Records lie end to end in the log's arena. */
struct change {
	uint8_t op;                /* enum change_op */
	uint8_t kind;              /* the entry's */
	uint16_t len;              /* the key's bytes, which follow */
	uint32_t a, b;             /* holders; rehold's from and to; set_simd's level */
};

enum change_op { CHANGE_HOLD, CHANGE_RELEASE, CHANGE_REHOLD, CHANGE_REMOVE, CHANGE_SIMD };

struct match_log {
	struct arena records;
	bool whole;                /* a change that cannot be replayed, or one not recorded */
};

struct match_log *match_log_new(void)
{
	return calloc(1, sizeof(struct match_log));
}

void match_log_free(struct match_log *log)
{
	if (log == NULL)
		return;
	arena_free(&log->records);
	free(log);
}

void match_log_clear(struct match_log *log)
{
	log->records.len = log->records.garbage = 0;
	log->whole = false;
}

void matcher_record(struct matcher *m, struct match_log *log)
{
	m->log = log;
}

static void log_put(struct matcher *m, unsigned op, const struct entry *e, uint32_t a, uint32_t b)
{
	struct change c = { .op = (uint8_t)op, .kind = e ? (uint8_t)e->kind : 0, .len = e ? e->len : 0, .a = a, .b = b };
	struct match_log *log = m->log;

	if (log == NULL || log->whole)
		return;
	if (arena_put(&log->records, &c, sizeof(c)) < 0 || (c.len && arena_put(&log->records, e->key, c.len) < 0))
		log->whole = true; /* the copy is made again whole */
}

void match_log_reshaped(struct matcher *m)
{
	if (m->log)
		m->log->whole = true;
}

void match_log_hold(struct matcher *m, const struct entry *e, uint32_t holders)
{
	log_put(m, CHANGE_HOLD, e, holders, 0);
}

void match_log_release(struct matcher *m, const struct entry *e, uint32_t holders)
{
	log_put(m, CHANGE_RELEASE, e, holders, 0);
}

void match_log_rehold(struct matcher *m, uint32_t from, uint32_t to)
{
	log_put(m, CHANGE_REHOLD, NULL, from, to);
}

void match_log_remove(struct matcher *m, const struct entry *e)
{
	log_put(m, CHANGE_REMOVE, e, 0, 0);
}

void match_log_simd(struct matcher *m, unsigned level)
{
	log_put(m, CHANGE_SIMD, NULL, level, 0);
}

static int replay_one(struct matcher *copy, const struct change *c, const uint8_t *key, char *err, size_t errlen)
{
	struct entry e;
	uint32_t left;

	e.kind = (enum entry_kind)c->kind;
	e.len = c->len;
	memcpy(e.key, key, c->len);
	switch (c->op) {
	case CHANGE_HOLD:
		return matcher_hold(copy, &e, c->a, err, errlen) < 0 ? -1 : 0;
	case CHANGE_RELEASE:
		matcher_release(copy, &e, c->a, &left);
		return 0;
	case CHANGE_REHOLD:
		matcher_rehold(copy, c->a, c->b, NULL);
		return 0;
	case CHANGE_REMOVE:
		matcher_remove(copy, &e);
		return 0;
	case CHANGE_SIMD:
		return matcher_set_simd(copy, (enum simd_level)c->a);
	}
	error_set(err, errlen, "a change of unknown kind %u in the log", c->op);
	return -1;
}

int matcher_replay(struct matcher *copy, const struct match_log *log, char *err, size_t errlen)
{
	if (log->whole) {
		error_set(err, errlen, "the changes cannot be replayed (a build, or a change not recorded)");
		return -1;
	}
	for (size_t at = 0; at < log->records.len;) {
		struct change c;
		memcpy(&c, log->records.bytes + at, sizeof(c));
		at += sizeof(c);
		if (replay_one(copy, &c, log->records.bytes + at, err, errlen) < 0)
			return -1;
		at += c.len;
	}
	return 0;
}
