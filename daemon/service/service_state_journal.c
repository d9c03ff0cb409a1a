/* service_state_journal.c - the state's own part: what it holds and says, and a change journaled. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"

bool service_unsynced(const struct service *s)
{
	return s->state.journal && state_journal_unsynced(s->state.journal);
}

const char *service_store_error(const struct service *s)
{
	if (s->state.journal_stale)
		return "the state directory cannot take a new journal";
	return s->state.store_error;
}

bool service_journaled(const struct service *s)
{
	return s->state.journal != NULL;
}

struct state_dir *service_statedir(struct service *s)
{
	return s->state.dir.fd >= 0 ? &s->state.dir : NULL;
}

bool service_state_settled(const struct service *s)
{
	const struct service_state *d = &s->state;

	return d->journal == NULL || (d->store_error[0] == '\0' && !d->journal_stale && !state_journal_broken(d->journal) &&
				      (s->cfg->fsync != CONFIG_FSYNC_ALWAYS || !state_journal_unsynced(d->journal)));
}

/*
 * A version could not be kept: like a journal that cannot be written, the
 * state takes no change until it can (housekeeping keeps the lists again).
 */
void service_list_unkept(struct service *s, int i, const char *err)
{
	if (s->state.store_error[0] == '\0')
		log_error("%s: changes are refused until the state can be written again", err);
	snprintf(s->state.store_error, sizeof(s->state.store_error), "%s", err);
	s->state.lists_unkept |= 1u << i;
}

uint32_t service_lists_unkept(const struct service *s)
{
	return s->state.lists_unkept;
}

void service_list_kept(struct service *s, int i)
{
	struct service_state *d = &s->state;

	d->lists_unkept &= ~(1u << i);
	if (d->lists_unkept == 0 && d->store_error[0] && !state_journal_broken(d->journal)) {
		log_info("the lists' versions are kept again: changes are accepted");
		d->store_error[0] = '\0';
	}
}

void service_state_init(struct service *s)
{
	s->state.dir.fd = -1;
}

void service_state_free(struct service *s)
{
	state_ttl_free(s->state.ttl);
	s->state.ttl = NULL;
}

json_t *service_store_json(const struct service *s)
{
	const struct service_state *d = &s->state;

	if (d->journal == NULL)
		return NULL;
	json_t *store = json_pack("{s:s,s:I,s:I,s:I,s:s,s:b,s:s*}", "dir", s->cfg->store_dir, "generation",
				  (json_int_t)d->generation, "journal_records", (json_int_t)state_journal_records(d->journal),
				  "journal_bytes", (json_int_t)state_journal_bytes(d->journal), "fsync",
				  config_fsync_name(s->cfg->fsync), "writable", service_store_error(s)[0] == '\0', "error",
				  service_store_error(s)[0] ? service_store_error(s) : NULL);
	json_object_set_new(store, "last_snapshot",
			    json_pack("{s:o,s:b,s:b}", "time", d->last_save ? json_integer((json_int_t)d->last_save) : json_null(),
				      "ok", d->last_save_ok, "writing", d->saver != NULL));
	return store;
}

uint64_t service_ttl_entries(const struct service *s)
{
	return state_ttl_count(s->state.ttl);
}

int service_journal_op(struct service *s, enum state_op op, const struct entry *e, uint64_t expiry,
			char *err, size_t errlen)
{
	if (s->state.journal_stale) {
		error_set(err, errlen, "the state directory cannot take a new journal (see the log): changes are refused until it can");
		return -1;
	}
	if (s->state.store_error[0]) {
		error_set(err, errlen, "the state cannot be written (%.300s): changes are refused until it can be (retried every second); nothing was changed",
			  s->state.store_error);
		return -1;
	}
	if (s->state.journal && state_journal_append(s->state.journal, op, e, expiry) < 0) {
		error_set(err, errlen, "out of memory for the journal: the change was not made");
		return -1;
	}
	return 0;
}

uint64_t service_expiry(const struct service *s, const struct entry *e)
{
	return state_ttl_get(s->state.ttl, e);
}

const struct state_ttl *service_local_expiries(const struct service *s)
{
	return s->state.ttl;
}
