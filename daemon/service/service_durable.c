/* service_durable.c - the durable state's own part: what it holds and says, and a change journaled. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"

bool service_unsynced(const struct service *s)
{
	return s->durable.journal && journal_unsynced(s->durable.journal);
}

const char *service_store_error(const struct service *s)
{
	if (s->durable.journal_stale)
		return "the state directory cannot take a new journal";
	return s->durable.store_error;
}

bool service_journaled(const struct service *s)
{
	return s->durable.journal != NULL;
}

struct statedir *service_statedir(struct service *s)
{
	return s->durable.dir.fd >= 0 ? &s->durable.dir : NULL;
}

bool service_durable_settled(const struct service *s)
{
	const struct service_durable *d = &s->durable;

	return d->journal == NULL || (d->store_error[0] == '\0' && !d->journal_stale && !journal_broken(d->journal) &&
				      (s->cfg->fsync != CONFIG_FSYNC_ALWAYS || !journal_unsynced(d->journal)));
}

/*
 * A version could not be kept: like a journal that cannot be written, the
 * state takes no change until it can (housekeeping keeps the lists again).
 */
void service_list_unkept(struct service *s, int i, const char *err)
{
	if (s->durable.store_error[0] == '\0')
		log_error("%s: changes are refused until the state can be written again", err);
	snprintf(s->durable.store_error, sizeof(s->durable.store_error), "%s", err);
	s->durable.lists_unkept |= 1u << i;
}

uint32_t service_lists_unkept(const struct service *s)
{
	return s->durable.lists_unkept;
}

void service_list_kept(struct service *s, int i)
{
	struct service_durable *d = &s->durable;

	d->lists_unkept &= ~(1u << i);
	if (d->lists_unkept == 0 && d->store_error[0] && !journal_broken(d->journal)) {
		log_info("the lists' versions are kept again: changes are accepted");
		d->store_error[0] = '\0';
	}
}

void service_durable_init(struct service *s)
{
	s->durable.dir.fd = -1;
}

void service_durable_free(struct service *s)
{
	ttl_free(s->durable.ttl);
	s->durable.ttl = NULL;
}

json_t *service_store_json(const struct service *s)
{
	const struct service_durable *d = &s->durable;

	if (d->journal == NULL)
		return NULL;
	json_t *store = json_pack("{s:s,s:I,s:I,s:I,s:s,s:b,s:s*}", "dir", s->cfg->store_dir, "generation",
				  (json_int_t)d->generation, "journal_records", (json_int_t)journal_records(d->journal),
				  "journal_bytes", (json_int_t)journal_bytes(d->journal), "fsync",
				  config_fsync_name(s->cfg->fsync), "writable", service_store_error(s)[0] == '\0', "error",
				  service_store_error(s)[0] ? service_store_error(s) : NULL);
	json_object_set_new(store, "last_snapshot",
			    json_pack("{s:o,s:b,s:b}", "time", d->last_save ? json_integer((json_int_t)d->last_save) : json_null(),
				      "ok", d->last_save_ok, "writing", d->saver != NULL));
	return store;
}

uint64_t service_ttl_entries(const struct service *s)
{
	return ttl_count(s->durable.ttl);
}

int service_journal_op(struct service *s, enum persist_op op, const struct entry *e, uint64_t expiry,
			char *err, size_t errlen)
{
	if (s->durable.journal_stale) {
		error_set(err, errlen, "the state directory cannot take a new journal (see the log): changes are refused until it can");
		return -1;
	}
	if (s->durable.store_error[0]) {
		error_set(err, errlen, "the state cannot be written (%.300s): changes are refused until it can be (retried every second); nothing was changed",
			  s->durable.store_error);
		return -1;
	}
	if (s->durable.journal && journal_append(s->durable.journal, op, e, expiry) < 0) {
		error_set(err, errlen, "out of memory for the journal: the change was not made");
		return -1;
	}
	return 0;
}

uint64_t service_expiry(const struct service *s, const struct entry *e)
{
	return ttl_get(s->durable.ttl, e);
}

const struct ttl *service_local_expiries(const struct service *s)
{
	return s->durable.ttl;
}
