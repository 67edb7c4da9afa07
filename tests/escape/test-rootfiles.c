/* test-rootfiles.c — files only the host's root may read, in the system
 * directories the view shows (/usr, /etc, ...).
 *
 * When ward runs as root, root inside the sandbox is the host's root (uid 0
 * maps to uid 0): the owner of every root-owned file, so that file modes
 * alone kept nothing from it — with every capability dropped, a 0600 file
 * of root's (/etc/wireguard/wg0.conf, /etc/ssl/private keys,
 * /etc/kubernetes/admin.conf, /etc/krb5.keytab ...) was the command's to
 * read, and a short list of masks covered only /etc/shadow and a few more.
 * The view now shows the system directories through idmapped mounts in which
 * root's files are nobody's: the command reads what others may read, and no
 * more, whatever the file's name.
 *
 * The test gives itself such files without touching the host's: in a mount
 * namespace of its own (which ward inherits), a tmpfs over /usr/local holds
 * them. Root only: for any other user the sandbox's uid is the caller's own,
 * and modes already protect root's files from it.
 *
 * The same root inside, with Landlock off, and /proc's kernel knobs: below. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A directory every FHS system has under /usr, covered by the test's tmpfs. */
static const char *cover(void)
{
	static const char *const dirs[] = { "/usr/local", "/usr/share", "/usr/lib" };
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (lstat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
			return dirs[i];
	ck_abort_msg("no directory under /usr to cover");
	return NULL;
}

static void put(const char *dir, const char *name, mode_t mode, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "create '%s'", path);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* The test's own tmpfs over a directory of /usr, in its own mount
 * namespace (ward inherits it): the root-owned files are the test's. */
static const char *covered(void)
{
	const char *d;

	ck_assert(harness_private_mounts(false));
	d = cover();
	ck_assert_msg(mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") == 0,
		      "mount tmpfs on '%s'", d);
	return d;
}

/* `ward run [--landlock off] -- sh -c script` in a workdir of its own;
 * its wait status, *out and *err to free. */
static int run_sh(bool landlock_off, const char *script, char **out, char **err)
{
	char *ward = harness_path("ward"), *wd = harness_tmpdir();
	char *argv[16];
	int n = 0, st;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)harness_fences_policy_opt();
	if (landlock_off) {
		argv[n++] = (char *)"--landlock";
		argv[n++] = (char *)"off";
	}
	argv[n++] = (char *)"-C";
	argv[n++] = wd;
	argv[n++] = (char *)"--";
	argv[n++] = (char *)"sh";
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)script;
	argv[n] = NULL;
	st = harness_capture(argv, out, err);
	harness_rmtree(wd);
	free(wd);
	free(ward);
	return st;
}

START_TEST(test_root_only_files)
{
	char *out = NULL, *err = NULL;
	const char *d = covered();
	char sub[4096], script[8192];
	int st;

	put(d, "public", 0644, "PUBLIC-kern1\n");
	put(d, "owner-only", 0600, "SECRET-kern-600\n");
	put(d, "group-too", 0640, "SECRET-kern-640\n");
	put(d, "owner-rw-all-w", 0602, "SECRET-kern-602\n");
	snprintf(sub, sizeof(sub), "%s/private", d);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put(sub, "inside", 0644, "SECRET-kern-dir\n");

	snprintf(script, sizeof(script),
		 "cd %s; cat public; cat owner-only; cat group-too; cat owner-rw-all-w; "
		 "cat private/inside; ls private; echo end",
		 d);
	st = run_sh(false, script, &out, &err);
	/* the view works: what anyone may read is read */
	ck_assert_msg(WIFEXITED(st), "%s%s", out, err);
	ck_assert_msg(strstr(out, "PUBLIC-kern1\n") && strstr(out, "end\n"), "%s%s", out, err);
	/* and nothing only root (owner or group) may read */
	ck_assert_msg(!strstr(out, "SECRET-") && !strstr(out, "inside"), "read as host root:\n%s",
		      out);
	free(out);
	free(err);
}
END_TEST

/* Writing stays refused too (the view is read-only), and the idmapped tree
 * does not make root's files the command's to change through their mode. */
START_TEST(test_root_files_unchanged)
{
	char *out = NULL, *err = NULL;
	const char *d = covered();
	char script[8192], path[4096];
	struct stat sb;
	int st;

	put(d, "owner-only", 0600, "SECRET-kern-600\n");
	snprintf(script, sizeof(script),
		 "cd %s; chmod 0644 owner-only; chown 0:0 owner-only; echo x >> owner-only; "
		 "echo end",
		 d);
	st = run_sh(false, script, &out, &err);
	ck_assert_msg(WIFEXITED(st) && strstr(out, "end\n"), "%s%s", out, err);
	snprintf(path, sizeof(path), "%s/owner-only", d);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0600);
	ck_assert_int_eq(sb.st_size, (off_t)strlen("SECRET-kern-600\n"));
	free(out);
	free(err);
}
END_TEST

/* Landlock off (or best-effort on a kernel without it): nothing of Landlock's
 * write rule is there, and host root inside may write what the kernel lets
 * the host's root write in /proc — every sysctl: core_pattern names a
 * program the kernel runs as root on the host at the next crash. The knobs
 * are read-only in the view then. Each is only opened for writing (nothing
 * written): `: >>` opens and closes. */
START_TEST(test_proc_knobs_landlock_off)
{
	static const char *const knobs[] = { "/proc/sys/kernel/core_pattern",
					     "/proc/sys/vm/drop_caches",
					     "/proc/sys/kernel/poweroff_cmd",
					     "/proc/irq/default_smp_affinity" };
	char *out = NULL, *err = NULL;
	char script[4096] = "";
	size_t len = 0;
	int st;

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		len += (size_t)snprintf(script + len, sizeof(script) - len,
					"( : >> %s ) 2>/dev/null && echo OPENED %s; ", knobs[i],
					knobs[i]);
	snprintf(script + len, sizeof(script) - len,
		 "cat /proc/sys/kernel/core_pattern >/dev/null && echo readable; echo end");
	st = run_sh(true, script, &out, &err);
	ck_assert_msg(WIFEXITED(st) && strstr(out, "readable\nend\n"), "%s%s", out, err);
	ck_assert_msg(!strstr(out, "OPENED"), "host knobs writable from inside:\n%s", out);
	free(out);
	free(err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rootfiles");
	TCase *tc = harness_tcase(s, "rootfiles", "root userns");

	tcase_add_test(tc, test_root_only_files);
	tcase_add_test(tc, test_root_files_unchanged);
	tcase_add_test(tc, test_proc_knobs_landlock_off);
	return harness_main(s);
}
