/* cluster_reply.c - the shape of Redis's replies, checked before anything is read of them; a connection dropped at a bad one. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- the reader: following the stream ---- */

/* A field of a flat [name, value, ...] reply, or NULL. */
const redisReply *cluster_field(const redisReply *r, const char *name)
{
	if (r == NULL || r->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (size_t i = 0; i + 1 < r->elements; i += 2)
		if (r->element[i]->type == REDIS_REPLY_STRING && strcmp(r->element[i]->str, name) == 0)
			return r->element[i + 1];
	return NULL;
}

/* A reply's type checked before its value is read: its text (a bulk or status string), or NULL. */
const char *cluster_reply_text(const redisReply *r)
{
	return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) ? r->str : NULL;
}

/* Whether r is an array of n elements (any number: n == 0 and any). */
bool cluster_reply_array(const redisReply *r, size_t n, bool any)
{
	return r && r->type == REDIS_REPLY_ARRAY && (any || r->elements == n);
}

/* A stream ID as Redis writes it: MS-SEQ, both decimal. */
bool cluster_id_valid(const char *text)
{
	size_t ms = strspn(text, "0123456789");

	return text && ms > 0 && ms <= 20 && text[ms] == '-' && strspn(text + ms + 1, "0123456789") > 0 &&
	       strlen(text + ms + 1) == strspn(text + ms + 1, "0123456789") && strlen(text + ms + 1) <= 20;
}

/* A stream entry as XREAD and XRANGE give it: [ID, [field, value, ...]]. */
bool cluster_entry_shaped(const redisReply *e)
{
	return cluster_reply_array(e, 2, false) && cluster_reply_text(e->element[0]) && cluster_id_valid(e->element[0]->str) &&
	       cluster_reply_array(e->element[1], 0, true);
}

/*
 * A reply of a shape its command never gives (a fake or broken server): an
 * error on that connection, which is dropped and made again (cluster_tick).
 */
void cluster_bad_reply(struct conn *k, const char *command, const redisReply *r)
{
	cluster_set_error(k->c, k->slot, "%s: a reply of an unexpected shape (type %d): the %s connection is dropped", command,
		  r ? r->type : -1, k->name);
	cluster_drop(k);
}

/*
 * Not redisAsyncDisconnect: that waits for the replies still due, which a
 * server gone silent never sends, and hiredis refuses every command meanwhile.
 */
void cluster_drop(struct conn *k)
{
	bool was_up = k->up;

	if (k->ac == NULL)
		return;
	redisAsyncFree(k->ac); /* on_disconnect runs if it was connected: now, or once the callback it is in returns */
	if (!was_up)
		k->ac = NULL;
	if (k->c->cfg->sentinels)
		k->c->master_known = false;
}

bool cluster_sent(struct conn *k, int rc, const char *command)
{
	if (rc == REDIS_OK)
		return true;
	if (k->ac && (k->ac->c.flags & REDIS_FREEING))
		return false; /* being dropped already, its callbacks told */
	cluster_set_error(k->c, k->slot, "%s: not sent (%s): the %s connection is dropped and made again", command,
			  k->ac && (k->ac->c.flags & REDIS_DISCONNECTING) ? "the connection is closing" : "out of memory",
			  k->name);
	cluster_drop(k);
	return false;
}

const char *const CLUSTER_OP_NAMES[4] = { [CLUSTER_ADD] = "add", [CLUSTER_DEL] = "del",
					 [CLUSTER_REPLACE] = "replace", [CLUSTER_FLUSH] = "flush" };

int cluster_op_kind(const char *name)
{
	for (int k = 0; k < 4; k++)
		if (strcmp(name, CLUSTER_OP_NAMES[k]) == 0)
			return k;
	return -1;
}

/* The entry's identity (fields node and change); false for one without (from bloomd 0.7). */
bool cluster_change_of(const redisReply *e, struct change_id *id)
{
	const char *node = cluster_reply_text(cluster_field(e->element[1], "node")), *change = cluster_reply_text(cluster_field(e->element[1], "change"));

	if (node == NULL || change == NULL || seen_parse_id(change, &id->incarnation, &id->seq) < 0)
		return false;
	snprintf(id->node, sizeof(id->node), "%s", node);
	return true;
}

/* A reply's text and length as a signed field ("" when it is missing or not text). */
struct sign_field cluster_text_field(const redisReply *r)
{
	return cluster_reply_text(r) ? (struct sign_field){ r->str, r->len } : (struct sign_field){ "", 0 };
}

/* The fields a change is signed over, the stream's name first (a change is not moved to another stream). */
void cluster_change_fields(const struct cluster *c, const redisReply *fields, struct sign_field out[7])
{
	static const char *const NAMES[] = { "node", "change", "op", "expires", "entry", "data" };

	out[0] = (struct sign_field){ c->cfg->stream, strlen(c->cfg->stream) };
	for (int i = 0; i < 6; i++)
		out[i + 1] = cluster_text_field(cluster_field(fields, NAMES[i]));
}

/*
 * Whether an entry may be applied at all: not larger than max_entry_bytes
 * (refused before any of it is parsed), and, with a key, signed with it.
 * What is not is counted and passed, never applied nor tried again.
 */

/* Of ARGV's (ID, change) pairs, the places (from 1) of those not in the stream, past its first entry. */
const char CLUSTER_MISSING_SCRIPT[] =
	"local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)\n"
	"local function before(a, b)\n"
	"  local am, as = string.match(a, '^(%d+)-(%d+)$')\n"
	"  local bm, bs = string.match(b, '^(%d+)-(%d+)$')\n"
	"  if not am or not bm then return false end\n"
	"  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)\n"
	"  return am < bm or (am == bm and as < bs)\n"
	"end\n"
	"local missing = {}\n"
	"for i = 1, #ARGV - 1, 2 do\n"
	"  if not (first[1] and before(ARGV[i], first[1][1])) then\n"
	"    local found = false\n"
	"    local e = redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])\n"
	"    if #e == 1 then\n"
	"      local f = e[1][2]\n"
	"      for j = 1, #f - 1, 2 do\n"
	"        if f[j] == 'change' and f[j + 1] == ARGV[i + 1] then found = true end\n"
	"      end\n"
	"    end\n"
	"    if not found then missing[#missing + 1] = (i + 1) / 2 end\n"
	"  end\n"
	"end\n"
	"return missing\n";
