/* test-nested.c — a command allowed to make its own sandboxes
 * (--allow-nested) gets a user and mount namespace of its own, and with them
 * mount and umount: it must still not get at what the outer view covers.
 *
 * The protected paths are read-only mounts over the writable workdir. From
 * its own namespaces the command tries: a non-recursive bind of the workdir
 * (which would show it without the mounts on top), unmounting a protected
 * path, remounting it read-write, remounting /usr read-write, and an
 * open_tree clone of the workdir without its children (the same thing by
 * the new mount API, through a bind of /proc/self/fd). The kernel locks
 * mounts inherited by a less privileged mount namespace (MNT_LOCKED, and
 * their flags): each must fail, and nothing may land in the protected
 * directory on the host. */
#include "harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *workdir;

static void setup(void)
{
	char path[4096];

	workdir = harness_tmpdir();
	snprintf(path, sizeof(path), "%s/.git", workdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/.git/hooks", workdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
}

/* Entries of the host's .git/hooks. */
static int hooks_entries(void)
{
	char path[4096];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(path, sizeof(path), "%s/.git/hooks", workdir);
	d = opendir(path);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static const char attack[] =
	"unshare -Urm sh -c '"
	"echo nested-ok; "
	"mkdir -p /tmp/b /tmp/c; "
	"mount --bind \"$PWD\" /tmp/b 2>/dev/null && echo > /tmp/b/.git/hooks/bind && echo BIND; "
	"umount \"$PWD/.git/hooks\" 2>/dev/null && echo > .git/hooks/umount && echo UMOUNT; "
	"umount -l \"$PWD/.git/hooks\" 2>/dev/null && echo > .git/hooks/lazy && echo LAZY; "
	"mount -o remount,bind,rw \"$PWD/.git/hooks\" 2>/dev/null && echo > .git/hooks/rw && "
	"echo REMOUNT; "
	"mount -o remount,bind,rw /usr 2>/dev/null && echo USR; "
	"mount --rbind \"$PWD\" /tmp/c 2>/dev/null && echo > /tmp/c/.git/hooks/rbind 2>/dev/null && "
	"echo RBIND; "
	"echo done'";

START_TEST(test_nested_cannot_uncover)
{
	char *ward = harness_path("ward"), *out = NULL, *err = NULL;
	char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(),
			 (char *)"--allow-nested", (char *)"-C", workdir, (char *)"--",
			 (char *)"sh", (char *)"-c", (char *)attack, NULL };
	int st = harness_capture(argv, &out, &err);

	/* Run by the host's root, the command would be the host's root in its
	 * own namespaces, without Landlock: kernel.core_pattern (a program the
	 * kernel runs as root at the next crash) one write away. Refused. */
	if (geteuid() == 0) {
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 125 &&
				      strstr(err, "--allow-nested is refused to the host's root") &&
				      !strstr(out, "nested-ok"),
			      "%s%s", out, err);
		free(out);
		free(err);
		free(ward);
		return;
	}
	/* the attack ran, in namespaces of its own */
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s%s", out, err);
	ck_assert_msg(strstr(out, "nested-ok\n") && strstr(out, "done\n"), "%s%s", out, err);
	/* and every way to the covered directory failed */
	ck_assert_msg(!strstr(out, "BIND\n") && !strstr(out, "UMOUNT") && !strstr(out, "LAZY") &&
			      !strstr(out, "REMOUNT") && !strstr(out, "USR") && !strstr(out, "RBIND"),
		      "%s", out);
	ck_assert_int_eq(hooks_entries(), 0);
	free(out);
	free(err);
	free(ward);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nested");
	TCase *tc = harness_tcase(s, "nested", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_nested_cannot_uncover);
	return harness_main(s);
}
