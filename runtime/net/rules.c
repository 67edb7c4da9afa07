/* rules.c — secrets, credentials and request rules on one request the proxy
 * has the plaintext of (ward/netrules.h); pure code but for the stand-ins'
 * randomness. */
#include "ward/netrules.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net-internal.h"
#include <sys/random.h>

#define MAX_STARS WARD_NET_GLOB_STARS /* bounds the matcher's memory */

struct secret_live {
	char standin[WARD_NETRULES_STANDIN_LEN + 1];
	char env[WARD_NET_SECRET_NAME_MAX + WARD_NETRULES_STANDIN_LEN + 2];
	char *value;
	/* the stand-in base64-encoded at each alignment, standard and URL
	 * alphabets: only the characters that depend on the stand-in alone */
	char b64[2][3][WARD_NETRULES_STANDIN_LEN * 2];
};

struct ward_netrules {
	const struct ward_netpolicy *p;
	struct ward_http_header *inject; /* per p->creds, expanded */
	struct secret_live *s;           /* per p->secrets */
	size_t n;
};

/* ---- growing output ------------------------------------------------------ */

/* ---- base64 ------------------------------------------------------------- */

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void b64_encode(const uint8_t *in, size_t n, const char *alpha, struct net_out *o, bool pad)
{
	size_t i;

	for (i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		char q[4] = { alpha[v >> 18 & 63], alpha[v >> 12 & 63], alpha[v >> 6 & 63],
			      alpha[v & 63] };
		size_t keep = i + 2 < n ? 4 : i + 1 < n ? 3 : 2;

		net_out_put(o, q, keep);
		if (pad && keep < 4)
			net_out_put(o, "==", 4 - keep);
	}
}

static int b64_value(char c)
{
	const char *x = c ? strchr(b64_std, c) : NULL;

	return x ? (int)(x - b64_std) : -1;
}

/* Standard base64 (padding optional) into o; false when it is not. */
static bool b64_decode(const char *s, size_t n, struct net_out *o)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t i;

	while (n && s[n - 1] == '=')
		n--;
	for (i = 0; i < n; i++) {
		int v = b64_value(s[i]);

		if (v < 0)
			return false;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			uint8_t b = (uint8_t)(acc >> (bits - 8));

			bits -= 8;
			net_out_put(o, &b, 1);
		}
	}
	return !o->failed;
}

/* The characters of base64(k zero bytes + standin) that the stand-in alone
 * decides. */
static void b64_core(const char *standin, int k, const char *alpha, char *dst, size_t size)
{
	uint8_t in[WARD_NETRULES_STANDIN_LEN + 3] = { 0 };
	size_t L = strlen(standin), first = (size_t)(8 * k + 5) / 6, last = (8 * ((size_t)k + L) - 6) / 6;
	struct net_out o = { 0 };

	memcpy(in + k, standin, L);
	b64_encode(in, (size_t)k + L, alpha, &o, false);
	if (!o.failed && o.len > last)
		snprintf(dst, size, "%.*s", (int)(last - first + 1), o.buf + first);
	free(o.buf);
}

/* ---- making the rules --------------------------------------------------- */

static int invalid(struct ward_error **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int invalid(struct ward_error **err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(err, WARD_ERR_INVALID_PARAMETERS, 0, fmt, ap);
	va_end(ap);
	return -1;
}

static int make_standin(struct secret_live *s, struct ward_error **err)
{
	uint8_t rnd[16];
	size_t got = 0;
	int i;

	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ward_error_make(err, errno, "getrandom");
		got += (size_t)n;
	}
	memcpy(s->standin, "wardsecret", 10);
	for (i = 0; i < 16; i++)
		snprintf(s->standin + 10 + 2 * i, 3, "%02x", rnd[i]);
	for (i = 0; i < 3; i++) {
		b64_core(s->standin, i, b64_std, s->b64[0][i], sizeof(s->b64[0][i]));
		b64_core(s->standin, i, b64_url, s->b64[1][i], sizeof(s->b64[1][i]));
	}
	return 0;
}

static bool value_ok(const char *v)
{
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return false;
	return true;
}

struct ward_netrules *ward_netrules_new(const struct ward_netpolicy *policy,
					const char *(*lookup)(const char *name),
					struct ward_error **err)
{
	struct ward_netrules *r = calloc(1, sizeof(*r));
	size_t i;

	if (!r) {
		ward_error_make(err, ENOMEM, "network rules");
		return NULL;
	}
	r->p = policy;
	if (policy->n_secrets > WARD_NETRULES_MAX_SECRETS) {
		invalid(err, "more than %d secrets", WARD_NETRULES_MAX_SECRETS);
		goto fail;
	}
	r->inject = calloc(policy->n_creds + 1, sizeof(*r->inject));
	r->s = calloc(policy->n_secrets + 1, sizeof(*r->s));
	if (!r->inject || !r->s) {
		ward_error_make(err, ENOMEM, "network rules");
		goto fail;
	}
	for (i = 0; i < policy->n_creds; i++) {
		char *v = ward_net_expand(policy->creds[i].value, lookup, err);

		if (!v) {
			ward_error_prefix(*err, "credential for '%s'", policy->creds[i].host);
			goto fail;
		}
		r->inject[i].name = policy->creds[i].header;
		r->inject[i].value = v;
	}
	r->n = policy->n_secrets;
	for (i = 0; i < r->n; i++) {
		const char *name = policy->secrets[i].name, *v = lookup(name);
		struct secret_live *s = &r->s[i];

		if (!v) {
			invalid(err, "secret '%s': variable '%s' is not set in ward's environment",
				name, name);
			goto fail;
		}
		/* a line break would start a header of the sandbox's choosing */
		if (!*v || !value_ok(v)) {
			invalid(err, "secret '%s': the value of '%s' is empty or has a control "
				     "character", name, name);
			goto fail;
		}
		s->value = strdup(v);
		if (!s->value) {
			ward_error_make(err, ENOMEM, "network rules");
			goto fail;
		}
		if (make_standin(s, err) < 0)
			goto fail;
		snprintf(s->env, sizeof(s->env), "%s=%s", name, s->standin);
	}
	return r;
fail:
	ward_netrules_free(r);
	return NULL;
}

void ward_netrules_free(struct ward_netrules *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->inject && i < r->p->n_creds; i++)
		free((char *)r->inject[i].value);
	for (i = 0; r->s && i < r->n; i++) {
		if (r->s[i].value)
			explicit_bzero(r->s[i].value, strlen(r->s[i].value));
		free(r->s[i].value);
	}
	free(r->inject);
	free(r->s);
	free(r);
}

size_t ward_netrules_n_secrets(const struct ward_netrules *r)
{
	return r ? r->n : 0;
}

const char *ward_netrules_env(const struct ward_netrules *r, size_t i)
{
	return i < r->n ? r->s[i].env : NULL;
}

const char *ward_netrules_standin(const struct ward_netrules *r, size_t i)
{
	return i < r->n ? r->s[i].standin : NULL;
}

/* ---- finding stand-ins -------------------------------------------------- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One round of percent-decoding of buf in place; whether it changed. */
static bool pct_decode(char *buf, size_t *len)
{
	size_t i, j = 0;
	bool changed = false;

	for (i = 0; i < *len; i++) {
		if (buf[i] == '%' && i + 2 < *len + 0 && hexval(buf[i + 1]) >= 0 &&
		    hexval(buf[i + 2]) >= 0) {
			buf[j++] = (char)(hexval(buf[i + 1]) << 4 | hexval(buf[i + 2]));
			i += 2;
			changed = true;
		} else {
			buf[j++] = buf[i];
		}
	}
	*len = j;
	return changed;
}

/* Which secrets' stand-ins buf[0..len) carries, in any form we look for
 * (bit i: secret i). */
static uint64_t scan_text(const struct ward_netrules *r, const char *buf, size_t len,
			  bool *oom)
{
	uint64_t found = 0;
	char *d, *low;
	size_t n = len, i;
	int round;

	if (!r->n || !len)
		return 0;
	d = malloc(len + 1);
	low = malloc(len + 1);
	if (!d || !low) {
		free(d);
		free(low);
		*oom = true;
		return 0;
	}
	memcpy(d, buf, len);
	/* as sent, then decoded once, twice, thrice (double encoding) */
	for (round = 0; round < 4; round++) {
		for (i = 0; i < n; i++)
			low[i] = (char)tolower((unsigned char)d[i]);
		for (i = 0; i < r->n; i++) {
			const struct secret_live *s = &r->s[i];

			if (memmem(low, n, s->standin, WARD_NETRULES_STANDIN_LEN))
				found |= 1ULL << i;
			for (int a = 0; a < 2; a++)
				for (int k = 0; k < 3; k++)
					if (s->b64[a][k][0] &&
					    memmem(d, n, s->b64[a][k], strlen(s->b64[a][k])))
						found |= 1ULL << i;
		}
		if (!pct_decode(d, &n))
			break;
	}
	free(d);
	free(low);
	return found;
}

static bool secret_listed(const struct ward_netpolicy *p, size_t i, const char *host,
			  uint16_t port)
{
	for (size_t k = 0; k < p->secrets[i].n_hosts; k++)
		if (ward_net_rule_matches(&p->secrets[i].hosts[k], host, port))
			return true;
	return false;
}

static void names(const struct ward_netpolicy *p, uint64_t mask, char *dst, size_t size)
{
	size_t i, l;

	dst[0] = '\0';
	for (i = 0; i < p->n_secrets && i < 64; i++) {
		if (!(mask & 1ULL << i))
			continue;
		l = strlen(dst);
		snprintf(dst + l, size - l, "%s%s", l ? "," : "", p->secrets[i].name);
	}
}

/* ---- paths and globs ---------------------------------------------------- */

const char *ward_netrules_path(const char *target, size_t len, char *out, size_t size)
{
	size_t i, j = 0, plen = 0;

	while (plen < len && target[plen] != '?' && target[plen] != '#')
		plen++;
	if (plen == 0) {
		snprintf(out, size, "/"); /* "http://host?q" */
		return NULL;
	}
	if (target[0] != '/')
		return "the path does not start with '/'";
	for (i = 0; i < plen; i++) {
		char c = target[i];

		if (c == '%') {
			int hi = i + 2 < plen ? hexval(target[i + 1]) : -1;
			int lo = i + 2 < plen ? hexval(target[i + 2]) : -1;

			if (hi < 0 || lo < 0)
				return "a malformed '%' escape in the path";
			c = (char)(hi << 4 | lo);
			i += 2;
			if (c == '/' || c == '\\')
				return "an encoded '/' or '\\' in the path";
			if (c == '%')
				return "an encoded '%' in the path (double encoding)";
		}
		if (c == '\\')
			return "a '\\' in the path";
		if ((unsigned char)c < 0x20 || c == 0x7f)
			return "a control character in the path";
		if (j + 1 >= size)
			return "the path is too long";
		out[j++] = c;
	}
	out[j] = '\0';
	for (const char *seg = out + 1; seg;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);

		if (n == 0 && end)
			return "an empty segment ('//') in the path";
		if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return "a '.' or '..' segment in the path";
		seg = end ? end + 1 : NULL;
	}
	return NULL;
}

struct globm {
	const char *g0, *p0;
	size_t plen;
	int star_at[WARD_NET_GLOB_MAX]; /* glob offset -> star ordinal */
	uint8_t *failed;                /* [star][path offset]: tried, no match */
};

static bool gmatch(struct globm *m, const char *g, const char *p)
{
	while (*g) {
		if (*g == '*') {
			bool any = g[1] == '*';
			int k = m->star_at[g - m->g0];
			uint8_t *seen = &m->failed[(size_t)k * (m->plen + 1)];
			const char *rest = g + (any ? 2 : 1);

			for (const char *q = p;; q++) {
				size_t off = (size_t)(q - m->p0);

				if (!seen[off]) {
					if (gmatch(m, rest, q))
						return true;
					seen[off] = 1;
				}
				if (!*q || (!any && *q == '/'))
					return false;
			}
		}
		if (*g != *p)
			return false;
		g++;
		p++;
	}
	return *p == '\0';
}

bool ward_netrules_glob(const char *glob, const char *path)
{
	struct globm m = { .g0 = glob, .p0 = path, .plen = strlen(path) };
	int stars = 0;
	bool ok;

	if (strlen(glob) >= WARD_NET_GLOB_MAX)
		return false;
	for (size_t i = 0; glob[i]; i++) {
		if (glob[i] != '*')
			continue;
		if (stars == MAX_STARS)
			return false;
		m.star_at[i] = stars++;
		if (glob[i + 1] == '*')
			i++;
	}
	m.failed = calloc((size_t)(stars ? stars : 1), m.plen + 1);
	if (!m.failed)
		return false;
	ok = gmatch(&m, glob, path);
	free(m.failed);
	return ok;
}

void ward_netrules_redact(const char *target, size_t len, char *out, size_t size)
{
	struct net_out o = { 0 };
	size_t i = 0;

	while (i < len && target[i] != '?' && target[i] != '#')
		i++;
	if (i == 0 || target[0] != '/')
		net_out_put(&o, "/", 1);
	net_out_put(&o, target, i);
	if (i < len && target[i] == '?') {
		net_out_put(&o, "?", 1);
		for (i++; i < len && target[i] != '#';) {
			const char *item = target + i, *eq;
			size_t n = 0;

			while (i + n < len && item[n] != '&' && item[n] != '#')
				n++;
			eq = memchr(item, '=', n);
			if (eq)
				net_out_put(&o, item, (size_t)(eq - item) + 1);
			net_out_put(&o, "*", 1);
			i += n;
			if (i < len && target[i] == '&') {
				net_out_put(&o, "&", 1);
				i++;
			}
		}
	}
	snprintf(out, size, "%s", o.buf && !o.failed ? o.buf : "/");
	free(o.buf);
}

/* ---- the verdict -------------------------------------------------------- */

static void refuse(struct ward_netrules_verdict *v, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void refuse(struct ward_netrules_verdict *v, int status, const char *fmt, ...)
{
	va_list ap;

	v->allow = false;
	v->need_body = false;
	v->status = status;
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
	free(v->out);
	v->out = NULL;
	v->out_len = 0;
}

void ward_netrules_verdict_release(struct ward_netrules_verdict *v)
{
	free(v->out);
	v->out = NULL;
	v->out_len = 0;
}

/* The request rules of req->host: none (true, rule ""), one that matches
 * (true), or a refusal. */
static bool check_requests(const struct ward_netpolicy *p, const struct ward_http_request *req,
			   struct ward_netrules_verdict *v)
{
	char path[WARD_NET_GLOB_MAX * 8];
	const char *why;
	bool any = false;
	size_t i, k;

	for (i = 0; i < p->n_requests; i++)
		any = any || ward_net_rule_matches(&p->requests[i].host, req->host, req->port);
	if (!any)
		return true;
	/* A CONNECT to such a host is intercepted (ward_netpolicy_intercepts()
	 * names every host a request rule does): each request inside comes
	 * here on its own. */
	if (req->is_connect)
		return true;
	if ((why = ward_netrules_path(req->target, req->target_len, path, sizeof(path)))) {
		refuse(v, 403, "%s: refused rather than guessed for %s", why, req->host);
		return false;
	}
	for (i = 0; i < p->n_requests; i++) {
		const struct ward_net_request_rule *rr = &p->requests[i];
		bool method = false;

		if (!ward_net_rule_matches(&rr->host, req->host, req->port))
			continue;
		for (k = 0; k < rr->n_methods; k++)
			method = method || strcmp(rr->methods[k], "*") == 0 ||
				 strcmp(rr->methods[k], req->method) == 0;
		if (method && ward_netrules_glob(rr->glob, path)) {
			if ((size_t)snprintf(v->rule, sizeof(v->rule), "allow-request %s", rr->text) >=
			    sizeof(v->rule))
				v->rule[sizeof(v->rule) - 1] = '\0'; /* the rule's text, cut */
			return true;
		}
	}
	refuse(v, 403, "%s %.200s matches no --allow-request rule for %s", req->method, path,
	       req->host);
	return false;
}

/* in[0..n) with every literal stand-in of the secrets in mask replaced by
 * its value, appended to o; the secrets that were put in, in *used. */
static void substitute(const struct ward_netrules *r, uint64_t mask, const char *in, size_t n,
		       struct net_out *o, uint64_t *used)
{
	size_t i = 0;

	while (i < n) {
		size_t best = n, k, which = 0;

		for (k = 0; k < r->n; k++) {
			const char *hit;

			if (!(mask & 1ULL << k))
				continue;
			hit = memmem(in + i, n - i, r->s[k].standin, WARD_NETRULES_STANDIN_LEN);
			if (hit && (size_t)(hit - in) < best) {
				best = (size_t)(hit - in);
				which = k;
			}
		}
		net_out_put(o, in + i, best - i);
		if (best == n)
			break;
		net_out_put(o, r->s[which].value, strlen(r->s[which].value));
		*used |= 1ULL << which;
		i = best + WARD_NETRULES_STANDIN_LEN;
	}
}

/* "Authorization: Basic X" with a stand-in inside X: decoded, put in,
 * encoded again into o. false when the line is not that. */
static bool basic_auth(const struct ward_netrules *r, uint64_t mask, const char *line,
		       size_t n, struct net_out *o, uint64_t *used)
{
	static const char name[] = "authorization:";
	struct net_out dec = { 0 }, sub = { 0 };
	const char *v;
	size_t vn;
	uint64_t u = 0;
	bool ok;

	if (n < sizeof(name) - 1 || strncasecmp(line, name, sizeof(name) - 1) != 0)
		return false;
	v = line + sizeof(name) - 1;
	while (v < line + n && (*v == ' ' || *v == '\t'))
		v++;
	if ((size_t)(line + n - v) < 6 || strncasecmp(v, "basic ", 6) != 0)
		return false;
	v += 6;
	vn = (size_t)(line + n - v);
	ok = b64_decode(v, vn, &dec) && dec.len;
	if (ok)
		substitute(r, mask, dec.buf, dec.len, &sub, &u);
	ok = ok && u && !sub.failed;
	if (ok) {
		net_out_put(o, line, (size_t)(v - line));
		b64_encode((const uint8_t *)sub.buf, sub.len, b64_std, o, true);
		*used |= u;
	}
	if (sub.buf)
		explicit_bzero(sub.buf, sub.len);
	free(dec.buf);
	free(sub.buf);
	return ok;
}

/* The forwarded head with the secrets of mask put in. false (v refused)
 * when a value cannot go where its stand-in was. */
static bool substitute_head(const struct ward_netrules *r, uint64_t mask, const char *head,
			    size_t n, struct net_out *o, uint64_t *used,
			    struct ward_netrules_verdict *v)
{
	const char *eol = memmem(head, n, "\r\n", 2), *p;
	uint64_t line_used = 0;
	size_t k;

	/* the request line: a value with a space would split it */
	substitute(r, mask, head, (size_t)(eol - head), o, &line_used);
	for (k = 0; k < r->n; k++)
		if ((line_used & 1ULL << k) && strchr(r->s[k].value, ' ')) {
			refuse(v, 400, "secret '%s' has a space: it cannot go in a request line",
			       r->p->secrets[k].name);
			return false;
		}
	*used |= line_used;
	net_out_put(o, "\r\n", 2);
	for (p = eol + 2; p < head + n;) {
		const char *e = memmem(p, (size_t)(head + n - p), "\r\n", 2);
		size_t len = e ? (size_t)(e - p) : (size_t)(head + n - p);

		if (!basic_auth(r, mask, p, len, o, used))
			substitute(r, mask, p, len, o, used);
		if (e)
			net_out_put(o, "\r\n", 2);
		p += len + (e ? 2 : 0);
	}
	return true;
}

/* The data of a chunked body (well-formed: the proxy checked it with
 * ward_chunked_feed), trailers dropped. */
static bool dechunk(const char *b, size_t n, struct net_out *o)
{
	size_t i = 0;

	while (i < n) {
		uint64_t size = 0;
		int digits = 0;

		while (i < n && hexval(b[i]) >= 0 && digits < 16) {
			size = size * 16 + (uint64_t)hexval(b[i++]);
			digits++;
		}
		if (!digits)
			return false;
		while (i < n && b[i] != '\n')
			i++; /* extensions, CR */
		i++;
		if (size == 0)
			return true;
		if (size > n - (i < n ? i : n) || i + size > n)
			return false;
		net_out_put(o, b + i, (size_t)size);
		i += (size_t)size + 2;
	}
	return false;
}

static size_t add_creds(const struct ward_netrules *r, const char *host,
			struct ward_http_header *add, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < r->p->n_creds && n < max; i++)
		if (strcmp(r->p->creds[i].host, host) == 0)
			add[n++] = r->inject[i];
	return n;
}

/* The secrets req carries outside its body: in the host name (refused
 * whatever the host: it would go to the DNS), or in the head. 0 and v
 * refused for the host name. */
static uint64_t carried_in_head(const struct ward_netrules *r, const struct ward_http_request *req,
				const char *head, struct ward_netrules_verdict *v, bool *oom)
{
	uint64_t in_host = scan_text(r, req->host, strlen(req->host), oom);

	if (in_host) {
		names(r->p, in_host, v->secrets, sizeof(v->secrets));
		refuse(v, 403, "a secret's stand-in (%s) in the host name", v->secrets);
		return 0;
	}
	return scan_text(r, head, req->head_len, oom);
}

/* The secrets whose hosts include req's. */
static uint64_t listed_for(const struct ward_netrules *r, const struct ward_http_request *req)
{
	uint64_t listed = 0;

	for (size_t i = 0; i < r->n; i++)
		if (secret_listed(r->p, i, req->host, req->port))
			listed |= 1ULL << i;
	return listed;
}

/* Refused when a secret is carried to a host not its own. */
static bool carried_elsewhere(const struct ward_netrules *r, const struct ward_http_request *req,
			      uint64_t carried, uint64_t listed, struct ward_netrules_verdict *v)
{
	if (!(carried & ~listed))
		return false;
	names(r->p, carried & ~listed, v->secrets, sizeof(v->secrets));
	refuse(v, 403, "secret %s carried to %s, not one of its hosts", v->secrets, req->host);
	return true;
}

/* The body's data as the client framed it into plain; false (v refused)
 * for a malformed chunked one. */
static bool body_data(const struct ward_http_body *framing, const char *body, size_t len,
		      struct net_out *plain, struct ward_netrules_verdict *v)
{
	if (framing->chunked) {
		if (dechunk(body, len, plain))
			return true;
		refuse(v, 400, "malformed chunked body");
		return false;
	}
	net_out_put(plain, body, len < framing->length ? len : (size_t)framing->length);
	return true;
}

/* The head again for a body that goes with it: one Content-Length, no
 * Transfer-Encoding, no Expect (the proxy answered "100-continue" itself,
 * and the upstream must not wait for a body it gets at once). */
static char *head_for_body(const char *head, const struct ward_http_request *req,
			   struct ward_http_header *add, size_t n_add, size_t body_len,
			   size_t *out_len, struct ward_netrules_verdict *v)
{
	char clen[24], why[WARD_NET_RULE_MAX], *fwd;
	int status;

	snprintf(clen, sizeof(clen), "%zu", body_len);
	add[n_add++] = (struct ward_http_header){ "Expect", NULL };
	add[n_add++] = (struct ward_http_header){ "Content-Length", clen };
	add[n_add++] = (struct ward_http_header){ "Transfer-Encoding", NULL };
	fwd = ward_http_forward_head(head, req, add, n_add, out_len, &(struct ward_http_body){ 0 },
				     &status, why, sizeof(why));
	if (!fwd)
		refuse(v, status, "%s", why);
	return fwd;
}

static void wipe(struct net_out *o)
{
	if (o->buf)
		explicit_bzero(o->buf, o->len);
	free(o->buf);
	*o = (struct net_out){ 0 };
}

int ward_netrules_request(const struct ward_netrules *r, const struct ward_http_request *req,
			  const char *head, const char *body, size_t body_len, bool body_given,
			  struct ward_netrules_verdict *v)
{
	struct ward_http_header add[8 + 3]; /* credentials, then the body's framing */
	struct net_out plain = { 0 }, nb = { 0 }, o = { 0 };
	uint64_t carried, used = 0, listed;
	size_t n_add, fwd_len;
	char *fwd = NULL, why[WARD_NET_RULE_MAX];
	bool oom = false, has_body;
	int status;

	memset(v, 0, sizeof(*v));
	v->allow = true;
	if (!req->is_connect)
		ward_netrules_redact(req->target, req->target_len, v->path, sizeof(v->path));
	carried = carried_in_head(r, req, head, v, &oom);
	if (!v->allow)
		return 0;
	listed = listed_for(r, req);
	if (req->is_connect) {
		if (!carried_elsewhere(r, req, carried, listed, v))
			check_requests(r->p, req, v);
		goto done;
	}
	if (!check_requests(r->p, req, v) && !carried)
		return 0;
	n_add = add_creds(r, req->host, add, 8);
	fwd = ward_http_forward_head(head, req, add, n_add, &fwd_len, &v->framing, &status, why,
				     sizeof(why));
	if (!fwd) {
		refuse(v, status, "%s", why);
		goto done;
	}
	has_body = v->framing.chunked || v->framing.length;
	if (body_given && has_body) {
		if (!body_data(&v->framing, body, body_len, &plain, v))
			goto done;
		carried |= scan_text(r, plain.buf ? plain.buf : "", plain.len, &oom);
	}
	/* the secrets' verdict first: it names what was carried */
	if (carried_elsewhere(r, req, carried, listed, v) || !v->allow)
		goto done;
	v->credential = n_add > 0;
	if (r->n && !body_given && has_body) {
		if (!v->framing.chunked && v->framing.length > WARD_NETRULES_BODY_MAX)
			refuse(v, 413, "request body larger than %d bytes while secrets are in force",
			       WARD_NETRULES_BODY_MAX);
		else
			v->need_body = true;
		goto done;
	}
	if (body_given && has_body) {
		substitute(r, carried & listed, plain.buf ? plain.buf : "", plain.len, &nb, &used);
		free(fwd);
		fwd = head_for_body(head, req, add, n_add, nb.len, &fwd_len, v);
		if (!fwd)
			goto done;
	}
	if (!substitute_head(r, carried & listed, fwd, fwd_len, &o, &used, v))
		goto done;
	net_out_put(&o, nb.buf ? nb.buf : "", nb.len);
	if (o.failed || plain.failed || nb.failed)
		oom = true;
	names(r->p, used, v->secrets, sizeof(v->secrets));
	v->out = o.buf;
	v->out_len = o.len;
	o = (struct net_out){ 0 };
done:
	/* out of memory anywhere: refused, never let through unexamined */
	if (oom)
		refuse(v, 500, "out of memory");
	free(fwd);
	wipe(&plain);
	wipe(&nb);
	wipe(&o);
	return oom || (!v->allow && v->status == 500) ? -1 : 0;
}
