/* test-docs.c — the manual pages cannot drift from the program: every key the
 * policy parser accepts (asked of the parser itself, level by level, through
 * its "unknown key ... (valid: ...)" refusal) has a ".B level.key" line in
 * ward-policy(5); every option each subcommand's --help lists appears in
 * ward(1) or ward-serve(1); and groff (and mandoc, when installed) render
 * every page without a warning. Runs where the source tree is (docs/man). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ward/policy.h"

static char src_dir[4096];

static const char *probe_source(void)
{
	char p[4200];

	snprintf(src_dir, sizeof(src_dir), "%s/..", harness_build_dir());
	snprintf(p, sizeof(p), "%s/docs/man/ward.1", src_dir);
	return access(p, R_OK) == 0 ? NULL : "no source tree (docs/man) beside the build tree";
}

static const char *probe_groff(void)
{
	return access("/usr/bin/groff", X_OK) == 0 ? NULL : "no /usr/bin/groff (groff-base)";
}

/* A file of the source tree, whole. */
static char *slurp(const char *rel)
{
	char path[4300], *s;

	snprintf(path, sizeof(path), "%s/%s", src_dir, rel);
	s = harness_slurp(path);
	ck_assert_msg(s != NULL, "open '%s'", path);
	return s;
}

/* Whether the page has a line that is exactly ".B WHAT" (the keys' entries). */
static bool has_entry(const char *page, const char *what)
{
	char line[512];
	size_t n = (size_t)snprintf(line, sizeof(line), "\n.B %s\n", what);
	(void)n;
	return strstr(page, line) != NULL;
}

/* The levels of a policy: a document with an unknown key at that level, and
 * the prefix of that level's keys in the page. */
static const struct {
	const char *doc, *prefix;
} levels[] = {
	{ "{\"zz_unknown\": 1}", "" },
	{ "{\"env\": {\"zz_unknown\": 1}}", "env." },
	{ "{\"mounts\": [{\"zz_unknown\": 1}]}", "mounts[]." },
	{ "{\"landlock\": {\"zz_unknown\": 1}}", "landlock." },
	{ "{\"seccomp\": {\"zz_unknown\": 1}}", "seccomp." },
	{ "{\"network\": {\"zz_unknown\": 1}}", "network." },
	{ "{\"network\": {\"credentials\": [{\"zz_unknown\": 1}]}}", "network.credentials[]." },
	{ "{\"workdir\": {\"zz_unknown\": 1}}", "workdir." },
	{ "{\"validators\": {\"zz_unknown\": 1}}", "validators." },
	{ "{\"validators\": {\"add\": [{\"zz_unknown\": 1}]}}", "validators.add[]." },
	{ "{\"rate_limit\": {\"zz_unknown\": 1}}", "rate_limit." },
	{ "{\"limits\": {\"zz_unknown\": 1}}", "limits." },
	{ "{\"session\": {\"zz_unknown\": 1}}", "session." },
	{ "{\"session\": {\"ssh\": {\"zz_unknown\": 1}}}", "session.ssh." },
	{ "{\"session\": {\"limits\": {\"zz_unknown\": 1}}}", "session.limits." },
};

START_TEST(test_every_policy_key_in_policy_page)
{
	char *page = slurp("docs/man/ward-policy.5");
	size_t total = 0;

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		struct ward_error *err = NULL;
		struct ward_config cfg;
		const char *v;
		char list[1024], *save = NULL, *key;

		ward_config_init(&cfg);
		ck_assert_int_lt(ward_policy_apply(levels[i].doc, strlen(levels[i].doc), "t", &cfg,
						   &err),
				 0);
		ward_config_release(&cfg);
		ck_assert_ptr_nonnull(err);
		v = strstr(err->message, "(valid: ");
		ck_assert_msg(v && strstr(err->message, "zz_unknown"),
			      "level '%s' does not list its keys: %s", levels[i].prefix, err->message);
		snprintf(list, sizeof(list), "%s", v + 8);
		ck_assert_ptr_nonnull(strchr(list, ')'));
		*strchr(list, ')') = '\0';
		for (key = strtok_r(list, ", ", &save); key; key = strtok_r(NULL, ", ", &save)) {
			char full[256];

			snprintf(full, sizeof(full), "%s%s", levels[i].prefix, key);
			ck_assert_msg(has_entry(page, full),
				      "policy key '%s' has no \".B %s\" entry in ward-policy.5", full,
				      full);
			total++;
		}
		ward_error_free(err);
	}
	/* the parser's lists were read, not an empty answer */
	ck_assert_uint_gt(total, 80);
	free(page);
}
END_TEST

/* "--allow-host" as roff writes it: "\-\-allow\-host". */
static void roff_escape(const char *opt, char *out, size_t size)
{
	size_t k = 0;

	for (; *opt && k + 3 < size; opt++) {
		if (*opt == '-')
			out[k++] = '\\';
		out[k++] = *opt;
	}
	out[k] = '\0';
}

/* Every --long and -x option of `ward SUB --help` appears in the page. */
static void check_help(const char *sub, const char *page_rel)
{
	char *opts = harness_help_options(sub), *page = slurp(page_rel), *save = NULL;
	int found = 0;

	for (char *opt = strtok_r(opts, "\n", &save); opt; opt = strtok_r(NULL, "\n", &save)) {
		char esc[160];

		if (strlen(opt) >= 64)
			continue;
		roff_escape(opt, esc, sizeof(esc));
		ck_assert_msg(strstr(page, esc) != NULL, "'ward %s --help' lists '%s', %s does not",
			      sub, opt, page_rel);
		found++;
	}
	ck_assert_int_gt(found, 0);
	free(opts);
	free(page);
}

START_TEST(test_every_run_option_in_ward_page)
{
	check_help("run", "docs/man/ward.1");
}
END_TEST

START_TEST(test_every_other_option_in_its_page)
{
	static const char *const subs[] = { "shell", "validate", "doctor", "changes",
					    "diff",  "apply",	 "discard" };

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		check_help(subs[i], "docs/man/ward.1");
	check_help("serve", "docs/man/ward-serve.1");
}
END_TEST

/* Every subcommand of `ward --help` has its entry in ward(1). */
START_TEST(test_every_command_in_ward_page)
{
	char *ward = harness_path("ward"), *out = NULL, *page = slurp("docs/man/ward.1");
	char *argv[] = { ward, (char *)"--help", NULL };
	char *save = NULL, *line;
	int n = 0;

	ck_assert_int_eq(harness_capture(argv, &out, NULL), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[32], want[64];

		if (strncmp(line, "  ", 2) != 0 || sscanf(line + 2, "%31[a-z] ", name) != 1)
			continue;
		snprintf(want, sizeof(want), "\n.B %s\n", name);
		if (!strstr(page, want))
			snprintf(want, sizeof(want), "\n.BI %s ", name);
		ck_assert_msg(strstr(page, want), "command '%s' has no entry in ward.1", name);
		n++;
	}
	ck_assert_int_ge(n, 9);
	free(out);
	free(page);
	free(ward);
}
END_TEST

static const char *const pages[] = { "ward.1", "ward-policy.5", "ward-serve.1" };

/* groff with every warning on: nothing on stderr. */
START_TEST(test_pages_render_without_warnings)
{
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		char path[4400], *out = NULL, *err = NULL;
		char *argv[] = { (char *)"/usr/bin/groff", (char *)"-man", (char *)"-ww",
				 (char *)"-z", path, NULL };
		int st;

		snprintf(path, sizeof(path), "%s/docs/man/%s", src_dir, pages[i]);
		st = harness_capture(argv, &out, &err);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0 && err[0] == '\0',
			      "groff on %s: %s", pages[i], err);
		free(out);
		free(err);
		if (access("/usr/bin/mandoc", X_OK) == 0) {
			char *mv[] = { (char *)"/usr/bin/mandoc", (char *)"-T", (char *)"lint",
				       (char *)"-W", (char *)"warning", path, NULL };

			st = harness_capture(mv, &out, &err);
			ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !out[0] && !err[0],
				      "mandoc -T lint on %s: %s%s", pages[i], out, err);
			free(out);
			free(err);
		} else {
			fprintf(stderr, "# note: no mandoc, only groff checked %s\n", pages[i]);
		}
	}
}
END_TEST

/* The version is written once, in the Makefile; the pages' headers and the
 * Debian changelog, which cannot take it from the build, must say the same
 * (and so must `ward --version`, which takes it from the build). */
START_TEST(test_one_version)
{
	static const char *const man[] = { "docs/man/ward.1", "docs/man/ward-serve.1",
				   "docs/man/ward-policy.5" };
	char *mk = slurp("Makefile"), *line, want[96], *out = NULL;
	char *argv[] = { harness_path("ward"), (char *)"--version", NULL };
	size_t n;

	line = strstr(mk, "\nVERSION");
	ck_assert_msg(line != NULL, "no VERSION in the Makefile");
	line = strchr(line, '=');
	ck_assert(line != NULL);
	line++;
	line += strspn(line, " \t");
	n = strcspn(line, " \t\n");
	ck_assert(n > 0 && n < 64);
	snprintf(want, sizeof(want), "\"ward %.*s\"", (int)n, line);
	for (size_t i = 0; i < sizeof(man) / sizeof(*man); i++) {
		char *page = slurp(man[i]), *th = strstr(page, ".TH ");

		ck_assert_msg(th && strstr(th, want) && strstr(th, want) < strchr(th, '\n'),
			      "%s: its .TH does not say %s", man[i], want);
		free(page);
	}
	{
		char *cl = slurp("packaging/debian/changelog");

		snprintf(want, sizeof(want), "ward (%.*s)", (int)n, line);
		ck_assert_msg(strncmp(cl, want, strlen(want)) == 0,
			      "packaging/debian/changelog does not open with %s", want);
		free(cl);
	}
	snprintf(want, sizeof(want), "ward %.*s\n", (int)n, line);
	harness_capture(argv, &out, NULL);
	ck_assert_str_eq(out, want);
	free(out);
	free(argv[0]);
	free(mk);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("docs");
	TCase *tc;

	harness_add_probe("source", probe_source);
	harness_add_probe("groff", probe_groff);
	tc = harness_tcase(s, "drift", "source");
	tcase_add_test(tc, test_every_policy_key_in_policy_page);
	tcase_add_test(tc, test_every_run_option_in_ward_page);
	tcase_add_test(tc, test_every_other_option_in_its_page);
	tcase_add_test(tc, test_every_command_in_ward_page);
	tcase_add_test(tc, test_one_version);
	tc = harness_tcase(s, "render", "source groff");
	tcase_add_test(tc, test_pages_render_without_warnings);
	return harness_main(s);
}
