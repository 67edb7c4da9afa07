/* test-ssh.c — the SSH backend against a real sshd, started here on loopback
 * inside a network namespace made for the test, with host and user keys made
 * for the test: the session's state carried to the remote ward, one
 * connection for many commands, timeouts, and host keys that do not verify
 * refused. Root only (sshd's privilege separation and root-owned config). */
#include "harness.h"
#include "ward/policy.h"
#include "ward/session.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PORT 2222

static char *dir;      /* keys, config, log; world-readable */
static char *workdir;  /* the remote session's workdir */
static char *tmpdir;   /* TMPDIR: where the control directory goes */
static pid_t sshd_pid;
static bool made_run;

static const char *at(const char *rel)
{
	static char buf[4][4096];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, rel);
	return buf[k];
}

static void run_ok(const char *cmd)
{
	int rc = system(cmd);

	ck_assert_msg(rc == 0, "'%s' failed: %d", cmd, rc);
}

static void keygen(const char *name)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "ssh-keygen -q -t ed25519 -N '' -C ward-test -f '%s'", at(name));
	run_ok(cmd);
}

/* Write known_hosts naming host key `key`'s public half for our sshd. */
static void known_hosts(const char *key)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "printf '[127.0.0.1]:%d ' > '%s' && cat '%s.pub' >> '%s'", PORT,
		 at("known_hosts"), at(key), at("known_hosts"));
	run_ok(cmd);
}

static void setup(void)
{
	FILE *f;
	char *log;
	int i, fd;

	/* The namespace is the test's own: sshd listens only inside it. */
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	run_ok("ip link set lo up");
	dir = harness_tmpdir();
	workdir = strdup(at("work"));
	tmpdir = strdup(at("t"));
	ck_assert_int_eq(mkdir(workdir, 0755), 0);
	ck_assert_int_eq(mkdir(tmpdir, 0700), 0);
	keygen("host_key");
	keygen("other_host_key");
	keygen("id");
	{
		char cmd[8192];

		snprintf(cmd, sizeof(cmd), "cp '%s.pub' '%s'", at("id"), at("authorized_keys"));
		run_ok(cmd);
	}
	f = fopen(at("sshd_config"), "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f,
		"Port %d\nListenAddress 127.0.0.1\nHostKey %s\nPidFile none\n"
		"AuthorizedKeysFile %s\nStrictModes no\nPermitRootLogin prohibit-password\n"
		"PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
		"LogLevel VERBOSE\nMaxSessions 100\nMaxStartups 100\n",
		PORT, at("host_key"), at("authorized_keys"));
	fclose(f);
	chmod(at("sshd_config"), 0600);
	/* sshd's privilege separation directory */
	if (mkdir("/run/sshd", 0755) == 0)
		made_run = true;

	log = strdup(at("sshd.log"));
	sshd_pid = fork();
	ck_assert_int_ge(sshd_pid, 0);
	if (sshd_pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(126);
		dup2(fd, 2);
		execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-e", "-f", at("sshd_config"),
		      (char *)NULL);
		_exit(127);
	}
	free(log);
	/* Listening when a connect succeeds. */
	for (i = 0; i < 500; i++) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct timespec pause = { 0, 10 * 1000000 };

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(s);
			break;
		}
		close(s);
		ck_assert_msg(waitpid(sshd_pid, NULL, WNOHANG) == 0, "sshd exited");
		nanosleep(&pause, NULL);
	}
	ck_assert_int_lt(i, 500);
	setenv("TMPDIR", tmpdir, 1);
}

static void teardown(void)
{
	if (sshd_pid > 0) {
		kill(sshd_pid, SIGTERM);
		waitpid(sshd_pid, NULL, 0);
	}
	if (made_run)
		rmdir("/run/sshd");
	harness_rmtree(dir);
	free(dir);
	free(workdir);
	free(tmpdir);
}

/* Entries in the test's TMPDIR (the session's private directory goes there). */
static int tmp_entries(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* "Accepted publickey" lines in sshd's log: one per connection. */
static int connections(void)
{
	FILE *f = fopen(at("sshd.log"), "r");
	char line[4096];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "Accepted publickey") != NULL;
	if (f)
		fclose(f);
	return n;
}

/* A session on "the remote host", chosen by the policy alone. */
static int open_remote(struct ward_session **s, struct ward_error **err)
{
	struct ward_config cfg;
	struct ward_session_options o;
	char *policy, *ward = harness_path("ward");
	int rc;

	ck_assert_int_ge(asprintf(&policy,
				  "{\"session\": {\"timeout\": 20, \"ssh\": {\"host\": \"127.0.0.1\", "
				  "\"port\": %d, \"user\": \"root\", \"identity\": \"%s\", "
				  "\"known_hosts\": \"%s\", \"ward\": \"%s\", \"workdir\": \"%s\"}}}",
				  PORT, at("id"), at("known_hosts"), ward, workdir),
			 0);
	ward_config_init(&cfg);
	ck_assert_msg(ward_policy_apply(policy, strlen(policy), "test", &cfg, err) == 0, "%s",
		      (*err)->message);
	ward_session_options_init(&o);
	ck_assert_int_eq(ward_session_options_from_config(&cfg, &o, err), 0);
	rc = ward_session_new(&cfg, &o, s, err);
	ward_session_options_release(&o);
	ward_config_release(&cfg);
	free(policy);
	free(ward);
	return rc;
}

static struct ward_session_result run(struct ward_session *s, const char *cmd, int timeout)
{
	struct ward_session_exec_options eo = { .timeout = timeout };
	struct ward_session_result r;
	struct ward_error *err = NULL;

	ck_assert_msg(ward_session_exec(s, cmd, &eo, &r, &err) == 0, "exec: %s",
		      err ? err->message : "");
	return r;
}

struct conc {
	struct ward_session *s;
	const char *cmd;
	struct ward_session_result r;
};

static void *conc_run(void *arg)
{
	struct conc *c = arg;
	struct ward_session_exec_options eo = { .concurrent = true };
	struct ward_error *err = NULL;

	if (ward_session_exec(c->s, c->cmd, &eo, &c->r, &err) < 0)
		ward_error_free(err);
	return NULL;
}

START_TEST(test_remote_session)
{
	struct ward_session *s = NULL;
	struct ward_session_result r;
	struct ward_error *err = NULL;
	struct stat st;
	char *p, marker[64];

	known_hosts("host_key");
	ck_assert_msg(open_remote(&s, &err) == 0, "session: %s", err ? err->message : "");
	ck_assert_str_eq(ward_session_backend(s), "ssh");
	/* the control socket's directory: private, ours */
	ck_assert_int_eq(tmp_entries(), 1);
	{
		DIR *d = opendir(tmpdir);
		struct dirent *e;
		char path[4200];

		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
		closedir(d);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0700);
	}

	/* the session's state goes with each command */
	ck_assert_int_eq(ward_session_setenv(s, "WHO", "remote world", &err), 0);
	ck_assert_int_eq(ward_session_alias_set(s, "greet", "echo hello", &err), 0);
	r = run(s, "greet \"$WHO\"; mkdir -p sub/dir && cd sub", 0);
	ck_assert_msg(r.run.exit_code == 0, "%s %s", r.run.output,
		      r.run.error ? r.run.error->message : "");
	ck_assert_str_eq(r.run.output, "hello remote world\n");
	ck_assert(r.run.sandboxed); /* by the remote ward */
	ward_session_result_release(&r);
	p = ward_session_pwd(s);
	ck_assert_str_eq(p + strlen(p) - 4, "/sub");
	free(p);
	r = run(s, "cd dir && pwd", 0);
	ck_assert_str_eq(r.run.output + strlen(r.run.output) - 9, "/sub/dir\n");
	ward_session_result_release(&r);
	r = run(s, "cd - >/dev/null; basename \"$PWD\"", 0);
	ck_assert_str_eq(r.run.output, "sub\n");
	ward_session_result_release(&r);
	/* leaving what the remote policy allows is refused there */
	r = run(s, "cd /etc", 0);
	ck_assert_str_eq(r.cwd_refused, "/etc");
	ck_assert_str_eq(r.cwd + strlen(r.cwd) - 4, "/sub");
	ward_session_result_release(&r);
	/* refused here, by the front door, before anything is sent */
	r = run(s, "sudo id", 0);
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_NOT_AUTHORIZED);
	ward_session_result_release(&r);

	/* a timeout: the remote ward kills everything, the output so far comes back */
	snprintf(marker, sizeof(marker), "%s", harness_sleep_marker());
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "echo partial; setsid sleep %s1 & sleep %s2", marker,
			 marker);
		r = run(s, cmd, 1);
	}
	ck_assert_int_eq(r.run.error->kind, WARD_ERR_TIMEOUT);
	ck_assert_str_eq(r.run.output, "partial\n");
	ward_session_result_release(&r);
	ck_assert_msg(!harness_cmdline_alive(NULL, marker), "a process of the timed-out command survived");

	/* two at once: each its own channel on the one connection, own output */
	{
		pthread_t t;
		/* each waits for the other's mark: one after the other, the first
		 * would wait until its timeout (30 s) and fail */
		struct conc c = { .s = s, .cmd = "touch rv-one; until [ -e rv-two ]; do sleep 0.05; "
						 "done; echo one" };

		ck_assert_int_eq(pthread_create(&t, NULL, conc_run, &c), 0);
		{
			struct ward_session_exec_options eo = { .concurrent = true };

			ck_assert_int_eq(ward_session_exec(s, "touch rv-two; until [ -e rv-one ]; do "
							      "sleep 0.05; done; echo two",
							   &eo, &r, &err),
					 0);
		}
		pthread_join(t, NULL);
		ck_assert_str_eq(r.run.output, "two\n");
		ck_assert_str_eq(c.r.run.output, "one\n");
		ward_session_result_release(&r);
		ward_session_result_release(&c.r);
	}

	/* every command went over the one connection */
	ck_assert_int_eq(connections(), 1);
	ward_session_free(s);
	/* nothing left: no directory, no socket */
	ck_assert_int_eq(tmp_entries(), 0);
}
END_TEST

START_TEST(test_changed_host_key)
{
	struct ward_session *s = NULL;
	struct ward_error *err = NULL;

	/* known_hosts has another key for this host: refused, nothing sent */
	known_hosts("other_host_key");
	ck_assert_int_eq(open_remote(&s, &err), -1);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err->message, "REMOTE HOST IDENTIFICATION HAS CHANGED") ||
			      strstr(err->message, "Host key verification failed"),
		      "%s", err->message);
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(tmp_entries(), 0);
	ck_assert_int_eq(connections(), 0);

	/* an unknown host is refused too: no accept-anything default */
	run_ok("true");
	{
		FILE *f = fopen(at("known_hosts"), "w");

		fclose(f);
	}
	ck_assert_int_eq(open_remote(&s, &err), -1);
	ck_assert_msg(strstr(err->message, "Host key verification failed"), "%s", err->message);
	ward_error_free(err);
	ck_assert_int_eq(tmp_entries(), 0);
	ck_assert_int_eq(connections(), 0);
}
END_TEST

static const char *probe_sshd(void)
{
	if (access("/usr/sbin/sshd", X_OK) < 0)
		return "no /usr/sbin/sshd (openssh-server)";
	if (system("command -v ssh >/dev/null && command -v ssh-keygen >/dev/null") != 0)
		return "no ssh or ssh-keygen (openssh-client)";
	return NULL;
}

int main(void)
{
	Suite *s = suite_create("ssh");
	TCase *tc;

	harness_add_probe("sshd", probe_sshd);
	tc = harness_tcase(s, "ssh", "root userns sshd");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_remote_session);
	tcase_add_test(tc, test_changed_host_key);
	return harness_main(s);
}
