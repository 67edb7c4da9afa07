/* cases.c — one tier: the ladder and the peers, on /bin/true and on
 * sh -c 'echo hi', interleaved; then throughput, output and network.
 *
 * The ladder's rungs are library rows (ward_run() in this process, configured
 * from `ward run` flags) so that each rung's figure is the layer's cost and
 * not the CLI's start-up; the CLI rows and the peers are programs, timed from
 * fork to wait. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

/* Flags of the "+ cgroup limits" rung: generous limits, so they cost what
 * setting them up costs and never what enforcing them would. */
#define CGROUP_FLAGS "--memory 1G --pids 4096"

/* Flags that keep ward's default resource limits off, for the rungs below
 * "+ cgroup limits" (ward makes a cgroup for every command by default), so
 * they do not include the cgroup's cost. Begin it with a space: it follows
 * other flags. */
#define LIMITS_OFF " --no-cgroup"

#define N_CMDS 2
#define MAX_ARGS 96
#define MAX_CASES 32

static char *cmd_true[] = { "/bin/true", NULL };
static char *cmd_echo[] = { "/bin/sh", "-c", "echo hi", NULL };
static char **const cmds[N_CMDS] = { cmd_true, cmd_echo };
static const char *const cmd_keys[N_CMDS] = { "true", "echo" };

enum kind { K_EXEC, K_LIB, K_SESSION, K_SERVE };

/* The session rows' command lines, run as `sh -c LINE` in their sandbox. */
static const char *const session_lines[N_CMDS] = { "/bin/true", "echo hi" };

struct bcase {
	char key[32], group[16], label[96];
	enum kind kind;
	struct libcase *lib;
	struct sesscase *sess;
	struct servecase *serve;
	char *argv[N_CMDS][MAX_ARGS];
	int n_argv[N_CMDS];
	int id_slot; /* argv index of a name that must be new on every run (crun), or -1 */
	bool any_output; /* ward's own output (--help, validate), not the command's */
	int (*prep)(void); /* run in the child before execve, or NULL */
	char id[64];
	unsigned long runs;
	char status[BENCH_STATUS_MAX];
	char cmdline[N_CMDS][BENCH_LINE_MAX];
	struct samples s[N_CMDS];
	struct samples cpu[N_CMDS]; /* CPU time of each timed run, ms */
	char *owned[MAX_ARGS * N_CMDS];
	int n_owned;
};

static struct bcase cases[MAX_CASES];
static int n_cases;

static char *own(struct bcase *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *own(struct bcase *c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s || c->n_owned >= (int)(sizeof(c->owned) / sizeof(c->owned[0]))) {
		fprintf(stderr, "ward-bench: out of memory\n");
		exit(1);
	}
	c->owned[c->n_owned++] = s;
	return s;
}

static void push(struct bcase *c, int cmd, char *arg)
{
	if (c->n_argv[cmd] + 1 >= MAX_ARGS) {
		fprintf(stderr, "ward-bench: too many arguments for '%s'\n", c->key);
		exit(1);
	}
	c->argv[cmd][c->n_argv[cmd]++] = arg;
	c->argv[cmd][c->n_argv[cmd]] = NULL;
}

static void push_both(struct bcase *c, char *arg)
{
	push(c, 0, arg);
	push(c, 1, arg);
}

static void push_cmd(struct bcase *c)
{
	int k, i;

	for (k = 0; k < N_CMDS; k++)
		for (i = 0; cmds[k][i]; i++)
			push(c, k, cmds[k][i]);
}

static struct bcase *new_case(const char *key, const char *group, const char *label,
			      enum kind kind)
{
	struct bcase *c;

	if (n_cases == MAX_CASES) {
		fprintf(stderr, "ward-bench: too many cases\n");
		exit(1);
	}
	c = &cases[n_cases++];
	memset(c, 0, sizeof(*c));
	snprintf(c->key, sizeof(c->key), "%s", key);
	snprintf(c->group, sizeof(c->group), "%s", group);
	snprintf(c->label, sizeof(c->label), "%s", label);
	c->kind = kind;
	c->id_slot = -1;
	snprintf(c->status, sizeof(c->status), "ok");
	return c;
}

static bool ok(const struct bcase *c)
{
	return strcmp(c->status, "ok") == 0;
}

/* The program's absolute path from PATH (and the sbin directories), or NULL. */
static char *find_prog(const char *name)
{
	static const char *const extra = "/usr/local/sbin:/usr/sbin:/sbin";
	const char *path = getenv("PATH");
	char *list, *dir, *save = NULL, *found = NULL;

	if (asprintf(&list, "%s:%s", path ? path : "/usr/bin:/bin", extra) < 0)
		return NULL;
	for (dir = strtok_r(list, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *p;

		if (!*dir || asprintf(&p, "%s/%s", dir, name) < 0)
			continue;
		if (access(p, X_OK) == 0)
			found = p;
		else
			free(p);
	}
	free(list);
	return found;
}

/* One run of case c on command k. 0 on success; else -1 with why. */
static int run_once(struct bcase *c, int k, double *ms, char *why, size_t whysz)
{
	char out[4096];
	int st;

	c->runs++;
	if (c->kind == K_SESSION || c->kind == K_SERVE) {
		if ((c->kind == K_SESSION ?
			     sesscase_run(c->sess, session_lines[k], out, sizeof(out), ms) :
			     servecase_run(c->serve, session_lines[k], out, sizeof(out), ms)) < 0) {
			snprintf(why, whysz, "%.200s", out);
			return -1;
		}
		bench_last_cpu_ms = NAN;
		/* Untimed: a session starts the shell of its next command once
		 * this one has ended, as an agent reads the result; the pause
		 * keeps that work out of the next case's time, as an agent's
		 * reading would (its next command comes later still). */
		nanosleep(&(struct timespec){ 0, 25 * 1000000L }, NULL);
		if (k == 1 && strcmp(out, "hi\n") != 0) {
			snprintf(why, whysz, "the command printed '%.100s', not 'hi'", out);
			return -1;
		}
		return 0;
	}
	if (c->kind == K_LIB) {
		if (libcase_run(c->lib, cmds[k], out, sizeof(out), ms) < 0) {
			snprintf(why, whysz, "%.200s", out);
			return -1;
		}
		if (k == 1 && strcmp(out, "hi\n") != 0) {
			snprintf(why, whysz, "the command printed '%.100s', not 'hi'", out);
			return -1;
		}
		return 0;
	}
	if (c->id_slot >= 0) {
		snprintf(c->id, sizeof(c->id), "ward-bench-%d-%lu", (int)getpid(), c->runs);
		c->argv[k][c->id_slot] = c->id;
	}
	/* Output is captured on every run, timed ones too, so every row pays
	 * the same for it and a run that goes wrong later is still caught. */
	st = bench_exec_io(c->argv[k], NULL, c->prep, out, sizeof(out), ms, NULL);
	if (st < 0) {
		snprintf(why, whysz, "%s: %s", c->argv[k][0], strerror(errno));
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *nl = strchr(out, '\n');

		if (nl)
			*nl = '\0';
		if (WIFSIGNALED(st))
			snprintf(why, whysz, "killed by signal %d: %.200s", WTERMSIG(st), out);
		else if (strcasestr(out, "rate limit") || strstr(out, "RateLimited"))
			snprintf(why, whysz, "ward's rate limit refused the run (set the rate limits "
					     "to 0 in the bench's policy file): %.120s", out);
		else
			snprintf(why, whysz, "exit %d: %.200s", WEXITSTATUS(st), out);
		return -1;
	}
	if (k == 1 && !c->any_output && !strstr(out, "hi\n")) {
		snprintf(why, whysz, "the command printed '%.100s', not 'hi'", out);
		return -1;
	}
	return 0;
}

/* The first run of each command, untimed: a case that cannot do its job is
 * reported failed with the reason, never measured. */
static void validate(struct bcase *c)
{
	char why[BENCH_STATUS_MAX - 16];
	double ms;
	int k;

	if (!ok(c))
		return;
	for (k = 0; k < N_CMDS; k++)
		if (run_once(c, k, &ms, why, sizeof(why)) < 0) {
			snprintf(c->status, sizeof(c->status), "failed: %s", why);
			return;
		}
}

/* ---- the ladder ---------------------------------------------------------- */

/* may_need_root: a failure without root is reported as the rung being
 * root's only (with ward's reason), not as ward failing. */
static struct bcase *add_lib(const struct tier_options *o, const char *key, const char *label,
			     const char *flags, bool may_need_root)
{
	struct bcase *c = new_case(key, "ladder", label, K_LIB);
	char why[BENCH_STATUS_MAX];
	int k;

	for (k = 0; k < N_CMDS; k++) {
		char cmd[256];

		argv_join(cmd, sizeof(cmd), cmds[k]);
		snprintf(c->cmdline[k], sizeof(c->cmdline[k]),
			 "ward_run() as: ward run --policy %s -C %s%s%s -- %s", o->policy, o->workdir,
			 *flags ? " " : "", flags, cmd);
	}
	c->lib = libcase_new(flags, o, why, sizeof(why));
	if (!c->lib)
		snprintf(c->status, sizeof(c->status), "%s", why);
	validate(c);
	if (may_need_root && geteuid() != 0 && strncmp(c->status, "failed: ", 8) == 0) {
		snprintf(why, sizeof(why), "%s", c->status + 8);
		snprintf(c->status, sizeof(c->status), "n/a without root: %.200s", why);
	}
	return c;
}

static void add_ward_cli(const struct tier_options *o, const char *key, const char *label,
			 const char *flag)
{
	struct bcase *c = new_case(key, "ladder", label, K_EXEC);
	char why[BENCH_STATUS_MAX];
	int k;

	/* Known to this build's option parser, or the layer is not built. */
	if (flag) {
		struct libcase *probe = libcase_new(flag, o, why, sizeof(why));

		if (!probe)
			snprintf(c->status, sizeof(c->status), "%s", why);
		libcase_free(probe);
	}
	push_both(c, (char *)o->ward);
	push_both(c, "run");
	push_both(c, "--policy");
	push_both(c, (char *)o->policy);
	push_both(c, "-C");
	push_both(c, (char *)o->workdir);
	if (flag) {
		/* Words of flag, split on spaces. */
		char *words = own(c, "%s", flag), *save = NULL, *w;

		for (w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
			push_both(c, w);
	}
	push_both(c, "--");
	push_cmd(c);
	for (k = 0; k < N_CMDS; k++)
		argv_join(c->cmdline[k], sizeof(c->cmdline[k]), c->argv[k]);
	validate(c);
}

/* The front door alone: `ward --help` (the CLI's start, nothing else) and
 * `ward validate -c LINE` (the start, the policy, the parser, the
 * validators), LINE a typical agent command in the "true" column and
 * `echo hi` in the "echo" one. */
static const char front_door_line[] =
	"cd src && git status --short && npm test -- --runInBand 2>&1 | tail -n 40";

static void add_front_door(const struct tier_options *o)
{
	struct bcase *c = new_case("cli-help", "ladder", "ward --help (the CLI's start alone)",
				   K_EXEC);
	int k;

	c->any_output = true;
	push_both(c, (char *)o->ward);
	push_both(c, "--help");
	for (k = 0; k < N_CMDS; k++)
		argv_join(c->cmdline[k], sizeof(c->cmdline[k]), c->argv[k]);
	validate(c);
	c = new_case("cli-validate", "ladder", "ward validate -c (the front door, no run)", K_EXEC);
	c->any_output = true;
	push_both(c, (char *)o->ward);
	push_both(c, "validate");
	push_both(c, "--policy");
	push_both(c, (char *)o->policy);
	push_both(c, "-c");
	push(c, 0, (char *)front_door_line);
	push(c, 1, "echo hi");
	for (k = 0; k < N_CMDS; k++)
		argv_join(c->cmdline[k], sizeof(c->cmdline[k]), c->argv[k]);
	validate(c);
}

/* A session row: its case, with a workdir of its own in *so (a session holds
 * its placeholders as long as it lives, and the other rows must take and
 * return theirs as usual). */
static struct bcase *session_case(const struct tier_options *o, struct tier_options *so,
				  const char *key, const char *label, enum kind kind)
{
	struct bcase *c = new_case(key, "ladder", label, kind);

	*so = *o;
	snprintf(so->workdir, sizeof(so->workdir), "%s/%s", o->dir, key);
	if (mkdir(so->workdir, 0755) < 0 && errno != EEXIST)
		snprintf(c->status, sizeof(c->status), "failed: mkdir '%.200s': %s", so->workdir,
			 strerror(errno));
	return c;
}

/* A session's commands, each one line through the front door and a fork in
 * the session's one sandbox, started once: in this process (the library), and
 * through `ward serve` as an agent host talks to it. The processes are reaped
 * inside that sandbox, so their CPU time is not counted here. */
static void add_session(const struct tier_options *o)
{
	struct tier_options so;
	char why[BENCH_STATUS_MAX];
	struct bcase *c;
	int k;

	c = session_case(o, &so, "session", "session, one shared sandbox, library", K_SESSION);
	for (k = 0; k < N_CMDS; k++)
		snprintf(c->cmdline[k], sizeof(c->cmdline[k]),
			 "ward_session_exec() of '%s' in a session as: ward shell --policy %s -C %s "
			 "--isolation shared",
			 session_lines[k], so.policy, so.workdir);
	if (ok(c) && !(c->sess = sesscase_new(&so, why, sizeof(why))))
		snprintf(c->status, sizeof(c->status), "%s", why);
	validate(c);

	c = session_case(o, &so, "serve", "session, one shared sandbox, ward serve (MCP)", K_SERVE);
	for (k = 0; k < N_CMDS; k++)
		snprintf(c->cmdline[k], sizeof(c->cmdline[k]),
			 "tools/call shell {\"command\": \"%s\"} to: %s serve --policy %s -C %s "
			 "--isolation shared",
			 session_lines[k], so.ward, so.policy, so.workdir);
	if (ok(c) && !(c->serve = servecase_new(&so, why, sizeof(why))))
		snprintf(c->status, sizeof(c->status), "%s", why);
	validate(c);

	/* The same with a state an agent's session may well carry: what bash
	 * reports after each command and restores before the next (variables,
	 * functions; docs/sessions.md) costs per command with its size. */
	c = session_case(o, &so, "serve-state",
			 "session, ward serve (MCP), 100 variables and 20 functions kept", K_SERVE);
	for (k = 0; k < N_CMDS; k++)
		snprintf(c->cmdline[k], sizeof(c->cmdline[k]),
			 "as the row above, after a first tools/call that set %s", "V1..V100 and f1..f20");
	if (ok(c) && !(c->serve = servecase_new(&so, why, sizeof(why))))
		snprintf(c->status, sizeof(c->status), "%s", why);
	if (ok(c)) {
		char setup[8192], out[BENCH_STATUS_MAX];
		size_t n = 0;
		double ms;
		int i;

		for (i = 1; i <= 100; i++)
			n += (size_t)snprintf(setup + n, sizeof(setup) - n, "V%d=value-of-variable-%d; ", i, i);
		for (i = 1; i <= 20; i++)
			n += (size_t)snprintf(setup + n, sizeof(setup) - n,
					      "f%d() { echo \"function %d: $*\"; return 0; }; ", i, i);
		snprintf(setup + n, sizeof(setup) - n, "true");
		if (servecase_run(c->serve, setup, out, sizeof(out), &ms) < 0)
			snprintf(c->status, sizeof(c->status), "failed: the state: %.200s", out);
	}
	validate(c);
}

static void build_ladder(const struct tier_options *o)
{
	struct bcase *c;
	char flags[512];
	const char *cg;
	int k;

	c = new_case("bare", "ladder", "bare fork+exec", K_EXEC);
	push_cmd(c);
	for (k = 0; k < N_CMDS; k++)
		argv_join(c->cmdline[k], sizeof(c->cmdline[k]), c->argv[k]);
	validate(c);

	/* ward's machinery alone. */
	add_lib(o, "lib-none", "ward_run(), no namespace, no fence",
		"--namespaces none --no-view --landlock off --seccomp off" LIMITS_OFF, false);
	add_lib(o, "userns", "+ user ns",
		"--namespaces user --no-view --landlock off --seccomp off" LIMITS_OFF, false);
	add_lib(o, "mount", "+ mount ns",
		"--namespaces user,mount --no-view --landlock off --seccomp off" LIMITS_OFF, false);
	/* PID before the view: the view's fresh /proc needs a PID namespace of
	 * the sandbox's own (the kernel refuses to mount procfs otherwise). */
	add_lib(o, "pid", "+ PID ns",
		"--namespaces user,mount,pid --no-view --landlock off --seccomp off" LIMITS_OFF,
		false);
	add_lib(o, "view", "+ pivot_root view",
		"--namespaces user,mount,pid --landlock off --seccomp off" LIMITS_OFF, false);
	add_lib(o, "net", "+ network ns",
		"--namespaces user,mount,pid,net --landlock off --seccomp off" LIMITS_OFF, false);
	add_lib(o, "ns-all", "+ IPC, UTS, cgroup ns",
		"--namespaces all --landlock off --seccomp off" LIMITS_OFF, false);
	/* Without root, limits need a delegated cgroup subtree the host may not
	 * have: then the rung is root's only. */
	c = add_lib(o, "cgroup", "+ cgroup limits",
		    "--namespaces all --landlock off --seccomp off " CGROUP_FLAGS, true);
	/* The rungs above carry the limits only where they could be applied. */
	cg = ok(c) ? " " CGROUP_FLAGS : LIMITS_OFF;
	snprintf(flags, sizeof(flags), "--namespaces all --seccomp off%s", cg);
	add_lib(o, "landlock", "+ Landlock", flags, false);
	snprintf(flags, sizeof(flags), "--namespaces all%s", cg);
	add_lib(o, "seccomp", "+ seccomp", flags, false);
	add_lib(o, "lib-full", "full stack, library (defaults)", "", false);
	add_ward_cli(o, "cli-full", "full stack, ward CLI", NULL);
	/* The CLI's own floor: ward's exec and its fork+exec of the command,
	 * with no layer at all. */
	add_ward_cli(o, "cli-off", "ward CLI --sandbox off (no layer)", "--sandbox off");
	add_ward_cli(o, "cli-proxy", "full stack, ward CLI --net=proxy", "--net=proxy");
	add_front_door(o);
	add_session(o);
	/* the sessions' hosts: not waited for after each run */
	bench_children_lasting();
}

/* ---- the peers ----------------------------------------------------------- */

/* The same read-only system directories as ward's view, usr-merge links
 * reproduced as links (view.c has the list). */
static const char *const sysdirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
};

enum sysdir_kind { SYSDIR_NONE, SYSDIR_LINK, SYSDIR_DIR };

/* What sysdirs[i] is on this host; for a link, its target in link. */
static enum sysdir_kind sysdir_at(size_t i, char *link, size_t size)
{
	struct stat st;
	ssize_t n;

	if (lstat(sysdirs[i], &st) < 0)
		return SYSDIR_NONE;
	if (S_ISDIR(st.st_mode))
		return SYSDIR_DIR;
	if (!S_ISLNK(st.st_mode) || (n = readlink(sysdirs[i], link, size - 1)) < 0)
		return SYSDIR_NONE;
	link[n] = '\0';
	return SYSDIR_LINK;
}

static struct bcase *add_peer(const char *key, const char *label, const char *prog)
{
	struct bcase *c = new_case(key, "peer", label, K_EXEC);
	char *path = find_prog(prog);

	if (!path) {
		snprintf(c->status, sizeof(c->status), "not installed");
		push_both(c, own(c, "%s", prog));
	} else {
		push_both(c, own(c, "%s", path));
		free(path);
	}
	return c;
}

static void finish_peer(struct bcase *c)
{
	int k;

	for (k = 0; k < N_CMDS; k++)
		argv_join(c->cmdline[k], sizeof(c->cmdline[k]), c->argv[k]);
	validate(c);
}

static void add_bwrap(const struct tier_options *o)
{
	struct bcase *c = add_peer("bwrap", "bwrap --unshare-all, same view", "bwrap");
	size_t i;

	push_both(c, "--unshare-all");
	push_both(c, "--die-with-parent");
	push_both(c, "--new-session");
	push_both(c, "--cap-drop");
	push_both(c, "ALL");
	for (i = 0; i < sizeof(sysdirs) / sizeof(sysdirs[0]); i++) {
		char link[256];
		enum sysdir_kind k = sysdir_at(i, link, sizeof(link));

		if (k == SYSDIR_NONE)
			continue;
		push_both(c, k == SYSDIR_LINK ? "--symlink" : "--ro-bind");
		push_both(c, k == SYSDIR_LINK ? own(c, "%s", link) : (char *)sysdirs[i]);
		push_both(c, (char *)sysdirs[i]);
	}
	push_both(c, "--dev");
	push_both(c, "/dev");
	push_both(c, "--proc");
	push_both(c, "/proc");
	push_both(c, "--tmpfs");
	push_both(c, "/tmp");
	push_both(c, "--bind");
	push_both(c, (char *)o->workdir);
	push_both(c, (char *)o->workdir);
	push_both(c, "--chdir");
	push_both(c, (char *)o->workdir);
	push_cmd(c);
	finish_peer(c);
}

static void add_firejail(const struct tier_options *o)
{
	struct bcase *c = add_peer("firejail", "firejail, comparable flags", "firejail");

	/* firejail always makes mount and PID namespaces; these add the
	 * network, IPC, capabilities, no_new_privs, seccomp and the view. */
	push_both(c, "--quiet");
	push_both(c, "--noprofile");
	push_both(c, "--net=none");
	push_both(c, "--ipc-namespace");
	push_both(c, "--caps.drop=all");
	push_both(c, "--nonewprivs");
	push_both(c, "--seccomp");
	push_both(c, "--private-dev");
	push_both(c, "--private-tmp");
	push_both(c, "--read-only=/");
	push_both(c, own(c, "--read-write=%s", o->workdir));
	push_cmd(c);
	finish_peer(c);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* An OCI bundle with the same view as ward's: an empty read-only root with
 * the usr-merge links, the system directories bound read-only, the workdir
 * writable, tmpfs /tmp, fresh /proc, crun's minimal /dev; the same
 * namespaces; no capabilities; no_new_privs; a seccomp deny list. */
static int crun_bundle(const struct tier_options *o, int k, char *bundle, size_t sz)
{
	static const char *const denied[] = {
		"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
		"reboot", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
		"userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
		"mount", "umount2", "pivot_root", "swapon", "swapoff", "unshare", "setns",
	};
	struct utsname u;
	char path[1024], *json = NULL, *args = NULL, *mounts = NULL, *names = NULL, *t;
	size_t i;
	int rc = -1;

	snprintf(bundle, sz, "%s/crun-%s", o->dir, cmd_keys[k]);
	snprintf(path, sizeof(path), "%s/rootfs", bundle);
	if ((mkdir(bundle, 0755) < 0 && errno != EEXIST) || (mkdir(path, 0755) < 0 && errno != EEXIST))
		return -1;
	for (i = 0; cmds[k][i]; i++) {
		if (asprintf(&t, "%s%s\"%s\"", args ? args : "", i ? ", " : "", cmds[k][i]) < 0)
			goto out;
		free(args);
		args = t;
	}
	for (i = 0; i < sizeof(sysdirs) / sizeof(sysdirs[0]); i++) {
		char link[256], dst[1024];
		enum sysdir_kind kind = sysdir_at(i, link, sizeof(link));

		if (kind == SYSDIR_NONE)
			continue;
		snprintf(dst, sizeof(dst), "%s%s", path, sysdirs[i]);
		if (kind == SYSDIR_LINK) {
			if (symlink(link, dst) < 0 && errno != EEXIST)
				goto out;
			continue;
		}
		if (mkdir(dst, 0755) < 0 && errno != EEXIST)
			goto out;
		if (asprintf(&t, "%s,\n    {\"destination\": \"%s\", \"type\": \"bind\", \"source\": "
				 "\"%s\", \"options\": [\"rbind\", \"ro\", \"nosuid\", \"nodev\"]}",
			     mounts ? mounts : "", sysdirs[i], sysdirs[i]) < 0)
			goto out;
		free(mounts);
		mounts = t;
	}
	for (i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		if (asprintf(&t, "%s%s\"%s\"", names ? names : "", i ? ", " : "", denied[i]) < 0)
			goto out;
		free(names);
		names = t;
	}
	uname(&u);
	if (asprintf(&json,
		     "{\n  \"ociVersion\": \"1.0.2\",\n"
		     "  \"process\": {\"terminal\": false, \"user\": {\"uid\": 0, \"gid\": 0},\n"
		     "    \"args\": [%s],\n"
		     "    \"env\": [\"PATH=/usr/local/bin:/usr/bin:/bin\", \"HOME=/tmp\"],\n"
		     "    \"cwd\": \"%s\", \"noNewPrivileges\": true,\n"
		     "    \"capabilities\": {\"bounding\": [], \"effective\": [], \"permitted\": [],"
		     " \"inheritable\": [], \"ambient\": []}},\n"
		     "  \"root\": {\"path\": \"rootfs\", \"readonly\": true},\n"
		     "  \"hostname\": \"ward\",\n"
		     "  \"mounts\": [\n"
		     "    {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},\n"
		     "    {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\","
		     " \"options\": [\"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\"]},\n"
		     "    {\"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\","
		     " \"options\": [\"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\"]},\n"
		     "    {\"destination\": \"/tmp\", \"type\": \"tmpfs\", \"source\": \"tmpfs\","
		     " \"options\": [\"nosuid\", \"nodev\"]},\n"
		     "    {\"destination\": \"%s\", \"type\": \"bind\", \"source\": \"%s\","
		     " \"options\": [\"rbind\", \"rw\"]}%s\n  ],\n"
		     "  \"linux\": {\n"
		     "    \"namespaces\": [{\"type\": \"user\"}, {\"type\": \"mount\"},"
		     " {\"type\": \"pid\"}, {\"type\": \"network\"}, {\"type\": \"ipc\"},"
		     " {\"type\": \"uts\"}, {\"type\": \"cgroup\"}],\n"
		     "    \"uidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}],\n"
		     "    \"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}],\n"
		     "    \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\","
		     " \"architectures\": [\"%s\"],\n"
		     "      \"syscalls\": [{\"names\": [%s], \"action\": \"SCMP_ACT_ERRNO\","
		     " \"errnoRet\": 1}]}\n  }\n}\n",
		     args, o->workdir, o->workdir, o->workdir, mounts ? mounts : "",
		     strcmp(u.machine, "aarch64") == 0 ? "SCMP_ARCH_AARCH64" : "SCMP_ARCH_X86_64",
		     names) < 0) {
		json = NULL;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	rc = write_file(path, json);
out:
	free(json);
	free(args);
	free(mounts);
	free(names);
	return rc;
}

/* crun 1.8 refuses to start on a hybrid cgroup host whose cgroup2 has any
 * controller (hugetlb, say), whatever its cgroup manager. In crun's child, a
 * private mount namespace with an empty tmpfs over /sys/fs/cgroup/unified
 * makes the host look like plain cgroup v1 to crun alone: the host's
 * hierarchies are not touched, and the cost (one unshare and two mount calls,
 * no extra exec) is charged to crun's row. */
static int crun_prep(void)
{
	struct stat st;

	if (stat("/sys/fs/cgroup/unified", &st) < 0)
		return 0; /* not a hybrid host */
	if (unshare(CLONE_NEWNS) < 0)
		return -1;
	/* Private first: nothing mounted below may propagate to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	return mount("none", "/sys/fs/cgroup/unified", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     "size=4k");
}

static void add_crun(const struct tier_options *o)
{
	struct bcase *c = add_peer("crun", "crun, equivalent bundle", "crun");
	char bundle[N_CMDS][512];
	int k;

	if (ok(c) && geteuid() != 0)
		snprintf(c->status, sizeof(c->status), "n/a (run as root only)");
	push_both(c, "--root");
	push_both(c, own(c, "%s/crun-state", o->dir));
	/* No cgroup: crun's cgroupfs manager would make one per container in the
	 * host's hierarchies, which ward (without its limits layer) does not. */
	push_both(c, "--cgroup-manager=disabled");
	push_both(c, "run");
	push_both(c, "--bundle");
	for (k = 0; k < N_CMDS; k++) {
		if (ok(c) && crun_bundle(o, k, bundle[k], sizeof(bundle[k])) < 0)
			snprintf(c->status, sizeof(c->status), "failed: bundle '%s': %s", bundle[k],
				 strerror(errno));
		push(c, k, own(c, "%s/crun-%s", o->dir, cmd_keys[k]));
	}
	c->id_slot = c->n_argv[0];
	c->prep = crun_prep;
	push_both(c, "ID");
	for (k = 0; k < N_CMDS; k++) {
		argv_join(c->cmdline[k], sizeof(c->cmdline[k]), c->argv[k]);
		/* Printed as a pattern: the container name is new on every run. */
		strncat(c->cmdline[k], " (ID new on every run; config.json: the command, the view "
				       "of ward, 7 namespaces, no capabilities, seccomp deny list; on a "
				       "hybrid cgroup host run with an empty tmpfs over "
				       "/sys/fs/cgroup/unified in a private mount namespace)",
			sizeof(c->cmdline[k]) - strlen(c->cmdline[k]) - 1);
	}
	validate(c);
}

static void add_nsjail(const struct tier_options *o)
{
	struct bcase *c = add_peer("nsjail", "nsjail, same view", "nsjail");
	size_t i;

	push_both(c, "--mode");
	push_both(c, "o");
	push_both(c, "--quiet");
	push_both(c, "--disable_rlimits");
	for (i = 0; i < sizeof(sysdirs) / sizeof(sysdirs[0]); i++) {
		char link[256];
		enum sysdir_kind k = sysdir_at(i, link, sizeof(link));

		if (k == SYSDIR_NONE)
			continue;
		push_both(c, k == SYSDIR_LINK ? "--symlink" : "--bindmount_ro");
		push_both(c, k == SYSDIR_LINK ? own(c, "%s:%s", link, sysdirs[i]) : (char *)sysdirs[i]);
	}
	push_both(c, "--bindmount");
	push_both(c, (char *)o->workdir);
	push_both(c, "--tmpfsmount");
	push_both(c, "/tmp");
	push_both(c, "--cwd");
	push_both(c, (char *)o->workdir);
	push_both(c, "--");
	push_cmd(c);
	finish_peer(c);
}

static void build_peers(const struct tier_options *o)
{
	struct bcase *c;

	c = add_peer("unshare-Urmpf", "unshare -Urmpf", "unshare");
	push_both(c, "-Urmpf");
	push_cmd(c);
	finish_peer(c);
	c = add_peer("unshare-all", "unshare -Urpimnuf", "unshare");
	push_both(c, "-Urpimnuf");
	push_cmd(c);
	finish_peer(c);
	add_bwrap(o);
	add_firejail(o);
	add_crun(o);
	add_nsjail(o);
}

/* ---- the tier ------------------------------------------------------------- */

static void info(FILE *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void info(FILE *f, const char *key, const char *fmt, ...)
{
	char v[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	fprintf(f, "info\t%s\t", key);
	rec_escape(f, v);
	fputc('\n', f);
}

static void read_line(const char *path, const char *prefix, char *buf, size_t sz)
{
	FILE *f = fopen(path, "r");
	char line[512];

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!prefix || strncmp(line, prefix, strlen(prefix)) == 0) {
			char *v = prefix ? strchr(line, ':') : line;

			v = v ? v + (prefix ? 1 : 0) : line;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(buf, sz, "%s", v);
			break;
		}
	fclose(f);
}

static void tier_info(FILE *f, const struct tier_options *o, int rounds)
{
	struct utsname u;
	char buf[512];
	time_t now = time(NULL);
	struct tm tm;

	uname(&u);
	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
	info(f, "date", "%s", buf);
	info(f, "host", "%s", u.nodename);
	info(f, "kernel", "%s %s", u.release, u.machine);
	info(f, "cpus", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	read_line("/proc/cpuinfo", "model name", buf, sizeof(buf));
	info(f, "cpu", "%s", buf);
	info(f, "uid", "%d", (int)geteuid());
	info(f, "quick", "%d", o->quick);
	info(f, "rounds", "%d", rounds);
	read_line("/proc/loadavg", NULL, buf, sizeof(buf));
	info(f, "load_start", "%s", buf);
}

static void write_cases(FILE *f, const struct tier_options *o)
{
	int i, k;

	for (i = 0; i < n_cases; i++) {
		struct bcase *c = &cases[i];

		for (k = 0; k < N_CMDS; k++) {
			size_t n = c->s[k].n;
			double med = samples_quantile(&c->s[k], 0.5);
			double p10 = samples_quantile(&c->s[k], 0.1);
			double p90 = samples_quantile(&c->s[k], 0.9);

			fprintf(f, "case\t%s\t%s\t%s\t%s\t", cmd_keys[k], c->key, c->group, c->label);
			rec_escape(f, c->status);
			if (ok(c) && n)
				fprintf(f, "\t%zu\t%.4f\t%.4f\t%.4f\t", n, med, p10, p90);
			else
				fprintf(f, "\t0\t-\t-\t-\t");
			rec_cmdline(f, c->cmdline[k], o);
			/* a session's processes are reaped inside its sandbox */
			if (ok(c) && n && c->kind != K_SESSION && c->kind != K_SERVE)
				fprintf(f, "\t%.4f\n", samples_quantile(&c->cpu[k], 0.5));
			else
				fprintf(f, "\t-\n");
		}
	}
}

static void measure(int rounds, int warmup)
{
	int pairs[MAX_CASES * N_CMDS], n = 0, r, i;
	char why[BENCH_STATUS_MAX - 32];
	int step = rounds / 10 ? rounds / 10 : 1;

	for (i = 0; i < n_cases; i++)
		if (ok(&cases[i])) {
			pairs[n++] = i * N_CMDS;
			pairs[n++] = i * N_CMDS + 1;
		}
	if (n == 0)
		return;
	for (r = -warmup; r < rounds; r++) {
		/* A B C ... every round, starting one further each time, so no
		 * case always follows the same one. */
		int start = (r + warmup) % n;

		for (i = 0; i < n; i++) {
			int p = pairs[(start + i) % n];
			struct bcase *c = &cases[p / N_CMDS];
			double ms;

			if (!ok(c))
				continue;
			if (run_once(c, p % N_CMDS, &ms, why, sizeof(why)) < 0) {
				snprintf(c->status, sizeof(c->status), "failed after %lu runs: %s",
					 c->runs, why);
				continue;
			}
			if (r >= 0 && (samples_add(&c->s[p % N_CMDS], ms) < 0 ||
				       samples_add(&c->cpu[p % N_CMDS], bench_last_cpu_ms) < 0)) {
				fprintf(stderr, "ward-bench: out of memory\n");
				exit(1);
			}
		}
		if (r >= 0 && (r + 1) % step == 0)
			fprintf(stderr, "ward-bench: ladder and peers, round %d of %d\n", r + 1,
				rounds);
	}
}

int bench_tier(const struct tier_options *o0)
{
	struct tier_options o = *o0;
	int rounds = o.rounds ? o.rounds : o.quick ? 15 : 200;
	char buf[512];
	FILE *f;
	int i, k, rc = 0;

	/* Processes a sandbox leaves behind its first one come to the bench, to
	 * be reaped and have their CPU time counted (run.c). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		fprintf(stderr, "ward-bench: prctl PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
		return -1;
	}
	snprintf(o.workdir, sizeof(o.workdir), "%s/work", o.dir);
	if (mkdir(o.workdir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "ward-bench: mkdir '%s': %s\n", o.workdir, strerror(errno));
		return -1;
	}
	f = fopen(o.out, "w");
	if (!f) {
		fprintf(stderr, "ward-bench: open '%s': %s\n", o.out, strerror(errno));
		return -1;
	}
	tier_info(f, &o, rounds);
	fflush(f);
	if (o.only && strcmp(o.only, "ladder") != 0) {
		rc = strcmp(o.only, "network") == 0 ? bench_network(&o, f) : bench_throughput(&o, f);
		goto out;
	}

	fprintf(stderr, "ward-bench: uid %d, %d rounds%s\n", (int)geteuid(), rounds,
		o.quick ? " (quick)" : "");
	build_ladder(&o);
	if (!o.only)
		build_peers(&o);
	for (i = 0; i < n_cases; i++)
		fprintf(stderr, "ward-bench:   %-15s %s\n", cases[i].key, cases[i].status);
	measure(rounds, o.quick ? 2 : 10);
	write_cases(f, &o);
	fflush(f);
	if (o.only)
		goto out;

	if (bench_throughput(&o, f) < 0 || bench_output(&o, f) < 0 || bench_network(&o, f) < 0)
		rc = -1;
out:
	read_line("/proc/loadavg", NULL, buf, sizeof(buf));
	info(f, "load_end", "%s", buf);
	if (fclose(f) != 0) {
		fprintf(stderr, "ward-bench: write '%s': %s\n", o.out, strerror(errno));
		rc = -1;
	}
	for (i = 0; i < n_cases; i++) {
		for (k = 0; k < N_CMDS; k++) {
			samples_release(&cases[i].s[k]);
			samples_release(&cases[i].cpu[k]);
		}
		for (k = 0; k < cases[i].n_owned; k++)
			free(cases[i].owned[k]);
		libcase_free(cases[i].lib);
		sesscase_free(cases[i].sess);
		servecase_free(cases[i].serve);
	}
	/* A case that failed is reported, not fatal: the tier produced its figures. */
	return rc;
}
