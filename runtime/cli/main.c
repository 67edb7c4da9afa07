/* main.c — the ward command: a thin dispatcher over libward. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/cli/cli-internal.h"

/* WARD_VERSION comes from the build (the Makefile's VERSION). */

/* stack: how deep the command's main thread goes, in KiB (measured: a
 * run's supervisor ~100, validate ~32), faulted in ahead by stack_ahead();
 * serve runs each call on a thread of its own */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned stack;
	const char *what;
} commands[] = {
	{ "run", ward_cmd_run, 120, "run a command in a sandbox" },
	{ "doctor", ward_cmd_doctor, 0, "tell what this host offers and what ward will do" },
	{ "changes", ward_cmd_changes, 0, "list the change sets kept by overlay runs" },
	{ "diff", ward_cmd_diff, 0, "show a kept change set as a unified diff" },
	{ "apply", ward_cmd_apply, 0, "copy a kept change set into its workdir" },
	{ "discard", ward_cmd_discard, 0, "drop a kept change set" },
	{ "validate", ward_cmd_validate, 40,
	  "check a command against the validators without running it" },
	{ "serve", ward_cmd_serve, 0, "serve sessions over JSON-RPC / MCP on stdio" },
	{ "shell", ward_cmd_shell, 120, "an interactive sandboxed shell session" },
};

/* The pages of the stack a command will reach, made present by one system
 * call instead of a fault each: a run's supervisor goes ~100 KiB deep (the
 * host-path walks' buffers, the plan), ~25 pages that cost 10–25 µs apiece
 * as faults on a virtual machine (bench/README.md). The range stays inside
 * the stack's mapping as exec made it (128 KiB below the arguments, where
 * main's frame is), so nothing grows it; a kernel before 5.14 refuses the
 * call and the pages fault as before. */
static void stack_ahead(unsigned kib)
{
	uintptr_t page = 4096, top = (uintptr_t)__builtin_frame_address(0) & ~(page - 1);

	if (kib)
		(void)madvise((void *)(top - (uintptr_t)kib * 1024), (size_t)kib * 1024,
			      MADV_POPULATE_WRITE);
}

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
		if (strcmp(argv[1], commands[i].name) == 0) {
			stack_ahead(commands[i].stack);
			return commands[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "ward: unknown command '%s'\n", ward_shown(argv[1]));
	usage(stderr);
	return WARD_EXIT_OWN_ERROR;
}
