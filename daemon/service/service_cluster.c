/* service_cluster.c - the daemon in a cluster: its changes to the stream, the stream's to it, events to Redis. */
#include "service.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"

/* ---- what the stream asks of the daemon ---- */


static enum cluster_apply apply_op(void *ctx, const struct cluster_op *op, char *err, size_t errlen)
{
	static struct entry e;
	struct service *s = ctx;
	uint32_t still_held;

	if (op->kind == CLUSTER_REPLACE)
		return service_list_from_cluster(s, op->entry, op->data, op->data_len, err, errlen);
	if (op->kind == CLUSTER_FLUSH)
		return service_list_from_cluster(s, op->entry, NULL, 0, err, errlen);
	if (entry_parse(op->entry, &e, err, errlen) != 1) {
		error_set(err, errlen, "not an entry");
		return CLUSTER_APPLY_REFUSED;
	}
	if (op->kind == CLUSTER_ADD && service_entry_too_broad(s, &e, err, errlen))
		return CLUSTER_APPLY_REFUSED;
	int rc = op->kind == CLUSTER_ADD ? service_add(s, &e, op->expires, SERVICE_FROM_STREAM, err, errlen)
					 : service_del(s, &e, SERVICE_FROM_STREAM, &still_held, err, errlen);
	return service_stream_outcome(s, rc);
}

struct dumping {
	const struct service *s;
	char *text;
	size_t len;
	FILE *f;
};

static int dump_entry(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	static char text[ENTRY_TEXT_MAX];
	struct dumping *d = ctx;

	(void)group;
	if (!(holders & MATCH_HOLDER_DEFAULT))
		return 0;
	fprintf(d->f, "%s %s", entry_kind_name(e->kind), entry_format_value(e->kind, e->key, e->len, text, sizeof(text)));
	uint64_t expires = service_expiry(d->s, e);
	if (expires)
		fprintf(d->f, " expires=%llu", (unsigned long long)expires);
	return fputc('\n', d->f) == EOF ? -1 : 0;
}

/* The local list as entry lines, for a snapshot. */
static char *dump_local(void *ctx, size_t *len)
{
	struct dumping d = { .s = ctx };

	if ((d.f = open_memstream(&d.text, &d.len)) == NULL)
		return NULL;
	int rc = matcher_foreach(d.s->matcher, 0, dump_entry, &d);
	if (fclose(d.f) != 0 || rc != 0) {
		free(d.text);
		return NULL;
	}
	*len = d.len;
	return d.text;
}

static enum cluster_apply restore_local(void *ctx, const char *lines, size_t len, char *err, size_t errlen)
{
	return service_slices_restore(ctx, lines, len, err, errlen);
}

/* ---- the daemon's side ---- */

static int event_to_redis(void *ctx, const char *line, size_t len)
{
	struct service *s = ctx;

	return s->fleet.cluster ? cluster_event(s->fleet.cluster, line, len) : -1;
}

static bool applied_durable(void *ctx)
{
	return service_durable_settled(ctx);
}

/* An event Redis did not take after all: to the fallback file. */
static void event_from_redis(void *ctx, const char *line, size_t len)
{
	struct service *s = ctx;

	if (s->events && events_write_fallback(s->events, line, len) < 0)
		log_limited(&s->fleet.events_lost_logged, 60, LOG_LEVEL_ERROR,
			    "an event Redis did not take is lost: %s", s->cfg->events_fallback ? "the fallback file cannot be written"
											: "no [output] events_fallback is set");
}

void service_cluster_events(struct service *s, struct events *ev)
{
	if (s->cfg->events_redis)
		events_set_sink(ev, event_to_redis, s);
}

int service_cluster_start(struct service *s)
{
	const struct cluster_callbacks cb = { apply_op, restore_local, dump_local, applied_durable, event_from_redis, s };
	char err[512];

	if (!config_cluster_on(s->cfg))
		return 0;
	s->fleet.cluster = cluster_open(s->base, &s->cfg->cluster, service_journaled(s) ? service_statedir(s) : NULL,
				  s->cfg->fsync == CONFIG_FSYNC_ALWAYS, &cb, err, sizeof(err));
	if (s->fleet.cluster == NULL) {
		log_error("cluster: %s", err);
		return -1;
	}
	log_info("cluster: node %s following %s on %s%s", s->cfg->cluster.node, s->cfg->cluster.stream,
		 s->cfg->cluster.redis ? "" : "the master the sentinels name: ",
		 s->cfg->cluster.redis ? s->cfg->cluster.redis : s->cfg->cluster.sentinels);
	return 0;
}

int service_cluster_snapshot(struct service *s, char *err, size_t errlen)
{
	if (s->fleet.cluster == NULL) {
		error_set(err, errlen, "no [cluster] redis is set");
		return -1;
	}
	return cluster_snapshot(s->fleet.cluster, err, errlen);
}

json_t *service_cluster_status(const struct service *s)
{
	return s->fleet.cluster ? cluster_status(s->fleet.cluster) : NULL;
}

void service_cluster_tick(struct service *s)
{
	if (s->fleet.cluster)
		cluster_tick(s->fleet.cluster);
}

void service_cluster_stop(struct service *s)
{
	cluster_close(s->fleet.cluster); /* its cursor and outbox written first */
	s->fleet.cluster = NULL;
}

int service_fleet_outbox_error(const struct service *s, char *err, size_t errlen)
{
	return s->fleet.cluster ? cluster_outbox_error(s->fleet.cluster, err, errlen) : 0;
}
