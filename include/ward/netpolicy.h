/* ward/netpolicy.h — what the network proxy lets through: the host allowlist
 * and denylist, the port list, the address ranges let through the
 * destination check, and the credentials added for configured hosts. Pure
 * code: parsing and matching, no system calls.
 *
 * How to use this:
 *
 *     struct ward_netpolicy p;
 *     ward_netpolicy_init(&p);                          // ports 80 and 443
 *     ward_netpolicy_add_host(&p, false, "*.example.com", &err);
 *     ward_netpolicy_add_host(&p, true, "evil.example.com", &err);  // deny wins
 *     ward_netpolicy_add_cidr(&p, "127.0.0.1/32", &err);
 *     char rule[WARD_NET_RULE_MAX];
 *     if (ward_netpolicy_check_host(&p, "api.example.com", 443, rule, sizeof(rule)))
 *             ...                      // allowed; rule = "allow-host *.example.com"
 *     // after resolution, for each address:
 *     if (ward_netpolicy_check_addr(&p, sa, own, n_own, rule, sizeof(rule))) ...
 *     ward_netpolicy_release(&p);
 *
 * Host rules: "example.com" (that name only), "*.example.com" (every name
 * below example.com, not example.com itself), an IP literal ("192.0.2.7",
 * "[2001:db8::1]"), each optionally with ":PORT". A rule without a port
 * matches the policy's port list (80 and 443 unless ports were added); a rule
 * with a port matches that port only. Names compare case-insensitively and
 * without a trailing dot. A denied host is refused whatever allows it.
 *
 * An IP literal as the destination is allowed only when a host rule lists
 * that literal or a CIDR of the policy contains it.
 *
 * Destination check: after resolution an address is refused when it is
 * loopback, private (RFC 1918, unique-local, shared 100.64/10), link-local,
 * the cloud metadata address (169.254.169.254, fd00:ec2::254), multicast,
 * broadcast, unspecified or reserved, or one of the host's own addresses —
 * unless a CIDR of the policy contains it. IPv4-mapped IPv6 addresses are
 * checked as the IPv4 address inside.
 */
#ifndef WARD_NETPOLICY_H
#define WARD_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sockaddr;
struct sockaddr_storage;

#define WARD_NET_HOST_MAX 256 /* a normalised host name, with its NUL */
#define WARD_NET_RULE_MAX 320 /* a rule's text in a decision */
#define WARD_NET_MAX_PORTS 64

struct ward_net_rule {
	char host[WARD_NET_HOST_MAX]; /* lowercase; "example.com", or the domain of "*." */
	bool wildcard;                /* "*.host": names strictly below host */
	bool literal;                 /* an IP literal (host holds its text form) */
	uint16_t port;                /* 0: the policy's port list */
	char text[WARD_NET_RULE_MAX]; /* as given, for decisions: "*.example.com:8443" */
};

struct ward_cidr {
	int family;                   /* AF_INET or AF_INET6 */
	uint8_t addr[16];             /* network bytes, masked */
	int prefix;
	char text[64];                /* "127.0.0.1/32" */
};

/* A header the proxy adds to plain-HTTP requests for one host (exact name).
 * value may name variables of ward's own environment, $NAME or ${NAME},
 * expanded when the proxy starts. */
struct ward_net_credential {
	char host[WARD_NET_HOST_MAX];
	char *header;                 /* "Authorization" */
	char *value;                  /* "Bearer ${API_TOKEN}" */
};

/* A secret (--secret NAME=HOST[,HOST...]): the sandbox gets NAME set to a
 * random stand-in; the proxy puts ward's own $NAME in its place in requests
 * to these hosts only (ward/netrules.h). */
#define WARD_NET_SECRET_NAME_MAX 64
#define WARD_NET_SECRET_HOSTS 16
struct ward_net_secret {
	char name[WARD_NET_SECRET_NAME_MAX];          /* [A-Za-z_][A-Za-z0-9_]* */
	struct ward_net_rule hosts[WARD_NET_SECRET_HOSTS];
	size_t n_hosts;
};

/* A request rule (--allow-request 'HOST METHOD[,METHOD] PATHGLOB'): once a
 * host has one, every request to it must match one of its rules. */
#define WARD_NET_METHODS_MAX 8
#define WARD_NET_GLOB_MAX 512
#define WARD_NET_GLOB_STARS 16 /* '*' and '**' in one glob, at most */
struct ward_net_request_rule {
	struct ward_net_rule host;                     /* as host rules, no wildcard port */
	char methods[WARD_NET_METHODS_MAX][16];        /* uppercase; "*" is any method */
	size_t n_methods;
	char glob[WARD_NET_GLOB_MAX];                  /* a path glob: '*' within a segment,
							  '**' across segments */
	char text[WARD_NET_RULE_MAX];                  /* "HOST METHOD[,METHOD] PATHGLOB",
							  normalised */
};

struct ward_netpolicy {
	struct ward_net_rule *allow, *deny;
	size_t n_allow, n_deny;
	struct ward_cidr *cidrs;
	size_t n_cidrs;
	uint16_t ports[WARD_NET_MAX_PORTS]; /* for rules without a port */
	size_t n_ports;
	struct ward_net_credential *creds;
	size_t n_creds;
	char *upstream_ca;            /* --upstream-ca: extra trust anchors (PEM), or NULL */
	struct ward_net_secret *secrets;
	size_t n_secrets;
	struct ward_net_request_rule *requests;
	size_t n_requests;
};

/* Empty lists, ports 80 and 443. */
WARD_API void ward_netpolicy_init(struct ward_netpolicy *p);

/* Free what p owns and re-initialise it. */
WARD_API void ward_netpolicy_release(struct ward_netpolicy *p);

/* Deep copy of src into dst (dst is overwritten, not released). ENOMEM. */
WARD_API int ward_netpolicy_copy(struct ward_netpolicy *dst, const struct ward_netpolicy *src,
				 struct ward_error **err);

/* Add a host rule (see above) to the allowlist, or to the denylist when deny.
 * InvalidParameters naming the spec when it is not a host, a "*." domain or
 * an IP literal with an optional port 1..65535. */
WARD_API int ward_netpolicy_add_host(struct ward_netpolicy *p, bool deny, const char *spec,
				     struct ward_error **err);

/* Let an address range through the destination check: "10.0.0.0/8",
 * "127.0.0.1" (a single address), "fd00::/8". InvalidParameters. */
WARD_API int ward_netpolicy_add_cidr(struct ward_netpolicy *p, const char *spec,
				     struct ward_error **err);

/* Add a port to the list used by rules without a port (80 and 443 are
 * there from the start). InvalidParameters for anything but 1..65535. */
WARD_API int ward_netpolicy_add_port(struct ward_netpolicy *p, const char *spec,
				     struct ward_error **err);

/* Add a credential: spec is "HOST=Header-Name: value" (the CLI's form), or
 * its three parts (the policy file's). InvalidParameters for a host that is
 * not a name, a header name that is not a token, a value with a line break. */
WARD_API int ward_netpolicy_add_credential(struct ward_netpolicy *p, const char *spec,
					   struct ward_error **err);
WARD_API int ward_netpolicy_add_credential_parts(struct ward_netpolicy *p, const char *host,
					    const char *header, const char *value,
					    struct ward_error **err);

/* Whether any host may be intercepted (the run then needs its CA, and the
 * sandbox's trust store gets it). */
WARD_API bool ward_netpolicy_intercepts_any(const struct ward_netpolicy *p);

/* --upstream-ca FILE (policy: network.upstream_ca): PEM certificates the
 * proxy trusts, beside the system's store, when it verifies an intercepted
 * host's real server. Only stored here; the file is read (and refused when
 * unreadable, naming the option) when the proxy starts, before the
 * command runs. InvalidParameters for an empty path. */
WARD_API int ward_netpolicy_set_upstream_ca(struct ward_netpolicy *p, const char *path,
					    struct ward_error **err);

/* Add a secret: spec is "NAME=HOST[,HOST...]" (the CLI's form); the parts
 * form takes the name and one host at a time (the policy file's; a name
 * given again adds hosts). Each host is a host rule (see above: a name,
 * "*.domain" or an IP literal, optionally with ":PORT") and is added to the
 * allowlist too. At most WARD_NET_SECRET_HOSTS hosts a secret.
 * InvalidParameters naming what is wrong. */
WARD_API int ward_netpolicy_add_secret(struct ward_netpolicy *p, const char *spec,
				       struct ward_error **err);
WARD_API int ward_netpolicy_add_secret_host(struct ward_netpolicy *p, const char *name,
					    const char *host, struct ward_error **err);

/* Add a request rule: "HOST METHOD[,METHOD...] PATHGLOB", separated by
 * spaces. HOST is a host rule (added to the allowlist too); a METHOD is an
 * HTTP token (uppercased) or "*"; PATHGLOB starts with '/', has no '?',
 * '#', '%', no "." or ".." segment, no "//", no space or control
 * character, and '*' only as "*" or "**", WARD_NET_GLOB_STARS of them at
 * most. InvalidParameters naming what is wrong. */
WARD_API int ward_netpolicy_add_request(struct ward_netpolicy *p, const char *spec,
					struct ward_error **err);

/* Whether (host, port) is one of the rule's: name (wildcards as for the
 * allowlist) and port, when the rule has one. host is normalised. */
WARD_API bool ward_net_rule_matches(const struct ward_net_rule *r, const char *host,
				    uint16_t port);

/* Whether a credential (--inject-header), a secret (--secret) or a request
 * rule (--allow-request) names host: such a host's requests need their
 * plaintext (TLS interception for HTTPS). host is normalised; any port. */
WARD_API bool ward_netpolicy_intercepts(const struct ward_netpolicy *p, const char *host);

/* Normalise a host as a request names it: lowercase, no trailing dot, no
 * brackets around an IPv6 literal. Returns 0, or -1 when it is empty, too
 * long, or has characters no host name or IP literal has. *literal says
 * whether it is an IP literal. */
WARD_API int ward_net_host_normalize(const char *in, size_t len, char *out, size_t size,
				     bool *literal);

/* Whether the policy lets (host, port) through by name. host is normalised
 * (ward_net_host_normalize). rule receives the deciding rule's text:
 * "allow-host *.example.com", "deny-host evil.example.com",
 * "allow-cidr 10.0.0.0/8", or why nothing matched ("not on the allowlist",
 * "port 8080 not allowed for example.com", "IP literal not listed"). */
WARD_API bool ward_netpolicy_check_host(const struct ward_netpolicy *p, const char *host,
					uint16_t port, char *rule, size_t size);

/* Address classes the destination check refuses. */
enum ward_addr_class {
	WARD_ADDR_PUBLIC = 0,
	WARD_ADDR_LOOPBACK,
	WARD_ADDR_PRIVATE,
	WARD_ADDR_LINK_LOCAL,
	WARD_ADDR_METADATA,
	WARD_ADDR_MULTICAST,
	WARD_ADDR_UNSPECIFIED,
	WARD_ADDR_RESERVED,  /* 240/4, broadcast, 0/8 */
	WARD_ADDR_OWN,       /* one of the host's own addresses */
};

/* The class of an address (AF_INET or AF_INET6 sockaddr). own lists the
 * host's addresses (may be NULL with n_own 0). */
WARD_API enum ward_addr_class ward_addr_classify(const struct sockaddr *sa,
						 const struct sockaddr_storage *own, size_t n_own);

/* "loopback", "private", ... ; "public" for WARD_ADDR_PUBLIC. */
WARD_API const char *ward_addr_class_name(enum ward_addr_class c);

/* Parse a CIDR (see ward_netpolicy_add_cidr). */
WARD_API int ward_cidr_parse(const char *spec, struct ward_cidr *out, struct ward_error **err);

/* Whether the address is inside the range (families must agree; an
 * IPv4-mapped IPv6 address is compared as IPv4). */
WARD_API bool ward_cidr_contains(const struct ward_cidr *c, const struct sockaddr *sa);

/* The destination check of one resolved address: true when it may be
 * connected to. rule receives "allow-cidr X" or the reason for a refusal
 * ("loopback address 127.0.0.1 (list it with --allow-cidr)"), or "" when
 * the address is public. */
WARD_API bool ward_netpolicy_check_addr(const struct ward_netpolicy *p, const struct sockaddr *sa,
					const struct sockaddr_storage *own, size_t n_own,
					char *rule, size_t size);

/* Expand $NAME and ${NAME} in tmpl with lookup(name) (NULL: undefined, an
 * error). "$$" is a literal "$". Returns a malloc'd string, or NULL with an
 * InvalidParameters error naming the variable. */
WARD_API char *ward_net_expand(const char *tmpl, const char *(*lookup)(const char *name),
			       struct ward_error **err);

/* Text form of an address: "192.0.2.7" or "2001:db8::1". */
WARD_API void ward_addr_text(const struct sockaddr *sa, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
