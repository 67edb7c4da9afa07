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

/* Ubuntu's restriction: the fix says which of the cases holds and names the
 * command that fixes it. */
START_TEST(test_apparmor_fix)
{
	static const char profile[] = "# comment\nabi <abi/4.0>,\ninclude <tunables/global>\n\n"
				      "profile ward /usr/bin/ward flags=(unconfined) {\n  userns,\n}\n";
	char fix[512];

	/* no profile at all: install it, load it; the sysctl named too */
	ward_doctor_apparmor_fix("/opt/w/bin/ward", NULL, "unconfined", fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "install") && strstr(fix, "/etc/apparmor.d/ward") &&
			      strstr(fix, "apparmor_parser -r") && strstr(fix, "userns,") &&
			      strstr(fix, "/opt/w/bin/ward") &&
			      strstr(fix, "kernel.apparmor_restrict_unprivileged_userns=0"),
		      "%s", fix);

	/* a profile for another path: which one, and this one */
	ward_doctor_apparmor_fix("/home/me/ward/build/ward", profile, "unconfined", fix,
				 sizeof(fix));
	ck_assert_msg(strstr(fix, "'/usr/bin/ward'") && strstr(fix, "'/home/me/ward/build/ward'") &&
			      strstr(fix, "not this ward"),
		      "%s", fix);

	/* the right path, not loaded (the process is not under it) */
	ward_doctor_apparmor_fix("/usr/bin/ward", profile, "unconfined\n", fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "not loaded") &&
			      strstr(fix, "sudo apparmor_parser -r /etc/apparmor.d/ward"),
		      "%s", fix);
	ward_doctor_apparmor_fix("/usr/bin/ward", profile, NULL, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "not loaded"), "%s", fix);
	/* a label that only starts like ward's is not ward's */
	ward_doctor_apparmor_fix("/usr/bin/ward", profile, "wardrobe (enforce)", fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "not loaded"), "%s", fix);

	/* loaded and still refused: an old profile */
	ward_doctor_apparmor_fix("/usr/bin/ward", profile, "ward (unconfined)\n", fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "still refused") && strstr(fix, "apparmor_parser -r"), "%s",
		      fix);

	/* a profile naming no path */
	ward_doctor_apparmor_fix("/usr/bin/ward", "profile ward {\n}\n", "unconfined", fix,
				 sizeof(fix));
	ck_assert_msg(strstr(fix, "names no path"), "%s", fix);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = harness_tcase(s, "doctor", NULL);

	tcase_add_test(tc, test_userns_verdicts);
	tcase_add_test(tc, test_apparmor_fix);
	return harness_main(s);
}
