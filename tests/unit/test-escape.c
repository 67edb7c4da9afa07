/* test-escape.c — text made inert for a terminal (ward_text_escape): every
 * control character and every byte that is not UTF-8 visible and escaped,
 * printable text (UTF-8 included) untouched, the same result whatever the
 * chunks a stream comes in. */
#include "harness.h"
#include "ward/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void is(const char *in, size_t len, unsigned flags, const char *want)
{
	char *got = ward_text_escape(in, len, flags);

	ck_assert_ptr_nonnull(got);
	ck_assert_msg(strcmp(got, want) == 0, "escaped to '%s', want '%s'", got, want);
	free(got);
}

#define IS(lit, flags, want) is(lit, sizeof(lit) - 1, flags, want)

START_TEST(test_terminal_sequences)
{
	/* the diff-rewriting sequences of the report: cursor up, erase line,
	 * window title */
	IS("a\x1b[1A\x1b[2Kb", 0, "a\\x1b[1A\\x1b[2Kb");
	IS("\x1b]0;owned\a", 0, "\\x1b]0;owned\\a");
	IS("\b\v\f\r", 0, "\\b\\v\\f\\r");
	IS("\x01\x1f\x7f", 0, "\\x01\\x1f\\x7f");
	is("a\0b", 3, 0, "a\\x00b");
	/* C1 controls as UTF-8 (0x9B is CSI to some terminals) */
	IS("x\xc2\x9b" "2J", 0, "x\\u009b2J");
	IS("\xc2\x85", 0, "\\u0085");
	/* bidi overrides and isolates, marks, separators */
	IS("a\xe2\x80\xae" "b", 0, "a\\u202eb");
	IS("\xe2\x81\xa6\xe2\x81\xa9", 0, "\\u2066\\u2069");
	IS("\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8", 0, "\\u200f\\u061c\\u2028");
}
END_TEST

START_TEST(test_lines_and_names)
{
	/* a name is one line and unambiguous */
	IS("a\nb\tc\\d", 0, "a\\nb\\tc\\\\d");
	/* lines keep their breaks, tabs and backslashes, not their escapes */
	IS("a\nb\tc\\d\r\n", WARD_ESCAPE_MULTILINE, "a\nb\tc\\d\\r\n");
	IS("@@ -1 +1 @@\n-\x1b[2Kx\n", WARD_ESCAPE_MULTILINE, "@@ -1 +1 @@\n-\\x1b[2Kx\n");
}
END_TEST

START_TEST(test_utf8_kept_bad_bytes_escaped)
{
	IS("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	IS("\xff\xfe", 0, "\\xff\\xfe");
	IS("\xc3", 0, "\\xc3");                  /* cut at the end */
	IS("\xc0\xaf", 0, "\\xc0\\xaf");         /* overlong */
	IS("\xed\xa0\x80", 0, "\\xed\\xa0\\x80"); /* a surrogate */
	IS("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	IS("\xe2\x82" "x", 0, "\\xe2\\x82x");
	is(NULL, 0, 0, "");
}
END_TEST

/* A stream cut anywhere gives what the whole gives. */
START_TEST(test_chunks)
{
	static const char text[] = "ok \xc3\xa9\x1b[31m \xe2\x80\xae \xf0\x9f\x98\x80 \xff\xe2\x82"
				   "x\xc2\x9b end\xf0\x9f";
	size_t len = sizeof(text) - 1;
	char *whole = ward_text_escape(text, len, WARD_ESCAPE_MULTILINE);

	for (size_t cut = 1; cut < len; cut++) {
		char out[WARD_ESCAPE_MAX(sizeof(text) + 8)], acc[4096] = "", buf[sizeof(text) + 8];
		size_t pos = 0, used, carry = 0;

		/* chunks of `cut` bytes, what is left over carried on */
		while (pos < len) {
			size_t take = len - pos < cut ? len - pos : cut;
			bool final = pos + take == len;

			memcpy(buf, text + pos - carry, carry + take);
			ward_text_escape_buf(buf, carry + take, WARD_ESCAPE_MULTILINE, final, out,
					     &used);
			ck_assert_uint_le(carry + take - used, 3);
			ck_assert(!final || used == carry + take);
			strcat(acc, out);
			carry = carry + take - used;
			pos += take;
		}
		ck_assert_msg(strcmp(acc, whole) == 0, "cut %zu: '%s' != '%s'", cut, acc, whole);
	}
	free(whole);
}
END_TEST

/* Every single byte value: the worst case fits WARD_ESCAPE_MAX, and no
 * control byte survives. */
START_TEST(test_every_byte)
{
	for (int b = 0; b < 256; b++) {
		char in[4] = { (char)b, (char)b, (char)b, (char)b };
		char out[WARD_ESCAPE_MAX(4)];
		size_t n = ward_text_escape_buf(in, 4, 0, true, out, NULL);

		ck_assert_uint_lt(n, sizeof(out));
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)out[i];

			ck_assert_msg(c >= 0x20 && c != 0x7f && (b < 0x80 || c < 0x80),
				      "byte %02x left %02x", b, c);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = harness_tcase(s, "escape", NULL);

	tcase_add_test(tc, test_terminal_sequences);
	tcase_add_test(tc, test_lines_and_names);
	tcase_add_test(tc, test_utf8_kept_bad_bytes_escaped);
	tcase_add_test(tc, test_chunks);
	tcase_add_test(tc, test_every_byte);
	return harness_main(s);
}
