/* shdump.h — a compact text form of a parsed shell tree, for tests.
 *
 *   words        text as the parser resolved it; <…> around a word with a
 *                blank, or an empty one
 *   simple       "a b 2>&1 >f"; assignments first
 *   list         items each followed by ";", "&", "\n" as "⏎" → "NL"
 *   pipeline     "(a | b)", "(! a)"; and-or "(a && b || c)"
 *   compounds    sub(…) brace(…) if(c)then(t)elif(c)then(t)else(e)
 *                for x in(a b)do(…) while(c)do(b) until(c)do(b)
 *                case w in(p|q)=>(…);; fn name(…) [[ … ]]
 *                ((expr)) for((a;b;c))do(…) select x in(a)do(…) coproc N(…)
 *                arrays: a=(x y) as "a=(x y)"
 *
 * shdump_cmds() lists every simple command the visitor reports, "/"-separated.
 */
#ifndef WARD_TEST_SHDUMP_H
#define WARD_TEST_SHDUMP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/shparse.h"

struct shdump {
	char *p;
	size_t n, cap;
};

static void sd_put(struct shdump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sd_put(struct shdump *d, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(d->p ? d->p + d->n : NULL, d->p ? d->cap - d->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (d->p && d->n + (size_t)k < d->cap) {
			d->n += (size_t)k;
			return;
		}
		d->cap = d->cap * 2 + (size_t)k + 64;
		d->p = realloc(d->p, d->cap);
		if (!d->p)
			abort();
	}
}

static void sd_word(struct shdump *d, const struct ward_sh_word *w)
{
	if (w->text_len == 0 || strpbrk(w->text, " \t\n") || strlen(w->text) != w->text_len)
		sd_put(d, "<%s>", w->text);
	else
		sd_put(d, "%s", w->text);
	if (w->flags & WARD_SH_W_ARRAY) {
		sd_put(d, "(");
		for (size_t i = 0; i < w->n_elems; i++)
			sd_put(d, "%s", i ? " " : ""), sd_word(d, &w->elems[i]);
		sd_put(d, ")");
	}
}

static void sd_node(struct shdump *d, const struct ward_sh_node *n);

static void sd_redir(struct shdump *d, const struct ward_sh_redir *r)
{
	if (r->op == WARD_SH_R_OUT_ERR || r->op == WARD_SH_R_APPEND_OUT_ERR)
		sd_put(d, "%s", ward_sh_redir_str(r->op));
	else
		sd_put(d, "%d%s", r->fd, ward_sh_redir_str(r->op));
	if (r->op == WARD_SH_R_HEREDOC)
		sd_put(d, "%s%s%s[%s]", r->strip_tabs ? "-" : "", r->quoted_delim ? "q:" : "",
		       r->target.text, r->body.text);
	else
		sd_word(d, &r->target);
}

static void sd_list(struct shdump *d, const struct ward_sh_node *n)
{
	for (size_t i = 0; i < n->n_kids; i++) {
		if (i)
			sd_put(d, " ");
		sd_node(d, n->kids[i]);
		if (n->ops[i] != WARD_SH_OP_END)
			sd_put(d, "%s", n->ops[i] == WARD_SH_OP_NEWLINE ? "NL" : ward_sh_op_str(n->ops[i]));
	}
}

static void sd_node(struct shdump *d, const struct ward_sh_node *n)
{
	size_t i, j;
	bool sp = false;

	switch (n->kind) {
	case WARD_SH_SIMPLE:
		for (i = 0; i < n->n_assigns; i++, sp = true)
			sd_put(d, "%s", sp ? " " : ""), sd_word(d, &n->assigns[i]);
		for (i = 0; i < n->n_words; i++, sp = true)
			sd_put(d, "%s", sp ? " " : ""), sd_word(d, &n->words[i]);
		break;
	case WARD_SH_PIPELINE:
	case WARD_SH_AND_OR:
		sd_put(d, "(%s", n->bang ? "! " : "");
		for (i = 0; i < n->n_kids; i++) {
			if (i)
				sd_put(d, " %s ", ward_sh_op_str(n->ops[i - 1]));
			sd_node(d, n->kids[i]);
		}
		sd_put(d, ")");
		break;
	case WARD_SH_LIST:
		sd_list(d, n);
		break;
	case WARD_SH_SUBSHELL:
	case WARD_SH_BRACE:
		sd_put(d, "%s(", n->kind == WARD_SH_SUBSHELL ? "sub" : "brace");
		sd_node(d, n->kids[0]);
		sd_put(d, ")");
		break;
	case WARD_SH_IF:
		for (i = 0; i + 1 < n->n_kids; i += 2) {
			sd_put(d, "%s(", i ? "elif" : "if");
			sd_node(d, n->kids[i]);
			sd_put(d, ")then(");
			sd_node(d, n->kids[i + 1]);
			sd_put(d, ")");
		}
		if (n->has_else) {
			sd_put(d, "else(");
			sd_node(d, n->kids[n->n_kids - 1]);
			sd_put(d, ")");
		}
		break;
	case WARD_SH_FOR:
		sd_put(d, "for %s", n->name->text);
		if (n->has_in) {
			sd_put(d, " in(");
			for (i = 0; i < n->n_words; i++)
				sd_put(d, "%s", i ? " " : ""), sd_word(d, &n->words[i]);
			sd_put(d, ")");
		}
		sd_put(d, "do(");
		sd_node(d, n->kids[0]);
		sd_put(d, ")");
		break;
	case WARD_SH_WHILE:
	case WARD_SH_UNTIL:
		sd_put(d, "%s(", n->kind == WARD_SH_WHILE ? "while" : "until");
		sd_node(d, n->kids[0]);
		sd_put(d, ")do(");
		sd_node(d, n->kids[1]);
		sd_put(d, ")");
		break;
	case WARD_SH_CASE:
		sd_put(d, "case ");
		sd_word(d, n->subject);
		sd_put(d, " in");
		for (i = 0; i < n->n_items; i++) {
			sd_put(d, "(");
			for (j = 0; j < n->items[i].n_patterns; j++)
				sd_put(d, "%s", j ? "|" : ""), sd_word(d, &n->items[i].patterns[j]);
			sd_put(d, ")=>(");
			sd_node(d, n->items[i].body);
			sd_put(d, ")%s", n->items[i].end == WARD_SH_CASE_BREAK ? ";;" :
				  n->items[i].end == WARD_SH_CASE_FALL ? ";&" : ";;&");
		}
		break;
	case WARD_SH_FUNCTION:
		sd_put(d, "fn %s(", n->name->text);
		sd_node(d, n->kids[0]);
		sd_put(d, ")");
		break;
	case WARD_SH_ARITH:
		sd_put(d, "((");
		sd_word(d, &n->words[0]);
		sd_put(d, "))");
		break;
	case WARD_SH_ARITH_FOR:
		sd_put(d, "for((");
		for (i = 0; i < 3; i++)
			sd_put(d, "%s", i ? ";" : ""), sd_word(d, &n->words[i]);
		sd_put(d, "))do(");
		sd_node(d, n->kids[0]);
		sd_put(d, ")");
		break;
	case WARD_SH_SELECT:
		sd_put(d, "select %s in(", n->name->text);
		for (i = 0; i < n->n_words; i++)
			sd_put(d, "%s", i ? " " : ""), sd_word(d, &n->words[i]);
		sd_put(d, ")do(");
		sd_node(d, n->kids[0]);
		sd_put(d, ")");
		break;
	case WARD_SH_COPROC:
		sd_put(d, "coproc %s(", n->name ? n->name->text : "");
		sd_node(d, n->kids[0]);
		sd_put(d, ")");
		break;
	case WARD_SH_COND:
		sd_put(d, "[[");
		for (i = 0; i < n->n_words; i++)
			sd_put(d, " "), sd_word(d, &n->words[i]);
		sd_put(d, " ]]");
		break;
	}
	for (i = 0; i < n->n_redirs; i++) {
		if (n->kind == WARD_SH_SIMPLE ? (n->n_words || n->n_assigns || i) : true)
			sd_put(d, " ");
		sd_redir(d, &n->redirs[i]);
	}
}

/* malloc'd */
static inline char *shdump_tree(const struct ward_sh_tree *t)
{
	struct shdump d = { 0 };

	sd_put(&d, "%s", "");
	sd_node(&d, t->root);
	return d.p;
}

static int sd_visit(const struct ward_sh_node *n, const struct ward_sh_visit_info *info, void *data)
{
	struct shdump *d = data;

	if (d->n)
		sd_put(d, " / ");
	for (size_t i = 0; i < n->n_words; i++)
		sd_put(d, "%s", i ? " " : ""), sd_word(d, &n->words[i]);
	if (!n->n_words)
		sd_put(d, "-");
	return 0;
}

static inline char *shdump_cmds(const struct ward_sh_tree *t)
{
	struct shdump d = { 0 };

	sd_put(&d, "%s", "");
	d.n = 0;
	ward_sh_visit_commands(t, sd_visit, &d);
	return d.p;
}

#endif
