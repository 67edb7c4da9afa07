/* ratelimit.c — per-user rate limits: a sliding window over the times of the
 * commands of the last hour, kept in memory or in a locked state file. */
#include "ward/ratelimit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/util/util-internal.h"

#define MINUTE_MS 60000LL
#define HOUR_MS 3600000LL
#define HEADER "ward-ratelimit 1\n"
/* A state file is a few KiB; anything much larger is not ward's. */
#define STATE_MAX (16u << 20)

void ward_ratelog_release(struct ward_ratelog *log)
{
	free(log->t);
	memset(log, 0, sizeof(*log));
}

static void prune(struct ward_ratelog *log, int64_t now_ms, size_t keep)
{
	size_t i = 0;

	while (i < log->n && log->t[i] <= now_ms - HOUR_MS)
		i++;
	if (log->n - i > keep)
		i = log->n - keep;
	if (i == 0)
		return;
	memmove(log->t, log->t + i, (log->n - i) * sizeof(*log->t));
	log->n -= i;
}

static int push(struct ward_ratelog *log, int64_t t)
{
	if (log->n == log->cap) {
		size_t cap = log->cap ? log->cap * 2 : 64;
		int64_t *g = realloc(log->t, cap * sizeof(*g));

		if (!g)
			return -1;
		log->t = g;
		log->cap = cap;
	}
	log->t[log->n++] = t;
	return 0;
}

int ward_ratelog_take(struct ward_ratelog *log, int64_t now_ms, unsigned per_minute,
		      unsigned per_hour, unsigned *retry_after_s, struct ward_error **err)
{
	size_t in_minute = 0, i, keep = per_minute > per_hour ? per_minute : per_hour;
	int64_t wait = 0;
	const char *which = NULL;
	unsigned limit = 0;

	if (retry_after_s)
		*retry_after_s = 0;
	if (!per_minute && !per_hour)
		return 0;
	/* a clock set back: what was recorded "later" counts as now */
	for (i = 0; i < log->n; i++)
		if (log->t[i] > now_ms)
			log->t[i] = now_ms;
	prune(log, now_ms, keep);
	for (i = 0; i < log->n; i++)
		in_minute += log->t[i] > now_ms - MINUTE_MS;
	if (per_minute && in_minute >= per_minute) {
		wait = log->t[log->n - per_minute] + MINUTE_MS - now_ms;
		which = "minute";
		limit = per_minute;
	}
	if (per_hour && log->n >= per_hour) {
		int64_t w = log->t[log->n - per_hour] + HOUR_MS - now_ms;

		if (w > wait) {
			wait = w;
			which = "hour";
			limit = per_hour;
		}
	}
	if (which) {
		unsigned s = (unsigned)((wait + 999) / 1000);

		if (s < 1)
			s = 1;
		if (retry_after_s)
			*retry_after_s = s;
		ward_error_make_kind(err, WARD_ERR_RATE_LIMITED, 0,
				     "rate limit of %u commands per %s reached: next slot in %u s "
				     "(the policy's rate_limit.per_%s sets it, 0 for no limit)",
				     limit, which, s, which);
		if (err && *err)
			ward_error_set_rule(*err, strcmp(which, "minute") == 0 ? "rate_limit.per_minute" :
									  "rate_limit.per_hour");
		return -1;
	}
	if (push(log, now_ms) < 0)
		return ward_error_make(err, ENOMEM, "rate limit");
	return 0;
}

int ward_ratelog_parse(const char *text, size_t len, int64_t now_ms, struct ward_ratelog *log,
		       struct ward_error **err)
{
	const char *s = text, *end = text + len;
	size_t hl = strlen(HEADER);

	memset(log, 0, sizeof(*log));
	if (len == 0)
		return 0;
	if (len < hl || memcmp(text, HEADER, hl) != 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "not a ward rate limit state (first line is not '%.*s')",
					    (int)hl - 1, HEADER);
	for (s = text + hl; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		int64_t v = 0;
		const char *p;

		if (!nl)
			break; /* a line cut short by a crash: ignore it */
		if (nl == s) {
			s++;
			continue;
		}
		for (p = s; p < nl; p++) {
			if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10) {
				ward_ratelog_release(log);
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "not a ward rate limit state (line "
							    "'%.*s')",
							    (int)(nl - s > 40 ? 40 : nl - s), s);
			}
			v = v * 10 + (*p - '0');
		}
		if (v > now_ms - HOUR_MS && push(log, v) < 0) {
			ward_ratelog_release(log);
			return ward_error_make(err, ENOMEM, "rate limit");
		}
		s = nl + 1;
	}
	return 0;
}

char *ward_ratelog_format(const struct ward_ratelog *log)
{
	size_t cap = strlen(HEADER) + log->n * 21 + 1, o = strlen(HEADER), i;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	memcpy(s, HEADER, o);
	/* by hand, not snprintf: the file holds up to an hour of commands and
	 * is written back on every one of them */
	for (i = 0; i < log->n; i++) {
		char d[20];
		uint64_t v = log->t[i] < 0 ? -(uint64_t)log->t[i] : (uint64_t)log->t[i];
		size_t k = 0;

		if (log->t[i] < 0)
			s[o++] = '-';
		do
			d[k++] = (char)('0' + v % 10);
		while ((v /= 10));
		while (k)
			s[o++] = d[--k];
		s[o++] = '\n';
	}
	s[o] = '\0';
	return s;
}

char *ward_ratelimit_default_path(void)
{
	struct ward_state_choice c;
	char *p = NULL;

	if (ward_state_choose(NULL, false, &c, NULL) == 0 &&
	    asprintf(&p, "%s/ratelimit", c.path) < 0)
		p = NULL;
	ward_state_choice_release(&c);
	return p;
}

/* The state file, opened read-write (made when missing) and checked to be
 * the caller's alone: at the path given, its missing directories made, or
 * in the state directory (ward_state_choose()). *used: the path, for
 * messages (malloc'd). */
static int open_state(const char *path, char **used, struct ward_error **err)
{
	const int flags = O_RDWR | O_CREAT;
	struct ward_state_choice c;
	int fd = -1;

	if (path) {
		_cleanup_free_ char *d = strdup(path);
		char *s = d ? strrchr(d, '/') : NULL;

		*used = strdup(path);
		if (!d || !*used)
			return ward_error_make(err, ENOMEM, "rate limit");
		/* the directories are there but on the first run: made only then */
		fd = ward_hostpath_open_file("rate limit state", path, WARD_HOSTPATH_PRIVATE_FILE,
					     flags, 0600, NULL);
		if (fd >= 0)
			return fd;
		if (s && s != d) {
			*s = '\0';
			fd = d[0] == '/' ? ward_hostpath_open_dir("rate limit state directory", "/",
								  d + 1, true, false, err) :
					   ward_hostpath_open_dir("rate limit state directory", ".",
								  d, true, false, err);
			if (fd < 0)
				return -1;
			close(fd);
		}
		return ward_hostpath_open_file("rate limit state", path,
					       WARD_HOSTPATH_PRIVATE_FILE, flags, 0600, err);
	}
	if (ward_state_choose(NULL, true, &c, err) == 0) {
		char why[96];
		struct stat st;

		if (asprintf(used, "%s/ratelimit", c.path) < 0) {
			*used = NULL;
			ward_state_choice_release(&c);
			return ward_error_make(err, ENOMEM, "rate limit");
		}
		/* O_NONBLOCK: a FIFO must not hang ward (refused below) */
		fd = openat(c.fd, "ratelimit", flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd < 0) {
			ward_error_make(err, errno, "rate limit state '%s'", *used);
		} else if (fstat(fd, &st) < 0 || fcntl(fd, F_SETFL, 0) < 0) {
			ward_error_make(err, errno, "rate limit state '%s'", *used);
			close(steal_fd(&fd));
		} else if (ward_hostpath_judge(WARD_HOSTPATH_PRIVATE_FILE, &st, geteuid(), why,
					       sizeof(why))) {
			ward_error_make(err, EPERM, "rate limit state '%s' %s", *used, why);
			close(steal_fd(&fd));
		}
	}
	ward_state_choice_release(&c);
	return fd;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ward_ratelimit_take_file(const char *path, unsigned per_minute, unsigned per_hour,
			     unsigned *retry_after_s, struct ward_error **err)
{
	_cleanup_free_ char *def = NULL, *buf = NULL, *out = NULL;
	_cleanup_close_ int fd = -1;
	struct ward_ratelog log = { 0 };
	struct ward_error *perr = NULL;
	struct stat st;
	size_t got = 0;
	int64_t now = now_ms();
	int rc;

	if (retry_after_s)
		*retry_after_s = 0;
	if (!per_minute && !per_hour)
		return 0;
	fd = open_state(path, &def, err);
	if (fd < 0) {
		if (err && *err)
			ward_error_prefix(*err, "rate limit (set XDG_STATE_HOME to a writable "
						"directory of yours, or rate_limit to 0 in the policy)");
		return -1;
	}
	path = def;
	/* Read, decide and write back under one exclusive lock: two ward
	 * processes started at once are both counted. */
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return ward_error_make(err, errno, "lock rate limit state '%s'", path);
	if (fstat(fd, &st) < 0)
		return ward_error_make(err, errno, "rate limit state '%s'", path);
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > STATE_MAX)
		return ward_error_make(err, 0, "rate limit state '%s' is not ward's (not a small "
					       "regular file)", path);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return ward_error_make(err, ENOMEM, "rate limit");
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ward_error_make(err, errno, "read rate limit state '%s'", path);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (ward_ratelog_parse(buf, got, now, &log, &perr) < 0) {
		ward_error_make(err, perr ? perr->code : 0, "rate limit state '%s': %s", path,
				perr ? perr->message : "unreadable");
		ward_error_free(perr);
		return -1;
	}
	rc = ward_ratelog_take(&log, now, per_minute, per_hour, retry_after_s, err);
	if (rc == 0) {
		out = ward_ratelog_format(&log);
		if (!out) {
			rc = ward_error_make(err, ENOMEM, "rate limit");
		} else {
			/* Written over the old text, then cut: a crash in between
			 * leaves lines of times, which still parse. */
			size_t len = strlen(out), done = 0;

			while (done < len) {
				ssize_t n = pwrite(fd, out + done, len - done, (off_t)done);

				if (n < 0 && errno == EINTR)
					continue;
				if (n < 0) {
					rc = ward_error_make(err, errno, "write rate limit state '%s'",
							     path);
					break;
				}
				done += (size_t)n;
			}
			/* cut only what is left of a longer old text */
			if (rc == 0 && (off_t)len < st.st_size && ftruncate(fd, (off_t)len) < 0)
				rc = ward_error_make(err, errno, "write rate limit state '%s'", path);
		}
	}
	ward_ratelog_release(&log);
	return rc;
}
