/* shell-internal.h — what the shell lexer (lexer.c) and parser (parser.c)
 * share: the arena a tree lives in, the parser's state and tokens, and the
 * functions each calls in the other. The small helpers are static inline so
 * that each file compiles them as the single file did. Pure code. */
#ifndef WARD_SHELL_INTERNAL_H
#define WARD_SHELL_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/shparse.h"

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

static inline void *aalloc(struct arena *a, size_t size)
{
	struct block *b = a->head;
	size_t need = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);

	if (need == 0)
		need = sizeof(max_align_t);
	if (!b || b->size - b->used < need) {
		size_t bsize = need > 16384 ? need : 16384;

		/* not calloc: zeroing the whole block would touch (fault in)
		 * every page of it, where a short command uses the first few
		 * hundred bytes; each allocation is zeroed as it is handed out */
		b = malloc(sizeof(*b) + bsize);
		if (!b) {
			a->oom = true;
			return NULL;
		}
		b->size = bsize;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	void *r = (char *)b->data + b->used;
	b->used += need;
	return memset(r, 0, need);
}

static inline void arena_free(struct arena *a)
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

static inline void *vpush(struct arena *a, struct vec *v)
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

static inline bool sput(struct arena *a, struct sbuf *s, const char *d, size_t len)
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

static inline char *sfinish(struct arena *a, struct sbuf *s)
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

static inline void fail(struct P *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline void fail(struct P *p, size_t off, const char *fmt, ...)
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

static inline void *palloc(struct P *p, size_t size)
{
	void *r = aalloc(p->A, size);

	if (!r && !p->failed) {
		p->nomem = true;
		fail(p, p->pos, "out of memory");
	}
	return r;
}

static inline int peekc(const struct P *p, size_t i)
{
	return p->pos + i < p->n ? (unsigned char)p->s[p->pos + i] : -1;
}

static inline bool is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static inline bool is_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* Characters that end an unquoted word. */
static inline bool is_delim(int c)
{
	return c < 0 || c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
	       c == '(' || c == ')' || c == '<' || c == '>';
}

static inline bool enter(struct P *p, size_t off)
{
	if (++p->depth > WARD_SH_MAX_DEPTH) {
		fail(p, off, "nesting too deep");
		return false;
	}
	return true;
}

/* ---- lexer.c: words, tokens and heredocs ---------------------------------------- */

bool ward_sh_arith_ahead(const struct P *p, size_t i);
bool ward_sh_subscript_has_blank(const struct P *p, size_t at);
struct ward_sh_word *ward_sh_lex_arith(struct P *p, bool in_for);
struct ward_sh_word *ward_sh_lex_regex(struct P *p);
bool ward_sh_at_stop_word(struct P *p);
void ward_sh_consume(struct P *p);
bool ward_sh_expect_word(struct P *p, const char *kw);
struct tok *ward_sh_peek(struct P *p);
void ward_sh_read_heredocs(struct P *p);
void ward_sh_skip_blanks(struct P *p);
void ward_sh_skip_newlines(struct P *p);
void ward_sh_tok_desc(struct P *p, const struct tok *t, char *buf, size_t size);
bool ward_sh_tok_is(struct P *p, const char *kw);
void ward_sh_unexpected(struct P *p);
bool ward_sh_word_is(const struct ward_sh_word *w, const char *kw);

/* ---- parser.c: what the lexer calls back (substitutions are parsed as they are lexed) ---- */

void ward_sh_fix_bodies_node(struct ward_sh_node *n);
struct ward_sh_node *ward_sh_parse_sub(struct P *p, size_t open_off, const char *what);
void ward_sh_remap_node(struct ward_sh_node *n, const size_t *map, size_t mlen);

#endif
