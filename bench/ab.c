/* ab.c — `ward-bench ab`: two ward binaries side by side, interleaved.
 *
 * The question a change to the per-command path must answer is "what does it
 * cost", and two separate bench runs cannot say it within a tenth of a
 * millisecond on a shared machine: drift between the runs is larger than
 * that. So the two binaries run alternately (A B A B …, the first pair
 * discarded as warm-up), the same command with the same policy and workdir,
 * and the difference is given both as the difference of the medians and as
 * the median of the paired differences (each B minus the A just before it),
 * which drift between pairs does not move. The CPU time each run took (its
 * whole process tree, from rusage) is given beside it: on a loaded machine the
 * wall clock measures the load, the CPU time still measures the work. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench/bench.h"

static const char ab_usage[] =
	"usage: ward-bench ab --old PATH --new PATH --policy FILE --dir DIR [--rounds N]\n"
	"                     [-- WARD-RUN-ARGS... -- CMD...]\n"
	"Runs `PATH run --policy FILE -C DIR ARGS` alternately for the two binaries\n"
	"(default ARGS: -- /bin/true; 300 rounds) and prints their medians, p10, p90,\n"
	"and the new binary's added cost.\n";

static int one(char **argv, double *ms, double *cpu)
{
	int st = bench_exec(argv, NULL, 0, ms, NULL);

	*cpu = bench_last_cpu_ms;
	if (st < 0) {
		fprintf(stderr, "ward-bench: run '%s': %s\n", argv[0], strerror(errno));
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "ward-bench: '%s' failed (wait status %d)\n", argv[0], st);
		return -1;
	}
	return 0;
}

int bench_ab(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "old", required_argument, NULL, 'o' },    { "new", required_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, 'p' }, { "dir", required_argument, NULL, 'd' },
		{ "rounds", required_argument, NULL, 'r' }, { NULL, 0, NULL, 0 },
	};
	static char *deflt[] = { "--", "/bin/true", NULL };
	const char *bin[2] = { NULL, NULL }, *policy = NULL, *dir = NULL;
	struct samples s[2] = { { 0 } }, diff = { 0 }, cpu[2] = { { 0 } }, cdiff = { 0 };
	char **extra = deflt, **av[2] = { NULL, NULL };
	char polopt[4096], state[2][4096];
	const char *base = getenv("XDG_STATE_HOME");
	size_t nextra = 2;
	int rounds = 300, c, rc = 1;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'o': bin[0] = optarg; break;
		case 'n': bin[1] = optarg; break;
		case 'p': policy = optarg; break;
		case 'd': dir = optarg; break;
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 2 || rounds > 100000) {
				fprintf(stderr, "ward-bench: --rounds '%s' is not 2 … 100000\n", optarg);
				return 2;
			}
			break;
		default: fputs(ab_usage, stderr); return 2;
		}
	}
	if (!bin[0] || !bin[1] || !policy || !dir) {
		fputs(ab_usage, stderr);
		return 2;
	}
	if (optind < argc) {
		extra = argv + optind;
		nextra = (size_t)(argc - optind);
	}
	snprintf(polopt, sizeof(polopt), "--policy=%s", policy);
	/* each binary its own state directory ($XDG_STATE_HOME/old and /new):
	 * what one version leaves there (its spare placeholders, say) is not
	 * the other's to use, nor to pay for */
	if (base) {
		/* $XDG_STATE_HOME itself made when there is none yet, as ward
		 * would make it */
		if (mkdir(base, 0700) < 0 && errno != EEXIST) {
			fprintf(stderr, "ward-bench: mkdir '%s': %s\n", base, strerror(errno));
			return 1;
		}
		for (int k = 0; k < 2; k++) {
			snprintf(state[k], sizeof(state[k]), "%s/%s", base, k ? "new" : "old");
			if (mkdir(state[k], 0700) < 0 && errno != EEXIST) {
				fprintf(stderr, "ward-bench: mkdir '%s': %s\n", state[k], strerror(errno));
				return 1;
			}
		}
	}
	for (int k = 0; k < 2; k++) {
		av[k] = calloc(nextra + 6, sizeof(char *));
		if (!av[k]) {
			perror("ward-bench: calloc");
			goto out;
		}
		av[k][0] = (char *)bin[k];
		av[k][1] = "run";
		av[k][2] = polopt;
		av[k][3] = "-C";
		av[k][4] = (char *)dir;
		memcpy(av[k] + 5, extra, nextra * sizeof(char *));
	}
	for (int i = 0; i <= rounds; i++) {
		double ms[2], cms[2];

		/* alternate which goes first, so neither always follows the other */
		for (int j = 0; j < 2; j++) {
			int k = (i + j) % 2;

			if (base)
				setenv("XDG_STATE_HOME", state[k], 1);
			if (one(av[k], &ms[k], &cms[k]) < 0)
				goto out;
		}
		if (i == 0)
			continue;
		if (samples_add(&s[0], ms[0]) < 0 || samples_add(&s[1], ms[1]) < 0 ||
		    samples_add(&diff, ms[1] - ms[0]) < 0 || samples_add(&cpu[0], cms[0]) < 0 ||
		    samples_add(&cpu[1], cms[1]) < 0 || samples_add(&cdiff, cms[1] - cms[0]) < 0) {
			perror("ward-bench: samples");
			goto out;
		}
	}
	printf("%-6s %10s %10s %10s  %s\n", "", "median", "p10", "p90", "binary");
	for (int k = 0; k < 2; k++) {
		double med = samples_quantile(&s[k], 0.5);

		printf("%-6s %7.3f ms %7.3f ms %7.3f ms  %s\n", k ? "new" : "old", med,
		       samples_quantile(&s[k], 0.1), samples_quantile(&s[k], 0.9), bin[k]);
	}
	printf("added: %+.3f ms (difference of the medians), %+.3f ms (median of %d paired "
	       "differences, p25 %+.3f, p75 %+.3f)\n",
	       samples_quantile(&s[1], 0.5) - samples_quantile(&s[0], 0.5),
	       samples_quantile(&diff, 0.5), rounds, samples_quantile(&diff, 0.25),
	       samples_quantile(&diff, 0.75));
	printf("cpu:   old %.3f ms, new %.3f ms (medians), added %+.3f ms (median of the paired "
	       "differences)\n",
	       samples_quantile(&cpu[0], 0.5), samples_quantile(&cpu[1], 0.5),
	       samples_quantile(&cdiff, 0.5));
	rc = 0;
out:
	for (int k = 0; k < 2; k++) {
		free(av[k]);
		samples_release(&s[k]);
		samples_release(&cpu[k]);
	}
	samples_release(&diff);
	samples_release(&cdiff);
	return rc;
}
