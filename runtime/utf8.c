/* utf8.c — text made valid UTF-8 for JSON (ward/request.h). Pure: the
 * validators and the result writer share it. */
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
