/* test-seccomp-builtin.c — the profiles compiled into libward at build time
 * are exactly what ward's compiler (filters/seccomp/bpf.c) makes of the
 * profile tables now, and they are what ward uses. */
#include "harness.h"
#include "filters/seccomp/seccomp-internal.h"
#include "ward/seccomp.h"

#include <string.h>

START_TEST(test_embedded_equals_fresh_compile)
{
	static const char *const names[] = { "default", "strict" };
	size_t i;
	int ptrace;

	for (i = 0; i < 2; i++)
		for (ptrace = 0; ptrace < 2; ptrace++) {
			struct ward_seccomp_options opts = { .allow_ptrace = ptrace };
			const struct ward_seccomp_program *built = ward_seccomp_builtin(names[i], ptrace);
			struct ward_seccomp_profile *profile = NULL;
			struct ward_seccomp_program *fresh = NULL;

			ck_assert_ptr_nonnull(built);
			ck_assert_str_eq(built->name, names[i]);
			ck_assert_int_eq(ward_seccomp_profile_builtin(names[i], &profile, NULL), 0);
			ck_assert_int_eq(ward_seccomp_compile(profile, &opts, &fresh, NULL), 0);
			ck_assert_uint_eq(built->fprog.len, fresh->fprog.len);
			ck_assert_msg(memcmp(built->fprog.filter, fresh->fprog.filter,
					     fresh->fprog.len * sizeof(*fresh->fprog.filter)) == 0,
				      "%s (ptrace %d) differs from a fresh compile", names[i], ptrace);
			/* and the lookup hands out the embedded one */
			ck_assert_ptr_eq(ward_seccomp_program_get(names[i], &opts, NULL), built);
			ward_seccomp_program_free(fresh);
			ward_seccomp_profile_free(profile);
		}
	ck_assert_ptr_null(ward_seccomp_builtin("no-such", false));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("seccomp-builtin");
	TCase *tc = harness_tcase(s, "seccomp-builtin", NULL);

	tcase_add_test(tc, test_embedded_equals_fresh_compile);
	return harness_main(s);
}
