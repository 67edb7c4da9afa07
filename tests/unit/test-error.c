/* test-error.c — struct ward_error: formatting, reuse, and the pipe format. */
#include "harness.h"
#include "ward/error.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

START_TEST(test_make_appends_errno)
{
	struct ward_error *err = NULL;

	ck_assert_int_lt(ward_error_make(&err, ENOENT, "open '%s'", "/x"), 0);
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(err->message, "open '/x': No such file or directory");
	ck_assert_int_eq(err->code, ENOENT);
	ck_assert_int_eq(err->kind, WARD_ERR_EXECUTION_FAILED);
	ck_assert_str_eq(ward_error_kind_name(err->kind), "ExecutionFailed");
	ward_error_free(err);
}
END_TEST

START_TEST(test_kind_rule_prefix_reuse)
{
	struct ward_error storage = { 0 }, *err = &storage;

	ward_error_make_kind(&err, WARD_ERR_INVALID_PARAMETERS, 0, "timeout must be >= 1");
	ck_assert_ptr_eq(err, &storage); /* preallocated storage is reused */
	ward_error_set_rule(err, "timeout");
	ward_error_prefix(err, "request");
	ck_assert_str_eq(err->message, "request: timeout must be >= 1");
	ck_assert_str_eq(err->rule, "timeout");
	ck_assert_str_eq(ward_error_kind_name(err->kind), "InvalidParameters");
	ck_assert_int_lt(ward_error_make(NULL, 0, "nowhere"), 0); /* NULL err is fine */
}
END_TEST

START_TEST(test_pipe_round_trip)
{
	struct ward_error *err = NULL, got;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ward_error_make(&err, EPERM, "mount '%s'", "/proc");
	ck_assert_int_eq(ward_error_write(p[1], err), 0);
	close(p[1]);
	ck_assert_int_eq(ward_error_read(p[0], &got), 1);
	ck_assert_str_eq(got.message, err->message);
	ck_assert_int_eq(got.code, EPERM);
	ck_assert_int_eq(ward_error_read(p[0], &got), 0); /* clean EOF */
	close(p[0]);
	ward_error_free(err);
}
END_TEST

START_TEST(test_short_record)
{
	struct ward_error got;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "abc", 3), 3);
	close(p[1]);
	ck_assert_int_eq(ward_error_read(p[0], &got), -1);
	ck_assert_int_eq(errno, EPROTO);
	close(p[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("error");
	TCase *tc = harness_tcase(s, "error", NULL);

	tcase_add_test(tc, test_make_appends_errno);
	tcase_add_test(tc, test_kind_rule_prefix_reuse);
	tcase_add_test(tc, test_pipe_round_trip);
	tcase_add_test(tc, test_short_record);
	return harness_main(s);
}
