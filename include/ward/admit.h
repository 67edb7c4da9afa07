/* ward/admit.h — which directories may be a workdir (part of the workdir
 * module).
 *
 * How to use this:
 *
 *     // the person's word (CLI options; never from a request or a tool call)
 *     cfg.admit.anywhere = true;     // --allow-workdir-anywhere
 *     cfg.admit.home = true;         // --allow-home-workdir
 *     ward_admit_add_root(&cfg.admit, "/srv/agents", &err);  // --workdir-root
 *
 *     // a workdir an agent named (a JSON request, session.create): it must
 *     // lie under the roots as well
 *     if (ward_admit_request(&cfg.admit, req.workdir, &err) < 0) ...
 *
 *     // ward_run() admits every workdir however it was given (cfg.workdir,
 *     // or the current directory): ward_admit_workdir().
 *
 * The rules, each a rule id in the error (kind NotAuthorized):
 *   workdir-system       "/" or a system directory, or inside one (/etc, /usr,
 *                        /bin, /sbin, /lib*, /boot, /var except /var/tmp, /opt,
 *                        /srv, /run, /proc, /sys, /dev, /snap, ...), or one of
 *                        the shared temporary directories themselves (/tmp,
 *                        /var/tmp, /dev/shm: other users' files)
 *   workdir-masked       at, above or inside a path the view masks
 *                        (/etc/shadow, /etc/sudoers.d, ...): the workdir's
 *                        bind would uncover it
 *   workdir-other-home   another user's home directory, or inside one
 *   workdir-above-home   a parent of a home directory (/home)
 *   workdir-home         a home directory itself (the caller's or anyone's):
 *                        its start-up files run on the next login
 *   workdir-home-entry   in a home directory's dot entry or bin (~/.config,
 *                        ~/.ssh, ~/.local/bin, ~/bin...): what an allowed
 *                        home keeps read-only (the global git config,
 *                        authorized_keys, programs on PATH)
 *   workdir-gitdir       a git directory or inside one (a ".git" component,
 *                        any case; or itself or a parent holding HEAD,
 *                        objects/ and refs/: a bare repository, a separate
 *                        git directory): its config and hooks, writable
 *                        there, run with the host's next git
 *   workdir-outside-roots (requests only) not at or below an allowed root
 * --allow-workdir-anywhere lifts the first four, workdir-home-entry and
 * workdir-gitdir;
 * --allow-home-workdir the
 * fifth (so another user's home itself needs both). A subdirectory of the
 * caller's home is fine. Homes are: every passwd entry's directory, every
 * directory in /home, /root, and the caller's $HOME; each resolved.
 *
 * A home admitted as the workdir is protected as a whole: its top directory
 * is read-only in the sandbox (no name can be created or removed there, so a
 * start-up file that does not exist yet cannot be planted either) and every
 * entry at its top not starting with '.' and not named "bin" is writable again
 * (runtime/workdir/workdir.c); --allow-write NAME opens a dot entry.
 */
#ifndef WARD_ADMIT_H
#define WARD_ADMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The person's rules for workdirs; part of struct ward_config (cfg.admit). */
struct ward_admit {
	bool anywhere;   /* --allow-workdir-anywhere: system dirs, masks, others' homes */
	bool home;       /* --allow-home-workdir: a home directory itself */
	char **roots;    /* absolute paths; a request's workdir lies under one */
	size_t n_roots;
	bool roots_set;  /* the policy gave roots: they replace the default
			    (the directory ward was started in) */
};

WARD_API void ward_admit_release(struct ward_admit *a);
WARD_API int ward_admit_copy(struct ward_admit *dst, const struct ward_admit *src,
			     struct ward_error **err);

/* Add an allowed root (absolute, else InvalidParameters). */
WARD_API int ward_admit_add_root(struct ward_admit *a, const char *root, struct ward_error **err);

/* ---- the decision (pure) ----------------------------------------------------- */

/* What a resolved path is, as bits. */
enum {
	WARD_ADMIT_SYSTEM = 1u << 0,
	WARD_ADMIT_MASKED = 1u << 1,
	WARD_ADMIT_OTHER_HOME = 1u << 2, /* at or below a home not the caller's */
	WARD_ADMIT_ABOVE_HOME = 1u << 3, /* a strict parent of a home */
	WARD_ADMIT_HOME = 1u << 4,       /* equal to a home (the caller's or not) */
	WARD_ADMIT_GITDIR = 1u << 5,     /* a git directory or inside one */
	WARD_ADMIT_HOME_ENTRY = 1u << 6, /* at or below a home's dot entry or bin */
};

/* The host facts the decision needs, all resolved absolute paths,
 * NULL-terminated lists (a NULL list is empty). */
struct ward_admit_facts {
	const char *const *own_homes;   /* the caller's: passwd entry, $HOME */
	const char *const *homes;       /* every home known (may repeat own ones) */
	const char *const *masked;      /* what the view masks; '*' globs allowed in
					   the last component */
};

/* The WARD_ADMIT_* bits of path (resolved, absolute). Of WARD_ADMIT_GITDIR
 * only what the path says (a ".git" component): whether a directory on it
 * is a repository is a host fact, added by ward_admit_workdir() and
 * ward_admit_request(). */
WARD_API unsigned ward_admit_classify(const char *path, const struct ward_admit_facts *f);

/* Whether path lies at or below dir (both resolved; "/" holds everything). */
WARD_API bool ward_admit_under(const char *path, const char *dir);

/* Refuse path (resolved) if a rule holds that a lifts not: NotAuthorized,
 * rule set to the rule id, message naming it. roots (resolved, NULL-terminated)
 * is checked when not NULL (a request's workdir). Returns 0 or -1. */
WARD_API int ward_admit_decide(const char *path, unsigned bits, const struct ward_admit *a,
			       const char *const *roots, struct ward_error **err);

/* ---- the host side ------------------------------------------------------------ */

/* Admit a workdir however it was given (what ward_run() calls): resolve
 * it, gather the homes and masks, decide. */
WARD_API int ward_admit_workdir(const struct ward_admit *a, const char *workdir,
				struct ward_error **err);

/* Admit a workdir an agent named (a JSON request, session.create): the
 * rules above, and it must lie under a root: the policy's roots or else the
 * directory ward was started in (the current directory; none when that is
 * a system directory), plus the roots the person added. Symbolic links are
 * resolved first. extra_root: one more root (the person's own -C), or NULL.
 * InvalidParameters for a path that does not resolve. */
WARD_API int ward_admit_request(const struct ward_admit *a, const char *workdir,
				const char *extra_root, struct ward_error **err);

/* Whether dir (resolved) is a home directory by the rules above (passwd,
 * /home/NAME, /root, $HOME). Reads the host's user database. */
WARD_API bool ward_admit_is_home(const char *dir);

#ifdef __cplusplus
}
#endif
#endif
