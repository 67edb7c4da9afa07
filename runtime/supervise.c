/* supervise.c — the supervisor's event loop; see supervise-internal.h. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/proxy-internal.h"
#include "runtime/supervise-internal.h"
#include "runtime/util-internal.h"

enum { EV_OUT, EV_ERR, EV_REPORT, EV_PID, EV_SIG, EV_PROXY, EV_CANCEL };

/* After the child is gone, how long output may still trickle in: in a
 * sandbox every writer died with it, so end of file comes at once; without
 * one, a process that left the group may hold the pipe open. */
#define DRAIN_SANDBOX_NS (5LL * 1000000000)
#define DRAIN_DIRECT_NS (300LL * 1000000)
#define READ_CHUNK (64 * 1024)

static void kill_child(struct supervisor *s, int sig)
{
	if (s->sandboxed) {
		syscall(SYS_pidfd_send_signal, s->pidfd, sig, NULL, 0);
	} else {
		kill(-s->pid, sig);
		syscall(SYS_pidfd_send_signal, s->pidfd, sig, NULL, 0);
	}
}

static int watch(int ep, int fd, int id)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)id };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void stop_watching(int ep, int *fd)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, *fd, NULL);
	close(*fd);
	*fd = -1;
}

/* Read what is there into the buffer; returns false at end of file. */
static bool pump(int fd, struct ward_outbuf *b, char *chunk)
{
	for (;;) {
		ssize_t n = read(fd, chunk, READ_CHUNK);

		if (n > 0) {
			ward_outbuf_append(b, chunk, (size_t)n);
			if (n < READ_CHUNK)
				return true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		return false;
	}
}

/* One record from init; false at end of file. Records are written whole and
 * are smaller than PIPE_BUF, so a read returns one whole record. */
static bool take_report(struct supervisor *s)
{
	struct report r;
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = read(s->report_fd, (char *)&r + got, sizeof(r) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	/* Not init's: a forgery, ignored. */
	if (!ward_report_genuine(&r, s->report_nonce))
		return true;
	if (r.type == REPORT_ERROR) {
		s->have_error = true;
		s->child_error = r.err;
		s->child_error.message[sizeof(s->child_error.message) - 1] = '\0';
		s->child_error.rule[sizeof(s->child_error.rule) - 1] = '\0';
	} else if (r.type == REPORT_EXIT) {
		s->have_exit = true;
		s->cmd_status = r.status;
	}
	return true;
}

int ward_supervise(struct supervisor *s, struct ward_error **err)
{
	_cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
	_cleanup_close_ int sfd = -1;
	_cleanup_free_ char *chunk = malloc(READ_CHUNK);
	sigset_t fwd, old;
	bool exited = false, masked = false;
	long long drain_until = 0;
	int rc = 0;

	if (ep < 0 || !chunk) {
		rc = ward_error_make(err, ep < 0 ? errno : ENOMEM, "set up the supervisor");
		goto out;
	}
	if (s->forward_signals) {
		sigemptyset(&fwd);
		sigaddset(&fwd, SIGINT);
		sigaddset(&fwd, SIGTERM);
		sigaddset(&fwd, SIGHUP);
		sigaddset(&fwd, SIGQUIT);
		pthread_sigmask(SIG_BLOCK, &fwd, &old);
		masked = true;
		sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
		if (sfd < 0 || watch(ep, sfd, EV_SIG) < 0) {
			rc = ward_error_make(err, errno, "signalfd");
			goto out;
		}
	}
	if ((s->out_fd >= 0 && watch(ep, s->out_fd, EV_OUT) < 0) ||
	    (s->err_fd >= 0 && watch(ep, s->err_fd, EV_ERR) < 0) ||
	    (s->report_fd >= 0 && watch(ep, s->report_fd, EV_REPORT) < 0) ||
	    watch(ep, s->pidfd, EV_PID) < 0 ||
	    (s->cancel_fd >= 0 && watch(ep, s->cancel_fd, EV_CANCEL) < 0) ||
	    (s->proxy && watch(ep, ward_proxy_fd(s->proxy), EV_PROXY) < 0)) {
		rc = ward_error_make(err, errno, "epoll_ctl");
		goto out;
	}

	while (!exited || s->out_fd >= 0 || s->err_fd >= 0 || s->report_fd >= 0) {
		struct epoll_event evs[8];
		long long now = ward_now_ns(), until = exited ? drain_until : s->deadline_ns;
		long long proxy_due = s->proxy && !exited ? ward_proxy_deadline(s->proxy) : 0;
		long long wake = proxy_due && proxy_due < until ? proxy_due : until;
		int timeout_ms = wake <= now ? 0 : (int)((wake - now + 999999) / 1000000);
		int n, i;

		n = epoll_wait(ep, evs, ARRAY_SIZE(evs), timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ward_error_make(err, errno, "epoll_wait");
			goto out;
		}
		if (n == 0 && proxy_due && ward_now_ns() < until) {
			ward_proxy_dispatch(s->proxy); /* a connection's own timeout */
			continue;
		}
		if (n == 0) {
			if (exited)
				break; /* drained long enough */
			if (!s->timed_out) {
				s->timed_out = true;
				kill_child(s, SIGKILL);
			}
			/* killed: wait for the pidfd without a deadline */
			s->deadline_ns = ward_now_ns() + 3600LL * 1000000000;
			continue;
		}
		for (i = 0; i < n; i++) {
			switch (evs[i].data.u32) {
			case EV_OUT:
				if (!pump(s->out_fd, s->out, chunk))
					stop_watching(ep, &s->out_fd);
				break;
			case EV_ERR:
				if (!pump(s->err_fd, s->err, chunk))
					stop_watching(ep, &s->err_fd);
				break;
			case EV_REPORT:
				if (!take_report(s))
					stop_watching(ep, &s->report_fd);
				break;
			case EV_PID: {
				siginfo_t si;

				memset(&si, 0, sizeof(si));
				/* the raw call: glibc's waitid() has no rusage */
				if (syscall(SYS_waitid, P_PIDFD, s->pidfd, &si, WEXITED | WNOHANG,
					    &s->rusage) < 0 ||
				    si.si_pid == 0)
					break;
				s->child_status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) :
									     si.si_status & 0x7f;
				exited = true;
				epoll_ctl(ep, EPOLL_CTL_DEL, s->pidfd, NULL);
				if (!s->sandboxed)
					kill(-s->pid, SIGKILL); /* what the command left behind */
				drain_until = ward_now_ns() +
					      (s->sandboxed ? DRAIN_SANDBOX_NS : DRAIN_DIRECT_NS);
				break;
			}
			case EV_PROXY:
				if (!exited)
					ward_proxy_dispatch(s->proxy);
				else
					epoll_ctl(ep, EPOLL_CTL_DEL, ward_proxy_fd(s->proxy), NULL);
				break;
			case EV_CANCEL:
				/* level-triggered and never read: stop watching */
				epoll_ctl(ep, EPOLL_CTL_DEL, s->cancel_fd, NULL);
				if (!exited) {
					s->cancelled = true;
					kill_child(s, SIGKILL);
				}
				break;
			case EV_SIG: {
				struct signalfd_siginfo ssi;

				while (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi))
					if (!exited)
						kill_child(s, (int)ssi.ssi_signo);
				break;
			}
			}
		}
	}
out:
	if (rc < 0 && !exited) {
		siginfo_t si;

		kill_child(s, SIGKILL);
		waitid((idtype_t)P_PIDFD, (id_t)s->pidfd, &si, WEXITED);
	}
	if (masked) {
		/* A forwarded signal still pending would hit us once unblocked. */
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&fwd, NULL, &zero) > 0)
			;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return rc;
}
