/* noshell-internal.h — --no-shell mode: the chain of a command string
 * flattened into plain data by the supervisor, and run by the sandbox's init.
 *
 * The supervisor parses the string (ward/shparse.h), expands $NAME from the
 * command's scrubbed environment, and lays every argv, environment and
 * redirection out in a struct spawn_chain before clone3(). init then runs it
 * with system calls only (no malloc, no stdio): one process per segment, `|`
 * as pipes, `&&` `||` `;` by exit status, redirections opened in the child
 * after the fences are up, so Landlock judges them as it judges the command. */
#ifndef WARD_NOSHELL_INTERNAL_H
#define WARD_NOSHELL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/error.h"
#include "ward/shparse.h"

#define CHAIN_MAX_SEGS 64 /* segments in one command string */

struct chain_redir {
	int fd;          /* the fd redirected */
	bool both;       /* &> and &>>: also fd 2 */
	int oflags;      /* open(2) flags, or -1 for a dup/close */
	int dup_fd;      /* for a dup: the fd copied, -1 to close fd */
	char *path;      /* for an open */
};

struct chain_seg {
	char **argv;
	char **envp;            /* the chain's environment, or one with this segment's
				   assignments in front */
	size_t n_own_env;       /* envp[0..n_own_env) are this segment's (freed with it) */
	const char *path_env;   /* PATH to look argv[0] up in */
	struct chain_redir *redirs;
	size_t n_redirs;
	enum ward_sh_op op;     /* how it joins the next: PIPE, AND, OR, SEMI, NEWLINE, END */
};

struct spawn_chain {
	struct chain_seg segs[CHAIN_MAX_SEGS];
	size_t n_segs;
};

/* Parse command, build the chain and expand it with envp. Returns a chain to
 * free with ward_chain_free(), or NULL with *err (InvalidParameters for a
 * construct --no-shell does not run, with its name and column). */
struct spawn_chain *ward_chain_prepare(const char *command, char *const envp[],
				       struct ward_error **err);

void ward_chain_free(struct spawn_chain *c);

struct spawn_plan;

/* Child side: run the plan's chain, wait for it, and return the wait status
 * of the last segment that ran. Signals in `forward` (a set init has
 * blocked) are passed on to the running pipeline's process group. System
 * calls only. */
int ward_chain_run(const struct spawn_plan *p);

/* Child side, as a PID 1 that has blocked every signal: wait until each of
 * the n processes in pids has ended, reaping any other child on the way
 * (orphans), and pass the signals a terminal would (INT, TERM, HUP, QUIT,
 * USR1, USR2) on to process group pgid. Returns the wait status of the last
 * of pids. System calls only. */
int ward_wait_group(const pid_t *pids, size_t n, pid_t pgid);

#endif
