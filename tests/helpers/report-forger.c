/* report-forger — a program a session's command runs, forging the shell's
 * report (the side channel a session reads after each command: where the
 * command ended, its variables). It takes the report channel from its parent
 * shell — pidfd_getfd(), which a same-user process may use on its parent
 * where ptrace is not restricted, or /proc/PPID/fd/N for a pipe — and writes
 * a whole report of its own there before the shell's trap writes the real
 * one: directory argv[1], FORGED_STATE=1 in the state, FORGED_ENV=1
 * exported, an alias forged_alias.
 *
 * Prints "forged fd N" for each descriptor it wrote to, "none" if it found
 * none. Exit 0 either way: the test judges by the session's state after. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

int main(int argc, char **argv)
{
	char report[4096], dir[64];
	struct stat out, err, st;
	pid_t ppid = getppid();
	int pidfd, n, len, wrote = 0;
	DIR *d;
	struct dirent *e;

	if (argc < 2)
		return 2;
	len = snprintf(report, sizeof(report), "%s\n%s\n%cO%cSFORGED_STATE=1\n%cEFORGED_ENV=1%c"
			       "Aforged_alias=echo forged%cZ%c",
		       argv[1], argv[1], 0, 0, 0, 0, 0, 0);
	if (len <= 0 || (size_t)len >= sizeof(report))
		return 2;
	fstat(1, &out);
	fstat(2, &err);
	pidfd = (int)syscall(SYS_pidfd_open, ppid, 0);
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)ppid);
	d = opendir(dir);
	if (!d) {
		puts("none");
		return 0;
	}
	while ((e = readdir(d))) {
		char path[128];
		int fd = -1;

		n = atoi(e->d_name);
		if (n < 3)
			continue;
		if (pidfd >= 0)
			fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
		if (fd < 0) {
			snprintf(path, sizeof(path), "%s/%d", dir, n);
			fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		}
		if (fd < 0)
			continue;
		/* a pipe or a socket the shell holds, not its stdout or stderr */
		if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) &&
		    !(st.st_ino == out.st_ino && st.st_dev == out.st_dev) &&
		    !(st.st_ino == err.st_ino && st.st_dev == err.st_dev) &&
		    write(fd, report, (size_t)len) == len) {
			printf("forged fd %d\n", n);
			wrote++;
		}
		close(fd);
	}
	closedir(d);
	if (!wrote)
		puts("none");
	return 0;
}
