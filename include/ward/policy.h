/* ward/policy.h — the policy file: built-in defaults, overridden by a policy
 * file (JSON), overridden by flags. One place decides.
 *
 *     struct ward_config cfg;
 *     ward_config_init(&cfg);                               // defaults
 *     if (ward_policy_load(path, &cfg, &err) < 0) ...        // the file
 *     // then the CLI's flags, applied on top
 *
 * A policy file is one JSON object. Every key is checked: a misspelt or
 * unknown key, a wrong type, an impossible value is an InvalidParameters
 * error naming the file and the key's path ("mounts[1].target"), never
 * silently ignored. Example:
 *
 *     {
 *       "sandbox": "required",           // or "off"
 *       "timeout": 120,                  // seconds, >= 1
 *       "namespaces": ["user", "mount", "pid", "net", "ipc", "uts", "cgroup"],
 *       "hostname": "ward",
 *       "uid0": false,
 *       "allow_nested": false,           // the command may make sandboxes (Landlock off)
 *       "env": {"clear": false, "set": {"CI": "1"}},
 *       "mounts": [{"type": "ro-bind", "source": "/opt/sdk", "target": "/opt/sdk"},
 *                  {"type": "bind", "source": "/srv/cache", "target": "/cache"},
 *                  {"type": "tmpfs", "target": "/scratch"}],
 *       "limits": {"memory": "2G",       // or bytes; K, M, G, T suffixes
 *                  "memory_swap": 0, "pids": 512, "cpus": 1.5, "io_weight": 100,
 *                  "max_file_size": "1G"}  // each as its flag (ward/limits.h)
 *     }
 *
 * The front door's keys (ward/frontdoor.h, ward/validate.h):
 *
 *     "validators": {"remove": ["dangerous.pipe-to-shell"],   // rule ids
 *                    "relax": ["sensitive.env-file"],         // refusal -> approval
 *                    "except": {"sensitive.private-key": ["fixtures/ca.pem"]},
 *                    "add": [{"id": "local.x", "category": "approval",
 *                             "words": "...", "program": "terraform", "sub": "destroy"},
 *                            "[local.y]\ncategory = blocked\n..."]},  // table syntax
 *     "rate_limit": {"per_minute": 30, "per_hour": 300}        // 0: no limit
 *
 * Without "rate_limit", ward serve (and ward_config_init()) keeps 30 a
 * minute and 300 an hour; ward run and ward shell, a person's, keep none.
 * Any of "allow_hosts", "deny_hosts", "allow_cidrs", "allow_ports",
 * "credentials" under "network" without a "mode" means "proxy"; with
 * another mode the policy is refused.
 *
 * Where ward looks when no --policy is given: $WARD_POLICY, then
 * $XDG_CONFIG_HOME/ward/policy.json (or ~/.config/ward/policy.json), then
 * /etc/ward/policy.json; the first that exists is used, none is fine. One
 * that exists but is not safe to take rules from (ward_policy_load()) is
 * refused, not skipped.
 */
#ifndef WARD_POLICY_H
#define WARD_POLICY_H

#include <stddef.h>

#include "ward/error.h"
#include "ward/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Policy files larger than this are refused. */
#define WARD_POLICY_MAX (1024 * 1024)

/* Apply a policy document (text[0..len)) on top of cfg. `origin` names it in
 * messages (a path, or "policy"). On failure cfg may be partly changed:
 * release it. Returns 0 or -1 with an InvalidParameters error. */
WARD_API int ward_policy_apply(const char *text, size_t len, const char *origin,
			       struct ward_config *cfg, struct ward_error **err);

/* Read the file at path and apply it. A missing file is an error here; so is
 * one that is a symbolic link, is neither the caller's nor root's, is
 * writable by its group or others, or lies in a directory another user can
 * write (not sticky): the message names the path and the reason.
 * "/dev/fd/N", "/proc/self/fd/N" and "/dev/stdin" read that descriptor
 * (--policy <(...)). */
WARD_API int ward_policy_load(const char *path, struct ward_config *cfg, struct ward_error **err);

/* The policy file used when none is named (see above), or NULL for none.
 * Returns a malloc'd path. */
WARD_API char *ward_policy_default_path(void);

#ifdef __cplusplus
}
#endif
#endif
