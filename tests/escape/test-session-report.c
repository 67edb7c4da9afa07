/* test-session-report.c — a command forging its session's state report
 * (issue 17). After each command of a bash session the shell's trap writes
 * where it ended and its state on fd 3, and the session takes it. A program
 * the command runs takes that channel from its parent shell (pidfd_getfd, or
 * /proc/PPID/fd for a pipe) and writes a whole report of its own first: a
 * directory, a variable, an exported variable, an alias. None of it may be
 * taken — the result says the report was not the shell's, and the next
 * command sees the session as it was. In both isolation modes. */
#include "harness.h"
#include "ward/env.h"
#include "ward/sandbox.h"
#include "ward/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *workdir;

static void setup(void)
{
	char *rel = harness_path("tests/helpers/report-forger"), cmd[8192];

	workdir = harness_tmpdir();
	/* the forger runs inside: a copy in the workdir, which the view has */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/report-forger' && mkdir '%s/forged'", rel, workdir,
		 workdir);
	ck_assert_int_eq(system(cmd), 0);
	free(rel);
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
}

static struct ward_session *open_session(int i)
{
	struct ward_config cfg;
	struct ward_session_options o;
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	ward_session_options_init(&o);
	o.isolation = i == 0 ? WARD_SESSION_FRESH : WARD_SESSION_SHARED;
	ck_assert_msg(ward_session_new(&cfg, &o, &s, &err) == 0, "session: %s",
		      err ? err->message : "?");
	ward_session_options_release(&o);
	ward_config_release(&cfg);
	return s;
}

static void run(struct ward_session *s, const char *cmd, struct ward_session_result *r)
{
	struct ward_error *err = NULL;

	ck_assert_msg(ward_session_exec(s, cmd, NULL, r, &err) == 0, "exec: %s",
		      err ? err->message : "?");
	ck_assert_msg(r->run.exit_code == 0, "'%s': exit %d\n%s", cmd, r->run.exit_code,
		      r->run.output);
}

START_TEST(test_forged_report)
{
	struct ward_session *s;
	struct ward_session_result r;
	char cmd[8192];
	char **aliases;
	size_t k;

	if (access("/bin/bash", X_OK) != 0)
		return; /* the state (and this report) is bash's */
	s = open_session(_i);
	snprintf(cmd, sizeof(cmd), "KEEP=1; '%s/report-forger' '%s/forged'", workdir, workdir);
	run(s, cmd, &r);
	/* the forger got hold of the channel: otherwise this proves nothing */
	ck_assert_msg(strstr(r.run.output, "forged fd"), "the forger found no channel:\n%s",
		      r.run.output);
	ck_assert_msg(r.state_note && strstr(r.state_note, "another process"),
		      "the forged report was taken (note: %s)", r.state_note ? r.state_note : "none");
	ck_assert_msg(strcmp(r.cwd, workdir) == 0, "moved to '%s' by the forged report", r.cwd);
	ward_session_result_release(&r);
	/* the session as before the command: nothing forged, nor the
	 * command's own KEEP (the report was not the shell's alone) */
	run(s, "echo \"${FORGED_STATE-none}:${FORGED_ENV-none}:${KEEP-none}\"; pwd", &r);
	snprintf(cmd, sizeof(cmd), "none:none:none\n%s\n", workdir);
	ck_assert_msg(strcmp(r.run.output, cmd) == 0, "after the forgery: '%s'", r.run.output);
	ward_session_result_release(&r);
	aliases = ward_session_aliases(s);
	for (k = 0; aliases && aliases[k]; k++)
		ck_assert_msg(strncmp(aliases[k], "forged_alias", 12) != 0, "forged alias taken");
	ward_env_free(aliases);
	/* and the session goes on keeping what its shell reports */
	run(s, "LATER=2", &r);
	ck_assert_ptr_null(r.state_note);
	ward_session_result_release(&r);
	run(s, "echo \"$LATER\"", &r);
	ck_assert_str_eq(r.run.output, "2\n");
	ward_session_result_release(&r);
	ward_session_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("session-report");
	TCase *tc = harness_tcase(s, "forge", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_forged_report, 0, 2);
	return harness_main(s);
}
