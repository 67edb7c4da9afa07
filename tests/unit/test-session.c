/* test-session.c — the parts of a session that run nothing: alias expansion,
 * environment and alias tables, the directory rules, the policy's "session"
 * object. A fresh-isolation session starts no process until a command runs. */
#include "harness.h"
#include "ward/env.h"
#include "ward/policy.h"
#include "ward/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct ward_session *sess(void)
{
	struct ward_config cfg;
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, "/tmp", &err), 0);
	/* /tmp itself is no workdir without the person's word (ward/admit.h);
	 * these tests are about the session's state, and run nothing */
	cfg.admit.anywhere = true;
	ck_assert_int_eq(ward_session_new(&cfg, NULL, &s, &err), 0);
	return s;
}

static void expands(struct ward_session *s, const char *in, const char *want)
{
	struct ward_error *err = NULL;
	char *out = NULL;

	ck_assert_msg(ward_session_expand(s, in, &out, &err) == 0, "%s: %s", in,
		      err ? err->message : "");
	ck_assert_msg(strcmp(out, want) == 0, "'%s' expanded to '%s', expected '%s'", in, out, want);
	free(out);
}

START_TEST(test_expand_positions)
{
	struct ward_session *s = sess();
	struct ward_error *err = NULL;

	ck_assert_int_eq(ward_session_alias_set(s, "ll", "ls -l", &err), 0);
	expands(s, "ll", "ls -l");
	expands(s, "  ll x", "  ls -l x");
	expands(s, "echo ll", "echo ll");                  /* an argument */
	expands(s, "a; ll && ll || ll | ll & ll\nll", "a; ls -l && ls -l || ls -l | ls -l & ls -l\nls -l");
	expands(s, "(ll)", "(ls -l)");
	expands(s, "{ ll; }", "{ ls -l; }");
	expands(s, "if ll; then ll; else ll; fi", "if ls -l; then ls -l; else ls -l; fi");
	expands(s, "while ll; do ll; done", "while ls -l; do ls -l; done");
	expands(s, "'ll'", "'ll'");                        /* quoted: not an alias */
	expands(s, "\"ll\"", "\"ll\"");
	expands(s, "\\ll", "\\ll");
	expands(s, "echo 'a; ll'", "echo 'a; ll'");       /* inside quotes */
	expands(s, "echo \"a; ll\"", "echo \"a; ll\"");
	expands(s, "echo $(ll; x)", "echo $(ll; x)");      /* left to the shell */
	expands(s, "# ll\nll", "# ll\nls -l");             /* a comment */
	expands(s, "echo x#ll", "echo x#ll");
	expands(s, "cmd 2>&1 ll", "cmd 2>&1 ll");           /* a redirection is not a list */
	expands(s, "cmd &>/dev/null ll", "cmd &>/dev/null ll");
	expands(s, "llx; xll", "llx; xll");                 /* whole words only */
	ward_session_free(s);
}
END_TEST

START_TEST(test_expand_recursion)
{
	struct ward_session *s = sess();
	struct ward_error *err = NULL;
	char name[16], value[32], *out = NULL;
	int i;

	ck_assert_int_eq(ward_session_alias_set(s, "ls", "ls --color", &err), 0);
	expands(s, "ls x", "ls --color x");               /* itself: not again */
	ck_assert_int_eq(ward_session_alias_set(s, "l", "ls -a", &err), 0);
	expands(s, "l", "ls --color -a");
	ck_assert_int_eq(ward_session_alias_set(s, "a", "b", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "b", "c; a", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "c", "echo c", &err), 0);
	expands(s, "a", "echo c; a");                    /* the loop stops */
	/* a value ending in a blank expands the next word too */
	ck_assert_int_eq(ward_session_alias_set(s, "sudoish", "env ", &err), 0);
	expands(s, "sudoish l", "env  ls --color -a");
	/* deeper than the limit is an error, not a stack overflow */
	for (i = 0; i <= WARD_ALIAS_DEPTH_MAX + 1; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		snprintf(value, sizeof(value), "d%d", i + 1);
		ck_assert_int_eq(ward_session_alias_set(s, name, value, &err), 0);
	}
	ck_assert_int_eq(ward_session_expand(s, "d0", &out, &err), -1);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_ptr_nonnull(strstr(err->message, "deeper"));
	ward_error_free(err);
	ward_session_free(s);
}
END_TEST

START_TEST(test_tables)
{
	struct ward_session *s = sess();
	struct ward_error *err = NULL;
	char **v;
	size_t i;

	ck_assert_int_eq(ward_session_setenv(s, "ZED", "1", &err), 0);
	ck_assert_int_eq(ward_session_setenv(s, "ZED", "2", &err), 0);
	v = ward_session_env(s);
	for (i = 0; v[i]; i++) {
		ck_assert_msg(strncmp(v[i], "PWD=", 4) != 0, "PWD is the shell's");
		if (v[i + 1])
			ck_assert_int_lt(strcmp(v[i], v[i + 1]), 0); /* sorted, no duplicates */
	}
	ck_assert_str_eq(ward_env_get(v, "ZED"), "2");
	ward_env_free(v);
	ck_assert_int_eq(ward_session_setenv(s, "A-B", "1", &err), -1);
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_setenv(s, "", "1", &err), -1);
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_alias_set(s, "a b", "x", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "'a b'"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_alias_set(s, "g.st", "git status", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "g.st", "git status -s", &err), 0);
	v = ward_session_aliases(s);
	ck_assert_str_eq(v[0], "g.st=git status -s");
	ck_assert_ptr_null(v[1]);
	ward_env_free(v);
	ward_session_free(s);
}
END_TEST

START_TEST(test_cwd_rules)
{
	struct ward_session *s = sess();
	struct ward_error *err = NULL;
	char *p;

	ck_assert_int_eq(ward_session_set_cwd(s, "a/b/../c", NULL, &err), 0);
	p = ward_session_pwd(s);
	ck_assert_str_eq(p, "/tmp/a/c");
	free(p);
	ck_assert_int_eq(ward_session_set_cwd(s, "../../..", NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "outside what the policy allows"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_set_cwd(s, "/tmpfoo", NULL, &err), -1); /* not a prefix match */
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_set_cwd(s, "/tmp", "/etc", &err), -1);
	ward_error_free(err);
	p = ward_session_pwd(s);
	ck_assert_str_eq(p, "/tmp/a/c"); /* unchanged by the refusals */
	free(p);
	ward_session_free(s);
}
END_TEST

START_TEST(test_policy_session)
{
	static const struct {
		const char *text, *error;
	} bad[] = {
		{ "{\"session\": 1}", "session: must be an object" },
		{ "{\"session\": {\"isolate\": \"shared\"}}", "unknown key \"isolate\"" },
		{ "{\"session\": {\"isolation\": \"both\"}}", "session.isolation" },
		{ "{\"session\": {\"timeout\": 0}}", "session.timeout" },
		{ "{\"session\": {\"env\": \"some\"}}", "session.env" },
		{ "{\"session\": {\"ssh\": {\"host\": \"h\", \"workdir\": \"/w\"}}}",
		  "known_hosts: is required" },
		{ "{\"session\": {\"ssh\": {\"host\": \"h\", \"known_hosts\": \"/k\"}}}",
		  "session.ssh.workdir" },
		{ "{\"session\": {\"ssh\": {\"host\": \"h\", \"known_hosts\": \"/k\", \"workdir\": "
		  "\"/w\", \"port\": 70000}}}",
		  "session.ssh.port" },
		{ "{\"session\": {\"ssh\": {\"hots\": \"h\"}}}", "unknown key \"hots\"" },
	};
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_error *err = NULL;
	const char *good = "{\"session\": {\"isolation\": \"shared\", \"timeout\": 7, \"env\": "
			   "\"empty\", \"ssh\": {\"host\": \"build1\", \"user\": \"ci\", \"port\": "
			   "2200, \"known_hosts\": \"/k\", \"workdir\": \"/w\"}}}";
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ward_config_init(&cfg);
		ck_assert_int_eq(ward_policy_apply(bad[i].text, strlen(bad[i].text), "p", &cfg, &err),
				 -1);
		ck_assert_msg(strstr(err->message, bad[i].error), "%s: got '%s'", bad[i].text,
			      err->message);
		ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
		ward_error_free(err);
		err = NULL;
		ward_config_release(&cfg);
	}
	ward_config_init(&cfg);
	ck_assert_int_eq(ward_policy_apply(good, strlen(good), "p", &cfg, &err), 0);
	ward_session_options_init(&o);
	ck_assert_int_eq(ward_session_options_from_config(&cfg, &o, &err), 0);
	ck_assert_int_eq(o.isolation, WARD_SESSION_SHARED);
	ck_assert_int_eq(o.timeout, 7);
	ck_assert(o.empty_env);
	ck_assert_str_eq(o.ssh.host, "build1");
	ck_assert_str_eq(o.ssh.user, "ci");
	ck_assert_int_eq(o.ssh.port, 2200);
	ward_session_options_release(&o);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_bad_options)
{
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ward_session_options_init(&o);
	o.timeout = 0;
	ck_assert_int_eq(ward_session_new(&cfg, &o, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "timeout"));
	ward_error_free(err);
	err = NULL;
	/* SSH without a known_hosts file: refused, never accept-anything */
	o.timeout = 30;
	o.ssh.host = strdup("example");
	o.ssh.workdir = strdup("/w");
	ward_config_init(&cfg);
	ck_assert_int_eq(ward_session_new(&cfg, &o, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "known_hosts"));
	ward_error_free(err);
	ward_session_options_release(&o);
	ward_config_release(&cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("session-state");
	TCase *tc = harness_tcase(s, "state", NULL);

	tcase_add_test(tc, test_expand_positions);
	tcase_add_test(tc, test_expand_recursion);
	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_cwd_rules);
	tcase_add_test(tc, test_policy_session);
	tcase_add_test(tc, test_bad_options);
	return harness_main(s);
}
