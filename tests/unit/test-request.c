/* test-request.c — the JSON request: every malformed input gets a clear
 * error; the result object's shape. */
#include "harness.h"
#include "ward/request.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static struct ward_error *parse_fails(const char *text)
{
	struct ward_request req;
	struct ward_error *err = NULL;

	ck_assert_msg(ward_request_parse(text, strlen(text), &req, &err) < 0, "accepted: %s", text);
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_ptr_null(req.command);
	return err;
}

static void expect_error(const char *text, const char *needle)
{
	struct ward_error *err = parse_fails(text);

	ck_assert_msg(strstr(err->message, needle), "for %s: message '%s' lacks '%s'", text,
		      err->message, needle);
	ward_error_free(err);
}

START_TEST(test_valid)
{
	struct ward_request req;
	struct ward_error *err = NULL;
	const char *t = "{\"command\": \"ls -la\", \"workdir\": \"/tmp\", \"timeout\": 30}";

	ck_assert_int_eq(ward_request_parse(t, strlen(t), &req, &err), 0);
	ck_assert_str_eq(req.command, "ls -la");
	ck_assert_str_eq(req.workdir, "/tmp");
	ck_assert_int_eq(req.timeout, 30);
	ck_assert(!req.approved);
	ward_request_release(&req);

	t = "{\"command\":\"x\",\"workdir\":null,\"timeout\":null,\"approved\":true}";
	ck_assert_int_eq(ward_request_parse(t, strlen(t), &req, &err), 0);
	ck_assert_ptr_null(req.workdir);
	ck_assert_int_eq(req.timeout, 0);
	ck_assert(req.approved);
	ward_request_release(&req);
}
END_TEST

START_TEST(test_shell_field)
{
	struct ward_request req;
	struct ward_error *err = NULL;
	const char *t = "{\"command\": \"ls\", \"shell\": false}";

	ck_assert_int_eq(ward_request_parse(t, strlen(t), &req, &err), 0);
	ck_assert(req.no_shell);
	ward_request_release(&req);
	t = "{\"command\": \"ls\", \"shell\": true}";
	ck_assert_int_eq(ward_request_parse(t, strlen(t), &req, &err), 0);
	ck_assert(!req.no_shell);
	ward_request_release(&req);
	t = "{\"command\": \"ls\"}";
	ck_assert_int_eq(ward_request_parse(t, strlen(t), &req, &err), 0);
	ck_assert(!req.no_shell);
	ward_request_release(&req);
	t = "{\"command\": \"ls\", \"shell\": \"bash\"}";
	ck_assert_int_eq(ward_request_parse(t, strlen(t), &req, &err), 0);
	ck_assert(!req.no_shell && req.bash);
	ward_request_release(&req);
	t = "{\"command\": \"ls\", \"shell\": \"sh\"}";
	ck_assert_int_eq(ward_request_parse(t, strlen(t), &req, &err), 0);
	ck_assert(!req.no_shell && !req.bash);
	ward_request_release(&req);
	expect_error("{\"command\": \"ls\", \"shell\": 0}",
		     "request: shell: must be \"sh\", \"bash\" or a boolean, got an integer");
	expect_error("{\"command\": \"ls\", \"shell\": \"zsh\"}",
		     "request: shell: unknown shell 'zsh' (known: sh, bash, true, false)");
}
END_TEST

START_TEST(test_malformed)
{
	expect_error("", "empty");
	expect_error("   \n", "empty");
	expect_error("{", "not valid JSON");
	expect_error("{\"command\": \"ls\"", "line 1");
	expect_error("{\"command\": \"ls\",}", "not valid JSON");
	expect_error("[\"ls\"]", "must be a JSON object, got an array");
	expect_error("\"ls\"", "not valid JSON"); /* jansson refuses bare strings by default */
	expect_error("null", "not valid JSON");
	expect_error("{}", "request: command: is missing");
	/* a required key misspelt: the misspelling named, not only the absence */
	expect_error("{\"comand\": \"ls\"}", "request: unknown key \"comand\" (valid: command, "
					   "workdir, timeout, approved, shell)");
	expect_error("{\"command\": 42}", "request: command: must be a string, got an integer");
	expect_error("{\"command\": [\"ls\"]}", "request: command: must be a string, got an array");
	expect_error("{\"command\": \"\"}", "request: command: is empty");
	expect_error("{\"command\": \"  \\n\"}", "request: command: is empty");
	expect_error("{\"command\": \"ls\", \"command\": \"rm\"}", "duplicate");
	expect_error("{\"command\": \"ls\", \"timout\": 5}", "request: unknown key \"timout\" (valid: command, workdir, timeout, approved, shell)");
	expect_error("{\"command\": \"ls\", \"workdir\": 3}", "request: workdir: must be a string, got an integer");
	expect_error("{\"command\": \"ls\", \"workdir\": \"\"}", "request: workdir: is empty");
	expect_error("{\"command\": \"ls\", \"approved\": \"yes\"}", "request: approved: must be a boolean, got a string");
	expect_error("{\"command\": \"a\\u0000b\"}", "not valid JSON");
	expect_error("{\"command\": \"ls\"} trailing", "not valid JSON");
}
END_TEST

START_TEST(test_timeouts)
{
	expect_error("{\"command\": \"ls\", \"timeout\": 0}", "at least 1 second, got 0");
	expect_error("{\"command\": \"ls\", \"timeout\": -5}", "at least 1 second, got -5");
	expect_error("{\"command\": \"ls\", \"timeout\": 1.5}", "whole number of seconds, got 1.5");
	expect_error("{\"command\": \"ls\", \"timeout\": \"5\"}", "integer number of seconds, got a string");
	expect_error("{\"command\": \"ls\", \"timeout\": true}", "got a boolean");
	expect_error("{\"command\": \"ls\", \"timeout\": 99999999999}", "at most");
	expect_error("{\"command\": \"ls\", \"timeout\": 1e3}", "whole number");
}
END_TEST

START_TEST(test_too_large)
{
	size_t n = WARD_REQUEST_MAX + 10;
	char *big = malloc(n + 1);
	struct ward_request req;
	struct ward_error *err = NULL;

	memset(big, ' ', n);
	big[n] = '\0';
	ck_assert_int_lt(ward_request_parse(big, n, &req, &err), 0);
	ck_assert_ptr_nonnull(strstr(err->message, "larger than"));
	ward_error_free(err);
	free(big);
}
END_TEST

START_TEST(test_sanitize)
{
	size_t n;
	char *s = ward_utf8_sanitize("ok \xC3\xA9 bad \xFF\xC3 end", 17, &n);

	ck_assert_str_eq(s, "ok \xC3\xA9 bad \xEF\xBF\xBD\xEF\xBF\xBD end");
	free(s);
	s = ward_utf8_sanitize("\xED\xA0\x80", 3, &n); /* a surrogate: not UTF-8 */
	ck_assert_str_eq(s, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	free(s);
	s = ward_utf8_sanitize("\xC0\xAF", 2, &n); /* overlong */
	ck_assert_str_eq(s, "\xEF\xBF\xBD\xEF\xBF\xBD");
	free(s);
	s = ward_utf8_sanitize("\xF0\x9F\x98\x80", 4, &n);
	ck_assert_str_eq(s, "\xF0\x9F\x98\x80");
	free(s);
}
END_TEST

START_TEST(test_result_json)
{
	struct ward_result res;
	struct ward_error e = { .kind = WARD_ERR_TIMEOUT, .message = "command timed out after 1 s" };
	json_t *o;
	char *s;

	memset(&res, 0, sizeof(res));
	res.output = (char *)"hi\xFF\n";
	res.output_len = 4;
	res.stderr_text = (char *)"";
	res.exit_code = 124;
	res.signal = 9;
	res.timed_out = true;
	res.sandboxed = true;
	res.namespaces = WARD_NS_USER | WARD_NS_PID;
	res.error = &e;
	s = ward_result_to_json(&res);
	ck_assert_ptr_nonnull(s);
	o = json_loads(s, 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "hi\xEF\xBF\xBD\n");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "exit_code")), 124);
	ck_assert(json_is_false(json_object_get(o, "success")));
	ck_assert(json_is_true(json_object_get(o, "sandboxed")));
	ck_assert(json_is_true(json_object_get(o, "timed_out")));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "signal")), 9);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "kind")),
			 "Timeout");
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(o, "layers"), "namespaces")), 2);
	json_decref(o);
	free(s);

	res.error = NULL;
	res.exit_code = 0;
	res.signal = 0;
	s = ward_result_to_json(&res);
	o = json_loads(s, 0, NULL);
	ck_assert(json_is_true(json_object_get(o, "success")));
	ck_assert(json_is_null(json_object_get(o, "error")));
	ck_assert(json_is_null(json_object_get(o, "signal")));
	json_decref(o);
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("request");
	TCase *tc = harness_tcase(s, "request", NULL);

	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_shell_field);
	tcase_add_test(tc, test_timeouts);
	tcase_add_test(tc, test_too_large);
	tcase_add_test(tc, test_sanitize);
	tcase_add_test(tc, test_result_json);
	return harness_main(s);
}
