/* test-landlock-abi.c — Landlock on whatever ABI this kernel has: ward uses
 * every right the kernel offers, names each one it lacks with the ABI that
 * brings it, still confines writes, and refuses a minimum ABI above the
 * kernel's. Written to hold on any ABI: the host's (7 here) and the VM's 6.1
 * kernel (ABI 2, tests/vm/run.sh). */
#include "harness.h"
#include "ward/sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char *workdir, *outside;

static void setup(void)
{
	char tmpl[] = "/var/tmp/ward-landlock-XXXXXX";

	workdir = harness_tmpdir();
	/* not under /tmp, which the sandbox may write */
	mkdir("/var", 0755);
	mkdir("/var/tmp", 01777);
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	chmod(tmpl, 0777); /* writable to anyone: only Landlock stands in the way */
	outside = strdup(tmpl);
}

static void teardown(void)
{
	harness_rmtree(workdir);
	harness_rmtree(outside);
	free(workdir);
	free(outside);
}

static int kernel_abi(void)
{
	return (int)syscall(444 /* landlock_create_ruleset */, NULL, 0, 1UL);
}

static void run(int abi_max, int min_abi, const char *cmd, struct ward_result *res)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL };

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.view = false; /* the host's tree, so that `outside` is there to be refused */
	cfg.landlock_abi_max = abi_max;
	if (min_abi)
		cfg.landlock_min_abi = min_abi;
	ck_assert_msg(ward_run(&cfg, argv, res, &err) == 0, "%s", err ? err->message : "");
	ward_config_release(&cfg);
}

/* name: a right; abi: the ABI that brings it */
static void expect_right(const struct ward_landlock_report *r, const char *name, int abi)
{
	char missing[64];

	snprintf(missing, sizeof(missing), "%s (abi %d)", name, abi);
	if (r->abi >= abi) {
		ck_assert_msg(strstr(r->enforced, name), "abi %d: %s not enforced: %s", r->abi, name,
			      r->enforced);
		ck_assert_msg(!strstr(r->unavailable, name), "%s", r->unavailable);
	} else {
		ck_assert_msg(strstr(r->unavailable, missing), "abi %d: '%s' not said: %s", r->abi,
			      missing, r->unavailable);
		ck_assert_msg(!strstr(r->enforced, name), "%s", r->enforced);
	}
}

START_TEST(test_every_right_of_the_kernel)
{
	struct ward_result res;
	char cmd[512], path[300];
	int k = kernel_abi(), i;

	snprintf(cmd, sizeof(cmd), "echo in > in && cat in && { (echo out > %s/f) 2>/dev/null && "
			 "echo written || echo denied; }", outside);
	for (i = 0; i < 2; i++) {
		/* the kernel's own ABI, then capped at 1 */
		int cap = i == 0 ? 0 : 1, want = i == 0 ? (k < 7 ? k : 7) : 1;
		const struct ward_landlock_report *r;

		run(cap, 0, cmd, &res);
		ck_assert_msg(res.exit_code == 0 && res.fenced, "exit %d: %s %s", res.exit_code,
			      res.error ? res.error->message : "", res.output);
		r = &res.fences.landlock;
		ck_assert_str_eq(r->status, "enforced");
		ck_assert_int_eq(r->kernel_abi, k);
		ck_assert_int_eq(r->abi, want);
		expect_right(r, "fs.write_file", 1);
		expect_right(r, "fs.refer", 2);
		expect_right(r, "fs.truncate", 3);
		expect_right(r, "fs.ioctl_dev", 5);
		expect_right(r, "scope.signal", 6);
		/* confined all the same: the workdir yes, a directory beside it no */
		ck_assert_str_eq(res.output, "in\ndenied\n");
		snprintf(path, sizeof(path), "%s/f", outside);
		ck_assert_int_eq(access(path, F_OK), -1);
		ward_result_release(&res);
	}
}
END_TEST

START_TEST(test_min_abi_above_kernel)
{
	struct ward_result res;
	int k = kernel_abi();

	/* on a kernel with every ABI ward knows, one above those is refused */
	run(0, k + 1, "echo ran", &res);
	ck_assert_int_eq(res.exit_code, 125);
	ck_assert(!res.started);
	ck_assert_ptr_nonnull(res.error);
	ck_assert_msg(strstr(res.error->message, k < 7 ? "this kernel offers abi" : "8"), "%s",
		      res.error->message);
	ck_assert_str_eq(res.output, "");
	ward_result_release(&res);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("landlock-abi");
	TCase *tc = harness_tcase(s, "landlock-abi", "userns landlock seccomp");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_every_right_of_the_kernel);
	tcase_add_test(tc, test_min_abi_above_kernel);
	return harness_main(s);
}
