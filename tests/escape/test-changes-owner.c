/* test-changes-owner.c — a kept change set belongs to the workdir its overlay
 * run wrote. A name typed (or injected into a prompt) in one project must not
 * change another: `ward changes` lists this workdir's sets only (--all every
 * one), `ward apply`/`ward discard` of another workdir's set are refused naming
 * both directories (-C DIR names the other on purpose). And a symbolic link
 * the command left leading out of the workdir (/etc/hostname, ../x) is not
 * applied, by `ward apply` nor by `ward run --apply`, without
 * --allow-outside-links. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *ward, *state;

/* Each test: its own state directory (its kept sets, no one else's). */
static void setup(void)
{
	ward = harness_path("ward");
	state = harness_tmpdir();
	ck_assert_int_eq(chmod(state, 0700), 0);
	setenv("XDG_STATE_HOME", state, 1);
}

static void teardown(void)
{
	harness_rmtree(state);
	free(state);
	free(ward);
}

/* Run `ward ARGS...` in dir; stdout in *out, stderr in *err; exit status. */
static int ward_in(const char *dir, char **out, char **err, const char *const *args)
{
	char *argv[16];
	int n = 0, st;

	argv[n++] = ward;
	for (; *args && n < 15; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	ck_assert_int_eq(chdir(dir), 0);
	st = harness_capture(argv, out, err);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* An overlay run of script in dir, its set kept; the set's name in name. */
static void kept_run(const char *dir, const char *script, char *name, size_t size)
{
	const char *args[] = { "run", "--workdir-mode", "overlay", "-c", script, NULL };
	char *out = NULL, *err = NULL, *p;

	ck_assert_msg(ward_in(dir, &out, &err, args) == 0, "overlay run: %s", err);
	p = strstr(err, "kept as ");
	ck_assert_msg(p != NULL, "no set kept: %s", err);
	ck_assert_int_eq(sscanf(p + 8, "%127[^ (]", name), 1);
	(void)size;
	free(out);
	free(err);
}

static bool exists(const char *dir, const char *name)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

START_TEST(test_changes_lists_this_workdir)
{
	char *a = harness_tmpdir(), *b = harness_tmpdir(), na[128], nb[128], *out, *err;

	kept_run(a, "echo a > fa", na, sizeof(na));
	kept_run(b, "echo b > fb", nb, sizeof(nb));
	{
		const char *args[] = { "changes", NULL };

		ck_assert_int_eq(ward_in(a, &out, &err, args), 0);
		ck_assert_msg(strstr(out, na) && !strstr(out, nb), "in A: %s", out);
		free(out);
		free(err);
		ck_assert_int_eq(ward_in(b, &out, &err, args), 0);
		ck_assert_msg(strstr(out, nb) && !strstr(out, na), "in B: %s", out);
		free(out);
		free(err);
	}
	{
		const char *args[] = { "changes", "-C", b, NULL };

		ck_assert_int_eq(ward_in(a, &out, &err, args), 0);
		ck_assert_msg(strstr(out, nb) && !strstr(out, na), "-C B from A: %s", out);
		free(out);
		free(err);
	}
	{
		const char *args[] = { "changes", "--all", NULL };

		ck_assert_int_eq(ward_in("/", &out, &err, args), 0);
		ck_assert_msg(strstr(out, na) && strstr(out, nb) && strstr(out, a) && strstr(out, b),
			      "--all: %s", out);
		free(out);
		free(err);
	}
	harness_rmtree(a);
	harness_rmtree(b);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_apply_discard_other_workdir_refused)
{
	char *a = harness_tmpdir(), *b = harness_tmpdir(), na[128], *out, *err;

	kept_run(a, "echo a > fa", na, sizeof(na));
	{
		const char *args[] = { "apply", na, NULL };

		ck_assert_int_eq(ward_in(b, &out, &err, args), 125);
		ck_assert_msg(strstr(err, a) && strstr(err, b) && strstr(err, "--workdir"),
			      "the refusal names both: %s", err);
		ck_assert(!exists(a, "fa") && !exists(b, "fa"));
		free(out);
		free(err);
	}
	{
		const char *args[] = { "discard", na, NULL };

		ck_assert_int_eq(ward_in(b, &out, &err, args), 125);
		ck_assert_msg(strstr(err, a) && strstr(err, b), "the refusal names both: %s", err);
		free(out);
		free(err);
	}
	{
		const char *args[] = { "changes", NULL };

		ck_assert_int_eq(ward_in(a, &out, &err, args), 0);
		ck_assert_msg(strstr(out, na), "the set survived the refused discard: %s", out);
		free(out);
		free(err);
	}
	{
		const char *args[] = { "apply", "-C", a, na, NULL };

		ck_assert_msg(ward_in(b, &out, &err, args) == 0, "apply -C A from B: %s", err);
		ck_assert(exists(a, "fa") && !exists(b, "fa"));
		free(out);
		free(err);
	}
	harness_rmtree(a);
	harness_rmtree(b);
	free(a);
	free(b);
}
END_TEST

/* Absolute and relative links out; a link inside is no reason to refuse. */
START_TEST(test_apply_link_out_refused)
{
	static const char *const scripts[] = { "t=/etc/hostname; ln -s \"$t\" l; echo x > f",
					       "ln -s ../../x l; echo x > f" };

	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		char *a = harness_tmpdir(), na[128], *out, *err;

		kept_run(a, scripts[i], na, sizeof(na));
		{
			const char *args[] = { "apply", na, NULL };

			ck_assert_int_eq(ward_in(a, &out, &err, args), 125);
			ck_assert_msg(strstr(err, "outside") && strstr(err, "'l'") &&
					      strstr(err, "--allow-outside-links"),
				      "the refusal names the link and the option: %s", err);
			ck_assert(!exists(a, "l") && !exists(a, "f"));
			free(out);
			free(err);
		}
		{
			const char *args[] = { "apply", na, "--allow-outside-links", NULL };

			ck_assert_msg(ward_in(a, &out, &err, args) == 0, "asked for: %s", err);
			ck_assert(exists(a, "l") && exists(a, "f"));
			free(out);
			free(err);
		}
		harness_rmtree(a);
		free(a);
	}
	{
		char *a = harness_tmpdir(), na[128], *out, *err;
		const char *args[] = { "apply", na, NULL };

		kept_run(a, "mkdir d; ln -s d/../f l; echo x > f", na, sizeof(na));
		ck_assert_msg(ward_in(a, &out, &err, args) == 0, "a link inside: %s", err);
		ck_assert(exists(a, "l"));
		free(out);
		free(err);
		harness_rmtree(a);
		free(a);
	}
}
END_TEST

START_TEST(test_run_apply_keeps_link_out)
{
	char *a = harness_tmpdir(), *out, *err;
	const char *args[] = { "run", "--workdir-mode", "overlay", "--apply", "-c",
			       "t=/etc/hostname; ln -s \"$t\" l; echo x > f", NULL };
	const char *list[] = { "changes", NULL };

	ck_assert_int_eq(ward_in(a, &out, &err, args), 125);
	ck_assert_msg(strstr(err, "not applied") && strstr(err, "--allow-outside-links") &&
			      strstr(err, "kept as"),
		      "%s", err);
	ck_assert(!exists(a, "l") && !exists(a, "f"));
	free(out);
	free(err);
	ck_assert_int_eq(ward_in(a, &out, &err, list), 0);
	ck_assert_msg(strstr(out, "2 changes"), "kept: %s", out);
	free(out);
	free(err);
	harness_rmtree(a);
	free(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("changes-owner");
	TCase *tc = harness_tcase(s, "owner", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_changes_lists_this_workdir);
	tcase_add_test(tc, test_apply_discard_other_workdir_refused);
	tcase_add_test(tc, test_apply_link_out_refused);
	tcase_add_test(tc, test_run_apply_keeps_link_out);
	return harness_main(s);
}
