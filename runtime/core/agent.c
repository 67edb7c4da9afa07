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

/* The parent pid in /proc/PID/stat, or -1. */
static pid_t stat_ppid(int proc, const char *pid)
{
	char path[48], buf[512], *p;
	ssize_t n;
	pid_t ppid = 0;
	int fd;

	if (strlen(pid) > 20)
		return -1;
	memcpy(path, pid, strlen(pid));
	memcpy(path + strlen(pid), "/stat", 6);
	fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, so from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	for (p += 4; *p >= '0' && *p <= '9'; p++)
		ppid = ppid * 10 + (*p - '0');
	return ppid;
}

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
			if (stat_ppid(proc, d->d_name) == self && kill(pid, SIGKILL) == 0)
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
			    stat_ppid(proc, d->d_name) == self)
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

/* vfork: no page tables copied; the child only makes system calls on this
 * frame before execve. In its own function so no caller's variable is live
 * across the vfork. */
__attribute__((noinline)) static pid_t start_shell(const char *shell, char **argv, char **envp,
						   const int fds[AGENT_NFDS], int side)
{
	pid_t pid = vfork();

	if (pid == 0) {
		sigset_t none;
		int sig, null;

		for (sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(fds[AGENT_FD_OUT], 1) < 0 ||
		    dup2(fds[AGENT_FD_ERR], 2) < 0 || dup2(side, 3) < 0)
			_exit(125);
		execve(shell, argv, envp);
		_exit(127);
	}
	return pid;
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

__attribute__((noreturn)) static void leader(const struct agent_msg *m, const int fds[AGENT_NFDS])
{
	struct agent_report rep = { 0 };
	char *argv[4] = { (char *)"/bin/sh", (char *)"-c", NULL, NULL };
	char **envp;
	char *blob;
	struct stat st;
	size_t i, n_env = 0, off;
	long long deadline;
	struct signalfd_siginfo si;
	sigset_t chld;
	pid_t cmd;
	int sv[2], sfd, on = 1;
	bool sock_open = true;
	struct side_buf side = { .cap = 65536, .ok = true };

	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (fstat(fds[AGENT_FD_BLOB], &st) < 0 || st.st_size < 2)
		goto fail;
	blob = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fds[AGENT_FD_BLOB], 0);
	if (blob == MAP_FAILED || blob[st.st_size - 1] != '\0')
		goto fail;
	/* script \0 K=V \0 K=V \0 ... */
	argv[2] = blob;
	for (off = strlen(blob) + 1; off < (size_t)st.st_size; off += strlen(blob + off) + 1)
		n_env++;
	envp = mmap(NULL, (n_env + 1) * sizeof(char *), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (envp == MAP_FAILED)
		goto fail;
	for (i = 0, off = strlen(blob) + 1; i < n_env; i++, off += strlen(blob + off) + 1)
		envp[i] = blob + off;
	envp[n_env] = NULL;
	side.buf = mmap(NULL, side.cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (side.buf == MAP_FAILED)
		goto fail;

	deadline = mono_ns() + (long long)m->timeout_s * 1000000000LL;
	/* The shell's fd 3 is a stream socket of ours with SO_PASSCRED, which
	 * we relay to the supervisor's pipe: the kernel names the process that
	 * wrote each piece (a read never joins two writers), so only the
	 * shell's own bytes are passed on. Anything else in the sandbox — a
	 * program that took the socket from the shell with pidfd_getfd or
	 * /proc, a background job of this command or an earlier one, another
	 * command's — marks the report forged and nothing more is relayed. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ||
	    shutdown(sv[0], SHUT_WR) < 0)
		goto fail;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		goto fail;
	/* one of two, never a path the message could point anywhere */
	if (strcmp(m->shell, "/bin/bash") == 0)
		argv[0] = (char *)"/bin/bash";
	cmd = start_shell(argv[0], argv, envp, fds, sv[1]);
	if (cmd < 0)
		goto fail;
	close(sv[1]);
	for (i = 0; i < AGENT_NFDS; i++)
		if (i != AGENT_FD_REPORT && i != AGENT_FD_SIDE)
			close(fds[i]);
	rep.started = 1;

	for (;;) {
		long long left = deadline - mono_ns();
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN },
					{ .fd = sock_open ? sv[0] : -1, .events = POLLIN } };
		int status;
		pid_t r;

		if (left <= 0) {
			rep.timed_out = 1;
			break;
		}
		if (poll(pf, 2, (int)(left / 1000000 + 1)) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			sock_open = relay(sv[0], cmd, fds[AGENT_FD_SIDE], &rep, &side);
		if (!pf[0].revents)
			continue;
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			;
		while ((r = waitpid(-1, &status, WNOHANG)) > 0)
			if (r == cmd) {
				rep.status = status;
				/* what it wrote before it ended, all in the socket */
				relay(sv[0], cmd, fds[AGENT_FD_SIDE], &rep, &side);
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
	if (!rep.forged)
		side_flush(&side, fds[AGENT_FD_SIDE]);
	close(fds[AGENT_FD_SIDE]);
	ward_write_all(fds[AGENT_FD_REPORT], &rep, sizeof(rep));
	_exit(0);
fail:
	rep.err_no = errno ? errno : EINVAL;
	ward_write_all(fds[AGENT_FD_REPORT], &rep, sizeof(rep));
	_exit(125);
}

void ward_session_agent_main(const struct spawn_plan *p)
{
	sigset_t all, chld;
	int sfd, drain[AGENT_DRAIN_MAX], n_drain = 0;

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

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			while (waitpid(-1, &status, WNOHANG) > 0)
				;
		}
		if (pf[0].revents) {
			struct agent_msg m;
			union {
				char buf[CMSG_SPACE(sizeof(int) * AGENT_NFDS)];
				struct cmsghdr align;
			} c;
			struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
			struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
					     .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
			struct cmsghdr *cm;
			int fds[AGENT_NFDS], nfds = 0, i;
			ssize_t n = recvmsg(p->agent_fd, &mh, MSG_CMSG_CLOEXEC);

			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				_exit(0); /* the supervisor closed the session */
			cm = CMSG_FIRSTHDR(&mh);
			if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
				if (nfds > AGENT_NFDS)
					nfds = AGENT_NFDS;
				memcpy(fds, CMSG_DATA(cm), (size_t)nfds * sizeof(int));
			}
			if (n == (ssize_t)sizeof(m) && m.magic == AGENT_MAGIC && nfds == AGENT_NFDS &&
			    m.timeout_s > 0) {
				pid_t pid = raw_fork();

				if (pid == 0) {
					close(p->agent_fd);
					close(sfd);
					leader(&m, fds);
				}
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
