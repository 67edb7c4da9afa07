/* gitmeta-internal.h — which names inside a git directory a sandboxed
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
#ifndef WARD_GITMETA_INTERNAL_H
#define WARD_GITMETA_INTERNAL_H

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

#endif
