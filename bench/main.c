/* main.c — ward-bench: `tier` measures, `report` writes the report. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"

static const char usage[] =
	"usage: ward-bench tier --ward PATH --policy FILE --dir DIR --out FILE [--quick]\n"
	"                       [--rounds N] [--only ladder|network|throughput]\n"
	"       ward-bench report --tier NAME=FILE [--tier NAME=FILE] --md FILE --plot DIR\n"
	"                         --png FILE\n"
	"       ward-bench spawn-rss FILE -- CMD [ARGS...]\n"
	"       ward-bench net-client direct|proxy N ADDR PORT BYTES [STREAMS]\n"
	"       ward-bench ab --old PATH --new PATH --policy FILE --dir DIR [--rounds N]\n"
	"                     [-- WARD-RUN-ARGS...]\n"
	"\n"
	"tier: run the ladder, the peers, throughput, output and network sections as the\n"
	"      calling user and write their records to FILE (DIR: scratch space);\n"
	"      --only ladder|network|throughput: that section alone (ward's own rows\n"
	"      and the sessions', no peer; the proxy; the 1 and 2 worker rates).\n"
	"report: the tiers' records into a Markdown report and a gnuplot chart script.\n"
	"spawn-rss: run CMD, write its peak RSS in KiB (wait4 ru_maxrss) to FILE, exit\n"
	"      with its status.\n"
	"net-client: N timed HTTP requests to ADDR:PORT, directly or through $HTTP_PROXY\n"
	"      (absolute-form GET and CONNECT alternately), then STREAMS (default 1)\n"
	"      streams of BYTES; one line per figure (the network section runs it in and\n"
	"      outside a sandbox).\n"
	"ab: two ward binaries run alternately (`run --policy FILE -C DIR ARGS`,\n"
	"      default ARGS -- /bin/true): their medians and what the new one adds\n"
	"      (bench/ab.sh runs it as root and as uid 65534).\n";

/* Kept small: everything this process has resident before the fork is
 * counted in the child's ru_maxrss. */
static int cmd_spawn_rss(int argc, char **argv)
{
	struct rusage ru;
	pid_t pid;
	FILE *f;
	int st;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fputs(usage, stderr);
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("ward-bench: fork");
		return 125;
	}
	if (pid == 0) {
		execv(argv[3], argv + 3);
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("ward-bench: wait4");
			return 125;
		}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) {
		fprintf(stderr, "ward-bench: write '%s': %s\n", argv[1], strerror(errno));
		return 125;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int cmd_tier(int argc, char **argv)
{
	static char self[4096];
	ssize_t n;
	static const struct option opts[] = {
		{ "ward", required_argument, NULL, 'w' }, { "policy", required_argument, NULL, 'p' },
		{ "dir", required_argument, NULL, 'd' },  { "out", required_argument, NULL, 'o' },
		{ "quick", no_argument, NULL, 'q' },      { "rounds", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'O' }, { NULL, 0, NULL, 0 },
	};
	struct tier_options o;
	int c;

	memset(&o, 0, sizeof(o));
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		perror("ward-bench: readlink '/proc/self/exe'");
		return 1;
	}
	self[n] = '\0';
	o.self = self;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'w': o.ward = optarg; break;
		case 'p': o.policy = optarg; break;
		case 'd': o.dir = optarg; break;
		case 'o': o.out = optarg; break;
		case 'q': o.quick = true; break;
		case 'r':
			o.rounds = atoi(optarg);
			if (o.rounds < 1 || o.rounds > 100000) {
				fprintf(stderr, "ward-bench: --rounds '%s' is not 1 … 100000\n", optarg);
				return 2;
			}
			break;
		case 'O':
			if (strcmp(optarg, "network") != 0 && strcmp(optarg, "throughput") != 0 &&
			    strcmp(optarg, "ladder") != 0) {
				fprintf(stderr, "ward-bench: --only '%s': the sections are ladder, "
						"network and throughput\n",
					optarg);
				return 2;
			}
			o.only = optarg;
			break;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (!o.ward || !o.policy || !o.dir || !o.out || optind != argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (o.ward[0] != '/' || o.policy[0] != '/' || o.dir[0] != '/') {
		fprintf(stderr, "ward-bench: --ward, --policy and --dir must be absolute paths\n");
		return 2;
	}
	/* the proxy engine's TLS rows run in this process: they start the
	 * TLS helper of the ward measured, beside it */
	if (!getenv("WARD_TLS_HELPER")) {
		char helper[4096];
		const char *slash = strrchr(o.ward, '/');

		snprintf(helper, sizeof(helper), "%.*s/ward-tls", (int)(slash - o.ward), o.ward);
		setenv("WARD_TLS_HELPER", helper, 1);
	}
	return bench_tier(&o) < 0 ? 1 : 0;
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tier", required_argument, NULL, 't' }, { "md", required_argument, NULL, 'm' },
		{ "plot", required_argument, NULL, 'p' }, { "png", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_tier tiers[4];
	const char *md = NULL, *plot = NULL, *png = NULL;
	size_t n = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *eq;

		switch (c) {
		case 't':
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1] || n == 4) {
				fprintf(stderr, "ward-bench: --tier '%s': give NAME=FILE, at most 4\n",
					optarg);
				return 2;
			}
			*eq = '\0';
			tiers[n].name = optarg;
			tiers[n++].file = eq + 1;
			break;
		case 'm': md = optarg; break;
		case 'p': plot = optarg; break;
		case 'g': png = optarg; break;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (!n || !md || !plot || !png || optind != argc) {
		fputs(usage, stderr);
		return 2;
	}
	return bench_report(tiers, n, md, plot, png) < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "tier") == 0)
		return cmd_tier(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "net-client") == 0)
		return bench_net_client(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "ab") == 0)
		return bench_ab(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "spawn-rss") == 0)
		return cmd_spawn_rss(argc - 1, argv + 1);
	fputs(usage, argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
	return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
}
