/* output.c — a large output stream through `ward run --json`: throughput,
 * and ward's peak RSS while its bounded head + tail buffer keeps 64 KiB.
 *
 * The peak RSS is wait4()'s ru_maxrss of the ward process: the largest of
 * ward's own and that of every descendant it reaped (the sandbox's init,
 * which reaped the command), so it is an upper bound on ward's. It counts the
 * forked copy of the parent before execve too, so the parent is not this
 * driver (megabytes of buffers) but a fresh `ward-bench spawn-rss`, whose
 * own copy is small: the RSS floor row shows the method's floor. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"

struct ocase {
	const char *key, *label;
	char *argv[16];
	char request[256]; /* for --json rows: the request file */
	unsigned long long expect; /* bytes the command writes */
	bool json;
	char cmdline[BENCH_LINE_MAX];
	char status[BENCH_STATUS_MAX];
	double secs[16];
	long rss_max;
	int n;
};

static int check_json(const char *out, unsigned long long expect, char *why, size_t whysz)
{
	json_error_t je;
	json_t *root = json_loads(out, JSON_ALLOW_NUL, &je), *v;
	int rc = -1;

	if (!root) {
		snprintf(why, whysz, "failed: the result is not JSON: %s", je.text);
		return -1;
	}
	v = json_object_get(root, "exit_code");
	if (!json_is_integer(v) || json_integer_value(v) != 0) {
		json_t *e = json_object_get(root, "error");
		json_t *m = e ? json_object_get(e, "message") : NULL;

		snprintf(why, whysz, "failed: exit_code %lld: %s",
			 json_is_integer(v) ? (long long)json_integer_value(v) : -1LL,
			 json_is_string(m) ? json_string_value(m) : "");
		goto out;
	}
	v = json_object_get(root, "stdout_bytes");
	if (!json_is_integer(v) || (unsigned long long)json_integer_value(v) != expect) {
		snprintf(why, whysz, "failed: stdout_bytes %lld, expected %llu",
			 json_is_integer(v) ? (long long)json_integer_value(v) : -1LL, expect);
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

static int run_ocase(struct ocase *c, const struct tier_options *o)
{
	/* The result holds 64 KiB of output, escaped: \u0000 is 6 bytes a byte. */
	static char out[1 << 20];
	char rssfile[600], *argv[24], buf[64], why[BENCH_STATUS_MAX];
	FILE *f;
	int i, n = 0;
	double ms;
	long rss = 0;
	int st;

	snprintf(rssfile, sizeof(rssfile), "%s/rss-%s", o->dir, c->key);
	argv[n++] = (char *)o->self;
	argv[n++] = (char *)"spawn-rss";
	argv[n++] = rssfile;
	argv[n++] = (char *)"--";
	for (i = 0; c->argv[i] && n < 23; i++)
		argv[n++] = c->argv[i];
	argv[n] = NULL;
	unlink(rssfile);
	st = bench_exec_io(argv, c->json ? c->request : NULL, NULL, out, sizeof(out), &ms, NULL);
	if (st < 0) {
		snprintf(c->status, sizeof(c->status), "failed: %s: %s", c->argv[0],
			 strerror(errno));
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(c->status, sizeof(c->status), "failed: exit status %d",
			 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return -1;
	}
	if (c->json && check_json(out, c->expect, why, sizeof(why)) < 0) {
		snprintf(c->status, sizeof(c->status), "%s", why);
		return -1;
	}
	f = fopen(rssfile, "r");
	if (!f || !fgets(buf, sizeof(buf), f) || (rss = atol(buf)) <= 0) {
		snprintf(c->status, sizeof(c->status), "failed: no peak RSS from spawn-rss");
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	unlink(rssfile);
	c->secs[c->n++] = ms / 1000.0;
	if (rss > c->rss_max)
		c->rss_max = rss;
	return 0;
}

static void json_case(struct ocase *c, const struct tier_options *o, const char *command,
		      unsigned long long expect)
{
	FILE *f;
	char *p;

	snprintf(c->request, sizeof(c->request), "%s/request-%s.json", o->dir, c->key);
	f = fopen(c->request, "w");
	if (!f || fprintf(f, "{\"command\": \"%s\"}\n", command) < 0 || fclose(f) != 0) {
		snprintf(c->status, sizeof(c->status), "failed: write '%.150s': %s", c->request,
			 strerror(errno));
		return;
	}
	c->json = true;
	c->expect = expect;
	c->argv[0] = (char *)o->ward;
	c->argv[1] = (char *)"run";
	c->argv[2] = (char *)"--policy";
	c->argv[3] = (char *)o->policy;
	c->argv[4] = (char *)"-C";
	c->argv[5] = (char *)o->workdir;
	c->argv[6] = (char *)"--json";
	argv_join(c->cmdline, sizeof(c->cmdline), c->argv);
	p = c->cmdline + strlen(c->cmdline);
	snprintf(p, sizeof(c->cmdline) - (size_t)(p - c->cmdline), " <<< '{\"command\": \"%s\"}'",
		 command);
}

int bench_output(const struct tier_options *o, FILE *rec)
{
	unsigned long long bytes = o->quick ? 64ULL << 20 : 1ULL << 30;
	int reps = o->quick ? 1 : 3, r, i, nc = 4;
	char size[32], cmd[64];
	struct ocase c[4];

	memset(c, 0, sizeof(c));
	snprintf(size, sizeof(size), "%llu", bytes);
	snprintf(cmd, sizeof(cmd), "head -c %llu /dev/zero", bytes);
	for (i = 0; i < nc; i++)
		snprintf(c[i].status, sizeof(c[i].status), "ok");

	c[0].key = "bare";
	c[0].label = "bare, into a pipe";
	c[0].argv[0] = (char *)(access("/usr/bin/head", X_OK) == 0 ? "/usr/bin/head" : "/bin/head");
	c[0].argv[1] = (char *)"-c";
	c[0].argv[2] = size;
	c[0].argv[3] = (char *)"/dev/zero";
	c[0].expect = bytes;
	argv_join(c[0].cmdline, sizeof(c[0].cmdline), c[0].argv);

	c[1].key = "ward-json";
	c[1].label = "ward run --json";
	json_case(&c[1], o, cmd, bytes);

	c[2].key = "ward-json-off";
	c[2].label = "ward run --json --sandbox off";
	json_case(&c[2], o, cmd, bytes);
	c[2].argv[7] = (char *)"--sandbox";
	c[2].argv[8] = (char *)"off";
	argv_join(c[2].cmdline, sizeof(c[2].cmdline), c[2].argv);
	strncat(c[2].cmdline, " <<< (the same request)",
		sizeof(c[2].cmdline) - strlen(c[2].cmdline) - 1);

	/* ward's RSS for a command that prints nothing: the floor. */
	c[3].key = "ward-json-true";
	c[3].label = "ward run --json, /bin/true (RSS floor)";
	json_case(&c[3], o, "/bin/true", 0);

	for (r = 0; r < reps; r++) {
		for (i = 0; i < nc; i++)
			if (strcmp(c[i].status, "ok") == 0)
				run_ocase(&c[i], o);
		fprintf(stderr, "ward-bench: output, round %d of %d\n", r + 1, reps);
	}
	for (i = 0; i < nc; i++) {
		bool good = strcmp(c[i].status, "ok") == 0 && c[i].n > 0;

		fprintf(rec, "output\t%s\t%s\t", c[i].key, c[i].label);
		rec_escape(rec, c[i].status);
		if (good)
			fprintf(rec, "\t%llu\t%.4f\t%ld\t", c[i].expect,
				median_of(c[i].secs, (size_t)c[i].n), c[i].rss_max);
		else
			fprintf(rec, "\t%llu\t-\t-\t", c[i].expect);
		rec_cmdline(rec, c[i].cmdline, o);
		fputc('\n', rec);
		if (c[i].json)
			unlink(c[i].request);
	}
	fflush(rec);
	return 0;
}
