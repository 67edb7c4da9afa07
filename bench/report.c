/* report.c — the tiers' records into a Markdown report (tables, ratios to
 * bare and to bwrap from the same run, the targets met or missed and by how
 * much) and the chart's gnuplot data and script. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

#define MAX_TIERS 4
#define MAX_RECS 512
#define MAX_FIELDS 16

struct rec {
	int tier;
	char *f[MAX_FIELDS]; /* f[0] is the record type */
	int n;
};

static struct rec recs[MAX_RECS];
static int n_recs;
static const struct report_tier *tiers;
static size_t n_tiers;

static int load(int tier, const char *path)
{
	char line[8192];
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "ward-bench: open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct rec *r;
		char *p = line, *tab;

		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		if (n_recs == MAX_RECS) {
			fprintf(stderr, "ward-bench: '%s': too many records\n", path);
			fclose(f);
			return -1;
		}
		r = &recs[n_recs++];
		r->tier = tier;
		r->n = 0;
		for (;;) {
			tab = strchr(p, '\t');
			if (tab)
				*tab = '\0';
			if (r->n < MAX_FIELDS)
				r->f[r->n++] = strdup(p);
			if (!tab)
				break;
			p = tab + 1;
		}
	}
	fclose(f);
	return 0;
}

static const char *get(const struct rec *r, int i)
{
	return i < r->n && r->f[i] ? r->f[i] : "";
}

static const char *info(int tier, const char *key)
{
	int i;

	for (i = 0; i < n_recs; i++)
		if (recs[i].tier == tier && strcmp(get(&recs[i], 0), "info") == 0 &&
		    strcmp(get(&recs[i], 1), key) == 0)
			return get(&recs[i], 2);
	return NULL;
}

static double num(const char *s)
{
	char *end;
	double v;

	if (!s || !*s || strcmp(s, "-") == 0)
		return NAN;
	v = strtod(s, &end);
	return *end ? NAN : v;
}

/* case records: case CMD KEY GROUP LABEL STATUS N MEDIAN P10 P90 CMDLINE */
static const struct rec *find_case(int tier, const char *cmd, const char *key)
{
	int i;

	for (i = 0; i < n_recs; i++)
		if (recs[i].tier == tier && strcmp(get(&recs[i], 0), "case") == 0 &&
		    strcmp(get(&recs[i], 1), cmd) == 0 && strcmp(get(&recs[i], 2), key) == 0)
			return &recs[i];
	return NULL;
}

static double case_median(int tier, const char *cmd, const char *key)
{
	const struct rec *r = find_case(tier, cmd, key);

	return r && strcmp(get(r, 5), "ok") == 0 ? num(get(r, 7)) : NAN;
}

static double case_cpu(int tier, const char *cmd, const char *key)
{
	const struct rec *r = find_case(tier, cmd, key);

	return r && strcmp(get(r, 5), "ok") == 0 ? num(get(r, 11)) : NAN;
}

/* rate records: rate KEY LABEL WORKERS STATUS ROUNDS PER-SECOND CMDLINE */
static double rate_of(int tier, const char *key, int workers)
{
	int i;

	for (i = 0; i < n_recs; i++) {
		const struct rec *r = &recs[i];

		if (r->tier == tier && strcmp(get(r, 0), "rate") == 0 &&
		    strcmp(get(r, 1), key) == 0 && atoi(get(r, 3)) == workers &&
		    strcmp(get(r, 4), "ok") == 0)
			return num(get(r, 6));
	}
	return NAN;
}

/* output records: output KEY LABEL STATUS BYTES SECONDS MAXRSS CMDLINE */
static const struct rec *find_output(int tier, const char *key)
{
	int i;

	for (i = 0; i < n_recs; i++)
		if (recs[i].tier == tier && strcmp(get(&recs[i], 0), "output") == 0 &&
		    strcmp(get(&recs[i], 1), key) == 0)
			return &recs[i];
	return NULL;
}

static void fmt_ms(char *buf, size_t sz, double v)
{
	if (isnan(v))
		snprintf(buf, sz, "–");
	else if (v < 10)
		snprintf(buf, sz, "%.2f", v);
	else
		snprintf(buf, sz, "%.1f", v);
}

static void fmt_ratio(char *buf, size_t sz, double v)
{
	if (isnan(v))
		snprintf(buf, sz, "–");
	else
		snprintf(buf, sz, "%.2f×", v);
}

/* The Markdown table cell for a record's status: "ok" rows have figures. */
static void md_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else
			fputc(*s, f);
	}
}

static const char *const cmd_titles[][2] = {
	{ "true", "`/bin/true`" },
	{ "echo", "`sh -c 'echo hi'`" },
};

/* The cumulative rungs: each one's cost is its median less the one above. */
static const char *const chain[] = {
	"bare", "lib-none", "userns", "mount", "pid", "view", "net", "ns-all", "cgroup",
	"landlock", "seccomp",
};

static bool in_chain(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(chain) / sizeof(chain[0]); i++)
		if (strcmp(chain[i], key) == 0)
			return true;
	return false;
}

static void ladder_table(FILE *f, int tier, const char *cmd)
{
	double bare = case_median(tier, cmd, "bare"), bwrap = case_median(tier, cmd, "bwrap");
	double prev = NAN;
	int i;

	fprintf(f, "| case | median ms | p10 | p90 | × bare | × bwrap | + ms over the rung above "
		   "| CPU ms | runs |\n");
	fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < n_recs; i++) {
		const struct rec *r = &recs[i];
		char m[32], a[32], b[32], rb[32], rw[32], d[32], c[32];

		if (r->tier != tier || strcmp(get(r, 0), "case") != 0 || strcmp(get(r, 1), cmd) != 0)
			continue;
		fprintf(f, "| %s%s | ", strcmp(get(r, 3), "peer") == 0 ? "peer: " : "", get(r, 4));
		if (strcmp(get(r, 5), "ok") != 0) {
			md_text(f, get(r, 5));
			fputs(" | | | | | | | |\n", f);
			continue;
		}
		fmt_ms(m, sizeof(m), num(get(r, 7)));
		fmt_ms(a, sizeof(a), num(get(r, 8)));
		fmt_ms(b, sizeof(b), num(get(r, 9)));
		fmt_ratio(rb, sizeof(rb), num(get(r, 7)) / bare);
		fmt_ratio(rw, sizeof(rw), num(get(r, 7)) / bwrap);
		d[0] = '\0';
		if (in_chain(get(r, 2))) {
			if (!isnan(prev))
				snprintf(d, sizeof(d), "%+.2f", num(get(r, 7)) - prev);
			prev = num(get(r, 7));
		}
		fmt_ms(c, sizeof(c), num(get(r, 11)));
		fprintf(f, "%s | %s | %s | %s | %s | %s | %s | %s |\n", m, a, b, rb, rw, d, c,
			get(r, 6));
	}
	fputc('\n', f);
}

static void commands(FILE *f, int tier)
{
	int i;

	fprintf(f, "<details><summary>Exact command lines (%s)</summary>\n\n"
		   "For `/bin/true`; the `sh -c 'echo hi'` rows run the same with that command. "
		   "`$WORK` is the sandbox's workdir, `$DIR` the bench's scratch directory (both "
		   "temporary).\n\n", tiers[tier].name);
	for (i = 0; i < n_recs; i++) {
		const struct rec *r = &recs[i];

		if (r->tier != tier)
			continue;
		if (strcmp(get(r, 0), "case") == 0 && strcmp(get(r, 1), "true") == 0)
			fprintf(f, "- %s%s: `%s`\n", get(r, 4),
				strcmp(get(r, 5), "ok") == 0 ? "" : " (not measured)", get(r, 10));
	}
	fprintf(f, "\n</details>\n\n");
}

/* ---- the network's records ------------------------------------------------- */

/* net records: net KEY LABEL STATUS MEDIAN UNIT CMDLINE N P10 P90 */
static const struct rec *find_net(int tier, const char *key)
{
	int i;

	for (i = 0; i < n_recs; i++)
		if (recs[i].tier == tier && strcmp(get(&recs[i], 0), "net") == 0 &&
		    strcmp(get(&recs[i], 1), key) == 0)
			return &recs[i];
	return NULL;
}

/* The median of prefix-key ("sandbox", "get"), NaN when not measured. */
static double net_median(int tier, const char *prefix, const char *key)
{
	char k[64];
	const struct rec *r;

	snprintf(k, sizeof(k), "%s-%s", prefix, key);
	r = find_net(tier, k);
	return r && strcmp(get(r, 3), "ok") == 0 ? num(get(r, 4)) : NAN;
}

/* Why the network was not measured: the first net record's status. */
static const char *net_status(int tier)
{
	int i;

	for (i = 0; i < n_recs; i++)
		if (recs[i].tier == tier && strcmp(get(&recs[i], 0), "net") == 0 &&
		    strcmp(get(&recs[i], 3), "ok") != 0)
			return get(&recs[i], 3);
	return "no record";
}

/* ---- targets ------------------------------------------------------------- */

static void target_row(FILE *f, const char *what, bool have, bool met, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void target_row(FILE *f, const char *what, bool have, bool met, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "| %s | %s | ", what, !have ? "–" : met ? "✓" : "✗");
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputs(" |\n", f);
}

/* The proxy's targets are judged on what a sandboxed command sees (client
 * in the sandbox against the same client outside); the engine's own figures
 * are given beside them. */
static void net_targets(FILE *f, int t)
{
	double d = net_median(t, "sandbox", "direct"), g = net_median(t, "sandbox", "get") - d,
	       c = net_median(t, "sandbox", "connect") - d;
	double ed = net_median(t, "engine", "direct"), eg = net_median(t, "engine", "get") - ed,
	       ec = net_median(t, "engine", "connect") - ed;
	double sd = net_median(t, "sandbox", "direct-stream"),
	       st = net_median(t, "sandbox", "tunnel-stream");
	double er = net_median(t, "engine", "tunnel-stream") / net_median(t, "engine", "direct-stream");
	double cr = net_median(t, "engine", "tunnel-allcpu") / net_median(t, "engine", "direct-allcpu");
	char what[256], cpu[96] = "";

	snprintf(what, sizeof(what),
		 "proxy: added latency per request ≤ 0.5 ms (absolute-form GET and CONNECT), %s",
		 tiers[t].name);
	if (isnan(g) || isnan(c)) {
		target_row(f, what, false, false, "not measured: %s", net_status(t));
	} else {
		double worst = g > c ? g : c;

		target_row(f, what, true, worst <= 0.5,
			   "GET %+.3f ms, CONNECT %+.3f ms over %.3f ms direct (client in the sandbox, "
			   "medians)%s%.2f ms; the proxy engine alone adds %.3f and %.3f ms",
			   g, c, d, worst <= 0.5 ? "; margin " : ": missed by ",
			   worst <= 0.5 ? 0.5 - worst : worst - 0.5, eg, ec);
	}
	snprintf(what, sizeof(what), "proxy: CONNECT tunnel throughput ≥ 0.8 × direct, %s",
		 tiers[t].name);
	/* older records have no CPU totals */
	if (!isnan(cr))
		snprintf(cpu, sizeof(cpu), ", its streams costing the processes %.2f × the CPU time",
			 cr);
	if (isnan(sd) || isnan(st))
		target_row(f, what, false, false, "not measured: %s", net_status(t));
	else if (st >= 0.8 * sd)
		target_row(f, what, true, true,
			   "%.2f × (%.0f MB/s against %.0f MB/s direct; the engine alone %.2f ×%s)",
			   st / sd, st, sd, er, cpu);
	else
		target_row(f, what, true, false,
			   "%.2f × (%.0f MB/s against %.0f MB/s direct): missed by %.0f MB/s, "
			   "%.0f %% under the %.0f MB/s the target asks; the engine alone %.2f ×%s",
			   st / sd, st, sd, 0.8 * sd - st, 100.0 * (1 - st / (0.8 * sd)), 0.8 * sd, er,
			   cpu);
}

static void targets(FILE *f)
{
	size_t t;

	fprintf(f, "| target | | measured |\n|---|:-:|---|\n");
	for (t = 0; t < n_tiers; t++) {
		int ti = (int)t;
		double ward = case_median(ti, "true", "cli-full");
		double bwrap = case_median(ti, "true", "bwrap");
		double ratio = ward / bwrap;
		char what[256];

		snprintf(what, sizeof(what),
			 "full-stack `ward run -- /bin/true` ≤ 0.5 × `bwrap --unshare-all`, %s",
			 tiers[t].name);
		double cpu = case_cpu(ti, "true", "cli-full") / case_cpu(ti, "true", "bwrap");

		if (isnan(ratio))
			target_row(f, what, false, false, "not measured (ward %s, bwrap %s)",
				   isnan(ward) ? "missing" : "ok", isnan(bwrap) ? "missing" : "ok");
		else if (ratio <= 0.5)
			target_row(f, what, true, true,
				   "%.2f × (%.2f ms against %.2f ms; by CPU time %.2f ×)", ratio, ward,
				   bwrap, cpu);
		else
			target_row(f, what, true, false,
				   "%.2f × (%.2f ms against %.2f ms): missed by %.2f ms, %.0f %% over "
				   "the %.2f ms the target allows; by CPU time %.2f ×",
				   ratio, ward, bwrap, ward - 0.5 * bwrap,
				   100.0 * (ward / (0.5 * bwrap) - 1), 0.5 * bwrap, cpu);
	}
	for (t = 0; t < n_tiers; t++) {
		int ti = (int)t;
		double bare = case_median(ti, "true", "bare");
		double ward = case_median(ti, "true", "cli-full") - bare;
		double lib = case_median(ti, "true", "lib-full") - bare;
		double ush = case_median(ti, "true", "unshare-Urmpf") - bare;
		double cbare = case_cpu(ti, "true", "bare");
		double cward = case_cpu(ti, "true", "cli-full") - cbare;
		double cush = case_cpu(ti, "true", "unshare-Urmpf") - cbare;
		char what[256], cpu[128];

		snprintf(what, sizeof(what),
			 "ward's overhead over bare ≤ 2 × what `unshare -Urmpf` adds, %s",
			 tiers[t].name);
		snprintf(cpu, sizeof(cpu), "; by CPU time the CLI adds %.2f ms, unshare %.2f ms: %.2f ×",
			 cward, cush, cward / cush);
		if (isnan(ward) || isnan(ush))
			target_row(f, what, false, false, "not measured");
		else if (ward <= 2 * ush)
			target_row(f, what, true, true,
				   "CLI adds %.2f ms, unshare %.2f ms: %.2f × (library: %.2f ms)%s",
				   ward, ush, ward / ush, lib, cpu);
		else
			target_row(f, what, true, false,
				   "CLI adds %.2f ms, unshare %.2f ms: %.2f ×, missed by %.2f ms "
				   "(%.0f %% over); through the library ward adds %.2f ms (%.2f ×)%s",
				   ward, ush, ward / ush, ward - 2 * ush, 100.0 * (ward / (2 * ush) - 1),
				   lib, lib / ush, cpu);
	}
	for (t = 0; t < n_tiers; t++) {
		int ti = (int)t;
		double b = rate_of(ti, "bare", 2) / rate_of(ti, "bare", 1);
		double w = rate_of(ti, "cli-full", 2) / rate_of(ti, "cli-full", 1);
		char what[256];

		snprintf(what, sizeof(what),
			 "ward's 2-worker/1-worker throughput ≥ 0.9 × bare's, %s", tiers[t].name);
		if (isnan(b) || isnan(w))
			target_row(f, what, false, false, "not measured");
		else
			target_row(f, what, true, w >= 0.9 * b,
				   "ward %.2f, bare %.2f: %.2f × bare's scaling%s", w, b, w / b,
				   w >= 0.9 * b ? "" : " (below 0.9)");
	}
	for (t = 0; t < n_tiers; t++) {
		const struct rec *r = find_output((int)t, "ward-json");
		double rss = r ? num(get(r, 6)) / 1024.0 : NAN;
		double bytes = r ? num(get(r, 4)) : NAN;
		char what[256];

		snprintf(what, sizeof(what), "%s of output: ward's peak RSS < 8 MiB, %s",
			 bytes >= (double)(1ULL << 30) ? "1 GiB" : "the stream (quick: not 1 GiB)",
			 tiers[t].name);
		if (!r || isnan(rss))
			target_row(f, what, false, false, "not measured%s%s", r ? ": " : "",
				   r ? get(r, 3) : "");
		else
			target_row(f, what, rss < 8, rss < 8, "%.1f MiB after %.0f MiB%s", rss,
				   bytes / 1048576.0, rss < 8 ? "" : " (over)");
	}
	for (t = 0; t < n_tiers; t++) {
		int ti = (int)t;
		double help = case_median(ti, "true", "cli-help");
		double val = case_median(ti, "true", "cli-validate");
		double chelp = case_cpu(ti, "true", "cli-help");
		double cval = case_cpu(ti, "true", "cli-validate");
		char what[256];

		snprintf(what, sizeof(what),
			 "`ward validate -c` of a typical agent command ≤ 0.2 ms over `ward --help`, %s",
			 tiers[t].name);
		if (isnan(help) || isnan(val))
			target_row(f, what, false, false, "not measured (validate %s, help %s)",
				   isnan(val) ? "missing" : "ok", isnan(help) ? "missing" : "ok");
		else
			target_row(f, what, true, val - help <= 0.2,
				   "+%.3f ms (%.2f ms against %.2f ms, medians); by CPU time +%.3f ms",
				   val - help, val, help, cval - chelp);
	}
	for (t = 0; t < n_tiers; t++) {
		static const char *const cmds[] = { "true", "echo" };
		static const char *const shown[] = { "/bin/true", "echo hi" };
		int ti = (int)t;

		for (size_t k = 0; k < 2; k++) {
			double fresh = case_median(ti, cmds[k], "cli-full");
			double serve = case_median(ti, cmds[k], "serve");
			double lib = case_median(ti, cmds[k], "session");
			char what[256];

			snprintf(what, sizeof(what),
				 "a session's `%s` (`ward serve`, MCP) ≤ 0.5 × a fresh `ward run` of "
				 "it, %s",
				 shown[k], tiers[t].name);
			if (isnan(fresh) || isnan(serve))
				target_row(f, what, false, false, "not measured (serve %s, run %s)",
					   isnan(serve) ? "missing" : "ok",
					   isnan(fresh) ? "missing" : "ok");
			else
				target_row(f, what, true, serve <= 0.5 * fresh,
					   "%.2f × (%.2f ms against %.2f ms, medians%s); through the "
					   "library %.2f ×",
					   serve / fresh, serve, fresh,
					   serve <= 0.5 * fresh ? "" : ": over", lib / fresh);
		}
	}
	for (t = 0; t < n_tiers; t++)
		net_targets(f, (int)t);
	fputc('\n', f);
}

/* ---- other sections -------------------------------------------------------- */

static void throughput(FILE *f, int tier)
{
	static const char *const keys[] = { "bare", "lib-full", "cli-full" };
	double bare = rate_of(tier, "bare", 2) / rate_of(tier, "bare", 1);
	size_t i;

	fprintf(f, "| /bin/true | 1 worker, cmd/s | 2 workers, cmd/s | 2 / 1 | ÷ bare's 2 / 1 |\n");
	fprintf(f, "|---|---:|---:|---:|---:|\n");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double r1 = rate_of(tier, keys[i], 1), r2 = rate_of(tier, keys[i], 2);
		const char *label = "", *status = "";
		int k;

		for (k = 0; k < n_recs; k++)
			if (recs[k].tier == tier && strcmp(get(&recs[k], 0), "rate") == 0 &&
			    strcmp(get(&recs[k], 1), keys[i]) == 0) {
				label = get(&recs[k], 2);
				status = get(&recs[k], 4);
			}
		if (isnan(r1) || isnan(r2)) {
			fprintf(f, "| %s | ", label);
			md_text(f, status);
			fprintf(f, " | | | |\n");
			continue;
		}
		fprintf(f, "| %s | %.0f | %.0f | %.2f | %.2f |\n", label, r1, r2, r2 / r1,
			r2 / r1 / bare);
	}
	fputc('\n', f);
}

static void output(FILE *f, int tier)
{
	int i;

	fprintf(f, "| stream | bytes | seconds | MiB/s | peak RSS (wait4 ru_maxrss) |\n");
	fprintf(f, "|---|---:|---:|---:|---:|\n");
	for (i = 0; i < n_recs; i++) {
		const struct rec *r = &recs[i];
		double bytes, secs, rss;

		if (r->tier != tier || strcmp(get(r, 0), "output") != 0)
			continue;
		if (strcmp(get(r, 3), "ok") != 0) {
			fprintf(f, "| %s | ", get(r, 2));
			md_text(f, get(r, 3));
			fprintf(f, " | | | |\n");
			continue;
		}
		bytes = num(get(r, 4));
		secs = num(get(r, 5));
		rss = num(get(r, 6));
		if (bytes > 0)
			fprintf(f, "| %s | %.0f MiB | %.3f | %.0f | %.1f MiB |\n", get(r, 2),
				bytes / 1048576.0, secs, bytes / 1048576.0 / secs, rss / 1024.0);
		else
			fprintf(f, "| %s | 0 | %.3f | – | %.1f MiB |\n", get(r, 2), secs,
				rss / 1024.0);
	}
	fputc('\n', f);
	fprintf(f, "<details><summary>Exact command lines</summary>\n\n");
	for (i = 0; i < n_recs; i++)
		if (recs[i].tier == tier && strcmp(get(&recs[i], 0), "output") == 0)
			fprintf(f, "- %s: `%s`\n", get(&recs[i], 2), get(&recs[i], 7));
	fprintf(f, "\n</details>\n\n");
}

static void network(FILE *f, int tier)
{
	static const char *const prefixes[][2] = {
		{ "sandbox", "client in `ward run --net=proxy`, against the same client outside" },
		{ "engine", "client in the bench, against ward's proxy engine alone" },
	};
	static const char *const keys[] = { "direct",        "get",           "connect",
					    "direct-stream", "tunnel-stream", "tunnel-cpu",
					    "direct-allcpu", "tunnel-allcpu", "tls-tunnel",
					    "tls-intercept", "tls-added",     "tls-direct-stream",
					    "tls-intercept-stream", "tls-cpu" };
	const char *transport = info(tier, "net_transport");
	size_t p, k;
	int i;

	if (transport)
		fprintf(f, "The sandbox reaches the proxy over %s.\n\n",
			strcmp(transport, "veth") == 0 ? "a veth pair (`--net-transport veth`)"
						       : "its own loopback, the listener handed over "
							 "(`--net-transport loopback`)");
	fprintf(f, "| measurement | median | p10 | p90 | runs | against direct (medians) |\n"
		   "|---|---:|---:|---:|---:|---:|\n");
	for (p = 0; p < 2; p++) {
		double direct = net_median(tier, prefixes[p][0], "direct");
		double stream = net_median(tier, prefixes[p][0], "direct-stream");

		fprintf(f, "| **%s** | | | | | |\n", prefixes[p][1]);
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			char key[64], vs[64] = "";
			const struct rec *r;
			bool ms;
			double v;

			snprintf(key, sizeof(key), "%s-%s", prefixes[p][0], keys[k]);
			r = find_net(tier, key);
			if (!r)
				continue;
			ms = strcmp(get(r, 5), "ms") == 0;
			fprintf(f, "| %s | ", get(r, 2));
			if (strcmp(get(r, 3), "ok") != 0) {
				md_text(f, get(r, 3));
				fprintf(f, " | | | | |\n");
				continue;
			}
			v = num(get(r, 4));
			if (strcmp(keys[k], "tls-intercept") == 0)
				snprintf(vs, sizeof(vs), "%+.3f ms over the tunnel",
					 v - net_median(tier, prefixes[p][0], "tls-tunnel"));
			else if (strcmp(keys[k], "tls-intercept-stream") == 0)
				snprintf(vs, sizeof(vs), "%.2f × direct HTTPS",
					 v / net_median(tier, prefixes[p][0], "tls-direct-stream"));
			else if (strncmp(keys[k], "tls-", 4) == 0)
				; /* TLS rows compare with each other */
			else if (ms && k > 0)
				snprintf(vs, sizeof(vs), "%+.3f ms", v - direct);
			else if (!ms && k == 4)
				snprintf(vs, sizeof(vs), "%.2f ×", v / stream);
			else if (k == 7)
				snprintf(vs, sizeof(vs), "%.2f × direct's",
					 v / net_median(tier, prefixes[p][0], "direct-allcpu"));
			if (ms)
				fprintf(f, "%.3f ms | %.3f | %.3f | %s | %s |\n", v, num(get(r, 8)),
					num(get(r, 9)), get(r, 7), vs);
			else if (strcmp(get(r, 5), "CPU ms") == 0)
				fprintf(f, "%.2f %s | %.2f | %.2f | %s | %s |\n", v, get(r, 5),
					num(get(r, 8)), num(get(r, 9)), get(r, 7), vs);
			else
				fprintf(f, "%.0f %s | %.0f | %.0f | %s | %s |\n", v, get(r, 5),
					num(get(r, 8)), num(get(r, 9)), get(r, 7), vs);
		}
	}
	/* Records of another shape (a build without the proxy, an older run). */
	for (i = 0; i < n_recs; i++) {
		const struct rec *r = &recs[i];

		if (r->tier != tier || strcmp(get(r, 0), "net") != 0 ||
		    strncmp(get(r, 1), "sandbox-", 8) == 0 || strncmp(get(r, 1), "engine-", 7) == 0)
			continue;
		fprintf(f, "| %s | ", get(r, 2));
		md_text(f, get(r, 3));
		fprintf(f, " | | | | |\n");
	}
	fputc('\n', f);
	fprintf(f, "<details><summary>Exact command lines</summary>\n\n");
	for (p = 0; p < 2; p++) {
		char key[64];
		const struct rec *d, *g;

		snprintf(key, sizeof(key), "%s-direct", prefixes[p][0]);
		d = find_net(tier, key);
		snprintf(key, sizeof(key), "%s-get", prefixes[p][0]);
		g = find_net(tier, key);
		if (d && p == 0 && g)
			fprintf(f, "- outside: `%s`\n- in the sandbox: `%s`\n", get(d, 6), get(g, 6));
		else if (d)
			fprintf(f, "- %s\n", get(d, 6));
	}
	fprintf(f, "\n</details>\n\n");
}

/* ---- the chart ------------------------------------------------------------ */

static int chart(const char *plotdir, const char *png)
{
	char path[1024];
	FILE *d, *g;
	int i;
	size_t t;

	snprintf(path, sizeof(path), "%s/chart.dat", plotdir);
	d = fopen(path, "w");
	if (!d)
		goto fail;
	/* One line per case of the first tier (the others have the same cases):
	 * label, then median, p10, p90 and CPU median for each tier; "-" where
	 * not measured. */
	for (i = 0; i < n_recs; i++) {
		const struct rec *r = &recs[i];

		if (r->tier != 0 || strcmp(get(r, 0), "case") != 0 || strcmp(get(r, 1), "true") != 0)
			continue;
		if (strcmp(get(r, 5), "ok") != 0)
			continue;
		fprintf(d, "\"%s%s\"", strcmp(get(r, 3), "peer") == 0 ? "peer: " : "", get(r, 4));
		for (t = 0; t < n_tiers; t++) {
			const struct rec *q = find_case((int)t, "true", get(r, 2));

			if (q && strcmp(get(q, 5), "ok") == 0)
				fprintf(d, "\t%s\t%s\t%s\t%s", get(q, 7), get(q, 8), get(q, 9),
					get(q, 11));
			else
				fprintf(d, "\t-\t-\t-\t-");
		}
		fputc('\n', d);
	}
	if (fclose(d) != 0)
		goto fail;

	snprintf(path, sizeof(path), "%s/chart.gp", plotdir);
	g = fopen(path, "w");
	if (!g)
		goto fail;
	/* Two panels over the same cases: wall-clock time (what a caller waits),
	 * then CPU time (what the work costs, much less disturbed by a busy
	 * machine); the case names under the second. */
	fprintf(g, "set terminal pngcairo size 1400,1100 font 'DejaVu Sans,11' noenhanced\n"
		   "set output '%s'\n"
		   "set datafile separator '\\t'\n"
		   "set datafile missing '-'\n"
		   "set style data histogram\n"
		   "set style fill solid 0.85 border -1\n"
		   "set boxwidth 0.9\n"
		   "set logscale y 2\n"
		   "set yrange [0.25:*]\n"
		   "set ytics (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128)\n"
		   "set grid ytics\n"
		   "set key top left\n"
		   "set lmargin 10\n"
		   "set multiplot layout 2,1 title \"ward: what each layer costs, and other "
		   "sandboxes — /bin/true (%s, %s)\"\n"
		   "set title 'wall-clock time per run: median, bars p10–p90'\n"
		   "set ylabel 'ms (log scale)'\n"
		   "set style histogram errorbars gap 1.5 lw 1\n"
		   "set xtics format ''\n"
		   "set bmargin 1\n",
		png, info(0, "host") ? info(0, "host") : "?", info(0, "date") ? info(0, "date") : "?");
	fprintf(g, "plot '%s/chart.dat'", plotdir);
	for (t = 0; t < n_tiers; t++)
		fprintf(g, "%s using %zu:%zu:%zu:xtic('') title '%s'", t ? ", ''" : "", 2 + 4 * t,
			3 + 4 * t, 4 + 4 * t, tiers[t].name);
	fprintf(g, "\nset title 'CPU time per run (user + system, the whole process tree): median'\n"
		   "set style histogram clustered gap 1.5\n"
		   "set xtics rotate by 35 right nomirror format '%%g'\n"
		   "set bmargin 12\n"
		   "set tmargin 2\n");
	fprintf(g, "plot '%s/chart.dat'", plotdir);
	for (t = 0; t < n_tiers; t++)
		fprintf(g, "%s using %zu%s title '%s'", t ? ", ''" : "", 5 + 4 * t,
			t ? "" : ":xtic(1)", tiers[t].name);
	fprintf(g, "\nunset multiplot\n");
	if (fclose(g) != 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "ward-bench: write '%s': %s\n", path, strerror(errno));
	return -1;
}

/* The length of the three load averages at the start of a /proc/loadavg
 * line, without the task counts that follow. */
static int load3(const char *s)
{
	int n = 0, fields = 0;

	while (s[n] && fields < 3) {
		n += (int)strcspn(s + n, " ");
		if (++fields < 3 && s[n])
			n++;
	}
	return n;
}

/* bench/README.md's excerpt: the targets and the /bin/true ladders, linking the
 * full report and the chart as results/latest.* (relative to bench/). */
static int summary(const char *plotdir)
{
	char path[1024];
	const char *v;
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/summary.md", plotdir);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "ward-bench: open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "Measured %s on %s (%s CPUs, kernel %s), ward %s, %s rounds; the full report is "
		   "[results/latest.md](results/latest.md).",
		info(0, "date") ? info(0, "date") : "?", info(0, "host") ? info(0, "host") : "?",
		info(0, "cpus") ? info(0, "cpus") : "?", info(0, "kernel") ? info(0, "kernel") : "?",
		(v = info(0, "commit")) ? v : "?", info(0, "rounds") ? info(0, "rounds") : "?");
	{
		const char *a = info(0, "load_start"), *b = info((int)n_tiers - 1, "load_end");

		if (a && b)
			fprintf(f, " Load average (1, 5, 15 min) %.*s at the start, %.*s at the end.",
				load3(a), a, load3(b), b);
	}
	if ((v = info(0, "note")) != NULL && *v)
		fprintf(f, " %s", v);
	fprintf(f, "\n\n");
	targets(f);
	fprintf(f, "![ladder and peers](results/latest.png)\n\n");
	for (i = 0; i < n_tiers; i++) {
		fprintf(f, "`/bin/true`, %s:\n\n", tiers[i].name);
		ladder_table(f, (int)i, "true");
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "ward-bench: write '%s': %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int bench_report(const struct report_tier *t, size_t n, const char *md, const char *plotdir,
		 const char *png)
{
	const char *v;
	size_t i, k;
	FILE *f;

	tiers = t;
	n_tiers = n;
	for (i = 0; i < n; i++)
		if (load((int)i, t[i].file) < 0)
			return -1;
	f = fopen(md, "w");
	if (!f) {
		fprintf(stderr, "ward-bench: open '%s': %s\n", md, strerror(errno));
		return -1;
	}
	fprintf(f, "# ward benchmark: %s, %s\n\n", info(0, "date") ? info(0, "date") : "?",
		info(0, "host") ? info(0, "host") : "?");
	fprintf(f, "- ward %s; kernel %s; %s CPUs (%s)\n", (v = info(0, "commit")) ? v : "?",
		info(0, "kernel") ? info(0, "kernel") : "?", info(0, "cpus") ? info(0, "cpus") : "?",
		info(0, "cpu") ? info(0, "cpu") : "?");
	fprintf(f, "- %s: %s interleaved rounds per tier (after warm-up rounds), each round "
		   "running every case on both commands once, in an order rotated by one each "
		   "round\n",
		   strcmp(info(0, "quick") ? info(0, "quick") : "0", "1") == 0 ? "quick run" : "full run",
		   info(0, "rounds") ? info(0, "rounds") : "?");
	for (i = 0; i < n; i++)
		fprintf(f, "- tier %s: load average %s at the start, %s at the end\n", t[i].name,
			info((int)i, "load_start") ? info((int)i, "load_start") : "?",
			info((int)i, "load_end") ? info((int)i, "load_end") : "?");
	if ((v = info(0, "note")) != NULL && *v)
		fprintf(f, "- %s\n", v);
	fprintf(f, "\nTimes are wall-clock from fork to wait (programs) or around `ward_run()` "
		   "(library rows, called in the bench's own process). Ratios compare medians of "
		   "the same tier and run. The ladder's rungs are cumulative: each adds one layer to "
		   "the one above; their exact `ward run` flags are listed under each table.\n\n");
	fprintf(f, "## Targets\n\n");
	fprintf(f, "Ratios from this one run; each figure is a median of interleaved runs.\n\n");
	targets(f);
	fprintf(f, "![ladder and peers](%s)\n\n", strrchr(png, '/') ? strrchr(png, '/') + 1 : png);
	for (i = 0; i < n; i++)
		for (k = 0; k < 2; k++) {
			fprintf(f, "## Ladder and peers: %s, %s\n\n", cmd_titles[k][1], t[i].name);
			ladder_table(f, (int)i, cmd_titles[k][0]);
		}
	for (i = 0; i < n; i++)
		commands(f, (int)i);
	for (i = 0; i < n; i++) {
		fprintf(f, "## Throughput, %s\n\n", t[i].name);
		throughput(f, (int)i);
	}
	for (i = 0; i < n; i++) {
		fprintf(f, "## Output, %s\n\n", t[i].name);
		output(f, (int)i);
	}
	for (i = 0; i < n; i++) {
		fprintf(f, "## Network, %s\n\n", t[i].name);
		if (i == 0)
			fprintf(f, "Everything runs in a network namespace the bench makes for the "
				   "section, against an HTTP server of the bench on 127.0.0.1:80 there; "
				   "the proxy may reach it through `--allow-cidr 127.0.0.1/32`. Each "
				   "request is one connection, timed from `connect()` to the end of the "
				   "response; small requests alternate with their direct twin one by one "
				   "(engine) or batch by batch (sandbox); streams read a body of zeros "
				   "to its end.\n\n");
		network(f, (int)i);
	}
	fprintf(f, "## Reproduce\n\n```sh\nmake bench-deps   # bubblewrap, firejail, crun\n"
		   "make bench        # QUICK=1 for a smoke run\n```\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "ward-bench: write '%s': %s\n", md, strerror(errno));
		return -1;
	}
	if (chart(plotdir, png) < 0 || summary(plotdir) < 0)
		return -1;
	for (i = 0; i < (size_t)n_recs; i++)
		for (k = 0; k < (size_t)recs[i].n; k++)
			free(recs[i].f[k]);
	return 0;
}
