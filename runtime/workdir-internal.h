/* workdir-internal.h — the supervisor's side of the workdir: the mounts that
 * protect paths, placeholders for missing ones, the run directory that holds
 * an overlay's upper layer, and the clean-up of runs whose ward died. */
#ifndef WARD_WORKDIR_INTERNAL_H
#define WARD_WORKDIR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "ward/sandbox.h"
#include "ward/workdir.h"

/* One mount the sandbox's init makes over the workdir, in this order
 * (parents first). Paths are absolute, as the sandbox sees them. */
enum spawn_protect_kind {
	SPAWN_PROTECT_PIN = 0, /* bind a directory over itself: it can no longer be
				  renamed, removed or replaced (EBUSY) */
	SPAWN_PROTECT_RO,      /* bind over itself, read-only */
	SPAWN_PROTECT_EMPTY,   /* an empty read-only tmpfs over a placeholder */
	SPAWN_PROTECT_LINK,    /* a symbolic link bound over itself (open_tree with
				  AT_SYMLINK_NOFOLLOW): still a link, but pinned */
	SPAWN_PROTECT_RW,      /* bind over itself, writable again, below a read-only
				  one (the entries of a home's read-only top) */
};

struct spawn_protect {
	char *path;
	enum spawn_protect_kind kind;
};

/* Direct mode: a git directory of the workdir the command works on through
 * an overlay; when the sandbox is gone, what the allowlist names
 * (gitmeta-internal.h) is merged back from the upper layer, the rest dropped
 * and reported. Paths absolute. */
struct ward_gitdir {
	char *path;        /* the real git directory (the overlay's lower, and
			      where the sandbox mounts it) */
	char *rel;         /* path relative to the workdir (".git") */
	char *run;         /* state/runs/ID: holds upper and work, flocked */
	char *upper, *work;
	int run_fd;        /* the flock on run while we live */
};

struct ward_workdir_prep {
	struct ward_workdir_report *report; /* handed to the result */
	struct spawn_protect *mounts;
	size_t n_mounts;
	char **resolved;          /* protected paths, relative */
	struct ward_protect *protect; /* the list they came from (a copy) */
	int link_depth;           /* symbolic links followed while planning one path */
	char *rundir;             /* state/runs/ID (a directory in overlay mode, the
				     run record file in direct mode), or NULL */
	/* placeholders made or shared in the real workdir (direct mode), each
	 * held with a shared flock (ph_fds[i]) until the sandbox is gone */
	struct ward_placeholder {
		char *path;
		struct stat id; /* what the name led to when taken */
	} *ph;
	int *ph_fds;
	size_t n_ph;
	/* the directory holding the last placeholder made or returned, reached
	 * without a link (most share one: the workdir), and its path */
	int ph_dir_fd;            /* -1 when none */
	char *ph_dir;
	char *record;             /* direct mode: the run record's text */
	/* the pool of spare placeholders (state/placeholders), direct mode */
	int pool_fd;              /* -1 until used (or when there is none yet) */
	bool pool_off;            /* it cannot serve this run */
	char *pool_dir;
	char (*pool_names)[32];   /* what it held when listed */
	size_t n_pool, pool_next, pool_count;
	pid_t pool_pid;           /* ours, for the pool's names; 0 until asked */
	char *swept;              /* the runs directory swept of dead wards' runs */
	/* overlay mode */
	char *upper, *work, *phlayer; /* phlayer NULL when no placeholder is needed */
	char *set_dir;            /* a continued kept set: its directory, locked */
	int set_fd;               /* the lock (flock LOCK_EX), -1 when none */
	int run_fd;               /* the run directory (overlay) or record (direct),
				     flock LOCK_EX while we live; -1 until needed */
	char *state;              /* the state directory */
	/* direct mode: git directories under an overlay */
	struct ward_gitdir *gitdirs;
	size_t n_gitdirs;
	char *gitdir_runs;        /* where their runs are (a tmpfs), or NULL:
				     the state directory's runs */
};

/* Direct mode: find the workdir's git directories (.git, where a .git link
 * or gitfile leads inside the workdir, its common directory) and make an
 * overlay's upper and work directories for each under a run directory of
 * the state directory (gitdir.c). Nothing when protect opens ".git". */
int ward_gitdir_prepare(const struct ward_config *cfg, const char *workdir,
			struct ward_workdir_prep *w, struct ward_error **err);

/* After the sandbox is gone: merge back from each upper what the allowlist
 * names, drop the rest (each dropped path a violation seen "git-metadata"),
 * remove the run directories. Returns -1 with err when a merge failed (what
 * was not merged is lost with the run directory). Safe to call twice. */
int ward_gitdir_finish(struct ward_workdir_prep *w, struct ward_error **err);

/* A fresh run directory state/runs/PID-START-SEQ (made, flock LOCK_EX held on
 * *fd): swept like overlay mode's when its ward is dead. */
int ward_workdir_make_run(const struct ward_config *cfg, const char *swept, char **path,
			  int *fd, struct ward_error **err);

/* The same in the directory runs (made), without a sweep. */
int ward_workdir_make_run_in(const char *runs, char **path, int *fd, struct ward_error **err);

/* Remove the runs in the directory runs whose ward is provably dead. */
void ward_workdir_sweep_runs(const char *runs);

/* Whether path is a placeholder (an empty directory with the placeholders'
 * mark, ward's own or another ward's), not followed if a link. */
bool ward_workdir_is_placeholder(const char *path);

/* Note a violation in the report (once per path). */
void ward_workdir_add_violation(struct ward_workdir_report *r, const char *path,
				const char *seen);

/* ward_admit_workdir(), and what the workdir is (WARD_ADMIT_* bits, 0 on
 * failure) for ward_workdir_prepare(): the homes are looked at once per run
 * (admit.c). */
int ward_admit_workdir_bits(const struct ward_admit *a, const char *workdir, unsigned *bits,
			    struct ward_error **err);

/* Plan the workdir for one run (supervisor, before clone): resolve the
 * protected paths, make placeholders or the overlay's directories, sweep
 * runs of dead wards. `enforce` is false when there is no view to mount in
 * (protection then reported as off). `admitted` is what
 * ward_admit_workdir_bits() found the workdir to be (WARD_ADMIT_HOME: its
 * top entries are protected). Fills w; on failure everything made is
 * undone. */
int ward_workdir_prepare(const struct ward_config *cfg, const char *workdir, bool enforce,
			 unsigned admitted, struct ward_workdir_prep *w, struct ward_error **err);

/* After the sandbox is gone: note violations (the change set's entries that
 * touch protected paths, and those the command's captured stderr reports as
 * refused); in overlay mode read the change set (handed to the report,
 * owning the run directory); release placeholders; remove what is left.
 * Safe on a partly prepared w. */
int ward_workdir_finish(struct ward_workdir_prep *w, const char *workdir, bool ran,
			const char *stderr_text, size_t stderr_len, struct ward_error **err);

/* Remove a tree (directories made writable first so that a command's
 * chmod 0 does not stop it). Missing is fine. */
int ward_rmtree(const char *path);

/* The same for name in the directory dfd, never following a symbolic link. */
int ward_rmtree_at(int dfd, const char *name);

/* The state directory for cfg (its own, else ward_state_choose()'s), made
 * and checked to be the caller's alone. malloc'd or NULL with err. */
char *ward_state_dir_for(const char *configured, struct ward_error **err);

/* The state directory (as ward_state_dir_for()) when its changes/NAME is
 * there and, like changes/, a directory of the caller's alone; NULL with
 * *err otherwise (InvalidParameters when there is no such set). */
char *ward_changes_dir_checked(const char *configured, const char *name, struct ward_error **err);

/* A change set over an existing run directory: the set owns rundir and
 * removes it on discard/apply, moves its upper on keep; and lock_fd, the
 * run directory's flock that keeps sweeps away (closed when the set is
 * freed; -1 for none). */
void ward_changeset_own(struct ward_changeset *cs, char *rundir, const char *state_dir,
			int lock_fd);

/* A continued kept set: storage is the kept directory, the name stays. */
void ward_changeset_own_kept(struct ward_changeset *cs, const char *dir, const char *name,
			     const char *state_dir);

/* Keep only the entries keep() accepts, in their order; the others are
 * dropped from the set (their upper files are left alone). */
void ward_changeset_filter(struct ward_changeset *cs,
			   bool (*keep)(const struct ward_change *c, void *ctx), void *ctx);

/* Whether a change set name is acceptable (letters, digits, '-', '_', '.',
 * not first). */
bool ward_changeset_valid_name(const char *name);

#endif
