/* test-jschema.c — the one checker of JSON input (runtime/jschema.c): what
 * jansson's json_unpack_ex() refuses, worded once, naming the key's path at
 * every depth, in objects and arrays, and the valid keys of an unknown one. */
#include "harness.h"
#include "runtime/util/util-internal.h"

#include <string.h>

static json_t *doc(const char *text)
{
	json_t *v = json_loads(text, 0, NULL);

	ck_assert_msg(v != NULL, "bad test JSON: %s", text);
	return v;
}

static void expect(struct ward_error *err, const char *message)
{
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_str_eq(err->message, message);
	ward_error_free(err);
}

START_TEST(test_wording)
{
	struct ward_error *err = NULL;
	const char *s, *t;
	json_int_t n;
	size_t len;
	int b;
	json_t *v;

	v = doc("{\"a\": \"x\", \"b\": 2}");
	ck_assert_int_eq(ward_jschema_unpack(v, "p", NULL, &err, "{s:s, s?I, s?b}", "a", &s, "b", &n,
					     "c", &b), 0);
	ck_assert_str_eq(s, "x");
	ck_assert_int_eq(n, 2);
	json_decref(v);

	v = doc("{\"a\": 1}");
	ck_assert_int_eq(ward_jschema_unpack(v, "p", NULL, &err, "{s:s}", "a", &s), -1);
	expect(err, "p: a: must be a string, got an integer");
	err = NULL;
	ck_assert_int_eq(ward_jschema_unpack(v, NULL, "top", &err, "{s:s}", "a", &s), -1);
	expect(err, "top.a: must be a string, got an integer");
	json_decref(v);

	/* nested objects and arrays: the whole path; a '%' takes two pointers */
	v = doc("{\"o\": {\"l\": [\"x\", {\"k\": true}]}, \"s\": \"ab\"}");
	err = NULL;
	ck_assert_int_eq(ward_jschema_unpack(v, "p", "base", &err, "{s:{s:[s, {s:s}]}, s:s%}", "o",
					     "l", &s, "k", &t, "s", &s, &len), -1);
	expect(err, "p: base.o.l[1].k: must be a string, got a boolean");
	json_decref(v);

	v = doc("{\"o\": {}}");
	err = NULL;
	ck_assert_int_eq(ward_jschema_unpack(v, NULL, NULL, &err, "{s:{s:I}}", "o", "n", &n), -1);
	expect(err, "o.n: is missing");
	json_decref(v);

	/* an unknown key, at any depth, with the valid ones */
	v = doc("{\"o\": {\"n\": 1, \"m\": 2}}");
	err = NULL;
	ck_assert_int_eq(ward_jschema_unpack(v, "p", NULL, &err, "{s:{s:I, s?b}}", "o", "n", &n, "x",
					     &b), -1);
	expect(err, "p: o: unknown key \"m\" (valid: n, x)");
	json_decref(v);

	/* a misspelt required key: the misspelling, not only the absence */
	v = doc("{\"nmae\": \"x\"}");
	err = NULL;
	ck_assert_int_eq(ward_jschema_unpack(v, NULL, NULL, &err, "{s:s, s?s}", "name", &s, "value",
					     &t), -1);
	expect(err, "unknown key \"nmae\" (valid: name, value)");
	json_decref(v);

	/* not an object at all */
	v = doc("[1]");
	err = NULL;
	ck_assert_int_eq(ward_jschema_unpack(v, "p", "x", &err, "{s?s}", "a", &s), -1);
	expect(err, "p: x: must be an object, got an array");
	json_decref(v);
}
END_TEST

START_TEST(test_nulls_and_nul)
{
	struct ward_error *err = NULL;
	json_t *v = json_pack("{s:n, s:s, s:s#}", "gone", "kept", "x", "bad", "a\0b", (size_t)3);

	ward_jschema_drop_nulls(v);
	ck_assert_ptr_null(json_object_get(v, "gone"));
	ck_assert_ptr_nonnull(json_object_get(v, "kept"));
	ck_assert_int_eq(ward_jschema_no_nul(v, "p", &err), -1);
	expect(err, "p: bad: must not contain NUL");
	json_decref(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jschema");
	TCase *tc = harness_tcase(s, "jschema", NULL);

	tcase_add_test(tc, test_wording);
	tcase_add_test(tc, test_nulls_and_nul);
	return harness_main(s);
}
