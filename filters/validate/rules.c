/* rules.c — the validators' rule table: parsing filters/validate/validators.rules (at
 * build time, see filters/validate/gen/embed.c) and the rules a policy adds,
 * copying, removing and relaxing rules, running a rule's regular expression.
 * Pure code. */
#include "filters/validate/validate-internal.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/util/util-internal.h"

/* The text is embedded as it is too: ward_rules_builtin_text() gives it, and
 * filters/validate/gen/embed.c parses it into the table processes use. */
__asm__(".section .rodata\n"
	".globl ward_validators_rules\n"
	".hidden ward_validators_rules\n"
	".type ward_validators_rules, @object\n"
	"ward_validators_rules:\n"
	".incbin \"filters/validate/validators.rules\"\n"
	".byte 0\n"
	".previous\n");
extern const char ward_validators_rules[] __attribute__((visibility("hidden")));

const char *ward_rules_builtin_text(void)
{
	return ward_validators_rules;
}

static const struct {
	const char *key;
	enum cond_kind kind;
} cond_keys[] = {
	{ "program", C_PROGRAM }, { "sub", C_SUB },         { "flag", C_FLAG },
	{ "opt", C_OPT },         { "arg", C_ARG },         { "word", C_WORD },
	{ "noword", C_NOWORD },
	{ "path", C_PATH },       { "write", C_WRITE },     { "redirect", C_REDIRECT },
	{ "upstream", C_UPSTREAM }, { "stdin", C_STDIN },   { "context", C_CONTEXT },
	{ "argsubst", C_ARGSUBST }, { "code", C_CODE },     { "text", C_TEXT },
	{ "whole", C_WHOLE },
};

static const char *const categories[] = { "blocked", "dangerous", "injection", "sensitive",
					  "approval" };

int ward_rules_fnmatch_flags(enum cond_kind kind)
{
	/* In `arg` a star stops at a slash: a slash and a star is "a top-level
	 * directory", not "any absolute path". */
	return kind == C_ARG ? FNM_PATHNAME : 0;
}

static void cond_release(struct cond *c)
{
	size_t i;

	for (i = 0; i < c->n_items; i++)
		free(c->items[i]);
	free(c->items);
	for (i = 0; i < c->n_opts; i++)
		free(c->opts[i]);
	free(c->opts);
	for (i = 0; i < c->n_except; i++)
		free(c->except[i]);
	free(c->except);
	free(c->re_src);
	ward_re_literals_free(c->lits, c->n_lits);
	if (c->re) {
		regfree(c->re);
		free(c->re);
	}
}

static void rule_release(struct rule *r)
{
	size_t i;

	for (i = 0; i < r->n_conds; i++)
		cond_release(&r->conds[i]);
	free(r->conds);
	free(r->id);
	free(r->category);
	free(r->words);
	memset(r, 0, sizeof(*r));
}

void ward_rules_free(struct ward_rules *rules)
{
	size_t i;

	if (!rules)
		return;
	for (i = 0; i < rules->n; i++)
		rule_release(&rules->rules[i]);
	free(rules->rules);
	free(rules);
}

struct parse {
	const char *origin;
	int line;
	struct ward_error **err;
};

static int bad(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct parse *p, const char *fmt, ...)
{
	char what[WARD_ERROR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ward_error_make_kind(p->err, WARD_ERR_INVALID_PARAMETERS, 0, "rules '%s' line %d: %s",
				    p->origin, p->line, what);
}

static int push_str(char ***v, size_t *n, const char *s, size_t len, bool lower)
{
	char **g = realloc(*v, (*n + 1) * sizeof(**v));
	char *d;
	size_t i;

	if (!g)
		return -1;
	*v = g;
	d = strndup(s, len);
	if (!d)
		return -1;
	if (lower)
		for (i = 0; d[i]; i++)
			d[i] = (char)tolower((unsigned char)d[i]);
	(*v)[(*n)++] = d;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Split a value on blanks into items. */
static int split_items(struct parse *p, const char *value, char ***v, size_t *n, bool lower)
{
	const char *s = value;

	while (*s) {
		size_t len;

		s += strspn(s, " \t");
		len = strcspn(s, " \t");
		if (len && push_str(v, n, s, len, lower) < 0)
			return ward_error_make(p->err, ENOMEM, "rules");
		s += len;
	}
	return 0;
}

static int add_cond(struct parse *p, struct rule *r, const char *key, char *value)
{
	enum cond_kind kind = C_PROGRAM;
	struct cond *c, *g;
	bool found = false;
	size_t i;

	if (strcmp(key, "except") == 0) {
		if (!r->n_conds || (r->conds[r->n_conds - 1].kind != C_PATH &&
				    r->conds[r->n_conds - 1].kind != C_WRITE &&
				    r->conds[r->n_conds - 1].kind != C_ARG))
			return bad(p, "except must follow a path, write or arg line");
		c = &r->conds[r->n_conds - 1];
		if (split_items(p, value, &c->except, &c->n_except, true) < 0)
			return -1;
		return c->n_except ? 0 : bad(p, "except needs at least one name");
	}
	for (i = 0; i < ARRAY_SIZE(cond_keys); i++)
		if (strcmp(key, cond_keys[i].key) == 0) {
			kind = cond_keys[i].kind;
			found = true;
		}
	if (!found)
		return bad(p, "unknown key \"%s\"", key);
	if (!*value)
		return bad(p, "%s needs a value", key);
	g = realloc(r->conds, (r->n_conds + 1) * sizeof(*g));
	if (!g)
		return ward_error_make(p->err, ENOMEM, "rules");
	r->conds = g;
	c = &r->conds[r->n_conds++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	switch (kind) {
	case C_TEXT:
	case C_WHOLE: {
		int rc;
		const char *b;
		regex_t *re;

		/* a back-reference makes matching exponential on a long string:
		 * the validators must answer in bounded time */
		for (b = value; (b = strchr(b, '\\')); b += 2)
			if (b[1] >= '1' && b[1] <= '9')
				return bad(p, "%s: back-references (\\%c) are not allowed", key, b[1]);
			else if (!b[1])
				break;
		/* the text matched is already case folded; glibc's REG_ICASE
		 * would rebuild its translated copy of the string at every start
		 * position, quadratic in the length of a long command */
		for (b = value; *b; b++)
			if (*b == '\\' && b[1])
				b++;
			else if (isupper((unsigned char)*b))
				return bad(p, "%s: write the regular expression in lower case "
					      "(the text is case folded), not '%c'",
					   key, *b);
		re = malloc(sizeof(*re));
		if (!re)
			return ward_error_make(p->err, ENOMEM, "rules");
		rc = regcomp(re, value, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char msg[256];

			regerror(rc, re, msg, sizeof(msg));
			free(re);
			return bad(p, "%s: bad regular expression: %s", key, msg);
		}
		/* compiled to check it, so kept */
		c->re = re;
		c->re_src = strdup(value);
		if (!c->re_src || ward_re_literals(value, &c->lits, &c->n_lits) < 0)
			return ward_error_make(p->err, ENOMEM, "rules");
		if (kind == C_WHOLE)
			r->whole_only = true;
		return 0;
	}
	case C_STDIN:
		if (strcmp(value, "pipe") && strcmp(value, "script"))
			return bad(p, "stdin must be pipe or script, not \"%s\"", value);
		return split_items(p, value, &c->items, &c->n_items, false);
	case C_CONTEXT:
		if (strcmp(value, "substitution"))
			return bad(p, "context must be substitution, not \"%s\"", value);
		return 0;
	case C_ARGSUBST:
		if (strcmp(value, "yes"))
			return bad(p, "argsubst must be yes, not \"%s\"", value);
		return 0;
	case C_CODE:
		if (strcmp(value, "dynamic") && strcmp(value, "downloaded"))
			return bad(p, "code must be dynamic or downloaded, not \"%s\"", value);
		return split_items(p, value, &c->items, &c->n_items, false);
	case C_OPT: {
		char **items = NULL;
		size_t n = 0, k;
		bool after = false;
		int rc = 0;

		if (split_items(p, value, &items, &n, false) < 0)
			return -1;
		for (k = 0; k < n && rc == 0; k++) {
			if (strcmp(items[k], ":") == 0) {
				if (after)
					rc = bad(p, "opt has more than one ':'");
				after = true;
			} else if (after) {
				rc = push_str(&c->items, &c->n_items, items[k], strlen(items[k]), true);
			} else if (items[k][0] != '-') {
				rc = bad(p, "opt: \"%s\" is not an option", items[k]);
			} else {
				rc = push_str(&c->opts, &c->n_opts, items[k], strlen(items[k]), false);
			}
		}
		for (k = 0; k < n; k++)
			free(items[k]);
		free(items);
		if (rc < 0)
			return rc;
		if (!c->n_opts || !c->n_items)
			return bad(p, "opt is OPTION... : GLOB...");
		return 0;
	}
	case C_FLAG:
		if (split_items(p, value, &c->items, &c->n_items, false) < 0)
			return -1;
		for (i = 0; i < c->n_items; i++)
			if (c->items[i][0] != '-' || !c->items[i][1])
				return bad(p, "flag: \"%s\" is not an option", c->items[i]);
		return 0;
	case C_UPSTREAM:
		/* Lowercased except the options after ':' (short options are
		 * case-sensitive: base64 -D is not base64 -d everywhere). */
		if (split_items(p, value, &c->items, &c->n_items, false) < 0)
			return -1;
		for (i = 0; i < c->n_items; i++) {
			char *s = c->items[i];

			for (; *s && *s != ':'; s++)
				*s = (char)tolower((unsigned char)*s);
		}
		return 0;
	default:
		return split_items(p, value, &c->items, &c->n_items, true);
	}
}

static bool valid_id(const char *id)
{
	const char *s;

	if (!*id || strlen(id) >= WARD_ERROR_RULE_MAX)
		return false;
	for (s = id; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '.' ||
		      *s == '-' || *s == '_'))
			return false;
	return true;
}

static int finish_rule(struct parse *p, struct rule *r)
{
	size_t i;

	if (!r->category)
		return bad(p, "rule [%s] has no category", r->id);
	if (!r->words)
		return bad(p, "rule [%s] has no words", r->id);
	if (!r->n_conds)
		return bad(p, "rule [%s] has no condition", r->id);
	if (r->whole_only)
		for (i = 0; i < r->n_conds; i++)
			if (r->conds[i].kind != C_WHOLE)
				return bad(p, "rule [%s]: whole cannot be combined with other keys",
					   r->id);
	return 0;
}

static int append_rule(struct ward_rules *rs, struct rule *r, struct ward_error **err)
{
	struct rule *g = realloc(rs->rules, (rs->n + 1) * sizeof(*g));

	if (!g)
		return ward_error_make(err, ENOMEM, "rules");
	rs->rules = g;
	rs->rules[rs->n++] = *r;
	memset(r, 0, sizeof(*r));
	return 0;
}

static bool has_id(const struct ward_rules *rs, const char *id)
{
	size_t i;

	for (i = 0; rs && i < rs->n; i++)
		if (strcmp(rs->rules[i].id, id) == 0)
			return true;
	return false;
}

/* Parse text into rules appended to out; `also` (may be NULL) holds ids
 * already taken. */
static int parse_text(const char *text, const char *origin, const struct ward_rules *also,
		      struct ward_rules *out, struct ward_error **err)
{
	struct parse p = { .origin = origin ? origin : "rules", .err = err };
	struct rule r;
	const char *s = text;
	bool in_rule = false;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	for (;;) {
		size_t len = strcspn(s, "\n");
		bool end = s[len] == '\0';
		_cleanup_free_ char *line = strndup(s, len);
		char *l, *eq, *key, *value;

		if (!line) {
			ward_error_make(err, ENOMEM, "rules");
			goto out;
		}
		p.line++;
		l = trim(line);
		if (*l == '[' && in_rule) {
			if (finish_rule(&p, &r) < 0 || append_rule(out, &r, err) < 0)
				goto out;
			in_rule = false;
		}
		if (*l == '[') {
			char *close = strchr(l, ']');

			if (!close || close[1]) {
				bad(&p, "a rule starts with [id] alone on its line");
				goto out;
			}
			*close = '\0';
			if (!valid_id(l + 1)) {
				bad(&p, "rule id \"%s\": use a-z, 0-9, '.', '-' and '_'", l + 1);
				goto out;
			}
			if (has_id(out, l + 1) || has_id(also, l + 1)) {
				bad(&p, "rule id \"%s\" is already taken", l + 1);
				goto out;
			}
			memset(&r, 0, sizeof(r));
			r.id = strdup(l + 1);
			r.refuses = true;
			if (!r.id) {
				ward_error_make(err, ENOMEM, "rules");
				goto out;
			}
			in_rule = true;
		} else if (*l && *l != '#') {
			eq = strchr(l, '=');
			if (!eq) {
				bad(&p, "expected KEY = VALUE");
				goto out;
			}
			if (!in_rule) {
				bad(&p, "a key outside a rule: start one with [id]");
				goto out;
			}
			*eq = '\0';
			key = trim(l);
			value = trim(eq + 1);
			if (strcmp(key, "category") == 0) {
				size_t i;
				bool known = false;

				for (i = 0; i < ARRAY_SIZE(categories); i++)
					known = known || strcmp(value, categories[i]) == 0;
				if (r.category) {
					bad(&p, "category given twice");
					goto out;
				}
				if (!known) {
					bad(&p, "unknown category \"%s\" (known: blocked, dangerous, "
						"injection, sensitive, approval)", value);
					goto out;
				}
				r.category = strdup(value);
				r.refuses = strcmp(value, "approval") != 0;
			} else if (strcmp(key, "words") == 0) {
				if (!*value || r.words) {
					bad(&p, "%s", r.words ? "words given twice" : "words is empty");
					goto out;
				}
				r.words = strdup(value);
			} else if (add_cond(&p, &r, key, value) < 0) {
				goto out;
			}
		}
		if (end)
			break;
		s += len + 1;
	}
	if (in_rule) {
		if (finish_rule(&p, &r) < 0 || append_rule(out, &r, err) < 0)
			goto out;
		in_rule = false;
	}
	rc = 0;
out:
	if (in_rule || r.id)
		rule_release(&r);
	return rc;
}

/* Add an exception to every path and write condition of r. */
static int rule_add_except(struct rule *r, const char *glob)
{
	size_t i;
	bool any = false;

	for (i = 0; i < r->n_conds; i++) {
		struct cond *c = &r->conds[i];

		if (c->kind != C_PATH && c->kind != C_WRITE)
			continue;
		if (push_str(&c->except, &c->n_except, glob, strlen(glob), true) < 0)
			return -ENOMEM;
		any = true;
	}
	return any ? 0 : -EINVAL;
}

#ifdef WARD_RULES_NO_BUILTIN
/* filters/validate/gen/embed.c, which makes the table, runs without one */
struct ward_rules ward_rules_builtin_table;
#endif

const struct ward_rules *ward_rules_builtin(struct ward_error **err)
{
	return &ward_rules_builtin_table;
}

bool ward_rules_prefilter = true;

/* One lock for compiling any rule's expression: it is taken once per
 * expression and process, at most. */
static pthread_mutex_t re_lock = PTHREAD_MUTEX_INITIALIZER;

int ward_cond_regexec(const struct cond *cd, const char *s)
{
	/* the built-in table is shared and const to its users; only the
	 * compiled expression, published once under re_lock, changes */
	struct cond *c = (struct cond *)cd;
	regex_t *re;
	size_t i;

	if (cd->n_lits && ward_rules_prefilter) {
		for (i = 0; i < cd->n_lits; i++)
			if (strstr(s, cd->lits[i]))
				break;
		if (i == cd->n_lits)
			return 0;
	}
	re = __atomic_load_n(&c->re, __ATOMIC_ACQUIRE);
	if (!re) {
		pthread_mutex_lock(&re_lock);
		re = c->re;
		if (!re && (re = malloc(sizeof(*re)))) {
			if (regcomp(re, c->re_src, REG_EXTENDED | REG_NOSUB) == 0) {
				__atomic_store_n(&c->re, re, __ATOMIC_RELEASE);
			} else {
				free(re);
				re = NULL;
			}
		}
		pthread_mutex_unlock(&re_lock);
		if (!re)
			return -1;
	}
	return regexec(re, s, 0, NULL, 0) == 0;
}

/* Copy n strings into a new vector; *dn counts what was copied, so a copy
 * cut short by ENOMEM is released like a whole one. */
static int strv_copy(char ***dst, size_t *dn, char *const *src, size_t n)
{
	size_t i;

	*dst = NULL;
	*dn = 0;
	if (!n)
		return 0;
	*dst = calloc(n, sizeof(**dst));
	if (!*dst)
		return -1;
	for (i = 0; i < n; i++) {
		(*dst)[i] = strdup(src[i]);
		if (!(*dst)[i])
			return -1;
		(*dn)++;
	}
	return 0;
}

/* A copy of a condition; its expression is compiled again when needed. */
static int cond_copy(struct cond *d, const struct cond *c)
{
	memset(d, 0, sizeof(*d));
	d->kind = c->kind;
	if (strv_copy(&d->items, &d->n_items, c->items, c->n_items) < 0 ||
	    strv_copy(&d->opts, &d->n_opts, c->opts, c->n_opts) < 0 ||
	    strv_copy(&d->except, &d->n_except, c->except, c->n_except) < 0 ||
	    strv_copy(&d->lits, &d->n_lits, c->lits, c->n_lits) < 0)
		return -1;
	if (c->re_src && !(d->re_src = strdup(c->re_src)))
		return -1;
	return 0;
}

static int rule_copy(struct rule *d, const struct rule *r)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->refuses = r->refuses;
	d->relaxed = r->relaxed;
	d->whole_only = r->whole_only;
	d->id = strdup(r->id);
	d->category = strdup(r->category);
	d->words = strdup(r->words);
	if (!d->id || !d->category || !d->words)
		return -1;
	d->conds = calloc(r->n_conds, sizeof(*d->conds));
	if (!d->conds)
		return -1;
	for (i = 0; i < r->n_conds; i++) {
		d->n_conds = i + 1;
		if (cond_copy(&d->conds[i], &r->conds[i]) < 0)
			return -1;
	}
	return 0;
}

struct ward_rules *ward_rules_dup(const struct ward_rules *rules, struct ward_error **err)
{
	struct ward_rules *out;
	size_t i;

	if (!rules && !(rules = ward_rules_builtin(err)))
		return NULL;
	out = calloc(1, sizeof(*out));
	if (!out || (rules->n && !(out->rules = calloc(rules->n, sizeof(*out->rules))))) {
		free(out);
		ward_error_make(err, ENOMEM, "rules");
		return NULL;
	}
	for (i = 0; i < rules->n; i++) {
		out->n = i + 1;
		if (rule_copy(&out->rules[i], &rules->rules[i]) < 0) {
			ward_rules_free(out);
			ward_error_make(err, ENOMEM, "rules");
			return NULL;
		}
	}
	return out;
}

struct ward_rules *ward_rules_new(struct ward_error **err)
{
	return ward_rules_dup(NULL, err);
}

static struct rule *find(struct ward_rules *rules, const char *id)
{
	size_t i;

	for (i = 0; i < rules->n; i++)
		if (strcmp(rules->rules[i].id, id) == 0)
			return &rules->rules[i];
	return NULL;
}

int ward_rules_remove(struct ward_rules *rules, const char *id, struct ward_error **err)
{
	struct rule *r = find(rules, id);
	size_t at;

	if (!r)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "no rule \"%s\" to remove", id);
	at = (size_t)(r - rules->rules);
	rule_release(r);
	memmove(r, r + 1, (rules->n - at - 1) * sizeof(*r));
	rules->n--;
	return 0;
}

int ward_rules_relax(struct ward_rules *rules, const char *id, struct ward_error **err)
{
	struct rule *r = find(rules, id);

	if (!r)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "no rule \"%s\" to relax", id);
	if (!r->refuses)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "rule \"%s\" already needs approval only: remove it "
					    "to allow what it matches", id);
	r->refuses = false;
	r->relaxed = true;
	return 0;
}

int ward_rules_except(struct ward_rules *rules, const char *id, const char *glob,
		      struct ward_error **err)
{
	struct rule *r = find(rules, id);
	int rc;

	if (!r)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "no rule \"%s\" to make an exception to", id);
	if (!glob || !*glob)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "rule \"%s\": an exception is a non-empty glob", id);
	rc = rule_add_except(r, glob);
	if (rc == -EINVAL)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "rule \"%s\" matches no path: it takes no exceptions "
					    "(remove or relax it instead)", id);
	if (rc < 0)
		return ward_error_make(err, ENOMEM, "rules");
	return 0;
}

int ward_rules_add_text(struct ward_rules *rules, const char *text, const char *origin,
			struct ward_error **err)
{
	struct ward_rules added = { 0 };
	struct rule *g;

	if (parse_text(text, origin, rules, &added, err) < 0) {
		size_t i;

		for (i = 0; i < added.n; i++)
			rule_release(&added.rules[i]);
		free(added.rules);
		return -1;
	}
	if (!added.n) {
		free(added.rules);
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "rules '%s': no rule in it", origin ? origin : "rules");
	}
	g = realloc(rules->rules, (rules->n + added.n) * sizeof(*g));
	if (!g) {
		size_t i;

		for (i = 0; i < added.n; i++)
			rule_release(&added.rules[i]);
		free(added.rules);
		return ward_error_make(err, ENOMEM, "rules");
	}
	rules->rules = g;
	memcpy(rules->rules + rules->n, added.rules, added.n * sizeof(*g));
	rules->n += added.n;
	free(added.rules);
	return 0;
}

static const struct ward_rules *or_builtin(const struct ward_rules *rules)
{
	return rules ? rules : ward_rules_builtin(NULL);
}

size_t ward_rules_count(const struct ward_rules *rules)
{
	rules = or_builtin(rules);
	return rules ? rules->n : 0;
}

const char *ward_rules_id(const struct ward_rules *rules, size_t i)
{
	rules = or_builtin(rules);
	return rules && i < rules->n ? rules->rules[i].id : NULL;
}

const char *ward_rules_category(const struct ward_rules *rules, size_t i)
{
	rules = or_builtin(rules);
	return rules && i < rules->n ? rules->rules[i].category : NULL;
}

const char *ward_rules_words(const struct ward_rules *rules, size_t i)
{
	rules = or_builtin(rules);
	return rules && i < rules->n ? rules->rules[i].words : NULL;
}

bool ward_rules_refuses(const struct ward_rules *rules, size_t i)
{
	rules = or_builtin(rules);
	return rules && i < rules->n && rules->rules[i].refuses;
}
