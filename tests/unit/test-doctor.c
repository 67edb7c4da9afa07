/* test-doctor.c — the user-namespace verdict for every kind of host. */
#include "harness.h"
#include "ward/doctor.h"

#include <errno.h>
#include <string.h>

START_TEST(test_userns_verdicts)
{
	struct ward_check c;

	ward_doctor_userns_verdict(-1, -1, 15000, 0, &c);
	ck_assert_int_eq(c.status, WARD_CHECK_OK);
	ck_assert_str_eq(c.fix, "");

	/* Ubuntu 23.10+: AppArmor's restriction, with both fixes named */
	ward_doctor_userns_verdict(1, -1, 15000, EACCES, &c);
	ck_assert_int_eq(c.status, WARD_CHECK_MISSING);
	ck_assert_ptr_nonnull(strstr(c.detail, "AppArmor"));
	ck_assert_ptr_nonnull(strstr(c.fix, "userns,"));
	ck_assert_ptr_nonnull(strstr(c.fix, "kernel.apparmor_restrict_unprivileged_userns=0"));

	/* an AppArmor sysctl present but off does not get blamed */
	ward_doctor_userns_verdict(0, 0, 15000, EPERM, &c);
	ck_assert_ptr_null(strstr(c.detail, "AppArmor"));
	ck_assert_ptr_nonnull(strstr(c.fix, "kernel.unprivileged_userns_clone=1"));

	ward_doctor_userns_verdict(-1, -1, 0, ENOSPC, &c);
	ck_assert_ptr_nonnull(strstr(c.fix, "user.max_user_namespaces"));

	ward_doctor_userns_verdict(-1, -1, 15000, EPERM, &c);
	ck_assert_int_eq(c.status, WARD_CHECK_MISSING);
	ck_assert_ptr_nonnull(strstr(c.detail, "Operation not permitted"));
	ck_assert_ptr_nonnull(strstr(c.fix, "CONFIG_USER_NS"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = harness_tcase(s, "doctor", NULL);

	tcase_add_test(tc, test_userns_verdicts);
	return harness_main(s);
}
