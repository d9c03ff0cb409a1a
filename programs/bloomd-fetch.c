/* bloomd-fetch.c - one list version fetched over HTTP(S) with libcurl, in a process with no privileges. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"
#include "version.h"

#define PROG "bloomd-fetch"
#define STATUS_FD 3           /* where the status line goes when --status-fd is given */
#define VALIDATOR_MAX 256     /* an ETag or Last-Modified longer than this is not kept */
#define HEADERS_MAX 8192      /* --headers-stdin: what stdin may hold */

/* Exit codes: what the daemon and a script read. */
enum { EXIT_NEW = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_NOT_MODIFIED = 3 };

struct request {
	const char *url, *etag, *last_modified, *ca_file, *output;
	uint64_t max_size;
	unsigned timeout;
	int status_fd;
	bool headers_stdin;
	char headers[HEADERS_MAX];       /* read from stdin: "Name: value" a line */
};

/*
 * A gzip body is inflated here, not by libcurl, which takes a gzip stream
 * cut short (its end and CRC missing, the HTTP framing intact) as a whole
 * body: only a stream that reaches its end is a version.
 */
struct transfer {
	CURL *curl;
	int fd;                          /* the body goes here (a 200's only: an error page is not a version) */
	uint64_t bytes, max_size;        /* bytes: decoded */
	bool too_large, write_failed;
	char etag[VALIDATOR_MAX], last_modified[VALIDATOR_MAX];
	char encoding[32];               /* Content-Encoding: "" (none), "gzip", or what is not taken */
	z_stream z;
	bool inflating, inflated;        /* a gzip body begun; its stream reached its end */
	bool bad_gzip;                   /* inflate refused it (z.msg) */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " [--etag ETAG] [--last-modified DATE] [--max-size BYTES] [--timeout SECONDS]\n"
		"                    [--ca-file PEM] [--output FILE] [--status-fd FD] [--headers-stdin] URL\n"
		"Fetches URL (http or https, certificates verified) once; the body goes to stdout or FILE\n"
		"(with --headers-stdin, more request headers are read from stdin, \"Name: value\" a line)\n"
		"(written only when new), one JSON status line to stderr or FD.\n"
		"Exit: 0 new version, 3 not modified, 1 failed, 2 usage.\n");
}

/* ---- privileges ---- */

/*
 * Nothing is needed but the network: every capability goes, root becomes
 * nobody (unless a file of its must be replaced: --output), and no exec
 * can gain privileges. The body's size is capped as it is written.
 */
static int drop_privileges(bool become_nobody, char *err, size_t errlen)
{
	struct rlimit core = { 0, 0 };

	if (become_nobody && (getuid() == 0 || geteuid() == 0)) {
		const struct passwd *pw = getpwnam("nobody");
		/* EPERM: a root already without CAP_SETUID (bloomd as root drops it); it stays, with no capability left. */
		if (pw && (setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) && errno != EPERM) {
			snprintf(err, errlen, "cannot become nobody: %s", strerror(errno));
			return -1;
		}
	}
	cap_t none = cap_init();
	int rc = none ? cap_set_proc(none) : -1;
	cap_free(none);
	if (rc < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "cannot drop privileges: %s", strerror(errno));
		return -1;
	}
	/* No core of a process that held a feed's credentials in its URL; a unit's filter may refuse it. */
	(void)setrlimit(RLIMIT_CORE, &core);
	return 0;
}

/* ---- the transfer ---- */

/* len decoded bytes to the output; false (and why, in t) to stop the transfer. */
static bool put_out(struct transfer *t, const char *data, size_t len)
{
	size_t done = 0;

	if (t->bytes + len > t->max_size) {
		t->too_large = true;
		return false;
	}
	while (done < len) {
		ssize_t w = write(t->fd, data + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			t->write_failed = true;
			return false;
		}
		done += (size_t)w;
	}
	t->bytes += len;
	return true;
}

/* len bytes of a gzip body inflated to the output; false to stop. Bytes after the stream's end are passed over. */
static bool inflate_out(struct transfer *t, char *data, size_t len)
{
	char out[1 << 16];

	if (!t->inflating) {
		if (inflateInit2(&t->z, 16 + MAX_WBITS) != Z_OK) {
			t->bad_gzip = true;
			return false;
		}
		t->inflating = true;
	}
	t->z.next_in = (Bytef *)data;
	t->z.avail_in = (uInt)len;
	while (t->z.avail_in && !t->inflated) {
		t->z.next_out = (Bytef *)out;
		t->z.avail_out = sizeof(out);
		int rc = inflate(&t->z, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END) {
			t->bad_gzip = true;
			return false;
		}
		t->inflated = rc == Z_STREAM_END;
		if (!put_out(t, out, sizeof(out) - t->z.avail_out))
			return false;
	}
	return true;
}

static size_t write_body(char *data, size_t size, size_t n, void *ctx)
{
	struct transfer *t = ctx;
	size_t len = size * n;
	long http = 0;

	if (curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &http) == CURLE_OK && http != 200)
		return len;
	if (t->encoding[0] && strcmp(t->encoding, "gzip") != 0)
		return 0; /* an encoding not asked for: said by fetch */
	bool ok = t->encoding[0] ? inflate_out(t, data, len) : put_out(t, data, len);
	return ok ? len : 0; /* 0: curl stops with CURLE_WRITE_ERROR */
}

/* value of header line "Name: value\r\n" if it is name's, trimmed, into out. */
static void header_value(const char *line, size_t len, const char *name, char *out, size_t outlen)
{
	size_t n = strlen(name);

	if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return;
	line += n + 1;
	len -= n + 1;
	while (len && (*line == ' ' || *line == '\t'))
		line++, len--;
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n' || line[len - 1] == ' '))
		len--;
	if (len < outlen)
		snprintf(out, outlen, "%.*s", (int)len, line);
}

static size_t read_header(char *line, size_t size, size_t n, void *ctx)
{
	struct transfer *t = ctx;
	size_t len = size * n;

	if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) /* a new response (after a redirect): its own validators */
		t->etag[0] = t->last_modified[0] = t->encoding[0] = '\0';
	header_value(line, len, "ETag", t->etag, sizeof(t->etag));
	header_value(line, len, "Last-Modified", t->last_modified, sizeof(t->last_modified));
	header_value(line, len, "Content-Encoding", t->encoding, sizeof(t->encoding));
	if (strcmp(t->encoding, "x-gzip") == 0)
		strcpy(t->encoding, "gzip");
	else if (strcmp(t->encoding, "identity") == 0)
		t->encoding[0] = '\0';
	return len;
}

static struct curl_slist *conditions(const struct request *rq)
{
	struct curl_slist *headers = curl_slist_append(NULL, "Accept-Encoding: gzip"); /* inflated here */
	char line[VALIDATOR_MAX + 32];

	if (rq->etag && rq->etag[0]) {
		snprintf(line, sizeof(line), "If-None-Match: %s", rq->etag);
		headers = curl_slist_append(headers, line);
	}
	if (rq->last_modified && rq->last_modified[0]) {
		snprintf(line, sizeof(line), "If-Modified-Since: %s", rq->last_modified);
		headers = curl_slist_append(headers, line);
	}
	for (const char *h = rq->headers; *h; h += strlen(h) + 1) /* NUL-separated by read_headers */
		headers = curl_slist_append(headers, h);
	return headers;
}

/*
 * The transfer's options: http(s) only, a redirect never from https to http,
 * certificates checked. With headers of the request's own (a key), libcurl
 * would send them to any host a redirect names: redirects are then followed
 * here (follow), not by libcurl.
 */
static CURLcode set_options(CURL *curl, const struct request *rq, struct transfer *t, struct curl_slist *headers,
			    char *curl_err)
{
	bool https = strncmp(rq->url, "https://", 8) == 0;
	unsigned connect = rq->timeout < 30 ? rq->timeout : 30;
	CURLcode rc = CURLE_OK;

#define SET(option, value) \
	if (rc == CURLE_OK) \
		rc = curl_easy_setopt(curl, option, value)
	SET(CURLOPT_URL, rq->url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, https ? "https" : "http,https");
	SET(CURLOPT_FOLLOWLOCATION, rq->headers[0] ? 0L : 1L);
	SET(CURLOPT_MAXREDIRS, 5L);
	SET(CURLOPT_TIMEOUT, (long)rq->timeout);
	SET(CURLOPT_CONNECTTIMEOUT, (long)connect);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	SET(CURLOPT_USERAGENT, "bloomd/" BLOOMD_VERSION); /* a LAPI's bouncer list names bloomd */
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)rq->max_size);
	SET(CURLOPT_HTTPHEADER, headers);
	SET(CURLOPT_WRITEFUNCTION, write_body);
	SET(CURLOPT_WRITEDATA, t);
	SET(CURLOPT_HEADERFUNCTION, read_header);
	SET(CURLOPT_HEADERDATA, t);
	SET(CURLOPT_ERRORBUFFER, curl_err);
	if (rq->ca_file)
		SET(CURLOPT_CAINFO, rq->ca_file);
#undef SET
	return rc;
}

/* url's origin, "scheme://host:port" with the scheme's port where none is written; -1 if url has none. */
static int origin_of(const char *url, char *out, size_t len)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL;
	int rc = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
			 curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
			 curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
			 curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK
		 ? 0 : -1;

	if (rc == 0)
		snprintf(out, len, "%s://%s:%s", scheme, host, port);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return rc;
}

#define REDIRECTS_MAX 5

/*
 * A request with headers of its own, its redirects followed here: to the
 * same origin (scheme, host and port) only, where the headers may go; a
 * redirect elsewhere fails the fetch, saying where it was sent.
 */
static CURLcode follow(CURL *curl, const struct request *rq, long *http, char *err, size_t errlen)
{
	char at[4096], origin[1024], there[1024];
	const char *next = NULL;
	CURLcode rc = curl_easy_perform(curl);

	snprintf(at, sizeof(at), "%s", rq->url);
	for (int hops = 0; rc == CURLE_OK; hops++) {
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, http);
		if (*http < 300 || *http > 399 || curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &next) != CURLE_OK ||
		    next == NULL)
			return CURLE_OK;
		if (hops == REDIRECTS_MAX) {
			snprintf(err, errlen, "more than %d redirects", REDIRECTS_MAX);
			return CURLE_TOO_MANY_REDIRECTS;
		}
		if (origin_of(at, origin, sizeof(origin)) < 0 || origin_of(next, there, sizeof(there)) < 0 ||
		    strcasecmp(origin, there) != 0) {
			snprintf(err, errlen, "redirected to %.100s, away from %.70s: refused, the key is not sent there",
				 next, origin);
			return CURLE_UNSUPPORTED_PROTOCOL;
		}
		snprintf(at, sizeof(at), "%s", next);
		rc = curl_easy_setopt(curl, CURLOPT_URL, at);
		if (rc == CURLE_OK)
			rc = curl_easy_perform(curl);
	}
	return rc;
}

/* What went wrong, said as an operator needs it. */
static void failure(const struct request *rq, const struct transfer *t, CURLcode rc, const char *curl_err,
		    char *err, size_t errlen)
{
	if (t->too_large)
		snprintf(err, errlen, "larger than max_size (%llu bytes)", (unsigned long long)rq->max_size);
	else if (t->bad_gzip)
		snprintf(err, errlen, "the body's gzip stream is damaged (%s): not a version", t->z.msg ? t->z.msg : "zlib");
	else if (t->encoding[0] && strcmp(t->encoding, "gzip") != 0)
		snprintf(err, errlen, "the body comes in Content-Encoding %s, which was not asked for", t->encoding);
	else if (rc == CURLE_FILESIZE_EXCEEDED)
		snprintf(err, errlen, "the server says it is larger than max_size (%llu bytes)",
			 (unsigned long long)rq->max_size);
	else if (t->write_failed)
		snprintf(err, errlen, "cannot write the body: %s", strerror(errno));
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(err, errlen, "timed out after %u s (%llu bytes read): %s", rq->timeout,
			 (unsigned long long)t->bytes, curl_err[0] ? curl_err : curl_easy_strerror(rc));
	else
		snprintf(err, errlen, "%s", curl_err[0] ? curl_err : curl_easy_strerror(rc));
}

/* ---- the status line ---- */

static void report(const struct request *rq, const char *result, long http, const struct transfer *t,
		   const char *error, double seconds)
{
	json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:f}", "result", result, "url", rq->url, "http", (json_int_t)http,
			      "bytes", (json_int_t)t->bytes, "seconds", seconds);

	if (o && t->etag[0])
		json_object_set_new(o, "etag", json_string(t->etag));
	if (o && t->last_modified[0])
		json_object_set_new(o, "last_modified", json_string(t->last_modified));
	if (o && error)
		json_object_set_new(o, "error", json_string(error));
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (text)
		dprintf(rq->status_fd, "%s\n", text);
	free(text);
	json_decref(o);
}

static double since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* One fetch: the exit code, with the status line written. */
static int fetch(const struct request *rq, struct transfer *t)
{
	char curl_err[CURL_ERROR_SIZE] = "", err[512];
	struct timespec start;
	long http = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	CURL *curl = t->curl = curl_easy_init();
	struct curl_slist *headers = conditions(rq);
	CURLcode rc = curl ? set_options(curl, rq, t, headers, curl_err) : CURLE_FAILED_INIT;
	if (rc == CURLE_OK && rq->headers[0])
		rc = follow(curl, rq, &http, curl_err, sizeof(curl_err));
	else if (rc == CURLE_OK)
		rc = curl_easy_perform(curl);
	if (curl)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	if (t->inflating)
		inflateEnd(&t->z); /* z.msg, if any, stays: zlib's own static text */
	if (rc != CURLE_OK) {
		failure(rq, t, rc, curl_err, err, sizeof(err));
		report(rq, "failed", http, t, err, since(&start));
		return EXIT_FAILED;
	}
	if (http == 304) {
		report(rq, "not_modified", http, t, NULL, since(&start));
		return EXIT_NOT_MODIFIED;
	}
	if (http != 200) {
		snprintf(err, sizeof(err), "the server answered HTTP %ld, not 200", http);
		report(rq, "failed", http, t, err, since(&start));
		return EXIT_FAILED;
	}
	if (t->encoding[0] && !t->inflated) {
		snprintf(err, sizeof(err), "the body's gzip stream ends before its end (cut short, %llu bytes decoded): not a version",
			 (unsigned long long)t->bytes);
		report(rq, "failed", http, t, err, since(&start));
		return EXIT_FAILED;
	}
	report(rq, "new", http, t, NULL, since(&start));
	return EXIT_NEW;
}

/* ---- options and the output ---- */

static int parse(int argc, char **argv, struct request *rq)
{
	static const struct option options[] = {
		{ "etag", required_argument, NULL, 'e' },      { "last-modified", required_argument, NULL, 'm' },
		{ "max-size", required_argument, NULL, 's' },  { "timeout", required_argument, NULL, 't' },
		{ "ca-file", required_argument, NULL, 'c' },   { "output", required_argument, NULL, 'o' },
		{ "status-fd", required_argument, NULL, 'S' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },         { "headers-stdin", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned fd;
	int c;

	*rq = (struct request){ .max_size = 64ULL << 20, .timeout = 60, .status_fd = STDERR_FILENO };
	while ((c = getopt_long(argc, argv, "e:m:s:t:c:o:S:hVH", options, NULL)) != -1) {
		switch (c) {
		case 'H': rq->headers_stdin = true; break;
		case 'e': rq->etag = optarg; break;
		case 'm': rq->last_modified = optarg; break;
		case 'c': rq->ca_file = optarg; break;
		case 'o': rq->output = optarg; break;
		case 's':
			if (cli_u64(PROG, "--max-size", optarg, 1, 1ULL << 40, &rq->max_size) < 0)
				return -1;
			break;
		case 't':
			if (cli_unsigned(PROG, "--timeout", optarg, 1, 86400, &rq->timeout) < 0)
				return -1;
			break;
		case 'S':
			if (cli_unsigned(PROG, "--status-fd", optarg, 2, 1023, &fd) < 0)
				return -1;
			rq->status_fd = (int)fd;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf(PROG " %s\n", BLOOMD_VERSION); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind != argc - 1 ||
	    (strncmp(argv[optind], "https://", 8) != 0 && strncmp(argv[optind], "http://", 7) != 0)) {
		fprintf(stderr, PROG ": give one http:// or https:// URL\n");
		usage(stderr);
		return -1;
	}
	rq->url = argv[optind];
	return 0;
}

/*
 * --headers-stdin: each line of stdin a header, "Name: value" (a bouncer's
 * key, kept out of the arguments every user can read); stored NUL-separated.
 */
static int read_headers(struct request *rq, char *err, size_t errlen)
{
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(rq->headers) - 2 && (n = read(STDIN_FILENO, rq->headers + len, sizeof(rq->headers) - 2 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "cannot read the headers on stdin: %s", strerror(errno));
			return -1;
		}
		len += (size_t)n;
	}
	if (len >= sizeof(rq->headers) - 2) {
		snprintf(err, errlen, "the headers on stdin pass %d bytes", HEADERS_MAX - 2);
		return -1;
	}
	rq->headers[len] = rq->headers[len + 1] = '\0';
	for (char *line = rq->headers; *line; line += strlen(line) + 1) {
		line[strcspn(line, "\n")] = '\0';
		const char *colon = strchr(line, ':');
		if (colon == NULL || colon == line || strpbrk(line, "\r") || memchr(line, ' ', (size_t)(colon - line))) {
			snprintf(err, errlen, "a header on stdin is not \"Name: value\"");
			return -1;
		}
	}
	return 0;
}

/* Only stdin, stdout, stderr and the status fd stay open: nothing inherited by mistake reaches the network side. */
static int keep_only_standard_fds(struct request *rq)
{
	if (rq->status_fd > STDERR_FILENO && rq->status_fd != STATUS_FD) {
		if (dup2(rq->status_fd, STATUS_FD) < 0)
			return -1;
		rq->status_fd = STATUS_FD;
	}
	return close_range(rq->status_fd > STDERR_FILENO ? STATUS_FD + 1 : STATUS_FD, ~0U, 0);
}

int main(int argc, char **argv)
{
	struct request rq;
	struct transfer t = { .fd = STDOUT_FILENO };
	char tmp[4096] = "", err[256];

	if (parse(argc, argv, &rq) < 0)
		return EXIT_USAGE;
	if (rq.headers_stdin && read_headers(&rq, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return EXIT_USAGE;
	}
	t.max_size = rq.max_size;
	if (keep_only_standard_fds(&rq) < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(errno));
		return EXIT_FAILED;
	}
	if (rq.output) { /* a new version replaces FILE whole; any other outcome leaves it */
		snprintf(tmp, sizeof(tmp), "%s.XXXXXX", rq.output);
		if ((t.fd = mkstemp(tmp)) < 0) {
			fprintf(stderr, PROG ": %s: %s\n", tmp, strerror(errno));
			return EXIT_FAILED;
		}
	}
	if (drop_privileges(rq.output == NULL, err, sizeof(err)) < 0 ||
	    (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 && snprintf(err, sizeof(err), "libcurl cannot start") > 0)) {
		report(&rq, "failed", 0, &t, err, 0);
		return EXIT_FAILED;
	}
	int rc = fetch(&rq, &t);
	if (rq.output && (rc != EXIT_NEW || fsync(t.fd) < 0 || rename(tmp, rq.output) < 0)) {
		if (rc == EXIT_NEW)
			fprintf(stderr, PROG ": %s: %s\n", rq.output, strerror(errno));
		unlink(tmp);
		rc = rc == EXIT_NEW ? EXIT_FAILED : rc;
	}
	curl_global_cleanup();
	return rc;
}
