/* cmd-changes.c — overlay mode on the command line: what `ward run` does with
 * a change set (--apply, --discard, else keep), and `ward changes`,
 * `ward diff NAME`, `ward apply NAME`, `ward discard NAME`. */
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
#include "ward/workdir.h"

/* PATH relative to the workdir: a relative PATH as it is, an absolute one
 * must lie inside the workdir (compared as text: it may not exist yet). */
static int relative_to(const char *workdir, const char *path, char *out, size_t size,
		       struct ward_error **err)
{
	size_t n = strlen(workdir);

	if (path[0] != '/') {
		snprintf(out, size, "%s", path);
		return 0;
	}
	if (strncmp(path, workdir, n) != 0 || path[n] != '/' || !path[n + 1])
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "path '%s' is not inside the workdir '%s'", path,
					    workdir);
	snprintf(out, size, "%s", path + n + 1);
	return 0;
}

int ward_run_options_protect(struct run_options *o, struct ward_error **err)
{
	char cwd[PATH_MAX], rel[PATH_MAX];
	const char *wd = o->cfg.workdir;
	struct ward_protect *pr;

	if (!o->n_paths)
		return 0;
	if (!wd) {
		if (!getcwd(cwd, sizeof(cwd)))
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
						    "current directory");
		wd = cwd;
	}
	pr = ward_config_protect(&o->cfg, err);
	if (!pr)
		return -1;
	for (size_t i = 0; i < o->n_paths; i++) {
		if (relative_to(wd, o->paths[i].path, rel, sizeof(rel), err) < 0)
			return -1;
		if ((o->paths[i].protect ? ward_protect_add(pr, rel, err) :
					   ward_protect_allow(pr, rel, err)) < 0)
			return -1;
	}
	o->n_paths = 0;
	return 0;
}

int ward_settle_changes(const struct run_options *o, struct ward_result *res,
			struct ward_error **err)
{
	struct ward_workdir_report *w = res->workdir;
	struct ward_changeset *cs = w ? w->changes : NULL;

	if (!cs || ward_changeset_settled(cs))
		return 0;
	if (o->discard) {
		ward_changeset_discard(cs);
		snprintf(w->change_action, sizeof(w->change_action), "discarded");
		return 0;
	}
	if (o->apply && res->exit_code == 0 && !res->error) {
		if (ward_changeset_apply(cs, o->cfg.protect, err) == 0) {
			snprintf(w->change_action, sizeof(w->change_action), "applied");
			return 0;
		}
		/* refused or failed: keep it, so that nothing is lost */
		if (ward_changeset_keep(cs, w->change_name, sizeof(w->change_name), NULL) == 0)
			snprintf(w->change_action, sizeof(w->change_action), "kept");
		return -1;
	}
	if (ward_changeset_keep(cs, w->change_name, sizeof(w->change_name), err) < 0)
		return -1;
	snprintf(w->change_action, sizeof(w->change_action), "kept");
	return 0;
}

/* One line per entry a person should look at: what apply strips (or has
 * stripped), links that lead out of the workdir. */
static void print_warnings(FILE *f, const struct ward_changeset *cs, bool applied)
{
	for (size_t i = 0; i < ward_changeset_count(cs); i++) {
		const struct ward_change *c = ward_changeset_get(cs, i);
		const char *p = ward_shown(c->path[0] ? c->path : ".");

		if (c->warn & WARD_CHANGE_WARN_SETID)
			fprintf(f, "ward: warning: '%s': set-uid/set-gid bits %s\n", p,
				applied ? "were not applied" : "are not applied");
		if (c->warn & WARD_CHANGE_WARN_CAPS)
			fprintf(f, "ward: warning: '%s': file capabilities %s\n", p,
				applied ? "were not applied" : "are not applied");
		if (c->warn & WARD_CHANGE_WARN_LINK_OUT)
			fprintf(f, "ward: warning: '%s': symbolic link leads outside the workdir "
				   "('%s')\n",
				p, ward_shown(c->target ? c->target : ""));
	}
}

void ward_print_changes_summary(FILE *f, const struct ward_result *res)
{
	const struct ward_workdir_report *w = res->workdir;
	size_t n, k = 0;

	/* direct mode: what a git directory's overlay held that was dropped */
	for (size_t i = 0; w && i < w->n_violations; i++) {
		if (strcmp(w->violations[i].seen, "git-metadata") != 0)
			continue;
		if (k++ == 0)
			fprintf(f, "ward: not merged back into the git directory (not what ordinary "
				   "git work writes):");
		if (k <= 10)
			fprintf(f, " '%s'", ward_shown(w->violations[i].path));
	}
	if (k > 10)
		fprintf(f, " and %zu more", k - 10);
	if (k)
		fputc('\n', f);
	if (!w || !w->changes)
		return;
	n = ward_changeset_count(w->changes);
	if (strcmp(w->change_action, "kept") == 0)
		fprintf(f, "ward: %zu change%s kept as %s ('ward diff %s', 'ward apply %s', "
			   "'ward discard %s')\n",
			n, n == 1 ? "" : "s", w->change_name, w->change_name, w->change_name,
			w->change_name);
	else if (w->change_action[0])
		fprintf(f, "ward: %zu change%s %s\n", n, n == 1 ? "" : "s", w->change_action);
	print_warnings(f, w->changes, strcmp(w->change_action, "applied") == 0);
}

/* ---- ward changes / diff / apply / discard ------------------------------------------ */

static const char *const kind_names[] = {
	[WARD_CHANGE_ADDED] = "added",	     [WARD_CHANGE_MODIFIED] = "modified",
	[WARD_CHANGE_DELETED] = "deleted",   [WARD_CHANGE_MODE] = "mode",
	[WARD_CHANGE_REPLACED] = "replaced",
};

static const char changes_usage[] =
	"usage: ward changes | ward diff NAME | ward apply NAME "
	"[--protect PATH] [--allow-write PATH] [--force] | ward discard NAME\n";

static int usage_error(const char *cmd, const char *msg)
{
	fprintf(stderr, "ward %s: %s\n", cmd, ward_shown(msg));
	fputs(changes_usage, stderr);
	return WARD_EXIT_OWN_ERROR;
}

/* '--help' anywhere asks for the usage, which is an answer, not an error:
 * exit 0 like every other subcommand. No change-set name starts with '-'. */
static bool asks_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}

static int help(const char *what)
{
	printf("%s\n%s", what, changes_usage);
	return 0;
}

static int fail(const char *cmd, struct ward_error *err)
{
	fprintf(stderr, "ward %s: %s\n", cmd, err ? ward_shown(err->message) : "failed");
	ward_error_free(err);
	return WARD_EXIT_OWN_ERROR;
}

int ward_cmd_changes(int argc, char **argv)
{
	struct ward_error *err = NULL;
	char **names;

	if (asks_help(argc, argv))
		return help("ward changes: list the kept change sets");
	if (argc > 1)
		return usage_error("changes", "takes no arguments");
	names = ward_changeset_list(NULL, &err);
	if (!names)
		return fail("changes", err);
	for (size_t i = 0; names[i]; i++) {
		struct ward_changeset *cs = ward_changeset_open(NULL, names[i], NULL);

		if (cs)
			printf("%s\t%zu change%s\t%s\n", ward_shown(names[i]),
			       ward_changeset_count(cs), ward_changeset_count(cs) == 1 ? "" : "s",
			       ward_shown(ward_changeset_workdir(cs)));
		else
			printf("%s\t(unreadable)\n", ward_shown(names[i]));
		ward_changeset_free(cs);
	}
	ward_protect_strv_free(names);
	return 0;
}

static struct ward_changeset *open_named(const char *cmd, int argc, char **argv)
{
	struct ward_error *err = NULL;
	struct ward_changeset *cs;

	if (argc < 2 || argv[1][0] == '-') {
		usage_error(cmd, "give the name of a kept change set ('ward changes' lists them)");
		return NULL;
	}
	cs = ward_changeset_open(NULL, argv[1], &err);
	if (!cs)
		fail(cmd, err);
	return cs;
}

int ward_cmd_diff(int argc, char **argv)
{
	struct ward_error *err = NULL;
	struct ward_changeset *cs;

	if (asks_help(argc, argv))
		return help("ward diff: show a kept change set as a unified diff");
	if (argc > 2)
		return usage_error("diff", "takes one name");
	cs = open_named("diff", argc, argv);
	if (!cs)
		return WARD_EXIT_OWN_ERROR;
	for (size_t i = 0; i < ward_changeset_count(cs); i++) {
		const struct ward_change *c = ward_changeset_get(cs, i);

		printf("# %s %s\n", kind_names[c->kind], ward_shown(c->path[0] ? c->path : "."));
	}
	fflush(stdout);
	/* for the person who reviews it: nothing the command wrote reaches
	 * the terminal as a control sequence */
	if (ward_changeset_diff_escaped(cs, 1, &err) < 0) {
		ward_changeset_free(cs);
		return fail("diff", err);
	}
	ward_changeset_free(cs);
	return 0;
}

int ward_cmd_apply(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "protect", required_argument, NULL, 'p' },
		{ "allow-write", required_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct ward_error *err = NULL;
	struct ward_changeset *cs;
	struct ward_protect *pr = NULL;
	struct ward_config cfg;
	char *policy;
	int c, rc = 0;

	if (asks_help(argc, argv))
		return help("ward apply: copy a kept change set into its workdir");
	cs = open_named("apply", argc, argv);
	if (!cs)
		return WARD_EXIT_OWN_ERROR;
	/* the policy's protected paths, then the options */
	ward_config_init(&cfg);
	policy = ward_policy_default_path();
	if (policy && ward_policy_load(policy, &cfg, &err) < 0)
		rc = -1;
	free(policy);
	if (rc == 0 && !(pr = ward_config_protect(&cfg, &err)))
		rc = -1;
	optind = 2;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char rel[PATH_MAX];

		if (c == 'f') {
			ward_changeset_set_force(cs, true);
			continue;
		}
		if (c != 'p' && c != 'a') {
			char msg[PATH_MAX];

			/* getopt has already moved past the unknown option */
			snprintf(msg, sizeof(msg), "unknown option '%s'", argv[optind - 1]);
			ward_changeset_free(cs);
			ward_config_release(&cfg);
			return usage_error("apply", msg);
		}
		if (relative_to(ward_changeset_workdir(cs), optarg, rel, sizeof(rel), &err) < 0 ||
		    (c == 'p' ? ward_protect_add(pr, rel, &err) : ward_protect_allow(pr, rel, &err)) <
			    0)
			rc = -1;
	}
	if (rc == 0 && optind < argc) {
		ward_changeset_free(cs);
		ward_config_release(&cfg);
		return usage_error("apply", "takes one name");
	}
	if (rc == 0)
		rc = ward_changeset_apply(cs, pr, &err);
	if (rc == 0) {
		printf("applied %zu change%s to %s\n", ward_changeset_count(cs),
		       ward_changeset_count(cs) == 1 ? "" : "s",
		       ward_shown(ward_changeset_workdir(cs)));
		fflush(stdout);
		print_warnings(stderr, cs, true);
	}
	ward_changeset_free(cs);
	ward_config_release(&cfg);
	return rc < 0 ? fail("apply", err) : 0;
}

int ward_cmd_discard(int argc, char **argv)
{
	struct ward_changeset *cs;

	if (asks_help(argc, argv))
		return help("ward discard: drop a kept change set");
	if (argc > 2)
		return usage_error("discard", "takes one name");
	cs = open_named("discard", argc, argv);
	if (!cs)
		return WARD_EXIT_OWN_ERROR;
	if (ward_changeset_busy(cs)) {
		fprintf(stderr, "ward discard: change set '%s' is in use by another run\n",
			ward_shown(argv[1]));
		ward_changeset_free(cs);
		return WARD_EXIT_OWN_ERROR;
	}
	ward_changeset_discard(cs);
	ward_changeset_free(cs);
	return 0;
}
