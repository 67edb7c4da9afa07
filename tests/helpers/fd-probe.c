/* fd-probe REPORT — what the command's fds 0, 1 and 2 are, and what it can do
 * to them: one line per fd in REPORT, "fd N DEV:INO fchmod=E fchown=E" (E the
 * errno of the call, 0 when it succeeded). fchmod gives the mode the fd
 * already has, fchown changes no owner: a file of the host's would show the
 * calls only in its ctime. Writes nothing on fds 1 and 2 themselves. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	FILE *f;
	int fd;

	if (argc != 2 || !(f = fopen(argv[1], "w")))
		return 2;
	for (fd = 0; fd < 3; fd++) {
		struct stat st;
		int chm, cho;

		if (fstat(fd, &st) < 0) {
			fprintf(f, "fd %d closed\n", fd);
			continue;
		}
		chm = fchmod(fd, st.st_mode & 07777) < 0 ? errno : 0;
		cho = fchown(fd, (uid_t)-1, (gid_t)-1) < 0 ? errno : 0;
		fprintf(f, "fd %d %llu:%llu fchmod=%d fchown=%d\n", fd, (unsigned long long)st.st_dev,
			(unsigned long long)st.st_ino, chm, cho);
	}
	return fclose(f) == 0 ? 0 : 2;
}
