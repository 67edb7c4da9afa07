/* serve-internal.h — `ward serve` and `ward shell` share how a session is
 * configured from the command line and the policy. */
#ifndef WARD_SERVE_INTERNAL_H
#define WARD_SERVE_INTERNAL_H

#include <stdbool.h>

#include "ward/session.h"

/* A message (one line) larger than this is refused, the rest of it dropped. */
#define WARD_SERVE_LINE_MAX (1024 * 1024)

struct serve_options {
	const char *policy;   /* NULL: none */
	char *policy_owned;   /* the default path found, freed by the caller */
	const char *workdir;  /* NULL: the current directory */
	int timeout;          /* 0: the session default */
	enum ward_session_isolation isolation;
	bool isolation_set;
	bool empty_env;
	bool sandbox_off;
	/* the person's word on workdirs (ward/admit.h) */
	bool allow_anywhere, allow_home;
	const char *roots[16]; /* --workdir-root, as given */
	size_t n_roots;
};

/* Parse `ward serve`/`ward shell` options (argv[0] is the subcommand). */
int serve_options_parse(int argc, char **argv, struct serve_options *o, bool *help,
			struct ward_error **err);

/* A session's configuration: the policy, WARD_LANDLOCK_ABI_MAX, the flags. */
int serve_config(const struct serve_options *o, struct ward_config *cfg, struct ward_error **err);

/* The flags' session defaults over the policy's. */
void serve_session_defaults(const struct serve_options *o, struct ward_session_options *opt);

/* Serve JSON-RPC on in_fd/out_fd until end of input. Returns the exit status. */
int ward_serve_loop(const struct serve_options *o, int in_fd, int out_fd);

#endif
