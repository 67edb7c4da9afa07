/* shparse.c — the shell parser (ward/shparse.h). */
#include "ward/shparse.h"

#include <errno.h>
#include <stdlib.h>

int ward_sh_parse(const char *src, size_t len, unsigned flags, struct ward_sh_tree **out,
		  struct ward_error **err)
{
	*out = NULL;
	return ward_error_make_kind(err, WARD_ERR_EXECUTION_FAILED, ENOSYS, "shell parser");
}

void ward_sh_tree_free(struct ward_sh_tree *t)
{
	free(t);
}

int ward_sh_visit_commands(const struct ward_sh_tree *t, ward_sh_visit_fn fn, void *data)
{
	return 0;
}

int ward_sh_visit_nodes(const struct ward_sh_tree *t, ward_sh_visit_fn fn, void *data)
{
	return 0;
}

const char *ward_sh_kind_name(enum ward_sh_kind kind)
{
	return "";
}

const char *ward_sh_op_str(enum ward_sh_op op)
{
	return "";
}

const char *ward_sh_redir_str(enum ward_sh_redir_op op)
{
	return "";
}

int ward_sh_chain_build(const struct ward_sh_tree *t, struct ward_sh_chain **out,
			struct ward_error **err)
{
	*out = NULL;
	return ward_error_make_kind(err, WARD_ERR_EXECUTION_FAILED, ENOSYS, "shell chain");
}

void ward_sh_chain_free(struct ward_sh_chain *c)
{
	free(c);
}

int ward_sh_word_expand(const struct ward_sh_word *w, char *const envp[], char **out,
			bool *dropped, struct ward_error **err)
{
	*out = NULL;
	return ward_error_make_kind(err, WARD_ERR_EXECUTION_FAILED, ENOSYS, "word expansion");
}
