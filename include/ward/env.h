/* ward/env.h — the environment a sandboxed command gets.
 *
 * Only safe variables are inherited from the host: PATH, HOME, USER,
 * LOGNAME, SHELL, TERM, COLORTERM, LANG, LC_*, PWD, TMPDIR, XDG_*, CARGO_HOME,
 * RUSTUP_HOME, NODE_PATH, EDITOR, VISUAL. API keys, tokens and credentials are
 * never inherited, whatever their names. Pure code.
 */
#ifndef WARD_ENV_H
#define WARD_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The PATH given when the host has none. */
#define WARD_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Whether a variable name is on the safe list. */
WARD_API bool ward_env_is_safe(const char *name, size_t len);

/* Build the command's environment: the safe variables of `host` (a
 * NULL-terminated "K=V" array, usually environ) unless `clear`; then PWD set to
 * workdir (if not NULL); then each of `set` ("K=V", n_set entries) replacing a
 * variable of the same name; PATH defaulted if absent. Returns a malloc'd
 * NULL-terminated array of malloc'd strings (free with ward_env_free), or NULL
 * (ENOMEM). */
WARD_API char **ward_env_build(char *const *host, bool clear, const char *workdir,
			       char *const *set, size_t n_set, struct ward_error **err);

/* The value of name in a "K=V" array, or NULL. */
WARD_API const char *ward_env_get(char *const *env, const char *name);

WARD_API void ward_env_free(char **env);

#ifdef __cplusplus
}
#endif
#endif
