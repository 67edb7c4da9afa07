/* supervise.c — the supervisor's event loop; see core-internal.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "runtime/net/net-internal.h"
#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"

enum { EV_OUT, EV_ERR, EV_REPORT, EV_PID, EV_SIG, EV_PROXY, EV_CANCEL, EV_PTY, EV_IN, EV_IN_DST,
       EV_CAPTURE /* + index */ };

/* After the child is gone, how long output may still trickle in: in a
 * sandbox every writer died with it, so end of file comes at once; without
 * one, a process that left the group may hold the pipe open. */
#define DRAIN_SANDBOX_NS (5LL * 1000000000)
#define DRAIN_DIRECT_NS (300LL * 1000000)
#define READ_CHUNK (64 * 1024)

static void kill_child(struct supervisor *s, int sig)
{
	if (s->kill) {
		s->kill(s->kill_ctx, sig);
	} else if (s->sandboxed) {
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

/* Write all of it to a host fd, as it comes. A sink left non-blocking by
 * whoever gave it is waited for, not spun on. False when it is gone. */
static bool sink_write(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };

			poll(&pf, 1, -1);
			continue;
		}
		return false;
	}
	return true;
}

/* Where a pipe's output goes on to: a host descriptor, through the filter
 * that cuts queries out when it is a terminal (ward_tty_filter()). */
struct sink {
	int fd;
	struct ward_tty_filter *cut; /* NULL: as it comes */
	char *buf;		     /* cut's output: WARD_TTY_FILTER_ROOM(CUT_SLICE) */
};

/* What the filter takes at once: its output has room for four times it. */
#define CUT_SLICE (READ_CHUNK / 4)

static bool sink_put(const struct sink *to, const char *p, size_t n)
{
	if (!to->cut)
		return sink_write(to->fd, p, n);
	for (size_t off = 0; off < n; off += CUT_SLICE) {
		size_t len = n - off < CUT_SLICE ? n - off : CUT_SLICE;

		if (!sink_write(to->fd, to->buf, ward_tty_filter(to->cut, p + off, len, to->buf)))
			return false;
	}
	return true;
}

/* Read what is there into the buffer, or on to the sink; returns false at
 * end of file (a pty master says EIO when the last slave is gone), or when
 * the sink is gone: closing the source then gives the command EPIPE, as if
 * it wrote to the host's pipe itself. */
static bool pump(int fd, struct ward_outbuf *b, const struct sink *to, char *chunk,
		 struct ward_tty_scan *q)
{
	for (;;) {
		ssize_t n = read(fd, chunk, READ_CHUNK);

		if (n > 0) {
			if (q)
				ward_tty_scan(q, chunk, (size_t)n);
			if (to->fd >= 0) {
				if (!sink_put(to, chunk, (size_t)n))
					return false;
			} else if (b) {
				ward_outbuf_append(b, chunk, (size_t)n);
			}
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

/* What a pipe holds now, at most what the largest pipe holds (a job writing
 * as fast as we read must not keep us here); false at its end. */
static bool drain_now(int fd, struct ward_outbuf *b, const struct sink *to, char *chunk)
{
	size_t budget = 1 << 20;

	for (;;) {
		ssize_t n = read(fd, chunk, READ_CHUNK);

		if (n > 0) {
			if (to->fd >= 0)
				sink_put(to, chunk, (size_t)n);
			else if (b)
				ward_outbuf_append(b, chunk, (size_t)n);
			if ((size_t)n >= budget)
				return true;
			budget -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN;
	}
}

/* More of a captured pipe; false at its end (end of file, an error, or the
 * buffer full). */
static bool capture_read(struct supervise_capture *c)
{
	for (;;) {
		ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);

		if (n > 0) {
			c->len += (size_t)n;
			if (c->len == c->cap)
				return false;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN;
	}
}

/* Whether a pipe the loop reads is still open. */
static bool pipes_open(const struct supervisor *s)
{
	size_t k;

	for (k = 0; k < SUPERVISE_CAPTURES; k++)
		if (s->capture[k].buf && s->capture[k].fd >= 0)
			return true;
	return s->out_fd >= 0 || s->err_fd >= 0 || s->pty_fd >= 0 || s->report_fd >= 0;
}

/* The host's stdin relayed to the command: read when the source has data
 * and the destination room, never more than one chunk held. A source epoll
 * cannot watch (a regular file, /dev/null) is read whenever the destination
 * has room. Writes to the destination never block: a command that does not
 * read its stdin cannot stall the loop (the timeout still fires). */
struct in_relay {
	int src, dst;
	bool src_polled, src_on, dst_on, eof;
	size_t len, off;
	char *buf;
	struct ward_tty_scan *q; /* the terminal's answers the command takes */
};

static void set_watch(int ep, int fd, int id, uint32_t events, bool want, bool *on)
{
	struct epoll_event ev = { .events = events, .data.u32 = (uint32_t)id };

	if (want && !*on)
		*on = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0;
	else if (!want && *on) {
		epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
		*on = false;
	}
}

static void in_fill(struct in_relay *r)
{
	for (;;) {
		ssize_t n = read(r->src, r->buf, READ_CHUNK);

		if (n > 0) {
			r->len = (size_t)n;
			r->off = 0;
			if (r->q)
				ward_tty_scan_input(r->q, r->buf, r->len);
			return;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (!(n < 0 && errno == EAGAIN))
			r->eof = true;
		return;
	}
}

static void in_flush(struct in_relay *r)
{
	while (r->off < r->len) {
		ssize_t n = write(r->dst, r->buf + r->off, r->len - r->off);

		if (n > 0) {
			r->off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		/* the command closed its stdin: what it did not read is dropped */
		r->off = r->len = 0;
		r->eof = true;
		return;
	}
	r->off = r->len = 0;
}

/* Watch what the relay waits for next; at the end close the destination
 * (the command reads end of file). */
static void in_arm(int ep, struct in_relay *r, bool stop)
{
	bool pending = r->off < r->len;

	if (r->dst < 0)
		return;
	if (stop || (r->eof && !pending)) {
		set_watch(ep, r->src, EV_IN, EPOLLIN, false, &r->src_on);
		set_watch(ep, r->dst, EV_IN_DST, EPOLLOUT, false, &r->dst_on);
		close(r->dst);
		r->dst = -1;
		return;
	}
	set_watch(ep, r->src, EV_IN, EPOLLIN, !pending && r->src_polled, &r->src_on);
	set_watch(ep, r->dst, EV_IN_DST, EPOLLOUT, pending || !r->src_polled, &r->dst_on);
}

static void in_event(int ep, struct in_relay *r, int id)
{
	if (r->dst < 0)
		return;
	if (r->off >= r->len && (id == EV_IN || !r->src_polled) && !r->eof)
		in_fill(r);
	in_flush(r);
	in_arm(ep, r, false);
}

/* Follow the host terminal's window size; the kernel tells the command's
 * foreground process group (SIGWINCH) when it changes. */
static void copy_winsize(int from, int to)
{
	struct winsize ws;

	if (from >= 0 && to >= 0 && ioctl(from, TIOCGWINSZ, &ws) == 0)
		ioctl(to, TIOCSWINSZ, &ws);
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
	} else if (r.type == REPORT_SETUP) {
		s->skipped = (unsigned)r.status;
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
	_cleanup_free_ char *inbuf = NULL;
	struct in_relay in = { .src = s->in_src, .dst = s->in_dst };
	sigset_t fwd, blk, old;
	bool exited = false, masked = false, raw = false;
	struct ward_tty_scan asked = { 0 };
	struct ward_tty_filter cut_out = { 0 }, cut_err = { 0 };
	struct sink out = { .fd = s->out_sink }, err_to = { .fd = s->err_sink };
	struct sink pty = { .fd = s->pty_sink };
	_cleanup_free_ char *cutbuf = NULL;
	bool catch_sigs = s->forward_signals || s->tty_fd >= 0;
	long long drain_until = 0, next_tick = 0;
	uint64_t ticked = 0;
	int rc = 0, reraise = 0;
	size_t k;

	s->in_dst = -1; /* the relay's now: closed when it ends */
	if (s->tty_fd >= 0 && s->pty_fd >= 0)
		in.q = &asked;
	/* Output relayed through a pipe to a terminal: the command cannot
	 * read that terminal, so its queries are cut out on the way, their
	 * answers due to the host's shell (ward in the background, or stdin
	 * not the terminal). */
	if ((s->out_sink >= 0 && isatty(s->out_sink)) || (s->err_sink >= 0 && isatty(s->err_sink))) {
		cutbuf = malloc(WARD_TTY_FILTER_ROOM(CUT_SLICE));
		out.buf = err_to.buf = cutbuf;
		out.cut = s->out_sink >= 0 && isatty(s->out_sink) ? &cut_out : NULL;
		err_to.cut = s->err_sink >= 0 && isatty(s->err_sink) ? &cut_err : NULL;
		/* Both terminals: most often the same one, through two files
		 * (or /dev/tty and its pts, not told apart by their numbers),
		 * where the two streams are one to it: a sequence begun on
		 * stdout is ended on stderr. One filter sees both as the
		 * terminal does (for two terminals it may cut what asked
		 * nothing). */
		if (out.cut && err_to.cut)
			err_to.cut = out.cut;
	}
	if (ep < 0 || !chunk || ((out.cut || err_to.cut) && !cutbuf)) {
		rc = ward_error_make(err, ep < 0 ? errno : ENOMEM, "set up the supervisor");
		goto out;
	}
	/* A write to a host pipe whose reader left, or to the command's stdin
	 * once it closed it, is an error to handle, not a signal to die of
	 * (with the host terminal left raw). Blocked, and taken back below. */
	sigemptyset(&fwd);
	sigemptyset(&blk);
	sigaddset(&blk, SIGPIPE);
	if (catch_sigs) {
		/* With the host terminal raw these come from outside (^C is a
		 * byte for the command's own terminal): forwarded, or, for a
		 * host that did not ask for that, the command is ended and the
		 * signal given back once the terminal is restored. */
		sigaddset(&fwd, SIGINT);
		sigaddset(&fwd, SIGTERM);
		sigaddset(&fwd, SIGHUP);
		sigaddset(&fwd, SIGQUIT);
		if (s->tty_fd >= 0 && s->pty_fd >= 0)
			sigaddset(&fwd, SIGWINCH);
		sigaddset(&blk, SIGINT);
		sigaddset(&blk, SIGTERM);
		sigaddset(&blk, SIGHUP);
		sigaddset(&blk, SIGQUIT);
		sigaddset(&blk, SIGWINCH);
	}
	pthread_sigmask(SIG_BLOCK, &blk, &old);
	masked = true;
	if (catch_sigs) {
		sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
		if (sfd < 0 || watch(ep, sfd, EV_SIG) < 0) {
			rc = ward_error_make(err, errno, "signalfd");
			goto out;
		}
	}
	if ((s->out_fd >= 0 && watch(ep, s->out_fd, EV_OUT) < 0) ||
	    (s->err_fd >= 0 && watch(ep, s->err_fd, EV_ERR) < 0) ||
	    (s->pty_fd >= 0 && watch(ep, s->pty_fd, EV_PTY) < 0) ||
	    (s->report_fd >= 0 && watch(ep, s->report_fd, EV_REPORT) < 0) ||
	    (s->pidfd >= 0 && watch(ep, s->pidfd, EV_PID) < 0) ||
	    (s->cancel_fd >= 0 && watch(ep, s->cancel_fd, EV_CANCEL) < 0) ||
	    (s->proxy && watch(ep, ward_proxy_fd(s->proxy), EV_PROXY) < 0)) {
		rc = ward_error_make(err, errno, "epoll_ctl");
		goto out;
	}
	for (k = 0; k < SUPERVISE_CAPTURES; k++)
		if (s->capture[k].buf && s->capture[k].fd >= 0 &&
		    watch(ep, s->capture[k].fd, EV_CAPTURE + (int)k) < 0) {
			rc = ward_error_make(err, errno, "epoll_ctl");
			goto out;
		}
	if (in.dst >= 0) {
		struct epoll_event probe = { .events = EPOLLIN, .data.u32 = EV_IN };

		inbuf = malloc(READ_CHUNK);
		if (!inbuf) {
			rc = ward_error_make(err, ENOMEM, "set up the supervisor");
			goto out;
		}
		in.buf = inbuf;
		/* epoll refuses what is always ready (EPERM: a regular file) */
		in.src_polled = epoll_ctl(ep, EPOLL_CTL_ADD, in.src, &probe) == 0;
		in.src_on = in.src_polled;
		in_arm(ep, &in, false);
	}
	if (s->tty_fd >= 0) {
		struct termios t = s->tty_saved;

		/* Every key goes to the command's own terminal as typed: its line
		 * discipline echoes, edits and turns ^C into SIGINT inside. */
		cfmakeraw(&t);
		raw = tcsetattr(s->tty_fd, TCSANOW, &t) == 0;
	}

	while ((s->pidfd >= 0 && !exited) || pipes_open(s)) {
		struct epoll_event evs[8];
		long long now = ward_now_ns(), until = exited ? drain_until : s->deadline_ns;
		long long proxy_due = s->proxy && !exited ? ward_proxy_deadline(s->proxy) : 0;
		long long wake = proxy_due && proxy_due < until ? proxy_due : until;
		int timeout_ms, n, i;

		if (s->tick && s->out && s->err && !exited) {
			uint64_t total = ward_outbuf_total(s->out) + ward_outbuf_total(s->err);

			if (!next_tick)
				next_tick = now + s->tick_ns;
			if (now >= next_tick) {
				/* at most every tick_ns, and only with something new */
				if (total != ticked)
					s->tick(s->tick_ctx, s->out, s->err);
				ticked = total;
				next_tick = now + s->tick_ns;
			}
			if (total != ticked && next_tick < wake)
				wake = next_tick;
		}
		timeout_ms = wake <= now ? 0 : (int)((wake - now + 999999) / 1000000);
		if (s->end_with_report && exited) {
			/* what the pipes hold now, not what jobs write later */
			if (s->out_fd >= 0 && !drain_now(s->out_fd, s->out, &out, chunk))
				stop_watching(ep, &s->out_fd);
			if (s->err_fd >= 0 && !drain_now(s->err_fd, s->err, &err_to, chunk))
				stop_watching(ep, &s->err_fd);
			break;
		}
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
		if (n == 0 && ward_now_ns() < until)
			continue; /* woken for a tick */
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
			if (evs[i].data.u32 >= EV_CAPTURE) {
				struct supervise_capture *c = &s->capture[evs[i].data.u32 - EV_CAPTURE];

				if (!capture_read(c))
					stop_watching(ep, &c->fd);
				if (s->end_with_report && c == &s->capture[0] && c->fd < 0 && !exited) {
					/* the shell is gone: what it wrote is in the pipes */
					exited = true;
					drain_until = ward_now_ns();
				}
				continue;
			}
			switch (evs[i].data.u32) {
			case EV_OUT:
				if (!pump(s->out_fd, s->out, &out, chunk, NULL))
					stop_watching(ep, &s->out_fd);
				break;
			case EV_ERR:
				if (!pump(s->err_fd, s->err, &err_to, chunk, NULL))
					stop_watching(ep, &s->err_fd);
				break;
			case EV_PTY:
				if (!pump(s->pty_fd, NULL, &pty, chunk, &asked))
					stop_watching(ep, &s->pty_fd);
				break;
			case EV_IN:
			case EV_IN_DST:
				in_event(ep, &in, (int)evs[i].data.u32);
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
				/* nothing more of the host's stdin is taken */
				in_arm(ep, &in, true);
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

				while (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
					int sig = (int)ssi.ssi_signo;

					if (sig == SIGWINCH) {
						copy_winsize(s->tty_fd, s->pty_fd);
					} else if (exited) {
						continue;
					} else if (s->forward_signals) {
						kill_child(s, sig);
					} else {
						reraise = sig;
						kill_child(s, SIGKILL);
					}
				}
				break;
			}
			}
		}
	}
out:
	if (rc < 0 && !exited) {
		siginfo_t si;

		kill_child(s, SIGKILL);
		if (s->pidfd >= 0)
			waitid((idtype_t)P_PIDFD, (id_t)s->pidfd, &si, WEXITED);
	}
	for (k = 0; k < SUPERVISE_CAPTURES; k++)
		if (s->capture[k].buf && s->capture[k].fd >= 0) {
			close(s->capture[k].fd);
			s->capture[k].fd = -1;
		}
	in_arm(ep, &in, true);
	/* Exactly as it was, whichever way the loop ended. */
	if (raw) {
		if (asked.asked) /* its late answers: not for the host's shell */
			ward_tty_take_answers(s->tty_fd, NULL, 0, ward_tty_owed(&asked));
		tcsetattr(s->tty_fd, TCSANOW, &s->tty_saved);
	}
	{
		char held;

		/* what the filters held back for a sequence that never came */
		if (out.cut && ward_tty_filter_end(out.cut, &held))
			sink_write(out.fd, &held, 1);
		if (err_to.cut && err_to.cut != out.cut && ward_tty_filter_end(err_to.cut, &held))
			sink_write(err_to.fd, &held, 1);
	}
	if (masked) {
		/* What we blocked and is still pending would hit us once
		 * unblocked: taken here (a SIGPIPE from a relay write, a
		 * forwarded signal). What the host itself had blocked stays. */
		struct timespec zero = { 0, 0 };
		sigset_t take;
		int sig;

		sigemptyset(&take);
		for (sig = 1; sig < NSIG; sig++)
			if (sigismember(&blk, sig) == 1 && sigismember(&old, sig) == 0)
				sigaddset(&take, sig);
		while (sigtimedwait(&take, NULL, &zero) > 0)
			;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (reraise)
		raise(reraise); /* the host's own disposition, now that the terminal is back */
	return rc;
}
