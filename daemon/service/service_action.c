/* service_action.c - [action]: the nftables sets bloomd blocks addresses in, checked, listed, unblocked. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include "error.h"
#include "log.h"
#include "service_internal.h"

static int block_address(void *ctx, const uint8_t *addr, int family)
{
	struct service *s = ctx;
	char err[512] = "";
	int rc = action_block(s->action.sets, addr, family, err, sizeof(err));

	if (rc < 0)
		log_limited(&s->action.errors_logged, 60, LOG_LEVEL_ERROR, "[action]: %s", err);
	else if (err[0])
		log_warning("%s", err);
	return rc;
}


int service_action_start(struct service *s)
{
	const struct action_config *a = &s->cfg->action;

	if (s->action.sets == NULL)
		return 0;
	if (a->manage && (service_action_mirror_start(s) < 0 || service_record_changes(s, SERVICE_FOLLOWS_MIRROR) < 0))
		return -1;
	s->engine.block = block_address;
	s->engine.block_ctx = s;
	s->engine.block_side = a->block;
	s->engine.lists_in_kernel = a->manage;
	return 0;
}

struct blocked_listing {
	json_t *shown;
	uint64_t count;
};

static int list_blocked(void *ctx, const uint8_t *addr, int family, unsigned seconds_left)
{
	struct blocked_listing *bl = ctx;
	char text[64];

	if (bl->count++ < SERVICE_BLOCKED_SHOWN)
		json_array_append_new(bl->shown, json_pack("{s:s,s:i}", "address", entry_format_addr(addr, family, text, sizeof(text)),
							   "seconds_left", (int)seconds_left));
	return 0;
}

int service_blocked(struct service *s, json_t *reply, char *err, size_t errlen)
{
	struct blocked_listing bl = { json_array(), 0 };

	if (s->action.sets == NULL) {
		json_decref(bl.shown);
		error_set(err, errlen, "no [action] sets: nothing is blocked by bloomd");
		return -1;
	}
	action_foreach(s->action.sets, list_blocked, &bl);
	json_object_set_new(reply, "blocked", bl.shown);
	json_object_set_new(reply, "count", json_integer((json_int_t)bl.count));
	return 0;
}

int service_unblock(struct service *s, const uint8_t *addr, int family, char *err, size_t errlen)
{
	char text[64];

	if (s->action.sets == NULL) {
		error_set(err, errlen, "no [action] sets: nothing is blocked by bloomd");
		return -1;
	}
	char names[256];
	int rc = action_unblock(s->action.sets, addr, family, err, errlen);
	if (rc > 0)
		log_info("[action]: %s unblocked", entry_format_addr(addr, family, text, sizeof(text)));
	if (rc >= 0 && service_action_mirror_listing(s, addr, family, names, sizeof(names))) {
		error_set(err, errlen, "%s%s is listed (%s): the kernel drops it while a list holds it; delete the entry "
			  "instead (bloomctl match %s names it)", rc > 0 ? "unblocked, but " : "",
			  entry_format_addr(addr, family, text, sizeof(text)), names, text);
		return -1;
	}
	return rc;
}

void service_action_check(struct service *s)
{
	char err[512];

	if (s->action.sets == NULL)
		return;
	int rc = action_check(s->action.sets, err, sizeof(err));
	if (rc < 0)
		log_limited(&s->action.errors_logged, 60, LOG_LEVEL_ERROR, "[action]: %s", err);
	else if (rc > 0)
		log_warning("[action]: table inet %s or addresses in it were gone (a flush, a firewall reload?): put back",
			    s->cfg->action.table);
	service_action_mirror_settle(s);
}

void service_action_stats(const struct service *s, json_t *o)
{
	struct action_stats as;

	if (s->action.sets == NULL)
		return;
	action_stats(s->action.sets, &as);
	json_object_set_new(o, "set_action",
			    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:I,s:I,s:I,s:I}", "added", (json_int_t)as.added,
				      "repeated", (json_int_t)as.repeated, "rate_limited", (json_int_t)as.rate_limited, "errors",
				      (json_int_t)as.errors, "unblocked", (json_int_t)as.unblocked, "restored",
				      (json_int_t)as.restored, "taken_over", (json_int_t)as.taken_over, "protected",
				      (json_int_t)as.protected, "blocked", (json_int_t)as.blocked, "managed", s->cfg->action.manage,
				      "listed", (json_int_t)as.listed, "passed", (json_int_t)as.passed, "exempt",
				      (json_int_t)as.exempt, "hidden", (json_int_t)as.hidden));
	json_object_set_new(json_object_get(o, "set_action"), "neighbour_commits", json_integer((json_int_t)as.neighbours));
	json_object_set_new(json_object_get(o, "set_action"), "protected_listed", json_integer((json_int_t)as.protected_listed));
	if (s->cfg->action.manage) {
		json_t *sa = json_object_get(o, "set_action");
		json_object_set_new(sa, "lost", json_integer((json_int_t)as.lost));
		json_object_set_new(sa, "syncing", json_boolean(action_syncing(s->action.sets)));
		json_object_set_new(o, "set_dropped", action_dropped(s->action.sets));
	}
}

void service_action_stop(struct service *s)
{
	service_action_mirror_stop(s);
	action_close(s->action.sets);
	s->action.sets = NULL;
	s->engine.block = NULL;
}
