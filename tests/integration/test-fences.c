/* test-fences.c — the fences live: a child makes its own user and mount
 * namespace (and a network namespace where the test sends traffic), enters
 * the fences in the order the runtime does (capabilities, no_new_privs,
 * Landlock, then seccomp just before execve), and runs a probe or a real
 * workload. Run as root and as uid 65534 by tests/run.sh. */
#include "harness.h"
#include "ward/caps.h"
#include "ward/fences.h"
#include "ward/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* A character device readable by everyone that no ward rule names. */
#define OTHER_DEVICE "/dev/autofs"

struct fenced {
	const char *workdir;
	const char *const *rw_paths; /* more writable paths, NULL-terminated */
	const char *seccomp;    /* NULL: "default" */
	int abi_max;            /* 0: none */
	bool landlock_off;
	bool netns;             /* a fresh network namespace with lo up */
	bool restrict_connect;
	uint16_t connect_port;
	struct ward_fences_report report; /* filled by run_fenced */
};

static void write_or_die(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
		fprintf(stderr, "write '%s': %s\n", path, strerror(errno));
		_exit(125);
	}
	close(fd);
}

static void loopback_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		perror("lo flags");
		_exit(125);
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
		perror("lo up");
		_exit(125);
	}
	close(fd);
}

/* In the child: namespaces, then the fences exactly as the sandbox's init
 * enters them, then execve. Only what the runtime's init would do. */
static void child(const struct fenced *o, const struct ward_fences *f, char *const argv[],
		  char *const envp[], uid_t uid, gid_t gid)
{
	struct ward_error storage = { 0 }, *err = &storage;
	char map[64];

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | (o->netns ? CLONE_NEWNET : 0)) < 0) {
		perror("unshare");
		_exit(125);
	}
	write_or_die("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	write_or_die("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	write_or_die("/proc/self/gid_map", map);
	if (o->netns)
		loopback_up();

	if (o->workdir && chdir(o->workdir) < 0) {
		perror("chdir");
		_exit(125);
	}
	if (ward_fences_enter(f, &err) < 0) {
		fprintf(stderr, "enter: %s\n", err->message);
		_exit(125);
	}
	if (ward_fences_seal(f, &err) < 0) {
		fprintf(stderr, "seal: %s\n", err->message);
		_exit(125);
	}
	execve(argv[0], argv, envp);
	fprintf(stderr, "execve '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

static char *read_all(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	while ((n = read(fd, buf + len, cap - len - 1)) > 0 || (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		len += (size_t)n;
		if (cap - len < 2)
			buf = realloc(buf, cap *= 2);
	}
	buf[len] = '\0';
	return buf;
}

static char **env_for(const char *workdir)
{
	static char home[4200], tmp[4200];
	static char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", home, tmp, "LANG=C",
				"LC_ALL=C", NULL };

	snprintf(home, sizeof(home), "HOME=%s", workdir ? workdir : "/");
	snprintf(tmp, sizeof(tmp), "TMPDIR=%s/tmp", workdir ? workdir : "");
	return envp;
}

/* Run argv fenced; stdout and stderr together into *out. Returns the wait
 * status. The fences are prepared here, in the parent, as the supervisor does. */
static int run_fenced(struct fenced *o, char *const argv[], char **out)
{
	struct ward_fences_config cfg;
	struct ward_fences *f;
	struct ward_error *err = NULL;
	uid_t uid = getuid();
	gid_t gid = getgid();
	int p[2], status;
	pid_t pid;

	ward_fences_config_init(&cfg);
	cfg.landlock.workdir = o->workdir;
	cfg.landlock.rw_paths = o->rw_paths;
	cfg.landlock.tmp = false; /* the host's /tmp is not the sandbox's: keep it outside */
	cfg.landlock.abi_max = o->abi_max;
	if (o->landlock_off)
		cfg.landlock.mode = WARD_LANDLOCK_OFF;
	if (o->restrict_connect) {
		cfg.landlock.restrict_connect = true;
		cfg.landlock.connect_ports[0] = o->connect_port;
		cfg.landlock.n_connect_ports = 1;
	}
	if (o->seccomp)
		cfg.seccomp = o->seccomp;
	if (ward_fences_prepare(&cfg, &f, &err) < 0)
		ck_abort_msg("prepare: %s", err->message);
	o->report = *ward_fences_report(f);

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		child(o, f, argv, env_for(o->workdir), uid, gid);
	}
	close(p[1]);
	*out = read_all(p[0]);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ward_fences_free(f);
	return status;
}

static int run_probe(struct fenced *o, const char *a1, const char *a2, const char *a3,
		     char **out)
{
	char *rel = harness_path("tests/helpers/syscall-probe");
	/* absolute: the child changes to the workdir first */
	char *probe = realpath(rel, NULL);
	char *argv[] = { probe, (char *)a1, (char *)a2, (char *)a3, NULL };
	int status;

	ck_assert_msg(probe, "no '%s'", rel);
	status = run_fenced(o, argv, out);
	free(probe);
	free(rel);
	return status;
}

/* The value after "NAME " on its line, or NULL. */
static const char *result_of(const char *out, const char *name, char *buf, size_t size)
{
	size_t n = strlen(name);

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, name, n) == 0 && l[n] == ' ') {
			snprintf(buf, size, "%.*s", (int)strcspn(l + n + 1, "\n"), l + n + 1);
			return buf;
		}
	return NULL;
}

static void assert_result(const char *out, const char *name, const char *want)
{
	char buf[64];
	const char *got = result_of(out, name, buf, sizeof(buf));

	ck_assert_msg(got, "no result for '%s' in:\n%s", name, out);
	ck_assert_msg(strcmp(got, want) == 0, "%s: %s, want %s", name, got, want);
}

static void assert_exit0(int status, const char *out)
{
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x, output:\n%s",
		      status, out);
}

/* ---- seccomp ------------------------------------------------------------------ */

START_TEST(test_denied_syscalls)
{
	struct fenced o = { 0 };
	char *out;
	size_t lines = 0;
	int status = run_probe(&o, "denied", NULL, NULL, &out);

	assert_exit0(status, out);
	ck_assert_str_eq(o.report.seccomp_profile, "default");
	for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
		const char *sp = strchr(l, ' ');
		size_t n = (size_t)(sp - l);
		const char *want = strncmp(l, "clone3", n) == 0 && n == 6 ? "ENOSYS" : "EPERM";

		ck_assert_msg(sp && strncmp(sp + 1, want, strlen(want)) == 0 &&
				      sp[1 + strlen(want)] == '\n',
			      "%.*s, want %s", (int)strcspn(l, "\n"), l, want);
		lines++;
	}
	ck_assert_uint_ge(lines, 55);
	assert_result(out, "clone3", "ENOSYS");
	assert_result(out, "clone(CLONE_NEWUSER)", "EPERM");
	assert_result(out, "ioctl(TIOCSTI)", "EPERM");
	assert_result(out, "socket(AF_PACKET)", "EPERM");
	free(out);
}
END_TEST

START_TEST(test_allowed_syscalls)
{
	struct fenced o = { 0 };
	char *out;
	int status = run_probe(&o, "allowed", NULL, NULL, &out);

	assert_exit0(status, out);
	ck_assert_msg(strstr(out, " E") == NULL, "a call failed:\n%s", out);
	assert_result(out, "socket(NETLINK_ROUTE)", "ok");
	assert_result(out, "setsockopt(unix)", "ok");
	assert_result(out, "sendto(unix)", "ok");
	assert_result(out, "bind(loopback)", "ok");
	assert_result(out, "fork", "ok");
	assert_result(out, "vfork", "ok");
	free(out);
}
END_TEST

START_TEST(test_strict_profile)
{
	struct fenced o = { .seccomp = "strict" };
	char *out;
	int status = run_probe(&o, "allowed", NULL, NULL, &out);

	assert_exit0(status, out);
	ck_assert_str_eq(o.report.seccomp_profile, "strict");
	assert_result(out, "socket(NETLINK_ROUTE)", "EPERM");
	assert_result(out, "socket(AF_INET)", "ok");
	assert_result(out, "socketpair", "ok");
	assert_result(out, "fork", "ok");
	free(out);
	status = run_probe(&o, "denied", NULL, NULL, &out);
	assert_exit0(status, out);
	assert_result(out, "bpf", "EPERM");
	assert_result(out, "clone3", "ENOSYS");
	free(out);
}
END_TEST

/* The off profile really loads nothing: the same probe then sees the
 * kernel's own answers. */
START_TEST(test_seccomp_off)
{
	struct fenced o = { .seccomp = "off" };
	char *out;
	int status = run_probe(&o, "denied", NULL, NULL, &out);

	assert_exit0(status, out);
	ck_assert_str_eq(o.report.seccomp_profile, "off");
	assert_result(out, "clone3", "EINVAL");
	assert_result(out, "setns", "EBADF");
	free(out);
}
END_TEST

static void assert_killed(const char *abi)
{
	struct fenced o = { 0 };
	char *out;
	int status = run_probe(&o, abi, NULL, NULL, &out);

	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
		      "%s: status 0x%x, output:\n%s", abi, status, out);
	ck_assert_ptr_null(strstr(out, "returned"));
	free(out);
}

/* x32 numbers reach seccomp with the x86-64 arch value and bit 30 set; this
 * kernel need not run x32 for the filter to see them. */
START_TEST(test_x32_killed)
{
	assert_killed("x32");
}
END_TEST

START_TEST(test_i386_killed)
{
	assert_killed("i386");
}
END_TEST

/* int 0x80 reaches seccomp only where the kernel runs i386 calls from a
 * 64-bit process (IA32 emulation on, and a hypervisor that delivers the
 * trap); elsewhere it faults before any filter sees it. */
static const char *probe_ia32(void)
{
#if defined(__x86_64__)
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		long r = 20; /* getpid */

		signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would only add noise */

		__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
		_exit(r > 0 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return "fork failed";
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return NULL;
	return "int 0x80 does not reach the kernel's i386 table here (no IA32 emulation)";
#else
	return "not x86-64";
#endif
}

START_TEST(test_caps_dropped)
{
	struct fenced o = { 0 };
	char *out;
	int status = run_probe(&o, "status", NULL, NULL, &out);

	assert_exit0(status, out);
	ck_assert_ptr_nonnull(strstr(out, "CapInh:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(out, "CapPrm:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(out, "CapEff:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(out, "CapBnd:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(out, "CapAmb:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(out, "NoNewPrivs:\t1\n"));
	ck_assert_ptr_nonnull(strstr(out, "Seccomp:\t2\n"));
	ck_assert(o.report.caps_dropped && o.report.no_new_privs);
	free(out);
}
END_TEST

/* ---- Landlock ----------------------------------------------------------------- */

struct dirs {
	char *root, work[4096], outside[4096];
};

static void make_dirs(struct dirs *d)
{
	d->root = harness_tmpdir();
	snprintf(d->work, sizeof(d->work), "%s/work", d->root);
	snprintf(d->outside, sizeof(d->outside), "%s/outside", d->root);
	ck_assert_int_eq(mkdir(d->work, 0755), 0);
	ck_assert_int_eq(mkdir(d->outside, 0755), 0);
}

static void remove_dirs(struct dirs *d)
{
	harness_rmtree(d->root);
	free(d->root);
}

START_TEST(test_writes_outside_denied)
{
	struct dirs d;
	struct fenced o = { 0 };
	char path[4200], path2[4200], *out;
	struct stat st;

	make_dirs(&d);
	o.workdir = d.work;

	snprintf(path, sizeof(path), "%s/a", d.work);
	run_probe(&o, "write", path, NULL, &out);
	assert_result(out, "write", "ok");
	free(out);

	/* same mount, writable by its mode, but outside the workdir */
	snprintf(path, sizeof(path), "%s/a", d.outside);
	run_probe(&o, "write", path, NULL, &out);
	assert_result(out, "write", "EACCES");
	free(out);
	ck_assert_int_eq(stat(path, &st), -1);

	/* the control: without Landlock the same write succeeds */
	o.landlock_off = true;
	run_probe(&o, "write", path, NULL, &out);
	assert_result(out, "write", "ok");
	free(out);
	o.landlock_off = false;

	/* a rename across directories inside the workdir (refer, ABI 2) */
	snprintf(path, sizeof(path), "%s/sub", d.work);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/a", d.work);
	snprintf(path2, sizeof(path2), "%s/sub/b", d.work);
	run_probe(&o, "rename", path, path2, &out);
	assert_result(out, "rename", "ok");
	free(out);
	/* ... and out of it */
	snprintf(path, sizeof(path), "%s/b", d.outside);
	run_probe(&o, "rename", path2, path, &out);
	ck_assert_msg(strstr(out, "rename EACCES") || strstr(out, "rename EXDEV"), "%s", out);
	free(out);

	run_probe(&o, "write", "/dev/null", NULL, &out);
	assert_result(out, "write", "ok");
	free(out);

	/* an extra writable path (a --bind target) opens just that directory */
	snprintf(path, sizeof(path), "%s/extra", d.root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	o.rw_paths = (const char *const[]){ path, NULL };
	snprintf(path2, sizeof(path2), "%s/extra/f", d.root);
	run_probe(&o, "write", path2, NULL, &out);
	assert_result(out, "write", "ok");
	free(out);
	snprintf(path2, sizeof(path2), "%s/c", d.outside);
	run_probe(&o, "write", path2, NULL, &out);
	assert_result(out, "write", "EACCES");
	free(out);
	remove_dirs(&d);
}
END_TEST

/* Device ioctls (ABI 5): allowed on the device nodes ward lists, denied on
 * any other device (Landlock ties rules to inodes, so another node is
 * needed, not another path to /dev/null). */
START_TEST(test_device_ioctl)
{
	struct fenced o = { 0 };
	char *out;

	run_probe(&o, "ioctl", "/dev/null", NULL, &out);
	assert_result(out, "ioctl(TCGETS)", "ENOTTY");
	free(out);
	run_probe(&o, "ioctl", OTHER_DEVICE, NULL, &out);
	assert_result(out, "open", "ok");
	assert_result(out, "ioctl(TCGETS)", "EACCES");
	free(out);
	/* the control: at ABI 4 device ioctls are not handled */
	o.abi_max = 4;
	run_probe(&o, "ioctl", OTHER_DEVICE, NULL, &out);
	assert_result(out, "ioctl(TCGETS)", "ENOTTY");
	free(out);
}
END_TEST

static const char *probe_other_device(void)
{
	return access(OTHER_DEVICE, R_OK) == 0 ? NULL : "no readable " OTHER_DEVICE;
}

static const char *probe_abi(int want)
{
	static char reason[64];
	int abi = ward_landlock_abi(NULL);

	if (abi >= want)
		return NULL;
	snprintf(reason, sizeof(reason), "Landlock ABI %d < %d", abi < 0 ? 0 : abi, want);
	return reason;
}

static const char *probe_landlock4(void)
{
	return probe_abi(4);
}

static const char *probe_landlock5(void)
{
	return probe_abi(5);
}

static const char *probe_landlock6(void)
{
	return probe_abi(6);
}

START_TEST(test_abstract_socket_scoped)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char name[64], *out;
	struct fenced o = { 0 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	socklen_t len;

	snprintf(name, sizeof(name), "ward-test-%d", (int)getpid());
	memcpy(a.sun_path + 1, name, strlen(name));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, len), 0);
	ck_assert_int_eq(listen(fd, 4), 0);

	run_probe(&o, "abstract", name, NULL, &out);
	assert_result(out, "connect(abstract)", "EPERM");
	ck_assert_ptr_nonnull(strstr(o.report.landlock.enforced, "scope.abstract_unix_socket"));
	free(out);

	/* the control: at ABI 5 there is no scoping and the server is reachable */
	o.abi_max = 5;
	run_probe(&o, "abstract", name, NULL, &out);
	assert_result(out, "connect(abstract)", "ok");
	ck_assert_ptr_nonnull(strstr(o.report.landlock.unavailable,
				     "scope.abstract_unix_socket (abi 6)"));
	free(out);
	close(fd);
}
END_TEST

START_TEST(test_signal_scoped)
{
	char pidbuf[32], *out;
	struct fenced o = { 0 };
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	run_probe(&o, "signal", pidbuf, NULL, &out);
	assert_result(out, "kill", "EPERM");
	free(out);
	o.abi_max = 5;
	run_probe(&o, "signal", pidbuf, NULL, &out);
	assert_result(out, "kill", "ok");
	free(out);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
END_TEST

/* In a fresh network namespace: connect only to the allowed port; binding
 * any port still works (a test suite's own servers). */
START_TEST(test_tcp_connect_restricted)
{
	struct fenced o = { .netns = true, .restrict_connect = true, .connect_port = 4101 };
	char *out;
	int status = run_probe(&o, "tcp", "4101", "4102", &out);

	assert_exit0(status, out);
	assert_result(out, "bind 4101", "ok");
	assert_result(out, "bind 4102", "ok");
	assert_result(out, "connect 4101", "ok");
	assert_result(out, "connect 4102", "EACCES");
	ck_assert_ptr_nonnull(strstr(o.report.landlock.enforced, "net.connect_tcp"));
	ck_assert_ptr_null(strstr(o.report.landlock.enforced, "net.bind_tcp"));
	free(out);

	/* the control: without the rule both connect */
	o.restrict_connect = false;
	status = run_probe(&o, "tcp", "4101", "4102", &out);
	assert_result(out, "connect 4102", "ok");
	free(out);
}
END_TEST

/* The rights that came after ABI 1, each with the ABI that brought it. */
static const struct {
	const char *name;
	int abi;
} later_rights[] = {
	{ "fs.refer", 2 },	  { "fs.truncate", 3 },		       { "net.connect_tcp", 4 },
	{ "fs.ioctl_dev", 5 }, { "scope.abstract_unix_socket", 6 }, { "scope.signal", 6 },
};

/* Each later right is enforced at abi or named as unavailable with its ABI. */
static void assert_rights_at(const struct ward_landlock_report *r, int abi)
{
	for (size_t i = 0; i < sizeof(later_rights) / sizeof(later_rights[0]); i++) {
		char missing[64];
		bool has = abi >= later_rights[i].abi;

		snprintf(missing, sizeof(missing), "%s (abi %d)", later_rights[i].name,
			 later_rights[i].abi);
		ck_assert_msg(!has == !!strstr(r->unavailable, missing), "abi %d, %s: unavailable %s",
			      abi, later_rights[i].name, r->unavailable);
		ck_assert_msg(has == !!strstr(r->enforced, later_rights[i].name),
			      "abi %d, %s: enforced %s", abi, later_rights[i].name, r->enforced);
	}
}

/* Capped at ABI 2 and 3 (or at the kernel's own ABI where that is lower:
 * the VM's 6.1 kernel has 2), the command still runs, writes outside the
 * workdir are still refused, and the report names exactly what the ABI in
 * use lacks. */
START_TEST(test_capped_abi)
{
	static const int caps[] = { 2, 3 };
	int kernel = ward_landlock_abi(NULL);
	struct dirs d;

	make_dirs(&d);
	for (size_t i = 0; i < 2; i++) {
		/* a TCP connect rule, so that the network right is wanted too */
		struct fenced o = { .workdir = d.work, .abi_max = caps[i], .restrict_connect = true,
				    .connect_port = 4101 };
		int want = caps[i] < kernel ? caps[i] : kernel;
		char path[4200], *out, *argv[] = { "/bin/sh", "-c",
						   "echo hi > /dev/null && echo hi > f && cat f", NULL };
		int status = run_fenced(&o, argv, &out);

		assert_exit0(status, out);
		ck_assert_str_eq(out, "hi\n");
		ck_assert_int_eq(o.report.landlock.abi, want);
		ck_assert_int_eq(o.report.landlock.kernel_abi, kernel);
		ck_assert_str_eq(o.report.landlock.status, "enforced");
		assert_rights_at(&o.report.landlock, want);
		free(out);

		snprintf(path, sizeof(path), "%s/capped", d.outside);
		run_probe(&o, "write", path, NULL, &out);
		assert_result(out, "write", "EACCES");
		free(out);
	}
	/* ABI 1 has no refer right: the kernel refuses every rename or link
	 * across directories (mv copes by copying), and the report says so */
	{
		struct fenced o = { .workdir = d.work, .abi_max = 1 };
		char from[4200], to[4200], *out;
		int fd;

		snprintf(from, sizeof(from), "%s/r", d.work);
		snprintf(to, sizeof(to), "%s/sub", d.work);
		ck_assert_int_eq(mkdir(to, 0755), 0);
		snprintf(to, sizeof(to), "%s/sub/r", d.work);
		fd = open(from, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		ck_assert_int_ge(fd, 0);
		close(fd);
		run_probe(&o, "rename", from, to, &out);
		assert_result(out, "rename", "EXDEV");
		ck_assert_ptr_nonnull(strstr(o.report.landlock.unavailable, "fs.refer (abi 2)"));
		free(out);
	}
	remove_dirs(&d);
}
END_TEST

/* ---- ordinary programs under every fence ---------------------------------------- */

/* Each needs gcc, make, git, python3 or node (the devtools tag). */
static const char *const dev_workloads[] = {
	/* gcc and make */
	"mkdir -p tmp && printf '#include <stdio.h>\\nint main(void){printf(\"hello %%d\\\\n\", 6*7);"
	"return 0;}\\n' > hello.c && printf 'hello: hello.c\\n\\tcc -O1 -o hello hello.c\\n' > "
	"Makefile && make -s && ./hello",
	/* git */
	"mkdir -p tmp && git init -q repo && cd repo && echo one > a && git add a && "
	"git -c user.name=w -c user.email=w@example.invalid commit -qm first && echo two >> a && "
	"git -c user.name=w -c user.email=w@example.invalid commit -qam second && "
	"git log --format=%s && git show HEAD:a",
	/* python3: threads, subprocess, a socketpair */
	"mkdir -p tmp && python3 -c '\n"
	"import threading, subprocess, socket\n"
	"out = []\n"
	"ts = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(8)]\n"
	"[t.start() for t in ts]; [t.join() for t in ts]\n"
	"print(sorted(out))\n"
	"print(subprocess.run([\"echo\", \"from a child\"], capture_output=True, "
	"text=True).stdout.strip())\n"
	"a, b = socket.socketpair(); a.sendall(b\"ping\"); print(b.recv(4).decode())\n'",
	/* a pseudo-terminal: /dev/ptmx, /dev/pts and their ioctls */
	"python3 -c '\n"
	"import os, pty\n"
	"pid, fd = pty.fork()\n"
	"if pid == 0:\n"
	"    print(\"in a tty:\", os.isatty(0), os.get_terminal_size(0).columns >= 0)\n"
	"    input(); os._exit(0)\n"
	"print(os.read(fd, 100).decode().strip()); os.write(fd, b\"\\n\"); os.waitpid(pid, 0)\n'",
	/* node: files and a child process */
	"mkdir -p tmp && node -e 'const fs = require(\"fs\"), cp = require(\"child_process\");"
	" fs.writeFileSync(\"n.txt\", \"node\"); console.log(fs.readFileSync(\"n.txt\", \"utf8\"),"
	" cp.execSync(\"echo child\").toString().trim())'",
};

/* What busybox has too (the VM's guest). */
static const char *const base_workloads[] = {
	/* tar and gzip */
	"mkdir -p tmp d && seq 1 2000 > d/f && tar czf d.tgz d && rm -r d && tar xzf d.tgz && "
	"gzip -c d/f | gunzip | wc -l && md5sum < d/f",
	/* a pipeline */
	"seq 1 1000 | sort -rn | head -3 | tr '\\n' ' ' && echo && echo abc | rev && "
	"echo to-stdout > /dev/stdout && echo to-stderr > /dev/stderr && echo gone 2> /dev/null",
};

static char *run_plain(const char *dir, const char *script)
{
	int p[2], status;
	pid_t pid;
	char *out;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };

		dup2(p[1], 1);
		dup2(p[1], 2);
		if (chdir(dir) < 0)
			_exit(125);
		execve(argv[0], argv, env_for(dir));
		_exit(127);
	}
	close(p[1]);
	out = read_all(p[0]);
	close(p[0]);
	waitpid(pid, &status, 0);
	assert_exit0(status, out);
	return out;
}

#define N_DEV (sizeof(dev_workloads) / sizeof(dev_workloads[0]))
#define N_BASE (sizeof(base_workloads) / sizeof(base_workloads[0]))

/* The script under the profile, then the same outside: the same output. */
static void same_output(const char *script, const char *profile)
{
	struct dirs d;
	struct fenced o = { .seccomp = profile };
	char *outside, *inside, *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	int status;

	make_dirs(&d);
	o.workdir = d.work;
	outside = run_plain(d.outside, script);
	status = run_fenced(&o, argv, &inside);
	assert_exit0(status, inside);
	ck_assert_msg(strlen(outside) > 0, "no output outside");
	ck_assert_msg(strcmp(inside, outside) == 0, "inside:\n%s\noutside:\n%s", inside, outside);
	free(outside);
	free(inside);
	remove_dirs(&d);
}

/* Each workload under the default profile, then under strict. */
START_TEST(test_dev_workload)
{
	same_output(dev_workloads[(size_t)_i % N_DEV], (size_t)_i < N_DEV ? "default" : "strict");
}
END_TEST

START_TEST(test_base_workload)
{
	same_output(base_workloads[(size_t)_i % N_BASE], (size_t)_i < N_BASE ? "default" : "strict");
}
END_TEST

/* NETLINK_ROUTE stays open in the default profile: `ip` and getaddrinfo()
 * with AI_ADDRCONFIG work, and give what they give outside. */
START_TEST(test_netlink_route)
{
	static const char script[] =
		"ip -o link show lo | cut -d' ' -f2 && python3 -c 'import socket; print(sorted({a[4][0] "
		"for a in socket.getaddrinfo(\"localhost\", 80, type=socket.SOCK_STREAM, "
		"flags=socket.AI_ADDRCONFIG)}))'";
	struct dirs d;
	struct fenced o = { 0 };
	char *outside, *inside, *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	int status;

	make_dirs(&d);
	o.workdir = d.work;
	outside = run_plain(d.outside, script);
	status = run_fenced(&o, argv, &inside);
	assert_exit0(status, inside);
	ck_assert_ptr_nonnull(strstr(outside, "lo:"));
	ck_assert_str_eq(inside, outside);
	free(outside);
	free(inside);
	remove_dirs(&d);
}
END_TEST

/* ---- errors from inside: precise, and carried back over a pipe ------------------- */

/* Run fn in a child with preallocated error storage, as the sandbox's init
 * does, and bring its error back with ward_error_write/read. Returns 1 and
 * fills *got when fn failed, 0 when it succeeded. */
static int error_from_child(int (*fn)(const void *, struct ward_error **), const void *arg,
			    struct ward_error *got)
{
	int p[2], r, status;
	pid_t pid;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct ward_error storage = { 0 }, *err = &storage;

		close(p[0]);
		if (fn(arg, &err) < 0)
			ward_error_write(p[1], err);
		_exit(0);
	}
	close(p[1]);
	r = ward_error_read(p[0], got);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_ge(r, 0);
	return r;
}

static int apply_plan(const void *plan, struct ward_error **err)
{
	if (ward_caps_no_new_privs(err) < 0)
		return -1;
	return ward_landlock_apply(plan, err);
}

START_TEST(test_apply_missing_workdir)
{
	struct ward_landlock_config cfg;
	struct ward_landlock_plan *plan;
	struct ward_error *err = NULL, got;

	ward_landlock_config_init(&cfg);
	cfg.workdir = "/nonexistent-ward/project";
	ck_assert_int_eq(ward_landlock_plan_new(&cfg, ward_landlock_abi(NULL), &plan, &err), 0);
	ck_assert_int_eq(error_from_child(apply_plan, plan, &got), 1);
	ck_assert_int_eq(got.code, ENOENT);
	ck_assert_str_eq(got.message,
			 "landlock: open '/nonexistent-ward/project': No such file or directory");
	ward_landlock_plan_free(plan);
}
END_TEST

static int restrict_only(const void *plan, struct ward_error **err)
{
	return ward_landlock_apply(plan, err);
}

static int seccomp_only(const void *prog, struct ward_error **err)
{
	return ward_seccomp_load(prog, err);
}

static int caps_only(const void *unused, struct ward_error **err)
{
	return ward_caps_drop_all(err);
}

/* Configuration errors surface in the supervisor, before anything is cloned,
 * and name their layer. */
START_TEST(test_prepare_errors)
{
	struct ward_fences_config cfg;
	struct ward_fences *f = NULL;
	struct ward_error *err = NULL;
	const struct ward_fences_report *r;
	int kernel = ward_landlock_abi(NULL);
	char want[160];

	ward_fences_config_init(&cfg);
	cfg.seccomp = "bogus";
	ck_assert_int_eq(ward_fences_prepare(&cfg, &f, &err), -1);
	ck_assert_ptr_null(f);
	ck_assert_str_eq(err->message,
			 "unknown seccomp profile 'bogus' (default, strict, off, or a file)");
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ward_error_free(err);
	err = NULL;

	/* a required right above the cap, or above the kernel's own ABI where
	 * that is below the cap (the VM's ABI 2) */
	ward_fences_config_init(&cfg);
	cfg.landlock.abi_max = 3;
	cfg.landlock.require |= WARD_LANDLOCK_NEED_SCOPE;
	ck_assert_int_eq(ward_fences_prepare(&cfg, &f, &err), -1);
	ck_assert_ptr_null(f);
	if (kernel > 3)
		snprintf(want, sizeof(want),
			 "landlock right 'scope.abstract_unix_socket' needs abi 6, capped at abi 3 "
			 "(the kernel offers %d)", kernel);
	else
		snprintf(want, sizeof(want),
			 "landlock right 'scope.abstract_unix_socket' needs abi 6, this kernel "
			 "offers abi %d", kernel);
	ck_assert_msg(strstr(err->message, want), "%s, want %s", err->message, want);
	ck_assert_int_eq(err->kind, WARD_ERR_EXECUTION_FAILED);
	ward_error_free(err);
	err = NULL;

	ward_fences_config_init(&cfg);
	cfg.seccomp = "strict";
	cfg.seccomp_options.allow_ptrace = true;
	ck_assert_int_eq(ward_fences_prepare(&cfg, &f, &err), 0);
	r = ward_fences_report(f);
	ck_assert_str_eq(r->seccomp_profile, "strict");
	ck_assert(r->allow_ptrace && r->caps_dropped && r->no_new_privs);
	ck_assert_int_eq(r->landlock.abi,
			 kernel < WARD_LANDLOCK_ABI_KNOWN ? kernel : WARD_LANDLOCK_ABI_KNOWN);
	ck_assert_str_eq(r->landlock.status, "enforced");
	ck_assert_ptr_eq(ward_fences_seccomp(f), ward_seccomp_program_get("strict",
									  &cfg.seccomp_options,
									  NULL));
	ward_fences_free(f);
	ward_error_free(err);
}
END_TEST

/* Without privileges and without no_new_privs, each layer says what is missing. */
START_TEST(test_unprivileged_errors)
{
	struct ward_landlock_config cfg;
	struct ward_landlock_plan *plan;
	struct ward_error *err = NULL, got;
	const struct ward_seccomp_program *prog = ward_seccomp_program_get("default", NULL, &err);

	ward_landlock_config_init(&cfg);
	ck_assert_int_eq(ward_landlock_plan_new(&cfg, ward_landlock_abi(NULL), &plan, &err), 0);
	ck_assert_int_eq(error_from_child(restrict_only, plan, &got), 1);
	ck_assert_int_eq(got.code, EPERM);
	ck_assert_str_eq(got.message, "landlock: restrict self (no_new_privs is not set): "
				      "Operation not permitted");
	ward_landlock_plan_free(plan);

	ck_assert_ptr_nonnull(prog);
	ck_assert_int_eq(error_from_child(seccomp_only, prog, &got), 1);
	ck_assert_int_eq(got.code, EACCES);
	ck_assert_str_eq(got.message, "seccomp: load profile 'default' (no_new_privs is not set): "
				      "Permission denied");

	/* Holding no capability, there is nothing to drop: no error. */
	ck_assert_int_eq(error_from_child(caps_only, NULL, &got), 0);
}
END_TEST

/* A process with no capability (uid 65534 outside any user namespace of its
 * own) runs a command with no namespace at all: the drop has nothing to lock
 * and succeeds; no_new_privs, Landlock and seccomp are still entered. */
START_TEST(test_no_caps_no_namespaces)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *dir = harness_tmpdir();
	char *argv[] = { (char *)"/bin/cat", (char *)"/proc/self/status", NULL };
	FILE *f;
	char line[256];
	bool prm_empty = false;

	if (geteuid() == 0) {
		/* The test's own process (Check forks one per test) leaves root. */
		ck_assert_int_eq(chown(dir, 65534, 65534), 0);
		ck_assert_int_eq(setgroups(0, NULL), 0);
		ck_assert_int_eq(setresgid(65534, 65534, 65534), 0);
		ck_assert_int_eq(setresuid(65534, 65534, 65534), 0);
	}
	f = fopen("/proc/self/status", "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (strcmp(line, "CapPrm:\t0000000000000000\n") == 0)
			prm_empty = true;
	fclose(f);
	ck_assert_msg(prm_empty, "the test process still holds capabilities");

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, dir, &err), 0);
	cfg.namespaces = 0;
	cfg.view = false;
	cfg.timeout = 30;
	ck_assert_msg(ward_run(&cfg, argv, &res, &err) == 0, "ward_run: %s",
		      err ? err->message : "");
	ck_assert_msg(!res.error && res.exit_code == 0, "exit %d: %s\n%s", res.exit_code,
		      res.error ? res.error->message : "", res.output);
	ck_assert_ptr_nonnull(strstr(res.output, "CapInh:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(res.output, "CapPrm:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(res.output, "CapEff:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(res.output, "CapAmb:\t0000000000000000\n"));
	ck_assert_ptr_nonnull(strstr(res.output, "NoNewPrivs:\t1\n"));
	ck_assert_ptr_nonnull(strstr(res.output, "Seccomp:\t2\n"));
	ck_assert(res.fenced && res.fences.caps_dropped && res.fences.no_new_privs);
	ward_result_release(&res);
	ward_config_release(&cfg);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fences");
	TCase *tc;

	harness_add_probe("landlock4", probe_landlock4);
	harness_add_probe("landlock5", probe_landlock5);
	harness_add_probe("devnode", probe_other_device);
	harness_add_probe("landlock6", probe_landlock6);
	harness_add_probe("ia32", probe_ia32);

	tc = harness_tcase(s, "seccomp", "userns landlock seccomp");
	tcase_add_test(tc, test_denied_syscalls);
	tcase_add_test(tc, test_allowed_syscalls);
	tcase_add_test(tc, test_seccomp_off);
	tcase_add_test(tc, test_strict_profile);
	tcase_add_test(tc, test_x32_killed);
	tcase_add_test(tc, test_caps_dropped);

	tc = harness_tcase(s, "seccomp-i386", "userns landlock seccomp ia32");
	tcase_add_test(tc, test_i386_killed);

	tc = harness_tcase(s, "landlock", "userns landlock seccomp");
	tcase_add_test(tc, test_writes_outside_denied);
	tcase_add_test(tc, test_capped_abi);

	tc = harness_tcase(s, "landlock-net", "userns landlock4 seccomp");
	tcase_add_test(tc, test_tcp_connect_restricted);

	tc = harness_tcase(s, "landlock-ioctl", "userns landlock5 seccomp devnode");
	tcase_add_test(tc, test_device_ioctl);

	tc = harness_tcase(s, "landlock-scope", "userns landlock6 seccomp");
	tcase_add_test(tc, test_abstract_socket_scoped);
	tcase_add_test(tc, test_signal_scoped);

	tc = harness_tcase(s, "errors", "landlock seccomp");
	tcase_add_test(tc, test_apply_missing_workdir);
	tcase_add_test(tc, test_prepare_errors);

	tc = harness_tcase(s, "errors-unpriv", "unpriv landlock seccomp");
	tcase_add_test(tc, test_unprivileged_errors);

	tc = harness_tcase(s, "no-caps", "landlock seccomp");
	tcase_add_test(tc, test_no_caps_no_namespaces);

	tc = harness_tcase(s, "workloads", "userns landlock seccomp");
	tcase_add_loop_test(tc, test_base_workload, 0, (int)(2 * N_BASE));

	tc = harness_tcase(s, "workloads-dev", "userns landlock seccomp devtools");
	tcase_add_loop_test(tc, test_dev_workload, 0, (int)(2 * N_DEV));
	tcase_add_test(tc, test_netlink_route);
	return harness_main(s);
}
