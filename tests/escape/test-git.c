/* test-git.c — hostile probes against the workdir's git metadata (issue 14,
 * item 1). A command that plants a configuration git reads on the host
 * (`echo ../evil > .git/commondir` and an evil/config with core.fsmonitor)
 * makes the host's next `git status` run its code. Inside every git
 * directory only what ordinary git work writes may change; everything else
 * (config*, commondir, hooks/, info/, modules/NAME/config, worktrees/NAME's
 * commondir and gitdir, a new unknown name) must not reach the host's .git,
 * in direct mode and through overlay mode's apply. And git keeps working
 * inside: add, commit, --amend, branch, checkout, merge, rebase,
 * cherry-pick, stash, tag, log, diff. Run as root and as uid 65534. */
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *workdir, *state, *outside, *ward;

static void setup(void)
{
	workdir = harness_tmpdir();
	state = harness_tmpdir();
	outside = harness_tmpdir(); /* where a planted fsmonitor leaves its mark */
	ward = harness_path("ward");
	setenv("XDG_STATE_HOME", state, 1);
	/* the host's git below must see only the repository's own config */
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
}

static void teardown(void)
{
	harness_rmtree(workdir);
	harness_rmtree(state);
	harness_rmtree(outside);
	free(workdir);
	free(state);
	free(outside);
	free(ward);
}

/* sh -c on the host in the workdir; output returned (caller frees). */
static char *host_sh(const char *fmt, ...)
{
	char *script, *cmd, *out = NULL;
	va_list ap;
	int st;

	va_start(ap, fmt);
	ck_assert_int_ge(vasprintf(&script, fmt, ap), 0);
	va_end(ap);
	ck_assert_int_ge(asprintf(&cmd, "cd '%s' && %s", workdir, script), 0);
	{
		char *argv[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };

		st = harness_capture(argv, &out, NULL);
	}
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "host: %s: status %d: %s", script, st,
		      out);
	free(script);
	free(cmd);
	return out;
}

#define G "git -c user.name=t -c user.email=t@t "

static void git_repo(void)
{
	free(host_sh("git init -q -b main . && echo hello > a.txt && git add a.txt && "
		     G "commit -qm init"));
}

/* ward run --json in the workdir with the options; the parsed result. */
static json_t *run_json(const char *cmd, const char *const *opts)
{
	char *argv[40], *out = NULL, *req;
	int n = 0;
	json_t *o, *r;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)harness_fences_policy_opt();
	argv[n++] = (char *)"--json";
	/* the request names a workdir under $TMPDIR: the person allows it */
	argv[n++] = (char *)"--workdir-root";
	argv[n++] = workdir;
	for (; opts && *opts && n < 36; opts++)
		argv[n++] = (char *)*opts;
	argv[n] = NULL;
	r = json_pack("{s:s, s:s}", "command", cmd, "workdir", workdir);
	req = json_dumps(r, 0);
	json_decref(r);
	harness_capture_input(argv, req, &out, NULL);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o != NULL, "not JSON: %s", out);
	free(out);
	free(req);
	return o;
}

static const char *error_field(json_t *r, const char *key)
{
	return json_string_value(json_object_get(json_object_get(r, "error"), key));
}

static bool violated(json_t *r, const char *path)
{
	json_t *v = json_object_get(json_object_get(r, "workdir"), "violations");

	for (size_t i = 0; i < json_array_size(v); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(v, i), "path")), path) ==
		    0)
			return true;
	return false;
}

/* The names of a git directory's tree, sorted, with each file's content
 * hash: what must not change under an attack. */
static char *gitdir_manifest(const char *dir)
{
	return host_sh("cd '%s' && find . | LC_ALL=C sort && "
		       "find . -type f -print0 | LC_ALL=C sort -z | xargs -0r md5sum",
		       dir);
}

/* Whether the host's git, run the way a person would after the command,
 * ran the command's code (the mark appears). */
static bool host_git_ran_code(const char *subdir)
{
	char mark[4200];
	char *out = host_sh("cd '%s' && { git status; git log -1; git diff; } >/dev/null 2>&1; "
			    "true",
			    subdir);

	free(out);
	snprintf(mark, sizeof(mark), "%s/MARK", outside);
	return access(mark, F_OK) == 0;
}

/* The evil repository a pointer leads to: objects and refs so that git takes
 * it for one, and a config running the mark. */
static char *evil_setup(void)
{
	char *s;

	ck_assert_int_ge(asprintf(&s,
				  "mkdir -p evil/objects evil/refs; "
				  "printf '[core]\\n\\trepositoryformatversion = 0\\n"
				  "\\tfsmonitor = \"touch %s/MARK; false\"\\n' > evil/config; "
				  "printf '[core]\\n\\tfsmonitor = \"touch %s/MARK; false\"\\n' > evil.cfg; ",
				  outside, outside),
			 0);
	return s;
}

/* Every attack on the top repository's git directory, each tried on its own
 * (a refusal of one does not stop the next). */
static char *attack_script(void)
{
	char *evil = evil_setup(), *s;

	ck_assert_int_ge(
		asprintf(&s,
			 "%s t() { \"$@\" 2>/dev/null; true; }; "
			 "t sh -c 'echo ../evil > .git/commondir'; "
			 "t cp evil.cfg .git/config.worktree; "
			 "t cp evil.cfg .git/config; "
			 "t sh -c 'cp evil.cfg .git/config.lock && mv .git/config.lock .git/config'; "
			 "t sh -c 'printf \"#!/bin/sh\\ntouch %s/MARK\\n\" > .git/hooks/post-checkout'; "
			 "t mkdir -p .git/info; "
			 "t sh -c 'echo \"* filter=evil\" > .git/info/attributes'; "
			 "t sh -c 'echo \"*.c\" > .git/info/exclude'; "
			 "t mkdir -p .git/modules/sub; t cp evil.cfg .git/modules/sub/config; "
			 "t mkdir -p .git/worktrees/wt; "
			 "t sh -c 'echo ../../../evil > .git/worktrees/wt/commondir'; "
			 "t sh -c 'echo /tmp/x/.git > .git/worktrees/wt/gitdir'; "
			 "t sh -c 'echo \"$PWD/evil/objects\" > .git/objects/info/alternates'; "
			 "t sh -c 'echo future > .git/some-future-name'; "
			 "t mkdir .git/newdir; t cp evil.cfg .git/newdir/config; "
			 "t ln -s ../evil/config .git/refs/heads/evil-link; "
			 "t mkfifo .git/fifo; "
			 "echo done",
			 evil, outside),
		0);
	free(evil);
	return s;
}

static const char *const attacked[] = {
	".git/commondir",	      ".git/config.worktree",	  ".git/info/attributes",
	".git/modules",		      ".git/worktrees",	  ".git/objects/info/alternates",
	".git/some-future-name",      ".git/newdir",		  ".git/refs/heads/evil-link",
	".git/fifo",
};

/* Two manifests equal, or the first line where they part (whole ones can
 * be too long for Check's message). */
static void assert_same(const char *before, const char *after, const char *what)
{
	size_t i = 0, line = 0;

	while (before[i] && before[i] == after[i])
		i++;
	if (!before[i] && !after[i])
		return;
	while (i > 0 && before[i - 1] != '\n')
		i--;
	line = i;
	ck_abort_msg("%s changed: before '%.*s', after '%.*s'", what,
		     (int)strcspn(before + line, "\n"), before + line,
		     (int)strcspn(after + line, "\n"), after + line);
}

static void check_attack_refused(json_t *r, const char *before, bool reported)
{
	char gitdir[4200];
	char *after;

	snprintf(gitdir, sizeof(gitdir), "%s/.git", workdir);
	after = gitdir_manifest(gitdir);
	assert_same(before, after, "the host's .git");
	free(after);
	ck_assert_msg(!host_git_ran_code(workdir), "the host's git ran the command's code");
	for (size_t i = 0; reported && i < sizeof(attacked) / sizeof(*attacked); i++)
		ck_assert_msg(violated(r, attacked[i]), "'%s' not reported", attacked[i]);
}

START_TEST(test_direct_attacks)
{
	char gitdir[4200], *before, *script = attack_script();
	json_t *r;

	git_repo();
	free(host_sh("mkdir -p .git/info && echo keep > .git/info/exclude"));
	snprintf(gitdir, sizeof(gitdir), "%s/.git", workdir);
	before = gitdir_manifest(gitdir);
	r = run_json(script, NULL);
	ck_assert_msg(json_is_null(json_object_get(r, "error")), "%s", error_field(r, "message"));
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	check_attack_refused(r, before, true);
	ck_assert_msg(violated(r, ".git/info/exclude"), "info/exclude not reported");
	json_decref(r);
	free(before);
	free(script);
}
END_TEST

/* Overlay mode: applying a set that carries any of it is refused whole,
 * at the end of the run (--apply) and later (ward apply NAME). */
START_TEST(test_overlay_apply_attacks)
{
	const char *opts[] = { "--workdir-mode", "overlay", "--apply", NULL };
	const char *keep[] = { "--workdir-mode", "overlay", NULL }; /* kept by default */
	char gitdir[4200], *before, *script = attack_script(), *out = NULL, *err = NULL;
	const char *name;
	json_t *r;

	git_repo();
	snprintf(gitdir, sizeof(gitdir), "%s/.git", workdir);
	before = gitdir_manifest(gitdir);
	/* each attack alone, kept, then applied with ward apply */
	{
		static const char *const one[] = {
			"echo ../evil > .git/commondir",
			"cp evil.cfg .git/config.worktree",
			"mkdir -p .git/info && echo x > .git/info/attributes",
			"mkdir -p .git/modules/s && cp evil.cfg .git/modules/s/config",
			"mkdir -p .git/worktrees/w && echo ../../../evil > .git/worktrees/w/commondir",
			"echo f > .git/some-future-name",
		};
		char *evil = evil_setup();

		for (size_t i = 0; i < sizeof(one) / sizeof(*one); i++) {
			char *cmd;
			int st;

			ck_assert_int_ge(asprintf(&cmd, "%s %s", evil, one[i]), 0);
			r = run_json(cmd, keep);
			name = json_string_value(json_object_get(
				json_object_get(json_object_get(r, "workdir"), "changes"), "name"));
			ck_assert_msg(name, "not kept: %s", one[i]);
			{
				char *argv[] = { ward, (char *)"apply", (char *)"-C", workdir,
						 (char *)name, NULL };

				st = harness_capture(argv, &out, &err);
			}
			ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0, "applied: %s", one[i]);
			ck_assert_msg(strstr(err, "protected"), "%s: %s", one[i], err);
			free(out);
			free(err);
			json_decref(r);
			free(cmd);
			check_attack_refused(NULL, before, false);
		}
		free(evil);
	}
	r = run_json(script, opts);
	ck_assert_str_eq(error_field(r, "kind"), "NotAuthorized");
	ck_assert_str_eq(error_field(r, "rule"), "protected-path");
	check_attack_refused(r, before, false);
	ck_assert_msg(violated(r, ".git/commondir") && violated(r, ".git/some-future-name"),
		      "not reported");
	json_decref(r);
	free(before);
	free(script);
}
END_TEST

/* A linked worktree and a submodule inside the workdir: the pointers to
 * their git directories (wt/.git, sub/.git, .git/worktrees/wt/commondir and
 * gitdir) cannot be turned to a directory of the command's, nor the
 * submodule's configuration changed. */
START_TEST(test_worktree_pointers)
{
	char gitdir[4200], wt[4200], *before, *wt_before, *evil = evil_setup(), *cmd;
	json_t *r;

	git_repo();
	free(host_sh("git worktree add -q wt -b wtb"));
	/* a submodule: its git directory in .git/modules/sub, sub/.git a gitfile */
	free(host_sh("mkdir '%s/lib' && cd '%s/lib' && git init -q -b main && echo l > l && "
		     "git add l && " G "commit -qm lib && cd '%s' && "
		     G "-c protocol.file.allow=always submodule add -q '%s/lib' sub && "
		     G "commit -qm sub",
		     outside, outside, workdir, outside));
	snprintf(gitdir, sizeof(gitdir), "%s/.git", workdir);
	snprintf(wt, sizeof(wt), "%s/wt", workdir);
	before = gitdir_manifest(gitdir);
	wt_before = host_sh("cat wt/.git sub/.git");
	ck_assert_int_ge(asprintf(&cmd,
				  "%s t() { \"$@\" 2>/dev/null; true; }; "
				  "t sh -c 'echo ../../../evil > .git/worktrees/wt/commondir'; "
				  "t sh -c 'echo \"$PWD/evil/.git\" > .git/worktrees/wt/gitdir'; "
				  "t cp evil.cfg .git/worktrees/wt/config.worktree; "
				  "t sh -c 'echo > .git/worktrees/wt/locked'; "
				  "t sh -c 'echo \"gitdir: ../evil\" > wt/.git'; "
				  "t rm -f wt/.git; t mv wt/.git wt/.g; "
				  "t sh -c 'mkdir wt/.git'; "
				  "t cp evil.cfg .git/modules/sub/config; "
				  "t sh -c 'echo ../../../evil > .git/modules/sub/commondir'; "
				  "t cp evil.cfg .git/modules/sub/hooks/post-checkout; "
				  "t sh -c 'echo \"gitdir: ../evil\" > sub/.git'; "
				  "t rm -f sub/.git; echo done",
				  evil),
			 0);
	r = run_json(cmd, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	{
		char *after = gitdir_manifest(gitdir), *wt_after = host_sh("cat wt/.git sub/.git");

		assert_same(before, after, "the host's .git");
		assert_same(wt_before, wt_after, "wt/.git");
		free(after);
		free(wt_after);
	}
	ck_assert_msg(!host_git_ran_code(wt), "the host's git ran the command's code");
	{
		char sub[4200];

		snprintf(sub, sizeof(sub), "%s/sub", workdir);
		ck_assert_msg(!host_git_ran_code(sub), "the host's git ran the command's code");
	}
	ck_assert(violated(r, ".git/modules/sub/config"));
	ck_assert(violated(r, ".git/modules/sub/commondir"));
	ck_assert(violated(r, ".git/worktrees/wt/commondir"));
	ck_assert(violated(r, ".git/worktrees/wt/gitdir"));
	json_decref(r);
	free(cmd);
	free(evil);
	free(before);
	free(wt_before);
}
END_TEST

/* A submodule whose path has a component git uses for its data (vendor/logs):
 * its git directory .git/modules/vendor/logs has a config that reads like
 * the reflog "logs/config" of a submodule "vendor". It is refused all the
 * same, and the host's git in it runs nothing. */
START_TEST(test_submodule_data_name)
{
	char gitdir[4200], sub[4200], *before, *evil = evil_setup(), *cmd;
	json_t *r;

	git_repo();
	free(host_sh("mkdir '%s/lib2' && cd '%s/lib2' && git init -q -b main && echo l > l && "
		     "git add l && " G "commit -qm lib && cd '%s' && "
		     G "-c protocol.file.allow=always submodule add -q '%s/lib2' vendor/logs && "
		     G "commit -qm sub",
		     outside, outside, workdir, outside));
	snprintf(gitdir, sizeof(gitdir), "%s/.git", workdir);
	before = gitdir_manifest(gitdir);
	ck_assert_int_ge(asprintf(&cmd,
				  "%s t() { \"$@\" 2>/dev/null; true; }; "
				  "t cp evil.cfg .git/modules/vendor/logs/config; "
				  "t cp evil.cfg .git/modules/vendor/logs/hooks/post-checkout; "
				  "echo done",
				  evil),
			 0);
	r = run_json(cmd, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	{
		char *after = gitdir_manifest(gitdir);

		assert_same(before, after, "the host's .git");
		free(after);
	}
	snprintf(sub, sizeof(sub), "%s/vendor/logs", workdir);
	ck_assert_msg(!host_git_ran_code(sub), "the host's git ran the command's code");
	ck_assert_msg(!host_git_ran_code(workdir), "the host's git ran the command's code");
	ck_assert(violated(r, ".git/modules/vendor/logs/config"));
	json_decref(r);
	free(cmd);
	free(evil);
	free(before);
}
END_TEST

/* .git a gitfile naming a git directory elsewhere in the workdir: that one
 * gets the same rule (and the gitfile stays as it is). */
START_TEST(test_gitfile_inside)
{
	char *gitfile, *evil = evil_setup(), *cmd;
	json_t *r;

	gitfile = host_sh("mkdir .repo && git init -q -b main --separate-git-dir=.repo/git . && echo a > a && "
			  "git add a && " G "commit -qm init && cat .git");
	ck_assert_int_ge(asprintf(&cmd,
				  "%s t() { \"$@\" 2>/dev/null; true; }; "
				  "echo b > b && git add b && " G "commit -qm two && "
				  "git log --oneline | wc -l; "
				  "t sh -c 'echo ../../evil > .repo/git/commondir'; "
				  "t cp evil.cfg .repo/git/config.worktree; "
				  "t cp evil.cfg .repo/git/config; "
				  "t sh -c 'echo \"gitdir: evil\" > .git'; "
				  /* the directory the gitfile names moved aside, one of
				   * the command's put at its path */
				  "t mv .repo .repo-away; t mv .repo/git .repo/g2; "
				  "t sh -c 'mkdir -p .repo/x && cp -r evil .repo/x/git && "
				  "echo \"ref: refs/heads/main\" > .repo/x/git/HEAD && "
				  "mv .repo/x/git .repo/git'",
				  evil),
			 0);
	r = run_json(cmd, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "2\n");
	ck_assert(violated(r, ".repo/git/commondir"));
	ck_assert(violated(r, ".repo/git/config.worktree"));
	ck_assert_msg(!host_git_ran_code(workdir), "the host's git ran the command's code");
	{
		char *out = host_sh("cat .git; git log --oneline | wc -l; git status --short"), *want;

		ck_assert_int_ge(asprintf(&want, "%s2\n?? .repo/\n?? evil.cfg\n?? evil/\n", gitfile), 0);
		ck_assert_str_eq(out, want);
		free(out);
		free(want);
	}
	json_decref(r);
	free(cmd);
	free(evil);
	free(gitfile);
}
END_TEST

/* Ordinary git work inside, its result on the host afterwards. */
static const char git_work[] =
	"set -e; " G "commit -q --allow-empty -m two; echo more >> a.txt; git add a.txt; "
	G "commit -qm three; " G "commit -q --amend -m three-amended; "
	"git branch side; git checkout -qb feature; echo f > f.txt; git add f.txt; "
	G "commit -qm four; git checkout -q main; " G "merge -q --no-ff --no-edit feature; "
	"git checkout -q side; echo s > s.txt; git add s.txt; " G "commit -qm side; "
	G "rebase -q main; git checkout -q main; " G "cherry-pick side >/dev/null; "
	"echo wip >> a.txt; " G "stash -q; " G "stash pop -q; git checkout -q -- a.txt; "
	G "tag v1; " G "tag -a -m annotated v2; "
	"git log --oneline | wc -l; git diff HEAD~1 --stat | tail -1; git status --short";

static void check_git_work(json_t *r)
{
	char *out;

	ck_assert_msg(json_integer_value(json_object_get(r, "exit_code")) == 0, "git inside: %s",
		      json_string_value(json_object_get(r, "output")));
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")),
			 "6\n 1 file changed, 1 insertion(+)\n");
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(r, "workdir"),
							 "violations")),
			 0);
	out = host_sh("git log --oneline main | wc -l; git branch --list | wc -l; git tag; "
		      "git status --short; git fsck --no-dangling 2>&1; git stash list | wc -l; "
		      "ls .git | grep -c lock; true");
	ck_assert_str_eq(out, "6\n3\nv1\nv2\n0\n0\n");
	free(out);
}

START_TEST(test_git_works_direct)
{
	json_t *r;

	git_repo();
	r = run_json(git_work, NULL);
	check_git_work(r);
	json_decref(r);
}
END_TEST

START_TEST(test_git_works_overlay)
{
	const char *opts[] = { "--workdir-mode", "overlay", "--apply", NULL };
	json_t *r;

	git_repo();
	r = run_json(git_work, opts);
	ck_assert_msg(json_is_null(json_object_get(r, "error")), "%s", error_field(r, "message"));
	check_git_work(r);
	json_decref(r);
}
END_TEST

/* Nothing of the git directories' overlays stays in the state directory. */
START_TEST(test_nothing_left)
{
	char runs[4200], *out;
	json_t *r;

	harness_private_mounts(true); /* a /dev/shm no other ward on the host uses */
	git_repo();
	r = run_json("echo x > .git/junk; git status >/dev/null", NULL);
	json_decref(r);
	snprintf(runs, sizeof(runs), "%s/ward/runs", state);
	out = host_sh("ls -A '%s' 2>/dev/null | wc -l", runs);
	ck_assert_str_eq(out, "0\n");
	free(out);
	/* where the overlays' upper layers go when /dev/shm serves */
	out = host_sh("ls -A /dev/shm/ward-git-%u 2>/dev/null | wc -l", (unsigned)geteuid());
	ck_assert_str_eq(out, "0\n");
	free(out);
}
END_TEST

/* The host's /dev/shm is every user's (shm_open, sem_open): a command must
 * not fill it through its git directory's writable layer, which root's ward
 * keeps there to spare the disk. A /dev/shm of 2000 inodes here, and the
 * default memory limit (half the RAM), which could make far more: the layer
 * goes to the state directory instead, and all 3000 files are made. */
START_TEST(test_shm_not_filled)
{
	const char *got;
	json_t *r;

	if (!harness_private_mounts(true))
		return; /* another user's ward never uses /dev/shm */
	ck_assert_msg(mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
			    "mode=1777,size=64m,nr_inodes=2000") == 0,
		      "mount a small tmpfs on /dev/shm: %s", strerror(errno));
	git_repo();
	r = run_json("mkdir .git/junk && cd .git/junk && seq 3000 | xargs touch && ls | wc -l",
		     NULL);
	got = json_string_value(json_object_get(r, "output"));
	ck_assert_msg(got && strcmp(got, "3000\n") == 0, "the files stopped short: %.300s",
		      got ? got : "(no output)");
	json_decref(r);
}
END_TEST

/* An interactive rebase left stopped inside, its to-do list holding an exec
 * line: the host's `git rebase --continue` would run it. The list is not
 * merged back (direct mode) and not applied (overlay). */
START_TEST(test_rebase_exec_planted)
{
	static const char *const overlay[] = { "--workdir-mode=overlay", "--apply", NULL };
	char mark[4400], *cmd, *out;
	json_t *r;

	for (int k = 0; k < 2; k++) {
		git_repo();
		free(host_sh(G "commit -q --allow-empty -m two"));
		snprintf(mark, sizeof(mark), "%s/rebase-ran-%d", outside, k);
		ck_assert_int_ge(asprintf(&cmd,
					  "GIT_SEQUENCE_EDITOR=\"sed -i '1i break\\nexec touch %s'\" "
					  G "rebase -i HEAD~1 >/dev/null 2>&1; echo done",
					  mark),
				 0);
		r = run_json(cmd, k ? overlay : NULL);
		ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
		json_decref(r);
		free(cmd);
		out = host_sh(G "rebase --continue >/dev/null 2>&1; "
			      "grep -c exec .git/rebase-merge/git-rebase-todo 2>/dev/null; true");
		free(out);
		ck_assert_msg(access(mark, F_OK) < 0, "the host's git ran the planted exec line");
		free(host_sh(G "rebase --abort >/dev/null 2>&1; rm -rf .git .??* * 2>/dev/null; true"));
	}
}
END_TEST

/* A rebase or a cherry-pick sequence left stopped inside, its strategy
 * turned to a program of the command's: git runs a strategy as
 * `git merge-NAME`, and "/x" as the path ./git-merge-/x in the worktree, so
 * the host's `git rebase --continue` (or `cherry-pick --continue`) would
 * run the file the command made. Neither the strategy file nor a
 * sequencer/opts naming it is merged back (direct mode) or applied
 * (overlay); a builtin strategy still is. */
START_TEST(test_strategy_planted)
{
	static const char *const overlay[] = { "--workdir-mode=overlay", "--apply", NULL };
	static const char *const plant[] = {
		/* an interactive rebase stopped before its pick */
		"GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" " G "rebase -i side >/dev/null 2>&1; "
		"echo /x > .git/rebase-merge/strategy; echo done",
		/* a cherry-pick sequence stopped at its first commit's editor */
		"GIT_EDITOR=false " G "cherry-pick -e side~1 side >/dev/null 2>&1; "
		"printf '[options]\\n\\tstrategy = /x\\n' > .git/sequencer/opts; echo done",
	};
	static const char *const cont[] = { "rebase", "cherry-pick" };
	char mark[4400], *out;
	json_t *r;

	for (int k = 0; k < 4; k++) {
		git_repo();
		snprintf(mark, sizeof(mark), "%s/strategy-ran-%d", outside, k);
		/* side: two commits; main one more of its own, so that a pick
		 * is a merge, not a fast-forward. The program a run may leave
		 * in the workdir like any other file. */
		free(host_sh("git checkout -q -b side && echo b > b && git add b && " G
			     "commit -qm b && echo b2 > b2 && git add b2 && " G "commit -qm b2 && "
			     "git checkout -q main && echo c > c && git add c && " G "commit -qm c && "
			     "mkdir git-merge- && printf '#!/bin/sh\\ntouch %s\\nexit 1\\n' > "
			     "git-merge-/x && chmod 755 git-merge-/x",
			     mark));
		r = run_json(plant[k % 2], k >= 2 ? overlay : NULL);
		ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
		json_decref(r);
		out = host_sh(G "%s --continue >/dev/null 2>&1; true", cont[k % 2]);
		free(out);
		ck_assert_msg(access(mark, F_OK) < 0, "the host's git ran the planted strategy (%s%s)",
			      cont[k % 2], k >= 2 ? ", overlay" : "");
		free(host_sh(G "%s --abort >/dev/null 2>&1; rm -rf .git .??* * 2>/dev/null; true",
			     cont[k % 2]));
	}

	/* a builtin strategy is git's own: merged back */
	git_repo();
	free(host_sh("git checkout -q -b side && echo b > b && git add b && " G "commit -qm b && "
		     "git checkout -q main && echo c > c && git add c && " G "commit -qm c"));
	r = run_json("GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" " G
		     "rebase -i -s ort side >/dev/null 2>&1; echo done",
		     NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	ck_assert_msg(!violated(r, ".git/rebase-merge/strategy"), "a builtin strategy refused");
	json_decref(r);
	out = host_sh("cat .git/rebase-merge/strategy && " G "rebase --continue >/dev/null 2>&1 && "
		      "git log --format=%%s -1");
	ck_assert_str_eq(out, "ort\nc\n");
	free(out);
}
END_TEST

/* A `git am` stopped at a conflict, its `git apply` options turned to
 * --build-fake-ancestor=FILE: the host's `git am --skip` (or --continue)
 * would write an index at FILE, anywhere the person may write. Not merged
 * back (direct mode) nor applied (overlay); the options am writes are. */
START_TEST(test_am_apply_opt_planted)
{
	static const char *const overlay[] = { "--workdir-mode=overlay", "--apply", NULL };
	char fake[4400], *cmd, *out;
	json_t *r;

	for (int k = 0; k < 2; k++) {
		git_repo();
		snprintf(fake, sizeof(fake), "%s/fake-%d", outside, k);
		/* two patches, the first one conflicting: am stops there */
		free(host_sh("echo x > x && git add x && " G "commit -qm x && "
			     "echo b >> a.txt && " G "commit -qam b && echo y >> x && " G
			     "commit -qam y && " G "format-patch -q -2 -o '%s/p%d' && "
			     "git reset -q --hard HEAD~2 && echo c > a.txt && " G "commit -qam c && "
			     "{ " G "am --whitespace=fix '%s'/p%d/*.patch >/dev/null 2>&1; true; } && "
			     "cat .git/rebase-apply/apply-opt",
			     outside, k, outside, k));
		ck_assert_int_ge(asprintf(&cmd,
					  "echo \"'--build-fake-ancestor=%s'\" > "
					  ".git/rebase-apply/apply-opt && echo done",
					  fake),
				 0);
		r = run_json(cmd, k ? overlay : NULL);
		ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
		json_decref(r);
		free(cmd);
		out = host_sh(G "am --skip >/dev/null 2>&1; true");
		free(out);
		ck_assert_msg(access(fake, F_OK) < 0, "the host's git am wrote '%s'", fake);
		free(host_sh(G "am --abort >/dev/null 2>&1; rm -rf .git .??* * 2>/dev/null; true"));
	}
	/* the options am itself writes are merged back */
	git_repo();
	free(host_sh("echo x > x && git add x && " G "commit -qm x && echo b >> a.txt && " G
		     "commit -qam b && " G "format-patch -q -1 -o '%s/q' && git reset -q --hard "
		     "HEAD~1 && echo c > a.txt && " G "commit -qam c",
		     outside));
	free(host_sh("cp -r '%s/q' q && git add q && " G "commit -qm q", outside));
	r = run_json(G "am -q --whitespace=fix -C1 q/*.patch >/dev/null 2>&1; echo done", NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	ck_assert_msg(!violated(r, ".git/rebase-apply/apply-opt"), "am's own options refused");
	json_decref(r);
	out = host_sh("cat .git/rebase-apply/apply-opt");
	ck_assert_str_eq(out, " '--whitespace=fix' '-C1'\n");
	free(out);
}
END_TEST

/* An index written by hand (git itself refuses to add such paths) with an
 * entry at .git/hooks/post-checkout, one above the workdir and one at an
 * absolute path, their blob an executable script: git trusts the index it
 * reads, and the host's `git restore .` (`git checkout .`), run to drop
 * the changes `git status` shows, writes each entry's blob at its path.
 * Such an index is not merged back (direct mode) nor applied (overlay). */
START_TEST(test_index_paths_planted)
{
	static const char *const overlay[] = { "--workdir-mode=overlay", "--apply", NULL };
	static const char mk[] =
		"import hashlib, struct, subprocess, sys\n"
		"blob = subprocess.run(['git', 'hash-object', '-w', '--stdin'], check=True,\n"
		"    input=open('hook.sh', 'rb').read(), capture_output=True).stdout.strip()\n"
		"ents = sorted((p.encode(), 0o100755, bytes.fromhex(blob.decode()))\n"
		"    for p in sys.argv[1:])\n"
		"b = b'DIRC' + struct.pack('>II', 2, len(ents))\n"
		"for name, mode, sha in ents:\n"
		"    e = struct.pack('>10I', 0, 0, 0, 0, 0, 0, mode, 0, 0, 0) + sha\n"
		"    e += struct.pack('>H', len(name)) + name\n"
		"    b += e + b'\\0' * (8 - len(e) % 8)\n"
		"open('.git/index', 'wb').write(b + hashlib.sha1(b).digest())\n";
	char mark[4400], above[4400], abs_path[4400], *cmd, *out, *dir = strrchr(workdir, '/');
	bool reported, wrote_above;
	json_t *r;

	for (int k = 0; k < 2; k++) {
		git_repo();
		snprintf(mark, sizeof(mark), "%s/index-ran-%d", outside, k);
		snprintf(above, sizeof(above), "%s/../%s-above-%d", workdir, dir + 1, k);
		snprintf(abs_path, sizeof(abs_path), "%s/abs-%d", outside, k);
		free(host_sh("cat > mk.py <<'EOF'\n%sEOF\n"
			     "printf '#!/bin/sh\\ntouch %s\\n' > hook.sh && "
			     "git add mk.py hook.sh && " G "commit -qm tools",
			     mk, mark));
		ck_assert_int_ge(asprintf(&cmd,
					  "python3 mk.py a.txt hook.sh mk.py .git/hooks/post-checkout "
					  "../%s-above-%d %s && echo done",
					  dir + 1, k, abs_path),
				 0);
		r = run_json(cmd, k ? overlay : NULL);
		ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
		reported = k || violated(r, ".git/index");
		json_decref(r);
		free(cmd);
		/* the person drops what `git status` shows changed, then switches */
		out = host_sh("git restore . >/dev/null 2>&1; git checkout . >/dev/null 2>&1; "
			      "git checkout -q -b next >/dev/null 2>&1; true");
		free(out);
		wrote_above = access(above, F_OK) == 0;
		unlink(above); /* not left beside the workdir when it failed */
		ck_assert_msg(access(mark, F_OK) < 0, "the host's git ran the planted hook");
		ck_assert_msg(!wrote_above, "the host's git wrote above the workdir");
		ck_assert_msg(access(abs_path, F_OK) < 0, "the host's git wrote at an absolute path");
		ck_assert_msg(reported, "the index not reported");
		free(host_sh("rm -rf .git .??* * 2>/dev/null; true"));
	}
}
END_TEST

/* A repository directly inside the workdir that is not the workdir's own
 * (a workdir holding several checkouts, a clone beside the sources): its
 * git directory is deny-by-default like .git, so the host's git in it runs
 * nothing the command planted, while git work in it (a commit) still
 * reaches the host. Through overlay mode's apply, refused whole. */
START_TEST(test_existing_nested_repo)
{
	static const char *const overlay[] = { "--workdir-mode=overlay", "--apply", NULL };
	char nested[4200], gitdir[4300], *before, *after, *evil = evil_setup(), *cmd, *out;
	json_t *r;

	snprintf(nested, sizeof(nested), "%s/nested", workdir);
	snprintf(gitdir, sizeof(gitdir), "%s/.git", nested);
	free(host_sh("git init -q -b main nested && cd nested && echo n > n && git add n && " G
		     "commit -qm n"));
	ck_assert_int_ge(asprintf(&cmd,
				  "%s t() { \"$@\" 2>/dev/null; true; }; "
				  "t cp evil.cfg nested/.git/config; "
				  "t sh -c 'echo ../../evil > nested/.git/commondir'; "
				  "t cp evil.cfg nested/.git/config.worktree; "
				  "t sh -c 'printf \"#!/bin/sh\\ntouch %s/MARK\\n\" > "
				  "nested/.git/hooks/post-checkout'; "
				  "t sh -c 'echo ../../evil/objects > nested/.git/objects/info/alternates'; "
				  "echo done",
				  evil, outside),
			 0);
	for (int k = 0; k < 2; k++) {
		before = gitdir_manifest(gitdir);
		r = run_json(cmd, k ? overlay : NULL);
		ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
		json_decref(r);
		after = gitdir_manifest(gitdir);
		assert_same(before, after, "nested/.git");
		free(before);
		free(after);
		ck_assert_msg(!host_git_ran_code(nested), "the host's git ran the command's code");
	}
	/* git work in it still reaches the host */
	r = run_json("cd nested && echo m > m && git add m && " G "commit -qm m && echo done",
		     NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	json_decref(r);
	out = host_sh("cd nested && git log --format=%%s");
	ck_assert_str_eq(out, "m\nn\n");
	free(out);
	free(cmd);
	free(evil);
}
END_TEST

/* A nested repository made inside, with a config of the command's, then
 * recorded in the top index as a submodule (a gitlink): the host's
 * `git status` at the top would enter it and run that config. The index is
 * not merged back, and the gitlink is named; an index that only adds files
 * still is, and a submodule the index had before stays allowed. */
START_TEST(test_gitlink_planted)
{
	char *cmd, *out;
	json_t *r;

	git_repo();
	ck_assert_int_ge(asprintf(&cmd,
				  "git init -q sub && cd sub && " G "commit -q --allow-empty -m s && "
				  "printf '[core]\\n\\tfsmonitor = \"touch %s/MARK; false\"\\n' "
				  ">> .git/config && cd .. && git add sub b.txt 2>/dev/null; "
				  "echo done",
				  outside),
			 0);
	free(host_sh("echo b > b.txt"));
	r = run_json(cmd, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	ck_assert_msg(!host_git_ran_code(workdir), "the host's git ran the nested config");
	ck_assert_msg(violated(r, "sub"), "the planted gitlink not reported");
	out = host_sh("git ls-files -s");
	ck_assert_msg(!strstr(out, "160000") && !strstr(out, "b.txt"), "index merged: %s", out);
	free(out);
	json_decref(r);
	free(cmd);

	/* the nested repository left by that run, recorded by an overlay run:
	 * its change set is not applied */
	{
		static const char *const overlay[] = { "--workdir-mode=overlay", "--apply", NULL };

		r = run_json("git add sub 2>/dev/null; echo done", overlay);
		ck_assert_str_eq(error_field(r, "kind"), "NotAuthorized");
		ck_assert_msg(strstr(error_field(r, "message"), ".git/index"), "%s",
			      error_field(r, "message"));
		json_decref(r);
		out = host_sh("git ls-files -s");
		ck_assert_msg(!strstr(out, "160000"), "index applied: %s", out);
		free(out);
		ck_assert_msg(!host_git_ran_code(workdir), "the host's git ran the nested config");
	}

	/* ordinary staging still reaches the host */
	r = run_json("rm -rf sub 2>/dev/null; git add b.txt && echo done", NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	ck_assert_msg(!violated(r, ".git/index"), "an ordinary index refused");
	json_decref(r);
	out = host_sh("git ls-files");
	ck_assert_msg(strstr(out, "b.txt"), "index not merged: %s", out);
	free(out);

	/* a submodule the host recorded itself stays */
	free(host_sh("git init -q lib && cd lib && " G "commit -q --allow-empty -m l && cd .. && "
		     "git add lib 2>/dev/null && " G "commit -qm lib"));
	r = run_json("echo c > c.txt && git add c.txt 2>/dev/null && git status --short >/dev/null 2>&1 && "
		     "echo done",
		     NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "done\n");
	ck_assert_msg(!violated(r, "lib") && !violated(r, ".git/index"), "an old gitlink refused");
	json_decref(r);
	out = host_sh("git ls-files -s");
	ck_assert_msg(strstr(out, "160000") && strstr(out, "c.txt"), "index: %s", out);
	free(out);
}
END_TEST

/* What was not merged back is named for a person with its control
 * characters escaped: a name the command chose cannot rewrite the
 * terminal's lines or title. */
START_TEST(test_dropped_names_escaped)
{
	char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(), (char *)"-C",
			 workdir, (char *)"-c",
			 (char *)"touch .git/\"$(printf 'evil\\033[2K\\033]0;T\\007x')\"", NULL };
	char *out = NULL, *err = NULL;

	git_repo();
	harness_capture(argv, &out, &err);
	ck_assert_msg(strstr(err, "not merged back"), "%s", err);
	ck_assert_msg(!strchr(err, '\033') && !strchr(err, '\007'), "raw escape: %s", err);
	ck_assert_msg(strstr(err, "evil\\x1b[2K"), "%s", err);
	free(out);
	free(err);
}
END_TEST

/* A placeholder .git (another ward's, covering a missing one while its
 * command runs, or left by a SIGKILLed ward) is no repository: no git
 * overlay is mounted over it (a kernel without overlayfs in user
 * namespaces would otherwise fail every command there). A real .git given
 * the placeholders' mode is still one. */
START_TEST(test_placeholder_not_a_repo)
{
	char path[4200], *out;
	json_t *r;

	snprintf(path, sizeof(path), "%s/.git", workdir);
	ck_assert_int_eq(mkdir(path, 01555), 0);
	ck_assert_int_eq(chmod(path, 01555), 0);
	r = run_json("grep -c ' - overlay ' /proc/self/mountinfo || true", NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "0\n");
	json_decref(r);
	/* ward may have taken the stale placeholder back (swept or pooled) */
	if (chmod(path, 0755) == 0)
		ck_assert_int_eq(rmdir(path), 0);
	git_repo();
	ck_assert_int_eq(chmod(path, 01555), 0);
	r = run_json("grep -c ' - overlay ' /proc/self/mountinfo || true", NULL);
	ck_assert_msg(atoi(json_string_value(json_object_get(r, "output"))) > 0, "no overlay: %s",
		      json_string_value(json_object_get(r, "output")));
	json_decref(r);
	ck_assert_int_eq(chmod(path, 0755), 0);
	out = host_sh("git status --porcelain | wc -l");
	free(out);
}
END_TEST

/* A ward killed while its command runs leaves its git overlay behind; the
 * next ward of the same user removes it. */
START_TEST(test_killed_swept)
{
	char shm[4200], cmd[128], marker[32], *out;
	/* as root, a memory limit that leaves most of /dev/shm free: the
	 * layers go there then (gitdir.c); another user's has no cgroup to
	 * hold one, and an option in its place that changes nothing */
	char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(),
			 (char *)(geteuid() == 0 ? "--memory=256M" : "--net=none"), (char *)"-C",
			 workdir, (char *)"-c", cmd, NULL };
	pid_t pid;
	int st;
	json_t *r;

	harness_private_mounts(true); /* a /dev/shm no other ward on the host uses */
	git_repo();
	/* a sleep of its own, told from any other on the host */
	snprintf(marker, sizeof(marker), "59.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "echo x > .git/junk; exec sleep %s", marker);
	/* where the run's git layers go: /dev/shm as root (with a cgroup to
	 * charge, whose limit cannot fill it), the state directory otherwise */
	if (geteuid() == 0)
		snprintf(shm, sizeof(shm), "/dev/shm/ward-git-%u", (unsigned)geteuid());
	else
		snprintf(shm, sizeof(shm), "%s/ward/runs", state);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execv(ward, argv);
		_exit(127);
	}
	/* until its run is there (the sandbox is up) */
	for (int i = 0; i < 6000; i++) {
		out = host_sh("ls -A %s 2>/dev/null | wc -l", shm);
		st = atoi(out);
		free(out);
		if (st > 0)
			break;
		usleep(10000);
	}
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	/* the sandbox notices its supervisor gone and ends; then nothing holds
	 * the run's lock */
	for (int i = 0; i < 6000 && harness_cmdline_alive("sleep ", marker); i++)
		usleep(10000);
	r = run_json("git status >/dev/null", NULL);
	json_decref(r);
	out = host_sh("ls -A %s 2>/dev/null | wc -l; ls .git | grep -c junk; true", shm);
	ck_assert_str_eq(out, "0\n0\n");
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("escape-git");
	TCase *tc = harness_tcase(s, "git", "userns devtools");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_direct_attacks);
	tcase_add_test(tc, test_overlay_apply_attacks);
	tcase_add_test(tc, test_worktree_pointers);
	tcase_add_test(tc, test_submodule_data_name);
	tcase_add_test(tc, test_gitfile_inside);
	tcase_add_test(tc, test_git_works_direct);
	tcase_add_test(tc, test_git_works_overlay);
	tcase_add_test(tc, test_nothing_left);
	tcase_add_test(tc, test_shm_not_filled);
	tcase_add_test(tc, test_rebase_exec_planted);
	tcase_add_test(tc, test_strategy_planted);
	tcase_add_test(tc, test_am_apply_opt_planted);
	tcase_add_test(tc, test_index_paths_planted);
	tcase_add_test(tc, test_existing_nested_repo);
	tcase_add_test(tc, test_gitlink_planted);
	tcase_add_test(tc, test_dropped_names_escaped);
	tcase_add_test(tc, test_placeholder_not_a_repo);
	tcase_add_test(tc, test_killed_swept);
	return harness_main(s);
}
