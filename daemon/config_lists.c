/* config_lists.c - the [list NAME] sections and [entries] file: named entry lists and their labels. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

#define DEFAULT_SEVERITY 2
#define DEFAULT_MAX_BAD 0.1

bool config_list_section(const char *name, size_t len)
{
	return len > 5 && strncmp(name, "list ", 5) == 0;
}

/* A name that is also a safe file name (the state directory keeps each list under it). */
static bool good_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= LIST_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

/* A stable default sid: Suricata's "local use" range, from the name (FNV-1a). */
static uint32_t default_sid(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return 9000000 + h % 1000000;
}

/* The list named name, made (with defaults) if it is new; NULL after a problem. */
static struct list_config *list_named(struct loader *ld, const char *name)
{
	struct config *c = ld->c;

	for (size_t i = 0; i < c->nlists; i++)
		if (strcmp(c->lists[i].name, name) == 0)
			return &c->lists[i];
	if (!good_name(name)) {
		config_problem(ld, "list name '%s': use letters, digits, '.', '_' and '-' (at most %d), not starting with '.' or '-'",
			       name, LIST_NAME_MAX - 1);
		return NULL;
	}
	struct list_config *grown = realloc(c->lists, (c->nlists + 1) * sizeof(*grown));
	if (grown == NULL) {
		config_problem(ld, "out of memory");
		return NULL;
	}
	c->lists = grown;
	struct list_config *l = &c->lists[c->nlists];
	*l = (struct list_config){ .name = strdup(name), .severity = DEFAULT_SEVERITY,
				   .max_bad = DEFAULT_MAX_BAD, .min_entries = 1, .max_removed = 1, .sid = default_sid(name), .line = ld->line };
	if (l->name == NULL) {
		config_problem(ld, "out of memory");
		return NULL;
	}
	c->nlists++;
	return l;
}

static int set_fraction(struct loader *ld, const char *key, const char *value, double *out)
{
	char *end;
	double v = strtod(value, &end);

	if (end == value || *end != '\0' || !(v >= 0 && v <= 1)) {
		config_problem(ld, "%s: expected a fraction from 0 to 1, got '%s'", key, value);
		return 0;
	}
	*out = v;
	return 1;
}

static int label_key(struct loader *ld, struct list_config *l, const char *key, const char *value)
{
	unsigned n;

	if (strcmp(key, "category") == 0)
		return config_set_string(ld, &l->category, value, false);
	if (strcmp(key, "signature") == 0)
		return config_set_string(ld, &l->signature, value, false);
	if (strcmp(key, "severity") == 0)
		return config_set_uint(ld, key, value, 1, 255, &l->severity);
	if (strcmp(key, "sid") == 0) {
		if (config_set_uint(ld, key, value, 1, 2147483647u, &n) == 0)
			return 0;
		l->sid = n;
		return 1;
	}
	if (strcmp(key, "action") == 0) {
		for (int a = LIST_ACTION_ALERT; a <= LIST_ACTION_PASS; a++)
			if (strcmp(value, config_list_action_name((enum list_action)a)) == 0) {
				l->action_given = true;
				return l->action = (enum list_action)a, 1;
			}
		config_problem(ld, "action: expected alert, drop, reject or pass, got '%s'", value);
		return 0;
	}
	return -1;
}

const char *config_list_action_name(enum list_action a)
{
	static const char *const names[] = { [LIST_ACTION_ALERT] = "alert", [LIST_ACTION_DROP] = "drop",
					     [LIST_ACTION_REJECT] = "reject", [LIST_ACTION_PASS] = "pass" };

	return names[a];
}

int config_list_key(struct loader *ld, const char *section, const char *key, const char *value)
{
	char err[256];
	struct list_config *l = list_named(ld, section + 5);

	if (l == NULL)
		return 0;
	int rc = label_key(ld, l, key, value);
	bool local = strcmp(l->name, LIST_LOCAL) == 0;
	if (rc > 0 && local && l->action == LIST_ACTION_PASS) {
		config_problem(ld, "[list %s] holds the entries bloomctl adds, not exceptions: make a [list NAME] with action = pass",
			       LIST_LOCAL);
		return 0;
	}
	if (rc >= 0)
		return rc;
	if (strcmp(key, "max_bad") == 0)
		return set_fraction(ld, key, value, &l->max_bad);
	if (strcmp(key, "max_removed") == 0)
		return strcmp(value, "off") == 0 ? (l->max_removed = 1, 1) : set_fraction(ld, key, value, &l->max_removed);
	if (strcmp(key, "min_entries") == 0)
		return config_set_uint(ld, key, value, 0, 1000000000, &l->min_entries);
	if (local && (strcmp(key, "file") == 0 || strcmp(key, "format") == 0)) {
		config_problem(ld, "[list %s] holds the entries bloomctl adds: it has no %s", LIST_LOCAL, key);
		return 0;
	}
	if (strcmp(key, "file") == 0)
		return config_set_string(ld, &l->file, value, true);
	if (strcmp(key, "format") == 0) {
		if (feed_spec_parse(value, &l->format, err, sizeof(err)) < 0) {
			config_problem(ld, "format: %s", err);
			return 0;
		}
		return 1;
	}
	return -1;
}

int config_entries_file(struct loader *ld, const char *value)
{
	const char *slash = strrchr(value, '/'), *base = slash ? slash + 1 : value;
	struct config *c = ld->c;

	for (size_t i = 0; i < c->nlists; i++)
		if (strcmp(c->lists[i].name, base) == 0) {
			config_problem(ld, "a list named '%s' is defined already (line %u): name this one with a [list NAME] section",
				       base, c->lists[i].line);
			return 0;
		}
	struct list_config *l = list_named(ld, base);
	return l ? config_set_string(ld, &l->file, value, true) : 0;
}

void config_lists_validate(struct loader *ld)
{
	struct config *c = ld->c;
	size_t local = c->nlists;

	for (size_t i = 0; i < c->nlists; i++)
		if (strcmp(c->lists[i].name, LIST_LOCAL) == 0)
			local = i;
	if (local == c->nlists) {
		ld->line = 0;
		if (list_named(ld, LIST_LOCAL) == NULL)
			return;
		c->lists[local].line = 0;
	}
	struct list_config first = c->lists[local]; /* local first: it holds bit 0 */
	memmove(c->lists + 1, c->lists, local * sizeof(*c->lists));
	c->lists[0] = first;
	if (c->lists[0].category == NULL)
		config_set_string(ld, &c->lists[0].category, "local", false);
	for (size_t i = 0; i < c->nlists; i++) {
		struct list_config *l = &c->lists[i];
		/* Inline or with [action] sets, a list's matches are dropped unless it says alert. */
		if (!l->action_given)
			l->action = c->inline_mode || c->action.set4 || c->action.set6 ? LIST_ACTION_DROP : LIST_ACTION_ALERT;
		if (l->signature == NULL) {
			char msg[LIST_NAME_MAX + 16];
			snprintf(msg, sizeof(msg), "bloomd list %s", l->name);
			config_set_string(ld, &l->signature, msg, false);
		}
	}
	ld->line = 0;
	if (c->nlists > CONFIG_MAX_LISTS)
		config_problem(ld, "%zu lists: at most %d (the local list included)", c->nlists, CONFIG_MAX_LISTS);
}

void config_lists_free(struct config *c)
{
	for (size_t i = 0; i < c->nlists; i++) {
		free(c->lists[i].name);
		free(c->lists[i].file);
		free(c->lists[i].category);
		free(c->lists[i].signature);
	}
	free(c->lists);
}

const struct list_config *config_list(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nlists; i++)
		if (strcmp(c->lists[i].name, name) == 0)
			return &c->lists[i];
	return NULL;
}
