/* One dump of a series as an aggregate's values (see dumpview.h). */
#include <stdlib.h>
#include <string.h>

#include "analyzer/dumpview.h"
#include "analyzer/growth.h"
#include "lib/errors.h"

/* The index of the thread with uid UID in P, or UINT32_MAX. */
static uint32_t thread_index(const struct profile *p, int64_t uid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].uid == uid)
			return (uint32_t)i;
	return UINT32_MAX;
}

/* Adds SIGN times thread T's values in dump DUMP to A->values. */
static void add_thread(struct aggregate *a, const struct profile *p, const struct growth *g,
		       size_t dump, uint32_t t, double sign)
{
	size_t n;
	const struct growth_tval *tv = growth_thread_values(g, dump, &n);
	for (size_t i = 0; i < n && t != UINT32_MAX; i++)
		if (tv[i].thread == t && tv[i].sample < p->nsamples)
			for (int j = 0; j < PF_NVALUES; j++)
				a->values[tv[i].sample][j] += sign * tv[i].v[j];
}

int dumpview_values(struct aggregate *a, const struct profile *p, const struct agg_options *o)
{
	const struct growth *g = o->series;
	a->values = calloc(p->nsamples + 1, sizeof(*a->values));
	if (!a->values)
		return JH_ENOMEM;
	if (o->one_thread) {
		uint32_t t = thread_index(p, o->thread_uid);
		add_thread(a, p, g, o->dump, t, 1);
		if (o->dump_diff)
			add_thread(a, p, g, o->base_dump, t, -1);
		return 0;
	}
	if (o->dump_diff && !(a->bases = calloc(p->nsamples + 1, sizeof(*a->bases))))
		return JH_ENOMEM;
	for (size_t s = 0; s < p->nsamples && s < g->nsamples; s++)
		for (int j = 0; j < PF_NVALUES; j++) {
			double was = o->dump_diff ? growth_value(g, s, o->base_dump, j) : 0;
			a->values[s][j] = growth_value(g, s, o->dump, j) - was;
			if (a->bases)
				a->bases[s][j] = was;
		}
	return 0;
}

bool dumpview_has_thread(const struct growth *g, const struct profile *p, size_t dump,
			 int64_t uid, size_t *nthreads)
{
	size_t n;
	const struct growth_tval *tv = growth_thread_values(g, dump, &n);
	uint8_t *seen = calloc(p->nthreads + 1, 1);
	uint32_t t = thread_index(p, uid);
	bool has = false;
	*nthreads = 0;
	for (size_t i = 0; i < n; i++) {
		if (tv[i].thread == t)
			has = true;
		if (seen && tv[i].thread < p->nthreads && !seen[tv[i].thread]) {
			seen[tv[i].thread] = 1;
			(*nthreads)++;
		}
	}
	free(seen);
	return has;
}
