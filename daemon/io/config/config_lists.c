/* config_lists.c - the [list NAME] sections and [entries] file: named entry lists and their labels. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"

#define DEFAULT_SEVERITY 2
#define DEFAULT_MAX_BAD 0.1
#define DEFAULT_REFRESH 3600
#define DEFAULT_CROWDSEC_REFRESH 10 /* as crowdsec-firewall-bouncer's update_frequency */
#define DEFAULT_CROWDSEC_SCOPES "ip,range"
#define DEFAULT_CROWDSEC_MAX_SIZE (1ULL << 30) /* a million decisions are about 140 MB of JSON */
#define DEFAULT_FETCH_TIMEOUT 60
#define DEFAULT_MAX_SIZE (64ULL << 20)

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
struct list_config *config_list_named(struct loader *ld, const char *name)
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
				   .max_bad = DEFAULT_MAX_BAD, .min_entries = 1, .max_removed = 1, .sid = default_sid(name), .line = ld->line,
				   .refresh = DEFAULT_REFRESH, .fetch_timeout = DEFAULT_FETCH_TIMEOUT, .max_size = DEFAULT_MAX_SIZE };
	if (l->name == NULL) {
		config_problem(ld, "out of memory");
		return NULL;
	}
	c->nlists++;
	return l;
}

const char *config_list_action_name(enum list_action a)
{
	static const char *const names[] = { [LIST_ACTION_ALERT] = "alert", [LIST_ACTION_DROP] = "drop",
					     [LIST_ACTION_REJECT] = "reject", [LIST_ACTION_PASS] = "pass" };

	return names[a];
}

static bool local(const struct list_config *l)
{
	return strcmp(l->name, LIST_LOCAL) == 0;
}

int config_list_action(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	struct list_config *l = base;

	(void)k;
	for (int a = LIST_ACTION_ALERT; a <= LIST_ACTION_PASS; a++)
		if (strcmp(value, config_list_action_name((enum list_action)a)) == 0) {
			l->action_given = true;
			l->action = (enum list_action)a;
			if (l->action != LIST_ACTION_PASS || !local(l))
				return 1;
			config_problem(ld, "[list %s] holds the entries bloomctl adds, not exceptions: make a [list NAME] with action = pass",
				       LIST_LOCAL);
			return 0;
		}
	config_problem(ld, "action: expected alert, drop, reject or pass, got '%s'", value);
	return 0;
}

/* The local list's entries are bloomctl's: it has no file, and so no format. */
static bool feedless(struct loader *ld, const struct list_config *l, const char *key)
{
	if (local(l))
		config_problem(ld, "[list %s] holds the entries bloomctl adds: it has no %s", LIST_LOCAL, key);
	return local(l);
}

int config_list_file(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	struct list_config *l = base;

	return feedless(ld, l, k->name) ? 0 : config_set_string(ld, &l->file, value, true);
}

int config_list_format(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	struct list_config *l = base;
	char err[256];

	if (feedless(ld, l, k->name))
		return 0;
	struct feed_spec spec;
	if (feed_spec_parse(value, &spec, err, sizeof(err)) < 0) {
		config_problem(ld, "format: %s", err);
		return 0;
	}
	memcpy(spec.set, l->format.set, sizeof(spec.set)); /* set may come first */
	l->format = spec;
	return 1;
}

int config_list_set(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	struct list_config *l = base;

	if (feedless(ld, l, k->name))
		return 0;
	if (value[0] == '\0' || strlen(value) >= sizeof(l->format.set) || strchr(value, ' ')) {
		config_problem(ld, "set: expected an ipset set's name (at most %zu characters, no blanks), got '%s'",
			       sizeof(l->format.set) - 1, value);
		return 0;
	}
	snprintf(l->format.set, sizeof(l->format.set), "%s", value);
	return 1;
}

int config_list_url(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	struct list_config *l = base;

	if (feedless(ld, l, k->name))
		return 0;
	if (strncmp(value, "https://", 8) != 0 && strncmp(value, "http://", 7) != 0) {
		config_problem(ld, "url: expected an http:// or https:// URL, got '%.200s'", value);
		return 0;
	}
	return config_set_string(ld, &l->url, value, false);
}

/* One line of an iprep categories file, "id,short name,description", into names. */
static int category_line(char *line, char (*names)[ENTRY_CATEGORY_MAX], char *err, size_t errlen)
{
	line += strspn(line, " \t");
	if (*line == '\0' || *line == '#')
		return 0;
	char *id = strtok(line, ","), *name = strtok(NULL, ","), *end = NULL;
	unsigned long n = id && isdigit((unsigned char)*id) ? strtoul(id, &end, 10) : 0;
	if (n < 1 || n > FEED_IPREP_CATEGORIES || *end) {
		snprintf(err, errlen, "expected a category id from 1 to %d, got '%.20s'", FEED_IPREP_CATEGORIES, id ? id : "");
		return -1;
	}
	if (name == NULL || !entry_category_valid(name)) {
		snprintf(err, errlen, "category %lu: expected a short name of letters, digits and . _ - : / (at most %d)", n,
			 ENTRY_CATEGORY_MAX - 1);
		return -1;
	}
	snprintf(names[n], ENTRY_CATEGORY_MAX, "%s", name);
	return 0;
}

int config_list_categories(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	struct list_config *l = base;
	char line[512], err[160];
	unsigned at = 0;

	if (feedless(ld, l, k->name) || !config_set_string(ld, &l->categories, value, true))
		return 0;
	FILE *f = fopen(l->categories, "re");
	char (*names)[ENTRY_CATEGORY_MAX] = calloc(FEED_IPREP_CATEGORIES + 1, sizeof(*names));
	if (f == NULL || names == NULL) {
		config_problem(ld, "categories: cannot read %s: %s", l->categories, strerror(errno));
		goto fail;
	}
	while (fgets(line, sizeof(line), f)) {
		at++;
		line[strcspn(line, "\r\n")] = '\0';
		if (category_line(line, names, err, sizeof(err)) < 0) {
			config_problem(ld, "categories: %s:%u: %s", l->categories, at, err);
			goto fail;
		}
	}
	fclose(f);
	free(l->category_names);
	l->category_names = names;
	return 1;
fail:
	if (f)
		fclose(f);
	free(names);
	return 0;
}

int config_entries_file(struct loader *ld, const struct config_key *k, void *base, const char *value)
{
	const char *slash = strrchr(value, '/'), *name = slash ? slash + 1 : value;
	struct config *c = base;

	(void)k;
	for (size_t i = 0; i < c->nlists; i++)
		if (strcmp(c->lists[i].name, name) == 0) {
			config_problem(ld, "a list named '%s' is defined already (line %u): name this one with a [list NAME] section",
				       name, c->lists[i].line);
			return 0;
		}
	struct list_config *l = config_list_named(ld, name);
	return l ? config_set_string(ld, &l->file, value, true) : 0;
}

bool config_query_value(const char *value)
{
	if (*value == '\0')
		return false;
	for (; *value; value++)
		if (!isalnum((unsigned char)*value) && !strchr("._-/:,", *value))
			return false;
	return true;
}

/* Whether value is words of names, joined by commas, each word one of names. */
static bool words_of(const char *value, const char *const *names, size_t n)
{
	if (*value == '\0')
		return false;
	while (*value) {
		size_t len = strcspn(value, ","), i = 0;
		while (i < n && (strlen(names[i]) != len || strncmp(value, names[i], len) != 0))
			i++;
		if (i == n)
			return false;
		value += len + (value[len] == ',');
		if (value[-1] == ',' && *value == '\0')
			return false;
	}
	return true;
}

bool config_crowdsec_scopes(const char *value)
{
	static const char *const scopes[] = { "ip", "range" };

	return words_of(value, scopes, 2);
}

bool config_crowdsec_origins(const char *value)
{
	static const char *const origins[] = { "crowdsec", "cscli", "CAPI", "lists", "console", "cscli-import", "appsec" };

	return words_of(value, origins, sizeof(origins) / sizeof(origins[0]));
}

/* source = crowdsec: a LAPI's url and a bouncer's key; its decisions in CrowdSec's format, polled often. */
static void crowdsec_validate(struct loader *ld, struct list_config *l, const char *section)
{
	static const char *const keys[] = { "api_key_file", "scopes", "origins", "scenarios_containing",
					    "scenarios_not_containing" };

	if (l->source != LIST_SOURCE_CROWDSEC) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if ((ld->line = config_key_line(ld, section, keys[i])) != 0)
				config_problem(ld, "[list %s] %s is for a list read from CrowdSec: give source = crowdsec", l->name,
					       keys[i]);
		return;
	}
	ld->line = config_key_line(ld, section, "source");
	if (l->url == NULL || l->file)
		config_problem(ld, "[list %s] source = crowdsec reads the decisions of CrowdSec's local API: give its url "
				   "(url = http://127.0.0.1:8080) and no file", l->name);
	if (l->api_key_file == NULL)
		config_problem(ld, "[list %s] source = crowdsec needs a bouncer's key: give api_key_file (a file holding "
				   "what cscli bouncers add bloomd printed)", l->name);
	if (config_key_line(ld, section, "format") && l->format.format != FEED_CROWDSEC_JSON)
		config_problem(ld, "[list %s] source = crowdsec reads CrowdSec's decisions: leave format out", l->name);
	l->format.format = FEED_CROWDSEC_JSON;
	if (config_key_line(ld, section, "refresh") == 0)
		l->refresh = DEFAULT_CROWDSEC_REFRESH;
	if (config_key_line(ld, section, "min_entries") == 0)
		l->min_entries = 0; /* no decisions at all is a state CrowdSec may be in */
	if (config_key_line(ld, section, "max_size") == 0)
		l->max_size = DEFAULT_CROWDSEC_MAX_SIZE;
	if (config_key_line(ld, section, "scopes") == 0)
		config_set_string(ld, &l->scopes, DEFAULT_CROWDSEC_SCOPES, false);
}

/* A list fetched from a URL reads no file; the fetch keys and categories go with what they are for. */
static void list_fetch_validate(struct loader *ld, struct list_config *l, const char *section)
{
	static const char *const fetch_keys[] = { "refresh", "fetch_timeout", "max_size", "ca_file" };

	ld->line = config_key_line(ld, section, "categories");
	if (l->categories && l->format.format != FEED_IPREP)
		config_problem(ld, "[list %s] categories names iprep's categories: give format = iprep", l->name);
	l->format.category_names = (const char(*)[ENTRY_CATEGORY_MAX])l->category_names;
	ld->line = config_key_line(ld, section, "url");
	if (l->url && l->file)
		config_problem(ld, "[list %s] has a file and a url: it is read from one of them", l->name);
	for (size_t i = 0; l->url == NULL && i < sizeof(fetch_keys) / sizeof(fetch_keys[0]); i++)
		if ((ld->line = config_key_line(ld, section, fetch_keys[i])) != 0)
			config_problem(ld, "[list %s] %s is for a list fetched from a url: give url", l->name, fetch_keys[i]);
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
		if (config_list_named(ld, LIST_LOCAL) == NULL)
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
		char section[LIST_NAME_MAX + 8];
		snprintf(section, sizeof(section), "list %s", l->name);
		ld->line = config_key_line(ld, section, "set");
		if (l->format.set[0] && l->format.format != FEED_IPSET)
			config_problem(ld, "[list %s] set names a set of an ipset save file: give format = ipset", l->name);
		list_fetch_validate(ld, l, section);
		crowdsec_validate(ld, l, section);
		if ((ld->line = config_key_line(ld, section, "pass")) != 0 && l->action != LIST_ACTION_PASS)
			config_problem(ld, "[list %s] pass says what a pass list exempts: give action = pass", l->name);
		/* Inline or with [action] sets, a list's matches are dropped unless it says alert. */
		if (!l->action_given)
			l->action = c->inline_mode || c->xdp_mode || c->action.set4 || c->action.set6 ? LIST_ACTION_DROP : LIST_ACTION_ALERT;
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
		free(c->lists[i].categories);
		free(c->lists[i].category_names);
		free(c->lists[i].url);
		free(c->lists[i].ca_file);
		free(c->lists[i].api_key_file);
		free(c->lists[i].scopes);
		free(c->lists[i].origins);
		free(c->lists[i].scenarios_containing);
		free(c->lists[i].scenarios_not_containing);
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
