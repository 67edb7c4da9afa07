/* throughput.c — sandboxed commands per second with 1 and 2 parallel
 * workers, beside bare execution's own 1 → 2 scaling.
 *
 * On a small VM even bare /bin/true loses per-worker throughput with a second
 * worker (fork and exec contend on the mm and the page allocator), so ward's
 * scaling is compared with bare's, not with 2x. The cases and worker counts
 * are interleaved in short windows, and each figure is the median window. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"

struct tcase {
	const char *key, *label;
	char *argv[16];          /* a program, or NULL for the library */
	struct libcase *lib;
	char cmdline[BENCH_LINE_MAX];
	char status[BENCH_STATUS_MAX];
	double rate[2][64];      /* [workers-1][round] */
	int n[2];
};

/* One worker: run the case until the deadline; write runs and seconds. */
static void worker(struct tcase *t, long long deadline, int fd)
{
	char *true_argv[] = { (char *)"/bin/true", NULL };
	long long t0 = bench_now_ns();
	double rec[2], ms;
	long runs = 0;
	char why[256];

	while (bench_now_ns() < deadline) {
		if (t->lib) {
			if (libcase_run(t->lib, true_argv, why, sizeof(why), &ms) < 0)
				_exit(1);
		} else if (bench_exec(t->argv, NULL, 0, &ms, NULL) != 0) {
			_exit(1);
		}
		runs++;
	}
	rec[0] = (double)runs;
	rec[1] = (double)(bench_now_ns() - t0) / 1e9;
	if (write(fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec))
		_exit(1);
	_exit(0);
}

/* Commands per second of `workers` workers together, over window_ms. */
static int window(struct tcase *t, int workers, int window_ms, double *rate)
{
	long long deadline = bench_now_ns() + (long long)window_ms * 1000000LL;
	pid_t pids[2];
	int fds[2][2], i, bad = 0;

	*rate = 0;
	for (i = 0; i < workers; i++) {
		if (pipe(fds[i]) < 0)
			return -1;
		pids[i] = fork();
		if (pids[i] < 0)
			return -1;
		if (pids[i] == 0) {
			close(fds[i][0]);
			worker(t, deadline, fds[i][1]);
		}
		close(fds[i][1]);
	}
	for (i = 0; i < workers; i++) {
		double rec[2];
		int st;

		if (read(fds[i][0], rec, sizeof(rec)) != (ssize_t)sizeof(rec) || rec[1] <= 0)
			bad = 1;
		else
			*rate += rec[0] / rec[1];
		close(fds[i][0]);
		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	}
	return bad ? -1 : 0;
}

int bench_throughput(const struct tier_options *o, FILE *rec)
{
	struct tcase t[3];
	int rounds = o->quick ? 2 : 7, window_ms = o->quick ? 250 : 1000;
	int r, i, w, nt = 3;
	char why[BENCH_STATUS_MAX];

	memset(t, 0, sizeof(t));
	t[0].key = "bare";
	t[0].label = "bare fork+exec";
	t[0].argv[0] = (char *)"/bin/true";
	t[1].key = "lib-full";
	t[1].label = "ward_run(), full stack";
	t[2].key = "cli-full";
	t[2].label = "ward CLI, full stack";
	t[2].argv[0] = (char *)o->ward;
	t[2].argv[1] = (char *)"run";
	t[2].argv[2] = (char *)"--policy";
	t[2].argv[3] = (char *)o->policy;
	t[2].argv[4] = (char *)"-C";
	t[2].argv[5] = (char *)o->workdir;
	t[2].argv[6] = (char *)"--";
	t[2].argv[7] = (char *)"/bin/true";
	for (i = 0; i < nt; i++) {
		snprintf(t[i].status, sizeof(t[i].status), "ok");
		if (t[i].argv[0])
			argv_join(t[i].cmdline, sizeof(t[i].cmdline), t[i].argv);
	}
	snprintf(t[1].cmdline, sizeof(t[1].cmdline),
		 "ward_run() as: ward run --policy %s -C %s -- /bin/true", o->policy, o->workdir);
	t[1].lib = libcase_new("", o, why, sizeof(why));
	if (!t[1].lib)
		snprintf(t[1].status, sizeof(t[1].status), "%s", why);

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < nt; i++)
			for (w = 1; w <= 2; w++) {
				/* The worker counts alternate which goes first. */
				int ww = (r % 2) ? 3 - w : w;
				double rate;

				if (strcmp(t[i].status, "ok") != 0)
					continue;
				if (window(&t[i], ww, window_ms, &rate) < 0) {
					snprintf(t[i].status, sizeof(t[i].status),
						 "failed: a run did not exit 0");
					continue;
				}
				t[i].rate[ww - 1][t[i].n[ww - 1]++] = rate;
			}
		fprintf(stderr, "ward-bench: throughput, round %d of %d\n", r + 1, rounds);
	}
	for (i = 0; i < nt; i++) {
		for (w = 1; w <= 2; w++) {
			bool good = strcmp(t[i].status, "ok") == 0 && t[i].n[w - 1] > 0;

			fprintf(rec, "rate\t%s\t%s\t%d\t", t[i].key, t[i].label, w);
			rec_escape(rec, t[i].status);
			if (good)
				fprintf(rec, "\t%d\t%.2f\t", t[i].n[w - 1],
					median_of(t[i].rate[w - 1], (size_t)t[i].n[w - 1]));
			else
				fprintf(rec, "\t0\t-\t");
			rec_cmdline(rec, t[i].cmdline, o);
			fputc('\n', rec);
		}
		libcase_free(t[i].lib);
	}
	fflush(rec);
	return 0;
}
