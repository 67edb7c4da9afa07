/* syscall-probe — make system calls and print what each returned, one
 * "NAME RESULT" line each, RESULT being "ok" or the errno name. Run inside a
 * sandbox by the tests; every call is made with arguments that make it fail
 * harmlessly (EINVAL, EBADF, EFAULT, ENOENT...) should it not be filtered.
 *
 *   syscall-probe denied          the calls the default profile denies
 *   syscall-probe allowed         calls ordinary programs make
 *   syscall-probe i386 | x32      a call through another ABI (expect SIGSYS)
 *   syscall-probe write PATH      create PATH and write to it
 *   syscall-probe rename FROM TO
 *   syscall-probe tcp PORT...     bind a listener on each port, then connect to each
 *   syscall-probe abstract NAME   connect to the abstract UNIX socket @NAME
 *   syscall-probe signal PID      kill(PID, 0)
 *   syscall-probe ioctl PATH      open PATH read-only and ask it TCGETS (isatty)
 *   syscall-probe status          the capability and no_new_privs lines of /proc/self/status
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef TIOCSTI
#define TIOCSTI 0x5412
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

static void report(const char *name, long r)
{
	if (r < 0) {
		const char *n = strerrorname_np(errno);

		printf("%s %s\n", name, n ? n : "?");
	} else {
		printf("%s ok\n", name);
	}
	fflush(stdout);
}

#define PROBE(name, call) report(name, (long)(call))

static long close_if(long fd)
{
	if (fd >= 0)
		close((int)fd);
	return fd;
}

static void denied(void)
{
	struct timespec ts = { 0, 0 };
	/* CLONE_SIGHAND without CLONE_VM is EINVAL, so an unfiltered clone
	 * creates nothing. */
	const unsigned long bad = CLONE_SIGHAND;
	static const struct {
		const char *name;
		unsigned long flag;
	} ns[] = { { "clone(CLONE_NEWNS)", CLONE_NEWNS },   { "clone(CLONE_NEWCGROUP)", CLONE_NEWCGROUP },
		   { "clone(CLONE_NEWUTS)", CLONE_NEWUTS }, { "clone(CLONE_NEWIPC)", CLONE_NEWIPC },
		   { "clone(CLONE_NEWUSER)", CLONE_NEWUSER }, { "clone(CLONE_NEWPID)", CLONE_NEWPID },
		   { "clone(CLONE_NEWNET)", CLONE_NEWNET } };

	PROBE("init_module", syscall(SYS_init_module, NULL, 0, ""));
	PROBE("finit_module", syscall(SYS_finit_module, -1, "", 0));
	PROBE("delete_module", syscall(SYS_delete_module, "ward-no-such-module", O_NONBLOCK));
	PROBE("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL));
	PROBE("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0xdead0000UL));
	PROBE("reboot", syscall(SYS_reboot, 0, 0, 0, NULL));
	PROBE("bpf", syscall(SYS_bpf, -1, NULL, 0));
	PROBE("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	PROBE("keyctl", syscall(SYS_keyctl, -1, 0, 0, 0, 0));
	PROBE("add_key", syscall(SYS_add_key, NULL, NULL, NULL, 0, 0));
	PROBE("request_key", syscall(SYS_request_key, NULL, NULL, NULL, 0));
	PROBE("userfaultfd", syscall(SYS_userfaultfd, 0xdead0000));
	PROBE("io_uring_setup", syscall(SYS_io_uring_setup, 0, NULL));
	PROBE("io_uring_enter", syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
	PROBE("io_uring_register", syscall(SYS_io_uring_register, -1, 0, NULL, 0));
	PROBE("mount", syscall(SYS_mount, NULL, NULL, NULL, 0, NULL));
	PROBE("umount2", syscall(SYS_umount2, "/nonexistent-ward", 0));
	PROBE("pivot_root", syscall(SYS_pivot_root, NULL, NULL));
	PROBE("move_mount", syscall(SYS_move_mount, -1, "", -1, "", 0));
	PROBE("open_tree", close_if(syscall(SYS_open_tree, -1, "/nonexistent-ward", 0)));
	PROBE("fsopen", syscall(SYS_fsopen, NULL, 0));
	PROBE("fsconfig", syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0));
	PROBE("fsmount", syscall(SYS_fsmount, -1, 0, 0));
	PROBE("fspick", syscall(SYS_fspick, -1, "/nonexistent-ward", 0));
	PROBE("mount_setattr", syscall(SYS_mount_setattr, -1, "/nonexistent-ward", 0, NULL, 0));
	PROBE("unshare", syscall(SYS_unshare, 0));
	PROBE("setns", syscall(SYS_setns, -1, 0));
	PROBE("clone3", syscall(SYS_clone3, NULL, 0));
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		PROBE(ns[i].name, syscall(SYS_clone, ns[i].flag | bad | SIGCHLD, 0, 0, 0, 0));
	PROBE("ptrace", syscall(SYS_ptrace, PTRACE_PEEKUSER, getppid(), 0, 0));
	PROBE("process_vm_readv", syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0));
	PROBE("process_vm_writev", syscall(SYS_process_vm_writev, getpid(), NULL, 0, NULL, 0, 0));
	PROBE("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL, 0));
	PROBE("swapon", syscall(SYS_swapon, NULL, 0));
	PROBE("swapoff", syscall(SYS_swapoff, NULL));
	PROBE("acct", syscall(SYS_acct, "/nonexistent-ward/acct"));
	PROBE("quotactl", syscall(SYS_quotactl, 0, NULL, 0, NULL));
	PROBE("quotactl_fd", syscall(SYS_quotactl_fd, -1, 0, 0, NULL));
	PROBE("syslog", syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0));
#if defined(__x86_64__)
	PROBE("iopl", syscall(SYS_iopl, 4));
	PROBE("ioperm", syscall(SYS_ioperm, 0x10000, 1, 0));
#endif
	PROBE("settimeofday", syscall(SYS_settimeofday, NULL, NULL));
	PROBE("clock_settime", syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts));
	PROBE("clock_adjtime", syscall(SYS_clock_adjtime, CLOCK_MONOTONIC, NULL));
	PROBE("adjtimex", syscall(SYS_adjtimex, NULL));
	PROBE("ioctl(TIOCSTI)", syscall(SYS_ioctl, -1, TIOCSTI, "x"));
	PROBE("ioctl(TIOCLINUX)", syscall(SYS_ioctl, -1, TIOCLINUX, NULL));
	PROBE("personality(ADDR_NO_RANDOMIZE)", syscall(SYS_personality, ADDR_NO_RANDOMIZE));
	PROBE("socket(AF_PACKET)", close_if(socket(AF_PACKET, SOCK_RAW, 0)));
	PROBE("socket(AF_VSOCK)", close_if(socket(AF_VSOCK, SOCK_STREAM, 0)));
	PROBE("socket(AF_ALG)", close_if(socket(AF_ALG, SOCK_SEQPACKET, 0)));
	PROBE("socket(NETLINK_AUDIT)", close_if(socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT)));
	PROBE("socket(NETLINK_SOCK_DIAG)",
	      close_if(socket(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG)));
}

static void allowed(void)
{
	int sv[2], one = 1;
	pid_t pid;
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	long fd;

	PROBE("socket(AF_INET)", close_if(socket(AF_INET, SOCK_STREAM, 0)));
	PROBE("socket(AF_INET6)", close_if(socket(AF_INET6, SOCK_DGRAM, 0)));
	PROBE("socket(NETLINK_ROUTE)", close_if(socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)));
	PROBE("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	PROBE("setsockopt(unix)", setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)));
	PROBE("sendto(unix)", sendto(sv[0], "x", 1, 0, NULL, 0));
	close(sv[0]);
	close(sv[1]);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	PROBE("bind(loopback)", bind((int)fd, (struct sockaddr *)&lo, sizeof(lo)));
	close_if(fd);
	PROBE("personality(query)", syscall(SYS_personality, 0xffffffff));
	PROBE("personality(PER_LINUX)", syscall(SYS_personality, PER_LINUX));
	pid = fork();
	if (pid == 0)
		_exit(0);
	PROBE("fork", pid < 0 ? -1 : waitpid(pid, NULL, 0));
	pid = vfork();
	if (pid == 0)
		_exit(0);
	PROBE("vfork", pid < 0 ? -1 : waitpid(pid, NULL, 0));
}

static int write_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (write(fd, "x\n", 2) != 2) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static void tcp(int n, char **ports)
{
	int listeners[16];

	for (int i = 0; i < n && i < 16; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_port = htons((uint16_t)atoi(ports[i])),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		char name[64];
		int one = 1;

		listeners[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		setsockopt(listeners[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		snprintf(name, sizeof(name), "bind %s", ports[i]);
		PROBE(name, bind(listeners[i], (struct sockaddr *)&a, sizeof(a)) < 0
				    ? -1
				    : listen(listeners[i], 4));
	}
	for (int i = 0; i < n && i < 16; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_port = htons((uint16_t)atoi(ports[i])),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		char name[64];

		snprintf(name, sizeof(name), "connect %s", ports[i]);
		PROBE(name, connect(fd, (struct sockaddr *)&a, sizeof(a)));
		close(fd);
	}
}

static void abstract(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t n = strlen(name);

	if (n > sizeof(a.sun_path) - 1)
		n = sizeof(a.sun_path) - 1;
	memcpy(a.sun_path + 1, name, n);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);

	PROBE("connect(abstract)", connect(fd, (struct sockaddr *)&a, len));
	close(fd);
}

static void status(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f) {
		report("open(/proc/self/status)", -1);
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Cap", 3) == 0 || strncmp(line, "NoNewPrivs", 10) == 0 ||
		    strncmp(line, "Seccomp:", 8) == 0)
			fputs(line, stdout);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (strcmp(what, "denied") == 0) {
		denied();
	} else if (strcmp(what, "allowed") == 0) {
		allowed();
	} else if (strcmp(what, "i386") == 0) {
#if defined(__x86_64__)
		long r = 20; /* getpid in the i386 table */

		__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
		printf("i386 returned %ld\n", r);
#endif
	} else if (strcmp(what, "x32") == 0) {
#if defined(__x86_64__)
		long r = syscall(0x40000000L | SYS_getpid);

		printf("x32 returned %ld\n", r);
#endif
	} else if (strcmp(what, "write") == 0 && argc == 3) {
		PROBE("write", write_file(argv[2]));
	} else if (strcmp(what, "rename") == 0 && argc == 4) {
		PROBE("rename", rename(argv[2], argv[3]));
	} else if (strcmp(what, "tcp") == 0 && argc >= 3) {
		tcp(argc - 2, argv + 2);
	} else if (strcmp(what, "abstract") == 0 && argc == 3) {
		abstract(argv[2]);
	} else if (strcmp(what, "signal") == 0 && argc == 3) {
		PROBE("kill", kill((pid_t)atoi(argv[2]), 0));
	} else if (strcmp(what, "ioctl") == 0 && argc == 3) {
		struct termios t;
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		PROBE("open", fd);
		if (fd >= 0)
			PROBE("ioctl(TCGETS)", ioctl(fd, TCGETS, &t));
	} else if (strcmp(what, "status") == 0) {
		status();
	} else {
		fprintf(stderr, "usage: syscall-probe denied|allowed|i386|x32|write PATH|"
				"rename FROM TO|tcp PORT...|abstract NAME|signal PID|ioctl PATH|status\n");
		return 2;
	}
	return 0;
}
