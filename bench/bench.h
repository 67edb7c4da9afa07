/* bench.h — ward's overhead benchmark: what each layer of the sandbox costs
 * over bare fork+exec, and what the other sandboxes on the host cost.
 *
 * One program, three subcommands (bench/run.sh drives them):
 *
 *     ward-bench tier --ward PATH --policy FILE --dir DIR --out FILE [--quick]
 *         runs every case of one privilege tier (the caller's uid) and writes
 *         the raw figures, one tab-separated record per line;
 *     ward-bench report --tier NAME=FILE... --md FILE --plot DIR --png FILE
 *         reads the tiers' records, writes the Markdown report (tables,
 *         ratios, the targets met or missed) and the chart's gnuplot input;
 *     ward-bench spawn-rss FILE -- CMD...
 *         runs CMD and writes its wait4() ru_maxrss (KiB) to FILE, from a
 *         process fresh from execve (see output.c for why);
 *     ward-bench net-client direct|proxy N ADDR PORT BYTES
 *         the network section's client (network.c)
 *
 * Cases run interleaved (A B C A B C ...), so drift on a shared machine hits
 * all of them alike; a case whose first run fails is reported failed with the
 * reason, never measured. Times are wall-clock (CLOCK_MONOTONIC) around one
 * whole run: fork+exec+wait for programs, ward_run() for the library rows;
 * beside them the CPU time of every process of the run.
 */
#ifndef WARD_BENCH_H
#define WARD_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define BENCH_STATUS_MAX 256
#define BENCH_LINE_MAX 2048

/* ---- stats.c: pure ---------------------------------------------------- */

struct samples {
	double *v; /* milliseconds */
	size_t n, cap;
};

int samples_add(struct samples *s, double ms);
void samples_release(struct samples *s);
/* The q-quantile (0 … 1) by linear interpolation between order statistics;
 * sorts s in place. NaN when empty. */
double samples_quantile(struct samples *s, double q);
/* The median of an array of doubles (copied, not modified). NaN when n == 0. */
double median_of(const double *v, size_t n);

/* ---- run.c: running one thing, timed ------------------------------------ */

long long bench_now_ns(void);

/* fork+execve(argv[0] as given, absolute) with stdin /dev/null. When out is
 * NULL stdout and stderr go to /dev/null; otherwise both are captured into
 * out (NUL-terminated, truncated to outsz). Returns the wait status, or -1
 * with errno. *ms gets the wall time, *maxrss_kib (if not NULL) the child's
 * ru_maxrss from wait4. */
int bench_exec(char *const argv[], char *out, size_t outsz, double *ms, long *maxrss_kib);
/* Every child this process has now lives as long as the tier (the session
 * rows' hosts): runs do not wait for them to end, as they do for what a
 * sandbox leaves behind. */
void bench_children_lasting(void);
/* CPU time (user + system, ms) of the last bench_exec*() run — the child and
 * every descendant, which come to the bench when orphaned (it is a
 * subreaper) — or of the last libcase_run(): set by both. */
extern double bench_last_cpu_ms;
/* This process's CPU time and that of its reaped children, in ms. */
double bench_cpu_ms(void);

/* The same with stdin from in_path (NULL: /dev/null), and prep (if not NULL)
 * called in the child before execve (exit 127 if it returns < 0). */
int bench_exec_io(char *const argv[], const char *in_path, int (*prep)(void), char *out,
		  size_t outsz, double *ms, long *maxrss_kib);

/* ---- cases.c: the ladder, the peers, one tier ----------------------------- */

struct tier_options {
	const char *self;      /* this program (for spawn-rss) */
	const char *ward;      /* the ward CLI */
	const char *policy;    /* the bench's policy file (bench/policy.json) */
	const char *dir;       /* a scratch directory this uid can write */
	char workdir[512];     /* dir/work: the sandboxes' workdir */
	const char *out;       /* where the tier's records go */
	bool quick;            /* a smoke run: few rounds, small sizes */
	int rounds;            /* 0: the default for the mode */
	const char *only;      /* NULL, or the one section to run: "network" */
};

int bench_tier(const struct tier_options *o);

/* Records (tab-separated, one per line, written by the tier):
 *   info  KEY  VALUE
 *   case  CMD  KEY  GROUP  LABEL  STATUS  N  MEDIAN  P10  P90  COMMAND-LINE  CPU-MEDIAN
 *   rate  KEY  LABEL  WORKERS  STATUS  ROUNDS  PER-SECOND  COMMAND-LINE
 *   output KEY  LABEL  STATUS  BYTES  SECONDS  MAXRSS-KIB  COMMAND-LINE
 *   net   KEY  LABEL  STATUS  MEDIAN  UNIT  COMMAND-LINE  N  P10  P90
 * STATUS is "ok" or why the row has no figure ("n/a (not built)",
 * "not installed", "failed: ..."). */

/* ---- throughput.c, output.c, network.c: the other sections ---------------- */

int bench_throughput(const struct tier_options *o, FILE *rec);
int bench_output(const struct tier_options *o, FILE *rec);
int bench_network(const struct tier_options *o, FILE *rec);
/* `ward-bench net-client ...` (argv[0] is "net-client"): the network
 * section's client, run in and outside a sandbox. Returns the exit status. */
int bench_net_client(int argc, char **argv);

/* ---- ab.c: two ward binaries side by side ---------------------------------- */

/* `ward-bench ab ...` (argv[0] is "ab"): OLD and NEW ward run alternately;
 * prints their medians and the new one's added cost. Returns the exit status. */
int bench_ab(int argc, char **argv);

/* ---- libcase.c: ward_run() from `ward run` flags ------------------------- */

struct libcase;

/* Parse FLAGS (whitespace-separated `ward run` options, no quoting) with
 * ward's own option parser, plus the bench's policy and workdir. Returns the
 * case, or NULL with a message in why: "n/a (not built)" when ward does not
 * know one of the flags (the layer is not in this build), else the error. */
struct libcase *libcase_new(const char *flags, const struct tier_options *o, char *why,
			    size_t whysz);
/* One ward_run() of argv: 0 when the command ran and exited 0 (its output,
 * truncated, in out if not NULL), else -1 with the reason in out. *ms: the
 * wall time of the whole ward_run(). */
int libcase_run(struct libcase *c, char *const argv[], char *out, size_t outsz, double *ms);
void libcase_free(struct libcase *c);

/* The session row: the bench's policy and workdir as a session with one
 * shared sandbox (`ward shell --isolation shared`), started here; NULL with
 * the reason in why. */
struct sesscase;
struct sesscase *sesscase_new(const struct tier_options *o, char *why, size_t whysz);
/* One command line through the session (front door, then a fork in the
 * shared sandbox): as libcase_run(). */
int sesscase_run(struct sesscase *c, const char *cmd, char *out, size_t outsz, double *ms);
/* Ends the session: its sandbox and every process in it. */
void sesscase_free(struct sesscase *c);

/* ---- serve.c: the session row through `ward serve` --------------------- */

/* `ward serve --isolation shared` with the bench's policy and workdir,
 * started and initialised (MCP); NULL with the reason in why. */
struct servecase;
struct servecase *servecase_new(const struct tier_options *o, char *why, size_t whysz);
/* One tools/call of the shell tool with cmd: 0 when it ran and exited 0 (its
 * output in out), else -1 with the reason in out. *ms: request to response. */
int servecase_run(struct servecase *c, const char *cmd, char *out, size_t outsz, double *ms);
/* Ends the server (end of its input) and waits for it. */
void servecase_free(struct servecase *c);

/* ---- report.c ------------------------------------------------------------ */

struct report_tier {
	const char *name; /* "root", "uid 65534" */
	const char *file;
};

/* Write the report to md, the chart's data and gnuplot script into plotdir
 * (chart.dat, chart.gp; the script writes png, which md links by name), and
 * the README's excerpt (plotdir/summary.md). */
int bench_report(const struct report_tier *tiers, size_t n, const char *md, const char *plotdir,
		 const char *png);

/* helpers shared by the sections */
void rec_escape(FILE *f, const char *s); /* tabs and newlines become spaces */
/* A command line, the tier's temporary paths shown as ward, bench/policy.json,
 * $WORK (the workdir) and $DIR (the scratch directory). */
void rec_cmdline(FILE *f, const char *line, const struct tier_options *o);
/* argv as a person would type it: words with shell-special characters
 * single-quoted; truncated to sz. */
void argv_join(char *buf, size_t sz, char *const argv[]);

#endif
