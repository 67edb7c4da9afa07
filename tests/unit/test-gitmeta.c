/* test-gitmeta.c — the allowlist of a git directory: what ordinary git work
 * writes may change, everything else (configuration, hooks, paths to other
 * git data, names git may read one day) may not. Pure. */
#include "harness.h"
#include "runtime/workdir/workdir-internal.h"

#include <stdio.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *const merged[] = {
	"HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD",
	"REBASE_HEAD", "BISECT_HEAD", "AUTO_MERGE", "index", "sharedindex.0123abcd",
	"index.stash.4242", "COMMIT_EDITMSG", "MERGE_MSG", "MERGE_MODE", "SQUASH_MSG",
	"TAG_EDITMSG", "packed-refs", "shallow", "gc.pid", "gc.log", "BISECT_LOG",
	"objects", "objects/ab", "objects/ab/cdef0123", "objects/pack/pack-1.pack",
	"objects/pack/pack-1.idx", "objects/pack/multi-pack-index", "objects/info",
	"objects/info/packs", "objects/info/commit-graph", "objects/info/commit-graphs/x.graph",
	"objects/ab/tmp_obj_XXXX", "refs", "refs/heads/main", "refs/heads/a/b", "refs/tags/v1",
	"refs/stash", "refs/remotes/origin/HEAD", "logs", "logs/HEAD", "logs/refs/heads/main",
	"logs/refs/stash", "rebase-merge", "rebase-merge/git-rebase-todo", "rebase-merge/done",
	"rebase-apply/0001", "sequencer/todo", "rr-cache/abc/preimage", "reftable/tables.list",
	"modules/lib/HEAD", "modules/lib/index", "modules/lib/refs/heads/main",
	"modules/lib/objects/ab/cd", "modules/a/b/c/HEAD", "modules/a/b/logs/HEAD",
	"modules/lib/objects/info/commit-graph", "modules/lib/objects/info/packs",
	"modules/x/modules/y/HEAD", "worktrees/wt/HEAD", "worktrees/wt/index",
	"worktrees/wt/logs/HEAD", "worktrees/wt/ORIG_HEAD", "worktrees/wt/rebase-merge/done",
};

static const char *const transient[] = {
	"index.lock", "HEAD.lock", "packed-refs.lock", "refs/heads/main.lock", "ORIG_HEAD.lock",
	"modules/lib/index.lock", "worktrees/wt/HEAD.lock", "next-index-42.lock",
};

static const char *const denied[] = {
	"", "modules", "worktrees", "config", "config.worktree", "config.lock", "commondir", "gitdir", "description",
	"hooks", "hooks/pre-commit", "hooks/fsmonitor-watchman", "info", "info/exclude",
	"info/attributes", "info/sparse-checkout", "info/grafts", "info/refs", "branches/x",
	"remotes/origin", "objects/info/alternates", "objects/info/http-alternates",
	"objects/info/unknown", "modules/lib", "modules/lib/config", "modules/lib/hooks/post-checkout",
	"modules/lib/info/exclude", "modules/lib/commondir", "modules/a/b/config",
	"modules/x/modules/y/config", "modules/HEAD/config", "modules/a/index/config",
	"modules/lib/objects/info/alternates", "worktrees/wt", "worktrees/wt/commondir",
	/* a submodule at vendor/logs (or lib/objects, deps/refs): its git
	 * directory's config, not a reflog of a submodule "vendor" */
	"modules/vendor/logs/config", "modules/a/objects/config",
	"modules/a/objects/hooks/post-checkout", "modules/deps/refs/config.worktree",
	"modules/x/rr-cache/info/attributes", "modules/a/logs/commondir",
	"worktrees/wt/gitdir", "worktrees/wt/locked", "worktrees/wt/config.worktree",
	"worktrees/wt/hooks/x", "HEAD/x", "index/config", "evil", "evil/config", "fsmonitor",
	"CONFIG", "Config", "head", "refs/heads/.git/config", "refs/.GIT", "logs/.git",
	"a_HEAD", "_HEAD", "lfs/objects/x", "unknown.lock", "hooks.lock", "/HEAD", "refs/../config",
	".lock", "refs/.lock",
};

START_TEST(test_classify)
{
	for (size_t i = 0; i < ARRAY_LEN(merged); i++)
		ck_assert_msg(ward_gitmeta_classify(merged[i]) == WARD_GITMETA_MERGE, "%s", merged[i]);
	for (size_t i = 0; i < ARRAY_LEN(transient); i++)
		ck_assert_msg(ward_gitmeta_classify(transient[i]) == WARD_GITMETA_TRANSIENT, "%s",
			      transient[i]);
	for (size_t i = 0; i < ARRAY_LEN(denied); i++)
		ck_assert_msg(ward_gitmeta_classify(denied[i]) == WARD_GITMETA_DENY, "'%s'",
			      denied[i]);
	ck_assert(ward_gitmeta_classify(NULL) == WARD_GITMETA_DENY);
}
END_TEST

START_TEST(test_in_workdir)
{
	static const char *const yes[] = {
		".git/commondir", ".git/config.worktree", ".git/info/exclude", ".git/evil",
		".git/modules/lib/config", ".git/worktrees/wt/gitdir", "sub/.git/config",
		"a/b/.git/hooks/x", "a/.GIT/commondir", "a/.Git/info/attributes",
		".git/objects/info/alternates", "x/.git/refs/.git/config",
	};
	static const char *const no[] = {
		".git", "sub/.git", ".git/", ".git/HEAD", ".git/refs/heads/x", "a/.git/index",
		".github/workflows/x.yml", ".gitignore", ".gitmodules", "src/git/config",
		"x.git/config", ".gitx/config", "config", "",
	};

	for (size_t i = 0; i < ARRAY_LEN(yes); i++)
		ck_assert_msg(ward_gitmeta_denied_in_workdir(yes[i]), "%s", yes[i]);
	for (size_t i = 0; i < ARRAY_LEN(no); i++)
		ck_assert_msg(!ward_gitmeta_denied_in_workdir(no[i]), "%s", no[i]);
}
END_TEST

/* A rebase's or a sequence's to-do list with a command line in it. */
START_TEST(test_todo)
{
	static const char runs[] = "pick 1 a\nbreak\n  exec id > /tmp/x\n";
	static const char runs_x[] = "pick 1 a\nx id\n";
	static const char quiet[] = "pick 1 a\n# exec in a comment\nedit 2 b\nexecute-not 3\n";

	ck_assert(ward_gitmeta_is_todo("rebase-merge/git-rebase-todo"));
	ck_assert(ward_gitmeta_is_todo(".git/rebase-merge/git-rebase-todo"));
	ck_assert(ward_gitmeta_is_todo("modules/lib/sequencer/todo"));
	ck_assert(!ward_gitmeta_is_todo("rebase-merge/done"));
	ck_assert(!ward_gitmeta_is_todo("refs/heads/sequencer/todox"));
	ck_assert(ward_gitmeta_todo_runs_code(runs, sizeof(runs) - 1));
	ck_assert(ward_gitmeta_todo_runs_code(runs_x, sizeof(runs_x) - 1));
	ck_assert(!ward_gitmeta_todo_runs_code(quiet, sizeof(quiet) - 1));
}
END_TEST

/* A rebase's or a sequence's strategy naming a program of the command's:
 * git runs `git merge-NAME`, a NAME with a '/' a path into the worktree. */
START_TEST(test_strategy)
{
	static const char *const ok[] = { "ort\n", "recursive", "ours\r\n", "octopus\n" };
	static const char *const bad[] = { "/x\n", "../x", "ort\n/x", "", "evil\n", "ort \n" };
	static const char opts_ok[] = "[options]\n\tstrategy = ort\n\tstrategy-option = theirs\n"
				      "\tedit = true\n";
	static const char *const opts_bad[] = {
		"[options]\n\tstrategy = /x\n",
		"[options] strategy = ort\n",
		"[options]\n\tSTRATEGY=/x\n",
		"[options]\n\tstrategy = \"ort\"\n",
		"[options]\n\tstrategy = ort /x\n",
		"[options]\n\tstrategy-option = x\n\tstrategy\n",
		"[options]\n\tstrategy = o\\\nrt\n",
	};

	ck_assert(ward_gitmeta_names_strategy("rebase-merge/strategy"));
	ck_assert(ward_gitmeta_names_strategy(".git/rebase-apply/strategy"));
	ck_assert(ward_gitmeta_names_strategy("modules/lib/sequencer/opts"));
	ck_assert(!ward_gitmeta_names_strategy("rebase-merge/strategy_opts"));
	ck_assert(!ward_gitmeta_names_strategy("rebase-merge/done"));
	for (size_t i = 0; i < ARRAY_LEN(ok); i++)
		ck_assert_msg(!ward_gitmeta_strategy_runs_code("rebase-merge/strategy", ok[i],
							       strlen(ok[i])),
			      "%s", ok[i]);
	for (size_t i = 0; i < ARRAY_LEN(bad); i++)
		ck_assert_msg(ward_gitmeta_strategy_runs_code("rebase-merge/strategy", bad[i],
							      strlen(bad[i])),
			      "%s", bad[i]);
	ck_assert(!ward_gitmeta_strategy_runs_code("sequencer/opts", opts_ok, sizeof(opts_ok) - 1));
	for (size_t i = 0; i < ARRAY_LEN(opts_bad); i++)
		ck_assert_msg(ward_gitmeta_strategy_runs_code("sequencer/opts", opts_bad[i],
							      strlen(opts_bad[i])),
			      "%s", opts_bad[i]);
}
END_TEST

/* An am's `git apply` options: only those `git am` passes on. */
START_TEST(test_apply_opt)
{
	static const char *const ok[] = {
		"", "\n", " '--whitespace=fix'\n", " '-C1' '-p2' '--reject'",
		" '--directory=a'\\''b' '--exclude=*.c' '--ignore-whitespace'\n",
	};
	static const char *const bad[] = {
		" '--build-fake-ancestor=/tmp/x'\n", " '--build-fake'", " '--whitespace'",
		" '--reject'x", " --reject", " '--reject", " '-C1' '--unsafe-paths'",
		" '--index-info' '--reject'", " '-R'",
	};

	for (size_t i = 0; i < ARRAY_LEN(ok); i++)
		ck_assert_msg(!ward_gitmeta_apply_opt_refused(ok[i], strlen(ok[i])), "%s", ok[i]);
	for (size_t i = 0; i < ARRAY_LEN(bad); i++)
		ck_assert_msg(ward_gitmeta_apply_opt_refused(bad[i], strlen(bad[i])), "%s", bad[i]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gitmeta");
	TCase *tc = harness_tcase(s, "allowlist", NULL);

	tcase_add_test(tc, test_classify);
	tcase_add_test(tc, test_in_workdir);
	tcase_add_test(tc, test_todo);
	tcase_add_test(tc, test_strategy);
	tcase_add_test(tc, test_apply_opt);
	return harness_main(s);
}
