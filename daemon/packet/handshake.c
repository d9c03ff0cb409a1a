/* handshake.c - which TCP connections this sensor saw open whole: a packet's sender proven, or why not. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "handshake.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#define HANDSHAKE_PROBE 4           /* slots a connection may take: one bucket, two cache lines */
#define HALF_OPEN_SECONDS 30        /* a handshake not finished by then is forgotten */
#define MIN_WINDOW 65535u           /* the window allowed either way, whatever was advertised */
#define MAX_WINDOW (1u << 30)       /* RFC 7323's largest */
#define NO_SCALE 0x0f                /* a side's scale nibble when it offered none */
#define CLIENT_FIRST 0x80            /* in a conn's state: the client is the flow's first end */

enum { TCP_FIN = 0x01, TCP_SYN = 0x02, TCP_RST = 0x04, TCP_ACK = 0x10 };
enum { CLIENT = 0, SERVER = 1 };
enum conn_state { SYN_SENT = 1, SYN_RECEIVED, ESTABLISHED, CONFLICTING, ONE_SIDED, STATE_MASK = 0x0f };

/*
 * One connection, 32 bytes. Before it is established, next[] holds each
 * side's initial sequence number plus one: what the other side must
 * acknowledge exactly.
 */
struct conn {
	uint64_t key;              /* the connection's keyed hash; 0: a free slot */
	uint32_t next[2];          /* by side: the sequence number after the last byte seen sent */
	uint32_t window[2];        /* by side: the largest window it advertised, scaled */
	uint32_t seen;             /* packet time, seconds */
	uint16_t client_link;      /* a tag of the link address the SYN came from (0: unknown) */
	uint8_t state;             /* enum conn_state, and CLIENT_FIRST */
	uint8_t scales;            /* by side, a nibble each: its window scale, NO_SCALE if it offered none */
};

_Static_assert(sizeof(struct conn) == 32, "a bucket of HANDSHAKE_PROBE connections is two cache lines");

static unsigned state_of(const struct conn *c)
{
	return c->state & STATE_MASK;
}

static void set_state(struct conn *c, enum conn_state state)
{
	c->state = (uint8_t)((c->state & CLIENT_FIRST) | state);
}

static unsigned scale_of(const struct conn *c, int side)
{
	return (unsigned)(c->scales >> (4 * side)) & 0x0f;
}

static void set_scale(struct conn *c, int side, unsigned scale)
{
	c->scales = (uint8_t)((c->scales & ~(0x0f << (4 * side))) | (scale & 0x0f) << (4 * side));
}

struct handshakes {
	struct hash_key secret;
	struct conn *slots;
	size_t mask;               /* buckets - 1 */
	unsigned idle;
	time_t refused_at;         /* the last SYN refused for want of a slot (0: never) */
	struct handshakes_stats *st; /* the caller's */
};

static void forget(struct handshakes *h, struct conn *c)
{
	c->key = 0;
	h->st->tracked--;
}

const char *sender_proof_name(enum sender_proof proof)
{
	static const char *const names[SENDER_PROOF_COUNT] = {
		[SENDER_VERIFIED] = "verified", [SENDER_UDP] = "udp", [SENDER_ICMP] = "icmp",
		[SENDER_OTHER] = "other", [SENDER_NO_HANDSHAKE] = "no_handshake",
		[SENDER_OUT_OF_WINDOW] = "out_of_window", [SENDER_CONFLICT] = "conflict",
		[SENDER_TABLE_FULL] = "flow_table_full", [SENDER_NOT_TRACKED] = "not_tracked",
		[SENDER_ONE_SIDED] = "one_sided",
	};

	return proof < SENDER_PROOF_COUNT ? names[proof] : "unknown";
}

struct handshakes *handshakes_new(size_t capacity, unsigned idle_seconds, struct handshakes_stats *st)
{
	struct handshakes *h = calloc(1, sizeof(*h));
	size_t buckets = 1;

	while (buckets * HANDSHAKE_PROBE < capacity && buckets < ((size_t)1 << 40))
		buckets <<= 1;
	if (h == NULL || hash_key_random(&h->secret, HASH_XXH3) < 0 ||
	    (h->slots = aligned_alloc(HANDSHAKE_PROBE * sizeof(struct conn),
				      buckets * HANDSHAKE_PROBE * sizeof(struct conn))) == NULL) {
		handshakes_free(h);
		return NULL;
	}
	memset(h->slots, 0, buckets * HANDSHAKE_PROBE * sizeof(struct conn));
	h->mask = buckets - 1;
	h->idle = idle_seconds;
	h->st = st;
	h->st->capacity += buckets * HANDSHAKE_PROBE;
	h->st->bytes += buckets * HANDSHAKE_PROBE * sizeof(struct conn) + sizeof(*h);
	return h;
}

void handshakes_clear(struct handshakes *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < (h->mask + 1) * HANDSHAKE_PROBE; i++)
		if (h->slots[i].key)
			forget(h, &h->slots[i]);
	h->refused_at = 0;
}

void handshakes_free(struct handshakes *h)
{
	if (h == NULL)
		return;
	if (h->st) {
		handshakes_clear(h);
		h->st->capacity -= (h->mask + 1) * HANDSHAKE_PROBE;
		h->st->bytes -= (h->mask + 1) * HANDSHAKE_PROBE * sizeof(struct conn) + sizeof(*h);
	}
	free(h->slots);
	free(h);
}

static uint64_t key_of(const struct handshakes *h, const struct packet_view *v, bool *src_first)
{
	uint8_t ends[PACKET_FLOW_ENDS_MAX];
	size_t n = packet_flow_ends(v, ends, src_first);
	uint64_t key = hash_bytes64(&h->secret, ends, n);

	return key ? key : 1;
}

static struct conn *bucket_of(const struct handshakes *h, uint64_t key)
{
	return h->slots + ((key >> 32 ^ key) & h->mask) * HANDSHAKE_PROBE;
}

uint64_t handshakes_prefetch(const struct handshakes *h, const struct packet_view *v)
{
	bool src_first;

	if (h == NULL || v->tcp == NULL)
		return 0;
	uint64_t key = key_of(h, v, &src_first);
	const struct conn *b = bucket_of(h, key);
	__builtin_prefetch(b, 1);
	__builtin_prefetch(b + HANDSHAKE_PROBE - 1, 1);
	return key;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The fields of a TCP segment the tracker reads. */
struct segment {
	uint32_t seq, ack, len; /* len: what it takes of the sequence space (SYN and FIN count one) */
	uint32_t window;        /* as carried, unscaled */
	uint8_t flags, scale;   /* scale: its window scale option, NO_SCALE without one */
	uint16_t link;          /* a tag of the link address it came from (0: none known) */
};

/* The window scale option of a SYN (RFC 7323: kind 3, length 3), NO_SCALE if it has none. */
static uint8_t scale_option(const uint8_t *tcp)
{
	size_t end = (size_t)(tcp[12] >> 4) * 4;

	for (size_t at = 20; at < end;) {
		uint8_t kind = tcp[at];
		if (kind == 0)
			break;
		if (kind == 1) {
			at++;
			continue;
		}
		if (at + 1 >= end || tcp[at + 1] < 2 || at + tcp[at + 1] > end)
			break;
		if (kind == 3 && tcp[at + 1] == 3)
			return tcp[at + 2] > 14 ? 14 : tcp[at + 2];
		at += tcp[at + 1];
	}
	return NO_SCALE;
}

/* 16 bits of a 6-byte link address, never 0 (0: none); a remote forger chooses none of them. */
static uint16_t link_tag(const uint8_t *mac)
{
	if (mac == NULL)
		return 0;
	uint64_t x = 0;
	for (int i = 0; i < 6; i++)
		x = x << 8 | mac[i];
	uint16_t tag = (uint16_t)((x * 0x9e3779b97f4a7c15ull) >> 48);
	return tag ? tag : 1;
}

static struct segment segment_of(const struct packet_view *v)
{
	const uint8_t *t = v->tcp;
	struct segment s = { .seq = be32(t + 4), .ack = be32(t + 8), .flags = t[13],
			     .window = (uint32_t)(t[14] << 8 | t[15]), .scale = NO_SCALE };

	s.len = (uint32_t)v->payload_len + !!(s.flags & TCP_SYN) + !!(s.flags & TCP_FIN);
	if (s.flags & TCP_SYN) {
		s.scale = scale_option(t);
		s.link = link_tag(v->link_src);
	}
	return s;
}

static bool idle(const struct handshakes *h, const struct conn *c, time_t now)
{
	uint32_t quiet = (uint32_t)now - c->seen;

	return quiet > (state_of(c) == ESTABLISHED ? h->idle : HALF_OPEN_SECONDS);
}

static struct conn *find(const struct handshakes *h, uint64_t key)
{
	struct conn *b = bucket_of(h, key);

	for (unsigned i = 0; i < HANDSHAKE_PROBE; i++)
		if (b[i].key == key)
			return &b[i];
	return NULL;
}

/* A slot for a new SYN: free, idle, else the oldest half-open (evicted); NULL: all hold proven connections. */
static struct conn *take(struct handshakes *h, uint64_t key, time_t now)
{
	struct conn *b = bucket_of(h, key), *oldest = NULL;

	for (unsigned i = 0; i < HANDSHAKE_PROBE; i++) {
		if (b[i].key == 0) {
			h->st->tracked++;
			return &b[i];
		}
		if (idle(h, &b[i], now))
			return &b[i];
		if (state_of(&b[i]) != ESTABLISHED && (oldest == NULL || (int32_t)(b[i].seen - oldest->seen) < 0))
			oldest = &b[i];
	}
	if (oldest)
		h->st->evicted++;
	return oldest;
}

static void open_handshake(struct conn *c, uint64_t key, bool src_first, const struct segment *s, time_t now)
{
	*c = (struct conn){ .key = key, .state = (uint8_t)(SYN_SENT | (src_first ? CLIENT_FIRST : 0)),
			    .seen = (uint32_t)now, .client_link = s->link };
	c->next[CLIENT] = s->seq + 1;
	c->window[CLIENT] = s->window;
	set_scale(c, CLIENT, s->scale);
	set_scale(c, SERVER, NO_SCALE);
}

/* Whether a in [b - below, b + above], in sequence space. */
static bool near(uint32_t a, uint32_t b, uint32_t below, uint32_t above)
{
	int32_t d = (int32_t)(a - b);

	return d >= 0 ? (uint32_t)d <= above : (uint32_t)-(int64_t)d <= below;
}

static uint32_t window_of(const struct conn *c, int side)
{
	uint32_t w = c->window[side];

	return w < MIN_WINDOW ? MIN_WINDOW : w;
}

/*
 * A segment of an established connection from side: its sequence within
 * what the peer's window allows of that side's next number, and its
 * acknowledgement of no more than the peer has sent (give or take a window
 * the sensor may have missed) nor less than a window behind.
 */
static bool in_window(const struct conn *c, int side, const struct segment *s)
{
	uint32_t peer = window_of(c, !side), own = window_of(c, side);
	uint32_t wide = peer > own ? peer : own;

	if (!near(s->seq, c->next[side], peer, peer) && !near(s->seq + s->len, c->next[side], peer, peer))
		return false;
	return !(s->flags & TCP_ACK) || near(s->ack, c->next[!side], wide, own);
}

static void advance(struct conn *c, int side, const struct segment *s, time_t now)
{
	uint32_t end = s->seq + s->len, scale = scale_of(c, side) == NO_SCALE ? 0 : scale_of(c, side);
	uint64_t window = (uint64_t)s->window << scale;

	if ((int32_t)(end - c->next[side]) > 0)
		c->next[side] = end;
	if ((s->flags & TCP_ACK) && (int32_t)(s->ack - c->next[!side]) > 0)
		c->next[!side] = s->ack; /* the peer sent what the sensor missed */
	if (!(s->flags & TCP_SYN) && window > c->window[side])
		c->window[side] = window > MAX_WINDOW ? MAX_WINDOW : (uint32_t)window;
	c->seen = (uint32_t)now;
}

static enum sender_proof established(struct handshakes *h, struct conn *c, int side, const struct segment *s,
				     time_t now)
{
	if (!in_window(c, side, s)) {
		h->st->out_of_window++;
		return SENDER_OUT_OF_WINDOW;
	}
	if (s->flags & TCP_RST) {
		h->st->resets++;
		forget(h, c);
		return SENDER_VERIFIED;
	}
	advance(c, side, s, now);
	return SENDER_VERIFIED;
}

/* The server's answer to a SYN: proof of the server if it acknowledges the client's number exactly. */
static enum sender_proof syn_ack(struct handshakes *h, struct conn *c, int side, const struct segment *s,
				 time_t now)
{
	if (side != SERVER || s->ack != c->next[CLIENT]) {
		h->st->wrong_ack += side == SERVER && s->ack != c->next[CLIENT];
		return SENDER_NO_HANDSHAKE;
	}
	if (state_of(c) == SYN_RECEIVED && s->seq + 1 != c->next[SERVER]) {
		h->st->conflicts++; /* two servers answer one SYN: at least one is forged */
		set_state(c, CONFLICTING);
		c->seen = (uint32_t)now;
		return SENDER_CONFLICT;
	}
	if (state_of(c) == SYN_SENT && s->link && s->link == c->client_link) {
		/* The answer came in where the SYN did: one sender writing both ways (the server's reaches the
		 * client another way), or both ends behind one neighbour, where nothing here tells them apart. */
		h->st->one_sided++;
		set_state(c, ONE_SIDED);
		c->seen = (uint32_t)now;
		return SENDER_ONE_SIDED;
	}
	if (state_of(c) == SYN_SENT) {
		set_state(c, SYN_RECEIVED);
		c->next[SERVER] = s->seq + 1;
		c->window[SERVER] = s->window;
		set_scale(c, SERVER, s->scale);
		if (s->scale == NO_SCALE || scale_of(c, CLIENT) == NO_SCALE) { /* RFC 7323: both offer it, or neither scales */
			set_scale(c, SERVER, NO_SCALE);
			set_scale(c, CLIENT, NO_SCALE);
		}
	}
	c->seen = (uint32_t)now;
	return SENDER_NO_HANDSHAKE;
}

/* The client's ACK of the SYN-ACK: both numbers acknowledged exactly, the connection proven. */
static enum sender_proof final_ack(struct handshakes *h, struct conn *c, int side, const struct segment *s,
				   time_t now)
{
	if (side == CLIENT && (s->flags & TCP_RST) && s->seq == c->next[CLIENT]) {
		forget(h, c); /* the client named never sent this SYN, or gave up */
		return SENDER_NO_HANDSHAKE;
	}
	if (side != CLIENT || !(s->flags & TCP_ACK) || (s->flags & TCP_RST) || s->ack != c->next[SERVER] ||
	    s->seq != c->next[CLIENT]) {
		h->st->wrong_ack += side == CLIENT && (s->flags & TCP_ACK) && s->ack != c->next[SERVER];
		return SENDER_NO_HANDSHAKE;
	}
	set_state(c, ESTABLISHED);
	h->st->verified++;
	advance(c, side, s, now);
	return SENDER_VERIFIED;
}

/* A packet of a connection the table holds. */
static enum sender_proof follow(struct handshakes *h, struct conn *c, bool src_first, const struct segment *s,
				uint64_t key, time_t now)
{
	int side = src_first == !!(c->state & CLIENT_FIRST) ? CLIENT : SERVER;

	if (state_of(c) == ESTABLISHED)
		return established(h, c, side, s, now);
	if ((s->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN) {
		if (side != CLIENT || s->seq + 1 != c->next[CLIENT])
			open_handshake(c, key, src_first, s, now); /* a new attempt: proven only by its own handshake */
		else
			c->seen = (uint32_t)now;
		return SENDER_NO_HANDSHAKE;
	}
	if (state_of(c) == CONFLICTING || state_of(c) == ONE_SIDED)
		return state_of(c) == CONFLICTING ? SENDER_CONFLICT : SENDER_ONE_SIDED;
	if (s->flags & TCP_SYN)
		return syn_ack(h, c, side, s, now);
	if (state_of(c) == SYN_RECEIVED)
		return final_ack(h, c, side, s, now);
	return SENDER_NO_HANDSHAKE;
}

/* A TCP packet whose connection the table does not hold: a SYN opens one. */
static enum sender_proof start(struct handshakes *h, bool src_first, const struct segment *s, uint64_t key,
			       time_t now)
{
	if ((s->flags & (TCP_SYN | TCP_ACK | TCP_RST)) != TCP_SYN) {
		bool full_lately = h->refused_at && (uint64_t)(now - h->refused_at) <= HALF_OPEN_SECONDS;
		return full_lately ? SENDER_TABLE_FULL : SENDER_NO_HANDSHAKE;
	}
	struct conn *c = take(h, key, now);
	if (c == NULL) {
		h->st->refused++;
		h->refused_at = now ? now : 1;
		return SENDER_TABLE_FULL;
	}
	h->st->opened++;
	open_handshake(c, key, src_first, s, now);
	return SENDER_NO_HANDSHAKE;
}

enum sender_proof handshakes_see(struct handshakes *h, const struct packet_view *v, uint64_t key, time_t now)
{
	if (v->tcp == NULL) {
		if (v->family == 0 || v->later_fragment)
			return SENDER_OTHER;
		if (v->l4 == PACKET_L4_UDP)
			return SENDER_UDP;
		return v->ip_proto == 1 || v->ip_proto == 58 ? SENDER_ICMP : SENDER_OTHER;
	}
	if (h == NULL)
		return SENDER_NOT_TRACKED;
	bool src_first = packet_flow_src_first(v);
	if (key == 0)
		key = key_of(h, v, &src_first);
	struct segment s = segment_of(v);
	struct conn *c = find(h, key);

	if (c && idle(h, c, now)) {
		forget(h, c);
		c = NULL;
	}
	return c ? follow(h, c, src_first, &s, key, now) : start(h, src_first, &s, key, now);
}
