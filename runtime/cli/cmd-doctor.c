/* cmd-doctor.c — `ward doctor [--json]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cli/cli-internal.h"
#include "ward/doctor.h"

int ward_cmd_doctor(int argc, char **argv)
{
	struct ward_doctor d;
	bool json = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: ward doctor [--json]\n\nTell what this host offers (user "
			       "namespaces, Landlock, seccomp, cgroups, CAP_NET_ADMIN), what ward "
			       "will do, and how to fix what is missing.\nExit status: 0 when the "
			       "sandbox works here, 1 when it does not.\n");
			return 0;
		} else {
			fprintf(stderr, "ward doctor: unknown option '%s'\n", ward_shown(argv[i]));
			return WARD_EXIT_OWN_ERROR;
		}
	}
	ward_doctor_probe(&d);
	if (json) {
		char *s = ward_doctor_to_json(&d);

		printf("%s\n", s ? s : "{}");
		free(s);
	} else {
		ward_doctor_print(&d, stdout);
	}
	return d.sandbox_works ? 0 : 1;
}
