/* run.c — ward_run(): prepare the plan, spawn, supervise, fill the result. */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "runtime/util/util-internal.h"
#include "runtime/core/core-internal.h"
#include "runtime/net/net-internal.h"
#include "ward/netrules.h"
#include "runtime/workdir/workdir-internal.h"
#include "ward/env.h"
#include "ward/outbuf.h"
#include "ward/sandbox.h"

extern char **environ;

void ward_result_release(struct ward_result *res)
{
	free(res->output);
	free(res->stderr_text);
	free(res->stdout_text);
	free(res->net_records);
	ward_error_free(res->error);
	ward_workdir_report_free(res->workdir);
	memset(res, 0, sizeof(*res));
}

int ward_result_exit_status(const struct ward_result *res)
{
	return res->exit_code;
}

static void set_error(struct ward_result *res, enum ward_error_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_error(struct ward_result *res, enum ward_error_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(&res->error, kind, 0, fmt, ap);
	va_end(ap);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* HOME must be a directory the command can see; the host's usually is not
 * (nothing of /home or /root is in the view). Then it is /tmp. */
static const char *home_inside(const struct ward_config *cfg, const char *workdir,
			       char *const *env)
{
	const char *home = ward_env_get(env, "HOME");
	size_t i;

	if (!home || cfg->mode == WARD_SANDBOX_OFF || !cfg->view)
		return NULL;
	if (under(home, workdir) || under(home, "/tmp"))
		return NULL;
	for (i = 0; i < cfg->n_mounts; i++)
		if (under(home, cfg->mounts[i].target))
			return NULL;
	return "HOME=/tmp";
}

/* The host directory the new root is mounted on while it is built. It must
 * not be inside anything bound recursively into the view (a workdir of /tmp,
 * say), or the bind would carry the half-built root with it. */
static const char *staging_dir(const struct ward_config *cfg, const char *workdir)
{
	static const char *const candidates[] = { "/tmp", "/mnt", "/run", "/var/tmp", "/opt", "/srv" };
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(candidates); i++) {
		const char *c = candidates[i];
		bool ok = access(c, F_OK) == 0 && !under(c, workdir);

		for (k = 0; ok && k < cfg->n_mounts; k++)
			if (cfg->mounts[k].source && under(c, cfg->mounts[k].source))
				ok = false;
		if (ok)
			return c;
	}
	return NULL;
}

struct run_state {
	struct spawn_chain *chain; /* --no-shell */
	struct spawn_plan plan;
	unsigned admitted;   /* what the workdir is (WARD_ADMIT_*, admit.h) */
	int in_src;          /* the host's stdin when open, else -1 */
	char **env;
	int out[2], err[2], report[2], life[2];
	int in[2];           /* the command's stdin pipe; [1] relayed into */
	int pty, pty_slave;  /* the command's terminal: master, slave */
	int pty_in;          /* a second fd of the master, the stdin relay's */
	int pty_wait;        /* where init sends the master it made, or -1 */
	int out_sink, err_sink, pty_sink, tty_fd;
	struct termios tty_saved;
	int pidfd;
	struct ward_outbuf *obuf, *ebuf;
	struct ward_fences *fences;
	const char **rw_paths;
	struct net_setup net;
	struct ward_proxy *proxy;
	int net_log_fd;
	/* TLS interception: the sandbox's trust bundle (the system's and the
	 * run's CA), a file of the state directory removed at the end, bound
	 * read-only over the system's CA files in the view */
	char *ca_bundle;
	int ca_bundle_fd;
	char *ca_env[12];
	struct ward_workdir_prep wd;
	/* last: state_init() leaves its path buffers (24 KiB) as they are */
	struct ward_cgroup cg;
};

static void state_release(struct run_state *st)
{
	int *fds[] = { st->out, st->err, st->report, st->life, st->in };
	size_t i;

	ward_chain_free(st->chain); /* frees only its own strings, not the env's */
	ward_spawn_plan_view_release(&st->plan, true);

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (fds[i][0] >= 0)
			close(fds[i][0]);
		if (fds[i][1] >= 0)
			close(fds[i][1]);
	}
	if (st->pidfd >= 0)
		close(st->pidfd);
	if (st->pty >= 0)
		close(st->pty);
	if (st->pty_slave >= 0)
		close(st->pty_slave);
	if (st->pty_in >= 0)
		close(st->pty_in);
	if (st->pty_wait >= 0)
		close(st->pty_wait);
	ward_env_free(st->env);
	ward_fences_free(st->fences);
	free(st->rw_paths);
	ward_outbuf_free(st->obuf);
	ward_outbuf_free(st->ebuf);
	ward_proxy_free(st->proxy);
	if (st->ca_bundle_fd >= 0)
		close(st->ca_bundle_fd);
	if (st->ca_bundle) {
		unlink(st->ca_bundle);
		free(st->ca_bundle);
	}
	for (i = 0; i < ARRAY_SIZE(st->ca_env); i++)
		free(st->ca_env[i]);
	ward_net_release(&st->net);
	if (st->net_log_fd >= 0)
		close(st->net_log_fd);
	ward_cgroup_destroy(&st->cg);
}

/* Landlock and seccomp, planned and compiled here; entered by init. */
static int prepare_fences(struct run_state *st, const struct ward_config *cfg,
			  const char *workdir, struct ward_error **err)
{
	struct ward_fences_config fc;
	size_t i, n = 0;

	ward_fences_config_init(&fc);
	fc.landlock.mode = cfg->landlock;
	/* The kernel refuses mount and pivot_root to any process Landlock
	 * restricts the filesystem of, in whatever namespace: a command that
	 * builds its own sandboxes cannot be under it. The view, seccomp and
	 * the dropped capabilities remain; the result says Landlock is off. */
	if (cfg->allow_nested)
		fc.landlock.mode = WARD_LANDLOCK_OFF;
	fc.landlock.min_abi = cfg->landlock_min_abi;
	fc.landlock.abi_max = cfg->landlock_abi_max;
	fc.landlock.workdir = workdir;
	/* Without the view the sandbox sees the host's /tmp; it stays writable
	 * there as it is in the view (its own tmpfs). */
	st->rw_paths = calloc(cfg->n_mounts + 1, sizeof(*st->rw_paths));
	if (!st->rw_paths)
		return ward_error_make(err, ENOMEM, "fences");
	for (i = 0; i < cfg->n_mounts; i++)
		if (cfg->mounts[i].kind != WARD_MOUNT_RO_BIND)
			st->rw_paths[n++] = cfg->mounts[i].target;
	fc.landlock.rw_paths = st->rw_paths;
	if (st->net.mode == WARD_NET_PROXY) {
		/* TCP connect: the proxy's port and the listed local ports. */
		fc.landlock.restrict_connect = true;
		fc.landlock.connect_ports[fc.landlock.n_connect_ports++] = st->net.port;
		for (i = 0; i < cfg->n_local_ports; i++)
			fc.landlock.connect_ports[fc.landlock.n_connect_ports++] = cfg->local_ports[i];
	}
	fc.seccomp = cfg->seccomp ? cfg->seccomp : "default";
	fc.seccomp_options.allow_ptrace = cfg->allow_ptrace;
	fc.seccomp_options.allow_nested = cfg->allow_nested;
	if (ward_fences_prepare(&fc, &st->fences, err) < 0)
		return -1;
	st->plan.fences = st->fences;
	return 0;
}

/* The file the sandbox will trust: empty now, filled after clone3 by
 * ward_proxy_start_tls() (the CA is made only then: its key is never in
 * init's copy of our memory). Mode 0644: public material, read inside by
 * whatever uid the command has. A go-ahead pipe makes init wait for it
 * before the command runs (veth has one already). */
/* Bundles of runs whose ward is gone (killed with SIGKILL: nothing of it
 * could remove its file) are removed by the next run that makes one: a
 * bundle's name carries its ward's pid, and one whose pid no longer exists
 * and that is over a minute old (a pid of another namespace sharing this
 * state directory is not seen as alive) goes. Public material either way. */
static void sweep_ca_bundles(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long long now = (long long)time(NULL);

	while (d && (e = readdir(d))) {
		struct stat sb;
		char *end;
		long pid;

		if (strncmp(e->d_name, "ca-bundle-", 10) != 0)
			continue;
		pid = strtol(e->d_name + 10, &end, 10);
		if (end == e->d_name + 10 || *end != '-' || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode) && sb.st_uid == geteuid() && now - sb.st_mtime > 60)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	if (d)
		closedir(d);
}

static int prepare_ca_bundle(struct run_state *st, const struct ward_config *cfg,
			     struct ward_error **err)
{
	char *dir = ward_state_dir_for(cfg->state_dir, err);
	size_t n;

	if (!dir)
		return -1;
	sweep_ca_bundles(dir);
	n = strlen(dir) + sizeof("/ca-bundle-2147483647-XXXXXX");
	st->ca_bundle = malloc(n);
	if (!st->ca_bundle) {
		free(dir);
		return ward_error_make(err, ENOMEM, "CA bundle");
	}
	snprintf(st->ca_bundle, n, "%s/ca-bundle-%d-XXXXXX", dir, (int)getpid());
	free(dir);
	st->ca_bundle_fd = mkostemp(st->ca_bundle, O_CLOEXEC);
	if (st->ca_bundle_fd < 0) {
		int e = errno;

		free(st->ca_bundle);
		st->ca_bundle = NULL;
		return ward_error_make(err, e, "create the sandbox's CA bundle");
	}
	if (fchmod(st->ca_bundle_fd, 0644) < 0)
		return ward_error_make(err, errno, "chmod '%s'", st->ca_bundle);
	if (st->net.go[0] < 0 && pipe2(st->net.go, O_CLOEXEC) < 0)
		return ward_error_make(err, errno, "pipe");
	return 0;
}

/* The variables common tools read for their trust store, all naming the
 * bundle (inside the view: where it is bound, the system's own path). */
static size_t ca_env(struct run_state *st, bool view, const char **out, size_t max)
{
	static const char *const names[] = {
		"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
		"GIT_SSL_CAINFO", "PIP_CERT", "AWS_CA_BUNDLE", "npm_config_cafile",
		"CARGO_HTTP_CAINFO", "DENO_CERT",
	};
	const char *path = view ? WARD_CA_BUNDLE_PATH : st->ca_bundle;
	size_t i, n = 0;

	if (!st->ca_bundle)
		return 0;
	for (i = 0; i < ARRAY_SIZE(names) && i < ARRAY_SIZE(st->ca_env) && n < max; i++) {
		free(st->ca_env[i]);
		if (asprintf(&st->ca_env[i], "%s=%s", names[i], path) < 0) {
			st->ca_env[i] = NULL;
			break;
		}
		out[n++] = st->ca_env[i];
	}
	return n;
}

/* The network mode, the transport's fds, the proxy (credentials expanded
 * now, so a missing variable fails before anything starts), the log. */
static int prepare_net(struct run_state *st, const struct ward_config *cfg,
		       struct ward_error **err)
{
	if (cfg->net != WARD_NET_PROXY)
		return 0;
	/* Asked for a fence that cannot be had: say so rather than run with
	 * the host's network. */
	if (cfg->mode == WARD_SANDBOX_OFF)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "network mode proxy needs the sandbox (not --sandbox off)");
	if (!(cfg->namespaces & WARD_NS_NET))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "network mode proxy needs the network namespace");
	if (ward_net_prepare(&st->net, cfg, err) < 0)
		return -1;
	if (cfg->net_log) {
		/* appended to as the caller (root, often): never through a final
		 * symbolic link, a hard link, or a directory another user can
		 * write (util-internal.h) */
		st->net_log_fd = ward_hostpath_open_file("network log", cfg->net_log,
							 WARD_HOSTPATH_LOG,
							 O_WRONLY | O_APPEND | O_CREAT, 0600, err);
		if (st->net_log_fd < 0) {
			if (err && *err)
				(*err)->kind = WARD_ERR_INVALID_PARAMETERS;
			return -1;
		}
	}
	st->proxy = ward_proxy_new(&cfg->netpolicy, st->net_log_fd, err);
	if (!st->proxy)
		return -1;
	if (ward_netpolicy_intercepts_any(&cfg->netpolicy) && prepare_ca_bundle(st, cfg, err) < 0)
		return -1;
	return 0;
}

/* fd when it is open (fstat answers, *st filled), else -1 (*st zeroed). */
static int fd_look(int fd, struct stat *st)
{
	if (fd >= 0 && fstat(fd, st) == 0)
		return fd;
	memset(st, 0, sizeof(*st));
	return -1;
}

/* Whether two host fds are the same file (2>&1). */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_mode && b->st_mode && a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The host's /dev/null (the character device 1:3, by any name). A stream
 * to or from it needs no relay: the command gets the sandbox's own
 * /dev/null in its place (init opens it inside the view, on its read-only
 * /dev), which reads and writes alike, and no descriptor of the host's. The
 * pipe, its epoll watch and its end-of-file wakeup were ~10 system calls
 * a stream (~3 us each in a VM). */
static bool is_devnull(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3;
}

static bool could_be_tty(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && !is_devnull(st);
}

/* The master's second descriptor, for the stdin relay; the first one
 * non-blocking, for the output's. */
static int relay_pty(struct run_state *st, struct ward_error **err)
{
	st->pty_in = fcntl(st->pty, F_DUPFD_CLOEXEC, 3);
	if (st->pty_in < 0 || fcntl(st->pty, F_SETFL, O_NONBLOCK) < 0)
		return ward_error_make(err, errno, "set up the command's terminal");
	return 0;
}

/* The command's terminal: a pseudo-terminal pair of its own. With the view,
 * init makes it in the sandbox's own devpts (make_pty() in init.c) and sends
 * the master here; the slave's number, for stdio, is the socket init sends
 * it on. Without, it is made from the host's /dev/ptmx here, so that the
 * master never enters the sandbox. The slave starts as a copy of the host
 * terminal (modes, window size); it is no terminal of the host's: nothing
 * else has it open, and it dies with the command. */
static int open_pty(struct run_state *st, int host_tty, struct ward_error **err)
{
	struct spawn_plan *p = &st->plan;
	struct winsize ws;

	if (tcgetattr(host_tty, &st->tty_saved) < 0)
		return ward_error_make(err, errno, "read the terminal's modes");
	st->tty_fd = host_tty;
	if (p->view) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			return ward_error_make(err, errno, "socketpair");
		st->pty_wait = sv[0];
		st->pty_slave = p->pty_sock = sv[1];
		p->pty_modes = st->tty_saved;
		if (ioctl(host_tty, TIOCGWINSZ, &p->pty_size) < 0)
			memset(&p->pty_size, 0, sizeof(p->pty_size));
		return 0;
	}
	st->pty = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (st->pty < 0)
		return ward_error_make(err, errno, "open '/dev/ptmx'");
	if (unlockpt(st->pty) < 0)
		return ward_error_make(err, errno, "unlock the command's terminal");
	/* by the master, not by a path: no name to race for */
	st->pty_slave = ioctl(st->pty, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (st->pty_slave < 0)
		return ward_error_make(err, errno, "open the command's terminal");
	if (tcsetattr(st->pty_slave, TCSANOW, &st->tty_saved) < 0)
		return ward_error_make(err, errno, "set the command's terminal's modes");
	if (ioctl(host_tty, TIOCGWINSZ, &ws) == 0)
		ioctl(st->pty, TIOCSWINSZ, &ws);
	return relay_pty(st, err);
}

/* The master init made (open_pty()), as soon as it comes: init sends it
 * right after the view is built. Until the deadline; without it (init
 * failed first, and says why), the command has no terminal to relay and
 * the host's is left as it is. */
static void take_pty(struct run_state *st, long long deadline_ns)
{
	struct pollfd pf = { .fd = st->pty_wait, .events = POLLIN };
	long long left;
	char tag = 0;
	size_t n = 0;
	int fd = -1, ready;

	/* a signal a host program handles (SIGCHLD) interrupts the wait, not
	 * the terminal: without it the command's output would have no reader */
	do {
		left = deadline_ns - ward_now_ns();
		ready = left > 0 ? poll(&pf, 1, (int)(left / 1000000) + 1) : 0;
	} while (ready < 0 && errno == EINTR);
	if (ready == 1 &&
	    ward_recv_fds(st->pty_wait, &tag, 1, &fd, 1, &n, 0) == 1 && tag == 'T' && n == 1) {
		struct ward_error *e = NULL;

		st->pty = fd;
		if (relay_pty(st, &e) == 0)
			goto out;
		ward_error_free(e);
	} else if (n == 1) {
		close(fd);
	}
	if (st->pty >= 0)
		close(st->pty);
	st->pty = -1;
	st->tty_fd = -1;
out:
	close(st->pty_wait);
	st->pty_wait = -1;
}

/* The command's standard streams: never the host's own descriptors (through
 * one it could chmod the host's file or terminal, or leave the terminal's
 * modes changed). A host stdin is relayed through a pipe; host stdout and
 * stderr through pipes written on as data comes; when the host's stdin is
 * the terminal we are in the foreground of, the command gets a terminal of
 * its own for stdin and for whichever of stdout and stderr is a terminal. */
static int prepare_out(struct run_state *st, int out, int errfd, const struct stat *out_st,
		       const struct stat *err_st, bool out_tty, bool err_tty, bool null_ok,
		       struct ward_error **err);

static int prepare_stdio(struct run_state *st, const struct ward_config *cfg,
			 struct ward_error **err)
{
	struct spawn_plan *p = &st->plan;
	struct stat in_st, out_st, err_st;
	int in = fd_look(cfg->stdin_fd, &in_st), out = fd_look(cfg->stdout_fd, &out_st);
	int errfd = fd_look(cfg->stderr_fd, &err_st);
	/* a terminal is a character device (and not /dev/null): no TCGETS
	 * asked of a pipe or a file */
	bool out_tty = could_be_tty(&out_st) && isatty(out);
	bool err_tty = could_be_tty(&err_st) && isatty(errfd);
	/* --no-shell's stages are given the streams as descriptors: relayed */
	bool null_ok = !st->chain;

	st->in_src = in;
	if (could_be_tty(&in_st) && isatty(in)) {
		/* A background job reading the terminal would be stopped
		 * (SIGTTIN), and could not set its modes: it gets no stdin. */
		if (tcgetpgrp(in) != getpgrp())
			in = -1;
		else if ((out_tty || err_tty) && open_pty(st, in, err) < 0)
			return -1;
	}
	p->stdio[0] = -1;
	if (st->pty_slave >= 0) {
		p->stdio[0] = st->pty_slave;
		p->tty = true;
		st->pty_sink = out_tty ? out : errfd;
	} else if (in >= 0) {
		if (is_devnull(&in_st))
			return prepare_out(st, out, errfd, &out_st, &err_st, out_tty, err_tty,
					   null_ok, err);
		if (pipe2(st->in, O_CLOEXEC) < 0 || fcntl(st->in[1], F_SETFL, O_NONBLOCK) < 0)
			return ward_error_make(err, errno, "pipe");
		p->stdio[0] = st->in[0];
	}
	return prepare_out(st, out, errfd, &out_st, &err_st, out_tty, err_tty, null_ok, err);
}

/* prepare_stdio()'s stdout and stderr. */
static int prepare_out(struct run_state *st, int out, int errfd, const struct stat *out_st,
		       const struct stat *err_st, bool out_tty, bool err_tty, bool null_ok,
		       struct ward_error **err)
{
	struct spawn_plan *p = &st->plan;

	if (st->pty_slave >= 0 && out_tty) {
		p->stdio[1] = st->pty_slave;
	} else if (null_ok && is_devnull(out_st)) {
		p->stdio[1] = -1; /* the sandbox's /dev/null */
	} else {
		if (pipe2(st->out, O_CLOEXEC) < 0)
			return ward_error_make(err, errno, "pipe");
		p->stdio[1] = st->out[1];
		st->out_sink = out;
		if (out < 0) {
			st->obuf = ward_outbuf_new(WARD_OUTBUF_HALF, WARD_OUTBUF_HALF, err);
			if (!st->obuf)
				return -1;
		}
	}
	if (st->pty_slave >= 0 && err_tty) {
		p->stdio[2] = st->pty_slave;
	} else if (null_ok && is_devnull(err_st)) {
		p->stdio[2] = -1;
	} else if (out >= 0 && errfd >= 0 && same_file(out_st, err_st) &&
		   !(st->pty_slave >= 0 && out_tty)) {
		/* 2>&1: one pipe for both, or two relays would interleave what
		 * the command wrote in order */
		p->stdio[2] = p->stdio[1];
	} else {
		if (pipe2(st->err, O_CLOEXEC) < 0)
			return ward_error_make(err, errno, "pipe");
		p->stdio[2] = st->err[1];
		st->err_sink = errfd;
		if (errfd < 0) {
			st->ebuf = ward_outbuf_new(WARD_OUTBUF_HALF, WARD_OUTBUF_HALF, err);
			if (!st->ebuf)
				return -1;
		}
	}
	return 0;
}

/* Whether this process is the host's root: uid 0 in a user namespace that
 * maps it to its parent's 0 (the initial namespace's "0 0 4294967295"; a
 * rootless container's maps it to a user of the host). Not known: taken as
 * the host's root. */
static bool host_root(void)
{
	unsigned long in, out, len;
	bool root = true;
	FILE *f;

	if (geteuid() != 0)
		return false;
	f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return true;
	while (fscanf(f, "%lu %lu %lu", &in, &out, &len) == 3)
		if (in == 0) {
			root = out == 0;
			break;
		}
	fclose(f);
	return root;
}

static int prepare(struct run_state *st, const struct ward_config *cfg, char *const argv[],
		   const char *noshell, const char *workdir, struct ward_error **err)
{
	struct spawn_plan *p = &st->plan;
	char *extra[2] = { NULL, NULL };
	size_t n_set = cfg->n_setenv, n_net = 0, i;
	const char *net_env[40 + WARD_NETRULES_MAX_SECRETS];
	char **set = NULL;
	int k = 0;

	/* A command that makes its own sandboxes runs without Landlock (see
	 * prepare_fences()); started by the host's root it is the host's root
	 * in them, and the kernel's global settings answer to that uid in every
	 * namespace: kernel.core_pattern, a program the kernel runs as root at
	 * the next crash, is one write away. Refused before anything is made. */
	if (cfg->allow_nested && cfg->mode != WARD_SANDBOX_OFF && host_root())
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "--allow-nested is refused to the host's root: the "
					    "command's own sandboxes would hold root's powers over "
					    "the host's kernel settings (no Landlock under them); "
					    "run ward as an unprivileged user, or in a container "
					    "with a user namespace of its own");
	/* Before anything is made: a system directory, a mask's parent or a
	 * home is not a workdir unless the person said so (ward/admit.h). */
	if (ward_admit_workdir_bits(&cfg->admit, workdir, &st->admitted, err) < 0)
		return -1;
	if (prepare_net(st, cfg, err) < 0)
		return -1;
	n_net = ward_net_env(&st->net, net_env, 20);
	n_net += ca_env(st, cfg->view && (cfg->namespaces & WARD_NS_MOUNT) &&
				    cfg->mode != WARD_SANDBOX_OFF && ward_ca_bundle_target(),
			net_env + n_net, ARRAY_SIZE(net_env) - n_net);
	/* the secrets' stand-ins (ward/netrules.h): the real values stay here */
	if (st->proxy)
		n_net += ward_proxy_env(st->proxy, net_env + n_net, ARRAY_SIZE(net_env) - n_net);

	/* The environment: safe variables, PWD, HOME made visible, then --setenv. */
	{
		char **tmp = ward_env_build(cfg->clearenv ? NULL : environ, cfg->clearenv, workdir,
					    NULL, 0, err);
		const char *home;

		if (!tmp)
			return -1;
		home = home_inside(cfg, workdir, tmp);
		ward_env_free(tmp);
		if (home)
			extra[0] = (char *)home;
	}
	set = calloc(n_set + n_net + 2, sizeof(*set));
	if (!set)
		return ward_error_make(err, ENOMEM, "environment");
	if (extra[0])
		set[k++] = extra[0];
	/* the proxy's variables, before --setenv so that a policy may adjust
	 * NO_PROXY, say */
	for (i = 0; i < n_net; i++)
		set[k++] = (char *)net_env[i];
	if (n_set)
		memcpy(set + k, cfg->setenv, n_set * sizeof(*set));
	st->env = ward_env_build(cfg->clearenv ? NULL : environ, cfg->clearenv, workdir, set,
				 n_set + (size_t)k, err);
	free(set);
	if (!st->env)
		return -1;
	/* --no-shell: the chain, expanded with the command's own environment */
	if (noshell) {
		st->chain = ward_chain_prepare(noshell, st->env, err);
		if (!st->chain)
			return -1;
		p->chain = st->chain;
	}

	p->cfg = cfg;
	p->ns = cfg->namespaces & WARD_NS_ALL;
	if (cfg->net == WARD_NET_HOST)
		p->ns &= ~WARD_NS_NET;
	p->net_handover_fd = st->net.handover[1];
	p->net_go_fd = st->net.go[0];
	p->ca_bundle = st->ca_bundle;
	p->net_port = st->net.port;
	p->view = cfg->view && (p->ns & WARD_NS_MOUNT) && cfg->mode != WARD_SANDBOX_OFF;
	p->argv = argv;
	p->envp = st->env;
	p->path_env = ward_env_get(st->env, "PATH");
	p->workdir = workdir;
	p->hostname = cfg->hostname ? cfg->hostname : "ward";
	p->hostname_asked = cfg->hostname != NULL;
	p->staging = staging_dir(cfg, workdir);
	if (!p->staging)
		return ward_error_make(err, 0, "no directory to build the sandbox's root on "
					       "(tried /tmp, /mnt, /run, /var/tmp, /opt, /srv)");
	{
		uid_t uid = geteuid();
		gid_t gid = getegid();

		uid_t inside = cfg->uid0 ? 0 : uid;

		/* A user namespace that maps its parent's uid 0 needs CAP_SETFCAP
		 * of its maker (Linux 5.12), which nothing inside holds: for the
		 * command's own sandboxes, ward run as root appears as nobody
		 * (unless --uid0 asks for root inside), so theirs map 65534. */
		if (cfg->allow_nested && uid == 0 && !cfg->uid0)
			inside = 65534;
		snprintf(p->uid_map, sizeof(p->uid_map), "%u %u 1\n", inside, uid);
		snprintf(p->gid_map, sizeof(p->gid_map), "%u %u 1\n", cfg->uid0 ? 0 : gid, gid);
	}
	if (p->view && ward_spawn_plan_view(p, err) < 0)
		return -1;
	/* Protected paths need the view's mounts; overlay mode refuses to run
	 * without them. */
	if (ward_workdir_prepare(cfg, workdir, p->view, st->admitted, &st->wd, err) < 0)
		return -1;
	p->protect = st->wd.mounts;
	p->n_protect = st->wd.n_mounts;
	p->ovl_upper = st->wd.upper;
	p->ovl_work = st->wd.work;
	p->ovl_placeholders = st->wd.phlayer;
	p->gitdirs = st->wd.gitdirs;
	p->n_gitdirs = st->wd.n_gitdirs;
	p->lock_fds = st->wd.ph_fds;
	p->n_lock_fds = st->wd.n_ph;
	if (cfg->mode != WARD_SANDBOX_OFF && prepare_fences(st, cfg, workdir, err) < 0)
		return -1;

	if (pipe2(st->report, O_CLOEXEC) < 0 || pipe2(st->life, O_CLOEXEC) < 0)
		return ward_error_make(err, errno, "pipe");
	p->report_fd = st->report[1];
	p->report_nonce = ward_spawn_nonce();
	p->life_fd = st->life[0];
	p->life_wfd = st->life[1];

	if (prepare_stdio(st, cfg, err) < 0)
		return -1;
	/* The supervisor's ends, closed in the child. */
	memset(p->close_fds, -1, sizeof(p->close_fds));
	k = 0;
	if (st->out[0] >= 0)
		p->close_fds[k++] = st->out[0];
	if (st->err[0] >= 0)
		p->close_fds[k++] = st->err[0];
	if (st->in[1] >= 0)
		p->close_fds[k++] = st->in[1];
	if (st->pty >= 0)
		p->close_fds[k++] = st->pty;
	if (st->pty_in >= 0)
		p->close_fds[k++] = st->pty_in;
	if (st->pty_wait >= 0)
		p->close_fds[k++] = st->pty_wait;
	p->close_fds[k++] = st->report[0];
	if (st->net.handover[0] >= 0)
		p->close_fds[k++] = st->net.handover[0];
	if (st->net.go[1] >= 0)
		p->close_fds[k++] = st->net.go[1];
	if (st->ca_bundle_fd >= 0)
		p->close_fds[k++] = st->ca_bundle_fd;
	if (st->wd.set_fd >= 0)
		p->close_fds[k++] = st->wd.set_fd;
	if (st->wd.run_fd >= 0)
		p->close_fds[k++] = st->wd.run_fd;
	/* a directory of the host's, reached from outside the view */
	if (st->wd.ph_dir_fd >= 0)
		p->close_fds[k++] = st->wd.ph_dir_fd;
	return 0;
}

/* The command's cgroup and rlimits; which mechanism applied each limit goes
 * into the result. */
static int prepare_limits(struct run_state *st, const struct ward_config *cfg,
			  struct ward_resources *r, struct ward_error **err)
{
	struct spawn_plan *p = &st->plan;

	ward_rlimits_plan(&cfg->limits, &p->rlimits, r);
	/* budgets of the sandbox's own user namespace, where there is one */
	p->set_ucounts = (p->ns & WARD_NS_USER) && cfg->mode != WARD_SANDBOX_OFF;
	if (p->set_ucounts)
		ward_ucounts_plan(&p->ucounts, cfg->allow_nested, r);
	if (!cfg->cgroup) {
		if (ward_cgroup_none(&cfg->limits, r, err) < 0)
			return -1;
	} else {
		if (ward_cgroup_create(&st->cg, &cfg->limits, r, err) < 0)
			return -1;
		p->cgroup_fd = st->cg.dir_fd;
		p->cg_v1 = st->cg.version == 1 ? &st->cg : NULL;
		p->late_cgroupns = st->cg.version == 1 && (p->ns & WARD_NS_CGROUP) &&
				   cfg->mode != WARD_SANDBOX_OFF;
	}
	/* after the cgroup: its memory limit, if it applied one, caps the tmpfs,
	 * and SysV shared memory (tmpfs pages as well) in an IPC namespace of
	 * the sandbox's own. The kernel lets only the namespace's root write
	 * kernel.shm* (ipc_permissions(): euid against uid 0 of the owning
	 * user namespace, not a capability), so only where uid 0 is mapped:
	 * ward run as root, or --uid0. */
	if (p->view)
		p->tmpfs_size = ward_tmpfs_plan(&cfg->limits, r);
	p->ucounts.shm_bytes = 0;
	if (p->set_ucounts && (p->ns & WARD_NS_IPC) && (cfg->uid0 || geteuid() == 0))
		p->ucounts.shm_bytes = p->view ? p->tmpfs_size : ward_tmpfs_plan(&cfg->limits, r);
	return 0;
}

/* Figures from the cgroup, or from the rusage of init and what it reaped. */
static void collect_resources(struct run_state *st, const struct supervisor *sv,
			      struct ward_resources *r)
{
	/* nothing to kill first: the cgroup died with the PID namespace, and
	 * ward_cgroup_destroy() kills what is left where one was not used */
	ward_cgroup_collect(&st->cg, r);
	if (!r->have_cpu) {
		r->cpu_user_us = (uint64_t)sv->rusage.ru_utime.tv_sec * 1000000 +
				 (uint64_t)sv->rusage.ru_utime.tv_usec;
		r->cpu_system_us = (uint64_t)sv->rusage.ru_stime.tv_sec * 1000000 +
				   (uint64_t)sv->rusage.ru_stime.tv_usec;
		r->have_cpu = true;
		if (!r->measured_by[0])
			snprintf(r->measured_by, sizeof(r->measured_by), "rusage");
	}
	if (!r->have_memory_peak && r->cgroup_version == 0) {
		/* the largest single process: a lower bound of the total */
		r->memory_peak = (uint64_t)sv->rusage.ru_maxrss * 1024;
		r->have_memory_peak = true;
	}
	ward_cgroup_destroy(&st->cg);
}

/* An OOM kill is said as such, not as "signal 9". */
static void explain_oom(struct ward_result *res, const struct ward_config *cfg)
{
	char limit[32];

	if (!res->resources.oom_killed || res->exit_code == 0)
		return;
	ward_format_size(cfg->limits.memory, limit, sizeof(limit));
	/* The OOM killer may pick the sandbox's init itself: the one error a
	 * started command gets from fill_result() apart from a timeout. */
	if (res->error && res->started && res->error->kind == WARD_ERR_EXECUTION_FAILED) {
		ward_error_free(res->error);
		res->error = NULL;
		set_error(res, WARD_ERR_EXECUTION_FAILED,
			  "killed by the OOM killer: memory limit %s (the sandbox's init was chosen)",
			  limit);
		return;
	}
	if (res->error)
		return;
	if (res->signal == SIGKILL)
		set_error(res, WARD_ERR_EXECUTION_FAILED, "killed by the OOM killer: memory limit %s",
			  limit);
	else
		set_error(res, WARD_ERR_EXECUTION_FAILED,
			  "a process of the command was killed by the OOM killer (exit status %d): "
			  "memory limit %s", res->exit_code, limit);
}

static void fill_result(struct ward_result *res, const struct supervisor *sv,
			const struct ward_config *cfg, const struct run_state *st)
{
	bool sandboxed = cfg->mode != WARD_SANDBOX_OFF;
	int status = -1;

	if (st->obuf || st->ebuf) {
		uint64_t dropped = 0;

		res->output = ward_output_combine(st->obuf, st->ebuf, WARD_OUTPUT_MAX,
						  &res->output_len, &dropped);
		res->truncated_bytes = dropped;
		res->stdout_bytes = ward_outbuf_total(st->obuf);
		res->stderr_bytes = ward_outbuf_total(st->ebuf);
		if (st->ebuf)
			res->stderr_text = ward_outbuf_render(st->ebuf, WARD_OUTPUT_MAX,
							      &res->stderr_len, NULL);
		if (st->obuf)
			res->stdout_text = ward_outbuf_render(st->obuf, WARD_OUTPUT_MAX,
							      &res->stdout_len, NULL);
	}
	if (!res->output)
		res->output = strdup("");
	if (!res->stderr_text)
		res->stderr_text = strdup("");

	if (sv->have_error) {
		/* A layer failed inside: nothing ran. */
		res->error = malloc(sizeof(*res->error));
		if (res->error)
			*res->error = sv->child_error;
		res->exit_code = WARD_EXIT_OWN_ERROR;
		return;
	}
	res->started = true;
	res->sandboxed = sandboxed;
	if (sandboxed && sv->have_exit)
		status = sv->cmd_status;
	else if (!sandboxed)
		status = sv->child_status;

	if (sv->cancelled) {
		res->signal = SIGKILL;
		res->exit_code = WARD_EXIT_OWN_ERROR;
		set_error(res, WARD_ERR_EXECUTION_FAILED,
			  "cancelled: the command's sandbox was killed (ward is stopping)");
		return;
	}
	if (sv->timed_out) {
		res->timed_out = true;
		res->signal = SIGKILL;
		res->exit_code = WARD_EXIT_TIMEOUT;
		set_error(res, WARD_ERR_TIMEOUT, "command timed out after %d s", cfg->timeout);
		return;
	}
	if (status < 0) {
		int s = sv->child_status;

		res->exit_code = WARD_EXIT_OWN_ERROR;
		if (WIFSIGNALED(s))
			set_error(res, WARD_ERR_EXECUTION_FAILED,
				  "sandbox init ended by signal %d before the command finished",
				  WTERMSIG(s));
		else
			set_error(res, WARD_ERR_EXECUTION_FAILED,
				  "sandbox init exited with status %d before the command finished",
				  WIFEXITED(s) ? WEXITSTATUS(s) : -1);
		return;
	}
	if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->exit_code = 128 + res->signal;
	} else {
		res->exit_code = WEXITSTATUS(status);
	}
}

static int run(const struct ward_config *cfg, char *const argv[], const char *noshell,
	       struct ward_result *res, struct ward_error **err);
/* After clone3: the veth pair and the hub (veth), or the hand-over socket
 * (loopback), to the proxy. */
static int attach_net(struct run_state *st, pid_t pid, struct ward_error **err)
{
	/* The run's CA, now that init exists: before init is let go. */
	if (st->ca_bundle_fd >= 0) {
		if (ward_proxy_start_tls(st->proxy, st->ca_bundle_fd, err) < 0)
			return -1;
		close(st->ca_bundle_fd);
		st->ca_bundle_fd = -1;
	}
	if (st->net.veth) {
		if (ward_net_attach(&st->net, pid, st->pidfd, err) < 0)
			return -1;
		return ward_proxy_add_listener(st->proxy, steal_fd(&st->net.listener), err);
	}
	if (ward_proxy_add_handover(st->proxy, steal_fd(&st->net.handover[0]), err) < 0)
		return -1;
	if (st->net.go[1] >= 0) {
		if (write(st->net.go[1], "g", 1) != 1)
			return ward_error_make(err, errno, "release the sandbox's init");
		close(st->net.go[1]);
		st->net.go[1] = -1;
	}
	return 0;
}

void ward_result_set_hostname(struct ward_result *res, const char *name, unsigned skipped)
{
	snprintf(res->hostname, sizeof(res->hostname), "%s", name);
	res->hostname_skipped = (skipped & REPORT_SKIPPED_HOSTNAME) != 0;
}

static void fill_net(struct ward_result *res, const struct ward_config *cfg,
		     struct run_state *st)
{
	if (cfg->mode == WARD_SANDBOX_OFF || cfg->net == WARD_NET_HOST ||
	    !(cfg->namespaces & WARD_NS_NET)) {
		res->net_mode = WARD_NET_HOST;
		return;
	}
	res->net_mode = cfg->net;
	if (!st->proxy)
		return;
	snprintf(res->net_transport, sizeof(res->net_transport), "%s",
		 st->net.veth ? "veth" : "loopback");
	snprintf(res->net_proxy, sizeof(res->net_proxy), "%s", st->net.proxy_url);
	ward_proxy_finish(st->proxy, &res->net_records, &res->n_net_records);
}

int ward_run(const struct ward_config *cfg, char *const argv[], struct ward_result *res,
	     struct ward_error **err)
{
	return run(cfg, argv, NULL, res, err);
}

int ward_run_noshell(const struct ward_config *cfg, const char *command, struct ward_result *res,
		     struct ward_error **err)
{
	char *argv[] = { (char *)"(no-shell chain)", NULL };

	if (!command)
		command = "";
	return run(cfg, argv, command, res, err);
}

/* Every fd -1, nothing owned: what state_release() may always be given. */
/* Not one memset of the whole: zeroing buffers a run mostly never uses
 * would touch (fault in) every page of them, each fault a cost of its own
 * (up to ~15 us on a virtual machine's shadow page tables). */
static void state_init(struct run_state *st)
{
	memset(st, 0, offsetof(struct run_state, cg));
	st->wd.set_fd = st->wd.run_fd = -1;
	st->out[0] = st->out[1] = st->err[0] = st->err[1] = -1;
	st->in[0] = st->in[1] = st->pty = st->pty_slave = st->pty_in = st->pty_wait = -1;
	st->plan.pty_sock = -1;
	st->out_sink = st->err_sink = st->pty_sink = st->tty_fd = -1;
	st->in_src = -1;
	st->report[0] = st->report[1] = st->life[0] = st->life[1] = st->pidfd = -1;
	st->net_log_fd = -1;
	st->ca_bundle_fd = -1;
	ward_net_init(&st->net);
	ward_cgroup_init(&st->cg);
	st->plan.cgroup_fd = -1;
}

static int run(const struct ward_config *cfg, char *const argv[], const char *noshell,
	       struct ward_result *res, struct ward_error **err)
{
	struct run_state st;
	struct supervisor sv;
	struct ward_error *setup_err = NULL;
	char cwd[PATH_MAX];
	const char *workdir = cfg->workdir;
	long long start = ward_now_ns();
	pid_t pid;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	state_init(&st);

	if (!argv || !argv[0] || !argv[0][0]) {
		set_error(res, WARD_ERR_INVALID_PARAMETERS, "no command given");
		res->exit_code = WARD_EXIT_OWN_ERROR;
		goto done;
	}
	if (cfg->timeout < 1 || cfg->timeout > WARD_TIMEOUT_MAX) {
		set_error(res, WARD_ERR_INVALID_PARAMETERS,
			  "timeout must be between 1 and %d seconds, got %d", WARD_TIMEOUT_MAX,
			  cfg->timeout);
		res->exit_code = WARD_EXIT_OWN_ERROR;
		goto done;
	}
	if (!workdir) {
		if (!getcwd(cwd, sizeof(cwd))) {
			ward_error_make_kind(&res->error, WARD_ERR_INVALID_PARAMETERS, errno,
					     "current directory");
			res->exit_code = WARD_EXIT_OWN_ERROR;
			goto done;
		}
		workdir = cwd;
	}

	if (prepare(&st, cfg, argv, noshell, workdir, &setup_err) < 0 ||
	    ward_net_start(&st.net, &setup_err) < 0 ||
	    prepare_limits(&st, cfg, &res->resources, &setup_err) < 0)
		goto setup_failed;
	pid = ward_spawn(&st.plan, &st.pidfd, &setup_err);
	ward_spawn_plan_view_release(&st.plan, false);
	if (pid < 0)
		goto setup_failed;
	ward_cgroup_close_fds(&st.cg);

	/* Our copies of the child's ends: gone, so end of file means the child
	 * side is done. */
	close(st.report[1]);
	st.report[1] = -1;
	close(st.life[0]);
	st.life[0] = -1;
	if (st.out[1] >= 0) {
		close(st.out[1]);
		st.out[1] = -1;
	}
	if (st.err[1] >= 0) {
		close(st.err[1]);
		st.err[1] = -1;
	}
	if (st.in[0] >= 0) {
		close(st.in[0]);
		st.in[0] = -1;
	}
	if (st.pty_slave >= 0) {
		close(st.pty_slave);
		st.pty_slave = -1;
	}
	if (st.net.handover[1] >= 0) {
		close(st.net.handover[1]);
		st.net.handover[1] = -1;
	}
	if (st.net.go[0] >= 0) {
		close(st.net.go[0]);
		st.net.go[0] = -1;
	}
	if (st.proxy && attach_net(&st, pid, &setup_err) < 0) {
		siginfo_t si;
		struct report r;

		syscall(SYS_pidfd_send_signal, st.pidfd, SIGKILL, NULL, 0);
		waitid((idtype_t)P_PIDFD, (id_t)st.pidfd, &si, WEXITED);
		/* If init failed first (and so the network could not be built),
		 * its reason is the one to give. */
		if (read(st.report[0], &r, sizeof(r)) == (ssize_t)sizeof(r) &&
		    ward_report_genuine(&r, st.plan.report_nonce) && r.type == REPORT_ERROR) {
			r.err.message[sizeof(r.err.message) - 1] = '\0';
			r.err.rule[sizeof(r.err.rule) - 1] = '\0';
			*setup_err = r.err;
		}
		goto setup_failed;
	}

	if (st.pty_wait >= 0)
		take_pty(&st, start + (long long)cfg->timeout * 1000000000LL);
	memset(&sv, 0, sizeof(sv));
	sv.pidfd = st.pidfd;
	sv.pid = pid;
	sv.sandboxed = cfg->mode != WARD_SANDBOX_OFF;
	sv.forward_signals = cfg->forward_signals;
	sv.out_fd = steal_fd(&st.out[0]);
	sv.err_fd = steal_fd(&st.err[0]);
	sv.out_sink = st.out_sink;
	sv.err_sink = st.err_sink;
	sv.pty_fd = steal_fd(&st.pty);
	sv.pty_sink = st.pty_sink;
	sv.in_src = st.in_src;
	sv.in_dst = st.in[1] >= 0 ? steal_fd(&st.in[1]) : steal_fd(&st.pty_in);
	sv.tty_fd = st.tty_fd;
	sv.tty_saved = st.tty_saved;
	sv.report_fd = steal_fd(&st.report[0]);
	sv.report_nonce = st.plan.report_nonce;
	sv.out = st.obuf;
	sv.err = st.ebuf;
	sv.deadline_ns = start + (long long)cfg->timeout * 1000000000LL;
	sv.proxy = st.proxy;
	sv.cancel_fd = cfg->cancel_fd;
	sv.tick = cfg->progress;
	sv.tick_ctx = cfg->progress_ctx;
	sv.tick_ns = WARD_PROGRESS_NS;
	rc = ward_supervise(&sv, err);
	if (sv.out_fd >= 0)
		close(sv.out_fd);
	if (sv.err_fd >= 0)
		close(sv.err_fd);
	if (sv.pty_fd >= 0)
		close(sv.pty_fd);
	if (sv.report_fd >= 0)
		close(sv.report_fd);
	collect_resources(&st, &sv, &res->resources);
	if (rc < 0)
		goto done;
	fill_result(res, &sv, cfg, &st);
	fill_net(res, cfg, &st);
	explain_oom(res, cfg);
	res->namespaces = sv.sandboxed ? st.plan.ns : 0;
	res->view = st.plan.view;
	if (res->namespaces & WARD_NS_UTS)
		ward_result_set_hostname(res, st.plan.hostname, sv.skipped);
	res->nested = sv.sandboxed && cfg->allow_nested;
	if (st.fences && res->started) {
		res->fenced = true;
		res->fences = *ward_fences_report(st.fences);
	}
	goto done;

setup_failed:
	res->error = setup_err;
	/* nothing ran: no limit was applied to anything */
	memset(res->resources.applied, 0, sizeof(res->resources.applied));
	res->exit_code = WARD_EXIT_OWN_ERROR;
done:
	{
		struct ward_error *werr = NULL;

		/* The sandbox is gone: placeholders can go, the change set be read. */
		if (ward_workdir_finish(&st.wd, workdir, res->started, res->stderr_text,
					res->stderr_len, &werr) < 0 &&
		    !res->error) {
			res->error = werr;
			werr = NULL;
			res->exit_code = WARD_EXIT_OWN_ERROR;
		}
		ward_error_free(werr);
		res->workdir = steal_ptr(st.wd.report);
	}
	if (!res->output)
		res->output = strdup("");
	if (!res->stderr_text)
		res->stderr_text = strdup("");
	res->duration_ms = (ward_now_ns() - start) / 1000000;
	state_release(&st);
	return rc;
}

int ward_run_start_agent(const struct ward_config *cfg, int ctl_fd, struct agent_start *a,
			 struct ward_error **err)
{
	struct run_state st;
	struct ward_config c = *cfg; /* shallow: only the stdio fields differ */
	char *argv[] = { (char *)"/bin/sh", NULL };
	struct report r;
	ssize_t n;
	int rc = -1;

	memset(a, 0, sizeof(*a));
	a->pidfd = -1;
	state_init(&st);
	if (!cfg->workdir)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "no workdir");
	/* The change set would build up across the session's commands with no
	 * way to see, apply or discard it until the session ends. */
	if (cfg->workdir_mode == WARD_WORKDIR_OVERLAY)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "workdir mode 'overlay' needs a fresh sandbox per command "
					    "(session isolation \"fresh\"), not a shared one");
	/* The proxy lives in the supervisor's event loop of one command; a
	 * shared session sandbox has none to run it in. */
	if (cfg->net == WARD_NET_PROXY)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "network mode proxy needs a fresh sandbox per command "
					    "(session isolation \"fresh\"), not a shared one");
	/* Made before the sandbox: nothing can fail once it runs. */
	a->wd = malloc(sizeof(*a->wd));
	a->workdir = strdup(cfg->workdir);
	if (!a->wd || !a->workdir) {
		ward_run_stop_agent(a);
		return ward_error_make(err, ENOMEM, "session sandbox");
	}
	/* init's own streams: nothing to say, each command gets its own.
	 * Pipes of the sandbox's own, never a host file (not even /dev/null). */
	c.stdin_fd = c.stdout_fd = c.stderr_fd = -1;
	c.pass_fd = -1;
	c.forward_signals = false;
	if (prepare(&st, &c, argv, NULL, cfg->workdir, err) < 0)
		goto out;
	/* The rlimits, and one cgroup for the whole sandbox: the session's
	 * commands share its limits, and it lives as long as the sandbox. */
	{
		struct ward_resources unused;

		memset(&unused, 0, sizeof(unused));
		if (prepare_limits(&st, &c, &unused, err) < 0)
			goto out;
		a->cg = malloc(sizeof(*a->cg));
		if (!a->cg) {
			ward_error_make(err, ENOMEM, "session sandbox");
			goto out;
		}
		ward_cgroup_init(a->cg);
	}
	st.plan.agent = true;
	st.plan.agent_fd = ctl_fd;
	a->pid = ward_spawn(&st.plan, &st.pidfd, err);
	ward_spawn_plan_view_release(&st.plan, false);
	if (a->pid < 0)
		goto out;
	ward_cgroup_close_fds(&st.cg);
	close(st.report[1]);
	st.report[1] = -1;
	close(st.life[0]);
	st.life[0] = -1;
	/* Setup done when init closes the report pipe without a record (but
	 * the one saying what it skipped). */
	for (;;) {
		do
			n = read(st.report[0], &r, sizeof(r));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(r) || !ward_report_genuine(&r, st.plan.report_nonce) ||
		    r.type != REPORT_SETUP)
			break;
		a->skipped = (unsigned)r.status;
	}
	if (n != 0) {
		siginfo_t si;

		if (n == (ssize_t)sizeof(r) && ward_report_genuine(&r, st.plan.report_nonce) &&
		    r.type == REPORT_ERROR) {
			r.err.message[sizeof(r.err.message) - 1] = '\0';
			r.err.rule[sizeof(r.err.rule) - 1] = '\0';
			ward_error_make_kind(err, r.err.kind, 0, "%s", r.err.message);
		} else {
			ward_error_make(err, n < 0 ? errno : EPROTO, "session sandbox setup");
		}
		syscall(SYS_pidfd_send_signal, st.pidfd, SIGKILL, NULL, 0);
		waitid((idtype_t)P_PIDFD, (id_t)st.pidfd, &si, WEXITED);
		goto out;
	}
	a->pidfd = steal_fd(&st.pidfd);
	a->ns = st.plan.ns;
	snprintf(a->hostname, sizeof(a->hostname), "%s", st.plan.hostname);
	a->nested = cfg->allow_nested;
	a->view = st.plan.view;
	if (st.fences) {
		a->fenced = true;
		a->fences = *ward_fences_report(st.fences);
	}
	/* The cgroup, the placeholders' locks and the run's records go with
	 * the sandbox, not with this call. */
	*a->cg = st.cg;
	ward_cgroup_init(&st.cg);
	*a->wd = st.wd;
	memset(&st.wd, 0, sizeof(st.wd));
	st.wd.set_fd = st.wd.run_fd = -1;
	rc = 0;
out:
	if (rc < 0) {
		/* the sandbox, if any, is gone: what prepare() made can go too */
		ward_workdir_finish(&st.wd, cfg->workdir, false, NULL, 0, NULL);
		ward_workdir_report_free(st.wd.report);
		st.wd.report = NULL;
		ward_run_stop_agent(a);
	}
	state_release(&st);
	return rc;
}

void ward_run_stop_agent(struct agent_start *a)
{
	if (a->pidfd >= 0) {
		siginfo_t si;

		syscall(SYS_pidfd_send_signal, a->pidfd, SIGKILL, NULL, 0);
		waitid((idtype_t)P_PIDFD, (id_t)a->pidfd, &si, WEXITED);
		close(a->pidfd);
		a->pidfd = -1;
	}
	if (a->cg) {
		ward_cgroup_destroy(a->cg);
		free(a->cg);
		a->cg = NULL;
	}
	/* Only now that no mount namespace of the sandbox is left: a placeholder
	 * removed before would have been taken out of its view. */
	if (a->wd) {
		ward_workdir_finish(a->wd, a->workdir ? a->workdir : "", false, NULL, 0, NULL);
		ward_workdir_report_free(a->wd->report);
		free(a->wd);
		a->wd = NULL;
	}
	free(a->workdir);
	a->workdir = NULL;
}
