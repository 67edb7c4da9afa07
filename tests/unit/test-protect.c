/* test-protect.c — the protected-path list, the policy's "workdir" key, and
 * change sets read from hand-made upper directories (whiteouts, opaque
 * directories) and applied, without a sandbox. */
#include "harness.h"
#include "ward/policy.h"
#include "ward/sandbox.h"
#include "ward/workdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static size_t strv_len(char **v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

static bool strv_has(char **v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

START_TEST(test_defaults_and_edits)
{
	struct ward_error *err = NULL;
	struct ward_protect *p = ward_protect_new(true, &err);
	char *dir = harness_tmpdir();
	char **r;

	ck_assert_ptr_nonnull(p);
	r = ward_protect_resolve(p, dir, &err);
	ck_assert_uint_eq(strv_len(r), 14);
	ck_assert(strv_has(r, ".git/hooks") && strv_has(r, ".git/config") && strv_has(r, ".envrc") &&
		  strv_has(r, ".mcp.json") && strv_has(r, ".vscode") && strv_has(r, ".pypirc"));
	ward_protect_strv_free(r);

	ck_assert_int_eq(ward_protect_add(p, "deploy//keys/", &err), 0);
	ck_assert_int_eq(ward_protect_allow(p, ".git", &err), 0); /* opens hooks and config */
	ck_assert_int_eq(ward_protect_allow(p, ".vscode", &err), 0);
	r = ward_protect_resolve(p, dir, &err);
	ck_assert(strv_has(r, "deploy/keys"));
	ck_assert(!strv_has(r, ".git/hooks") && !strv_has(r, ".git/config") &&
		  !strv_has(r, ".vscode"));
	ck_assert_uint_eq(strv_len(r), 12);
	ward_protect_strv_free(r);
	/* protecting again after opening */
	ck_assert_int_eq(ward_protect_add(p, ".vscode", &err), 0);
	r = ward_protect_resolve(p, dir, &err);
	ck_assert(strv_has(r, ".vscode"));
	ward_protect_strv_free(r);
	/* a part of a protected path cannot be opened alone */
	ck_assert_int_eq(ward_protect_allow(p, ".vscode/settings.json", &err), -1);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_ptr_nonnull(strstr(err->message, "inside protected '.vscode'"));
	ward_error_free(err);
	err = NULL;
	{
		static const char *const bad[] = { "", "/etc/passwd", "../x", "a/./b", "a/../b", ".",
						   "//" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ck_assert_int_eq(ward_protect_add(p, bad[i], &err), -1);
			ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
			ward_error_free(err);
			err = NULL;
		}
	}
	ward_protect_free(p);
	p = ward_protect_new(false, &err);
	r = ward_protect_resolve(p, dir, &err);
	ck_assert_uint_eq(strv_len(r), 0);
	ward_protect_strv_free(r);
	ward_protect_free(p);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_hooks_path)
{
	static const char *const cases[][2] = {
		{ "[core]\n\thooksPath = .husky\n", ".husky" },
		{ "[user]\n\thooksPath = no\n[CORE]\n  HooksPath=\"tools/hooks\" # x\n", "tools/hooks" },
		{ "[core]\n\thooksPath = a\n\thookspath = b/\n", "b" },
		{ "[core]\n\thooksPath = ~/hooks\n", NULL },
		{ "[core]\n\thooksPath = ../outside\n", NULL },
		{ "[core]\n\tbare = false\n", NULL },
	};
	struct ward_protect *p = ward_protect_new(true, NULL);
	char *dir = harness_tmpdir(), path[4200];

	snprintf(path, sizeof(path), "%s/.git", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f;
		char **r;

		snprintf(path, sizeof(path), "%s/.git/config", dir);
		f = fopen(path, "we");
		fputs(cases[i][0], f);
		fclose(f);
		r = ward_protect_resolve(p, dir, NULL);
		ck_assert_uint_eq(strv_len(r), cases[i][1] ? 15 : 14);
		if (cases[i][1])
			ck_assert_str_eq(r[14], cases[i][1]);
		ward_protect_strv_free(r);
	}
	/* an absolute one inside the workdir counts too */
	{
		FILE *f = fopen(path, "we");
		char **r;

		fprintf(f, "[core]\n\thooksPath = %s/.githooks\n", dir);
		fclose(f);
		r = ward_protect_resolve(p, dir, NULL);
		ck_assert(strv_has(r, ".githooks"));
		ward_protect_strv_free(r);
	}
	ward_protect_free(p);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_touches)
{
	char *v[] = { (char *)".git/hooks", (char *)".envrc", (char *)"a/b/c", NULL };

	ck_assert(ward_protect_touches(v, ".git/hooks"));
	ck_assert(ward_protect_touches(v, ".git/hooks/pre-commit"));
	ck_assert(ward_protect_touches(v, ".git"));      /* above: removing .git takes hooks */
	ck_assert(ward_protect_touches(v, "a"));
	ck_assert(ward_protect_touches(v, "a/b/c/d"));
	ck_assert(!ward_protect_touches(v, ".git/objects/ab"));
	ck_assert(!ward_protect_touches(v, ".git/hooksx"));
	ck_assert(!ward_protect_touches(v, ".envrc.example"));
	ck_assert(!ward_protect_touches(v, ".gitx"));
	ck_assert(!ward_protect_touches(v, "a/bc"));
	ck_assert(!ward_protect_touches(NULL, ".envrc"));
}
END_TEST

START_TEST(test_nested_git)
{
	struct ward_protect *p = ward_protect_new(true, NULL);

	ck_assert(ward_protect_nested_git(NULL, "sub/.git"));
	ck_assert(ward_protect_nested_git(NULL, "a/b/.git/config"));
	ck_assert(ward_protect_nested_git(NULL, "a/.git/hooks"));
	ck_assert(ward_protect_nested_git(NULL, "a/.git/hooks/post-checkout"));
	ck_assert(!ward_protect_nested_git(NULL, "a/.git/objects/ab/cd"));
	/* deny by default: a name git does not write in ordinary work */
	ck_assert(ward_protect_nested_git(NULL, "a/.git/configs"));
	ck_assert(ward_protect_nested_git(NULL, ".git/commondir"));
	ck_assert(ward_protect_nested_git(NULL, ".git/info/exclude"));
	ck_assert(!ward_protect_nested_git(NULL, ".git/refs/heads/main"));
	ck_assert(!ward_protect_nested_git(NULL, "a/.github/workflows/x.yml"));
	ck_assert(!ward_protect_nested_git(NULL, "a/.gitignore"));
	ck_assert(!ward_protect_nested_git(NULL, ".git/objects/x")); /* the top one is a path */
	ck_assert(!ward_protect_nested_git(NULL, ".git"));
	ck_assert_int_eq(ward_protect_allow(p, "vendor/x", NULL), 0);
	ck_assert(!ward_protect_nested_git(p, "vendor/x/.git"));
	ck_assert(ward_protect_nested_git(p, "vendor/y/.git"));
	ward_protect_free(p);
}
END_TEST

START_TEST(test_homes)
{
	struct ward_protect *p = ward_protect_new(true, NULL);
	char *dir = harness_tmpdir(), path[4200];
	char **r;

	ck_assert(!ward_protect_is_home(dir));
	snprintf(path, sizeof(path), "%s/alice", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/alice/.ssh", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/bob", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0); /* no marks: not a home */
	r = ward_protect_resolve(p, dir, NULL);
	ck_assert(strv_has(r, "alice/.bashrc") && strv_has(r, "alice/.ssh") &&
		  strv_has(r, "alice/.config/git"));
	ck_assert(!strv_has(r, ".bashrc") && !strv_has(r, "bob/.bashrc"));
	ward_protect_strv_free(r);
	snprintf(path, sizeof(path), "%s/.profile", dir);
	close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	ck_assert(ward_protect_is_home(dir));
	ck_assert_int_eq(ward_protect_allow(p, ".ssh", NULL), 0); /* applies to home entries */
	r = ward_protect_resolve(p, dir, NULL);
	ck_assert(strv_has(r, ".bashrc") && strv_has(r, ".gitconfig") && !strv_has(r, ".ssh"));
	ward_protect_strv_free(r);
	ck_assert(ward_protect_is_home("/root"));
	ck_assert(ward_protect_is_home("/home/someone"));
	ward_protect_free(p);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_mode_and_policy)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;
	enum ward_workdir_mode m;
	char *dir = harness_tmpdir();
	char **r;
	static const char good[] = "{\"workdir\": {\"mode\": \"overlay\", \"protect_defaults\": false, "
				   "\"protect\": [\"secrets\"], \"allow_write\": [\"x\"], "
				   "\"placeholders\": false}}";

	ck_assert_int_eq(ward_workdir_parse_mode("overlay", &m, &err), 0);
	ck_assert_int_eq(m, WARD_WORKDIR_OVERLAY);
	ck_assert_str_eq(ward_workdir_mode_name(m), "overlay");
	ck_assert_int_eq(ward_workdir_parse_mode("Overlay", &m, &err), -1);
	ck_assert_ptr_nonnull(strstr(err->message, "unknown workdir mode 'Overlay'"));
	ward_error_free(err);
	err = NULL;

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_policy_apply(good, strlen(good), "p.json", &cfg, &err), 0);
	ck_assert_int_eq(cfg.workdir_mode, WARD_WORKDIR_OVERLAY);
	ck_assert(cfg.no_placeholders);
	r = ward_protect_resolve(cfg.protect, dir, &err);
	ck_assert_uint_eq(strv_len(r), 1);
	ck_assert_str_eq(r[0], "secrets");
	ward_protect_strv_free(r);
	ward_config_release(&cfg);
	{
		static const char *const bad[][2] = {
			{ "{\"workdir\": {\"mod\": \"overlay\"}}", "workdir: unknown key \"mod\"" },
			{ "{\"workdir\": {\"mode\": \"copy\"}}", "unknown workdir mode 'copy'" },
			{ "{\"workdir\": {\"protect\": \".envrc\"}}", "workdir.protect: must be an array, got a string" },
			{ "{\"workdir\": {\"protect\": [\"../x\"]}}", "'../x'" },
			{ "{\"workdir\": {\"allow_write\": [1]}}", "workdir.allow_write: element 0" },
			{ "{\"workdir\": {\"protect_defaults\": \"no\"}}", "workdir.protect_defaults: must be a boolean, got a string" },
			{ "{\"workdir\": []}", "workdir: must be an object, got an array" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ward_config_init(&cfg);
			ck_assert_int_eq(ward_policy_apply(bad[i][0], strlen(bad[i][0]), "p.json", &cfg,
							   &err),
					 -1);
			ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
			ck_assert_msg(strstr(err->message, bad[i][1]) &&
					      strstr(err->message, "policy 'p.json'"),
				      "%s: %s", bad[i][0], err->message);
			ward_error_free(err);
			err = NULL;
			ward_config_release(&cfg);
		}
	}
	harness_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- change sets from hand-made upper directories ---------------------------------- */

static char *root, *upper, *lower;

static void cs_setup(void)
{
	root = harness_tmpdir();
	ck_assert_int_ge(asprintf(&upper, "%s/upper", root), 0);
	ck_assert_int_ge(asprintf(&lower, "%s/lower", root), 0);
	ck_assert_int_eq(mkdir(upper, 0755), 0);
	ck_assert_int_eq(mkdir(lower, 0755), 0);
}

static void cs_teardown(void)
{
	harness_rmtree(root);
	free(root);
	free(upper);
	free(lower);
}

static void put(const char *base, const char *rel, const char *text, mode_t mode)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void mk(const char *base, const char *rel)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void whiteout(const char *rel)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", upper, rel);
	ck_assert_msg(mknod(path, S_IFCHR | 0, makedev(0, 0)) == 0, "mknod: %s", strerror(errno));
}

static char *describe(const struct ward_changeset *cs)
{
	static const char *const k[] = { "added", "modified", "deleted", "mode", "replaced" };
	char *buf = calloc(1, 8192);
	size_t len = 0;

	for (size_t i = 0; i < ward_changeset_count(cs); i++) {
		const struct ward_change *c = ward_changeset_get(cs, i);

		len += (size_t)snprintf(buf + len, 8192 - len, "%s %s %lld %o;", k[c->kind], c->path,
					(long long)c->size, (unsigned)c->mode);
	}
	return buf;
}

START_TEST(test_scan_and_apply)
{
	struct ward_error *err = NULL;
	struct ward_changeset *cs;
	char *d, path[4200];
	struct stat st;

	/* the real tree */
	put(lower, "same", "s\n", 0644);
	put(lower, "mod", "old\n", 0644);
	put(lower, "gone", "g\n", 0644);
	put(lower, "chm", "c\n", 0644);
	mk(lower, "dir");
	put(lower, "dir/a", "a\n", 0644);
	mk(lower, "opq");
	put(lower, "opq/x", "x\n", 0644);
	put(lower, "opq/y", "y\n", 0644);
	put(lower, "f2d", "was a file\n", 0644);
	/* what a command did, as overlayfs records it */
	put(upper, "same", "s\n", 0644);    /* copied up, unchanged: no entry */
	put(upper, "mod", "new!\n", 0600);
	whiteout("gone");
	put(upper, "chm", "c\n", 0755);
	whiteout("dir");
	whiteout("never-there");            /* a whiteout over nothing: no entry */
	mk(upper, "opq");
	snprintf(path, sizeof(path), "%s/opq", upper);
	ck_assert_int_eq(setxattr(path, "user.overlay.opaque", "y", 1, 0), 0);
	put(upper, "opq/y", "y\n", 0644);
	mk(upper, "f2d");
	put(upper, "f2d/in", "in\n", 0644);
	mk(upper, "new");
	mk(upper, "new/deep");
	put(upper, "new/deep/file", "deep\n", 0640);
	snprintf(path, sizeof(path), "%s/link", upper);
	ck_assert_int_eq(symlink("new/deep/file", path), 0);

	cs = ward_changeset_scan(upper, lower, &err);
	ck_assert_ptr_nonnull(cs);
	d = describe(cs);
	ck_assert_str_eq(d, "mode chm 2 755;deleted dir -1 0;deleted dir/a -1 0;replaced f2d 0 755;"
			    "added f2d/in 3 644;deleted gone -1 0;added link 13 777;"
			    "modified mod 5 600;added new 0 755;added new/deep 0 755;"
			    "added new/deep/file 5 640;deleted opq/x -1 0;");
	free(d);
	ck_assert_int_eq(ward_changeset_apply(cs, NULL, &err), 0);
	ward_changeset_free(cs);
	/* the real tree now reads as the merged view did */
	cs = ward_changeset_scan(upper, lower, &err);
	d = describe(cs);
	/* only whiteouts of what no longer exists remain: nothing to report */
	ck_assert_str_eq(d, "");
	free(d);
	ward_changeset_free(cs);
	snprintf(path, sizeof(path), "%s/mod", lower);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	snprintf(path, sizeof(path), "%s/opq/x", lower);
	ck_assert_int_ne(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/f2d/in", lower);
	ck_assert_int_eq(access(path, F_OK), 0);
}
END_TEST

START_TEST(test_apply_refusals)
{
	struct ward_error *err = NULL;
	struct ward_changeset *cs;
	char path[4200], out[4200];

	/* protected: refused whole, nothing applied */
	put(upper, "fine", "f\n", 0644);
	put(upper, ".envrc", "evil\n", 0644);
	cs = ward_changeset_scan(upper, lower, &err);
	ck_assert_int_eq(ward_changeset_apply(cs, NULL, &err), -1);
	ck_assert_int_eq(err->kind, WARD_ERR_NOT_AUTHORIZED);
	ck_assert_str_eq(err->rule, "protected-path");
	ck_assert_ptr_nonnull(strstr(err->message, "'.envrc'"));
	ward_error_free(err);
	err = NULL;
	snprintf(path, sizeof(path), "%s/fine", lower);
	ck_assert_int_ne(access(path, F_OK), 0);
	ward_changeset_free(cs);
	snprintf(path, sizeof(path), "%s/.envrc", upper);
	unlink(path);

	/* a directory of the real tree swapped for a link after the scan: the
	 * apply must not follow it out of the workdir */
	mk(lower, "sub");
	mk(upper, "sub");
	put(upper, "sub/x", "x\n", 0644);
	cs = ward_changeset_scan(upper, lower, &err);
	ck_assert_ptr_nonnull(cs);
	snprintf(path, sizeof(path), "%s/sub", lower);
	ck_assert_int_eq(rmdir(path), 0);
	snprintf(out, sizeof(out), "%s/outside", root);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	ck_assert_int_eq(symlink(out, path), 0);
	ck_assert_int_eq(ward_changeset_apply(cs, NULL, &err), -1);
	ck_assert_int_eq(err->code, ELOOP);
	ward_error_free(err);
	snprintf(path, sizeof(path), "%s/outside/x", root);
	ck_assert_int_ne(access(path, F_OK), 0);
	ward_changeset_free(cs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("protect");
	TCase *list = harness_tcase(s, "list", NULL);
	TCase *sets = harness_tcase(s, "changesets", "root");

	tcase_add_test(list, test_defaults_and_edits);
	tcase_add_test(list, test_touches);
	tcase_add_test(list, test_hooks_path);
	tcase_add_test(list, test_nested_git);
	tcase_add_test(list, test_homes);
	tcase_add_test(list, test_mode_and_policy);
	/* whiteouts are character devices 0/0: mknod needs root here */
	tcase_add_checked_fixture(sets, cs_setup, cs_teardown);
	tcase_add_test(sets, test_scan_and_apply);
	tcase_add_test(sets, test_apply_refusals);
	return harness_main(s);
}
