/* test-setid.c — no command may leave a set-user-ID or set-group-ID file, or
 * a file capability, in the workdir, however it tries: every system call
 * that sets a mode (tests/helpers/setid-probe.c), and the tools that copy
 * modes (install -m, cp -p, cp -a, tar -xp) from a set-id file the test
 * offers read-only; with a shell, without one, and in a session's shared
 * sandbox. What the host finds in the workdir afterwards is what counts.
 * Ordinary work (chmod +x, chmod 755, cp -a, tar, git) keeps working. */
#include "harness.h"
#include "ward/policy.h"
#include "ward/sandbox.h"
#include "ward/session.h"

#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static char *workdir, *src, *probe;

/* The tools' attempts: each may fail; only what is left counts. */
static const char tools[] =
	"install -m 4755 /src/suid installed ; cp -p /src/suid cp-p ; cp -a /src/suid cp-a ; "
	"cp -a /src/sgid-dir cp-a-dir ; mkdir -p untar ; tar -xpf /src/setid.tar -C untar ; "
	"cp /src/suid plain ; chmod u+s plain ; chmod g+s plain ; chmod 6755 plain ; "
	"mkdir -m 2755 mkdir-m ; mkdir sgid ; chmod g+s sgid ; install -d -m 2775 install-d ; true";

static void setup(void)
{
	char *cmd;

	workdir = harness_tmpdir();
	src = harness_tmpdir();
	probe = harness_path("tests/helpers/setid-probe");
	/* a set-user-ID file, a set-group-ID directory and an archive of both,
	 * made on the host: the command only reads them */
	ck_assert_int_ne(asprintf(&cmd,
				  "cd '%s' && cp /bin/true suid && chmod 4755 suid && "
				  "mkdir sgid-dir && chmod 2755 sgid-dir && tar -cf setid.tar suid sgid-dir",
				  src),
			 -1);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

static void teardown(void)
{
	harness_rmtree(workdir);
	harness_rmtree(src);
	free(workdir);
	free(src);
	free(probe);
}

static char found[4096];

static int scan_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char cap[64];

	if (S_ISLNK(st->st_mode))
		return 0;
	if (st->st_mode & (S_ISUID | S_ISGID))
		snprintf(found + strlen(found), sizeof(found) - strlen(found), "%s mode %o\n", path,
			 (unsigned)st->st_mode);
	if (lgetxattr(path, "security.capability", cap, sizeof(cap)) >= 0)
		snprintf(found + strlen(found), sizeof(found) - strlen(found),
			 "%s has security.capability\n", path);
	return 0;
}

/* Nothing in the workdir with a set-id bit or a file capability. */
static void assert_clean(const char *what, const char *out)
{
	found[0] = '\0';
	ck_assert_int_eq(nftw(workdir, scan_one, 16, FTW_PHYS), 0);
	ck_assert_msg(found[0] == '\0', "%s left set-id files:\n%s\noutput:\n%s", what, found,
		      out ? out : "");
}

static int ward_cli(char *const extra[], char **out, char **err)
{
	char *ward = harness_path("ward"), *argv[32];
	int n = 0, status;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)harness_fences_policy_opt();
	argv[n++] = (char *)"-C";
	argv[n++] = workdir;
	argv[n++] = (char *)"--ro-bind";
	argv[n++] = src;
	argv[n++] = (char *)"/src";
	argv[n++] = (char *)"--ro-bind";
	argv[n++] = probe;
	argv[n++] = (char *)"/probe";
	for (int i = 0; extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	status = harness_capture(argv, out, err);
	free(ward);
	return status;
}

START_TEST(test_calls)
{
	char *out = NULL, *err = NULL, *line, *save = NULL, *copy;
	char *extra[] = { (char *)"--", (char *)"/probe", workdir, NULL };
	int status = ward_cli(extra, &out, &err), n = 0;

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s%s", out, err);
	copy = strdup(out);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *r = strchr(line, ' ');

		ck_assert_ptr_nonnull(r);
		n++;
		if (strncmp(line, "openat2 ", 8) == 0)
			ck_assert_msg(strcmp(r + 1, "ENOSYS") == 0, "%s", line);
		else
			ck_assert_msg(strcmp(r + 1, "EPERM") == 0, "not refused: %s", line);
	}
	ck_assert_int_ge(n, 20);
	assert_clean("setid-probe", out);
	free(copy);
	free(out);
	free(err);
}
END_TEST

/* Tools that keep modes, through the shell (_i 0) and without one (_i 1). */
START_TEST(test_tools_cli)
{
	char *out = NULL, *err = NULL;
	char *shell[] = { (char *)"-c", (char *)tools, NULL };
	char *noshell[] = { (char *)"--no-shell", (char *)"-c", (char *)tools, NULL };
	int status = ward_cli(_i ? noshell : shell, &out, &err);

	ck_assert_msg(WIFEXITED(status), "%d", status);
	/* the copies themselves were made, without the bits (cp's chmod to
	 * 4755 failing leaves the 0700 it created the file with) */
	{
		char p[4096];
		struct stat st;

		snprintf(p, sizeof(p), "%s/cp-a", workdir);
		ck_assert_msg(stat(p, &st) == 0, "cp -a made nothing: %s%s", out, err);
		snprintf(p, sizeof(p), "%s/untar/suid", workdir);
		ck_assert_msg(stat(p, &st) == 0, "tar -x made nothing: %s%s", out, err);
	}
	assert_clean(_i ? "tools (no shell)" : "tools (shell)", err);
	free(out);
	free(err);
}
END_TEST

/* The same in a session's shared sandbox, whose init forks each command. */
START_TEST(test_tools_session)
{
	struct ward_config cfg;
	struct ward_session_options opt;
	struct ward_session *s = NULL;
	struct ward_session_result r;
	struct ward_error *err = NULL;
	static const char policy[] = "{\"validators\": {\"enabled\": false}, "
				     "\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}}";
	char cmd[256];

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_policy_apply(policy, sizeof(policy) - 1, "test", &cfg, &err), 0);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, NULL), 0);
	ck_assert_int_eq(ward_config_add_mount(&cfg, WARD_MOUNT_RO_BIND, src, "/src", NULL), 0);
	ck_assert_int_eq(ward_config_add_mount(&cfg, WARD_MOUNT_RO_BIND, probe, "/probe", NULL),
			 0);
	ward_session_options_init(&opt);
	opt.isolation = WARD_SESSION_SHARED;
	ck_assert_msg(ward_session_new(&cfg, &opt, &s, &err) == 0, "%s", err ? err->message : "");
	ck_assert_int_eq(ward_session_exec(s, tools, NULL, &r, &err), 0);
	ward_session_result_release(&r);
	snprintf(cmd, sizeof(cmd), "/probe %s", workdir);
	ck_assert_int_eq(ward_session_exec(s, cmd, NULL, &r, &err), 0);
	ck_assert_msg(!strstr(r.run.output, " ok"), "not refused:\n%s", r.run.output);
	assert_clean("session", r.run.output);
	ward_session_result_release(&r);
	ward_session_free(s);
	ward_session_options_release(&opt);
	ward_config_release(&cfg);
}
END_TEST

/* Ordinary modes still work. */
START_TEST(test_ordinary)
{
	char *out = NULL, *err = NULL;
	char *extra[] = {
		(char *)"-c",
		(char *)"set -e; echo x > x; chmod +x x; chmod 755 x; chmod go-rx x; chmod 700 x; "
			"cp -a x y; install -m 755 x z; mkdir -m 1777 sticky; mkdir d; chmod 750 d; "
			"tar -cf t.tar x y z d; mkdir u; tar -xpf t.tar -C u; umask 022; "
			"touch n; stat -c '%a %n' x y z d sticky n u/x",
		NULL
	};
	int status = ward_cli(extra, &out, &err);

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s%s", out, err);
	ck_assert_str_eq(out, "700 x\n700 y\n755 z\n750 d\n1777 sticky\n644 n\n700 u/x\n");
	free(out);
	free(err);
}
END_TEST

START_TEST(test_git)
{
	char *out = NULL, *err = NULL;
	char *extra[] = {
		(char *)"-c",
		(char *)"set -e; export HOME=$PWD; git init -q g; cd g; git config user.email a@b; "
			"git config user.name n; echo hi > f; chmod +x f; git add f; git commit -qm m; "
			"git checkout -q -b b2; echo ho >> f; git commit -qam m2; git checkout -q -; "
			"git merge -q b2; git log --oneline | wc -l",
		NULL
	};
	int status = ward_cli(extra, &out, &err);

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s%s", out, err);
	ck_assert_str_eq(out, "2\n");
	free(out);
	free(err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("setid");
	TCase *tc = harness_tcase(s, "setid", "userns seccomp");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_calls);
	tcase_add_loop_test(tc, test_tools_cli, 0, 2);
	tcase_add_test(tc, test_tools_session);
	tcase_add_test(tc, test_ordinary);
	tc = harness_tcase(s, "git", "userns seccomp devtools");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_git);
	return harness_main(s);
}
