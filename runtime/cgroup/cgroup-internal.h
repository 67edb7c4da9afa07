/* cgroup-internal.h — one cgroup per command: choose v2 or v1, create it with
 * the limits, place the child in it, read back what the command used, kill
 * and remove it.
 *
 * Where the cgroups live:
 *  - cgroup v2 as root: <mount>/ward/<name>, ward/ made once with the
 *    controllers enabled in its cgroup.subtree_control;
 *  - cgroup v2 unprivileged: the delegated cgroup ward runs in (systemd's
 *    Delegate=yes). ward moves its own process into <delegated>/ward-supervisor
 *    (a cgroup with processes cannot enable controllers for its children) and
 *    makes <delegated>/<name>;
 *  - cgroup v2 at the root of a cgroup namespace that is not the hierarchy's
 *    (a container's cgroup, --cgroupns=private), as root too: the same, the
 *    container's cgroup being the delegated one (writable by ward's user, ward
 *    its only process);
 *  - cgroup v1 (hybrid hosts): <hierarchy>/ward-<name> at the top of the
 *    memory and pids hierarchies (and cpu, cpuacct, blkio when asked).
 *
 * <name> is "w<pid>-<start time>-<n>": the supervisor's pid and its start
 * time (field 22 of /proc/<pid>/stat), so a later ward can tell a cgroup
 * whose owner died (killed by SIGKILL, say) from one in use, and remove only
 * the former.
 *
 * The v2 child is placed atomically with clone3(CLONE_INTO_CGROUP). In v1,
 * the child moves itself in first thing, through descriptors of each
 * hierarchy's tasks file the supervisor opened (ward_cgroup_enter_v1()). */
#ifndef WARD_CGROUP_INTERNAL_H
#define WARD_CGROUP_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/resource.h>

#include "ward/error.h"
#include "ward/limits.h"
#include "ward/sandbox.h"

enum cg_v1 { CG1_MEMORY, CG1_PIDS, CG1_CPU, CG1_CPUACCT, CG1_BLKIO, CG1_COUNT };

#define CGROUP_V1_FDS CG1_COUNT

struct ward_cgroup {
	int version;              /* 2, 1, or 0 (none) */
	char name[64];
	char dir[PATH_MAX];       /* v2: the command's cgroup */
	int dir_fd;               /* v2: for CLONE_INTO_CGROUP, else -1 */
	char v1[CG1_COUNT][PATH_MAX]; /* v1: the command's cgroup per hierarchy, "" if none */
	int tasks_fd[CG1_COUNT];  /* v1: tasks, for the child to move itself in, -1 if none */
	bool own_parent;          /* v2 as root: the parent "ward" cgroup is ward's to remove
				     when empty (not a delegated cgroup ward was given) */
};

/* What cgroups this host and user offer (no changes made). */
struct cgroup_probe {
	int version;              /* the one ward would use: 2, 1 or 0 */
	char v2_mount[PATH_MAX];  /* "" when no cgroup2 is mounted */
	char v2_controllers[256]; /* of the mount root */
	char v2_base[PATH_MAX];   /* where command cgroups would go, when version == 2 */
	bool v2_root;             /* v2 as root: <mount>/ward, made by ward */
	bool v2_move_self;        /* v2 unprivileged: ward must move into ward-supervisor */
	bool v2_in_ns;            /* the cgroup2 mount's root is a cgroup namespace's, not
				     the hierarchy's: a container's cgroup */
	char v1_mount[CG1_COUNT][PATH_MAX]; /* v1 hierarchies, "" when absent */
	bool v1_writable;
	char v2_reason[384];      /* why v2 is not usable, with the fix, or "" */
	char reason[384];         /* when version == 0: why, and how to get one */
};

void ward_cgroup_probe(struct cgroup_probe *p);

/* Where the hierarchies are mounted (v2_mount, v1_mount[]), as
 * ward_cgroup_probe() finds them. _standard() looks only where systemd
 * mounts them: 2 for a cgroup2 /sys/fs/cgroup (v1 hierarchies elsewhere
 * are then unknown), 1 for the hybrid layout with its cgroup2 and all five
 * v1 hierarchies found, 0 for anything else (p then as it was). _table()
 * reads the mount table. */
int ward_cgroup_mounts_standard(struct cgroup_probe *p);
void ward_cgroup_mounts_table(struct cgroup_probe *p);

void ward_cgroup_init(struct ward_cgroup *cg);

/* Make the command's cgroup and apply lim, recording each limit's mechanism
 * in res. With no usable cgroup: 0 and cg->version == 0 when no limit was
 * asked for explicitly (res->note says so), else -1 with an ExecutionFailed
 * error saying which limit cannot be applied and why. Also applies rlimit
 * bookkeeping (the rlimits themselves are set by the child). Removes cgroups
 * left by wards that died. On failure nothing is left behind. */
int ward_cgroup_create(struct ward_cgroup *cg, const struct ward_limits *lim,
		       struct ward_resources *res, struct ward_error **err);

/* No cgroup by choice (--no-cgroup): 0 with res->note saying so, or -1 with
 * an InvalidParameters error when lim asks for a cgroup limit explicitly. */
int ward_cgroup_none(const struct ward_limits *lim, struct ward_resources *res,
		     struct ward_error **err);

/* Child side, before it does anything else: move the calling process into
 * the v1 cgroups by writing "0" to each tasks descriptor ward_cgroup_create()
 * opened, and close them. The caller must be single-threaded (init is: the
 * clone copies only the calling thread), so moving the thread moves the
 * process. Why not the supervisor writing the child's pid to cgroup.procs:
 * that takes the write side of the kernel's global threadgroup lock, which
 * waits for an RCU grace period (2–15 ms on this kind of machine); a thread
 * moving itself skips that lock (cgroup_procs_write_start()). Permission is
 * checked against the credentials of the opener, the supervisor, so the
 * child's new user namespace does not matter. -1 with errno in *err. */
int ward_cgroup_enter_v1(struct ward_cgroup *cg, struct ward_error **err);

/* Close the supervisor's copies of the v1 tasks descriptors. */
void ward_cgroup_close_fds(struct ward_cgroup *cg);

/* Read peaks, CPU time and OOM kills into res (before destroy). */
void ward_cgroup_collect(struct ward_cgroup *cg, struct ward_resources *res);

/* Kill what is left and remove the cgroup(s), waiting briefly for dying
 * processes to leave. */
void ward_cgroup_destroy(struct ward_cgroup *cg);

/* The rlimits every command gets: RLIMIT_CORE 0, RLIMIT_NOFILE capped,
 * RLIMIT_FSIZE when file_size is set. Filled by the parent, set by the child. */
struct rlimit_plan {
	struct rlimit core, nofile, fsize;
	bool set_fsize;
};
void ward_rlimits_plan(const struct ward_limits *lim, struct rlimit_plan *rp,
		       struct ward_resources *res);
int ward_rlimits_apply(const struct rlimit_plan *rp, struct ward_error **err);

/* The size of every tmpfs of the view: --tmpfs-size / "tmpfs_size" when
 * given, else the memory limit when a cgroup applied it (res says), else
 * WARD_TMPFS_DEFAULT. Recorded in res (WARD_LIMIT_TMPFS_SIZE). Pure. */
uint64_t ward_tmpfs_plan(const struct ward_limits *lim, struct ward_resources *res);

/* The sandbox user namespace's own kernel budgets, /proc/sys/user/max_*:
 * the per-user counts the kernel keeps per user namespace, checked at every
 * level up to the host's. Written by init inside its namespace, where it
 * holds CAP_SYS_RESOURCE (kernel/ucount.c, set_permissions()), before its
 * capabilities go. */
enum {
	UCOUNT_INOTIFY_INSTANCES,
	UCOUNT_INOTIFY_WATCHES,
	UCOUNT_FANOTIFY_GROUPS,
	UCOUNT_FANOTIFY_MARKS,
	UCOUNT_SHARED_N, /* the ones above: a share of the host user's */
	/* New user namespaces: none. The seccomp filter refuses them too;
	 * this is the kernel's own count, whatever a filter lets by. Every
	 * other kind of namespace needs CAP_SYS_ADMIN in the user namespace
	 * it is made in, which nothing inside has or can regain (bounding set
	 * empty, SECBIT_NOROOT locked, no_new_privs) except through a new user
	 * namespace: so this one count closes them all, and the other
	 * max_*_namespaces are left as they are (each write costs ~1.5 us of
	 * sysctl lookup in init). */
	UCOUNT_USER_NS = UCOUNT_SHARED_N,
	/* Allowed to nest, the command holds every capability in user
	 * namespaces of its own, and a new user namespace's counts are
	 * unlimited: every kind of namespace it makes there counts only
	 * against this level and the host user's. So with nesting, each kind
	 * gets a share too, or one sandbox takes the host user's whole
	 * budget of, say, UTS namespaces (96365 here), and the host user's
	 * own unshare(CLONE_NEWUTS) fails with ENOSPC. */
	UCOUNT_MNT_NS,
	UCOUNT_PID_NS,
	UCOUNT_NET_NS,
	UCOUNT_IPC_NS,
	UCOUNT_UTS_NS,
	UCOUNT_CGROUP_NS,
	UCOUNT_TIME_NS,
	UCOUNT_N,
};
/* The divisor of the host user's budget the sandbox gets: a quarter, so
 * that the host user keeps at least three quarters of what it had free
 * while one sandbox holds all of its share. */
#define WARD_UCOUNT_SHARE 4
struct ucount_plan {
	int value[UCOUNT_N]; /* -1: leave as it is (the host has no such count) */
	/* SysV shared memory of the sandbox's own IPC namespace, bytes, 0 to
	 * leave: segments are tmpfs pages too, which no one is charged for
	 * without a cgroup; capped like a tmpfs (kernel.shmall, shmmax) */
	uint64_t shm_bytes;
	/* The per-user counts the kernel checks against an rlimit, kept per
	 * user namespace too (queued signals, POSIX message queue bytes,
	 * processes, locked SysV shared memory and hugetlb memfds): the
	 * sandbox's own level gets a share of the caller's rlimit, so it cannot
	 * use up what the host user's other processes need. */
	bool set_sigpending, set_msgqueue, set_nproc, set_memlock;
	struct rlimit sigpending, msgqueue, nproc, memlock;
};
/* The share of a host budget (pure): host / WARD_UCOUNT_SHARE, at least 1
 * when the host allows any; -1 when host is unknown (< 0). */
long ward_ucount_share(long host);
/* Fill up from the host's /proc/sys/user (parent side); record in res. */
void ward_ucounts_plan(struct ucount_plan *up, bool nested, struct ward_resources *res);
/* Write the plan into the current user namespace's /proc/sys/user and the
 * IPC namespace's kernel.shm* (init). */
int ward_ucounts_apply(const struct ucount_plan *up, struct ward_error **err);

/* A cgroup name of ours: parse "w<pid>-<start>-<n>" (pure). */
bool ward_cgroup_name_parse(const char *name, long *pid, unsigned long long *start);

#endif
