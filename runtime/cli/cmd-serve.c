/* cmd-serve.c — `ward serve`: its options, then the server (rpc.c) with the
 * sessions' methods and the MCP tools (mcp.c). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cli/cli-internal.h"
#include "runtime/cli/serve-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/env.h"
#include "ward/policy.h"
#include "ward/session.h"
#include "ward/workdir.h"

/* ---- the command line ------------------------------------------------------------- */

static const char usage[] =
	"usage: ward serve [options]\n"
	"\n"
	"JSON-RPC 2.0 on stdin/stdout, one message per line; also a Model Context\n"
	"Protocol server (initialize, tools/list, tools/call).\n"
	"\n"
	"  -C, --workdir DIR      default workdir of new sessions (default: current directory)\n"
	"      --workdir-root DIR a directory under which session.create may name a\n"
	"                         workdir (repeatable; default: the current directory)\n"
	"      --allow-workdir-anywhere  let a workdir be a system directory, another\n"
	"                         user's home or above a home\n"
	"      --allow-home-workdir  let a workdir be a home directory itself\n"
	"  -t, --timeout SECONDS  default command timeout of new sessions (default 30)\n"
	"      --isolation MODE   fresh (a sandbox per command) or shared (one per session)\n"
	"      --shell SHELL      sh or bash: the shell sessions run and the validators\n"
	"                         read (default: bash where installed)\n"
	"      --empty-env        sessions start with no variables\n"
	"      --sandbox MODE     required (default) or off\n"
	"      --policy FILE      the policy file (default: as for ward run)\n"
	"      --no-policy        built-in defaults only\n"
	"  -h, --help             this text\n"
	"\n"
	"and the sandbox options of ward run, which win over the policy file (see\n"
	"ward run --help: the network, limits, mounts, workdir mode, fences...).\n"
	"Here --timeout is the sessions' default per command.\n";

/* ward run's option numbers, offset past serve's own */
#define RUN_OPT 1000

void serve_options_release(struct serve_options *o)
{
	size_t i;

	for (i = 0; i < o->run_argc; i++)
		free(o->run_argv[i]);
	free(o->policy_owned);
	o->policy_owned = NULL;
	o->run_argc = 0;
}

int serve_config(const struct serve_options *o, struct ward_config *cfg, struct ward_error **err)
{
	const char *cap = getenv("WARD_LANDLOCK_ABI_MAX");

	if (o->policy && ward_policy_load(o->policy, cfg, err) < 0)
		return -1;
	if (cap && *cap &&
	    ward_landlock_parse_abi("WARD_LANDLOCK_ABI_MAX", cap, &cfg->landlock_abi_max, err) < 0)
		return -1;
	/* ward run's sandbox flags over the policy file: a flag wins */
	if (o->run_argc > 1 && ward_run_flags_apply((int)o->run_argc, (char **)o->run_argv, cfg, err) < 0)
		return -1;
	if (o->sandbox_off)
		cfg->mode = WARD_SANDBOX_OFF;
	cfg->admit.anywhere = o->allow_anywhere;
	cfg->admit.home = o->allow_home;
	for (size_t i = 0; i < o->n_roots; i++) {
		char real[PATH_MAX];

		if (!realpath(o->roots[i], real))
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
						    "--workdir-root '%s'", o->roots[i]);
		if (ward_admit_add_root(&cfg->admit, real, err) < 0)
			return -1;
	}
	if (o->workdir && ward_config_set_workdir(cfg, o->workdir, err) < 0)
		return -1;
	return 0;
}

void serve_session_defaults(const struct serve_options *o, struct ward_session_options *opt)
{
	if (o->timeout)
		opt->timeout = o->timeout;
	if (o->isolation_set)
		opt->isolation = o->isolation;
	if (o->empty_env)
		opt->empty_env = true;
	if (o->shell != WARD_SESSION_SHELL_DEFAULT)
		opt->shell = o->shell;
}

int serve_options_parse(int argc, char **argv, struct serve_options *o, bool *help,
			struct ward_error **err)
{
	static const struct option own[] = {
		{ "workdir", required_argument, NULL, 'C' },
		{ "timeout", required_argument, NULL, 't' },
		{ "isolation", required_argument, NULL, 'i' },
		{ "shell", required_argument, NULL, 'S' },
		{ "empty-env", no_argument, NULL, 'e' },
		{ "sandbox", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "no-policy", no_argument, NULL, 'n' },
		{ "workdir-root", required_argument, NULL, 'R' },
		{ "allow-workdir-anywhere", no_argument, NULL, 'A' },
		{ "allow-home-workdir", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
	};
	/* then ward run's sandbox options, as `ward run` parses them */
	struct option opts[sizeof(own) / sizeof(own[0]) + 96];
	size_t n = 0, i, k;
	bool no_policy = false;
	long long t;
	int c;

	memset(o, 0, sizeof(*o));
	*help = false;
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		opts[n++] = own[i];
	for (k = 0; ward_run_long_options[k].name && n + 1 < sizeof(opts) / sizeof(opts[0]); k++) {
		bool dup = false;

		for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
			dup = dup || strcmp(own[i].name, ward_run_long_options[k].name) == 0;
		if (dup)
			continue;
		opts[n] = ward_run_long_options[k];
		opts[n].flag = NULL;
		opts[n++].val = RUN_OPT + (int)k;
	}
	memset(&opts[n], 0, sizeof(opts[n]));
	o->run_argv[o->run_argc++] = strdup("serve");
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:C:t:h", opts, NULL)) != -1) {
		if (c >= RUN_OPT) {
			const struct option *ro = &ward_run_long_options[c - RUN_OPT];
			bool two = strcmp(ro->name, "bind") == 0 || strcmp(ro->name, "ro-bind") == 0;
			char *a = NULL;

			if (o->run_argc + 3 > sizeof(o->run_argv) / sizeof(o->run_argv[0]))
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "too many sandbox options");
			if ((ro->has_arg == no_argument ? asprintf(&a, "--%s", ro->name) :
							  asprintf(&a, "--%s=%s", ro->name, optarg)) < 0)
				return ward_error_make(err, ENOMEM, "options");
			o->run_argv[o->run_argc++] = a;
			if (two && optind < argc)
				o->run_argv[o->run_argc++] = strdup(argv[optind++]);
			continue;
		}
		switch (c) {
		case 'C':
			o->workdir = optarg;
			break;
		case 't':
			if (ward_parse_timeout(optarg, &t, err) < 0)
				return -1;
			o->timeout = (int)t;
			break;
		case 'i':
			if (strcmp(optarg, "fresh") && strcmp(optarg, "shared"))
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "unknown isolation '%s' (known: fresh, "
							    "shared)", optarg);
			o->isolation = strcmp(optarg, "shared") == 0 ? WARD_SESSION_SHARED :
								       WARD_SESSION_FRESH;
			o->isolation_set = true;
			break;
		case 'S':
			if (strcmp(optarg, "sh") && strcmp(optarg, "bash"))
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "--shell: unknown shell '%s' (known: sh, bash)",
							    optarg);
			o->shell = strcmp(optarg, "bash") == 0 ? WARD_SESSION_SHELL_BASH :
								 WARD_SESSION_SHELL_SH;
			break;
		case 'e':
			o->empty_env = true;
			break;
		case 's':
			if (strcmp(optarg, "required") && strcmp(optarg, "off"))
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "unknown sandbox mode '%s' (known: "
							    "required, off)", optarg);
			o->sandbox_off = strcmp(optarg, "off") == 0;
			break;
		case 'p':
			o->policy = optarg;
			break;
		case 'n':
			no_policy = true;
			break;
		case 'R':
			if (o->n_roots == sizeof(o->roots) / sizeof(o->roots[0]))
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "too many --workdir-root options");
			o->roots[o->n_roots++] = optarg;
			break;
		case 'A':
			o->allow_anywhere = true;
			break;
		case 'H':
			o->allow_home = true;
			break;
		case 'h':
			*help = true;
			break;
		case ':':
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "option '%s' needs a value", argv[optind - 1]);
		default:
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "unexpected argument '%s'", argv[optind]);
	if (no_policy && o->policy)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "give either --policy or --no-policy, not both");
	if (!no_policy && !o->policy) {
		o->policy_owned = ward_policy_default_path();
		o->policy = o->policy_owned;
	}
	return 0;
}

int ward_cmd_serve(int argc, char **argv)
{
	struct serve_options o;
	struct ward_error *err = NULL;
	struct ward_config probe;
	bool help;
	int rc;

	if (serve_options_parse(argc, argv, &o, &help, &err) < 0) {
		fprintf(stderr, "ward serve: %s\ntry 'ward serve --help'\n", ward_shown(err->message));
		ward_error_free(err);
		return WARD_EXIT_OWN_ERROR;
	}
	if (help) {
		fputs(usage, stdout);
		serve_options_release(&o);
		return 0;
	}
	/* A bad policy or workdir is said now, once, rather than per session. */
	ward_config_init(&probe);
	if (serve_config(&o, &probe, &err) < 0) {
		fprintf(stderr, "ward serve: %s\n", ward_shown(err->message));
		ward_error_free(err);
		ward_config_release(&probe);
		serve_options_release(&o);
		return WARD_EXIT_OWN_ERROR;
	}
	ward_config_release(&probe);
	rc = ward_serve_loop(&o, 0, 1);
	serve_options_release(&o);
	return rc;
}
