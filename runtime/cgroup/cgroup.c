/* cgroup.c — one cgroup per command; see cgroup-internal.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "runtime/util/util-internal.h"

/* Paths here are cgroupfs paths well under PATH_MAX; a truncated one would
 * only fail at open or mkdir, with its name in the message. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* v1 command cgroups are named ward-<name> at the top of each hierarchy */
#define V1_PREFIX "ward-"

static const char *const v1_names[CG1_COUNT] = { "memory", "pids", "cpu", "cpuacct", "blkio" };

/* The controllers ward enables for its v2 children, when the kernel has them. */
static const char *const v2_wanted[] = { "memory", "pids", "cpu", "io" };

#define FIX_DELEGATE                                                                               \
	"run ward in a delegated cgroup: systemd-run --user --scope -p Delegate=yes ward run ..."

/* ---- small file helpers ------------------------------------------------ */

static ssize_t read_at(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return ward_read_file(path, buf, size);
}

static int write_at(const char *dir, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int write_at(const char *dir, const char *file, const char *fmt, ...)
{
	char path[PATH_MAX + 64], val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return ward_write_file(path, val);
}

static bool exists_at(const char *dir, const char *file)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

/* "key value" lines (cpu.stat, memory.events, memory.oom_control). */
static bool keyed_value(const char *text, const char *key, uint64_t *out)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == ' ') {
			*out = strtoull(p + n + 1, NULL, 10);
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static bool read_u64(const char *dir, const char *file, uint64_t *out)
{
	char buf[64];

	if (read_at(dir, file, buf, sizeof(buf)) <= 0 || buf[0] < '0' || buf[0] > '9')
		return false;
	*out = strtoull(buf, NULL, 10);
	return true;
}

/* Whether a space-separated list contains word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
		p += n;
	}
	return false;
}

/* Field 22 of /proc/<pid>/stat, 0 when the process does not exist. */
static unsigned long long start_time(long pid)
{
	char path[64], buf[1024], *p;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (ward_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')'); /* the command name may contain spaces and parentheses */
	if (!p)
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

bool ward_cgroup_name_parse(const char *name, long *pid, unsigned long long *start)
{
	char *end;
	long p;
	unsigned long long s;

	if (name[0] != 'w' || name[1] < '1' || name[1] > '9')
		return false;
	p = strtol(name + 1, &end, 10);
	if (*end != '-' || end[1] < '0' || end[1] > '9')
		return false;
	s = strtoull(end + 1, &end, 10);
	if (*end != '-' || end[1] < '0' || end[1] > '9')
		return false;
	strtoull(end + 1, &end, 10);
	if (*end)
		return false;
	*pid = p;
	*start = s;
	return true;
}

/* ---- where the hierarchies are ------------------------------------------ */

void ward_cgroup_mounts_table(struct cgroup_probe *p)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], opts[512];
		char *sep = strstr(line, " - ");
		int i;

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %511s", fstype, opts) != 2)
			continue;
		if (strcmp(fstype, "cgroup2") == 0 && !p->v2_mount[0]) {
			snprintf(p->v2_mount, sizeof(p->v2_mount), "%s", mnt);
			continue;
		}
		if (strcmp(fstype, "cgroup") != 0)
			continue;
		for (i = 0; i < CG1_COUNT; i++) {
			char *tok, *save = NULL, copy[512];

			snprintf(copy, sizeof(copy), "%s", opts);
			for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, v1_names[i]) == 0 && !p->v1_mount[i][0])
					snprintf(p->v1_mount[i], sizeof(p->v1_mount[i]), "%s", mnt);
		}
	}
	fclose(f);
}

/* systemd's layout, which nearly every host has, is told by one statfs per
 * hierarchy instead of reading and parsing /proc/self/mountinfo (~0.15 ms,
 * on every command). A controller's own file proves that a v1 mount at a
 * standard path is that controller's hierarchy. */
#define STD_ROOT "/sys/fs/cgroup"

/* The root of the pids hierarchy has no pids.* file: one that were not the
 * pids hierarchy would fail loudly at the first pids.max written. */
static const char *const v1_marks[CG1_COUNT] = {
	"memory.limit_in_bytes", NULL, "cpu.shares", "cpuacct.usage", "blkio.reset_stats",
};

int ward_cgroup_mounts_standard(struct cgroup_probe *p)
{
	char path[PATH_MAX], link[64];
	struct statfs sf;
	int i;

	if (statfs(STD_ROOT, &sf) < 0)
		return 0;
	if (sf.f_type == CGROUP2_SUPER_MAGIC) {
		snprintf(p->v2_mount, sizeof(p->v2_mount), STD_ROOT);
		return 2;
	}
	if (sf.f_type != TMPFS_MAGIC || statfs(STD_ROOT "/unified", &sf) < 0 ||
	    sf.f_type != CGROUP2_SUPER_MAGIC)
		return 0;
	for (i = 0; i < CG1_COUNT; i++) {
		ssize_t n;

		snprintf(path, sizeof(path), STD_ROOT "/%s", v1_names[i]);
		/* "cpu" is often a link to "cpu,cpuacct": the hierarchy by its
		 * own name, as the mount table gives it */
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && !memchr(link, '/', (size_t)n)) {
			link[n] = '\0';
			snprintf(path, sizeof(path), STD_ROOT "/%s", link);
		}
		if (statfs(path, &sf) < 0 || sf.f_type != CGROUP_SUPER_MAGIC)
			goto other;
		snprintf(p->v1_mount[i], sizeof(p->v1_mount[i]), "%s", path);
		if (!v1_marks[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", p->v1_mount[i], v1_marks[i]);
		if (access(path, F_OK) < 0)
			goto other;
	}
	snprintf(p->v2_mount, sizeof(p->v2_mount), STD_ROOT "/unified");
	return 1;
other:
	for (i = 0; i < CG1_COUNT; i++)
		p->v1_mount[i][0] = '\0';
	return 0;
}

/* Our own v2 cgroup path relative to the mount ("" when unknown). */
static void own_v2_cgroup(char *out, size_t size)
{
	char buf[4096], *z;

	out[0] = '\0';
	if (ward_read_file("/proc/self/cgroup", buf, sizeof(buf)) <= 0)
		return;
	z = strstr(buf, "0::");
	if (!z || (z != buf && z[-1] != '\n'))
		return;
	z += 3;
	z[strcspn(z, "\n")] = '\0';
	snprintf(out, size, "%s", strcmp(z, "/") == 0 ? "" : z);
}

/* A cgroup delegated to this user: its directory, cgroup.procs and
 * cgroup.subtree_control are ours, and systemd marked it delegated (the
 * user.delegate / trusted.delegate attribute, systemd >= 251), or it is in
 * this user's own systemd manager (user@UID.service: the user manager does
 * not always mark its scopes), or its parent is not ours (a delegation
 * boundary made by hand), or it is in a cgroup namespace rooted below the
 * hierarchy's root (in_ns: a container's cgroup, which its engine gave the
 * container whole; no systemd of the host manages what is below it). */
static bool delegated(const char *dir, bool in_ns)
{
	char path[PATH_MAX + 32], parent[PATH_MAX], val[8], manager[64];
	struct stat st, pst;
	char *slash;

	if (stat(dir, &st) < 0 || st.st_uid != geteuid())
		return false;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (access(path, W_OK) != 0)
		return false;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	if (access(path, W_OK) != 0)
		return false;
	if (in_ns)
		return true;
	memset(val, 0, sizeof(val));
	if ((getxattr(dir, "user.delegate", val, sizeof(val) - 1) > 0 ||
	     getxattr(dir, "trusted.delegate", val, sizeof(val) - 1) > 0) &&
	    val[0] == '1')
		return true;
	snprintf(manager, sizeof(manager), "/user@%u.service/", (unsigned)geteuid());
	if (strstr(dir, manager))
		return true;
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return false;
	*slash = '\0';
	return stat(parent, &pst) == 0 && pst.st_uid != st.st_uid;
}

/* Whether pid (a number from cgroup.procs) is a child of this process, by
 * its stat in proc (an open /proc). */
static bool our_child(int proc, long pid)
{
	char num[24];

	snprintf(num, sizeof(num), "%ld", pid);
	return proc >= 0 && ward_proc_ppid(proc, num) == getpid();
}

/* Whether every process in dir's cgroup.procs is this one or a child of it:
 * a helper another thread's command cloned (the idmap's user namespace, a
 * command being set up), which move_us() takes along. */
static bool only_us(const char *dir)
{
	char buf[4096], *p;
	long me = (long)getpid();
	_cleanup_close_ int proc = -1;

	if (read_at(dir, "cgroup.procs", buf, sizeof(buf)) < 0)
		return false;
	for (p = buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid != me && proc < 0)
			proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (pid != me && !our_child(proc, pid))
			return false;
		p = end + strspn(end, "\n");
	}
	return true;
}

/* Move this process into sup, then its children still in dir: those cloned
 * before the move (by other threads' commands). A fork cannot race the
 * move: the kernel holds forks off while a process migrates, so a child
 * is either listed in dir afterwards or was born in sup. One that has
 * exited meanwhile is no longer there to move. */
static int move_us(const char *dir, const char *sup, struct ward_error **err)
{
	char buf[4096], *p;
	_cleanup_close_ int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (write_at(sup, "cgroup.procs", "0") < 0)
		return ward_error_make(err, errno, "move ward into '%s'", sup);
	if (read_at(dir, "cgroup.procs", buf, sizeof(buf)) < 0)
		return ward_error_make(err, errno, "read '%s/cgroup.procs'", dir);
	for (p = buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		p = end + strspn(end, "\n");
		if (!our_child(proc, pid))
			continue;
		if (write_at(sup, "cgroup.procs", "%ld", pid) < 0 && errno != ESRCH)
			return ward_error_make(err, errno, "move ward's child %ld into '%s'", pid, sup);
	}
	return 0;
}

static void probe_v2(struct cgroup_probe *p)
{
	char own[PATH_MAX] = "", dir[PATH_MAX * 2], ctl[256] = "";
	bool root = geteuid() == 0, in_ns, at_ns_root;
	char *slash;

	if (!p->v2_mount[0]) {
		snprintf(p->v2_reason, sizeof(p->v2_reason), "no cgroup2 hierarchy is mounted");
		return;
	}
	if (read_at(p->v2_mount, "cgroup.controllers", p->v2_controllers,
		    sizeof(p->v2_controllers)) >= 0)
		p->v2_controllers[strcspn(p->v2_controllers, "\n")] = '\0';
	if (!has_word(p->v2_controllers, "memory") || !has_word(p->v2_controllers, "pids")) {
		snprintf(p->v2_reason, sizeof(p->v2_reason),
			 "cgroup2 at '%s' has no memory and pids controllers%s", p->v2_mount,
			 p->v1_mount[CG1_MEMORY][0] ? " (hybrid host: they are on cgroup v1)" : "");
		return;
	}
	/* The mount's root is not the hierarchy's (the real root has no
	 * cgroup.type): a cgroup namespace's, as in a container with its own
	 * (--cgroupns=private, the default on cgroup v2). Its root is then a
	 * cgroup like any other: one holding processes (the container's) cannot
	 * enable controllers for children, so ward at the root of the
	 * namespace does what it does in a delegated scope (below), as root
	 * too. Read only there: as root on a host, /proc/self/cgroup is not
	 * read at all. */
	in_ns = p->v2_in_ns = exists_at(p->v2_mount, "cgroup.type");
	if (in_ns)
		own_v2_cgroup(own, sizeof(own));
	slash = strrchr(own, '/');
	at_ns_root = in_ns && (!own[0] || (slash == own && strcmp(own, "/ward-supervisor") == 0));
	if (root && !at_ns_root && access(p->v2_mount, W_OK) == 0) {
		snprintf(p->v2_base, sizeof(p->v2_base), "%s/ward", p->v2_mount);
		p->v2_root = true;
		p->version = 2;
		return;
	}
	if (!in_ns)
		own_v2_cgroup(own, sizeof(own));
	snprintf(dir, sizeof(dir), "%s%s", p->v2_mount, own);
	slash = strrchr(dir, '/');
	if (own[0] && slash && strcmp(slash + 1, "ward-supervisor") == 0) {
		*slash = '\0';
		if (delegated(dir, in_ns)) {
			snprintf(p->v2_base, sizeof(p->v2_base), "%s", dir);
			p->version = 2;
			return;
		}
		*slash = '/';
	}
	if (at_ns_root && !delegated(dir, true)) {
		int e = access(dir, W_OK) < 0 ? errno : EACCES;

		snprintf(p->v2_reason, sizeof(p->v2_reason),
			 "the container's cgroup ('%s', the root of this cgroup namespace) is not "
			 "writable by uid %u (%s); a cgroup limit inside a container needs one its "
			 "engine delegated to it, mounted read-write",
			 dir, (unsigned)geteuid(), e == EROFS ? "mounted read-only" : strerror(e));
		return;
	}
	if ((!own[0] && !in_ns) || !delegated(dir, in_ns)) {
		snprintf(p->v2_reason, sizeof(p->v2_reason),
			 "the cgroup this process runs in ('%s') is not delegated to uid %u; "
			 "fix: " FIX_DELEGATE, dir, (unsigned)geteuid());
		return;
	}
	if (read_at(dir, "cgroup.controllers", ctl, sizeof(ctl)) < 0 || !has_word(ctl, "memory") ||
	    !has_word(ctl, "pids")) {
		snprintf(p->v2_reason, sizeof(p->v2_reason),
			 "the delegated cgroup '%s' has no memory and pids controllers; fix: " FIX_DELEGATE,
			 dir);
		return;
	}
	if (!only_us(dir) && at_ns_root) {
		snprintf(p->v2_reason, sizeof(p->v2_reason),
			 "the container's cgroup '%s' holds other processes too, so controllers cannot "
			 "be enabled below it; fix: start ward as the container's only process (its "
			 "entrypoint)", dir);
		return;
	}
	if (!only_us(dir)) {
		snprintf(p->v2_reason, sizeof(p->v2_reason),
			 "the delegated cgroup '%s' holds other processes too, so controllers cannot be "
			 "enabled below it; fix: start ward as the only process of its scope: "
			 "systemd-run --user --scope -p Delegate=yes ward run ...", dir);
		return;
	}
	snprintf(p->v2_base, sizeof(p->v2_base), "%s", dir);
	p->v2_move_self = true;
	p->version = 2;
}

/* Empty, field by field (as ward_cgroup_init()): its paths are 28 KiB. */
static void probe_clear(struct cgroup_probe *p)
{
	int i;

	p->version = 0;
	p->v2_mount[0] = p->v2_controllers[0] = p->v2_base[0] = '\0';
	p->v2_root = p->v2_move_self = p->v2_in_ns = false;
	for (i = 0; i < CG1_COUNT; i++)
		p->v1_mount[i][0] = '\0';
	p->v1_writable = false;
	p->v2_reason[0] = p->reason[0] = '\0';
}

void ward_cgroup_probe(struct cgroup_probe *p)
{
	char v2why[384];
	int i, std;

	probe_clear(p);
	std = ward_cgroup_mounts_standard(p);
	if (!std)
		ward_cgroup_mounts_table(p);
	probe_v2(p);
	if (!p->version && std == 2) {
		/* a cgroup2 root without the controllers: v1 hierarchies, if
		 * any, are elsewhere */
		probe_clear(p);
		ward_cgroup_mounts_table(p);
		probe_v2(p);
	}
	if (p->version)
		return;
	snprintf(v2why, sizeof(v2why), "%s", p->v2_reason);
	snprintf(p->reason, sizeof(p->reason), "%s", v2why);
	if (!p->v1_mount[CG1_MEMORY][0] || !p->v1_mount[CG1_PIDS][0])
		return; /* the v2 reason stands */
	p->v1_writable = true;
	for (i = 0; i < CG1_COUNT; i++)
		if (p->v1_mount[i][0] && (i == CG1_MEMORY || i == CG1_PIDS) &&
		    access(p->v1_mount[i], W_OK) != 0)
			p->v1_writable = false;
	if (p->v1_writable) {
		p->version = 1;
		p->reason[0] = '\0';
		return;
	}
	snprintf(p->reason, sizeof(p->reason),
		 "%s; the cgroup v1 hierarchies ('%s', '%s') are writable by root only; fix: run "
		 "ward as root, or on a cgroup v2 host in a delegated scope: systemd-run --user "
		 "--scope -p Delegate=yes ward run ...",
		 v2why, p->v1_mount[CG1_MEMORY], p->v1_mount[CG1_PIDS]);
}

/* ---- create ------------------------------------------------------------- */

/* Field by field, the paths emptied but not zeroed whole: a memset would
 * touch (fault in) all 24 KiB of them, which a run on cgroup v2 or without
 * a cgroup never uses. */
void ward_cgroup_init(struct ward_cgroup *cg)
{
	int i;

	cg->version = 0;
	cg->name[0] = '\0';
	cg->dir[0] = '\0';
	cg->dir_fd = -1;
	for (i = 0; i < CG1_COUNT; i++) {
		cg->v1[i][0] = '\0';
		cg->tasks_fd[i] = -1;
	}
	cg->own_parent = false;
}

/* Our start time, cached per pid: a process forked from this one has a
 * start time of its own, and a name with its parent's would look like the
 * leftover of a dead ward to the next ward that runs. */
/* This process's start time (pid is ours), read once per process and
 * shared with the run record's name (util.c). */
static unsigned long long own_start(long pid)
{
	struct ward_self_stat s;

	return ward_self_stat(&s, false) == 0 ? s.start_time : start_time(pid);
}

static void make_name(struct ward_cgroup *cg)
{
	static unsigned seq;
	long pid = (long)getpid();

	snprintf(cg->name, sizeof(cg->name), "w%ld-%llu-%u", pid, own_start(pid),
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
}

static void kill_listed(const char *dir)
{
	char buf[16384], *p;

	if (read_at(dir, "cgroup.procs", buf, sizeof(buf)) <= 0)
		return;
	for (p = buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid > 0)
			kill((pid_t)pid, SIGKILL);
		p = end + strspn(end, "\n");
	}
}

static void kill_dir(const char *dir, int version)
{
	if (version == 2 && write_at(dir, "cgroup.kill", "1") == 0)
		return;
	kill_listed(dir); /* v1, or a v2 kernel before 5.14 */
}

/* rmdir, retrying while the last processes finish dying (a killed process
 * stays in its cgroup until it is reaped). */
static void remove_dir(const char *dir, int version)
{
	useconds_t wait = 200;
	long long deadline = ward_now_ns() + 2000000000LL;

	while (rmdir(dir) < 0 && errno == EBUSY && ward_now_ns() < deadline) {
		kill_dir(dir, version);
		usleep(wait);
		if (wait < 20000)
			wait *= 2;
	}
}

/* The parent "ward" cgroup of a v2 command cgroup (as root), removed once
 * empty: the last ward out leaves no trace. Another ward's child in it makes
 * rmdir fail (EBUSY), which is the answer wanted; a ward creating its child
 * at that moment starts its sequence again (create_v2). */
static void remove_parent(const char *child)
{
	char parent[PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", child);
	slash = strrchr(parent, '/');
	if (!slash)
		return;
	*slash = '\0';
	rmdir(parent);
}

/* Remove the cgroups in parent whose owner (pid and start time in the name)
 * is gone. A live owner's cgroups are never touched. */
static void reap_leftovers(const char *parent, const char *prefix, int version)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	size_t pl = strlen(prefix);
	long me = (long)getpid(); /* once, not once per ward's cgroup listed */

	if (!d)
		return;
	while ((e = readdir(d))) {
		char dir[PATH_MAX + 300];
		long pid;
		unsigned long long start;

		if (e->d_type != DT_DIR || strncmp(e->d_name, prefix, pl) != 0 ||
		    !ward_cgroup_name_parse(e->d_name + pl, &pid, &start))
			continue;
		/* its ward is alive (this process's own names without reading
		 * /proc again) */
		if ((pid == me ? own_start(pid) : start_time(pid)) == start)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", parent, e->d_name);
		kill_dir(dir, version);
		remove_dir(dir, version);
	}
	closedir(d);
}

static int enable_controllers(const char *dir, const char *available, struct ward_error **err)
{
	char have[256] = "";
	size_t i;

	if (read_at(dir, "cgroup.subtree_control", have, sizeof(have)) < 0)
		return ward_error_make(err, errno, "read '%s/cgroup.subtree_control'", dir);
	for (i = 0; i < ARRAY_SIZE(v2_wanted); i++) {
		if (!has_word(available, v2_wanted[i]) || has_word(have, v2_wanted[i]))
			continue;
		if (write_at(dir, "cgroup.subtree_control", "+%s", v2_wanted[i]) < 0)
			return ward_error_make(err, errno, "enable the %s controller in '%s'",
					       v2_wanted[i], dir);
	}
	return 0;
}

static void set_mech(struct ward_resources *res, int which, uint64_t value, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_mech(struct ward_resources *res, int which, uint64_t value, const char *fmt, ...)
{
	va_list ap;

	res->applied[which].value = value;
	va_start(ap, fmt);
	vsnprintf(res->applied[which].mechanism, sizeof(res->applied[which].mechanism), fmt, ap);
	va_end(ap);
}

static bool host_has_swap(void)
{
	char buf[4096], *p;

	if (ward_read_file("/proc/meminfo", buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "SwapTotal:")))
		return true; /* unknown: assume there is */
	return strtoull(p + 10, NULL, 10) > 0;
}

static int limit_failed(struct ward_error **err, const char *dir, const char *file,
			enum ward_limit which)
{
	return ward_error_make(err, errno, "%s: cannot apply the limit through '%s/%s'",
			       ward_limit_option(which), dir, file);
}

static int apply_v2(struct ward_cgroup *cg, const struct ward_limits *lim,
		    struct ward_resources *res, struct ward_error **err)
{
	const char *d = cg->dir;
	bool swap = host_has_swap();

	if (lim->memory) {
		if (write_at(d, "memory.max", "%llu", (unsigned long long)lim->memory) < 0)
			return limit_failed(err, d, "memory.max", WARD_LIMIT_MEMORY);
		set_mech(res, WARD_LIMIT_MEMORY, lim->memory, "cgroup v2 memory.max");
	}
	if (lim->memory || (lim->explicit_mask & (1u << WARD_LIMIT_MEMORY_SWAP))) {
		if (exists_at(d, "memory.swap.max")) {
			if (write_at(d, "memory.swap.max", "%llu",
				     (unsigned long long)lim->memory_swap) < 0)
				return limit_failed(err, d, "memory.swap.max", WARD_LIMIT_MEMORY_SWAP);
			set_mech(res, WARD_LIMIT_MEMORY_SWAP, lim->memory_swap,
				 "cgroup v2 memory.swap.max");
		} else if (!swap) {
			set_mech(res, WARD_LIMIT_MEMORY_SWAP, 0, "no swap on this host");
		} else if (lim->explicit_mask & (1u << WARD_LIMIT_MEMORY_SWAP)) {
			return ward_error_make(err, 0, "--memory-swap: this kernel has no swap "
						       "accounting (no memory.swap.max in '%s')", d);
		}
	}
	if (lim->pids) {
		if (write_at(d, "pids.max", "%llu", (unsigned long long)lim->pids) < 0)
			return limit_failed(err, d, "pids.max", WARD_LIMIT_PIDS);
		set_mech(res, WARD_LIMIT_PIDS, lim->pids, "cgroup v2 pids.max");
	}
	if (lim->cpus > 0) {
		uint64_t q = ward_cpus_quota_us(lim->cpus);

		if (write_at(d, "cpu.max", "%llu %d", (unsigned long long)q, WARD_CPU_PERIOD_US) < 0)
			return limit_failed(err, d, "cpu.max", WARD_LIMIT_CPUS);
		set_mech(res, WARD_LIMIT_CPUS, q, "cgroup v2 cpu.max");
	}
	if (lim->io_weight) {
		if (write_at(d, "io.weight", "default %u", lim->io_weight) == 0)
			set_mech(res, WARD_LIMIT_IO_WEIGHT, lim->io_weight, "cgroup v2 io.weight");
		else if (lim->io_weight <= 1000 &&
			 write_at(d, "io.bfq.weight", "%u", lim->io_weight) == 0)
			set_mech(res, WARD_LIMIT_IO_WEIGHT, lim->io_weight, "cgroup v2 io.bfq.weight");
		else
			return limit_failed(err, d, "io.weight", WARD_LIMIT_IO_WEIGHT);
	}
	return 0;
}

static int create_v2(struct ward_cgroup *cg, const struct cgroup_probe *p,
		     const struct ward_limits *lim, struct ward_resources *res,
		     struct ward_error **err)
{
	char ctl[256] = "";
	int tries = 0;

	if (p->v2_root && enable_controllers(p->v2_mount, p->v2_controllers, err) < 0)
		return -1;
	if (p->v2_move_self) {
		char sup[PATH_MAX + 32];

		snprintf(sup, sizeof(sup), "%s/ward-supervisor", p->v2_base);
		if (mkdir(sup, 0755) < 0 && errno != EEXIST)
			return ward_error_make(err, errno, "mkdir '%s'", sup);
		if (move_us(p->v2_base, sup, err) < 0)
			return -1;
	}
	cg->own_parent = p->v2_root;
	snprintf(cg->dir, sizeof(cg->dir), "%s/%s", p->v2_base, cg->name);
	/* As root the parent is ours, and another ward leaving may remove it
	 * (remove_parent) at any point here: then all of it again. */
again:
	if (p->v2_root && mkdir(p->v2_base, 0755) < 0 && errno != EEXIST)
		return ward_error_make(err, errno, "mkdir '%s'", p->v2_base);
	if (read_at(p->v2_base, "cgroup.controllers", ctl, sizeof(ctl)) < 0) {
		if (errno == ENOENT && p->v2_root && ++tries < 100)
			goto again;
		return ward_error_make(err, errno, "read '%s/cgroup.controllers'", p->v2_base);
	}
	{
		struct ward_error *e = NULL;

		if (enable_controllers(p->v2_base, ctl, &e) < 0) {
			bool gone = e->code == ENOENT;

			if (gone && p->v2_root && ++tries < 100) {
				ward_error_free(e);
				goto again;
			}
			if (err && *err)
				**err = *e;
			else if (err)
				*err = steal_ptr(e);
			ward_error_free(e);
			return -1;
		}
	}
	if (mkdir(cg->dir, 0755) < 0) {
		if (errno == ENOENT && p->v2_root && ++tries < 100)
			goto again;
		ward_error_make(err, errno, "mkdir '%s'", cg->dir);
		if (cg->own_parent)
			remove_parent(cg->dir);
		cg->dir[0] = '\0';
		return -1;
	}
	reap_leftovers(p->v2_base, "", 2);
	cg->version = 2;
	if (apply_v2(cg, lim, res, err) < 0)
		return -1;
	cg->dir_fd = open(cg->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dir_fd < 0)
		return ward_error_make(err, errno, "open '%s'", cg->dir);
	return 0;
}

static int apply_v1(struct ward_cgroup *cg, const struct ward_limits *lim,
		    struct ward_resources *res, struct ward_error **err)
{
	const char *m = cg->v1[CG1_MEMORY], *c = cg->v1[CG1_CPU], *b = cg->v1[CG1_BLKIO];

	if (!lim->memory && (lim->explicit_mask & (1u << WARD_LIMIT_MEMORY_SWAP)))
		return ward_error_make(err, 0, "--memory-swap: cgroup v1 limits swap only together "
					       "with memory: give --memory too");
	if (lim->memory) {
		if (write_at(m, "memory.limit_in_bytes", "%llu", (unsigned long long)lim->memory) < 0)
			return limit_failed(err, m, "memory.limit_in_bytes", WARD_LIMIT_MEMORY);
		set_mech(res, WARD_LIMIT_MEMORY, lim->memory, "cgroup v1 memory.limit_in_bytes");
		if (exists_at(m, "memory.memsw.limit_in_bytes")) {
			/* memsw is memory + swap, and may not be set below the memory limit */
			if (write_at(m, "memory.memsw.limit_in_bytes", "%llu",
				     (unsigned long long)(lim->memory + lim->memory_swap)) < 0)
				return limit_failed(err, m, "memory.memsw.limit_in_bytes",
						    WARD_LIMIT_MEMORY_SWAP);
			set_mech(res, WARD_LIMIT_MEMORY_SWAP, lim->memory_swap,
				 "cgroup v1 memory.memsw.limit_in_bytes");
		} else if (!host_has_swap()) {
			set_mech(res, WARD_LIMIT_MEMORY_SWAP, 0, "no swap on this host");
		} else if (lim->explicit_mask & (1u << WARD_LIMIT_MEMORY_SWAP)) {
			return ward_error_make(err, 0, "--memory-swap: no swap accounting on this "
						       "host (no memory.memsw.limit_in_bytes in '%s'; "
						       "boot with swapaccount=1)", m);
		} else if (write_at(m, "memory.swappiness", "0") == 0) {
			set_mech(res, WARD_LIMIT_MEMORY_SWAP, 0,
				 "cgroup v1 memory.swappiness=0 (no swap accounting)");
		}
	}
	if (lim->pids) {
		if (write_at(cg->v1[CG1_PIDS], "pids.max", "%llu", (unsigned long long)lim->pids) < 0)
			return limit_failed(err, cg->v1[CG1_PIDS], "pids.max", WARD_LIMIT_PIDS);
		set_mech(res, WARD_LIMIT_PIDS, lim->pids, "cgroup v1 pids.max");
	}
	if (lim->cpus > 0) {
		uint64_t q = ward_cpus_quota_us(lim->cpus);

		if (write_at(c, "cpu.cfs_period_us", "%d", WARD_CPU_PERIOD_US) < 0 ||
		    write_at(c, "cpu.cfs_quota_us", "%llu", (unsigned long long)q) < 0)
			return limit_failed(err, c, "cpu.cfs_quota_us", WARD_LIMIT_CPUS);
		set_mech(res, WARD_LIMIT_CPUS, q, "cgroup v1 cpu.cfs_quota_us");
	}
	if (lim->io_weight) {
		if (lim->io_weight > 1000)
			return ward_error_make(err, 0, "--io-weight: cgroup v1 weights go up to 1000, "
						       "got %u", lim->io_weight);
		if (write_at(b, "blkio.bfq.weight", "%u", lim->io_weight) == 0)
			set_mech(res, WARD_LIMIT_IO_WEIGHT, lim->io_weight, "cgroup v1 blkio.bfq.weight");
		else if (write_at(b, "blkio.weight", "%u", lim->io_weight) == 0)
			set_mech(res, WARD_LIMIT_IO_WEIGHT, lim->io_weight, "cgroup v1 blkio.weight");
		else
			return ward_error_make(err, errno, "--io-weight: cannot apply the limit: '%s' "
						       "has no blkio.bfq.weight or blkio.weight (no "
						       "proportional I/O scheduler)", b);
	}
	return 0;
}

static int create_v1(struct ward_cgroup *cg, const struct cgroup_probe *p,
		     const struct ward_limits *lim, struct ward_resources *res,
		     struct ward_error **err)
{
	/* cpuacct only with cpu (often one "cpu,cpuacct" hierarchy): the CPU
	 * time of a sandbox is exact in the rusage of its init, which reaps
	 * every process of it, and a third hierarchy's mkdir and rmdir cost
	 * every command ~0.1 ms */
	bool want[CG1_COUNT] = { true, true, lim->cpus > 0, lim->cpus > 0, lim->io_weight > 0 };
	int i;

	cg->version = 1;
	for (i = 0; i < CG1_COUNT; i++) {
		char tasks[PATH_MAX + 16];

		if (!want[i])
			continue;
		if (!p->v1_mount[i][0]) {
			if (i == CG1_CPUACCT)
				continue; /* only for figures: rusage stands in */
			return ward_error_make(err, 0, "%s: no cgroup v1 %s hierarchy on this host",
					       i == CG1_CPU ? "--cpus" : "--io-weight", v1_names[i]);
		}
		/* cpu and cpuacct are often one hierarchy ("cpu,cpuacct") */
		if (i == CG1_CPUACCT && strcmp(p->v1_mount[i], p->v1_mount[CG1_CPU]) == 0 &&
		    want[CG1_CPU])
			continue;
		/* at the top of the hierarchy, beside what systemd keeps there: no
		 * parent of ours to make and remove around every command */
		snprintf(cg->v1[i], sizeof(cg->v1[i]), "%s/" V1_PREFIX "%s", p->v1_mount[i], cg->name);
		if (mkdir(cg->v1[i], 0755) < 0) {
			int e = errno;

			ward_error_make(err, e, "mkdir '%s'", cg->v1[i]);
			cg->v1[i][0] = '\0';
			return -1;
		}
		reap_leftovers(p->v1_mount[i], V1_PREFIX, 1);
		snprintf(tasks, sizeof(tasks), "%s/tasks", cg->v1[i]);
		cg->tasks_fd[i] = open(tasks, O_WRONLY | O_CLOEXEC);
		if (cg->tasks_fd[i] < 0)
			return ward_error_make(err, errno, "open '%s'", tasks);
	}
	return apply_v1(cg, lim, res, err);
}

void ward_rlimits_plan(const struct ward_limits *lim, struct rlimit_plan *rp,
		       struct ward_resources *res)
{
	struct rlimit cur;
	rlim_t nofile = WARD_NOFILE_MAX;

	memset(rp, 0, sizeof(*rp));
	/* a cap: the hard limit at most WARD_NOFILE_MAX, the soft one never raised */
	rp->nofile.rlim_cur = rp->nofile.rlim_max = nofile;
	if (getrlimit(RLIMIT_NOFILE, &cur) == 0) {
		if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < nofile)
			rp->nofile.rlim_max = nofile = cur.rlim_max;
		if (cur.rlim_cur != RLIM_INFINITY && cur.rlim_cur < rp->nofile.rlim_max)
			rp->nofile.rlim_cur = cur.rlim_cur;
	}
	set_mech(res, WARD_APPLIED_NOFILE, nofile, "rlimit RLIMIT_NOFILE");
	set_mech(res, WARD_APPLIED_CORE, 0, "rlimit RLIMIT_CORE");
	if (lim->file_size) {
		rp->set_fsize = true;
		rp->fsize.rlim_cur = rp->fsize.rlim_max = lim->file_size;
		set_mech(res, WARD_LIMIT_FILE_SIZE, lim->file_size, "rlimit RLIMIT_FSIZE");
	}
}

int ward_rlimits_apply(const struct rlimit_plan *rp, struct ward_error **err)
{
	if (setrlimit(RLIMIT_CORE, &rp->core) < 0)
		return ward_error_make(err, errno, "setrlimit RLIMIT_CORE");
	if (setrlimit(RLIMIT_NOFILE, &rp->nofile) < 0)
		return ward_error_make(err, errno, "setrlimit RLIMIT_NOFILE %llu",
				       (unsigned long long)rp->nofile.rlim_cur);
	if (rp->set_fsize && setrlimit(RLIMIT_FSIZE, &rp->fsize) < 0)
		return ward_error_make(err, errno, "setrlimit RLIMIT_FSIZE %llu",
				       (unsigned long long)rp->fsize.rlim_cur);
	return 0;
}

uint64_t ward_tmpfs_plan(const struct ward_limits *lim, struct ward_resources *res)
{
	const struct ward_limit_applied *mem = &res->applied[WARD_LIMIT_MEMORY];

	if (lim->tmpfs_size) {
		set_mech(res, WARD_LIMIT_TMPFS_SIZE, lim->tmpfs_size, "tmpfs size= (--tmpfs-size)");
		return lim->tmpfs_size;
	}
	if (mem->mechanism[0] && mem->value) {
		set_mech(res, WARD_LIMIT_TMPFS_SIZE, mem->value, "tmpfs size= (the memory limit)");
		return mem->value;
	}
	set_mech(res, WARD_LIMIT_TMPFS_SIZE, WARD_TMPFS_DEFAULT, "tmpfs size= (the default)");
	return WARD_TMPFS_DEFAULT;
}

static const char *const ucount_files[UCOUNT_N] = {
	"max_inotify_instances", "max_inotify_watches", "max_fanotify_groups",
	"max_fanotify_marks",	 "max_user_namespaces",	 "max_mnt_namespaces",
	"max_pid_namespaces",	 "max_net_namespaces",	 "max_ipc_namespaces",
	"max_uts_namespaces",	 "max_cgroup_namespaces", "max_time_namespaces",
};

long ward_ucount_share(long host)
{
	if (host < 0)
		return -1;
	if (host == 0)
		return 0;
	return host / WARD_UCOUNT_SHARE > 0 ? host / WARD_UCOUNT_SHARE : 1;
}

/* A share of the caller's rlimit `which` (the lower of soft and hard), or
 * false when it is unlimited (nothing to share: the host user is not
 * limited either) or unreadable. */
static bool share_rlimit(int which, struct rlimit *out)
{
	struct rlimit cur;
	rlim_t v;

	if (getrlimit(which, &cur) < 0)
		return false;
	v = cur.rlim_cur < cur.rlim_max ? cur.rlim_cur : cur.rlim_max;
	if (v == RLIM_INFINITY)
		return false;
	v = v / WARD_UCOUNT_SHARE ? v / WARD_UCOUNT_SHARE : (v ? 1 : 0);
	out->rlim_cur = out->rlim_max = v;
	return true;
}

/* Each count's file by its full path: opening /proc/sys/user first and
 * closing it again cost two system calls a side (~3 us each in a VM), for
 * path walks of four components. */
static int ucount_open(int i, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/sys/user/%s", ucount_files[i]);
	return open(path, flags | O_CLOEXEC);
}

void ward_ucounts_plan(struct ucount_plan *up, bool nested, struct ward_resources *res)
{
	int i;

	for (i = 0; i < UCOUNT_N; i++) {
		char buf[32];
		long host = -1;
		int fd;
		ssize_t n;

		/* no user namespace of the command's own, unless it is to make
		 * sandboxes: then a share of the host's, as for the others, and
		 * of every other kind of namespace (cgroup-internal.h) */
		if (i == UCOUNT_USER_NS && !nested) {
			up->value[i] = 0;
			continue;
		}
		if (i > UCOUNT_USER_NS && !nested) {
			up->value[i] = -1;
			continue;
		}
		fd = ucount_open(i, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n > 0) {
				buf[n] = '\0';
				host = strtol(buf, NULL, 10);
			}
		}
		up->value[i] = (int)ward_ucount_share(host);
		if (up->value[i] >= 0 && i < UCOUNT_USER_NS)
			set_mech(res, WARD_APPLIED_INOTIFY_INSTANCES + i, (uint64_t)up->value[i],
				 "user namespace %s", ucount_files[i]);
	}
	if (!nested)
		set_mech(res, WARD_APPLIED_NAMESPACES, 0, "user namespace max_user_namespaces");
	else if (up->value[UCOUNT_USER_NS] >= 0)
		set_mech(res, WARD_APPLIED_NAMESPACES, (uint64_t)up->value[UCOUNT_USER_NS],
			 "user namespace max_*_namespaces (a share of each)");
	up->set_sigpending = share_rlimit(RLIMIT_SIGPENDING, &up->sigpending);
	if (up->set_sigpending)
		set_mech(res, WARD_APPLIED_SIGPENDING, up->sigpending.rlim_cur,
			 "rlimit RLIMIT_SIGPENDING");
	up->set_msgqueue = share_rlimit(RLIMIT_MSGQUEUE, &up->msgqueue);
	if (up->set_msgqueue)
		set_mech(res, WARD_APPLIED_MSGQUEUE, up->msgqueue.rlim_cur, "rlimit RLIMIT_MSGQUEUE");
	/* Processes: every one inside counts against the caller's RLIMIT_NPROC
	 * too (the kernel counts per user at each user namespace up the chain),
	 * so without a share of its own a fork loop left the host user unable
	 * to fork at all, with or without a pids cgroup above it. */
	up->set_nproc = share_rlimit(RLIMIT_NPROC, &up->nproc);
	if (up->set_nproc)
		set_mech(res, WARD_APPLIED_NPROC, up->nproc.rlim_cur, "rlimit RLIMIT_NPROC");
	/* Locked memory: shmctl(SHM_LOCK) and hugetlb memfds count every
	 * byte against RLIMIT_MEMLOCK per user at each user namespace up the
	 * chain, as processes are counted; without a share, one sandbox
	 * locking its whole limit left the host user's SHM_LOCK failing with
	 * ENOMEM. (mlock() counts per process: a quarter of it too.) */
	up->set_memlock = share_rlimit(RLIMIT_MEMLOCK, &up->memlock);
	if (up->set_memlock)
		set_mech(res, WARD_APPLIED_MEMLOCK, up->memlock.rlim_cur, "rlimit RLIMIT_MEMLOCK");
}

int ward_ucounts_apply(const struct ucount_plan *up, struct ward_error **err)
{
	int i;

	for (i = 0; i < UCOUNT_N; i++) {
		char buf[16];
		int fd, len;

		if (up->value[i] < 0)
			continue;
		fd = ucount_open(i, O_WRONLY);
		if (fd < 0 && errno == ENOENT)
			continue; /* a kernel without this count (fanotify's before 5.13) */
		len = snprintf(buf, sizeof(buf), "%d", up->value[i]);
		if (fd < 0 || write(fd, buf, (size_t)len) != len) {
			ward_error_make(err, errno, "write '%s' to '/proc/sys/user/%s'", buf,
					ucount_files[i]);
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	if (up->set_sigpending && setrlimit(RLIMIT_SIGPENDING, &up->sigpending) < 0)
		return ward_error_make(err, errno, "setrlimit RLIMIT_SIGPENDING");
	if (up->set_msgqueue && setrlimit(RLIMIT_MSGQUEUE, &up->msgqueue) < 0)
		return ward_error_make(err, errno, "setrlimit RLIMIT_MSGQUEUE");
	if (up->set_nproc && setrlimit(RLIMIT_NPROC, &up->nproc) < 0)
		return ward_error_make(err, errno, "setrlimit RLIMIT_NPROC");
	if (up->set_memlock && setrlimit(RLIMIT_MEMLOCK, &up->memlock) < 0)
		return ward_error_make(err, errno, "setrlimit RLIMIT_MEMLOCK");
	if (up->shm_bytes) {
		static const char *const shm[2] = { "/proc/sys/kernel/shmmax",
						    "/proc/sys/kernel/shmall" };
		uint64_t v[2] = { up->shm_bytes, up->shm_bytes / (uint64_t)getpagesize() };

		for (i = 0; i < 2; i++) {
			char buf[24];
			int fd = open(shm[i], O_WRONLY | O_CLOEXEC), len;

			len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v[i]);
			if (fd < 0 || write(fd, buf, (size_t)len) != len) {
				ward_error_make(err, errno, "write '%s' to '%s'", buf, shm[i]);
				if (fd >= 0)
					close(fd);
				return -1;
			}
			close(fd);
		}
	}
	return 0;
}

static const enum ward_limit cgroup_limits[] = {
	WARD_LIMIT_MEMORY, WARD_LIMIT_MEMORY_SWAP, WARD_LIMIT_PIDS, WARD_LIMIT_CPUS,
	WARD_LIMIT_IO_WEIGHT,
};

int ward_cgroup_create(struct ward_cgroup *cg, const struct ward_limits *lim,
		       struct ward_resources *res, struct ward_error **err)
{
	struct cgroup_probe p;
	size_t i;
	int rc;

	ward_cgroup_probe(&p);
	if (p.version == 0) {
		for (i = 0; i < ARRAY_SIZE(cgroup_limits); i++)
			if (lim->explicit_mask & (1u << cgroup_limits[i]))
				return ward_error_make(err, 0, "%s needs a cgroup, and none can be "
							       "made: %s",
						       ward_limit_option(cgroup_limits[i]), p.reason);
		snprintf(res->note, sizeof(res->note), "no cgroup limit applied (rlimits only): %s",
			 p.reason);
		return 0;
	}
	make_name(cg);
	rc = p.version == 2 ? create_v2(cg, &p, lim, res, err) : create_v1(cg, &p, lim, res, err);
	if (rc < 0) {
		ward_cgroup_destroy(cg);
		for (i = 0; i < WARD_LIMIT_COUNT; i++)
			res->applied[i].mechanism[0] = '\0';
		return -1;
	}
	res->cgroup_version = cg->version;
	return 0;
}

int ward_cgroup_none(const struct ward_limits *lim, struct ward_resources *res,
		     struct ward_error **err)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cgroup_limits); i++)
		if (lim->explicit_mask & (1u << cgroup_limits[i]))
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "%s needs a cgroup, and --no-cgroup was given",
						    ward_limit_option(cgroup_limits[i]));
	snprintf(res->note, sizeof(res->note),
		 "no cgroup limit applied (rlimits only): --no-cgroup was given");
	return 0;
}

int ward_cgroup_enter_v1(struct ward_cgroup *cg, struct ward_error **err)
{
	int i;

	for (i = 0; i < CG1_COUNT; i++) {
		if (cg->tasks_fd[i] < 0)
			continue;
		if (write(cg->tasks_fd[i], "0", 1) != 1)
			return ward_error_make(err, errno, "move the sandbox into '%s'", cg->v1[i]);
		close(cg->tasks_fd[i]);
		cg->tasks_fd[i] = -1;
	}
	return 0;
}

void ward_cgroup_close_fds(struct ward_cgroup *cg)
{
	int i;

	for (i = 0; i < CG1_COUNT; i++)
		if (cg->tasks_fd[i] >= 0) {
			close(cg->tasks_fd[i]);
			cg->tasks_fd[i] = -1;
		}
	if (cg->dir_fd >= 0) {
		close(cg->dir_fd);
		cg->dir_fd = -1;
	}
}

void ward_cgroup_collect(struct ward_cgroup *cg, struct ward_resources *res)
{
	char buf[2048];
	uint64_t v;

	if (cg->version == 2) {
		const char *d = cg->dir;

		snprintf(res->measured_by, sizeof(res->measured_by), "cgroup v2");
		res->have_memory_peak = read_u64(d, "memory.peak", &res->memory_peak);
		res->have_pids_peak = read_u64(d, "pids.peak", &res->pids_peak);
		/* usage_usec is exact, its user/system split sampled: as for v1 */
		if (read_at(d, "cpu.stat", buf, sizeof(buf)) > 0 &&
		    keyed_value(buf, "usage_usec", &v)) {
			uint64_t sys = 0;

			keyed_value(buf, "system_usec", &sys);
			sys = sys < v ? sys : v;
			res->cpu_system_us = sys;
			res->cpu_user_us = v - sys;
			res->have_cpu = true;
		}
		if (read_at(d, "memory.events", buf, sizeof(buf)) > 0 &&
		    keyed_value(buf, "oom_kill", &v)) {
			res->oom_kills = v;
			res->oom_killed = v > 0;
		}
	} else if (cg->version == 1) {
		const char *m = cg->v1[CG1_MEMORY], *a = cg->v1[CG1_CPUACCT][0] ? cg->v1[CG1_CPUACCT] :
								   cg->v1[CG1_CPU];

		snprintf(res->measured_by, sizeof(res->measured_by), "cgroup v1");
		res->have_memory_peak = read_u64(m, "memory.max_usage_in_bytes", &res->memory_peak);
		res->have_pids_peak = read_u64(cg->v1[CG1_PIDS], "pids.peak", &res->pids_peak);
		/* cpuacct.usage is exact; its user/system split is sampled at each
		 * tick, so system time is taken from it and user time is the rest */
		if (a[0] && read_u64(a, "cpuacct.usage", &v)) {
			uint64_t sys = 0;

			read_u64(a, "cpuacct.usage_sys", &sys);
			sys = sys < v ? sys : v;
			res->cpu_system_us = sys / 1000;
			res->cpu_user_us = (v - sys) / 1000;
			res->have_cpu = true;
		}
		if (read_at(m, "memory.oom_control", buf, sizeof(buf)) > 0 &&
		    keyed_value(buf, "oom_kill", &v)) {
			res->oom_kills = v;
			res->oom_killed = v > 0;
		}
	}
}

void ward_cgroup_destroy(struct ward_cgroup *cg)
{
	int i;

	ward_cgroup_close_fds(cg);
	/* remove_dir() kills what is left when rmdir finds the cgroup busy: the
	 * usual cgroup is empty by now (its PID namespace died with init), and
	 * costs one rmdir */
	if (cg->version == 2 && cg->dir[0]) {
		remove_dir(cg->dir, 2);
		if (cg->own_parent)
			remove_parent(cg->dir);
		cg->dir[0] = '\0';
	}
	for (i = 0; i < CG1_COUNT; i++)
		if (cg->v1[i][0]) {
			remove_dir(cg->v1[i], 1);
			cg->v1[i][0] = '\0';
		}
	cg->version = 0;
}
