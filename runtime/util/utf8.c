/* utf8.c — text made valid UTF-8 for JSON, and text made inert for a
 * terminal (ward/request.h). Pure: the
 * validators, the result writer and the CLI share it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ward/request.h"

char *ward_utf8_sanitize(const char *s, size_t len, size_t *out_len)
{
	/* Each bad byte becomes 3 bytes (EF BF BD). */
	char *out = malloc(len * 3 + 1);
	size_t i = 0, o = 0;

	if (!out)
		return NULL;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n = 0, k;
		unsigned cp = 0;

		if (c < 0x80)
			n = 1, cp = c;
		else if (c >= 0xC2 && c <= 0xDF)
			n = 2, cp = c & 0x1F;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 3, cp = c & 0x0F;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 4, cp = c & 0x07;
		if (n > 1 && i + n <= len) {
			for (k = 1; k < n; k++) {
				unsigned char cc = (unsigned char)s[i + k];

				if ((cc & 0xC0) != 0x80)
					break;
				cp = (cp << 6) | (cc & 0x3F);
			}
			/* overlong, surrogate or out of range forms are bad too */
			if (k != n || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
			    (cp >= 0xD800 && cp <= 0xDFFF))
				n = 0;
		} else if (n > 1) {
			n = 0;
		}
		if (n == 0) {
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}

/* The length of the valid UTF-8 sequence at s[0..len) and its code point;
 * 0 when s[0] starts none; -1 when s ends inside what may still become one. */
static int utf8_seq(const unsigned char *s, size_t len, unsigned *cp)
{
	unsigned char c = s[0];
	size_t n, k;
	unsigned v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, v = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, v = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, v = c & 0x07;
	else
		return 0;
	for (k = 1; k < n; k++) {
		/* cut short: a later chunk may complete it (if not, the
		 * bytes are judged again then, one by one) */
		if (k >= len)
			return -1;
		if ((s[k] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[k] & 0x3F);
	}
	/* overlong, surrogate or out of range forms are not UTF-8 */
	if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
	    (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return (int)n;
}

/* Characters with no glyph that reorder or break the displayed line: bidi
 * embeddings, overrides and isolates ("Trojan Source"), marks, line and
 * paragraph separators. C1 controls: some terminals obey 0x9B as CSI. */
static bool invisible(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
	       (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t ward_text_escape_buf(const char *s, size_t len, unsigned flags, bool final, char *out,
			    size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	bool lines = flags & WARD_ESCAPE_MULTILINE;
	size_t i = 0, o = 0;

	while (i < len) {
		unsigned char c = u[i];
		unsigned cp = 0;
		int n;

		if (c == '\n' || c == '\t' || c == '\\') {
			if (lines) {
				out[o++] = (char)c;
			} else {
				out[o++] = '\\';
				out[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : '\\';
			}
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7F) {
			char letter = c == '\a' ? 'a' : c == '\b' ? 'b' : c == '\v' ? 'v' :
				      c == '\f' ? 'f' : c == '\r' ? 'r' : 0;

			out[o++] = '\\';
			if (letter) {
				out[o++] = letter;
			} else {
				out[o++] = 'x';
				out[o++] = hex[c >> 4];
				out[o++] = hex[c & 15];
			}
			i++;
			continue;
		}
		n = utf8_seq(u + i, len - i, &cp);
		if (n < 0 && !final)
			break; /* the rest comes with the next chunk */
		if (n <= 0) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
			i++;
			continue;
		}
		if (invisible(cp)) {
			out[o++] = '\\';
			out[o++] = 'u';
			for (int sh = 12; sh >= 0; sh -= 4)
				out[o++] = hex[(cp >> sh) & 15];
		} else {
			memcpy(out + o, s + i, (size_t)n);
			o += (size_t)n;
		}
		i += (size_t)n;
	}
	out[o] = '\0';
	if (used)
		*used = i;
	return o;
}

char *ward_text_escape(const char *s, size_t len, unsigned flags)
{
	char *out;

	if (!s)
		s = "", len = 0;
	if (len > (SIZE_MAX - 1) / 4)
		return NULL;
	out = malloc(WARD_ESCAPE_MAX(len));
	if (out)
		ward_text_escape_buf(s, len, flags, true, out, NULL);
	return out;
}
