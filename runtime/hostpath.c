/* hostpath.c — open a host path named by a person, a policy or the
 * environment without letting another local user redirect it
 * (hostpath-internal.h says why the walk below is enough). */
#include "runtime/hostpath-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/util-internal.h"

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

/* ---- the walk ----------------------------------------------------------------------- */

struct walk {
	const char *label, *named; /* for messages: "state directory", the path given */
	char done[PATH_MAX];	   /* the directory reached, as walked (for messages) */
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

/* w->done + "/" + name, for messages (truncated at worst) */
static const char *here(struct walk *w, const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", w->done, name);
	return buf;
}

static int open_root(struct walk *w, struct ward_error **err)
{
	char why[96];
	struct stat st;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	w->done[0] = '\0';
	if (fd < 0)
		return ward_error_make(err, errno, "%s '%s': open '/'", w->label, w->named);
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return ward_error_make(err, e, "%s '%s': stat '/'", w->label, w->named);
	}
	if (ward_hostpath_judge(WARD_HOSTPATH_ANCESTOR, &st, w->uid, why, sizeof(why))) {
		close(fd);
		return refuse(w, EPERM, "/", why, err);
	}
	return fd;
}

/* Walk path (relative components) from the judged directory *dfd, replacing
 * *dfd with each directory reached. 0 when the whole path was walked, 1 when
 * a component is missing and !create, -1 with *err. */
static int walk(struct walk *w, int *dfd, const char *path, bool create, bool private_last,
		struct ward_error **err)
{
	char pend[PATH_MAX], where[PATH_MAX + 256], why[96];

	if (snprintf(pend, sizeof(pend), "%s", path) >= (int)sizeof(pend))
		return ward_error_make(err, ENAMETOOLONG, "%s '%s'", w->label, w->named);
	for (char *p = pend;;) {
		char *comp, *rest;
		struct stat st;
		bool last;
		int fd;

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
		fd = openat(*dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && create) {
			if (mkdirat(*dfd, comp, 0700) < 0 && errno != EEXIST)
				return ward_error_make(err, errno, "%s '%s': mkdir '%s'", w->label,
						       w->named, here(w, comp, where, sizeof(where)));
			fd = openat(*dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0 && errno == ENOENT && !create)
			return 1;
		if (fd < 0 && (errno == ENOTDIR || errno == ELOOP)) {
			char target[PATH_MAX], joined[PATH_MAX];
			struct stat lst;
			ssize_t n;

			here(w, comp, where, sizeof(where));
			if (fstatat(*dfd, comp, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode))
				return refuse(w, ENOTDIR, where, "is not a directory", err);
			if (!ward_hostpath_may_follow(&lst, w->uid)) {
				snprintf(why, sizeof(why),
					 "is a symbolic link owned by uid %u (not followed)",
					 (unsigned)lst.st_uid);
				return refuse(w, ELOOP, where, why, err);
			}
			if (++w->hops > MAX_HOPS)
				return refuse(w, ELOOP, where, "is one symbolic link too many", err);
			n = readlinkat(*dfd, comp, target, sizeof(target) - 1);
			if (n < 0)
				return ward_error_make(err, errno, "%s '%s': readlink '%s'", w->label,
						       w->named, where);
			target[n] = '\0';
			if (snprintf(joined, sizeof(joined), "%s/%s", target, rest) >=
			    (int)sizeof(joined))
				return ward_error_make(err, ENAMETOOLONG, "%s '%s'", w->label,
						       w->named);
			memcpy(pend, joined, strlen(joined) + 1);
			p = pend;
			if (target[0] == '/') {
				int root = open_root(w, err);

				if (root < 0)
					return -1;
				close(*dfd);
				*dfd = root;
			}
			continue;
		}
		if (fd < 0)
			return ward_error_make(err, errno, "%s '%s': open '%s'", w->label, w->named,
					       here(w, comp, where, sizeof(where)));
		if (strcmp(comp, "..") == 0) {
			char *s = strrchr(w->done, '/');

			if (s)
				*s = '\0';
		} else {
			size_t k = strlen(w->done);

			snprintf(w->done + k, sizeof(w->done) - k, "/%s", comp);
		}
		if (fstat(fd, &st) < 0) {
			int e = errno;

			close(fd);
			return ward_error_make(err, e, "%s '%s': stat '%s'", w->label, w->named,
					       w->done);
		}
		if (ward_hostpath_judge(last && private_last ? WARD_HOSTPATH_PRIVATE_DIR :
							       WARD_HOSTPATH_ANCESTOR,
					&st, w->uid, why, sizeof(why))) {
			close(fd);
			return refuse(w, EPERM, w->done, why, err);
		}
		close(*dfd);
		*dfd = fd;
	}
}

/* Start a walk of path: from "/" when absolute, else from the working
 * directory (itself walked from "/": a relative path is only as safe as the
 * directories above it). */
static int start(struct walk *w, const char *path, const char **rel, struct ward_error **err)
{
	_cleanup_free_ char *cwd = NULL;
	int dfd = open_root(w, err);

	*rel = path;
	if (dfd < 0 || path[0] == '/')
		return dfd;
	cwd = getcwd(NULL, 0);
	if (!cwd) {
		close(dfd);
		return ward_error_make(err, errno, "%s '%s': working directory", w->label,
				       w->named);
	}
	switch (walk(w, &dfd, cwd, false, false, err)) {
	case 0:
		return dfd;
	case 1:
		ward_error_make(err, ENOENT, "%s '%s': working directory '%s'", w->label, w->named,
				cwd);
		break;
	}
	close(dfd);
	return -1;
}

int ward_hostpath_open_dir(const char *label, const char *base, const char *sub, bool create,
			   bool private_dir, struct ward_error **err)
{
	struct walk w = { .label = label, .named = base, .uid = geteuid() };
	_cleanup_free_ char *named = NULL;
	const char *rel;
	int dfd, rc;

	if (sub && asprintf(&named, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/",
			    sub) >= 0)
		w.named = named;
	dfd = start(&w, base, &rel, err);
	if (dfd < 0)
		return -1;
	rc = walk(&w, &dfd, rel, false, private_dir && !sub, err);
	if (rc == 1) {
		close(dfd);
		/* what the walk reached, and the part that is missing */
		return refusal(err, ENOENT, "%s '%s': '%s' does not exist", label, w.named, base);
	}
	if (rc == 0 && sub)
		rc = walk(&w, &dfd, sub, create, private_dir, err);
	if (rc != 0) {
		close(dfd);
		return rc == 1 ? WARD_HOSTPATH_ABSENT : -1;
	}
	return dfd;
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
	char dir[PATH_MAX], why[96];
	_cleanup_close_ int dfd = -1, fd = -1;
	const char *base = strrchr(path, '/'), *rel;
	struct stat st;
	int fl, n;

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
	dfd = start(&w, dir, &rel, err);
	if (dfd < 0)
		return -1;
	switch (walk(&w, &dfd, rel, false, false, err)) {
	case 1:
		return ward_error_make(err, ENOENT, "%s '%s'", label, path);
	case -1:
		return -1;
	}
	/* O_NONBLOCK: a FIFO no one writes to (or reads from) must not hang
	 * ward; cleared below */
	fd = openat(dfd, base, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, mode);
	/* ELOOP from O_NOFOLLOW; EACCES when fs.protected_symlinks refuses
	 * another user's link in a sticky directory first */
	if (fd < 0 && (errno == ELOOP || errno == EACCES) &&
	    fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return refusal(err, ELOOP, "%s '%s' is a symbolic link (not followed)", label, path);
	if (fd < 0)
		return ward_error_make(err, errno, "%s '%s'", label, path);
	if (fstat(fd, &st) < 0)
		return ward_error_make(err, errno, "stat %s '%s'", label, path);
	if (ward_hostpath_judge(role, &st, w.uid, why, sizeof(why)))
		return refusal(err, EPERM, "%s '%s' %s", label, path, why);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return ward_error_make(err, errno, "%s '%s'", label, path);
	return steal_fd(&fd);
}
