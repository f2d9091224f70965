#include "analyzer/threadview.h"
#include "lib/array.h"
#include "lib/errors.h"

static int cmp_uid(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	int64_t x = p->threads[*(const uint32_t *)a].uid, y = p->threads[*(const uint32_t *)b].uid;
	return x < y ? -1 : x > y;
}

static int cmp_sample(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint32_t x = p->tvals[i].sample, y = p->tvals[j].sample;
	if (x != y)
		return x < y ? -1 : 1;
	return i < j ? -1 : i > j;
}

int threadview_init(struct threadview *tv, const struct profile *p, const int64_t *one_uid)
{
	*tv = (struct threadview){ .p = p };
	size_t nt = p->nthreads;
	uint32_t *rank = malloc((nt + 1) * sizeof(*rank));
	tv->ids = malloc((nt + 1) * sizeof(*tv->ids));
	tv->first = calloc(nt + 2, sizeof(*tv->first));
	tv->vals = malloc((p->ntvals + 1) * sizeof(*tv->vals));
	tv->loc_seen = calloc(p->nlocs + 1, sizeof(uint32_t));
	tv->loc_id = malloc((p->nlocs + 1) * sizeof(uint32_t));
	tv->fn_seen = calloc(p->nfuncs + 1, sizeof(uint32_t));
	tv->fn_id = malloc((p->nfuncs + 1) * sizeof(uint32_t));
	tv->map_seen = calloc(p->nmaps + 1, sizeof(uint32_t));
	tv->map_id = malloc((p->nmaps + 1) * sizeof(uint32_t));
	tv->str_seen = calloc(p->strs.len + 1, sizeof(uint32_t));
	tv->str_id = malloc((p->strs.len + 1) * sizeof(uint32_t));
	tv->smp_seen = calloc(p->nsamples + 1, sizeof(uint32_t));
	tv->smp_id = malloc((p->nsamples + 1) * sizeof(uint32_t));
	if (!rank || !tv->ids || !tv->first || !tv->vals || !tv->loc_seen || !tv->loc_id ||
	    !tv->fn_seen || !tv->fn_id || !tv->map_seen || !tv->map_id || !tv->str_seen ||
	    !tv->str_id || !tv->smp_seen || !tv->smp_id) {
		free(rank);
		threadview_release(tv);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < nt; i++)
		if (!one_uid || p->threads[i].uid == *one_uid)
			tv->ids[tv->n++] = (uint32_t)i;
	jh_qsort_r(tv->ids, tv->n, sizeof(*tv->ids), cmp_uid, (void *)p);
	/* a counting sort of the values by the thread's place */
	for (size_t i = 0; i < nt; i++)
		rank[i] = UINT32_MAX;
	for (size_t k = 0; k < tv->n; k++)
		rank[tv->ids[k]] = (uint32_t)k;
	for (size_t i = 0; i < p->ntvals; i++) {
		uint32_t t = p->tvals[i].thread;
		if (t < nt && rank[t] != UINT32_MAX)
			tv->first[rank[t] + 1]++;
	}
	for (size_t k = 0; k < tv->n; k++)
		tv->first[k + 1] += tv->first[k];
	size_t *at = malloc((tv->n + 1) * sizeof(*at));
	if (!at) {
		free(rank);
		threadview_release(tv);
		return JH_ENOMEM;
	}
	memcpy(at, tv->first, (tv->n + 1) * sizeof(*at));
	for (size_t i = 0; i < p->ntvals; i++) {
		uint32_t t = p->tvals[i].thread;
		if (t < nt && rank[t] != UINT32_MAX)
			tv->vals[at[rank[t]]++] = (uint32_t)i;
	}
	free(at);
	free(rank);
	/* each thread's values by sample, in the order they were read: its
	 * samples are then made, and summed, in the profile's order */
	for (size_t k = 0; k < tv->n; k++)
		jh_qsort_r(tv->vals + tv->first[k], tv->first[k + 1] - tv->first[k],
			   sizeof(*tv->vals), cmp_sample, (void *)p);
	return 0;
}

void threadview_release(struct threadview *tv)
{
	free(tv->ids);
	free(tv->first);
	free(tv->vals);
	free(tv->loc_seen);
	free(tv->loc_id);
	free(tv->fn_seen);
	free(tv->fn_id);
	free(tv->map_seen);
	free(tv->map_id);
	free(tv->str_seen);
	free(tv->str_id);
	free(tv->smp_seen);
	free(tv->smp_id);
	*tv = (struct threadview){ 0 };
}

/* The id in OUT of string S of the profile, copied on first use; 0 (the
 * empty string) when out of memory, with *RC set. */
static uint32_t str(struct threadview *tv, struct profile *out, uint32_t s, int *rc)
{
	const struct profile *p = tv->p;
	if (!s || s >= p->strs.len)
		return 0;
	if (tv->str_seen[s] == tv->stamp)
		return tv->str_id[s];
	int64_t id = strtab_intern_n(&out->strs, p->strs.ents[s].s, p->strs.ents[s].n);
	if (id < 0) {
		*rc = JH_ENOMEM;
		return 0;
	}
	tv->str_seen[s] = tv->stamp;
	return tv->str_id[s] = (uint32_t)id;
}

static uint32_t mapping(struct threadview *tv, struct profile *out, uint32_t m, int *rc)
{
	const struct profile *p = tv->p;
	if (m == UINT32_MAX || m >= p->nmaps)
		return UINT32_MAX;
	if (tv->map_seen[m] == tv->stamp)
		return tv->map_id[m];
	struct pf_mapping c = p->maps[m];
	c.path = str(tv, out, c.path, rc);
	c.object = str(tv, out, c.object, rc);
	c.build_id = str(tv, out, c.build_id, rc);
	int64_t id = *rc ? -1 : profile_mapping(out, &c);
	if (id < 0) {
		*rc = JH_ENOMEM;
		return UINT32_MAX;
	}
	if (m == p->main_mapping)
		out->main_mapping = (uint32_t)id;
	tv->map_seen[m] = tv->stamp;
	return tv->map_id[m] = (uint32_t)id;
}

static uint32_t function(struct threadview *tv, struct profile *out, uint32_t f, int *rc)
{
	const struct profile *p = tv->p;
	if (tv->fn_seen[f] == tv->stamp)
		return tv->fn_id[f];
	const struct pf_function *fn = &p->funcs[f];
	uint32_t name = str(tv, out, fn->name, rc), sys = str(tv, out, fn->system_name, rc),
		 file = str(tv, out, fn->filename, rc);
	int64_t id = *rc ? -1 : profile_function(out, name, sys, file, fn->start_line);
	if (id < 0) {
		*rc = JH_ENOMEM;
		return 0;
	}
	tv->fn_seen[f] = tv->stamp;
	return tv->fn_id[f] = (uint32_t)id;
}

static uint32_t location(struct threadview *tv, struct profile *out, uint32_t l, int *rc)
{
	const struct profile *p = tv->p;
	if (tv->loc_seen[l] == tv->stamp)
		return tv->loc_id[l];
	const struct pf_location *src = &p->locs[l];
	uint32_t m = mapping(tv, out, src->mapping, rc);
	/* the profile's locations are distinct, and so are their copies */
	int64_t id = *rc ? -1 : profile_location_append(out, src->addr, src->leaf, m);
	if (id < 0) {
		*rc = JH_ENOMEM;
		return 0;
	}
	uint32_t first = (uint32_t)out->nlines;
	for (uint32_t j = 0; j < src->nlines && !*rc; j++) {
		struct pf_line ln = p->lines[src->line0 + j];
		ln.function = function(tv, out, ln.function, rc);
		ln.file = str(tv, out, ln.file, rc);
		if (!*rc && profile_add_line(out, &ln) < 0)
			*rc = JH_ENOMEM;
	}
	struct pf_location *d = &out->locs[id];
	d->line0 = first;
	d->nlines = src->nlines;
	d->sym = src->sym;
	d->vaddr = src->vaddr;
	d->func_lo = src->func_lo;
	d->func_hi = src->func_hi;
	tv->loc_seen[l] = tv->stamp;
	return tv->loc_id[l] = (uint32_t)id;
}

int threadview_build(struct threadview *tv, size_t k, struct profile *out)
{
	const struct profile *p = tv->p;
	uint32_t *stack = NULL;
	size_t cap = 0;
	int rc = profile_init(out) ? JH_ENOMEM : 0;
	if (rc)
		return rc;
	tv->stamp++;
	out->format = p->format;
	out->period = p->period;
	out->has_alloc = p->has_alloc;
	out->has_maps = p->has_maps;
	out->presym_binary = str(tv, out, p->presym_binary, &rc);
	mapping(tv, out, p->main_mapping, &rc);
	for (size_t i = tv->first[k]; i < tv->first[k + 1] && !rc; i++) {
		const struct pf_thread_value *t = &p->tvals[tv->vals[i]];
		uint32_t s = t->sample;
		if (tv->smp_seen[s] != tv->stamp) {
			const struct pf_sample *src = &p->samples[s];
			if (jh_grow(&stack, &cap, src->depth + 1, sizeof(*stack))) {
				rc = JH_ENOMEM;
				break;
			}
			for (uint32_t j = 0; j < src->depth && !rc; j++)
				stack[j] = location(tv, out, p->stacks[src->stack0 + j], &rc);
			int64_t id = rc ? -1 : profile_sample(out, stack, src->depth);
			if (id < 0) {
				rc = JH_ENOMEM;
				break;
			}
			tv->smp_seen[s] = tv->stamp;
			tv->smp_id[s] = (uint32_t)id;
		}
		for (int j = 0; j < PF_NVALUES; j++)
			out->samples[tv->smp_id[s]].v[j] += t->v[j];
	}
	free(stack);
	return rc;
}
