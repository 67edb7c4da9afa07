/* ward/workdir.h — the workdir: protected paths, and the change sets of
 * overlay mode.
 *
 * How to use this:
 *
 *     // protected paths: the policy's list, resolved against one workdir
 *     struct ward_protect *pr = ward_protect_new(true, &err);  // the defaults
 *     ward_protect_add(pr, ".direnv", &err);                     // --protect
 *     ward_protect_allow(pr, ".vscode", &err);                   // --allow-write
 *     bool hit = ward_protect_touches(pr, "/src/app", ".vscode/x.json");
 *
 *     // overlay mode: ward_run() leaves res.workdir->changes; the caller
 *     // decides (ward_result_release() discards an undecided set)
 *     struct ward_changeset *cs = res.workdir->changes;
 *     ward_changeset_apply(cs, pr, &err);      // into the real workdir
 *     ward_changeset_keep(cs, name, sizeof(name), &err);  // for later review
 *     ward_changeset_discard(cs);
 *
 *     // a kept set, later (ward diff/apply/discard NAME)
 *     struct ward_changeset *k = ward_changeset_open(NULL, "20260101-120000-42", &err);
 *     ward_changeset_diff(k, 1, &err);
 *     ward_changeset_free(k);
 *
 *     // a series of commands adding up to one set (a session): keep the
 *     // first, then run the next ones over it
 *     cfg.workdir_mode = WARD_WORKDIR_OVERLAY;
 *     cfg.continue_changes = strdup(name);   // the command sees the set, adds to it
 *     ward_run(&cfg, argv, &res, &err);      // res.workdir->changes: the whole set
 *
 * In direct mode every git directory of the workdir (.git, where a .git
 * link or gitfile leads inside it, a submodule's embedded one) is an overlay
 * while the command runs: when it ends, only what ordinary git work writes
 * (objects, refs, logs, the index, HEAD and the other *_HEAD files...) is
 * merged back; the rest is dropped and reported (deny by default: see
 * runtime/workdir/workdir-internal.h). Applying a change set refuses the same.
 *
 * Protected paths are relative to the workdir. In the sandbox they stay
 * read-only: each existing one is bound read-only over itself, each directory
 * between the workdir and it becomes a mount point (so it cannot be renamed
 * away or replaced), and a missing one is covered by an empty read-only
 * directory (runtime/workdir/workdir.c and README's Design section say how). The
 * defaults hold files that make code run later outside the sandbox; when the
 * workdir is, or directly contains, a home directory, shell start-up files
 * and the like are added for it.
 *
 * A change set is the upper directory of an overlayfs mounted in the
 * sandbox over the workdir: every write the command made, none of them in
 * the real workdir. ward_changeset_scan() reads it into a list of entries
 * (added, modified, deleted, mode changed), interpreting whiteouts and opaque
 * directories against the workdir as it is now.
 */
#ifndef WARD_WORKDIR_H
#define WARD_WORKDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ward_workdir_mode {
	WARD_WORKDIR_DIRECT = 0, /* the real workdir, writable except protected paths */
	WARD_WORKDIR_OVERLAY,    /* writes held aside in a change set */
};

/* "direct" / "overlay" to the mode; InvalidParameters otherwise. */
WARD_API int ward_workdir_parse_mode(const char *s, enum ward_workdir_mode *mode,
				     struct ward_error **err);
WARD_API const char *ward_workdir_mode_name(enum ward_workdir_mode mode);

/* ---- protected paths (pure) ------------------------------------------------ */

struct ward_protect;

/* A new list: the defaults when `defaults` is true, else empty. */
WARD_API struct ward_protect *ward_protect_new(bool defaults, struct ward_error **err);
WARD_API void ward_protect_free(struct ward_protect *p);
WARD_API struct ward_protect *ward_protect_copy(const struct ward_protect *p,
						struct ward_error **err);

/* Add a path relative to the workdir ("a/b", a trailing '/' is dropped).
 * Refuses "", absolute paths, "." and ".." components: InvalidParameters. */
WARD_API int ward_protect_add(struct ward_protect *p, const char *rel, struct ward_error **err);

/* Open a path for writing: every entry equal to it or below it is dropped
 * for the workdir itself and for home directories in it (".vscode" opens
 * ".vscode"; ".git" opens ".git/hooks" and ".git/config"). Same checks. */
WARD_API int ward_protect_allow(struct ward_protect *p, const char *rel, struct ward_error **err);

/* Whether rel (relative to the workdir) was opened with ward_protect_allow()
 * (it, or a path above it). p may be NULL. Pure. */
WARD_API bool ward_protect_opened(const struct ward_protect *p, const char *rel);

/* The default entries (NULL-terminated), and those added for a home directory. */
WARD_API const char *const *ward_protect_defaults(void);
WARD_API const char *const *ward_protect_home_defaults(void);

/* Whether a directory looks like a home: it is $HOME, /root or /home/NAME, or
 * holds .bashrc, .bash_profile, .profile, .zshrc or .ssh. Reads the disk. */
WARD_API bool ward_protect_is_home(const char *dir);

/* The list resolved for one workdir: the entries, then the home entries for
 * the workdir and for each direct subdirectory that looks like a home
 * ("alice/.bashrc"). Relative paths, malloc'd, NULL-terminated; free with
 * ward_protect_strv_free(). Reads the disk (to find homes). */
WARD_API char **ward_protect_resolve(const struct ward_protect *p, const char *workdir,
				     struct ward_error **err);
WARD_API void ward_protect_strv_free(char **v);

/* Whether changing rel (relative to the workdir) touches a protected path in
 * `resolved`: rel is one, lies below one, or is a directory above one (so
 * deleting or replacing it would take the protected path with it). Pure. */
WARD_API bool ward_protect_touches(char *const *resolved, const char *rel);

/* Whether rel is git metadata a change set must not carry: a repository's
 * ".git" below the top of the workdir (a new repository, or a gitfile
 * pointing elsewhere), its config or hooks; and in any git directory of the
 * workdir (".git/...", "sub/.git/...", at any depth) whatever the allowlist
 * of ordinary git work does not name (".git/commondir", ".git/info/exclude",
 * ".git/modules/x/config", a new unknown name: see workdir-internal.h).
 * Mounts cannot cover names at any depth, so direct mode does not stop a
 * command from making a new repository further down; applying a change set
 * refuses them (unless allowed with ward_protect_allow()). p may be NULL.
 * Pure. */
WARD_API bool ward_protect_nested_git(const struct ward_protect *p, const char *rel);

struct ward_change;

/* ward_protect_nested_git() for a change set's entry, and inside a git
 * directory also what git never writes there: a symbolic link, a device or
 * fifo, a set-id bit. What applying a change set refuses. Pure. */
WARD_API bool ward_protect_git_change_denied(const struct ward_protect *p,
					     const struct ward_change *c);

/* Whether rel is opened for writing by ward_protect_allow() (it, or a
 * directory above it, was allowed). Pure. */
WARD_API bool ward_protect_is_allowed(const struct ward_protect *p, const char *rel);

/* What the sandbox does about one protected path. */
enum ward_protect_state {
	WARD_PROTECT_READ_ONLY = 0, /* exists; bound read-only over itself */
	WARD_PROTECT_PLACEHOLDER,   /* missing; an empty read-only directory covers it */
	WARD_PROTECT_COVERED,       /* missing below a placeholder or read-only parent */
	WARD_PROTECT_UNPROTECTED,   /* a symbolic link on the way: mounts cannot pin it */
};
WARD_API const char *ward_protect_state_name(enum ward_protect_state s);

/* ---- change sets ---------------------------------------------------------- */

enum ward_change_kind {
	WARD_CHANGE_ADDED = 0,
	WARD_CHANGE_MODIFIED, /* content (a file) or target (a symbolic link) */
	WARD_CHANGE_DELETED,
	WARD_CHANGE_MODE,     /* permissions only */
	WARD_CHANGE_REPLACED, /* another type now (a file where a directory was...) */
};

enum ward_file_type { WARD_FT_NONE = 0, WARD_FT_FILE, WARD_FT_DIR, WARD_FT_SYMLINK, WARD_FT_OTHER };

struct ward_change {
	enum ward_change_kind kind;
	char *path;                    /* relative to the workdir */
	enum ward_file_type type, old_type;
	mode_t mode, old_mode;         /* permission bits (07777) */
	int64_t size, old_size;        /* bytes; -1 when there is no such side */
	int64_t old_mtime_ns;          /* the real one when scanned (conflict checks) */
	uint64_t old_ino;
	unsigned warn;                 /* WARD_CHANGE_WARN_* bits */
	char *target;                  /* a symbolic link's target text (type
					  WARD_FT_SYMLINK), else NULL */
};

/* What a person should know about one entry (struct ward_change.warn).
 * Applying never carries set-id bits or file capabilities into the workdir:
 * a file the command left set-uid would run as its owner for whoever starts
 * it on the host. */
enum {
	WARD_CHANGE_WARN_SETID = 1u << 0,   /* set-uid/set-gid bits: stripped on apply */
	WARD_CHANGE_WARN_CAPS = 1u << 1,    /* file capabilities (security.capability):
					       not applied */
	WARD_CHANGE_WARN_LINK_OUT = 1u << 2, /* a symbolic link leading outside the
						workdir (applied as it is) */
};

/* "setid-stripped", "capabilities-dropped", "symlink-outside-workdir" for one
 * bit; NULL for another. */
WARD_API const char *ward_change_warning_name(unsigned bit);

struct ward_changeset;

/* Read upper (an overlay upper directory) against lower (the real workdir).
 * Both are walked by descriptor from the top, never through a symbolic link
 * (one is an entry, reported with its target text, never read through,
 * whichever side it is on, even one that replaced a directory since the
 * walk began). Entries are sorted by path; a deleted or added directory is one entry
 * followed by one entry per file below it. Returns a new set (the directory
 * is not owned: freeing does not remove it), or NULL with err. */
WARD_API struct ward_changeset *ward_changeset_scan(const char *upper, const char *lower,
						    struct ward_error **err);

WARD_API size_t ward_changeset_count(const struct ward_changeset *cs);
WARD_API const struct ward_change *ward_changeset_get(const struct ward_changeset *cs, size_t i);
/* The workdir the set applies to, and its kept name ("" if not kept). */
WARD_API const char *ward_changeset_workdir(const struct ward_changeset *cs);
WARD_API const char *ward_changeset_name(const struct ward_changeset *cs);

/* Copy the changes into the real workdir: each file written to a temporary
 * name in its directory, then renamed over the old one; deletions, new
 * directories, symbolic links and modes likewise. Paths are resolved below
 * the workdir and the upper directory without following symbolic links (a
 * link planted on the way fails the entry with ELOOP: nothing is written
 * outside the workdir). Set-uid and set-gid bits are stripped from what is
 * applied (a directory keeps a set-gid bit it already had), file
 * capabilities and other extended attributes are not copied; each entry
 * concerned carries WARD_CHANGE_WARN_SETID / _CAPS. If any entry touches a
 * path protected by `protect` (ward_protect_touches), nothing is applied and
 * the error (kind NotAuthorized, rule "protected-path") names them. On
 * success the set's own storage is removed. */
WARD_API int ward_changeset_apply(struct ward_changeset *cs, const struct ward_protect *protect,
				  struct ward_error **err);

/* A kept set remembers the workdir as the command saw it (each entry's real
 * file: type, inode, size, modification time). Applying it later refuses,
 * naming them, entries whose real file has changed since (someone edited
 * it meanwhile: applying would overwrite that edit); ExecutionFailed with
 * rule "conflict". force skips that check. */
WARD_API void ward_changeset_set_force(struct ward_changeset *cs, bool force);

/* Keep the set under the state directory for later; its name is written to
 * name[size]. Kept sets are what ward_changeset_open() finds. */
WARD_API int ward_changeset_keep(struct ward_changeset *cs, char *name, size_t size,
				 struct ward_error **err);

/* Remove the set's storage (a kept one too). The set stays readable in
 * memory until freed. */
WARD_API void ward_changeset_discard(struct ward_changeset *cs);

/* Whether a run continuing this kept set holds it now (then apply refuses
 * with EBUSY, and it should not be discarded). */
WARD_API bool ward_changeset_busy(const struct ward_changeset *cs);

/* Whether the set has been applied, kept or discarded. */
WARD_API bool ward_changeset_settled(const struct ward_changeset *cs);

/* Free the in-memory set; does not touch the storage. */
WARD_API void ward_changeset_free(struct ward_changeset *cs);

/* Print a unified diff of the set to fd (text files through diff(1); "Binary
 * files ... differ" for others; a line per mode change, per symbolic link
 * with its target text, per warning). Files are opened below the workdir and
 * the upper directory without following any symbolic link: a file that is
 * one now, or lies below one, is not read ("(not a regular file now)"). The
 * text is exact: names and contents as they are. */
WARD_API int ward_changeset_diff(const struct ward_changeset *cs, int fd, struct ward_error **err);

/* The same for a person's terminal: every name and every line of content
 * through ward_text_escape() (ward/request.h), so that what the command wrote
 * cannot move the cursor, rewrite lines or set the title while the diff is
 * read. */
WARD_API int ward_changeset_diff_escaped(const struct ward_changeset *cs, int fd,
					 struct ward_error **err);

/* Open a kept set by name. state_dir NULL means the default
 * (ward_state_dir()). InvalidParameters for an unknown or malformed name. */
WARD_API struct ward_changeset *ward_changeset_open(const char *state_dir, const char *name,
						    struct ward_error **err);

/* The names of kept sets, sorted, NULL-terminated (ward_protect_strv_free). */
WARD_API char **ward_changeset_list(const char *state_dir, struct ward_error **err);

/* The state directory: the first usable of $XDG_STATE_HOME/ward,
 * $HOME/.local/state/ward, $XDG_RUNTIME_DIR/ward, /tmp/ward-UID and a
 * private /tmp/ward-UID.XXXXXX (when another user holds /tmp/ward-UID).
 * Usable: every directory on the way root's or the caller's and writable by
 * no one else (sticky ones excepted), the last one the caller's alone; a
 * symbolic link on the way is followed only when root or the caller owns it.
 * Nothing is made here (ward makes it on first use). malloc'd, NULL when
 * none is usable. `ward doctor` says which one is used and why the others
 * were passed over. */
WARD_API char *ward_state_dir(void);

/* ---- the workdir part of a result ------------------------------------------- */

struct ward_protect_report {
	char *path;                  /* relative to the workdir */
	enum ward_protect_state state;
};

struct ward_workdir_report {
	enum ward_workdir_mode mode;
	bool protection;             /* protected paths were enforced (needs the view) */
	struct ward_protect_report *protected_paths;
	size_t n_protected;
	/* Protected paths the command tried to change, as far as ward can see:
	 * change set entries that touch one (overlay mode; refused on apply),
	 * what the command changed in a git directory that the allowlist of
	 * ordinary git work does not name (direct mode: the git directory was
	 * an overlay, and that was not merged back), a submodule path a changed
	 * index would have added (direct mode: the index was not merged back),
	 * and paths named in the
	 * command's captured stderr on a line that reports EROFS, EBUSY or
	 * EISDIR (best effort: a refusal the command does not report, or
	 * reports otherwise, is not seen). */
	struct ward_violation {
		char *path;         /* relative to the workdir */
		const char *seen;   /* "change-set", "git-metadata", "git-gitlink" or
				       "stderr" */
	} *violations;
	size_t n_violations;
	struct ward_changeset *changes; /* overlay mode: what the command changed */
	char change_name[64];        /* set when kept */
	char change_action[16];      /* "applied", "discarded", "kept", "" */
};

WARD_API void ward_workdir_report_free(struct ward_workdir_report *r);

#ifdef __cplusplus
}
#endif
#endif
