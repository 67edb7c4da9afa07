/* setid-probe — try every system call that could leave a set-user-ID or
 * set-group-ID file, or a file capability, in a directory. One "NAME RESULT"
 * line per way: the errno name when it was refused, "ok" when the call went
 * through (the test then finds the file's bits on the host).
 *
 *   setid-probe DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif

static int dirfd_;
static char path[4096];

static const char *at(const char *dir, const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void report(const char *name, long r)
{
	const char *n = r < 0 ? strerrorname_np(errno) : "ok";

	printf("%s %s\n", name, n ? n : "?");
	fflush(stdout);
}

/* A plain 0644 file to change the mode of. */
static int plain(const char *dir, const char *name)
{
	int fd = open(at(dir, name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (fd >= 0)
		close(fd);
	return fd;
}

int main(int argc, char **argv)
{
	const char *d;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: setid-probe DIR\n");
		return 2;
	}
	d = argv[1];
	dirfd_ = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0) {
		perror(d);
		return 2;
	}
	umask(0);

	/* the chmod family */
	plain(d, "chmod-4755");
	report("chmod-4755", chmod(at(d, "chmod-4755"), 04755));
	plain(d, "chmod-2755");
	report("chmod-2755", chmod(at(d, "chmod-2755"), 02755));
	plain(d, "chmod-6755");
	report("chmod-6755", chmod(at(d, "chmod-6755"), 06755));
	plain(d, "chmod-highbits");
	report("chmod-highbits",
	       syscall(SYS_chmod, at(d, "chmod-highbits"), 0xffff00000000UL | 04755));
	plain(d, "fchmod");
	fd = open(at(d, "fchmod"), O_RDONLY | O_CLOEXEC);
	report("fchmod", fd < 0 ? -1 : fchmod(fd, 04755));
	if (fd >= 0)
		close(fd);
	plain(d, "fchmodat");
	report("fchmodat", fchmodat(dirfd_, "fchmodat", 02755, 0));
	plain(d, "fchmodat2");
	report("fchmodat2", syscall(SYS_fchmodat2, dirfd_, "fchmodat2", 04755, 0));
	plain(d, "fchmodat2-empty");
	fd = open(at(d, "fchmodat2-empty"), O_PATH | O_CLOEXEC);
	report("fchmodat2-empty", syscall(SYS_fchmodat2, fd, "", 04755, AT_EMPTY_PATH));
	if (fd >= 0)
		close(fd);

	/* creating with the bits in the mode */
	fd = (int)syscall(SYS_open, at(d, "open-creat"), O_WRONLY | O_CREAT | O_CLOEXEC, 04755);
	report("open-creat", fd);
	if (fd >= 0)
		close(fd);
	fd = openat(dirfd_, "openat-creat", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 02755);
	report("openat-creat", fd);
	if (fd >= 0)
		close(fd);
	fd = creat(at(d, "creat"), 06755);
	report("creat", fd);
	if (fd >= 0)
		close(fd);
	fd = openat(dirfd_, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755);
	report("open-tmpfile", fd);
	if (fd >= 0) {
		char p[64];

		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		linkat(AT_FDCWD, p, dirfd_, "open-tmpfile", AT_SYMLINK_FOLLOW);
		close(fd);
	}
	{
		struct open_how how = { .flags = O_WRONLY | O_CREAT | O_CLOEXEC, .mode = 04755 };

		fd = (int)syscall(SYS_openat2, dirfd_, "openat2", &how, sizeof(how));
		report("openat2", fd);
		if (fd >= 0)
			close(fd);
	}
	report("mkdir", mkdir(at(d, "mkdir"), 02755));
	report("mkdirat", mkdirat(dirfd_, "mkdirat", 04755));
	report("mknod", mknod(at(d, "mknod"), S_IFREG | 04755, 0));
	report("mknodat", mknodat(dirfd_, "mknodat", S_IFREG | 02755, 0));

	/* a file capability (cap_setuid, VFS_CAP_REVISION_2, effective) */
	{
		uint32_t cap[5] = { 0x02000001, 1u << 7, 0, 0, 0 };

		plain(d, "setxattr");
		report("setxattr", setxattr(at(d, "setxattr"), "security.capability", cap,
					    sizeof(cap), 0));
		plain(d, "fsetxattr");
		fd = open(at(d, "fsetxattr"), O_RDONLY | O_CLOEXEC);
		report("fsetxattr", fd < 0 ? -1 : fsetxattr(fd, "security.capability", cap,
							    sizeof(cap), 0));
		if (fd >= 0)
			close(fd);
		plain(d, "lsetxattr");
		report("lsetxattr", lsetxattr(at(d, "lsetxattr"), "security.capability", cap,
					      sizeof(cap), 0));
	}
	return 0;
}
