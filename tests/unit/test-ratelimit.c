/* test-ratelimit.c — the sliding window, the state file's text, and the file
 * shared by concurrent processes under its lock. */
#include "harness.h"
#include "ward/ratelimit.h"
#include "ward/sandbox.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define T0 1700000000000LL

static int take(struct ward_ratelog *log, long long t, unsigned pm, unsigned ph, unsigned *retry)
{
	struct ward_error *err = NULL;
	int rc = ward_ratelog_take(log, t, pm, ph, retry, &err);

	if (rc < 0) {
		ck_assert_int_eq(err->kind, WARD_ERR_RATE_LIMITED);
		ck_assert_ptr_nonnull(strstr(err->message, "next slot in"));
		ck_assert(strncmp(err->rule, "rate_limit.per_", 15) == 0);
		ward_error_free(err);
	}
	return rc;
}

START_TEST(test_minute)
{
	struct ward_ratelog log = { 0 };
	unsigned retry = 0;
	int i;

	for (i = 0; i < 30; i++)
		ck_assert_int_eq(take(&log, T0 + i * 100, 30, 300, &retry), 0);
	ck_assert_int_lt(take(&log, T0 + 5000, 30, 300, &retry), 0);
	/* the first slot frees 60 s after it was taken: 55 s from now */
	ck_assert_uint_eq(retry, 55);
	ck_assert_int_lt(take(&log, T0 + 59999, 30, 300, &retry), 0);
	ck_assert_uint_eq(retry, 1);
	ck_assert_int_eq(take(&log, T0 + 60000, 30, 300, &retry), 0);
	/* refusals are not recorded: still 30 in the window */
	ck_assert_int_lt(take(&log, T0 + 60001, 30, 300, &retry), 0);
	ward_ratelog_release(&log);
}
END_TEST

START_TEST(test_hour)
{
	struct ward_ratelog log = { 0 };
	unsigned retry = 0;
	int i;

	for (i = 0; i < 5; i++)
		ck_assert_int_eq(take(&log, T0 + i * 600000LL, 0, 5, &retry), 0);
	ck_assert_int_lt(take(&log, T0 + 3000000LL, 0, 5, &retry), 0);
	ck_assert_uint_eq(retry, 600);
	ck_assert_int_eq(take(&log, T0 + 3600000LL, 0, 5, &retry), 0);
	ward_ratelog_release(&log);

	/* both limits: the longer wait is the answer */
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(take(&log, T0 + i, 3, 3, &retry), 0);
	ck_assert_int_lt(take(&log, T0 + 10, 3, 3, &retry), 0);
	ck_assert_uint_eq(retry, 3600);
	ward_ratelog_release(&log);
}
END_TEST

START_TEST(test_unlimited_and_clock)
{
	struct ward_ratelog log = { 0 };
	unsigned retry = 7;
	int i;

	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(take(&log, T0, 0, 0, &retry), 0);
	ck_assert_uint_eq(log.n, 0);
	ck_assert_uint_eq(retry, 0);
	/* a clock set back does not free slots early nor lock out for ever */
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(take(&log, T0 + 3600000LL * 5, 2, 0, &retry), 0);
	ck_assert_int_lt(take(&log, T0, 2, 0, &retry), 0);
	ck_assert_uint_eq(retry, 60);
	ck_assert_int_eq(take(&log, T0 + 60000, 2, 0, &retry), 0);
	ward_ratelog_release(&log);
}
END_TEST

START_TEST(test_text)
{
	struct ward_ratelog log = { 0 }, back = { 0 };
	struct ward_error *err = NULL;
	char *s;
	const char *partial = "ward-ratelimit 1\n1700000000000\n17000";

	const char *old = "ward-ratelimit 1\n1699996000000\n1699999999000\n";

	ck_assert_int_eq(take(&log, T0 - 1000, 10, 10, NULL), 0);
	ck_assert_int_eq(take(&log, T0, 10, 10, NULL), 0);
	s = ward_ratelog_format(&log);
	ck_assert_str_eq(s, "ward-ratelimit 1\n1699999999000\n1700000000000\n");
	ck_assert_int_eq(ward_ratelog_parse(s, strlen(s), T0, &back, &err), 0);
	ck_assert_uint_eq(back.n, 2);
	ck_assert_int_eq(back.t[1], T0);
	ward_ratelog_release(&back);
	free(s);
	/* what is older than an hour is dropped on reading */
	ck_assert_int_eq(ward_ratelog_parse(old, strlen(old), T0, &back, &err), 0);
	ck_assert_uint_eq(back.n, 1);
	ward_ratelog_release(&back);
	ck_assert_int_eq(ward_ratelog_parse(partial, strlen(partial), T0, &back, &err), 0);
	ck_assert_uint_eq(back.n, 1);
	ward_ratelog_release(&back);
	ck_assert_int_eq(ward_ratelog_parse("", 0, T0, &back, &err), 0);
	ck_assert_int_lt(ward_ratelog_parse("# my notes\n", 11, T0, &back, &err), 0);
	ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_ptr_nonnull(strstr(err->message, "not a ward rate limit state"));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_lt(ward_ratelog_parse("ward-ratelimit 1\n12x\n", 21, T0, &back, &err), 0);
	ward_error_free(err);
	ward_ratelog_release(&log);
}
END_TEST

/* The text is what "%lld\n" per time would write, for any time. */
START_TEST(test_format_numbers)
{
	static const int64_t vals[] = { 0, 1, 9, 10, 99, 100, T0, T0 + 999, -1, -T0,
					INT64_MAX, INT64_MIN + 1, INT64_MIN };
	struct ward_ratelog log = { .t = (int64_t *)vals, .n = sizeof(vals) / sizeof(vals[0]) };
	char want[1024] = "ward-ratelimit 1\n", *s;
	size_t i;

	for (i = 0; i < log.n; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%lld\n",
			 (long long)vals[i]);
	s = ward_ratelog_format(&log);
	ck_assert_str_eq(s, want);
	free(s);
}
END_TEST

/* A state file whose old times fall out is written shorter, and cut: no
 * line of the old text is left behind its end. */
START_TEST(test_file_shrinks)
{
	char *dir = harness_tmpdir(), path[4300], buf[8192];
	struct ward_error *err = NULL;
	struct ward_ratelog log = { 0 };
	struct stat st;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "%s/ratelimit", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "ward-ratelimit 1\n", 17), 17);
	for (i = 0; i < 100; i++) /* times of a day ago */
		ck_assert_int_eq(write(fd, "1000000000000\n", 14), 14);
	close(fd);
	ck_assert_int_eq(ward_ratelimit_take_file(path, 30, 300, NULL, &err), 0);
	ck_assert_int_eq(ward_ratelimit_take_file(path, 30, 300, NULL, &err), 0);
	fd = open(path, O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, n);
	ck_assert_int_eq(ward_ratelog_parse(buf, (size_t)n, 4000000000000LL, &log, &err), 0);
	ck_assert_ptr_null(strstr(buf, "1000000000000\n"));
	ck_assert_int_eq(n, (ssize_t)(17 + 2 * 14));
	ward_ratelog_release(&log);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_default_path)
{
	struct ward_config cfg;
	char *p;

	/* a user's default: 30 a minute, 300 an hour */
	ward_config_init(&cfg);
	ck_assert_uint_eq(cfg.rate_per_minute, 30);
	ck_assert_uint_eq(cfg.rate_per_hour, 300);
	ward_config_release(&cfg);

	unsetenv("XDG_RUNTIME_DIR");
	/* XDG_STATE_HOME is made when missing (below "/", root's) */
	setenv("XDG_STATE_HOME", "/ward-test-no-such/state", 1);
	p = ward_ratelimit_default_path();
	ck_assert_str_eq(p, "/ward-test-no-such/state/ward/ratelimit");
	free(p);
	{
		char *home = harness_tmpdir(), want[4200], tmp[64];

		/* a relative XDG_STATE_HOME is ignored: HOME's */
		setenv("XDG_STATE_HOME", "relative", 1);
		setenv("HOME", home, 1);
		p = ward_ratelimit_default_path();
		snprintf(want, sizeof(want), "%s/.local/state/ward/ratelimit", home);
		ck_assert_str_eq(p, want);
		free(p);
		/* a HOME that is not there (uid 65534's /nonexistent), or none:
		 * the private directory in /tmp (ward-UID, or ward-UID.XXXXXX
		 * when another user holds that name) */
		snprintf(tmp, sizeof(tmp), "/tmp/ward-%u", (unsigned)geteuid());
		setenv("HOME", "/nonexistent", 1);
		p = ward_ratelimit_default_path();
		ck_assert_msg(p && strncmp(p, tmp, strlen(tmp)) == 0, "%s", p ? p : "(null)");
		free(p);
		unsetenv("XDG_STATE_HOME");
		unsetenv("HOME");
		p = ward_ratelimit_default_path();
		ck_assert_msg(p && strncmp(p, tmp, strlen(tmp)) == 0, "%s", p ? p : "(null)");
		free(p);
		harness_rmtree(home);
		free(home);
	}
}
END_TEST

START_TEST(test_file)
{
	char *dir = harness_tmpdir(), path[4300], sub[4200];
	struct ward_error *err = NULL;
	unsigned retry = 0;
	struct stat st;
	int i, fd;

	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	snprintf(path, sizeof(path), "%s/ratelimit", sub);
	/* no limits: nothing is written */
	ck_assert_int_eq(ward_ratelimit_take_file(path, 0, 0, &retry, &err), 0);
	ck_assert_int_ne(access(sub, F_OK), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(ward_ratelimit_take_file(path, 3, 10, &retry, &err), 0);
	ck_assert_int_lt(ward_ratelimit_take_file(path, 3, 10, &retry, &err), 0);
	ck_assert_int_eq(err->kind, WARD_ERR_RATE_LIMITED);
	ck_assert_uint_ge(retry, 59);
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* a higher limit on the same file counts what was taken */
	ck_assert_int_eq(ward_ratelimit_take_file(path, 4, 10, &retry, &err), 0);
	ck_assert_int_lt(ward_ratelimit_take_file(path, 4, 10, &retry, &err), 0);
	ward_error_free(err);
	err = NULL;
	/* a file that is not ward's is refused, and left as it is */
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "precious\n", 9), 9);
	close(fd);
	ck_assert_int_lt(ward_ratelimit_take_file(path, 3, 10, &retry, &err), 0);
	ck_assert_int_eq(err->kind, WARD_ERR_EXECUTION_FAILED);
	ck_assert_ptr_nonnull(strstr(err->message, path));
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 9);
	/* a state directory that cannot be made says how to fix it */
	snprintf(sub, sizeof(sub), "/proc/ward-no-such/ratelimit");
	ck_assert_int_lt(ward_ratelimit_take_file(sub, 3, 10, &retry, &err), 0);
	ck_assert_msg(strstr(err->message, "XDG_STATE_HOME") && strstr(err->message, "/proc/ward-no-such"),
		      "%s", err->message);
	ward_error_free(err);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

/* Eight processes take five slots each at once from a limit of 30: exactly
 * 30 are granted. */
START_TEST(test_file_concurrent)
{
	char *dir = harness_tmpdir(), path[4200];
	pid_t pids[8];
	int p[2], i, granted = 0, status;
	char c;

	snprintf(path, sizeof(path), "%s/ratelimit", dir);
	ck_assert_int_eq(pipe(p), 0);
	for (i = 0; i < 8; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int k;

			close(p[0]);
			for (k = 0; k < 5; k++) {
				struct ward_error *err = NULL;

				if (ward_ratelimit_take_file(path, 30, 300, NULL, &err) == 0) {
					if (write(p[1], "g", 1) != 1)
						_exit(2);
				} else if (err->kind != WARD_ERR_RATE_LIMITED) {
					_exit(3);
				}
				ward_error_free(err);
			}
			_exit(0);
		}
	}
	close(p[1]);
	while (read(p[0], &c, 1) == 1)
		granted++;
	close(p[0]);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert_int_eq(WEXITSTATUS(status), 0);
	}
	ck_assert_int_eq(granted, 30);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ratelimit");
	TCase *tc = harness_tcase(s, "ratelimit", NULL);

	tcase_add_test(tc, test_minute);
	tcase_add_test(tc, test_hour);
	tcase_add_test(tc, test_unlimited_and_clock);
	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_format_numbers);
	tcase_add_test(tc, test_file_shrinks);
	tcase_add_test(tc, test_default_path);
	tcase_add_test(tc, test_file);
	tcase_add_test(tc, test_file_concurrent);
	return harness_main(s);
}
