/* test-serve.c — `ward serve` driven end to end over its stdio: an MCP
 * conversation (initialize, tools/list, tools/call of shell), the session
 * methods, malformed input that must not cost a session, concurrency. */
#include "harness.h"
#include "ward/ratelimit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *workdir;
static const char *policy_opt; /* instead of --no-policy */

struct srv {
	pid_t pid;
	int in, out;
	char buf[1 << 16];
	size_t len;
};

static void setup(void)
{
	workdir = harness_tmpdir();
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
}

static void start(struct srv *s, const char *extra)
{
	int a[2], b[2];
	char *ward = harness_path("ward");

	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(pipe2(a, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(b, O_CLOEXEC), 0);
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0) {
		dup2(a[0], 0);
		dup2(b[1], 1);
		if (chdir(workdir) < 0)
			_exit(126);
		execl(ward, ward, "serve", policy_opt ? policy_opt : "--no-policy",
		      extra ? extra : "--timeout=30", (char *)NULL);
		_exit(127);
	}
	close(a[0]);
	close(b[1]);
	s->in = a[1];
	s->out = b[0];
	free(ward);
}

static void send_line(struct srv *s, const char *line)
{
	size_t n = strlen(line);

	ck_assert_int_eq(write(s->in, line, n), (ssize_t)n);
	ck_assert_int_eq(write(s->in, "\n", 1), 1);
}

/* The next response line, parsed; fails after 30 s. */
static json_t *next(struct srv *s)
{
	for (;;) {
		char *nl = memchr(s->buf, '\n', s->len);
		struct pollfd pf = { .fd = s->out, .events = POLLIN };
		ssize_t n;

		if (nl) {
			json_error_t je;
			json_t *v = json_loadb(s->buf, (size_t)(nl - s->buf), 0, &je);

			ck_assert_msg(v, "bad response: %s: %.*s", je.text, (int)(nl - s->buf), s->buf);
			memmove(s->buf, nl + 1, s->len - (size_t)(nl + 1 - s->buf));
			s->len -= (size_t)(nl + 1 - s->buf);
			return v;
		}
		ck_assert_msg(poll(&pf, 1, 30000) == 1, "no response within 30 s");
		n = read(s->out, s->buf + s->len, sizeof(s->buf) - s->len);
		ck_assert_msg(n > 0, "server closed its output");
		s->len += (size_t)n;
	}
}

static json_t *call(struct srv *s, const char *line)
{
	send_line(s, line);
	return next(s);
}

static void stop(struct srv *s)
{
	int status;

	close(s->in);
	ck_assert_int_eq(waitpid(s->pid, &status, 0), s->pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "serve ended with %d", status);
	close(s->out);
}

/* result.<path> of a response, or the error when path starts with "!". */
static json_t *get(json_t *resp, const char *path)
{
	json_t *v = json_object_get(resp, path[0] == '!' ? "error" : "result");
	char key[128];
	const char *p = path[0] == '!' ? path + 1 : path;

	while (v && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		v = json_is_array(v) ? json_array_get(v, (size_t)atoi(key)) : json_object_get(v, key);
		p += n + (p[n] == '.');
	}
	return v;
}

static const char *gets_(json_t *resp, const char *path)
{
	const char *s = json_string_value(get(resp, path));

	ck_assert_msg(s, "no string at %s in %s", path, json_dumps(resp, JSON_COMPACT));
	return s;
}

static long long geti(json_t *resp, const char *path)
{
	json_t *v = get(resp, path);

	ck_assert_msg(json_is_integer(v), "no integer at %s in %s", path,
		      json_dumps(resp, JSON_COMPACT));
	return json_integer_value(v);
}

START_TEST(test_mcp)
{
	struct srv s;
	json_t *r, *tools, *t;
	size_t i;
	bool have_shell = false, have_history = false;

	start(&s, NULL);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		     "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		     "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}");
	ck_assert_ptr_null(json_object_get(r, "error"));
	ck_assert_str_eq(gets_(r, "protocolVersion"), "2025-06-18");
	ck_assert_str_eq(gets_(r, "serverInfo.name"), "ward");
	ck_assert(json_is_object(get(r, "capabilities.tools")));
	json_decref(r);
	/* a notification: no answer (the next line answers id 2) */
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 2);
	tools = get(r, "tools");
	ck_assert(json_is_array(tools));
	json_array_foreach(tools, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		json_t *props = json_object_get(json_object_get(t, "inputSchema"), "properties");

		ck_assert_ptr_nonnull(json_object_get(t, "description"));
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(t, "inputSchema"),
								   "type")),
				 "object");
		if (strcmp(name, "shell") == 0) {
			have_shell = true;
			ck_assert_str_eq(json_string_value(json_object_get(
						 json_object_get(props, "command"), "type")),
					 "string");
			ck_assert_str_eq(json_string_value(json_object_get(
						 json_object_get(props, "workdir"), "type")),
					 "string");
			ck_assert_str_eq(json_string_value(json_object_get(
						 json_object_get(props, "timeout"), "type")),
					 "integer");
			ck_assert_str_eq(json_string_value(json_array_get(
						 json_object_get(json_object_get(t, "inputSchema"),
								 "required"), 0)),
					 "command");
		}
		have_history = have_history || strcmp(name, "history_search") == 0;
	}
	ck_assert(have_shell && have_history);
	json_decref(r);

	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"mkdir -p sub && cd sub && echo hi\"}}}");
	ck_assert_str_eq(gets_(r, "content.0.type"), "text");
	ck_assert_ptr_nonnull(strstr(gets_(r, "content.0.text"), "hi\n"));
	ck_assert(json_is_false(get(r, "isError")));
	ck_assert_int_eq(geti(r, "structuredContent.exit_code"), 0);
	ck_assert(json_is_true(get(r, "structuredContent.sandboxed")));
	json_decref(r);
	/* the default session kept the directory */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"basename $PWD; exit 3\"}}}");
	ck_assert_str_eq(gets_(r, "structuredContent.output"), "sub\n");
	ck_assert(json_is_true(get(r, "isError"))); /* a failed command */
	ck_assert_int_eq(geti(r, "structuredContent.exit_code"), 3);
	json_decref(r);
	/* a tool's failure is a tool result the model sees, not a protocol error */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"echo x\",\"timeout\":0}}}");
	ck_assert(json_is_true(get(r, "isError")));
	ck_assert_ptr_nonnull(strstr(gets_(r, "content.0.text"), "timeout"));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"nosuchtool\",\"arguments\":{}}}");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
	/* a timeout through the tool: the output so far, and the error */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"echo partial; sleep 30\","
		     "\"timeout\":1}}}");
	ck_assert(json_is_true(get(r, "isError")));
	ck_assert_str_eq(gets_(r, "structuredContent.error.kind"), "Timeout");
	ck_assert_str_eq(gets_(r, "structuredContent.output"), "partial\n");
	json_decref(r);
	stop(&s);
}
END_TEST

/* MCP 2025-06-18 as agent clients use it: the shell tool declares an
 * outputSchema and its structuredContent holds stdout and stderr apart, the
 * exit code, the timeout, truncation, duration and the directory after; and
 * the session is a shell kept open: variables (exported or not) and
 * functions carry over to the next call (bash). */
START_TEST(test_mcp_structured_state)
{
	struct srv s;
	json_t *r, *t, *req;
	size_t i;
	bool have_schema = false;

	start(&s, NULL);
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
			     "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
			     "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}"));
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	json_array_foreach(get(r, "tools"), i, t) {
		if (strcmp(json_string_value(json_object_get(t, "name")), "shell") != 0)
			continue;
		req = json_object_get(json_object_get(t, "outputSchema"), "required");
		ck_assert_msg(json_is_array(req), "the shell tool has an outputSchema");
		{
			const char *want[] = { "stdout", "stderr", "exit_code", "timed_out",
					       "truncated_bytes", "duration_ms", "cwd" };
			size_t k, j;
			json_t *v;

			for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
				bool found = false;

				json_array_foreach(req, j, v)
					found = found || strcmp(json_string_value(v), want[k]) == 0;
				ck_assert_msg(found, "outputSchema requires %s", want[k]);
			}
		}
		have_schema = true;
	}
	ck_assert(have_schema);
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"export FOO=bar; Y=2; "
		     "f() { echo fn; }; echo out; echo err >&2\"}}}");
	ck_assert_str_eq(gets_(r, "structuredContent.stdout"), "out\n");
	ck_assert_str_eq(gets_(r, "structuredContent.stderr"), "err\n");
	ck_assert_str_eq(gets_(r, "structuredContent.cwd"), workdir);
	ck_assert(json_is_false(get(r, "structuredContent.timed_out")));
	ck_assert_int_eq(geti(r, "structuredContent.truncated_bytes"), 0);
	ck_assert_int_ge(geti(r, "structuredContent.duration_ms"), 0);
	ck_assert_ptr_nonnull(strstr(gets_(r, "content.0.text"), "out\n"));
	json_decref(r);
	if (access("/bin/bash", X_OK) == 0) {
		r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
			     "\"name\":\"shell\",\"arguments\":{\"command\":\"echo \\\"$FOO $Y\\\"; f\"}}}");
		ck_assert_str_eq(gets_(r, "structuredContent.stdout"), "bar 2\nfn\n");
		json_decref(r);
	}
	stop(&s);
}
END_TEST

/* ward serve takes ward run's sandbox options, over the policy file; the
 * initialize result tells the model what the sandbox allows. */
START_TEST(test_serve_sandbox_flags)
{
	struct srv s;
	json_t *r;
	const char *instr;

	start(&s, "--allow-host=example.com");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		     "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}");
	instr = gets_(r, "instructions");
	ck_assert_msg(strstr(instr, "proxy") && strstr(instr, "example.com"), "%s", instr);
	ck_assert_msg(strstr(instr, workdir) && strstr(instr, "30 s"), "%s", instr);
	json_decref(r);
	stop(&s);
	/* (a flag every tier has: --pids needs a cgroup, root's on this host) */
	start(&s, "--setenv=WARD_T_FLAG=from-the-flag");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"echo $WARD_T_FLAG\"}}}");
	ck_assert_str_eq(gets_(r, "structuredContent.stdout"), "from-the-flag\n");
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{"
		     "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}");
	ck_assert_msg(strstr(gets_(r, "instructions"), "loopback only"), "%s",
		      gets_(r, "instructions"));
	json_decref(r);
	stop(&s);
	/* a flag about a command, not the sandbox: refused, exit 125 */
	{
		char *ward = harness_path("ward"), *out = NULL, *err = NULL;
		char *argv[] = { ward, (char *)"serve", (char *)"--no-policy", (char *)"--json", NULL };
		int status = harness_capture(argv, &out, &err);

		ck_assert_int_eq(WEXITSTATUS(status), 125);
		ck_assert_msg(strstr(err, "only the sandbox's options"), "%s", err);
		free(out);
		free(err);
		free(ward);
	}
}
END_TEST

/* notifications/cancelled kills the named command at once (a fresh
 * sandbox, or a shared session's sandbox, restarted for the next command);
 * the cancelled request gets no answer, the next is answered at once, and
 * the session's state is as before the cancelled command. */
START_TEST(test_mcp_cancel)
{
	struct srv s;
	json_t *r;

	start(&s, _i ? "--isolation=shared" : NULL);
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
			     "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}"));
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"export KEPT=yes; "
		     "sleep 300 >/dev/null &\"}}}");
	json_decref(r);
	/* 100 s against next()'s 30: without the cancellation the test fails */
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
		      "\"name\":\"shell\",\"arguments\":{\"command\":\"KEPT=no; echo started; "
		      "sleep 100\",\"timeout\":200}}}");
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
		      "\"requestId\":3,\"reason\":\"the user stopped it\"}}");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"echo \\\"$KEPT\\\"\"}}}");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 4);
	ck_assert_str_eq(gets_(r, "structuredContent.stdout"),
			 access("/bin/bash", X_OK) == 0 ? "yes\n" : "\n");
	/* a shared session's job ended with the sandbox the cancel killed:
	 * the cancelled call has no answer, the next one says so */
	if (_i && access("/bin/bash", X_OK) == 0)
		ck_assert_msg(strstr(gets_(r, "structuredContent.state_note"), "1 background job ended"),
			      "%s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	stop(&s);
}
END_TEST

/* workdir/rel in a static buffer. */
static const char *at(const char *rel)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", workdir, rel);
	return buf;
}

/* The next message: a progress notification for token whose output holds
 * want. */
static json_t *wait_progress(struct srv *s, const char *token, const char *want)
{
	json_t *m = next(s);
	const char *method = json_string_value(json_object_get(m, "method"));
	json_t *p = json_object_get(m, "params");

	ck_assert_msg(method && strcmp(method, "notifications/progress") == 0,
		      "expected progress with '%s', got %s", want, json_dumps(m, JSON_COMPACT));
	ck_assert_str_eq(json_string_value(json_object_get(p, "progressToken")), token);
	ck_assert_msg(strstr(json_string_value(json_object_get(p, "message")), want),
		      "progress without '%s': %s", want, json_dumps(m, JSON_COMPACT));
	return m;
}

/* A tools/call with _meta.progressToken gets notifications/progress with the
 * output so far while its command runs, the progress growing; none without
 * a token; a token of a wrong type or too long is refused (-32602). Each
 * step waits for the notification before letting the command go on. */
START_TEST(test_mcp_progress)
{
	struct srv s;
	json_t *r, *m;
	char line[1024], token[300];
	long long p1, p2;

	start(&s, _i ? "--isolation=shared" : NULL);
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
			     "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}"));
	/* without the notifications the command times out: its result comes first */
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
		      "\"name\":\"shell\",\"_meta\":{\"progressToken\":\"tok\"},\"arguments\":{"
		      "\"command\":\"echo first; until [ -e go1 ]; do sleep 0.05; done; echo second; "
		      "until [ -e go2 ]; do sleep 0.05; done; echo third\",\"timeout\":10}}}");
	m = wait_progress(&s, "tok", "first");
	p1 = json_integer_value(json_object_get(json_object_get(m, "params"), "progress"));
	json_decref(m);
	ck_assert_int_eq(close(open(at("go1"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
	m = wait_progress(&s, "tok", "second");
	p2 = json_integer_value(json_object_get(json_object_get(m, "params"), "progress"));
	json_decref(m);
	ck_assert_int_gt(p2, p1);
	ck_assert_int_eq(close(open(at("go2"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
	/* then (perhaps after one more notification) the result */
	for (;;) {
		r = next(&s);
		if (!json_object_get(r, "method"))
			break;
		json_decref(r);
	}
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 2);
	ck_assert_str_eq(gets_(r, "structuredContent.stdout"), "first\nsecond\nthird\n");
	json_decref(r);
	/* no token, no notification: the result is the next message */
	unlink(at("go1"));
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
		      "\"name\":\"shell\",\"arguments\":{\"command\":\"echo first; sleep 1.2; "
		      "echo done\",\"timeout\":10}}}");
	r = next(&s);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 3);
	json_decref(r);
	/* hostile tokens */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"_meta\":{\"progressToken\":[1]},\"arguments\":{"
		     "\"command\":\"echo ran\"}}}");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
	memset(token, 'x', 299);
	token[299] = '\0';
	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"shell\",\"_meta\":{\"progressToken\":\"%s\"},\"arguments\":{"
		 "\"command\":\"echo ran\"}}}",
		 token);
	r = call(&s, line);
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
	stop(&s);
}
END_TEST

START_TEST(test_session_methods)
{
	struct srv s;
	json_t *r;
	char line[1024];
	const char *iso = _i == 0 ? "fresh" : "shared";

	start(&s, NULL);
	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.create\",\"params\":{"
		 "\"workdir\":\"%s\",\"isolation\":\"%s\",\"timeout\":20}}",
		 workdir, iso);
	r = call(&s, line);
	ck_assert_str_eq(gets_(r, "session"), "s1");
	ck_assert_str_eq(gets_(r, "isolation"), iso);
	ck_assert_int_eq(geti(r, "timeout"), 20);
	/* what the session keeps, and what it cannot (processes), said */
	ck_assert_ptr_nonnull(strstr(gets_(r, "not_kept"), "processes"));
	ck_assert_str_eq(gets_(r, "keeps.0"), "directory");
	ck_assert_str_eq(gets_(r, "shell"), access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh");
	json_decref(r);
#define CALL(id, m, p)                                                                             \
	call(&s, "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"" m "\",\"params\":{"           \
		 "\"session\":\"s1\"" p "}}")
	json_decref(CALL(2, "session.env.set", ",\"name\":\"WHO\",\"value\":\"world\""));
	json_decref(CALL(3, "session.alias.set", ",\"name\":\"greet\",\"value\":\"echo hello\""));
	r = CALL(4, "session.exec", ",\"command\":\"greet $WHO\"");
	ck_assert_str_eq(gets_(r, "output"), "hello world\n");
	ck_assert_str_eq(gets_(r, "expanded"), "echo hello $WHO");
	ck_assert_int_eq(geti(r, "history_id"), 1);
	json_decref(r);
	r = CALL(5, "session.env.list", "");
	ck_assert_str_eq(gets_(r, "env.WHO"), "world");
	json_decref(r);
	r = CALL(6, "session.alias.list", "");
	ck_assert_str_eq(gets_(r, "aliases.greet"), "echo hello");
	json_decref(r);
	json_decref(CALL(7, "session.exec", ",\"command\":\"mkdir -p x/y\""));
	r = CALL(8, "session.cd", ",\"dir\":\"x/y\"");
	ck_assert_int_eq(geti(r, "exit_code"), 0);
	json_decref(r);
	r = CALL(9, "session.pwd", "");
	ck_assert_ptr_nonnull(strstr(gets_(r, "cwd"), "/x/y"));
	json_decref(r);
	json_decref(CALL(10, "session.env.unset", ",\"name\":\"WHO\""));
	json_decref(CALL(11, "session.alias.remove", ",\"name\":\"greet\""));
	r = CALL(12, "session.alias.remove", ",\"name\":\"greet\"");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
	r = CALL(13, "session.history.search", ",\"prefix\":\"greet\"");
	ck_assert_int_eq(json_array_size(get(r, "history")), 1);
	ck_assert_str_eq(gets_(r, "history.0.command"), "greet $WHO");
	ck_assert_int_eq(geti(r, "history.0.exit_code"), 0);
	ck_assert(json_is_integer(get(r, "history.0.start_ms")));
	ck_assert(json_is_integer(get(r, "history.0.duration_ms")));
	json_decref(r);
	r = CALL(14, "session.history.search", ",\"contains\":\"x/y\"");
	ck_assert_int_eq(json_array_size(get(r, "history")), 2);
	json_decref(r);
	/* replay: the alias is gone now and WHO unset, so it fails the same way a
	 * typed command would — it went through everything again */
	r = CALL(15, "session.history.replay", ",\"id\":1");
	ck_assert_int_eq(geti(r, "exit_code"), 127);
	ck_assert_int_eq(geti(r, "history_id"), 4);
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"session.list\"}");
	ck_assert_int_eq(json_array_size(get(r, "sessions")), 1);
	json_decref(r);
	r = CALL(17, "session.close", "");
	ck_assert(json_is_true(get(r, "closed")));
	json_decref(r);
	r = CALL(18, "session.pwd", "");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	ck_assert_ptr_nonnull(strstr(gets_(r, "!message"), "no session \"s1\""));
	json_decref(r);
#undef CALL
	stop(&s);
}
END_TEST

START_TEST(test_malformed)
{
	struct srv s;
	json_t *r;
	char *huge;
	size_t n = 2 * 1024 * 1024;

	start(&s, NULL);
	/* some state to keep */
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.env.set\","
			     "\"params\":{\"name\":\"KEEP\",\"value\":\"me\"}}"));
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.exec\","
			     "\"params\":{\"command\":\"mkdir -p d && cd d\"}}"));

	r = call(&s, "{not json");
	ck_assert_int_eq(geti(r, "!code"), -32700);
	ck_assert(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no.such\"}");
	ck_assert_int_eq(geti(r, "!code"), -32601);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 3);
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session.exec\",\"params\":{\"command\":[1]}}");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	ck_assert_ptr_nonnull(strstr(gets_(r, "!message"), "command: must be a string, got an array"));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session.exec\",\"params\":{\"command\":\"true\",\"timeout\":\"5\"}}");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"session.exec\",\"params\":{\"comand\":\"true\"}}");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	ck_assert_ptr_nonnull(strstr(gets_(r, "!message"), "comand"));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session.exec\",\"params\":\"x\"}");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
	r = call(&s, "{\"id\":8,\"method\":\"session.pwd\"}");
	ck_assert_int_eq(geti(r, "!code"), -32600);
	json_decref(r);
	r = call(&s, "[1]");
	ck_assert(json_is_array(r));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_array_get(r, 0),
									     "error"), "code")),
			 -32600);
	json_decref(r);
	r = call(&s, "[]");
	ck_assert_int_eq(geti(r, "!code"), -32600);
	json_decref(r);
	/* a batch: two answers in one array */
	r = call(&s, "[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"},"
		     "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"session.pwd\"}]");
	ck_assert_int_eq(json_array_size(r), 2);
	json_decref(r);
	/* a huge message: refused once, the rest of the line dropped */
	huge = malloc(n + 1);
	memset(huge, 'a', n);
	memcpy(huge, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"session.exec\",\"params\":{\"command\":\"", 70);
	huge[n] = '\0';
	r = call(&s, huge);
	free(huge);
	ck_assert_int_eq(geti(r, "!code"), -32600);
	ck_assert_ptr_nonnull(strstr(gets_(r, "!message"), "larger than 1048576 bytes"));
	json_decref(r);
	/* unknown notifications get no answer; then everything is still there */
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"no.such.notification\"}");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"session.exec\","
		     "\"params\":{\"command\":\"echo $KEEP; basename $PWD\"}}");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 12);
	ck_assert_str_eq(gets_(r, "output"), "me\nd\n");
	ck_assert_int_eq(geti(r, "history_id"), 2);
	json_decref(r);
	stop(&s);
}
END_TEST

START_TEST(test_concurrent)
{
	struct srv s;
	json_t *r[3];
	int i;

	char go[4200];
	FILE *f;

	/* Each command marks that it runs, then waits for the other's mark
	 * (one after the other, the first would wait until its timeout) and for
	 * `go`, which this test makes only once the quick request is answered:
	 * that answer cannot but come while both commands run. */
	start(&s, "--isolation=shared");
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"session.pwd\"}"));
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.exec\",\"params\":"
		      "{\"command\":\"touch rv-1; until [ -e rv-2 ] && [ -e go ]; do sleep 0.05; "
		      "done; echo one\",\"concurrent\":true}}");
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.exec\",\"params\":"
		      "{\"command\":\"touch rv-2; until [ -e rv-1 ] && [ -e go ]; do sleep 0.05; "
		      "done; echo two\",\"concurrent\":true}}");
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session.pwd\"}");
	r[0] = next(&s);
	ck_assert_int_eq(json_integer_value(json_object_get(r[0], "id")), 3);
	snprintf(go, sizeof(go), "%s/go", workdir);
	f = fopen(go, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	for (i = 1; i < 3; i++)
		r[i] = next(&s);
	for (i = 1; i < 3; i++) {
		long long id = json_integer_value(json_object_get(r[i], "id"));

		ck_assert_str_eq(gets_(r[i], "output"), id == 1 ? "one\n" : "two\n");
	}
	for (i = 0; i < 3; i++)
		json_decref(r[i]);
	stop(&s);
}
END_TEST

/* ward shell is a person's: no rate limit unless a policy sets one. One
 * command more than ward serve's default allows a minute all run (before,
 * the 31st was refused with RateLimited). */
START_TEST(test_shell_no_rate_limit)
{
	char *ward = harness_path("ward"), *out = NULL, *err = NULL, *wd_opt;
	char *input = NULL, *state = harness_tmpdir();
	size_t len = 0;
	FILE *in = open_memstream(&input, &len);
	int status;

	setenv("XDG_STATE_HOME", state, 1);
	for (int i = 0; i <= 30; i++)
		fprintf(in, "echo line-%d\n", i);
	fclose(in);
	ck_assert_int_ge(asprintf(&wd_opt, "--workdir=%s", workdir), 0);
	{
		char *argv[] = { ward, (char *)"shell", (char *)"--no-policy", wd_opt, NULL };

		status = harness_capture_input(argv, input, &out, &err);
	}
	ck_assert_msg(WIFEXITED(status), "shell: %d", status);
	ck_assert_msg(strstr(out, "line-29\nline-30\n") && !strstr(err, "rate limit"),
		      "out: '%s' err: '%s'", out, err);
	free(out);
	free(err);
	free(input);
	free(wd_opt);
	free(ward);
	unsetenv("XDG_STATE_HOME");
	harness_rmtree(state);
	free(state);
}
END_TEST

/* ward serve, the agents' door, keeps its default rate limit without a
 * policy: 30 a minute (the default session's creation counts as one, then
 * 29 commands), the next command is refused naming the key. */
START_TEST(test_serve_keeps_rate_limit)
{
	char *state = harness_tmpdir(), line[256], *dump;
	struct srv s;
	json_t *r;

	setenv("XDG_STATE_HOME", state, 1);
	start(&s, NULL);
	for (int i = 1; i < WARD_RATE_PER_MINUTE_DEFAULT; i++) {
		snprintf(line, sizeof(line),
			 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session.exec\","
			 "\"params\":{\"command\":\"true\"}}",
			 i);
		r = call(&s, line);
		dump = json_dumps(r, 0);
		ck_assert_msg(json_object_get(r, "result") && !strstr(dump, "RateLimited"),
			      "call %d refused: %s", i, dump);
		free(dump);
		json_decref(r);
	}
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"session.exec\","
		     "\"params\":{\"command\":\"true\"}}");
	dump = json_dumps(r, 0);
	ck_assert_msg(strstr(dump, "RateLimited") && strstr(dump, "rate_limit.per_minute"), "%s",
		      dump);
	free(dump);
	json_decref(r);
	stop(&s);
	unsetenv("XDG_STATE_HOME");
	harness_rmtree(state);
	free(state);
}
END_TEST

START_TEST(test_shell_lines)
{
	char *ward = harness_path("ward"), *out = NULL, *err = NULL, *wd_opt;
	int status;

	ck_assert_int_ge(asprintf(&wd_opt, "--workdir=%s", workdir), 0);
	{
		char *argv[] = { ward, (char *)"shell", (char *)"--no-policy", wd_opt, NULL };

		status = harness_capture_input(argv,
					       "export WHO=you\n"
					       "alias hi='echo hi'\n"
					       "hi $WHO\n"
					       "mkdir -p d && cd d\n"
					       "basename $PWD\n"
					       "history -p hi\n"
					       "!1\n"
					       "sudo id\n"
					       "unalias hi\n"
					       "alias\n"
					       "exit\n"
					       "echo never\n",
					       &out, &err);
	}
	ck_assert_msg(WIFEXITED(status), "shell: %d", status);
	ck_assert_msg(strcmp(out, "hi you\nd\n    1    0  hi $WHO\nhi you\n") == 0, "out: '%s'",
		      out);
	ck_assert_ptr_nonnull(strstr(err, "NotAuthorized") ? err : strstr(err, "dangerous.privilege"));
	free(out);
	free(err);
	/* an unexported variable, then the next line: kept (bash) */
	if (access("/bin/bash", X_OK) == 0) {
		char *argv[] = { ward, (char *)"shell", (char *)"--no-policy", wd_opt, NULL };

		status = harness_capture_input(argv, "Y=2; echo $Y\necho $Y\n", &out, &err);
		ck_assert_msg(WIFEXITED(status), "shell: %d", status);
		ck_assert_msg(strcmp(out, "2\n2\n") == 0, "out: '%s' err: '%s'", out, err);
	} else {
		out = strdup("");
		err = strdup("");
	}
	free(out);
	free(err);
	/* bad options: said, with the option, exit 125 */
	{
		char *argv[] = { ward, (char *)"serve", (char *)"--isolation=both", NULL };

		status = harness_capture(argv, &out, &err);
		ck_assert_int_eq(WEXITSTATUS(status), 125);
		ck_assert_ptr_nonnull(strstr(err, "unknown isolation 'both'"));
		free(out);
		free(err);
	}
	free(wd_opt);
	free(ward);
}
END_TEST

START_TEST(test_sigterm)
{
	struct srv s;
	json_t *r;
	int status;

	start(&s, "--isolation=shared");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.exec\","
		     "\"params\":{\"command\":\"echo up\"}}");
	ck_assert_str_eq(gets_(r, "output"), "up\n");
	json_decref(r);
	/* ends as at end of input: sessions closed, exit status 0 */
	ck_assert_int_eq(kill(s.pid, SIGTERM), 0);
	ck_assert_int_eq(waitpid(s.pid, &status, 0), s.pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	close(s.in);
	close(s.out);
}
END_TEST

/* Read from the terminal until `want` shows up, then `then` after it (or
 * 20 s pass): `then` is the next prompt, so the editor is reading again. */
static bool pty_wait(int fd, const char *want, const char *then, char *buf, size_t size)
{
	size_t got = 0;
	long long until = time(NULL) + 20;
	const char *w = NULL;

	buf[0] = '\0';
	while (time(NULL) < until && !((w = strstr(buf, want)) && strstr(w + strlen(want), then))) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 1000) <= 0)
			continue;
		n = read(fd, buf + got, size - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
	}
	return (w = strstr(buf, want)) && strstr(w + strlen(want), then);
}

static void pty_send(int fd, const char *keys)
{
	ck_assert_int_eq(write(fd, keys, strlen(keys)), (ssize_t)strlen(keys));
}

START_TEST(test_shell_tty)
{
	char *ward = harness_path("ward"), buf[65536];
	int fd, status;
	pid_t pid = forkpty(&fd, NULL, NULL, NULL);

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (chdir(workdir) < 0)
			_exit(126);
		execl(ward, ward, "shell", "--no-policy", (char *)NULL);
		_exit(127);
	}
	ck_assert(pty_wait(fd, "ward:", "$ ", buf, sizeof(buf)));
	/* edit in the middle of the line: two lefts, then a character */
	pty_send(fd, "echo abc\x1b[D\x1b[DX\r");
	ck_assert_msg(pty_wait(fd, "aXbc\r\n", "$ ", buf, sizeof(buf)), "got: %s", buf);
	/* up: the previous line again; home, delete; end, backspace */
	pty_send(fd, "\x1b[A\x1b[H\x1b[3~\x1b[F\x7f\r");
	ck_assert_msg(pty_wait(fd, "not found", "$ ", buf, sizeof(buf)), "got: %s", buf);
	ck_assert_msg(strstr(buf, "cho: ") != NULL, "got: %s", buf);
	ck_assert_msg(strstr(buf, "$ cho aXb\r") != NULL, "got: %s", buf);
	/* dash says "sh: 1: cho", bash "line 1: cho" */
	ck_assert_msg(strstr(buf, "sh: 1: cho") || strstr(buf, "line 1: cho"),
		      "line numbers are the command's: %s", buf);
	/* ^C while a command runs stops the command, not the shell */
	{
		char line[64], marker[32];

		snprintf(marker, sizeof(marker), "%s", harness_sleep_marker());
		snprintf(line, sizeof(line), "sleep %s; echo not-stopped\r", marker);
		pty_send(fd, line);
		/* until the sleep runs (never: the case's timeout fails it) */
		while (!harness_cmdline_alive("sleep ", marker)) {
			struct timespec pause = { 0, 10 * 1000000 };

			nanosleep(&pause, NULL);
		}
		time_t sent = time(NULL);

		pty_send(fd, "\x03");
		ck_assert_msg(pty_wait(fd, marker, "$ ", buf, sizeof(buf)), "got: %s", buf);
		/* by the ^C, not the session's 30 s timeout: a ^C delivered to
		 * a thread of ward's own that did not block it was lost */
		ck_assert_msg(time(NULL) - sent < 10, "^C took %lld s to stop the command",
			      (long long)(time(NULL) - sent));
	}
	ck_assert_ptr_null(strstr(buf, "\nnot-stopped"));
	pty_send(fd, "exit\r");
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	close(fd);
	free(ward);
}
END_TEST

/* Overlay workdir mode through the server: a session's changes build up,
 * are listed, diffed, applied and discarded by methods of their own. */
/* Lines typed while a command runs are kept: they run next, in order. */
START_TEST(test_shell_typeahead)
{
	char *ward = harness_path("ward"), buf[65536];
	int fd, status;
	pid_t pid = forkpty(&fd, NULL, NULL, NULL);

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (chdir(workdir) < 0)
			_exit(126);
		execl(ward, ward, "shell", "--no-policy", (char *)NULL);
		_exit(127);
	}
	ck_assert(pty_wait(fd, "ward:", "$ ", buf, sizeof(buf)));
	/* the second line is typed at once, while the first still runs */
	pty_send(fd, "sleep 1; echo fir''st\r");
	pty_send(fd, "echo sec''ond\r");
	ck_assert_msg(pty_wait(fd, "\nfirst\r\n", "\nsecond\r\n", buf, sizeof(buf)), "got: %s", buf);
	pty_send(fd, "exit\r");
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(fd);
	free(ward);
}
END_TEST

START_TEST(test_session_changes)
{
	static const char policy[] = "{\"workdir\": {\"mode\": \"overlay\"}, "
				     "\"validators\": {\"enabled\": false}, "
				     "\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}}\n";
	char *state = harness_tmpdir(), path[4096], opt[4200], line[1024];
	struct srv s;
	struct stat st;
	json_t *r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/policy.json", state);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(policy, f);
	fclose(f);
	snprintf(opt, sizeof(opt), "--policy=%s", path);
	policy_opt = opt;
	snprintf(path, sizeof(path), "%s/state", state);
	setenv("XDG_STATE_HOME", path, 1);
	start(&s, NULL);
	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.create\",\"params\":{"
		 "\"workdir\":\"%s\",\"isolation\":\"fresh\"}}",
		 workdir);
	json_decref(call(&s, line));
#define CALL(id, m, p)                                                                             \
	call(&s, "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"" m "\",\"params\":{"           \
		 "\"session\":\"s1\"" p "}}")
	r = CALL(2, "session.exec", ",\"command\":\"echo hi > n.txt\"");
	ck_assert_int_eq(geti(r, "exit_code"), 0);
	ck_assert_str_eq(gets_(r, "workdir.changes.action"), "kept");
	json_decref(r);
	snprintf(path, sizeof(path), "%s/n.txt", workdir);
	ck_assert_int_eq(lstat(path, &st), -1);
	r = CALL(3, "session.changes", "");
	ck_assert_int_eq(geti(r, "changes.count"), 1);
	ck_assert_str_eq(gets_(r, "changes.entries.0.path"), "n.txt");
	ck_assert_str_eq(gets_(r, "changes.entries.0.change"), "added");
	json_decref(r);
	r = CALL(4, "session.changes.diff", "");
	ck_assert_ptr_nonnull(strstr(gets_(r, "changes.diff"), "+hi"));
	json_decref(r);
	r = CALL(5, "session.changes.apply", "");
	ck_assert_ptr_null(json_object_get(r, "error"));
	json_decref(r);
	ck_assert_int_eq(lstat(path, &st), 0);
	r = CALL(6, "session.changes", "");
	ck_assert_int_eq(geti(r, "changes.count"), 0);
	ck_assert(json_is_null(get(r, "changes.name")));
	json_decref(r);
	r = CALL(7, "session.changes.apply", ",\"force\":\"yes\"");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
	json_decref(CALL(8, "session.exec", ",\"command\":\"rm n.txt; echo x > m\""));
	r = CALL(9, "session.changes.discard", "");
	ck_assert_ptr_null(json_object_get(r, "error"));
	json_decref(r);
	ck_assert_int_eq(lstat(path, &st), 0);
	r = CALL(10, "session.changes.discard", "");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
#undef CALL
	stop(&s);
	snprintf(path, sizeof(path), "%s/m", workdir);
	ck_assert_int_eq(lstat(path, &st), -1);
	policy_opt = NULL;
	harness_rmtree(state);
	free(state);
}
END_TEST

/* --shell and session.create's "shell": the shell that runs a session's
 * commands is the one the validators read them as (bash arrays are parsed
 * only in bash's dialect), and the shell tool's description names it. */
START_TEST(test_serve_shell)
{
	struct srv s;
	json_t *r, *tools, *t;
	size_t i;
	char line[1024];
	bool bash = access("/bin/bash", X_OK) == 0;

	start(&s, bash ? "--shell=bash" : "--shell=sh");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	tools = get(r, "tools");
	json_array_foreach(tools, i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")), "shell") == 0)
			ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(t, "description")),
						     bash ? "/bin/bash -c" : "/bin/sh -c"));
	json_decref(r);
	/* the default session: an array, run by bash and read as bash */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.exec\",\"params\":{"
		     "\"command\":\"a=(x y); echo ${a[1]} ${#a[@]}\"}}");
	if (bash) {
		ck_assert_msg(!json_object_get(r, "error"), "%s", json_dumps(r, JSON_COMPACT));
		ck_assert_str_eq(gets_(r, "stdout"), "y 2\n");
	} else {
		ck_assert_ptr_nonnull(json_object_get(r, "error"));
	}
	json_decref(r);
	/* a session asked for sh: sh runs, the validators read dash's dialect */
	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session.create\",\"params\":{"
		 "\"workdir\":\"%s\",\"shell\":\"sh\"}}", workdir);
	r = call(&s, line);
	ck_assert_str_eq(gets_(r, "shell"), "/bin/sh");
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session.exec\",\"params\":{"
		     "\"session\":\"s1\",\"command\":\"a=(x y); echo ${a[1]}\"}}");
	ck_assert_ptr_nonnull(strstr(json_dumps(r, JSON_COMPACT), "syntax error"));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session.exec\",\"params\":{"
		     "\"session\":\"s1\",\"command\":\"echo $'x'\"}}");
	ck_assert_str_eq(gets_(r, "stdout"), "$x\n"); /* dash: $ then 'x' */
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"session.create\",\"params\":{"
		     "\"shell\":\"zsh\"}}");
	ck_assert_int_eq(geti(r, "!code"), -32602);
	json_decref(r);
	stop(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("serve");
	TCase *tc = harness_tcase(s, "serve", "userns");
	/* its own: the mutation tier runs it alone */
	TCase *shell = harness_tcase(s, "serve-shell", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(shell, setup, teardown);
	tcase_add_test(tc, test_mcp);
	tcase_add_test(tc, test_mcp_structured_state);
	tcase_add_test(tc, test_serve_sandbox_flags);
	tcase_add_test(shell, test_serve_shell);
	tcase_add_loop_test(tc, test_mcp_cancel, 0, 2);
	tcase_add_loop_test(tc, test_mcp_progress, 0, 2);
	tcase_add_loop_test(tc, test_session_methods, 0, 2);
	tcase_add_test(tc, test_session_changes);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_concurrent);
	tcase_add_test(tc, test_shell_lines);
	tcase_add_test(tc, test_shell_no_rate_limit);
	tcase_add_test(tc, test_serve_keeps_rate_limit);
	tcase_add_test(tc, test_shell_tty);
	tcase_add_test(tc, test_shell_typeahead);
	tcase_add_test(tc, test_sigterm);
	return harness_main(s);
}
