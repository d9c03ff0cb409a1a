/* service_internal.h - the daemon's state: a few things every service file reads, and parts each owned by its files. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_INTERNAL_H
#define BLOOMD_SERVICE_INTERNAL_H

/*
 * Only the service files include this; everyone else goes through
 * service.h. Each part of struct service is declared in its owner's header,
 * and only the files that header names touch its members (tests/layers.t
 * checks): the others ask the owner's functions. The matcher, the engine,
 * the lists and the outputs are every file's.
 */

#include "lists.h"
#include "service.h"
#include "service_action.h"
#include "service_action_xdp.h"
#include "service_capture.h"
#include "service_cluster.h"
#include "service_rebuild.h"
#include "service_state.h"
#include "service_upkeep.h"
#include "service_versions.h"

/* The sockets bloomd answers on. Owned by: service_control.c */
struct service_control {
	struct control *control;
	struct metrics_http *metrics; /* [metrics] listen, or NULL */
};

struct service {
	struct config *cfg;
	struct event_base *base;
	struct matcher *matcher;
	struct engine engine;      /* its flows and thresholds are the service's: made and freed here */
	struct lists lists;        /* which list holds what, and their labels */
	struct events *events;
	struct service_control control;       /* below */
	struct service_state state;           /* service_state.h */
	struct service_rebuilding rebuilding; /* service_rebuild.h */
	struct service_capture capture;       /* service_capture.h */
	struct service_cluster cluster;       /* service_cluster.h */
	struct service_action_xdp action_xdp; /* service_action_xdp.h */
	struct service_action action;         /* service_action.h */
	struct service_upkeep upkeep;         /* service_upkeep.h */
	struct service_versions versions;     /* service_versions.h */
};

/*
 * The service files call each other without a circle (tests/layers.t),
 * roughly from the top:
 *   service.c                 made, started and stopped; what the rest of the daemon reads of it
 *   service_reload.c          reload, reopen, statistics, the alerts' flow table
 *   service_upkeep.c          the once-a-second housekeeping, problems reported, uptime
 *   service_state.c           [store]: loading, snapshots, the journal's sync
 *   service_rebuild.c         background rebuilds
 *   service_fetch.c           the lists with a url fetched every refresh
 *   service_cluster.c         the stream followed, events to Redis, status
 *   service_action.c          [action]: the nftables sets, blocked and unblocked
 *   service_capture.c         the replay queue, live capture, inline, the workers and their copy, propagation
 *   service_lists.c           lists loaded, replaced, flushed, kept; alert labels
 *   service_slices.c          a list's new version taken a slice at a time
 *   service_change.c          the local list's adds and deletes, and what each origin journals and shares
 *   service_action_mirror.c   [action] manage: bloomd's nft table kept equal to the lists
 *   service_action_xdp.c      mode = xdp: the XDP set kept equal to the dropping and pass lists
 *   service_revs.c            a list's version logged, its revision kept across restarts
 *   service_followers.c       the log of changes the workers' copy, the XDP set and the mirror follow
 *   service_state_journal.c   what the state holds and says; a change journaled
 *   service_control.c         the control socket and the metrics endpoint
 */

/* The clock, and the configuration's view: what its settings are to the outputs. */
static inline uint64_t service_now(void)
{
	return (uint64_t)time(NULL);
}

static inline struct events_options service_events_options(const struct config *cfg)
{
	return (struct events_options){
		.json_path = cfg->events, .pcap_path = cfg->pcap, .snaplen = cfg->snaplen, .filemode = cfg->filemode,
		.host = cfg->sensor_name, .extended = cfg->eve_extended,
	};
}

/* The rules of cfg's threshold_file into *out (NULL: none); -1 after reporting its problems. */
static inline int service_thresholds_load(const struct config *cfg, struct thresholds **out, threshold_error_cb on_error,
			    void *ctx)
{
	*out = NULL;
	if (cfg->threshold_file == NULL)
		return 0;
	*out = thresholds_load(cfg->threshold_file, on_error, ctx);
	return *out ? 0 : -1;
}

/*
 * service_control.c: the control socket (NULL options: none) and, with [metrics]
 * listen, the metrics endpoint answering with scrape (-1 logged); closed.
 */
int service_control_open(struct service *s, const struct control_options *control, char *(*scrape)(void *ctx));
void service_control_close(struct service *s);
/* Send reply to the control client waiting as waiter (if it still is), and free it. */
void service_reply_to(struct service *s, uint64_t waiter, json_t *reply);
/*
 * Waiters for a job and for the one after it (asked for while it ran): add
 * one (0: none; -1 without memory); tell each of w the same (reply is not
 * taken), then next's become w's: whether there are any (the next job is
 * to begin); free them untold (at stop, the control socket gone).
 */
int service_waiters_add(struct service_waiters *w, uint64_t id);
bool service_waiters_tell(struct service *s, struct service_waiters *w, struct service_waiters *next, json_t *reply);
void service_waiters_free(struct service_waiters *w);
/* The control socket's and the metrics endpoint's figures, into stats o. */
void service_control_stats(const struct service *s, json_t *o);

/* service_reload.c: the flow table [output] alerts asks for (made, kept or freed); -1 without memory. */
int service_alert_policy(struct service *s);

/* service_lists.c */
/*
 * At start: bring the lists in line with cfg and read every list's file,
 * and the versions kept in the state directory for those that could not be
 * read; *refused counts the lists refused. -1 (logged) when a kept version
 * is damaged: bloomd does not start, as with a damaged snapshot.
 */
int service_lists_load(struct service *s, const struct config *cfg, unsigned *refused);
/*
 * At a reload: the same, each list's file taken a slice at a time (the
 * loop serves capture and control meanwhile); done is told how many were
 * refused once the last is taken or refused, maybe before this returns.
 * rl is the caller's, and in use until then.
 */
typedef void (*service_lists_reloaded_cb)(struct service *s, unsigned refused, void *ctx);
struct service_lists_reloading {
	unsigned pending, refused;
	service_lists_reloaded_cb done;
	void *ctx;
};
void service_lists_reload(struct service *s, const struct config *cfg, struct service_lists_reloading *rl,
			  service_lists_reloaded_cb done, void *ctx);
/* Keep again the lists whose versions could not be kept (housekeeping); changes are accepted once all are. */
void service_lists_keep_again(struct service *s);
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
/* service_revs.c: the bad lines of one version being read, logged up to a limit (a feed_bad_cb's ctx). */
struct service_bad_lines {
	const char *list, *source;
	unsigned logged;
};
void service_log_bad_line(void *ctx, unsigned line, const char *text, const char *why);
/* Log what came of a version of list i from source: taken or refused (r), and the bad lines not shown. */
void service_list_loaded(struct service *s, int i, const char *source, const struct service_bad_lines *b,
			 const struct list_load *r);

#endif
