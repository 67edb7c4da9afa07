/* budget-probe — use up a kernel budget inside the sandbox.
 *
 *   budget-probe inotify        open inotify instances until the kernel says
 *                               no; print "inotify N ERRNO", then hold them
 *                               until standard input ends
 *   budget-probe sigpending     the same with queued real-time signals
 *   budget-probe memlock        the same with locked SysV shared memory, in
 *                               pages (one segment of RLIMIT_MEMLOCK bytes,
 *                               locked; else one page fewer, and so on)
 *   budget-probe nproc          the same with processes (each paused until
 *                               the sandbox ends)
 *   budget-probe fill PATH      write PATH in 1 MiB pieces until a write
 *                               fails; print "fill ERRNO BYTES"
 *   budget-probe inodes DIR     create empty files in DIR until one fails;
 *                               print "inodes ERRNO COUNT"
 *   budget-probe shm            make 1 MiB SysV shared memory segments until
 *                               one fails; print "shm ERRNO MIB"
 *   budget-probe pty            open pseudo-terminals until one fails; print
 *                               "pty ERRNO COUNT"
 *   budget-probe userns         unshare(CLONE_NEWUSER); print "userns RESULT"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <unistd.h>

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "?";
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "inotify") == 0) {
		char c;
		int n = 0;

		for (;;) {
			if (inotify_init1(IN_CLOEXEC) < 0)
				break;
			n++;
		}
		printf("inotify %d %s\n", n, ename(errno));
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "nproc") == 0) {
		char c;
		int n = 0;
		pid_t pid;

		while ((pid = fork()) >= 0) {
			if (pid == 0) {
				pause(); /* killed with the PID namespace */
				_exit(0);
			}
			n++;
		}
		printf("nproc %d %s\n", n, ename(errno));
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "sigpending") == 0) {
		union sigval v = { 0 };
		sigset_t rt;
		char c;
		int n = 0;

		sigemptyset(&rt);
		sigaddset(&rt, SIGRTMIN);
		sigprocmask(SIG_BLOCK, &rt, NULL);
		while (sigqueue(getpid(), SIGRTMIN, v) == 0)
			n++;
		printf("sigpending %d %s\n", n, ename(errno));
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "memlock") == 0) {
		struct rlimit rl;
		long page = sysconf(_SC_PAGESIZE), n = 0;
		int e = 0;
		char c;

		/* one segment as large as the limit lets; then page by page
		 * what is left */
		if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
			return 2;
		for (long pages = (long)rl.rlim_cur / page; pages > 0;) {
			int id = shmget(IPC_PRIVATE, (size_t)(pages * page), IPC_CREAT | 0600);

			if (id < 0) {
				e = errno;
				break;
			}
			if (shmctl(id, SHM_LOCK, NULL) < 0) {
				e = errno;
				shmctl(id, IPC_RMID, NULL);
				if (pages == 1)
					break;
				pages = 1;
				continue;
			}
			/* kept: removed, it would be unlocked; the sandbox's IPC
			 * namespace frees it when it ends */
			n += pages;
			if (pages > 1)
				pages = 1;
		}
		printf("memlock %ld %s\n", n, ename(e));
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "fill") == 0) {
		static char buf[1 << 20];
		long long total = 0;
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ssize_t w = 0;

		if (fd < 0) {
			printf("fill open-%s 0\n", ename(errno));
			return 1;
		}
		memset(buf, 'x', sizeof(buf));
		while ((w = write(fd, buf, sizeof(buf))) > 0)
			total += w;
		printf("fill %s %lld\n", w < 0 ? ename(errno) : "EOF", total);
		close(fd);
		unlink(argv[2]);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "inodes") == 0) {
		char path[4096];
		long n = 0;
		int fd;

		for (;;) {
			snprintf(path, sizeof(path), "%s/f%ld", argv[2], n);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (fd < 0)
				break;
			close(fd);
			n++;
		}
		printf("inodes %s %ld\n", ename(errno), n);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "shm") == 0) {
		long n = 0;

		while (shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600) >= 0)
			n++;
		printf("shm %s %ld\n", ename(errno), n);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "pty") == 0) {
		long n = 0;

		while (posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC) >= 0)
			n++;
		printf("pty %s %ld\n", ename(errno), n);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "userns") == 0) {
		printf("userns %s\n", unshare(CLONE_NEWUSER) < 0 ? ename(errno) : "ok");
		return 0;
	}
	fprintf(stderr, "usage: budget-probe inotify | fill PATH | inodes DIR\n");
	return 2;
}
