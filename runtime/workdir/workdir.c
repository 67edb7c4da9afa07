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
 * Placeholders no longer needed wait in state/placeholders for the next ward
 * (renaming one costs far less than making and removing a directory: see
 * "the pool" below). Each run records where it may make placeholders in a
 * file state/runs/ID, in one write, before making any; a later ward removes
 * those of runs whose owner is provably dead (its pid gone or reused: the
 * start time differs). */

#include "runtime/workdir/workdir-internal.h"

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

#include "runtime/util/util-internal.h"
#include "ward/admit.h"

#define PH_MODE 01555
/* A spare placeholder in the pool, and one on its way in or out: writable
 * by its owner, so that a ward without CAP_DAC_OVERRIDE may move it between
 * directories (rename() rewrites a directory's ".." entry, which takes
 * write permission on it). */
#define PH_POOL_MODE 01755
/* Spare placeholders kept at most (in the state directory). */
#define POOL_MAX 128

char *ward_state_dir(void)
{
	struct ward_state_choice c;
	char *p = NULL;

	if (ward_state_choose(NULL, false, &c, NULL) == 0)
		p = steal_ptr(c.path);
	ward_state_choice_release(&c);
	return p;
}

/* ---- placeholders ----------------------------------------------------------- */

/* A placeholder: an empty directory with the sticky bit and no write bit
 * as its mark (no project directory looks like that), or exactly
 * PH_POOL_MODE for one on its way in or out of the pool. mkdir() gives it
 * its mode at once, so no other ward ever sees one half made, and marking
 * costs no metadata update of its own (an xattr would need write
 * permission on the directory, which it must not have). The umask may have
 * taken more bits. */
static bool ph_mode(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) &&
	       (!(st->st_mode & 0222) || (st->st_mode & 07777) == PH_POOL_MODE);
}

/* Nothing but "." and ".." in the directory open at fd. Read straight from
 * fd (two getdents64 calls for an empty one): the descriptor serves for
 * nothing else but its lock, so its offset may move. */
static bool fd_empty(int fd)
{
	char buf[1024] __attribute__((aligned(8)));

	for (;;) {
		ssize_t n = getdents64(fd, buf, sizeof(buf));

		if (n <= 0)
			return n == 0;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);
			const char *s = e->d_name;

			if (!(s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2]))))
				return false;
			off += e->d_reclen;
		}
	}
}

bool ward_workdir_is_placeholder(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && ph_mode(&st) && fd_empty(fd);
}

static bool same_id(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The directory holding path's last component, reached without following
 * any symbolic link; *name points at that component. Placeholder paths are
 * real paths (the workdir is resolved when configured, and planning stops
 * at every link), so a link on the way now means someone swapped one in:
 * the name no longer leads to anything of ward's, and the caller leaves it.
 * -1 with errno (ELOOP for a link). */
static int open_real_parent(const char *path, const char **name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash || !slash[1]) {
		errno = EINVAL;
		return -1;
	}
	*name = slash + 1;
	if ((size_t)snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path),
			     path) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return ward_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, false);
}

/* open_real_parent() for this run's placeholders, the last directory kept
 * open: most placeholders lie in one (the workdir), and each openat2 costs
 * a path walk. Borrowed: the caller does not close it. A directory held
 * since before the command ran is still the one ward reached without a
 * link; only its own placeholder, checked by inode, is touched in it. */
static int ph_parent(struct ward_workdir_prep *w, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	int fd;

	if (w->ph_dir && slash && slash[1] && strlen(w->ph_dir) == n &&
	    strncmp(w->ph_dir, path, n) == 0) {
		*name = slash + 1;
		return w->ph_dir_fd;
	}
	fd = open_real_parent(path, name);
	if (fd < 0)
		return -1;
	if (w->ph_dir_fd >= 0)
		close(w->ph_dir_fd);
	free(w->ph_dir);
	w->ph_dir = strndup(path, n);
	w->ph_dir_fd = w->ph_dir ? fd : -1;
	if (!w->ph_dir) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	return fd;
}

/* Remove a placeholder unless another ward still holds it. fd is ours,
 * held shared, and id what it was when taken; or fd < 0 for one found in a
 * dead ward's record. Returns false when it is still there, held by someone
 * else. Neither its mode nor its emptiness is looked at again: it was a
 * placeholder when taken, nobody but the owner could change that since, and
 * rmdir() leaves a directory that is not empty. */
static bool ph_release(const char *path, int fd, const struct stat *id)
{
	struct stat st, now;
	bool gone = true;
	const char *name;
	_cleanup_close_ int pfd = open_real_parent(path, &name);

	if (fd < 0) {
		if (pfd < 0)
			return true; /* gone, or not reached without a link: not ours */
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return true;
		if (fstat(fd, &st) < 0 || !ph_mode(&st)) {
			close(fd);
			return true; /* not (or no longer) a placeholder: not ours to remove */
		}
		id = &st;
	}
	/* Converting a shared lock drops it first: either the exclusive one is
	 * ours, or someone else holds the placeholder and removes it later. */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		if (pfd >= 0 && fstatat(pfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    same_id(&now, id))
			unlinkat(pfd, name, AT_REMOVEDIR);
	} else {
		gone = false;
	}
	close(fd);
	return gone;
}

/* ---- the pool of spare placeholders ----
 *
 * Making a directory and removing it again is what a placeholder costs
 * most: on ext4 each mkdir() allocates an inode and a block (without a
 * journal it also skips recently freed inodes one by one), and each final
 * close after rmdir() frees them (with the discard mount option, waiting
 * for the device). Measured on this project's VM: 1.2-1.6 ms for 13
 * placeholders, against 0.3 ms to rename() 13 in and out. So a placeholder
 * no longer needed goes to state/placeholders, and the next ward renames
 * it into place instead of making one. Only an empty one goes there (and
 * one found written into on the way goes back where it was, or aside as
 * "kept-NAME"); at most POOL_MAX are kept; where the state directory is on
 * another filesystem than the workdir (EXDEV), or renaming is refused,
 * placeholders are made and removed as before. */

static atomic_uint pool_seq;

/* The pool's directory, only when it is ours alone (ward_hostpath_judge):
 * placeholders are renamed into the workdir from it. -1 with errno (EPERM
 * for one that is not). */
static int pool_open_dir(const char *path)
{
	char why[96];
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, &st) < 0 ||
			ward_hostpath_judge(WARD_HOSTPATH_PRIVATE_DIR, &st, geteuid(), why,
					    sizeof(why)))) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* state/placeholders, listed once per run, on first need. */
static void pool_open(struct ward_workdir_prep *w)
{
	char path[PATH_MAX], buf[4096] __attribute__((aligned(8)));
	const char *end = w->rundir ? strrchr(w->rundir, '/') : NULL;
	ssize_t n;

	if (w->pool_fd >= 0 || w->pool_off || w->pool_tried)
		return;
	w->pool_tried = true;
	w->pool_as_is = geteuid() == 0;
	/* rundir is STATE/runs/ID */
	while (end && end > w->rundir && *--end != '/')
		;
	if (!end || end == w->rundir ||
	    (size_t)snprintf(path, sizeof(path), "%.*s/placeholders", (int)(end - w->rundir),
			     w->rundir) >= sizeof(path)) {
		w->pool_off = true;
		return;
	}
	w->pool_dir = strdup(path);
	w->pool_fd = pool_open_dir(path);
	if (w->pool_fd < 0 || !w->pool_dir) {
		/* none yet: made when the first placeholder is put there */
		w->pool_off = w->pool_fd < 0 && errno != ENOENT;
		return;
	}
	while ((n = getdents64(w->pool_fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);
			size_t len = strlen(e->d_name);

			off += e->d_reclen;
			if (e->d_name[0] == '.' || strncmp(e->d_name, "kept-", 5) == 0 ||
			    len >= sizeof(w->pool_names[0]) || w->n_pool >= POOL_MAX)
				continue;
			if (w->n_pool % 16 == 0) {
				char(*g)[32] = realloc(w->pool_names,
						       (w->n_pool + 16) * sizeof(*w->pool_names));

				if (!g)
					return;
				w->pool_names = g;
			}
			memcpy(w->pool_names[w->n_pool++], e->d_name, len + 1);
		}
	}
	w->pool_count = w->n_pool;
}

/* A spare placeholder renamed to name in the directory pfd: 1 when done, 0
 * when the name exists (errno EEXIST), -1 when the pool has none to give. */
static int pool_take(struct ward_workdir_prep *w, int pfd, const char *name)
{
	pool_open(w);
	while (!w->pool_off && w->pool_fd >= 0 && w->pool_next < w->n_pool) {
		if (renameat2(w->pool_fd, w->pool_names[w->pool_next], pfd, name,
			      RENAME_NOREPLACE) == 0) {
			w->pool_next++;
			w->pool_count--;
			return 1;
		}
		if (errno == EEXIST)
			return 0;
		w->pool_next++;
		if (errno != ENOENT) /* ENOENT: another ward took that one */
			w->pool_off = true;
	}
	return -1;
}

/* Move the placeholder name in pfd, held exclusively at fd, into the pool.
 * false when it cannot go there: the caller removes it. */
static bool pool_put(struct ward_workdir_prep *w, int pfd, const char *name, int fd)
{
	char pname[32];

	pool_open(w);
	if (w->pool_off || !w->pool_dir || w->pool_count >= POOL_MAX)
		return false;
	if (w->pool_fd < 0) {
		if (mkdir(w->pool_dir, 0700) < 0 && errno != EEXIST)
			goto off;
		w->pool_fd = pool_open_dir(w->pool_dir);
		if (w->pool_fd < 0)
			goto off;
	}
	/* Moved as it is (PH_MODE) by a ward with CAP_DAC_OVERRIDE, which
	 * rename() lets move a directory it cannot write: a fchmod() fewer on
	 * the way out and on the way in. Else writable for the move, and
	 * the first EACCES says so (a root without that capability). */
	if (!w->pool_as_is && fchmod(fd, PH_POOL_MODE) < 0)
		goto off;
	for (int i = 0; i < 4; i++) {
		/* the pid asked once per run, not once per placeholder: a name
		 * taken anyway only costs another try (RENAME_NOREPLACE) */
		if (!w->pool_pid)
			w->pool_pid = getpid();
		snprintf(pname, sizeof(pname), "%d-%u", (int)w->pool_pid,
			 atomic_fetch_add(&pool_seq, 1));
		if (renameat2(pfd, name, w->pool_fd, pname, RENAME_NOREPLACE) == 0) {
			char kept[40];

			if (lseek(fd, 0, SEEK_SET) == 0 && fd_empty(fd)) {
				w->pool_count++;
				return true;
			}
			/* written into on the way: not a placeholder any more, and
			 * what is in it is not ward's */
			if (renameat2(w->pool_fd, pname, pfd, name, RENAME_NOREPLACE) < 0) {
				snprintf(kept, sizeof(kept), "kept-%s", pname);
				renameat(w->pool_fd, pname, w->pool_fd, kept);
			}
			return true;
		}
		if (errno == EACCES && w->pool_as_is) {
			w->pool_as_is = false;
			if (fchmod(fd, PH_POOL_MODE) < 0)
				goto off;
			continue;
		}
		if (errno != EEXIST)
			break;
	}
	fchmod(fd, PH_MODE);
off:
	w->pool_off = true;
	return false;
}

/* Done with our placeholder at path (fd held shared, id what it was):
 * into the pool, or removed, unless another ward still holds it. Both
 * through the parent's descriptor, reached without a link: a link swapped
 * in on the way never sends someone else's directory to the pool. */
static void ph_return(struct ward_workdir_prep *w, const char *path, int fd,
		      const struct stat *id)
{
	struct stat now;
	const char *name;
	int pfd = ph_parent(w, path, &name);

	if (pfd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
	    fstatat(pfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && same_id(&now, id) &&
	    !pool_put(w, pfd, name, fd))
		unlinkat(pfd, name, AT_REMOVEDIR);
	close(fd);
}

/* The pool's entry just renamed to name in pfd turned out not empty: back
 * into the pool as "kept-NAME", never handed out again. false when it could
 * not be moved (then it stays, as a directory of the workdir's). fd is open
 * on it. */
static bool pool_reject(struct ward_workdir_prep *w, int pfd, const char *name, int fd)
{
	char kept[48];

	snprintf(kept, sizeof(kept), "kept-%s", w->pool_names[w->pool_next - 1]);
	/* movable again by a ward without CAP_DAC_OVERRIDE */
	fchmod(fd, PH_POOL_MODE);
	return renameat2(pfd, name, w->pool_fd, kept, RENAME_NOREPLACE) == 0;
}

enum ph_result { PH_HELD, PH_EXISTS, PH_CANNOT };

/* Make or share the placeholder at path; *fd gets the held descriptor and
 * *id what it leads to.
 *
 * Why this is safe with other wards making, sharing and removing the same
 * placeholder at once: a placeholder is only ever removed by whoever holds
 * the exclusive flock on that very inode, and only while the name still
 * leads to it (ph_release). So once our shared lock is granted and the name
 * still leads to the locked inode, nobody can remove it until we let go;
 * if it was removed (or removed and made anew) before that, the lstat()
 * after the lock sees it and we start over. Locks live on the inode, not in
 * ward's state directory, so wards of other users or other state
 * directories working in the same workdir take part in the same protocol;
 * and the kernel drops them with the process, so a killed ward blocks
 * nobody. Seven system calls for a new placeholder (mkdir, open, fstat,
 * two getdents64, flock, lstat), eight for one from the pool (renameat2 and
 * fchmod instead of mkdir). */
static int ph_acquire(struct ward_workdir_prep *w, const char *path, int *fd, struct stat *id,
		      struct ward_error **err)
{
	for (int tries = 0; tries < 100; tries++) {
		struct stat now;
		const char *name;
		bool seen;
		/* made, opened and checked from the parent's descriptor, reached
		 * without a link: one swapped in on the way since the plan looked
		 * never puts a placeholder outside the workdir */
		int pfd = ph_parent(w, path, &name);
		int taken = pfd < 0 ? -1 : pool_take(w, pfd, name);
		bool made = taken == 1 || (taken < 0 && pfd >= 0 && mkdirat(pfd, name, PH_MODE) == 0);

		if (pfd < 0) {
			if (errno == ELOOP || errno == ENOENT || errno == ENOTDIR)
				return PH_EXISTS; /* the way changed: look again */
			return ward_error_make(err, errno, "create placeholder '%s'", path);
		}
		if (!made && taken < 0 && errno != EEXIST) {
			/* Read-only filesystem, no write permission: the command,
			 * with the same credentials and no capabilities, cannot
			 * create it either. */
			if (errno == EACCES || errno == EPERM || errno == EROFS)
				return PH_CANNOT;
			return ward_error_make(err, errno, "create placeholder '%s'", path);
		}
		*fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (*fd < 0) {
			int e = errno;

			if (e == ENOENT)
				continue; /* removed by another ward meanwhile */
			if (e == ENOTDIR || e == ELOOP)
				return PH_EXISTS; /* a file or link appeared: protect it as it is */
			if (made)
				ph_release(path, -1, NULL); /* ours, held by nobody yet: not left behind */
			return ward_error_make(err, e, "open placeholder '%s'", path);
		}
		/* even one just made: the name may lead elsewhere by now; one
		 * from the pool read-only from now on (a root ward's is already:
		 * see pool_put), before it is looked into */
		seen = fstat(*fd, id) == 0;
		if (seen && taken == 1 && (id->st_mode & 07777) != PH_MODE)
			fchmod(*fd, PH_MODE);
		if (!seen || !ph_mode(id) || !fd_empty(*fd)) {
			/* one from the pool that something was put in: not a
			 * placeholder, nor anything of the workdir's; aside */
			bool aside = taken == 1 && pool_reject(w, pfd, name, *fd);

			close(*fd);
			*fd = -1;
			if (aside)
				continue;
			return PH_EXISTS; /* a directory of the user's own */
		}
		if (flock(*fd, LOCK_SH) < 0 || fstatat(pfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !same_id(&now, id)) {
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

/* Ours, read once per process (shared with the cgroups' names, util.c):
 * the start time does not change, and a forked child asks again (another
 * pid). */
static unsigned long long own_start_time(void)
{
	struct ward_self_stat s;

	return ward_self_stat(&s, false) == 0 ? s.start_time : start_time_of(getpid());
}

static atomic_uint run_seq;

/* Release every placeholder listed in the record at path (one per line).
 * Returns whether all are gone. */
static bool release_listed(const char *path)
{
	char line[PATH_MAX];
	FILE *f = fopen(path, "re");
	bool all = true;

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '/' && !ph_release(line, -1, NULL))
			all = false;
	}
	if (f)
		fclose(f);
	return all;
}

/* A dead ward's run: a record file (direct mode), or a directory (overlay
 * mode, or a ward of before: its placeholders log inside). A placeholder
 * still held by a live ward keeps the record: a later sweep finishes the
 * job. */
static void sweep_run(const char *run, bool dir)
{
	char path[PATH_MAX];

	if (!dir) {
		if (release_listed(run))
			unlink(run);
		return;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/placeholders", run) < sizeof(path) &&
	    release_listed(path))
		ward_rmtree(run);
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
		/* The owner holds an exclusive flock on its run record for as
		 * long as it lives, whatever pid namespace it is in: the kernel
		 * drops it only when the process is gone. */
		{
			int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			struct stat st;
			bool held = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0;
			bool dir = fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);

			if (fd >= 0)
				close(fd);
			if (fd < 0 || held)
				continue;
			sweep_run(path, dir);
		}
	}
	if (d)
		closedir(d);
}

/* state/runs in the state directory chosen (c, nothing made), not made;
 * NULL without one. */
static char *runs_dir_in(const struct ward_state_choice *c)
{
	char *runs = NULL;
	int fd = -1;

	/* runs/ is looked into only when it is ours alone, like the state
	 * directory (make_runs_dir() says why not, when it matters) */
	if (c->path && c->fd >= 0 && (fd = ward_state_subdir(c->fd, c->path, "runs", false, NULL)) >= 0 &&
	    asprintf(&runs, "%s/runs", c->path) < 0)
		runs = NULL;
	if (fd >= 0)
		close(fd);
	return runs;
}

/* state/runs as configured, not made; NULL without a state directory. */
static char *runs_dir(const struct ward_config *cfg)
{
	struct ward_state_choice c;
	char *runs = NULL;

	if (ward_state_choose(cfg->state_dir, false, &c, NULL) == 0)
		runs = runs_dir_in(&c);
	ward_state_choice_release(&c);
	return runs;
}

/* state/runs made (the state directory too, or its fallback in /tmp).
 * *swept names the runs directory already swept: another one is swept now. */
static char *make_runs_dir(const struct ward_config *cfg, const char *swept,
			   struct ward_error **err)
{
	struct ward_state_choice c;
	char *runs = NULL;
	int fd;

	if (ward_state_choose(cfg->state_dir, true, &c, err) < 0) {
		ward_state_choice_release(&c);
		return NULL;
	}
	fd = ward_state_subdir(c.fd, c.path, "runs", true, err);
	if (fd >= 0) {
		close(fd);
		if (asprintf(&runs, "%s/runs", c.path) < 0) {
			runs = NULL;
			ward_error_make(err, ENOMEM, "run directory");
		}
	}
	ward_state_choice_release(&c);
	if (!runs)
		return NULL;
	if (!swept || strcmp(swept, runs) != 0)
		sweep_dead(runs);
	return runs;
}

static int run_name(struct ward_workdir_prep *w, const char *runs, struct ward_error **err)
{
	free(w->rundir);
	if (asprintf(&w->rundir, "%s/%d-%llu-%u", runs, (int)getpid(), own_start_time(),
		     atomic_fetch_add(&run_seq, 1)) < 0) {
		w->rundir = NULL;
		return ward_error_make(err, ENOMEM, "run directory");
	}
	return 0;
}

void ward_workdir_sweep_runs(const char *runs)
{
	sweep_dead(runs);
}

int ward_workdir_make_run(const struct ward_config *cfg, const char *swept, char **path,
			  int *fd, struct ward_error **err)
{
	_cleanup_free_ char *runs = make_runs_dir(cfg, swept, err);

	*path = NULL;
	*fd = -1;
	if (!runs)
		return -1;
	return ward_workdir_make_run_in(runs, path, fd, err);
}

int ward_workdir_make_run_in(const char *runs, char **path, int *fd, struct ward_error **err)
{
	struct ward_workdir_prep tmp = { 0 };

	*path = NULL;
	*fd = -1;
	if (run_name(&tmp, runs, err) < 0)
		return -1;
	if (mkdir(tmp.rundir, 0700) < 0) {
		int e = errno;

		free(tmp.rundir);
		return ward_error_make(err, e, "mkdir run directory under '%s'", runs);
	}
	*path = tmp.rundir;
	/* held until this process is gone: a sweep never takes a live run */
	*fd = open(*path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0 || flock(*fd, LOCK_EX | LOCK_NB) < 0)
		return ward_error_make(err, errno, "lock run directory '%s'", *path);
	return 0;
}

/* Overlay mode: a run directory (the upper and work directories live in
 * it), locked. */
static int make_rundir(const struct ward_config *cfg, const char *swept,
		       struct ward_workdir_prep *w, struct ward_error **err)
{
	return ward_workdir_make_run(cfg, swept, &w->rundir, &w->run_fd, err);
}

/* Whether path is a line of the record text. */
static bool recorded(const char *text, const char *path)
{
	size_t n = strlen(path);

	for (const char *s = text; s && (s = strstr(s, path)) != NULL; s += n)
		if ((s == text || s[-1] == '\n') && s[n] == '\n')
			return true;
	return false;
}

/* Direct mode: the run record, a file state/runs/PID-START-SEQ listing
 * where this run may make placeholders, written before the first is made
 * so that a ward killed at any point leaves nothing a sweep cannot find.
 * It lists, in one write, every directory on the way to each protected path
 * (a superset: a sweep removes only what is still a placeholder and held by
 * nobody); a path planned through a symbolic link is added when met. The
 * file is held with flock LOCK_EX while we live. */
static int make_record(const struct ward_config *cfg, const char *workdir, const char *swept,
		       struct ward_workdir_prep *w, struct ward_error **err)
{
	size_t cap = 256, len = 0;
	char *text = malloc(cap);

	if (!text)
		return ward_error_make(err, ENOMEM, "run record");
	text[0] = '\0';
	for (size_t i = 0; w->resolved[i]; i++) {
		const char *rel = w->resolved[i];

		for (size_t k = 0;; k++) {
			if (rel[k] != '/' && rel[k] != '\0')
				continue;
			if (!memchr(rel, '\n', k)) {
				char line[PATH_MAX];
				int n = snprintf(line, sizeof(line), "%s/%.*s", workdir, (int)k, rel);

				if (n > 0 && (size_t)n < sizeof(line) && !recorded(text, line)) {
					if (len + (size_t)n + 2 > cap) {
						char *g = realloc(text, cap = 2 * (len + (size_t)n + 2));

						if (!g) {
							free(text);
							return ward_error_make(err, ENOMEM, "run record");
						}
						text = g;
					}
					memcpy(text + len, line, (size_t)n);
					len += (size_t)n;
					text[len++] = '\n';
					text[len] = '\0';
				}
			}
			if (!rel[k])
				break;
		}
	}
	w->record = text;
	{
		/* the runs directory prepare found ours alone moments ago (no one
		 * else can change what it names since, hostpath-internal.h): not
		 * chosen and checked again */
		_cleanup_free_ char *runs = swept ? strdup(swept) : runs_dir(cfg);

		if (runs && run_name(w, runs, err) < 0)
			return -1;
		if (runs)
			w->run_fd = open(w->rundir, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (!runs || w->run_fd < 0) {
			/* the state directory is not there yet (made once, then
			 * used), or not ours to write: ward_state_dir_for() makes
			 * it or falls back to /tmp */
			free(runs);
			runs = make_runs_dir(cfg, swept, err);
			if (!runs || run_name(w, runs, err) < 0)
				return -1;
			w->run_fd = open(w->rundir, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		}
		if (w->run_fd < 0) {
			ward_error_make(err, errno, "create run record '%s'", w->rundir);
			free(w->rundir);
			w->rundir = NULL; /* not ours: nothing to remove */
			return -1;
		}
	}
	if (flock(w->run_fd, LOCK_EX | LOCK_NB) < 0 || ward_write_all(w->run_fd, text, len) < 0)
		return ward_error_make(err, errno, "write run record '%s'", w->rundir);
	return 0;
}

/* A placeholder about to be made at path is in the record (added if not). */
static int record_placeholder(struct ward_workdir_prep *w, const char *path,
			      struct ward_error **err)
{
	size_t n = strlen(path), len = strlen(w->record);
	char *g;

	if (recorded(w->record, path))
		return 0;
	g = realloc(w->record, len + n + 2);
	if (!g)
		return ward_error_make(err, ENOMEM, "run record");
	w->record = g;
	memcpy(g + len, path, n);
	g[len + n] = '\n';
	g[len + n + 1] = '\0';
	if (ward_write_all(w->run_fd, g + len, n + 1) < 0)
		return ward_error_make(err, errno, "write run record '%s'", w->rundir);
	return 0;
}

/* ---- the plan ------------------------------------------------------------------ */

static int add_mount(struct ward_workdir_prep *w, const char *path, enum spawn_protect_kind kind,
		     struct ward_error **err)
{
	struct spawn_protect *g;

	for (size_t i = 0; i < w->n_mounts; i++)
		if (strcmp(w->mounts[i].path, path) == 0) {
			enum spawn_protect_kind had = w->mounts[i].kind;

			/* a writable rebind pins as well; anything that protects
			 * more wins over it */
			if (kind == SPAWN_PROTECT_RW)
				w->mounts[i].kind = had == SPAWN_PROTECT_PIN ? kind : had;
			else if (had == SPAWN_PROTECT_RW)
				w->mounts[i].kind = kind == SPAWN_PROTECT_PIN ? had : kind;
			else if (kind > had)
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
		/* This run's own placeholder (.git for .git/config): held shared
		 * since it was taken, so still there and still a placeholder; no
		 * lstat needed to know that it covers this path. */
		for (size_t i = 0; i < w->n_ph; i++)
			if (strcmp(w->ph[i].path, path) == 0)
				return add_report(w, rel, WARD_PROTECT_COVERED, err);
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
				if (strcmp(w->ph[i].path, path) == 0)
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
			exists = !(fstat(fd, &st) == 0 && ph_mode(&st) && fd_empty(fd));
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
				struct ward_placeholder *g;
				struct stat id;
				int fd = -1, r;

				if (strchr(path, '\n'))
					return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
								    "%s '%s' has a newline in its name",
								    strchr(workdir, '\n') ? "workdir" :
											    "protected path",
								    strchr(workdir, '\n') ? workdir : rel);
				if (!w->rundir && make_record(cfg, workdir, w->swept, w, err) < 0)
					return -1;
				if (record_placeholder(w, path, err) < 0)
					return -1;
				r = ph_acquire(w, path, &fd, &id, err);
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
					int *gf = realloc(w->ph_fds, (w->n_ph + 1) * sizeof(*gf));

					if (gf)
						w->ph_fds = gf;
					g = gf ? realloc(w->ph, (w->n_ph + 1) * sizeof(*g)) : NULL;
					if (g)
						w->ph = g;
					if (!g || !(g[w->n_ph].path = strdup(path))) {
						ph_release(path, fd, &id);
						return ward_error_make(err, ENOMEM, "placeholders");
					}
					g[w->n_ph].id = id;
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

/* Parents first; nothing below a read-only or empty mount (it covers them),
 * except a writable rebind below a read-only one (a home's entries below its
 * read-only top) and what lies below that. The nearest kept parent decides. */
static void order_mounts(struct ward_workdir_prep *w)
{
	size_t k = 0;

	if (!w->n_mounts)
		return;
	qsort(w->mounts, w->n_mounts, sizeof(*w->mounts), cmp_mount);
	for (size_t i = 0; i < w->n_mounts; i++) {
		const struct spawn_protect *near = NULL;
		bool covered;

		for (size_t j = 0; j < k; j++)
			if (below(w->mounts[i].path, w->mounts[j].path) &&
			    (!near || strlen(w->mounts[j].path) > strlen(near->path)))
				near = &w->mounts[j];
		covered = near && (near->kind == SPAWN_PROTECT_EMPTY ||
				   (near->kind == SPAWN_PROTECT_RO &&
				    w->mounts[i].kind != SPAWN_PROTECT_RW));
		if (covered)
			free(w->mounts[i].path);
		else
			w->mounts[k++] = w->mounts[i];
	}
	w->n_mounts = k;
}

/* A name at a home's top that stays read-only: a dot entry (start-up files,
 * tool configs, ~/.local/bin on PATH...: too many to list, and new ones
 * appear) or bin (on many PATHs). */
static bool home_hidden(const char *name)
{
	return name[0] == '.' || strcmp(name, "bin") == 0;
}

/* Whether rel (a protected path) lies in a name home_hidden() keeps: the
 * read-only top covers it already, existing or not. */
static bool home_covers(const struct ward_workdir_prep *w, const char *rel)
{
	char first[NAME_MAX + 1];
	size_t n = strcspn(rel, "/");

	if (n > NAME_MAX)
		return false;
	memcpy(first, rel, n);
	first[n] = '\0';
	return home_hidden(first) && !ward_protect_opened(w->protect, first);
}

/* A home directory as the workdir (admitted by the person's
 * --allow-home-workdir): its top read-only, so that no name can be made
 * there — a start-up file that does not exist yet cannot be planted, which
 * no list of names and no placeholder could promise — and each entry at the
 * top that is a directory or a file and not home_hidden() (or opened with
 * --allow-write) bound writable over itself. A new name at the top cannot
 * be made either, dot or not: the price of the rule (a subdirectory of the
 * home as the workdir has none of it). */
static int plan_home(struct ward_workdir_prep *w, const char *workdir, struct ward_error **err)
{
	DIR *d = opendir(workdir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return ward_error_make(err, errno, "open home workdir '%s'", workdir);
	if (add_mount(w, workdir, SPAWN_PROTECT_RO, err) < 0) {
		closedir(d);
		return -1;
	}
	while (rc == 0 && (e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (home_hidden(e->d_name) && !ward_protect_opened(w->protect, e->d_name)) {
			rc = add_report(w, e->d_name, WARD_PROTECT_READ_ONLY, err);
			continue;
		}
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)))
			continue; /* links, sockets...: names at the read-only top */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", workdir, e->d_name) >=
		    sizeof(path))
			continue;
		rc = add_mount(w, path, SPAWN_PROTECT_RW, err);
	}
	closedir(d);
	return rc;
}

static void prep_release(struct ward_workdir_prep *w)
{
	for (size_t i = 0; i < w->n_ph; i++) {
		ph_return(w, w->ph[i].path, w->ph_fds[i], &w->ph[i].id);
		free(w->ph[i].path);
	}
	free(w->ph);
	free(w->ph_fds);
	w->ph = NULL;
	w->ph_fds = NULL;
	if (w->ph_dir_fd >= 0)
		close(w->ph_dir_fd);
	w->ph_dir_fd = -1;
	free(w->ph_dir);
	w->ph_dir = NULL;
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
	free(w->record);
	w->record = NULL;
	if (w->pool_fd >= 0)
		close(w->pool_fd);
	w->pool_fd = -1;
	free(w->pool_dir);
	free(w->pool_names);
	w->pool_dir = NULL;
	w->pool_names = NULL;
	w->n_pool = w->pool_next = w->pool_count = 0;
	free(w->swept);
	w->swept = NULL;
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
			     const struct ward_state_choice *c, struct ward_workdir_prep *w,
			     struct ward_error **err)
{
	char real[PATH_MAX], fdpath[32];
	size_t n = strlen(workdir), k = 0;
	ssize_t len = -1;

	if (!c->path)
		return 0;
	/* Where the directory opened for the choice is: one readlink of its
	 * descriptor, where realpath() took one per component. It may not
	 * exist yet: compare its text, resolved as far as it goes. */
	if (c->fd >= 0) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", c->fd);
		len = readlink(fdpath, real, sizeof(real) - 1);
	}
	if (len > 0 && real[0] == '/')
		real[len] = '\0';
	else if (realpath(c->path, real) == NULL)
		snprintf(real, sizeof(real), "%s", c->path);
	/* the workdir the state directory or inside it (a request's, under a
	 * root holding XDG_STATE_HOME): kept sets, the rate limit's state and
	 * the placeholders' records would be the command's to rewrite */
	if (ward_admit_under(workdir, real)) {
		ward_error_make_kind(err, WARD_ERR_NOT_AUTHORIZED, 0,
				     "workdir '%s' is ward's state directory '%s' or inside it "
				     "(rule workdir-state)",
				     workdir, real);
		if (err && *err)
			ward_error_set_rule(*err, "workdir-state");
		return -1;
	}
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
	_cleanup_free_ char *state = NULL;
	char kept_wd[PATH_MAX];
	struct stat st;

	if (!ward_changeset_valid_name(cfg->continue_changes))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "change set name '%s' is not valid (1 to 63 letters, digits, "
				     "'-', '_' or '.', not starting with '.')",
					    cfg->continue_changes);
	state = ward_changes_dir_checked(cfg->state_dir, cfg->continue_changes, err);
	if (!state)
		return -1;
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
			 unsigned admitted, struct ward_workdir_prep *w, struct ward_error **err)
{
	const struct ward_protect *pr = cfg->protect;
	struct ward_state_choice state;
	bool home;

	memset(w, 0, sizeof(*w));
	w->set_fd = -1;
	w->run_fd = -1;
	w->pool_fd = -1;
	w->ph_dir_fd = -1;
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
	/* The state directory, chosen and checked once for what follows (nothing
	 * made: a run that protects nothing needs none). */
	if (ward_state_choose(cfg->state_dir, false, &state, NULL) < 0)
		ward_state_choice_release(&state);
	if (!w->resolved || protect_state_dir(cfg, workdir, &state, w, err) < 0) {
		ward_state_choice_release(&state);
		goto fail;
	}
	/* A killed ward's leftovers go first, once: its placeholders are then
	 * not in the way of ours. */
	w->swept = runs_dir_in(&state);
	ward_state_choice_release(&state);
	if (w->swept)
		sweep_dead(w->swept);
	if (cfg->workdir_mode == WARD_WORKDIR_OVERLAY) {
		if (make_rundir(cfg, w->swept, w, err) < 0)
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
	if (!enforce)
		return 0;
	w->report->protection = true;
	/* as admitted moments ago (run.c), not resolved and classified again */
	home = (admitted & WARD_ADMIT_HOME) != 0;
	if (home && plan_home(w, workdir, err) < 0)
		goto fail;
	if (cfg->workdir_mode == WARD_WORKDIR_DIRECT && ward_gitdir_prepare(cfg, workdir, w, err) < 0)
		goto fail;
	for (size_t i = 0; w->resolved[i]; i++) {
		if (home && home_covers(w, w->resolved[i])) {
			if (add_report(w, w->resolved[i], WARD_PROTECT_COVERED, err) < 0)
				goto fail;
			continue;
		}
		if (plan_one(w, cfg, workdir, w->resolved[i], err) < 0)
			goto fail;
	}
	order_mounts(w);
	return 0;
fail:
	ward_workdir_finish(w, workdir, false, NULL, 0, NULL);
	return -1;
}

void ward_workdir_add_violation(struct ward_workdir_report *r, const char *path,
				const char *seen)
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

/* Whether rel lies at or below one of this run's placeholders: a
 * placeholder over a missing directory (.git, .vscode) refuses everything
 * below it, not only the protected paths it stands for (git init's
 * .git/description, say). */
static bool under_placeholder(const struct ward_workdir_prep *w, const char *workdir,
			      const char *rel)
{
	size_t wl = strlen(workdir);

	for (size_t i = 0; i < w->n_ph; i++) {
		const char *ph = w->ph[i].path;
		size_t n;

		if (strncmp(ph, workdir, wl) != 0 || ph[wl] != '/')
			continue;
		ph += wl + 1;
		n = strlen(ph);
		if (strncmp(rel, ph, n) == 0 && (rel[n] == '\0' || rel[n] == '/'))
			return true;
	}
	return false;
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
			if (*rel &&
			    (ward_protect_touches(w->resolved, rel) ||
			     under_placeholder(w, workdir, rel)) &&
			    !strstr(rel, "/../") && strncmp(rel, "../", 3) != 0)
				ward_workdir_add_violation(w->report, rel, "stderr");
		}
	}
}

int ward_workdir_finish(struct ward_workdir_prep *w, const char *workdir, bool ran,
			const char *stderr_text, size_t stderr_len, struct ward_error **err)
{
	int rc = 0;

	if (ran && w->report && w->report->protection && stderr_text)
		scan_stderr(w, workdir, stderr_text, stderr_len);
	/* the sandbox is gone: nothing writes the git directories' uppers */
	if (ward_gitdir_finish(w, err) < 0)
		rc = -1;

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
				    !ward_protect_git_change_denied(w->protect, c))
					continue;
				ward_workdir_add_violation(w->report, c->path, "change-set");
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
