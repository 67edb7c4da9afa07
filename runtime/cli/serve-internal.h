/* serve-internal.h — `ward serve` and `ward shell` share how a session is
 * configured from the command line and the policy; the server's parts
 * (cmd-serve.c the command, rpc.c the JSON-RPC server, mcp.c its methods
 * and the MCP tools) share the server's state. */
#ifndef WARD_SERVE_INTERNAL_H
#define WARD_SERVE_INTERNAL_H

#include <stdbool.h>

#include "ward/session.h"
#include "ward/error.h"

/* A message (one line) larger than this is refused, the rest of it dropped. */
#define WARD_SERVE_LINE_MAX (1024 * 1024)

struct serve_options {
	const char *policy;   /* NULL: none */
	char *policy_owned;   /* the default path found, freed by the caller */
	const char *workdir;  /* NULL: the current directory */
	int timeout;          /* 0: the session default */
	enum ward_session_isolation isolation;
	bool isolation_set;
	enum ward_session_shell shell; /* --shell; DEFAULT: not given */
	bool empty_env;
	bool sandbox_off;
	/* the person's word on workdirs (ward/admit.h) */
	bool allow_anywhere, allow_home;
	const char *roots[16]; /* --workdir-root, as given */
	size_t n_roots;
	/* ward run's sandbox options, re-spelt "--name=value" after a name in
	 * run_argv[0], applied over the policy by ward_run_flags_apply() */
	char *run_argv[130];
	size_t run_argc;
};

/* Free what serve_options_parse() allocated. */
void serve_options_release(struct serve_options *o);

/* Parse `ward serve`/`ward shell` options (argv[0] is the subcommand). */
int serve_options_parse(int argc, char **argv, struct serve_options *o, bool *help,
			struct ward_error **err);

/* A session's configuration: the policy, WARD_LANDLOCK_ABI_MAX, the flags. */
int serve_config(const struct serve_options *o, struct ward_config *cfg, struct ward_error **err);

/* The flags' session defaults over the policy's. */
void serve_session_defaults(const struct serve_options *o, struct ward_session_options *opt);

/* Serve JSON-RPC on in_fd/out_fd until end of input. Returns the exit status. */
int ward_serve_loop(const struct serve_options *o, int in_fd, int out_fd);

/* ---- the server: rpc.c (JSON-RPC framing, threads, dispatch) and mcp.c
 * (the sessions' methods, the MCP tools) ------------------------------------------- */

#include <jansson.h>
#include <pthread.h>

#include "ward/ratelimit.h"

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603
#define RPC_SERVER_ERROR -32000 /* a session could not be made, and the like */

struct entry {
	char id[32];
	struct ward_session *s;
	int busy;                 /* requests using it right now */
	bool shared;              /* it holds a sandbox of its own (counted) */
};

/* An elicitation (MCP): a question put to the person through the client,
 * waiting for the client's response with the same id. */
#define PENDING_MAX 16
struct pending {
	unsigned long id;         /* 0: free */
	bool answered, accepted;
};

/* One line of output waiting for the writer thread. */
struct outmsg {
	struct outmsg *next;
	size_t len;
	char data[];
};

/* One message read, waiting for the main thread. */
struct inmsg {
	struct inmsg *next;
	json_t *msg;
	size_t len;
	bool cancelled;           /* named by notifications/cancelled while queued */
};

/* Requests read ahead of the main thread: at most this many bytes (a full
 * queue stops the reader, so a flooding client is held back by its pipe). */
#define INQ_BYTES_MAX (2 * WARD_SERVE_LINE_MAX)

/* A command request being answered: a client's notifications/cancelled
 * names it by id and kills its command at once (cancel_fd). */
struct inflight {
	json_t *id;
	int cancel_fd;            /* an eventfd */
	bool cancelled;
	struct inflight *next;
};

/* The cancel eventfd of the request this thread is answering, or -1. */
int rpc_current_cancel_fd(void);

struct server {
	pthread_mutex_t lock;     /* sessions, threads, sandboxes, pending */
	struct inflight *inflight; /* under in_lock (with the queue: no gap between) */
	pthread_cond_t idle;
	struct entry *sessions;
	size_t n_sessions;
	unsigned long next_id;
	int threads;              /* concurrent requests still running */
	size_t sandboxes;         /* shared sessions + fresh commands running */
	/* One rate limit for every session of the server: the user's. */
	struct ward_ratelog ratelog;
	pthread_mutex_t rate_lock;
	unsigned rate_per_minute, rate_per_hour;
	struct ward_session_limits lim;
	const struct serve_options *o;

	/* Stopping (SIGTERM, SIGINT, SIGHUP): set by the watcher thread, then
	 * every wait below is woken; cancel_fd (an eventfd, written once, never
	 * read) kills every command's sandbox (ward_config.cancel_fd). */
	volatile bool stopping;
	int cancel_fd;

	/* Output: a bounded queue the writer thread empties, so that a client
	 * that stops reading stalls the writer, never the signal handling. */
	pthread_mutex_t out_lock;
	pthread_cond_t out_cond;
	struct outmsg *oq_head, *oq_tail;
	size_t oq_bytes;
	bool writing, writer_exit, out_broken;
	int out_fd;

	/* Input: the reader thread parses lines, routes responses to pending
	 * questions, queues the rest for the main thread. */
	pthread_mutex_t in_lock;
	pthread_cond_t in_cond;
	struct inmsg *iq_head, *iq_tail;
	size_t iq_bytes;
	bool in_eof;
	int in_fd;

	/* MCP elicitation */
	bool elicit;              /* the client declared the capability */
	struct pending pending[PENDING_MAX];
	unsigned long next_question;
	pthread_cond_t answer_cond;
};

/* A JSON-RPC error: the code and message of the response. */
struct rpc_error {
	int code;
	char message[WARD_ERROR_MESSAGE_MAX + 64];
	const char *kind;         /* data.kind, when a ward error */
};

typedef int (*method_fn)(struct server *sv, json_t *params, json_t **result, struct rpc_error *e);

/* ---- rpc.c */

/* Fill e; returns -1. */
int rpc_fail(struct rpc_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A ward error (freed) as an RPC error: bad input is the caller's, the rest
 * ours. Returns -1. */
int rpc_from(struct rpc_error *e, struct ward_error *w);

/* Queue one message for the writer thread (it blocks while the queue is
 * full and the client does not read). */
void rpc_emit(struct server *sv, json_t *msg);
/* The same, dropped instead of waiting when the queue is half full. */
void rpc_emit_nowait(struct server *sv, json_t *msg);

/* ---- mcp.c */

/* The function of a JSON-RPC method (a session's, or MCP's), or NULL with e
 * filled (method not found). */
method_fn mcp_resolve(const char *method, struct rpc_error *e);

/* The session params.session names (marked busy), or the default session,
 * made on first use; NULL with e filled. mcp_give_back() releases it. */
struct entry *mcp_take_session(struct server *sv, json_t *params, struct rpc_error *e);
void mcp_give_back(struct server *sv, const char *id);

/* Close every session (the server ends). */
void mcp_close_all(struct server *sv);

/* The MCP tools (runtime/mcp-tools.json, built in): {"tools": [{"method",
 * "name", "description", "inputSchema"}...]}, parsed once; NULL if it does
 * not parse (a build's bug, which tests catch). Borrowed. */
json_t *mcp_tools(void);

#endif
