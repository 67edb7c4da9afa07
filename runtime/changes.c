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

#include "runtime/hostpath-internal.h"
#include "runtime/util-internal.h"
#include "runtime/workdir-internal.h"

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
	for (size_t i = 0; i < cs->n; i++)
		free(cs->v[i].path);
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

static int emit(struct ward_changeset *cs, enum ward_change_kind kind, const char *rel,
		const struct stat *now, const struct stat *old, struct ward_error **err)
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

/* The names in a directory, sorted; NULL-terminated. An unreadable or missing
 * directory gives an empty list. */
static char **names_of(const char *dir, struct ward_error **err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = calloc(1, sizeof(*v));
	size_t n = 0;

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
			free(g ? g : v);
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

static bool contains(char *const *v, const char *s)
{
	for (; *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

/* Every entry below a real directory that is gone, as deleted. */
static int emit_deleted_below(struct ward_changeset *cs, const char *rel, struct ward_error **err)
{
	char dir[PATH_MAX], path[PATH_MAX], r[PATH_MAX];
	char **names;
	int rc = 0;

	if (!join(dir, sizeof(dir), cs->workdir, rel))
		return ward_error_make(err, errno, "change set: '%s'", rel);
	names = names_of(dir, err);
	if (!names)
		return -1;
	for (size_t i = 0; names[i] && rc == 0; i++) {
		struct stat st;

		if (!sub(r, sizeof(r), rel, names[i]) || !join(path, sizeof(path), cs->workdir, r)) {
			rc = ward_error_make(err, errno, "change set: '%s/%s'", rel, names[i]);
			break;
		}
		if (lstat(path, &st) < 0)
			continue;
		rc = emit(cs, WARD_CHANGE_DELETED, r, NULL, &st, err);
		if (rc == 0 && S_ISDIR(st.st_mode))
			rc = emit_deleted_below(cs, r, err);
	}
	ward_protect_strv_free(names);
	return rc;
}

static bool same_content(const char *a, const char *b)
{
	_cleanup_close_ int fa = open(a, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_close_ int fb = open(b, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
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

static bool same_link(const char *a, const char *b)
{
	char la[PATH_MAX], lb[PATH_MAX];
	ssize_t na = readlink(a, la, sizeof(la)), nb = readlink(b, lb, sizeof(lb));

	return na >= 0 && na == nb && memcmp(la, lb, (size_t)na) == 0;
}

static bool is_opaque(const char *path)
{
	char v[4];
	ssize_t n = lgetxattr(path, "user.overlay.opaque", v, sizeof(v));

	return n >= 1 && v[0] == 'y';
}

static int scan_dir(struct ward_changeset *cs, const char *rel, bool opaque,
		    struct ward_error **err)
{
	char udir[PATH_MAX], ldir[PATH_MAX];
	char **names, **lnames = NULL;
	int rc = 0;

	if (!join(udir, sizeof(udir), cs->upper, rel) || !join(ldir, sizeof(ldir), cs->workdir, rel))
		return ward_error_make(err, errno, "change set: '%s'", rel);
	names = names_of(udir, err);
	if (!names)
		return -1;
	for (size_t i = 0; names[i] && rc == 0; i++) {
		char r[PATH_MAX], up[PATH_MAX], lp[PATH_MAX];
		struct stat us, ls;
		bool have_l;

		if (!sub(r, sizeof(r), rel, names[i]) || !join(up, sizeof(up), cs->upper, r) ||
		    !join(lp, sizeof(lp), cs->workdir, r)) {
			rc = ward_error_make(err, errno, "change set: '%s/%s'", rel, names[i]);
			break;
		}
		if (lstat(up, &us) < 0)
			continue;
		have_l = lstat(lp, &ls) == 0;
		if (is_whiteout(&us)) {
			if (!have_l)
				continue;
			rc = emit(cs, WARD_CHANGE_DELETED, r, NULL, &ls, err);
			if (rc == 0 && S_ISDIR(ls.st_mode))
				rc = emit_deleted_below(cs, r, err);
			continue;
		}
		if (S_ISDIR(us.st_mode)) {
			bool op = opaque || is_opaque(up);

			if (!have_l) {
				rc = emit(cs, WARD_CHANGE_ADDED, r, &us, NULL, err);
			} else if (!S_ISDIR(ls.st_mode)) {
				rc = emit(cs, WARD_CHANGE_REPLACED, r, &us, &ls, err);
			} else if ((us.st_mode & 07777) != (ls.st_mode & 07777)) {
				rc = emit(cs, WARD_CHANGE_MODE, r, &us, &ls, err);
			}
			if (rc == 0)
				rc = scan_dir(cs, r, op, err);
			continue;
		}
		if (!have_l) {
			rc = emit(cs, WARD_CHANGE_ADDED, r, &us, NULL, err);
		} else if (type_of(&us) != type_of(&ls)) {
			rc = emit(cs, WARD_CHANGE_REPLACED, r, &us, &ls, err);
			if (rc == 0 && S_ISDIR(ls.st_mode))
				rc = emit_deleted_below(cs, r, err);
		} else if (S_ISREG(us.st_mode)) {
			if (us.st_size != ls.st_size || !same_content(up, lp))
				rc = emit(cs, WARD_CHANGE_MODIFIED, r, &us, &ls, err);
			else if ((us.st_mode & 07777) != (ls.st_mode & 07777))
				rc = emit(cs, WARD_CHANGE_MODE, r, &us, &ls, err);
		} else if (S_ISLNK(us.st_mode)) {
			if (!same_link(up, lp))
				rc = emit(cs, WARD_CHANGE_MODIFIED, r, &us, &ls, err);
		} else if ((us.st_mode & 07777) != (ls.st_mode & 07777) || us.st_rdev != ls.st_rdev) {
			rc = emit(cs, WARD_CHANGE_MODIFIED, r, &us, &ls, err);
		}
	}
	/* An opaque directory hides everything of the real one not in it. */
	if (rc == 0 && opaque) {
		lnames = names_of(ldir, err);
		if (!lnames)
			rc = -1;
		for (size_t i = 0; rc == 0 && lnames[i]; i++) {
			char r[PATH_MAX], lp[PATH_MAX];
			struct stat ls;

			if (contains(names, lnames[i]))
				continue;
			if (!sub(r, sizeof(r), rel, lnames[i]) || !join(lp, sizeof(lp), cs->workdir, r)) {
				rc = ward_error_make(err, errno, "change set: '%s/%s'", rel, lnames[i]);
				break;
			}
			if (lstat(lp, &ls) < 0)
				continue;
			rc = emit(cs, WARD_CHANGE_DELETED, r, NULL, &ls, err);
			if (rc == 0 && S_ISDIR(ls.st_mode))
				rc = emit_deleted_below(cs, r, err);
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
	struct stat us, ls;

	if (cs)
		cs->lock_fd = -1;
	if (!cs || !(cs->upper = strdup(upper)) || !(cs->workdir = strdup(lower))) {
		ward_changeset_free(cs);
		ward_error_make(err, ENOMEM, "change set");
		return NULL;
	}
	if (stat(upper, &us) < 0) {
		ward_error_make(err, errno, "change set '%s'", upper);
		ward_changeset_free(cs);
		return NULL;
	}
	/* the workdir's own mode (the upper's root is the merged root) */
	if (stat(lower, &ls) == 0 && (us.st_mode & 07777) != (ls.st_mode & 07777) &&
	    emit(cs, WARD_CHANGE_MODE, "", &us, &ls, err) < 0)
		goto fail;
	if (scan_dir(cs, "", is_opaque(upper), err) < 0)
		goto fail;
	if (cs->n)
		qsort(cs->v, cs->n, sizeof(*cs->v), cmp_change);
	return cs;
fail:
	ward_changeset_free(cs);
	return NULL;
}

/* ---- apply ------------------------------------------------------------------------ */

/* The parent directory of rel below the workdir, never through a symbolic
 * link or out of the workdir; *name points at rel's last component. */
static int open_parent(int wfd, const char *rel, const char **name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	*name = slash ? slash + 1 : rel;
	if (!slash)
		return openat(wfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	return (int)syscall(SYS_openat2, wfd, dir, &how, sizeof(how));
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

/* Write the upper's file or link to a temporary name next to its target,
 * then rename it over. */
static int put_entry(struct ward_changeset *cs, int wfd, const struct ward_change *c,
		     struct ward_error **err)
{
	char up[PATH_MAX], tmp[64];
	const char *name;
	_cleanup_close_ int pfd = open_parent(wfd, c->path, &name);

	if (pfd < 0)
		return ward_error_make(err, errno, "apply '%s': open its directory", c->path);
	if (!join(up, sizeof(up), cs->upper, c->path))
		return ward_error_make(err, errno, "apply '%s'", c->path);
	snprintf(tmp, sizeof(tmp), ".ward-apply-%d-%u", (int)getpid(), atomic_fetch_add(&tmp_seq, 1));
	if (c->type == WARD_FT_SYMLINK) {
		char target[PATH_MAX];
		ssize_t n = readlink(up, target, sizeof(target) - 1);

		if (n < 0)
			return ward_error_make(err, errno, "readlink '%s'", up);
		target[n] = '\0';
		if (symlinkat(target, pfd, tmp) < 0)
			return ward_error_make(err, errno, "apply '%s': symlink", c->path);
	} else {
		_cleanup_close_ int in = open(up, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int out = -1;

		if (in < 0)
			return ward_error_make(err, errno, "open '%s'", up);
		out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0)
			return ward_error_make(err, errno, "apply '%s': create a temporary file",
					       c->path);
		if (copy_fd(in, out) < 0 || fchmod(out, c->mode) < 0) {
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
		    !ward_protect_nested_git(protect, cs->v[i].path))
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
		if (pfd < 0 || (mkdirat(pfd, name, 0700) < 0 && errno != EEXIST)) {
			ward_error_make(err, errno, "apply '%s': mkdir", c->path);
			if (pfd >= 0)
				close(pfd);
			return -1;
		}
		close(pfd);
	}
	/* 3. files and links */
	for (size_t i = 0; i < cs->n; i++) {
		const struct ward_change *c = &cs->v[i];

		if (c->kind == WARD_CHANGE_DELETED || c->kind == WARD_CHANGE_MODE ||
		    c->type == WARD_FT_DIR)
			continue;
		if (put_entry(cs, wfd, c, err) < 0)
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
			r = fchmod(wfd, c->mode);
		} else {
			pfd = open_parent(wfd, c->path, &name);
			/* never through a link swapped in since the scan (fchmodat2) */
			r = pfd < 0 ? -1 : fchmodat(pfd, name, c->mode, AT_SYMLINK_NOFOLLOW);
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
		 * the state directory was (hostpath-internal.h) */
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
	if (stat(upper, &st) < 0) {
		ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno, "change set '%s'",
				     name);
		return NULL;
	}
	{
		char wd[PATH_MAX];

		if (ward_read_file(buf, wd, sizeof(wd)) <= 0) {
			ward_error_make(err, errno, "change set '%s': read its workdir", name);
			return NULL;
		}
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

static int run_diff(int fd, const char *label, const char *a, const char *b,
		    struct ward_error **err)
{
	char la[PATH_MAX + 2], lb[PATH_MAX + 2];
	char *argv[] = { (char *)"diff", (char *)"-u", (char *)"--label", la, (char *)"--label", lb,
			 (char *)a, (char *)b, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, rc;

	snprintf(la, sizeof(la), "a/%s", label);
	snprintf(lb, sizeof(lb), "b/%s", label);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	rc = posix_spawnp(&pid, "diff", &fa, NULL, argv, NULL);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return ward_error_make(err, rc, "run diff(1)");
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return ward_error_make(err, 0, "diff(1) failed on '%s'", label);
	return 0;
}

int ward_changeset_diff(const struct ward_changeset *cs, int fd, struct ward_error **err)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct ward_change *c = &cs->v[i];
		char up[PATH_MAX], lp[PATH_MAX];
		bool old_file = c->old_type == WARD_FT_FILE, new_file = c->type == WARD_FT_FILE;

		if (!join(up, sizeof(up), cs->upper, c->path) ||
		    !join(lp, sizeof(lp), cs->workdir, c->path))
			return ward_error_make(err, errno, "diff '%s'", c->path);
		if (c->kind == WARD_CHANGE_MODE) {
			dprintf(fd, "mode %s: %04o -> %04o\n", c->path[0] ? c->path : ".",
				(unsigned)c->old_mode, (unsigned)c->mode);
			continue;
		}
		if (c->kind == WARD_CHANGE_MODIFIED && new_file && c->mode != c->old_mode)
			dprintf(fd, "mode %s: %04o -> %04o\n", c->path, (unsigned)c->old_mode,
				(unsigned)c->mode);
		if (c->old_type == WARD_FT_DIR && c->kind != WARD_CHANGE_MODIFIED)
			dprintf(fd, "deleted directory %s\n", c->path);
		if (c->old_type == WARD_FT_SYMLINK || c->type == WARD_FT_SYMLINK) {
			char t[PATH_MAX] = "", o[PATH_MAX] = "";
			ssize_t n;

			if (c->type == WARD_FT_SYMLINK && (n = readlink(up, t, sizeof(t) - 1)) >= 0)
				t[n] = '\0';
			if (c->old_type == WARD_FT_SYMLINK && (n = readlink(lp, o, sizeof(o) - 1)) >= 0)
				o[n] = '\0';
			dprintf(fd, "symlink %s: %s%s%s -> %s%s%s\n", c->path, *o ? "'" : "",
				*o ? o : "(none)", *o ? "'" : "", *t ? "'" : "", *t ? t : "(none)",
				*t ? "'" : "");
		}
		if (c->type == WARD_FT_DIR && c->kind != WARD_CHANGE_MODIFIED)
			dprintf(fd, "new directory %s (mode %04o)\n", c->path, (unsigned)c->mode);
		if (c->kind == WARD_CHANGE_ADDED && new_file && c->mode & 0111)
			dprintf(fd, "new file %s (mode %04o)\n", c->path, (unsigned)c->mode);
		if ((old_file || new_file) &&
		    run_diff(fd, c->path, old_file ? lp : "/dev/null", new_file ? up : "/dev/null",
			     err) < 0)
			return -1;
	}
	return 0;
}
