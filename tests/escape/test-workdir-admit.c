/* test-workdir-admit.c — hostile probes: a workdir the agent chooses (a JSON
 * request, ward serve's session.create and MCP tools) must lie under the
 * allowed roots after symbolic links are resolved, and no workdir however
 * given may be a system directory, another user's home, a parent of a mask or
 * of a home, or a home itself, unless the person says so on the command line.
 * Every probe's command would print a marker if it ran. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *start; /* the directory ward is started in: the default root */
static char *ward;
static char marker[64];

static void setup(void)
{
	char path[PATH_MAX];

	ward = harness_path("ward");
	start = harness_tmpdir();
	snprintf(marker, sizeof(marker), "RAN-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/proj", start);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/link-etc", start);
	ck_assert_int_eq(symlink("/etc", path), 0);
	snprintf(path, sizeof(path), "%s/link-cron", start);
	ck_assert_int_eq(symlink("/etc/cron.d", path), 0);
	snprintf(path, sizeof(path), "%s/link-up", start);
	ck_assert_int_eq(symlink("..", path), 0);
	snprintf(path, sizeof(path), "%s/home", start);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/home/project", start);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	/* ward's own state and policy stay where tests/run.sh put them; the
	 * caller's home (for the home rule) is made up here */
	snprintf(path, sizeof(path), "%s/home", start);
	setenv("HOME", path, 1);
	ck_assert_int_eq(chdir(start), 0);
}

static void teardown(void)
{
	if (chdir("/") == 0 && start)
		harness_rmtree(start);
	free(start);
	free(ward);
}

/* ward run --json [extra...] with {"command": "echo MARKER", "workdir": wd} */
static json_t *run_json(const char *wd, const char *const *extra)
{
	char *argv[16], *out = NULL, *req;
	json_t *o, *r;
	int n = 0;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)harness_fences_policy_opt();
	argv[n++] = (char *)"--json";
	argv[n++] = (char *)"--sandbox=off"; /* the rules hold in every mode */
	for (; extra && *extra && n < 15; extra++)
		argv[n++] = (char *)*extra;
	argv[n] = NULL;
	r = json_pack("{s:s, s:s}", "command", "", "workdir", wd);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "echo %s", marker);
		json_object_set_new(r, "command", json_string(cmd));
	}
	req = json_dumps(r, 0);
	json_decref(r);
	harness_capture_input(argv, req, &out, NULL);
	free(req);
	o = json_loads(out, 0, NULL);
	ck_assert_msg(o != NULL, "not JSON: %s", out);
	free(out);
	return o;
}

static void refused(const char *wd, const char *rule, const char *const *extra)
{
	json_t *o = run_json(wd, extra);
	json_t *e = json_object_get(o, "error");
	const char *output = json_string_value(json_object_get(o, "output"));

	ck_assert_msg(output && !strstr(output, marker), "workdir '%s': the command ran", wd);
	ck_assert_msg(json_is_object(e), "workdir '%s' admitted", wd);
	ck_assert_str_eq(json_string_value(json_object_get(e, "kind")), "NotAuthorized");
	ck_assert_msg(strcmp(json_string_value(json_object_get(e, "rule")), rule) == 0,
		      "workdir '%s': rule %s, not %s (%s)", wd,
		      json_string_value(json_object_get(e, "rule")), rule,
		      json_string_value(json_object_get(e, "message")));
	json_decref(o);
}

static void admitted(const char *wd, const char *const *extra)
{
	json_t *o = run_json(wd, extra);

	ck_assert_msg(json_is_null(json_object_get(o, "error")), "workdir '%s': %s", wd,
		      json_string_value(json_object_get(json_object_get(o, "error"), "message")));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(o, "output")), marker));
	json_decref(o);
}

static const char *dirname_of(const char *p)
{
	static char d[PATH_MAX];

	snprintf(d, sizeof(d), "%s", p);
	if (strrchr(d, '/') && strrchr(d, '/') != d)
		*strrchr(d, '/') = '\0';
	return d;
}

static char *in_start(const char *rel)
{
	char *p;

	ck_assert_int_ge(asprintf(&p, "%s/%s", start, rel), 0);
	return p;
}

START_TEST(test_request_system_dirs)
{
	static const char *const sys[] = { "/etc", "/etc/cron.d", "/usr/local", "/var/lib",
					   "/boot", "/run", "/var/spool" };
	static const char *const trick[] = { "link-etc", "link-cron", "link-etc/cron.d",
					     "proj/../../../../../../etc", "proj/../link-etc",
					     "link-up/../etc" };

	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
		struct stat st;

		if (stat(sys[i], &st) == 0)
			refused(sys[i], "workdir-system", NULL);
	}
	refused("/", "workdir-system", NULL);
	/* symbolic links and ".." under the allowed root lead out of it */
	for (size_t i = 0; i < sizeof(trick) / sizeof(trick[0]); i++) {
		char *p = in_start(trick[i]);
		struct stat st;

		if (stat(p, &st) == 0)
			refused(p, "workdir-system", NULL);
		free(p);
	}
	/* even a root the person added does not open a system directory */
	{
		const char *extra[] = { "--workdir-root", "/etc", NULL };

		refused("/etc/cron.d", "workdir-system", extra);
	}
}
END_TEST

START_TEST(test_request_roots)
{
	char *other = harness_tmpdir(), *p;
	const char *extra[] = { "--workdir-root", other, NULL };

	/* a sibling of the start directory: outside the default root */
	refused(other, "workdir-outside-roots", NULL);
	/* the start's parent: a shared temporary directory ($TMPDIR=/tmp),
	 * or (another $TMPDIR) a directory holding the caller's home made up
	 * in the start, a rule judged before the roots */
	p = in_start("link-up");
	refused(p, strcmp(dirname_of(start), "/tmp") == 0 ? "workdir-system" :
							      "workdir-above-home",
		NULL);
	free(p);
	p = in_start("proj");
	admitted(p, NULL);
	free(p);
	p = in_start("proj/../proj");
	admitted(p, NULL);
	free(p);
	/* the start directory holds the caller's home (made up in setup) */
	refused(start, "workdir-above-home", NULL);
	/* the person adds a root */
	admitted(other, extra);
	/* the person's own -C is one too */
	{
		const char *c[] = { "-C", other, NULL };

		admitted(other, c);
	}
	harness_rmtree(other);
	free(other);
}
END_TEST

/* A git directory as the workdir, or a directory inside one: its config and
 * hooks are the workdir's top (or above it), not a protected .git/config,
 * so the command would write what the host's next git in the repository
 * runs (core.fsmonitor, a hook). The request names the checkout's .git,
 * its hooks, a bare repository, a separate git directory, or a link to
 * one; none is admitted, from a request or from -C; the checkout itself
 * is, and the person may allow any with --allow-workdir-anywhere. */
START_TEST(test_request_gitdir)
{
	static const char *const dirs[] = {
		"repo/.git/objects", "repo/.git/refs", "repo/.git/hooks", "bare.git/objects",
		"bare.git/refs",     "bare.git/hooks", "gd/objects",	  "gd/refs",
	};
	static const char *const wds[] = { "repo/.git", "repo/.git/hooks", "bare.git",
					   "bare.git/hooks", "gd", "link-gitdir" };
	const char *anywhere[] = { "--allow-workdir-anywhere", NULL };
	char path[PATH_MAX], *p;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", start, dirs[i]);
		for (char *c = path + strlen(start) + 1; (c = strchr(c, '/')); c++) {
			*c = '\0';
			ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
			*c = '/';
		}
		ck_assert_int_eq(mkdir(path, 0755), 0);
	}
	for (int i = 0; i < 3; i++) {
		static const char *const heads[] = { "repo/.git/HEAD", "bare.git/HEAD", "gd/HEAD" };
		int fd;

		snprintf(path, sizeof(path), "%s/%s", start, heads[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, "ref: refs/heads/main\n", 21), 21);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/link-gitdir", start);
	ck_assert_int_eq(symlink("repo/.git", path), 0);
	for (size_t i = 0; i < sizeof(wds) / sizeof(*wds); i++) {
		const char *c[] = { "-C", NULL, NULL };

		p = in_start(wds[i]);
		refused(p, "workdir-gitdir", NULL);
		/* the person's -C too: a root, still no workdir */
		c[1] = p;
		refused(p, "workdir-gitdir", c);
		free(p);
	}
	p = in_start("repo");
	admitted(p, NULL);
	free(p);
	p = in_start("repo/.git");
	admitted(p, anywhere);
	free(p);
}
END_TEST

/* ward started in the caller's home (an agent host's server, the default
 * root): a request naming one of its dot entries or bin as the workdir
 * (~/.config/git, whose config is git's global one; ~/.ssh; ~/.local/bin,
 * ~/bin on PATH) would write there what an allowed home keeps read-only.
 * Refused, from a request and from -C; a project in the home is fine. */
START_TEST(test_request_home_entries)
{
	static const char *const entries[] = { "home/.config/git", "home/.ssh", "home/.local/bin",
					       "home/bin", "home/.config" };
	const char *anywhere[] = { "--allow-workdir-anywhere", NULL };
	char path[PATH_MAX], *p;

	for (size_t i = 0; i < sizeof(entries) / sizeof(*entries); i++) {
		snprintf(path, sizeof(path), "%s/%s", start, entries[i]);
		for (char *c = path + strlen(start) + 1; (c = strchr(c, '/')); c++) {
			*c = '\0';
			ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
			*c = '/';
		}
		ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
	}
	/* the home is the start directory, the default root */
	snprintf(path, sizeof(path), "%s/home", start);
	ck_assert_int_eq(chdir(path), 0);
	for (size_t i = 0; i < sizeof(entries) / sizeof(*entries); i++) {
		const char *c[] = { "-C", NULL, NULL };

		p = in_start(entries[i]);
		refused(p, "workdir-home-entry", NULL);
		c[1] = p;
		refused(p, "workdir-home-entry", c);
		free(p);
	}
	p = in_start("home/project");
	admitted(p, NULL);
	free(p);
	p = in_start("home/.config/git");
	admitted(p, anywhere);
	free(p);
	ck_assert_int_eq(chdir(start), 0);
}
END_TEST

/* ward's state directory under an allowed root (XDG_STATE_HOME in the
 * directory ward was started in): a request naming it, or a directory in
 * it, as the workdir would have the command rewrite kept change sets, the
 * rate limit's state and the placeholders' records. Refused, sandboxed. */
START_TEST(test_request_state_dir)
{
	static const char *const wds[] = { "state/ward", "state/ward/runs" };
	char state[PATH_MAX], *saved = getenv("XDG_STATE_HOME") ? strdup(getenv("XDG_STATE_HOME")) :
								    NULL;

	snprintf(state, sizeof(state), "%s/state", start);
	setenv("XDG_STATE_HOME", state, 1);
	{
		char *p = in_start("proj"), *out = NULL;
		char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(), (char *)"-C",
				 p, (char *)"-c", (char *)"true", NULL };

		harness_capture(argv, &out, NULL);
		free(out);
		free(p);
	}
	for (size_t i = 0; i < sizeof(wds) / sizeof(*wds); i++) {
		char *p = in_start(wds[i]), *out = NULL, *req, *argv[] = {
			ward, (char *)"run", (char *)harness_fences_policy_opt(), (char *)"--json", NULL
		};
		json_t *r = json_pack("{s:s, s:s}", "command", "", "workdir", p), *o;

		json_object_set_new(r, "command", json_sprintf("echo %s", marker));
		req = json_dumps(r, 0);
		json_decref(r);
		harness_capture_input(argv, req, &out, NULL);
		o = json_loads(out, 0, NULL);
		ck_assert_msg(o != NULL, "not JSON: %s", out);
		ck_assert_msg(!strstr(json_string_value(json_object_get(o, "output")), marker),
			      "workdir '%s': the command ran", p);
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"),
								   "rule")),
				 "workdir-state");
		json_decref(o);
		free(out);
		free(req);
		free(p);
	}
	if (saved)
		setenv("XDG_STATE_HOME", saved, 1);
	else
		unsetenv("XDG_STATE_HOME");
	free(saved);
}
END_TEST

START_TEST(test_request_homes)
{
	char *home = in_start("home"), *proj = in_start("home/project");
	const char *allow[] = { "--allow-home-workdir", NULL };

	refused(home, "workdir-home", NULL);
	admitted(proj, NULL);
	admitted(home, allow);
	/* another user's home: /root for anyone but root; for root a home of
	 * its own making in /home */
	if (getuid() != 0) {
		refused("/root", "workdir-other-home", NULL);
		refused("/root", "workdir-other-home", allow);
	} else {
		char other[PATH_MAX], sub[PATH_MAX + 8];
		struct stat st;

		refused("/root", "workdir-home", NULL); /* root's own */
		if (stat("/home", &st) == 0) {
			snprintf(other, sizeof(other), "/home/ward-admit-%d", (int)getpid());
			snprintf(sub, sizeof(sub), "%s/src", other);
			ck_assert_int_eq(mkdir(other, 0755), 0);
			ck_assert_int_eq(mkdir(sub, 0755), 0);
			{
				const char *r[] = { "--workdir-root", "/home", NULL };

				refused(other, "workdir-other-home", r);
				refused(sub, "workdir-other-home", r);
				refused("/home", "workdir-above-home", r);
			}
			rmdir(sub);
			rmdir(other);
		}
	}
	free(home);
	free(proj);
}
END_TEST

/* The person's -C too: a system directory or a home needs their word. */
START_TEST(test_cli_workdir)
{
	char *home = in_start("home");
	char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(),
			 (char *)"--sandbox=off", (char *)"-C", (char *)"/etc/cron.d",
			 (char *)"-c", marker, NULL, NULL };
	char *out = NULL, *err = NULL;
	int st;

	argv[7] = (char *)"true";
	st = harness_capture(argv, &out, &err);
	ck_assert_int_eq(WEXITSTATUS(st), 125);
	ck_assert_ptr_nonnull(strstr(err, "rule workdir-system"));
	free(out);
	free(err);
	argv[5] = home;
	st = harness_capture(argv, &out, &err);
	ck_assert_int_eq(WEXITSTATUS(st), 125);
	ck_assert_ptr_nonnull(strstr(err, "rule workdir-home"));
	free(out);
	free(err);
	/* the current directory, when no -C is given */
	ck_assert_int_eq(chdir(home), 0);
	argv[4] = (char *)"--timeout=5";
	argv[5] = (char *)"--timeout=5";
	st = harness_capture(argv, &out, &err);
	ck_assert_int_eq(WEXITSTATUS(st), 125);
	ck_assert_ptr_nonnull(strstr(err, "rule workdir-home"));
	free(out);
	free(err);
	/* the person's word */
	argv[4] = (char *)"--allow-home-workdir";
	st = harness_capture(argv, &out, &err);
	ck_assert_msg(WEXITSTATUS(st) == 0, "%s", err);
	free(out);
	free(err);
	ck_assert_int_eq(chdir(start), 0);
	argv[4] = (char *)"--allow-workdir-anywhere";
	argv[5] = (char *)"-C/etc/cron.d";
	st = harness_capture(argv, &out, &err);
	ck_assert_msg(WEXITSTATUS(st) == 0, "%s", err);
	free(out);
	free(err);
	free(home);
}
END_TEST

/* ward serve: session.create and the MCP tools, as an agent would call them. */
START_TEST(test_serve)
{
	char *argv[] = { ward, (char *)"serve", (char *)"--no-policy", (char *)"--sandbox=off", NULL };
	char *link = in_start("proj/link-etc"), *out = NULL, *in = NULL, *line, *save = NULL;
	int n_seen = 0;

	/* started in start/proj: the default session's workdir, and the root */
	ck_assert_int_eq(symlink("/etc", link), 0);
	ck_assert_int_eq(chdir("proj"), 0);

	ck_assert_int_ge(
		asprintf(&in,
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
			 "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
			 "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.create\",\"params\":{"
			 "\"workdir\":\"/etc\"}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session.create\",\"params\":{"
			 "\"workdir\":\"%s\"}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
			 "\"name\":\"session_create\",\"arguments\":{\"workdir\":\"/etc/cron.d\"}}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
			 "\"name\":\"session_create\",\"arguments\":{\"workdir\":\"/\"}}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{"
			 "\"name\":\"shell\",\"arguments\":{\"command\":\"echo %s\","
			 "\"workdir\":\"/etc\"}}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
			 "\"name\":\"shell\",\"arguments\":{\"command\":\"echo %s\","
			 "\"workdir\":\"%s\"}}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{"
			 "\"name\":\"cd\",\"arguments\":{\"dir\":\"/etc\"}}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"session.create\",\"params\":{"
			 "\"workdir\":\"%s/home\"}}\n"
			 "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"session.create\",\"params\":{"
			 "\"workdir\":\"%s/proj\"}}\n",
			 link, marker, marker, link, start, start),
		0);
	harness_capture_input(argv, in, &out, NULL);
	ck_assert_ptr_nonnull(out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *r = json_loads(line, 0, NULL);
		json_int_t id;
		json_t *res, *err;

		ck_assert_msg(r != NULL, "not JSON: %s", line);
		id = json_integer_value(json_object_get(r, "id"));
		res = json_object_get(r, "result");
		err = json_object_get(r, "error");
		n_seen++;
		switch (id) {
		case 2:
		case 3:
		case 9: { /* JSON-RPC: an error naming the rule */
			const char *msg = json_string_value(json_object_get(err, "message"));

			ck_assert_msg(err && msg, "id %d admitted: %s", (int)id, line);
			ck_assert_msg(strstr(msg, id == 9 ? "rule workdir-home" : "rule workdir-system"),
				      "%s", line);
			break;
		}
		case 8: { /* the cd runs in the sandbox; the session does not follow it */
			json_t *sc = json_object_get(res, "structuredContent");

			ck_assert_msg(json_is_string(json_object_get(sc, "cwd_refused")), "%s", line);
			ck_assert_str_eq(json_string_value(json_object_get(sc, "cwd_refused")), "/etc");
			ck_assert_ptr_null(strstr(json_string_value(json_object_get(sc, "cwd")), "/etc"));
			break;
		}
		case 4:
		case 5:
		case 6:
		case 7: { /* MCP: a tool error the model sees, nothing run */
			const char *text = json_string_value(json_object_get(
				json_array_get(json_object_get(res, "content"), 0), "text"));

			ck_assert_msg(json_is_true(json_object_get(res, "isError")), "id %d: %s",
				      (int)id, line);
			ck_assert_msg(text && !strstr(text, marker), "%s", line);
			ck_assert_ptr_null(strstr(json_string_value(json_object_get(
							  json_object_get(res, "structuredContent"),
							  "output")) ?: "",
						  marker));
			if (id == 4 || id == 5)
				ck_assert_msg(strstr(text, "rule workdir-system"), "%s", line);
			if (id == 6 || id == 7)
				ck_assert_msg(strstr(text, "rule workdir-outside-session"), "%s", line);
			break;
		}
		case 10:
			ck_assert_msg(res && !err, "a workdir under the root refused: %s", line);
			break;
		default:
			break;
		}
		json_decref(r);
	}
	ck_assert_int_ge(n_seen, 10);
	free(out);
	free(in);
	free(link);
}
END_TEST

static void write_at(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", start, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *read_at(const char *rel)
{
	char path[PATH_MAX], buf[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", start, rel);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strdup(buf);
}

static bool exists_at(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", start, rel);
	return lstat(path, &st) == 0;
}

/* A home admitted by the person: every dot entry at its top, existing or
 * not, and bin stay read-only; the rest is writable. */
START_TEST(test_home_protected)
{
	static const char *const planted[] = {
		"home/.bash_aliases", "home/.vimrc",	 "home/.inputrc",  "home/.gdbinit",
		"home/.gnupg",	      "home/.cargo",	 "home/.bin",	   "home/.xinitrc",
		"home/.ward-new-dot", "home/bin",	 "home/newfile",
	};
	char *home = in_start("home"), *out = NULL, *err = NULL, *s;
	char *argv[] = { ward,
			 (char *)"run",
			 (char *)harness_fences_policy_opt(),
			 (char *)"-C",
			 home,
			 (char *)"--allow-home-workdir",
			 (char *)"--allow-write",
			 (char *)".cache",
			 (char *)"-c",
			 (char *)"echo evil >> .bashrc; echo evil > .profile; echo x > .bash_aliases; "
				 "echo x > .vimrc; echo x > .inputrc; echo x > .gdbinit; mkdir .gnupg; "
				 "mkdir -p .cargo/bin && echo x > .cargo/bin/git; mkdir .bin; "
				 "echo x > .xinitrc; echo x > .ward-new-dot; mkdir bin; echo x > bin/git; "
				 "echo x > .config/autostart.desktop; echo x > .local/evil; "
				 "mv .config .c2; rm -rf .local; echo x > newfile; "
				 "echo ok >> notes; echo ok > project/f; echo ok > .cache/c; "
				 "echo done",
			 NULL };
	int st;

	ck_assert_int_eq(mkdir("home/.config", 0755), 0);
	ck_assert_int_eq(mkdir("home/.local", 0755), 0);
	ck_assert_int_eq(mkdir("home/.cache", 0755), 0);
	write_at("home/.bashrc", "rc\n");
	write_at("home/.profile", "profile\n");
	write_at("home/notes", "n\n");
	st = harness_capture(argv, &out, &err);
	ck_assert_msg(WEXITSTATUS(st) == 0, "%s", err);
	ck_assert_str_eq(out, "done\n");
	free(out);
	free(err);
	for (size_t i = 0; i < sizeof(planted) / sizeof(planted[0]); i++)
		ck_assert_msg(!exists_at(planted[i]), "'%s' was planted", planted[i]);
	ck_assert_str_eq((s = read_at("home/.bashrc")), "rc\n");
	free(s);
	ck_assert_str_eq((s = read_at("home/.profile")), "profile\n");
	free(s);
	ck_assert(exists_at("home/.config") && exists_at("home/.local") &&
		  !exists_at("home/.c2") && !exists_at("home/.config/autostart.desktop") &&
		  !exists_at("home/.local/evil"));
	/* the rest works */
	ck_assert_str_eq((s = read_at("home/notes")), "n\nok\n");
	free(s);
	ck_assert_str_eq((s = read_at("home/project/f")), "ok\n");
	free(s);
	ck_assert_str_eq((s = read_at("home/.cache/c")), "ok\n");
	free(s);
	free(home);
}
END_TEST

/* A subdirectory of the home is an ordinary workdir. */
START_TEST(test_home_subdir_plain)
{
	char *proj = in_start("home/project"), *out = NULL, *s;
	char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(), (char *)"-C",
			 proj, (char *)"-c", (char *)"echo x > new && mkdir d && echo done", NULL };

	ck_assert_int_eq(WEXITSTATUS(harness_capture(argv, &out, NULL)), 0);
	ck_assert_str_eq(out, "done\n");
	free(out);
	ck_assert_str_eq((s = read_at("home/project/new")), "x\n");
	free(s);
	free(proj);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workdir-admit");
	TCase *tc = harness_tcase(s, "admit", NULL);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_request_system_dirs);
	tcase_add_test(tc, test_request_roots);
	tcase_add_test(tc, test_request_gitdir);
	tcase_add_test(tc, test_request_home_entries);
	tcase_add_test(tc, test_request_homes);
	tcase_add_test(tc, test_cli_workdir);
	tcase_add_test(tc, test_serve);
	tc = harness_tcase(s, "home", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_home_protected);
	tcase_add_test(tc, test_home_subdir_plain);
	tcase_add_test(tc, test_request_state_dir);
	return harness_main(s);
}
