/* seccomp-internal.h — the built-in profiles, compiled when libward was built.
 *
 * Compiling a profile with libseccomp costs ~2 ms; a CLI that starts fresh
 * for every command would pay it every time. So the build compiles the
 * built-in profiles once (filters/seccomp/gen/embed.c) and libward carries
 * the BPF. Profile files are still compiled at run time and cached. */
#ifndef WARD_SECCOMP_INTERNAL_H
#define WARD_SECCOMP_INTERNAL_H

#include <stdbool.h>

#include "ward/seccomp.h"

/* The precompiled program of a built-in profile ("default", "strict") with
 * or without the ptrace rules lifted, or NULL when there is none. */
const struct ward_seccomp_program *ward_seccomp_builtin(const char *name, bool allow_ptrace);

#endif
