/* test-https.c — TLS interception for real: curl, python3 (urllib), node
 * (https) and git (smart HTTP) inside the sandbox, through the proxy, to
 * HTTPS servers with a test CA; what is tunnelled untouched; upstream
 * verification; the CA's key out of reach; hostile clients; nothing left.
 *
 * Every test moves into network and mount namespaces of its own (with a
 * user namespace when not root), where only loopback exists:
 *
 *   127.0.0.1:8443  tests/helpers/tls-server.py, a certificate of the test's
 *                   CA for api.test and plain.test (git http-backend under /git/)
 *   127.0.0.1:9443  the same server with a self-signed certificate (bad.test)
 *   /etc/hosts bound over: api.test, plain.test, bad.test are 127.0.0.1
 *
 * The proxy reaches them with --allow-cidr 127.0.0.1/32. */
#include "harness.h"
#include "ward/request.h"
#include "ward/sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <net/if.h>
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

static const char hosts[] = "127.0.0.1 localhost api.test plain.test bad.test other.test\n";

static struct {
	char *dir;   /* the sandbox's workdir, the certificates, the repository */
	char *state; /* ward's state directory for the runs */
	char ca[4096];
} W;

static void put_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_msg(fd >= 0, "open '%s': %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

static void sh(const char *script)
{
	char *out = NULL, *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-ec", (char *)script, NULL };
	int st = harness_capture(argv, &out, &err);

	ck_assert_msg(st == 0, "'%s' failed: %s%s", script, out, err);
	free(out);
	free(err);
}

static void lo_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ck_assert_int_eq(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	ck_assert_int_eq(ioctl(s, SIOCSIFFLAGS, &ifr), 0);
	close(s);
}

static void write_proc(const char *path, const char *s)
{
	put_file(path, s);
}

/* tls-server.py on port with cert and key; returns a pipe that says
 * "ready" once it accepts (server_ready()). */
static int start_server(const char *cert, const char *key, const char *port)
{
	char *script = harness_path("tests/helpers/tls-server.py"), repos[PATH_MAX];
	int p[2];
	pid_t pid;

	snprintf(repos, sizeof(repos), "%s/repos", W.dir);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *argv[] = { (char *)"/usr/bin/python3", script, (char *)cert, (char *)key,
				 (char *)port, repos, NULL };
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		dup2(null, 2); /* a hostile client's broken requests make tracebacks */
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	free(script);
	return p[0];
}

static void server_ready(int fd)
{
	char c;

	/* the whole line: a write to a closed pipe would end the server */
	do
		ck_assert_msg(read(fd, &c, 1) == 1, "tls-server.py did not start");
	while (c != '\n');
	close(fd);
}

/* The test's CA, a certificate of it for api.test and plain.test, a
 * self-signed one for bad.test, a bare repository with one commit: made once
 * for all the tests, before they fork. */
static char *material;

static void make_material(void)
{
	char script[8192], *err = NULL;
	const char *dir;
	char *argv[] = { (char *)"/bin/sh", (char *)"-ec", script, NULL };

	material = harness_tmpdir();
	dir = material;
	snprintf(script, sizeof(script),
		 "cd '%s'\n"
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "  -keyout ca.key -out ca.pem -days 2 -subj /CN=ward-test-ca 2>/dev/null\n"
		 "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key "
		 "  -out srv.csr -subj /CN=api.test 2>/dev/null\n"
		 "printf 'subjectAltName=DNS:api.test,DNS:plain.test\\nextendedKeyUsage=serverAuth\\n' > ext\n"
		 "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem "
		 "  -days 2 -extfile ext 2>/dev/null\n"
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "  -keyout bad.key -out bad.pem -days 2 -subj /CN=bad.test "
		 "  -addext subjectAltName=DNS:bad.test 2>/dev/null\n"
		 "rm -f ca.key\n"
		 "git init -q src && cd src && echo hello over git > README && git add README && "
		 "git -c user.name=t -c user.email=t@t commit -qm one && cd .. && "
		 "mkdir repos && git clone -q --bare src repos/repo.git && rm -rf src\n",
		 dir);
	if (harness_capture(argv, NULL, &err) != 0)
		fprintf(stderr, "# the test material could not be made: %s\n", err ? err : "");
	free(err);
}

static void world_up(void)
{
	char path[PATH_MAX], script[8192];

	W.dir = harness_tmpdir();
	W.state = harness_tmpdir();
	snprintf(W.ca, sizeof(W.ca), "%s/ca.pem", W.dir);
	/* the material made once (main), copied: the tests may write here */
	snprintf(script, sizeof(script), "cp -a '%s/.' '%s/'", material, W.dir);
	sh(script);
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
	lo_up();
	{
		char cert[PATH_MAX], key[PATH_MAX];

		int a, b;

		snprintf(cert, sizeof(cert), "%s/srv.pem", W.dir);
		snprintf(key, sizeof(key), "%s/srv.key", W.dir);
		a = start_server(cert, key, "8443");
		snprintf(cert, sizeof(cert), "%s/bad.pem", W.dir);
		snprintf(key, sizeof(key), "%s/bad.key", W.dir);
		b = start_server(cert, key, "9443");
		server_ready(a);
		server_ready(b);
	}
}

static void world_down(void)
{
	harness_rmtree(W.dir);
	harness_rmtree(W.state);
}

/* Proxy mode to api.test, plain.test (8443) and bad.test (9443); the
 * credential for api.test, whose real server the test's CA vouches for
 * when upstream_ca. */
static void config(struct ward_config *cfg, bool upstream_ca, const char *inject_host)
{
	struct ward_error *err = NULL;
	char spec[256];

	ward_config_init(cfg);
	ck_assert_int_eq(ward_config_set_workdir(cfg, W.dir, &err), 0);
	cfg->timeout = 60;
	cfg->net = WARD_NET_PROXY;
	cfg->net_transport = geteuid() == 0 ? WARD_NET_TRANSPORT_AUTO : WARD_NET_TRANSPORT_LOOPBACK;
	cfg->state_dir = strdup(W.state);
	ck_assert_int_eq(ward_netpolicy_add_host(&cfg->netpolicy, false, "api.test:8443", NULL), 0);
	ck_assert_int_eq(ward_netpolicy_add_host(&cfg->netpolicy, false, "plain.test:8443", NULL), 0);
	ck_assert_int_eq(ward_netpolicy_add_host(&cfg->netpolicy, false, "bad.test:9443", NULL), 0);
	ck_assert_int_eq(ward_netpolicy_add_cidr(&cfg->netpolicy, "127.0.0.1/32", NULL), 0);
	snprintf(spec, sizeof(spec), "%s=X-Token: ${WARD_TEST_TOKEN}", inject_host);
	setenv("WARD_TEST_TOKEN", "s3cret-value", 1);
	ck_assert_int_eq(ward_netpolicy_add_credential(&cfg->netpolicy, spec, NULL), 0);
	if (upstream_ca)
		ck_assert_int_eq(ward_netpolicy_set_upstream_ca(&cfg->netpolicy, W.ca, NULL), 0);
}

static void run(struct ward_config *cfg, const char *cmd, struct ward_result *res)
{
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)cmd, NULL };

	ck_assert_msg(ward_run(cfg, argv, res, &err) == 0, "ward_run: %s", err ? err->message : "");
	ck_assert_msg(!res->error, "'%s': %s\n%s", cmd, res->error ? res->error->message : "",
		      res->output);
}

static size_t count(const struct ward_result *res, const char *method, const char *host,
		    const char *rule_part)
{
	size_t n = 0;

	for (size_t i = 0; i < res->n_net_records; i++)
		n += strcmp(res->net_records[i].host, host) == 0 &&
		     strcmp(res->net_records[i].method, method) == 0 &&
		     (!rule_part || strstr(res->net_records[i].rule, rule_part));
	return n;
}

static void dump(const struct ward_result *res)
{
	for (size_t i = 0; i < res->n_net_records; i++)
		fprintf(stderr, "record %s %s %s status %d %lld ms: %s\n", res->net_records[i].method,
			res->net_records[i].host, res->net_records[i].decision,
			res->net_records[i].status, (long long)res->net_records[i].duration_ms,
			res->net_records[i].rule);
}

static void contains(const char *out, const char *s)
{
	ck_assert_msg(strstr(out, s), "no '%s' in:\n%s", s, out);
}

static bool no_bundle_left(void)
{
	DIR *d = opendir(W.state);
	struct dirent *e;
	bool none = true;

	if (!d)
		return true;
	while ((e = readdir(d)))
		none = none && strncmp(e->d_name, "ca-bundle-", 10) != 0;
	closedir(d);
	return none;
}

/* curl (two requests on one connection), python3's urllib and node's https
 * get the header ward adds over HTTPS; the sandbox never sees its value. */
START_TEST(test_inject_over_https)
{
	struct ward_config cfg;
	struct ward_result res;

	world_up();
	config(&cfg, true, "api.test");
	run(&cfg,
	    "set -e\n"
	    "echo '== curl'; curl -sS https://api.test:8443/echo https://api.test:8443/chunked\n"
	    "echo; echo '== python'\n"
	    "/usr/bin/python3 -c 'import urllib.request as u; "
	    "print(u.urlopen(\"https://api.test:8443/echo?via=python\").read().decode())'\n"
	    "echo '== node'\n"
	    "node -e '\n"
	    "const http = require(\"http\"), https = require(\"https\"), tls = require(\"tls\");\n"
	    "const p = new URL(process.env.HTTPS_PROXY);\n"
	    "http.request({host: p.hostname, port: p.port, method: \"CONNECT\", path: "
	    "\"api.test:8443\"}).on(\"connect\", (res, sock) => {\n"
	    "  https.get({host: \"api.test\", port: 8443, path: \"/echo?via=node\", createConnection: "
	    "() => tls.connect({socket: sock, servername: \"api.test\"})}, r => {\n"
	    "    let d = \"\"; r.on(\"data\", c => d += c); r.on(\"end\", () => { console.log(d); "
	    "sock.destroy(); }); });\n"
	    "}).end();'\n"
	    "echo '== expect'; head -c 3000 /dev/zero | tr '\\0' a > /tmp/body\n"
	    "curl -sS -H 'Expect: 100-continue' --data-binary @/tmp/body https://api.test:8443/echo "
	    "| grep -o -e '^Expect: 100-continue' -e 'a\\{3000\\}$' | cut -c1-20\n"
	    "echo '== env'; env | grep -c s3cret-value || true\n"
	    "echo \"bundle=$SSL_CERT_FILE node=$NODE_EXTRA_CA_CERTS git=$GIT_SSL_CAINFO "
	    "requests=$REQUESTS_CA_BUNDLE\"\n",
	    &res);
	dump(&res);
	ck_assert_msg(res.exit_code == 0, "exit %d:\n%s", res.exit_code, res.output);
	contains(res.output, "== curl\nGET /echo HTTP/1.1\n");
	contains(res.output, "X-Token: s3cret-value\n\none,two,three\n");
	contains(res.output, "GET /echo?via=python HTTP/1.1\n");
	contains(res.output, "GET /echo?via=node HTTP/1.1\n");
	{
		/* three times: curl, python, node */
		const char *p = res.output;
		int n = 0;

		while ((p = strstr(p, "X-Token: s3cret-value\n"))) {
			n++;
			p++;
		}
		ck_assert_int_eq(n, 3); /* the POST's output is cut short */
	}
	contains(res.output, "== expect\nExpect: 100-continue\naaaaaaaaaaaaaaaaaaaa\n== env\n0\n");
	contains(res.output, "bundle=/etc/ssl/certs/ca-certificates.crt "
			     "node=/etc/ssl/certs/ca-certificates.crt "
			     "git=/etc/ssl/certs/ca-certificates.crt "
			     "requests=/etc/ssl/certs/ca-certificates.crt");
	/* curl's two requests went over one intercepted connection */
	ck_assert_int_eq(count(&res, "CONNECT", "api.test", "intercepted"), 4);
	ck_assert_int_eq(count(&res, "GET", "api.test", "intercepted; credential added"), 4);
	ck_assert_int_eq(count(&res, "POST", "api.test", "intercepted; credential added"), 1);
	ward_result_release(&res);
	ward_config_release(&cfg);
	ck_assert(no_bundle_left());
	world_down();
}
END_TEST

/* A host no rule needs the plaintext of is tunnelled: the client sees the
 * real server's certificate (the test's CA, which the sandbox does not
 * trust), and nothing is added. */
START_TEST(test_tunnel_untouched)
{
	struct ward_config cfg;
	struct ward_result res;
	char cmd[8192];

	world_up();
	config(&cfg, true, "api.test");
	snprintf(cmd, sizeof(cmd),
		 "curl -sS https://plain.test:8443/echo; echo \"default=$?\"\n"
		 "curl -sSv --cacert '%s' https://plain.test:8443/echo 2>&1 | "
		 "grep -E 'issuer:|^X-Token|^GET'\n",
		 W.ca);
	run(&cfg, cmd, &res);
	dump(&res);
	contains(res.output, "default=60\n");
	contains(res.output, "issuer: CN=ward-test-ca");
	contains(res.output, "GET /echo HTTP/1.1");
	ck_assert_msg(!strstr(res.output, "X-Token"), "%s", res.output);
	ck_assert_int_eq(count(&res, "CONNECT", "plain.test", NULL), 2);
	ck_assert_int_eq(count(&res, "CONNECT", "plain.test", "intercepted"), 0);
	ck_assert_int_eq(count(&res, "GET", "plain.test", NULL), 0);
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

/* The real server is verified: an untrusted certificate is a 502 with the
 * reason, never a pass-through; --upstream-ca makes it pass; a missing
 * --upstream-ca file is refused before anything runs. */
START_TEST(test_upstream_verification)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)"echo ran-marker", NULL };

	world_up();
	/* the test's CA is not in the system's store */
	config(&cfg, false, "api.test");
	run(&cfg, "curl -sS -w '\\nstatus=%{http_code}\\n' https://api.test:8443/echo", &res);
	dump(&res);
	contains(res.output, "ward proxy: api.test port 8443: certificate verify failed: "
			     "unable to get local issuer certificate\n\nstatus=502\n");
	ck_assert_msg(!strstr(res.output, "X-Token"), "%s", res.output);
	ck_assert_int_eq(count(&res, "GET", "api.test", "certificate verify failed"), 1);
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* a self-signed server, even with --upstream-ca of another CA */
	config(&cfg, true, "bad.test");
	run(&cfg, "curl -sS -w '\\nstatus=%{http_code}\\n' https://bad.test:9443/echo", &res);
	contains(res.output, "certificate verify failed: self-signed certificate\n\nstatus=502\n");
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* --upstream-ca makes it pass */
	config(&cfg, true, "api.test");
	run(&cfg, "curl -sS -w '\\nstatus=%{http_code}\\n' https://api.test:8443/echo", &res);
	contains(res.output, "X-Token: s3cret-value\n");
	contains(res.output, "status=200\n");
	ward_result_release(&res);
	ward_config_release(&cfg);

	/* missing: refused, naming the option, before the command */
	config(&cfg, false, "api.test");
	ck_assert_int_eq(ward_netpolicy_set_upstream_ca(&cfg.netpolicy, "/nonexistent/ca.pem", NULL),
			 0);
	ward_run(&cfg, argv, &res, &err);
	ck_assert_msg(res.error, "no error");
	ck_assert_msg(strstr(res.error->message, "--upstream-ca: open '/nonexistent/ca.pem'"), "%s",
		      res.error->message);
	ck_assert_int_eq(res.error->kind, WARD_ERR_INVALID_PARAMETERS);
	ck_assert_msg(!res.output || !strstr(res.output, "ran-marker"), "%s", res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);
	ward_error_free(err);
	world_down();
}
END_TEST

/* The CA's key: not in the bundle, not on disk, init's memory unreadable;
 * the bundle read-only inside; nothing left in the state directory. */
START_TEST(test_ca_key_out_of_reach)
{
	struct ward_config cfg;
	struct ward_result res;

	char cmd[8192];

	world_up();
	config(&cfg, true, "api.test");
	/* the bundle's host file (the state directory) is not in the view, and
	 * no descriptor of it reaches the command */
	snprintf(cmd, sizeof(cmd),
	    "ls '%.4000s' >/dev/null 2>&1 || echo state-dir-hidden\n"
	    "echo fds=$(ls -l /proc/self/fd/ | grep -c -e ca-bundle -e memfd)\n"
	    "echo keys=$(grep -c 'PRIVATE KEY' /etc/ssl/certs/ca-certificates.crt)\n"
	    "echo ward_ca=$(openssl crl2pkcs7 -nocrl -certfile /etc/ssl/certs/ca-certificates.crt "
	    "| openssl pkcs7 -print_certs -noout | grep -c 'subject=O = ward, CN = ward run CA')\n"
	    "echo x >> /etc/ssl/certs/ca-certificates.crt 2>/dev/null || echo bundle-read-only\n"
	    "cat /proc/1/mem >/dev/null 2>&1 || echo mem-unreadable\n"
	    "grep -rl 'PRIVATE KEY' /etc/ssl/certs 2>/dev/null | head -3; echo scanned\n",
	    W.state);
	run(&cfg, cmd, &res);
	contains(res.output, "state-dir-hidden\nfds=0\nkeys=0\nward_ca=1\nbundle-read-only\n"
			     "mem-unreadable\nscanned\n");
	ward_result_release(&res);
	ward_config_release(&cfg);
	ck_assert(no_bundle_left());
	/* nothing in the state directory holds a key either */
	snprintf(cmd, sizeof(cmd), "! grep -rl 'PRIVATE KEY' '%.4000s'", W.state);
	sh(cmd);
	world_down();
}
END_TEST

/* The pid of a ward-tls whose parent is ppid, or 0. */
static pid_t find_helper(pid_t ppid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	ck_assert(d);
	while (!found && (e = readdir(d))) {
		char path[64], buf[512], comm[64];
		int pid = atoi(e->d_name), pp = 0;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* "PID (COMM) S PPID ..." */
		if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%*d (%63[^)]) %*c %d", comm, &pp) == 2 &&
		    pp == ppid && strcmp(comm, "ward-tls") == 0)
			found = pid;
		fclose(f);
	}
	closedir(d);
	return found;
}

static char *slurp(const char *path, size_t *len)
{
	char *buf = malloc(65536);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, 65535) : -1;

	ck_assert_msg(n >= 0, "read '%s': %s", path, strerror(errno));
	close(fd);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* The TLS is a helper's, ward-tls: while a run intercepts it holds only its
 * control socket and /dev/null, no environment of ward's (no credential's
 * value), no_new_privs (its Landlock domain comes with it); the run's end
 * ends it, reaped. The ward binary itself carries no OpenSSL. A helper that
 * is missing, dies, or speaks another protocol fails the run before the
 * command, saying so. */
START_TEST(test_tls_helper)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)"echo ran-marker", NULL };
	char go[PATH_MAX], path[PATH_MAX], fake[PATH_MAX], *helper;
	int st;
	pid_t child;

	world_up();
	snprintf(go, sizeof(go), "%s/go", W.dir);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		config(&cfg, true, "api.test");
		cfg.timeout = 30;
		run(&cfg, "touch ready; i=0; while [ ! -e go ] && [ $i -lt 250 ]; do sleep 0.1; "
			  "i=$((i+1)); done;"
			  "curl -sS https://api.test:8443/echo", &res);
		/* the helper ended with the run, and was reaped */
		_exit(strstr(res.output, "X-Token: s3cret-value") && !find_helper(getpid()) ? 0 : 1);
	}
	{
		pid_t h = 0;
		size_t len, i;
		char *text;
		DIR *d;
		struct dirent *e;

		/* the command runs: the helper said hello before it */
		snprintf(path, sizeof(path), "%s/ready", W.dir);
		for (i = 0; i < 400 && access(path, F_OK) != 0; i++)
			usleep(50000);
		h = find_helper(child);
		ck_assert_msg(h, "no ward-tls under the run");
		snprintf(path, sizeof(path), "/proc/%d/status", h);
		text = slurp(path, &len);
		ck_assert_msg(strstr(text, "NoNewPrivs:\t1\n") && strstr(text, "Seccomp:\t2\n"),
			      "%s", text);
		free(text);
		snprintf(path, sizeof(path), "/proc/%d/environ", h);
		if (geteuid() != 0) {
			/* non-dumpable: its own user cannot read its memory, its
			 * environment or its descriptors */
			ck_assert_msg(open(path, O_RDONLY | O_CLOEXEC) < 0 && errno == EACCES,
				      "the helper's environment is readable by its user");
			snprintf(path, sizeof(path), "/proc/%d/fd", h);
			ck_assert_msg(!opendir(path) && errno == EACCES,
				      "the helper's descriptors are readable by its user");
			goto checked;
		}
		text = slurp(path, &len);
		for (i = 0; i < len; i += strlen(text + i) + 1)
			ck_assert_msg(strncmp(text + i, "SSL_CERT_", 9) == 0,
				      "the helper's environment has '%s'", text + i);
		free(text);
		snprintf(path, sizeof(path), "/proc/%d/fd", h);
		d = opendir(path);
		ck_assert(d);
		while ((e = readdir(d))) {
			char link[PATH_MAX], to[PATH_MAX] = "";
			int fd = atoi(e->d_name);

			if (e->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%.64s/%.64s", path, e->d_name);
			ck_assert(readlink(link, to, sizeof(to) - 1) > 0);
			if (fd <= 2)
				ck_assert_msg(strcmp(to, "/dev/null") == 0, "fd %d: %s", fd, to);
			else
				ck_assert_msg(fd == 3 && strncmp(to, "socket:", 7) == 0,
					      "the helper holds fd %d: %s", fd, to);
		}
		closedir(d);
	checked:;
	}
	put_file(go, "");
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run under the check failed");

	/* the helper dies mid-run (a crash): an intercepted connection fails,
	 * recorded, a tunnel still works, the run ends as usual */
	unlink(go);
	snprintf(path, sizeof(path), "%s/ready", W.dir);
	unlink(path);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		size_t i, gone = 0;

		config(&cfg, true, "api.test");
		cfg.timeout = 30;
		run(&cfg, "touch ready; i=0; while [ ! -e go ] && [ $i -lt 250 ]; do sleep 0.1; "
			  "i=$((i+1)); done; curl -sS https://api.test:8443/echo; echo \"curl=$?\"; "
			  "curl -sSk -o /dev/null https://plain.test:8443/echo; echo \"plain=$?\"",
		    &res);
		for (i = 0; i < res.n_net_records; i++)
			gone += strstr(res.net_records[i].rule, "TLS helper") != NULL;
		if (!gone || !strstr(res.output, "plain=0") || strstr(res.output, "curl=0")) {
			dump(&res);
			fprintf(stderr, "%s\n", res.output);
		}
		_exit(gone && strstr(res.output, "plain=0") && !strstr(res.output, "curl=0") &&
			      !find_helper(getpid()) ? 0 : 1);
	}
	{
		pid_t h;
		size_t i;

		for (i = 0; i < 400 && access(path, F_OK) != 0; i++)
			usleep(50000);
		h = find_helper(child);
		ck_assert_msg(h > 0, "no ward-tls under the run");
		ck_assert_int_eq(kill(h, SIGKILL), 0);
		/* dead, still the run's child until it reaps it */
		for (i = 0; i < 200; i++) {
			char stat[64], buf[256] = "";
			FILE *f;

			snprintf(stat, sizeof(stat), "/proc/%d/stat", h);
			f = fopen(stat, "re");
			if (!f || !fgets(buf, sizeof(buf), f) || strstr(buf, ") Z ")) {
				if (f)
					fclose(f);
				break;
			}
			fclose(f);
			usleep(10000);
		}
	}
	put_file(go, "");
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "after the helper's death: no record of it, or the tunnel failed too");

	/* the ward binary has none of OpenSSL */
	{
		char *bin = harness_path("ward");
		size_t len;
		int fd = open(bin, O_RDONLY | O_CLOEXEC);
		struct stat sb;
		char *map;

		ck_assert_msg(fd >= 0 && fstat(fd, &sb) == 0, "open '%s'", bin);
		len = (size_t)sb.st_size;
		map = malloc(len);
		ck_assert(map && read(fd, map, len) == (ssize_t)len);
		ck_assert_msg(!memmem(map, len, "OpenSSL 3.", 10) &&
			      !memmem(map, len, "SSL_CTX_new", 11),
			      "'%s' carries OpenSSL: it belongs in ward-tls only", bin);
		free(map);
		close(fd);
		free(bin);
	}

	/* missing */
	helper = strdup(getenv("WARD_TLS_HELPER"));
	setenv("WARD_TLS_HELPER", "/nonexistent/ward-tls", 1);
	config(&cfg, true, "api.test");
	ward_run(&cfg, argv, &res, &err);
	ck_assert_msg(res.error, "no error");
	ck_assert_msg(strstr(res.error->message, "HTTPS interception needs ward's TLS helper, "
				     "ward-tls, installed with ward: none usable at "
				     "'/nonexistent/ward-tls' ($WARD_TLS_HELPER): not found"),
		      "%s", res.error->message);
	ck_assert_msg(!res.output || !strstr(res.output, "ran-marker"), "%s", res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);
	ck_assert(no_bundle_left());

	/* trust from a hashed directory alone ($SSL_CERT_DIR, no file): read
	 * before the helper gives up the filesystem */
	{
		char dir[PATH_MAX], cmd[3 * PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/certdir", W.state);
		snprintf(cmd, sizeof(cmd), "mkdir -p '%.1000s' && cp '%.1000s' \"%.1000s/$(openssl x509 "
			 "-hash -noout -in '%.1000s').0\"", dir, W.ca, dir, W.ca);
		sh(cmd);
		setenv("WARD_TLS_HELPER", helper, 1);
		setenv("SSL_CERT_FILE", "/nonexistent/cert.pem", 1);
		setenv("SSL_CERT_DIR", dir, 1);
		config(&cfg, false, "api.test");
		run(&cfg, "curl -sS https://api.test:8443/echo", &res);
		contains(res.output, "X-Token: s3cret-value\n");
		ward_result_release(&res);
		ward_config_release(&cfg);
		unsetenv("SSL_CERT_FILE");
		unsetenv("SSL_CERT_DIR");
	}

	/* a helper another user could have written is not started */
	{
		char copy[PATH_MAX], cmd[2 * PATH_MAX + 64];

		snprintf(copy, sizeof(copy), "%s/ward-tls-copy", W.state);
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 775 '%s'", helper, copy, copy);
		sh(cmd);
		setenv("WARD_TLS_HELPER", copy, 1);
		config(&cfg, true, "api.test");
		ward_run(&cfg, argv, &res, &err);
		ck_assert_msg(res.error && strstr(res.error->message, "ward-tls-copy' ($WARD_TLS_HELPER): "
						  "writable by another user than root or ward's"),
			      "%s", res.error ? res.error->message : "no error");
		ward_result_release(&res);
		ward_config_release(&cfg);
		unlink(copy);
	}

	/* exits at once; speaks another protocol */
	snprintf(fake, sizeof(fake), "%s/fake-tls", W.state);
	put_file(fake, "#!/usr/bin/python3\n"
		       "import socket, struct\n"
		       "s = socket.socket(fileno=3)\n"
		       "s.send(struct.pack('=IIIIiii', 0x12345678, 28, 260, 724, 1, 0, 0) + b'pem')\n");
	chmod(fake, 0755);
	setenv("WARD_TLS_HELPER", "/bin/true", 1);
	config(&cfg, true, "api.test");
	ward_run(&cfg, argv, &res, &err);
	ck_assert_msg(res.error && strstr(res.error->message, "the TLS helper '/bin/true' exited "
					  "before it was ready"), "%s",
		      res.error ? res.error->message : "no error");
	ward_result_release(&res);
	ward_config_release(&cfg);
	setenv("WARD_TLS_HELPER", fake, 1);
	config(&cfg, true, "api.test");
	ward_run(&cfg, argv, &res, &err);
	ck_assert_msg(res.error && strstr(res.error->message, "is from another build of ward"), "%s",
		      res.error ? res.error->message : "no error");
	ck_assert_msg(!res.output || !strstr(res.output, "ran-marker"), "%s", res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);
	ck_assert(no_bundle_left());
	ck_assert_int_eq(find_helper(getpid()), 0);

	/* a bundle a killed ward left (its pid gone, over a minute old) goes
	 * with the next run that intercepts; a live ward's, or a new one,
	 * stays */
	{
		char stale[PATH_MAX], live[PATH_MAX], young[PATH_MAX];
		struct timespec old[2] = { { .tv_sec = time(NULL) - 120 },
					   { .tv_sec = time(NULL) - 120 } };
		pid_t dead = fork();

		if (dead == 0)
			_exit(0);
		ck_assert_int_eq(waitpid(dead, NULL, 0), dead);
		snprintf(stale, sizeof(stale), "%s/ca-bundle-%d-abcdef", W.state, (int)dead);
		snprintf(live, sizeof(live), "%s/ca-bundle-1-abcdef", W.state);
		snprintf(young, sizeof(young), "%s/ca-bundle-%d-ghijkl", W.state, (int)dead);
		put_file(stale, "old");
		put_file(live, "old");
		put_file(young, "old");
		ck_assert_int_eq(utimensat(AT_FDCWD, stale, old, 0), 0);
		ck_assert_int_eq(utimensat(AT_FDCWD, live, old, 0), 0);
		setenv("WARD_TLS_HELPER", helper, 1);
		config(&cfg, true, "api.test");
		run(&cfg, "echo ran-marker", &res);
		ck_assert_msg(access(stale, F_OK) != 0, "'%s' is still there", stale);
		ck_assert_msg(access(live, F_OK) == 0, "a live ward's bundle went");
		ck_assert_msg(access(young, F_OK) == 0, "a new bundle went");
		ward_result_release(&res);
		ward_config_release(&cfg);
		unlink(live);
		unlink(young);
	}
	free(helper);
	ward_error_free(err);
	world_down();
}
END_TEST

/* The start of a python client of the sandbox's own: tunnel(setup, **kw)
 * opens a connection to the proxy (setup(s) first, for socket options),
 * CONNECTs to api.test:8443 and returns it wrapped in TLS (kw for
 * wrap_socket). Inside a single-quoted `python3 -c`. */
#define PY_TUNNEL                                                                                 \
	"import os, socket, ssl, time\n"                                                          \
	"p = os.environ[\"HTTPS_PROXY\"].split(\"//\")[1].rstrip(\"/\").split(\":\")\n"           \
	"def tunnel(setup=None, **kw):\n"                                                         \
	"    s = socket.socket()\n"                                                               \
	"    if setup: setup(s)\n"                                                                \
	"    s.connect((p[0], int(p[1])))\n"                                                      \
	"    s.sendall(b\"CONNECT api.test:8443 HTTP/1.1\\r\\n\\r\\n\")\n"                           \
	"    assert s.recv(100).startswith(b\"HTTP/1.1 200\")\n"                                  \
	"    return ssl.create_default_context().wrap_socket(s, server_hostname=\"api.test\", **kw)\n"

/* A reader of a response the connection ends after gets all of it, though
 * it was slow: what the proxy wrote before it let go still goes out, and
 * then a close_notify (a TLS end without one reads as an attack on the
 * framing). */
START_TEST(test_tls_drain)
{
	struct ward_config cfg;
	struct ward_result res;

	world_up();
	config(&cfg, true, "api.test");
	/* The client reads nothing until the proxy has written all of the
	 * response and let go, the helper then waiting on the client with the
	 * rest still to go. So that the response is more than the helper's TCP
	 * send buffer and the client's receive buffer take in, and less than
	 * they and the helper's plaintext socket and buffer do, the client
	 * keeps them small: small segments and a small window (the send buffer
	 * starts at twice ten segments; a client that reads grows it to MiBs). */
	run(&cfg, "/usr/bin/python3 -c '\n" PY_TUNNEL
		  "def small(s):\n"
		  "    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)\n"
		  "    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)\n"
		  "t = tunnel(small, suppress_ragged_eofs=False)\n"
		  "t.sendall(b\"GET /big?n=196608 HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n\")\n"
		  "time.sleep(0.5)\n"
		  "data = []\n"
		  "while True:\n"
		  "    try:\n"
		  "        d = t.recv(65536)\n"
		  "    except ssl.SSLError as e:\n"
		  "        print(\"error\", e); break\n"
		  "    if not d: break\n"
		  "    data.append(d)\n"
		  "print(\"body\", len(b\"\".join(data).partition(b\"\\r\\n\\r\\n\")[2]))\n'", &res);
	/* all of it, and then close_notify: an end without it is an error */
	contains(res.output, "body 196608\n");
	ck_assert_msg(!strstr(res.output, "error"), "%s", res.output);
	ward_result_release(&res);
	ward_config_release(&cfg);

	world_down();
}
END_TEST

/* Downloads past the size where the helper's and the proxy's buffers grow
 * arrive whole, more of them at once than may grow (some grown, some not),
 * and the connections after them still work. */
START_TEST(test_downloads_whole)
{
	struct ward_config cfg;
	struct ward_result res;

	world_up();
	config(&cfg, true, "api.test");
	run(&cfg,
	    "cd /tmp\n"
	    "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do\n"
	    "  curl -sS https://api.test:8443/big?n=6291456 > d$i &\n"
	    "done\n"
	    "wait\n"
	    "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do\n"
	    "  echo \"d$i $(wc -c < d$i) $(tr -d x < d$i | wc -c)\"\n"
	    "done\n"
	    "echo after $(curl -sS https://api.test:8443/big?n=3 | wc -c)\n",
	    &res);
	for (int i = 1; i <= 12; i++) {
		char line[32];

		snprintf(line, sizeof(line), "d%d 6291456 0\n", i);
		contains(res.output, line);
	}
	contains(res.output, "after 3\n");
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

/* A long body framed by its length is passed inside ward-tls, not through
 * the supervisor: its bytes arrive whole and in order, a second body on the
 * same connection and a small answer between them too; a server that ends
 * inside a body and a client that leaves in the middle of one end only
 * their connection; the records count what went. */
static const struct ward_net_record *record_for(const struct ward_result *res, const char *path)
{
	for (size_t i = 0; i < res->n_net_records; i++)
		if (strcmp(res->net_records[i].method, "GET") == 0 &&
		    strncmp(res->net_records[i].path, path, strlen(path)) == 0)
			return &res->net_records[i];
	return NULL;
}

START_TEST(test_bodies_passed)
{
	static const char check[] = "awk 'int($1)!=NR-1{bad++} END{print NR, bad+0}'";
	struct ward_config cfg;
	struct ward_result res;
	const struct ward_net_record *r;
	char script[2048];

	world_up();
	config(&cfg, true, "api.test");
	snprintf(script, sizeof(script),
		 "cd /tmp\n"
		 /* a small answer first: a relay that stalls fails the test in
		  * seconds, not at its timeout */
		 "curl -m 10 -sS https://api.test:8443/big?n=3 >/dev/null || exit 1\n"
		 /* one connection: a body passed, a small one, another passed */
		 "curl -m 20 -sS https://api.test:8443/seq?n=3000000 https://api.test:8443/big?n=5 "
		 "  https://api.test:8443/seq?n=2000000 -o a -o b -o c\n"
		 "echo \"a $(wc -c < a) $(%s a)\"\n"
		 "echo \"b $(cat b)\"\n"
		 "echo \"c $(wc -c < c) $(%s c)\"\n"
		 "curl -m 20 -sS https://api.test:8443/short?n=4000000 -o s 2>/dev/null; "
		 "echo \"short rc=$? $(wc -c < s)\"\n"
		 "echo \"left $(curl -m 20 -sS https://api.test:8443/seq?n=48000000 2>/dev/null | "
		 "  head -c 100000 | wc -c)\"\n"
		 "echo after $(curl -m 20 -sS https://api.test:8443/big?n=3 | wc -c)\n",
		 check, check);
	run(&cfg, script, &res);
	dump(&res);
	contains(res.output, "a 3000000 187500 0\n");
	contains(res.output, "b xxxxx\n");
	contains(res.output, "c 2000000 125000 0\n");
	contains(res.output, "short rc=18 2000000\n");
	contains(res.output, "left 100000\n");
	contains(res.output, "after 3\n");
	r = record_for(&res, "/seq?n=*");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->status, 200);
	ck_assert_uint_ge(r->bytes_down, 3000000);
	ck_assert_uint_lt(r->bytes_down, 3000000 + 1024);
	r = record_for(&res, "/short?n=*");
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_ge(r->bytes_down, 2000000);
	ck_assert_uint_lt(r->bytes_down, 2000000 + 1024);
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST


/* review: a server that sends a long body whole and then ends the
 * connection, while the proxy is held up writing the response's head to a
 * slow client: the helper's server leg has read the end of the stream
 * (tls_eof) by the time the PASS comes, and pass_request() aborts the
 * connection instead of refusing: the body is cut short. */
START_TEST(test_pass_after_server_end)
{
	struct ward_config cfg;
	struct ward_result res;

	world_up();
	config(&cfg, true, "api.test");
	run(&cfg, "/usr/bin/python3 -c '\n" PY_TUNNEL
		  "t = tunnel()\n"
		  "q = b\"GET /big?n=1000000 HTTP/1.1\\r\\nHost: api.test:8443\\r\\n\\r\\n\" * 6\n"
		  "q += b\"GET /closing?n=1150000 HTTP/1.1\\r\\nHost: api.test:8443\\r\\n\\r\\n\"\n"
		  "t.sendall(q)\n"
		  "data = []\n"
		  "while True:\n"
		  "    try:\n"
		  "        d = t.recv(16384)\n"
		  "    except (ssl.SSLError, OSError) as e:\n"
		  "        print(\"error\", e); break\n"
		  "    if not d: break\n"
		  "    data.append(d)\n"
		  "    time.sleep(0.004)\n"
		  "b = b\"\".join(data)\n"
		  "print(\"responses\", b.count(b\"HTTP/1.1 200\"))\n"
		  "print(\"last\", len(b.rpartition(b\"HTTP/1.1 200\")[2].partition(b\"\\r\\n\\r\\n\")[2]))\n'", &res);
	dump(&res);
	contains(res.output, "responses 7\n");
	contains(res.output, "last 1150000\n");
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

/* A server that closes a kept-alive connection without saying so (its
 * idle timeout), after a small body and after one passed by ward-tls: the
 * client's connection ends with it, at once rather than at the proxy's
 * 30 s head timeout, so that its next request goes on a fresh connection
 * instead of one with no server behind it. */
START_TEST(test_server_idle_close)
{
	struct ward_config cfg;
	struct ward_result res;

	world_up();
	config(&cfg, true, "api.test");
	run(&cfg, "/usr/bin/python3 -c '\n" PY_TUNNEL
		  "for n in (1000, 2000000):\n"
		  "    t = tunnel()\n"
		  "    t.sendall(b\"GET /quiet?n=%d HTTP/1.1\\r\\nHost: api.test:8443\\r\\n\\r\\n\" % n)\n"
		  "    t.settimeout(12)\n"
		  "    b = b\"\"\n"
		  "    t0 = time.time()\n"
		  "    while True:\n"
		  "        try:\n"
		  "            d = t.recv(65536)\n"
		  "        except (ssl.SSLError, OSError) as e:\n"
		  "            d = b\"\"\n"
		  "        if not d: break\n"
		  "        b += d\n"
		  "    print(\"body\", len(b.partition(b\"\\r\\n\\r\\n\")[2]),\n"
		  "          \"ended in time\" if time.time() - t0 < 10 else \"ended late\")\n'",
	    &res);
	dump(&res);
	contains(res.output, "body 1000 ended in time\n");
	contains(res.output, "body 2000000 ended in time\n");
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

/* git clone over HTTPS (smart HTTP through git http-backend), intercepted. */
START_TEST(test_git_clone)
{
	struct ward_config cfg;
	struct ward_result res;

	world_up();
	config(&cfg, true, "api.test");
	run(&cfg,
	    /* an identity, or git asks DNS for the host's name when it writes the reflog */
	    "cd /tmp && git -c user.name=t -c user.email=t@t clone -q "
	    "https://api.test:8443/git/repo.git r && cat r/README", &res);
	dump(&res);
	contains(res.output, "hello over git\n");
	ck_assert_uint_ge(count(&res, "GET", "api.test", "credential added"), 1);
	ck_assert_uint_ge(count(&res, "POST", "api.test", "credential added"), 1);
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

/* Hostile clients on an intercepted host fail cleanly, each with its
 * reason, and the run ends. */
/* Secrets and request rules hold inside interception as in plain HTTP:
 * the stand-in becomes the real value in the request line, a header and a
 * body to the secret's host; a request no rule allows is refused 403 inside
 * the TLS connection; the records say which rule and which secret; and a
 * CONNECT to a host with request rules is intercepted, never tunnelled. */
START_TEST(test_rules_over_https)
{
	struct ward_config cfg;
	struct ward_result res;
	const struct ward_net_record *get = NULL;

	world_up();
	config(&cfg, true, "api.test");
	setenv("WARD_TEST_SECRET", "real-9d1e4b", 1);
	ck_assert_int_eq(ward_netpolicy_add_secret(&cfg.netpolicy, "WARD_TEST_SECRET=api.test", NULL),
			 0);
	ck_assert_int_eq(ward_netpolicy_add_request(&cfg.netpolicy, "api.test GET,POST /echo", NULL),
			 0);
	run(&cfg,
	    "S=$WARD_TEST_SECRET\n"
	    "echo \"standin ${S%%${S#wardsecret}}\"\n"
	    "curl -sS -H \"X-Key: $S\" \"https://api.test:8443/echo?k=$S\" | grep -e '^GET' -e '^X-Key'\n"
	    "curl -sS -H 'Expect:' --data-binary \"b=$S\" https://api.test:8443/echo | tail -1; echo\n"
	    "curl -sS -H 'Transfer-Encoding: chunked' --data-binary \"c=$S\" "
	    "https://api.test:8443/echo | tail -1; echo\n"
	    "echo rule $(curl -s -o /dev/null -w '%{http_code}' https://api.test:8443/big?n=1)\n"
	    "echo method $(curl -s -o /dev/null -w '%{http_code}' -X DELETE https://api.test:8443/echo)\n"
	    "echo dotdot $(curl -s -o /dev/null -w '%{http_code}' --path-as-is "
	    "https://api.test:8443/x/../echo)\n"
	    "(env; cat /proc/*/environ 2>/dev/null) | grep -c real-9d1e4b\n",
	    &res);
	dump(&res);
	contains(res.output, "standin wardsecret\n");
	contains(res.output, "GET /echo?k=real-9d1e4b HTTP/1.1\n");
	contains(res.output, "X-Key: real-9d1e4b\n");
	contains(res.output, "\nb=real-9d1e4b\n");
	contains(res.output, "\nc=real-9d1e4b\n");
	contains(res.output, "rule 403\n");
	contains(res.output, "method 403\n");
	contains(res.output, "dotdot 403\n");
	contains(res.output, "\n0\n"); /* the real value is nowhere inside */
	for (size_t i = 0; i < res.n_net_records; i++) {
		const struct ward_net_record *r = &res.net_records[i];

		ck_assert(!strstr(r->rule, "real-9d1e4b") && !strstr(r->path, "real-9d1e4b"));
		if (!get && strcmp(r->method, "GET") == 0 && strncmp(r->path, "/echo", 5) == 0)
			get = r;
	}
	ck_assert_ptr_nonnull(get);
	ck_assert_str_eq(get->path, "/echo?k=*");
	ck_assert_str_eq(get->secrets, "WARD_TEST_SECRET");
	ck_assert_str_eq(get->request_rule, "allow-request api.test GET,POST /echo");
	ck_assert_int_eq(get->status, 200);
	ck_assert_uint_eq(count(&res, "GET", "api.test", "matches no --allow-request rule"), 1);
	ck_assert_uint_eq(count(&res, "CONNECT", "api.test", "intercepted"), 6);
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

START_TEST(test_hostile_clients)
{
	static const char probe[] =
		"import os, socket, ssl, sys\n"
		"p = os.environ['HTTPS_PROXY'].split('//')[1].rstrip('/').split(':')\n"
		"def tunnel():\n"
		"    s = socket.create_connection((p[0], int(p[1])))\n"
		"    s.sendall(b'CONNECT api.test:8443 HTTP/1.1\\r\\nHost: api.test:8443\\r\\n\\r\\n')\n"
		"    assert s.recv(100).startswith(b'HTTP/1.1 200')\n"
		"    return s\n"
		"def tls(name='api.test'):\n"
		"    c = ssl.create_default_context()\n"
		"    return c.wrap_socket(tunnel(), server_hostname=name)\n"
		"def status(t, req):\n"
		"    t.sendall(req)\n"
		"    data = b''\n"
		"    while True:\n"
		"        d = t.recv(65536)\n"
		"        if not d: break\n"
		"        data += d\n"
		"    return data.split(b'\\r\\n')[0].decode() + ' | ' + data.split(b'\\n')[-2].decode()\n"
		"s = tunnel(); s.sendall(b'\\x16\\x03\\x01garbage' * 100)\n"
		"print('garbage:', s.recv(100)); s.close()\n"
		"try:\n"
		"    tls('other.test'); print('sni: accepted')\n"
		"except ssl.SSLError as e:\n"
		"    print('sni: refused')\n"
		"print('smuggle:', status(tls(), b'POST /echo HTTP/1.1\\r\\nHost: api.test\\r\\n'\n"
		"      b'Content-Length: 5\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\nGET /x HTTP/1.1\\r\\n\\r\\n'))\n"
		"print('huge:', status(tls(), b'GET /echo HTTP/1.1\\r\\nX-Big: ' + b'a' * 70000 + b'\\r\\n\\r\\n'))\n"
		"print('absolute:', status(tls(), b'GET https://evil.test/ HTTP/1.1\\r\\n\\r\\n'))\n"
		"print('chunk:', status(tls(), b'POST /echo HTTP/1.1\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\n'))\n"
		"def response(t):\n"
		"    data = b''\n"
		"    while b'\\r\\n\\r\\n' not in data:\n"
		"        d = t.recv(65536)\n"
		"        if not d: return data\n"
		"        data += d\n"
		"    head, _, body = data.partition(b'\\r\\n\\r\\n')\n"
		"    n = [int(l.split(b':')[1]) for l in head.split(b'\\r\\n') if l.lower().startswith(b'content-length:')][0]\n"
		"    while len(body) < n:\n"
		"        d = t.recv(65536)\n"
		"        if not d: break\n"
		"        body += d\n"
		"    return head + b'\\r\\n\\r\\n' + body\n"
		/* a bare LF ends the trailers for tls-server.py (as for Go's
		 * net/http): the smuggled POST would take the proxy's next head,
		 * with the credential, as its body, echoed back to the sandbox */
		"t = tls(); t.sendall(b'POST /echo HTTP/1.1\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n'\n"
		"      b'0\\r\\nX: y\\n\\nPOST /echo HTTP/1.1\\r\\nContent-Length: 64\\r\\n\\r\\n')\n"
		"r = response(t)\n"
		"if r.startswith(b'HTTP/1.1 200'):\n"
		"    t.sendall(b'GET /echo HTTP/1.1\\r\\n\\r\\n'); r = response(t)\n"
		"    print('trailer:', 'credential captured' if b's3cret' in r else 'smuggled')\n"
		"else:\n"
		"    print('trailer:', r.split(b'\\r\\n')[0].decode() + ' | ' + r.split(b'\\n')[-2].decode())\n"
		/* a server that answers an "Expect: 100-continue" request before
		 * its body takes the body for its next request: the connection
		 * must end there, or that request of the client's making would get
		 * the proxy's next head, with the credential, as its body */
		"t = tls(); body = b'POST /echo HTTP/1.1\\r\\nContent-Length: 64\\r\\n\\r\\n'\n"
		"t.sendall(b'POST /early HTTP/1.1\\r\\nExpect: 100-continue\\r\\nContent-Length: %d\\r\\n\\r\\n' % len(body))\n"
		"got = b''\n"
		"while b'\\r\\n\\r\\n' not in got: got += t.recv(100)\n"
		"t.sendall(body); r = response(t)\n"
		"try:\n"
		"    t.sendall(b'GET /echo HTTP/1.1\\r\\n\\r\\n'); r = response(t)\n"
		"except OSError:\n"
		"    r = b''\n"
		"print('early:', 'credential captured' if b's3cret' in r else 'closed' if not r else 'kept')\n"
		/* the CONNECT line names the upstream and its credential, not a Host */
		"t = tls(); t.sendall(b'GET /echo HTTP/1.1\\r\\nHost: other.test\\r\\nhost: x\\r\\n\\r\\n')\n"
		"r = response(t).lower(); t.close()\n"
		"print('host:', r.count(b'\\nhost:'), b'host: api.test:8443' in r, b'other.test' in r)\n"
		/* no session of the sandbox's is kept by the proxy */
		"c = ssl.create_default_context()\n"
		"t = c.wrap_socket(tunnel(), server_hostname='api.test')\n"
		"t.sendall(b'GET /echo HTTP/1.1\\r\\n\\r\\n'); response(t); s = t.session; t.close()\n"
		"t = c.wrap_socket(tunnel(), server_hostname='api.test', session=s)\n"
		"print('resumed:', t.session_reused); t.close()\n"
		/* bytes that are not UTF-8, echoed in the refusal's reason */
		"t = tls(); t.sendall(b'GET caf\\xe9 HTTP/1.1\\r\\n\\r\\n')\n"
		"print('latin1:', response(t).split(b'\\r\\n')[0].decode()); t.close()\n"
		"t = tls(); t.sendall(b'GET /echo HTTP/1.1\\r\\nHost: a'); t.close(); print('partial: sent')\n"
		"t = tls(); print('ok:', status(t, b'GET /echo HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n'))\n"
		/* a flood of tunnels that never say hello: 64 at once, the rest
		 * refused; once they close, the slots are free again, and the run
		 * ends on time (the helper's handshakes wait for nobody) */
		"import time\n"
		"held, got = [], {}\n"
		"for i in range(72):\n"
		"    s = socket.create_connection((p[0], int(p[1])))\n"
		"    s.sendall(b'CONNECT api.test:8443 HTTP/1.1\\r\\nHost: api.test:8443\\r\\n\\r\\n')\n"
		"    code = s.recv(100).split(b' ')[1].decode(); got[code] = got.get(code, 0) + 1\n"
		"    held.append(s)\n"
		"print('flood:', 'capped' if got.get('503', 0) >= 1 and got.get('200', 0) >= 56 "
		"and sum(got.values()) == 72 else got)\n"
		"for s in held: s.close()\n"
		"for i in range(200):\n"
		"    s = socket.create_connection((p[0], int(p[1])))\n"
		"    s.sendall(b'CONNECT api.test:8443 HTTP/1.1\\r\\nHost: api.test:8443\\r\\n\\r\\n')\n"
		"    code = s.recv(100).split(b' ')[1].decode(); s.close()\n"
		"    if code == '200': break\n"
		"    time.sleep(0.05)\n"
		"print('after:', code)\n"
		"for i in range(70):\n"
		"    s = socket.create_connection((p[0], int(p[1])))\n"
		"    s.sendall(b'CONNECT api.test:8443 HTTP/1.1\\r\\nHost: api.test:8443\\r\\n\\r\\n')\n"
		"    held.append(s)\n"
		"print('left open: 70')\n";
	struct ward_config cfg;
	struct ward_result res;
	char path[PATH_MAX], cmd[PATH_MAX + 64];

	world_up();
	snprintf(path, sizeof(path), "%.4000s/probe.py", W.dir);
	put_file(path, probe);
	config(&cfg, true, "api.test");
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s'", path);
	run(&cfg, cmd, &res);
	dump(&res);
	ck_assert_msg(res.exit_code == 0, "%s", res.output);
	/* a TLS alert, then the end */
	contains(res.output, "garbage: b'\\x15\\x03");
	contains(res.output, "sni: refused\n");
	contains(res.output, "smuggle: HTTP/1.1 400 Bad Request | ward proxy: both Content-Length "
			     "and Transfer-Encoding\n");
	contains(res.output, "huge: HTTP/1.1 431 Request Header Fields Too Large | ward proxy: "
			     "request head larger than 32768 bytes\n");
	contains(res.output, "absolute: HTTP/1.1 400 Bad Request | ward proxy: an intercepted request "
			     "names a path ('/...'), got 'https://evil.test/'\n");
	contains(res.output, "chunk: HTTP/1.1 400 Bad Request | ward proxy: malformed chunked body\n");
	contains(res.output, "resumed: False\n");
	contains(res.output, "early: closed\n");
	contains(res.output, "host: 1 True False\n");
	contains(res.output, "trailer: HTTP/1.1 400 Bad Request | ward proxy: malformed chunked body\n");
	contains(res.output, "ok: HTTP/1.1 200 OK");
	contains(res.output, "flood: capped\nafter: 200\nleft open: 70\n");
	ck_assert_msg(!res.timed_out, "the run waited for the sandbox's open tunnels");
	ck_assert_int_ge(count(&res, "CONNECT", "api.test", "too many intercepted connections"), 1);
	ck_assert_int_eq(count(&res, "CONNECT", "api.test",
			       "the client asked TLS for 'other.test', not the CONNECT host"), 1);
	/* the garbage, and the flood's tunnels closed without a hello */
	ck_assert_int_ge(count(&res, "CONNECT", "api.test", "TLS handshake with the client failed"),
			 1);
	ck_assert_int_eq(count(&res, "GET", "api.test", "client closed inside a request head"), 1);
	contains(res.output, "latin1: HTTP/1.1 400 Bad Request\n");
	{
		/* every record keeps its rule in the result's JSON, the sandbox's
		 * bytes in it made valid UTF-8 */
		char *js = ward_result_to_json(&res);
		json_t *o = json_loads(js, 0, NULL), *recs = json_object_get(o, "network"), *x;
		size_t i, latin1 = 0;

		ck_assert_uint_eq(json_array_size(recs), res.n_net_records);
		json_array_foreach(recs, i, x) {
			const char *rule = json_string_value(json_object_get(x, "rule"));

			ck_assert_msg(rule, "record %zu without its rule: %s", i,
				      res.net_records[i].rule);
			latin1 += strstr(rule, "got 'caf\xef\xbf\xbd'") != NULL;
		}
		ck_assert_uint_eq(latin1, 1);
		json_decref(o);
		free(js);
	}
	ward_result_release(&res);
	ward_config_release(&cfg);
	world_down();
}
END_TEST

static const char *have_clients(void)
{
	static const char *const tools[] = { "/usr/bin/python3", "/usr/bin/node", "/usr/bin/git",
					     "/usr/bin/curl", "/usr/bin/openssl" };

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (access(tools[i], X_OK) != 0)
			return "python3, node, git, curl and openssl in /usr/bin";
	return NULL;
}

int main(void)
{
	Suite *s = suite_create("https");
	TCase *tc;

	int rc;

	harness_add_probe("tlsclients", have_clients);
	tc = harness_tcase(s, "https", "userns tlsclients");
	tcase_add_test(tc, test_inject_over_https);
	tcase_add_test(tc, test_tunnel_untouched);
	tcase_add_test(tc, test_upstream_verification);
	tcase_add_test(tc, test_ca_key_out_of_reach);
	tcase_add_test(tc, test_git_clone);
	tcase_add_test(tc, test_downloads_whole);
	tcase_add_test(tc, test_hostile_clients);
	tcase_add_test(tc, test_rules_over_https);
	/* alone, for the mutation tier */
	tc = harness_tcase(s, "tls-helper", "userns tlsclients");
	tcase_add_test(tc, test_tls_helper);
	tc = harness_tcase(s, "tls-drain", "userns tlsclients");
	tcase_add_test(tc, test_tls_drain);
	tc = harness_tcase(s, "tls-pass", "userns tlsclients");
	tcase_add_test(tc, test_bodies_passed);
	tc = harness_tcase(s, "tls-pass-eof", "userns tlsclients");
	tcase_add_test(tc, test_pass_after_server_end);
	tcase_add_test(tc, test_server_idle_close);
	if (!getenv("WARD_TEST_LIST_TAGS") && !have_clients())
		make_material();
	rc = harness_main(s);
	if (material)
		harness_rmtree(material);
	return rc;
}
