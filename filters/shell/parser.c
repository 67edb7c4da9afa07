/* parser.c — the shell parser (ward/shparse.h): recursive descent over the
 * lexer's tokens (lexer.c), heredoc bodies fixed and offsets remapped, the
 * public entry points and the visitors. Pure code: everything lives in one
 * arena per tree.
 */
#include "ward/shparse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filters/shell/shell-internal.h"

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
	struct tok *t = ward_sh_peek(p);
	size_t off = t->off;
	bool bang = false;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct vec ops = { .elt = sizeof(enum ward_sh_op) };
	struct vec offs = { .elt = sizeof(size_t) };
	struct ward_sh_node *n = new_node(p, WARD_SH_PIPELINE, off), *c;

	if (!n)
		return NULL;
	/* bash: `time [-p]` is a keyword that times the pipeline, not a
	 * command (`time { …; }`); bare `time` stays a command */
	if (BASH(p) && ward_sh_tok_is(p, "time")) {
		size_t i = p->pos;

		while (i < p->n && is_blank((unsigned char)p->s[i]))
			i++;
		if (i < p->n && !strchr("\n;&|)#", p->s[i])) {
			ward_sh_consume(p);
			if (ward_sh_tok_is(p, "-p"))
				ward_sh_consume(p);
		}
	}
	while (ward_sh_tok_is(p, "!")) {
		bang = !bang;
		ward_sh_consume(p);
	}
	n->bang = bang;
	for (;;) {
		c = parse_command(p);
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		t = ward_sh_peek(p);
		if (t->t != T_PIPE && t->t != T_PIPE_AMP)
			break;
		enum ward_sh_op *o = vpush(p->A, &ops);
		size_t *oo = vpush(p->A, &offs);

		if (!o || !oo)
			return NULL;
		*o = t->t == T_PIPE ? WARD_SH_OP_PIPE : WARD_SH_OP_PIPE_ERR;
		*oo = t->off;
		ward_sh_consume(p);
		ward_sh_skip_newlines(p);
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
	struct ward_sh_node *n = new_node(p, WARD_SH_AND_OR, ward_sh_peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct vec ops = { .elt = sizeof(enum ward_sh_op) };
	struct vec offs = { .elt = sizeof(size_t) };

	if (!n)
		return NULL;
	for (;;) {
		c = parse_pipeline(p);
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		struct tok *t = ward_sh_peek(p);

		if (t->t != T_AND && t->t != T_OR)
			break;
		enum ward_sh_op *o = vpush(p->A, &ops);
		size_t *oo = vpush(p->A, &offs);

		if (!o || !oo)
			return NULL;
		*o = t->t == T_AND ? WARD_SH_OP_AND : WARD_SH_OP_OR;
		*oo = t->off;
		ward_sh_consume(p);
		ward_sh_skip_newlines(p);
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
		ward_sh_skip_newlines(p);
		if (p->failed)
			return NULL;
		struct tok *t = ward_sh_peek(p);

		if (t->t == T_EOF || t->t == T_RPAREN || t->t == T_DSEMI || t->t == T_SEMI_AMP ||
		    t->t == T_DSEMI_AMP || ward_sh_at_stop_word(p))
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
		t = ward_sh_peek(p);
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
		ward_sh_consume(p);
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
	struct ward_sh_node *l = parse_list(p, ward_sh_peek(p)->off);

	if (!l)
		return NULL;
	if (l->n_kids == 0) {
		ward_sh_unexpected(p);
		return NULL;
	}
	if (kw && !ward_sh_expect_word(p, kw))
		return NULL;
	return l;
}

static struct ward_sh_redir *parse_redir(struct P *p, struct vec *redirs)
{
	struct tok t = *ward_sh_peek(p);
	struct ward_sh_redir *r;
	struct ward_sh_word *w;

	ward_sh_consume(p);
	ward_sh_skip_blanks(p);
	struct tok *wt = ward_sh_peek(p);

	if (wt->t != T_WORD) {
		char d[64];

		if (p->failed)
			return NULL;
		ward_sh_tok_desc(p, wt, d, sizeof(d));
		fail(p, wt->off, "syntax error: missing target of '%.*s' (found %s)",
		     (int)t.len, p->s + t.off, d);
		return NULL;
	}
	w = wt->w;
	ward_sh_consume(p);
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

	while (!p->failed && ward_sh_peek(p)->t == T_REDIR)
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

/* bash: the end (offset of its `]`) of the subscript of a word NAME[…]=… or
 * NAME[…]+=…, or 0. Quotes inside are skipped as the shell's reader does. */
static size_t subscript_end(const struct P *p, const struct ward_sh_word *w)
{
	size_t i = w->off, end = w->off + w->len;
	int depth = 0;

	if (!BASH(p) || !w->n_parts || w->parts[0].kind != WARD_SH_P_LITERAL ||
	    w->parts[0].quote != WARD_SH_Q_NONE || !is_name_start((unsigned char)p->s[i]))
		return 0;
	while (i < end && is_name_char((unsigned char)p->s[i]))
		i++;
	if (i >= end || p->s[i] != '[')
		return 0;
	for (; i < end; i++) {
		char c = p->s[i];

		if (c == '\\') {
			i++;
		} else if (c == '\'' || c == '"') {
			size_t q = i++;

			while (i < end && p->s[i] != c)
				i += p->s[i] == '\\' && c == '"' ? 2 : 1;
			if (i >= end)
				return 0;
			(void)q;
		} else if (c == '[') {
			depth++;
		} else if (c == ']' && --depth == 0) {
			if (i + 1 < end && p->s[i + 1] == '=')
				return i;
			if (i + 2 < end && p->s[i + 1] == '+' && p->s[i + 2] == '=')
				return i;
			return 0;
		}
	}
	return 0;
}

/* Whether w is an assignment NAME=… (or NAME+=… in bash). */
static bool is_assignment(const struct P *p, const struct ward_sh_word *w)
{
	const struct ward_sh_part *pt;
	const char *eq;

	if (!w->n_parts)
		return false;
	if (subscript_end(p, w))
		return true;
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

/* bash: the subscript of an assignment NAME[…]=…, whose text the shell
 * expands with single quotes as plain characters (a['$(cmd)']=1 runs cmd):
 * a single quote there is refused. Marks the word. */
static bool subscript_assignment(struct P *p, struct ward_sh_word *w)
{
	size_t close = subscript_end(p, w), open;

	if (!close)
		return true;
	open = w->off + strcspn(p->s + w->off, "[");
	for (size_t i = open + 1; i < close; i++)
		if (p->s[i] == '\'') {
			fail(p, i, "single quote in an array subscript is not supported");
			return false;
		}
	w->flags |= WARD_SH_W_SUBSCRIPT;
	w->index_off = open + 1;
	w->index_len = close - open - 1;
	return true;
}

/* bash: NAME=( … ) after its "=" word: the elements, as argv words, up to
 * the ")". Keyed elements [k]=v keep their text; a single quote in the key
 * is refused as in NAME[k]=v. */
static bool parse_array_elems(struct P *p, struct ward_sh_word *w)
{
	struct vec elems = { .elt = sizeof(struct ward_sh_word) };

	ward_sh_consume(p); /* ( */
	for (;;) {
		struct tok *t = ward_sh_peek(p);

		if (p->failed)
			return false;
		if (t->t == T_NEWLINE) {
			ward_sh_consume(p);
			continue;
		}
		if (t->t == T_RPAREN) {
			w->len = t->off + 1 - w->off;
			ward_sh_consume(p);
			break;
		}
		if (t->t != T_WORD) {
			ward_sh_unexpected(p);
			return false;
		}
		if (p->s[t->off] == '[' && ward_sh_subscript_has_blank(p, t->off)) {
			/* bash reads ([ k ]=v) as one element */
			fail(p, t->off, "array subscript with a blank is not supported");
			return false;
		}
		if (p->s[t->off] == '[') {
			size_t i = t->off + 1, depth = 0;

			for (; i < t->off + t->len; i++) {
				if (p->s[i] == '\'') {
					fail(p, i, "single quote in an array subscript is not supported");
					return false;
				}
				if (p->s[i] == '[')
					depth++;
				if (p->s[i] == ']' && depth-- == 0)
					break;
			}
		}
		struct ward_sh_word *e = vpush(p->A, &elems);

		if (!e)
			return false;
		*e = *t->w;
		ward_sh_consume(p);
	}
	w->elems = elems.p;
	w->n_elems = elems.n;
	w->flags |= WARD_SH_W_ARRAY;
	return true;
}

/* Whether the next token opens NAME=( right after the word that ended at end. */
static bool array_opens(struct P *p, const struct ward_sh_word *w, size_t end)
{
	return BASH(p) && w->text_len && w->text[w->text_len - 1] == '=' &&
	       ward_sh_peek(p)->t == T_LPAREN && ward_sh_peek(p)->off == end;
}

static bool is_decl_builtin(const struct ward_sh_word *w)
{
	return ward_sh_word_is(w, "declare") || ward_sh_word_is(w, "typeset") ||
	       ward_sh_word_is(w, "local") || ward_sh_word_is(w, "readonly") ||
	       ward_sh_word_is(w, "export");
}

static struct ward_sh_node *parse_simple(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_SIMPLE, ward_sh_peek(p)->off);
	struct vec assigns = { .elt = sizeof(struct ward_sh_word) };
	struct vec words = { .elt = sizeof(struct ward_sh_word) };
	struct vec redirs = { .elt = sizeof(struct ward_sh_redir) };

	if (!n)
		return NULL;
	while (!p->failed) {
		struct tok *t = ward_sh_peek(p);

		if (t->t == T_REDIR) {
			if (!parse_redir(p, &redirs))
				return NULL;
			continue;
		}
		if (t->t != T_WORD)
			break;
		if (words.n == 0 && !assigns.n && t->w->n_parts &&
		    t->w->parts[0].kind == WARD_SH_P_GLOB && strcmp(t->w->parts[0].text, "!(") == 0) {
			/* bash reads `!(…)` here as `! (…)` without extglob, as a
			 * pattern naming the program with it */
			fail(p, t->off, "'!(' at a command's start (write '! (') is not supported");
			return NULL;
		}
		if (words.n == 0 && is_assignment(p, t->w)) {
			struct ward_sh_word *w = vpush(p->A, &assigns);
			size_t end;

			if (!w)
				return NULL;
			*w = *t->w;
			assignment_fixup(w);
			end = t->off + t->len;
			ward_sh_consume(p);
			if (!subscript_assignment(p, w))
				return NULL;
			if (array_opens(p, w, end)) {
				if (w->flags & WARD_SH_W_SUBSCRIPT) {
					fail(p, w->off, "syntax error: a list assigned to an array element");
					return NULL;
				}
				if (!parse_array_elems(p, w))
					return NULL;
			}
			continue;
		}
		struct ward_sh_word *w = vpush(p->A, &words);

		if (!w)
			return NULL;
		*w = *t->w;
		size_t end = t->off + t->len;

		ward_sh_consume(p);
		/* declare a=(…), local -a a=(…), declare a[k]=v */
		if (words.n > 1 && is_decl_builtin(&((struct ward_sh_word *)words.p)[0]) &&
		    is_assignment(p, w)) {
			assignment_fixup(w);
			if (!subscript_assignment(p, w))
				return NULL;
			if (array_opens(p, w, end) && !parse_array_elems(p, w))
				return NULL;
		}
	}
	if (p->failed)
		return NULL;
	if (!assigns.n && !words.n && !redirs.n) {
		ward_sh_unexpected(p);
		return NULL;
	}
	n->assigns = assigns.p;
	n->n_assigns = assigns.n;
	n->words = words.p;
	n->n_words = words.n;
	n->redirs = redirs.p;
	n->n_redirs = redirs.n;
	finish_node(p, n, cur_end(p));
	/* command alias ls=rm, builtin alias: the same definition */
	size_t a = 0;

	while (a + 1 < words.n && (ward_sh_word_is(&n->words[a], "command") ||
				   ward_sh_word_is(&n->words[a], "builtin") ||
				   (a && n->words[a].text[0] == '-')))
		a++;
	if (words.n && ward_sh_word_is(&n->words[a], "alias")) {
		for (size_t i = a + 1; i < words.n; i++)
			if (strchr(n->words[i].text, '=')) {
				fail(p, n->off, "alias definition is not supported");
				return NULL;
			}
	}
	return n;
}


static struct ward_sh_node *parse_if(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_IF, ward_sh_peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };

	if (!n)
		return NULL;
	ward_sh_consume(p); /* if */
	for (;;) {
		c = parse_body(p, "then");
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		c = parse_body(p, NULL);
		if (!c || !add_kid(p, n, &kids, c))
			return NULL;
		if (ward_sh_tok_is(p, "elif")) {
			ward_sh_consume(p);
			continue;
		}
		if (ward_sh_tok_is(p, "else")) {
			ward_sh_consume(p);
			c = parse_body(p, NULL);
			if (!c || !add_kid(p, n, &kids, c))
				return NULL;
			n->has_else = true;
		}
		if (!ward_sh_expect_word(p, "fi"))
			return NULL;
		break;
	}
	set_kids(n, &kids);
	return n;
}

static struct ward_sh_node *parse_loop(struct P *p, enum ward_sh_kind kind)
{
	struct ward_sh_node *n = new_node(p, kind, ward_sh_peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };

	if (!n)
		return NULL;
	ward_sh_consume(p);
	c = parse_body(p, "do");
	if (!c || !add_kid(p, n, &kids, c))
		return NULL;
	c = parse_body(p, "done");
	if (!c || !add_kid(p, n, &kids, c))
		return NULL;
	set_kids(n, &kids);
	return n;
}

/* bash: (( expr )) at off (the peeked token is its first "("). */
static struct ward_sh_node *parse_arith(struct P *p, size_t off)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_ARITH, off);
	struct ward_sh_word *w;

	if (!n)
		return NULL;
	ward_sh_consume(p);
	p->pos = off + 2;
	w = ward_sh_lex_arith(p, false);
	if (!w)
		return NULL;
	if (peekc(p, 0) != ')' || peekc(p, 1) != ')') {
		fail(p, off, "unterminated arithmetic command");
		return NULL;
	}
	p->pos += 2;
	n->words = w;
	n->n_words = 1;
	finish_node(p, n, p->pos);
	return n;
}

/* bash: for (( a; b; c )) — p->pos at the "((" */
static struct ward_sh_node *parse_arith_for(struct P *p, struct ward_sh_node *n)
{
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct ward_sh_word *ws = palloc(p, 3 * sizeof(*ws));
	struct ward_sh_node *c;
	size_t open = p->pos;

	if (!ws)
		return NULL;
	n->kind = WARD_SH_ARITH_FOR;
	p->pos += 2;
	for (int i = 0; i < 3; i++) {
		struct ward_sh_word *w = ward_sh_lex_arith(p, i < 2);

		if (!w)
			return NULL;
		ws[i] = *w;
		if (i < 2 && peekc(p, 0) != ';') {
			fail(p, open, "syntax error: expected ';' in for ((…))");
			return NULL;
		}
		if (i < 2)
			p->pos++;
	}
	if (peekc(p, 0) != ')' || peekc(p, 1) != ')') {
		fail(p, open, "unterminated for ((…))");
		return NULL;
	}
	p->pos += 2;
	n->words = ws;
	n->n_words = 3;
	if (ward_sh_peek(p)->t == T_SEMI)
		ward_sh_consume(p);
	ward_sh_skip_newlines(p);
	if (ward_sh_tok_is(p, "{")) {
		c = parse_command(p);
	} else {
		if (!ward_sh_expect_word(p, "do"))
			return NULL;
		c = parse_body(p, "done");
	}
	if (!c || !add_kid(p, n, &kids, c))
		return NULL;
	set_kids(n, &kids);
	return n;
}

static struct ward_sh_node *parse_for(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_FOR, ward_sh_peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct vec words = { .elt = sizeof(struct ward_sh_word) };
	struct tok *t;

	if (!n)
		return NULL;
	ward_sh_consume(p); /* for */
	ward_sh_skip_blanks(p);
	if (BASH(p) && peekc(p, 0) == '(' && peekc(p, 1) == '(' && !p->have_tok)
		return parse_arith_for(p, n);
	t = ward_sh_peek(p);
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
	ward_sh_consume(p);
	ward_sh_skip_newlines(p);
	if (ward_sh_tok_is(p, "in")) {
		ward_sh_consume(p);
		n->has_in = true;
		while (!p->failed && (t = ward_sh_peek(p))->t == T_WORD) {
			struct ward_sh_word *w = vpush(p->A, &words);

			if (!w)
				return NULL;
			*w = *t->w;
			ward_sh_consume(p);
		}
		t = ward_sh_peek(p);
		if (t->t != T_SEMI && t->t != T_NEWLINE) {
			ward_sh_unexpected(p);
			return NULL;
		}
		ward_sh_consume(p);
	} else if (ward_sh_peek(p)->t == T_SEMI) {
		ward_sh_consume(p);
	}
	ward_sh_skip_newlines(p);
	if (!ward_sh_expect_word(p, "do"))
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
	struct ward_sh_node *n = new_node(p, WARD_SH_CASE, ward_sh_peek(p)->off);
	struct vec items = { .elt = sizeof(struct ward_sh_case_item) };
	struct tok *t;

	if (!n)
		return NULL;
	ward_sh_consume(p); /* case */
	t = ward_sh_peek(p);
	if (t->t != T_WORD) {
		ward_sh_unexpected(p);
		return NULL;
	}
	n->subject = palloc(p, sizeof(*n->subject));
	if (!n->subject)
		return NULL;
	*n->subject = *t->w;
	ward_sh_consume(p);
	ward_sh_skip_newlines(p);
	if (!ward_sh_expect_word(p, "in"))
		return NULL;
	ward_sh_skip_newlines(p);
	while (!p->failed && !ward_sh_tok_is(p, "esac")) {
		struct ward_sh_case_item *it;

		if (ward_sh_peek(p)->t == T_EOF)
			break; /* expect_word below names what is missing */
		it = vpush(p->A, &items);
		struct vec pats = { .elt = sizeof(struct ward_sh_word) };

		if (!it)
			return NULL;
		t = ward_sh_peek(p);
		it->off = t->off;
		if (t->t == T_LPAREN) {
			ward_sh_consume(p);
			t = ward_sh_peek(p);
		}
		for (;;) {
			if (t->t != T_WORD) {
				ward_sh_unexpected(p);
				return NULL;
			}
			struct ward_sh_word *w = vpush(p->A, &pats);

			if (!w)
				return NULL;
			*w = *t->w;
			ward_sh_consume(p);
			t = ward_sh_peek(p);
			if (t->t == T_PIPE) {
				ward_sh_consume(p);
				t = ward_sh_peek(p);
				continue;
			}
			break;
		}
		if (t->t != T_RPAREN) {
			if (!p->failed) {
				char d[64];

				ward_sh_tok_desc(p, t, d, sizeof(d));
				fail(p, t->off, "syntax error: expected ')' but found %s", d);
			}
			return NULL;
		}
		ward_sh_consume(p);
		it->patterns = pats.p;
		it->n_patterns = pats.n;
		it->body = parse_list(p, ward_sh_peek(p)->off);
		if (!it->body)
			return NULL;
		it->body->parent = n;
		t = ward_sh_peek(p);
		it->end = WARD_SH_CASE_BREAK;
		if (t->t == T_DSEMI || t->t == T_SEMI_AMP || t->t == T_DSEMI_AMP) {
			it->end = t->t == T_DSEMI ? WARD_SH_CASE_BREAK :
				  t->t == T_SEMI_AMP ? WARD_SH_CASE_FALL : WARD_SH_CASE_CONT;
			ward_sh_consume(p);
			it->len = cur_end(p) - it->off;
			ward_sh_skip_newlines(p);
		} else {
			it->len = cur_end(p) - it->off;
			if (!ward_sh_tok_is(p, "esac")) {
				if (!p->failed)
					ward_sh_expect_word(p, "esac");
				return NULL;
			}
		}
	}
	if (!ward_sh_expect_word(p, "esac"))
		return NULL;
	n->items = items.p;
	n->n_items = items.n;
	return n;
}

static struct ward_sh_node *parse_cond(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_COND, ward_sh_peek(p)->off);
	struct vec words = { .elt = sizeof(struct ward_sh_word) };

	if (!n)
		return NULL;
	ward_sh_consume(p); /* [[ */
	for (;;) {
		struct tok *t = ward_sh_peek(p);
		struct ward_sh_word *w;

		if (p->failed)
			return NULL;
		if (t->t == T_NEWLINE) {
			ward_sh_consume(p);
			continue;
		}
		if (t->t == T_WORD && ward_sh_word_is(t->w, "]]")) {
			ward_sh_consume(p);
			break;
		}
		if (t->t == T_EOF) {
			fail(p, n->off, "unterminated [[");
			return NULL;
		}
		w = vpush(p->A, &words);
		if (!w)
			return NULL;
		if (t->t == T_WORD && ward_sh_word_is(t->w, "=~")) {
			*w = *t->w;
			ward_sh_consume(p);
			if (p->have_tok) {
				fail(p, t->off, "syntax error: unexpected token after '=~'");
				return NULL;
			}
			struct ward_sh_word *re = ward_sh_lex_regex(p);

			if (!re)
				return NULL;
			w = vpush(p->A, &words);
			if (!w)
				return NULL;
			*w = *re;
			continue;
		} else if (t->t == T_WORD) {
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
			ward_sh_unexpected(p);
			return NULL;
		}
		ward_sh_consume(p);
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
	ward_sh_skip_newlines(p);
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

/* bash: coproc [NAME] command. NAME only before a compound command. */
static struct ward_sh_node *parse_coproc(struct P *p)
{
	struct ward_sh_node *n = new_node(p, WARD_SH_COPROC, ward_sh_peek(p)->off), *c;
	struct vec kids = { .elt = sizeof(struct ward_sh_node *) };
	struct tok *t;

	if (!n)
		return NULL;
	ward_sh_consume(p);
	t = ward_sh_peek(p);
	if (t->t == T_WORD && valid_name(t->w->text) && !(t->w->flags & WARD_SH_W_QUOTED)) {
		static const char *const compound[] = { "{", "if", "while", "until", "for", "case",
							"select", "[[", NULL };
		size_t i = p->pos;
		bool named = false;

		while (i < p->n && is_blank((unsigned char)p->s[i]))
			i++;
		if (i < p->n && p->s[i] == '(')
			named = true;
		for (int k = 0; compound[k] && !named; k++) {
			size_t l = strlen(compound[k]);

			if (strncmp(p->s + i, compound[k], l) == 0 &&
			    (i + l >= p->n || is_delim((unsigned char)p->s[i + l])))
				named = true;
		}
		if (named) {
			n->name = palloc(p, sizeof(*n->name));
			if (!n->name)
				return NULL;
			*n->name = *t->w;
			ward_sh_consume(p);
		}
	}
	c = parse_command(p);
	if (!c || !add_kid(p, n, &kids, c))
		return NULL;
	set_kids(n, &kids);
	finish_node(p, n, c->off + c->len);
	return n;
}

static struct ward_sh_node *parse_command(struct P *p)
{
	struct tok *t = ward_sh_peek(p);
	struct ward_sh_node *n = NULL;
	size_t off = t->off;

	if (p->failed)
		return NULL;
	if (!enter(p, off))
		return NULL;
	if (t->t == T_LPAREN && BASH(p) && off + 1 < p->n && p->s[off + 1] == '(' &&
	    ward_sh_arith_ahead(p, off)) {
		n = parse_arith(p, off);
	} else if (t->t == T_LPAREN) {
		ward_sh_consume(p);
		n = new_node(p, WARD_SH_SUBSHELL, off);
		if (!n)
			return NULL;
		struct ward_sh_node *body = parse_list(p, ward_sh_peek(p)->off);

		if (!body)
			return NULL;
		if (body->n_kids == 0) {
			ward_sh_unexpected(p);
			return NULL;
		}
		if (ward_sh_peek(p)->t != T_RPAREN) {
			ward_sh_unexpected(p);
			return NULL;
		}
		ward_sh_consume(p);
		n->kids = palloc(p, sizeof(*n->kids));
		if (!n->kids)
			return NULL;
		n->kids[0] = body;
		n->n_kids = 1;
		body->parent = n;
	} else if (t->t == T_WORD && ward_sh_tok_is(p, "{")) {
		ward_sh_consume(p);
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
	} else if (ward_sh_tok_is(p, "if")) {
		n = parse_if(p);
	} else if (ward_sh_tok_is(p, "for")) {
		n = parse_for(p);
	} else if (ward_sh_tok_is(p, "while")) {
		n = parse_loop(p, WARD_SH_WHILE);
	} else if (ward_sh_tok_is(p, "until")) {
		n = parse_loop(p, WARD_SH_UNTIL);
	} else if (ward_sh_tok_is(p, "case")) {
		n = parse_case(p);
	} else if (BASH(p) && ward_sh_tok_is(p, "[[")) {
		n = parse_cond(p);
	} else if (BASH(p) && ward_sh_tok_is(p, "select")) {
		n = parse_for(p);
		if (n)
			n->kind = WARD_SH_SELECT;
	} else if (BASH(p) && ward_sh_tok_is(p, "coproc")) {
		n = parse_coproc(p);
	} else if (BASH(p) && ward_sh_tok_is(p, "function")) {
		ward_sh_consume(p);
		t = ward_sh_peek(p);
		if (t->t != T_WORD) {
			ward_sh_unexpected(p);
			return NULL;
		}
		struct ward_sh_word *name = palloc(p, sizeof(*name));

		if (!name)
			return NULL;
		*name = *t->w;
		ward_sh_consume(p);
		if (ward_sh_peek(p)->t == T_LPAREN) {
			ward_sh_consume(p);
			if (ward_sh_peek(p)->t != T_RPAREN) {
				ward_sh_unexpected(p);
				return NULL;
			}
			ward_sh_consume(p);
		}
		n = parse_function(p, name, off);
		p->depth--;
		return n;
	} else if (ward_sh_at_stop_word(p)) {
		ward_sh_unexpected(p);
		return NULL;
	} else if (t->t == T_WORD || t->t == T_REDIR) {
		/* NAME ( ) compound: a function definition */
		if (t->t == T_WORD && !is_assignment(p, t->w)) {
			struct ward_sh_word *w = t->w;

			/* look past the word for "( )" without lexing tokens: a newline
			 * token would read pending here-document bodies */
			size_t save_pos = p->pos;

			ward_sh_skip_blanks(p);
			if (peekc(p, 0) == '(') {
				p->pos++;
				ward_sh_skip_blanks(p);
				if (peekc(p, 0) != ')') {
					fail(p, p->pos, "syntax error: expected ')' of a function definition");
					return NULL;
				}
				p->pos++;
				ward_sh_consume(p);
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
		ward_sh_unexpected(p);
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
struct ward_sh_node *ward_sh_parse_sub(struct P *p, size_t open_off, const char *what)
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
	struct tok *t = ward_sh_peek(p);

	if (what) {
		if (t->t == T_EOF) {
			if (!p->failed)
				fail(p, open_off, "unterminated %s", what);
			return NULL;
		}
		if (t->t != T_RPAREN) {
			ward_sh_unexpected(p);
			return NULL;
		}
	} else if (t->t != T_EOF) {
		ward_sh_unexpected(p);
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


static void fix_bodies_word(struct ward_sh_word *w)
{
	for (size_t i = 0; i < w->n_parts; i++) {
		struct ward_sh_part *pt = &w->parts[i];

		if (pt->sub)
			ward_sh_fix_bodies_node(pt->sub);
		if (pt->arg)
			fix_bodies_word(pt->arg);
		if (pt->index)
			fix_bodies_word(pt->index);
	}
	for (size_t i = 0; i < w->n_elems; i++)
		fix_bodies_word(&w->elems[i]);
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

void ward_sh_fix_bodies_node(struct ward_sh_node *n)
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
		ward_sh_fix_bodies_node(n->items[i].body);
	}
	for (i = 0; i < n->n_kids; i++)
		ward_sh_fix_bodies_node(n->kids[i]);
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
			ward_sh_remap_node(pt->sub, map, mlen);
		if (pt->arg)
			remap_word(pt->arg, map, mlen);
		if (pt->index)
			remap_word(pt->index, map, mlen);
	}
	for (size_t i = 0; i < w->n_elems; i++)
		remap_word(&w->elems[i], map, mlen);
	if (w->index_len)
		remap_span(&w->index_off, &w->index_len, map, mlen);
}

void ward_sh_remap_node(struct ward_sh_node *n, const size_t *map, size_t mlen)
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
		ward_sh_remap_node(n->items[i].body, map, mlen);
	}
	for (i = 0; i < n->n_kids; i++)
		ward_sh_remap_node(n->kids[i], map, mlen);
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
	if (!p.failed && ward_sh_peek(&p)->t != T_EOF)
		ward_sh_unexpected(&p);
	if (!p.failed && p.hd.n) {
		struct ward_sh_redir *r = ((struct ward_sh_redir **)p.hd.p)[0];

		/* a here-document on the last line with no newline after it */
		(void)r;
		p.pos = p.n;
		ward_sh_read_heredocs(&p);
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
	ward_sh_fix_bodies_node(t->root);
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
	case WARD_SH_ARITH: return "arithmetic command";
	case WARD_SH_ARITH_FOR: return "arithmetic for loop";
	case WARD_SH_SELECT: return "select";
	case WARD_SH_COPROC: return "coproc";
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

		if (pt->index && (r = v_word(c, pt->index)))
			return r;
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
	for (size_t i = 0; i < w->n_elems; i++)
		if ((r = v_word(c, &w->elems[i])))
			return r;
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
