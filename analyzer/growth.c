#include <stdlib.h>
#include <string.h>

#include "analyzer/growth.h"
#include "lib/array.h"
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
	free(g->tv);
	free(g->tv0);
	free(g->tv_prev);
	memset(g, 0, sizeof(*g));
}

/* Dump number g->ndumps's own thread values: what it added to p->tvals
 * since the last snapshot (the model's running sums, merged in order). */
static int snapshot_threads(struct growth *g, const struct profile *p)
{
	size_t *tv0 = realloc(g->tv0, (g->ndumps + 2) * sizeof(*tv0));
	if (!tv0)
		return JH_ENOMEM;
	g->tv0 = tv0;
	tv0[g->ndumps] = g->ntv;
	for (size_t i = 0; i < p->ntvals; i++) {
		const struct pf_thread_value *t = &p->tvals[i];
		struct growth_tval d = { t->sample, t->thread, { 0 } };
		bool any = i >= g->ntv_prev;
		for (int j = 0; j < PF_NVALUES; j++) {
			d.v[j] = t->v[j] - (i < g->ntv_prev ? g->tv_prev[i * PF_NVALUES + j] : 0);
			any |= d.v[j] != 0;
		}
		if (any && JH_PUSH(g->tv, g->ntv, g->cap_tv, d))
			return JH_ENOMEM;
	}
	tv0[g->ndumps + 1] = g->ntv;
	double *prev = realloc(g->tv_prev, (p->ntvals + 1) * PF_NVALUES * sizeof(*prev));
	if (!prev)
		return JH_ENOMEM;
	for (size_t i = 0; i < p->ntvals; i++)
		memcpy(prev + i * PF_NVALUES, p->tvals[i].v, sizeof(p->tvals[i].v));
	g->tv_prev = prev;
	g->ntv_prev = p->ntvals;
	return 0;
}

int growth_snapshot(struct growth *g, const struct profile *p)
{
	if (g->keep_threads && snapshot_threads(g, p))
		return JH_ENOMEM;
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
	/* the thread values' samples as folded; the running sums are done */
	for (size_t i = 0; remap && i < g->ntv; i++)
		g->tv[i].sample = remap[g->tv[i].sample];
	free(g->tv_prev);
	g->tv_prev = NULL;
	g->ntv_prev = 0;
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

const struct growth_tval *growth_thread_values(const struct growth *g, size_t dump, size_t *n)
{
	if (!g->tv0 || dump >= g->ndumps) {
		*n = 0;
		return NULL;
	}
	*n = g->tv0[dump + 1] - g->tv0[dump];
	return g->tv + g->tv0[dump];
}
