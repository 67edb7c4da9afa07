/* test-container.c — ward under what a container engine's seccomp profile
 * does to it, simulated on this host by tests/helpers/engine-seccomp (a
 * filter answering sethostname with EPERM, as podman's and Docker's default
 * profiles do to a container without CAP_SYS_ADMIN, and clone3 with ENOSYS,
 * as Docker's does):
 *
 * - the default hostname refused: skipped, said in the result's layers, the
 *   UTS namespace still new; a hostname asked for: the command fails;
 * - clone3 missing: ward falls back to clone, every namespace still made. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char *workdir;

/* ward run --json under engine-seccomp with the filter options (space
 * separated, "" for none) and extra ward options; returns the result JSON. */
static char *run_under(const char *filter, const char *extra, const char *request, int *status)
{
	char *ward = harness_path("ward"), *helper = harness_path("tests/helpers/engine-seccomp");
	char *argv[16], *out = NULL, *fbuf = strdup(filter), *ebuf = strdup(extra), *tok, *save;
	int n = 0, st;

	argv[n++] = helper;
	for (tok = strtok_r(fbuf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		argv[n++] = tok;
	argv[n++] = (char *)"--";
	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)"--json";
	argv[n++] = (char *)"-C";
	argv[n++] = workdir;
	for (tok = strtok_r(ebuf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		argv[n++] = tok;
	argv[n] = NULL;
	st = harness_capture_input(argv, request, &out, NULL);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	free(fbuf);
	free(ebuf);
	free(ward);
	free(helper);
	return out;
}

static const char req_host[] =
	"{\"command\": \"cat /proc/sys/kernel/hostname; ls /proc | grep -c '^[0-9]'\"}";

START_TEST(test_plain_sets_hostname)
{
	int st;
	char *out = run_under("", "", req_host, &st);

	ck_assert_msg(st == 0, "exit %d: %s", st, out);
	ck_assert_msg(strstr(out, "\"output\":\"ward\\n"), "%s", out);
	ck_assert_msg(strstr(out, "\"hostname\":\"ward\""), "%s", out);
	free(out);
}
END_TEST

START_TEST(test_hostname_refused_skipped)
{
	int st;
	char *out = run_under("--hostname", "", req_host, &st);

	/* ran, in a UTS namespace of its own still (its name the outer one's) */
	ck_assert_msg(st == 0, "exit %d: %s", st, out);
	ck_assert_msg(!strstr(out, "\"output\":\"ward\\n"), "%s", out);
	ck_assert_msg(strstr(out, "\"hostname\":\"skipped: sethostname EPERM"), "%s", out);
	ck_assert_msg(strstr(out, "\"uts\""), "%s", out);
	ck_assert_msg(strstr(out, "\"sandboxed\":true"), "%s", out);
	free(out);
}
END_TEST

START_TEST(test_hostname_asked_fails)
{
	int st;
	char *out = run_under("--hostname", "--hostname box", req_host, &st);

	ck_assert_msg(st == 125, "exit %d: %s", st, out);
	ck_assert_msg(strstr(out, "sethostname 'box'"), "%s", out);
	ck_assert_msg(strstr(out, "Operation not permitted"), "%s", out);
	free(out);
}
END_TEST

START_TEST(test_clone3_enosys_falls_back)
{
	int st;
	char *out = run_under("--clone3", "", req_host, &st);
	const char *o;

	ck_assert_msg(st == 0, "exit %d: %s", st, out);
	/* every namespace and the hostname still: own PID tree of a few */
	ck_assert_msg(strstr(out, "\"output\":\"ward\\n"), "%s", out);
	o = strstr(out, "\"output\":\"ward\\n") + strlen("\"output\":\"ward\\n");
	ck_assert_msg(atoi(o) >= 2 && atoi(o) <= 6, "%s", out);
	ck_assert_msg(strstr(out, "\"namespaces\":[\"user\",\"mount\",\"pid\",\"net\",\"ipc\","
				  "\"uts\",\"cgroup\"]"),
		      "%s", out);
	free(out);
}
END_TEST

/* Docker's default: both at once. */
START_TEST(test_docker_like)
{
	int st;
	char *out = run_under("--hostname --clone3", "", req_host, &st);

	ck_assert_msg(st == 0, "exit %d: %s", st, out);
	ck_assert_msg(strstr(out, "\"hostname\":\"skipped: sethostname EPERM"), "%s", out);
	ck_assert_msg(strstr(out, "\"sandboxed\":true"), "%s", out);
	free(out);
}
END_TEST

static void setup(void)
{
	workdir = harness_tmpdir();
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
}

int main(void)
{
	Suite *s = suite_create("container");
	TCase *tc = harness_tcase(s, "engine-seccomp", "userns seccomp");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plain_sets_hostname);
	tcase_add_test(tc, test_hostname_refused_skipped);
	tcase_add_test(tc, test_hostname_asked_fails);
	tcase_add_test(tc, test_clone3_enosys_falls_back);
	tcase_add_test(tc, test_docker_like);
	return harness_main(s);
}
