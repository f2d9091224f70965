#include "analyzer/aggregate.h"
#include "analyzer/names.h"
#include "analyzer/util.h"

const char *aggregate_func_name(const struct profile *p, uint32_t func, bool full,
				char *buf, size_t len)
{
	const char *name = strtab_get(&p->strs, p->funcs[func].name);
	if (full)
		return name;
	names_short(name, buf, len);
	return buf;
}

static int add_key(struct aggregate *a, const char *key)
{
	int64_t id = strtab_intern(&a->keys, key);
	if (id < 0)
		return (int)id;
	return JH_PUSH(a->lockeys, a->nlockeys, a->cap_lockeys, (uint32_t)id);
}

/* The display key of one frame, jeprof's TranslateStack rules. */
static void frame_key(const struct profile *p, const struct pf_location *l,
		      const struct pf_line *ln, bool inlined, const struct agg_options *o,
		      char *out, size_t len)
{
	char name[4096], fileline[4096];
	aggregate_func_name(p, ln->function, o->full_names, name, sizeof(name));
	if (inlined)
		strncat(name, " (inline)", sizeof(name) - strlen(name) - 1);
	const char *file = strtab_get(&p->strs, ln->file);
	if (*file)
		snprintf(fileline, sizeof(fileline), "%s:%d", file, ln->line);
	else
		snprintf(fileline, sizeof(fileline), "??:0");
	uint64_t pc = l->leaf ? l->addr : l->addr - 1;
	switch (o->gran) {
	case GRAN_FUNCTIONS:
		snprintf(out, len, "%s", name);
		break;
	case GRAN_LINES:
		snprintf(out, len, "%s %s", name, fileline);
		break;
	case GRAN_FILES:
		if (*file)
			snprintf(out, len, "%s", file);
		else
			snprintf(out, len, "%s", name);
		break;
	case GRAN_ADDRESSES:
		snprintf(out, len, "%016llx %s %s", (unsigned long long)pc, name, fileline);
		break;
	}
}

static int build_locinfo(struct aggregate *a, const struct profile *p, const struct agg_options *o)
{
	a->locinfo = calloc(p->nlocs + 1, sizeof(*a->locinfo));
	if (!a->locinfo)
		return JH_ENOMEM;
	char key[8192], shortname[4096];
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		struct agg_locinfo *li = &a->locinfo[i];
		li->key0 = (uint32_t)a->nlockeys;
		if (l->mapping != UINT32_MAX) {
			const struct pf_mapping *m = &p->maps[l->mapping];
			if (m->kind == PF_MAP_FILE &&
			    names_is_allocator_object(strtab_get(&p->strs, m->path)))
				li->allocator = true;
		}
		for (uint32_t j = 0; j < l->nlines; j++) {
			const struct pf_line *ln = &p->lines[l->line0 + j];
			names_short(strtab_get(&p->strs, p->funcs[ln->function].name),
				    shortname, sizeof(shortname));
			if (names_is_allocator(shortname))
				li->allocator = true;
			frame_key(p, l, ln, j + 1 < l->nlines, o, key, sizeof(key));
			if (add_key(a, key))
				return JH_ENOMEM;
		}
		if (!l->nlines) {
			snprintf(key, sizeof(key), "0x%016llx", (unsigned long long)l->addr);
			if (add_key(a, key))
				return JH_ENOMEM;
		}
		li->nkeys = (uint32_t)a->nlockeys - li->key0;
	}
	return 0;
}

int64_t aggregate_stack_keys(const struct aggregate *a, const struct profile *p,
			     uint32_t sample, uint32_t **out, size_t *cap)
{
	const struct pf_sample *s = &p->samples[sample];
	size_t n = 0;
	for (uint32_t i = 0; i < s->depth; i++) {
		const struct agg_locinfo *li = &a->locinfo[p->stacks[s->stack0 + i]];
		if (li->allocator) {
			/* cut everything up to and including the outermost
			 * allocator location */
			n = 0;
			continue;
		}
		if (jh_grow(out, cap, n + li->nkeys, sizeof(**out)))
			return JH_ENOMEM;
		memcpy(*out + n, a->lockeys + li->key0, li->nkeys * sizeof(uint32_t));
		n += li->nkeys;
	}
	return (int64_t)n;
}

int aggregate_build(struct aggregate *a, const struct profile *p, const struct agg_options *o)
{
	memset(a, 0, sizeof(*a));
	if (strtab_init(&a->keys) || build_locinfo(a, p, o))
		return JH_ENOMEM;
	if (o->keep_allocator)
		for (size_t i = 0; i < p->nlocs; i++)
			a->locinfo[i].allocator = false;
	a->nrows = a->keys.len;
	a->rows = calloc(a->nrows + 1, sizeof(*a->rows));
	uint32_t *seen = calloc(a->nrows + 1, sizeof(*seen));
	uint32_t *keys = NULL;
	size_t cap = 0;
	if (!a->rows || !seen) {
		free(seen);
		return JH_ENOMEM;
	}
	for (size_t r = 0; r < a->nrows; r++)
		a->rows[r].key = (uint32_t)r;
	for (size_t si = 0; si < p->nsamples; si++) {
		double v = p->samples[si].v[o->value];
		a->total += v;
		if (v == 0)
			continue;
		int64_t n = aggregate_stack_keys(a, p, (uint32_t)si, &keys, &cap);
		if (n < 0) {
			free(seen);
			free(keys);
			return JH_ENOMEM;
		}
		if (n == 0)
			continue;
		a->rows[keys[0]].flat += v;
		a->flat_total += v;
		uint32_t stamp = (uint32_t)si + 1;
		for (int64_t k = 0; k < n; k++) {
			if (seen[keys[k]] == stamp)
				continue;
			seen[keys[k]] = stamp;
			a->rows[keys[k]].cum += v;
		}
	}
	free(seen);
	free(keys);
	return 0;
}

void aggregate_release(struct aggregate *a)
{
	strtab_release(&a->keys);
	free(a->rows);
	free(a->locinfo);
	free(a->lockeys);
	free(a->order);
	memset(a, 0, sizeof(*a));
}

struct sortctx { const struct aggregate *a; bool by_cum; };

static int cmp_rows(const void *x, const void *y, void *arg)
{
	const struct sortctx *c = arg;
	const struct agg_row *r = &c->a->rows[*(const uint32_t *)x];
	const struct agg_row *s = &c->a->rows[*(const uint32_t *)y];
	double vr = c->by_cum ? r->cum : r->flat, vs = c->by_cum ? s->cum : s->flat;
	if (vr != vs)
		return vr > vs ? -1 : 1;
	return strcmp(strtab_get(&c->a->keys, r->key), strtab_get(&c->a->keys, s->key));
}

int aggregate_sort(struct aggregate *a, bool by_cum)
{
	free(a->order);
	a->order = malloc((a->nrows + 1) * sizeof(*a->order));
	if (!a->order)
		return JH_ENOMEM;
	a->norder = 0;
	for (size_t r = 1; r < a->nrows; r++)
		if (a->rows[r].flat != 0 || a->rows[r].cum != 0)
			a->order[a->norder++] = (uint32_t)r;
	struct sortctx c = { a, by_cum };
	qsort_r(a->order, a->norder, sizeof(*a->order), cmp_rows, &c);
	return 0;
}
