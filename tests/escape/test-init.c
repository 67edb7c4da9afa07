/* test-init.c — the sandbox's PID 1 is a copy of the host process. Nothing of
 * that process (environment, arguments, memory, descriptors) may be reachable
 * from inside, by any route, whether ward is the CLI or a library in someone's
 * program, in a fresh sandbox or a session's; and what init reports to the
 * supervisor cannot be forged by the command.
 *
 * The probe (tests/helpers/proc1-probe.c) tries /proc/1/{cmdline,environ,
 * maps,auxv,syscall,mem,fd/N,cwd,root,exe}, process_vm_readv, ptrace, and
 * pidfd_getfd on every descriptor number of PID 1, writing a forged
 * ExecutionFailed record to everything it gets. The front door is off
 * (harness_fences_policy_opt) and the seccomp profile is the default one,
 * which allows pidfd_getfd: the kernel-side protection is what is tested. */
#include "harness.h"
#include "runtime/core/core-internal.h"
#include "ward/policy.h"
#include "ward/sandbox.h"
#include "ward/session.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char *workdir, *probe, mark[64];

static void setup(void)
{
	workdir = harness_tmpdir();
	probe = harness_path("tests/helpers/proc1-probe");
	snprintf(mark, sizeof(mark), "WARD-HOST-SECRET-%d-%ld", (int)getpid(), (long)random());
}

static void teardown(void)
{
	harness_rmtree(workdir);
	free(workdir);
	free(probe);
}

/* Every line of the probe's output says the way is closed: an errno name,
 * or for cmdline a read that found nothing of the host. In a session (fd3)
 * the command's fd 3 is the session's own channel, and its parent, the
 * leader forked from init, must have been probed too. */
/* Whether a session's command still holds fd 3: with /bin/sh it does; a
 * bash session gives it to none of the command's programs (3>&-). */
static bool fd3_held = true;

static void assert_closed(const char *out, const char *err_text, bool fd3)
{
	bool want_ppid = fd3;
	char *copy = strdup(out), *line, *save = NULL;
	int n = 0;

	ck_assert_msg(!strstr(out, mark), "the secret got out:\n%s", out);
	ck_assert_msg(!strstr(err_text ? err_text : "", "FORGED-BY-COMMAND"),
		      "a forged record was believed: %s", err_text);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *r = strchr(line, ' ');

		ck_assert_ptr_nonnull(r);
		r++;
		n++;
		if (strncmp(line, "ppid-", 5) == 0)
			line += 5;
		if (strncmp(line, "cmdline ", 8) == 0)
			ck_assert_msg(strcmp(r, "LEAK") != 0, "%s", line);
		else if (strncmp(line, "own_fds ", 8) == 0)
			ck_assert_msg(strcmp(r, fd3 && fd3_held ? "1" : "0") == 0,
				      "the command holds descriptors: %s", line);
		else if (strncmp(line, "own_fd ", 7) == 0)
			ck_assert_msg(fd3 && strncmp(r, "3 pipe:", 7) == 0,
				      "the command holds a descriptor: %s", line);
		else if (strncmp(line, "forged ", 7) == 0 || strncmp(line, "pidfd_open ", 11) == 0)
			continue;
		else
			ck_assert_msg(r[0] == 'E', "open: %s\n%s", line, out);
	}
	ck_assert_int_ge(n, 18);
	ck_assert_msg(!want_ppid || strstr(out, "ppid-pidfd_getfd"), "the leader was not probed");
	free(copy);
}

static void config(struct ward_config *cfg)
{
	struct ward_error *err = NULL;
	static const char policy[] = "{\"validators\": {\"enabled\": false}, "
				     "\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}}";

	ward_config_init(cfg);
	ck_assert_int_eq(ward_policy_apply(policy, sizeof(policy) - 1, "test", cfg, &err), 0);
	ck_assert_int_eq(ward_config_set_workdir(cfg, workdir, NULL), 0);
	cfg->timeout = 60;
	ck_assert_int_eq(ward_config_add_mount(cfg, WARD_MOUNT_RO_BIND, probe, "/probe", NULL), 0);
}

/* The CLI: the secret in ward's environment and in its arguments (an
 * --inject-header value the docs say never enters the sandbox). With the
 * default filter, with ptrace and process_vm_readv allowed by it
 * (--allow-ptrace), and with no filter at all: the kernel's own check is
 * what closes the way, not seccomp. */
START_TEST(test_cli)
{
	static const char *const fence[][2] = { { "--seccomp", "default" },
						 { "--allow-ptrace", "--seccomp=strict" },
						 { "--seccomp", "off" } };
	char *ward = harness_path("ward"), *out = NULL, *err = NULL, hdr[128], env[128];
	char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(),
			 (char *)fence[_i][0], (char *)fence[_i][1],
			 (char *)"--inject-header", hdr, (char *)"-C", workdir, (char *)"--ro-bind",
			 probe, (char *)"/probe", (char *)"--", (char *)"/probe", mark, NULL };
	int status;

	snprintf(hdr, sizeof(hdr), "example.invalid=X-Token: %s", mark);
	snprintf(env, sizeof(env), "WARD_TEST_TOKEN=%s", mark);
	putenv(env);
	status = harness_capture(argv, &out, &err);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s%s", status,
		      out, err);
	assert_closed(out, err, false);
	free(out);
	free(err);
	free(ward);
}
END_TEST

/* The library: a program embedding libward keeps a secret in its heap and
 * its environment; the probe is told exactly where the heap copy lies. */
START_TEST(test_library)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *heap = malloc(4096), addr[32], len[24], env[128];
	char *argv[] = { (char *)"/probe", mark, addr, len, NULL };

	snprintf(heap, 4096, "token=%s", mark);
	snprintf(addr, sizeof(addr), "%lx", (unsigned long)(uintptr_t)heap);
	snprintf(len, sizeof(len), "%zu", strlen(heap));
	snprintf(env, sizeof(env), "WARD_TEST_TOKEN=%s", mark);
	putenv(env);
	config(&cfg);
	ck_assert_msg(ward_run(&cfg, argv, &res, &err) == 0, "%s", err ? err->message : "");
	ck_assert_msg(!res.error, "%s\n%s", res.error ? res.error->message : "", res.output);
	ck_assert_int_eq(res.exit_code, 0);
	assert_closed(res.output, res.stderr_text, false);
	ward_result_release(&res);
	ward_config_release(&cfg);
	free(heap);
}
END_TEST

/* A session's shared sandbox: its init and the leader it forks for each
 * command are copies of the host process too. */
START_TEST(test_session_shared)
{
	struct ward_config cfg;
	struct ward_session_options opt;
	struct ward_session *s = NULL;
	struct ward_session_result r;
	struct ward_error *err = NULL;
	char *heap = malloc(4096), cmd[256];

	snprintf(heap, 4096, "token=%s", mark);
	/* exec: the probe's parent is then the leader, which it probes too */
	snprintf(cmd, sizeof(cmd), "exec /probe %s %lx %zu", mark, (unsigned long)(uintptr_t)heap,
		 strlen(heap));
	config(&cfg);
	ward_session_options_init(&opt);
	opt.isolation = WARD_SESSION_SHARED;
	ck_assert_msg(ward_session_new(&cfg, &opt, &s, &err) == 0, "%s", err ? err->message : "");
	fd3_held = strcmp(ward_session_shell(s), "/bin/bash") != 0;
	ck_assert_msg(ward_session_exec(s, cmd, NULL, &r, &err) == 0, "%s",
		      err ? err->message : "");
	ck_assert_msg(!r.run.error, "%s", r.run.error ? r.run.error->message : "");
	ck_assert_int_eq(r.run.exit_code, 0);
	/* fd 3 is the session's own channel (a bash session closes it to the
	 * command's programs): the shell tells where it ended */
	assert_closed(r.run.output, r.run.stderr_text, true);
	ward_session_result_release(&r);
	ward_session_free(s);
	ward_session_options_release(&opt);
	ward_config_release(&cfg);
	free(heap);
}
END_TEST

/* The supervisor believes only init's records: one written by anybody else
 * into the report pipe (a forged ExecutionFailed, then a forged exit status)
 * is ignored, init's own exit record is taken. */
START_TEST(test_forged_record_ignored)
{
	struct supervisor sv;
	struct ward_error *err = NULL;
	struct report forged = { 0 }, genuine = { 0 };
	int rep[2], pidfd;
	pid_t pid;

	ck_assert_int_eq(pipe(rep), 0);
	genuine.nonce = 0x5eed5eed12345678ULL;
	genuine.type = REPORT_EXIT;
	genuine.status = 7 << 8;
	forged.nonce = 0;
	forged.type = REPORT_ERROR;
	snprintf(forged.err.message, sizeof(forged.err.message), "FORGED-BY-COMMAND");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct report fake_exit = forged;

		fake_exit.type = REPORT_EXIT;
		fake_exit.status = 0;
		close(rep[0]);
		if (write(rep[1], &forged, sizeof(forged)) != sizeof(forged) ||
		    write(rep[1], &fake_exit, sizeof(fake_exit)) != sizeof(fake_exit) ||
		    write(rep[1], &genuine, sizeof(genuine)) != sizeof(genuine))
			_exit(1);
		_exit(0);
	}
	close(rep[1]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	ck_assert_int_ge(pidfd, 0);
	memset(&sv, 0, sizeof(sv));
	sv.pidfd = pidfd;
	sv.pid = pid;
	sv.out_fd = sv.err_fd = -1;
	sv.pty_fd = sv.pty_sink = sv.in_src = sv.in_dst = sv.tty_fd = sv.cancel_fd = -1;
	sv.report_fd = rep[0];
	sv.report_nonce = genuine.nonce;
	sv.deadline_ns = 0x7fffffffffffffffLL;
	ck_assert_int_eq(ward_supervise(&sv, &err), 0);
	ck_assert_msg(!sv.have_error, "forged error believed: %s", sv.child_error.message);
	ck_assert(sv.have_exit);
	ck_assert_int_eq(sv.cmd_status, 7 << 8);
	close(pidfd);
}
END_TEST

/* --no-shell: ward opens the redirections itself, in init's vfork child,
 * before the program runs; that child holds a copy of init's descriptors
 * (the report pipe's write end, the life pipe). A redirection naming one of
 * them — "> /proc/self/fd/N" reopens it, ">&N" copies it — would hand it to
 * the command, which could then write into the report pipe: a few bytes
 * shift init's record so that it is lost, and the result says
 * ExecutionFailed instead of the command's status. Every number up to 50
 * reopened, up to 9 copied; then a program exiting 7, whose status must
 * come through. */
START_TEST(test_noshell_redirect_fds)
{
	char *ward = harness_path("ward"), *out = NULL, *err = NULL, *cmd = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&cmd, &len);
	char *argv[] = { ward, (char *)"run", (char *)harness_fences_policy_opt(),
			 (char *)"--no-shell", (char *)"--json", (char *)"-C", workdir,
			 NULL };
	char *req;
	json_t *r;
	int fd;

	ck_assert_ptr_nonnull(m);
	for (fd = 3; fd < 51; fd++) /* a chain holds 64 commands */
		fprintf(m, "printf abc > /proc/self/fd/%d ; ", fd);
	for (fd = 3; fd < 10; fd++) /* the parser's: one digit */
		fprintf(m, "printf abc 1>&%d ; ", fd);
	fprintf(m, "sh -c 'exit 7'");
	fclose(m);
	r = json_pack("{s:s}", "command", cmd);
	req = json_dumps(r, 0);
	json_decref(r);
	harness_capture_input(argv, req, &out, &err);
	r = json_loads(out, 0, NULL);
	ck_assert_msg(r != NULL, "not JSON: %s%s", out, err);
	ck_assert_msg(json_is_null(json_object_get(r, "error")) &&
			      json_integer_value(json_object_get(r, "exit_code")) == 7,
		      "the command reached init's descriptors: exit code %lld, %s",
		      (long long)json_integer_value(json_object_get(r, "exit_code")),
		      json_string_value(json_object_get(json_object_get(r, "error"), "message")));
	json_decref(r);
	free(out);
	free(err);
	free(req);
	free(cmd);
	free(ward);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("init");
	TCase *tc = harness_tcase(s, "proc1", "userns");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_cli, 0, 3);
	tcase_add_test(tc, test_library);
	tcase_add_test(tc, test_session_shared);
	tcase_add_test(tc, test_noshell_redirect_fds);
	tc = harness_tcase(s, "report", NULL);
	tcase_add_test(tc, test_forged_record_ignored);
	return harness_main(s);
}
