/* test-budgets.c — what the sandbox shares with its caller cannot be used up
 * from inside.
 *
 * Kernel budgets kept per user (inotify instances): the sandbox's user
 * namespace has limits of its own below the host user's, so while a command
 * holds every instance it can get, the host user's own inotify_init1() still
 * succeeds. And memory no cgroup is charged for: every tmpfs of the view is
 * size-capped (--tmpfs-size, the memory limit, or the default), writing past
 * the cap fails with ENOSPC, creating files past the inode cap too, and the
 * result says which cap held. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *workdir, *probe;

static void setup(void)
{
	workdir = harness_tmpdir();
	probe = harness_path("tests/helpers/budget-probe");
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
	free(probe);
}

/* argv for `ward run` with the probe at /probe, then extra, then NULL. */
static void ward_argv(char **argv, char *ward, char *const extra[])
{
	int n = 0;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)harness_fences_policy_opt();
	argv[n++] = (char *)"-C";
	argv[n++] = workdir;
	argv[n++] = (char *)"--ro-bind";
	argv[n++] = probe;
	argv[n++] = (char *)"/probe";
	for (int i = 0; extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The host user's own try at the budget: 0 or -1 with errno. */
static int host_inotify(void)
{
	int fd = inotify_init1(IN_CLOEXEC);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* A real-time signal queued to ourselves, blocked (this test's forked
 * process ends with it pending). */
static int host_sigqueue(void)
{
	union sigval v = { 0 };
	sigset_t rt;

	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &rt, NULL);
	return sigqueue(getpid(), SIGRTMIN, v);
}

/* The sandbox takes all of a budget it can (the probe's `what` mode) and
 * holds it; the host user still gets its own while the sandbox does. */
static void hold_and_try(const char *what, int (*host_try)(void), const char *want_errno)
{
	char *ward = harness_path("ward"), *argv[32], line[128] = "";
	char *extra[] = { (char *)"--", (char *)"/probe", (char *)what, NULL };
	int in[2], out[2], status, held = 0;
	char err_name[32] = "";
	ssize_t got = 0, n;
	pid_t pid;

	ward_argv(argv, ward, extra);
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(ward, argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/* the probe's line: it holds all it could get (end of file: ward ended) */
	while (got < (ssize_t)sizeof(line) - 1 && !strchr(line, '\n') &&
	       (n = read(out[0], line + got, sizeof(line) - 1 - (size_t)got)) > 0) {
		got += n;
		line[got] = '\0';
	}
	ck_assert_msg(strncmp(line, what, strlen(what)) == 0 &&
			      sscanf(line + strlen(what), " %d %31s", &held, err_name) == 2,
		      "probe: '%s'", line);
	ck_assert_str_eq(err_name, want_errno);
	ck_assert_int_ge(held, 1);
	/* while it holds them, the host user gets one */
	ck_assert_msg(host_try() == 0, "the host user's own %s: %s (the sandbox holds %d)", what,
		      strerror(errno), held);
	close(in[1]);
	close(out[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ward: status %d", status);
	free(ward);
}

START_TEST(test_inotify)
{
	hold_and_try("inotify", host_inotify, "EMFILE");
}
END_TEST

/* Queued signals: counted per user against RLIMIT_SIGPENDING. (POSIX
 * message queues, counted the same way against RLIMIT_MSGQUEUE, get the
 * same share; Landlock already refuses mq_open inside, so no test can fill
 * them.) */
/* Processes: counted per user against RLIMIT_NPROC at every user namespace
 * up the chain. The test's own limit is made small (what the user runs now
 * and a few dozen more) so that the sandbox fills it in a moment. Not as
 * root, whose own forks the kernel never counts. */
static int host_fork(void)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(0);
	return waitpid(pid, &st, 0) == pid ? 0 : -1;
}

START_TEST(test_nproc)
{
	struct rlimit rl;
	char stat_path[300];
	struct stat sb;
	long mine = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9') {
			snprintf(stat_path, sizeof(stat_path), "/proc/%s", de->d_name);
			if (stat(stat_path, &sb) == 0 && sb.st_uid == getuid())
				mine++;
		}
	closedir(d);
	rl.rlim_cur = rl.rlim_max = (rlim_t)mine + 64;
	ck_assert_int_eq(setrlimit(RLIMIT_NPROC, &rl), 0);
	hold_and_try("nproc", host_fork, "EAGAIN");
}
END_TEST

START_TEST(test_sigpending)
{
	hold_and_try("sigpending", host_sigqueue, "EAGAIN");
}
END_TEST

/* Locked SysV shared memory: counted per user against RLIMIT_MEMLOCK at
 * every user namespace up the chain. The host user locks a segment of a
 * quarter of its limit while the sandbox holds all it could lock. Not as
 * root, whom CAP_IPC_LOCK lets past the limit. */
static int host_shmlock(void)
{
	struct rlimit rl;
	int id, rc;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		return -1;
	id = shmget(IPC_PRIVATE, rl.rlim_cur / 4 ? rl.rlim_cur / 4 : 1, IPC_CREAT | 0600);
	if (id < 0)
		return -1;
	rc = shmctl(id, SHM_LOCK, NULL);
	shmctl(id, IPC_RMID, NULL);
	return rc < 0 ? -1 : 0;
}

START_TEST(test_memlock)
{
	struct rlimit rl;

	/* a finite limit of the test's own, whatever the runner has */
	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 8 << 20)
		rl.rlim_max = 8 << 20;
	rl.rlim_cur = rl.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	hold_and_try("memlock", host_shmlock, "ENOMEM");
}
END_TEST

static char *run_ward(char *const extra[])
{
	char *ward = harness_path("ward"), *argv[40], *out = NULL, *err = NULL;
	int status;

	ward_argv(argv, ward, extra);
	status = harness_capture(argv, &out, &err);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s%s", status,
		      out, err);
	free(err);
	free(ward);
	return out;
}

/* Writing past the cap fails with ENOSPC, on /tmp, /dev/shm and a --tmpfs;
 * so does creating files past the inode cap. */
START_TEST(test_tmpfs_capped)
{
	char *extra[] = { (char *)"--tmpfs-size", (char *)"8M", (char *)"--tmpfs", (char *)"/scratch",
			  (char *)"-c",
			  (char *)"/probe fill /tmp/f; /probe fill /dev/shm/f; /probe fill /scratch/f; "
				  "/probe inodes /tmp; /probe shm; /probe pty",
			  NULL };
	char *out = run_ward(extra), *line, *save = NULL;
	int fills = 0;
	bool shm = false, pty = false;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char e[32];
		long long v;

		ck_assert_msg(sscanf(line, "%*s %31s %lld", e, &v) == 2, "%s", line);
		ck_assert_msg(strcmp(e, "ENOSPC") == 0 || (geteuid() != 0 && line[0] == 's'), "%s",
			      line);
		if (strncmp(line, "fill ", 5) == 0) {
			ck_assert_msg(v <= 8 << 20 && v >= 7 << 20, "%s", line);
			fills++;
		} else if (strncmp(line, "pty ", 4) == 0) {
			/* pseudo-terminals count against the host's kernel.pty.max */
			ck_assert_msg(v == 256, "%s", line);
			pty = true;
		} else if (strncmp(line, "shm ", 4) == 0) {
			/* SysV shared memory: tmpfs pages as well, the same cap,
			 * where the kernel lets the sandbox set it (uid 0 inside) */
			if (geteuid() == 0)
				ck_assert_msg(v <= 8 && v >= 7, "%s", line);
			shm = true;
		} else {
			/* one inode a KiB of the size, at least 4096 */
			ck_assert_msg(v < 8192 + 16 && v >= 4096, "%s", line);
		}
	}
	ck_assert_int_eq(fills, 3);
	ck_assert(shm && pty);
	free(out);
	/* uid 0 inside (--uid0): the IPC namespace's root caps SysV shm */
	{
		char *uid0[] = { (char *)"--uid0", (char *)"--tmpfs-size", (char *)"8M", (char *)"--",
				 (char *)"/probe", (char *)"shm", NULL };
		long n = -1;

		out = run_ward(uid0);
		ck_assert_msg(sscanf(out, "shm ENOSPC %ld", &n) == 1 && n >= 7 && n <= 8, "%s", out);
		free(out);
	}
}
END_TEST

/* Without --tmpfs-size: the result says which cap held, and the view's
 * tmpfs has that size. Without a cgroup (uid 65534 on a hybrid host) it is
 * the default, and writing past it fails with ENOSPC. */
START_TEST(test_tmpfs_result)
{
	char *extra[] = { (char *)"--json", NULL };
	char *ward = harness_path("ward"), *argv[32], *out = NULL, *err = NULL;
	json_t *res, *lim, *t, *mem;
	uint64_t size;
	const char *mech;
	char cmd[256], request[512];
	int status;

	ward_argv(argv, ward, extra);
	snprintf(request, sizeof(request), "{\"command\": \"%s\"}",
		 "df -B1 --output=size /tmp /dev/shm | tail -n 2");
	status = harness_capture_input(argv, request, &out, &err);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s%s", out, err);
	res = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(res);
	lim = json_object_get(json_object_get(res, "resources"), "limits");
	t = json_object_get(lim, "tmpfs_size");
	ck_assert_msg(t != NULL, "no tmpfs_size in %s", out);
	size = (uint64_t)json_integer_value(json_object_get(t, "value"));
	mech = json_string_value(json_object_get(t, "mechanism"));
	mem = json_object_get(lim, "memory");
	if (mem) {
		ck_assert_str_eq(mech, "tmpfs size= (the memory limit)");
		ck_assert_uint_eq(size, (uint64_t)json_integer_value(json_object_get(mem, "value")));
	} else {
		ck_assert_str_eq(mech, "tmpfs size= (the default)");
		ck_assert_uint_eq(size, 512ull << 20);
	}
	/* the kernel rounds size= up to whole pages */
	{
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE),
			 rounded = (size + page - 1) / page * page;

		snprintf(cmd, sizeof(cmd), "%llu\n%llu\n", (unsigned long long)rounded,
			 (unsigned long long)rounded);
	}
	{
		const char *o = json_string_value(json_object_get(res, "output"));

		ck_assert_ptr_nonnull(o);
		ck_assert_msg(strncmp(o, cmd, strlen(cmd)) == 0, "df: %s", o);
	}
	/* no cgroup: nothing else holds the memory, the cap must */
	if (!mem) {
		char *fill[] = { (char *)"--", (char *)"/probe", (char *)"fill", (char *)"/dev/shm/f",
				 NULL };
		char *o = run_ward(fill), want[64];

		snprintf(want, sizeof(want), "fill ENOSPC %llu\n", (unsigned long long)size);
		ck_assert_str_eq(o, want);
		free(o);
	}
	json_decref(res);
	free(out);
	free(err);
	free(ward);
}
END_TEST

/* With a cgroup memory limit, that limit caps the tmpfs. */
START_TEST(test_tmpfs_memory_limit)
{
	char *extra[] = { (char *)"--memory", (char *)"96M", (char *)"--json", NULL };
	char *ward = harness_path("ward"), *argv[32], *out = NULL, *err = NULL;
	json_t *res, *t;
	int status;

	ward_argv(argv, ward, extra);
	status = harness_capture_input(argv, "{\"command\": \"df -B1 --output=size /tmp\"}", &out,
				       &err);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s%s", out, err);
	res = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(res);
	t = json_object_get(json_object_get(json_object_get(res, "resources"), "limits"),
			    "tmpfs_size");
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(json_integer_value(json_object_get(t, "value")), 96ull << 20);
	ck_assert_str_eq(json_string_value(json_object_get(t, "mechanism")),
			 "tmpfs size= (the memory limit)");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(res, "output")),
				     "100663296"));
	json_decref(res);
	free(out);
	free(err);
	free(ward);
}
END_TEST

/* No user namespace can be made inside, whatever a filter allows (and with
 * it no namespace of any kind: each needs a capability only a new user
 * namespace would give); the sandbox's own view of its budgets says so. */
START_TEST(test_ucounts_inside)
{
	char *extra[] = { (char *)"-c",
			  (char *)"cd /proc/sys/user && for f in max_*; do echo $f $(cat $f); done",
			  NULL };
	char *out = run_ward(extra);
	long host = read_long("/proc/sys/user/max_inotify_instances");
	char want[64];

	ck_assert_ptr_nonnull(strstr(out, "max_user_namespaces 0\n"));
	snprintf(want, sizeof(want), "max_inotify_instances %ld\n", host / 4 ? host / 4 : 1);
	ck_assert_msg(strstr(out, want) != NULL, "%s", out);
	free(out);
	/* the kernel's count holds with the seccomp filter off */
	{
		char *off[] = { (char *)"--seccomp", (char *)"off", (char *)"--", (char *)"/probe",
				(char *)"userns", NULL };

		out = run_ward(off);
		ck_assert_str_eq(out, "userns ENOSPC\n");
		free(out);
	}
}
END_TEST

/* Allowed to nest, the command is root of user namespaces of its own, where
 * every count is unlimited: each kind of namespace it can make there is
 * bounded by a share at the sandbox's level, or one sandbox could make the
 * host user's whole budget of UTS namespaces (say) and the host user's own
 * unshare() would fail with ENOSPC. (The host's root is refused nesting.) */
START_TEST(test_ucounts_nested)
{
	static const char *const kinds[] = { "user", "mnt", "pid", "net", "ipc",
					     "uts", "cgroup", "time" };
	char *extra[] = { (char *)"--allow-nested", (char *)"-c",
			  (char *)"cd /proc/sys/user && for f in max_*; do echo $f $(cat $f); done",
			  NULL };
	char *out = run_ward(extra);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char path[64], want[96];
		long host;

		snprintf(path, sizeof(path), "/proc/sys/user/max_%s_namespaces", kinds[i]);
		if (access(path, F_OK) < 0)
			continue; /* a kernel without this kind's count */
		host = read_long(path);
		snprintf(want, sizeof(want), "max_%s_namespaces %ld\n", kinds[i],
			 host / 4 ? host / 4 : (host ? 1 : 0));
		ck_assert_msg(strstr(out, want) != NULL, "want %s in:\n%s", want, out);
	}
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("budgets");
	TCase *tc = harness_tcase(s, "budgets", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_inotify);
	tcase_add_test(tc, test_sigpending);
	tcase_add_test(tc, test_tmpfs_capped);
	tcase_add_test(tc, test_tmpfs_result);
	tcase_add_test(tc, test_ucounts_inside);
	tc = harness_tcase(s, "nproc", "userns unpriv");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_nproc);
	tcase_add_test(tc, test_memlock);
	tc = harness_tcase(s, "nested", "userns unpriv");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ucounts_nested);
	tc = harness_tcase(s, "memory", "userns root");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tmpfs_memory_limit);
	return harness_main(s);
}
