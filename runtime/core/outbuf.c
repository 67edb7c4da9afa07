/* outbuf.c — head + tail output capture; see ward/outbuf.h. */
#include "ward/outbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ward_outbuf {
	size_t head_cap, head_len;
	size_t tail_cap, tail_len, tail_pos; /* ring: next write at tail_pos */
	uint64_t total;
	char *head, *tail;
};

struct ward_outbuf *ward_outbuf_new(size_t head_cap, size_t tail_cap, struct ward_error **err)
{
	struct ward_outbuf *b;

	if (head_cap < 4)
		head_cap = 4;
	if (tail_cap < 4)
		tail_cap = 4;
	/* Not calloc: pages of the data area are touched only when output
	 * arrives, and a quiet command costs no page faults for them. */
	b = malloc(sizeof(*b) + head_cap + tail_cap);
	if (!b) {
		ward_error_make(err, ENOMEM, "allocate output buffer");
		return NULL;
	}
	memset(b, 0, sizeof(*b));
	b->head_cap = head_cap;
	b->tail_cap = tail_cap;
	b->head = (char *)(b + 1);
	b->tail = b->head + head_cap;
	return b;
}

void ward_outbuf_free(struct ward_outbuf *b)
{
	free(b);
}

void ward_outbuf_append(struct ward_outbuf *b, const void *data, size_t len)
{
	const char *p = data;
	size_t n;

	b->total += len;
	if (b->head_len < b->head_cap) {
		n = b->head_cap - b->head_len;
		if (n > len)
			n = len;
		memcpy(b->head + b->head_len, p, n);
		b->head_len += n;
		p += n;
		len -= n;
	}
	if (len == 0)
		return;
	/* Only the last tail_cap bytes of this chunk can survive. */
	if (len > b->tail_cap) {
		p += len - b->tail_cap;
		len = b->tail_cap;
	}
	while (len > 0) {
		n = b->tail_cap - b->tail_pos;
		if (n > len)
			n = len;
		memcpy(b->tail + b->tail_pos, p, n);
		b->tail_pos = (b->tail_pos + n) % b->tail_cap;
		b->tail_len = b->tail_len + n > b->tail_cap ? b->tail_cap : b->tail_len + n;
		p += n;
		len -= n;
	}
}

uint64_t ward_outbuf_total(const struct ward_outbuf *b)
{
	return b ? b->total : 0;
}

size_t ward_utf8_head_cut(const char *s, size_t len)
{
	size_t back;

	/* Look back at most 3 bytes for the lead byte of the last sequence. */
	for (back = 1; back <= 4 && back <= len; back++) {
		unsigned char c = (unsigned char)s[len - back];
		size_t need;

		if ((c & 0xC0) == 0x80)
			continue; /* continuation byte: keep looking */
		if (c < 0x80)
			need = 1;
		else if ((c & 0xE0) == 0xC0)
			need = 2;
		else if ((c & 0xF0) == 0xE0)
			need = 3;
		else if ((c & 0xF8) == 0xF0)
			need = 4;
		else
			return len; /* not UTF-8 here: cut anywhere */
		return need > back ? len - back : len;
	}
	/* Only continuation bytes at the end: not valid UTF-8, nothing to protect. */
	return len;
}

size_t ward_utf8_tail_skip(const char *s, size_t len)
{
	size_t i;

	/* A character is at most 4 bytes: at most 3 continuation bytes can
	 * belong to one begun before the cut. More is not UTF-8: skip none. */
	for (i = 0; i < len && i < 4; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			break;
	return i <= 3 ? i : 0;
}

/* Copy the kept bytes in order into dst (which has room for head_len + tail_len). */
static size_t kept_bytes(const struct ward_outbuf *b, char *dst)
{
	size_t start = (b->tail_pos + b->tail_cap - b->tail_len) % b->tail_cap;
	size_t first = b->tail_cap - start;

	memcpy(dst, b->head, b->head_len);
	if (first > b->tail_len)
		first = b->tail_len;
	memcpy(dst + b->head_len, b->tail + start, first);
	memcpy(dst + b->head_len + first, b->tail, b->tail_len - first);
	return b->head_len + b->tail_len;
}

char *ward_outbuf_render(const struct ward_outbuf *b, size_t budget, size_t *len, uint64_t *dropped)
{
	char *out, *kept, marker[96];
	size_t kept_len, head_part, tail_part, mlen = 0, skip, i;
	uint64_t left_out;

	if (!b) {
		out = calloc(1, 1);
		if (len)
			*len = 0;
		if (dropped)
			*dropped = 0;
		return out;
	}
	kept = malloc(b->head_len + b->tail_len + 1);
	if (!kept)
		return NULL;
	kept_len = kept_bytes(b, kept);

	if (b->total <= budget && b->total == kept_len) {
		kept[kept_len] = '\0';
		if (len)
			*len = kept_len;
		if (dropped)
			*dropped = 0;
		return kept;
	}

	/* The marker's length depends on N, and N on the marker's length:
	 * two rounds settle it (N only shrinks as the marker grows). */
	for (i = 0; i < 3; i++) {
		size_t room = budget > mlen ? budget - mlen : 0;

		head_part = room / 2;
		tail_part = room - head_part;
		if (head_part > b->head_len)
			head_part = b->head_len;
		if (tail_part > b->tail_len)
			tail_part = b->tail_len;
		head_part = ward_utf8_head_cut(b->head, head_part);
		skip = ward_utf8_tail_skip(kept + kept_len - tail_part, tail_part);
		tail_part -= skip;
		left_out = b->total - head_part - tail_part;
		mlen = (size_t)snprintf(marker, sizeof(marker),
					"\n... [truncated %" PRIu64 " bytes] ...\n", left_out);
		if (head_part + tail_part + mlen <= budget)
			break;
	}
	if (budget < mlen + 8) {
		/* No room for a marker: keep a head only. */
		head_part = ward_utf8_head_cut(b->head, budget < b->head_len ? budget : b->head_len);
		tail_part = 0;
		mlen = 0;
		left_out = b->total - head_part;
	}

	out = malloc(head_part + mlen + tail_part + 1);
	if (!out) {
		free(kept);
		return NULL;
	}
	memcpy(out, b->head, head_part);
	memcpy(out + head_part, marker, mlen);
	memcpy(out + head_part + mlen, kept + kept_len - tail_part, tail_part);
	out[head_part + mlen + tail_part] = '\0';
	free(kept);
	if (len)
		*len = head_part + mlen + tail_part;
	if (dropped)
		*dropped = left_out;
	return out;
}

char *ward_output_combine(const struct ward_outbuf *out, const struct ward_outbuf *err,
			  size_t budget, size_t *len, uint64_t *dropped)
{
	const size_t sep_len = sizeof(WARD_STDERR_SEPARATOR) - 1;
	uint64_t ot = ward_outbuf_total(out), et = ward_outbuf_total(err), d1 = 0, d2 = 0;
	size_t rest, ob, eb, l1 = 0, l2 = 0;
	char *a, *b, *res;

	if (et == 0)
		return ward_outbuf_render(out, budget, len, dropped);
	if (ot == 0)
		return ward_outbuf_render(err, budget, len, dropped);

	rest = budget > sep_len ? budget - sep_len : 0;
	if (ot + et <= rest) {
		ob = (size_t)ot;
		eb = (size_t)et;
	} else if (ot < rest / 2) {
		ob = (size_t)ot;
		eb = rest - ob;
	} else if (et < rest / 2) {
		eb = (size_t)et;
		ob = rest - eb;
	} else {
		ob = rest / 2;
		eb = rest - ob;
	}
	a = ward_outbuf_render(out, ob, &l1, &d1);
	b = ward_outbuf_render(err, eb, &l2, &d2);
	res = a && b ? malloc(l1 + sep_len + l2 + 1) : NULL;
	if (res) {
		memcpy(res, a, l1);
		memcpy(res + l1, WARD_STDERR_SEPARATOR, sep_len);
		memcpy(res + l1 + sep_len, b, l2);
		res[l1 + sep_len + l2] = '\0';
		if (len)
			*len = l1 + sep_len + l2;
		if (dropped)
			*dropped = d1 + d2;
	}
	free(a);
	free(b);
	return res;
}
