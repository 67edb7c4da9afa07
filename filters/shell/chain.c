/* chain.c — the flat chain --no-shell mode runs (ward/shparse.h), and the
 * expansion of its words. */
#include "ward/shparse.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define NOSHELL "is not supported in --no-shell mode"

static int refuse(struct ward_error **err, size_t off, const char *what)
{
	return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "%s " NOSHELL " at %zu",
				    what, off + 1);
}

static bool plain_name(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* Whether a word holds only literals and $NAME / ${NAME}. */
static int check_word(const struct ward_sh_word *w, struct ward_error **err)
{
	if (w->flags & WARD_SH_W_BRACE)
		return refuse(err, w->off, "brace expansion");
	for (size_t i = 0; i < w->n_parts; i++) {
		const struct ward_sh_part *pt = &w->parts[i];

		switch (pt->kind) {
		case WARD_SH_P_LITERAL:
			break;
		case WARD_SH_P_PARAM:
			if (pt->op[0])
				return refuse(err, pt->off, "parameter expansion with an operator");
			if (!plain_name(pt->text)) {
				char what[64];

				snprintf(what, sizeof(what), "special parameter '$%s'", pt->text);
				return refuse(err, pt->off, what);
			}
			break;
		case WARD_SH_P_CMDSUB:
			return refuse(err, pt->off, "command substitution");
		case WARD_SH_P_ARITH:
			return refuse(err, pt->off, "arithmetic expansion");
		case WARD_SH_P_PROCSUB:
			return refuse(err, pt->off, "process substitution");
		case WARD_SH_P_TILDE:
			return refuse(err, pt->off, "tilde expansion");
		case WARD_SH_P_GLOB:
			return refuse(err, pt->off, "glob");
		}
	}
	return 0;
}

static int check_simple(const struct ward_sh_node *n, struct ward_error **err)
{
	size_t i;

	for (i = 0; i < n->n_assigns; i++)
		if (check_word(&n->assigns[i], err) < 0)
			return -1;
	for (i = 0; i < n->n_words; i++)
		if (check_word(&n->words[i], err) < 0)
			return -1;
	for (i = 0; i < n->n_redirs; i++) {
		const struct ward_sh_redir *r = &n->redirs[i];

		if (r->op == WARD_SH_R_HEREDOC)
			return refuse(err, r->off, "here-document");
		if (r->op == WARD_SH_R_HERESTRING)
			return refuse(err, r->off, "here-string");
		if (r->fd > 9)
			return refuse(err, r->off, "a file descriptor above 9");
		if ((r->op == WARD_SH_R_DUP_IN || r->op == WARD_SH_R_DUP_OUT) &&
		    (r->dup_fd == -2 || r->dup_fd > 9))
			return refuse(err, r->target.off, "a redirection to this file descriptor");
		if (check_word(&r->target, err) < 0)
			return -1;
	}
	if (!n->n_words)
		return refuse(err, n->off, n->n_assigns ? "an assignment without a command" :
							  "a redirection without a command");
	return 0;
}

struct build {
	struct ward_sh_segment *segs;
	size_t n, cap;
};

static int add_seg(struct build *b, const struct ward_sh_node *n, struct ward_error **err)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 8;
		struct ward_sh_segment *s = realloc(b->segs, nc * sizeof(*s));

		if (!s)
			return ward_error_make(err, ENOMEM, "chain");
		b->segs = s;
		b->cap = nc;
	}
	struct ward_sh_segment *s = &b->segs[b->n++];

	memset(s, 0, sizeof(*s));
	s->off = n->off;
	s->len = n->len;
	s->assigns = n->assigns;
	s->n_assigns = n->n_assigns;
	s->words = n->words;
	s->n_words = n->n_words;
	s->redirs = n->redirs;
	s->n_redirs = n->n_redirs;
	s->op = WARD_SH_OP_END;
	return 0;
}

static int not_simple(const struct ward_sh_node *n, struct ward_error **err)
{
	return refuse(err, n->off, ward_sh_kind_name(n->kind));
}

static int add_pipeline(struct build *b, const struct ward_sh_node *n, struct ward_error **err)
{
	if (n->kind == WARD_SH_SIMPLE) {
		if (check_simple(n, err) < 0)
			return -1;
		return add_seg(b, n, err);
	}
	if (n->kind != WARD_SH_PIPELINE)
		return not_simple(n, err);
	if (n->bang)
		return refuse(err, n->off, "pipeline negation '!'");
	for (size_t i = 0; i < n->n_kids; i++) {
		if (n->kids[i]->kind != WARD_SH_SIMPLE)
			return not_simple(n->kids[i], err);
		if (check_simple(n->kids[i], err) < 0 || add_seg(b, n->kids[i], err) < 0)
			return -1;
		if (i + 1 < n->n_kids) {
			if (n->ops[i] == WARD_SH_OP_PIPE_ERR)
				return refuse(err, n->op_offs[i], "'|&'");
			b->segs[b->n - 1].op = WARD_SH_OP_PIPE;
			b->segs[b->n - 1].op_off = n->op_offs[i];
		}
	}
	return 0;
}

int ward_sh_chain_build(const struct ward_sh_tree *t, struct ward_sh_chain **out,
			struct ward_error **err)
{
	struct build b = { 0 };
	const struct ward_sh_node *root = t->root;
	size_t i, j;

	*out = NULL;
	if (!root || root->n_kids == 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "empty command");
	for (i = 0; i < root->n_kids; i++) {
		const struct ward_sh_node *item = root->kids[i];

		if (root->ops[i] == WARD_SH_OP_AMP) {
			refuse(err, root->op_offs[i], "background job '&'");
			goto fail;
		}
		if (item->kind == WARD_SH_AND_OR) {
			for (j = 0; j < item->n_kids; j++) {
				if (add_pipeline(&b, item->kids[j], err) < 0)
					goto fail;
				if (j + 1 < item->n_kids) {
					b.segs[b.n - 1].op = item->ops[j];
					b.segs[b.n - 1].op_off = item->op_offs[j];
				}
			}
		} else if (add_pipeline(&b, item, err) < 0) {
			goto fail;
		}
		if (i + 1 < root->n_kids) {
			b.segs[b.n - 1].op = root->ops[i];
			b.segs[b.n - 1].op_off = root->op_offs[i];
		}
	}
	*out = calloc(1, sizeof(**out));
	if (!*out) {
		ward_error_make(err, ENOMEM, "chain");
		goto fail;
	}
	(*out)->segs = b.segs;
	(*out)->n_segs = b.n;
	return 0;
fail:
	free(b.segs);
	return -1;
}

void ward_sh_chain_free(struct ward_sh_chain *c)
{
	if (!c)
		return;
	free(c->segs);
	free(c);
}

static const char *lookup(char *const envp[], const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
			return envp[i] + len + 1;
	return "";
}

int ward_sh_word_expand(const struct ward_sh_word *w, char *const envp[], char **out,
			bool *dropped, struct ward_error **err)
{
	size_t len = 0, cap = 64, i;
	char *buf;
	bool only_unquoted_params = w->n_parts > 0;

	*out = NULL;
	if (dropped)
		*dropped = false;
	if (check_word(w, err) < 0)
		return -1;
	buf = malloc(cap);
	if (!buf)
		return ward_error_make(err, ENOMEM, "expand");
	for (i = 0; i < w->n_parts; i++) {
		const struct ward_sh_part *pt = &w->parts[i];
		const char *s;
		size_t n;

		if (pt->kind == WARD_SH_P_LITERAL) {
			s = pt->text;
			n = pt->text_len;
			only_unquoted_params = false;
		} else {
			s = lookup(envp, pt->text);
			n = strlen(s);
			if (pt->quote != WARD_SH_Q_NONE)
				only_unquoted_params = false;
		}
		if (memchr(s, '\0', n)) {
			free(buf);
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "nul byte in an argument at %zu", pt->off + 1);
		}
		if (len + n + 1 > cap) {
			while (len + n + 1 > cap)
				cap *= 2;
			char *nb = realloc(buf, cap);

			if (!nb) {
				free(buf);
				return ward_error_make(err, ENOMEM, "expand");
			}
			buf = nb;
		}
		memcpy(buf + len, s, n);
		len += n;
	}
	buf[len] = '\0';
	if (dropped && only_unquoted_params && len == 0)
		*dropped = true;
	*out = buf;
	return 0;
}
