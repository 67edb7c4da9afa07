/* rmtree.c — removing a tree that a sandboxed command may have written:
 * a run's upper layer, a change set, a run directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/util/util-internal.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; the same number on x86-64 and aarch64 */
#endif

/* chmod of the inode open at fd (O_PATH included), never of what a name
 * leads to: fchmodat2(AT_EMPTY_PATH) where the kernel has it (6.6), else
 * through the descriptor's own /proc link, which leads to the inode itself. */
static int chmod_fd(int fd, mode_t mode)
{
	char path[64];

	if (syscall(SYS_fchmodat2, fd, "", mode, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL && errno != EBADF)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return chmod(path, mode);
}

int ward_rmtree_at(int dfd, const char *name)
{
	struct stat st;
	int fd, pfd, rc = 0;
	DIR *d;
	struct dirent *e;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	/* Held first, then made writable through the descriptor: a link
	 * swapped in for the directory since the fstatat (the tree may be a
	 * command's upper layer, or a workdir a command shares) is not opened,
	 * so nothing outside is ever chmod'ed or walked. */
	pfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT ? 0 : -1;
	/* a command's chmod 0 (or overlay's own mode-0 work directory) must
	 * not stop the clean-up */
	if (fstat(pfd, &st) < 0 || ((st.st_mode & 0700) != 0700 && chmod_fd(pfd, 0700) < 0)) {
		close(pfd);
		return -1;
	}
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(pfd);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (ward_rmtree_at(dirfd(d), e->d_name) < 0)
			rc = -1;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int ward_rmtree(const char *path)
{
	return ward_rmtree_at(AT_FDCWD, path);
}
