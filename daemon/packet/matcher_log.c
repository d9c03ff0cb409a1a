/* matcher_log.c - a matcher's changes recorded, for a copy of it to replay (matcher_replay, matcher.c). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdlib.h>
#include <string.h>

#include "matcher.h"
#include "matcher_internal.h"

struct matcher_log {
	struct arena records;
	bool whole;                /* a change that cannot be replayed, or one not recorded */
	bool rebuilt;              /* the filters were rebuilt: no replay, but every entry is as it was */
};

struct matcher_log *matcher_log_new(void)
{
	return calloc(1, sizeof(struct matcher_log));
}

void matcher_log_free(struct matcher_log *log)
{
	if (log == NULL)
		return;
	arena_free(&log->records);
	free(log);
}

void matcher_log_clear(struct matcher_log *log)
{
	log->records.len = log->records.garbage = 0;
	log->whole = log->rebuilt = false;
}

void matcher_record(struct matcher *m, struct matcher_log *log)
{
	m->log = log;
}

static void log_put(struct matcher *m, unsigned op, const struct entry *e, uint32_t a, uint32_t b)
{
	struct change c = { .op = (uint8_t)op, .kind = e ? (uint8_t)e->kind : 0, .len = e ? e->len : 0, .a = a, .b = b };
	struct matcher_log *log = m->log;

	if (log == NULL || log->whole)
		return;
	if (arena_put(&log->records, &c, sizeof(c)) < 0 || (c.len && arena_put(&log->records, e->key, c.len) < 0))
		log->whole = true; /* the copy is made again whole */
}

void matcher_log_reshaped(struct matcher *m)
{
	if (m->log)
		m->log->whole = true;
}

void matcher_log_rebuilt(struct matcher *m)
{
	if (m->log)
		m->log->rebuilt = true;
}

void matcher_log_hold(struct matcher *m, const struct entry *e, uint32_t holders)
{
	log_put(m, CHANGE_HOLD, e, holders, 0);
}

void matcher_log_release(struct matcher *m, const struct entry *e, uint32_t holders)
{
	log_put(m, CHANGE_RELEASE, e, holders, 0);
}

void matcher_log_rehold(struct matcher *m, uint32_t from, uint32_t to)
{
	log_put(m, CHANGE_REHOLD, NULL, from, to);
}

void matcher_log_named(struct matcher *m, const struct entry *e)
{
	log_put(m, CHANGE_NAMED, e, 0, 0);
}

void matcher_log_remove(struct matcher *m, const struct entry *e)
{
	log_put(m, CHANGE_REMOVE, e, 0, 0);
}

void matcher_log_simd(struct matcher *m, unsigned level)
{
	log_put(m, CHANGE_SIMD, NULL, level, 0);
}

bool matcher_log_next(const struct matcher_log *log, size_t *at, struct change *out, const uint8_t **key)
{
	if (*at >= log->records.len)
		return false;
	memcpy(out, log->records.bytes + *at, sizeof(*out)); /* records lie end to end, unaligned */
	*key = log->records.bytes + *at + sizeof(*out);
	*at += sizeof(*out) + out->len;
	return true;
}

bool matcher_log_whole(const struct matcher_log *log)
{
	return log->whole || log->rebuilt;
}

int matcher_log_entries(const struct matcher_log *log, matcher_log_entry_cb cb, void *ctx, uint32_t *reheld)
{
	struct change c;
	const uint8_t *key;
	size_t at = 0;

	*reheld = 0;
	if (log->whole)
		return 1;
	while (matcher_log_next(log, &at, &c, &key)) {
		if (c.op == CHANGE_REHOLD)
			*reheld |= c.a; /* its entries lost from; those whose "to" changed are named after it */
		else if ((c.op == CHANGE_HOLD || c.op == CHANGE_RELEASE) && c.a == MATCHER_HOLDER_STAGING)
			continue; /* a version being staged is no one's yet: its rehold names what it changes */
		else if (c.op != CHANGE_SIMD)
			cb(ctx, (enum entry_kind)c.kind, key, c.len);
	}
	return 0;
}
