/* config_internal.h - what the config files share: the loader, the setters, each part's keys. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CONFIG_INTERNAL_H
#define BLOOMD_CONFIG_INTERNAL_H

/*
 * Only the config files include this. A tree: config.c (the file, its lines
 * and the rules about the whole) uses config_keys.c (the key table); both
 * use config_lists.c, config_cluster.c and config_set.c, which use none of
 * the others but config_set.c.
 */

#include "config.h"

/* What a load is working on; the reader counts lines so errors can name them. */
struct loader {
	struct config *c;
	char *text;                /* the whole file, NUL-terminated */
	size_t len, at;            /* its length, and where the reader is */
	struct seen_key {
		char *name;        /* "section.key" */
		unsigned line;     /* where it was first given */
	} *seen;                   /* the keys given, to name both lines of a repeat */
	size_t nseen, seen_cap;
	const char *dir;           /* of the config file, for relative paths */
	unsigned line;
	unsigned problems;
	config_error_cb on_error;
	void *ctx;
};

/* How a key's value is read, and what its field is. */
enum key_type {
	KEY_UINT,     /* unsigned, min to max; word: stores word_is */
	KEY_INT,      /* int, min to max */
	KEY_NUMBER,   /* double, min to max; word: stores word_is */
	KEY_SIZE,     /* uint64_t bytes (4MiB, 512KiB, 65536), min to max */
	KEY_SECONDS,  /* unsigned seconds (90, 90s, 15m, 1h, 1d, 1h30m), min to max */
	KEY_BOOL,     /* yes|no|true|false|on|off|1|0 */
	KEY_MARK,     /* uint32_t packet mark, 1 to 0xffffffff, decimal or 0x hex */
	KEY_CHOICE,   /* one of names: its index plus min, in a bool or an int-sized enum */
	KEY_STRING,   /* char *, valid() if given */
	KEY_PATH,     /* char *, relative to the file's directory */
	KEY_PATHS,    /* struct config_paths: one more path each time the key is given */
	KEY_CUSTOM,   /* parse() reads it; the field is what a reload compares and keeps */
};

struct config_key;
/* A key's value read into base (struct config, or struct list_config for [list NAME]): 1, or 0 after a problem. */
typedef int (*config_parse_fn)(struct loader *ld, const struct config_key *k, void *base, const char *value);

/* One key: a row of the table in config_keys.c, the only place the keys are listed. */
struct config_key {
	const char *section;        /* "list" for every [list NAME] */
	const char *name;
	enum key_type type;
	size_t offset, size;        /* the field, in struct config or struct list_config */
	double min, max;            /* numbers and sizes; KEY_CHOICE: min is the first index */
	const char *word;           /* KEY_UINT, KEY_NUMBER: a word also taken (auto, off) */
	double word_is;             /* and the value it stands for */
	const char *const *names;   /* KEY_CHOICE: the values, NULL-terminated */
	bool (*valid)(const char *value); /* KEY_STRING: what a value must be */
	const char *expect;         /* what to say a value must be, when the type's words do not */
	config_parse_fn parse;      /* KEY_CUSTOM */
	bool empty_none;            /* strings and paths: an empty value means none (NULL) */
	size_t given;               /* offset of a bool set when the key is given; 0: none */
	bool many;                  /* may be given more than once */
	bool restart;               /* a reload keeps the running value until the next start */
};

/* config_keys.c: the row for key in section ("list" for [list NAME]), or NULL. */
/* The key of section whose name is nearest name (two edits at most), or NULL: a "did you mean". */
const char *config_key_near(const char *section, const char *name);
const struct config_key *config_key_find(const char *section, const char *name);
/* Whether a section header names a known section (or [list NAME]). */
bool config_section_known(const char *name, size_t len);
/* value read into base as k says: 1, or 0 after a problem. */
int config_key_set(struct loader *ld, const struct config_key *k, void *base, const char *value);

/* config_set.c: the line key was first given on in section, 0 if not given. */
unsigned config_key_line(const struct loader *ld, const char *section, const char *key);
/* Remember section.key at the current line; true (and a problem said) if it was given before. */
bool config_key_repeated(struct loader *ld, const char *section, const char *key, bool many);
void config_keys_seen_free(struct loader *ld);

/* A problem at the current line (or of the whole file, line 0); counted, reported through on_error. */
void config_problem(struct loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* config_set.c. Setters: 1 if set, 0 after reporting a problem. path: relative to the file's directory. */
int config_set_string(struct loader *ld, char **slot, const char *value, bool path);
int config_set_uint(struct loader *ld, const char *key, const char *value, unsigned min, unsigned max, const char *word,
		    unsigned *out);
int config_set_int(struct loader *ld, const char *key, const char *value, int min, int max, int *out);
int config_set_bool(struct loader *ld, const char *key, const char *value, bool *out);
/* One more path to a list of them (relative to the file's directory). */
int config_push_path(struct loader *ld, char ***list, size_t *n, const char *value);
/* A packet mark: 1 to 0xffffffff, decimal or 0x hex. */
int config_set_mark(struct loader *ld, const char *key, const char *value, uint32_t *out);
/* A number from min to max; expect, if not NULL, says what it must be in a problem. */
int config_set_number(struct loader *ld, const char *key, const char *value, double min, double max,
		      const char *expect, double *out);
/* A time such as 90, 90s, 15m, 1h, 1d or 1h30m, from min to max seconds. */
int config_set_seconds(struct loader *ld, const char *key, const char *value, unsigned min, unsigned max,
		       unsigned *out);
/* A size such as 4MiB, 512KiB or 65536, from min to max bytes. */
int config_set_size(struct loader *ld, const char *key, const char *value, uint64_t min, uint64_t max,
		    uint64_t *out);

/* config_lists.c. The list named name, made with defaults if new; NULL after a problem. */
struct list_config *config_list_named(struct loader *ld, const char *name);
/* [entries] file = PATH: a list of bloomd's format named after the file. */
int config_entries_file(struct loader *ld, const struct config_key *k, void *base, const char *value);
/* [list NAME] action, file and format: what the local list may not have is refused. */
int config_list_action(struct loader *ld, const struct config_key *k, void *base, const char *value);
int config_list_file(struct loader *ld, const struct config_key *k, void *base, const char *value);
int config_list_format(struct loader *ld, const struct config_key *k, void *base, const char *value);
/* [list NAME] set: the one set of an ipset save file the list takes. */
int config_list_set(struct loader *ld, const struct config_key *k, void *base, const char *value);
/* [list NAME] url: http:// or https:// only. */
int config_list_url(struct loader *ld, const struct config_key *k, void *base, const char *value);
/* [list NAME] categories: Suricata's iprep categories file, read now (its names become labels). */
int config_list_categories(struct loader *ld, const struct config_key *k, void *base, const char *value);
/* The lists as a whole (after the file is read): names unique, the local list first. */
void config_lists_validate(struct loader *ld);
void config_lists_free(struct config *c);
/* Whether a section header names [list NAME] (name checked when its keys are read). */
bool config_list_section(const char *name, size_t len);

/* config_cluster.c: the host's name (a node's and a sensor's default), NULL without memory. */
char *config_host_name(void);
/* [cluster]'s and [action]'s defaults, the whole, and freeing. */
int config_cluster_defaults(struct config *c);
void config_cluster_validate(struct loader *ld);
bool config_sentinel_list(const char *value);
bool config_net_list(const char *value);
void config_cluster_free(struct config *c);
/* manage = yes: the sets are bloomd's table's (and set, set6 are not given). */
void config_action_validate(struct loader *ld);
/* What [cluster] and [action] values must be. */
bool config_redis_address(const char *value);
bool config_nft_name(const char *value);
bool config_nft_set(const char *value);
/* config_lists.c: a value a URL's query may carry as it is (a CrowdSec stream's filter). */
bool config_query_value(const char *value);
/* source = crowdsec's scopes (ip, range) and origins (CrowdSec's own names), joined by commas. */
bool config_crowdsec_scopes(const char *value);
bool config_crowdsec_origins(const char *value);
bool config_plain_name(const char *value);

#endif
