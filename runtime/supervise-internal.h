/* supervise-internal.h — the supervisor's event loop: output pipes, the
 * command's stdin and its terminal relayed, the child's records, its pidfd,
 * the timeout, and forwarded signals, in one epoll loop.
 *
 * The command never holds a descriptor of the host's: what it reads and
 * writes are pipes (and a pseudo-terminal) of its own, and the loop copies
 * between them and the host's streams as data comes, with no timer. */
#ifndef WARD_SUPERVISE_INTERNAL_H
#define WARD_SUPERVISE_INTERNAL_H

#include <stdbool.h>
#include <sys/resource.h>
#include <termios.h>
#include <sys/types.h>

#include "runtime/spawn-internal.h"
#include "ward/outbuf.h"

struct ward_proxy;

/* A pipe read whole into a buffer of the caller's, until end of file or the
 * buffer is full: a record of fixed size, or a short text. */
struct supervise_capture {
	char *buf;               /* NULL: unused (a zeroed supervisor has none) */
	size_t cap, len;
	int fd;                  /* read end (owned: closed at its end, then -1) */
};

#define SUPERVISE_CAPTURES 2

struct supervisor {
	/* in */
	/* The direct child, waited for through its pidfd. -1: no child of the
	 * loop's (a session's shared sandbox runs the command): the loop ends
	 * when every pipe is at end of file, the deadline still holds. */
	int pidfd;
	pid_t pid;
	bool sandboxed;          /* kill by pidfd (init), else the process group */
	/* How the command is killed (timeout, cancel_fd) when that is someone
	 * else's to do: a shared sandbox's leader runs every command of its
	 * session, is killed whole, under its owner's lock. NULL: through
	 * pidfd as above. */
	void (*kill)(void *ctx, int sig);
	void *kill_ctx;
	bool forward_signals;    /* SIGINT/SIGTERM/SIGHUP/SIGQUIT go to the command */
	int out_fd, err_fd;      /* read ends, or -1 */
	/* Where out_fd's and err_fd's bytes go: a host fd written as they come
	 * (not owned), or -1 to keep them in out/err. */
	int out_sink, err_sink;
	/* The command's terminal (a pty master, owned; O_NONBLOCK): what the
	 * command writes on it goes to pty_sink, what the host's stdin gives
	 * is written to it. -1 without one. */
	int pty_fd, pty_sink;
	/* stdin: the host fd read (not owned), and where it goes: the write end
	 * of the command's stdin pipe (owned, O_NONBLOCK), or pty_fd. -1: none. */
	int in_src, in_dst;
	/* The host terminal put in raw mode while the loop runs, restored to
	 * tty_saved however the loop ends; its window size is followed
	 * (SIGWINCH) onto pty_fd. -1: none. */
	int tty_fd;
	struct termios tty_saved;
	int report_fd;           /* read end of the child's records */
	struct supervise_capture capture[SUPERVISE_CAPTURES];
	uint64_t report_nonce;   /* what init's records carry (spawn_plan) */
	struct ward_outbuf *out, *err;
	long long deadline_ns;   /* monotonic */
	struct ward_proxy *proxy; /* the network proxy to drive, or NULL */
	int cancel_fd;           /* readable: kill the child now; -1: none */
	/* out */
	bool timed_out;
	bool cancelled;          /* killed because cancel_fd became readable */
	int child_status;        /* wait status of the direct child (init or the command) */
	struct rusage rusage;    /* the direct child's, its reaped descendants included */
	bool have_exit;          /* init reported the command's status */
	int cmd_status;
	bool have_error;         /* init reported a failed layer */
	struct ward_error child_error;
};

/* Run the loop until the child has exited and both output pipes are at end
 * of file (or a short grace period passed). Returns 0, or -1 with *err when
 * the loop itself failed (the child is then killed and reaped). */
int ward_supervise(struct supervisor *s, struct ward_error **err);

#endif
