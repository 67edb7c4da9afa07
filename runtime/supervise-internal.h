/* supervise-internal.h — the supervisor's event loop: output pipes, the
 * child's records, its pidfd, the timeout, and forwarded signals, in one
 * epoll loop. */
#ifndef WARD_SUPERVISE_INTERNAL_H
#define WARD_SUPERVISE_INTERNAL_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "runtime/spawn-internal.h"
#include "ward/outbuf.h"

struct ward_proxy;

struct supervisor {
	/* in */
	int pidfd;
	pid_t pid;
	bool sandboxed;          /* kill by pidfd (init), else the process group */
	bool forward_signals;    /* SIGINT/SIGTERM/SIGHUP/SIGQUIT go to the command */
	int out_fd, err_fd;      /* read ends, or -1 */
	int report_fd;           /* read end of the child's records */
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
