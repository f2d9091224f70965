/* A series of dumps of one process (see series.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "analyzer/series.h"
#include "lib/array.h"
#include "lib/errors.h"

void series_init(struct series *s)
{
	memset(s, 0, sizeof(*s));
}

void series_release(struct series *s)
{
	for (size_t k = 0; k < s->n; k++)
		free(s->dumps[k].program);
	free(s->dumps);
	memset(s, 0, sizeof(*s));
}

struct order {
	long long seq;
	size_t k;
};

static int cmp_order(const void *x, const void *y)
{
	const struct order *a = x, *b = y;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

/* PREFIX.PID of a jemalloc name, for messages. */
static void process_of(const struct dumpname *dn, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s, process %lld", (int)dn->prefix_len, dn->base, dn->pid);
}

int series_plan(struct series *s, const char *const *paths, const double *mtimes, size_t n,
		char *err, size_t errlen)
{
	series_init(s);
	s->dumps = calloc(n + 1, sizeof(*s->dumps));
	if (!s->dumps)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	s->n = n;
	bool all_seq = true;
	for (size_t k = 0; k < n; k++) {
		struct series_dump *d = &s->dumps[k];
		d->path = paths[k];
		dumpname_parse(paths[k], &d->name);
		d->mtime = mtimes ? mtimes[k] : -1;
		all_seq &= d->name.seq >= 0;
	}
	/* names of two processes: say which */
	for (size_t k = 1; k < n; k++) {
		const struct dumpname *a = &s->dumps[0].name, *b = &s->dumps[k].name;
		if (dumpname_same_process(a, b))
			continue;
		char pa[300], pb[300];
		process_of(a, pa, sizeof(pa));
		process_of(b, pb, sizeof(pb));
		return jh_err(err, errlen, JH_EUSAGE,
			      "dumps of different processes in one series: '%s' (%s) and '%s' (%s); a series is the dumps of one process (without --timeline, --peak and --growth several dumps are summed)",
			      s->dumps[0].path, pa, s->dumps[k].path, pb);
	}
	if (all_seq) {
		/* by sequence number; equal numbers keep the order given (for
		 * the message): the position is the second key */
		struct series_dump *sorted = malloc((n + 1) * sizeof(*sorted));
		struct order *o = malloc((n + 1) * sizeof(*o));
		if (!sorted || !o) {
			free(sorted);
			free(o);
			return jh_err(err, errlen, JH_ENOMEM, "out of memory");
		}
		for (size_t k = 0; k < n; k++)
			o[k] = (struct order){ s->dumps[k].name.seq, k };
		qsort(o, n, sizeof(*o), cmp_order);
		for (size_t k = 0; k < n; k++)
			sorted[k] = s->dumps[o[k].k];
		memcpy(s->dumps, sorted, n * sizeof(*sorted));
		free(sorted);
		free(o);
		for (size_t k = 1; k < n; k++)
			if (s->dumps[k].name.seq == s->dumps[k - 1].name.seq)
				return jh_err(err, errlen, JH_EUSAGE,
					      "'%s' and '%s' have the same sequence number, %lld: the same dump given twice, or dumps of two runs? A series is the dumps of one process, each once",
					      s->dumps[k - 1].path, s->dumps[k].path, s->dumps[k].name.seq);
	}
	/* the clock: the files' times when they can be trusted to order the
	 * dumps, else the names' numbers, else the position */
	bool times = n > 0, moved = false;
	for (size_t k = 0; k < n && times; k++) {
		times = s->dumps[k].mtime >= 0 && (!k || s->dumps[k].mtime >= s->dumps[k - 1].mtime);
		moved |= k && s->dumps[k].mtime != s->dumps[0].mtime;
	}
	s->clock = times && (moved || n == 1) ? SERIES_TIME : all_seq ? SERIES_SEQ : SERIES_ORDER;
	return 0;
}

int series_split_irregular(struct series *s, struct series *other)
{
	series_init(other);
	other->dumps = calloc(s->n + 1, sizeof(*other->dumps));
	if (!other->dumps)
		return JH_ENOMEM;
	size_t kept = 0;
	for (size_t k = 0; k < s->n; k++) {
		if (dumpname_regular(s->dumps[k].name.kind))
			s->dumps[kept++] = s->dumps[k];
		else
			other->dumps[other->n++] = s->dumps[k];
	}
	s->n = kept;
	other->clock = s->clock;
	return 0;
}

/* The main executable of ONE and where it is loaded, or NULL. */
static const char *program_of(const struct profile *one, uint64_t *base)
{
	*base = 0;
	if (one->main_mapping != UINT32_MAX) {
		const struct pf_mapping *m = &one->maps[one->main_mapping];
		*base = m->start - m->offset;
		return strtab_get(&one->strs, m->path);
	}
	const char *b = one->presym_binary ? strtab_get(&one->strs, one->presym_binary) : "";
	return *b ? b : NULL;
}

int series_note_dump(struct series *s, size_t k, const struct profile *one, char *err,
		     size_t errlen)
{
	struct series_dump *d = &s->dumps[k];
	uint64_t base;
	const char *prog = program_of(one, &base);
	d->has_alloc = one->has_alloc;
	free(d->program);
	d->program = NULL;
	if (!prog)
		return 0;
	if (!(d->program = strdup(prog)))
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	d->program_base = base;
	for (size_t i = 0; i < s->n; i++) {
		const struct series_dump *o = &s->dumps[i];
		if (i == k || !o->program)
			continue;
		if (strcmp(o->program, d->program))
			return jh_err(err, errlen, JH_EFORMAT,
				      "dumps of different programs in one series: '%s' is of %s, '%s' of %s; a series is the dumps of one process",
				      o->path, o->program, d->path, d->program);
		if (o->program_base && d->program_base && o->program_base != d->program_base)
			return jh_err(err, errlen, JH_EFORMAT,
				      "dumps of different processes in one series: %s is loaded at 0x%" PRIx64 " in '%s' and at 0x%" PRIx64 " in '%s' (a process each); a series is the dumps of one process",
				      d->program, o->program_base, o->path, d->program_base, d->path);
		break;   /* the others were compared with this one already */
	}
	return 0;
}

void series_totals(struct series *s, const struct growth *g)
{
	for (size_t k = 0; k < s->n && k < g->ndumps; k++) {
		double *t = s->dumps[k].total;
		memset(t, 0, sizeof(s->dumps[k].total));
		for (size_t i = 0; i < g->nsamples; i++)
			for (int j = 0; j < PF_NVALUES; j++)
				t[j] += growth_value(g, i, k, (enum pf_value)j);
	}
}

size_t series_peak(const struct series *s, enum pf_value v)
{
	size_t best = 0;
	for (size_t k = 1; k < s->n; k++)
		if (pf_value_of(s->dumps[k].total, v) > pf_value_of(s->dumps[best].total, v))
			best = k;
	return best;
}

double series_when(const struct series *s, size_t k)
{
	switch (s->clock) {
	case SERIES_TIME: return s->dumps[k].mtime - s->dumps[0].mtime;
	case SERIES_SEQ: return (double)s->dumps[k].name.seq;
	default: return (double)k;
	}
}

int series_key_values(const struct growth *g, const struct profile *p,
		      const struct aggregate *a, enum pf_value v, bool cum, double **out)
{
	size_t nk = a->keys.len, nd = g->ndumps;
	double *vals = calloc((nk + 1) * (nd + 1), sizeof(double));
	uint32_t *keys = NULL, *seen = NULL;
	size_t cap = 0;
	int rc = 0;
	*out = NULL;
	if (!vals || (cum && !(seen = calloc(nk + 1, sizeof(*seen))))) {
		rc = JH_ENOMEM;
		goto out;
	}
	for (size_t s = 0; s < p->nsamples && s < g->nsamples; s++) {
		int64_t n = aggregate_stack_keys(a, p, (uint32_t)s, &keys, &cap);
		if (n < 0) {
			rc = (int)n;
			goto out;
		}
		/* each key of the stack once: SEEN holds the sample's number + 1 */
		for (int64_t i = 0; i < (cum ? n : n > 0 ? 1 : 0); i++) {
			uint32_t key = keys[i];
			if (cum) {
				if (seen[key] == s + 1)
					continue;
				seen[key] = (uint32_t)(s + 1);
			}
			for (size_t k = 0; k < nd; k++)
				vals[key * nd + k] += growth_value(g, s, k, v);
		}
	}
	*out = vals;
	vals = NULL;
out:
	free(vals);
	free(keys);
	free(seen);
	return rc;
}

struct rank_ctx {
	const struct aggregate *a;
};

static int cmp_sites(const void *x, const void *y, void *arg)
{
	const struct rank_ctx *c = arg;
	const struct series_site *s = x, *t = y;
	if (s->score != t->score)
		return s->score > t->score ? -1 : 1;
	if (s->last != t->last)
		return s->last > t->last ? -1 : 1;
	return strcmp(strtab_get(&c->a->keys, s->key), strtab_get(&c->a->keys, t->key));
}

int series_rank(const struct growth *g, const struct profile *p, const struct aggregate *a,
		enum pf_value v, bool cum, struct series_site **out, size_t *n)
{
	double *vals;
	size_t nd = g->ndumps, nk = a->keys.len;
	*out = NULL;
	*n = 0;
	int rc = series_key_values(g, p, a, v, cum, &vals);
	if (rc)
		return rc;
	struct series_site *sites = malloc((nk + 1) * sizeof(*sites));
	if (!sites) {
		free(vals);
		return JH_ENOMEM;
	}
	size_t ns = 0;
	for (size_t key = 1; key < nk && nd; key++) {
		const double *y = vals + key * nd;
		bool any = false;
		for (size_t k = 0; k < nd; k++)
			any |= y[k] != 0;
		if (!any)
			continue;
		struct series_site st = { .key = (uint32_t)key, .first = y[0], .last = y[nd - 1] };
		growth_fit(y, nd, &st.slope, &st.r2);
		st.score = st.slope > 0 ? st.slope * st.r2 : st.slope;
		sites[ns++] = st;
	}
	free(vals);
	struct rank_ctx c = { a };
	jh_qsort_r(sites, ns, sizeof(*sites), cmp_sites, &c);
	*out = sites;
	*n = ns;
	return 0;
}

int series_timeline(const struct series *s, const struct growth *g, const struct profile *p,
		    const struct aggregate *a, enum pf_value v, bool cum, struct series_row **out)
{
	double *vals;
	size_t nd = g->ndumps < s->n ? g->ndumps : s->n, nk = a->keys.len;
	*out = NULL;
	int rc = series_key_values(g, p, a, v, cum, &vals);
	if (rc)
		return rc;
	struct series_row *rows = calloc(s->n + 1, sizeof(*rows));
	if (!rows) {
		free(vals);
		return JH_ENOMEM;
	}
	/* the per-dump values are differences of running sums: a site that
	 * did not change may show a rise of a few units in the last place */
	double big = 1;
	for (size_t k = 0; k < nd; k++)
		for (int j = 0; j < PF_NVALUES; j++)
			if (fabs(s->dumps[k].total[j]) > big)
				big = fabs(s->dumps[k].total[j]);
	double eps = big * 1e-9;
	for (size_t k = 0; k < nd; k++) {
		struct series_row *r = &rows[k];
		r->value = pf_value_of(s->dumps[k].total, v);
		r->change = k ? r->value - rows[k - 1].value : 0;
		/* the largest rise; of equal rises the smallest site (with
		 * CUM, the callee rather than main, which holds it too),
		 * then the name first in byte order */
		double at = 0;
		for (size_t key = 1; key < nk; key++) {
			double now = vals[key * g->ndumps + k];
			double d = now - (k ? vals[key * g->ndumps + k - 1] : 0);
			if (d <= eps)
				continue;
			if (!r->grew_key || d > r->grew_by ||
			    (d == r->grew_by && (now < at || (now == at &&
			     strcmp(strtab_get(&a->keys, (uint32_t)key), strtab_get(&a->keys, r->grew_key)) < 0)))) {
				at = now;
				r->grew_key = (uint32_t)key;
				r->grew_by = d;
			}
		}
	}
	free(vals);
	*out = rows;
	return 0;
}
