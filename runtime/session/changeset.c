/* changeset.c — a session's change set (overlay workdir mode): the one its
 * commands wrote, opened, applied or discarded. */
#include <pthread.h>
#include <stdlib.h>

#include "runtime/session/session-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/workdir.h"

/* ---- the change set (overlay workdir mode) --------------------------------------- */

/* The session's set, opened (changes_lock held); NULL with *err NULL when
 * there is none. */
static struct ward_changeset *open_changes(struct ward_session *s, struct ward_error **err)
{
	_cleanup_free_ char *state = NULL;

	if (!s->changes)
		return NULL;
	state = ward_state_dir_for(s->cfg.state_dir, err);
	return state ? ward_changeset_open(state, s->changes, err) : NULL;
}

bool ward_session_changes_exist(struct ward_session *s)
{
	struct ward_changeset *cs = open_changes(s, NULL);

	ward_changeset_free(cs);
	return cs != NULL;
}

struct ward_changeset *ward_session_changes(struct ward_session *s, struct ward_error **err)
{
	struct ward_changeset *cs;

	pthread_mutex_lock(&s->changes_lock);
	cs = open_changes(s, err);
	pthread_mutex_unlock(&s->changes_lock);
	return cs;
}

/* Apply or discard: the set is the session's no longer either way. */
static int settle_changes(struct ward_session *s, bool apply, bool force,
			  struct ward_error **err)
{
	struct ward_changeset *cs;
	int rc = 0;

	pthread_mutex_lock(&s->changes_lock);
	cs = s->changes ? open_changes(s, err) : NULL;
	if (!cs) {
		if (!s->changes)
			ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					     "the session has no changes to %s",
					     apply ? "apply" : "discard");
		rc = -1;
	} else if (apply) {
		ward_changeset_set_force(cs, force);
		rc = ward_changeset_apply(cs, s->cfg.protect, err);
	} else {
		ward_changeset_discard(cs);
	}
	if (rc == 0) {
		free(s->changes);
		s->changes = NULL;
	}
	pthread_mutex_unlock(&s->changes_lock);
	ward_changeset_free(cs);
	return rc;
}

int ward_session_changes_apply(struct ward_session *s, bool force, struct ward_error **err)
{
	return settle_changes(s, true, force, err);
}

int ward_session_changes_discard(struct ward_session *s, struct ward_error **err)
{
	return settle_changes(s, false, false, err);
}
