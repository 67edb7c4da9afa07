/* util-internal.h — cleanup attributes and small helpers shared by libward's
 * modules. Not installed. */
#ifndef WARD_UTIL_INTERNAL_H
#define WARD_UTIL_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))

/* Hand ownership on: return the value and leave the variable empty. */
#define steal_ptr(p)                                                                               \
	({                                                                                         \
		__typeof__(p) _tmp = (p);                                                          \
		(p) = NULL;                                                                        \
		_tmp;                                                                              \
	})

static inline int steal_fd(int *fd)
{
	int tmp = *fd;

	*fd = -1;
	return tmp;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Write all of buf, retrying on EINTR and short writes. Returns 0 or -1. */
int ward_write_all(int fd, const void *buf, size_t len);

/* Read a small file whole into buf (NUL-terminated, trailing newline kept).
 * Returns the length, or -1 with errno set. */
ssize_t ward_read_file(const char *path, char *buf, size_t size);

/* This process's /proc/self/stat, the fields ward uses: its start time
 * (run and cgroup names, told apart from a later process of the same pid)
 * and its memory layout (init's PR_SET_MM_MAP). */
struct ward_self_stat {
	unsigned long long start_time;
	unsigned long long start_code, end_code, start_stack, start_data, end_data, start_brk;
};

/* Read once per process and kept: 0, or -1 with errno. A forked or cloned
 * child (another pid) reads its own start time again; with `layout_only`
 * it takes the parent's kept copy, whose layout it shares (a copy of the
 * same memory, no execve since), and reads only when there is none. */
int ward_self_stat(struct ward_self_stat *out, bool layout_only);

/* Write a string to a file (open O_WRONLY, one write). Returns 0 or -1. */
int ward_write_file(const char *path, const char *s);

/* Monotonic clock in nanoseconds. */
long long ward_now_ns(void);

/* "an object", "a string", "a number with a fraction"…: what a JSON value is,
 * for messages naming a wrong type (request.c). */
struct json_t;
const char *ward_json_type_name(const struct json_t *v);

/* The NULL-terminated list of names joined by ", " into buf (truncated to
 * fit): the valid keys a message about an unknown one lists. Returns buf. */
char *ward_names_join(const char *const *names, char *buf, size_t size);

#endif
