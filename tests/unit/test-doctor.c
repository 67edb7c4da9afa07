/* test-doctor.c — the user-namespace verdict for every kind of host; the
 * container ward runs in, and the fix in each engine's words. */
#include "harness.h"
#include "ward/doctor.h"

#include <errno.h>
#include <stdio.h>
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

/* Each engine told from its signs; none on a plain host. */
START_TEST(test_container_detect)
{
	struct ward_container c;
	struct ward_container_signs s;

	memset(&s, 0, sizeof(s));
	s.proc1_cgroup = "0::/init.scope\n";
	ward_container_detect(&s, &c);
	ck_assert(!c.in_container);
	ck_assert_str_eq(c.engine, "");

	memset(&s, 0, sizeof(s));
	s.containerenv = "engine=\"podman-4.3.1\"\n";
	s.container_var = "podman";
	ward_container_detect(&s, &c);
	ck_assert(c.in_container);
	ck_assert_str_eq(c.engine, "podman");
	ck_assert_int_eq(c.n_hints, 2);
	ck_assert_str_eq(c.hints[0], "/run/.containerenv");
	ck_assert_str_eq(c.hints[1], "container=podman");

	memset(&s, 0, sizeof(s));
	s.dockerenv = true;
	s.proc1_cgroup = "12:pids:/docker/0123abcd\n";
	ward_container_detect(&s, &c);
	ck_assert_str_eq(c.engine, "docker");
	ck_assert_int_eq(c.n_hints, 2);

	/* a Pod: Kubernetes's words, whatever runtime runs it */
	memset(&s, 0, sizeof(s));
	s.kubernetes_env = true;
	s.proc1_cgroup = "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope\n";
	ward_container_detect(&s, &c);
	ck_assert_str_eq(c.engine, "kubernetes");
	ck_assert_int_eq(c.n_hints, 3);

	memset(&s, 0, sizeof(s));
	s.container_var = "systemd-nspawn";
	ward_container_detect(&s, &c);
	ck_assert_str_eq(c.engine, "systemd-nspawn");

	/* a container= nobody knows still counts, as "unknown" */
	memset(&s, 0, sizeof(s));
	s.container_var = "wsl";
	ward_container_detect(&s, &c);
	ck_assert(c.in_container);
	ck_assert_str_eq(c.engine, "unknown");
	ck_assert_str_eq(c.hints[0], "container=wsl");

	/* an empty container= is no sign */
	memset(&s, 0, sizeof(s));
	s.container_var = "";
	ward_container_detect(&s, &c);
	ck_assert(!c.in_container);
}
END_TEST

/* The sandbox's failure mapped to what the container must change. */
START_TEST(test_container_need)
{
	ck_assert_int_eq(ward_container_need_of("mount proc on '/proc' (the outer /proc has masked "
						"paths, as in a container: unmask /proc, see "
						"'ward doctor'): Operation not permitted"),
			 WARD_NEED_PROC);
	ck_assert_int_eq(ward_container_need_of("a test command failed: clone3 into new namespaces "
						"(see 'ward doctor'): Operation not permitted"),
			 WARD_NEED_SECCOMP);
	ck_assert_int_eq(ward_container_need_of("a test command failed: mount tmpfs on '/tmp': "
						"Permission denied"),
			 WARD_NEED_APPARMOR);
	ck_assert_int_eq(ward_container_need_of("a test command failed: non-zero exit"),
			 WARD_NEED_NOTHING);
	ck_assert_int_eq(ward_container_need_of(NULL), WARD_NEED_NOTHING);
}
END_TEST

/* The fix in the engine's own words, every engine's when unknown. */
START_TEST(test_container_fix)
{
	struct ward_container c;
	char fix[512];

	memset(&c, 0, sizeof(c));
	c.in_container = true;
	snprintf(c.engine, sizeof(c.engine), "podman");
	ward_container_fix(&c, WARD_NEED_PROC, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "--security-opt unmask=/proc/*"), "%s", fix);
	ck_assert_msg(!strstr(fix, "systempaths"), "%s", fix);
	ck_assert_msg(fix[strlen(fix) - 1] != ';', "%s", fix);

	snprintf(c.engine, sizeof(c.engine), "docker");
	ward_container_fix(&c, WARD_NEED_PROC, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "--security-opt systempaths=unconfined"), "%s", fix);
	ck_assert_msg(!strstr(fix, "unmask=/proc"), "%s", fix);

	snprintf(c.engine, sizeof(c.engine), "kubernetes");
	ward_container_fix(&c, WARD_NEED_PROC, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "procMount: Unmasked"), "%s", fix);
	ck_assert_msg(strstr(fix, "hostUsers: false"), "%s", fix);
	ward_container_fix(&c, WARD_NEED_SECCOMP, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "seccompProfile"), "%s", fix);
	ward_container_fix(&c, WARD_NEED_APPARMOR, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "appArmorProfile"), "%s", fix);

	snprintf(c.engine, sizeof(c.engine), "unknown");
	ward_container_fix(&c, WARD_NEED_PROC, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "unmask=/proc/*") && strstr(fix, "systempaths=unconfined") &&
			      strstr(fix, "procMount: Unmasked"),
		      "%s", fix);
	ward_container_fix(&c, WARD_NEED_SECCOMP, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "seccomp=") && strstr(fix, "packaging/container/seccomp.json"),
		      "%s", fix);
	ward_container_fix(&c, WARD_NEED_APPARMOR, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "apparmor=unconfined"), "%s", fix);
	ward_container_fix(&c, WARD_NEED_NOTHING, fix, sizeof(fix));
	ck_assert_str_eq(fix, "");

	/* a short buffer is cut, not overrun */
	ward_container_fix(&c, WARD_NEED_PROC, fix, 16);
	ck_assert_int_eq(strlen(fix), 15);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = harness_tcase(s, "doctor", NULL);

	tcase_add_test(tc, test_userns_verdicts);
	tcase_add_test(tc, test_apparmor_fix);
	tcase_add_test(tc, test_container_detect);
	tcase_add_test(tc, test_container_need);
	tcase_add_test(tc, test_container_fix);
	return harness_main(s);
}
