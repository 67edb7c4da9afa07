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
	/* C_TEXT, C_WHOLE: the regular expression as written, compiled only
	 * when a text first holds one of its literals (ward_cond_regexec()):
	 * most commands never need most of them, and regcomp() of the table
	 * was most of the validators' start-up. */
	char *re_src;
	char **lits;        /* every match holds one of these (validate-internal.h);
	                       none: no such literal is known, always run it */
	size_t n_lits;
	regex_t *re;        /* NULL until compiled; read and set atomically (a
	                       pointer, not a regex_t, keeps the generated table
	                       small: less of it to relocate at start-up) */
};

struct rule {
	char *id, *category, *words;
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

/* The built-in rules: filters/validate/validators.rules, parsed at build time by
 * filters/validate/gen/embed.c into C data (generated rules-builtin.c), so a
 * process parses nothing to use them. Never NULL (err is kept for callers
 * that checked it). */
const struct ward_rules *ward_rules_builtin(struct ward_error **err);

/* The generated table itself (empty in the generator, built with
 * -DWARD_RULES_NO_BUILTIN). Only rules.c reads it. */
extern struct ward_rules ward_rules_builtin_table;

/* Whether the text s matches the regular expression of cd (C_TEXT or
 * C_WHOLE), compiling it on first use (thread-safe). A text holding none
 * of cd's literals is answered without compiling or running it. Returns 1
 * on a match, 0 on none, -1 when it cannot be compiled (out of memory). */
int ward_cond_regexec(const struct cond *cd, const char *s);

/* false: ward_cond_regexec() runs every regular expression, literals or
 * not. For the test that shows the literals change no verdict. */
extern bool ward_rules_prefilter;
/* fnmatch() flags for a condition kind. */
int ward_rules_fnmatch_flags(enum cond_kind kind);


/* ---- relit.c: the literals every match of a regular expression
 * contains: the validators compile and run a rule's regular expression only
 * on text that holds one of them. Not installed. */

#include <stddef.h>

/* Literals of the POSIX extended regular expression `re` (as regcomp(3)
 * takes it with REG_EXTENDED, without REG_ICASE) such that every string
 * regexec(3) matches holds at least one of them: *lits (malloc'd, with *n
 * malloc'd strings, none empty) on success. *n == 0 means no such literal is
 * known, and the expression must always be run: it can match text without
 * any fixed substring (`a*`, `.`), or uses a construct this analysis does
 * not follow (a byte outside ASCII, GNU escapes such as `\w` are followed as
 * "any text", an odd interval or parenthesis gives up). Sound, not
 * complete: the literals say where a match cannot be, never where one is.
 * Returns 0, or -1 with errno ENOMEM (nothing to free). */
int ward_re_literals(const char *re, char ***lits, size_t *n);

/* Free what ward_re_literals() made. */
void ward_re_literals_free(char **lits, size_t n);

#endif
