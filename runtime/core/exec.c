/* exec.c — the last step of a sandboxed program's start, in the sandbox
 * (init's command, and each segment of a --no-shell chain): execve along the
 * sandbox's PATH as the shell does, and on failure its message and its exit
 * status (WARD_EXIT_NOT_FOUND, WARD_EXIT_CANNOT_EXEC). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/core/core-internal.h"
#include "ward/request.h"

void ward_exec_command(const struct spawn_plan *p)
{
	ward_exec_argv(p->argv, p->envp, p->path_env);
}

void ward_exec_argv(char *const argv[], char *const envp[], const char *path_env)
{
	const char *file = argv[0];
	const char *path = path_env && *path_env ? path_env : "/usr/bin:/bin";
	char buf[PATH_MAX];
	int saved = ENOENT;
	bool eacces = false;

	if (!file || !*file) {
		saved = ENOENT;
		goto fail;
	}
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		saved = errno;
		goto fail;
	}
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n == 0) /* an empty PATH element means the current directory */
			snprintf(buf, sizeof(buf), "./%s", file);
		else
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, file);
		execve(buf, argv, envp);
		if (errno == EACCES)
			eacces = true;
		else if (errno != ENOENT && errno != ENOTDIR)
			saved = errno;
		path += n;
		if (*path == ':')
			path++;
	}
	if (eacces && saved == ENOENT)
		saved = EACCES;
fail: {
	/* the command's name as the model wrote it, shown inert (a stack
	 * buffer: nothing allocated in the child) */
	char shown[WARD_ESCAPE_MAX(256)];
	size_t n = file ? strnlen(file, 256) : 0;

	ward_text_escape_buf(file ? file : "", n, 0, true, shown, NULL);
	dprintf(2, "ward: %s: %s\n", shown, strerror(saved));
}
	_exit(saved == ENOENT ? WARD_EXIT_NOT_FOUND : WARD_EXIT_CANNOT_EXEC);
}
