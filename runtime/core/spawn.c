/* spawn.c — one clone3() into the sandbox's namespaces. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/core/core-internal.h"

static unsigned long long clone_flags(unsigned ns)
{
	unsigned long long f = 0;

	if (ns & WARD_NS_USER)
		f |= CLONE_NEWUSER;
	if (ns & WARD_NS_MOUNT)
		f |= CLONE_NEWNS;
	if (ns & WARD_NS_PID)
		f |= CLONE_NEWPID;
	if (ns & WARD_NS_NET)
		f |= CLONE_NEWNET;
	if (ns & WARD_NS_IPC)
		f |= CLONE_NEWIPC;
	if (ns & WARD_NS_UTS)
		f |= CLONE_NEWUTS;
	if (ns & WARD_NS_CGROUP)
		f |= CLONE_NEWCGROUP;
	return f;
}

uint64_t ward_spawn_nonce(void)
{
	uint64_t n = 0;
	struct timespec ts;

	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) == (ssize_t)sizeof(n))
		return n;
	/* No entropy yet (early boot): something the command cannot predict
	 * closely still beats nothing, and it cannot read init's copy. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&n ^
	       ((uint64_t)getpid() << 48);
}

/* Docker's default seccomp profile (and ward's own, for ward inside ward)
 * answers clone3 with ENOSYS, as glibc expects of an old kernel; once seen,
 * later commands go straight to clone. */
static int clone3_missing;

static pid_t spawn_error(int e, bool into_cgroup, const char *call, struct ward_error **err)
{
	/* Inside a ward sandbox, its seccomp filter (EPERM) and its budget of
	 * no user namespaces (ENOSPC) refuse exactly this. */
	if (e == EPERM || e == ENOSPC || e == EUSERS)
		return ward_error_make(err, e,
				       "%s into new namespaces (see 'ward doctor'; inside a ward "
				       "sandbox, the outer ward needs --allow-nested)",
				       call);
	if (into_cgroup)
		return ward_error_make(err, e, "%s into the command's cgroup", call);
	return ward_error_make(err, e, "%s", call);
}

/* The child of the clone() fallback: in its cgroup before it goes on. */
static void wait_for_cgroup(struct spawn_plan *p)
{
	char c;
	ssize_t n;

	do
		n = read(p->cg_wait_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(WARD_EXIT_OWN_ERROR); /* the supervisor could not move it, or died */
	close(p->cg_wait_fd);
}

/* clone(), with the cgroup placement CLONE_INTO_CGROUP would have made done
 * by the supervisor between the clone and the child's first step. */
static pid_t spawn_clone(struct spawn_plan *p, unsigned long long flags, int *pidfd,
			 struct ward_error **err)
{
	int go[2] = { -1, -1 };
	pid_t pid;

	flags &= ~(unsigned long long)CLONE_INTO_CGROUP;
	if (p->cgroup_fd >= 0) {
		if (pipe2(go, O_CLOEXEC) < 0)
			return ward_error_make(err, errno, "pipe");
		p->cg_wait_fd = go[0];
		/* A cgroup namespace made by the clone would be rooted at the
		 * supervisor's cgroup: init makes it once moved, as on v1. */
		if (flags & CLONE_NEWCGROUP) {
			flags &= ~(unsigned long long)CLONE_NEWCGROUP;
			p->late_cgroupns = true;
		}
	}
	/* No stack: the child runs on a copy of ours, as after fork(). The
	 * pidfd is written where the parent's tid would be (CLONE_PIDFD). */
	pid = (pid_t)syscall(SYS_clone, (unsigned long)(flags | SIGCHLD), NULL, pidfd, NULL, 0UL);
	if (pid < 0) {
		int e = errno;

		if (go[0] >= 0) {
			close(go[0]);
			close(go[1]);
		}
		p->cg_wait_fd = -1;
		return spawn_error(e, go[0] >= 0, "clone", err);
	}
	if (pid == 0) {
		if (go[1] >= 0)
			close(go[1]);
		return 0;
	}
	if (go[0] >= 0) {
		int fd;
		char num[16];
		int len = snprintf(num, sizeof(num), "%d", (int)pid);
		int e = 0;

		close(go[0]);
		p->cg_wait_fd = -1;
		fd = openat(p->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, num, (size_t)len) != len)
			e = errno ? errno : EIO;
		if (fd >= 0)
			close(fd);
		if (!e && write(go[1], "", 1) != 1)
			e = errno;
		close(go[1]);
		if (e) {
			siginfo_t si;

			syscall(SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL, 0);
			waitid((idtype_t)P_PIDFD, (id_t)*pidfd, &si, WEXITED);
			close(*pidfd);
			*pidfd = -1;
			return ward_error_make(err, e, "move the command into its cgroup "
						       "(clone without clone3)");
		}
	}
	return pid;
}

pid_t ward_spawn(struct spawn_plan *p, int *pidfd, struct ward_error **err)
{
	struct clone_args args;
	bool sandboxed = p->cfg->mode != WARD_SANDBOX_OFF;
	pid_t pid = -1;

	p->cg_wait_fd = -1;
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_PIDFD | (sandboxed ? clone_flags(p->ns) : 0);
	if (p->late_cgroupns)
		args.flags &= ~(unsigned long long)CLONE_NEWCGROUP;
	args.pidfd = (unsigned long long)(uintptr_t)pidfd;
	args.exit_signal = SIGCHLD;
	if (p->cgroup_fd >= 0) {
		/* placed in its cgroup before it runs a single instruction */
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (unsigned long long)p->cgroup_fd;
	}
	if (!__atomic_load_n(&clone3_missing, __ATOMIC_RELAXED)) {
		/* No stack given: the child runs on a copy of ours, as after fork(). */
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		if (pid < 0 && errno == ENOSYS)
			__atomic_store_n(&clone3_missing, 1, __ATOMIC_RELAXED);
		else if (pid < 0)
			return spawn_error(errno, p->cgroup_fd >= 0, "clone3", err);
	}
	if (pid < 0) {
		pid = spawn_clone(p, args.flags, pidfd, err);
		if (pid < 0)
			return -1;
		if (pid == 0 && p->cg_wait_fd >= 0)
			wait_for_cgroup(p);
	}
	if (pid == 0) {
		if (sandboxed)
			ward_init_main(p);
		ward_direct_main(p);
	}
	return pid;
}
