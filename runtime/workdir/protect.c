/* protect.c — the list of protected paths: defaults, --protect, --allow-write,
 * homes inside the workdir, and the "touches" test used on apply. */
#include "ward/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/workdir/workdir-internal.h"
#include "runtime/util/util-internal.h"

/* Files that make code run later, outside the sandbox, when a person or a
 * tool opens the project: git hooks and config (core.fsmonitor,
 * core.sshCommand, aliases), submodule URLs, direnv, editor configs (tasks,
 * settings), dev containers (initializeCommand runs on the host), MCP
 * servers and agent hooks of coding agents, package manager configs
 * (scripts, registries, tokens). */
static const char *const defaults[] = {
	".git/hooks",	 ".git/config",		   ".gitmodules",
	".envrc",	 ".vscode",		   ".idea",
	".mcp.json",	 ".npmrc",		   ".pypirc",
	".devcontainer", ".claude/settings.json", ".claude/settings.local.json",
	".cursor/mcp.json", ".gemini/settings.json", NULL,
};

/* Added for a home directory: shell and session start-up files, git's and
 * ssh's configuration, autostart entries, user services, ~/.local/bin (on
 * PATH: a planted "git" there shadows the real one), and tool configs that
 * run commands (aws credential_process, kubeconfig exec plugins, docker
 * credential helpers). */
static const char *const home_defaults[] = {
	".bashrc",	    ".bash_profile",	 ".bash_login",	      ".bash_logout",
	".profile",	    ".zshrc",		 ".zprofile",	      ".zshenv",
	".zlogin",	    ".gitconfig",	 ".ssh",	      ".config/git",
	".config/autostart", ".config/systemd", ".config/fish",	      ".config/environment.d",
	".pam_environment", ".xprofile",	 ".xsessionrc",	      ".local/bin",
	".aws",		    ".kube",		 ".docker",	      NULL,
};

struct ward_protect {
	char **v;
	size_t n;
	char **allowed; /* --allow-write, applied to home entries too */
	size_t n_allowed;
};

static const char *const state_names[] = {
	[WARD_PROTECT_READ_ONLY] = "read-only",
	[WARD_PROTECT_PLACEHOLDER] = "placeholder",
	[WARD_PROTECT_COVERED] = "covered",
	[WARD_PROTECT_UNPROTECTED] = "unprotected",
};

const char *ward_protect_state_name(enum ward_protect_state s)
{
	return (unsigned)s < ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

const char *const *ward_protect_defaults(void)
{
	return defaults;
}

const char *const *ward_protect_home_defaults(void)
{
	return home_defaults;
}

int ward_workdir_parse_mode(const char *s, enum ward_workdir_mode *mode, struct ward_error **err)
{
	if (s && strcmp(s, "direct") == 0)
		*mode = WARD_WORKDIR_DIRECT;
	else if (s && strcmp(s, "overlay") == 0)
		*mode = WARD_WORKDIR_OVERLAY;
	else
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "unknown workdir mode '%s' (known: direct, overlay)",
					    s ? s : "");
	return 0;
}

const char *ward_workdir_mode_name(enum ward_workdir_mode mode)
{
	return mode == WARD_WORKDIR_OVERLAY ? "overlay" : "direct";
}

void ward_protect_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void ward_protect_free(struct ward_protect *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	for (size_t i = 0; i < p->n_allowed; i++)
		free(p->allowed[i]);
	free(p->allowed);
	free(p);
}

/* A normalised relative path: no leading or doubled '/', no trailing '/',
 * no "." or ".." component. NULL with err otherwise. */
static char *normalise(const char *rel, const char *what, struct ward_error **err)
{
	char *out, *o;
	const char *s = rel;

	if (!rel || !*rel || rel[0] == '/')
		goto bad;
	out = malloc(strlen(rel) + 1);
	if (!out) {
		ward_error_make(err, ENOMEM, "%s", what);
		return NULL;
	}
	o = out;
	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 0) {
			s++;
			continue;
		}
		if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) {
			free(out);
			goto bad;
		}
		if (o != out)
			*o++ = '/';
		memcpy(o, s, n);
		o += n;
		s += n;
	}
	*o = '\0';
	if (!*out) {
		free(out);
		goto bad;
	}
	return out;
bad:
	ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
			     "%s '%s' must be a path inside the workdir, relative to it, "
			     "without '.' or '..'",
			     what, rel ? rel : "");
	return NULL;
}

/* rel equals dir or lies below it. */
static bool at_or_below(const char *rel, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(rel, dir, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

static int push(char ***v, size_t *n, const char *s, struct ward_error **err)
{
	char **g = realloc(*v, (*n + 2) * sizeof(**v));

	if (!g)
		return ward_error_make(err, ENOMEM, "protected paths");
	*v = g;
	g[*n] = strdup(s);
	if (!g[*n])
		return ward_error_make(err, ENOMEM, "protected paths");
	(*n)++;
	g[*n] = NULL;
	return 0;
}

static bool contains(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

struct ward_protect *ward_protect_new(bool with_defaults, struct ward_error **err)
{
	struct ward_protect *p = calloc(1, sizeof(*p));

	if (!p) {
		ward_error_make(err, ENOMEM, "protected paths");
		return NULL;
	}
	for (size_t i = 0; with_defaults && defaults[i]; i++)
		if (push(&p->v, &p->n, defaults[i], err) < 0) {
			ward_protect_free(p);
			return NULL;
		}
	return p;
}

struct ward_protect *ward_protect_copy(const struct ward_protect *src, struct ward_error **err)
{
	struct ward_protect *p = ward_protect_new(false, err);

	for (size_t i = 0; p && i < src->n; i++)
		if (push(&p->v, &p->n, src->v[i], err) < 0)
			goto fail;
	for (size_t i = 0; p && i < src->n_allowed; i++)
		if (push(&p->allowed, &p->n_allowed, src->allowed[i], err) < 0)
			goto fail;
	return p;
fail:
	ward_protect_free(p);
	return NULL;
}

int ward_protect_add(struct ward_protect *p, const char *rel, struct ward_error **err)
{
	_cleanup_free_ char *n = normalise(rel, "protected path", err);

	if (!n)
		return -1;
	/* --protect after --allow-write of the same path protects it again */
	for (size_t i = 0; i < p->n_allowed;) {
		if (at_or_below(p->allowed[i], n)) {
			free(p->allowed[i]);
			memmove(&p->allowed[i], &p->allowed[i + 1],
				(p->n_allowed - i) * sizeof(*p->allowed));
			p->n_allowed--;
		} else {
			i++;
		}
	}
	if (contains(p->v, p->n, n))
		return 0;
	return push(&p->v, &p->n, n, err);
}

int ward_protect_allow(struct ward_protect *p, const char *rel, struct ward_error **err)
{
	_cleanup_free_ char *n = normalise(rel, "--allow-write path", err);

	if (!n)
		return -1;
	/* A mount covers a whole protected path: a part of it cannot be opened. */
	for (size_t i = 0; i < p->n; i++)
		if (!at_or_below(p->v[i], n) && at_or_below(n, p->v[i]))
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "--allow-write '%s' is inside protected '%s': "
						    "open '%s' as a whole",
						    n, p->v[i], p->v[i]);
	for (size_t i = 0; i < p->n;) {
		if (at_or_below(p->v[i], n)) {
			free(p->v[i]);
			memmove(&p->v[i], &p->v[i + 1], (p->n - i) * sizeof(*p->v));
			p->n--;
		} else {
			i++;
		}
	}
	if (contains(p->allowed, p->n_allowed, n))
		return 0;
	return push(&p->allowed, &p->n_allowed, n, err);
}

/* Whether name (in dirfd, at path dir) is a home directory: $HOME itself
 * (home_real: its real path, or "" when unknown), /root, a /home/NAME, or a
 * directory holding a shell start-up file or .ssh. The marks are looked up
 * relative to dirfd: a workdir with many subdirectories pays one fstatat per
 * mark and subdirectory, no path walk from the root. */
static bool is_home_at(int dirfd, const char *name, const char *dir, const char *home_real)
{
	static const char *const marks[] = { ".bashrc", ".bash_profile", ".profile", ".zshrc", ".ssh" };
	char buf[NAME_MAX + 16];

	if (home_real[0] && strcmp(home_real, dir) == 0 && strcmp(home_real, "/") != 0 &&
	    strcmp(home_real, "/tmp") != 0)
		return true;
	if (strcmp(dir, "/root") == 0)
		return true;
	if (strncmp(dir, "/home/", 6) == 0 && dir[6] && !strchr(dir + 6, '/'))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(marks); i++) {
		struct stat st;

		if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", name, marks[i]) >= sizeof(buf))
			return false;
		if (fstatat(dirfd, buf, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return true;
	}
	return false;
}

static void home_realpath(char real[PATH_MAX])
{
	const char *home = getenv("HOME");

	if (!home || !*home || !realpath(home, real))
		real[0] = '\0';
}

bool ward_protect_is_home(const char *dir)
{
	char real[PATH_MAX];

	home_realpath(real);
	return is_home_at(AT_FDCWD, dir, dir, real);
}

static bool allowed(const struct ward_protect *p, const char *rel)
{
	for (size_t i = 0; i < p->n_allowed; i++)
		if (at_or_below(rel, p->allowed[i]))
			return true;
	return false;
}

static int add_home(const struct ward_protect *p, const char *prefix, char ***v, size_t *n,
		    struct ward_error **err)
{
	char buf[PATH_MAX];

	for (size_t i = 0; home_defaults[i]; i++) {
		snprintf(buf, sizeof(buf), "%s%s%s", prefix, *prefix ? "/" : "", home_defaults[i]);
		if (allowed(p, buf) || contains(*v, *n, buf))
			continue;
		if (push(v, n, buf, err) < 0)
			return -1;
	}
	return 0;
}

/* core.hooksPath of the repository at the top of the workdir, when it names
 * a directory inside it (husky's ".husky", lefthook's...): hooks there run on
 * the next commit as surely as in .git/hooks. A small reader of git's config
 * syntax: [core] section, hooksPath key (both case-insensitive), the value
 * unquoted. Returns a malloc'd relative path or NULL. */
static char *hooks_path(const char *workdir)
{
	char path[PATH_MAX], line[PATH_MAX], *found = NULL;
	bool core = false;
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/.git/config", workdir) >= sizeof(path))
		return NULL;
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t"), *v, *e;

		if (*s == '[') {
			core = strncasecmp(s, "[core]", 6) == 0;
			continue;
		}
		if (!core || strncasecmp(s, "hookspath", 9) != 0)
			continue;
		v = s + 9 + strspn(s + 9, " \t");
		if (*v != '=')
			continue;
		v += 1 + strspn(v + 1, " \t");
		e = v + strcspn(v, "\r\n#;");
		while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e - v >= 2 && *v == '"' && e[-1] == '"')
			v++, e--;
		*e = '\0';
		free(found);
		found = strdup(v); /* the last one wins, as in git */
	}
	if (f)
		fclose(f);
	if (!found || !*found || found[0] == '~') {
		free(found);
		return NULL;
	}
	if (found[0] == '/') {
		size_t n = strlen(workdir);
		char *rel = NULL;

		if (strncmp(found, workdir, n) == 0 && found[n] == '/' && found[n + 1])
			rel = strdup(found + n + 1);
		free(found);
		found = rel;
	}
	return found;
}

char **ward_protect_resolve(const struct ward_protect *p, const char *workdir,
			    struct ward_error **err)
{
	char **v = calloc(1, sizeof(*v));
	char home_real[PATH_MAX];
	size_t n = 0;
	DIR *d;
	struct dirent *e;

	if (!v) {
		ward_error_make(err, ENOMEM, "protected paths");
		return NULL;
	}
	for (size_t i = 0; i < p->n; i++)
		if (push(&v, &n, p->v[i], err) < 0)
			goto fail;
	/* where .git/hooks is protected, so is the hooks directory git uses */
	if (contains(v, n, ".git/hooks")) {
		char *hp = hooks_path(workdir), *norm = NULL;

		if (hp)
			norm = normalise(hp, "core.hooksPath", NULL);
		free(hp);
		if (norm && !allowed(p, norm) && !contains(v, n, norm) && push(&v, &n, norm, err) < 0) {
			free(norm);
			goto fail;
		}
		free(norm);
	}
	home_realpath(home_real);
	if (is_home_at(AT_FDCWD, workdir, workdir, home_real) && add_home(p, "", &v, &n, err) < 0)
		goto fail;
	d = opendir(workdir);
	while (d && (e = readdir(d))) {
		char sub[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		/* d_type spares a stat per entry in a large workdir */
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", workdir, e->d_name) >= sizeof(sub))
			continue;
		if (e->d_type == DT_UNKNOWN &&
		    (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)))
			continue;
		if (!is_home_at(dirfd(d), e->d_name, sub, home_real))
			continue;
		if (add_home(p, e->d_name, &v, &n, err) < 0) {
			closedir(d);
			goto fail;
		}
	}
	if (d)
		closedir(d);
	return v;
fail:
	ward_protect_strv_free(v);
	return NULL;
}

bool ward_protect_nested_git(const struct ward_protect *p, const char *rel)
{
	const char *s = rel;

	if (p && allowed(p, rel))
		return false;
	/* in any git directory of the workdir, what ordinary git work does not
	 * write (.git/commondir, .git/info/..., sub/.git/modules/x/config) */
	if (ward_gitmeta_denied_in_workdir(rel))
		return true;
	/* a ".git" component below the top: the repository there, its config
	 * or hooks, or a new one (git uses the nearest .git up the tree) */
	while ((s = strstr(s, "/.git")) != NULL) {
		const char *after = s + 5;

		if (*after == '\0')
			return true;
		if (*after == '/' &&
		    (strncmp(after + 1, "config", 6) == 0 || strncmp(after + 1, "hooks", 5) == 0) &&
		    (after[1 + (after[1] == 'c' ? 6 : 5)] == '\0' ||
		     after[1 + (after[1] == 'c' ? 6 : 5)] == '/'))
			return true;
		s = after;
	}
	return false;
}

bool ward_protect_git_change_denied(const struct ward_protect *p, const struct ward_change *c)
{
	if (ward_protect_nested_git(p, c->path))
		return true;
	/* git writes files and directories in its own: a link, a device or
	 * a set-id bit there is none of its data */
	return c->kind != WARD_CHANGE_DELETED && ward_gitmeta_in_gitdir(c->path) &&
	       !(p && allowed(p, c->path)) &&
	       (c->type == WARD_FT_SYMLINK || c->type == WARD_FT_OTHER || (c->mode & 06000));
}

bool ward_protect_is_allowed(const struct ward_protect *p, const char *rel)
{
	return p && allowed(p, rel);
}

bool ward_protect_touches(char *const *resolved, const char *rel)
{
	for (size_t i = 0; resolved && resolved[i]; i++)
		if (at_or_below(rel, resolved[i]) || at_or_below(resolved[i], rel))
			return true;
	return false;
}

bool ward_protect_opened(const struct ward_protect *p, const char *rel)
{
	return p && allowed(p, rel);
}
