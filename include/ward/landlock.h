/* ward/landlock.h — the Landlock fence: negotiate the ABI, plan, apply.
 *
 * How to use this:
 *
 *     // in the supervisor, before clone: everything that allocates or may
 *     // fail because of the configuration
 *     struct ward_landlock_config cfg;
 *     ward_landlock_config_init(&cfg);
 *     cfg.workdir = "/home/me/project";
 *     int abi = ward_landlock_abi(NULL);          // cached; < 0 is -errno
 *     struct ward_landlock_plan *plan;
 *     if (ward_landlock_plan_new(&cfg, abi, &plan, &err) < 0)
 *             ...                                  // ExecutionFailed, reason in err
 *     const struct ward_landlock_report *r = ward_landlock_plan_report(plan);
 *
 *     // in the sandbox's init, after pivot_root, no_new_privs and the
 *     // capability drop (syscalls only: no malloc, no stdio, no locks)
 *     if (ward_landlock_apply(plan, &err) < 0)     // err: preallocated storage
 *             ...
 *
 * The plan grants read and execute on everything under `read_root` (the
 * sandbox's "/"), and write, create, remove, truncate and refer only under
 * the workdir, the extra writable paths, /tmp and /dev/shm, plus write (and
 * terminal ioctls, ABI >= 5) on the few device nodes programs need. Every
 * right the kernel's ABI has is handled, so nothing falls through unhandled;
 * all rules live in one ruleset, so cross-directory renames inside the
 * workdir keep working (ABI >= 2). Network rules (ABI >= 4) limit TCP connect
 * to listed ports when asked; bind stays free unless asked too. Scoping
 * (ABI >= 6) confines abstract UNIX sockets and signals to the sandbox.
 */
#ifndef WARD_LANDLOCK_H
#define WARD_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest Landlock ABI ward knows; a newer kernel is used at this level. */
#define WARD_LANDLOCK_ABI_KNOWN 7

enum ward_landlock_mode {
	WARD_LANDLOCK_REQUIRED = 0, /* a missing required right fails the command */
	WARD_LANDLOCK_BEST_EFFORT,  /* use what the kernel has, report the rest */
	WARD_LANDLOCK_OFF,          /* do not apply Landlock */
};

/* Features a policy can require beyond what min_abi implies. Each names the
 * ABI that brought it. */
enum {
	WARD_LANDLOCK_NEED_FS = 1u << 0,        /* filesystem write restriction, ABI 1 */
	WARD_LANDLOCK_NEED_REFER = 1u << 1,     /* rename/link across directories, ABI 2 */
	WARD_LANDLOCK_NEED_TRUNCATE = 1u << 2,  /* truncate, ABI 3 */
	WARD_LANDLOCK_NEED_NET = 1u << 3,       /* TCP port rules, ABI 4 */
	WARD_LANDLOCK_NEED_IOCTL_DEV = 1u << 4, /* device ioctls, ABI 5 */
	WARD_LANDLOCK_NEED_SCOPE = 1u << 5,     /* abstract UNIX socket and signal scoping, ABI 6 */
};

#define WARD_LANDLOCK_MAX_PORTS 64

struct ward_landlock_config {
	enum ward_landlock_mode mode;
	int min_abi;       /* the kernel must offer at least this ABI (default 1) */
	int abi_max;       /* use at most this ABI; 0 for no cap */
	unsigned require;  /* WARD_LANDLOCK_NEED_* (default WARD_LANDLOCK_NEED_FS) */
	const char *read_root;            /* read + execute below it (default "/") */
	const char *workdir;              /* read-write, must exist; NULL for none */
	const char *const *rw_paths;      /* more read-write paths that must exist, NULL-terminated */
	bool tmp;                         /* /tmp and /dev/shm read-write (default true) */
	bool devices;                     /* /dev/null, /dev/tty, /dev/pts... (default true) */
	bool restrict_connect;            /* TCP connect only to connect_ports (ABI 4) */
	uint16_t connect_ports[WARD_LANDLOCK_MAX_PORTS]; /* the proxy's port first */
	size_t n_connect_ports;
	bool restrict_bind;               /* TCP bind only to bind_ports (stricter policy) */
	uint16_t bind_ports[WARD_LANDLOCK_MAX_PORTS];
	size_t n_bind_ports;
	bool scope_abstract_unix;         /* ABI 6 (default true) */
	bool scope_signal;                /* ABI 6 (default true) */
};

#define WARD_LANDLOCK_NAMES_MAX 768

/* What was applied, for the result. Plain data, copy it as it is. */
struct ward_landlock_report {
	int abi;          /* ABI enforced; 0 when Landlock is not applied */
	int kernel_abi;   /* what the kernel offers; 0 when it has none */
	int abi_max;      /* the configured cap, 0 for none */
	char status[16];  /* "enforced", "off" or "unavailable" */
	/* Comma-separated right names: "fs.execute,fs.write_file,...,
	 * net.connect_tcp,scope.signal". */
	char enforced[WARD_LANDLOCK_NAMES_MAX];
	/* What the configuration would have used that this kernel (or the cap)
	 * could not give, each with the ABI that brings it:
	 * "fs.ioctl_dev (abi 5),scope.signal (abi 6)"; "" when nothing. */
	char unavailable[WARD_LANDLOCK_NAMES_MAX];
};

struct ward_landlock_plan;

/* Fill cfg with the defaults: required, min_abi 1, NEED_FS, read_root "/",
 * tmp and devices on, both scopes on, no network rules. */
WARD_API void ward_landlock_config_init(struct ward_landlock_config *cfg);

/* The kernel's Landlock ABI (>= 1), asked once and cached for the process.
 * On failure returns -errno and, when err is not NULL, fills it: ENOSYS means
 * Landlock is not built into this kernel, EOPNOTSUPP that it is built but
 * disabled at boot (the lsm= command line). Safe to call from any thread. */
WARD_API int ward_landlock_abi(struct ward_error **err);

/* Forget the cached ABI (tests). */
WARD_API void ward_landlock_abi_reset(void);

/* The rights each ABI has (pure): filesystem access bits, network access
 * bits, scope bits. abi <= 0 gives 0; abi above WARD_LANDLOCK_ABI_KNOWN is
 * treated as WARD_LANDLOCK_ABI_KNOWN. */
WARD_API uint64_t ward_landlock_fs_rights(int abi);
WARD_API uint64_t ward_landlock_net_rights(int abi);
WARD_API uint64_t ward_landlock_scopes(int abi);

/* Write the comma-separated names of the given rights into buf (always
 * NUL-terminated, cut at size). Returns the length the full text needs. */
WARD_API size_t ward_landlock_rights_names(uint64_t fs, uint64_t net, uint64_t scopes,
					   char *buf, size_t size);

/* Compute the plan for cfg on a kernel offering kernel_abi (from
 * ward_landlock_abi(); a negative value is the -errno it gave). Pure: touches
 * no OS state, so it is unit-tested for every ABI.
 * On success *out owns a new plan (free with ward_landlock_plan_free) and 0 is
 * returned. Fails with -1 and err (kind ExecutionFailed) when the mode is
 * required and the kernel lacks Landlock, is below min_abi, or lacks a right
 * in cfg->require (the message names the right and its ABI); with kind
 * InvalidParameters for a bad configuration (relative path, min_abi above
 * abi_max, too many ports); with ENOMEM. Mode off gives a plan that applies
 * nothing. */
WARD_API int ward_landlock_plan_new(const struct ward_landlock_config *cfg, int kernel_abi,
				    struct ward_landlock_plan **out, struct ward_error **err);

WARD_API void ward_landlock_plan_free(struct ward_landlock_plan *plan);

/* The report of what the plan enforces; owned by the plan. */
WARD_API const struct ward_landlock_report *
ward_landlock_plan_report(const struct ward_landlock_plan *plan);

/* The ruleset's handled masks (for tests and for `ward doctor`). */
WARD_API void ward_landlock_plan_masks(const struct ward_landlock_plan *plan, uint64_t *fs,
				       uint64_t *net, uint64_t *scopes);

/* The access granted to the n-th path rule (its path in *path), or -1 past
 * the end. Optional rules (device nodes, /tmp) are skipped at apply time when
 * the path does not exist. */
WARD_API int ward_landlock_plan_rule(const struct ward_landlock_plan *plan, size_t n,
				     const char **path, uint64_t *access);

/* Text forms for the policy file, flags and environment (pure). Each
 * returns 0, or -1 with err of kind InvalidParameters naming the bad text.
 *
 * ward_landlock_parse_mode: "required", "best-effort", "off".
 * ward_landlock_parse_abi: a number 0..WARD_LANDLOCK_ABI_KNOWN, for
 *   --landlock-abi-max, WARD_LANDLOCK_ABI_MAX and the policy's min_abi
 *   ("what" names the setting in the message).
 * ward_landlock_parse_need: one name ("fs", "refer", "truncate", "net",
 *   "ioctl_dev", "scope"), ORed into *need. */
WARD_API int ward_landlock_parse_mode(const char *s, enum ward_landlock_mode *mode,
				      struct ward_error **err);
WARD_API int ward_landlock_parse_abi(const char *what, const char *s, int *abi,
				     struct ward_error **err);
WARD_API int ward_landlock_parse_need(const char *s, unsigned *need, struct ward_error **err);

/* The name of a mode as ward_landlock_parse_mode() reads it. */
WARD_API const char *ward_landlock_mode_name(enum ward_landlock_mode mode);

/* Apply the plan to the calling thread (and what it later forks and execs):
 * open each path O_PATH, add the rules, restrict self. Only system calls:
 * meant for the sandbox's init after fork/clone, with err pointing to
 * preallocated storage. no_new_privs must be set first (or the caller must
 * hold CAP_SYS_ADMIN). A plan that applies nothing returns 0 at once.
 * Returns 0, or -1 with err naming the step, the path and errno (ENOENT for a
 * missing workdir or writable path; EPERM from restrict_self without
 * no_new_privs; E2BIG when too many domains are stacked). */
WARD_API int ward_landlock_apply(const struct ward_landlock_plan *plan, struct ward_error **err);

#ifdef __cplusplus
}
#endif
#endif
