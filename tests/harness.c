/* harness.c — probes, tags, WARD_TEST_REQUIRE, and small process helpers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PROBES 32
#define MAX_TCASES 256

struct probe {
	const char *tag;
	harness_probe_fn fn;
	int state; /* 0 unknown, 1 ok, -1 failed */
	const char *reason;
};

struct tcase_entry {
	char name[128];
	char tags[256];
};

static struct probe probes[MAX_PROBES];
static size_t n_probes;
static struct tcase_entry tcases[MAX_TCASES];
static size_t n_tcases;

/* ---- built-in probes ---------------------------------------------------- */

static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn() == 0 ? 0 : 1);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int try_userns(void)
{
	return unshare(CLONE_NEWUSER);
}

static int try_netns(void)
{
	return unshare(CLONE_NEWNET);
}

static const char *probe_root(void)
{
	return geteuid() == 0 ? NULL : "not running as root";
}

static const char *probe_unpriv(void)
{
	return geteuid() != 0 ? NULL : "running as root";
}

static const char *probe_userns(void)
{
	return in_child(try_userns) == 0 ? NULL : "unshare(CLONE_NEWUSER) fails";
}

static const char *probe_landlock(void)
{
	long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1UL);

	if (abi >= 1)
		return NULL;
	return errno == EOPNOTSUPP ? "Landlock is disabled at boot" : "Landlock is not built in";
}

static const char *probe_seccomp(void)
{
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 ? NULL : "seccomp is not available";
}

static const char *probe_cgroup1(void)
{
	if (geteuid() != 0)
		return "cgroup v1 hierarchies are writable by root only";
	if (access("/sys/fs/cgroup/memory/cgroup.procs", W_OK) != 0 ||
	    access("/sys/fs/cgroup/pids/cgroup.procs", W_OK) != 0)
		return "no writable cgroup v1 memory and pids hierarchies";
	return NULL;
}

/* A cgroup2 hierarchy where memory and pids can be enabled for children of a
 * place this user may write: the mount root as root, the delegated subtree
 * it runs in otherwise. */
static const char *probe_cgroup2(void)
{
	char line[4096], path[PATH_MAX] = "", ctl[512] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return "cannot read /proc/self/mountinfo";
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - cgroup2 ");
		char mnt[PATH_MAX];

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		snprintf(path, sizeof(path), "%s", mnt);
		break;
	}
	fclose(f);
	if (!path[0])
		return "no cgroup2 mount";
	{
		char p[PATH_MAX + 32];
		FILE *c;

		snprintf(p, sizeof(p), "%s/cgroup.controllers", path);
		c = fopen(p, "re");
		if (!c || !fgets(ctl, sizeof(ctl), c)) {
			if (c)
				fclose(c);
			return "cgroup2 has no controllers";
		}
		fclose(c);
	}
	if (!strstr(ctl, "memory") || !strstr(ctl, "pids"))
		return "cgroup2 has no memory and pids controllers (hybrid host: they are on v1)";
	if (access(path, W_OK) != 0)
		return "cgroup2 is not writable by this user (no delegation)";
	return NULL;
}

static const char *probe_netadmin(void)
{
	if (geteuid() != 0)
		return "no CAP_NET_ADMIN (not root)";
	return in_child(try_netns) == 0 ? NULL : "unshare(CLONE_NEWNET) fails";
}

/* The programs the workload tests run, on PATH (a busybox guest has none). */
static const char *probe_devtools(void)
{
	static const char *const tools[] = { "make", "cc", "git", "python3", "node", "ip" };
	static char reason[64];
	const char *path = getenv("PATH");
	size_t i;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		const char *dir = path ? path : "/usr/bin:/bin";
		bool found = false;

		while (*dir && !found) {
			size_t n = strcspn(dir, ":");
			char file[PATH_MAX];

			snprintf(file, sizeof(file), "%.*s/%s", (int)n, dir, tools[i]);
			found = n > 0 && access(file, X_OK) == 0;
			dir += n + (dir[n] == ':');
		}
		if (!found) {
			snprintf(reason, sizeof(reason), "no %s on PATH", tools[i]);
			return reason;
		}
	}
	return NULL;
}

static void add_builtin_probes(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	harness_add_probe("root", probe_root);
	harness_add_probe("unpriv", probe_unpriv);
	harness_add_probe("userns", probe_userns);
	harness_add_probe("landlock", probe_landlock);
	harness_add_probe("seccomp", probe_seccomp);
	harness_add_probe("cgroup1", probe_cgroup1);
	harness_add_probe("cgroup2", probe_cgroup2);
	harness_add_probe("netadmin", probe_netadmin);
	harness_add_probe("devtools", probe_devtools);
}

void harness_add_probe(const char *tag, harness_probe_fn fn)
{
	size_t i;

	if (strcmp(tag, "root") != 0)
		add_builtin_probes();
	for (i = 0; i < n_probes; i++)
		if (strcmp(probes[i].tag, tag) == 0) {
			probes[i].fn = fn;
			probes[i].state = 0;
			return;
		}
	if (n_probes == MAX_PROBES) {
		fprintf(stderr, "harness: too many probes\n");
		exit(2);
	}
	probes[n_probes++] = (struct probe){ .tag = tag, .fn = fn };
}

static struct probe *find_probe(const char *tag)
{
	size_t i;

	add_builtin_probes();
	for (i = 0; i < n_probes; i++)
		if (strcmp(probes[i].tag, tag) == 0)
			return &probes[i];
	return NULL;
}

static const char *probe_reason(const char *tag)
{
	struct probe *p = find_probe(tag);

	if (!p)
		return "unknown tag (no probe)";
	if (p->state == 0) {
		p->reason = p->fn();
		p->state = p->reason ? -1 : 1;
	}
	return p->state > 0 ? NULL : p->reason;
}

bool harness_have(const char *tag)
{
	return probe_reason(tag) == NULL;
}

/* Whether a comma- (or space-) separated list names word. */
static bool in_list(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)); p += len) {
		bool start = p == list || p[-1] == ',' || p[-1] == ' ';
		bool end = p[len] == '\0' || p[len] == ',' || p[len] == ' ';

		if (start && end)
			return true;
	}
	return false;
}

/* Tags that hold in one tier of tests/run.sh only, by definition: root
 * things in the root tier, unprivileged ones in the uid-65534 tier, the
 * source tree where the tests run from the checkout. A case that needs one
 * of these in the other tier is not for this tier: it is never required
 * there (that is what lets WARD_TEST_REQUIRE=all pass in both tiers). */
static const char *not_in_tier(const char *tag)
{
	bool root = geteuid() == 0;
	const char *copy = getenv("WARD_TEST_COPY");

	if (!root && (!strcmp(tag, "root") || !strcmp(tag, "cgroup1") ||
		      !strcmp(tag, "netadmin")))
		return "root tier only";
	if (root && (!strcmp(tag, "unpriv") || !strcmp(tag, "nocgroup")))
		return "unprivileged tier only";
	if (copy && *copy && !strcmp(tag, "source"))
		return "not in a copy of the build tree";
	return NULL;
}

/* WARD_TEST_REQUIRE: tags, comma-separated; "all" for every tag this tier
 * can have; "-tag" excuses one from "all" (a host that cannot offer it, said
 * where it is set). */
static bool required(const char *tag)
{
	const char *req = getenv("WARD_TEST_REQUIRE");
	char minus[80];

	if (!req || !*req || not_in_tier(tag))
		return false;
	snprintf(minus, sizeof(minus), "-%s", tag);
	if (in_list(req, minus))
		return false;
	return in_list(req, "all") || in_list(req, tag);
}

/* The case Check runs alone ($CK_RUN_CASE), or every case. A case not
 * selected is neither run nor reported as skipped. */
static bool selected(const char *tcase)
{
	const char *c = getenv("CK_RUN_CASE");

	return !c || !*c || strcmp(c, tcase) == 0;
}

TCase *harness_tcase(Suite *s, const char *name, const char *tags)
{
	TCase *tc = tcase_create(name);

	if (n_tcases == MAX_TCASES) {
		fprintf(stderr, "harness: too many test cases\n");
		exit(2);
	}
	snprintf(tcases[n_tcases].name, sizeof(tcases[n_tcases].name), "%s", name);
	snprintf(tcases[n_tcases].tags, sizeof(tcases[n_tcases].tags), "%s", tags ? tags : "");
	n_tcases++;
	if (tags && *tags)
		tcase_set_tags(tc, tags);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return tc;
}

/* Append tag to a space-separated list once. */
static void add_word(char *list, size_t size, const char *word)
{
	char key[80];
	size_t n = strlen(list);

	snprintf(key, sizeof(key), " %s ", word);
	if (strstr(list, key))
		return;
	if (n == 0)
		snprintf(list, size, " %s ", word);
	else if (n + strlen(word) + 2 < size)
		snprintf(list + n, size - n, "%s ", word);
}

/* Call fn for each tag of a space-separated list; stop at the first that
 * returns true, and return it. */
static const char *first_tag(const char *tags, char *tag, size_t size,
			     bool (*fn)(const char *tag))
{
	while (*tags) {
		size_t n = strcspn(tags, " ");

		if (n == 0) {
			tags++;
			continue;
		}
		snprintf(tag, size, "%.*s", (int)n, tags);
		tags += n;
		if (fn(tag))
			return tag;
	}
	return NULL;
}

static bool tag_not_in_tier(const char *tag)
{
	return not_in_tier(tag) != NULL;
}

static bool tag_missing(const char *tag)
{
	return probe_reason(tag) != NULL;
}

/* WARD_TEST_LIST_TAGS=1: each tag the binary's cases use, once, with what
 * this tier makes of it: "# TAG name ok", "# TAG name missing: reason",
 * "# TAG name n/a: reason" (tests/run.sh tags adds them up). */
static int list_tags(void)
{
	char seen[4096] = "", tag[64];
	size_t i;

	for (i = 0; i < n_tcases; i++) {
		const char *t = tcases[i].tags;

		while (*t) {
			size_t n = strcspn(t, " ");
			const char *why;

			if (n == 0) {
				t++;
				continue;
			}
			snprintf(tag, sizeof(tag), "%.*s", (int)n, t);
			t += n;
			{
				char key[80];

				snprintf(key, sizeof(key), " %s ", tag);
				if (strstr(seen, key))
					continue;
			}
			add_word(seen, sizeof(seen), tag);
			if ((why = not_in_tier(tag)))
				printf("# TAG %s n/a: %s\n", tag, why);
			else if ((why = probe_reason(tag)))
				printf("# TAG %s missing: %s\n", tag, why);
			else
				printf("# TAG %s ok\n", tag);
		}
	}
	return 0;
}

int harness_main(Suite *s)
{
	char exclude[2048] = "", tag[64];
	size_t i;
	int failed_required = 0, nfailed;
	const char *list = getenv("WARD_TEST_LIST_TAGS");
	SRunner *sr;

	if (list && *list)
		return list_tags();
	/* a run in this process that intercepts HTTPS starts the build's TLS
	 * helper (the test binary is not beside it) */
	if (!getenv("WARD_TLS_HELPER")) {
		char *helper = harness_path("ward-tls"), *abs = realpath(helper, NULL);

		if (abs)
			setenv("WARD_TLS_HELPER", abs, 1);
		free(abs);
		free(helper);
	}
	for (i = 0; i < n_tcases; i++) {
		const char *t = tcases[i].tags, *bad, *why;

		if (!selected(tcases[i].name))
			continue;
		/* a case for the other tier first: not a missing prerequisite */
		if ((bad = first_tag(t, tag, sizeof(tag), tag_not_in_tier)))
			why = not_in_tier(bad);
		else if ((bad = first_tag(t, tag, sizeof(tag), tag_missing)))
			why = probe_reason(bad);
		else
			continue;
		if (required(bad)) {
			printf("# FAIL %s: required prerequisite '%s' missing: %s\n", tcases[i].name,
			       bad, why);
			failed_required++;
		} else {
			printf("# SKIP %s (%s: %s)\n", tcases[i].name, bad, why);
		}
		add_word(exclude, sizeof(exclude), bad);
	}
	fflush(stdout);

	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	/* Check 0.15 has no skip call: exclude the tags whose probe failed. */
	srunner_run_tagged(sr, NULL, NULL, NULL, exclude[0] ? exclude : NULL, CK_ENV);
	nfailed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed_required)
		printf("# %d test case(s) lack a required prerequisite\n", failed_required);
	return (nfailed == 0 && failed_required == 0) ? 0 : 1;
}

const char *harness_build_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("WARD_BUILD");
	ssize_t n;
	int up;

	if (dir[0])
		return dir;
	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
		return dir;
	}
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n < 0) {
		snprintf(dir, sizeof(dir), "build");
		return dir;
	}
	dir[n] = '\0';
	for (up = 0; up < 3; up++) { /* build/tests/unit/x -> build */
		char *slash = strrchr(dir, '/');

		if (slash)
			*slash = '\0';
	}
	return dir;
}

char *harness_path(const char *rel)
{
	char *p;

	if (asprintf(&p, "%s/%s", harness_build_dir(), rel) < 0)
		abort();
	return p;
}

char *harness_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *p;

	if (asprintf(&p, "%s/ward-test.XXXXXX", base && *base ? base : "/tmp") < 0)
		abort();
	if (!mkdtemp(p)) {
		perror("mkdtemp");
		abort();
	}
	chmod(p, 0755);
	return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 && errno != ENOENT ? 0 : 0;
	unlink(path);
	return 0;
}

void harness_rmtree(const char *path)
{
	if (path)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int harness_capture_input(char *const argv[], const char *input, char **out, char **err_out)
{
	int op[2], ep[2], ip[2], status = -1;
	pid_t pid;

	if (pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0 || pipe2(ip, O_CLOEXEC) < 0)
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		dup2(ip[0], 0);
		dup2(op[1], 1);
		dup2(err_out ? ep[1] : 2, 2);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(op[1]);
	close(ep[1]);
	close(ip[0]);
	if (input) {
		/* Inputs here are small (requests): one write fits the pipe. */
		ssize_t n = write(ip[1], input, strlen(input));
		(void)n;
	}
	close(ip[1]);
	{
		/* Drain both pipes together so neither can fill and block. */
		struct pollfd pf[2] = { { op[0], POLLIN, 0 }, { ep[0], POLLIN, 0 } };
		char *bufs[2] = { malloc(4096), malloc(4096) };
		size_t lens[2] = { 0, 0 }, caps[2] = { 4096, 4096 };
		int open_fds = 2, k;

		while (open_fds > 0) {
			if (poll(pf, 2, -1) < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			for (k = 0; k < 2; k++) {
				ssize_t n;

				if (pf[k].fd < 0 || !pf[k].revents)
					continue;
				if (lens[k] + 65536 >= caps[k])
					bufs[k] = realloc(bufs[k], caps[k] = caps[k] * 2 + 65536);
				n = read(pf[k].fd, bufs[k] + lens[k], caps[k] - lens[k] - 1);
				if (n <= 0) {
					close(pf[k].fd);
					pf[k].fd = -1;
					open_fds--;
				} else {
					lens[k] += (size_t)n;
				}
			}
		}
		bufs[0][lens[0]] = '\0';
		bufs[1][lens[1]] = '\0';
		if (out)
			*out = bufs[0];
		else
			free(bufs[0]);
		if (err_out)
			*err_out = bufs[1];
		else
			free(bufs[1]);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

int harness_capture(char *const argv[], char **out, char **err_out)
{
	return harness_capture_input(argv, NULL, out, err_out);
}

const char *harness_fences_policy_opt(void)
{
	static const char text[] = "{\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0},\n"
				   " \"validators\": {\"enabled\": false}}\n";
	static char opt[4096];
	const char *path = getenv("WARD_TEST_FENCES_POLICY");
	char tmp[1024];
	int fd;

	if (opt[0])
		return opt;
	if (!path || !*path) {
		const char *dir = getenv("TMPDIR");

		snprintf(tmp, sizeof(tmp), "%s/ward-fences-policy.%u.json",
			 dir && *dir ? dir : "/tmp", (unsigned)getuid());
		/* written aside and renamed over: forked tests (and other test
		 * binaries) may be reading it this very moment */
		char part[1100];

		snprintf(part, sizeof(part), "%s.XXXXXX", tmp);
		fd = mkstemp(part);
		if (fd >= 0) {
			if (fchmod(fd, 0644) < 0 || write(fd, text, sizeof(text) - 1) < 0 ||
			    rename(part, tmp) < 0) {
				perror("harness: write fences policy");
				unlink(part);
			}
			close(fd);
		}
		path = tmp;
	}
	snprintf(opt, sizeof(opt), "--policy=%s", path);
	return opt;
}

/* Whether process pid's command line (arguments joined by spaces) holds
 * marker, and starts with prefix when prefix is not NULL. */
static bool cmdline_matches(const char *pid, const char *prefix, const char *marker)
{
	char path[300], buf[4096];
	ssize_t n, i;
	int fd;

	if (pid[0] < '0' || pid[0] > '9')
		return false;
	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	return (!prefix || strncmp(buf, prefix, strlen(prefix)) == 0) && strstr(buf, marker) != NULL;
}

bool harness_cmdline_alive(const char *prefix, const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	while (d && (e = readdir(d)) && !found)
		found = cmdline_matches(e->d_name, prefix, marker);
	if (d)
		closedir(d);
	return found;
}

const char *harness_sleep_marker(void)
{
	static char buf[64];
	static unsigned count;

	count++;
	snprintf(buf, sizeof(buf), "%u.%08ld%02u", 3600 + count, (long)getpid(), count % 100);
	return buf;
}

int harness_pidfds_of(const char *prefix, const char *marker, int *fds, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) && n < max) {
		int fd;

		if (!cmdline_matches(e->d_name, prefix, marker))
			continue;
		fd = (int)syscall(SYS_pidfd_open, (pid_t)atol(e->d_name), 0);
		if (fd >= 0)
			fds[n++] = fd;
	}
	if (d)
		closedir(d);
	return n;
}

void harness_wait_gone(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct pollfd pf = { fds[i], POLLIN, 0 };

		while (poll(&pf, 1, -1) < 0 && errno == EINTR)
			;
		close(fds[i]);
	}
}

char *harness_slurp(const char *path)
{
	FILE *f = fopen(path, "re"), *m;
	char *buf = NULL, chunk[4096];
	size_t size = 0, n;
	int bad;

	if (!f)
		return NULL;
	if (!(m = open_memstream(&buf, &size))) {
		fclose(f);
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	bad = ferror(f);
	fclose(f);
	fclose(m);
	if (bad) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	return buf;
}

char *harness_help_options(const char *sub)
{
	char *ward = harness_path("ward"), *out = NULL;
	char *argv[] = { ward, (char *)sub, (char *)"--help", NULL };
	char *list = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&list, &size);
	int st = harness_capture(argv, &out, NULL);

	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "ward %s --help", sub);
	for (char *p = out; (p = strchr(p, '-'));) {
		const char *bol = p;
		size_t n = 0;

		while (bol > out && bol[-1] != '\n')
			bol--;
		/* options are on the usage lines and the option table's lines, not
		 * in prose (the shell's own "history [-p PREFIX]"), and start a word */
		if (!(strncmp(bol, "usage:", 6) == 0 || strncmp(bol, "       ward", 11) == 0 ||
		      bol[strspn(bol, " ")] == '-') ||
		    (p != out && p[-1] != ' ' && p[-1] != '\n' && p[-1] != '[' && p[-1] != '|')) {
			p++;
			continue;
		}
		while (p[n] == '-' && n < 2)
			n++;
		while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
		       (p[n] >= '0' && p[n] <= '9') || (p[n] == '-' && n > 2))
			n++;
		if (n >= 2 && !(n == 2 && p[1] == '-'))
			fprintf(m, "%.*s\n", (int)n, p);
		p += n ? n : 1;
	}
	fclose(m);
	free(out);
	free(ward);
	return list;
}

bool harness_private_mounts(bool fresh_shm)
{
	if (geteuid() != 0)
		return false;
	ck_assert_msg(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS): %s", strerror(errno));
	ck_assert_msg(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0,
		      "mount --make-rprivate /: %s", strerror(errno));
	if (fresh_shm)
		ck_assert_msg(mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
				    "mode=1777") == 0,
			      "mount tmpfs on /dev/shm: %s", strerror(errno));
	return true;
}
