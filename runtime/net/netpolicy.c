/* netpolicy.c — host rules, CIDRs, address classes; pure code. */
#include "ward/netpolicy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void ward_netpolicy_init(struct ward_netpolicy *p)
{
	memset(p, 0, sizeof(*p));
	p->ports[0] = 80;
	p->ports[1] = 443;
	p->n_ports = 2;
}

void ward_netpolicy_release(struct ward_netpolicy *p)
{
	size_t i;

	free(p->allow);
	free(p->deny);
	free(p->cidrs);
	for (i = 0; i < p->n_creds; i++) {
		free(p->creds[i].header);
		free(p->creds[i].value);
	}
	free(p->creds);
	free(p->upstream_ca);
	free(p->secrets);
	free(p->requests);
	ward_netpolicy_init(p);
}

static void *dup_array(const void *src, size_t n, size_t size, bool *failed)
{
	void *d;

	if (!n)
		return NULL;
	d = malloc(n * size);
	if (!d) {
		*failed = true;
		return NULL;
	}
	memcpy(d, src, n * size);
	return d;
}

int ward_netpolicy_copy(struct ward_netpolicy *dst, const struct ward_netpolicy *src,
			struct ward_error **err)
{
	bool failed = false;
	size_t i;

	*dst = *src;
	dst->allow = dup_array(src->allow, src->n_allow, sizeof(*src->allow), &failed);
	dst->deny = dup_array(src->deny, src->n_deny, sizeof(*src->deny), &failed);
	dst->cidrs = dup_array(src->cidrs, src->n_cidrs, sizeof(*src->cidrs), &failed);
	dst->secrets = dup_array(src->secrets, src->n_secrets, sizeof(*src->secrets), &failed);
	dst->requests = dup_array(src->requests, src->n_requests, sizeof(*src->requests),
				  &failed);
	dst->creds = calloc(src->n_creds ? src->n_creds : 1, sizeof(*dst->creds));
	failed = failed || !dst->creds;
	for (i = 0; !failed && i < src->n_creds; i++) {
		dst->creds[i] = src->creds[i];
		dst->creds[i].header = strdup(src->creds[i].header);
		dst->creds[i].value = strdup(src->creds[i].value);
		failed = !dst->creds[i].header || !dst->creds[i].value;
	}
	dst->upstream_ca = NULL;
	if (!failed && src->upstream_ca && !(dst->upstream_ca = strdup(src->upstream_ca)))
		failed = true;
	if (failed) {
		dst->n_creds = dst->creds ? src->n_creds : 0;
		ward_netpolicy_release(dst);
		return ward_error_make(err, ENOMEM, "network policy");
	}
	return 0;
}

bool ward_netpolicy_intercepts_any(const struct ward_netpolicy *p)
{
	return p->n_creds > 0 || p->n_secrets > 0 || p->n_requests > 0;
}

int ward_netpolicy_set_upstream_ca(struct ward_netpolicy *p, const char *path,
				   struct ward_error **err)
{
	char *d;

	if (!path || !path[0])
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "--upstream-ca needs a file");
	d = strdup(path);
	if (!d)
		return ward_error_make(err, ENOMEM, "--upstream-ca");
	free(p->upstream_ca);
	p->upstream_ca = d;
	return 0;
}

static bool host_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

int ward_net_host_normalize(const char *in, size_t len, char *out, size_t size, bool *literal)
{
	struct in6_addr a6;
	struct in_addr a4;
	size_t i;

	*literal = false;
	if (len >= 2 && in[0] == '[' && in[len - 1] == ']') {
		/* an IPv6 literal */
		if (len - 2 >= size || len - 2 == 0)
			return -1;
		memcpy(out, in + 1, len - 2);
		out[len - 2] = '\0';
		for (i = 0; out[i]; i++)
			out[i] = (char)tolower((unsigned char)out[i]);
		if (inet_pton(AF_INET6, out, &a6) != 1)
			return -1;
		inet_ntop(AF_INET6, &a6, out, (socklen_t)size);
		*literal = true;
		return 0;
	}
	if (len > 1 && in[len - 1] == '.')
		len--;
	if (len == 0 || len >= size || len >= WARD_NET_HOST_MAX)
		return -1;
	for (i = 0; i < len; i++) {
		if (!host_char(in[i]))
			return -1;
		out[i] = (char)tolower((unsigned char)in[i]);
	}
	out[len] = '\0';
	if (out[0] == '.' || out[0] == '-' || strstr(out, ".."))
		return -1;
	if (inet_pton(AF_INET, out, &a4) == 1) {
		*literal = true;
		return 0;
	}
	/* Forms inet_aton takes ("127.1", "0x7f.1", "2130706433") name loopback
	 * to some resolvers: not host names. */
	if (strspn(out, "0123456789.") == len || (out[0] == '0' && out[1] == 'x' &&
						  strspn(out, "0123456789abcdefx.") == len))
		return -1;
	return 0;
}

static int parse_port(const char *s, size_t len, uint16_t *out)
{
	unsigned long v = 0;
	size_t i;

	if (len == 0 || len > 5)
		return -1;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int parse_rule(const char *spec, struct ward_net_rule *r, struct ward_error **err)
{
	const char *host = spec, *colon;
	size_t hlen;

	memset(r, 0, sizeof(*r));
	if (!spec || !*spec)
		return invalid(err, "host rule is empty");
	snprintf(r->text, sizeof(r->text), "%s", spec);
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close)
			return invalid(err, "host rule '%s': unclosed '['", spec);
		hlen = (size_t)(close - spec) + 1;
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] && !colon)
			return invalid(err, "host rule '%s': junk after ']'", spec);
	} else {
		colon = strchr(spec, ':');
		if (colon && strchr(colon + 1, ':'))
			return invalid(err, "host rule '%s': write an IPv6 literal as [ADDR] or "
					    "[ADDR]:PORT", spec);
		hlen = colon ? (size_t)(colon - spec) : strlen(spec);
	}
	if (colon && parse_port(colon + 1, strlen(colon + 1), &r->port) < 0)
		return invalid(err, "host rule '%s': port must be 1 to 65535", spec);
	if (hlen > 2 && host[0] == '*' && host[1] == '.') {
		r->wildcard = true;
		host += 2;
		hlen -= 2;
	}
	if (ward_net_host_normalize(host, hlen, r->host, sizeof(r->host), &r->literal) < 0)
		return invalid(err, "host rule '%s': not a host name, '*.domain' or IP literal",
			       spec);
	if (r->wildcard && r->literal)
		return invalid(err, "host rule '%s': '*.' needs a domain, not an address", spec);
	return 0;
}

static bool name_matches(const struct ward_net_rule *r, const char *host)
{
	size_t hl, rl;

	if (!r->wildcard)
		return strcmp(r->host, host) == 0;
	hl = strlen(host);
	rl = strlen(r->host);
	return hl > rl + 1 && host[hl - rl - 1] == '.' && strcmp(host + hl - rl, r->host) == 0;
}

bool ward_net_rule_matches(const struct ward_net_rule *r, const char *host, uint16_t port)
{
	return name_matches(r, host) && (!r->port || r->port == port);
}

int ward_netpolicy_add_host(struct ward_netpolicy *p, bool deny, const char *spec,
			    struct ward_error **err)
{
	struct ward_net_rule r, **list = deny ? &p->deny : &p->allow, *grown;
	size_t *n = deny ? &p->n_deny : &p->n_allow;

	if (parse_rule(spec, &r, err) < 0)
		return -1;
	grown = realloc(*list, (*n + 1) * sizeof(**list));
	if (!grown)
		return ward_error_make(err, ENOMEM, "host rule");
	*list = grown;
	grown[(*n)++] = r;
	return 0;
}

int ward_cidr_parse(const char *spec, struct ward_cidr *out, struct ward_error **err)
{
	char addr[64];
	const char *slash;
	size_t alen, i;
	int max, prefix;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec)
		return invalid(err, "CIDR is empty");
	slash = strchr(spec, '/');
	alen = slash ? (size_t)(slash - spec) : strlen(spec);
	if (alen >= sizeof(addr))
		return invalid(err, "CIDR '%s' is not an address range", spec);
	memcpy(addr, spec, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, out->addr) == 1) {
		out->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, out->addr) == 1) {
		out->family = AF_INET6;
		max = 128;
	} else {
		return invalid(err, "CIDR '%s': '%s' is not an IPv4 or IPv6 address", spec, addr);
	}
	prefix = max;
	if (slash) {
		uint16_t v = 0;

		if (strcmp(slash + 1, "0") == 0)
			v = 0;
		else if (parse_port(slash + 1, strlen(slash + 1), &v) < 0 || v > max)
			return invalid(err, "CIDR '%s': prefix must be 0 to %d", spec, max);
		prefix = v;
	}
	out->prefix = prefix;
	for (i = 0; i < 16; i++) {
		int bits = prefix - (int)i * 8;

		if (bits <= 0)
			out->addr[i] = 0;
		else if (bits < 8)
			out->addr[i] &= (uint8_t)(0xff << (8 - bits));
	}
	{
		char t[INET6_ADDRSTRLEN];

		inet_ntop(out->family, out->addr, t, sizeof(t));
		snprintf(out->text, sizeof(out->text), "%s/%d", t, prefix);
	}
	return 0;
}

int ward_netpolicy_add_cidr(struct ward_netpolicy *p, const char *spec, struct ward_error **err)
{
	struct ward_cidr c, *grown;

	if (ward_cidr_parse(spec, &c, err) < 0)
		return -1;
	grown = realloc(p->cidrs, (p->n_cidrs + 1) * sizeof(*grown));
	if (!grown)
		return ward_error_make(err, ENOMEM, "CIDR");
	p->cidrs = grown;
	grown[p->n_cidrs++] = c;
	return 0;
}

int ward_netpolicy_add_port(struct ward_netpolicy *p, const char *spec, struct ward_error **err)
{
	uint16_t port;
	size_t i;

	if (!spec || parse_port(spec, strlen(spec), &port) < 0)
		return invalid(err, "port '%s' must be 1 to 65535", spec ? spec : "");
	for (i = 0; i < p->n_ports; i++)
		if (p->ports[i] == port)
			return 0;
	if (p->n_ports == WARD_NET_MAX_PORTS)
		return invalid(err, "more than %d ports", WARD_NET_MAX_PORTS);
	p->ports[p->n_ports++] = port;
	return 0;
}

static bool header_name_ok(const char *s)
{
	/* RFC 9110 token characters */
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return false;
	return true;
}

int ward_netpolicy_add_credential_parts(struct ward_netpolicy *p, const char *host,
				   const char *header, const char *value,
				   struct ward_error **err)
{
	struct ward_net_credential c, *grown;
	bool literal;

	memset(&c, 0, sizeof(c));
	if (!host || ward_net_host_normalize(host, strlen(host), c.host, sizeof(c.host),
					     &literal) < 0)
		return invalid(err, "credential host '%s' is not a host name", host ? host : "");
	if (!header || !header_name_ok(header))
		return invalid(err, "credential header '%s' is not a header name",
			       header ? header : "");
	if (!value || strpbrk(value, "\r\n"))
		return invalid(err, "credential value for '%s' must be one line", host);
	c.header = strdup(header);
	c.value = strdup(value);
	grown = c.header && c.value ? realloc(p->creds, (p->n_creds + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(c.header);
		free(c.value);
		return ward_error_make(err, ENOMEM, "credential");
	}
	p->creds = grown;
	grown[p->n_creds++] = c;
	return 0;
}

int ward_netpolicy_add_credential(struct ward_netpolicy *p, const char *spec,
				  struct ward_error **err)
{
	const char *eq = spec ? strchr(spec, '=') : NULL, *colon;
	char host[WARD_NET_HOST_MAX], name[128];
	size_t n;

	if (!eq || eq == spec)
		return invalid(err, "credential '%s' is not HOST=Header: value", spec ? spec : "");
	colon = strchr(eq + 1, ':');
	if (!colon)
		return invalid(err, "credential '%s' is not HOST=Header: value", spec);
	n = (size_t)(eq - spec);
	if (n >= sizeof(host))
		return invalid(err, "credential host is too long");
	memcpy(host, spec, n);
	host[n] = '\0';
	n = (size_t)(colon - eq - 1);
	if (n >= sizeof(name))
		return invalid(err, "credential header name is too long");
	memcpy(name, eq + 1, n);
	name[n] = '\0';
	colon++;
	while (*colon == ' ')
		colon++;
	return ward_netpolicy_add_credential_parts(p, host, name, colon, err);
}


static bool port_listed(const struct ward_netpolicy *p, uint16_t port)
{
	size_t i;

	for (i = 0; i < p->n_ports; i++)
		if (p->ports[i] == port)
			return true;
	return false;
}

static bool rule_matches(const struct ward_netpolicy *p, const struct ward_net_rule *r,
			 const char *host, uint16_t port)
{
	if (!name_matches(r, host))
		return false;
	return r->port ? r->port == port : port_listed(p, port);
}

static bool literal_addr(const char *host, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		ss->ss_family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		ss->ss_family = AF_INET6;
		return true;
	}
	return false;
}

bool ward_netpolicy_check_host(const struct ward_netpolicy *p, const char *host, uint16_t port,
			       char *rule, size_t size)
{
	struct sockaddr_storage ss;
	bool name_listed = false;
	size_t i;

	for (i = 0; i < p->n_deny; i++)
		if (name_matches(&p->deny[i], host) &&
		    (!p->deny[i].port || p->deny[i].port == port)) {
			snprintf(rule, size, "deny-host %s", p->deny[i].text);
			return false;
		}
	for (i = 0; i < p->n_allow; i++) {
		if (rule_matches(p, &p->allow[i], host, port)) {
			snprintf(rule, size, "allow-host %s", p->allow[i].text);
			return true;
		}
		name_listed = name_listed || name_matches(&p->allow[i], host);
	}
	if (literal_addr(host, &ss)) {
		for (i = 0; i < p->n_cidrs; i++)
			if (ward_cidr_contains(&p->cidrs[i], (struct sockaddr *)&ss)) {
				if (!port_listed(p, port)) {
					snprintf(rule, size, "port %u not allowed for %s", port, host);
					return false;
				}
				snprintf(rule, size, "allow-cidr %s", p->cidrs[i].text);
				return true;
			}
		snprintf(rule, size, "IP literal %s not listed", host);
		return false;
	}
	if (name_listed)
		snprintf(rule, size, "port %u not allowed for %s", port, host);
	else
		snprintf(rule, size, "%s not on the allowlist", host);
	return false;
}

/* The IPv4 address of sa (also inside ::ffff:a.b.c.d and 64:ff9b::/96), in
 * host byte order; false for other IPv6 addresses. */
static bool v4_of(const struct sockaddr *sa, uint32_t *out)
{
	if (sa->sa_family == AF_INET) {
		*out = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };

		if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0) {
			*out = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 |
			       b[15];
			return true;
		}
	}
	return false;
}

static bool in4(uint32_t a, uint32_t net, int prefix)
{
	uint32_t mask = prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);

	return (a & mask) == (net & mask);
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	uint32_t x, y;

	if (v4_of(a, &x) && v4_of((const struct sockaddr *)b, &y))
		return x == y;
	if (a->sa_family == AF_INET6 && b->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
	return false;
}

static enum ward_addr_class classify(const struct sockaddr *sa);

enum ward_addr_class ward_addr_classify(const struct sockaddr *sa,
					const struct sockaddr_storage *own, size_t n_own)
{
	enum ward_addr_class c = classify(sa);
	size_t i;

	/* The specific class first ("loopback" says more than "own"). */
	for (i = 0; c == WARD_ADDR_PUBLIC && i < n_own; i++)
		if (same_addr(sa, &own[i]))
			return WARD_ADDR_OWN;
	return c;
}

static enum ward_addr_class classify(const struct sockaddr *sa)
{
	uint32_t a;

	if (v4_of(sa, &a)) {
		if (a == 0xa9fea9feu) /* 169.254.169.254 */
			return WARD_ADDR_METADATA;
		if (in4(a, 0x7f000000u, 8))
			return WARD_ADDR_LOOPBACK;
		if (in4(a, 0x0a000000u, 8) || in4(a, 0xac100000u, 12) || in4(a, 0xc0a80000u, 16) ||
		    in4(a, 0x64400000u, 10))
			return WARD_ADDR_PRIVATE;
		if (in4(a, 0xa9fe0000u, 16))
			return WARD_ADDR_LINK_LOCAL;
		if (in4(a, 0xe0000000u, 4))
			return WARD_ADDR_MULTICAST;
		if (a == 0)
			return WARD_ADDR_UNSPECIFIED;
		if (in4(a, 0, 8) || in4(a, 0xf0000000u, 4) || in4(a, 0xc0000000u, 24))
			return WARD_ADDR_RESERVED; /* 0/8, 240/4 with broadcast, IETF 192.0.0/24 */
		return WARD_ADDR_PUBLIC;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		static const uint8_t metadata[16] = { 0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0,
						      0,    0,    0,    0,    0, 0, 0x02, 0x54 };

		if (memcmp(x->s6_addr, metadata, 16) == 0)
			return WARD_ADDR_METADATA;
		if (IN6_IS_ADDR_LOOPBACK(x))
			return WARD_ADDR_LOOPBACK;
		if (IN6_IS_ADDR_UNSPECIFIED(x))
			return WARD_ADDR_UNSPECIFIED;
		if (IN6_IS_ADDR_MULTICAST(x))
			return WARD_ADDR_MULTICAST;
		if (IN6_IS_ADDR_LINKLOCAL(x) || IN6_IS_ADDR_SITELOCAL(x))
			return WARD_ADDR_LINK_LOCAL;
		if ((x->s6_addr[0] & 0xfe) == 0xfc)
			return WARD_ADDR_PRIVATE;
		if (IN6_IS_ADDR_V4COMPAT(x))
			return WARD_ADDR_RESERVED;
		return WARD_ADDR_PUBLIC;
	}
	return WARD_ADDR_RESERVED;
}

const char *ward_addr_class_name(enum ward_addr_class c)
{
	switch (c) {
	case WARD_ADDR_PUBLIC:
		return "public";
	case WARD_ADDR_LOOPBACK:
		return "loopback";
	case WARD_ADDR_PRIVATE:
		return "private";
	case WARD_ADDR_LINK_LOCAL:
		return "link-local";
	case WARD_ADDR_METADATA:
		return "metadata";
	case WARD_ADDR_MULTICAST:
		return "multicast";
	case WARD_ADDR_UNSPECIFIED:
		return "unspecified";
	case WARD_ADDR_RESERVED:
		return "reserved";
	case WARD_ADDR_OWN:
		return "host's own";
	}
	return "unknown";
}

bool ward_cidr_contains(const struct ward_cidr *c, const struct sockaddr *sa)
{
	uint32_t a, net;
	int full, rest;

	if (c->family == AF_INET) {
		if (!v4_of(sa, &a))
			return false;
		net = (uint32_t)c->addr[0] << 24 | (uint32_t)c->addr[1] << 16 |
		      (uint32_t)c->addr[2] << 8 | c->addr[3];
		return in4(a, net, c->prefix);
	}
	if (sa->sa_family != AF_INET6)
		return false;
	{
		const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		full = c->prefix / 8;
		rest = c->prefix % 8;
		if (memcmp(b, c->addr, (size_t)full) != 0)
			return false;
		return rest == 0 || ((b[full] ^ c->addr[full]) & (0xff << (8 - rest))) == 0;
	}
}

void ward_addr_text(const struct sockaddr *sa, char *buf, size_t size)
{
	const void *a = sa->sa_family == AF_INET ?
				(const void *)&((const struct sockaddr_in *)sa)->sin_addr :
				(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (size)
		buf[0] = '\0';
	if ((sa->sa_family == AF_INET || sa->sa_family == AF_INET6) &&
	    inet_ntop(sa->sa_family, a, buf, (socklen_t)size))
		return;
	snprintf(buf, size, "?");
}

bool ward_netpolicy_check_addr(const struct ward_netpolicy *p, const struct sockaddr *sa,
			       const struct sockaddr_storage *own, size_t n_own, char *rule,
			       size_t size)
{
	enum ward_addr_class c;
	char text[INET6_ADDRSTRLEN];
	size_t i;

	for (i = 0; i < p->n_cidrs; i++)
		if (ward_cidr_contains(&p->cidrs[i], sa)) {
			snprintf(rule, size, "allow-cidr %s", p->cidrs[i].text);
			return true;
		}
	c = ward_addr_classify(sa, own, n_own);
	if (c == WARD_ADDR_PUBLIC) {
		if (size)
			rule[0] = '\0';
		return true;
	}
	ward_addr_text(sa, text, sizeof(text));
	snprintf(rule, size, "%s address %s (list it with --allow-cidr)", ward_addr_class_name(c),
		 text);
	return false;
}

char *ward_net_expand(const char *tmpl, const char *(*lookup)(const char *name),
		      struct ward_error **err)
{
	size_t cap = strlen(tmpl) + 64, n = 0;
	char *out = malloc(cap);
	const char *s = tmpl;

	if (!out) {
		ward_error_make(err, ENOMEM, "expand");
		return NULL;
	}
	while (*s) {
		const char *val = NULL, *start;
		char name[128];
		size_t len, vlen;
		bool braced;

		if (*s != '$') {
			val = s;
			vlen = 1;
			s++;
			goto append;
		}
		if (s[1] == '$') {
			val = "$";
			vlen = 1;
			s += 2;
			goto append;
		}
		braced = s[1] == '{';
		start = s + 1 + braced;
		len = 0;
		while (isalnum((unsigned char)start[len]) || start[len] == '_')
			len++;
		if (len == 0 || len >= sizeof(name) || (braced && start[len] != '}') ||
		    isdigit((unsigned char)start[0])) {
			free(out);
			invalid(err, "'%s': '$' must start $NAME or ${NAME}", tmpl);
			return NULL;
		}
		memcpy(name, start, len);
		name[len] = '\0';
		val = lookup(name);
		if (!val) {
			free(out);
			invalid(err, "'%s': variable '%s' is not set in ward's environment", tmpl,
				name);
			return NULL;
		}
		vlen = strlen(val);
		s = start + len + braced;
append:
		if (n + vlen + 1 > cap) {
			char *g;

			cap = (n + vlen + 1) * 2;
			g = realloc(out, cap);
			if (!g) {
				free(out);
				ward_error_make(err, ENOMEM, "expand");
				return NULL;
			}
			out = g;
		}
		memcpy(out + n, val, vlen);
		n += vlen;
	}
	out[n] = '\0';
	if (strpbrk(out, "\r\n")) {
		free(out);
		invalid(err, "'%s': the expanded value has a line break", tmpl);
		return NULL;
	}
	return out;
}

/* ---- secrets and request rules ----------------------------------------- */

static bool env_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= WARD_NET_SECRET_NAME_MAX || isdigit((unsigned char)s[0]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

int ward_netpolicy_add_secret_host(struct ward_netpolicy *p, const char *name, const char *host,
				   struct ward_error **err)
{
	struct ward_net_secret *s = NULL, *grown;
	struct ward_net_rule r;
	size_t i;

	if (!name || !env_name_ok(name, strlen(name)))
		return invalid(err, "secret name '%s' is not a variable name", name ? name : "");
	if (parse_rule(host, &r, err) < 0) {
		ward_error_prefix(*err, "secret '%s'", name);
		return -1;
	}
	for (i = 0; i < p->n_secrets; i++)
		if (strcmp(p->secrets[i].name, name) == 0)
			s = &p->secrets[i];
	if (!s) {
		grown = realloc(p->secrets, (p->n_secrets + 1) * sizeof(*grown));
		if (!grown)
			return ward_error_make(err, ENOMEM, "secret");
		p->secrets = grown;
		s = &grown[p->n_secrets++];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", name);
	}
	if (s->n_hosts == WARD_NET_SECRET_HOSTS)
		return invalid(err, "secret '%s': more than %d hosts", name, WARD_NET_SECRET_HOSTS);
	s->hosts[s->n_hosts++] = r;
	/* the secret's hosts are allowed hosts */
	return ward_netpolicy_add_host(p, false, host, err);
}

int ward_netpolicy_add_secret(struct ward_netpolicy *p, const char *spec, struct ward_error **err)
{
	const char *eq = spec ? strchr(spec, '=') : NULL, *h;
	char name[WARD_NET_SECRET_NAME_MAX], host[WARD_NET_RULE_MAX];

	if (!eq || eq == spec || !eq[1])
		return invalid(err, "secret '%s' is not NAME=HOST[,HOST...]", spec ? spec : "");
	if ((size_t)(eq - spec) >= sizeof(name) || !env_name_ok(spec, (size_t)(eq - spec)))
		return invalid(err, "secret '%s': '%.*s' is not a variable name", spec,
			       (int)(eq - spec), spec);
	snprintf(name, sizeof(name), "%.*s", (int)(eq - spec), spec);
	for (h = eq + 1; *h;) {
		size_t n = strcspn(h, ",");

		if (n == 0 || n >= sizeof(host))
			return invalid(err, "secret '%s': an empty or too long host", spec);
		snprintf(host, sizeof(host), "%.*s", (int)n, h);
		if (ward_netpolicy_add_secret_host(p, name, host, err) < 0)
			return -1;
		h += n;
		if (*h == ',' && !*++h)
			return invalid(err, "secret '%s': an empty host after ','", spec);
	}
	return 0;
}

/* A path glob a rule may have: see ward_netpolicy_add_request(). */
static const char *glob_problem(const char *g)
{
	const char *seg;

	if (g[0] != '/')
		return "the path must start with '/'";
	if (strpbrk(g, "?#%\\"))
		return "the path may not have '?', '#', '%' or '\\' (the query is not matched; "
		       "write the path decoded)";
	for (const char *c = g; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return "the path may not have spaces or control characters";
	if (strstr(g, "//"))
		return "the path may not have an empty segment ('//')";
	if (strstr(g, "***"))
		return "'*' comes alone or as '**'";
	{
		int stars = 0;

		for (const char *c = g; (c = strchr(c, '*')); c += c[1] == '*' ? 2 : 1)
			stars++;
		/* the matcher's memory is bounded by it (ward_netrules_glob) */
		if (stars > WARD_NET_GLOB_STARS)
			return "more than 16 '*' or '**'";
	}
	for (seg = g + 1; seg;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);

		if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return "the path may not have a '.' or '..' segment";
		seg = end ? end + 1 : NULL;
	}
	return NULL;
}

static int parse_methods(const char *s, size_t n, struct ward_net_request_rule *r,
			 const char *spec, struct ward_error **err)
{
	const char *p = s, *end = s + n;

	while (p <= end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t len = comma ? (size_t)(comma - p) : (size_t)(end - p);
		size_t i;

		if (len == 0 || len >= sizeof(r->methods[0]))
			return invalid(err, "request rule '%s': an empty or too long method", spec);
		if (r->n_methods == WARD_NET_METHODS_MAX)
			return invalid(err, "request rule '%s': more than %d methods", spec,
				       WARD_NET_METHODS_MAX);
		for (i = 0; i < len; i++) {
			char c = p[i];

			if (!(len == 1 && c == '*') && !isalpha((unsigned char)c) && c != '-' &&
			    c != '_')
				return invalid(err, "request rule '%s': '%.*s' is not a method", spec,
					       (int)len, p);
			r->methods[r->n_methods][i] = (char)toupper((unsigned char)c);
		}
		r->methods[r->n_methods++][len] = '\0';
		if (!comma)
			break;
		p = comma + 1;
	}
	return 0;
}

int ward_netpolicy_add_request(struct ward_netpolicy *p, const char *spec,
			       struct ward_error **err)
{
	struct ward_net_request_rule r, *grown;
	const char *f[3], *why, *s = spec;
	size_t len[3], k = 0;
	char host[WARD_NET_RULE_MAX];

	memset(&r, 0, sizeof(r));
	if (!spec)
		return invalid(err, "request rule is empty");
	while (*s) {
		size_t n;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		n = strcspn(s, " ");
		if (k == 3)
			return invalid(err, "request rule '%s' is not 'HOST METHOD[,METHOD] PATHGLOB' "
					    "(too many fields)", spec);
		f[k] = s;
		len[k++] = n;
		s += n;
	}
	if (k != 3)
		return invalid(err, "request rule '%s' is not 'HOST METHOD[,METHOD] PATHGLOB'", spec);
	if (len[0] >= sizeof(host) || len[2] >= sizeof(r.glob))
		return invalid(err, "request rule '%s' is too long", spec);
	snprintf(host, sizeof(host), "%.*s", (int)len[0], f[0]);
	if (parse_rule(host, &r.host, err) < 0) {
		ward_error_prefix(*err, "request rule '%s'", spec);
		return -1;
	}
	if (parse_methods(f[1], len[1], &r, spec, err) < 0)
		return -1;
	snprintf(r.glob, sizeof(r.glob), "%.*s", (int)len[2], f[2]);
	if ((why = glob_problem(r.glob)))
		return invalid(err, "request rule '%s': %s", spec, why);
	k = (size_t)snprintf(r.text, sizeof(r.text), "%s %.*s %s", host, (int)len[1], f[1],
			     r.glob);
	if (k >= sizeof(r.text))
		return invalid(err, "request rule '%s' is too long", spec);
	grown = realloc(p->requests, (p->n_requests + 1) * sizeof(*grown));
	if (!grown)
		return ward_error_make(err, ENOMEM, "request rule");
	p->requests = grown;
	grown[p->n_requests++] = r;
	return ward_netpolicy_add_host(p, false, host, err);
}

bool ward_netpolicy_intercepts(const struct ward_netpolicy *p, const char *host)
{
	size_t i, k;

	for (i = 0; i < p->n_creds; i++)
		if (strcmp(p->creds[i].host, host) == 0)
			return true;
	for (i = 0; i < p->n_secrets; i++)
		for (k = 0; k < p->secrets[i].n_hosts; k++)
			if (name_matches(&p->secrets[i].hosts[k], host))
				return true;
	for (i = 0; i < p->n_requests; i++)
		if (name_matches(&p->requests[i].host, host))
			return true;
	return false;
}
