/* session/local.c — a session's commands on this host: a fresh sandbox per
 * command (ward_run), or one long-lived sandbox whose init forks each
 * (core/agent.c), supervised from here. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/core/core-internal.h"
#include "runtime/session/session-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/outbuf.h"
#include "ward/workdir.h"

/* fd 3, drained while the command runs (a bash session's report may be
 * larger than a pipe holds): at most cap bytes kept, the rest read and
 * dropped, which leaves the report incomplete.
 *
 * With creds, fd 3 is a stream socket with SO_PASSCRED: the kernel tells
 * who wrote each piece (one read never joins two writers' bytes). The first
 * piece is the script's hello, sent before the command runs, when nothing
 * but the shell is in the sandbox; a piece from any other process — a
 * program that took the socket from the shell (pidfd_getfd), a background
 * job — marks the report forged, and none of it is taken. */
struct side_reader {
	int fd;
	char *buf;
	size_t cap, len;
	pthread_t thread;
	bool creds, forged;
	pid_t writer;
};

static ssize_t side_read(struct side_reader *r, char *to, size_t room)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = to, .iov_len = room };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm;
	pid_t pid = 0;
	ssize_t n;

	if (!r->creds)
		return read(r->fd, to, room);
	n = recvmsg(r->fd, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
			struct ucred u;

			memcpy(&u, CMSG_DATA(cm), sizeof(u));
			pid = u.pid;
		}
	if (r->writer == 0 && r->len == 0 && pid > 0 && to[0] == 'W')
		r->writer = pid; /* the hello */
	if (pid <= 0 || pid != r->writer)
		r->forged = true;
	return n;
}

static void *side_drain(void *arg)
{
	struct side_reader *r = arg;
	char sink[4096];

	for (;;) {
		char *to = r->len < r->cap ? r->buf + r->len : sink;
		size_t room = r->len < r->cap ? r->cap - r->len : sizeof(sink);
		ssize_t n = side_read(r, to, room);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* end of file, or nothing more now (not threaded) */
		if (to != sink)
			r->len += (size_t)n;
		else
			r->cap = 0; /* overflowed: nothing after the cwd is taken */
	}
	return NULL;
}

/* The report, its hello stripped. forged: bytes from another process than
 * the shell (see side_reader): nothing of it is taken, not even the cwd. */
static void side_parse(const char *buf, size_t len, bool whole, bool forged,
		       struct session_outcome *out)
{
	if (forged || len == 0 || buf[0] != 'W') {
		out->forged = forged;
		return;
	}
	ward_session_parse_cwd(buf + 1, len - 1, out);
	if (whole)
		ward_session_parse_state(buf + 1, len - 1, out);
}

static size_t count(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* ---- a fresh sandbox per command --------------------------------------------- */

/* After a command in overlay mode (changes_lock held): the set stays kept
 * under the session's name, the first one that changed anything starts it. */
static void keep_changes(struct ward_session *s, struct ward_result *res)
{
	struct ward_workdir_report *w = res->workdir;
	struct ward_error *e = NULL;

	if (!w || !w->changes)
		return;
	if (s->changes) {
		/* a continued set: kept under its name already */
		snprintf(w->change_action, sizeof(w->change_action), "kept");
		return;
	}
	if (ward_changeset_count(w->changes) == 0)
		return; /* nothing yet: dropped with the result */
	if (ward_changeset_keep(w->changes, w->change_name, sizeof(w->change_name), &e) < 0) {
		/* the command ran; its result says why its changes are lost */
		if (!res->error) {
			res->error = e;
			res->exit_code = WARD_EXIT_OWN_ERROR;
		} else {
			ward_error_free(e);
		}
		return;
	}
	snprintf(w->change_action, sizeof(w->change_action), "kept");
	s->changes = strdup(w->change_name);
}

static int fresh_exec(struct ward_session *s, const struct session_job *job,
		      struct ward_result *res, struct session_outcome *out, struct ward_error **err)
{
	struct ward_config c = s->cfg; /* shallow: this command's settings differ */
	_cleanup_free_ char *script = ward_session_script(s, job);
	char *argv[] = { (char *)job->shell, (char *)"-c", script, NULL };
	struct side_reader rd = { .fd = -1 };
	bool threaded;
	int side[2], rc;

	if (!script)
		return ward_error_make(err, ENOMEM, "session");
	rd.cap = job->report_cap;
	rd.buf = malloc(rd.cap);
	if (!rd.buf)
		return ward_error_make(err, ENOMEM, "session");
	/* Without a sandbox a process that left the command's group might hold
	 * fd 3 open past the command: read then, what the pipe holds. Nor is
	 * the shell alone on the host at its start: no writer check there (the
	 * command runs as the user, unconfined, anyway). */
	threaded = c.mode != WARD_SANDBOX_OFF;
	rd.creds = threaded;
	if (threaded ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, side) < 0 :
		       pipe2(side, O_CLOEXEC) < 0) {
		free(rd.buf);
		return ward_error_make(err, errno, "pipe");
	}
	if (rd.creds) {
		int on = 1;

		if (setsockopt(side[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ||
		    shutdown(side[0], SHUT_WR) < 0) {
			close(side[0]);
			close(side[1]);
			free(rd.buf);
			return ward_error_make(err, errno, "setsockopt SO_PASSCRED");
		}
	}
	rd.fd = side[0];
	if (!threaded)
		fcntl(side[1], F_SETPIPE_SZ, 1 << 20);
	if (threaded) {
		/* the thread takes no signals: a process-directed ^C must reach
		 * the supervisor's signalfd (forwarded to the command), never a
		 * handler run on this thread instead, where it was lost */
		sigset_t all, old;
		int e;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		e = pthread_create(&rd.thread, NULL, side_drain, &rd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (e != 0) {
			close(side[0]);
			close(side[1]);
			free(rd.buf);
			return ward_error_make(err, EAGAIN, "start the report's reader");
		}
	}
	c.clearenv = true;
	c.setenv = job->env;
	c.n_setenv = count(job->env);
	c.timeout = job->timeout;
	c.pass_fd = side[1];
	c.forward_signals = job->forward_signals;
	c.cancel_fd = job->cancel_fd;
	c.progress = job->progress;
	c.progress_ctx = job->progress_ctx;
	if (c.workdir_mode == WARD_WORKDIR_OVERLAY) {
		/* over the session's set: each command sees the ones before */
		pthread_mutex_lock(&s->changes_lock);
		if (s->changes && !ward_session_changes_exist(s)) {
			free(s->changes); /* applied or discarded from outside meanwhile */
			s->changes = NULL;
		}
		c.continue_changes = s->changes;
		rc = ward_run(&c, argv, res, err);
		if (rc == 0)
			keep_changes(s, res);
		pthread_mutex_unlock(&s->changes_lock);
	} else {
		rc = ward_run(&c, argv, res, err);
	}
	close(side[1]);
	if (threaded) {
		pthread_join(rd.thread, NULL);
	} else {
		fcntl(side[0], F_SETFL, O_NONBLOCK);
		side_drain(&rd);
	}
	if (rc == 0)
		side_parse(rd.buf, rd.len, rd.cap != 0, rd.forged, out);
	close(side[0]);
	free(rd.buf);
	return rc;
}

int ward_session_local_open(struct ward_session *s, struct ward_error **err);

const struct session_backend ward_session_local_fresh = {
	.name = "local",
	.exec = fresh_exec,
	.close = NULL,
};

/* ---- one sandbox for the session ---------------------------------------------- */

struct shared {
	pthread_mutex_t lock;   /* ctl, the sandbox's life */
	int ctl;                /* our end of the control socket, -1 when none */
	struct agent_start a;   /* pid, pidfd, what was applied */
	bool dead;
};

static void shared_stop(struct shared *sh)
{
	if (sh->ctl >= 0)
		close(sh->ctl); /* init reads end of file and exits; the kernel kills the rest */
	sh->ctl = -1;
	/* the sandbox, then its placeholders and run records */
	ward_run_stop_agent(&sh->a);
}

static int shared_start(struct ward_session *s, struct shared *sh, struct ward_error **err)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ward_error_make(err, errno, "socketpair");
	if (ward_run_start_agent(&s->cfg, sv[1], &sh->a, err) < 0) {
		close(sv[0]);
		close(sv[1]);
		sh->a.pidfd = -1;
		return -1;
	}
	close(sv[1]);
	sh->ctl = sv[0];
	sh->dead = false;
	return 0;
}

/* The script and the environment, for the leader to map. */
static int make_blob(const char *script, char *const *env, struct ward_error **err)
{
	int fd = memfd_create("ward-command", MFD_CLOEXEC);
	size_t i;

	if (fd < 0)
		return ward_error_make(err, errno, "memfd_create");
	if (ward_write_all(fd, script, strlen(script) + 1) < 0)
		goto fail;
	for (i = 0; env && env[i]; i++)
		if (ward_write_all(fd, env[i], strlen(env[i]) + 1) < 0)
			goto fail;
	return fd;
fail:
	ward_error_make(err, errno, "write the command");
	close(fd);
	return -1;
}

static int send_job(struct shared *sh, const struct agent_msg *m, const int fds[AGENT_NFDS])
{
	return ward_send_fds(sh->ctl, m, sizeof(*m), fds, AGENT_NFDS, 0) == (ssize_t)sizeof(*m) ?
		       0 : -1;
}

/* Grace after the deadline for the leader's own kill and report; past it the
 * whole sandbox is killed from here. */
#define BACKSTOP_NS (5LL * 1000000000)

/* The supervisor's kill (timeout, cancel): the session's whole sandbox, whose
 * leader runs every command of the session; the next command starts a new
 * one, the session's state (which lives here) intact. */
static void shared_kill(void *ctx, int sig)
{
	struct shared *sh = ctx;

	pthread_mutex_lock(&sh->lock);
	if (sh->a.pidfd >= 0)
		syscall(SYS_pidfd_send_signal, sh->a.pidfd, sig, NULL, 0);
	sh->dead = true;
	pthread_mutex_unlock(&sh->lock);
}

static int shared_exec_once(struct ward_session *s, const struct session_job *job,
			    struct ward_result *res, struct session_outcome *out, bool *full,
			    struct ward_error **err)
{
	struct shared *sh = s->backend_data;
	_cleanup_free_ char *script = ward_session_script(s, job);
	struct ward_outbuf *ob = NULL, *eb = NULL;
	struct agent_report rep = { 0 };
	_cleanup_free_ char *side = malloc(job->report_cap);
	size_t side_len = 0, rep_len = 0;
	bool side_full = false;
	int p_out[2] = { -1, -1 }, p_err[2] = { -1, -1 }, p_side[2] = { -1, -1 },
	    p_rep[2] = { -1, -1 }, blob = -1, rc = -1;
	/* p_out and p_err: only their read ends, from the leader (p_out[1] is
	 * our end of the socket it sends them on, p_err[1] unused) */
	struct agent_msg m = { .magic = AGENT_MAGIC, .timeout_s = job->timeout };
	long long start = ward_now_ns();
	bool lost = false, killed = false, cancelled = false;

	memset(res, 0, sizeof(*res));
	if (!script || !side)
		return ward_error_make(err, ENOMEM, "session");
	memcpy(m.shell, job->shell, strlen(job->shell) + 1);
	m.cold = ward_session_traced(job->options);
	ob = ward_outbuf_new(WARD_OUTBUF_HALF, WARD_OUTBUF_HALF, err);
	eb = ob ? ward_outbuf_new(WARD_OUTBUF_HALF, WARD_OUTBUF_HALF, err) : NULL;
	if (!eb)
		goto out;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p_out) < 0 ||
	    pipe2(p_side, O_CLOEXEC) < 0 || pipe2(p_rep, O_CLOEXEC) < 0) {
		ward_error_make(err, errno, "pipe");
		goto out;
	}
	blob = make_blob(script, job->env, err);
	if (blob < 0)
		goto out;

	pthread_mutex_lock(&sh->lock);
	{
		int fds[AGENT_NFDS] = { blob, p_out[1], p_side[1], p_rep[1] };
		int attempt;

		for (attempt = 0;; attempt++) {
			struct ward_error *e = NULL;

			if (!sh->dead && send_job(sh, &m, fds) == 0)
				break;
			if (attempt == 1) {
				pthread_mutex_unlock(&sh->lock);
				ward_error_make(&res->error, errno,
						"send the command to the session's sandbox");
				res->exit_code = WARD_EXIT_OWN_ERROR;
				rc = 0;
				goto out;
			}
			/* Killed at a deadline, or gone: a new sandbox, with the
			 * session's state (which lives here) intact, not its
			 * jobs. */
			out->sandbox_new = true;
			shared_stop(sh);
			if (shared_start(s, sh, &e) < 0) {
				sh->dead = true;
				pthread_mutex_unlock(&sh->lock);
				res->error = e;
				res->exit_code = WARD_EXIT_OWN_ERROR;
				rc = 0;
				goto out;
			}
		}
	}
	pthread_mutex_unlock(&sh->lock);
	close(blob);
	blob = -1;
	close(p_out[1]);
	close(p_side[1]);
	close(p_rep[1]);
	p_out[1] = p_side[1] = p_rep[1] = -1;
	/* The read ends of the command's stdout and stderr, made in the sandbox
	 * with its shell (which may have been waiting for it): sent at once, or
	 * none when the leader could not start it (its report says why), or when
	 * the sandbox is gone (then no report either: lost, below). */
	{
		struct pollfd pf[2] = { { .fd = p_out[0], .events = POLLIN },
					{ .fd = job->cancel_fd, .events = POLLIN } };
		int sock = p_out[0], two[2];
		size_t nfds = 0, k;
		char one;

		p_out[0] = -1;
		/* a leader that never sends them (stopped by a job of an earlier
		 * command) is waited for until the deadline, or a cancel */
		if (poll(pf, 2, (int)((job->timeout * 1000000000LL + BACKSTOP_NS) / 1000000)) > 0 &&
		    pf[0].revents && ward_recv_fds(sock, &one, 1, two, 2, &nfds, 0) > 0 &&
		    nfds == 2) {
			p_out[0] = two[0];
			p_err[0] = two[1];
		} else {
			for (k = 0; k < nfds; k++)
				close(two[k]);
		}
		close(sock);
	}

	/* The supervisor's loop (supervise.c), with no child of its own: the
	 * leader forks the command and reports its status on p_rep; the loop
	 * ends when every pipe is at end of file. Past the deadline (the
	 * leader's own, and a grace) the whole sandbox is killed. */
	{
		struct supervisor sv;
		int k, *reads[] = { &p_out[0], &p_err[0], &p_rep[0], &p_side[0] };

		for (k = 0; k < 4; k++)
			fcntl(*reads[k], F_SETFL, O_NONBLOCK);
		memset(&sv, 0, sizeof(sv));
		sv.pidfd = -1;
		sv.sandboxed = true;
		sv.kill = shared_kill;
		sv.kill_ctx = sh;
		sv.out_fd = steal_fd(&p_out[0]);
		sv.err_fd = steal_fd(&p_err[0]);
		sv.out_sink = sv.err_sink = sv.pty_fd = sv.pty_sink = -1;
		sv.in_src = sv.in_dst = sv.tty_fd = sv.report_fd = -1;
		sv.capture[0] = (struct supervise_capture){ .buf = (char *)&rep, .cap = sizeof(rep),
							    .fd = steal_fd(&p_rep[0]) };
		sv.capture[1] = (struct supervise_capture){ .buf = side, .cap = job->report_cap,
							    .fd = steal_fd(&p_side[0]) };
		sv.out = ob;
		sv.err = eb;
		sv.deadline_ns = start + (long long)job->timeout * 1000000000LL + BACKSTOP_NS;
		sv.cancel_fd = job->cancel_fd;
		sv.end_with_report = true;
		sv.tick = job->progress;
		sv.tick_ctx = job->progress_ctx;
		sv.tick_ns = WARD_PROGRESS_NS;
		if (ward_supervise(&sv, err) < 0) {
			if (sv.out_fd >= 0)
				close(sv.out_fd);
			if (sv.err_fd >= 0)
				close(sv.err_fd);
			goto out;
		}
		/* Background jobs hold the output pipes: init reads and drops
		 * what they write from now on. */
		if (sv.out_fd >= 0 || sv.err_fd >= 0) {
			struct agent_msg dm = { .magic = AGENT_DRAIN };
			int dfds[AGENT_DRAIN_FDS] = { sv.out_fd, sv.err_fd }, nd = 0;
			if (dfds[0] < 0)
				dfds[0] = dfds[1], dfds[1] = -1;
			nd = dfds[1] >= 0 ? 2 : 1;
			pthread_mutex_lock(&sh->lock);
			if (!sh->dead && sh->ctl >= 0)
				ward_send_fds(sh->ctl, &dm, sizeof(dm), dfds, (size_t)nd, 0);
			pthread_mutex_unlock(&sh->lock);
			for (int d = 0; d < nd; d++)
				close(dfds[d]);
		}
		killed = sv.timed_out;
		cancelled = sv.cancelled;
		rep_len = sv.capture[0].len;
		side_len = sv.capture[1].len;
		side_full = side_len == job->report_cap;
	}
	lost = rep_len != sizeof(rep);

	{
		uint64_t dropped = 0;

		res->output = ward_output_combine(ob, eb, WARD_OUTPUT_MAX, &res->output_len, &dropped);
		res->truncated_bytes = dropped;
		res->stdout_bytes = ward_outbuf_total(ob);
		res->stderr_bytes = ward_outbuf_total(eb);
		res->stderr_text = ward_outbuf_render(eb, WARD_OUTPUT_MAX, &res->stderr_len, NULL);
		res->stdout_text = ward_outbuf_render(ob, WARD_OUTPUT_MAX, &res->stdout_len, NULL);
	}
	res->sandboxed = true;
	res->namespaces = sh->a.ns;
	res->view = sh->a.view;
	if (sh->a.ns & WARD_NS_UTS)
		ward_result_set_hostname(res, sh->a.hostname, sh->a.skipped);
	res->nested = sh->a.nested;
	res->fenced = sh->a.fenced;
	res->fences = sh->a.fences;
	out->kept = lost ? 0 : rep.kept;
	if (cancelled) {
		out->sandbox_new = true; /* killed, its jobs with it */
		res->exit_code = WARD_EXIT_OWN_ERROR;
		res->signal = SIGKILL;
		ward_error_make(&res->error, 0,
				"cancelled: the session's sandbox was killed; the next command "
				"starts a new one, the session's state as before this command");
	} else if (killed || (!lost && rep.timed_out)) {
		res->started = true;
		res->timed_out = true;
		res->signal = SIGKILL;
		res->exit_code = WARD_EXIT_TIMEOUT;
		ward_error_make_kind(&res->error, WARD_ERR_TIMEOUT, 0,
				     "command timed out after %d s", job->timeout);
	} else if (!lost && !rep.started && rep.err_no == EAGAIN) {
		/* No room for one more process: the session's jobs fill its
		 * pids limit. A command could not even kill them: the next one
		 * gets a new sandbox. */
		pthread_mutex_lock(&sh->lock);
		sh->dead = true;
		pthread_mutex_unlock(&sh->lock);
		*full = true;
		res->exit_code = WARD_EXIT_OWN_ERROR;
		ward_error_make(&res->error, EAGAIN,
				"start the command in the session's sandbox: its processes reached "
				"the pids limit; the next command starts a new sandbox, without "
				"the background jobs");
	} else if (lost || !rep.started) {
		pthread_mutex_lock(&sh->lock);
		sh->dead = sh->dead || lost;
		pthread_mutex_unlock(&sh->lock);
		res->exit_code = WARD_EXIT_OWN_ERROR;
		ward_error_make(&res->error, lost ? 0 : rep.err_no,
				lost ? "the session's sandbox ended before the command finished" :
				       "start the command in the session's sandbox");
	} else {
		res->started = true;
		if (WIFSIGNALED(rep.status)) {
			res->signal = WTERMSIG(rep.status);
			res->exit_code = 128 + res->signal;
		} else {
			res->exit_code = WEXITSTATUS(rep.status);
		}
		side_parse(side, side_len, !side_full, rep.forged != 0, out);
	}
	rc = 0;
out:
	if (rc == 0 && !res->output)
		res->output = strdup("");
	if (rc == 0 && !res->stderr_text)
		res->stderr_text = strdup("");
	res->duration_ms = (ward_now_ns() - start) / 1000000;
	{
		int *fds[] = { p_out, p_err, p_side, p_rep };
		int i;

		for (i = 0; i < 4; i++) {
			if (fds[i][0] >= 0)
				close(fds[i][0]);
			if (fds[i][1] >= 0)
				close(fds[i][1]);
		}
	}
	if (blob >= 0)
		close(blob);
	ward_outbuf_free(ob);
	ward_outbuf_free(eb);
	if (rc < 0)
		ward_result_release(res);
	return rc;
}

/* A command that found no room for one more process (the session's jobs
 * fill its pids limit) never started: it runs once more at once, in a new
 * sandbox — the session's state intact, the jobs gone, as the result says
 * (sandbox_new) — rather than failing for the session's earlier commands.
 * Only once: a sandbox that is new and full is the command's own doing. */
static int shared_exec(struct ward_session *s, const struct session_job *job,
		       struct ward_result *res, struct session_outcome *out, struct ward_error **err)
{
	bool full = false;
	int rc = shared_exec_once(s, job, res, out, &full, err);

	if (rc == 0 && full && !out->sandbox_new) {
		ward_result_release(res);
		ward_session_outcome_release(out);
		full = false;
		rc = shared_exec_once(s, job, res, out, &full, err);
	}
	return rc;
}

static void shared_close(struct ward_session *s)
{
	struct shared *sh = s->backend_data;

	if (!sh)
		return;
	shared_stop(sh);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
	s->backend_data = NULL;
}

const struct session_backend ward_session_local_shared = {
	.name = "local",
	.exec = shared_exec,
	.close = shared_close,
};

int ward_session_local_open(struct ward_session *s, struct ward_error **err)
{
	struct shared *sh;

	if (s->opt.isolation != WARD_SESSION_SHARED)
		return 0;
	if (s->cfg.mode == WARD_SANDBOX_OFF)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "shared isolation needs the sandbox (sandbox: required)");
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return ward_error_make(err, ENOMEM, "session");
	pthread_mutex_init(&sh->lock, NULL);
	sh->ctl = -1;
	sh->a.pidfd = -1;
	if (shared_start(s, sh, err) < 0) {
		pthread_mutex_destroy(&sh->lock);
		free(sh);
		return -1;
	}
	s->backend_data = sh;
	return 0;
}
