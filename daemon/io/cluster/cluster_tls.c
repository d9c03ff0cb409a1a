/* cluster_tls.c - TLS to Redis and the sentinels: one OpenSSL context, each session checked against the server's name. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "cluster_internal.h"

#include <errno.h>
#include <hiredis/hiredis_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "entry.h"
#include "error.h"

/*
 * hiredis's own context sets the server name for SNI but checks no name
 * against the certificate: any certificate the CA signed would do. So each
 * session is made here, with the name (or address) the certificate must
 * hold, and handed to hiredis (redisInitiateSSL), which owns it from then.
 * Why a check failed is written, by the verify callback, to the buffer the
 * caller gives (the session's app data): the error hiredis reports for a
 * handshake cut short says only that a read failed.
 */

static int on_verify(int ok, X509_STORE_CTX *store)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
	char *why = ssl ? SSL_get_app_data(ssl) : NULL;

	if (!ok && why && !why[0])
		snprintf(why, TLS_WHY_MAX, "the server's certificate is refused: %s",
			 X509_verify_cert_error_string(X509_STORE_CTX_get_error(store)));
	return ok;
}

/* OpenSSL's reason for the last failure on this thread, or fallback. */
static const char *openssl_reason(const char *fallback)
{
	const char *reason = ERR_reason_error_string(ERR_peek_last_error());

	return reason ? reason : fallback;
}

/* The context, from [cluster]'s files as k names them now (a reload's later changes are not seen: RESTART). */
int cluster_tls_open(struct cluster *c, const struct cluster_config *k, char *err, size_t errlen)
{
	if (!k->tls)
		return 0;
	const char *files[][2] = { { "tls_ca_file", k->tls_ca_file }, { "tls_cert_file", k->tls_cert_file },
				   { "tls_key_file", k->tls_key_file } };
	for (size_t i = 0; i < 3; i++) /* OpenSSL would say only "system lib" */
		if (files[i][1] && access(files[i][1], R_OK) < 0) {
			error_set(err, errlen, "[cluster] %s %s: %s", files[i][0], files[i][1], strerror(errno));
			return -1;
		}
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (ctx == NULL) {
		error_set(err, errlen, "[cluster] tls: %s", openssl_reason("no TLS context"));
		return -1;
	}
	c->tls = ctx;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, on_verify);
	if (k->tls_ca_file ? SSL_CTX_load_verify_locations(ctx, k->tls_ca_file, NULL) != 1
			   : SSL_CTX_set_default_verify_paths(ctx) != 1) {
		error_set(err, errlen, "[cluster] tls_ca_file %s: %s", k->tls_ca_file ? k->tls_ca_file : "(the system's store)",
			  openssl_reason("cannot be read"));
		return -1;
	}
	if (k->tls_cert_file && SSL_CTX_use_certificate_chain_file(ctx, k->tls_cert_file) != 1) {
		error_set(err, errlen, "[cluster] tls_cert_file %s: %s", k->tls_cert_file, openssl_reason("cannot be read"));
		return -1;
	}
	if (k->tls_key_file && (SSL_CTX_use_PrivateKey_file(ctx, k->tls_key_file, SSL_FILETYPE_PEM) != 1 ||
				SSL_CTX_check_private_key(ctx) != 1)) {
		error_set(err, errlen, "[cluster] tls_key_file %s: %s", k->tls_key_file, openssl_reason("cannot be read"));
		return -1;
	}
	return 0;
}

void cluster_tls_close(struct cluster *c)
{
	SSL_CTX_free(c->tls);
	c->tls = NULL;
}

/* The name (or address) the server's certificate must hold, and SNI for a name. */
static int expect_name(SSL *ssl, const char *name)
{
	uint8_t any[16];
	int family;

	if (entry_parse_ip(name, any, &family) > 0)
		return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1 ? 0 : -1;
	char sni[256]; /* SSL_set_tlsext_host_name's macro casts its name to void * */
	snprintf(sni, sizeof(sni), "%s", name);
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	return SSL_set1_host(ssl, name) == 1 && SSL_set_tlsext_host_name(ssl, sni) == 1 ? 0 : -1;
}

/*
 * TLS on rc, a connection just begun (async or blocking), to host: 0 (and
 * at once without [cluster] tls), or -1 with why (callers word it through
 * cluster_tls_why). why stays the session's, for the verify callback.
 */
int cluster_tls_start(const struct cluster *c, redisContext *rc, const char *host, char why[TLS_WHY_MAX])
{
	why[0] = '\0';
	if (c->tls == NULL)
		return 0;
	const char *name = c->cfg->tls_server_name ? c->cfg->tls_server_name : host;
	SSL *ssl = SSL_new(c->tls);
	if (ssl == NULL || expect_name(ssl, name) < 0) {
		snprintf(why, TLS_WHY_MAX, "no session for %s: %s", name, openssl_reason("out of memory"));
		SSL_free(ssl);
		return -1;
	}
	SSL_set_app_data(ssl, why);
	if (redisInitiateSSL(rc, ssl) != REDIS_OK) {
		if (!why[0])
			snprintf(why, TLS_WHY_MAX, "%s", rc->errstr);
		SSL_free(ssl); /* not taken by hiredis */
		return -1;
	}
	return 0;
}

/* What a failed connection says: why the check refused the server, or OpenSSL's reason, or errstr when TLS had none. */
const char *cluster_tls_why(const char *why, const char *errstr, char *out, size_t len)
{
	const char *reason = ERR_reason_error_string(ERR_peek_last_error());

	ERR_clear_error(); /* read once: the next failure is told by its own */
	if (why[0])
		snprintf(out, len, "TLS: %s", why);
	else if (reason)
		snprintf(out, len, "TLS: %s", reason);
	else
		return errstr;
	return out;
}
