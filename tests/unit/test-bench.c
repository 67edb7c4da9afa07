/* test-bench.c — the benchmark's pure parts: order statistics, command lines
 * as printed, the temporary paths shown by name, and one timed run; and the
 * network section's client, server and proxy engine in a network namespace
 * of the test's own. The sources are included so their file-local helpers
 * are tested as they are. */
#include "harness.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "bench/libcase.c"
#include "bench/network.c"
#include "bench/run.c"
#include "bench/stats.c"

START_TEST(test_quantiles)
{
	struct samples s = { 0 };
	double v[] = { 5, 1, 4, 2, 3 };
	size_t i;

	ck_assert(isnan(samples_quantile(&s, 0.5)));
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(samples_add(&s, v[i]), 0);
	ck_assert_double_eq(samples_quantile(&s, 0.5), 3);
	ck_assert_double_eq(samples_quantile(&s, 0), 1);
	ck_assert_double_eq(samples_quantile(&s, 1), 5);
	/* Between order statistics: 0.1 × 4 = 0.4 of the way from 1 to 2. */
	ck_assert_double_eq_tol(samples_quantile(&s, 0.1), 1.4, 1e-9);
	ck_assert_double_eq_tol(samples_quantile(&s, 0.9), 4.6, 1e-9);
	ck_assert_int_eq(samples_add(&s, 6), 0);
	ck_assert_double_eq(samples_quantile(&s, 0.5), 3.5); /* even count: the mean of two */
	samples_release(&s);
	ck_assert_ptr_null(s.v);
}
END_TEST

START_TEST(test_many_samples)
{
	struct samples s = { 0 };
	int i;

	for (i = 1000; i >= 1; i--) /* grows past the first allocation, arrives unsorted */
		ck_assert_int_eq(samples_add(&s, i), 0);
	ck_assert_uint_eq(s.n, 1000);
	ck_assert_double_eq_tol(samples_quantile(&s, 0.5), 500.5, 1e-9);
	ck_assert_double_eq_tol(samples_quantile(&s, 0.1), 100.9, 1e-9);
	samples_release(&s);
}
END_TEST

START_TEST(test_median_of)
{
	double v[] = { 9, 1, 7 };

	ck_assert_double_eq(median_of(v, 3), 7);
	ck_assert_double_eq(v[0], 9); /* the caller's array is left as it was */
	ck_assert(isnan(median_of(v, 0)));
}
END_TEST

START_TEST(test_argv_join)
{
	char *plain[] = { "/usr/bin/unshare", "-Urmpf", "/bin/true", NULL };
	char *quoted[] = { "/bin/sh", "-c", "echo hi", "it's", "", NULL };
	char buf[256];

	argv_join(buf, sizeof(buf), plain);
	ck_assert_str_eq(buf, "/usr/bin/unshare -Urmpf /bin/true");
	argv_join(buf, sizeof(buf), quoted);
	ck_assert_str_eq(buf, "/bin/sh -c 'echo hi' 'it'\\''s' ''");
	argv_join(buf, 8, plain); /* truncated, still a string */
	ck_assert_uint_lt(strlen(buf), 8);
}
END_TEST

START_TEST(test_rec_cmdline)
{
	struct tier_options o = { .ward = "/tmp/wb.1/bin/ward", .policy = "/tmp/wb.1/bin/policy.json",
				  .dir = "/tmp/wb.1/me" };
	char line[] = "/tmp/wb.1/bin/ward run --policy /tmp/wb.1/bin/policy.json -C "
		      "/tmp/wb.1/me/work --bundle /tmp/wb.1/me/crun-true\tx\ny";
	char out[512] = "";
	FILE *f = fmemopen(out, sizeof(out), "w");

	snprintf(o.workdir, sizeof(o.workdir), "%s/work", o.dir);
	ck_assert_ptr_nonnull(f);
	rec_cmdline(f, line, &o);
	fclose(f);
	ck_assert_str_eq(out, "ward run --policy bench/policy.json -C $WORK --bundle "
			      "$DIR/crun-true x y");
}
END_TEST

START_TEST(test_exec)
{
	char *argv[] = { "/bin/sh", "-c", "echo hi; echo err >&2; exit 3", NULL };
	char *missing[] = { "/nonexistent/program", NULL };
	char out[64];
	double ms = -1;
	long rss = -1;
	int st;

	st = bench_exec(argv, out, sizeof(out), &ms, &rss);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 3);
	ck_assert_str_eq(out, "hi\nerr\n");
	ck_assert(ms > 0);
	ck_assert(rss > 0);
	st = bench_exec(missing, NULL, 0, &ms, NULL);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 127);
}
END_TEST

/* The network section's pieces, in a namespace of the test's own: each kind
 * of request succeeds and is checked, and what the proxy refuses or a wrong
 * length is reported, not measured. */
START_TEST(test_net_pieces)
{
	struct where w;
	char why[256];
	double us, mbps;
	pid_t up, eng;
	int l;

	ck_assert_msg(enter_netns(why, sizeof(why)) == 0, "%s", why);
	l = listen_local(UPSTREAM_PORT);
	ck_assert_int_ge(l, 0);
	up = spawn_serving(upstream_serve, l);
	close(l);
	l = listen_local(ENGINE_PORT);
	ck_assert_int_ge(l, 0);
	ck_assert_int_eq(fcntl(l, F_SETFL, O_NONBLOCK), 0);
	eng = spawn_serving(engine_serve, l);
	close(l);
	ck_assert_int_eq(addr_parse("127.0.0.1", "80", &w.upstream), 0);
	ck_assert_int_eq(addr_parse("127.0.0.1", "3128", &w.proxy), 0);
	ck_assert_int_lt(addr_parse("127.0.0.1", "0", &w.proxy), 0);
	ck_assert_int_lt(addr_parse("localhost", "80", &w.proxy), 0);
	ck_assert_int_eq(addr_parse("127.0.0.1", "3128", &w.proxy), 0);

	ck_assert_msg(request(&w, DIRECT, "/small", strlen(SMALL_BODY), &us, why, sizeof(why)) == 0,
		      "%s", why);
	ck_assert(us > 0);
	/* twice each: nothing of one request may leak into the next */
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(request(&w, PROXY_GET, "/small", strlen(SMALL_BODY), &us, why,
				      sizeof(why)) == 0, "%s", why);
		ck_assert_msg(request(&w, PROXY_CONNECT, "/small", strlen(SMALL_BODY), &us, why,
				      sizeof(why)) == 0, "%s", why);
	}
	ck_assert_msg(stream_mbps(&w, PROXY_CONNECT, 3 << 20, &mbps, why, sizeof(why)) == 0, "%s",
		      why);
	ck_assert(mbps > 0);
	ck_assert_int_eq(request(&w, DIRECT, "/small", 5, &us, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "36 bytes of body, expected 5");
	/* port 81 is not on the policy's port list */
	w.upstream.sin_port = htons(81);
	ck_assert_int_eq(request(&w, PROXY_CONNECT, "/small", 36, &us, why, sizeof(why)), -1);
	ck_assert_msg(strncmp(why, "CONNECT answered 'HTTP/1.1 403", 30) == 0, "%s", why);
	ck_assert_int_eq(request(&w, DIRECT, "/small", 36, &us, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "connect '127.0.0.1:81': Connection refused");

	/* net-client: its lines, STREAMS streams after the requests */
	{
		char *ok[] = { "net-client", "direct", "2", "127.0.0.1", "80", "1048576", "3", NULL };
		char *bad[] = { "net-client", "direct", "2", "127.0.0.1", "80", "1048576", "0", NULL };
		char out[4096] = "";
		int p[2], st, streams = 0, directs = 0;
		ssize_t n, got = 0;
		pid_t pid;

		ck_assert_int_eq(pipe(p), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			dup2(p[1], 1);
			dup2(p[1], 2);
			st = bench_net_client(7, ok);
			fflush(stdout);
			st = st == 0 ? bench_net_client(7, bad) : 100 + st;
			fflush(stdout);
			_exit(st);
		}
		close(p[1]);
		while ((n = read(p[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
			got += n;
		close(p[0]);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d: %s", st, out);
		for (char *q = out; (q = strstr(q, "stream ")); q++)
			streams++;
		for (char *q = out; (q = strstr(q, "direct ")); q++)
			directs++;
		ck_assert_msg(streams == 3 && directs == 2, "%s", out);
		ck_assert_msg(strstr(out, "usage: ward-bench net-client"), "%s", out);
	}
	stop(eng);
	stop(up);
}
END_TEST

/* ward-bench's sections to run alone: ladder, network and throughput, and a
 * clear refusal of anything else, before anything is measured. */
START_TEST(test_only_sections)
{
	char *bench = harness_path("bench/ward-bench"), cmd[PATH_MAX + 200], out[512] = "";
	FILE *f;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "'%s' tier --ward /x --policy /x --dir /x --out /dev/null --only peers 2>&1", bench);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	st = pclose(f);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d: %s", st, out);
	ck_assert_msg(strstr(out, "--only 'peers': the sections are ladder, network and throughput"),
		      "%s", out);
	free(bench);
}
END_TEST

static int run_bench(const char *args, char *out, size_t outsz)
{
	char *bench = harness_path("bench/ward-bench"), cmd[PATH_MAX + 400];
	size_t n;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1", bench, args);
	free(bench);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(out, 1, outsz - 1, f);
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* ab: both binaries run every round after a warm-up pair, and a binary that
 * fails stops the comparison with its name rather than giving a figure. */
START_TEST(test_ab)
{
	char out[2048];
	int rc;

	rc = run_bench("ab --old /bin/true --new /bin/true --policy /x --dir /tmp --rounds 3", out,
		       sizeof(out));
	ck_assert_msg(rc == 0, "status %d: %s", rc, out);
	ck_assert_msg(strstr(out, "median of 3 paired differences"), "%s", out);
	ck_assert_msg(strstr(out, "\nold ") && strstr(out, "\nnew "), "%s", out);
	rc = run_bench("ab --old /bin/true --new /bin/false --policy /x --dir /tmp --rounds 3", out,
		       sizeof(out));
	ck_assert_msg(rc == 1 && strstr(out, "'/bin/false' failed"), "status %d: %s", rc, out);
	ck_assert_msg(!strstr(out, "added:"), "%s", out);
	rc = run_bench("ab --old /bin/true --policy /x --dir /tmp", out, sizeof(out));
	ck_assert_msg(rc == 2 && strstr(out, "usage: ward-bench ab"), "status %d: %s", rc, out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bench");
	TCase *tc = harness_tcase(s, "bench", NULL);

	tcase_add_test(tc, test_quantiles);
	tcase_add_test(tc, test_only_sections);
	tcase_add_test(tc, test_ab);
	tcase_add_test(tc, test_many_samples);
	tcase_add_test(tc, test_median_of);
	tcase_add_test(tc, test_argv_join);
	tcase_add_test(tc, test_rec_cmdline);
	tcase_add_test(tc, test_exec);
	tc = harness_tcase(s, "network", "userns");
	tcase_add_test(tc, test_net_pieces);
	return harness_main(s);
}
