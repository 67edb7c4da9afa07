/* fences.c — prepare the capability drop, Landlock and seccomp together, and
 * enter them in the order the kernel needs: capabilities and no_new_privs
 * before Landlock (restrict_self needs no_new_privs), seccomp last so the
 * setup itself is not filtered. */
#include "ward/fences.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/caps.h"

struct ward_fences {
	bool drop_caps;
	struct ward_landlock_plan *landlock;
	const struct ward_seccomp_program *seccomp; /* owned by the cache */
	struct ward_fences_report report;
};

void ward_fences_config_init(struct ward_fences_config *cfg)
{
	ward_landlock_config_init(&cfg->landlock);
	cfg->seccomp = "default";
	/* every option off: a field added later starts off too */
	memset(&cfg->seccomp_options, 0, sizeof(cfg->seccomp_options));
	cfg->drop_caps = true;
}

int ward_fences_prepare(const struct ward_fences_config *cfg, struct ward_fences **out,
			struct ward_error **err)
{
	struct ward_fences *f = calloc(1, sizeof(*f));
	int abi;

	*out = NULL;
	if (!f)
		return ward_error_make(err, ENOMEM, "fences");
	f->drop_caps = cfg->drop_caps;
	abi = cfg->landlock.mode == WARD_LANDLOCK_OFF ? 0 : ward_landlock_abi(NULL);
	if (ward_landlock_plan_new(&cfg->landlock, abi, &f->landlock, err) < 0)
		goto fail;
	f->seccomp = ward_seccomp_program_get(cfg->seccomp ? cfg->seccomp : "default",
					      &cfg->seccomp_options, err);
	if (!f->seccomp)
		goto fail;
	f->report.landlock = *ward_landlock_plan_report(f->landlock);
	snprintf(f->report.seccomp_profile, sizeof(f->report.seccomp_profile), "%s",
		 f->seccomp->name);
	f->report.allow_ptrace = cfg->seccomp_options.allow_ptrace;
	f->report.caps_dropped = cfg->drop_caps;
	f->report.no_new_privs = true;
	*out = f;
	return 0;
fail:
	ward_fences_free(f);
	return -1;
}

const struct ward_fences_report *ward_fences_report(const struct ward_fences *f)
{
	return &f->report;
}

const struct ward_landlock_plan *ward_fences_landlock(const struct ward_fences *f)
{
	return f->landlock;
}

const struct ward_seccomp_program *ward_fences_seccomp(const struct ward_fences *f)
{
	return f->seccomp;
}

int ward_fences_enter(const struct ward_fences *f, struct ward_error **err)
{
	if (f->drop_caps && ward_caps_drop_all(err) < 0)
		return -1;
	if (ward_caps_no_new_privs(err) < 0)
		return -1;
	return ward_landlock_apply(f->landlock, err);
}

int ward_fences_seal(const struct ward_fences *f, struct ward_error **err)
{
	return ward_seccomp_load(f->seccomp, err);
}

void ward_fences_free(struct ward_fences *f)
{
	if (!f)
		return;
	ward_landlock_plan_free(f->landlock);
	free(f);
}
