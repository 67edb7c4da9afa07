/* lexer.c — the shell lexer (ward/shparse.h): words, tokens and heredocs.
 *
 * The lexer works on characters, not on a pre-split token stream, because a
 * word's meaning depends on what is inside it: $(…) and `…` are parsed by a
 * recursive call of the parser (parser.c) on the same source (or, for
 * backticks, on the unescaped text with a map back to source offsets), so a
 * substitution's commands are in the tree, never skipped over by bracket
 * counting. Pure code: everything lives in one arena per tree.
 */
#include "ward/shparse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filters/shell/shell-internal.h"

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
	WM_SUBSCRIPT, /* bash: an array subscript: ends at the matching ] */
	WM_EXTGLOB,   /* bash: the inside of @(…) and its kin: ends at the matching ) */
	WM_ARITH_FOR, /* bash: an expression of for ((…)): ends at ; or the matching ) */
	WM_REGEX,     /* bash: the right side of [[ … =~ … ]]: ( ) | are its own */
};

static void lex_dollar(struct P *p, struct wb *b, bool in_dq);
static void lex_backtick(struct P *p, struct wb *b, bool in_dq);
static void lex_into(struct P *p, struct wb *b, enum wmode mode);

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
	bool len_op = false, indirect = false;
	struct ward_sh_word *arg = NULL, *index = NULL;
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
		/* ${!a[@]} (the keys) and ${!PREFIX*} (the names) are lists of
		 * names; ${!x} takes x's value as the name, and a value
		 * `a[$(cmd)]` runs cmd: only known when it runs */
		size_t i = p->pos + 1;

		while (i < p->n && is_name_char((unsigned char)p->s[i]))
			i++;
		if (i > p->pos + 1 && is_name_start((unsigned char)p->s[p->pos + 1]) &&
		    i + 1 < p->n &&
		    (((p->s[i] == '*' || p->s[i] == '@') && p->s[i + 1] == '}') ||
		     (i + 3 < p->n && p->s[i] == '[' && (p->s[i + 1] == '@' || p->s[i + 1] == '*') &&
		      p->s[i + 2] == ']' && p->s[i + 3] == '}'))) {
			indirect = true;
			p->pos++;
			c = peekc(p, 0);
		} else {
			fail(p, open, "indirect expansion is not supported");
			return;
		}
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
	if (c == '[' && BASH(p) && is_name_start((unsigned char)p->s[name_off])) {
		struct wb ib;

		p->pos++;
		wb_init(&ib, p->pos);
		lex_into(p, &ib, WM_SUBSCRIPT);
		if (p->failed)
			return;
		if (peekc(p, 0) != ']') {
			fail(p, open, "unterminated array subscript");
			return;
		}
		index = wb_finish(p, &ib, NULL);
		if (!index)
			return;
		b->flags |= ib.flags & ~(WARD_SH_W_QUOTED);
		p->pos++;
		c = peekc(p, 0);
	} else if (indirect && c == '*') {
		/* ${!PREFIX*}: the operator is the * or @ */
		op[0] = (char)c;
		p->pos++;
		c = peekc(p, 0);
	} else if (indirect && c == '@') {
		op[0] = (char)c;
		p->pos++;
		c = peekc(p, 0);
	}
	if (indirect && c != '}') {
		fail(p, open, "bad substitution");
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
			int d = peekc(p, 1);

			/* ${x@P} expands prompt escapes, $(…) included, from the
			 * variable's value: commands no parser can see */
			if (d == 'P' || !d || !strchr("QEAKkaUuL", d) || peekc(p, 2) != '}') {
				fail(p, open, "parameter transformation '@%c' is not supported",
				     d > 32 && d < 127 ? d : '?');
				return;
			}
			op[0] = '@';
			op[1] = (char)d;
			p->pos += 3;
			goto done;
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
done:
	p->depth--;
	struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_PARAM, open, p->pos);

	if (!pt)
		return;
	pt->quote = in_dq ? WARD_SH_Q_DOUBLE : WARD_SH_Q_NONE;
	pt->braced = true;
	memcpy(pt->op, op, sizeof(op));
	pt->arg = arg;
	pt->index = index;
	pt->indirect = indirect;
	pt->text_len = name_end - name_off;
	pt->text = palloc(p, pt->text_len + 1);
	if (pt->text) {
		memcpy(pt->text, p->s + name_off, pt->text_len);
		pt->text[pt->text_len] = '\0';
	}
	b->flags |= WARD_SH_W_PARAM;
}

/* $(( … )); ward_sh_arith_ahead() has decided it is arithmetic and not $( ( … ) ). */
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

static void lex_cmdsub(struct P *p, struct wb *b, bool in_dq)
{
	size_t open = p->pos;
	struct ward_sh_node *sub;

	p->pos += 2;
	sub = ward_sh_parse_sub(p, open, "command substitution");
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
		if (peekc(p, 2) == '(' && ward_sh_arith_ahead(p, p->pos + 1))
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
	struct ward_sh_node *sub = ward_sh_parse_sub(&sp, 0, NULL);

	if (!sub || sp.failed) {
		p->nomem = sp.nomem;
		size_t o = sp.err_off <= k ? map[sp.err_off] : close;
		fail(p, o, "%s", sp.err_msg);
		return;
	}
	ward_sh_fix_bodies_node(sub);
	ward_sh_remap_node(sub, map, k);
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

/* bash: whether the [ at p->pos has a matching ] (as bash's reader finds it:
 * quotes and substitutions skipped) with a blank or an operator character
 * between them at its own level. */
static bool subscript_has_blank_at(const struct P *p, size_t at)
{
	size_t i = at + 1;
	int depth = 0;
	bool blank = false;

	for (; i < p->n; i++) {
		char c = p->s[i];

		if (c == '\\') {
			i++;
		} else if (c == '\'') {
			while (++i < p->n && p->s[i] != '\'')
				;
		} else if (c == '"' || c == '`') {
			while (++i < p->n && p->s[i] != c)
				if (p->s[i] == '\\')
					i++;
		} else if (c == '$' && i + 1 < p->n && (p->s[i + 1] == '(' || p->s[i + 1] == '{')) {
			char open = p->s[i + 1], close = open == '(' ? ')' : '}';
			int d = 0;

			for (i++; i < p->n; i++) {
				if (p->s[i] == '\\') {
					i++;
				} else if (p->s[i] == '\'') {
					while (++i < p->n && p->s[i] != '\'')
						;
				} else if (p->s[i] == open) {
					d++;
				} else if (p->s[i] == close && --d == 0) {
					break;
				}
			}
		} else if (c == '[') {
			depth++;
		} else if (c == ']') {
			if (depth-- == 0)
				return blank;
		} else if (is_delim((unsigned char)c)) {
			blank = true;
		}
	}
	return false;
}

static bool subscript_has_blank(const struct P *p)
{
	return subscript_has_blank_at(p, p->pos);
}

bool ward_sh_subscript_has_blank(const struct P *p, size_t at)
{
	return subscript_has_blank_at(p, at);
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
		case WM_SUBSCRIPT:
			if (c == '[')
				paren++;
			if (c == ']' && paren-- == 0)
				return;
			/* bash expands a subscript with quotes as plain characters:
			 * a['$(cmd)']=1 runs cmd */
			if (c == '\'' || (c == '$' && peekc(p, 1) == '\'')) {
				fail(p, at, "single quote in an array subscript is not supported");
				return;
			}
			break;
		case WM_EXTGLOB:
			if (c == '(')
				paren++;
			if (c == ')' && paren-- == 0)
				return;
			break;
		case WM_ARITH_FOR:
			if (c == ';' && paren == 0)
				return;
			if (c == '(')
				paren++;
			if (c == ')' && paren-- == 0)
				return;
			break;
		case WM_REGEX:
			if (c == '(')
				paren++;
			if (c == ')' && paren-- == 0)
				return;
			if (paren <= 0 && c != '|' && c != '(' && c != ')' && is_delim(c))
				return;
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
		if ((mode == WM_NORMAL || mode == WM_EXTGLOB) && BASH(p) && c > 0 &&
		    strchr("@+?*!", c) && peekc(p, 1) == '(') {
			/* an extglob pattern: under shopt -s extglob a pattern whose
			 * inside may hold substitutions; without it bash stops with a
			 * syntax error (or, at a command's start, reads `!(` as `! (`:
			 * the parser refuses that there) */
			struct ward_sh_part *pt = wb_part(p, b, WARD_SH_P_GLOB, at, at + 2);

			if (pt) {
				pt->text = palloc(p, 3);
				if (pt->text) {
					memcpy(pt->text, p->s + at, 2);
					pt->text[2] = '\0';
				}
				pt->text_len = 2;
			}
			p->pos += 2;
			lex_into(p, b, WM_EXTGLOB);
			if (p->failed)
				return;
			if (peekc(p, 0) != ')') {
				fail(p, at, "unterminated extglob pattern");
				return;
			}
			pt = wb_part(p, b, WARD_SH_P_GLOB, p->pos, p->pos + 1);
			if (pt) {
				pt->text = ")";
				pt->text_len = 1;
			}
			p->pos++;
			b->flags |= WARD_SH_W_GLOB;
			b->name_ok = false;
			continue;
		}
		if (mode == WM_NORMAL || mode == WM_EXTGLOB) {
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
			if (c == '[' && BASH(p) && b->name_ok && !start &&
			    is_name_start((unsigned char)p->s[b->off]) && subscript_has_blank(p)) {
				/* bash reads NAME[ … ]=v, blanks and all, as one
				 * assignment word at a command's start (where a['$(cmd)']
				 * runs cmd), and as several words elsewhere */
				fail(p, at, "array subscript with a blank is not supported");
				return;
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

/* bash: an arithmetic expression from p->pos, up to the ")" that closes it
 * (or, in_for, a ";" at its level): the parser checks what ends it. */
struct ward_sh_word *ward_sh_lex_arith(struct P *p, bool in_for)
{
	struct wb b;

	wb_init(&b, p->pos);
	lex_into(p, &b, in_for ? WM_ARITH_FOR : WM_ARITH);
	if (p->failed)
		return NULL;
	return wb_finish(p, &b, NULL);
}

/* bash: the regular expression after =~ in [[ … ]], where ( ) and | are
 * part of the word. */
struct ward_sh_word *ward_sh_lex_regex(struct P *p)
{
	struct wb b;

	ward_sh_skip_blanks(p);
	wb_init(&b, p->pos);
	lex_into(p, &b, WM_REGEX);
	if (p->failed)
		return NULL;
	if (p->pos == b.off) {
		fail(p, p->pos, "syntax error: expected a regular expression after '=~'");
		return NULL;
	}
	return wb_finish(p, &b, NULL);
}

/* Whether "((" at i opens arithmetic: its parentheses close with "))"
 * together (otherwise it is a subshell in a subshell, or for "$((" at
 * i - 1, $( ( … ) … ): a subshell in a substitution). */
bool ward_sh_arith_ahead(const struct P *p, size_t i)
{
	int depth = 0;
	char q = 0;

	for (i += 2; i < p->n; i++) {
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
		struct ward_sh_node *sub = ward_sh_parse_sub(p, open, "process substitution");

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

void ward_sh_skip_blanks(struct P *p)
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
	ward_sh_skip_blanks(p);
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
		ward_sh_read_heredocs(p);
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

struct tok *ward_sh_peek(struct P *p)
{
	if (!p->have_tok) {
		lex_token(p, &p->tok);
		p->have_tok = true;
	}
	return &p->tok;
}

void ward_sh_consume(struct P *p)
{
	p->have_tok = false;
}

/* A word that is exactly the unquoted text kw. */
bool ward_sh_word_is(const struct ward_sh_word *w, const char *kw)
{
	return w && w->n_parts == 1 && w->parts[0].kind == WARD_SH_P_LITERAL &&
	       w->parts[0].quote == WARD_SH_Q_NONE && strcmp(w->text, kw) == 0;
}

bool ward_sh_tok_is(struct P *p, const char *kw)
{
	struct tok *t = ward_sh_peek(p);

	return t->t == T_WORD && ward_sh_word_is(t->w, kw);
}

static const char *const reserved_stop[] = { "then", "else", "elif", "fi", "do", "done", "esac", "}",
					     NULL };

bool ward_sh_at_stop_word(struct P *p)
{
	struct tok *t = ward_sh_peek(p);

	if (t->t != T_WORD)
		return false;
	for (const char *const *r = reserved_stop; *r; r++)
		if (ward_sh_word_is(t->w, *r))
			return true;
	return false;
}

void ward_sh_tok_desc(struct P *p, const struct tok *t, char *buf, size_t size)
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

void ward_sh_unexpected(struct P *p)
{
	struct tok *t = ward_sh_peek(p);
	char d[64];

	if (p->failed)
		return;
	ward_sh_tok_desc(p, t, d, sizeof(d));
	fail(p, t->off, "syntax error: unexpected %s", d);
}

bool ward_sh_expect_word(struct P *p, const char *kw)
{
	if (p->failed)
		return false;
	if (ward_sh_tok_is(p, kw)) {
		ward_sh_consume(p);
		return true;
	}
	struct tok *t = ward_sh_peek(p);
	char d[64];

	if (p->failed)
		return false;
	ward_sh_tok_desc(p, t, d, sizeof(d));
	fail(p, t->off, "syntax error: expected '%s' but found %s", kw, d);
	return false;
}

void ward_sh_skip_newlines(struct P *p)
{
	while (!p->failed && ward_sh_peek(p)->t == T_NEWLINE)
		ward_sh_consume(p);
}

/* ---- heredocs ---------------------------------------------------------------------- */

void ward_sh_read_heredocs(struct P *p)
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
