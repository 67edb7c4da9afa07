/* test-admit.c — which directories may be a workdir: the pure
 * classification and decision (ward/admit.h), with made-up host facts, and
 * the policy's workdir.roots key. No privileges, no disk. */
#include "harness.h"
#include "ward/admit.h"
#include "ward/policy.h"
#include "ward/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const own[] = { "/home/me", NULL };
static const char *const homes[] = { "/home/me", "/home/alice", "/root", "/srv/www",
				     "/data/users/bob", "/nonexistent", "/", NULL };
static const char *const masked[] = { "/etc/shadow", "/etc/sudoers.d", "/etc/ssh/ssh_host_*_key",
				      "/opt/secret/key", "/data/vault",
				      NULL };
static const struct ward_admit_facts facts = { own, homes, masked };

static unsigned cls(const char *p)
{
	return ward_admit_classify(p, &facts);
}

START_TEST(test_system)
{
	static const char *const sys[] = {
		"/", "/etc", "/etc/cron.d", "/usr", "/usr/local", "/usr/local/src/x", "/bin",
		"/sbin", "/lib", "/lib64", "/libx32", "/lib/modules", "/boot", "/var",
		"/var/lib", "/var/spool/cron", "/opt", "/opt/tool", "/srv", "/run", "/run/user/0",
		"/proc", "/proc/1", "/sys", "/dev", "/dev/shm", "/tmp", "/var/tmp", "/snap",
	};
	static const char *const fine[] = {
		"/tmp/x", "/tmp/x/y", "/var/tmp/x", "/work/project", "/data/p", "/etcetera",
		"/usrx", "/variable", "/home/me/project", "/mnt/data",
	};

	for (size_t i = 0; i < ARRAY_SIZE(sys); i++)
		ck_assert_msg(cls(sys[i]) & WARD_ADMIT_SYSTEM, "%s not system", sys[i]);
	for (size_t i = 0; i < ARRAY_SIZE(fine); i++)
		ck_assert_msg(!(cls(fine[i]) & WARD_ADMIT_SYSTEM), "%s system", fine[i]);
}
END_TEST

START_TEST(test_masked)
{
	/* at, above, or inside a masked path (a masked directory) */
	ck_assert(cls("/etc") & WARD_ADMIT_MASKED);
	ck_assert(cls("/") & WARD_ADMIT_MASKED);
	ck_assert(cls("/etc/sudoers.d") & WARD_ADMIT_MASKED);
	ck_assert(cls("/etc/sudoers.d/sub") & WARD_ADMIT_MASKED);
	ck_assert(cls("/etc/ssh") & WARD_ADMIT_MASKED);
	ck_assert(cls("/opt/secret") & WARD_ADMIT_MASKED);
	ck_assert(cls("/opt") & WARD_ADMIT_MASKED);
	ck_assert(!(cls("/etc/cron.d") & WARD_ADMIT_MASKED));
	ck_assert(!(cls("/etc/ssh/sshd_config.d") & WARD_ADMIT_MASKED));
	ck_assert(!(cls("/opt/secretive") & WARD_ADMIT_MASKED));
	ck_assert(!(cls("/work") & WARD_ADMIT_MASKED));
}
END_TEST

START_TEST(test_homes)
{
	ck_assert_uint_eq(cls("/home/me"), WARD_ADMIT_HOME);
	ck_assert_uint_eq(cls("/home/me/project"), 0);
	ck_assert_uint_eq(cls("/home/me/a/b/c"), 0);
	ck_assert_uint_eq(cls("/home/alice"), WARD_ADMIT_HOME | WARD_ADMIT_OTHER_HOME);
	ck_assert_uint_eq(cls("/home/alice/project"), WARD_ADMIT_OTHER_HOME);
	ck_assert(cls("/root") & WARD_ADMIT_OTHER_HOME);
	ck_assert(cls("/root/x") & WARD_ADMIT_OTHER_HOME);
	ck_assert_uint_eq(cls("/home"), WARD_ADMIT_ABOVE_HOME);
	ck_assert(cls("/data") & WARD_ADMIT_ABOVE_HOME);
	ck_assert_uint_eq(cls("/data/users"), WARD_ADMIT_ABOVE_HOME);
	ck_assert_uint_eq(cls("/data/users/bob/src"), WARD_ADMIT_OTHER_HOME);
	ck_assert_uint_eq(cls("/data/other"), 0);
	/* "/" as a system account's home does not make everything a home */
	ck_assert_uint_eq(cls("/work/p"), 0);
	/* a name that only starts like a home */
	ck_assert_uint_eq(cls("/home/alice2"), 0);
	ck_assert_uint_eq(cls("/home/me2/x"), 0);
}
END_TEST

START_TEST(test_own_root_home)
{
	static const char *const root_own[] = { "/root", NULL };
	const struct ward_admit_facts f = { root_own, homes, masked };

	ck_assert_uint_eq(ward_admit_classify("/root", &f), WARD_ADMIT_HOME);
	ck_assert_uint_eq(ward_admit_classify("/root/project", &f), 0);
	ck_assert(ward_admit_classify("/home/me/project", &f) & WARD_ADMIT_OTHER_HOME);
}
END_TEST

static const char *decide(const char *path, bool anywhere, bool home, const char *const *roots)
{
	static char rule[WARD_ERROR_RULE_MAX];
	struct ward_admit a = { .anywhere = anywhere, .home = home };
	struct ward_error *err = NULL;

	if (ward_admit_decide(path, cls(path), &a, roots, &err) == 0) {
		ck_assert_ptr_null(err);
		return NULL;
	}
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(err->kind, WARD_ERR_NOT_AUTHORIZED);
	ck_assert_msg(strstr(err->message, err->rule), "%s", err->message);
	ck_assert_msg(strstr(err->message, path), "%s", err->message);
	snprintf(rule, sizeof(rule), "%s", err->rule);
	ward_error_free(err);
	return rule;
}

#define REFUSED(rule, ...) ck_assert_str_eq(decide(__VA_ARGS__) ?: "(admitted)", rule)
#define ADMITTED(...) ck_assert_ptr_null(decide(__VA_ARGS__))

START_TEST(test_decide)
{
	static const char *const roots[] = { "/work", "/home/me", NULL };

	REFUSED("workdir-system", "/etc", false, false, NULL);
	REFUSED("workdir-system", "/etc/cron.d", false, true, roots);
	REFUSED("workdir-system", "/", false, false, NULL);
	REFUSED("workdir-masked", "/data/vault", false, false, NULL);
	REFUSED("workdir-masked", "/data/vault/in", false, true, NULL);
	REFUSED("workdir-other-home", "/home/alice/p", false, true, NULL);
	REFUSED("workdir-above-home", "/home", false, true, NULL);
	REFUSED("workdir-home", "/home/me", false, false, NULL);
	REFUSED("workdir-home", "/home/me", true, false, NULL);
	/* another user's home itself needs both words */
	REFUSED("workdir-other-home", "/home/alice", false, true, NULL);
	REFUSED("workdir-home", "/home/alice", true, false, NULL);
	ADMITTED("/home/alice", true, true, NULL);
	ADMITTED("/home/me", false, true, NULL);
	ADMITTED("/home/me/project", false, false, NULL);
	ADMITTED("/etc/cron.d", true, false, NULL);
	/* a home's dot entries and bin: what an allowed home keeps read-only */
	REFUSED("workdir-home-entry", "/home/me/.config", false, false, roots);
	REFUSED("workdir-home-entry", "/home/me/.config/git", false, true, roots);
	REFUSED("workdir-home-entry", "/home/me/.ssh", false, true, NULL);
	REFUSED("workdir-home-entry", "/home/me/bin", false, false, roots);
	REFUSED("workdir-home-entry", "/home/me/.local/bin", false, false, roots);
	REFUSED("workdir-other-home", "/root/.cache/x", false, false, NULL);
	REFUSED("workdir-home-entry", "/home/me/.cache/x", false, false, NULL);
	ADMITTED("/home/me/.config", true, false, roots);
	ADMITTED("/home/me/binaries", false, false, roots);
	ADMITTED("/home/me/project/.config", false, false, roots);
	ADMITTED("/home/me/project/bin", false, false, roots);
	/* a git directory, or inside one */
	REFUSED("workdir-gitdir", "/work/repo/.git", false, false, roots);
	REFUSED("workdir-gitdir", "/work/repo/.git/hooks", false, true, roots);
	REFUSED("workdir-gitdir", "/work/repo/.GIT", false, false, NULL);
	REFUSED("workdir-gitdir", "/work/repo/.git/modules/sub", false, false, NULL);
	ADMITTED("/work/repo/.git", true, false, NULL);
	ADMITTED("/work/repo", false, false, roots);
	ADMITTED("/work/repo/.github", false, false, roots);
	ADMITTED("/work/repo/x.git", false, false, roots); /* no repository there */
	/* roots: a request's workdir */
	ADMITTED("/work/a/b", false, false, roots);
	ADMITTED("/work", false, false, roots);
	ADMITTED("/home/me/p", false, false, roots);
	REFUSED("workdir-outside-roots", "/workshop", false, false, roots);
	REFUSED("workdir-outside-roots", "/tmp/x", false, false, roots);
	REFUSED("workdir-outside-roots", "/tmp/x", true, true, roots);
	/* the system rule comes first, whatever the roots */
	{
		static const char *const all[] = { "/", NULL };

		REFUSED("workdir-system", "/etc", false, false, all);
		ADMITTED("/tmp/x", false, false, all);
	}
	{
		static const char *const none[] = { NULL };

		REFUSED("workdir-outside-roots", "/work/a", false, false, none);
	}
}
END_TEST

START_TEST(test_under)
{
	ck_assert(ward_admit_under("/a/b", "/a"));
	ck_assert(ward_admit_under("/a", "/a"));
	ck_assert(!ward_admit_under("/ab", "/a"));
	ck_assert(ward_admit_under("/x", "/"));
	ck_assert(ward_admit_under("/", "/"));
}
END_TEST

static struct ward_error *policy(const char *text, struct ward_config *cfg)
{
	struct ward_error *err = NULL;

	ward_config_init(cfg);
	ward_policy_apply(text, strlen(text), "test", cfg, &err);
	return err;
}

START_TEST(test_policy_roots)
{
	struct ward_config cfg;
	struct ward_error *err;

	err = policy("{\"workdir\": {\"roots\": [\"/srv/agents\", \"/work\"]}}", &cfg);
	ck_assert_ptr_null(err);
	ck_assert(cfg.admit.roots_set);
	ck_assert_uint_eq(cfg.admit.n_roots, 2);
	ck_assert_str_eq(cfg.admit.roots[1], "/work");
	ck_assert(!cfg.admit.anywhere && !cfg.admit.home);
	ward_config_release(&cfg);

	/* the hatches are the person's, never the policy's */
	err = policy("{\"workdir\": {\"allow_anywhere\": true}}", &cfg);
	ck_assert_ptr_nonnull(err);
	ck_assert_ptr_nonnull(strstr(err->message, "--allow-workdir-anywhere"));
	ck_assert(!cfg.admit.anywhere);
	ward_error_free(err);
	ward_config_release(&cfg);
	err = policy("{\"workdir\": {\"allow_home\": true}}", &cfg);
	ck_assert_ptr_nonnull(err);
	ward_error_free(err);
	ward_config_release(&cfg);
	err = policy("{\"workdir\": {\"roots\": [\"relative\"]}}", &cfg);
	ck_assert_ptr_nonnull(err);
	ck_assert_ptr_nonnull(strstr(err->message, "absolute"));
	ward_error_free(err);
	ward_config_release(&cfg);
	err = policy("{\"workdir\": {\"roots\": \"/work\"}}", &cfg);
	ck_assert_ptr_nonnull(err);
	ward_error_free(err);
	ward_config_release(&cfg);
}
END_TEST

/* What ward_run() admits is the path it binds: a path that resolves
 * elsewhere (a symbolic link on the way) is refused, not followed. */
START_TEST(test_unresolved)
{
	char *d = harness_tmpdir(), real[4200], link[4200];
	struct ward_admit a = { 0 };
	struct ward_error *err = NULL;

	snprintf(real, sizeof(real), "%s/real", d);
	snprintf(link, sizeof(link), "%s/link", d);
	ck_assert_int_eq(mkdir(real, 0755), 0);
	ck_assert_int_eq(symlink("real", link), 0);
	ck_assert_int_eq(ward_admit_workdir(&a, real, &err), 0);
	ck_assert_int_eq(ward_admit_workdir(&a, link, &err), -1);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_ptr_nonnull(strstr(err->message, "not a resolved path"));
	ward_error_free(err);
	harness_rmtree(d);
	free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("admit");
	TCase *tc = harness_tcase(s, "admit", NULL);

	tcase_add_test(tc, test_system);
	tcase_add_test(tc, test_masked);
	tcase_add_test(tc, test_homes);
	tcase_add_test(tc, test_own_root_home);
	tcase_add_test(tc, test_decide);
	tcase_add_test(tc, test_under);
	tcase_add_test(tc, test_policy_roots);
	tcase_add_test(tc, test_unresolved);
	return harness_main(s);
}
