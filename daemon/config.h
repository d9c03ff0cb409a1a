/* config.h - the INI configuration: defaults, parsing with inih, validation with file:line. */
#ifndef BLOOMD_CONFIG_H
#define BLOOMD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "hash.h"
#include "log.h"

struct config {
	char *path;
	/* [capture] */
	char *interface;
	char **files;             /* pcap files to replay, in order */
	size_t nfiles;
	char *bpf;
	unsigned snaplen;
	bool promisc;
	uint64_t buffer_size;     /* bytes; 0: libpcap's default */
	/* [filter] */
	uint64_t memory;          /* bytes for all filters; 0: bits_per_entry */
	double bits_per_entry;
	enum filter_layout layout;
	unsigned choices;
	unsigned hashes;          /* 0: best for the size */
	unsigned rounds;          /* 0: the default for the choices */
	enum hash_algo hash;
	/* [entries] */
	char **entry_files;
	size_t nentry_files;
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

/* "always", "everysec" or "no". */
const char *config_fsync_name(enum config_fsync f);

#endif
