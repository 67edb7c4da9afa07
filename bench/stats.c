/* stats.c — order statistics of the samples of one case. Pure. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

int samples_add(struct samples *s, double ms)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		double *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = ms;
	return 0;
}

void samples_release(struct samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double quantile_sorted(const double *v, size_t n, double q)
{
	double pos, frac;
	size_t i;

	if (n == 0)
		return NAN;
	if (q <= 0)
		return v[0];
	if (q >= 1)
		return v[n - 1];
	pos = q * (double)(n - 1);
	i = (size_t)pos;
	frac = pos - (double)i;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + frac * (v[i + 1] - v[i]);
}

double samples_quantile(struct samples *s, double q)
{
	if (s->n == 0)
		return NAN; /* and no qsort of NULL */
	qsort(s->v, s->n, sizeof(*s->v), cmp_double);
	return quantile_sorted(s->v, s->n, q);
}

double median_of(const double *v, size_t n)
{
	double *c, m;

	if (n == 0)
		return NAN;
	c = malloc(n * sizeof(*c));
	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	m = quantile_sorted(c, n, 0.5);
	free(c);
	return m;
}
