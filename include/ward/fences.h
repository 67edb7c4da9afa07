/* ward/fences.h — the kernel fences of one sandbox, prepared together in the
 * supervisor and entered in order in the sandbox's init.
 *
 * How to use this:
 *
 *     // supervisor, before clone (allocates, may fail on configuration)
 *     struct ward_fences_config cfg;
 *     ward_fences_config_init(&cfg);
 *     cfg.landlock.workdir = workdir;
 *     cfg.seccomp = "default";                 // "strict", "off", or a file
 *     struct ward_fences *f;
 *     if (ward_fences_prepare(&cfg, &f, &err) < 0) ...   // ExecutionFailed
 *     // sandbox init, after pivot_root (system calls only):
 *     ward_fences_enter(f, &err);    // capabilities, no_new_privs, Landlock
 *     ... fork the command ...
 *     ward_fences_seal(f, &err);     // seccomp, last, just before execve
 *     // result: copy *ward_fences_report(f)
 *
 * ward_fences_enter() and ward_fences_seal() may also run back to back in the
 * init before it forks the command (the init then lives under the same filter,
 * which allows wait4, kill and exit).
 */
#ifndef WARD_FENCES_H
#define WARD_FENCES_H

#include <stdbool.h>

#include "ward/error.h"
#include "ward/landlock.h"
#include "ward/seccomp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ward_fences_config {
	struct ward_landlock_config landlock;
	const char *seccomp; /* "default" (the default), "strict", "off", or a profile file */
	struct ward_seccomp_options seccomp_options;
	bool drop_caps;      /* default true; false only for tests of the other layers */
};

/* What was applied, for the result. Plain data, copy it as it is. */
struct ward_fences_report {
	struct ward_landlock_report landlock;
	char seccomp_profile[WARD_SECCOMP_NAME_MAX]; /* "default", "strict", "off", a path */
	bool allow_ptrace;
	bool caps_dropped;
	bool no_new_privs;
};

struct ward_fences;

/* Defaults: ward_landlock_config_init(), seccomp "default", caps dropped. */
WARD_API void ward_fences_config_init(struct ward_fences_config *cfg);

/* Negotiate the Landlock ABI (cached), plan Landlock, and get the compiled
 * seccomp program (cached per profile). On success *out owns the result
 * (ward_fences_free). Fails as ward_landlock_plan_new() and
 * ward_seccomp_program_get() do; the message says which layer. */
WARD_API int ward_fences_prepare(const struct ward_fences_config *cfg, struct ward_fences **out,
				 struct ward_error **err);

WARD_API const struct ward_fences_report *ward_fences_report(const struct ward_fences *f);

/* The Landlock plan and seccomp program inside (owned by f). */
WARD_API const struct ward_landlock_plan *ward_fences_landlock(const struct ward_fences *f);
WARD_API const struct ward_seccomp_program *ward_fences_seccomp(const struct ward_fences *f);

/* In the sandbox: drop every capability, set no_new_privs, apply Landlock.
 * System calls only. Returns 0 or -1 with err (see the modules' errors). */
WARD_API int ward_fences_enter(const struct ward_fences *f, struct ward_error **err);

/* In the sandbox, last before execve: load the seccomp program. */
WARD_API int ward_fences_seal(const struct ward_fences *f, struct ward_error **err);

WARD_API void ward_fences_free(struct ward_fences *f);

#ifdef __cplusplus
}
#endif
#endif
