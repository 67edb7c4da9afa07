/* test-examples.c — every example policy of docs/examples is loaded by the
 * real loader (ward_policy_load(): the file checks, then every key), and
 * `ward run --policy FILE -- true` runs with it; a broken example (a
 * misspelt key) would fail here before a user copies it. */
#include "harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ward/policy.h"

static char dir[4200];

/* The build tree's copy (make check puts it there, for the uid-65534 tier
 * too), else the source tree's. */
static const char *probe_examples(void)
{
	snprintf(dir, sizeof(dir), "%s/tests/examples", harness_build_dir());
	if (access(dir, R_OK | X_OK) == 0)
		return NULL;
	snprintf(dir, sizeof(dir), "%s/../docs/examples", harness_build_dir());
	return access(dir, R_OK | X_OK) == 0 ? NULL :
					      "no examples (make check copies them to build/tests/examples)";
}

/* The examples' paths, NULL-terminated; at least four (the agent
 * host, CI runner, developer machine, strict offline). */
static char **examples(void)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), k = 0;
	char **v;

	ck_assert_int_ge(n, 0);
	v = calloc((size_t)n + 1, sizeof(*v));
	for (int i = 0; i < n; i++) {
		size_t l = strlen(names[i]->d_name);

		if (l > 5 && strcmp(names[i]->d_name + l - 5, ".json") == 0)
			ck_assert_int_gt(asprintf(&v[k++], "%s/%s", dir, names[i]->d_name), 0);
		free(names[i]);
	}
	free(names);
	ck_assert_int_ge(k, 4);
	return v;
}

START_TEST(test_examples_load)
{
	char **v = examples();

	for (char **p = v; *p; p++) {
		struct ward_error *err = NULL;
		struct ward_config cfg;

		ward_config_init(&cfg);
		ck_assert_msg(ward_policy_load(*p, &cfg, &err) == 0, "%s: %s", *p,
			      err ? err->message : "?");
		ward_config_release(&cfg);
		free(*p);
	}
	free(v);
}
END_TEST

START_TEST(test_examples_run_true)
{
	char **v = examples(), *ward = harness_path("ward"), *wd = harness_tmpdir();
	char *state = harness_tmpdir();
	int ran = 0;

	/* an overlay example keeps its (empty) change set: in a state
	 * directory of the test's own, removed after */
	chmod(state, 0700);
	setenv("XDG_STATE_HOME", state, 1);

	for (char **p = v; *p; p++) {
		char *out = NULL, *err = NULL;
		char *argv[] = { ward, (char *)"run", (char *)"--policy", *p, (char *)"-C", wd,
				 (char *)"--", (char *)"true", NULL };
		int st;

		st = harness_capture(argv, &out, &err);
		/* cgroup limits need root or a delegated cgroup; the developer
		 * machine's example sets none and must run anywhere */
		if (WIFEXITED(st) && WEXITSTATUS(st) == 125 && geteuid() != 0 &&
		    strstr(err, "needs a cgroup") && !strstr(*p, "/developer.json")) {
			fprintf(stderr, "# note: %s needs a cgroup this user cannot make\n", *p);
		} else {
			ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
				      "ward run --policy %s -- true: %s", *p, err);
			ran++;
		}
		free(out);
		free(err);
		free(*p);
	}
	free(v);
	ck_assert_int_ge(ran, 1);
	free(ward);
	harness_rmtree(wd);
	free(wd);
	harness_rmtree(state);
	free(state);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("examples");
	TCase *tc;

	harness_add_probe("examples", probe_examples);
	tc = harness_tcase(s, "load", "examples");
	tcase_add_test(tc, test_examples_load);
	tc = harness_tcase(s, "run", "examples userns landlock seccomp");
	tcase_add_test(tc, test_examples_run_true);
	return harness_main(s);
}
