/* test-relit.c — the literals of a regular expression (filters/validate/relit.c) and
 * the rule table compiled at build time: literals worked out by hand, then
 * soundness against regexec(3) itself (a string the expression matches
 * always holds one of its literals) over thousands of random expressions and
 * strings and over every built-in rule's expression, and the generated table
 * against the rules file parsed at run time. */
#include "harness.h"
#include "filters/validate/validate-internal.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

/* The literals of re, sorted and joined by '|' ("" for none), in buf. */
static const char *lits_of(const char *re, char *buf, size_t size)
{
	char **lits;
	size_t n, i, k;

	ck_assert_int_eq(ward_re_literals(re, &lits, &n), 0);
	for (i = 0; i < n; i++)
		for (k = i + 1; k < n; k++)
			if (strcmp(lits[k], lits[i]) < 0) {
				char *t = lits[i];

				lits[i] = lits[k];
				lits[k] = t;
			}
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		ck_assert_uint_gt(strlen(lits[i]), 0);
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? "|" : "", lits[i]);
	}
	ward_re_literals_free(lits, n);
	return buf;
}

START_TEST(test_by_hand)
{
	static const struct {
		const char *re, *lits;
	} cases[] = {
		{ "abc", "abc" },
		{ "a|b", "a|b" },
		{ "drop (database|schema)", "drop database|drop schema" },
		{ "(^|[^a-z0-9_])drop (temporary )?table([^a-z0-9_]|$)",
		  "drop table|drop temporary table" },
		/* "truncate table " holds "truncate ": one is enough */
		{ "(^|[^a-z0-9_])truncate( table)? [a-z_\"`\\[]", "truncate " },
		{ "ab*c", "a" },
		{ "x[[:space:]]*longer", "longer" },
		{ "[ab]c", "ac|bc" },
		{ "[a-c]d", "d" },
		{ "[^a]d", "d" },
		{ "[]a]", "]|a" },
		{ "[a-]x", "-x|ax" },
		{ "\\(\\)", "()" },
		{ "os\\.fork\\(\\)", "os.fork()" },
		{ "a{2}", "a" },
		{ "a{0}b", "b" },
		{ "a{0,1}b", "b" },
		{ "(ab){1}c", "abc" },
		{ "(ab)+c", "ab" },
		{ "\\wfoo", "foo" },
		{ "\\bword\\b", "word" },
		{ "fork[[:space:]]+while|os\\.fork", "os.fork|while" },
		/* nothing every match must hold */
		{ "a*", "" },
		{ "x?", "" },
		{ ".", "" },
		{ "(a|)", "" },
		{ "a|b*", "" },
		{ "[abcdefghij]", "" },
		{ "^$", "" },
		/* constructs it does not follow: no literals, the expression always runs */
		{ "caf\xc3\xa9", "" },
		{ "a)b", "" },
		{ "*a", "" },
		{ "a{x}", "" },
		{ "a{2,1}", "" },
		{ "^*abc", "" },
		{ "(abc", "" },
		{ "[abc", "" },
		{ "[[:alpha:]", "" },
		{ "abc\\", "" },
	};
	char buf[512];
	size_t i;

	for (i = 0; i < ARRAY_N(cases); i++)
		ck_assert_msg(strcmp(lits_of(cases[i].re, buf, sizeof(buf)), cases[i].lits) == 0,
			      "'%s': literals '%s', expected '%s'", cases[i].re, buf, cases[i].lits);
}
END_TEST

/* Whether a match of re in s (re compiled in r) holds one of the literals. */
static int check_sound(const char *re, const regex_t *r, char **lits, size_t n, const char *s)
{
	size_t i;

	if (!n || regexec(r, s, 0, NULL, 0) != 0)
		return 0;
	for (i = 0; i < n; i++)
		if (strstr(s, lits[i]))
			return 1;
	ck_abort_msg("'%s' matches '%s' but holds none of its %zu literals (first '%s')", re, s, n,
		     lits[0]);
	return 0;
}

static unsigned rnd(unsigned *seed, unsigned n)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) % n;
}

static void random_re(unsigned *seed, char *out, size_t size, int depth)
{
	static const char *const atoms[] = { "a", "b", "c", "ab", "ba", ".", "[ab]", "[^a]",
					     "[a-c]", "\\.", "^", "$", "\\b", "\\w", "[]a]",
					     "[a-]", "[[:alpha:]]" };
	static const char *const quants[] = { "", "", "", "*", "+", "?", "{0,1}", "{2}",
					      "{1,3}", "{0}", "{2,}" };
	unsigned pieces = 1 + rnd(seed, 4), i;

	for (i = 0; i < pieces; i++) {
		if (depth < 3 && rnd(seed, 5) == 0) {
			char inner[256] = "";

			random_re(seed, inner, sizeof(inner), depth + 1);
			snprintf(out + strlen(out), size - strlen(out), "(%s)", inner);
		} else {
			snprintf(out + strlen(out), size - strlen(out), "%s",
				 atoms[rnd(seed, ARRAY_N(atoms))]);
		}
		snprintf(out + strlen(out), size - strlen(out), "%s",
			 quants[rnd(seed, ARRAY_N(quants))]);
	}
	if (rnd(seed, 4) == 0) {
		snprintf(out + strlen(out), size - strlen(out), "|");
		random_re(seed, out, size, depth + 1);
	}
}

/* Thousands of random expressions over a small alphabet, each against
 * hundreds of random strings over it: regexec() decides, the literals must
 * agree whenever it says "match". */
START_TEST(test_random_sound)
{
	unsigned seed = 20261123, i, k;
	unsigned with_lits = 0, matches = 0;

	for (i = 0; i < 3000; i++) {
		char re[1024] = "";
		regex_t r;
		char **lits;
		size_t n;

		random_re(&seed, re, sizeof(re), 0);
		if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
			continue;
		ck_assert_int_eq(ward_re_literals(re, &lits, &n), 0);
		with_lits += n > 0;
		for (k = 0; k < 300; k++) {
			char s[16];
			unsigned len = rnd(&seed, 10), j;

			for (j = 0; j < len; j++)
				s[j] = "abc. -"[rnd(&seed, 6)];
			s[len] = '\0';
			matches += (unsigned)check_sound(re, &r, lits, n, s);
		}
		ward_re_literals_free(lits, n);
		regfree(&r);
	}
	/* the test means something only if it saw literals and matches */
	ck_assert_uint_gt(with_lits, 800);
	ck_assert_uint_gt(matches, 10000);
	printf("# relit: %u random expressions with literals, %u matches checked\n", with_lits,
	       matches);
	fflush(stdout);
}
END_TEST

/* Every built-in rule's expression against strings made of the words such
 * rules look for, in random order and spacing, and each of its literals
 * cut short (the near misses the prefilter answers alone). */
START_TEST(test_builtin_sound)
{
	static const char *const frags[] = {
		"drop", "table", "temporary", "database", "schema", "truncate", "delete", "from",
		"fork", "while", "true", "1", ":", "os.fork()", "os.fork", "function", "f", "bomb",
		"()", "(", ")", "{", "}", "|", "&", ";", " ", " ", "  ", "\"", "`", "[", "_", "x",
		"a:b", "..", "select", "into", "where", "echo", "perl -e",
	};
	const struct ward_rules *rs = ward_rules_builtin(NULL);
	unsigned seed = 7, regexes = 0, matches = 0, k, j;
	size_t i, c;

	ck_assert_ptr_nonnull(rs);
	for (i = 0; i < rs->n; i++)
		for (c = 0; c < rs->rules[i].n_conds; c++) {
			const struct cond *cd = &rs->rules[i].conds[c];
			regex_t r;

			if (cd->kind != C_TEXT && cd->kind != C_WHOLE)
				continue;
			ck_assert_ptr_nonnull(cd->re_src);
			ck_assert_int_eq(regcomp(&r, cd->re_src, REG_EXTENDED | REG_NOSUB), 0);
			regexes++;
			for (k = 0; k < 20000; k++) {
				char s[256] = "";
				unsigned parts = 1 + rnd(&seed, 12);

				for (j = 0; j < parts; j++)
					snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%s",
						 rnd(&seed, 2) ? " " : "",
						 frags[rnd(&seed, ARRAY_N(frags))]);
				matches += (unsigned)check_sound(cd->re_src, &r, cd->lits, cd->n_lits,
								 s);
			}
			for (k = 0; k < cd->n_lits; k++) {
				char s[256];
				size_t len = strlen(cd->lits[k]);

				for (j = 0; j < len; j++) {
					snprintf(s, sizeof(s), " %.*s %s", (int)j, cd->lits[k],
						 cd->lits[k] + j + 1);
					check_sound(cd->re_src, &r, cd->lits, cd->n_lits, s);
				}
			}
			regfree(&r);
		}
	ck_assert_uint_ge(regexes, 7);
	ck_assert_uint_gt(matches, 100);
	printf("# relit: %u built-in expressions, %u matches of random strings checked\n",
	       regexes, matches);
	fflush(stdout);
}
END_TEST

static bool strv_eq(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

/* The table generated at build time is the rules file as the run-time
 * parser reads it (a policy's rules go through that parser). */
START_TEST(test_generated_table)
{
	const struct ward_rules *b = ward_rules_builtin(NULL);
	struct ward_rules *p = calloc(1, sizeof(*p));
	struct ward_error *err = NULL;
	size_t i, c;

	ck_assert_int_eq(ward_rules_add_text(p, ward_rules_builtin_text(), "t", &err), 0);
	ck_assert_uint_eq(b->n, p->n);
	for (i = 0; i < b->n; i++) {
		const struct rule *x = &b->rules[i], *y = &p->rules[i];

		ck_assert_str_eq(x->id, y->id);
		ck_assert_str_eq(x->category, y->category);
		ck_assert_str_eq(x->words, y->words);
		ck_assert(x->refuses == y->refuses && x->relaxed == y->relaxed &&
			  x->whole_only == y->whole_only);
		ck_assert_uint_eq(x->n_conds, y->n_conds);
		for (c = 0; c < x->n_conds; c++) {
			const struct cond *u = &x->conds[c], *v = &y->conds[c];

			ck_assert_int_eq(u->kind, v->kind);
			ck_assert(strv_eq(u->items, u->n_items, v->items, v->n_items));
			ck_assert(strv_eq(u->opts, u->n_opts, v->opts, v->n_opts));
			ck_assert(strv_eq(u->except, u->n_except, v->except, v->n_except));
			ck_assert(strv_eq(u->lits, u->n_lits, v->lits, v->n_lits));
			ck_assert((u->re_src == NULL) == (v->re_src == NULL));
			if (u->re_src)
				ck_assert_str_eq(u->re_src, v->re_src);
		}
	}
	ward_rules_free(p);
}
END_TEST

/* A copy of the table (what a policy changes) is whole and independent. */
START_TEST(test_copy)
{
	struct ward_error *err = NULL;
	struct ward_rules *a = ward_rules_new(&err), *b;
	struct ward_verdict v;

	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(ward_rules_except(a, "blocked.device-write", "/dev/sdz", &err), 0);
	ck_assert_int_eq(ward_rules_relax(a, "blocked.fork-bomb-loop", &err), 0);
	b = ward_rules_dup(a, &err);
	ck_assert_ptr_nonnull(b);
	ward_rules_free(a);
	ck_assert_int_eq(ward_validate(b, "cat img > /dev/sdz", &v, &err), 0);
	ck_assert_int_eq(v.kind, WARD_VERDICT_ALLOWED);
	ward_verdict_release(&v);
	ck_assert_int_eq(ward_validate(b, "cat img > /dev/sdy", &v, &err), 0);
	ck_assert_int_eq(v.kind, WARD_VERDICT_REFUSED);
	ward_verdict_release(&v);
	ck_assert_int_eq(ward_validate(b, "perl -e 'fork while fork'", &v, &err), 0);
	ck_assert_int_eq(v.kind, WARD_VERDICT_APPROVAL_REQUIRED);
	ck_assert_str_eq(v.rule, "blocked.fork-bomb-loop");
	ward_verdict_release(&v);
	ck_assert_int_eq(ward_validate(b, "psql -c 'DROP TABLE users'", &v, &err), 0);
	ck_assert_int_eq(v.kind, WARD_VERDICT_APPROVAL_REQUIRED);
	ck_assert_str_eq(v.rule, "approval.sql-drop-table");
	ward_verdict_release(&v);
	ward_rules_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("relit");
	TCase *tc = harness_tcase(s, "relit", NULL);

	tcase_add_test(tc, test_by_hand);
	tcase_add_test(tc, test_random_sound);
	tcase_add_test(tc, test_builtin_sound);
	tcase_add_test(tc, test_generated_table);
	tcase_add_test(tc, test_copy);
	return harness_main(s);
}
