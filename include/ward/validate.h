/* ward/validate.h — the textual validators and the approval list: is this
 * command string allowed, refused, or does it need approval? Pure code.
 *
 * How to use this:
 *
 *     struct ward_verdict v;
 *     struct ward_error *err = NULL;
 *
 *     if (ward_validate(NULL, "cat x | sh", &v, &err) < 0)    // NULL: built-in rules
 *             ...;                   // the string cannot be parsed: InvalidParameters
 *     if (v.kind == WARD_VERDICT_REFUSED)
 *             printf("%s (%s): %s\n", v.rule, v.words, v.segment);
 *     ward_verdict_release(&v);
 *
 * The string is parsed once (ward/shparse.h), as /bin/sh (dash) reads it,
 * since that is what ward runs it with; strings run by bash are parsed as
 * bash reads them. Every simple command anywhere
 * in it — inside $(…), backticks, loops, subshells, the string of `sh -c`,
 * behind wrappers such as env, time, nice, nohup, timeout, xargs, command,
 * exec, busybox, stdbuf, setsid, sudo, find -exec, sort --compress-program,
 * git -c core.sshCommand=… — is matched against the rules after
 * normalisation: quotes removed, escapes resolved, the program's path
 * reduced to its name (`/bin/rm`, `\rm` and `r''m` are all `rm`), case folded
 * on both sides; globs the shell will expand, variables set earlier in the
 * string and bash's brace expansion are taken into account. Redirect targets
 * and here-strings are matched too. A few
 * rules look at the whole string after whitespace and case folding (a fork
 * bomb is not a simple command).
 *
 * Rules apply to a program and the roles of its arguments, not to any text:
 * the pattern of grep, the words of echo, the message of git commit and the
 * value of git log -S are data, so searching for a dangerous string is not
 * running it.
 *
 * The rules are data (filters/validate/validators.rules, compiled in; see that file
 * for the syntax). Each has an id ("blocked.rm-root"), a category (blocked,
 * dangerous, injection, sensitive: refused; approval: needs approval) and
 * words saying what it is about. A policy can remove a rule, relax a refusing
 * one into needing approval, or add rules in the same syntax.
 *
 * In a chain the highest risk wins: refused over approval over allowed.
 * Three refusals come from the validators themselves: "validator.unparsed" (a
 * string a shell would run that cannot be parsed), "validator.too-deep"
 * (wrappers or strings nested beyond any ordinary use) and
 * "validator.unresolved-program" (a program word whose value only the running
 * shell knows: `${x:-rm}`, "$@", a variable not set literally before, any
 * variable after IFS changed; its offset is the word's).
 *
 * Threads: ward_validate() may run in several threads at once, on the same
 * rule set; a rule set must not be changed while it is in use.
 */
#ifndef WARD_VALIDATE_H
#define WARD_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ward_verdict_kind {
	WARD_VERDICT_ALLOWED = 0,
	WARD_VERDICT_APPROVAL_REQUIRED = 1, /* a rule of the approval list (or a relaxed one) */
	WARD_VERDICT_REFUSED = 2,           /* a refusing rule matched */
};

/* One simple command the validators saw, for display. */
struct ward_verdict_segment {
	size_t offset, length; /* bytes of the validated string; a command found inside
				  a string (sh -c, a here-string) has the span of that string */
	int depth;             /* 0 at top level, +1 inside each $(…), sh -c, wrapper */
	char *text;            /* the command as written (the span above) */
	char *argv;            /* the normalised words as matched, space-separated */
};

struct ward_verdict {
	enum ward_verdict_kind kind;
	/* The deciding rule (NULL when allowed): id, category and words. */
	char *rule;
	char *category;
	char *words;
	/* The offending segment: its span in the string, its text, and what
	 * matched in it (the word, the redirect target, or the command). */
	size_t offset, length;
	char *segment;
	char *matched;
	/* Every simple command seen, in order. */
	struct ward_verdict_segment *segments;
	size_t n_segments;
};

/* A rule set: the built-in rules as a policy changed them. Opaque. */
struct ward_rules;

/* A copy of the built-in rules, to change. NULL with an error on failure. */
WARD_API struct ward_rules *ward_rules_new(struct ward_error **err);

/* A copy of rules (NULL: the built-in ones). */
WARD_API struct ward_rules *ward_rules_dup(const struct ward_rules *rules, struct ward_error **err);

WARD_API void ward_rules_free(struct ward_rules *rules);

/* Remove the rule `id`. InvalidParameters when there is none. */
WARD_API int ward_rules_remove(struct ward_rules *rules, const char *id, struct ward_error **err);

/* Make the refusing rule `id` need approval instead. InvalidParameters when
 * there is no such rule or it already needs approval. */
WARD_API int ward_rules_relax(struct ward_rules *rules, const char *id, struct ward_error **err);

/* Let the path and write conditions of rule `id` pass paths matching glob:
 * a name ("test.key", "dev-?.pem"), or with a slash, a path or a path's tail
 * ("tests/fixtures/server.pem", globs allowed in each component).
 * InvalidParameters when there is no such rule or it matches no path. */
WARD_API int ward_rules_except(struct ward_rules *rules, const char *id, const char *glob,
			       struct ward_error **err);

/* Add rules written in the syntax of filters/validate/validators.rules; `origin`
 * names the text in messages. InvalidParameters naming the line and the
 * key for a mistake; a duplicate id is a mistake. On failure nothing is
 * added. */
WARD_API int ward_rules_add_text(struct ward_rules *rules, const char *text, const char *origin,
				 struct ward_error **err);

/* Number of rules, and the id, category and words of rule i (NULL past the
 * end). The strings belong to the rule set. */
WARD_API size_t ward_rules_count(const struct ward_rules *rules);
WARD_API const char *ward_rules_id(const struct ward_rules *rules, size_t i);
WARD_API const char *ward_rules_category(const struct ward_rules *rules, size_t i);
WARD_API const char *ward_rules_words(const struct ward_rules *rules, size_t i);
/* Whether rule i refuses (false: it needs approval). */
WARD_API bool ward_rules_refuses(const struct ward_rules *rules, size_t i);

/* The built-in rule table as text. */
WARD_API const char *ward_rules_builtin_text(void);

/* Validate a shell command string against rules (NULL: the built-in ones).
 * Returns 0 with *v filled — the verdict may be a refusal — or -1 when the
 * string cannot be parsed (InvalidParameters naming the problem and its
 * offset) or memory ran out. Release *v with ward_verdict_release(). */
WARD_API int ward_validate(const struct ward_rules *rules, const char *command,
			   struct ward_verdict *v, struct ward_error **err);

/* The shell that runs a command string: /bin/sh (dash on Debian, POSIX) or
 * /bin/bash, whose dialect the string is then parsed in (ward/shparse.h). */
enum ward_shell {
	WARD_SHELL_SH = 0,
	WARD_SHELL_BASH = 1,
};

/* OR'd into ward_validate_shell()'s shell: the command runs with the workdir
 * in overlay mode, where its writes are a change set a person applies or
 * discards, so `rm -rf` of a path inside the workdir (relative, no `..`, `~`
 * or variable, and no cd before it) loses nothing and needs no approval. */
#define WARD_VALIDATE_OVERLAY 0x100

/* ward_validate() for a string the given shell runs (ward_validate() is
 * WARD_SHELL_SH), maybe with WARD_VALIDATE_OVERLAY. In bash, an arithmetic
 * expansion naming a variable is code only known at run time (an array
 * subscript in a value runs $(…)). */
WARD_API int ward_validate_shell(const struct ward_rules *rules, const char *command,
				 enum ward_shell shell, struct ward_verdict *v,
				 struct ward_error **err);

/* The same for a command given as argv (`ward run -- CMD ARGS`): the words
 * are taken as they are, with no shell parsing, except where a word is a
 * string a wrapper runs (`sh -c STRING`). Offsets count in the words joined
 * by single spaces. */
WARD_API int ward_validate_argv(const struct ward_rules *rules, char *const argv[],
				struct ward_verdict *v, struct ward_error **err);

WARD_API void ward_verdict_release(struct ward_verdict *v);

/* The error a verdict means: NotAuthorized for a refusal, ApprovalRequired
 * for an approval, with the rule id in ->rule and a message naming the rule,
 * its words, the segment and its offset. Returns -1 having filled *err, or 0
 * (and nothing filled) for an allowed verdict. */
WARD_API int ward_verdict_error(const struct ward_verdict *v, struct ward_error **err);

/* "allowed", "approval_required" or "refused". */
WARD_API const char *ward_verdict_kind_name(enum ward_verdict_kind kind);

/* The verdict as a JSON object (no trailing newline), malloc'd:
 * {"verdict", "rule", "category", "words", "offset", "length", "segment",
 *  "matched", "segments": [{"offset", "length", "depth", "text", "argv"}]}.
 * NULL on allocation failure. */
WARD_API char *ward_verdict_to_json(const struct ward_verdict *v);

#ifdef __cplusplus
}
#endif
#endif
