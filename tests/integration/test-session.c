/* test-session.c — sessions through the library, in both isolation modes:
 * environment, aliases, history and replay, the directory, timeouts with
 * partial output and no survivors, concurrency. */
#include "harness.h"
#include "ward/env.h"
#include "ward/policy.h"
#include "ward/sandbox.h"
#include "ward/workdir.h"
#include "ward/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *workdir;

static void setup(void)
{
	workdir = harness_tmpdir();
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
}

/* workdir/rel in a static buffer. */
static const char *at(const char *rel)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", workdir, rel);
	return buf;
}

static struct ward_session *open_session(enum ward_session_isolation iso, bool empty_env)
{
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	ward_session_options_init(&o);
	o.isolation = iso;
	o.empty_env = empty_env;
	ck_assert_msg(ward_session_new(&cfg, &o, &s, &err) == 0, "session: %s",
		      err ? err->message : "?");
	ward_session_options_release(&o);
	ward_config_release(&cfg);
	return s;
}

/* Run cmd, expect success, return the output (caller frees). */
static char *ok(struct ward_session *s, const char *cmd)
{
	struct ward_session_result r;
	struct ward_error *err = NULL;
	char *out;

	ck_assert_msg(ward_session_exec(s, cmd, NULL, &r, &err) == 0, "exec: %s",
		      err ? err->message : "?");
	ck_assert_msg(r.run.exit_code == 0 && !r.run.error, "'%s': exit %d, %s\n%s", cmd,
		      r.run.exit_code, r.run.error ? r.run.error->message : "", r.run.output);
	out = strdup(r.run.output);
	ward_session_result_release(&r);
	return out;
}

static void expect(struct ward_session *s, const char *cmd, const char *want)
{
	char *out = ok(s, cmd);

	ck_assert_msg(strcmp(out, want) == 0, "'%s' printed '%s', expected '%s'", cmd, out, want);
	free(out);
}


/* cgroups of this process's wards (named ward-w<pid>-...) at the top of the
 * v1 pids hierarchy */
static int count_ward_cgroups(void)
{
	char prefix[32];
	struct dirent *e;
	DIR *d = opendir("/sys/fs/cgroup/pids");
	int n = 0;

	if (!d)
		return 0;
	snprintf(prefix, sizeof(prefix), "ward-w%ld-", (long)getpid());
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static enum ward_session_isolation iso_of(int i)
{
	return i == 0 ? WARD_SESSION_FRESH : WARD_SESSION_SHARED;
}

START_TEST(test_env)
{
	struct ward_session *s;
	struct ward_error *err = NULL;
	char **env;
	size_t k;
	bool found = false;

	/* in the host's environment before the session starts from it */
	setenv("WARD_TEST_SECRET_TOKEN", "leak", 1);
	s = open_session(iso_of(_i), false);
	ck_assert_int_eq(ward_session_setenv(s, "GREETING", "hello world", &err), 0);
	expect(s, "printf '%s' \"$GREETING\"", "hello world");
	/* changes persist, and never reach the host */
	ck_assert_ptr_null(getenv("GREETING"));
	ck_assert_int_eq(ward_session_unsetenv(s, "GREETING", &err), 0);
	expect(s, "printf '%s' \"${GREETING-unset}\"", "unset");
	ck_assert_int_eq(ward_session_unsetenv(s, "GREETING", &err), 0); /* not set: fine */
	/* started from the host's safe variables only */
	expect(s, "printf '%s' \"${WARD_TEST_SECRET_TOKEN-none}\"", "none");
	env = ward_session_env(s);
	for (k = 0; env[k]; k++)
		found = found || strncmp(env[k], "PATH=", 5) == 0;
	ck_assert(found);
	ward_env_free(env);
	/* bad names are refused, naming them */
	ck_assert_int_eq(ward_session_setenv(s, "1BAD", "x", &err), -1);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_ptr_nonnull(strstr(err->message, "'1BAD'"));
	ward_error_free(err);
	ward_session_free(s);
}
END_TEST

START_TEST(test_env_empty)
{
	struct ward_session *s = open_session(WARD_SESSION_FRESH, true);
	char **env = ward_session_env(s);
	size_t k;

	for (k = 0; env[k]; k++)
		ck_assert_msg(strncmp(env[k], "PATH=", 5) == 0, "empty env has '%s'", env[k]);
	ward_env_free(env);
	expect(s, "printf '%s' \"${LANG-none}\"", "none");
	ward_session_free(s);
}
END_TEST

START_TEST(test_alias)
{
	struct ward_session *s = open_session(iso_of(_i), false);
	struct ward_session_result r;
	struct ward_error *err = NULL;
	char *x, **al;

	ck_assert_int_eq(ward_session_alias_set(s, "hi", "echo hi", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "twice", "hi; hi", &err), 0);
	/* recursive, at every command position, not inside quotes or as arguments */
	ck_assert_int_eq(ward_session_expand(s, "twice && echo 'hi' hi | hi", &x, &err), 0);
	ck_assert_str_eq(x, "echo hi; echo hi && echo 'hi' hi | echo hi");
	free(x);
	/* loop guard: an alias does not expand inside itself */
	ck_assert_int_eq(ward_session_alias_set(s, "echo", "echo -n", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "a", "b", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "b", "a", &err), 0);
	ck_assert_int_eq(ward_session_expand(s, "a; echo x", &x, &err), 0);
	ck_assert_str_eq(x, "a; echo -n x");
	free(x);
	ck_assert_int_eq(ward_session_alias_remove(s, "echo", &err), 0);
	/* the expansion is what runs, and what the result reports */
	ck_assert_int_eq(ward_session_exec(s, "twice", NULL, &r, &err), 0);
	ck_assert_str_eq(r.run.output, "hi\nhi\n");
	ck_assert_str_eq(r.expanded, "echo hi; echo hi");
	ward_session_result_release(&r);
	al = ward_session_aliases(s);
	ck_assert_str_eq(al[0], "a=b");
	ck_assert_str_eq(al[3], "twice=hi; hi");
	ck_assert_ptr_null(al[4]);
	ward_env_free(al);
	ck_assert_int_eq(ward_session_alias_remove(s, "nope", &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "no alias 'nope'"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_session_alias_set(s, "-x", "y", &err), -1);
	ward_error_free(err);
	ward_session_free(s);
}
END_TEST

START_TEST(test_cd)
{
	/* a host HOME the sandbox does not show (each test runs in its own fork) */
	struct ward_session *s = (setenv("HOME", "/nonexistent-ward-home", 1),
				  open_session(iso_of(_i), false));
	struct ward_session_result r;
	struct ward_error *err = NULL;
	char *p, *want;

	ck_assert_int_eq(mkdir(at("a"), 0755), 0);
	ck_assert_int_eq(mkdir(at("a/b"), 0755), 0);
	free(ok(s, "cd a"));
	p = ward_session_pwd(s);
	ck_assert_int_ge(asprintf(&want, "%s/a", workdir), 0);
	ck_assert_str_eq(p, want);
	free(p);
	/* relative paths in later commands resolve against it */
	free(ok(s, "echo x > here.txt"));
	ck_assert_int_eq(access(at("a/here.txt"), F_OK), 0);
	/* cd dir && cmd, and the directory stays */
	expect(s, "cd b && basename \"$PWD\"", "b\n");
	/* cd - goes back, across commands */
	free(ok(s, "cd -"));
	p = ward_session_pwd(s);
	ck_assert_str_eq(p, want);
	free(p);
	/* cd alone: HOME, which is the sandbox's /tmp when the host's is not
	 * visible (the rule of `ward run`), and a directory the session may be in */
	expect(s, "echo \"$HOME\"", "/tmp\n");
	free(ok(s, "cd"));
	p = ward_session_pwd(s);
	ck_assert_str_eq(p, "/tmp");
	free(p);
	{
		char *back;

		ck_assert_int_ge(asprintf(&back, "cd '%s'", workdir), 0);
		free(ok(s, back));
		free(back);
	}
	/* a cd inside a longer command counts too */
	free(ok(s, "true; if true; then cd a/b; fi; echo done"));
	p = ward_session_pwd(s);
	ck_assert_ptr_nonnull(strstr(p, "/a/b"));
	free(p);
	/* it cannot leave what the policy allows: the session stays */
	ck_assert_int_eq(ward_session_exec(s, "cd /etc && pwd", NULL, &r, &err), 0);
	ck_assert_str_eq(r.run.output, "/etc\n");
	ck_assert_str_eq(r.cwd_refused, "/etc");
	ck_assert_ptr_nonnull(strstr(r.cwd, "/a/b"));
	ward_session_result_release(&r);
	/* the library's cd is a command like the others */
	ck_assert_int_eq(ward_session_cd(s, "..", &r, &err), 0);
	ck_assert_int_eq(r.run.exit_code, 0);
	ck_assert_str_eq(r.cwd, want);
	ward_session_result_release(&r);
	ck_assert_int_eq(ward_session_cd(s, "nowhere", &r, &err), 0);
	ck_assert_int_ne(r.run.exit_code, 0);
	ck_assert_str_eq(r.cwd, want);
	ward_session_result_release(&r);
	/* a per-command start directory */
	{
		struct ward_session_exec_options eo = { .workdir = "b" };

		ck_assert_int_eq(ward_session_exec(s, "basename \"$(pwd)\"", &eo, &r, &err), 0);
		ck_assert_str_eq(r.run.output, "b\n");
		ward_session_result_release(&r);
		eo.workdir = "/usr";
		ck_assert_int_eq(ward_session_exec(s, "pwd", &eo, &r, &err), 0);
		/* a refusal of where to run, like the workdir's admission */
		ck_assert_int_eq(r.run.error->kind, WARD_ERR_NOT_AUTHORIZED);
		ck_assert_str_eq(r.run.error->rule, "workdir-outside-session");
		ward_session_result_release(&r);
	}
	/* a directory removed under the session: back to the workdir, said so */
	free(ok(s, "mkdir -p b && cd b"));
	free(ok(s, "rmdir ../b"));
	ck_assert_int_eq(ward_session_exec(s, "pwd", NULL, &r, &err), 0);
	ck_assert_msg(strstr(r.run.output, "is gone") != NULL, "out=[%s] cwd=%s", r.run.output, r.cwd);
	ck_assert_str_eq(r.cwd, workdir);
	ward_session_result_release(&r);
	free(want);
	ward_session_free(s);
}
END_TEST

START_TEST(test_history)
{
	struct ward_session *s = open_session(iso_of(_i), false);
	struct ward_history_entry *h;
	struct ward_session_result r;
	struct ward_error *err = NULL;
	size_t n;

	ck_assert_int_eq(ward_session_alias_set(s, "greet", "echo", &err), 0);
	free(ok(s, "greet one"));
	free(ok(s, "echo two > f"));
	ck_assert_int_eq(ward_session_exec(s, "exit 3", NULL, &r, &err), 0);
	ck_assert_int_eq(r.history_id, 3);
	ward_session_result_release(&r);
	free(ok(s, "greet three"));

	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_ALL, NULL, 0, &h, &n, &err), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(h[0].command, "greet one");
	ck_assert_str_eq(h[0].expanded, "echo one");
	ck_assert_int_eq(h[2].exit_code, 3);
	ck_assert_int_ge(h[0].start_ms, (int64_t)(time(NULL) - 60) * 1000);
	ck_assert_str_eq(h[0].cwd, workdir);
	ward_history_free(h, n);

	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_PREFIX, "greet", 0, &h, &n, &err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(h[1].id, 4);
	ward_history_free(h, n);
	/* substring, in what was typed or what ran */
	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_SUBSTRING, "echo t", 0, &h, &n, &err), 0);
	ck_assert_uint_eq(n, 2);
	ward_history_free(h, n);
	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_SUBSTRING, "o", 1, &h, &n, &err), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(h[0].id, 4); /* the most recent */
	ward_history_free(h, n);

	/* replay: as typed, aliases as they are now, recorded again */
	ck_assert_int_eq(ward_session_alias_set(s, "greet", "echo hello", &err), 0);
	ck_assert_int_eq(ward_session_replay(s, 1, NULL, &r, &err), 0);
	ck_assert_str_eq(r.run.output, "hello one\n");
	ck_assert_int_eq(r.history_id, 5);
	ward_session_result_release(&r);
	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_ALL, NULL, 1, &h, &n, &err), 0);
	ck_assert_uint_eq(h[0].replay_of, 1);
	ward_history_free(h, n);
	ck_assert_int_eq(ward_session_replay(s, 99, NULL, &r, &err), 0);
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_INVALID_PARAMETERS);
	ward_session_result_release(&r);
	/* a duration is the command's: one that sleeps 0.2 s cannot take less */
	free(ok(s, "sleep 0.2"));
	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_ALL, NULL, 1, &h, &n, &err), 0);
	ck_assert_str_eq(h[0].command, "sleep 0.2");
	ck_assert_int_ge(h[0].duration_ms, 200);
	ward_history_free(h, n);
	ward_session_free(s);
}
END_TEST

START_TEST(test_timeout)
{
	struct ward_session *s = open_session(iso_of(_i), false);
	struct ward_session_exec_options eo = { .timeout = 1 };
	struct ward_session_result r;
	struct ward_error *err = NULL;
	char marker[64];

	/* unique to this run; the sleeps' arguments are it plus a digit */
	snprintf(marker, sizeof(marker), "%s", harness_sleep_marker());
	/* a background sleeper, a setsid'd one, a double fork: none survives */
	{
		char *cmd;

		ck_assert_int_ge(asprintf(&cmd,
					  "echo partial; echo err >&2; sleep %s1 & "
					  "setsid sleep %s2 & (sleep %s3 &) ; sleep 100",
					  marker, marker, marker),
				 0);
		ck_assert_int_eq(ward_session_exec(s, cmd, &eo, &r, &err), 0);
		free(cmd);
	}
	ck_assert(r.run.timed_out);
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_TIMEOUT);
	ck_assert_int_eq(r.run.exit_code, 124);
	ck_assert_ptr_nonnull(strstr(r.run.output, "partial\n"));
	ck_assert_ptr_nonnull(strstr(r.run.output, "err\n"));
	ward_session_result_release(&r);
	ck_assert_msg(!harness_cmdline_alive(NULL, marker), "a process of the timed-out command survived");
	/* the session goes on */
	expect(s, "echo after", "after\n");
	/* what a command that ended normally left running: gone with a fresh
	 * sandbox; kept by a shared one (its jobs) until the session closes */
	{
		char *cmd;

		/* until the job is sleep itself: in the middle of an exec its
		 * cmdline reads empty, and the check below would miss it */
		ck_assert_int_ge(asprintf(&cmd,
					  "setsid sleep %s9 & until grep -qa ^sleep /proc/$!/cmdline; "
					  "do :; done; echo started",
					  marker),
				 0);
		free(ok(s, cmd));
		free(cmd);
		ck_assert_msg(harness_cmdline_alive(NULL, marker) == (_i == 1),
			      "a background process %s its command",
			      _i == 1 ? "did not outlive" : "outlived");
	}
	/* the session default, and the 1 s minimum */
	eo.timeout = 0;
	ck_assert_int_eq(ward_session_default_timeout(s), 30);
	eo.timeout = -1;
	ck_assert_int_eq(ward_session_exec(s, "true", &eo, &r, &err), 0);
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_INVALID_PARAMETERS);
	ward_session_result_release(&r);
	ward_session_free(s);
	ck_assert_msg(!harness_cmdline_alive(NULL, marker), "a job outlived its session");
}
END_TEST

struct conc {
	struct ward_session *s;
	const char *cmd;
	struct ward_session_result r;
};

static void *conc_run(void *arg)
{
	struct conc *c = arg;
	struct ward_session_exec_options eo = { .concurrent = true };
	struct ward_error *err = NULL;

	if (ward_session_exec(c->s, c->cmd, &eo, &c->r, &err) < 0)
		ward_error_free(err);
	return NULL;
}

START_TEST(test_concurrent)
{
	struct ward_session *s = open_session(iso_of(_i), false);
	/* each marks that it runs and waits for the other two: run one after
	 * the other, the first would wait until its timeout and fail */
#define RV(me, a, b, out)                                                            \
	"touch rv-" me "; until [ -e rv-" a " ] && [ -e rv-" b " ]; do sleep 0.05; done; " \
	"echo " out
	struct conc c[3] = { { .s = s, .cmd = RV("1", "2", "3", "one") },
			     { .s = s, .cmd = RV("2", "1", "3", "two >&2") },
			     { .s = s, .cmd = RV("3", "1", "2", "three") } };
#undef RV
	pthread_t t[3];
	int i;

	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, conc_run, &c[i]), 0);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	/* each with its own output */
	ck_assert_str_eq(c[0].r.run.output, "one\n");
	ck_assert_str_eq(c[1].r.run.stderr_text, "two\n");
	ck_assert_str_eq(c[2].r.run.output, "three\n");
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(c[i].r.run.exit_code, 0);
		ward_session_result_release(&c[i].r);
	}
	ward_session_free(s);
}
END_TEST

struct seq {
	struct ward_session *s;
	const char *cmd;
	struct ward_session_result r;
};

static void *seq_run(void *arg)
{
	struct seq *c = arg;
	struct ward_session_exec_options eo = { .concurrent = false };
	struct ward_error *err = NULL;

	if (ward_session_exec(c->s, c->cmd, &eo, &c->r, &err) < 0)
		ward_error_free(err);
	return NULL;
}

/* One after another by default: a second command sent while the first runs
 * waits for it. The first holds until the test says go, and looks whether
 * the second ran meanwhile; the test gives the second every chance to (it
 * waits for its mark a while before saying go — a wait that only makes an
 * overlap likelier to be seen, never a pass or failure of its own). */
START_TEST(test_sequential)
{
	struct ward_session *s = open_session(WARD_SESSION_SHARED, false);
	struct seq a = { .s = s,
			 .cmd = "touch seq-a; until [ -e seq-go ]; do sleep 0.02; done; "
				"if [ -e seq-b ]; then echo overlap; else echo alone; fi" };
	struct seq b = { .s = s, .cmd = "touch seq-b; cat seq-a >/dev/null && echo after" };
	pthread_t ta, tb;
	int i;

	ck_assert_int_eq(pthread_create(&ta, NULL, seq_run, &a), 0);
	while (access(at("seq-a"), F_OK) < 0)
		usleep(10000);
	ck_assert_int_eq(pthread_create(&tb, NULL, seq_run, &b), 0);
	for (i = 0; i < 100 && access(at("seq-b"), F_OK) < 0; i++)
		usleep(20000);
	close(open(at("seq-go"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	ck_assert_str_eq(a.r.run.output, "alone\n");
	ck_assert_str_eq(b.r.run.output, "after\n");
	ward_session_result_release(&a.r);
	ward_session_result_release(&b.r);
	/* and the second sees what the first wrote */
	expect(s, "echo 1 > seq; cat seq", "1\n");
	ward_session_free(s);
}
END_TEST

START_TEST(test_frontdoor)
{
	struct ward_session *s = open_session(iso_of(_i), false);
	struct ward_session_exec_options eo = { 0 };
	struct ward_history_entry *h;
	struct ward_session_result r;
	struct ward_error *err = NULL;
	size_t n;

	/* validators see the expansion, not the alias's name */
	ck_assert_int_eq(ward_session_alias_set(s, "cleanup", "rm -rf /", &err), 0);
	ck_assert_int_eq(ward_session_exec(s, "cleanup", NULL, &r, &err), 0);
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_NOT_AUTHORIZED);
	ck_assert_str_eq(r.run.error->rule, "blocked.rm-root");
	ck_assert(!r.run.started);
	ward_session_result_release(&r);
	/* replayed commands are checked again, with today's aliases */
	ck_assert_int_eq(ward_session_alias_set(s, "x", "echo fine", &err), 0);
	free(ok(s, "x"));
	ck_assert_int_eq(ward_session_alias_set(s, "x", "sudo id", &err), 0);
	ck_assert_int_eq(ward_session_replay(s, 2, NULL, &r, &err), 0);
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_NOT_AUTHORIZED);
	ward_session_result_release(&r);
	/* approval */
	ck_assert_int_eq(ward_session_exec(s, "touch f; chmod 777 f", NULL, &r, &err), 0);
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_APPROVAL_REQUIRED);
	ward_session_result_release(&r);
	eo.approved = true;
	ck_assert_int_eq(ward_session_exec(s, "touch f; chmod 777 f", &eo, &r, &err), 0);
	ck_assert_int_eq(r.run.exit_code, 0);
	ck_assert_ptr_null(r.run.error);
	ward_session_result_release(&r);
	/* refusals are in the history too */
	ck_assert_int_eq(ward_session_history(s, WARD_HISTORY_ALL, NULL, 0, &h, &n, &err), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(h[0].error_kind, "NotAuthorized");
	ck_assert_str_eq(h[0].expanded, "rm -rf /");
	ck_assert_str_eq(h[3].error_kind, "ApprovalRequired");
	ck_assert_ptr_null(h[4].error_kind);
	ward_history_free(h, n);
	ward_session_free(s);
}
END_TEST

START_TEST(test_ratelimit)
{
	struct ward_config cfg;
	struct ward_session *s = NULL;
	struct ward_session_result r;
	struct ward_error *err = NULL;
	int i;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.rate_per_minute = 3;
	ck_assert_int_eq(ward_session_new(&cfg, NULL, &s, &err), 0);
	for (i = 0; i < 3; i++)
		free(ok(s, "true"));
	ck_assert_int_eq(ward_session_exec(s, "true", NULL, &r, &err), 0);
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_RATE_LIMITED);
	ward_session_result_release(&r);
	ward_session_free(s);
}
END_TEST

/* The children of this process (the shared sandbox's init is one). */
static int children(pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) && n < max) {
		char path[300], buf[512], *p;
		ssize_t len;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		p = strrchr(buf, ')');
		if (p && atoi(p + 4) == (int)getpid())
			out[n++] = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

static int open_fds(void);

START_TEST(test_shared_restart)
{
	int fds = open_fds();
	struct ward_session *s = open_session(WARD_SESSION_SHARED, false);
	struct ward_error *err = NULL;
	pid_t kids[8];
	struct stat st;

	ck_assert_int_eq(ward_session_setenv(s, "KEEP", "kept", &err), 0);
	free(ok(s, "mkdir -p sub && cd sub"));
	/* the sandbox dies under the session */
	ck_assert_int_eq(children(kids, 8), 1);
	ck_assert_int_eq(kill(kids[0], SIGKILL), 0);
	{
		/* dead (a zombie: the session reaps it) before the next command */
		char path[64], buf[256] = "";
		int i, fd;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)kids[0]);
		for (i = 0; i < 500; i++) {
			struct timespec pause = { 0, 10 * 1000000 };
			ssize_t n;

			fd = open(path, O_RDONLY | O_CLOEXEC);
			n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
			if (fd >= 0)
				close(fd);
			buf[n > 0 ? n : 0] = '\0';
			if (n <= 0 || strstr(buf, ") Z "))
				break;
			nanosleep(&pause, NULL);
		}
		ck_assert_int_lt(i, 500);
	}
	/* the next command gets a new one; the state is the session's */
	expect(s, "echo $KEEP; basename $PWD", "kept\nsub\n");
	ck_assert_int_eq(children(kids, 8), 1);
	/* the new sandbox has its placeholders as the first had */
	ck_assert_int_eq(lstat(at(".envrc"), &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ward_session_free(s);
	ck_assert_int_eq(children(kids, 8), 0);
	/* both sandboxes' placeholders gone, nothing of either held open */
	ck_assert_int_eq(lstat(at(".envrc"), &st), -1);
	ck_assert_int_eq(rmdir(at("sub")), 0);
	ck_assert_int_eq(rmdir(workdir), 0);
	ck_assert_int_eq(mkdir(workdir, 0755), 0);
	ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* Whether dir holds nothing but "." and "..". */
static bool dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool empty = true;

	ck_assert_msg(d != NULL, "opendir '%s'", dir);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = false;
	closedir(d);
	return empty;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* A shared session's sandbox outlives any one command: the placeholder over
 * a missing protected path must stay for its whole life, whatever other
 * wards on the same workdir do meanwhile, and go when the session ends. */
START_TEST(test_shared_placeholders)
{
	static const char policy[] = "{\"validators\": {\"enabled\": false}, "
				     "\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}}";
	char *state = harness_tmpdir();
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_session_result r;
	struct ward_result res;
	struct ward_error *err = NULL;
	char runs[4096];
	const char *attack = "rmdir .envrc 2>/dev/null; echo planted > .envrc";
	char *argv[] = { (char *)"/bin/true", NULL };
	struct stat st;
	int fds = open_fds();

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	ck_assert_int_eq(ward_policy_apply(policy, sizeof(policy) - 1, "test", &cfg, &err), 0);
	cfg.state_dir = strdup(state);
	ward_session_options_init(&o);
	o.isolation = WARD_SESSION_SHARED;
	ck_assert_msg(ward_session_new(&cfg, &o, &s, &err) == 0, "session: %s",
		      err ? err->message : "?");
	ward_session_options_release(&o);
	ward_config_release(&cfg);

	/* held for the sandbox: a placeholder directory in the real workdir */
	ck_assert_int_eq(lstat(at(".envrc"), &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(ward_session_exec(s, attack, NULL, &r, &err), 0);
	ck_assert_int_ne(r.run.exit_code, 0);
	ward_session_result_release(&r);

	/* another ward on the same workdir comes and goes; it shares the
	 * placeholder and must not take it away from the session */
	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.state_dir = strdup(state);
	ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
	ck_assert_msg(res.exit_code == 0, "ward run: %d %s", res.exit_code,
		      res.error ? res.error->message : "");
	ward_result_release(&res);
	ward_config_release(&cfg);
	ck_assert_int_eq(lstat(at(".envrc"), &st), 0);
	ck_assert(S_ISDIR(st.st_mode));

	ck_assert_int_eq(ward_session_exec(s, attack, NULL, &r, &err), 0);
	ck_assert_msg(r.run.exit_code != 0, "the session planted .envrc: %s", r.run.output);
	ward_session_result_release(&r);
	ck_assert_int_eq(lstat(at(".envrc"), &st), 0);
	ck_assert_msg(S_ISDIR(st.st_mode), ".envrc is no longer the placeholder");

	/* ended: nothing of it left in the workdir or the state directory */
	ward_session_free(s);
	ck_assert_int_eq(lstat(at(".envrc"), &st), -1);
	ck_assert(dir_is_empty(workdir));
	snprintf(runs, sizeof(runs), "%s/runs", state);
	ck_assert_msg(lstat(runs, &st) < 0 || dir_is_empty(runs), "run records left in '%s'",
		      runs);
	/* and the placeholders' locks and run records were let go, not leaked */
	ck_assert_int_eq(open_fds(), fds);
	harness_rmtree(state);
	free(state);
}
END_TEST

/* A shared sandbox would pile writes up in one change set nobody can
 * review until the session ends: refused, and nothing left behind. */
START_TEST(test_shared_overlay_refused)
{
	char *state = harness_tmpdir();
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.workdir_mode = WARD_WORKDIR_OVERLAY;
	cfg.state_dir = strdup(state);
	ward_session_options_init(&o);
	o.isolation = WARD_SESSION_SHARED;
	ck_assert_int_eq(ward_session_new(&cfg, &o, &s, &err), -1);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_msg(strstr(err->message, "overlay") != NULL, "%s", err->message);
	ward_error_free(err);
	ward_session_options_release(&o);
	ward_config_release(&cfg);
	ck_assert(dir_is_empty(workdir));
	ck_assert(dir_is_empty(state));
	harness_rmtree(state);
	free(state);
}
END_TEST

/* Run cmd in s; returns the result's change set name ("" when none). */
static void exec_changes(struct ward_session *s, const char *cmd, const char *want_out,
			 size_t want_count, char name[64])
{
	struct ward_session_result r;
	struct ward_error *err = NULL;
	const struct ward_workdir_report *w;

	ck_assert_int_eq(ward_session_exec(s, cmd, NULL, &r, &err), 0);
	ck_assert_msg(r.run.exit_code == 0 && !r.run.error, "'%s': exit %d, %s\n%s", cmd,
		      r.run.exit_code, r.run.error ? r.run.error->message : "", r.run.output);
	ck_assert_str_eq(r.run.output, want_out);
	w = r.run.workdir;
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(w->mode, WARD_WORKDIR_OVERLAY);
	ck_assert_ptr_nonnull(w->changes);
	ck_assert_uint_eq(ward_changeset_count(w->changes), want_count);
	ck_assert_str_eq(w->change_action, want_count ? "kept" : "");
	snprintf(name, 64, "%s", w->change_name);
	ward_session_result_release(&r);
}

static size_t kept_sets(const char *state)
{
	struct ward_error *err = NULL;
	char **v = ward_changeset_list(state, &err);
	size_t n = 0;

	ck_assert_ptr_nonnull(v);
	while (v[n])
		n++;
	ward_protect_strv_free(v);
	return n;
}

/* Overlay mode in a fresh session: the commands add up to one set, seen by
 * each later command, reviewable, applied or discarded as a whole. */
START_TEST(test_fresh_overlay_accumulates)
{
	static const char policy[] = "{\"validators\": {\"enabled\": false}, "
				     "\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}}";
	char *state = harness_tmpdir();
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_changeset *cs;
	struct ward_error *err = NULL;
	char name1[64], name2[64], diff[8192] = "";
	struct stat st;
	FILE *f;
	size_t n;

	f = fopen(at("keep"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("old\n", f);
	fclose(f);
	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	ck_assert_int_eq(ward_policy_apply(policy, sizeof(policy) - 1, "test", &cfg, &err), 0);
	cfg.workdir_mode = WARD_WORKDIR_OVERLAY;
	cfg.state_dir = strdup(state);
	ward_session_options_init(&o);
	o.isolation = WARD_SESSION_FRESH;
	ck_assert_msg(ward_session_new(&cfg, &o, &s, &err) == 0, "session: %s",
		      err ? err->message : "?");
	ward_session_options_release(&o);
	ward_config_release(&cfg);

	/* nothing changed yet: no set */
	exec_changes(s, "cat keep", "old\n", 0, name1);
	ck_assert_ptr_null(ward_session_changes(s, &err));
	ck_assert_ptr_null(err);
	exec_changes(s, "echo one > a", "", 1, name1);
	ck_assert_int_eq(lstat(at("a"), &st), -1);
	/* the next command sees it and adds to the same set */
	exec_changes(s, "cat a; echo two > b; rm keep", "one\n", 3, name2);
	ck_assert_str_eq(name1, name2);
	ck_assert_int_eq(lstat(at("b"), &st), -1);
	ck_assert_int_eq(lstat(at("keep"), &st), 0);
	ck_assert_uint_eq(kept_sets(state), 1);

	cs = ward_session_changes(s, &err);
	ck_assert_ptr_nonnull(cs);
	ck_assert_uint_eq(ward_changeset_count(cs), 3);
	ck_assert_str_eq(ward_changeset_get(cs, 0)->path, "a");
	ck_assert_int_eq(ward_changeset_get(cs, 2)->kind, WARD_CHANGE_DELETED);
	f = tmpfile();
	ck_assert_int_eq(ward_changeset_diff(cs, fileno(f), &err), 0);
	rewind(f);
	n = fread(diff, 1, sizeof(diff) - 1, f);
	diff[n] = '\0';
	fclose(f);
	ward_changeset_free(cs);
	ck_assert_msg(strstr(diff, "+one") && strstr(diff, "+two") && strstr(diff, "-old"), "%s",
		      diff);

	/* applied: the real workdir has it all, the set is gone */
	ck_assert_msg(ward_session_changes_apply(s, false, &err) == 0, "apply: %s",
		      err ? err->message : "?");
	ck_assert_int_eq(lstat(at("a"), &st), 0);
	ck_assert_int_eq(lstat(at("b"), &st), 0);
	ck_assert_int_eq(lstat(at("keep"), &st), -1);
	ck_assert_ptr_null(ward_session_changes(s, &err));
	ck_assert_uint_eq(kept_sets(state), 0);
	ck_assert_int_eq(ward_session_changes_apply(s, false, &err), -1);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ward_error_free(err);
	err = NULL;

	/* a new set; discarded: nothing of it anywhere */
	exec_changes(s, "echo three > c; rm a", "", 2, name1);
	ck_assert_uint_eq(kept_sets(state), 1);
	ck_assert_int_eq(ward_session_changes_discard(s, &err), 0);
	ck_assert_int_eq(lstat(at("c"), &st), -1);
	ck_assert_int_eq(lstat(at("a"), &st), 0);
	ck_assert_uint_eq(kept_sets(state), 0);

	/* a set left when the session ends stays kept, for ward diff/apply */
	exec_changes(s, "echo four > d", "", 1, name1);
	ward_session_free(s);
	ck_assert_uint_eq(kept_sets(state), 1);
	cs = ward_changeset_open(state, name1, &err);
	ck_assert_ptr_nonnull(cs);
	ward_changeset_discard(cs);
	ward_changeset_free(cs);
	ck_assert_uint_eq(kept_sets(state), 0);
	ck_assert_int_eq(lstat(at("d"), &st), -1);
	harness_rmtree(state);
	free(state);
}
END_TEST

/* A shared sandbox lives in one cgroup for the session: its limits hold for
 * every command (here a process limit stops a burst of forks), and the
 * cgroup is gone once the session closes. */
START_TEST(test_shared_cgroup)
{
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_session_result r;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	ck_assert_int_eq(ward_limits_set(&cfg.limits, WARD_LIMIT_PIDS, "16", &err), 0);
	ward_session_options_init(&o);
	o.isolation = WARD_SESSION_SHARED;
	ck_assert_msg(ward_session_new(&cfg, &o, &s, &err) == 0, "session: %s",
		      err ? err->message : "?");
	/* the same command twice: the limit holds for the second too */
	for (int k = 0; k < 2; k++) {
		/* dash: a fork that fails is an error at once (bash retries) */
		ck_assert_int_eq(ward_session_exec(s, "exec /bin/sh -c 'n=0; while [ $n -lt 40 ]; do "
						      "sleep 2 & n=$((n+1)); done; echo all'", NULL,
						      &r, &err), 0);
		ck_assert_msg(r.run.exit_code != 0 && !strstr(r.run.output, "all"),
			      "40 processes under a limit of 16: exit %d, %s", r.run.exit_code,
			      r.run.output);
		ward_session_result_release(&r);
	}
	/* the jobs left fill the limit: the command runs at once in a new
	 * sandbox (it never started in the full one), and says so */
	ck_assert_int_eq(ward_session_exec(s, "echo fine", NULL, &r, &err), 0);
	ck_assert_msg(r.run.exit_code == 0 && strcmp(r.run.output, "fine\n") == 0,
		      "after the limit: exit %d, %s%s", r.run.exit_code, r.run.output,
		      r.run.error ? r.run.error->message : "");
	ward_session_result_release(&r);
	ck_assert_int_gt(count_ward_cgroups(), 0);
	ward_session_free(s);
	ck_assert_int_eq(count_ward_cgroups(), 0);
	ward_session_options_release(&o);
	ward_config_release(&cfg);
}
END_TEST


/* A session keeps what an open terminal keeps (bash): variables exported or
 * not, functions, shell options, shopt, umask, arrays, the directory — from
 * one command to the next, in both isolation modes. */
START_TEST(test_shell_state)
{
	struct ward_session *s = open_session(iso_of(_i), false);
	struct ward_session_result r;
	struct ward_error *err = NULL;
	char **env;
	bool found = false;
	size_t i;

	if (access("/bin/bash", X_OK) != 0) {
		ward_session_free(s);
		return; /* the state is kept by bash only */
	}
	/* (arrays and extglob patterns wait for the bash dialect of the parser) */
	free(ok(s, "export FOO=bar; Y='two words'; declare -i N=6; "
		   "f() { echo \"fn:$1\"; }; set -o noglob; shopt -s extglob; umask 027; "
		   "mkdir -p sub && cd sub"));
	expect(s, "N+=1; echo \"$FOO|$Y|$N\"", "bar|two words|7\n");
	expect(s, "f x", "fn:x\n");
	expect(s, "umask", "0027\n");
	expect(s, "[[ $- == *f* ]] && echo noglob", "noglob\n");
	expect(s, "shopt -q extglob && echo extglob", "extglob\n");
	/* turned off again, a default turned off, one turned on, each kept */
	free(ok(s, "shopt -u extglob; set +o noglob; set +o braceexpand; shopt -u sourcepath; "
		   "set -o pipefail"));
	expect(s, "shopt -q extglob || echo noext; [[ $- == *f* ]] || echo glob; "
		  "echo {a,b}; shopt -q sourcepath || echo nosource; false | true; echo $?",
	       "noext\nglob\n{a,b}\nnosource\n1\n");
	expect(s, "set -o | grep -c -E '^(braceexpand|noglob|pipefail)[[:space:]]+on'", "1\n");
	expect(s, "basename \"$PWD\"", "sub\n");
	/* exported: seen by programs, and by the session's API */
	expect(s, "printenv FOO", "bar\n");
	env = ward_session_env(s);
	for (i = 0; env && env[i]; i++)
		found = found || strcmp(env[i], "FOO=bar") == 0;
	ward_env_free(env);
	ck_assert_msg(found, "the exported variable is in the session's environment");
	/* unset and unexport are kept too */
	free(ok(s, "unset Y; unset -f f; export -n FOO"));
	expect(s, "echo \"[${Y-unset}]\"; type f >/dev/null 2>&1 || echo nofn; printenv FOO || echo noenv",
	       "[unset]\nnofn\nnoenv\n");
	/* the exit status is the command's, state or not */
	ck_assert_int_eq(ward_session_exec(s, "Z=1; exit 7", NULL, &r, &err), 0);
	ck_assert_int_eq(r.run.exit_code, 7);
	ck_assert_ptr_null(r.state_note);
	ward_session_result_release(&r);
	expect(s, "echo $Z", "1\n");
	ward_session_free(s);
}
END_TEST

/* The state a command leaves is bounded: past 64 KiB it is not kept (the
 * result says so) and the session keeps what it had; a command that ends
 * without the report (exec) keeps the state before it; after a timeout the
 * session still runs and says what it kept. */
START_TEST(test_shell_state_bounds)
{
	struct ward_session *s = open_session(iso_of(_i), false);
	struct ward_session_exec_options eo = { .timeout = 1 };
	struct ward_session_result r;
	struct ward_error *err = NULL;

	if (access("/bin/bash", X_OK) != 0) {
		ward_session_free(s);
		return;
	}
	free(ok(s, "KEEP=1"));
	ck_assert_int_eq(ward_session_exec(s, "BIG=$(head -c 100000 /dev/zero | tr '\\0' x)",
					   NULL, &r, &err), 0);
	ck_assert_int_eq(r.run.exit_code, 0);
	ck_assert_msg(r.state_note && strstr(r.state_note, "64 KiB"), "note: %s",
		      r.state_note ? r.state_note : "(none)");
	ward_session_result_release(&r);
	expect(s, "echo \"${#BIG}:$KEEP\"", "0:1\n");
	/* an exported variable past the environment's limit: not kept either */
	ck_assert_int_eq(ward_session_exec(s, "export HUGE=$(head -c 600000 /dev/zero | tr '\\0' x)",
					   NULL, &r, &err), 0);
	ck_assert_msg(r.state_note != NULL, "an environment past the limit is not kept");
	ward_session_result_release(&r);
	expect(s, "echo \"${#HUGE}:$KEEP\"", "0:1\n");
	/* exec: no report, the state before is kept */
	free(ok(s, "LOST=1; exec true"));
	expect(s, "echo \"${LOST-no}:$KEEP\"", "no:1\n");
	/* a timeout: killed, the session goes on with the state before */
	ck_assert_int_eq(ward_session_exec(s, "GONE=1; sleep 100", &eo, &r, &err), 0);
	ck_assert(r.run.timed_out);
	ck_assert_msg(r.state_note && strstr(r.state_note, "timed out"), "note: %s",
		      r.state_note ? r.state_note : "(none)");
	ward_session_result_release(&r);
	expect(s, "echo \"${GONE-no}:$KEEP\"", "no:1\n");
	ward_session_free(s);
}
END_TEST

/* The report on fd 3 cannot be forged by the command's programs: they do not
 * get fd 3 (the shell gives it to none of them), so a program writing a
 * report of its own changes nothing. A directory it names outside the
 * policy is refused as before. */
START_TEST(test_shell_state_forge)
{
	struct ward_session *s = open_session(iso_of(_i), false);

	if (access("/bin/bash", X_OK) != 0) {
		ward_session_free(s);
		return;
	}
	expect(s, "ls /proc/self/fd/3 >/dev/null 2>&1 && echo has3 || echo no3", "no3\n");
	expect(s, "sh -c 'printf \"/\\n/\\n\\0SFORGED=1\\n\\0O\\0Z\\0\" >&3' 2>/dev/null; echo ran",
	       "ran\n");
	expect(s, "echo \"${FORGED-none}\"; pwd -P | grep -c '^/$' || true", "none\n0\n");
	ward_session_free(s);
}
END_TEST

/* One simple command running a program replaces the session's shell once
 * the shell has made its report (no fork of bash for it): the program has no
 * shell above it holding the report's channel — a forger run so finds none,
 * where under a shell it finds fd 3 — and the session keeps what the shell
 * reported; a function of the program's name still runs as the function. */
START_TEST(test_exec_simple)
{
	struct ward_session *s;
	struct ward_session_result r;
	struct ward_error *err = NULL;
	char cmd[8192];

	if (access("/bin/bash", X_OK) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/report-forger' && mkdir '%s/sub'",
		 harness_path("tests/helpers/report-forger"), workdir, workdir);
	ck_assert_int_eq(system(cmd), 0);
	s = open_session(iso_of(_i), false);
	expect(s, "KEPT=yes", "");
	snprintf(cmd, sizeof(cmd), "./report-forger %s", at("sub"));
	ck_assert_int_eq(ward_session_exec(s, cmd, NULL, &r, &err), 0);
	ck_assert_msg(strcmp(r.run.output, "none\n") == 0, "the program reached a channel: %s",
		      r.run.output);
	ck_assert_msg(!r.state_note, "state not kept: %s", r.state_note);
	ck_assert_str_eq(r.cwd, workdir);
	ward_session_result_release(&r);
	expect(s, "echo \"$KEPT\"", "yes\n");
	expect(s, "ls() { echo function; }", "");
	expect(s, "ls", "function\n");
	expect(s, "unset -f ls; mkdir sub/x", "");
	expect(s, "ls sub", "x\n");
	/* the session's noglob, nounset and errexit hold for a program it
	 * runs by exec, as for any command (`rm -f *` after `set -f` removes
	 * a file named '*', not every file) */
	expect(s, "set -f", "");
	ck_assert_int_eq(ward_session_exec(s, "ls -d s*", NULL, &r, &err), 0);
	ck_assert_msg(r.run.exit_code != 0 && strstr(r.run.stderr_text, "'s*'"),
		      "set -f lost: exit %d, %s%s", r.run.exit_code, r.run.output,
		      r.run.stderr_text);
	ward_session_result_release(&r);
	/* a program run by exec leaves the state as it was: options too */
	expect(s, "[[ $- == *f* ]] && echo still", "still\n");
	expect(s, "set +f; set -u", "");
	ck_assert_int_eq(ward_session_exec(s, "ls $WARD_TEST_UNSET_VAR", NULL, &r, &err), 0);
	ck_assert_msg(r.run.exit_code != 0 && strstr(r.run.stderr_text, "unbound variable"),
		      "set -u lost: exit %d, %s%s", r.run.exit_code, r.run.output,
		      r.run.stderr_text);
	ward_session_result_release(&r);
	expect(s, "set +u", "");
	/* what xtrace shows is the command, at the levels of `bash -c`, in a
	 * shell started ahead of the command or not */
	expect(s, "set -x", "");
	ck_assert_int_eq(ward_session_exec(s, "echo t", NULL, &r, &err), 0);
	ck_assert_str_eq(r.run.stderr_text, "+ eval -- 'echo t'\n++ echo t\n");
	ward_session_result_release(&r);
	ck_assert_int_eq(ward_session_exec(s, "set +x", NULL, &r, &err), 0);
	ward_session_result_release(&r);
	expect(s, "echo u", "u\n");
	ward_session_free(s);
}
END_TEST

/* A background job that stops every waiting shell it finds (SIGSTOP) does
 * not hang the session's later commands: the leader continues the shell
 * before the command and whenever it stops. */
/* Whether, within secs, a process of ours runs a shell waiting for its
 * command (__ward_go in its arguments) and is stopped (state T). */
static bool spare_stopped(int secs)
{
	for (int tries = 0; tries < secs * 20; tries++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		bool found = false;

		while (d && (e = readdir(d)) && !found) {
			char path[300], buf[4096];
			ssize_t n;
			int fd;

			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			if (fd >= 0)
				close(fd);
			if (n <= 0 || !memmem(buf, (size_t)n, "__ward_go", 9))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			if (fd >= 0)
				close(fd);
			if (n > 0) {
				char *rp;

				buf[n] = '\0';
				rp = strrchr(buf, ')');
				found = rp && rp[1] == ' ' && rp[2] == 'T';
			}
		}
		if (d)
			closedir(d);
		if (found)
			return true;
		nanosleep(&(struct timespec){ 0, 50 * 1000000 }, NULL);
	}
	return false;
}

START_TEST(test_spare_stopped)
{
	struct ward_session *s;

	if (access("/bin/bash", X_OK) != 0)
		return;
	s = open_session(WARD_SESSION_SHARED, false);
	expect(s, "bash -c 'while :; do for f in /proc/[0-9]*/cmdline; do "
		  "if grep -q \"[_]_ward_go\" \"$f\" 2>/dev/null; then p=${f#/proc/}; "
		  "kill -STOP ${p%/cmdline} 2>/dev/null; fi; done; done' >/dev/null 2>&1 &", "");
	expect(s, "echo one", "one\n");
	/* the shell waiting for the next command (started once that one
	 * ended), found and stopped by the job before the command comes */
	ck_assert_msg(spare_stopped(10), "no waiting shell was stopped");
	{
		/* a short deadline: a hang fails here in seconds, not 30 */
		struct ward_session_exec_options eo = { .timeout = 4 };
		struct ward_session_result r;
		struct ward_error *err = NULL;

		ck_assert_int_eq(ward_session_exec(s, "echo two", &eo, &r, &err), 0);
		ck_assert_msg(r.run.exit_code == 0 && strcmp(r.run.output, "two\n") == 0,
			      "'echo two': exit %d, %s", r.run.exit_code,
			      r.run.error ? r.run.error->message : r.run.output);
		ward_session_result_release(&r);
	}
	expect(s, "kill %1; echo three", "three\n");
	ward_session_free(s);
}
END_TEST

/* A shared session's next shell is started ahead of its command and reads
 * its script from a memfd, which any process of the sandbox may reopen
 * through /proc. A background job that does — keeping a writable mapping of
 * it and writing a script of its own there over and over — never has its
 * script run: the leader seals what it wrote and reads it back, and starts
 * the shell anew when it cannot. */
START_TEST(test_spare_tamper)
{
	struct ward_session *s;
	char cmd[8192], *text;
	int i;

	if (access("/bin/bash", X_OK) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/spare-tamper'",
		 harness_path("tests/helpers/spare-tamper"), workdir);
	ck_assert_int_eq(system(cmd), 0);
	s = open_session(WARD_SESSION_SHARED, false);
	expect(s, "./spare-tamper count 3 >/dev/null 2>&1 &", "");
	for (i = 0; i < 8; i++) {
		char want[32];

		usleep(100000); /* time for the job to find the spare */
		snprintf(cmd, sizeof(cmd), "echo run-%d", i);
		snprintf(want, sizeof(want), "run-%d\n", i);
		expect(s, cmd, want);
	}
	ward_session_free(s);
	/* the job got hold of spares: otherwise this proves nothing */
	text = harness_slurp(at("count"));
	ck_assert_msg(text && strlen(text) > 0, "the job found no spare shell");
	free(text);
}
END_TEST

/* Processes whose command line holds mark, on this host (sandboxes' too). */
static int count_marked(const char *mark)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char path[300], buf[4096];
		ssize_t len;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t i = 0; i < len; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[len > 0 ? len : 0] = '\0';
		n += strstr(buf, mark) != NULL;
	}
	closedir(d);
	return n;
}

/* Background jobs (issue 17): in a shared session a server started with &
 * in one command is reached by a later one, `jobs` lists it, `kill %1` ends
 * it; the command that started it returns though the job holds its output;
 * a command that times out leaves the earlier jobs running and says so;
 * closing the session leaves nothing. A fresh session's sandbox ends with
 * each command: nothing is kept there. */
START_TEST(test_jobs)
{
	struct ward_session *s;
	struct ward_session_exec_options eo = { .timeout = 1 };
	struct ward_session_result r;
	struct ward_error *err = NULL;
	char cmd[8192], mark[64], *out;

	if (access("/bin/bash", X_OK) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/tcp-hello'", harness_path("tests/helpers/tcp-hello"),
		 workdir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(mark, sizeof(mark), "ward-job-%ld-%d", (long)getpid(), _i);
	s = open_session(iso_of(_i), false);
	/* the job keeps stdout open: the command returns all the same */
	snprintf(cmd, sizeof(cmd), "./tcp-hello port %s & echo started", mark);
	expect(s, cmd, "started\n");
	if (_i == 0) {
		/* fresh: gone with the command's sandbox */
		expect(s, "jobs; echo none", "none\n");
		ward_session_free(s);
		ck_assert_int_eq(count_marked(mark), 0);
		return;
	}
	expect(s, "while [ ! -s port ]; do sleep 0.02; done; ./tcp-hello -c port", "hello\n");
	out = ok(s, "jobs");
	ck_assert_msg(strncmp(out, "[1]", 3) == 0 && strstr(out, "tcp-hello port"), "jobs: %s", out);
	free(out);
	/* a command that times out: killed, the job before it still runs */
	ck_assert_int_eq(ward_session_exec(s, "sleep 100", &eo, &r, &err), 0);
	ck_assert(r.run.timed_out);
	ck_assert_msg(r.state_note && strstr(r.state_note, "1 background job"), "note: %s",
		      r.state_note ? r.state_note : "(none)");
	ward_session_result_release(&r);
	expect(s, "./tcp-hello -c port", "hello\n");
	/* kill %1 ends it */
	expect(s, "p=$(jobs -p); kill %1; while kill -0 $p 2>/dev/null; do sleep 0.02; done; "
		  "jobs; echo gone",
	       "gone\n");
	ck_assert_int_eq(count_marked(mark), 0);
	/* one more, and a double fork outside the job table: closing ends both */
	snprintf(cmd, sizeof(cmd), "./tcp-hello port2 %s-a & (./tcp-hello port3 %s-b &); echo ok", mark,
		 mark);
	expect(s, cmd, "ok\n");
	expect(s, "while [ ! -s port2 ] || [ ! -s port3 ]; do sleep 0.02; done; echo up", "up\n");
	ck_assert_int_eq(count_marked(mark), 2);
	ward_session_free(s);
	ck_assert_int_eq(count_marked(mark), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("session");
	TCase *tc;

	tc = harness_tcase(s, "semantics", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_env, 0, 2);
	tcase_add_test(tc, test_env_empty);
	tcase_add_loop_test(tc, test_alias, 0, 2);
	tcase_add_loop_test(tc, test_cd, 0, 2);
	tcase_add_loop_test(tc, test_history, 0, 2);
	tcase_add_test(tc, test_sequential);
	tcase_add_loop_test(tc, test_frontdoor, 0, 2);
	tcase_add_test(tc, test_ratelimit);
	tcase_add_test(tc, test_shared_restart);
	tcase_add_test(tc, test_shared_placeholders);
	tcase_add_test(tc, test_shared_overlay_refused);
	tcase_add_test(tc, test_fresh_overlay_accumulates);

	tc = harness_tcase(s, "shared-cgroup", "userns cgroup1");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_shared_cgroup);

	/* the shell started ahead of a shared session's command, and a
	 * program run by exec (alone, for the mutation tier) */
	tc = harness_tcase(s, "spare", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_exec_simple, 0, 2);
	tcase_add_test(tc, test_spare_tamper);
	tcase_add_test(tc, test_spare_stopped);

	tc = harness_tcase(s, "timeouts", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_timeout, 0, 2);
	tcase_add_loop_test(tc, test_shell_state, 0, 2);
	tcase_add_loop_test(tc, test_shell_state_bounds, 0, 2);
	tcase_add_loop_test(tc, test_shell_state_forge, 0, 2);
	tcase_add_loop_test(tc, test_concurrent, 0, 2);
	tcase_add_loop_test(tc, test_jobs, 0, 2);
	return harness_main(s);
}
