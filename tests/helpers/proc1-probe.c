/* proc1-probe — try every way at the sandbox's PID 1 (a copy of the host
 * process: ward, or a program embedding libward) and at what it reports to
 * the supervisor. One "NAME RESULT" line each; RESULT is the errno name when
 * the way is closed, "ok" when it opened (with what was found), "LEAK" when
 * the secret was read.
 *
 *   proc1-probe SECRET [ADDR LEN]
 *
 * PID 1 is probed, then the parent when it is not PID 1 (a session's leader,
 * a fork of init), its lines prefixed "ppid-".
 *
 * SECRET is a string the host holds (in its environment, its arguments or
 * its heap); ADDR and LEN, in hex and decimal, where the host keeps it in
 * its memory (the test tells, to make the memory probes as strong as an
 * attacker who guessed right).
 *
 * Every descriptor the probe gets hold of — stolen with pidfd_getfd(),
 * opened through /proc/1/fd, or one of its own beyond 0-2 — gets a forged
 * "ExecutionFailed" record written to it, in the record layout of before
 * and after the nonce, with the message "FORGED-BY-COMMAND". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ward/error.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static const char *secret;
static int target = 1; /* the pid probed */
static char tag[16];     /* "" for PID 1, "ppid-" for the parent */
static int forged;

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "?";
}

static void line(const char *name, const char *result)
{
	printf("%s%s %s\n", tag, name, result);
	fflush(stdout);
}

/* Whether buf (n bytes, NULs and all) holds the secret. */
static int holds(const char *buf, size_t n)
{
	return memmem(buf, n, secret, strlen(secret)) != NULL;
}

static void read_file(const char *name, const char *what)
{
	static char buf[1 << 20];
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", target, what);
	fd = open(path, O_RDONLY);
	ssize_t n, got = 0;

	if (fd < 0) {
		line(name, ename(errno));
		return;
	}
	while ((n = read(fd, buf + got, sizeof(buf) - (size_t)got)) > 0)
		got += n;
	if (n < 0 && got == 0) {
		line(name, ename(errno));
		close(fd);
		return;
	}
	close(fd);
	line(name, holds(buf, (size_t)got) ? "LEAK" : got ? "ok" : "ok-empty");
}

/* Forged records: the layout of before the nonce and the one after it. */
static void forge(int fd)
{
	struct {
		uint32_t type;
		int32_t status;
		struct ward_error err;
	} old = { 1, 0, { WARD_ERR_EXECUTION_FAILED, 0, "", "FORGED-BY-COMMAND" } };
	struct {
		uint64_t nonce;
		uint32_t type;
		int32_t status;
		struct ward_error err;
	} cur = { 0, 1, 0, { WARD_ERR_EXECUTION_FAILED, 0, "", "FORGED-BY-COMMAND" } };

	if (write(fd, &old, sizeof(old)) > 0)
		forged++;
	if (write(fd, &cur, sizeof(cur)) > 0)
		forged++;
}

static unsigned long addr;
static size_t len;

static void probe_target(void)
{
	char buf[4096], res[64];
	int pidfd, got = 0, last = 0, opened = 0;

	read_file("cmdline", "cmdline");
	read_file("environ", "environ");
	read_file("maps", "maps");
	read_file("auxv", "auxv");
	read_file("syscall", "syscall");
	{
		char te[48];

		snprintf(te, sizeof(te), "task/%d/environ", target);
		read_file("task-environ", te);
	}

	/* /proc/1/mem at the secret's address (or the start of the heap) */
	{
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/mem", target);
		fd = open(path, O_RDONLY);

		if (fd < 0) {
			line("mem", ename(errno));
		} else {
			ssize_t n = addr ? pread(fd, buf, len, (off_t)addr) : -1;

			line("mem", n > 0 && holds(buf, (size_t)n) ? "LEAK" :
				    n < 0 ? ename(errno) : "ok");
			close(fd);
		}
	}
	{
		struct iovec local = { buf, len ? len : 1 }, remote = { (void *)addr, len ? len : 1 };
		ssize_t n = process_vm_readv(target, &local, 1, &remote, 1, 0);

		line("process_vm_readv", n > 0 && holds(buf, (size_t)n) ? "LEAK" :
					 n < 0 ? ename(errno) : "ok");
	}
	if (ptrace(PTRACE_SEIZE, target, 0, 0) < 0) {
		line("ptrace_seize", ename(errno));
	} else {
		line("ptrace_seize", "ok");
		ptrace(PTRACE_DETACH, target, 0, 0);
	}
	if (ptrace(PTRACE_ATTACH, target, 0, 0) < 0) {
		line("ptrace_attach", ename(errno));
	} else {
		line("ptrace_attach", "ok");
		waitpid(target, NULL, __WALL);
		ptrace(PTRACE_DETACH, target, 0, 0);
	}

	/* pidfd_getfd on every descriptor number init could have */
	pidfd = (int)syscall(SYS_pidfd_open, target, 0);
	if (pidfd < 0) {
		line("pidfd_open", ename(errno));
	} else {
		line("pidfd_open", "ok");
		for (int fd = 0; fd < 1024; fd++) {
			int s = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);

			if (s >= 0) {
				got++;
				forge(s);
				close(s);
			} else if (errno != EBADF) {
				last = errno;
			}
		}
		if (got)
			snprintf(res, sizeof(res), "ok %d", got);
		line("pidfd_getfd", got ? res : ename(last ? last : EBADF));
		close(pidfd);
	}

	/* through /proc/1/fd */
	last = 0;
	for (int fd = 0; fd < 1024; fd++) {
		char path[64];
		int s;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", target, fd);
		s = open(path, O_WRONLY | O_NONBLOCK);
		if (s < 0)
			s = open(path, O_RDONLY | O_NONBLOCK);
		if (s >= 0) {
			opened++;
			forge(s);
			close(s);
		} else if (errno != ENOENT) {
			last = errno;
		}
	}
	snprintf(res, sizeof(res), "ok %d", opened);
	line("proc_fd", opened ? res : ename(last ? last : ENOENT));
	{
		const char *links[] = { "cwd", "root", "exe" };

		for (int i = 0; i < 3; i++) {
			char path[32], dest[256];
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/%s", target, links[i]);
			n = readlink(path, dest, sizeof(dest));
			line(links[i], n < 0 ? ename(errno) : "ok");
		}
	}
}

int main(int argc, char **argv)
{
	char res[64];
	int own = 0;
	pid_t ppid = getppid();

	if (argc < 2) {
		fprintf(stderr, "usage: proc1-probe SECRET [ADDR LEN]\n");
		return 2;
	}
	secret = argv[1];
	if (argc >= 4) {
		addr = strtoul(argv[2], NULL, 16);
		len = strtoul(argv[3], NULL, 10);
		if (len > 4096)
			len = 4096;
	}
	probe_target();
	/* a session's leader, a fork of init, when it is the parent */
	if (ppid > 1) {
		target = ppid;
		snprintf(tag, sizeof(tag), "ppid-");
		probe_target();
	}
	/* descriptors the command was given beyond its standard streams */
	for (int fd = 3; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0) {
			char path[32], link[128] = "";

			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			if (readlink(path, link, sizeof(link) - 1) < 0)
				strcpy(link, "?");
			printf("own_fd %d %s\n", fd, link);
			own++;
			forge(fd);
		}
	snprintf(res, sizeof(res), "%d", own);
	line("own_fds", res);
	snprintf(res, sizeof(res), "%d", forged);
	line("forged", res);
	return 0;
}
