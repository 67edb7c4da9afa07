/* unwrap.c — the views a command gives beyond its own: the command a
 * wrapper runs (env, sudo, timeout, xargs, find -exec, …), the strings a
 * shell will run (sh -c, a here-string fed to bash, git -c
 * core.sshCommand=…, awk's system(…), an interpreter's os.system(…)), and
 * the files a download wrote that a later command runs. Which programs do
 * what is a table (wrappers[], readers[]); validate.c matches each view
 * against the rules. Pure code. */
#include "filters/validate/unwrap-internal.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/util/util-internal.h"

struct wrapper;

/* ---- unwrapping -------------------------------------------------------- */

/* Validate text a wrapper or an interpreter hands to a shell. */
void ward_vd_shell_string(struct ctx *c, const struct view *v, const struct word *w,
			  const char *text, bool posix, int depth)
{
	ward_vd_validate_string(c, text, strlen(text), posix ? WARD_SH_POSIX : 0, w->off, w->len, depth);
}

/* A view of words [from, to) of v. */
static void sub_view(struct ctx *c, const struct view *v, size_t from, size_t to, int depth)
{
	struct view inner = { .cmd = v->cmd };

	if (from >= to || from >= v->n)
		return;
	inner.w = v->w + from;
	inner.n = (to > v->n ? v->n : to) - from;
	ward_vd_check_view(c, &inner, depth);
}

/* Skip options of a wrapper: `flags` take no value, `vals` take the next
 * word (or an attached one). Returns the index of the first other word. */
size_t ward_vd_skip_opts(const struct view *v, size_t i, const char *vals)
{
	for (; i < v->n; i++) {
		const char *t = v->w[i].text;

		if (strcmp(t, "--") == 0)
			return i + 1;
		if (t[0] != '-' || !t[1])
			return i;
		if (t[1] != '-') {
			/* getopt: the first letter of a cluster that takes a value
			 * takes the rest of the word, or the next word (-X VALUE,
			 * -dmS NAME) */
			size_t j, nv = strcspn(vals, " ");

			for (j = 1; t[j]; j++)
				if (memchr(vals, t[j], nv) && t[j] != '-') {
					if (!t[j + 1])
						i++;
					break;
				}
		} else if (t[1] == '-' && !strchr(t, '=')) {
			char name[64];

			snprintf(name, sizeof(name), "%s", t);
			if (ward_vd_in_list(name, vals))
				i++;
		}
	}
	return i;
}

/* Names of the standard input as a file: `bash /dev/stdin`, `. /dev/fd/0`. */
static bool is_stdin_path(const char *fold)
{
	return ward_vd_in_list(fold, "/dev/stdin /dev/fd/0 /proc/self/fd/0");
}

#define SHELLS "sh bash zsh dash ksh mksh ash yash posh rbash lksh oksh fish busybox-sh tcsh csh " \
	       "nu nushell xonsh elvish pwsh powershell"

static bool is_shell(const char *p)
{
	return ward_vd_in_list(p, SHELLS);
}

static bool shell_is_posix(const char *p)
{
	return ward_vd_in_list(p, "sh dash ash posh");
}

static void check_script_file(struct ctx *c, struct view *v, const struct word *f, int depth);

/* A here-string or here-document given to the command's descriptor fd. */
static const struct redir *fd_text(const struct cmd *cmd, int fd)
{
	size_t i;

	for (i = 0; i < cmd->nr; i++)
		if (cmd->r[i].fd == fd && cmd->r[i].kind == RD_STRING)
			return &cmd->r[i];
	return NULL;
}

/* The descriptor stdin is made a copy of (<&3), or -1. */
static int stdin_dup(const struct cmd *cmd)
{
	size_t i;

	for (i = 0; i < cmd->nr; i++)
		if (cmd->r[i].fd == 0 && cmd->r[i].kind == RD_DUP && isdigit((unsigned char)cmd->r[i].target.text[0]))
			return atoi(cmd->r[i].target.text);
	return -1;
}

/* A here-string or here-document given to the command's stdin, also
 * through a copy (bash <&3 3<<<'…'), if any. */
static const struct redir *stdin_text(const struct cmd *cmd)
{
	const struct redir *r = fd_text(cmd, 0);
	int d;

	if (!r && (d = stdin_dup(cmd)) > 0)
		r = fd_text(cmd, d);
	return r;
}

/* The descriptor a path names (/dev/fd/3, /proc/self/fd/3), or -1. */
static int fd_of_path(const char *fold)
{
	const char *n = strncmp(fold, "/dev/fd/", 8) == 0		? fold + 8 :
			strncmp(fold, "/proc/self/fd/", 14) == 0	? fold + 14 :
			strncmp(fold, "/proc/thread-self/fd/", 21) == 0 ? fold + 21 :
									  NULL;

	return n && isdigit((unsigned char)*n) && !n[strspn(n, "0123456789")] ? atoi(n) : -1;
}

/* What a shell or `source` reads its program from when it is a descriptor
 * or stdin redirected: a here-string on it (checked), or text ward does
 * not have (exec 3<<<'…' earlier, < <(cmd): dynamic). Returns whether it
 * decided. */
static bool program_from_fd(struct ctx *c, struct view *v, int fd, bool posix, int depth)
{
	const struct redir *t = fd == 0 ? stdin_text(v->cmd) : fd_text(v->cmd, fd);
	size_t i;

	if (t) {
		if (t->target.flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB))
			v->dynamic = true;
		ward_vd_shell_string(c, v, &t->target, t->target.text, posix, depth + 1);
		return true;
	}
	if (fd == 0 && stdin_dup(v->cmd) > 0) {
		v->dynamic = true; /* bash <&3: whatever 3 was opened on earlier */
		return true;
	}
	if (fd > 0) {
		v->dynamic = true; /* bash /dev/fd/3 with 3 opened earlier (exec 3<<<…) */
		return true;
	}
	for (i = 0; i < v->cmd->nr; i++)
		if (v->cmd->r[i].fd == 0 && v->cmd->r[i].kind == RD_READ) {
			const struct word *f = &v->cmd->r[i].target;

			if (f->flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB))
				v->dynamic = true; /* bash < <(curl …) */
			else
				check_script_file(c, v, f, depth);
			return true;
		}
	return false;
}

static void unwrap_shell(struct ctx *c, struct view *v, const char *prog, int depth)
{
	size_t i;
	bool cmode = false, smode = false;
	const struct redir *here;

	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text;

		if (strcmp(t, "--") == 0 || strcmp(t, "-") == 0) {
			i++;
			break;
		}
		if (t[0] != '-' && t[0] != '+')
			break;
		if (t[1] == '-') {
			if (ward_vd_in_list(t, "--rcfile --init-file"))
				i++;
			/* fish --command STRING, --command=STRING */
			if (strncmp(t, "--command=", 10) == 0) {
				ward_vd_shell_string(c, v, &v->w[i], t + 10, false, depth + 1);
				return;
			}
			if (strcmp(t, "--command") == 0) {
				cmode = true;
				i++;
				break;
			}
			continue;
		}
		if (strchr(t + 1, 'c'))
			cmode = true;
		if (strchr(t + 1, 's'))
			smode = true; /* the program from stdin, the words are its arguments */
		if (strchr(t + 1, 'o') || strchr(t + 1, 'O'))
			i++;
	}
	if (cmode) {
		if (i >= v->n)
			v->dynamic = true; /* xargs sh -c: the string comes from stdin */
		if (i < v->n) {
			if ((v->w[i].flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB)) || v->w[i].unresolved)
				v->dynamic = true;
			ward_vd_shell_string(c, v, &v->w[i], v->w[i].text, shell_is_posix(prog), depth + 1);
		}
		return;
	}
	if (i < v->n && !smode && fd_of_path(v->w[i].fold) > 0) {
		program_from_fd(c, v, fd_of_path(v->w[i].fold), shell_is_posix(prog), depth);
		return;
	}
	if (i < v->n && !smode && !is_stdin_path(v->w[i].fold))
		return; /* a script file: ward sees its name, not its text */
	here = stdin_text(v->cmd);
	if (here) {
		if (here->target.flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB))
			v->dynamic = true;
		ward_vd_shell_string(c, v, &here->target, here->target.text, shell_is_posix(prog),
			     depth + 1);
		return;
	}
	if (program_from_fd(c, v, 0, shell_is_posix(prog), depth))
		return;
	v->script_stdin = true;
}

/* Whether the call named at s (calls[]) surely spawns a process, so that a
 * command it is given that is not a literal is only known at run time:
 * run(), call() and exec() are spawns only as subprocess.run, cp.exec, …
 * (asyncio.run(main()) is not). */
static bool spawn_call(const struct view *v, const char *start, const char *s, const char *name)
{
	if (strcmp(name, "execute") == 0) /* lua's os.execute; cursor.execute(sql) is not */
		return strcmp(ward_vd_prog_of(v), "lua") == 0;
	if (!ward_vd_in_list(name, "run call exec"))
		return true;
	if (strcmp(name, "exec") == 0 && ward_vd_in_list(ward_vd_prog_of(v), "perl ruby php"))
		return true;
	if (s - start >= 11 && strncmp(s - 11, "subprocess.", 11) == 0)
		return true;
	/* import subprocess as sp; sp.call(…) */
	if (strcmp(name, "exec") != 0 && s > start && s[-1] == '.' && strstr(start, "subprocess"))
		return true;
	return strcmp(name, "exec") == 0 && s > start && s[-1] == '.' &&
	       !(s - start >= 3 && strncmp(s - 3, "re.", 3) == 0);
}

/* The arguments of a call whose first one is at p (after its `(`, or the
 * first word of perl's and ruby's `system "x", …`), lists flattened:
 * literals as words, any other expression as an unresolved word, keyword
 * arguments and option objects (check=True, {stdio: …}) left out. The
 * view is checked as the command it runs: os.execvp("rm", ["rm", "-rf",
 * os.environ["HOME"]]), system "rm", "-rf", $ENV{HOME}; a first item that
 * is not a literal is a program only known at run time. */
static void call_argv(struct ctx *c, struct view *v, const struct word *w, const char *p,
		      bool paren, int depth)
{
	struct word *ws = NULL;
	size_t n = 0, k;
	bool first_dynamic = false;

	while (*p && !c->failed) {
		const char *q, *e;
		int nest = 0;
		size_t id;
		bool lit;
		_cleanup_free_ char *item = NULL;
		struct word *g;

		p += strspn(p, " \t\n[,");
		if (!*p || *p == ')' || *p == ']' || (!paren && strchr(";\n", *p)))
			break;
		/* one item: up to a `,` `]` `)` outside brackets and quotes */
		for (q = p; *q; q++) {
			if (*q == '"' || *q == '\'') {
				e = strchr(q + 1, *q);
				if (!e)
					break;
				q = e;
			} else if (strchr("([{", *q)) {
				nest++;
			} else if (strchr(")]}", *q) && nest > 0) {
				nest--;
			} else if (nest == 0 && (strchr(",])", *q) || (!paren && strchr(";\n", *q)))) {
				break;
			}
		}
		if (q == p)
			break; /* an unclosed quote: nothing more to read */
		e = q;
		while (e > p && strchr(" \t\n", e[-1]))
			e--;
		lit = (*p == '"' || *p == '\'') && e - p >= 2 && e[-1] == *p &&
		      memchr(p + 1, *p, (size_t)(e - p - 2)) == NULL;
		id = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (*p == '{' || (!lit && id && !isdigit((unsigned char)*p) && p[id] &&
				  strchr("=:", p[id]) && p[id + 1] != p[id])) {
			p = q; /* check=True, stdio: "inherit", {cwd: x} */
			continue;
		}
		item = lit ? strndup(p + 1, (size_t)(e - p - 2)) : strndup(p, (size_t)(e - p));
		g = realloc(ws, (n + 1) * sizeof(*g));
		if (!item || !g) {
			free(g ? g : ws);
			ws = NULL;
			n = 0;
			c->failed = 1;
			break;
		}
		ws = g;
		if (!ward_vd_word_init(c, &ws[n], item, lit ? 0 : WARD_SH_W_PARAM, w->off, w->len))
			break;
		ws[n].unresolved = !lit;
		if (n == 0 && !lit)
			first_dynamic = true;
		n++;
		p = q;
	}
	if (first_dynamic) {
		v->dynamic = true;
	} else if (n >= 2 && !c->failed) {
		struct view inner = { .w = ws, .n = n, .cmd = v->cmd };

		ward_vd_check_view(c, &inner, depth + 1);
	}
	for (k = 0; k < n; k++)
		ward_vd_word_release(&ws[k]);
	free(ws);
}

/* Shell command strings inside code given to awk, python, perl, ruby, node
 * or php: system("…"), popen("…"), os.system('…'), subprocess.run(["…", …]),
 * `…` and qx(…). */
static void code_strings(struct ctx *c, struct view *v, const struct word *w, int depth)
{
	static const char *const calls[] = { "system", "popen", "exec", "execSync", "spawnSync",
					     "check_output", "check_call", "getoutput",
					     "getstatusoutput", "Popen", "run", "call", "shell_exec",
					     "passthru", "proc_open", "execvp", "execv", "execl",
					     "execlp", "execle", "execve", "execvpe", "spawnl",
					     "spawnlp", "spawnv", "spawnvp", "spawnve", "spawnvpe",
					     "posix_spawn", "posix_spawnp", "spawn", "execFile",
					     "execFileSync", "execute", "pcntl_exec" };
	const char *s = w->text;

	for (; *s; s++) {
		size_t k;

		if (*s == '`' && !ward_vd_in_list(ward_vd_prog_of(v),
						  "python python2 python3 pypy pypy3 node nodejs")) {
			const char *e = strchr(s + 1, '`');

			if (e) {
				_cleanup_free_ char *inner = strndup(s + 1, (size_t)(e - s - 1));

				if (inner)
					ward_vd_shell_string(c, v, w, inner, true, depth + 1);
				/* ruby's #{…}, perl's $x: a command made when the code runs */
				if (inner && (strstr(inner, "#{") || strchr(inner, '$')))
					v->dynamic = true;
				s = e;
			}
			continue;
		}
		/* code run from a string made at run time: exec(x), eval(input()),
		 * new Function(s) (a literal's own spawns are found as they are) */
		if ((strncmp(s, "eval", 4) == 0 || strncmp(s, "exec", 4) == 0 ||
		     strncmp(s, "Function", 8) == 0) &&
		    (s == w->text || (!isalnum((unsigned char)s[-1]) && s[-1] != '_' && s[-1] != '.'))) {
			const char *a = s + (s[0] == 'F' ? 8 : 4);

			a += strspn(a, " \t");
			if (*a == '(') {
				const char *e;

				a++;
				a += strspn(a, " \t");
				/* only one literal, nothing added to it */
				e = (*a == '"' || *a == '\'') ? strchr(a + 1, *a) : NULL;
				if (*a != ')' && (!e || e[1 + strspn(e + 1, " \t")] != ')'))
					v->dynamic = true;
			}
		}
		if (strncmp(s, "qx", 2) == 0 && strchr("({[/|'\"", s[2]) && s[2]) {
			char close = s[2] == '(' ? ')' : s[2] == '{' ? '}' : s[2] == '[' ? ']' : s[2];
			const char *e = strchr(s + 3, close);

			if (e) {
				_cleanup_free_ char *inner = strndup(s + 3, (size_t)(e - s - 3));

				if (inner)
					ward_vd_shell_string(c, v, w, inner, true, depth + 1);
				s = e;
			}
			continue;
		}
		/* a call's name starts a word: most characters start none */
		if (!isalpha((unsigned char)*s) || (s > w->text && (isalnum((unsigned char)s[-1]) || s[-1] == '_')))
			continue;
		for (k = 0; k < ARRAY_SIZE(calls); k++) {
			size_t n = strlen(calls[k]);
			const char *p = s + n;
			bool paren;

			if (strncmp(s, calls[k], n) != 0 ||
			    (s > w->text && (isalnum((unsigned char)s[-1]) || s[-1] == '_')))
				continue;
			p += strspn(p, " \t");
			paren = *p == '(';
			/* system "…" in ruby and perl needs no parentheses */
			if (*p == '(') {
				p++;
			} else if (p == s + n || (*p != '"' && *p != '\'')) {
				/* perl's system @ARGV, exec $cmd: not a literal */
				if (p != s + n && strchr("@$", *p) &&
				    ward_vd_in_list(ward_vd_prog_of(v), "perl ruby") &&
				    spawn_call(v, w->text, s, calls[k]))
					v->dynamic = true;
				continue;
			}
			p += strspn(p, " \t");
			if (spawn_call(v, w->text, s, calls[k]))
				call_argv(c, v, w, p, paren, depth);
			if (*p == '"' || *p == '\'') {
				const char *e = strchr(p + 1, *p), *after;

				if (e) {
					_cleanup_free_ char *inner = strndup(p + 1, (size_t)(e - p - 1));

					if (inner)
						ward_vd_shell_string(c, v, w, inner, true, depth + 1);
					/* "r" "m -rf ~", "r"+"m", "ls " f: a command made
					 * when the code runs */
					after = e + 1 + strspn(e + 1, " \t");
					if (spawn_call(v, w->text, s, calls[k]) && !strchr("),;}\n", *after) &&
					    *after)
						v->dynamic = true;
					/* a shell's $x, $(…), `…` in the literal: known only then */
					if (inner && spawn_call(v, w->text, s, calls[k]) &&
					    strcmp(ward_vd_prog_of(v), "perl") == 0 && *p == '"' &&
					    strchr(inner, '$'))
						v->dynamic = true;
				}
			} else if (*p != '[' && spawn_call(v, w->text, s, calls[k])) {
				/* system(cmd), os.system(x + y): not a literal */
				v->dynamic = true;
			} else if (*p == '[') {
				/* an argv list: its quoted items, as words */
				struct word *ws = NULL;
				size_t n_ws = 0;
				const char *q = p + 1;

				while (*q && *q != ']') {
					q += strspn(q, " \t,");
					if (*q == '"' || *q == '\'') {
						const char *e = strchr(q + 1, *q);
						_cleanup_free_ char *item = NULL;
						struct word *g;

						if (!e)
							break;
						item = strndup(q + 1, (size_t)(e - q - 1));
						g = realloc(ws, (n_ws + 1) * sizeof(*g));
						if (!item || !g) {
							free(g ? g : ws);
							ws = NULL;
							n_ws = 0;
							c->failed = 1;
							break;
						}
						ws = g;
						if (!ward_vd_word_init(c, &ws[n_ws], item, 0, w->off, w->len))
							break;
						n_ws++;
						q = e + 1;
					} else if (*q && *q != ']') {
						q++;
					}
				}
				if (n_ws) {
					struct view inner = { .w = ws, .n = n_ws, .cmd = v->cmd };

					ward_vd_check_view(c, &inner, depth + 1);
				}
				ward_vd_words_free(ws, n_ws);
			}
		}
	}
}

/* Whether code opens a file for writing or writes one. */
static bool code_writes(const char *code)
{
	static const char *const marks[] = { "\"w\"", "'w'", "\"a\"", "'a'", "\"wb\"", "'wb'",
					     "\"ab\"", "'ab'", "\"w+\"", "'w+'", "\"a+\"", "'a+'",
					     "write_text", "write_bytes", "writeFile", "appendFile",
					     "File.write", "file_put_contents", "> \"", ">\"",
					     ">> \"", "open(F, \">", "open(my", "fopen", "copyfile",
					     "shutil.copy", "shutil.move", "os.rename", "os.replace",
					     "symlink", "copyFile", "rename(", "\">", "'>", "\"+<",
					     "'+<", "\"+>", "'+>" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(marks); i++)
		if (strstr(code, marks[i]))
			return true;
	return false;
}

/* The string literals of code given with -c/-e, as the files the program
 * names: python3 -c 'open(".env").read()' reads .env as surely as cat. */
static void code_paths(struct ctx *c, const struct view *v, const struct word *code, int depth)
{
	struct word *ws = calloc(2, sizeof(*ws));
	size_t n = 1, cap = 2;
	const char *q = code->text;

	/* a program without rules or roles of its own: only the files count */
	if (!ws || !ward_vd_word_init(c, &ws[0], "(code)", 0, code->off, code->len)) {
		free(ws);
		c->failed = 1;
		return;
	}
	while ((q = strpbrk(q, "\"'"))) {
		const char *e = strchr(q + 1, *q);
		_cleanup_free_ char *lit = NULL;

		if (!e)
			break;
		/* perl's two-argument open: the mode before the path (">>f", "+<f") */
		{
			const char *b = q + 1;

			if (*b == '+' && (b[1] == '<' || b[1] == '>'))
				b++;
			while (b < e && (*b == '>' || *b == '<'))
				b++;
			b += strspn(b, " \t");
			lit = b < e ? strndup(b, (size_t)(e - b)) : strdup("");
		}
		q = e + 1;
		/* a path has no blanks and is not an option */
		if (!lit || !*lit || strpbrk(lit, " \t\n") || lit[0] == '-')
			continue;
		if (n == cap) {
			struct word *g = realloc(ws, (cap *= 2) * sizeof(*g));

			if (!g) {
				c->failed = 1;
				break;
			}
			ws = g;
		}
		if (ward_vd_word_init(c, &ws[n], lit, 0, code->off, code->len))
			n++;
	}
	if (n > 1 && !c->failed) {
		struct view inner = { .w = ws, .n = n, .cmd = v->cmd };

		ward_vd_match_rules(c, &inner);
		/* code that writes files: its literals as files written, as tee's
		 * are (open(p, "a"), print > "f", writeFileSync, File.write) */
		if (code_writes(code->text)) {
			char *name = ws[0].text, *fold = ws[0].fold;

			ws[0].text = (char *)"tee";
			ws[0].fold = (char *)"tee";
			ward_vd_match_rules(c, &inner);
			ws[0].text = name;
			ws[0].fold = fold;
		}
	}
	ward_vd_words_free(ws, n);
}

/* How each interpreter takes code in its options: the short letters that
 * take code (attached or the next word), those that take another value
 * (the next word when nothing is attached), and the long options of
 * both kinds. Short options cluster: perl -lne CODE, python3 -uc CODE,
 * perl -e'CODE'. */
static const struct interp {
	const char *progs, *code, *vals, *long_code, *long_vals;
	bool rest_flags; /* node: -pe CODE, the letters after a code letter are flags */
} interps[] = {
	{ "python python2 python3 pypy pypy3", "c", "mWXQ", "", "--check-hash-based-pycs", false },
	{ "perl", "eE", "I", "", "", false },
	{ "ruby", "e", "rICE", "", "--encoding --external-encoding --internal-encoding", false },
	{ "node nodejs deno bun", "ep", "r", "--eval --print",
	  "--require --import --loader --experimental-loader --conditions --input-type", true },
	{ "php", "rBRE", "dcfzt", "", "", false },
	{ "lua", "e", "l", "", "", false },
	{ "rscript julia", "e", "", "--eval", "", false },
};

/* Code given as word w (from offset skip of its text): its spawns and paths. */
static void interpreter_code(struct ctx *c, struct view *v, const struct word *w, size_t skip,
			     int depth)
{
	struct word x = *w;

	x.text = w->text + skip;
	if (w->flags & WARD_SH_W_CMDSUB)
		v->dynamic = true;
	code_strings(c, v, &x, depth);
	code_paths(c, v, &x, depth);
}

static void unwrap_interpreter(struct ctx *c, struct view *v, const char *prog, int depth)
{
	const struct interp *in = &interps[ARRAY_SIZE(interps) - 1];
	const struct redir *here;
	size_t i, k;
	bool code = false;

	for (k = 0; k < ARRAY_SIZE(interps); k++)
		if (ward_vd_in_list(prog, interps[k].progs))
			in = &interps[k];
	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text;
		size_t j;

		if (strcmp(t, "--") == 0 || strcmp(t, "-") == 0)
			break;
		if (t[0] != '-')
			break;
		if (t[1] == '-') {
			if (ward_vd_opt_named(t, in->long_code)) {
				code = true;
				if (strchr(t, '='))
					interpreter_code(c, v, &v->w[i], (size_t)(strchr(t, '=') - t + 1), depth);
				else if (i + 1 < v->n)
					interpreter_code(c, v, &v->w[++i], 0, depth);
			} else if (ward_vd_opt_named(t, in->long_vals) && !strchr(t, '=')) {
				i++;
			}
			continue;
		}
		for (j = 1; t[j]; j++) {
			if (strchr(in->code, t[j])) {
				code = true;
				if (t[j + 1] && !(in->rest_flags && !t[j + 1 + strspn(t + j + 1, in->code)]))
					interpreter_code(c, v, &v->w[i], j + 1, depth); /* -e'CODE' */
				else if (i + 1 < v->n)
					interpreter_code(c, v, &v->w[++i], 0, depth);
				break;
			}
			if (strchr(in->vals, t[j])) {
				/* python -m MODULE: a module, not a program on stdin */
				if (t[j] == 'm' && in == &interps[0])
					return;
				if (!t[j + 1])
					i++;
				break;
			}
		}
	}
	if (code || (i < v->n && strcmp(v->w[i].text, "-") != 0 && !is_stdin_path(v->w[i].fold)))
		return;
	here = stdin_text(v->cmd);
	if (here) {
		/* python3 - <<'EOF' … EOF: the program is right here */
		if (here->target.flags & WARD_SH_W_CMDSUB)
			v->dynamic = true;
		code_strings(c, v, &here->target, depth);
		code_paths(c, v, &here->target, depth);
		return;
	}
	v->script_stdin = true;
}

/* The one name find's matches have, when its starting points are relative
 * paths without `..` and a single -name NAME (no glob) selects them: then
 * `{}` in -exec stands for …/NAME (find . -name __pycache__ -exec rm -rf {} +). */
static const char *find_single_name(const struct view *v)
{
	const char *name = NULL;
	size_t i;

	for (i = 1; i < v->n; i++) {
		const struct word *w = &v->w[i];

		if (w->text[0] == '-' || w->text[0] == '(' || w->text[0] == '!')
			break;
		if (w->text[0] == '/' || w->text[0] == '~' || strstr(w->text, "..") ||
		    (w->flags & WARD_SH_W_DYNAMIC) || w->unresolved)
			return NULL;
	}
	for (; i < v->n; i++) {
		const char *t = v->w[i].fold;

		if (ward_vd_in_list(t, "-exec -execdir -ok -okdir"))
			break;
		if (ward_vd_in_list(t, "-o -or , -not ! -path -ipath -regex -iregex -wholename"))
			return NULL;
		if (ward_vd_in_list(t, "-name -iname")) {
			if (name || i + 1 >= v->n || strpbrk(v->w[i + 1].text, "*?[\\/") ||
			    !v->w[i + 1].text[0] || strcmp(v->w[i + 1].text, "..") == 0 ||
			    strcmp(v->w[i + 1].text, ".") == 0)
				return NULL;
			name = v->w[++i].text;
		}
	}
	return name;
}

/* The pattern of find's one -name/-iname test, glob and all: `{}` in -exec
 * is a file it matches (find ~ -name 'id_*' -exec cat {} + reads keys). */
static const char *find_name_pattern(const struct view *v)
{
	const char *pat = NULL;
	size_t i;

	for (i = 1; i + 1 < v->n; i++) {
		if (ward_vd_in_list(v->w[i].fold, "-exec -execdir -ok -okdir"))
			break;
		if (ward_vd_in_list(v->w[i].fold, "-name -iname")) {
			if (pat)
				return NULL;
			pat = v->w[++i].text;
		}
	}
	return pat && *pat && !strchr(pat, '/') ? pat : NULL;
}

static void unwrap_find(struct ctx *c, const struct view *v, int depth)
{
	const char *name = find_single_name(v), *pat = name ? NULL : find_name_pattern(v);
	size_t i, j, k;

	for (i = 1; i < v->n; i++) {
		if (!ward_vd_in_list(v->w[i].fold, "-exec -execdir -ok -okdir"))
			continue;
		for (j = i + 1; j < v->n; j++)
			if (strcmp(v->w[j].text, ";") == 0 || strcmp(v->w[j].text, "+") == 0)
				break;
		if ((name || pat) && j > i + 1) {
			/* the command with `{}` as the name it stands for */
			struct word *ws = calloc(j - i - 1, sizeof(*ws));
			struct view inner = { .w = ws, .n = 0, .cmd = v->cmd };

			if (!ws) {
				c->failed = 1;
				return;
			}
			for (k = i + 1; k < j; k++) {
				bool is_it = strcmp(v->w[k].text, "{}") == 0;

				if (!ward_vd_word_init(c, &ws[inner.n], !is_it ? v->w[k].text : name ? name : pat,
						       !is_it ? v->w[k].flags : name ? 0 : WARD_SH_W_GLOB,
						       v->w[k].off, v->w[k].len))
					break;
				ws[inner.n].unresolved = v->w[k].unresolved;
				inner.n++;
			}
			if (!c->failed)
				ward_vd_check_view(c, &inner, depth + 1);
			ward_vd_words_free(ws, inner.n);
		} else {
			sub_view(c, v, i + 1, j, depth + 1);
		}
		i = j;
	}
}

/* Configuration keys and environment variables whose value is a command. */
static bool command_key(const char *key)
{
	static const char *const keys[] = { "core.sshcommand", "core.pager", "core.editor",
					    "core.fsmonitor", "core.askpass", "core.gitproxy",
					    "sequence.editor", "diff.external", "credential.helper",
					    "credential.*.helper", "gpg.program", "gpg.*.program",
					    "alias.*", "filter.*.clean", "filter.*.smudge",
					    "filter.*.process", "diff.*.textconv", "diff.*.command",
					    "merge.*.driver", "pager.*", "uploadpack.packobjectshook",
					    "remote.*.receivepack", "remote.*.uploadpack" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (fnmatch(keys[i], key, 0) == 0)
			return true;
	return false;
}

static bool command_var(const char *name)
{
	return ward_vd_in_list(name,
			       "GIT_SSH_COMMAND GIT_SSH GIT_EDITOR GIT_PAGER GIT_ASKPASS SSH_ASKPASS "
			       "EDITOR VISUAL PAGER MANPAGER LESSOPEN LESSCLOSE PROMPT_COMMAND "
			       "BASH_ENV ENV GIT_EXTERNAL_DIFF GIT_PROXY_COMMAND GIT_SEQUENCE_EDITOR "
			       "SUDO_ASKPASS npm_config_script_shell NPM_CONFIG_SCRIPT_SHELL "
			       "npm_config_shell NPM_CONFIG_SHELL");
}

static bool downloaded(const struct ctx *c, const char *fold);
static void config_value(struct ctx *c, const struct view *v, const struct word *w,
			 const char *key, const char *value, int depth);
static struct written *find_written(const struct ctx *c, const char *fold);
static void run_written(struct ctx *c, struct view *v, const struct word *w, const char *text,
			const char *prog, int depth);

/* NAME=value whose value a program will run as a command. */
void ward_vd_assignment(struct ctx *c, const struct view *v, const struct word *w, int depth)
{
	const char *eq = strchr(w->text, '=');
	char name[128];
	size_t k;

	if (!eq || (k = (size_t)(eq - w->text)) >= sizeof(name))
		return;
	memcpy(name, w->text, k);
	name[k] = '\0';
	/* BASH_ENV=f, ENV=f: a file every shell started sources */
	if (ward_vd_in_list(name, "BASH_ENV ENV")) {
		_cleanup_free_ char *fold = ward_vd_lower_dup(eq + 1);
		struct written *wr = fold ? find_written(c, fold) : NULL;

		if (wr)
			run_written(c, (struct view *)v, w, wr->text, "sh", depth);
		else if (fold && downloaded(c, fold))
			((struct view *)v)->runs_download = true;
	}
	/* git's configuration given in the environment: GIT_CONFIG_PARAMETERS
	 * ("'core.pager=…'"), GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n: a value may
	 * be a command key's */
	if (strcmp(name, "GIT_CONFIG_PARAMETERS") == 0) {
		_cleanup_free_ char *all = strdup(eq + 1);
		char *q = all, *e;

		while (q && (q = strchr(q, '\'')) && (e = strchr(q + 1, '\''))) {
			char *kv = q + 1, *keq;

			*e = '\0';
			keq = strchr(kv, '=');
			if (keq) {
				*keq = '\0';
				config_value(c, v, w, kv, keq + 1, depth);
			}
			q = e + 1;
		}
		if (!all)
			c->failed = 1;
	}
	/* bash imports BASH_FUNC_NAME%%=() { …; } from the environment as a
	 * function: NAME runs its body */
	if (strncmp(name, "BASH_FUNC_", 10) == 0) {
		_cleanup_free_ char *def = NULL;

		if (asprintf(&def, "__ward_f%s", eq + 1) < 0) {
			c->failed = 1;
			return;
		}
		ward_vd_shell_string(c, v, w, def, false, depth + 1);
		((struct view *)v)->dynamic = true; /* and whichever command it shadows */
	}
	if (strncmp(name, "GIT_CONFIG_VALUE_", 17) == 0 || command_var(name))
		ward_vd_shell_string(c, v, w, eq + 1, true, depth + 1);
}

static void config_value(struct ctx *c, const struct view *v, const struct word *w,
			 const char *key, const char *value, int depth)
{
	_cleanup_free_ char *k = ward_vd_lower_dup(key);

	if (!k || !command_key(k))
		return;
	if (*value == '!')
		value++;
	ward_vd_shell_string(c, v, w, value, true, depth + 1);
}

static void unwrap_git(struct ctx *c, const struct view *v, int depth)
{
	size_t i, pos[3], n;

	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text, *kv = NULL;
		bool env = false;

		if (t[0] != '-')
			break;
		if (strcmp(t, "-c") == 0 && i + 1 < v->n)
			kv = v->w[++i].text;
		else if (strncmp(t, "-c", 2) == 0 && t[2])
			kv = t + 2;
		else if (ward_vd_in_list(t, "-C --git-dir --work-tree --namespace --exec-path --config-env"))
			kv = strcmp(t, "--config-env") == 0 && i + 1 < v->n ? v->w[++i].text : NULL,
			env = kv != NULL;
		else if (strncmp(t, "--config-env=", 13) == 0)
			kv = t + 13, env = true;
		if (kv && env) {
			/* the value is an environment variable's: a command key's
			 * value is then known only when git runs */
			const char *eq = strchr(kv, '=');
			_cleanup_free_ char *key = eq ? ward_vd_lower_dup(kv) : NULL;

			if (key) {
				key[eq - kv] = '\0';
				if (command_key(key))
					((struct view *)v)->dynamic = true;
			}
			continue;
		}
		if (kv) {
			const char *eq = strchr(kv, '=');
			_cleanup_free_ char *key = eq ? strndup(kv, (size_t)(eq - kv)) : NULL;

			if (key)
				config_value(c, v, &v->w[i], key, eq + 1, depth);
		}
	}
	/* git config [--global] KEY VALUE */
	n = ward_vd_sub_start(v, pos, 3);
	if (n == 3 && strcmp(v->w[pos[0]].fold, "config") == 0)
		config_value(c, v, &v->w[pos[2]], v->w[pos[1]].text, v->w[pos[2]].text, depth);
}

/* The statement of awk code text around position q: from the last ; { }
 * or newline before it. */
static bool awk_statement_has(const char *text, const char *q, const char *what)
{
	const char *b = q;

	while (b > text && !strchr(";{}\n", b[-1]))
		b--;
	for (const char *f = strstr(b, what); f && f < q; f = strstr(f + 1, what))
		if (f == text || !(isalnum((unsigned char)f[-1]) || f[-1] == '_'))
			return true;
	return false;
}

/* awk's pipes and redirections: print … | "CMD" and "CMD" | getline run
 * CMD with a shell (CMD reads awk's output: print | "sh" is text piped
 * into a shell); |& is gawk's two-way pipe; a command held in a variable
 * or made by concatenation is known only when awk runs; print > EXPR
 * writes a file whose name ward sees only as the literals in EXPR
 * (ENVIRON["HOME"] "/.bashrc"). */
static void awk_pipes(struct ctx *c, struct view *v, const struct word *w, int depth)
{
	const char *text = w->text, *q;

	for (q = text; *q; q++) {
		const char *a, *before;

		if (*q == '"') {
			const char *e = q + 1;

			while (*e && *e != '"')
				e += (*e == '\\' && e[1]) ? 2 : 1;
			if (!*e)
				break;
			q = e;
			continue;
		}
		if (*q == '>' && awk_statement_has(text, q, "print")) {
			/* the literals after it, as files written */
			struct word fw[2];
			struct view fv = { .w = fw, .n = 2, .cmd = v->cmd };
			const char *l = q + 1 + (q[1] == '>'), *e;

			for (; (l = strchr(l, '"')) && (e = strchr(l + 1, '"')); l = e + 1) {
				_cleanup_free_ char *lit = strndup(l + 1, (size_t)(e - l - 1));
				size_t stop = strcspn(q, ";}\n");

				if (l > q + stop || !lit)
					break;
				if (ward_vd_word_init(c, &fw[0], "tee", 0, w->off, w->len)) {
					if (ward_vd_word_init(c, &fw[1], lit, 0, w->off, w->len)) {
						ward_vd_match_rules(c, &fv);
						ward_vd_word_release(&fw[1]);
					}
					ward_vd_word_release(&fw[0]);
				}
			}
			continue;
		}
		if (*q != '|' || q[1] == '|' || (q > text && q[-1] == '|'))
			continue;
		a = q + 1 + (q[1] == '&');
		a += strspn(a, " \t");
		before = q;
		while (before > text && (before[-1] == ' ' || before[-1] == '\t'))
			before--;
		if (strncmp(a, "getline", 7) == 0 && !isalnum((unsigned char)a[7]) && a[7] != '_') {
			const char *e;

			if (before > text && before[-1] == '"') {
				/* "CMD" | getline: the literal, if nothing is added to it */
				for (e = before - 2; e >= text && *e != '"'; e--)
					;
				if (e >= text) {
					_cleanup_free_ char *inner = strndup(e + 1, (size_t)(before - e - 2));
					const char *pre = e;

					while (pre > text && (pre[-1] == ' ' || pre[-1] == '\t'))
						pre--;
					if (inner)
						ward_vd_shell_string(c, v, w, inner, true, depth + 1);
					if (pre > text && !strchr("(;{}\n=", pre[-1]))
						v->dynamic = true; /* "r" "m" | getline */
				}
			} else {
				v->dynamic = true; /* cmd | getline */
			}
			continue;
		}
		if (!awk_statement_has(text, q, "print"))
			continue; /* /a|b/: a regular expression's alternation */
		if (*a == '"') {
			const char *e = strchr(a + 1, '"');
			_cleanup_free_ char *inner = e ? strndup(a + 1, (size_t)(e - a - 1)) : NULL;

			if (inner) {
				/* the command reads what awk prints: as if piped */
				_cleanup_free_ char *piped = NULL;

				if (asprintf(&piped, ": | %s", inner) < 0) {
					c->failed = 1;
					return;
				}
				ward_vd_shell_string(c, v, w, piped, true, depth + 1);
				if (e[1 + strspn(e + 1, " \t")] && !strchr(";}\n", e[1 + strspn(e + 1, " \t")]))
					v->dynamic = true; /* "s" "h": made when it runs */
			}
		} else {
			v->dynamic = true; /* print | cmd */
		}
	}
}

/* awk 'BEGIN { system("…") }', "…" | getline, print | "…" */
static void unwrap_awk(struct ctx *c, struct view *v, const unsigned *roles, int depth)
{
	size_t i;

	for (i = 1; i < v->n; i++) {
		if (!(roles[i] & ROLE_DATA) || !(roles[i] & ROLE_POS))
			continue;
		code_strings(c, v, &v->w[i], depth);
		code_paths(c, v, &v->w[i], depth);
		awk_pipes(c, v, &v->w[i], depth);
		break;
	}
}

/* A sed script: `e CMD` runs CMD, `e` and s///e run the text being edited
 * (only known when it runs), `w FILE` and s///w FILE write FILE, `r FILE`
 * reads it. */
static void sed_script(struct ctx *c, struct view *v, const struct word *w, int depth)
{
	const char *s = w->text, *p;

	for (p = s; *p; p++) {
		const char *q = p, *prev = p;

		while (prev > s && (prev[-1] == ' ' || prev[-1] == '\t'))
			prev--;
		/* a command letter: at the start, after ; newline { } or an address */
		if (prev > s && !strchr(";\n{}$0123456789/!", prev[-1]))
			continue;
		if (*p == 's' && p[1] && !isalnum((unsigned char)p[1]) && !strchr(" \n\\", p[1])) {
			char d = p[1];
			int seen = 0;

			for (q = p + 2; *q && seen < 2; q++) {
				if (*q == '\\' && q[1])
					q++;
				else if (*q == d)
					seen++;
			}
			if (seen < 2)
				continue;
			/* the flags */
			for (; *q && strchr("gpiImMe0123456789", *q); q++)
				if (*q == 'e')
					v->dynamic = true;
			if (*q == 'w' || *q == 'W') {
				p = q;
			} else {
				p = q - 1;
				continue;
			}
		}
		if ((*p == 'e' || *p == 'w' || *p == 'W' || *p == 'r' || *p == 'R') &&
		    (!p[1] || strchr(" \t\n;}", p[1]))) {
			const char *a = p + 1 + strspn(p + 1, " \t");
			size_t n = strcspn(a, "\n");
			_cleanup_free_ char *arg = strndup(a, n);

			if (!arg) {
				c->failed = 1;
				return;
			}
			if (*p == 'e') {
				if (!*arg || *arg == ';' || *arg == '}')
					v->dynamic = true; /* runs the pattern space */
				else
					ward_vd_shell_string(c, v, w, arg, true, depth + 1);
			} else if (*arg) {
				struct word fw[2];
				struct view fv = { .w = fw, .n = 2, .cmd = v->cmd };

				if (ward_vd_word_init(c, &fw[0], (*p == 'r' || *p == 'R') ? "cat" : "tee", 0,
						      w->off, w->len)) {
					if (ward_vd_word_init(c, &fw[1], arg, 0, w->off, w->len)) {
						ward_vd_match_rules(c, &fv);
						ward_vd_word_release(&fw[1]);
					}
					ward_vd_word_release(&fw[0]);
				}
			}
			p = a + n - (a[n] ? 0 : 1);
			if (!*p)
				break;
		}
	}
}

static void unwrap_sed(struct ctx *c, struct view *v, const struct wrapper *wr,
		       const unsigned *roles, int depth)
{
	size_t i;
	bool given = false;

	(void)wr;
	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text;

		if ((strcmp(t, "-e") == 0 || strcmp(t, "--expression") == 0) && i + 1 < v->n) {
			sed_script(c, v, &v->w[++i], depth);
			given = true;
		} else if (strncmp(t, "--expression=", 13) == 0) {
			struct word x = v->w[i];

			x.text = (char *)t + 13;
			sed_script(c, v, &x, depth);
			given = true;
		} else if (strcmp(t, "-f") == 0 || strcmp(t, "--file") == 0 ||
			   strncmp(t, "--file=", 7) == 0) {
			given = true;
		}
	}
	if (!given)
		for (i = 1; i < v->n; i++)
			if (roles[i] & ROLE_DATA) {
				sed_script(c, v, &v->w[i], depth);
				break;
			}
}

/* env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... CMD */
static void unwrap_env(struct ctx *c, const struct view *v, int depth)
{
	size_t i;

	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text;

		if (strcmp(t, "--") == 0) {
			i++;
			break;
		}
		if (t[0] == '-' && t[1]) {
			const char *s = NULL;

			if (strcmp(t, "-S") == 0 || strcmp(t, "--split-string") == 0)
				s = i + 1 < v->n ? v->w[++i].text : NULL;
			else if (strncmp(t, "--split-string=", 15) == 0)
				s = t + 15;
			else if (t[1] != '-' && strchr(t + 1, 'S'))
				s = strchr(t + 1, 'S')[1] ? strchr(t + 1, 'S') + 1 :
				    i + 1 < v->n       ? v->w[++i].text :
							 NULL;
			else if (ward_vd_in_list(t, "-u -C -P -a --unset --chdir --argv0"))
				i++;
			if (s) {
				/* -S splits its string into words, with quotes, as a
				 * shell would: validate it as one, then go on */
				ward_vd_shell_string(c, v, &v->w[i], s, true, depth + 1);
				return;
			}
			continue;
		}
		if (strchr(t, '=') && (isalpha((unsigned char)t[0]) || t[0] == '_')) {
			ward_vd_assignment(c, v, &v->w[i], depth);
			continue;
		}
		break;
	}
	sub_view(c, v, i, v->n, depth + 1);
}

static bool downloaded(const struct ctx *c, const char *fold)
{
	_cleanup_free_ char *p = ward_vd_norm_path(fold);
	size_t i;

	for (i = 0; p && i < c->n_downloads; i++)
		if (strcmp(c->downloads[i], p) == 0)
			return true;
	return false;
}

static void add_download(struct ctx *c, const char *fold)
{
	char **g;
	char *p;

	if (!*fold || strcmp(fold, "-") == 0 || strncmp(fold, "/dev/", 5) == 0)
		return;
	p = ward_vd_norm_path(fold);
	g = p ? realloc(c->downloads, (c->n_downloads + 1) * sizeof(*g)) : NULL;
	if (!g) {
		free(p);
		c->failed = 1;
		return;
	}
	c->downloads = g;
	g[c->n_downloads++] = p;
}

/* The file a URL is saved as by curl -O or wget: its last path component. */
static void add_url_name(struct ctx *c, const char *url)
{
	const char *s = strstr(url, "://"), *slash;
	char name[256];
	size_t k;

	if (!s)
		return;
	slash = strrchr(s + 3, '/');
	if (!slash)
		return;
	k = strcspn(slash + 1, "?#");
	if (!k || k >= sizeof(name))
		return;
	memcpy(name, slash + 1, k);
	name[k] = '\0';
	add_download(c, name);
}

/* What a download writes: -o/--output/-O files, curl -O's and wget's names
 * from the URL, and stdout redirected to a file. */
static void record_downloads(struct ctx *c, const struct view *v)
{
	const char *prog = ward_vd_prog_of(v);
	bool wget = strcmp(prog, "wget") == 0, named = wget, explicit_out = false;
	size_t i;

	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].fold;

		if (ward_vd_is_output_opt(prog, v->w[i].text)) {
			if (strchr(t, '='))
				add_download(c, strchr(t, '=') + 1);
			else if (i + 1 < v->n)
				add_download(c, v->w[++i].fold);
			explicit_out = true;
		} else if (!wget && (strcmp(v->w[i].text, "-O") == 0 ||
				     strcmp(t, "--remote-name") == 0 || strcmp(t, "--remote-name-all") == 0)) {
			named = true;
		}
	}
	if (named && !explicit_out)
		for (i = 1; i < v->n; i++)
			add_url_name(c, v->w[i].fold);
	for (i = 0; i < v->cmd->nr; i++)
		if (v->cmd->r[i].kind == RD_WRITE && v->cmd->r[i].fd == 1)
			add_download(c, v->cmd->r[i].target.fold);
}

static const char *basename_of_path(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* Whether PATH was assigned in the string, or for this command. */
static bool path_changed(const struct ctx *c, const struct view *v)
{
	size_t i;

	for (i = 0; i < c->n_vars; i++)
		if (strcmp(c->vars[i].name, "PATH") == 0)
			return true;
	for (i = 0; i < v->cmd->n_assigns; i++)
		if (strncmp(v->cmd->assigns[i].text, "PATH=", 5) == 0)
			return true;
	return false;
}

static struct written *find_written(const struct ctx *c, const char *fold)
{
	_cleanup_free_ char *p = ward_vd_norm_path(fold);
	size_t i;

	for (i = 0; p && i < c->n_written; i++)
		if (strcmp(c->written[i].path, p) == 0)
			return &c->written[i];
	return NULL;
}

/* A file this command writes: with text (NULL: what it holds is not known
 * to ward, and an earlier known text no longer counts). `>>` and `>` alike
 * add to what was there: more text to check, never less. */
static void note_written(struct ctx *c, const char *fold, const char *text)
{
	struct written *w = find_written(c, fold), *g;
	char *p;

	if (!*fold || strncmp(fold, "/dev/", 5) == 0)
		return;
	if (w) {
		char *t = NULL;

		if (text && asprintf(&t, "%s\n%s", w->text, text) < 0) {
			c->failed = 1;
			return;
		}
		free(w->text);
		w->text = t;
		if (!t) {
			free(w->path);
			*w = c->written[--c->n_written];
		}
		return;
	}
	if (!text)
		return;
	p = ward_vd_norm_path(fold);
	g = p ? realloc(c->written, (c->n_written + 1) * sizeof(*g)) : NULL;
	if (!g) {
		free(p);
		c->failed = 1;
		return;
	}
	c->written = g;
	g[c->n_written].path = p;
	g[c->n_written].text = strdup(text);
	if (!g[c->n_written].text) {
		free(p);
		c->failed = 1;
		return;
	}
	c->n_written++;
}

/* The text of a file written from a substitution: known only when it runs. */
#define WRITTEN_DYNAMIC "\001dynamic"

/* echo …, printf …, cat <<EOF, tee f <<EOF: the text the command writes
 * to its standard output when ward can know it, else NULL (malloc'd). */
static char *known_output(const struct view *v, const char *prog)
{
	const struct redir *here = stdin_text(v->cmd);
	char *out = NULL;
	size_t len = 0, i = 1;
	FILE *f;

	if (ward_vd_in_list(prog, "cat tee")) {
		for (i = 1; i < v->n && strcmp(prog, "cat") == 0; i++)
			if (v->w[i].text[0] != '-')
				return NULL; /* cat FILE: what FILE holds */
		if (here && (here->target.flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB)))
			return strdup(WRITTEN_DYNAMIC);
		return here ? strdup(here->target.text) : NULL;
	}
	if (!ward_vd_in_list(prog, "echo printf"))
		return NULL;
	for (i = 1; i < v->n; i++)
		if (v->w[i].flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB))
			return strdup(WRITTEN_DYNAMIC); /* echo "$(curl …)" > f */
	i = 1;
	if (strcmp(prog, "echo") == 0)
		while (i < v->n && ward_vd_in_list(v->w[i].text, "-n -e -E -ne -en"))
			i++;
	f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	for (; i < v->n; i++)
		fprintf(f, "%s%s", v->w[i].text, i + 1 < v->n ? " " : "\n");
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* Files the command writes, with the text ward knows they get. */
static void record_written(struct ctx *c, const struct view *v, const char *prog)
{
	_cleanup_free_ char *text = NULL;
	size_t i;
	bool any = strcmp(prog, "tee") == 0;

	for (i = 0; i < v->cmd->nr && !any; i++)
		any = v->cmd->r[i].kind == RD_WRITE && v->cmd->r[i].fd == 1;
	if (!any)
		return;
	text = known_output(v, prog);
	for (i = 0; i < v->cmd->nr; i++)
		if (v->cmd->r[i].kind == RD_WRITE && v->cmd->r[i].fd == 1)
			note_written(c, v->cmd->r[i].target.fold, text);
	if (strcmp(prog, "tee") == 0)
		for (i = 1; i < v->n; i++)
			if (v->w[i].text[0] != '-')
				note_written(c, v->w[i].fold, text);
}

/* A script the string wrote and then runs: its text checked as the program
 * that runs it reads it (a shell, or an interpreter the #! line names). */
static void run_written(struct ctx *c, struct view *v, const struct word *w, const char *text,
			const char *prog, int depth)
{
	const char *interp = NULL;

	if (strstr(text, WRITTEN_DYNAMIC)) {
		v->dynamic = true;
		return;
	}
	if (!is_shell(prog) && !ward_vd_in_list(prog, "source ."))
		interp = prog;
	if (strncmp(text, "#!", 2) == 0) {
		size_t n = strcspn(text, "\n");
		_cleanup_free_ char *line = strndup(text, n);

		if (!line) {
			c->failed = 1;
			return;
		}
		if (strstr(line, "python") || strstr(line, "perl") || strstr(line, "ruby") ||
		    strstr(line, "node") || strstr(line, "php"))
			interp = "python";
	}
	if (interp && strcmp(interp, "/") != 0) {
		struct word x = *w;

		x.text = (char *)text;
		code_strings(c, v, &x, depth);
		code_paths(c, v, &x, depth);
		return;
	}
	ward_vd_shell_string(c, v, w, text, shell_is_posix(prog), depth + 1);
}

/* A script file a shell reads on stdin (sh < f): checked as sh f is. */
static void check_script_file(struct ctx *c, struct view *v, const struct word *f, int depth)
{
	struct written *wr;

	if (downloaded(c, f->fold))
		v->runs_download = true;
	else if ((wr = find_written(c, f->fold)))
		run_written(c, v, f, wr->text, "sh", depth);
}

/* The script a shell, an interpreter or `source` runs from a file, or the
 * program itself when named by a path. */
static void check_runs_download(struct ctx *c, struct view *v, const char *prog, int depth)
{
	struct written *wr;
	size_t i;

	if (strchr(v->w[0].text, '/') && downloaded(c, v->w[0].fold)) {
		v->runs_download = true;
		return;
	}
	if (strchr(v->w[0].text, '/') && (wr = find_written(c, v->w[0].fold))) {
		run_written(c, v, &v->w[0], wr->text, "/", depth);
		return;
	}
	/* PATH=.:$PATH; ls: a program named as a file the string wrote or
	 * downloaded may be that file once PATH was changed */
	if (!strchr(v->w[0].text, '/') && path_changed(c, v)) {
		for (i = 0; i < c->n_written; i++)
			if (strcmp(basename_of_path(c->written[i].path), v->w[0].fold) == 0) {
				run_written(c, v, &v->w[0], c->written[i].text, "/", depth);
				return;
			}
		for (i = 0; i < c->n_downloads; i++)
			if (strcmp(basename_of_path(c->downloads[i]), v->w[0].fold) == 0) {
				v->runs_download = true;
				return;
			}
	}
	if (!is_shell(prog) && !ward_vd_in_list(prog, "source . python python2 python3 pypy pypy3 perl "
					      "ruby node nodejs php lua deno bun"))
		return;
	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text;

		if (t[0] == '-' && t[1])
			continue;
		if (v->w[i].flags & (WARD_SH_W_PROCSUB | WARD_SH_W_CMDSUB))
			v->dynamic = true; /* bash <(curl …) */
		else if (downloaded(c, v->w[i].fold))
			v->runs_download = true;
		else if ((wr = find_written(c, v->w[i].fold)))
			run_written(c, v, &v->w[i], wr->text, prog, depth);
		return;
	}
}

/* ---- options whose value is a command ------------------------------------ */

/* Program options that run their value (or the rest of the words) as a
 * command: program positions too. A table, as data: the programs, the
 * subcommand they need (NULL: any), the options, and how the value runs. */
enum opt_run {
	RUN_SHELL,   /* the value is a string a shell runs */
	RUN_BANG,    /* an editor's or debugger's command: `!CMD` or `shell CMD` runs CMD */
	RUN_REST,    /* the words after the subcommand's options are a command */
	RUN_JOINED,  /* the words after the subcommand are joined and run by a shell */
	RUN_MAKEFILE, /* makefile text: its recipes (after `;` or a tab) and $(shell …) run */
};

static const struct command_opt {
	const char *progs;
	const char *sub;     /* space-separated subcommands, or NULL */
	const char *opts;    /* options taking the command; "+" a word starting with + */
	const char *prefix;  /* the value starts with one of these (lowercase, space-separated),
				which is dropped; NULL: the whole value */
	enum opt_run how;
} command_opts[] = {
	{ "git", "rebase", "--exec -x", NULL, RUN_SHELL },
	{ "git", NULL, "--upload-pack --receive-pack --exec", NULL, RUN_SHELL },
	{ "git", "difftool", "-x --extcmd", NULL, RUN_SHELL },
	{ "git", "filter-branch", "--tree-filter --index-filter --msg-filter --env-filter "
	  "--commit-filter --parent-filter --tag-name-filter --setup", NULL, RUN_SHELL },
	{ "git", "send-email", "--sendmail-cmd --smtp-server", NULL, RUN_SHELL },
	{ "git", "clone fetch ls-remote", "-u", NULL, RUN_SHELL },
	{ "git", "bisect", NULL, NULL, RUN_REST },          /* git bisect run CMD… */
	{ "git", "submodule", NULL, NULL, RUN_JOINED },     /* git submodule foreach CMD… */
	{ "tar gtar bsdtar", NULL,
	  "--to-command -I --use-compress-program --info-script -F --new-volume-script "
	  "--rsh-command", NULL,
	  RUN_SHELL },
	{ "tar gtar bsdtar", NULL, "--checkpoint-action", "exec=", RUN_SHELL },
	{ "rsync", NULL, "-e --rsh --rsync-path", NULL, RUN_SHELL },
	{ "ssh scp sftp autossh", NULL, "-o", "proxycommand= proxycommand localcommand= localcommand "
	  "knownhostscommand= knownhostscommand", RUN_SHELL },
	{ "scp sftp", NULL, "-S", NULL, RUN_SHELL },
	{ "zip", NULL, "-TT --unzip-command", NULL, RUN_SHELL },
	{ "vim vi nvim view gvim ex rvim vimdiff", NULL, "-c --cmd +", NULL, RUN_BANG },
	{ "less more most", NULL, "+", NULL, RUN_BANG },
	{ "man", NULL, "-P --pager -H --html", NULL, RUN_SHELL },
	{ "gdb", NULL, "-ex --eval-command -iex --init-eval-command", NULL, RUN_BANG },
	{ "npm pnpm yarn bun", "exec dlx x", "-c --call", NULL, RUN_SHELL },
	{ "npm pnpm yarn bun", "exec dlx x", NULL, NULL, RUN_REST },
	{ "npm pnpm yarn", NULL, "--script-shell", NULL, RUN_SHELL },
	{ "npx pnpx bunx", NULL, "-c --call", NULL, RUN_SHELL },
	{ "npx pnpx bunx", NULL, NULL, NULL, RUN_REST },
	/* project runners: poetry run CMD, uv run CMD, bundle exec CMD */
	{ "pipenv poetry uv pdm hatch rye conda mamba micromamba pixi rustup", "run", NULL, NULL, RUN_REST },
	{ "bundle bundler", "exec", NULL, NULL, RUN_REST },
	{ "perf", "record stat trace", NULL, NULL, RUN_REST },
	{ "nodemon", NULL, "--exec -x", NULL, RUN_SHELL },
	{ "nano", NULL, "-s --speller", NULL, RUN_SHELL },
	{ "emacs", NULL, "--eval -eval", NULL, RUN_BANG },
	{ "tmux", "new new-session new-window neww split-window splitw run-shell run respawn-pane "
	  "respawnp respawn-window respawnw", NULL, NULL, RUN_JOINED },
	{ "make gmake", NULL, "SHELL= .SHELLFLAGS=", NULL, RUN_SHELL },
	{ "make gmake", NULL, "--eval -E", NULL, RUN_MAKEFILE },
	{ "mapfile readarray", NULL, "-C", NULL, RUN_SHELL }, /* bash: the callback is code */
	{ "cargo", NULL, "--config", "target.*.runner= target.*.runner = build.rustc-wrapper= "
	  "build.rustc-wrapper = build.rustc= build.rustc = target.*.linker= target.*.linker = "
	  "registry.credential-provider= registry.credential-provider = "
	  "build.rustc-workspace-wrapper= build.rustc-workspace-wrapper =", RUN_SHELL },
};

/* The value of word i for option opt: attached (`--opt=V`, `-oV`, `+V`,
 * `NAME=V`) or the next word; *next set when it is the next word. */
static const char *opt_value_of(const struct view *v, size_t i, const char *opt, bool *next)
{
	const char *t = v->w[i].text;
	size_t k = strlen(opt);

	*next = false;
	if (strcmp(opt, "+") == 0)
		return t[0] == '+' && t[1] ? t + 1 : NULL;
	if (opt[k - 1] == '=') /* make's NAME=value */
		return strncmp(t, opt, k) == 0 ? t + k : NULL;
	if (strcmp(t, opt) == 0) {
		if (i + 1 >= v->n)
			return NULL;
		*next = true;
		return v->w[i + 1].text;
	}
	if (opt[1] == '-')
		return strncmp(t, opt, k) == 0 && t[k] == '=' ? t + k + 1 : NULL;
	/* -oVALUE; not -exec for -e */
	return strncmp(t, opt, k) == 0 && t[k] && k == 2 ? t + k : NULL;
}

/* The value after one of the prefixes (case folded; `*` in a prefix stands
 * for one dotted component), or NULL. */
static const char *after_prefix(const char *value, const char *prefixes)
{
	const char *p = prefixes;

	while (*p) {
		size_t n = strcspn(p, " ");
		/* a prefix may itself hold a space ("x = "): take the next item too */
		char pat[96];
		size_t k;

		if (n && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
			for (k = strlen(value); k > 0; k--) {
				char head[256];

				if (k >= sizeof(head))
					continue;
				memcpy(head, value, k);
				head[k] = '\0';
				for (char *q = head; *q; q++)
					*q = (char)tolower((unsigned char)*q);
				if (fnmatch(pat, head, 0) == 0)
					return value + k + strspn(value + k, " =\"'");
			}
		}
		p += n;
		p += strspn(p, " ");
	}
	return NULL;
}

/* Strip quotes around a TOML string value: cargo --config 'x.runner="sh -c …"' */
static char *unquote_dup(const char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '"' || s[n - 1] == '\'' || s[n - 1] == ' '))
		n--;
	return strndup(s, n);
}

static void run_value(struct ctx *c, struct view *v, const struct word *w, const char *value,
		      enum opt_run how, int depth)
{
	_cleanup_free_ char *text = unquote_dup(value);

	if (!text) {
		c->failed = 1;
		return;
	}
	if (w->unresolved || (w->flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB)))
		v->dynamic = true;
	/* cargo's runner = ["sh", "-c", "…"]: a TOML array is an argv, its
	 * double-quoted items read as the shell reads them */
	if (text[0] == '[' && text[strlen(text) - 1] == ']') {
		char *q;
		bool in = false;

		text[strlen(text) - 1] = ' ';
		text[0] = ' ';
		for (q = text; *q; q++) {
			if (*q == '"' && (q == text || q[-1] != '\\'))
				in = !in;
			else if (*q == ',' && !in)
				*q = ' ';
		}
	}
	if (how == RUN_MAKEFILE) {
		/* a rule's recipe after `;`, a recipe line after a tab, and
		 * $(shell …) (made's own variables and functions: dynamic) */
		char *line, *save = NULL;

		if (strstr(text, "$(") || strstr(text, "${"))
			v->dynamic = true;
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *semi = strchr(line, ';');

			if (line[0] == '\t')
				ward_vd_shell_string(c, v, w, line + 1, true, depth + 1);
			else if (semi && strchr(line, ':') && strchr(line, ':') < semi)
				ward_vd_shell_string(c, v, w, semi + 1, true, depth + 1);
		}
		return;
	}
	if (how == RUN_BANG) {
		const char *t = text + strspn(text, ": \t");

		if (*t == '!')
			ward_vd_shell_string(c, v, w, t + 1, true, depth + 1);
		else if (strncmp(t, "shell ", 6) == 0 || strncmp(t, "sh ", 3) == 0 ||
			 strncmp(t, "terminal ", 9) == 0)
			ward_vd_shell_string(c, v, w, strchr(t, ' ') + 1, true, depth + 1);
		else if (strstr(t, "system(") || strstr(t, "systemlist(") || strstr(t, "jobstart(") ||
			 strstr(t, "termopen(") || strncmp(t, "py", 2) == 0 || strncmp(t, "lua", 3) == 0 ||
			 strncmp(t, "perl", 4) == 0 || strncmp(t, "ruby", 4) == 0 ||
			 strncmp(t, "so", 2) == 0 || strstr(t, "|!") || strstr(t, "r !") ||
			 strstr(t, "r!") || strstr(t, "w !") || strstr(t, "w!") ||
			 strstr(t, "shell-command") || strstr(t, "call-process") ||
			 strstr(t, "start-process") || strstr(t, "make-process") ||
			 strstr(t, "delete-directory") || strstr(t, "delete-file") ||
			 strstr(t, "write-region") || strstr(t, "(eval"))
			v->dynamic = true; /* code of the editor's own: ward does not read it */
		return;
	}
	ward_vd_shell_string(c, v, w, text, true, depth + 1);
}

void ward_vd_command_opts(struct ctx *c, struct view *v, int depth)
{
	const char *prog = ward_vd_prog_of(v);
	size_t e, i;

	for (e = 0; e < ARRAY_SIZE(command_opts); e++) {
		const struct command_opt *o = &command_opts[e];
		size_t start = 1, pos[2] = { 0, 0 };

		if (!ward_vd_in_list(prog, o->progs))
			continue;
		if (o->sub) {
			if (ward_vd_sub_start(v, pos, 1) < 1 || !ward_vd_in_list(v->w[pos[0]].fold, o->sub))
				continue;
			start = pos[0] + 1;
		}
		if (o->how == RUN_REST || o->how == RUN_JOINED) {
			/* git bisect run CMD, git submodule foreach CMD: after one more word */
			if (strcmp(prog, "git") == 0) {
				if (start >= v->n || !ward_vd_in_list(v->w[start].fold, "run foreach"))
					continue;
				start++;
				if (o->how == RUN_JOINED)
					start = ward_vd_skip_opts(v, start, "");
			} else {
				/* the options these runners and tmux give a value */
				start = ward_vd_skip_opts(v, start, "-pcwCnstxyeFlmo --package --call --workspace "
								    "--filter --dir --name --prefix --with --python "
								    "--project --directory --env-file --extra --group "
								    "--env --target --start-directory");
				if (strcmp(prog, "rustup") == 0)
					start++; /* rustup run TOOLCHAIN CMD */
			}
			if (start >= v->n)
				continue;
			if (o->how == RUN_REST) {
				sub_view(c, v, start, v->n, depth + 1);
			} else {
				size_t len = 1, k;
				_cleanup_free_ char *joined = NULL;

				for (k = start; k < v->n; k++)
					len += strlen(v->w[k].text) + 1;
				joined = calloc(1, len);
				if (!joined) {
					c->failed = 1;
					return;
				}
				for (k = start; k < v->n; k++) {
					strcat(joined, v->w[k].text);
					strcat(joined, " ");
				}
				ward_vd_shell_string(c, v, &v->w[start], joined, true, depth + 1);
			}
			continue;
		}
		for (i = 1; i < v->n; i++) {
			const char *list = o->opts, *p;
			bool next = false;

			if (strcmp(v->w[i].text, "--") == 0 && strcmp(o->opts, "SHELL= .SHELLFLAGS=") != 0)
				break;
			for (p = list; *p;) {
				size_t n = strcspn(p, " ");
				char opt[48];
				const char *value;

				if (n && n < sizeof(opt)) {
					memcpy(opt, p, n);
					opt[n] = '\0';
					value = opt_value_of(v, i, opt, &next);
					if (value && o->prefix)
						value = after_prefix(value, o->prefix);
					if (value) {
						run_value(c, v, &v->w[next ? i + 1 : i], value, o->how, depth);
						break;
					}
				}
				p += n;
				p += strspn(p, " ");
			}
			if (next)
				i++;
		}
	}
}

/* ---- the wrappers' table ----------------------------------------------------- */

/* One entry of the tables below: the programs (space-separated names) and
 * how the command they run is found in their words. A plain wrapper runs
 * the rest of its words after its options (`opts`: those taking a value,
 * as skip_opts() reads them) and `skip` operands (timeout's duration,
 * chroot's root); the others have a function of their own. */
struct wrapper {
	const char *progs;
	void (*unwrap)(struct ctx *c, struct view *v, const struct wrapper *wr,
		       const unsigned *roles, int depth);
	const char *opts;
	size_t skip;
};

/* Words [from, n) of v and one more for what the program reads at run
 * time, as an unresolved word. */
static void sub_view_unknown_arg(struct ctx *c, const struct view *v, size_t from, int depth)
{
	struct word *ws;
	struct view inner = { .n = 0, .cmd = v->cmd };
	size_t k;

	if (from >= v->n)
		return;
	ws = calloc(v->n - from + 1, sizeof(*ws));
	if (!ws) {
		c->failed = 1;
		return;
	}
	inner.w = ws;
	for (k = from; k < v->n; k++) {
		if (!ward_vd_word_init(c, &ws[inner.n], v->w[k].text, v->w[k].flags, v->w[k].off,
				       v->w[k].len))
			break;
		ws[inner.n].unresolved = v->w[k].unresolved;
		inner.n++;
	}
	if (!c->failed && ward_vd_word_init(c, &ws[inner.n], "$__ward_unknown_arg", WARD_SH_W_PARAM,
					    v->w[v->n - 1].off, v->w[v->n - 1].len)) {
		ws[inner.n++].unresolved = true;
		ward_vd_check_view(c, &inner, depth);
	}
	ward_vd_words_free(ws, inner.n);
}

/* The rest of the words after the options and `skip` operands. */
static void unwrap_plain(struct ctx *c, struct view *v, const struct wrapper *wr,
			 const unsigned *roles, int depth)
{
	(void)roles;
	sub_view(c, v, ward_vd_skip_opts(v, 1, wr->opts) + wr->skip, v->n, depth + 1);
}

/* xargs [-I R | -i[R] | --replace[=R]] CMD…: the words holding R are
 * replaced by what xargs reads, which ward cannot know */
static void unwrap_xargs(struct ctx *c, struct view *v, const struct wrapper *wr,
			 const unsigned *roles, int depth)
{
	size_t i = ward_vd_skip_opts(v, 1, wr->opts), k;
	const char *repl = NULL;

	(void)roles;
	for (k = 1; k < i && k < v->n; k++) {
		const char *t = v->w[k].text;

		if (strcmp(t, "--") == 0)
			break;
		if (strcmp(t, "-I") == 0 && k + 1 < v->n)
			repl = v->w[k + 1].text;
		else if (strncmp(t, "-I", 2) == 0 && t[2])
			repl = t + 2;
		else if (strncmp(t, "-i", 2) == 0)
			repl = t[2] ? t + 2 : "{}";
		else if (strcmp(t, "--replace") == 0)
			repl = "{}";
		else if (strncmp(t, "--replace=", 10) == 0)
			repl = t + 10;
	}
	if (repl && *repl) {
		for (k = i; k < v->n; k++)
			if (strstr(v->w[k].text, repl))
				v->w[k].unresolved = true;
		sub_view(c, v, i, v->n, depth + 1);
		return;
	}
	/* the words it reads go after the command's: `echo ~ | xargs rm -rf`
	 * is rm -rf of something ward does not see */
	sub_view_unknown_arg(c, v, i, depth + 1);
}

/* A word for what a program reads at run time: a variable never set. */
#define UNKNOWN_ARG "\"${__ward_unknown_arg}\""

static bool shell_plain(const char *t)
{
	return *t && !t[strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "0123456789_-+=/.,:@%~")];
}

/* One command line of parallel's: the command's words [i, sep) joined,
 * arg put for {} (and its forms {.} {/} {#} {1}…) or appended; arg NULL:
 * an argument ward does not know; none: sem, which appends nothing. */
static void parallel_line(struct ctx *c, struct view *v, size_t i, size_t sep, const char *arg,
			  bool none, int depth)
{
	_cleanup_free_ char *line = NULL;
	bool put = false;
	size_t k, n = 0;
	FILE *f;

	if (i == sep) {
		if (arg)
			ward_vd_shell_string(c, v, &v->w[i - 1], arg, true, depth + 1);
		else
			v->dynamic = true; /* command lines from stdin or a file */
		return;
	}
	f = open_memstream(&line, &n);
	if (!f) {
		c->failed = 1;
		return;
	}
	for (k = i; k < sep; k++) {
		const char *t = v->w[k].text, *h, *e;

		while ((h = strchr(t, '{')) && (e = strchr(h, '}')) &&
		       strspn(h + 1, "./#%0123456789") == (size_t)(e - h - 1)) {
			fwrite(t, 1, (size_t)(h - t), f);
			fputs(arg ? arg : UNKNOWN_ARG, f);
			t = e + 1;
			put = true;
		}
		fprintf(f, "%s ", t);
	}
	if (!put && !none) {
		if (!arg) {
			fputs(UNKNOWN_ARG, f);
		} else if (shell_plain(arg)) {
			fputs(arg, f); /* ~ stays ~: the shell outside expanded it already */
		} else {
			fputc('\'', f);
			for (const char *q = arg; *q; q++) {
				if (*q == '\'')
					fputs("'\\''", f);
				else
					fputc(*q, f);
			}
			fputc('\'', f);
		}
	}
	if (fclose(f) != 0 || !line) {
		c->failed = 1;
		return;
	}
	ward_vd_shell_string(c, v, &v->w[i], line, true, depth + 1);
}

/* GNU parallel [OPTIONS] [COMMAND] [::: ARGS…] and sem [OPTIONS] COMMAND:
 * the command's words are joined into a line a shell runs, each argument
 * put for {} or appended; without a command each argument is itself a
 * command line; the arguments of :::: FILE or stdin are not known. */
static void unwrap_parallel(struct ctx *c, struct view *v, const struct wrapper *wr,
			    const unsigned *roles, int depth)
{
	size_t i = ward_vd_skip_opts(v, 1, wr->opts), sep, k;
	bool files = false;

	(void)roles;
	if (i > v->n)
		i = v->n;
	for (sep = i; sep < v->n; sep++)
		if (ward_vd_in_list(v->w[sep].text, "::: :::+ :::: ::::+"))
			break;
	for (k = sep; k < v->n; k++)
		if (ward_vd_in_list(v->w[k].text, ":::: ::::+"))
			files = true;
	if (strcmp(ward_vd_prog_of(v), "sem") == 0) {
		if (i < v->n)
			parallel_line(c, v, i, v->n, NULL, true, depth);
		return;
	}
	if (sep >= v->n || files) {
		parallel_line(c, v, i, sep, NULL, false, depth);
		return;
	}
	for (k = sep + 1; k < v->n && !c->failed; k++)
		if (!ward_vd_in_list(v->w[k].text, "::: :::+"))
			parallel_line(c, v, i, sep, v->w[k].text, false, depth);
}

/* gdb … --args PROG ARGS */
static void unwrap_gdb(struct ctx *c, struct view *v, const struct wrapper *wr,
		       const unsigned *roles, int depth)
{
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i < v->n; i++)
		if (strcmp(v->w[i].text, "--args") == 0) {
			sub_view(c, v, i + 1, v->n, depth + 1);
			return;
		}
}

/* Words [from, n) joined, as a shell runs them. */
static void joined_shell(struct ctx *c, struct view *v, size_t from, int depth)
{
	_cleanup_free_ char *line = NULL;
	size_t k, n = 0;
	FILE *f;

	if (from >= v->n)
		return;
	f = open_memstream(&line, &n);
	if (!f) {
		c->failed = 1;
		return;
	}
	for (k = from; k < v->n; k++)
		fprintf(f, "%s ", v->w[k].text);
	if (fclose(f) != 0 || !line) {
		c->failed = 1;
		return;
	}
	ward_vd_shell_string(c, v, &v->w[from], line, true, depth + 1);
}

/* sg GROUP -c STRING, sg GROUP CMD…: run by /bin/sh -c */
static void unwrap_sg(struct ctx *c, struct view *v, const struct wrapper *wr,
		      const unsigned *roles, int depth)
{
	size_t i = ward_vd_skip_opts(v, 1, "") + 1;

	(void)wr;
	(void)roles;
	if (i < v->n && strcmp(v->w[i].text, "-c") == 0)
		i++;
	joined_shell(c, v, i, depth);
}

/* ssh [OPTIONS] HOST [CMD…]: the command a shell runs there */
static void unwrap_ssh(struct ctx *c, struct view *v, const struct wrapper *wr,
		       const unsigned *roles, int depth)
{
	size_t i = ward_vd_skip_opts(v, 1, wr->opts) + 1;

	(void)roles;
	if (i < v->n && strcmp(v->w[i].text, "--") == 0)
		i++;
	joined_shell(c, v, i, depth);
}

/* expect -c CODE (or code on stdin): Tcl's spawn, exec and system run a command */
static void unwrap_expect(struct ctx *c, struct view *v, const struct wrapper *wr,
			  const unsigned *roles, int depth)
{
	const char *code = NULL;
	const struct redir *here = stdin_text(v->cmd);
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i + 1 < v->n && !code; i++)
		if (strcmp(v->w[i].text, "-c") == 0)
			code = v->w[i + 1].text;
	if (!code && here)
		code = here->target.text;
	for (const char *s = code; s && *s; s++) {
		static const char *const verbs[] = { "spawn ", "exec ", "system " };

		for (size_t k = 0; k < ARRAY_SIZE(verbs); k++) {
			size_t n = strlen(verbs[k]);
			_cleanup_free_ char *cmd = NULL;

			if (strncmp(s, verbs[k], n) != 0 || (s > code && !strchr(" \t\n;[{", s[-1])))
				continue;
			cmd = strndup(s + n, strcspn(s + n, "\n;]"));
			if (!cmd) {
				c->failed = 1;
				return;
			}
			if (strpbrk(cmd, "$["))
				v->dynamic = true; /* a Tcl variable or command: made when it runs */
			ward_vd_shell_string(c, v, &v->w[0], cmd, true, depth + 1);
		}
	}
}

/* busybox APPLET ARGS: the applet, options and all. */
static void unwrap_busybox(struct ctx *c, struct view *v, const struct wrapper *wr,
			   const unsigned *roles, int depth)
{
	(void)wr;
	(void)roles;
	sub_view(c, v, 1, v->n, depth + 1);
}

static void unwrap_command(struct ctx *c, struct view *v, const struct wrapper *wr,
			   const unsigned *roles, int depth)
{
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i < v->n && v->w[i].text[0] == '-'; i++)
		if (strchr(v->w[i].text, 'v') || strchr(v->w[i].text, 'V'))
			return; /* command -v NAME looks a name up */
	sub_view(c, v, i, v->n, depth + 1);
}

static void unwrap_flock(struct ctx *c, struct view *v, const struct wrapper *wr,
			 const unsigned *roles, int depth)
{
	size_t i = ward_vd_skip_opts(v, 1, wr->opts), k;

	(void)roles;
	for (k = 1; k < v->n; k++)
		if ((strcmp(v->w[k].text, "-c") == 0 || strcmp(v->w[k].text, "--command") == 0) &&
		    k + 1 < v->n)
			ward_vd_shell_string(c, v, &v->w[k + 1], v->w[k + 1].text, true, depth + 1);
	sub_view(c, v, i + 1, v->n, depth + 1);
}

/* sudo OPTIONS [NAME=value...] COMMAND */
static void unwrap_sudo(struct ctx *c, struct view *v, const struct wrapper *wr,
			const unsigned *roles, int depth)
{
	size_t i = ward_vd_skip_opts(v, 1, wr->opts);

	(void)roles;
	while (i < v->n && strchr(v->w[i].text, '=') &&
	       (isalpha((unsigned char)v->w[i].text[0]) || v->w[i].text[0] == '_'))
		i++;
	sub_view(c, v, i, v->n, depth + 1);
}

/* su, runuser and script run the string of -c/--command with a shell,
 * in every form getopt_long takes: -c STRING, -cSTRING, in a cluster
 * (-qc STRING, -qcSTRING), --command STRING, --command=STRING, and a
 * long option's unambiguous prefix (--comm=STRING) */
static void unwrap_command_option(struct ctx *c, struct view *v, const struct wrapper *wr,
				  const unsigned *roles, int depth)
{
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text, *str = NULL;
		bool next = false;

		if (t[0] == '-' && t[1] == '-') {
			size_t n = strcspn(t + 2, "=");

			if (n >= 3 && n <= 7 && strncmp(t + 2, "command", n) == 0) {
				str = t[2 + n] == '=' ? t + 3 + n : NULL;
				next = !str;
			}
		} else if (t[0] == '-' && t[1]) {
			const char *p = strchr(t + 1, 'c');

			if (p) {
				str = p[1] ? p + 1 : NULL;
				next = !str;
			}
		}
		if (next && i + 1 < v->n)
			ward_vd_shell_string(c, v, &v->w[i + 1], v->w[i + 1].text, true, depth + 1);
		else if (str)
			ward_vd_shell_string(c, v, &v->w[i], str, true, depth + 1);
	}
}

/* watch joins its words and runs them with sh -c */
static void unwrap_watch(struct ctx *c, struct view *v, const struct wrapper *wr,
			 const unsigned *roles, int depth)
{
	_cleanup_free_ char *joined = NULL;
	size_t i = ward_vd_skip_opts(v, 1, wr->opts), k, len = 0;

	(void)roles;
	for (k = i; k < v->n; k++)
		len += strlen(v->w[k].text) + 1;
	joined = calloc(1, len + 1);
	for (k = i; joined && k < v->n; k++) {
		strcat(joined, v->w[k].text);
		strcat(joined, " ");
	}
	if (joined && i < v->n)
		ward_vd_shell_string(c, v, &v->w[i], joined, true, depth + 1);
}

/* sort --compress-program=PROG: PROG reads sort's data from a pipe */
static void unwrap_sort(struct ctx *c, struct view *v, const struct wrapper *wr,
			const unsigned *roles, int depth)
{
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i < v->n; i++) {
		const char *t = v->w[i].text;
		struct cmd piped = { .off = v->cmd->off, .len = v->cmd->len,
				     .depth = v->cmd->depth, .in_subst = v->cmd->in_subst,
				     .piped = true };
		struct word w;
		struct view inner = { .w = &w, .n = 1, .cmd = &piped };

		if (strncmp(t, "--compress-program=", 19) == 0) {
			if (ward_vd_word_init(c, &w, t + 19, v->w[i].flags, v->w[i].off, v->w[i].len))
				ward_vd_check_view(c, &inner, depth + 1);
			ward_vd_word_release(&w);
		} else if (ward_vd_long_opt_is(t, "--compress-program") && i + 1 < v->n) {
			inner.w = &v->w[i + 1];
			ward_vd_check_view(c, &inner, depth + 1);
		}
	}
}

/* trap 'CODE' SIGNAL...: the shell runs CODE later */
static void unwrap_trap(struct ctx *c, struct view *v, const struct wrapper *wr,
			const unsigned *roles, int depth)
{
	size_t i = v->n > 1 && strcmp(v->w[1].text, "--") == 0 ? 2 : 1;

	(void)wr;
	(void)roles;
	if (i < v->n && v->w[i].text[0] != '-' && v->n > i + 1)
		ward_vd_shell_string(c, v, &v->w[i], v->w[i].text, true, depth + 1);
}

static void unwrap_assignments(struct ctx *c, struct view *v, const struct wrapper *wr,
			       const unsigned *roles, int depth)
{
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i < v->n; i++)
		ward_vd_assignment(c, v, &v->w[i], depth);
}

static void unwrap_env_w(struct ctx *c, struct view *v, const struct wrapper *wr,
			 const unsigned *roles, int depth)
{
	(void)wr;
	(void)roles;
	unwrap_env(c, v, depth);
}

static void unwrap_find_w(struct ctx *c, struct view *v, const struct wrapper *wr,
			  const unsigned *roles, int depth)
{
	(void)wr;
	(void)roles;
	unwrap_find(c, v, depth);
}

static void unwrap_git_w(struct ctx *c, struct view *v, const struct wrapper *wr,
			 const unsigned *roles, int depth)
{
	(void)wr;
	(void)roles;
	unwrap_git(c, v, depth);
}

static void unwrap_awk_w(struct ctx *c, struct view *v, const struct wrapper *wr,
			 const unsigned *roles, int depth)
{
	(void)wr;
	unwrap_awk(c, v, roles, depth);
}

/* The programs that run another command or a string of code, after the
 * rules have seen the view (a program is in one entry at most). */
static const struct wrapper wrappers[] = {
	{ "env", unwrap_env_w, NULL, 0 },
	{ "nohup builtin unbuffer fakeroot proxychains proxychains4 torsocks tsocks caffeinate "
	  "catchsegv valgrind setsid",
	  unwrap_plain, "", 0 },
	{ "time", unwrap_plain, "fo --format --output", 0 },
	{ "nice", unwrap_plain, "n --adjustment", 0 },
	{ "timeout", unwrap_plain, "sk --signal --kill-after", 1 }, /* after the duration */
	{ "xargs", unwrap_xargs,
	  "InPLdEsa --max-args --max-procs --max-lines --delimiter --eof --arg-file "
	  "--process-slot-var --max-chars",
	  0 },
	{ "parallel sem", unwrap_parallel,
	  "jSaCdEINLnPX --jobs --sshlogin --arg-file --colsep --delimiter --eof --replace "
	  "--max-args --max-lines --max-replace-args --tmpdir --results --joblog --workdir --wd "
	  "--delay --timeout --retries --memfree --load --basefile --env --tagstring --halt --id "
	  "--semaphorename --sshloginfile --slf --shebang-wrap --transfer-file --tf --return "
	  "--max-procs --nice --rpl --plus --template --limit --ssh --fg --termseq",
	  0 },
	{ "command", unwrap_command, NULL, 0 },
	{ "exec", unwrap_plain, "a", 0 },
	{ "busybox toybox", unwrap_busybox, NULL, 0 },
	{ "setpriv tini dumb-init numactl prlimit systemd-run chpst uvx", unwrap_plain,
	  "NmCpiPuE --unit --property --setenv --description --slice --working-directory --pid "
	  "--cpunodebind --membind --physcpubind --interleave --preferred --from --with --python",
	  0 },
	{ "xvfb-run", unwrap_plain, "nsfepw --server-num --server-args --auth-file --error-file "
	  "--xauth-protocol --wait", 0 },
	{ "faketime", unwrap_plain, "", 1 }, /* after the time */
	{ "screen", unwrap_plain, "ScephtT", 0 },
	{ "dtach", unwrap_plain, "nAcNrEez", 0 },
	{ "entr", unwrap_watch, "", 0 },
	{ "watchexec", unwrap_watch, "wefidsW --watch --exts --filter --ignore --delay --signal "
	  "--shell --workdir --env", 0 },
	{ "gdb", unwrap_gdb, NULL, 0 },
	{ "sg", unwrap_sg, NULL, 0 },
	{ "ssh", unwrap_ssh, "bcDEeFIiJLlmOopQRSWw", 0 },
	{ "expect", unwrap_expect, NULL, 0 },
	{ "stdbuf", unwrap_plain, "ioe --input --output --error", 0 },
	{ "ionice", unwrap_plain, "cnp --class --classdata --pid", 0 },
	{ "taskset chrt chroot", unwrap_plain, "", 1 }, /* after the mask, policy or root */
	{ "unshare nsenter firejail bwrap", unwrap_plain, "t --target", 0 },
	{ "strace ltrace", unwrap_plain, "eopsuEabIOPSX", 0 },
	{ "flock", unwrap_flock, "wEc --timeout --conflict-exit-code --command", 0 },
	{ "sudo doas pkexec run0", unwrap_sudo,
	  "ugCDhprtTUc --user --group --close-from --chdir --host --prompt --role --type "
	  "--other-user --command-timeout",
	  0 },
	{ "su runuser script", unwrap_command_option, NULL, 0 },
	{ "watch", unwrap_watch, "ndq --interval --differences", 0 },
	{ "find", unwrap_find_w, NULL, 0 },
	{ "sort", unwrap_sort, NULL, 0 },
	{ "git", unwrap_git_w, NULL, 0 },
	{ "awk gawk mawk nawk", unwrap_awk_w, NULL, 0 },
	{ "sed gsed", unwrap_sed, NULL, 0 },
	{ "trap", unwrap_trap, NULL, 0 },
	{ "export declare typeset local readonly", unwrap_assignments, NULL, 0 },
};

/* Before the rules see a view: what decides some conditions (whether it
 * runs code only known at run time, reads its program from stdin). */
static void unwrap_shell_r(struct ctx *c, struct view *v, const struct wrapper *wr,
			   const unsigned *roles, int depth)
{
	(void)wr;
	(void)roles;
	unwrap_shell(c, v, ward_vd_prog_of(v), depth);
}

static void unwrap_interpreter_r(struct ctx *c, struct view *v, const struct wrapper *wr,
				 const unsigned *roles, int depth)
{
	(void)wr;
	(void)roles;
	unwrap_interpreter(c, v, ward_vd_prog_of(v), depth);
}

/* source FILE, . FILE: /dev/stdin is the here-string's text */
static void unwrap_source(struct ctx *c, struct view *v, const struct wrapper *wr,
			  const unsigned *roles, int depth)
{
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i < v->n; i++)
		if (v->w[i].flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB | WARD_SH_W_PARAM))
			v->dynamic = true;
	if (v->n > 1 && fd_of_path(v->w[1].fold) > 0) {
		program_from_fd(c, v, fd_of_path(v->w[1].fold), true, depth);
		return;
	}
	if (v->n > 1 && is_stdin_path(v->w[1].fold)) {
		const struct redir *here = stdin_text(v->cmd);

		if (here)
			ward_vd_shell_string(c, v, &here->target, here->target.text, true, depth + 1);
		else
			v->script_stdin = true;
	}
}

/* at TIME, batch: the job is a shell script read from stdin (or -f FILE) */
static void unwrap_at(struct ctx *c, struct view *v, const struct wrapper *wr,
		      const unsigned *roles, int depth)
{
	const struct redir *here = stdin_text(v->cmd);
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i < v->n; i++)
		if (ward_vd_in_list(v->w[i].text, "-f -l -r -d -c -q atq atrm"))
			return; /* a file ward does not see, or no job at all */
	if (here)
		ward_vd_shell_string(c, v, &here->target, here->target.text, true, depth + 1);
	else
		v->script_stdin = true;
}

/* make -f /dev/stdin (or -): the makefile is the here-string's text, or
 * what a pipe brings */
static void unwrap_make(struct ctx *c, struct view *v, const struct wrapper *wr,
			const unsigned *roles, int depth)
{
	size_t i;

	(void)wr;
	(void)roles;
	for (i = 1; i + 1 < v->n; i++) {
		const struct redir *here;

		if (!ward_vd_in_list(v->w[i].text, "-f --file --makefile") ||
		    (strcmp(v->w[i + 1].text, "-") != 0 && !is_stdin_path(v->w[i + 1].fold)))
			continue;
		here = stdin_text(v->cmd);
		if (here)
			run_value(c, v, &here->target, here->target.text, RUN_MAKEFILE, depth);
		else
			v->script_stdin = true;
		return;
	}
}

/* Whether w is one of the environment generators the dangerous.eval rule
 * lets through (its noword line: the list is data, in validators.rules). */
static bool known_generator(const struct ctx *c, const struct word *w)
{
	size_t i, k, j;

	if (!(w->flags & WARD_SH_W_CMDSUB) || (w->flags & WARD_SH_W_BACKTICK))
		return false;
	for (i = 0; i < c->rules->n; i++) {
		const struct rule *r = &c->rules->rules[i];

		if (strcmp(r->id, "dangerous.eval") != 0)
			continue;
		for (k = 0; k < r->n_conds; k++)
			if (r->conds[k].kind == C_NOWORD)
				for (j = 0; j < r->conds[k].n_items; j++)
					if (fnmatch(r->conds[k].items[j], w->fold, 0) == 0)
						return true;
	}
	return false;
}

/* eval and trap run code only known at run time when it is substituted */
static void mark_dynamic(struct ctx *c, struct view *v, const struct wrapper *wr,
			 const unsigned *roles, int depth)
{
	size_t i;

	(void)wr;
	(void)roles;
	(void)depth;
	if (v->n == 2 && strcmp(ward_vd_prog_of(v), "eval") == 0 && known_generator(c, &v->w[1]))
		return; /* eval "$(ssh-agent -s)" */
	for (i = 1; i < v->n; i++)
		if (v->w[i].flags & WARD_SH_W_CMDSUB)
			v->dynamic = true;
}

static const struct wrapper readers[] = {
	{ SHELLS, unwrap_shell_r, NULL, 0 },
	{ "python python2 python3 pypy pypy3 perl ruby node nodejs php lua deno bun rscript julia",
	  unwrap_interpreter_r, NULL, 0 },
	{ "source .", unwrap_source, NULL, 0 },
	{ "make gmake", unwrap_make, NULL, 0 },
	{ "at batch", unwrap_at, NULL, 0 },
	{ "eval trap", mark_dynamic, NULL, 0 },
};

static const struct wrapper *find_wrapper(const struct wrapper *table, size_t n, const char *prog)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ward_vd_in_list(prog, table[i].progs))
			return &table[i];
	return NULL;
}

/* Whether the arithmetic text assigns NAME (NAME = …, not ==): its value
 * there is the expression's, not an old one. */
static bool arith_assigns(const char *text, const char *name)
{
	size_t k = strlen(name);

	for (const char *s = strstr(text, name); s; s = strstr(s + 1, name)) {
		const char *e = s + k;

		if (s > text && (isalnum((unsigned char)s[-1]) || s[-1] == '_' || s[-1] == '$'))
			continue;
		while (*e == ' ' || *e == '\t')
			e++;
		if (e[0] == '=' && e[1] != '=')
			return true;
	}
	return false;
}

bool ward_vd_arith_unknown(const struct ctx *c, const char *text)
{
	const char *s = strstr(text, "$((");

	for (s = s ? s + 3 : text; *s; s++) {
		if (*s == '`' || (*s == '$' && s[1] == '('))
			return true; /* the output of a command is arithmetic code here */
		if (isalpha((unsigned char)*s) || *s == '_') {
			char name[64];
			size_t k = 0;

			while ((isalnum((unsigned char)*s) || *s == '_') && k + 1 < sizeof(name))
				name[k++] = *s++;
			name[k] = '\0';
			/* a value with a subscript or an expansion is code to $((…)) */
			if ((!ward_vd_var_known(c, name) || strpbrk(ward_vd_var_value(c, name), "[$`")) &&
			    !arith_assigns(text, name))
				return true;
			s--;
		} else if (isdigit((unsigned char)*s)) {
			while (isalnum((unsigned char)s[1]))
				s++; /* 0x1f, 10#7 */
		}
	}
	return false;
}

/* A program word that is a variable of the string alone ($PY, ${PY}), set
 * where the order of its assignments is not certain (PY=python3; … ||
 * PY=python; $PY -m pytest, or behind a wrapper: timeout 60 $PY -m pytest):
 * the command checked once with each literal value it may hold
 * (ward_vd_var_values()). false when those are not all known (the word is
 * then refused as unresolved). Only in the validated string's own commands,
 * where this shell expands the word: a string another shell runs (sh -c
 * '$PY') sees its environment, not these assignments. */
static bool check_each_value(struct ctx *c, const struct view *v, int depth)
{
	const char *t = v->w[0].text, *vals[8];
	char name[64];
	size_t len, n, i;

	if (!v->cmd || v->cmd->depth != 0)
		return false;
	if (t[0] != '$' || (v->w[0].flags & (WARD_SH_W_CMDSUB | WARD_SH_W_ARITH |
					     WARD_SH_W_PROCSUB | WARD_SH_W_GLOB)))
		return false;
	t++;
	len = strlen(t);
	if (t[0] == '{') {
		if (len < 3 || t[len - 1] != '}')
			return false;
		t++;
		len -= 2;
	}
	if (!len || len >= sizeof(name) || (t[0] >= '0' && t[0] <= '9'))
		return false;
	for (i = 0; i < len; i++)
		if (!(t[i] == '_' || (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
		      (t[i] >= '0' && t[i] <= '9')))
			return false;
	memcpy(name, t, len);
	name[len] = '\0';
	/* only what the order of assignments leaves open: not a split under a
	 * changed IFS, nor a name the string never set */
	if (c->ifs_changed || !ward_vd_var_uncertain(c, name))
		return false;
	/* names the shell sets itself (: rm; $_, read <<< rm; $REPLY,
	 * getopts a: o -a rm; $OPTARG, mapfile, [[ =~ ]], cd): no assignment
	 * in the string shows their value */
	if (ward_vd_in_list(name, "_ REPLY OPTARG OPTIND MAPFILE PWD OLDPWD COPROC DIRSTACK") ||
	    strncmp(name, "BASH", 4) == 0)
		return false;
	n = ward_vd_var_values(c, name, vals, sizeof(vals) / sizeof(vals[0]));
	for (i = 0; i < n; i++) {
		/* behind a wrapper the value is the wrapper's word before it is a
		 * program: nice $x rm with x=-n5 (or --), env $x rm with x=A=1 */
		if (vals[i][0] == '-' || vals[i][0] == '+' || strchr(vals[i], '='))
			return false;
		/* a builtin that changes what later commands are ($x y with x=read,
		 * x=. sourcing, x=alias in dash): the walk follows those by their
		 * literal name only */
		if (ward_vd_in_list(vals[i], ". source trap eval alias unalias read unset getopts "
					     "mapfile readarray declare typeset local export "
					     "readonly set shift shopt enable hash builtin command "
					     "printf"))
			return false;
	}
	/* and each value this walk has seen it take so far one of those: a
	 * name written so the text does not show it (export P""Y=rm, read
	 * P\Y, unset 'P'Y) sets it all the same */
	for (i = 0; i < c->n_vars && n; i++) {
		size_t k;

		if (strcmp(c->vars[i].name, name) != 0)
			continue;
		for (k = 0; k < n && c->vars[i].known && !c->vars[i].array &&
			    strcmp(c->vars[i].value, vals[k]) != 0;
		     k++)
			;
		if (!c->vars[i].known || c->vars[i].array || k == n)
			return false;
	}
	for (i = 0; i < n && !c->failed; i++) {
		struct view each = *v;
		struct word *w = calloc(v->n, sizeof(*w));
		size_t k;

		if (!w) {
			c->failed = 1;
			return true;
		}
		w[0] = (struct word){ 0 };
		if (!ward_vd_word_init(c, &w[0], vals[i], 0, v->w[0].off, v->w[0].len)) {
			free(w);
			c->failed = 1;
			return true;
		}
		for (k = 1; k < v->n; k++)
			w[k] = v->w[k];
		each.w = w;
		ward_vd_check_view(c, &each, depth + 1);
		/* the other words' paths, normalised when first asked, belong
		 * to the view's own words (ward_vd_words_free() frees them) */
		for (k = 1; k < v->n; k++) {
			struct word *o = (struct word *)&v->w[k];

			if (!o->norm)
				o->norm = w[k].norm;
			else if (w[k].norm != o->norm)
				free(w[k].norm);
			if (!o->norm_alt)
				o->norm_alt = w[k].norm_alt;
			else if (w[k].norm_alt != o->norm_alt)
				free(w[k].norm_alt);
		}
		ward_vd_word_release(&w[0]);
		free(w);
	}
	return n > 0;
}

void ward_vd_check_view(struct ctx *c, struct view *v, int depth)
{
	_cleanup_free_ unsigned *roles = NULL;
	const struct wrapper *wr;
	const char *prog;

	if (!v->n || c->failed)
		return;
	if (depth > MAX_DEPTH) {
		ward_vd_refuse_synthetic(c, "validator.too-deep",
					 "wrappers or strings nested too deep to check", v->cmd,
					 v->w[0].text);
		return;
	}
	/* an unquoted $x that is empty is no word at all: the next word runs.
	 * A check of the validators': off with them ("validators": {"enabled":
	 * false} leaves no rule, for hosts that want the kernel's fences alone) */
	if (ward_rules_count(c->rules) > 0 &&
	    (v->w[0].unresolved || (v->w[0].alt && !v->w[0].alt[strspn(v->w[0].alt, " \t\n")]) ||
	     (v->w[0].flags & WARD_SH_W_GLOB)) &&
	    !(v->w[0].flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB))) {
		/* `${x:-rm} -rf ~`, `set -- rm …; "$@"`, `IFS=,; $x`, `/???/r?`:
		 * ward would have to guess which program runs (a glob's matches
		 * are files ward does not see) */
		struct cmd at = *v->cmd;

		if (check_each_value(c, v, depth))
			return;

		at.off = v->w[0].off;
		at.len = v->w[0].len;
		ward_vd_refuse_synthetic(c, "validator.unresolved-program",
					 "a program word whose value is only known when the shell runs it "
					 "(a variable not set literally before, \"$@\", ${x:-…}, a changed IFS, "
					 "a glob)",
					 &at, v->w[0].text);
		return;
	}
	prog = ward_vd_prog_of(v);
	if (ward_vd_in_list(prog, "cd pushd popd"))
		c->saw_cd = true;
	/* What the view does decides some conditions: find it out first. */
	if (v->w[0].flags & (WARD_SH_W_CMDSUB | WARD_SH_W_PROCSUB))
		v->dynamic = true;
	/* bash: $((x)) evaluates x's value, and a value `a[$(cmd)]` runs cmd */
	for (size_t i = 0; c->bash && i < v->n; i++)
		if ((v->w[i].flags & WARD_SH_W_ARITH) && ward_vd_arith_unknown(c, v->w[i].text))
			v->dynamic = true;
	/* bash evaluates let's words as arithmetic; a variable named with a
	 * subscript holding an expansion runs it when assigned or tested
	 * (declare 'x[$(cmd)]=1', printf -v, read, mapfile, test -v) */
	if (c->bash && strcmp(prog, "let") == 0) {
		char *all = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&all, &len);

		if (!f) {
			c->failed = 1;
			return;
		}
		for (size_t i = 1; i < v->n; i++)
			fprintf(f, "%s;", v->w[i].text);
		if (fclose(f) == 0 && ward_vd_arith_unknown(c, all))
			v->dynamic = true;
		free(all);
	}
	if (c->bash && ward_vd_in_list(prog, "declare typeset local readonly export printf read mapfile "
					     "readarray test [ unset getopts wait"))
		for (size_t i = 1; i < v->n; i++) {
			const char *br = strchr(v->w[i].text, '[');

			if (br && (strchr(br, '$') || strchr(br, '`')))
				v->dynamic = true;
		}
	if ((wr = find_wrapper(readers, ARRAY_SIZE(readers), prog)))
		wr->unwrap(c, v, wr, NULL, depth);
	ward_vd_command_opts(c, v, depth);
	if (c->n_downloads || c->n_written || (v->n > 1 && is_shell(prog)))
		check_runs_download(c, v, prog, depth);
	ward_vd_match_rules(c, v);
	if (ward_vd_in_list(prog, "curl wget fetch aria2c http https"))
		record_downloads(c, v);
	if (v->cmd->nr || strcmp(prog, "tee") == 0)
		record_written(c, v, prog);

	roles = calloc(v->n + 1, sizeof(*roles));
	if (!roles) {
		c->failed = 1;
		return;
	}
	ward_vd_compute_roles(v, roles);
	if ((wr = find_wrapper(wrappers, ARRAY_SIZE(wrappers), prog))) {
		bool was_dynamic = v->dynamic;

		wr->unwrap(c, v, wr, roles, depth);
		/* awk's system($0), sed's s///e: found only now */
		if (v->dynamic && !was_dynamic)
			ward_vd_match_rules(c, v);
	}
}
