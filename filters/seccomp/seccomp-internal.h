/* seccomp-internal.h — the built-in profiles, compiled when libward was built.
 *
 * Parsing the default profile in a fresh process (its system calls named
 * through libseccomp's tables) costs ~0.2 ms, compiling it ~4 us; a CLI that
 * starts fresh for every command would pay that every time. So the build compiles the
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
