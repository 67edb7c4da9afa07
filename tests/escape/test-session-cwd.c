/* test-session-cwd.c — a command moving its session out of the workdir
 * through the directory its report names. After each command the shell
 * reports where it stands, one line (`pwd -P`), and the session takes it
 * when it is inside the workdir — a lexical check of an absolute path
 * without "." or ".." in it. A directory whose name holds a newline makes
 * that line a prefix of the real path: in a directory named "..\nx" of the
 * workdir the line is "WORKDIR/..", the workdir's parent, which a check
 * for "/../" and "/./" inside the path alone let through; the next
 * command then started there. The shell's own code can report the same
 * line through a trap of its own. And "WORKDIR/lnk", where lnk is a
 * symbolic link to /etc, passed the lexical check: the next command
 * started in /etc. Neither may move the session: the next
 * command starts in the workdir, and the result says which directory was
 * refused. In both isolation modes. */
#include "harness.h"
#include "ward/sandbox.h"
#include "ward/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static struct ward_session *open_session_in(int isolation, enum ward_session_shell shell)
{
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	ward_session_options_init(&o);
	o.isolation = isolation ? WARD_SESSION_SHARED : WARD_SESSION_FRESH;
	o.shell = shell;
	ck_assert_msg(ward_session_new(&cfg, &o, &s, &err) == 0, "session: %s",
		      err ? err->message : "?");
	ward_session_options_release(&o);
	ward_config_release(&cfg);
	return s;
}

static struct ward_session *open_session(int isolation)
{
	return open_session_in(isolation, WARD_SESSION_SHELL_DEFAULT);
}

static void run(struct ward_session *s, const char *cmd, struct ward_session_result *r)
{
	struct ward_error *err = NULL;

	ck_assert_msg(ward_session_exec(s, cmd, NULL, r, &err) == 0, "exec: %s",
		      err ? err->message : "?");
}

/* Loop index: bit 0 the isolation (fresh, shared), the rest the way: a
 * directory named "..\nx", the command's own trap, or a directory named
 * "lnk\nx" beside a symbolic link lnk to /etc (the line names the link). */
START_TEST(test_dotdot_line)
{
	static const char *const ways[] = {
		"mkdir -p $'..\\nx' && cd $'..\\nx'",
		"trap '{ echo \"$PWD/..\"; echo \"$PWD\"; printf \"\\0U\\0Z\\0\"; } >&3' EXIT",
		"ln -s /etc lnk && mkdir $'lnk\\nx' && cd $'lnk\\nx'",
	};
	struct ward_session *s;
	struct ward_session_result r;
	char want[4096];

	s = open_session(_i & 1);
	run(s, ways[_i >> 1], &r);
	ck_assert_msg(r.run.exit_code == 0, "'%s': exit %d\n%s", ways[_i >> 1], r.run.exit_code,
		      r.run.output);
	ck_assert_msg(strcmp(r.cwd, workdir) == 0,
		      "the session moved to '%s' (its workdir: '%s')", r.cwd, workdir);
	ward_session_result_release(&r);
	run(s, "pwd", &r);
	snprintf(want, sizeof(want), "%s\n", workdir);
	ck_assert_msg(strcmp(r.run.output, want) == 0,
		      "the next command started in '%s', not the workdir '%s'", r.run.output,
		      workdir);
	ward_session_result_release(&r);
	ward_session_free(s);
}
END_TEST

/* The directory a session keeps, made something else by a later command:
 * replaced by a symbolic link to /etc (the command ends in /etc, which the
 * report names and the session refuses: it "stays" where the link now is),
 * or a function of the state named cd that goes to /etc (bash). The next
 * command must start inside the workdir all the same. Loop index: bit 0 the
 * isolation, then the way: the link with bash, the function, the link with
 * sh. */
START_TEST(test_kept_dir_replaced)
{
	static const char *const ways[][2] = {
		{ "mkdir d && cd d", "cd .. && rmdir d && ln -s /etc d && cd /etc" },
		{ "cd() { builtin cd /etc; }", "true" },
		{ "mkdir d && cd d", "cd .. && rmdir d && ln -s /etc d && cd /etc" },
	};
	struct ward_session *s;
	struct ward_session_result r;
	int k;

	if (access("/bin/bash", X_OK) != 0 && (_i >> 1) < 2)
		return; /* bash's, and the default shell is sh */
	s = open_session_in(_i & 1,
			    (_i >> 1) == 2 ? WARD_SESSION_SHELL_SH : WARD_SESSION_SHELL_BASH);
	for (k = 0; k < 2; k++) {
		run(s, ways[_i >> 1][k], &r);
		ward_session_result_release(&r);
	}
	run(s, "pwd -P", &r);
	ck_assert_msg(strncmp(r.run.output, workdir, strlen(workdir)) == 0 &&
			      strchr("/\n", r.run.output[strlen(workdir)]),
		      "the command started in '%s', outside the workdir '%s' (session: '%s')",
		      r.run.output, workdir, r.cwd);
	ward_session_result_release(&r);
	ward_session_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("session-cwd");
	TCase *tc = harness_tcase(s, "dotdot", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_dotdot_line, 0, 6);
	tcase_add_loop_test(tc, test_kept_dir_replaced, 0, 6);
	return harness_main(s);
}
