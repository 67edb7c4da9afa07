/* script.c — the shell script a session's backend runs for one command (cd
 * to the session's directory, report where the command ended on fd 3), its
 * report read back, and the quoting both backends use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session/session-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/env.h"

char *ward_shell_quote(const char *s)
{
	size_t n = 2, i;
	char *out, *o;

	for (i = 0; s[i]; i++)
		n += s[i] == '\'' ? 4 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	*o++ = '\'';
	for (i = 0; s[i]; i++) {
		if (s[i] == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = s[i];
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/* ---- the script -------------------------------------------------------------- */

/* s as bash's $'...' on one line: the script's first line stays the command's
 * (the shell's messages give its line numbers), whatever s holds. */
static char *ansi_quote(const char *s)
{
	size_t n = 3, i;
	char *out, *o;

	for (i = 0; s[i]; i++)
		n += 4;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	*o++ = '$';
	*o++ = '\'';
	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || c == '\'') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += sprintf(o, "\\x%02x", c);
		} else {
			*o++ = (char)c;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/* The trap of a bash session: where the command ended and its OLDPWD, then
 * the shell's state, on fd 3 (format: session-internal.h). It runs at exit,
 * after the command: the options, shopt and umask first (restored just
 * before the next command), before the trap changes any; then the variables
 * by their first letter, and functions — no fork anywhere, which would cost
 * a process per command; SIGPIPE ignored, so a report the reader stops
 * taking does not turn the command's exit status into a signal. Every name
 * it makes starts with __ward_ and is left out of the state. The state
 * turns extglob on to parse what it restores (a function may use it); the
 * options record sets it as the command left it. */
#define BASH_SKIP                                                                                  \
	"BASH*|EUID|UID|PPID|SHELLOPTS|GROUPS|FUNCNAME|LINENO|RANDOM|SRANDOM|SECONDS|EPOCH*|"     \
	"HISTCMD|PIPESTATUS|DIRSTACK|COMP_*|PWD|OLDPWD|_|SHLVL|__ward_*|HOSTNAME|HOSTTYPE|"       \
	"MACHTYPE|OSTYPE|OPTIND|OPTARG"
static const char bash_trap[] =
	"{ trap \"\" PIPE; [ -d \"$PWD\" ] && pwd -P || echo; printf \"%s\\n\" \"$OLDPWD\"; "
	"printf \"\\0O\"; set +o; shopt -p; umask -p; printf \"\\0\"; "
	"set +eufx; shopt -u nocasematch; __ward_v=(); for __ward_n in "
	"\"${!A@}\" \"${!B@}\" \"${!C@}\" \"${!D@}\" \"${!E@}\" \"${!F@}\" \"${!G@}\" \"${!H@}\" \"${!I@}\" "
	"\"${!J@}\" \"${!K@}\" \"${!L@}\" \"${!M@}\" \"${!N@}\" \"${!O@}\" \"${!P@}\" \"${!Q@}\" \"${!R@}\" "
	"\"${!S@}\" \"${!T@}\" \"${!U@}\" \"${!V@}\" \"${!W@}\" \"${!X@}\" \"${!Y@}\" \"${!Z@}\" \"${!a@}\" "
	"\"${!b@}\" \"${!c@}\" \"${!d@}\" \"${!e@}\" \"${!f@}\" \"${!g@}\" \"${!h@}\" \"${!i@}\" \"${!j@}\" "
	"\"${!k@}\" \"${!l@}\" \"${!m@}\" \"${!n@}\" \"${!o@}\" \"${!p@}\" \"${!q@}\" \"${!r@}\" \"${!s@}\" "
	"\"${!t@}\" \"${!u@}\" \"${!v@}\" \"${!w@}\" \"${!x@}\" \"${!y@}\" \"${!z@}\" \"${!_@}\"; do "
	"case $__ward_n in " BASH_SKIP ") ;; "
	"*) if [[ ${!__ward_n@a} == *x* ]]; then "
	"printf \"E%s=%s\\0\" \"$__ward_n\" \"${!__ward_n}\"; "
	"else __ward_v+=(\"$__ward_n\"); fi;; esac; done; "
	"for __ward_n in \"${!BASH_ALIASES[@]}\"; do "
	"printf \"A%s=%s\\0\" \"$__ward_n\" \"${BASH_ALIASES[$__ward_n]}\"; done; "
	"printf \"Sshopt -s extglob\\n\"; ((${#__ward_v[@]})) && declare -p \"${__ward_v[@]}\"; "
	"declare -f; printf \"\\0Z\\0\"; } >&3 2>/dev/null";

/* The script's first write on fd 3, before anything of the command runs: in
 * a fresh sandbox nothing but the shell exists yet, so whoever sent it is the
 * shell, and the reader takes the rest of the report from that process only
 * (local.c). Stripped before the report is parsed. */
#define HELLO "printf W >&3; "

static char *bash_script(const struct ward_session *s, const struct session_job *job)
{
	_cleanup_free_ char *qcwd = ward_shell_quote(job->cwd);
	_cleanup_free_ char *qold = ward_shell_quote(job->oldpwd ? job->oldpwd : job->cwd);
	_cleanup_free_ char *qstart = ward_shell_quote(s->workdir);
	_cleanup_free_ char *qtrap = ward_shell_quote(bash_trap);
	_cleanup_free_ char *qcmd = ansi_quote(job->command);
	_cleanup_free_ char *qstate = ansi_quote(job->state ? job->state : "");
	_cleanup_free_ char *qopt = ansi_quote(job->options ? job->options : "");
	char *out = NULL;
	int rc;

	if (!qcwd || !qold || !qstart || !qtrap || !qcmd || !qstate || !qopt)
		return NULL;
	/* The state first (a variable, a function, umask), then the directory
	 * and the trap, then the options (so `set -x` traces the command, not
	 * this), then the command itself, through eval: what the state turned on
	 * (shopt extglob) applies to how it is parsed. Its programs do not get
	 * fd 3 (3>&-). */
	if (job->strict_cwd)
		rc = asprintf(&out,
			      HELLO "[ -n \"${HOME+x}\" ] || HOME=%s; eval -- %s 2>/dev/null; "
			      "cd -- %s || exit 1; OLDPWD=%s; "
			      "trap %s EXIT; eval -- %s 2>/dev/null; eval -- %s 3>&-",
			      qstart, qstate, qcwd, qold, qtrap, qopt, qcmd);
	else
		rc = asprintf(&out,
			      HELLO "[ -n \"${HOME+x}\" ] || HOME=%s; eval -- %s 2>/dev/null; "
			      "cd -- %s 2>/dev/null || "
			      "{ echo \"ward: directory \"%s\" is gone, back to \"%s >&2; cd -- %s; }; "
			      "OLDPWD=%s; trap %s EXIT; eval -- %s 2>/dev/null; eval -- %s 3>&-",
			      qstart, qstate, qcwd, qcwd, qstart, qstart, qold, qtrap, qopt, qcmd);
	return rc < 0 ? NULL : out;
}
static char *sh_script(const struct ward_session *s, const struct session_job *job)
{
	_cleanup_free_ char *qcwd = ward_shell_quote(job->cwd);
	_cleanup_free_ char *qold = ward_shell_quote(job->oldpwd ? job->oldpwd : job->cwd);
	_cleanup_free_ char *qstart = ward_shell_quote(s->workdir);
	char *out = NULL;
	int rc;

	if (!qcwd || !qold || !qstart)
		return NULL;
	/* The trap: where the command ended and its OLDPWD, on fd 3. A directory
	 * removed under the shell reports an empty line (kept as it was). */
#define REPORT_TRAP                                                                                \
	"trap '{ [ -d \"$PWD\" ] && pwd -P || echo; printf \"%%s\\n\" \"$OLDPWD\"; } "           \
	">&3 2>/dev/null' EXIT; "
	/* On the command's first line, so that the shell's messages give the
	 * command's own line numbers. The trap reports where the command ended
	 * on fd 3; the shell keeps the command's exit status after it. */
	if (job->strict_cwd)
		rc = asprintf(&out,
			      HELLO "[ -n \"${HOME+x}\" ] || HOME=%s; cd -- %s || exit 1; OLDPWD=%s; "
			      REPORT_TRAP "%s",
			      qstart, qcwd, qold, job->command);
	else
		rc = asprintf(&out,
			      HELLO "[ -n \"${HOME+x}\" ] || HOME=%s; cd -- %s 2>/dev/null || "
			      "{ echo \"ward: directory \"%s\" is gone, back to \"%s >&2; "
			      "cd -- %s; }; OLDPWD=%s; "
			      REPORT_TRAP "%s",
			      qstart, qcwd, qcwd, qstart, qstart, qold, job->command);
	return rc < 0 ? NULL : out;
}

char *ward_session_script(const struct ward_session *s, const struct session_job *job)
{
	if (job->shell && strcmp(job->shell, "/bin/bash") == 0)
		return bash_script(s, job);
	return sh_script(s, job);
}

void ward_session_parse_cwd(const char *text, size_t len, struct session_outcome *out)
{
	const char *nl = memchr(text, '\n', len), *nl2;

	if (!nl || nl == text)
		return;
	out->cwd = strndup(text, (size_t)(nl - text));
	nl2 = memchr(nl + 1, '\n', len - (size_t)(nl + 1 - text));
	if (nl2 && nl2 > nl + 1)
		out->oldpwd = strndup(nl + 1, (size_t)(nl2 - nl - 1));
}

static void strv_push(char ***v, size_t *n, const char *s, size_t len)
{
	char **nv = realloc(*v, (*n + 2) * sizeof(char *));
	char *d;

	if (!nv)
		return;
	*v = nv;
	d = strndup(s, len);
	if (!d)
		return;
	nv[(*n)++] = d;
	nv[*n] = NULL;
}

void ward_session_parse_state(const char *text, size_t len, struct session_outcome *out)
{
	const char *p = memchr(text, '\0', len), *end = text + len;
	size_t n_env = 0, n_alias = 0;

	if (!p)
		return;
	/* an empty environment is still one */
	out->env = calloc(1, sizeof(char *));
	out->aliases = calloc(1, sizeof(char *));
	if (!out->env || !out->aliases)
		return;
	for (p++; p < end;) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		size_t n;

		if (!z)
			return; /* cut short: not complete */
		n = (size_t)(z - p);
		if (n == 0)
			return;
		switch (p[0]) {
		case 'E':
			strv_push(&out->env, &n_env, p + 1, n - 1);
			break;
		case 'A':
			strv_push(&out->aliases, &n_alias, p + 1, n - 1);
			break;
		case 'S':
			free(out->state);
			out->state = strndup(p + 1, n - 1);
			break;
		case 'O':
			free(out->options);
			out->options = strndup(p + 1, n - 1);
			break;
		case 'Z':
			out->complete = out->state && out->options;
			return;
		default:
			return;
		}
		p = z + 1;
	}
}

void ward_session_outcome_release(struct session_outcome *out)
{
	free(out->cwd);
	free(out->oldpwd);
	free(out->refused);
	ward_env_free(out->env);
	ward_env_free(out->aliases);
	free(out->state);
	free(out->options);
	memset(out, 0, sizeof(*out));
}
