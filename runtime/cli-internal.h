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

int ward_cmd_run(int argc, char **argv);
int ward_cmd_doctor(int argc, char **argv);
int ward_cmd_validate(int argc, char **argv);

#endif
