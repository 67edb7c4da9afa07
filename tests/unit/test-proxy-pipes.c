/* test-proxy-pipes.c — the proxy's pipe sizing for bulk tunnels: when a
 * pipe grows, to what, and the budget that keeps many tunnels within the
 * user's pipe memory; pure code. */
#include "harness.h"
#include "runtime/net/net-internal.h"

START_TEST(test_policy_from_limits)
{
	size_t big, budget;

	/* the kernel's defaults: 1 MiB max, 16384 pages soft */
	ward_pipe_policy(1048576, 16384, 4096, &big, &budget);
	ck_assert_uint_eq(big, 1048576);
	ck_assert_uint_eq(budget, 16ULL << 20);
	/* a larger pipe-max-size does not make bigger pipes */
	ward_pipe_policy(8 << 20, 16384, 4096, &big, &budget);
	ck_assert_uint_eq(big, WARD_PIPE_BIG_MAX);
	/* a smaller one caps them (unprivileged callers may not pass it) */
	ward_pipe_policy(256 * 1024, 1024, 4096, &big, &budget);
	ck_assert_uint_eq(big, 256 * 1024);
	ck_assert_uint_eq(budget, 1ULL << 20);
	/* no soft limit: a fixed budget; unreadable values: the defaults */
	ward_pipe_policy(1048576, 0, 4096, &big, &budget);
	ck_assert_uint_eq(budget, WARD_PIPE_BUDGET_UNLIMITED);
	ward_pipe_policy(-1, 16384, -1, &big, &budget);
	ck_assert_uint_eq(big, WARD_PIPE_BIG_MAX);
	ck_assert_uint_eq(budget, 16ULL << 20);
}
END_TEST

START_TEST(test_grow_only_bulk)
{
	size_t big = 1 << 20, budget = 16 << 20;

	ck_assert_uint_eq(ward_pipe_grow_size(0, 0, big, budget), 0);
	ck_assert_uint_eq(ward_pipe_grow_size(WARD_PIPE_GROW_AFTER - 1, 0, big, budget), 0);
	ck_assert_uint_eq(ward_pipe_grow_size(WARD_PIPE_GROW_AFTER, 0, big, budget), big);
	/* a big size no larger than the default pipe is no growth */
	ck_assert_uint_eq(ward_pipe_grow_size(WARD_PIPE_GROW_AFTER, 0, 64 * 1024, budget), 0);
}
END_TEST

START_TEST(test_budget_bounds_tunnels)
{
	size_t big = 1 << 20, budget = 16 << 20, grown = 0;
	int n = 0;

	/* 100 bulk tunnels at once: 16 grow, the rest keep the default pipe */
	for (int i = 0; i < 100; i++) {
		size_t s = ward_pipe_grow_size(64ULL << 20, grown, big, budget);

		if (s) {
			grown += s;
			n++;
		}
	}
	ck_assert_int_eq(n, 16);
	ck_assert_uint_le(grown, budget);
	/* one ends: the next one may grow */
	grown -= big;
	ck_assert_uint_eq(ward_pipe_grow_size(64ULL << 20, grown, big, budget), big);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proxy-pipes");
	TCase *tc = harness_tcase(s, "sizing", NULL);

	tcase_add_test(tc, test_policy_from_limits);
	tcase_add_test(tc, test_grow_only_bulk);
	tcase_add_test(tc, test_budget_bounds_tunnels);
	return harness_main(s);
}
