/*
 * --growth's text report: call sites ranked by steady growth across a
 * series of dumps (analyzer/growth.c fits the lines).
 *
 *   Growth of inuse_space over 10 profiles (MB per profile; fit is R^2 of a straight line)
 *        slope   fit      first       last     change call site
 *        0.062  1.00      0.062        0.6        0.6 leak_step
 *
 * Rules: a call site is the leaf key of each stack after the allocator cut
 * and the filters; sites are ranked by slope times fit (a shrinking site
 * by its slope), then by the last value, then by name; --nodecount=N
 * keeps the first N.  Values are in --text's units, but in MB a value
 * under 0.1 is printed with two significant digits (0.062, 0.0031)
 * rather than --text's one decimal, so that a site growing by less than
 * 0.05 MB a dump does not show a slope of 0.0.
 */
#include <math.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "analyzer/growth.h"
#include "output/output.h"

struct site {
	uint32_t key;
	double slope, r2, score, first, last;
};

static int cmp_sites(const void *x, const void *y, void *arg)
{
	const struct aggregate *a = arg;
	const struct site *s = x, *t = y;
	if (s->score != t->score)
		return s->score > t->score ? -1 : 1;
	if (s->last != t->last)
		return s->last > t->last ? -1 : 1;
	return strcmp(strtab_get(&a->keys, s->key), strtab_get(&a->keys, t->key));
}

/* V as --text prints it, but with two significant digits under 0.1 MB
 * (at most six decimals). */
static void format_value(char *buf, size_t len, double v, enum units u)
{
	double mb = fabs(v) / 1048576.0;
	if (u != UNITS_MB || v == 0 || mb >= 0.1) {
		text_format_value(buf, len, v, u);
		return;
	}
	int decimals = 1 - (int)floor(log10(mb));
	if (decimals > 6)
		decimals = 6;
	snprintf(buf, len, "%.*f", decimals, text_shown(v / 1048576.0, decimals));
}

int output_growth(FILE *out, const struct growth *g, const struct report *r, char *err,
		  size_t errlen)
{
	const struct profile *p = r->p;
	const struct aggregate *a = r->a;
	size_t nk = a->keys.len;
	double *series = calloc((nk + 1) * (g->ndumps + 1), sizeof(double));
	struct site *sites = malloc((nk + 1) * sizeof(*sites));
	uint32_t *keys = NULL;
	size_t cap = 0;
	int rc = 0;
	if (!series || !sites) {
		rc = JH_ENOMEM;
		goto out;
	}
	for (size_t s = 0; s < p->nsamples && s < g->nsamples; s++) {
		int64_t n = aggregate_stack_keys(a, p, (uint32_t)s, &keys, &cap);
		if (n < 0) {
			rc = (int)n;
			goto out;
		}
		if (!n)
			continue;
		for (size_t k = 0; k < g->ndumps; k++)
			series[keys[0] * g->ndumps + k] += growth_value(g, s, k, r->value);
	}
	size_t ns = 0;
	for (size_t key = 1; key < nk; key++) {
		double *y = series + key * g->ndumps;
		bool any = false;
		for (size_t k = 0; k < g->ndumps; k++)
			any |= y[k] != 0;
		if (!any)
			continue;
		struct site st = { .key = (uint32_t)key, .first = y[0], .last = y[g->ndumps - 1] };
		growth_fit(y, g->ndumps, &st.slope, &st.r2);
		st.score = st.slope > 0 ? st.slope * st.r2 : st.slope;
		sites[ns++] = st;
	}
	jh_qsort_r(sites, ns, sizeof(*sites), cmp_sites, (void *)a);
	fprintf(out, "Growth of %s over %zu profiles (%s per profile; fit is R^2 of a straight line)\n",
		output_value_name(r->value), g->ndumps, text_unit_name(r->units));
	fprintf(out, "%10s %5s %10s %10s %10s %s\n", "slope", "fit", "first", "last", "change", "call site");
	for (size_t i = 0; i < ns; i++) {
		if (r->nodecount > 0 && (long)i >= r->nodecount)
			break;
		const struct site *st = &sites[i];
		char b1[64], b2[64], b3[64], b4[64];
		format_value(b1, sizeof(b1), st->slope, r->units);
		format_value(b2, sizeof(b2), st->first, r->units);
		format_value(b3, sizeof(b3), st->last, r->units);
		format_value(b4, sizeof(b4), st->last - st->first, r->units);
		fprintf(out, "%10s %5.2f %10s %10s %10s ", b1, st->r2, b2, b3, b4);
		escape_fputs(strtab_get(&a->keys, st->key), false, out);
		fputc('\n', out);
	}
out:
	free(series);
	free(sites);
	free(keys);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}
