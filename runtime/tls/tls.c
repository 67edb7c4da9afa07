/* tls.c — the run's CA, leaf certificates minted per name, and the OpenSSL
 * contexts of ward-tls (tls-internal.h). OpenSSL 3. */
#include "runtime/tls/tls-internal.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "runtime/util/util-internal.h"

/* Leaves cached per name; past this many, minted each time (a policy names
 * a handful of hosts; this only bounds a hostile sandbox's churn). */
#define LEAF_CACHE_MAX 256
#define VALID_BEFORE (60L * 60)        /* clocks inside may lag a little */
#define VALID_FOR (7L * 24 * 60 * 60)  /* longer than any run's timeout */

static const unsigned char alpn_http11[] = "\x08http/1.1";

struct leaf {
	char name[256];
	X509 *cert;
};

/* Sessions with real servers, per host, for resumption: the next
 * connection to that host skips the certificate chain and its checks,
 * about half of what the upstream handshake costs (OpenSSL 3.0). */
#define SESSION_CACHE_MAX 64

struct session {
	char host[256];
	SSL_SESSION *s;
};

struct ward_tls {
	struct session sessions[SESSION_CACHE_MAX];
	size_t n_sessions;
	EVP_PKEY *ca_key, *leaf_key;
	X509 *ca;
	char *ca_pem;
	SSL_CTX *server, *client;
	pthread_mutex_t mu;
	struct leaf leaves[LEAF_CACHE_MAX];
	size_t n_leaves;
};

static int tls_fail(struct ward_error **err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return ward_error_make(err, ENOMEM, "%s%s%s", what, buf[0] ? ": " : "", buf);
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return 0;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok;
}

static int random_serial(X509 *cert)
{
	BIGNUM *bn = BN_new();
	int ok = bn && BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
		 BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL;

	BN_free(bn);
	return ok;
}

/* A certificate's common frame: v3, random serial, the validity window. */
static X509 *cert_frame(EVP_PKEY *key)
{
	X509 *x = X509_new();

	if (!x || !X509_set_version(x, 2) || !random_serial(x) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -VALID_BEFORE) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), VALID_FOR) || !X509_set_pubkey(x, key)) {
		X509_free(x);
		return NULL;
	}
	return x;
}

static X509 *make_ca(EVP_PKEY *key)
{
	X509 *x = cert_frame(key);
	X509_NAME *name = X509_NAME_new();
	unsigned char id[4];
	char cn[64];

	if (!x || !name || RAND_bytes(id, sizeof(id)) != 1)
		goto fail;
	snprintf(cn, sizeof(cn), "ward run CA %02x%02x%02x%02x", id[0], id[1], id[2], id[3]);
	if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"ward", -1,
					-1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
					-1, 0) ||
	    !X509_set_subject_name(x, name) || !X509_set_issuer_name(x, name) ||
	    !add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    !add_ext(x, x, NID_subject_key_identifier, "hash") ||
	    !add_ext(x, x, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(x, key, EVP_sha256()))
		goto fail;
	X509_NAME_free(name);
	return x;
fail:
	X509_NAME_free(name);
	X509_free(x);
	return NULL;
}

static X509 *mint_leaf(struct ward_tls *t, const char *host, bool literal)
{
	X509 *x = cert_frame(t->leaf_key);
	X509_NAME *name = X509_NAME_new();
	char san[300];

	if (!x || !name)
		goto fail;
	/* a CN is at most 64 characters; the SAN is what clients check */
	if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)host,
					strlen(host) > 64 ? 64 : -1, -1, 0) ||
	    !X509_set_subject_name(x, name) ||
	    !X509_set_issuer_name(x, X509_get_subject_name(t->ca)))
		goto fail;
	snprintf(san, sizeof(san), "%s:%s", literal ? "IP" : "DNS", host);
	if (!add_ext(x, t->ca, NID_subject_alt_name, san) ||
	    !add_ext(x, t->ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, t->ca, NID_key_usage, "critical,digitalSignature") ||
	    !add_ext(x, t->ca, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(x, t->ca, NID_subject_key_identifier, "hash") ||
	    !add_ext(x, t->ca, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(x, t->ca_key, EVP_sha256()))
		goto fail;
	X509_NAME_free(name);
	return x;
fail:
	X509_NAME_free(name);
	X509_free(x);
	return NULL;
}

/* The leaf for host, with a reference for the caller. */
static X509 *leaf_for(struct ward_tls *t, const char *host, bool literal)
{
	X509 *x = NULL;
	size_t i;

	pthread_mutex_lock(&t->mu);
	for (i = 0; i < t->n_leaves; i++)
		if (strcmp(t->leaves[i].name, host) == 0) {
			x = t->leaves[i].cert;
			X509_up_ref(x);
			break;
		}
	if (!x) {
		x = mint_leaf(t, host, literal);
		if (x && t->n_leaves < LEAF_CACHE_MAX && strlen(host) < sizeof(t->leaves[0].name)) {
			snprintf(t->leaves[t->n_leaves].name, sizeof(t->leaves[0].name), "%s", host);
			t->leaves[t->n_leaves++].cert = x;
			X509_up_ref(x);
		}
	}
	pthread_mutex_unlock(&t->mu);
	return x;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char *o;

	/* HTTP/1.1 or nothing: h2 through interception is not done */
	if (SSL_select_next_proto(&o, outlen, alpn_http11, sizeof(alpn_http11) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

/* The ClientHello's name must be the CONNECT line's: a leaf for one name
 * is never shown to a client asking for another. No SNI (an IP literal,
 * an old client) is fine: the leaf is the CONNECT host's either way. */
static int sni_check(SSL *ssl, int *alert, void *arg)
{
	struct ward_tls_peer *peer = SSL_get_app_data(ssl);
	const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	size_t n;

	if (!sni || !peer)
		return SSL_TLSEXT_ERR_OK;
	n = strlen(sni);
	if (n && sni[n - 1] == '.')
		n--;
	if (n == strlen(peer->host) && strncasecmp(sni, peer->host, n) == 0)
		return SSL_TLSEXT_ERR_OK;
	peer->sni_refused = true;
	snprintf(peer->sni, sizeof(peer->sni), "%.200s", sni);
	*alert = SSL_AD_UNRECOGNIZED_NAME;
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static int host_index = -1; /* the SSL's ex_data slot: the host it was made for */
static pthread_once_t host_index_once = PTHREAD_ONCE_INIT;

static void host_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
		      void *argp)
{
	free(ptr);
}

static void host_index_make(void)
{
	host_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, host_free);
}

/* A session the server gave (after the handshake, with TLS 1.3): kept for
 * the host, replacing the one before. */
static int session_new(SSL *ssl, SSL_SESSION *sess)
{
	struct ward_tls *t = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	const char *host = host_index >= 0 ? SSL_get_ex_data(ssl, host_index) : NULL;
	size_t i;

	if (!t || !host)
		return 0;
	pthread_mutex_lock(&t->mu);
	for (i = 0; i < t->n_sessions && strcmp(t->sessions[i].host, host) != 0; i++)
		;
	if (i == t->n_sessions) {
		if (t->n_sessions == SESSION_CACHE_MAX || strlen(host) >= sizeof(t->sessions[0].host)) {
			pthread_mutex_unlock(&t->mu);
			return 0;
		}
		snprintf(t->sessions[i].host, sizeof(t->sessions[i].host), "%s", host);
		t->n_sessions++;
	} else {
		SSL_SESSION_free(t->sessions[i].s);
	}
	t->sessions[i].s = sess;
	pthread_mutex_unlock(&t->mu);
	return 1; /* the reference is ours */
}

static int load_ca_file(X509_STORE *store, const char *path, struct ward_error **err)
{
	FILE *f = fopen(path, "re");
	X509 *x;
	int n = 0;

	if (!f)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
					    "--upstream-ca: open '%s'", path);
	while ((x = PEM_read_X509(f, NULL, NULL, NULL))) {
		if (!X509_STORE_add_cert(store, x)) {
			X509_free(x);
			fclose(f);
			return tls_fail(err, "--upstream-ca: add certificate");
		}
		X509_free(x);
		n++;
	}
	fclose(f);
	ERR_clear_error(); /* the end of the file reads as a PEM error */
	if (n == 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "--upstream-ca: no PEM certificate in '%s'", path);
	return 0;
}

/* The certificates of a hashed directory (c_rehash's "<hash>.<n>" names),
 * read now: OpenSSL reads such a directory lazily, at each verification,
 * and ward-tls cannot open files by then (its Landlock domain). Done for
 * $SSL_CERT_DIR, and for the default directory when there is no default
 * file (a host with a directory only). */
static void load_cert_dirs(X509_STORE *store)
{
	const char *env = getenv(X509_get_default_cert_dir_env());
	const char *fenv = getenv(X509_get_default_cert_file_env());
	char *dirs, *dir, *save = NULL;

	if (!env && access(fenv ? fenv : X509_get_default_cert_file(), R_OK) == 0)
		return;
	dirs = strdup(env ? env : X509_get_default_cert_dir());
	for (dir = dirs ? strtok_r(dirs, ":", &save) : NULL; dir; dir = strtok_r(NULL, ":", &save)) {
		DIR *d = opendir(dir);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char path[PATH_MAX];
			size_t n = strspn(e->d_name, "0123456789abcdef");
			FILE *f;
			X509 *x;

			if (n != 8 || e->d_name[8] != '.' || !e->d_name[9] ||
			    strspn(e->d_name + 9, "0123456789") != strlen(e->d_name + 9))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			f = fopen(path, "re");
			while (f && (x = PEM_read_X509(f, NULL, NULL, NULL))) {
				X509_STORE_add_cert(store, x); /* a duplicate is no harm */
				X509_free(x);
			}
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
	}
	free(dirs);
	ERR_clear_error();
}

struct ward_tls *ward_tls_new(const char *upstream_ca, struct ward_error **err)
{
	struct ward_tls *t = calloc(1, sizeof(*t));
	BIO *bio = NULL;
	BUF_MEM *mem;

	if (!t) {
		ward_error_make(err, ENOMEM, "tls");
		return NULL;
	}
	pthread_mutex_init(&t->mu, NULL);
	/* Fresh entropy into the generator before the keys: its state may
	 * predate the sandbox's init (a library caller's earlier run), whose
	 * copy of our memory must not predict them. */
	if (RAND_poll() != 1) {
		tls_fail(err, "seed the random generator");
		goto fail;
	}
	t->ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	t->leaf_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!t->ca_key || !t->leaf_key) {
		tls_fail(err, "make the run's CA key");
		goto fail;
	}
	t->ca = make_ca(t->ca_key);
	if (!t->ca) {
		tls_fail(err, "make the run's CA certificate");
		goto fail;
	}
	bio = BIO_new(BIO_s_mem());
	if (!bio || !PEM_write_bio_X509(bio, t->ca)) {
		tls_fail(err, "encode the run's CA certificate");
		goto fail;
	}
	BIO_get_mem_ptr(bio, &mem);
	t->ca_pem = strndup(mem->data, mem->length);
	BIO_free(bio);
	bio = NULL;

	t->server = SSL_CTX_new(TLS_server_method());
	t->client = SSL_CTX_new(TLS_client_method());
	if (!t->ca_pem || !t->server || !t->client) {
		tls_fail(err, "make the TLS contexts");
		goto fail;
	}
	SSL_CTX_set_min_proto_version(t->server, TLS1_2_VERSION);
	SSL_CTX_set_min_proto_version(t->client, TLS1_2_VERSION);
	/* No sessions towards the sandbox: nothing kept per run. With TLS 1.3,
	 * SSL_OP_NO_TICKET alone only makes the tickets stateful — every
	 * session the sandbox's connections make kept in the server cache (up
	 * to 20480 of them, resumable): no tickets and no cache. An end of
	 * stream without close_notify reads as one (servers close a
	 * close-delimited body that way; the framing says if it was whole). */
	SSL_CTX_set_options(t->server, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION |
					       SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_num_tickets(t->server, 0);
	SSL_CTX_set_session_cache_mode(t->server, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(t->client, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
	/* Records read ahead, as many as a 64 KiB buffer holds in one read:
	 * without it each record costs two reads (its header, then the rest).
	 * The relay asks SSL_read for more until it wants the socket, so
	 * nothing waits in the buffer while it polls. */
	SSL_CTX_set_read_ahead(t->server, 1);
	SSL_CTX_set_read_ahead(t->client, 1);
	SSL_CTX_set_default_read_buffer_len(t->server, 64 * 1024);
	SSL_CTX_set_default_read_buffer_len(t->client, 64 * 1024);
	SSL_CTX_set_tlsext_servername_callback(t->server, sni_check);
	SSL_CTX_set_alpn_select_cb(t->server, alpn_select, NULL);
	if (SSL_CTX_set_default_verify_paths(t->client) != 1) {
		tls_fail(err, "load the system's trust store");
		goto fail;
	}
	load_cert_dirs(SSL_CTX_get_cert_store(t->client));
	if (upstream_ca && load_ca_file(SSL_CTX_get_cert_store(t->client), upstream_ca, err) < 0)
		goto fail;
	SSL_CTX_set_verify(t->client, SSL_VERIFY_PEER, NULL);
	pthread_once(&host_index_once, host_index_make);
	SSL_CTX_set_app_data(t->client, t);
	SSL_CTX_set_session_cache_mode(t->client,
				       SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(t->client, session_new);
	return t;
fail:
	BIO_free(bio);
	ward_tls_free(t);
	return NULL;
}

void ward_tls_free(struct ward_tls *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_leaves; i++)
		X509_free(t->leaves[i].cert);
	for (i = 0; i < t->n_sessions; i++)
		SSL_SESSION_free(t->sessions[i].s);
	SSL_CTX_free(t->server);
	SSL_CTX_free(t->client);
	X509_free(t->ca);
	/* EVP_PKEY_free clears the key's memory (OpenSSL's BN_clear_free) */
	EVP_PKEY_free(t->ca_key);
	EVP_PKEY_free(t->leaf_key);
	free(t->ca_pem);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

const char *ward_tls_ca_pem(const struct ward_tls *t)
{
	return t->ca_pem;
}

SSL *ward_tls_server(struct ward_tls *t, struct ward_tls_peer *peer)
{
	X509 *leaf = leaf_for(t, peer->host, peer->literal);
	SSL *ssl = leaf ? SSL_new(t->server) : NULL;

	if (!ssl || SSL_use_certificate(ssl, leaf) != 1 ||
	    SSL_use_PrivateKey(ssl, t->leaf_key) != 1) {
		SSL_free(ssl);
		X509_free(leaf);
		return NULL;
	}
	X509_free(leaf); /* the SSL holds its own reference */
	SSL_set_app_data(ssl, peer);
	return ssl;
}

SSL *ward_tls_client(struct ward_tls *t, const char *host, bool literal)
{
	SSL *ssl = SSL_new(t->client);

	if (!ssl)
		return NULL;
	if (literal) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) != 1)
			goto fail;
	} else if (SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_set1_host(ssl, host) != 1) {
		goto fail;
	}
	if (SSL_set_alpn_protos(ssl, alpn_http11, sizeof(alpn_http11) - 1) != 0)
		goto fail;
	if (host_index >= 0) {
		char *key = strdup(host);
		size_t i;

		if (!key || !SSL_set_ex_data(ssl, host_index, key)) {
			free(key);
			goto fail;
		}
		pthread_mutex_lock(&t->mu);
		for (i = 0; i < t->n_sessions; i++)
			if (strcmp(t->sessions[i].host, host) == 0) {
				SSL_set_session(ssl, t->sessions[i].s);
				break;
			}
		pthread_mutex_unlock(&t->mu);
	}
	return ssl;
fail:
	SSL_free(ssl);
	return NULL;
}

void ward_tls_error(SSL *ssl, const char *fallback, char *reason, size_t size)
{
	long v = ssl && !SSL_is_server(ssl) ? SSL_get_verify_result(ssl) : X509_V_OK;
	unsigned long e = ERR_peek_error();

	if (v != X509_V_OK) {
		snprintf(reason, size, "certificate verify failed: %s",
			 X509_verify_cert_error_string(v));
	} else if (e) {
		char buf[200];

		ERR_error_string_n(e, buf, sizeof(buf));
		snprintf(reason, size, "%s: %s", fallback, buf);
	} else {
		snprintf(reason, size, "%s", fallback);
	}
	ERR_clear_error();
}
