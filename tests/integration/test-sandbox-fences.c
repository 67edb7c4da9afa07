/* test-sandbox-fences.c — Landlock, seccomp and the capability drop as ward
 * applies them, through ward_run() and the CLI: the probe of denied calls in
 * the full sandbox, other ABIs killed, writes refused where the mount would
 * allow them, abstract sockets scoped (ABI 6), a capped ABI reported, and
 * ordinary workloads giving the same output inside as outside. Holds on any
 * Landlock ABI: what needs a newer one is tagged and skipped with the reason. */
#include "harness.h"
#include "ward/landlock.h"
#include "ward/sandbox.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char *workdir, *probe;

static void setup(void)
{
	workdir = harness_tmpdir();
	probe = harness_path("tests/helpers/syscall-probe");
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
	free(probe);
}

static void config(struct ward_config *cfg)
{
	ward_config_init(cfg);
	ck_assert_int_eq(ward_config_set_workdir(cfg, workdir, NULL), 0);
	cfg->timeout = 60;
	/* the probe lives in the build tree, which the view does not show */
	ck_assert_int_eq(ward_config_add_mount(cfg, WARD_MOUNT_RO_BIND, probe, "/probe", NULL), 0);
}

static void run(struct ward_config *cfg, const char *cmd, struct ward_result *res)
{
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL };
	struct ward_error *err = NULL;

	ck_assert_msg(ward_run(cfg, argv, res, &err) == 0, "%s", err ? err->message : "");
	ck_assert_msg(!res->error || res->error->kind == WARD_ERR_TIMEOUT, "%s: %s", cmd,
		      res->error ? res->error->message : "");
}

START_TEST(test_denied_calls)
{
	struct ward_config cfg;
	struct ward_result res;
	char *line, *save = NULL;
	int n = 0;

	config(&cfg);
	run(&cfg, "/probe denied", &res);
	ck_assert_int_eq(res.exit_code, 0);
	ck_assert(res.fenced);
	ck_assert_str_eq(res.fences.seccomp_profile, "default");
	for (line = strtok_r(res.output, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *r = strchr(line, ' ');

		ck_assert_ptr_nonnull(r);
		if (strncmp(line, "clone3 ", 7) == 0)
			ck_assert_msg(strcmp(r + 1, "ENOSYS") == 0, "%s", line);
		else
			ck_assert_msg(strcmp(r + 1, "EPERM") == 0, "not denied: %s", line);
		n++;
	}
	ck_assert_int_ge(n, 20);
	ward_result_release(&res);
	run(&cfg, "/probe status", &res);
	ck_assert_ptr_nonnull(strstr(res.output, "CapEff:\t0000000000000000"));
	ck_assert_ptr_nonnull(strstr(res.output, "NoNewPrivs:\t1"));
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

/* An i386 system call reaches the kernel at all: with IA-32 emulation off
 * (ia32_emulation=0) int 0x80 faults before any filter, so the filter's
 * i386 rule cannot be seen at work (test-seccomp checks the compiled rule). */
static const char *probe_ia32(void)
{
	char *helper = harness_path("tests/helpers/syscall-probe");
	char *argv[] = { helper, (char *)"i386", NULL };
	int status = harness_capture(argv, NULL, NULL);

	free(helper);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV ?
		       "int 0x80 faults before any filter here (no IA-32 emulation)" :
		       NULL;
}

/* A system call of another ABI kills the command (SIGSYS). */
static void other_abi_killed(const char *abi)
{
	struct ward_config cfg;
	struct ward_result res;
	char cmd[64];

	config(&cfg);
	snprintf(cmd, sizeof(cmd), "exec /probe %s", abi);
	run(&cfg, cmd, &res);
	ck_assert_msg(res.signal == SIGSYS, "%s: exit %d signal %d: %s", abi, res.exit_code,
		      res.signal, res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);
}

START_TEST(test_x32_killed)
{
	other_abi_killed("x32");
}
END_TEST

START_TEST(test_i386_killed)
{
	other_abi_killed("i386");
}
END_TEST

START_TEST(test_landlock_where_mount_is_writable)
{
	struct ward_config cfg;
	struct ward_result res;
	char cmd[512], inside[4200];

	/* Without the view the host's filesystem is there, writable as far as
	 * the mounts go (/var/tmp is 1777): only Landlock stands in the way. */
	config(&cfg);
	cfg.view = false;
	ward_config_release(&cfg);
	ward_config_init(&cfg);
	ward_config_set_workdir(&cfg, workdir, NULL);
	cfg.view = false;
	snprintf(cmd, sizeof(cmd), "%s write /var/tmp/ward-landlock-%d; %s write ./inside",
		 probe, getpid(), probe);
	run(&cfg, cmd, &res);
	ck_assert_msg(strstr(res.output, "EACCES") != NULL, "%s", res.output);
	ck_assert_str_eq(res.fences.landlock.status, "enforced");
	snprintf(inside, sizeof(inside), "%s/inside", workdir);
	ck_assert_int_eq(access(inside, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "/var/tmp/ward-landlock-%d", getpid());
	ck_assert_int_ne(access(cmd, F_OK), 0);
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_abstract_socket_scoped)
{
	struct ward_config cfg;
	struct ward_result res;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char name[64], cmd[128];
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(name, sizeof(name), "ward-test-%d", getpid());
	memcpy(sa.sun_path + 1, name, strlen(name));
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))), 0);
	ck_assert_int_eq(listen(s, 4), 0);
	/* Same network namespace as the server, so only Landlock's scope can
	 * keep the sandbox from it. */
	config(&cfg);
	cfg.namespaces &= ~WARD_NS_NET;
	snprintf(cmd, sizeof(cmd), "/probe abstract %s", name);
	run(&cfg, cmd, &res);
	ck_assert_msg(strstr(res.output, "EPERM") != NULL, "reached the socket: %s", res.output);
	ward_result_release(&res);
	/* and without the scope it is reachable: the test can fail */
	cfg.landlock_abi_max = 5;
	run(&cfg, cmd, &res);
	ck_assert_msg(strstr(res.output, " ok") != NULL, "%s", res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);
	close(s);
}
END_TEST

/* The rights after ABI 1 that ward's defaults want, each with its ABI (TCP
 * rules only come with the proxy, so no net right here). */
static const struct {
	const char *name;
	int abi;
} later_rights[] = {
	{ "fs.refer", 2 },
	{ "fs.truncate", 3 },
	{ "fs.ioctl_dev", 5 },
	{ "scope.abstract_unix_socket", 6 },
	{ "scope.signal", 6 },
};

static bool json_list_has(json_t *list, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach (list, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

/* Capped at ABI 2 and 3 through WARD_LANDLOCK_ABI_MAX (at the kernel's own
 * ABI where that is lower): the command runs, and the result names the ABI
 * used and exactly what it lacks. */
START_TEST(test_capped_abi_reported)
{
	char *ward = harness_path("ward");
	char *argv[] = { ward, (char *)"run", (char *)"--json", (char *)"-C", workdir, NULL };
	static const char *const caps[] = { "2", "3" };
	int kernel = ward_landlock_abi(NULL);
	size_t i, k;

	for (i = 0; i < 2; i++) {
		int want = atoi(caps[i]) < kernel ? atoi(caps[i]) : kernel;
		char *out = NULL, *dump, missing[64];
		json_t *o, *ll, *unavailable, *enforced;

		setenv("WARD_LANDLOCK_ABI_MAX", caps[i], 1);
		harness_capture_input(argv, "{\"command\": \"echo still-runs\"}", &out, NULL);
		o = json_loads(out, 0, NULL);
		ck_assert_msg(o != NULL, "%s", out);
		ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "still-runs\n");
		ll = json_object_get(json_object_get(o, "layers"), "landlock");
		ck_assert_str_eq(json_string_value(json_object_get(ll, "status")), "enforced");
		ck_assert_int_eq(json_integer_value(json_object_get(ll, "abi")), want);
		ck_assert_int_eq(json_integer_value(json_object_get(ll, "kernel_abi")), kernel);
		unavailable = json_object_get(ll, "unavailable");
		enforced = json_object_get(ll, "enforced");
		dump = json_dumps(ll, 0);
		for (k = 0; k < sizeof(later_rights) / sizeof(later_rights[0]); k++) {
			bool has = want >= later_rights[k].abi;

			snprintf(missing, sizeof(missing), "%s (abi %d)", later_rights[k].name,
				 later_rights[k].abi);
			ck_assert_msg(has == json_list_has(enforced, later_rights[k].name) &&
					      has == !json_list_has(unavailable, missing),
				      "abi %d, %s: %s", want, later_rights[k].name, dump);
		}
		free(dump);
		json_decref(o);
		free(out);
	}
	unsetenv("WARD_LANDLOCK_ABI_MAX");
	free(ward);
}
END_TEST

/* The same script inside the sandbox and outside it: the same output. */
static void same_inside_and_out(const char *script)
{
	struct ward_config cfg;
	struct ward_result res;
	char cmd[8192], *out = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	char *outside = harness_tmpdir();
	int status;

	snprintf(cmd, sizeof(cmd), "cd '%s' && %s", outside, script);
	status = harness_capture(argv, &out, NULL);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "outside: %s", out);
	ward_config_init(&cfg);
	ward_config_set_workdir(&cfg, workdir, NULL);
	cfg.timeout = 120;
	ward_config_add_setenv(&cfg, "HOME=/tmp", NULL);
	run(&cfg, script, &res);
	ck_assert_msg(res.exit_code == 0, "inside, exit %d: %s", res.exit_code, res.output);
	ck_assert_str_eq(res.stderr_text, "");
	ck_assert_str_eq(res.output, out);
	ward_result_release(&res);
	ward_config_release(&cfg);
	free(out);
	harness_rmtree(outside);
	free(outside);
}

START_TEST(test_workload_gcc_make)
{
	same_inside_and_out(
		"printf '#include <stdio.h>\\nint main(void){printf(\"%%d\\\\n\", 6*7);return 0;}\\n' > m.c &&"
		" printf 'm: m.c\\n\\tcc -O2 -o m m.c\\n' > Makefile && make -s && ./m");
}
END_TEST

START_TEST(test_workload_git)
{
	same_inside_and_out(
		"export HOME=/tmp GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' "
		"GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'; git init -q -b main r && cd r && "
		"git config user.email t@e && git config user.name t && echo a > f && git add f && "
		"git commit -qm one && git log --format='%H %s'");
}
END_TEST

START_TEST(test_workload_python)
{
	same_inside_and_out(
		"python3 -c \"import threading, subprocess, socket\n"
		"r = []\n"
		"t = [threading.Thread(target=lambda i=i: r.append(i * i)) for i in range(8)]\n"
		"[x.start() for x in t]; [x.join() for x in t]\n"
		"print(sorted(r))\n"
		"print(subprocess.run(['echo', 'sub'], capture_output=True, text=True).stdout.strip())\n"
		"a, b = socket.socketpair(); a.sendall(b'pair'); print(b.recv(4).decode())\"");
}
END_TEST

START_TEST(test_workload_tar_pipeline)
{
	same_inside_and_out("mkdir -p d/e && seq 1 500 > d/e/n && tar czf a.tgz d && rm -r d && "
			    "tar xzf a.tgz && gzip -c d/e/n | gunzip | sort -rn | head -3 | "
			    "tr '\\n' ' ' && wc -l < d/e/n");
}
END_TEST

static const char *probe_landlock6(void)
{
	static char reason[64];
	int abi = ward_landlock_abi(NULL);

	if (abi >= 6)
		return NULL;
	snprintf(reason, sizeof(reason), "Landlock ABI %d < 6", abi < 0 ? 0 : abi);
	return reason;
}

int main(void)
{
	Suite *s = suite_create("sandbox-fences");
	TCase *sc = harness_tcase(s, "seccomp-in-sandbox", "userns seccomp");
	TCase *ll = harness_tcase(s, "landlock-in-sandbox", "userns landlock");
	TCase *ls = harness_tcase(s, "scope-in-sandbox", "userns landlock6");
	TCase *wl = harness_tcase(s, "workloads", "userns seccomp landlock");
	TCase *wd = harness_tcase(s, "workloads-dev", "userns seccomp landlock devtools");
	TCase *ia = harness_tcase(s, "i386-in-sandbox", "userns seccomp ia32");

	harness_add_probe("landlock6", probe_landlock6);
	harness_add_probe("ia32", probe_ia32);
	tcase_add_checked_fixture(ia, setup, teardown);
	tcase_add_test(ia, test_i386_killed);
	tcase_add_checked_fixture(sc, setup, teardown);
	tcase_add_checked_fixture(ll, setup, teardown);
	tcase_add_checked_fixture(ls, setup, teardown);
	tcase_add_checked_fixture(wl, setup, teardown);
	tcase_add_checked_fixture(wd, setup, teardown);
	tcase_add_test(sc, test_denied_calls);
	tcase_add_test(sc, test_x32_killed);
	tcase_add_test(ll, test_landlock_where_mount_is_writable);
	tcase_add_test(ll, test_capped_abi_reported);
	tcase_add_test(ls, test_abstract_socket_scoped);
	tcase_add_test(wl, test_workload_tar_pipeline);
	tcase_add_test(wd, test_workload_gcc_make);
	tcase_add_test(wd, test_workload_git);
	tcase_add_test(wd, test_workload_python);
	return harness_main(s);
}
