/* profile_diff(): compares two models exactly, for the tests that parse a
 * dump in one thread and in two (test_parse_split, fuzz_parse_split). */
#ifndef JHEAP_PROFILE_DIFF_H
#define JHEAP_PROFILE_DIFF_H
#include <stdbool.h>
#include <string.h>
#include "analyzer/profile.h"

static inline bool same_doubles(const double *a, const double *b, size_t n)
{
	return !memcmp(a, b, n * sizeof(double));
}

/* NULL when the models X and Y are the same table by table, field by
 * field (sums to the last bit), else what differs first. */
static inline const char *profile_diff(const struct profile *x, const struct profile *y)
{
	if (x->format != y->format || x->period != y->period)
		return "format or period";
	if (x->has_alloc != y->has_alloc || x->has_maps != y->has_maps)
		return "has_alloc or has_maps";
	if (x->main_mapping != y->main_mapping || x->presym_binary != y->presym_binary)
		return "main mapping or presym binary";
	if (!same_doubles(x->header_total, y->header_total, PF_NVALUES))
		return "header totals";
	if (x->strs.len != y->strs.len)
		return "number of strings";
	for (size_t i = 0; i < x->strs.len; i++)
		if (x->strs.ents[i].n != y->strs.ents[i].n ||
		    memcmp(x->strs.ents[i].s, y->strs.ents[i].s, x->strs.ents[i].n))
			return "a string";
	if (x->nmaps != y->nmaps)
		return "number of mappings";
	for (size_t i = 0; i < x->nmaps; i++) {
		const struct pf_mapping *m = &x->maps[i], *n = &y->maps[i];
		if (m->start != n->start || m->limit != n->limit || m->offset != n->offset ||
		    m->path != n->path || m->object != n->object || m->build_id != n->build_id ||
		    m->kind != n->kind || m->exec != n->exec || m->deleted != n->deleted ||
		    m->is_main != n->is_main)
			return "a mapping";
	}
	if (x->nlocs != y->nlocs)
		return "number of locations";
	for (size_t i = 0; i < x->nlocs; i++) {
		const struct pf_location *l = &x->locs[i], *m = &y->locs[i];
		if (l->addr != m->addr || l->mapping != m->mapping || l->leaf != m->leaf ||
		    l->sym != m->sym || l->line0 != m->line0 || l->nlines != m->nlines ||
		    l->vaddr != m->vaddr || l->func_lo != m->func_lo || l->func_hi != m->func_hi)
			return "a location";
	}
	if (x->nsamples != y->nsamples || x->nstacks != y->nstacks)
		return "number of samples or stack entries";
	if (x->nstacks && memcmp(x->stacks, y->stacks, x->nstacks * sizeof(*x->stacks)))
		return "the stacks";
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct pf_sample *s = &x->samples[i], *t = &y->samples[i];
		if (s->stack0 != t->stack0 || s->depth != t->depth)
			return "a sample's stack";
		if (!same_doubles(s->v, t->v, PF_NVALUES) || !same_doubles(s->base, t->base, PF_NVALUES))
			return "a sample's values";
	}
	if (x->nthreads != y->nthreads)
		return "number of threads";
	for (size_t i = 0; i < x->nthreads; i++)
		if (x->threads[i].uid != y->threads[i].uid || x->threads[i].name != y->threads[i].name ||
		    !same_doubles(x->threads[i].v, y->threads[i].v, PF_NVALUES))
			return "a thread";
	if (x->ntvals != y->ntvals)
		return "number of thread values";
	for (size_t i = 0; i < x->ntvals; i++) {
		const struct pf_thread_value *u = &x->tvals[i], *v = &y->tvals[i];
		if (u->sample != v->sample || u->thread != v->thread ||
		    !same_doubles(u->v, v->v, PF_NVALUES))
			return "a thread value";
	}
	if (x->npresyms != y->npresyms || x->nlines != y->nlines || x->nfuncs != y->nfuncs)
		return "presymbols, lines or functions";
	return NULL;
}

#endif
