/* validate.c — matching parsed commands against the rule table. Pure code.
 *
 * A command string is parsed once (ward/shparse.h). Every simple command
 * the parser finds — wherever it is — becomes a `struct cmd` (its words, its
 * redirects, whether it reads a pipe, whether it runs inside a substitution)
 * and is matched as a `view`: the program and its words. A wrapper (env, sudo,
 * timeout, xargs, find -exec, …) gives a second view of the same command, the
 * one it starts, and so on to any depth; a string a shell will run (sh -c,
 * a here-string fed to bash, git -c core.sshCommand=…, awk's system(…)) is
 * parsed and validated in turn, its commands reported at the span of the word
 * that holds it.
 */
#include "filters/validate/validate-internal.h"
#include "filters/validate/unwrap-internal.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/util/util-internal.h"
#include "ward/request.h"
#include "ward/shparse.h"


/* ---- small helpers ------------------------------------------------------- */

char *ward_vd_lower_dup(const char *s)
{
	char *d = strdup(s ? s : "");
	size_t i;

	for (i = 0; d && d[i]; i++)
		d[i] = (char)tolower((unsigned char)d[i]);
	return d;
}

bool ward_vd_word_init(struct ctx *c, struct word *w, const char *text, unsigned flags,
		       size_t off, size_t len)
{
	w->text = strdup(text ? text : "");
	w->fold = ward_vd_lower_dup(text);
	w->alt = NULL;
	w->norm = w->norm_alt = NULL;
	w->unresolved = false;
	w->flags = flags;
	w->off = off;
	w->len = len;
	if (!w->text || !w->fold) {
		c->failed = 1;
		return false;
	}
	return true;
}

void ward_vd_word_release(struct word *w)
{
	free(w->text);
	free(w->fold);
	free(w->alt);
	free(w->norm);
	free(w->norm_alt);
	memset(w, 0, sizeof(*w));
}

void ward_vd_words_free(struct word *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ward_vd_word_release(&w[i]);
	free(w);
}

static const char *basename_of(const char *s)
{
	const char *b = strrchr(s, '/');

	return b && b[1] ? b + 1 : s;
}

bool ward_vd_in_list(const char *name, const char *list)
{
	size_t n = strlen(name);
	const char *p = list;

	while (*p) {
		size_t k = strcspn(p, " ");

		if (k == n && strncmp(p, name, n) == 0)
			return true;
		p += k;
		p += strspn(p, " ");
	}
	return false;
}

const char *ward_vd_prog_of(const struct view *v)
{
	/* an interpreter's versioned name is the interpreter: python3.12,
	 * pypy3.10, perl5.36, php8.2, ruby3.2, lua5.4 */
	static const char *const versioned[] = { "python3", "python2", "pypy3", "python", "pypy",
						 "perl", "php", "ruby", "lua" };
	const char *b = v->n ? basename_of(v->w[0].alt ? v->w[0].alt : v->w[0].fold) : "";
	size_t i, n, len = strlen(b);

	if (!len || !isdigit((unsigned char)b[len - 1]))
		return b; /* asked for every rule: the common case first */
	for (i = 0; i < ARRAY_SIZE(versioned); i++) {
		n = strlen(versioned[i]);
		if (strncmp(b, versioned[i], n) == 0 && b[n] && !b[n + strspn(b + n, "0123456789.")])
			return versioned[i];
	}
	return b;
}

/* Fold runs of whitespace into one space (in place). */
static void fold_space(char *s)
{
	char *o = s;
	bool sp = false;

	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			sp = true;
			continue;
		}
		if (sp && o != s)
			*o++ = ' ';
		else if (sp)
			o++;
		sp = false;
		*o++ = *s;
	}
	if (sp)
		*o++ = ' ';
	*o = '\0';
}

/* a/b/../c is a/c and /x/.. is /, lexically (what a symlink would make of
 * it is the sandbox's business). `..` above the start and `~/..` stay. */
static void fold_dotdot(char *p)
{
	char *d = p;

	while ((d = strstr(d, "/.."))) {
		char *start = d, *end = d + 3;

		if (*end != '/' && *end != '\0') {
			d++;
			continue;
		}
		while (start > p && start[-1] != '/')
			start--;
		if (start == d) {
			if (d == p) { /* "/.." at the root is the root */
				memmove(d, end, strlen(end) + 1);
				d = p;
				continue;
			}
			d++;
			continue;
		}
		if ((d - start == 2 && strncmp(start, "..", 2) == 0) ||
		    (d - start == 1 && *start == '~')) {
			d++;
			continue;
		}
		if (start == p) {
			if (*end == '/')
				end++;
		} else {
			start--; /* the slash before the component */
		}
		memmove(start, end, strlen(end) + 1);
		d = p;
	}
}

/* A path as the rules see it: $HOME and ${HOME} written ~, `//` and `/./`
 * folded, a leading `./` and a trailing `/` or `/.` dropped. */
char *ward_vd_norm_path(const char *fold)
{
	char *p, *o, *s;
	size_t n;

	if (strncmp(fold, "${home}", 7) == 0 && (!fold[7] || fold[7] == '/'))
		n = asprintf(&p, "~%s", fold + 7);
	else if (strncmp(fold, "$home", 5) == 0 && (!fold[5] || fold[5] == '/'))
		n = asprintf(&p, "~%s", fold + 5);
	else
		n = asprintf(&p, "%s", fold);
	if ((int)n < 0)
		return NULL;
	for (s = o = p; *s;) {
		if (s[0] == '/' && s[1] == '/') {
			s++;
			continue;
		}
		if (s[0] == '/' && s[1] == '.' && (s[2] == '/' || !s[2])) {
			s += 2;
			continue;
		}
		*o++ = *s++;
	}
	*o = '\0';
	while (strncmp(p, "./", 2) == 0 && p[2])
		memmove(p, p + 2, strlen(p + 2) + 1);
	fold_dotdot(p);
	/* /proc/PID/root/etc/shadow is /etc/shadow */
	if (strncmp(p, "/proc/", 6) == 0) {
		char *r = strchr(p + 6, '/');

		if (r && strncmp(r, "/root/", 6) == 0)
			memmove(p, r + 5, strlen(r + 5) + 1);
	}
	n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	if (!*p && *fold == '/')
		strcpy(p, "/");
	return p;
}

static bool glob_any(char *const *items, size_t n, const char *s, int flags)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fnmatch(items[i], s, flags) == 0)
			return true;
	return false;
}

/* A path matched by a path/write glob (see filters/validate/validators.rules). */
static bool path_glob(const char *pat, const char *path)
{
	const char *s;

	if (pat[0] == '/' || pat[0] == '~')
		return fnmatch(pat, path, 0) == 0;
	if (strchr(pat, '/')) {
		for (s = path; *s; s++)
			/* a file inside it too: .config/gcloud/credentials.db */
			if ((s == path || s[-1] == '/' || s[-1] == ':') &&
			    fnmatch(pat, s, FNM_LEADING_DIR) == 0)
				return true;
		return false;
	}
	for (s = path; *s;) {
		size_t k = strcspn(s, "/:");
		char comp[512];

		if (k && k < sizeof(comp)) {
			memcpy(comp, s, k);
			comp[k] = '\0';
			if (fnmatch(pat, comp, 0) == 0)
				return true;
		}
		s += k;
		if (*s)
			s++;
	}
	return false;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* A word with a glob the shell will expand (`/etc/sha*`, `~/.ss?/id_*`)
 * matched the other way round: the word as the pattern, against a literal
 * rule item. A component that is nothing but globs (`*`) is not counted:
 * it would name everything. */
static bool path_glob_rev(const char *item, const char *path)
{
	const char *s;

	if (has_glob(item))
		return false;
	if (item[0] == '/' || item[0] == '~')
		return path[0] == item[0] && fnmatch(path, item, FNM_PATHNAME | FNM_PERIOD) == 0;
	if (strchr(item, '/')) {
		for (s = path; *s; s++)
			if ((s == path || s[-1] == '/') && s[strspn(s, "*?.[]/")] &&
			    fnmatch(s, item, FNM_PATHNAME | FNM_PERIOD) == 0)
				return true;
		return false;
	}
	for (s = path; *s;) {
		size_t k = strcspn(s, "/:");
		char comp[512];

		if (k && k < sizeof(comp)) {
			memcpy(comp, s, k);
			comp[k] = '\0';
			if (has_glob(comp) && comp[strspn(comp, "*?.[]")] &&
			    fnmatch(comp, item, FNM_PERIOD) == 0)
				return true;
		}
		s += k;
		if (*s)
			s++;
	}
	return false;
}

static bool path_matches_one(const struct cond *cd, const char *fold, const char *p, bool glob)
{
	const char *last;
	size_t i;

	/* A URL names something elsewhere, not a file here. */
	if (strstr(fold, "://") && strncmp(fold, "file://", 7) != 0)
		return false;
	if (!p)
		return false;
	last = basename_of(p);
	for (i = 0; i < cd->n_except; i++)
		if (strchr(cd->except[i], '/') ? path_glob(cd->except[i], p) :
						 fnmatch(cd->except[i], last, 0) == 0)
			return false;
	for (i = 0; i < cd->n_items; i++)
		if (path_glob(cd->items[i], p) || (glob && path_glob_rev(cd->items[i], p)))
			return true;
	return false;
}

/* The normalised path of a word's text (alt: of its expanded form), kept in
 * the word. The cache is not part of what the word says, hence the cast. */
static const char *word_norm(const struct word *w, bool alt)
{
	struct word *m = (struct word *)w;

	if (alt && !m->norm_alt && m->alt)
		m->norm_alt = ward_vd_norm_path(m->alt);
	if (!alt && !m->norm)
		m->norm = ward_vd_norm_path(m->fold);
	return alt ? m->norm_alt : m->norm;
}

static bool path_matches(const struct cond *cd, const struct word *w, const char *fold)
{
	bool glob = (w->flags & WARD_SH_W_GLOB) != 0;

	if (fold != w->fold) {
		/* a part of the word (the value after '='): not cached */
		_cleanup_free_ char *p = ward_vd_norm_path(fold);

		return path_matches_one(cd, fold, p, glob);
	}
	if (path_matches_one(cd, fold, word_norm(w, false), glob))
		return true;
	/* the same word with its variables expanded, when that differs */
	if (w->alt)
		return path_matches_one(cd, w->alt, word_norm(w, true), glob);
	return false;
}

/* ---- roles of words -------------------------------------------------------- */

/* Programs whose words are data, not files: the first `pos` positionals
 * (-1: all of them) unless one of `pat_opts` gave the pattern; the values of
 * `data_opts`; `val_opts` take the next word as their value. */
static const struct {
	const char *names;
	int pos;
	const char *pat_opts;
	const char *data_opts;
	const char *val_opts;
} data_roles[] = {
	{ "echo printf : true false test [ [[ expr let export local declare readonly typeset unset "
	  "set shift exit return read tr man info apropos whatis help type which whereis hash "
	  "alias unalias basename dirname seq sleep yes printenv getconf",
	  -1, "", "", "" },
	{ "grep egrep fgrep zgrep rgrep bzgrep xzgrep zegrep zfgrep", 1, "-e -f --regexp --file",
	  "-e --regexp --label",
	  "-e -f -m -A -B -C -d -D --regexp --file --max-count --after-context --before-context "
	  "--context --label --include --exclude --exclude-dir --exclude-from --devices "
	  "--directories --binary-files --group-separator" },
	{ "rg ripgrep", 1, "-e -f --regexp --file", "-e --regexp",
	  "-e -f -g -t -T -m -A -B -C -j -M -E --glob --iglob --type --type-not --max-count "
	  "--after-context --before-context --context --threads --max-columns --encoding "
	  "--regexp --file --sort --sortr --type-add --colors --replace -r --max-depth -d" },
	{ "ag ack ack-grep", 1, "", "", "-G -A -B -C -m --ignore --ignore-dir -g --file-search-regex" },
	{ "sed gsed", 1, "-e -f --expression --file", "-e --expression", "-e -f -l --expression --file "
	  "--line-length" },
	{ "awk gawk mawk nawk busybox-awk", 1, "-f --file", "-v --assign",
	  "-f -v -F --file --assign --field-separator" },
	{ "jq yq gojq jaq", 1, "-f --from-file", "--arg --argjson", "-f --from-file --indent" },
	{ "python python2 python3 pypy pypy3", 0, "", "-c", "-c -m -W -X" },
	{ "perl", 0, "", "-e -E", "-e -E -I -M -m" },
	{ "ruby", 0, "", "-e", "-e -I -r" },
	{ "node nodejs deno bun", 0, "", "-e --eval -p --print", "-e --eval -p --print -r --require" },
	{ "php", 0, "", "-r", "-r -d -c" },
	{ "truncate", 0, "", "", "-s -r --size --reference" },
	{ "shred", 0, "", "", "-n -s --iterations --size --random-source" },
	{ "git", 0, "",
	  "-m --message -S -G --grep --author --committer --format --pretty --since --until --after "
	  "--before --date -F --notes --subject-prefix --signoff-by",
	  "-m --message -S -G --grep --author --committer --since --until --after --before -C -c "
	  "--git-dir --work-tree --namespace -F --file -n --max-count -U -L" },
	{ "gh glab hg svn", 0, "",
	  "-m --message --title -t --body -b --notes --search -S --description",
	  "-m --message --title -t --body -b --notes --search -S --description -R --repo" },
	{ "find", 0, "",
	  "-name -iname -path -ipath -regex -iregex -wholename -iwholename -lname -ilname",
	  "-name -iname -path -ipath -regex -iregex -wholename -iwholename -lname -ilname -type "
	  "-maxdepth -mindepth -size -mtime -mmin -atime -amin -ctime -cmin -newer -user -group "
	  "-perm -printf -fprintf -regextype -uid -gid -links -inum -samefile -fstype -xtype" },
};

/* Programs whose last positional is the file written (copying, linking). */
static const char *const dest_writers = "cp mv install ln rsync scp";

bool ward_vd_opt_named(const char *word, const char *list)
{
	char name[128];
	size_t k = strcspn(word, "=");

	if (k >= sizeof(name))
		return false;
	memcpy(name, word, k);
	name[k] = '\0';
	return ward_vd_in_list(name, list);
}

/* Options whose value is a file the program writes. */
bool ward_vd_is_output_opt(const char *prog, const char *opt)
{
	if (strcmp(prog, "ssh") == 0 || strcmp(prog, "scp") == 0)
		return false; /* -o Option=value */
	if (strcmp(prog, "wget") == 0 && strcmp(opt, "-O") == 0)
		return true;
	if (strcmp(prog, "find") == 0) /* find . -fprint ~/.bashrc */
		return ward_vd_in_list(opt, "-fprint -fprint0 -fprintf -fls");
	return ward_vd_opt_named(opt, "-o --output --output-document --output-file -out -keyout --out");
}

/* Fill roles[1..n) for a view. */
void ward_vd_compute_roles(const struct view *v, unsigned *roles)
{
	const char *prog = ward_vd_prog_of(v);
	const char *pat_opts = "", *data_opts = "", *val_opts = "";
	int pos_data = 0, seen_pos = 0;
	bool end_opts = false, pattern_given = false, sed_inplace = false;
	size_t i, k, last_pos = 0;

	for (k = 0; k < ARRAY_SIZE(data_roles); k++)
		if (ward_vd_in_list(prog, data_roles[k].names)) {
			pos_data = data_roles[k].pos;
			pat_opts = data_roles[k].pat_opts;
			data_opts = data_roles[k].data_opts;
			val_opts = data_roles[k].val_opts;
		}
	for (i = 1; i < v->n; i++)
		if (!strncmp(v->w[i].text, "-", 1) && ward_vd_opt_named(v->w[i].text, pat_opts))
			pattern_given = true;
	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text;

		roles[i] = 0;
		if (!end_opts && strcmp(t, "--") == 0) {
			roles[i] = ROLE_OPT;
			end_opts = true;
			continue;
		}
		if (!end_opts && t[0] == '-' && t[1]) {
			roles[i] = ROLE_OPT;
			if ((strcmp(prog, "sed") == 0 || strcmp(prog, "perl") == 0) &&
			    (strncmp(t, "-i", 2) == 0 || strncmp(t, "--in-place", 10) == 0))
				sed_inplace = true;
			/* perl -pi, -pie: -i inside a group (its value would follow it) */
			if (strcmp(prog, "perl") == 0 && t[1] != '-' && strchr(t + 1, 'i') &&
			    strcspn(t + 1, "eEIMm") > (size_t)(strchr(t + 1, 'i') - (t + 1)))
				sed_inplace = true;
			/* the value in the next word */
			if (!strchr(t, '=') && ward_vd_opt_named(t, val_opts) && i + 1 < v->n) {
				i++;
				roles[i] = ward_vd_opt_named(t, data_opts) ? ROLE_DATA :
					   ward_vd_is_output_opt(prog, t)  ? ROLE_WRITE :
								     ROLE_READ;
			} else if (ward_vd_is_output_opt(prog, t) && !strchr(t, '=') && i + 1 < v->n) {
				/* written, not read: openssl req -keyout key.pem makes a key */
				i++;
				roles[i] = ROLE_WRITE;
			} else if (strcmp(prog, "wget") == 0 && strcmp(t, "-O") == 0 && i + 1 < v->n) {
				i++;
				roles[i] = ROLE_WRITE;
			}
			continue;
		}
		if (pos_data < 0 || (seen_pos < pos_data && !pattern_given)) {
			roles[i] = ROLE_POS | ROLE_DATA;
		} else {
			/* ls, du, tree: names and sizes, not what a file holds */
			roles[i] = ward_vd_in_list(prog, "ls tree du") ? ROLE_POS : ROLE_POS | ROLE_READ;
			/* every file named is written (truncate, shred: emptied, overwritten) */
			if (ward_vd_in_list(prog, "tee sponge truncate shred patch"))
				roles[i] = ROLE_POS | ROLE_WRITE;
			if (sed_inplace)
				roles[i] |= ROLE_WRITE;
		}
		seen_pos++;
		last_pos = i;
	}
	if (ward_vd_in_list(prog, dest_writers)) {
		/* cp -t DIR F, cp F ~, cp F dir/: each F lands in the directory
		 * under its own name, a file written as surely as the target */
		bool into = false;

		for (i = 1; i < v->n; i++) {
			const char *t = v->w[i].text;

			if ((roles[i] & ROLE_OPT) && t[1] != '-' && strchr(t + 1, 't') &&
			    !ward_vd_in_list(prog, "rsync scp"))
				into = true;
			if ((roles[i] & ROLE_OPT) && ward_vd_long_opt_is(t, "--target-directory"))
				into = true;
		}
		if (seen_pos >= 2) {
			const struct word *d = &v->w[last_pos];
			const char *dt = d->alt ? d->alt : d->fold;
			size_t dn = strlen(dt);

			roles[last_pos] = ROLE_POS | ROLE_WRITE;
			if (dn && (dt[dn - 1] == '/' || ward_vd_in_list(dt, "~ . ..")))
				into = true;
		}
		for (i = 1; into && i < v->n; i++)
			if (roles[i] & ROLE_POS)
				roles[i] |= ROLE_WRITE;
	}
	if (strcmp(prog, "dd") == 0)
		for (i = 1; i < v->n; i++)
			if (strncmp(v->w[i].fold, "of=", 3) == 0)
				roles[i] = ROLE_POS | ROLE_WRITE;
	/* the data options given as --opt=value */
	for (i = 1; i < v->n; i++)
		if ((roles[i] & ROLE_OPT) && strchr(v->w[i].text, '=') &&
		    ward_vd_opt_named(v->w[i].text, data_opts))
			roles[i] |= ROLE_DATA;
}

/* ---- conditions -------------------------------------------------------- */

/* The word a long option `--name` or `--name=value` begins with `item`
 * (abbreviations as GNU getopt takes them: at least two letters). */
bool ward_vd_long_opt_is(const char *word, const char *item)
{
	size_t k = strcspn(word, "=");

	if (strncasecmp(word, item, k) != 0)
		return false;
	if (k == strlen(item))
		return true;
	return k >= 4 && k < strlen(item); /* "--re" for "--recursive" */
}

/* Whether one option word t is the rule's flag item. */
static bool flag_is(const char *t, const char *item)
{
	if (t[0] != '-' || !t[1])
		return false;
	if (item[1] == '-')
		return t[1] == '-' && ward_vd_long_opt_is(t, item);
	if (item[2] == '\0')
		/* case folded like everything else: -R is -r to a rule */
		return t[1] != '-' &&
		       (strchr(t + 1, tolower((unsigned char)item[1])) ||
			strchr(t + 1, toupper((unsigned char)item[1]))) &&
		       strspn(t + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") ==
			       strlen(t + 1);
	return strcasecmp(t, item) == 0 ||
	       (strncasecmp(t, item, strlen(item)) == 0 && t[strlen(item)] == '=');
}

/* The word's known expansion, split as the shell may split it: f=-rf; rm $f
 * is rm -rf (a variable set literally earlier in the string is what it
 * holds, for a flag as for a program word). */
static bool flag_in_alt(const struct word *w, const char *item)
{
	char tok[128];
	const char *a = w->alt;

	if (!a || w->unresolved)
		return false;
	while (*a) {
		size_t n;

		a += strspn(a, " \t\n");
		n = strcspn(a, " \t\n");
		if (n && n < sizeof(tok)) {
			memcpy(tok, a, n);
			tok[n] = '\0';
			if (flag_is(tok, item))
				return true;
		}
		a += n;
	}
	return false;
}

static bool flag_in_view(const struct view *v, const char *item, size_t from)
{
	size_t i;

	for (i = from; i < v->n; i++) {
		if (strcmp(v->w[i].text, "--") == 0)
			break;
		if (flag_is(v->w[i].text, item) || flag_in_alt(&v->w[i], item))
			return true;
	}
	return false;
}

/* The positional words (not options, not option values of val_opts). */
size_t ward_vd_sub_start(const struct view *v, size_t *pos, size_t max)
{
	static const struct {
		const char *names, *val_opts;
	} globals[] = {
		{ "git", "-C -c --git-dir --work-tree --namespace --exec-path --config-env" },
		{ "docker podman nerdctl", "-H --host -c --context --config -l --log-level" },
		{ "systemctl", "-H --host -M --machine -t --type -p --property -s --signal --state -n "
			       "--lines -o --output --root" },
	};
	const char *prog = ward_vd_prog_of(v), *val_opts = "";
	size_t i, n = 0, k;

	for (k = 0; k < ARRAY_SIZE(globals); k++)
		if (ward_vd_in_list(prog, globals[k].names))
			val_opts = globals[k].val_opts;
	for (i = 1; i < v->n && n < max; i++) {
		const char *t = v->w[i].text;

		if (t[0] == '-') {
			if (!strchr(t, '=') && ward_vd_opt_named(t, val_opts))
				i++;
			continue;
		}
		pos[n++] = i;
	}
	return n;
}

static bool cond_sub(const struct cond *cd, const struct view *v)
{
	size_t pos[4], n = ward_vd_sub_start(v, pos, 4), i;

	for (i = 0; i < cd->n_items; i++) {
		const char *s = cd->items[i];
		size_t k = 0;
		bool ok = true;

		while (*s && ok) {
			size_t len = strcspn(s, ".");

			ok = k < n && strlen(v->w[pos[k]].fold) == len &&
			     strncmp(v->w[pos[k]].fold, s, len) == 0;
			k++;
			s += len;
			if (*s == '.')
				s++;
		}
		if (ok)
			return true;
	}
	return false;
}

/* The value of option `opt` at word i, or NULL. */
static const char *opt_value(const struct view *v, size_t i, const char *opt)
{
	const char *t = v->w[i].fold;
	size_t n = strlen(opt);

	if (opt[1] == '-') {
		if (strcasecmp(t, opt) == 0)
			return i + 1 < v->n ? v->w[i + 1].fold : NULL;
		if (strncasecmp(t, opt, n) == 0 && t[n] == '=')
			return t + n + 1;
		return NULL;
	}
	if (t[0] != '-' || t[1] == '-')
		return NULL;
	/* in a group of short options: the rest of the word, else the next word */
	{
		const char *at = strchr(v->w[i].text + 1, opt[1]);

		if (!at)
			return NULL;
		at = t + (at - v->w[i].text);
		if (at[1])
			return at + 1;
		return i + 1 < v->n ? v->w[i + 1].fold : NULL;
	}
}

static bool cond_opt(struct ctx *c, const struct cond *cd, const struct view *v)
{
	size_t i, k;

	for (i = 1; i < v->n; i++) {
		if (strcmp(v->w[i].text, "--") == 0)
			break;
		for (k = 0; k < cd->n_opts; k++) {
			const char *val = opt_value(v, i, cd->opts[k]);

			if (val && glob_any(cd->items, cd->n_items, val, 0)) {
				c->hit = v->w[i].text;
				return true;
			}
		}
	}
	return false;
}

static bool redir_targets(struct ctx *c, const struct cond *cd, const struct view *v,
			  bool write, bool read, bool any)
{
	size_t i;

	for (i = 0; i < v->cmd->nr; i++) {
		const struct redir *r = &v->cmd->r[i];
		bool want = any ? (r->kind != RD_STRING && r->kind != RD_DUP) :
				  (write && (r->kind == RD_WRITE || r->kind == RD_RDWR)) ||
					  (read && (r->kind == RD_READ || r->kind == RD_RDWR));

		if (!want)
			continue;
		if (any ? glob_any(cd->items, cd->n_items, r->target.fold, 0) :
			  path_matches(cd, &r->target, r->target.fold)) {
			c->hit = r->target.text;
			return true;
		}
	}
	return false;
}

static bool cond_paths(struct ctx *c, const struct cond *cd, const struct view *v,
		       const unsigned *roles, unsigned want)
{
	size_t i;

	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].fold, *eq;

		if (roles[i] & ROLE_DATA)
			continue;
		if (roles[i] & ROLE_OPT) {
			/* --file=PATH names a path too, --output=PATH one written */
			if (t[0] == '-' && (eq = strchr(t, '=')) &&
			    (ward_vd_is_output_opt(ward_vd_prog_of(v), v->w[i].text) == (want == ROLE_WRITE)) &&
			    path_matches(cd, &v->w[i], eq + 1)) {
				c->hit = v->w[i].text;
				return true;
			}
			continue;
		}
		if ((roles[i] & want) && path_matches(cd, &v->w[i], t)) {
			c->hit = v->w[i].text;
			return true;
		}
	}
	return redir_targets(c, cd, v, want == ROLE_WRITE, want == ROLE_READ, false);
}

static bool text_matches(struct ctx *c, const struct cond *cd, const char *fold)
{
	_cleanup_free_ char *s = strdup(fold);
	int rc;

	if (!s)
		return false;
	fold_space(s);
	rc = ward_cond_regexec(cd, s);
	if (rc < 0)
		c->failed = 1;
	return rc > 0;
}

static void build_view_of(struct ctx *c, const struct cmd *cmd, struct view *out);

static bool upstream_item(const struct view *u, const char *item)
{
	char prog[128];
	const char *colon = strchr(item, ':'), *s;
	size_t k = colon ? (size_t)(colon - item) : strlen(item);

	if (k >= sizeof(prog))
		return false;
	memcpy(prog, item, k);
	prog[k] = '\0';
	if (fnmatch(prog, ward_vd_prog_of(u), 0) != 0)
		return false;
	if (!colon)
		return true;
	for (s = colon + 1; *s;) {
		char one[128];
		size_t len = strcspn(s, ",");
		size_t i;

		if (len && len < sizeof(one)) {
			memcpy(one, s, len);
			one[len] = '\0';
			if (one[0] == '~') {
				for (i = 1; i < u->n; i++)
					if (fnmatch(one + 1, u->w[i].fold, 0) == 0)
						return true;
			} else if (one[0] == '-' && flag_in_view(u, one, 1)) {
				return true;
			} else if (one[0] != '-' && one[0] != '~') {
				for (i = 1; i < u->n; i++)
					if (strcmp(u->w[i].fold, one) == 0)
						return true;
			}
		}
		s += len;
		if (*s == ',')
			s++;
	}
	return false;
}

/* The views of an upstream command: the command and those behind its
 * wrappers, as far as a plain walk goes (env, sudo, nice, …). */
static bool upstream_matches(struct ctx *c, const struct cond *cd, const struct view *v)
{
	size_t u, i;

	for (u = 0; u < v->cmd->n_up; u++) {
		struct view uv;

		build_view_of(c, &v->cmd->up[u], &uv);
		for (i = 0; i < cd->n_items; i++)
			if (uv.n && upstream_item(&uv, cd->items[i])) {
				c->hit = uv.w[0].text;
				return true;
			}
	}
	return false;
}

static bool stdin_is_pipe(const struct cmd *cmd)
{
	size_t i;

	if (!cmd->piped)
		return false;
	for (i = 0; i < cmd->nr; i++)
		if (cmd->r[i].fd == 0 && cmd->r[i].kind != RD_WRITE)
			return false;
	return true;
}

static bool cond_text(struct ctx *c, const struct cond *cd, const struct view *v)
{
	size_t i, u, k;

	for (i = 1; i < v->n; i++)
		if (text_matches(c, cd, v->w[i].fold)) {
			c->hit = v->w[i].text;
			return true;
		}
	for (i = 0; i < v->cmd->nr; i++)
		if (v->cmd->r[i].kind == RD_STRING && text_matches(c, cd, v->cmd->r[i].target.fold)) {
			c->hit = v->cmd->r[i].target.text;
			return true;
		}
	if (!stdin_is_pipe(v->cmd))
		return false;
	for (u = 0; u < v->cmd->n_up; u++) {
		struct view uv;

		build_view_of(c, &v->cmd->up[u], &uv);
		if (!uv.n || !ward_vd_in_list(ward_vd_prog_of(&uv), "echo printf"))
			continue;
		for (k = 1; k < uv.n; k++)
			if (text_matches(c, cd, uv.w[k].fold)) {
				c->hit = uv.w[k].text;
				return true;
			}
	}
	return false;
}

/* An argument an `arg` line's except names: a relative path with no `..`,
 * `~`, variable or substitution, whose last component matches (rm -rf
 * node_modules, build/, web/dist). */
static bool arg_excepted(const struct ctx *c, const struct cond *cd, const struct word *w)
{
	const char *p = word_norm(w, false);
	size_t i;

	bool glob = (w->flags & WARD_SH_W_GLOB) != 0;

	if (!p || !*p || (w->flags & WARD_SH_W_DYNAMIC & ~WARD_SH_W_GLOB) || w->unresolved || p[0] == '/' ||
	    p[0] == '~' || p[0] == '-' || strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 ||
	    strstr(p, "/../") || strcmp(p, ".") == 0 || strcmp(p, "./") == 0 ||
	    (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))
		return false;
	/* overlay mode: whatever is removed inside the workdir is still there
	 * until a person applies the change set */
	if (c->overlay && !c->saw_cd && c->cur_rule &&
	    strcmp(c->cur_rule->id, "approval.rm-recursive-force") == 0)
		return true;
	/* a glob only as the except item itself (*.egg-info): it names nothing else */
	if (glob && strpbrk(p, "*?[") < strrchr(p, '/'))
		return false;
	for (i = 0; i < cd->n_except; i++)
		if (glob ? strcmp(cd->except[i], basename_of(p)) == 0 :
			   fnmatch(cd->except[i], basename_of(p), 0) == 0)
			return true;
	return false;
}

static bool cond_holds(struct ctx *c, const struct cond *cd, const struct view *v,
		       const unsigned *roles)
{
	size_t i;

	c->hit = NULL;
	switch (cd->kind) {
	case C_PROGRAM:
		return v->n && glob_any(cd->items, cd->n_items, ward_vd_prog_of(v), 0);
	case C_SUB:
		return cond_sub(cd, v);
	case C_FLAG:
		for (i = 0; i < cd->n_items; i++)
			if (flag_in_view(v, cd->items[i], 1))
				return true;
		return false;
	case C_OPT:
		return cond_opt(c, cd, v);
	case C_ARG:
		for (i = 1; i < v->n; i++) {
			const char *p;

			if (!(roles[i] & ROLE_POS) || (roles[i] & ROLE_DATA))
				continue;
			if (cd->n_except && arg_excepted(c, cd, &v->w[i]))
				continue;
			/* with an except line, `*` crosses `/`: every argument not excepted */
			p = word_norm(&v->w[i], false);
			if (p && glob_any(cd->items, cd->n_items, p,
					  cd->n_except ? 0 : ward_rules_fnmatch_flags(C_ARG))) {
				c->hit = v->w[i].text;
				return true;
			}
			p = word_norm(&v->w[i], true);
			if (p && glob_any(cd->items, cd->n_items, p,
					  cd->n_except ? 0 : ward_rules_fnmatch_flags(C_ARG))) {
				c->hit = v->w[i].text;
				return true;
			}
		}
		return false;
	case C_WORD:
		for (i = 1; i < v->n; i++)
			if (glob_any(cd->items, cd->n_items, v->w[i].fold, 0)) {
				c->hit = v->w[i].text;
				return true;
			}
		return false;
	case C_NOWORD:
		for (i = 1; i < v->n; i++)
			if (glob_any(cd->items, cd->n_items, v->w[i].fold, 0))
				return false;
		return true;
	case C_PATH:
		return cond_paths(c, cd, v, roles, ROLE_READ);
	case C_WRITE:
		return cond_paths(c, cd, v, roles, ROLE_WRITE);
	case C_REDIRECT:
		return redir_targets(c, cd, v, false, false, true);
	case C_UPSTREAM:
		return stdin_is_pipe(v->cmd) && upstream_matches(c, cd, v);
	case C_STDIN:
		if (strcmp(cd->items[0], "script") == 0)
			return v->script_stdin && stdin_is_pipe(v->cmd);
		return stdin_is_pipe(v->cmd);
	case C_CONTEXT:
		return v->cmd->in_subst;
	case C_ARGSUBST:
		for (i = 1; i < v->n; i++)
			if (v->w[i].flags & (WARD_SH_W_CMDSUB | WARD_SH_W_BACKTICK)) {
				c->hit = v->w[i].text;
				return true;
			}
		return false;
	case C_CODE:
		return strcmp(cd->items[0], "downloaded") == 0 ? v->runs_download : v->dynamic;
	case C_TEXT:
		return cond_text(c, cd, v);
	case C_WHOLE:
		return false; /* looked at by check_whole() */
	}
	return false;
}

/* ---- verdicts ------------------------------------------------------------- */

static void offer(struct ctx *c, int kind, size_t rank, const struct rule *r, const char *syn_id,
		  const char *syn_words, const struct cmd *cmd, const char *matched)
{
	struct match *b = &c->best;

	if (b->kind > kind || (b->kind == kind && b->rank <= rank))
		return;
	free(b->matched);
	b->kind = kind;
	b->rank = rank;
	b->rule = r;
	b->synthetic_id = syn_id;
	b->synthetic_words = syn_words;
	b->off = cmd ? cmd->off : 0;
	b->len = cmd ? cmd->len : c->top_len;
	b->matched = strdup(matched ? matched : "");
	if (!b->matched)
		c->failed = 1;
}

void ward_vd_refuse_synthetic(struct ctx *c, const char *id, const char *words,
			      const struct cmd *cmd, const char *matched)
{
	/* after every table rule: a table rule that matches says more */
	offer(c, WARD_VERDICT_REFUSED, (size_t)-1, NULL, id, words, cmd, matched);
}

void ward_vd_match_rules(struct ctx *c, const struct view *v)
{
	const struct ward_rules *rs = c->rules;
	_cleanup_free_ unsigned *roles = calloc(v->n + 1, sizeof(unsigned));
	size_t i, k;

	if (!roles) {
		c->failed = 1;
		return;
	}
	ward_vd_compute_roles(v, roles);
	for (i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->rules[i];
		const char *hit = NULL;
		bool all = true;
		int kind = r->refuses ? WARD_VERDICT_REFUSED : WARD_VERDICT_APPROVAL_REQUIRED;

		if (r->whole_only)
			continue;
		if (c->best.kind > kind || (c->best.kind == kind && c->best.rank <= i))
			continue;
		c->cur_rule = r;
		for (k = 0; k < r->n_conds && all; k++) {
			all = cond_holds(c, &r->conds[k], v, roles);
			if (all && c->hit)
				hit = c->hit;
		}
		if (all)
			offer(c, kind, i, r, NULL, NULL, v->cmd, hit ? hit : v->w[0].text);
	}
}

static void check_whole(struct ctx *c, const char *src, size_t len, size_t off, size_t span)
{
	const struct ward_rules *rs = c->rules;
	_cleanup_free_ char *s = strndup(src, len);
	struct cmd whole = { .off = off, .len = span };
	size_t i, k;

	if (!s) {
		c->failed = 1;
		return;
	}
	for (k = 0; s[k]; k++)
		s[k] = (char)tolower((unsigned char)s[k]);
	fold_space(s);
	for (i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->rules[i];

		if (!r->whole_only)
			continue;
		for (k = 0; k < r->n_conds; k++) {
			int rc;

			if (r->conds[k].kind != C_WHOLE)
				continue;
			rc = ward_cond_regexec(&r->conds[k], s);
			if (rc < 0)
				c->failed = 1;
			if (rc > 0) {
				offer(c, r->refuses ? WARD_VERDICT_REFUSED :
						      WARD_VERDICT_APPROVAL_REQUIRED,
				      i, r, NULL, NULL, &whole, s);
				break;
			}
		}
	}
}

/* ---- commands from the parse tree ---------------------------------------- */

static void cmd_release(struct cmd *cmd)
{
	size_t i;

	for (i = 0; i < cmd->nr; i++)
		ward_vd_word_release(&cmd->r[i].target);
	free(cmd->r);
	ward_vd_words_free(cmd->assigns, cmd->n_assigns);
	for (i = 0; i < cmd->n_up; i++)
		cmd_release(&cmd->up[i]);
	free(cmd->up);
	memset(cmd, 0, sizeof(*cmd));
}

struct walk {
	struct ctx *c;
	const struct ward_sh_tree *t;
	size_t span_off, span_len; /* a nested string: every span is this one */
	int depth;
};

static void span(const struct walk *wk, size_t off, size_t len, size_t *o, size_t *l)
{
	if (wk->span_len != (size_t)-1) {
		*o = wk->span_off;
		*l = wk->span_len;
	} else {
		/* a node's span runs to the next operator: drop the blanks */
		const char *src = wk->c->top;

		while (len && off + len <= wk->c->top_len &&
		       (src[off + len - 1] == ' ' || src[off + len - 1] == '\t'))
			len--;
		*o = off;
		*l = len;
	}
}

/* Whether an assignment in node n (info as the walk gives it) may not
 * happen, or may not last for the commands after it: source order is then
 * not the order of the run (x=rm; (x=ls); $x runs rm; x=ls; while …; do $x;
 * x=rm; done runs rm the second time round). */
static bool uncertain_place(const struct ward_sh_node *n, const struct ward_sh_visit_info *info)
{
	if (info->sub_depth > 0)
		return true;
	for (; n->parent; n = n->parent) {
		const struct ward_sh_node *p = n->parent;
		size_t i;

		for (i = 0; i < p->n_kids && p->kids[i] != n; i++)
			;
		switch (p->kind) {
		case WARD_SH_PIPELINE:
			if (p->n_kids > 1)
				return true;
			break;
		case WARD_SH_LIST:
			if (i < p->n_kids && p->ops && p->ops[i] == WARD_SH_OP_AMP)
				return true;
			break;
		case WARD_SH_AND_OR:
		case WARD_SH_IF:
			if (i > 0)
				return true;
			break;
		case WARD_SH_SUBSHELL:
		case WARD_SH_WHILE:
		case WARD_SH_UNTIL:
		case WARD_SH_FOR:
		case WARD_SH_SELECT:
		case WARD_SH_ARITH_FOR:
		case WARD_SH_CASE:
		case WARD_SH_COPROC:
		case WARD_SH_FUNCTION:
			return true;
		default:
			break;
		}
	}
	return false;
}

static void add_uncertain(struct ctx *c, const char *text)
{
	size_t k = strcspn(text, "=+[");
	char **g;

	if (!k)
		return;
	g = realloc(c->uncertain, (c->n_uncertain + 1) * sizeof(*g));
	if (!g || !(g[c->n_uncertain] = strndup(text, k))) {
		if (g)
			c->uncertain = g;
		c->failed = 1;
		return;
	}
	c->uncertain = g;
	c->n_uncertain++;
}

/* A bare NAME=VALUE: its value when a plain literal word (see struct
 * assigned). */
static void note_assigned(struct ctx *c, const struct ward_sh_word *w)
{
	const char *eq = strchr(w->text, '=');
	struct assigned *g;
	char *name, *value = NULL;
	bool literal;

	if (!eq || eq == w->text || eq[-1] == '+' || memchr(w->text, '[', (size_t)(eq - w->text)))
		return;
	/* a word the shell leaves as it is when it expands $NAME unquoted: no
	 * field to split, no pattern to match against files */
	literal = !(w->flags & (WARD_SH_W_DYNAMIC | WARD_SH_W_BRACE | WARD_SH_W_ARRAY)) &&
		  eq[1] && strlen(w->text) == w->text_len &&
		  !eq[1 + strspn(eq + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789._/+:=,%-")];
	name = strndup(w->text, (size_t)(eq - w->text));
	if (literal)
		value = strdup(eq + 1);
	g = realloc(c->assigned, (c->n_assigned + 1) * sizeof(*g));
	if (!name || (literal && !value) || !g) {
		free(name);
		free(value);
		if (g)
			c->assigned = g;
		c->failed = 1;
		return;
	}
	c->assigned = g;
	g[c->n_assigned].name = name;
	g[c->n_assigned].value = value;
	c->n_assigned++;
}

static bool ident_char(char ch)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

size_t ward_vd_var_values(const struct ctx *c, const char *name, const char **vals, size_t max)
{
	size_t len = strlen(name), n = 0, sites = 0, i;
	const char *s = c->top, *end = c->top + c->top_len, *p;

	if (c->vars_untrusted || !len)
		return 0;
	for (i = 0; i < c->n_assigned; i++) {
		if (strcmp(c->assigned[i].name, name) != 0)
			continue;
		if (!c->assigned[i].value || n == max)
			return 0;
		vals[n++] = c->assigned[i].value;
	}
	/* every mention of the name: a bare assignment (counted: each must be
	 * one of those above), $NAME or ${NAME}; anything else (read NAME,
	 * ${NAME:=…}, export NAME=…, for NAME in, a heredoc's text) and the
	 * values are not all known */
	for (p = s; p + len <= end && (p = memmem(p, (size_t)(end - p), name, len)); p += len) {
		bool before = p == s || !ident_char(p[-1]), after = p + len == end || !ident_char(p[len]);

		if (!before || !after)
			continue;
		if (p > s && p[-1] == '$')
			continue;
		if (p - s >= 2 && p[-1] == '{' && p[-2] == '$' && p + len < end && p[len] == '}')
			continue;
		if (p + len < end && p[len] == '=' &&
		    (p == s || strchr(" \t\n;&|(", p[-1])))
			sites++;
		else
			return 0;
	}
	return sites == n ? n : 0;
}

/* Before the walk: the variables whose assignments are in uncertain places. */
static int note_uncertain(const struct ward_sh_node *n, const struct ward_sh_visit_info *info,
			  void *data)
{
	struct ctx *c = data;
	bool unc;
	size_t i;

	if (n->kind != WARD_SH_SIMPLE || c->failed)
		return 0;
	if (n->n_words == 0)
		for (i = 0; i < n->n_assigns; i++)
			note_assigned(c, &n->assigns[i]);
	unc = uncertain_place(n, info);
	if (unc && n->n_words == 0)
		for (i = 0; i < n->n_assigns; i++)
			add_uncertain(c, n->assigns[i].text);
	if (n->n_words && ward_vd_in_list(n->words[0].text, "declare typeset local export readonly"))
		for (i = 1; i < n->n_words; i++) {
			const char *t = n->words[i].text;

			if (t[0] == '-' || t[0] == '+')
				continue;
			/* readonly x: a later x=ls fails, and x keeps what it held */
			if ((unc && strchr(t, '=')) || strcmp(n->words[0].text, "readonly") == 0)
				add_uncertain(c, t);
		}
	return 0;
}

static bool is_uncertain(const struct ctx *c, const char *name);

bool ward_vd_var_uncertain(const struct ctx *c, const char *name)
{
	return is_uncertain(c, name);
}

static bool is_uncertain(const struct ctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_uncertain; i++)
		if (strcmp(c->uncertain[i], name) == 0)
			return true;
	return false;
}

/* Whether a variable is set to a known literal value earlier in the string. */
bool ward_vd_var_known(const struct ctx *c, const char *name)
{
	size_t i = c->n_vars;

	if (strcmp(name, "HOME") == 0)
		return true;
	if (c->vars_untrusted || is_uncertain(c, name))
		return false;
	while (i-- > 0)
		if (strcmp(c->vars[i].name, name) == 0)
			return c->vars[i].known;
	return false;
}

/* Whether the shell could make the word anything other than what ward sees:
 * see struct word's unresolved. */
static bool word_unresolved(const struct ctx *c, const struct ward_sh_word *w)
{
	size_t i;

	if (w->flags & (WARD_SH_W_CMDSUB | WARD_SH_W_ARITH | WARD_SH_W_PROCSUB))
		return true;
	if (!(w->flags & WARD_SH_W_PARAM))
		return false;
	for (i = 0; i < w->n_parts; i++) {
		const struct ward_sh_part *p = &w->parts[i];

		if (p->kind != WARD_SH_P_PARAM)
			continue;
		if (p->op[0] || p->index || p->indirect || !ward_vd_var_known(c, p->text))
			return true;
		if (c->ifs_changed && p->quote == WARD_SH_Q_NONE)
			return true;
	}
	return false;
}

const char *ward_vd_var_value(const struct ctx *c, const char *name)
{
	size_t i = c->n_vars;

	if (strcmp(name, "HOME") == 0)
		return "~";
	while (i-- > 0)
		if (strcmp(c->vars[i].name, name) == 0)
			return c->vars[i].value;
	return "";
}

/* The word with its plain $NAME and ${NAME} parts replaced as far as they
 * are known (see struct word), lowercased; NULL without parameters. */
static char *expand_known(struct ctx *c, const struct ward_sh_word *w)
{
	char *buf = NULL, *low;
	size_t size = 0, i;
	FILE *f;

	if (!(w->flags & WARD_SH_W_PARAM))
		return NULL;
	f = open_memstream(&buf, &size);
	if (!f) {
		c->failed = 1;
		return NULL;
	}
	for (i = 0; i < w->n_parts; i++) {
		const struct ward_sh_part *p = &w->parts[i];

		switch (p->kind) {
		case WARD_SH_P_LITERAL:
		case WARD_SH_P_GLOB:
		case WARD_SH_P_TILDE:
			fputs(p->kind == WARD_SH_P_TILDE ? "~" : "", f);
			fputs(p->text, f);
			break;
		case WARD_SH_P_PARAM:
			if (!p->op[0])
				fputs(ward_vd_var_value(c, p->text), f);
			break;
		default:
			break; /* only known when it runs */
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		c->failed = 1;
		return NULL;
	}
	low = ward_vd_lower_dup(buf);
	free(buf);
	if (!low)
		c->failed = 1;
	return low;
}

static bool sh_word(const struct walk *wk, struct word *out, const struct ward_sh_word *w)
{
	size_t o, l;

	span(wk, w->off, w->len, &o, &l);
	if (!ward_vd_word_init(wk->c, out, w->text, w->flags, o, l))
		return false;
	out->unresolved = word_unresolved(wk->c, w);
	out->alt = expand_known(wk->c, w);
	if (out->alt && strcmp(out->alt, out->fold) == 0) {
		free(out->alt);
		out->alt = NULL;
	}
	return !wk->c->failed;
}

static void forget_var(struct ctx *c, const char *name, size_t len);

/* declare -A m; m[k]=v: still an associative array (and -i an integer) */
static void inherit_attrs(struct ctx *c, struct var *g)
{
	for (size_t i = c->n_vars; g->name && i-- > 0;)
		if (strcmp(c->vars[i].name, g->name) == 0) {
			g->assoc = c->vars[i].assoc;
			g->integer = c->vars[i].integer;
			return;
		}
}

/* x=value alone on its line: remember it for the words after. */
static void remember_var(struct ctx *c, const struct word *w)
{
	const char *eq = strchr(w->text, '='), *val;
	struct var *g;

	if (!eq || eq == w->text)
		return;
	if (eq[-1] == '+') {
		/* x+=rm: appended to, its value no longer the one remembered */
		forget_var(c, w->text, (size_t)(eq - 1 - w->text));
		return;
	}
	/* the value as far as known: after '=' in the expanded form */
	val = w->alt && strchr(w->alt, '=') ? strchr(w->alt, '=') + 1 : eq + 1;
	if (w->flags & (WARD_SH_W_CMDSUB | WARD_SH_W_ARITH | WARD_SH_W_PROCSUB))
		val = "";
	g = realloc(c->vars, (c->n_vars + 1) * sizeof(*g));
	if (!g) {
		c->failed = 1;
		return;
	}
	c->vars = g;
	memset(&g[c->n_vars], 0, sizeof(*g));
	g[c->n_vars].name = strndup(w->text, (size_t)(eq - w->text));
	g[c->n_vars].value = strdup(val);
	g[c->n_vars].known = !w->unresolved;
	inherit_attrs(c, &g[c->n_vars]);
	if (strcmp(g[c->n_vars].name ? g[c->n_vars].name : "", "IFS") == 0)
		c->ifs_changed = true;
	if (!g[c->n_vars].name || !g[c->n_vars].value) {
		free(g[c->n_vars].name);
		free(g[c->n_vars].value);
		c->failed = 1;
		return;
	}
	c->n_vars++;
}

/* A variable set to a value ward does not know (read x, for x in …, unset x). */
static void forget_var(struct ctx *c, const char *name, size_t len)
{
	struct var *g;

	if (!len || name[0] == '-')
		return;
	/* printf -v 'a[0]', read 'a[1]': the array a */
	if (memchr(name, '[', len))
		len = (size_t)((const char *)memchr(name, '[', len) - name);
	if (!len)
		return;
	g = realloc(c->vars, (c->n_vars + 1) * sizeof(*g));
	if (!g) {
		c->failed = 1;
		return;
	}
	c->vars = g;
	memset(&g[c->n_vars], 0, sizeof(*g));
	g[c->n_vars].name = strndup(name, len);
	g[c->n_vars].value = strdup("");
	g[c->n_vars].known = false;
	inherit_attrs(c, &g[c->n_vars]);
	if (!g[c->n_vars].name || !g[c->n_vars].value) {
		free(g[c->n_vars].name);
		free(g[c->n_vars].value);
		c->failed = 1;
		return;
	}
	if (strcmp(g[c->n_vars].name, "IFS") == 0)
		c->ifs_changed = true;
	c->n_vars++;
}

/* Builtins that set the variables they name to what only the run knows; a
 * sourced file may set any. */
static void forget_set_vars(struct ctx *c, const struct view *v)
{
	const char *prog = ward_vd_prog_of(v);
	size_t i;

	/* a sourced file may set any variable; so may trap code, which runs
	 * before any later command (DEBUG) */
	if (ward_vd_in_list(prog, "source . trap"))
		c->vars_untrusted = true;
	/* command export y=rm, builtin read y: the builtin behind them sets
	 * what the walk only follows by its own name */
	if (ward_vd_in_list(prog, "command builtin")) {
		for (i = 1; i < v->n && v->w[i].text[0] == '-'; i++)
			;
		if (i < v->n && !ward_vd_in_list(v->w[i - 1].text, "-v -V") &&
		    ward_vd_in_list(v->w[i].text, ". source trap eval read unset getopts mapfile "
						  "readarray declare typeset local export readonly "
						  "printf set shift command builtin"))
			c->vars_untrusted = c->ifs_changed = true;
	}
	/* a name that is itself an expansion (n=x; export $n=rm, read $n,
	 * unset $n, printf -v "$n"): which variable it sets is only known
	 * when it runs (IFS among them) */
	if (ward_vd_in_list(prog, "unset read getopts mapfile readarray printf declare typeset local "
				  "export readonly"))
		for (i = 1; i < v->n; i++) {
			const char *t = v->w[i].text;
			size_t k = strcspn(t, "=[");

			if (strcmp(prog, "printf") == 0 && strcmp(v->w[i - 1].text, "-v") != 0)
				continue; /* printf's format and arguments are no name */
			if (strcmp(prog, "read") == 0 &&
			    ward_vd_in_list(v->w[i - 1].text, "-d -i -n -N -p -t -u"))
				continue; /* read -p "$prompt" x: an option's value */
			if (memchr(t, '$', k) || memchr(t, '`', k)) {
				c->vars_untrusted = true;
				c->ifs_changed = true;
			}
		}
	if (ward_vd_in_list(prog, "unset read getopts mapfile readarray")) {
		for (i = 1; i < v->n; i++)
			if (v->w[i].text[0] != '-')
				forget_var(c, v->w[i].text, strlen(v->w[i].text));
	}
	/* declare -n x=y: x names y, and an assignment to x sets y (or
	 * whatever x is made to name later): no variable is known from here */
	if (ward_vd_in_list(prog, "declare typeset local"))
		for (i = 1; i < v->n && v->w[i].text[0] == '-'; i++)
			if (strchr(v->w[i].text, 'n'))
				c->vars_untrusted = true;
	if (ward_vd_in_list(prog, "printf declare typeset local export readonly"))
		for (i = 1; i + 1 < v->n; i++)
			if (strcmp(v->w[i].text, "-v") == 0 ||
			    (prog[0] != 'p' && !strchr(v->w[i + 1].text, '=') && v->w[i].text[0] == '-'))
				forget_var(c, v->w[i + 1].text, strlen(v->w[i + 1].text));
}

static const struct var *find_var(const struct ctx *c, const char *name)
{
	size_t i = c->n_vars;

	if (c->vars_untrusted)
		return NULL;
	while (i-- > 0)
		if (strcmp(c->vars[i].name, name) == 0)
			return &c->vars[i];
	return NULL;
}

/* bash: NAME=(…) with every element a literal: remembered element by element,
 * so "${NAME[@]}" as a program is what it holds; otherwise not known. */
static void remember_array(struct ctx *c, const struct ward_sh_word *w)
{
	const char *eq = strchr(w->text, '=');
	size_t nlen, i;
	bool known = true;
	struct var *g;

	if (!eq || eq == w->text)
		return;
	nlen = (size_t)(eq - w->text);
	const struct var *old = NULL;
	char *name = NULL;

	if (eq[-1] == '+') {
		/* a+=(…): appended to an array of literals, still known */
		nlen--;
		name = strndup(w->text, nlen);
		if (!name) {
			c->failed = 1;
			return;
		}
		old = find_var(c, name);
		free(name);
		if (!old || !old->array || !old->known)
			known = false;
	}
	for (i = 0; i < w->n_elems && known; i++) {
		const struct ward_sh_word *e = &w->elems[i];

		if (word_unresolved(c, e) || (e->flags & (WARD_SH_W_GLOB | WARD_SH_W_BRACE)) ||
		    e->text[0] == '[' || strlen(e->text) != e->text_len)
			known = false;
	}
	forget_var(c, w->text, nlen);
	if (c->failed || !known)
		return;
	g = &c->vars[c->n_vars - 1];
	/* find_var's pointer may have moved with the realloc: look again */
	old = NULL;
	for (i = c->n_vars - 1; eq[-1] == '+' && i-- > 0;)
		if (strcmp(c->vars[i].name, g->name) == 0) {
			old = &c->vars[i];
			break;
		}
	g->known = true;
	g->array = true;
	g->elems = calloc(w->n_elems + (old ? old->n_elems : 0) + 1, sizeof(char *));
	if (!g->elems) {
		c->failed = 1;
		return;
	}
	for (i = 0; old && i < old->n_elems; i++) {
		g->elems[g->n_elems] = strdup(old->elems[i]);
		if (!g->elems[g->n_elems]) {
			c->failed = 1;
			return;
		}
		g->n_elems++;
	}
	for (i = 0; i < w->n_elems; i++) {
		g->elems[g->n_elems] = strdup(w->elems[i].text);
		if (!g->elems[g->n_elems]) {
			c->failed = 1;
			return;
		}
		g->n_elems++;
	}
	if (g->n_elems) {
		free(g->value);
		g->value = strdup(g->elems[0]);
		if (!g->value)
			c->failed = 1;
	}
}

/* declare -A NAME: its subscripts are keys; declare -i NAME: what it is
 * assigned is arithmetic */
static void remember_assoc(struct ctx *c, const struct view *v)
{
	bool assoc = false, integer = false;

	if (!ward_vd_in_list(ward_vd_prog_of(v), "declare typeset local"))
		return;
	for (size_t i = 1; i < v->n; i++) {
		const char *t = v->w[i].text;

		if (t[0] == '-') {
			assoc = assoc || strchr(t, 'A');
			integer = integer || strchr(t, 'i');
			continue;
		}
		if (!assoc && !integer)
			continue;
		size_t k = strcspn(t, "=[");

		for (size_t j = c->n_vars; j-- > 0;)
			if (strlen(c->vars[j].name) == k && strncmp(c->vars[j].name, t, k) == 0) {
				c->vars[j].assoc |= assoc;
				c->vars[j].integer |= integer;
				goto next;
			}
		size_t before = c->n_vars;

		forget_var(c, t, k);
		/* not a name (declare -A =x): nothing was remembered */
		if (c->n_vars > before) {
			c->vars[c->n_vars - 1].assoc = assoc;
			c->vars[c->n_vars - 1].integer = integer;
		}
next:;
	}
}

/* x=VALUE to a variable declared -i: VALUE is arithmetic */
static bool integer_assign_dynamic(const struct ctx *c, const struct ward_sh_word *w)
{
	size_t k = strcspn(w->text, "+=[");
	const char *eq = strchr(w->text, '=');

	if (!c->bash || !eq)
		return false;
	for (size_t j = c->n_vars; j-- > 0;)
		if (strlen(c->vars[j].name) == k && strncmp(c->vars[j].name, w->text, k) == 0)
			return c->vars[j].integer && ward_vd_arith_unknown(c, eq + 1);
	return false;
}

static bool is_assoc(const struct ctx *c, const char *name, size_t len)
{
	for (size_t j = c->n_vars; j-- > 0;)
		if (strlen(c->vars[j].name) == len && strncmp(c->vars[j].name, name, len) == 0)
			return c->vars[j].assoc;
	return false;
}

/* bash evaluates an indexed array's subscript as arithmetic: a variable in
 * it whose value is not known, or a substitution, may run code. Returns the
 * offending word part's offset, or (size_t)-1. */
static size_t word_dynamic_index(const struct ctx *c, const struct ward_sh_tree *t,
				 const struct ward_sh_word *w, bool assoc_decl)
{
	size_t i, r;

	/* a=([k]=v …): the keys of an indexed array are arithmetic too */
	if ((w->flags & WARD_SH_W_ARRAY) && !assoc_decl && !is_assoc(c, w->text, strcspn(w->text, "+=")))
		for (i = 0; i < w->n_elems; i++) {
			const struct ward_sh_word *e = &w->elems[i];
			size_t k;

			if (e->text[0] != '[' || !(k = strcspn(e->text, "]")) || !e->text[k])
				continue;
			char *key = strndup(e->text + 1, k - 1);

			if (!key)
				return e->off;
			r = ward_vd_arith_unknown(c, key) ? e->off : (size_t)-1;
			free(key);
			if (r != (size_t)-1)
				return r;
		}

	if ((w->flags & WARD_SH_W_SUBSCRIPT) && !is_assoc(c, w->text, strcspn(w->text, "["))) {
		char *ix = strndup(t->src + w->index_off, w->index_len);

		if (!ix)
			return w->off;
		r = ward_vd_arith_unknown(c, ix) ? w->off : (size_t)-1;
		free(ix);
		if (r != (size_t)-1)
			return r;
	}
	for (i = 0; i < w->n_elems; i++)
		if ((r = word_dynamic_index(c, t, &w->elems[i], assoc_decl)) != (size_t)-1)
			return r;
	for (i = 0; i < w->n_parts; i++) {
		const struct ward_sh_part *p = &w->parts[i];

		if (p->kind == WARD_SH_P_PARAM && p->index && !p->indirect &&
		    strcmp(p->index->text, "@") != 0 && strcmp(p->index->text, "*") != 0 &&
		    !is_assoc(c, p->text, strlen(p->text)) && ward_vd_arith_unknown(c, p->index->text))
			return p->off;
		if (p->arg && (r = word_dynamic_index(c, t, p->arg, false)) != (size_t)-1)
			return r;
		if (p->index && (r = word_dynamic_index(c, t, p->index, false)) != (size_t)-1)
			return r;
	}
	return (size_t)-1;
}

/* After arithmetic that reads only known values, the names it assigns
 * (NAME = …, NAME op= …) hold numbers. */
static void remember_arith_assigns(struct ctx *c, const char *text)
{
	for (const char *s = text; *s && !c->failed; s++) {
		const char *e;

		if (!(isalpha((unsigned char)*s) || *s == '_') ||
		    (s > text && (isalnum((unsigned char)s[-1]) || s[-1] == '_')))
			continue;
		for (e = s; isalnum((unsigned char)*e) || *e == '_'; e++)
			;
		const char *q = e;

		if (*q == '[') { /* (( a[0] = 5 )): the array changes */
			forget_var(c, s, (size_t)(e - s));
			s = e - 1;
			continue;
		}

		while (*q == ' ' || *q == '\t')
			q++;
		if ((q[0] == '=' && q[1] != '=') || (q[0] && strchr("+-*/%&|^", q[0]) && q[1] == '=') ||
		    (q[0] == '+' && q[1] == '+') || (q[0] == '-' && q[1] == '-')) {
			forget_var(c, s, (size_t)(e - s));
			if (!c->failed) {
				struct var *g = &c->vars[c->n_vars - 1];

				free(g->value);
				g->value = strdup("0");
				g->known = g->value != NULL;
				if (!g->value)
					c->failed = 1;
			}
		}
		s = e - 1;
	}
}

/* bash: (( … )), for (( … )), a subscript, [[ x -eq y ]]: code in values. */
static void check_bash_node(const struct walk *wk, const struct ward_sh_node *n)
{
	struct ctx *c = wk->c;
	size_t at = (size_t)-1, i;
	struct cmd cmd;

	if (!c->bash)
		return;
	if (n->kind == WARD_SH_ARITH || n->kind == WARD_SH_ARITH_FOR) {
		char *all = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&all, &len);

		if (!f) {
			c->failed = 1;
			return;
		}
		for (i = 0; i < n->n_words; i++)
			fprintf(f, "%s;", n->words[i].text);
		if (fclose(f) != 0) {
			free(all);
			c->failed = 1;
			return;
		}
		if (ward_vd_arith_unknown(c, all))
			at = n->off;
		else
			remember_arith_assigns(c, all);
		free(all);
	}
	if (n->kind == WARD_SH_COND)
		for (i = 0; i < n->n_words && at == (size_t)-1; i++) {
			const char *op = n->words[i].text;

			if (ward_vd_in_list(op, "-eq -ne -lt -le -gt -ge") &&
			    ((i > 0 && ward_vd_arith_unknown(c, n->words[i - 1].text)) ||
			     (i + 1 < n->n_words && ward_vd_arith_unknown(c, n->words[i + 1].text))))
				at = n->words[i].off;
			if (strcmp(op, "-v") == 0 && i + 1 < n->n_words &&
			    strchr(n->words[i + 1].text, '[') &&
			    strpbrk(strchr(n->words[i + 1].text, '['), "$`"))
				at = n->words[i].off;
		}
	bool assoc_decl = false;

	for (i = 1; n->kind == WARD_SH_SIMPLE && n->n_words && i < n->n_words &&
		    ward_vd_in_list(n->words[0].text, "declare typeset local"); i++)
		if (n->words[i].text[0] == '-' && strchr(n->words[i].text, 'A'))
			assoc_decl = true;
	for (i = 0; i < n->n_assigns && at == (size_t)-1; i++) {
		at = word_dynamic_index(c, wk->t, &n->assigns[i], false);
		if (at == (size_t)-1 && integer_assign_dynamic(c, &n->assigns[i]))
			at = n->assigns[i].off;
	}
	for (i = 0; i < n->n_words && at == (size_t)-1; i++)
		at = word_dynamic_index(c, wk->t, &n->words[i], assoc_decl);
	for (i = 0; i < n->n_redirs && at == (size_t)-1; i++)
		at = word_dynamic_index(c, wk->t, &n->redirs[i].target, false);
	if (at == (size_t)-1)
		return;
	memset(&cmd, 0, sizeof(cmd));
	span(wk, n->off, n->len, &cmd.off, &cmd.len);
	cmd.depth = wk->depth;
	ward_vd_refuse_synthetic(c, "dangerous.dynamic-code",
				 "bash evaluates this arithmetic or array subscript, and a value it "
				 "reads (a variable not set literally, a substitution) can run commands",
				 &cmd, ward_sh_kind_name(n->kind));
	/* (( i = 0 )): known numbers from here on */
}

static void fill_redirs(const struct walk *wk, struct cmd *cmd, const struct ward_sh_redir *rs,
			size_t n)
{
	size_t i;

	cmd->r = calloc(n ? n : 1, sizeof(*cmd->r));
	if (!cmd->r) {
		wk->c->failed = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		const struct ward_sh_redir *r = &rs[i];
		struct redir *d = &cmd->r[cmd->nr];

		d->fd = r->fd;
		switch (r->op) {
		case WARD_SH_R_IN:
			d->kind = RD_READ;
			break;
		case WARD_SH_R_RDWR:
			d->kind = RD_RDWR;
			break;
		case WARD_SH_R_DUP_IN:
		case WARD_SH_R_DUP_OUT:
			d->kind = RD_DUP;
			break;
		case WARD_SH_R_HERESTRING:
		case WARD_SH_R_HEREDOC:
			d->kind = RD_STRING;
			break;
		default:
			d->kind = RD_WRITE;
		}
		if (!sh_word(wk, &d->target, r->op == WARD_SH_R_HEREDOC ? &r->body : &r->target))
			return;
		cmd->nr++;
	}
}

static void fill_cmd(const struct walk *wk, struct cmd *cmd, const struct ward_sh_node *n)
{
	size_t i;

	memset(cmd, 0, sizeof(*cmd));
	cmd->node = n;
	cmd->tree = wk->t;
	span(wk, n->off, n->len, &cmd->off, &cmd->len);
	cmd->depth = wk->depth;
	fill_redirs(wk, cmd, n->redirs, n->n_redirs);
	cmd->assigns = calloc(n->n_assigns + 1, sizeof(*cmd->assigns));
	if (!cmd->assigns) {
		wk->c->failed = 1;
		return;
	}
	for (i = 0; i < n->n_assigns; i++)
		if (sh_word(wk, &cmd->assigns[cmd->n_assigns], &n->assigns[i]))
			cmd->n_assigns++;
}

static void build_view_words(struct ctx *c, const struct ward_sh_node *n, const struct walk *wk,
			     struct word **out, size_t *n_out)
{
	size_t i, cap = n->n_words + 1;

	*out = calloc(cap, sizeof(**out));
	*n_out = 0;
	if (!*out) {
		c->failed = 1;
		return;
	}
	for (i = 0; i < n->n_words && !c->failed; i++) {
		const struct ward_sh_word *w = &n->words[i];
		char **parts = NULL;
		size_t n_parts = 0, k;

		/* bash: "${a[@]}" of an array of literals is its elements */
		const struct var *arr = NULL;

		if (w->n_parts == 1 && w->parts[0].kind == WARD_SH_P_PARAM && w->parts[0].index &&
		    !w->parts[0].op[0] && !w->parts[0].indirect && !c->ifs_changed)
			arr = find_var(c, w->parts[0].text);
		if (arr && arr->array && arr->known) {
			const char *ix = w->parts[0].index->text;
			size_t from = 0, to = arr->n_elems;
			bool ok = true;

			if (strcmp(ix, "@") != 0 && strcmp(ix, "*") != 0) {
				char *end;
				unsigned long at = strtoul(ix, &end, 10);

				ok = *ix && !*end && at < arr->n_elems;
				from = at;
				to = at + 1;
			}
			for (k = from; ok && k < to; k++)
				if (w->parts[0].quote == WARD_SH_Q_NONE && strpbrk(arr->elems[k], " \t\n*?["))
					ok = false;
			if (ok && *ix == '*' && w->parts[0].quote != WARD_SH_Q_NONE)
				ok = false; /* "${a[*]}" is one word */
			if (ok) {
				struct word *g = realloc(*out, (cap += to - from) * sizeof(*g));

				if (!g) {
					c->failed = 1;
					return;
				}
				*out = g;
				for (k = from; k < to; k++) {
					size_t o, l;

					span(wk, w->off, w->len, &o, &l);
					if (ward_vd_word_init(c, &(*out)[*n_out], arr->elems[k], 0, o, l))
						(*n_out)++;
				}
				continue;
			}
		}
		/* bash makes several words of {a,b}: `{rm,-rf,/}` is rm -rf / */
		if (!(w->flags & WARD_SH_W_BRACE) || !wk->t ||
		    ward_sh_word_brace_expand(wk->t, w, &parts, &n_parts, NULL) < 0 || n_parts < 1) {
			ward_sh_strv_free(parts, n_parts);
			if (sh_word(wk, &(*out)[*n_out], w))
				(*n_out)++;
			continue;
		}
		/* room for these and for the words still to come */
		if (*n_out + n_parts + (n->n_words - i - 1) + 1 > cap) {
			struct word *g = realloc(*out, (cap = *n_out + n_parts + n->n_words + 1) *
							       sizeof(*g));

			if (!g) {
				ward_sh_strv_free(parts, n_parts);
				c->failed = 1;
				return;
			}
			*out = g;
		}
		for (k = 0; k < n_parts; k++) {
			size_t o, l;

			span(wk, w->off, w->len, &o, &l);
			if (ward_vd_word_init(c, &(*out)[*n_out], parts[k], w->flags & ~WARD_SH_W_BRACE, o, l))
				(*n_out)++;
		}
		ward_sh_strv_free(parts, n_parts);
	}
}

/* Simple commands inside a node (for the earlier commands of a pipeline). */
static void collect_simple(const struct walk *wk, const struct ward_sh_node *n, struct cmd **v,
			   size_t *nv)
{
	size_t i;

	if (!n || *nv >= MAX_UPSTREAM)
		return;
	if (n->kind == WARD_SH_SIMPLE) {
		struct cmd *g = realloc(*v, (*nv + 1) * sizeof(*g));

		if (!g) {
			wk->c->failed = 1;
			return;
		}
		*v = g;
		fill_cmd(wk, &(*v)[*nv], n);
		(*nv)++;
		return;
	}
	for (i = 0; i < n->n_kids; i++)
		collect_simple(wk, n->kids[i], v, nv);
}

/* Whether a node reads a pipe: it, or a compound command around it, is a
 * later element of a pipeline. Fills the earlier elements' commands. */
static bool find_pipe(const struct walk *wk, const struct ward_sh_node *n, struct cmd *cmd)
{
	struct ctx *c = wk->c;
	const struct ward_sh_node *p;

	for (; (p = n->parent); n = p) {
		size_t i, k;

		if (p->kind != WARD_SH_PIPELINE)
			continue;
		/* the elements are visited in order: go on from the last one
		 * found, so a long pipeline costs linear time */
		i = c->pipe_node == p && c->pipe_idx < p->n_kids ? c->pipe_idx : 0;
		while (i < p->n_kids && p->kids[i] != n)
			i++;
		if (i == p->n_kids)
			for (i = 0; i < p->n_kids && p->kids[i] != n; i++)
				;
		c->pipe_node = p;
		c->pipe_idx = i;
		if (i == 0 || i == p->n_kids)
			continue;
		/* the nearest elements: what feeds a shell sits right before it */
		for (k = i > MAX_UPSTREAM ? i - MAX_UPSTREAM : 0; k < i; k++)
			collect_simple(wk, p->kids[k], &cmd->up, &cmd->n_up);
		return true;
	}
	return false;
}

/* A view from a cmd made by collect_simple: words from its node, kept by
 * the ctx until the end. */
static void build_view_of(struct ctx *c, const struct cmd *cmd, struct view *out)
{
	struct walk wk = { .c = c, .span_len = (size_t)-1, .t = cmd->tree };
	struct held *g;

	memset(out, 0, sizeof(*out));
	out->cmd = cmd;
	if (!cmd->node)
		return;
	g = realloc(c->held, (c->n_held + 1) * sizeof(*g));
	if (!g) {
		c->failed = 1;
		return;
	}
	c->held = g;
	wk.span_off = cmd->off;
	wk.span_len = cmd->len;
	build_view_words(c, cmd->node, &wk, &g[c->n_held].w, &g[c->n_held].n);
	out->w = g[c->n_held].w;
	out->n = g[c->n_held].n;
	c->n_held++;
	/* look through simple wrappers to the program that writes the pipe */
	while (out->n > 1 &&
	       ward_vd_in_list(ward_vd_prog_of(out), "env nice nohup stdbuf time command exec "
						     "sudo doas busybox setsid")) {
		size_t i = strcmp(ward_vd_prog_of(out), "env") == 0 ? 1 :
								       ward_vd_skip_opts(out, 1, "nioeu");

		while (i < out->n && strchr(out->w[i].text, '=') && out->w[i].text[0] != '-')
			i++;
		if (i >= out->n)
			break;
		out->w += i;
		out->n -= i;
	}
}

static void held_free(struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->n_held; i++)
		ward_vd_words_free(c->held[i].w, c->held[i].n);
	free(c->held);
	c->held = NULL;
	c->n_held = 0;
}

static void add_segment(struct ctx *c, const struct cmd *cmd, const struct word *w, size_t n)
{
	struct ward_verdict_segment *s;
	size_t i, len = 1;

	if (c->n_segs == c->cap_segs) {
		size_t cap = c->cap_segs ? c->cap_segs * 2 : 8;
		struct ward_verdict_segment *g = realloc(c->segs, cap * sizeof(*g));

		if (!g) {
			c->failed = 1;
			return;
		}
		c->segs = g;
		c->cap_segs = cap;
	}
	s = &c->segs[c->n_segs];
	memset(s, 0, sizeof(*s));
	s->offset = cmd->off;
	s->length = cmd->len;
	s->depth = cmd->depth;
	s->text = strndup(c->top + (cmd->off <= c->top_len ? cmd->off : c->top_len),
			  cmd->off + cmd->len <= c->top_len ? cmd->len : 0);
	for (i = 0; i < n; i++)
		len += strlen(w[i].text) + 1;
	s->argv = calloc(1, len);
	if (!s->text || !s->argv) {
		free(s->text);
		free(s->argv);
		c->failed = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		if (i)
			strcat(s->argv, " ");
		strcat(s->argv, w[i].text);
	}
	c->n_segs++;
}

static int visit(const struct ward_sh_node *n, const struct ward_sh_visit_info *info, void *data)
{
	struct walk *wk = data;
	struct ctx *c = wk->c;
	struct cmd cmd;
	struct view v = { 0 };
	size_t i;

	if (c->failed)
		return 1;
	if ((n->kind == WARD_SH_FOR || n->kind == WARD_SH_SELECT) && n->name) {
		forget_var(c, n->name->text, strlen(n->name->text)); /* for x in …: each in turn */
		/* for i in "${!a[@]}" over an indexed array: numbers */
		if (n->kind == WARD_SH_FOR && n->n_words == 1 && n->words[0].n_parts == 1 &&
		    n->words[0].parts[0].indirect && n->words[0].parts[0].index &&
		    !is_assoc(c, n->words[0].parts[0].text, strlen(n->words[0].parts[0].text)) &&
		    !c->failed) {
			struct var *g = &c->vars[c->n_vars - 1];

			free(g->value);
			g->value = strdup("0");
			g->known = g->value != NULL;
			if (!g->value)
				c->failed = 1;
		}
	}
	check_bash_node(wk, n);
	/* a function's body runs when it is called, maybe after later
	 * assignments it overwrites: `f() { x=rm; }; x=ls; f; $x` */
	if (n->kind == WARD_SH_FUNCTION)
		c->vars_untrusted = true;
	if (n->kind != WARD_SH_SIMPLE && !n->n_redirs)
		return 0;
	fill_cmd(wk, &cmd, n);
	cmd.in_subst = info->sub_depth > 0;
	cmd.piped = find_pipe(wk, n, &cmd);
	/* bash: >(…) reads what the command around it writes: a pipe */
	if (!cmd.piped && info->context == WARD_SH_CTX_PROCSUB && info->sub_part &&
	    info->sub_part->procsub_dir == '>')
		cmd.piped = true;
	/* and a coproc reads what the string writes to ${COPROC[1]} */
	for (const struct ward_sh_node *up = n->parent; up && !cmd.piped; up = up->parent)
		if (up->kind == WARD_SH_COPROC)
			cmd.piped = true;
	v.cmd = &cmd;
	if (n->kind == WARD_SH_SIMPLE) {
		build_view_words(c, n, wk, &v.w, &v.n);
		add_segment(c, &cmd, v.w, v.n);
		for (i = 0; i < cmd.n_assigns; i++) {
			ward_vd_assignment(c, &v, &cmd.assigns[i], wk->depth);
			/* dash (bash --posix): before a special builtin the
			 * assignment stays, `x=rm :; $x`; bash drops it */
			if (v.n && ward_vd_in_list(ward_vd_prog_of(&v),
						   ": . break continue eval exec exit export readonly "
						   "return set shift times trap unset"))
				forget_var(c, n->assigns[i].text,
					   strcspn(n->assigns[i].text, "[+="));
			if (v.n)
				continue;
			if (n->assigns[i].flags & WARD_SH_W_ARRAY)
				remember_array(c, &n->assigns[i]);
			else if (n->assigns[i].flags & WARD_SH_W_SUBSCRIPT)
				forget_var(c, n->assigns[i].text, strcspn(n->assigns[i].text, "[+="));
			else
				remember_var(c, &cmd.assigns[i]);
		}
		if (v.n && ward_vd_in_list(ward_vd_prog_of(&v), "export readonly declare typeset local")) {
			for (i = 1; i < v.n; i++)
				remember_var(c, &v.w[i]);
			for (i = 1; i < n->n_words; i++)
				if (n->words[i].flags & WARD_SH_W_ARRAY)
					remember_array(c, &n->words[i]);
				else if (n->words[i].flags & WARD_SH_W_SUBSCRIPT)
					forget_var(c, n->words[i].text, strcspn(n->words[i].text, "[+="));
			remember_assoc(c, &v);
		}
		if (v.n)
			forget_set_vars(c, &v);
		/* an unquoted $x as the program is split into words: `x='rm -rf /';
		 * $x` runs rm */
		if (v.n && v.w[0].alt && strpbrk(v.w[0].alt, " \t\n"))
			ward_vd_shell_string(c, &v, &v.w[0], v.w[0].alt, true, wk->depth + 1);
	}
	if (v.n) {
		ward_vd_check_view(c, &v, wk->depth);
	} else {
		/* redirects alone (`> f`, `{ …; } > f`): the rules on files */
		struct word none = { .text = (char *)"", .fold = (char *)"" };
		struct view r = { .w = &none, .n = 1, .cmd = &cmd };

		ward_vd_match_rules(c, &r);
	}
	ward_vd_words_free(v.w, v.n);
	cmd_release(&cmd);
	held_free(c); /* the upstream views of this command */
	return c->failed ? 1 : 0;
}

void ward_vd_validate_string(struct ctx *c, const char *src, size_t len, unsigned dialect,
			     size_t span_off, size_t span_len, int depth)
{
	struct ward_sh_tree *t = NULL;
	struct ward_error *perr = NULL;
	struct walk wk = { .c = c, .depth = depth, .span_off = span_off, .span_len = span_len };
	struct cmd here = { .off = span_off, .len = span_len, .depth = depth };

	if (c->failed)
		return;
	if (depth > MAX_DEPTH) {
		ward_vd_refuse_synthetic(c, "validator.too-deep", "wrappers or strings nested too deep to check",
				 &here, "");
		return;
	}
	check_whole(c, src, len, span_off, span_len);
	if (ward_sh_parse(src, len, dialect, &t, &perr) < 0) {
		if (perr && perr->kind != WARD_ERR_INVALID_PARAMETERS)
			c->failed = 1;
		else
			ward_vd_refuse_synthetic(c, "validator.unparsed",
					 "a string run by a shell that ward cannot parse", &here,
					 perr ? perr->message : "");
		ward_error_free(perr);
		return;
	}
	wk.t = t;
	ward_sh_visit_nodes(t, note_uncertain, c);
	ward_sh_visit_nodes(t, visit, &wk);
	ward_sh_tree_free(t);
}

/* ---- the API ------------------------------------------------------------- */

static int finish(struct ctx *c, struct ward_verdict *v, struct ward_error **err)
{
	struct match *b = &c->best;

	held_free(c);
	for (size_t i = 0; i < c->n_vars; i++) {
		free(c->vars[i].name);
		free(c->vars[i].value);
		ward_sh_strv_free(c->vars[i].elems, c->vars[i].n_elems);
	}
	free(c->vars);
	for (size_t i = 0; i < c->n_downloads; i++)
		free(c->downloads[i]);
	free(c->downloads);
	for (size_t i = 0; i < c->n_uncertain; i++)
		free(c->uncertain[i]);
	free(c->uncertain);
	for (size_t i = 0; i < c->n_assigned; i++) {
		free(c->assigned[i].name);
		free(c->assigned[i].value);
	}
	free(c->assigned);
	for (size_t i = 0; i < c->n_written; i++) {
		free(c->written[i].path);
		free(c->written[i].text);
	}
	free(c->written);
	if (c->failed) {
		free(b->matched);
		for (size_t i = 0; i < c->n_segs; i++) {
			free(c->segs[i].text);
			free(c->segs[i].argv);
		}
		free(c->segs);
		return ward_error_make(err, ENOMEM, "validate");
	}
	v->kind = (enum ward_verdict_kind)b->kind;
	v->segments = c->segs;
	v->n_segments = c->n_segs;
	if (b->kind) {
		v->rule = strdup(b->rule ? b->rule->id : b->synthetic_id);
		v->category = strdup(b->rule ? b->rule->category : "dangerous");
		v->words = strdup(b->rule ? b->rule->words : b->synthetic_words);
		v->offset = b->off;
		v->length = b->len;
		v->segment = strndup(c->top + (b->off <= c->top_len ? b->off : c->top_len),
				     b->off + b->len <= c->top_len ? b->len : 0);
		v->matched = b->matched;
		if (!v->rule || !v->category || !v->words || !v->segment) {
			ward_verdict_release(v);
			return ward_error_make(err, ENOMEM, "validate");
		}
	} else {
		free(b->matched);
	}
	return 0;
}

int ward_validate(const struct ward_rules *rules, const char *command, struct ward_verdict *v,
		  struct ward_error **err)
{
	return ward_validate_shell(rules, command, WARD_SHELL_SH, v, err);
}

int ward_validate_shell(const struct ward_rules *rules, const char *command,
			enum ward_shell shell, struct ward_verdict *v, struct ward_error **err)
{
	struct ctx c = { .rules = rules, .top = command, .err = err,
			 .bash = (shell & ~WARD_VALIDATE_OVERLAY) == WARD_SHELL_BASH,
			 .overlay = (shell & WARD_VALIDATE_OVERLAY) != 0 };
	struct ward_sh_tree *t = NULL;
	struct walk wk = { .c = &c, .span_len = (size_t)-1 };

	memset(v, 0, sizeof(*v));
	if (!c.rules && !(c.rules = ward_rules_builtin(err)))
		return -1;
	if (!command)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "no command");
	c.top_len = strlen(command);
	/* The whole-string rules first: what they catch (a fork bomb) may be
	 * what the parser cannot read. */
	check_whole(&c, command, c.top_len, 0, c.top_len);
	/* ward runs the string with /bin/sh -c (Debian's dash, POSIX) or, asked
	 * for, /bin/bash -c: parsed in the dialect of the shell that runs it */
	if (ward_sh_parse(command, c.top_len, c.bash ? 0 : WARD_SH_POSIX, &t, err) < 0) {
		if (c.best.kind == WARD_VERDICT_REFUSED && err && *err &&
		    (*err)->kind == WARD_ERR_INVALID_PARAMETERS) {
			ward_error_free(*err);
			*err = NULL;
			return finish(&c, v, err);
		}
		free(c.best.matched);
		return -1;
	}
	wk.t = t;
	ward_sh_visit_nodes(t, note_uncertain, &c);
	ward_sh_visit_nodes(t, visit, &wk);
	ward_sh_tree_free(t);
	return finish(&c, v, err);
}

int ward_validate_argv(const struct ward_rules *rules, char *const argv[], struct ward_verdict *v,
		       struct ward_error **err)
{
	struct ctx c = { .rules = rules };
	_cleanup_free_ char *joined = NULL;
	struct cmd cmd = { 0 };
	struct view view = { 0 };
	size_t n = 0, len = 0, i, off = 0;

	memset(v, 0, sizeof(*v));
	if (!c.rules && !(c.rules = ward_rules_builtin(err)))
		return -1;
	if (!argv || !argv[0] || !argv[0][0])
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "no command");
	for (n = 0; argv[n]; n++)
		len += strlen(argv[n]) + 1;
	joined = calloc(1, len + 1);
	view.w = calloc(n, sizeof(*view.w));
	if (!joined || !view.w) {
		free(view.w);
		return ward_error_make(err, ENOMEM, "validate");
	}
	for (i = 0; i < n; i++) {
		if (i)
			strcat(joined, " ");
		strcat(joined, argv[i]);
		if (!ward_vd_word_init(&c, &view.w[i], argv[i], 0, off, strlen(argv[i])))
			break;
		view.n++;
		off += strlen(argv[i]) + 1;
	}
	c.top = joined;
	c.top_len = strlen(joined);
	cmd.off = 0;
	cmd.len = c.top_len;
	view.cmd = &cmd;
	add_segment(&c, &cmd, view.w, view.n);
	ward_vd_check_view(&c, &view, 0);
	ward_vd_words_free(view.w, view.n);
	return finish(&c, v, err);
}

void ward_verdict_release(struct ward_verdict *v)
{
	size_t i;

	if (!v)
		return;
	free(v->rule);
	free(v->category);
	free(v->words);
	free(v->segment);
	free(v->matched);
	for (i = 0; i < v->n_segments; i++) {
		free(v->segments[i].text);
		free(v->segments[i].argv);
	}
	free(v->segments);
	memset(v, 0, sizeof(*v));
}

const char *ward_verdict_kind_name(enum ward_verdict_kind kind)
{
	switch (kind) {
	case WARD_VERDICT_ALLOWED:
		return "allowed";
	case WARD_VERDICT_APPROVAL_REQUIRED:
		return "approval_required";
	case WARD_VERDICT_REFUSED:
		return "refused";
	}
	return "?";
}

int ward_verdict_error(const struct ward_verdict *v, struct ward_error **err)
{
	enum ward_error_kind kind;

	if (v->kind == WARD_VERDICT_ALLOWED)
		return 0;
	kind = v->kind == WARD_VERDICT_REFUSED ? WARD_ERR_NOT_AUTHORIZED : WARD_ERR_APPROVAL_REQUIRED;
	ward_error_make_kind(err, kind, 0, "%s by rule %s (%s): '%.*s' at %zu%s%s%s",
			     v->kind == WARD_VERDICT_REFUSED ? "refused" : "needs approval",
			     v->rule, v->words, (int)(v->length > 300 ? 300 : v->length), v->segment,
			     v->offset, v->matched && *v->matched ? ", matched '" : "",
			     v->matched && *v->matched ? v->matched : "",
			     v->matched && *v->matched ? "'" : "");
	if (err && *err)
		ward_error_set_rule(*err, v->rule);
	return -1;
}

/* JSON wants UTF-8: a command's bytes may be anything. */
static json_t *js(const char *s)
{
	size_t n;
	char *clean;
	json_t *j;

	if (!s)
		return json_null();
	clean = ward_utf8_sanitize(s, strlen(s), &n);
	if (!clean)
		return json_null();
	j = json_stringn(clean, n);
	free(clean);
	return j;
}

char *ward_verdict_to_json(const struct ward_verdict *v)
{
	json_t *o = json_object(), *segs = json_array();
	char *s;
	size_t i;

	json_object_set_new(o, "verdict", json_string(ward_verdict_kind_name(v->kind)));
	json_object_set_new(o, "rule", js(v->rule));
	json_object_set_new(o, "category", js(v->category));
	json_object_set_new(o, "words", js(v->words));
	json_object_set_new(o, "offset", v->kind ? json_integer((json_int_t)v->offset) : json_null());
	json_object_set_new(o, "length", v->kind ? json_integer((json_int_t)v->length) : json_null());
	json_object_set_new(o, "segment", js(v->segment));
	json_object_set_new(o, "matched", js(v->matched));
	for (i = 0; i < v->n_segments; i++) {
		const struct ward_verdict_segment *g = &v->segments[i];
		json_t *e = json_object();

		json_object_set_new(e, "offset", json_integer((json_int_t)g->offset));
		json_object_set_new(e, "length", json_integer((json_int_t)g->length));
		json_object_set_new(e, "depth", json_integer(g->depth));
		json_object_set_new(e, "text", js(g->text));
		json_object_set_new(e, "argv", js(g->argv));
		json_array_append_new(segs, e);
	}
	json_object_set_new(o, "segments", segs);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}
