/* test-serve.c — `ward serve` against a hostile client and a prompt-injected
 * model (issue 14 item 9, issue 21 item 2):
 *
 * - tool arguments never approve: "approved" in any tool call is refused and
 *   nothing runs; over MCP a command on the approval list runs only when the
 *   person accepts the client's elicitation question; decline, cancel, an
 *   error, no answer, no capability: ApprovalRequired;
 * - bounds: an alias bomb stops at the command size limit with a clear error,
 *   history is bounded and so is the answer to a search, sessions and
 *   sandboxes alive at once are capped, session creations are rate limited;
 * - SIGTERM ends the server, its sandboxes killed and nothing left, while the
 *   client reads none of its output. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char *workdir, *policy_path;

struct srv {
	pid_t pid;
	int in, out;
	char buf[1 << 20];
	size_t len;
};

static void setup(void)
{
	workdir = harness_tmpdir();
}

static void teardown(void)
{
	if (policy_path)
		unlink(policy_path);
	free(policy_path);
	policy_path = NULL;
	harness_rmtree(workdir);
	free(workdir);
}

/* A policy file in the workdir's parent-free temp dir: no rate limit unless
 * the text sets one. Returns "--policy=FILE", malloc'd. */
static char *policy(const char *text)
{
	char *opt;
	FILE *f;

	if (!policy_path)
		ck_assert_int_ge(asprintf(&policy_path, "%s.policy.json", workdir), 0);
	f = fopen(policy_path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_ge(asprintf(&opt, "--policy=%s", policy_path), 0);
	return opt;
}

static void start(struct srv *s, const char *policy_opt, const char *extra)
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
		execl(ward, ward, "serve", policy_opt, extra ? extra : "--timeout=30",
		      (char *)NULL);
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

/* The next line from the server, parsed; fails after 60 s of silence. */
static json_t *next(struct srv *s)
{
	for (;;) {
		char *nl = memchr(s->buf, '\n', s->len);
		struct pollfd pf = { .fd = s->out, .events = POLLIN };
		ssize_t n;

		if (nl) {
			json_error_t je;
			json_t *v = json_loadb(s->buf, (size_t)(nl - s->buf), 0, &je);

			ck_assert_msg(v, "bad line: %s", je.text);
			memmove(s->buf, nl + 1, s->len - (size_t)(nl + 1 - s->buf));
			s->len -= (size_t)(nl + 1 - s->buf);
			return v;
		}
		ck_assert_msg(poll(&pf, 1, 60000) == 1, "no line within 60 s");
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

static json_t *get(json_t *v, const char *path)
{
	char key[128];
	const char *p = path;

	while (v && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		v = json_is_array(v) ? json_array_get(v, (size_t)atoi(key)) : json_object_get(v, key);
		p += n + (p[n] == '.');
	}
	return v;
}

static const char *gets_(json_t *v, const char *path)
{
	const char *s = json_string_value(get(v, path));

	ck_assert_msg(s, "no string at %s in %s", path, json_dumps(v, JSON_COMPACT));
	return s;
}

static bool exists(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", workdir, name);
	return lstat(path, &st) == 0;
}

static void make_victim(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/victim", workdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/victim/file", workdir);
	close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
}

#define NO_RATE "\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}"

static void initialize(struct srv *s, bool elicitation)
{
	json_t *r;

	r = call(s, elicitation ?
			    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
			    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"elicitation\":{}},"
			    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}" :
			    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
			    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
			    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	ck_assert_ptr_null(json_object_get(r, "error"));
	json_decref(r);
	send_line(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

/* ---- the model approving itself ------------------------------------------------ */

START_TEST(test_tool_args_never_approve)
{
	char *pol = policy("{" NO_RATE "}");
	struct srv s;
	json_t *r, *tools, *t;
	size_t i;

	make_victim();
	start(&s, pol, NULL);
	initialize(&s, true); /* even a client that could ask */
	/* no tool offers "approved" */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	tools = get(r, "result.tools");
	ck_assert_int_gt(json_array_size(tools), 5);
	json_array_foreach(tools, i, t)
		ck_assert_msg(!get(t, "inputSchema.properties.approved"), "tool %s offers approved",
			      gets_(t, "name"));
	json_decref(r);
	/* the call: refused, nothing ran, no question asked */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"rm -rf victim\","
		     "\"approved\":true}}}");
	ck_assert_int_eq(json_integer_value(get(r, "id")), 2);
	ck_assert(json_is_true(get(r, "result.isError")));
	ck_assert_ptr_nonnull(strstr(gets_(r, "result.content.0.text"), "approved"));
	json_decref(r);
	ck_assert(exists("victim/file"));
	/* the same through history_replay: the refused command is in the history
	 * (no elicitation capability in a second server, so no question) */
	stop(&s);
	start(&s, pol, NULL);
	initialize(&s, false);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"rm -rf victim\"}}}");
	ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"), "ApprovalRequired");
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"history_replay\",\"arguments\":{\"id\":1,\"approved\":true}}}");
	ck_assert(json_is_true(get(r, "result.isError")));
	ck_assert_ptr_null(get(r, "result.structuredContent"));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"history_replay\",\"arguments\":{\"id\":1}}}");
	ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"), "ApprovalRequired");
	json_decref(r);
	/* any argument a tool's schema does not list is refused */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"touch made\",\"approve\":1}}}");
	ck_assert(json_is_true(get(r, "result.isError")));
	json_decref(r);
	ck_assert(!exists("made"));
	ck_assert(exists("victim/file"));
	/* the host program's own JSON-RPC keeps its word */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session.exec\",\"params\":{"
		     "\"command\":\"rm -rf victim\",\"approved\":true}}");
	ck_assert_msg(json_is_null(get(r, "result.error")), "%s", json_dumps(r, 0));
	json_decref(r);
	ck_assert(!exists("victim"));
	stop(&s);
	free(pol);
}
END_TEST

/* The question the server puts: an elicitation/create request. */
static const char *expect_question(json_t *q)
{
	ck_assert_str_eq(gets_(q, "method"), "elicitation/create");
	ck_assert_str_eq(gets_(q, "jsonrpc"), "2.0");
	ck_assert_ptr_nonnull(strstr(gets_(q, "params.message"), "rm -rf victim"));
	ck_assert_str_eq(gets_(q, "params.requestedSchema.properties.approve.type"), "boolean");
	return gets_(q, "id");
}

static json_t *shell_rm(struct srv *s, int id)
{
	char line[256];

	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"shell\",\"arguments\":{\"command\":\"rm -rf victim\"}}}", id);
	return call(s, line);
}

static void answer(struct srv *s, const char *id, const char *result)
{
	char line[512];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",%s}", id, result);
	send_line(s, line);
}

START_TEST(test_elicitation_accept)
{
	char *pol = policy("{" NO_RATE "}");
	struct srv s;
	json_t *q, *r;
	char *id;

	make_victim();
	start(&s, pol, NULL);
	initialize(&s, true);
	q = shell_rm(&s, 1);
	id = strdup(expect_question(q));
	json_decref(q);
	/* the server keeps answering while it waits */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
	ck_assert_str_eq(gets_(r, "id"), "p");
	json_decref(r);
	/* answers to no open question, malformed ones, and an accept without
	 * the confirming boolean are not acceptance; nothing is answered back */
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"ward-approval-999\",\"result\":{\"action\":"
		      "\"accept\",\"content\":{\"approve\":true}}}");
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"ward-approval-x\",\"result\":5}");
	send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{\"action\":\"accept\"}}");
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p2\",\"method\":\"ping\"}");
	ck_assert_str_eq(gets_(r, "id"), "p2");
	json_decref(r);
	ck_assert(exists("victim/file"));
	answer(&s, id, "\"result\":{\"action\":\"accept\",\"content\":{\"approve\":true}}");
	r = next(&s);
	ck_assert_int_eq(json_integer_value(get(r, "id")), 1);
	ck_assert_msg(json_is_false(get(r, "result.isError")), "%s", json_dumps(r, 0));
	json_decref(r);
	ck_assert(!exists("victim"));
	/* the same answer again opens nothing */
	make_victim();
	answer(&s, id, "\"result\":{\"action\":\"accept\",\"content\":{\"approve\":true}}");
	free(id);
	q = shell_rm(&s, 2);
	id = strdup(expect_question(q));
	json_decref(q);
	answer(&s, id, "\"result\":{\"action\":\"accept\",\"content\":{\"approve\":false}}");
	r = next(&s);
	ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"), "ApprovalRequired");
	json_decref(r);
	ck_assert(exists("victim/file"));
	free(id);
	stop(&s);
	free(pol);
}
END_TEST

/* The person is shown what will run: an alias's expansion, a replayed
 * entry's command — not the alias's name or a history number the model
 * chose. */
START_TEST(test_question_shows_what_runs)
{
	char *pol = policy("{" NO_RATE "}");
	struct srv s;
	json_t *q, *r;
	const char *msg;
	char *id;

	make_victim();
	start(&s, pol, NULL);
	initialize(&s, true);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"alias_set\",\"arguments\":{\"name\":\"tidy\","
		     "\"value\":\"rm -rf victim\"}}}");
	ck_assert_msg(json_is_false(get(r, "result.isError")), "%s", json_dumps(r, 0));
	json_decref(r);
	q = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"shell\",\"arguments\":{\"command\":\"tidy\"}}}");
	id = strdup(expect_question(q)); /* the message names rm -rf victim */
	msg = gets_(q, "params.message");
	ck_assert_msg(strstr(msg, "typed as: tidy"), "%s", msg);
	json_decref(q);
	answer(&s, id, "\"result\":{\"action\":\"decline\"}");
	free(id);
	r = next(&s);
	ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"), "ApprovalRequired");
	json_decref(r);
	/* the declined command replayed by its number: shown in full again */
	q = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"history_replay\",\"arguments\":{\"id\":1}}}");
	if (json_object_get(q, "method")) {
		id = strdup(expect_question(q));
		ck_assert_msg(strstr(gets_(q, "params.message"), "replay of history entry"), "%s",
			      gets_(q, "params.message"));
		answer(&s, id, "\"result\":{\"action\":\"decline\"}");
		free(id);
		json_decref(q);
		q = next(&s);
	}
	json_decref(q);
	ck_assert(exists("victim/file"));
	stop(&s);
	free(pol);
}
END_TEST

/* Decline, cancel, an error response, no answer in time, the client gone:
 * refused, nothing ran. */
START_TEST(test_elicitation_refusals)
{
	static const char *const answers[] = {
		"\"result\":{\"action\":\"decline\"}",
		"\"result\":{\"action\":\"cancel\"}",
		"\"result\":{\"action\":\"decline\",\"content\":{\"approve\":true}}",
		"\"error\":{\"code\":-32601,\"message\":\"no\"}",
		NULL, /* no answer: the bounded wait */
	};
	char *pol = policy("{" NO_RATE ", \"session\": {\"limits\": {\"approval_timeout\": 1}}}");
	struct srv s;
	json_t *q, *r;
	size_t i;

	make_victim();
	start(&s, pol, NULL);
	initialize(&s, true);
	for (i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		char *id;

		q = shell_rm(&s, (int)i + 1);
		id = strdup(expect_question(q));
		json_decref(q);
		if (answers[i])
			answer(&s, id, answers[i]);
		r = next(&s);
		ck_assert_int_eq(json_integer_value(get(r, "id")), (int)i + 1);
		ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"),
				 "ApprovalRequired");
		json_decref(r);
		ck_assert(exists("victim/file"));
		free(id);
	}
	/* the client closes its end while a question is open: refused, and the
	 * answer still comes */
	q = shell_rm(&s, 9);
	expect_question(q);
	json_decref(q);
	close(s.in);
	r = next(&s);
	ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"), "ApprovalRequired");
	json_decref(r);
	ck_assert(exists("victim/file"));
	s.in = open("/dev/null", O_WRONLY | O_CLOEXEC);
	stop(&s);
	free(pol);
}
END_TEST

/* An answer is acceptance only under the question's own id, spelt as the
 * server spelt it, and only as a well-formed response: "ward-approval-01"
 * or "ward-approval-+1" is no answer to "ward-approval-1" (strtoul reads
 * them alike), and a response holding an error is a refusal whatever
 * result it carries beside it. */
START_TEST(test_elicitation_odd_answers)
{
	static const char accept[] = "\"result\":{\"action\":\"accept\",\"content\":"
				     "{\"approve\":true}}";
	char *pol = policy("{" NO_RATE ", \"session\": {\"limits\": {\"approval_timeout\": 1}}}");
	struct srv s;
	json_t *q, *r;
	int i;

	make_victim();
	start(&s, pol, NULL);
	initialize(&s, true);
	for (i = 0; i < 5; i++) {
		const char *id, *num;
		char odd[96];

		q = shell_rm(&s, i + 1);
		id = expect_question(q);
		num = id + strlen("ward-approval-");
		ck_assert_msg(strncmp(id, "ward-approval-", strlen("ward-approval-")) == 0, "%s",
			      id);
		switch (i) {
		case 0:
			snprintf(odd, sizeof(odd), "ward-approval-0%s", num);
			break;
		case 1:
			snprintf(odd, sizeof(odd), "ward-approval-+%s", num);
			break;
		case 2:
			snprintf(odd, sizeof(odd), "ward-approval- %s", num);
			break;
		default:
			snprintf(odd, sizeof(odd), "%s", id);
			break;
		}
		if (i == 3)
			answer(&s, odd, "\"error\":{\"code\":1,\"message\":\"no\"},"
					"\"result\":{\"action\":\"accept\",\"content\":"
					"{\"approve\":true}}");
		else if (i == 4)
			answer(&s, odd, "\"result\":{\"action\":\"accept\",\"content\":"
					"{\"approve\":true}},\"error\":null");
		else
			answer(&s, odd, accept);
		json_decref(q);
		r = next(&s);
		ck_assert_int_eq(json_integer_value(get(r, "id")), i + 1);
		ck_assert_msg(json_is_true(get(r, "result.isError")), "answer %d ran it: %.300s", i,
			      gets_(r, "result.content.0.text"));
		ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"),
				 "ApprovalRequired");
		json_decref(r);
		ck_assert(exists("victim/file"));
	}
	stop(&s);
	free(pol);
}
END_TEST

/* A client that cannot ask: refused at once, no question sent. */
START_TEST(test_elicitation_no_capability)
{
	char *pol = policy("{" NO_RATE "}");
	struct srv s;
	json_t *r;

	make_victim();
	start(&s, pol, NULL);
	initialize(&s, false);
	r = shell_rm(&s, 1);
	ck_assert_int_eq(json_integer_value(get(r, "id")), 1);
	ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"), "ApprovalRequired");
	json_decref(r);
	/* nor does a declared capability of another kind count */
	stop(&s);
	start(&s, pol, NULL);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
		     "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"elicitation\":true,"
		     "\"sampling\":{}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	json_decref(r);
	r = shell_rm(&s, 2);
	ck_assert_str_eq(gets_(r, "result.structuredContent.error.kind"), "ApprovalRequired");
	json_decref(r);
	ck_assert(exists("victim/file"));
	stop(&s);
	free(pol);
}
END_TEST

/* ---- the server's own resources ---------------------------------------------------- */

/* The alias chain: a0 = a1;a1;a1;a1, ... twelve levels. */
START_TEST(test_alias_bomb)
{
	char *pol = policy("{" NO_RATE "}");
	struct srv s;
	json_t *r;
	char line[256];
	int i;

	start(&s, pol, NULL);
	for (i = 0; i < 12; i++) {
		snprintf(line, sizeof(line),
			 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session.alias.set\",\"params\":"
			 "{\"name\":\"a%d\",\"value\":\"a%d;a%d;a%d;a%d\"}}",
			 i, i, i + 1, i + 1, i + 1, i + 1);
		r = call(&s, line);
		ck_assert_ptr_null(json_object_get(r, "error"));
		json_decref(r);
	}
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"session.alias.set\",\"params\":"
		     "{\"name\":\"a12\",\"value\":\"echo boom\"}}");
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"session.exec\",\"params\":"
		     "{\"command\":\"a0\"}}");
	ck_assert_str_eq(gets_(r, "result.error.kind"), "InvalidParameters");
	ck_assert_msg(strstr(gets_(r, "result.error.message"), "session.limits.command_bytes"),
		      "%s", gets_(r, "result.error.message"));
	ck_assert_int_eq(json_integer_value(get(r, "result.exit_code")), 125);
	json_decref(r);
	/* and the server is there for the next request */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"session.exec\",\"params\":"
		     "{\"command\":\"echo fine\"}}");
	ck_assert_str_eq(gets_(r, "result.output"), "fine\n");
	json_decref(r);
	stop(&s);
	free(pol);
}
END_TEST

/* History by entries; the answer to a search capped (half a response). */
START_TEST(test_history_bounded)
{
	char *pol = policy("{" NO_RATE ", \"session\": {\"limits\": {\"history_entries\": 3, "
			   "\"response_bytes\": 262144}}}");
	struct srv s;
	json_t *r;
	char *line, *big;
	int i;

	start(&s, pol, NULL);
	/* refused commands are recorded and run nothing */
	big = malloc(60001);
	memset(big, 'x', 60000);
	big[60000] = '\0';
	for (i = 0; i < 5; i++) {
		ck_assert_int_ge(asprintf(&line,
					  "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session.exec\","
					  "\"params\":{\"command\":\"sudo %d %s\"}}",
					  i, i, i < 2 ? "small" : big),
				 0);
		r = call(&s, line);
		ck_assert_str_eq(gets_(r, "result.error.kind"), "NotAuthorized");
		json_decref(r);
		free(line);
	}
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"session.history.search\"}");
	/* three kept (the oldest dropped); two of 120 kB do not fit in 128 kB */
	ck_assert_int_eq(json_array_size(get(r, "result.history")), 1);
	ck_assert_int_eq(json_integer_value(get(r, "result.omitted")), 2);
	ck_assert_int_eq(json_integer_value(get(r, "result.history.0.id")), 5);
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"session.history.search\","
		     "\"params\":{\"prefix\":\"sudo 1\"}}");
	ck_assert_int_eq(json_array_size(get(r, "result.history")), 0); /* dropped */
	json_decref(r);
	/* one response over the limit: an error under the same id, not the
	 * response (50,000 control characters escaped six times as long) */
	{
		size_t k, o = 0;

		line = malloc(50000 * 6 + 256);
		o += (size_t)sprintf(line, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":"
					   "\"session.alias.set\",\"params\":{\"name\":\"c\","
					   "\"value\":\"");
		for (k = 0; k < 50000; k++)
			o += (size_t)sprintf(line + o, "\\u0001");
		sprintf(line + o, "\"}}");
		r = call(&s, line);
		ck_assert_ptr_null(json_object_get(r, "error"));
		json_decref(r);
		free(line);
	}
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"session.alias.list\"}");
	ck_assert_int_eq(json_integer_value(get(r, "id")), 12);
	ck_assert_msg(strstr(gets_(r, "error.message"), "session.limits.response_bytes"), "%s",
		      gets_(r, "error.message"));
	json_decref(r);
	free(big);
	stop(&s);
	free(pol);
}
END_TEST

START_TEST(test_session_caps)
{
	char *pol = policy("{" NO_RATE ", \"session\": {\"limits\": {\"sessions\": 2, "
			   "\"sandboxes\": 1}}}");
	struct srv s;
	json_t *r;

	start(&s, pol, NULL);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.create\",\"params\":"
		     "{\"isolation\":\"shared\"}}");
	ck_assert_ptr_null(json_object_get(r, "error"));
	json_decref(r);
	/* a second sandbox: over the cap */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.create\",\"params\":"
		     "{\"isolation\":\"shared\"}}");
	ck_assert_ptr_nonnull(strstr(gets_(r, "error.message"), "session.limits.sandboxes"));
	json_decref(r);
	/* a fresh session holds none until a command runs */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session.create\"}");
	ck_assert_ptr_null(json_object_get(r, "error"));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session.create\"}");
	ck_assert_ptr_nonnull(strstr(gets_(r, "error.message"), "session.limits.sessions"));
	json_decref(r);
	/* its command would be a second sandbox alive */
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session.exec\",\"params\":"
		     "{\"session\":\"s2\",\"command\":\"echo x\"}}");
	ck_assert_ptr_nonnull(strstr(gets_(r, "error.message"), "session.limits.sandboxes"));
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"session.close\",\"params\":"
		     "{\"session\":\"s1\"}}");
	json_decref(r);
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session.exec\",\"params\":"
		     "{\"session\":\"s2\",\"command\":\"echo x\"}}");
	ck_assert_str_eq(gets_(r, "result.output"), "x\n");
	json_decref(r);
	stop(&s);
	free(pol);

	/* session creations count against the rate limit */
	pol = policy("{\"rate_limit\": {\"per_minute\": 3, \"per_hour\": 0}}");
	start(&s, pol, NULL);
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.create\"}"));
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.create\"}"));
	json_decref(call(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session.create\"}"));
	r = call(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session.create\"}");
	ck_assert_str_eq(gets_(r, "error.data.kind"), "RateLimited");
	json_decref(r);
	stop(&s);
	free(pol);
}
END_TEST

/* ---- SIGTERM with a client that never reads -------------------------------------- */

static bool cgroups_left(pid_t pid)
{
	static const char *const ctrls[] = { "memory", "pids", "cpu", "cpuacct", "blkio",
					     "unified" };
	char prefix[32], path[256];
	struct dirent *de;
	bool left = false;
	size_t i;
	DIR *d;

	for (i = 0; i < 2 * sizeof(ctrls) / sizeof(ctrls[0]); i++) {
		bool v1 = i % 2;

		snprintf(prefix, sizeof(prefix), "%sw%d-", v1 ? "ward-" : "", (int)pid);
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s%s", ctrls[i / 2], v1 ? "" : "/ward");
		if (!(d = opendir(path)))
			continue;
		while ((de = readdir(d)))
			left = left || strncmp(de->d_name, prefix, strlen(prefix)) == 0;
		closedir(d);
	}
	return left;
}

START_TEST(test_sigterm_unread)
{
	/* fresh and shared isolation; SIGTERM and SIGINT */
	const char *iso = _i & 1 ? "--isolation=shared" : "--isolation=fresh";
	int sig = _i & 2 ? SIGINT : SIGTERM;
	char *pol = policy("{" NO_RATE "}");
	char marker[64], line[512], *big;
	struct srv s;
	int pipe_size, queued = 0, pidfd, status, i;
	struct pollfd pf;

	snprintf(marker, sizeof(marker), "%d%d", (int)getpid(), 4000 + _i);
	start(&s, pol, iso);
	/* a command that would run for an hour, on its own thread */
	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.exec\",\"params\":"
		 "{\"command\":\"sleep %s\",\"concurrent\":true,\"timeout\":3600}}",
		 marker);
	send_line(&s, line);
	for (i = 0; i < 600 && !harness_cmdline_alive("sleep ", marker); i++)
		usleep(50000);
	ck_assert_msg(harness_cmdline_alive("sleep ", marker), "the command never started");
	/* an alias of 200 kB listed again and again: far more than the pipe
	 * holds, and nobody reads */
	big = malloc(200001);
	memset(big, 'y', 200000);
	big[200000] = '\0';
	{
		char *set;

		ck_assert_int_ge(asprintf(&set, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
					  "\"session.alias.set\",\"params\":{\"name\":\"big\","
					  "\"value\":\"%s\"}}", big), 0);
		send_line(&s, set);
		free(set);
	}
	for (i = 0; i < 60; i++)
		send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session.alias.list\"}");
	/* wait until the server's output pipe is full */
	pipe_size = fcntl(s.out, F_GETPIPE_SZ);
	for (i = 0; i < 600 && queued < pipe_size - 4096; i++) {
		ck_assert_int_eq(ioctl(s.out, FIONREAD, &queued), 0);
		if (queued < pipe_size - 4096)
			usleep(50000);
	}
	/* full but for the last page's slack */
	ck_assert_int_ge(queued, pipe_size - 4096);
	pidfd = (int)syscall(SYS_pidfd_open, s.pid, 0);
	ck_assert_int_ge(pidfd, 0);
	ck_assert_int_eq(kill(s.pid, sig), 0);
	/* it ends without anyone draining its output */
	pf.fd = pidfd;
	pf.events = POLLIN;
	ck_assert_msg(poll(&pf, 1, 60000) == 1, "ward serve did not end on SIGTERM");
	ck_assert_int_eq(waitpid(s.pid, &status, 0), s.pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	/* nothing left: the command, its sandbox, its cgroups */
	ck_assert_msg(!harness_cmdline_alive("sleep ", marker), "the command outlived ward serve");
	ck_assert_msg(!cgroups_left(s.pid), "cgroups of ward serve left");
	close(pidfd);
	close(s.in);
	close(s.out);
	free(big);
	free(pol);
}
END_TEST

/* Overlay mode holds a command's writes aside for the person to review:
 * the model's changes_apply asks the person, and applies only on their
 * acceptance; it cannot force over their edits, nor apply without a client
 * that can ask. */
static json_t *tool(struct srv *s, int id, const char *name, const char *args)
{
	char line[512];

	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"%s\",\"arguments\":{%s}}}", id, name, args);
	return call(s, line);
}

START_TEST(test_apply_is_the_persons)
{
	char *pol = policy("{" NO_RATE ", \"workdir\": {\"mode\": \"overlay\"}}");
	char *state = harness_tmpdir();
	struct srv s;
	json_t *q, *r;
	char *id;

	setenv("XDG_STATE_HOME", state, 1);
	/* a client that cannot ask: refused, nothing applied */
	start(&s, pol, NULL);
	initialize(&s, false);
	json_decref(tool(&s, 1, "shell", "\"command\":\"echo planted > made.txt\""));
	r = tool(&s, 2, "changes_apply", "");
	ck_assert_msg(json_is_true(get(r, "result.isError")), "%s", json_dumps(r, 0));
	ck_assert_ptr_nonnull(strstr(gets_(r, "result.content.0.text"), "ApprovalRequired"));
	json_decref(r);
	ck_assert(!exists("made.txt"));
	/* the model cannot force */
	r = tool(&s, 3, "changes_apply", "\"force\":true");
	ck_assert(json_is_true(get(r, "result.isError")));
	json_decref(r);
	ck_assert(!exists("made.txt"));
	stop(&s);

	/* a client that asks: the person sees the changes; decline keeps them */
	start(&s, pol, NULL);
	initialize(&s, true);
	json_decref(tool(&s, 1, "shell", "\"command\":\"echo planted > made.txt\""));
	q = tool(&s, 2, "changes_apply", "");
	ck_assert_str_eq(gets_(q, "method"), "elicitation/create");
	ck_assert_ptr_nonnull(strstr(gets_(q, "params.message"), "made.txt (added)"));
	id = strdup(gets_(q, "id"));
	json_decref(q);
	answer(&s, id, "\"result\":{\"action\":\"decline\"}");
	free(id);
	r = next(&s);
	ck_assert(json_is_true(get(r, "result.isError")));
	json_decref(r);
	ck_assert(!exists("made.txt"));
	/* accept applies */
	q = tool(&s, 3, "changes_apply", "");
	id = strdup(gets_(q, "id"));
	json_decref(q);
	answer(&s, id, "\"result\":{\"action\":\"accept\",\"content\":{\"approve\":true}}");
	free(id);
	r = next(&s);
	ck_assert_msg(json_is_false(get(r, "result.isError")), "%s", json_dumps(r, 0));
	json_decref(r);
	ck_assert(exists("made.txt"));
	stop(&s);
	unsetenv("XDG_STATE_HOME");
	harness_rmtree(state);
	free(state);
	free(pol);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("serve-hostile");
	TCase *tc = harness_tcase(s, "serve-hostile", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tool_args_never_approve);
	tcase_add_test(tc, test_elicitation_accept);
	tcase_add_test(tc, test_question_shows_what_runs);
	tcase_add_test(tc, test_elicitation_refusals);
	tcase_add_test(tc, test_elicitation_odd_answers);
	tcase_add_test(tc, test_elicitation_no_capability);
	tcase_add_test(tc, test_apply_is_the_persons);
	tcase_add_loop_test(tc, test_sigterm_unread, 0, 4);
	/* what a model may not make the server hold: a tcase of its own, so
	 * that the mutants of these bounds run it alone */
	tc = harness_tcase(s, "serve-budgets", "userns");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_alias_bomb);
	tcase_add_test(tc, test_history_bounded);
	tcase_add_test(tc, test_session_caps);
	return harness_main(s);
}
