/* config_internal.h - what the config files share: the loader, the setters, each part's keys. */
#ifndef BLOOMD_CONFIG_INTERNAL_H
#define BLOOMD_CONFIG_INTERNAL_H

/*
 * Only the config files include this. A tree: config.c (the file, [capture],
 * [filter] and the small sections) uses config_lists.c and config_cluster.c;
 * all three use config_set.c, which uses none of them.
 */

#include "config.h"

#define MAX_KEYS_SEEN 256

/* What a load is working on; the reader counts lines so errors can name them. */
struct loader {
	struct config *c;
	char *text;                /* the whole file, NUL-terminated */
	size_t len, at;            /* its length, and where the reader is */
	struct {
		char name[64];     /* "section.key" */
		unsigned line;
	} seen[MAX_KEYS_SEEN];     /* keys given once, to name both lines of a repeat */
	size_t nseen;
	const char *dir;           /* of the config file, for relative paths */
	unsigned line;
	unsigned problems;
	unsigned memory_line, bpe_line, interface_line, file_line, workers_line, manage_line;
	config_error_cb on_error;
	void *ctx;
};

/* A problem at the current line (or of the whole file, line 0); counted, reported through on_error. */
void config_problem(struct loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* config_set.c. Setters: 1 if set, 0 after reporting a problem. path: relative to the file's directory. */
int config_set_string(struct loader *ld, char **slot, const char *value, bool path);
int config_set_uint(struct loader *ld, const char *key, const char *value, unsigned min, unsigned max,
		    unsigned *out);
int config_set_bool(struct loader *ld, const char *key, const char *value, bool *out);
/* One more path to a list of them (relative to the file's directory). */
int config_push_path(struct loader *ld, char ***list, size_t *n, const char *value);
/* A packet mark: 1 to 0xffffffff, decimal or 0x hex. */
int config_set_mark(struct loader *ld, const char *key, const char *value, uint32_t *out);
/* Bits per entry or per window: a number from 1 to 64. */
int config_set_bits(struct loader *ld, const char *key, const char *value, double *out);
/* A size such as 4MiB, 512KiB or 65536, from min to max bytes. */
int config_set_size(struct loader *ld, const char *key, const char *value, uint64_t min, uint64_t max,
		    uint64_t *out);

/* config_lists.c: a key of [list NAME] (section is "list NAME"); 1, 0 after a problem, -1 unknown key. */
int config_list_key(struct loader *ld, const char *section, const char *key, const char *value);
/* [entries] file = PATH: a list of bloomd's format named after the file. */
int config_entries_file(struct loader *ld, const char *value);
/* The lists as a whole (after the file is read): names unique, the local list first. */
void config_lists_validate(struct loader *ld);
void config_lists_free(struct config *c);
/* Whether a section header names [list NAME] (name checked when its keys are read). */
bool config_list_section(const char *name, size_t len);

/* config_cluster.c: [cluster]'s defaults, keys (as config_list_key), the whole, and freeing. */
int config_cluster_defaults(struct config *c);
int config_cluster_key(struct loader *ld, const char *key, const char *value);
void config_cluster_validate(struct loader *ld);
void config_cluster_free(struct config *c);
/* [action]'s keys (as config_list_key); config_cluster_free frees them too. */
int config_action_key(struct loader *ld, const char *key, const char *value);
/* manage = yes: the sets are bloomd's table's (and set, set6 are not given). */
void config_action_validate(struct loader *ld);

#endif
