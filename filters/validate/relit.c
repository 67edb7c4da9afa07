/* relit.c — literals every match of a POSIX extended regular expression
 * contains (see validate-internal.h). Pure code.
 *
 * Each part of the expression gets two facts: `ex`, when known, a set holding
 * every string the part can match (a literal, a small bracket, `(a|b)`, `x?`),
 * and `req`, a set such that every string it matches contains one of them
 * ({""}: nothing is known). A sequence multiplies neighbouring exact sets
 * (`drop (temporary )?table` is {"drop table", "drop temporary table"}) and
 * keeps the best of what each stretch requires; an alternation requires one
 * of its branches' sets; `*`, `?` and `{0,…}` require nothing. The same walk
 * as the codesearch/RE2 prefilters, kept small: whatever it does not know,
 * it treats as "any text" or gives up, which only costs a regexec(). */
#include "filters/validate/validate-internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SET_MAX 16   /* members of an exact set, past which it is dropped */
#define LEN_MAX 64   /* length of a member of an exact set */
#define DEPTH_MAX 64 /* nested groups */
#define BRACKET_MAX 8

struct set {
	char **s;
	size_t n;
};

struct info {
	bool exact;     /* ex holds every string the part can match */
	struct set ex;
	struct set req; /* every match contains one of these; {""}: nothing known */
};

struct rx {
	const char *p;
	int depth;
	bool give_up; /* a construct not followed: no literals at all */
	bool nomem;
};

static void set_free(struct set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->s[i]);
	free(s->s);
	s->s = NULL;
	s->n = 0;
}

static bool set_has(const struct set *s, const char *x, size_t len)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strlen(s->s[i]) == len && memcmp(s->s[i], x, len) == 0)
			return true;
	return false;
}

static int set_add(struct rx *rx, struct set *s, const char *x, size_t len)
{
	char **g;
	char *d;

	if (set_has(s, x, len))
		return 0;
	g = realloc(s->s, (s->n + 1) * sizeof(*g));
	if (!g)
		goto nomem;
	s->s = g;
	d = strndup(x, len);
	if (!d)
		goto nomem;
	s->s[s->n++] = d;
	return 0;
nomem:
	rx->nomem = true;
	return -1;
}

static int set_copy(struct rx *rx, struct set *dst, const struct set *src)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		if (set_add(rx, dst, src->s[i], strlen(src->s[i])) < 0)
			return -1;
	return 0;
}

static void set_move(struct set *dst, struct set *src)
{
	set_free(dst);
	*dst = *src;
	src->s = NULL;
	src->n = 0;
}

static int set_empty_string(struct rx *rx, struct set *s)
{
	set_free(s);
	return set_add(rx, s, "", 0);
}

static bool set_trivial(const struct set *s)
{
	return s->n == 0 || set_has(s, "", 0);
}

/* Every pairing of a member of a with one of b; 0 when that is too big. */
static int set_product(struct rx *rx, const struct set *a, const struct set *b, struct set *out)
{
	size_t i, k;
	char buf[2 * LEN_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (a->n * b->n > SET_MAX)
		return 0;
	for (i = 0; i < a->n; i++)
		for (k = 0; k < b->n; k++) {
			size_t la = strlen(a->s[i]), lb = strlen(b->s[k]);

			if (la + lb > LEN_MAX) {
				set_free(out);
				return 0;
			}
			memcpy(buf, a->s[i], la);
			memcpy(buf + la, b->s[k], lb);
			if (set_add(rx, out, buf, la + lb) < 0) {
				set_free(out);
				return -1;
			}
		}
	return 1;
}

/* "contains x or contains xy" is "contains x": drop members holding another
 * member; a set holding "" is {""}. */
static void set_minimize(struct set *s)
{
	size_t i, k, o = 0;

	if (set_has(s, "", 0)) {
		for (i = 0; i < s->n; i++)
			if (*s->s[i]) {
				free(s->s[i]);
			} else {
				s->s[0] = s->s[i];
			}
		s->n = 1;
		return;
	}
	/* members are distinct (set_add), so "holds another" is one-way; a
	 * member found redundant is marked (its first byte cleared, as no
	 * member is empty here) and freed only once all are compared */
	for (i = 0; i < s->n; i++)
		for (k = 0; k < s->n; k++)
			if (k != i && *s->s[k] && strstr(s->s[i], s->s[k])) {
				s->s[i][0] = '\0';
				break;
			}
	for (i = 0; i < s->n; i++)
		if (*s->s[i])
			s->s[o++] = s->s[i];
		else
			free(s->s[i]);
	s->n = o;
}

/* A requirement is as good as its shortest member is long. */
static size_t set_score(const struct set *s)
{
	size_t i, m = (size_t)-1;

	if (!s->n)
		return 0;
	for (i = 0; i < s->n; i++)
		if (strlen(s->s[i]) < m)
			m = strlen(s->s[i]);
	return m;
}

/* Keep the better of *best and *cand in *best; cand is consumed. */
static void offer(struct set *best, struct set *cand)
{
	size_t a = set_score(cand), b = set_score(best);

	if (a > b || (a == b && a > 0 && cand->n < best->n))
		set_move(best, cand);
	else
		set_free(cand);
}

static void info_free(struct info *in)
{
	set_free(&in->ex);
	set_free(&in->req);
	in->exact = false;
}

static int info_unknown(struct rx *rx, struct info *in)
{
	memset(in, 0, sizeof(*in));
	return set_empty_string(rx, &in->req);
}

/* An exact info: req is ex itself. */
static int info_exact(struct rx *rx, struct info *in, struct set *ex)
{
	memset(in, 0, sizeof(*in));
	in->exact = true;
	set_move(&in->ex, ex);
	if (set_copy(rx, &in->req, &in->ex) < 0)
		return -1;
	set_minimize(&in->req);
	return 0;
}

static int info_literal(struct rx *rx, struct info *in, const char *s, size_t len)
{
	struct set ex = { 0 };

	if (set_add(rx, &ex, s, len) < 0)
		return -1;
	return info_exact(rx, in, &ex);
}

static int parse_alt(struct rx *rx, struct info *out);

static int parse_bracket(struct rx *rx, struct info *out)
{
	const char *p = rx->p + 1;
	bool complex = false, first = true;
	char chars[BRACKET_MAX];
	size_t n = 0, i;
	struct set ex = { 0 };

	if (*p == '^') {
		complex = true;
		p++;
	}
	for (;;) {
		char c = *p;
		bool at_start = first;

		if (!c) {
			rx->give_up = true;
			return -1;
		}
		if (c == ']' && !first) {
			p++;
			break;
		}
		first = false;
		if (c == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.')) {
			char close[3] = { p[1], ']', '\0' };
			const char *q = strstr(p + 2, close);

			if (!q) {
				rx->give_up = true;
				return -1;
			}
			complex = true;
			p = q + 2;
			continue;
		}
		if (c == '-' && !at_start && p[1] != ']')
			complex = true; /* a range */
		else if (n < BRACKET_MAX && !memchr(chars, c, n))
			chars[n++] = c;
		else if (n == BRACKET_MAX)
			complex = true;
		p++;
	}
	rx->p = p;
	if (complex)
		return info_unknown(rx, out);
	for (i = 0; i < n; i++)
		if (set_add(rx, &ex, &chars[i], 1) < 0) {
			set_free(&ex);
			return -1;
		}
	return info_exact(rx, out, &ex);
}

static int parse_atom(struct rx *rx, struct info *out)
{
	char c = *rx->p;

	switch (c) {
	case '(':
		if (++rx->depth > DEPTH_MAX) {
			rx->give_up = true;
			return -1;
		}
		rx->p++;
		if (parse_alt(rx, out) < 0)
			return -1;
		if (*rx->p != ')') {
			info_free(out);
			rx->give_up = true;
			return -1;
		}
		rx->p++;
		rx->depth--;
		return 0;
	case '[':
		return parse_bracket(rx, out);
	case '.':
		rx->p++;
		return info_unknown(rx, out);
	case '\\': {
		char e = rx->p[1];

		if (!e) {
			rx->give_up = true;
			return -1;
		}
		rx->p += 2;
		/* glibc's \w \W \s \S \b \B \< \> \` \': not literals */
		if (isalnum((unsigned char)e) || strchr("<>`'", e))
			return info_unknown(rx, out);
		return info_literal(rx, out, &e, 1);
	}
	case '*':
	case '+':
	case '?':
	case '{':
	case ')':
	case '|':
	case '\0':
		/* a repetition of nothing, a stray parenthesis: left to regcomp */
		rx->give_up = true;
		return -1;
	default:
		rx->p++;
		return info_literal(rx, out, &c, 1);
	}
}

/* {n}, {n,}, {n,m}, {,m}: *min and *max (-1: no bound). */
static int parse_interval(struct rx *rx, long *min, long *max)
{
	const char *p = rx->p + 1;
	char *end;

	*min = 0;
	*max = -1;
	if (isdigit((unsigned char)*p)) {
		*min = strtol(p, &end, 10);
		p = end;
	} else if (*p != ',') {
		return -1;
	}
	if (*p == ',') {
		p++;
		if (isdigit((unsigned char)*p)) {
			*max = strtol(p, &end, 10);
			p = end;
		} else if (p == rx->p + 2) {
			return -1; /* {,} */
		}
	} else {
		*max = *min;
	}
	if (*p != '}' || *min > 0x7fff || *max > 0x7fff || (*max >= 0 && *max < *min))
		return -1;
	rx->p = p + 1;
	return 0;
}

/* Apply one repetition operator at rx->p to in. */
static int repeat(struct rx *rx, struct info *in, bool anchor)
{
	long min, max;
	struct set ex = { 0 };

	if (anchor) {
		/* glibc reads a repetition after an anchor its own way */
		rx->give_up = true;
		return -1;
	}
	switch (*rx->p) {
	case '*':
		min = 0, max = -1, rx->p++;
		break;
	case '+':
		min = 1, max = -1, rx->p++;
		break;
	case '?':
		min = 0, max = 1, rx->p++;
		break;
	default:
		if (parse_interval(rx, &min, &max) < 0) {
			rx->give_up = true;
			return -1;
		}
	}
	if (min == 1 && max == 1)
		return 0;
	if (max == 0) { /* x{0}: only the empty string */
		info_free(in);
		if (set_add(rx, &ex, "", 0) < 0)
			return -1;
		return info_exact(rx, in, &ex);
	}
	if (min == 0 && max == 1 && in->exact) {
		if (set_add(rx, &in->ex, "", 0) < 0)
			return -1;
		if (in->ex.n > SET_MAX) {
			set_free(&in->ex);
			in->exact = false;
		}
		return set_empty_string(rx, &in->req);
	}
	/* x{n,…} with n ≥ 1 still requires what x requires */
	set_free(&in->ex);
	in->exact = false;
	if (min == 0)
		return set_empty_string(rx, &in->req);
	return 0;
}

/* A sequence of pieces, up to `|`, `)` or the end. */
static int parse_branch(struct rx *rx, struct info *out)
{
	struct set run = { 0 }, best = { 0 }, prod;
	bool all_exact = true;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (set_add(rx, &run, "", 0) < 0)
		return -1;
	while (*rx->p && *rx->p != '|' && *rx->p != ')') {
		struct info in;
		bool anchor = *rx->p == '^' || *rx->p == '$';

		if (anchor) {
			/* matches the empty string wherever it holds */
			rx->p++;
			if (info_literal(rx, &in, "", 0) < 0)
				goto out;
		} else if (parse_atom(rx, &in) < 0) {
			goto out;
		}
		while (*rx->p == '*' || *rx->p == '+' || *rx->p == '?' || *rx->p == '{')
			if (repeat(rx, &in, anchor) < 0) {
				info_free(&in);
				goto out;
			}
		if (in.exact) {
			int r = set_product(rx, &run, &in.ex, &prod);

			if (r < 0) {
				info_free(&in);
				goto out;
			}
			if (r == 0) {
				/* too many: what ran so far is one requirement */
				all_exact = false;
				set_minimize(&run);
				offer(&best, &run);
				set_move(&run, &in.ex);
			} else {
				set_move(&run, &prod);
			}
		} else {
			struct set empty = { 0 };

			all_exact = false;
			set_minimize(&run);
			offer(&best, &run);
			if (set_add(rx, &empty, "", 0) < 0) {
				info_free(&in);
				goto out;
			}
			set_move(&run, &empty);
			offer(&best, &in.req);
		}
		info_free(&in);
	}
	if (all_exact) {
		rc = info_exact(rx, out, &run);
		goto out;
	}
	set_minimize(&run);
	offer(&best, &run);
	if (!best.n && set_add(rx, &best, "", 0) < 0)
		goto out;
	set_move(&out->req, &best);
	rc = 0;
out:
	set_free(&run);
	set_free(&best);
	return rc;
}

static int parse_alt(struct rx *rx, struct info *out)
{
	if (parse_branch(rx, out) < 0)
		return -1;
	while (*rx->p == '|') {
		struct info b;

		rx->p++;
		if (parse_branch(rx, &b) < 0) {
			info_free(out);
			return -1;
		}
		if (out->exact && b.exact) {
			if (set_copy(rx, &out->ex, &b.ex) < 0)
				goto nomem;
			if (out->ex.n > SET_MAX) {
				set_free(&out->ex);
				out->exact = false;
			}
		} else {
			set_free(&out->ex);
			out->exact = false;
		}
		if (set_trivial(&out->req) || set_trivial(&b.req)) {
			if (set_empty_string(rx, &out->req) < 0)
				goto nomem;
		} else {
			if (set_copy(rx, &out->req, &b.req) < 0)
				goto nomem;
			set_minimize(&out->req);
		}
		info_free(&b);
		continue;
nomem:
		info_free(&b);
		info_free(out);
		return -1;
	}
	return 0;
}

void ward_re_literals_free(char **lits, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(lits[i]);
	free(lits);
}

int ward_re_literals(const char *re, char ***lits, size_t *n)
{
	struct rx rx = { .p = re };
	struct info in;
	const char *s;

	*lits = NULL;
	*n = 0;
	/* a multibyte character is one atom to regcomp, several bytes here */
	for (s = re; *s; s++)
		if ((unsigned char)*s >= 0x80 || (unsigned char)*s < 0x20)
			return 0;
	if (parse_alt(&rx, &in) < 0) {
		if (rx.nomem) {
			errno = ENOMEM;
			return -1;
		}
		return 0;
	}
	if (*rx.p || set_trivial(&in.req)) {
		info_free(&in);
		return 0;
	}
	set_minimize(&in.req);
	*lits = in.req.s;
	*n = in.req.n;
	in.req.s = NULL;
	in.req.n = 0;
	info_free(&in);
	return 0;
}
