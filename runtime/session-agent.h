/* session-agent.h — the messages between a session's supervisor and the init
 * of its long-lived sandbox (session-agent.c). */
#ifndef WARD_SESSION_AGENT_H
#define WARD_SESSION_AGENT_H

#include <stdint.h>

#define AGENT_MAGIC 0x77617264u /* "ward" */

/* The descriptors sent with each message, in this order. */
enum {
	AGENT_FD_BLOB = 0, /* memfd: script \0 then each "K=V" \0 */
	AGENT_FD_OUT,      /* the command's stdout */
	AGENT_FD_ERR,      /* its stderr */
	AGENT_FD_SIDE,     /* its fd 3 (the directory it ended in) */
	AGENT_FD_REPORT,   /* struct agent_report, written once by the leader */
	AGENT_NFDS
};

struct agent_msg {
	uint32_t magic;
	int32_t timeout_s;
};

struct agent_report {
	int32_t started;   /* the shell was started */
	int32_t status;    /* its wait status */
	int32_t timed_out; /* the deadline passed: everything was killed */
	int32_t err_no;    /* why it could not start */
};

#endif
