/* ward/proxy.h — the sandbox's network proxy: what it records of each
 * attempt, and the pure HTTP request-head handling it is built on.
 *
 * The proxy itself runs inside ward_run()'s supervisor (one event loop, no
 * thread per connection) when the configuration's network mode is
 * WARD_NET_PROXY; a caller sees it only through the result: one
 * struct ward_net_record per connection the sandbox made to the proxy.
 *
 * Requests: HTTP/1.1 absolute-form ("GET http://host/path HTTP/1.1") is
 * forwarded as an origin-form request with hop-by-hop headers removed, the
 * Host header set from the URL, configured credentials added and
 * "Connection: close" (one request per connection); CONNECT host:port opens a
 * tunnel. Everything else is answered with 400.
 *
 * A CONNECT to a host ward_netpolicy_intercepts() names is intercepted
 * instead of tunnelled: the proxy terminates TLS with a leaf of a CA made
 * for the run (which the sandbox is made to trust), verifies the real
 * server (the system's store plus the policy's upstream_ca), and reads
 * origin-form requests (ward_http_parse_origin), each forwarded as a
 * plain-HTTP one would be, their responses delimited by
 * ward_http_parse_response. One record per intercepted request, one for
 * the CONNECT. docs/network.md says the rest.
 */
#ifndef WARD_PROXY_H
#define WARD_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ward/error.h"
#include "ward/netpolicy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WARD_NET_PATH_MAX 256 /* a recorded path, query values redacted */

/* One attempt through the proxy. Plain data. */
struct ward_net_record {
	int64_t time_ms;                 /* when the connection was accepted, Unix ms */
	int64_t duration_ms;
	char method[16];                 /* "CONNECT", "GET", ... ; "" if none was read */
	char host[WARD_NET_HOST_MAX];    /* normalised; "" if none was read */
	uint16_t port;
	char decision[8];                /* "allow", "deny" (policy) or "error" */
	char rule[WARD_NET_RULE_MAX];    /* the deciding rule or the reason */
	char address[48];                /* the address connected to, "" if none */
	int status;                      /* status the proxy answered itself (200 for an
					    established tunnel, 403, 502...), or the
					    upstream's for a forwarded request; 0 if none */
	uint64_t bytes_up, bytes_down;   /* sandbox -> upstream, upstream -> sandbox */
	char path[WARD_NET_PATH_MAX];    /* a forwarded request's path, each query value
					    "*"; "" for CONNECT or none */
	char request_rule[WARD_NET_RULE_MAX]; /* the --allow-request rule that let it
						 through, "" if none applies */
	char secrets[WARD_NET_RULE_MAX]; /* secrets put in (names, comma-separated); a
					    refusal for a carried stand-in names it */
};

/* The parsed head of a request to the proxy. */
struct ward_http_request {
	char method[16];
	bool is_connect;
	char host[WARD_NET_HOST_MAX];    /* normalised (ward_net_host_normalize) */
	bool literal;                    /* host is an IP literal */
	uint16_t port;
	const char *target;              /* origin-form path in the buffer ("/" if none) */
	size_t target_len;
	size_t head_len;                 /* bytes of the head, final CRLF CRLF included */
};

/* Parse a request head at buf[0..len). Returns 1 when a whole head was
 * parsed (*req filled; target points into buf), 0 when more bytes are
 * needed, -1 when it is not a request the proxy takes: reason gets a
 * one-line explanation and *status the HTTP status to answer (400, 405,
 * 431, 501). */
WARD_API int ward_http_parse_request(const char *buf, size_t len, struct ward_http_request *req,
				     int *status, char *reason, size_t size);

/* The head of a request read inside an intercepted TLS connection: origin
 * form ("GET /path HTTP/1.1"), the host and port taken from the CONNECT
 * line (the Host header the client sent is replaced when forwarding, so a
 * request cannot name a different server than the one it was checked for).
 * Returns as ward_http_parse_request(); CONNECT inside is refused (405), a
 * target not starting with '/' too (400). */
WARD_API int ward_http_parse_origin(const char *buf, size_t len, const char *host, bool literal,
				    uint16_t port, struct ward_http_request *req, int *status,
				    char *reason, size_t size);

/* Whether a header called name (any case) lists token, comma-separated,
 * in the head buf[0..head_len). */
WARD_API bool ward_http_header_lists(const char *buf, size_t head_len, const char *name,
				     const char *token);

/* A response head from an upstream, and how its body is delimited. */
struct ward_http_response {
	int status;
	size_t head_len;   /* final CRLF CRLF included */
	bool chunked;
	bool has_length;
	uint64_t length;   /* when has_length */
	bool until_close;  /* the body runs to the end of the connection */
	bool close;        /* the connection ends after this response */
};

/* Parse a response head at buf[0..len) for a request (head_request: the
 * request was HEAD, so no body). Returns 1 (parsed), 0 (more needed) or -1
 * (reason says why: not HTTP/1.x, conflicting lengths, larger than 64 KiB).
 * 1xx, 204, 304 and responses to HEAD have no body. */
WARD_API int ward_http_parse_response(const char *buf, size_t len, bool head_request,
				      struct ward_http_response *r, char *reason, size_t size);

/* How a forwarded request's body is delimited. */
struct ward_http_body {
	bool chunked;
	uint64_t length; /* Content-Length when !chunked (0 for none) */
};

/* A header added to a forwarded request (credential injection); with a
 * NULL value, one only removed. */
struct ward_http_header {
	const char *name, *value;
};

/* The head to send upstream for a parsed non-CONNECT request: request line
 * in origin form with HTTP/1.1, Host from the URL, every header of the
 * client's but the hop-by-hop ones (Connection, Proxy-Connection,
 * Keep-Alive, Proxy-Authorization, Proxy-Authenticate, TE, Trailer,
 * Upgrade, Host, and those the Connection header names) and those in add
 * (replaced), then add, then "Connection: close". *body says how the
 * request body is framed. The head always ends "Connection: close\r\n\r\n"
 * (a caller that keeps the upstream connection drops that line). Returns a malloc'd head (*out_len bytes), or NULL
 * with reason/status for a request that cannot be forwarded safely (both
 * Content-Length and Transfer-Encoding, an encoding other than chunked,
 * conflicting lengths) — or ENOMEM (status 500). */
WARD_API char *ward_http_forward_head(const char *buf, const struct ward_http_request *req,
				      const struct ward_http_header *add, size_t n_add,
				      size_t *out_len, struct ward_http_body *body, int *status,
				      char *reason, size_t size);

/* A chunked body being passed through: feed bytes, learn where it ends. */
struct ward_chunked {
	int state;
	uint64_t remaining;
	int digits;
};

/* How many of buf[0..len) belong to the body; *done is set when the final
 * chunk and trailer have been seen (the rest of buf is not body). -1 for a
 * malformed chunked body. */
WARD_API ssize_t ward_chunked_feed(struct ward_chunked *c, const char *buf, size_t len,
				   bool *done);

#ifdef __cplusplus
}
#endif
#endif
