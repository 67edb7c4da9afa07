/* libcase.c — a library row: `ward run` flags parsed by ward's own option
 * parser into a struct ward_config, then ward_run() called in this process.
 *
 * Writing every rung as CLI flags keeps each row reproducible with the CLI,
 * and makes a layer's presence exact: the rung is measured when ward's parser
 * knows its flag and is "n/a (not built)" when it does not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "runtime/cli-internal.h"
#include "ward/sandbox.h"

struct libcase {
	struct run_options opts;
};

#define MAX_WORDS 64

struct libcase *libcase_new(const char *flags, const struct tier_options *o, char *why,
			    size_t whysz)
{
	char *words[MAX_WORDS + 8], *copy, *save = NULL, *w;
	struct ward_error *err = NULL;
	struct libcase *c;
	int n = 0;

	copy = strdup(flags ? flags : "");
	c = calloc(1, sizeof(*c));
	if (!copy || !c) {
		free(copy);
		free(c);
		snprintf(why, whysz, "failed: out of memory");
		return NULL;
	}
	words[n++] = (char *)"run";
	words[n++] = (char *)"--policy";
	words[n++] = (char *)o->policy;
	words[n++] = (char *)"-C";
	words[n++] = (char *)o->workdir;
	for (w = strtok_r(copy, " ", &save); w && n < MAX_WORDS; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	words[n++] = (char *)"--";
	words[n++] = (char *)"/bin/true"; /* the parser wants a command; rows give their own */
	words[n] = NULL;
	if (ward_run_options_parse(n, words, &c->opts, &err) < 0) {
		if (strncmp(err->message, "unknown option", 14) == 0)
			snprintf(why, whysz, "n/a (not built)");
		else
			snprintf(why, whysz, "failed: %s", err->message);
		ward_error_free(err);
		free(copy);
		free(c);
		return NULL;
	}
	/* The parsed options point into words only for the command, which the
	 * rows replace; the configuration owns its own copies. */
	c->opts.argv = NULL;
	c->opts.shell = NULL;
	free(copy);
	return c;
}

int libcase_run(struct libcase *c, char *const argv[], char *out, size_t outsz, double *ms)
{
	struct ward_error *err = NULL;
	struct ward_result res;
	double cpu0 = bench_cpu_ms();
	long long t0 = bench_now_ns();
	int rc;

	rc = ward_run(&c->opts.cfg, argv, &res, &err);
	*ms = (double)(bench_now_ns() - t0) / 1e6;
	/* ward_run() reaps the sandbox's init, which reaped the command. */
	bench_last_cpu_ms = bench_cpu_ms() - cpu0;
	if (rc < 0) {
		if (out)
			snprintf(out, outsz, "ward_run: %s", err->message);
		ward_error_free(err);
		return -1;
	}
	rc = 0;
	if (res.error) {
		if (out)
			snprintf(out, outsz, "%s%s",
				 res.error->kind == WARD_ERR_RATE_LIMITED
					 ? "ward's rate limit refused the run (set the rate limits "
					   "to 0 in the bench's policy file): "
					 : "",
				 res.error->message);
		rc = -1;
	} else if (res.exit_code != 0) {
		if (out)
			snprintf(out, outsz, "the command exited %d: %.200s", res.exit_code,
				 res.output);
		rc = -1;
	} else if (out) {
		snprintf(out, outsz, "%s", res.output);
	}
	ward_result_release(&res);
	return rc;
}

void libcase_free(struct libcase *c)
{
	if (!c)
		return;
	ward_run_options_release(&c->opts);
	free(c);
}
