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

#define SPAWN_MAX_GITDIRS 4 /* direct mode's overlaid git directories (gitdir.c makes 2 at most) */

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
 * (workdir-internal.h) is merged back from the upper layer, the rest dropped
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
	bool pool_tried;          /* looked for once: none yet is not looked for again */
	bool pool_as_is;          /* placeholders move in and out read-only (see pool_put) */
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
	bool gitdir_runs_made;    /* gitdir_runs chosen (ward_gitdir_prepare) */
};

/* Direct mode: find the workdir's git directories (.git, where a .git link
 * or gitfile leads inside the workdir, its common directory, the .git of
 * each directory directly inside the workdir) and make an
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


/* ---- gitmeta.c: which names inside a git directory a sandboxed
 * command may change: the allowlist of what ordinary git work writes.
 *
 * Deny by default. Git reads much of what lies in a git directory as
 * configuration or as a path to other git data (config, config.worktree,
 * commondir, gitdir, hooks/, info/, objects/info/alternates, a submodule's
 * modules/NAME/config...), and later versions of git may read names that do
 * not exist today. So a change is let through only when its name is one that
 * ordinary work writes (objects, refs, logs, the index, HEAD and the other
 * *_HEAD files, COMMIT_EDITMSG, packed-refs, and what merge, rebase,
 * cherry-pick, revert, stash, bisect and commit --amend leave); everything
 * else is refused. Pure: no system call. */

#include <stdbool.h>
#include <stddef.h>

enum ward_gitmeta_verdict {
	WARD_GITMETA_MERGE = 0,   /* ordinary git data: may change */
	WARD_GITMETA_TRANSIENT,   /* a lock file of such a name ("index.lock"): git
				     renames it into place; one left over is a
				     crashed git's, never to be merged back */
	WARD_GITMETA_DENY,        /* anything else: read-only, not to be created */
};

/* The verdict on rel, a path relative to a git directory ("refs/heads/main",
 * "modules/lib/HEAD", "worktrees/wt/index"); "" is the git directory itself
 * (its mode, or replacing it: denied). Submodules' git directories
 * (modules/NAME/..., NAME possibly several components) and worktrees'
 * (worktrees/NAME/...) get the same rule, recursively; creating a new one is
 * denied (it would need its config). A ".git" component anywhere is denied. */
enum ward_gitmeta_verdict ward_gitmeta_classify(const char *rel);

/* For rel relative to the workdir: whether it lies inside a git directory
 * (below a ".git" component, at any depth, compared case-insensitively) and
 * the allowlist denies it. A ".git" entry itself is not judged here (the
 * protected paths and ward_protect_nested_git() do). */
bool ward_gitmeta_denied_in_workdir(const char *rel);

/* Whether rel (relative to the workdir) lies inside a git directory: below
 * a ".git" component. */
bool ward_gitmeta_in_gitdir(const char *rel);

/* Whether rel (relative to a git directory or to the workdir) is the to-do
 * list of a rebase or of a cherry-pick/revert sequence
 * (rebase-merge/git-rebase-todo, sequencer/todo): lines git runs when the
 * person continues. */
bool ward_gitmeta_is_todo(const char *rel);

/* Whether a to-do list's text (len bytes) holds a line that runs a command
 * ("exec"/"x"), which the host's `git rebase --continue` would run. */
bool ward_gitmeta_todo_runs_code(const char *text, size_t len);

/* Whether the to-do list at base/rel must not reach the host: it holds a
 * command line, or cannot be read whole (not a regular file, over 1 MiB).
 * Opened without following a symbolic link. */
bool ward_gitmeta_todo_refused(const char *base, const char *rel);

/* Whether rel (relative to a git directory or to the workdir) is a state
 * file naming the merge strategy a rebase or a sequence continues with
 * (rebase-merge/strategy, rebase-apply/strategy, sequencer/opts): git runs
 * `git merge-NAME`, and a NAME with a '/' is a path into the worktree. */
bool ward_gitmeta_names_strategy(const char *rel);

/* Whether such a file's text (len bytes) names anything but one of git's
 * own strategies (ort, recursive, resolve, octopus, ours, subtree); for
 * sequencer/opts, any mention of "strategy" not in the form git writes. */
bool ward_gitmeta_strategy_runs_code(const char *rel, const char *text, size_t len);

/* Whether the text of rebase-apply/apply-opt (the `git apply` options a
 * `git am` continues with, shell-quoted words) holds anything but the
 * options `git am` passes on (--whitespace=, --directory=, --exclude=,
 * --include=, -C, -p, --reject, --ignore-space-change,
 * --ignore-whitespace): --build-fake-ancestor=FILE has the host's
 * `git am --continue` write FILE anywhere. */
bool ward_gitmeta_apply_opt_refused(const char *text, size_t len);

/* Whether base/rel must not reach the host because of what it says: a
 * to-do list (ward_gitmeta_todo_refused()), a strategy file naming a
 * program of the command's, an am's apply-opt; false for any other name. */
bool ward_gitmeta_state_refused(const char *base, const char *rel);

/* ---- gitindex.c: the submodules a git index names.
 *
 * A git index may hold "gitlinks": entries of mode 160000 that make a path
 * a submodule. The host's `git status` at the top of a repository descends
 * into every populated submodule and runs git there, which reads that
 * directory's own config (core.fsmonitor, core.hooksPath...). A command in a
 * direct-mode workdir can make a nested repository with a config of its
 * choosing (`git init sub`); once the index records `sub` as a gitlink, the
 * host's next `git status` at the top runs that config's code. So when a
 * command changed an index, the gitlinks of the new one must all be gitlinks
 * of the old one. Split indexes (sharedindex.*) count with their index.
 * Nor may a new index hold a path git itself would refuse to add: git does
 * not check the paths of the index it reads before writing them out. 
 *
 * The parser is pure (a buffer in, the sorted paths out); the reading
 * helpers open files below a directory without following a link. */

struct ward_gitlinks {
	char **paths; /* sorted, owned */
	size_t n;
	bool unnamed; /* a gitlink with an empty name (a split index's
			 replacement of a shared entry): cannot be judged */
	char *unsafe; /* the first entry of any kind whose path git would
			 refuse to add (absolute; an empty, ".", ".." or
			 ".git" component): owned, NULL if none */
};

/* Parse an index file (versions 2, 3 and 4; read with SHA-1 and with
 * SHA-256 object names, the gitlinks of every reading whose entries and
 * extensions end exactly at the trailing checksum kept). Adds them to
 * *out (which may hold some already: the union is kept sorted and unique).
 * Returns 0, or -1 with errno EINVAL for anything that is not a well-formed
 * index, ENOMEM. */
int ward_gitindex_parse(const unsigned char *buf, size_t len, struct ward_gitlinks *out);

bool ward_gitlinks_has(const struct ward_gitlinks *g, const char *path);

void ward_gitlinks_release(struct ward_gitlinks *g);

/* Whether rel (relative to a git directory) is a file git reads as an index
 * of that git directory or of one inside it (named index or sharedindex.*):
 * SURE at the top, in a worktree's directory (worktrees/NAME/) and in a
 * submodule's (modules/NAME.../) with no name of git's data directories on
 * the way; MAYBE where the path can also be data (a branch named "index":
 * refs/heads/index, or a submodule named "refs"). */
enum ward_gitindex_kind {
	WARD_GITINDEX_NONE = 0,
	WARD_GITINDEX_SURE,
	WARD_GITINDEX_MAYBE,
};
enum ward_gitindex_kind ward_gitindex_kind(const char *rel);

/* The verdict on an index-like file a command changed in a git directory's
 * writable layer: rel relative to upper (the layer) and lower (the git
 * directory as it was). True when the new file must not reach the host: it
 * names a gitlink the old index of that git directory (and its shared
 * indexes) did not, or a gitlink with no name; or, for a SURE index, it
 * cannot be read whole as an index (not a regular file, a link, over 1 GiB,
 * malformed — deny by default); a MAYBE that is no index is data. *which
 * gets the first new gitlink's path ("" if none is to blame), truncated to
 * n bytes. Files are opened without following a link, below upper and
 * lower. An index holding an entry with an unsafe path (struct
 * ward_gitlinks) is refused too (*which left ""): git trusts its index,
 * and the host's `git restore .` or `git checkout .` would write the
 * entry's blob at that path (.git/hooks/post-checkout, ../elsewhere,
 * /absolute) with the mode the entry says. */
bool ward_gitindex_refused(const char *upper, const char *lower, const char *rel,
			   enum ward_gitindex_kind kind, char *which, size_t n);

/* The same for rel relative to a workdir (an overlay change set's entry,
 * ".git/index", "sub/.git/modules/lib/index"): the git directory is the
 * path up to its first ".git" component, in upper (the change set's layer)
 * and in workdir (as it is). False for what lies in no git directory or is
 * no index. */
bool ward_gitindex_workdir_refused(const char *upper, const char *workdir, const char *rel);

/* ---- admit.c ---- */

/* The host paths the view masks (NULL-terminated; '*' in a last component):
 * runtime/core/view.c mounts over them, and a workdir must not uncover them. */
const char *const *ward_view_masked(void);

#endif
