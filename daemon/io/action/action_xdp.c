/* action_xdp.c - the XDP program on an interface: loaded, filled, attached through a link, swapped, and its events. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "action_xdp.h"

#include <errno.h>
#include <event2/event.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "error.h"
#include "xdpset.h"

/* bpftool's generated skeleton casts its embedded object's const away. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "xdp_drop.skel.h"
#pragma GCC diagnostic pop

/* A program with its maps, sized for a number of entries. */
struct generation {
	struct xdp_drop *skel;
	struct xdpset *set;
	struct xdpset_shape shape;
	void *words, *buckets, *long_keys; /* the maps, mmapped */
	size_t words_len, buckets_len, long_keys_len;
};

struct action_xdp {
	struct action_xdp_options o;
	unsigned ifindex;
	int events_fd, counters_fd; /* outlive generations */
	struct ring_buffer *ring;
	struct event *ring_event;
	action_xdp_event_cb cb;
	void *ctx;
	struct generation *gen;
	int link_fd;               /* -1: not attached */
	int owner_fd;              /* the interface held for this bloomd (own_interface); -1: not yet */
	bool native;
	bool adopted;              /* the link was a pinned one, taken over */
	const struct generation *sweeping; /* the generation a sweep began on */
	uint64_t generations;
};

static size_t page_round(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	return (n + page - 1) / page * page;
}

static void generation_free(struct generation *g)
{
	if (g == NULL)
		return;
	xdpset_free(g->set);
	if (g->words)
		munmap(g->words, g->words_len);
	if (g->buckets)
		munmap(g->buckets, g->buckets_len);
	if (g->long_keys)
		munmap(g->long_keys, g->long_keys_len);
	xdp_drop__destroy(g->skel);
	free(g);
}

static void *map_memory(struct bpf_map *map, size_t len)
{
	void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return mem == MAP_FAILED ? NULL : mem;
}

/* The program loaded with maps for capacity entries (long_capacity of them IPv6) and a fresh secret, its set empty. */
static struct generation *generation_new(struct action_xdp *x, uint64_t capacity, uint64_t long_capacity, char *err,
					 size_t errlen)
{
	struct generation *g = calloc(1, sizeof(*g));
	struct hash_key key;
	int rc;

	if (g == NULL ||
	    xdpset_shape_for(capacity, long_capacity, x->o.choices, x->o.bits_per_entry, &g->shape, err, errlen) < 0)
		goto fail;
	if (hash_key_random(&key, HASH_XXH3) < 0 || (g->skel = xdp_drop__open()) == NULL) {
		error_set(err, errlen, "XDP: cannot open the program: %s", strerror(errno));
		goto fail;
	}
	xdpset_params(&g->shape, &key, &g->skel->rodata->params);
	g->skel->rodata->params.probe_only = x->o.probe_only;
	uint64_t nblocks = g->shape.params.bits / FILTER_BLOCK_BITS;
	if (bpf_map__set_max_entries(g->skel->maps.filter, (uint32_t)nblocks) < 0 ||
	    bpf_map__set_max_entries(g->skel->maps.table, g->shape.nbuckets) < 0 ||
	    bpf_map__set_max_entries(g->skel->maps.long_keys, (uint32_t)g->shape.long_capacity) < 0 ||
	    bpf_map__reuse_fd(g->skel->maps.events, x->events_fd) < 0 ||
	    bpf_map__reuse_fd(g->skel->maps.counters, x->counters_fd) < 0) {
		error_set(err, errlen, "XDP: cannot size the program's maps");
		goto fail;
	}
	if ((rc = xdp_drop__load(g->skel)) < 0) {
		error_set(err, errlen, "XDP: the kernel refused the program: %s (CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON needed)",
			  strerror(-rc));
		goto fail;
	}
	g->words_len = page_round(nblocks * sizeof(struct xdp_block));
	g->buckets_len = page_round((size_t)g->shape.nbuckets * sizeof(struct xdp_bucket));
	g->long_keys_len = page_round(g->shape.long_capacity * sizeof(struct xdp_long_key));
	g->words = map_memory(g->skel->maps.filter, g->words_len);
	g->buckets = map_memory(g->skel->maps.table, g->buckets_len);
	g->long_keys = map_memory(g->skel->maps.long_keys, g->long_keys_len);
	if (g->words == NULL || g->buckets == NULL || g->long_keys == NULL) {
		error_set(err, errlen, "XDP: cannot map the filter and table: %s", strerror(errno));
		goto fail;
	}
	struct xdpset_memory mem = { g->words, g->buckets, g->long_keys, &g->skel->bss->live };
	if ((g->set = xdpset_new(&g->shape, &key, &mem, err, errlen)) == NULL)
		goto fail;
	g->skel->bss->live.events_rate = x->o.events_rate;
	x->generations++;
	return g;
fail:
	generation_free(g);
	return NULL;
}

static int ring_event(void *ctx, void *data, size_t len)
{
	struct action_xdp *x = ctx;

	if (len >= sizeof(struct xdp_event))
		x->cb(x->ctx, data);
	return 0;
}

static void on_ring(evutil_socket_t fd, short what, void *arg)
{
	struct action_xdp *x = arg;

	(void)fd;
	(void)what;
	ring_buffer__consume(x->ring);
}

static int shared_maps(struct action_xdp *x, char *err, size_t errlen)
{
	x->events_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "bloomd_events", 0, 0, XDP_EVENTS_BYTES, NULL);
	x->counters_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "bloomd_counts", sizeof(uint32_t), sizeof(uint64_t),
					XDP_COUNTERS, NULL);
	if (x->events_fd < 0 || x->counters_fd < 0) {
		error_set(err, errlen, "XDP: cannot make BPF maps: %s (CAP_BPF needed, and a kernel with BPF)",
			  strerror(errno));
		return -1;
	}
	return 0;
}

static int open_events(struct action_xdp *x, struct event_base *base, char *err, size_t errlen)
{
	if (base == NULL)
		return 0;
	x->ring = ring_buffer__new(x->events_fd, ring_event, x, NULL);
	if (x->ring == NULL ||
	    (x->ring_event = event_new(base, ring_buffer__epoll_fd(x->ring), EV_READ | EV_PERSIST, on_ring, x)) == NULL ||
	    event_add(x->ring_event, NULL) < 0) {
		error_set(err, errlen, "XDP: cannot read the event ring: %s", strerror(errno));
		return -1;
	}
	return 0;
}

struct action_xdp *action_xdp_open(struct event_base *base, const struct action_xdp_options *o, action_xdp_event_cb cb, void *ctx, char *err,
		     size_t errlen)
{
	struct action_xdp *x = calloc(1, sizeof(*x));

	if (x == NULL) {
		error_set(err, errlen, "out of memory");
		return NULL;
	}
	x->o = *o;
	x->cb = cb;
	x->ctx = ctx;
	x->link_fd = x->events_fd = x->counters_fd = x->owner_fd = -1;
	if (o->interface && (x->ifindex = if_nametoindex(o->interface)) == 0) {
		error_set(err, errlen, "XDP: no interface %s: %s", o->interface, strerror(errno));
		goto fail;
	}
	libbpf_set_print(NULL); /* its messages would go to stderr; the errors it returns say enough */
	if (shared_maps(x, err, errlen) < 0 || open_events(x, base, err, errlen) < 0 ||
	    (x->gen = generation_new(x, o->capacity, o->long_capacity, err, errlen)) == NULL)
		goto fail;
	return x;
fail:
	action_xdp_close(x);
	return NULL;
}

void action_xdp_close(struct action_xdp *x)
{
	if (x == NULL)
		return;
	if (x->link_fd >= 0)
		close(x->link_fd); /* the kernel detaches the program, unless the link is pinned */
	if (x->owner_fd >= 0)
		close(x->owner_fd);
	if (x->ring_event)
		event_free(x->ring_event);
	ring_buffer__free(x->ring);
	generation_free(x->gen);
	if (x->events_fd >= 0)
		close(x->events_fd);
	if (x->counters_fd >= 0)
		close(x->counters_fd);
	free(x);
}

static int link_to(struct action_xdp *x, unsigned flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = flags);

	x->link_fd = bpf_link_create(bpf_program__fd(x->gen->skel->progs.bloomd_xdp), (int)x->ifindex, BPF_XDP, &opts);
	return x->link_fd;
}

/* The link pinned at pin_path, its program replaced by ours: 1; 0: none there; -1 with a message. */
/*
 * One bloomd an interface: an abstract Unix socket named for the interface,
 * bound and listening as long as this bloomd lives (the kernel lets it go
 * with the process, so a dead owner is no owner). Another bloomd already
 * holding it is refused, named by its PID (the listener's credentials), and
 * its program, pinned or not, is left to it.
 */
static int own_interface(struct action_xdp *x, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "bloomd-xdp-%u", x->ifindex);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, len) == 0 && listen(fd, 1) == 0) {
		x->owner_fd = fd;
		return 0;
	}
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (e != EADDRINUSE) {
		error_set(err, errlen, "XDP: cannot hold %s for this bloomd: %s", x->o.interface, strerror(e));
		return -1;
	}
	struct ucred holder = { 0 };
	socklen_t holder_len = sizeof(holder);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) >= 0) {
		if (connect(fd, (struct sockaddr *)&a, len) < 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &holder, &holder_len) < 0)
			holder.pid = 0;
		close(fd);
	}
	error_set(err, errlen, "XDP: %s is held by another bloomd (pid %ld): its program is left to it, not taken over (stop that bloomd first)",
		  x->o.interface, (long)holder.pid);
	return -1;
}

static int adopt_pinned(struct action_xdp *x, char *err, size_t errlen)
{
	struct bpf_link_info info = { 0 };
	uint32_t len = sizeof(info);
	int fd = x->o.pin_path ? bpf_obj_get(x->o.pin_path) : -1;

	if (fd < 0)
		return 0; /* nothing pinned (or no bpffs there): a new link */
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 || info.type != BPF_LINK_TYPE_XDP ||
	    info.xdp.ifindex != x->ifindex) {
		error_set(err, errlen, "XDP: %s is not an XDP link on %s: remove it, or give xdp_pin_dir another place",
			  x->o.pin_path, x->o.interface);
		close(fd);
		return -1;
	}
	if (bpf_link_update(fd, bpf_program__fd(x->gen->skel->progs.bloomd_xdp), NULL) < 0) {
		error_set(err, errlen, "XDP: cannot take over the program pinned at %s: %s", x->o.pin_path, strerror(errno));
		close(fd);
		return -1;
	}
	x->link_fd = fd;
	if (!x->o.pin && unlink(x->o.pin_path) < 0) {
		error_set(err, errlen, "XDP: cannot unpin %s (xdp_pin = no): %s", x->o.pin_path, strerror(errno));
		return -1;
	}
	return 1;
}

static int attach_new(struct action_xdp *x, char *warn, size_t warnlen, char *err, size_t errlen)
{
	if (x->o.attach != XDP_ATTACH_GENERIC && link_to(x, XDP_FLAGS_DRV_MODE) >= 0)
		return 0;
	int native_errno = errno;
	if (x->o.attach == XDP_ATTACH_NATIVE) {
		error_set(err, errlen, "XDP: cannot attach in native mode to %s: %s", x->o.interface, strerror(native_errno));
		return -1;
	}
	if (link_to(x, XDP_FLAGS_SKB_MODE) < 0) {
		error_set(err, errlen, "XDP: cannot attach to %s: %s", x->o.interface, strerror(errno));
		return -1;
	}
	if (x->o.attach == XDP_ATTACH_AUTO)
		error_set(warn, warnlen, "XDP: %s takes no native program (%s): attached in generic mode, which drops later and costs more",
			  x->o.interface, strerror(native_errno));
	return 0;
}

/* The link pinned at pin_path (its directory made first): it, and the program, outlive bloomd. */
static int pin_link(struct action_xdp *x, char *err, size_t errlen)
{
	char dir[512];
	const char *slash = strrchr(x->o.pin_path, '/');

	if (slash && slash > x->o.pin_path) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - x->o.pin_path), x->o.pin_path);
		(void)mkdir(dir, 0700); /* bpffs makes directories; a failure shows in the pin */
	}
	if (bpf_obj_pin(x->link_fd, x->o.pin_path) < 0) {
		error_set(err, errlen, "XDP: cannot pin the program at %s (xdp_pin = yes; is a bpf file system mounted there?): %s",
			  x->o.pin_path, strerror(errno));
		return -1;
	}
	return 0;
}

int action_xdp_attach(struct action_xdp *x, char *warn, size_t warnlen, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (x->owner_fd < 0 && own_interface(x, err, errlen) < 0)
		return -1;
	int adopted = adopt_pinned(x, err, errlen);

	error_set(warn, warnlen, "%s", "");
	if (adopted < 0 || (adopted == 0 && attach_new(x, warn, warnlen, err, errlen) < 0))
		return -1;
	if (adopted == 0 && x->o.pin && pin_link(x, err, errlen) < 0)
		return -1;
	x->adopted = adopted == 1;
	x->native = bpf_xdp_query((int)x->ifindex, 0, &q) == 0 && q.attach_mode == XDP_ATTACHED_DRV;
	return 0;
}

bool action_xdp_adopted(const struct action_xdp *x)
{
	return x->adopted;
}

const char *action_xdp_attach_name(const struct action_xdp *x)
{
	return x->link_fd < 0 ? "detached" : x->native ? "native" : "generic";
}

static int copy_entry(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action)
{
	return xdpset_put(ctx, kind, key, len, action) != 0;
}

/* A new generation for twice the entries held now (at least its capacity), filled and swapped in. */
static int grow(struct action_xdp *x, char *err, size_t errlen)
{
	uint64_t capacity = 2 * xdpset_count(x->gen->set), long_capacity = 2 * xdpset_long_count(x->gen->set);

	if (capacity < x->gen->shape.capacity)
		capacity = x->gen->shape.capacity;
	if (long_capacity < x->gen->shape.long_capacity)
		long_capacity = x->gen->shape.long_capacity;
	for (int attempt = 0; attempt < 4; attempt++, capacity *= 2, long_capacity *= 2) {
		struct generation *g = generation_new(x, capacity, long_capacity, err, errlen);
		if (g == NULL)
			return -1;
		if (xdpset_foreach(x->gen->set, copy_entry, g->set) != 0) {
			generation_free(g); /* a probe run full: larger still */
			continue;
		}
		if (x->link_fd >= 0 && bpf_link_update(x->link_fd, bpf_program__fd(g->skel->progs.bloomd_xdp), NULL) < 0) {
			error_set(err, errlen, "XDP: cannot swap in the larger program: %s", strerror(errno));
			generation_free(g);
			return -1;
		}
		generation_free(x->gen);
		x->gen = g;
		return 0;
	}
	error_set(err, errlen, "XDP: the table keeps running full");
	return -1;
}

int action_xdp_put(struct action_xdp *x, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action, char *err,
	    size_t errlen)
{
	int rc = xdpset_put(x->gen->set, kind, key, len, action);

	if (rc == 1) {
		if (grow(x, err, errlen) < 0)
			return -1;
		rc = xdpset_put(x->gen->set, kind, key, len, action);
	}
	if (rc != 0) {
		error_set(err, errlen, "XDP: cannot hold a %s entry of %zu bytes", entry_kind_name(kind), len);
		return -1;
	}
	if (xdpset_due(x->gen->set))
		return grow(x, err, errlen);
	return 0;
}

bool action_xdp_remove(struct action_xdp *x, enum entry_kind kind, const uint8_t *key, size_t len)
{
	bool removed = xdpset_remove(x->gen->set, kind, key, len);

	if (removed && xdpset_due(x->gen->set))
		(void)grow(x, NULL, 0); /* removed slots cleared; on failure the old one goes on */
	return removed;
}

int action_xdp_sweep_begin(struct action_xdp *x)
{
	x->sweeping = xdpset_sweep_begin(x->gen->set) == 0 ? x->gen : NULL;
	return x->sweeping ? 0 : -1;
}

int action_xdp_sweep_end(struct action_xdp *x)
{
	bool same = x->sweeping == x->gen;

	x->sweeping = NULL;
	if (!same)
		return -1; /* a new set: it has no marks */
	(void)xdpset_sweep_end(x->gen->set);
	return xdpset_due(x->gen->set) ? grow(x, NULL, 0) : 0;
}

int action_xdp_foreach(const struct action_xdp *x, action_xdp_entry_cb cb, void *ctx)
{
	return xdpset_foreach(x->gen->set, cb, ctx);
}

void action_xdp_counts(const struct action_xdp *x, struct action_xdp_counts *out)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *values = ncpus > 0 ? calloc((size_t)ncpus, sizeof(uint64_t)) : NULL;
	uint64_t sums[XDP_COUNTERS] = { 0 };

	for (uint32_t c = 0; values && c < XDP_COUNTERS; c++)
		if (bpf_map_lookup_elem(x->counters_fd, &c, values) == 0)
			for (int i = 0; i < ncpus; i++)
				sums[c] += values[i];
	free(values);
	*out = (struct action_xdp_counts){
		.passed = sums[XDP_PASSED], .dropped = sums[XDP_DROPPED], .exempted = sums[XDP_EXEMPTED],
		.unparsed = sums[XDP_UNPARSED],
		.events_suppressed = sums[XDP_EVENTS_SUPPRESSED], .entries = xdpset_count(x->gen->set),
		.capacity = x->gen->shape.capacity, .generations = x->generations,
		.filter_bytes = x->gen->shape.params.bits / 8,
		.table_bytes = (size_t)x->gen->shape.nbuckets * sizeof(struct xdp_bucket) +
			       x->gen->shape.long_capacity * sizeof(struct xdp_long_key),
	};
}

int action_xdp_program_fd(const struct action_xdp *x)
{
	return bpf_program__fd(x->gen->skel->progs.bloomd_xdp);
}

bool action_xdp_attached(const struct action_xdp *x)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_xdp_query((int)x->ifindex, 0, &q) < 0 || bpf_obj_get_info_by_fd(action_xdp_program_fd(x), &info, &len) < 0)
		return false;
	return info.id != 0 && (q.prog_id == info.id || q.drv_prog_id == info.id || q.skb_prog_id == info.id);
}

const struct filter *action_xdp_filter(const struct action_xdp *x)
{
	return xdpset_filter(x->gen->set);
}

struct hash128 action_xdp_hash(const struct action_xdp *x, enum entry_kind kind, const uint8_t *key, size_t len)
{
	return xdpset_hash(x->gen->set, kind, key, len);
}
