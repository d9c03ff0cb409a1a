/* service_revs.c - each list's revision (eve's alert.rev) kept across restarts, changed only by a change of entries. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "service_internal.h"

/*
 * A list's revision rises when a version changes its entries, within a run
 * (lists_take) and across restarts: STATE/revs/NAME keeps the revision and
 * a digest of the entries it was given for, and the first version taken
 * after a start keeps that revision if its entries are the same, else
 * takes the next. The digest is a sum of each entry's hash, so the order
 * entries come in does not matter. The file is small and rewritten whole;
 * one lost in a crash only starts the list's revision again at 1.
 */

static void rev_path(const struct list_state *l, char *rel, size_t len, bool tmp)
{
	snprintf(rel, len, "revs/%s%s", l->name, tmp ? ".tmp" : "");
}

/* The revision and digest kept for list l: 0, or -1 if there are none (or they do not read). */
static int read_rev(struct service *s, const struct list_state *l, unsigned *rev, uint64_t *digest)
{
	char rel[LIST_NAME_MAX + 16], text[64];
	int fd = (rev_path(l, rel, sizeof(rel), false), state_dir_open_file(service_statedir(s), rel, O_RDONLY));
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	return sscanf(text, "%u %" SCNx64, rev, digest) == 2 && *rev > 0 ? 0 : -1;
}

static void keep_rev(struct service *s, const struct list_state *l)
{
	char rel[LIST_NAME_MAX + 16], tmp[LIST_NAME_MAX + 16], text[64];
	int len = snprintf(text, sizeof(text), "%u %016" PRIx64 "\n", l->rev, l->digest);
	int fd = (rev_path(l, tmp, sizeof(tmp), true), state_dir_create(service_statedir(s), tmp, 0));

	rev_path(l, rel, sizeof(rel), false);
	if (fd < 0 || write(fd, text, (size_t)len) != len || close(fd) < 0 || state_dir_rename(service_statedir(s), tmp, rel) < 0)
		log_warning("list %s: cannot keep its revision in the state directory: %s", l->name, strerror(errno));
}

/* After list i took a version: the revision kept if its entries are those kept, else the next, kept in turn. */
static void service_list_revised(struct service *s, int i)
{
	struct list_state *l = &s->lists.slot[i];
	uint64_t digest = matcher_holder_digest(s->matcher, (unsigned)i);
	unsigned kept;
	uint64_t kept_digest;

	if (!l->digest_known && service_statedir(s) && read_rev(s, l, &kept, &kept_digest) == 0)
		l->rev = kept_digest == digest ? kept : kept + 1; /* the first version since the start */
	l->digest = digest;
	l->digest_known = true;
	if (service_statedir(s))
		keep_rev(s, l);
}

#define BAD_LINES_LOGGED 20 /* per load; the rest are counted */

void service_log_bad_line(void *ctx, unsigned line, const char *text, const char *why)
{
	struct service_bad_lines *b = ctx;

	if (b->logged++ < BAD_LINES_LOGGED)
		log_warning("list %s: %s:%u: %s, skipped: '%s'", b->list, b->source, line, why, text);
}

void service_list_loaded(struct service *s, int i, const char *source, const struct service_bad_lines *b,
			 const struct list_load *r)
{
	const struct list_state *l = &s->lists.slot[i];

	if (b->logged > BAD_LINES_LOGGED)
		log_warning("list %s: %s: %u more bad lines, not shown", l->name, source, b->logged - BAD_LINES_LOGGED);
	if (r->skipped_what[0])
		log_warning("list %s: %s: %llu lines skipped, of what bloomd does not hold or enforce: %s", l->name, source,
			    (unsigned long long)r->skipped, r->skipped_what);
	if (!r->refused)
		service_list_revised(s, i);
	if (r->refused) /* a feed that keeps sending what is refused: once a minute, with the count between */
		log_limited(&s->lists.slot[i].refusals_logged, 60, LOG_LEVEL_ERROR,
			    "list %s: %s: refused, the list keeps its previous version (%llu entries read, %llu bad lines): %s",
			    l->name, source, (unsigned long long)r->entries, (unsigned long long)r->bad, r->error);
	else if (r->added || r->removed || r->bad || l->version == 1 || l->cfg == NULL || l->cfg->url == NULL)
		log_info("list %s: %s: version %u taken: %llu added, %llu removed (%llu entries, %llu bad lines skipped)",
			 l->name, source, l->version, (unsigned long long)r->added, (unsigned long long)r->removed,
			 (unsigned long long)r->entries, (unsigned long long)r->bad);
	else /* a fetch that brought nothing new is no news */
		log_debug("list %s: %s: version %u taken: nothing changed (%llu entries)", l->name, source, l->version,
			  (unsigned long long)r->entries);
}
