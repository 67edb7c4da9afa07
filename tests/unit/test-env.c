/* test-env.c — only safe variables reach the command. */
#include "harness.h"
#include "ward/env.h"

#include <string.h>

START_TEST(test_scrub)
{
	char *host[] = { "PATH=/usr/bin", "HOME=/home/u", "AWS_SECRET_ACCESS_KEY=s3cret",
			 "GITHUB_TOKEN=ghp_x", "OPENAI_API_KEY=sk-x", "LC_ALL=C.UTF-8",
			 "XDG_CACHE_HOME=/c", "LD_PRELOAD=/evil.so", "PWD=/elsewhere",
			 "SSH_AUTH_SOCK=/run/ssh", "PATHOLOGICAL=1", "LC_=x", "TERM=xterm", NULL };
	char **env = ward_env_build(host, false, "/work", NULL, 0, NULL);
	char **p;

	ck_assert_ptr_nonnull(env);
	ck_assert_str_eq(ward_env_get(env, "PATH"), "/usr/bin");
	ck_assert_str_eq(ward_env_get(env, "HOME"), "/home/u");
	ck_assert_str_eq(ward_env_get(env, "LC_ALL"), "C.UTF-8");
	ck_assert_str_eq(ward_env_get(env, "XDG_CACHE_HOME"), "/c");
	ck_assert_str_eq(ward_env_get(env, "PWD"), "/work");
	ck_assert_str_eq(ward_env_get(env, "TERM"), "xterm");
	ck_assert_ptr_null(ward_env_get(env, "AWS_SECRET_ACCESS_KEY"));
	ck_assert_ptr_null(ward_env_get(env, "GITHUB_TOKEN"));
	ck_assert_ptr_null(ward_env_get(env, "OPENAI_API_KEY"));
	ck_assert_ptr_null(ward_env_get(env, "LD_PRELOAD"));
	ck_assert_ptr_null(ward_env_get(env, "SSH_AUTH_SOCK"));
	ck_assert_ptr_null(ward_env_get(env, "PATHOLOGICAL"));
	ck_assert_ptr_null(ward_env_get(env, "LC_"));
	for (p = env; *p; p++)
		ck_assert_msg(!strstr(*p, "s3cret") && !strstr(*p, "ghp_") && !strstr(*p, "sk-x"),
			      "leaked: %s", *p);
	ward_env_free(env);
}
END_TEST

START_TEST(test_clear_and_set)
{
	char *host[] = { "PATH=/usr/bin", "HOME=/h", NULL };
	char *set[] = { "FOO=bar", "PATH=/opt/bin", "FOO=baz" };
	char **env = ward_env_build(host, true, NULL, set, 3, NULL);
	size_t n = 0;

	ck_assert_ptr_null(ward_env_get(env, "HOME"));
	ck_assert_str_eq(ward_env_get(env, "PATH"), "/opt/bin");
	ck_assert_str_eq(ward_env_get(env, "FOO"), "baz"); /* the last one wins, once */
	while (env[n])
		n++;
	ck_assert_uint_eq(n, 2);
	ward_env_free(env);
}
END_TEST

START_TEST(test_default_path)
{
	char *host[] = { "HOME=/h", NULL };
	char **env = ward_env_build(host, false, NULL, NULL, 0, NULL);

	ck_assert_str_eq(ward_env_get(env, "PATH"), WARD_DEFAULT_PATH);
	ward_env_free(env);
}
END_TEST

START_TEST(test_is_safe)
{
	ck_assert(ward_env_is_safe("LANG", 4));
	ck_assert(ward_env_is_safe("LC_CTYPE", 8));
	ck_assert(ward_env_is_safe("XDG_RUNTIME_DIR", 15));
	ck_assert(!ward_env_is_safe("LANGX", 5));
	ck_assert(!ward_env_is_safe("AWS_ACCESS_KEY_ID", 17));
	ck_assert(!ward_env_is_safe("XDG_", 4));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("env");
	TCase *tc = harness_tcase(s, "env", NULL);

	tcase_add_test(tc, test_scrub);
	tcase_add_test(tc, test_clear_and_set);
	tcase_add_test(tc, test_default_path);
	tcase_add_test(tc, test_is_safe);
	return harness_main(s);
}
