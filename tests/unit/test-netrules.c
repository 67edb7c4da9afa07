/* test-netrules.c — secrets, request rules and their verdicts on requests
 * (ward/netrules.h): parsing, globs, paths, stand-ins in every place and
 * form a hostile command may try; pure code. */
#include "harness.h"
#include "ward/netpolicy.h"
#include "ward/netrules.h"
#include "ward/policy.h"
#include "ward/proxy.h"
#include "ward/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REAL_TOKEN "REAL-token-value-123"
#define REAL_GH "ghp_REALgithubVALUE"

static const char *lookup(const char *name)
{
	if (strcmp(name, "TOKEN") == 0)
		return REAL_TOKEN;
	if (strcmp(name, "GH") == 0)
		return REAL_GH;
	if (strcmp(name, "API") == 0)
		return "api-key-1";
	if (strcmp(name, "CRLF") == 0)
		return "abc\r\nX-Evil: 1";
	if (strcmp(name, "SPACE") == 0)
		return "has space";
	return NULL;
}

static void must(int rc, struct ward_error *err, const char *what)
{
	ck_assert_msg(rc == 0, "%s: %s", what, err ? err->message : "");
}

/* TOKEN for api.example.com and 127.0.0.1:8080, GH for *.github.com,
 * read-only rules for api.github.com, a credential for api.example.com. */
static void policy(struct ward_netpolicy *p)
{
	struct ward_error *err = NULL;

	ward_netpolicy_init(p);
	must(ward_netpolicy_add_secret(p, "TOKEN=api.example.com,127.0.0.1:8080", &err), err,
	     "secret");
	must(ward_netpolicy_add_secret(p, "GH=*.github.com", &err), err, "secret");
	must(ward_netpolicy_add_request(p, "api.github.com GET,head /repos/**", &err), err, "rule");
	must(ward_netpolicy_add_request(p, "api.github.com POST /repos/*/*/issues", &err), err,
	     "rule");
	must(ward_netpolicy_add_credential(p, "api.example.com=X-Api: ${API}", &err), err, "cred");
}

struct t {
	struct ward_netpolicy p;
	struct ward_netrules *r;
	char tok[64], gh[64];
};

static void setup(struct t *t)
{
	struct ward_error *err = NULL;

	policy(&t->p);
	t->r = ward_netrules_new(&t->p, lookup, &err);
	ck_assert_msg(t->r, "%s", err ? err->message : "");
	snprintf(t->tok, sizeof(t->tok), "%s", ward_netrules_standin(t->r, 0));
	snprintf(t->gh, sizeof(t->gh), "%s", ward_netrules_standin(t->r, 1));
}

static void teardown(struct t *t)
{
	ward_netrules_free(t->r);
	ward_netpolicy_release(&t->p);
}

/* The verdict on a request head (and body), the real values kept out of
 * anything a record or a refusal shows. */
static void verdict(struct t *t, const char *head, const char *body, size_t blen, bool given,
		    struct ward_netrules_verdict *v)
{
	struct ward_http_request req;
	char reason[256];
	int status;

	ck_assert_int_eq(ward_http_parse_request(head, strlen(head), &req, &status, reason,
						 sizeof(reason)),
			 1);
	ck_assert_int_eq(ward_netrules_request(t->r, &req, head, body, blen, given, v), 0);
	ck_assert(!strstr(v->reason, REAL_TOKEN) && !strstr(v->secrets, REAL_TOKEN));
	ck_assert(!strstr(v->path, REAL_TOKEN));
}

static int ward_policy_apply_text(struct ward_config *cfg, const char *text, const char *origin,
				  struct ward_error **err)
{
	return ward_policy_apply(text, strlen(text), origin, cfg, err);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	static char buf[8][4096];
	static int k;
	va_list ap;
	char *b = buf[k++ % 8];

	va_start(ap, f);
	vsnprintf(b, sizeof(buf[0]), f, ap);
	va_end(ap);
	return b;
}

static void expect_refused(struct t *t, const char *head, const char *name)
{
	struct ward_netrules_verdict v;

	verdict(t, head, NULL, 0, false, &v);
	ck_assert_msg(!v.allow, "allowed: %s", head);
	ck_assert_int_eq(v.status, 403);
	ck_assert_msg(strstr(v.reason, name), "%s: '%s'", head, v.reason);
	ck_assert_ptr_null(v.out);
	ward_netrules_verdict_release(&v);
}

START_TEST(test_parse)
{
	static const struct {
		const char *spec, *needle;
	} bad_secrets[] = {
		{ "TOKEN", "is not NAME=HOST" },
		{ "=a.com", "is not NAME=HOST" },
		{ "TOKEN=", "is not NAME=HOST" },
		{ "1X=a.com", "is not a variable name" },
		{ "A-B=a.com", "is not a variable name" },
		{ "T=a.com,", "an empty host" },
		{ "T=a.com,,b.com", "an empty or too long host" },
		{ "T=http://a.com", "secret 'T'" },
		{ "T=a.com:99999", "port must be" },
	};
	static const struct {
		const char *spec, *needle;
	} bad_rules[] = {
		{ "api.github.com GET", "is not 'HOST METHOD[,METHOD] PATHGLOB'" },
		{ "api.github.com GET /a extra", "too many fields" },
		{ "api.github.com GET repos", "must start with '/'" },
		{ "api.github.com GET /a?b", "may not have '?'" },
		{ "api.github.com GET /a/%2e", "may not have '?', '#', '%'" },
		{ "api.github.com GET /a/../b", "'.' or '..' segment" },
		{ "api.github.com GET /a/./b", "'.' or '..' segment" },
		{ "api.github.com GET //a", "empty segment" },
		{ "api.github.com GET /a/***", "'*' comes alone" },
		{ "api.github.com G/T /a", "is not a method" },
		{ "api.github.com GET,,HEAD /a", "an empty or too long method" },
		{ "not a host! GET /a", "is not 'HOST" },
		{ "ex ample.com GET /a", "too many fields" },
		{ "a.com:0 GET /a", "port must be" },
		{ "a.com GET /*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/**", "more than 16" },
	};
	struct ward_netpolicy p;
	struct ward_error *err = NULL;
	char rule[WARD_NET_RULE_MAX];
	size_t i;

	for (i = 0; i < sizeof(bad_secrets) / sizeof(bad_secrets[0]); i++) {
		ward_netpolicy_init(&p);
		ck_assert_msg(ward_netpolicy_add_secret(&p, bad_secrets[i].spec, &err) < 0, "%s",
			      bad_secrets[i].spec);
		ck_assert_msg(strstr(err->message, bad_secrets[i].needle), "%s: %s",
			      bad_secrets[i].spec, err->message);
		ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
		ward_error_free(err);
		err = NULL;
		ward_netpolicy_release(&p);
	}
	for (i = 0; i < sizeof(bad_rules) / sizeof(bad_rules[0]); i++) {
		ward_netpolicy_init(&p);
		ck_assert_msg(ward_netpolicy_add_request(&p, bad_rules[i].spec, &err) < 0, "%s",
			      bad_rules[i].spec);
		ck_assert_msg(strstr(err->message, bad_rules[i].needle), "%s: %s",
			      bad_rules[i].spec, err->message);
		ward_error_free(err);
		err = NULL;
		ward_netpolicy_release(&p);
	}
	/* good ones: their hosts are allowed hosts; intercepts() names them */
	policy(&p);
	ck_assert_uint_eq(p.n_secrets, 2);
	ck_assert_uint_eq(p.secrets[0].n_hosts, 2);
	ck_assert_str_eq(p.requests[0].methods[1], "HEAD");
	ck_assert_str_eq(p.requests[0].text, "api.github.com GET,head /repos/**");
	ck_assert(ward_netpolicy_check_host(&p, "api.example.com", 443, rule, sizeof(rule)));
	ck_assert(ward_netpolicy_check_host(&p, "x.github.com", 443, rule, sizeof(rule)));
	ck_assert(ward_netpolicy_check_host(&p, "127.0.0.1", 8080, rule, sizeof(rule)));
	ck_assert(!ward_netpolicy_check_host(&p, "example.org", 443, rule, sizeof(rule)));
	ck_assert(ward_netpolicy_intercepts(&p, "api.example.com"));
	ck_assert(ward_netpolicy_intercepts(&p, "uploads.github.com"));
	ck_assert(ward_netpolicy_intercepts(&p, "api.github.com"));
	ck_assert(!ward_netpolicy_intercepts(&p, "github.com"));
	ck_assert(!ward_netpolicy_intercepts(&p, "example.org"));
	/* the policy file's parts form adds hosts to one secret */
	must(ward_netpolicy_add_secret_host(&p, "TOKEN", "b.example.com", &err), err, "parts");
	ck_assert_uint_eq(p.n_secrets, 2);
	ck_assert_uint_eq(p.secrets[0].n_hosts, 3);
	{
		struct ward_netpolicy c;

		must(ward_netpolicy_copy(&c, &p, &err), err, "copy");
		ck_assert_uint_eq(c.n_requests, 2);
		ck_assert_str_eq(c.secrets[1].name, "GH");
		ward_netpolicy_release(&c);
	}
	ward_netpolicy_release(&p);
	/* only an --inject-header host, too */
	ward_netpolicy_init(&p);
	must(ward_netpolicy_add_credential(&p, "h.example=X: v", &err), err, "cred");
	ck_assert(ward_netpolicy_intercepts(&p, "h.example"));
	ward_netpolicy_release(&p);
}
END_TEST

START_TEST(test_values)
{
	struct ward_netpolicy p;
	struct ward_error *err = NULL;
	struct ward_netrules *r;

	ward_netpolicy_init(&p);
	must(ward_netpolicy_add_secret(&p, "MISSING=a.example", &err), err, "secret");
	ck_assert_ptr_null(ward_netrules_new(&p, lookup, &err));
	ck_assert_msg(strstr(err->message, "'MISSING' is not set"), "%s", err->message);
	ward_error_free(err);
	err = NULL;
	ward_netpolicy_release(&p);
	/* a value with CR/LF would let the real value carry headers of its own */
	ward_netpolicy_init(&p);
	must(ward_netpolicy_add_secret(&p, "CRLF=a.example", &err), err, "secret");
	ck_assert_ptr_null(ward_netrules_new(&p, lookup, &err));
	ck_assert_msg(strstr(err->message, "control character"), "%s", err->message);
	ward_error_free(err);
	err = NULL;
	ward_netpolicy_release(&p);
	/* stand-ins: recognisable, random, in the environment */
	policy(&p);
	r = ward_netrules_new(&p, lookup, &err);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(ward_netrules_n_secrets(r), 2);
	ck_assert_int_eq(strncmp(ward_netrules_standin(r, 0), "wardsecret", 10), 0);
	ck_assert_uint_eq(strlen(ward_netrules_standin(r, 0)), WARD_NETRULES_STANDIN_LEN);
	ck_assert_str_ne(ward_netrules_standin(r, 0), ward_netrules_standin(r, 1));
	ck_assert_int_eq(strncmp(ward_netrules_env(r, 0), "TOKEN=wardsecret", 16), 0);
	{
		struct ward_netrules *r2 = ward_netrules_new(&p, lookup, &err);

		ck_assert_str_ne(ward_netrules_standin(r, 0), ward_netrules_standin(r2, 0));
		ward_netrules_free(r2);
	}
	ward_netrules_free(r);
	ward_netpolicy_release(&p);
}
END_TEST

START_TEST(test_globs)
{
	static const struct {
		const char *glob, *path;
		bool match;
	} cases[] = {
		{ "/repos/**", "/repos/a/b/c", true },
		{ "/repos/**", "/repos/", true },
		{ "/repos/**", "/repos", false },
		{ "/repos/**", "/reposx/a", false },
		{ "/repos/*", "/repos/a", true },
		{ "/repos/*", "/repos/a/b", false },
		{ "/repos/*", "/repos/", true },
		{ "/repos/*/*/issues", "/repos/o/r/issues", true },
		{ "/repos/*/*/issues", "/repos/o/r/x/issues", false },
		{ "/repos/*/*/issues", "/repos/o/r/issues/1", false },
		{ "/a/**/z", "/a/z", false },
		{ "/a/**/z", "/a/b/z", true },
		{ "/a/**/z", "/a/b/c/d/z", true },
		{ "/a**", "/abc/d", true },
		{ "/*.tar.gz", "/x.tar.gz", true },
		{ "/*.tar.gz", "/d/x.tar.gz", false },
		{ "/exact", "/exact", true },
		{ "/exact", "/exact/", false },
		{ "/exact", "/Exact", false },
		{ "/**", "/", true },
		{ "/**", "/anything/at/all", true },
		{ "/*", "/", true },
		{ "/x/*/y/**/*.json", "/x/1/y/a/b/c.json", true },
		{ "/x/*/y/**/*.json", "/x/1/2/y/c.json", false },
	};
	size_t i;
	char many[3000];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(ward_netrules_glob(cases[i].glob, cases[i].path) == cases[i].match,
			      "%s ~ %s", cases[i].glob, cases[i].path);
	/* the matcher's memo keeps a hostile glob and path linear enough */
	memset(many, 'a', sizeof(many) - 2);
	many[0] = '/';
	many[sizeof(many) - 2] = 'b';
	many[sizeof(many) - 1] = '\0';
	ck_assert(!ward_netrules_glob("/**a**a**a**a**a**a**a**c", many));
	ck_assert(ward_netrules_glob("/**a**a**a**a**a**a**a**b", many));
}
END_TEST

START_TEST(test_paths)
{
	static const struct {
		const char *target, *decoded, *problem;
	} cases[] = {
		{ "/repos/a/b", "/repos/a/b", NULL },
		{ "/repos/a/b?x=/../..", "/repos/a/b", NULL },
		{ "/%72epos/a", "/repos/a", NULL },
		{ "/a%20b", "/a b", NULL },
		{ "?q=1", "/", NULL },
		{ "/repos/../admin", NULL, "'.' or '..' segment" },
		{ "/repos/..", NULL, "'.' or '..' segment" },
		{ "/repos/./x", NULL, "'.' or '..' segment" },
		{ "/repos/%2e%2e/admin", NULL, "'.' or '..' segment" },
		{ "/repos/%2E%2e/admin", NULL, "'.' or '..' segment" },
		{ "/repos/.%2e/admin", NULL, "'.' or '..' segment" },
		{ "/repos//admin", NULL, "empty segment" },
		{ "/repos/a%2fb", NULL, "encoded '/'" },
		{ "/repos/a%2Fb", NULL, "encoded '/'" },
		{ "/repos/a%5cb", NULL, "encoded '/' or '\\'" },
		{ "/repos/a\\b", NULL, "a '\\'" },
		{ "/repos/%252e%252e/x", NULL, "double encoding" },
		{ "/repos/%00", NULL, "control character" },
		{ "/repos/%zz", NULL, "malformed" },
		{ "/repos/%2", NULL, "malformed" },
		{ "/repos/%", NULL, "malformed" },
		{ "*", NULL, "does not start with '/'" },
	};
	char out[1024];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = ward_netrules_path(cases[i].target, strlen(cases[i].target), out,
						     sizeof(out));

		if (cases[i].problem) {
			ck_assert_msg(why && strstr(why, cases[i].problem), "%s: %s",
				      cases[i].target, why ? why : "(accepted)");
		} else {
			ck_assert_msg(!why, "%s: %s", cases[i].target, why);
			ck_assert_str_eq(out, cases[i].decoded);
		}
	}
	ward_netrules_redact("/s?q=secret&page=2&flag#frag", 28, out, sizeof(out));
	ck_assert_str_eq(out, "/s?q=*&page=*&*");
	ward_netrules_redact("/plain", 6, out, sizeof(out));
	ck_assert_str_eq(out, "/plain");
	ward_netrules_redact("?k=v", 4, out, sizeof(out));
	ck_assert_str_eq(out, "/?k=*");
}
END_TEST

START_TEST(test_substitution)
{
	struct t t;
	struct ward_netrules_verdict v;

	setup(&t);
	/* to its host: in the query, a header, a Basic credential */
	verdict(&t,
		fmt("GET http://api.example.com/x?key=%s HTTP/1.1\r\nX-Token: Bearer %s\r\n"
		    "Proxy-Authorization: drop\r\n\r\n",
		    t.tok, t.tok),
		NULL, 0, false, &v);
	ck_assert(v.allow);
	ck_assert_str_eq(v.secrets, "TOKEN");
	ck_assert(v.credential);
	ck_assert_str_eq(v.path, "/x?key=*");
	ck_assert_ptr_nonnull(v.out);
	ck_assert(strstr(v.out, "GET /x?key=" REAL_TOKEN " HTTP/1.1\r\n"));
	ck_assert(strstr(v.out, "X-Token: Bearer " REAL_TOKEN "\r\n"));
	ck_assert(strstr(v.out, "X-Api: api-key-1\r\n"));
	ck_assert(!strstr(v.out, t.tok));
	ward_netrules_verdict_release(&v);
	/* the listed IP literal and port */
	verdict(&t, fmt("GET http://127.0.0.1:8080/?t=%s HTTP/1.1\r\n\r\n", t.tok), NULL, 0,
		false, &v);
	ck_assert(v.allow);
	ck_assert(strstr(v.out, "GET /?t=" REAL_TOKEN " "));
	ward_netrules_verdict_release(&v);
	/* git's way: Basic x-access-token:STAND-IN */
	{
		static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		char plain[128], enc[256];
		size_t n, i, k = 0;

		n = (size_t)snprintf(plain, sizeof(plain), "x-access-token:%s", t.gh);
		for (i = 0; i < n; i += 3) {
			unsigned v3 = (unsigned char)plain[i] << 16 |
				      (i + 1 < n ? (unsigned char)plain[i + 1] << 8 : 0) |
				      (i + 2 < n ? (unsigned char)plain[i + 2] : 0);

			enc[k++] = b64[v3 >> 18 & 63];
			enc[k++] = b64[v3 >> 12 & 63];
			enc[k++] = i + 1 < n ? b64[v3 >> 6 & 63] : '=';
			enc[k++] = i + 2 < n ? b64[v3 & 63] : '=';
		}
		enc[k] = '\0';
		verdict(&t, fmt("GET http://codeload.github.com/a HTTP/1.1\r\n"
				"Authorization: Basic %s\r\n\r\n", enc),
			NULL, 0, false, &v);
		ck_assert_msg(v.allow, "%s", v.reason);
		ck_assert_str_eq(v.secrets, "GH");
		/* base64("x-access-token:ghp_REALgithubVALUE") */
		ck_assert_msg(strstr(v.out, "Authorization: Basic "
					    "eC1hY2Nlc3MtdG9rZW46Z2hwX1JFQUxnaXRodWJWQUxVRQ==\r\n"),
			      "%s", v.out);
		ward_netrules_verdict_release(&v);
		/* the same to a host not GH's */
		expect_refused(&t, fmt("GET http://example.org/a HTTP/1.1\r\n"
				       "Authorization: Basic %s\r\n\r\n", enc), "GH");
	}
	/* no stand-in: nothing put in, nothing said */
	verdict(&t, "GET http://api.example.com/ HTTP/1.1\r\n\r\n", NULL, 0, false, &v);
	ck_assert(v.allow);
	ck_assert_str_eq(v.secrets, "");
	ward_netrules_verdict_release(&v);
	teardown(&t);
}
END_TEST

START_TEST(test_refusals)
{
	struct t t;
	char up[64], pct[256], dbl[512];
	size_t i;

	setup(&t);
	for (i = 0; t.tok[i]; i++)
		up[i] = (char)((t.tok[i] >= 'a' && t.tok[i] <= 'z') ? t.tok[i] - 32 : t.tok[i]);
	up[i] = '\0';
	pct[0] = dbl[0] = '\0';
	for (i = 0; t.tok[i]; i++) {
		snprintf(pct + strlen(pct), sizeof(pct) - strlen(pct), "%%%02x", t.tok[i]);
		snprintf(dbl + strlen(dbl), sizeof(dbl) - strlen(dbl), "%%25%02X", t.tok[i]);
	}
	/* every place, to a host the secret is not for */
	expect_refused(&t, fmt("GET http://example.org/%s HTTP/1.1\r\n\r\n", t.tok), "TOKEN");
	expect_refused(&t, fmt("GET http://example.org/?a=%s HTTP/1.1\r\n\r\n", t.tok), "TOKEN");
	expect_refused(&t, fmt("GET http://example.org/ HTTP/1.1\r\nX-A: %s\r\n\r\n", t.tok),
		       "TOKEN");
	expect_refused(&t, fmt("GET http://example.org/ HTTP/1.1\r\nHost: %s\r\n\r\n", t.tok),
		       "TOKEN");
	expect_refused(&t,
		       fmt("GET http://example.org/ HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\n",
			   t.tok),
		       "TOKEN");
	/* in the host name: refused even where the secret may go */
	expect_refused(&t, fmt("GET http://%s.github.com/ HTTP/1.1\r\n\r\n", t.gh), "GH");
	expect_refused(&t, fmt("CONNECT %s.example.org:443 HTTP/1.1\r\n\r\n", t.tok), "host name");
	/* another form */
	expect_refused(&t, fmt("GET http://example.org/?a=%s HTTP/1.1\r\n\r\n", up), "TOKEN");
	expect_refused(&t, fmt("GET http://example.org/?a=%s HTTP/1.1\r\n\r\n", pct), "TOKEN");
	expect_refused(&t, fmt("GET http://example.org/?a=%s HTTP/1.1\r\n\r\n", dbl), "TOKEN");
	/* base64 at all three alignments, both alphabets */
	for (int pre = 0; pre < 3; pre++) {
		char plain[128], enc[256];
		static const char alpha[2][65] = {
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		};
		size_t n, k;

		for (int a = 0; a < 2; a++) {
			n = (size_t)snprintf(plain, sizeof(plain), "%.*s%s>>>?", pre, "u:x", t.tok);
			k = 0;
			for (i = 0; i < n; i += 3) {
				unsigned v3 = (unsigned char)plain[i] << 16 |
					      (i + 1 < n ? (unsigned char)plain[i + 1] << 8 : 0) |
					      (i + 2 < n ? (unsigned char)plain[i + 2] : 0);

				enc[k++] = alpha[a][v3 >> 18 & 63];
				enc[k++] = alpha[a][v3 >> 12 & 63];
				enc[k++] = alpha[a][v3 >> 6 & 63];
				enc[k++] = alpha[a][v3 & 63];
			}
			enc[k] = '\0';
			expect_refused(&t, fmt("GET http://example.org/ HTTP/1.1\r\nX: %s\r\n\r\n",
					       enc), "TOKEN");
		}
	}
	/* to the secret's host by another name: an IP literal, another port */
	expect_refused(&t, fmt("GET http://93.184.216.34/?a=%s HTTP/1.1\r\n\r\n", t.tok), "TOKEN");
	expect_refused(&t, fmt("GET http://127.0.0.1:8081/?a=%s HTTP/1.1\r\n\r\n", t.tok), "TOKEN");
	expect_refused(&t, fmt("GET http://api.example.com.evil.org/?a=%s HTTP/1.1\r\n\r\n",
			       t.tok), "TOKEN");
	/* GH's host, TOKEN's stand-in */
	expect_refused(&t, fmt("GET http://api.github.com/repos/a?t=%s HTTP/1.1\r\n\r\n", t.tok),
		       "TOKEN");
	/* a CONNECT line's headers (the tunnel would not carry them, but the
	 * command tried) */
	expect_refused(&t, fmt("CONNECT example.org:443 HTTP/1.1\r\nX: %s\r\n\r\n", t.tok),
		       "TOKEN");
	{
		struct ward_netrules_verdict v;

		verdict(&t, fmt("CONNECT api.example.com:443 HTTP/1.1\r\nX: %s\r\n\r\n", t.tok),
			NULL, 0, false, &v);
		ck_assert(v.allow);
		ck_assert_ptr_null(v.out);
		ward_netrules_verdict_release(&v);
		/* the record names the secret, never its value */
		verdict(&t, fmt("GET http://example.org/?a=%s HTTP/1.1\r\n\r\n", t.tok), NULL, 0,
			false, &v);
		ck_assert_str_eq(v.secrets, "TOKEN");
		ck_assert(strstr(v.reason, "secret TOKEN carried to example.org"));
		ward_netrules_verdict_release(&v);
	}
	teardown(&t);
}
END_TEST

START_TEST(test_bodies)
{
	struct t t;
	struct ward_netrules_verdict v;
	char head[512], body[512];

	setup(&t);
	/* to the secret's host: first the head, then the whole body */
	snprintf(body, sizeof(body), "{\"token\": \"%s\"}", t.tok);
	snprintf(head, sizeof(head),
		 "POST http://api.example.com/p HTTP/1.1\r\nContent-Length: %zu\r\n\r\n",
		 strlen(body));
	verdict(&t, head, NULL, 0, false, &v);
	ck_assert(v.allow && v.need_body);
	ck_assert_ptr_null(v.out);
	ward_netrules_verdict_release(&v);
	verdict(&t, head, body, strlen(body), true, &v);
	ck_assert(v.allow && !v.need_body);
	ck_assert_str_eq(v.secrets, "TOKEN");
	ck_assert_msg(strstr(v.out, fmt("Content-Length: %zu\r\n",
					strlen("{\"token\": \"" REAL_TOKEN "\"}"))),
		      "%s", v.out);
	ck_assert(strstr(v.out, "\r\n\r\n{\"token\": \"" REAL_TOKEN "\"}"));
	ck_assert(!strstr(v.out, t.tok));
	ward_netrules_verdict_release(&v);
	/* elsewhere */
	snprintf(head, sizeof(head),
		 "POST http://example.org/p HTTP/1.1\r\nContent-Length: %zu\r\n\r\n", strlen(body));
	verdict(&t, head, body, strlen(body), true, &v);
	ck_assert(!v.allow);
	ck_assert_int_eq(v.status, 403);
	ck_assert_str_eq(v.secrets, "TOKEN");
	ward_netrules_verdict_release(&v);
	/* chunked, the stand-in split across chunks */
	snprintf(body, sizeof(body), "5\r\nab%.3s\r\n%zx\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n", t.tok,
		 strlen(t.tok) - 3, t.tok + 3);
	verdict(&t, "POST http://example.org/p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		body, strlen(body), true, &v);
	ck_assert(!v.allow);
	ck_assert_str_eq(v.secrets, "TOKEN");
	ward_netrules_verdict_release(&v);
	verdict(&t, "POST http://api.example.com/p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		body, strlen(body), true, &v);
	ck_assert_msg(v.allow, "%s", v.reason);
	ck_assert(strstr(v.out, fmt("Content-Length: %zu\r\n", 2 + strlen(REAL_TOKEN))));
	ck_assert(!strstr(v.out, "Transfer-Encoding"));
	ck_assert(!strstr(v.out, "X-Trailer"));
	ck_assert(strstr(v.out, "\r\n\r\nab" REAL_TOKEN));
	ward_netrules_verdict_release(&v);
	/* too big to look into: refused up front */
	verdict(&t, "POST http://api.example.com/p HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n",
		NULL, 0, false, &v);
	ck_assert(!v.allow);
	ck_assert_int_eq(v.status, 413);
	ward_netrules_verdict_release(&v);
	/* what the head rewriter refuses, refused with its reason */
	verdict(&t, "POST http://example.org/p HTTP/1.1\r\nContent-Length: 3\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", NULL, 0, false, &v);
	ck_assert(!v.allow);
	ck_assert_int_eq(v.status, 400);
	ck_assert_str_eq(v.reason, "both Content-Length and Transfer-Encoding");
	ward_netrules_verdict_release(&v);
	/* no secret in it: the body goes unchanged; the proxy answered the
	 * Expect itself */
	verdict(&t, "POST http://api.example.com/p HTTP/1.1\r\nContent-Length: 3\r\n"
		    "Expect: 100-continue\r\n\r\n", "abc", 3, true, &v);
	ck_assert(v.allow);
	ck_assert(strstr(v.out, "Content-Length: 3\r\n"));
	ck_assert(!strstr(v.out, "Expect"));
	ck_assert(strstr(v.out, "\r\n\r\nabc"));
	ward_netrules_verdict_release(&v);
	teardown(&t);
}
END_TEST

START_TEST(test_space_value)
{
	struct ward_netpolicy p;
	struct ward_error *err = NULL;
	struct ward_netrules *r;
	struct ward_netrules_verdict v;
	struct ward_http_request req;
	char head[256], reason[128];
	int status;

	ward_netpolicy_init(&p);
	must(ward_netpolicy_add_secret(&p, "SPACE=a.example", &err), err, "secret");
	r = ward_netrules_new(&p, lookup, &err);
	ck_assert_ptr_nonnull(r);
	snprintf(head, sizeof(head), "GET http://a.example/?k=%s HTTP/1.1\r\n\r\n",
		 ward_netrules_standin(r, 0));
	ck_assert_int_eq(ward_http_parse_request(head, strlen(head), &req, &status, reason,
						 sizeof(reason)), 1);
	ck_assert_int_eq(ward_netrules_request(r, &req, head, NULL, 0, false, &v), 0);
	ck_assert(!v.allow);
	ck_assert_int_eq(v.status, 400);
	ck_assert(strstr(v.reason, "has a space"));
	ward_netrules_verdict_release(&v);
	/* in a header it is fine */
	snprintf(head, sizeof(head), "GET http://a.example/ HTTP/1.1\r\nX: %s\r\n\r\n",
		 ward_netrules_standin(r, 0));
	ck_assert_int_eq(ward_http_parse_request(head, strlen(head), &req, &status, reason,
						 sizeof(reason)), 1);
	ck_assert_int_eq(ward_netrules_request(r, &req, head, NULL, 0, false, &v), 0);
	ck_assert(v.allow);
	ck_assert(strstr(v.out, "X: has space\r\n"));
	ward_netrules_verdict_release(&v);
	ward_netrules_free(r);
	ward_netpolicy_release(&p);
}
END_TEST

START_TEST(test_request_rules)
{
	static const struct {
		const char *line;
		bool allow;
		const char *needle; /* in the rule or the reason */
	} cases[] = {
		{ "GET http://api.github.com/repos/a/b HTTP/1.1", true,
		  "allow-request api.github.com GET,head /repos/**" },
		{ "HEAD http://api.github.com/repos/a/b?x=1 HTTP/1.1", true, "allow-request" },
		{ "GET http://api.github.com/repos/ HTTP/1.1", true, "allow-request" },
		{ "POST http://api.github.com/repos/o/r/issues HTTP/1.1", true,
		  "POST /repos/*/*/issues" },
		{ "POST http://api.github.com/repos/o/r/pulls HTTP/1.1", false,
		  "POST /repos/o/r/pulls matches no --allow-request rule for api.github.com" },
		{ "DELETE http://api.github.com/repos/a/b HTTP/1.1", false, "matches no" },
		{ "get http://api.github.com/repos/a/b HTTP/1.1", false, "matches no" },
		{ "GET http://api.github.com/user HTTP/1.1", false, "GET /user matches no" },
		{ "GET http://api.github.com/repos HTTP/1.1", false, "matches no" },
		{ "GET http://api.github.com/ HTTP/1.1", false, "matches no" },
		{ "GET http://api.github.com?q HTTP/1.1", false, "GET / matches no" },
		{ "GET http://api.github.com/repos/../user HTTP/1.1", false, "'..' segment" },
		{ "GET http://api.github.com/repos/%2e%2e/user HTTP/1.1", false, "'..' segment" },
		{ "GET http://api.github.com/repos/a%2f..%2f..%2fuser HTTP/1.1", false,
		  "encoded '/'" },
		{ "GET http://api.github.com/repos//user HTTP/1.1", false, "empty segment" },
		{ "GET http://api.github.com/%72epos/a HTTP/1.1", true, "allow-request" },
		{ "GET http://API.GITHUB.COM./repos/a HTTP/1.1", true, "allow-request" },
		/* intercepted: each request inside is judged */
		{ "CONNECT api.github.com:443 HTTP/1.1", true, "" },
		/* other hosts have no rules */
		{ "DELETE http://other.github.com/x HTTP/1.1", true, "" },
		{ "CONNECT other.github.com:443 HTTP/1.1", true, "" },
	};
	struct t t;
	size_t i;

	setup(&t);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ward_netrules_verdict v;

		verdict(&t, fmt("%s\r\n\r\n", cases[i].line), NULL, 0, false, &v);
		ck_assert_msg(v.allow == cases[i].allow, "%s: %s", cases[i].line, v.reason);
		ck_assert_msg(strstr(v.allow ? v.rule : v.reason, cases[i].needle), "%s: '%s'",
			      cases[i].line, v.allow ? v.rule : v.reason);
		if (!v.allow)
			ck_assert_int_eq(v.status, 403);
		ward_netrules_verdict_release(&v);
	}
	teardown(&t);
}
END_TEST

START_TEST(test_policy_keys)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;
	int rc;

	ward_config_init(&cfg);
	rc = ward_policy_apply_text(&cfg,
				    "{\"network\": {\"secrets\": {\"TOKEN\": [\"api.example.com\"]},"
				    " \"requests\": [\"api.github.com GET /repos/**\"]}}",
				    "test", &err);
	ck_assert_msg(rc == 0, "%s", err ? err->message : "");
	ck_assert_int_eq(cfg.net, WARD_NET_PROXY);
	ck_assert_uint_eq(cfg.netpolicy.n_secrets, 1);
	ck_assert_uint_eq(cfg.netpolicy.n_requests, 1);
	ward_config_release(&cfg);
	ward_config_init(&cfg);
	ck_assert_int_lt(ward_policy_apply_text(&cfg,
						"{\"network\": {\"requests\": [\"api GET x\"]}}",
						"test", &err), 0);
	ck_assert_msg(strstr(err->message, "network.requests[0]"), "%s", err->message);
	ward_error_free(err);
	err = NULL;
	ward_config_release(&cfg);
	ward_config_init(&cfg);
	ck_assert_int_lt(ward_policy_apply_text(&cfg,
						"{\"network\": {\"secrets\": {\"T\": \"a.com\"}}}",
						"test", &err), 0);
	ck_assert_msg(strstr(err->message, "network.secrets.T"), "%s", err->message);
	ward_error_free(err);
	ward_config_release(&cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netrules");
	TCase *tc = harness_tcase(s, "netrules", NULL);

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_globs);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_substitution);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_bodies);
	tcase_add_test(tc, test_space_value);
	tcase_add_test(tc, test_request_rules);
	tcase_add_test(tc, test_policy_keys);
	return harness_main(s);
}
