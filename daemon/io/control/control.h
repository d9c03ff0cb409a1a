/* control.h - the control socket: Unix stream server, line framing, peer check, limits. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CONTROL_H
#define BLOOMD_CONTROL_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One command per LF-terminated line, at most CONTROL_MAX_LINE bytes; one
 * reply line per command, in order. A longer line gets an error reply and
 * the connection is closed once the reply is out.
 *
 * A client is never allowed to stall the loop or grow the daemon without
 * bound:
 *   - each wake-up handles at most CONTROL_BUDGET lines of a client, then
 *     yields to the loop (capture runs in between) and continues;
 *   - while a client's unread replies pass CONTROL_MAX_OUTPUT, its input is
 *     not read (it waits for its replies to drain);
 *   - a client silent for idle_timeout seconds, or not reading its replies
 *     for as long, is disconnected;
 *   - past max_clients, a new client gets an error reply and is closed;
 *   - out of file descriptors, accepting pauses for a second.
 *
 * The socket is bound with mode 0660 (umask before bind), then given the
 * configured group. A socket file nobody answers on is a stale one and is
 * replaced; one another process answers on is refused.
 */

#define CONTROL_MAX_LINE 8192
#define CONTROL_MAX_OUTPUT (1 << 20)
#define CONTROL_BUDGET 256

struct control;
struct control_client;

/*
 * A command line (without its LF; may hold any bytes, NULs included). Reply
 * with control_reply, now or, after control_hold, later.
 */
typedef void (*control_line_cb)(void *ctx, struct control_client *cl, const char *line,
				size_t len);
/*
 * After each burst of lines, before their replies go out (to fsync what
 * they changed); replied: whether the burst produced any reply.
 */
typedef void (*control_burst_cb)(void *ctx, bool replied);
/* A client went away: free what the caller keeps in its data slot. */
typedef void (*control_gone_cb)(void *ctx, struct control_client *cl);

struct control_options {
	const char *path;
	const char *group;        /* NULL: none */
	unsigned max_clients;
	unsigned idle_timeout;    /* seconds */
	control_line_cb line;
	control_burst_cb burst;
	control_gone_cb gone;
	void *ctx;
};

/* Listen on o->path; NULL with a message. */
/*
 * Whether a bloomd answers on the socket at path (a second start must touch
 * nothing of the first's), asked again for up to 5 s while it does: a
 * restart can meet the bloomd before it on its way out (a kill -9 returns
 * before the process is gone).
 */
bool control_still_answered(const char *path);

struct control *control_open(struct event_base *base, const struct control_options *o, char *err,
			     size_t errlen);
/* Close every client and the socket, and remove the socket file. */
void control_close(struct control *c);

/* Append one reply line (a newline is added). */
void control_reply(struct control_client *cl, const char *text, size_t len);

/*
 * Append the start of a long reply line, piece by piece; control_reply adds
 * the rest and ends it. No piece is copied twice, and no buffer the size of
 * the whole reply is needed.
 */
void control_reply_part(struct control_client *cl, const char *text, size_t len);

/* Whether the peer may change state: root, the daemon's uid, or a member of the group. */
bool control_client_trusted(const struct control_client *cl);

/*
 * The open file the client passed last (SCM_RIGHTS, with the bytes of its
 * command), now the caller's to close; -1 if none. The daemon opens no path
 * a client names: bloomctl passes the files it replays this way.
 */
int control_client_take_fd(struct control_client *cl);

/* A slot for the caller's per-client state (NULL at first). */
void **control_client_data(struct control_client *cl);

/*
 * Hold the client's further lines until control_release (its reply is
 * coming later). Returns an id that stays safe to use after the client has
 * gone: control_find gives the client, or NULL.
 */
uint64_t control_hold(struct control_client *cl);
struct control_client *control_find(struct control *c, uint64_t id);
void control_release(struct control_client *cl);

/*
 * A reply too long to queue at once (a listing): the client is held, and
 * more(ctx, cl) is called whenever its unread replies are under
 * CONTROL_MAX_OUTPUT, to add a part (control_reply_part); it returns true
 * once it has added the last (with control_reply), and the client is
 * released. free_ctx(ctx) follows that, or the client's going away.
 */
typedef bool (*control_more_cb)(void *ctx, struct control_client *cl);
void control_stream(struct control_client *cl, control_more_cb more, void *ctx, void (*free_ctx)(void *));


unsigned control_clients(const struct control *c);
uint64_t control_rejected(const struct control *c); /* refused or cut off */

#endif
