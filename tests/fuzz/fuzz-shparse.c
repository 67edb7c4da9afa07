/* fuzz-shparse.c — libFuzzer target for the shell parser: parse in both
 * dialects, walk every node and command, build the no-shell chain and expand
 * its words. Any crash, leak or sanitizer report is a bug. `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ward/shparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
	const struct ward_sh_tree *t;
	size_t sum;
};

/* bash: array elements and subscripts, read as a validator reads them */
static size_t touch_word(const struct ward_sh_word *w)
{
	size_t sum = w->text_len + w->off + w->len + w->index_off + w->index_len;

	for (size_t i = 0; i < w->n_elems; i++)
		sum += touch_word(&w->elems[i]);
	for (size_t i = 0; i < w->n_parts; i++) {
		if (w->parts[i].index)
			sum += touch_word(w->parts[i].index);
		if (w->parts[i].arg)
			sum += touch_word(w->parts[i].arg);
	}
	return sum;
}

static int touch(const struct ward_sh_node *n, const struct ward_sh_visit_info *info, void *data)
{
	struct walk *wk = data;
	size_t *sum = &wk->sum;

	/* read what a validator reads */
	for (size_t i = 0; i < n->n_words; i++) {
		char **v;
		size_t nv;
		struct ward_error *err = NULL;

		*sum += strlen(n->words[i].text) + n->words[i].off + n->words[i].len;
		*sum += touch_word(&n->words[i]);
		if (ward_sh_word_brace_expand(wk->t, &n->words[i], &v, &nv, &err) == 0)
			ward_sh_strv_free(v, nv);
		else
			ward_error_free(err);
	}
	for (size_t i = 0; i < n->n_assigns; i++)
		*sum += touch_word(&n->assigns[i]);
	for (size_t i = 0; i < n->n_redirs; i++)
		*sum += n->redirs[i].target.text_len + n->redirs[i].body.text_len;
	*sum += n->off + n->len + info->sub_depth;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *env[] = { "HOME=/h", "X=x y", NULL };

	for (unsigned flags = 0; flags <= WARD_SH_POSIX; flags += WARD_SH_POSIX) {
		struct ward_sh_tree *t = NULL;
		struct ward_sh_chain *c = NULL;
		struct ward_error *err = NULL;
		struct walk wk = { 0 };

		if (ward_sh_parse((const char *)data, size, flags, &t, &err) < 0) {
			/* an error always names a position inside or just after the input */
			if (!err || !strstr(err->message, " at ") && !strstr(err->message, "too long"))
				abort();
			ward_error_free(err);
			continue;
		}
		wk.t = t;
		ward_sh_visit_commands(t, touch, &wk);
		ward_sh_visit_nodes(t, touch, &wk);
		if (ward_sh_chain_build(t, &c, &err) == 0) {
			for (size_t i = 0; i < c->n_segs; i++)
				for (size_t k = 0; k < c->segs[i].n_words; k++) {
					char *s = NULL;
					bool dropped;

					if (ward_sh_word_expand(&c->segs[i].words[k], env, &s, &dropped,
								&err) < 0) {
						ward_error_free(err);
						err = NULL;
					}
					free(s);
				}
			ward_sh_chain_free(c);
		} else {
			ward_error_free(err);
		}
		ward_sh_tree_free(t);
	}
	return 0;
}
