/* cluster_internal.h - what the cluster's files share: its state, and the helpers one file gives the others. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CLUSTER_INTERNAL_H
#define BLOOMD_CLUSTER_INTERNAL_H

/*
 * For cluster*.c only. The files form a tree: cluster.c (connections, lag,
 * open, tick, close, status) uses cluster_reader.c (following the stream)
 * and cluster_writer.c (changes, events, snapshots out); both use
 * cluster_reply.c (the shape of Redis's replies), and all of them
 * cluster_state.c (IDs, problems, the cursor and the outbox), which uses
 * none of them. Each function below is described where it is defined.
 */
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cluster.h"
#include "cluster_seen.h"
#include "cluster_sign.h"
#include "log.h"
#include "state_dir.h"
#include "stats.h"

#define READ_COUNT 1000          /* entries an XREAD returns at most */
#define TEXT_OF(x) #x
#define TEXT(x) TEXT_OF(x)
#define READ_BLOCK_MS "2000"     /* how long it waits for one */
#define LAG_CAP 1000             /* lag counted up to this many entries */
#define STALE_RETRY_SECONDS 2
#define SNAPSHOT_SEND_SECONDS 10 /* a child sending a snapshot: for its connect, and for each reply */
#define RETRY_MAX_SECONDS 30
#define ID_MAX 48
#define DELAYS 1024               /* the last so many propagation delays, for their percentiles */

/* Where a problem was met: each is cleared by that side's next success only. */
enum error_slot { ERROR_READER, ERROR_WRITER, ERROR_FILES, ERROR_SLOTS };
extern const char *const CLUSTER_ERROR_SLOT_NAMES[ERROR_SLOTS];

struct stream_id {
	uint64_t ms, seq;
};

#define HEAL_KEEP 100000          /* acknowledged changes kept at most (cluster_heal_keep) */
#define HEAL_BYTES (16u << 20)    /* and their bytes */
#define TLS_WHY_MAX 160           /* why a TLS session failed, as the verify callback wrote it */

/* One connection: reader or writer. */
struct conn {
	struct cluster *c;
	redisAsyncContext *ac;     /* NULL: down */
	bool up;                   /* connected (and authenticated, if asked) */
	const char *name;
	enum error_slot slot;      /* where its problems are said */
	struct event *heard;       /* while up: notes each time bytes arrive (heard_at) */
	time_t heard_at;           /* since when it has waited without hearing anything (or was last idle) */
	char tls_why[TLS_WHY_MAX]; /* with TLS: why its session's check failed, "" if it did not */
};

/* Where Redis is: a Unix socket (path), or a host and port. */
struct redis_where {
	char path[108];
	char host[256];
	int port;
};

/* Asking the sentinels where the master is: one at a time, in turn. */
struct sentinel_ask {
	redisAsyncContext *ac;     /* the sentinel being asked; NULL: none */
	unsigned next;             /* which to ask next */
	time_t since;              /* when this one was asked */
	char tls_why[TLS_WHY_MAX];
};

/* The outbox: changes journaled here, not yet acknowledged by the stream. */
struct outbox {
	char **lines;              /* "@CHANGE-ID OP EXPIRES ENTRY[\x1fDATA]": DATA's newlines as \x1f */
	size_t head, sent, n, cap; /* [head, sent) in flight, [sent, n) waiting */
	int fd;                    /* cluster.outbox, or -1 */
	bool dirty;                /* written, not fsync'd */
	bool failed;               /* a write or fsync failed: the file is not trusted until written anew */
	char (*ids)[ID_MAX];       /* the stream IDs EXEC gave the batch in flight, by its place in it */
	size_t ids_n, ids_cap;
	char written[ID_MAX];      /* the batch in flight is in the stream from this ID on, short of replicas; "" if not */
	bool asking;               /* a WAIT (or the check that it is still there) is in flight for it */
};

/* This node's changes the stream acknowledged, the newest kept: one the stream lost is found, and sent again. */
struct acked_change {
	char *line;                /* as in the outbox */
	char id[ID_MAX];           /* where the stream took it */
};

struct cluster_heal {
	struct acked_change *ring;
	size_t start, n, bytes;    /* ring[start .. start + n) modulo HEAL_KEEP */
	bool wanted;               /* look for lost ones when the writer is up (a new connection, a divergence) */
	bool asking;               /* a look is in flight */
	size_t looked;             /* how many of the ring this look has covered */
	size_t chunk;              /* and how many after them it asked about */
	uint64_t resent;           /* changes found lost and sent again */
};

/* This node's digest of what it holds, published and compared with the others' at the same place. */
struct cluster_digest {
	uint64_t window;           /* the period (time / digest_every) of mine below */
	char *mine;                /* "HORIZON PLACE" and the lists' lines, as published; NULL: none yet */
	bool compared, asking;
	bool placing;              /* the place is asked of Redis, for the cursor below */
	char placed_at[ID_MAX];
	unsigned differing;        /* comparisons in a row that found another node holding otherwise */
	bool divergent;            /* two of them did (and none has agreed since) */
	char divergence[300];      /* with whom and where */
	time_t divergent_since;
	uint64_t found;            /* divergences found (a stretch counts once) */
	time_t compared_at;        /* when one last found a node to compare with */
};

struct cluster {
	struct event_base *base;
	const struct cluster_config *cfg;
	struct cluster_callbacks cb;
	const struct state_dir *dir; /* the state directory, or NULL */
	bool sync_always;
	struct conn reader, writer;
	struct redis_where master; /* where both connect: [cluster] redis, or as the sentinels said */
	bool master_known;         /* with sentinels: said since a connection was last lost */
	struct sentinel_ask ask;
	struct ssl_ctx_st *tls;    /* [cluster] tls: the context every session is made from; NULL: plain TCP */
	char snapshot_key[256];
	char nodes_key[256];       /* STREAM:nodes: each node's mark, written where a WAIT must cover a batch */

	char cursor[ID_MAX];       /* last stream ID applied */
	bool cursor_dirty;
	enum { READER_IDLE, READER_READING, READER_STALE } state;
	bool gap;                  /* the last check found the stream trimmed past the cursor */
	bool joining;              /* a node that applied nothing yet: the snapshot first, if there is one */
	bool join_checked;         /* it was looked for (taken, or none usable) */
	bool republish;            /* the stream was lost: this node's entries go out as the snapshot */
	bool careful;              /* a read passed cluster_read_bound: entries one at a time, each sized first */
	bool resyncing;            /* the cursor was past the stream's end: following it again from its start */
	bool rebuilding;           /* and the stream was lost (Redis's data): republished, followed again */
	uint64_t desyncs;
	char last_generated[ID_MAX]; /* the stream's last ID, as the last check found it */
	char blocked_at[ID_MAX];   /* an entry that could not be applied now, tried again; "" when none */
	struct cluster_applying {  /* an entry or a snapshot the daemon applies in slices (CLUSTER_APPLY_STARTED): reading waits */
		bool on;
		char id[ID_MAX];
		struct change_id change;
		bool identified;
		char what[200];    /* "replace LIST from NODE", for messages */
		bool snapshot;     /* the snapshot at id: cluster_restored follows, not cluster_applied */
		char *seen;        /* and the changes it covers (its seen lines), or NULL */
	} applying;
	unsigned retry_seconds;    /* how long until it is (doubling up to RETRY_MAX_SECONDS) */
	time_t stale_since;
	struct outbox out;

	uint64_t applied, apply_errors, published, restored, duplicates;
	uint64_t rollbacks;        /* snapshots not taken: older than what this node applied */
	char rollback_at[ID_MAX];  /* the ID of the last such snapshot, counted once however often it is met */
	uint64_t incarnation;      /* this start's, drawn at random: with next_seq, each change's identity */
	uint64_t next_seq;
	struct cluster_seen *seen; /* the changes applied, by identity: a re-send is passed */
	struct sign_key *key;      /* [cluster] key_file's: changes and snapshots signed and checked; NULL: none */
	uint64_t unauthenticated, oversized; /* entries passed: no or a wrong mac; larger than max_entry_bytes */
	struct log_limit unauthenticated_logged;
	uint64_t events_sent, events_pending, events_failed;
	char last_id_seen[ID_MAX]; /* the stream's newest ID, from the lag check */
	char trimmed_to[ID_MAX];   /* where a snapshot must reach, when the stream was trimmed past us */
	struct cluster_config own; /* a copy: a reload frees the configuration's */
	uint64_t lag_entries;
	bool lag_capped, lag_asked;
	time_t last_snapshot;      /* when this node last published one (snapshot_every) */
	struct cluster_snapshotting { /* this node's snapshot, from cluster_snapshot until Redis has it */
		bool making;
		char id[ID_MAX];   /* where the stream stood when its entries were fixed */
		char *seen;        /* and what this node had seen of each other then */
		size_t seen_len;
	} snap;
	char errors[ERROR_SLOTS][300]; /* the last problem of the reader, the writer, the state files; "" when none */
	uint64_t error_seq[ERROR_SLOTS]; /* when each was set, to say the newest */
	uint64_t errors_set;
	struct cluster_heal heal;
	struct cluster_digest digest;
	char digests_key[256];     /* STREAM:digests: each node's digest */
	char own_last[ID_MAX];     /* the stream ID of this node's newest change the stream took */
	char publish_refused[200]; /* Redis's NOPERM to this node's writes since a batch was last taken; "" when none */
	bool closing;
	bool timed_out;            /* the reader was dropped for silence: stale until it follows again */
	/* How long other nodes' changes took to be applied here: from their XADD (the ID's time) on. */
	uint32_t delay_ms[DELAYS];
	uint64_t ndelays;
	struct stats_histogram delay_seconds; /* the same, every change since start */
};

/* cluster_state.c */
struct stream_id cluster_parse_id(const char *text);
int cluster_id_cmp(const char *a, const char *b);
void cluster_set_error(struct cluster *c, enum error_slot slot, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cluster_clear_error(struct cluster *c, enum error_slot slot);
const char *cluster_newest_error(const struct cluster *c);
int cluster_load_cursor(struct cluster *c, char *err, size_t errlen);
void cluster_save_cursor(struct cluster *c);
int cluster_outbox_push(struct cluster *c, char *line);
int cluster_load_outbox(struct cluster *c, char *err, size_t errlen);
void cluster_outbox_failed(struct cluster *c, int e);
void cluster_sync_outbox(struct cluster *c);
void cluster_rewrite_outbox(struct cluster *c);
void cluster_heal_keep(struct cluster *c, char *line, const char *id);
struct acked_change *cluster_heal_at(const struct cluster_heal *h, size_t i);
int cluster_auth_argv(const struct cluster *c, const char *argv[3]);

/* cluster_reply.c */
extern const char *const CLUSTER_OP_NAMES[4]; /* by enum cluster_op_kind */
extern const char CLUSTER_MISSING_SCRIPT[];
const redisReply *cluster_field(const redisReply *r, const char *name);
void cluster_bad_reply(struct conn *k, const char *command, const redisReply *r);

/* k dropped at once (its callbacks get no reply), made again by the tick. */
void cluster_drop(struct conn *k);
/*
 * Whether a command was sent (rc: what redisAsyncCommand said). One hiredis
 * would not queue (the connection closing, or no memory) drops k at once,
 * said in the status and the log: nothing waits for a reply that will not come.
 */
bool cluster_sent(struct conn *k, int rc, const char *command);
void cluster_change_fields(const struct cluster *c, const redisReply *fields, struct sign_field out[7]);
bool cluster_change_of(const redisReply *e, struct change_id *id);
bool cluster_entry_shaped(const redisReply *e);
bool cluster_id_valid(const char *text);
int cluster_op_kind(const char *name);
bool cluster_reply_array(const redisReply *r, size_t n, bool any);
const char *cluster_reply_text(const redisReply *r);
struct sign_field cluster_text_field(const redisReply *r);

/* cluster_reader.c */
void cluster_reader_read(struct cluster *c);
unsigned long long cluster_read_bound(const struct cluster *c);
void cluster_reader_too_much(struct cluster *c);

/* cluster_writer.c */
void cluster_writer_connected(struct cluster *c);
void cluster_writer_tick(struct cluster *c);

/* cluster_tls.c */
int cluster_tls_open(struct cluster *c, const struct cluster_config *k, char *err, size_t errlen);
void cluster_tls_close(struct cluster *c);
int cluster_tls_start(const struct cluster *c, redisContext *rc, const char *host, char why[TLS_WHY_MAX]);
const char *cluster_tls_why(const char *why, const char *errstr, char *out, size_t len);

/* cluster_digest.c */
void cluster_digest_tick(struct cluster *c);
void cluster_digest_close(struct cluster *c);
json_t *cluster_digest_status(const struct cluster *c);
void cluster_heal_tick(struct cluster *c);

/* cluster_writer.c (besides) */
int cluster_outbox_append(struct cluster *c, char *line);

/* cluster_sentinel.c */
void cluster_sentinel_tick(struct cluster *c);
void cluster_sentinel_close(struct cluster *c);
void cluster_check_role(struct cluster *c, struct conn *k);
bool cluster_where_parse(const char *text, struct redis_where *w);
void cluster_where_text(const struct redis_where *w, char *out, size_t len);

#endif
