/* util.c — the small I/O helpers of util-internal.h. */
#include "runtime/util/util-internal.h"

#include <errno.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

ssize_t ward_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n,
		      int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * WARD_FDS_MAX)];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (n > WARD_FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (n) {
		struct cmsghdr *cm;

		memset(c.buf, 0, sizeof(c.buf));
		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	}
	do
		r = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r;
}

ssize_t ward_recv_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *n,
		      int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * WARD_FDS_MAX)];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm;
	ssize_t r;

	*n = 0;
	do
		r = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return r;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k, nk;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nk = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nk; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (*n < max)
				fds[(*n)++] = fd;
			else
				close(fd);
		}
	}
	return r;
}

/* Field n (1-based, as proc(5) counts) of a stat line, from the text after
 * the command name's closing parenthesis (field 3 on). */
static unsigned long long stat_field(const char *after_comm, int n)
{
	const char *c = after_comm;
	unsigned long long v = 0;

	for (int f = 3; f < n && *c; c++)
		if (*c == ' ')
			f++;
	while (*c >= '0' && *c <= '9')
		v = v * 10 + (unsigned long long)(*c++ - '0');
	return v;
}

/* One reading per process: ward names its run record and its cgroups after
 * its start time, and init hides the host's arguments with the layout;
 * each reading was four system calls (~3 us each in a VM). The fields are
 * written before self_pid (release), and only while it is 0 or another
 * process's: init, a copy of the supervisor made while another thread may
 * hold self_lock, takes the layout without the lock. */
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t self_pid;
static struct ward_self_stat self_kept;

static int self_read(struct ward_self_stat *s)
{
	char buf[1024], *c;

	/* the command name may hold spaces and parentheses: the last ')' */
	errno = 0;
	if (ward_read_file("/proc/self/stat", buf, sizeof(buf)) <= 0 ||
	    !(c = strrchr(buf, ')')) || c[1] != ' ') {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	c += 2;
	s->start_time = stat_field(c, 22);
	s->start_code = stat_field(c, 26);
	s->end_code = stat_field(c, 27);
	s->start_stack = stat_field(c, 28);
	s->start_data = stat_field(c, 45);
	s->end_data = stat_field(c, 46);
	s->start_brk = stat_field(c, 47);
	return 0;
}

int ward_self_stat(struct ward_self_stat *out, bool layout_only)
{
	pid_t me;
	int rc = 0;

	if (layout_only) {
		if (__atomic_load_n(&self_pid, __ATOMIC_ACQUIRE)) {
			*out = self_kept;
			return 0;
		}
		return self_read(out);
	}
	me = getpid();
	pthread_mutex_lock(&self_lock);
	if (self_pid != me) {
		rc = self_read(&self_kept);
		if (rc == 0)
			__atomic_store_n(&self_pid, me, __ATOMIC_RELEASE);
	}
	if (rc == 0)
		*out = self_kept;
	pthread_mutex_unlock(&self_lock);
	return rc;
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

pid_t ward_proc_ppid(int proc, const char *pid)
{
	char path[48], buf[512], *p;
	ssize_t n;
	pid_t ppid = 0;
	int fd;

	if (strlen(pid) > 20)
		return -1;
	memcpy(path, pid, strlen(pid));
	memcpy(path + strlen(pid), "/stat", 6);
	fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, so from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	for (p += 4; *p >= '0' && *p <= '9'; p++)
		ppid = ppid * 10 + (*p - '0');
	return ppid;
}
