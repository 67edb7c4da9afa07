/* test-state.c — another local user against the files ward uses on the host
 * (issue 14 item 10, issue 21 item 3): a squatted /tmp/ward-UID, a HOME that
 * does not exist, XDG_STATE_HOME in another user's directory with planted
 * symbolic links, --net-log through a link or in another user's directory,
 * and policies that are links, another user's, or group-writable.
 *
 * "Another user" is uid 65534 when these run as root (tag root), the test
 * making that user's files; the probes on the caller's own files run in both
 * tiers. Tests that squat /tmp do it on a tmpfs of their own, in a mount
 * namespace of their own (tests run forked), so the host's /tmp is never
 * touched; the ward binary is copied there so that uid 65534 can run it. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

static char *ward;

/* What a run is given: its uid (0 or NOBODY when root, else ignored), its
 * environment (NULL values left out), its arguments after "ward". */
struct as {
	uid_t uid;
	const char *home, *xdg, *policy_env;
};

/* Run ward with args, as a (stdin /dev/null); stdout and stderr captured
 * (malloc'd). Returns the exit status (or 128 + signal). */
static int run(const struct as *a, const char *const args[], char **out, char **err)
{
	int po[2], pe[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(po), 0);
	ck_assert_int_eq(pipe(pe), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *argv[32] = { ward };
		int n = 1, fd = open("/dev/null", O_RDONLY);

		dup2(fd, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		clearenv();
		setenv("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", 1);
		setenv("LANG", "C.UTF-8", 1);
		if (a->home)
			setenv("HOME", a->home, 1);
		if (a->xdg)
			setenv("XDG_STATE_HOME", a->xdg, 1);
		if (a->policy_env)
			setenv("WARD_POLICY", a->policy_env, 1);
		if (geteuid() == 0 && a->uid != 0 &&
		    (setgroups(0, NULL) < 0 || setresgid(a->uid, a->uid, a->uid) < 0 ||
		     setresuid(a->uid, a->uid, a->uid) < 0))
			_exit(126);
		for (size_t i = 0; args[i] && n < 31; i++)
			argv[n++] = args[i];
		argv[n] = NULL;
		execv(ward, (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	{
		char *bufs[2] = { NULL, NULL };
		size_t lens[2] = { 0, 0 };
		int fds[2] = { po[0], pe[0] };

		for (int k = 0; k < 2; k++) {
			char chunk[4096];
			ssize_t r;

			while ((r = read(fds[k], chunk, sizeof(chunk))) > 0) {
				bufs[k] = realloc(bufs[k], lens[k] + (size_t)r + 1);
				memcpy(bufs[k] + lens[k], chunk, (size_t)r);
				lens[k] += (size_t)r;
			}
			if (!bufs[k])
				bufs[k] = calloc(1, 1);
			bufs[k][lens[k]] = '\0';
			close(fds[k]);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		if (out)
			*out = bufs[0];
		else
			free(bufs[0]);
		if (err)
			*err = bufs[1];
		else
			free(bufs[1]);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *dir; /* this test's own directory, 0755, the caller's */

/* dir + "/" + rel, malloc'd and kept for the test's life (a forked
 * process: nothing outlives it) */
static char *at(const char *rel)
{
	char *b;

	ck_assert_int_ge(asprintf(&b, "%s/%s", dir, rel), 0);
	return b;
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static size_t entries(const char *path)
{
	char cmd[4400], *out = NULL;
	char *argv[] = { (char *)"sh", (char *)"-c", cmd, NULL };
	size_t n;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", path);
	harness_capture(argv, &out, NULL);
	n = (size_t)strtoul(out ? out : "0", NULL, 10);
	free(out);
	return n;
}

/* A policy with the rate limit on (so that its state file is used), the
 * front door's validators otherwise as they are. */
#define RATE_POLICY(n) "{\"rate_limit\": {\"per_minute\": " #n ", \"per_hour\": 1000}}\n"

static void setup(void)
{
	dir = harness_tmpdir();
	ward = harness_path("ward");
}

static void teardown(void)
{
	harness_rmtree(dir);
	free(dir);
	free(ward);
}

/* A /tmp of this test's own (a tmpfs in a mount namespace of its own) with
 * the ward binary copied in; dir moves there too. Root only. */
static void private_tmp(void)
{
	int in = open(ward, O_RDONLY | O_CLOEXEC), outfd;
	char buf[65536];
	ssize_t n;

	/* the binary read before /tmp is covered: the build may be under it */
	ck_assert_int_ge(in, 0);
	harness_rmtree(dir);
	free(dir);
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"), 0);
	outfd = open("/tmp/ward", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ck_assert_int_ge(outfd, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(outfd, buf, (size_t)n), n);
	close(in);
	close(outfd);
	free(ward);
	ward = strdup("/tmp/ward");
	setenv("TMPDIR", "/tmp", 1);
	dir = harness_tmpdir();
	/* the workdir too: the one the test ran in may have been under the
	 * covered /tmp (the mutation tier's scratch tree) */
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chdir(dir), 0);
}

/* ---- issue 14 item 10: the fallback in /tmp squatted ---------------------------------- */

/* uid `who` finds /tmp/ward-UID made first by `squatter`: ward still runs,
 * in a private directory of its own that persists across invocations (its
 * rate limit counts), and the squatter's directory gets nothing. */
static void squatted(uid_t who, uid_t squatter)
{
	struct as a = { .uid = who, .home = "/nonexistent" };
	char squat[64], pol[64], *err = NULL, *out = NULL;
	const char *args[] = { "run", "--policy", pol, "-c", "echo ran", NULL };
	struct stat st;
	int found = 0;

	private_tmp();
	snprintf(squat, sizeof(squat), "/tmp/ward-%u", (unsigned)who);
	ck_assert_int_eq(mkdir(squat, 0777), 0);
	ck_assert_int_eq(chown(squat, squatter, squatter), 0);
	ck_assert_int_eq(chmod(squat, 0777), 0);
	snprintf(pol, sizeof(pol), "/tmp/policy.json");
	put(pol, RATE_POLICY(2), 0644);
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(run(&a, args, &out, &err) == 0, "run %d: %s", i, err);
		ck_assert_str_eq(out, "ran\n");
		free(out);
		free(err);
	}
	/* the state persisted: the third is over the limit of 2 */
	ck_assert_int_eq(run(&a, args, &out, &err), 125);
	ck_assert_msg(strstr(err, "rate limit of 2 commands per minute"), "%s", err);
	free(out);
	free(err);
	ck_assert_uint_eq(entries(squat), 0);
	/* where it went: /tmp/ward-UID.XXXXXX, the caller's, 0700 */
	{
		char cmd[128], *list = NULL;
		char *argv[] = { (char *)"sh", (char *)"-c", cmd, NULL };

		snprintf(cmd, sizeof(cmd), "ls -d %s.??????", squat);
		harness_capture(argv, &list, NULL);
		ck_assert_msg(list && *list, "no private state directory");
		list[strcspn(list, "\n")] = '\0';
		ck_assert_int_eq(lstat(list, &st), 0);
		ck_assert(S_ISDIR(st.st_mode));
		ck_assert_uint_eq(st.st_uid, who);
		ck_assert_uint_eq(st.st_mode & 0777, 0700);
		found = 1;
		free(list);
	}
	ck_assert(found);
}

START_TEST(test_root_squatted_tmp)
{
	squatted(0, NOBODY);
}
END_TEST

START_TEST(test_nobody_squatted_tmp)
{
	squatted(NOBODY, 1); /* uid 1 (daemon): another user, not root */
}
END_TEST

/* uid 65534's HOME is /nonexistent: ward runs, with its rate limit on, and
 * makes no home (as root, the old ward made the missing HOME). */
START_TEST(test_home_missing)
{
	char home[4300], pol[4300], *out = NULL, *err = NULL;
	struct as a = { .uid = geteuid(), .home = home };
	const char *args[] = { "run", "--policy", pol, "-c", "echo ran", NULL };

	snprintf(home, sizeof(home), "%s/nonexistent", dir);
	snprintf(pol, sizeof(pol), "%s/policy.json", dir);
	put(pol, RATE_POLICY(1000), 0644);
	ck_assert_msg(run(&a, args, &out, &err) == 0, "%s", err);
	ck_assert_str_eq(out, "ran\n");
	ck_assert_int_eq(access(home, F_OK), -1);
	free(out);
	free(err);
	/* and the literal /nonexistent, when it is not there (not as root: a
	 * ward that made it would leave it on the host) */
	if (geteuid() != 0 && access("/nonexistent", F_OK) != 0) {
		a.home = "/nonexistent";
		ck_assert_msg(run(&a, args, &out, &err) == 0, "%s", err);
		ck_assert_int_eq(access("/nonexistent", F_OK), -1);
		free(out);
		free(err);
	}
}
END_TEST

/* A state directory the caller owns but others may write (0777) is passed
 * over: the next candidate (HOME) holds the state. */
START_TEST(test_state_loose)
{
	char xdg[4300], pol[4300], *out = NULL, *err = NULL;
	struct as a = { .uid = geteuid(), .home = at("home"), .xdg = xdg };
	const char *args[] = { "run", "--policy", pol, "-c", "echo ran", NULL };

	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	snprintf(pol, sizeof(pol), "%s/policy.json", dir);
	put(pol, RATE_POLICY(1000), 0644);
	ck_assert_int_eq(mkdir(at("home"), 0700), 0);
	ck_assert_int_eq(mkdir(xdg, 0700), 0);
	ck_assert_int_eq(mkdir(at("xdg/ward"), 0777), 0);
	ck_assert_int_eq(chmod(at("xdg/ward"), 0777), 0);
	ck_assert_msg(run(&a, args, &out, &err) == 0, "%s", err);
	ck_assert_uint_eq(entries(at("xdg/ward")), 0);
	ck_assert_int_eq(access(at("home/.local/state/ward/ratelimit"), F_OK), 0);
	free(out);
	free(err);
}
END_TEST

/* changes/ in the state directory replaced by a symbolic link to a
 * directory holding a made-up set: not listed, not opened. */
START_TEST(test_changes_link)
{
	char *out = NULL, *err = NULL;
	struct as a = { .uid = geteuid(), .home = at("home"), .xdg = at("xdg") };
	const char *list[] = { "changes", NULL };
	const char *diff[] = { "diff", "planted", NULL };

	ck_assert_int_eq(mkdir(at("home"), 0700), 0);
	ck_assert_int_eq(mkdir(at("xdg"), 0700), 0);
	ck_assert_int_eq(mkdir(at("xdg/ward"), 0700), 0);
	ck_assert_int_eq(mkdir(at("other"), 0700), 0);
	ck_assert_int_eq(mkdir(at("other/planted"), 0700), 0);
	ck_assert_int_eq(mkdir(at("other/planted/upper"), 0700), 0);
	put(at("other/planted/upper/f"), "x\n", 0600);
	put(at("other/planted/workdir"), dir, 0600);
	ck_assert_int_eq(symlink(at("other"), at("xdg/ward/changes")), 0);
	run(&a, list, &out, &err);
	ck_assert_msg(!strstr(out, "planted"), "%s", out);
	free(out);
	free(err);
	ck_assert_int_ne(run(&a, diff, &out, &err), 0);
	ck_assert_msg(strstr(err, "symbolic link"), "%s", err);
	free(out);
	free(err);
}
END_TEST

/* ---- issue 21 item 3: XDG_STATE_HOME in another user's directory ------------------------ */

/* Root's state never lands in the target of a link another user planted:
 * in a directory of theirs, or in a sticky directory open to all. */
START_TEST(test_xdg_planted)
{
	char pol[4300], *out = NULL, *err = NULL, *wd = at("wd");
	struct as a = { .uid = 0, .home = at("home") };
	const char *direct[] = { "run", "--policy", pol, "-C", wd, "-c", "echo x > f", NULL };
	const char *overlay[] = { "run", "--policy", pol, "-C", wd, "--workdir-mode", "overlay",
				  "-c", "echo y > g", NULL };
	const char *xdgs[] = { "bob/state", "sticky/state", "bob/real" };

	snprintf(pol, sizeof(pol), "%s/policy.json", dir);
	put(pol, RATE_POLICY(1000), 0644);
	ck_assert_int_eq(mkdir(wd, 0755), 0);
	ck_assert_int_eq(mkdir(at("home"), 0700), 0);
	ck_assert_int_eq(mkdir(at("rootonly"), 0700), 0);
	ck_assert_int_eq(mkdir(at("bob"), 0755), 0);
	ck_assert_int_eq(chown(at("bob"), NOBODY, NOBODY), 0);
	ck_assert_int_eq(mkdir(at("bob/real"), 0700), 0);
	ck_assert_int_eq(chown(at("bob/real"), NOBODY, NOBODY), 0);
	ck_assert_int_eq(symlink(at("rootonly"), at("bob/state")), 0);
	ck_assert_int_eq(lchown(at("bob/state"), NOBODY, NOBODY), 0);
	ck_assert_int_eq(mkdir(at("sticky"), 01777), 0);
	ck_assert_int_eq(chmod(at("sticky"), 01777), 0);
	ck_assert_int_eq(symlink(at("rootonly"), at("sticky/state")), 0);
	ck_assert_int_eq(lchown(at("sticky/state"), NOBODY, NOBODY), 0);
	for (size_t i = 0; i < sizeof(xdgs) / sizeof(xdgs[0]); i++) {
		a.xdg = at(xdgs[i]);
		ck_assert_msg(run(&a, direct, &out, &err) == 0, "%s: %s", xdgs[i], err);
		free(out);
		free(err);
		if (harness_have("userns")) {
			ck_assert_msg(run(&a, overlay, &out, &err) == 0, "%s: %s", xdgs[i], err);
			free(out);
			free(err);
		}
		ck_assert_msg(entries(at("rootonly")) == 0, "%s: state made in the link's target",
			      xdgs[i]);
		ck_assert_msg(entries(at("bob/real")) == 0, "%s: state made in bob's directory",
			      xdgs[i]);
	}
	/* it went to the next candidate, root's own */
	ck_assert_int_eq(access(at("home/.local/state/ward/ratelimit"), F_OK), 0);
}
END_TEST

/* ward doctor names the directory in use and why the others were skipped. */
START_TEST(test_doctor_says)
{
	char *out = NULL, *err = NULL;
	struct as a = { .uid = 0, .home = at("nohome"), .xdg = at("bob/state") };
	const char *args[] = { "doctor", NULL };

	ck_assert_int_eq(mkdir(at("bob"), 0755), 0);
	ck_assert_int_eq(chown(at("bob"), NOBODY, NOBODY), 0);
	run(&a, args, &out, &err);
	ck_assert_msg(strstr(out, "state directory") && strstr(out, "skipped") &&
			      strstr(out, at("bob/state/ward")) &&
			      strstr(out, "is owned by uid 65534") && strstr(out, "does not exist"),
		      "%s", out);
	free(out);
	free(err);
}
END_TEST

/* ---- issue 21 item 3: --net-log ------------------------------------------------------- */

static void netlog_refused(const char *log, const char *why)
{
	char *out = NULL, *err = NULL;
	struct as a = { .uid = 0, .home = at("home"), .xdg = at("xdg") };
	const char *args[] = { "run", "--net", "proxy", "--net-log", log, "-c", "true", NULL };

	ck_assert_msg(run(&a, args, &out, &err) != 0, "%s: ran", log);
	ck_assert_msg(strstr(err, "network log") && strstr(err, why), "%s: %s", log, err);
	free(out);
	free(err);
}

START_TEST(test_netlog)
{
	struct stat st;
	char *out = NULL, *err = NULL;
	struct as a = { .uid = 0, .home = at("home"), .xdg = at("xdg") };
	const char *args[] = { "run", "--net", "proxy", "--net-log", at("mine/net.log"), "-c",
			       "true", NULL };

	ck_assert_int_eq(mkdir(at("home"), 0700), 0);
	ck_assert_int_eq(mkdir(at("rootonly"), 0700), 0);
	put(at("rootonly/secret"), "secret\n", 0600);
	/* a link in another user's directory */
	ck_assert_int_eq(mkdir(at("bob"), 0755), 0);
	ck_assert_int_eq(chown(at("bob"), NOBODY, NOBODY), 0);
	ck_assert_int_eq(symlink(at("rootonly/secret"), at("bob/net.log")), 0);
	ck_assert_int_eq(lchown(at("bob/net.log"), NOBODY, NOBODY), 0);
	netlog_refused(at("bob/net.log"), "is owned by uid 65534");
	/* a file of theirs there, and one not yet made */
	put(at("bob/own.log"), "", 0644);
	ck_assert_int_eq(chown(at("bob/own.log"), NOBODY, NOBODY), 0);
	netlog_refused(at("bob/own.log"), "is owned by uid 65534");
	netlog_refused(at("bob/new.log"), "is owned by uid 65534");
	ck_assert_int_eq(access(at("bob/new.log"), F_OK), -1);
	/* through a directory of theirs on the way */
	ck_assert_int_eq(mkdir(at("bob/sub"), 0755), 0);
	netlog_refused(at("bob/sub/net.log"), "is owned by uid 65534");
	/* in a sticky directory open to all: their link, a hard link made there */
	ck_assert_int_eq(mkdir(at("sticky"), 01777), 0);
	ck_assert_int_eq(chmod(at("sticky"), 01777), 0);
	ck_assert_int_eq(symlink(at("rootonly/secret"), at("sticky/net.log")), 0);
	ck_assert_int_eq(lchown(at("sticky/net.log"), NOBODY, NOBODY), 0);
	netlog_refused(at("sticky/net.log"), "symbolic link");
	ck_assert_int_eq(link(at("rootonly/secret"), at("sticky/hard.log")), 0);
	netlog_refused(at("sticky/hard.log"), "hard links");
	ck_assert_str_eq(slurp(at("rootonly/secret")), "secret\n");
	/* a group-writable log of root's */
	ck_assert_int_eq(mkdir(at("mine"), 0755), 0);
	put(at("mine/shared.log"), "", 0664);
	netlog_refused(at("mine/shared.log"), "writable by its group");
	/* and one of its own: made 0600, ward runs */
	if (harness_have("netadmin")) {
		ck_assert_msg(run(&a, args, &out, &err) == 0, "%s", err);
		ck_assert_int_eq(stat(at("mine/net.log"), &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0600);
		free(out);
		free(err);
	}
}
END_TEST

/* ---- issue 21 item 3: policy files ---------------------------------------------------- */

/* `ward validate` with the policy given by --policy and by WARD_POLICY:
 * refused with why, or (why NULL) accepted. */
static void policy_judged(const char *path, const char *why)
{
	char *out = NULL, *err = NULL;
	struct as a = { .uid = geteuid(), .home = at("home"), .xdg = at("xdg") };
	const char *args[] = { "validate", "--policy", path, "-c", "ls", NULL };
	const char *env_args[] = { "validate", "-c", "ls", NULL };
	int rc;

	for (int k = 0; k < 2; k++) {
		a.policy_env = k ? path : NULL;
		rc = run(&a, k ? env_args : args, &out, &err);
		if (why)
			ck_assert_msg(rc != 0 && strstr(err, "policy") && strstr(err, path) &&
					      strstr(err, why),
				      "%s (%s): rc %d: %s", path, k ? "WARD_POLICY" : "--policy",
				      rc, err);
		else
			ck_assert_msg(rc == 0, "%s: rc %d: %s", path, rc, err);
		free(out);
		free(err);
	}
}

START_TEST(test_policy_own)
{
	ck_assert_int_eq(mkdir(at("home"), 0700), 0);
	put(at("policy.json"), RATE_POLICY(1000), 0644);
	policy_judged(at("policy.json"), NULL);
	ck_assert_int_eq(symlink(at("policy.json"), at("link.json")), 0);
	policy_judged(at("link.json"), "symbolic link");
	put(at("group.json"), RATE_POLICY(1000), 0664);
	policy_judged(at("group.json"), "writable by its group");
	put(at("world.json"), RATE_POLICY(1000), 0646);
	policy_judged(at("world.json"), "writable by others");
	/* in a directory others may write (not sticky) */
	ck_assert_int_eq(mkdir(at("open"), 0777), 0);
	ck_assert_int_eq(chmod(at("open"), 0777), 0);
	put(at("open/policy.json"), RATE_POLICY(1000), 0644);
	policy_judged(at("open/policy.json"), "writable by others");
	/* a seccomp profile file is taken as a policy is */
	{
		char *out = NULL, *err = NULL;
		struct as a = { .uid = geteuid(), .home = at("home"), .xdg = at("xdg"),
				.policy_env = at("policy.json") };
		const char *own[] = { "run", "--seccomp", at("own.profile"), "-c", "true", NULL };
		const char *link[] = { "run", "--seccomp", at("link.profile"), "-c", "true", NULL };

		put(at("own.profile"), "@include default\n", 0644);
		ck_assert_int_eq(symlink(at("own.profile"), at("link.profile")), 0);
		ck_assert_msg(run(&a, own, &out, &err) == 0, "%s", err);
		free(out);
		free(err);
		ck_assert_int_ne(run(&a, link, &out, &err), 0);
		ck_assert_msg(strstr(err, "seccomp profile") && strstr(err, "symbolic link"), "%s",
			      err);
		free(out);
		free(err);
	}
}
END_TEST

START_TEST(test_policy_other_user)
{
	ck_assert_int_eq(mkdir(at("home"), 0700), 0);
	/* theirs, in root's directory */
	put(at("theirs.json"), RATE_POLICY(1000), 0644);
	ck_assert_int_eq(chown(at("theirs.json"), NOBODY, NOBODY), 0);
	policy_judged(at("theirs.json"), "is owned by uid 65534");
	/* root's, in theirs: they could swap it */
	ck_assert_int_eq(mkdir(at("bob"), 0755), 0);
	ck_assert_int_eq(chown(at("bob"), NOBODY, NOBODY), 0);
	put(at("bob/policy.json"), RATE_POLICY(1000), 0644);
	policy_judged(at("bob/policy.json"), "is owned by uid 65534");
	/* their link to root's own policy, in a sticky directory */
	put(at("root.json"), RATE_POLICY(1000), 0644);
	ck_assert_int_eq(mkdir(at("sticky"), 01777), 0);
	ck_assert_int_eq(chmod(at("sticky"), 01777), 0);
	ck_assert_int_eq(symlink(at("root.json"), at("sticky/policy.json")), 0);
	ck_assert_int_eq(lchown(at("sticky/policy.json"), NOBODY, NOBODY), 0);
	policy_judged(at("sticky/policy.json"), "symbolic link");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("state");
	TCase *own = harness_tcase(s, "own-files", NULL);
	TCase *other = harness_tcase(s, "other-user", "root");
	TCase *squat = harness_tcase(s, "squatted-tmp", "root");

	tcase_add_checked_fixture(own, setup, teardown);
	tcase_add_test(own, test_home_missing);
	tcase_add_test(own, test_state_loose);
	tcase_add_test(own, test_changes_link);
	tcase_add_test(own, test_policy_own);
	tcase_add_checked_fixture(other, setup, teardown);
	tcase_add_test(other, test_xdg_planted);
	tcase_add_test(other, test_doctor_says);
	tcase_add_test(other, test_netlog);
	tcase_add_test(other, test_policy_other_user);
	tcase_add_checked_fixture(squat, setup, teardown);
	tcase_add_test(squat, test_root_squatted_tmp);
	tcase_add_test(squat, test_nobody_squatted_tmp);
	return harness_main(s);
}
