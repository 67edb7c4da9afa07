/* unwrap-internal.h — what validate.c (matching views against the rule table)
 * and unwrap.c (the views a wrapper, an interpreter or a shell string gives)
 * share: a command's words as a view, the validation's state, and the
 * functions each calls of the other. Pure code. */
#ifndef WARD_UNWRAP_INTERNAL_H
#define WARD_UNWRAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "filters/validate/validate-internal.h"
#include "ward/shparse.h"
#include "ward/validate.h"

/* Wrappers and strings inside strings deeper than this are refused: a
 * legitimate command never nests so deep, and the validators must end. */
#define MAX_DEPTH 12
/* Earlier commands of a pipeline looked at for one command (`upstream`):
 * the nearest ones, so that a long pipeline costs linear time. */
#define MAX_UPSTREAM 16

struct word {
	char *text;   /* static text: quotes removed, escapes resolved, $VAR as written */
	char *fold;   /* the same, lowercased */
	/* With $VARs: the lowercased text as far as it is known — $HOME as ~,
	 * variables set earlier in the string by their value, others empty —
	 * or NULL. */
	char *alt;
	/* norm_path() of fold and of alt, made when first asked (a word is
	 * matched by many rules, and by each wrapper's view) */
	char *norm, *norm_alt;
	unsigned flags; /* WARD_SH_W_* */
	size_t off, len; /* span in the validated string */
	/* Its value is not known before the shell runs it: a variable not set
	 * literally earlier in the string, a special parameter ($1, "$@"), an
	 * operator (${x:-rm}), a substitution, or any variable once IFS was
	 * changed; or the data another program puts there (xargs -I{}). As a
	 * program word it is refused (validator.unresolved-program). */
	bool unresolved;
};

enum redir_kind { RD_READ, RD_WRITE, RD_RDWR, RD_STRING, RD_DUP };

struct redir {
	enum redir_kind kind;
	int fd;
	struct word target; /* the file; RD_STRING: the here-string or heredoc body */
};

/* One simple command as it will run. */
struct cmd {
	size_t off, len;      /* span in the validated string */
	int depth;
	bool in_subst;        /* inside $(…), `…` or <(…) */
	bool piped;           /* its stdin is a pipe from an earlier command */
	struct redir *r;
	size_t nr;
	struct word *assigns; /* NAME=value prefixes */
	size_t n_assigns;
	const struct ward_sh_node *node; /* NULL for argv or a synthesised command */
	const struct ward_sh_tree *tree; /* the node's tree */
	/* Earlier commands of the same pipeline (for `upstream` and `text`). */
	struct cmd *up;
	size_t n_up;
};

/* What a view was found to do while unwrapping it. */
struct view {
	struct word *w;
	size_t n;
	const struct cmd *cmd;
	bool script_stdin;    /* a shell or interpreter reading its program from stdin */
	bool dynamic;         /* it runs code only known at run time */
	bool runs_download;   /* it runs a file a download earlier in the string wrote */
};

struct match {
	int kind;             /* enum ward_verdict_kind; 0 for none */
	size_t rank;          /* the rule's index: earlier rules decide */
	const struct rule *rule;
	const char *synthetic_id, *synthetic_words;
	size_t off, len;
	char *matched;
};

struct ctx {
	const struct ward_rules *rules;
	const char *top;      /* the validated string */
	size_t top_len;
	struct match best;
	struct ward_verdict_segment *segs;
	size_t n_segs, cap_segs;
	struct ward_error **err;
	int failed;           /* out of memory */
	const char *hit;      /* the word that made the last condition true */
	/* Files downloads earlier in the string wrote (normalised paths). */
	char **downloads;
	size_t n_downloads;
	/* Files the string wrote whose text ward knows (echo … > f, cat > f
	 * <<EOF): what a later `sh f`, `python3 f` or `./f` runs. */
	/* Variables assigned where the assignment may not happen or may not
	 * last (a subshell, a pipeline, a branch, a loop, a background job,
	 * a substitution, a function) or made readonly: no value is known. */
	char **uncertain;
	size_t n_uncertain;
	/* Every bare NAME=VALUE of the string (VALUE NULL when not a plain
	 * literal word), in source order: the values an uncertain variable
	 * may hold (see ward_vd_var_values()). */
	struct assigned {
		char *name, *value;
	} *assigned;
	size_t n_assigned;
	struct written {
		char *path; /* normalised, folded */
		char *text;
	} *written;
	size_t n_written;
	/* Where the last pipeline element was found (see find_pipe). */
	const struct ward_sh_node *pipe_node;
	size_t pipe_idx;
	/* Variables set in the string (x=rm), in source order. */
	struct var {
		char *name, *value;
		bool known;   /* set to a literal value: no substitution, no unknown variable */
		bool assoc;   /* bash: declared -A (its subscripts are keys, not arithmetic) */
		bool integer; /* bash: declared -i (a value assigned is arithmetic) */
		char **elems; /* bash: NAME=(…) of literal elements (value is the first) */
		size_t n_elems;
		bool array;
	} *vars;
	size_t n_vars;
	bool bash;            /* the string is run by bash (ward_validate_shell()) */
	bool overlay;         /* WARD_VALIDATE_OVERLAY: the workdir's writes are a change set */
	bool saw_cd;          /* a cd (pushd, popd) came before: relative paths may leave the workdir */
	const struct rule *cur_rule; /* the rule ward_vd_match_rules() is trying */
	bool ifs_changed;
	bool vars_untrusted;  /* a file was sourced: any variable may hold anything */     /* IFS assigned in the string: unquoted expansions split unknowably */
	/* Words of views built for upstream commands, freed at the end. */
	struct held {
		struct word *w;
		size_t n;
	} *held;
	size_t n_held;
};

/* Roles of words (validate.c compute_roles()). */
enum role {
	ROLE_OPT = 1,     /* an option */
	ROLE_DATA = 2,    /* a pattern, a message, text to print: not a path */
	ROLE_POS = 4,     /* a positional argument */
	ROLE_WRITE = 8,   /* a file the command writes */
	ROLE_READ = 16,   /* a file the command reads or names */
};

/* A lowercased copy (malloc'd), or NULL. */
char *ward_vd_lower_dup(const char *s);

/* A word of text (its fold and flags); false when out of memory (c->failed). */
bool ward_vd_word_init(struct ctx *c, struct word *w, const char *text, unsigned flags,
		       size_t off, size_t len);

/* Free what a word holds. */
void ward_vd_word_release(struct word *w);
/* The values a variable of the top-level string may hold where its
 * assignments' order is not certain (PY=python3; … || PY=python; $PY):
 * the literal words of its bare assignments, when those are every mention
 * of its name in the string besides plain $NAME and ${NAME} uses. The count
 * (at most max, into vals, pointers into c), or 0 when not known so. */
size_t ward_vd_var_values(const struct ctx *c, const char *name, const char **vals, size_t max);
/* Whether the string assigns name where the assignment may not happen or
 * may not last (see struct ctx's uncertain). */
bool ward_vd_var_uncertain(const struct ctx *c, const char *name);

/* Free n words and the array. */
void ward_vd_words_free(struct word *w, size_t n);

/* Whether name is one of the space-separated names of list. */
bool ward_vd_in_list(const char *name, const char *list);

/* The program a view runs: its first word's base name. */
const char *ward_vd_prog_of(const struct view *v);

/* A path normalised for matching (malloc'd), or NULL. */
char *ward_vd_norm_path(const char *fold);

/* Whether word is one of the options of list (attached values allowed). */
bool ward_vd_opt_named(const char *word, const char *list);

/* Whether opt names prog's output file. */
bool ward_vd_is_output_opt(const char *prog, const char *opt);

/* Whether word is the long option item, with or without "=value". */
bool ward_vd_long_opt_is(const char *word, const char *item);

/* Where a subcommand's words start (git -C dir sub...). */
size_t ward_vd_sub_start(const struct view *v, size_t *pos, size_t max);

/* The role (enum role bits) of each word of v into roles[0..n). */
void ward_vd_compute_roles(const struct view *v, unsigned *roles);

/* Refuse with a verdict of ward's own (no rule of the table). */
void ward_vd_refuse_synthetic(struct ctx *c, const char *id, const char *words,
			      const struct cmd *cmd, const char *matched);

/* Match the view against every rule; the best match kept. */
void ward_vd_match_rules(struct ctx *c, const struct view *v);

/* Parse and validate a string a shell will run, its commands reported at the span given. */
void ward_vd_validate_string(struct ctx *c, const char *src, size_t len, unsigned dialect,
			     size_t span_off, size_t span_len, int depth);

/* Validate one view, then every view its wrappers and strings give (unwrap.c). */
void ward_vd_check_view(struct ctx *c, struct view *v, int depth);

/* Validate text a wrapper or an interpreter hands to a shell. */
void ward_vd_shell_string(struct ctx *c, const struct view *v, const struct word *w,
			  const char *text, bool posix, int depth);

/* Options whose value a program runs as a command (unwrap.c command_opts[]):
 * each value validated as the string a shell runs. */
void ward_vd_command_opts(struct ctx *c, struct view *v, int depth);

/* Whether variable name is set to a literal value earlier in the string. */
bool ward_vd_var_known(const struct ctx *c, const char *name);

/* bash: whether arithmetic text names a variable not set literally in the
 * string, or holds a substitution: its value is evaluated, and a value
 * `a[$(cmd)]` runs cmd. Names the text itself assigns (`i=0`) count as set. */
bool ward_vd_arith_unknown(const struct ctx *c, const char *text);

/* Its value as far as known ("~" for HOME, "" when not known). */
const char *ward_vd_var_value(const struct ctx *c, const char *name);

/* Skip a wrapper's options (vals take a value); the index of the first other word. */
size_t ward_vd_skip_opts(const struct view *v, size_t i, const char *vals);

/* A NAME=value word: the value run when NAME is a command variable. */
void ward_vd_assignment(struct ctx *c, const struct view *v, const struct word *w, int depth);

#endif
