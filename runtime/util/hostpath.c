/* hostpath.c — open a host path named by a person, a policy or the
 * environment without letting another local user redirect it
 * (util-internal.h says why the walk below is enough). */
#include "runtime/util/util-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>


/* as the kernel's own limit on links followed in one lookup */
#define MAX_HOPS 40

const char *ward_hostpath_judge(enum ward_hostpath_role role, const struct stat *st, uid_t caller,
				char *why, size_t size)
{
	bool dir = role == WARD_HOSTPATH_ANCESTOR || role == WARD_HOSTPATH_PRIVATE_DIR;
	bool root_ok = role != WARD_HOSTPATH_PRIVATE_DIR && role != WARD_HOSTPATH_PRIVATE_FILE;

	if (dir && !S_ISDIR(st->st_mode)) {
		snprintf(why, size, "is not a directory");
		return why;
	}
	if (!dir && !S_ISREG(st->st_mode) &&
	    !(role == WARD_HOSTPATH_CONFIG && S_ISFIFO(st->st_mode))) {
		snprintf(why, size, "is not a regular file");
		return why;
	}
	if (st->st_uid != caller && !(root_ok && st->st_uid == 0)) {
		snprintf(why, size, "is owned by uid %u (not you%s)", (unsigned)st->st_uid,
			 root_ok ? " or root" : "");
		return why;
	}
	/* a sticky directory lets others add names, never rename or remove
	 * ours: a name there is judged on its own */
	if ((st->st_mode & 022) && !(role == WARD_HOSTPATH_ANCESTOR && (st->st_mode & S_ISVTX))) {
		snprintf(why, size, "is writable by %s", st->st_mode & 002 ? "others" : "its group");
		return why;
	}
	/* A hard link planted in a sticky directory (fs.protected_hardlinks=0)
	 * passes every test above when its target is root's: ward writing
	 * through it as root would change that target. */
	if ((role == WARD_HOSTPATH_LOG || role == WARD_HOSTPATH_PRIVATE_FILE) && st->st_nlink > 1) {
		snprintf(why, size, "has %lu hard links", (unsigned long)st->st_nlink);
		return why;
	}
	return NULL;
}

bool ward_hostpath_may_follow(const struct stat *lst, uid_t caller)
{
	return lst->st_uid == 0 || lst->st_uid == caller;
}

/* ---- the walk -----------------------------------------------------------------------
 *
 * Each directory on the way is judged with lstat (fstatat AT_SYMLINK_NOFOLLOW)
 * on the path walked so far, which holds only directories already judged
 * and no symbolic link (a link met is replaced by its target, then walked):
 * no one but the caller and root can change them between that look and the
 * next. The directory reached is then opened in one call that crosses no
 * symbolic link (openat2 RESOLVE_NO_SYMLINKS) and checked to be the very
 * one judged (st_dev, st_ino). One system call per component, where opening
 * each (openat, fstat, close) took three: ward does this on every command. */

struct walk {
	const char *label, *named; /* for messages: "state directory", the path given */
	char done[PATH_MAX];	   /* the directory reached, "" for "/" */
	struct stat st;		   /* what it was, as judged */
	uid_t uid;
	int hops;
};

/* A refusal: the message says why, the errno (EPERM, ELOOP, ENOTDIR) is
 * kept in ->code without its text. */
static int refusal(struct ward_error **err, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refusal(struct ward_error **err, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(err, WARD_ERR_EXECUTION_FAILED, 0, fmt, ap);
	va_end(ap);
	if (err && *err)
		(*err)->code = e;
	return -1;
}

static int refuse(struct walk *w, int e, const char *where, const char *why,
		  struct ward_error **err)
{
	return refusal(err, e, "%s '%s': '%s' %s", w->label, w->named, *where ? where : "/",
		       why);
}

static int to_root(struct walk *w, struct ward_error **err)
{
	char why[96];

	w->done[0] = '\0';
	if (lstat("/", &w->st) < 0)
		return ward_error_make(err, errno, "%s '%s': stat '/'", w->label, w->named);
	if (ward_hostpath_judge(WARD_HOSTPATH_ANCESTOR, &w->st, w->uid, why, sizeof(why)))
		return refuse(w, EPERM, "/", why, err);
	return 0;
}

/* Walk path (components, relative to w->done) on from w->done. 0 when the
 * whole path was walked, 1 when a component is missing and !create, -1 with
 * *err. */
static int walk(struct walk *w, const char *path, bool create, bool private_last,
		struct ward_error **err)
{
	char pend[PATH_MAX], cand[PATH_MAX], why[96];

	if (snprintf(pend, sizeof(pend), "%s", path) >= (int)sizeof(pend))
		return ward_error_make(err, ENAMETOOLONG, "%s '%s'", w->label, w->named);
	for (char *p = pend;;) {
		char *comp, *rest;
		struct stat st;
		bool last;

		while (*p == '/')
			p++;
		if (!*p)
			return 0;
		comp = p;
		rest = strchr(p, '/');
		if (rest)
			*rest++ = '\0';
		else
			rest = p + strlen(p);
		while (*rest == '/')
			rest++;
		last = *rest == '\0';
		p = rest;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			/* done holds no link: its parent is its text's */
			char *s = strrchr(w->done, '/');

			if (s)
				*s = '\0';
			if (lstat(*w->done ? w->done : "/", &w->st) < 0)
				return ward_error_make(err, errno, "%s '%s': stat '%s'", w->label,
						       w->named, *w->done ? w->done : "/");
			continue;
		}
		if (snprintf(cand, sizeof(cand), "%s/%s", w->done, comp) >= (int)sizeof(cand))
			return ward_error_make(err, ENAMETOOLONG, "%s '%s'", w->label, w->named);
		if (lstat(cand, &st) < 0) {
			if (errno != ENOENT)
				return ward_error_make(err, errno, "%s '%s': stat '%s'", w->label,
						       w->named, cand);
			if (!create)
				return 1;
			if (mkdir(cand, 0700) < 0 && errno != EEXIST)
				return ward_error_make(err, errno, "%s '%s': mkdir '%s'", w->label,
						       w->named, cand);
			if (lstat(cand, &st) < 0)
				return ward_error_make(err, errno, "%s '%s': stat '%s'", w->label,
						       w->named, cand);
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX], joined[PATH_MAX];
			ssize_t n;

			if (!ward_hostpath_may_follow(&st, w->uid)) {
				snprintf(why, sizeof(why),
					 "is a symbolic link owned by uid %u (not followed)",
					 (unsigned)st.st_uid);
				return refuse(w, ELOOP, cand, why, err);
			}
			if (++w->hops > MAX_HOPS)
				return refuse(w, ELOOP, cand, "is one symbolic link too many", err);
			n = readlink(cand, target, sizeof(target) - 1);
			if (n < 0)
				return ward_error_make(err, errno, "%s '%s': readlink '%s'", w->label,
						       w->named, cand);
			target[n] = '\0';
			if (snprintf(joined, sizeof(joined), "%s/%s", target, rest) >=
			    (int)sizeof(joined))
				return ward_error_make(err, ENAMETOOLONG, "%s '%s'", w->label,
						       w->named);
			memcpy(pend, joined, strlen(joined) + 1);
			p = pend;
			if (target[0] == '/' && to_root(w, err) < 0)
				return -1;
			continue;
		}
		if (ward_hostpath_judge(last && private_last ? WARD_HOSTPATH_PRIVATE_DIR :
							       WARD_HOSTPATH_ANCESTOR,
					&st, w->uid, why, sizeof(why)))
			return refuse(w, S_ISDIR(st.st_mode) ? EPERM : ENOTDIR, cand, why, err);
		memcpy(w->done, cand, strlen(cand) + 1);
		w->st = st;
	}
}

/* Open the directory the walk reached: crossing no symbolic link, and
 * the one judged. An O_PATH descriptor, or -1 with *err. */
static int open_done(struct walk *w, struct ward_error **err)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	const char *path = *w->done ? w->done : "/";
	struct stat st;
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	/* before Linux 5.6: the walk's checks stand alone (no one else can
	 * change what it looked at); the last component is still not followed */
	if (fd < 0 && errno == ENOSYS)
		fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ward_error_make(err, errno, "%s '%s': open '%s'", w->label, w->named, path);
	if (fstat(fd, &st) < 0 || st.st_dev != w->st.st_dev || st.st_ino != w->st.st_ino) {
		close(fd);
		return refuse(w, EAGAIN, path, "changed while it was checked", err);
	}
	return fd;
}

/* Start a walk of path: from "/" when absolute, else from the working
 * directory (itself walked from "/": a relative path is only as safe as the
 * directories above it). */
static int start(struct walk *w, const char *path, struct ward_error **err)
{
	_cleanup_free_ char *cwd = NULL;

	if (to_root(w, err) < 0)
		return -1;
	if (path[0] == '/')
		return 0;
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return ward_error_make(err, errno, "%s '%s': working directory", w->label,
				       w->named);
	switch (walk(w, cwd, false, false, err)) {
	case 0:
		return 0;
	case 1:
		return ward_error_make(err, ENOENT, "%s '%s': working directory '%s'", w->label,
				       w->named, cwd);
	}
	return -1;
}

int ward_hostpath_open_dir(const char *label, const char *base, const char *sub, bool create,
			   bool private_dir, struct ward_error **err)
{
	struct walk w = { .label = label, .named = base, .uid = geteuid() };
	_cleanup_free_ char *named = NULL;
	int rc;

	if (sub && asprintf(&named, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/",
			    sub) >= 0)
		w.named = named;
	if (start(&w, base, err) < 0)
		return -1;
	rc = walk(&w, base, false, private_dir && !sub, err);
	if (rc == 1)
		/* what the walk reached, and the part that is missing */
		return refusal(err, ENOENT, "%s '%s': '%s' does not exist", label, w.named, base);
	if (rc == 0 && sub)
		rc = walk(&w, sub, create, private_dir, err);
	if (rc != 0)
		return rc == 1 ? WARD_HOSTPATH_ABSENT : -1;
	return open_done(&w, err);
}

/* "/dev/stdin", "/dev/fd/N", "/proc/self/fd/N": N, else -1 */
static int own_fd(const char *path)
{
	const char *s = NULL;
	char *end;
	long n;

	if (strcmp(path, "/dev/stdin") == 0)
		return 0;
	if (strncmp(path, "/dev/fd/", 8) == 0)
		s = path + 8;
	else if (strncmp(path, "/proc/self/fd/", 14) == 0)
		s = path + 14;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	return *end || errno || n > INT_MAX ? -1 : (int)n;
}

int ward_hostpath_open_file(const char *label, const char *path, enum ward_hostpath_role role,
			    int flags, mode_t mode, struct ward_error **err)
{
	struct walk w = { .label = label, .named = path, .uid = geteuid() };
	char dir[PATH_MAX], full[PATH_MAX + NAME_MAX + 2], why[96];
	struct open_how how = { 0 };
	_cleanup_close_ int fd = -1;
	const char *base = strrchr(path, '/');
	struct stat st;
	int n;

	/* --policy <(...): a descriptor the person's shell opened for us */
	if (role == WARD_HOSTPATH_CONFIG && (n = own_fd(path)) >= 0) {
		fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return ward_error_make(err, errno, "%s '%s'", label, path);
		return steal_fd(&fd);
	}
	base = base ? base + 1 : path;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return ward_error_make(err, EISDIR, "%s '%s'", label, path);
	if (snprintf(dir, sizeof(dir), "%.*s", (int)(base - path), path) >= (int)sizeof(dir))
		return ward_error_make(err, ENAMETOOLONG, "%s '%s'", label, path);
	if (start(&w, dir, err) < 0)
		return -1;
	switch (walk(&w, dir, false, false, err)) {
	case 1:
		return ward_error_make(err, ENOENT, "%s '%s'", label, path);
	case -1:
		return -1;
	}
	if (snprintf(full, sizeof(full), "%s/%s", w.done, base) >= (int)sizeof(full))
		return ward_error_make(err, ENAMETOOLONG, "%s '%s'", label, path);
	/* Crossing no symbolic link, the last one included (the directories
	 * on the way are as judged: no one else can change them). O_NONBLOCK:
	 * a FIFO no one writes to (or reads from) must not hang ward; cleared
	 * below. */
	how.flags = (unsigned)(flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	how.mode = flags & O_CREAT ? mode : 0;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, full, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = open(full, (int)how.flags, mode);
	/* ELOOP for a link; EACCES when fs.protected_symlinks refuses another
	 * user's link in a sticky directory first */
	if (fd < 0 && (errno == ELOOP || errno == EACCES) && lstat(full, &st) == 0 &&
	    S_ISLNK(st.st_mode))
		return refusal(err, ELOOP, "%s '%s' is a symbolic link (not followed)", label, path);
	if (fd < 0)
		return ward_error_make(err, errno, "%s '%s'", label, path);
	if (fstat(fd, &st) < 0)
		return ward_error_make(err, errno, "stat %s '%s'", label, path);
	if (ward_hostpath_judge(role, &st, w.uid, why, sizeof(why)))
		return refusal(err, EPERM, "%s '%s' %s", label, path, why);
	/* F_SETFL sets only the status flags: O_APPEND stays as asked */
	if (fcntl(fd, F_SETFL, flags & O_APPEND) < 0)
		return ward_error_make(err, errno, "%s '%s'", label, path);
	return steal_fd(&fd);
}
