/* session/ssh.c — a session whose commands run on another host, through that
 * host's own ward (so they are sandboxed there by its policy), over the
 * OpenSSH client.
 *
 * One master connection per session (ControlMaster, its socket in a private
 * 0700 directory made here and removed at close), and on it one channel that
 * runs the remote `ward serve` for as long as the session lives. For each
 * command: session.create there with this session's environment and
 * directory, session.exec, session.close — no handshake, no new process on
 * the remote host but the sandbox. A command that runs while another holds
 * that channel gets a channel of its own for the time it runs. The remote
 * ward enforces the timeout and kills the command's processes there; if no
 * answer comes in time plus a margin, the channel's ssh is killed, which ends
 * the remote serve's input and with it its sessions. The state (environment,
 * aliases, history, directory) stays here.
 *
 * Host keys are verified: StrictHostKeyChecking=yes against the configured
 * known_hosts file only (no global file, no accept-new), BatchMode (no
 * prompts), IdentitiesOnly, and -F /dev/null so that no ssh_config of the
 * user weakens any of it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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

#include "runtime/util/util-internal.h"
#include "runtime/session/session-internal.h"

/* How long the master may take to connect and authenticate. */
#define CONNECT_TIMEOUT_S 20
/* Beyond a command's timeout: the remote ward's own kill, the round trip. */
#define MARGIN_S 15
/* A remote answer larger than this is refused (the output is ≤ 64 KiB). */
#define ANSWER_MAX (4 * 1024 * 1024)

struct reader {
	int fd;
	char *buf;
	size_t len, cap;
};

/* One channel running the remote `ward serve`. */
struct chan {
	pid_t pid;           /* its ssh, 0 when none */
	int in, out, err;    /* its stdin (a socket), stdout, stderr */
	struct reader rd;
	long long next_id;
};

struct ssh_state {
	char dir[64];     /* the private directory */
	char ctl[96];     /* its control socket */
	pid_t master;
	int master_err;   /* the master's stderr, for why it failed */
	pthread_mutex_t chan_lock; /* held by the command using chan */
	struct chan chan; /* the session's channel to a remote `ward serve` */
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

static void chan_close(struct chan *c, int grace_ms);

static void cleanup(struct ssh_state *st)
{
	chan_close(&st->chan, 2000);
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
	{
		/* the host keys trusted: taken as a policy file is (another user
		 * able to change it could stand in for the remote host);
		 * ssh(1) reads it by the same path, which no one else can
		 * redirect once this check passed (util-internal.h) */
		int fd = ward_hostpath_open_file("ssh: known_hosts", o->known_hosts,
						 WARD_HOSTPATH_CONFIG, O_RDONLY, 0, err);

		if (fd < 0) {
			if (err && *err)
				(*err)->kind = WARD_ERR_INVALID_PARAMETERS;
			return -1;
		}
		close(fd);
	}
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
	st->chan.in = st->chan.out = st->chan.err = st->chan.rd.fd = -1;
	pthread_mutex_init(&st->chan_lock, NULL);
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
	pthread_mutex_destroy(&st->chan_lock);
	free(st);
	s->backend_data = NULL;
}

/* Read one line from fd before the deadline: malloc'd, NULL on end of
 * file, error or time out (*timed_out set for the last). */
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
	if (json_is_string(json_object_get(r, "stdout")))
		res->stdout_text = dup_text(json_object_get(r, "stdout"), &res->stdout_len);
	res->exit_code = (int)json_integer_value(json_object_get(r, "exit_code"));
	res->sandboxed = json_is_true(json_object_get(r, "sandboxed"));
	res->timed_out = json_is_true(json_object_get(r, "timed_out"));
	res->signal = (int)json_integer_value(json_object_get(r, "signal"));
	res->duration_ms = json_integer_value(json_object_get(r, "duration_ms"));
	res->truncated_bytes = (uint64_t)json_integer_value(json_object_get(r, "truncated_bytes"));
	res->stdout_bytes = (uint64_t)json_integer_value(json_object_get(r, "stdout_bytes"));
	res->stderr_bytes = (uint64_t)json_integer_value(json_object_get(r, "stderr_bytes"));
	res->view = json_is_true(json_object_get(json_object_get(r, "layers"), "view"));
	{
		const char *h = json_string_value(
			json_object_get(json_object_get(r, "layers"), "hostname"));

		/* the remote ward's words: a skipped name starts so */
		if (h && strncmp(h, "skipped:", 8) == 0)
			res->hostname_skipped = true;
		else if (h)
			snprintf(res->hostname, sizeof(res->hostname), "%s", h);
	}
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

static void chan_init(struct chan *c)
{
	memset(c, 0, sizeof(*c));
	c->in = c->out = c->err = c->rd.fd = -1;
	c->next_id = 1;
}

/* End the channel: end of input first (the remote serve then exits and the
 * channel closes), SIGKILL if that takes longer than `grace_ms`. */
static void chan_close(struct chan *c, int grace_ms)
{
	if (c->in >= 0)
		close(c->in);
	if (c->pid > 0) {
		long long until = ward_now_ns() + (long long)grace_ms * 1000000;
		struct timespec pause = { 0, 5 * 1000000 };
		int status;

		while (waitpid(c->pid, &status, WNOHANG) == 0) {
			if (ward_now_ns() >= until) {
				kill(c->pid, SIGKILL);
				waitpid(c->pid, &status, 0);
				break;
			}
			nanosleep(&pause, NULL);
		}
	}
	if (c->out >= 0)
		close(c->out);
	if (c->err >= 0)
		close(c->err);
	free(c->rd.buf);
	chan_init(c);
}

static int chan_open(struct ward_session *s, struct ssh_state *st, struct chan *c,
		     struct ward_error **err)
{
	_cleanup_free_ char *qward = ward_shell_quote(s->opt.ssh.ward ? s->opt.ssh.ward : "ward");
	_cleanup_free_ char *qwd = ward_shell_quote(s->workdir);
	_cleanup_free_ char *remote = NULL;
	char **argv;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, ep[2] = { -1, -1 };

	chan_init(c);
	/* The remote workdir is the person's (the policy's session.ssh.workdir):
	 * given as the remote serve's -C, the remote ward admits it as their
	 * word, a root for the session.create that names it (ward/admit.h). */
	if (!qward || !qwd || asprintf(&remote, "%s serve -C %s", qward, qwd) < 0) {
		remote = NULL;
		return ward_error_make(err, ENOMEM, "ssh");
	}
	argv = ssh_argv(s, st, false, remote);
	if (!argv)
		return ward_error_make(err, ENOMEM, "ssh");
	/* ssh's stdin is a socket, written with MSG_NOSIGNAL: an ssh that died
	 * must not take the host process with a SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		int e = errno;
		int *fds[] = { in, out, ep };
		size_t i;

		for (i = 0; i < ARRAY_SIZE(fds); i++) {
			if (fds[i][0] >= 0)
				close(fds[i][0]);
			if (fds[i][1] >= 0)
				close(fds[i][1]);
		}
		argv_free(argv);
		return ward_error_make(err, e, "pipe");
	}
	c->pid = spawn(argv, in[0], out[1], ep[1]);
	argv_free(argv);
	close(in[0]);
	close(out[1]);
	close(ep[1]);
	c->in = in[1];
	c->out = c->rd.fd = out[0];
	c->err = ep[0];
	if (c->pid < 0) {
		int e = errno;

		c->pid = 0;
		chan_close(c, 0);
		return ward_error_make(err, e, "fork");
	}
	return 0;
}

/* One request on the channel and its answer (matched by id). NULL when the
 * channel broke or the deadline passed (*timed_out). */
static json_t *ask(struct chan *c, json_t *req, long long deadline, bool *timed_out)
{
	long long id = c->next_id++;
	char *text, *line;
	json_t *resp;

	json_object_set_new(req, "jsonrpc", json_string("2.0"));
	json_object_set_new(req, "id", json_integer(id));
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!text || send_line(c->in, text) < 0) {
		free(text);
		return NULL;
	}
	free(text);
	for (;;) {
		line = read_line(&c->rd, deadline, timed_out);
		if (!line)
			return NULL;
		resp = json_loads(line, 0, NULL);
		free(line);
		if (resp && json_integer_value(json_object_get(resp, "id")) == id)
			return resp;
		json_decref(resp); /* not ours: an answer to a request given up on */
	}
}

/* Run the job on channel c: create a remote session with this one's state,
 * run the command, close it. Returns 0 with res filled (an answer came, a
 * remote refusal included), or -1 when the channel failed: *sent says whether
 * the command had been sent by then. */
static int run_on(struct ward_session *s, struct chan *c, const struct session_job *job,
		  long long deadline, struct ward_result *res, struct session_outcome *out,
		  bool *sent, bool *timed_out)
{
	json_t *env = json_object(), *resp, *r;
	const char *id, *msg;
	size_t i;

	*sent = false;
	for (i = 0; job->env && job->env[i]; i++) {
		const char *eq = strchr(job->env[i], '=');
		char *k = eq ? strndup(job->env[i], (size_t)(eq - job->env[i])) : NULL;

		if (k)
			json_object_set_new(env, k, json_string(eq + 1));
		free(k);
	}
	resp = ask(c,
		   json_pack("{s:s, s:{s:s, s:o, s:i, s:s, s:s}}", "method", "session.create",
			     "params", "workdir", s->workdir, "env", env, "timeout", job->timeout,
			     "cwd", job->cwd, "oldpwd", job->oldpwd ? job->oldpwd : job->cwd),
		   deadline, timed_out);
	if (!resp)
		return -1;
	id = json_string_value(json_object_get(json_object_get(resp, "result"), "session"));
	if (!id) {
		msg = json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
		ward_error_make(&res->error, 0, "remote ward on '%s': %s", s->opt.ssh.host,
				msg ? msg : "not a JSON-RPC answer");
		res->exit_code = WARD_EXIT_OWN_ERROR;
		json_decref(resp);
		return 0;
	}
	*sent = true;
	r = ask(c,
		json_pack("{s:s, s:{s:s, s:s, s:i}}", "method", "session.exec", "params", "session",
			  id, "command", job->command, "timeout", job->timeout),
		deadline, timed_out);
	if (r && json_is_object(json_object_get(r, "result"))) {
		take_result(json_object_get(r, "result"), res, out);
	} else if (r) {
		msg = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
		ward_error_make(&res->error, 0, "remote ward on '%s': %s", s->opt.ssh.host,
				msg ? msg : "not a JSON-RPC answer");
		res->exit_code = WARD_EXIT_OWN_ERROR;
	}
	if (r) /* the remote session is not needed any more */
		json_decref(ask(c, json_pack("{s:s, s:{s:s}}", "method", "session.close", "params",
					     "session", id),
				deadline, timed_out));
	json_decref(resp);
	json_decref(r);
	return r ? 0 : -1;
}

static int ssh_exec(struct ward_session *s, const struct session_job *job, struct ward_result *res,
		    struct session_outcome *out, struct ward_error **err)
{
	struct ssh_state *st = s->backend_data;
	struct chan one, *c;
	char reason[1024] = "";
	long long start = ward_now_ns(), deadline;
	bool timed_out = false, sent = false, one_off;
	int attempt, rc = 0;

	memset(res, 0, sizeof(*res));
	deadline = start + (long long)(job->timeout + MARGIN_S) * 1000000000LL;
	/* The session's channel when it is free; a command running alongside
	 * another gets a channel of its own on the same connection. */
	one_off = pthread_mutex_trylock(&st->chan_lock) != 0;
	c = one_off ? &one : &st->chan;
	if (one_off)
		chan_init(c);
	for (attempt = 0;; attempt++) {
		if (c->pid <= 0 && chan_open(s, st, c, err) < 0) {
			rc = -1;
			break;
		}
		if (run_on(s, c, job, deadline, res, out, &sent, &timed_out) == 0)
			break;
		/* No answer. A channel found broken before the command was sent
		 * (the remote serve ended meanwhile) is replaced once; otherwise
		 * its ssh goes, which also ends the remote serve's input. */
		read_reason(c->err, reason, sizeof(reason));
		chan_close(c, 0);
		if (!sent && !timed_out && attempt == 0)
			continue;
		res->exit_code = timed_out ? WARD_EXIT_TIMEOUT : WARD_EXIT_OWN_ERROR;
		res->timed_out = timed_out;
		if (timed_out)
			ward_error_make_kind(&res->error, WARD_ERR_TIMEOUT, 0,
					     "command timed out after %d s (no answer from '%s')",
					     job->timeout, s->opt.ssh.host);
		else
			ward_error_make(&res->error, 0, "ssh to '%s': %s", s->opt.ssh.host,
					reason[0] ? reason : "the channel closed without an answer");
		break;
	}
	if (one_off)
		chan_close(c, 2000);
	else
		pthread_mutex_unlock(&st->chan_lock);
	if (rc < 0)
		return -1;
	if (!res->output)
		res->output = strdup("");
	if (!res->stderr_text)
		res->stderr_text = strdup("");
	if (!res->duration_ms)
		res->duration_ms = (ward_now_ns() - start) / 1000000;
	return 0;
}

const struct session_backend ward_session_ssh_backend = {
	.name = "ssh",
	.exec = ssh_exec,
	.close = ssh_close,
};
