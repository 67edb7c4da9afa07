/* util.c — the small I/O helpers of util-internal.h. */
#include "runtime/util/util-internal.h"

#include <fcntl.h>
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
