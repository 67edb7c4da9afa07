/* test-container.c — ward under what a container engine's seccomp profile
 * does to it, simulated on this host by tests/helpers/engine-seccomp (a
 * filter answering sethostname with EPERM, as podman's and Docker's default
 * profiles do to a container without CAP_SYS_ADMIN, and clone3 with ENOSYS,
 * as Docker's does):
 *
 * - the default hostname refused: skipped, said in the result's layers, the
 *   UTS namespace still new; a hostname asked for: the command fails;
 * - clone3 missing: ward falls back to clone, every namespace still made;
 * - ward inside ward: works with --allow-nested (or the policy's
 *   allow_nested), and without it the inner ward's refusal names the flag. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* With clone in place of clone3, the command is still in its cgroup before
 * it runs: a pids limit holds (where the limit is a cgroup's: root, or a
 * delegated hierarchy; v2 moves the child between clone and its first
 * step, v1 has init move itself). */
START_TEST(test_clone3_enosys_cgroup_holds)
{
	int st;
	char *out = run_under("--clone3", "--pids 10",
			      "{\"command\": \"for i in $(seq 30); do sleep 1 & done 2>&1; wait\"}",
			      &st);

	if (!strstr(out, "\"mechanism\":\"cgroup v")) {
		free(out);
		return; /* no cgroup here: the rlimit is per user, not per sandbox */
	}
	ck_assert_msg(strstr(out, "Cannot fork") || strstr(out, "Resource temporarily unavailable"),
		      "%s", out);
	free(out);
}
END_TEST

/* A session's sandbox (ward serve) says so too: its init reports what it
 * skipped before serving. */
START_TEST(test_session_hostname_skipped)
{
	char *ward = harness_path("ward"), *helper = harness_path("tests/helpers/engine-seccomp");
	char *argv[] = { helper, (char *)"--hostname", (char *)"--", ward, (char *)"serve",
			 (char *)"-C", workdir, NULL };
	char *out = NULL;
	int st = harness_capture_input(
		argv,
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
		"\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{"
		"\"name\":\"t\",\"version\":\"1\"}}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
		"\"name\":\"shell\",\"arguments\":{\"command\":\"echo in-session\"}}}\n",
		&out, NULL);

	ck_assert_msg(WIFEXITED(st), "%s", out);
	ck_assert_msg(strstr(out, "in-session"), "%s", out);
	ck_assert_msg(strstr(out, "\"hostname\":\"skipped: sethostname EPERM"), "%s", out);
	free(out);
	free(ward);
	free(helper);
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

/* The ward binary copied into the workdir, where the sandbox sees it. */
static void copy_ward(void)
{
	char *src = harness_path("ward"), *dst;
	char *argv[] = { (char *)"cp", src, NULL, NULL };
	int st;

	if (asprintf(&dst, "%s/ward", workdir) < 0)
		ck_abort();
	argv[2] = dst;
	st = harness_capture(argv, NULL, NULL);
	ck_assert_int_eq(st, 0);
	free(src);
	free(dst);
}

static int nested(const char *outer_opt, char **out, char **err)
{
	char *ward = harness_path("ward");
	char *argv[12];
	int n = 0, st;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)"-C";
	argv[n++] = workdir;
	if (outer_opt)
		argv[n++] = (char *)outer_opt;
	argv[n++] = (char *)"--";
	argv[n++] = (char *)"./ward";
	argv[n++] = (char *)"run";
	argv[n++] = (char *)"--";
	argv[n++] = (char *)"sh";
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)"echo nested $(cat /proc/sys/kernel/hostname) $(ls /proc | grep -c '^[0-9]')";
	argv[n] = NULL;
	st = harness_capture(argv, out, err);
	free(ward);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(test_nested_refused_names_flag)
{
	char *out = NULL, *err = NULL;
	int st;

	copy_ward();
	st = nested(NULL, &out, &err);
	ck_assert_msg(st == 125, "exit %d: %s%s", st, out, err);
	ck_assert_msg(strstr(err, "the outer ward needs --allow-nested"), "%s", err);
	free(out);
	free(err);
}
END_TEST

/* Run by the host's root, --allow-nested is refused (its sandboxes would
 * hold root's powers over the host's kernel settings): true when that is
 * what happened, as it must for root. */
static bool refused_to_root(int st, const char *err)
{
	if (geteuid() != 0)
		return false;
	ck_assert_msg(st == 125 && strstr(err, "--allow-nested is refused to the host's root"),
		      "exit %d: %s", st, err);
	return true;
}

START_TEST(test_nested_allowed)
{
	char *out = NULL, *err = NULL;
	int st;

	copy_ward();
	st = nested("--allow-nested", &out, &err);
	if (refused_to_root(st, err)) {
		free(out);
		free(err);
		return;
	}
	/* the inner sandbox is a whole one: its own hostname and PID tree */
	ck_assert_msg(st == 0, "exit %d: %s%s", st, out, err);
	ck_assert_msg(strncmp(out, "nested ward ", 12) == 0 && atoi(out + 12) >= 2 &&
			      atoi(out + 12) <= 6,
		      "%s", out);
	free(out);
	free(err);
}
END_TEST

/* The policy key does what the flag does; and the result says Landlock is
 * off (the kernel refuses mounts under it) while seccomp stays. */
START_TEST(test_nested_policy)
{
	char *out = NULL, *err = NULL, *pol, *polopt;
	FILE *f;
	int st;

	copy_ward();
	if (asprintf(&pol, "%s.policy.json", workdir) < 0 ||
	    asprintf(&polopt, "--policy=%s", pol) < 0)
		ck_abort();
	f = fopen(pol, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"allow_nested\": true}\n", f);
	fclose(f);
	chmod(pol, 0644);
	st = nested(polopt, &out, &err);
	if (refused_to_root(st, err)) {
		free(out);
		free(err);
		goto out;
	}
	ck_assert_msg(st == 0, "exit %d: %s%s", st, out, err);
	ck_assert_msg(strncmp(out, "nested ward ", 12) == 0, "%s", out);
	free(out);
	free(err);
	{
		char *ward = harness_path("ward");
		char *argv[] = { ward, (char *)"run", (char *)"--json", polopt, (char *)"-C", workdir,
				 NULL };

		st = harness_capture_input(argv, "{\"command\": \"true\"}", &out, NULL);
		ck_assert_msg(strstr(out, "\"landlock\":{\"status\":\"off\""), "%s", out);
		ck_assert_msg(strstr(out, "\"nested\":true"), "%s", out);
		ck_assert_msg(strstr(out, "\"seccomp\":\"default\""), "%s", out);
		free(out);
		free(ward);
	}
out:
	unlink(pol);
	free(pol);
	free(polopt);
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
	tcase_add_test(tc, test_session_hostname_skipped);
	tcase_add_test(tc, test_clone3_enosys_cgroup_holds);
	tc = harness_tcase(s, "nested", "userns seccomp");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_nested_refused_names_flag);
	tcase_add_test(tc, test_nested_allowed);
	tcase_add_test(tc, test_nested_policy);
	return harness_main(s);
}
