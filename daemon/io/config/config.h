/* config.h - the INI configuration: defaults, parsing with inih, validation with file:line. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CONFIG_H
#define BLOOMD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feed.h"
#include "filter.h"
#include "hash.h"
#include "log.h"

/* pass: the list's entries are exceptions, exempting a packet from every other list. */
enum list_action { LIST_ACTION_ALERT, LIST_ACTION_DROP, LIST_ACTION_REJECT, LIST_ACTION_PASS };

#define LIST_NAME_MAX 64
#define LIST_LOCAL "local"   /* the list of entries operators add with bloomctl */
#define CONFIG_MAX_LISTS 31  /* the local list included */
#define CONFIG_MAX_WORKERS 64 /* [capture] workers */
#define CONFIG_REJECT_MARK 0xb10c /* [capture] reject_mark */

/*
 * A named entry list ([list NAME], or [entries] file = PATH): where its
 * entries come from and the labels its alerts carry.
 */
struct list_config {
	char *name;
	char *file;               /* NULL: filled by bloomctl replace (and kept in [store] dir) */
	struct feed_spec format;
	char *category;           /* NULL: none */
	unsigned severity;        /* 1 (highest) to 255, as Suricata's */
	enum list_action action;  /* unset: drop inline, alert passive */
	bool action_given;
	bool pass_packet;         /* action pass: a packet it holds any part of is exempt (else: its addresses are) */
	uint32_t sid;             /* eve's signature_id */
	char *signature;          /* eve's signature (Suricata's msg) */
	double max_bad;           /* a version with a larger fraction of bad lines is refused */
	unsigned min_entries;     /* a version from a feed with fewer entries is refused */
	double max_removed;       /* and one removing a larger fraction of the list's entries; 1: no limit */
	char *categories;         /* iprep: the categories file whose names are the labels; NULL: iprep-N */
	char (*category_names)[ENTRY_CATEGORY_MAX]; /* read from it: [N] is category N's, format points here */
	char *url;                /* NULL: none; else fetched every refresh seconds by bloomd-fetch */
	unsigned refresh;         /* seconds between fetches */
	unsigned fetch_timeout;   /* seconds a fetch may take, connecting included */
	uint64_t max_size;        /* bytes a fetched version may have */
	char *ca_file;            /* NULL: the system's certificate authorities */
	enum list_source { LIST_SOURCE_FEED, LIST_SOURCE_CROWDSEC } source; /* crowdsec: url is a LAPI's */
	char *api_key_file;       /* crowdsec: the bouncer's key (cscli bouncers add), read at start */
	char *scopes, *origins;   /* crowdsec: the decisions asked for (the stream's filters), NULL: any */
	char *scenarios_containing, *scenarios_not_containing;
	unsigned line;            /* where it is defined */
};

struct config {
	char *path;
	/* [capture] */
	char *interface;
	struct config_paths {
		char **path;
		size_t n;
	} files;                  /* pcap files to replay, in order */
	char *bpf;
	unsigned snaplen;
	bool promisc;
	uint64_t buffer_size;     /* bytes; 0: libpcap's default */
	enum capture_mode { CAPTURE_PASSIVE, CAPTURE_INLINE, CAPTURE_XDP } mode;
	bool inline_mode;         /* mode = inline: packets from netfilter queues, judged */
	bool xdp_mode;            /* mode = xdp: addresses dropped at interface's driver, the rest captured */
	enum xdp_attach { XDP_ATTACH_AUTO, XDP_ATTACH_NATIVE, XDP_ATTACH_GENERIC } xdp_attach; /* xdp_mode = */
	unsigned xdp_events_rate; /* events of XDP drops a second at most */
	bool xdp_pin;             /* the program's link pinned: it stays, dropping, while bloomd is down */
	char *xdp_pin_dir;        /* where (a bpf file system); the link is xdp_pin_dir/INTERFACE */
	struct config_queues {
		unsigned first, last;
	} queue;                  /* queue = N or N-M */
	bool fail_open;           /* a full queue accepts (NFQA_CFG_F_FAIL_OPEN) */
	unsigned queue_maxlen;    /* packets a queue holds in the kernel; 0: its default */
	unsigned workers;         /* threads checking live packets; 1: the event loop itself */
	unsigned batch;           /* captured packets checked at once (capture_callbacks.batch_max); 0: auto (engine_batch_max) */
	unsigned tcp_connections; /* TCP connections whose handshakes prove senders (handshake.h), per worker; 0: none */
	uint32_t reject_mark;     /* a rejected packet goes back to the ruleset with this mark */
	/* [filter] */
	uint64_t memory;          /* bytes for all filters; 0: bits_per_entry */
	double bits_per_entry;
	enum filter_layout layout;
	unsigned choices;
	unsigned hashes;          /* 0: best for the size */
	unsigned rounds;          /* 0: the default for the choices */
	enum hash_algo hash;
	/* [list NAME] and [entries] file: lists[0] is always the local list */
	struct list_config *lists;
	size_t nlists;
	/* [signatures] */
	unsigned window;
	double bits_per_window;   /* the signature filter's bits per window */
	double fpr_target;        /* auto-rebuild past this predicted FPR; 0: only by fill */
	bool auto_rebuild;
	/* [output] */
	char *events;             /* path, "-" for stdout, NULL for none */
	char *pcap;               /* matched packets, NULL for none */
	bool alert_once_per_flow; /* [output] alerts = once_per_flow (else every) */
	unsigned flow_timeout;    /* seconds a flow is quiet for an entry before it alerts again */
	char *threshold_file;     /* Suricata threshold.config rules, NULL: none */
	bool eve_extended;        /* [output] eve = extended: matches and blocked at the top too (Suricata's schema refuses them) */
	char *sensor_name;        /* eve's host, NULL: none (default: the host name) */
	unsigned filemode;        /* of the events and pcap files */
	char *metrics_listen;     /* [metrics] listen: ADDRESS:PORT of the HTTP /metrics, NULL: none */
	unsigned metrics_max_connections; /* [metrics] max_connections: open at once; more are answered 503 */
	unsigned metrics_timeout; /* [metrics] timeout: seconds a connection may last, request and reply */
	/* [cluster]: entries shared through a Redis stream; redis NULL: off */
	struct cluster_config {
		char *redis;          /* unix:PATH or tcp://HOST:PORT; NULL: sentinels say, or off */
		char *sentinels;      /* "HOST:PORT,HOST:PORT": Redis Sentinels that name the master; NULL: none */
#define CLUSTER_SENTINELS_MAX 8
		char *sentinel_master; /* the master's name with them */
		unsigned wait_replicas; /* a batch leaves the outbox once WAIT says this many replicas have it */
		char *password;       /* AUTH, or NULL */
		char *user;           /* AUTH's ACL user with the password, or NULL: the default user */
		bool tls;             /* to Redis and the sentinels over TLS, the server's certificate verified */
		char *tls_ca_file;    /* the CAs that certify it, or NULL: the system's store */
		char *tls_cert_file, *tls_key_file; /* this node's client certificate and key, or NULL: none */
		char *tls_server_name; /* the name the certificate must hold, or NULL: the host connected to */
		char *stream;         /* the entry log */
		char *node;           /* this sensor's name (default: the host name) */
		unsigned maxlen;      /* the stream is trimmed to about this many entries */
		unsigned snapshot_every; /* seconds between snapshots this node publishes when up to date; 0: none */
		char *events_key;     /* where [output] events = redis sends them */
		bool events_stream;   /* XADD there (else RPUSH to a list) */
		unsigned events_pending; /* events in flight past which they go to the fallback */
		char *key_file;       /* the shared secret changes are signed with (HMAC-SHA256), or NULL: unsigned */
		uint64_t max_entry_bytes; /* a stream entry larger than this is refused, not applied */
		unsigned max_prefix4, max_prefix6; /* nets from the stream broader than these are refused */
		unsigned timeout;     /* seconds without a reply (or a connection) before it is dropped and made again */
		unsigned digest_every; /* seconds between digests of what this node holds, compared with the others'; 0: none */
	} cluster;              /* on when redis or sentinels is set */
	/* [action]: addresses that match a dropping list go into nftables sets */
	struct action_config {
		char *set4, *set6;    /* "FAMILY TABLE SET", NULL: none */
		unsigned timeout;     /* seconds an address stays in the set */
		unsigned rate;        /* additions a second at most */
		unsigned block;       /* for pair and sig matches: 1 source, 2 destination, 3 both */
		bool manage;          /* bloomd makes table (inet), its sets blocked4/6 and chains, and keeps them */
		char *table;          /* manage: the table's name */
		int priority;         /* manage: its chains' priority */
		bool remove_at_stop;  /* manage: the table goes at stop (fail-open); else it stays (fail-closed) */
		char *protect;        /* "NET,ADDR,...": never put in a set, beside the host's own addresses; NULL: those alone */
		bool protect_infrastructure; /* the host's resolvers, gateways and peers never put in a set either */
	} action;
	bool events_redis;        /* [output] events = redis */
	char *events_fallback;    /* [output] events_fallback: where events go while Redis cannot take them */
	/* [control] */
	char *socket;             /* NULL: none */
	bool socket_set;          /* named in the file (one-shot -r mode uses it only then) */
	char *group;              /* may change state besides root and the daemon's user */
	unsigned max_clients;
	unsigned idle_timeout;    /* seconds */
	/* [store] */
	char *store_dir;          /* NULL: no durable state */
	bool store_set;
	enum config_fsync { CONFIG_FSYNC_NO, CONFIG_FSYNC_EVERYSEC, CONFIG_FSYNC_ALWAYS } fsync;
	uint64_t journal_max;     /* bytes of journal that trigger a snapshot */
	/* [service] */
	char *user;               /* switch to this user once capture is open; NULL: stay */
	/* [log] */
	enum log_level log_level;
	enum log_target log_target;
	enum log_format log_format;
};

/* Called once for each problem, with "FILE:LINE: message" (or "FILE: message"). */
typedef void (*config_error_cb)(void *ctx, const char *message);

/*
 * Load path over the defaults and validate the whole. Relative paths inside
 * the file are taken relative to the file's directory. Returns the config,
 * or NULL after reporting every problem found through on_error.
 */
struct config *config_load(const char *path, config_error_cb on_error, void *ctx);

/* The defaults alone (no file). */
struct config *config_defaults(void);

void config_free(struct config *c);

/* The list named name, or NULL. */
const struct list_config *config_list(const struct config *c, const char *name);

/* One key of the file, as the key table has it. */
struct config_key_about {
	const char *section;      /* "list" for every [list NAME] */
	const char *name;
	bool restart;             /* a reload keeps the running value until the next start */
};

/* The table's key i; false past its end. */
bool config_key_at(size_t i, struct config_key_about *out);

/* The table itself sound (each field fits its key's type, no key twice): 0, or -1 naming the row in err. */
int config_keys_check(char *err, size_t errlen);

/* Whether two of a configuration's strings are the same: both unset, or equal. */
bool config_same_string(const char *a, const char *b);

/*
 * Keys that take a restart: fresh gets running's values and running fresh's,
 * and changed is told "[section] key" for each that differs. Swapping is its
 * own inverse: called again, it undoes itself (a reload refused).
 */
void config_keep_running(struct config *running, struct config *fresh,
			 void (*changed)(void *ctx, const char *what), void *ctx);

/* "always", "everysec" or "no". */
const char *config_fsync_name(enum config_fsync f);

/* "alert", "drop", "reject" or "pass". */
const char *config_list_action_name(enum list_action a);


/* Whether [cluster] is on: redis or sentinels set. */
bool config_cluster_on(const struct config *c);

#endif
