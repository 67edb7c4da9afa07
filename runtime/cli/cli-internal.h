/* cli-internal.h — the ward command line: one function per subcommand, each
 * taking the arguments after the subcommand's name (argv[0] is the subcommand)
 * and returning the process exit status. runtime/cli/main.c dispatches. */
#ifndef WARD_CLI_INTERNAL_H
#define WARD_CLI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

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
	bool apply;         /* overlay: apply the change set when the command succeeded */
	bool discard;       /* overlay: drop it (default: keep it) */
	struct {
		bool protect;       /* --protect, else --allow-write */
		const char *path;   /* points into argv */
	} paths[64];
	size_t n_paths;
	bool flags_only;    /* ward_run_flags_apply: no command expected */
};

/* Apply the --protect/--allow-write options, in order, once the workdir is
 * final. InvalidParameters for a path outside the workdir. */
int ward_run_options_protect(struct run_options *o, struct ward_error **err);

/* "ward: 3 changes kept as NAME ..." on f, for the streaming CLI. */
#include <stdio.h>
void ward_print_changes_summary(FILE *f, const struct ward_result *res);

/* Parse `ward run` arguments (argv[0] is "run"). Returns 0, or -1 with an
 * InvalidParameters error naming the bad option or value. Release with
 * ward_run_options_release(). */
int ward_run_options_parse(int argc, char **argv, struct run_options *o, struct ward_error **err);
void ward_run_options_release(struct run_options *o);

/* `ward run`'s sandbox options (argv[0] a name, then "--net=proxy" ...) over
 * cfg as it is (a policy already loaded: the flags win), for `ward serve` and
 * `ward shell`. Options about a command (-c, --json, --apply ...) are
 * refused. Returns 0, or -1 with *err (cfg then released and reset). */
int ward_run_flags_apply(int argc, char **argv, struct ward_config *cfg, struct ward_error **err);

/* ward run's long options, for the commands that take them too. */
#include <getopt.h>
extern const struct option ward_run_long_options[];

/* Strict decimal parse of a whole number of seconds for --timeout. */
int ward_parse_timeout(const char *s, long long *out, struct ward_error **err);

/* After a run in overlay mode: apply, discard or keep its change set as the
 * options say; the result's workdir report records what was done. Returns 0,
 * or -1 with err (an apply refused or failed: the set is then kept). */
int ward_settle_changes(const struct run_options *o, struct ward_result *res,
			struct ward_error **err);
/* The front door (ward/frontdoor.h) for `ward run`: rate limit, validators,
 * approval (--approve or "approved": true, or when may_ask and stdin is a
 * terminal, a y/N question on /dev/tty). Returns 0 or -1 with *err. */
int ward_cli_front_door(const struct ward_config *cfg, const char *command, char *const argv[],
			bool approved, bool may_ask, struct ward_error **err);

/* s as a person's terminal may show it: control characters, bytes that are
 * not UTF-8 and invisible reordering marks escaped, one line
 * (ward_text_escape() without WARD_ESCAPE_MULTILINE). The text stays valid
 * until this thread's eighth next call; never NULL. For every name, command
 * or message printed for a person that may hold what a command or a model
 * wrote; never for JSON. */
const char *ward_shown(const char *s);

int ward_cmd_run(int argc, char **argv);
int ward_cmd_changes(int argc, char **argv);
int ward_cmd_diff(int argc, char **argv);
int ward_cmd_apply(int argc, char **argv);
int ward_cmd_discard(int argc, char **argv);
int ward_cmd_doctor(int argc, char **argv);
int ward_cmd_validate(int argc, char **argv);
int ward_cmd_serve(int argc, char **argv);
int ward_cmd_shell(int argc, char **argv);

#endif
