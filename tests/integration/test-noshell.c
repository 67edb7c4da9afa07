/* test-noshell.c — --no-shell mode for real: ward's init runs the parsed
 * chain (pipes, && || ;, every redirect kind, $NAME), one deadline for the
 * chain, refusals before anything runs, redirects judged by the sandbox's
 * fences. Run as root and as uid 65534 by tests/run.sh. */
#include "harness.h"
#include "ward/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static void run_ns(const char *cmd, int timeout, const char *setenv, struct ward_result *res)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.timeout = timeout;
	if (setenv)
		ck_assert_int_eq(ward_config_add_setenv(&cfg, setenv, &err), 0);
	ck_assert_msg(ward_run_noshell(&cfg, cmd, res, &err) == 0, "ward_run_noshell: %s",
		      err ? err->message : "?");
	ward_config_release(&cfg);
}

/* stdout of a command that must succeed (caller frees) */
static char *ok(const char *cmd)
{
	struct ward_result res;
	char *out;

	run_ns(cmd, 30, NULL, &res);
	ck_assert_msg(res.exit_code == 0 && !res.error, "'%s': exit %d, %s\n%s", cmd, res.exit_code,
		      res.error ? res.error->message : "", res.output);
	out = strdup(res.output);
	ward_result_release(&res);
	return out;
}

static char *slurp(const char *name)
{
	char path[4096], buf[4096];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", workdir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return strdup("(missing)");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return strdup(buf);
}

#define CK_FILE(name, want)                                                                        \
	do {                                                                                       \
		char *_s = slurp(name);                                                            \
		ck_assert_msg(strcmp(_s, want) == 0, "%s: '%s', expected '%s'", name, _s, want);  \
		free(_s);                                                                          \
	} while (0)

#define CK_OK(cmd, want)                                                                           \
	do {                                                                                       \
		char *_o = ok(cmd);                                                                \
		ck_assert_msg(strcmp(_o, want) == 0, "'%s': output '%s', expected '%s'", cmd, _o, \
			      want);                                                               \
		free(_o);                                                                          \
	} while (0)

START_TEST(test_pipes)
{
	CK_OK("printf 'b\\na\\nc\\n' | sort | head -n 2", "a\nb\n");
	CK_OK("echo hello | tr a-z A-Z | rev | cat", "OLLEH\n");
	/* a reader that stops early: the writer gets SIGPIPE, the chain goes on */
	CK_OK("yes | head -n 3", "y\ny\ny\n");
}
END_TEST

START_TEST(test_exit_chaining)
{
	struct ward_result res;

	CK_OK("false && echo no; true || echo no2; false || echo yes", "yes\n");
	CK_OK("true && echo a && echo b || echo c", "a\nb\n");
	CK_OK("echo one\necho two", "one\ntwo\n");
	run_ns("sh -c 'exit 3'", 30, NULL, &res);
	ck_assert_int_eq(res.exit_code, 3);
	ward_result_release(&res);
	/* the status of the last segment that ran: the second false */
	run_ns("false || false && echo never", 30, NULL, &res);
	ck_assert_int_eq(res.exit_code, 1);
	ck_assert_str_eq(res.output, "");
	ward_result_release(&res);
	/* a pipeline's status is its last command's */
	run_ns("false | true", 30, NULL, &res);
	ck_assert_int_eq(res.exit_code, 0);
	ward_result_release(&res);
	run_ns("true | false; true | sh -c 'exit 7'", 30, NULL, &res);
	ck_assert_int_eq(res.exit_code, 7);
	ward_result_release(&res);
	/* not found: 127 and the reason, and the chain goes on */
	run_ns("no-such-command-x; echo after", 30, NULL, &res);
	ck_assert_int_eq(res.exit_code, 0);
	ck_assert_ptr_nonnull(strstr(res.output, "after\n"));
	ck_assert_ptr_nonnull(strstr(res.stderr_text, "ward: no-such-command-x: No such file or directory"));
	ward_result_release(&res);
	run_ns("no-such-command-x", 30, NULL, &res);
	ck_assert_int_eq(res.exit_code, 127);
	ward_result_release(&res);
}
END_TEST

START_TEST(test_redirects)
{
	struct ward_result res;

	CK_OK("echo out > f1", "");
	CK_FILE("f1", "out\n");
	CK_OK("echo more >> f1", "");
	CK_FILE("f1", "out\nmore\n");
	CK_OK("cat < f1", "out\nmore\n");
	CK_OK("sh -c 'echo e >&2' 2> f2", "");
	CK_FILE("f2", "e\n");
	CK_OK("sh -c 'echo e2 >&2' 2>> f2", "");
	CK_FILE("f2", "e\ne2\n");
	CK_OK("sh -c 'echo o; echo e >&2' > f3 2>&1", "");
	CK_FILE("f3", "o\ne\n");
	CK_OK("sh -c 'echo o; echo e >&2' &> f4", "");
	CK_FILE("f4", "o\ne\n");
	CK_OK("sh -c 'echo o2; echo e2 >&2' &>> f4", "");
	CK_FILE("f4", "o\ne\no2\ne2\n");
	CK_OK("echo clobber >| f4", "");
	CK_FILE("f4", "clobber\n");
	CK_OK("cat 3< f1 0<&3", "out\nmore\n");
	CK_OK("cat <> f5", "");
	CK_FILE("f5", "");
	CK_OK("sh -c 'echo to3 >&3' 3> f6", "");
	CK_FILE("f6", "to3\n");
	/* >&2: stdout into stderr */
	run_ns("echo err-line >&2", 30, NULL, &res);
	ck_assert_int_eq(res.exit_code, 0);
	ck_assert_str_eq(res.stderr_text, "err-line\n");
	ward_result_release(&res);
	/* 1>&-: stdout closed, echo cannot write */
	run_ns("echo x 1>&-", 30, NULL, &res);
	ck_assert_int_ne(res.exit_code, 0);
	ward_result_release(&res);
	/* a missing input file: the segment fails with the reason, the rest runs */
	run_ns("cat < missing-file; echo next", 30, NULL, &res);
	ck_assert_str_eq(res.output, "next\n\n--- stderr ---\nward: open 'missing-file': No such file or directory\n");
	ward_result_release(&res);
	/* a redirect in a pipeline's middle */
	CK_OK("echo mid | tee f7 | tr m M", "Mid\n");
	CK_FILE("f7", "mid\n");
}
END_TEST

START_TEST(test_variables)
{
	struct ward_result res;

	run_ns("printf '[%s]' $GREETING \"${GREETING}!\" x$UNSET_VAR $UNSET_VAR y", 30,
	       "GREETING=hello there", &res);
	ck_assert_int_eq(res.exit_code, 0);
	/* no field splitting; an unset unquoted word disappears */
	ck_assert_str_eq(res.output, "[hello there][hello there!][x][y]");
	ward_result_release(&res);
	{
		char want[4200];
		char *o = ok("A=1 B=\"$PWD\" printenv A B");

		snprintf(want, sizeof(want), "1\n%s\n", workdir);
		ck_assert_str_eq(o, want);
		free(o);
	}
	/* the environment is the scrubbed one: secrets of the caller are not there */
	setenv("WARD_TEST_API_TOKEN", "s3cret", 1);
	CK_OK("echo \"[$WARD_TEST_API_TOKEN]\"", "[]\n");
	unsetenv("WARD_TEST_API_TOKEN");
	/* a variable holding shell syntax is data, not code */
	run_ns("echo $EVIL", 30, "EVIL=$(touch pwned); rm -rf . | cat", &res);
	ck_assert_str_eq(res.output, "$(touch pwned); rm -rf . | cat\n");
	ward_result_release(&res);
	CK_FILE("pwned", "(missing)");
}
END_TEST

START_TEST(test_deadline)
{
	struct ward_result res;
	const char *m = harness_sleep_marker();
	char cmd[128];

	/* the timeout is for the whole chain, not per segment */
	run_ns("sleep 1; sleep 1; sleep 1; sleep 1; echo late > late.txt", 2, NULL, &res);
	ck_assert(res.timed_out);
	ck_assert_int_eq(res.exit_code, 124);
	ck_assert_int_eq(res.error->kind, WARD_ERR_TIMEOUT);
	ward_result_release(&res);
	CK_FILE("late.txt", "(missing)");
	/* a pipeline that never ends: killed whole when the timeout fires */
	snprintf(cmd, sizeof(cmd), "sleep %s | sleep %s", m, m);
	run_ns(cmd, 1, NULL, &res);
	ck_assert(res.timed_out);
	ward_result_release(&res);
	ck_assert_msg(!harness_cmdline_alive("sleep ", m), "a segment survived the timeout");
}
END_TEST

START_TEST(test_refusals)
{
	static const struct {
		const char *cmd, *msg;
	} cases[] = {
		{ "touch made; echo $(date)", "command substitution is not supported in --no-shell mode at 18" },
		{ "touch made; ls *.c", "glob is not supported in --no-shell mode at 16" },
		{ "touch made; cat <<E\nx\nE", "here-document is not supported in --no-shell mode at 17" },
		{ "touch made; sleep 1 &", "background job '&' is not supported in --no-shell mode at 21" },
		{ "touch made; (ls)", "subshell is not supported in --no-shell mode at 13" },
		{ "touch made; if true; then ls; fi", "if statement is not supported in --no-shell mode at 13" },
		{ "touch made; diff <(ls) x", "process substitution is not supported in --no-shell mode at 18" },
		{ "touch made; echo ~/x", "tilde expansion is not supported in --no-shell mode at 18" },
		{ "touch made; echo 'unterminated", "unterminated single quote at 18" },
		{ "", "empty command" },
	};
	struct ward_result res;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_ns(cases[i].cmd, 30, NULL, &res);
		ck_assert_msg(res.error != NULL, "'%s' ran", cases[i].cmd);
		ck_assert_int_eq(res.error->kind, WARD_ERR_INVALID_PARAMETERS);
		ck_assert_str_eq(res.error->message, cases[i].msg);
		ck_assert(!res.started);
		ck_assert_int_eq(res.exit_code, 125);
		ward_result_release(&res);
		CK_FILE("made", "(missing)"); /* nothing of the chain ran */
	}
}
END_TEST

START_TEST(test_redirect_outside_writable)
{
	struct ward_result res;
	char *other = harness_tmpdir(), cmd[8192], path[4200];
	struct stat st;

	/* /etc is read-only in the sandbox: the open fails inside, with the reason */
	run_ns("echo pwned > /etc/ward-noshell-test; echo still", 30, NULL, &res);
	ck_assert_ptr_nonnull(strstr(res.stderr_text, "ward: open '/etc/ward-noshell-test': "));
	ck_assert_int_eq(strncmp(res.output, "still\n", 6), 0);
	ward_result_release(&res);
	ck_assert_int_eq(stat("/etc/ward-noshell-test", &st), -1);
	/* a host directory outside the workdir is not reachable for writing */
	snprintf(path, sizeof(path), "%s/escaped", other);
	snprintf(cmd, sizeof(cmd), "echo x > %s", path);
	run_ns(cmd, 30, NULL, &res);
	ward_result_release(&res);
	ck_assert_msg(stat(path, &st) == -1, "%s was written from inside the sandbox", path);
	/* and appending to a read-only file of the view fails too */
	run_ns("echo x >> /usr/bin/env", 30, NULL, &res);
	ck_assert_int_eq(res.exit_code, 1);
	ck_assert_ptr_nonnull(strstr(res.stderr_text, "ward: open '/usr/bin/env': "));
	ward_result_release(&res);
	harness_rmtree(other);
	free(other);
}
END_TEST

/* Without the view the host's directories are all there, and a world-writable
 * one outside the workdir and /tmp would take the write: Landlock, entered by
 * init before it opens the redirect, is what refuses it. */
START_TEST(test_redirect_landlock)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char dir[] = "/var/tmp/ward-noshell.XXXXXX", cmd[1024], path[256];
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0777), 0);
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(cmd, sizeof(cmd), "echo x > %s; echo x >> %s; cat <> %s", path, path, path);
	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.view = false;
	cfg.timeout = 30;
	ck_assert_int_eq(ward_run_noshell(&cfg, cmd, &res, &err), 0);
	ck_assert_msg(res.fenced && res.fences.landlock.abi > 0, "no Landlock: %s", res.output);
	ck_assert_int_eq(res.exit_code, 1);
	{
		char want[600];

		snprintf(want, sizeof(want), "ward: open '%s': Permission denied\n", path);
		ck_assert_ptr_nonnull(strstr(res.stderr_text, want));
	}
	ck_assert_int_eq(stat(path, &st), -1);
	ward_result_release(&res);
	/* the same redirect into the workdir is fine */
	snprintf(cmd, sizeof(cmd), "echo ok > %s/in-workdir", workdir);
	ck_assert_int_eq(ward_run_noshell(&cfg, cmd, &res, &err), 0);
	ck_assert_int_eq(res.exit_code, 0);
	ward_result_release(&res);
	CK_FILE("in-workdir", "ok\n");
	ward_config_release(&cfg);
	rmdir(dir);
}
END_TEST

START_TEST(test_cli)
{
	char *ward = harness_path("ward");
	char *a1[] = { ward, "run", "-C", workdir, "--no-shell", "-c", "echo abc | tr a x", NULL };
	char *a2[] = { ward, "run", "-C", workdir, "--no-shell", "-c", "echo $(id)", NULL };
	char *a3[] = { ward, "run", "--no-shell", "--", "true", NULL };
	char *a4[] = { ward, "run", "-C", workdir, "--json", NULL };
	char *out = NULL, *err = NULL, req[8192];
	int status;
	json_t *o;

	status = harness_capture(a1, &out, &err);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_str_eq(out, "xbc\n");
	free(out);
	free(err);
	status = harness_capture(a2, &out, &err);
	ck_assert_int_eq(WEXITSTATUS(status), 125);
	ck_assert_ptr_nonnull(strstr(err, "command substitution is not supported in --no-shell mode at 6"));
	free(out);
	free(err);
	status = harness_capture(a3, &out, &err);
	ck_assert_int_eq(WEXITSTATUS(status), 125);
	ck_assert_ptr_nonnull(strstr(err, "--no-shell runs a -c 'STRING'"));
	free(out);
	free(err);
	snprintf(req, sizeof(req), "{\"command\": \"echo a && echo b | tr b c\", \"shell\": false}");
	status = harness_capture_input(a4, req, &out, NULL);
	o = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "a\nc\n");
	json_decref(o);
	free(out);
	snprintf(req, sizeof(req), "{\"command\": \"echo `id`\", \"shell\": false}");
	status = harness_capture_input(a4, req, &out, NULL);
	ck_assert_int_eq(WEXITSTATUS(status), 125);
	o = json_loads(out, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "message")),
			 "command substitution is not supported in --no-shell mode at 6");
	json_decref(o);
	free(out);
	/* "shell": true (or absent) is the shell */
	snprintf(req, sizeof(req), "{\"command\": \"echo $((1+2))\", \"shell\": true}");
	status = harness_capture_input(a4, req, &out, NULL);
	o = json_loads(out, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "3\n");
	json_decref(o);
	free(out);
	snprintf(req, sizeof(req), "{\"command\": \"true\", \"shell\": \"no\"}");
	status = harness_capture_input(a4, req, &out, NULL);
	ck_assert_ptr_nonnull(strstr(out, "request: shell: unknown shell 'no' (known: sh, bash, true, false)"));
	free(out);
	free(ward);
}
END_TEST

START_TEST(test_sandbox_off)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.mode = WARD_SANDBOX_OFF;
	ck_assert_int_eq(ward_run_noshell(&cfg, "echo off > o.txt && cat o.txt | tr o 0 && sh -c 'exit 5'",
					  &res, &err), 0);
	ck_assert(!res.sandboxed);
	ck_assert_str_eq(res.output, "0ff\n");
	ck_assert_int_eq(res.exit_code, 5);
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("noshell");
	TCase *run = harness_tcase(s, "noshell", "userns");
	TCase *fence = harness_tcase(s, "noshell-fences", "userns landlock");
	TCase *off = harness_tcase(s, "noshell-off", NULL);

	tcase_add_checked_fixture(run, setup, teardown);
	tcase_add_checked_fixture(fence, setup, teardown);
	tcase_add_checked_fixture(off, setup, teardown);
	tcase_add_test(run, test_pipes);
	tcase_add_test(run, test_exit_chaining);
	tcase_add_test(run, test_redirects);
	tcase_add_test(run, test_variables);
	tcase_add_test(run, test_deadline);
	tcase_add_test(run, test_refusals);
	tcase_add_test(run, test_cli);
	tcase_add_test(fence, test_redirect_outside_writable);
	tcase_add_test(fence, test_redirect_landlock);
	tcase_add_test(off, test_sandbox_off);
	return harness_main(s);
}
