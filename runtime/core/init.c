/* init.c — the sandbox's init: PID 1 of the new PID namespace.
 *
 * It sets the sandbox up in the order that works (bubblewrap's order is the
 * model): identity maps, hostname, loopback, the filesystem view and
 * pivot_root, a new session, privileges dropped; then it forks the command,
 * forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 to the command's
 * process group, reaps every process that ends up its child, and when the
 * command exits reports its status and exits — and the kernel kills whatever
 * else is left in the namespace, double-forked daemons included.
 *
 * Everything here is a system call on the prepared plan (core-internal.h).
 * A failure is written to the supervisor as a REPORT_ERROR record with the
 * precise reason, and init exits 125. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/request.h"

/* The child is a private copy of the supervisor: static storage here is its
 * own, and using it avoids malloc. */
static struct ward_error error_storage;
static struct report report_storage;

__attribute__((noreturn)) static void die(const struct spawn_plan *p, const struct ward_error *e)
{
	report_storage.nonce = p->report_nonce;
	report_storage.type = REPORT_ERROR;
	report_storage.status = 0;
	report_storage.err = *e;
	ward_write_all(p->report_fd, &report_storage, sizeof(report_storage));
	_exit(WARD_EXIT_OWN_ERROR);
}

static int write_proc(const char *path, const char *s, struct ward_error **err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || ward_write_all(fd, s, strlen(s)) < 0) {
		ward_error_make(err, errno, "write '%s' to '%s'", s, path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int map_identity(const struct spawn_plan *p, struct ward_error **err)
{
	/* An unprivileged process may map exactly its own ids, and only after
	 * giving up setgroups(); root does the same so both paths are one. */
	if (write_proc("/proc/self/setgroups", "deny", err) < 0 ||
	    write_proc("/proc/self/uid_map", p->uid_map, err) < 0 ||
	    write_proc("/proc/self/gid_map", p->gid_map, err) < 0)
		return -1;
	return 0;
}

/* init is a copy of the host process — ward, or a program embedding libward:
 * its environment, its arguments, its heap (a proxy's bearer token, the
 * host program's own secrets) and its descriptors. Nothing of that may be
 * reachable from inside.
 *
 * Not dumpable: every way into another process's memory or descriptors —
 * /proc/1/{mem,environ,maps,fd,cwd,root,exe,...}, ptrace, process_vm_readv,
 * pidfd_getfd — asks ptrace_may_access(), which for a non-dumpable process
 * wants CAP_SYS_PTRACE in the user namespace its memory belongs to. That is
 * the host's (a clone keeps the parent's mm->user_ns; only execve makes a
 * new one), where the sandbox has no capability at all, root inside or not.
 * The command itself is dumpable again: its execve makes a fresh mm.
 *
 * /proc/1/cmdline is the exception: any process may read it, from the
 * memory the kernel's arg_start..arg_end names, which here is the host's
 * argv (ward's own options, or the embedding program's). PR_SET_MM_MAP
 * points it at a constant instead; it needs no capability (only
 * CONFIG_CHECKPOINT_RESTORE, which every distribution kernel has), and the
 * old strings stay where they were, unreadable. The thread name, readable
 * too, is set to the same.
 *
 * After map_identity(): a non-dumpable process's /proc/self files belong to
 * the host's root, and an unprivileged init could no longer write its own
 * uid_map. Before anything of the command runs. */
static const char init_title[] = "ward-init";

static int hide_host(struct ward_error **err)
{
	struct prctl_mm_map map;
	struct ward_self_stat s;

	prctl(PR_SET_NAME, init_title, 0, 0, 0);
	/* The supervisor's layout, which init shares (a copy of its memory):
	 * as the supervisor read it for its run's names, else read here. */
	if (ward_self_stat(&s, true) < 0)
		return ward_error_make(err, errno, "read '/proc/self/stat'");
	memset(&map, 0, sizeof(map));
	map.start_code = s.start_code;
	map.end_code = s.end_code;
	map.start_stack = s.start_stack;
	map.start_data = s.start_data;
	map.end_data = s.end_data;
	map.start_brk = s.start_brk;
	map.brk = (unsigned long long)syscall(SYS_brk, 0UL);
	map.arg_start = (unsigned long long)(uintptr_t)init_title;
	map.arg_end = map.arg_start + sizeof(init_title);
	map.env_start = map.env_end = map.arg_end;
	map.exe_fd = (uint32_t)-1;
	if (prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&map, sizeof(map), 0) < 0)
		return ward_error_make(err, errno, "hide the host's arguments from /proc/1/cmdline "
						   "(prctl PR_SET_MM_MAP)");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ward_error_make(err, errno, "prctl PR_SET_DUMPABLE");
	return 0;
}

static int loopback_up(struct ward_error **err)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return ward_error_make(err, errno, "socket for loopback");
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP | IFF_RUNNING, ioctl(s, SIOCSIFFLAGS, &ifr) < 0)) {
		ward_error_make(err, errno, "bring up 'lo'");
		close(s);
		return -1;
	}
	close(s);
	return 0;
}

/* The loopback transport: a listening socket on the sandbox's own loopback,
 * handed to the supervisor, which accepts on it as the proxy. */
static int hand_over_listener(const struct spawn_plan *p, struct ward_error **err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(p->net_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 1024) < 0) {
		ward_error_make(err, errno, "the proxy's listener on 127.0.0.1:%u", p->net_port);
		if (s >= 0)
			close(s);
		return -1;
	}
	if (ward_send_fds(p->net_handover_fd, "L", 1, &s, 1, 0) < 0) {
		ward_error_make(err, errno, "hand the proxy's listener over");
		close(s);
		return -1;
	}
	close(s);
	close(p->net_handover_fd);
	return 0;
}

/* The command's terminal, made in the view's own devpts: a chmod or chown
 * of it (fchmod of fd 0, /proc/self/fd/0) changes a node of the sandbox's,
 * not one of the host's /dev/pts that other users could then open. The
 * master goes to the supervisor, which relays it; the slave takes the
 * socket's descriptor number, the one stdio names. */
static int make_pty(const struct spawn_plan *p, struct ward_error **err)
{
	int unlock = 0, m, s;

	m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return ward_error_make(err, errno, "open '/dev/pts/ptmx'");
	s = ioctl(m, TIOCSPTLCK, &unlock) < 0 ? -1 : ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	if (s < 0 || tcsetattr(s, TCSANOW, &p->pty_modes) < 0 ||
	    (p->pty_size.ws_row && ioctl(m, TIOCSWINSZ, &p->pty_size) < 0) ||
	    ward_send_fds(p->pty_sock, "T", 1, &m, 1, 0) < 0 ||
	    dup3(s, p->pty_sock, O_CLOEXEC) < 0) {
		ward_error_make(err, errno, "set up the command's terminal");
		close(m);
		if (s >= 0)
			close(s);
		return -1;
	}
	close(s);
	close(m);
	return 0;
}

/* The veth transport: the supervisor configures the sandbox's end of the
 * pair; the command must not start before its route exists. */
static int wait_for_network(const struct spawn_plan *p, struct ward_error **err)
{
	char c;
	ssize_t n;

	do
		n = read(p->net_go_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	close(p->net_go_fd);
	if (n != 1)
		return ward_error_make(err, n < 0 ? errno : 0,
				       "the supervisor did not set up the network");
	return 0;
}

__attribute__((noreturn)) static void run_command(const struct spawn_plan *p)
{
	sigset_t none;
	int sig, fd;

	/* The supervisor's dispositions (an ignored SIGPIPE, say) must not
	 * leak into the command. */
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (p->tty) {
		/* A session of its own with its terminal: job control, ^C and
		 * ^Z work inside, and a shell that changes the terminal's modes
		 * changes only this one. (A session leader already — sandbox
		 * off — setsid fails and the terminal is taken all the same.) */
		setsid();
		if (ioctl(p->stdio[0], TIOCSCTTY, 0) < 0) {
			dprintf(p->stdio[2], "ward: set up the terminal: %s\n", strerror(errno));
			_exit(WARD_EXIT_OWN_ERROR);
		}
	} else {
		setpgid(0, 0);
	}

	/* -1: the host's stream was /dev/null (run.c): the sandbox's own */
	fd = p->stdio[0] >= 0 && p->stdio[1] >= 0 && p->stdio[2] >= 0 ?
		     -1 :
		     open("/dev/null", O_RDWR | O_CLOEXEC);
	if ((fd < 0 && (p->stdio[0] < 0 || p->stdio[1] < 0 || p->stdio[2] < 0)) ||
	    dup2(p->stdio[0] >= 0 ? p->stdio[0] : fd, 0) < 0 ||
	    dup2(p->stdio[1] >= 0 ? p->stdio[1] : fd, 1) < 0 ||
	    dup2(p->stdio[2] >= 0 ? p->stdio[2] : fd, 2) < 0) {
		dprintf(p->stdio[2], "ward: set up standard streams: %s\n", strerror(errno));
		_exit(WARD_EXIT_OWN_ERROR);
	}
	/* The side channel, as fd 3; dup2 onto itself would keep close-on-exec. */
	if (p->cfg->pass_fd >= 0 &&
	    (p->cfg->pass_fd == 3 ? fcntl(3, F_SETFD, 0) : dup2(p->cfg->pass_fd, 3)) < 0) {
		dprintf(2, "ward: set up fd 3: %s\n", strerror(errno));
		_exit(WARD_EXIT_OWN_ERROR);
	}
	ward_exec_command(p);
}

/* init is a copy of the supervisor, with every descriptor it had open — in a
 * threaded host, other commands' pipes too. Close-on-exec does not help since
 * init never execs; keeping them would hold another command's output open
 * until this sandbox ends. Keep only what the plan names. */
static void close_others(const struct spawn_plan *p)
{
	int keep[12 + SPAWN_MAX_SYSDIRS], n = 0, i, j, lo = 3;

	keep[n++] = p->report_fd;
	keep[n++] = p->life_fd;
	for (i = 0; i < 3; i++)
		keep[n++] = p->stdio[i];
	keep[n++] = p->cfg->pass_fd;
	keep[n++] = p->agent ? p->agent_fd : -1;
	keep[n++] = p->net_handover_fd;
	keep[n++] = p->net_go_fd;
	for (i = 0; i < p->n_sys; i++) /* the idmapped trees, for the view */
		keep[n++] = p->sys[i].fd;
	for (i = 1; i < n; i++) /* insertion sort: a handful of numbers */
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (keep[i] < lo)
			continue;
		if (keep[i] > lo)
			syscall(SYS_close_range, (unsigned)lo, (unsigned)keep[i] - 1, 0u);
		lo = keep[i] + 1;
	}
	syscall(SYS_close_range, (unsigned)lo, ~0u, 0u);
}

/* Whether fd is one the plan hands to init (a host whose fds 0-2 were
 * closed gets pipes there). */
static bool plan_uses(const struct spawn_plan *p, int fd)
{
	for (int i = 0; i < p->n_sys; i++)
		if (fd == p->sys[i].fd)
			return true;
	return fd == p->report_fd || fd == p->life_fd || fd == p->stdio[0] ||
	       fd == p->stdio[1] || fd == p->stdio[2] || fd == p->cfg->pass_fd ||
	       (p->agent && fd == p->agent_fd) || fd == p->net_handover_fd ||
	       fd == p->net_go_fd;
}

/* init's own fds 0-2 are still the supervisor's (the host's terminal or
 * files); the command gets the plan's streams, init keeps none of the host's:
 * an empty pipe of its own in their place. */
static bool drop_host_stdio(const struct spawn_plan *p)
{
	int pp[2], i;

	if (pipe2(pp, O_CLOEXEC) < 0)
		return false;
	close(pp[1]); /* first: it may sit on 0-2 itself */
	for (i = 0; i < 3; i++)
		if (pp[0] != i && !plan_uses(p, i))
			dup2(pp[0], i);
	if (pp[0] > 2)
		close(pp[0]);
	return true;
}

void ward_init_main(const struct spawn_plan *p)
{
	struct ward_error *e = &error_storage;
	sigset_t all;
	pid_t cmd;
	bool own_stdio;
	unsigned skipped = 0;
	int i;

	/* Die with the supervisor, and catch the case where it died before
	 * this was set: its end of the life pipe is then already closed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	close(p->life_wfd);
	{
		struct pollfd pf = { .fd = p->life_fd, .events = POLLIN };

		if (poll(&pf, 1, 0) > 0)
			_exit(WARD_EXIT_OWN_ERROR);
	}
	/* In the v1 cgroups before anything else: what init allocates is
	 * charged there, and nothing of the command can start outside them. */
	if (p->cg_v1 && ward_cgroup_enter_v1(p->cg_v1, &e) < 0)
		die(p, e);
	/* close_others() closes every descriptor from 3 up that the plan does
	 * not hand on, in a few close_range() calls: one by one here only what
	 * it leaves (a placeholder's lock per protected path cost a close()
	 * each, ~3 us in a VM). */
	for (i = 0; i < (int)ARRAY_SIZE(p->close_fds) && p->close_fds[i] >= 0; i++)
		if (p->close_fds[i] < 3 || plan_uses(p, p->close_fds[i]))
			close(p->close_fds[i]);
	for (size_t k = 0; k < p->n_lock_fds; k++)
		if (p->lock_fds[k] < 3 || plan_uses(p, p->lock_fds[k]))
			close(p->lock_fds[k]);
	close_others(p);
	own_stdio = drop_host_stdio(p);
	if (ward_rlimits_apply(&p->rlimits, &e) < 0)
		die(p, e);

	if ((p->ns & WARD_NS_USER) && map_identity(p, &e) < 0)
		die(p, e);
	if (hide_host(&e) < 0)
		die(p, e);
	/* A container engine's seccomp profile (podman's, Docker's) refuses
	 * sethostname to a container without CAP_SYS_ADMIN, whatever namespace
	 * the caller is in. The default name is cosmetic: skipped, and said,
	 * the UTS namespace still new; a name someone asked for is not. */
	if ((p->ns & WARD_NS_UTS) && sethostname(p->hostname, strlen(p->hostname)) < 0) {
		if (errno == EPERM && !p->hostname_asked) {
			skipped |= REPORT_SKIPPED_HOSTNAME;
		} else {
			ward_error_make(&e, errno, "sethostname '%s'%s", p->hostname,
					errno == EPERM ? " (refused by a container's seccomp "
							 "profile? see 'ward doctor')" : "");
			die(p, e);
		}
	}
	if ((p->ns & WARD_NS_NET) && loopback_up(&e) < 0)
		die(p, e);
	if (p->net_handover_fd >= 0 && hand_over_listener(p, &e) < 0)
		die(p, e);
	if (p->view) {
		if (ward_view_build(p, &e) < 0 || (p->pty_sock >= 0 && make_pty(p, &e) < 0))
			die(p, e);
	} else if (chdir(p->workdir) < 0) {
		ward_error_make(&e, errno, "chdir '%s'", p->workdir);
		die(p, e);
	}
	if (p->net_go_fd >= 0 && wait_for_network(p, &e) < 0)
		die(p, e);
	/* The cgroup namespace rooted at the v1 cgroups init moved into, as
	 * clone3 roots it at the v2 one. Before the capabilities go. */
	if (p->late_cgroupns && unshare(CLONE_NEWCGROUP) < 0) {
		ward_error_make(&e, errno, "unshare the cgroup namespace");
		die(p, e);
	}
	/* The namespace's own budgets, while init still holds CAP_SYS_RESOURCE
	 * in it, and after the last namespace init itself makes. */
	if (p->set_ucounts && ward_ucounts_apply(&p->ucounts, &e) < 0)
		die(p, e);
	if (p->view && ward_view_seal_proc(p, &e) < 0)
		die(p, e);
	setsid(); /* no controlling terminal inside: TIOCSTI has nothing to inject into */
	/* What was left out, for the result's layers: only when something was,
	 * so the usual command writes no more than before. */
	if (skipped) {
		report_storage.nonce = p->report_nonce;
		report_storage.type = REPORT_SETUP;
		report_storage.status = (int32_t)skipped;
		ward_write_all(p->report_fd, &report_storage, sizeof(report_storage));
	}
	/* Capabilities, no_new_privs, Landlock; then seccomp, last. init lives
	 * under the same filter: it only waits, kills and exits from here on. */
	if (ward_fences_enter(p->fences, &e) < 0 || ward_fences_seal(p->fences, &e) < 0)
		die(p, e);
	if (p->agent)
		ward_session_agent_main(p);

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	if (p->chain) {
		report_storage.nonce = p->report_nonce;
		report_storage.type = REPORT_EXIT;
		report_storage.status = ward_chain_run(p);
		ward_write_all(p->report_fd, &report_storage, sizeof(report_storage));
		_exit(0);
	}
	/* vfork: the command's process shares init's memory until execve, so
	 * no page tables are copied (a fork here cost ~0.5 ms in a VM). The
	 * child only makes system calls on its own stack frame before exec. */
	cmd = vfork();
	if (cmd < 0) {
		ward_error_make(&e, errno, "fork the command");
		die(p, e);
	}
	if (cmd == 0)
		run_command(p);
	setpgid(cmd, cmd); /* also here: a signal may come before the child's own call */

	/* init keeps nothing of the command's streams: when the command and its
	 * children are gone, the supervisor sees end of file. */
	for (i = 0; i < 3; i++)
		if (p->stdio[i] > 2)
			close(p->stdio[i]);
	/* init's 0-2 are already its own empty pipe unless one is a stream
	 * of the command's (or the pipe could not be made) */
	if (!own_stdio || plan_uses(p, 0) || plan_uses(p, 1) || plan_uses(p, 2)) {
		i = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (i >= 0) {
			dup2(i, 0);
			dup2(i, 1);
			dup2(i, 2);
		}
	}

	report_storage.nonce = p->report_nonce;
	report_storage.type = REPORT_EXIT;
	report_storage.status = ward_wait_group(&cmd, 1, cmd);
	ward_write_all(p->report_fd, &report_storage, sizeof(report_storage));
	_exit(0);
}

void ward_direct_main(const struct spawn_plan *p)
{
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	close(p->life_wfd);
	{
		struct pollfd pf = { .fd = p->life_fd, .events = POLLIN };

		if (poll(&pf, 1, 0) > 0)
			_exit(WARD_EXIT_OWN_ERROR);
	}
	/* In the v1 cgroups before anything else: what init allocates is
	 * charged there, and nothing of the command can start outside them. */
	if (p->cg_v1 && ward_cgroup_enter_v1(p->cg_v1, &(struct ward_error *){ &error_storage }) < 0)
		die(p, &error_storage);
	for (i = 0; i < (int)ARRAY_SIZE(p->close_fds) && p->close_fds[i] >= 0; i++)
		close(p->close_fds[i]);
	{
		struct ward_error *e = &error_storage;

		if (ward_rlimits_apply(&p->rlimits, &e) < 0)
			die(p, e);
	}
	if (chdir(p->workdir) < 0) {
		ward_error_make(&(struct ward_error *){ &error_storage }, errno, "chdir '%s'",
				p->workdir);
		die(p, &error_storage);
	}
	setsid(); /* its own process group, killed whole at the timeout */
	if (p->chain) {
		sigset_t all;
		int status;

		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		status = ward_chain_run(p);
		_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
	}
	run_command(p);
}
