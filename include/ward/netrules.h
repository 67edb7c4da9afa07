/* ward/netrules.h — what the proxy does to one request it has the plaintext
 * of: secrets (stand-ins in, real values out, only towards their hosts),
 * credentials (--inject-header), request rules (--allow-request), and what
 * the audit record says about it. Pure code: no system calls but one
 * getrandom() for the stand-ins in ward_netrules_new().
 *
 * How to use this:
 *
 *     struct ward_netrules *r = ward_netrules_new(&policy, getenv, &err);
 *     // the sandbox's environment gets ward_netrules_env(r, i) for each i
 *     struct ward_netrules_verdict v;
 *     ward_netrules_request(r, &req, head, NULL, 0, false, &v);  // the head
 *     if (v.allow && v.need_body)  // secrets in force: collect the body whole,
 *             ward_netrules_request(r, &req, head, body, n, true, &v);  // again
 *     if (!v.allow) ...             // answer v.status with v.reason
 *     else ...                      // forward v.out[0..v.out_len)
 *     ward_netrules_verdict_release(&v);
 *
 * Secrets. Each secret gets a stand-in, "wardsecret" and 32 random
 * lowercase hex digits, which the sandbox sees as $NAME. A request is
 * refused (403) when it carries a stand-in to a host that is not one of the
 * secret's, anywhere in its head (request line, any header, the host name
 * itself) or its body, as the stand-in or with its letters' case changed,
 * percent-encoded, or base64-encoded (standard or URL alphabet, any
 * alignment; also inside percent-encoding). A stand-in in the host name is
 * refused whatever the host. To a secret's own host the stand-in is
 * replaced, where it appears as written, by ward's $NAME: in the request
 * line, in header values, inside "Authorization: Basic" credentials, and in
 * the body (whole, up to WARD_NETRULES_BODY_MAX; a chunked body goes out
 * as one chunk, its trailers dropped; a changed length is a new
 * Content-Length). A real value with a control character is refused when
 * the rules are made (header injection); one with a space cannot go into a
 * request line (that request is refused). What cannot be caught: a stand-in
 * transformed otherwise (hex, reversed, compressed, encrypted) reaches an
 * unlisted host as the command sends it — but only the stand-in: the real
 * value is only ever put into requests to the secret's hosts.
 *
 * Request rules. When any rule names the request's host (and port), the
 * method must be in one rule's list and the path — before '?', after
 * percent-decoding — must match its glob: '*' matches within a segment,
 * '**' across segments (also nothing), everything else itself. A path that
 * could be read two ways is refused rather than guessed: a "." or ".."
 * segment (raw or encoded), an empty segment ("//"), an encoded '/' or '\',
 * '\' itself, a NUL or control character, a malformed escape. A CONNECT to
 * such a host passes: the proxy intercepts it (ward_netpolicy_intercepts()),
 * and each request inside is judged here on its own.
 */
#ifndef WARD_NETRULES_H
#define WARD_NETRULES_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/error.h"
#include "ward/netpolicy.h"
#include "ward/proxy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest request body a secret is looked for in and replaced in, when
 * the policy has secrets: a bigger one is refused (413). */
#define WARD_NETRULES_BODY_MAX (1024 * 1024)
#define WARD_NETRULES_MAX_SECRETS 64
#define WARD_NETRULES_STANDIN_LEN 42 /* "wardsecret" + 32 hex digits */

struct ward_netrules;

/* The rules for a policy (which must outlive them): credentials expanded
 * with lookup (ward's own environment), each secret's real value read as
 * lookup(NAME) and its stand-in made. NULL with InvalidParameters naming
 * the variable when one is missing or has a control character, or the
 * credential; more than WARD_NETRULES_MAX_SECRETS secrets; ENOMEM. */
WARD_API struct ward_netrules *ward_netrules_new(const struct ward_netpolicy *policy,
						 const char *(*lookup)(const char *name),
						 struct ward_error **err);

WARD_API void ward_netrules_free(struct ward_netrules *r);

/* How many secrets, and "NAME=stand-in" for the i-th: the sandbox's
 * environment. The string is the rules'. */
WARD_API size_t ward_netrules_n_secrets(const struct ward_netrules *r);
WARD_API const char *ward_netrules_env(const struct ward_netrules *r, size_t i);

/* The i-th stand-in (tests). */
WARD_API const char *ward_netrules_standin(const struct ward_netrules *r, size_t i);

struct ward_netrules_verdict {
	bool allow;
	int status;                        /* a refusal's status: 400, 403, 413, 500 */
	char reason[WARD_NET_RULE_MAX];    /* a refusal's one line */
	char rule[WARD_NET_RULE_MAX];      /* "allow-request HOST METHODS GLOB", or "" */
	char secrets[WARD_NET_RULE_MAX];   /* names put in, comma-separated; or, refused,
					      the names carried */
	bool credential;                   /* an --inject-header header was added */
	char path[WARD_NET_PATH_MAX];      /* for the audit: the query's values "*" */
	bool need_body;                    /* allowed so far; give the body and ask again */
	struct ward_http_body framing;     /* how the client framed its body */
	char *out;                         /* head (and body, when given) to forward */
	size_t out_len;
};

/* The verdict on one parsed request (ward_http_parse_request) to req->host:
 * head is the buffer req was parsed from; body[0..body_len) the client's
 * whole body as it framed it (chunked or not) when body_given. CONNECT:
 * only the checks (no out). Without body_given, a request with a body when
 * the policy has secrets comes back allowed with need_body (out NULL): the
 * caller collects the body (up to WARD_NETRULES_BODY_MAX once de-chunked,
 * else it refuses 413) and asks again with it. Returns 0, or -1 when out of
 * memory (v->allow false, status 500). v is the caller's; release it. */
WARD_API int ward_netrules_request(const struct ward_netrules *r,
				   const struct ward_http_request *req, const char *head,
				   const char *body, size_t body_len, bool body_given,
				   struct ward_netrules_verdict *v);

WARD_API void ward_netrules_verdict_release(struct ward_netrules_verdict *v);

/* Pieces, for tests and for the TLS side. */

/* Whether path (no query) matches glob (see above). */
WARD_API bool ward_netrules_glob(const char *glob, const char *path);

/* The percent-decoded path of target[0..len) (up to '?' or '#') into out.
 * Returns NULL, or what makes it ambiguous (see above), one line. */
WARD_API const char *ward_netrules_path(const char *target, size_t len, char *out,
					size_t size);

/* target[0..len) with each query value replaced by '*', into out. */
WARD_API void ward_netrules_redact(const char *target, size_t len, char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif
