/* cmd-run.c — `ward run`: options, the request, the run, the result. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cli/cli-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/policy.h"
#include "ward/request.h"
#include "ward/sandbox.h"

static const char usage[] =
	"usage: ward run [options] -- CMD [ARGS...]\n"
	"       ward run [options] -c 'STRING'\n"
	"       ward run --json [options] < request.json\n"
	"\n"
	"  -c, --command STRING     run STRING with /bin/sh -c inside the sandbox\n"
	"      --shell sh|bash      the shell that runs the -c STRING (or the request's\n"
	"                           command), parsed and checked in its dialect (default sh)\n"
	"      --no-shell           run the -c STRING (or the request's command) without a\n"
	"                           shell: ward runs its pipes, && || ; and redirections\n"
	"                           itself and refuses anything else (README: No-shell mode)\n"
	"  -C, --workdir DIR        the writable work directory (default: current directory)\n"
	"      --workdir-root DIR   a directory under which a --json request may name its\n"
	"                           workdir (repeatable; default: the current directory)\n"
	"      --allow-workdir-anywhere  let the workdir be a system directory, another\n"
	"                           user's home or above a home (ward/admit.h)\n"
	"      --allow-home-workdir let the workdir be a home directory itself (its dot\n"
	"                           entries and bin stay read-only)\n"
	"  -t, --timeout SECONDS    whole seconds, at least 1 (default 120)\n"
	"      --json               read {\"command\",\"workdir\",\"timeout\"} on stdin, print the\n"
	"                           result object\n"
	"      --setenv NAME=VALUE  add a variable (repeatable)\n"
	"      --clearenv           start from an empty environment\n"
	"      --ro-bind SRC DST    bind SRC read-only at DST\n"
	"      --bind SRC DST       bind SRC writable at DST\n"
	"      --tmpfs DST          an empty tmpfs at DST\n"
	"      --uid0               appear as uid 0 inside (default: as yourself)\n"
	"      --hostname NAME      the sandbox's hostname (default: ward)\n"
	"      --sandbox MODE       required (default) or off (no isolation, said in the result)\n"
	"      --landlock MODE      required (default), best-effort or off\n"
	"      --landlock-abi-max N use at most Landlock ABI N (also $WARD_LANDLOCK_ABI_MAX)\n"
	"      --landlock-min-abi N refuse to run on a kernel below ABI N (default 1)\n"
	"      --seccomp PROFILE    default, strict, off, or a profile file\n"
	"      --allow-ptrace       let debuggers inside trace their own children\n"
	"      --allow-nested       let the command make its own sandboxes (ward inside ward,\n"
	"                           bubblewrap, podman): user namespaces and mounts of its own\n"
	"      --namespaces LIST    comma-separated subset of user,mount,pid,net,ipc,uts,cgroup\n"
	"                           (to measure what each costs; default all)\n"
	"      --no-view            keep the host's filesystem view (measurement only)\n"
	"      --no-cgroup          no cgroup, rlimits only (measurement only)\n"
	"      --net MODE           none (default: loopback only), proxy (only the validating\n"
	"                           proxy is reachable) or host (the host's network);\n"
	"                           the seven options below imply proxy\n"
	"      --allow-host HOST    let the proxy reach HOST: example.com, '*.example.com',\n"
	"                           example.com:8443, an IP literal (repeatable)\n"
	"      --deny-host HOST     refuse HOST whatever allows it (repeatable)\n"
	"      --allow-cidr CIDR    let addresses in CIDR through the destination check\n"
	"                           (loopback, private, link-local... are refused otherwise)\n"
	"      --allow-port PORT    a port for host rules without one (80 and 443 always)\n"
	"      --inject-header 'HOST=Name: value'  add a header to requests to HOST (HTTPS\n"
	"                           through interception); $VAR/${VAR} from ward's environment\n"
	"      --secret NAME=HOST[,HOST...]  the command's $NAME is a stand-in; the proxy\n"
	"                           puts ward's own $NAME in its place in requests to\n"
	"                           HOST (refuses it to any other host) (repeatable)\n"
	"      --allow-request 'HOST METHOD[,METHOD] PATHGLOB'  once HOST has one, its\n"
	"                           requests must match one: '/repos/**' (repeatable)\n"
	"      --upstream-ca FILE   PEM CA certificates trusted (beside the system's) for\n"
	"                           intercepted hosts' real servers\n"
	"      --net-log FILE       append one JSON line per proxy connection\n"
	"      --proxy-port PORT    where the proxy listens inside (default 3128)\n"
	"      --net-subnet CIDR    the veth pair's IPv4 subnet (default 10.0.2.0/30)\n"
	"      --net-transport T    auto (default), veth (root) or loopback (unprivileged)\n"
	"      --allow-local-port PORT  a port the command may connect to on its own\n"
	"                           loopback in proxy mode (Landlock ABI >= 4)\n"
	"      --workdir-mode MODE  direct (default) or overlay: writes held in a change set\n"
	"      --changes NAME       overlay over the kept change set NAME: the command sees\n"
	"                           its changes and adds to them\n"
	"      --apply              overlay: copy the changes into the workdir if the command\n"
	"                           succeeded (else they are kept)\n"
	"      --discard            overlay: drop the changes (default: keep them for\n"
	"                           'ward diff/apply/discard NAME')\n"
	"      --protect PATH       keep PATH (relative to the workdir) read-only too\n"
	"      --allow-write PATH   open a protected path (and those below it) for this run\n"
	"      --no-placeholders    do not cover missing protected paths (direct mode)\n"
	"      --memory SIZE        memory limit (K, M, G suffixes; default half the RAM)\n"
	"      --memory-swap SIZE   swap allowed on top of --memory (default 0)\n"
	"      --pids N             most processes and threads at once (default 4096)\n"
	"      --cpus FLOAT         CPU time, in CPUs (0.5 = half of one; default none)\n"
	"      --io-weight N        proportional I/O weight, 1 to 10000 (default none)\n"
	"      --max-file-size SIZE largest file the command may write (RLIMIT_FSIZE)\n"
	"      --tmpfs-size SIZE    size of each tmpfs inside (/tmp, /dev/shm, --tmpfs;\n"
	"                           default the memory limit with a cgroup, else 512M)\n"
	"      --approve            approve a command that needs approval\n"
	"      --policy FILE        the policy file (default: $WARD_POLICY,\n"
	"                           ~/.config/ward/policy.json, /etc/ward/policy.json)\n"
	"      --no-policy          built-in defaults and flags only\n"
	"  -h, --help               this text\n"
	"\n"
	"Exit status: the command's; 128+N if killed by signal N; 124 on timeout;\n"
	"125 if ward itself failed; 126/127 if the command could not be run.\n";

enum {
	OPT_JSON = 256,
	OPT_SETENV,
	OPT_CLEARENV,
	OPT_RO_BIND,
	OPT_BIND,
	OPT_TMPFS,
	OPT_UID0,
	OPT_HOSTNAME,
	OPT_SANDBOX,
	OPT_NAMESPACES,
	OPT_NO_VIEW,
	OPT_APPROVE,
	OPT_POLICY,
	OPT_NO_POLICY,
	OPT_LANDLOCK,
	OPT_LANDLOCK_ABI_MAX,
	OPT_LANDLOCK_MIN_ABI,
	OPT_SECCOMP,
	OPT_ALLOW_PTRACE,
	OPT_ALLOW_NESTED,
	OPT_NO_SHELL,
	OPT_SHELL,
	OPT_NET,
	OPT_ALLOW_HOST,
	OPT_DENY_HOST,
	OPT_ALLOW_CIDR,
	OPT_ALLOW_PORT,
	OPT_INJECT_HEADER,
	OPT_UPSTREAM_CA,
	OPT_SECRET,
	OPT_ALLOW_REQUEST,
	OPT_NET_LOG,
	OPT_PROXY_PORT,
	OPT_NET_SUBNET,
	OPT_NET_TRANSPORT,
	OPT_ALLOW_LOCAL_PORT,
	OPT_WORKDIR_MODE,
	OPT_APPLY,
	OPT_DISCARD,
	OPT_PROTECT,
	OPT_ALLOW_WRITE,
	OPT_CHANGES,
	OPT_NO_PLACEHOLDERS,
	OPT_NO_CGROUP,
	OPT_WORKDIR_ROOT,
	OPT_ALLOW_WORKDIR_ANYWHERE,
	OPT_ALLOW_HOME_WORKDIR,
	OPT_LIMIT, /* OPT_LIMIT + WARD_LIMIT_*: the resource limits */
	OPT_LIMIT_END = OPT_LIMIT + WARD_LIMIT_COUNT,
};

const struct option ward_run_long_options[] = {
	{ "command", required_argument, NULL, 'c' },
	{ "workdir", required_argument, NULL, 'C' },
	{ "timeout", required_argument, NULL, 't' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "setenv", required_argument, NULL, OPT_SETENV },
	{ "clearenv", no_argument, NULL, OPT_CLEARENV },
	{ "ro-bind", required_argument, NULL, OPT_RO_BIND },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "tmpfs", required_argument, NULL, OPT_TMPFS },
	{ "uid0", no_argument, NULL, OPT_UID0 },
	{ "hostname", required_argument, NULL, OPT_HOSTNAME },
	{ "sandbox", required_argument, NULL, OPT_SANDBOX },
	{ "namespaces", required_argument, NULL, OPT_NAMESPACES },
	{ "no-view", no_argument, NULL, OPT_NO_VIEW },
	{ "approve", no_argument, NULL, OPT_APPROVE },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "no-policy", no_argument, NULL, OPT_NO_POLICY },
	{ "landlock", required_argument, NULL, OPT_LANDLOCK },
	{ "landlock-abi-max", required_argument, NULL, OPT_LANDLOCK_ABI_MAX },
	{ "landlock-min-abi", required_argument, NULL, OPT_LANDLOCK_MIN_ABI },
	{ "seccomp", required_argument, NULL, OPT_SECCOMP },
	{ "allow-ptrace", no_argument, NULL, OPT_ALLOW_PTRACE },
	{ "allow-nested", no_argument, NULL, OPT_ALLOW_NESTED },
	{ "no-shell", no_argument, NULL, OPT_NO_SHELL },
	{ "shell", required_argument, NULL, OPT_SHELL },
	{ "net", required_argument, NULL, OPT_NET },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "deny-host", required_argument, NULL, OPT_DENY_HOST },
	{ "allow-cidr", required_argument, NULL, OPT_ALLOW_CIDR },
	{ "allow-port", required_argument, NULL, OPT_ALLOW_PORT },
	{ "inject-header", required_argument, NULL, OPT_INJECT_HEADER },
	{ "upstream-ca", required_argument, NULL, OPT_UPSTREAM_CA },
	{ "secret", required_argument, NULL, OPT_SECRET },
	{ "allow-request", required_argument, NULL, OPT_ALLOW_REQUEST },
	{ "net-log", required_argument, NULL, OPT_NET_LOG },
	{ "proxy-port", required_argument, NULL, OPT_PROXY_PORT },
	{ "net-subnet", required_argument, NULL, OPT_NET_SUBNET },
	{ "net-transport", required_argument, NULL, OPT_NET_TRANSPORT },
	{ "allow-local-port", required_argument, NULL, OPT_ALLOW_LOCAL_PORT },
	{ "workdir-mode", required_argument, NULL, OPT_WORKDIR_MODE },
	{ "apply", no_argument, NULL, OPT_APPLY },
	{ "discard", no_argument, NULL, OPT_DISCARD },
	{ "protect", required_argument, NULL, OPT_PROTECT },
	{ "allow-write", required_argument, NULL, OPT_ALLOW_WRITE },
	{ "changes", required_argument, NULL, OPT_CHANGES },
	{ "no-placeholders", no_argument, NULL, OPT_NO_PLACEHOLDERS },
	{ "no-cgroup", no_argument, NULL, OPT_NO_CGROUP },
	{ "workdir-root", required_argument, NULL, OPT_WORKDIR_ROOT },
	{ "allow-workdir-anywhere", no_argument, NULL, OPT_ALLOW_WORKDIR_ANYWHERE },
	{ "allow-home-workdir", no_argument, NULL, OPT_ALLOW_HOME_WORKDIR },
	{ "memory", required_argument, NULL, OPT_LIMIT + WARD_LIMIT_MEMORY },
	{ "memory-swap", required_argument, NULL, OPT_LIMIT + WARD_LIMIT_MEMORY_SWAP },
	{ "pids", required_argument, NULL, OPT_LIMIT + WARD_LIMIT_PIDS },
	{ "cpus", required_argument, NULL, OPT_LIMIT + WARD_LIMIT_CPUS },
	{ "io-weight", required_argument, NULL, OPT_LIMIT + WARD_LIMIT_IO_WEIGHT },
	{ "max-file-size", required_argument, NULL, OPT_LIMIT + WARD_LIMIT_FILE_SIZE },
	{ "tmpfs-size", required_argument, NULL, OPT_LIMIT + WARD_LIMIT_TMPFS_SIZE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int bad(struct ward_error **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct ward_error **err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(err, WARD_ERR_INVALID_PARAMETERS, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int ward_parse_timeout(const char *s, long long *out, struct ward_error **err)
{
	char *end;
	long long v;

	if (!s || !*s)
		return bad(err, "timeout is empty");
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end == '.' || *end == 'e' || *end == 'E')
		return bad(err, "timeout must be a whole number of seconds, got '%s'", s);
	if (*end || end == s || s[strspn(s, " ")] == '+')
		return bad(err, "timeout '%s' is not a number of seconds", s);
	if (errno == ERANGE || v > WARD_TIMEOUT_MAX)
		return bad(err, "timeout must be at most %d seconds, got '%s'", WARD_TIMEOUT_MAX, s);
	if (v < 1)
		return bad(err, "timeout must be at least 1 second, got '%s'", s);
	*out = v;
	return 0;
}

static int parse_namespaces(const char *list, unsigned *out, struct ward_error **err)
{
	static const char *const names[] = { "user", "mount", "pid", "net", "ipc", "uts", "cgroup" };
	unsigned ns = 0;
	const char *p = list;

	if (!*list) /* not a silent "none": that takes every namespace away */
		return bad(err, "--namespaces: the list is empty (give 'none' for no namespace)");
	if (strcmp(list, "all") == 0) {
		*out = WARD_NS_ALL;
		return 0;
	}
	if (strcmp(list, "none") == 0) {
		*out = 0;
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ","), i;
		bool found = false;

		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i]) == n && strncmp(p, names[i], n) == 0) {
				ns |= 1u << i;
				found = true;
			}
		if (!found)
			return bad(err, "unknown namespace '%.*s' (known: user, mount, pid, net, ipc, "
					"uts, cgroup, all, none)", (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
	*out = ns;
	return 0;
}

/* Defaults, then the policy file, then the flags: a first pass over the
 * arguments finds --policy/--no-policy so that the flags parsed after can
 * override what the file says. */
static int apply_policy(int argc, char **argv, struct run_options *o, struct ward_error **err)
{
	const char *named = NULL;
	bool none = false;
	char *path;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:C:t:h", ward_run_long_options, NULL)) != -1) {
		if (c == OPT_POLICY)
			named = optarg;
		else if (c == OPT_NO_POLICY)
			none = true;
		else if ((c == OPT_RO_BIND || c == OPT_BIND) && optind < argc)
			optind++; /* their second argument */
	}
	if (none && named)
		return bad(err, "give either --policy or --no-policy, not both");
	if (none)
		return 0;
	if (named)
		return ward_policy_load(named, &o->cfg, err);
	path = ward_policy_default_path();
	if (!path)
		return 0;
	rc = ward_policy_load(path, &o->cfg, err);
	free(path);
	return rc;
}

void ward_run_options_release(struct run_options *o)
{
	ward_config_release(&o->cfg);
	memset(o, 0, sizeof(*o));
}

static int parse_flags(int argc, char **argv, struct run_options *o, struct ward_error **err);

int ward_run_options_parse(int argc, char **argv, struct run_options *o, struct ward_error **err)
{
	memset(o, 0, sizeof(*o));
	ward_config_init(&o->cfg);
	/* A person at a terminal (or their script) is not rate-limited unless
	 * the policy says so; ward serve, the agents' door, keeps the default. */
	o->cfg.rate_per_minute = o->cfg.rate_per_hour = 0;
	if (apply_policy(argc, argv, o, err) < 0)
		goto fail;
	{
		/* The environment caps the ABI above the policy, below the flags:
		 * tests of older-kernel paths set it for every ward they start. */
		const char *cap = getenv("WARD_LANDLOCK_ABI_MAX");

		if (cap && *cap &&
		    ward_landlock_parse_abi("WARD_LANDLOCK_ABI_MAX", cap, &o->cfg.landlock_abi_max,
					    err) < 0)
			goto fail;
	}
	return parse_flags(argc, argv, o, err);
fail:
	ward_run_options_release(o);
	return -1;
}

int ward_run_flags_apply(int argc, char **argv, struct ward_config *cfg, struct ward_error **err)
{
	struct run_options o;

	memset(&o, 0, sizeof(o));
	o.cfg = *cfg; /* moved in, moved back */
	o.flags_only = true;
	if (parse_flags(argc, argv, &o, err) < 0) {
		ward_config_init(cfg); /* released with o */
		return -1;
	}
	*cfg = o.cfg;
	if (o.shell || o.argv || o.json || o.approve || o.apply || o.discard || o.no_shell ||
	    o.n_paths || o.help) {
		ward_config_release(cfg);
		return bad(err, "only the sandbox's options of ward run apply here (not -c, --json, "
				"--approve, --apply, --discard, --no-shell, --protect, --allow-write or "
				"a command)");
	}
	return 0;
}

/* The flags after the policy (parse them again over it). */
static int parse_flags(int argc, char **argv, struct run_options *o, struct ward_error **err)
{
	const char *net_opt = NULL, *net_rule = NULL; /* for the implied --net=proxy */
	long long t;
	int c;

	optind = 0; /* GNU: full re-initialisation, so parsing can be repeated */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:C:t:h", ward_run_long_options, NULL)) != -1) {
		const char *dst;

		switch (c) {
		case 'c':
			o->shell = optarg;
			break;
		case 'C':
			if (ward_config_set_workdir(&o->cfg, optarg, err) < 0)
				goto fail;
			break;
		case 't':
			if (ward_parse_timeout(optarg, &t, err) < 0)
				goto fail;
			o->cfg.timeout = (int)t;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_NO_SHELL:
			o->no_shell = true;
			break;
		case OPT_SHELL:
			if (strcmp(optarg, "bash") == 0) {
				o->cfg.shell_bash = true;
			} else if (strcmp(optarg, "sh") == 0) {
				o->cfg.shell_bash = false;
			} else {
				bad(err, "--shell: unknown shell '%s' (known: sh, bash)", optarg);
				goto fail;
			}
			break;
		case OPT_SETENV:
			if (ward_config_add_setenv(&o->cfg, optarg, err) < 0)
				goto fail;
			break;
		case OPT_CLEARENV:
			o->cfg.clearenv = true;
			break;
		case OPT_RO_BIND:
		case OPT_BIND:
			if (optind >= argc) {
				bad(err, "%s needs two arguments: SRC DST",
				    c == OPT_BIND ? "--bind" : "--ro-bind");
				goto fail;
			}
			dst = argv[optind++];
			if (ward_config_add_mount(&o->cfg,
						  c == OPT_BIND ? WARD_MOUNT_BIND : WARD_MOUNT_RO_BIND,
						  optarg, dst, err) < 0)
				goto fail;
			break;
		case OPT_TMPFS:
			if (ward_config_add_mount(&o->cfg, WARD_MOUNT_TMPFS, NULL, optarg, err) < 0)
				goto fail;
			break;
		case OPT_UID0:
			o->cfg.uid0 = true;
			break;
		case OPT_HOSTNAME:
			if (ward_config_set_hostname(&o->cfg, optarg, err) < 0)
				goto fail;
			break;
		case OPT_SANDBOX:
			if (strcmp(optarg, "required") == 0) {
				o->cfg.mode = WARD_SANDBOX_REQUIRED;
			} else if (strcmp(optarg, "off") == 0) {
				o->cfg.mode = WARD_SANDBOX_OFF;
			} else {
				bad(err, "unknown sandbox mode '%s' (known: required, off)", optarg);
				goto fail;
			}
			break;
		case OPT_NAMESPACES:
			if (parse_namespaces(optarg, &o->cfg.namespaces, err) < 0)
				goto fail;
			break;
		case OPT_NO_VIEW:
			o->cfg.view = false;
			break;
		case OPT_APPROVE:
			o->approve = true;
			break;
		case 'h':
			o->help = true;
			break;
		case OPT_LANDLOCK:
			if (ward_landlock_parse_mode(optarg, &o->cfg.landlock, err) < 0)
				goto fail;
			break;
		case OPT_LANDLOCK_ABI_MAX:
			if (ward_landlock_parse_abi("--landlock-abi-max", optarg,
						    &o->cfg.landlock_abi_max, err) < 0)
				goto fail;
			break;
		case OPT_LANDLOCK_MIN_ABI:
			if (ward_landlock_parse_abi("--landlock-min-abi", optarg,
						    &o->cfg.landlock_min_abi, err) < 0)
				goto fail;
			break;
		case OPT_SECCOMP:
			if (!*optarg) {
				bad(err, "--seccomp needs a profile: default, strict, off or a file");
				goto fail;
			}
			free(o->cfg.seccomp);
			o->cfg.seccomp = strdup(optarg);
			break;
		case OPT_ALLOW_PTRACE:
			o->cfg.allow_ptrace = true;
			break;
		case OPT_ALLOW_NESTED:
			o->cfg.allow_nested = true;
			break;
		case OPT_NET:
			if (ward_config_set_net(&o->cfg, optarg, err) < 0)
				goto fail;
			net_opt = optarg;
			break;
		/* the network module's messages name the rule, not the option */
		case OPT_ALLOW_HOST:
		case OPT_DENY_HOST:
			net_rule = net_rule ? net_rule
					    : c == OPT_DENY_HOST ? "--deny-host" : "--allow-host";
			if (ward_netpolicy_add_host(&o->cfg.netpolicy, c == OPT_DENY_HOST, optarg,
						    err) < 0) {
				ward_error_prefix(*err, "%s", c == OPT_DENY_HOST ? "--deny-host" :
										  "--allow-host");
				goto fail;
			}
			break;
		case OPT_ALLOW_CIDR:
			net_rule = net_rule ? net_rule : "--allow-cidr";
			if (ward_netpolicy_add_cidr(&o->cfg.netpolicy, optarg, err) < 0) {
				ward_error_prefix(*err, "--allow-cidr");
				goto fail;
			}
			break;
		case OPT_ALLOW_PORT:
			net_rule = net_rule ? net_rule : "--allow-port";
			if (ward_netpolicy_add_port(&o->cfg.netpolicy, optarg, err) < 0) {
				ward_error_prefix(*err, "--allow-port");
				goto fail;
			}
			break;
		case OPT_INJECT_HEADER:
			net_rule = net_rule ? net_rule : "--inject-header";
			if (ward_netpolicy_add_credential(&o->cfg.netpolicy, optarg, err) < 0) {
				ward_error_prefix(*err, "--inject-header");
				goto fail;
			}
			break;
		case OPT_UPSTREAM_CA:
			net_rule = net_rule ? net_rule : "--upstream-ca";
			if (ward_netpolicy_set_upstream_ca(&o->cfg.netpolicy, optarg, err) < 0)
				goto fail;
			break;
		case OPT_SECRET:
			net_rule = net_rule ? net_rule : "--secret";
			if (ward_netpolicy_add_secret(&o->cfg.netpolicy, optarg, err) < 0) {
				ward_error_prefix(*err, "--secret");
				goto fail;
			}
			break;
		case OPT_ALLOW_REQUEST:
			net_rule = net_rule ? net_rule : "--allow-request";
			if (ward_netpolicy_add_request(&o->cfg.netpolicy, optarg, err) < 0) {
				ward_error_prefix(*err, "--allow-request");
				goto fail;
			}
			break;
		case OPT_NET_LOG:
			if (!*optarg) {
				bad(err, "--net-log needs a file");
				goto fail;
			}
			free(o->cfg.net_log);
			o->cfg.net_log = strdup(optarg);
			break;
		case OPT_PROXY_PORT:
			if (ward_config_set_proxy_port(&o->cfg, optarg, err) < 0)
				goto fail;
			break;
		case OPT_NET_SUBNET:
			if (ward_config_set_net_subnet(&o->cfg, optarg, err) < 0)
				goto fail;
			break;
		case OPT_NET_TRANSPORT:
			if (ward_config_set_net_transport(&o->cfg, optarg, err) < 0)
				goto fail;
			break;
		case OPT_ALLOW_LOCAL_PORT:
			if (ward_config_add_local_port(&o->cfg, optarg, err) < 0)
				goto fail;
			break;
		case OPT_WORKDIR_MODE:
			if (ward_workdir_parse_mode(optarg, &o->cfg.workdir_mode, err) < 0)
				goto fail;
			break;
		case OPT_APPLY:
			o->apply = true;
			break;
		case OPT_CHANGES:
			free(o->cfg.continue_changes);
			o->cfg.continue_changes = strdup(optarg);
			o->cfg.workdir_mode = WARD_WORKDIR_OVERLAY;
			break;
		case OPT_DISCARD:
			o->discard = true;
			break;
		case OPT_NO_PLACEHOLDERS:
			o->cfg.no_placeholders = true;
			break;
		case OPT_WORKDIR_ROOT: {
			char real[PATH_MAX];

			/* the person's word: resolved now, from where ward started */
			if (!realpath(optarg, real)) {
				ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
						     "--workdir-root '%s'", optarg);
				goto fail;
			}
			if (ward_admit_add_root(&o->cfg.admit, real, err) < 0)
				goto fail;
			break;
		}
		case OPT_ALLOW_WORKDIR_ANYWHERE:
			o->cfg.admit.anywhere = true;
			break;
		case OPT_ALLOW_HOME_WORKDIR:
			o->cfg.admit.home = true;
			break;
		case OPT_PROTECT:
		case OPT_ALLOW_WRITE:
			/* resolved once the workdir is known (-C may come later) */
			if (o->n_paths == sizeof(o->paths) / sizeof(o->paths[0])) {
				bad(err, "too many --protect and --allow-write options");
				goto fail;
			}
			o->paths[o->n_paths].protect = c == OPT_PROTECT;
			o->paths[o->n_paths++].path = optarg;
			break;
		case OPT_POLICY:
		case OPT_NO_POLICY:
			break; /* applied first, by apply_policy() */
		case OPT_NO_CGROUP:
			o->cfg.cgroup = false;
			break;
		case OPT_LIMIT ... OPT_LIMIT_END - 1:
			if (ward_limits_set(&o->cfg.limits, (enum ward_limit)(c - OPT_LIMIT), optarg,
					    err) < 0)
				goto fail;
			break;
		case ':':
			bad(err, "option '%s' needs a value", argv[optind - 1]);
			goto fail;
		default:
			if (optopt)
				bad(err, "unknown option '-%c'", optopt);
			else
				bad(err, "unknown option '%s'", argv[optind - 1]);
			goto fail;
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->help)
		return 0;
	/* A proxy rule asks for the proxy: without one, '--allow-host x' would
	 * be accepted and the network stay off, silently. An explicit other
	 * mode is a contradiction the person must resolve, not one ward picks. */
	if (net_rule && o->cfg.net != WARD_NET_PROXY) {
		if (net_opt) {
			bad(err, "%s needs --net=proxy, not --net=%s", net_rule, net_opt);
			goto fail;
		}
		if (o->cfg.net == WARD_NET_HOST) {
			bad(err, "%s needs --net=proxy; the policy sets network.mode \"host\"",
			    net_rule);
			goto fail;
		}
		o->cfg.net = WARD_NET_PROXY;
	}
	if (o->flags_only)
		return 0;
	if (o->json && (o->shell || o->argv)) {
		bad(err, "--json takes the command from the request on stdin, not from arguments");
		goto fail;
	}
	if (o->no_shell && o->argv) {
		bad(err, "--no-shell runs a -c 'STRING'; a command after '--' runs without a shell "
			 "already");
		goto fail;
	}
	if (o->apply && o->discard) {
		bad(err, "give either --apply or --discard, not both");
		goto fail;
	}
	if (o->cfg.continue_changes && o->cfg.workdir_mode != WARD_WORKDIR_OVERLAY) {
		bad(err, "--changes needs --workdir-mode overlay");
		goto fail;
	}
	if ((o->apply || o->discard) && o->cfg.workdir_mode != WARD_WORKDIR_OVERLAY) {
		bad(err, "%s needs --workdir-mode overlay", o->apply ? "--apply" : "--discard");
		goto fail;
	}
	if (!o->json && ward_run_options_protect(o, err) < 0)
		goto fail;
	if (o->shell && o->argv) {
		bad(err, "give either -c 'STRING' or a command after '--', not both");
		goto fail;
	}
	if (!o->json && !o->shell && !o->argv) {
		bad(err, "no command: give -c 'STRING', a command after '--', or --json");
		goto fail;
	}
	if (o->shell && !o->shell[strspn(o->shell, " \t\n")]) {
		bad(err, "-c: the command is empty");
		goto fail;
	}
	if (o->argv && !o->argv[0][0]) {
		bad(err, "the command after '--' is empty");
		goto fail;
	}
	if ((o->cfg.namespaces & ~WARD_NS_USER) && !(o->cfg.namespaces & WARD_NS_USER) &&
	    geteuid() != 0) {
		bad(err, "namespaces other than user need the user namespace when not root");
		goto fail;
	}
	if (o->cfg.view && !(o->cfg.namespaces & WARD_NS_MOUNT))
		o->cfg.view = false; /* no mount namespace, no view: measurement setups */
	return 0;
fail:
	ward_run_options_release(o);
	return -1;
}

static char *read_all(int fd, size_t max, size_t *len, struct ward_error **err)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);

	if (!buf) {
		ward_error_make(err, ENOMEM, "read request");
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *g;

			if (cap > max) {
				free(buf);
				ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						     "request is larger than %zu bytes", max);
				return NULL;
			}
			g = realloc(buf, cap * 2 + 1);
			if (!g) {
				free(buf);
				ward_error_make(err, ENOMEM, "read request");
				return NULL;
			}
			buf = g;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			ward_error_make(err, errno, "read request from stdin");
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int print_json_error(const struct ward_error *e)
{
	char *s = ward_error_to_result_json(e);

	if (s) {
		printf("%s\n", s);
		free(s);
	}
	return WARD_EXIT_OWN_ERROR;
}

/* The request's workdir: resolved once, then that path admitted (what
 * ward_run() binds is the path admitted); the person's -C is a root. */
static int admit_request(struct run_options *o, const char *workdir, struct ward_error **err)
{
	_cleanup_free_ char *person = o->cfg.workdir ? strdup(o->cfg.workdir) : NULL;

	if (o->cfg.workdir && !person)
		return ward_error_make(err, ENOMEM, "workdir");
	if (ward_config_set_workdir(&o->cfg, workdir, err) < 0)
		return -1;
	return ward_admit_request(&o->cfg.admit, o->cfg.workdir, person, err);
}

static int run_json(struct run_options *o)
{
	struct ward_error *err = NULL;
	struct ward_request req;
	struct ward_result res;
	char *text, *out, *argv[4] = { (char *)"/bin/sh", (char *)"-c", NULL, NULL };
	size_t len;
	int status;

	text = read_all(0, WARD_REQUEST_MAX, &len, &err);
	if (!text || ward_request_parse(text, len, &req, &err) < 0) {
		free(text);
		status = print_json_error(err);
		ward_error_free(err);
		return status;
	}
	free(text);
	/* The request is the agent's word: its workdir must lie under a root
	 * (the person's -C counts as one). */
	if ((req.workdir && admit_request(o, req.workdir, &err) < 0) ||
	    (req.timeout && ward_config_set_timeout(&o->cfg, req.timeout, &err) < 0)) {
		ward_request_release(&req);
		status = print_json_error(err);
		ward_error_free(err);
		return status;
	}
	if (req.bash)
		o->cfg.shell_bash = true;
	if (ward_run_options_protect(o, &err) < 0 ||
	    ward_cli_front_door(&o->cfg, req.command, NULL, req.approved || o->approve, false,
				&err) < 0) {
		ward_request_release(&req);
		status = print_json_error(err);
		ward_error_free(err);
		return status;
	}
	argv[2] = req.command;
	if (o->cfg.shell_bash)
		argv[0] = (char *)"/bin/bash";
	o->cfg.forward_signals = true;
	if ((o->no_shell || req.no_shell ? ward_run_noshell(&o->cfg, req.command, &res, &err)
					 : ward_run(&o->cfg, argv, &res, &err)) < 0) {
		ward_request_release(&req);
		status = print_json_error(err);
		ward_error_free(err);
		return status;
	}
	if (ward_settle_changes(o, &res, &err) < 0) {
		/* the change set is kept; the result says why it was not applied */
		if (!res.error) {
			res.error = err;
			err = NULL;
		}
		ward_error_free(err);
		err = NULL;
	}
	out = ward_result_to_json(&res);
	if (out)
		printf("%s\n", out);
	fflush(stdout);
	free(out);
	status = ward_result_exit_status(&res);
	ward_result_release(&res);
	ward_request_release(&req);
	return status;
}

static int run_streaming(struct run_options *o)
{
	struct ward_error *err = NULL;
	struct ward_result res;
	char *shell_argv[4] = { (char *)"/bin/sh", (char *)"-c", o->shell, NULL };
	int status;

	if (o->cfg.shell_bash)
		shell_argv[0] = (char *)"/bin/bash";

	if (ward_cli_front_door(&o->cfg, o->shell, o->shell ? NULL : o->argv, o->approve, true,
				&err) < 0) {
		fprintf(stderr, "ward: %s\n", ward_shown(err->message));
		ward_error_free(err);
		return WARD_EXIT_OWN_ERROR;
	}
	o->cfg.stdin_fd = 0;
	o->cfg.stdout_fd = 1;
	o->cfg.stderr_fd = 2;
	o->cfg.forward_signals = true;
	fflush(stdout);
	if ((o->no_shell ? ward_run_noshell(&o->cfg, o->shell, &res, &err)
			 : ward_run(&o->cfg, o->shell ? shell_argv : o->argv, &res, &err)) < 0) {
		fprintf(stderr, "ward: %s\n", ward_shown(err->message));
		ward_error_free(err);
		return WARD_EXIT_OWN_ERROR;
	}
	if (res.error)
		fprintf(stderr, "ward: %s\n", ward_shown(res.error->message));
	status = ward_result_exit_status(&res);
	if (ward_settle_changes(o, &res, &err) < 0) {
		fprintf(stderr, "ward: %s\n", ward_shown(err->message));
		ward_error_free(err);
		err = NULL;
		if (status == 0)
			status = WARD_EXIT_OWN_ERROR;
	}
	ward_print_changes_summary(stderr, &res);
	ward_result_release(&res);
	return status;
}

int ward_cmd_run(int argc, char **argv)
{
	struct ward_error *err = NULL;
	struct run_options o;
	int status;

	if (ward_run_options_parse(argc, argv, &o, &err) < 0) {
		fprintf(stderr, "ward run: %s\n", ward_shown(err->message));
		if (err->kind == WARD_ERR_INVALID_PARAMETERS)
			fprintf(stderr, "try 'ward run --help'\n");
		ward_error_free(err);
		return WARD_EXIT_OWN_ERROR;
	}
	if (o.help) {
		fputs(usage, stdout);
		ward_run_options_release(&o);
		return 0;
	}
	status = o.json ? run_json(&o) : run_streaming(&o);
	ward_run_options_release(&o);
	return status;
}
