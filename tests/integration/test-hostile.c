/* test-hostile.c — bad input at every entry point of the CLI: options with
 * missing, empty, garbage or overflowing values, malformed or oversized JSON
 * requests, broken policy files, bad change set names, a server fed garbage.
 * Each case must exit with the expected status and an error naming what was
 * wrong, and leave nothing behind: no process (this test is a subreaper, so
 * an orphan would become its child), no cgroup of the ward that ran, no file
 * in its TMPDIR, no mount of the test's directories. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGS 16

/* input generators for what cannot be written as a literal */
enum gen { GEN_NONE, GEN_DEPTH, GEN_2MIB, GEN_LONG_CMD, GEN_FIT_CMD, GEN_LONG_WORD };

struct hcase {
	const char *argv[MAX_ARGS]; /* after "ward"; "@WD" the workdir, "@POL" the policy
				     * file, "@FIFO" a FIFO nobody writes, "@GEN" the input */
	const char *input;          /* stdin (NULL: /dev/null) */
	size_t input_len;           /* 0: strlen(input) */
	enum gen gen;
	const char *policy; /* written to @POL */
	size_t policy_len;
	int status;
	char where; /* 'e': stderr, 'o': stdout */
	const char *expect;
};

#define REQ(text, msg) { { "run", "--json" }, text, 0, GEN_NONE, NULL, 0, 125, 'o', msg }
#define POL(text, msg) { { "run", "--policy", "@POL", "-c", "true" }, NULL, 0, GEN_NONE, \
			 text, 0, 125, 'e', msg }

static const struct hcase refused[] = {
	/* the command line */
	{ { NULL }, NULL, 0, 0, NULL, 0, 125, 'e', "ward: no command given\nusage: ward COMMAND" },
	{ { "bogus" }, NULL, 0, 0, NULL, 0, 125, 'e', "unknown command 'bogus'" },
	{ { "run", "--bogus" }, NULL, 0, 0, NULL, 0, 125, 'e', "unknown option '--bogus'" },
	{ { "run", "--timeout", "99999999999", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "timeout must be at most 604800 seconds, got '99999999999'" },
	{ { "run", "--timeout", "-1", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "timeout must be at least 1 second, got '-1'" },
	{ { "run", "--timeout", "1x", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "timeout '1x' is not a number of seconds" },
	{ { "run", "--timeout", "", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "timeout is empty" },
	{ { "run", "--memory", "1e99", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "--memory: '1e99' has an unknown unit" },
	{ { "run", "--memory", "99999999999999999999T", "-c", "true" }, NULL, 0, 0, NULL, 0, 125,
	  'e', "--memory: '99999999999999999999T' is too large" },
	{ { "run", "--memory", "", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "--memory: the size is empty" },
	{ { "run", "--pids", "-5", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "--pids: '-5' is negative" },
	{ { "run", "--cpus", "nan", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "--cpus: 'nan' is not a number of CPUs" },
	{ { "run", "--allow-host", "", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "--allow-host: host rule is empty" },
	{ { "run", "--allow-port", "70000", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "--allow-port: port '70000' must be 1 to 65535" },
	{ { "run", "--bind", "/nonexistent-ward-hostile", "/x", "-c", "true" }, NULL, 0, 0, NULL,
	  0, 125, 'e', "bind source '/nonexistent-ward-hostile': No such file or directory" },
	{ { "run", "--tmpfs", "relative", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "tmpfs target 'relative' is not an absolute path" },
	{ { "run", "--tmpfs", "/proc", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "tmpfs target '/proc' is not allowed" },
	{ { "run", "-C", "/etc/passwd", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "workdir '/etc/passwd': Not a directory" },
	{ { "run", "-C", "/nonexistent\nx", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "workdir '/nonexistent\\nx': No such file or directory" },
	{ { "run", "--hostname", "a b/c", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "hostname 'a b/c' is not valid" },
	{ { "run", "--namespaces", "", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "--namespaces: the list is empty" },
	{ { "run", "--namespaces", "user,,pid", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "unknown namespace ''" },
	{ { "run", "--setenv", "A\nB=1", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "setenv 'A\\nB': not a valid variable name" },
	{ { "run", "--protect", "../../etc", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "protected path '../../etc' must be a path inside the workdir" },
	{ { "run", "-C", "", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e', "workdir is empty" },
	{ { "run", "--ro-bind", "/etc", "", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "ro-bind target '' is not an absolute path" },
	{ { "run", "--bind", "/etc", "/etc/../proc/x", "-c", "true" }, NULL, 0, 0, NULL, 0, 125,
	  'e', "bind target '/etc/../proc/x' is not allowed" },
	{ { "run", "-c", "" }, NULL, 0, 0, NULL, 0, 125, 'e', "-c: the command is empty" },
	{ { "run", "--", "" }, NULL, 0, 0, NULL, 0, 125, 'e', "the command after '--' is empty" },
	{ { "run", "--policy", "/nonexistent-ward-hostile", "-c", "true" }, NULL, 0, 0, NULL, 0,
	  125, 'e', "policy '/nonexistent-ward-hostile': No such file or directory" },
	{ { "run", "--policy", "/", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "policy '/': Is a directory" },
	{ { "run", "--policy", "@FIFO", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "not valid JSON" },
	{ { "run", "--policy", "/dev/zero", "-c", "true" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "policy '/dev/zero' is not a regular file" },
	{ { "run", "--workdir-mode", "overlay", "--changes", "../x", "-c", "true" }, NULL, 0, 0,
	  NULL, 0, 125, 'e', "change set name '../x' is not valid" },
	{ { "doctor", "--bogus" }, NULL, 0, 0, NULL, 0, 125, 'e', "unknown option '--bogus'" },
	{ { "validate", "-c", " " }, NULL, 0, 0, NULL, 0, 125, 'e', "-c: the command is empty" },
	{ { "validate", "--bogus" }, NULL, 0, 0, NULL, 0, 125, 'e', "unknown option '--bogus'" },
	{ { "diff", "../../etc" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "change set name '../../etc' is not valid" },
	{ { "apply", "" }, NULL, 0, 0, NULL, 0, 125, 'e', "change set name '' is not valid" },
	{ { "discard", "nope-hostile" }, NULL, 0, 0, NULL, 0, 125, 'e',
	  "change set 'nope-hostile': No such file or directory" },
	{ { "changes", "extra" }, NULL, 0, 0, NULL, 0, 125, 'e', "unexpected argument 'extra'" },
	{ { "serve", "extra" }, NULL, 0, 0, NULL, 0, 125, 'e', "unexpected argument 'extra'" },

	/* policy files */
	POL("", "file: not valid JSON"),
	POL("[]", "file: must be a JSON object"),
	POL("{\"bogus\": 1}", "policy.json': unknown key \"bogus\" (valid: sandbox, "),
	POL("{\"a\": 1, \"a\": 2}", "duplicate object key"),
	POL("{\"mounts\": [{\"type\": \"overlay\", \"target\": \"/x\"}]}",
	    "mounts[0]: unknown type \"overlay\""),
	POL("{\"mounts\": [{\"type\": \"bind\", \"target\": \"/x\"}]}",
	    "mounts[0].source: is missing"),
	POL("{\"mounts\": [{\"type\": \"tmpfs\"}]}", "mounts[0].target: is missing"),
	POL("{\"hostname\": \"a/b\"}", "hostname: hostname 'a/b' is not valid"),
	POL("{\"limits\": {\"pids\": 1.5}}", "limits.pids: must be an integer"),
	POL("{\"limits\": {\"memory\": \"1e99\"}}", "limits.memory"),
	POL("{\"timeout\": \"10\"}", "timeout: must be an integer, got a string"),
	POL("{\"namespaces\": [1]}", "namespaces: element 0 must be a string, got an integer"),
	POL("{\"env\": {\"set\": {\"A\": 1}}}", "env.set.A: must be a string, got an integer"),
	POL("{\"rate_limit\": {\"per_minute\": -1}}", "rate_limit.per_minute"),
	POL("{\"validators\": {\"except\": {\"nope\": [\"x\"]}}}", "no rule \"nope\""),
	/* a BOM is ignored: the policy is read, and judges */
	{ { "validate", "--policy", "@POL", "-c", "ls" }, NULL, 0, 0,
	  "\xef\xbb\xbf{\"validators\": {\"enabled\": true}}", 0, 0, 'o', "verdict: allowed" },

	/* JSON requests */
	REQ("", "request is empty"),
	REQ("   \n", "request is empty"),
	REQ("[]", "request must be a JSON object, got an array"),
	REQ("\"x\"", "request is not valid JSON"),
	REQ("{\"command\": \"true\"} x", "end of file expected"),
	REQ("{\"command\": \"true\"}{\"command\": \"true\"}", "end of file expected"),
	REQ("{\"command\": \"true\", \"command\": \"false\"}", "duplicate object key"),
	REQ("{}", "request: command: is missing"),
	REQ("{\"command\": 1}", "request: command: must be a string, got an integer"),
	REQ("{\"command\": \"\"}", "request: command: is empty"),
	REQ("{\"command\": \"a\\u0000b\"}", "a string holds \\\\u0000 (NUL)"),
	REQ("{\"command\": \"true\", \"workdir\": \"/tmp\\u0000x\"}", "a string holds \\\\u0000"),
	REQ("{\"command\": \"echo \xff\"}", "unable to decode byte 0xff"),
	REQ("{\"command\": \"echo \\ud800\"}", "invalid Unicode"),
	REQ("{\"command\": \"true\", \"timeout\": 0}", "at least 1 second, got 0"),
	REQ("{\"command\": \"true\", \"timeout\": -1}", "at least 1 second, got -1"),
	REQ("{\"command\": \"true\", \"timeout\": 604801}", "at most 604800 seconds"),
	REQ("{\"command\": \"true\", \"timeout\": 1.5}", "whole number of seconds, got 1.5"),
	REQ("{\"command\": \"true\", \"timeout\": 1e3}", "written as an integer"),
	REQ("{\"command\": \"true\", \"timeout\": \"10\"}", "got a string"),
	REQ("{\"command\": \"true\", \"timeout\": 99999999999999999999999}", "too big integer"),
	REQ("{\"command\": \"true\", \"shell\": \"yes\"}", "request: shell: unknown shell 'yes' (known: sh, bash, true, false)"),
	REQ("{\"command\": \"true\", \"approved\": 1}", "request: approved: must be a boolean, got an integer"),
	REQ("{\"command\": \"true\", \"bogus\": 1}", "request: unknown key \\\"bogus\\\" (valid: command, workdir, timeout, approved, shell)"),
	REQ("{\"command\": \"true\", \"workdir\": \"\"}", "request: workdir: is empty"),
	REQ("{\"command\": \"true\", \"workdir\": \"/\"}", "workdir '/' would make"),
	REQ("{\"command\": \"true\", \"workdir\": \"/nonexistent-ward-hostile\"}",
	    "workdir '/nonexistent-ward-hostile': No such file or directory"),
	{ { "run", "--json" }, NULL, 0, GEN_DEPTH, NULL, 0, 125, 'o', "maximum parsing depth" },
	{ { "run", "--json" }, NULL, 0, GEN_2MIB, NULL, 0, 125, 'o',
	  "request is larger than 1048576 bytes" },
	{ { "run", "--json" }, NULL, 0, GEN_LONG_CMD, NULL, 0, 125, 'o',
	  "a command for /bin/sh -c may be at most 131071" },
	{ { "validate", "--json" }, NULL, 0, GEN_LONG_CMD, NULL, 0, 125, 'o',
	  "a command for /bin/sh -c may be at most 131071" },
	/* the longest command /bin/sh -c takes is judged at once (it took
	 * glibc's regex engine 25 s when a rule began with a repeated class) */
	{ { "validate", "--json" }, NULL, 0, GEN_FIT_CMD, NULL, 0, 0, 'o',
	  "\"verdict\":\"allowed\"" },
	{ { "validate", "-c", "@GEN" }, NULL, 0, GEN_LONG_WORD, NULL, 0, 0, 'o',
	  "verdict: allowed" },
};

/* Cases that run a sandbox. */
static const struct hcase runs[] = {
	{ { "run", "--json" }, "\xef\xbb\xbf{\"command\": \"echo hi\"}", 0, 0, NULL, 0, 0, 'o',
	  "\"output\":\"hi\\n\"" },
	{ { "run", "--json" }, NULL, 0, GEN_FIT_CMD, NULL, 0, 0, 'o', "\"exit_code\":0" },
	{ { "run", "--hostname", "ok-1.x", "-c", "hostname" }, NULL, 0, 0, NULL, 0, 0, 'o',
	  "ok-1.x\n" },
};

static char *workdir, *tmp, *ward;

static void setup(void)
{
	workdir = harness_tmpdir();
	tmp = harness_tmpdir();
	ward = harness_path("ward");
	/* orphans of ward's would become our children: the check below sees them */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
}

static void teardown(void)
{
	static const char *const beside[] = { ".in", ".out", ".err", ".policy.json", ".fifo" };
	char path[4200];

	/* the cases' own files, kept beside the workdir (not in it, nor in
	 * ward's TMPDIR, both of which are checked) */
	for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", workdir, beside[i]);
		unlink(path);
	}
	harness_rmtree(workdir);
	harness_rmtree(tmp);
	free(workdir);
	free(tmp);
	free(ward);
}

static char *generate(enum gen g, size_t *len)
{
	size_t n = 0, i;
	char *s = NULL;

	switch (g) {
	case GEN_NONE:
		break;
	case GEN_DEPTH: /* nesting far deeper than the parser's limit */
		n = 100000;
		s = malloc(n + 1);
		memset(s, '[', n);
		break;
	case GEN_2MIB:
		n = 2 << 20;
		s = malloc(n + 1);
		memcpy(s, "{\"command\": \"", 13);
		memset(s + 13, 'a', n - 15);
		memcpy(s + n - 2, "\"}", 2);
		break;
	case GEN_LONG_CMD:   /* 200 KiB: more than execve() takes in one argument */
	case GEN_FIT_CMD:    /* 131071 bytes: the most it takes */
	case GEN_LONG_WORD: { /* -c: the argument itself, under the limit */
		size_t cmd = g == GEN_LONG_CMD ? 200 << 10 : g == GEN_FIT_CMD ? 131071 : 120 << 10;
		size_t pre = g == GEN_LONG_WORD ? 0 : 13;

		n = pre + cmd + (pre ? 2 : 0);
		s = malloc(n + 1);
		memcpy(s, "{\"command\": \"", pre);
		memcpy(s + pre, "echo ", 5);
		for (i = 5; i < cmd; i++)
			s[pre + i] = 'a';
		if (pre)
			memcpy(s + pre + cmd, "\"}", 2);
		break;
	}
	}
	ck_assert(g == GEN_NONE || s);
	if (s)
		s[n] = '\0';
	*len = n;
	return s;
}

static void write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static char *slurp(const char *path)
{
	char *s = harness_slurp(path);

	ck_assert_msg(s != NULL, "open '%s'", path);
	return s;
}

/* Nothing of the ward that was pid `pid` left: cgroups, processes, files in
 * its TMPDIR, mounts of our directories. */
static void nothing_left(const char *label, pid_t pid)
{
	static const char *const ctrls[] = { "memory", "pids", "cpu", "cpuacct", "blkio",
					     "unified" };
	char prefix[32], path[256];
	struct dirent *de;
	size_t i;
	DIR *d;
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	pid_t orphan;

	/* v2: <mount>/ward/w<pid>-…; v1: <hierarchy>/ward-w<pid>-… */
	for (i = 0; i < 2 * sizeof(ctrls) / sizeof(ctrls[0]); i++) {
		bool v1 = i % 2;

		snprintf(prefix, sizeof(prefix), "%sw%d-", v1 ? "ward-" : "", (int)pid);
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s%s", ctrls[i / 2], v1 ? "" : "/ward");
		if (!(d = opendir(path)))
			continue;
		while ((de = readdir(d)))
			ck_assert_msg(strncmp(de->d_name, prefix, strlen(prefix)) != 0,
				      "%s: cgroup %s/%s left", label, path, de->d_name);
		closedir(d);
	}
	/* a subreaper (setup): a process ward left is our child, running (0) or
	 * dead since (its pid); none at all is ECHILD */
	errno = 0;
	orphan = waitpid(-1, NULL, WNOHANG);
	ck_assert_msg(orphan == -1 && errno == ECHILD, "%s: %s left behind", label,
		      orphan == 0 ? "a running process" : "a process");
	d = opendir(tmp);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		ck_assert_msg(!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."),
			      "%s: %s/%s left", label, tmp, de->d_name);
	closedir(d);
	f = fopen("/proc/self/mountinfo", "r");
	ck_assert_ptr_nonnull(f);
	while (getline(&line, &cap, f) > 0)
		ck_assert_msg(!strstr(line, workdir) && !strstr(line, tmp), "%s: mount left: %s",
			      label, line);
	free(line);
	fclose(f);
}

static void run_case(const struct hcase *hc, size_t idx)
{
	char label[64], in_path[4200], out_path[4200], err_path[4200], pol_path[4200],
		fifo_path[4200], tmpdir_env[4300];
	const char *argv[MAX_ARGS + 2];
	size_t n = 0, i, len = 0;
	char *gen = generate(hc->gen, &len);
	char *out, *err, *text;
	pid_t pid;
	int status, fd, waited;

	snprintf(label, sizeof(label), "case %zu (%s %s)", idx, hc->argv[0] ? hc->argv[0] : "",
		 hc->argv[1] ? hc->argv[1] : "");
	snprintf(in_path, sizeof(in_path), "%s.in", workdir);
	snprintf(out_path, sizeof(out_path), "%s.out", workdir);
	snprintf(err_path, sizeof(err_path), "%s.err", workdir);
	snprintf(pol_path, sizeof(pol_path), "%s.policy.json", workdir);
	snprintf(fifo_path, sizeof(fifo_path), "%s.fifo", workdir);
	if (hc->input)
		write_file(in_path, hc->input, hc->input_len ? hc->input_len : strlen(hc->input));
	else if (gen && hc->argv[1] && strcmp(hc->argv[1], "--json") == 0)
		write_file(in_path, gen, len);
	else
		write_file(in_path, "", 0);
	if (hc->policy)
		write_file(pol_path, hc->policy,
			   hc->policy_len ? hc->policy_len : strlen(hc->policy));
	unlink(fifo_path);
	ck_assert_int_eq(mkfifo(fifo_path, 0644), 0);

	argv[n++] = ward;
	for (i = 0; i < MAX_ARGS && hc->argv[i]; i++)
		argv[n++] = !strcmp(hc->argv[i], "@POL")  ? pol_path :
			    !strcmp(hc->argv[i], "@FIFO") ? fifo_path :
			    !strcmp(hc->argv[i], "@GEN")  ? gen :
							    hc->argv[i];
	argv[n] = NULL;
	snprintf(tmpdir_env, sizeof(tmpdir_env), "TMPDIR=%s", tmp);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (chdir(workdir) < 0 || putenv(tmpdir_env) < 0)
			_exit(99);
		fd = open(in_path, O_RDONLY);
		dup2(fd, 0);
		fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execv(argv[0], (char **)argv);
		_exit(98);
	}
	/* 20 s at most: a hang (a FIFO, a quadratic regex) is a failure, not a stuck suite */
	for (waited = 0; waited < 2000; waited++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(10000);
	}
	if (waited == 2000) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		ck_abort_msg("%s: still running after 20 s", label);
	}
	out = slurp(out_path);
	err = slurp(err_path);
	text = hc->where == 'o' ? out : err;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == hc->status,
		      "%s: status %d, expected %d; stdout %.300s; stderr %.300s", label,
		      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), hc->status,
		      out, err);
	ck_assert_msg(strstr(text, hc->expect), "%s: '%s' not in %s: %.500s", label, hc->expect,
		      hc->where == 'o' ? "stdout" : "stderr", text);
	/* the refusal is its first line: "ward CMD: what was wrong", lowercase after
	 * the prefix, no final period */
	if (hc->status == 125 && hc->where == 'e') {
		const char *colon = strstr(err, ": "), *eol = strchr(err, '\n');

		ck_assert_msg(strncmp(err, "ward", 4) == 0 && colon && eol && colon < eol &&
				      !(colon[2] >= 'A' && colon[2] <= 'Z') && eol[-1] != '.',
			      "%s: first line of stderr not in style: %s", label, err);
	}
	nothing_left(label, pid);
	unlink(fifo_path);
	free(out);
	free(err);
	free(gen);
}

START_TEST(test_refused)
{
	run_case(&refused[_i], (size_t)_i);
}
END_TEST

START_TEST(test_runs)
{
	run_case(&runs[_i], (size_t)_i);
}
END_TEST

/* The server answers every bad line and keeps going: garbage, wrong types,
 * unknown methods and parameters, a line over 1 MiB, then a ping, then a
 * request cut off by the end of input. */
START_TEST(test_serve_survives)
{
	static const char *const lines[] = {
		"not json",
		"[]",
		"{\"jsonrpc\": \"2.0\", \"id\": 1}",
		"{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": 5}",
		"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"nope\"}",
		"{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"session.exec\", \"params\": [1]}",
		"{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": \"session.exec\", \"params\": "
		"{\"command\": 5}}",
		"{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": \"session.exec\", \"params\": "
		"{\"command\": \"true\", \"bogus\": 1}}",
		"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"session.exec\", \"params\": "
		"{\"command\": \"true\", \"session\": \"nope\"}}",
		"{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": \"session.exec\", \"params\": "
		"{\"command\": \"true\", \"timeout\": 1e99}}",
		"{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": \"session.exec\", \"params\": "
		"{\"command\": \"a\\u0000b\"}}",
		"{\"jsonrpc\": \"2.0\", \"id\": {\"a\": 1}, \"method\": \"ping\"}",
		"\xff\xfe garbage",
	};
	static const char *const expect[] = {
		"\"code\":-32700",
		"\"code\":-32600,\"message\":\"empty batch\"",
		"\"id\":1,\"error\":{\"code\":-32600,\"message\":\"method: is missing\"",
		"\"id\":2,\"error\":{\"code\":-32600",
		"\"id\":3,\"error\":{\"code\":-32601,\"message\":\"method not found: \\\"nope\\\"\"",
		"\"id\":4,\"error\":{\"code\":-32602,\"message\":\"params: must be an object",
		"\"id\":5,\"error\":{\"code\":-32602,\"message\":\"command: must be a string, got an integer\"",
		"\"id\":6,\"error\":{\"code\":-32602,\"message\":\"unknown key \\\"bogus\\\" (valid: session, command, timeout, concurrent, approved, workdir)\"",
		"\"id\":7,\"error\":{\"code\":-32602,\"message\":\"no session \\\"nope\\\"\"",
		"\"id\":8,\"error\":{\"code\":-32602,\"message\":\"timeout: must be an integer, "
		"got a number with a fraction or an exponent\"",
		"a string holds \\\\u0000 (NUL)",
		"\"code\":-32600,\"message\":\"id: must be a string or an integer, got an object\"",
		"unable to decode byte 0xff",
		"\"code\":-32600,\"message\":\"message larger than 1048576 bytes\"",
		"{\"jsonrpc\":\"2.0\",\"id\":21,\"result\":{}}",
		"premature end of input",
	};
	char in_path[4200], out_path[4200], err_path[4200], *out, *p, *nl;
	size_t i, n = sizeof(expect) / sizeof(expect[0]);
	FILE *f;
	pid_t pid;
	int status, fd;

	snprintf(in_path, sizeof(in_path), "%s.in", workdir);
	snprintf(out_path, sizeof(out_path), "%s.out", workdir);
	snprintf(err_path, sizeof(err_path), "%s.err", workdir);
	f = fopen(in_path, "w");
	ck_assert_ptr_nonnull(f);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		fprintf(f, "%s\n", lines[i]);
	for (i = 0; i < (2u << 20); i++)
		fputc('x', f);
	fputs("\n{\"jsonrpc\": \"2.0\", \"id\": 21, \"method\": \"ping\"}\n", f);
	fputs("{\"jsonrpc\": \"2.0\", \"id\": 22, \"method\": \"session.exec\", \"params\": {\"comm",
	      f);
	fclose(f);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char env[4300];

		snprintf(env, sizeof(env), "TMPDIR=%s", tmp);
		if (chdir(workdir) < 0 || putenv(env) < 0)
			_exit(99);
		fd = open(in_path, O_RDONLY);
		dup2(fd, 0);
		fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execl(ward, ward, "serve", (char *)NULL);
		_exit(98);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "serve: status %d", status);
	out = slurp(out_path);
	/* one answer per line; JSON-RPC promises no order (errors found while
	 * reading are answered by the reader, the rest after), so each expected
	 * answer is one line of its own, and nothing else is there */
	char *ans[64];
	bool used[64] = { false };
	size_t na = 0;

	for (p = out; *p && na < 64; p = nl + 1) {
		nl = strchr(p, '\n');
		ck_assert_ptr_nonnull(nl);
		*nl = '\0';
		ans[na++] = p;
	}
	ck_assert_msg(na == n, "serve: %zu answers to %zu lines", na, n);
	for (i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < na && (used[k] || !strstr(ans[k], expect[i])); k++)
			;
		ck_assert_msg(k < na, "serve: no answer has '%s'", expect[i]);
		used[k] = true;
	}
	free(out);
	nothing_left("serve", pid);
}
END_TEST

/* Killed while its command runs: the command, its cgroup and its mounts go
 * with it. The command says it has started through a FIFO in the workdir, so
 * the signal lands while it runs, not before the sandbox exists. */
START_TEST(test_killed_mid_run)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	char fifo[4200];
	size_t k;

	snprintf(fifo, sizeof(fifo), "%s/started", workdir);
	for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++) {
		char env[4300], buf[8] = "";
		pid_t pid;
		int status, fd;
		ssize_t n = 0;

		unlink(fifo);
		ck_assert_int_eq(mkfifo(fifo, 0666), 0);
		chmod(fifo, 0666);
		/* non-blocking: no writer yet is not an end of file on Linux */
		fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			snprintf(env, sizeof(env), "TMPDIR=%s", tmp);
			if (chdir(workdir) < 0 || putenv(env) < 0)
				_exit(99);
			execl(ward, ward, "run", "-c", "echo up > started; exec sleep 3600", (char *)NULL);
			_exit(98);
		}
		while (n <= 0) {
			struct pollfd pf = { fd, POLLIN, 0 };

			ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0,
				      "ward ended before its command started: status %d", status);
			if (poll(&pf, 1, 100) > 0)
				n = read(fd, buf, sizeof(buf) - 1);
		}
		close(fd);
		ck_assert_str_eq(buf, "up\n");
		kill(pid, sigs[k]);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sigs[k],
			      "signal %d: status %d", sigs[k], status);
		nothing_left("killed", pid);
	}
	unlink(fifo);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = harness_tcase(s, "refused", NULL);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_refused, 0, (int)(sizeof(refused) / sizeof(refused[0])));
	tcase_add_test(tc, test_serve_survives);
	tc = harness_tcase(s, "runs", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_runs, 0, (int)(sizeof(runs) / sizeof(runs[0])));
	tcase_add_test(tc, test_killed_mid_run);
	return harness_main(s);
}
