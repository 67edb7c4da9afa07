/* ward/frontdoor.h — everything a command passes before it is spawned, in
 * this order: policy → rate limit → parse → validators → approval.
 *
 * ward_run() is the sandbox primitive and checks none of this; a host that
 * runs commands for an agent calls the front door first:
 *
 *     struct ward_admission adm = { .approved = request_says_approved };
 *     struct ward_verdict v;
 *     if (ward_frontdoor_check(&cfg, "make test", NULL, &adm, &v, &err) < 0) {
 *             // err->kind: RateLimited, NotAuthorized, ApprovalRequired,
 *             // InvalidParameters (unparsable string) or ExecutionFailed;
 *             // err->rule names the rule for the middle two
 *     } else {
 *             ward_run(&cfg, argv, &res, &err);
 *     }
 *     ward_verdict_release(&v);
 *
 * The policy is cfg: its rule set (cfg->rules, NULL for the built-in one) and
 * rate limits (cfg->rate_per_minute, cfg->rate_per_hour; 0 = none), as
 * ward_policy_apply() set them.
 */
#ifndef WARD_FRONTDOOR_H
#define WARD_FRONTDOOR_H

#include <stdbool.h>

#include "ward/error.h"
#include "ward/ratelimit.h"
#include "ward/sandbox.h"
#include "ward/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ward_admission {
	/* The request carries approval (--approve, "approved": true). */
	bool approved;
	/* Asked when the verdict needs approval and `approved` is false (the
	 * CLI's y/N prompt on the terminal); returns true to approve. NULL: no
	 * one to ask, the command is refused with ApprovalRequired. */
	bool (*ask)(void *ctx, const struct ward_verdict *v);
	void *ask_ctx;
	/* Where commands are counted: an in-memory log (a long-lived session
	 * server), else the per-user state file at ratelimit_path (NULL: the
	 * default path of ward/ratelimit.h). */
	struct ward_ratelog *ratelog;
	const char *ratelimit_path;
};

/* Check `command` (a shell string), or `argv` when command is NULL, against
 * cfg's policy. adm may be NULL (not approved, no one to ask, the state
 * file). Returns 0 when the command may run, or -1 with *err: RateLimited
 * (the seconds until the next slot in the message), InvalidParameters (the
 * string cannot be parsed), NotAuthorized or ApprovalRequired (the rule in
 * ->rule), ExecutionFailed (the state file cannot be used). *v is always
 * initialised — filled when validation ran — and must be released. A
 * command refused by the rate limit is not validated; every command that
 * reaches the rate limit is counted, refused or not. */
WARD_API int ward_frontdoor_check(const struct ward_config *cfg, const char *command,
				  char *const argv[], const struct ward_admission *adm,
				  struct ward_verdict *v, struct ward_error **err);

#ifdef __cplusplus
}
#endif
#endif
