/* test-netpolicy.c — host rules, CIDRs, address classes, request heads,
 * chunked bodies, credential expansion; pure code. */
#include "harness.h"
#include "ward/netpolicy.h"
#include "ward/policy.h"
#include "ward/proxy.h"
#include "ward/sandbox.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(struct ward_netpolicy *p, bool deny, const char *spec)
{
	struct ward_error *err = NULL;

	ck_assert_msg(ward_netpolicy_add_host(p, deny, spec, &err) == 0, "%s: %s", spec,
		      err ? err->message : "");
}

static bool allowed(const struct ward_netpolicy *p, const char *host, uint16_t port, char *rule)
{
	char h[WARD_NET_HOST_MAX];
	bool literal;

	ck_assert_int_eq(ward_net_host_normalize(host, strlen(host), h, sizeof(h), &literal), 0);
	return ward_netpolicy_check_host(p, h, port, rule, WARD_NET_RULE_MAX);
}

START_TEST(test_host_rules)
{
	struct ward_netpolicy p;
	char rule[WARD_NET_RULE_MAX];

	ward_netpolicy_init(&p);
	add(&p, false, "Example.COM");
	add(&p, false, "*.example.org");
	add(&p, false, "api.example.net:8443");
	add(&p, false, "192.0.2.7");
	add(&p, false, "[2001:DB8::1]:443");
	add(&p, true, "evil.example.org");
	add(&p, true, "*.bad.example.org");

	ck_assert(allowed(&p, "example.com", 80, rule));
	ck_assert_str_eq(rule, "allow-host Example.COM");
	ck_assert(allowed(&p, "EXAMPLE.com.", 443, rule));
	ck_assert(!allowed(&p, "example.com", 8080, rule));
	ck_assert_str_eq(rule, "port 8080 not allowed for example.com");
	ck_assert(!allowed(&p, "www.example.com", 80, rule));
	ck_assert_str_eq(rule, "www.example.com not on the allowlist");
	ck_assert(!allowed(&p, "notexample.com", 80, rule));

	/* wildcards: below the domain only */
	ck_assert(allowed(&p, "a.example.org", 443, rule));
	ck_assert_str_eq(rule, "allow-host *.example.org");
	ck_assert(allowed(&p, "a.b.c.example.org", 80, rule));
	ck_assert(!allowed(&p, "example.org", 80, rule));
	ck_assert(!allowed(&p, "xexample.org", 80, rule));
	/* the denylist wins */
	ck_assert(!allowed(&p, "evil.example.org", 443, rule));
	ck_assert_str_eq(rule, "deny-host evil.example.org");
	ck_assert(!allowed(&p, "x.bad.example.org", 443, rule));
	ck_assert(allowed(&p, "bad.example.org", 443, rule));

	/* a port in the rule: that port only */
	ck_assert(allowed(&p, "api.example.net", 8443, rule));
	ck_assert(!allowed(&p, "api.example.net", 443, rule));

	/* IP literals: only when listed */
	ck_assert(allowed(&p, "192.0.2.7", 80, rule));
	ck_assert(!allowed(&p, "192.0.2.8", 80, rule));
	ck_assert_str_eq(rule, "IP literal 192.0.2.8 not listed");
	ck_assert(allowed(&p, "[2001:db8:0::1]", 443, rule));
	ck_assert(!allowed(&p, "[2001:db8::1]", 80, rule));

	/* extra ports apply to rules without a port */
	{
		struct ward_error *err = NULL;

		ck_assert_int_eq(ward_netpolicy_add_port(&p, "8080", &err), 0);
		ck_assert(allowed(&p, "example.com", 8080, rule));
		ck_assert_int_eq(ward_netpolicy_add_port(&p, "0", &err), -1);
		ck_assert_ptr_nonnull(strstr(err->message, "port '0'"));
		ward_error_free(err);
	}
	/* a CIDR lets IP literals in it through by name too */
	{
		struct ward_error *err = NULL;

		ck_assert_int_eq(ward_netpolicy_add_cidr(&p, "198.51.100.0/24", &err), 0);
		ck_assert(allowed(&p, "198.51.100.20", 80, rule));
		ck_assert_str_eq(rule, "allow-cidr 198.51.100.0/24");
	}
	{
		struct ward_netpolicy q;

		ck_assert_int_eq(ward_netpolicy_copy(&q, &p, NULL), 0);
		ward_netpolicy_release(&p);
		ck_assert(allowed(&q, "a.example.org", 443, rule));
		ward_netpolicy_release(&q);
	}
}
END_TEST

static void bad_rule(const char *spec, const char *needle)
{
	struct ward_netpolicy p;
	struct ward_error *err = NULL;

	ward_netpolicy_init(&p);
	ck_assert_msg(ward_netpolicy_add_host(&p, false, spec, &err) < 0, "accepted '%s'", spec);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_msg(strstr(err->message, needle), "'%s': %s", spec, err->message);
	ward_error_free(err);
	ward_netpolicy_release(&p);
}

START_TEST(test_bad_rules)
{
	bad_rule("", "empty");
	bad_rule("exa mple.com", "not a host name");
	bad_rule("example.com:0", "port must be 1 to 65535");
	bad_rule("example.com:99999", "port must be 1 to 65535");
	bad_rule("example.com:http", "port must be");
	bad_rule("a*.example.com", "not a host name");
	bad_rule("*.10.0.0.1", "needs a domain");
	bad_rule("2001:db8::1", "[ADDR]");
	bad_rule("[2001:db8::1", "unclosed");
	bad_rule("[nothing]", "not a host name");
	bad_rule("127.1", "not a host name"); /* inet_aton's shorthand */
	bad_rule("user@example.com", "not a host name");
}
END_TEST

static void sa4(struct sockaddr_storage *ss, const char *a)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = AF_INET;
	ck_assert_int_eq(inet_pton(AF_INET, a, &((struct sockaddr_in *)ss)->sin_addr), 1);
}

static void sa6(struct sockaddr_storage *ss, const char *a)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = AF_INET6;
	ck_assert_int_eq(inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)ss)->sin6_addr), 1);
}

static enum ward_addr_class cls(const char *a, const struct sockaddr_storage *own, size_t n)
{
	struct sockaddr_storage ss;

	if (strchr(a, ':'))
		sa6(&ss, a);
	else
		sa4(&ss, a);
	return ward_addr_classify((struct sockaddr *)&ss, own, n);
}

START_TEST(test_classes)
{
	struct sockaddr_storage own[2];

	sa4(&own[0], "203.0.113.9");
	sa6(&own[1], "2001:db8::9");
	ck_assert_int_eq(cls("93.184.216.34", NULL, 0), WARD_ADDR_PUBLIC);
	ck_assert_int_eq(cls("127.0.0.1", NULL, 0), WARD_ADDR_LOOPBACK);
	ck_assert_int_eq(cls("127.255.0.3", NULL, 0), WARD_ADDR_LOOPBACK);
	ck_assert_int_eq(cls("10.1.2.3", NULL, 0), WARD_ADDR_PRIVATE);
	ck_assert_int_eq(cls("172.16.0.1", NULL, 0), WARD_ADDR_PRIVATE);
	ck_assert_int_eq(cls("172.31.255.255", NULL, 0), WARD_ADDR_PRIVATE);
	ck_assert_int_eq(cls("172.32.0.1", NULL, 0), WARD_ADDR_PUBLIC);
	ck_assert_int_eq(cls("192.168.1.1", NULL, 0), WARD_ADDR_PRIVATE);
	ck_assert_int_eq(cls("100.64.0.1", NULL, 0), WARD_ADDR_PRIVATE);
	ck_assert_int_eq(cls("169.254.169.254", NULL, 0), WARD_ADDR_METADATA);
	ck_assert_int_eq(cls("169.254.1.1", NULL, 0), WARD_ADDR_LINK_LOCAL);
	ck_assert_int_eq(cls("224.0.0.1", NULL, 0), WARD_ADDR_MULTICAST);
	ck_assert_int_eq(cls("239.255.255.250", NULL, 0), WARD_ADDR_MULTICAST);
	ck_assert_int_eq(cls("0.0.0.0", NULL, 0), WARD_ADDR_UNSPECIFIED);
	ck_assert_int_eq(cls("255.255.255.255", NULL, 0), WARD_ADDR_RESERVED);
	ck_assert_int_eq(cls("0.1.2.3", NULL, 0), WARD_ADDR_RESERVED);
	ck_assert_int_eq(cls("203.0.113.9", own, 2), WARD_ADDR_OWN);
	ck_assert_int_eq(cls("203.0.113.10", own, 2), WARD_ADDR_PUBLIC);
	ck_assert_int_eq(cls("::1", NULL, 0), WARD_ADDR_LOOPBACK);
	ck_assert_int_eq(cls("::", NULL, 0), WARD_ADDR_UNSPECIFIED);
	ck_assert_int_eq(cls("fe80::1", NULL, 0), WARD_ADDR_LINK_LOCAL);
	ck_assert_int_eq(cls("fd12::1", NULL, 0), WARD_ADDR_PRIVATE);
	ck_assert_int_eq(cls("fd00:ec2::254", NULL, 0), WARD_ADDR_METADATA);
	ck_assert_int_eq(cls("ff02::1", NULL, 0), WARD_ADDR_MULTICAST);
	ck_assert_int_eq(cls("2606:4700::1", NULL, 0), WARD_ADDR_PUBLIC);
	ck_assert_int_eq(cls("2001:db8::9", own, 2), WARD_ADDR_OWN);
	/* IPv4 inside IPv6 is judged as IPv4 */
	ck_assert_int_eq(cls("::ffff:127.0.0.1", NULL, 0), WARD_ADDR_LOOPBACK);
	ck_assert_int_eq(cls("::ffff:169.254.169.254", NULL, 0), WARD_ADDR_METADATA);
	ck_assert_int_eq(cls("64:ff9b::10.0.0.1", NULL, 0), WARD_ADDR_PRIVATE);
	ck_assert_int_eq(cls("::ffff:203.0.113.9", own, 2), WARD_ADDR_OWN);
	ck_assert_str_eq(ward_addr_class_name(WARD_ADDR_METADATA), "metadata");
}
END_TEST

START_TEST(test_cidrs)
{
	struct ward_netpolicy p;
	struct ward_error *err = NULL;
	struct ward_cidr c;
	struct sockaddr_storage ss;
	char rule[WARD_NET_RULE_MAX];

	ck_assert_int_eq(ward_cidr_parse("10.1.2.3/8", &c, NULL), 0);
	ck_assert_str_eq(c.text, "10.0.0.0/8"); /* masked */
	ck_assert_int_eq(ward_cidr_parse("127.0.0.1", &c, NULL), 0);
	ck_assert_str_eq(c.text, "127.0.0.1/32");
	ck_assert_int_eq(ward_cidr_parse("fd00::/8", &c, NULL), 0);
	sa6(&ss, "fdff::1");
	ck_assert(ward_cidr_contains(&c, (struct sockaddr *)&ss));
	sa6(&ss, "fe00::1");
	ck_assert(!ward_cidr_contains(&c, (struct sockaddr *)&ss));
	ck_assert_int_eq(ward_cidr_parse("10.0.0.0/33", &c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "prefix must be 0 to 32"));
	ck_assert_int_eq(ward_cidr_parse("example.com/8", &c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "not an IPv4 or IPv6 address"));
	ward_error_free(err);

	ward_netpolicy_init(&p);
	sa4(&ss, "127.0.0.1");
	ck_assert(!ward_netpolicy_check_addr(&p, (struct sockaddr *)&ss, NULL, 0, rule, sizeof(rule)));
	ck_assert_str_eq(rule, "loopback address 127.0.0.1 (list it with --allow-cidr)");
	ck_assert_int_eq(ward_netpolicy_add_cidr(&p, "127.0.0.1/32", NULL), 0);
	ck_assert(ward_netpolicy_check_addr(&p, (struct sockaddr *)&ss, NULL, 0, rule, sizeof(rule)));
	ck_assert_str_eq(rule, "allow-cidr 127.0.0.1/32");
	sa6(&ss, "::ffff:127.0.0.1"); /* the mapped form is the same address */
	ck_assert(ward_netpolicy_check_addr(&p, (struct sockaddr *)&ss, NULL, 0, rule, sizeof(rule)));
	sa4(&ss, "127.0.0.2");
	ck_assert(!ward_netpolicy_check_addr(&p, (struct sockaddr *)&ss, NULL, 0, rule, sizeof(rule)));
	sa4(&ss, "93.184.216.34");
	ck_assert(ward_netpolicy_check_addr(&p, (struct sockaddr *)&ss, NULL, 0, rule, sizeof(rule)));
	ck_assert_str_eq(rule, "");
	ward_netpolicy_release(&p);
}
END_TEST

static int parse(const char *head, struct ward_http_request *r, int *status, char *reason)
{
	return ward_http_parse_request(head, strlen(head), r, status, reason, 256);
}

START_TEST(test_request_heads)
{
	struct ward_http_request r;
	char reason[256];
	int status = 0;

	ck_assert_int_eq(parse("GET http://Example.com/a?b HTTP/1.1\r\nHost: x\r\n", &r, &status,
			       reason), 0); /* not complete yet */
	ck_assert_int_eq(parse("GET http://Example.com/a?b HTTP/1.1\r\nHost: x\r\n\r\nBODY", &r,
			       &status, reason), 1);
	ck_assert_str_eq(r.method, "GET");
	ck_assert_str_eq(r.host, "example.com");
	ck_assert_int_eq(r.port, 80);
	ck_assert(!r.is_connect);
	ck_assert_int_eq((int)r.target_len, 4);
	ck_assert_int_eq(strncmp(r.target, "/a?b", 4), 0);
	ck_assert_int_eq(r.head_len, strlen("GET http://Example.com/a?b HTTP/1.1\r\nHost: x\r\n\r\n"));

	ck_assert_int_eq(parse("CONNECT api.example.com:8443 HTTP/1.1\r\n\r\n", &r, &status, reason), 1);
	ck_assert(r.is_connect);
	ck_assert_int_eq(r.port, 8443);
	ck_assert_int_eq(parse("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", &r, &status, reason), 1);
	ck_assert_str_eq(r.host, "2001:db8::1");
	ck_assert(r.literal);
	ck_assert_int_eq(parse("GET http://h:8080 HTTP/1.0\r\n\r\n", &r, &status, reason), 1);
	ck_assert_int_eq(r.port, 8080);
	ck_assert_int_eq(strncmp(r.target, "/", r.target_len), 0);

	ck_assert_int_eq(parse("CONNECT api.example.com HTTP/1.1\r\n\r\n", &r, &status, reason), -1);
	ck_assert_int_eq(status, 400);
	ck_assert_int_eq(parse("GET / HTTP/1.1\r\nHost: a\r\n\r\n", &r, &status, reason), -1);
	ck_assert_ptr_nonnull(strstr(reason, "absolute http:// URLs"));
	ck_assert_int_eq(parse("GET https://a/ HTTP/1.1\r\n\r\n", &r, &status, reason), -1);
	ck_assert_ptr_nonnull(strstr(reason, "CONNECT"));
	ck_assert_int_eq(parse("GET http://user@a/ HTTP/1.1\r\n\r\n", &r, &status, reason), -1);
	ck_assert_int_eq(parse("GET http://a:0/ HTTP/1.1\r\n\r\n", &r, &status, reason), -1);
	ck_assert_int_eq(parse("GET http://a/ HTTP/2.0\r\n\r\n", &r, &status, reason), -1);
	ck_assert_int_eq(parse("G(T http://a/ HTTP/1.1\r\n\r\n", &r, &status, reason), -1);
	{
		char *big = malloc(70000);

		memset(big, 'a', 69999);
		big[69999] = '\0';
		ck_assert_int_eq(ward_http_parse_request(big, 69999, &r, &status, reason, 256), -1);
		ck_assert_int_eq(status, 431);
		free(big);
	}
}
END_TEST

static char *forward(const char *head, const struct ward_http_header *add, size_t n_add,
		     struct ward_http_body *body, int *status, char *reason)
{
	struct ward_http_request r;
	size_t len;
	char *out;

	ck_assert_int_eq(ward_http_parse_request(head, strlen(head), &r, status, reason, 256), 1);
	out = ward_http_forward_head(head, &r, add, n_add, &len, body, status, reason, 256);
	if (out)
		ck_assert_uint_eq(len, strlen(out));
	return out;
}

START_TEST(test_forward_heads)
{
	struct ward_http_header add[] = { { "Authorization", "Bearer s3cret" } };
	struct ward_http_body body;
	char reason[256];
	int status;
	char *out;

	out = forward("POST http://api.example.com:8080/v1?x=1 HTTP/1.1\r\n"
		      "Host: evil.example\r\nUser-Agent: t\r\nConnection: keep-alive, X-Drop\r\n"
		      "Proxy-Connection: keep-alive\r\nKeep-Alive: 5\r\nX-Drop: 1\r\n"
		      "Proxy-Authorization: Basic eA==\r\nAuthorization: mine\r\nTE: trailers\r\n"
		      "Upgrade: h2c\r\nContent-Length: 5\r\n\r\nhello",
		      add, 1, &body, &status, reason);
	ck_assert_ptr_nonnull(out);
	ck_assert_str_eq(out, "POST /v1?x=1 HTTP/1.1\r\nHost: api.example.com:8080\r\nUser-Agent: t\r\n"
			      "Content-Length: 5\r\nAuthorization: Bearer s3cret\r\n"
			      "Connection: close\r\n\r\n");
	ck_assert(!body.chunked);
	ck_assert_uint_eq(body.length, 5);
	free(out);

	out = forward("PUT http://a/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", NULL, 0,
		      &body, &status, reason);
	ck_assert_ptr_nonnull(out);
	ck_assert(body.chunked);
	ck_assert_str_eq(out, "PUT /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
			      "Connection: close\r\n\r\n");
	free(out);

	ck_assert_ptr_null(forward("POST http://a/ HTTP/1.1\r\nContent-Length: 3\r\n"
				   "Transfer-Encoding: chunked\r\n\r\n", NULL, 0, &body, &status,
				   reason));
	ck_assert_int_eq(status, 400);
	ck_assert_ptr_null(forward("POST http://a/ HTTP/1.1\r\nContent-Length: 3\r\n"
				   "Content-Length: 4\r\n\r\n", NULL, 0, &body, &status, reason));
	ck_assert_ptr_null(forward("POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
				   NULL, 0, &body, &status, reason));
	ck_assert_int_eq(status, 501);
	ck_assert_ptr_null(forward("GET http://a/ HTTP/1.1\r\nno colon here\r\n\r\n", NULL, 0, &body,
				   &status, reason));
	/* a bare LF or CR splits a line for some servers, not for the proxy:
	 * a Transfer-Encoding it never saw would be smuggled past it */
	ck_assert_ptr_null(forward("POST http://a/ HTTP/1.1\r\nX-A: 1\nTransfer-Encoding: chunked\r\n"
				   "Content-Length: 3\r\n\r\n", NULL, 0, &body, &status, reason));
	ck_assert_int_eq(status, 400);
	ck_assert_str_eq(reason, "control character in the request head");
	ck_assert_ptr_null(forward("GET http://a/x\rY HTTP/1.1\r\n\r\n", NULL, 0, &body, &status,
				   reason));
	{
		static const char nul[] = "GET http://a/ HTTP/1.1\r\nX-A: a\0b\r\n\r\n";
		struct ward_http_request r;
		size_t len;

		ck_assert_int_eq(ward_http_parse_request(nul, sizeof(nul) - 1, &r, &status, reason,
							 256), 1);
		ck_assert_ptr_null(ward_http_forward_head(nul, &r, NULL, 0, &len, &body, &status,
							  reason, 256));
		ck_assert_str_eq(reason, "control character in the request head");
	}
}
END_TEST

/* Inside an intercepted connection: origin form only, the host the
 * CONNECT named; responses delimited as RFC 9112 says. */
START_TEST(test_intercepted_heads)
{
	static const char get[] = "GET /repos/x?q=1 HTTP/1.1\r\nHost: evil.example\r\n"
				  "Connection: keep-alive, close\r\n\r\nrest";
	struct ward_http_request r;
	struct ward_http_response rs;
	struct ward_netpolicy p;
	char reason[256];
	int status;

	ck_assert_int_eq(ward_http_parse_origin(get, strlen(get), "api.example.com", false, 443, &r,
						&status, reason, sizeof(reason)), 1);
	ck_assert_str_eq(r.host, "api.example.com");
	ck_assert_uint_eq(r.port, 443);
	ck_assert_uint_eq(r.head_len, strlen(get) - 4);
	ck_assert(ward_http_header_lists(get, r.head_len, "CONNECTION", "close"));
	ck_assert(!ward_http_header_lists(get, r.head_len, "connection", "upgrade"));
	ck_assert_int_eq(ward_http_parse_origin(get, 10, "a", false, 443, &r, &status, reason,
						sizeof(reason)), 0);
	ck_assert_int_eq(ward_http_parse_origin("GET http://b/ HTTP/1.1\r\n\r\n", 26, "a", false,
						443, &r, &status, reason, sizeof(reason)), -1);
	ck_assert_int_eq(status, 400);
	ck_assert_int_eq(ward_http_parse_origin("CONNECT b:443 HTTP/1.1\r\n\r\n", 27, "a", false,
						443, &r, &status, reason, sizeof(reason)), -1);
	ck_assert_int_eq(status, 405);

#define RESP(s, head) ward_http_parse_response(s, strlen(s), head, &rs, reason, sizeof(reason))
	ck_assert_int_eq(RESP("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", false), 1);
	ck_assert(rs.has_length && rs.length == 12 && !rs.close && !rs.chunked);
	ck_assert_int_eq(RESP("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", true), 1);
	ck_assert(!rs.has_length && !rs.until_close); /* HEAD: no body */
	ck_assert_int_eq(RESP("HTTP/1.1 204 No Content\r\n\r\n", false), 1);
	ck_assert(!rs.until_close);
	ck_assert_int_eq(RESP("HTTP/1.1 100 Continue\r\n\r\n", false), 1);
	ck_assert_int_eq(rs.status, 100);
	ck_assert_int_eq(RESP("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n"
			      "Content-Length: 3\r\n\r\n", false), 1);
	ck_assert(rs.chunked && rs.close); /* the length ignored, no reuse after */
	ck_assert_int_eq(RESP("HTTP/1.0 200 OK\r\n\r\n", false), 1);
	ck_assert(rs.until_close && rs.close);
	ck_assert_int_eq(RESP("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
			      false), 1);
	ck_assert(rs.close);
	ck_assert_int_eq(RESP("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
			      false), -1);
	ck_assert_int_eq(RESP("SSH-2.0-x\r\n\r\n", false), -1);
	ck_assert_int_eq(RESP("HTTP/1.1 200 OK\r\n", false), 0);
#undef RESP

	/* interception follows the credentials: exactly their hosts */
	ward_netpolicy_init(&p);
	ck_assert(!ward_netpolicy_intercepts_any(&p));
	ck_assert_int_eq(ward_netpolicy_add_credential(&p, "api.example.com=X-K: v", NULL), 0);
	ck_assert(ward_netpolicy_intercepts_any(&p));
	ck_assert(ward_netpolicy_intercepts(&p, "api.example.com"));
	ck_assert(!ward_netpolicy_intercepts(&p, "example.com"));
	ck_assert(!ward_netpolicy_intercepts(&p, "x.api.example.com"));
	ck_assert_int_eq(ward_netpolicy_set_upstream_ca(&p, "", NULL), -1);
	ck_assert_int_eq(ward_netpolicy_set_upstream_ca(&p, "/etc/corp-ca.pem", NULL), 0);
	{
		struct ward_netpolicy q;

		ck_assert_int_eq(ward_netpolicy_copy(&q, &p, NULL), 0);
		ck_assert_str_eq(q.upstream_ca, "/etc/corp-ca.pem");
		ward_netpolicy_release(&q);
	}
	ward_netpolicy_release(&p);
}
END_TEST

START_TEST(test_chunked)
{
	static const char body[] = "5;ext=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nT: v\r\n\r\nNEXT";
	struct ward_chunked c;
	size_t i, total = 0;
	bool done = false;

	/* fed whole */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ward_chunked_feed(&c, body, strlen(body), &done), (ssize_t)strlen(body) - 4);
	ck_assert(done);
	/* fed byte by byte */
	memset(&c, 0, sizeof(c));
	for (i = 0; i < strlen(body) && !done; i++) {
		ssize_t k = ward_chunked_feed(&c, body + i, 1, &done);

		ck_assert_int_ge(k, 0);
		total += (size_t)k;
	}
	done = false;
	memset(&c, 0, sizeof(c));
	for (i = 0, total = 0; i < strlen(body) && !done; i++)
		total += (size_t)ward_chunked_feed(&c, body + i, 1, &done);
	ck_assert(done);
	ck_assert_uint_eq(total, strlen(body) - 4);
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ward_chunked_feed(&c, "zz\r\n", 4, &done), -1);
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ward_chunked_feed(&c, "3\r\nabcX", 7, &done), -1);
}
END_TEST

/* A bare LF (or a NUL) in the trailer section or a chunk extension ends a
 * line for lenient servers (Go's net/http reads trailers with
 * ReadSlice('\n')) and not for this parser: "0\r\nX: y\n\n" would end the
 * body there for the server, and what follows — inside the body for the
 * proxy — would be a request of the sandbox's own on the kept upstream
 * connection. A prefix such as "POST /notes HTTP/1.1\r\nContent-Length:
 * 900\r\n\r\n" would then take the proxy's next forwarded head, with the
 * credential it adds, as its body: the token stored where the sandbox can
 * read it back. Every such body is refused. */
START_TEST(test_chunked_bare_lf)
{
#define B(x) { x, sizeof(x) - 1 }
	static const struct {
		const char *s;
		size_t n;
	} bad[] = {
		B("0\r\nX: y\n\nPOST /notes HTTP/1.1\nContent-Length: 900\n\n\r\n\r\n"),
		B("0\r\n\nGET /smuggled HTTP/1.1\r\n\r\n"),
		B("0\r\nX: a\nb\r\n\r\n"),
		B("0\r\nX: a\0b\r\n\r\n"),
		B("0\r\n\0\r\n\r\n"),
		B("5;a\0b\r\nhello\r\n0\r\n\r\n"),
	};
#undef B
	size_t i, j;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *b = bad[i].s;
		size_t n = bad[i].n;
		struct ward_chunked c;
		bool done = false;
		ssize_t k = 0;

		/* whole, and byte by byte: refused either way, never done */
		memset(&c, 0, sizeof(c));
		ck_assert_msg(ward_chunked_feed(&c, b, n, &done) == -1, "body %zu taken", i);
		ck_assert(!done);
		memset(&c, 0, sizeof(c));
		for (j = 0; j < n && k >= 0 && !done; j++)
			k = ward_chunked_feed(&c, b + j, 1, &done);
		ck_assert_msg(k == -1 && !done, "body %zu taken byte by byte", i);
	}
}
END_TEST

static const char *lookup(const char *name)
{
	return strcmp(name, "TOKEN") == 0 ? "s3cret" : strcmp(name, "BAD") == 0 ? "a\r\nb" : NULL;
}

START_TEST(test_credentials)
{
	struct ward_netpolicy p;
	struct ward_error *err = NULL;
	char *v;

	v = ward_net_expand("Bearer ${TOKEN}-$TOKEN $$x", lookup, &err);
	ck_assert_str_eq(v, "Bearer s3cret-s3cret $x");
	free(v);
	ck_assert_ptr_null(ward_net_expand("Bearer $MISSING", lookup, &err));
	ck_assert_ptr_nonnull(strstr(err->message, "variable 'MISSING' is not set"));
	ck_assert_ptr_null(ward_net_expand("x ${TOKEN", lookup, &err));
	ck_assert_ptr_null(ward_net_expand("$BAD", lookup, &err));
	ck_assert_ptr_nonnull(strstr(err->message, "line break"));

	ward_netpolicy_init(&p);
	ck_assert_int_eq(ward_netpolicy_add_credential(&p, "API.example.com=Authorization: Bearer $T",
						       &err), 0);
	ck_assert_str_eq(p.creds[0].host, "api.example.com");
	ck_assert_str_eq(p.creds[0].header, "Authorization");
	ck_assert_str_eq(p.creds[0].value, "Bearer $T");
	ck_assert_int_eq(ward_netpolicy_add_credential(&p, "api.example.com", &err), -1);
	ck_assert_int_eq(ward_netpolicy_add_credential(&p, "h=Bad Name: v", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "not a header name"));
	ward_error_free(err);
	ward_netpolicy_release(&p);
}
END_TEST

static int apply(struct ward_config *cfg, const char *text, char *msg)
{
	struct ward_error *err = NULL;
	int rc;

	ward_config_init(cfg);
	rc = ward_policy_apply(text, strlen(text), "p.json", cfg, &err);
	if (rc < 0) {
		snprintf(msg, 1024, "%s", err->message);
		ward_error_free(err);
	}
	return rc;
}

START_TEST(test_policy_file)
{
	struct ward_config cfg;
	char msg[1024] = "", rule[WARD_NET_RULE_MAX];
	static const struct {
		const char *text, *needle;
	} bad[] = {
		{ "{\"network\": {\"mode\": \"wide\"}}", "network.mode: unknown network mode 'wide'" },
		{ "{\"network\": {\"allow_host\": []}}", "unknown key \"allow_host\"" },
		{ "{\"network\": {\"allow_hosts\": [\"a b\"]}}", "network.allow_hosts[0]" },
		{ "{\"network\": {\"allow_hosts\": [1]}}", "network.allow_hosts[0]: must be a string" },
		{ "{\"network\": {\"allow_cidrs\": [\"10.0.0.0/99\"]}}", "network.allow_cidrs[0]" },
		{ "{\"network\": {\"allow_ports\": [70000]}}", "network.allow_ports[0]" },
		{ "{\"network\": {\"proxy_port\": \"x\"}}", "network.proxy_port: must be an integer" },
		{ "{\"network\": {\"subnet\": \"10.0.0.0/31\"}}", "network.subnet" },
		{ "{\"network\": {\"transport\": \"tap\"}}", "network.transport" },
		{ "{\"network\": {\"credentials\": [{\"host\": \"a\", \"header\": \"X\"}]}}",
		  "network.credentials[0]" },
		{ "{\"network\": {\"credentials\": [{\"host\": \"a\", \"header\": \"X\", \"value\": \"v\","
		  " \"x\": 1}]}}", "unknown key \"x\"" },
		{ "{\"network\": []}", "network: must be an object" },
	};
	size_t i;

	ck_assert_int_eq(apply(&cfg,
			       "{\"network\": {\"mode\": \"proxy\", \"allow_hosts\": [\"*.example.com\","
			       " \"example.org:8443\"], \"deny_hosts\": [\"x.example.com\"],"
			       " \"allow_cidrs\": [\"127.0.0.1/32\"], \"allow_ports\": [8080, \"8081\"],"
			       " \"credentials\": [{\"host\": \"api.example.com\", \"header\": "
			       "\"Authorization\", \"value\": \"Bearer ${T}\"}], \"log\": \"/tmp/n.log\","
			       " \"proxy_port\": 3129, \"subnet\": \"10.9.0.0/29\", \"transport\":"
			       " \"loopback\", \"local_ports\": [5432]}}",
			       msg),
			 0);
	ck_assert_int_eq(cfg.net, WARD_NET_PROXY);
	ck_assert_int_eq(cfg.net_transport, WARD_NET_TRANSPORT_LOOPBACK);
	ck_assert_int_eq(cfg.proxy_port, 3129);
	ck_assert_str_eq(cfg.net_subnet.text, "10.9.0.0/29");
	ck_assert_str_eq(cfg.net_log, "/tmp/n.log");
	ck_assert_uint_eq(cfg.n_local_ports, 1);
	ck_assert_uint_eq(cfg.netpolicy.n_creds, 1);
	ck_assert(ward_netpolicy_check_host(&cfg.netpolicy, "a.example.com", 8081, rule, sizeof(rule)));
	ck_assert(!ward_netpolicy_check_host(&cfg.netpolicy, "x.example.com", 443, rule, sizeof(rule)));
	ck_assert(ward_netpolicy_check_host(&cfg.netpolicy, "example.org", 8443, rule, sizeof(rule)));
	ward_config_release(&cfg);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(apply(&cfg, bad[i].text, msg) < 0, "accepted %s", bad[i].text);
		ck_assert_msg(strstr(msg, bad[i].needle), "%s: '%s' lacks '%s'", bad[i].text, msg,
			      bad[i].needle);
		ward_config_release(&cfg);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netpolicy");
	TCase *tc = harness_tcase(s, "netpolicy", NULL);

	tcase_add_test(tc, test_host_rules);
	tcase_add_test(tc, test_bad_rules);
	tcase_add_test(tc, test_classes);
	tcase_add_test(tc, test_cidrs);
	tcase_add_test(tc, test_request_heads);
	tcase_add_test(tc, test_forward_heads);
	tcase_add_test(tc, test_intercepted_heads);
	tcase_add_test(tc, test_chunked);
	tcase_add_test(tc, test_chunked_bare_lf);
	tcase_add_test(tc, test_credentials);
	tcase_add_test(tc, test_policy_file);
	return harness_main(s);
}
