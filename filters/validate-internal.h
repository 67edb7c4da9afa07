/* validate-internal.h — the rule set shared by rules.c (the table and its
 * changes) and validate.c (matching). Not installed. */
#ifndef WARD_VALIDATE_INTERNAL_H
#define WARD_VALIDATE_INTERNAL_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "ward/validate.h"

enum cond_kind {
	C_PROGRAM,
	C_SUB,
	C_FLAG,
	C_OPT,
	C_ARG,
	C_WORD,
	C_NOWORD,
	C_PATH,
	C_WRITE,
	C_REDIRECT,
	C_UPSTREAM,
	C_STDIN,
	C_CONTEXT,
	C_ARGSUBST,
	C_CODE,
	C_TEXT,
	C_WHOLE,
};

struct cond {
	enum cond_kind kind;
	char **items;       /* the values (globs lowercased; flags as written) */
	size_t n_items;
	char **opts;        /* C_OPT: the options before ':' */
	size_t n_opts;
	char **except;      /* C_PATH, C_WRITE: names not to count */
	size_t n_except;
	regex_t re;         /* C_TEXT, C_WHOLE */
	bool has_re;
};

struct rule {
	char *id, *category, *words;
	char *text;         /* the block as written, to copy the rule */
	bool refuses;       /* false: needs approval */
	bool relaxed;       /* a policy made a refusing rule need approval */
	struct cond *conds;
	size_t n_conds;
	bool whole_only;    /* has a C_WHOLE condition */
};

struct ward_rules {
	struct rule *rules;
	size_t n;
};

/* The built-in rules, parsed once (thread-safe); NULL with *err on failure. */
const struct ward_rules *ward_rules_builtin(struct ward_error **err);

/* fnmatch() flags for a condition kind. */
int ward_rules_fnmatch_flags(enum cond_kind kind);

#endif
