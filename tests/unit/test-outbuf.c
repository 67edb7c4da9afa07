/* test-outbuf.c — head + tail capture: boundaries, UTF-8 cuts, huge inputs. */
#include "harness.h"
#include "ward/outbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ward_outbuf *mk(size_t h, size_t t)
{
	struct ward_outbuf *b = ward_outbuf_new(h, t, NULL);

	ck_assert_ptr_nonnull(b);
	return b;
}

/* Whether s is valid UTF-8 (the marker is ASCII). */
static int valid_utf8(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 :
					  (c & 0xF8) == 0xF0 ? 4 : 0;
		size_t k;

		if (n == 0 || i + n > len)
			return 0;
		for (k = 1; k < n; k++)
			if (((unsigned char)s[i + k] & 0xC0) != 0x80)
				return 0;
		i += n;
	}
	return 1;
}

START_TEST(test_small_whole)
{
	struct ward_outbuf *b = mk(8, 8);
	size_t len;
	uint64_t dropped = 99;
	char *s;

	ward_outbuf_append(b, "hello ", 6);
	ward_outbuf_append(b, "world", 5);
	s = ward_outbuf_render(b, 1000, &len, &dropped);
	ck_assert_str_eq(s, "hello world");
	ck_assert_uint_eq(len, 11);
	ck_assert_uint_eq(dropped, 0);
	free(s);
	ward_outbuf_free(b);
}
END_TEST

START_TEST(test_empty)
{
	struct ward_outbuf *b = mk(8, 8);
	size_t len = 5;
	char *s = ward_outbuf_render(b, 100, &len, NULL);

	ck_assert_str_eq(s, "");
	ck_assert_uint_eq(len, 0);
	free(s);
	s = ward_outbuf_render(NULL, 100, &len, NULL);
	ck_assert_str_eq(s, "");
	free(s);
	ward_outbuf_free(b);
}
END_TEST

START_TEST(test_exactly_full)
{
	struct ward_outbuf *b = mk(4, 4);
	uint64_t dropped;
	char *s;

	ward_outbuf_append(b, "abcdefgh", 8); /* head abcd, tail efgh: nothing lost */
	s = ward_outbuf_render(b, 8, NULL, &dropped);
	ck_assert_str_eq(s, "abcdefgh");
	ck_assert_uint_eq(dropped, 0);
	free(s);
	ward_outbuf_free(b);
}
END_TEST

START_TEST(test_truncated_marker_counts)
{
	struct ward_outbuf *b = mk(64, 64);
	char buf[1000], *s, expect[128];
	uint64_t dropped;
	size_t len, i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	ward_outbuf_append(b, buf, sizeof(buf));
	ck_assert_uint_eq(ward_outbuf_total(b), 1000);
	s = ward_outbuf_render(b, 128, &len, &dropped);
	ck_assert_uint_le(len, 128);
	snprintf(expect, sizeof(expect), "\n... [truncated %llu bytes] ...\n",
		 (unsigned long long)dropped);
	ck_assert_ptr_nonnull(strstr(s, expect));
	/* head is the very beginning, tail the very end */
	ck_assert_int_eq(strncmp(s, buf, 10), 0);
	ck_assert_int_eq(memcmp(s + len - 10, buf + 990, 10), 0);
	/* every byte is either shown or counted */
	ck_assert_uint_eq(len - strlen(expect) + dropped, 1000);
	free(s);
	ward_outbuf_free(b);
}
END_TEST

START_TEST(test_tail_ring_many_small_appends)
{
	struct ward_outbuf *b = mk(16, 16);
	char line[32], *s;
	int i;
	size_t len;

	for (i = 0; i < 10000; i++) {
		int n = snprintf(line, sizeof(line), "%05d\n", i);
		ward_outbuf_append(b, line, (size_t)n);
	}
	s = ward_outbuf_render(b, 32 + 48, &len, NULL);
	ck_assert_int_eq(strncmp(s, "00000\n00001\n", 12), 0);
	ck_assert_ptr_nonnull(strstr(s, "09999\n"));
	ck_assert_int_eq(strcmp(s + len - 6, "09999\n"), 0);
	free(s);
	ward_outbuf_free(b);
}
END_TEST

START_TEST(test_chunk_larger_than_tail)
{
	struct ward_outbuf *b = mk(4, 4);
	char *s;
	uint64_t dropped;

	ward_outbuf_append(b, "0123456789ABCDEFGHIJ", 20);
	s = ward_outbuf_render(b, 4 + 4 + 60, NULL, &dropped);
	ck_assert_int_eq(strncmp(s, "0123", 4), 0);
	ck_assert_int_eq(strcmp(s + strlen(s) - 4, "GHIJ"), 0);
	ck_assert_uint_eq(dropped, 12);
	free(s);
	ward_outbuf_free(b);
}
END_TEST

START_TEST(test_utf8_cuts)
{
	/* "é" is C3 A9, "€" is E2 82 AC, "😀" is F0 9F 98 80 */
	ck_assert_uint_eq(ward_utf8_head_cut("ab\xC3", 3), 2);
	ck_assert_uint_eq(ward_utf8_head_cut("ab\xC3\xA9", 4), 4);
	ck_assert_uint_eq(ward_utf8_head_cut("a\xE2\x82", 3), 1);
	ck_assert_uint_eq(ward_utf8_head_cut("a\xF0\x9F\x98", 4), 1);
	ck_assert_uint_eq(ward_utf8_head_cut("a\xF0\x9F\x98\x80", 5), 5);
	ck_assert_uint_eq(ward_utf8_head_cut("", 0), 0);
	ck_assert_uint_eq(ward_utf8_tail_skip("\xA9xyz", 4), 1);
	ck_assert_uint_eq(ward_utf8_tail_skip("\x82\xACxy", 4), 2);
	ck_assert_uint_eq(ward_utf8_tail_skip("\x9F\x98\x80z", 4), 3);
	ck_assert_uint_eq(ward_utf8_tail_skip("xyz", 3), 0);
	ck_assert_uint_eq(ward_utf8_tail_skip("\x80\x80\x80\x80\x80", 5), 0); /* not UTF-8 */
}
END_TEST

START_TEST(test_utf8_render_never_splits)
{
	/* A stream of 3-byte characters cut at every possible budget. */
	struct ward_outbuf *b = mk(50, 50);
	char buf[3 * 400];
	size_t i, budget;

	for (i = 0; i < 400; i++)
		memcpy(buf + 3 * i, "\xE2\x82\xAC", 3);
	ward_outbuf_append(b, buf, sizeof(buf));
	for (budget = 60; budget <= 100; budget++) {
		size_t len;
		uint64_t dropped;
		char *s = ward_outbuf_render(b, budget, &len, &dropped);

		ck_assert_msg(valid_utf8(s, len), "split character at budget %zu", budget);
		ck_assert_uint_le(len, budget);
		free(s);
	}
	ward_outbuf_free(b);
}
END_TEST

START_TEST(test_huge_input_flat)
{
	/* 1 GiB through a 64 KiB buffer: memory is what was allocated at start. */
	struct ward_outbuf *b = mk(WARD_OUTBUF_HALF, WARD_OUTBUF_HALF);
	static char chunk[1 << 20];
	size_t len;
	uint64_t dropped;
	char *s;
	int i;

	memset(chunk, 'x', sizeof(chunk));
	for (i = 0; i < 1024; i++)
		ward_outbuf_append(b, chunk, sizeof(chunk));
	ck_assert_uint_eq(ward_outbuf_total(b), 1ULL << 30);
	s = ward_outbuf_render(b, WARD_OUTPUT_MAX, &len, &dropped);
	ck_assert_uint_le(len, WARD_OUTPUT_MAX);
	ck_assert_uint_gt(len, WARD_OUTPUT_MAX - 64);
	{
		const char *m = strstr(s, "\n... [truncated ");
		const char *m_end = m ? strstr(m, "] ...\n") : NULL;
		size_t marker_len;

		ck_assert_ptr_nonnull(m_end);
		marker_len = (size_t)(m_end + 6 - m);
		ck_assert_uint_eq((uint64_t)(len - marker_len) + dropped, 1ULL << 30);
	}
	free(s);
	ward_outbuf_free(b);
}
END_TEST

START_TEST(test_combine)
{
	struct ward_outbuf *o = mk(64, 64), *e = mk(64, 64);
	size_t len;
	uint64_t dropped;
	char *s;

	s = ward_output_combine(o, e, 1000, &len, &dropped);
	ck_assert_str_eq(s, "");
	free(s);
	ward_outbuf_append(o, "out\n", 4);
	s = ward_output_combine(o, e, 1000, &len, &dropped);
	ck_assert_str_eq(s, "out\n");
	free(s);
	ward_outbuf_append(e, "err\n", 4);
	s = ward_output_combine(o, e, 1000, &len, &dropped);
	ck_assert_str_eq(s, "out\n\n--- stderr ---\nerr\n");
	ck_assert_uint_eq(dropped, 0);
	free(s);
	ward_outbuf_free(o);
	ward_outbuf_free(e);
}
END_TEST

START_TEST(test_combine_only_stderr)
{
	struct ward_outbuf *e = mk(64, 64);
	char *s;

	ward_outbuf_append(e, "boom", 4);
	s = ward_output_combine(NULL, e, 1000, NULL, NULL);
	ck_assert_str_eq(s, "boom");
	free(s);
	ward_outbuf_free(e);
}
END_TEST

START_TEST(test_combine_short_stream_kept_whole)
{
	struct ward_outbuf *o = mk(WARD_OUTBUF_HALF, WARD_OUTBUF_HALF), *e = mk(64, 64);
	static char big[200000];
	size_t len;
	uint64_t dropped;
	char *s;

	memset(big, 'o', sizeof(big));
	ward_outbuf_append(o, big, sizeof(big));
	ward_outbuf_append(e, "short error\n", 12);
	s = ward_output_combine(o, e, WARD_OUTPUT_MAX, &len, &dropped);
	ck_assert_uint_le(len, WARD_OUTPUT_MAX);
	ck_assert_int_eq(strcmp(s + len - 12, "short error\n"), 0);
	ck_assert_ptr_nonnull(strstr(s, WARD_STDERR_SEPARATOR));
	ck_assert_ptr_nonnull(strstr(s, "[truncated "));
	ck_assert_uint_gt(dropped, 200000 - WARD_OUTPUT_MAX);
	free(s);
	ward_outbuf_free(o);
	ward_outbuf_free(e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("outbuf");
	TCase *tc = harness_tcase(s, "outbuf", NULL);

	tcase_add_test(tc, test_small_whole);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_exactly_full);
	tcase_add_test(tc, test_truncated_marker_counts);
	tcase_add_test(tc, test_tail_ring_many_small_appends);
	tcase_add_test(tc, test_chunk_larger_than_tail);
	tcase_add_test(tc, test_utf8_cuts);
	tcase_add_test(tc, test_utf8_render_never_splits);
	tcase_add_test(tc, test_huge_input_flat);
	tcase_add_test(tc, test_combine);
	tcase_add_test(tc, test_combine_only_stderr);
	tcase_add_test(tc, test_combine_short_stream_kept_whole);
	return harness_main(s);
}
