/* util.c — the small I/O helpers of util-internal.h. */
#include "runtime/util/util-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int ward_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t ward_read_file(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -1;
	while (got + 1 < size) {
		ssize_t n = read(fd, buf + got, size - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

int ward_write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return ward_write_all(fd, s, strlen(s));
}

long long ward_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

char *ward_names_join(const char *const *names, char *buf, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (; *names; names++) {
		int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", *names);

		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	return buf;
}

/* The walk for ward_open_nofollow(): each directory on the way opened
 * O_PATH | O_NOFOLLOW from the one before, so a link anywhere ends it. */
static int open_walk(int dirfd, const char *path, int flags, bool beneath)
{
	char buf[PATH_MAX];
	char *comp, *next;
	int cur, fd, e;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (buf[0] == '/') {
		if (beneath) {
			errno = EXDEV;
			return -1;
		}
		cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		cur = dirfd == AT_FDCWD ? open(".", O_PATH | O_DIRECTORY | O_CLOEXEC) :
					  fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	}
	if (cur < 0)
		return -1;
	for (comp = buf;; comp = next) {
		bool last;

		while (*comp == '/')
			comp++;
		next = strchr(comp, '/');
		if (next)
			*next++ = '\0';
		while (next && *next == '/')
			next++;
		last = !next || !*next;
		if (beneath && strcmp(comp, "..") == 0) {
			close(cur);
			errno = EXDEV;
			return -1;
		}
		if (!*comp)
			comp = (char *)".";
		fd = openat(cur, comp,
			    last ? flags | O_NOFOLLOW | O_CLOEXEC :
				   O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (fd < 0 && e == ENOTDIR) {
			struct stat st;

			/* O_DIRECTORY meets a link before O_NOFOLLOW does */
			if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				e = ELOOP;
		}
		close(cur);
		if (fd < 0) {
			errno = e;
			return -1;
		}
		if (last)
			return fd;
		cur = fd;
	}
}

int ward_open_nofollow(int dirfd, const char *path, int flags, bool beneath)
{
	struct open_how how = {
		.flags = (unsigned)(flags | O_CLOEXEC),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   (beneath ? RESOLVE_BENEATH : 0),
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		return open_walk(dirfd, path, flags, beneath);
	return fd;
}
