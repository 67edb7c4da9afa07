/* test-options.c — `ward run` option parsing and config validation. */
#include "harness.h"
#include "ward/ratelimit.h"
#include "runtime/cli/cli-internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parse a NULL-terminated list of words; returns the error message or NULL. */
static char msg[1024];

static const char *parse(struct run_options *o, ...)
{
	static char *argv[32]; /* the options point into it */
	int argc = 0;
	va_list ap;
	struct ward_error *err = NULL;

	va_start(ap, o);
	argv[argc++] = (char *)"run";
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	if (ward_run_options_parse(argc, argv, o, &err) == 0)
		return NULL;
	/* a workdir that is never admitted is a refusal with its rule */
	if (err->kind == WARD_ERR_NOT_AUTHORIZED)
		ck_assert_str_eq(err->rule, "workdir-system");
	else
		ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	snprintf(msg, sizeof(msg), "%s", err->message);
	ward_error_free(err);
	return msg;
}

#define EXPECT_ERROR(needle, ...)                                                                 \
	do {                                                                                      \
		struct run_options o_;                                                            \
		const char *m_ = parse(&o_, __VA_ARGS__, NULL);                                   \
		ck_assert_msg(m_ && strstr(m_, needle), "expected '%s', got '%s'", needle,        \
			      m_ ? m_ : "(accepted)");                                            \
	} while (0)

START_TEST(test_basic)
{
	struct run_options o;

	ck_assert_ptr_null(parse(&o, "-c", "echo hi", "-t", "5", "--setenv", "A=b", NULL));
	ck_assert_str_eq(o.shell, "echo hi");
	ck_assert_int_eq(o.cfg.timeout, 5);
	ck_assert_uint_eq(o.cfg.n_setenv, 1);
	ward_run_options_release(&o);

	ck_assert_ptr_null(parse(&o, "--", "ls", "-l", NULL));
	ck_assert_str_eq(o.argv[0], "ls");
	ck_assert_str_eq(o.argv[1], "-l");
	ward_run_options_release(&o);

	ck_assert_ptr_null(parse(&o, "ls", "-l", NULL)); /* options stop at the command */
	ck_assert_str_eq(o.argv[1], "-l");
	ward_run_options_release(&o);

	ck_assert_ptr_null(parse(&o, "--json", "--uid0", "--hostname", "box", "--sandbox", "off",
				 "--namespaces", "user,mount", "-C", "/tmp", NULL));
	ck_assert(o.json);
	ck_assert(o.cfg.uid0);
	ck_assert_str_eq(o.cfg.hostname, "box");
	ck_assert_int_eq(o.cfg.mode, WARD_SANDBOX_OFF);
	ck_assert_uint_eq(o.cfg.namespaces, WARD_NS_USER | WARD_NS_MOUNT);
	ck_assert_str_eq(o.cfg.workdir, "/tmp");
	ward_run_options_release(&o);

	ck_assert_ptr_null(parse(&o, "--ro-bind", "/etc", "/opt/etc", "--tmpfs", "/cache", "--bind",
				 "/tmp", "/scratch", "-c", "true", NULL));
	ck_assert_uint_eq(o.cfg.n_mounts, 3);
	ck_assert_int_eq(o.cfg.mounts[0].kind, WARD_MOUNT_RO_BIND);
	ck_assert_str_eq(o.cfg.mounts[0].target, "/opt/etc");
	ck_assert_int_eq(o.cfg.mounts[1].kind, WARD_MOUNT_TMPFS);
	ck_assert_str_eq(o.cfg.mounts[2].source, "/tmp");
	ward_run_options_release(&o);
}
END_TEST

START_TEST(test_errors)
{
	EXPECT_ERROR("unknown option '--frobnicate'", "--frobnicate", "-c", "x");
	EXPECT_ERROR("unknown option '-z'", "-z", "-c", "x");
	EXPECT_ERROR("needs a value", "-c");
	EXPECT_ERROR("no command", "-t", "5");
	EXPECT_ERROR("not both", "-c", "ls", "--", "ls");
	EXPECT_ERROR("--json takes the command", "--json", "-c", "ls");
	EXPECT_ERROR("the command is empty", "-c", "   ");
	EXPECT_ERROR("at least 1 second, got '0'", "-t", "0", "-c", "x");
	EXPECT_ERROR("at least 1 second, got '-3'", "-t", "-3", "-c", "x");
	EXPECT_ERROR("whole number of seconds, got '1.5'", "-t", "1.5", "-c", "x");
	EXPECT_ERROR("not a number", "-t", "ten", "-c", "x");
	EXPECT_ERROR("not a number", "-t", "5s", "-c", "x");
	EXPECT_ERROR("at most", "-t", "99999999999999999999", "-c", "x");
	EXPECT_ERROR("timeout is empty", "-t", "", "-c", "x");
	EXPECT_ERROR("workdir '/nonexistent/dir'", "-C", "/nonexistent/dir", "-c", "x");
	EXPECT_ERROR("Not a directory", "-C", "/etc/hostname", "-c", "x");
	EXPECT_ERROR("whole filesystem", "-C", "/", "-c", "x");
	EXPECT_ERROR("inside /proc", "-C", "/proc/self", "-c", "x");
	EXPECT_ERROR("not NAME=VALUE", "--setenv", "NOVALUE", "-c", "x");
	EXPECT_ERROR("not a valid variable name", "--setenv", "1BAD=x", "-c", "x");
	EXPECT_ERROR("not a valid variable name", "--setenv", "A-B=x", "-c", "x");
	EXPECT_ERROR("needs two arguments", "--bind", "/tmp");
	EXPECT_ERROR("bind source '/no/such'", "--bind", "/no/such", "/x", "-c", "x");
	EXPECT_ERROR("not an absolute path", "--tmpfs", "relative", "-c", "x");
	EXPECT_ERROR("not allowed", "--tmpfs", "/", "-c", "x");
	EXPECT_ERROR("not allowed", "--tmpfs", "/proc/x", "-c", "x");
	EXPECT_ERROR("not allowed", "--ro-bind", "/etc", "/a/../b", "-c", "x");
	EXPECT_ERROR("unknown sandbox mode 'maybe'", "--sandbox", "maybe", "-c", "x");
	EXPECT_ERROR("unknown namespace 'time'", "--namespaces", "user,time", "-c", "x");
	EXPECT_ERROR("hostname '' is not valid", "--hostname", "", "-c", "x");
}
END_TEST

/* Each proxy rule asks for the proxy: without --net it is implied (before,
 * '--allow-host x' was accepted and the network stayed off); with another
 * --net, or a policy's network.mode "host", it is refused naming both. */
/* ward run has no rate limit unless a policy sets one (ward serve keeps
 * the library's default, ward_config_init's 30 a minute and 300 an hour). */
START_TEST(test_no_rate_limit_unless_policy)
{
	struct run_options o;
	char *dir = harness_tmpdir(), path[4200];
	struct ward_config lib;
	FILE *f;

	ck_assert_ptr_null(parse(&o, "--no-policy", "-c", "x", NULL));
	ck_assert_uint_eq(o.cfg.rate_per_minute, 0);
	ck_assert_uint_eq(o.cfg.rate_per_hour, 0);
	ward_run_options_release(&o);
	snprintf(path, sizeof(path), "%s/policy.json", dir);
	f = fopen(path, "w");
	fputs("{\"timeout\": 30}", f);
	fclose(f);
	ck_assert_ptr_null(parse(&o, "--policy", path, "-c", "x", NULL));
	ck_assert_uint_eq(o.cfg.rate_per_minute, 0);
	ck_assert_uint_eq(o.cfg.rate_per_hour, 0);
	ward_run_options_release(&o);
	f = fopen(path, "w");
	fputs("{\"rate_limit\": {\"per_minute\": 5, \"per_hour\": 50}}", f);
	fclose(f);
	ck_assert_ptr_null(parse(&o, "--policy", path, "-c", "x", NULL));
	ck_assert_uint_eq(o.cfg.rate_per_minute, 5);
	ck_assert_uint_eq(o.cfg.rate_per_hour, 50);
	ward_run_options_release(&o);
	ward_config_init(&lib);
	ck_assert_uint_eq(lib.rate_per_minute, WARD_RATE_PER_MINUTE_DEFAULT);
	ck_assert_uint_eq(lib.rate_per_hour, WARD_RATE_PER_HOUR_DEFAULT);
	ward_config_release(&lib);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_net_rules_imply_proxy)
{
	static const char *const rules[][2] = {
		{ "--allow-host", "example.com" },
		{ "--deny-host", "example.com" },
		{ "--allow-cidr", "10.0.0.0/8" },
		{ "--allow-port", "8080" },
		{ "--inject-header", "example.com=X-Key: v" },
		{ "--secret", "TOKEN=example.com" },
		{ "--allow-request", "example.com GET /**" },
	};
	struct run_options o;
	char *dir = harness_tmpdir(), path[4200], want[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/policy.json", dir);
	f = fopen(path, "w");
	fputs("{\"network\": {\"mode\": \"host\"}}", f);
	fclose(f);
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const char *r = rules[i][0], *v = rules[i][1];

		ck_assert_ptr_null(parse(&o, "--no-policy", r, v, "-c", "x", NULL));
		ck_assert_int_eq(o.cfg.net, WARD_NET_PROXY);
		ward_run_options_release(&o);
		ck_assert_ptr_null(parse(&o, "--no-policy", "--net", "proxy", r, v, "-c", "x", NULL));
		ck_assert_int_eq(o.cfg.net, WARD_NET_PROXY);
		ward_run_options_release(&o);
		snprintf(want, sizeof(want), "%s needs --net=proxy, not --net=none", r);
		EXPECT_ERROR(want, "--no-policy", "--net=none", r, v, "-c", "x");
		snprintf(want, sizeof(want), "%s needs --net=proxy, not --net=host", r);
		EXPECT_ERROR(want, "--no-policy", r, v, "--net", "host", "-c", "x");
		snprintf(want, sizeof(want), "%s needs --net=proxy; the policy sets network.mode", r);
		EXPECT_ERROR(want, "--policy", path, r, v, "-c", "x");
		/* the person's --net=proxy resolves it */
		ck_assert_ptr_null(
			parse(&o, "--policy", path, "--net=proxy", r, v, "-c", "x", NULL));
		ck_assert_int_eq(o.cfg.net, WARD_NET_PROXY);
		ward_run_options_release(&o);
	}
	/* a malformed rule names the option and what is wrong */
	EXPECT_ERROR("--allow-request: request rule 'api.github.com /repos' is not 'HOST "
		     "METHOD[,METHOD] PATHGLOB'", "--no-policy", "--allow-request",
		     "api.github.com /repos", "-c", "x");
	EXPECT_ERROR("--allow-request: request rule 'h GET /a/../b': the path may not have a '.' "
		     "or '..' segment", "--no-policy", "--allow-request", "h GET /a/../b", "-c", "x");
	EXPECT_ERROR("--secret: secret 'TOKEN' is not NAME=HOST[,HOST...]", "--no-policy",
		     "--secret", "TOKEN", "-c", "x");
	/* nothing asked: the network stays off */
	ck_assert_ptr_null(parse(&o, "--no-policy", "-c", "x", NULL));
	ck_assert_int_eq(o.cfg.net, WARD_NET_NONE);
	ward_run_options_release(&o);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_policy_then_flags)
{
	struct run_options o;
	char *dir = harness_tmpdir(), path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/policy.json", dir);
	f = fopen(path, "w");
	fputs("{\"timeout\": 30, \"hostname\": \"from-policy\"}", f);
	fclose(f);
	/* the file applies, and a flag after it wins */
	ck_assert_ptr_null(parse(&o, "--policy", path, "-t", "5", "-c", "x", NULL));
	ck_assert_int_eq(o.cfg.timeout, 5);
	ck_assert_str_eq(o.cfg.hostname, "from-policy");
	ward_run_options_release(&o);
	/* a flag before --policy still wins: the policy is applied first */
	ck_assert_ptr_null(parse(&o, "-t", "7", "--policy", path, "-c", "x", NULL));
	ck_assert_int_eq(o.cfg.timeout, 7);
	ward_run_options_release(&o);
	setenv("WARD_POLICY", path, 1);
	ck_assert_ptr_null(parse(&o, "-c", "x", NULL));
	ck_assert_int_eq(o.cfg.timeout, 30);
	ward_run_options_release(&o);
	ck_assert_ptr_null(parse(&o, "--no-policy", "-c", "x", NULL));
	ck_assert_int_eq(o.cfg.timeout, 120);
	ward_run_options_release(&o);
	unsetenv("WARD_POLICY");
	EXPECT_ERROR("policy '/no/such.json'", "--policy", "/no/such.json", "-c", "x");
	EXPECT_ERROR("not both", "--policy", path, "--no-policy", "-c", "x");
	harness_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_help)
{
	struct run_options o;

	ck_assert_ptr_null(parse(&o, "--help", NULL));
	ck_assert(o.help);
	ward_run_options_release(&o);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("options");
	TCase *tc = harness_tcase(s, "options", NULL);

	tcase_add_test(tc, test_basic);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_policy_then_flags);
	tcase_add_test(tc, test_net_rules_imply_proxy);
	tcase_add_test(tc, test_no_rate_limit_unless_policy);
	return harness_main(s);
}
