/* doctor.c — host probes for `ward doctor`. */
#include "ward/doctor.h"
#include "ward/request.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/cgroup/cgroup-internal.h"
#include "runtime/net/net-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/sandbox.h"

static struct ward_check *add(struct ward_doctor *d, const char *name, enum ward_check_status st,
			      const char *fix, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static struct ward_check *add(struct ward_doctor *d, const char *name, enum ward_check_status st,
			      const char *fix, const char *fmt, ...)
{
	struct ward_check *c;
	va_list ap;

	if (d->n_checks >= WARD_DOCTOR_MAX_CHECKS)
		return NULL;
	c = &d->checks[d->n_checks++];
	c->name = name;
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
	return c;
}

/* An integer sysctl, or -1 when the file is not there. */
static long sysctl_value(const char *path)
{
	char buf[64];

	if (ward_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

static int try_userns(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0x7f));
	if (waitpid(pid, &status, 0) < 0)
		return errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EINVAL;
}

void ward_doctor_userns_verdict(long apparmor_restrict, long unprivileged_clone, long max_ns,
				int probe_errno, struct ward_check *c)
{
	memset(c, 0, sizeof(*c));
	c->name = "user namespaces";
	if (probe_errno == 0) {
		c->status = WARD_CHECK_OK;
		snprintf(c->detail, sizeof(c->detail),
			 "can be created by this user (max_user_namespaces=%ld)", max_ns);
		return;
	}
	c->status = WARD_CHECK_MISSING;
	if (apparmor_restrict == 1) {
		snprintf(c->detail, sizeof(c->detail),
			 "refused: AppArmor restricts unprivileged user namespaces "
			 "(kernel.apparmor_restrict_unprivileged_userns=1): %s", strerror(probe_errno));
		snprintf(c->fix, sizeof(c->fix),
			 "give ward an AppArmor profile with the 'userns,' rule "
			 "(/etc/apparmor.d/ward: abi <abi/4.0>, profile ward /usr/local/bin/ward "
			 "flags=(unconfined) { userns, }), or sysctl -w "
			 "kernel.apparmor_restrict_unprivileged_userns=0");
	} else if (unprivileged_clone == 0) {
		snprintf(c->detail, sizeof(c->detail), "refused: kernel.unprivileged_userns_clone=0: %s",
			 strerror(probe_errno));
		snprintf(c->fix, sizeof(c->fix), "sysctl -w kernel.unprivileged_userns_clone=1");
	} else if (max_ns == 0) {
		snprintf(c->detail, sizeof(c->detail), "refused: user.max_user_namespaces=0: %s",
			 strerror(probe_errno));
		snprintf(c->fix, sizeof(c->fix), "sysctl -w user.max_user_namespaces=15000");
	} else {
		snprintf(c->detail, sizeof(c->detail), "refused: %s", strerror(probe_errno));
		snprintf(c->fix, sizeof(c->fix),
			 "check the kernel configuration (CONFIG_USER_NS), seccomp or LSM policy "
			 "of the calling container");
	}
}

/* The path a profile file attaches to: the word after "profile NAME" on
 * its first such line ("profile ward /usr/bin/ward flags=..."), in out. */
static bool profile_attach(const char *text, char *out, size_t size)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p + strspn(p, " \t");
		size_t n;

		if (strncmp(q, "profile ", 8) != 0)
			continue;
		q += 8 + strspn(q + 8, " \t");
		q += strcspn(q, " \t\n");     /* the profile's name */
		q += strspn(q, " \t");
		n = strcspn(q, " \t\n{");
		if (n == 0 || q[0] != '/' || n >= size)
			return false;
		memcpy(out, q, n);
		out[n] = '\0';
		return true;
	}
	return false;
}

void ward_doctor_apparmor_fix(const char *exe, const char *profile_text, const char *confinement,
			      char *fix, size_t size)
{
	static const char lift[] = "; or, for every program: sysctl -w "
				   "kernel.apparmor_restrict_unprivileged_userns=0";
	char attach[256];

	if (!exe || !exe[0])
		exe = "/usr/bin/ward";
	if (!profile_text) {
		snprintf(fix, size,
			 "install ward's AppArmor profile (make install or the ward package puts it "
			 "in " WARD_APPARMOR_PROFILE "; it holds: profile ward %s flags=(unconfined) "
			 "{ userns, }), then: sudo apparmor_parser -r " WARD_APPARMOR_PROFILE "%s",
			 exe, lift);
	} else if (!profile_attach(profile_text, attach, sizeof(attach))) {
		snprintf(fix, size,
			 WARD_APPARMOR_PROFILE " names no path to attach to: reinstall it (make "
			 "install), then: sudo apparmor_parser -r " WARD_APPARMOR_PROFILE "%s",
			 lift);
	} else if (strcmp(attach, exe) != 0) {
		snprintf(fix, size,
			 WARD_APPARMOR_PROFILE " is for '%s', not this ward ('%s'): run that one, "
			 "or install this one there (make install PREFIX=...) and load the profile: "
			 "sudo apparmor_parser -r " WARD_APPARMOR_PROFILE "%s",
			 attach, exe, lift);
	} else if (!confinement || strncmp(confinement, "ward", 4) != 0 ||
		   (confinement[4] != ' ' && confinement[4] != '\0' && confinement[4] != '\n')) {
		snprintf(fix, size,
			 "the profile " WARD_APPARMOR_PROFILE " is installed but not loaded: "
			 "sudo apparmor_parser -r " WARD_APPARMOR_PROFILE "%s",
			 lift);
	} else {
		snprintf(fix, size,
			 "ward runs under its profile but is still refused: the loaded profile lacks "
			 "'userns,' (an older copy?): reinstall it and run sudo apparmor_parser -r "
			 WARD_APPARMOR_PROFILE "%s",
			 lift);
	}
}

static void hint(struct ward_container *c, const char *what, const char *value)
{
	if (c->n_hints < WARD_CONTAINER_MAX_HINTS)
		snprintf(c->hints[c->n_hints++], sizeof(c->hints[0]), "%s%s", what, value);
}

static void set_engine(struct ward_container *c, const char *engine)
{
	if (!c->engine[0])
		snprintf(c->engine, sizeof(c->engine), "%s", engine);
}

void ward_container_detect(const struct ward_container_signs *s, struct ward_container *c)
{
	const char *cg = s->proc1_cgroup ? s->proc1_cgroup : "";
	const char *var = s->container_var && s->container_var[0] ? s->container_var : NULL;

	memset(c, 0, sizeof(*c));
	/* the strongest sign first: Kubernetes runs containers with docker,
	 * containerd or CRI-O, and what matters is the Pod's securityContext */
	if (s->kubernetes_env) {
		hint(c, "", "KUBERNETES_SERVICE_HOST");
		set_engine(c, "kubernetes");
	}
	if (strstr(cg, "kubepods")) {
		hint(c, "", "/proc/1/cgroup: kubepods");
		set_engine(c, "kubernetes");
	}
	if (s->containerenv) {
		hint(c, "", "/run/.containerenv");
		set_engine(c, "podman");
	}
	if (var) {
		hint(c, "container=", var);
		if (strcmp(var, "podman") == 0 || strcmp(var, "oci") == 0)
			set_engine(c, "podman");
		else if (strcmp(var, "docker") == 0)
			set_engine(c, "docker");
		else if (strcmp(var, "systemd-nspawn") == 0)
			set_engine(c, "systemd-nspawn");
		else if (strncmp(var, "lxc", 3) == 0)
			set_engine(c, "lxc");
	}
	if (strstr(cg, "libpod")) {
		hint(c, "", "/proc/1/cgroup: libpod");
		set_engine(c, "podman");
	}
	if (s->dockerenv) {
		hint(c, "", "/.dockerenv");
		set_engine(c, "docker");
	}
	if (strstr(cg, "/docker")) {
		hint(c, "", "/proc/1/cgroup: docker");
		set_engine(c, "docker");
	}
	if (strstr(cg, "containerd")) {
		hint(c, "", "/proc/1/cgroup: containerd");
		set_engine(c, "unknown");
	}
	if (strstr(cg, "/lxc")) {
		hint(c, "", "/proc/1/cgroup: lxc");
		set_engine(c, "lxc");
	}
	if (strstr(cg, "machine.slice/machine-")) {
		hint(c, "", "/proc/1/cgroup: machine.slice");
		set_engine(c, "systemd-nspawn");
	}
	c->in_container = c->n_hints > 0;
	if (c->in_container)
		set_engine(c, "unknown");
}

enum ward_container_need ward_container_need_of(const char *msg)
{
	if (!msg)
		return WARD_NEED_NOTHING;
	if (strstr(msg, "mount proc"))
		return WARD_NEED_PROC;
	/* AppArmor answers EACCES where seccomp answers EPERM */
	if ((strstr(msg, "mount") || strstr(msg, "pivot_root")) && strstr(msg, "Permission denied"))
		return WARD_NEED_APPARMOR;
	if (strstr(msg, "new namespaces") || strstr(msg, "clone") || strstr(msg, "unshare") ||
	    strstr(msg, "sethostname") || strstr(msg, "mount") || strstr(msg, "pivot_root"))
		return WARD_NEED_SECCOMP;
	return WARD_NEED_NOTHING;
}

#define WARD_CONTAINER_SECCOMP "packaging/container/seccomp.json (docs/containers.md)"

void ward_container_fix(const struct ward_container *c, enum ward_container_need need, char *fix,
			size_t size)
{
	const char *e = c->engine;
	bool any = !e[0] || strcmp(e, "unknown") == 0 || strcmp(e, "lxc") == 0;
	bool podman = any || strcmp(e, "podman") == 0, docker = any || strcmp(e, "docker") == 0;
	bool kube = any || strcmp(e, "kubernetes") == 0;
	bool nspawn = strcmp(e, "systemd-nspawn") == 0;
	size_t n = 0;

#define PUT(...)                                                                 \
	do {                                                                     \
		int k_ = snprintf(fix + n, n < size ? size - n : 0, __VA_ARGS__); \
		if (k_ > 0)                                                      \
			n += (size_t)k_;                                         \
	} while (0)
	if (size)
		fix[0] = '\0';
	switch (need) {
	case WARD_NEED_NOTHING:
		return;
	case WARD_NEED_PROC:
		PUT("unmask /proc (ward mounts a new one, never the outer):");
		if (podman)
			PUT(" podman: --security-opt unmask=/proc/*;");
		if (docker)
			PUT(" docker: --security-opt systempaths=unconfined;");
		if (kube)
			PUT(" kubernetes: securityContext.procMount: Unmasked with hostUsers: false "
			    "(ProcMountType and user namespaces, Kubernetes 1.33+);");
		if (nspawn)
			PUT(" systemd-nspawn: its read-only /proc/sys is mounted over /proc, "
			    "which the kernel refuses to a new procfs: run ward outside it;");
		break;
	case WARD_NEED_SECCOMP:
		PUT("a seccomp profile that lets ward make namespaces, the engine's default plus "
		    "ward's needs, " WARD_CONTAINER_SECCOMP ":");
		if (podman)
			PUT(" podman: --security-opt seccomp=seccomp.json;");
		if (docker)
			PUT(" docker: --security-opt seccomp=seccomp.json;");
		if (kube)
			PUT(" kubernetes: securityContext.seccompProfile: {type: Localhost, "
			    "localhostProfile: ward.json} (the file on each node);");
		if (nspawn)
			PUT(" systemd-nspawn: --system-call-filter='@mount unshare setns';");
		break;
	case WARD_NEED_APPARMOR:
		PUT("an AppArmor profile that allows mounts in ward's own namespaces:");
		if (podman || docker)
			PUT(" %s: --security-opt apparmor=unconfined (or a profile with 'mount,' "
			    "and 'pivot_root,');",
			    podman && docker ? "podman, docker" : podman ? "podman" : "docker");
		if (kube)
			PUT(" kubernetes: securityContext.appArmorProfile: {type: Unconfined} "
			    "(Kubernetes 1.30+) or a Localhost profile;");
		break;
	}
#undef PUT
	if (n && n <= size && fix[n - 1] == ';')
		fix[n - 1] = '\0';
}

static void check_container(struct ward_doctor *d)
{
	struct ward_container_signs s = { 0 };
	char cenv[512], cg[2048], env1[8192];
	const char *var = getenv("container");
	ssize_t n;
	struct ward_check *sandbox = NULL;
	enum ward_container_need need;
	int i;

	s.dockerenv = access("/.dockerenv", F_OK) == 0;
	if (ward_read_file("/run/.containerenv", cenv, sizeof(cenv)) >= 0)
		s.containerenv = cenv;
	if (ward_read_file("/proc/1/cgroup", cg, sizeof(cg)) >= 0)
		s.proc1_cgroup = cg;
	/* PID 1's environment, NUL-separated, when readable (same user) */
	n = ward_read_file("/proc/1/environ", env1, sizeof(env1));
	for (ssize_t k = 0; n > 0 && k < n; k += (ssize_t)strlen(env1 + k) + 1)
		if (strncmp(env1 + k, "container=", 10) == 0) {
			var = env1 + k + 10;
			break;
		}
	s.container_var = var;
	s.kubernetes_env = getenv("KUBERNETES_SERVICE_HOST") != NULL;
	ward_container_detect(&s, &d->container);
	if (!d->container.in_container)
		return;
	for (i = 0; i < d->n_checks; i++)
		if (strcmp(d->checks[i].name, "sandbox") == 0)
			sandbox = &d->checks[i];
	need = sandbox && sandbox->status != WARD_CHECK_OK ?
		       ward_container_need_of(sandbox->detail) :
		       WARD_NEED_NOTHING;
	/* user namespaces refused: the profile's rule on unshare and clone */
	if (!need && d->n_checks > 0 && d->checks[0].status != WARD_CHECK_OK)
		need = WARD_NEED_SECCOMP;
	{
		struct ward_check *c = add(d, "container", need ? WARD_CHECK_LIMITED : WARD_CHECK_OK,
					   NULL, "%s (%s%s%s)", d->container.engine,
					   d->container.hints[0],
					   d->container.n_hints > 1 ? ", " : "",
					   d->container.n_hints > 1 ? d->container.hints[1] : "");

		if (c)
			ward_container_fix(&d->container, need, c->fix, sizeof(c->fix));
		if (sandbox && need)
			ward_container_fix(&d->container, need, sandbox->fix, sizeof(sandbox->fix));
	}
}

static void check_userns(struct ward_doctor *d)
{
	long restrict_userns = sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	struct ward_check *c;

	if (d->n_checks >= WARD_DOCTOR_MAX_CHECKS)
		return;
	c = &d->checks[d->n_checks++];
	ward_doctor_userns_verdict(restrict_userns,
				   sysctl_value("/proc/sys/kernel/unprivileged_userns_clone"),
				   sysctl_value("/proc/sys/user/max_user_namespaces"), try_userns(),
				   c);
	if (c->status != WARD_CHECK_OK && restrict_userns == 1) {
		char exe[256] = "", label[256] = "", profile[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		bool have_profile = ward_read_file(WARD_APPARMOR_PROFILE, profile, sizeof(profile)) >= 0;
		bool have_label = ward_read_file("/proc/self/attr/apparmor/current", label,
						 sizeof(label)) >= 0 ||
				  ward_read_file("/proc/self/attr/current", label, sizeof(label)) >= 0;

		exe[n > 0 ? n : 0] = '\0';
		ward_doctor_apparmor_fix(exe, have_profile ? profile : NULL,
					 have_label ? label : NULL, c->fix, sizeof(c->fix));
	}
}

static void check_landlock(struct ward_doctor *d)
{
	long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1UL);

	if (abi >= 1) {
		d->landlock_abi = (int)abi;
		add(d, "landlock", WARD_CHECK_OK, NULL, "ABI %ld", abi);
	} else if (errno == EOPNOTSUPP) {
		add(d, "landlock", WARD_CHECK_MISSING,
		    "add 'landlock' to the lsm= kernel command line (or CONFIG_LSM)",
		    "built into the kernel but disabled at boot");
	} else {
		add(d, "landlock", WARD_CHECK_MISSING, "use a kernel built with CONFIG_SECURITY_LANDLOCK",
		    "not built into this kernel");
	}
}

static void check_seccomp(struct ward_doctor *d)
{
	char actions[256] = "";

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
		add(d, "seccomp", WARD_CHECK_MISSING, "use a kernel built with CONFIG_SECCOMP_FILTER",
		    "not available: %s", strerror(errno));
		return;
	}
	if (ward_read_file("/proc/sys/kernel/seccomp/actions_avail", actions, sizeof(actions)) > 0)
		actions[strcspn(actions, "\n")] = '\0';
	add(d, "seccomp", WARD_CHECK_OK, NULL, "filter mode available (actions: %s)",
	    actions[0] ? actions : "unknown");
}

/* In a container with a cgroup namespace of its own: what the engine must
 * give for a cgroup per command (the container's own limits bound all of
 * its commands without it). */
#define FIX_CONTAINER_CGROUP                                                                       \
	"for a cgroup per command, give the container its cgroup read-write and writable by "    \
	"ward's user, and start ward as its only process (the entrypoint); without, the "         \
	"container's own cgroup limits bound all its commands together"

/* cgroup v2 (controllers, delegation), the v1 fallback, and the limits ward
 * will apply with them — the same choice ward_run() makes. */
static void check_cgroups(struct ward_doctor *d)
{
	struct cgroup_probe p;
	struct ward_limits lim;
	char mem[32], v1[512] = "";
	size_t n = 0;
	int i;

	ward_cgroup_probe(&p);
	ward_limits_init(&lim);
	ward_format_size(lim.memory, mem, sizeof(mem));
	if (p.version == 2 && p.v2_root)
		add(d, "cgroup v2", WARD_CHECK_OK, NULL,
		    "controllers at %s: %s; ward makes its cgroups under %s", p.v2_mount,
		    p.v2_controllers, p.v2_base);
	else if (p.version == 2)
		add(d, "cgroup v2", WARD_CHECK_OK, NULL,
		    "delegated cgroup %s: ward %s its own process into %s/ward-supervisor and makes "
		    "its cgroups beside it", p.v2_base, p.v2_move_self ? "moves" : "has moved",
		    p.v2_base);
	else if (p.v2_in_ns)
		add(d, "cgroup v2", WARD_CHECK_LIMITED, FIX_CONTAINER_CGROUP, "%s", p.v2_reason);
	else
		add(d, "cgroup v2", p.v2_mount[0] ? WARD_CHECK_LIMITED : WARD_CHECK_MISSING,
		    p.v1_mount[CG1_MEMORY][0] && p.v2_mount[0] && !strstr(p.v2_reason, "delegat") ?
			    "boot with systemd.unified_cgroup_hierarchy=1 for cgroup v2" :
			    "systemd-run --user --scope -p Delegate=yes ward run ...",
		    "%s", p.v2_reason);
	for (i = 0; i < CG1_COUNT; i++)
		if (p.v1_mount[i][0])
			n += (size_t)snprintf(v1 + n, n < sizeof(v1) ? sizeof(v1) - n : 0, "%s%s",
					      n ? ", " : "", p.v1_mount[i]);
	if (p.version == 1)
		add(d, "cgroup v1", WARD_CHECK_OK, NULL,
		    "fallback in use (hybrid host): each command gets a cgroup ward-<name> at the top of %s", v1);
	else if (p.version == 0 && v1[0])
		add(d, "cgroup v1", WARD_CHECK_LIMITED,
		    "run ward as root for cgroup v1 limits, or use a cgroup v2 host",
		    "hierarchies %s are writable by root only", v1);
	if (p.version)
		add(d, "limits", WARD_CHECK_OK, NULL,
		    "every command gets its own cgroup v%d: memory %s (half the RAM), swap 0, "
		    "%llu processes by default; --memory, --pids, --cpus, --io-weight apply; "
		    "rlimits: no core dumps, %d open files", p.version, mem,
		    (unsigned long long)lim.pids, WARD_NOFILE_MAX);
	else
		add(d, "limits", WARD_CHECK_LIMITED,
		    p.v2_in_ns ? FIX_CONTAINER_CGROUP :
				 "run ward as root, or in a delegated cgroup v2 scope: systemd-run "
				 "--user --scope -p Delegate=yes ward run ...",
		    "no cgroup limit applies here, rlimits only (no core dumps, %d open files); "
		    "--memory, --pids, --cpus and --io-weight fail the command (see the cgroup "
		    "checks above)", WARD_NOFILE_MAX);
}

static void check_net_admin(struct ward_doctor *d)
{
	char status[4096];
	unsigned long long eff = 0;
	char *p;

	if (ward_read_file("/proc/self/status", status, sizeof(status)) > 0 &&
	    (p = strstr(status, "CapEff:")))
		eff = strtoull(p + 7, NULL, 16);
	if (eff & (1ULL << 12))
		add(d, "CAP_NET_ADMIN", WARD_CHECK_OK, NULL, "held: veth pairs can be made");
	else
		add(d, "CAP_NET_ADMIN", WARD_CHECK_LIMITED, NULL, "not held: no veth pairs");
}

/* The TLS helper, started for real (its CA made, its store loaded) as a
 * run that intercepts would. */
static void check_tls_helper(struct ward_doctor *d)
{
	struct ward_tlshelper *h = NULL;
	struct ward_error *err = NULL;

	if (ward_tlshelper_start(NULL, &h, &err) == 0) {
		add(d, "TLS helper", WARD_CHECK_OK, NULL,
		    "ward-tls starts: HTTPS to hosts a credential, secret or request rule names "
		    "can be intercepted");
		ward_tlshelper_free(h);
		return;
	}
	add(d, "TLS helper", WARD_CHECK_LIMITED,
	    "install ward-tls with ward (make install puts it in LIBEXECDIR/ward; a copy beside "
	    "the ward binary is found too)",
	    "runs that intercept HTTPS fail: %s", err ? err->message : "unknown error");
	ward_error_free(err);
}

static void check_sandbox(struct ward_doctor *d)
{
	struct ward_config cfg;
	struct ward_result res;
	struct ward_error *err = NULL;
	char *argv[] = { (char *)"/bin/true", NULL };
	/* a directory of its own: the shared /tmp is no workdir (ward/admit.h) */
	char dir[] = "/tmp/ward-doctor.XXXXXX";
	int rc;

	if (!mkdtemp(dir)) {
		add(d, "sandbox", WARD_CHECK_MISSING, "make /tmp writable",
		    "cannot run: mkdtemp '%s': %s", dir, strerror(errno));
		return;
	}
	ward_config_init(&cfg);
	cfg.timeout = 10;
	/* no placeholders: this checks the sandbox, not them */
	cfg.protect = ward_protect_new(false, NULL);
	rc = ward_config_set_workdir(&cfg, dir, &err) < 0 ? -1 : ward_run(&cfg, argv, &res, &err);
	rmdir(dir);
	if (rc < 0) {
		add(d, "sandbox", WARD_CHECK_MISSING, "see the checks above", "cannot run: %s",
		    err ? err->message : "unknown error");
		ward_error_free(err);
		ward_config_release(&cfg);
		return;
	}
	if (res.error || res.exit_code != 0) {
		add(d, "sandbox", WARD_CHECK_MISSING, "see the checks above",
		    "a test command failed: %s", res.error ? res.error->message : "non-zero exit");
	} else {
		d->sandbox_works = true;
		add(d, "sandbox", WARD_CHECK_OK, NULL,
		    "/bin/true ran in fresh user, mount, pid, net, ipc, uts and cgroup namespaces "
		    "behind a pivot_root view in %lld ms", (long long)res.duration_ms);
	}
	ward_result_release(&res);
	ward_config_release(&cfg);
}

/* A check's command, run in a sandbox over a directory of its own (the
 * shared /tmp is no workdir): 0 with *res to read, then ward_result_release()
 * and probe_end(); -1 with the check's "cannot test" line added. */
struct probe {
	struct ward_config cfg;
	char dir[32];
};

static int probe_run(struct ward_doctor *d, struct probe *p, const char *name, bool overlay,
		     char *argv[], struct ward_result *res)
{
	struct ward_error *err = NULL;

	snprintf(p->dir, sizeof(p->dir), "/tmp/ward-doctor.XXXXXX");
	if (!mkdtemp(p->dir)) {
		add(d, name, WARD_CHECK_LIMITED, NULL, "cannot test: mkdtemp: %s", strerror(errno));
		return -1;
	}
	ward_config_init(&p->cfg);
	p->cfg.timeout = 10;
	if (overlay)
		p->cfg.workdir_mode = WARD_WORKDIR_OVERLAY;
	p->cfg.protect = ward_protect_new(false, NULL);
	if (ward_config_set_workdir(&p->cfg, p->dir, &err) < 0 ||
	    ward_run(&p->cfg, argv, res, &err) < 0) {
		add(d, name, WARD_CHECK_LIMITED, NULL, "cannot test: %s",
		    err ? err->message : "unknown error");
		ward_error_free(err);
		ward_config_release(&p->cfg);
		rmdir(p->dir);
		return -1;
	}
	return 0;
}

static void probe_end(struct probe *p)
{
	ward_config_release(&p->cfg);
	rmdir(p->dir);
}

/* Overlay workdir mode: overlayfs mounted from the sandbox's user namespace
 * over an empty directory, its upper in ward's state directory. */
static void check_overlay(struct ward_doctor *d)
{
	struct probe p;
	struct ward_result res;
	char *argv[] = { (char *)"/bin/true", NULL };

	if (!d->sandbox_works || probe_run(d, &p, "overlay workdir", true, argv, &res) < 0)
		return;
	if (res.error || res.exit_code != 0)
		add(d, "overlay workdir", WARD_CHECK_LIMITED,
		    "Linux 5.11 or later, and a state directory ($XDG_STATE_HOME) on a "
		    "filesystem with user xattrs",
		    "--workdir-mode overlay is unavailable: %s",
		    res.error ? res.error->message : "non-zero exit");
	else
		add(d, "overlay workdir", WARD_CHECK_OK, NULL,
		    "overlayfs mounts in the sandbox: --workdir-mode overlay works");
	ward_result_release(&res); /* discards the empty change set */
	probe_end(&p);
}

/* Run by root, the view's system directories are idmapped so that root's
 * files there are nobody's to the command (uid 0 inside is the host's
 * root): asked of a sandbox itself, as `test -O` sees /usr and /etc. Where
 * the kernel or a filesystem under them cannot idmap, they are bound and
 * only the masked secrets are hidden. */
static void check_root_view(struct ward_doctor *d)
{
	struct probe p;
	struct ward_result res;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
			 (char *)"test -O /usr || test -O /etc || exit 3", NULL };

	if (!d->sandbox_works || geteuid() != 0 ||
	    probe_run(d, &p, "root's view", false, argv, &res) < 0)
		return;
	if (res.exit_code == 3)
		add(d, "root's view", WARD_CHECK_OK, NULL,
		    "/usr and /etc are idmapped: root's files there are nobody's to the "
		    "command, so the ones only root may read stay closed");
	else if (res.exit_code == 0)
		add(d, "root's view", WARD_CHECK_LIMITED,
		    "a kernel with idmapped mounts (Linux 5.12 or later) on filesystems "
		    "that allow them, or run ward as an unprivileged user",
		    "/usr and /etc are bound as they are: root inside is the host's root "
		    "and reads every root-only file there but the masked secrets");
	else
		add(d, "root's view", WARD_CHECK_LIMITED, NULL, "cannot test: %s",
		    res.error ? res.error->message : "the probe failed");
	ward_result_release(&res);
	probe_end(&p);
}

/* Where ward keeps its state, and why the candidates before it were passed
 * over (ward_state_choose(), nothing made). */
static void check_state(struct ward_doctor *d)
{
	struct ward_state_choice c;
	struct ward_error *err = NULL;
	const char *fix = "set XDG_STATE_HOME to a directory of yours that no other user can write "
			  "(every directory above it root's or yours, none group- or "
			  "world-writable unless sticky)";
	char skipped[400] = "";

	if (ward_state_choose(NULL, false, &c, &err) < 0) {
		add(d, "state directory", WARD_CHECK_MISSING, fix,
		    "none usable: overlay change sets and the per-user rate limit fail: %s",
		    err ? err->message : "unknown error");
		ward_error_free(err);
		ward_state_choice_release(&c);
		return;
	}
	if (c.skipped) {
		/* one line: the reasons joined by "; " */
		size_t n = 0;

		for (const char *p = c.skipped; *p && n + 3 < sizeof(skipped); p++) {
			if (*p != '\n') {
				skipped[n++] = *p;
			} else if (p[1]) {
				skipped[n++] = ';';
				skipped[n++] = ' ';
			}
		}
		skipped[n] = '\0';
	}
	add(d, "state directory", c.skipped ? WARD_CHECK_LIMITED : WARD_CHECK_OK,
	    c.skipped ? fix : NULL, "%s (%s%s%s)%s%s%s", c.path,
	    c.source[0] == '/' ? "fallback in " : "from $", c.source,
	    c.fd < 0 ? ", made on first use" : "",
	    strcmp(c.source, "/tmp") == 0 || strcmp(c.source, "XDG_RUNTIME_DIR") == 0 ?
		    "; not kept across reboots" : "",
	    *skipped ? "; skipped: " : "", skipped);
	ward_state_choice_release(&c);
}

void ward_doctor_probe(struct ward_doctor *d)
{
	memset(d, 0, sizeof(*d));
	d->root = geteuid() == 0;
	check_userns(d);
	check_landlock(d);
	check_seccomp(d);
	check_cgroups(d);
	check_net_admin(d);
	check_tls_helper(d);
	check_sandbox(d);
	check_root_view(d);
	check_overlay(d);
	check_state(d);
	check_container(d);
	snprintf(d->mode, sizeof(d->mode), "%s", d->sandbox_works ? "required" : "off");
	if (d->sandbox_works)
		snprintf(d->summary, sizeof(d->summary),
			 "ward runs commands sandboxed (mode required)");
	else
		snprintf(d->summary, sizeof(d->summary),
			 "ward cannot build its sandbox here: commands fail unless run with "
			 "--sandbox=off, which gives no isolation");
}

static const char *status_name(enum ward_check_status s)
{
	return s == WARD_CHECK_OK ? "ok" : s == WARD_CHECK_LIMITED ? "limited" : "missing";
}

/* Text for a person: details quote paths and the kernel's words, which
 * must not drive the terminal (ward_text_escape()). */
static void put_text(FILE *f, const char *s)
{
	char *e = ward_text_escape(s, strlen(s), 0);

	fputs(e ? e : "?", f);
	free(e);
}

void ward_doctor_print(const struct ward_doctor *d, FILE *f)
{
	int i;

	for (i = 0; i < d->n_checks; i++) {
		const struct ward_check *c = &d->checks[i];

		fprintf(f, "%-8s %-16s ", status_name(c->status), c->name);
		put_text(f, c->detail);
		fputc('\n', f);
		if (c->fix[0]) {
			fprintf(f, "%-8s %-16s fix: ", "", "");
			put_text(f, c->fix);
			fputc('\n', f);
		}
	}
	fputc('\n', f);
	put_text(f, d->summary);
	fputc('\n', f);
}

char *ward_doctor_to_json(const struct ward_doctor *d)
{
	json_t *o = json_object(), *checks = json_array();
	char *s;
	int i;

	for (i = 0; i < d->n_checks; i++) {
		const struct ward_check *c = &d->checks[i];
		json_t *jc = json_object();

		json_object_set_new(jc, "name", json_string(c->name));
		json_object_set_new(jc, "status", json_string(status_name(c->status)));
		json_object_set_new(jc, "detail", json_string(c->detail));
		json_object_set_new(jc, "fix", c->fix[0] ? json_string(c->fix) : json_null());
		json_array_append_new(checks, jc);
	}
	json_object_set_new(o, "checks", checks);
	json_object_set_new(o, "root", json_boolean(d->root));
	json_object_set_new(o, "landlock_abi", json_integer(d->landlock_abi));
	json_object_set_new(o, "sandbox_works", json_boolean(d->sandbox_works));
	json_object_set_new(o, "mode", json_string(d->mode));
	json_object_set_new(o, "summary", json_string(d->summary));
	if (d->container.in_container) {
		json_t *jc = json_object(), *hints = json_array();

		for (i = 0; i < d->container.n_hints; i++)
			json_array_append_new(hints, json_string(d->container.hints[i]));
		json_object_set_new(jc, "engine", json_string(d->container.engine));
		json_object_set_new(jc, "hints", hints);
		json_object_set_new(o, "container", jc);
	} else {
		json_object_set_new(o, "container", json_null());
	}
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}
