/* test-shparse-agree.c — the parser agrees with /bin/sh.
 *
 * For each command line of a corpus of realistic agent commands, dash runs
 * it for real with PATH holding only argv-recorder (tests/helpers) under every
 * program name, in a fresh scratch directory; the recorder logs each argv it
 * is started with. The same line is parsed (POSIX dialect, what dash reads)
 * and the tree is evaluated by a small interpreter here that follows the
 * parser's structure — lists, and-or, pipelines, compound commands,
 * functions, words by parts (quoting, $NAME, $(…), `…`, tilde, globs, field
 * splitting) — to list the argv of every external command it would start.
 * The two lists must be equal (as multisets: pipelines run concurrently).
 *
 * Builtins (echo, cd, test, read, …) are not recorded by dash, so the
 * interpreter gives them their effect (output for $(…), status, variables)
 * and records nothing either. */
#include "harness.h"
#include "ward/shparse.h"
#include "ward/validate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const corpus[] = {
	"git status",
	"git log --oneline -n 5",
	"git diff HEAD~1 -- src/x.c",
	"git add -A && git commit -m \"fix: handle empty input\"",
	"git commit -m 'it'\\''s done'",
	"make -j4 && make test",
	"make clean; make",
	"gcc -Wall -O2 -o app a.c b.c",
	"gcc -o app *.c",
	"ls -la",
	"ls src/*.c",
	"ls -1 src | wc -l",
	"cat README.md | head -n 20",
	"grep -rn \"TODO\" src/ docs/",
	"grep -rn 'rm -rf /' docs/",
	"grep -E '^(foo|bar)$' a.c || true",
	"find . -name '*.c' -type f",
	"find . -name \"*.h\" -exec grep -l include {} \\;",
	"sed -i 's/foo/bar/g' a.c",
	"sed -n '1,10p' README.md",
	"awk '{print $1}' a.c | sort | uniq -c | sort -rn",
	"awk -F: '{ print $1 \" \" $NF }' data.txt",
	"sort -u a.c > sorted.txt",
	"wc -l *.c",
	"head -c 100 a.c; tail -n 5 b.c",
	"xargs -n1 echo < list.txt",
	"npm install && npm test",
	"npm run build -- --prod",
	"node -e 'console.log(process.version)'",
	"python3 -c \"import sys; print(sys.argv)\" a b",
	"python3 -m pytest -q tests/",
	"pip install -r requirements.txt",
	"cargo build --release 2>&1 | tail -n 3",
	"cargo test -- --nocapture",
	"go test ./... -run 'Test(A|B)'",
	"go build -o bin/app ./cmd/app",
	"tar -czf out.tar.gz src docs",
	"cp a.c a.c.bak && mv a.c.bak b.c.bak",
	"mkdir -p build/obj && touch build/obj/.keep",
	"rm -f *.o build/*.o",
	"chmod +x script.sh && ./script.sh --fast",
	"diff -u a.c b.c > patch.diff || true",
	"tee log.txt < a.c | wc -c",
	"cut -d, -f1,3 data.csv | tr a-z A-Z",
	"echo \"$HOME\" && ls \"$HOME\"",
	"ls ~ ~/docs",
	"cat ~/.profile 2>/dev/null || echo none",
	"X=1 make VERBOSE=1",
	"CC=clang CFLAGS=\"-O2 -g\" make",
	"export NODE_ENV=production; npm run build",
	"NAME=world; greet \"hello $NAME\"",
	"ls $(git rev-parse --show-toplevel)",
	"echo \"branch: $(git branch --show-current)\"",
	"git checkout -b \"feature/$(date +%s)\"",
	"VERSION=`cat VERSION`; tar -cf app-$VERSION.tar src",
	"for f in *.c; do gcc -c \"$f\"; done",
	"for d in src docs; do ls \"$d\"; done",
	"for i in 1 2 3; do touch \"file$i\"; done",
	"if [ -f a.c ]; then gcc a.c; else echo missing; fi",
	"if [ -d nope ]; then ls nope; fi",
	"if git diff --quiet; then echo clean; else git stash; fi",
	"if fail; then a; elif git status; then b; else c; fi",
	"while read l; do grep \"$l\" b.c; done < /dev/null",
	"case \"$(uname)\" in Linux) make linux;; *) make other;; esac",
	"case a.c in *.c) gcc -c a.c;; *.h) ;; esac",
	"(cd src && make)",
	"{ git status; git diff; } > report.txt 2>&1",
	"make 2>&1 | tee build.log | grep -i error",
	"! grep -q FIXME a.c",
	"fail || git status",
	"fail && git status",
	"git fetch && git rebase origin/main || git rebase --abort",
	"true && false || git status",
	"cat <<EOF > config.ini\n[core]\nname = $USER\nEOF",
	"cat <<'EOF' | python3 -\nprint(\"$(id)\")\nEOF",
	"python3 - <<EOF\nimport os\nprint(\"$(whoami)\")\nEOF",
	"ls -la | grep '^d' | awk '{print $9}'",
	"echo 'a;b|c&&d' | tr ';' '\\n'",
	"printf '%s\\n' one two | sort",
	"test -n \"$HOME\" && ls",
	"[ \"$USER\" = agent ] && git config user.name agent",
	"cat a.c # show a.c",
	"ls \\\n  -la \\\n  src",
	"git log --format='%H %s' -- 'src/*.c'",
	"curl -fsSL https://example.com/install.sh -o install.sh",
	"docker ps -a --format '{{.Names}}'",
	"kubectl get pods -n default -o wide",
	"f() { git status; }; f",
	"build() { make \"$1\"; }; build all",
	"x=1; y=2; ls \"$x$y\" $x-$y",
	"a=$(git rev-parse HEAD) b=$(fail); git show $a",
	"ls -d */",
	"ls ?.c [ab].c",
	"ls '*.c' \"*.h\" \\*.py",
	"env -i PATH=/usr/bin make",
	"nice -n 10 make -j2",
	"timeout 60 npm test",
	"xargs rm -f < list.txt",
	"sh -c 'echo nested; rm -rf x'",
	"bash -lc \"make test\"",
	"nohup make > /dev/null 2>&1",
	"git diff --stat HEAD~3..HEAD",
	"git grep -n \"fn main\" -- '*.rs'",
	"rg -n 'unsafe' src --glob '!vendor'",
	"jq '.dependencies | keys' package.json",
	"yarn add -D typescript@5",
	"make -C src install DESTDIR=/tmp/stage PREFIX=/usr",
	"ls -l \"$HOME/docs\" > \"$HOME/listing.txt\"",
	"cat a.c b.c > combined.c && gcc combined.c -o combined",
	"until git pull; do sleep 5; done",
	"while fail; do make; done",
	"cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j 4",
	"pytest -k \"not slow\" -x --maxfail=1",
	"black --check . && flake8 src/",
	"eslint 'src/**/*.ts' --fix",
	"git stash push -m \"wip: $(git branch --show-current)\"",
	"echo \"done\" >> log.txt; cat log.txt | wc -l",
	"ls | xargs -I{} echo {}",
	"find . -type f -name '*.log' -delete",
	"du -sh * | sort -h | tail -5",
	"ps aux | grep [n]ode",
	"git tag -a v1.2.3 -m 'Release v1.2.3'",
	"echo $USER@$(hostname):$PWD",
	"cat \"$(ls -t *.log | head -1)\"",
	"wc -l `find . -name '*.c'`",
	"grep -rl \"$(cat pattern.txt)\" .",
	"A=\"x y\"; ls $A",
	"A=\"*.c\"; ls $A \"$A\"",
	"ls $UNSET_VAR src \"\" ''",
	"ls ${SRC:-src} ${HOME:-nohome}",
	"make # build it\n# another comment\ngit status",
	"set -e\ncd src\nmake\ncd ..\ngit status",
	"git commit -m \"$(cat msg.txt)\" --author=\"A <a@b.c>\"",
	"ls -la \"$(git rev-parse --git-dir)\"/hooks",
	"mv \"a file.txt\" 'b file.txt'",
	"echo `echo \\`git describe\\``",
	"make CFLAGS='-DNAME=\"x\"' && ./script.sh",
	"cd docs && ls && cd .. && ls",
	"r''m -rf build; \\rm -f a.o; ./script.sh -f b.o",
	"c\"ur\"l -s localhost:8080",
	"git log -S 'sudo ' --oneline",
	"echo a && { fail || git status; } && make",
	"for f in $(ls src); do wc -l src/$f; done",
	"ls > out.txt 2> err.txt < /dev/null",
	"ls 2>&1 >/dev/null | grep warn",
	"exec 3>log3.txt; git status >&3",
	/* quoting and expansion corners */
	"ls \"a\"'b'\\c\"$HOME\"x",
	"ls a\\ b 'c d' \"e f\"",
	"git commit -m \"$(echo 'multi word')\"",
	"ls \"$(echo a b)\" $(echo c d)",
	"ls \\$HOME '$HOME' \"\\$HOME\"",
	"ls \"\\\\\" \"\\a\" '\\a'",
	"ls \"$(echo \"inner quote\")\"",
	"ls `echo \\$HOME`",
	"ls ${HOME}x${USER}",
	"ls a#b #c",
	"ls if then fi do done",
	"ls -- -x; git log -- '*.c'",
	"cat < a.c > out.txt 2>> err.txt",
	"cat <<-EOF\n\t$(git rev-parse HEAD)\n\tEOF\nmake",
	"{ ls; } | wc",
	"ls a.c && { git status || make; }",
	"case x in (x) ls;; esac",
	"for f in \"a b\" c; do ls \"$f\"; done",
	"x=\"a  b\"; ls \"$x\" $x",
	"ls $HOME/d*",
	"ls */*.c [!a].c *.{c,h}",
	"ls $(echo '*.c')",
	"y=`echo \\`echo deep\\``; ls $y",
	"ls \"`echo \\\"q\\\"`\"",
	"FOO=bar env | grep FOO",
	"ls 2>/dev/null >&2 3>&1",
	/* a here-document pending across a $(…) that spans lines: its body is
	 * read after the line the substitution ends on, as dash does */
	"cat <<EOF; echo $(\nEOF\n) \ngit status\nEOF\nmake",
};

#define N_CORPUS (sizeof(corpus) / sizeof(corpus[0]))

/* dash's builtins: never recorded. */
static const char *const builtins[] = {
	".", ":", "[", "alias", "bg", "break", "cd", "chdir", "command", "continue", "echo", "eval",
	"exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill", "local",
	"printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "times", "trap", "true",
	"type", "ulimit", "umask", "unalias", "unset", "wait", NULL,
};

static bool is_builtin(const char *s)
{
	for (const char *const *b = builtins; *b; b++)
		if (strcmp(s, *b) == 0)
			return true;
	return false;
}

/* ---- a list of strings ---- */

struct sl {
	char **v;
	size_t n, cap;
};

static void sl_add(struct sl *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		ck_assert_ptr_nonnull(l->v);
	}
	l->v[l->n++] = s;
}

static void sl_free(struct sl *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One record: the arguments joined by " | " markers that cannot be typed. */
static char *join(char **argv, size_t n)
{
	size_t len = 1, i;
	char *s;

	for (i = 0; i < n; i++)
		len += strlen(argv[i]) + 3;
	s = calloc(1, len);
	for (i = 0; i < n; i++) {
		if (i)
			strcat(s, " \x1f ");
		strcat(s, argv[i]);
	}
	return s;
}

/* ---- the interpreter ---- */

struct ev {
	struct sl rec;      /* records */
	struct sl vars;     /* NAME=value */
	struct sl pos;      /* positional parameters */
	struct {
		const char *name;
		const struct ward_sh_node *body;
	} funcs[16];
	int n_funcs;
	int status;
	int sub_status;     /* status of the last $(…) in the current command */
	char *cap;          /* output of builtins while capturing $(…) */
	size_t cap_len;
	bool capturing;
	char why[256];      /* what the interpreter cannot follow (a test bug) */
};

static const char *var_get(struct ev *e, const char *name)
{
	size_t n = strlen(name);

	if (name[0] >= '1' && name[0] <= '9' && !name[1]) {
		size_t k = (size_t)(name[0] - '1');

		return k < e->pos.n ? e->pos.v[k] : NULL;
	}
	for (size_t i = e->vars.n; i-- > 0;)
		if (strncmp(e->vars.v[i], name, n) == 0 && e->vars.v[i][n] == '=')
			return e->vars.v[i] + n + 1;
	return NULL;
}

static void var_set(struct ev *e, const char *kv)
{
	sl_add(&e->vars, strdup(kv));
}

static void unsupported(struct ev *e, const char *what, size_t off)
{
	if (!e->why[0])
		snprintf(e->why, sizeof(e->why), "the test's interpreter does not follow %s at %zu",
			 what, off + 1);
}

static void run_node(struct ev *e, const struct ward_sh_node *n);

/* Expanded characters and how each may be treated. */
enum { CQ = 0, CU = 1, CE = 2 }; /* quoted, unquoted literal, unquoted expansion */

struct xw {
	char *c;
	char *f;
	size_t n, cap;
	bool quoted; /* some of the word was quoted (an empty result is kept) */
};

static void xw_put(struct xw *x, const char *s, size_t len, char flag)
{
	if (x->n + len + 1 > x->cap) {
		x->cap = (x->n + len + 1) * 2;
		x->c = realloc(x->c, x->cap);
		x->f = realloc(x->f, x->cap);
	}
	memcpy(x->c + x->n, s, len);
	memset(x->f + x->n, flag, len);
	x->n += len;
	x->c[x->n] = '\0';
}

static char *run_capture(struct ev *e, const struct ward_sh_node *sub)
{
	bool saved_cap = e->capturing;
	char *saved_buf = e->cap;
	size_t saved_len = e->cap_len;
	struct sl saved_vars = e->vars;
	char *out;

	/* a subshell: variables set inside do not come back */
	memset(&e->vars, 0, sizeof(e->vars));
	for (size_t i = 0; i < saved_vars.n; i++)
		var_set(e, saved_vars.v[i]);
	e->capturing = true;
	e->cap = calloc(1, 1);
	e->cap_len = 0;
	run_node(e, sub);
	out = e->cap;
	while (e->cap_len && out[e->cap_len - 1] == '\n')
		out[--e->cap_len] = '\0';
	sl_free(&e->vars);
	e->vars = saved_vars;
	e->capturing = saved_cap;
	e->cap = saved_buf;
	e->cap_len = saved_len;
	e->sub_status = e->status;
	return out;
}

static void expand_parts(struct ev *e, const struct ward_sh_word *w, struct xw *x);

static void expand_part(struct ev *e, const struct ward_sh_part *pt, struct xw *x)
{
	char flag;

	switch (pt->kind) {
	case WARD_SH_P_LITERAL:
		if (pt->quote != WARD_SH_Q_NONE)
			x->quoted = true;
		xw_put(x, pt->text, pt->text_len, pt->quote == WARD_SH_Q_NONE ? CU : CQ);
		return;
	case WARD_SH_P_GLOB:
		xw_put(x, pt->text, pt->text_len, CU);
		return;
	case WARD_SH_P_TILDE:
		if (pt->text[0]) {
			unsupported(e, "~user", pt->off);
			return;
		}
		xw_put(x, var_get(e, "HOME"), strlen(var_get(e, "HOME")), CQ);
		return;
	case WARD_SH_P_PARAM: {
		const char *v = var_get(e, pt->text);

		flag = pt->quote == WARD_SH_Q_NONE ? CE : CQ;
		if (flag == CQ)
			x->quoted = true;
		if (strcmp(pt->op, ":-") == 0) {
			if (!v || !*v) {
				expand_parts(e, pt->arg, x);
				return;
			}
		} else if (pt->op[0]) {
			unsupported(e, "this parameter operator", pt->off);
			return;
		}
		if (strcmp(pt->text, "@") == 0 || strcmp(pt->text, "#") == 0 ||
		    strcmp(pt->text, "?") == 0 || strcmp(pt->text, "$") == 0) {
			unsupported(e, "a special parameter", pt->off);
			return;
		}
		if (v)
			xw_put(x, v, strlen(v), flag);
		return;
	}
	case WARD_SH_P_CMDSUB: {
		char *out = run_capture(e, pt->sub);

		flag = pt->quote == WARD_SH_Q_NONE ? CE : CQ;
		if (flag == CQ)
			x->quoted = true;
		xw_put(x, out, strlen(out), flag);
		free(out);
		return;
	}
	default:
		unsupported(e, "arithmetic or process substitution", pt->off);
	}
}

static void expand_parts(struct ev *e, const struct ward_sh_word *w, struct xw *x)
{
	for (size_t i = 0; i < w->n_parts; i++)
		expand_part(e, &w->parts[i], x);
}

/* One field: glob it if it has active pattern characters. */
static void field_out(const char *c, const char *f, size_t n, struct sl *out)
{
	bool active = false;
	size_t i;

	for (i = 0; i < n; i++)
		if (f[i] != CQ && (c[i] == '*' || c[i] == '?' || c[i] == '['))
			active = true;
	if (active) {
		char *pat = malloc(2 * n + 1);
		size_t k = 0;
		glob_t g;

		for (i = 0; i < n; i++) {
			if (f[i] == CQ || c[i] == '\\')
				pat[k++] = '\\';
			pat[k++] = c[i];
		}
		pat[k] = '\0';
		if (glob(pat, 0, NULL, &g) == 0) {
			for (i = 0; i < g.gl_pathc; i++)
				sl_add(out, strdup(g.gl_pathv[i]));
			globfree(&g);
			free(pat);
			return;
		}
		free(pat);
	}
	sl_add(out, strndup(c, n));
}

/* A word into fields: field splitting of unquoted expansions on blanks,
 * globbing, and the empty unquoted word dropped. */
static void expand_fields(struct ev *e, const struct ward_sh_word *w, struct sl *out)
{
	struct xw x = { 0 };
	size_t i, start = 0;
	bool have = false;

	xw_put(&x, "", 0, CQ);
	expand_parts(e, w, &x);
	for (i = 0; i <= x.n; i++) {
		bool sep = i < x.n && x.f[i] == CE && strchr(" \t\n", x.c[i]);

		if (i == x.n || sep) {
			if (i > start || (i == x.n && !have && x.quoted))
				field_out(x.c + start, x.f + start, i - start, out), have = true;
			start = i + 1;
		}
	}
	free(x.c);
	free(x.f);
}

/* A word as one string (assignments, case subjects, redirect targets). */
static char *expand_str(struct ev *e, const struct ward_sh_word *w)
{
	struct xw x = { 0 };

	xw_put(&x, "", 0, CQ);
	expand_parts(e, w, &x);
	free(x.f);
	return x.c;
}

/* A case pattern: the quoted characters escaped. */
static char *expand_pattern(struct ev *e, const struct ward_sh_word *w)
{
	struct xw x = { 0 };
	char *p;
	size_t k = 0;

	xw_put(&x, "", 0, CQ);
	expand_parts(e, w, &x);
	p = malloc(2 * x.n + 1);
	for (size_t i = 0; i < x.n; i++) {
		if (x.f[i] == CQ || x.c[i] == '\\')
			p[k++] = '\\';
		p[k++] = x.c[i];
	}
	p[k] = '\0';
	free(x.c);
	free(x.f);
	return p;
}

static void cap_out(struct ev *e, const char *s)
{
	size_t n = strlen(s);

	if (!e->capturing)
		return;
	e->cap = realloc(e->cap, e->cap_len + n + 1);
	memcpy(e->cap + e->cap_len, s, n + 1);
	e->cap_len += n;
}

static int builtin_test(struct ev *e, char **a, size_t n, size_t off)
{
	struct stat st;

	if (n == 2 && strcmp(a[0], "-f") == 0)
		return stat(a[1], &st) == 0 && S_ISREG(st.st_mode) ? 0 : 1;
	if (n == 2 && strcmp(a[0], "-d") == 0)
		return stat(a[1], &st) == 0 && S_ISDIR(st.st_mode) ? 0 : 1;
	if (n == 2 && strcmp(a[0], "-n") == 0)
		return a[1][0] ? 0 : 1;
	if (n == 2 && strcmp(a[0], "-z") == 0)
		return a[1][0] ? 1 : 0;
	if (n == 3 && strcmp(a[1], "=") == 0)
		return strcmp(a[0], a[2]) == 0 ? 0 : 1;
	unsupported(e, "this test expression", off);
	return 2;
}

static void run_simple(struct ev *e, const struct ward_sh_node *n)
{
	struct sl argv = { 0 };
	size_t i;

	e->sub_status = 0;
	for (i = 0; i < n->n_words; i++)
		expand_fields(e, &n->words[i], &argv);
	for (i = 0; i < n->n_redirs; i++) {
		const struct ward_sh_redir *r = &n->redirs[i];

		if (r->op == WARD_SH_R_HEREDOC) {
			if (!r->quoted_delim)
				free(expand_str(e, &r->body));
		} else {
			free(expand_str(e, &r->target));
		}
	}
	if (argv.n == 0) {
		for (i = 0; i < n->n_assigns; i++) {
			char *kv = expand_str(e, &n->assigns[i]);

			var_set(e, kv);
			free(kv);
		}
		e->status = e->sub_status;
		sl_free(&argv);
		return;
	}
	const char *cmd = argv.v[0];

	for (int f = 0; f < e->n_funcs; f++) {
		if (strcmp(cmd, e->funcs[f].name) == 0) {
			struct sl saved = e->pos;

			memset(&e->pos, 0, sizeof(e->pos));
			for (i = 1; i < argv.n; i++)
				sl_add(&e->pos, strdup(argv.v[i]));
			run_node(e, e->funcs[f].body);
			sl_free(&e->pos);
			e->pos = saved;
			sl_free(&argv);
			return;
		}
	}
	if (is_builtin(cmd)) {
		e->status = 0;
		if (strcmp(cmd, "false") == 0) {
			e->status = 1;
		} else if (strcmp(cmd, "read") == 0) {
			e->status = 1; /* stdin is /dev/null */
		} else if (strcmp(cmd, "echo") == 0) {
			for (i = 1; i < argv.n; i++) {
				cap_out(e, argv.v[i]);
				cap_out(e, i + 1 < argv.n ? " " : "");
			}
			cap_out(e, "\n");
		} else if (strcmp(cmd, "export") == 0 || strcmp(cmd, "readonly") == 0) {
			for (i = 1; i < argv.n; i++)
				if (strchr(argv.v[i], '='))
					var_set(e, argv.v[i]);
		} else if (strcmp(cmd, "test") == 0) {
			e->status = builtin_test(e, argv.v + 1, argv.n - 1, n->off);
		} else if (strcmp(cmd, "[") == 0) {
			e->status = builtin_test(e, argv.v + 1, argv.n - 2, n->off);
		} else if (strcmp(cmd, "printf") == 0 && !e->capturing) {
		} else if (strcmp(cmd, "cd") == 0 || strcmp(cmd, "set") == 0 ||
			   strcmp(cmd, ":") == 0 || strcmp(cmd, "true") == 0 ||
			   (strcmp(cmd, "exec") == 0 && argv.n == 1)) {
		} else {
			unsupported(e, "this builtin", n->off);
		}
		sl_free(&argv);
		return;
	}
	sl_add(&e->rec, join(argv.v, argv.n));
	{
		const char *base = strrchr(cmd, '/');

		e->status = strcmp(base ? base + 1 : cmd, "fail") == 0 ? 1 : 0;
	}
	sl_free(&argv);
}

static void run_node(struct ev *e, const struct ward_sh_node *n)
{
	size_t i, j;

	if (e->why[0])
		return;
	for (i = 0; n->kind != WARD_SH_SIMPLE && i < n->n_redirs; i++)
		free(expand_str(e, &n->redirs[i].target));
	switch (n->kind) {
	case WARD_SH_SIMPLE:
		run_simple(e, n);
		return;
	case WARD_SH_LIST:
		e->status = 0;
		for (i = 0; i < n->n_kids; i++) {
			if (n->ops[i] == WARD_SH_OP_AMP)
				unsupported(e, "&", n->op_offs[i]);
			run_node(e, n->kids[i]);
		}
		return;
	case WARD_SH_AND_OR:
		run_node(e, n->kids[0]);
		for (i = 1; i < n->n_kids; i++)
			if ((n->ops[i - 1] == WARD_SH_OP_AND) == (e->status == 0))
				run_node(e, n->kids[i]);
		return;
	case WARD_SH_PIPELINE:
		for (i = 0; i < n->n_kids; i++) {
			struct sl saved = e->vars;

			/* every part of a pipeline is a subshell in dash */
			memset(&e->vars, 0, sizeof(e->vars));
			for (j = 0; j < saved.n; j++)
				var_set(e, saved.v[j]);
			run_node(e, n->kids[i]);
			sl_free(&e->vars);
			e->vars = saved;
		}
		if (n->bang)
			e->status = e->status == 0 ? 1 : 0;
		return;
	case WARD_SH_SUBSHELL: {
		struct sl saved = e->vars;

		memset(&e->vars, 0, sizeof(e->vars));
		for (j = 0; j < saved.n; j++)
			var_set(e, saved.v[j]);
		run_node(e, n->kids[0]);
		sl_free(&e->vars);
		e->vars = saved;
		return;
	}
	case WARD_SH_BRACE:
		run_node(e, n->kids[0]);
		return;
	case WARD_SH_IF:
		for (i = 0; i + 1 < n->n_kids; i += 2) {
			run_node(e, n->kids[i]);
			if (e->status == 0) {
				run_node(e, n->kids[i + 1]);
				return;
			}
		}
		if (n->has_else)
			run_node(e, n->kids[n->n_kids - 1]);
		else
			e->status = 0;
		return;
	case WARD_SH_FOR: {
		struct sl items = { 0 };
		char kv[512];

		if (!n->has_in) {
			unsupported(e, "for without in", n->off);
			return;
		}
		for (i = 0; i < n->n_words; i++)
			expand_fields(e, &n->words[i], &items);
		for (i = 0; i < items.n; i++) {
			snprintf(kv, sizeof(kv), "%s=%s", n->name->text, items.v[i]);
			var_set(e, kv);
			run_node(e, n->kids[0]);
		}
		sl_free(&items);
		return;
	}
	case WARD_SH_WHILE:
	case WARD_SH_UNTIL:
		for (i = 0; i < 5; i++) {
			run_node(e, n->kids[0]);
			if ((e->status == 0) != (n->kind == WARD_SH_WHILE))
				break;
			run_node(e, n->kids[1]);
		}
		if (i == 5)
			unsupported(e, "a loop that does not end", n->off);
		e->status = 0;
		return;
	case WARD_SH_CASE: {
		char *subj = expand_str(e, n->subject);

		e->status = 0;
		for (i = 0; i < n->n_items; i++) {
			for (j = 0; j < n->items[i].n_patterns; j++) {
				char *pat = expand_pattern(e, &n->items[i].patterns[j]);
				bool m = fnmatch(pat, subj, 0) == 0;

				free(pat);
				if (m) {
					run_node(e, n->items[i].body);
					free(subj);
					return;
				}
			}
		}
		free(subj);
		return;
	}
	case WARD_SH_FUNCTION:
		e->funcs[e->n_funcs].name = n->name->text;
		e->funcs[e->n_funcs++].body = n->kids[0];
		e->status = 0;
		return;
	case WARD_SH_COND:
	case WARD_SH_ARITH:
	case WARD_SH_ARITH_FOR:
	case WARD_SH_SELECT:
	case WARD_SH_COPROC:
		unsupported(e, ward_sh_kind_name(n->kind), n->off);
		return;
	}
}

/* ---- running dash ---- */

static const char *const files[] = {
	"a.c", "b.c", "main.py", "README.md", "data.txt", "data.csv", "list.txt", "VERSION",
	"pattern.txt", "msg.txt", "package.json", "requirements.txt", "a file.txt", "app.log",
	"src/x.c", "src/y.h", "docs/guide.md", "home/docs/notes.txt", "home/.profile", NULL,
};

static void make_tree(const char *dir, const char *recorder, struct sl *names)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/work", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	for (const char *const *f = files; *f; f++) {
		snprintf(p, sizeof(p), "%s/work/%s", dir, *f);
		for (char *s = strchr(p + strlen(dir) + 6, '/'); s; s = strchr(s + 1, '/')) {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, "x\n", 2), 2);
		close(fd);
	}
	snprintf(p, sizeof(p), "%s/work/script.sh", dir);
	ck_assert_int_eq(symlink(recorder, p), 0);
	snprintf(p, sizeof(p), "%s/bin", dir);
	mkdir(p, 0755);
	for (size_t i = 0; i < names->n; i++) {
		snprintf(p, sizeof(p), "%s/bin/%s", dir, names->v[i]);
		if (symlink(recorder, p) < 0)
			ck_assert_int_eq(errno, EEXIST);
	}
}

/* Records of the log: "ARGC\0ARG0\0…" each. */
static void read_log(const char *path, struct sl *out)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, i = 0;

	if (!f)
		return;
	{
		char chunk[4096];
		size_t r;

		while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			buf = realloc(buf, len + r + 1);
			memcpy(buf + len, chunk, r);
			len += r;
		}
	}
	fclose(f);
	while (i < len) {
		int argc = atoi(buf + i);
		char **argv = calloc((size_t)argc + 1, sizeof(*argv));

		i += strlen(buf + i) + 1;
		for (int k = 0; k < argc && i < len; k++) {
			argv[k] = buf + i;
			i += strlen(buf + i) + 1;
		}
		sl_add(out, join(argv, (size_t)argc));
		free(argv);
	}
	free(buf);
}

static int name_of(const struct ward_sh_node *n, const struct ward_sh_visit_info *info, void *data)
{
	struct sl *names = data;

	if (n->n_words && !strchr(n->words[0].text, '/') && !is_builtin(n->words[0].text) &&
	    !(n->words[0].flags & WARD_SH_W_DYNAMIC))
		sl_add(names, strdup(n->words[0].text));
	return 0;
}

START_TEST(test_agree)
{
	const char *cmd = corpus[_i];
	struct ward_sh_tree *t = NULL;
	struct ward_error *err = NULL;
	struct sl names = { 0 }, actual = { 0 };
	struct ev e = { 0 };
	char *dir = harness_tmpdir(), *recorder = harness_path("tests/helpers/argv-recorder");
	char work[4096], log[4096], home[4096], path[4096];
	int status;
	pid_t pid;

	ck_assert_msg(ward_sh_parse(cmd, strlen(cmd), WARD_SH_POSIX, &t, &err) == 0, "'%s': %s", cmd,
		      err ? err->message : "?");
	ward_sh_visit_commands(t, name_of, &names);
	sl_add(&names, strdup("fail"));
	make_tree(dir, recorder, &names);
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(home, sizeof(home), "%s/work/home", dir);
	snprintf(path, sizeof(path), "%s/bin", dir);

	/* dash, for real */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *env[] = { NULL, NULL, NULL, "USER=agent", "LC_ALL=C", NULL, NULL };
		int fd = open("/dev/null", O_RDWR);

		ck_assert_int_ge(asprintf(&env[0], "PATH=%s", path), 0);
		ck_assert_int_ge(asprintf(&env[1], "HOME=%s", home), 0);
		ck_assert_int_ge(asprintf(&env[2], "WARD_RECORD_LOG=%s", log), 0);
		ck_assert_int_ge(asprintf(&env[5], "PWD=%s", work), 0);
		if (chdir(work) < 0)
			_exit(97);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execle("/bin/dash", "dash", "-c", cmd, (char *)NULL, env);
		_exit(96);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) < 96, "'%s': dash status %d", cmd,
		      status);
	read_log(log, &actual);

	/* the parser's reading of it */
	ck_assert_int_eq(chdir(work), 0);
	{
		char kv[4200];

		snprintf(kv, sizeof(kv), "HOME=%s", home);
		var_set(&e, kv);
		var_set(&e, "USER=agent");
		snprintf(kv, sizeof(kv), "PWD=%s", work);
		var_set(&e, kv);
	}
	run_node(&e, t->root);
	ck_assert_msg(!e.why[0], "'%s': %s", cmd, e.why);

	if (actual.n)
		qsort(actual.v, actual.n, sizeof(*actual.v), cmpstr);
	if (e.rec.n)
		qsort(e.rec.v, e.rec.n, sizeof(*e.rec.v), cmpstr);
	{
		char got[8192] = "", want[8192] = "";

		for (size_t i = 0; i < actual.n; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "[%s] ", actual.v[i]);
		for (size_t i = 0; i < e.rec.n; i++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "[%s] ", e.rec.v[i]);
		ck_assert_msg(strcmp(got, want) == 0, "'%s':\n  dash ran:     %s\n  parser found: %s", cmd,
			      got, want);
	}
	sl_free(&names);
	sl_free(&actual);
	sl_free(&e.rec);
	sl_free(&e.vars);
	ward_sh_tree_free(t);
	harness_rmtree(dir);
	free(dir);
	free(recorder);
}
END_TEST

/* ---- bash (ward run --shell bash) ---- */

/* Bash strings of the kind agents write, in the dialect ward parses for
 * --shell bash. bash runs each with the recorder under every name the parser
 * found and as command_not_found_handle (so a program the parser missed is
 * recorded too); the programs bash ran must be the programs the parser found. */
static const char *const bash_corpus[] = {
	"git status && git diff --stat",
	"diff <(sort a.c) <(sort b.c); wait",
	"grep -c x <<< \"$(cat a.c)\"",
	"cat a.c |& tee out.log",
	"make &> build.log; tail -n 3 build.log",
	"make &>> build.log",
	"[[ -f a.c && -n $HOME ]] && wc -l a.c",
	"[[ a.c == *.c ]] && ls a.c",
	"[[ abc =~ ^a(b)c$ ]] && echo matched | tr a-z A-Z",
	"x=src/x.c; ls \"${x%/*}\" \"${x##*/}\"",
	"x=aXa; echo ${x//a/b} | sed s/X/Y/",
	"x=abc; echo ${x^^} ${x:1:1} ${#x} | wc -c",
	"f=main.py; python3 \"${f/.py/}.py\"",
	"function build { make -j2; }; build",
	"function t() { pytest -q \"$@\"; }; t tests",
	"echo $'a\\tb' | cut -f2",
	"printf '%s\\n' {a,b}.c | xargs ls",
	"ls {a,b}.c",
	"cat >(wc -l) < a.c; wait",
	"for f in *.c; do gcc -c \"$f\"; done",
	"while read -r l; do grep -q x \"$l\"; done < list.txt",
	"case a.c in *.c) gcc -c a.c ;; *) true ;; esac",
	"if command -v node >/dev/null; then node -v; else true; fi",
	"set -euo pipefail; make test",
	"export NODE_ENV=test && npm test",
	"cd src && ls && cd - >/dev/null",
	"(cd docs && ls) && git log -1",
	"{ make; make test; } 2>&1 | tee log",
	"time make",
	"git log --format=%H -1 | head -c 7",
	"out=$(git rev-parse HEAD) && echo \"$out\" | cut -c1-7",
	"echo \"v$(cat VERSION)\" > tag.txt && cat tag.txt",
	"declare -x A=1; env | grep -c A=",
	"local_x=1; let local_x+=1; echo $local_x | cat",
	"shopt -s nullglob; ls *.c",
	"source /dev/null; ls",
	"touch tmp.txt; trap - EXIT",
	"timeout 5 make test",
	"nice -n 5 make",
	"find . -name '*.c' -exec wc -l {} +",
	"git diff --name-only | grep -E '\\.c$' | xargs -r wc -l",
	"python3 -m pytest -x -q 2>&1 | tail -n 5",
	"npm ci && npm run build -- --prod",
	"docker build -t app . && docker run --rm app",
	"curl -fsSL -o out.json http://localhost:1/x || true",
	"sed -i.bak 's/a/b/' a.c && rm a.c.bak",
	"mkdir -p out && cd src && cmake .. && make",
	"ls -la | awk '{print $9}' | sort -u",
	"kill -0 $$ && echo alive | cat",
	"ps aux | grep -v grep | grep -c node",
	/* the bash constructs around ordinary tools: arrays as the program,
	 * (( )), for ((…)), [[ =~ ]], coproc, time { }, |&, &>>, mapfile,
	 * ${…} operators, <<<, extglob, functions (tests/… generated once from
	 * a list of tools and these templates, then kept as text) */
	"a=(git status); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do git status; done",
	"(( n = 2 + 3 )) && git status",
	"[[ -f a.c && $HOME =~ ^/ ]] && make -j2",
	"coproc make -j2; wait",
	"time { make -j2; } 2>&1",
	"npm test |& cat",
	"npm test &>> build.log",
	"declare -a opts=(test); npm \"${opts[@]}\"",
	"mapfile -t lines < <(pytest -q); echo \"${#lines[@]}\"",
	"x=$(pytest -q); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"pytest -q <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then cargo build --release; fi",
	"declare -A m=([k]=v); cargo build --release \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; cargo build --release",
	"function f { go test ./... \"$@\"; }; f x",
	"cmd=(go test ./...); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do go test ./...; done",
	"diff <(ls -la src) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do ls -la src; done",
	"a=(ls -la src); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do grep -rn TODO src; done",
	"(( n = 2 + 3 )) && grep -rn TODO src",
	"[[ -f a.c && $HOME =~ ^/ ]] && grep -rn TODO src",
	"coproc wc -l a.c; wait",
	"time { wc -l a.c; } 2>&1",
	"wc -l a.c |& cat",
	"sort data.txt &>> build.log",
	"declare -a opts=(data.txt); sort \"${opts[@]}\"",
	"mapfile -t lines < <(sort data.txt); echo \"${#lines[@]}\"",
	"x=$(head -n 3 data.csv); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"head -n 3 data.csv <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then head -n 3 data.csv; fi",
	"declare -A m=([k]=v); tail -n 2 app.log \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; tail -n 2 app.log",
	"function f { tail -n 2 app.log \"$@\"; }; f x",
	"cmd=(cut -d, -f1 data.csv); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do cut -d, -f1 data.csv; done",
	"diff <(cut -d, -f1 data.csv) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do jq .name package.json; done",
	"a=(jq .name package.json); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do jq .name package.json; done",
	"(( n = 2 + 3 )) && python3 main.py",
	"[[ -f a.c && $HOME =~ ^/ ]] && python3 main.py",
	"coproc python3 main.py; wait",
	"time { node -v; } 2>&1",
	"node -v |& cat",
	"node -v &>> build.log",
	"declare -a opts=(ps); docker \"${opts[@]}\"",
	"mapfile -t lines < <(docker ps); echo \"${#lines[@]}\"",
	"x=$(docker ps); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"gcc -c a.c -o a.o <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then gcc -c a.c -o a.o; fi",
	"declare -A m=([k]=v); gcc -c a.c -o a.o \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; clang-format -i a.c",
	"function f { clang-format -i a.c \"$@\"; }; f x",
	"cmd=(clang-format -i a.c); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do black main.py; done",
	"diff <(black main.py) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do black main.py; done",
	"a=(ruff check .); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do ruff check .; done",
	"(( n = 2 + 3 )) && ruff check .",
	"[[ -f a.c && $HOME =~ ^/ ]] && eslint src",
	"coproc eslint src; wait",
	"time { eslint src; } 2>&1",
	"tsc --noEmit |& cat",
	"tsc --noEmit &>> build.log",
	"declare -a opts=(--noEmit); tsc \"${opts[@]}\"",
	"mapfile -t lines < <(mvn -q test); echo \"${#lines[@]}\"",
	"x=$(mvn -q test); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"mvn -q test <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then gradle build; fi",
	"declare -A m=([k]=v); gradle build \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; gradle build",
	"function f { rustc --version \"$@\"; }; f x",
	"cmd=(rustc --version); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do rustc --version; done",
	"diff <(cmake --build build) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do cmake --build build; done",
	"a=(cmake --build build); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do ninja -C build; done",
	"(( n = 2 + 3 )) && ninja -C build",
	"[[ -f a.c && $HOME =~ ^/ ]] && ninja -C build",
	"coproc shellcheck script.sh; wait",
	"time { shellcheck script.sh; } 2>&1",
	"shellcheck script.sh |& cat",
	"yamllint . &>> build.log",
	"declare -a opts=(.); yamllint \"${opts[@]}\"",
	"mapfile -t lines < <(yamllint .); echo \"${#lines[@]}\"",
	"x=$(terraform plan); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"terraform plan <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then terraform plan; fi",
	"declare -A m=([k]=v); kubectl get pods \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; kubectl get pods",
	"function f { kubectl get pods \"$@\"; }; f x",
	"cmd=(helm list); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do helm list; done",
	"diff <(helm list) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do pip install -r requirements.txt; done",
	"a=(pip install -r requirements.txt); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do pip install -r requirements.txt; done",
	"(( n = 2 + 3 )) && poetry install",
	"[[ -f a.c && $HOME =~ ^/ ]] && poetry install",
	"coproc poetry install; wait",
	"time { uv sync; } 2>&1",
	"uv sync |& cat",
	"uv sync &>> build.log",
	"declare -a opts=(exec rake); bundle \"${opts[@]}\"",
	"mapfile -t lines < <(bundle exec rake); echo \"${#lines[@]}\"",
	"x=$(bundle exec rake); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"rspec spec <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then rspec spec; fi",
	"declare -A m=([k]=v); rspec spec \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; phpunit tests",
	"function f { phpunit tests \"$@\"; }; f x",
	"cmd=(phpunit tests); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do composer install; done",
	"diff <(composer install) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do composer install; done",
	"a=(dotnet build); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do dotnet build; done",
	"(( n = 2 + 3 )) && dotnet build",
	"[[ -f a.c && $HOME =~ ^/ ]] && swift build",
	"coproc swift build; wait",
	"time { swift build; } 2>&1",
	"zig build |& cat",
	"zig build &>> build.log",
	"declare -a opts=(build); zig \"${opts[@]}\"",
	"mapfile -t lines < <(deno test); echo \"${#lines[@]}\"",
	"x=$(deno test); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"deno test <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then bun test; fi",
	"declare -A m=([k]=v); bun test \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; bun test",
	"function f { yarn lint \"$@\"; }; f x",
	"cmd=(yarn lint); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do yarn lint; done",
	"diff <(pnpm build) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do pnpm build; done",
	"a=(pnpm build); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do tox -q; done",
	"(( n = 2 + 3 )) && tox -q",
	"[[ -f a.c && $HOME =~ ^/ ]] && tox -q",
	"coproc mypy main.py; wait",
	"time { mypy main.py; } 2>&1",
	"mypy main.py |& cat",
	"pylint main.py &>> build.log",
	"declare -a opts=(main.py); pylint \"${opts[@]}\"",
	"mapfile -t lines < <(pylint main.py); echo \"${#lines[@]}\"",
	"x=$(flake8 main.py); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"flake8 main.py <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then flake8 main.py; fi",
	"declare -A m=([k]=v); isort main.py \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; isort main.py",
	"function f { isort main.py \"$@\"; }; f x",
	"cmd=(prettier --check src); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do prettier --check src; done",
	"diff <(prettier --check src) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do hadolint Dockerfile; done",
	"a=(hadolint Dockerfile); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do hadolint Dockerfile; done",
	"(( n = 2 + 3 )) && pre-commit run --all-files",
	"[[ -f a.c && $HOME =~ ^/ ]] && pre-commit run --all-files",
	"coproc pre-commit run --all-files; wait",
	"time { git diff --stat; } 2>&1",
	"git diff --stat |& cat",
	"git diff --stat &>> build.log",
	"declare -a opts=(log -1 --oneline); git \"${opts[@]}\"",
	"mapfile -t lines < <(git log -1 --oneline); echo \"${#lines[@]}\"",
	"x=$(git log -1 --oneline); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"diff a.c b.c <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then diff a.c b.c; fi",
	"declare -A m=([k]=v); diff a.c b.c \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; cmp a.c b.c",
	"function f { cmp a.c b.c \"$@\"; }; f x",
	"cmd=(cmp a.c b.c); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do md5sum a.c; done",
	"diff <(md5sum a.c) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do md5sum a.c; done",
	"a=(sha256sum a.c b.c); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do sha256sum a.c b.c; done",
	"(( n = 2 + 3 )) && sha256sum a.c b.c",
	"[[ -f a.c && $HOME =~ ^/ ]] && du -sh src",
	"coproc du -sh src; wait",
	"time { du -sh src; } 2>&1",
	"tar czf out.tgz src |& cat",
	"tar czf out.tgz src &>> build.log",
	"declare -a opts=(czf out.tgz src); tar \"${opts[@]}\"",
	"mapfile -t lines < <(zip -r out.zip docs); echo \"${#lines[@]}\"",
	"x=$(zip -r out.zip docs); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"zip -r out.zip docs <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then xxd a.c; fi",
	"declare -A m=([k]=v); xxd a.c \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; xxd a.c",
	"function f { file a.c \"$@\"; }; f x",
	"cmd=(file a.c); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do file a.c; done",
	"diff <(stat a.c) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do stat a.c; done",
	"a=(stat a.c); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do sed -n 1p a.c; done",
	"(( n = 2 + 3 )) && sed -n 1p a.c",
	"[[ -f a.c && $HOME =~ ^/ ]] && sed -n 1p a.c",
	"coproc uniq list.txt; wait",
	"time { uniq list.txt; } 2>&1",
	"uniq list.txt |& cat",
	"uname -a &>> build.log",
	"declare -a opts=(-a); uname \"${opts[@]}\"",
	"mapfile -t lines < <(uname -a); echo \"${#lines[@]}\"",
	"x=$(whoami); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"whoami <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then whoami; fi",
	"declare -A m=([k]=v); nproc \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; nproc",
	"function f { nproc \"$@\"; }; f x",
	"cmd=(df -h); cmd+=(--); \"${cmd[@]}\"",
	"local_n=3; for ((j=local_n; j>1; j--)); do df -h; done",
	"diff <(df -h) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do ps aux; done",
	"a=(ps aux); \"${a[@]}\"",
	"for ((i=0; i<2; i++)); do ps aux; done",
	"(( n = 2 + 3 )) && printenv HOME",
	"[[ -f a.c && $HOME =~ ^/ ]] && printenv HOME",
	"coproc printenv HOME; wait",
	"time { date -u; } 2>&1",
	"date -u |& cat",
	"date -u &>> build.log",
	"a=(env); \"${a[@]}\"",
	"mapfile -t lines < <(env); echo \"${#lines[@]}\"",
	"x=$(env); echo \"${x:-none}\" \"${x^^}\" \"${x//a/b}\"",
	"id -u <<< \"input\"",
	"if [[ -n ${HOME:-} ]]; then id -u; fi",
	"declare -A m=([k]=v); id -u \"${m[k]}\"",
	"shopt -s extglob\nls @(a|b).c; hostname",
	"function f { hostname \"$@\"; }; f x",
	"cmd=(hostname); cmd+=(--); \"${cmd[@]}\"",
	"a=(ls -la src); ls \"${a[-1]}\" \"${a[@]:1:1}\"",
	"a=(git status); a+=(--short); \"${a[@]}\"",
	"a=(make); a+=(-j2 all); \"${a[@]}\" && \"${a[0]}\" test",
	"declare -a a=(grep -c x); \"${a[@]}\" a.c",
	"select x in a b; do ls \"$x\"; break; done <<< 1 2>/dev/null; git status",
	"shopt -s extglob\ncase a.c in @(*.c|*.h)) gcc -c a.c;; esac",
	"echo $\"hello\" | wc -c",
	"let n=2*3; seq \"$n\" | tail -n 1",
	"printf -v out '%s-%s' a b; echo \"$out\" | tr - _",
	"for ((;;)); do break; done; make",
	"[[ a.c == @(a|b).c ]] && wc -c a.c",
	"coproc W { wc -l; }; echo x >&\"${W[1]}\"; wait",
	"IFS=, read -r -a cols <<< \"a,b\"; echo \"${cols[1]}\" | cat",
	"x=src/x.c; echo \"${x@Q}\" \"${x,,}\" \"${x/#src/lib}\" \"${x/%.c/.o}\" | wc -w",
	"time -p make -j2",
	"local_n=3; for ((j=local_n; j>1; j--)); do free -m; done",
	"diff <(free -m) <(cat a.c) >/dev/null; wait",
	"i=0; while (( i++ < 2 )); do free -m; done",
};

#define N_BASH_CORPUS (sizeof(bash_corpus) / sizeof(bash_corpus[0]))

static bool is_bash_builtin(const char *s)
{
	static const char *const more[] = { "[[", "declare", "typeset", "let", "mapfile", "readarray",
					    "source", "shopt", "pushd", "popd", "dirs", "builtin",
					    "caller", "compgen", "complete", "disown", "enable",
					    "help", "history", "logout", "suspend", "time", NULL };

	for (const char *const *b = more; *b; b++)
		if (strcmp(s, *b) == 0)
			return true;
	return is_builtin(s);
}

static int bash_name_of(const struct ward_sh_node *n, const struct ward_sh_visit_info *info,
			void *data)
{
	struct sl *names = data;

	size_t i = 0;

	(void)info;
	/* bash's `time` keyword times the pipeline after it (the validators
	 * look through it as a wrapper) */
	while (i < n->n_words && (strcmp(n->words[i].text, "time") == 0 ||
				  strcmp(n->words[i].text, "-p") == 0))
		i++;
	if (i < n->n_words && !(n->words[i].flags & WARD_SH_W_DYNAMIC) &&
	    !is_bash_builtin(n->words[i].text)) {
		const char *b = strrchr(n->words[i].text, '/');

		sl_add(names, strdup(b ? b + 1 : n->words[i].text));
	}
	return 0;
}

/* Whether cmd defines a function name (function NAME, NAME(), NAME ()). */
static bool defines_function(const char *cmd, const char *name)
{
	char a[300], b[300], c[300];

	snprintf(a, sizeof(a), "function %s", name);
	snprintf(b, sizeof(b), "%s()", name);
	snprintf(c, sizeof(c), "%s ()", name);
	return strstr(cmd, a) || strstr(cmd, b) || strstr(cmd, c);
}

/* unique, sorted, without the names of the functions the string defines */
static void uniq_names(struct sl *l, const char *cmd)
{
	size_t i, k = 0;

	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmpstr);
	for (i = 0; i < l->n; i++) {
		char fn1[300], fn2[300];

		snprintf(fn1, sizeof(fn1), "function %s ", l->v[i]);
		snprintf(fn2, sizeof(fn2), "function %s(", l->v[i]);
		if ((k && strcmp(l->v[k - 1], l->v[i]) == 0) || strstr(cmd, fn1) || strstr(cmd, fn2)) {
			free(l->v[i]);
			continue;
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
}

START_TEST(test_agree_bash)
{
	const char *cmd = bash_corpus[_i];
	struct ward_sh_tree *t = NULL;
	struct ward_error *err = NULL;
	struct sl names = { 0 }, actual = { 0 }, progs = { 0 }, words = { 0 };
	struct ward_verdict verdict;
	char *dir = harness_tmpdir(), *recorder = harness_path("tests/helpers/argv-recorder");
	char work[4096], log[4096], home[4096], path[4096];
	int status;
	pid_t pid;

	ck_assert_msg(ward_sh_parse(cmd, strlen(cmd), 0, &t, &err) == 0, "'%s': %s", cmd,
		      err ? err->message : "?");
	ward_sh_visit_commands(t, bash_name_of, &names);
	/* what ward reports: the validators' segments, where "${a[@]}" of an
	 * array of literals is already its elements */
	ck_assert_msg(ward_validate_shell(NULL, cmd, WARD_SHELL_BASH, &verdict, &err) == 0, "'%s': %s",
		      cmd, err ? err->message : "?");
	for (size_t i = 0; i < verdict.n_segments; i++) {
		const char *a = verdict.segments[i].argv;
		size_t k = strcspn(a, " ");
		char *prog = strndup(a, k);
		const char *b = strrchr(prog, '/');

		if (verdict.segments[i].depth == 0 && k && !strpbrk(prog, "$`*?[{~\\'\"") &&
		    !is_bash_builtin(prog) && !defines_function(cmd, b ? b + 1 : prog)) {
			sl_add(&names, strdup(b ? b + 1 : prog));
			if (!strpbrk(a, "$`*?[{~(\\"))
				sl_add(&words, strdup(a));
		}
		free(prog);
	}
	ward_verdict_release(&verdict);
	make_tree(dir, recorder, &names);
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(home, sizeof(home), "%s/work/home", dir);
	snprintf(path, sizeof(path), "%s/bin", dir);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *env[] = { NULL, NULL, NULL, "USER=agent", "LC_ALL=C", NULL, NULL, NULL };
		int fd = open("/dev/null", O_RDWR);

		ck_assert_int_ge(asprintf(&env[0], "PATH=%s", path), 0);
		ck_assert_int_ge(asprintf(&env[1], "HOME=%s", home), 0);
		ck_assert_int_ge(asprintf(&env[2], "WARD_RECORD_LOG=%s", log), 0);
		ck_assert_int_ge(asprintf(&env[5], "PWD=%s", work), 0);
		/* a program the parser did not find is recorded all the same */
		ck_assert_int_ge(asprintf(&env[6], "BASH_FUNC_command_not_found_handle%%%%=() { "
					  "exec -a \"$1\" %s \"${@:2}\"; }", recorder), 0);
		if (chdir(work) < 0)
			_exit(97);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execle("/bin/bash", "bash", "-c", cmd, (char *)NULL, env);
		_exit(96);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) < 96, "'%s': bash status %d", cmd,
		      status);
	read_log(log, &actual);
	for (size_t i = 0; i < actual.n; i++) {
		const char *a0 = actual.v[i] + strspn(actual.v[i], "["), *b;
		size_t k = strcspn(a0, " ]");
		char *name = strndup(a0, k);

		b = strrchr(name, '/');
		sl_add(&progs, strdup(b ? b + 1 : name));
		free(name);
	}
	uniq_names(&progs, cmd);
	uniq_names(&names, cmd);
	{
		char got[8192] = "", want[8192] = "";

		for (size_t i = 0; i < progs.n; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ", progs.v[i]);
		for (size_t i = 0; i < names.n; i++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s ", names.v[i]);
		ck_assert_msg(strcmp(got, want) == 0, "'%s':\n  bash ran:     %s\n  parser found: %s",
			      cmd, got, want);
	}
	/* and every command whose words ward knows ran with exactly them */
	for (size_t i = 0; i < words.n; i++) {
		bool found = false;

		for (size_t k = 0; k < actual.n && !found; k++) {
			char *plain = strdup(actual.v[k]), *q;

			while ((q = strstr(plain, " \x1f ")))
				memmove(q + 1, q + 3, strlen(q + 3) + 1);
			found = strcmp(plain, words.v[i]) == 0;
			free(plain);
		}
		ck_assert_msg(found, "'%s': ward reports '%s', which bash did not run", cmd, words.v[i]);
	}
	sl_free(&words);
	sl_free(&names);
	sl_free(&actual);
	sl_free(&progs);
	ward_sh_tree_free(t);
	harness_rmtree(dir);
	free(dir);
	free(recorder);
}
END_TEST

static const char *probe_bash(void)
{
	return access("/bin/bash", X_OK) == 0 ? NULL : "/bin/bash is not installed";
}

static const char *probe_dash(void)
{
	return access("/bin/dash", X_OK) == 0 ? NULL : "/bin/dash is not installed";
}

int main(void)
{
	Suite *s = suite_create("shparse-agree");
	TCase *tc;

	harness_add_probe("dash", probe_dash);
	tc = harness_tcase(s, "agree", "dash");
	printf("# agreement corpus: %zu command lines run by /bin/sh (dash) and parsed\n", N_CORPUS);
	tcase_add_loop_test(tc, test_agree, 0, (int)N_CORPUS);
	harness_add_probe("bash", probe_bash);
	tc = harness_tcase(s, "agree-bash", "bash");
	printf("# agreement corpus: %zu command lines run by /bin/bash and parsed in its dialect\n",
	       N_BASH_CORPUS);
	tcase_add_loop_test(tc, test_agree_bash, 0, (int)N_BASH_CORPUS);
	return harness_main(s);
}
