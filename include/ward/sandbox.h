/* ward/sandbox.h — run one command in a sandbox and get the agent tool's result.
 *
 * How to use this:
 *
 *     struct ward_config cfg;
 *     struct ward_result res;
 *     struct ward_error *err = NULL;
 *     char *argv[] = { "/bin/sh", "-c", "make test", NULL };
 *
 *     ward_config_init(&cfg);                 // defaults: every namespace, the view,
 *     ward_config_set_workdir(&cfg, "/src/x", &err);   // timeout 120 s, required mode
 *     if (ward_run(&cfg, argv, &res, &err) < 0)         // ward itself could not run
 *             ...;
 *     // res.exit_code, res.output, res.error (a refusal, a timeout, a layer that failed)
 *     ward_result_release(&res);
 *     ward_config_release(&cfg);
 *
 * ward_run() makes one clone3() into fresh user, mount, PID, network, IPC, UTS
 * and cgroup namespaces. The child is the sandbox's init (PID 1): it builds a
 * new root on tmpfs (system directories read-only, the workdir read-write at
 * its own path, tmpfs /tmp, fresh /proc, a minimal /dev), pivot_root()s,
 * brings up loopback, drops privileges, forks the command and reaps. The
 * caller (the supervisor) reads the output, enforces the timeout by killing
 * the whole sandbox, and fills the result. If the supervisor dies, even by
 * SIGKILL, the sandbox dies with it.
 *
 * Resources: the child is placed in a cgroup of its own (v2 with
 * CLONE_INTO_CGROUP, or v1 on hybrid hosts) with cfg->limits (ward/limits.h),
 * and gets rlimits; res->resources reports peaks, CPU time, OOM kills and the
 * mechanism of every limit applied. The cgroup is killed and removed before
 * ward_run() returns.
 *
 * Threads: the child of clone3() runs only system calls on data the parent
 * prepared, so ward_run() may be called from a multi-threaded program; the
 * sandbox is tied to the calling thread's life (PR_SET_PDEATHSIG).
 */
#ifndef WARD_SANDBOX_H
#define WARD_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ward/error.h"
#include "ward/fences.h"
#include "ward/netpolicy.h"
#include "ward/proxy.h"
#include "ward/workdir.h"
#include "ward/admit.h"
#include "ward/limits.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ward_sandbox_mode {
	WARD_SANDBOX_REQUIRED = 0, /* every layer set up, or the command fails */
	WARD_SANDBOX_OFF,          /* run directly: scrubbed env, workdir, timeout */
};

/* Namespaces; a configuration leaves some out only to measure their cost. */
#define WARD_NS_USER (1u << 0)
#define WARD_NS_MOUNT (1u << 1)
#define WARD_NS_PID (1u << 2)
#define WARD_NS_NET (1u << 3)
#define WARD_NS_IPC (1u << 4)
#define WARD_NS_UTS (1u << 5)
#define WARD_NS_CGROUP (1u << 6)
#define WARD_NS_ALL 0x7fu

enum ward_mount_kind {
	WARD_MOUNT_RO_BIND, /* --ro-bind SRC DST */
	WARD_MOUNT_BIND,    /* --bind SRC DST (writable) */
	WARD_MOUNT_TMPFS,   /* --tmpfs DST */
};

/* The sandbox's network (see ward/netpolicy.h and ward/proxy.h). */
enum ward_net_mode {
	WARD_NET_NONE = 0, /* loopback only (the default) */
	WARD_NET_PROXY,    /* only the supervisor's validating proxy is reachable */
	WARD_NET_HOST,     /* the host's network, no network namespace: asked explicitly */
};

/* How the sandbox reaches the proxy in WARD_NET_PROXY mode. */
enum ward_net_transport {
	WARD_NET_TRANSPORT_AUTO = 0, /* veth with CAP_NET_ADMIN and CAP_SYS_ADMIN, else loopback */
	WARD_NET_TRANSPORT_VETH,     /* a veth pair to a private namespace of the proxy's */
	WARD_NET_TRANSPORT_LOOPBACK, /* a listener on the sandbox's loopback, handed over */
};

#define WARD_NET_DEFAULT_PORT 3128
#define WARD_NET_DEFAULT_SUBNET "10.0.2.0/30"
struct ward_session_options;
struct ward_rules;
struct ward_outbuf;

struct ward_mount {
	enum ward_mount_kind kind;
	char *source; /* absolute, resolved; NULL for tmpfs */
	char *target; /* absolute path inside the sandbox */
};

struct ward_config {
	enum ward_sandbox_mode mode;
	unsigned namespaces;   /* WARD_NS_*; default WARD_NS_ALL */
	bool view;             /* the pivot_root filesystem view (needs WARD_NS_MOUNT) */
	bool uid0;             /* appear as uid 0 inside instead of as the caller */
	char *hostname;        /* default "ward" */
	char *workdir;         /* absolute, resolved; NULL until set (then the cwd) */
	int timeout;           /* seconds, ≥ 1; default 120 */
	bool clearenv;         /* start the environment empty */
	char **setenv;         /* "K=V" entries added after scrubbing */
	size_t n_setenv;
	struct ward_mount *mounts;
	size_t n_mounts;
	/* Where the command's standard streams go. -1 (the default) means: stdin
	 * from /dev/null, stdout and stderr captured into the result. A valid fd
	 * is relayed, never given to the command (through the host's own fd it
	 * could chmod the host's file or terminal, or leave its modes changed):
	 * the command gets pipes, and ward copies stdin in and stdout/stderr out
	 * as data comes (the CLI streams to its terminal so). When stdin_fd is a
	 * terminal the calling process is in the foreground of, and stdout_fd or
	 * stderr_fd a terminal too, the command gets a pseudo-terminal of its own
	 * instead (its controlling terminal; modes and window size copied from
	 * stdin_fd's, the size followed on SIGWINCH) for stdin and for those of
	 * stdout and stderr that are terminals; stdin_fd's terminal is raw while
	 * the command runs and restored exactly when ward_run() returns. A
	 * background caller's terminal stdin is not read: the command gets
	 * /dev/null. ward reads stdin ahead of the command (up to 64 KiB). */
	int stdin_fd, stdout_fd, stderr_fd;
	/* The kernel fences (ward/fences.h): Landlock (mode, lowest ABI accepted,
	 * highest ABI used — 0 for no cap) and the seccomp profile ("default",
	 * "strict", "off" or a profile file; NULL means "default"). */
	enum ward_landlock_mode landlock;
	int landlock_min_abi;
	int landlock_abi_max;
	char *seccomp;
	bool allow_ptrace;     /* let debuggers inside ptrace their own children */
	/* Let the command make its own sandboxes (ward inside ward, bubblewrap,
	 * podman): user namespaces (a budget of them instead of none) and the
	 * calls that build one (unshare, setns, clone with CLONE_NEW*, the
	 * mount family: the profile's @nested rules). Every other layer stays. */
	bool allow_nested;
	/* The network: mode, proxy policy, where the proxy listens inside
	 * (port; the veth pair's /30 or wider subnet: the proxy takes the first
	 * address, the sandbox the second), an optional JSON-lines audit log
	 * (appended), and TCP ports the command may connect to on its own
	 * loopback besides the proxy's (Landlock ABI >= 4 limits connect to
	 * these in proxy mode). */
	enum ward_net_mode net;
	enum ward_net_transport net_transport;
	struct ward_netpolicy netpolicy;
	uint16_t proxy_port;   /* default WARD_NET_DEFAULT_PORT */
	struct ward_cidr net_subnet; /* default WARD_NET_DEFAULT_SUBNET */
	/* appended to, one JSON line per proxy connection: opened without
	 * following a symbolic link, refused unless the caller's or root's,
	 * one link, writable by no one else, in directories no other user
	 * can write (made 0600) */
	char *net_log;
	uint16_t local_ports[16];
	size_t n_local_ports;
	/* Forward SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the calling thread
	 * to the command while it runs (the CLI does; a library host may not).
	 * Without it, while the command has a terminal of its own (see
	 * stdin_fd), those signals end the command (SIGKILL), and are raised
	 * again in the calling thread once its terminal is restored. SIGPIPE is
	 * blocked while the command runs (a relay write's EPIPE is handled). */
	bool forward_signals;
	/* The workdir (ward/workdir.h): direct, or overlay (writes held in a
	 * change set); the protected paths (NULL: the defaults; edit through
	 * ward_config_protect()); where ward keeps change sets and the records
	 * of runs (NULL: ward_state_dir()). */
	enum ward_workdir_mode workdir_mode;
	struct ward_protect *protect;
	char *state_dir;
	/* Overlay mode: continue the kept change set of this name instead of
	 * starting an empty one. The command sees the workdir with the set's
	 * changes, and what it changes is added to the set (which stays kept
	 * under its name unless applied or discarded). One run at a time per
	 * set: a second gets ExecutionFailed (EBUSY). */
	char *continue_changes;
	/* Direct mode: leave missing protected paths uncovered instead of
	 * making placeholders in the workdir for the run (reported as
	 * "unprotected"; overlay mode needs none). */
	bool no_placeholders;
	/* Given to the command as its fd 3 when ≥ 0 (default -1): a side channel
	 * (sessions read the directory a command ended in from it). */
	int pass_fd;
	/* When ≥ 0 (default -1; not owned): once this descriptor is readable
	 * (an eventfd written, a pipe's write end closed) the command's whole
	 * sandbox is killed and the result is ExecutionFailed ("cancelled").
	 * A server that is told to stop writes it so that every command it
	 * runs ends now, not at its timeout. */
	int cancel_fd;
	/* The policy's "session" object (ward/session.h), or NULL; owned. */
	struct ward_session_options *session;
	/* The front door (ward/frontdoor.h), not looked at by ward_run(): the
	 * validator rules as the policy changed them (NULL: the built-in set,
	 * owned by the configuration) and the rate limits (default 30 per minute,
	 * 300 per hour; 0 for none). */
	struct ward_rules *rules;
	unsigned rate_per_minute, rate_per_hour;
	/* The shell a command string runs with, and is validated as (policy
	 * "shell", ward run --shell, a request's "shell": "sh" or "bash"). */
	bool shell_bash;
	/* Resource limits (ward/limits.h): defaults from ward_config_init(),
	 * overridden by the policy file and flags. */
	struct ward_limits limits;
	/* Which workdirs are admitted (ward/admit.h): the person's
	 * --allow-workdir-anywhere, --allow-home-workdir and --workdir-root,
	 * the policy's workdir.roots. ward_run() refuses a workdir these do not
	 * admit, however it was given. */
	struct ward_admit admit;
	/* Make the command's cgroup (default). false, for measurements only:
	 * rlimits alone, and a limit asked for explicitly is refused. */
	bool cgroup;
	/* Progress while the command runs (captured output only): called on
	 * ward_run()'s thread at most every half second, when the command wrote
	 * since the last call, with its stdout and stderr so far (borrowed for
	 * the call). It must not block: the command's deadline waits on it.
	 * NULL (default): none. */
	void (*progress)(void *ctx, const struct ward_outbuf *out, const struct ward_outbuf *err);
	void *progress_ctx;
};

/* Defaults: required mode, every namespace, the view, hostname "ward",
 * timeout 120 s, captured output. */
WARD_API void ward_config_init(struct ward_config *cfg);

/* Free what the configuration owns and reset it to defaults. */
WARD_API void ward_config_release(struct ward_config *cfg);

/* Set the workdir: must exist and be a directory; stored resolved (realpath).
 * InvalidParameters otherwise. Refuses "/" and paths under /proc, /sys and
 * /dev always (NotAuthorized, rule "workdir-system"); the other rules of
 * ward/admit.h are ward_run()'s, which knows the person's word. */
WARD_API int ward_config_set_workdir(struct ward_config *cfg, const char *path,
				     struct ward_error **err);

/* Set the sandbox's hostname: 1 to 64 letters, digits, '-', '_' or '.' (the
 * kernel takes any bytes; a name with spaces, '/' or control characters only
 * confuses what prints it). InvalidParameters, or ENOMEM. */
WARD_API int ward_config_set_hostname(struct ward_config *cfg, const char *name,
				      struct ward_error **err);

/* Set the timeout in seconds: 1 … WARD_TIMEOUT_MAX. InvalidParameters. */
#define WARD_TIMEOUT_MAX (7 * 24 * 3600)
WARD_API int ward_config_set_timeout(struct ward_config *cfg, long long seconds,
				     struct ward_error **err);

/* Add "K=V" (K a valid name). InvalidParameters. */
WARD_API int ward_config_add_setenv(struct ward_config *cfg, const char *kv,
				    struct ward_error **err);

/* Add a mount. source must exist (resolved); target absolute, not "/", and
 * not under /proc or /dev. InvalidParameters. */
WARD_API int ward_config_add_mount(struct ward_config *cfg, enum ward_mount_kind kind,
				   const char *source, const char *target,
				   struct ward_error **err);

/* Network settings from their text forms (flags and policy file share
 * them). InvalidParameters naming what was wrong. */
WARD_API int ward_config_set_net(struct ward_config *cfg, const char *mode,
				 struct ward_error **err);   /* none, proxy, host */
WARD_API int ward_config_set_net_transport(struct ward_config *cfg, const char *name,
					   struct ward_error **err); /* auto, veth, loopback */
WARD_API int ward_config_set_proxy_port(struct ward_config *cfg, const char *port,
					struct ward_error **err);
WARD_API int ward_config_set_net_subnet(struct ward_config *cfg, const char *cidr,
					struct ward_error **err); /* IPv4, prefix 8..30 */
WARD_API int ward_config_add_local_port(struct ward_config *cfg, const char *port,
					struct ward_error **err);
/* The configuration's protected paths, made from the defaults on first use,
 * for ward_protect_add() / ward_protect_allow(). NULL with err on ENOMEM. */
WARD_API struct ward_protect *ward_config_protect(struct ward_config *cfg,
						 struct ward_error **err);
/* How one limit was applied: mechanism is "" when it was not. */
struct ward_limit_applied {
	uint64_t value;         /* bytes, count, weight; for cpus the quota in µs */
	char mechanism[64];     /* "cgroup v2 memory.max", "rlimit RLIMIT_NOFILE", "" */
};

/* Indexes of ward_resources.applied past the WARD_LIMIT_* ones. */
#define WARD_APPLIED_CORE WARD_LIMIT_COUNT
#define WARD_APPLIED_NOFILE (WARD_LIMIT_COUNT + 1)
/* the sandbox user namespace's own budgets (/proc/sys/user/max_*) */
#define WARD_APPLIED_INOTIFY_INSTANCES (WARD_LIMIT_COUNT + 2)
#define WARD_APPLIED_INOTIFY_WATCHES (WARD_LIMIT_COUNT + 3)
#define WARD_APPLIED_FANOTIFY_GROUPS (WARD_LIMIT_COUNT + 4)
#define WARD_APPLIED_FANOTIFY_MARKS (WARD_LIMIT_COUNT + 5)
#define WARD_APPLIED_NAMESPACES (WARD_LIMIT_COUNT + 6)
/* per-user counts kept per user namespace against an rlimit: a share */
#define WARD_APPLIED_SIGPENDING (WARD_LIMIT_COUNT + 7)
#define WARD_APPLIED_MSGQUEUE (WARD_LIMIT_COUNT + 8)
#define WARD_APPLIED_NPROC (WARD_LIMIT_COUNT + 9)
#define WARD_APPLIED_MEMLOCK (WARD_LIMIT_COUNT + 10)
#define WARD_APPLIED_COUNT (WARD_LIMIT_COUNT + 11)

/* What the command used, and how its limits were applied. */
struct ward_resources {
	int cgroup_version;        /* 2 or 1: the command ran in its own cgroup; 0: none */
	char note[384];            /* why no cgroup limit applied and how to get one, or "" */
	char measured_by[16];      /* "cgroup v2", "cgroup v1", "rusage" or "" */
	bool have_memory_peak, have_pids_peak, have_cpu;
	uint64_t memory_peak;      /* bytes: the cgroup's peak, or the largest process's RSS */
	uint64_t pids_peak;        /* most processes at once (cgroup pids.peak) */
	uint64_t cpu_user_us, cpu_system_us;
	bool oom_killed;           /* the OOM killer killed a process of the command */
	uint64_t oom_kills;
	struct ward_limit_applied applied[WARD_APPLIED_COUNT];
};

/* The exit codes ward gives a command it did not run to its own end, as
 * timeout(1) and env(1) give them: part of struct ward_result's exit_code. */
#define WARD_EXIT_TIMEOUT 124     /* the command's time ran out: it was killed */
#define WARD_EXIT_OWN_ERROR 125   /* ward failed (a layer, a refusal): res.error says why */
#define WARD_EXIT_CANNOT_EXEC 126 /* the program was found but could not be executed */
#define WARD_EXIT_NOT_FOUND 127   /* the program was not found */

struct ward_result {
	bool sandboxed;          /* the command ran inside the sandbox */
	bool started;            /* the command was started at all */
	int exit_code;           /* as a shell reports it: code, 128+signal, or one of
				    WARD_EXIT_* above */
	int signal;              /* signal that ended the command, 0 if none */
	bool timed_out;
	int64_t duration_ms;
	char *output;            /* stdout, then the stderr section; ≤ 64 KiB */
	size_t output_len;
	char *stderr_text;       /* stderr alone (≤ 64 KiB) */
	size_t stderr_len;
	char *stdout_text;       /* stdout alone (≤ 64 KiB), or NULL */
	size_t stdout_len;
	uint64_t stdout_bytes, stderr_bytes, truncated_bytes;
	unsigned namespaces;     /* WARD_NS_* actually created */
	bool view;               /* the pivot_root view was built */
	/* The UTS namespace's name ("" without one), or hostname_skipped when
	 * a container's seccomp profile refused sethostname for the default
	 * name (the namespace still new; a name asked for fails instead). */
	char hostname[72];
	bool hostname_skipped;
	bool nested;             /* allow_nested: the command could make sandboxes (Landlock off) */
	bool fenced;             /* fences below applied */
	struct ward_fences_report fences; /* Landlock ABI and rights, seccomp profile */
	/* The workdir: protected paths and their state, and in overlay mode the
	 * change set (discarded by ward_result_release() unless applied or kept
	 * first). NULL when the command did not get that far. */
	struct ward_workdir_report *workdir;
	struct ward_error *error; /* why the command failed to run or finish, or NULL */
	/* The network as it was: mode, transport ("veth", "loopback", "" when
	 * there is no proxy), the proxy's address as the sandbox sees it, and
	 * one record per connection to the proxy (owned, ward_result_release). */
	enum ward_net_mode net_mode;
	char net_transport[16];
	char net_proxy[64];
	struct ward_net_record *net_records;
	size_t n_net_records;
	struct ward_resources resources;
};

/* Run argv (argv[0] is looked up in the sandbox's PATH) under cfg and fill
 * res. Returns 0 when a result was produced — including a command that failed,
 * timed out, or a layer that could not be set up (res->error says which) — and
 * -1 with *err only when no result could be produced at all (e.g. out of
 * memory). Release res with ward_result_release(). */
WARD_API int ward_run(const struct ward_config *cfg, char *const argv[], struct ward_result *res,
		      struct ward_error **err);

/* Run a command string without a shell (--no-shell): ward parses it
 * (ward/shparse.h) and the sandbox's init runs the chain itself — one process
 * per segment, `|` as pipes, `&&` `||` `;` and newlines by exit status,
 * redirections (< > >> >| <> &> &>> N>&M N<&M N>&-) opened inside the sandbox
 * under its fences, $NAME and ${NAME} expanded from the command's scrubbed
 * environment (no field splitting, no globbing), one timeout for the whole
 * chain, and the exit status of the last segment that ran. Anything else
 * (substitutions, globs, heredocs, `&`, compound commands, …) is refused before
 * anything runs: res->error is InvalidParameters naming the construct and its
 * column. Returns as ward_run(). */
WARD_API int ward_run_noshell(const struct ward_config *cfg, const char *command,
			      struct ward_result *res, struct ward_error **err);

WARD_API void ward_result_release(struct ward_result *res);

/* The CLI exit status for a result: exit_code, as documented above. */
WARD_API int ward_result_exit_status(const struct ward_result *res);

#ifdef __cplusplus
}
#endif
#endif
