/* session-ssh.c — placeholder */
#include <errno.h>
#include "runtime/session-internal.h"
static int ssh_exec(struct ward_session *s, const struct session_job *job, struct ward_result *res,
		    struct session_outcome *out, struct ward_error **err)
{
	return ward_error_make(err, ENOSYS, "ssh");
}
const struct session_backend ward_session_ssh_backend = { .name = "ssh", .exec = ssh_exec };
int ward_session_ssh_open(struct ward_session *s, struct ward_error **err)
{
	return ward_error_make(err, ENOSYS, "ssh");
}
