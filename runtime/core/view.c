/* view.c — the sandbox's filesystem view: a new root on tmpfs, system
 * directories read-only, the workdir read-write at its own path, tmpfs /tmp,
 * fresh /proc, a minimal /dev; then pivot_root.
 *
 * ward_spawn_plan_view() runs in the supervisor and looks at the host;
 * ward_view_build() runs in the sandbox's init and makes only system calls
 * on the plan (see core-internal.h for why).
 *
 * Mount count matters for speed (each call takes the namespace lock): the
 * whole tree of read-only binds is made read-only, nosuid and nodev with one
 * recursive mount_setattr() instead of a remount per bind. */
#include <errno.h>
#include <linux/openat2.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/sched.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"
#include "runtime/workdir/workdir-internal.h"

/* What of /proc changes the host, not the sandbox: made read-only when
 * Landlock may be missing (spawn_plan.proc_ro). */
static const char *const proc_knobs[] = { "sys", "irq", "bus", "fs", "sysrq-trigger" };

/* Directories of the host bound read-only, in this order (usr first, so the
 * usr-merge links into it resolve). */
static const char *const sysdirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
};

/* The system CA files tools read, the first where Debian's are; the run's
 * trust bundle is bound over each the host has. */
static const char *const ca_files[] = {
	WARD_CA_BUNDLE_PATH,
	"/etc/pki/tls/certs/ca-bundle.crt", /* Fedora, RHEL */
	"/etc/ssl/ca-bundle.pem",           /* openSUSE */
	"/etc/ssl/cert.pem",                /* Alpine, and a link elsewhere */
	NULL,
};

static bool regular_file(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *const *ward_ca_bundle_targets(void)
{
	return ca_files;
}

bool ward_ca_bundle_target(void)
{
	return regular_file(WARD_CA_BUNDLE_PATH);
}

/* Device nodes of the minimal /dev, bound from the host's. */
static const char *const devices[] = { "null", "zero", "full", "random", "urandom", "tty" };

static void add_mask(struct spawn_plan *p, const char *path)
{
	struct stat st;

	if (p->n_masks >= SPAWN_MAX_MASKS || strlen(path) >= SPAWN_PATH_MAX || lstat(path, &st) < 0)
		return;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return;
	if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) < 0 && errno == EACCES &&
	    (!S_ISDIR(st.st_mode) ||
	     (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0 && errno == EACCES)))
		return;
	snprintf(p->masks[p->n_masks].path, sizeof(p->masks[0].path), "%s", path);
	p->masks[p->n_masks].dir = S_ISDIR(st.st_mode);
	p->n_masks++;
}

/* The user namespace an idmapped system directory is seen through: its uid
 * and gid 0 are the host's 65534 (nobody), and no other id is mapped, so
 * that in the view a file of root's is nobody's and one of any other owner
 * an unmapped id's. Made for each run: kept for the process, the
 * descriptor would outlive every run.
 *
 * A child made in a new user namespace exits at once; its maps are written
 * and its namespace opened while it is a zombie (its credentials, and so
 * the namespace, last until it is reaped, at the end of the run). Nothing
 * waits on it, and its exit costs what a wake-up would. It shares the
 * memory and the descriptor table (CLONE_VM, CLONE_FILES): no page tables
 * are copied (a fork of the supervisor cost ~0.3 ms more), and no copy of
 * the table holds other threads' descriptors (ward serve's concurrent
 * runs). Its stack is the plan's own (spawn_plan.idmap_stack), already
 * present; it runs with every signal blocked, so no handler ever runs on
 * that small stack. */
static int idmap_child(void *arg)
{
	return 0;
}

static int write_map(int dir, const char *file, const char *map)
{
	int fd, r;

	fd = openat(dir, file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = write(fd, map, strlen(map)) == (ssize_t)strlen(map) ? 0 : -1;
	close(fd);
	return r;
}

/* The calling thread on the CPU it is on, for the child to inherit:
 * returns whether it was moved (old then holds where it may run). */
static bool pin_here(cpu_set_t *old)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || sched_getaffinity(0, sizeof(*old), old) < 0)
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) == 0;
}

static void idmap_make(struct spawn_plan *p)
{
	static const char map[] = "0 65534 1\n";
	char path[32];
	sigset_t all, old;
	cpu_set_t where;
	bool pinned;
	pid_t pid;
	int dir;

	/* No exit signal: the host program (libward's caller) never sees this
	 * child in its SIGCHLD or wait(); ward reaps it by its pidfd. It runs
	 * on this CPU only (pin_here()): one that shares the memory
	 * (CLONE_VM) and ran on another CPU would leave that CPU in the mm's
	 * mask, and every later TLB flush of the supervisor (the spawn's
	 * copy-on-write, each fault after it) would interrupt it (~0.2 ms of a
	 * run measured in a VM). The caller's own placement back after: a pin
	 * of the whole setup saved CPU time but cost wall time (init and the
	 * command then waited for this CPU with the other idle). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pinned = pin_here(&where);
	pid = clone(idmap_child, p->idmap_stack + sizeof(p->idmap_stack),
		    CLONE_NEWUSER | CLONE_VM | CLONE_FILES | CLONE_PIDFD, NULL, &p->idmap_pidfd);
	if (pinned)
		sched_setaffinity(0, sizeof(where), &where);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid <= 0) {
		p->idmap_pidfd = -1;
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	/* Still ours, so the directory opened was its: only a reap frees the
	 * pid for another process, and none but ward's own waits (or another
	 * thread's wait for clone children, __WALL) reaps this one. */
	if (syscall(SYS_pidfd_send_signal, p->idmap_pidfd, 0, NULL, 0) < 0) {
		close(dir);
		return;
	}
	if (write_map(dir, "uid_map", map) == 0 && write_map(dir, "gid_map", map) == 0)
		p->idmap_ns = openat(dir, "ns/user", O_RDONLY | O_CLOEXEC);
	close(dir);
}

/* A detached recursive copy of the host's dir, idmapped through userns;
 * -1 where the kernel or a filesystem under dir cannot (then a bind, as
 * before, with the masks for what root alone may read). */
static int idmapped_tree(const char *dir, int userns)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
	int fd;

	fd = (int)syscall(SYS_open_tree, AT_FDCWD, dir,
			  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (fd < 0)
		return -1;
	attr.userns_fd = (uint64_t)userns;
	if (mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void ward_spawn_plan_view_release(struct spawn_plan *p, bool reap)
{
	if (!p->view_planned)
		return;
	for (int k = 0; k < p->n_sys; k++)
		if (p->sys[k].fd >= 0) {
			close(p->sys[k].fd);
			p->sys[k].fd = -1;
		}
	if (p->idmap_ns >= 0) {
		close(p->idmap_ns);
		p->idmap_ns = -1;
	}
	/* Reaped at the end of the run, off the path; until then the
	 * namespace lives on in the zombie's credentials too. */
	if (reap && p->idmap_pidfd >= 0) {
		siginfo_t si;

		while (waitid(P_PIDFD, (id_t)p->idmap_pidfd, &si, WEXITED | __WALL) < 0 &&
		       errno == EINTR)
			;
		close(p->idmap_pidfd);
		p->idmap_pidfd = -1;
	}
}

int ward_spawn_plan_view(struct spawn_plan *p, struct ward_error **err)
{
	const char *const *masked = ward_view_masked();
	size_t i;

	p->view_planned = true;
	p->proc_ro = geteuid() == 0 && p->cfg->landlock != WARD_LANDLOCK_REQUIRED;
	p->idmap_ns = p->idmap_pidfd = -1;
	p->n_sys = 0;
	for (i = 0; i < ARRAY_SIZE(sysdirs); i++) {
		struct spawn_sysdir *d = &p->sys[p->n_sys];
		struct stat st;
		ssize_t n;

		if (lstat(sysdirs[i], &st) < 0)
			continue; /* a host without /lib32, say */
		snprintf(d->path, sizeof(d->path), "%s", sysdirs[i]);
		d->fd = -1;
		d->is_link = S_ISLNK(st.st_mode);
		if (d->is_link) {
			n = readlink(sysdirs[i], d->link, sizeof(d->link) - 1);
			if (n < 0)
				return ward_error_make(err, errno, "readlink '%s'", sysdirs[i]);
			if (n == (ssize_t)sizeof(d->link) - 1)
				return ward_error_make(err, ENAMETOOLONG, "readlink '%s'", sysdirs[i]);
			d->link[n] = '\0';
		} else if (!S_ISDIR(st.st_mode)) {
			continue;
		}
		p->n_sys++;
	}
	/* Root inside is the host's root (uid 0 maps to uid 0), owner of every
	 * file only root may read: seen through an idmapped tree, those are
	 * nobody's. Only the host's root can make one, and only it needs it. */
	if (geteuid() == 0) {
		idmap_make(p);
		for (i = 0; p->idmap_ns >= 0 && i < (size_t)p->n_sys; i++)
			if (!p->sys[i].is_link)
				p->sys[i].fd = idmapped_tree(p->sys[i].path, p->idmap_ns);
	}

	p->n_masks = 0;
	for (i = 0; masked[i]; i++) {
		if (strchr(masked[i], '*')) {
			glob_t g;
			size_t k;

			if (glob(masked[i], GLOB_NOSORT, NULL, &g) == 0)
				for (k = 0; k < g.gl_pathc; k++)
					add_mask(p, g.gl_pathv[k]);
			globfree(&g);
		} else {
			add_mask(p, masked[i]);
		}
	}

	for (i = 0; i < p->cfg->n_mounts && i < ARRAY_SIZE(p->mount_is_file); i++) {
		const struct ward_mount *m = &p->cfg->mounts[i];
		struct stat st;

		p->mount_is_file[i] = false;
		if (m->kind == WARD_MOUNT_TMPFS)
			continue;
		if (stat(m->source, &st) < 0)
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
						    "mount source '%s'", m->source);
		p->mount_is_file[i] = !S_ISDIR(st.st_mode);
	}
	return 0;
}

/* ---- child side: system calls only ----------------------------------- */

static int fail(struct ward_error **err, const char *what, const char *path)
{
	return ward_error_make(err, errno, "%s '%s'", what, path);
}

/* mkdir -p of root + path, creating components after root only. */
static int mkdir_under(const char *root, const char *path, struct ward_error **err)
{
	char buf[PATH_MAX];
	size_t rlen = strlen(root);
	char *p;

	if ((size_t)snprintf(buf, sizeof(buf), "%s%s", root, path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return fail(err, "mkdir", path);
	}
	for (p = buf + rlen + 1; ; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
			*p = c;
			return fail(err, "mkdir", buf + rlen);
		}
		*p = c;
		if (c == '\0')
			break;
	}
	return 0;
}

/* An empty file at root + path (mount point of a file bind). */
static int touch_under(const char *root, const char *path, struct ward_error **err)
{
	char buf[PATH_MAX], *slash;
	int fd;

	snprintf(buf, sizeof(buf), "%s", path);
	slash = strrchr(buf, '/');
	if (slash && slash != buf) {
		*slash = '\0';
		if (mkdir_under(root, buf, err) < 0)
			return -1;
	}
	snprintf(buf, sizeof(buf), "%s%s", root, path);
	if (access(buf, F_OK) == 0)
		return 0; /* an existing file is a mount point as it is */
	fd = open(buf, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && errno != EEXIST && errno != EISDIR)
		return fail(err, "create mount point", path);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int setattr(const char *path, unsigned flags, uint64_t set, const char *shown,
		   struct ward_error **err)
{
	struct mount_attr attr = { .attr_set = set };

	if (mount_setattr(AT_FDCWD, path, flags, &attr, sizeof(attr)) < 0)
		return fail(err, "mount_setattr", shown);
	return 0;
}

/* shown_src/shown_dst are the paths as the user knows them (the real source
 * may be /proc/self/fd/N, the real target under the staging directory). */
static int bind(const char *src, const char *dst, const char *shown_src, const char *shown_dst,
		struct ward_error **err)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return ward_error_make(err, errno, "bind mount '%s' on '%s'", shown_src, shown_dst);
	return 0;
}

/* The options of a tmpfs the command can write: its size capped (the plan's
 * tmpfs_size), and its inodes, which cost memory too without a byte of
 * data (~1 KiB each with the dentry): one per KiB of the size. */
static void tmpfs_options(char *buf, size_t n, const char *mode, uint64_t size)
{
	uint64_t inodes;

	if (!size)
		size = WARD_TMPFS_DEFAULT;
	inodes = size / 1024;
	if (inodes < 4096)
		inodes = 4096;
	snprintf(buf, n, "mode=%s,size=%llu,nr_inodes=%llu", mode, (unsigned long long)size,
		 (unsigned long long)inodes);
}

static int build_dev(const char *R, uint64_t tmpfs_size, struct ward_error **err)
{
	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" },		 { "/proc/self/fd", "fd" },
		{ "/proc/self/fd/0", "stdin" },	 { "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" },
	};
	char dst[PATH_MAX], src[64], opts[96];
	size_t i;

	snprintf(dst, sizeof(dst), "%s/dev", R);
	if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0)
		return fail(err, "mount tmpfs on", "/dev");
	snprintf(dst, sizeof(dst), "%s/dev/pts", R);
	if (mkdir(dst, 0755) < 0)
		return fail(err, "mkdir", "/dev/pts");
	snprintf(dst, sizeof(dst), "%s/dev/shm", R);
	if (mkdir(dst, 01777) < 0)
		return fail(err, "mkdir", "/dev/shm");
	for (i = 0; i < ARRAY_SIZE(links); i++) {
		snprintf(dst, sizeof(dst), "%s/dev/%s", R, links[i][1]);
		if (symlink(links[i][0], dst) < 0)
			return fail(err, "symlink", links[i][1]);
	}
	for (i = 0; i < ARRAY_SIZE(devices); i++) {
		snprintf(dst, sizeof(dst), "%s/dev/%s", R, devices[i]);
		snprintf(src, sizeof(src), "/dev/%s", devices[i]);
		/* a regular file to bind the node over: one call, no descriptor */
		if (mknod(dst, S_IFREG | 0666, 0) < 0)
			return fail(err, "create", src);
		if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
			return fail(err, "bind mount", src);
	}
	/* The /dev tmpfs and every node bound on it read-only, in one call: no
	 * new nodes or files in /dev, and the nodes — the host's inodes — still
	 * open for writing (a device's data is no change to the mount) but take
	 * no chmod, chown or utimes; as root inside, `chmod 000 /dev/null`
	 * would break the host's. devpts and /dev/shm are mounted after, on
	 * their (read-only) mount points, and stay writable. */
	snprintf(dst, sizeof(dst), "%s/dev", R);
	if (setattr(dst, AT_RECURSIVE, MOUNT_ATTR_RDONLY, "/dev", err) < 0)
		return -1;
	snprintf(dst, sizeof(dst), "%s/dev/pts", R);
	/* max: pseudo-terminals count against the host's kernel.pty.max,
	 * shared with every user; a sandbox takes 256 at most */
	if (mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC,
		  "newinstance,ptmxmode=0666,mode=620,max=256") < 0)
		return fail(err, "mount devpts on", "/dev/pts");
	snprintf(dst, sizeof(dst), "%s/dev/shm", R);
	tmpfs_options(opts, sizeof(opts), "1777", tmpfs_size);
	if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return fail(err, "mount tmpfs on", "/dev/shm");
	return 0;
}

/* The workdir as an overlay: the real one (wfd) the lower layer, under the
 * placeholder layer when there is one; writes go to the run's upper. Mounted
 * from the sandbox's own user namespace: unprivileged overlayfs needs Linux
 * 5.11, and user.* xattrs on the upper's filesystem (userxattr). */
static int mount_overlay(const char *dst, int wfd, const int ofd[3], const char *shown,
			 struct ward_error **err)
{
	char opts[256];

	if (ofd[2] >= 0)
		snprintf(opts, sizeof(opts),
			 "lowerdir=/proc/self/fd/%d:/proc/self/fd/%d,upperdir=/proc/self/fd/%d,"
			 "workdir=/proc/self/fd/%d,userxattr",
			 ofd[2], wfd, ofd[0], ofd[1]);
	else
		snprintf(opts, sizeof(opts),
			 "lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d,"
			 "workdir=/proc/self/fd/%d,userxattr",
			 wfd, ofd[0], ofd[1]);
	if (mount("overlay", dst, "overlay", MS_NOSUID | MS_NODEV, opts) < 0) {
		if (errno == EPERM || errno == EINVAL || errno == ENODEV)
			return ward_error_make(err, errno,
					       "mount overlay on '%s' (overlay workdir mode needs "
					       "overlayfs in user namespaces, Linux 5.11 or later, "
					       "and an upper directory on a filesystem with user "
					       "xattrs: not tmpfs before 6.6, not overlayfs, not NFS)",
					       shown);
		return fail(err, "mount overlay on", shown);
	}
	return 0;
}

/* Placeholders: the first is covered by an empty read-only tmpfs, the
 * others by binds of it. A new tmpfs superblock per placeholder costs more
 * (made, then torn down with the namespace); a clone of a detached fsmount()
 * would be cheaper still, but kernels before 6.x refuse open_tree() on it.
 * A bind takes the flags of the mount it clones (read-only, nosuid, nodev,
 * noexec) and the tmpfs itself is read-only, so one call per placeholder
 * after the first: no mount_setattr(). */
static int cover(const char *first, const char *dst, const char *path,
		 struct ward_error **err)
{
	if (!*first) {
		if (mount("tmpfs", dst, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=4k,nr_inodes=1,mode=0555") < 0)
			return fail(err, "cover protected path", path);
		return 0;
	}
	if (mount(first, dst, NULL, MS_BIND, NULL) < 0)
		return fail(err, "cover protected path", path);
	return 0;
}

/* Protected paths in the workdir: directories on the way pinned (a mount
 * point cannot be renamed, removed or replaced: EBUSY), the paths themselves
 * bound read-only over themselves, placeholders covered by an empty
 * read-only tmpfs. The plan lists parents first. */
static int protect_one(const struct spawn_protect *m, const char *R, char *dst, char *first,
		       struct ward_error **err)
{
	if ((size_t)snprintf(dst, PATH_MAX, "%s%s", R, m->path) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return fail(err, "protect", m->path);
	}
	switch (m->kind) {
	case SPAWN_PROTECT_PIN:
		if (mount(dst, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
			return fail(err, "pin protected path's directory", m->path);
		break;
	case SPAWN_PROTECT_RO:
		if (mount(dst, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
			return fail(err, "bind protected path", m->path);
		if (setattr(dst, AT_RECURSIVE,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, m->path,
			    err) < 0)
			return -1;
		break;
	case SPAWN_PROTECT_LINK: {
		/* the link itself, not where it leads: a clone of it attached
		 * over it, so it still resolves but cannot be replaced */
		int fd = (int)syscall(SYS_open_tree, AT_FDCWD, dst,
				      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);

		if (fd < 0)
			return fail(err, "open_tree protected link", m->path);
		if (syscall(SYS_move_mount, fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
			close(fd);
			return fail(err, "pin protected link", m->path);
		}
		close(fd);
		break;
	}
	case SPAWN_PROTECT_RW: {
		/* a clone of the read-only mount above takes its flags: clear
		 * read-only on this one mount only (what is below stays as it
		 * was; a mount locked read-only by the host would refuse) */
		struct mount_attr attr = { .attr_clr = MOUNT_ATTR_RDONLY };

		if (mount(dst, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
			return fail(err, "bind writable entry of home", m->path);
		if (mount_setattr(AT_FDCWD, dst, 0, &attr, sizeof(attr)) < 0)
			return fail(err, "mount_setattr writable entry of home", m->path);
		break;
	}
	case SPAWN_PROTECT_EMPTY:
		if (cover(first, dst, m->path, err) < 0)
			return -1;
		if (!*first)
			memcpy(first, dst, strlen(dst) + 1);
		break;
	}
	return 0;
}

static int protect_paths(const struct spawn_plan *p, const char *R, struct ward_error **err)
{
	char dst[PATH_MAX], first[PATH_MAX] = "";
	int rc = 0;

	for (size_t i = 0; i < p->n_protect && rc == 0; i++)
		rc = protect_one(&p->protect[i], R, dst, first, err);
	return rc;
}

/* Direct mode's git directories (gitdir.c): lower, upper and work of each
 * held open before the new root covers anything. */
static int open_gitdirs(const struct spawn_plan *p, int gfd[][3], struct ward_error **err)
{
	if (p->n_gitdirs > SPAWN_MAX_GITDIRS) {
		errno = E2BIG;
		return fail(err, "overlay git directories of", p->workdir);
	}
	for (size_t i = 0; i < p->n_gitdirs; i++) {
		const char *dirs[3] = { p->gitdirs[i].path, p->gitdirs[i].upper, p->gitdirs[i].work };

		for (int k = 0; k < 3; k++) {
			gfd[i][k] = open(dirs[k], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (gfd[i][k] < 0)
				return fail(err, "open git directory's overlay", dirs[k]);
		}
	}
	return 0;
}

/* Each git directory under its overlay, at its place in the workdir (the
 * plan lists a directory before any inside it). A failure is the run's: a
 * git directory left writable would be the hole this closes. */
static int mount_gitdirs(const struct spawn_plan *p, const char *R, int gfd[][3],
			 struct ward_error **err)
{
	char dst[PATH_MAX], opts[256];

	for (size_t i = 0; i < p->n_gitdirs; i++) {
		snprintf(dst, sizeof(dst), "%s%s", R, p->gitdirs[i].path);
		/* volatile: no syncfs() of the upper's whole filesystem when the
		 * namespace goes (measured: tens of ms on a busy disk); the
		 * upper is thrown away once merged, and after a crash anyway */
		snprintf(opts, sizeof(opts),
			 "lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d,"
			 "workdir=/proc/self/fd/%d,userxattr,volatile",
			 gfd[i][0], gfd[i][1], gfd[i][2]);
		if (mount("overlay", dst, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
			return ward_error_make(err, errno,
					       "mount overlay on git directory '%s' (needs overlayfs "
					       "in user namespaces, Linux 5.11 or later, and ward's "
					       "state directory on a filesystem with user xattrs; "
					       "--allow-write .git opens it instead)",
					       p->gitdirs[i].path);
		for (int k = 0; k < 3; k++)
			close(gfd[i][k]);
	}
	return 0;
}

/* Without Landlock's write rule (--landlock off or best-effort on a kernel
 * without it) nothing else keeps host root inside from the knobs: each
 * bound over itself read-only, in the view, once init has written the
 * namespace's budgets (/proc/sys/user). Not where Landlock is required,
 * which refuses every write there already (and a command allowed to nest
 * could no longer make a procfs of its own). */
int ward_view_seal_proc(const struct spawn_plan *p, struct ward_error **err)
{
	char dst[64];

	for (size_t k = 0; p->proc_ro && k < ARRAY_SIZE(proc_knobs); k++) {
		snprintf(dst, sizeof(dst), "/proc/%s", proc_knobs[k]);
		if (access(dst, F_OK) < 0)
			continue; /* a kernel without it (sysrq, PCI) */
		if (mount(dst, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
			return fail(err, "bind over itself", dst);
		if (setattr(dst, AT_RECURSIVE,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				    MOUNT_ATTR_NOEXEC,
			    dst, err) < 0)
			return -1;
	}
	return 0;
}

int ward_view_build(const struct spawn_plan *p, struct ward_error **err)
{
	const struct ward_config *cfg = p->cfg;
	const char *R = p->staging;
	char dst[PATH_MAX], src[64], opts[96];
	int wfd, mfd[64], ofd[3] = { -1, -1, -1 }, gfd[SPAWN_MAX_GITDIRS][3], cafd = -1;
	size_t i;
	int k;

	/* Nothing done here may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail(err, "make mounts private under", "/");

	/* Sources the caller chose may lie under the staging directory, which
	 * the new root is about to cover: hold them open and bind from the fds. */
	/* The workdir was admitted as this resolved path (ward/admit.h): no
	 * symbolic link on the way now either, so that a directory swapped for
	 * a link since (by a command of another sandbox in a parent of it)
	 * cannot bind somewhere that was never admitted. */
	{
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};

		wfd = (int)syscall(SYS_openat2, AT_FDCWD, p->workdir, &how, sizeof(how));
		if (wfd < 0 && errno == ENOSYS) /* before Linux 5.6 */
			wfd = open(p->workdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (wfd < 0)
		return fail(err, "open workdir", p->workdir);
	if (p->ovl_upper) {
		const char *dirs[3] = { p->ovl_upper, p->ovl_work, p->ovl_placeholders };

		for (k = 0; k < 3; k++) {
			if (!dirs[k])
				continue;
			ofd[k] = open(dirs[k], O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (ofd[k] < 0)
				return fail(err, "open overlay directory", dirs[k]);
		}
	}
	if (open_gitdirs(p, gfd, err) < 0)
		return -1;
	for (i = 0; i < cfg->n_mounts && i < ARRAY_SIZE(mfd); i++) {
		mfd[i] = -1;
		if (cfg->mounts[i].kind == WARD_MOUNT_TMPFS)
			continue;
		mfd[i] = open(cfg->mounts[i].source, O_PATH | O_CLOEXEC);
		if (mfd[i] < 0)
			return fail(err, "open mount source", cfg->mounts[i].source);
	}

	if (p->ca_bundle) {
		/* it may lie under the staging directory too */
		cafd = open(p->ca_bundle, O_PATH | O_CLOEXEC);
		if (cafd < 0)
			return fail(err, "open the CA bundle", p->ca_bundle);
	}
	if (mount("tmpfs", R, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
		return fail(err, "mount tmpfs on", R);

	/* Mount points first: once the tree is read-only nothing can be made. */
	if (mkdir_under(R, "/proc", err) < 0 || mkdir_under(R, "/dev", err) < 0 ||
	    mkdir_under(R, "/tmp", err) < 0 || mkdir_under(R, p->workdir, err) < 0)
		return -1;
	for (i = 0; i < cfg->n_mounts && i < ARRAY_SIZE(mfd); i++) {
		int r = i < ARRAY_SIZE(p->mount_is_file) && p->mount_is_file[i] ?
				touch_under(R, cfg->mounts[i].target, err) :
				mkdir_under(R, cfg->mounts[i].target, err);
		if (r < 0)
			return -1;
	}

	for (k = 0; k < p->n_sys; k++) {
		const struct spawn_sysdir *d = &p->sys[k];

		snprintf(dst, sizeof(dst), "%s%s", R, d->path);
		if (d->is_link) {
			if (symlink(d->link, dst) < 0 && errno != EEXIST)
				return fail(err, "symlink", d->path);
			continue;
		}
		if (mkdir(dst, 0755) < 0 && errno != EEXIST)
			return fail(err, "mkdir", d->path);
		if (d->fd >= 0) {
			if (syscall(SYS_move_mount, d->fd, "", AT_FDCWD, dst,
				    MOVE_MOUNT_F_EMPTY_PATH) < 0)
				return fail(err, "move the idmapped tree to", d->path);
			close(d->fd);
		} else if (bind(d->path, dst, d->path, d->path, err) < 0) {
			return -1;
		}
	}
	for (k = 0; k < p->n_masks; k++) {
		snprintf(dst, sizeof(dst), "%s%s", R, p->masks[k].path);
		if (p->masks[k].dir ?
			    mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k,mode=0755") :
			    mount("/dev/null", dst, NULL, MS_BIND, NULL))
			return fail(err, "mask", p->masks[k].path);
	}
	/* The run's trust bundle over the system's CA files: read-only with
	 * the rest just below. */
	for (k = 0; cafd >= 0 && ca_files[k]; k++) {
		if (!regular_file(ca_files[k]))
			continue;
		snprintf(dst, sizeof(dst), "%s%s", R, ca_files[k]);
		snprintf(src, sizeof(src), "/proc/self/fd/%d", cafd);
		if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
			return fail(err, "bind the CA bundle on", ca_files[k]);
	}
	if (cafd >= 0)
		close(cafd);
	/* One call makes the root and every system bind read-only, nosuid, nodev
	 * (a file masked by /dev/null becomes unopenable: nodev). */
	if (setattr(R, AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		    "/", err) < 0)
		return -1;

	if (build_dev(R, p->tmpfs_size, err) < 0)
		return -1;

	snprintf(dst, sizeof(dst), "%s/proc", R);
	/* Never the outer /proc bound in its place: its PIDs are the host's.
	 * The kernel refuses a new procfs in a user namespace while the /proc
	 * it can see has paths mounted over — what a container engine does
	 * to /proc/kcore, /proc/sys and the like. */
	if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		if (errno == EPERM)
			return ward_error_make(err, errno,
					       "mount proc on '/proc' (the outer /proc has masked "
					       "paths, as in a container: unmask /proc, see "
					       "'ward doctor')");
		return fail(err, "mount proc on", "/proc");
	}

	/* /tmp before the workdir: a workdir under /tmp goes on top of it. */
	snprintf(dst, sizeof(dst), "%s/tmp", R);
	tmpfs_options(opts, sizeof(opts), "1777", p->tmpfs_size);
	if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return fail(err, "mount tmpfs on", "/tmp");

	if (mkdir_under(R, p->workdir, err) < 0)
		return -1;
	snprintf(dst, sizeof(dst), "%s%s", R, p->workdir);
	snprintf(src, sizeof(src), "/proc/self/fd/%d", wfd);
	if (p->ovl_upper) {
		if (mount_overlay(dst, wfd, ofd, p->workdir, err) < 0)
			return -1;
	} else if (bind(src, dst, p->workdir, p->workdir, err) < 0) {
		return -1;
	}
	if (setattr(dst, AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, p->workdir, err) < 0)
		return -1;
	close(wfd);
	for (k = 0; k < 3; k++)
		if (ofd[k] >= 0)
			close(ofd[k]);
	if (mount_gitdirs(p, R, gfd, err) < 0)
		return -1;
	if (protect_paths(p, R, err) < 0)
		return -1;

	for (i = 0; i < cfg->n_mounts && i < ARRAY_SIZE(mfd); i++) {
		const struct ward_mount *m = &cfg->mounts[i];

		snprintf(dst, sizeof(dst), "%s%s", R, m->target);
		/* A target under a writable mount made just above may be missing;
		 * one under a read-only part fails here, saying so. */
		if ((i < ARRAY_SIZE(p->mount_is_file) && p->mount_is_file[i] ?
			     touch_under(R, m->target, err) :
			     mkdir_under(R, m->target, err)) < 0)
			return -1;
		if (m->kind == WARD_MOUNT_TMPFS) {
			tmpfs_options(opts, sizeof(opts), "0755", p->tmpfs_size);
			if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
				return fail(err, "mount tmpfs on", m->target);
			continue;
		}
		snprintf(src, sizeof(src), "/proc/self/fd/%d", mfd[i]);
		if (bind(src, dst, m->source, m->target, err) < 0)
			return -1;
		if (setattr(dst, AT_RECURSIVE,
			    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				    (m->kind == WARD_MOUNT_RO_BIND ? MOUNT_ATTR_RDONLY : 0),
			    m->target, err) < 0)
			return -1;
		close(mfd[i]);
	}

	/* pivot_root(".", ".") stacks the old root on the new one; detaching
	 * "." then drops the old root without needing a directory for it. */
	if (chdir(R) < 0)
		return fail(err, "chdir", R);
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return fail(err, "pivot_root", R);
	if (umount2(".", MNT_DETACH) < 0)
		return fail(err, "detach old root", "/");
	if (chdir(p->workdir) < 0)
		return fail(err, "chdir", p->workdir);
	return 0;
}
