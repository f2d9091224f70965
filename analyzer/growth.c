#include <stdlib.h>

#include "analyzer/growth.h"
#include "lib/errors.h"

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

double growth_value(const struct growth *g, size_t sample, size_t dump, enum pf_value v)
{
	return pf_value_of(cell(g, sample, dump), v);
}
