/* test-limits.c — resource limits for real: OOM kills, fork bombs, CPU
 * quotas, peaks, rlimits, cgroups removed (also after a ward was SIGKILLed),
 * the rlimits-only mode of a user with no cgroup, and ward inside a
 * container's cgroup namespace (cgroup2-container: made by hand as an engine
 * makes it, in the VM tier's pure cgroup v2).
 *
 * The cgroup cases run once per cgroup version this host gives ward: tagged
 * cgroup1 (a hybrid host, as root) or cgroup2 (a pure v2 host or the VM
 * tests/vm/run.sh boots). */
#include "harness.h"
#include "runtime/cgroup/cgroup-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/request.h"

#include <jansson.h>
#include "ward/sandbox.h"

#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *workdir, *hog;

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return rc;
}

static void setup(void)
{
	workdir = harness_tmpdir();
	hog = harness_path("tests/helpers/hog");
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
	free(hog);
}

/* The version ward uses here: the case's tag says which. */
static int cg_version(void)
{
	return harness_have("cgroup2") ? 2 : 1;
}

/* Where ward's command cgroups of that version are (as root): v2 in its
 * "ward" parent, v1 at the top of each hierarchy as ward-<name>. */
static const char *cg_base(void)
{
	return cg_version() == 2 ? "/sys/fs/cgroup/ward" : "/sys/fs/cgroup/memory";
}

static void config(struct ward_config *cfg, int timeout, const char *const *limits)
{
	struct ward_error *err = NULL;

	ward_config_init(cfg);
	ck_assert_int_eq(ward_config_set_workdir(cfg, workdir, &err), 0);
	ck_assert_int_eq(ward_config_add_mount(cfg, WARD_MOUNT_RO_BIND, hog, "/hog", &err), 0);
	cfg->timeout = timeout;
	/* pairs: limit index as text ("0" memory …), value */
	for (; limits && limits[0]; limits += 2)
		ck_assert_msg(ward_limits_set(&cfg->limits, (enum ward_limit)atoi(limits[0]),
					      limits[1], &err) == 0,
			      "%s", err ? err->message : "");
}

static void run(struct ward_config *cfg, const char *cmd, struct ward_result *res)
{
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL };

	ck_assert_msg(ward_run(cfg, argv, res, &err) == 0, "ward_run: %s", err ? err->message : "");
}


/* Entries of ours (w<pid>-…, v1: ward-w<pid>-…) in dir. */
static int our_cgroups(const char *dir, pid_t pid)
{
	char prefix[32];
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	snprintf(prefix, sizeof(prefix), "%sw%ld-", cg_version() == 2 ? "" : "ward-", (long)pid);
	while (d && (e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	if (d)
		closedir(d);
	return n;
}

/* The hierarchies found where systemd mounts them are the ones the mount
 * table lists (the hybrid host and the v2 guest both have that layout). */
START_TEST(test_standard_mounts)
{
	static struct cgroup_probe fast, table;
	int std, i;

	std = ward_cgroup_mounts_standard(&fast);
	ward_cgroup_mounts_table(&table);
	ck_assert_msg(std == cg_version(), "the standard layout gave %d on a cgroup v%d host", std,
		      cg_version());
	ck_assert_str_eq(fast.v2_mount, table.v2_mount);
	for (i = 0; std == 1 && i < CG1_COUNT; i++)
		ck_assert_str_eq(fast.v1_mount[i], table.v1_mount[i]);
}
END_TEST

START_TEST(test_oom)
{
	static const char *const lim[] = { "0", "32M", NULL };
	struct ward_config cfg;
	struct ward_result res;

	config(&cfg, 60, lim);
	run(&cfg, "exec /hog alloc 100", &res);
	ck_assert_msg(res.resources.oom_killed, "not OOM-killed: exit %d, %s", res.exit_code,
		      res.output);
	ck_assert_int_eq(res.signal, SIGKILL);
	ck_assert_int_eq(res.exit_code, 137);
	ck_assert_ptr_nonnull(res.error);
	ck_assert_int_eq(res.error->kind, WARD_ERR_EXECUTION_FAILED);
	ck_assert_str_eq(res.error->message, "killed by the OOM killer: memory limit 32 MiB");
	ck_assert_int_eq(res.resources.cgroup_version, cg_version());
	ck_assert_msg(res.resources.memory_peak <= (32u << 20) + (1u << 20) &&
			      res.resources.memory_peak > (16u << 20),
		      "peak %llu", (unsigned long long)res.resources.memory_peak);
	ward_result_release(&res);

	/* through a shell that survives its child: said differently */
	run(&cfg, "/hog alloc 100; echo after", &res);
	ck_assert(res.resources.oom_killed);
	ck_assert_ptr_nonnull(strstr(res.output, "after"));
	ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
		      res.error ? res.error->message : res.output);
	ck_assert_ptr_null(res.error);
	ward_result_release(&res);

	/* 20 MB fits, and the peak says so */
	run(&cfg, "exec /hog alloc 20", &res);
	ck_assert_msg(res.exit_code == 0 && !res.error, "exit %d: %s %s", res.exit_code,
		      res.error ? res.error->message : "", res.output);
	ck_assert(!res.resources.oom_killed);
	ck_assert_str_eq(res.output, "allocated 20\n");
	ck_assert_msg(res.resources.have_memory_peak && res.resources.memory_peak >= (20u << 20) &&
			      res.resources.memory_peak < (32u << 20),
		      "peak %llu", (unsigned long long)res.resources.memory_peak);
	ck_assert_uint_eq(res.resources.applied[WARD_LIMIT_MEMORY].value, 32u << 20);
	ck_assert_str_eq(res.resources.applied[WARD_LIMIT_MEMORY].mechanism,
			 cg_version() == 2 ? "cgroup v2 memory.max" : "cgroup v1 memory.limit_in_bytes");
	ck_assert_msg(res.resources.applied[WARD_LIMIT_MEMORY_SWAP].mechanism[0], "swap not held");
	ck_assert_uint_eq(res.resources.applied[WARD_LIMIT_MEMORY_SWAP].value, 0);
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_forkbomb)
{
	static const char *const lim[] = { "2", "64", NULL };
	struct ward_config cfg;
	struct ward_result res;

	/* the bomb never ends on its own: that ward returned is the timeout's
	 * kill of the whole tree */
	config(&cfg, 3, lim);
	run(&cfg, "exec /hog forkbomb", &res);
	ck_assert(res.timed_out);
	ck_assert_int_eq(res.exit_code, 124);
	ck_assert_str_eq(res.resources.applied[WARD_LIMIT_PIDS].mechanism,
			 cg_version() == 2 ? "cgroup v2 pids.max" : "cgroup v1 pids.max");
	ck_assert(res.resources.have_pids_peak);
	ck_assert_msg(res.resources.pids_peak <= 64 && res.resources.pids_peak >= 32,
		      "pids peak %llu", (unsigned long long)res.resources.pids_peak);
	ward_result_release(&res);
	ck_assert_int_eq(our_cgroups(cg_base(), getpid()), 0);

	/* the machine is still ours: a command runs at once */
	run(&cfg, "echo fine", &res);
	ck_assert_str_eq(res.output, "fine\n");
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

/* Watches the cpu.stat of this process's command cgroups until the kernel
 * says it throttled one (nr_throttled > 0), then makes `stop`. */
struct throttle_watch {
	char stop[4200];
};

static void *watch_throttle(void *arg)
{
	struct throttle_watch *w = arg;
	const char *base = cg_version() == 2 ? "/sys/fs/cgroup/ward" : "/sys/fs/cgroup/cpu";
	char prefix[32];
	bool throttled = false;

	snprintf(prefix, sizeof(prefix), "%sw%ld-", cg_version() == 2 ? "" : "ward-",
		 (long)getpid());
	while (!throttled) {
		struct timespec pause = { 0, 20 * 1000000 };
		DIR *d = opendir(base);
		struct dirent *e;

		while (d && (e = readdir(d)) && !throttled) {
			char path[4400], line[128];
			FILE *f;

			if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s/cpu.stat", base, e->d_name);
			f = fopen(path, "re");
			while (f && fgets(line, sizeof(line), f))
				throttled = throttled || (strncmp(line, "nr_throttled ", 13) == 0 &&
							  atol(line + 13) > 0);
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
		if (!throttled)
			nanosleep(&pause, NULL);
	}
	fclose(fopen(w->stop, "w"));
	return NULL;
}

/* The CPU quota throttles: a command that spins until told to stop is
 * throttled by the kernel (its cgroup's nr_throttled), and only that stops
 * it. Without the quota it would spin until its timeout and fail. */
START_TEST(test_cpu_quota)
{
	static const char *const lim[] = { "3", "0.2", NULL };
	struct ward_config cfg;
	struct ward_result res;
	struct throttle_watch w;
	pthread_t t;

	snprintf(w.stop, sizeof(w.stop), "%s/stop", workdir);
	ck_assert_int_eq(pthread_create(&t, NULL, watch_throttle, &w), 0);
	config(&cfg, 8, lim);
	run(&cfg, "while [ ! -e stop ]; do :; done; echo stopped", &res);
	ck_assert_msg(res.exit_code == 0 && !res.timed_out, "exit %d %s", res.exit_code,
		      res.output);
	ck_assert_str_eq(res.output, "stopped\n");
	ck_assert(res.resources.have_cpu);
	ck_assert_uint_eq(res.resources.applied[WARD_LIMIT_CPUS].value, 20000);
	pthread_join(t, NULL);
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_peaks)
{
	struct ward_config cfg;
	struct ward_result res;

	config(&cfg, 60, NULL);
	run(&cfg, "exec /hog procs 20 1", &res);
	ck_assert_str_eq(res.output, "forked 20\n");
	/* init, hog and its 20 children */
	ck_assert(res.resources.have_pids_peak);
	ck_assert_msg(res.resources.pids_peak >= 21 && res.resources.pids_peak <= 24,
		      "pids peak %llu", (unsigned long long)res.resources.pids_peak);
	ward_result_release(&res);

	run(&cfg, "exec /hog alloc 48", &res);
	ck_assert_msg(res.resources.memory_peak >= (48u << 20) &&
			      res.resources.memory_peak < (64u << 20),
		      "peak %llu", (unsigned long long)res.resources.memory_peak);
	/* the defaults, applied by the cgroup */
	ck_assert_uint_eq(res.resources.applied[WARD_LIMIT_PIDS].value, 4096);
	ck_assert(res.resources.applied[WARD_LIMIT_MEMORY].value > 0);
	ck_assert_int_eq(res.resources.cgroup_version, cg_version());
	ck_assert_str_eq(res.resources.note, "");
	ward_result_release(&res);

	/* the cgroup namespace is rooted at the command's cgroup: no host path shows */
	run(&cfg, "cat /proc/self/cgroup", &res);
	if (cg_version() == 2)
		ck_assert_str_eq(res.output, "0::/\n");
	else
		ck_assert_msg(strstr(res.output, ":memory:/\n") && strstr(res.output, ":pids:/\n") &&
			      !strstr(res.output, "ward"), "%s", res.output);
	ward_result_release(&res);

	/* the CPU time is the command's own (as it measured it) plus what init
	 * and exec cost (measured with a command that spins for no time); the
	 * machine is shared, so the amount itself varies */
	{
		long own, got, setup;

		run(&cfg, "exec /hog spin 0", &res);
		setup = (long)((res.resources.cpu_user_us + res.resources.cpu_system_us) / 1000) -
			atol(res.output + 7);
		ward_result_release(&res);
		run(&cfg, "exec /hog spin 0.5", &res);
		own = strncmp(res.output, "cpu_ms ", 7) == 0 ? atol(res.output + 7) : -1;
		got = (long)((res.resources.cpu_user_us + res.resources.cpu_system_us) / 1000);
		ck_assert_msg(own > 0 && got >= own - 10 && got <= own + 2 * setup + 50,
			      "reported %ld ms, the command used %ld ms (setup %ld ms)", got, own,
			      setup);
	}
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

/* No empty "ward" parent left in any hierarchy: on v2 the last ward out
 * removes it (one that still has another ward's cgroup in it stays,
 * rightly); v1 makes none. */
static void assert_no_empty_parent(void)
{
	static const char *const v1[] = { "memory", "pids", "cpu", "cpuacct", "blkio" };
	char dir[128];
	size_t i, n = cg_version() == 2 ? 1 : sizeof(v1) / sizeof(v1[0]);

	for (i = 0; i < n; i++) {
		DIR *d;
		struct dirent *e;
		int children = 0;

		if (cg_version() == 2)
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup/ward");
		else
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s/ward", v1[i]);
		d = opendir(dir);
		if (!d)
			continue;
		while ((e = readdir(d)))
			children += e->d_type == DT_DIR && e->d_name[0] != '.';
		closedir(d);
		ck_assert_msg(children > 0, "'%s' left behind, empty", dir);
	}
}

START_TEST(test_no_leftovers)
{
	struct ward_config cfg;
	struct ward_result res;
	const char *n = getenv("WARD_TEST_RUNS");
	int i, runs = n ? atoi(n) : 100;

	config(&cfg, 30, NULL);
	cfg.view = false; /* the cgroup is what is measured here */
	for (i = 0; i < runs; i++) {
		char *argv[] = { (char *)"/bin/true", NULL };
		struct ward_error *err = NULL;

		ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
		ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
			      res.error ? res.error->message : res.output);
		ck_assert_int_eq(res.resources.cgroup_version, cg_version());
		ward_result_release(&res);
	}
	ck_assert_int_eq(our_cgroups(cg_base(), getpid()), 0);
	if (cg_version() == 1) {
		ck_assert_int_eq(our_cgroups("/sys/fs/cgroup/pids", getpid()), 0);
		ck_assert_int_eq(our_cgroups("/sys/fs/cgroup/cpuacct", getpid()), 0);
	}
	assert_no_empty_parent();
	ward_config_release(&cfg);
}
END_TEST

/* Without the sandbox the limits hold all the same, and what the command
 * left running in its cgroup (a daemon in its own session) is killed. */
START_TEST(test_sandbox_off)
{
	static const char *const lim[] = { "0", "32M", NULL };
	struct ward_config cfg;
	struct ward_result res;
	char cmd[512];

	config(&cfg, 30, lim);
	cfg.mode = WARD_SANDBOX_OFF;
	snprintf(cmd, sizeof(cmd), "exec %s alloc 100", hog);
	run(&cfg, cmd, &res);
	ck_assert(!res.sandboxed);
	ck_assert(res.resources.oom_killed);
	ck_assert_str_eq(res.error->message, "killed by the OOM killer: memory limit 32 MiB");
	ward_result_release(&res);

	{
		const char *m = harness_sleep_marker();

		/* "started" once the daemon is sleep (setsid execs in place) */
		snprintf(cmd, sizeof(cmd),
			 "setsid sleep %s </dev/null >/dev/null 2>&1 & p=$!; "
			 "until grep -qa ^sleep /proc/$p/cmdline; do sleep 0.01; done; echo started",
			 m);
		run(&cfg, cmd, &res);
		ck_assert_str_eq(res.output, "started\n");
		ward_result_release(&res);
		ward_config_release(&cfg);
		ck_assert_msg(!harness_cmdline_alive("sleep ", m), "the daemon outlived its cgroup");
	}
}
END_TEST

START_TEST(test_io_weight)
{
	static const char *const lim[] = { "4", "100", NULL };
	static const char *const big[] = { "4", "5000", NULL };
	struct ward_config cfg;
	struct ward_result res;
	const char *m;

	config(&cfg, 30, lim);
	run(&cfg, "true", &res);
	ck_assert_msg(res.exit_code == 0, "%s", res.error ? res.error->message : "");
	m = res.resources.applied[WARD_LIMIT_IO_WEIGHT].mechanism;
	ck_assert_msg(strstr(m, cg_version() == 2 ? "cgroup v2 io" : "cgroup v1 blkio") &&
			      strstr(m, "weight"), "%s", m);
	ck_assert_uint_eq(res.resources.applied[WARD_LIMIT_IO_WEIGHT].value, 100);
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* v2 weights go to 10000, v1's to 1000: said, not clamped */
	config(&cfg, 30, big);
	run(&cfg, "true", &res);
	if (cg_version() == 1) {
		ck_assert_int_eq(res.exit_code, 125);
		ck_assert_str_eq(res.error->message, "--io-weight: cgroup v1 weights go up to 1000, "
						     "got 5000");
	} else {
		ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
			      res.error ? res.error->message : res.output);
		ck_assert_str_eq(res.resources.applied[WARD_LIMIT_IO_WEIGHT].mechanism,
				 "cgroup v2 io.weight");
	}
	ward_result_release(&res);
	ward_config_release(&cfg);
	ck_assert_int_eq(our_cgroups(cg_base(), getpid()), 0);
}
END_TEST

/* The CLI: the result object says it all; bad values are refused before
 * anything runs. */
START_TEST(test_cli_json)
{
	char *ward = harness_path("ward"), *out = NULL, *err = NULL;
	char *argv[] = { ward, (char *)"run", (char *)"--json", (char *)"--no-policy",
			 (char *)"-C", workdir, (char *)"--ro-bind", hog, (char *)"/hog",
			 (char *)"--memory", (char *)"32M", (char *)"--pids", (char *)"64", NULL };
	json_t *o, *r, *l;
	int status;

	status = harness_capture_input(argv, "{\"command\": \"exec /hog alloc 100\"}", &out, NULL);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o, "not JSON: %s", out);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 137, "%s", out);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "kind")),
			 "ExecutionFailed");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "message")),
			 "killed by the OOM killer: memory limit 32 MiB");
	r = json_object_get(o, "resources");
	ck_assert(json_is_true(json_object_get(r, "oom_killed")));
	ck_assert_int_eq(json_integer_value(json_object_get(r, "cgroup")), cg_version());
	l = json_object_get(r, "limits");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(l, "pids"), "value")), 64);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(l, "memory"), "value")),
			 32 << 20);
	ck_assert_ptr_nonnull(json_string_value(json_object_get(json_object_get(l, "memory"),
								  "mechanism")));
	json_decref(o);
	free(out);

	/* refused before anything runs */
	argv[10] = (char *)"12Q";
	status = harness_capture_input(argv, "{\"command\": \"true\"}", &out, &err);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 125, "%s", out);
	ck_assert_msg(strstr(err, "--memory: '12Q' has an unknown unit 'Q'"), "%s", err);
	free(out);
	free(err);
	free(ward);
}
END_TEST

/* `ward doctor --json`: the "limits" check, its status and its fix. */
static json_t *doctor_check(const char *name)
{
	char *ward = harness_path("ward"), *out = NULL;
	char *argv[] = { ward, (char *)"doctor", (char *)"--json", NULL };
	json_t *o, *checks, *c, *found = NULL;
	size_t i;

	harness_capture(argv, &out, NULL);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o, "not JSON: %s", out);
	checks = json_object_get(o, "checks");
	json_array_foreach(checks, i, c)
		if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
			found = json_incref(c);
	json_decref(o);
	free(out);
	free(ward);
	ck_assert_msg(found, "no '%s' check", name);
	return found;
}

START_TEST(test_doctor)
{
	json_t *c = doctor_check("limits");
	char want[64];

	ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "ok");
	snprintf(want, sizeof(want), "its own cgroup v%d", cg_version());
	ck_assert_msg(strstr(json_string_value(json_object_get(c, "detail")), want), "%s",
		      json_string_value(json_object_get(c, "detail")));
	json_decref(c);
	c = doctor_check(cg_version() == 2 ? "cgroup v2" : "cgroup v1");
	ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "ok");
	json_decref(c);
}
END_TEST

/* A library host that forks (a worker pool, say): each process's cgroups
 * carry its own pid and start time, so a run in one never takes another's
 * live cgroup for a dead ward's. */
START_TEST(test_forked_host)
{
	struct ward_config cfg;
	struct ward_result res;
	pid_t child;
	int status, i;

	config(&cfg, 30, NULL);
	run(&cfg, "true", &res); /* the parent has made a cgroup name before the fork */
	ward_result_release(&res);
	usleep(50000); /* start times count in clock ticks: the child's must differ */
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		/* runs until the parent, done with its cleanup, says go */
		run(&cfg, "until [ -e go ]; do sleep 0.05; done; echo survived", &res);
		_exit(res.exit_code == 0 && strcmp(res.output, "survived\n") == 0 ? 0 : 1);
	}
	for (i = 0; i < 500 && our_cgroups(cg_base(), child) == 0; i++)
		usleep(10000);
	ck_assert_int_eq(our_cgroups(cg_base(), child), 1);
	run(&cfg, "true", &res); /* removes leftovers: must leave the child's alone */
	ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
		      res.error ? res.error->message : res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);
	{
		char go[4200];

		snprintf(go, sizeof(go), "%s/go", workdir);
		fclose(fopen(go, "w"));
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the forked host's command was killed");
}
END_TEST

/* A ward CLI running `sleep`, started in its own process. */
static pid_t start_ward(const char *secs)
{
	char *ward = harness_path("ward");
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		execl(ward, "ward", "run", "--no-policy", "-C", workdir, "--", "sleep", secs,
		      (char *)NULL);
		_exit(127);
	}
	free(ward);
	return pid;
}

static bool wait_cgroup(pid_t pid, int want)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (our_cgroups(cg_base(), pid) == want)
			return true;
		usleep(20000);
	}
	return false;
}

START_TEST(test_sigkilled_ward)
{
	struct ward_config cfg;
	struct ward_result res;
	pid_t dead, live;
	int status;

	dead = start_ward("30");
	live = start_ward("30");
	ck_assert_msg(wait_cgroup(dead, 1) && wait_cgroup(live, 1), "no cgroup appeared");
	kill(dead, SIGKILL);
	ck_assert_int_eq(waitpid(dead, &status, 0), dead);
	/* left behind: a SIGKILLed ward cleans nothing (any other ward starting
	 * on this machine now would remove it: the case runs alone in the
	 * mutation tier's list for that reason) */
	ck_assert_int_eq(our_cgroups(cg_base(), dead), 1);

	/* the next run removes the dead ward's cgroup, and only that one */
	config(&cfg, 30, NULL);
	run(&cfg, "true", &res);
	ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
		      res.error ? res.error->message : res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);
	ck_assert_int_eq(our_cgroups(cg_base(), dead), 0);
	ck_assert_int_eq(our_cgroups(cg_base(), live), 1);
	if (cg_version() == 1)
		ck_assert_int_eq(our_cgroups("/sys/fs/cgroup/pids", dead), 0);

	/* the live one ends normally (SIGTERM goes to its command) and cleans up */
	kill(live, SIGTERM);
	ck_assert_int_eq(waitpid(live, &status, 0), live);
	ck_assert_int_eq(our_cgroups(cg_base(), live), 0);
	assert_no_empty_parent();
}
END_TEST

START_TEST(test_rlimits)
{
	static const char *const lim[] = { "5", "1M", NULL };
	struct ward_config cfg;
	struct ward_result res;
	int nofile;

	config(&cfg, 30, lim);
	run(&cfg, "ulimit -c; ulimit -n; ulimit -f; ulimit -Hn", &res);
	ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
		      res.error ? res.error->message : res.output);
	ck_assert_msg(strncmp(res.output, "0\n", 2) == 0, "%s", res.output);
	nofile = atoi(res.output + 2);
	ck_assert_msg(nofile > 0 && nofile <= 8192, "%s", res.output);
	ck_assert_ptr_nonnull(strstr(res.output + 2, "\n2048\n")); /* 512-byte blocks */
	nofile = atoi(strstr(res.output + 2, "\n2048\n") + 6); /* the hard limit: capped too */
	ck_assert_msg(nofile > 0 && nofile <= 8192, "%s", res.output);
	ck_assert_str_eq(res.resources.applied[WARD_LIMIT_FILE_SIZE].mechanism,
			 "rlimit RLIMIT_FSIZE");
	ck_assert_str_eq(res.resources.applied[WARD_APPLIED_CORE].mechanism, "rlimit RLIMIT_CORE");
	ward_result_release(&res);

	run(&cfg, "exec /hog write 2 big", &res);
	ck_assert_msg(res.signal == SIGXFSZ, "exit %d %s", res.exit_code, res.output);
	ward_result_release(&res);
	run(&cfg, "exec /hog write 1 small", &res);
	ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
		      res.error ? res.error->message : res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

/* --no-cgroup (measurements): rlimits only, said so; an explicit limit is
 * refused rather than dropped. */
START_TEST(test_no_cgroup)
{
	static const char *const lim[] = { "2", "64", NULL };
	struct ward_config cfg;
	struct ward_result res;

	config(&cfg, 30, NULL);
	cfg.cgroup = false;
	run(&cfg, "echo ran", &res);
	ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
		      res.error ? res.error->message : res.output);
	ck_assert_int_eq(res.resources.cgroup_version, 0);
	ck_assert_str_eq(res.resources.note,
			 "no cgroup limit applied (rlimits only): --no-cgroup was given");
	ck_assert_str_eq(res.resources.applied[WARD_LIMIT_MEMORY].mechanism, "");
	ck_assert_str_eq(res.resources.applied[WARD_APPLIED_CORE].mechanism, "rlimit RLIMIT_CORE");
	ward_result_release(&res);
	ward_config_release(&cfg);

	config(&cfg, 30, lim);
	cfg.cgroup = false;
	run(&cfg, "echo ran", &res);
	ck_assert_int_eq(res.exit_code, 125);
	ck_assert_int_eq(res.error->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_str_eq(res.error->message, "--pids needs a cgroup, and --no-cgroup was given");
	ck_assert_str_eq(res.output, "");
	ward_result_release(&res);
	ward_config_release(&cfg);
}
END_TEST

/* No cgroup for this user: defaults give way to rlimits (said so), explicit
 * limits fail the command with the reason. */
START_TEST(test_rlimits_only)
{
	static const char *const lim[] = { "0", "32M", NULL };
	static const char *const cpus[] = { "3", "0.5", NULL };
	struct ward_config cfg;
	struct ward_result res;
	char *json;

	config(&cfg, 30, NULL);
	run(&cfg, "echo ran", &res);
	ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code,
		      res.error ? res.error->message : res.output);
	ck_assert_str_eq(res.output, "ran\n");
	ck_assert_int_eq(res.resources.cgroup_version, 0);
	ck_assert_msg(strstr(res.resources.note, "no cgroup limit applied"), "%s",
		      res.resources.note);
	ck_assert_str_eq(res.resources.applied[WARD_LIMIT_MEMORY].mechanism, "");
	ck_assert_str_eq(res.resources.applied[WARD_APPLIED_NOFILE].mechanism,
			 "rlimit RLIMIT_NOFILE");
	ck_assert_str_eq(res.resources.measured_by, "rusage");
	json = ward_result_to_json(&res);
	ck_assert_ptr_nonnull(strstr(json, "\"cgroup\":null"));
	ck_assert_ptr_nonnull(strstr(json, "no cgroup limit applied"));
	free(json);
	ward_result_release(&res);
	ward_config_release(&cfg);

	config(&cfg, 30, lim);
	run(&cfg, "echo ran", &res);
	ck_assert_int_eq(res.exit_code, 125);
	ck_assert(!res.started);
	ck_assert_int_eq(res.error->kind, WARD_ERR_EXECUTION_FAILED);
	ck_assert_msg(strstr(res.error->message, "--memory needs a cgroup, and none can be made"),
		      "%s", res.error->message);
	ck_assert_str_eq(res.output, "");
	ward_result_release(&res);
	ward_config_release(&cfg);

	config(&cfg, 30, cpus);
	run(&cfg, "echo ran", &res);
	ck_assert_int_eq(res.exit_code, 125);
	ck_assert_ptr_nonnull(strstr(res.error->message, "--cpus needs a cgroup"));
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* and ward doctor says the same, with the way out */
	{
		json_t *c = doctor_check("limits");

		ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "limited");
		ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(c, "detail")),
					     "no cgroup limit applies here, rlimits only"));
		ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(c, "fix")),
					     "systemd-run --user --scope -p Delegate=yes"));
		json_decref(c);
	}
}
END_TEST

/* As uid 1000 in a cgroup delegated to it the way systemd's Delegate=yes
 * does (chowned, marked with the user.delegate attribute): ward moves itself
 * into ward-supervisor, makes its cgroups beside it, and limits hold. In a
 * cgroup that is merely the user's, not delegated, an explicit limit fails
 * with the fix. Returns a failure message, or NULL. */
static const char *as_user(const char *cgroup, bool is_delegated)
{
	static const char *const lim[] = { "0", "32M", NULL };
	struct ward_config cfg;
	struct ward_result res;
	char procs[300];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	if (write_str(procs, "0") < 0)
		return "cannot move into the test cgroup";
	if (setgroups(0, NULL) < 0 || setgid(1000) < 0 || setuid(1000) < 0)
		return "cannot become uid 1000";
	/* as a user logged in would be (setuid() cleared it, and with it the
	 * ownership of /proc/self, which the sandbox's id maps need) */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	config(&cfg, 60, lim);
	run(&cfg, "exec /hog alloc 100", &res);
	if (!is_delegated) {
		if (res.exit_code != 125 || !res.error || !strstr(res.error->message, "not delegated") ||
		    !strstr(res.error->message, "systemd-run --user --scope -p Delegate=yes"))
			return res.error ? res.error->message : "ran without a delegated cgroup";
		return NULL;
	}
	if (!res.resources.oom_killed || res.resources.cgroup_version != 2 || !res.error ||
	    strcmp(res.error->message, "killed by the OOM killer: memory limit 32 MiB") != 0)
		return res.error ? res.error->message : "not OOM-killed";
	ward_result_release(&res);
	run(&cfg, "exec /hog alloc 20", &res);
	if (res.exit_code != 0 || res.resources.memory_peak < (20u << 20))
		return "20 MB did not run under --memory 32M";
	ward_result_release(&res);
	ward_config_release(&cfg);
	return NULL;
}

static void in_child_as_user(const char *cgroup, bool is_delegated)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *why = as_user(cgroup, is_delegated);

		if (why)
			fprintf(stderr, "uid 1000 in '%s': %s\n", cgroup, why);
		_exit(why ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "uid 1000 in '%s' failed (see stderr)", cgroup);
}

/* mkdir and chown to uid 1000 a cgroup and the files a delegatee owns */
static void user_cgroup(const char *dir)
{
	static const char *const files[] = { "", "/cgroup.procs", "/cgroup.subtree_control",
					     "/cgroup.threads" };
	char path[300];
	size_t i;

	ck_assert_int_eq(mkdir(dir, 0755), 0);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, files[i]);
		ck_assert_int_eq(chown(path, 1000, 1000), 0);
	}
}

START_TEST(test_delegated)
{
	char outer[128], marked[160], plain[160], path[256];

	/* the user owns outer too, so only the attribute says "delegated" */
	snprintf(outer, sizeof(outer), "/sys/fs/cgroup/ward-test-user-%ld", (long)getpid());
	snprintf(marked, sizeof(marked), "%s/delegated", outer);
	snprintf(plain, sizeof(plain), "%s/plain", outer);
	user_cgroup(outer);
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", outer);
	ck_assert_int_eq(write_str(path, "+memory +pids"), 0);
	user_cgroup(marked);
	ck_assert_msg(setxattr(marked, "user.delegate", "1", 1, 0) == 0, "setxattr: %s",
		      strerror(errno));
	user_cgroup(plain);
	chmod(workdir, 0777);

	in_child_as_user(marked, true);
	in_child_as_user(plain, false);
	/* nothing left but the supervisor's own (empty) cgroup */
	snprintf(path, sizeof(path), "%s/ward-supervisor", marked);
	ck_assert_int_eq(rmdir(path), 0);
	ck_assert_msg(rmdir(marked) == 0, "rmdir '%s': %s", marked, strerror(errno));
	ck_assert_int_eq(rmdir(plain), 0);
	ck_assert_int_eq(rmdir(outer), 0);
}
END_TEST

/* In a forked child: move into the cgroup ctr, make a new cgroup and mount
 * namespace there and mount cgroup2 (flags mflags) at /sys/fs/cgroup,
 * which then shows ctr as its root — what an engine gives a container with
 * a cgroup namespace of its own. -1 (said on stderr) on failure. */
static int enter_container(const char *ctr, unsigned long mflags)
{
	char procs[200];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", ctr);
	if (write_str(procs, "0") < 0) {
		perror("move into the container's cgroup");
		return -1;
	}
	if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("unshare");
		return -1;
	}
	/* the kernel refuses a filesystem mounted on its own root (EBUSY): a
	 * tmpfs between them, in this namespace only, the outer hierarchy's
	 * mount left as it is */
	if (mount("tmpfs", "/sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755") < 0 ||
	    mount("cgroup2", "/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC | mflags,
		  NULL) < 0) {
		perror("mount cgroup2");
		return -1;
	}
	return 0;
}

/* Fork a process that enters the container of ctr (enter_container()),
 * becomes uid 1000 when as_user, and execs argv with stdin from the file in
 * and stdout to the file out: the container's only process, or with
 * own_child, one with a child of its own beside it (forked before the exec,
 * so the child of ward: as another thread's command's helper is), which
 * ends when ward does. */
static pid_t exec_in_container(const char *ctr, bool as_user, bool own_child, const char *in,
			       const char *out, char *const argv[])
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		int alive[2];

		if (i < 0 || o < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 ||
		    enter_container(ctr, 0) < 0)
			_exit(99);
		if (own_child) {
			char c;

			if (pipe(alive) < 0)
				_exit(96);
			if (fork() == 0) {
				close(alive[1]);
				while (read(alive[0], &c, 1) < 0 && errno == EINTR)
					;
				_exit(0);
			}
			close(alive[0]); /* alive[1] stays open in ward until it ends */
		}
		if (as_user) {
			if (setgroups(0, NULL) < 0 || setgid(1000) < 0 || setuid(1000) < 0)
				_exit(98);
			prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		}
		execv(argv[0], argv);
		_exit(97);
	}
	return pid;
}

/* A container's cgroup, as an engine gives one on cgroup v2 with a cgroup
 * namespace of its own (--cgroupns=private) and the cgroup mounted
 * read-write: a cgroup ctr (the container's, controllers available from its
 * parent, none enabled in it), a process moved into it that makes a new
 * cgroup namespace (rooted at ctr) and mount namespace, mounts cgroup2 at
 * /sys/fs/cgroup (which shows ctr as its root), becomes the container's user
 * (root, or uid 1000 when ctr is delegated to it: chowned as systemd's
 * Delegate=yes does) and execs ward run --json as the container's only
 * process. Its command opens a FIFO of the workdir and waits there: the test
 * then finds it in a command cgroup below ctr with memory.max and pids.max
 * set, lets it go, and it forks until pids.max stops it. After ward, nothing
 * is left in ctr but ward's own empty ward-supervisor. */
static void container_cgroup(bool as_user)
{
	char ctr[128], path[PATH_MAX], fifo[PATH_MAX + 8], req[PATH_MAX], out[PATH_MAX];
	static const char cmd[] = "{\"command\": \"read x < /sync/go && exec /hog procs 40 1\"}";
	char sync[PATH_MAX];
	char *ward = harness_path("ward"), *result, cg[PATH_MAX] = "", buf[64];
	json_t *o, *layers, *limits, *resources;
	DIR *d;
	struct dirent *e;
	pid_t pid;
	int status, fd = -1, n;

	snprintf(ctr, sizeof(ctr), "/sys/fs/cgroup/ward-test-ctr-%ld", (long)getpid());
	if (as_user) {
		user_cgroup(ctr);
		chmod(workdir, 0777);
	} else {
		ck_assert_int_eq(mkdir(ctr, 0755), 0);
	}
	/* beside the workdir, bound in: ward itself looks at what the workdir
	 * holds before the command runs */
	snprintf(sync, sizeof(sync), "%s.sync", workdir);
	ck_assert_int_eq(mkdir(sync, 0755), 0);
	snprintf(fifo, sizeof(fifo), "%s/go", sync);
	ck_assert_int_eq(mkfifo(fifo, 0666), 0);
	chmod(fifo, 0666);
	snprintf(req, sizeof(req), "%s.req", workdir);
	snprintf(out, sizeof(out), "%s.out", workdir);
	fd = open(req, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	close(fd);
	fd = -1;

	{
		char *const argv[] = { ward, (char *)"run", (char *)"--json", (char *)"-C", workdir,
				       (char *)"--ro-bind", hog, (char *)"/hog", (char *)"--ro-bind",
				       sync, (char *)"/sync", (char *)"--memory", (char *)"48M",
				       (char *)"--pids", (char *)"16", (char *)"--timeout",
				       (char *)"60", NULL };

		pid = exec_in_container(ctr, as_user, false, req, out, argv);
	}
	/* the command is running once it opens the FIFO to read */
	for (n = 0; fd < 0 && n < 20000; n++) {
		fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && waitpid(pid, &status, WNOHANG) == pid) {
			pid = -1;
			break;
		}
		if (fd < 0)
			usleep(1000);
	}
	result = harness_slurp(out);
	ck_assert_msg(fd >= 0, "the command never opened the FIFO: %s",
		      result && strstr(result, "\"error\"") ? strstr(result, "\"error\"") : "");
	d = opendir(ctr);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] == 'w' && strcmp(e->d_name, "ward-supervisor"))
			snprintf(cg, sizeof(cg), "%s/%s", ctr, e->d_name);
	closedir(d);
	if (!cg[0]) {
		char ls[2048] = "", own[512] = "";

		d = opendir(ctr);
		while (d && (e = readdir(d)))
			snprintf(ls + strlen(ls), sizeof(ls) - strlen(ls), " %s", e->d_name);
		if (d)
			closedir(d);
		snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
		ward_read_file(path, own, sizeof(own));
		close(fd);
		waitpid(pid, &status, 0);
		free(result);
		result = harness_slurp(out);
		ck_abort_msg("no command cgroup in '%s':%s; ward in %s: %s", ctr, ls, own, result);
	}
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	ck_assert_int_gt(ward_read_file(path, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "50331648\n");
	snprintf(path, sizeof(path), "%s/pids.max", cg);
	ck_assert_int_gt(ward_read_file(path, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "16\n");
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	ck_assert_int_gt(ward_read_file(path, buf, sizeof(buf)), 0); /* the command is in it */
	/* ward itself in ward-supervisor, ctr holding no process */
	snprintf(path, sizeof(path), "%s/cgroup.procs", ctr);
	ck_assert_int_eq(ward_read_file(path, buf, sizeof(buf)), 0);
	ck_assert_int_eq(write(fd, "\n", 1), 1);
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	free(result);
	result = harness_slurp(out);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d: %s", status,
		      result);
	o = json_loads(result, 0, NULL);
	ck_assert_msg(o, "not JSON: %s", result);
	layers = json_object_get(o, "layers");
	resources = json_object_get(o, "resources");
	limits = json_object_get(resources, "limits");
	ck_assert_msg(json_is_true(json_object_get(o, "sandboxed")), "%s", result);
	ck_assert_int_eq(json_integer_value(json_object_get(layers, "cgroup")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(resources, "measured_by")), "cgroup v2");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(limits, "memory"),
							   "mechanism")),
			 "cgroup v2 memory.max");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(limits, "pids"),
							   "mechanism")),
			 "cgroup v2 pids.max");
	/* the fork loop stopped by pids.max */
	ck_assert_msg(strstr(json_string_value(json_object_get(o, "stderr")),
			     "fork: Resource temporarily unavailable"), "%s", result);
	ck_assert_int_le(json_integer_value(json_object_get(resources, "pids_peak")), 16);
	json_decref(o);
	/* nothing left: no command cgroup, no process; ward's own cgroup is
	 * ward-supervisor, empty once it exited (the container's, removed with
	 * it), so ctr goes with one rmdir more */
	snprintf(path, sizeof(path), "%s/ward-supervisor", ctr);
	ck_assert_msg(rmdir(path) == 0, "rmdir '%s': %s", path, strerror(errno));
	ck_assert_msg(rmdir(ctr) == 0, "rmdir '%s' (something left in it): %s", ctr,
		      strerror(errno));
	unlink(req);
	unlink(out);
	unlink(fifo);
	rmdir(sync);
	free(result);
	free(ward);
}

START_TEST(test_container_root)
{
	container_cgroup(false);
}
END_TEST

START_TEST(test_container_user)
{
	container_cgroup(true);
}
END_TEST

/* ward run --json in the workdir with the request req, its result in out,
 * with --pids limit (NULL: no limit); limit "doctor": ward doctor --json. */
static void ward_in_ctr(const char *req, const char *out, const char *limit)
{
	char *ward = harness_path("ward");
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int in = open(req, O_RDONLY), o1 = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (in < 0 || o1 < 0 || dup2(in, 0) < 0 || dup2(o1, 1) < 0)
			_exit(99);
		if (limit && strcmp(limit, "doctor") == 0)
			execl(ward, ward, "doctor", "--json", (char *)NULL);
		execl(ward, ward, "run", "--json", "-C", workdir, limit ? "--pids" : "--timeout",
		      limit ? limit : "60", (char *)NULL);
		_exit(97);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	free(ward);
}

/* The container's cgroup (made here, as root), and beside the workdir the
 * file of the request given to ward on stdin (req) and the name of its
 * output (out); each buffer PATH_MAX (ctr: 128) bytes. */
static void container_files(char *ctr, char *req, char *out, const char *request)
{
	int fd;

	snprintf(ctr, 128, "/sys/fs/cgroup/ward-test-ctr-%ld", (long)getpid());
	ck_assert_int_eq(mkdir(ctr, 0755), 0);
	snprintf(req, PATH_MAX, "%s.req", workdir);
	snprintf(out, PATH_MAX, "%s.out", workdir);
	fd = open(req, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	close(fd);
}

/* Fork a child into the cgroup ctr, there in a new cgroup and mount
 * namespace with cgroup2 at /sys/fs/cgroup (mount flags mflags), and run
 * ward_in_ctr() with each limit of limits (NULL: none) for the request req,
 * the results in out.1, out.2, ... */
static void in_container(const char *ctr, unsigned long mflags, const char *req, const char *out,
			 const char *const *limits, int n)
{
	pid_t pid = fork();
	int status, i;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char o[PATH_MAX + 16];

		if (enter_container(ctr, mflags) < 0)
			_exit(99);
		for (i = 0; i < n; i++) {
			snprintf(o, sizeof(o), "%s.%d", out, i + 1);
			ward_in_ctr(req, o, limits[i]);
		}
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
}

/* A read-only cgroup2 mount, as engines give an unprivileged container by
 * default: the note says so, the command runs with rlimits, and ward doctor
 * says what the container needs (not systemd-run's delegation). */
START_TEST(test_container_readonly)
{
	static const char req_true[] = "{\"command\": \"echo ran\"}";
	static const char *const limits[] = { NULL, "doctor" };
	char ctr[128], req[PATH_MAX], out[PATH_MAX], o1[PATH_MAX + 16], *r;
	json_t *c;
	size_t i;
	int found = 0;
	json_t *o;

	container_files(ctr, req, out, req_true);
	in_container(ctr, MS_RDONLY, req, out, limits, 2);
	snprintf(o1, sizeof(o1), "%s.1", out);
	r = harness_slurp(o1);
	o = json_loads(r, 0, NULL);
	ck_assert_msg(o, "not JSON: %s", r);
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "ran\n");
	ck_assert(json_is_null(json_object_get(json_object_get(o, "layers"), "cgroup")));
	ck_assert_msg(strstr(json_string_value(json_object_get(json_object_get(o, "resources"),
							       "note")),
			     "the container's cgroup ('/sys/fs/cgroup', the root of this cgroup "
			     "namespace) is not writable by uid 0 (mounted read-only)"),
		      "%s", r);
	json_decref(o);
	free(r);
	unlink(o1);
	snprintf(o1, sizeof(o1), "%s.2", out);
	r = harness_slurp(o1);
	o = json_loads(r, 0, NULL);
	ck_assert_msg(o, "not JSON: %s", r);
	json_array_foreach(json_object_get(o, "checks"), i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		const char *fix = json_string_value(json_object_get(c, "fix"));

		if (strcmp(name, "cgroup v2") != 0 && strcmp(name, "limits") != 0)
			continue;
		found++;
		ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "limited");
		ck_assert_msg(fix && strstr(fix, "give the container its cgroup read-write") &&
				      !strstr(fix, "systemd-run"),
			      "%s: %s", name, r);
	}
	ck_assert_int_eq(found, 2);
	json_decref(o);
	ck_assert_msg(rmdir(ctr) == 0, "rmdir '%s': %s", ctr, strerror(errno));
	unlink(req);
	unlink(o1);
	free(r);
}
END_TEST

/* The container's cgroup holding another process besides ward (a shell
 * that started it): controllers cannot be enabled below it, so an explicit
 * limit fails saying why, and without one the command runs with rlimits,
 * the note saying why. */
START_TEST(test_container_shared)
{
	static const char req_true[] = "{\"command\": \"echo ran\"}";
	static const char *const limits[] = { "16", NULL };
	char ctr[128], req[PATH_MAX], out[PATH_MAX], out1[PATH_MAX + 16], out2[PATH_MAX + 16];
	char *r1, *r2;
	int fd;
	json_t *o;

	snprintf(ctr, sizeof(ctr), "/sys/fs/cgroup/ward-test-ctr-%ld", (long)getpid());
	ck_assert_int_eq(mkdir(ctr, 0755), 0);
	snprintf(req, sizeof(req), "%s.req", workdir);
	snprintf(out, sizeof(out), "%s.out", workdir);
	snprintf(out1, sizeof(out1), "%s.1", out);
	snprintf(out2, sizeof(out2), "%s.2", out);
	fd = open(req, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, req_true, strlen(req_true)), (ssize_t)strlen(req_true));
	close(fd);
	in_container(ctr, 0, req, out, limits, 2);
	r1 = harness_slurp(out1);
	r2 = harness_slurp(out2);
	o = json_loads(r1, 0, NULL);
	ck_assert_msg(o, "not JSON: %s", r1);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "exit_code")), 125);
	ck_assert_msg(strstr(json_string_value(json_object_get(json_object_get(o, "error"),
							       "message")),
			     "--pids needs a cgroup, and none can be made: the container's cgroup "
			     "'/sys/fs/cgroup' holds other processes too"),
		      "%s", r1);
	json_decref(o);
	o = json_loads(r2, 0, NULL);
	ck_assert_msg(o, "not JSON: %s", r2);
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "ran\n");
	ck_assert(json_is_true(json_object_get(o, "sandboxed")));
	ck_assert(json_is_null(json_object_get(json_object_get(o, "layers"), "cgroup")));
	ck_assert_msg(strstr(json_string_value(json_object_get(json_object_get(o, "resources"),
							       "note")),
			     "rlimits only): the container's cgroup '/sys/fs/cgroup' holds other "
			     "processes too, so controllers cannot be enabled below it; fix: start "
			     "ward as the container's only process (its entrypoint)"),
		      "%s", r2);
	json_decref(o);
	/* ward made nothing in it */
	ck_assert_msg(rmdir(ctr) == 0, "rmdir '%s': %s", ctr, strerror(errno));
	unlink(req);
	unlink(out1);
	unlink(out2);
	free(r1);
	free(r2);
}
END_TEST

/* ward serve as the container's entrypoint, root, two commands: the first
 * moves ward into ward-supervisor, the second finds it there; each command
 * gets a cgroup of its own below the container's, removed after it. */
START_TEST(test_container_serve)
{
	static const char mcp[] =
		"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\": "
		"{\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, \"clientInfo\": "
		"{\"name\": \"t\", \"version\": \"1\"}}}\n"
		"{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/call\", \"params\": "
		"{\"name\": \"shell\", \"arguments\": {\"command\": \"echo one\"}}}\n"
		"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"tools/call\", \"params\": "
		"{\"name\": \"shell\", \"arguments\": {\"command\": \"echo two\"}}}\n";
	char ctr[128], req[PATH_MAX], out[PATH_MAX], path[PATH_MAX], *ward = harness_path("ward");
	char *const argv[] = { ward, (char *)"serve", (char *)"--no-policy", (char *)"-C", workdir,
			       (char *)"--pids", (char *)"16", NULL };
	char *r, *line, *save = NULL;
	int status, n = 0;
	pid_t pid;

	container_files(ctr, req, out, mcp);
	pid = exec_in_container(ctr, false, false, req, out, argv);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r = harness_slurp(out);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s", status, r);
	for (line = strtok_r(r, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "\"id\":2") && !strstr(line, "\"id\":3"))
			continue;
		n++;
		ck_assert_msg(strstr(line, "\"exit_code\":0") && strstr(line, "\"sandboxed\":true") &&
				      strstr(line, "\"cgroup\":2") &&
				      strstr(line, "\"pids\":{\"value\":16,\"mechanism\":\"cgroup v2 "
						   "pids.max\"}"),
			      "%s", line);
	}
	ck_assert_int_eq(n, 2);
	snprintf(path, sizeof(path), "%s/ward-supervisor", ctr);
	ck_assert_msg(rmdir(path) == 0, "rmdir '%s': %s", path, strerror(errno));
	ck_assert_msg(rmdir(ctr) == 0, "rmdir '%s' (something left in it): %s", ctr,
		      strerror(errno));
	unlink(req);
	unlink(out);
	free(r);
	free(ward);
}
END_TEST

/* ward in the container's cgroup beside a child of its own (in serve, one
 * command's idmap helper while another command's cgroup is made): the
 * cgroup still counts as ward's alone, and ward takes the child along into
 * ward-supervisor, so controllers can be enabled below the container's. */
START_TEST(test_container_own_child)
{
	static const char req_true[] = "{\"command\": \"echo ran\"}";
	char ctr[128], req[PATH_MAX], out[PATH_MAX], path[PATH_MAX], *ward = harness_path("ward");
	char *const argv[] = { ward, (char *)"run", (char *)"--json", (char *)"--no-policy",
			       (char *)"-C", workdir, (char *)"--pids", (char *)"16", NULL };
	char *r;
	int status, n;
	json_t *o;
	pid_t pid;

	container_files(ctr, req, out, req_true);
	pid = exec_in_container(ctr, false, true, req, out, argv);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r = harness_slurp(out);
	o = json_loads(r, 0, NULL);
	ck_assert_msg(o, "not JSON (status %d): %s", status, r);
	ck_assert_msg(json_integer_value(json_object_get(o, "exit_code")) == 0, "%s", r);
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "ran\n");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "layers"), "cgroup")),
			 2);
	json_decref(o);
	/* the child ends with ward (its pipe's other end), in ward-supervisor */
	snprintf(path, sizeof(path), "%s/ward-supervisor", ctr);
	for (n = 0; rmdir(path) < 0 && errno == EBUSY && n < 500; n++)
		usleep(10000);
	ck_assert_msg(access(path, F_OK) < 0, "rmdir '%s': %s", path, strerror(errno));
	ck_assert_msg(rmdir(ctr) == 0, "rmdir '%s' (something left in it): %s", ctr,
		      strerror(errno));
	unlink(req);
	unlink(out);
	free(r);
	free(ward);
}
END_TEST

static const char *probe_nocgroup(void)
{
	if (harness_have("cgroup1") || harness_have("cgroup2"))
		return "this user can make cgroups";
	return NULL;
}

int main(void)
{
	Suite *s = suite_create("limits");
	static const char *const tags[] = { "cgroup1 root", "cgroup2 root" };
	TCase *tc;
	size_t i;

	harness_add_probe("nocgroup", probe_nocgroup);
	for (i = 0; i < 2; i++) {
		tc = harness_tcase(s, i == 0 ? "cgroup1" : "cgroup2", tags[i]);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_add_test(tc, test_standard_mounts);
		tcase_add_test(tc, test_oom);
		tcase_add_test(tc, test_forkbomb);
		tcase_add_test(tc, test_cpu_quota);
		tcase_add_test(tc, test_peaks);
		tcase_add_test(tc, test_no_leftovers);
		tcase_add_test(tc, test_sandbox_off);
		tcase_add_test(tc, test_io_weight);
		tcase_add_test(tc, test_cli_json);
		tcase_add_test(tc, test_doctor);
		tcase_add_test(tc, test_forked_host);
	}
	/* the cleanup of a SIGKILLed ward's cgroup by the next ward: a case of
	 * its own, as it holds only while no other ward starts meanwhile */
	for (i = 0; i < 2; i++) {
		tc = harness_tcase(s, i == 0 ? "cgroup1-sigkill" : "cgroup2-sigkill", tags[i]);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_add_test(tc, test_sigkilled_ward);
	}
	tc = harness_tcase(s, "cgroup2-delegated", "cgroup2 root");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_delegated);
	tc = harness_tcase(s, "cgroup2-container", "cgroup2 root");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_container_root);
	tcase_add_test(tc, test_container_user);
	tcase_add_test(tc, test_container_shared);
	tcase_add_test(tc, test_container_readonly);
	tcase_add_test(tc, test_container_serve);
	tcase_add_test(tc, test_container_own_child);
	tc = harness_tcase(s, "rlimits", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rlimits);
	tcase_add_test(tc, test_no_cgroup);
	tc = harness_tcase(s, "rlimits-only", "unpriv nocgroup");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rlimits_only);
	return harness_main(s);
}
