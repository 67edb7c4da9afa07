/* main.c — the ward command: a thin dispatcher over libward. */
#include <stdio.h>
#include <string.h>

#include "runtime/cli/cli-internal.h"

/* WARD_VERSION comes from the build (the Makefile's VERSION). */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
} commands[] = {
	{ "run", ward_cmd_run, "run a command in a sandbox" },
	{ "doctor", ward_cmd_doctor, "tell what this host offers and what ward will do" },
	{ "changes", ward_cmd_changes, "list the change sets kept by overlay runs" },
	{ "diff", ward_cmd_diff, "show a kept change set as a unified diff" },
	{ "apply", ward_cmd_apply, "copy a kept change set into its workdir" },
	{ "discard", ward_cmd_discard, "drop a kept change set" },
	{ "validate", ward_cmd_validate, "check a command against the validators without running it" },
	{ "serve", ward_cmd_serve, "serve sessions over JSON-RPC / MCP on stdio" },
	{ "shell", ward_cmd_shell, "an interactive sandboxed shell session" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: ward COMMAND [options]\n\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].what);
	fprintf(f, "\n'ward COMMAND --help' tells more.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		fputs("ward: no command given\n", stderr);
		usage(stderr);
		return WARD_EXIT_OWN_ERROR;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ward %s\n", WARD_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ward: unknown command '%s'\n", ward_shown(argv[1]));
	usage(stderr);
	return WARD_EXIT_OWN_ERROR;
}
