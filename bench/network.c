/* network.c — the proxy's cost: added latency of one HTTP request and of a
 * CONNECT, and tunnel throughput against a direct loopback connection.
 *
 * Measured only when ward's option parser knows --net=proxy. The figures
 * need an upstream server inside a network namespace made for the bench
 * (never the host's network): a loopback HTTP server and a sink, reached
 * directly and through `ward run --net=proxy --allow-cidr ...` with curl.
 * Until this build has the proxy, each row says so. */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"

static const struct {
	const char *key, *label, *unit;
} rows[] = {
	{ "http-latency", "HTTP request through the proxy, added latency", "ms" },
	{ "connect-latency", "CONNECT through the proxy, added latency", "ms" },
	{ "tunnel-throughput", "CONNECT tunnel throughput / direct", "ratio" },
};

int bench_network(const struct tier_options *o, FILE *rec)
{
	char why[BENCH_STATUS_MAX];
	struct libcase *probe = libcase_new("--net=proxy", o, why, sizeof(why));
	size_t i;

	if (probe) {
		/* The proxy is built: the measurement belongs here, and until it is
		 * written the rows say that they were not measured. */
		snprintf(why, sizeof(why), "not measured: the proxy is built, bench/network.c "
					   "does not measure it yet");
		libcase_free(probe);
	}
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		fprintf(rec, "net\t%s\t%s\t", rows[i].key, rows[i].label);
		rec_escape(rec, why);
		fprintf(rec, "\t-\t%s\t-\n", rows[i].unit);
	}
	fflush(rec);
	return 0;
}
