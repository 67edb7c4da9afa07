/* script.c — the shell script a session's backend runs for one command (cd
 * to the session's directory, report where the command ended on fd 3), its
 * report read back, and the quoting both backends use. */
#include <ctype.h>
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
 * before the next command), before the trap changes any — the options as
 * $SHELLOPTS and $BASHOPTS, two lines where `set +o` and `shopt -p` wrote
 * eighty, each a write and a wake-up of the reader; then every variable
 * (`declare -p`, one builtin: the exported ones are taken into the
 * environment, the rest into the state, and bash's own left out — by
 * ward_session_parse_state, in C: enumerating them by their first letters
 * with ${!A@} … and testing each in the shell cost ~20 times as much), the
 * aliases and the functions — no fork anywhere, which would cost a process
 * per command; SIGPIPE ignored, so a report the reader stops taking does not
 * turn the command's exit status into a signal. Every name it makes starts
 * with __ward_ and is left out of the state. */
static const char bash_trap[] =
	"{ trap \"\" PIPE; [ -d \"$PWD\" ] && pwd -P || echo; printf \"%s\\n\" \"$OLDPWD\"; "
	"printf \"\\0O#%s|%s\\n\" \"$SHELLOPTS\" \"$BASHOPTS\"; umask -p; "
	"printf \"\\0\"; "
	"set +eufx; shopt -u nocasematch; printf \"J\"; builtin jobs -l; printf \"\\0K\"; "
	"for __ward_n in \"${!__ward_jp[@]}\"; do builtin kill -0 \"${__ward_jp[__ward_n]}\" && "
	"printf \"%s \" \"$__ward_n\"; done; printf \"\\0\"; "
	"unset -f __ward_jobs __ward_kill; [[ -n $__ward_fj ]] && unset -f jobs; "
	"[[ -n $__ward_fk ]] && unset -f kill; printf \"V\"; builtin declare -p; printf \"\\0\"; "
	"for __ward_n in \"${!BASH_ALIASES[@]}\"; do "
	"printf \"A%s=%s\\0\" \"$__ward_n\" \"${BASH_ALIASES[$__ward_n]}\"; done; "
	"printf \"S\"; builtin declare -f; printf \"\\0Z\\0\"; } >&3 2>/dev/null";

/* The report of a command that runs a program by exec (see bash_script):
 * such a command changes none of the shell's state, so only where it
 * stands and the U record ("unchanged": the session keeps what it had) —
 * not the eighty-odd lines of declare -p, each a write and a wake-up of
 * the reader, in the way of the program's start. It changes no option
 * either (the full report turns off -e, -u, -f and -x for itself), so the
 * program runs under the session's noglob, nounset and errexit as they
 * are; `|| :` keeps a failed write from ending the shell under errexit. */
static const char bash_trap_same[] =
	"{ trap \"\" PIPE; [ -d \"$PWD\" ] && pwd -P || echo; "
	"printf \"%s\\n\\0U\\0Z\\0\" \"$OLDPWD\"; } >&3 2>/dev/null || :";

/* The script's first write on fd 3, before anything of the command runs: in
 * a fresh sandbox nothing but the shell exists yet, so whoever sent it is the
 * shell, and the reader takes the rest of the report from that process only
 * (local.c). Stripped before the report is parsed. */
#define HELLO "printf W >&3; "

/* A shared session's background jobs, started by earlier commands (each
 * command is a new bash, whose own job table starts empty): `jobs` lists
 * them and `kill %N` reaches them, through functions of those names unless
 * the session defined its own. __ward_jp and __ward_jt (pid and text by job
 * number) are set before. The trap reports which are still running. */
static const char jobs_fns[] =
	"__ward_jobs() { local n; for n in \"${!__ward_jp[@]}\"; do "
	"builtin kill -0 \"${__ward_jp[n]}\" 2>/dev/null || continue; case $1 in "
	"-p) echo \"${__ward_jp[n]}\";; "
	"-l) printf \"[%s]  %s Running                 %s\\n\" \"$n\" \"${__ward_jp[n]}\" \"${__ward_jt[n]}\";; "
	"*) printf \"[%s]  Running                 %s\\n\" \"$n\" \"${__ward_jt[n]}\";; esac; "
	"done; builtin jobs \"$@\"; }; "
	"__ward_kill() { local a; local -a v=(); for a; do "
	"if [[ $a =~ ^%([0-9]+)$ && -n ${__ward_jp[${BASH_REMATCH[1]}]} ]]; then "
	"v+=(\"${__ward_jp[${BASH_REMATCH[1]}]}\"); else v+=(\"$a\"); fi; done; "
	"builtin kill \"${v[@]}\"; }; "
	"declare -F jobs >/dev/null || { __ward_fj=1; jobs() { __ward_jobs \"$@\"; }; }; "
	"declare -F kill >/dev/null || { __ward_fk=1; kill() { __ward_kill \"$@\"; }; }; ";

/* The session's jobs ("N PID TEXT" lines) as bash: the two arrays and the
 * functions, or "" without jobs. malloc'd, NULL on ENOMEM. */
static char *jobs_setup(const char *jobs)
{
	char *out = NULL, *p;
	const char *line;
	size_t cap;

	if (!jobs || !*jobs)
		return strdup("");
	/* per line at most 5 times its length (quoted) and 80 more */
	cap = sizeof(jobs_fns) + 64;
	for (line = jobs; *line; line++)
		cap += 5 + (*line == '\n' ? 80 : 0);
	cap += 80;
	out = malloc(cap);
	if (!out)
		return NULL;
	p = out + sprintf(out, "__ward_jp=(); __ward_jt=(); ");
	for (line = jobs; *line;) {
		const char *nl = strchr(line, '\n'), *sp1, *sp2;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		_cleanup_free_ char *one = strndup(line, len);
		_cleanup_free_ char *qt = NULL;

		line += len + (nl ? 1 : 0);
		if (!one)
			goto fail;
		sp1 = strchr(one, ' ');
		sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		if (!sp2)
			continue;
		qt = ward_shell_quote(sp2 + 1);
		if (!qt)
			goto fail;
		p += sprintf(p, "__ward_jp[%d]=%d; __ward_jt[%d]=%s; ", atoi(one), atoi(sp1 + 1),
			     atoi(one), qt);
	}
	memcpy(p, jobs_fns, sizeof(jobs_fns));
	return out;
fail:
	free(out);
	return NULL;
}

/* bash's builtins and reserved words (5.2): a first word that is one of
 * them is not a program bash would run (enable -n and enable -f are not part
 * of a session's state: every command's bash has exactly these). */
static const char *const bash_own[] = {
	".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command",
	"compgen", "complete", "compopt", "continue", "declare", "dirs", "disown", "echo",
	"enable", "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash",
	"help", "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf",
	"pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt",
	"source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit",
	"umask", "unalias", "unset", "wait", "!", "[[", "]]", "{", "}", "case", "coproc", "do",
	"done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "select", "then",
	"time", "until", "while",
};

/* Whether command is one simple command whose first word names a program
 * (not a builtin or reserved word; an assignment, a function of that name
 * and a program not found are ruled out by the script at run time), in which
 * nothing can change the shell's state: no list, pipeline, background job,
 * compound command, subshell or substitution, no ${...} or $((...)), whose
 * expansion may assign. Conservative: a quoted ';' or '&' rules it out too.
 * Such a command can be exec'd by the shell after its report (see
 * bash_script), as bash itself execs the last simple command of `bash -c`. */
bool ward_session_simple_program(const char *command, char *word, size_t size)
{
	size_t i, n;
	const char *c;

	for (c = command; *c; c++) {
		if (strchr("\n;&|()`{}", *c) || ((unsigned char)*c < 0x20 && *c != '\t'))
			return false;
		if (*c == '$' && (c[1] == '{' || c[1] == '(' || c[1] == '['))
			return false;
	}
	command += strspn(command, " \t");
	n = strcspn(command, " \t");
	if (n == 0 || n >= size)
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+@%:,-",
			    command[i]))
			return false; /* quoted, expanded, an assignment, a redirection */
	memcpy(word, command, n);
	word[n] = '\0';
	for (i = 0; i < sizeof(bash_own) / sizeof(bash_own[0]); i++)
		if (strcmp(word, bash_own[i]) == 0)
			return false;
	return true;
}

/* The option lists of an options record "#SHELLOPTS|BASHOPTS\numask -p
 * line" (the trap's): [*set, *set+*n_set) and [*shopt, …); false when the
 * record is not in that form (the lists hold only option names and ':'). */
static bool option_lists(const char *opt, const char **set, size_t *n_set, const char **shopt,
			 size_t *n_shopt)
{
	const char *nl = opt ? strchr(opt, '\n') : NULL, *bar, *c;

	if (!opt || opt[0] != '#' || !nl)
		return false;
	bar = memchr(opt, '|', (size_t)(nl - opt));
	if (!bar)
		return false;
	for (c = opt + 1; c < nl; c++)
		if (c != bar && !strchr("abcdefghijklmnopqrstuvwxyz0123456789_:-", *c))
			return false;
	*set = opt + 1;
	*n_set = (size_t)(bar - opt - 1);
	*shopt = bar + 1;
	*n_shopt = (size_t)(nl - bar - 1);
	return true;
}

bool ward_session_traced(const char *options)
{
	const char *set, *shopt;
	size_t n_set, n_shopt, i = 0;

	if (!option_lists(options, &set, &n_set, &shopt, &n_shopt))
		return false;
	while (i < n_set) {
		size_t k = strcspn(set + i, ":|");

		if ((k == 6 && memcmp(set + i, "xtrace", 6) == 0) ||
		    (k == 7 && memcmp(set + i, "verbose", 7) == 0))
			return true;
		i += k + 1;
	}
	return false;
}

/* "W1 W2 …" of a list "w1:w2:…", each word after pre: "-o a -o b" for set,
 * "a b" for shopt. malloc'd, NULL on ENOMEM. */
static char *list_words(const char *list, size_t n, const char *pre)
{
	size_t cap = n * (strlen(pre) + 2) + 2, i = 0;
	char *out = malloc(cap), *o = out;

	if (!out)
		return NULL;
	*o = '\0';
	while (i < n) {
		size_t k = strcspn(list + i, ":|");

		if (k > n - i)
			k = n - i;
		if (k)
			o += sprintf(o, "%s%s%.*s", o == out ? "" : " ", pre, (int)k, list + i);
		i += k + 1;
	}
	return out;
}

/* The options' restore from the trap's record (see option_lists), and the
 * umask -p line after it. When the shell already has those options (it
 * does unless the last command changed one: a new bash has the same
 * defaults; the state turned extglob on to parse its functions, and it is
 * turned off again first), only umask is set. Otherwise every option it has that the
 * record has not is turned off, then the record's turned on — builtins
 * called as such, so that a function of the state named set or shopt does
 * not take their place. A record not in the trap's form (a report the
 * command wrote itself) restores nothing: the shell's defaults. malloc'd,
 * NULL on ENOMEM. */
static char *options_restore(const char *opt)
{
	const char *set, *shopt, *nl, *um;
	size_t n_set, n_shopt, n_um;
	_cleanup_free_ char *set_on = NULL, *shopt_on = NULL;
	char *out = NULL;

	if (!option_lists(opt, &set, &n_set, &shopt, &n_shopt))
		return strdup("");
	nl = strchr(opt, '\n');
	um = strstr(nl, "\numask ");
	n_um = um ? strspn(um + 7, "01234567") : 0;
	if (!um || n_um < 3 || n_um > 4 || (um[7 + n_um] != '\n' && um[7 + n_um]))
		return strdup("");
	set_on = list_words(set, n_set, "-o ");
	shopt_on = list_words(shopt, n_shopt, "");
	if (!set_on || !shopt_on)
		return NULL;
	if (asprintf(&out,
		     "builtin umask %.*s; [[ :%.*s: == *:extglob:* ]] || builtin shopt -u extglob; "
		     "[[ $SHELLOPTS == '%.*s' && $BASHOPTS == '%.*s' ]] || { "
		     "__ward_c=$SHELLOPTS:; while [[ -n $__ward_c ]]; do "
		     "__ward_n=${__ward_c%%%%:*}; __ward_c=${__ward_c#*:}; "
		     "[[ :%.*s: == *:\"$__ward_n\":* ]] || builtin set +o \"$__ward_n\"; done; "
		     "__ward_c=$BASHOPTS:; while [[ -n $__ward_c ]]; do "
		     "__ward_n=${__ward_c%%%%:*}; __ward_c=${__ward_c#*:}; "
		     "[[ :%.*s: == *:\"$__ward_n\":* ]] || builtin shopt -u \"$__ward_n\"; done; "
		     "%s%s%s%s%s%s} 2>/dev/null; ",
		     (int)n_um, um + 7, (int)n_shopt, shopt, (int)n_set, set, (int)n_shopt, shopt,
		     (int)n_set, set,
		     (int)n_shopt, shopt, *set_on ? "builtin set " : "", set_on, *set_on ? "; " : "",
		     *shopt_on ? "builtin shopt -s " : "", shopt_on, *shopt_on ? "; " : "") < 0)
		return NULL;
	return out;
}

/* The test, after `cd -P`, that the shell stands in one of the directories
 * the session may be in ($PWD is then the real path): a `case $PWD` whose
 * patterns are each directory and what is under it. The directory the session keeps was
 * checked when it was taken, but a command may replace it with a symbolic
 * link afterwards (to /etc: the report naming /etc is refused, and the
 * session stays where the link now is); the next command must not follow
 * it out. malloc'd, NULL on ENOMEM. */
static char *inside_test(const struct ward_session *s)
{
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	fputs("case $PWD in ", f);
	for (i = 0; i < s->n_allowed; i++) {
		_cleanup_free_ char *q = ward_shell_quote(s->allowed[i]);

		if (!q) {
			fclose(f);
			free(out);
			return NULL;
		}
		if (strcmp(s->allowed[i], "/") == 0)
			fprintf(f, "%s/*", i ? "|" : "");
		else
			fprintf(f, "%s%s|%s/*", i ? "|" : "", q, q);
	}
	fputs(i ? ") ;; *) false;; esac" : "*) false;; esac", f);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static char *bash_script(const struct ward_session *s, const struct session_job *job)
{
	_cleanup_free_ char *qjobs = NULL;
	_cleanup_free_ char *jset = jobs_setup(job->jobs);
	_cleanup_free_ char *qcwd = ward_shell_quote(job->cwd);
	_cleanup_free_ char *qold = ward_shell_quote(job->oldpwd ? job->oldpwd : job->cwd);
	_cleanup_free_ char *qstart = ward_shell_quote(s->workdir);
	_cleanup_free_ char *qtrap = ward_shell_quote(bash_trap);
	_cleanup_free_ char *qsame = ward_shell_quote(bash_trap_same);
	_cleanup_free_ char *qcmd = ansi_quote(job->command);
	_cleanup_free_ char *qstate = ansi_quote(job->state ? job->state : "");
	_cleanup_free_ char *run = NULL, *check = NULL, *optrun = NULL;
	_cleanup_free_ char *inside = inside_test(s);
	char *out = NULL, word[256];
	int rc;

	if (!qcwd || !qold || !qstart || !qtrap || !qsame || !qcmd || !qstate || !jset || !inside)
		return NULL;
	qjobs = ansi_quote(jset);
	if (!qjobs)
		return NULL;
	/* The directory first, then the state (a variable, a function, umask)
	 * and the trap, then the options (so `set -x` traces the command, not
	 * this), then the command itself, through eval: what the state turned on
	 * (shopt extglob) applies to how it is parsed. Its programs do not get
	 * fd 3 (3>&-). */
	/* A simple command running a program: when no function has its name,
	 * bash finds the program, and neither xtrace nor verbose would show
	 * this, the report is made first (the short one: such a command
	 * changes no state) and the program replaces the shell (no fork of
	 * bash, as `bash -c /bin/true` does it); the leader waits for the same
	 * pid. Only a file
	 * that starts as a program or a script with #! (one without is run by
	 * bash itself, whose $0 differs under exec) that access(2) calls
	 * executable; past that exec can still fail (Landlock refusing it):
	 * the same status, 126, with bash's "exec: " in the message. Otherwise,
	 * or when the checks say no, the command runs under the trap as any. */
	if (ward_session_simple_program(job->command, word, sizeof(word)) &&
	    !ward_session_traced(job->options)) {
		_cleanup_free_ char *qword = ward_shell_quote(word);

		if (!qword)
			return NULL;
		/* checked before the options are restored (nothing is traced
		 * then), after the state (its functions) */
		rc = asprintf(&check,
			      "if ! declare -F -- %s >/dev/null && hash -- %s 2>/dev/null && "
			      "__ward_p=${BASH_CMDS[%s]:-%s} && [[ -f $__ward_p && -x $__ward_p ]] && "
			      "IFS= read -r -N 4 __ward_m <\"$__ward_p\" 2>/dev/null && "
			      "[[ $__ward_m == $'\\x7fELF' || $__ward_m == '#!'* ]]; "
			      "then __ward_e=1; else __ward_e=; fi; ",
			      qword, qword, qword, qword);
		if (rc >= 0)
			rc = asprintf(&run,
				      "if [[ -n $__ward_e ]]; then trap - EXIT; eval -- %s; "
				      "trap - PIPE; exec 3>&-; eval -- exec -- %s; "
				      "else eval -- %s 3>&-; fi",
				      qsame, qcmd, qcmd);
	} else {
		check = strdup("");
		rc = check ? asprintf(&run, "eval -- %s 3>&-", qcmd) : -1;
	}
	if (rc < 0)
		return NULL;
	optrun = options_restore(job->options);
	if (!optrun)
		return NULL;
	/* The directory before the state: a function of the state named cd
	 * would otherwise take the next command wherever it likes, the session
	 * none the wiser (its report naming that place is refused, and the
	 * session "stays" where it never goes). */
	if (job->strict_cwd)
		rc = asprintf(&out,
			      HELLO "[ -n \"${HOME+x}\" ] || HOME=%s; "
			      "cd -P -- %s || exit 1; %s || { echo \"ward: directory \"%s\" leads "
			      "out of the session's directories\" >&2; exit 1; }; OLDPWD=%s; "
			      "eval -- %s 2>/dev/null; trap %s EXIT; eval -- %s; %s%s%s",
			      qstart, qcwd, inside, qcwd, qold, qstate, qtrap, qjobs, check, optrun,
			      run);
	else
		rc = asprintf(&out,
			      HELLO "[ -n \"${HOME+x}\" ] || HOME=%s; "
			      "{ cd -P -- %s 2>/dev/null && %s; } || "
			      "{ echo \"ward: directory \"%s\" is gone or leads out of the session's "
			      "directories, back to \"%s >&2; cd -- %s; }; "
			      "OLDPWD=%s; eval -- %s 2>/dev/null; trap %s EXIT; eval -- %s; %s%s%s",
			      qstart, qcwd, inside, qcwd, qstart, qstart, qold, qstate, qtrap, qjobs,
			      check, optrun, run);
	return rc < 0 ? NULL : out;
}
static char *sh_script(const struct ward_session *s, const struct session_job *job)
{
	_cleanup_free_ char *qcwd = ward_shell_quote(job->cwd);
	_cleanup_free_ char *qold = ward_shell_quote(job->oldpwd ? job->oldpwd : job->cwd);
	_cleanup_free_ char *qstart = ward_shell_quote(s->workdir);
	_cleanup_free_ char *inside = inside_test(s);
	char *out = NULL;
	int rc;

	if (!qcwd || !qold || !qstart || !inside)
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
			      HELLO "[ -n \"${HOME+x}\" ] || HOME=%s; cd -P -- %s || exit 1; "
			      "%s || { echo \"ward: directory \"%s\" leads out of the session's "
			      "directories\" >&2; exit 1; }; OLDPWD=%s; "
			      REPORT_TRAP "%s",
			      qstart, qcwd, inside, qcwd, qold, job->command);
	else
		rc = asprintf(&out,
			      HELLO "[ -n \"${HOME+x}\" ] || HOME=%s; "
			      "{ cd -P -- %s 2>/dev/null && %s; } || "
			      "{ echo \"ward: directory \"%s\" is gone or leads out of the session's "
			      "directories, back to \"%s >&2; cd -- %s; }; OLDPWD=%s; "
			      REPORT_TRAP "%s",
			      qstart, qcwd, inside, qcwd, qstart, qstart, qold, job->command);
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

/* bash's own variables, never a session's state (the shell sets them, or
 * they are read-only, or they describe this command): exact names, and
 * prefixes ending in '*'. */
static const char *const bash_skip[] = {
	"BASH*", "EUID", "UID", "PPID", "SHELLOPTS", "GROUPS", "FUNCNAME", "LINENO", "RANDOM",
	"SRANDOM", "SECONDS", "EPOCH*", "HISTCMD", "PIPESTATUS", "DIRSTACK", "COMP_*", "PWD",
	"OLDPWD", "_", "SHLVL", "__ward_*", "HOSTNAME", "HOSTTYPE", "MACHTYPE", "OSTYPE",
	"OPTIND", "OPTARG",
};

static bool skipped(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(bash_skip) / sizeof(bash_skip[0]); i++) {
		size_t k = strlen(bash_skip[i]);

		if (bash_skip[i][k - 1] == '*' ? n >= k - 1 && memcmp(name, bash_skip[i], k - 1) == 0 :
						  n == k && memcmp(name, bash_skip[i], k) == 0)
			return true;
	}
	return false;
}

/* A value as `declare -p` prints a scalar: "..." (\ before " \ $ `) or
 * $'...' (ANSI-C escapes), decoded into to (room for len bytes: never
 * longer). Its length, or -1 when it is neither. */
static ssize_t unquote(const char *v, size_t len, char *to)
{
	size_t i, o = 0;

	if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
		for (i = 1; i < len - 1; i++) {
			if (v[i] == '\\' && i + 1 < len - 1 && strchr("\"\\$`", v[i + 1]))
				i++;
			to[o++] = v[i];
		}
		return (ssize_t)o;
	}
	if (len >= 3 && v[0] == '$' && v[1] == '\'' && v[len - 1] == '\'') {
		for (i = 2; i < len - 1; i++) {
			const char *e = "a\ab\be\033E\033f\fn\nr\rt\tv\v\\\\''\"\"??";
			unsigned c = 0;
			int k;

			if (v[i] != '\\' || i + 1 >= len - 1) {
				to[o++] = v[i];
				continue;
			}
			i++;
			for (k = 0; e[k]; k += 2)
				if (e[k] == v[i])
					break;
			if (e[k]) {
				to[o++] = e[k + 1];
			} else if (v[i] >= '0' && v[i] <= '7') {
				for (k = 0; k < 3 && i < len - 1 && v[i] >= '0' && v[i] <= '7'; k++, i++)
					c = c * 8 + (unsigned)(v[i] - '0');
				i--;
				to[o++] = (char)c;
			} else if (v[i] == 'x' && i + 1 < len - 1 && isxdigit((unsigned char)v[i + 1])) {
				for (k = 0, i++; k < 2 && i < len - 1 && isxdigit((unsigned char)v[i]); k++, i++)
					c = c * 16 + (unsigned)(isdigit((unsigned char)v[i]) ?
								v[i] - '0' : (v[i] | 0x20) - 'a' + 10);
				i--;
				to[o++] = (char)c;
			} else if (v[i] == 'c' && i + 1 < len - 1) {
				to[o++] = (char)(v[++i] & 0x1f);
			} else {
				to[o++] = '\\';
				to[o++] = v[i];
			}
		}
		return (ssize_t)o;
	}
	return -1;
}

/* Whether a line of `declare -p` stands alone: flags bash prints, a name,
 * and a value that is one complete quoted token ("...", $'...', or an
 * array's (...) of them). bash 5.2 prints every value on one line (control
 * characters as $'...' escapes); a value that ever came across lines would
 * leave a quote open here, and the record is refused rather than a piece of
 * a value read as a declaration (or as code, when the state is replayed). */
static bool declare_line_ok(const char *flags, const char *name, size_t nlen, const char *eq,
			    const char *end)
{
	const char *q;
	char in = 0;

	if (strspn(flags, "-aAilnrtuxcL") != (size_t)(name - 1 - flags))
		return false;
	if (nlen == 0 || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
		return false;
	for (q = name; q < name + nlen; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			return false;
	if (!eq)
		return name + nlen == end;
	q = eq + 1;
	if (q >= end || !(*q == '"' || *q == '(' || (*q == '$' && q + 1 < end && q[1] == '\'')))
		return false;
	for (; q < end; q++) {
		if (in == 0) {
			if (*q == '"')
				in = '"';
			else if (*q == '$' && q + 1 < end && q[1] == '\'')
				in = '$', q++;
			else if (*q == '\'')
				in = '\'';
		} else if (*q == '\\' && in != '\'') {
			q++; /* escaped: the quote does not end */
		} else if ((in == '"' && *q == '"') || (in != '"' && *q == '\'')) {
			in = 0;
		}
	}
	return in == 0;
}

/* The V record, `declare -p` of every variable, one a line ("declare -FLAGS
 * NAME" or "...NAME=VALUE"): bash's own left out; an exported scalar into
 * the environment ("K=V", its value decoded; one without a value is empty);
 * every other line kept, as it is, for the state. false: not that format. */
static bool parse_vars(const char *p, size_t n, struct session_outcome *out, size_t *n_env,
		       char **vars, size_t *vars_len)
{
	const char *end = p + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *flags, *name, *eq;
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p), nlen;

		if (len < 11 || memcmp(p, "declare -", 9) != 0)
			return false;
		flags = p + 9;
		name = memchr(flags, ' ', len - 9);
		if (!name)
			return false;
		name++;
		eq = memchr(name, '=', len - (size_t)(name - p));
		nlen = eq ? (size_t)(eq - name) : len - (size_t)(name - p);
		if (!declare_line_ok(flags, name, nlen, eq, p + len))
			return false;
		if (!skipped(name, nlen)) {
			bool exported = memchr(flags, 'x', (size_t)(name - flags)) &&
					!memchr(flags, 'a', (size_t)(name - flags)) &&
					!memchr(flags, 'A', (size_t)(name - flags)) &&
					!memchr(flags, 'n', (size_t)(name - flags));

			if (exported) {
				size_t vlen = eq ? len - (size_t)(eq + 1 - p) : 0;
				char *kv = malloc(nlen + 1 + vlen + 1);
				ssize_t k = 0;

				if (!kv)
					return false;
				memcpy(kv, name, nlen);
				kv[nlen] = '=';
				if (eq && (k = unquote(eq + 1, vlen, kv + nlen + 1)) < 0) {
					free(kv);
					return false;
				}
				strv_push(&out->env, n_env, kv, nlen + 1 + (size_t)k);
				free(kv);
			} else {
				char *nv = realloc(*vars, *vars_len + len + 2);

				if (!nv)
					return false;
				*vars = nv;
				memcpy(nv + *vars_len, p, len);
				*vars_len += len;
				nv[(*vars_len)++] = '\n';
				nv[*vars_len] = '\0';
			}
		}
		p += len + (nl ? 1 : 0);
	}
	return true;
}

void ward_session_parse_state(const char *text, size_t len, struct session_outcome *out)
{
	const char *p = memchr(text, '\0', len), *end = text + len;
	size_t n_env = 0, n_alias = 0, vars_len = 0;
	_cleanup_free_ char *vars = NULL;

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
		case 'V':
			if (!parse_vars(p + 1, n - 1, out, &n_env, &vars, &vars_len))
				return; /* not complete */
			break;
		case 'A':
			strv_push(&out->aliases, &n_alias, p + 1, n - 1);
			break;
		case 'S':
			/* the variables, then the functions; extglob on to parse
			 * them (a function may use it): the options record sets it
			 * as the command left it */
			free(out->state);
			if (asprintf(&out->state, "shopt -s extglob\n%s%.*s", vars ? vars : "",
				     (int)(n - 1), p + 1) < 0)
				out->state = NULL;
			break;
		case 'U':
			out->unchanged = true;
			break;
		case 'O':
			free(out->options);
			out->options = strndup(p + 1, n - 1);
			break;
		case 'J':
			free(out->jobs_new);
			out->jobs_new = strndup(p + 1, n - 1);
			break;
		case 'K':
			free(out->jobs_alive);
			out->jobs_alive = strndup(p + 1, n - 1);
			break;
		case 'Z':
			out->complete = (out->state && out->options) || out->unchanged;
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
	free(out->jobs_new);
	free(out->jobs_alive);
	memset(out, 0, sizeof(*out));
}
