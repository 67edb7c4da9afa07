/* ward/caps.h — leave the sandbox with no capability and no way back.
 *
 * How to use this, in the sandbox's init after pivot_root and before
 * Landlock and seccomp (system calls only, no allocation):
 *
 *     if (ward_caps_drop_all(&err) < 0 || ward_caps_no_new_privs(&err) < 0)
 *             ...   // err points to preallocated storage
 *
 * The user namespace gives the init every capability over its own
 * namespaces; the command needs none of them. After ward_caps_drop_all()
 * the bounding, ambient, inheritable, permitted and effective sets are empty
 * and the securebits are locked so that uid 0 inside does not regain
 * capabilities on execve (SECBIT_NOROOT), setuid transitions do not touch
 * them, and no ambient capability can be raised.
 */
#ifndef WARD_CAPS_H
#define WARD_CAPS_H

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Drop every capability of the calling thread: lock the securebits, empty
 * the bounding set, clear the ambient set, then empty the inheritable,
 * permitted and effective sets. Needs CAP_SETPCAP (the init of a fresh user
 * namespace has it) — except in a thread whose permitted set is already
 * empty (an unprivileged process outside a user namespace of its own): it
 * has nothing to lock or drop, only its inheritable set is emptied, and it
 * must set no_new_privs next, as always. Returns 0, or -1 with err naming the
 * step and errno (EPERM when capabilities are held without CAP_SETPCAP).
 * Only prctl/capget/capset calls. */
WARD_API int ward_caps_drop_all(struct ward_error **err);

/* Set no_new_privs (needed by Landlock and seccomp without CAP_SYS_ADMIN;
 * also keeps setuid binaries from granting anything). Returns 0 or -1 with
 * err. */
WARD_API int ward_caps_no_new_privs(struct ward_error **err);

#ifdef __cplusplus
}
#endif
#endif
