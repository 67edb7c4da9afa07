/* session-ssh.c — a session whose commands run on another host, through that
 * host's own ward (so they are sandboxed there by its policy), over the
 * OpenSSH client.
 *
 * One master connection per session (ControlMaster, its socket in a private
 * 0700 directory made here and removed at close); each command is a new
 * channel on it — no new handshake — running `ward serve` on the remote host,
 * given two requests: session.create with this session's environment and
 * directory, then session.exec. The remote ward enforces the timeout and kills
 * the command's processes there; if no answer comes in time plus a margin,
 * the channel's ssh is killed, which ends the remote serve's input and with it
 * the remote session. The state (environment, aliases, history, directory)
 * stays here; the remote session only runs one command.
 *
 * Host keys are verified: StrictHostKeyChecking=yes against the configured
 * known_hosts file only (no global file, no accept-new), BatchMode (no
 * prompts), IdentitiesOnly, and -F /dev/null so that no ssh_config of the
 * user weakens any of it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/cli-internal.h"
#include "runtime/session-internal.h"
#include "runtime/util-internal.h"

/* How long the master may take to connect and authenticate. */
#define CONNECT_TIMEOUT_S 20
/* Beyond a command's timeout: the remote ward's own kill, the round trip. */
#define MARGIN_S 15
/* A remote answer larger than this is refused (the output is ≤ 64 KiB). */
#define ANSWER_MAX (4 * 1024 * 1024)

struct ssh_state {
	char dir[64];     /* the private directory */
	char ctl[96];     /* its control socket */
	pid_t master;
	int master_err;   /* the master's stderr, for why it failed */
};

/* The ssh command line common to the master and each channel. */
static char **ssh_argv(const struct ward_session *s, const struct ssh_state *st, bool master,
		       const char *remote)
{
	const struct ward_session_ssh *o = &s->opt.ssh;
	char **v = calloc(48, sizeof(*v));
	char port[16];
	int n = 0;

#define ADD(x)                                                                                     \
	do {                                                                                       \
		if (!(v[n++] = strdup(x)))                                                         \
			goto oom;                                                                  \
	} while (0)
#define OPT(x)                                                                                     \
	do {                                                                                       \
		ADD("-o");                                                                         \
		ADD(x);                                                                            \
	} while (0)
	if (!v)
		return NULL;
	ADD(o->ssh ? o->ssh : "ssh");
	ADD("-F");
	ADD("/dev/null");
	OPT("BatchMode=yes");
	OPT("StrictHostKeyChecking=yes");
	OPT("GlobalKnownHostsFile=/dev/null");
	OPT("CheckHostIP=no");
	OPT("UpdateHostKeys=no");
	{
		char *kh;

		if (asprintf(&kh, "UserKnownHostsFile=%s", o->known_hosts) < 0)
			goto oom;
		if (!(v[n++] = strdup("-o"))) {
			free(kh);
			goto oom;
		}
		v[n++] = kh;
	}
	if (o->identity) {
		ADD("-i");
		ADD(o->identity);
		OPT("IdentitiesOnly=yes");
	}
	OPT("PasswordAuthentication=no");
	OPT("KbdInteractiveAuthentication=no");
	OPT("ServerAliveInterval=15");
	{
		char buf[128];

		snprintf(buf, sizeof(buf), "ConnectTimeout=%d", CONNECT_TIMEOUT_S);
		OPT(buf);
		snprintf(buf, sizeof(buf), "ControlPath=%s", st->ctl);
		OPT(buf);
	}
	OPT(master ? "ControlMaster=yes" : "ControlMaster=no");
	if (master) {
		OPT("ControlPersist=no");
		ADD("-N");
	} else {
		ADD("-T");
	}
	snprintf(port, sizeof(port), "%d", o->port ? o->port : 22);
	ADD("-p");
	ADD(port);
	if (o->user) {
		ADD("-l");
		ADD(o->user);
	}
	ADD("--");
	ADD(o->host);
	if (remote)
		ADD(remote);
	v[n] = NULL;
	return v;
oom:
	while (n > 0)
		free(v[--n]);
	free(v);
	return NULL;
#undef ADD
#undef OPT
}

static void argv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Start argv with the given fds as stdin/stdout/stderr (-1: /dev/null). The
 * child dies with the calling thread (PR_SET_PDEATHSIG): no ssh outlives the
 * session's host. */
static pid_t spawn(char **argv, int in, int out, int errfd)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	{
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(in >= 0 ? in : null, 0) < 0 || dup2(out >= 0 ? out : null, 1) < 0 ||
		    dup2(errfd >= 0 ? errfd : null, 2) < 0)
			_exit(125);
	}
	setsid(); /* no terminal: ssh must not prompt anyone */
	execvp(argv[0], argv);
	dprintf(2, "exec '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* What an ssh wrote on stderr, trimmed, for a message. */
static void read_reason(int fd, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
		buf[--got] = '\0';
	for (n = 0; (size_t)n < got; n++)
		if (buf[n] == '\n' || buf[n] == '\r')
			buf[n] = ' ';
}

static void cleanup(struct ssh_state *st)
{
	if (st->master > 0) {
		int status;

		kill(st->master, SIGTERM);
		waitpid(st->master, &status, 0);
		st->master = 0;
	}
	if (st->master_err >= 0)
		close(st->master_err);
	st->master_err = -1;
	unlink(st->ctl);
	if (st->dir[0])
		rmdir(st->dir);
	st->dir[0] = '\0';
}

int ward_session_ssh_open(struct ward_session *s, struct ward_error **err)
{
	const struct ward_session_ssh *o = &s->opt.ssh;
	struct ssh_state *st;
	char **argv;
	int ep[2];
	long long deadline;
	char reason[1024];

	if (!o->known_hosts)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "ssh: a known_hosts file is required: host keys are "
					    "always verified");
	if (access(o->known_hosts, R_OK) < 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
					    "ssh: known_hosts '%s'", o->known_hosts);
	if (o->identity && access(o->identity, R_OK) < 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
					    "ssh: identity '%s'", o->identity);
	if (o->host[0] == '-' || strpbrk(o->host, " \t\n'\"") ||
	    (o->user && (o->user[0] == '-' || strpbrk(o->user, " \t\n'\"@"))))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "ssh: host or user '%s' is not allowed", o->host);
	st = calloc(1, sizeof(*st));
	if (!st)
		return ward_error_make(err, ENOMEM, "ssh");
	st->master_err = -1;
	{
		const char *tmp = getenv("TMPDIR");

		/* Short: a unix socket path is at most 107 bytes. */
		snprintf(st->dir, sizeof(st->dir), "%s/ward-ssh.XXXXXX",
			 tmp && *tmp && strlen(tmp) < 24 ? tmp : "/tmp");
	}
	if (!mkdtemp(st->dir)) { /* 0700 */
		int e = errno;

		free(st);
		return ward_error_make(err, e, "ssh: make a private directory");
	}
	snprintf(st->ctl, sizeof(st->ctl), "%s/ctl", st->dir);
	argv = ssh_argv(s, st, true, NULL);
	if (!argv || pipe2(ep, O_CLOEXEC) < 0) {
		argv_free(argv);
		cleanup(st);
		free(st);
		return ward_error_make(err, ENOMEM, "ssh");
	}
	st->master = spawn(argv, -1, -1, ep[1]);
	argv_free(argv);
	close(ep[1]);
	st->master_err = ep[0];
	if (st->master < 0) {
		st->master = 0;
		cleanup(st);
		free(st);
		return ward_error_make(err, errno, "ssh: fork");
	}
	/* Ready when the control socket is there; failed when the master ends. */
	deadline = ward_now_ns() + (CONNECT_TIMEOUT_S + 5) * 1000000000LL;
	for (;;) {
		struct stat sb;
		int status;
		struct timespec pause = { 0, 10 * 1000000 };

		if (stat(st->ctl, &sb) == 0 && S_ISSOCK(sb.st_mode))
			break;
		if (waitpid(st->master, &status, WNOHANG) == st->master) {
			st->master = 0;
			read_reason(st->master_err, reason, sizeof(reason));
			cleanup(st);
			free(st);
			return ward_error_make(err, 0, "ssh to '%s' failed: %s", o->host,
					       reason[0] ? reason : "the connection ended");
		}
		if (ward_now_ns() > deadline) {
			cleanup(st);
			free(st);
			return ward_error_make(err, ETIMEDOUT, "ssh to '%s'", o->host);
		}
		nanosleep(&pause, NULL);
	}
	s->backend_data = st;
	return 0;
}

static void ssh_close(struct ward_session *s)
{
	struct ssh_state *st = s->backend_data;

	if (!st)
		return;
	cleanup(st);
	free(st);
	s->backend_data = NULL;
}

/* Read one line from fd before the deadline: malloc'd, NULL on end of
 * file, error or time out (*timed_out set for the last). */
struct reader {
	int fd;
	char *buf;
	size_t len, cap;
};

static char *read_line(struct reader *r, long long deadline, bool *timed_out)
{
	for (;;) {
		char *nl = r->buf ? memchr(r->buf, '\n', r->len) : NULL;
		struct pollfd pf = { .fd = r->fd, .events = POLLIN };
		long long left = deadline - ward_now_ns();
		ssize_t n;

		if (nl) {
			char *line = strndup(r->buf, (size_t)(nl - r->buf));

			memmove(r->buf, nl + 1, r->len - (size_t)(nl + 1 - r->buf));
			r->len -= (size_t)(nl + 1 - r->buf);
			return line;
		}
		if (left <= 0) {
			*timed_out = true;
			return NULL;
		}
		if (poll(&pf, 1, (int)(left / 1000000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (!pf.revents)
			continue;
		if (r->len == r->cap) {
			char *g;

			if (r->cap >= ANSWER_MAX)
				return NULL;
			g = realloc(r->buf, r->cap ? r->cap * 2 : 65536);
			if (!g)
				return NULL;
			r->buf = g;
			r->cap = r->cap ? r->cap * 2 : 65536;
		}
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		r->len += (size_t)n;
	}
}

static enum ward_error_kind kind_named(const char *name)
{
	static const enum ward_error_kind kinds[] = {
		WARD_ERR_EXECUTION_FAILED, WARD_ERR_INVALID_PARAMETERS, WARD_ERR_NOT_AUTHORIZED,
		WARD_ERR_APPROVAL_REQUIRED, WARD_ERR_RATE_LIMITED,	WARD_ERR_TIMEOUT,
	};
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(kinds); i++)
		if (strcmp(ward_error_kind_name(kinds[i]), name) == 0)
			return kinds[i];
	return WARD_ERR_EXECUTION_FAILED;
}

static char *dup_text(json_t *v, size_t *len)
{
	const char *s = json_string_value(v);
	size_t n = s ? json_string_length(v) : 0;
	char *out = malloc(n + 1);

	if (out) {
		memcpy(out, s ? s : "", n);
		out[n] = '\0';
	}
	if (len)
		*len = n;
	return out;
}

/* The remote ward's result object into res and out. */
static void take_result(json_t *r, struct ward_result *res, struct session_outcome *out)
{
	json_t *e = json_object_get(r, "error"), *ns;
	static const char *const names[] = { "user", "mount", "pid", "net", "ipc", "uts", "cgroup" };
	size_t i, k;

	res->output = dup_text(json_object_get(r, "output"), &res->output_len);
	res->stderr_text = dup_text(json_object_get(r, "stderr"), &res->stderr_len);
	res->exit_code = (int)json_integer_value(json_object_get(r, "exit_code"));
	res->sandboxed = json_is_true(json_object_get(r, "sandboxed"));
	res->timed_out = json_is_true(json_object_get(r, "timed_out"));
	res->signal = (int)json_integer_value(json_object_get(r, "signal"));
	res->duration_ms = json_integer_value(json_object_get(r, "duration_ms"));
	res->truncated_bytes = (uint64_t)json_integer_value(json_object_get(r, "truncated_bytes"));
	res->stdout_bytes = (uint64_t)json_integer_value(json_object_get(r, "stdout_bytes"));
	res->stderr_bytes = (uint64_t)json_integer_value(json_object_get(r, "stderr_bytes"));
	res->view = json_is_true(json_object_get(json_object_get(r, "layers"), "view"));
	ns = json_object_get(json_object_get(r, "layers"), "namespaces");
	for (i = 0; i < json_array_size(ns); i++)
		for (k = 0; k < ARRAY_SIZE(names); k++)
			if (json_string_value(json_array_get(ns, i)) &&
			    strcmp(json_string_value(json_array_get(ns, i)), names[k]) == 0)
				res->namespaces |= 1u << k;
	res->started = res->sandboxed || res->exit_code != WARD_EXIT_OWN_ERROR;
	if (json_is_object(e)) {
		const char *msg = json_string_value(json_object_get(e, "message"));
		const char *rule = json_string_value(json_object_get(e, "rule"));

		ward_error_make_kind(&res->error,
				     kind_named(json_string_value(json_object_get(e, "kind"))), 0,
				     "%s", msg ? msg : "remote error");
		if (res->error && rule)
			ward_error_set_rule(res->error, rule);
	}
	if (json_is_string(json_object_get(r, "cwd_refused"))) {
		out->cwd = strdup(json_string_value(json_object_get(r, "cwd_refused")));
		out->refused = strdup(out->cwd);
	} else if (json_is_string(json_object_get(r, "cwd"))) {
		out->cwd = strdup(json_string_value(json_object_get(r, "cwd")));
	}
	out->checked = true;
}

static int send_line(int fd, const char *s)
{
	size_t len = strlen(s) + 1, off = 0;
	char *buf = malloc(len);

	if (!buf)
		return -1;
	memcpy(buf, s, len - 1);
	buf[len - 1] = '\n';
	while (off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -1;
		}
		off += (size_t)n;
	}
	free(buf);
	return 0;
}

static int ssh_exec(struct ward_session *s, const struct session_job *job, struct ward_result *res,
		    struct session_outcome *out, struct ward_error **err)
{
	struct ssh_state *st = s->backend_data;
	_cleanup_free_ char *qward = ward_shell_quote(s->opt.ssh.ward ? s->opt.ssh.ward : "ward");
	_cleanup_free_ char *remote = NULL, *create = NULL, *exec = NULL, *line = NULL;
	struct reader rd = { .fd = -1 };
	json_t *env = json_object(), *resp = NULL;
	char reason[1024] = "";
	char **argv = NULL;
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 }, ep[2] = { -1, -1 }, status, rc = 0;
	long long start = ward_now_ns(), deadline;
	bool timed_out = false;
	pid_t pid = -1;
	size_t i;

	memset(res, 0, sizeof(*res));
	if (!qward || asprintf(&remote, "%s serve", qward) < 0) {
		remote = NULL;
		json_decref(env);
		return ward_error_make(err, ENOMEM, "ssh");
	}
	for (i = 0; job->env && job->env[i]; i++) {
		const char *eq = strchr(job->env[i], '=');

		if (eq) {
			char *k = strndup(job->env[i], (size_t)(eq - job->env[i]));

			if (k)
				json_object_set_new(env, k, json_string(eq + 1));
			free(k);
		}
	}
	{
		json_t *c = json_pack("{s:s, s:i, s:s, s:{s:s, s:o, s:i, s:s, s:s}}", "jsonrpc",
				      "2.0", "id", 1, "method", "session.create", "params",
				      "workdir", s->workdir, "env", env, "timeout", job->timeout,
				      "cwd", job->cwd, "oldpwd", job->oldpwd ? job->oldpwd : job->cwd);
		json_t *x = json_pack("{s:s, s:i, s:s, s:{s:s, s:s, s:i}}", "jsonrpc", "2.0", "id",
				      2, "method", "session.exec", "params", "session", "s1",
				      "command", job->command, "timeout", job->timeout);

		create = c ? json_dumps(c, JSON_COMPACT) : NULL;
		exec = x ? json_dumps(x, JSON_COMPACT) : NULL;
		json_decref(c);
		json_decref(x);
	}
	argv = ssh_argv(s, st, false, remote);
	if (!create || !exec || !argv) {
		argv_free(argv);
		return ward_error_make(err, ENOMEM, "ssh");
	}
	/* ssh's stdin is a socket, written with MSG_NOSIGNAL: an ssh that died
	 * must not take the host process with a SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0 ||
	    pipe2(outp, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		rc = ward_error_make(err, errno, "pipe");
		goto out;
	}
	pid = spawn(argv, in[0], outp[1], ep[1]);
	if (pid < 0) {
		rc = ward_error_make(err, errno, "fork");
		goto out;
	}
	close(in[0]);
	close(outp[1]);
	close(ep[1]);
	in[0] = outp[1] = ep[1] = -1;
	rd.fd = outp[0];
	deadline = start + (long long)(job->timeout + MARGIN_S) * 1000000000LL;

	/* The session first; its id is s1 in a fresh server, but the answer is
	 * read before the command is sent so that a refusal there is seen. */
	if (send_line(in[1], create) < 0)
		goto lost;
	line = read_line(&rd, deadline, &timed_out);
	if (!line)
		goto lost;
	resp = json_loads(line, 0, NULL);
	if (!resp || json_object_get(resp, "error")) {
		const char *m = json_string_value(
			json_object_get(json_object_get(resp, "error"), "message"));

		ward_error_make(&res->error, 0, "remote ward on '%s': %s", s->opt.ssh.host,
				m ? m : "not a JSON-RPC answer");
		res->exit_code = WARD_EXIT_OWN_ERROR;
		goto done;
	}
	json_decref(resp);
	resp = NULL;
	free(line);
	if (send_line(in[1], exec) < 0)
		goto lost;
	close(in[1]); /* the remote serve ends after this answer */
	in[1] = -1;
	line = read_line(&rd, deadline, &timed_out);
	if (!line)
		goto lost;
	resp = json_loads(line, 0, NULL);
	if (!resp || !json_is_object(json_object_get(resp, "result"))) {
		const char *m = json_string_value(
			json_object_get(json_object_get(resp, "error"), "message"));

		ward_error_make(&res->error, 0, "remote ward on '%s': %s", s->opt.ssh.host,
				m ? m : "not a JSON-RPC answer");
		res->exit_code = WARD_EXIT_OWN_ERROR;
		goto done;
	}
	take_result(json_object_get(resp, "result"), res, out);
	goto done;

lost:
	/* No answer: time is up, or the channel broke. Either way the channel's
	 * ssh goes, which closes the remote serve's input. */
	kill(pid, SIGKILL);
	read_reason(ep[0], reason, sizeof(reason));
	res->exit_code = timed_out ? WARD_EXIT_TIMEOUT : WARD_EXIT_OWN_ERROR;
	res->timed_out = timed_out;
	if (timed_out)
		ward_error_make_kind(&res->error, WARD_ERR_TIMEOUT, 0,
				     "command timed out after %d s (no answer from '%s')",
				     job->timeout, s->opt.ssh.host);
	else
		ward_error_make(&res->error, 0, "ssh to '%s': %s", s->opt.ssh.host,
				reason[0] ? reason : "the channel closed without an answer");
done:
	if (in[1] >= 0) {
		close(in[1]);
		in[1] = -1;
	}
	if (waitpid(pid, &status, WNOHANG) == 0) {
		/* Give it a moment to finish the channel, then end it. */
		long long until = ward_now_ns() + 2000000000LL;
		struct timespec pause = { 0, 5 * 1000000 };

		while (waitpid(pid, &status, WNOHANG) == 0 && ward_now_ns() < until)
			nanosleep(&pause, NULL);
		if (kill(pid, 0) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
	}
	pid = -1;
out:
	if (!res->output)
		res->output = strdup("");
	if (!res->stderr_text)
		res->stderr_text = strdup("");
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	{
		int *fds[] = { in, outp, ep };

		for (i = 0; i < ARRAY_SIZE(fds); i++) {
			if (fds[i][0] >= 0)
				close(fds[i][0]);
			if (fds[i][1] >= 0)
				close(fds[i][1]);
		}
	}
	free(rd.buf);
	json_decref(resp);
	argv_free(argv);
	if (rc < 0)
		ward_result_release(res);
	return rc;
}

const struct session_backend ward_session_ssh_backend = {
	.name = "ssh",
	.exec = ssh_exec,
	.close = ssh_close,
};
