/* cmd-validate.c — `ward validate`: the parser, the validators and the
 * approval check, without running anything. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cli/cli-internal.h"
#include "ward/policy.h"
#include "ward/request.h"
#include "ward/validate.h"

static const char usage[] =
	"usage: ward validate [options] -c 'STRING'\n"
	"       ward validate [options] -- CMD [ARGS...]\n"
	"       ward validate --json [options] < request.json\n"
	"\n"
	"Parse the command and check it against the validators and the approval\n"
	"list, as `ward run` would, without running it.\n"
	"\n"
	"  -c, --command STRING  the shell string to check\n"
	"      --shell sh|bash   the shell that would run it (default sh, or the policy's)\n"
	"      --workdir-mode MODE  direct or overlay (default: the policy's): in overlay\n"
	"                        mode rm -rf inside the workdir needs no approval\n"
	"      --json            read a request object ({\"command\": ...}) on stdin and\n"
	"                        print the verdict as JSON\n"
	"      --policy FILE     the policy file (default: as for ward run)\n"
	"      --no-policy       the built-in rules only\n"
	"      --rules           list the rules in force and exit\n"
	"  -h, --help            this text\n"
	"\n"
	"Exit status: 0 allowed, 1 refused (by a rule, or the string cannot be\n"
	"parsed), 2 needs approval, 125 a mistake in the options or the policy.\n";

enum { OPT_JSON = 256, OPT_POLICY, OPT_NO_POLICY, OPT_RULES, OPT_SHELL, OPT_WORKDIR_MODE };

static const struct option options[] = {
	{ "command", required_argument, NULL, 'c' }, { "json", no_argument, NULL, OPT_JSON },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "no-policy", no_argument, NULL, OPT_NO_POLICY },
	{ "rules", no_argument, NULL, OPT_RULES },   { "help", no_argument, NULL, 'h' },
	{ "shell", required_argument, NULL, OPT_SHELL },
	{ "workdir-mode", required_argument, NULL, OPT_WORKDIR_MODE },
	{ NULL, 0, NULL, 0 },
};

static int exit_for(enum ward_verdict_kind k)
{
	return k == WARD_VERDICT_ALLOWED ? 0 : k == WARD_VERDICT_REFUSED ? 1 : 2;
}

static void print_text(const struct ward_verdict *v)
{
	size_t i;

	printf("verdict: %s\n", ward_verdict_kind_name(v->kind));
	if (v->kind != WARD_VERDICT_ALLOWED) {
		printf("rule: %s (%s)\n", ward_shown(v->rule), ward_shown(v->category));
		printf("why: %s\n", ward_shown(v->words));
		printf("segment: '%s' at %zu\n", ward_shown(v->segment), v->offset);
		if (v->matched && *v->matched)
			printf("matched: '%s'\n", ward_shown(v->matched));
	}
	printf("segments:\n");
	for (i = 0; i < v->n_segments; i++)
		printf("  %zu+%zu%*s %s\n", v->segments[i].offset, v->segments[i].length,
		       2 * v->segments[i].depth + 1, "", ward_shown(v->segments[i].argv));
}

static char *read_stdin(size_t max, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1), *g;
	ssize_t r;

	while (buf) {
		if (n == cap) {
			if (cap > max || !(g = realloc(buf, cap * 2 + 1))) {
				free(buf);
				return NULL;
			}
			buf = g;
			cap *= 2;
		}
		r = read(0, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static void print_json_failure(const struct ward_error *e)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "verdict", json_string("refused"));
	json_object_set_new(o, "rule", json_null());
	json_object_set_new(o, "error", json_pack("{s:s, s:s}", "kind", ward_error_kind_name(e->kind),
						  "message", e->message));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(o);
}

int ward_cmd_validate(int argc, char **argv)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;
	struct ward_verdict v;
	struct ward_request req = { 0 };
	const char *command = NULL, *policy = NULL, *shell = NULL, *mode = NULL;
	bool json = false, no_policy = false, list = false;
	char *path = NULL;
	int c, rc, status = WARD_EXIT_OWN_ERROR;

	ward_config_init(&cfg);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:h", options, NULL)) != -1) {
		switch (c) {
		case 'c':
			command = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_POLICY:
			policy = optarg;
			break;
		case OPT_NO_POLICY:
			no_policy = true;
			break;
		case OPT_RULES:
			list = true;
			break;
		case OPT_SHELL:
			if (strcmp(optarg, "sh") != 0 && strcmp(optarg, "bash") != 0) {
				fprintf(stderr, "ward validate: --shell: unknown shell '%s' (known: sh, bash)\n",
					ward_shown(optarg));
				return WARD_EXIT_OWN_ERROR;
			}
			shell = optarg;
			break;
		case OPT_WORKDIR_MODE:
			if (strcmp(optarg, "direct") != 0 && strcmp(optarg, "overlay") != 0) {
				fprintf(stderr, "ward validate: --workdir-mode: unknown mode '%s' (known: "
						"direct, overlay)\n", ward_shown(optarg));
				return WARD_EXIT_OWN_ERROR;
			}
			mode = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			fprintf(stderr, "ward validate: option '%s' needs a value\n",
				ward_shown(argv[optind - 1]));
			return WARD_EXIT_OWN_ERROR;
		default:
			fprintf(stderr, "ward validate: unknown option '%s'\ntry 'ward validate --help'\n",
				ward_shown(argv[optind - 1]));
			return WARD_EXIT_OWN_ERROR;
		}
	}
	if (policy && no_policy) {
		fprintf(stderr, "ward validate: give either --policy or --no-policy, not both\n");
		return WARD_EXIT_OWN_ERROR;
	}
	if (!no_policy && !policy)
		policy = path = ward_policy_default_path();
	if (policy && ward_policy_load(policy, &cfg, &err) < 0) {
		fprintf(stderr, "ward validate: %s\n", ward_shown(err->message));
		goto out;
	}
	if (list) {
		size_t i, n = ward_rules_count(cfg.rules);

		for (i = 0; i < n; i++)
			printf("%-34s %-9s %s%s\n", ward_shown(ward_rules_id(cfg.rules, i)),
			       ward_shown(ward_rules_category(cfg.rules, i)),
			       ward_shown(ward_rules_words(cfg.rules, i)),
			       ward_rules_refuses(cfg.rules, i) ||
					       strcmp(ward_rules_category(cfg.rules, i), "approval") == 0 ?
				       "" :
				       " [relaxed: needs approval]");
		status = 0;
		goto out;
	}
	if (!!command + !!json + (optind < argc) != 1) {
		fprintf(stderr, "ward validate: give one of -c 'STRING', --json, or a command after "
				"'--'\ntry 'ward validate --help'\n");
		goto out;
	}
	/* as ward run says it: an empty string is no command to judge */
	if (command && !command[strspn(command, " \t\n")]) {
		fprintf(stderr, "ward validate: -c: the command is empty\ntry 'ward validate --help'\n");
		goto out;
	}
	if (json) {
		size_t len = 0;
		char *text = read_stdin(WARD_REQUEST_MAX, &len);

		if (!text) {
			fprintf(stderr, "ward validate: cannot read the request on stdin\n");
			goto out;
		}
		rc = ward_request_parse(text, len, &req, &err);
		free(text);
		if (rc < 0) {
			print_json_failure(err);
			goto out; /* a malformed request: ward's own error */
		}
		command = req.command;
		if (req.bash)
			cfg.shell_bash = true;
	}
	if (shell)
		cfg.shell_bash = strcmp(shell, "bash") == 0;
	if (mode)
		cfg.workdir_mode = strcmp(mode, "overlay") == 0 ? WARD_WORKDIR_OVERLAY : WARD_WORKDIR_DIRECT;
	rc = command ? ward_validate_shell(cfg.rules, command,
					   (cfg.shell_bash ? WARD_SHELL_BASH : WARD_SHELL_SH) |
						   (cfg.workdir_mode == WARD_WORKDIR_OVERLAY ?
							    WARD_VALIDATE_OVERLAY : 0),
					   &v, &err) :
		       ward_validate_argv(cfg.rules, argv + optind, &v, &err);
	if (rc < 0) {
		if (json)
			print_json_failure(err);
		else
			fprintf(stderr, "ward validate: %s\n", ward_shown(err->message));
		status = err->kind == WARD_ERR_INVALID_PARAMETERS ? 1 : WARD_EXIT_OWN_ERROR;
		goto out;
	}
	if (json) {
		char *s = ward_verdict_to_json(&v);

		if (s)
			printf("%s\n", s);
		free(s);
	} else {
		print_text(&v);
	}
	status = exit_for(v.kind);
	ward_verdict_release(&v);
out:
	fflush(stdout);
	ward_error_free(err);
	ward_request_release(&req);
	ward_config_release(&cfg);
	free(path);
	return status;
}
