/* test-layers.c — each layer of the sandbox proven on its own: the view's
 * read-only root and system directories with Landlock and seccomp off,
 * Landlock with the view and seccomp off, seccomp with Landlock off. Each
 * test fails if its one layer is removed (tests/mutants/list names them),
 * however well the others hold.
 *
 * They write only where they own the place: the sandbox's own root (a
 * tmpfs), a directory the test made, a tmpfs the test mounted over
 * /usr/local in a mount namespace of its own. */
#include "harness.h"
#include "ward/sandbox.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char *workdir, *outside;

static void setup(void)
{
	char tmpl[] = "/var/tmp/ward-layers-XXXXXX";

	workdir = harness_tmpdir();
	/* not under /tmp, which the sandbox may write; writable to anyone, so
	 * that only Landlock stands in the way */
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	chmod(tmpl, 0777);
	outside = strdup(tmpl);
}

static void teardown(void)
{
	harness_rmtree(workdir);
	harness_rmtree(outside);
	free(workdir);
	free(outside);
}

/* The sandbox with only the layers asked for. */
static void config(struct ward_config *cfg, bool view, bool landlock, bool seccomp)
{
	ward_config_init(cfg);
	ck_assert_int_eq(ward_config_set_workdir(cfg, workdir, NULL), 0);
	cfg->view = view;
	cfg->landlock = landlock ? WARD_LANDLOCK_REQUIRED : WARD_LANDLOCK_OFF;
	free(cfg->seccomp);
	cfg->seccomp = strdup(seccomp ? "default" : "off");
}

static char *run(struct ward_config *cfg, const char *cmd)
{
	struct ward_result res;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL }, *out;

	ck_assert_msg(ward_run(cfg, argv, &res, &err) == 0, "%s", err ? err->message : "");
	ck_assert_msg(res.exit_code == 0 && res.started, "'%s': exit %d %s: %s", cmd,
		      res.exit_code, res.error ? res.error->message : "", res.output);
	out = strdup(res.output);
	ward_result_release(&res);
	return out;
}

/* `touch PATH` inside: "written", or the error touch printed */
static char *try_write(struct ward_config *cfg, const char *path)
{
	char cmd[4300];

	snprintf(cmd, sizeof(cmd), "touch '%s' 2>&1 && echo written || true", path);
	return run(cfg, cmd);
}

/* The view alone: its root is read-only although no Landlock rule and no
 * seccomp filter stand behind it. (The root is the sandbox's own tmpfs: a
 * write there, were it allowed, would touch nothing of the host.) */
START_TEST(test_view_root_alone)
{
	struct ward_config cfg;
	char path[64], *out;

	config(&cfg, true, false, false);
	snprintf(path, sizeof(path), "/ward-layers-%ld", (long)getpid());
	out = try_write(&cfg, path);
	ck_assert_msg(strstr(out, "Read-only file system") && !strstr(out, "written"), "%s", out);
	free(out);
	/* and the workdir stays writable: the refusal is the root's, not a
	 * broken sandbox's */
	out = try_write(&cfg, "in-workdir");
	ck_assert_str_eq(out, "written\n");
	free(out);
	ward_config_release(&cfg);
}
END_TEST

/* The view alone, for a system directory: /usr is bound read-only. The test
 * runs in a mount namespace of its own with a tmpfs of its own on
 * /usr/local, so that a write the view failed to refuse lands there and
 * nowhere on the host. Root only: as another user the host's file modes
 * would refuse the write before the mount does. */
START_TEST(test_sysdir_alone)
{
	struct ward_config cfg;
	char path[128], *out;

	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", "/usr/local", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"),
			 0);
	config(&cfg, true, false, false);
	snprintf(path, sizeof(path), "/usr/local/ward-layers-%ld", (long)getpid());
	out = try_write(&cfg, path);
	ck_assert_msg(strstr(out, "Read-only file system") && !strstr(out, "written"), "%s", out);
	ck_assert_int_eq(access(path, F_OK), -1);
	free(out);
	ward_config_release(&cfg);
}
END_TEST

/* Landlock alone: without the view the host's tree is there, and a
 * directory writable to anyone outside the workdir is refused by Landlock
 * only (seccomp off too). */
START_TEST(test_landlock_alone)
{
	struct ward_config cfg;
	char path[4200], *out;

	config(&cfg, false, true, false);
	snprintf(path, sizeof(path), "%s/f", outside);
	out = try_write(&cfg, path);
	ck_assert_msg(strstr(out, "Permission denied") && !strstr(out, "written"), "%s", out);
	ck_assert_int_eq(access(path, F_OK), -1);
	free(out);
	out = try_write(&cfg, "in-workdir");
	ck_assert_str_eq(out, "written\n");
	free(out);
	ward_config_release(&cfg);
}
END_TEST

/* seccomp alone: a new user namespace is refused by the filter (EPERM)
 * with Landlock off; nothing else in the sandbox forbids one. */
START_TEST(test_seccomp_alone)
{
	struct ward_config cfg;
	char *out;

	config(&cfg, true, false, true);
	out = run(&cfg, "unshare -U true 2>&1 && echo made || true");
	ck_assert_msg(strstr(out, "Operation not permitted") && !strstr(out, "made"), "%s", out);
	free(out);
	ward_config_release(&cfg);
	/* the same without the filter: the namespace is made, or refused by
	 * the sandbox's user-namespace budget of 0 (ENOSPC), never EPERM: the
	 * refusal above is seccomp's */
	config(&cfg, true, false, false);
	out = run(&cfg, "unshare -U true 2>&1 && echo made || true");
	ck_assert_msg((strstr(out, "made") || strstr(out, "No space left on device")) &&
			      !strstr(out, "Operation not permitted"),
		      "%s", out);
	free(out);
	ward_config_release(&cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layers");
	TCase *tc;

	tc = harness_tcase(s, "view-alone", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_view_root_alone);
	tc = harness_tcase(s, "sysdir-alone", "root userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sysdir_alone);
	tc = harness_tcase(s, "landlock-alone", "userns landlock");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_landlock_alone);
	tc = harness_tcase(s, "seccomp-alone", "userns seccomp");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_seccomp_alone);
	return harness_main(s);
}
