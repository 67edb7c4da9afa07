/* tls-internal.h — the proxy's TLS material: the run's CA, the leaf
 * certificates it mints, and the two OpenSSL contexts (towards the sandbox,
 * towards the real server). No sockets, no event logic: proxy.c drives the
 * connections.
 *
 * The CA's key is made by ward_tls_new(), in memory, and never leaves the
 * struct: nothing writes it anywhere (only the certificate is given out, by
 * ward_tls_ca_pem()). Only ward-tls (main.c) makes one: the supervisor
 * never holds it (runtime/net/net-internal.h).
 *
 * Thread safety: after ward_tls_new() returns, every function may be
 * called from any thread (the leaf cache has its own lock; the SSL_CTXs are
 * read-only once built). */
#ifndef WARD_TLS_INTERNAL_H
#define WARD_TLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "ward/error.h"

struct ward_tls;

/* A CA for this run (EC P-256, valid from an hour ago for a day, its
 * subject naming ward and a random serial), the leaf key, and the contexts.
 * upstream_ca (or NULL): a PEM file of extra trust anchors for upstream
 * servers, beside the system's store. InvalidParameters naming
 * --upstream-ca when that file cannot be read or holds no certificate. */
struct ward_tls *ward_tls_new(const char *upstream_ca, struct ward_error **err);
void ward_tls_free(struct ward_tls *t);

/* The CA certificate, PEM (owned by t, NUL-terminated). */
const char *ward_tls_ca_pem(const struct ward_tls *t);

/* What the server side knows of its client: the CONNECT host, and after
 * the handshake whether the ClientHello named another server. Owned by the
 * caller; must outlive the SSL. */
struct ward_tls_peer {
	char host[256];  /* normalised, as the CONNECT line named it */
	bool literal;    /* an IP literal */
	bool sni_refused;
	char sni[256];   /* the name the ClientHello asked for, when refused */
};

/* A server-side SSL for a client that CONNECTed to peer->host: the leaf for
 * that name (minted now, or from the run's cache; SAN the name, or an IP SAN
 * for an address), ALPN http/1.1 only, and an SNI check: a ClientHello
 * naming another server fails the handshake and sets peer->sni_refused.
 * NULL on failure (out of memory). */
SSL *ward_tls_server(struct ward_tls *t, struct ward_tls_peer *peer);

/* A client-side SSL towards the real host: SNI (for a name), hostname or
 * IP check against the certificate, the system's trust store plus
 * --upstream-ca, ALPN http/1.1 only. NULL on failure. */
SSL *ward_tls_client(struct ward_tls *t, const char *host, bool literal);

/* Why a handshake failed, in one line: the verification error for an
 * upstream ("certificate verify failed: unable to get local issuer
 * certificate"), else OpenSSL's first queued error, else fallback. Clears
 * the thread's error queue. */
void ward_tls_error(SSL *ssl, const char *fallback, char *reason, size_t size);

#endif
