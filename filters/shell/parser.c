/* shparse.c — the shell parser (ward/shparse.h): lexer, recursive-descent
 * parser and visitors. Pure code: everything lives in one arena per tree.
 *
 * The lexer works on characters, not on a pre-split token stream, because a
 * word's meaning depends on what is inside it: $(…) and `…` are parsed by a
 * recursive call of the parser on the same source (or, for backticks, on the
 * unescaped text with a map back to source offsets), so a substitution's
 * commands are in the tree, never skipped over by bracket counting.
 */
#include "ward/shparse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------------ */

struct block {
	struct block *next;
	size_t used, size;
	max_align_t data[];
};

struct arena {
	struct block *head;
	bool oom;
};

static void *aalloc(struct arena *a, size_t size)
{
	struct block *b = a->head;
	size_t need = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);

	if (need == 0)
		need = sizeof(max_align_t);
	if (!b || b->size - b->used < need) {
		size_t bsize = need > 16384 ? need : 16384;

		b = calloc(1, sizeof(*b) + bsize);
		if (!b) {
			a->oom = true;
			return NULL;
		}
		b->size = bsize;
		b->next = a->head;
		a->head = b;
	}
	void *r = (char *)b->data + b->used;
	b->used += need;
	return r;
}

static void arena_free(struct arena *a)
{
	struct block *b, *n;

	if (!a)
		return;
	for (b = a->head; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

/* A growable array in the arena: growing copies into a new allocation (the
 * old one is left to the arena), which at most doubles the memory used. */
struct vec {
	void *p;
	size_t n, cap, elt;
};

static void *vpush(struct arena *a, struct vec *v)
{
	if (v->n == v->cap) {
		size_t nc = v->cap ? v->cap * 2 : 4;
		void *np = aalloc(a, nc * v->elt);

		if (!np)
			return NULL;
		if (v->n)
			memcpy(np, v->p, v->n * v->elt);
		v->p = np;
		v->cap = nc;
	}
	void *r = (char *)v->p + v->n * v->elt;
	memset(r, 0, v->elt);
	v->n++;
	return r;
}

/* A growable string in the arena, always NUL-terminated when non-empty. */
struct sbuf {
	char *p;
	size_t n, cap;
};

static bool sput(struct arena *a, struct sbuf *s, const char *d, size_t len)
{
	if (s->n + len + 1 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 32;

		while (nc < s->n + len + 1)
			nc *= 2;
		char *np = aalloc(a, nc);

		if (!np)
			return false;
		if (s->n)
			memcpy(np, s->p, s->n);
		s->p = np;
		s->cap = nc;
	}
	memcpy(s->p + s->n, d, len);
	s->n += len;
	s->p[s->n] = '\0';
	return true;
}

static char *sfinish(struct arena *a, struct sbuf *s)
{
	if (!s->p) {
		char *e = aalloc(a, 1);

		if (e)
			*e = '\0';
		return e;
	}
	return s->p;
}

/* ---- parser state ------------------------------------------------------------- */

enum tk {
	T_EOF,
	T_WORD,
	T_NEWLINE,
	T_SEMI,
	T_AMP,
	T_AND,
	T_OR,
	T_PIPE,
	T_PIPE_AMP,
	T_LPAREN,
	T_RPAREN,
	T_DSEMI,
	T_SEMI_AMP,
	T_DSEMI_AMP,
	T_REDIR,
};

struct tok {
	enum tk t;
	size_t off, len;
	struct ward_sh_word *w;
	enum ward_sh_redir_op rop;
	int fd;
	bool fd_explicit;
	bool strip_tabs;
};

struct P {
	const char *s;
	size_t n;
	size_t pos;
	unsigned flags;
	struct arena *A;
	unsigned depth;
	bool failed;
	bool nomem;
	size_t err_off;
	char err_msg[200];
	struct vec hd; /* struct ward_sh_redir * awaiting their bodies */
	bool have_tok;
	struct tok tok;
};

#define BASH(p) (!((p)->flags & WARD_SH_POSIX))

static void fail(struct P *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fail(struct P *p, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	p->err_off = off;
	va_start(ap, fmt);
	vsnprintf(p->err_msg, sizeof(p->err_msg), fmt, ap);
	va_end(ap);
}

static void *palloc(struct P *p, size_t size)
{
	void *r = aalloc(p->A, size);

	if (!r && !p->failed) {
		p->nomem = true;
		fail(p, p->pos, "out of memory");
	}
	return r;
}

static int peekc(const struct P *p, size_t i)
{
	return p->pos + i < p->n ? (unsigned char)p->s[p->pos + i] : -1;
}

static bool is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool is_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* Characters that end an unquoted word. */
static bool is_delim(int c)
{
	return c < 0 || c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
	       c == '(' || c == ')' || c == '<' || c == '>';
}

static bool enter(struct P *p, size_t off)
{
	if (++p->depth > WARD_SH_MAX_DEPTH) {
		fail(p, off, "nesting too deep");
		return false;
	}
	return true;
}

/* ---- word builder --------------------------------------------------------------- */

struct wb {
	struct vec parts; /* struct ward_sh_part */
	struct sbuf text;
	struct sbuf lit;
	bool lit_open;
	enum ward_sh_quote lit_q;
	size_t lit_off, lit_end;
	unsigned flags;
	size_t off;
	/* tilde and brace-expansion tracking for unquoted text */
	bool assign_like;   /* the word so far is NAME= (tilde after = and :) */
	bool name_ok;       /* every char so far could be part of a NAME */
	unsigned brace_depth;
	bool brace_sep;
};

static void wb_init(struct wb *b, size_t off)
{
	memset(b, 0, sizeof(*b));
	b->parts.elt = sizeof(struct ward_sh_part);
	b->off = off;
	b->name_ok = true;
}

static bool wb_flush(struct P *p, struct wb *b)
{
	struct ward_sh_part *pt;

	if (!b->lit_open)
		return true;
	pt = vpush(p->A, &b->parts);
	if (!pt) {
		fail(p, p->pos, "out of memory");
		p->nomem = true;
		return false;
	}
	pt->kind = WARD_SH_P_LITERAL;
	pt->quote = b->lit_q;
	pt->off = b->lit_off;
	pt->len = b->lit_end - b->lit_off;
	pt->text_len = b->lit.n;
	pt->text = sfinish(p->A, &b->lit);
	memset(&b->lit, 0, sizeof(b->lit));
	b->lit_open = false;
	return true;
}

/* Add literal bytes d[0..len) taken from source [off, end) with quoting q. */
static void wb_lit(struct P *p, struct wb *b, enum ward_sh_quote q, const char *d, size_t len,
		   size_t off, size_t end)
{
	if (b->lit_open && b->lit_q != q)
		wb_flush(p, b);
	if (!b->lit_open) {
		b->lit_open = true;
		b->lit_q = q;
		b->lit_off = off;
	}
	b->lit_end = end;
	if (q != WARD_SH_Q_NONE)
		b->flags |= WARD_SH_W_QUOTED;
	if (!sput(p->A, &b->lit, d, len) || !sput(p->A, &b->text, d, len))
		fail(p, off, "out of memory");
}

/* Add a dynamic part; its source text goes into the word's static text. */
static struct ward_sh_part *wb_part(struct P *p, struct wb *b, enum ward_sh_part_kind kind,
				    size_t off, size_t end)
{
	struct ward_sh_part *pt;

	if (!wb_flush(p, b))
		return NULL;
	pt = vpush(p->A, &b->parts);
	if (!pt) {
		fail(p, off, "out of memory");
		return NULL;
	}
	pt->kind = kind;
	pt->off = off;
	pt->len = end - off;
	if (!sput(p->A, &b->text, p->s + off, end - off))
		fail(p, off, "out of memory");
	return pt;
}

static struct ward_sh_word *wb_finish(struct P *p, struct wb *b, struct ward_sh_word *w)
{
	if (!w)
		w = palloc(p, sizeof(*w));
	if (!w)
		return NULL;
	wb_flush(p, b);
	w->off = b->off;
	w->len = p->pos - b->off;
	w->text_len = b->text.n;
	w->text = sfinish(p->A, &b->text);
	w->flags = b->flags;
	w->parts = b->parts.p;
	w->n_parts = b->parts.n;
	return w;
}

/* ---- words ------------------------------------------------------------------------ */

enum wmode {
	WM_NORMAL,    /* an unquoted word: ends at a blank or an operator */
	WM_BRACE_ARG, /* the operand of ${NAME op word}: ends at the matching } */
	WM_ARITH,     /* $((…)): ends at the matching )) */
	WM_HEREDOC,   /* a here-document body: ends at p->n */
};

static struct ward_sh_node *parse_sub(struct P *p, size_t open_off, const char *what);
static void lex_dollar(struct P *p, struct wb *b, bool in_dq);
static void lex_backtick(struct P *p, struct wb *b, bool in_dq);
static void lex_into(struct P *p, struct wb *b, enum wmode mode);
static void read_heredocs(struct P *p);

static void lex_dq(struct P *p, struct wb *b)
{
	size_t open = p->pos;

	size_t np = b->parts.n, litn = b->lit.n;
	bool had_lit = b->lit_open;

	p->pos++;
	b->flags |= WARD_SH_W_QUOTED;
	while (!p->failed) {
		int c = peekc(p, 0);

		if (c < 0) {
			fail(p, open, "unterminated double quote");
			return;
		}
		if (c == '"') {
			/* an empty "" is still an (empty) quoted literal */
			if (b->parts.n == np && b->lit_open == had_lit && b->lit.n == litn)
				wb_lit(p, b, WARD_SH_Q_DOUBLE, "", 0, open, open + 1);
			p->pos++;
			if (b->lit_open && b->lit_q == WARD_SH_Q_DOUBLE)
				b->lit_end = p->pos;
			return;
		}
		if (c == '\\') {
			int d = peekc(p, 1);

			if (d == '\n') {
				p->pos += 2;
				continue;
			}
			if (d == '$' || d == '`' || d == '"' || d == '\\') {
				char ch = (char)d;

				wb_lit(p, b, WARD_SH_Q_DOUBLE, &ch, 1, p->pos, p->pos + 2);
				p->pos += 2;
				continue;
			}
		}
		if (c == '$') {
			lex_dollar(p, b, true);
			continue;
		}
		if (c == '`') {
			lex_backtick(p, b, true);
			continue;
		}
		wb_lit(p, b, WARD_SH_Q_DOUBLE, p->s + p->pos, 1, p->pos, p->pos + 1);
		p->pos++;
	}
}

static void lex_sq(struct P *p, struct wb *b)
{
	size_t open = p->pos;
	const char *e = memchr(p->s + open + 1, '\'', p->n - open - 1);

	if (!e) {
		fail(p, open, "unterminated single quote");
		return;
	}
	size_t close = (size_t)(e - p->s);

	wb_lit(p, b, WARD_SH_Q_SINGLE, p->s + open + 1, close - open - 1, open, close + 1);
	p->pos = close + 1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static size_t utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	if (cp > 0x10FFFF)
		cp = 0xFFFD;
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* $'…' as bash reads it. */
static void lex_ansi(struct P *p, struct wb *b)
{
	size_t open = p->pos;

	size_t np = b->parts.n, litn = b->lit.n;
	bool had_lit = b->lit_open;

	p->pos += 2;
	b->flags |= WARD_SH_W_QUOTED;
	while (!p->failed) {
		int c = peekc(p, 0);
		size_t at = p->pos;
		char out[8];
		size_t olen = 1;

		if (c < 0) {
			fail(p, open, "unterminated single quote");
			return;
		}
		if (c == '\'') {
			if (b->parts.n == np && b->lit_open == had_lit && b->lit.n == litn)
				wb_lit(p, b, WARD_SH_Q_DOLLAR, "", 0, open, open + 2);
			p->pos++;
			b->lit_end = p->pos;
			return;
		}
		if (c != '\\') {
			wb_lit(p, b, WARD_SH_Q_DOLLAR, p->s + at, 1, at, at + 1);
			p->pos++;
			continue;
		}
		int d = peekc(p, 1);

		p->pos += 2;
		switch (d) {
		case 'a': out[0] = '\a'; break;
		case 'b': out[0] = '\b'; break;
		case 'e': case 'E': out[0] = 0x1b; break;
		case 'f': out[0] = '\f'; break;
		case 'n': out[0] = '\n'; break;
		case 'r': out[0] = '\r'; break;
		case 't': out[0] = '\t'; break;
		case 'v': out[0] = '\v'; break;
		case '\\': case '\'': case '"': case '?': out[0] = (char)d; break;
		case 'c': {
			int e = peekc(p, 0);

			if (e < 0) {
				fail(p, open, "unterminated single quote");
				return;
			}
			p->pos++;
			out[0] = (char)(e & 0x1f);
			break;
		}
		case 'x': case 'u': case 'U': {
			unsigned max = d == 'x' ? 2 : d == 'u' ? 4 : 8, k;
			uint32_t v = 0;

			for (k = 0; k < max && hexval(peekc(p, 0)) >= 0; k++) {
				v = v * 16 + (uint32_t)hexval(peekc(p, 0));
				p->pos++;
			}
			if (k == 0) {
				out[0] = '\\';
				out[1] = (char)d;
				olen = 2;
			} else if (d == 'x') {
				out[0] = (char)v;
			} else {
				olen = utf8_put(out, v);
			}
			break;
		}
		default:
			if (d >= '0' && d <= '7') {
				unsigned v = (unsigned)(d - '0'), k;

				for (k = 1; k < 3 && peekc(p, 0) >= '0' && peekc(p, 0) <= '7'; k++) {
					v = v * 8 + (unsigned)(peekc(p, 0) - '0');
					p->pos++;
				}
				out[0] = (char)v;
			} else if (d < 0) {
				fail(p, open, "unterminated single quote");
				return;
			} else {
				out[0] = '\\';
				out[1] = (char)d;
				olen = 2;
			}
		}
		wb_lit(p, b, WARD_SH_Q_DOLLAR, out, olen, at, p->pos);
	}
}

/* ${…} */
static void lex_brace_param(struct P *p, struct wb *b, bool in_dq)
{
	size_t open = p->pos;
	size_t name_off, name_end;
	char op[4] = "";
	bool len_op = false;
	struct ward_sh_word *arg = NULL;
	int c;

	if (!enter(p, open))
		return;
	p->pos += 2;
	c = peekc(p, 0);
	if (c == '#' && peekc(p, 1) != '}' && (is_name_char(peekc(p, 1)) ||
					      strchr("@*#?-$!", peekc(p, 1) > 0 ? peekc(p, 1) : 'x'))) {
		len_op = true;
		p->pos++;
		c = peekc(p, 0);
	}
	if (c == '!' && BASH(p) && peekc(p, 1) != '}') {
		fail(p, open, "indirect expansion is not supported");
		return;
	}
	name_off = p->pos;
	if (is_name_start(c)) {
		while (is_name_char(peekc(p, 0)))
			p->pos++;
	} else if (c >= '0' && c <= '9') {
		while (peekc(p, 0) >= '0' && peekc(p, 0) <= '9')
			p->pos++;
	} else if (c > 0 && strchr("@*#?-$!", c)) {
		p->pos++;
	} else if (c < 0) {
		fail(p, open, "unterminated parameter expansion");
		return;
	} else {
		fail(p, open, "bad substitution");
		return;
	}
	name_end = p->pos;
	c = peekc(p, 0);
	if (c == '[' && BASH(p)) {
		fail(p, p->pos, "array subscript is not supported");
		return;
	}
	if (len_op) {
		if (c != '}') {
			fail(p, open, "bad substitution");
			return;
		}
		strcpy(op, "len");
	} else if (c != '}') {
		size_t k = 0;

		if (c == ':' ) {
			int d = peekc(p, 1);

			op[k++] = ':';
			if (d == '-' || d == '=' || d == '?' || d == '+')
				op[k++] = (char)d;
			else if (!BASH(p)) {
				fail(p, open, "bad substitution");
				return;
			}
		} else if (c == '-' || c == '=' || c == '?' || c == '+') {
			op[k++] = (char)c;
		} else if (c == '#' || c == '%') {
			op[k++] = (char)c;
			if (peekc(p, 1) == c)
				op[k++] = (char)c;
		} else if (BASH(p) && c == '@') {
			/* ${x@P} expands prompt escapes, $(…) included, from the
			 * variable's value: commands no parser can see */
			fail(p, open, "parameter transformation is not supported");
			return;
		} else if (BASH(p) && (c == '/' || c == '^' || c == ',')) {
			op[k++] = (char)c;
			if (peekc(p, 1) == c)
				op[k++] = (char)c;
			else if (c == '/' && (peekc(p, 1) == '#' || peekc(p, 1) == '%'))
				op[k++] = (char)peekc(p, 1);
		} else if (c < 0) {
			fail(p, open, "unterminated parameter expansion");
			return;
		} else {
			fail(p, open, "bad substitution");
			return;
		}
		op[k] = '\0';
		p->pos += k;
		{
			struct wb ab;

			wb_init(&ab, p->pos);
			lex_into(p, &ab, WM_BRACE_ARG);
			if (p->failed)
				return;
			arg = wb_finish(p, &ab, NULL);
			if (!arg)
				return;
			b->flags |= ab.flags & ~(WARD_SH_W_QUOTED);
			c = peekc(p, 0);
		}
		if (c != '}') {
			fail(p, open, "unterminated parameter expansion");
			return;
		}
	}
	p->pos++; /* } */
	p->depth--;
	struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_PARAM, open, p->pos);

	if (!pt)
		return;
	pt->quote = in_dq ? WARD_SH_Q_DOUBLE : WARD_SH_Q_NONE;
	pt->braced = true;
	memcpy(pt->op, op, sizeof(op));
	pt->arg = arg;
	pt->text_len = name_end - name_off;
	pt->text = palloc(p, pt->text_len + 1);
	if (pt->text) {
		memcpy(pt->text, p->s + name_off, pt->text_len);
		pt->text[pt->text_len] = '\0';
	}
	b->flags |= WARD_SH_W_PARAM;
}

/* $(( … )); arith_ahead() has decided it is arithmetic and not $( ( … ) ). */
static void lex_arith(struct P *p, struct wb *b)
{
	size_t open = p->pos;
	struct wb ab;
	struct ward_sh_word *arg;

	if (!enter(p, open))
		return;
	p->pos += 3;
	wb_init(&ab, p->pos);
	lex_into(p, &ab, WM_ARITH);
	if (p->failed)
		return;
	if (peekc(p, 0) != ')' || peekc(p, 1) != ')') {
		fail(p, open, "unterminated arithmetic expansion");
		return;
	}
	arg = wb_finish(p, &ab, NULL);
	p->pos += 2;
	p->depth--;
	struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_ARITH, open, p->pos);

	if (!pt)
		return;
	pt->arg = arg;
	pt->text = "";
	if (arg)
		b->flags |= arg->flags & ~(WARD_SH_W_QUOTED);
	b->flags |= WARD_SH_W_ARITH;
}

/* Whether $(( at p->pos opens arithmetic: the parentheses after it close with
 * "))" together. Otherwise it is $( ( … ) … ), a subshell in a substitution. */
static bool arith_ahead(const struct P *p)
{
	size_t i = p->pos + 3;
	int depth = 0;
	char q = 0;

	for (; i < p->n; i++) {
		char c = p->s[i];

		if (q) {
			if (c == '\\' && q == '"')
				i++;
			else if (c == q)
				q = 0;
			continue;
		}
		if (c == '\\') {
			i++;
		} else if (c == '\'' || c == '"') {
			q = c;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (depth == 0)
				return i + 1 < p->n && p->s[i + 1] == ')';
			depth--;
		}
	}
	return true; /* unterminated: report it as arithmetic */
}

static void lex_cmdsub(struct P *p, struct wb *b, bool in_dq)
{
	size_t open = p->pos;
	struct ward_sh_node *sub;

	p->pos += 2;
	sub = parse_sub(p, open, "command substitution");
	if (!sub)
		return;
	struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_CMDSUB, open, p->pos);

	if (!pt)
		return;
	pt->sub = sub;
	pt->text = "";
	pt->quote = in_dq ? WARD_SH_Q_DOUBLE : WARD_SH_Q_NONE;
	b->flags |= WARD_SH_W_CMDSUB;
}

static void lex_dollar(struct P *p, struct wb *b, bool in_dq)
{
	size_t at = p->pos;
	int c = peekc(p, 1);
	enum ward_sh_quote q = in_dq ? WARD_SH_Q_DOUBLE : WARD_SH_Q_NONE;

	if (c == '(') {
		if (peekc(p, 2) == '(' && arith_ahead(p))
			lex_arith(p, b);
		else
			lex_cmdsub(p, b, in_dq);
		return;
	}
	if (c == '{') {
		lex_brace_param(p, b, in_dq);
		return;
	}
	if (c == '\'' && !in_dq && BASH(p)) {
		lex_ansi(p, b);
		return;
	}
	if (c == '"' && !in_dq && BASH(p)) {
		p->pos++;
		lex_dq(p, b);
		return;
	}
	if (is_name_start(c) || (c >= '0' && c <= '9') || (c > 0 && strchr("@*#?-$!", c))) {
		size_t name = at + 1;

		p->pos += 2;
		if (is_name_start(c))
			while (is_name_char(peekc(p, 0)))
				p->pos++;
		struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_PARAM, at, p->pos);

		if (!pt)
			return;
		pt->quote = q;
		pt->text_len = p->pos - name;
		pt->text = palloc(p, pt->text_len + 1);
		if (pt->text) {
			memcpy(pt->text, p->s + name, pt->text_len);
			pt->text[pt->text_len] = '\0';
		}
		b->flags |= WARD_SH_W_PARAM;
		return;
	}
	/* a lone $ is itself */
	wb_lit(p, b, q, "$", 1, at, at + 1);
	p->pos++;
}

/* Parse the text of a backtick substitution, unescaped, with its own parser
 * on that text; offsets are mapped back to the source afterwards. */
static void remap_node(struct ward_sh_node *n, const size_t *map, size_t mlen);
static void fix_bodies_node(struct ward_sh_node *n);

static void lex_backtick(struct P *p, struct wb *b, bool in_dq)
{
	size_t open = p->pos, i, k = 0;
	char *inner;
	size_t *map;

	/* find the closing backquote */
	for (i = open + 1; i < p->n && p->s[i] != '`'; i++)
		if (p->s[i] == '\\' && i + 1 < p->n)
			i++;
	if (i >= p->n) {
		fail(p, open, "unterminated backquote");
		return;
	}
	size_t close = i;

	inner = palloc(p, close - open + 1);
	map = palloc(p, (close - open + 1) * sizeof(*map));
	if (!inner || !map)
		return;
	for (i = open + 1; i < close; i++) {
		char c = p->s[i];

		if (c == '\\' && i + 1 < close) {
			char d = p->s[i + 1];

			if (d == '\\' || d == '`' || d == '$' || (in_dq && d == '"')) {
				map[k] = i + 1;
				inner[k++] = d;
				i++;
				continue;
			}
			if (d == '\n') {
				i++;
				continue;
			}
		}
		map[k] = i;
		inner[k++] = c;
	}
	map[k] = close;
	inner[k] = '\0';

	struct P sp;

	memset(&sp, 0, sizeof(sp));
	sp.s = inner;
	sp.n = k;
	sp.flags = p->flags;
	sp.A = p->A;
	sp.depth = p->depth;
	sp.hd.elt = sizeof(struct ward_sh_redir *);
	if (!enter(&sp, 0)) {
		fail(p, open, "nesting too deep");
		return;
	}
	struct ward_sh_node *sub = parse_sub(&sp, 0, NULL);

	if (!sub || sp.failed) {
		p->nomem = sp.nomem;
		size_t o = sp.err_off <= k ? map[sp.err_off] : close;
		fail(p, o, "%s", sp.err_msg);
		return;
	}
	fix_bodies_node(sub);
	remap_node(sub, map, k);
	p->pos = close + 1;
	struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_CMDSUB, open, p->pos);

	if (!pt)
		return;
	pt->sub = sub;
	pt->backtick = true;
	pt->text = "";
	pt->quote = in_dq ? WARD_SH_Q_DOUBLE : WARD_SH_Q_NONE;
	b->flags |= WARD_SH_W_CMDSUB | WARD_SH_W_BACKTICK;
}

/* A [ … ] bracket expression ahead, in the same unquoted word? Returns the
 * offset of its ], or 0. */
static size_t bracket_ahead(const struct P *p)
{
	size_t i = p->pos + 1;

	if (i < p->n && (p->s[i] == '!' || p->s[i] == '^'))
		i++;
	if (i < p->n && p->s[i] == ']')
		i++;
	for (; i < p->n; i++) {
		int c = (unsigned char)p->s[i];

		if (c == ']')
			return i;
		if (is_delim(c) || c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`' ||
		    c == '[')
			return 0;
	}
	return 0;
}

static bool wb_empty(const struct wb *b)
{
	return b->parts.n == 0 && !b->lit_open;
}

static void lex_tilde(struct P *p, struct wb *b)
{
	size_t at = p->pos, i = at + 1;

	while (i < p->n && (is_name_char((unsigned char)p->s[i]) || p->s[i] == '.' ||
			    p->s[i] == '-' || p->s[i] == '+'))
		i++;
	if (i < p->n && !is_delim((unsigned char)p->s[i]) && p->s[i] != '/' &&
	    !(b->assign_like && p->s[i] == ':')) {
		/* ~ followed by something quoted or expanded: not a tilde prefix */
		wb_lit(p, b, WARD_SH_Q_NONE, "~", 1, at, at + 1);
		p->pos++;
		return;
	}
	p->pos = i;
	struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_TILDE, at, i);

	if (!pt)
		return;
	pt->text_len = i - at - 1;
	pt->text = palloc(p, pt->text_len + 1);
	if (pt->text) {
		memcpy(pt->text, p->s + at + 1, pt->text_len);
		pt->text[pt->text_len] = '\0';
	}
	b->flags |= WARD_SH_W_TILDE;
}

static void lex_into(struct P *p, struct wb *b, enum wmode mode)
{
	int paren = 0;

	while (!p->failed) {
		int c = peekc(p, 0);
		size_t at = p->pos;
		bool start = wb_empty(b);

		if (c < 0)
			return;
		switch (mode) {
		case WM_NORMAL:
			if (is_delim(c))
				return;
			break;
		case WM_BRACE_ARG:
			if (c == '}')
				return;
			break;
		case WM_ARITH:
			if (c == '(')
				paren++;
			if (c == ')' && paren-- == 0)
				return;
			break;
		case WM_HEREDOC:
			break;
		}
		if (c == '\\') {
			int d = peekc(p, 1);

			if (d == '\n') {
				p->pos += 2;
				continue;
			}
			if (mode == WM_HEREDOC) {
				if (d == '$' || d == '`' || d == '\\') {
					char ch = (char)d;

					wb_lit(p, b, WARD_SH_Q_DOUBLE, &ch, 1, at, at + 2);
					p->pos += 2;
				} else {
					wb_lit(p, b, WARD_SH_Q_DOUBLE, "\\", 1, at, at + 1);
					p->pos++;
				}
				continue;
			}
			if (d < 0) {
				/* a trailing backslash stands for itself */
				wb_lit(p, b, WARD_SH_Q_NONE, "\\", 1, at, at + 1);
				p->pos++;
				continue;
			}
			char ch = (char)d;

			wb_lit(p, b, WARD_SH_Q_BACKSLASH, &ch, 1, at, at + 2);
			p->pos += 2;
			b->name_ok = false;
			continue;
		}
		if (c == '$') {
			lex_dollar(p, b, mode == WM_HEREDOC);
			b->name_ok = false;
			continue;
		}
		if (c == '`') {
			lex_backtick(p, b, mode == WM_HEREDOC);
			b->name_ok = false;
			continue;
		}
		if (mode != WM_HEREDOC && c == '\'') {
			lex_sq(p, b);
			b->name_ok = false;
			continue;
		}
		if (mode != WM_HEREDOC && c == '"') {
			lex_dq(p, b);
			b->name_ok = false;
			continue;
		}
		if (mode == WM_NORMAL) {
			if (c == '*' || c == '?') {
				struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_GLOB, at, at + 1);

				p->pos++;
				if (pt) {
					pt->text = pt->kind == WARD_SH_P_GLOB && c == '*' ? "*" : "?";
					pt->text_len = 1;
				}
				b->flags |= WARD_SH_W_GLOB;
				b->name_ok = false;
				continue;
			}
			if (c == '[') {
				size_t close = bracket_ahead(p);

				if (close) {
					struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_GLOB, at, close + 1);

					p->pos = close + 1;
					if (pt) {
						pt->text_len = close + 1 - at;
						pt->text = palloc(p, pt->text_len + 1);
						if (pt->text) {
							memcpy(pt->text, p->s + at, pt->text_len);
							pt->text[pt->text_len] = '\0';
						}
					}
					b->flags |= WARD_SH_W_GLOB;
					b->name_ok = false;
					continue;
				}
			}
			if (c == '~' && (start || (b->assign_like && at > 0 &&
						   (p->s[at - 1] == '=' || p->s[at - 1] == ':')))) {
				lex_tilde(p, b);
				b->name_ok = false;
				continue;
			}
			if (BASH(p)) {
				if (c == '{' && !(at > 0 && p->s[at - 1] == '$')) {
					b->brace_depth++;
				} else if (c == ',' && b->brace_depth) {
					b->brace_sep = true;
				} else if (c == '.' && peekc(p, 1) == '.' && b->brace_depth) {
					b->brace_sep = true;
				} else if (c == '}' && b->brace_depth) {
					b->brace_depth--;
					if (b->brace_sep)
						b->flags |= WARD_SH_W_BRACE;
				}
			}
			if (c == '=' && b->name_ok && !start && !b->assign_like)
				b->assign_like = true;
			else if (!is_name_char(c))
				b->name_ok = false;
		}
		wb_lit(p, b, mode == WM_HEREDOC ? WARD_SH_Q_DOUBLE : WARD_SH_Q_NONE, p->s + at, 1, at,
		       at + 1);
		p->pos++;
	}
}

/* ---- tokens ------------------------------------------------------------------------ */

static struct ward_sh_word *lex_word(struct P *p)
{
	struct wb b;
	int c = peekc(p, 0);

	wb_init(&b, p->pos);
	/* <( and >( (bash) begin a word of their own */
	if (BASH(p) && (c == '<' || c == '>') && peekc(p, 1) == '(') {
		size_t open = p->pos;

		p->pos += 2;
		struct ward_sh_node *sub = parse_sub(p, open, "process substitution");

		if (!sub)
			return NULL;
		struct ward_sh_part *pt = wb_part(p, &b, WARD_SH_P_PROCSUB, open, p->pos);

		if (!pt)
			return NULL;
		pt->sub = sub;
		pt->text = "";
		pt->procsub_dir = (char)c;
		b.flags |= WARD_SH_W_PROCSUB;
	}
	lex_into(p, &b, WM_NORMAL);
	if (p->failed)
		return NULL;
	return wb_finish(p, &b, NULL);
}

static void skip_blanks(struct P *p)
{
	for (;;) {
		int c = peekc(p, 0);

		if (is_blank(c)) {
			p->pos++;
		} else if (c == '\\' && peekc(p, 1) == '\n') {
			p->pos += 2;
		} else if (c == '#') {
			while (peekc(p, 0) >= 0 && peekc(p, 0) != '\n')
				p->pos++;
		} else {
			return;
		}
	}
}

static void lex_token(struct P *p, struct tok *t)
{
	int c, d;

	memset(t, 0, sizeof(*t));
	skip_blanks(p);
	t->off = p->pos;
	c = peekc(p, 0);
	d = peekc(p, 1);
	if (c < 0) {
		t->t = T_EOF;
		return;
	}
	if (c == '\0') {
		fail(p, p->pos, "nul byte");
		t->t = T_EOF;
		return;
	}
	if (c == '\n') {
		p->pos++;
		t->t = T_NEWLINE;
		t->len = 1;
		read_heredocs(p);
		return;
	}
	/* an IO number: digits right before < or > */
	if (c >= '0' && c <= '9') {
		size_t i = p->pos;
		long fd = 0;

		while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') {
			if (fd < 100000)
				fd = fd * 10 + (p->s[i] - '0');
			i++;
		}
		if (i < p->n && (p->s[i] == '<' || p->s[i] == '>') &&
		    !(BASH(p) && i + 1 < p->n && p->s[i + 1] == '(')) {
			t->fd = (int)fd;
			t->fd_explicit = true;
			p->pos = i;
			c = peekc(p, 0);
			d = peekc(p, 1);
		}
	}
	size_t k = 1;

	switch (c) {
	case ';':
		if (d == ';') {
			if (BASH(p) && peekc(p, 2) == '&')
				t->t = T_DSEMI_AMP, k = 3;
			else
				t->t = T_DSEMI, k = 2;
		} else if (d == '&' && BASH(p)) {
			t->t = T_SEMI_AMP, k = 2;
		} else {
			t->t = T_SEMI;
		}
		break;
	case '&':
		if (d == '&') {
			t->t = T_AND, k = 2;
		} else if (d == '>' && BASH(p)) {
			t->t = T_REDIR;
			if (peekc(p, 2) == '>')
				t->rop = WARD_SH_R_APPEND_OUT_ERR, k = 3;
			else
				t->rop = WARD_SH_R_OUT_ERR, k = 2;
			t->fd = 1;
		} else {
			t->t = T_AMP;
		}
		break;
	case '|':
		if (d == '|')
			t->t = T_OR, k = 2;
		else if (d == '&' && BASH(p))
			t->t = T_PIPE_AMP, k = 2;
		else
			t->t = T_PIPE;
		break;
	case '(':
		t->t = T_LPAREN;
		break;
	case ')':
		t->t = T_RPAREN;
		break;
	case '<':
		if (d == '(' && BASH(p) && !t->fd_explicit)
			goto word;
		t->t = T_REDIR;
		if (!t->fd_explicit)
			t->fd = 0;
		if (d == '<') {
			if (peekc(p, 2) == '<' && BASH(p)) {
				t->rop = WARD_SH_R_HERESTRING, k = 3;
			} else if (peekc(p, 2) == '-') {
				t->rop = WARD_SH_R_HEREDOC, k = 3;
				t->strip_tabs = true;
			} else {
				t->rop = WARD_SH_R_HEREDOC, k = 2;
			}
		} else if (d == '&') {
			t->rop = WARD_SH_R_DUP_IN, k = 2;
		} else if (d == '>') {
			t->rop = WARD_SH_R_RDWR, k = 2;
		} else {
			t->rop = WARD_SH_R_IN;
		}
		break;
	case '>':
		if (d == '(' && BASH(p) && !t->fd_explicit)
			goto word;
		t->t = T_REDIR;
		if (!t->fd_explicit)
			t->fd = 1;
		if (d == '>')
			t->rop = WARD_SH_R_APPEND, k = 2;
		else if (d == '&')
			t->rop = WARD_SH_R_DUP_OUT, k = 2;
		else if (d == '|')
			t->rop = WARD_SH_R_CLOBBER, k = 2;
		else
			t->rop = WARD_SH_R_OUT;
		break;
	default:
		goto word;
	}
	p->pos += k;
	t->len = p->pos - t->off;
	return;
word:
	p->pos = t->off;
	t->t = T_WORD;
	t->fd = 0;
	t->fd_explicit = false;
	t->w = lex_word(p);
	t->len = p->pos - t->off;
	if (!t->w)
		t->t = T_EOF;
}

static struct tok *peek(struct P *p)
{
	if (!p->have_tok) {
		lex_token(p, &p->tok);
		p->have_tok = true;
	}
	return &p->tok;
}

static void consume(struct P *p)
{
	p->have_tok = false;
}

/* A word that is exactly the unquoted text kw. */
static bool word_is(const struct ward_sh_word *w, const char *kw)
{
	return w && w->n_parts == 1 && w->parts[0].kind == WARD_SH_P_LITERAL &&
	       w->parts[0].quote == WARD_SH_Q_NONE && strcmp(w->text, kw) == 0;
}

static bool tok_is(struct P *p, const char *kw)
{
	struct tok *t = peek(p);

	return t->t == T_WORD && word_is(t->w, kw);
}

static const char *const reserved_stop[] = { "then", "else", "elif", "fi", "do", "done", "esac", "}",
					     NULL };

static bool at_stop_word(struct P *p)
{
	struct tok *t = peek(p);

	if (t->t != T_WORD)
		return false;
	for (const char *const *r = reserved_stop; *r; r++)
		if (word_is(t->w, *r))
			return true;
	return false;
}

static void tok_desc(struct P *p, const struct tok *t, char *buf, size_t size)
{
	size_t len = t->len;

	if (t->t == T_EOF) {
		snprintf(buf, size, "end of input");
		return;
	}
	if (t->t == T_NEWLINE) {
		snprintf(buf, size, "newline");
		return;
	}
	if (len > 40)
		len = 40;
	snprintf(buf, size, "'%.*s'", (int)len, p->s + t->off);
}

static void unexpected(struct P *p)
{
	struct tok *t = peek(p);
	char d[64];

	if (p->failed)
		return;
	tok_desc(p, t, d, sizeof(d));
	fail(p, t->off, "syntax error: unexpected %s", d);
}

static bool expect_word(struct P *p, const char *kw)
{
	if (p->failed)
		return false;
	if (tok_is(p, kw)) {
		consume(p);
		return true;
	}
	struct tok *t = peek(p);
	char d[64];

	if (p->failed)
		return false;
	tok_desc(p, t, d, sizeof(d));
	fail(p, t->off, "syntax error: expected '%s' but found %s", kw, d);
	return false;
}

static void skip_newlines(struct P *p)
{
	while (!p->failed && peek(p)->t == T_NEWLINE)
		consume(p);
}

/* ---- heredocs ---------------------------------------------------------------------- */

static void read_heredocs(struct P *p)
{
	struct ward_sh_redir **list = p->hd.p;
	size_t n = p->hd.n, i;

	p->hd.n = 0;
	for (i = 0; i < n && !p->failed; i++) {
		struct ward_sh_redir *r = list[i];
		const char *delim = r->target.text;
		size_t dlen = r->target.text_len;
		size_t body_start = p->pos, body_end = p->pos, after = p->n;
		bool found = false;

		while (p->pos < p->n) {
			size_t ls = p->pos, le;
			const char *nl = memchr(p->s + ls, '\n', p->n - ls);

			le = nl ? (size_t)(nl - p->s) : p->n;
			size_t cs = ls;

			if (r->strip_tabs)
				while (cs < le && p->s[cs] == '\t')
					cs++;
			if (le - cs == dlen && memcmp(p->s + cs, delim, dlen) == 0) {
				body_end = ls;
				after = nl ? le + 1 : le;
				found = true;
				break;
			}
			p->pos = nl ? le + 1 : le;
		}
		if (!found) {
			/* the shells end a here-document at end of input, with a warning at
			 * most; so does the parser, so that it reads what they run */
			body_end = p->n;
			after = p->n;
		}
		struct wb b;

		wb_init(&b, body_start);
		if (r->quoted_delim || r->strip_tabs) {
			/* literal text (tabs stripped), or a body to lex line by line */
			size_t at = body_start;

			while (at < body_end) {
				const char *nl = memchr(p->s + at, '\n', body_end - at);
				size_t le = nl ? (size_t)(nl - p->s) + 1 : body_end;
				size_t cs = at;

				if (r->strip_tabs)
					while (cs < le && p->s[cs] == '\t')
						cs++;
				if (r->quoted_delim) {
					wb_lit(p, &b, WARD_SH_Q_SINGLE, p->s + cs, le - cs, cs, le);
				} else {
					size_t saved_n = p->n;

					p->pos = cs;
					p->n = le;
					lex_into(p, &b, WM_HEREDOC);
					p->n = saved_n;
				}
				at = le;
			}
		} else {
			size_t saved_n = p->n;

			p->pos = body_start;
			p->n = body_end;
			lex_into(p, &b, WM_HEREDOC);
			p->n = saved_n;
		}
		if (p->failed)
			return;
		if (r->quoted_delim && wb_empty(&b))
			wb_lit(p, &b, WARD_SH_Q_SINGLE, "", 0, body_start, body_start);
		p->pos = body_end;
		wb_finish(p, &b, &r->body);
		r->body.len = body_end - body_start;
		p->pos = after;
		(void)found;
	}
}

/* ---- parser ------------------------------------------------------------------------ */

static struct ward_sh_node *new_node(struct P *p, enum ward_sh_kind kind, size_t off)
{
	struct ward_sh_node *n = palloc(p, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->off = off;
	}
	return n;
}

static void finish_node(struct P *p, struct ward_sh_node *n, size_t end)
{
	n->len = end > n->off ? end - n->off : 0;
}

/* The end of what was consumed: the start of the lookahead if any. */
static size_t cur_end(struct P *p)
{
	return p->have_tok ? p->tok.off : p->pos;
}

static bool add_kid(struct P *p, struct ward_sh_node *n, struct vec *kids, struct ward_sh_node *k)
{
	struct ward_sh_node **slot = vpush(p->A, kids);

	if (!slot) {
		fail(p, p->pos, "out of memory");
		return false;
	}
	*slot = k;
	k->parent = n;
	return true;
}

static void set_kids(struct ward_sh_node *n, struct vec *kids)
{
	n->kids = kids->p;
	n->n_kids = kids->n;
}

static struct ward_sh_node *parse_list(struct P *p, size_t off);
static struct ward_sh_node *parse_command(struct P *p);

static struct ward_sh_node *parse_pipeline(struct P *p)
{
	struct tok *t = peek(p);
	size_t off = t->off;
	bool bang = false;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct vec ops = { .elt = sizeof(enum ward_sh_op) };
	struct vec offs = { .elt = sizeof(size_t) };
	struct ward_sh_node *n = new_node(p, WARD_SH_PIPELINE, off), *c;

	if (!n)
		return NULL;
	while (tok_is(p, "!")) {
		bang = !bang;
		consume(p);
	}
	n->bang = bang;
	for (;;) {
		c = parse_command(p);
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		t = peek(p);
		if (t->t != T_PIPE && t->t != T_PIPE_AMP)
			break;
		enum ward_sh_op *o = vpush(p->A, &ops);
		size_t *oo = vpush(p->A, &offs);

		if (!o || !oo)
			return NULL;
		*o = t->t == T_PIPE ? WARD_SH_OP_PIPE : WARD_SH_OP_PIPE_ERR;
		*oo = t->off;
		consume(p);
		skip_newlines(p);
	}
	if (kids.n == 1 && !n->bang) {
		c = ((struct ward_sh_node **)kids.p)[0];
		c->parent = NULL;
		return c;
	}
	set_kids(n, &kids);
	n->ops = ops.p;
	n->op_offs = offs.p;
	finish_node(p, n, cur_end(p));
	return n;
}

static struct ward_sh_node *parse_and_or(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_AND_OR, peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct vec ops = { .elt = sizeof(enum ward_sh_op) };
	struct vec offs = { .elt = sizeof(size_t) };

	if (!n)
		return NULL;
	for (;;) {
		c = parse_pipeline(p);
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		struct tok *t = peek(p);

		if (t->t != T_AND && t->t != T_OR)
			break;
		enum ward_sh_op *o = vpush(p->A, &ops);
		size_t *oo = vpush(p->A, &offs);

		if (!o || !oo)
			return NULL;
		*o = t->t == T_AND ? WARD_SH_OP_AND : WARD_SH_OP_OR;
		*oo = t->off;
		consume(p);
		skip_newlines(p);
	}
	if (kids.n == 1) {
		c = ((struct ward_sh_node **)kids.p)[0];
		c->parent = NULL;
		return c;
	}
	set_kids(n, &kids);
	n->ops = ops.p;
	n->op_offs = offs.p;
	finish_node(p, n, cur_end(p));
	return n;
}

/* A list: and-or lists separated by ; & or newlines, up to end of input, ),
 * ;; or a reserved word that cannot start a command. */
static struct ward_sh_node *parse_list(struct P *p, size_t off)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_LIST, off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct vec ops = { .elt = sizeof(enum ward_sh_op) };
	struct vec offs = { .elt = sizeof(size_t) };

	if (!n)
		return NULL;
	for (;;) {
		skip_newlines(p);
		if (p->failed)
			return NULL;
		struct tok *t = peek(p);

		if (t->t == T_EOF || t->t == T_RPAREN || t->t == T_DSEMI || t->t == T_SEMI_AMP ||
		    t->t == T_DSEMI_AMP || at_stop_word(p))
			break;
		if (kids.n == 0)
			n->off = t->off;
		c = parse_and_or(p);
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		enum ward_sh_op *o = vpush(p->A, &ops);
		size_t *oo = vpush(p->A, &offs);

		if (!o || !oo)
			return NULL;
		t = peek(p);
		*oo = t->off;
		if (t->t == T_SEMI) {
			*o = WARD_SH_OP_SEMI;
		} else if (t->t == T_AMP) {
			*o = WARD_SH_OP_AMP;
		} else if (t->t == T_NEWLINE) {
			*o = WARD_SH_OP_NEWLINE;
		} else {
			*o = WARD_SH_OP_END;
			break;
		}
		consume(p);
	}
	if (p->failed)
		return NULL;
	set_kids(n, &kids);
	n->ops = ops.p;
	n->op_offs = offs.p;
	if (kids.n) {
		struct ward_sh_node *last = n->kids[kids.n - 1];

		finish_node(p, n, last->off + last->len);
	}
	return n;
}

/* A compound list that must not be empty, ended by the reserved word kw. */
static struct ward_sh_node *parse_body(struct P *p, const char *kw)
{
	struct ward_sh_node *l = parse_list(p, peek(p)->off);

	if (!l)
		return NULL;
	if (l->n_kids == 0) {
		unexpected(p);
		return NULL;
	}
	if (kw && !expect_word(p, kw))
		return NULL;
	return l;
}

static struct ward_sh_redir *parse_redir(struct P *p, struct vec *redirs)
{
	struct tok t = *peek(p);
	struct ward_sh_redir *r;
	struct ward_sh_word *w;

	consume(p);
	skip_blanks(p);
	struct tok *wt = peek(p);

	if (wt->t != T_WORD) {
		char d[64];

		if (p->failed)
			return NULL;
		tok_desc(p, wt, d, sizeof(d));
		fail(p, wt->off, "syntax error: missing target of '%.*s' (found %s)",
		     (int)t.len, p->s + t.off, d);
		return NULL;
	}
	w = wt->w;
	consume(p);
	r = vpush(p->A, redirs);
	if (!r) {
		fail(p, t.off, "out of memory");
		return NULL;
	}
	r->op = t.rop;
	r->off = t.off;
	r->len = w->off + w->len - t.off;
	r->fd = t.fd;
	r->fd_explicit = t.fd_explicit;
	r->target = *w;
	r->dup_fd = 0;
	if (r->op == WARD_SH_R_DUP_IN || r->op == WARD_SH_R_DUP_OUT) {
		const char *s = w->text;
		bool num = !(w->flags & WARD_SH_W_DYNAMIC) && *s;

		for (const char *q = s; *q && num; q++)
			if (*q < '0' || *q > '9')
				num = false;
		if (num && strlen(s) < 7) {
			r->dup_fd = atoi(s);
		} else if (!(w->flags & WARD_SH_W_DYNAMIC) && strcmp(s, "-") == 0) {
			r->dup_fd = -1;
		} else if (r->op == WARD_SH_R_DUP_OUT && !r->fd_explicit && BASH(p) &&
			   !(w->flags & WARD_SH_W_DYNAMIC)) {
			/* bash: >&file is &>file */
			r->op = WARD_SH_R_OUT_ERR;
			r->fd = 1;
		} else {
			r->dup_fd = -2;
		}
	} else if (r->op == WARD_SH_R_HEREDOC) {
		struct ward_sh_redir **slot;

		r->strip_tabs = t.strip_tabs;
		r->quoted_delim = (w->flags & WARD_SH_W_QUOTED) != 0;
		slot = vpush(p->A, &p->hd);
		if (!slot) {
			fail(p, t.off, "out of memory");
			return NULL;
		}
		/* the redirs vector may move while the command is parsed: the body
		 * is read into a record of its own and copied back (fix_heredocs) */
		*slot = palloc(p, sizeof(**slot));
		if (!*slot)
			return NULL;
		**slot = *r;
		r->body.text = (char *)*slot; /* placeholder: the record that gets the body */
		r->body.len = (size_t)-1;
	}
	return r;
}

/* Redirections after a compound command. */
static bool parse_trailing_redirs(struct P *p, struct ward_sh_node *n)
{
	struct vec redirs = { .elt = sizeof(struct ward_sh_redir) };

	while (!p->failed && peek(p)->t == T_REDIR)
		if (!parse_redir(p, &redirs))
			return false;
	n->redirs = redirs.p;
	n->n_redirs = redirs.n;
	finish_node(p, n, cur_end(p));
	return !p->failed;
}

static bool valid_name(const char *s)
{
	if (!is_name_start((unsigned char)*s))
		return false;
	for (s++; *s; s++)
		if (!is_name_char((unsigned char)*s))
			return false;
	return true;
}

/* Whether w is an assignment NAME=… (or NAME+=… in bash). */
static bool is_assignment(const struct P *p, const struct ward_sh_word *w)
{
	const struct ward_sh_part *pt;
	const char *eq;

	if (!w->n_parts)
		return false;
	pt = &w->parts[0];
	if (pt->kind != WARD_SH_P_LITERAL || pt->quote != WARD_SH_Q_NONE)
		return false;
	eq = strchr(pt->text, '=');
	if (!eq || eq == pt->text || !is_name_start((unsigned char)pt->text[0]))
		return false;
	for (const char *q = pt->text; q < eq; q++) {
		if (q == eq - 1 && *q == '+' && BASH(p) && q > pt->text)
			break;
		if (!is_name_char((unsigned char)*q))
			return false;
	}
	return true;
}

/* In an assignment's value the shell neither globs nor brace-expands. */
static void assignment_fixup(struct ward_sh_word *w)
{
	for (size_t i = 0; i < w->n_parts; i++)
		if (w->parts[i].kind == WARD_SH_P_GLOB)
			w->parts[i].kind = WARD_SH_P_LITERAL;
	w->flags &= ~(WARD_SH_W_GLOB | WARD_SH_W_BRACE);
}

static struct ward_sh_node *parse_simple(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_SIMPLE, peek(p)->off);
	struct vec assigns = { .elt = sizeof(struct ward_sh_word) };
	struct vec words = { .elt = sizeof(struct ward_sh_word) };
	struct vec redirs = { .elt = sizeof(struct ward_sh_redir) };

	if (!n)
		return NULL;
	while (!p->failed) {
		struct tok *t = peek(p);

		if (t->t == T_REDIR) {
			if (!parse_redir(p, &redirs))
				return NULL;
			continue;
		}
		if (t->t != T_WORD)
			break;
		if (words.n == 0 && is_assignment(p, t->w)) {
			struct ward_sh_word *w = vpush(p->A, &assigns);
			size_t end;

			if (!w)
				return NULL;
			*w = *t->w;
			assignment_fixup(w);
			end = t->off + t->len;
			consume(p);
			if (w->text[w->text_len - 1] == '=' && peek(p)->t == T_LPAREN &&
			    peek(p)->off == end) {
				fail(p, w->off, "array assignment is not supported");
				return NULL;
			}
			continue;
		}
		struct ward_sh_word *w = vpush(p->A, &words);

		if (!w)
			return NULL;
		*w = *t->w;
		consume(p);
	}
	if (p->failed)
		return NULL;
	if (!assigns.n && !words.n && !redirs.n) {
		unexpected(p);
		return NULL;
	}
	n->assigns = assigns.p;
	n->n_assigns = assigns.n;
	n->words = words.p;
	n->n_words = words.n;
	n->redirs = redirs.p;
	n->n_redirs = redirs.n;
	finish_node(p, n, cur_end(p));
	if (words.n && word_is(&n->words[0], "alias")) {
		for (size_t i = 1; i < words.n; i++)
			if (strchr(n->words[i].text, '=')) {
				fail(p, n->off, "alias definition is not supported");
				return NULL;
			}
	}
	return n;
}


static struct ward_sh_node *parse_if(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_IF, peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };

	if (!n)
		return NULL;
	consume(p); /* if */
	for (;;) {
		c = parse_body(p, "then");
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		c = parse_body(p, NULL);
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		if (tok_is(p, "elif")) {
			consume(p);
			continue;
		}
		if (tok_is(p, "else")) {
			consume(p);
			c = parse_body(p, NULL);
			if (!c || !add_kid(p, n, &kids, c))
				return NULL;
			n->has_else = true;
		}
		if (!expect_word(p, "fi"))
			return NULL;
		break;
	}
	set_kids(n, &kids);
	return n;
}

static struct ward_sh_node *parse_loop(struct P *p, enum ward_sh_kind kind)
{
	struct ward_sh_node *n = new_node(p, kind, peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };

	if (!n)
		return NULL;
	consume(p);
	c = parse_body(p, "do");
	if (!c || !add_kid(p, n, &kids, c))
		return NULL;
	c = parse_body(p, "done");
	if (!c || !add_kid(p, n, &kids, c))
		return NULL;
	set_kids(n, &kids);
	return n;
}

static struct ward_sh_node *parse_for(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_FOR, peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct vec words = { .elt = sizeof(struct ward_sh_word) };
	struct tok *t;

	if (!n)
		return NULL;
	consume(p); /* for */
	skip_blanks(p);
	if (BASH(p) && peekc(p, 0) == '(' && peekc(p, 1) == '(' && !p->have_tok) {
		fail(p, p->pos, "arithmetic for loop is not supported");
		return NULL;
	}
	t = peek(p);
	if (t->t != T_WORD || !valid_name(t->w->text) || t->w->n_parts != 1 ||
	    t->w->parts[0].quote != WARD_SH_Q_NONE) {
		if (!p->failed)
			fail(p, t->off, "syntax error: bad for loop variable");
		return NULL;
	}
	n->name = palloc(p, sizeof(*n->name));
	if (!n->name)
		return NULL;
	*n->name = *t->w;
	consume(p);
	skip_newlines(p);
	if (tok_is(p, "in")) {
		consume(p);
		n->has_in = true;
		while (!p->failed && (t = peek(p))->t == T_WORD) {
			struct ward_sh_word *w = vpush(p->A, &words);

			if (!w)
				return NULL;
			*w = *t->w;
			consume(p);
		}
		t = peek(p);
		if (t->t != T_SEMI && t->t != T_NEWLINE) {
			unexpected(p);
			return NULL;
		}
		consume(p);
	} else if (peek(p)->t == T_SEMI) {
		consume(p);
	}
	skip_newlines(p);
	if (!expect_word(p, "do"))
		return NULL;
	c = parse_body(p, "done");
	if (!c || !add_kid(p, n, &kids, c))
		return NULL;
	n->words = words.p;
	n->n_words = words.n;
	set_kids(n, &kids);
	return n;
}

static struct ward_sh_node *parse_case(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_CASE, peek(p)->off);
	struct vec items = { .elt = sizeof(struct ward_sh_case_item) };
	struct tok *t;

	if (!n)
		return NULL;
	consume(p); /* case */
	t = peek(p);
	if (t->t != T_WORD) {
		unexpected(p);
		return NULL;
	}
	n->subject = palloc(p, sizeof(*n->subject));
	if (!n->subject)
		return NULL;
	*n->subject = *t->w;
	consume(p);
	skip_newlines(p);
	if (!expect_word(p, "in"))
		return NULL;
	skip_newlines(p);
	while (!p->failed && !tok_is(p, "esac")) {
		struct ward_sh_case_item *it;

		if (peek(p)->t == T_EOF)
			break; /* expect_word below names what is missing */
		it = vpush(p->A, &items);
		struct vec pats = { .elt = sizeof(struct ward_sh_word) };

		if (!it)
			return NULL;
		t = peek(p);
		it->off = t->off;
		if (t->t == T_LPAREN) {
			consume(p);
			t = peek(p);
		}
		for (;;) {
			if (t->t != T_WORD) {
				unexpected(p);
				return NULL;
			}
			struct ward_sh_word *w = vpush(p->A, &pats);

			if (!w)
				return NULL;
			*w = *t->w;
			consume(p);
			t = peek(p);
			if (t->t == T_PIPE) {
				consume(p);
				t = peek(p);
				continue;
			}
			break;
		}
		if (t->t != T_RPAREN) {
			if (!p->failed) {
				char d[64];

				tok_desc(p, t, d, sizeof(d));
				fail(p, t->off, "syntax error: expected ')' but found %s", d);
			}
			return NULL;
		}
		consume(p);
		it->patterns = pats.p;
		it->n_patterns = pats.n;
		it->body = parse_list(p, peek(p)->off);
		if (!it->body)
			return NULL;
		it->body->parent = n;
		t = peek(p);
		it->end = WARD_SH_CASE_BREAK;
		if (t->t == T_DSEMI || t->t == T_SEMI_AMP || t->t == T_DSEMI_AMP) {
			it->end = t->t == T_DSEMI ? WARD_SH_CASE_BREAK :
				  t->t == T_SEMI_AMP ? WARD_SH_CASE_FALL : WARD_SH_CASE_CONT;
			consume(p);
			it->len = cur_end(p) - it->off;
			skip_newlines(p);
		} else {
			it->len = cur_end(p) - it->off;
			if (!tok_is(p, "esac")) {
				if (!p->failed)
					expect_word(p, "esac");
				return NULL;
			}
		}
	}
	if (!expect_word(p, "esac"))
		return NULL;
	n->items = items.p;
	n->n_items = items.n;
	return n;
}

static struct ward_sh_node *parse_cond(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_COND, peek(p)->off);
	struct vec words = { .elt = sizeof(struct ward_sh_word) };

	if (!n)
		return NULL;
	consume(p); /* [[ */
	for (;;) {
		struct tok *t = peek(p);
		struct ward_sh_word *w;

		if (p->failed)
			return NULL;
		if (t->t == T_NEWLINE) {
			consume(p);
			continue;
		}
		if (t->t == T_WORD && word_is(t->w, "]]")) {
			consume(p);
			break;
		}
		if (t->t == T_EOF) {
			fail(p, n->off, "unterminated [[");
			return NULL;
		}
		w = vpush(p->A, &words);
		if (!w)
			return NULL;
		if (t->t == T_WORD) {
			*w = *t->w;
		} else if (t->t == T_AND || t->t == T_OR || t->t == T_LPAREN || t->t == T_RPAREN ||
			   (t->t == T_REDIR && !t->fd_explicit &&
			    (t->rop == WARD_SH_R_IN || t->rop == WARD_SH_R_OUT))) {
			struct ward_sh_part *pt = palloc(p, sizeof(*pt));
			char *txt = palloc(p, t->len + 1);

			if (!pt || !txt)
				return NULL;
			memcpy(txt, p->s + t->off, t->len);
			txt[t->len] = '\0';
			pt->kind = WARD_SH_P_LITERAL;
			pt->off = t->off;
			pt->len = t->len;
			pt->text = txt;
			pt->text_len = t->len;
			w->off = t->off;
			w->len = t->len;
			w->text = txt;
			w->text_len = t->len;
			w->parts = pt;
			w->n_parts = 1;
		} else {
			unexpected(p);
			return NULL;
		}
		consume(p);
	}
	n->words = words.p;
	n->n_words = words.n;
	return n;
}

static struct ward_sh_node *parse_function(struct P *p, struct ward_sh_word *name, size_t off)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_FUNCTION, off), *body;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };

	if (!n)
		return NULL;
	if (!valid_name(name->text) && !(BASH(p) && !(name->flags & WARD_SH_W_DYNAMIC))) {
		fail(p, name->off, "syntax error: bad function name");
		return NULL;
	}
	n->name = name;
	skip_newlines(p);
	body = parse_command(p);
	if (!body)
		return NULL;
	if (body->kind == WARD_SH_SIMPLE || body->kind == WARD_SH_FUNCTION) {
		fail(p, body->off, "syntax error: function body must be a compound command");
		return NULL;
	}
	if (!add_kid(p, n, &kids, body))
		return NULL;
	set_kids(n, &kids);
	finish_node(p, n, body->off + body->len);
	return n;
}

static struct ward_sh_node *parse_command(struct P *p)
{
	struct tok *t = peek(p);
	struct ward_sh_node *n = NULL;
	size_t off = t->off;

	if (p->failed)
		return NULL;
	if (!enter(p, off))
		return NULL;
	if (t->t == T_LPAREN) {
		if (BASH(p) && off + 1 < p->n && p->s[off + 1] == '(') {
			fail(p, off, "arithmetic command is not supported");
			return NULL;
		}
		consume(p);
		n = new_node(p, WARD_SH_SUBSHELL, off);
		if (!n)
			return NULL;
		struct ward_sh_node *body = parse_list(p, peek(p)->off);

		if (!body)
			return NULL;
		if (body->n_kids == 0) {
			unexpected(p);
			return NULL;
		}
		if (peek(p)->t != T_RPAREN) {
			unexpected(p);
			return NULL;
		}
		consume(p);
		n->kids = palloc(p, sizeof(*n->kids));
		if (!n->kids)
			return NULL;
		n->kids[0] = body;
		n->n_kids = 1;
		body->parent = n;
	} else if (t->t == T_WORD && tok_is(p, "{")) {
		consume(p);
		n = new_node(p, WARD_SH_BRACE, off);
		if (!n)
			return NULL;
		struct ward_sh_node *body = parse_body(p, "}");

		if (!body)
			return NULL;
		n->kids = palloc(p, sizeof(*n->kids));
		if (!n->kids)
			return NULL;
		n->kids[0] = body;
		n->n_kids = 1;
		body->parent = n;
	} else if (tok_is(p, "if")) {
		n = parse_if(p);
	} else if (tok_is(p, "for")) {
		n = parse_for(p);
	} else if (tok_is(p, "while")) {
		n = parse_loop(p, WARD_SH_WHILE);
	} else if (tok_is(p, "until")) {
		n = parse_loop(p, WARD_SH_UNTIL);
	} else if (tok_is(p, "case")) {
		n = parse_case(p);
	} else if (BASH(p) && tok_is(p, "[[")) {
		n = parse_cond(p);
	} else if (BASH(p) && (tok_is(p, "select") || tok_is(p, "coproc"))) {
		fail(p, off, "'%s' is not supported", t->w->text);
		return NULL;
	} else if (BASH(p) && tok_is(p, "function")) {
		consume(p);
		t = peek(p);
		if (t->t != T_WORD) {
			unexpected(p);
			return NULL;
		}
		struct ward_sh_word *name = palloc(p, sizeof(*name));

		if (!name)
			return NULL;
		*name = *t->w;
		consume(p);
		if (peek(p)->t == T_LPAREN) {
			consume(p);
			if (peek(p)->t != T_RPAREN) {
				unexpected(p);
				return NULL;
			}
			consume(p);
		}
		n = parse_function(p, name, off);
		p->depth--;
		return n;
	} else if (at_stop_word(p)) {
		unexpected(p);
		return NULL;
	} else if (t->t == T_WORD || t->t == T_REDIR) {
		/* NAME ( ) compound: a function definition */
		if (t->t == T_WORD && !is_assignment(p, t->w)) {
			struct ward_sh_word *w = t->w;

			/* look past the word for "( )" without lexing tokens: a newline
			 * token would read pending here-document bodies */
			size_t save_pos = p->pos;

			skip_blanks(p);
			if (peekc(p, 0) == '(') {
				p->pos++;
				skip_blanks(p);
				if (peekc(p, 0) != ')') {
					fail(p, p->pos, "syntax error: expected ')' of a function definition");
					return NULL;
				}
				p->pos++;
				consume(p);
				struct ward_sh_word *name = palloc(p, sizeof(*name));

				if (!name)
					return NULL;
				*name = *w;
				n = parse_function(p, name, off);
				p->depth--;
				return n;
			}
			p->pos = save_pos;
		}
		n = parse_simple(p);
		p->depth--;
		return n;
	} else {
		unexpected(p);
		return NULL;
	}
	if (!n)
		return NULL;
	if (!parse_trailing_redirs(p, n))
		return NULL;
	p->depth--;
	return n;
}

/* The body of $(…) or <(…) (open_off at "$(" / "<("), parsed from p->pos up
 * to its ")", or the whole text of a backtick parser (what == NULL). */
static struct ward_sh_node *parse_sub(struct P *p, size_t open_off, const char *what)
{
	struct ward_sh_node *n;
	struct vec saved_hd = p->hd;
	bool saved_have = p->have_tok;
	struct tok saved_tok = p->tok;

	if (!enter(p, open_off))
		return NULL;
	memset(&p->hd, 0, sizeof(p->hd));
	p->hd.elt = sizeof(struct ward_sh_redir *);
	p->have_tok = false;
	n = parse_list(p, p->pos);
	if (!n)
		return NULL;
	struct tok *t = peek(p);

	if (what) {
		if (t->t == T_EOF) {
			if (!p->failed)
				fail(p, open_off, "unterminated %s", what);
			return NULL;
		}
		if (t->t != T_RPAREN) {
			unexpected(p);
			return NULL;
		}
	} else if (t->t != T_EOF) {
		unexpected(p);
		return NULL;
	}
	if (p->hd.n) {
		struct ward_sh_redir *r = ((struct ward_sh_redir **)p->hd.p)[0];

		fail(p, r->off, "unterminated here-document");
		return NULL;
	}
	p->pos = t->off + t->len;
	p->hd = saved_hd;
	p->have_tok = saved_have;
	p->tok = saved_tok;
	p->depth--;
	if (!n->n_kids && !what)
		n->off = 0;
	return n;
}

/* ---- fixing heredoc bodies and remapping offsets ------------------------------------ */

static void fix_bodies_node(struct ward_sh_node *n);

static void fix_bodies_word(struct ward_sh_word *w)
{
	for (size_t i = 0; i < w->n_parts; i++) {
		struct ward_sh_part *pt = &w->parts[i];

		if (pt->sub)
			fix_bodies_node(pt->sub);
		if (pt->arg)
			fix_bodies_word(pt->arg);
	}
}

static void fix_bodies_redirs(struct ward_sh_redir *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].op == WARD_SH_R_HEREDOC && r[i].body.len == (size_t)-1) {
			struct ward_sh_redir *rec = (struct ward_sh_redir *)r[i].body.text;

			r[i].body = rec->body;
		}
		fix_bodies_word(&r[i].target);
		if (r[i].op == WARD_SH_R_HEREDOC)
			fix_bodies_word(&r[i].body);
	}
}

static void fix_bodies_node(struct ward_sh_node *n)
{
	size_t i, j;

	if (!n)
		return;
	fix_bodies_redirs(n->redirs, n->n_redirs);
	for (i = 0; i < n->n_assigns; i++)
		fix_bodies_word(&n->assigns[i]);
	for (i = 0; i < n->n_words; i++)
		fix_bodies_word(&n->words[i]);
	if (n->subject)
		fix_bodies_word(n->subject);
	for (i = 0; i < n->n_items; i++) {
		for (j = 0; j < n->items[i].n_patterns; j++)
			fix_bodies_word(&n->items[i].patterns[j]);
		fix_bodies_node(n->items[i].body);
	}
	for (i = 0; i < n->n_kids; i++)
		fix_bodies_node(n->kids[i]);
}

static void remap_span(size_t *off, size_t *len, const size_t *map, size_t mlen)
{
	size_t s = *off, e = *off + *len;

	if (s > mlen)
		s = mlen;
	if (e > mlen)
		e = mlen;
	*off = map[s];
	*len = e > s ? map[e - 1] + 1 - map[s] : 0;
}

static void remap_word(struct ward_sh_word *w, const size_t *map, size_t mlen)
{
	remap_span(&w->off, &w->len, map, mlen);
	for (size_t i = 0; i < w->n_parts; i++) {
		struct ward_sh_part *pt = &w->parts[i];

		remap_span(&pt->off, &pt->len, map, mlen);
		if (pt->sub)
			remap_node(pt->sub, map, mlen);
		if (pt->arg)
			remap_word(pt->arg, map, mlen);
	}
}

static void remap_node(struct ward_sh_node *n, const size_t *map, size_t mlen)
{
	size_t i, j;

	if (!n)
		return;
	remap_span(&n->off, &n->len, map, mlen);
	if (n->op_offs) {
		size_t nops = n->kind == WARD_SH_LIST ? n->n_kids : n->n_kids ? n->n_kids - 1 : 0;

		for (i = 0; i < nops; i++)
			n->op_offs[i] = map[n->op_offs[i] > mlen ? mlen : n->op_offs[i]];
	}
	for (i = 0; i < n->n_redirs; i++) {
		struct ward_sh_redir *r = &n->redirs[i];

		remap_span(&r->off, &r->len, map, mlen);
		remap_word(&r->target, map, mlen);
		if (r->op == WARD_SH_R_HEREDOC)
			remap_word(&r->body, map, mlen);
	}
	for (i = 0; i < n->n_assigns; i++)
		remap_word(&n->assigns[i], map, mlen);
	for (i = 0; i < n->n_words; i++)
		remap_word(&n->words[i], map, mlen);
	if (n->name)
		remap_word(n->name, map, mlen);
	if (n->subject)
		remap_word(n->subject, map, mlen);
	for (i = 0; i < n->n_items; i++) {
		remap_span(&n->items[i].off, &n->items[i].len, map, mlen);
		for (j = 0; j < n->items[i].n_patterns; j++)
			remap_word(&n->items[i].patterns[j], map, mlen);
		remap_node(n->items[i].body, map, mlen);
	}
	for (i = 0; i < n->n_kids; i++)
		remap_node(n->kids[i], map, mlen);
}

/* ---- public ----------------------------------------------------------------------- */

int ward_sh_parse(const char *src, size_t len, unsigned flags, struct ward_sh_tree **out,
		  struct ward_error **err)
{
	struct ward_sh_tree *t;
	struct P p;
	const char *nul;

	*out = NULL;
	if (len > WARD_SH_MAX_INPUT)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "command too long: %zu bytes (at most %u)", len,
					    WARD_SH_MAX_INPUT);
	if (len && (nul = memchr(src, '\0', len)))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "nul byte at %zu",
					    (size_t)(nul - src) + 1);
	t = calloc(1, sizeof(*t));
	if (!t)
		return ward_error_make(err, ENOMEM, "parse");
	t->arena = calloc(1, sizeof(struct arena));
	t->src = malloc(len + 1);
	if (!t->arena || !t->src) {
		ward_sh_tree_free(t);
		return ward_error_make(err, ENOMEM, "parse");
	}
	memcpy(t->src, src, len);
	t->src[len] = '\0';
	t->len = len;
	t->flags = flags;
	memset(&p, 0, sizeof(p));
	p.s = t->src;
	p.n = len;
	p.flags = flags;
	p.A = t->arena;
	p.hd.elt = sizeof(struct ward_sh_redir *);
	t->root = parse_list(&p, 0);
	if (!p.failed && peek(&p)->t != T_EOF)
		unexpected(&p);
	if (!p.failed && p.hd.n) {
		struct ward_sh_redir *r = ((struct ward_sh_redir **)p.hd.p)[0];

		/* a here-document on the last line with no newline after it */
		(void)r;
		p.pos = p.n;
		read_heredocs(&p);
	}
	if (p.failed || !t->root) {
		if (p.nomem)
			ward_error_make(err, ENOMEM, "parse");
		else
			ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "%s at %zu", p.err_msg,
					     p.err_off + 1);
		ward_sh_tree_free(t);
		return -1;
	}
	fix_bodies_node(t->root);
	*out = t;
	return 0;
}

void ward_sh_tree_free(struct ward_sh_tree *t)
{
	if (!t)
		return;
	arena_free(t->arena);
	free(t->src);
	free(t);
}

const char *ward_sh_kind_name(enum ward_sh_kind kind)
{
	switch (kind) {
	case WARD_SH_SIMPLE: return "simple command";
	case WARD_SH_PIPELINE: return "pipeline";
	case WARD_SH_AND_OR: return "and-or list";
	case WARD_SH_LIST: return "list";
	case WARD_SH_SUBSHELL: return "subshell";
	case WARD_SH_BRACE: return "brace group";
	case WARD_SH_IF: return "if statement";
	case WARD_SH_FOR: return "for loop";
	case WARD_SH_WHILE: return "while loop";
	case WARD_SH_UNTIL: return "until loop";
	case WARD_SH_CASE: return "case statement";
	case WARD_SH_FUNCTION: return "function definition";
	case WARD_SH_COND: return "conditional expression";
	}
	return "?";
}

const char *ward_sh_op_str(enum ward_sh_op op)
{
	switch (op) {
	case WARD_SH_OP_END: return "";
	case WARD_SH_OP_SEMI: return ";";
	case WARD_SH_OP_NEWLINE: return "\n";
	case WARD_SH_OP_AMP: return "&";
	case WARD_SH_OP_AND: return "&&";
	case WARD_SH_OP_OR: return "||";
	case WARD_SH_OP_PIPE: return "|";
	case WARD_SH_OP_PIPE_ERR: return "|&";
	}
	return "?";
}

const char *ward_sh_redir_str(enum ward_sh_redir_op op)
{
	switch (op) {
	case WARD_SH_R_IN: return "<";
	case WARD_SH_R_OUT: return ">";
	case WARD_SH_R_APPEND: return ">>";
	case WARD_SH_R_CLOBBER: return ">|";
	case WARD_SH_R_RDWR: return "<>";
	case WARD_SH_R_DUP_IN: return "<&";
	case WARD_SH_R_DUP_OUT: return ">&";
	case WARD_SH_R_OUT_ERR: return "&>";
	case WARD_SH_R_APPEND_OUT_ERR: return "&>>";
	case WARD_SH_R_HERESTRING: return "<<<";
	case WARD_SH_R_HEREDOC: return "<<";
	}
	return "?";
}

/* ---- visitors ----------------------------------------------------------------------- */

struct vctx {
	ward_sh_visit_fn fn;
	void *data;
	bool all;
	struct ward_sh_visit_info info;
};

static int v_node(struct vctx *c, const struct ward_sh_node *n);

static int v_word(struct vctx *c, const struct ward_sh_word *w)
{
	int r;

	for (size_t i = 0; i < w->n_parts; i++) {
		const struct ward_sh_part *pt = &w->parts[i];

		if (pt->arg && (r = v_word(c, pt->arg)))
			return r;
		if (pt->sub) {
			struct ward_sh_visit_info saved = c->info;

			c->info.context = pt->kind == WARD_SH_P_PROCSUB ? WARD_SH_CTX_PROCSUB :
					  pt->backtick ? WARD_SH_CTX_BACKTICK : WARD_SH_CTX_CMDSUB;
			c->info.sub_depth++;
			c->info.sub_part = pt;
			c->info.sub_word = w;
			r = v_node(c, pt->sub);
			c->info = saved;
			if (r)
				return r;
		}
	}
	return 0;
}

static int v_redirs(struct vctx *c, const struct ward_sh_redir *rd, size_t n)
{
	int r;

	for (size_t i = 0; i < n; i++) {
		if ((r = v_word(c, &rd[i].target)))
			return r;
		if (rd[i].op == WARD_SH_R_HEREDOC && (r = v_word(c, &rd[i].body)))
			return r;
	}
	return 0;
}

static int v_node(struct vctx *c, const struct ward_sh_node *n)
{
	size_t i, j;
	int r;

	if (!n)
		return 0;
	if (c->all && (r = c->fn(n, &c->info, c->data)))
		return r;
	if (n->kind != WARD_SH_SIMPLE && (r = v_redirs(c, n->redirs, n->n_redirs)))
		return r;
	for (i = 0; i < n->n_assigns; i++)
		if ((r = v_word(c, &n->assigns[i])))
			return r;
	if (n->name && (r = v_word(c, n->name)))
		return r;
	if (n->subject && (r = v_word(c, n->subject)))
		return r;
	for (i = 0; i < n->n_words; i++)
		if ((r = v_word(c, &n->words[i])))
			return r;
	if (n->kind == WARD_SH_SIMPLE) {
		if ((r = v_redirs(c, n->redirs, n->n_redirs)))
			return r;
		if (!c->all && (r = c->fn(n, &c->info, c->data)))
			return r;
	}
	for (i = 0; i < n->n_items; i++) {
		for (j = 0; j < n->items[i].n_patterns; j++)
			if ((r = v_word(c, &n->items[i].patterns[j])))
				return r;
		if ((r = v_node(c, n->items[i].body)))
			return r;
	}
	for (i = 0; i < n->n_kids; i++)
		if ((r = v_node(c, n->kids[i])))
			return r;
	return 0;
}

int ward_sh_visit_commands(const struct ward_sh_tree *t, ward_sh_visit_fn fn, void *data)
{
	struct vctx c = { .fn = fn, .data = data };

	return t ? v_node(&c, t->root) : 0;
}

int ward_sh_visit_nodes(const struct ward_sh_tree *t, ward_sh_visit_fn fn, void *data)
{
	struct vctx c = { .fn = fn, .data = data, .all = true };

	return t ? v_node(&c, t->root) : 0;
}
