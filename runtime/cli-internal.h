/* cli-internal.h — the ward command line: one function per subcommand, each
 * taking the arguments after the subcommand's name (argv[0] is the subcommand)
 * and returning the process exit status. runtime/main.c dispatches. */
#ifndef WARD_CLI_INTERNAL_H
#define WARD_CLI_INTERNAL_H

/* Exit statuses of ward itself, as timeout(1) and env(1) use them. */
#define WARD_EXIT_TIMEOUT 124
#define WARD_EXIT_OWN_ERROR 125
#define WARD_EXIT_CANNOT_EXEC 126
#define WARD_EXIT_NOT_FOUND 127

#include <stdbool.h>

#include "ward/error.h"
#include "ward/sandbox.h"

/* `ward run`'s command line, parsed. */
struct run_options {
	struct ward_config cfg;
	bool json;          /* request on stdin, result object on stdout */
	char *shell;        /* -c STRING (points into argv) */
	char **argv;        /* the command after options (points into argv) */
	bool approve;
	bool help;
	bool no_shell;      /* --no-shell */
};

/* Parse `ward run` arguments (argv[0] is "run"). Returns 0, or -1 with an
 * InvalidParameters error naming the bad option or value. Release with
 * ward_run_options_release(). */
int ward_run_options_parse(int argc, char **argv, struct run_options *o, struct ward_error **err);
void ward_run_options_release(struct run_options *o);

/* Strict decimal parse of a whole number of seconds for --timeout. */
int ward_parse_timeout(const char *s, long long *out, struct ward_error **err);

int ward_cmd_run(int argc, char **argv);
int ward_cmd_doctor(int argc, char **argv);
int ward_cmd_validate(int argc, char **argv);

#endif
