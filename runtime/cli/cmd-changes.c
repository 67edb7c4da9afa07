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

static size_t links_out(const struct ward_changeset *cs, FILE *f);

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
		size_t out = links_out(cs, NULL);

		/* as ward apply: a link leading out of the workdir is applied only
		 * when asked for, after a look (ward apply NAME --allow-outside-links) */
		if (out > 0) {
			if (ward_changeset_keep(cs, w->change_name, sizeof(w->change_name), err) < 0)
				return -1;
			snprintf(w->change_action, sizeof(w->change_action), "kept");
			ward_error_make_kind(err, WARD_ERR_EXECUTION_FAILED, 0,
					     "not applied: %zu symbolic link%s lead%s outside the "
					     "workdir ('ward diff %s', then 'ward apply %s "
					     "--allow-outside-links')",
					     out, out == 1 ? "" : "s", out == 1 ? "s" : "",
					     w->change_name, w->change_name);
			if (err && *err)
				ward_error_set_rule(*err, "symlink-outside-workdir");
			return -1;
		}
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
	for (size_t i = 0; w && i < w->n_violations; i++)
		if (strcmp(w->violations[i].seen, "git-gitlink") == 0)
			fprintf(f, "ward: the git index was not merged back: it makes '%s' a "
				   "submodule, which the host's git would enter\n",
				ward_shown(w->violations[i].path));
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
	"usage: ward changes [--all] [-C DIR]\n"
	"       ward diff NAME\n"
	"       ward apply NAME [-C DIR] [--protect PATH] [--allow-write PATH] [--force]\n"
	"                  [--allow-outside-links]\n"
	"       ward discard NAME [-C DIR]\n";

/* Each command's --help: its usage line and its own options only. */
static const struct {
	const char *cmd, *text;
} helps[] = {
	{ "changes",
	  "usage: ward changes [--all] [-C DIR]\n\n"
	  "A change set belongs to the workdir its overlay run wrote; this lists the\n"
	  "current directory's sets (name, number of changes, workdir).\n\n"
	  "  -C, --workdir DIR   the workdir meant (default: the current directory)\n"
	  "      --all           list the sets of every workdir\n"
	  "  -h, --help          this text\n" },
	{ "diff",
	  "usage: ward diff NAME\n\n"
	  "Shows any kept set, whatever its workdir; control characters are escaped.\n\n"
	  "  -h, --help          this text\n" },
	{ "apply",
	  "usage: ward apply NAME [-C DIR] [--protect PATH] [--allow-write PATH] [--force]\n"
	  "                  [--allow-outside-links]\n\n"
	  "Only a set of the current directory (or of -C DIR) is applied.\n\n"
	  "  -C, --workdir DIR       the workdir meant (default: the current directory)\n"
	  "      --protect PATH      refuse changes under PATH too\n"
	  "      --allow-write PATH  let the set change a protected PATH\n"
	  "      --force             apply over files edited in the workdir meanwhile\n"
	  "      --allow-outside-links  apply symbolic links that lead outside the\n"
	  "                          workdir (a tool following one later reads or\n"
	  "                          writes there); refused without it\n"
	  "  -h, --help              this text\n" },
	{ "discard",
	  "usage: ward discard NAME [-C DIR]\n\n"
	  "Only a set of the current directory (or of -C DIR) is dropped.\n\n"
	  "  -C, --workdir DIR   the workdir meant (default: the current directory)\n"
	  "  -h, --help          this text\n" },
};

static int usage_error(const char *cmd, const char *msg)
{
	fprintf(stderr, "ward %s: %s\n", cmd, ward_shown(msg));
	fputs(changes_usage, stderr);
	return WARD_EXIT_OWN_ERROR;
}

static int fail(const char *cmd, struct ward_error *err)
{
	fprintf(stderr, "ward %s: %s\n", cmd, err ? ward_shown(err->message) : "failed");
	ward_error_free(err);
	return WARD_EXIT_OWN_ERROR;
}

/* The options of changes/diff/apply/discard, parsed alike; each command
 * refuses those that are not its own. */
struct changes_args {
	const char *name;    /* the set named, or NULL */
	const char *workdir; /* -C, or NULL: the current directory */
	bool all, force, links_out, help;
	struct {
		const char *path;
		bool protect;
	} paths[64];
	size_t n_paths;
};

/* Whether the space-separated list has word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

enum { O_ALL = 256, O_PROTECT, O_ALLOW_WRITE, O_FORCE, O_LINKS_OUT };

/* Parse argv (argv[0] is the command); `allowed` lists the long options the
 * command takes besides -C and --help. */
static int parse_args(const char *cmd, int argc, char **argv, const char *allowed,
		      struct changes_args *a)
{
	static const struct option opts[] = {
		{ "workdir", required_argument, NULL, 'C' },
		{ "all", no_argument, NULL, O_ALL },
		{ "protect", required_argument, NULL, O_PROTECT },
		{ "allow-write", required_argument, NULL, O_ALLOW_WRITE },
		{ "force", no_argument, NULL, O_FORCE },
		{ "allow-outside-links", no_argument, NULL, O_LINKS_OUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, idx = -1;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	for (;;) {
		char msg[PATH_MAX];

		c = getopt_long(argc, argv, "+C:h", opts, &idx);
		if (c == -1) {
			/* a name, then maybe more options: ward apply NAME --force */
			if (optind >= argc)
				break;
			if (strcmp(argv[optind], "--") == 0) {
				optind++;
				break;
			}
			if (a->name || strcmp(cmd, "changes") == 0) {
				snprintf(msg, sizeof(msg), "unexpected argument '%s'", argv[optind]);
				return usage_error(cmd, msg);
			}
			a->name = argv[optind++];
			continue;
		}
		if (c == 'h') {
			a->help = true;
			return 0;
		}
		if (c == '?' || c == ':') {
			/* getopt has already moved past the unknown option */
			snprintf(msg, sizeof(msg), "%s '%s'",
				 c == ':' ? "option needs a value:" : "unknown option",
				 argv[optind - 1]);
			return usage_error(cmd, msg);
		}
		if (c != 'C' && !has_word(allowed, opts[idx].name)) {
			snprintf(msg, sizeof(msg), "'--%s' is not an option of ward %s", opts[idx].name,
				 cmd);
			return usage_error(cmd, msg);
		}
		if (c == 'C' && strcmp(cmd, "diff") == 0)
			return usage_error(cmd, "'--workdir' is not an option of ward diff (it shows "
						"any set)");
		idx = -1;
		switch (c) {
		case 'C':
			a->workdir = optarg;
			break;
		case O_ALL:
			a->all = true;
			break;
		case O_FORCE:
			a->force = true;
			break;
		case O_LINKS_OUT:
			a->links_out = true;
			break;
		case O_PROTECT:
		case O_ALLOW_WRITE:
			if (a->n_paths == sizeof(a->paths) / sizeof(a->paths[0]))
				return usage_error(cmd, "too many --protect/--allow-write");
			a->paths[a->n_paths].path = optarg;
			a->paths[a->n_paths++].protect = c == O_PROTECT;
			break;
		}
	}
	if (optind < argc && !a->name && strcmp(cmd, "changes") != 0)
		a->name = argv[optind++];
	if (optind < argc) {
		char msg[PATH_MAX];

		snprintf(msg, sizeof(msg), "unexpected argument '%s'", argv[optind]);
		return usage_error(cmd, msg);
	}
	if (strcmp(cmd, "changes") != 0 && !a->name)
		return usage_error(cmd,
				  "give the name of a kept change set ('ward changes' lists them)");
	return 0;
}

static int help(const char *what)
{
	const char *cmd = what + strlen("ward ");

	printf("%s\n", what);
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (strncmp(cmd, helps[i].cmd, strlen(helps[i].cmd)) == 0 &&
		    cmd[strlen(helps[i].cmd)] == ':')
			fputs(helps[i].text, stdout);
	return 0;
}

/* The workdir meant: -C DIR or the current directory, resolved as ward run
 * resolves a workdir. A DIR that no longer exists is taken as written (made
 * absolute), so that the sets of a moved or removed workdir can still be
 * discarded by naming it. */
static int meant_workdir(const char *given, char *out, size_t size, struct ward_error **err)
{
	char cwd[PATH_MAX], buf[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd)))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
					    "current directory");
	if (!given)
		given = cwd;
	if (realpath(given, buf)) {
		snprintf(out, size, "%s", buf);
		return 0;
	}
	if (given[0] == '/')
		snprintf(out, size, "%s", given);
	else if ((size_t)snprintf(out, size, "%s/%s", cwd, given) >= size)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, ENAMETOOLONG,
					    "workdir '%s'", given);
	return 0;
}

/* Whether the set's workdir is the one meant, compared as resolved paths. */
static bool same_workdir(const char *set_wd, const char *meant)
{
	char buf[PATH_MAX];

	if (strcmp(set_wd, meant) == 0)
		return true;
	return realpath(set_wd, buf) && strcmp(buf, meant) == 0;
}

int ward_cmd_changes(int argc, char **argv)
{
	struct ward_error *err = NULL;
	struct changes_args a;
	char meant[PATH_MAX], **names;
	int rc = parse_args("changes", argc, argv, "all", &a);

	if (rc)
		return rc;
	if (a.help)
		return help("ward changes: list the kept change sets of this workdir (--all: of "
			    "every workdir)");
	if (meant_workdir(a.workdir, meant, sizeof(meant), &err) < 0)
		return fail("changes", err);
	names = ward_changeset_list(NULL, &err);
	if (!names)
		return fail("changes", err);
	for (size_t i = 0; names[i]; i++) {
		struct ward_changeset *cs = ward_changeset_open(NULL, names[i], NULL);

		if (cs && (a.all || same_workdir(ward_changeset_workdir(cs), meant)))
			printf("%s\t%zu change%s\t%s\n", ward_shown(names[i]),
			       ward_changeset_count(cs), ward_changeset_count(cs) == 1 ? "" : "s",
			       ward_shown(ward_changeset_workdir(cs)));
		else if (!cs && a.all)
			printf("%s\t(unreadable)\n", ward_shown(names[i]));
		ward_changeset_free(cs);
	}
	ward_protect_strv_free(names);
	return 0;
}

static struct ward_changeset *open_named(const char *cmd, const char *name)
{
	struct ward_error *err = NULL;
	struct ward_changeset *cs = ward_changeset_open(NULL, name, &err);

	if (!cs)
		fail(cmd, err);
	return cs;
}

/* Apply and discard act on the sets of the workdir meant only: a name typed
 * in one project never changes another. */
static struct ward_changeset *open_own(const char *cmd, const struct changes_args *a)
{
	struct ward_error *err = NULL;
	struct ward_changeset *cs;
	char meant[PATH_MAX];

	if (meant_workdir(a->workdir, meant, sizeof(meant), &err) < 0) {
		fail(cmd, err);
		return NULL;
	}
	cs = open_named(cmd, a->name);
	if (cs && !same_workdir(ward_changeset_workdir(cs), meant)) {
		fprintf(stderr,
			"ward %s: change set '%s' belongs to the workdir '%s', not '%s' (run it "
			"there, or give --workdir '%s')\n",
			cmd, ward_shown(a->name), ward_shown(ward_changeset_workdir(cs)),
			ward_shown(meant), ward_shown(ward_changeset_workdir(cs)));
		ward_changeset_free(cs);
		return NULL;
	}
	return cs;
}

int ward_cmd_diff(int argc, char **argv)
{
	struct ward_error *err = NULL;
	struct ward_changeset *cs;
	struct changes_args a;
	int rc = parse_args("diff", argc, argv, "", &a);

	if (rc)
		return rc;
	if (a.help)
		return help("ward diff: show a kept change set as a unified diff");
	cs = open_named("diff", a.name);
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

/* The set's symbolic links that lead outside its workdir, one line each on
 * f; how many. */
static size_t links_out(const struct ward_changeset *cs, FILE *f)
{
	size_t n = 0;

	for (size_t i = 0; i < ward_changeset_count(cs); i++) {
		const struct ward_change *c = ward_changeset_get(cs, i);

		if (!(c->warn & WARD_CHANGE_WARN_LINK_OUT) || c->kind == WARD_CHANGE_DELETED)
			continue;
		if (f)
			fprintf(f, "ward: '%s' -> '%s'\n", ward_shown(c->path),
				ward_shown(c->target ? c->target : ""));
		n++;
	}
	return n;
}

int ward_cmd_apply(int argc, char **argv)
{
	struct ward_error *err = NULL;
	struct ward_changeset *cs;
	struct ward_protect *pr = NULL;
	struct ward_config cfg;
	struct changes_args a;
	char *policy;
	int rc = parse_args("apply", argc, argv, "protect allow-write force allow-outside-links", &a);
	size_t out;

	if (rc)
		return rc;
	if (a.help)
		return help("ward apply: copy a kept change set into its workdir");
	cs = open_own("apply", &a);
	if (!cs)
		return WARD_EXIT_OWN_ERROR;
	/* a link to /etc/shadow or ~/.ssh is harmless until a tool or a person
	 * follows it from the workdir: said and refused unless asked for */
	if (!a.links_out && (out = links_out(cs, NULL)) > 0) {
		fprintf(stderr,
			"ward apply: change set '%s' holds %zu symbolic link%s leading outside the "
			"workdir '%s' (a tool following one reads or writes there; "
			"--allow-outside-links applies them):\n",
			ward_shown(a.name), out, out == 1 ? "" : "s",
			ward_shown(ward_changeset_workdir(cs)));
		links_out(cs, stderr);
		ward_changeset_free(cs);
		return WARD_EXIT_OWN_ERROR;
	}
	ward_changeset_set_force(cs, a.force);
	/* the policy's protected paths, then the options */
	ward_config_init(&cfg);
	policy = ward_policy_default_path();
	if (policy && ward_policy_load(policy, &cfg, &err) < 0)
		rc = -1;
	free(policy);
	if (rc == 0 && !(pr = ward_config_protect(&cfg, &err)))
		rc = -1;
	for (size_t i = 0; rc == 0 && i < a.n_paths; i++) {
		char rel[PATH_MAX];

		if (relative_to(ward_changeset_workdir(cs), a.paths[i].path, rel, sizeof(rel), &err) <
			    0 ||
		    (a.paths[i].protect ? ward_protect_add(pr, rel, &err) :
					  ward_protect_allow(pr, rel, &err)) < 0)
			rc = -1;
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
	struct changes_args a;
	int rc = parse_args("discard", argc, argv, "", &a);

	if (rc)
		return rc;
	if (a.help)
		return help("ward discard: drop a kept change set");
	cs = open_own("discard", &a);
	if (!cs)
		return WARD_EXIT_OWN_ERROR;
	if (ward_changeset_busy(cs)) {
		fprintf(stderr, "ward discard: change set '%s' is in use by another run\n",
			ward_shown(a.name));
		ward_changeset_free(cs);
		return WARD_EXIT_OWN_ERROR;
	}
	ward_changeset_discard(cs);
	ward_changeset_free(cs);
	return 0;
}
