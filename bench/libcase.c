/* libcase.c — a library row: `ward run` flags parsed by ward's own option
 * parser into a struct ward_config, then ward_run() called in this process;
 * and the session row: the same configuration as a session with one shared
 * sandbox, each command a ward_session_exec().
 *
 * Writing every rung as CLI flags keeps each row reproducible with the CLI,
 * and makes a layer's presence exact: the rung is measured when ward's parser
 * knows its flag and is "n/a (not built)" when it does not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "runtime/cli/cli-internal.h"
#include "ward/sandbox.h"
#include "ward/session.h"

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

/* ---- the session row ------------------------------------------------------- */

struct sesscase {
	struct ward_session *s;
};

struct sesscase *sesscase_new(const struct tier_options *o, char *why, size_t whysz)
{
	struct libcase *lib = libcase_new("", o, why, whysz);
	struct ward_session_options opt;
	struct ward_error *err = NULL;
	struct sesscase *c;

	if (!lib)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		libcase_free(lib);
		snprintf(why, whysz, "failed: out of memory");
		return NULL;
	}
	ward_session_options_init(&opt);
	opt.isolation = WARD_SESSION_SHARED;
	/* the session takes over the configuration (and leaves it empty) */
	if (ward_session_new(&lib->opts.cfg, &opt, &c->s, &err) < 0) {
		snprintf(why, whysz, "failed: %s", err->message);
		ward_error_free(err);
		free(c);
		c = NULL;
	}
	ward_session_options_release(&opt);
	libcase_free(lib);
	return c;
}

int sesscase_run(struct sesscase *c, const char *cmd, char *out, size_t outsz, double *ms)
{
	struct ward_session_exec_options opt = { .no_history = true };
	struct ward_session_result r;
	struct ward_error *err = NULL;
	long long t0 = bench_now_ns();
	int rc;

	rc = ward_session_exec(c->s, cmd, &opt, &r, &err);
	*ms = (double)(bench_now_ns() - t0) / 1e6;
	if (rc < 0) {
		snprintf(out, outsz, "ward_session_exec: %s", err->message);
		ward_error_free(err);
		return -1;
	}
	rc = 0;
	if (r.run.error) {
		snprintf(out, outsz, "%s", r.run.error->message);
		rc = -1;
	} else if (r.run.exit_code != 0) {
		snprintf(out, outsz, "the command exited %d: %.200s", r.run.exit_code, r.run.output);
		rc = -1;
	} else {
		snprintf(out, outsz, "%s", r.run.output);
	}
	ward_session_result_release(&r);
	return rc;
}

void sesscase_free(struct sesscase *c)
{
	if (!c)
		return;
	ward_session_free(c->s);
	free(c);
}
