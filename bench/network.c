/* network.c — the proxy's cost: added latency of one HTTP request
 * (absolute-form GET) and of a CONNECT (tunnel set-up and a small request
 * through it) against the same request made directly, and a tunnel's
 * throughput against a direct loopback connection.
 *
 * Every packet stays inside a network namespace the bench makes for the
 * section (a forked child unshares one — with a user namespace of its own
 * when not root — and brings its loopback up). In there:
 *
 *   upstream   an HTTP server of the bench on 127.0.0.1:80: GET /small
 *              answers a short body, GET /stream/N answers N bytes;
 *   engine     ward's proxy engine (the supervisor's, ward_proxy_*) in a
 *              process of the bench, listening on 127.0.0.1:3128 with the
 *              policy --allow-cidr 127.0.0.1/32: the proxy's own cost, with
 *              a client in the bench that alternates direct and proxied
 *              requests one by one;
 *   sandbox    `ward run --net=proxy --allow-cidr 127.0.0.1/32` running the
 *              bench's client (`ward-bench net-client`, copied into the
 *              workdir) against the upstream through the proxy, and the same
 *              client run directly outside the sandbox, the two batches
 *              alternating: what a sandboxed command sees, the transport
 *              (veth as root, the loopback hand-over otherwise) included.
 *
 * Each request is timed from connect() to the end of the response (the
 * server closes: one request per connection, as the proxy forwards them).
 * Records: net KEY LABEL STATUS MEDIAN UNIT COMMAND-LINE N P10 P90. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "bench/bench.h"
#include "runtime/net/net-internal.h"
#include "runtime/tls/tls-internal.h"
#include "ward/netpolicy.h"

#define UPSTREAM_PORT 80
#define ENGINE_PORT 3128
#define SMALL_BODY "ward-bench upstream: a small answer\n"
#define IO_TIMEOUT_S 10

/* ---- the client: one request, timed (also `ward-bench net-client`) ------- */

static double now_us(void)
{
	return (double)bench_now_ns() / 1e3;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { IO_TIMEOUT_S, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int dial(const struct sockaddr_in *sa, char *why, size_t whysz)
{
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char a[32];

	if (fd < 0) {
		snprintf(why, whysz, "socket: %s", strerror(errno));
		return -1;
	}
	set_timeouts(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		inet_ntop(AF_INET, &sa->sin_addr, a, sizeof(a));
		snprintf(why, whysz, "connect '%s:%d': %s", a, ntohs(sa->sin_port),
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *s, size_t n, char *why, size_t whysz)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(why, whysz, "send: %s", w < 0 ? strerror(errno) : "nothing sent");
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read an HTTP response to EOF: its status must be 200 and its body
 * expect bytes long. */
static int read_response(int fd, unsigned long long expect, char *why, size_t whysz)
{
	static char buf[1 << 18];
	char head[512];
	size_t hn = 0;
	unsigned long long total = 0, body = 0;
	bool in_body = false;

	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, whysz, "recv: %s", strerror(errno));
			return -1;
		}
		if (r == 0)
			break;
		total += (unsigned long long)r;
		if (in_body) {
			body += (unsigned long long)r;
			continue;
		}
		{
			size_t take = (size_t)r < sizeof(head) - 1 - hn ? (size_t)r
								       : sizeof(head) - 1 - hn;
			char *end;

			memcpy(head + hn, buf, take);
			hn += take;
			head[hn] = '\0';
			end = strstr(head, "\r\n\r\n");
			if (end) {
				size_t head_len = (size_t)(end + 4 - head);

				in_body = true;
				body = total - head_len;
			} else if (hn == sizeof(head) - 1) {
				snprintf(why, whysz, "a response head over %zu bytes", hn);
				return -1;
			}
		}
	}
	if (!in_body) {
		snprintf(why, whysz, "the connection closed after %llu bytes, inside the head",
			 total);
		return -1;
	}
	if (strncmp(head, "HTTP/1.1 200 ", 13) != 0) {
		head[strcspn(head, "\r\n")] = '\0';
		snprintf(why, whysz, "the answer was '%.120s'", head);
		return -1;
	}
	if (body != expect) {
		snprintf(why, whysz, "%llu bytes of body, expected %llu", body, expect);
		return -1;
	}
	return 0;
}

enum how { DIRECT, PROXY_GET, PROXY_CONNECT };

struct where {
	struct sockaddr_in upstream, proxy;
};

/* One request for path (answered with expect bytes): directly, as an
 * absolute-form request to the proxy, or through a CONNECT tunnel opened
 * for it. *us: from connect() to the end of the response. */
static int request(const struct where *w, enum how how, const char *path,
		   unsigned long long expect, double *us, char *why, size_t whysz)
{
	char up[32], req[512];
	double t0 = now_us();
	int fd, n;

	inet_ntop(AF_INET, &w->upstream.sin_addr, up, sizeof(up));
	fd = dial(how == DIRECT ? &w->upstream : &w->proxy, why, whysz);
	if (fd < 0)
		return -1;
	if (how == PROXY_CONNECT) {
		char head[512] = "";
		size_t hn = 0;

		n = snprintf(req, sizeof(req), "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n", up,
			     ntohs(w->upstream.sin_port), up, ntohs(w->upstream.sin_port));
		if (send_all(fd, req, (size_t)n, why, whysz) < 0)
			goto fail;
		/* Nothing follows the proxy's 200 until the tunnel's first bytes,
		 * which only come after our request: read up to the blank line. */
		while (!strstr(head, "\r\n\r\n")) {
			ssize_t r = hn < sizeof(head) - 1 ? recv(fd, head + hn, sizeof(head) - 1 - hn, 0)
							  : -1;

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				snprintf(why, whysz, "CONNECT: %s",
					 r == 0 ? "closed before the answer" : strerror(errno));
				goto fail;
			}
			hn += (size_t)r;
			head[hn] = '\0';
		}
		if (strncmp(head, "HTTP/1.1 200", 12) != 0) {
			head[strcspn(head, "\r\n")] = '\0';
			snprintf(why, whysz, "CONNECT answered '%.120s'", head);
			goto fail;
		}
	}
	if (how == PROXY_GET)
		n = snprintf(req, sizeof(req), "GET http://%s%s HTTP/1.1\r\nHost: %s\r\n\r\n", up,
			     path, up);
	else
		n = snprintf(req, sizeof(req),
			     "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, up);
	if (send_all(fd, req, (size_t)n, why, whysz) < 0 || read_response(fd, expect, why, whysz) < 0)
		goto fail;
	close(fd);
	*us = now_us() - t0;
	return 0;
fail:
	close(fd);
	return -1;
}

static int stream_mbps(const struct where *w, enum how how, unsigned long long bytes,
		       double *mbps, char *why, size_t whysz)
{
	char path[64];
	double us;

	snprintf(path, sizeof(path), "/stream/%llu", bytes);
	if (request(w, how, path, bytes, &us, why, whysz) < 0)
		return -1;
	*mbps = (double)bytes / us; /* bytes per µs = MB/s */
	return 0;
}

static int addr_parse(const char *ip, const char *port, struct sockaddr_in *sa)
{
	char *end;
	long p = strtol(port, &end, 10);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (*end || p < 1 || p > 65535 || inet_pton(AF_INET, ip, &sa->sin_addr) != 1)
		return -1;
	sa->sin_port = htons((uint16_t)p);
	return 0;
}

/* `ward-bench net-client direct|proxy N ADDR PORT BYTES [STREAMS]`: N small
 * requests to the upstream at ADDR:PORT (proxy: alternately an absolute-form
 * GET and a CONNECT to the proxy named by $HTTP_PROXY, as ward sets it in the
 * sandbox), then STREAMS (default 1) streams of BYTES, one after the other.
 * One line per figure: "direct US", "get US", "connect US", "stream MB/S";
 * "error ..." and exit 1 on failure. */
int bench_net_client(int argc, char **argv)
{
	struct where w;
	char why[256], ip[64] = "", port[16] = "";
	const char *proxy = getenv("HTTP_PROXY");
	bool via = (argc == 6 || argc == 7) && strcmp(argv[1], "proxy") == 0;
	unsigned long long bytes;
	double v;
	int n, i, streams = argc == 7 ? atoi(argv[6]) : 1;

	if ((argc != 6 && argc != 7) || (!via && strcmp(argv[1], "direct") != 0) ||
	    (n = atoi(argv[2])) < 1 || addr_parse(argv[3], argv[4], &w.upstream) < 0 ||
	    streams < 1 || streams > 100) {
		fprintf(stderr,
			"usage: ward-bench net-client direct|proxy N ADDR PORT BYTES [STREAMS]\n");
		return 2;
	}
	bytes = strtoull(argv[5], NULL, 10);
	if (via && (!proxy || sscanf(proxy, "http://%63[0-9.]:%15[0-9]", ip, port) != 2 ||
		    addr_parse(ip, port, &w.proxy) < 0)) {
		printf("error HTTP_PROXY '%s' is not http://IPV4:PORT\n", proxy ? proxy : "");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (request(&w, via ? PROXY_GET : DIRECT, "/small", strlen(SMALL_BODY), &v, why,
			    sizeof(why)) < 0)
			goto fail;
		printf("%s %.1f\n", via ? "get" : "direct", v);
		if (!via)
			continue;
		if (request(&w, PROXY_CONNECT, "/small", strlen(SMALL_BODY), &v, why, sizeof(why)) < 0)
			goto fail;
		printf("connect %.1f\n", v);
	}
	for (i = 0; bytes && i < streams; i++) {
		if (stream_mbps(&w, via ? PROXY_CONNECT : DIRECT, bytes, &v, why, sizeof(why)) < 0)
			goto fail;
		printf("stream %.1f\n", v);
	}
	return 0;
fail:
	printf("error %s\n", why);
	return 1;
}

/* ---- the upstream and the engine, processes of the namespace ---------------- */

static int listen_local(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* One connection at a time: the clients make one at a time. */
static void upstream_serve(int l)
{
	static char zeros[1 << 16];

	for (;;) {
		char head[4096], out[256];
		size_t n = 0;
		unsigned long long len = strlen(SMALL_BODY), left;
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC), k;

		if (c < 0)
			continue;
		set_timeouts(c);
		head[0] = '\0';
		while (!strstr(head, "\r\n\r\n") && n < sizeof(head) - 1) {
			ssize_t r = recv(c, head + n, sizeof(head) - 1 - n, 0);

			if (r <= 0)
				break;
			n += (size_t)r;
			head[n] = '\0';
		}
		if (!strstr(head, "\r\n\r\n")) {
			close(c);
			continue;
		}
		if (strncmp(head, "GET /stream/", 12) == 0)
			len = strtoull(head + 12, NULL, 10);
		k = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n"
					       "Connection: close\r\n\r\n%s", len,
			     strncmp(head, "GET /stream/", 12) == 0 ? "" : SMALL_BODY);
		left = strncmp(head, "GET /stream/", 12) == 0 ? len : 0;
		if (send(c, out, (size_t)k, MSG_NOSIGNAL) == k)
			while (left) {
				ssize_t w = send(c, zeros, left < sizeof(zeros) ? left : sizeof(zeros),
						 MSG_NOSIGNAL);

				if (w <= 0)
					break;
				left -= (unsigned long long)w;
			}
		shutdown(c, SHUT_WR);
		close(c);
	}
}

/* The supervisor's proxy engine with the policy --allow-cidr 127.0.0.1/32,
 * driven as the supervisor drives it: wait on its fd, dispatch. */
static void engine_serve(int l)
{
	struct ward_netpolicy pol;
	struct ward_error *err = NULL;
	struct ward_proxy *p;

	ward_netpolicy_init(&pol);
	if (ward_netpolicy_add_cidr(&pol, "127.0.0.1/32", &err) < 0 ||
	    !(p = ward_proxy_new(&pol, -1, &err)) || ward_proxy_add_listener(p, l, &err) < 0) {
		fprintf(stderr, "ward-bench: proxy engine: %s\n", err ? err->message : "?");
		_exit(1);
	}
	for (;;) {
		struct pollfd pf = { ward_proxy_fd(p), POLLIN, 0 };
		long long due = ward_proxy_deadline(p), wait_ms = -1;

		if (due)
			wait_ms = (due - bench_now_ns()) / 1000000 + 1;
		if (poll(&pf, 1, due && wait_ms < 0 ? 0 : (int)wait_ms) < 0 && errno != EINTR)
			_exit(1);
		ward_proxy_dispatch(p);
	}
}

static pid_t spawn_serving(void (*fn)(int), int fd)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		fn(fd);
		_exit(0);
	}
	return pid;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

/* ---- the namespace ------------------------------------------------------------- */

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), e;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* A network namespace of our own with its loopback up; unprivileged, with a
 * user namespace that maps our own uid and gid only. */
static int enter_netns(char *why, size_t whysz)
{
	struct ifreq ifr;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	int s;

	if (uid != 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
			snprintf(why, whysz, "unshare user and network namespaces: %s",
				 strerror(errno));
			return -1;
		}
		snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
		if (write_file("/proc/self/setgroups", "deny") < 0 ||
		    write_file("/proc/self/uid_map", map) < 0) {
			snprintf(why, whysz, "write uid_map: %s", strerror(errno));
			return -1;
		}
		snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
		if (write_file("/proc/self/gid_map", map) < 0) {
			snprintf(why, whysz, "write gid_map: %s", strerror(errno));
			return -1;
		}
	} else if (unshare(CLONE_NEWNET) < 0) {
		snprintf(why, whysz, "unshare network namespace: %s", strerror(errno));
		return -1;
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) < 0)) {
		snprintf(why, whysz, "bring 'lo' up: %s", strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	close(s);
	return 0;
}

/* ---- the figures ----------------------------------------------------------------- */

enum {
	S_DIRECT,
	S_GET,
	S_CONNECT,
	S_DIRECT_MBPS,
	S_TUNNEL_MBPS,
	S_TUNNEL_CPU,
	S_DIRECT_ALLCPU,
	S_TUNNEL_ALLCPU,
	S_TLS_TUNNEL,
	S_TLS_INTERCEPT,
	S_TLS_ADDED,
	S_TLS_DIRECT_MBPS,
	S_TLS_INTERCEPT_MBPS,
	S_TLS_CPU,
	N_SERIES
};

struct series_set {
	struct samples s[N_SERIES];
	char status[BENCH_STATUS_MAX];
	char cmdline[N_SERIES][BENCH_LINE_MAX];
};

static const struct {
	const char *key, *label, *unit;
	bool engine_only; /* measured on the engine's process, which only the bench owns */
} series_rows[N_SERIES] = {
	{ "direct", "the request made directly", "ms", false },
	{ "get", "absolute-form GET through the proxy", "ms", false },
	{ "connect", "CONNECT, then the request through the tunnel", "ms", false },
	{ "direct-stream", "a direct loopback connection", "MB/s", false },
	{ "tunnel-stream", "a CONNECT tunnel", "MB/s", false },
	/* steadier than MB/s on a shared machine: what relaying costs the
	 * proxy, whoever else wants the CPUs */
	{ "tunnel-cpu", "the proxy's CPU time per GiB through the tunnel", "CPU ms/GiB", true },
	/* what a stream costs everyone, direct (server, client) and through the
	 * tunnel (server, proxy, client): when the CPUs are busy, throughput
	 * follows it */
	{ "direct-allcpu", "the server's and the client's CPU time per GiB, direct", "CPU ms/GiB",
	  true },
	{ "tunnel-allcpu", "the server's, the proxy's and the client's CPU time per GiB, tunnel",
	  "CPU ms/GiB", true },
	/* TLS interception (an --inject-header host) against a tunnelled TLS
	 * request to the same server, each a fresh connection: CONNECT, the
	 * handshake(s), GET, the response */
	{ "tls-tunnel", "HTTPS through a CONNECT tunnel, handshake included", "ms", true },
	{ "tls-intercept", "HTTPS intercepted (two handshakes, a header added)", "ms", true },
	{ "tls-added", "what interception adds, per request (paired rounds)", "ms", true },
	{ "tls-direct-stream", "a direct HTTPS download", "MB/s", true },
	{ "tls-intercept-stream", "an intercepted HTTPS download", "MB/s", true },
	/* steadier than the latency on a busy machine: what one intercepted
	 * request costs the proxy (all its threads), whoever else runs */
	{ "tls-cpu", "the proxy's CPU time per intercepted request (its TLS helper's included)", "CPU ms", true },
};

/* The engine's main thread's time on a CPU (/proc/PID/schedstat, ns); the
 * relay runs there. -1 when unknown. */
static long long cpu_ns(pid_t pid)
{
	char path[64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void failed(struct series_set *set, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void failed(struct series_set *set, const char *fmt, ...)
{
	char why[BENCH_STATUS_MAX - 16];
	va_list ap;

	if (strcmp(set->status, "ok") != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(set->status, sizeof(set->status), "failed: %s", why);
}

static void add(struct series_set *set, int k, double v)
{
	if (samples_add(&set->s[k], v) < 0)
		failed(set, "out of memory");
}

/* The proxy engine alone: requests interleaved one by one, each round in an
 * order rotated by one; then the streams, alternating. */
static void measure_engine(struct series_set *set, pid_t engine, pid_t up, int rounds,
			   int streams, unsigned long long bytes)
{
	static const enum how order[3] = { DIRECT, PROXY_GET, PROXY_CONNECT };
	struct where w;
	char why[256];
	int r, i;

	addr_parse("127.0.0.1", "80", &w.upstream);
	addr_parse("127.0.0.1", "3128", &w.proxy);
	for (r = -rounds / 10; r < rounds && strcmp(set->status, "ok") == 0; r++)
		for (i = 0; i < 3; i++) {
			enum how h = order[((r < 0 ? -r : r) + i) % 3];
			double us;

			if (request(&w, h, "/small", strlen(SMALL_BODY), &us, why, sizeof(why)) < 0) {
				failed(set, "%s request: %s",
				       h == DIRECT ? "direct" : h == PROXY_GET ? "proxied" : "CONNECT",
				       why);
				break;
			}
			if (r >= 0)
				add(set, h == DIRECT ? S_DIRECT : h == PROXY_GET ? S_GET : S_CONNECT,
				    us / 1000.0);
		}
	for (r = 0; r < streams && strcmp(set->status, "ok") == 0; r++)
		for (i = 0; i < 2; i++) {
			bool tunnel = (r + i) % 2;
			double gib = (double)bytes / (1 << 30), mbps;
			/* the engine (none direct), the server, this client */
			long long e0 = tunnel ? cpu_ns(engine) : 0, u0 = cpu_ns(up), c0 = cpu_ns(getpid());
			long long e1, u1, c1;

			if (stream_mbps(&w, tunnel ? PROXY_CONNECT : DIRECT, bytes, &mbps, why,
					sizeof(why)) < 0) {
				failed(set, "%s stream: %s", tunnel ? "tunnel" : "direct", why);
				break;
			}
			e1 = tunnel ? cpu_ns(engine) : 0;
			u1 = cpu_ns(up);
			c1 = cpu_ns(getpid());
			add(set, tunnel ? S_TUNNEL_MBPS : S_DIRECT_MBPS, mbps);
			if (e0 < 0 || e1 < e0)
				continue;
			if (tunnel)
				add(set, S_TUNNEL_CPU, (double)(e1 - e0) / 1e6 / gib);
			if (u0 >= 0 && u1 >= u0 && c0 >= 0 && c1 >= c0)
				add(set, tunnel ? S_TUNNEL_ALLCPU : S_DIRECT_ALLCPU,
				    (double)(e1 - e0 + u1 - u0 + c1 - c0) / 1e6 / gib);
		}
	fprintf(stderr, "ward-bench: network, the proxy engine: %s\n", set->status);
}


/* ---- TLS interception ----------------------------------------------------
 *
 * An HTTPS server of the bench on :443 (a leaf of a CA of its own, for
 * whichever loopback address was dialled), and ward's proxy engine with
 * --inject-header for 127.0.0.1 (intercepted) and --upstream-ca that CA;
 * 127.0.0.2 is the same server, tunnelled. The client trusts the engine's
 * bundle and the server's CA. */

#define TLS_PORT 443

static struct ward_tls *tls_up;  /* the upstream server's CA */
static char tls_up_ca[64] = "/tmp/ward-bench-upca.XXXXXX";
static char tls_bundle[64] = "/tmp/ward-bench-bundle.XXXXXX";

static void tls_upstream_serve(int l)
{
	static char zeros[1 << 16];

	for (;;) {
		struct ward_tls_peer peer = { 0 };
		struct sockaddr_in me;
		socklen_t ml = sizeof(me);
		char head[4096], out[256];
		size_t n = 0;
		unsigned long long len = strlen(SMALL_BODY), left;
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC), k;
		SSL *ssl;

		if (c < 0)
			continue;
		set_timeouts(c);
		getsockname(c, (struct sockaddr *)&me, &ml);
		inet_ntop(AF_INET, &me.sin_addr, peer.host, sizeof(peer.host));
		peer.literal = true;
		ssl = ward_tls_server(tls_up, &peer);
		if (!ssl || SSL_set_fd(ssl, c) != 1 || SSL_accept(ssl) != 1) {
			SSL_free(ssl);
			close(c);
			continue;
		}
		head[0] = '\0';
		while (!strstr(head, "\r\n\r\n") && n < sizeof(head) - 1) {
			int r = SSL_read(ssl, head + n, (int)(sizeof(head) - 1 - n));

			if (r <= 0)
				break;
			n += (size_t)r;
			head[n] = '\0';
		}
		if (strstr(head, "\r\n\r\n")) {
			bool stream = strncmp(head, "GET /stream/", 12) == 0;

			if (stream)
				len = strtoull(head + 12, NULL, 10);
			k = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n"
						       "Connection: close\r\n\r\n%s", len,
				     stream ? "" : SMALL_BODY);
			left = stream ? len : 0;
			if (SSL_write(ssl, out, k) == k)
				while (left) {
					int w = SSL_write(ssl, zeros, left < sizeof(zeros) ?
									      (int)left : (int)sizeof(zeros));

					if (w <= 0)
						break;
					left -= (unsigned long long)w;
				}
			SSL_shutdown(ssl);
		}
		SSL_free(ssl);
		close(c);
	}
}

/* The engine with interception for 127.0.0.1; writes the sandbox's bundle
 * (with its CA) to tls_bundle, then serves. */
static void engine_tls_serve(int l)
{
	struct ward_netpolicy pol;
	struct ward_error *err = NULL;
	struct ward_proxy *p;
	int fd = open(tls_bundle, O_WRONLY | O_TRUNC | O_CLOEXEC);

	ward_netpolicy_init(&pol);
	if (fd < 0 || ward_netpolicy_add_cidr(&pol, "127.0.0.0/8", &err) < 0 ||
	    ward_netpolicy_add_credential(&pol, "127.0.0.1=X-Bench: token", &err) < 0 ||
	    ward_netpolicy_set_upstream_ca(&pol, tls_up_ca, &err) < 0 ||
	    !(p = ward_proxy_new(&pol, -1, &err)) || ward_proxy_start_tls(p, fd, &err) < 0 ||
	    ward_proxy_add_listener(p, l, &err) < 0) {
		fprintf(stderr, "ward-bench: proxy engine (TLS): %s\n", err ? err->message : "?");
		_exit(1);
	}
	close(fd);
	for (;;) {
		struct pollfd pf = { ward_proxy_fd(p), POLLIN, 0 };
		long long due = ward_proxy_deadline(p), wait_ms = -1;

		if (due)
			wait_ms = (due - bench_now_ns()) / 1000000 + 1;
		if (poll(&pf, 1, due && wait_ms < 0 ? 0 : (int)wait_ms) < 0 && errno != EINTR)
			_exit(1);
		/* mitm threads end on their own; dispatch reaps them */
		ward_proxy_dispatch(p);
	}
}

/* One HTTPS request for path to ip:443 (through the proxy with CONNECT
 * unless direct), trusting ctx. *us: connect() to the end of the
 * response. */
static int tls_request(SSL_CTX *ctx, const char *ip, bool direct, const char *path,
		       unsigned long long expect, double *us, char *why, size_t whysz)
{
	static char buf[1 << 18];
	struct sockaddr_in sa;
	char req[256], head[512] = "";
	size_t hn = 0;
	unsigned long long total = 0, body = 0;
	double t0 = now_us();
	bool in_body = false;
	SSL *ssl = NULL;
	int fd, n;

	addr_parse(direct ? ip : "127.0.0.1", direct ? "443" : "3129", &sa);
	fd = dial(&sa, why, whysz);
	if (fd < 0)
		return -1;
	if (!direct) {
		n = snprintf(req, sizeof(req), "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", ip,
			     ip);
		if (send_all(fd, req, (size_t)n, why, whysz) < 0)
			goto fail;
		while (!strstr(head, "\r\n\r\n")) {
			ssize_t r = hn < sizeof(head) - 1 ? recv(fd, head + hn, sizeof(head) - 1 - hn, 0)
							  : -1;

			if (r <= 0) {
				snprintf(why, whysz, "CONNECT: no answer");
				goto fail;
			}
			hn += (size_t)r;
			head[hn] = '\0';
		}
		if (strncmp(head, "HTTP/1.1 200", 12) != 0) {
			snprintf(why, whysz, "CONNECT answered '%.60s'", head);
			goto fail;
		}
	}
	ssl = SSL_new(ctx);
	if (!ssl || X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), ip) != 1 ||
	    SSL_set_fd(ssl, fd) != 1 || SSL_connect(ssl) != 1) {
		snprintf(why, whysz, "TLS handshake with %s failed (verify: %s)", ip,
			 ssl ? X509_verify_cert_error_string(SSL_get_verify_result(ssl)) : "?");
		goto fail;
	}
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
		     path, ip);
	if (SSL_write(ssl, req, n) != n) {
		snprintf(why, whysz, "TLS write failed");
		goto fail;
	}
	hn = 0;
	head[0] = '\0';
	for (;;) {
		int r = SSL_read(ssl, buf, sizeof(buf));

		if (r <= 0)
			break;
		total += (unsigned long long)r;
		if (in_body) {
			body += (unsigned long long)r;
			continue;
		}
		{
			size_t take = (size_t)r < sizeof(head) - 1 - hn ? (size_t)r : sizeof(head) - 1 - hn;
			char *end;

			memcpy(head + hn, buf, take);
			hn += take;
			head[hn] = '\0';
			end = strstr(head, "\r\n\r\n");
			if (end) {
				in_body = true;
				body = total - (unsigned long long)(end + 4 - head);
			}
		}
		if (in_body && body >= expect)
			break;
	}
	if (!in_body || strncmp(head, "HTTP/1.1 200 ", 13) != 0 || body != expect) {
		head[strcspn(head, "\r\n")] = '\0';
		snprintf(why, whysz, "HTTPS answer '%.80s', %llu of %llu bytes", head, body, expect);
		goto fail;
	}
	SSL_free(ssl);
	close(fd);
	*us = now_us() - t0;
	return 0;
fail:
	SSL_free(ssl);
	close(fd);
	return -1;
}

/* The CPU time of a whole process, every thread's, those ended included
 * (utime + stime of /proc/PID/stat), in ms; -1 when unknown. */
static double process_cpu_ms(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -1;
	return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* The engine's TLS helper (ward-tls, its child), or -1: its CPU is the
 * proxy's too. */
static pid_t tls_helper_of(pid_t engine)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = -1;

	while (d && found < 0 && (e = readdir(d))) {
		char path[64], buf[512], comm[64];
		int pid = atoi(e->d_name), pp = 0;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%*d (%63[^)]) %*c %d", comm, &pp) == 2 &&
		    pp == engine && strcmp(comm, "ward-tls") == 0)
			found = pid;
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* The engine's and its helper's CPU time, ms, or -1. */
static double proxy_cpu_ms(pid_t engine, pid_t helper)
{
	double a = process_cpu_ms(engine), b = helper > 0 ? process_cpu_ms(helper) : 0;

	return a < 0 || b < 0 ? -1 : a + b;
}

/* Interleaved: a tunnelled and an intercepted request per round (order
 * alternating), the difference of each pair a sample; then downloads, direct
 * and intercepted, alternating. */
static void measure_tls(struct series_set *set, int rounds, int streams,
			unsigned long long bytes)
{
	struct ward_error *err = NULL;
	SSL_CTX *ctx = NULL;
	pid_t up = -1, eng = -1, helper;
	char why[256];
	int l, r, i;
	FILE *f;

	tls_up = ward_tls_new(NULL, &err);
	if (!tls_up) {
		failed(set, "TLS: %s", err ? err->message : "?");
		ward_error_free(err);
		return;
	}
	i = mkstemp(tls_up_ca);
	if (i < 0 || !(f = fdopen(i, "w"))) {
		failed(set, "TLS: a temporary file: %s", strerror(errno));
		goto out;
	}
	fputs(ward_tls_ca_pem(tls_up), f);
	fclose(f);
	i = mkstemp(tls_bundle);
	if (i < 0) {
		failed(set, "TLS: a temporary file: %s", strerror(errno));
		goto out;
	}
	close(i);
	l = listen_local(TLS_PORT);
	if (l >= 0) {
		/* 127.0.0.2 too: every loopback address */
		struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(TLS_PORT) };
		int one = 1;

		close(l);
		l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (l >= 0 && (bind(l, (struct sockaddr *)&any, sizeof(any)) < 0 || listen(l, 64) < 0)) {
			close(l);
			l = -1;
		}
	}
	if (l < 0 || (up = spawn_serving(tls_upstream_serve, l)) < 0) {
		failed(set, "the HTTPS upstream on :%d: %s", TLS_PORT, strerror(errno));
		goto out;
	}
	close(l);
	l = listen_local(ENGINE_PORT + 1);
	if (l >= 0 && fcntl(l, F_SETFL, O_NONBLOCK) < 0) {
		close(l);
		l = -1;
	}
	if (l < 0 || (eng = spawn_serving(engine_tls_serve, l)) < 0) {
		failed(set, "the proxy engine (TLS) on 127.0.0.1:%d: %s", ENGINE_PORT + 1,
		       strerror(errno));
		goto out;
	}
	close(l);
	/* the engine writes its bundle before it accepts: wait for the CA in it */
	for (i = 0; i < 500; i++) {
		char *text = NULL;
		size_t n = 0;

		f = fopen(tls_bundle, "re");
		if (f && getdelim(&text, &n, '\0', f) > 0 && strstr(text, "ward run CA")) {
			free(text);
			fclose(f);
			break;
		}
		free(text);
		if (f)
			fclose(f);
		usleep(10000);
	}
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || SSL_CTX_load_verify_file(ctx, tls_bundle) != 1 ||
	    SSL_CTX_load_verify_file(ctx, tls_up_ca) != 1) {
		failed(set, "TLS: the client's trust (the engine's bundle, the server's CA)");
		goto out;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	for (r = -rounds / 10; r < rounds && strcmp(set->status, "ok") == 0; r++) {
		double us[2];

		for (i = 0; i < 2; i++) {
			int k = (r + i) % 2; /* 0: tunnel, 1: intercept */

			if (tls_request(ctx, k ? "127.0.0.1" : "127.0.0.2", false, "/small",
					strlen(SMALL_BODY), &us[k], why, sizeof(why)) < 0) {
				failed(set, "%s HTTPS request: %s", k ? "intercepted" : "tunnelled",
				       why);
				break;
			}
		}
		if (r >= 0 && strcmp(set->status, "ok") == 0) {
			add(set, S_TLS_TUNNEL, us[0] / 1000.0);
			add(set, S_TLS_INTERCEPT, us[1] / 1000.0);
			add(set, S_TLS_ADDED, (us[1] - us[0]) / 1000.0);
		}
	}
	/* CPU: batches of intercepted requests alone, the proxy's process
	 * time around each (clock ticks: a batch is long enough) */
	helper = tls_helper_of(eng);
	for (r = 0; r < (rounds >= 100 ? 10 : 2) && strcmp(set->status, "ok") == 0; r++) {
		double c0 = proxy_cpu_ms(eng, helper), c1, us;
		int batch = 50;

		for (i = 0; i < batch; i++)
			if (tls_request(ctx, "127.0.0.1", false, "/small", strlen(SMALL_BODY), &us, why,
					sizeof(why)) < 0) {
				failed(set, "intercepted HTTPS request: %s", why);
				break;
			}
		c1 = proxy_cpu_ms(eng, helper);
		if (c0 >= 0 && c1 >= c0 && i == batch)
			add(set, S_TLS_CPU, (c1 - c0) / batch);
	}
	for (r = 0; r < streams && strcmp(set->status, "ok") == 0; r++)
		for (i = 0; i < 2; i++) {
			bool mitm = (r + i) % 2;
			char path[64];
			double us;

			snprintf(path, sizeof(path), "/stream/%llu", bytes);
			if (tls_request(ctx, "127.0.0.1", !mitm, path, bytes, &us, why,
					sizeof(why)) < 0) {
				failed(set, "%s HTTPS download: %s", mitm ? "intercepted" : "direct",
				       why);
				break;
			}
			add(set, mitm ? S_TLS_INTERCEPT_MBPS : S_TLS_DIRECT_MBPS, (double)bytes / us);
		}
	fprintf(stderr, "ward-bench: network, TLS interception: %s\n", set->status);
out:
	SSL_CTX_free(ctx);
	stop(eng);
	stop(up);
	unlink(tls_up_ca);
	unlink(tls_bundle);
	ward_tls_free(tls_up);
	tls_up = NULL;
}

/* fork+exec with stdout and stderr captured; waits for that child only (the
 * bench's servers are children too). Returns the wait status or -1. */
static int run_capture(char *const argv[], char *out, size_t outsz)
{
	int p[2], st;
	size_t n = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t r = read(p[0], out + n, outsz - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (n += (size_t)r) == outsz - 1)
			break;
	}
	out[n] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* One batch of net-client: its lines into the series. */
static int batch(struct series_set *set, char *const argv[], const char *what)
{
	static char out[1 << 16];
	char *line, *save = NULL;
	int st = run_capture(argv, out, sizeof(out));

	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		/* The client's own "error ..." line, else ward's first line. */
		char *e = strstr(out, "error ");

		if (!e)
			e = out;
		e[strcspn(e, "\n")] = '\0';
		failed(set, "%s: exit %d: %.160s", what,
		       st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), e);
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[16];
		double v;

		if (sscanf(line, "%15s %lf", key, &v) != 2)
			continue;
		if (strcmp(key, "direct") == 0)
			add(set, S_DIRECT, v / 1000.0);
		else if (strcmp(key, "get") == 0)
			add(set, S_GET, v / 1000.0);
		else if (strcmp(key, "connect") == 0)
			add(set, S_CONNECT, v / 1000.0);
		else if (strcmp(key, "stream") == 0)
			add(set, strcmp(what, "outside") == 0 ? S_DIRECT_MBPS : S_TUNNEL_MBPS, v);
	}
	return 0;
}

static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int in = open(from, O_RDONLY | O_CLOEXEC), out, e = 0;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		e = errno;
		close(in);
		errno = e;
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	e = errno;
	close(in);
	if (close(out) < 0 || n < 0) {
		errno = e ? e : EIO;
		return -1;
	}
	return 0;
}

/* The client in a sandbox and the same client outside, batches alternating. */
static void measure_sandbox(struct series_set *set, const struct tier_options *o, int rounds,
			    int per_batch, unsigned long long bytes, int streams)
{
	char client[600], n[16], size[32], ns[16];
	char *in[32], *outside[9];
	int r, k = 0;

	snprintf(client, sizeof(client), "%s/ward-bench", o->workdir);
	if (copy_file(o->self, client) < 0) {
		failed(set, "copy the client to '%s': %s", client, strerror(errno));
		return;
	}
	snprintf(n, sizeof(n), "%d", per_batch);
	snprintf(size, sizeof(size), "%llu", bytes);
	snprintf(ns, sizeof(ns), "%d", streams);
	in[k++] = (char *)o->ward;
	in[k++] = (char *)"run";
	in[k++] = (char *)"--policy";
	in[k++] = (char *)o->policy;
	in[k++] = (char *)"-C";
	in[k++] = (char *)o->workdir;
	in[k++] = (char *)"--net=proxy";
	in[k++] = (char *)"--allow-cidr";
	in[k++] = (char *)"127.0.0.1/32";
	/* What ward picks by itself for this user, said explicitly. */
	in[k++] = (char *)"--net-transport";
	in[k++] = (char *)(geteuid() == 0 ? "veth" : "loopback");
	in[k++] = (char *)"--";
	outside[0] = in[k++] = client;
	outside[1] = in[k++] = (char *)"net-client";
	outside[2] = (char *)"direct";
	in[k++] = (char *)"proxy";
	outside[3] = in[k++] = n;
	outside[4] = in[k++] = (char *)"127.0.0.1";
	outside[5] = in[k++] = (char *)"80";
	outside[6] = in[k++] = size;
	outside[7] = in[k++] = ns;
	outside[8] = NULL;
	in[k] = NULL;
	argv_join(set->cmdline[S_DIRECT], BENCH_LINE_MAX, outside);
	argv_join(set->cmdline[S_GET], BENCH_LINE_MAX, in);
	snprintf(set->cmdline[S_CONNECT], BENCH_LINE_MAX, "%s", set->cmdline[S_GET]);
	snprintf(set->cmdline[S_DIRECT_MBPS], BENCH_LINE_MAX, "%s", set->cmdline[S_DIRECT]);
	snprintf(set->cmdline[S_TUNNEL_MBPS], BENCH_LINE_MAX, "%s", set->cmdline[S_GET]);
	for (r = 0; r < rounds && strcmp(set->status, "ok") == 0; r++) {
		/* Which goes first alternates. */
		if (r % 2 == 0) {
			if (batch(set, outside, "outside") == 0)
				batch(set, in, "in the sandbox");
		} else if (batch(set, in, "in the sandbox") == 0) {
			batch(set, outside, "outside");
		}
		fprintf(stderr, "ward-bench: network, sandboxed client, round %d of %d\n", r + 1,
			rounds);
	}
	unlink(client);
}

static void write_set(FILE *rec, struct series_set *set, const char *prefix,
		      const struct tier_options *o)
{
	int k;

	for (k = 0; k < N_SERIES; k++) {
		struct samples *s = &set->s[k];
		bool good = strcmp(set->status, "ok") == 0 && s->n > 0;

		if (series_rows[k].engine_only && strcmp(prefix, "engine") != 0)
			continue;
		fprintf(rec, "net\t%s-%s\t%s\t", prefix, series_rows[k].key, series_rows[k].label);
		rec_escape(rec, good || strcmp(set->status, "ok") != 0 ? set->status
								       : "failed: no figure");
		if (good)
			fprintf(rec, "\t%.4f\t%s\t", samples_quantile(s, 0.5), series_rows[k].unit);
		else
			fprintf(rec, "\t-\t%s\t", series_rows[k].unit);
		rec_cmdline(rec, set->cmdline[k], o);
		if (good)
			fprintf(rec, "\t%zu\t%.4f\t%.4f\n", s->n, samples_quantile(s, 0.1),
				samples_quantile(s, 0.9));
		else
			fprintf(rec, "\t0\t-\t-\n");
		samples_release(s);
	}
}

/* In the forked child: the namespace, the servers, both measurements. */
static void in_netns(const struct tier_options *o, FILE *rec)
{
	static struct series_set engine, sandbox;
	/* Streams of a tenth of a second or so, and many of them: one stream's
	 * figure swings with where the scheduler puts the processes (here a
	 * direct connection whose two ends share a CPU runs up to twice as fast
	 * as one whose ends do not), so medians need many samples. */
	int rounds = o->quick ? 100 : 1000, streams = o->quick ? 3 : 15;
	unsigned long long bytes = o->quick ? 32ULL << 20 : 128ULL << 20;
	int batches = o->quick ? 2 : 10, per_batch = o->quick ? 20 : 100;
	int batch_streams = o->quick ? 2 : 3;
	pid_t up = -1, eng = -1;
	char why[BENCH_STATUS_MAX - 16];
	int l, k;

	snprintf(engine.status, sizeof(engine.status), "ok");
	snprintf(sandbox.status, sizeof(sandbox.status), "ok");
	for (k = 0; k < N_SERIES; k++)
		snprintf(engine.cmdline[k], BENCH_LINE_MAX,
			 "ward-bench's client -> ward's proxy engine (ward_proxy_*, --allow-cidr "
			 "127.0.0.1/32) on 127.0.0.1:%d -> ward-bench's server on 127.0.0.1:%d, "
			 "in a network namespace of the bench",
			 ENGINE_PORT, UPSTREAM_PORT);
	if (enter_netns(why, sizeof(why)) < 0) {
		failed(&engine, "%s", why);
		failed(&sandbox, "%s", why);
		goto out;
	}
	l = listen_local(UPSTREAM_PORT);
	if (l < 0 || (up = spawn_serving(upstream_serve, l)) < 0) {
		failed(&engine, "the upstream on 127.0.0.1:%d: %s", UPSTREAM_PORT, strerror(errno));
		failed(&sandbox, "%s", engine.status + 8);
		goto out;
	}
	close(l);
	/* Non-blocking, as ward's own listeners: the engine accepts until EAGAIN. */
	l = listen_local(ENGINE_PORT);
	if (l >= 0 && fcntl(l, F_SETFL, O_NONBLOCK) < 0) {
		close(l);
		l = -1;
	}
	if (l < 0 || (eng = spawn_serving(engine_serve, l)) < 0)
		failed(&engine, "the proxy engine on 127.0.0.1:%d: %s", ENGINE_PORT,
		       strerror(errno));
	else
		measure_engine(&engine, eng, up, rounds, streams, bytes);
	if (l >= 0)
		close(l);
	stop(eng);
	measure_tls(&engine, o->quick ? 20 : 200, streams, bytes);
	measure_sandbox(&sandbox, o, batches, per_batch, bytes, batch_streams);
out:
	stop(up);
	fprintf(rec, "info\tnet_transport\t%s\n", geteuid() == 0 ? "veth" : "loopback");
	write_set(rec, &engine, "engine", o);
	write_set(rec, &sandbox, "sandbox", o);
}

int bench_network(const struct tier_options *o, FILE *rec)
{
	char why[BENCH_STATUS_MAX];
	struct libcase *probe = libcase_new("--net=proxy", o, why, sizeof(why));
	pid_t pid;
	int st;

	if (!probe) {
		fprintf(rec, "net\tproxy\t--net=proxy\t");
		rec_escape(rec, why);
		fprintf(rec, "\t-\t-\t-\t0\t-\t-\n");
		fflush(rec);
		return 0;
	}
	libcase_free(probe);
	/* The child writes the records through its copy of rec: nothing may be
	 * left in the buffer to be written twice. */
	fflush(rec);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ward-bench: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		in_netns(o, rec);
		_exit(fflush(rec) == 0 ? 0 : 1);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(rec, "net\tproxy\tthe network section\tfailed: its process ended with "
			     "status %d\t-\t-\t-\t0\t-\t-\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		fflush(rec);
	}
	return 0;
}
