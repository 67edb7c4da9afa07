/* session.c — a session's state (environment, aliases, history, directory)
 * and the path every command takes: expand, front door, backend, record. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "runtime/session/session-internal.h"
#include "runtime/util/util-internal.h"
#include "runtime/workdir/workdir-internal.h"
#include "ward/env.h"
#include "ward/frontdoor.h"
#include "ward/session.h"
#include "ward/workdir.h"

extern char **environ;

/* ---- options ------------------------------------------------------------ */

static int dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (src && !(*dst = strdup(src)))
		return -1;
	return 0;
}

static int options_copy(struct ward_session_options *dst, const struct ward_session_options *src)
{
	*dst = *src;
	if (dup_opt(&dst->ssh.host, src->ssh.host) < 0 || dup_opt(&dst->ssh.user, src->ssh.user) < 0 ||
	    dup_opt(&dst->ssh.identity, src->ssh.identity) < 0 ||
	    dup_opt(&dst->ssh.known_hosts, src->ssh.known_hosts) < 0 ||
	    dup_opt(&dst->ssh.ward, src->ssh.ward) < 0 ||
	    dup_opt(&dst->ssh.workdir, src->ssh.workdir) < 0 || dup_opt(&dst->ssh.ssh, src->ssh.ssh) < 0) {
		ward_session_options_release(dst);
		return -1;
	}
	return 0;
}

const char *ward_session_options_shell(const struct ward_session_options *o)
{
	if (o->shell == WARD_SESSION_SHELL_SH)
		return "/bin/sh";
	if (o->shell == WARD_SESSION_SHELL_BASH)
		return "/bin/bash";
	return access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
}

int ward_session_options_from_config(const struct ward_config *cfg, struct ward_session_options *o,
				     struct ward_error **err)
{
	struct ward_session_options copy;

	/* the policy's "shell": "bash" */
	if (cfg->shell_bash && o->shell == WARD_SESSION_SHELL_DEFAULT)
		o->shell = WARD_SESSION_SHELL_BASH;
	if (!cfg->session)
		return 0;
	if (options_copy(&copy, cfg->session) < 0)
		return ward_error_make(err, ENOMEM, "session options");
	if (copy.shell == WARD_SESSION_SHELL_DEFAULT)
		copy.shell = o->shell;
	ward_session_options_release(o);
	*o = copy;
	return 0;
}

/* ---- small helpers -------------------------------------------------------- */

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int64_t wall_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static bool valid_env_name(const char *n)
{
	const char *p;

	if (!n || !(isalpha((unsigned char)*n) || *n == '_'))
		return false;
	for (p = n; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return false;
	return true;
}

static bool alias_char(char c)
{
	return isalnum((unsigned char)c) || strchr("_.-+:@%", c);
}

static bool valid_alias_name(const char *n)
{
	const char *p;

	if (!n || !*n || *n == '-')
		return false;
	for (p = n; *p; p++)
		if (!alias_char(*p))
			return false;
	return true;
}

static size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **strv_copy(char *const *v)
{
	size_t n = strv_len(v), i;
	char **out = calloc(n + 1, sizeof(*out));

	if (!out)
		return NULL;
	for (i = 0; i < n; i++)
		if (!(out[i] = strdup(v[i]))) {
			ward_env_free(out);
			return NULL;
		}
	return out;
}

/* ---- environment ------------------------------------------------------------ */

/* Index of NAME in env, or -1. */
static ssize_t env_find(char **env, const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return (ssize_t)i;
	return -1;
}

static int env_put(char ***envp, const char *name, const char *value)
{
	char *kv, **grown;
	ssize_t at = env_find(*envp, name);
	size_t n;

	if (asprintf(&kv, "%s=%s", name, value) < 0)
		return -1;
	if (at >= 0) {
		free((*envp)[at]);
		(*envp)[at] = kv;
		return 0;
	}
	n = strv_len(*envp);
	grown = realloc(*envp, (n + 2) * sizeof(*grown));
	if (!grown) {
		free(kv);
		return -1;
	}
	grown[n] = kv;
	grown[n + 1] = NULL;
	*envp = grown;
	return 0;
}

/* The environment's size as the limit counts it: "K=V" and a NUL each. */
static size_t env_bytes(char *const *env)
{
	size_t n = 0, i;

	for (i = 0; env && env[i]; i++)
		n += strlen(env[i]) + 1;
	return n;
}

static void env_del(char **env, const char *name)
{
	ssize_t at = env_find(env, name);
	size_t n;

	if (at < 0)
		return;
	n = strv_len(env);
	free(env[at]);
	memmove(env + at, env + at + 1, (n - (size_t)at) * sizeof(*env));
}

int ward_session_setenv(struct ward_session *s, const char *name, const char *value,
			struct ward_error **err)
{
	int rc;

	if (!valid_env_name(name))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "'%s' is not a valid variable name", name ? name : "");
	if (!value)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "no value for '%s'", name);
	pthread_mutex_lock(&s->lock);
	{
		ssize_t at = env_find(s->env, name);
		size_t now = env_bytes(s->env) - (at >= 0 ? strlen(s->env[at]) + 1 : 0);

		if (now + strlen(name) + strlen(value) + 2 > s->opt.limits.env_bytes) {
			pthread_mutex_unlock(&s->lock);
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "setenv '%s': the environment would pass %zu bytes "
						    "(policy session.limits.env_bytes)",
						    name, s->opt.limits.env_bytes);
		}
	}
	rc = env_put(&s->env, name, value);
	pthread_mutex_unlock(&s->lock);
	return rc < 0 ? ward_error_make(err, ENOMEM, "setenv '%s'", name) : 0;
}

int ward_session_unsetenv(struct ward_session *s, const char *name, struct ward_error **err)
{
	if (!valid_env_name(name))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "'%s' is not a valid variable name", name ? name : "");
	pthread_mutex_lock(&s->lock);
	env_del(s->env, name);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

char **ward_session_env(struct ward_session *s)
{
	char **out;

	pthread_mutex_lock(&s->lock);
	out = strv_copy(s->env);
	pthread_mutex_unlock(&s->lock);
	if (out)
		qsort(out, strv_len(out), sizeof(*out), cmp_str);
	return out;
}

/* ---- aliases ---------------------------------------------------------------- */

static ssize_t alias_find(const struct ward_session *s, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < s->n_alias; i++)
		if (strlen(s->alias_names[i]) == len && strncmp(s->alias_names[i], name, len) == 0)
			return (ssize_t)i;
	return -1;
}

/* s->lock held. */
static int alias_set_locked(struct ward_session *s, const char *name, const char *value,
			    struct ward_error **err)
{
	char *n = NULL, *v = NULL, **gn, **gv;
	ssize_t at;

	if (!valid_alias_name(name))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "'%s' is not a valid alias name", name ? name : "");
	if (!value)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "no value for alias '%s'", name);
	if (!(v = strdup(value)))
		return ward_error_make(err, ENOMEM, "alias");
	at = alias_find(s, name, strlen(name));
	{
		size_t bytes = 0, i;

		for (i = 0; i < s->n_alias; i++)
			if ((ssize_t)i != at)
				bytes += strlen(s->alias_names[i]) + strlen(s->alias_values[i]);
		if (at < 0 && s->n_alias >= s->opt.limits.aliases) {
			free(v);
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "alias '%s': the session has %zu aliases, the "
						    "most it may have (policy session.limits.aliases)",
						    name, s->n_alias);
		}
		if (bytes + strlen(name) + strlen(value) > s->opt.limits.alias_bytes) {
			free(v);
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "alias '%s': the aliases would pass %zu bytes "
						    "(policy session.limits.alias_bytes)",
						    name, s->opt.limits.alias_bytes);
		}
	}
	if (at >= 0) {
		free(s->alias_values[at]);
		s->alias_values[at] = v;
		return 0;
	}
	n = strdup(name);
	gn = realloc(s->alias_names, (s->n_alias + 1) * sizeof(*gn));
	if (gn)
		s->alias_names = gn;
	gv = realloc(s->alias_values, (s->n_alias + 1) * sizeof(*gv));
	if (gv)
		s->alias_values = gv;
	if (!n || !gn || !gv) {
		free(n);
		free(v);
		return ward_error_make(err, ENOMEM, "alias");
	}
	s->alias_names[s->n_alias] = n;
	s->alias_values[s->n_alias] = v;
	s->n_alias++;
	return 0;
}

int ward_session_alias_set(struct ward_session *s, const char *name, const char *value,
			   struct ward_error **err)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = alias_set_locked(s, name, value, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int ward_session_alias_remove(struct ward_session *s, const char *name, struct ward_error **err)
{
	ssize_t at;

	pthread_mutex_lock(&s->lock);
	at = name ? alias_find(s, name, strlen(name)) : -1;
	if (at < 0) {
		pthread_mutex_unlock(&s->lock);
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "no alias '%s'",
					    name ? name : "");
	}
	free(s->alias_names[at]);
	free(s->alias_values[at]);
	s->n_alias--;
	memmove(s->alias_names + at, s->alias_names + at + 1,
		(s->n_alias - (size_t)at) * sizeof(char *));
	memmove(s->alias_values + at, s->alias_values + at + 1,
		(s->n_alias - (size_t)at) * sizeof(char *));
	pthread_mutex_unlock(&s->lock);
	return 0;
}

char **ward_session_aliases(struct ward_session *s)
{
	char **out;
	size_t i;

	pthread_mutex_lock(&s->lock);
	out = calloc(s->n_alias + 1, sizeof(*out));
	for (i = 0; out && i < s->n_alias; i++)
		if (asprintf(&out[i], "%s=%s", s->alias_names[i], s->alias_values[i]) < 0) {
			out[i] = NULL;
			ward_env_free(out);
			out = NULL;
		}
	pthread_mutex_unlock(&s->lock);
	if (out)
		qsort(out, s->n_alias, sizeof(*out), cmp_str);
	return out;
}

/* A growing string, bounded: past max it stops growing and says so. */
struct sbuf {
	char *p;
	size_t len, cap, max;
	bool oom, over;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom || b->over)
		return;
	if (b->max && b->len + n > b->max) {
		b->over = true;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *g = realloc(b->p, cap);

		if (!g) {
			b->oom = true;
			return;
		}
		b->p = g;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Reserved words after which a command word comes, as in the shell grammar. */
static bool command_keyword(const char *w, size_t n)
{
	static const char *const kw[] = { "then", "do", "else", "elif", "if", "while", "until",
					  "!", "time", NULL };
	const char *const *k;

	for (k = kw; *k; k++)
		if (strlen(*k) == n && strncmp(*k, w, n) == 0)
			return true;
	return false;
}

/* Expand text into b; `active` lists the aliases being expanded (the loop
 * guard), depth counts nesting. Scans the text as the shell's lexer would for
 * what matters here: quotes, escapes, comments, and the operators after which
 * a new command begins. */
static int expand_into(const struct ward_session *s, const char *text, struct sbuf *b,
		       const char **active, int depth, struct ward_error **err)
{
	const char *p = text;
	bool at_cmd = true;

	if (depth > s->opt.limits.alias_depth)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "aliases nest deeper than %d "
					    "(policy session.limits.alias_depth)",
					    s->opt.limits.alias_depth);
	while (*p) {
		const char *start = p;

		/* The size is checked as the text grows: an alias that expands
		 * into four of itself, twelve deep, stops here at the limit, not
		 * after megabytes. */
		if (b->over)
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "command longer than %zu bytes after alias "
						    "expansion (policy session.limits.command_bytes)",
						    b->max);

		if (*p == ' ' || *p == '\t') {
			sb_add(b, p++, 1);
			continue;
		}
		if (*p == '&' && p[1] == '>') { /* &> FILE: a redirection, not a new command */
			sb_add(b, p, 2);
			p += 2;
			continue;
		}
		/* After these a command begins: a list or pipe operator, a subshell's
		 * or a case pattern's parenthesis, and { } when they stand alone. */
		if (strchr("\n;&|()", *p) ||
		    ((*p == '{' || *p == '}') && (!p[1] || strchr(" \t\n;", p[1])))) {
			sb_add(b, p++, 1);
			at_cmd = true;
			continue;
		}
		if (*p == '#' && (p == text || strchr(" \t\n;&|(", p[-1]))) {
			size_t n = strcspn(p, "\n");

			sb_add(b, p, n);
			p += n;
			continue;
		}
		/* A word: up to unquoted blank or operator. */
		{
			bool plain = true; /* no quoting in it: an alias candidate */

			while (*p && !strchr(" \t\n;&|()", *p)) {
				if ((*p == '>' || *p == '<') && (p[1] == '&' || p[1] == '|')) {
					p += 2; /* >&2, <&0, >| are redirections */
					plain = false;
				} else if (*p == '\\' && p[1]) {
					plain = false;
					p += 2;
				} else if (*p == '\'') {
					const char *q = strchr(p + 1, '\'');

					plain = false;
					p = q ? q + 1 : p + strlen(p);
				} else if (*p == '"' || *p == '`') {
					char quote = *p++;

					plain = false;
					while (*p && *p != quote) {
						if (*p == '\\' && p[1])
							p++;
						p++;
					}
					if (*p)
						p++;
				} else if (*p == '$' && p[1] == '(') {
					int level = 1;

					plain = false;
					for (p += 2; *p && level > 0; p++) {
						if (*p == '(')
							level++;
						else if (*p == ')')
							level--;
					}
				} else {
					if (!alias_char(*p))
						plain = false;
					p++;
				}
			}
			if (at_cmd && plain) {
				size_t n = (size_t)(p - start), k;
				ssize_t at = alias_find(s, start, n);
				bool busy = false;

				for (k = 0; at >= 0 && active[k]; k++)
					busy = busy || strcmp(active[k], s->alias_names[at]) == 0;
				if (at >= 0 && !busy) {
					active[depth] = s->alias_names[at];
					active[depth + 1] = NULL;
					if (expand_into(s, s->alias_values[at], b, active, depth + 1,
							err) < 0)
						return -1;
					active[depth] = NULL;
					/* After an alias ending in a blank the next word
					 * is checked too, as bash does; otherwise the
					 * words after are arguments. */
					{
						const char *v = s->alias_values[at];
						size_t vl = strlen(v);

						at_cmd = vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t');
					}
					continue;
				}
			}
			sb_add(b, start, (size_t)(p - start));
			at_cmd = at_cmd && command_keyword(start, (size_t)(p - start));
		}
	}
	return 0;
}

/* With s->lock held. */
static int expand_locked(const struct ward_session *s, const char *cmd, char **out,
			 struct ward_error **err)
{
	_cleanup_free_ const char **active = calloc((size_t)s->opt.limits.alias_depth + 3,
						    sizeof(*active));
	struct sbuf b = { .max = s->opt.limits.command_bytes };

	if (!active)
		return ward_error_make(err, ENOMEM, "alias expansion");
	sb_add(&b, "", 0);
	if (expand_into(s, cmd, &b, active, 0, err) < 0) {
		free(b.p);
		return -1;
	}
	if (b.over) { /* the last word went past the limit */
		free(b.p);
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "command longer than %zu bytes after alias expansion "
					    "(policy session.limits.command_bytes)",
					    b.max);
	}
	if (b.oom) {
		free(b.p);
		return ward_error_make(err, ENOMEM, "alias expansion");
	}
	*out = b.p;
	return 0;
}

int ward_session_expand(struct ward_session *s, const char *cmd, char **out,
			struct ward_error **err)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = expand_locked(s, cmd, out, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- directory ------------------------------------------------------------- */

char *ward_session_pwd(struct ward_session *s)
{
	char *p;

	pthread_mutex_lock(&s->lock);
	p = strdup(s->cwd);
	pthread_mutex_unlock(&s->lock);
	return p;
}

/* Whether commands see the sandbox's own view (its /tmp among it). */
static bool sandbox_view(const struct ward_session *s)
{
	return !s->opt.ssh.host && s->cfg.view && s->cfg.mode != WARD_SANDBOX_OFF;
}

/* Whether an absolute path has a "." or ".." component anywhere, the last
 * one too: "WORKDIR/.." starts with the workdir and is its parent. */
static bool dotted(const char *dir)
{
	const char *c;

	for (c = dir; (c = strchr(c, '/')); c++)
		if (c[1] == '.' && (c[2] == '/' || c[2] == '\0' ||
				    (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))
			return true;
	return false;
}

static bool allowed_dir(const struct ward_session *s, const char *dir)
{
	size_t i;

	if (!dir || dir[0] != '/' || dotted(dir))
		return false;
	for (i = 0; i < s->n_allowed; i++)
		if (under(dir, s->allowed[i]))
			return true;
	return false;
}

/* allowed_dir(), and for a local session the directory as the host resolves
 * it too: a symbolic link in the workdir leading out of it (to /etc) does
 * not make a tool argument's directory allowed. A path that does not
 * resolve is left to the command's own cd (which then fails). */
static bool admitted_dir(const struct ward_session *s, const char *dir)
{
	char real[PATH_MAX];

	if (!allowed_dir(s, dir))
		return false;
	if (strcmp(s->backend->name, "ssh") == 0 || !realpath(dir, real))
		return true;
	return allowed_dir(s, real);
}

static int refuse_dir(struct ward_error **err, const char *what, const char *dir)
{
	ward_error_make_kind(err, WARD_ERR_NOT_AUTHORIZED, 0,
			     "%s '%s' is outside what the policy allows (rule workdir-outside-session)",
			     what, dir);
	if (err && *err)
		ward_error_set_rule(*err, "workdir-outside-session");
	return -1;
}

/* dir made absolute against base, with . and .. folded (lexically: the
 * command's own cd resolves the real path). malloc'd. */
static char *join_path(const char *base, const char *dir)
{
	char *full, *out, *seg, *save = NULL;
	size_t n = 0;

	if (asprintf(&full, "%s/%s", dir[0] == '/' ? "" : base, dir) < 0)
		return NULL;
	out = malloc(strlen(full) + 2);
	if (!out) {
		free(full);
		return NULL;
	}
	out[0] = '\0';
	for (seg = strtok_r(full, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (strcmp(seg, ".") == 0)
			continue;
		if (strcmp(seg, "..") == 0) {
			char *slash = strrchr(out, '/');

			if (slash)
				*slash = '\0';
			n = strlen(out);
			continue;
		}
		n += (size_t)sprintf(out + n, "/%s", seg);
	}
	if (!out[0])
		strcpy(out, "/");
	free(full);
	return out;
}

int ward_session_set_cwd(struct ward_session *s, const char *dir, const char *oldpwd,
			 struct ward_error **err)
{
	char *c, *o = NULL;

	if (!dir || !*dir || (oldpwd && !*oldpwd))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "directory is empty");
	pthread_mutex_lock(&s->lock);
	c = join_path(s->cwd, dir);
	if (c && oldpwd)
		o = join_path(s->cwd, oldpwd);
	if (!c || (oldpwd && !o)) {
		pthread_mutex_unlock(&s->lock);
		free(c);
		return ward_error_make(err, ENOMEM, "cd");
	}
	if (!admitted_dir(s, c) || (o && !admitted_dir(s, o))) {
		pthread_mutex_unlock(&s->lock);
		refuse_dir(err, "directory", admitted_dir(s, c) ? o : c);
		free(c);
		free(o);
		return -1;
	}
	free(s->oldpwd);
	s->oldpwd = o ? o : s->cwd;
	if (o)
		free(s->cwd);
	s->cwd = c;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* ---- history ------------------------------------------------------------------ */

static void entry_release(struct ward_history_entry *e)
{
	free(e->command);
	free(e->expanded);
	free(e->error_kind);
	free(e->cwd);
}

void ward_history_free(struct ward_history_entry *e, size_t n)
{
	size_t i;

	for (i = 0; e && i < n; i++)
		entry_release(&e[i]);
	free(e);
}

static int entry_copy(struct ward_history_entry *dst, const struct ward_history_entry *src)
{
	*dst = *src;
	dst->command = strdup(src->command);
	dst->expanded = strdup(src->expanded);
	dst->cwd = strdup(src->cwd);
	dst->error_kind = src->error_kind ? strdup(src->error_kind) : NULL;
	if (!dst->command || !dst->expanded || !dst->cwd || (src->error_kind && !dst->error_kind)) {
		entry_release(dst);
		return -1;
	}
	return 0;
}

/* What an entry costs against limits.history_bytes. */
static size_t entry_bytes(const struct ward_history_entry *e)
{
	return strlen(e->command) + strlen(e->expanded) + strlen(e->cwd) +
	       (e->error_kind ? strlen(e->error_kind) : 0) + sizeof(*e);
}

/* With s->lock held; takes nothing over. Returns the id or 0 on ENOMEM. */
static uint64_t history_add(struct ward_session *s, const struct ward_history_entry *e)
{
	struct ward_history_entry copy, *g;
	size_t size = entry_bytes(e), drop = 0;

	if (entry_copy(&copy, e) < 0)
		return 0;
	/* The oldest go first, until both bounds hold with the new one in (an
	 * entry larger than the byte bound alone is kept alone). */
	while (drop < s->n_hist && (s->n_hist - drop + 1 > s->opt.limits.history_entries ||
				    s->hist_bytes + size > s->opt.limits.history_bytes)) {
		s->hist_bytes -= entry_bytes(&s->hist[drop]);
		entry_release(&s->hist[drop]);
		drop++;
	}
	if (drop) {
		memmove(s->hist, s->hist + drop, (s->n_hist - drop) * sizeof(*s->hist));
		s->n_hist -= drop;
	}
	g = realloc(s->hist, (s->n_hist + 1) * sizeof(*g));
	if (!g) {
		entry_release(&copy);
		return 0;
	}
	s->hist = g;
	copy.id = ++s->next_id;
	s->hist[s->n_hist++] = copy;
	s->hist_bytes += size;
	return copy.id;
}

static bool history_matches(const struct ward_history_entry *e, enum ward_history_match how,
			    const char *q)
{
	switch (how) {
	case WARD_HISTORY_ALL:
		return true;
	case WARD_HISTORY_PREFIX:
		return strncmp(e->command, q, strlen(q)) == 0;
	case WARD_HISTORY_SUBSTRING:
		return strstr(e->command, q) || strstr(e->expanded, q);
	}
	return false;
}

int ward_session_history(struct ward_session *s, enum ward_history_match how, const char *query,
			 size_t limit, struct ward_history_entry **out, size_t *n,
			 struct ward_error **err)
{
	size_t i, count = 0, first, k = 0;
	struct ward_history_entry *v;

	*out = NULL;
	*n = 0;
	if (how != WARD_HISTORY_ALL && !query)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "no query");
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_hist; i++)
		count += history_matches(&s->hist[i], how, query);
	first = limit && count > limit ? count - limit : 0;
	v = calloc(count - first + 1, sizeof(*v));
	if (!v)
		goto oom;
	count = 0;
	for (i = 0; i < s->n_hist; i++) {
		if (!history_matches(&s->hist[i], how, query) || count++ < first)
			continue;
		if (entry_copy(&v[k], &s->hist[i]) < 0)
			goto oom;
		k++;
	}
	pthread_mutex_unlock(&s->lock);
	*out = v;
	*n = k;
	return 0;
oom:
	pthread_mutex_unlock(&s->lock);
	ward_history_free(v, k);
	return ward_error_make(err, ENOMEM, "history");
}

/* ---- running ---------------------------------------------------------------- */

/* The front door every command of a session goes through before it runs —
 * the same one `ward run` uses — with the text it will really run (aliases
 * expanded), so that what is checked is what runs. Returns 0 to let it run,
 * or -1 with the refusal (NotAuthorized, ApprovalRequired, RateLimited) in
 * *err. */
static int front_door(struct ward_session *s, const char *expanded,
		      const struct ward_session_exec_options *opt, struct ward_error **err)
{
	struct ward_admission adm = { .approved = opt->approved };
	struct ward_verdict v;
	int rc;

	pthread_mutex_lock(s->rate_lock);
	adm.ratelog = s->ratelog;
	rc = ward_frontdoor_check(&s->cfg, expanded, NULL, &adm, &v, err);
	pthread_mutex_unlock(s->rate_lock);
	/* The question is asked without the rate limit's lock: a person may
	 * take minutes, and the server's other sessions share that lock. */
	if (rc < 0 && opt->ask && v.kind == WARD_VERDICT_APPROVAL_REQUIRED &&
	    (*err)->kind == WARD_ERR_APPROVAL_REQUIRED && opt->ask(opt->ask_ctx, expanded, &v)) {
		ward_error_free(*err);
		*err = NULL;
		rc = 0;
	}
	ward_verdict_release(&v);
	return rc;
}

void ward_session_share_ratelog(struct ward_session *s, struct ward_ratelog *log,
				pthread_mutex_t *lock)
{
	pthread_mutex_lock(&s->lock);
	s->ratelog = log;
	s->rate_lock = lock;
	pthread_mutex_unlock(&s->lock);
}

void ward_session_result_release(struct ward_session_result *r)
{
	ward_result_release(&r->run);
	free(r->expanded);
	free(r->cwd);
	free(r->cwd_refused);
	free(r->state_note);
	memset(r, 0, sizeof(*r));
}

/* A result that says why nothing ran. */
static void refuse(struct ward_session_result *r, struct ward_error *e)
{
	r->run.error = e;
	r->run.exit_code = WARD_EXIT_OWN_ERROR;
	if (!r->run.output)
		r->run.output = strdup("");
	if (!r->run.stderr_text)
		r->run.stderr_text = strdup("");
}

/* A bash session's shell state at the end of a command, as the trap
 * reported it (s->lock held). The report is untrusted — the command could
 * write fd 3 too — so each part goes through the bounds and checks of the
 * API: the environment (names, limits.env_bytes), aliases (ward's own table,
 * so that they are expanded before the front door and checked; limits of
 * ward_session_alias_set), and the rest (variables, functions, shopt, umask,
 * options; WARD_SESSION_STATE_BYTES), which only ever runs inside the
 * sandbox, before the next command. A report cut short keeps what was kept
 * before, and says so. */
static void keep_state(struct ward_session *s, struct session_outcome *oc,
		       struct ward_session_result *r)
{
	const char *why = NULL;
	size_t i, bytes = 0;

	free(s->state_note);
	s->state_note = NULL;
	if (!oc->complete && !r->run.started)
		return; /* nothing ran: nothing changed, nothing to say */
	if (oc->forged) {
		why = "its report on fd 3 had bytes from another process than the session's shell";
		goto note;
	}
	if (!oc->complete) {
		why = r->run.timed_out ? "the command timed out" :
		      r->run.signal	 ? "the shell was killed" :
					   "the shell exited without its report (exec, or trap reset)";
		goto note;
	}
	if (oc->unchanged)
		return; /* a program run by exec: the state is what it was */
	if (strlen(oc->state) + strlen(oc->options) > WARD_SESSION_STATE_BYTES) {
		why = "its variables and functions exceed 64 KiB";
		goto note;
	}
	for (i = 0; oc->env[i]; i++) {
		char *eq = strchr(oc->env[i], '=');

		bytes += strlen(oc->env[i]) + 1;
		if (!eq)
			break;
		*eq = '\0';
		if (!valid_env_name(oc->env[i])) {
			*eq = '=';
			break;
		}
		*eq = '=';
	}
	if (oc->env[i]) {
		why = "its environment holds an invalid name";
		goto note;
	}
	if (bytes > s->opt.limits.env_bytes) {
		why = "its environment exceeds session.limits.env_bytes";
		goto note;
	}
	ward_env_free(s->env);
	s->env = steal_ptr(oc->env);
	free(s->state);
	s->state = steal_ptr(oc->state);
	free(s->options);
	s->options = steal_ptr(oc->options);
	for (i = 0; oc->aliases[i]; i++) {
		char *eq = strchr(oc->aliases[i], '=');
		struct ward_error *e = NULL;
		ssize_t at;

		if (!eq)
			continue;
		*eq = '\0';
		at = alias_find(s, oc->aliases[i], strlen(oc->aliases[i]));
		if (at >= 0 && strcmp(s->alias_values[at], eq + 1) == 0)
			continue;
		if (alias_set_locked(s, oc->aliases[i], eq + 1, &e) < 0) {
			why = "an alias it defined is over the session's limits or invalid";
			ward_error_free(e);
		}
	}
	if (!why)
		return;
note:
	if (asprintf(&s->state_note, "shell state not kept: %s; the session keeps what it had", why) < 0)
		s->state_note = NULL;
	r->state_note = s->state_note ? strdup(s->state_note) : NULL;
}

static size_t count_lines(const char *t)
{
	size_t n = 0;

	for (; t && *t; t++)
		n += *t == '\n';
	return n;
}

/* The most background jobs a session lists, and of each one's text. */
#define JOBS_MAX 64
#define JOB_TEXT_MAX 200

/* A shared session's jobs after a command (lock held): the earlier ones the
 * shell saw still running, then the command's own from its `jobs -l`,
 * numbered on. A report not complete or not the shell's changes nothing
 * (the pids are checked again by the next command's shell); a sandbox
 * replaced or killed takes them all. */
static void keep_jobs(struct ward_session *s, struct session_outcome *oc)
{
	char *out = NULL, *line;
	size_t len = 0, count = 0;
	FILE *f;
	int next = 1;

	if (oc->sandbox_new) {
		free(s->jobs);
		s->jobs = NULL;
	}
	if (!oc->complete || oc->forged || !oc->jobs_new || !oc->jobs_alive)
		return;
	f = open_memstream(&out, &len);
	if (!f)
		return;
	for (line = s->jobs; line && *line;) {
		char *nl = strchr(line, '\n'), key[24];
		int n = atoi(line);

		snprintf(key, sizeof(key), " %d ", n);
		if (nl && (strncmp(oc->jobs_alive, key + 1, strlen(key) - 1) == 0 ||
			   strstr(oc->jobs_alive, key))) {
			fwrite(line, 1, (size_t)(nl + 1 - line), f);
			count++;
		}
		if (n >= next)
			next = n + 1;
		line = nl ? nl + 1 : line + strlen(line);
	}
	/* "[1]+ 1234 Running                 text &" (continuation lines of a
	 * pipeline start with spaces: skipped) */
	for (line = oc->jobs_new; *line && count < JOBS_MAX;) {
		char *nl = strchr(line, '\n'), *p = line, *text;
		size_t tl;
		long pid;

		if (nl)
			*nl = '\0';
		if (*p++ != '[' || !(p = strchr(p, ']')))
			goto next;
		p += strspn(p + 1, "+- ") + 1;
		pid = strtol(p, &p, 10);
		if (pid <= 0 || *p != ' ')
			goto next;
		p += strspn(p, " ");
		if (strncmp(p, "Running", 7) != 0)
			goto next;
		text = p + 7 + strspn(p + 7, " ");
		tl = strlen(text);
		if (tl >= 2 && strcmp(text + tl - 2, " &") == 0)
			tl -= 2;
		if (tl > JOB_TEXT_MAX)
			tl = JOB_TEXT_MAX;
		fprintf(f, "%d %ld ", next++, pid);
		for (size_t i = 0; i < tl; i++)
			fputc((unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i], f);
		fputc('\n', f);
		count++;
	next:
		line = nl ? nl + 1 : line + strlen(line);
	}
	if (fclose(f) != 0) {
		free(out);
		return;
	}
	free(s->jobs);
	s->jobs = len ? out : NULL;
	if (!len)
		free(out);
}

static int exec_typed(struct ward_session *s, const char *cmd,
		      const struct ward_session_exec_options *opt, uint64_t replay_of,
		      struct ward_session_result *r, struct ward_error **err)
{
	struct ward_session_exec_options none = { 0 };
	struct session_job job = { 0 };
	struct session_outcome oc = { 0 };
	struct ward_history_entry he = { 0 };
	struct ward_error *why = NULL;
	_cleanup_free_ char *start_cwd = NULL, *start_old = NULL, *state = NULL, *options = NULL,
			    *jobs = NULL;
	char **env = NULL;
	long long t0;
	int timeout, rc = 0;

	memset(r, 0, sizeof(*r));
	if (!opt)
		opt = &none;
	if (!cmd || !cmd[strspn(cmd, " \t\r\n")]) {
		ward_error_make_kind(&why, WARD_ERR_INVALID_PARAMETERS, 0, "command is empty");
		refuse(r, why);
		return 0;
	}
	if (strlen(cmd) > s->opt.limits.command_bytes) {
		ward_error_make_kind(&why, WARD_ERR_INVALID_PARAMETERS, 0,
				     "command longer than %zu bytes (policy session.limits.command_bytes)",
				     s->opt.limits.command_bytes);
		refuse(r, why);
		return 0;
	}
	timeout = opt->timeout ? opt->timeout : s->opt.timeout;
	if (timeout < 1 || timeout > WARD_TIMEOUT_MAX) {
		ward_error_make_kind(&why, WARD_ERR_INVALID_PARAMETERS, 0,
				     "timeout must be between 1 and %d seconds, got %d",
				     WARD_TIMEOUT_MAX, timeout);
		refuse(r, why);
		return 0;
	}

	pthread_mutex_lock(&s->lock);
	if (expand_locked(s, cmd, &r->expanded, &why) < 0) {
		pthread_mutex_unlock(&s->lock);
		if (why->kind != WARD_ERR_INVALID_PARAMETERS) {
			if (err)
				*err = why;
			else
				ward_error_free(why);
			return -1;
		}
		refuse(r, why);
		return 0;
	}
	env = strv_copy(s->env);
	state = s->state ? strdup(s->state) : NULL;
	options = s->options ? strdup(s->options) : NULL;
	jobs = s->jobs ? strdup(s->jobs) : NULL;
	start_cwd = opt->workdir ? join_path(s->cwd, opt->workdir) : strdup(s->cwd);
	start_old = strdup(s->oldpwd);
	pthread_mutex_unlock(&s->lock);
	if (!env || !start_cwd || !start_old) {
		ward_env_free(env);
		return ward_error_make(err, ENOMEM, "session");
	}
	if (opt->workdir && strcmp(s->backend->name, "ssh") != 0 && !admitted_dir(s, start_cwd)) {
		ward_env_free(env);
		refuse_dir(&why, "workdir", start_cwd);
		refuse(r, why);
		return 0;
	}

	if (!opt->concurrent)
		pthread_mutex_lock(&s->run_lock);
	pthread_mutex_lock(&s->lock);
	s->running++;
	pthread_mutex_unlock(&s->lock);

	he.start_ms = wall_ms();
	t0 = ward_now_ns();
	if (front_door(s, r->expanded, opt, &why) < 0) {
		refuse(r, why);
	} else {
		job.command = r->expanded;
		job.env = env;
		job.cwd = start_cwd;
		job.oldpwd = start_old;
		job.strict_cwd = opt->workdir != NULL;
		job.timeout = timeout;
		job.forward_signals = opt->forward_signals;
		job.shell = s->shell;
		job.cancel_fd = opt->cancel_fd > 0 ? opt->cancel_fd : s->cfg.cancel_fd;
		job.state = state;
		job.options = options;
		job.jobs = jobs;
		job.progress = opt->progress;
		job.progress_ctx = opt->progress_ctx;
		job.report_cap = 2 * PATH_MAX + 8 + s->opt.limits.env_bytes +
				 s->opt.limits.alias_bytes + 2 * WARD_SESSION_STATE_BYTES + 4096;
		rc = s->backend->exec(s, &job, &r->run, &oc, err);
	}
	he.duration_ms = (ward_now_ns() - t0) / 1000000;

	pthread_mutex_lock(&s->lock);
	if (rc == 0 && oc.cwd) {
		/* The report is the command's (its first line a prefix of the
		 * real path when a name holds a newline, or any line the
		 * shell's own code writes): a directory it names is taken as a
		 * tool argument's is, resolved here too, so that a symbolic
		 * link in the workdir does not take the next command out. */
		bool ok = oc.checked ? !oc.refused :
				       strcmp(oc.cwd, start_cwd) == 0 || admitted_dir(s, oc.cwd);

		if (ok) {
			if (strcmp(oc.cwd, start_cwd) != 0 || opt->workdir) {
				free(s->oldpwd);
				s->oldpwd = oc.oldpwd && admitted_dir(s, oc.oldpwd) ?
						    steal_ptr(oc.oldpwd) : strdup(start_cwd);
				free(s->cwd);
				s->cwd = steal_ptr(oc.cwd);
			}
		} else {
			r->cwd_refused = oc.refused ? steal_ptr(oc.refused) : steal_ptr(oc.cwd);
		}
	}
	r->cwd = strdup(s->cwd);
	if (rc == 0 && strcmp(s->shell, "/bin/bash") == 0 && s->backend != &ward_session_ssh_backend)
		keep_state(s, &oc, r);
	if (rc == 0 && s->backend == &ward_session_local_shared) {
		size_t before = count_lines(s->jobs), after;
		char *note = NULL;

		keep_jobs(s, &oc);
		after = count_lines(s->jobs);
		/* What a timeout or a cancel left of the jobs. A cancelled
		 * request gets no answer over MCP: the next result says it too. */
		if (oc.sandbox_new && before) {
			if (asprintf(&note, "the session's sandbox was replaced: its %zu background "
					    "job%s ended", before, before == 1 ? "" : "s") < 0)
				note = NULL;
			free(s->jobs_note);
			s->jobs_note = note ? strdup(note) : NULL;
		} else if (s->jobs_note) {
			note = steal_ptr(s->jobs_note);
		} else if (!oc.complete && r->run.started && after &&
			 asprintf(&note, "%zu background job%s of earlier commands still running",
				  after, after == 1 ? "" : "s") < 0)
			note = NULL;
		if (note) {
			char *joined = NULL;

			if (r->state_note && asprintf(&joined, "%s; %s", r->state_note, note) >= 0) {
				free(note);
				note = joined;
			}
			free(r->state_note);
			r->state_note = note;
		}
	}
	if (rc == 0 && !opt->no_history) {
		he.command = (char *)cmd;
		he.expanded = r->expanded;
		he.exit_code = r->run.exit_code;
		he.error_kind = r->run.error ? (char *)ward_error_kind_name(r->run.error->kind) : NULL;
		he.cwd = start_cwd;
		he.replay_of = replay_of;
		r->history_id = history_add(s, &he);
	}
	s->running--;
	if (s->running == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	if (!opt->concurrent)
		pthread_mutex_unlock(&s->run_lock);

	ward_session_outcome_release(&oc);
	ward_env_free(env);
	if (rc < 0)
		ward_session_result_release(r);
	return rc;
}

int ward_session_exec(struct ward_session *s, const char *cmd,
		      const struct ward_session_exec_options *opt, struct ward_session_result *r,
		      struct ward_error **err)
{
	return exec_typed(s, cmd, opt, 0, r, err);
}

int ward_session_cd(struct ward_session *s, const char *dir, struct ward_session_result *r,
		    struct ward_error **err)
{
	_cleanup_free_ char *q = NULL, *cmd = NULL;

	if (!dir || !*dir) {
		memset(r, 0, sizeof(*r));
		refuse(r, NULL);
		ward_error_make_kind(&r->run.error, WARD_ERR_INVALID_PARAMETERS, 0,
				     "cd: no directory given");
		return 0;
	}
	q = ward_shell_quote(dir);
	if (!q || asprintf(&cmd, "cd -- %s", q) < 0) {
		cmd = NULL;
		return ward_error_make(err, ENOMEM, "cd");
	}
	return exec_typed(s, cmd, NULL, 0, r, err);
}

int ward_session_replay(struct ward_session *s, uint64_t id,
			const struct ward_session_exec_options *opt, struct ward_session_result *r,
			struct ward_error **err)
{
	_cleanup_free_ char *cmd = NULL;
	size_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_hist; i++)
		if (s->hist[i].id == id) {
			cmd = strdup(s->hist[i].command);
			break;
		}
	pthread_mutex_unlock(&s->lock);
	if (i == s->n_hist) {
		memset(r, 0, sizeof(*r));
		refuse(r, NULL);
		ward_error_make_kind(&r->run.error, WARD_ERR_INVALID_PARAMETERS, 0,
				     "no history entry %llu", (unsigned long long)id);
		return 0;
	}
	if (!cmd)
		return ward_error_make(err, ENOMEM, "replay");
	return exec_typed(s, cmd, opt, id, r, err);
}

/* ---- life ------------------------------------------------------------------------ */

enum ward_session_isolation ward_session_isolation(const struct ward_session *s)
{
	return s->opt.isolation;
}

const char *ward_session_shell(const struct ward_session *s)
{
	return s->shell;
}

const char *ward_session_backend(const struct ward_session *s)
{
	return s->backend == &ward_session_ssh_backend ? "ssh" : "local";
}

int ward_session_default_timeout(const struct ward_session *s)
{
	return s->opt.timeout;
}

const char *ward_session_workdir(const struct ward_session *s)
{
	return s->workdir;
}

static int add_allowed(struct ward_session *s, const char *dir)
{
	char **g = realloc(s->allowed, (s->n_allowed + 1) * sizeof(*g));

	if (!g)
		return -1;
	s->allowed = g;
	if (!(s->allowed[s->n_allowed] = strdup(dir)))
		return -1;
	s->n_allowed++;
	return 0;
}

/* The environment a session starts with: the host's safe variables (or
 * none), then the policy's; HOME moved to the start directory when the
 * host's would not be visible, PWD and OLDPWD left to the shell. */
static int initial_env(struct ward_session *s, struct ward_error **err)
{
	bool empty = s->opt.empty_env || s->cfg.clearenv;
	const char *home;

	s->env = ward_env_build(empty ? NULL : environ, empty, NULL, s->cfg.setenv,
				s->cfg.n_setenv, err);
	if (!s->env)
		return -1;
	env_del(s->env, "PWD");
	env_del(s->env, "OLDPWD");
	if (empty)
		return 0;
	/* One rule with `ward run` (core/run.c): a HOME the sandbox would not
	 * show is /tmp, the sandbox's own; never the workdir, where a tool's
	 * dotfiles (~/.gitconfig, ~/.cache) would land in the project. */
	home = ward_env_get(s->env, "HOME");
	if (!sandbox_view(s))
		return 0;
	if ((!home || !(allowed_dir(s, home) || under(home, "/tmp"))) &&
	    env_put(&s->env, "HOME", "/tmp") < 0)
		return ward_error_make(err, ENOMEM, "session environment");
	return 0;
}

int ward_session_new(struct ward_config *cfg, const struct ward_session_options *o,
		     struct ward_session **out, struct ward_error **err)
{
	struct ward_session *s = calloc(1, sizeof(*s));
	struct ward_session_options defaults;
	size_t i;
	int rc;

	*out = NULL;
	if (!s) {
		ward_config_release(cfg);
		return ward_error_make(err, ENOMEM, "session");
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->run_lock, NULL);
	pthread_mutex_init(&s->changes_lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	s->ratelog = &s->own_log;
	s->rate_lock = &s->lock;
	s->shell = "/bin/sh";
	s->cfg = *cfg;
	ward_config_init(cfg); /* taken over */
	if (!o) {
		ward_session_options_init(&defaults);
		o = &defaults;
	}
	if (options_copy(&s->opt, o) < 0) {
		ward_session_options_init(&s->opt);
		ward_session_free(s);
		return ward_error_make(err, ENOMEM, "session");
	}
	if (s->opt.timeout < 1 || s->opt.timeout > WARD_TIMEOUT_MAX) {
		rc = ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					  "session timeout must be between 1 and %d seconds, got %d",
					  WARD_TIMEOUT_MAX, s->opt.timeout);
		goto fail;
	}
	/* The session's commands carry their own environment and side channel. */
	s->cfg.stdin_fd = s->cfg.stdout_fd = s->cfg.stderr_fd = -1;
	s->cfg.forward_signals = false;

	if (s->opt.ssh.host) {
		if (!s->opt.ssh.workdir || s->opt.ssh.workdir[0] != '/') {
			rc = ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						  "ssh: the remote workdir must be an absolute path");
			goto fail;
		}
		s->workdir = strdup(s->opt.ssh.workdir);
		s->backend = &ward_session_ssh_backend;
	} else {
		if (!s->cfg.workdir) {
			char cwd[PATH_MAX];

			if (!getcwd(cwd, sizeof(cwd))) {
				rc = ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
							  "current directory");
				goto fail;
			}
			if (ward_config_set_workdir(&s->cfg, cwd, err) < 0)
				goto fail_quiet;
		}
		/* said once, now, rather than by each command's ward_run() */
		if (ward_admit_workdir(&s->cfg.admit, s->cfg.workdir, err) < 0)
			goto fail_quiet;
		s->workdir = strdup(s->cfg.workdir);
		/* bash where installed (the sandbox's view shows the host's /bin):
		 * what an agent writes, and what a session keeps between commands */
		s->shell = ward_session_options_shell(&s->opt);
		if (s->opt.shell == WARD_SESSION_SHELL_BASH && access(s->shell, X_OK) < 0) {
			rc = ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
						  "shell 'bash': /bin/bash is not installed");
			goto fail;
		}
		/* what the validators read is what the shell runs */
		s->cfg.shell_bash = strcmp(s->shell, "/bin/bash") == 0;
		s->backend = s->opt.isolation == WARD_SESSION_SHARED ? &ward_session_local_shared :
									&ward_session_local_fresh;
	}
	s->cwd = s->workdir ? strdup(s->workdir) : NULL;
	s->oldpwd = s->workdir ? strdup(s->workdir) : NULL;
	if (!s->workdir || !s->cwd || !s->oldpwd || add_allowed(s, s->workdir) < 0) {
		rc = ward_error_make(err, ENOMEM, "session");
		goto fail;
	}
	/* the sandbox's own /tmp: HOME, when the host's is not shown */
	if (sandbox_view(s) && add_allowed(s, "/tmp") < 0) {
		rc = ward_error_make(err, ENOMEM, "session");
		goto fail;
	}
	for (i = 0; !s->opt.ssh.host && i < s->cfg.n_mounts; i++) {
		const struct ward_mount *m = &s->cfg.mounts[i];
		bool inside = s->cfg.view && s->cfg.mode != WARD_SANDBOX_OFF;

		if (m->kind == WARD_MOUNT_TMPFS || !inside)
			continue;
		if (add_allowed(s, m->target) < 0) {
			rc = ward_error_make(err, ENOMEM, "session");
			goto fail;
		}
	}
	if (initial_env(s, err) < 0)
		goto fail_quiet;
	if (s->opt.ssh.host)
		rc = ward_session_ssh_open(s, err);
	else
		rc = ward_session_local_open(s, err);
	if (rc < 0) {
		s->backend = NULL;
		goto fail_quiet;
	}
	*out = s;
	return 0;
fail:
	(void)rc;
fail_quiet:
	s->backend = NULL;
	ward_session_free(s);
	return -1;
}

void ward_session_free(struct ward_session *s)
{
	size_t i;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	while (s->running > 0)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
	if (s->backend && s->backend->close)
		s->backend->close(s);
	ward_config_release(&s->cfg);
	ward_session_options_release(&s->opt);
	free(s->workdir);
	free(s->cwd);
	free(s->oldpwd);
	ward_env_free(s->env);
	for (i = 0; i < s->n_alias; i++) {
		free(s->alias_names[i]);
		free(s->alias_values[i]);
	}
	free(s->alias_names);
	free(s->alias_values);
	ward_history_free(s->hist, s->n_hist);
	ward_ratelog_release(&s->own_log);
	for (i = 0; i < s->n_allowed; i++)
		free(s->allowed[i]);
	free(s->allowed);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->run_lock);
	pthread_mutex_destroy(&s->changes_lock);
	pthread_cond_destroy(&s->idle);
	free(s->changes); /* the set itself stays kept, under its name */
	free(s->state);
	free(s->options);
	free(s->jobs);
	free(s->jobs_note);
	free(s->state_note);
	free(s);
}
