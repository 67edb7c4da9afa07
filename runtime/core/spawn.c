/* spawn.c — one clone3() into the sandbox's namespaces. */
#include <errno.h>
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

pid_t ward_spawn(struct spawn_plan *p, int *pidfd, struct ward_error **err)
{
	struct clone_args args;
	bool sandboxed = p->cfg->mode != WARD_SANDBOX_OFF;
	pid_t pid;

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
	/* No stack given: the child runs on a copy of ours, as after fork(). */
	pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		int e = errno;

		if (e == EPERM || e == ENOSPC || e == EUSERS)
			return ward_error_make(err, e,
					       "clone3 into new namespaces (see 'ward doctor')");
		if (p->cgroup_fd >= 0)
			return ward_error_make(err, e, "clone3 into the command's cgroup");
		return ward_error_make(err, e, "clone3");
	}
	if (pid == 0) {
		if (sandboxed)
			ward_init_main(p);
		ward_direct_main(p);
	}
	return pid;
}
