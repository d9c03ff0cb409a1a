/* service_internal.h - the daemon's state, shared by the service files. */
#ifndef BLOOMD_SERVICE_INTERNAL_H
#define BLOOMD_SERVICE_INTERNAL_H

/* Only the service files include this (listed below); everyone else goes through service.h. */

#include "clock.h"
#include "cluster.h"
#include "inline.h"
#include "lists.h"
#include "setaction.h"
#include "statedir.h"
#include "workers.h"
#include "metrics_http.h"
#include "service.h"

struct replay_item {
	char *path;                /* or, with fd, the name the client gave it */
	int fd;                    /* a file the client passed open, or -1: path is opened */
	uint64_t waiter;           /* control client waiting for it (control_hold id), or 0 */
	struct replay_item *next;
};

struct service {
	struct config *cfg;
	struct matcher *matcher;
	struct events *events;
	struct event_base *base;
	struct engine engine;
	struct flows *flows;       /* [output] alerts = once_per_flow, or NULL */
	struct lists lists;        /* which list holds what, and their labels */
	const char *list_names[LISTS_SLOTS]; /* lists.slot[i].name, for the events */
	struct thresholds *thresholds; /* [output] threshold_file's rules, or NULL */
	bool one_shot;             /* exit when the replay queue is empty */
	int exit_code;
	json_t *sources;           /* per replayed source: name, packets, error */

	struct replay_item *queue, *queue_tail, *current;
	struct capture *replaying;
	uint64_t current_packets;  /* of the file just finished */
	char current_error[512];
	uint64_t replay_matched_before;
	struct timespec last_batch;
	double replay_max_gap_ms;
	struct capture *live;
	struct inline_queue *inline_queue; /* [capture] mode = inline, or NULL */
	struct set_action *set_action; /* [action] set, or NULL */
	struct log_limit block_errors_logged;
	char queue_name[32];       /* "nfqueue0", for events' in_iface; with workers, passive: the interface */
	struct workers *workers;   /* [capture] workers > 1, or NULL */
	struct matcher *replica;   /* the copy the workers read, when they are not reading matcher */
	struct match_log *changes; /* matcher's changes since replica (and the XDP set) were in step */
	uint64_t published;        /* matcher_changes when it was */
	struct event *publisher;   /* changes without a client waiting reach the workers within PUBLISH_MS */
	struct xdp *xdp;           /* [capture] mode = xdp, or NULL */
	bool actions_stale;        /* the lists' actions changed: every entry looked at again (XDP set, nft mirror) */
	bool mirror_stale;         /* the nft mirror missed a change (no memory): every entry looked at again */
	struct event *table_watch; /* [action] manage: the kernel's announcements of changes to the table */
	char xdp_pin_path[512];    /* [capture] xdp_pin_dir/interface */
	struct log_limit xdp_errors_logged;
	struct log_limit publish_errors_logged;
	struct log_limit events_lost_logged;

	struct statedir state;     /* the state directory (fd -1: none) */
	struct journal *journal;   /* NULL: no durable state */
	uint64_t generation;
	bool journal_stale;        /* a snapshot went in but its journal did not: changes refused */
	time_t last_reload, last_save;  /* when the last reload, snapshot was tried (0: never) */
	bool last_reload_ok, last_save_ok;
	char store_error[512];     /* why the state cannot be written now ("": it can); changes refused */
	uint32_t lists_unkept;     /* lists whose version could not be kept (holder bits): store_error stays */
	time_t next_save_try;      /* with a broken journal: when housekeeping tries a snapshot again */
	bool restored;             /* the filters came from a snapshot */
	struct ttl *ttl;
	time_t started;

	struct rebuild *rebuild;
	bool rebuild_again;        /* the settings changed while it ran: another when it is done */
	uint64_t rebuild_waiter;
	uint64_t rebuilds;
	struct rebuild_result last_rebuild;

	struct control *control;
	struct metrics_http *metrics; /* [metrics] listen, or NULL */
	struct cluster *cluster;   /* [cluster] redis, or NULL */
	struct slicing *slicing;   /* a version from the stream being taken in slices, or NULL */
	struct service_fetches *fetches; /* the lists with a url, or NULL when none has had one */
	struct event *housekeeping;
	time_t problems_reported;  /* the last warning about malformed or dropped packets */
	uint64_t problems_seen[PACKET_STATUS_COUNT], drops_seen, event_errors_seen, unruled_seen;
	bool stopping;
};

/*
 * The service files form a tree, each using only those below it:
 *   service.c         start and stop, housekeeping, the set action
 *   service_reload.c  reload, reopen, statistics
 *   service_state.c   loading, snapshots, rebuilds
 *   service_sources.c the replay queue, live capture, the workers and their copy
 *   service_fetch.c   the lists with a url fetched every refresh
 *   service_cluster.c the stream followed, events to Redis, status
 *   service_lists.c   lists loaded, replaced, flushed, kept; alert labels
 *   service_slices.c  a version from the stream taken a slice at a time
 *   service_change.c  the local list's adds and deletes, journaled, and what each origin shares
 *   service_common.c  the clock, the configuration's views, the accessors, lines logged
 *   service_revs.c    each list's revision kept across restarts
 *   service_xdp.c     mode = xdp: the XDP set kept equal to the dropping and pass lists
 *   service_mirror.c  [action] manage: bloomd's nft table kept equal to the same lists
 * Below, what each gives the ones above it.
 */

/* service_reload.c: the packet counters of the loop and of every worker, summed; the kernel's of each source. */
void service_packet_totals(struct service *s, struct workers_totals *t);

/* service_state.c */
json_t *service_rebuild_json(const struct rebuild_result *r);

/* service_sources.c: send reply to the control client waiting as waiter (if it still is), and free it. */
void service_reply_to(struct service *s, uint64_t waiter, json_t *reply);
/* service_sources.c: record the matcher's changes (for the workers' copy, the XDP set) and publish them every PUBLISH_MS; -1 logged. */
int service_record_changes(struct service *s);

/*
 * service_xdp.c: the changes recorded since the last publish made to the
 * XDP set (every entry again when the log cannot say which, or the lists'
 * actions changed); its statistics.
 */
void service_xdp_sync(struct service *s);
/* The program loaded and filled (-1 logged); then attached, once the changes are recorded. */
int service_xdp_open(struct service *s, const char *interface);
int service_xdp_attach(struct service *s);
/* service_sources.c: the XDP program detached (unless pinned) and freed. */
void service_stop_xdp(struct service *s);
json_t *service_xdp_stats(const struct service *s);

/*
 * service_mirror.c: the lists' address and net entries told to bloomd's
 * nft table, all of them (fill, before the table is made: set_action_options)
 * or the changes since the last publish, committed; the kernel's
 * announcements watched (start: -1 logged; the changes are then recorded
 * by service_record_changes) and answered.
 */
int service_mirror_fill(void *ctx, struct set_mirror *m);
/*
 * [action]: the sets opened (manage: the table made with the lists'
 * elements in), as soon as the lists are loaded, before the filters are
 * built: the kernel drops what the lists hold while bloomd is still
 * starting. -1 logged.
 */
int service_action_open(struct service *s);
void service_mirror_sync(struct service *s);
int service_mirror_start(struct service *s);
void service_mirror_stop(struct service *s);
/* e told to the table now, with its holders and expiry as they are (an expiry changed without a change of holders). */
void service_mirror_entry(struct service *s, const struct entry *e);
/* Whether a dropping list holds addr in the table (addr or a net holding it): the lists' names in names, if so. */
bool service_mirror_listing(const struct service *s, const uint8_t *addr, int family, char *names, size_t size);

/*
 * service_fetch.c: the lists with a url fetched as the configuration says
 * (starting: from the validators kept; -1 logged when bloomd-fetch is not
 * there or without memory); their counts (stats' "fetches"); stopped.
 */
int service_fetch_configure(struct service *s, bool starting);
json_t *service_fetches_stats(const struct service *s);
void service_fetch_stop(struct service *s);

/* service_cluster.c: follow the stream ([cluster] redis; -1 after logging); events to Redis. */
int service_cluster_start(struct service *s);
void service_cluster_events(struct service *s, struct events *ev);

/* service_lists.c */
/*
 * Bring the running lists in line with cfg and read every list's file (and,
 * starting, the versions kept in the state directory for those that could
 * not be read); *refused counts the lists refused. -1 (logged) when a kept
 * version is damaged: bloomd does not start, as with a damaged snapshot.
 */
int service_lists_load(struct service *s, const struct config *cfg, bool starting, unsigned *refused);
/* Keep again the lists whose versions could not be kept (housekeeping); changes are accepted once all are. */
void service_lists_keep_again(struct service *s);
/*
 * List i's new version read from f (called source), as its file's would be:
 * guarded, kept, taken; its relative times stated at stated (Unix seconds);
 * whole: a CrowdSec stream document asked for whole (startup=true). 0 if
 * taken, -1 if refused (logged).
 */
int service_list_take(struct service *s, int i, FILE *f, const char *source, uint64_t stated, bool whole);
/* What list i's last load found (replace's "load"). */
json_t *service_list_load_json(const struct service *s, int i);
/* service_lists_json's own part: the lists without their fetches. */
json_t *service_lists_own_json(struct service *s);
/* Per list: entries, version, when and whether its last version was taken (stats). */
json_t *service_lists_stats(const struct service *s, const struct stats *totals);
/*
 * A list's new version or flush from the stream: a flush at once, a new
 * version in slices (STARTED); REFUSED with a message (no such list without
 * a file here), LATER (no memory, or the state cannot be written).
 */
enum cluster_apply service_list_from_cluster(struct service *s, const char *name, const char *data, size_t len,
					     char *err, size_t errlen);
/* The engine labels each hit from the lists. */
void service_label_hits(struct service *s);

/*
 * service_slices.c: a list's version from the stream read, kept and taken
 * in slices, so that the loop is never held long: start returns
 * CLUSTER_APPLY_STARTED (cluster_applied follows), or LATER with a message.
 * Whatever else stages a version, flushes a list or changes the lists
 * settles first (the rest done at once); stopping cancels it.
 */
enum cluster_apply service_slices_start(struct service *s, int i, const char *data, size_t len, char *err,
					size_t errlen);
void service_slices_settle(struct service *s);
void service_slices_cancel(struct service *s);

/* service_change.c: journal a change (when there is a store); -1 with a message when it cannot be. */
int service_journal_op(struct service *s, enum persist_op op, const struct entry *e, uint64_t expiry,
		       char *err, size_t errlen);
/* List i's new version (entry lines) or flush (data NULL), to the stream if its origin shares it. */
void service_share_list(struct service *s, enum service_origin from, int i, const char *data, size_t len);
/* What a change from the stream came to (rc: the local path's, -1 with its message). */
enum cluster_apply service_stream_outcome(const struct service *s, int rc);

/*
 * service_revs.c: after list i took a version, its revision is what the
 * state directory kept when the entries are the same as they were before a
 * restart (the next one when not), and is kept for the next start.
 */
void service_list_revised(struct service *s, int i);

/* service_common.c */
/* Unix seconds now. */
uint64_t service_now(void);
/* The matcher's settings of a configuration. */
struct match_config service_match_config(const struct config *cfg);
/* The outputs' settings of a configuration (pointing into it). */
struct events_options service_events_options(const struct config *cfg);
/* The rules of cfg's threshold_file into *out (NULL: none); -1 after reporting its problems. */
int service_thresholds_load(const struct config *cfg, struct thresholds **out, threshold_error_cb on_error,
			    void *ctx);
/* The flow table [output] alerts asks for (made, kept or freed); -1 without memory. */
int service_alert_policy(struct service *s);
/* Whether a version from the stream (entry lines) has a net broader than [cluster] allows. */
bool service_version_too_broad(const struct service *s, const char *data, size_t len, char *err, size_t errlen);
/* Whether e is a net broader than [cluster] max_prefix4 or max_prefix6 allow from the stream (err says so). */
bool service_entry_too_broad(const struct service *s, const struct entry *e, char *err, size_t errlen);
/* List i's version could not be kept (err): changes are refused until housekeeping keeps it. */
void service_list_unkept(struct service *s, int i, const char *err);
/* The bad lines of one version being read, logged up to a limit (a feed_bad_cb's ctx). */
struct service_bad_lines {
	const char *list, *source;
	unsigned logged;
};
void service_log_bad_line(void *ctx, unsigned line, const char *text, const char *why);
/* Log what came of a version of list i from source: taken or refused (r), and the bad lines not shown. */
void service_list_loaded(struct service *s, int i, const char *source, const struct service_bad_lines *b,
			 const struct list_load *r);

#endif
