/* service_publish.c - local changes to the cluster's stream: entries, and lists without a file. */
#include "service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"

void service_cluster_publish(struct service *s, enum cluster_op_kind kind, const struct entry *e,
			     uint64_t expires)
{
	static char text[ENTRY_TEXT_MAX + 8];
	char value[ENTRY_TEXT_MAX], err[256];

	if (s->cluster == NULL || s->applying_cluster)
		return;
	snprintf(text, sizeof(text), "%s %s", entry_kind_name(e->kind),
		 entry_format_value(e->kind, e->key, e->len, value, sizeof(value)));
	struct cluster_op op = { .kind = kind, .entry = text, .expires = expires };
	if (cluster_publish(s->cluster, &op, err, sizeof(err)) < 0)
		log_error("cluster: %s: %s", text, err);
}

void service_cluster_publish_list(struct service *s, enum cluster_op_kind kind, const char *name,
				  const char *data, size_t len)
{
	char err[256];

	if (s->cluster == NULL || s->applying_cluster)
		return;
	struct cluster_op op = { .kind = kind, .entry = name, .data = data, .data_len = len };
	if (cluster_publish(s->cluster, &op, err, sizeof(err)) < 0)
		log_error("cluster: %s list %s: %s", kind == CLUSTER_FLUSH ? "flush" : "replace", name, err);
}
