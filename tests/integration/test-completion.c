/* test-completion.c — the shell completions of packaging/completions: bash's
 * is sourced into a real bash and asked as readline would ask it (`ward ru`
 * gives run, `ward run --ne` the --net options, `ward run --net ` the modes,
 * `ward diff ` the change sets of this workdir), with and without the
 * bash-completion package; every option each subcommand's --help lists is
 * offered by bash and named by the zsh and fish files; zsh and fish parse
 * theirs (when those shells are installed). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char src_dir[4096];

static const char *probe_source(void)
{
	char p[4200];

	snprintf(src_dir, sizeof(src_dir), "%s/..", harness_build_dir());
	snprintf(p, sizeof(p), "%s/packaging/completions/ward.bash", src_dir);
	return access(p, R_OK) == 0 ? NULL : "no source tree (packaging/) beside the build tree";
}

static const char *probe_bash(void)
{
	return access("/bin/bash", X_OK) == 0 ? NULL : "no /bin/bash";
}

static const char *probe_zsh(void)
{
	return access("/usr/bin/zsh", X_OK) == 0 || access("/bin/zsh", X_OK) == 0 ? NULL :
										 "no zsh";
}

static const char *probe_fish(void)
{
	return access("/usr/bin/fish", X_OK) == 0 ? NULL : "no fish";
}

/* The candidates bash's completion gives for the words (the last one being
 * completed), one a line, run in `cwd` (NULL: here); bash-completion's own
 * library loaded first when `with_lib`. */
static char *complete(bool with_lib, const char *cwd, const char *words)
{
	char script[8192], *out = NULL, *err = NULL;
	char *argv[] = { (char *)"/bin/bash", (char *)"--norc", (char *)"--noprofile", (char *)"-c",
			 script, NULL };
	int st;

	snprintf(script, sizeof(script),
		 "set -u; export PATH='%s':\"$PATH\"; %s%s%s "
		 "%s . /usr/share/bash-completion/bash_completion; "
		 "set +u; . '%s/packaging/completions/ward.bash' || exit 9; "
		 "COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
		 "COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}; COMPREPLY=(); "
		 "_ward ward \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\"; "
		 "printf '%%s\\n' \"${COMPREPLY[@]}\"",
		 harness_build_dir(), cwd ? "cd '" : "", cwd ? cwd : "", cwd ? "' &&" : "",
		 with_lib ? "" : ":", src_dir, words);
	st = harness_capture(argv, &out, &err);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "bash: %s", err);
	free(err);
	return out;
}

static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; (p = strstr(p, line)); p++)
		if ((p == out || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

static const bool lib_modes[] = { false, true };

START_TEST(test_bash_commands_and_values)
{
	bool lib = lib_modes[_i];
	char *o;

	if (lib && access("/usr/share/bash-completion/bash_completion", R_OK) != 0) {
		fprintf(stderr, "# note: no bash-completion package, tried without it only\n");
		return;
	}
	o = complete(lib, NULL, "ward ru");
	ck_assert_msg(strcmp(o, "run\n") == 0, "ward ru<TAB>: '%s'", o);
	free(o);
	o = complete(lib, NULL, "ward d");
	ck_assert(has_line(o, "doctor") && has_line(o, "diff") && has_line(o, "discard"));
	free(o);
	o = complete(lib, NULL, "ward run --ne");
	ck_assert_msg(has_line(o, "--net") && has_line(o, "--net-log") &&
			      has_line(o, "--net-subnet") && has_line(o, "--net-transport") &&
			      !has_line(o, "--memory"),
		      "ward run --ne<TAB>: '%s'", o);
	free(o);
	o = complete(lib, NULL, "ward run --net ''");
	ck_assert_msg(strcmp(o, "none\nproxy\nhost\n") == 0, "ward run --net <TAB>: '%s'", o);
	free(o);
	o = complete(lib, NULL, "ward run --workdir-mode o");
	ck_assert_str_eq(o, "overlay\n");
	free(o);
	o = complete(lib, NULL, "ward shell --isolation ''");
	ck_assert_str_eq(o, "fresh\nshared\n");
	free(o);
	o = complete(lib, NULL, "ward apply --allow-o");
	ck_assert_str_eq(o, "--allow-outside-links\n");
	free(o);
}
END_TEST

/* A file of the source tree, whole. */
static char *slurp(const char *rel)
{
	char path[4300], *s;

	snprintf(path, sizeof(path), "%s/%s", src_dir, rel);
	s = harness_slurp(path);
	ck_assert_msg(s != NULL, "open '%s'", path);
	return s;
}

static const char *const subs[] = { "run",	"shell", "serve", "validate", "doctor",
				    "changes", "diff",	 "apply", "discard" };

START_TEST(test_every_help_option_completed)
{
	char *zsh = slurp("packaging/completions/_ward");
	char *fish = slurp("packaging/completions/ward.fish");
	int n = 0;

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		char *opts = harness_help_options(subs[i]), words[64], *o, *save = NULL;

		snprintf(words, sizeof(words), "ward %s -", subs[i]);
		o = complete(false, NULL, words);
		for (char *opt = strtok_r(opts, "\n", &save); opt; opt = strtok_r(NULL, "\n", &save)) {
			char fl[80];

			ck_assert_msg(has_line(o, opt), "bash: 'ward %s %s' is not completed", subs[i],
				      opt);
			ck_assert_msg(strstr(zsh, opt), "zsh: '%s' (ward %s) missing", opt, subs[i]);
			snprintf(fl, sizeof(fl), opt[1] == '-' ? "-l %s" : "-s %s",
				 opt + (opt[1] == '-' ? 2 : 1));
			ck_assert_msg(strstr(fish, fl), "fish: '%s' (ward %s) missing", fl, subs[i]);
			n++;
		}
		free(o);
		free(opts);
	}
	ck_assert_int_gt(n, 80);
	free(zsh);
	free(fish);
}
END_TEST

static void shell_parses(const char *shell, const char *flag, const char *file)
{
	char path[4400], *out = NULL, *err = NULL;
	char *argv[] = { (char *)shell, (char *)flag, path, NULL };
	int st;

	snprintf(path, sizeof(path), "%s/packaging/completions/%s", src_dir, file);
	st = harness_capture(argv, &out, &err);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !err[0], "%s %s: %s", shell, file,
		      err);
	free(out);
	free(err);
}

START_TEST(test_zsh_parses)
{
	shell_parses(access("/usr/bin/zsh", X_OK) == 0 ? "/usr/bin/zsh" : "/bin/zsh", "-n", "_ward");
}
END_TEST

START_TEST(test_fish_parses)
{
	shell_parses("/usr/bin/fish", "--no-execute", "ward.fish");
}
END_TEST

/* fish's own completer, asked as its command line would ask it. */
static char *fish_complete(const char *line)
{
	char script[4600], *out = NULL, *err = NULL;
	char *argv[] = { (char *)"/usr/bin/fish", (char *)"--no-config", (char *)"-c", script, NULL };
	int st;

	snprintf(script, sizeof(script),
		 "set PATH '%s' $PATH; source '%s/packaging/completions/ward.fish'; "
		 "complete -C '%s' | cut -f1",
		 harness_build_dir(), src_dir, line);
	st = harness_capture(argv, &out, &err);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !err[0], "fish: %s", err);
	free(err);
	return out;
}

START_TEST(test_fish_completes)
{
	char *o = fish_complete("ward ru");

	ck_assert_str_eq(o, "run\n");
	free(o);
	o = fish_complete("ward run --net ");
	ck_assert_str_eq(o, "host\nnone\nproxy\n");
	free(o);
	o = fish_complete("ward run --ne");
	ck_assert_msg(has_line(o, "--net") && has_line(o, "--net-log") && !has_line(o, "--memory"),
		      "%s", o);
	free(o);
	o = fish_complete("ward apply --allow-o");
	ck_assert_str_eq(o, "--allow-outside-links\n");
	free(o);
}
END_TEST

/* `ward diff <TAB>` offers the kept change sets of the workdir it is typed
 * in, not another's. */
START_TEST(test_bash_change_set_names)
{
	char *a = harness_tmpdir(), *b = harness_tmpdir(), *ward = harness_path("ward");
	char *out = NULL, *err = NULL, name[256] = "", *o;
	char *argv[] = { ward, (char *)"run", (char *)"--workdir-mode", (char *)"overlay",
			 (char *)"-C", a, (char *)"-c", (char *)"echo x > f", NULL };
	char *p;
	int st = harness_capture(argv, &out, &err);

	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "overlay run: %s", err);
	p = strstr(err, "kept as ");
	ck_assert_msg(p != NULL, "no set kept: %s", err);
	sscanf(p + 8, "%255[^ (]", name);
	o = complete(false, a, "ward diff ''");
	ck_assert_msg(has_line(o, name), "ward diff <TAB> in its workdir: '%s' lacks '%s'", o,
		      name);
	free(o);
	o = complete(false, b, "ward discard ''");
	ck_assert_msg(!has_line(o, name), "another workdir's set offered: '%s'", o);
	free(o);
	{
		char *d[] = { ward, (char *)"discard", (char *)"-C", a, name, NULL };
		char *o2 = NULL;

		harness_capture(d, &o2, NULL);
		free(o2);
	}
	free(out);
	free(err);
	free(ward);
	harness_rmtree(a);
	harness_rmtree(b);
	free(a);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("completion");
	TCase *tc;

	harness_add_probe("source", probe_source);
	harness_add_probe("bash", probe_bash);
	harness_add_probe("zsh", probe_zsh);
	harness_add_probe("fish", probe_fish);
	tc = harness_tcase(s, "bash", "source bash");
	tcase_add_loop_test(tc, test_bash_commands_and_values, 0, 2);
	tcase_add_test(tc, test_every_help_option_completed);
	tc = harness_tcase(s, "sets", "source bash userns");
	tcase_add_test(tc, test_bash_change_set_names);
	tc = harness_tcase(s, "zsh", "source zsh");
	tcase_add_test(tc, test_zsh_parses);
	tc = harness_tcase(s, "fish", "source fish");
	tcase_add_test(tc, test_fish_parses);
	tcase_add_test(tc, test_fish_completes);
	return harness_main(s);
}
