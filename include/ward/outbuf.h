/* ward/outbuf.h — bounded head + tail capture of a command's output.
 *
 * A command may print gigabytes; ward keeps only the first and the last bytes
 * of each stream, so memory stays flat:
 *
 *     struct ward_outbuf *b = ward_outbuf_new(WARD_OUTBUF_HALF, WARD_OUTBUF_HALF, &err);
 *     ward_outbuf_append(b, data, n);           // as it streams in
 *     char *text = ward_outbuf_render(b, 65536, &len, &dropped);
 *
 * Rendering fits a byte budget: when everything fits it is returned whole;
 * otherwise the first part and the last part, each cut on a UTF-8 character
 * boundary, with "\n... [truncated N bytes] ...\n" between, N counting every
 * byte left out. Pure code: no I/O.
 */
#ifndef WARD_OUTBUF_H
#define WARD_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The result's output is 64 KiB at most: 32 KiB of head and 32 KiB of tail. */
#define WARD_OUTPUT_MAX (64 * 1024)
#define WARD_OUTBUF_HALF (32 * 1024)

/* The separator put between stdout and stderr in a combined output. */
#define WARD_STDERR_SEPARATOR "\n--- stderr ---\n"

struct ward_outbuf;

/* A buffer keeping the first head_cap and the last tail_cap bytes (each ≥ 4).
 * Returns NULL on allocation failure (ENOMEM). Free with ward_outbuf_free(). */
WARD_API struct ward_outbuf *ward_outbuf_new(size_t head_cap, size_t tail_cap,
					     struct ward_error **err);
WARD_API void ward_outbuf_free(struct ward_outbuf *b);

/* Add bytes. Never fails, never grows memory. */
WARD_API void ward_outbuf_append(struct ward_outbuf *b, const void *data, size_t len);

/* Every byte ever appended. */
WARD_API uint64_t ward_outbuf_total(const struct ward_outbuf *b);

/* The kept bytes rendered within `budget` bytes (budget ≥ 64 for a marker to
 * fit; smaller budgets keep just a head). Returns a malloc'd NUL-terminated
 * string the caller frees, its length in *len, and the number of bytes left
 * out in *dropped (both optional). NULL only on allocation failure. */
WARD_API char *ward_outbuf_render(const struct ward_outbuf *b, size_t budget, size_t *len,
				  uint64_t *dropped);

/* stdout and stderr combined as the result's "output" field: stdout, then
 * WARD_STDERR_SEPARATOR and stderr when both wrote, `budget` bytes at most in
 * all, the budget shared so that a short stream is kept whole. Either buffer
 * may be NULL (empty). Returns malloc'd text; *dropped gets the bytes left out. */
WARD_API char *ward_output_combine(const struct ward_outbuf *out, const struct ward_outbuf *err,
				   size_t budget, size_t *len, uint64_t *dropped);

/* Length of the longest prefix of s[0..len) that does not end inside a UTF-8
 * sequence, and the offset of the first byte of s[0..len) that does not
 * continue a sequence begun before it (at most 3 bytes skipped). */
WARD_API size_t ward_utf8_head_cut(const char *s, size_t len);
WARD_API size_t ward_utf8_tail_skip(const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
