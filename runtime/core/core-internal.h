/* core-internal.h — the sandbox core's one internal header, for the folders
 * above it (runtime/session/, runtime/cli/): first the spawn plan, what the
 * supervisor prepares for the sandbox's init (spawn.c, view.c, init.c), and
 * the records init sends back; then --no-shell's chain (noshell.c), the
 * supervisor's event loop (supervise.c) and a session sandbox's messages
 * (agent.c).
 *
 * The parent fills a struct spawn_plan completely before clone3(): every
 * string, path and array the child will need. The child (init.c, view.c) then
 * makes only system calls on that data — no malloc, no stdio, no locks — since
 * it is a copy of a process that may have had other threads. */
#ifndef WARD_CORE_INTERNAL_H
#define WARD_CORE_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "runtime/workdir/workdir-internal.h"
#include "ward/error.h"
#include "ward/sandbox.h"

#define SPAWN_MAX_SYSDIRS 12
#define SPAWN_MAX_MASKS 32

/* Paths in the plan are short host paths; the plan stays a few KiB, since
 * every page the supervisor dirties is a page fault here and a page the
 * clone copies (measured: a 180 KiB plan cost ~0.7 ms per command). */
#define SPAWN_PATH_MAX 128

/* A system directory of the host as the view reproduces it. */
struct spawn_sysdir {
	char path[16];             /* "/usr" */
	bool is_link;              /* usr-merge: "/bin" -> "usr/bin" */
	char link[SPAWN_PATH_MAX]; /* the link's target when is_link */
	/* When ward runs as root: a detached copy of the tree at path whose
	 * files of uid/gid 0 appear owned by nobody (an idmapped mount, made
	 * by the supervisor), moved into the view in place of a bind; -1 for
	 * a plain bind. Root inside is host root: without it every file only
	 * root may read (/etc/wireguard, /etc/ssl/private, a kubeconfig) would
	 * be the command's to read. */
	int fd;
};

struct spawn_protect;
struct ward_gitdir;

/* Where the sandbox's trust bundle is seen inside the view (bound over the
 * system's file, with the others of ward_ca_bundle_targets()). */
#define WARD_CA_BUNDLE_PATH "/etc/ssl/certs/ca-certificates.crt"

/* The system CA files this host has (regular files), NULL-terminated; and
 * whether the first, WARD_CA_BUNDLE_PATH, is one of them. */
const char *const *ward_ca_bundle_targets(void);
bool ward_ca_bundle_target(void);

struct spawn_plan {
	const struct ward_config *cfg;
	unsigned ns;          /* WARD_NS_* to create */
	bool view;            /* build the pivot_root view */
	char *const *argv;
	char *const *envp;
	const char *path_env; /* PATH used to find argv[0] inside */
	const char *workdir;
	const char *hostname;
	bool hostname_asked;  /* the person set it (--hostname, policy): a refusal fails */
	const struct ward_fences *fences; /* NULL when the sandbox is off */
	char uid_map[64], gid_map[64];
	int report_fd;        /* child -> supervisor records (write end) */
	/* A random number every record carries. It lives only in the
	 * supervisor and in init, whose memory nothing inside can read (init
	 * is not dumpable), so a record the command forged — had it got hold
	 * of the pipe — is told apart and ignored. */
	uint64_t report_nonce;
	int life_fd;          /* read end; EOF means the supervisor is gone */
	int life_wfd;         /* the supervisor's write end, closed in the child */
	int stdio[3];         /* the command's fds; stdin -1 means /dev/null */
	bool tty;             /* stdio[0] is the command's own pty slave: made the
			       * controlling terminal of the command's session */
	/* A terminal of the sandbox's own, from its devpts (the view): init
	 * opens it, sends its master through this socket (one message, "T"),
	 * and puts the slave on the socket's descriptor number, which stdio
	 * names. -1: none, or stdio names the slave of a host pty. */
	int pty_sock;
	struct termios pty_modes; /* the slave's modes: the host terminal's */
	struct winsize pty_size;
	int close_fds[16];    /* supervisor-only fds to close in the child, -1 ends */
	/* the network (net-internal.h): the loopback hand-over socket, the
	 * veth go-ahead pipe, the proxy's port; -1 when unused */
	int net_handover_fd;
	int net_go_fd;
	uint16_t net_port;
	const char *ca_bundle; /* TLS interception: bound over the system's CA files, or NULL */
	bool agent;           /* serve session commands from agent_fd instead of argv */
	int agent_fd;         /* the session's control socket (core/agent.c) */
	/* the view */
	const char *staging;  /* host directory the new root is mounted on */
	struct spawn_sysdir sys[SPAWN_MAX_SYSDIRS];
	int n_sys;
	struct spawn_mask {
		char path[SPAWN_PATH_MAX]; /* hidden: a file under /dev/null, a directory under tmpfs */
		bool dir;
	} masks[SPAWN_MAX_MASKS];
	int n_masks;
	/* The host's kernel knobs in /proc read-only (/proc/sys, /proc/irq,
	 * /proc/bus, /proc/fs, /proc/sysrq-trigger): run by root without
	 * Landlock's guarantee, uid 0 inside is the host's root, whom the
	 * kernel lets write every sysctl (core_pattern: a program run as root
	 * on the host at the next crash) and other root-owned files of /proc. */
	bool proc_ro;
	/* The idmapped trees' user namespace and the child that made it
	 * (parent side only; ward_spawn_plan_view_release() closes and reaps;
	 * the child runs on idmap_stack). view_planned: ward_spawn_plan_view()
	 * ran, these are set. */
	bool view_planned;
	int idmap_ns, idmap_pidfd;
	char idmap_stack[2048] __attribute__((aligned(16)));
	bool mount_is_file[16]; /* per cfg->mounts entry (first 16): source is not a directory */
	/* --no-shell: the chain init runs instead of argv (core-internal.h) */
	const struct spawn_chain *chain;
	/* the workdir (workdir-internal.h): mounts over protected paths, and
	 * the overlay's layers when ovl_upper is set */
	const struct spawn_protect *protect;
	size_t n_protect;
	const char *ovl_upper, *ovl_work, *ovl_placeholders;
	/* direct mode: git directories each under an overlay, mounted before
	 * the protected paths (workdir-internal.h) */
	const struct ward_gitdir *gitdirs;
	size_t n_gitdirs;
	/* the supervisor's locks on placeholders: closed in the child at once,
	 * so that they die with the supervisor, not with the sandbox */
	const int *lock_fds;
	size_t n_lock_fds;
	/* resource limits */
	int cgroup_fd;          /* v2: the command's cgroup for CLONE_INTO_CGROUP, or -1 */
	/* v1: the cgroups init moves itself into first thing
	 * (ward_cgroup_enter_v1()), or NULL */
	struct ward_cgroup *cg_v1;
	bool late_cgroupns;     /* v1: init unshares the cgroup namespace once moved */
	/* clone() in place of a clone3() that a container's seccomp profile
	 * answers ENOSYS: the child reads one byte here before anything else,
	 * written once the supervisor has moved it into cgroup_fd. -1: none. */
	int cg_wait_fd;
	struct rlimit_plan rlimits;
	uint64_t tmpfs_size;        /* bytes, every tmpfs of the view (ward_tmpfs_plan()) */
	bool set_ucounts;           /* write ucounts in the sandbox's user namespace */
	struct ucount_plan ucounts;
};

enum report_type {
	REPORT_ERROR = 1, /* a layer failed: err says what */
	REPORT_EXIT = 2,  /* the command ended: status is its wait status */
	REPORT_SETUP = 3, /* setup done with what it skipped: status is REPORT_SKIPPED_* */
};

/* What init left out because the container it runs in refuses it, the layer
 * being one a person did not ask for (REPORT_SETUP's status). */
#define REPORT_SKIPPED_HOSTNAME 1u /* sethostname EPERM: the UTS namespace is still new */

struct report {
	uint64_t nonce; /* spawn_plan.report_nonce */
	uint32_t type;
	int32_t status;
	struct ward_error err;
};

/* A fresh nonce for p->report_nonce (getrandom(); never fails). */
uint64_t ward_spawn_nonce(void);

/* Whether a record read from init is one of init's (its nonce is the plan's). */
static inline bool ward_report_genuine(const struct report *r, uint64_t nonce)
{
	return r->nonce == nonce &&
	       (r->type == REPORT_ERROR || r->type == REPORT_EXIT || r->type == REPORT_SETUP);
}

/* Fill the parts of the plan that describe the host (system directories,
 * masked files). Parent side. */
int ward_spawn_plan_view(struct spawn_plan *p, struct ward_error **err);

/* Close the descriptors ward_spawn_plan_view() opened. Parent side, after
 * the spawn (or instead of it); with reap, at the end of the run, also wait
 * for the child that made the idmap's user namespace. Does nothing when the
 * view was not planned. */
void ward_spawn_plan_view_release(struct spawn_plan *p, bool reap);


/* clone3() into the plan's namespaces; the child never returns from this.
 * Returns the child's pid and a pidfd in *pidfd, or -1 with *err. */
pid_t ward_spawn(struct spawn_plan *p, int *pidfd, struct ward_error **err);

/* res->hostname and res->hostname_skipped from the name init was to set and
 * what it reported skipped (REPORT_SKIPPED_*); nothing without a UTS
 * namespace. */
void ward_result_set_hostname(struct ward_result *res, const char *name, unsigned skipped);

/* A long-lived session sandbox, started (run.c): init set up exactly as for
 * ward_run(), then serving commands received on ctl_fd. */
struct ward_workdir_prep;

struct ward_cgroup;
struct agent_start {
	pid_t pid;
	int pidfd;
	unsigned ns;
	unsigned skipped;     /* REPORT_SKIPPED_* */
	char hostname[72];    /* the name init was to set */
	bool nested;          /* cfg->allow_nested */
	bool view, fenced;
	struct ward_fences_report fences;
	/* The workdir as prepared for the sandbox: placeholders in the real
	 * workdir held (flock) and the run's records kept for as long as the
	 * sandbox lives, since another ward removing a placeholder would take
	 * its mount out of the sandbox's view. Owned; let go by
	 * ward_run_stop_agent(). */
	struct ward_workdir_prep *wd;
	char *workdir;
	/* The sandbox's cgroup (cgroup-internal.h), shared by the session's
	 * commands; killed and removed by ward_run_stop_agent(). Owned. */
	struct ward_cgroup *cg;
};
int ward_run_start_agent(const struct ward_config *cfg, int ctl_fd, struct agent_start *a,
			 struct ward_error **err);

/* End the sandbox (SIGKILL, waited for) if it still runs, then let go of
 * its workdir: placeholders it alone held are removed, its run records too.
 * Leaves a->pidfd -1 and a->wd NULL; safe to call again. */
void ward_run_stop_agent(struct agent_start *a);

/* Child side. Build the view and pivot_root into it (view.c). */
int ward_view_build(const struct spawn_plan *p, struct ward_error **err);

/* Child side, after the view and the namespace's budgets: /proc's host
 * knobs read-only when the plan says (spawn_plan.proc_ro). */
int ward_view_seal_proc(const struct spawn_plan *p, struct ward_error **err);

/* Child side: the sandbox's init. Never returns. */
__attribute__((noreturn)) void ward_init_main(const struct spawn_plan *p);

/* Child side: a long-lived session sandbox's init, after setup: receive
 * commands on p->agent_fd and fork each (core/agent.c). Never returns. */
__attribute__((noreturn)) void ward_session_agent_main(const struct spawn_plan *p);

/* Child side, sandbox off: chdir, new session, exec. Never returns. */
__attribute__((noreturn)) void ward_direct_main(const struct spawn_plan *p);

/* Child side (exec.c): exec argv with the plan's PATH; on failure print the reason on
 * stderr and _exit(126/127). Never returns. */
__attribute__((noreturn)) void ward_exec_command(const struct spawn_plan *p);

/* The same for any argv, environment and PATH (the no-shell chain's segments). */
__attribute__((noreturn)) void ward_exec_argv(char *const argv[], char *const envp[],
					      const char *path_env);


/* ---- noshell.c: --no-shell mode: the chain of a command string
 * flattened into plain data by the supervisor, and run by the sandbox's init.
 *
 * The supervisor parses the string (ward/shparse.h), expands $NAME from the
 * command's scrubbed environment, and lays every argv, environment and
 * redirection out in a struct spawn_chain before clone3(). init then runs it
 * with system calls only (no malloc, no stdio): one process per segment, `|`
 * as pipes, `&&` `||` `;` by exit status, redirections opened in the child
 * after the fences are up, so Landlock judges them as it judges the command. */

#include <stdbool.h>
#include <stddef.h>

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


/* ---- supervise.c: the supervisor's event loop: output pipes, the
 * command's stdin and its terminal relayed, the child's records, its pidfd,
 * the timeout, and forwarded signals, in one epoll loop.
 *
 * The command never holds a descriptor of the host's: what it reads and
 * writes are pipes (and a pseudo-terminal) of its own, and the loop copies
 * between them and the host's streams as data comes, with no timer. */

#include <stdbool.h>
#include <sys/resource.h>
#include <termios.h>
#include <sys/types.h>

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
	/* Without a child of the loop's: the command is over when capture[0]
	 * (its leader's report) is complete; what the output pipes hold then is
	 * read and the loop ends, though background jobs keep them open
	 * (out_fd and err_fd are left open then, for the caller). */
	bool end_with_report;
	/* Called on the loop's thread at most every tick_ns while the command
	 * runs, when out or err took bytes since the last call (progress for a
	 * client). Must not block. NULL: none. */
	void (*tick)(void *ctx, const struct ward_outbuf *out, const struct ward_outbuf *err);
	void *tick_ctx;
	long long tick_ns;
	/* out */
	bool timed_out;
	bool cancelled;          /* killed because cancel_fd became readable */
	int child_status;        /* wait status of the direct child (init or the command) */
	struct rusage rusage;    /* the direct child's, its reaped descendants included */
	bool have_exit;          /* init reported the command's status */
	int cmd_status;
	bool have_error;         /* init reported a failed layer */
	unsigned skipped;        /* REPORT_SKIPPED_* from init's REPORT_SETUP */
	struct ward_error child_error;
};

/* Run the loop until the child has exited and both output pipes are at end
 * of file (or a short grace period passed). Returns 0, or -1 with *err when
 * the loop itself failed (the child is then killed and reaped). */
int ward_supervise(struct supervisor *s, struct ward_error **err);

/* How often a progress callback may be called (ward_config.progress). */
#define WARD_PROGRESS_NS (500LL * 1000000)


/* ---- agent.c: the messages between a session's supervisor and the init
 * of its long-lived sandbox (core/agent.c). */

#include <stdint.h>

#define AGENT_MAGIC 0x77617264u /* "ward" */
/* A message with this magic and up to AGENT_DRAIN_FDS descriptors instead:
 * read ends of a finished command's stdout and stderr that its background
 * jobs still hold, for init to read and drop until the jobs close them (so a
 * job never blocks on a full pipe nor dies of SIGPIPE). */
#define AGENT_DRAIN 0x64726169u /* "drai" */
#define AGENT_DRAIN_FDS 2
#define AGENT_DRAIN_MAX 64

/* The descriptors sent with each message, in this order. */
enum {
	AGENT_FD_BLOB = 0, /* memfd: script \0 then each "K=V" \0 */
	AGENT_FD_REPLY,    /* a SEQPACKET socket: the leader sends back the read
			    * ends of the command's stdout and stderr (one
			    * byte, two descriptors; none if it could not
			    * start), made with its shell — which may have been
			    * started before the command came (a spare) */
	AGENT_FD_SIDE,     /* its fd 3 (the directory it ended in) */
	AGENT_FD_REPORT,   /* struct agent_report, written once by the leader */
	AGENT_NFDS
};

struct agent_msg {
	uint32_t magic;
	int32_t timeout_s;
	char shell[16];    /* "/bin/sh" or "/bin/bash": what runs the command */
	int32_t cold;      /* not in a spare shell: one started for it (xtrace and
			    * verbose show the spare's one more level of eval) */
};

struct agent_report {
	int32_t started;   /* the shell was started */
	int32_t status;    /* its wait status */
	int32_t timed_out; /* the deadline passed: everything was killed */
	int32_t err_no;    /* why it could not start */
	int32_t forged;    /* fd 3 had bytes from another process than the shell */
	int32_t kept;      /* processes left running at the shell's exit (jobs) */
};

/* ---- policy-session.c: the policy file's "session" object ------------------- */

#include <jansson.h>

struct ward_session_options;

/* The policy's "session" object onto cfg->session, made on first use
 * (policy.c calls this). Returns 0, or -1 with *err (InvalidParameters). */
int ward_session_policy_apply(json_t *v, const char *origin, struct ward_config *cfg,
			      struct ward_error **err);

/* Release and free a policy's session options (cfg->session); NULL is fine.
 * The config frees them through this, knowing nothing of sessions. */
void ward_policy_session_free(struct ward_session_options *o);

#endif
