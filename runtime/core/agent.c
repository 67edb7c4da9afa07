/* core/agent.c — init of a long-lived session sandbox, after setup.
 *
 * It receives one message per command on the control socket (a SEQPACKET
 * socket; struct agent_msg and five descriptors: a memfd holding the script
 * and the environment, the command's stdout, stderr, its fd 3, and the report
 * pipe) and forks a leader for it. The leader is a child subreaper: every
 * process the command starts, even one that double-forks or calls setsid(),
 * ends up its child when its parent dies. It forks the session's shell (sh
 * or bash) for the command, waits for it or for the deadline, then kills every descendant there is —
 * repeating until none is left — and reports the status. So nothing a command
 * started outlives it, as with a fresh sandbox whose PID namespace dies.
 *
 * Like init.c, this runs in a copy of a possibly threaded supervisor: only
 * system calls, no malloc or stdio. Forks are raw clone() calls, since libc's
 * fork() takes locks another thread of the supervisor may have held. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"

_Static_assert(AGENT_NFDS <= WARD_FDS_MAX, "a message's descriptors fit ward_send_fds()");

static pid_t raw_fork(void)
{
	return (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
}

struct linux_dirent64_ {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* SIGKILL every child of ours; returns how many. */
static int kill_children(void)
{
	char buf[4096];
	pid_t self = getpid();
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), killed = 0;
	long n;

	if (proc < 0)
		return 0;
	while ((n = syscall(SYS_getdents64, proc, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n) {
			struct linux_dirent64_ *d = (struct linux_dirent64_ *)(buf + off);
			pid_t pid = 0;
			const char *c;

			off += d->d_reclen;
			if (d->d_name[0] < '1' || d->d_name[0] > '9')
				continue;
			for (c = d->d_name; *c >= '0' && *c <= '9'; c++)
				pid = pid * 10 + (*c - '0');
			if (*c || pid == self)
				continue;
			if (ward_proc_ppid(proc, d->d_name) == self && kill(pid, SIGKILL) == 0)
				killed++;
		}
	}
	close(proc);
	return killed;
}

/* How many children we have (none killed). */
static int count_children(void)
{
	char buf[4096];
	pid_t self = getpid();
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n_kids = 0;
	long n;

	if (proc < 0)
		return 0;
	while ((n = syscall(SYS_getdents64, proc, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n) {
			struct linux_dirent64_ *d = (struct linux_dirent64_ *)(buf + off);

			off += d->d_reclen;
			if (d->d_name[0] >= '1' && d->d_name[0] <= '9' &&
			    ward_proc_ppid(proc, d->d_name) == self)
				n_kids++;
		}
	}
	close(proc);
	return n_kids;
}

/* Kill and reap until no child is left: a process killed hands its own
 * children to us (the subreaper), which the next round kills. */
static void kill_all_descendants(void)
{
	struct timespec pause = { 0, 1000000 };

	for (;;) {
		int status;
		pid_t r;

		kill_children();
		while ((r = waitpid(-1, &status, WNOHANG)) > 0)
			;
		if (r < 0 && errno == ECHILD)
			return;
		nanosleep(&pause, NULL);
	}
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A shell of a command: started for it (cold), or ahead of it (a spare,
 * waiting for its script). The read ends of its stdout and stderr go to the
 * supervisor with the command (AGENT_FD_REPLY). */
struct shell {
	pid_t pid;
	int sock;         /* our end of its fd 3: SO_PASSCRED, shut for writing */
	int out, err;     /* read ends of its stdout, stderr */
	int go, script;   /* a spare's: the socket it waits on (its fd 5), the memfd
			   * it then reads its script from (its fd 4); else -1 */
};

/* vfork: no page tables copied; the child only makes system calls on this
 * frame before execve. In its own function so no caller's variable is live
 * across the vfork. to[k] becomes descriptor k (1 … n-1; 0 is /dev/null);
 * each is above n, so no dup2 overwrites one still to be copied. */
__attribute__((noinline)) static pid_t start_shell(const char *shell, char **argv, char **envp,
						   const int *to, int n)
{
	pid_t pid = vfork();

	if (pid == 0) {
		sigset_t none;
		int sig, null, k;

		for (sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0)
			_exit(125);
		for (k = 1; k < n; k++)
			if (dup2(to[k], k) < 0)
				_exit(125);
		execve(shell, argv, envp);
		_exit(127);
	}
	return pid;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void shell_release(struct shell *sh)
{
	close_fd(&sh->sock);
	close_fd(&sh->out);
	close_fd(&sh->err);
	close_fd(&sh->go);
	close_fd(&sh->script);
}

/* fd moved above 9 (kept close-on-exec), so start_shell's dup2 calls never
 * overwrite one another's source. */
static int high(int *fd)
{
	int h = fcntl(*fd, F_DUPFD_CLOEXEC, 10);

	close(*fd);
	*fd = h;
	return h;
}

/* Start shell (argv, envp) with a fresh stdout, stderr and fd 3; for a spare
 * also the memfd and the socket it waits on (fds 4, 5). 0, or -1 with errno. */
static int shell_start(struct shell *sh, const char *shell, char **argv, char **envp, bool spare)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, sv[2] = { -1, -1 }, go[2] = { -1, -1 };
	int to[6], on = 1, e;

	memset(sh, 0, sizeof(*sh));
	sh->sock = sh->out = sh->err = sh->go = sh->script = -1;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ||
	    shutdown(sv[0], SHUT_WR) < 0)
		goto fail;
	if (spare && (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) < 0 ||
		      (sh->script = memfd_create("ward-script", MFD_CLOEXEC | MFD_ALLOW_SEALING)) < 0))
		goto fail;
	if (high(&out[1]) < 0 || high(&err[1]) < 0 || high(&sv[1]) < 0 ||
	    (spare && (high(&sh->script) < 0 || high(&go[1]) < 0)))
		goto fail;
	to[1] = out[1];
	to[2] = err[1];
	to[3] = sv[1];
	to[4] = sh->script;
	to[5] = go[1];
	sh->pid = start_shell(shell, argv, envp, to, spare ? 6 : 4);
	if (sh->pid < 0)
		goto fail;
	close(out[1]);
	close(err[1]);
	close(sv[1]);
	if (go[1] >= 0)
		close(go[1]);
	sh->out = out[0];
	sh->err = err[0];
	sh->sock = sv[0];
	sh->go = go[0];
	return 0;
fail:
	e = errno;
	for (int k = 0; k < 2; k++) {
		close_fd(&out[k]);
		close_fd(&err[k]);
		close_fd(&sv[k]);
		close_fd(&go[k]);
	}
	close_fd(&sh->script);
	sh->pid = 0;
	errno = e;
	return -1;
}

/* The shell's report, on its way to the supervisor's pipe: gathered here and
 * written when full or when the shell has ended, so that the supervisor wakes
 * once for a report bash writes a line at a time (`declare -p`, `set +o`: its
 * stdout is line-buffered), not once a line. */
struct side_buf {
	char *buf;
	size_t len, cap;
	bool ok; /* the supervisor still takes it */
};

static void side_flush(struct side_buf *b, int out)
{
	if (b->ok && b->len && ward_write_all(out, b->buf, b->len) < 0)
		b->ok = false;
	b->len = 0;
}

/* What the shell's fd 3 holds now, into b (see leader()). false at end of
 * file: no writer is left. */
static bool relay(int sock, pid_t shell, int out, struct agent_report *rep, struct side_buf *b)
{
	char sink[4096];

	for (;;) {
		union {
			char b[CMSG_SPACE(sizeof(struct ucred))];
			struct cmsghdr align;
		} c;
		struct iovec iov;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = c.b, .msg_controllen = sizeof(c.b) };
		struct cmsghdr *cm;
		pid_t from = 0;
		ssize_t n;

		if (b->len == b->cap)
			side_flush(b, out);
		/* drained whatever happens, so no writer blocks on a full socket;
		 * kept while the supervisor takes it and nothing was forged */
		if (b->ok && !rep->forged)
			iov = (struct iovec){ .iov_base = b->buf + b->len, .iov_len = b->cap - b->len };
		else
			iov = (struct iovec){ .iov_base = sink, .iov_len = sizeof(sink) };
		n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno == EAGAIN;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
				struct ucred u;

				memcpy(&u, CMSG_DATA(cm), sizeof(u));
				from = u.pid;
			}
		if (from != shell) {
			rep->forged = 1;
			b->len = 0; /* none of it is passed on */
		} else if (iov.iov_base != sink) {
			b->len += (size_t)n;
		}
	}
}

/* The script and the environment of a message's memfd: script \0 K=V \0 ...
 * mapped; envp in an anonymous mapping. 0, or -1. */
static int map_blob(int fd, char **script, char ***envp, size_t *n_env)
{
	struct stat st;
	size_t i, off;
	char *blob;

	*n_env = 0;
	if (fstat(fd, &st) < 0 || st.st_size < 2)
		return -1;
	blob = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (blob == MAP_FAILED || blob[st.st_size - 1] != '\0')
		return -1;
	*script = blob;
	for (off = strlen(blob) + 1; off < (size_t)st.st_size; off += strlen(blob + off) + 1)
		(*n_env)++;
	*envp = mmap(NULL, (*n_env + 1) * sizeof(char *), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*envp == MAP_FAILED)
		return -1;
	for (i = 0, off = strlen(blob) + 1; i < *n_env; i++, off += strlen(blob + off) + 1)
		(*envp)[i] = blob + off;
	(*envp)[*n_env] = NULL;
	return 0;
}

/* What a spare bash runs: wait for the go (one byte on fd 5), read the script
 * from fd 4 (a sealed memfd: buffered reads, not a byte a read(2) as from a
 * pipe) and run it as `bash -c SCRIPT` would (eval: the same messages, line
 * numbers, no sourced file). */
static const char spare_boot[] = /* (xtrace's + one deeper: see agent_msg.cold) */
	"read -r -N 1 -u 5 __ward_go 2>/dev/null || exit 125; "
	"IFS= read -r -d '' __ward_s <&4; eval -- \"$__ward_s\"";
/* Written before the script: what the spare was given is not the command's,
 * and its clock starts with the command. One line, so the script's line
 * numbers stay the command's. */
static const char spare_prefix[] = "unset -v __ward_go __ward_s; exec 4<&- 5<&-; SECONDS=0; ";

/* The command runs in sh, started (pid > 0): the read ends of its output go
 * to the supervisor, then it is waited for, its fd 3 relayed, everything left
 * killed at the deadline, and the report written (see ward_session_agent_main). */
__attribute__((noreturn)) static void command(const struct agent_msg *m, const int fds[AGENT_NFDS],
					       struct shell *sh, int sfd)
{
	struct agent_report rep = { .started = 1 };
	struct side_buf side = { .cap = 65536, .ok = true };
	struct signalfd_siginfo si;
	long long deadline = mono_ns() + (long long)m->timeout_s * 1000000000LL;
	bool sock_open = true;
	long long quiet_until = 0;
	int i;

	{
		int two[2] = { sh->out, sh->err };

		ward_send_fds(fds[AGENT_FD_REPLY], "o", 1, two, 2, 0);
	}
	close_fd(&sh->out);
	close_fd(&sh->err);
	side.buf = mmap(NULL, side.cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (side.buf == MAP_FAILED) {
		side.buf = NULL;
		side.cap = 0;
		side.ok = false;
	}
	/* a background job of an earlier command may have stopped the waiting
	 * shell (SIGSTOP): it runs the command all the same */
	kill(sh->pid, SIGCONT);
	if (sh->go >= 0 && write(sh->go, "g", 1) != 1) {
		/* the spare is gone: what it did is reported below */
	}
	close_fd(&sh->go);
	close_fd(&sh->script);
	for (i = 0; i < AGENT_NFDS; i++)
		if (i != AGENT_FD_REPORT && i != AGENT_FD_SIDE)
			close(fds[i]);

	for (;;) {
		long long now = mono_ns(), left = deadline - now;
		/* After a read of fd 3, the socket is left alone for a while
		 * (the shell's exit still wakes us at once): bash writes its
		 * report a line at a time, and a wake-up for each line cost more
		 * than the line. It may fill the socket meanwhile and wait. */
		bool rest = now < quiet_until;
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN },
					{ .fd = sock_open && !rest ? sh->sock : -1, .events = POLLIN } };
		int status, wait_ms = (int)(left / 1000000 + 1);
		pid_t r;

		if (left <= 0) {
			rep.timed_out = 1;
			break;
		}
		if (rest && wait_ms > (int)((quiet_until - now) / 1000000 + 1))
			wait_ms = (int)((quiet_until - now) / 1000000 + 1);
		if (poll(pf, 2, wait_ms) < 0 && errno != EINTR)
			break;
		if (pf[1].revents) {
			sock_open = side.cap ? relay(sh->sock, sh->pid, fds[AGENT_FD_SIDE], &rep, &side) :
					       false;
			quiet_until = mono_ns() + 1000000;
		}
		if (!pf[0].revents)
			continue;
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			;
		while ((r = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0)
			if (r == sh->pid && WIFSTOPPED(status)) {
				/* stopped by someone (a job of an earlier command):
				 * the command goes on, its deadline holds */
				kill(sh->pid, SIGCONT);
			} else if (r == sh->pid) {
				rep.status = status;
				/* what it wrote before it ended, all in the socket */
				if (side.cap)
					relay(sh->sock, sh->pid, fds[AGENT_FD_SIDE], &rep, &side);
				goto done;
			}
	}
done:
	/* At the deadline everything this command started is killed. At the
	 * shell's own exit what it left running — its background jobs, a
	 * server started with & — stays, as in a terminal: handed to init (we
	 * exit, init is the next subreaper up), killed with the sandbox when
	 * the session closes, bounded by the session's cgroup meanwhile. */
	if (rep.timed_out)
		kill_all_descendants();
	else
		rep.kept = count_children();
	if (!rep.forged && side.cap)
		side_flush(&side, fds[AGENT_FD_SIDE]);
	close(fds[AGENT_FD_SIDE]);
	ward_write_all(fds[AGENT_FD_REPORT], &rep, sizeof(rep));
	_exit(0);
}

__attribute__((noreturn)) static void fail(const int fds[AGENT_NFDS])
{
	struct agent_report rep = { .err_no = errno ? errno : EINVAL };

	ward_write_all(fds[AGENT_FD_REPORT], &rep, sizeof(rep));
	_exit(125);
}

static const char *shell_of(const struct agent_msg *m)
{
	/* one of two, never a path the message could point anywhere */
	return strcmp(m->shell, "/bin/bash") == 0 ? "/bin/bash" : "/bin/sh";
}

static int sigchld_fd(void)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	return signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* A command with no spare for it: its shell started now, the script its -c
 * argument (also where a spare could not take it). */
__attribute__((noreturn)) static void cold(const struct agent_msg *m, const int fds[AGENT_NFDS],
					    int sfd)
{
	const char *shell = shell_of(m);
	char *argv[4] = { (char *)shell, (char *)"-c", NULL, NULL };
	struct shell sh;
	char **envp;
	size_t n_env;

	if (sfd < 0 || map_blob(fds[AGENT_FD_BLOB], &argv[2], &envp, &n_env) < 0 ||
	    shell_start(&sh, shell, argv, envp, false) < 0)
		fail(fds);
	command(m, fds, &sh, sfd);
}

static void leader_init(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
}

__attribute__((noreturn)) static void leader(const struct agent_msg *m, const int fds[AGENT_NFDS])
{
	leader_init();
	cold(m, fds, sigchld_fd());
}

/* The spare's script: prefix and script into its memfd, sealed, then read
 * back. A process of the sandbox may reach the memfd (/proc/PID/fd/4 of the
 * spare) and write it before the seals; what the spare will read is then
 * checked to be ours, byte for byte. 0, or -1: the spare is not used. */
static int spare_load(struct shell *sh, const char *script)
{
	size_t lp = sizeof(spare_prefix) - 1, ls = strlen(script), off;
	char back[4096];
	struct stat st;

	if (pwrite(sh->script, spare_prefix, lp, 0) != (ssize_t)lp)
		return -1;
	for (off = 0; off < ls;) {
		ssize_t k = pwrite(sh->script, script + off, ls - off, (off_t)(lp + off));

		if (k <= 0)
			return -1;
		off += (size_t)k;
	}
	if (ftruncate(sh->script, (off_t)(lp + ls)) < 0 ||
	    fcntl(sh->script, F_ADD_SEALS,
		  F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
	    fstat(sh->script, &st) < 0 || st.st_size != (off_t)(lp + ls))
		return -1;
	for (off = 0; off < lp + ls;) {
		size_t want = lp + ls - off < sizeof(back) ? lp + ls - off : sizeof(back);
		ssize_t k = pread(sh->script, back, want, (off_t)off);
		size_t j;

		if (k <= 0)
			return -1;
		for (j = 0; j < (size_t)k; j++)
			if (back[j] != (off + j < lp ? spare_prefix[off + j] : script[off + j - lp]))
				return -1;
		off += (size_t)k;
	}
	return 0;
}

static bool same_env(char **a, size_t na, char **b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

/* A spare: the leader of the next command, forked by init when none runs,
 * its bash started already — with the environment of the last command,
 * which the next one's is unless that command changed it — and waiting. So
 * a command does not wait for an exec of bash, its dynamic linking and its
 * locale (most of what a session's command costs beyond its own work). The
 * command's message comes from init on sock. A spare whose bash died, whose
 * environment is not the command's, or whose script could not be sealed as
 * written is killed and the command's shell started cold: its result is the
 * same either way. Init starts at most one spare per command it dispatched,
 * so a spare killed meanwhile costs no loop. */
__attribute__((noreturn)) static void spare(int sock, int blob)
{
	char *argv[4] = { (char *)"/bin/bash", (char *)"-c", (char *)spare_boot, NULL };
	char *unused, **envp, **envp2, *script;
	size_t n_env, n_env2;
	struct shell sh;
	int sfd, fds[AGENT_NFDS];

	leader_init();
	sfd = sigchld_fd();
	if (sfd < 0 || map_blob(blob, &unused, &envp, &n_env) < 0)
		_exit(0);
	close(blob);
	if (shell_start(&sh, argv[0], argv, envp, true) < 0)
		_exit(0);
	for (bool dead = false;;) {
		struct pollfd pf[2] = { { .fd = sock, .events = POLLIN },
					{ .fd = sfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		struct agent_msg m;
		size_t nfds;
		int status;
		ssize_t n;

		if (poll(pf, 2, -1) < 0)
			continue;
		if (pf[1].revents) {
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			if (!dead && waitpid(sh.pid, &status, WNOHANG) == sh.pid) {
				/* killed idle: no spare (init sees us end) — unless the
				 * command came at that moment: it gets a shell cold */
				if (!(pf[0].revents & POLLIN))
					_exit(0);
				dead = true;
			}
		}
		if (!pf[0].revents)
			continue;
		n = ward_recv_fds(sock, &m, sizeof(m), fds, AGENT_NFDS, &nfds, 0);
		if (n != (ssize_t)sizeof(m) || nfds != AGENT_NFDS)
			_exit(0); /* init closed it, or a message it never sends */
		close(sock);
		if (!dead && waitpid(sh.pid, &status, WNOHANG) == sh.pid)
			dead = true;
		if (!dead && !m.cold && strcmp(shell_of(&m), "/bin/bash") == 0 &&
		    map_blob(fds[AGENT_FD_BLOB], &script, &envp2, &n_env2) == 0 &&
		    same_env(envp, n_env, envp2, n_env2) && spare_load(&sh, script) == 0)
			command(&m, fds, &sh, sfd);
		if (!dead) { /* once reaped, its pid is no longer ours to signal */
			kill(sh.pid, SIGKILL);
			waitpid(sh.pid, &status, 0);
		}
		shell_release(&sh);
		cold(&m, fds, sfd);
	}
}

void ward_session_agent_main(const struct spawn_plan *p)
{
	sigset_t all, chld;
	int sfd, drain[AGENT_DRAIN_MAX], n_drain = 0;
	/* The spare (see spare()): its pid and our socket to it, or 0 and -1;
	 * the last command's memfd (its environment starts the next spare).
	 * One is due once per command dispatched (spare_due) and started when
	 * that command's leader (running) has ended (want_spare): started at
	 * once, its bash took the CPUs from the command it was to follow — on
	 * two, a /bin/true took half again as long. An agent's next command
	 * comes after the model has read this one's result, long after the
	 * spare is ready; one that comes sooner is no slower than cold, its
	 * message waiting in the spare's socket meanwhile. */
	pid_t spare_pid = 0, running = 0;
	int spare_sock = -1, last_blob = -1;
	bool want_spare = false, spare_due = false;

	/* From here the sandbox lives as long as the control socket: closed by
	 * the session, or by the kernel when the supervisor's process dies.
	 * Not tied to the thread that started it, as PR_SET_PDEATHSIG would. */
	prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		_exit(125);
	close(p->report_fd); /* end of file there: set up, ready */

	for (;;) {
		struct pollfd pf[2 + AGENT_DRAIN_MAX];
		int k;

		if (want_spare && spare_sock < 0 && last_blob >= 0) {
			int sp[2];
			pid_t pid;

			want_spare = false;
			if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0) {
				pid = raw_fork();
				if (pid == 0) {
					close(p->agent_fd);
					close(sfd);
					close(sp[0]);
					for (k = 0; k < n_drain; k++)
						close(drain[k]);
					spare(sp[1], last_blob);
				}
				close(sp[1]);
				if (pid > 0) {
					spare_pid = pid;
					spare_sock = sp[0];
				} else {
					close(sp[0]);
				}
			}
		}

		pf[0] = (struct pollfd){ .fd = p->agent_fd, .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (k = 0; k < n_drain; k++)
			pf[2 + k] = (struct pollfd){ .fd = drain[k], .events = POLLIN };
		if (poll(pf, (nfds_t)(2 + n_drain), -1) < 0)
			continue;
		/* a finished command's output its jobs still write: dropped */
		for (k = n_drain - 1; k >= 0; k--) {
			char sink[4096];

			if (!pf[2 + k].revents)
				continue;
			if (read(drain[k], sink, sizeof(sink)) > 0)
				continue;
			close(drain[k]);
			drain[k] = drain[--n_drain];
		}
		if (pf[1].revents) {
			struct signalfd_siginfo si;
			int status;

			pid_t r;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			while ((r = waitpid(-1, &status, WNOHANG)) > 0) {
				if (r == running) {
					running = 0;
					want_spare = spare_due && last_blob >= 0;
					spare_due = false;
				}
				if (r == spare_pid) {
					/* ended idle: its bash was killed */
					spare_pid = 0;
					close(spare_sock);
					spare_sock = -1;
				}
			}
		}
		if (pf[0].revents) {
			struct agent_msg m;
			int fds[AGENT_NFDS], i;
			size_t got = 0;
			ssize_t n = ward_recv_fds(p->agent_fd, &m, sizeof(m), fds, AGENT_NFDS, &got, 0);
			int nfds = (int)got;

			if (n < 0 && errno == EAGAIN)
				continue;
			if (n <= 0)
				_exit(0); /* the supervisor closed the session */
			if (n == (ssize_t)sizeof(m) && m.magic == AGENT_MAGIC && nfds == AGENT_NFDS &&
			    m.timeout_s > 0) {
				pid_t pid = 0;

				/* to the spare, or to a leader started now */
				if (spare_sock >= 0) {
					if (ward_send_fds(spare_sock, &m, sizeof(m), fds, AGENT_NFDS, 0) ==
					    (ssize_t)sizeof(m))
						pid = spare_pid;
					close(spare_sock);
					spare_sock = -1;
					spare_pid = 0;
				}
				if (pid == 0) {
					pid = raw_fork();
					if (pid == 0) {
						close(p->agent_fd);
						close(sfd);
						for (k = 0; k < n_drain; k++)
							close(drain[k]);
						leader(&m, fds);
					}
				}
				if (strcmp(m.shell, "/bin/bash") == 0) {
					if (last_blob >= 0)
						close(last_blob);
					last_blob = fcntl(fds[AGENT_FD_BLOB], F_DUPFD_CLOEXEC, 3);
					spare_due = last_blob >= 0;
				}
				running = pid;
			}
			if (n == (ssize_t)sizeof(m) && m.magic == AGENT_DRAIN && nfds <= AGENT_DRAIN_FDS) {
				/* kept, not closed below; past the bound the jobs'
				 * output pipe is closed (they get EPIPE) */
				for (i = 0; i < nfds && n_drain < AGENT_DRAIN_MAX; i++)
					drain[n_drain++] = fds[i];
				memmove(fds, fds + i, (size_t)(nfds - i) * sizeof(int));
				nfds -= i;
			}
			for (i = 0; i < nfds; i++)
				close(fds[i]);
		}
	}
}
