/* session-internal.h — what a session's backends share with session.c.
 *
 * session.c keeps the state (environment, aliases, history, directory) and
 * sends each command, expanded and past the front door, to a backend:
 * session/local.c (a fresh sandbox per command, or one shared sandbox whose
 * init, core/agent.c, forks each command) or session/ssh.c (the remote
 * host's own ward). */
#ifndef WARD_SESSION_INTERNAL_H
#define WARD_SESSION_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "ward/session.h"

/* One command as a backend runs it. */
struct session_job {
	const char *command;   /* expanded */
	char **env;            /* "K=V", NULL-terminated: the whole environment */
	const char *cwd;       /* where it starts (inside path) */
	const char *oldpwd;    /* for `cd -` */
	bool strict_cwd;       /* cwd was asked for: not there is an error, not a fallback */
	int timeout;           /* seconds */
	bool forward_signals;  /* see ward_session_exec_options */
	const char *shell;     /* the shell binary: "/bin/bash" or "/bin/sh" */
	const char *state;     /* bash: the shell state to restore first, or NULL */
	const char *options;   /* bash: `set +o` lines, restored just before the command */
	const char *jobs;      /* shared: earlier commands' jobs, "N PID TEXT\n" lines, or NULL */
	size_t report_cap;     /* how much of fd 3 to read at most */
	int cancel_fd;         /* readable: kill the command now; -1: none */
	void (*progress)(void *ctx, const struct ward_outbuf *out, const struct ward_outbuf *err);
	void *progress_ctx;    /* see ward_session_exec_options */
};

/* Where the command ended, as the backend learnt it. */
struct session_outcome {
	char *cwd, *oldpwd;    /* NULL: not reported (the command replaced the trap...) */
	bool checked;          /* the backend already applied the policy (SSH: remote) */
	bool forged;           /* the report had bytes another process than the shell
				* wrote: nothing of it taken */
	char *refused;         /* with checked: the directory the remote refused */
	/* bash: the shell's state at the end, from fd 3 (untrusted: the command
	 * could write there too; each part is checked as the API checks it).
	 * complete: the report ended with its final record; otherwise nothing
	 * below is taken. */
	bool complete;
	bool unchanged;        /* U: the command ran a program by exec, which changes
				* none of the state: the session keeps what it had */
	char **env;            /* the exported variables, "K=V" */
	char **aliases;        /* "name=value" as the shell defined them */
	char *state, *options; /* variables, functions; "#SHELLOPTS|BASHOPTS", umask */
	char *jobs_new;        /* `jobs -l` of the command's shell */
	char *jobs_alive;      /* numbers of the session's jobs still running, "N N " */
	bool sandbox_new;      /* shared: the sandbox was replaced: earlier jobs are gone */
	int kept;              /* shared: processes left running when the shell ended */
};

/* The side channel's records after "DIR\nOLDPWD\n\0" (bash sessions):
 * O<options>\0 J<jobs -l>\0 K<job numbers alive>\0 V<declare -p>\0
 * A<name=value>\0 S<declare -f>\0 and Z\0 last (E<K=V>\0 is taken too); or
 * only U\0 Z\0 (unchanged) after a command that ran a program by exec.
 * Parse them into out (complete only with Z): V's exported scalars into
 * env, its other variables but bash's own, with S, into state. */
void ward_session_parse_state(const char *text, size_t len, struct session_outcome *out);
void ward_session_outcome_release(struct session_outcome *out);

/* The most shell state (variables, functions, shopt, umask, options) a
 * session carries from one command to the next: it is restored inside the
 * next command's script, which one exec argument (128 KiB) must hold. */
#define WARD_SESSION_STATE_BYTES (64 * 1024)

struct session_backend {
	const char *name;
	/* Run the job, fill res (as ward_run does) and out. 0, or -1 with *err
	 * when no result could be produced. May run in several threads at once. */
	int (*exec)(struct ward_session *s, const struct session_job *job, struct ward_result *res,
		    struct session_outcome *out, struct ward_error **err);
	void (*close)(struct ward_session *s);
};

extern const struct session_backend ward_session_local_fresh;
extern const struct session_backend ward_session_local_shared;
extern const struct session_backend ward_session_ssh_backend;

struct ward_session {
	pthread_mutex_t lock;       /* the state below */
	pthread_mutex_t run_lock;   /* held by a command that is not concurrent */
	pthread_cond_t idle;        /* running dropped to 0 */
	int running;
	struct ward_config cfg;     /* the policy, owned */
	struct ward_session_options opt;
	char *workdir;              /* start directory (inside path) */
	char *cwd, *oldpwd;
	char **env;                 /* "K=V", NULL-terminated, owned */
	char **alias_names, **alias_values;
	size_t n_alias;
	struct ward_history_entry *hist;
	size_t n_hist, hist_bytes;
	uint64_t next_id;
	char **allowed;             /* directories the session may be in */
	size_t n_allowed;
	const struct session_backend *backend;
	void *backend_data;
	struct ward_ratelog own_log;  /* the rate limit's log, under lock */
	struct ward_ratelog *ratelog; /* own_log, or a host's shared one */
	pthread_mutex_t *rate_lock;   /* &lock, or the host's */
	/* Overlay workdir mode: the kept change set the commands add to (NULL
	 * until one changes something); changes_lock is held by a command over
	 * it, and by apply and discard, so one at a time. */
	pthread_mutex_t changes_lock;
	char *changes;
	const char *shell;          /* "/bin/bash" when installed, else "/bin/sh" */
	char *state, *options;      /* bash: the shell state kept (see session_outcome) */
	char *state_note;           /* why the last command's state was not kept, or NULL */
	char *jobs;                 /* shared: background jobs, "N PID TEXT\n" lines, or NULL */
	char *jobs_note;            /* jobs ended with a replaced sandbox, told with the next result */
};

/* The shell text a backend runs for a job: start in job->cwd (or fall back to
 * the workdir with a note), restore OLDPWD, report the final directory and
 * OLDPWD on fd 3 at exit, then the command. malloc'd, NULL on ENOMEM. */
char *ward_session_script(const struct ward_session *s, const struct session_job *job);

/* Parse what the script wrote on fd 3 ("DIR\nOLDPWD\n") into out. */
void ward_session_parse_cwd(const char *text, size_t len, struct session_outcome *out);

/* Whether a bash session may exec command after its report: one simple
 * command running a program (see script.c); its first word in word. Pure. */
bool ward_session_simple_program(const char *command, char *word, size_t size);

/* Whether a bash session's options record (the trap's "#SHELLOPTS|BASHOPTS"
 * line) has xtrace or verbose on: its commands then show the shell's own
 * steps, which a spare or an exec would change. Pure. */
bool ward_session_traced(const char *options);

/* Quote s for the shell ('...' with ' as '\''). malloc'd. */
char *ward_shell_quote(const char *s);


/* Whether the session's change set (s->changes) is still kept; changes_lock
 * held. */
bool ward_session_changes_exist(struct ward_session *s);

/* Backends' setup, called by ward_session_new() after the state is ready. */
int ward_session_local_open(struct ward_session *s, struct ward_error **err);
int ward_session_ssh_open(struct ward_session *s, struct ward_error **err);

#endif
