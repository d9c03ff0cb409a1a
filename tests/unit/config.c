/* Unit tests for config.c: defaults, every key, and every problem reported with its line. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "test.h"

#define MAX_PROBLEMS 16

struct problems {
	unsigned n;
	char text[MAX_PROBLEMS][256];
};

static void collect(void *ctx, const char *message)
{
	struct problems *p = ctx;

	if (p->n < MAX_PROBLEMS)
		snprintf(p->text[p->n], sizeof(p->text[0]), "%s", message);
	p->n++;
}

static char path[64];

static struct config *load_bytes(const char *text, size_t len, struct problems *p)
{
	strcpy(path, "/tmp/bloomd-config-XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fwrite(text, 1, len, f);
	fclose(f);
	memset(p, 0, sizeof(*p));
	struct config *c = config_load(path, collect, p);
	unlink(path);
	return c;
}

static struct config *load(const char *text, struct problems *p)
{
	return load_bytes(text, strlen(text), p);
}

static bool any_problem_has(const struct problems *p, const char *line_and_text)
{
	for (unsigned i = 0; i < p->n && i < MAX_PROBLEMS; i++)
		if (strstr(p->text[i], line_and_text))
			return true;
	return false;
}

static void every_key(void **state)
{
	struct problems p;
	struct config *c = load("; comment\n"
				"[capture]\ninterface = eth0\nbpf = udp port 53\nsnaplen = 1600\n"
				"promisc = no\nbuffer_size = 8MiB\n"
				"[filter]\nmemory = 4MiB\nlayout = classic\nchoices = 3\nhashes = 12\n"
				"rounds = 20\nhash = siphash13\n"
				"[entries]\nfile = /etc/a.list\nfile = b.list\n"
				"[signatures]\nwindow = 12\nbits_per_window = 9.5\n"
				"[output]\nevents = /var/log/bloomd/events.json\npcap = matched.pcap\n"
				"alerts = once_per_flow\nflow_timeout = 60\n",
				&p);

	(void)state;
	assert_int_equal(p.n, 0);
	assert_non_null(c);
	assert_string_equal(c->interface, "eth0");
	assert_string_equal(c->bpf, "udp port 53");
	assert_int_equal(c->snaplen, 1600);
	assert_false(c->promisc);
	assert_int_equal(c->buffer_size, 8 << 20);
	assert_int_equal(c->memory, 4 << 20);
	assert_int_equal(c->layout, FILTER_CLASSIC);
	assert_int_equal(c->choices, 3);
	assert_int_equal(c->hashes, 12);
	assert_int_equal(c->rounds, 20);
	assert_int_equal(c->hash, HASH_SIPHASH13);
	assert_int_equal(c->nlists, 3); /* local first, then a file's list each */
	assert_string_equal(c->lists[0].name, "local");
	assert_null(c->lists[0].file);
	assert_string_equal(c->lists[1].name, "a.list");
	assert_string_equal(c->lists[1].file, "/etc/a.list");
	assert_string_equal(c->lists[2].file, "/tmp/b.list"); /* relative to the config file */
	assert_int_equal(c->lists[2].format.format, FEED_BLOOMD);
	assert_int_equal(c->window, 12);
	assert_true(c->bits_per_window == 9.5);
	assert_string_equal(c->events, "/var/log/bloomd/events.json");
	assert_string_equal(c->pcap, "/tmp/matched.pcap");
	assert_true(c->alert_once_per_flow);
	assert_int_equal(c->flow_timeout, 60);
	config_free(c);
}

/* [list NAME]: a file and its format, labels, defaults; the local list takes labels only. */
static void list_sections(void **state)
{
	struct problems p;
	struct config *c = load("[list spamhaus-drop]\nfile = /etc/bloomd/drop.txt\nformat = drop\ncategory = hijacked\n"
				"severity = 1\nsid = 2400000\nsignature = Spamhaus DROP\nmax_bad = 0.5\n"
				"[list pushed]\ncategory = scanner\n[list local]\nseverity = 3\n"
				"[metrics]\nlisten = 127.0.0.1:9153\nmax_connections = 16\ntimeout = 5\n",
				&p);

	(void)state;
	assert_int_equal(p.n, 0);
	assert_int_equal(c->nlists, 3);
	assert_string_equal(c->lists[0].name, "local");
	assert_int_equal(c->lists[0].severity, 3);
	const struct list_config *l = config_list(c, "spamhaus-drop");
	assert_non_null(l);
	assert_int_equal(l->format.format, FEED_DROP);
	assert_string_equal(l->category, "hijacked");
	assert_int_equal(l->severity, 1);
	assert_int_equal(l->sid, 2400000);
	assert_string_equal(l->signature, "Spamhaus DROP");
	assert_true(l->max_bad == 0.5);
	l = config_list(c, "pushed");
	assert_null(l->file);
	assert_string_equal(l->signature, "bloomd list pushed");
	assert_int_equal(l->severity, 2);
	assert_true(l->sid >= 9000000 && l->sid < 10000000);
	assert_string_equal(c->metrics_listen, "127.0.0.1:9153");
	assert_int_equal(c->metrics_max_connections, 16);
	assert_int_equal(c->metrics_timeout, 5);
	config_free(c);

	c = load("[list bad/name]\nfile = x\n[list local]\nfile = y\n[list ok]\nformat = csv:\nmax_bad = 2\n"
		 "[entries]\nfile = ok\n[metrics]\nlisten = 9153\nmax_connections = 0\ntimeout = 301\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, ":2: list name 'bad/name'"));
	assert_true(any_problem_has(&p, ":4: [list local] holds the entries bloomctl adds"));
	assert_true(any_problem_has(&p, ":6: format: csv: needs a column"));
	assert_true(any_problem_has(&p, ":7: max_bad: expected a fraction"));
	assert_true(any_problem_has(&p, ":9: a list named 'ok' is defined already (line 6)"));
	assert_true(any_problem_has(&p, ":11: listen: expected ADDRESS:PORT"));
	assert_true(any_problem_has(&p, ":12: max_connections"));
	assert_true(any_problem_has(&p, ":13: timeout"));
}

/* A list fetched from a url: its keys, times with units, iprep's categories file, and what is refused. */
static void list_fetch_keys(void **state)
{
	char cats[] = "/tmp/bloomd-categories-XXXXXX", text[1024];
	int fd = mkstemp(cats);
	struct problems p;

	(void)state;
	assert_true(fd >= 0);
	dprintf(fd, "# id,short name,description\n1,BadHosts,Known bad hosts\n2,Google,Known google host\n");
	close(fd);
	snprintf(text, sizeof(text),
		 "[list rep]\nurl = https://feeds.example.net/reputation.list\nformat = iprep\ncategories = %s\n"
		 "refresh = 1h30m\nfetch_timeout = 2m\nmax_size = 1MiB\nca_file = /etc/ssl/certs/feeds.pem\n"
		 "[list plain]\nurl = http://192.0.2.1/drop.txt\n",
		 cats);
	struct config *c = load(text, &p);
	assert_int_equal(p.n, 0);
	const struct list_config *l = config_list(c, "rep");
	assert_string_equal(l->url, "https://feeds.example.net/reputation.list");
	assert_int_equal(l->refresh, 5400);
	assert_int_equal(l->fetch_timeout, 120);
	assert_int_equal(l->max_size, 1 << 20);
	assert_string_equal(l->ca_file, "/etc/ssl/certs/feeds.pem");
	assert_string_equal(l->format.category_names[1], "BadHosts");
	assert_string_equal(l->format.category_names[2], "Google");
	assert_string_equal(l->format.category_names[3], "");
	l = config_list(c, "plain");
	assert_int_equal(l->refresh, 3600);
	assert_int_equal(l->fetch_timeout, 60);
	assert_int_equal(l->max_size, 64 << 20);
	assert_null(l->ca_file);
	config_free(c);

	/* A line of commas alone: no id at all, said as such (it once read a null pointer). */
	fd = open(cats, O_WRONLY | O_TRUNC);
	dprintf(fd, "# id,short name,description\n,,,\n");
	close(fd);
	snprintf(text, sizeof(text), "[list e]\nformat = iprep\ncategories = %s\n", cats);
	assert_null(load(text, &p));
	assert_true(any_problem_has(&p, ":2: expected a category id from 1 to 60, got ''"));
	fd = open(cats, O_WRONLY | O_TRUNC);
	dprintf(fd, "1,BadHosts,Known bad hosts\n61,TooHigh,Out of range\n");
	close(fd);
	snprintf(text, sizeof(text),
		 "[list a]\nurl = ftp://feeds.example.net/x\n[list b]\nfile = /x\nurl = http://192.0.2.1/x\n"
		 "[list c]\nrefresh = 1h\n[list d]\nurl = http://192.0.2.1/x\nrefresh = 5x\n"
		 "[list e]\nformat = iprep\ncategories = %s\n[list f]\nformat = drop\ncategories = /dev/null\n"
		 "[list g]\nurl = http://192.0.2.1/x\nrefresh = 0s\nfetch_timeout = 1h1s\n",
		 cats);
	c = load(text, &p);
	unlink(cats);
	assert_null(c);
	assert_true(any_problem_has(&p, ":2: url: expected an http:// or https:// URL, got 'ftp://"));
	assert_true(any_problem_has(&p, ":5: [list b] has a file and a url"));
	assert_true(any_problem_has(&p, ":7: [list c] refresh is for a list fetched from a url"));
	assert_true(any_problem_has(&p, ":10: refresh: expected a time from 1s to 2592000s"));
	assert_true(any_problem_has(&p, ":2: expected a category id from 1 to 60, got '61'"));
	assert_true(any_problem_has(&p, ":16: [list f] categories names iprep's categories: give format = iprep"));
	assert_true(any_problem_has(&p, ":19: refresh: expected a time"));
	assert_true(any_problem_has(&p, ":20: fetch_timeout: expected a time from 1s to 3600s"));
}

/* source = crowdsec: its defaults, and what it needs. */
static void crowdsec_source(void **state)
{
	struct problems p;
	struct config *c = load("[list cs]\nsource = crowdsec\nurl = http://127.0.0.1:8080\napi_key_file = /etc/bloomd/cs.key\n"
				"origins = crowdsec,cscli\n",
				&p);

	(void)state;
	assert_int_equal(p.n, 0);
	const struct list_config *l = config_list(c, "cs");
	assert_int_equal(l->source, LIST_SOURCE_CROWDSEC);
	assert_int_equal(l->format.format, FEED_CROWDSEC_JSON);
	assert_int_equal(l->refresh, 10);
	assert_int_equal(l->min_entries, 0);
	assert_int_equal(l->max_size, 1 << 30);
	assert_string_equal(l->scopes, "ip,range");
	assert_string_equal(l->origins, "crowdsec,cscli");
	assert_null(l->scenarios_containing);
	config_free(c);
	c = load("[list a]\nsource = crowdsec\n[list b]\napi_key_file = /k\n[list c]\nsource = crowdsec\n"
		 "url = http://127.0.0.1:8080\napi_key_file = /k\nformat = plain\nscopes = ip&x=1\n"
		 "[list d]\nsource = crowdsec\nurl = http://127.0.0.1:8080\napi_key_file = /k\n" /* 11-14 */
		 "scopes = ip,rnage\norigins = crowdsec,capi\nscopse = ip\n", /* 15-17 */
		 &p);
	assert_null(c);
	assert_true(any_problem_has(&p, ":2: [list a] source = crowdsec reads the decisions of CrowdSec's local API: give its url"));
	assert_true(any_problem_has(&p, ":2: [list a] source = crowdsec needs a bouncer's key: give api_key_file"));
	assert_true(any_problem_has(&p, ":4: [list b] api_key_file is for a list read from CrowdSec: give source = crowdsec"));
	assert_true(any_problem_has(&p, ":6: [list c] source = crowdsec reads CrowdSec's decisions: leave format out"));
	assert_true(any_problem_has(&p, ":10: scopes: expected ip, range or both"));
	/* a scope or origin CrowdSec does not have is refused by name: no list silently fetched with nothing */
	assert_true(any_problem_has(&p, ":15: scopes: expected ip, range or both, joined by a comma (the scopes bloomd enforces), got 'ip,rnage'"));
	assert_true(any_problem_has(&p, ":16: origins: expected CrowdSec's origins joined by commas: crowdsec, cscli, CAPI"));
	assert_true(any_problem_has(&p, ":17: unknown key 'scopse' in [list d]: did you mean 'scopes'?"));
}

/* [cluster] and events = redis: the settings, and what is refused. */
static void cluster_section(void **state)
{
	struct problems p;
	struct config *c = load("[cluster]\nredis = unix:/run/redis/redis.sock\npassword = s3cret\nstream = fleet:entries\n"
				"node = sensor7\nmaxlen = 5000\nsnapshot_every = 600\nevents_key = fleet:events\n"
				"events_type = stream\nevents_pending = 50\n[output]\nevents = redis\nevents_fallback = /tmp/fb.json\n",
				&p);

	(void)state;
	assert_int_equal(p.n, 0);
	assert_string_equal(c->cluster.redis, "unix:/run/redis/redis.sock");
	assert_string_equal(c->cluster.password, "s3cret");
	assert_string_equal(c->cluster.stream, "fleet:entries");
	assert_string_equal(c->cluster.node, "sensor7");
	assert_int_equal(c->cluster.maxlen, 5000);
	assert_int_equal(c->cluster.snapshot_every, 600);
	assert_true(c->cluster.events_stream);
	assert_int_equal(c->cluster.events_pending, 50);
	assert_true(c->events_redis);
	assert_string_equal(c->events, "/tmp/fb.json"); /* the file output is the fallback */
	config_free(c);

	c = load("[cluster]\nredis = redis.example:6379\nmaxlen = 10\n[output]\nevents = redis\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, ":2: redis: expected unix:/PATH or tcp://HOST:PORT"));
	assert_true(any_problem_has(&p, ":3: maxlen: expected a whole number from 1000"));
	assert_true(any_problem_has(&p, "[output] events = redis needs [cluster] redis"));

	/* Sentinels instead of redis, with the master's name; never both, never one without the other. */
	c = load("[cluster]\nsentinels = 10.0.0.1:26379,sentinel2:26380\nsentinel_master = fleet\nwait_replicas = 1\n"
		 "timeout = 3\n[output]\nevents = redis\n", &p);
	assert_int_equal(p.n, 0);
	assert_string_equal(c->cluster.sentinels, "10.0.0.1:26379,sentinel2:26380");
	assert_string_equal(c->cluster.sentinel_master, "fleet");
	assert_int_equal(c->cluster.wait_replicas, 1);
	assert_int_equal(c->cluster.timeout, 3);
	assert_true(config_cluster_on(c));
	config_free(c);
	c = load("[cluster]\nredis = unix:/r.sock\nsentinels = s1:26379\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, "[cluster] redis and sentinels: one or the other"));
	assert_true(any_problem_has(&p, "[cluster] sentinels and sentinel_master go together"));
	c = load("[action]\nprotect = 192.0.2.0/24,2001:db8::1,10.0.0.1\n[list a]\nfile = /dev/null\n", &p);
	assert_int_equal(p.n, 0);
	assert_string_equal(c->action.protect, "192.0.2.0/24,2001:db8::1,10.0.0.1");
	config_free(c);
	c = load("[action]\nprotect = 192.0.2.0/33\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, ":2: protect: expected addresses or nets"));
	c = load("[cluster]\nsentinels = s1:26379,,s2:1\nsentinel_master = m\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, ":2: sentinels: expected HOST:PORT[,HOST:PORT...]"));

	/* TLS and ACL users: the keys read, and what does not go together refused by name. */
	c = load("[cluster]\nredis = tcp://redis.example:6380\ntls = yes\ntls_ca_file = /etc/ca.pem\n"
		 "tls_cert_file = /etc/node.pem\ntls_key_file = /etc/node.key\ntls_server_name = redis.example\n"
		 "user = bloomd\npassword = s\ndigest_every = 30\n", &p);
	assert_int_equal(p.n, 0);
	assert_true(c->cluster.tls);
	assert_string_equal(c->cluster.tls_ca_file, "/etc/ca.pem");
	assert_string_equal(c->cluster.tls_key_file, "/etc/node.key");
	assert_string_equal(c->cluster.tls_server_name, "redis.example");
	assert_string_equal(c->cluster.user, "bloomd");
	assert_int_equal(c->cluster.digest_every, 30);
	config_free(c);
	c = load("[cluster]\nredis = unix:/r.sock\ntls = yes\ntls_cert_file = /n.pem\nuser = u\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, "[cluster] tls = yes needs redis = tcp://HOST:PORT"));
	assert_true(any_problem_has(&p, "[cluster] tls_cert_file and tls_key_file go together"));
	assert_true(any_problem_has(&p, "[cluster] user needs password"));
	c = load("[cluster]\nredis = tcp://r:1\ntls_ca_file = /ca.pem\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, "need tls = yes"));
}

/* XDP mode: its interface, attach mode and event rate; lists drop unless they say alert. */
static void xdp_mode(void **state)
{
	struct problems p;
	struct config *c = load("[capture]\nmode = xdp\ninterface = eth1\nxdp_mode = generic\nxdp_events_rate = 50\n"
				"[list a]\nfile = /dev/null\n", &p);

	(void)state;
	assert_int_equal(p.n, 0);
	assert_true(c->xdp_mode);
	assert_false(c->inline_mode);
	assert_int_equal(c->xdp_attach, XDP_ATTACH_GENERIC);
	assert_int_equal(c->xdp_events_rate, 50);
	assert_int_equal(config_list(c, "a")->action, LIST_ACTION_DROP);
	config_free(c);
	c = load("[capture]\nmode = xdp\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, ":2: [capture] mode = xdp needs [capture] interface"));
	c = load("[capture]\ninterface = eth1\nmode = xdp\nxdp_mode = fast\nxdp_events_rate = -1\n", &p);
	assert_null(c);
	assert_true(any_problem_has(&p, ":4: xdp_mode:"));
	assert_true(any_problem_has(&p, ":5: xdp_events_rate:"));
	c = load("[capture]\ninterface = eth1\n", &p);
	assert_int_equal(c->xdp_events_rate, 1000);
	assert_int_equal(c->xdp_attach, XDP_ATTACH_AUTO);
	config_free(c);
}

/* Inline mode: its queues, and lists that drop unless they say alert. */
static void inline_mode(void **state)
{
	struct problems p;
	struct config *c = load("[capture]\nmode = inline\nqueue = 2-5\nfail_open = no\nqueue_maxlen = 8192\n"
				"[list a]\nfile = /dev/null\n[list b]\nfile = /dev/null\naction = alert\n", &p);

	(void)state;
	assert_int_equal(p.n, 0);
	assert_true(c->inline_mode);
	assert_int_equal(c->queue.first, 2);
	assert_int_equal(c->queue.last, 5);
	assert_false(c->fail_open);
	assert_int_equal(c->queue_maxlen, 8192);
	assert_int_equal(config_list(c, "a")->action, LIST_ACTION_DROP);
	assert_int_equal(config_list(c, "b")->action, LIST_ACTION_ALERT);
	assert_int_equal(config_list(c, "local")->action, LIST_ACTION_DROP);
	config_free(c);
	c = load("[list a]\nfile = /dev/null\n", &p);
	assert_int_equal(config_list(c, "a")->action, LIST_ACTION_ALERT); /* passive: alert */
	assert_true(c->fail_open);
	config_free(c);
	c = load("[action]\nset = inet bloomd blocked\nset6 = inet bloomd blocked6\ntimeout = 60\nblock = both\nrate = 5\n"
		 "[list a]\nfile = /dev/null\n", &p);
	assert_int_equal(p.n, 0);
	assert_string_equal(c->action.set4, "inet bloomd blocked");
	assert_string_equal(c->action.set6, "inet bloomd blocked6");
	assert_int_equal(c->action.timeout, 60);
	assert_int_equal(c->action.block, 3);
	assert_int_equal(c->action.rate, 5);
	assert_int_equal(config_list(c, "a")->action, LIST_ACTION_DROP); /* with a set, lists drop */
	config_free(c);
	assert_null(load("[action]\nset = blocked\nblock = left\n", &p));
	assert_true(any_problem_has(&p, ":2: set: expected FAMILY TABLE SET"));
	assert_true(any_problem_has(&p, ":3: block: expected src, dst or both"));
	assert_null(load("[capture]\nmode = tap\nqueue = 5-2\ninterface = eth0\nmode = inline\n", &p));
	assert_true(any_problem_has(&p, ":2: mode: expected passive, inline or xdp, got 'tap'"));
	assert_true(any_problem_has(&p, ":3: queue: expected a queue number or a range N-M"));
	/* reject, its mark, and workers against the queues */
	c = load("[capture]\nmode = inline\nqueue = 0-1\nworkers = 2\nreject_mark = 0x2a\n[list r]\nfile = /dev/null\n"
		 "action = reject\n", &p);
	assert_int_equal(p.n, 0);
	assert_int_equal(config_list(c, "r")->action, LIST_ACTION_REJECT);
	assert_int_equal(c->reject_mark, 0x2a);
	assert_int_equal(c->workers, 2);
	config_free(c);
	c = load("[capture]\nmode = inline\n", &p);
	assert_int_equal(c->reject_mark, 0xb10c);
	assert_int_equal(c->workers, 1);
	config_free(c);
	assert_null(load("[capture]\nmode = inline\nqueue = 3\nreject_mark = 0\nworkers = 2\n[list r]\nfile = /dev/null\n"
			 "action = deny\n", &p));
	assert_true(any_problem_has(&p, ":4: reject_mark: expected a packet mark from 1 to 0xffffffff"));
	assert_true(any_problem_has(&p, ":5: [capture] workers = 2, but queue gives 1 queue(s)"));
	assert_true(any_problem_has(&p, ":8: action: expected alert, drop, reject or pass, got 'deny'"));
}

/* Pass lists, the feed guards, and [action] manage with its own table's sets. */
static void pass_guards_and_manage(void **state)
{
	struct problems p;
	struct config *c = load("[list mine]\nfile = /dev/null\naction = pass\nmin_entries = 0\nmax_removed = 0.25\n"
				"[list feed]\nfile = /dev/null\n[action]\nmanage = yes\ntable = fw\npriority = -150\n", &p);

	(void)state;
	assert_int_equal(p.n, 0);
	assert_int_equal(config_list(c, "mine")->action, LIST_ACTION_PASS);
	assert_int_equal(config_list(c, "mine")->min_entries, 0);
	assert_true(config_list(c, "mine")->max_removed == 0.25);
	assert_int_equal(config_list(c, "feed")->min_entries, 1); /* an empty version is refused by default */
	assert_true(config_list(c, "feed")->max_removed == 1);   /* off */
	assert_int_equal(config_list(c, "feed")->action, LIST_ACTION_DROP);
	assert_string_equal(c->action.set4, "inet fw blocked4");
	assert_string_equal(c->action.set6, "inet fw blocked6");
	assert_int_equal(c->action.priority, -150);
	config_free(c);
	assert_null(load("[list local]\naction = pass\n[list x]\nfile = /dev/null\nmax_removed = 2\n"
			 "[action]\nmanage = yes\nset = inet a b\ntable = 1x\n", &p));
	assert_true(any_problem_has(&p, ":2: [list local] holds the entries bloomctl adds, not exceptions"));
	assert_true(any_problem_has(&p, ":5: max_removed: expected a fraction from 0 to 1, got '2'"));
	assert_true(any_problem_has(&p, ":9: table: expected a table name nft takes"));
	assert_true(any_problem_has(&p, ":7: [action] manage = yes: bloomd's table has its own sets"));
}

/* The new sections, and empty values that turn a path off. */
static void control_and_store_keys(void **state)
{
	struct problems p;
	struct config *c = load("[control]\nsocket = ctl.sock\ngroup = adm\nmax_clients = 8\n"
				"idle_timeout = 10\n[store]\ndir = state\nfsync = always\njournal_max = 1MiB\n"
				"[filter]\nfpr_target = 0.01\nauto_rebuild = no\n[output]\nevents =\n"
				"[service]\nuser = bloomd\n[log]\nlevel = debug\ntarget = syslog\n",
				&p);

	(void)state;
	assert_int_equal(p.n, 0);
	assert_string_equal(c->socket, "/tmp/ctl.sock");
	assert_true(c->socket_set);
	assert_string_equal(c->group, "adm");
	assert_int_equal(c->max_clients, 8);
	assert_int_equal(c->idle_timeout, 10);
	assert_string_equal(c->store_dir, "/tmp/state");
	assert_int_equal(c->fsync, CONFIG_FSYNC_ALWAYS);
	assert_int_equal(c->journal_max, 1 << 20);
	assert_true(c->fpr_target == 0.01);
	assert_false(c->auto_rebuild);
	assert_null(c->events); /* empty: no events, not the config's directory */
	assert_string_equal(c->user, "bloomd");
	assert_int_equal(c->log_level, LOG_LEVEL_DEBUG);
	assert_int_equal(c->log_target, LOG_TARGET_SYSLOG);
	config_free(c);
	c = load("[control]\nsocket =\n[store]\ndir =\nfsync = sometimes\n", &p);
	assert_null(c);
	assert_int_equal(p.n, 1);
	assert_non_null(strstr(p.text[0], ":5: fsync: expected always, everysec or no"));
	c = load("[control]\nsocket =\n[store]\ndir =\n", &p);
	assert_null(c->socket);
	assert_null(c->store_dir);
	config_free(c);
}

static void defaults(void **state)
{
	struct problems p;
	struct config *c = load("", &p);

	(void)state;
	assert_non_null(c);
	assert_int_equal(c->layout, FILTER_BLOCKED);
	assert_int_equal(c->choices, 2);
	assert_int_equal(c->hashes, 0);
	assert_true(c->bits_per_entry == 16);
	assert_int_equal(c->window, 8);
	assert_true(c->bits_per_window == 12);
	assert_string_equal(c->events, "-");
	assert_true(c->promisc);
	assert_int_equal(c->metrics_max_connections, 64);
	assert_int_equal(c->metrics_timeout, 10);
	config_free(c);
}

static void every_problem_with_its_line(void **state)
{
	struct problems p;
	struct config *c = load("[filter]\n"            /* 1 */
				"choices = 4\n"         /* 2 */
				"layout = round\n"      /* 3 */
				"memory = lots\n"       /* 4 */
				"colour = blue\n"       /* 5 */
				"[nonsense]\n"          /* 6 */
				"[capture]\n"           /* 7 */
				"promisc = maybe\n"     /* 8 */
				"this line is wrong\n"  /* 9 */
				"[signatures]\n"        /* 10 */
				"window = 0\n"          /* 11 */
				"bits_per_window = 65\n", /* 12 */
				&p);

	(void)state;
	assert_null(c);
	assert_true(any_problem_has(&p, ":2: choices: expected a whole number from 1 to 3, got '4'"));
	assert_true(any_problem_has(&p, ":3: layout: expected classic or blocked, got 'round'"));
	assert_true(any_problem_has(&p, ":4: memory: expected a size"));
	assert_true(any_problem_has(&p, ":5: unknown key 'colour' in [filter]"));
	assert_false(any_problem_has(&p, "in [filter]: did you mean")); /* nothing near colour */
	assert_true(any_problem_has(&p, ":6: unknown section [nonsense]"));
	assert_true(any_problem_has(&p, ":8: promisc: expected yes or no, got 'maybe'"));
	assert_true(any_problem_has(&p, ":9: syntax error"));
	assert_true(any_problem_has(&p, ":12: bits_per_window: expected a number from 1 to 64, got '65'"));
	assert_true(p.n >= 9);
}

static void conflicting_options(void **state)
{
	struct problems p;
	struct config *c = load("[filter]\nmemory = 1MiB\nbits_per_entry = 10\n"
				"[capture]\ninterface = lo\nfile = x.pcap\n", &p);

	(void)state;
	assert_null(c);
	assert_int_equal(p.n, 2);
	assert_true(any_problem_has(&p, ":3: give [filter] memory or bits_per_entry, not both (lines 2 and 3)"));
	assert_true(any_problem_has(&p, ":6: give [capture] interface or file, not both (lines 5 and 6)"));
}

static void missing_file(void **state)
{
	struct problems p = { 0 };

	(void)state;
	assert_null(config_load("/nonexistent/bloomd.conf", collect, &p));
	assert_int_equal(p.n, 1);
	assert_non_null(strstr(p.text[0], "/nonexistent/bloomd.conf: cannot read"));
}

/*
 * Whole lines only: inih reads 200 bytes at a time and took the rest of a
 * longer line as a line of its own, so a long comment's tail ("fsync = no"
 * at column 200) was applied. Now a long setting is refused, a long comment
 * ignored; a NUL, a repeated key, a file that is no regular file and a
 * memory budget no filter fits in are problems with their line.
 */
static void whole_lines_and_one_value_a_key(void **state)
{
	struct problems p;
	char text[1024];
	struct config *c;

	(void)state;
	snprintf(text, sizeof(text), "[store]\n; %0250d fsync = no\nfsync = always\n", 0);
	for (char *z = strchr(text, '0'); *z == '0'; z++)
		*z = 'x';
	c = load(text, &p);
	assert_non_null(c);
	assert_int_equal(c->fsync, CONFIG_FSYNC_ALWAYS); /* the comment's tail is no setting */
	config_free(c);
	snprintf(text, sizeof(text), "[output]\nevents = /%0250d\n", 0);
	assert_null(load(text, &p));
	assert_true(any_problem_has(&p, ":2: line longer than 198 bytes: not read"));
	assert_null(load("[store]\nfsync = no\nfsync = always\n[entries]\nfile = a\nfile = b\n", &p));
	assert_int_equal(p.n, 1);
	assert_true(any_problem_has(&p, ":3: [store] fsync is given again (first at line 2)"));
	static const char nul[] = "[store]\nfsync = n\0o\n";
	assert_null(load_bytes(nul, sizeof(nul) - 1, &p));
	assert_true(any_problem_has(&p, ":2: a NUL byte in the line"));
	assert_null(load("[filter]\nmemory = 1\n", &p));
	assert_true(any_problem_has(&p, ":2: memory: expected a size from 1024"));
	memset(&p, 0, sizeof(p));
	assert_null(config_load("/tmp", collect, &p));
	assert_true(any_problem_has(&p, "/tmp: not a regular file"));
	memset(&p, 0, sizeof(p));
	assert_null(config_load("/dev/zero", collect, &p)); /* it used to read for ever */
	assert_true(any_problem_has(&p, "/dev/zero: not a regular file"));
}

/* conf/bloomd.conf documents the defaults: loading it must give exactly them. */
static void shipped_config_is_the_defaults(void **state)
{
	struct problems p = { 0 };
	struct config *shipped = config_load("conf/bloomd.conf", collect, &p), *d = config_defaults();

	(void)state;
	assert_int_equal(p.n, 0);
	assert_non_null(shipped);
	assert_null(shipped->interface);
	assert_int_equal(shipped->files.n, 0);
	assert_int_equal(shipped->snaplen, d->snaplen);
	assert_int_equal(shipped->promisc, d->promisc);
	assert_int_equal(shipped->memory, d->memory);
	assert_true(shipped->bits_per_entry == d->bits_per_entry);
	assert_int_equal(shipped->layout, d->layout);
	assert_int_equal(shipped->choices, d->choices);
	assert_int_equal(shipped->hashes, d->hashes);
	assert_int_equal(shipped->rounds, d->rounds);
	assert_int_equal(shipped->hash, d->hash);
	assert_int_equal(shipped->window, d->window);
	assert_true(shipped->bits_per_window == d->bits_per_window);
	assert_string_equal(shipped->events, d->events);
	assert_null(shipped->pcap);
	assert_int_equal(shipped->alert_once_per_flow, d->alert_once_per_flow);
	assert_int_equal(shipped->flow_timeout, d->flow_timeout);
	assert_true(shipped->fpr_target == d->fpr_target);
	assert_int_equal(shipped->auto_rebuild, d->auto_rebuild);
	assert_string_equal(shipped->socket, d->socket);
	assert_null(shipped->group);
	assert_int_equal(shipped->max_clients, d->max_clients);
	assert_int_equal(shipped->idle_timeout, d->idle_timeout);
	assert_string_equal(shipped->store_dir, d->store_dir);
	assert_int_equal(shipped->fsync, d->fsync);
	assert_int_equal(shipped->journal_max, d->journal_max);
	assert_null(shipped->user);
	assert_int_equal(shipped->log_level, d->log_level);
	assert_int_equal(shipped->log_target, d->log_target);
	config_free(shipped);
	config_free(d);
}

/* A doc's (section, key) pairs, as "section key" lines in one buffer. */
struct doc_keys {
	char text[16384];
	size_t len;
};

static void doc_add(struct doc_keys *d, const char *section, const char *key, size_t keylen)
{
	d->len += (size_t)snprintf(d->text + d->len, sizeof(d->text) - d->len, "\n%s %.*s\n", section,
				   (int)keylen, key);
	d->len--; /* the next pair starts at this one's newline */
	assert_true(d->len < sizeof(d->text) - 1);
}

static bool doc_has(const struct doc_keys *d, const char *section, const char *key)
{
	char pair[160];

	snprintf(pair, sizeof(pair), "\n%s %s\n", section, key);
	return strstr(d->text, pair) != NULL;
}

/* "list NAME" is the table's "list". */
static void doc_section(char *section, size_t size, const char *name, size_t len)
{
	snprintf(section, size, "%.*s", (int)(strncmp(name, "list ", 5) == 0 ? 4 : len), name);
}

/* conf/bloomd.conf: "[section]" or ";[section]" headers, then "key = " or ";key = " lines. */
static void conf_keys(struct doc_keys *d)
{
	FILE *f = fopen("conf/bloomd.conf", "r");
	char line[512], section[64] = "";

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = line + (line[0] == ';'), *close = strchr(p, ']');
		size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
		if (p[0] == '[' && close)
			doc_section(section, sizeof(section), p + 1, (size_t)(close - p - 1));
		else if (n && strncmp(p + n, " =", 2) == 0)
			doc_add(d, section, p, n);
	}
	fclose(f);
}

/* bloomd.conf(5): ".SH [section]", then each key a ".TP" followed by '.BI key " = ...'. */
static void man_keys(struct doc_keys *d, char *reload, size_t reload_size)
{
	FILE *f = fopen("man/bloomd.conf.5", "r");
	char line[512], section[64] = "";
	bool after_tp = false, in_reload = false;
	size_t rlen = 0;

	assert_non_null(f);
	reload[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, ".SH ", 4) == 0) {
			char *close = strchr(line, ']');
			in_reload = strcmp(line, ".SH RELOAD\n") == 0;
			if (line[4] == '[' && close)
				doc_section(section, sizeof(section), line + 5, (size_t)(close - line - 5));
		} else if (after_tp && strncmp(line, ".BI ", 4) == 0 && strstr(line, " \" = ")) {
			doc_add(d, section, line + 4, strcspn(line + 4, " "));
			for (char *p = line; (p = strstr(p, "\", ")) != NULL; p++) /* '.BI a " = x" ", b = y"' */
				if (strstr(p + 3, " = ") == p + 3 + strcspn(p + 3, " "))
					doc_add(d, section, p + 3, strcspn(p + 3, " "));
		} else if (in_reload && strncmp(line, ".\\\"", 3) != 0) { /* its words, without macros, quotes, comments */
			for (char *p = line + (line[0] == '.' ? strcspn(line, " ") : 0); *p; p++)
				if (*p != '"' && rlen + 1 < reload_size)
					reload[rlen++] = *p == '\n' ? ' ' : *p;
			reload[rlen] = '\0';
		}
		after_tp = strcmp(line, ".TP\n") == 0;
	}
	fclose(f);
}

/* Whether every key of section takes a restart. */
static bool all_restart(const char *section)
{
	struct config_key_about k;

	for (size_t i = 0; config_key_at(i, &k); i++)
		if (strcmp(k.section, section) == 0 && !k.restart)
			return false;
	return true;
}

/* The key table is the one list of keys: both documents name each of its keys, and no other. */
static void documents_name_every_key(void **state)
{
	static struct doc_keys conf, man, table;
	static char reload[8192];
	struct config_key_about k;
	char err[256], named[128];

	(void)state;
	if (config_keys_check(err, sizeof(err)) < 0)
		fail_msg("the key table: %s", err);
	conf_keys(&conf);
	man_keys(&man, reload, sizeof(reload));
	for (size_t i = 0; config_key_at(i, &k); i++) {
		doc_add(&table, k.section, k.name, strlen(k.name));
		if (!doc_has(&conf, k.section, k.name))
			fail_msg("conf/bloomd.conf does not name [%s] %s", k.section, k.name);
		if (!doc_has(&man, k.section, k.name))
			fail_msg("bloomd.conf(5) does not name [%s] %s", k.section, k.name);
		/* RELOAD names what waits for a restart: the whole section, or the key. */
		snprintf(named, sizeof(named), all_restart(k.section) ? "[%s]" : "[%s] %s", k.section, k.name);
		if (k.restart && !strstr(reload, named))
			fail_msg("bloomd.conf(5) RELOAD does not say %s takes a restart", named);
	}
	for (const char *p = conf.text; (p = strchr(p, '\n')) && p[1]; p++) {
		char section[64], key[64];
		assert_int_equal(sscanf(p + 1, "%63s %63s", section, key), 2);
		if (!doc_has(&table, section, key))
			fail_msg("conf/bloomd.conf names [%s] %s, which is no key", section, key);
	}
}

static void said_to(void *ctx, const char *what)
{
	strcat(strcat(ctx, what), ";");
}

/* A reload keeps what takes a restart, names it, and a second swap undoes the first. */
static void restart_keys_kept(void **state)
{
	struct problems p;
	struct config *running = load("[capture]\nsnaplen = 1600\n[log]\nlevel = debug\n", &p);
	struct config *fresh = load("[capture]\nsnaplen = 2000\nfile = a.pcap\n[log]\nlevel = error\n"
				    "[metrics]\nlisten = 127.0.0.1:9153\n", &p);
	char said[256] = "";

	(void)state;
	assert_non_null(running);
	assert_non_null(fresh);
	config_keep_running(running, fresh, said_to, said);
	assert_string_equal(said, "[capture] file;[capture] snaplen;[metrics] listen;");
	assert_int_equal(fresh->snaplen, 1600);
	assert_int_equal(fresh->files.n, 0);
	assert_null(fresh->metrics_listen);
	assert_int_equal(fresh->log_level, LOG_LEVEL_ERROR); /* a reload applies [log] */
	config_keep_running(running, fresh, said_to, said);
	assert_int_equal(fresh->snaplen, 2000);
	assert_int_equal(fresh->files.n, 1);
	assert_string_equal(fresh->metrics_listen, "127.0.0.1:9153");
	assert_int_equal(running->snaplen, 1600);
	config_free(running);
	config_free(fresh);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(documents_name_every_key), cmocka_unit_test(restart_keys_kept),
	cmocka_unit_test(shipped_config_is_the_defaults),
	cmocka_unit_test(every_key),		  cmocka_unit_test(defaults),
	cmocka_unit_test(every_problem_with_its_line), cmocka_unit_test(conflicting_options),
	cmocka_unit_test(missing_file), cmocka_unit_test(control_and_store_keys),
	cmocka_unit_test(whole_lines_and_one_value_a_key), cmocka_unit_test(list_sections), cmocka_unit_test(list_fetch_keys),
	cmocka_unit_test(crowdsec_source), cmocka_unit_test(cluster_section),   cmocka_unit_test(inline_mode), cmocka_unit_test(xdp_mode), cmocka_unit_test(pass_guards_and_manage),
};

TEST_MAIN("config", tests)
