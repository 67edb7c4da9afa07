/* test-landlock-abi.c — Landlock on whatever ABI this kernel has: ward uses
 * every right the kernel offers, names each one it lacks with the ABI that
 * brings it, still confines writes, and refuses a minimum ABI above the
 * kernel's. Written to hold on any ABI: the host's (7 here) and the VM's 6.1
 * kernel (ABI 2, tests/vm/run.sh). */
#include "harness.h"
#include "ward/sandbox.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

/* The kernel's ABI; $WARD_TEST_LANDLOCK_ABI, where set, is the one it must
 * be (the VM's guest sets 2), so that a run on the wrong kernel cannot pass
 * for the older-kernel test. */
static int kernel_abi(void)
{
	int abi = (int)syscall(444 /* landlock_create_ruleset */, NULL, 0, 1UL);
	const char *want = getenv("WARD_TEST_LANDLOCK_ABI");

	if (want && *want)
		ck_assert_msg(abi == atoi(want), "Landlock ABI %d, want %s", abi, want);
	return abi;
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
		printf("# note: landlock abi %d of %d; unavailable: %s\n", r->abi, r->kernel_abi,
		       r->unavailable);
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

/* What a required minimum one above the kernel's ABI is refused with: the
 * first right that ABI brought (ABI 7 brought none), or, above every ABI
 * ward knows, an invalid minimum. */
static void min_abi_refusal(int k, char *want, size_t size, enum ward_error_kind *kind)
{
	static const char *const first_right[] = {
		[2] = "fs.refer",     [3] = "fs.truncate", [4] = "net.bind_tcp",
		[5] = "fs.ioctl_dev", [6] = "scope.abstract_unix_socket",
	};

	*kind = WARD_ERR_EXECUTION_FAILED;
	if (k + 1 <= 6)
		snprintf(want, size, "landlock right '%s' needs abi %d, this kernel offers abi %d",
			 first_right[k + 1], k + 1, k);
	else if (k + 1 == 7)
		snprintf(want, size, "landlock: minimum abi 7, this kernel offers abi 6");
	else {
		snprintf(want, size, "landlock: minimum abi %d is not between 0 and 7", k + 1);
		*kind = WARD_ERR_INVALID_PARAMETERS;
	}
}

START_TEST(test_min_abi_above_kernel)
{
	struct ward_result res;
	int k = kernel_abi();
	char want[160];
	enum ward_error_kind kind;

	min_abi_refusal(k, want, sizeof(want), &kind);
	run(0, k + 1, "echo ran", &res);
	ck_assert_int_eq(res.exit_code, 125);
	ck_assert(!res.started);
	ck_assert_ptr_nonnull(res.error);
	ck_assert_msg(strstr(res.error->message, want), "%s, want %s", res.error->message, want);
	ck_assert_int_eq(res.error->kind, kind);
	ck_assert_str_eq(res.output, "");
	ward_result_release(&res);
}
END_TEST

/* The same through the CLI and a policy file with `landlock: required`:
 * the JSON result carries the refusal naming the right and its ABI. On a
 * kernel with every ABI ward knows, the minimum one above it is refused as
 * invalid (InvalidParameters): either way the policy's min_abi reaches the
 * sandbox and the command never runs. */
START_TEST(test_policy_min_abi_above_kernel)
{
	char *ward = harness_path("ward"), policy[300], opt[320], want[160], *out = NULL,
	     *errout = NULL;
	char *argv[] = { ward, (char *)"run", (char *)"--json", opt, (char *)"-C", workdir, NULL };
	enum ward_error_kind kind;
	int k = kernel_abi(), status;
	json_t *o, *e;
	FILE *f;

	min_abi_refusal(k, want, sizeof(want), &kind);
	/* not in outside: a policy in a directory anyone may write is refused */
	snprintf(policy, sizeof(policy), "%s/policy.json", workdir);
	f = fopen(policy, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"landlock\": {\"mode\": \"required\", \"min_abi\": %d}}\n", k + 1);
	fclose(f);
	snprintf(opt, sizeof(opt), "--policy=%s", policy);
	status = harness_capture_input(argv, "{\"command\": \"echo ran\"}", &out, &errout);
	if (kind == WARD_ERR_INVALID_PARAMETERS) {
		/* a minimum no kernel has: the policy itself is refused */
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 0, "%s", out);
		ck_assert_msg(strstr(errout, "landlock.min_abi") && !strstr(out, "ran"), "%s%s", out,
			      errout);
		free(out);
		free(errout);
		free(ward);
		return;
	}
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o != NULL, "not JSON: %s", out);
	e = json_object_get(o, "error");
	ck_assert_msg(json_is_object(e), "%s", out);
	ck_assert_str_eq(json_string_value(json_object_get(e, "kind")),
			 kind == WARD_ERR_INVALID_PARAMETERS ? "InvalidParameters" : "ExecutionFailed");
	ck_assert_msg(strstr(json_string_value(json_object_get(e, "message")), want), "%s, want %s",
		      out, want);
	ck_assert_msg(!strstr(json_string_value(json_object_get(o, "output")), "ran"), "%s", out);
	json_decref(o);
	free(out);
	free(errout);
	free(ward);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("landlock-abi");
	TCase *tc = harness_tcase(s, "landlock-abi", "userns landlock seccomp");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_every_right_of_the_kernel);
	tcase_add_test(tc, test_min_abi_above_kernel);
	tcase_add_test(tc, test_policy_min_abi_above_kernel);
	return harness_main(s);
}
