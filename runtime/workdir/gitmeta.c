/* gitmeta.c — the allowlist of a git directory (workdir-internal.h says why
 * deny-by-default). */
#include "runtime/workdir/workdir-internal.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/util/util-internal.h"

/* Directories at the top of a git directory whose whole tree is git's data:
 * objects (but see objects/info below), refs, reflogs, the state of a merge
 * backend rebase, of an am-style rebase, of a multi-commit cherry-pick or
 * revert, recorded resolutions, and the reftable ref store. */
static const char *const data_dirs[] = {
	"objects", "refs", "logs", "rebase-merge", "rebase-apply", "sequencer", "rr-cache", "reftable",
};

/* Files at the top of a git directory that ordinary work writes. Pseudo-refs
 * (ORIG_HEAD, MERGE_HEAD, FETCH_HEAD, CHERRY_PICK_HEAD, REBASE_HEAD...) match
 * the *_HEAD pattern below. */
static const char *const data_files[] = {
	"HEAD",		     "index",	       "packed-refs",	  "COMMIT_EDITMSG", "MERGE_MSG",
	"MERGE_MODE",	     "MERGE_RR",       "MERGE_AUTOSTASH", "AUTO_MERGE",	    "SQUASH_MSG",
	"TAG_EDITMSG",	     "shallow",	       "gc.pid",	  "gc.log",	    "BISECT_LOG",
	"BISECT_START",	     "BISECT_TERMS",   "BISECT_NAMES",	  "BISECT_EXPECTED_REV",
	"BISECT_ANCESTORS_OK", "BISECT_FIRST_PARENT", "BISECT_RUN",
};

/* objects/info holds git's data (commit graphs, the pack list) next to
 * paths to other object stores (alternates, http-alternates): only the
 * former. */
static const char *const objects_info[] = { "commit-graph", "commit-graphs", "packs" };

static bool is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static bool in(const char *s, size_t n, const char *const *v, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (is(s, n, v[i]))
			return true;
	return false;
}

/* ORIG_HEAD, FETCH_HEAD, CHERRY_PICK_HEAD...: capitals and '_', ending in _HEAD. */
static bool pseudo_ref(const char *s, size_t n)
{
	if (n < 6 || memcmp(s + n - 5, "_HEAD", 5) != 0)
		return false;
	for (size_t i = 0; i < n - 5; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_'))
			return false;
	return true;
}

/* sharedindex.<hex> (split index), index.stash.<pid> (stash's temporary
 * index), next-index-<pid> (commit with paths). */
static bool index_file(const char *s, size_t n)
{
	static const char *const prefixes[] = { "sharedindex.", "index.stash.", "next-index-" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t k = strlen(prefixes[i]);

		if (n > k && memcmp(s, prefixes[i], k) == 0)
			return true;
	}
	return false;
}

static bool top_file(const char *s, size_t n)
{
	return in(s, n, data_files, ARRAY_SIZE(data_files)) || pseudo_ref(s, n) ||
	       index_file(s, n);
}

/* A name that may begin a path at the top of a git directory: how the
 * submodule name in modules/NAME/... is told from what follows it. */
static bool known_top(const char *s, size_t n)
{
	return in(s, n, data_dirs, ARRAY_SIZE(data_dirs)) || top_file(s, n) ||
	       is(s, n, "modules") || is(s, n, "worktrees");
}

static size_t comp_len(const char *s)
{
	return strcspn(s, "/");
}

static enum ward_gitmeta_verdict classify_in(const char *p);

/* p lies below modules/: NAME (one or more components), then what is in that
 * submodule's git directory. The name ends before the first component that
 * can begin a git directory's path; none means a directory on the way to a
 * new submodule git directory, or a name git would read as configuration
 * (modules/NAME/config): denied either way. */
/* Names git reads as configuration, hooks or paths elsewhere, wherever a
 * git directory's root may be. */
static bool config_like(const char *s, size_t n)
{
	static const char *const names[] = { "hooks",	    "info",	"commondir", "gitdir",
					     "description", "branches", "remotes" };

	return (n >= 6 && memcmp(s, "config", 6) == 0) || in(s, n, names, ARRAY_SIZE(names));
}

/* Below modules/, where the submodule's name ends cannot be told from the
 * path alone: a submodule at vendor/logs has its git directory at
 * modules/vendor/logs, whose config looks like the reflog "logs/config" of
 * a submodule "vendor". Deny-by-default under that doubt: a configuration
 * name anywhere after the first component is refused, whatever it would
 * be under another reading (a branch named "hooks" of a submodule cannot
 * be written inside). objects/info's data keeps its place: those names
 * are harmless at a git directory's root too. */
static bool config_like_below_modules(const char *p)
{
	const char *prev = NULL;
	size_t prev_n = 0;

	for (const char *s = p + comp_len(p); *s == '/';) {
		const char *c = s + 1;
		size_t n = comp_len(c);
		const char *next = c[n] == '/' ? c + n + 1 : NULL;

		if (config_like(c, n) &&
		    !(is(c, n, "info") && prev && is(prev, prev_n, "objects") && next &&
		      in(next, comp_len(next), objects_info, ARRAY_SIZE(objects_info))))
			return true;
		prev = c;
		prev_n = n;
		s = c + n;
	}
	return false;
}

static enum ward_gitmeta_verdict in_modules(const char *p)
{
	const char *s = p + comp_len(p); /* NAME has at least one component */

	if (config_like_below_modules(p))
		return WARD_GITMETA_DENY;

	while (*s == '/') {
		size_t n = comp_len(s + 1);

		if (known_top(s + 1, n))
			return classify_in(s + 1);
		s += 1 + n;
	}
	return WARD_GITMETA_DENY;
}

static enum ward_gitmeta_verdict classify_in(const char *p)
{
	size_t n = comp_len(p);
	const char *rest = p[n] == '/' ? p + n + 1 : NULL;

	if (rest && !*rest)
		rest = NULL;
	if (in(p, n, data_dirs, ARRAY_SIZE(data_dirs))) {
		size_t k;

		if (!is(p, n, "objects") || !rest)
			return WARD_GITMETA_MERGE;
		k = comp_len(rest);
		if (!is(rest, k, "info") || !rest[k] || !rest[k + 1])
			return WARD_GITMETA_MERGE;
		rest += k + 1;
		k = comp_len(rest);
		if (in(rest, k, objects_info, ARRAY_SIZE(objects_info)))
			return WARD_GITMETA_MERGE;
		return WARD_GITMETA_DENY;
	}
	if (top_file(p, n))
		return rest ? WARD_GITMETA_DENY : WARD_GITMETA_MERGE;
	/* modules and worktrees themselves: new only with a first submodule or
	 * worktree, which needs its config or gitdir */
	if (is(p, n, "modules"))
		return rest ? in_modules(rest) : WARD_GITMETA_DENY;
	if (is(p, n, "worktrees")) {
		size_t k;

		if (!rest)
			return WARD_GITMETA_DENY;
		k = comp_len(rest);
		/* worktrees/NAME itself is a new worktree: it needs gitdir and
		 * commondir, both denied */
		if (!rest[k] || !rest[k + 1])
			return WARD_GITMETA_DENY;
		return classify_in(rest + k + 1);
	}
	return WARD_GITMETA_DENY;
}

static bool dot_git(const char *s, size_t n)
{
	return n == 4 && strncasecmp(s, ".git", 4) == 0;
}

enum ward_gitmeta_verdict ward_gitmeta_classify(const char *rel)
{
	size_t len;

	if (!rel || !*rel || rel[0] == '/')
		return WARD_GITMETA_DENY;
	/* a repository inside a git directory (refs/heads/.git/config) is
	 * one git could be pointed at */
	for (const char *s = rel; *s;) {
		size_t n = comp_len(s);

		if (dot_git(s, n) || n == 0 || is(s, n, ".") || is(s, n, ".."))
			return WARD_GITMETA_DENY;
		s += n;
		if (*s == '/')
			s++;
	}
	len = strlen(rel);
	/* X.lock for an allowed X: git writes it and renames it over X */
	if (len > 5 && strcmp(rel + len - 5, ".lock") == 0) {
		char base[4096];

		if (len - 5 >= sizeof(base))
			return WARD_GITMETA_DENY;
		memcpy(base, rel, len - 5);
		base[len - 5] = '\0';
		/* a lock of a name that cannot be locked on its own is denied */
		if (!base[0] || base[len - 6] == '/')
			return WARD_GITMETA_DENY;
		return classify_in(base) == WARD_GITMETA_MERGE ? WARD_GITMETA_TRANSIENT :
								 WARD_GITMETA_DENY;
	}
	return classify_in(rel);
}

bool ward_gitmeta_denied_in_workdir(const char *rel)
{
	for (const char *s = rel; s && *s;) {
		size_t n = comp_len(s);

		if (dot_git(s, n))
			return s[n] == '/' && s[n + 1] &&
			       ward_gitmeta_classify(s + n + 1) == WARD_GITMETA_DENY;
		s += n;
		if (*s == '/')
			s++;
	}
	return false;
}

bool ward_gitmeta_in_gitdir(const char *rel)
{
	for (const char *s = rel; s && *s;) {
		size_t n = comp_len(s);

		if (dot_git(s, n))
			return s[n] == '/' && s[n + 1];
		s += n;
		if (*s == '/')
			s++;
	}
	return false;
}

static bool ends_with_path(const char *rel, const char *tail)
{
	size_t n = strlen(rel), k = strlen(tail);

	return n >= k && strcmp(rel + n - k, tail) == 0 && (n == k || rel[n - k - 1] == '/');
}

bool ward_gitmeta_is_todo(const char *rel)
{
	return rel && (ends_with_path(rel, "rebase-merge/git-rebase-todo") ||
		       ends_with_path(rel, "sequencer/todo"));
}

bool ward_gitmeta_todo_runs_code(const char *text, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t j = i, k;

		while (j < len && (text[j] == ' ' || text[j] == '\t'))
			j++;
		k = j;
		while (k < len && text[k] != ' ' && text[k] != '\t' && text[k] != '\n' &&
		       text[k] != '\r')
			k++;
		if ((k - j == 4 && memcmp(text + j, "exec", 4) == 0) ||
		    (k - j == 1 && text[j] == 'x'))
			return true;
		while (k < len && text[k] != '\n')
			k++;
		i = k + 1;
	}
	return false;
}

/* The merge strategies git has itself. git runs a strategy as
 * `git merge-NAME`, found on PATH, and a NAME holding a '/' as a path of its
 * own, relative to the worktree: "/x" runs ./git-merge-/x, a file the
 * command can make. */
static const char *const builtin_strategies[] = {
	"ort", "recursive", "resolve", "octopus", "ours", "subtree",
};

bool ward_gitmeta_names_strategy(const char *rel)
{
	return rel && (ends_with_path(rel, "rebase-merge/strategy") ||
		       ends_with_path(rel, "rebase-apply/strategy") ||
		       ends_with_path(rel, "sequencer/opts"));
}

static bool known_strategy(const char *s, size_t n)
{
	return in(s, n, builtin_strategies, ARRAY_SIZE(builtin_strategies));
}

/* A one-line state file as git reads it: one final newline (or CRLF) off. */
static bool oneliner_runs_code(const char *text, size_t len)
{
	if (len && text[len - 1] == '\n' && --len && text[len - 1] == '\r')
		len--;
	return !known_strategy(text, len);
}

/* sequencer/opts is in git's config syntax, its key options.strategy (any
 * case, possibly on the line of its section header). Accepted only in the
 * form git writes, "\tstrategy = NAME" alone on its line, NAME a builtin
 * strategy: any other mention of the word is refused ("strategy-option",
 * whose values only builtin strategies see, excepted). */
static bool opts_runs_code(const char *text, size_t len)
{
	static const char word[] = "strategy", opt[] = "-option";
	const size_t w = sizeof(word) - 1, o = sizeof(opt) - 1;

	for (size_t i = 0; i + w <= len; i++) {
		size_t a, b, e;

		if (strncasecmp(text + i, word, w) != 0)
			continue;
		if (i + w + o <= len && strncasecmp(text + i + w, opt, o) == 0)
			continue;
		for (a = i; a > 0 && (text[a - 1] == ' ' || text[a - 1] == '\t');)
			a--;
		if (a > 0 && text[a - 1] != '\n')
			return true;
		b = i + w;
		while (b < len && (text[b] == ' ' || text[b] == '\t'))
			b++;
		if (b >= len || text[b++] != '=')
			return true;
		while (b < len && (text[b] == ' ' || text[b] == '\t'))
			b++;
		for (e = b; e < len && text[e] != '\n' && text[e] != ' ' && text[e] != '\t' &&
			    text[e] != '\r';)
			e++;
		if (!known_strategy(text + b, e - b))
			return true;
		while (e < len && (text[e] == ' ' || text[e] == '\t' || text[e] == '\r'))
			e++;
		if (e < len && text[e] != '\n')
			return true;
	}
	return false;
}

bool ward_gitmeta_strategy_runs_code(const char *rel, const char *text, size_t len)
{
	if (ends_with_path(rel, "sequencer/opts"))
		return opts_runs_code(text, len);
	return oneliner_runs_code(text, len);
}

/* rebase-apply/apply-opt: the options of the `git apply` a `git am` runs,
 * each word shell-quoted as git's sq_quote_argv() writes them (" 'w'", a
 * quote inside as '\''). `git apply` has options that write elsewhere
 * (--build-fake-ancestor=FILE writes an index at any path): only those `git
 * am` passes on are let through. */
bool ward_gitmeta_apply_opt_refused(const char *t, size_t len)
{
	static const char *const exact[] = { "--reject", "--ignore-space-change",
					     "--ignore-whitespace" };
	static const char *const prefixes[] = { "--whitespace=", "--directory=", "--exclude=",
						"--include=", "-C", "-p" };
	char word[4096];
	size_t i = 0;

	if (len && t[len - 1] == '\n')
		len--;
	while (i < len) {
		size_t n = 0;
		bool ok = false;

		if (t[i] == ' ') {
			i++;
			continue;
		}
		if (t[i] != '\'')
			return true;
		for (i++;;) {
			if (i >= len || t[i] == '\n' || t[i] == '\0' || n + 1 >= sizeof(word))
				return true;
			if (t[i] != '\'') {
				word[n++] = t[i++];
				continue;
			}
			/* '\'' and '\!' are a quote and a '!' */
			if (i + 3 < len && t[i + 1] == '\\' && (t[i + 2] == '\'' || t[i + 2] == '!') &&
			    t[i + 3] == '\'') {
				word[n++] = t[i + 2];
				i += 4;
				continue;
			}
			i++;
			break;
		}
		if (i < len && t[i] != ' ')
			return true;
		word[n] = '\0';
		for (size_t k = 0; k < ARRAY_SIZE(exact) && !ok; k++)
			ok = strcmp(word, exact[k]) == 0;
		for (size_t k = 0; k < ARRAY_SIZE(prefixes) && !ok; k++)
			ok = strncmp(word, prefixes[k], strlen(prefixes[k])) == 0 &&
			     word[strlen(prefixes[k])];
		if (!ok)
			return true;
	}
	return false;
}

/* base/rel read whole (a regular file of 1 MiB at most, opened without
 * following a symbolic link) and given to check; refused when it cannot be. */
static bool file_refused(const char *base, const char *rel,
			 bool (*check)(const char *rel, const char *text, size_t len))
{
	char path[4096], *buf;
	struct stat st;
	ssize_t n;
	bool refused;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", base, rel) >= sizeof(path))
		return true;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return true;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20) ||
	    !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return true;
	}
	n = read(fd, buf, (size_t)st.st_size + 1);
	close(fd);
	refused = n < 0 || n > st.st_size || check(rel, buf, (size_t)n);
	free(buf);
	return refused;
}

static bool todo_check(const char *rel, const char *text, size_t len)
{
	(void)rel;
	return ward_gitmeta_todo_runs_code(text, len);
}

bool ward_gitmeta_todo_refused(const char *base, const char *rel)
{
	return file_refused(base, rel, todo_check);
}

static bool apply_opt_check(const char *rel, const char *text, size_t len)
{
	(void)rel;
	return ward_gitmeta_apply_opt_refused(text, len);
}

bool ward_gitmeta_state_refused(const char *base, const char *rel)
{
	if (ward_gitmeta_is_todo(rel))
		return file_refused(base, rel, todo_check);
	if (ward_gitmeta_names_strategy(rel))
		return file_refused(base, rel, ward_gitmeta_strategy_runs_code);
	if (rel && ends_with_path(rel, "rebase-apply/apply-opt"))
		return file_refused(base, rel, apply_opt_check);
	return false;
}
