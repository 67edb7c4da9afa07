/* test-session.c — the parts of a session that run nothing: alias expansion,
 * environment and alias tables, the directory rules, the policy's "session"
 * object. A fresh-isolation session starts no process until a command runs. */
#include "harness.h"
#include "ward/env.h"
#include "ward/policy.h"
#include "ward/session.h"
#include "runtime/session/session-internal.h"

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
	ck_assert_msg(!want || strcmp(out, want) == 0, "'%s' expanded to '%s', expected '%s'", in, out,
		      want);
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

/* A session with limits l (NULL: the defaults) and no rate limit. */
static struct ward_session *sess_limited(const struct ward_session_limits *l)
{
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	cfg.rate_per_minute = cfg.rate_per_hour = 0;
	/* /tmp itself is no workdir without the person's word (ward/admit.h) */
	cfg.admit.anywhere = true;
	ck_assert_int_eq(ward_config_set_workdir(&cfg, "/tmp", &err), 0);
	ward_session_options_init(&o);
	if (l)
		o.limits = *l;
	ck_assert_int_eq(ward_session_new(&cfg, &o, &s, &err), 0);
	ward_session_options_release(&o);
	return s;
}

/* An alias that expands into four of the next, twelve deep, would be 4^12
 * copies: the size is checked as the text grows, and the error says which
 * limit. */
START_TEST(test_alias_bomb)
{
	struct ward_session *s = sess_limited(NULL);
	struct ward_error *err = NULL;
	char name[16], value[64], *out = NULL;
	int i;

	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "a%d", i);
		snprintf(value, sizeof(value), "a%d;a%d;a%d;a%d", i + 1, i + 1, i + 1, i + 1);
		ck_assert_int_eq(ward_session_alias_set(s, name, value, &err), 0);
	}
	ck_assert_int_eq(ward_session_alias_set(s, "a12", "echo some words here", &err), 0);
	ck_assert_int_eq(ward_session_expand(s, "a0", &out, &err), -1);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_msg(strstr(err->message, "longer than 131072 bytes") &&
			      strstr(err->message, "session.limits.command_bytes"),
		      "%s", err->message);
	ward_error_free(err);
	err = NULL;
	/* four levels fit: 256 copies */
	expands(s, "a8", NULL);
	ward_session_free(s);
}
END_TEST

START_TEST(test_expand_limits)
{
	struct ward_session_limits l;
	struct ward_session *s;
	struct ward_error *err = NULL;
	char *out = NULL;

	ward_session_limits_init(&l);
	l.command_bytes = 10;
	l.alias_depth = 2;
	s = sess_limited(&l);
	expands(s, "echo 12345", "echo 12345");            /* exactly the limit */
	ck_assert_int_eq(ward_session_expand(s, "echo 123456", &out, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "longer than 10 bytes"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_alias_set(s, "x", "y", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "y", "z", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "z", "w", &err), 0);
	expands(s, "y", "w");
	ck_assert_int_eq(ward_session_expand(s, "x", &out, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "deeper than 2 (policy session.limits.alias_depth)"));
	ward_error_free(err);
	ward_session_free(s);
}
END_TEST

START_TEST(test_table_limits)
{
	struct ward_session_limits l;
	struct ward_session *s;
	struct ward_error *err = NULL;
	char big[5000];

	ward_session_limits_init(&l);
	l.aliases = 2;
	l.alias_bytes = 20;
	l.env_bytes = 4096;
	s = sess_limited(&l);
	ck_assert_int_eq(ward_session_alias_set(s, "a", "1", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "b", "2", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "c", "3", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "session.limits.aliases"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_alias_set(s, "a", "123456789012345", &err), 0); /* 16 + 2 */
	ck_assert_int_eq(ward_session_alias_set(s, "b", "12345", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "session.limits.alias_bytes"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_alias_remove(s, "a", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "c", "3", &err), 0);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(ward_session_setenv(s, "BIG", big, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "session.limits.env_bytes"));
	ward_error_free(err);
	err = NULL;
	big[3000] = '\0';
	ck_assert_int_eq(ward_session_setenv(s, "BIG", big, &err), 0);
	ck_assert_int_eq(ward_session_setenv(s, "BIG", big, &err), 0); /* replacing is not adding */
	ck_assert_int_eq(ward_session_setenv(s, "BIG2", big, &err), -1);
	ward_error_free(err);
	ward_session_free(s);
}
END_TEST

/* History by entries and by bytes: refused commands are recorded without
 * running anything, so the bounds can be seen here. */
START_TEST(test_history_limits)
{
	struct ward_session_limits l;
	struct ward_session *s;
	struct ward_session_result r;
	struct ward_history_entry *h = NULL;
	struct ward_error *err = NULL;
	char cmd[2100];
	size_t n = 0, i;

	ward_session_limits_init(&l);
	l.history_entries = 5;
	s = sess_limited(&l);
	for (i = 0; i < 8; i++) {
		snprintf(cmd, sizeof(cmd), "sudo true %zu", i);
		ck_assert_int_eq(ward_session_exec(s, cmd, NULL, &r, &err), 0);
		ck_assert_ptr_nonnull(r.run.error);
		ck_assert_uint_eq(r.history_id, i + 1);
		ward_session_result_release(&r);
	}
	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_ALL, NULL, 0, &h, &n, &err), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(h[0].id, 4); /* the oldest went */
	ck_assert_str_eq(h[4].command, "sudo true 7");
	ward_history_free(h, n);
	ward_session_free(s);

	ward_session_limits_init(&l);
	l.history_bytes = 10000; /* about two entries of 4 KiB (command + expansion) */
	s = sess_limited(&l);
	memset(cmd, 'x', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	memcpy(cmd, "sudo ", 5);
	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(ward_session_exec(s, cmd, NULL, &r, &err), 0);
		ward_session_result_release(&r);
	}
	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_ALL, NULL, 0, &h, &n, &err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(h[1].id, 6);
	ward_history_free(h, n);
	ward_session_free(s);
}
END_TEST

START_TEST(test_policy_limits)
{
	static const char *const bad[] = {
		"{\"session\": {\"limits\": 1}}",
		"{\"session\": {\"limits\": {\"command_bytes\": 0}}}",
		"{\"session\": {\"limits\": {\"alias_depth\": 1001}}}",
		"{\"session\": {\"limits\": {\"sessions\": \"many\"}}}",
		"{\"session\": {\"limits\": {\"history\": 3}}}",
	};
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_error *err = NULL;
	const char *good = "{\"session\": {\"limits\": {\"command_bytes\": 100, \"alias_depth\": 3, "
			   "\"aliases\": 4, \"alias_bytes\": 5, \"env_bytes\": 4096, "
			   "\"history_entries\": 6, \"history_bytes\": 7, \"sessions\": 8, "
			   "\"sandboxes\": 9, \"response_bytes\": 300000, \"approval_timeout\": 11}}}";
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ward_config_init(&cfg);
		ck_assert_int_eq(ward_policy_apply(bad[i], strlen(bad[i]), "p", &cfg, &err), -1);
		ck_assert_msg(strstr(err->message, "session.limits"), "%s: %s", bad[i], err->message);
		ward_error_free(err);
		err = NULL;
		ward_config_release(&cfg);
	}
	ward_config_init(&cfg);
	ck_assert_int_eq(ward_policy_apply(good, strlen(good), "p", &cfg, &err), 0);
	ward_session_options_init(&o);
	ck_assert_uint_eq(o.limits.command_bytes, WARD_COMMAND_BYTES_DEFAULT);
	ck_assert_uint_eq(o.limits.history_entries, WARD_HISTORY_MAX);
	ck_assert_int_eq(ward_session_options_from_config(&cfg, &o, &err), 0);
	ck_assert_uint_eq(o.limits.command_bytes, 100);
	ck_assert_int_eq(o.limits.alias_depth, 3);
	ck_assert_uint_eq(o.limits.aliases, 4);
	ck_assert_uint_eq(o.limits.alias_bytes, 5);
	ck_assert_uint_eq(o.limits.env_bytes, 4096);
	ck_assert_uint_eq(o.limits.history_entries, 6);
	ck_assert_uint_eq(o.limits.history_bytes, 7);
	ck_assert_uint_eq(o.limits.sessions, 8);
	ck_assert_uint_eq(o.limits.sandboxes, 9);
	ck_assert_uint_eq(o.limits.response_bytes, 300000);
	ck_assert_int_eq(o.limits.approval_timeout, 11);
	ward_session_options_release(&o);
	ward_config_release(&cfg);
}
END_TEST

/* The shell's report names every variable once (`declare -p`); the parser
 * takes the exported scalars into the environment with their values decoded
 * from bash's quoting, keeps every other variable's line for the state, and
 * leaves bash's own out. The report here is what bash 5.2 writes. */
START_TEST(test_report_vars)
{
	static const char vars[] =
		"declare -x A=$'a\\nb\\tc\\001d\\Ee\\177f\"g\\\\h$i`j\\'k'\n"
		"declare -x B=\"\xc3\xa9 \xc3\xbc\"\n"
		"declare -x C=$'\\377\\376'\n"
		"declare -x D=\"\"\n"
		"declare -x E\n"
		"declare -x G=\"a\\\"b\\$c\\`d\\\\e\"\n"
		"declare -ix N=\"5\"\n"
		"declare -ax arr=([0]=\"1\" [1]=\"2\")\n"
		"declare -- Y=\"two words\"\n"
		"declare -r BASHOPTS=\"checkwinsize\"\n"
		"declare -- __ward_n=\"x\"\n"
		"declare -x SHLVL=\"1\"\n"
		"declare -x OLDPWD\n";
	static const char *const want_env[] = {
		"A=a\nb\tc\001d\033e\177f\"g\\h$i`j'k", "B=\xc3\xa9 \xc3\xbc", "C=\377\376", "D=", "E=",
		"G=a\"b$c`d\\e", "N=5", NULL,
	};
	char text[4096];
	struct session_outcome out = { 0 };
	size_t n = 0, i;

	n += (size_t)snprintf(text + n, sizeof(text) - n, "/w\n/w\n%cOset +o xtrace\n%cJ%cK%cV%s%c",
			      0, 0, 0, 0, vars, 0);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "Sf () \n{ \n    :\n}\n%cZ%c", 0, 0);
	ward_session_parse_state(text, n, &out);
	ck_assert(out.complete);
	for (i = 0; want_env[i]; i++) {
		ck_assert_ptr_nonnull(out.env[i]);
		ck_assert_msg(strcmp(out.env[i], want_env[i]) == 0, "env[%zu] '%s'", i, out.env[i]);
	}
	ck_assert_ptr_null(out.env[i]);
	ck_assert_str_eq(out.state, "shopt -s extglob\n"
				    "declare -ax arr=([0]=\"1\" [1]=\"2\")\n"
				    "declare -- Y=\"two words\"\n"
				    "f () \n{ \n    :\n}\n");
	ward_session_outcome_release(&out);
}
END_TEST

/* A line of the V record that does not stand alone — a value whose quote
 * stays open (one that came across lines), an odd name or flag, a value
 * that is not quoted — refuses the whole record: nothing of it is taken,
 * and a piece of a value is never read as a declaration. */
START_TEST(test_report_vars_refused)
{
	static const char *const bad[] = {
		"declare -- Y=\"open\ndeclare -x PATH=\"/evil\"\n",
		"declare -- Y=$'open\ndeclare -x PATH=\"/evil\"\n",
		"declare -a A=([0]=\"x)\ndeclare -x PATH=\"/evil\"\n",
		"declare -- Y=\"a\\\"\ndeclare -x PATH=\"/evil\"\n",
		"declare -- Y=unquoted\n",
		"declare -- 1Y=\"x\"\n",
		"declare -- Y;Z=\"x\"\n",
		"declare -Q Y=\"x\"\n",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[4096];
		struct session_outcome out = { 0 };
		size_t n = 0;

		n += (size_t)snprintf(text + n, sizeof(text) - n, "/w\n/w\n%cOset +o xtrace\n%cJ%cK%cV%s%c",
				      0, 0, 0, 0, bad[i], 0);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "S%cZ%c", 0, 0);
		ward_session_parse_state(text, n, &out);
		ck_assert_msg(!out.complete || !out.env || !out.env[0],
			      "case %zu taken: env[0] '%s'", i, out.env && out.env[0] ? out.env[0] : "");
		ck_assert_msg(!out.complete || !out.state || !strstr(out.state, "evil"),
			      "case %zu taken: %s", i, out.state);
		ck_assert_msg(!out.complete, "case %zu: the record was taken", i);
		ward_session_outcome_release(&out);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("session-state");
	TCase *tc = harness_tcase(s, "state", NULL);

	tcase_add_test(tc, test_expand_positions);
	tcase_add_test(tc, test_report_vars);
	tcase_add_test(tc, test_report_vars_refused);
	tcase_add_test(tc, test_expand_recursion);
	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_cwd_rules);
	tcase_add_test(tc, test_policy_session);
	tcase_add_test(tc, test_bad_options);
	tcase_add_test(tc, test_alias_bomb);
	tcase_add_test(tc, test_expand_limits);
	tcase_add_test(tc, test_table_limits);
	tcase_add_test(tc, test_history_limits);
	tcase_add_test(tc, test_policy_limits);
	return harness_main(s);
}
