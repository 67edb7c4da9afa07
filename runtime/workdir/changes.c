/* changes.c — change sets: an overlay upper directory read against the real
 * workdir, applied file by file (temporary name, then rename), kept under the
 * state directory, discarded, shown as a unified diff. */
#include "ward/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/openat2.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "runtime/workdir/workdir-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/request.h"

struct ward_changeset {
	char *upper;   /* the overlay's upper directory */
	char *workdir; /* the real workdir (the overlay's lower) */
	char *storage; /* the directory removed on discard, or NULL */
	char *state;   /* the state directory (for keep) */
	char name[64]; /* kept name */
	bool settled;
	bool force;    /* apply over conflicts */
	json_t *base;  /* a kept set's workdir when the command ran, or NULL */
	int lock_fd;   /* the run directory's flock, held while storage is a run's */
	struct ward_change *v;
	size_t n, cap;
};

size_t ward_changeset_count(const struct ward_changeset *cs)
{
	return cs->n;
}

const struct ward_change *ward_changeset_get(const struct ward_changeset *cs, size_t i)
{
	return i < cs->n ? &cs->v[i] : NULL;
}

const char *ward_changeset_workdir(const struct ward_changeset *cs)
{
	return cs->workdir;
}

const char *ward_changeset_name(const struct ward_changeset *cs)
{
	return cs->name;
}

bool ward_changeset_busy(const struct ward_changeset *cs)
{
	int fd;
	bool busy;

	if (!cs->name[0] || !cs->storage)
		return false;
	fd = open(cs->storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_EX | LOCK_NB) < 0;
	close(fd);
	return busy;
}

bool ward_changeset_settled(const struct ward_changeset *cs)
{
	return cs->settled;
}

void ward_changeset_free(struct ward_changeset *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++) {
		free(cs->v[i].path);
		free(cs->v[i].target);
	}
	free(cs->v);
	free(cs->upper);
	free(cs->workdir);
	free(cs->storage);
	free(cs->state);
	json_decref(cs->base);
	if (cs->lock_fd >= 0)
		close(cs->lock_fd);
	free(cs);
}

void ward_changeset_set_force(struct ward_changeset *cs, bool force)
{
	cs->force = force;
}

void ward_changeset_own(struct ward_changeset *cs, char *rundir, const char *state_dir,
			int lock_fd)
{
	free(cs->storage);
	cs->storage = rundir;
	if (cs->lock_fd >= 0)
		close(cs->lock_fd);
	cs->lock_fd = lock_fd;
	free(cs->state);
	cs->state = NULL;
	if (state_dir) {
		cs->state = strdup(state_dir);
	} else if (rundir) {
		/* STATE/runs/ID */
		char *s = strdup(rundir), *slash;

		for (int k = 0; s && k < 2 && (slash = strrchr(s, '/')); k++)
			*slash = '\0';
		cs->state = s;
	}
}

static int write_base(const struct ward_changeset *cs, const char *path, struct ward_error **err);

void ward_changeset_own_kept(struct ward_changeset *cs, const char *dir, const char *name,
			     const char *state_dir)
{
	char path[PATH_MAX];

	free(cs->storage);
	free(cs->state);
	cs->storage = strdup(dir);
	cs->state = strdup(state_dir);
	snprintf(cs->name, sizeof(cs->name), "%s", name);
	/* what this run added to the set joins its base */
	if ((size_t)snprintf(path, sizeof(path), "%s/base.json", dir) < sizeof(path)) {
		json_decref(cs->base);
		cs->base = json_load_file(path, 0, NULL);
		if (write_base(cs, path, NULL) == 0) {
			json_decref(cs->base);
			cs->base = json_load_file(path, 0, NULL);
		}
	}
}

/* ---- scan ---------------------------------------------------------------------- */

/* Every walk below works from descriptors, top down: each directory is
 * opened from its parent's descriptor with O_NOFOLLOW | O_DIRECTORY, each
 * entry looked at with AT_SYMLINK_NOFOLLOW. The command may have made any
 * name a symbolic link (in the upper directory, or, by an earlier apply, in
 * the workdir) and, while a session's sandbox lives, may swap a directory
 * for one between two of our steps: a path string would then lead ward into
 * the host's /etc and list or diff what it holds. A link is an entry with
 * its target text, never a way through. */

static enum ward_file_type type_of(const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return WARD_FT_FILE;
	if (S_ISDIR(st->st_mode))
		return WARD_FT_DIR;
	if (S_ISLNK(st->st_mode))
		return WARD_FT_SYMLINK;
	return WARD_FT_OTHER;
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == 0;
}

const char *ward_change_warning_name(unsigned bit)
{
	switch (bit) {
	case WARD_CHANGE_WARN_SETID:
		return "setid-stripped";
	case WARD_CHANGE_WARN_CAPS:
		return "capabilities-dropped";
	case WARD_CHANGE_WARN_LINK_OUT:
		return "symlink-outside-workdir";
	}
	return NULL;
}

/* The mode apply gives entry c: never set-uid, never set-gid, except a
 * directory that had the set-gid bit already (a shared group directory;
 * it makes nothing run as anyone). */
static mode_t applied_mode(const struct ward_change *c)
{
	mode_t m = c->mode & ~(mode_t)(S_ISUID | S_ISGID);

	if (c->type == WARD_FT_DIR && c->old_type == WARD_FT_DIR)
		m |= c->mode & c->old_mode & S_ISGID;
	return m;
}

/* Whether a link at rel (relative to the workdir) with this target text
 * leads outside the workdir, read lexically: an absolute target not below
 * the workdir, or a relative one climbing above the workdir's top. What
 * other links on the way do is theirs to be reported. Pure. */
static bool link_leaves(const char *workdir, const char *rel, const char *target)
{
	int depth = 0;
	const char *p;

	if (target[0] == '/') {
		size_t n = strlen(workdir);
		char *norm = malloc(strlen(target) + 2), *o = norm;
		bool inside;

		if (!norm)
			return true;
		/* "//", "/./" and "/x/../" folded; ".." above "/" stays "/" */
		for (p = target; *p;) {
			const char *e;
			size_t len;

			while (*p == '/')
				p++;
			e = p + strcspn(p, "/");
			len = (size_t)(e - p);
			if (len == 2 && p[0] == '.' && p[1] == '.') {
				while (o > norm && *--o != '/')
					;
			} else if (len && !(len == 1 && p[0] == '.')) {
				*o++ = '/';
				memcpy(o, p, len);
				o += len;
			}
			p = e;
		}
		*o = '\0';
		inside = n > 0 && strncmp(norm, workdir, n) == 0 &&
			 (norm[n] == '\0' || norm[n] == '/' || (n == 1 && workdir[0] == '/'));
		free(norm);
		return !inside;
	}
	/* the link's own directory: the components of rel but its last */
	for (p = rel; (p = strchr(p, '/')); p++)
		depth++;
	for (p = target; *p;) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return true;
		} else if (len && !(len == 1 && p[0] == '.')) {
			depth++;
		}
		p += len;
		while (*p == '/')
			p++;
	}
	return false;
}

/* "/proc/self/fd/N/name": name in the directory open at dfd, for calls that
 * have no *at() form (lgetxattr). The directory is the one held, whatever
 * happened to its path; name itself is not followed by l*() calls. */
static bool fd_path(char *buf, size_t size, int dfd, const char *name)
{
	return (size_t)snprintf(buf, size, "/proc/self/fd/%d/%s", dfd, name) < size;
}

/* What set-id bits or capabilities the entry name (now: st) in the upper
 * directory open at ufd would bring along. */
static unsigned warnings_of(const struct ward_changeset *cs, int ufd, const char *name,
			    const char *rel, const struct stat *st, const struct stat *old,
			    const char *target)
{
	unsigned w = 0;
	char path[PATH_MAX];

	if (S_ISREG(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID)))
		w |= WARD_CHANGE_WARN_SETID;
	if (S_ISDIR(st->st_mode) &&
	    ((st->st_mode & S_ISUID) ||
	     ((st->st_mode & S_ISGID) && !(old && S_ISDIR(old->st_mode) && (old->st_mode & S_ISGID)))))
		w |= WARD_CHANGE_WARN_SETID;
	if (S_ISREG(st->st_mode) && fd_path(path, sizeof(path), ufd, name) &&
	    lgetxattr(path, "security.capability", NULL, 0) >= 0)
		w |= WARD_CHANGE_WARN_CAPS;
	if (target && link_leaves(cs->workdir, rel, target))
		w |= WARD_CHANGE_WARN_LINK_OUT;
	return w;
}

/* A symbolic link's target text, malloc'd; NULL when unreadable. */
static char *link_at(int dfd, const char *name)
{
	char buf[PATH_MAX];
	ssize_t n = readlinkat(dfd, name, buf, sizeof(buf) - 1);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/* One entry. ufd/name: where it is in the upper directory (ufd < 0 for an
 * entry that is only deleted). */
static int emit(struct ward_changeset *cs, enum ward_change_kind kind, const char *rel,
		const struct stat *now, const struct stat *old, int ufd, const char *name,
		struct ward_error **err)
{
	struct ward_change *c;

	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 32;
		struct ward_change *g = realloc(cs->v, cap * sizeof(*g));

		if (!g)
			return ward_error_make(err, ENOMEM, "change set");
		cs->v = g;
		cs->cap = cap;
	}
	c = &cs->v[cs->n];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->path = strdup(rel);
	if (!c->path)
		return ward_error_make(err, ENOMEM, "change set");
	c->type = now ? type_of(now) : WARD_FT_NONE;
	c->old_type = old ? type_of(old) : WARD_FT_NONE;
	c->mode = now ? now->st_mode & 07777 : 0;
	c->old_mode = old ? old->st_mode & 07777 : 0;
	c->size = !now ? -1 : S_ISDIR(now->st_mode) ? 0 : (int64_t)now->st_size;
	c->old_size = !old ? -1 : S_ISDIR(old->st_mode) ? 0 : (int64_t)old->st_size;
	c->old_mtime_ns = old ? (int64_t)old->st_mtim.tv_sec * 1000000000 + old->st_mtim.tv_nsec : 0;
	c->old_ino = old ? (uint64_t)old->st_ino : 0;
	cs->n++;
	if (now && ufd >= 0) {
		if (S_ISLNK(now->st_mode))
			c->target = link_at(ufd, name);
		c->warn = warnings_of(cs, ufd, name, rel, now, old, c->target);
	}
	return 0;
}

/* root + "/" + rel; false (errno ENAMETOOLONG) when it does not fit. */
static bool join(char *buf, size_t size, const char *root, const char *rel)
{
	if ((size_t)snprintf(buf, size, "%s%s%s", root, *rel ? "/" : "", rel) < size)
		return true;
	errno = ENAMETOOLONG;
	return false;
}

/* rel + "/" + name, or name alone at the top. */
static bool sub(char *buf, size_t size, const char *rel, const char *name)
{
	if ((size_t)snprintf(buf, size, "%s%s%s", rel, *rel ? "/" : "", name) < size)
		return true;
	errno = ENAMETOOLONG;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory name in dfd, never through a symbolic link; -1 otherwise. */
static int open_dir_at(int dfd, const char *name)
{
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The names in the directory open at dfd, sorted; NULL-terminated. dfd < 0
 * or an unreadable directory gives an empty list. dfd stays ours (and its
 * offset unmoved: the listing reads a descriptor of its own). */
static char **names_at(int dfd, struct ward_error **err)
{
	int fd = dfd < 0 ? -1 : openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	char **v = calloc(1, sizeof(*v));
	size_t n = 0;

	if (fd >= 0 && !d)
		close(fd);
	if (!v) {
		if (d)
			closedir(d);
		ward_error_make(err, ENOMEM, "change set");
		return NULL;
	}
	while (d && (e = readdir(d))) {
		char **g;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		g = realloc(v, (n + 2) * sizeof(*v));
		if (!g || !(g[n] = strdup(e->d_name))) {
			if (g)
				v = g;
			ward_protect_strv_free(v);
			closedir(d);
			ward_error_make(err, ENOMEM, "change set");
			return NULL;
		}
		v = g;
		v[++n] = NULL;
	}
	if (d)
		closedir(d);
	qsort(v, n, sizeof(*v), cmp_str);
	return v;
}

/* The same for a directory of ward's own state, by path (its last component
 * not followed). */
static char **names_of(const char *dir, struct ward_error **err)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return names_at(fd, err);
}

static bool contains(char *const *v, const char *s)
{
	for (; *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

/* Every entry below a real directory that is gone (open at lfd), as deleted. */
static int emit_deleted_below(struct ward_changeset *cs, int lfd, const char *rel,
			      struct ward_error **err)
{
	char r[PATH_MAX];
	char **names = names_at(lfd, err);
	int rc = 0;

	if (!names)
		return -1;
	for (size_t i = 0; names[i] && rc == 0; i++) {
		struct stat st;

		if (!sub(r, sizeof(r), rel, names[i])) {
			rc = ward_error_make(err, errno, "change set: '%s/%s'", rel, names[i]);
			break;
		}
		if (fstatat(lfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		rc = emit(cs, WARD_CHANGE_DELETED, r, NULL, &st, -1, NULL, err);
		if (rc == 0 && S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sfd = open_dir_at(lfd, names[i]);

			/* a link swapped in since: nothing of ours below it */
			if (sfd >= 0)
				rc = emit_deleted_below(cs, sfd, r, err);
		}
	}
	ward_protect_strv_free(names);
	return rc;
}

/* A regular file name in dfd, opened for reading without following a link,
 * and without blocking on a FIFO swapped in; -1 (errno) for anything else. */
static int open_file_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

static bool same_content(int ufd, int lfd, const char *name)
{
	_cleanup_close_ int fa = open_file_at(ufd, name);
	_cleanup_close_ int fb = open_file_at(lfd, name);
	char ba[65536], bb[65536];

	if (fa < 0 || fb < 0)
		return false;
	for (;;) {
		ssize_t na = read(fa, ba, sizeof(ba)), nb;
		size_t got = 0;

		if (na < 0)
			return false;
		while (got < (size_t)na) {
			nb = read(fb, bb + got, (size_t)na - got);
			if (nb <= 0)
				return false;
			got += (size_t)nb;
		}
		if (na == 0)
			return read(fb, bb, 1) == 0;
		if (memcmp(ba, bb, (size_t)na) != 0)
			return false;
	}
}

static bool same_link(int ufd, int lfd, const char *name)
{
	char la[PATH_MAX], lb[PATH_MAX];
	ssize_t na = readlinkat(ufd, name, la, sizeof(la)),
		nb = readlinkat(lfd, name, lb, sizeof(lb));

	return na >= 0 && na == nb && memcmp(la, lb, (size_t)na) == 0;
}

static bool is_opaque(int dfd)
{
	char v[4];
	ssize_t n = fgetxattr(dfd, "user.overlay.opaque", v, sizeof(v));

	return n >= 1 && v[0] == 'y';
}

/* The upper directory open at ufd against the real one at lfd (-1 when
 * there is none: the directory is new, or replaced a file or a link). */
static int scan_dir(struct ward_changeset *cs, int ufd, int lfd, const char *rel, bool opaque,
		    struct ward_error **err)
{
	char **names, **lnames = NULL;
	int rc = 0;

	names = names_at(ufd, err);
	if (!names)
		return -1;
	for (size_t i = 0; names[i] && rc == 0; i++) {
		const char *name = names[i];
		char r[PATH_MAX];
		struct stat us, ls;
		bool have_l;

		if (!sub(r, sizeof(r), rel, name)) {
			rc = ward_error_make(err, errno, "change set: '%s/%s'", rel, name);
			break;
		}
		if (fstatat(ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		have_l = lfd >= 0 && fstatat(lfd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0;
		if (is_whiteout(&us)) {
			if (!have_l)
				continue;
			rc = emit(cs, WARD_CHANGE_DELETED, r, NULL, &ls, -1, NULL, err);
			if (rc == 0 && S_ISDIR(ls.st_mode)) {
				_cleanup_close_ int sfd = open_dir_at(lfd, name);

				if (sfd >= 0)
					rc = emit_deleted_below(cs, sfd, r, err);
			}
			continue;
		}
		if (S_ISDIR(us.st_mode)) {
			_cleanup_close_ int usub = open_dir_at(ufd, name);
			_cleanup_close_ int lsub = -1;
			bool op;

			if (usub < 0) {
				rc = ward_error_make(err, errno, "change set: '%s' changed while read", r);
				break;
			}
			op = opaque || is_opaque(usub);
			if (!have_l) {
				rc = emit(cs, WARD_CHANGE_ADDED, r, &us, NULL, ufd, name, err);
			} else if (!S_ISDIR(ls.st_mode)) {
				rc = emit(cs, WARD_CHANGE_REPLACED, r, &us, &ls, ufd, name, err);
			} else if ((us.st_mode & 07777) != (ls.st_mode & 07777)) {
				rc = emit(cs, WARD_CHANGE_MODE, r, &us, &ls, ufd, name, err);
			}
			/* only a real directory is compared with; a link there (or
			 * swapped in since the fstatat) is not looked through */
			if (have_l && S_ISDIR(ls.st_mode))
				lsub = open_dir_at(lfd, name);
			if (rc == 0)
				rc = scan_dir(cs, usub, lsub, r, op, err);
			continue;
		}
		if (!have_l) {
			rc = emit(cs, WARD_CHANGE_ADDED, r, &us, NULL, ufd, name, err);
		} else if (type_of(&us) != type_of(&ls)) {
			rc = emit(cs, WARD_CHANGE_REPLACED, r, &us, &ls, ufd, name, err);
			if (rc == 0 && S_ISDIR(ls.st_mode)) {
				_cleanup_close_ int sfd = open_dir_at(lfd, name);

				if (sfd >= 0)
					rc = emit_deleted_below(cs, sfd, r, err);
			}
		} else if (S_ISREG(us.st_mode)) {
			if (us.st_size != ls.st_size || !same_content(ufd, lfd, name))
				rc = emit(cs, WARD_CHANGE_MODIFIED, r, &us, &ls, ufd, name, err);
			else if ((us.st_mode & 07777) != (ls.st_mode & 07777))
				rc = emit(cs, WARD_CHANGE_MODE, r, &us, &ls, ufd, name, err);
		} else if (S_ISLNK(us.st_mode)) {
			if (!same_link(ufd, lfd, name))
				rc = emit(cs, WARD_CHANGE_MODIFIED, r, &us, &ls, ufd, name, err);
		} else if ((us.st_mode & 07777) != (ls.st_mode & 07777) || us.st_rdev != ls.st_rdev) {
			rc = emit(cs, WARD_CHANGE_MODIFIED, r, &us, &ls, ufd, name, err);
		}
	}
	/* An opaque directory hides everything of the real one not in it. */
	if (rc == 0 && opaque && lfd >= 0) {
		lnames = names_at(lfd, err);
		if (!lnames)
			rc = -1;
		for (size_t i = 0; rc == 0 && lnames[i]; i++) {
			char r[PATH_MAX];
			struct stat ls;

			if (contains(names, lnames[i]))
				continue;
			if (!sub(r, sizeof(r), rel, lnames[i])) {
				rc = ward_error_make(err, errno, "change set: '%s/%s'", rel, lnames[i]);
				break;
			}
			if (fstatat(lfd, lnames[i], &ls, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			rc = emit(cs, WARD_CHANGE_DELETED, r, NULL, &ls, -1, NULL, err);
			if (rc == 0 && S_ISDIR(ls.st_mode)) {
				_cleanup_close_ int sfd = open_dir_at(lfd, lnames[i]);

				if (sfd >= 0)
					rc = emit_deleted_below(cs, sfd, r, err);
			}
		}
	}
	ward_protect_strv_free(lnames);
	ward_protect_strv_free(names);
	return rc;
}

static int cmp_change(const void *a, const void *b)
{
	return strcmp(((const struct ward_change *)a)->path, ((const struct ward_change *)b)->path);
}

struct ward_changeset *ward_changeset_scan(const char *upper, const char *lower,
					   struct ward_error **err)
{
	struct ward_changeset *cs = calloc(1, sizeof(*cs));
	_cleanup_close_ int ufd = -1;
	_cleanup_close_ int lfd = -1;
	struct stat us, ls;

	if (cs)
		cs->lock_fd = -1;
	if (!cs || !(cs->upper = strdup(upper)) || !(cs->workdir = strdup(lower))) {
		ward_changeset_free(cs);
		ward_error_make(err, ENOMEM, "change set");
		return NULL;
	}
	/* both tops as named (the person's workdir, ward's own upper); below
	 * them nothing is followed */
	ufd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0 || fstat(ufd, &us) < 0) {
		ward_error_make(err, errno, "change set '%s'", upper);
		ward_changeset_free(cs);
		return NULL;
	}
	lfd = open(lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* the workdir's own mode (the upper's root is the merged root) */
	if (lfd >= 0 && fstat(lfd, &ls) == 0 && (us.st_mode & 07777) != (ls.st_mode & 07777) &&
	    emit(cs, WARD_CHANGE_MODE, "", &us, &ls, -1, NULL, err) < 0)
		goto fail;
	if (cs->n)
		cs->v[0].warn = (us.st_mode & S_ISUID) ||
					(us.st_mode & ~ls.st_mode & S_ISGID) ?
				WARD_CHANGE_WARN_SETID :
				0;
	if (scan_dir(cs, ufd, lfd, "", is_opaque(ufd), err) < 0)
		goto fail;
	if (cs->n)
		qsort(cs->v, cs->n, sizeof(*cs->v), cmp_change);
	return cs;
fail:
	ward_changeset_free(cs);
	return NULL;
}

/* ---- apply ------------------------------------------------------------------------ */

/* The parent directory of rel below the directory open at wfd (the
 * workdir, or the upper directory), never through a symbolic link or out of
 * it; *name points at rel's last component. */
static int open_parent(int wfd, const char *rel, const char **name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rel, '/');

	*name = slash ? slash + 1 : rel;
	if (!slash)
		return openat(wfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	/* beneath wfd, no link on the way */
	return ward_open_nofollow(wfd, dir, O_PATH | O_DIRECTORY, true);
}

/* Whether name in dfd is a directory (not a link to one). errno ENOTDIR if not. */
static bool dir_at(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
		return true;
	errno = ENOTDIR;
	return false;
}

static int copy_fd(int in, int out)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if (ward_write_all(out, buf, (size_t)n) < 0)
			return -1;
	}
}

static atomic_uint tmp_seq;

/* Write the upper's file or link (the upper directory open at ufd) to a
 * temporary name next to its target, then rename it over. Both sides are
 * reached from their tops without following a symbolic link. The mode is
 * applied_mode(): no set-id bits; extended attributes (file capabilities
 * among them) are not copied. */
static int put_entry(struct ward_changeset *cs, int ufd, int wfd, struct ward_change *c,
		     struct ward_error **err)
{
	char tmp[64];
	const char *name, *uname;
	_cleanup_close_ int pfd = open_parent(wfd, c->path, &name);
	_cleanup_close_ int upfd = open_parent(ufd, c->path, &uname);

	if (pfd < 0)
		return ward_error_make(err, errno, "apply '%s': open its directory", c->path);
	if (upfd < 0)
		return ward_error_make(err, errno, "apply '%s': open its directory in the change set",
				       c->path);
	snprintf(tmp, sizeof(tmp), ".ward-apply-%d-%u", (int)getpid(), atomic_fetch_add(&tmp_seq, 1));
	if (c->type == WARD_FT_SYMLINK) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(upfd, uname, target, sizeof(target) - 1);

		if (n < 0)
			return ward_error_make(err, errno, "apply '%s': read the link", c->path);
		target[n] = '\0';
		if (symlinkat(target, pfd, tmp) < 0)
			return ward_error_make(err, errno, "apply '%s': symlink", c->path);
	} else {
		_cleanup_close_ int in = open_file_at(upfd, uname);
		_cleanup_close_ int out = -1;
		struct stat st;

		if (in < 0 || fstat(in, &st) < 0)
			return ward_error_make(err, errno, "apply '%s': open it in the change set",
					       c->path);
		/* what the scan did not see (a set changed since): same rule */
		if (st.st_mode & (S_ISUID | S_ISGID))
			c->warn |= WARD_CHANGE_WARN_SETID;
		if (fgetxattr(in, "security.capability", NULL, 0) >= 0)
			c->warn |= WARD_CHANGE_WARN_CAPS;
		out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0)
			return ward_error_make(err, errno, "apply '%s': create a temporary file",
					       c->path);
		if (copy_fd(in, out) < 0 || fchmod(out, applied_mode(c)) < 0) {
			int e = errno;

			unlinkat(pfd, tmp, 0);
			return ward_error_make(err, e, "apply '%s': write", c->path);
		}
	}
	if (renameat(pfd, tmp, pfd, name) < 0) {
		int e = errno;

		unlinkat(pfd, tmp, 0);
		return ward_error_make(err, e, "apply '%s': rename into place", c->path);
	}
	return 0;
}

static int remove_entry(int wfd, const char *rel, struct ward_error **err)
{
	const char *name;
	_cleanup_close_ int pfd = open_parent(wfd, rel, &name);
	struct stat st;

	if (pfd < 0)
		return errno == ENOENT ? 0 : ward_error_make(err, errno, "apply: remove '%s'", rel);
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISDIR(st.st_mode)) {
		/* through the parent's descriptor: no symbolic link on the way */
		if (ward_rmtree_at(pfd, name) < 0)
			return ward_error_make(err, errno, "apply: remove '%s'", rel);
		return 0;
	}
	if (unlinkat(pfd, name, 0) < 0 && errno != ENOENT)
		return ward_error_make(err, errno, "apply: remove '%s'", rel);
	return 0;
}

static int refuse_protected(struct ward_changeset *cs, const struct ward_protect *protect,
			    struct ward_error **err)
{
	struct ward_protect *defaults = NULL;
	char **resolved;
	char list[WARD_ERROR_MESSAGE_MAX / 2] = "";
	size_t len = 0, hits = 0;

	if (!protect)
		protect = defaults = ward_protect_new(true, err);
	if (!protect)
		return -1;
	resolved = ward_protect_resolve(protect, cs->workdir, err);
	if (!resolved) {
		ward_protect_free(defaults);
		return -1;
	}
	for (size_t i = 0; i < cs->n; i++) {
		if (!ward_protect_touches(resolved, cs->v[i].path) &&
		    !ward_protect_git_change_denied(protect, &cs->v[i]) &&
		    !(cs->v[i].kind != WARD_CHANGE_DELETED && ward_gitmeta_in_gitdir(cs->v[i].path) &&
		      ward_gitmeta_state_refused(cs->upper, cs->v[i].path)) &&
		    !(cs->v[i].kind != WARD_CHANGE_DELETED &&
		      ward_gitindex_workdir_refused(cs->upper, cs->workdir, cs->v[i].path)))
			continue;
		if (len < sizeof(list) - 1)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s'%s'",
						hits ? ", " : "", cs->v[i].path);
		hits++;
	}
	ward_protect_strv_free(resolved);
	ward_protect_free(defaults);
	if (!hits)
		return 0;
	ward_error_make_kind(err, WARD_ERR_NOT_AUTHORIZED, 0,
			     "change set touches %zu protected path%s, nothing applied: %s", hits,
			     hits == 1 ? "" : "s", list);
	if (err && *err)
		ward_error_set_rule(*err, "protected-path");
	return -1;
}

/* The real file of entry c as [type, inode, size, mtime]; directories by
 * type and inode only (their times change with what is inside). */
static json_t *base_of(const struct ward_change *c)
{
	bool dir = c->old_type == WARD_FT_DIR;

	return json_pack("[iIII]", (int)c->old_type, (json_int_t)c->old_ino,
			 (json_int_t)(dir ? 0 : c->old_size), (json_int_t)(dir ? 0 : c->old_mtime_ns));
}

static int refuse_conflicts(const struct ward_changeset *cs, struct ward_error **err)
{
	char list[WARD_ERROR_MESSAGE_MAX / 2] = "";
	size_t len = 0, hits = 0;

	if (!cs->base || cs->force)
		return 0;
	for (size_t i = 0; i < cs->n; i++) {
		json_t *want = json_object_get(cs->base, cs->v[i].path), *now = base_of(&cs->v[i]);
		bool same = want && now && json_equal(want, now);

		json_decref(now);
		if (same)
			continue;
		if (len < sizeof(list) - 1)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s'%s'",
						hits ? ", " : "", cs->v[i].path);
		hits++;
	}
	if (!hits)
		return 0;
	ward_error_make(err, 0,
			"%zu path%s changed in the workdir since the command ran, nothing applied "
			"(applying would overwrite that; --force does): %s",
			hits, hits == 1 ? "" : "s", list);
	if (err && *err)
		ward_error_set_rule(*err, "conflict");
	return -1;
}

/* The base of a set: what it had (a continued set), and for each entry new
 * to it the real file as this run's command saw it. */
static int write_base(const struct ward_changeset *cs, const char *path, struct ward_error **err)
{
	json_t *o = cs->base ? json_deep_copy(cs->base) : json_object();
	int rc = 0;

	for (size_t i = 0; o && i < cs->n; i++)
		if (!json_object_get(o, cs->v[i].path))
			json_object_set_new(o, cs->v[i].path, base_of(&cs->v[i]));
	if (!o || json_dump_file(o, path, JSON_COMPACT) < 0)
		rc = ward_error_make(err, errno ? errno : EIO, "write '%s'", path);
	json_decref(o);
	return rc;
}

int ward_changeset_apply(struct ward_changeset *cs, const struct ward_protect *protect,
			 struct ward_error **err)
{
	_cleanup_close_ int wfd = -1;
	_cleanup_close_ int ufd = -1;
	_cleanup_close_ int lock = -1;

	if (cs->settled)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "change set was already applied, kept or discarded");
	if (refuse_protected(cs, protect, err) < 0 || refuse_conflicts(cs, err) < 0)
		return -1;
	/* a kept set may be continued by a run right now (it holds the lock) */
	if (cs->name[0] && cs->storage) {
		lock = open(cs->storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0)
			return ward_error_make(err, EBUSY, "change set '%s' is in use by another run",
					       cs->name);
	}
	/* what cannot be copied, refused before anything is changed */
	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i].type == WARD_FT_OTHER && cs->v[i].kind != WARD_CHANGE_DELETED)
			return ward_error_make(err, ENOTSUP,
					       "apply '%s': not a file, directory or symbolic link",
					       cs->v[i].path);
	wfd = open(cs->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wfd < 0)
		return ward_error_make(err, errno, "open workdir '%s'", cs->workdir);
	ufd = open(cs->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return ward_error_make(err, errno, "open change set '%s'", cs->upper);
	/* 1. what is gone or replaced, deepest first */
	for (size_t i = cs->n; i-- > 0;) {
		const struct ward_change *c = &cs->v[i];

		if ((c->kind == WARD_CHANGE_DELETED || c->kind == WARD_CHANGE_REPLACED) && c->path[0] &&
		    remove_entry(wfd, c->path, err) < 0)
			return -1;
	}
	/* 2. new directories, parents first (writable until step 4) */
	for (size_t i = 0; i < cs->n; i++) {
		const struct ward_change *c = &cs->v[i];
		const char *name;
		int pfd;

		if (c->type != WARD_FT_DIR ||
		    (c->kind != WARD_CHANGE_ADDED && c->kind != WARD_CHANGE_REPLACED))
			continue;
		pfd = open_parent(wfd, c->path, &name);
		if (pfd < 0 || (mkdirat(pfd, name, 0700) < 0 &&
				(errno != EEXIST || !dir_at(pfd, name)))) {
			ward_error_make(err, errno, "apply '%s': mkdir", c->path);
			if (pfd >= 0)
				close(pfd);
			return -1;
		}
		close(pfd);
	}
	/* 3. files and links */
	for (size_t i = 0; i < cs->n; i++) {
		struct ward_change *c = &cs->v[i];

		if (c->kind == WARD_CHANGE_DELETED || c->kind == WARD_CHANGE_MODE ||
		    c->type == WARD_FT_DIR)
			continue;
		if (put_entry(cs, ufd, wfd, c, err) < 0)
			return -1;
	}
	/* 4. modes, deepest first, so a directory made read-only comes last */
	for (size_t i = cs->n; i-- > 0;) {
		const struct ward_change *c = &cs->v[i];
		const char *name;
		int pfd, r;

		if (c->kind == WARD_CHANGE_DELETED || c->type == WARD_FT_SYMLINK ||
		    (c->type != WARD_FT_DIR && c->kind != WARD_CHANGE_MODE))
			continue;
		if (!c->path[0]) {
			r = fchmod(wfd, applied_mode(c));
		} else {
			pfd = open_parent(wfd, c->path, &name);
			/* never through a link swapped in since the scan (fchmodat2) */
			r = pfd < 0 ? -1 : fchmodat(pfd, name, applied_mode(c), AT_SYMLINK_NOFOLLOW);
			if (pfd >= 0)
				close(pfd);
		}
		if (r < 0)
			return ward_error_make(err, errno, "apply '%s': chmod", c->path);
	}
	ward_changeset_discard(cs);
	snprintf(cs->name, sizeof(cs->name), "%s", "");
	return 0;
}

/* ---- keep, discard, open, list ---------------------------------------------------- */

void ward_changeset_discard(struct ward_changeset *cs)
{
	if (cs->storage)
		ward_rmtree(cs->storage);
	cs->settled = true;
}

bool ward_changeset_valid_name(const char *name)
{
	if (!name || !*name || name[0] == '.' || strlen(name) >= 64)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

int ward_changeset_keep(struct ward_changeset *cs, char *name, size_t size,
			struct ward_error **err)
{
	char dir[PATH_MAX], path[PATH_MAX], nm[64];
	struct tm tm;
	time_t now = time(NULL);
	int fd;

	if (cs->settled)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "change set was already applied, kept or discarded");
	if (cs->name[0]) {
		/* kept already (a continued set): it stays where it is */
		if (name && size)
			snprintf(name, size, "%s", cs->name);
		cs->settled = true;
		return 0;
	}
	if (!cs->state || !cs->storage)
		return ward_error_make(err, EINVAL, "change set has no storage to keep");
	snprintf(dir, sizeof(dir), "%s/changes", cs->state);
	{
		/* kept only where no one else can reach: changes/ is checked as
		 * the state directory was (util-internal.h) */
		_cleanup_close_ int sfd = open(cs->state, O_PATH | O_DIRECTORY | O_NOFOLLOW |
								  O_CLOEXEC);

		if (sfd < 0)
			return ward_error_make(err, errno, "state directory '%s'", cs->state);
		fd = ward_state_subdir(sfd, cs->state, "changes", true, err);
		if (fd < 0)
			return -1;
		close(fd);
	}
	gmtime_r(&now, &tm);
	for (unsigned k = 0;; k++) {
		snprintf(nm, sizeof(nm), "%04d%02d%02d-%02d%02d%02d-%d%s%.0u", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid(),
			 k ? "-" : "", k);
		if (!join(path, sizeof(path), dir, nm))
			return ward_error_make(err, errno, "keep change set in '%s'", dir);
		if (mkdir(path, 0700) == 0)
			break;
		if (errno != EEXIST || k > 1000)
			return ward_error_make(err, errno, "mkdir '%s'", path);
	}
	if (!join(dir, sizeof(dir), path, "workdir"))
		return ward_error_make(err, errno, "keep change set in '%s'", path);
	fd = open(dir, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ward_write_all(fd, cs->workdir, strlen(cs->workdir)) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		ward_rmtree(path);
		return ward_error_make(err, e, "write '%s'", dir);
	}
	close(fd);
	if (!join(dir, sizeof(dir), path, "base.json")) {
		ward_rmtree(path);
		return ward_error_make(err, errno, "keep change set in '%s'", path);
	}
	if (write_base(cs, dir, err) < 0) {
		ward_rmtree(path);
		return -1;
	}
	if (!join(dir, sizeof(dir), path, "upper"))
		return ward_error_make(err, errno, "keep change set in '%s'", path);
	if (rename(cs->upper, dir) < 0) {
		int e = errno;

		ward_rmtree(path);
		return ward_error_make(err, e, "move change set to '%s'", path);
	}
	ward_rmtree(cs->storage);
	free(cs->storage);
	free(cs->upper);
	cs->storage = strdup(path);
	cs->upper = strdup(dir);
	snprintf(cs->name, sizeof(cs->name), "%s", nm);
	if (name && size)
		snprintf(name, size, "%s", nm);
	cs->settled = true;
	return 0;
}

struct ward_changeset *ward_changeset_open(const char *state_dir, const char *name,
					   struct ward_error **err)
{
	_cleanup_free_ char *state = NULL;
	char path[PATH_MAX], buf[PATH_MAX], upper[PATH_MAX];
	struct ward_changeset *cs;
	struct stat st;
	_cleanup_close_ int sfd = -1;

	if (!ward_changeset_valid_name(name)) {
		ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
				     "change set name '%s' is not valid (1 to 63 letters, digits, "
				     "'-', '_' or '.', not starting with '.')", name ? name : "");
		return NULL;
	}
	state = ward_changes_dir_checked(state_dir, name, err);
	if (!state)
		return NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/changes/%s", state, name) >= sizeof(path) ||
	    !join(upper, sizeof(upper), path, "upper") || !join(buf, sizeof(buf), path, "workdir")) {
		ward_error_make(err, ENAMETOOLONG, "change set '%s'", name);
		return NULL;
	}
	/* the set's directory and what is in it, none of them a link */
	sfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || fstatat(sfd, "upper", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
		ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, sfd < 0 ? errno : ENOTDIR,
				     "change set '%s'", name);
		return NULL;
	}
	{
		char wd[PATH_MAX];
		_cleanup_close_ int wfd = openat(sfd, "workdir",
						 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		ssize_t n = wfd < 0 ? -1 : read(wfd, wd, sizeof(wd) - 1);

		if (n <= 0 || wd[0] != '/') {
			ward_error_make(err, n < 0 ? errno : EINVAL, "change set '%s': read its workdir",
					name);
			return NULL;
		}
		wd[n] = '\0';
		cs = ward_changeset_scan(upper, wd, err);
	}
	if (!cs)
		return NULL;
	if (join(buf, sizeof(buf), path, "base.json"))
		cs->base = json_load_file(buf, 0, NULL); /* absent: nothing to compare with */
	cs->storage = strdup(path);
	cs->state = strdup(state);
	snprintf(cs->name, sizeof(cs->name), "%s", name);
	return cs;
}

char **ward_changeset_list(const char *state_dir, struct ward_error **err)
{
	struct ward_state_choice c;
	char dir[PATH_MAX];
	char **names = NULL;
	int fd = -1;

	/* listed only when changes/ is ours alone; none yet is an empty list */
	if (ward_state_choose(state_dir, false, &c, err) == 0) {
		struct ward_error *e = NULL;

		if (c.fd >= 0)
			fd = ward_state_subdir(c.fd, c.path, "changes", false, &e);
		if (e && e->code != ENOENT) {
			if (err) {
				ward_error_free(*err);
				*err = steal_ptr(e);
			}
		} else {
			snprintf(dir, sizeof(dir), "%s/changes", c.path);
			names = names_of(dir, err);
		}
		ward_error_free(e);
	}
	if (fd >= 0)
		close(fd);
	ward_state_choice_release(&c);
	return names;
}

/* ---- diff --------------------------------------------------------------------------- */

/* The diff is made from descriptors too: each side's file opened from its
 * top with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), checked to be a
 * regular file, and handed to diff(1) as /dev/fd/N; diff(1) is never given a
 * path it could follow out of the workdir. */

/* fd moved to a number of at least 10, close-on-exec (so that dup2() onto 3
 * or 4 in the child never meets it there already). */
static int high_fd(int fd)
{
	int h;

	if (fd < 0 || fd >= 10)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	return h;
}

/* rel's regular file below the directory open at top; -1 (errno) if it is
 * anything else now, or lies below a symbolic link. */
static int open_beneath(int top, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, top, rel, &how, sizeof(how));
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return high_fd(fd);
}

/* Copy diff(1)'s output from in to fd, escaped for a terminal; UTF-8
 * sequences cut by a read are carried on to the next. */
static int relay_escaped(int in, int fd)
{
	char buf[8192], out[WARD_ESCAPE_MAX(8192)];
	size_t carry = 0;

	for (;;) {
		ssize_t n = read(in, buf + carry, sizeof(buf) - carry);
		size_t used, len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		len = carry + (size_t)n;
		size_t w = ward_text_escape_buf(buf, len, WARD_ESCAPE_MULTILINE, n == 0, out, &used);

		if (ward_write_all(fd, out, w) < 0)
			return -1;
		carry = len - used;
		memmove(buf, buf + used, carry);
		if (n == 0)
			return 0;
	}
}

/* diff -u of the files open at fa and fb (-1: /dev/null) to fd, labelled
 * a/LABEL and b/LABEL (label already as it is to be shown). */
static int run_diff(int fd, bool esc, const char *label, int fa, int fb, struct ward_error **err)
{
	char la[PATH_MAX * 4 + 2], lb[PATH_MAX * 4 + 2];
	char *argv[] = { (char *)"diff", (char *)"-u", (char *)"--label", la, (char *)"--label", lb,
			 (char *)(fa >= 0 ? "/dev/fd/3" : "/dev/null"),
			 (char *)(fb >= 0 ? "/dev/fd/4" : "/dev/null"), NULL };
	posix_spawn_file_actions_t fa_;
	int pipefd[2] = { -1, -1 };
	pid_t pid;
	int status, rc, relay = 0;

	snprintf(la, sizeof(la), "a/%s", label);
	snprintf(lb, sizeof(lb), "b/%s", label);
	if (esc) {
		if (pipe2(pipefd, O_CLOEXEC) < 0)
			return ward_error_make(err, errno, "pipe");
		pipefd[0] = high_fd(pipefd[0]);
		pipefd[1] = high_fd(pipefd[1]);
		if (pipefd[0] < 0 || pipefd[1] < 0) {
			rc = errno;
			if (pipefd[0] >= 0)
				close(pipefd[0]);
			if (pipefd[1] >= 0)
				close(pipefd[1]);
			return ward_error_make(err, rc, "pipe");
		}
	}
	posix_spawn_file_actions_init(&fa_);
	posix_spawn_file_actions_adddup2(&fa_, esc ? pipefd[1] : fd, 1);
	if (fa >= 0)
		posix_spawn_file_actions_adddup2(&fa_, fa, 3);
	if (fb >= 0)
		posix_spawn_file_actions_adddup2(&fa_, fb, 4);
	rc = posix_spawnp(&pid, "diff", &fa_, NULL, argv, NULL);
	posix_spawn_file_actions_destroy(&fa_);
	if (esc) {
		close(pipefd[1]);
		if (rc == 0)
			relay = relay_escaped(pipefd[0], fd);
		close(pipefd[0]);
	}
	if (rc != 0)
		return ward_error_make(err, rc, "run diff(1)");
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (relay < 0)
		return ward_error_make(err, errno, "write the diff");
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return ward_error_make(err, 0, "diff(1) failed on '%s'", label);
	return 0;
}

/* A symbolic link's target, as a person reads it: quoted, or "(none)". */
static void link_shown(char *buf, size_t size, const char *target, bool esc)
{
	_cleanup_free_ char *t = NULL;

	if (!target) {
		snprintf(buf, size, "(none)");
		return;
	}
	t = esc ? ward_text_escape(target, strlen(target), 0) : NULL;
	snprintf(buf, size, "'%s'", t ? t : target);
}

static int diff_to(const struct ward_changeset *cs, int fd, bool esc, struct ward_error **err)
{
	_cleanup_close_ int ufd = open(cs->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int wfd = open(cs->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (ufd < 0)
		return ward_error_make(err, errno, "open change set '%s'", cs->upper);
	for (size_t i = 0; i < cs->n; i++) {
		const struct ward_change *c = &cs->v[i];
		bool old_file = c->old_type == WARD_FT_FILE, new_file = c->type == WARD_FT_FILE;
		_cleanup_free_ char *shown = esc ? ward_text_escape(c->path, strlen(c->path), 0) :
						   strdup(c->path);
		const char *p;

		if (!shown)
			return ward_error_make(err, ENOMEM, "diff");
		p = shown[0] ? shown : ".";
		if (c->kind == WARD_CHANGE_MODE) {
			dprintf(fd, "mode %s: %04o -> %04o\n", p, (unsigned)c->old_mode,
				(unsigned)c->mode);
		} else {
			if (c->kind == WARD_CHANGE_MODIFIED && new_file && c->mode != c->old_mode)
				dprintf(fd, "mode %s: %04o -> %04o\n", p, (unsigned)c->old_mode,
					(unsigned)c->mode);
			if (c->old_type == WARD_FT_DIR && c->kind != WARD_CHANGE_MODIFIED)
				dprintf(fd, "deleted directory %s\n", p);
			if (c->old_type == WARD_FT_SYMLINK || c->type == WARD_FT_SYMLINK) {
				_cleanup_free_ char *old = NULL;
				char o[PATH_MAX * 4 + 3], t[PATH_MAX * 4 + 3];

				if (c->old_type == WARD_FT_SYMLINK && wfd >= 0) {
					const char *name;
					_cleanup_close_ int pfd = open_parent(wfd, c->path, &name);

					old = pfd >= 0 ? link_at(pfd, name) : NULL;
				}
				link_shown(o, sizeof(o), old, esc);
				link_shown(t, sizeof(t), c->type == WARD_FT_SYMLINK ? c->target : NULL,
					   esc);
				dprintf(fd, "symlink %s: %s -> %s\n", p, o, t);
			}
			if (c->type == WARD_FT_DIR && c->kind != WARD_CHANGE_MODIFIED)
				dprintf(fd, "new directory %s (mode %04o)\n", p, (unsigned)c->mode);
			if (c->kind == WARD_CHANGE_ADDED && new_file && c->mode & 0111)
				dprintf(fd, "new file %s (mode %04o)\n", p, (unsigned)c->mode);
		}
		if (c->warn & WARD_CHANGE_WARN_SETID)
			dprintf(fd, "warning %s: set-uid/set-gid bits are not applied (%04o applies "
				    "as %04o)\n",
				p, (unsigned)c->mode, (unsigned)applied_mode(c));
		if (c->warn & WARD_CHANGE_WARN_CAPS)
			dprintf(fd, "warning %s: file capabilities are not applied\n", p);
		if (c->warn & WARD_CHANGE_WARN_LINK_OUT) {
			char t[PATH_MAX * 4 + 3];

			link_shown(t, sizeof(t), c->target, esc);
			dprintf(fd, "warning %s: symbolic link leads outside the workdir (%s)\n", p, t);
		}
		if (c->kind != WARD_CHANGE_MODE && (old_file || new_file)) {
			_cleanup_close_ int fa = -1;
			_cleanup_close_ int fb = -1;

			if (old_file && (wfd < 0 || (fa = open_beneath(wfd, c->path)) < 0)) {
				dprintf(fd, "%s: the workdir's file is not a regular file now, not "
					    "read\n",
					p);
				continue;
			}
			if (new_file && (fb = open_beneath(ufd, c->path)) < 0) {
				dprintf(fd, "%s: the change set's file is not a regular file now, not "
					    "read\n",
					p);
				continue;
			}
			if (run_diff(fd, esc, p, fa, fb, err) < 0)
				return -1;
		}
	}
	return 0;
}

int ward_changeset_diff(const struct ward_changeset *cs, int fd, struct ward_error **err)
{
	return diff_to(cs, fd, false, err);
}

int ward_changeset_diff_escaped(const struct ward_changeset *cs, int fd, struct ward_error **err)
{
	return diff_to(cs, fd, true, err);
}

/* ---- filter (a git directory's overlay, workdir.c) ------------------------------------ */

void ward_changeset_filter(struct ward_changeset *cs,
			   bool (*keep)(const struct ward_change *c, void *ctx), void *ctx)
{
	size_t k = 0;

	for (size_t i = 0; i < cs->n; i++) {
		if (keep(&cs->v[i], ctx))
			cs->v[k++] = cs->v[i];
		else {
			free(cs->v[i].path);
			free(cs->v[i].target);
		}
	}
	cs->n = k;
}
