/* http.c — request heads for the proxy: parse, rewrite for the upstream,
 * follow a chunked body; pure code. */
#include "ward/proxy.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net-internal.h"

#define HEAD_MAX (64 * 1024)

static int refuse(int *status, int code, char *reason, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int refuse(int *status, int code, char *reason, size_t size, const char *fmt, ...)
{
	va_list ap;

	*status = code;
	va_start(ap, fmt);
	vsnprintf(reason, size, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *find_end(const char *buf, size_t len)
{
	const char *p = memmem(buf, len, "\r\n\r\n", 4);

	return p ? p + 4 : NULL;
}

static bool is_token(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("!#$%&'*+-.^_`|~", s[i]))
			return false;
	return true;
}

/* host[:port] or [v6][:port] at s[0..n) into req. */
static int parse_authority(const char *s, size_t n, uint16_t default_port,
			   struct ward_http_request *req)
{
	const char *colon = NULL;
	size_t hlen = n;

	if (n && s[0] == '[') {
		const char *close = memchr(s, ']', n);

		if (!close)
			return -1;
		hlen = (size_t)(close - s) + 1;
		if (hlen < n) {
			if (s[hlen] != ':')
				return -1;
			colon = s + hlen;
		}
	} else {
		colon = memchr(s, ':', n);
		if (colon)
			hlen = (size_t)(colon - s);
	}
	if (memchr(s, '@', n))
		return -1; /* userinfo: nothing the proxy forwards */
	req->port = default_port;
	if (colon) {
		size_t plen = n - (size_t)(colon - s) - 1, i;
		unsigned long v = 0;

		if (plen == 0 || plen > 5)
			return -1;
		for (i = 0; i < plen; i++) {
			if (!isdigit((unsigned char)colon[1 + i]))
				return -1;
			v = v * 10 + (unsigned long)(colon[1 + i] - '0');
		}
		if (v < 1 || v > 65535)
			return -1;
		req->port = (uint16_t)v;
	}
	if (req->port == 0)
		return -1;
	return ward_net_host_normalize(s, hlen, req->host, sizeof(req->host), &req->literal);
}

/* The request line of a head in buf[0..len): the method into req, the
 * target as *target and *tlen, the head's length. 1, 0 while the head is
 * not whole, -1 (with *status and reason) for a refusal. */
static int request_line(const char *buf, size_t len, struct ward_http_request *req,
			const char **target_out, size_t *tlen_out, int *status, char *reason,
			size_t size)
{
	const char *end = find_end(buf, len), *sp1, *sp2, *eol;
	size_t mlen;

	memset(req, 0, sizeof(*req));
	if (!end) {
		if (len >= HEAD_MAX)
			return refuse(status, 431, reason, size, "request head larger than %d bytes",
				      HEAD_MAX);
		return 0;
	}
	req->head_len = (size_t)(end - buf);
	eol = memmem(buf, req->head_len, "\r\n", 2);
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2)
		return refuse(status, 400, reason, size, "malformed request line");
	mlen = (size_t)(sp1 - buf);
	if (!is_token(buf, mlen) || mlen >= sizeof(req->method))
		return refuse(status, 400, reason, size, "malformed method");
	if ((size_t)(eol - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return refuse(status, 400, reason, size, "only HTTP/1.0 and HTTP/1.1 are proxied");
	memcpy(req->method, buf, mlen);
	req->method[mlen] = '\0';
	*target_out = sp1 + 1;
	*tlen_out = (size_t)(sp2 - *target_out);
	return 1;
}

int ward_http_parse_request(const char *buf, size_t len, struct ward_http_request *req,
			    int *status, char *reason, size_t size)
{
	const char *target;
	size_t tlen;
	int rc = request_line(buf, len, req, &target, &tlen, status, reason, size);

	if (rc <= 0)
		return rc;
	if (strcmp(req->method, "CONNECT") == 0) {
		req->is_connect = true;
		if (parse_authority(target, tlen, 0, req) < 0)
			return refuse(status, 400, reason, size,
				      "CONNECT needs host:port, got '%.*s'", (int)(tlen > 200 ? 200 : tlen), target);
		req->target = target;
		req->target_len = tlen;
		return 1;
	}
	if (tlen >= 8 && strncasecmp(target, "https://", 8) == 0)
		return refuse(status, 400, reason, size,
			      "https URLs go through CONNECT (set HTTPS_PROXY), not a plain request");
	if (tlen < 7 || strncasecmp(target, "http://", 7) != 0)
		return refuse(status, 400, reason, size,
			      "the proxy takes absolute http:// URLs (set HTTP_PROXY)");
	{
		const char *auth = target + 7, *tend = target + tlen, *slash = auth;

		while (slash < tend && *slash != '/' && *slash != '?' && *slash != '#')
			slash++;
		if (parse_authority(auth, (size_t)(slash - auth), 80, req) < 0)
			return refuse(status, 400, reason, size, "bad host in URL '%.*s'",
				      (int)(tlen > 200 ? 200 : tlen), target);
		if (slash < tend && *slash == '/') {
			req->target = slash;
			req->target_len = (size_t)(tend - slash);
		} else if (slash < tend && *slash == '?') {
			req->target = slash; /* "/?q": the slash is added when forwarding */
			req->target_len = (size_t)(tend - slash);
		} else {
			req->target = "/";
			req->target_len = 1;
		}
	}
	return 1;
}

int ward_http_parse_origin(const char *buf, size_t len, const char *host, bool literal,
			   uint16_t port, struct ward_http_request *req, int *status, char *reason,
			   size_t size)
{
	const char *target;
	size_t tlen;
	int rc = request_line(buf, len, req, &target, &tlen, status, reason, size);

	if (rc <= 0)
		return rc;
	if (strcmp(req->method, "CONNECT") == 0)
		return refuse(status, 405, reason, size, "CONNECT inside a tunnel");
	if (tlen == 0 || target[0] != '/' || memchr(target, ' ', tlen) || memchr(target, '\t', tlen))
		return refuse(status, 400, reason, size,
			      "an intercepted request names a path ('/...'), got '%.*s'",
			      (int)(tlen > 200 ? 200 : tlen), target);
	if (strlen(host) >= sizeof(req->host))
		return refuse(status, 400, reason, size, "host name too long");
	snprintf(req->host, sizeof(req->host), "%s", host);
	req->literal = literal;
	req->port = port;
	req->target = target;
	req->target_len = tlen;
	return 1;
}

/* Whether the header name at s[0..n) is in the comma-separated list. */
static bool listed(const char *list, size_t list_len, const char *s, size_t n)
{
	const char *p = list, *end = list + list_len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p)), *e = comma ? comma : end;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if ((size_t)(e - p) == n && strncasecmp(p, s, n) == 0)
			return true;
		p = comma ? comma + 1 : end;
	}
	return false;
}

static bool name_is(const char *s, size_t n, const char *name)
{
	return strlen(name) == n && strncasecmp(s, name, n) == 0;
}

static void puts_(struct net_out *o, const char *s)
{
	net_out_put(o, s, strlen(s));
}

char *ward_http_forward_head(const char *buf, const struct ward_http_request *req,
			     const struct ward_http_header *add, size_t n_add, size_t *out_len,
			     struct ward_http_body *body, int *status, char *reason, size_t size)
{
	const char *p = memmem(buf, req->head_len, "\r\n", 2) + 2, *end = buf + req->head_len - 2;
	const char *conn_list = NULL;
	size_t conn_len = 0, i;
	bool have_cl = false, have_te = false;
	struct net_out o = { NULL, 0, 0, false };
	char port[16];

	memset(body, 0, sizeof(*body));
	/* A NUL, or a CR or LF that is not part of a CRLF, splits a line for
	 * some servers and not for us: a header this proxy never saw (a second
	 * Transfer-Encoding, say) would reach them. None is forwarded. */
	for (i = 0; i + 4 < req->head_len; i++) {
		if (buf[i] == '\0' || (buf[i] == '\r' && buf[i + 1] != '\n') ||
		    (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))) {
			refuse(status, 400, reason, size, "control character in the request head");
			return NULL;
		}
	}
	/* First pass: what Connection names, and the body's framing. */
	for (const char *q = p; q < end;) {
		const char *eol = memmem(q, (size_t)(end - q) + 2, "\r\n", 2), *colon;
		const char *v;
		size_t n, vlen;

		colon = memchr(q, ':', (size_t)(eol - q));
		if (!colon || colon == q || !is_token(q, (size_t)(colon - q))) {
			refuse(status, 400, reason, size, "malformed header line");
			return NULL;
		}
		n = (size_t)(colon - q);
		v = colon + 1;
		while (v < eol && (*v == ' ' || *v == '\t'))
			v++;
		vlen = (size_t)(eol - v);
		while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
			vlen--;
		if (name_is(q, n, "connection")) {
			conn_list = v;
			conn_len = vlen;
		} else if (name_is(q, n, "content-length")) {
			uint64_t len = 0;
			size_t k;

			if (vlen == 0 || vlen > 18) {
				refuse(status, 400, reason, size, "bad Content-Length");
				return NULL;
			}
			for (k = 0; k < vlen; k++) {
				if (!isdigit((unsigned char)v[k])) {
					refuse(status, 400, reason, size, "bad Content-Length");
					return NULL;
				}
				len = len * 10 + (uint64_t)(v[k] - '0');
			}
			if (have_cl && len != body->length) {
				refuse(status, 400, reason, size, "conflicting Content-Length headers");
				return NULL;
			}
			have_cl = true;
			body->length = len;
		} else if (name_is(q, n, "transfer-encoding")) {
			if (have_te || !(vlen == 7 && strncasecmp(v, "chunked", 7) == 0)) {
				refuse(status, 501, reason, size,
				       "only 'Transfer-Encoding: chunked' request bodies are proxied");
				return NULL;
			}
			have_te = true;
			body->chunked = true;
		}
		q = eol + 2;
	}
	if (have_cl && have_te) {
		/* The classic request-smuggling ambiguity. */
		refuse(status, 400, reason, size, "both Content-Length and Transfer-Encoding");
		return NULL;
	}

	net_out_put(&o, req->method, strlen(req->method));
	net_out_put(&o, " ", 1);
	if (req->target[0] != '/')
		net_out_put(&o, "/", 1);
	net_out_put(&o, req->target, req->target_len);
	puts_(&o, " HTTP/1.1\r\nHost: ");
	if (strchr(req->host, ':')) {
		puts_(&o, "[");
		puts_(&o, req->host);
		puts_(&o, "]");
	} else {
		puts_(&o, req->host);
	}
	if (req->port != 80) {
		snprintf(port, sizeof(port), ":%u", req->port);
		puts_(&o, port);
	}
	puts_(&o, "\r\n");
	for (const char *q = p; q < end;) {
		const char *eol = memmem(q, (size_t)(end - q) + 2, "\r\n", 2);
		const char *colon = memchr(q, ':', (size_t)(eol - q));
		size_t n = (size_t)(colon - q);
		bool drop = name_is(q, n, "connection") || name_is(q, n, "proxy-connection") ||
			    name_is(q, n, "keep-alive") || name_is(q, n, "proxy-authorization") ||
			    name_is(q, n, "proxy-authenticate") || name_is(q, n, "te") ||
			    name_is(q, n, "trailer") || name_is(q, n, "upgrade") ||
			    name_is(q, n, "host") ||
			    (conn_list && listed(conn_list, conn_len, q, n) &&
			     !name_is(q, n, "transfer-encoding") && !name_is(q, n, "content-length"));

		for (i = 0; !drop && i < n_add; i++)
			drop = name_is(q, n, add[i].name);
		if (!drop)
			net_out_put(&o, q, (size_t)(eol - q) + 2);
		q = eol + 2;
	}
	for (i = 0; i < n_add; i++) {
		if (!add[i].value)
			continue; /* a header only removed */
		puts_(&o, add[i].name);
		puts_(&o, ": ");
		puts_(&o, add[i].value);
		puts_(&o, "\r\n");
	}
	puts_(&o, "Connection: close\r\n\r\n");
	if (o.failed) {
		free(o.buf);
		refuse(status, 500, reason, size, "out of memory");
		return NULL;
	}
	*out_len = o.len;
	return o.buf;
}

/* The value of each header called name in the head, in turn: returns the
 * position after the line found (pass it back as from), NULL when no more. */
static const char *next_header(const char *buf, size_t head_len, const char *from,
			       const char *name, const char **v, size_t *vlen)
{
	const char *end = buf + head_len - 2, *q = from;

	if (!q) {
		q = memmem(buf, head_len, "\r\n", 2);
		if (!q)
			return NULL;
		q += 2;
	}
	while (q < end) {
		const char *eol = memmem(q, (size_t)(end - q) + 2, "\r\n", 2);
		const char *colon = memchr(q, ':', (size_t)(eol - q));

		if (colon && name_is(q, (size_t)(colon - q), name)) {
			const char *x = colon + 1;
			size_t n;

			while (x < eol && (*x == ' ' || *x == '\t'))
				x++;
			n = (size_t)(eol - x);
			while (n && (x[n - 1] == ' ' || x[n - 1] == '\t'))
				n--;
			*v = x;
			*vlen = n;
			return eol + 2;
		}
		q = eol + 2;
	}
	return NULL;
}

bool ward_http_header_lists(const char *buf, size_t head_len, const char *name,
			    const char *token)
{
	const char *at = NULL, *v;
	size_t n;

	while ((at = next_header(buf, head_len, at, name, &v, &n)))
		if (listed(v, n, token, strlen(token)))
			return true;
	return false;
}

int ward_http_parse_response(const char *buf, size_t len, bool head_request,
			     struct ward_http_response *r, char *reason, size_t size)
{
	const char *end = find_end(buf, len), *at = NULL, *v;
	size_t n;
	int status;

	memset(r, 0, sizeof(*r));
	if (!end) {
		if (len >= HEAD_MAX)
			return refuse(&status, 502, reason, size, "response head larger than %d bytes",
				      HEAD_MAX);
		return 0;
	}
	r->head_len = (size_t)(end - buf);
	if (r->head_len < 14 || memcmp(buf, "HTTP/1.", 7) != 0 || (buf[7] != '0' && buf[7] != '1') ||
	    buf[8] != ' ' || !isdigit((unsigned char)buf[9]) || !isdigit((unsigned char)buf[10]) ||
	    !isdigit((unsigned char)buf[11]) || (buf[12] != ' ' && buf[12] != '\r'))
		return refuse(&status, 502, reason, size, "malformed response status line");
	r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	if (r->status < 100)
		return refuse(&status, 502, reason, size, "malformed response status");
	r->close = buf[7] == '0' && !ward_http_header_lists(buf, r->head_len, "connection",
							      "keep-alive");
	if (ward_http_header_lists(buf, r->head_len, "connection", "close"))
		r->close = true;
	if (head_request || r->status < 200 || r->status == 204 || r->status == 304)
		return 1; /* no body */
	if (ward_http_header_lists(buf, r->head_len, "transfer-encoding", "chunked")) {
		r->chunked = true;
		/* a length beside it is ignored (RFC 9112 6.3); no reuse after */
		if (next_header(buf, r->head_len, NULL, "content-length", &v, &n))
			r->close = true;
		return 1;
	}
	if (next_header(buf, r->head_len, NULL, "transfer-encoding", &v, &n)) {
		r->until_close = r->close = true;
		return 1;
	}
	while ((at = next_header(buf, r->head_len, at, "content-length", &v, &n))) {
		uint64_t l = 0;
		size_t k;

		if (n == 0 || n > 18)
			return refuse(&status, 502, reason, size, "bad Content-Length in the response");
		for (k = 0; k < n; k++) {
			if (!isdigit((unsigned char)v[k]))
				return refuse(&status, 502, reason, size,
					      "bad Content-Length in the response");
			l = l * 10 + (uint64_t)(v[k] - '0');
		}
		if (r->has_length && l != r->length)
			return refuse(&status, 502, reason, size,
				      "conflicting Content-Length headers in the response");
		r->has_length = true;
		r->length = l;
	}
	if (!r->has_length)
		r->until_close = r->close = true;
	return 1;
}

enum { CH_SIZE, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF, CH_TRAILER_START,
       CH_TRAILER_LINE, CH_TRAILER_LF, CH_END_LF, CH_DONE };

ssize_t ward_chunked_feed(struct ward_chunked *c, const char *buf, size_t len, bool *done)
{
	size_t i = 0;

	*done = c->state == CH_DONE;
	while (i < len && c->state != CH_DONE) {
		char ch = buf[i];

		switch (c->state) {
		case CH_SIZE:
			if (isxdigit((unsigned char)ch)) {
				if (++c->digits > 15)
					return -1;
				c->remaining = c->remaining * 16 +
					       (uint64_t)(isdigit((unsigned char)ch) ? ch - '0' :
										       (tolower(ch) - 'a' + 10));
			} else if (c->digits && (ch == ';' || ch == ' ' || ch == '\t')) {
				c->state = CH_EXT;
			} else if (c->digits && ch == '\r') {
				c->state = CH_SIZE_LF;
			} else {
				return -1;
			}
			i++;
			break;
		case CH_EXT:
			if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (ch == '\n' || ch == '\0')
				return -1;
			i++;
			break;
		case CH_SIZE_LF:
			if (ch != '\n')
				return -1;
			i++;
			c->state = c->remaining ? CH_DATA : CH_TRAILER_START;
			break;
		case CH_DATA: {
			size_t take = len - i < c->remaining ? len - i : (size_t)c->remaining;

			i += take;
			c->remaining -= take;
			if (!c->remaining)
				c->state = CH_DATA_CR;
			break;
		}
		case CH_DATA_CR:
			if (ch != '\r')
				return -1;
			c->state = CH_DATA_LF;
			i++;
			break;
		case CH_DATA_LF:
			if (ch != '\n')
				return -1;
			c->state = CH_SIZE;
			c->digits = 0;
			c->remaining = 0;
			i++;
			break;
		/* A bare LF or a NUL in a trailer ends a line (or the trailers)
		 * for lenient servers, which would then read what follows as a
		 * request of its own on a kept connection: refused, as in the
		 * head (ward_http_forward_head()). */
		case CH_TRAILER_START:
			if (ch == '\n' || ch == '\0')
				return -1;
			c->state = ch == '\r' ? CH_END_LF : CH_TRAILER_LINE;
			i++;
			break;
		case CH_TRAILER_LINE:
			if (ch == '\n' || ch == '\0')
				return -1;
			if (ch == '\r')
				c->state = CH_TRAILER_LF;
			i++;
			break;
		case CH_TRAILER_LF:
			if (ch != '\n')
				return -1;
			c->state = CH_TRAILER_START;
			i++;
			break;
		case CH_END_LF:
			if (ch != '\n')
				return -1;
			c->state = CH_DONE;
			i++;
			break;
		}
	}
	*done = c->state == CH_DONE;
	return (ssize_t)i;
}
