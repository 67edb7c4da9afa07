/* test-run.c — the runtime core for real: namespaces, the view, PID 1,
 * timeouts, output bounds, environment, leftovers. Run as root and as
 * uid 65534 by tests/run.sh. */
#include "harness.h"
#include "ward/request.h"
#include "ward/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *workdir;

static void setup(void)
{
	workdir = harness_tmpdir();
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
}

/* Run a shell string through the library with captured output. */
static void lib_sh(const char *cmd, int timeout, struct ward_result *res)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL };

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.timeout = timeout;
	ck_assert_msg(ward_run(&cfg, argv, res, &err) == 0, "ward_run: %s",
		      err ? err->message : "?");
	ward_config_release(&cfg);
}

/* The same, asserting success, returning the output (caller frees). */
static char *ok_sh(const char *cmd)
{
	struct ward_result res;
	char *out;

	lib_sh(cmd, 30, &res);
	ck_assert_msg(res.exit_code == 0 && !res.error, "'%s' failed: exit %d, %s\n%s", cmd,
		      res.exit_code, res.error ? res.error->message : "", res.output);
	out = strdup(res.output);
	ward_result_release(&res);
	return out;
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	int n = 0, c;

	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

static json_t *cli_json(const char *request, int *status)
{
	char *ward = harness_path("ward");
	/* The request names a workdir under $TMPDIR, not under the directory
	 * the test runs from: the person allows it as a root. */
	char *argv[] = { ward, (char *)"run", (char *)"--json", (char *)"--workdir-root", workdir,
			 NULL };
	char *out = NULL;
	json_t *o;

	*status = harness_capture_input(argv, request, &out, NULL);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o != NULL, "not JSON: %s", out);
	free(out);
	free(ward);
	return o;
}

/* ---- the view ------------------------------------------------------------ */

START_TEST(test_view_hides_host)
{
	char *out = ok_sh("test ! -e /root && test ! -e /home && test ! -e /run && test ! -e /var "
			  "&& test ! -e /sys && echo hidden; ls /");
	char *out2;

	ck_assert_ptr_nonnull(strstr(out, "hidden\n"));
	ck_assert_ptr_nonnull(strstr(out, "usr\n"));
	ck_assert_ptr_nonnull(strstr(out, "proc\n"));
	ck_assert_ptr_null(strstr(out, "home\n"));
	free(out);
	/* os-release is there to read; /etc/shadow is the fixture's (below) */
	out2 = ok_sh("cat /etc/os-release | head -1");
	ck_assert_ptr_nonnull(strstr(out2, "NAME"));
	free(out2);
}
END_TEST

/* Secrets in /etc stay unreadable even for uid 0 inside: /etc/shadow is
 * masked. The shadow file is the test's own, on an overlay of /etc in a
 * mount namespace of the test's (the host's file, or its absence, plays no
 * part). Root only: for another user the file's own mode refuses, and
 * nothing is masked. */
START_TEST(test_view_masks_secrets)
{
	char *dir = harness_tmpdir(), opts[4400], path[4200], secret[64], *out;
	FILE *f;

	snprintf(path, sizeof(path), "%s/upper", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/work", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(opts, sizeof(opts), "lowerdir=/etc,upperdir=%s/upper,workdir=%s/work", dir, dir);
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_msg(mount("overlay", "/etc", "overlay", 0, opts) == 0, "overlay on /etc: %s",
		      strerror(errno));
	snprintf(secret, sizeof(secret), "ward-fixture-%ld", (long)getpid());
	f = fopen("/etc/shadow", "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "root:%s:19000:0:99999:7:::\n", secret);
	fclose(f);
	ck_assert_int_eq(chmod("/etc/shadow", 0640), 0);
	out = ok_sh("cat /etc/shadow 2>&1 || echo refused; test -c /etc/shadow && echo masked");
	ck_assert_msg(strstr(out, "refused") && strstr(out, "masked") && !strstr(out, secret), "%s",
		      out);
	free(out);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_view_writable_set)
{
	char *out, path[4200];
	struct stat st;

	out = ok_sh("for p in /usr/x /etc/x /x /dev/x /lib/x /bin/x; do "
		    "touch $p 2>/dev/null && echo WROTE $p; done; "
		    "touch ./in-workdir && touch /tmp/in-tmp && echo /dev/null-ok > /dev/null && "
		    "echo good");
	ck_assert_ptr_null(strstr(out, "WROTE"));
	ck_assert_ptr_nonnull(strstr(out, "good"));
	free(out);
	snprintf(path, sizeof(path), "%s/in-workdir", workdir);
	ck_assert_int_eq(stat(path, &st), 0); /* the workdir is the real one */
	ck_assert_int_ne(access("/tmp/in-tmp", F_OK), 0); /* /tmp is the sandbox's own */
}
END_TEST

START_TEST(test_proc_lo_hostname)
{
	char *out = ok_sh("ls /proc | grep -c '^[0-9]'; cat /proc/sys/kernel/hostname; "
			  "grep -c : /proc/net/dev; grep -o 'lo:' /proc/net/dev; cat /proc/1/comm");
	int procs = atoi(out);
	char *probe = harness_path("tests/helpers/syscall-probe");
	char *argv[] = { (char *)"/probe", (char *)"tcp", (char *)"4111", NULL };
	struct ward_config cfg;
	struct ward_result res;

	/* sh, ls, grep and init: nothing of the host */
	ck_assert_msg(procs >= 2 && procs <= 6, "%d processes visible:\n%s", procs, out);
	ck_assert_ptr_nonnull(strstr(out, "\nward\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n1\nlo:\n")); /* one interface, and it is lo */
	free(out);
	/* lo is up: a listener on it takes a connection (the probe, bound in
	 * from the build tree, which the view does not show) */
	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, NULL), 0);
	ck_assert_int_eq(ward_config_add_mount(&cfg, WARD_MOUNT_RO_BIND, probe, "/probe", NULL), 0);
	ck_assert_int_eq(ward_run(&cfg, argv, &res, NULL), 0);
	ck_assert_msg(res.exit_code == 0 && !res.error, "exit %d: %s", res.exit_code, res.output);
	ck_assert_str_eq(res.output, "bind 4111 ok\nconnect 4111 ok\n");
	ward_result_release(&res);
	ward_config_release(&cfg);
	free(probe);
}
END_TEST

/* The network namespace is the sandbox's own: not the one the supervisor
 * runs in, and the same for every process of the command. */
START_TEST(test_netns_own)
{
	char host[64], *out;
	ssize_t n = readlink("/proc/self/ns/net", host, sizeof(host) - 1);

	ck_assert_int_gt(n, 0);
	host[n] = '\0';
	/* another process of the command (init's own links are closed to it:
	 * init is not dumpable) */
	out = ok_sh("readlink /proc/self/ns/net; sh -c 'readlink /proc/self/ns/net'; "
		    "ls /proc | grep -c '^[0-9]'");
	{
		char a[64], b[64];
		int procs = 0;

		ck_assert_int_eq(sscanf(out, "%63s %63s %d", a, b, &procs), 3);
		ck_assert_str_eq(a, b);
		ck_assert_str_ne(a, host);
		ck_assert_msg(procs >= 2 && procs <= 5, "%d processes:\n%s", procs, out);
	}
	free(out);
}
END_TEST

START_TEST(test_identity)
{
	char *out = ok_sh("id -u");
	char expect[32];
	struct ward_config cfg;
	struct ward_result res;
	char *argv[] = { (char *)"id", (char *)"-u", NULL };

	snprintf(expect, sizeof(expect), "%u\n", getuid());
	ck_assert_str_eq(out, expect);
	free(out);
	ward_config_init(&cfg);
	ward_config_set_workdir(&cfg, workdir, NULL);
	cfg.uid0 = true;
	ck_assert_int_eq(ward_run(&cfg, argv, &res, NULL), 0);
	ck_assert_str_eq(res.output, "0\n");
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_extra_mounts)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
			 (char *)"cat /data/f; touch /data/g 2>/dev/null || echo ro; "
				 "touch /scratch/s && echo rw; touch /cache/c && echo tmpfs",
			 NULL };
	char *data = harness_tmpdir(), *scratch = harness_tmpdir(), path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/f", data);
	f = fopen(path, "w");
	fputs("payload\n", f);
	fclose(f);
	ward_config_init(&cfg);
	ward_config_set_workdir(&cfg, workdir, NULL);
	ck_assert_int_eq(ward_config_add_mount(&cfg, WARD_MOUNT_RO_BIND, data, "/data", &err), 0);
	ck_assert_int_eq(ward_config_add_mount(&cfg, WARD_MOUNT_BIND, scratch, "/scratch", &err), 0);
	ck_assert_int_eq(ward_config_add_mount(&cfg, WARD_MOUNT_TMPFS, NULL, "/cache", &err), 0);
	ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
	ck_assert_msg(res.exit_code == 0, "%s %s", res.output, res.error ? res.error->message : "");
	ck_assert_str_eq(res.output, "payload\nro\nrw\ntmpfs\n");
	snprintf(path, sizeof(path), "%s/s", scratch);
	ck_assert_int_eq(access(path, F_OK), 0);
	ward_result_release(&res);
	ward_config_release(&cfg);
	harness_rmtree(data);
	harness_rmtree(scratch);
	free(data);
	free(scratch);
}
END_TEST

START_TEST(test_setup_failure_is_precise)
{
	struct ward_config cfg;
	struct ward_result res;
	char *argv[] = { (char *)"true", NULL };

	ward_config_init(&cfg);
	ward_config_set_workdir(&cfg, workdir, NULL);
	ck_assert_int_eq(ward_config_add_mount(&cfg, WARD_MOUNT_RO_BIND, "/etc/passwd",
					       "/usr/no-such-dir/x", NULL), 0);
	ck_assert_int_eq(ward_run(&cfg, argv, &res, NULL), 0);
	ck_assert_ptr_nonnull(res.error);
	ck_assert_int_eq(res.error->kind, WARD_ERR_EXECUTION_FAILED);
	ck_assert_msg(strstr(res.error->message, "/usr/no-such-dir") &&
			      strstr(res.error->message, "Read-only file system"),
		      "%s", res.error->message);
	ck_assert_int_eq(res.exit_code, 125);
	ck_assert(!res.started);
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

/* ---- PID 1 --------------------------------------------------------------- */

/* An orphan that has exited is reaped by PID 1: its /proc entry goes. Were
 * it never reaped, it would stay a zombie, the loop would never end, and the
 * command's timeout would fail the test. The orphan leaves the command's
 * process group and session (setsid): PID 1 reaps every child, not only
 * the command's group. */
/* The caller's CPU list as /proc/thread-self/status says it ("0-1"). */
static void cpus_line(char *buf, size_t size)
{
	FILE *f = fopen("/proc/thread-self/status", "re");
	char line[256];

	buf[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
			snprintf(buf, size, "%s", line + 18 + strspn(line + 18, " \t"));
	if (f)
		fclose(f);
	ck_assert_msg(buf[0], "no Cpus_allowed_list in /proc/thread-self/status");
}

/* ward pins itself to one CPU for a moment of its setup (the idmap's child,
 * run by root); the command, in the sandbox or without one, runs on the
 * caller's CPUs, and the caller keeps them. */
START_TEST(test_cpus_given_back)
{
	const char *cmd = "grep Cpus_allowed_list /proc/self/status | cut -f2";
	char before[128], after[128];
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL };
	char *out;

	cpus_line(before, sizeof(before));
	out = ok_sh(cmd);
	ck_assert_str_eq(out, before);
	free(out);
	cpus_line(after, sizeof(after));
	ck_assert_str_eq(after, before);

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, &err), 0);
	cfg.mode = WARD_SANDBOX_OFF;
	ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
	ck_assert_int_eq(res.exit_code, 0);
	ck_assert_str_eq(res.output, before);
	ward_result_release(&res);
	ward_config_release(&cfg);
	cpus_line(after, sizeof(after));
	ck_assert_str_eq(after, before);
}
END_TEST

START_TEST(test_zombies_reaped)
{
	/* a deadline of seconds: an orphan init never reaps fails here soon */
	static const char cmd[] = "(setsid true & echo $! > orphan); p=$(cat orphan); "
				  "while [ -e /proc/$p ]; do sleep 0.01; done; echo reaped";
	struct ward_result res;

	lib_sh(cmd, 5, &res);
	ck_assert_msg(res.exit_code == 0 && !res.error && strcmp(res.output, "reaped\n") == 0,
		      "'%s' failed: exit %d, %s\n%s", cmd, res.exit_code,
		      res.error ? res.error->message : "", res.output);
	ward_result_release(&res);
}
END_TEST

START_TEST(test_daemon_dies_with_command)
{
	/* setsid forks when its caller leads a process group and need not wait
	 * for the child (busybox's never does): wait for the daemon's mark, so
	 * that it is running when the command ends */
	char cmd[512], *out;
	const char *m = harness_sleep_marker();

	snprintf(cmd, sizeof(cmd),
		 "setsid sh -c 'sleep %s & echo daemonised; : > started' < /dev/null; "
		 "while [ ! -e started ]; do sleep 0.05; done",
		 m);
	out = ok_sh(cmd);
	ck_assert_ptr_nonnull(strstr(out, "daemonised"));
	free(out);
	/* ward has returned: its sandbox, the daemon with it, is gone */
	ck_assert_msg(!harness_cmdline_alive("sleep ", m),
		      "the daemon survived");
}
END_TEST

/* ---- timeouts, signals, exit codes -------------------------------------- */

START_TEST(test_timeout_kills_tree)
{
	struct ward_result res;

	char cmd[256];
	const char *m = harness_sleep_marker();

	/* the sleeps outlast any test: that ward returned at all is the timeout */
	snprintf(cmd, sizeof(cmd), "trap '' TERM; (trap '' TERM; sleep %s) & echo partial; sleep %s",
		 m, m);
	lib_sh(cmd, 1, &res);
	ck_assert(res.timed_out);
	ck_assert_int_eq(res.exit_code, 124);
	ck_assert_ptr_nonnull(res.error);
	ck_assert_int_eq(res.error->kind, WARD_ERR_TIMEOUT);
	ck_assert_str_eq(res.output, "partial\n");
	ward_result_release(&res);
	ck_assert_msg(!harness_cmdline_alive("sleep ", m), "a process survived the timeout");
}
END_TEST

START_TEST(test_exit_codes)
{
	static const struct {
		const char *cmd;
		int code, sig;
	} cases[] = {
		{ "exit 0", 0, 0 },	       { "exit 3", 3, 0 },	     { "exit 255", 255, 0 },
		{ "kill -TERM $$", 143, 15 }, { "kill -SEGV $$", 139, 11 }, { "kill -KILL $$", 137, 9 },
		{ "no-such-command-x", 127, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ward_result res;

		lib_sh(cases[i].cmd, 10, &res);
		ck_assert_msg(res.exit_code == cases[i].code && res.signal == cases[i].sig,
			      "'%s': exit %d signal %d", cases[i].cmd, res.exit_code, res.signal);
		ck_assert_ptr_null(res.error);
		ward_result_release(&res);
	}
}
END_TEST

START_TEST(test_exec_failures)
{
	struct ward_config cfg;
	struct ward_result res;
	char script[4200];
	char *missing[] = { (char *)"definitely-not-a-command", NULL };
	char *noexec[] = { script, NULL };
	FILE *f;

	snprintf(script, sizeof(script), "%s/not-executable", workdir);
	f = fopen(script, "w");
	fputs("echo hi\n", f);
	fclose(f);
	chmod(script, 0644);
	ward_config_init(&cfg);
	ward_config_set_workdir(&cfg, workdir, NULL);
	ck_assert_int_eq(ward_run(&cfg, missing, &res, NULL), 0);
	ck_assert_int_eq(res.exit_code, 127);
	ck_assert_ptr_nonnull(strstr(res.output, "definitely-not-a-command: No such file"));
	ward_result_release(&res);
	ck_assert_int_eq(ward_run(&cfg, noexec, &res, NULL), 0);
	ck_assert_int_eq(res.exit_code, 126);
	ck_assert_ptr_nonnull(strstr(res.output, "Permission denied"));
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_sigkill_supervisor_leaves_nothing)
{
	char *ward = harness_path("ward"), cmd[512], buf[8] = "";
	const char *m = harness_sleep_marker();
	bool own_mounts = harness_private_mounts(false);
	int mounts_before = count_lines("/proc/self/mountinfo"), status, p[2], fds[8], n;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	/* "up" once both sleeps have exec'd (before, they are copies of sh) */
	snprintf(cmd, sizeof(cmd),
		 "sleep %s & a=$!; sleep %s & b=$!; until grep -qa ^sleep /proc/$a/cmdline && "
		 "grep -qa ^sleep /proc/$b/cmdline; do sleep 0.01; done; echo up; wait",
		 m, m);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(p[1], 1);
		close(p[0]);
		if (chdir(workdir) < 0)
			_exit(126);
		execl(ward, ward, "run", "--", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* "up": both sleeps have been started */
	ck_assert_int_eq(read(p[0], buf, 3), 3);
	ck_assert_str_eq(buf, "up\n");
	n = harness_pidfds_of("sleep ", m, fds, 8);
	ck_assert_int_eq(n, 2);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* the sandbox dies with ward: both sleeps end (a survivor hangs the test) */
	harness_wait_gone(fds, n);
	close(p[0]);
	if (own_mounts)
		ck_assert_int_eq(count_lines("/proc/self/mountinfo"), mounts_before);
	free(ward);
}
END_TEST

START_TEST(test_signal_forwarded)
{
	char *ward = harness_path("ward"), cmd[256];
	const char *m = harness_sleep_marker();
	int p[2], status;
	char buf[256] = "";
	ssize_t n, got = 0;
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "trap 'echo got-term; exit 7' TERM; echo ready; sleep %s & wait",
		 m);
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		if (chdir(workdir) < 0)
			_exit(126);
		execl(ward, ward, "run", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1); /* "ready" */
	ck_assert_int_gt(n, 0);
	got = n;
	kill(pid, SIGTERM);
	while ((n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	waitpid(pid, &status, 0);
	ck_assert_ptr_nonnull(strstr(buf, "got-term"));
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 7);
	close(p[0]);
	free(ward);
	ck_assert(!harness_cmdline_alive("sleep ", m));
}
END_TEST

/* ---- output, environment, the CLI ---------------------------------------- */

/* ward run --json printing `bytes` bytes of 'a' then "tail-end": the parsed
 * result, and ward's own peak RSS in KiB. */
static json_t *print_bytes(long bytes, long *maxrss)
{
	char *ward = harness_path("ward"), req[256];
	int p[2], in[2], status;
	struct rusage ru;
	char *out = malloc(1 << 20);
	size_t got = 0;
	ssize_t n;
	json_t *o;
	pid_t pid;

	snprintf(req, sizeof(req),
		 "{\"command\": \"head -c %ld /dev/zero | tr '\\\\0' a; echo tail-end\"}", bytes);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(in), 0);
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(p[1], 1);
		close(p[0]);
		close(in[1]);
		if (chdir(workdir) < 0)
			_exit(126);
		execl(ward, ward, "run", "--json", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	close(in[0]);
	ck_assert_int_eq(write(in[1], req, strlen(req)), (ssize_t)strlen(req));
	close(in[1]);
	while ((n = read(p[0], out + got, (1 << 20) - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o != NULL, "not JSON: %.200s", out);
	*maxrss = ru.ru_maxrss;
	free(out);
	free(ward);
	return o;
}

START_TEST(test_big_output_flat)
{
	long small_rss, big_rss;
	json_t *o = print_bytes(1000000, &small_rss);

	json_decref(o);
	o = print_bytes(100000000, &big_rss);
	ck_assert_int_le(json_string_length(json_object_get(o, "output")), 64 * 1024);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "stdout_bytes")), 100000009);
	ck_assert_int_ge(json_integer_value(json_object_get(o, "truncated_bytes")),
			 100000009 - 64 * 1024);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(o, "output")), "tail-end\n"));
	/* ward's own peak memory does not grow with what the command prints:
	 * 100 MB costs what 1 MB does, give or take a few pages (kept, it would
	 * be 99 MB more); its absolute size is bench/output.c's to measure */
	ck_assert_msg(big_rss < small_rss + 4096, "ward peaked at %ld KiB for 100 MB, %ld for 1 MB",
		      big_rss, small_rss);
	json_decref(o);
}
END_TEST

START_TEST(test_secrets_not_inherited)
{
	char *out;

	setenv("AWS_SECRET_ACCESS_KEY", "hunter2-aws", 1);
	setenv("GITHUB_TOKEN", "hunter2-gh", 1);
	setenv("LANG", "C.UTF-8", 1);
	out = ok_sh("env");
	ck_assert_ptr_null(strstr(out, "hunter2"));
	ck_assert_ptr_null(strstr(out, "AWS_SECRET_ACCESS_KEY"));
	ck_assert_ptr_nonnull(strstr(out, "LANG=C.UTF-8"));
	ck_assert_ptr_nonnull(strstr(out, "PWD="));
	free(out);
}
END_TEST

START_TEST(test_cli_json)
{
	char req[8192];
	json_t *o;
	int status;

	snprintf(req, sizeof(req), "{\"command\": \"pwd; echo e >&2; exit 4\", \"workdir\": \"%s\"}",
		 workdir);
	o = cli_json(req, &status);
	ck_assert_int_eq(WEXITSTATUS(status), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "exit_code")), 4);
	ck_assert(json_is_false(json_object_get(o, "success")));
	ck_assert(json_is_true(json_object_get(o, "sandboxed")));
	ck_assert(json_is_null(json_object_get(o, "error")));
	{
		char expect[8192];

		snprintf(expect, sizeof(expect), "%s\n\n--- stderr ---\ne\n", workdir);
		ck_assert_str_eq(json_string_value(json_object_get(o, "output")), expect);
	}
	json_decref(o);

	o = cli_json("{\"command\": \"true\", \"timeout\": 0}", &status);
	ck_assert_int_eq(WEXITSTATUS(status), 125);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "kind")),
			 "InvalidParameters");
	json_decref(o);
	o = cli_json("{\"command\": \"true\", \"workdir\": \"/no/such/dir\"}", &status);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "kind")),
			 "InvalidParameters");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(json_object_get(o, "error"),
								   "message")),
				     "/no/such/dir"));
	json_decref(o);
	o = cli_json("{not json", &status);
	ck_assert_int_eq(WEXITSTATUS(status), 125);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "kind")),
			 "InvalidParameters");
	json_decref(o);
}
END_TEST

START_TEST(test_cli_streaming)
{
	char *ward = harness_path("ward");
	char *argv[] = { ward, (char *)"run", (char *)"-C", workdir, (char *)"--", (char *)"cat", NULL };
	char *argv2[] = { ward, (char *)"run", (char *)"--frobnicate", NULL };
	char *out = NULL, *err = NULL;
	int status;

	status = harness_capture_input(argv, "through stdin\n", &out, NULL);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_str_eq(out, "through stdin\n");
	free(out);
	status = harness_capture(argv2, &out, &err);
	ck_assert_int_eq(WEXITSTATUS(status), 125);
	ck_assert_ptr_nonnull(strstr(err, "unknown option '--frobnicate'"));
	free(out);
	free(err);
	free(ward);
}
END_TEST

START_TEST(test_sandbox_off)
{
	char *ward = harness_path("ward");
	char req[4096];
	char *argv[] = { ward,	       (char *)"run",		(char *)"--json",
			 (char *)"--sandbox", (char *)"off", (char *)"--workdir-root",
			 workdir,	       NULL };
	char *out = NULL;
	json_t *o;

	setenv("AWS_SECRET_ACCESS_KEY", "hunter2-off", 1);
	snprintf(req, sizeof(req), "{\"command\": \"env; pwd; sleep 30\", \"workdir\": \"%s\", "
				   "\"timeout\": 1}", workdir);
	harness_capture_input(argv, req, &out, NULL);
	o = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_false(json_object_get(o, "sandboxed")));
	ck_assert(json_is_true(json_object_get(o, "timed_out")));
	ck_assert_ptr_null(strstr(json_string_value(json_object_get(o, "output")), "hunter2"));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(o, "output")), workdir));
	json_decref(o);
	free(out);
	free(ward);
}
END_TEST

START_TEST(test_many_runs_leave_nothing)
{
	bool own_mounts = harness_private_mounts(false);
	int fds_before, mounts_before = count_lines("/proc/self/mountinfo"), i;
	DIR *d;
	struct dirent *e;
	int n = 0;

	d = opendir("/proc/self/fd");
	while ((e = readdir(d)))
		n++;
	closedir(d);
	fds_before = n;
	for (i = 0; i < 200; i++) {
		struct ward_result res;
		struct ward_config cfg;
		char *argv[] = { (char *)"/bin/true", NULL };

		ward_config_init(&cfg);
		ward_config_set_workdir(&cfg, workdir, NULL);
		ck_assert_int_eq(ward_run(&cfg, argv, &res, NULL), 0);
		ck_assert_msg(res.exit_code == 0, "run %d: %s", i,
			      res.error ? res.error->message : res.output);
		ward_result_release(&res);
		ward_config_release(&cfg);
	}
	n = 0;
	d = opendir("/proc/self/fd");
	while ((e = readdir(d)))
		n++;
	closedir(d);
	ck_assert_int_eq(n, fds_before);
	if (own_mounts)
		ck_assert_int_eq(count_lines("/proc/self/mountinfo"), mounts_before);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1); /* no child left, not even a zombie */
	ck_assert_int_eq(errno, ECHILD);
}
END_TEST

START_TEST(test_doctor)
{
	char *ward = harness_path("ward");
	char *argv[] = { ward, (char *)"doctor", (char *)"--json", NULL };
	char *argv_text[] = { ward, (char *)"doctor", NULL };
	char *out = NULL;
	json_t *o, *c;
	size_t i;
	bool saw_userns = false, saw_tls = false, saw_root_view = false;
	int status = harness_capture(argv, &out, NULL);

	ck_assert_int_eq(WEXITSTATUS(status), 0);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o != NULL, "not JSON: %s", out);
	ck_assert(json_is_true(json_object_get(o, "sandbox_works")));
	ck_assert_str_eq(json_string_value(json_object_get(o, "mode")), "required");
	json_array_foreach(json_object_get(o, "checks"), i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		bool ok = strcmp(json_string_value(json_object_get(c, "status")), "ok") == 0;

		if (strcmp(name, "user namespaces") == 0)
			saw_userns = ok;
		/* the build's ward-tls, beside the ward binary, started */
		if (strcmp(name, "TLS helper") == 0)
			saw_tls = ok;
		/* root's idmapped system directories, asked of a sandbox: said
		 * to root alone, ok or limited as the kernel and the filesystem
		 * allow (test-rootfiles asks for the idmap where they do) */
		if (strcmp(name, "root's view") == 0) {
			const char *st = json_string_value(json_object_get(c, "status"));

			ck_assert_msg(geteuid() == 0, "doctor speaks of root's view to uid %u: %s",
				      (unsigned)geteuid(), out);
			ck_assert_msg(ok || strcmp(st, "limited") == 0, "doctor: %s", out);
			saw_root_view = true;
		}
	}
	ck_assert(saw_userns);
	ck_assert_msg(saw_tls, "doctor: %s", out);
	ck_assert_msg(saw_root_view == (geteuid() == 0), "doctor: %s", out);
	if (harness_have("landlock"))
		ck_assert_int_ge(json_integer_value(json_object_get(o, "landlock_abi")), 1);
	json_decref(o);
	free(out);
	status = harness_capture(argv_text, &out, NULL);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_ptr_nonnull(strstr(out, "user namespaces"));
	ck_assert_ptr_nonnull(strstr(out, "sandboxed"));
	free(out);
	free(ward);
}
END_TEST

/* Every way of asking for help answers on stdout and exits 0, whatever
 * the subcommand: a person (or a script checking an install) reads a
 * non-zero exit as a failure. Before, 'ward changes --help' and 'ward diff
 * --help' exited 125. */
START_TEST(test_every_help_exits_zero)
{
	static const char *const asks[][3] = {
		{ "--help" },		 { "-h" },		  { "help" },
		{ "run", "--help" },	 { "run", "-h" },	  { "validate", "--help" },
		{ "doctor", "--help" },	 { "serve", "--help" },	  { "shell", "--help" },
		{ "changes", "--help" }, { "diff", "--help" },	  { "apply", "--help" },
		{ "discard", "--help" }, { "changes", "-h" },	  { "diff", "-h" },
		{ "apply", "-h" },	 { "discard", "-h" },
	};
	char *ward = harness_path("ward");

	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		char out[8192] = "";
		ssize_t n, got = 0;
		int p[2], status;
		pid_t pid;

		ck_assert_int_eq(pipe(p), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);

			dup2(null, 0);
			dup2(p[1], 1);
			close(p[0]);
			execl(ward, ward, asks[i][0], asks[i][1], (char *)NULL);
			_exit(127);
		}
		close(p[1]);
		while ((n = read(p[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
			got += n;
		close(p[0]);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "'ward %s %s' exited %d", asks[i][0], asks[i][1] ? asks[i][1] : "",
			      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		ck_assert_msg(strstr(out, "usage: ward") != NULL,
			      "'ward %s %s' printed no usage on stdout", asks[i][0],
			      asks[i][1] ? asks[i][1] : "");
	}
	free(ward);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("run");
	TCase *view = harness_tcase(s, "view", "userns");
	TCase *secrets = harness_tcase(s, "view-secrets", "root userns");
	TCase *pid1 = harness_tcase(s, "pid1", "userns");
	TCase *life = harness_tcase(s, "lifecycle", "userns");
	/* its own, with a short limit: a deadline that never fires (the
	 * mutation tier's timeout-never-fires) shows in seconds, not minutes */
	TCase *deadline = harness_tcase(s, "deadline", "userns");
	TCase *io = harness_tcase(s, "io", "userns");
	TCase *off = harness_tcase(s, "off", NULL);

	tcase_add_checked_fixture(view, setup, teardown);
	tcase_add_checked_fixture(secrets, setup, teardown);
	tcase_add_test(secrets, test_view_masks_secrets);
	tcase_add_checked_fixture(pid1, setup, teardown);
	tcase_add_checked_fixture(life, setup, teardown);
	tcase_add_checked_fixture(io, setup, teardown);
	tcase_add_checked_fixture(off, setup, teardown);
	tcase_add_test(view, test_view_hides_host);
	tcase_add_test(view, test_view_writable_set);
	tcase_add_test(view, test_proc_lo_hostname);
	tcase_add_test(view, test_netns_own);
	tcase_add_test(view, test_identity);
	tcase_add_test(view, test_extra_mounts);
	tcase_add_test(view, test_setup_failure_is_precise);
	tcase_add_test(pid1, test_zombies_reaped);
	tcase_add_test(pid1, test_cpus_given_back);
	tcase_add_test(pid1, test_daemon_dies_with_command);
	tcase_add_checked_fixture(deadline, setup, teardown);
	tcase_set_timeout(deadline, 10);
	tcase_add_test(deadline, test_timeout_kills_tree);
	tcase_add_test(life, test_exit_codes);
	tcase_add_test(life, test_exec_failures);
	tcase_add_test(life, test_sigkill_supervisor_leaves_nothing);
	tcase_add_test(life, test_signal_forwarded);
	tcase_add_test(life, test_many_runs_leave_nothing);
	tcase_add_test(io, test_big_output_flat);
	tcase_add_test(io, test_secrets_not_inherited);
	tcase_add_test(io, test_cli_json);
	tcase_add_test(io, test_cli_streaming);
	tcase_add_test(off, test_sandbox_off);
	tcase_add_test(off, test_every_help_exits_zero);
	tcase_add_test(io, test_doctor);
	return harness_main(s);
}
