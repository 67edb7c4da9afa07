/* engine-seccomp — run a program under what a container engine's seccomp
 * profile does to ward, so the tests meet it on a host without containers:
 *
 *   engine-seccomp [--hostname] [--clone3] -- PROGRAM ARG...
 *
 * --hostname answers sethostname with EPERM (podman's and Docker's default
 * profiles, to a container without CAP_SYS_ADMIN); --clone3 answers clone3
 * with ENOSYS (Docker's default profile). Everything else is allowed. The
 * filter stays on PROGRAM and its children, as an engine's does. */
#define _GNU_SOURCE
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int i;

	if (!ctx)
		return 125;
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		int rc;

		if (strcmp(argv[i], "--hostname") == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sethostname), 0);
		else if (strcmp(argv[i], "--clone3") == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
		else {
			fprintf(stderr, "engine-seccomp: unknown option '%s'\n", argv[i]);
			return 125;
		}
		if (rc < 0) {
			fprintf(stderr, "engine-seccomp: rule for '%s': %s\n", argv[i], strerror(-rc));
			return 125;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: engine-seccomp [--hostname] [--clone3] -- PROGRAM ARG...\n");
		return 125;
	}
	/* as an engine starting a container: no privilege gained past here */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load(ctx) < 0) {
		perror("engine-seccomp: load");
		return 125;
	}
	seccomp_release(ctx);
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "engine-seccomp: exec '%s': %s\n", argv[i + 1], strerror(errno));
	return 127;
}
