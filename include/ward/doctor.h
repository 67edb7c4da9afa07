/* ward/doctor.h — what this host offers, what ward will do, and the fixes.
 *
 *     struct ward_doctor d;
 *     ward_doctor_probe(&d);           // looks at the host, runs /bin/true sandboxed
 *     char *json = ward_doctor_to_json(&d);
 *
 * Each check has a status (ok, limited, missing), one line of detail, and a
 * fix when something is missing. Probing never changes the host: it reads
 * /proc and /sys, forks short-lived children, and removes what it made.
 */
#ifndef WARD_DOCTOR_H
#define WARD_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ward_check_status { WARD_CHECK_OK, WARD_CHECK_LIMITED, WARD_CHECK_MISSING };

struct ward_check {
	const char *name;     /* "user namespaces", ... */
	enum ward_check_status status;
	char detail[512];
	char fix[512];        /* "" when nothing to fix */
};

#define WARD_DOCTOR_MAX_CHECKS 12

/* The container ward runs in, as far as it can tell. */
#define WARD_CONTAINER_MAX_HINTS 8
struct ward_container {
	bool in_container;
	char engine[32];    /* "docker", "podman", "kubernetes", "systemd-nspawn", "lxc",
			     * "unknown"; "" when not in a container */
	char hints[WARD_CONTAINER_MAX_HINTS][64]; /* what was seen ("/.dockerenv", ...) */
	int n_hints;
};

/* What detection looks at, each NULL or false when absent (pure input). */
struct ward_container_signs {
	bool dockerenv;              /* /.dockerenv exists */
	const char *containerenv;    /* /run/.containerenv's text ("" if empty) */
	const char *container_var;   /* container= of PID 1's environment, or ours */
	const char *proc1_cgroup;    /* /proc/1/cgroup's text */
	bool kubernetes_env;         /* KUBERNETES_SERVICE_HOST is set */
};

/* Which container the signs say (pure). */
WARD_API void ward_container_detect(const struct ward_container_signs *s,
				    struct ward_container *c);

/* What a container must change for a failing check. */
enum ward_container_need {
	WARD_NEED_NOTHING = 0,
	WARD_NEED_PROC,     /* a new procfs refused: /proc has masked paths */
	WARD_NEED_SECCOMP,  /* namespaces or mounts refused by the engine's seccomp profile */
	WARD_NEED_APPARMOR, /* mounts refused by the engine's AppArmor profile */
};

/* The need behind a failed sandbox test command's message (pure). */
WARD_API enum ward_container_need ward_container_need_of(const char *error_message);

/* The fix in the engine's own words (every engine's when it is not known),
 * written to fix[size] (pure). */
WARD_API void ward_container_fix(const struct ward_container *c, enum ward_container_need need,
				 char *fix, size_t size);

struct ward_doctor {
	struct ward_check checks[WARD_DOCTOR_MAX_CHECKS];
	int n_checks;
	bool root;
	int landlock_abi;     /* 0 when unavailable */
	bool sandbox_works;   /* a full sandbox ran /bin/true */
	char mode[32];        /* "required" or "off" */
	char summary[512];    /* what ward will do on this host */
	struct ward_container container;
};

/* Probe the host. Never fails: what cannot be probed is reported as such. */
WARD_API void ward_doctor_probe(struct ward_doctor *d);

/* The user-namespace check from its inputs (pure): the sysctls
 * kernel.apparmor_restrict_unprivileged_userns (Ubuntu),
 * kernel.unprivileged_userns_clone (Debian's older kernels) and
 * user.max_user_namespaces, each -1 when absent, and the errno of a trial
 * unshare(CLONE_NEWUSER) (0 when it worked). */
WARD_API void ward_doctor_userns_verdict(long apparmor_restrict, long unprivileged_clone,
					 long max_ns, int probe_errno, struct ward_check *c);

/* Where ward's AppArmor profile is installed (packaging/apparmor/ward). */
#define WARD_APPARMOR_PROFILE "/etc/apparmor.d/ward"

/* The fix for user namespaces refused by AppArmor
 * (kernel.apparmor_restrict_unprivileged_userns=1), from its inputs (pure):
 * exe, the running ward's path; profile_text, the contents of
 * WARD_APPARMOR_PROFILE or NULL when there is none; confinement, this
 * process's AppArmor label (/proc/self/attr/current: "ward (unconfined)",
 * "unconfined") or NULL when unreadable. Says which of these holds and what
 * to run: no profile (install it, load it), a profile for another path (run
 * that ward, or one for this path), a profile not loaded (apparmor_parser
 * -r), a loaded one that still refuses. Writes fix[size]. */
WARD_API void ward_doctor_apparmor_fix(const char *exe, const char *profile_text,
				       const char *confinement, char *fix, size_t size);

/* Text for people, JSON for programs (malloc'd). */
WARD_API void ward_doctor_print(const struct ward_doctor *d, FILE *f);
WARD_API char *ward_doctor_to_json(const struct ward_doctor *d);

#ifdef __cplusplus
}
#endif
#endif
