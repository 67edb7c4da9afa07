/* gitdir.c — direct mode's git directories: the command works on an overlay
 * of each, and when it ends ward merges back from the upper layer only what
 * the allowlist names (workdir-internal.h), drops the rest and reports it.
 *
 * Why an overlay: git renames index.lock, HEAD.lock, ORIG_HEAD.lock... into
 * place at the top of .git, so that directory must stay writable, and
 * neither mounts nor Landlock can make a directory writable for some names
 * only (both grant by hierarchy). Protecting a list of names (config,
 * hooks) left the others: `echo ../evil > .git/commondir` made the host's
 * next git read a configuration the command wrote, with core.fsmonitor
 * running its code. With the overlay, anything the command creates in a git
 * directory lands in the run's upper layer, and the allowlist decides what
 * reaches the real one; a name git may read in the future is denied too.
 *
 * The merge is ward_changeset_apply() on the filtered change set (changes.c):
 * files through a temporary name and rename, never through a symbolic link.
 * It runs after the sandbox is gone, in the supervisor. */
#include "runtime/workdir/workdir-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "runtime/util/util-internal.h"

/* rel equals dir or lies below it ("" is above everything). */
static bool at_or_below(const char *rel, const char *dir)
{
	size_t n = strlen(dir);

	if (!n)
		return true;
	return strncmp(rel, dir, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

/* path made real; whether it is a directory inside the workdir (not the
 * workdir itself). real gets the resolved path. */
static bool inside_dir(const char *workdir, const char *path, char real[PATH_MAX])
{
	size_t n = strlen(workdir);
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	return strncmp(real, workdir, n) == 0 && real[n] == '/' && real[n + 1];
}

/* The directory a gitfile ("gitdir: X") or commondir file ("X") at file
 * names, X taken relative to base when not absolute; into out. */
static bool pointer(const char *file, const char *prefix, const char *base, char *out,
		    size_t size)
{
	char buf[PATH_MAX];
	size_t k = strlen(prefix);
	ssize_t n = ward_read_file(file, buf, sizeof(buf));

	if (n <= 0 || strncmp(buf, prefix, k) != 0)
		return false;
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!buf[k])
		return false;
	if (buf[k] == '/')
		return (size_t)snprintf(out, size, "%s", buf + k) < size;
	return (size_t)snprintf(out, size, "%s/%s", base, buf + k) < size;
}

/* The least a file costs the cgroup that makes it on a tmpfs: its inode and
 * dentry, charged as kernel memory (measured: ~1.9 KiB an empty file, fifo
 * or symbolic link on Linux 6.18). */
#define SHM_INODE_COST 1024ull

/* Whether the run's memory limit leaves most of the host's /dev/shm to
 * everyone else. The command writes its git directories' upper layers
 * there, and nothing caps what it writes but its cgroup: the bytes and,
 * through their kernel memory, the inodes. /dev/shm is shared by every user
 * of the host (POSIX shared memory and semaphores, sem_open, shm_open): one
 * command holding its last inode makes them all fail with ENOSPC. So at
 * most a quarter of what is free, in bytes and in the inodes that memory
 * could make — the share of the per-user kernel budgets a sandbox gets. */
static bool shm_room(const struct ward_config *cfg, const struct statfs *sf)
{
	uint64_t cap = cfg->limits.memory + cfg->limits.memory_swap;
	uint64_t room = (uint64_t)sf->f_bavail * (uint64_t)sf->f_bsize;

	if (!cfg->limits.memory || cap < cfg->limits.memory || cap > room / 4)
		return false;
	/* f_files 0: a tmpfs mounted with nr_inodes=0, no count to exhaust */
	return !sf->f_files || cap / SHM_INODE_COST <= (uint64_t)sf->f_ffree / 4;
}

/* Where the overlays' upper layers go: a private directory of this user on
 * the host's /dev/shm when it is a tmpfs with user xattrs, else the state
 * directory. Why: making and removing the directories an overlay needs (its
 * own, and those overlayfs makes and probes in its work directory at each
 * mount) cost 10 to 25 ms a command on this project's VM, whose ext4 is
 * mounted with discard; on tmpfs they cost nearly nothing. The pages are
 * charged to the cgroup of the command that writes them — so only where
 * one is sure to hold them: as root (its cgroup is made or the run fails;
 * an unprivileged caller's may fall back to rlimits only, and /dev/shm is
 * half the RAM), not with --no-cgroup, and only when that cgroup's memory
 * limit cannot fill it (shm_room). malloc'd or NULL. */
static char *shm_runs(const struct ward_config *cfg)
{
	struct statfs sf;
	struct stat st;
	bool room;
	char *dir;

	if (!cfg->cgroup || geteuid() != 0 || statfs("/dev/shm", &sf) < 0 || sf.f_type != TMPFS_MAGIC ||
	    asprintf(&dir, "/dev/shm/ward-git-%u", (unsigned)geteuid()) < 0)
		return NULL;
	room = shm_room(cfg, &sf);
	if (room && mkdir(dir, 0700) == 0) {
		/* overlayfs mounted in a user namespace keeps whiteouts and
		 * opaque marks in user xattrs: tmpfs has them since Linux 6.6 */
		if (setxattr(dir, "user.ward", "1", 1, 0) < 0) {
			rmdir(dir);
			goto no;
		}
	} else if (room && errno != EEXIST) {
		goto no;
	}
	/* the name is guessable: one another user made first is not used (nor
	 * swept); without room, only swept, if there */
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		goto no;
	/* what a killed ward left, whether this run uses it or not */
	ward_workdir_sweep_runs(dir);
	if (room)
		return dir;
no:
	free(dir);
	return NULL;
}

static int add_gitdir(const struct ward_config *cfg, const char *workdir, const char *real,
		      const char *runs, struct ward_workdir_prep *w, struct ward_error **err)
{
	struct ward_gitdir *g;
	struct stat st;

	for (size_t i = 0; i < w->n_gitdirs; i++)
		if (strcmp(w->gitdirs[i].path, real) == 0)
			return 0;
	g = realloc(w->gitdirs, (w->n_gitdirs + 1) * sizeof(*g));
	if (!g)
		return ward_error_make(err, ENOMEM, "git directories");
	w->gitdirs = g;
	g = &g[w->n_gitdirs];
	memset(g, 0, sizeof(*g));
	g->run_fd = -1;
	w->n_gitdirs++;
	if (!(g->path = strdup(real)) || !(g->rel = strdup(real + strlen(workdir) + 1)))
		return ward_error_make(err, ENOMEM, "git directories");
	if ((runs ? ward_workdir_make_run_in(runs, &g->run, &g->run_fd, err) :
		    ward_workdir_make_run(cfg, w->swept, &g->run, &g->run_fd, err)) < 0)
		return -1;
	if (asprintf(&g->upper, "%s/upper", g->run) < 0 || asprintf(&g->work, "%s/work", g->run) < 0) {
		g->upper = g->work = NULL;
		return ward_error_make(err, ENOMEM, "git directories");
	}
	if (mkdir(g->upper, 0700) < 0 || mkdir(g->work, 0700) < 0)
		return ward_error_make(err, errno, "mkdir overlay directories in '%s'", g->run);
	/* the upper's root is the merged directory's root: same mode, and the
	 * same owner where ward may give it (git checks a repository's owner) */
	if (stat(real, &st) == 0) {
		if (st.st_uid != geteuid() || st.st_gid != getegid())
			(void)!chown(g->upper, st.st_uid, st.st_gid);
		chmod(g->upper, st.st_mode & 07777);
	}
	return 0;
}

/* rel added to the resolved protected paths (planned after this). */
static int protect_rel(struct ward_workdir_prep *w, const char *rel, struct ward_error **err)
{
	size_t k = 0;
	char **g;

	while (w->resolved[k]) {
		if (strcmp(w->resolved[k], rel) == 0)
			return 0;
		k++;
	}
	g = realloc(w->resolved, (k + 2) * sizeof(*g));
	if (!g)
		return ward_error_make(err, ENOMEM, "protected paths");
	w->resolved = g;
	g[k] = strdup(rel);
	g[k + 1] = NULL;
	return g[k] ? 0 : ward_error_make(err, ENOMEM, "protected paths");
}

/* A checkout's ".git" inside the workdir that git on the host uses: a
 * gitfile (a linked worktree's, a submodule's) is read-only (a link is
 * pinned, and where it leads inside the workdir read-only), or the command
 * could point it at a directory of its own making; a directory (a
 * submodule's embedded repository) is a git directory like .git, under an
 * overlay while there is room in the plan, else read-only whole. Only what
 * exists: a missing one is a new repository, which mounts cannot stop
 * (ward_protect_nested_git() says where that is refused). */
static int protect_checkout(const struct ward_config *cfg, const char *workdir, const char *dotgit,
			    struct ward_workdir_prep *w, struct ward_error **err)
{
	size_t n = strlen(workdir);
	char real[PATH_MAX];
	struct stat st;

	if (strncmp(dotgit, workdir, n) != 0 || dotgit[n] != '/' || strstr(dotgit, "/../") ||
	    lstat(dotgit, &st) < 0 ||
	    (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)))
		return 0;
	if (ward_protect_is_allowed(w->protect, dotgit + n + 1))
		return 0;
	if (S_ISDIR(st.st_mode) && w->n_gitdirs < SPAWN_MAX_GITDIRS &&
	    inside_dir(workdir, dotgit, real) && strcmp(real, dotgit) == 0)
		return add_gitdir(cfg, workdir, real, w->gitdir_runs, w, err);
	return protect_rel(w, dotgit + n + 1, err);
}

/* The checkouts git knows of: linked worktrees (GITDIR/worktrees/NAME/gitdir
 * names their ".git" file) and submodules (.gitmodules' "path = X"). */
static int protect_checkouts(const struct ward_config *cfg, const char *workdir,
			     const char *gitdir, struct ward_workdir_prep *w,
			     struct ward_error **err)
{
	char path[PATH_MAX], line[PATH_MAX], dotgit[PATH_MAX];
	DIR *d;
	FILE *f;
	struct dirent *e;

	if ((size_t)snprintf(path, sizeof(path), "%s/worktrees", gitdir) < sizeof(path) &&
	    (d = opendir(path))) {
		while ((e = readdir(d))) {
			char file[PATH_MAX];

			if (e->d_name[0] == '.' ||
			    (size_t)snprintf(file, sizeof(file), "%s/%s/gitdir", path, e->d_name) >=
				    sizeof(file) ||
			    !pointer(file, "", workdir, dotgit, sizeof(dotgit)))
				continue;
			if (protect_checkout(cfg, workdir, dotgit, w, err) < 0) {
				closedir(d);
				return -1;
			}
		}
		closedir(d);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/.gitmodules", workdir) >= sizeof(path) ||
	    !(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t"), *v, *end;

		if (strncmp(s, "path", 4) != 0)
			continue;
		v = s + 4 + strspn(s + 4, " \t");
		if (*v != '=')
			continue;
		v += 1 + strspn(v + 1, " \t");
		end = v + strcspn(v, "\r\n");
		while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end - v >= 2 && *v == '"' && end[-1] == '"')
			v++, end--;
		*end = '\0';
		while (end > v && end[-1] == '/')
			*--end = '\0';
		if (!*v || *v == '/' ||
		    (size_t)snprintf(dotgit, sizeof(dotgit), "%s/%s/.git", workdir, v) >= sizeof(dotgit))
			continue;
		if (protect_checkout(cfg, workdir, dotgit, w, err) < 0) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

static int by_length(const void *a, const void *b)
{
	size_t x = strlen(((const struct ward_gitdir *)a)->path),
	       y = strlen(((const struct ward_gitdir *)b)->path);

	return x < y ? -1 : x > y;
}

/* The runs directory of the git overlays, once per prepare. */
static void want_runs(const struct ward_config *cfg, struct ward_workdir_prep *w)
{
	if (w->gitdir_runs_made)
		return;
	w->gitdir_runs_made = true;
	free(w->gitdir_runs);
	w->gitdir_runs = shm_runs(cfg); /* what a killed ward left there swept */
}

/* The workdir's own repository: .git, where it leads, its common directory,
 * and the checkouts it knows of. */
static int prepare_top(const struct ward_config *cfg, const char *workdir,
		       struct ward_workdir_prep *w, struct ward_error **err)
{
	char path[PATH_MAX], real[PATH_MAX], common[PATH_MAX];
	struct stat st;
	size_t first;

	/* --allow-write .git (git init): the person opened it whole */
	if (ward_protect_is_allowed(w->protect, ".git"))
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/.git", workdir) >= sizeof(path) ||
	    lstat(path, &st) < 0)
		return 0;
	/* .git a directory, a link to one, or a gitfile naming one: where it
	 * lies inside the workdir the command can write it (outside, it is not
	 * in the sandbox's view at all) */
	if (S_ISREG(st.st_mode)) {
		char target[PATH_MAX];

		if (!pointer(path, "gitdir: ", workdir, target, sizeof(target)) ||
		    !inside_dir(workdir, target, real))
			return 0;
	} else if (!inside_dir(workdir, path, real)) {
		return 0;
	} else if (S_ISDIR(st.st_mode) && ward_workdir_is_placeholder(path)) {
		/* no repository: the placeholder of another ward's run (or of
		 * one SIGKILLed) covering the missing .git; this run covers it
		 * the same way */
		return 0;
	}
	first = w->n_gitdirs;
	want_runs(cfg, w);
	if (add_gitdir(cfg, workdir, real, w->gitdir_runs, w, err) < 0)
		return -1;
	/* a linked worktree's git directory names the repository's common one */
	if ((size_t)snprintf(path, sizeof(path), "%s/commondir", w->gitdirs[first].path) <
		    sizeof(path) &&
	    pointer(path, "", w->gitdirs[first].path, common, sizeof(common)) &&
	    inside_dir(workdir, common, real) &&
	    add_gitdir(cfg, workdir, real, w->gitdir_runs, w, err) < 0)
		return -1;
	return protect_checkouts(cfg, workdir, w->gitdirs[first].path, w, err);
}

/* Repositories directly inside the workdir (a directory of checkouts, a
 * clone beside the sources): NAME/.git exists, and the host's git in NAME
 * reads its config and hooks. Each is a git directory like the top's while
 * there is room for an overlay, else read-only whole; a gitfile is
 * read-only. Deeper ones are not looked for (a walk of the whole tree each
 * run): the threat model says so. */
static int protect_nested(const struct ward_config *cfg, const char *workdir,
			  struct ward_workdir_prep *w, struct ward_error **err)
{
	char dotgit[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(workdir);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char rel[PATH_MAX];

		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcasecmp(e->d_name, ".git"))
			continue;
		if ((size_t)snprintf(dotgit, sizeof(dotgit), "%s/%s/.git", workdir, e->d_name) >=
			    sizeof(dotgit) ||
		    access(dotgit, F_OK) < 0 || ward_workdir_is_placeholder(dotgit))
			continue; /* none, or another run's cover of a missing one */
		/* a nested git directory the person opened, or one below an
		 * entry opened whole */
		snprintf(rel, sizeof(rel), "%s/.git", e->d_name);
		if (ward_protect_is_allowed(w->protect, rel))
			continue;
		want_runs(cfg, w);
		if (protect_checkout(cfg, workdir, dotgit, w, err) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

int ward_gitdir_prepare(const struct ward_config *cfg, const char *workdir,
			struct ward_workdir_prep *w, struct ward_error **err)
{
	size_t first = w->n_gitdirs;

	w->gitdir_runs_made = false;
	if (prepare_top(cfg, workdir, w, err) < 0 || protect_nested(cfg, workdir, w, err) < 0)
		return -1;
	/* Each one's config and hooks read-only, like .git's: planning them
	 * also pins every directory on the way (a mount point cannot be
	 * renamed), so that the command cannot move a git directory a gitfile
	 * names aside and put one of its own making at its path. */
	for (size_t i = first; i < w->n_gitdirs; i++) {
		char rel[PATH_MAX];

		if (strcmp(w->gitdirs[i].rel, ".git") == 0)
			continue;
		for (int k = 0; k < 2; k++) {
			if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", w->gitdirs[i].rel,
					     k ? "hooks" : "config") >= sizeof(rel))
				return ward_error_make(err, ENAMETOOLONG, "git directory '%s'",
						       w->gitdirs[i].rel);
			if (!ward_protect_is_allowed(w->protect, rel) && protect_rel(w, rel, err) < 0)
				return -1;
		}
	}
	/* mounted in this order: one inside another after it */
	qsort(w->gitdirs, w->n_gitdirs, sizeof(*w->gitdirs), by_length);
	return 0;
}

struct filter {
	struct ward_workdir_prep *w;
	const struct ward_gitdir *g;
	char **dropped; /* directories dropped: what is below goes with them */
	size_t n_dropped;
};

static void drop_dir(struct filter *f, const char *path)
{
	char **g = realloc(f->dropped, (f->n_dropped + 1) * sizeof(*g));

	if (!g)
		return;
	f->dropped = g;
	if ((g[f->n_dropped] = strdup(path)))
		f->n_dropped++;
}

static bool keep(const struct ward_change *c, void *ctx)
{
	struct filter *f = ctx;
	char full[PATH_MAX], gitlink[PATH_MAX];
	enum ward_gitmeta_verdict v;
	bool odd;

	for (size_t i = 0; i < f->n_dropped; i++)
		if (at_or_below(c->path, f->dropped[i]))
			return false; /* reported with its directory */
	snprintf(full, sizeof(full), "%s%s%s", f->g->rel, c->path[0] ? "/" : "", c->path);
	v = c->path[0] ? ward_gitmeta_classify(c->path) : WARD_GITMETA_DENY;
	if (c->path[0] && ward_protect_is_allowed(f->w->protect, full))
		v = WARD_GITMETA_MERGE; /* opened with --allow-write */
	/* git writes files and directories; a link or a device is no data of
	 * its, and set-id bits have no business there */
	odd = c->kind != WARD_CHANGE_DELETED &&
	      (c->type == WARD_FT_SYMLINK || c->type == WARD_FT_OTHER || (c->mode & 06000));
	/* a rebase's or a sequence's to-do list with a command in it, or its
	 * strategy a program of the command's: the person's
	 * `git rebase --continue` would run it on the host */
	if (!odd && c->kind != WARD_CHANGE_DELETED &&
	    ward_gitmeta_state_refused(f->g->upper, c->path))
		odd = true;
	/* an index that makes a directory a submodule: the host's `git status`
	 * would enter it and run what its own config says */
	if (!odd && c->kind != WARD_CHANGE_DELETED &&
	    ward_gitindex_refused(f->g->upper, f->g->path, c->path, ward_gitindex_kind(c->path),
				  gitlink, sizeof(gitlink))) {
		odd = true;
		if (f->w->report && gitlink[0])
			ward_workdir_add_violation(f->w->report, gitlink, "git-gitlink");
	}
	if (v == WARD_GITMETA_MERGE && !odd)
		return true;
	if (v == WARD_GITMETA_TRANSIENT && !odd) {
		/* a lock left by a killed git would stop the host's git; one
		 * the command deleted may be a live git's on the host */
		if (c->type == WARD_FT_DIR)
			drop_dir(f, c->path);
		return false;
	}
	if (f->w->report)
		ward_workdir_add_violation(f->w->report, full, "git-metadata");
	if (c->path[0] && (c->type == WARD_FT_DIR || c->old_type == WARD_FT_DIR))
		drop_dir(f, c->path);
	return false;
}

static int merge(struct ward_workdir_prep *w, const struct ward_gitdir *g,
		 struct ward_error **err)
{
	struct ward_changeset *cs = ward_changeset_scan(g->upper, g->path, err);
	struct filter f = { .w = w, .g = g };
	struct ward_protect *none;
	int rc = 0;

	if (!cs)
		return -1;
	if (ward_changeset_count(cs))
		ward_changeset_filter(cs, keep, &f);
	for (size_t i = 0; i < f.n_dropped; i++)
		free(f.dropped[i]);
	free(f.dropped);
	if (ward_changeset_count(cs)) {
		/* the allowlist has decided: no protected path of the workdir's
		 * list lies inside a git directory's own names */
		none = ward_protect_new(false, err);
		rc = none ? ward_changeset_apply(cs, none, err) : -1;
		ward_protect_free(none);
	}
	ward_changeset_free(cs);
	return rc;
}

int ward_gitdir_finish(struct ward_workdir_prep *w, struct ward_error **err)
{
	int rc = 0;

	for (size_t i = 0; i < w->n_gitdirs; i++) {
		struct ward_gitdir *g = &w->gitdirs[i];

		if (g->upper && access(g->upper, F_OK) == 0 && rc == 0 && merge(w, g, err) < 0)
			rc = -1;
		if (g->run)
			ward_rmtree(g->run);
		if (g->run_fd >= 0)
			close(g->run_fd);
		free(g->path);
		free(g->rel);
		free(g->run);
		free(g->upper);
		free(g->work);
	}
	free(w->gitdirs);
	w->gitdirs = NULL;
	w->n_gitdirs = 0;
	free(w->gitdir_runs);
	w->gitdir_runs = NULL;
	return rc;
}
