/* frontdoor.c — what a command passes before it is spawned: policy, rate
 * limit, parse, validators, approval, in that order. */
#include "ward/frontdoor.h"

#include <string.h>
#include <time.h>

int ward_frontdoor_check(const struct ward_config *cfg, const char *command, char *const argv[],
			 const struct ward_admission *adm, struct ward_verdict *v,
			 struct ward_error **err)
{
	int rc;

	memset(v, 0, sizeof(*v));
	if (adm && adm->ratelog) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		rc = ward_ratelog_take(adm->ratelog, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
				       cfg->rate_per_minute, cfg->rate_per_hour, NULL, err);
	} else {
		rc = ward_ratelimit_take_file(adm ? adm->ratelimit_path : NULL, cfg->rate_per_minute,
					      cfg->rate_per_hour, NULL, err);
	}
	if (rc < 0)
		return -1;
	rc = command ? ward_validate_shell(cfg->rules, command,
					   (cfg->shell_bash ? WARD_SHELL_BASH : WARD_SHELL_SH) |
						   (cfg->workdir_mode == WARD_WORKDIR_OVERLAY ?
							    WARD_VALIDATE_OVERLAY : 0),
					   v, err) :
		       ward_validate_argv(cfg->rules, argv, v, err);
	if (rc < 0)
		return -1;
	switch (v->kind) {
	case WARD_VERDICT_ALLOWED:
		return 0;
	case WARD_VERDICT_APPROVAL_REQUIRED:
		if (adm && adm->approved)
			return 0;
		if (adm && adm->ask && adm->ask(adm->ask_ctx, v))
			return 0;
		return ward_verdict_error(v, err);
	case WARD_VERDICT_REFUSED:
		break;
	}
	return ward_verdict_error(v, err);
}
