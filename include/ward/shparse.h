/* ward/shparse.h — a parser of the shell language as agents write it, and the
 * flat chain that --no-shell mode runs.
 *
 * How to use this:
 *
 *     struct ward_sh_tree *t = NULL;
 *     struct ward_error *err = NULL;
 *     if (ward_sh_parse(cmd, strlen(cmd), 0, &t, &err) < 0) {
 *             // err->kind == WARD_ERR_INVALID_PARAMETERS,
 *             // err->message == "unterminated single quote at 14"
 *     }
 *     // every simple command, wherever it is: lists, pipelines, compound
 *     // bodies, $(…), `…`, <(…), and substitutions inside any word
 *     ward_sh_visit_commands(t, check_one, &state);
 *     ward_sh_tree_free(t);
 *
 * The rule the parser is built for: what a caller sees is what the shell will
 * run. Every simple command anywhere in the tree is reachable by the visitor,
 * including commands inside substitutions in redirect targets, assignments,
 * case words, for-lists, parameter operands (${x:-$(cmd)}), arithmetic and
 * here-document bodies whose delimiter is unquoted. A construct the parser
 * cannot model is refused with its position, so
 * nothing is passed on unseen: `${!x}` indirection, `${x@P}`, a single
 * quote inside an array subscript (bash expands $(…) there even so), a
 * blank inside NAME[ … ] (one word to bash at a command's start), `!(`
 * at a command's start (a subshell or, under extglob, a pattern), aliases.
 *
 * Dialects. The default is the bash-compatible superset agents write:
 * POSIX sh plus $'…' and $"…" quoting, `&>`, `&>>`, `|&`, `<<<`, `<(…)` and
 * `>(…)`, `[[ … ]]`, `function NAME`, arrays (NAME=(…), NAME[i]=v,
 * ${NAME[i]}), `(( … ))`, `for (( … ))`, `select`, `coproc`, `time` before a
 * compound command and extglob patterns (@(…) +(…) ?(…) *(…) !(…)). WARD_SH_POSIX parses as dash does
 * (Debian's /bin/sh): none of those are special there, so `$'x'` is `$`
 * followed by a single-quoted `x`, and `a &> f` is `a &` then `> f`. The two
 * tokenise some strings differently (`$'\'' ; cmd ; '` hides a command from
 * one reading or the other), so parse in the dialect of the shell that will
 * run the string: WARD_SH_POSIX for `/bin/sh -c` on Debian, the default for
 * `bash -c`.
 *
 * Strings that become code only when a command runs them — the arguments of
 * eval, trap, sh -c, bash -c, su -c, find -exec sh -c, … — are plain words
 * here; a caller that looks through such commands parses those words in
 * turn (in the dialect of the shell named).
 *
 * Values are not code to the parser, and mostly not to the shells either;
 * one exception in bash: arithmetic ($((x)), [[ x -eq 1 ]], declare -i) on
 * a variable whose value is an array subscript holding $(…) runs it. The
 * parser cannot see values, so in the bash dialect a caller should treat
 * WARD_SH_W_ARITH words and WARD_SH_COND nodes that use variables as
 * dynamic. (dash has no arrays.)
 *
 * Positions. Every node, word, word part and redirect carries `off` (0-based
 * byte offset into the source) and `len`. Error messages name the problem and
 * its column as a 1-based byte position ("… at 14" is src[13]).
 *
 * Errors are WARD_ERR_INVALID_PARAMETERS with code 0, except allocation
 * failures (WARD_ERR_EXECUTION_FAILED, ENOMEM).
 *
 * The module is pure: no OS state, no globals; a tree may be read from several
 * threads at once.
 */
#ifndef WARD_SHPARSE_H
#define WARD_SHPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse flags. */
#define WARD_SH_POSIX (1u << 0) /* dash's dialect: no bash extensions (see above) */

/* Limits: deeper nesting or longer input is refused with its position. */
#define WARD_SH_MAX_DEPTH 100      /* nested substitutions/compound commands */
#define WARD_SH_MAX_INPUT (1u << 20)

struct ward_sh_node;
struct ward_sh_word;

/* ---- words ---------------------------------------------------------------- */

/* How the text of a part was quoted in the source. */
enum ward_sh_quote {
	WARD_SH_Q_NONE = 0,   /* unquoted */
	WARD_SH_Q_BACKSLASH,  /* one character escaped with \ */
	WARD_SH_Q_SINGLE,     /* '…' */
	WARD_SH_Q_DOUBLE,     /* "…" (and $"…" in the bash dialect) */
	WARD_SH_Q_DOLLAR,     /* $'…' (bash dialect) */
};

enum ward_sh_part_kind {
	WARD_SH_P_LITERAL,  /* text, after quote removal and escape resolution */
	WARD_SH_P_PARAM,    /* $NAME ${NAME} $1 $@ $? … ${NAME op word}: name in text */
	WARD_SH_P_CMDSUB,   /* $(…) or `…`: sub is the parsed body */
	WARD_SH_P_ARITH,    /* $((…)): arg is the expression as a word */
	WARD_SH_P_PROCSUB,  /* <(…) or >(…): sub is the parsed body */
	WARD_SH_P_TILDE,    /* unquoted ~ or ~user at a word's start (or after = / : in
			       an assignment): the user name (maybe "") in text */
	WARD_SH_P_GLOB,     /* an unquoted * ? or [ … ] class: the pattern in text */
};

/* The kinds of word a part can make dynamic, as bits in ward_sh_word.flags. */
#define WARD_SH_W_PARAM (1u << 0)   /* a parameter expansion */
#define WARD_SH_W_CMDSUB (1u << 1)  /* a command substitution, $(…) or `…` */
#define WARD_SH_W_ARITH (1u << 2)   /* an arithmetic expansion */
#define WARD_SH_W_GLOB (1u << 3)    /* an unquoted glob character */
#define WARD_SH_W_TILDE (1u << 4)   /* a tilde expansion */
#define WARD_SH_W_PROCSUB (1u << 5) /* a process substitution */
#define WARD_SH_W_BRACE (1u << 6)   /* an unquoted {a,b} or {a..b} (bash dialect: the
				       word becomes several words when run) */
#define WARD_SH_W_QUOTED (1u << 7)  /* some of the word was quoted or escaped */
#define WARD_SH_W_BACKTICK (1u << 8) /* one of the substitutions is `…` */
#define WARD_SH_W_ARRAY (1u << 9)   /* bash: NAME=(…) or NAME+=(…), its elements in elems */
#define WARD_SH_W_SUBSCRIPT (1u << 10) /* bash: NAME[…]=… assignment, or a ${NAME[…]} part */
/* Anything whose value is only known when the shell runs it. */
#define WARD_SH_W_DYNAMIC (WARD_SH_W_PARAM | WARD_SH_W_CMDSUB | WARD_SH_W_ARITH | \
			   WARD_SH_W_GLOB | WARD_SH_W_TILDE | WARD_SH_W_PROCSUB | \
			   WARD_SH_W_BRACE)

struct ward_sh_part {
	enum ward_sh_part_kind kind;
	enum ward_sh_quote quote;  /* LITERAL and PARAM: how it was quoted */
	size_t off, len;           /* source span: a '…' or $'…' literal with its quotes,
				      a "…" one without (expansions split it) */
	char *text;                /* see the kinds; NUL-terminated, may hold NUL
				      bytes from $'\0' (text_len counts them) */
	size_t text_len;
	/* PARAM: "" for $NAME and ${NAME}; otherwise the operator of
	 * ${NAME op word}: "-" ":-" "=" ":=" "?" ":?" "+" ":+" "#" "##" "%" "%%",
	 * "len" for ${#NAME}, or bash's "/" "//" ":" (substring) "^" "," …;
	 * braced tells ${…} from $NAME. */
	char op[4];
	bool braced;
	/* PARAM with an operand, and ARITH: the operand/expression as a word
	 * (its own parts may hold more substitutions), else NULL. */
	struct ward_sh_word *arg;
	/* CMDSUB and PROCSUB: the parsed body (a WARD_SH_LIST, maybe empty). */
	struct ward_sh_node *sub;
	bool backtick;             /* CMDSUB written `…` */
	char procsub_dir;          /* PROCSUB: '<' or '>' */
	/* PARAM (bash): ${NAME[index]…}: the subscript as a word ("@", "*", an
	 * arithmetic expression or a key; its parts may hold substitutions),
	 * else NULL. indirect: ${!NAME[@]} (the keys) or ${!PREFIX*} (names). */
	struct ward_sh_word *index;
	bool indirect;
};

struct ward_sh_word {
	size_t off, len;      /* raw source span, quotes included */
	/* The static text: quotes removed, escapes resolved, and each dynamic
	 * part kept as its source text ("$HOME/.ssh" stays "$HOME/.ssh", `*.c`
	 * stays `*.c`). NUL-terminated; text_len counts embedded NULs. */
	char *text;
	size_t text_len;
	unsigned flags;       /* WARD_SH_W_* */
	struct ward_sh_part *parts;
	size_t n_parts;
	/* WARD_SH_W_ARRAY: the elements between the parentheses, each a word as
	 * in a command's argv ("[k]=v" elements keep their text). */
	struct ward_sh_word *elems;
	size_t n_elems;
	/* WARD_SH_W_SUBSCRIPT assignment NAME[index]=value: the span of index
	 * (its substitutions are among the word's parts). */
	size_t index_off, index_len;
};

/* ---- redirections --------------------------------------------------------- */

enum ward_sh_redir_op {
	WARD_SH_R_IN,          /* [n]<  file */
	WARD_SH_R_OUT,         /* [n]>  file */
	WARD_SH_R_APPEND,      /* [n]>> file */
	WARD_SH_R_CLOBBER,     /* [n]>| file */
	WARD_SH_R_RDWR,        /* [n]<> file */
	WARD_SH_R_DUP_IN,      /* [n]<&word: word a fd number or "-" */
	WARD_SH_R_DUP_OUT,     /* [n]>&word: word a fd number or "-" */
	WARD_SH_R_OUT_ERR,     /* &> file, and >& file with a non-number (bash) */
	WARD_SH_R_APPEND_OUT_ERR, /* &>> file (bash) */
	WARD_SH_R_HERESTRING,  /* [n]<<< word (bash) */
	WARD_SH_R_HEREDOC,     /* [n]<< DELIM / [n]<<- DELIM */
};

struct ward_sh_redir {
	enum ward_sh_redir_op op;
	size_t off, len;      /* the operator (with its fd number) to the end of the target */
	int fd;               /* the fd redirected: the explicit number, else 0 for
				 input kinds, 1 for output kinds; 1 for OUT_ERR
				 (which also redirects 2) */
	bool fd_explicit;
	/* DUP_IN/DUP_OUT: the target fd when the word is a plain number, -1 for
	 * "-" (close), -2 when the word is anything else (dynamic). */
	int dup_fd;
	/* The file, the fd word, the here-string, or the heredoc delimiter
	 * (text unquoted, as the shell compares it). */
	struct ward_sh_word target;
	/* HEREDOC: */
	bool strip_tabs;      /* <<- */
	bool quoted_delim;    /* some of the delimiter was quoted: the body is literal */
	/* The body, without the delimiter line. With an unquoted delimiter its
	 * parts hold the expansions and substitutions the shell will perform
	 * (as in double quotes); with a quoted one it is one literal. For <<-
	 * leading tabs are already removed. */
	struct ward_sh_word body;
};

/* ---- nodes ---------------------------------------------------------------- */

/* The tree is as flat as the source: a tree's root (and each compound
 * body) is a LIST; a list item with no && or || is not wrapped in an AND_OR,
 * and a pipeline of one command without ! is the command itself. */
enum ward_sh_kind {
	WARD_SH_SIMPLE,    /* assignments, words, redirections */
	WARD_SH_PIPELINE,  /* kids joined by | (or |&, ops[i]); bang for `!` */
	WARD_SH_AND_OR,    /* kids joined by && / || (ops[i] between kids[i], kids[i+1]) */
	WARD_SH_LIST,      /* kids each ended by ops[i]: ; & newline, or END */
	WARD_SH_SUBSHELL,  /* ( kids[0] ) */
	WARD_SH_BRACE,     /* { kids[0] } */
	WARD_SH_IF,        /* kids: cond, then, [cond, then]…, [else] (has_else) */
	WARD_SH_FOR,       /* name; words (the list; has_in); kids[0] body */
	WARD_SH_WHILE,     /* kids[0] condition, kids[1] body */
	WARD_SH_UNTIL,     /* kids[0] condition, kids[1] body */
	WARD_SH_CASE,      /* subject; items */
	WARD_SH_FUNCTION,  /* name; kids[0] the body (a compound command) */
	WARD_SH_COND,      /* [[ … ]] (bash): words are every token between, the
			      operators (&& || ! ( ) < >) as literal words */
	WARD_SH_ARITH,     /* (( … )) (bash): words[0] the expression, as $((…))'s */
	WARD_SH_ARITH_FOR, /* for (( a; b; c )) (bash): words[0..2] the expressions
			      (maybe empty words), kids[0] the body */
	WARD_SH_SELECT,    /* select (bash): as FOR */
	WARD_SH_COPROC,    /* coproc [NAME] command (bash): name (maybe NULL), kids[0] */
};

enum ward_sh_op {
	WARD_SH_OP_END = 0,   /* nothing follows (last item of a list) */
	WARD_SH_OP_SEMI,      /* ; */
	WARD_SH_OP_NEWLINE,   /* a newline */
	WARD_SH_OP_AMP,       /* & (background) */
	WARD_SH_OP_AND,       /* && */
	WARD_SH_OP_OR,        /* || */
	WARD_SH_OP_PIPE,      /* | */
	WARD_SH_OP_PIPE_ERR,  /* |& (bash: stderr too) */
};

enum ward_sh_case_end {
	WARD_SH_CASE_BREAK,   /* ;; (or the last item, before esac) */
	WARD_SH_CASE_FALL,    /* ;& (bash) */
	WARD_SH_CASE_CONT,    /* ;;& (bash) */
};

struct ward_sh_case_item {
	size_t off, len;
	struct ward_sh_word *patterns; /* pattern1 | pattern2 … */
	size_t n_patterns;
	struct ward_sh_node *body;     /* a WARD_SH_LIST, maybe empty */
	enum ward_sh_case_end end;
};

struct ward_sh_node {
	enum ward_sh_kind kind;
	size_t off, len;               /* source span */
	struct ward_sh_node *parent;   /* NULL for a tree's root and a substitution's body */
	struct ward_sh_node **kids;
	size_t n_kids;
	enum ward_sh_op *ops;          /* PIPELINE, AND_OR: n_kids - 1; LIST: n_kids */
	size_t *op_offs;               /* source offset of each operator (as ops) */
	bool bang;                     /* PIPELINE preceded by ! */
	bool has_else;                 /* IF */
	bool has_in;                   /* FOR: an `in` list was given */
	/* SIMPLE: assignments (text "NAME=value"), then the command's words
	 * (words[0] the command name, maybe absent: `x=1 >f`). COND: the tokens.
	 * FOR: the list. */
	struct ward_sh_word *assigns;
	size_t n_assigns;
	struct ward_sh_word *words;
	size_t n_words;
	/* SIMPLE and every compound command (`{ …; } >f`, `while …; done <f`). */
	struct ward_sh_redir *redirs;
	size_t n_redirs;
	struct ward_sh_word *name;     /* FOR: the variable; FUNCTION: the name */
	struct ward_sh_word *subject;  /* CASE: the word matched */
	struct ward_sh_case_item *items;
	size_t n_items;
};

struct ward_sh_tree {
	char *src;                     /* a copy of the source, NUL-terminated */
	size_t len;
	unsigned flags;                /* as given to ward_sh_parse */
	struct ward_sh_node *root;     /* a WARD_SH_LIST, maybe empty */
	void *arena;                   /* private */
};

/* Parse src[0..len) (it need not be NUL-terminated; a NUL byte inside is an
 * error) with WARD_SH_* flags into *out. The caller frees it with
 * ward_sh_tree_free(). Returns 0, or -1 with *err (InvalidParameters for a
 * syntax error or an unsupported construct, message "WHAT at COLUMN"). */
WARD_API int ward_sh_parse(const char *src, size_t len, unsigned flags,
			   struct ward_sh_tree **out, struct ward_error **err);

WARD_API void ward_sh_tree_free(struct ward_sh_tree *t);

/* ---- visiting ------------------------------------------------------------- */

/* Where a visited node sits. */
enum ward_sh_context {
	WARD_SH_CTX_TOP,        /* the command line itself (any depth of compounds) */
	WARD_SH_CTX_CMDSUB,     /* inside $(…) */
	WARD_SH_CTX_BACKTICK,   /* inside `…` */
	WARD_SH_CTX_PROCSUB,    /* inside <(…) or >(…) */
};

struct ward_sh_visit_info {
	enum ward_sh_context context;  /* of the innermost substitution */
	unsigned sub_depth;            /* how many substitutions enclose the node */
	/* The part holding the innermost enclosing substitution (NULL at the
	 * top), and the word it is in. */
	const struct ward_sh_part *sub_part;
	const struct ward_sh_word *sub_word;
};

/* fn returns 0 to go on; anything else stops the walk, and the visit
 * returns that value. */
typedef int (*ward_sh_visit_fn)(const struct ward_sh_node *n, const struct ward_sh_visit_info *info,
				void *data);

/* Call fn for every WARD_SH_SIMPLE node in the tree, in source order (a
 * command's substitutions before the command itself, as the shell runs them),
 * including every command inside substitutions in any word anywhere: argv,
 * assignments, redirect targets, here-strings, unquoted-delimiter heredoc
 * bodies, case subjects and patterns, for-lists, parameter operands,
 * arithmetic, [[ … ]] words. Returns 0 or fn's first non-zero value. */
WARD_API int ward_sh_visit_commands(const struct ward_sh_tree *t, ward_sh_visit_fn fn, void *data);

/* The same for every node of every kind (pre-order), so a caller can check
 * redirections of compound commands or look at pipelines whole. */
WARD_API int ward_sh_visit_nodes(const struct ward_sh_tree *t, ward_sh_visit_fn fn, void *data);

/* The name of a node kind ("simple command", "pipeline", "subshell", …). */
WARD_API const char *ward_sh_kind_name(enum ward_sh_kind kind);

/* The operator as written: ";", "\n", "&", "&&", "||", "|", "|&", "" for END. */
WARD_API const char *ward_sh_op_str(enum ward_sh_op op);

/* The operator of a redirection as written without a fd number (">>", "<&", …). */
WARD_API const char *ward_sh_redir_str(enum ward_sh_redir_op op);

/* Bash brace expansion of a word of tree t: the words it becomes when bash
 * runs it ("{rm,-rf,x}" becomes "rm" "-rf" "x"; "a{1..3}" becomes "a1" "a2"
 * "a3"), in bash's order, each as the word's static text would be (quotes
 * removed, dynamic parts as their source). Only unquoted braces and commas
 * count. A word without WARD_SH_W_BRACE gives one word, its text. *out is a
 * malloc'd array of *n malloc'd strings (free with ward_sh_strv_free).
 * Returns 0, or -1 with *err (InvalidParameters when it would make more
 * than WARD_SH_BRACE_MAX words). */
#define WARD_SH_BRACE_MAX 4096
WARD_API int ward_sh_word_brace_expand(const struct ward_sh_tree *t, const struct ward_sh_word *w,
				       char ***out, size_t *n, struct ward_error **err);

WARD_API void ward_sh_strv_free(char **v, size_t n);

/* ---- the no-shell chain --------------------------------------------------- */

/* A chain is what --no-shell mode runs: segments, each one process, joined by
 * |, &&, ||, ; and newlines. Only plain words, $NAME / ${NAME} and redirects
 * to plain words are allowed; building refuses anything else with the
 * construct's name and column: "command substitution is not supported in
 * --no-shell mode at 7". Refused: command, process and arithmetic
 * substitution, globs, tilde, brace expansion, heredocs and here-strings,
 * `&`, `!`, `|&`, subshells, brace groups and every other compound command,
 * function definitions, ${NAME op word}, special parameters ($1 $@ $? $$ …),
 * and redirect targets or dup words that are not plain. */
struct ward_sh_segment {
	size_t off, len;
	const struct ward_sh_word *assigns;  /* NAME=value set for this process only */
	size_t n_assigns;
	const struct ward_sh_word *words;    /* argv; n_words ≥ 1 */
	size_t n_words;
	const struct ward_sh_redir *redirs;
	size_t n_redirs;
	/* How this segment joins the next: PIPE, AND, OR, SEMI, NEWLINE; END for
	 * the last. */
	enum ward_sh_op op;
	size_t op_off;
};

struct ward_sh_chain {
	struct ward_sh_segment *segs;  /* pointers into the tree: free the chain first */
	size_t n_segs;
};

/* Build the chain of a parsed tree. Returns 0 with *out (free with
 * ward_sh_chain_free), or -1 with *err (InvalidParameters). An empty command
 * line is an error ("empty command"). */
WARD_API int ward_sh_chain_build(const struct ward_sh_tree *t, struct ward_sh_chain **out,
				 struct ward_error **err);

WARD_API void ward_sh_chain_free(struct ward_sh_chain *c);

/* Expand one word of a chain: literals as they are, $NAME / ${NAME} from
 * envp ("K=V" strings, NULL-terminated; an unset name expands to ""). No
 * field splitting and no globbing: a word is always one argument. *out is
 * malloc'd and NUL-terminated; *dropped is set when the word was nothing but
 * unquoted expansions that came out empty (sh drops such a word; the caller
 * should too). Returns 0 or -1 with *err (InvalidParameters for a part a chain
 * cannot hold, or a NUL byte in the result). */
WARD_API int ward_sh_word_expand(const struct ward_sh_word *w, char *const envp[], char **out,
				 bool *dropped, struct ward_error **err);

#ifdef __cplusplus
}
#endif
#endif
