/* ward/session.h — a stateful shell in a sandbox: environment, aliases,
 * history and a working directory kept across commands.
 *
 * How to use this:
 *
 *     struct ward_config cfg;                       // the policy (ward/policy.h)
 *     struct ward_session_options opt;
 *     struct ward_session *s;
 *     struct ward_session_result r;
 *
 *     ward_config_init(&cfg);
 *     ward_session_options_init(&opt);              // fresh sandbox per command, 30 s
 *     if (ward_session_new(&cfg, &opt, &s, &err) < 0) ...;
 *     ward_session_setenv(s, "CI", "1", &err);
 *     ward_session_alias_set(s, "ll", "ls -l", &err);
 *     ward_session_exec(s, "cd src && ll", NULL, &r, &err);   // r.run: the agent tool's result
 *     // ward_session_pwd(s) is now <workdir>/src
 *     ward_session_result_release(&r);
 *     ward_session_free(s);
 *
 * Every command — typed, replayed from history, or run for cd — is expanded
 * (aliases, recursively, with a loop guard), then goes through the same front
 * door as `ward run` (ward/frontdoor.h: rate limit, parser, validators,
 * approval, under the policy in cfg) with the expanded text, before it runs,
 * and is recorded in the history with its exit code, start time and duration
 * (refusals too). The rate limit is counted in memory, per session, unless
 * the host shares one log between its sessions (ward_session_share_ratelog).
 *
 * The command runs with bash -c where installed (else /bin/sh -c; the
 * options' shell chooses) in the session's directory and environment, and
 * the front door reads it in that shell's dialect.
 * The directory it ends in (`cd`, `cd -`, `cd dir && make`, a cd anywhere in
 * the string) becomes the session's directory, if the policy allows it: the
 * workdir tree and the targets of the policy's extra binds. Otherwise the
 * session stays where it was and the result says which directory was refused.
 *
 * Isolation (chosen by the policy's "session" object or the options):
 * WARD_SESSION_FRESH runs every command in its own sandbox (ward_run());
 * WARD_SESSION_SHARED starts one sandbox for the whole session whose init forks
 * each command, as a child subreaper that kills every descendant of the command
 * when it ends or times out. The backend is local, or SSH (the remote host's
 * own ward runs the commands; see struct ward_session_ssh).
 *
 * Threads: a session may be used from several threads. Commands run one after
 * another unless ward_session_exec_options.concurrent is set, in which case
 * they run at the same time, each with its own output. The SSH master
 * connection lives as long as the thread that created the session (it gets
 * SIGKILL when that thread ends, PR_SET_PDEATHSIG); a shared sandbox lives as
 * long as the session or the process.
 */
#ifndef WARD_SESSION_H
#define WARD_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ward/error.h"
#include "ward/sandbox.h"
#include "ward/ratelimit.h"
#include "ward/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default timeout of a session's commands, in seconds. */
#define WARD_SESSION_TIMEOUT_DEFAULT 30
/* What one session may hold, and what a command may grow to: the defaults of
 * struct ward_session_limits (the policy's "session" object changes them).
 * Every bound is checked as the state grows, never after. */
/* An expanded command, in bytes: the kernel's limit for one argument
 * (MAX_ARG_STRLEN), which `sh -c` could not take beyond anyway. */
#define WARD_COMMAND_BYTES_DEFAULT (128 * 1024)
/* How deep aliases may expand into each other. */
#define WARD_ALIAS_DEPTH_MAX 32
/* How many aliases, and their names and values together, in bytes. */
#define WARD_ALIASES_MAX 256
#define WARD_ALIAS_BYTES_DEFAULT (256 * 1024)
/* The environment's variables together ("K=V"), in bytes. */
#define WARD_ENV_BYTES_DEFAULT (512 * 1024)
/* History entries kept, and their bytes (command, expansion, directory); the
 * oldest are dropped beyond either (numbers keep counting). */
#define WARD_HISTORY_MAX 1000
#define WARD_HISTORY_BYTES_DEFAULT (1024 * 1024)
/* `ward serve`: sessions alive at once, sandboxes alive at once (a shared
 * session's, and one per running command of a fresh session), the size of
 * any one response, and how long a person is given to answer an approval
 * question (MCP elicitation). */
#define WARD_SERVE_SESSIONS_DEFAULT 16
#define WARD_SERVE_SANDBOXES_DEFAULT 16
#define WARD_SERVE_RESPONSE_BYTES_DEFAULT (4 * 1024 * 1024)
#define WARD_SERVE_APPROVAL_TIMEOUT_DEFAULT 300

struct ward_session_limits {
	size_t command_bytes;    /* the command after alias expansion */
	int alias_depth;
	size_t aliases, alias_bytes;
	size_t env_bytes;
	size_t history_entries, history_bytes;
	/* ward serve only */
	size_t sessions, sandboxes;
	size_t response_bytes;
	int approval_timeout;    /* seconds */
};

/* The defaults above. */
WARD_API void ward_session_limits_init(struct ward_session_limits *l);

enum ward_session_isolation {
	WARD_SESSION_FRESH = 0, /* a fresh sandbox per command (strongest) */
	WARD_SESSION_SHARED,    /* one sandbox, one fork per command (fast) */
};

/* The SSH backend: the same session on another host. Commands run there
 * through that host's own `ward serve`, over the OpenSSH client with a
 * ControlMaster connection (its socket in a private 0700 directory removed at
 * close). Host keys are always verified: StrictHostKeyChecking=yes against
 * known_hosts (required), never accept-new. */
struct ward_session_ssh {
	char *host;         /* NULL: local backend */
	char *user;         /* NULL: ssh's default */
	int port;           /* 0: 22 */
	char *identity;     /* private key file, NULL: ssh's default */
	char *known_hosts;  /* required with host */
	char *ward;         /* the remote ward program, NULL: "ward" */
	char *workdir;      /* the remote workdir, required with host */
	char *ssh;          /* the ssh client, NULL: "ssh" */
};

/* The shell a local session's commands run in; the validators read each
 * command in its dialect. */
enum ward_session_shell {
	WARD_SESSION_SHELL_DEFAULT = 0, /* bash where installed, else sh */
	WARD_SESSION_SHELL_SH,          /* /bin/sh (dash on Debian) */
	WARD_SESSION_SHELL_BASH,        /* /bin/bash; a session cannot start without it */
};

struct ward_session_options {
	enum ward_session_isolation isolation;
	enum ward_session_shell shell; /* local sessions; ssh runs the remote ward's */
	bool empty_env;     /* start with no variables instead of the host's safe ones */
	int timeout;        /* default per command, seconds ≥ 1 */
	struct ward_session_ssh ssh;
	struct ward_session_limits limits;
};

/* Defaults: fresh isolation, the host's safe variables, 30 s, local, the
 * default limits. */
WARD_API void ward_session_options_init(struct ward_session_options *o);
/* Free the strings of o->ssh and reset to defaults. */
WARD_API void ward_session_options_release(struct ward_session_options *o);

/* The shell a local session with these options runs: "/bin/bash" or
 * "/bin/sh" (for WARD_SESSION_SHELL_BASH "/bin/bash", installed or not). */
WARD_API const char *ward_session_options_shell(const struct ward_session_options *o);

/* Take the policy's "session" object (if cfg came from a policy file with
 * one) into o: isolation, timeout, env, ssh. Returns 0 or -1 (ENOMEM). */
WARD_API int ward_session_options_from_config(const struct ward_config *cfg,
					      struct ward_session_options *o,
					      struct ward_error **err);

struct ward_session;

/* A session under the policy cfg. The session takes over what cfg owns: cfg
 * is left initialised to defaults, whatever the outcome (release it or not).
 * The workdir is cfg->workdir, or the current directory; it is the session's
 * start directory. With ssh.host set, the SSH master connection is made here
 * and a host key that does not verify fails with ExecutionFailed. With shared
 * isolation the sandbox is started here. Returns 0, or -1 with *err. */
WARD_API int ward_session_new(struct ward_config *cfg, const struct ward_session_options *o,
			      struct ward_session **out, struct ward_error **err);

/* Close: the shared sandbox and the SSH connection are ended (every process
 * gone), nothing is left behind. Waits for commands still running. NULL is fine. */
WARD_API void ward_session_free(struct ward_session *s);

/* ---- environment: the variables every later command gets -------------- */

/* Set NAME (a valid shell name) to VALUE. InvalidParameters, also when the
 * environment would grow past limits.env_bytes. */
WARD_API int ward_session_setenv(struct ward_session *s, const char *name, const char *value,
				 struct ward_error **err);
/* Remove NAME; removing one that is not set is not an error. */
WARD_API int ward_session_unsetenv(struct ward_session *s, const char *name,
				   struct ward_error **err);
/* A copy of the environment, "K=V" sorted, NULL-terminated; free with
 * ward_env_free() (ward/env.h). NULL on ENOMEM. */
WARD_API char **ward_session_env(struct ward_session *s);

/* ---- aliases ------------------------------------------------------------ */

/* Define NAME (letters, digits, _ . - + : @ %, not starting with '-').
 * More than limits.aliases aliases, or limits.alias_bytes of names and
 * values, is InvalidParameters. */
WARD_API int ward_session_alias_set(struct ward_session *s, const char *name, const char *value,
				    struct ward_error **err);
/* Remove NAME: InvalidParameters if there is no such alias. */
WARD_API int ward_session_alias_remove(struct ward_session *s, const char *name,
				       struct ward_error **err);
/* A copy of the aliases, "NAME=VALUE" sorted; free with ward_env_free(). */
WARD_API char **ward_session_aliases(struct ward_session *s);

/* Expand aliases in cmd as the shell would before parsing: the first word of
 * every simple command (at the start, after ; & && | || newline ( { and the
 * keywords then/do/else/...) when unquoted; an alias expands into its value,
 * which is expanded again, except for aliases already being expanded (the
 * loop guard: `alias ls='ls -F'` works, a=b b=a stops). Deeper than
 * limits.alias_depth, or longer than limits.command_bytes (checked as the
 * text grows, so an alias bomb stops at the limit), is InvalidParameters.
 * Returns malloc'd text in *out. */
WARD_API int ward_session_expand(struct ward_session *s, const char *cmd, char **out,
				 struct ward_error **err);

/* ---- working directory ---------------------------------------------------- */

/* The session's directory (as the command sees it), malloc'd; NULL on ENOMEM. */
WARD_API char *ward_session_pwd(struct ward_session *s);

/* Set the directory (and OLDPWD, may be NULL) without running anything:
 * absolute, or relative to the current one; inside what the policy allows
 * (checked on the text; a directory that does not exist is found by the next
 * command, which then starts in the workdir and says so). InvalidParameters. */
WARD_API int ward_session_set_cwd(struct ward_session *s, const char *dir, const char *oldpwd,
				  struct ward_error **err);

/* ---- running commands ------------------------------------------------------ */

struct ward_outbuf;

struct ward_session_exec_options {
	int timeout;        /* seconds ≥ 1; 0: the session's default */
	bool concurrent;    /* run alongside other commands instead of after them */
	bool approved;      /* the request carries approval (ward/validate) */
	const char *workdir;/* start this command here (within the policy), NULL: pwd */
	bool no_history;    /* do not record it (front ends' own queries) */
	/* SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the calling thread while
	 * the command runs go to the command (fresh isolation only: a shared
	 * sandbox's command runs on to its end or its timeout). */
	bool forward_signals;
	/* Asked when the command needs approval and `approved` is false (a
	 * person at a terminal); NULL: refused with ApprovalRequired. command
	 * is the text that will run — aliases expanded, a replayed entry's
	 * own — which is what the person must be shown. */
	bool (*ask)(void *ctx, const char *command, const struct ward_verdict *v);
	void *ask_ctx;
	/* > 0: readable means kill this command now (an eventfd a client's
	 * cancellation writes), instead of the policy's cancel_fd; the session
	 * goes on, its state as before the command. */
	int cancel_fd;
	/* The output so far while the command runs (ward_config.progress:
	 * at most every half second, only when it wrote since, never blocking).
	 * Local sessions; NULL: none. */
	void (*progress)(void *ctx, const struct ward_outbuf *out, const struct ward_outbuf *err);
	void *progress_ctx;
};

struct ward_session_result {
	struct ward_result run;   /* the agent tool's result (ward/sandbox.h) */
	uint64_t history_id;      /* its number in the history, 0 if not recorded */
	char *expanded;           /* the command after alias expansion */
	char *cwd;                /* the session's directory after it */
	char *cwd_refused;        /* where it ended when the policy refused that, or NULL */
	char *state_note;         /* why the shell's state after it was not kept, or NULL */
};

/* Run cmd. Returns 0 when a result was produced — a refusal by the front door
 * (NotAuthorized, ApprovalRequired, RateLimited), a bad parameter
 * (InvalidParameters), a failure, a timeout (Timeout, with the output so far)
 * are all results, in r->run.error — and -1 with *err only when none could be
 * (ENOMEM). Release r with ward_session_result_release(). opt may be NULL. */
WARD_API int ward_session_exec(struct ward_session *s, const char *cmd,
			       const struct ward_session_exec_options *opt,
			       struct ward_session_result *r, struct ward_error **err);

/* cd DIR as a command (`cd -- 'DIR'`): through the front door, recorded. */
WARD_API int ward_session_cd(struct ward_session *s, const char *dir,
			     struct ward_session_result *r, struct ward_error **err);

/* Run history entry number id again, as typed then (aliases expanded now,
 * the front door again). No such entry: a result with InvalidParameters. */
WARD_API int ward_session_replay(struct ward_session *s, uint64_t id,
				 const struct ward_session_exec_options *opt,
				 struct ward_session_result *r, struct ward_error **err);

WARD_API void ward_session_result_release(struct ward_session_result *r);

/* ---- history -------------------------------------------------------------- */

struct ward_history_entry {
	uint64_t id;          /* 1, 2, ... in the order commands finished */
	char *command;        /* as typed */
	char *expanded;       /* as run */
	int exit_code;
	int64_t start_ms;     /* wall clock, ms since the epoch */
	int64_t duration_ms;
	char *error_kind;     /* "Timeout", "NotAuthorized", ... or NULL */
	char *cwd;            /* the directory it started in */
	uint64_t replay_of;   /* the entry it replayed, 0 if typed */
};

enum ward_history_match {
	WARD_HISTORY_ALL = 0,    /* every entry */
	WARD_HISTORY_PREFIX,     /* the typed command starts with the query */
	WARD_HISTORY_SUBSTRING,  /* the typed or expanded command contains the query */
};

/* Entries matching query, oldest first, at most `limit` (0: all) — the most
 * recent ones when more match. *out is a malloc'd array of *n entries; free
 * with ward_history_free(). Returns 0 or -1 (ENOMEM). */
WARD_API int ward_session_history(struct ward_session *s, enum ward_history_match how,
				  const char *query, size_t limit,
				  struct ward_history_entry **out, size_t *n,
				  struct ward_error **err);
WARD_API void ward_history_free(struct ward_history_entry *e, size_t n);

/* Count this session's commands in `log` (guarded by `lock`) instead of its
 * own: a server's sessions share one per-user limit. Both outlive s. */
WARD_API void ward_session_share_ratelog(struct ward_session *s, struct ward_ratelog *log,
					 pthread_mutex_t *lock);

/* ---- the change set (overlay workdir mode) --------------------------------------- */

/* With cfg.workdir_mode WARD_WORKDIR_OVERLAY and fresh isolation, a session's
 * commands add up to one change set: the first command that changes
 * something starts it (kept, under a name its result gives), each later one
 * runs over it (sees its changes, adds its own), one at a time. Nothing of the
 * real workdir changes until the set is applied. It stays kept when the
 * session ends (ward diff/apply/discard NAME). A shared sandbox refuses
 * overlay mode (InvalidParameters). */

struct ward_changeset;

/* The set as it is now, opened (ward/workdir.h: count, entries, diff);
 * free with ward_changeset_free(). NULL with *err NULL when the session has
 * none (nothing changed yet, or applied or discarded since). */
WARD_API struct ward_changeset *ward_session_changes(struct ward_session *s,
						     struct ward_error **err);

/* Copy the set into the real workdir (ward_changeset_apply(): protected
 * paths refused, nothing applied; force skips the check for files edited
 * meanwhile); the next command starts a new one. No set: InvalidParameters. */
WARD_API int ward_session_changes_apply(struct ward_session *s, bool force,
					struct ward_error **err);

/* Drop the set; the next command starts a new one. No set: InvalidParameters. */
WARD_API int ward_session_changes_discard(struct ward_session *s, struct ward_error **err);

/* ---- information ------------------------------------------------------------ */

WARD_API enum ward_session_isolation ward_session_isolation(const struct ward_session *s);
WARD_API const char *ward_session_backend(const struct ward_session *s); /* "local", "ssh" */
/* The shell the session's commands run in: "/bin/bash" (its state is kept
 * between commands) or "/bin/sh" (the directory only). */
WARD_API const char *ward_session_shell(const struct ward_session *s);
WARD_API int ward_session_default_timeout(const struct ward_session *s);
/* The session's workdir (its start directory). */
WARD_API const char *ward_session_workdir(const struct ward_session *s);

#ifdef __cplusplus
}
#endif
#endif
