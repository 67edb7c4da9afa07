/* workdir.c — protected paths made into mounts, placeholders for missing
 * ones, the overlay's run directory, and the sweep of dead wards' runs.
 *
 * Why placeholders live in the real workdir: a mount needs an existing
 * directory entry to sit on, and the directories that would hold a missing
 * protected name (the workdir itself, .git) must stay writable for every
 * other name. Landlock cannot help (its grants add up along the path: a right
 * to create in the workdir is a right to create ".envrc"). So for the run's
 * duration a missing protected path is an empty directory, mode 01555 (the
 * sticky bit is the mark), and the sandbox mounts an empty read-only tmpfs
 * over it. Directories rather than files: git and most tools ignore an empty
 * directory, so `git add -A` inside does not commit placeholders. Each ward
 * that uses a placeholder holds a shared flock on it; whoever gets the
 * exclusive lock when done removes it, so concurrent wards on one workdir
 * never pull a placeholder from under each other (removing a mount point on
 * the host would detach the mount in the sandbox). Planning therefore never
 * trusts what it saw of another ward's placeholder: one gone by the time it
 * is opened is looked at again (ph_acquire says why the protocol holds).
 * Each run logs its placeholders in state/runs/ID/placeholders before making
 * them; a later ward removes those of runs whose owner is provably dead (its
 * pid gone or reused: the start time differs). */

#include "runtime/workdir-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/util-internal.h"

#define PH_MODE 01555

char *ward_state_dir(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char *p = NULL;

	if (xdg && xdg[0] == '/') {
		if (asprintf(&p, "%s/ward", xdg) < 0)
			return NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&p, "%s/.local/state/ward", home) < 0)
			return NULL;
	}
	return p;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

char *ward_state_dir_for(const char *configured, struct ward_error **err)
{
	char *dir = configured ? strdup(configured) : ward_state_dir();
	struct stat st;

	/* a read-only or foreign HOME: the private directory in /tmp instead */
	if (dir && !configured && mkdir_p(dir, 0700) < 0 &&
	    (errno == EACCES || errno == EROFS || errno == EPERM)) {
		free(dir);
		dir = NULL;
	}
	if (!dir) {
		/* No HOME: a private directory in /tmp, checked to be ours. */
		if (asprintf(&dir, "/tmp/ward-%u", (unsigned)geteuid()) < 0) {
			ward_error_make(err, ENOMEM, "state directory");
			return NULL;
		}
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			ward_error_make(err, errno, "mkdir '%s'", dir);
			free(dir);
			return NULL;
		}
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    (st.st_mode & 077)) {
			ward_error_make(err, EPERM, "state directory '%s' is not a private directory "
						    "of this user",
					dir);
			free(dir);
			return NULL;
		}
		return dir;
	}
	if (mkdir_p(dir, 0700) < 0) {
		ward_error_make(err, errno, "create state directory '%s'", dir);
		free(dir);
		return NULL;
	}
	return dir;
}

int ward_rmtree_at(int dfd, const char *name)
{
	struct stat st;
	int fd, rc = 0;
	DIR *d;
	struct dirent *e;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	/* a command's chmod 0 (or overlay's own mode-0 work directory) must
	 * not stop the clean-up */
	if ((st.st_mode & 0700) != 0700 && fchmodat(dfd, name, 0700, 0) < 0)
		return -1;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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

/* ---- placeholders ----------------------------------------------------------- */

static bool dir_empty(int fd)
{
	int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	bool empty = true;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return false;
	}
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* A placeholder: an empty directory nobody may write, with the sticky bit
 * as its mark (no project directory looks like that). mkdir() gives it that
 * mode at once, so no other ward ever sees one half made, and marking costs
 * no metadata update of its own (an xattr would need write permission on
 * the directory, which it must not have). */
static bool is_placeholder(int fd)
{
	struct stat st;

	/* the umask may have taken more than the write bits */
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 0222) ||
	    !(st.st_mode & S_ISVTX))
		return false;
	return dir_empty(fd);
}

static bool same_entry(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Remove a placeholder unless another ward still holds it. Returns false
 * when it is still there, held by someone else. */
static bool ph_release(const char *path, int fd)
{
	bool gone = true;

	if (fd < 0) {
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return true;
		if (!is_placeholder(fd)) {
			close(fd);
			return true; /* not (or no longer) a placeholder: not ours to remove */
		}
	}
	/* Converting a shared lock drops it first: either the exclusive one is
	 * ours, or someone else holds the placeholder and removes it later. */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		if (is_placeholder(fd) && same_entry(fd, path))
			rmdir(path);
	} else {
		gone = false;
	}
	close(fd);
	return gone;
}

enum ph_result { PH_HELD, PH_EXISTS, PH_CANNOT };

/* Make or share the placeholder at path; *fd gets the held descriptor.
 *
 * Why this is safe with other wards making, sharing and removing the same
 * placeholder at once: a placeholder is only ever removed by whoever holds
 * the exclusive flock on that very inode, and only while the name still
 * leads to it (ph_release). So once our shared lock is granted and the name
 * still leads to the locked inode, nobody can remove it until we let go;
 * if it was removed (or removed and made anew) before that, same_entry()
 * sees it and we start over. Locks live on the inode, not in ward's state
 * directory, so wards of other users or other state directories working in
 * the same workdir take part in the same protocol; and the kernel drops them
 * with the process, so a killed ward blocks nobody. */
static int ph_acquire(const char *path, int *fd, struct ward_error **err)
{
	for (int tries = 0; tries < 100; tries++) {
		bool made = mkdir(path, PH_MODE) == 0;

		if (!made && errno != EEXIST) {
			/* Read-only filesystem, no write permission: the command,
			 * with the same credentials and no capabilities, cannot
			 * create it either. */
			if (errno == EACCES || errno == EPERM || errno == EROFS)
				return PH_CANNOT;
			return ward_error_make(err, errno, "create placeholder '%s'", path);
		}
		*fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (*fd < 0) {
			int e = errno;

			if (e == ENOENT)
				continue; /* removed by another ward meanwhile */
			if (e == ENOTDIR || e == ELOOP)
				return PH_EXISTS; /* a file or link appeared: protect it as it is */
			if (made)
				ph_release(path, -1); /* ours, held by nobody yet: not left behind */
			return ward_error_make(err, e, "open placeholder '%s'", path);
		}
		/* even one just made: the name may lead elsewhere by now */
		if (!is_placeholder(*fd)) {
			close(*fd);
			*fd = -1;
			return PH_EXISTS; /* a directory of the user's own */
		}
		if (flock(*fd, LOCK_SH) < 0 || !same_entry(*fd, path)) {
			close(*fd);
			*fd = -1;
			continue;
		}
		return PH_HELD;
	}
	return ward_error_make(err, EAGAIN, "placeholder '%s' keeps changing", path);
}

/* ---- runs and their owners ---------------------------------------------------- */

static unsigned long long start_time_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (ward_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return 0;
	/* field 22 is starttime; p is at the end of field 2 */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
			  "%*d %llu",
		   &t) != 1)
		return 0;
	return t;
}

static atomic_uint run_seq;

static void sweep_run(const char *rundir)
{
	char path[PATH_MAX], line[PATH_MAX];
	FILE *f;

	f = (size_t)snprintf(path, sizeof(path), "%s/placeholders", rundir) < sizeof(path) ?
		    fopen(path, "re") :
		    NULL;
	bool all = true;

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '/' && !ph_release(line, -1))
			all = false;
	}
	if (f)
		fclose(f);
	/* A placeholder still held by a live ward: keep the record, a later
	 * sweep finishes the job. */
	if (all)
		ward_rmtree(rundir);
}

/* Runs whose ward is provably dead: the pid is gone, or now another process
 * (a different start time). */
static void sweep_dead(const char *runs)
{
	DIR *d = opendir(runs);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		int pid;
		unsigned long long start, now;
		unsigned seq;
		char path[PATH_MAX];

		if (sscanf(e->d_name, "%d-%llu-%u", &pid, &start, &seq) != 3 || pid <= 0)
			continue;
		now = start_time_of(pid);
		if (now == start)
			continue; /* alive */
		if (now == 0 && kill(pid, 0) == 0)
			continue; /* alive but /proc unreadable: leave it */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", runs, e->d_name) >= sizeof(path))
			continue;
		/* The owner holds an exclusive flock on its run directory for as
		 * long as it lives, whatever pid namespace it is in: the kernel
		 * drops it only when the process is gone. */
		{
			int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			bool held = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0;

			if (fd >= 0)
				close(fd);
			if (held)
				continue;
		}
		sweep_run(path);
	}
	if (d)
		closedir(d);
}

static int make_rundir(const struct ward_config *cfg, struct ward_workdir_prep *w,
		       struct ward_error **err)
{
	_cleanup_free_ char *state = ward_state_dir_for(cfg->state_dir, err);
	char runs[PATH_MAX];

	if (!state)
		return -1;
	snprintf(runs, sizeof(runs), "%s/runs", state);
	if (mkdir(runs, 0700) < 0 && errno != EEXIST)
		return ward_error_make(err, errno, "mkdir '%s'", runs);
	sweep_dead(runs);
	if (asprintf(&w->rundir, "%s/%d-%llu-%u", runs, (int)getpid(), start_time_of(getpid()),
		     atomic_fetch_add(&run_seq, 1)) < 0) {
		w->rundir = NULL;
		return ward_error_make(err, ENOMEM, "run directory");
	}
	if (mkdir(w->rundir, 0700) < 0) {
		int e = errno;

		free(w->rundir);
		w->rundir = NULL;
		return ward_error_make(err, e, "mkdir run directory under '%s'", runs);
	}
	/* held until this process is gone: a sweep never takes a live run */
	w->run_fd = open(w->rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->run_fd < 0 || flock(w->run_fd, LOCK_EX | LOCK_NB) < 0)
		return ward_error_make(err, errno, "lock run directory '%s'", w->rundir);
	return 0;
}

static int log_placeholder(struct ward_workdir_prep *w, const char *path, struct ward_error **err)
{
	char log[PATH_MAX];
	int fd;

	if ((size_t)snprintf(log, sizeof(log), "%s/placeholders", w->rundir) >= sizeof(log))
		return ward_error_make(err, ENAMETOOLONG, "run directory '%s'", w->rundir);
	/* opened once per run: each open with O_CREAT is a metadata update */
	if (w->log_fd < 0) {
		w->log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (w->log_fd < 0)
			return ward_error_make(err, errno, "log placeholder in '%s'", log);
	}
	fd = w->log_fd;
	if (ward_write_all(fd, path, strlen(path)) < 0 || ward_write_all(fd, "\n", 1) < 0)
		return ward_error_make(err, errno, "log placeholder in '%s'", log);
	return 0;
}

/* ---- the plan ------------------------------------------------------------------ */

static int add_mount(struct ward_workdir_prep *w, const char *path, enum spawn_protect_kind kind,
		     struct ward_error **err)
{
	struct spawn_protect *g;

	for (size_t i = 0; i < w->n_mounts; i++)
		if (strcmp(w->mounts[i].path, path) == 0) {
			if (kind > w->mounts[i].kind)
				w->mounts[i].kind = kind;
			return 0;
		}
	g = realloc(w->mounts, (w->n_mounts + 1) * sizeof(*g));
	if (!g)
		return ward_error_make(err, ENOMEM, "workdir plan");
	w->mounts = g;
	g[w->n_mounts].path = strdup(path);
	if (!g[w->n_mounts].path)
		return ward_error_make(err, ENOMEM, "workdir plan");
	g[w->n_mounts].kind = kind;
	w->n_mounts++;
	return 0;
}

static int add_report(struct ward_workdir_prep *w, const char *rel, enum ward_protect_state s,
		      struct ward_error **err)
{
	struct ward_workdir_report *r = w->report;
	struct ward_protect_report *g = realloc(r->protected_paths,
						(r->n_protected + 1) * sizeof(*g));

	if (!g)
		return ward_error_make(err, ENOMEM, "workdir report");
	r->protected_paths = g;
	g[r->n_protected].path = strdup(rel);
	g[r->n_protected].state = s;
	if (!g[r->n_protected].path)
		return ward_error_make(err, ENOMEM, "workdir report");
	r->n_protected++;
	return 0;
}

/* A placeholder directory in the overlay's own lower layer, with the modes of
 * the real directories on the way (so that copy-up does not see a change). */
static int layer_placeholder(struct ward_workdir_prep *w, const char *workdir, const char *rel,
			     struct ward_error **err)
{
	char src[PATH_MAX], dst[PATH_MAX];
	const char *s = rel;

	if (!w->phlayer) {
		if (asprintf(&w->phlayer, "%s/placeholders", w->rundir) < 0) {
			w->phlayer = NULL;
			return ward_error_make(err, ENOMEM, "placeholder layer");
		}
		if (mkdir(w->phlayer, 0755) < 0 && errno != EEXIST)
			return ward_error_make(err, errno, "mkdir '%s'", w->phlayer);
	}
	/* All made first, modes set after: a read-only directory on the way
	 * (0555, or another ward's placeholder) must not stop the mkdir below
	 * it for a ward without CAP_DAC_OVERRIDE. */
	for (int pass = 0; pass < 2; pass++) {
		for (s = rel;;) {
			size_t n = strcspn(s, "/");
			struct stat st;

			if ((size_t)snprintf(dst, sizeof(dst), "%s/%.*s", w->phlayer,
					     (int)(s - rel + n), rel) >= sizeof(dst) ||
			    (size_t)snprintf(src, sizeof(src), "%s/%.*s", workdir, (int)(s - rel + n),
					     rel) >= sizeof(src))
				return ward_error_make(err, ENAMETOOLONG, "protected path '%s'", rel);
			if (pass == 0 && mkdir(dst, 0755) < 0 && errno != EEXIST) {
				/* below a directory given a read-only mode by an earlier
				 * path: writable again for now, its mode comes back below */
				char *slash = strrchr(dst, '/');

				*slash = '\0';
				if (errno != EACCES || chmod(dst, 0755) < 0)
					return ward_error_make(err, errno, "mkdir '%s/%s'", dst,
							       slash + 1);
				*slash = '/';
				if (mkdir(dst, 0755) < 0 && errno != EEXIST)
					return ward_error_make(err, errno, "mkdir '%s'", dst);
			}
			if (pass == 1 && s[n] && lstat(src, &st) == 0 && S_ISDIR(st.st_mode))
				chmod(dst, st.st_mode & 07777);
			else if (pass == 1 && !s[n])
				chmod(dst, PH_MODE);
			if (!s[n])
				break;
			s += n + 1;
		}
	}
	return 0;
}

/* One protected path: walk its components below the workdir. */
/* Where the symbolic link at path (below workdir, its parents real
 * directories) leads with rest after it, as a path relative to the workdir
 * in out; "" for the workdir itself. Returns 1 when inside the workdir, 0
 * when outside, -1 on error. ".." is taken lexically: the walk that follows
 * looks at every component again, links included. */
static int link_target(const char *workdir, const char *path, const char *rest, char *out,
		       size_t size)
{
	char target[PATH_MAX], joined[2 * PATH_MAX], *comp[PATH_MAX / 2], *tok, *save = NULL;
	size_t n = 0, wl = strlen(workdir), len = 0;
	ssize_t k = readlink(path, target, sizeof(target) - 1);

	if (k < 0)
		return -1;
	target[k] = '\0';
	if (target[0] == '/')
		snprintf(joined, sizeof(joined), "%s%s%s", target, *rest ? "/" : "", rest);
	else
		snprintf(joined, sizeof(joined), "%.*s/%s%s%s", (int)(strrchr(path, '/') - path), path,
			 target, *rest ? "/" : "", rest);
	for (tok = strtok_r(joined, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			if (n)
				n--;
			continue;
		}
		if (n < ARRAY_SIZE(comp))
			comp[n++] = tok;
	}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int r = snprintf(out + len, size - len, "/%s", comp[i]);

		if (r < 0 || (size_t)r >= size - len)
			return -1;
		len += (size_t)r;
	}
	if (strncmp(out, workdir, wl) != 0 || (out[wl] != '/' && out[wl] != '\0'))
		return 0;
	memmove(out, out + wl + (out[wl] == '/'), strlen(out + wl + (out[wl] == '/')) + 1);
	return 1;
}

static int plan_one(struct ward_workdir_prep *w, const struct ward_config *cfg,
		    const char *workdir, const char *rel, struct ward_error **err);

/* A symbolic link on the way: pinned over itself (it stays a working link
 * but cannot be removed, renamed or replaced), and where it leads inside the
 * workdir is protected as well. */
static int plan_link(struct ward_workdir_prep *w, const struct ward_config *cfg,
		     const char *workdir, const char *rel, const char *path, const char *rest,
		     int depth, struct ward_error **err)
{
	char target[PATH_MAX];
	int r;

	if (add_mount(w, path, SPAWN_PROTECT_LINK, err) < 0)
		return -1;
	if (depth >= 8)
		return add_report(w, rel, WARD_PROTECT_UNPROTECTED, err);
	r = link_target(workdir, path, rest, target, sizeof(target));
	if (r < 0)
		return add_report(w, rel, WARD_PROTECT_UNPROTECTED, err);
	if (add_report(w, rel, WARD_PROTECT_READ_ONLY, err) < 0)
		return -1;
	if (r == 0 || !target[0])
		return 0; /* outside the workdir, or the workdir itself */
	w->link_depth = depth + 1;
	r = plan_one(w, cfg, workdir, target, err);
	w->link_depth = depth;
	return r;
}

/* Other wards make and remove placeholders while we look: a component that
 * changed between looking and opening is looked at again, a bounded number of
 * times in case something keeps flipping it. */
#define LOOKS_MAX 100

static int look_again(int *again, const char *path, struct ward_error **err)
{
	if (++*again <= LOOKS_MAX)
		return 0;
	return ward_error_make(err, EAGAIN, "protected path '%s' keeps changing", path);
}

static int plan_one(struct ward_workdir_prep *w, const struct ward_config *cfg,
		    const char *workdir, const char *rel, struct ward_error **err)
{
	bool overlay = cfg->workdir_mode == WARD_WORKDIR_OVERLAY;
	char path[PATH_MAX];
	const char *s = rel;
	int again = 0;

	for (;;) {
		size_t n = strcspn(s, "/");
		bool last = !s[n];
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), "%s/%.*s", workdir, (int)(s - rel + n), rel) >=
		    sizeof(path))
			return ward_error_make(err, ENAMETOOLONG, "protected path '%s'", rel);
		bool exists = lstat(path, &st) == 0;

		if (!exists && errno != ENOENT)
			return ward_error_make(err, errno, "protected path '%s'", path);
		/* A placeholder on the way (this run's for another protected path,
		 * or another ward's) covers this one: share it, do not go inside.
		 * In overlay mode another ward's placeholder counts as missing: the
		 * overlay's own lower layer covers the name, so nothing here depends
		 * on a directory that ward may remove at any moment. */
		if (exists && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)) {
			int fd;

			for (size_t i = 0; i < w->n_ph; i++)
				if (strcmp(w->ph_paths[i], path) == 0)
					return add_report(w, rel, WARD_PROTECT_COVERED, err);
			fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
					return ward_error_make(err, errno, "protected path '%s'", path);
				/* removed (or replaced) since the lstat */
				if (look_again(&again, path, err) < 0)
					return -1;
				continue;
			}
			exists = !is_placeholder(fd);
			close(fd);
		}
		if (!exists) {
			if (overlay) {
				char part[PATH_MAX];

				/* only the missing part: up to this component */
				snprintf(part, sizeof(part), "%.*s", (int)(s - rel + n), rel);
				if (layer_placeholder(w, workdir, part, err) < 0)
					return -1;
				if (add_mount(w, path, SPAWN_PROTECT_EMPTY, err) < 0)
					return -1;
			} else if (cfg->no_placeholders) {
				return add_report(w, rel, WARD_PROTECT_UNPROTECTED, err);
			} else {
				int fd = -1, r;

				if (strchr(path, '\n'))
					return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
								    "workdir '%s' has a newline in its name",
								    workdir);
				if (!w->rundir && make_rundir(cfg, w, err) < 0)
					return -1;
				if (log_placeholder(w, path, err) < 0)
					return -1;
				r = ph_acquire(path, &fd, err);
				if (r < 0)
					return -1;
				if (r == PH_CANNOT)
					return add_report(w, rel, WARD_PROTECT_COVERED, err);
				if (r == PH_EXISTS) {
					/* something else is there now */
					if (look_again(&again, path, err) < 0)
						return -1;
					continue;
				}
				{
					char **gp = realloc(w->ph_paths, (w->n_ph + 1) * sizeof(*gp));
					int *gf = gp ? realloc(w->ph_fds, (w->n_ph + 1) * sizeof(*gf)) : NULL;

					if (gp)
						w->ph_paths = gp;
					if (gf)
						w->ph_fds = gf;
					if (!gp || !gf || !(gp[w->n_ph] = strdup(path))) {
						ph_release(path, fd);
						return ward_error_make(err, ENOMEM, "placeholders");
					}
					gf[w->n_ph++] = fd;
				}
				if (add_mount(w, path, SPAWN_PROTECT_EMPTY, err) < 0)
					return -1;
			}
			return add_report(w, rel, last ? WARD_PROTECT_PLACEHOLDER : WARD_PROTECT_COVERED,
					  err);
		}
		if (S_ISLNK(st.st_mode))
			return plan_link(w, cfg, workdir, rel, path, last ? "" : s + n + 1,
					 w->link_depth, err);
		if (last || !S_ISDIR(st.st_mode)) {
			/* the path itself, or a file where a directory of it would be */
			if (add_mount(w, path, SPAWN_PROTECT_RO, err) < 0)
				return -1;
			return add_report(w, rel, last ? WARD_PROTECT_READ_ONLY : WARD_PROTECT_COVERED,
					  err);
		}
		if (add_mount(w, path, SPAWN_PROTECT_PIN, err) < 0)
			return -1;
		s += n + 1;
	}
}

static int cmp_mount(const void *a, const void *b)
{
	return strcmp(((const struct spawn_protect *)a)->path,
		      ((const struct spawn_protect *)b)->path);
}

static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Parents first; nothing below a read-only or empty mount (it covers them). */
static void order_mounts(struct ward_workdir_prep *w)
{
	size_t k = 0;

	if (!w->n_mounts)
		return;
	qsort(w->mounts, w->n_mounts, sizeof(*w->mounts), cmp_mount);
	for (size_t i = 0; i < w->n_mounts; i++) {
		bool covered = false;

		for (size_t j = 0; j < k && !covered; j++)
			covered = (w->mounts[j].kind == SPAWN_PROTECT_RO ||
				   w->mounts[j].kind == SPAWN_PROTECT_EMPTY) &&
				  below(w->mounts[i].path, w->mounts[j].path);
		if (covered)
			free(w->mounts[i].path);
		else
			w->mounts[k++] = w->mounts[i];
	}
	w->n_mounts = k;
}

static void prep_release(struct ward_workdir_prep *w)
{
	for (size_t i = 0; i < w->n_ph; i++) {
		ph_release(w->ph_paths[i], w->ph_fds[i]);
		free(w->ph_paths[i]);
	}
	free(w->ph_paths);
	free(w->ph_fds);
	w->ph_paths = NULL;
	w->ph_fds = NULL;
	w->n_ph = 0;
	for (size_t i = 0; i < w->n_mounts; i++)
		free(w->mounts[i].path);
	free(w->mounts);
	w->mounts = NULL;
	w->n_mounts = 0;
	ward_protect_strv_free(w->resolved);
	w->resolved = NULL;
	ward_protect_free(w->protect);
	w->protect = NULL;
	if (w->log_fd >= 0)
		close(w->log_fd);
	w->log_fd = -1;
	if (w->set_fd >= 0)
		close(w->set_fd);
	w->set_fd = -1;
	free(w->set_dir);
	free(w->state);
	w->set_dir = w->state = NULL;
	free(w->upper);
	free(w->work);
	free(w->phlayer);
	w->upper = w->work = w->phlayer = NULL;
}

/* ward's own state directory, when the workdir holds it, is protected too:
 * a command must not rewrite kept change sets or run records. */
static int protect_state_dir(const struct ward_config *cfg, const char *workdir,
			     struct ward_workdir_prep *w, struct ward_error **err)
{
	char *state = cfg->state_dir ? strdup(cfg->state_dir) : ward_state_dir();
	char real[PATH_MAX];
	size_t n = strlen(workdir), k = 0;

	if (!state)
		return 0;
	/* it may not exist yet: compare its text, resolved as far as it goes */
	if (realpath(state, real) == NULL)
		snprintf(real, sizeof(real), "%s", state);
	free(state);
	if (strncmp(real, workdir, n) != 0 || real[n] != '/')
		return 0;
	/* overlayfs refuses an upper inside its lower (ELOOP): say why */
	if (cfg->workdir_mode == WARD_WORKDIR_OVERLAY)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "overlay workdir mode needs ward's state directory "
					    "'%s' outside the workdir (set XDG_STATE_HOME)",
					    real);
	while (w->resolved[k])
		k++;
	{
		char **g = realloc(w->resolved, (k + 2) * sizeof(*g));

		if (!g)
			return ward_error_make(err, ENOMEM, "protected paths");
		w->resolved = g;
		g[k] = strdup(real + n + 1);
		g[k + 1] = NULL;
		if (!g[k])
			return ward_error_make(err, ENOMEM, "protected paths");
	}
	return 0;
}

/* Overlay over a kept change set: its upper, locked for the run. */
static int continue_set(const struct ward_config *cfg, const char *workdir,
			struct ward_workdir_prep *w, struct ward_error **err)
{
	_cleanup_free_ char *state = ward_state_dir_for(cfg->state_dir, err);
	char kept_wd[PATH_MAX];
	struct stat st;

	if (!state)
		return -1;
	if (!ward_changeset_valid_name(cfg->continue_changes))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "change set name '%s' is not valid (1 to 63 letters, digits, "
				     "'-', '_' or '.', not starting with '.')",
					    cfg->continue_changes);
	if (asprintf(&w->set_dir, "%s/changes/%s", state, cfg->continue_changes) < 0 ||
	    asprintf(&w->upper, "%s/upper", w->set_dir) < 0 || !(w->state = strdup(state))) {
		w->upper = NULL;
		return ward_error_make(err, ENOMEM, "overlay");
	}
	if (stat(w->upper, &st) < 0 || !S_ISDIR(st.st_mode))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno ? errno : ENOTDIR,
					    "change set '%s'", cfg->continue_changes);
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/workdir", w->set_dir);
		if (ward_read_file(path, kept_wd, sizeof(kept_wd)) <= 0 ||
		    strcmp(kept_wd, workdir) != 0)
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "change set '%s' belongs to another workdir",
						    cfg->continue_changes);
	}
	w->set_fd = open(w->set_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->set_fd < 0)
		return ward_error_make(err, errno, "open change set '%s'", cfg->continue_changes);
	if (flock(w->set_fd, LOCK_EX | LOCK_NB) < 0)
		return ward_error_make(err, EBUSY, "change set '%s' is in use by another run",
				       cfg->continue_changes);
	return 0;
}

int ward_workdir_prepare(const struct ward_config *cfg, const char *workdir, bool enforce,
			 struct ward_workdir_prep *w, struct ward_error **err)
{
	const struct ward_protect *pr = cfg->protect;

	memset(w, 0, sizeof(*w));
	w->set_fd = -1;
	w->log_fd = -1;
	w->run_fd = -1;
	w->report = calloc(1, sizeof(*w->report));
	if (!w->report)
		return ward_error_make(err, ENOMEM, "workdir report");
	w->report->mode = cfg->workdir_mode;
	if (cfg->workdir_mode == WARD_WORKDIR_OVERLAY && !enforce) {
		ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
				     "workdir mode 'overlay' needs the sandbox's filesystem view "
				     "(not with --sandbox off, --no-view or without the mount "
				     "namespace)");
		goto fail;
	}
	w->protect = pr ? ward_protect_copy(pr, err) : ward_protect_new(true, err);
	if (!w->protect)
		goto fail;
	w->resolved = ward_protect_resolve(w->protect, workdir, err);
	if (!w->resolved || protect_state_dir(cfg, workdir, w, err) < 0)
		goto fail;
	if (cfg->workdir_mode == WARD_WORKDIR_OVERLAY) {
		if (make_rundir(cfg, w, err) < 0)
			goto fail;
		if (asprintf(&w->work, "%s/work", w->rundir) < 0) {
			ward_error_make(err, ENOMEM, "overlay");
			goto fail;
		}
		if (mkdir(w->work, 0700) < 0) {
			ward_error_make(err, errno, "mkdir overlay directories in '%s'", w->rundir);
			goto fail;
		}
		if (cfg->continue_changes) {
			if (continue_set(cfg, workdir, w, err) < 0)
				goto fail;
			goto planned;
		}
		if (asprintf(&w->upper, "%s/upper", w->rundir) < 0) {
			ward_error_make(err, ENOMEM, "overlay");
			goto fail;
		}
		if (mkdir(w->upper, 0755) < 0) {
			ward_error_make(err, errno, "mkdir overlay directories in '%s'", w->rundir);
			goto fail;
		}
		/* the upper's root is the merged workdir's root: same mode */
		{
			struct stat st;

			if (stat(workdir, &st) == 0)
				chmod(w->upper, st.st_mode & 07777);
		}
	}
planned:
	if (!w->rundir) {
		/* nothing of ours this run, but a killed ward's leftovers still go */
		char *state = cfg->state_dir ? strdup(cfg->state_dir) : ward_state_dir();
		char runs[PATH_MAX];

		if (state && (size_t)snprintf(runs, sizeof(runs), "%s/runs", state) < sizeof(runs))
			sweep_dead(runs);
		free(state);
	}
	if (!enforce)
		return 0;
	w->report->protection = true;
	for (size_t i = 0; w->resolved[i]; i++)
		if (plan_one(w, cfg, workdir, w->resolved[i], err) < 0)
			goto fail;
	order_mounts(w);
	return 0;
fail:
	ward_workdir_finish(w, workdir, false, NULL, 0, NULL);
	return -1;
}

static void add_violation(struct ward_workdir_report *r, const char *path, const char *seen)
{
	struct ward_violation *g;

	for (size_t i = 0; i < r->n_violations; i++)
		if (strcmp(r->violations[i].path, path) == 0)
			return;
	g = realloc(r->violations, (r->n_violations + 1) * sizeof(*g));
	if (!g)
		return;
	r->violations = g;
	g[r->n_violations].path = strdup(path);
	g[r->n_violations].seen = seen;
	if (g[r->n_violations].path)
		r->n_violations++;
}

/* The typographic quotes a UTF-8 locale's messages put around names
 * (coreutils: "cannot create directory ‘.vscode/x’"), and the guillemets of
 * some translations, as spaces. */
static void blank_quotes(char *s)
{
	static const char *const quotes[] = { "\u2018", "\u2019", "\u201c", "\u201d",
					      "\u00ab", "\u00bb" };

	for (size_t k = 0; k < ARRAY_SIZE(quotes); k++) {
		size_t n = strlen(quotes[k]);

		for (char *q = strstr(s, quotes[k]); q; q = strstr(q + n, quotes[k]))
			memset(q, ' ', n);
	}
}

/* Paths the command's own error messages name on a line saying the kernel
 * refused (read-only, busy mount point, a placeholder directory):
 * "cannot create .git/hooks/x: Read-only file system",
 * "mv: cannot move '.git' to 'x': Device or resource busy". */
static void scan_stderr(struct ward_workdir_prep *w, const char *workdir, const char *text,
			size_t len)
{
	const char *marks[] = { strerror(EROFS), strerror(EBUSY), strerror(EISDIR) };
	size_t wl = strlen(workdir);
	const char *end = text + len;

	while (text && text < end) {
		const char *nl = memchr(text, '\n', (size_t)(end - text));
		size_t n = nl ? (size_t)(nl - text) : (size_t)(end - text);
		char line[1024], *tok, *save = NULL;
		bool refused = false;

		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1),
			 text);
		text += n + 1;
		blank_quotes(line);
		for (size_t k = 0; k < ARRAY_SIZE(marks) && !refused; k++)
			refused = strstr(line, marks[k]) != NULL;
		if (!refused)
			continue;
		for (tok = strtok_r(line, " \t'\"`:,()[]", &save); tok;
		     tok = strtok_r(NULL, " \t'\"`:,()[]", &save)) {
			const char *rel = tok;

			if (rel[0] == '/') {
				if (strncmp(rel, workdir, wl) != 0 || rel[wl] != '/')
					continue;
				rel += wl + 1;
			}
			while (rel[0] == '.' && rel[1] == '/')
				rel += 2;
			if (*rel && ward_protect_touches(w->resolved, rel) &&
			    !strstr(rel, "/../") && strncmp(rel, "../", 3) != 0)
				add_violation(w->report, rel, "stderr");
		}
	}
}

int ward_workdir_finish(struct ward_workdir_prep *w, const char *workdir, bool ran,
			const char *stderr_text, size_t stderr_len, struct ward_error **err)
{
	int rc = 0;

	if (ran && w->report && w->report->protection && stderr_text)
		scan_stderr(w, workdir, stderr_text, stderr_len);

	if (w->phlayer)
		ward_rmtree(w->phlayer);
	if (w->work)
		ward_rmtree(w->work);
	if (ran && w->upper && w->report) {
		struct ward_changeset *cs = ward_changeset_scan(w->upper, workdir, err);

		if (!cs) {
			rc = -1;
		} else {
			if (w->set_dir) {
				ward_changeset_own_kept(cs, w->set_dir, w->report->change_name[0] ?
								     w->report->change_name :
								     strrchr(w->set_dir, '/') + 1,
							w->state);
				snprintf(w->report->change_name, sizeof(w->report->change_name), "%s",
					 ward_changeset_name(cs));
			} else {
				ward_changeset_own(cs, steal_ptr(w->rundir), NULL,
						   steal_fd(&w->run_fd));
			}
			w->report->changes = cs;
			for (size_t i = 0; i < ward_changeset_count(cs); i++) {
				const struct ward_change *c = ward_changeset_get(cs, i);

				if (!ward_protect_touches(w->resolved, c->path) &&
				    !ward_protect_nested_git(w->protect, c->path))
					continue;
				add_violation(w->report, c->path, "change-set");
			}
		}
	}
	prep_release(w);
	if (w->rundir) {
		ward_rmtree(w->rundir);
		free(w->rundir);
		w->rundir = NULL;
	}
	if (w->run_fd >= 0)
		close(w->run_fd);
	w->run_fd = -1;
	return rc;
}

void ward_workdir_report_free(struct ward_workdir_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_protected; i++)
		free(r->protected_paths[i].path);
	free(r->protected_paths);
	for (size_t i = 0; i < r->n_violations; i++)
		free(r->violations[i].path);
	free(r->violations);
	if (r->changes) {
		/* undecided: dropped, unless it is a kept set that was continued */
		if (!ward_changeset_settled(r->changes) && !ward_changeset_name(r->changes)[0])
			ward_changeset_discard(r->changes);
		ward_changeset_free(r->changes);
	}
	free(r);
}
