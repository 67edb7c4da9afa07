/* brace.c — bash's brace expansion of a parsed word (ward/shparse.h), so
 * that a caller sees the words bash will run: "{rm,-rf,x}" is three. */
#include "ward/shparse.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string with, per byte, whether it is an unquoted literal (only those
 * braces and commas expand). */
struct bs {
	char *c;
	char *act;
	size_t n;
};

struct bout {
	char **v;
	size_t n, cap;
	bool too_many;
	bool nomem;
};

static void emit(struct bout *o, const char *c, size_t n)
{
	if (o->n >= WARD_SH_BRACE_MAX) {
		o->too_many = true;
		return;
	}
	if (o->n == o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 8;
		char **v = realloc(o->v, nc * sizeof(*v));

		if (!v) {
			o->nomem = true;
			return;
		}
		o->v = v;
		o->cap = nc;
	}
	o->v[o->n] = strndup(c, n);
	if (!o->v[o->n]) {
		o->nomem = true;
		return;
	}
	o->n++;
}

static void expand(const struct bs *s, size_t from, struct bout *o, unsigned depth);

/* prefix s[0..a) + alt (c, act, len) + suffix s[b..n), expanded further */
static void splice(const struct bs *s, size_t a, const char *c, const char *act, size_t len,
		   size_t b, struct bout *o, unsigned depth)
{
	struct bs t;
	size_t n = a + len + (s->n - b);

	if (o->too_many || o->nomem)
		return;
	t.c = malloc(n + 1);
	t.act = malloc(n + 1);
	if (!t.c || !t.act) {
		o->nomem = true;
		free(t.c);
		free(t.act);
		return;
	}
	memcpy(t.c, s->c, a);
	memcpy(t.act, s->act, a);
	memcpy(t.c + a, c, len);
	memcpy(t.act + a, act, len);
	memcpy(t.c + a + len, s->c + b, s->n - b);
	memcpy(t.act + a + len, s->act + b, s->n - b);
	t.n = n;
	/* the alternative itself may hold more braces: go on from the prefix */
	expand(&t, a, o, depth + 1);
	free(t.c);
	free(t.act);
}

static bool parse_int(const char *c, size_t n, long *v)
{
	char buf[32];
	char *end;

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, c, n);
	buf[n] = '\0';
	*v = strtol(buf, &end, 10);
	return *end == '\0' && (buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9'));
}

/* {x..y[..z]} between open and close: emit the sequence and return true. */
static bool sequence(const struct bs *s, size_t open, size_t close, struct bout *o, unsigned depth)
{
	const char *c = s->c + open + 1;
	size_t n = close - open - 1, i;
	const char *d1 = NULL, *d2 = NULL;
	long x, y, z = 1;
	char num[32];

	for (i = 0; i + 1 < n; i++)
		if (c[i] == '.' && c[i + 1] == '.') {
			if (!d1)
				d1 = c + i;
			else if (!d2)
				d2 = c + i;
			i++;
		}
	if (!d1)
		return false;
	for (i = 0; i < n; i++)
		if (!s->act[open + 1 + i])
			return false;
	const char *xe = d1, *ys = d1 + 2, *ye = d2 ? d2 : c + n;

	if (d2 && !parse_int(d2 + 2, (size_t)(c + n - d2 - 2), &z))
		return false;
	if (z == 0)
		z = 1;
	if (z < 0)
		z = z == LONG_MIN ? LONG_MAX : -z;
	if (parse_int(c, (size_t)(xe - c), &x) && parse_int(ys, (size_t)(ye - ys), &y)) {
		/* unsigned: the distance between two longs does not fit a long */
		unsigned long dist = x <= y ? (unsigned long)y - (unsigned long)x
					    : (unsigned long)x - (unsigned long)y;
		unsigned long count = dist / (unsigned long)z + 1, m;

		if (count > WARD_SH_BRACE_MAX) {
			o->too_many = true;
			return true;
		}
		for (m = 0; m < count; m++) {
			unsigned long step = m * (unsigned long)z;
			long k = x <= y ? (long)((unsigned long)x + step) : (long)((unsigned long)x - step);
			int len = snprintf(num, sizeof(num), "%ld", k);
			char act[32];

			memset(act, 0, sizeof(act));
			splice(s, open, num, act, (size_t)len, close + 1, o, depth);
		}
		return true;
	}
	if (xe - c == 1 && ye - ys == 1) {
		unsigned char a = (unsigned char)c[0], b = (unsigned char)ys[0];

		if (!((a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z')) ||
		    !((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')))
			return false;
		int dist = a <= b ? b - a : a - b;
		long count = dist / z + 1;

		for (long m = 0; m < count; m++) {
			int k = a <= b ? a + (int)(m * z) : a - (int)(m * z);
			char ch = (char)k, act = 0;

			splice(s, open, &ch, &act, 1, close + 1, o, depth);
		}
		return true;
	}
	return false;
}

static void expand(const struct bs *s, size_t from, struct bout *o, unsigned depth)
{
	size_t i;

	if (o->too_many || o->nomem)
		return;
	if (depth > 64) {
		o->too_many = true;
		return;
	}
	for (i = from; i < s->n; i++) {
		size_t j, close = 0, commas = 0;
		int d = 0;

		if (s->c[i] != '{' || !s->act[i] || (i > 0 && s->c[i - 1] == '$' && s->act[i - 1]))
			continue;
		for (j = i + 1; j < s->n; j++) {
			if (!s->act[j])
				continue;
			if (s->c[j] == '{' && !(s->c[j - 1] == '$' && s->act[j - 1])) {
				d++;
			} else if (s->c[j] == '}') {
				if (d == 0) {
					close = j;
					break;
				}
				d--;
			} else if (s->c[j] == ',' && d == 0) {
				commas++;
			}
		}
		if (!close)
			continue;
		if (commas == 0) {
			if (sequence(s, i, close, o, depth))
				return;
			continue;
		}
		/* the alternatives, split at the top-level commas */
		size_t start = i + 1;

		d = 0;
		for (j = i + 1; j <= close; j++) {
			bool cut = j == close;

			if (!cut && s->act[j]) {
				if (s->c[j] == '{' && !(s->c[j - 1] == '$' && s->act[j - 1]))
					d++;
				else if (s->c[j] == '}')
					d--;
				else if (s->c[j] == ',' && d == 0)
					cut = true;
			}
			if (cut) {
				splice(s, i, s->c + start, s->act + start, j - start, close + 1, o,
				       depth);
				start = j + 1;
			}
		}
		return;
	}
	emit(o, s->c, s->n);
}

int ward_sh_word_brace_expand(const struct ward_sh_tree *t, const struct ward_sh_word *w,
			      char ***out, size_t *n, struct ward_error **err)
{
	struct bs s = { 0 };
	struct bout o = { 0 };
	size_t cap = 1, i;

	*out = NULL;
	*n = 0;
	for (i = 0; i < w->n_parts; i++)
		cap += w->parts[i].kind == WARD_SH_P_LITERAL ? w->parts[i].text_len : w->parts[i].len;
	s.c = malloc(cap);
	s.act = malloc(cap);
	if (!s.c || !s.act) {
		free(s.c);
		free(s.act);
		return ward_error_make(err, ENOMEM, "brace expansion");
	}
	for (i = 0; i < w->n_parts; i++) {
		const struct ward_sh_part *pt = &w->parts[i];
		const char *src = pt->kind == WARD_SH_P_LITERAL ? pt->text : t->src + pt->off;
		size_t len = pt->kind == WARD_SH_P_LITERAL ? pt->text_len : pt->len;

		if (pt->kind != WARD_SH_P_LITERAL && pt->off + pt->len > t->len)
			len = 0;
		memcpy(s.c + s.n, src, len);
		memset(s.act + s.n, pt->kind == WARD_SH_P_LITERAL && pt->quote == WARD_SH_Q_NONE, len);
		s.n += len;
	}
	if (w->flags & WARD_SH_W_BRACE)
		expand(&s, 0, &o, 0);
	else
		emit(&o, s.c, s.n);
	free(s.c);
	free(s.act);
	if (o.too_many || o.nomem) {
		ward_sh_strv_free(o.v, o.n);
		if (o.nomem)
			return ward_error_make(err, ENOMEM, "brace expansion");
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "brace expansion makes more than %d words at %zu",
					    WARD_SH_BRACE_MAX, w->off + 1);
	}
	*out = o.v;
	*n = o.n;
	return 0;
}

void ward_sh_strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
