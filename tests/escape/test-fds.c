/* test-fds.c — the host's own descriptors (issue 14, item 6).
 *
 * The command must never hold ward's stdin, stdout or stderr themselves:
 * through them it could chmod the host's file or terminal, or leave the
 * terminal in raw mode after ward returned. Each case hands ward host files,
 * pipes, /dev/null or a terminal of the test's own (a pty, never the
 * runner's: CI has none), lets the command attack them, and checks the host's
 * side afterwards: device and inode seen inside, mode, ctime (an fchmod or
 * fchown that changes nothing still moves it), termios.
 *
 * Waits are for events (a marker in the output, end of file, the child's
 * exit); the poll limits are only there so a broken build fails, not hangs. */
#include "harness.h"
#include "runtime/util/util-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static char *ward, *workdir, *probe;
static const char *phase = ""; /* which step of a test, for its failure message */

static void setup(void)
{
	char *rel = harness_path("tests/helpers/fd-probe"), cmd[8192];

	signal(SIGPIPE, SIG_IGN);
	ward = harness_path("ward");
	workdir = harness_tmpdir();
	/* the probe runs inside: a copy in the workdir, which the view has */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/fd-probe'", rel, workdir);
	ck_assert_int_eq(system(cmd), 0);
	if (asprintf(&probe, "%s/fd-probe", workdir) < 0)
		abort();
	free(rel);
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
	free(ward);
	free(probe);
}

static char *path_in(const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", workdir, name) < 0)
		abort();
	return p;
}

static char *slurp(const char *path)
{
	char *s = harness_slurp(path);

	ck_assert_msg(s != NULL, "open '%s': %s", path, strerror(errno));
	return s;
}

/* A host file of the test's own, mode 0600, with some content. */
static int host_file(const char *name, struct stat *st)
{
	char *p = path_in(name);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0600), 0);
	ck_assert_int_eq(write(fd, "host data\n", 10), 10);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(fstat(fd, st), 0);
	free(p);
	return fd;
}

/* ward run CMD with fds 0, 1, 2 as given; returns the wait status. */
static int run_with_fds(int in, int out, int errfd, const char *cmd)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(in, 0);
		dup2(out, 1);
		dup2(errfd, 2);
		execl(ward, ward, "run", harness_fences_policy_opt(), "-C", workdir, "-c", cmd,
		      (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

/* The probe's report names none of the host's (dev, ino) pairs. */
static void assert_not_host(const char *report, const struct stat *host, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		char id[64];

		snprintf(id, sizeof(id), " %llu:%llu ", (unsigned long long)host[i].st_dev,
			 (unsigned long long)host[i].st_ino);
		ck_assert_msg(!strstr(report, id), "the command holds a host file %s:\n%s", id,
			      report);
	}
}

/* fds 0..n-1 of the report: none the host's /dev/null (null) as the host
 * opened it. The view's /dev/null is the host's node bound in read-only (the
 * same device and inode), and ward hands it to the command in place of a
 * host stream that is /dev/null: through it fchmod and fchown fail with
 * EROFS, where through the host's descriptor they would succeed. */
static void assert_null_not_host(const char *report, const struct stat *null, int n)
{
	char id[64];

	snprintf(id, sizeof(id), " %llu:%llu ", (unsigned long long)null->st_dev,
		 (unsigned long long)null->st_ino);
	for (int i = 0; i < n; i++) {
		char head[16], line[256];
		const char *l;
		size_t len;

		snprintf(head, sizeof(head), "fd %d ", i);
		l = strstr(report, head);
		ck_assert_msg(l != NULL, "no line for fd %d:\n%s", i, report);
		len = strcspn(l, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		if (!strstr(line, id))
			continue;
		ck_assert_msg(strstr(line, "fchmod=30 ") && strstr(line, "fchown=30"),
			      "the command holds the host's /dev/null writable: %s\n%s", line,
			      report);
	}
}

static void assert_untouched(int fd, const struct stat *before, const char *what)
{
	struct stat now;

	ck_assert_int_eq(fstat(fd, &now), 0);
	ck_assert_msg((now.st_mode & 07777) == (before->st_mode & 07777),
		      "%s: mode %o became %o", what, before->st_mode & 07777, now.st_mode & 07777);
	ck_assert_msg(now.st_uid == before->st_uid && now.st_gid == before->st_gid,
		      "%s: owner changed", what);
	ck_assert_msg(now.st_ctim.tv_sec == before->st_ctim.tv_sec &&
			      now.st_ctim.tv_nsec == before->st_ctim.tv_nsec,
		      "%s: changed from inside (ctime moved)", what);
}

/* What each fd is inside, and chmod through /proc/self/fd and /proc/1/fd
 * (init's own fds 0-2 were the host's too). Nothing goes to fd 1 or 2. */
#define ATTACK                                                                           \
	"./fd-probe report; "                                                            \
	"stat -L -c ' %d:%i ' /proc/1/fd/0 /proc/1/fd/1 /proc/1/fd/2 >>report 2>/dev/null; " \
	"chmod 666 /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2 >/dev/null 2>&1; "          \
	"chmod 666 /proc/1/fd/0 /proc/1/fd/1 /proc/1/fd/2 >/dev/null 2>&1; true"

START_TEST(test_host_files)
{
	struct stat st[3];
	int in = host_file("in", &st[0]), out = host_file("out", &st[1]);
	int errfd = host_file("err", &st[2]), status;
	char *rp = path_in("report"), *report;

	status = run_with_fds(in, out, errfd, ATTACK);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	report = slurp(rp);
	ck_assert_msg(strstr(report, "fd 2 "), "no report: %s", report);
	assert_not_host(report, st, 3);
	assert_untouched(in, &st[0], "stdin file");
	assert_untouched(out, &st[1], "stdout file");
	assert_untouched(errfd, &st[2], "stderr file");
	free(report);
	free(rp);
	close(in);
	close(out);
	close(errfd);
}
END_TEST

/* Pipes of the test's own, and the host's /dev/null as stdin: the command
 * gets none of them (a pipe's inode is the host's too: chmod on it shows in
 * the test's fstat). */
START_TEST(test_host_pipes_and_null)
{
	int ip[2], op[2], ep[2], null = open("/dev/null", O_RDONLY | O_CLOEXEC), status;
	int nullw = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct stat st[4];
	char *rp = path_in("report"), *report;

	ck_assert_int_eq(pipe2(ip, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(op, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(ep, O_CLOEXEC), 0);
	close(ip[1]); /* stdin at end of file */
	ck_assert_int_eq(fstat(ip[0], &st[0]), 0);
	ck_assert_int_eq(fstat(op[1], &st[1]), 0);
	ck_assert_int_eq(fstat(ep[1], &st[2]), 0);
	ck_assert_int_eq(fstat(null, &st[3]), 0);
	status = run_with_fds(ip[0], op[1], ep[1], ATTACK);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	report = slurp(rp);
	assert_not_host(report, st, 3);
	assert_untouched(ip[0], &st[0], "stdin pipe");
	assert_untouched(op[1], &st[1], "stdout pipe");
	free(report);

	/* the host's /dev/null as stdin; and the view's /dev/null, the
	 * host's node bound in: chmod to the mode it has changes nothing but
	 * its ctime, so the host's /dev/null is never harmed by this test */
	status = run_with_fds(null, op[1], ep[1],
			      "./fd-probe report; chmod 666 /dev/null /proc/$$/fd/0; "
			      "touch /dev/null; true");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	report = slurp(rp);
	assert_null_not_host(report, &st[3], 1);
	assert_untouched(null, &st[3], "/dev/null");
	free(report);

	/* all three the host's /dev/null (no relay is needed for it, so none
	 * is made): still none of them the host's descriptor */
	status = run_with_fds(null, nullw, nullw, ATTACK);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	report = slurp(rp);
	ck_assert_msg(strstr(report, "fd 2 "), "no report: %s", report);
	assert_null_not_host(report, &st[3], 3);
	assert_untouched(null, &st[3], "/dev/null as stdin, stdout and stderr");
	free(report);
	free(rp);
	close(null);
	close(nullw);
	close(ip[0]);
	close(op[0]);
	close(op[1]);
	close(ep[0]);
	close(ep[1]);
}
END_TEST

/* 2>&1 stays in the order the command wrote: one stream, not two relays
 * racing to the same file. */
START_TEST(test_merged_order)
{
	int op[2], null = open("/dev/null", O_RDONLY | O_CLOEXEC), status;
	char buf[4096];
	ssize_t n;

	ck_assert_int_eq(pipe2(op, O_CLOEXEC), 0);
	status = run_with_fds(null, op[1], op[1],
			      "for i in 1 2 3 4 5 6 7 8 9; do echo o$i; echo e$i >&2; done");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	close(op[1]);
	n = read(op[0], buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "o1\ne1\no2\ne2\no3\ne3\no4\ne4\no5\ne5\no6\ne6\no7\ne7\no8\ne8\n"
			      "o9\ne9\n");
	close(op[0]);
	close(null);
}
END_TEST

/* ward ARGS... fed `input` on stdin (written as ward takes it, its output
 * read meanwhile), stdout into *out; ward runs with SIGPIPE at its default,
 * as from a shell, so a write ward does not expect to fail would kill it.
 * Returns the wait status. */
static int feed(const char *const args[], const char *input, size_t len, char **out)
{
	int ip[2], op[2], status;
	size_t off = 0, got = 0, cap = 65536;
	char *buf = malloc(cap);
	const char *argv[24];
	int n = 0;
	pid_t pid;

	argv[n++] = ward;
	argv[n++] = "run";
	argv[n++] = harness_fences_policy_opt();
	argv[n++] = "-C";
	argv[n++] = workdir;
	while (*args && n < 23)
		argv[n++] = *args++;
	argv[n] = NULL;
	ck_assert_int_eq(pipe2(ip, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(op, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		signal(SIGPIPE, SIG_DFL);
		dup2(ip[0], 0);
		dup2(op[1], 1);
		dup2(null, 2); /* "command timed out": expected, not for the log */
		execv(ward, (char *const *)argv);
		_exit(127);
	}
	close(ip[0]);
	close(op[1]);
	fcntl(ip[1], F_SETFL, O_NONBLOCK);
	for (;;) {
		struct pollfd pf[2] = { { op[0], POLLIN, 0 }, { off < len ? ip[1] : -1, POLLOUT, 0 } };
		ssize_t k;

		if (off >= len && ip[1] >= 0) {
			close(ip[1]);
			ip[1] = -1;
		}
		ck_assert_int_gt(poll(pf, 2, 60000), 0);
		if (pf[1].revents & (POLLOUT | POLLERR)) {
			k = write(ip[1], input + off, len - off);
			if (k > 0)
				off += (size_t)k;
			else if (k < 0 && errno == EPIPE)
				off = len; /* ward took what it wanted */
		}
		if (pf[0].revents & (POLLIN | POLLHUP)) {
			if (got + 4096 > cap)
				buf = realloc(buf, cap *= 2);
			k = read(op[0], buf + got, cap - got - 1);
			if (k <= 0)
				break;
			got += (size_t)k;
		}
	}
	buf[got] = '\0';
	if (ip[1] >= 0)
		close(ip[1]);
	close(op[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	*out = buf;
	return status;
}

/* stdin from a pipe still reaches the command, whole, in order; a command
 * that stops reading early ends the run, not ward. */
START_TEST(test_pipe_stdin_passes)
{
	const char *cat[] = { "--", "cat", NULL };
	const char *wc[] = { "-c", "wc -c; tail -c 4", NULL };
	const char *head[] = { "--", "head", "-c", "5", NULL };
	size_t big = 1 << 20, i;
	char *input = malloc(big + 1), *out = NULL;
	int status;

	status = feed(cat, "one\ntwo\n", 8, &out);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	ck_assert_str_eq(out, "one\ntwo\n");
	free(out);
	/* more than any pipe holds: the relay waits for the command */
	for (i = 0; i < big; i++)
		input[i] = (char)('a' + i % 26);
	memcpy(input + big - 4, "END\n", 4);
	input[big] = '\0';
	status = feed(wc, input, big, &out);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	ck_assert_str_eq(out, "1048576\n");
	free(out);
	/* the command closes its stdin with ward still writing to it */
	status = feed(head, input, big, &out);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	ck_assert_str_eq(out, "abcde");
	free(out);
	/* a command that never reads its stdin cannot stall ward past the
	 * timeout (a relay write that blocked would) */
	{
		const char *idle[] = { "--timeout", "1", "--", "sleep", "100", NULL };

		status = feed(idle, input, big, &out);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 124, "status %d", status);
		free(out);
	}
	free(input);
}
END_TEST

/* A session's shared sandbox: its init lives as long as the session, and
 * held the host's fds 0-2 (ward shell's stdin and stdout) all along, there
 * for any command to take through /proc/1/fd. */
START_TEST(test_session_init)
{
	const char *pol = "{\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}, "
			  "\"validators\": {\"enabled\": false}, "
			  "\"session\": {\"isolation\": \"shared\"}}";
	const char *script = "stat -L -c ' %d:%i ' /proc/1/fd/0 /proc/1/fd/1 /proc/1/fd/2 "
			     "2>/dev/null; echo DO''NE\n";
	char *pp = path_in("shared.json"), *polopt, *out = NULL;
	struct stat st[2];
	int ip[2], op[2], status;
	FILE *f = fopen(pp, "w");
	size_t got = 0;
	pid_t pid;

	ck_assert(f && fputs(pol, f) >= 0 && fclose(f) == 0);
	if (asprintf(&polopt, "--policy=%s", pp) < 0)
		abort();
	ck_assert_int_eq(pipe2(ip, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(op, O_CLOEXEC), 0);
	ck_assert_int_eq(fstat(ip[0], &st[0]), 0);
	ck_assert_int_eq(fstat(op[1], &st[1]), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(ip[0], 0);
		dup2(op[1], 1);
		dup2(op[1], 2);
		execl(ward, ward, "shell", polopt, "-C", workdir, (char *)NULL);
		_exit(127);
	}
	close(ip[0]);
	close(op[1]);
	ck_assert_int_eq(write(ip[1], script, strlen(script)), (ssize_t)strlen(script));
	close(ip[1]);
	out = calloc(1, 65536);
	for (;;) {
		ssize_t k = read(op[0], out + got, 65535 - got);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(strstr(out, "DONE"), "%s", out);
	assert_not_host(out, st, 2);
	free(out);
	free(polopt);
	free(pp);
	close(op[0]);
}
END_TEST

/* ---- under a terminal of the test's own --------------------------------------- */

struct tty_run {
	int master;
	pid_t pid;
	struct termios before; /* the modes before ward started */
	char seen[65536];
	size_t got;
};

/* ward run ARGS... on a new pty as its controlling terminal (a session of
 * its own, in the foreground), window rows x cols. */
static void tty_start_verb(struct tty_run *t, unsigned short rows, unsigned short cols,
			   const char *verb, const char *const *args);

static void tty_start(struct tty_run *t, unsigned short rows, unsigned short cols,
		      const char *const *args)
{
	tty_start_verb(t, rows, cols, "run", args);
}

/* ward VERB ARGS... ("run" or "shell") */
static void tty_start_verb(struct tty_run *t, unsigned short rows, unsigned short cols,
			   const char *verb, const char *const *args)
{
	struct winsize ws = { .ws_row = rows, .ws_col = cols };
	const char *argv[24];
	int n = 0;

	memset(t, 0, sizeof(*t));
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(t->master, 0);
	ck_assert_int_eq(grantpt(t->master), 0);
	ck_assert_int_eq(unlockpt(t->master), 0);
	ck_assert_int_eq(ioctl(t->master, TIOCSWINSZ, &ws), 0);
	ck_assert_int_eq(tcgetattr(t->master, &t->before), 0);
	argv[n++] = ward;
	argv[n++] = verb;
	argv[n++] = harness_fences_policy_opt();
	argv[n++] = "-C";
	argv[n++] = workdir;
	while (*args && n < 23)
		argv[n++] = *args++;
	argv[n] = NULL;
	t->pid = fork();
	ck_assert_int_ge(t->pid, 0);
	if (t->pid == 0) {
		int slave;

		setsid();
		slave = open(ptsname(t->master), O_RDWR);
		if (slave < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
			_exit(126);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		if (slave > 2)
			close(slave);
		execv(ward, (char *const *)argv);
		_exit(127);
	}
}

/* Read until marker shows (after `from`), or end of file when marker is
 * NULL. Returns whether it did. */
static bool tty_wait_ms(struct tty_run *t, const char *marker, int ms)
{
	for (;;) {
		struct pollfd pf = { t->master, POLLIN, 0 };
		ssize_t n;

		if (marker && strstr(t->seen, marker))
			return true;
		if (poll(&pf, 1, ms) <= 0)
			return false;
		n = read(t->master, t->seen + t->got, sizeof(t->seen) - 1 - t->got);
		if (n <= 0)
			return marker == NULL; /* EIO: ward and all on the slave are gone */
		t->got += (size_t)n;
		t->seen[t->got] = '\0';
	}
}

static bool tty_wait(struct tty_run *t, const char *marker)
{
	return tty_wait_ms(t, marker, 60000);
}

static void tty_type(struct tty_run *t, const char *keys)
{
	ck_assert_int_eq(write(t->master, keys, strlen(keys)), (ssize_t)strlen(keys));
}

/* ward's exit, the output read meanwhile (the test may hold the slave
 * open, so end of file is not the event to wait for). */
static int tty_end(struct tty_run *t)
{
	int pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0), status;
	struct pollfd pf[2] = { { t->master, POLLIN, 0 }, { pidfd, POLLIN, 0 } };

	ck_assert_int_ge(pidfd, 0);
	pf[1].fd = pidfd;
	for (;;) {
		ssize_t n;

		ck_assert_msg(poll(pf, 2, 60000) > 0, "ward did not end (%s); seen:\n%s", phase,
			      t->seen);
		if (pf[0].revents & POLLIN) {
			n = read(t->master, t->seen + t->got, sizeof(t->seen) - 1 - t->got);
			if (n > 0) {
				t->got += (size_t)n;
				t->seen[t->got] = '\0';
				continue;
			}
		}
		if (pf[1].revents & POLLIN)
			break;
		if (pf[0].revents & (POLLHUP | POLLERR))
			pf[0].fd = -1;
	}
	close(pidfd);
	ck_assert_int_eq(waitpid(t->pid, &status, 0), t->pid);
	return status;
}

static void assert_same_modes(const struct termios *a, const struct termios *b)
{
	ck_assert_msg(a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag &&
			      a->c_cflag == b->c_cflag && a->c_lflag == b->c_lflag &&
			      memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc)) == 0,
		      "the terminal's modes changed: lflag %o -> %o, iflag %o -> %o", a->c_lflag,
		      b->c_lflag, a->c_iflag, b->c_iflag);
}

/* The command's terminal is its own: not the test's pty (device, inode),
 * whose mode and owner stay, and whose modes are as before after
 * `stty raw -echo` inside. The slave is kept open by the test so that its
 * modes can be read after ward ends. */
START_TEST(test_tty_own_terminal)
{
	const char *args[] = { "-c", ATTACK "; stty raw -echo; echo DO""NE", NULL };
	struct tty_run t;
	struct termios after;
	struct stat st, now;
	char *rp = path_in("report"), *report;
	int slave, status;

	tty_start(&t, 24, 80, args);
	slave = open(ptsname(t.master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(slave, 0);
	ck_assert_int_eq(fstat(slave, &st), 0);
	ck_assert_msg(tty_wait(&t, "DONE"), "seen:\n%s", t.seen);
	status = tty_end(&t);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d\n%s", status,
		      t.seen);
	ck_assert_int_eq(tcgetattr(slave, &after), 0);
	assert_same_modes(&t.before, &after);
	/* it asked the terminal nothing: ward asks nothing either (a round
	 * trip, 1 s at a terminal that does not answer) */
	ck_assert_msg(!strstr(t.seen, "\033[c"), "ward asked the terminal; seen:\n%s", t.seen);
	report = slurp(rp);
	ck_assert_msg(strstr(report, "fd 0 "), "no report: %s", report);
	assert_not_host(report, &st, 1);
	ck_assert_int_eq(fstat(slave, &now), 0);
	ck_assert_msg((now.st_mode & 07777) == (st.st_mode & 07777), "terminal mode %o -> %o",
		      st.st_mode & 07777, now.st_mode & 07777);
	ck_assert(now.st_uid == st.st_uid && now.st_gid == st.st_gid);
	free(report);
	free(rp);
	close(slave);
	close(t.master);
}
END_TEST

/* Any node of the host's /dev/pts (ptmx aside) open to every user: what a
 * command's chmod of its terminal would leave, for other users to read
 * what the person types to it. NULL, or the first one's name (static). */
static const char *host_pts_open_to_all(void)
{
	static char name[300];
	struct dirent *e;
	DIR *d = opendir("/dev/pts");
	struct stat st;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		snprintf(name, sizeof(name), "/dev/pts/%s", e->d_name);
		if (strcmp(e->d_name, "ptmx") != 0 && e->d_name[0] != '.' &&
		    stat(name, &st) == 0 && (st.st_mode & 0006)) {
			closedir(d);
			return name;
		}
	}
	closedir(d);
	return NULL;
}

/* The command's terminal is a node of the sandbox's own devpts: chmod and
 * chown of it (through fd 0, /proc/self/fd/0, its name) change nothing of
 * the host's /dev/pts while the command runs. */
START_TEST(test_tty_sandbox_devpts)
{
	const char *args[] = {
		"-c",
		"chmod 666 /proc/self/fd/0; chmod o+rw \"$(tty)\"; chown \"$(id -u)\" /proc/self/fd/1; "
		"echo \"T=$(tty)\"; stat -L -c 'M=%a' /proc/self/fd/0; echo RE''ADY; read x; echo got $x",
		NULL
	};
	const char *open_to_all;
	struct tty_run t;
	int status;

	ck_assert_msg(!host_pts_open_to_all(), "before: %s", host_pts_open_to_all());
	tty_start(&t, 24, 80, args);
	ck_assert_msg(tty_wait(&t, "READY"), "seen:\n%s", t.seen);
	open_to_all = host_pts_open_to_all();
	tty_type(&t, "go\r");
	ck_assert_msg(tty_wait(&t, "got go"), "seen:\n%s", t.seen);
	status = tty_end(&t);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d\n%s", status,
		      t.seen);
	ck_assert_msg(!open_to_all, "the command's chmod reached the host's %s; seen:\n%s",
		      open_to_all, t.seen);
	/* it did change its own: the first of a devpts of its own */
	ck_assert_msg(strstr(t.seen, "T=/dev/pts/0\r\n") && strstr(t.seen, "M=666\r\n"),
		      "seen:\n%s", t.seen);
	close(t.master);
}
END_TEST

/* The window size is seen inside, and followed when it changes. */
START_TEST(test_tty_winsize)
{
	const char *args[] = { "-c",
			       "trap 'echo NOW $(stty size); exit 0' WINCH; echo SIZE $(stty size); "
			       "echo RE''ADY; while :; do sleep 1; done",
			       NULL };
	struct winsize ws = { .ws_row = 41, .ws_col = 99 };
	struct tty_run t;
	int status;

	tty_start(&t, 37, 121, args);
	ck_assert_msg(tty_wait(&t, "READY"), "seen:\n%s", t.seen);
	ck_assert_msg(strstr(t.seen, "SIZE 37 121"), "seen:\n%s", t.seen);
	ck_assert_int_eq(ioctl(t.master, TIOCSWINSZ, &ws), 0);
	ck_assert_msg(tty_wait(&t, "NOW 41 99"), "seen:\n%s", t.seen);
	status = tty_end(&t);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	close(t.master);
}
END_TEST

/* ^C typed reaches the command's foreground process group, as a signal
 * from its own terminal; ward goes on and returns the command's status. */
START_TEST(test_tty_ctrl_c)
{
	const char *args[] = { "-c",
			       "trap 'echo GOT''INT; exit 7' INT; echo RE''ADY; sleep 100 & wait",
			       NULL };
	/* one segment that says it runs: between two segments the terminal's
	 * foreground is the one that ended until the next takes it */
	const char *noshell[] = { "--no-shell", "-c", "true ; sh -c 'echo RE''ADY; exec sleep 100'",
				  NULL };
	struct tty_run t;
	int status;

	tty_start(&t, 24, 80, args);
	ck_assert_msg(tty_wait(&t, "READY"), "seen:\n%s", t.seen);
	tty_type(&t, "\x03");
	ck_assert_msg(tty_wait(&t, "GOTINT"), "seen:\n%s", t.seen);
	status = tty_end(&t);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %d\n%s", status,
		      t.seen);
	close(t.master);

	/* --no-shell: ward's own chain runner puts each pipeline in the
	 * terminal's foreground */
	tty_start(&t, 24, 80, noshell);
	ck_assert_msg(tty_wait(&t, "READY"), "seen:\n%s", t.seen);
	tty_type(&t, "\x03");
	status = tty_end(&t);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT, "status %d\n%s",
		      status, t.seen);
	close(t.master);

	/* and reads from it in the foreground (in the background it would
	 * be stopped by SIGTTIN) */
	{
		const char *reads[] = { "--no-shell", "-c",
					"true ; sh -c 'echo RE''ADY; exec head -n 1'", NULL };

		tty_start(&t, 24, 80, reads);
		ck_assert_msg(tty_wait(&t, "READY"), "seen:\n%s", t.seen);
		tty_type(&t, "typed line\n");
		status = tty_end(&t);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d\n%s",
			      status, t.seen);
		close(t.master);
	}
}
END_TEST

/* Each key reaches the command as typed, not when the host terminal's line
 * is done: the host side is raw while the command runs. */
START_TEST(test_tty_keys_as_typed)
{
	const char *args[] = { "-c",
			       "stty -icanon min 1; echo RE''ADY; head -c 1 >key; echo GOT $(cat key)",
			       NULL };
	struct tty_run t;
	int status;

	tty_start(&t, 24, 80, args);
	ck_assert_msg(tty_wait(&t, "READY"), "seen:\n%s", t.seen);
	tty_type(&t, "x");
	ck_assert_msg(tty_wait(&t, "GOT x"), "seen:\n%s", t.seen);
	status = tty_end(&t);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	close(t.master);
}
END_TEST

/* An interactive shell: what is typed is echoed and run. */
START_TEST(test_tty_interactive_sh)
{
	const char *args[] = { "--", "sh", NULL };
	struct tty_run t;
	int status;

	tty_start(&t, 24, 80, args);
	tty_type(&t, "echo h''i; exit\n");
	/* the echo says h''i; only the shell's output says hi */
	ck_assert_msg(tty_wait(&t, "hi\r\n"), "seen:\n%s", t.seen);
	status = tty_end(&t);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d\n%s", status,
		      t.seen);
	close(t.master);
}
END_TEST

/* The host terminal is restored however ward ends: a signal to ward
 * (forwarded to the command), and the timeout. */
START_TEST(test_tty_restored_on_signals)
{
	/* the trap: a signal between two commands of the shell is acted on
	 * at the next (a bare `sleep` would outlive one that came before it) */
	const char *args[] = { "-c",
			       "trap 'exit 3' INT TERM HUP; stty raw -echo; echo RE''ADY; "
			       "while :; do sleep 1; done",
			       NULL };
	const char *timeout[] = { "--timeout", "1", "-c", "stty raw -echo; sleep 100", NULL };
	const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct termios after;
	struct tty_run t;
	size_t k;
	int slave, status;

	for (k = 0; k <= sizeof(sigs) / sizeof(sigs[0]); k++) {
		bool by_timeout = k == sizeof(sigs) / sizeof(sigs[0]);

		phase = by_timeout ? "timeout" : strsignal(sigs[k]);

		tty_start(&t, 24, 80, by_timeout ? timeout : args);
		slave = open(ptsname(t.master), O_RDWR | O_NOCTTY | O_CLOEXEC);
		ck_assert_int_ge(slave, 0);
		if (!by_timeout) {
			ck_assert_msg(tty_wait(&t, "READY"), "seen:\n%s", t.seen);
			kill(t.pid, sigs[k]);
		}
		status = tty_end(&t);
		ck_assert_msg(by_timeout ? WIFEXITED(status) && WEXITSTATUS(status) == 124 :
					   status != 0,
			      "case %zu: status %d\n%s", k, status, t.seen);
		ck_assert_int_eq(tcgetattr(slave, &after), 0);
		assert_same_modes(&t.before, &after);
		close(slave);
		close(t.master);
	}
}
END_TEST

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What the host's terminal answers to queries the command wrote (here a
 * cursor position report, then "typed" text), arriving after the command
 * ended, is not left for the host's next reader (its shell): ward asks the
 * terminal for its device attributes and drops what comes before that
 * answer; and a terminal that never answers costs a short wait, not a
 * hang, with what it sent dropped all the same. */
START_TEST(test_tty_late_answers_dropped)
{
	const char *args[] = { "-c", "printf 'RE''ADY\\033[6n'", NULL };
	const char late[] = "\033[12;1Recho INJECTED\r";
	struct tty_run t;
	int answers;

	for (answers = 1; answers >= 0; answers--) {
		struct pollfd pf;
		struct termios after;
		long long start;
		int slave, status;

		phase = answers ? "a terminal that answers" : "a terminal that does not";
		tty_start(&t, 24, 80, args);
		slave = open(ptsname(t.master), O_RDWR | O_NOCTTY | O_CLOEXEC);
		ck_assert_int_ge(slave, 0);
		ck_assert_msg(tty_wait(&t, "READY\033[6n"), "%s: seen:\n%s", phase, t.seen);
		/* ward's own question comes once the command is gone (the
		 * late answer goes all the same: what stays queued is the test) */
		tty_wait_ms(&t, "\033[c", 2000);
		start = now_ms();
		tty_type(&t, late);
		if (answers)
			tty_type(&t, "\033[?62;22c");
		status = tty_end(&t);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d\n%s",
			      phase, status, t.seen);
		ck_assert_msg(now_ms() - start < 5000, "%s: ward waited %lld ms", phase,
			      now_ms() - start);
		ck_assert_int_eq(tcgetattr(slave, &after), 0);
		assert_same_modes(&t.before, &after);
		/* the slave is canonical again: a whole line would be readable */
		pf = (struct pollfd){ .fd = slave, .events = POLLIN };
		ck_assert_msg(poll(&pf, 1, 300) == 0, "%s: the late answer is still queued", phase);
		close(slave);
		close(t.master);
	}
}
END_TEST

/* A late answer left queued after `ward run ARGS` at a terminal that answers
 * ward's own question: what the host's shell would read. Returns whether
 * anything stayed queued. first: typed as the late answers, before the
 * answer to ward's question. */
static bool tty_late_left(const char *const *args, const char *ready, const char *first)
{
	struct tty_run t;
	struct pollfd pf;
	int slave, status;
	bool left;

	tty_start(&t, 24, 80, args);
	slave = open(ptsname(t.master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(slave, 0);
	ck_assert_msg(tty_wait(&t, ready), "%s: seen:\n%s", phase, t.seen);
	/* ward's question, if it asks (it asks at once) */
	for (size_t from = (size_t)(strstr(t.seen, ready) - t.seen) + strlen(ready);
	     !strstr(t.seen + from, "\033[c");) {
		struct pollfd wp = { t.master, POLLIN, 0 };
		ssize_t n;

		if (poll(&wp, 1, 1000) <= 0)
			break;
		n = read(t.master, t.seen + t.got, sizeof(t.seen) - 1 - t.got);
		if (n <= 0)
			break;
		t.got += (size_t)n;
		t.seen[t.got] = '\0';
	}
	tty_type(&t, first);
	tty_type(&t, "\033[?62;22c");
	status = tty_end(&t);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d\n%s", phase,
		      status, t.seen);
	pf = (struct pollfd){ .fd = slave, .events = POLLIN };
	left = poll(&pf, 1, 300) != 0;
	close(slave);
	close(t.master);
	return left;
}

/* A query with a control character inside it (the terminal carries it out
 * and goes on with the sequence: ECMA-48 and every VT parser) asks all the
 * same: its late answer is not left for the host's shell. */
START_TEST(test_tty_query_with_control_inside)
{
	const char *args[] = { "-c", "printf 'RE''ADY\\033[\\r6n'", NULL };

	phase = "CSI CR 6 n";
	ck_assert_msg(!tty_late_left(args, "READY\033[\r6n", "\033[12;1Recho INJECTED\r"),
		      "the late answer is left for the host's shell");
}
END_TEST

/* The command's own device-attributes question, answered late, is not the
 * answer to ward's: the answers after it (a title read back with a line in
 * it) are not left for the host's shell. */
START_TEST(test_tty_command_da1_not_wards)
{
	const char *args[] = { "-c", "printf 'RE''ADY\\033[c\\033[21t'", NULL };

	phase = "the command's DA1";
	ck_assert_msg(!tty_late_left(args, "READY\033[c\033[21t",
				     "\033[?62;22c\033]lecho INJECTED\r\033\\"),
		      "the late answer is left for the host's shell");
}
END_TEST

/* ward shell at the test's terminal: `line` run, `shown` awaited in its
 * output, then `typed` sent (the terminal's late answers and a line of the
 * person's own, `echo FINE`). Whether the answers made "injected". */
static bool shell_injected(const char *line, const char *shown, const char *typed)
{
	const char *args[] = { NULL };
	struct tty_run t;
	char *made = path_in("injected");
	bool injected;

	tty_start_verb(&t, 24, 80, "shell", args);
	ck_assert_msg(tty_wait(&t, "$ "), "no prompt; seen:\n%s", t.seen);
	tty_type(&t, line);
	ck_assert_msg(tty_wait(&t, shown), "seen:\n%s", t.seen);
	tty_wait_ms(&t, "\033[c", 2000); /* ward's question (or the command's) */
	tty_type(&t, typed);
	ck_assert_msg(tty_wait(&t, "FINE"), "seen:\n%s", t.seen);
	usleep(300 * 1000); /* (this terminal does not answer: keys meanwhile would go) */
	tty_type(&t, "exit\r");
	tty_end(&t);
	injected = access(made, F_OK) == 0;
	free(made);
	close(t.master);
	return injected;
}

/* The same in ward shell, whose next reader is its own line editor: text
 * inside a late answer (a title read back) does not land on the next line,
 * while keys typed meanwhile do. */
START_TEST(test_tty_shell_late_answers_dropped)
{
	ck_assert_msg(!shell_injected("printf 'RE''ADY\\033[6n'\r", "READY\033[6n",
				      "\033[12;1R\033]ltouch injected; \033\\echo F''INE\r"
				      "\033[?62;22c"),
		      "the late answer ran");
}
END_TEST

/* ward shell: the command's own DA1 question, answered late, is not the
 * answer to ward's; a title read back after it (";touch injected" and a
 * carriage return) does not run as ward shell's next line. */
START_TEST(test_tty_shell_command_da1_not_wards)
{
	ck_assert_msg(!shell_injected("printf 'RE''ADY\\033[c\\033[21t'\r", "READY\033[c\033[21t",
				      "\033[?62;22c\033]l;touch injected\r\033\\echo F''INE\r"
				      "\033[?62;22c"),
		      "the late answer ran");
}
END_TEST

/* Output reaching the terminal through a pipe, where the command cannot read
 * the terminal: with only stdout the terminal (stdin elsewhere), and with
 * ward in the background of the terminal (`ward run ... &`, stdin the
 * terminal too), where ward cannot read it either. The terminal's answers
 * would be left for the host's shell: the queries are cut on the way, the
 * text around them kept. */
static void pipe_queries_cut(const char *script, bool err_devtty)
{
	const char *argv[] = { ward, "run", harness_fences_policy_opt(), "-C", workdir, "-c",
			       script, NULL };

	for (int background = 0; background < 2; background++) {
		struct ward_tty_scan q = { 0 };
		struct tty_run t;
		int status;

		memset(&t, 0, sizeof(t));
		phase = background ? "in the background" : "stdout only";
		t.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		ck_assert_int_ge(t.master, 0);
		ck_assert_int_eq(grantpt(t.master), 0);
		ck_assert_int_eq(unlockpt(t.master), 0);
		t.pid = fork();
		ck_assert_int_ge(t.pid, 0);
		if (t.pid == 0) {
			int tty, null = open("/dev/null", O_RDONLY);
			pid_t job;

			setsid();
			tty = open(ptsname(t.master), O_RDWR);
			if (tty < 0 || null < 0 || ioctl(tty, TIOCSCTTY, 0) < 0)
				_exit(126);
			dup2(background ? tty : null, 0);
			dup2(tty, 1);
			dup2(err_devtty ? open("/dev/tty", O_RDWR) : tty, 2);
			if (!background) {
				execv(ward, (char *const *)argv);
				_exit(127);
			}
			/* a job of this session's, not its foreground */
			job = fork();
			if (job == 0) {
				setpgid(0, 0);
				execv(ward, (char *const *)argv);
				_exit(127);
			}
			setpgid(job, job);
			if (job < 0 || waitpid(job, &status, 0) != job)
				_exit(125);
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 124);
		}
		status = tty_end(&t);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d\n%s",
			      phase, status, t.seen);
		ck_assert_msg(strstr(t.seen, "READY") && strstr(t.seen, "Zdone"), "%s: seen:\n%s",
			      phase, t.seen);
		ward_tty_scan(&q, t.seen, t.got);
		ck_assert_msg(!q.asked, "%s: a query reached the terminal:\n%s", phase, t.seen);
		close(t.master);
	}
}

START_TEST(test_tty_pipe_queries_cut)
{
	pipe_queries_cut("printf 'RE''ADY\\033[6n\\033]11;?\\007\\033P$qm\\033\\\\\\033[cZ'; "
			 "echo done",
			 false);
}
END_TEST

/* The same terminal as stdout and stderr through two files (2>/dev/tty),
 * relayed apart: a query begun on one and ended on the other is one to the
 * terminal. */
START_TEST(test_tty_pipe_queries_cut_across)
{
	pipe_queries_cut("printf 'RE''ADY\\033]11;'; sleep 0.2; printf '?\\007' >&2; sleep 0.2; "
			 "printf '\\033[6'; sleep 0.2; printf 'nZ' >&2; echo done",
			 true);
}
END_TEST

/* A terminal told to send 8-bit controls (S8C1T, ESC SP G: xterm's, in
 * UTF-8 as C2 9x) answers ward's question and the command's in that form:
 * a title read back is still a report, not keys for ward shell's next line,
 * and the answer to ward's question still ends the wait. */
START_TEST(test_tty_shell_8bit_answers)
{
	const char *args[] = { NULL };
	struct tty_run t;
	char *made = path_in("injected");
	long long start;

	tty_start_verb(&t, 24, 80, "shell", args);
	ck_assert_msg(tty_wait(&t, "$ "), "no prompt; seen:\n%s", t.seen);
	tty_type(&t, "printf 'RE''ADY\\033 G\\033[21t'\r");
	ck_assert_msg(tty_wait(&t, "READY\033 G\033[21t"), "seen:\n%s", t.seen);
	tty_wait_ms(&t, "READY\033 G\033[21t\033[c", 1000);
	start = now_ms();
	tty_type(&t, "\302\235l;touch injected\r\302\234echo F''INE\r\302\233?62;22c");
	ck_assert_msg(tty_wait(&t, "FINE"), "seen:\n%s", t.seen);
	ck_assert_msg(now_ms() - start < 200, "the 8-bit answer to ward's question was not seen");
	usleep(300 * 1000);
	tty_type(&t, "exit\r");
	tty_end(&t);
	ck_assert_msg(access(made, F_OK) < 0, "the late answer ran; seen:\n%s", t.seen);
	free(made);
	close(t.master);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fds");
	TCase *tc = harness_tcase(s, "files", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_host_files);
	tcase_add_test(tc, test_host_pipes_and_null);
	tcase_add_test(tc, test_pipe_stdin_passes);
	tcase_add_test(tc, test_session_init);
	tcase_add_test(tc, test_merged_order);
	tc = harness_tcase(s, "tty", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tty_own_terminal);
	tcase_add_test(tc, test_tty_sandbox_devpts);
	tcase_add_test(tc, test_tty_winsize);
	tcase_add_test(tc, test_tty_ctrl_c);
	tcase_add_test(tc, test_tty_interactive_sh);
	tcase_add_test(tc, test_tty_keys_as_typed);
	tcase_add_test(tc, test_tty_restored_on_signals);
	tcase_add_test(tc, test_tty_late_answers_dropped);
	tcase_add_test(tc, test_tty_shell_late_answers_dropped);
	tcase_add_test(tc, test_tty_query_with_control_inside);
	tcase_add_test(tc, test_tty_command_da1_not_wards);
	tcase_add_test(tc, test_tty_shell_command_da1_not_wards);
	tcase_add_test(tc, test_tty_pipe_queries_cut);
	tcase_add_test(tc, test_tty_pipe_queries_cut_across);
	tcase_add_test(tc, test_tty_shell_8bit_answers);
	return harness_main(s);
}
