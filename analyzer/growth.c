#include "analyzer/growth.h"
#include "analyzer/util.h"

void growth_init(struct growth *g)
{
	memset(g, 0, sizeof(*g));
}

void growth_release(struct growth *g)
{
	for (size_t k = 0; k < g->ndumps; k++)
		free(g->snap[k]);
	free(g->snap);
	free(g->nsnap);
	free(g->v);
	memset(g, 0, sizeof(*g));
}

int growth_snapshot(struct growth *g, const struct profile *p)
{
	double **snap = realloc(g->snap, (g->ndumps + 1) * sizeof(*snap));
	if (!snap)
		return JH_ENOMEM;
	g->snap = snap;
	size_t *nsnap = realloc(g->nsnap, (g->ndumps + 1) * sizeof(*nsnap));
	if (!nsnap)
		return JH_ENOMEM;
	g->nsnap = nsnap;
	double *s = malloc((p->nsamples + 1) * PF_NVALUES * sizeof(*s));
	if (!s)
		return JH_ENOMEM;
	for (size_t i = 0; i < p->nsamples; i++)
		memcpy(s + i * PF_NVALUES, p->samples[i].v, PF_NVALUES * sizeof(double));
	g->snap[g->ndumps] = s;
	g->nsnap[g->ndumps] = p->nsamples;
	g->ndumps++;
	return 0;
}

static double *cell(const struct growth *g, size_t sample, size_t dump)
{
	return g->v + (sample * g->ndumps + dump) * PF_NVALUES;
}

int growth_finish(struct growth *g, const struct profile *p, const uint32_t *remap)
{
	size_t nold = g->ndumps ? g->nsnap[g->ndumps - 1] : 0;
	g->nsamples = p->nsamples;
	g->v = calloc((g->nsamples + 1) * (g->ndumps + 1), PF_NVALUES * sizeof(double));
	if (!g->v)
		return JH_ENOMEM;
	for (size_t s = 0; s < nold; s++) {
		size_t to = remap ? remap[s] : s;
		for (size_t k = 0; k < g->ndumps; k++) {
			double *c = cell(g, to, k);
			for (int j = 0; j < PF_NVALUES; j++) {
				double now = s < g->nsnap[k] ? g->snap[k][s * PF_NVALUES + j] : 0;
				double before = k && s < g->nsnap[k - 1] ? g->snap[k - 1][s * PF_NVALUES + j] : 0;
				c[j] += now - before;
			}
		}
	}
	return 0;
}

void growth_fit(const double *y, size_t n, double *slope, double *r2)
{
	*slope = 0;
	*r2 = 0;
	if (n < 2)
		return;
	double mx = (double)(n - 1) / 2, my = 0;
	for (size_t i = 0; i < n; i++)
		my += y[i];
	my /= (double)n;
	double sxy = 0, sxx = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		double dx = (double)i - mx, dy = y[i] - my;
		sxy += dx * dy;
		sxx += dx * dx;
		syy += dy * dy;
	}
	*slope = sxy / sxx;
	*r2 = syy > 0 ? sxy * sxy / (sxx * syy) : 0;
}

void growth_apply(const struct growth *g, struct profile *p)
{
	double *y = malloc((g->ndumps + 1) * sizeof(*y));
	if (!y)
		return;
	for (size_t s = 0; s < p->nsamples && s < g->nsamples; s++) {
		for (int j = 0; j < PF_NVALUES; j++) {
			for (size_t k = 0; k < g->ndumps; k++)
				y[k] = cell(g, s, k)[j];
			double slope, r2;
			growth_fit(y, g->ndumps, &slope, &r2);
			double grown = slope * (double)(g->ndumps - 1);
			p->samples[s].v[j] = grown > 0 ? grown : 0;
			p->samples[s].base[j] = 0;
		}
	}
	free(y);
}

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

int growth_write_text(FILE *out, const struct growth *g, const struct profile *p,
		      const struct aggregate *a, enum pf_value value, enum units units,
		      long nodecount)
{
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
			series[keys[0] * g->ndumps + k] += cell(g, s, k)[value];
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
	static const char *const vnames[] = { "inuse_objects", "inuse_space", "alloc_objects", "alloc_space" };
	fprintf(out, "Growth of %s over %zu profiles (%s per profile; fit is R^2 of a straight line)\n",
		vnames[value], g->ndumps, text_unit_name(units));
	fprintf(out, "%10s %5s %10s %10s %10s %s\n", "slope", "fit", "first", "last", "change", "call site");
	for (size_t i = 0; i < ns; i++) {
		if (nodecount > 0 && (long)i >= nodecount)
			break;
		const struct site *st = &sites[i];
		char b1[64], b2[64], b3[64], b4[64];
		text_format_value(b1, sizeof(b1), st->slope, units);
		text_format_value(b2, sizeof(b2), st->first, units);
		text_format_value(b3, sizeof(b3), st->last, units);
		text_format_value(b4, sizeof(b4), st->last - st->first, units);
		fprintf(out, "%10s %5.2f %10s %10s %10s ", b1, st->r2, b2, b3, b4);
		escape_fputs(strtab_get(&a->keys, st->key), false, out);
		fputc('\n', out);
	}
out:
	free(series);
	free(sites);
	free(keys);
	return rc;
}
