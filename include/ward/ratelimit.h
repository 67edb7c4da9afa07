/* ward/ratelimit.h — per-user rate limits: N commands per minute and M per
 * hour (default 30 and 300; 0 means no limit).
 *
 * How to use this:
 *
 *     unsigned wait = 0;
 *     if (ward_ratelimit_take_file(NULL, 30, 300, &wait, &err) < 0)
 *             ...;   // RateLimited: err->message says in how many seconds
 *
 * The decision is a sliding window over the times of the commands taken so
 * far (struct ward_ratelog, pure code). For the CLI the log lives in a small
 * file under the user's state directory ($XDG_STATE_HOME/ward/ratelimit, or
 * ~/.local/state/ward/ratelimit), read, decided and rewritten under an
 * exclusive flock(), so concurrent invocations are each counted once. A
 * long-lived process (a session server) keeps a ward_ratelog in memory
 * instead.
 */
#ifndef WARD_RATELIMIT_H
#define WARD_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WARD_RATE_PER_MINUTE_DEFAULT 30
#define WARD_RATE_PER_HOUR_DEFAULT 300
/* Limits above this are refused by the policy (the log holds one entry per
 * command of the last hour). */
#define WARD_RATE_MAX 100000

/* The times (milliseconds since the epoch) of the commands taken within the
 * last hour, oldest first. Zero-initialise; release with ward_ratelog_release. */
struct ward_ratelog {
	int64_t *t;
	size_t n, cap;
};

/* Take one slot at now_ms if the limits allow: returns 0 and records it, or
 * -1 with a RateLimited error whose message gives the seconds until the next
 * slot (also in *retry_after_s when not NULL). 0 for a limit means none. */
WARD_API int ward_ratelog_take(struct ward_ratelog *log, int64_t now_ms, unsigned per_minute,
			       unsigned per_hour, unsigned *retry_after_s, struct ward_error **err);

WARD_API void ward_ratelog_release(struct ward_ratelog *log);

/* Parse the state file's text into log (entries older than an hour before
 * now_ms dropped) and render it back. Malformed text is InvalidParameters. */
WARD_API int ward_ratelog_parse(const char *text, size_t len, int64_t now_ms,
				struct ward_ratelog *log, struct ward_error **err);
WARD_API char *ward_ratelog_format(const struct ward_ratelog *log);

/* The state file: "ratelimit" in the state directory (ward_state_dir()),
 * malloc'd; NULL when no state directory is usable. */
WARD_API char *ward_ratelimit_default_path(void);

/* Take one slot in the state file at path (NULL: the default path), creating
 * it and its directories (0700) when missing. With both limits 0 the file is
 * not touched. RateLimited as above; ExecutionFailed when the file cannot be
 * used (the message names it). A state file that is not ward's is refused,
 * not overwritten; so is one that is a symbolic link, has another name (a
 * hard link), is not the caller's alone, or lies in a directory another
 * user can write. */
WARD_API int ward_ratelimit_take_file(const char *path, unsigned per_minute, unsigned per_hour,
				      unsigned *retry_after_s, struct ward_error **err);

#ifdef __cplusplus
}
#endif
#endif
