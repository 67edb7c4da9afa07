/* test-frontdoor.c — the front door as a library host uses it: the order
 * (rate limit, then validators, then approval), the in-memory rate log, the
 * approval flag and the question, and the policy's rule set. */
#include "harness.h"
#include "ward/frontdoor.h"
#include "ward/policy.h"

#include <stdio.h>
#include <string.h>

static int asked;

static bool say_yes(void *ctx, const struct ward_verdict *v)
{
	asked++;
	ck_assert_str_eq(v->rule, "approval.git-reset-hard");
	return *(bool *)ctx;
}

static int check(const struct ward_config *cfg, const char *cmd, struct ward_admission *adm,
		 enum ward_error_kind *kind, char *rule)
{
	struct ward_verdict v;
	struct ward_error *err = NULL;
	int rc = ward_frontdoor_check(cfg, cmd, NULL, adm, &v, &err);

	if (rc < 0) {
		*kind = err->kind;
		snprintf(rule, WARD_ERROR_RULE_MAX, "%s", err->rule);
		ward_error_free(err);
	}
	ward_verdict_release(&v);
	return rc;
}

START_TEST(test_order_and_approval)
{
	struct ward_config cfg;
	struct ward_ratelog log = { 0 };
	bool yes = false;
	struct ward_admission adm = { .ratelog = &log, .ask = say_yes, .ask_ctx = &yes };
	enum ward_error_kind kind;
	char rule[WARD_ERROR_RULE_MAX];

	ward_config_init(&cfg);
	cfg.rate_per_minute = 4;
	cfg.rate_per_hour = 0;
	ck_assert_int_eq(check(&cfg, "make test", &adm, &kind, rule), 0);
	/* refused: counted all the same */
	ck_assert_int_lt(check(&cfg, "cat /etc/shadow", &adm, &kind, rule), 0);
	ck_assert_int_eq(kind, WARD_ERR_NOT_AUTHORIZED);
	ck_assert_str_eq(rule, "dangerous.system-accounts");
	ck_assert_int_eq(asked, 0); /* a refusal is not a question */
	/* needs approval: asked, "no" */
	ck_assert_int_lt(check(&cfg, "git reset --hard", &adm, &kind, rule), 0);
	ck_assert_int_eq(kind, WARD_ERR_APPROVAL_REQUIRED);
	ck_assert_int_eq(asked, 1);
	/* "yes" */
	yes = true;
	ck_assert_int_eq(check(&cfg, "git reset --hard", &adm, &kind, rule), 0);
	ck_assert_int_eq(asked, 2);
	ck_assert_uint_eq(log.n, 4);
	/* the fifth in the minute: rate-limited before it is even parsed */
	ck_assert_int_lt(check(&cfg, "echo 'unterminated", &adm, &kind, rule), 0);
	ck_assert_int_eq(kind, WARD_ERR_RATE_LIMITED);
	ck_assert_str_eq(rule, "rate_limit.per_minute");
	ward_ratelog_release(&log);

	/* approved up front: no question; NULL admission: no one to ask */
	cfg.rate_per_minute = 0;
	adm.approved = true;
	ck_assert_int_eq(check(&cfg, "git reset --hard", &adm, &kind, rule), 0);
	ck_assert_int_eq(asked, 2);
	ck_assert_int_lt(check(&cfg, "git reset --hard", NULL, &kind, rule), 0);
	ck_assert_int_eq(kind, WARD_ERR_APPROVAL_REQUIRED);
	/* an unparsable string: InvalidParameters */
	ck_assert_int_lt(check(&cfg, "echo 'unterminated", &adm, &kind, rule), 0);
	ck_assert_int_eq(kind, WARD_ERR_INVALID_PARAMETERS);
	ward_config_release(&cfg);
}
END_TEST

START_TEST(test_policy_rules_and_argv)
{
	const char *pol = "{\"validators\": {\"relax\": [\"dangerous.system-accounts\"]},"
			  " \"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}}";
	struct ward_config cfg;
	struct ward_error *err = NULL;
	struct ward_verdict v;
	struct ward_admission adm = { .approved = true };
	char *argv[] = { (char *)"cat", (char *)"/etc/shadow", NULL };

	ward_config_init(&cfg);
	ck_assert_int_eq(ward_policy_apply(pol, strlen(pol), "p", &cfg, &err), 0);
	/* relaxed by the policy: approval is enough now */
	ck_assert_int_eq(ward_frontdoor_check(&cfg, NULL, argv, &adm, &v, &err), 0);
	ck_assert_int_eq(v.kind, WARD_VERDICT_APPROVAL_REQUIRED);
	ck_assert_str_eq(v.rule, "dangerous.system-accounts");
	ward_verdict_release(&v);
	adm.approved = false;
	ck_assert_int_lt(ward_frontdoor_check(&cfg, NULL, argv, &adm, &v, &err), 0);
	ck_assert_int_eq(err->kind, WARD_ERR_APPROVAL_REQUIRED);
	ward_error_free(err);
	ward_verdict_release(&v);
	ward_config_release(&cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("frontdoor");
	TCase *tc = harness_tcase(s, "frontdoor", NULL);

	tcase_add_test(tc, test_order_and_approval);
	tcase_add_test(tc, test_policy_rules_and_argv);
	return harness_main(s);
}
