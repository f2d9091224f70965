/* The costs of a --callgrind file (see cgcost.h). */
#include <math.h>
#include <stdbool.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"
#include "lib/pairtab.h"
#include "lib/threads.h"
#include "output/cgcost.h"

/* The id of the entry of T at position FRAME (an id in c->frames) for
 * the call to CALLEE, or of its self cost when CALLEE is CG_SELF, found
 * through INDEX; added when new.  Returns the id or JH_ENOMEM. */
static int64_t find_ent(const struct cg *c, struct cg_table *t, struct pairtab *index,
			uint32_t frame, uint32_t callee)
{
	struct pairtab_key *sl = pairtab_probe(index, frame, callee);
	if (sl->id)
		return sl->id - 1;
	const struct cg_frame *fr = &c->frames[frame];
	struct cg_ent e = { fr->fn, fr->file, fr->line, callee, { 0, 0 }, 0 };
	if (t->nents >= UINT32_MAX - 1 || JH_PUSH(t->ents, t->nents, t->cap_ents, e))
		return JH_ENOMEM;
	if (pairtab_put(index, sl, frame, callee, (uint32_t)t->nents - 1))
		return JH_ENOMEM;
	return (int64_t)t->nents - 1;
}

static enum pf_value objects_of(enum pf_value v)
{
	return pf_value_is_objects(v) ? v : (enum pf_value)(v - 1);
}

/* A distinct call path (the frames of one or more samples, leaf first)
 * and the sums of its samples.  Its frames are not kept: they are made
 * again from its first sample when needed (a million paths of thirty
 * frames would be 120 MB to hold, and as many page faults). */
struct cg_path {
	uint32_t sample;            /* the first sample with this path */
	double v, objects;
};

struct cg_paths {
	const struct cg *c;
	struct cg_path *p;
	size_t n, cap;
	struct idmap index;
	const uint32_t *key;         /* the path being looked up */
	size_t nkey;
	uint32_t *other;             /* a path's frames, made again to compare */
	size_t cap_other;
	int rc;
};

/* The positions of sample SI's path, leaf first, into *ST: the stack
 * after the allocator cut, or a pseudo frame when nothing is left (the
 * cost stays in the totals, as --text's Total line keeps it).  Returns
 * their count, or 0 when out of memory. */
static size_t sample_path(const struct cg *c, uint32_t si, uint32_t **st, size_t *cap)
{
	const struct profile *p = c->r->p;
	const struct pf_sample *s = &p->samples[si];
	size_t n = 0;
	uint32_t skip;
	uint32_t start = aggregate_stack_start(c->r->a, p, si, &skip);
	for (uint32_t i = start; i < s->depth; i++, skip = 0) {
		uint32_t loc = p->stacks[s->stack0 + i];
		size_t f0 = c->loc_frame0[loc] + skip, nf = c->loc_frame0[loc + 1] - f0;
		if (jh_grow(st, cap, n + nf, sizeof(**st)))
			return 0;
		/* a location has one position or two: a loop beats a call */
		for (size_t k = 0; k < nf; k++)
			(*st)[n + k] = c->lf[f0 + k];
		n += nf;
	}
	if (n == 0) {
		if (jh_grow(st, cap, 1, sizeof(**st)))
			return 0;
		(*st)[0] = s->depth ? c->fr_alloc : c->fr_none;
		n = 1;
	}
	return n;
}

static int path_eq(const void *ctx, uint32_t id)
{
	struct cg_paths *ps = (struct cg_paths *)ctx;
	size_t n = sample_path(ps->c, ps->p[id].sample, &ps->other, &ps->cap_other);
	if (!n)
		ps->rc = JH_ENOMEM;
	return n == ps->nkey && !memcmp(ps->other, ps->key, n * sizeof(*ps->key));
}

static int path_add(struct cg_paths *ps, uint32_t si, const uint32_t *st, size_t n, double v,
		    double objects)
{
	uint64_t h = jh_mix64(jh_hash_fast(st, n * sizeof(*st), 0));
	ps->key = st;
	ps->nkey = n;
	uint32_t id = idmap_find(&ps->index, h, path_eq, ps);
	if (ps->rc)
		return ps->rc;
	if (id == UINT32_MAX) {
		struct cg_path np = { si, 0, 0 };
		if (ps->n >= UINT32_MAX - 1 || JH_PUSH(ps->p, ps->n, ps->cap, np) ||
		    idmap_put(&ps->index, h, (uint32_t)(ps->n - 1)))
			return JH_ENOMEM;
		id = (uint32_t)(ps->n - 1);
	}
	ps->p[id].v += v;
	ps->p[id].objects += objects;
	return 0;
}

/* Groups the samples by call path: with --base, the samples of the two
 * sides merge here even when their addresses differ (two runs), so the
 * increase and decrease of a path are net values. */
static int build_paths(struct cg *c, struct cg_paths *ps)
{
	const struct profile *p = c->r->p;
	const struct aggregate *a = c->r->a;
	uint32_t *st = NULL;
	size_t cap = 0;
	int rc = idmap_reserve(&ps->index, p->nsamples) ? JH_ENOMEM : 0;
	for (size_t si = 0; si < p->nsamples && !rc; si++) {
		const double *sv = aggregate_values(a, p, (uint32_t)si);
		double v = pf_value_of(sv, c->r->value);
		if (v == 0)
			continue;
		size_t n = sample_path(c, (uint32_t)si, &st, &cap);
		rc = n ? path_add(ps, (uint32_t)si, st, n, v, pf_value_of(sv, objects_of(c->r->value))) : JH_ENOMEM;
	}
	free(st);
	return rc;
}

/* Starts loading the locations of sample SI, so that their cache misses
 * overlap rather than come one after the other in pos_next(). */
static inline void prefetch_locs(const struct cg *c, uint32_t si)
{
	const struct pf_sample *s = &c->r->p->samples[si];
	for (uint32_t i = 0; i < s->depth; i++) {
		uint32_t loc = c->r->p->stacks[s->stack0 + i];
		__builtin_prefetch(&c->loc_frame0[loc]);
		__builtin_prefetch(&c->lpf[c->loc_frame0[loc]]);
	}
}

/* The positions of a sample from the root to the leaf, one at a time
 * (pos_next()): the stack after the allocator cut, or a pseudo frame
 * when nothing is left (see sample_path()). */
struct pos_iter {
	const struct cg *c;
	const struct pf_sample *s;
	uint32_t i, start, skip;     /* the location, the first one, its frames cut */
	uint32_t k, f0;              /* the next position + 1 in lpf, the location's first */
	bool any;
};

static inline void pos_start(struct pos_iter *it, const struct cg *c, uint32_t si)
{
	const struct profile *p = c->r->p;
	it->c = c;
	it->s = &p->samples[si];
	it->start = aggregate_stack_start(c->r->a, p, si, &it->skip);
	it->i = it->s->depth;
	it->k = it->f0 = 0;
	it->any = false;
}

static inline bool pos_next(struct pos_iter *it, uint32_t *pos, uint32_t *fn)
{
	const struct cg *c = it->c;
	while (it->k == it->f0) {
		if (it->i-- <= it->start) {
			it->i = 0;
			if (it->any)
				return false;
			/* nothing left: the pseudo frame, once */
			it->any = true;
			it->k = it->f0 = 1;
			*pos = it->s->depth ? c->fr_alloc : c->fr_none;
			*fn = c->frames[*pos].fn;
			return true;
		}
		uint32_t loc = c->r->p->stacks[it->s->stack0 + it->i];
		it->f0 = c->loc_frame0[loc] + (it->i == it->start ? it->skip : 0);
		it->k = c->loc_frame0[loc + 1];
		if (it->k < it->f0)
			it->k = it->f0;
	}
	it->k--;
	it->any = true;
	*pos = c->lpf[it->k].pos;
	*fn = c->lpf[it->k].fn;
	return true;
}

/* Profiles of this many samples or more are grouped and walked by two
 * threads (the sums do not depend on it). */
#define CG_SPLIT_MIN 65536

/* Grouping the samples by call path (the paths' sums, in the order of
 * their first samples) without a table of a million paths: each
 * sample's path is hashed (two threads, half the samples each), the
 * hashes that come twice are found (two threads, half the hashes each),
 * and only those samples' paths are compared. */
struct cg_group {
	const struct cg *c;
	uint64_t *hash;              /* per sample: its path's, 0 when its value is 0 */
	size_t from, to;             /* the samples hashed */
	uint32_t part, mask;         /* the hashes looked at: hash & mask == part */
	uint32_t (*dup)[2];          /* (sample, an earlier one with its hash) */
	size_t ndup, cap_dup;
	int rc;
};

static void *hash_paths(void *arg)
{
	struct cg_group *g = arg;
	const struct cg *c = g->c;
	for (size_t si = g->from; si < g->to; si++) {
		if (pf_value_of(aggregate_values(c->r->a, c->r->p, (uint32_t)si), c->r->value) == 0) {
			g->hash[si] = 0;
			continue;
		}
		uint64_t h = 0x9e3779b97f4a7c15ULL;
		prefetch_locs(c, (uint32_t)si);
		struct pos_iter it;
		uint32_t pos, fn;
		pos_start(&it, c, (uint32_t)si);
		while (pos_next(&it, &pos, &fn))
			h = (h ^ pos) * 0xff51afd7ed558ccdULL;
		h = jh_mix64(h);
		g->hash[si] = h ? h : 1;
	}
	return NULL;
}

struct hslot {
	uint64_t hash;               /* 0: empty */
	uint32_t sample;
};

static void *find_dups(void *arg)
{
	struct cg_group *g = arg;
	size_t ns = g->c->r->p->nsamples, n = 0;
	for (size_t si = 0; si < ns; si++)
		n += g->hash[si] && (g->hash[si] & g->mask) == g->part;
	size_t nslots = 16;
	while (nslots < 2 * n)
		nslots *= 2;
	struct hslot *t = jh_zalloc(nslots, sizeof(*t));
	if (!t) {
		g->rc = JH_ENOMEM;
		return NULL;
	}
	for (size_t si = 0; si < ns && !g->rc; si++) {
		uint64_t h = g->hash[si];
		if (!h || (h & g->mask) != g->part)
			continue;
		size_t i = (h >> 1) & (nslots - 1);
		while (t[i].hash && t[i].hash != h)
			i = (i + 1) & (nslots - 1);
		if (!t[i].hash) {
			t[i] = (struct hslot){ h, (uint32_t)si };
			continue;
		}
		if (jh_grow(&g->dup, &g->cap_dup, g->ndup + 1, sizeof(*g->dup)))
			g->rc = JH_ENOMEM;
		else {
			g->dup[g->ndup][0] = (uint32_t)si;
			g->dup[g->ndup++][1] = t[i].sample;
		}
	}
	free(t);
	return NULL;
}

/* The paths of the samples, into PS: in the order of their first
 * samples, each with its samples' values added up in sample order, as
 * build_paths() makes them (which it does itself when two different
 * paths share a hash). */
static int group_paths(struct cg *c, struct cg_paths *ps)
{
	size_t ns = c->r->p->nsamples;
	bool two = (ns >= CG_SPLIT_MIN || jh_threads_forced()) && jh_threads() > 1;
	uint64_t *hash = malloc((ns + 1) * sizeof(*hash));
	uint32_t *into = NULL;       /* per sample: its path + 1, 0 none yet */
	if (!hash)
		return JH_ENOMEM;
	struct cg_group g[2] = { { .c = c, .hash = hash, .from = 0, .to = two ? ns / 2 : ns,
				   .part = 0, .mask = two ? 1 : 0 },
				 { .c = c, .hash = hash, .from = two ? ns / 2 : ns, .to = ns,
				   .part = 1, .mask = 1 } };
	jh_run_two(hash_paths, &g[0], two ? hash_paths : NULL, &g[1], two);
	jh_run_two(find_dups, &g[0], two ? find_dups : NULL, &g[1], two);
	int rc = g[0].rc ? g[0].rc : g[1].rc;
	uint32_t *st = NULL, *other = NULL;
	size_t cap = 0, cap_other = 0;
	bool fallback = false;
	if (!rc && (g[0].ndup || g[1].ndup) && !(into = calloc(ns + 1, sizeof(*into))))
		rc = JH_ENOMEM;
	/* a repeated hash: the same path (else build_paths() does it all),
	 * whose samples go into its first sample's path */
	for (int k = 0; k < 2 && !rc && !fallback; k++)
		for (size_t i = 0; i < g[k].ndup && !rc && !fallback; i++) {
			uint32_t si = g[k].dup[i][0], first = g[k].dup[i][1];
			size_t n = sample_path(c, si, &st, &cap), m = sample_path(c, first, &other, &cap_other);
			if (!n || !m)
				rc = JH_ENOMEM;
			else if (n != m || memcmp(st, other, n * sizeof(*st)))
				fallback = true;
			else
				into[si] = first + 1;   /* a sample, for now */
		}
	free(st);
	free(other);
	for (int k = 0; k < 2; k++)
		free(g[k].dup);
	if (!rc && fallback)
		rc = build_paths(c, ps);
	else if (!rc) {
		if (!(ps->p = malloc((ns + 1) * sizeof(*ps->p))))
			rc = JH_ENOMEM;
		const struct aggregate *a = c->r->a;
		for (size_t si = 0; si < ns && !rc; si++) {
			if (!hash[si])
				continue;
			const double *sv = aggregate_values(a, c->r->p, (uint32_t)si);
			uint32_t id;
			if (into && into[si])
				id = into[into[si] - 1] - 1;   /* its first sample's path */
			else {
				id = (uint32_t)ps->n;
				ps->p[ps->n++] = (struct cg_path){ (uint32_t)si, 0, 0 };
				if (into)
					into[si] = id + 1;
			}
			ps->p[id].v += pf_value_of(sv, c->r->value);
			ps->p[id].objects += pf_value_of(sv, objects_of(c->r->value));
		}
	}
	free(into);
	free(hash);
	return rc;
}

/* One walker's sums: the entries at the positions whose id & MASK is
 * PART (two walkers take a position each of two, so that each entry's
 * sums are added up in path order, as one walker alone would), into
 * table T.  A path's costs go to small arrays indexed by position, which
 * stay in the cache, rather than to the table of hundreds of thousands
 * of entries (a cache miss for most of a path's thirty frames on a large
 * profile): each position's self cost, and the sums of its calls into
 * the last two callees it was seen to call (a call site almost always
 * calls one function, rarely more than two), which go back into the
 * table when a third comes, and at the end. */
struct cg_pend {
	double cost[2], calls;       /* the entry's sums */
	uint32_t callee;             /* UINT32_MAX: none */
	uint32_t id;                 /* the entry */
};

struct cg_walk {
	const struct cg *c;
	const struct cg_paths *ps;
	uint32_t part, mask;
	struct cg_table t;
	struct pairtab index;        /* t's entries by (position, callee) */
	double (*self)[2];           /* per position */
	uint8_t *has_self;
	struct cg_pend (*pend)[2];   /* per position */
	uint8_t *older;              /* per position: which of the two came longer ago */
	uint32_t *seen;              /* per function: the last path that met it */
	int rc;
};

static void store_pend(struct cg_walk *w, struct cg_pend *d)
{
	if (d->callee == UINT32_MAX)
		return;
	struct cg_ent *e = &w->t.ents[d->id];
	e->cost[0] = d->cost[0];
	e->cost[1] = d->cost[1];
	e->calls = d->calls;
	d->callee = UINT32_MAX;
}

/* The sums of the calls from POS into FN, or NULL when out of memory. */
static struct cg_pend *pending(struct cg_walk *w, uint32_t pos, uint32_t fn)
{
	uint32_t at = pos >> w->mask;
	struct cg_pend *d = w->pend[at];
	int k = d[0].callee == fn ? 0 : d[1].callee == fn ? 1 : -1;
	if (k < 0) {
		k = w->older[at];
		store_pend(w, &d[k]);
		int64_t id = find_ent(w->c, &w->t, &w->index, pos, fn);
		if (id < 0)
			return NULL;
		const struct cg_ent *e = &w->t.ents[id];
		d[k] = (struct cg_pend){ { e->cost[0], e->cost[1] }, e->calls, fn, (uint32_t)id };
	}
	w->older[at] = (uint8_t)!k;
	return &d[k];
}

/* Path PI's costs: the self cost of its leaf, and the cost and calls of
 * each call into the next position's function, root first.  Under
 * recursion only the call into the outermost instance of a function
 * carries the cost (inner ones 0), so that the calls into a function add
 * up to its cum, as in --text: readers sum them for the inclusive cost. */
static int walk_path(struct cg_walk *w, size_t pi)
{
	const struct cg *c = w->c;
	const struct cg_path *path = &w->ps->p[pi];
	double cost[2] = { path->v, 0 }, calls = fabs(path->objects);
	if (c->nevents == 2 && path->v < 0) {
		cost[0] = 0;
		cost[1] = -path->v;
	}
	uint32_t stamp = (uint32_t)pi + 1, prev = UINT32_MAX;
	prefetch_locs(c, path->sample);
	struct pos_iter it;
	uint32_t pos, fn;
	pos_start(&it, c, path->sample);
	while (pos_next(&it, &pos, &fn)) {
		bool inner = w->seen[fn] == stamp;
		w->seen[fn] = stamp;
		if (prev != UINT32_MAX && (prev & w->mask) == w->part) {
			struct cg_pend *d = pending(w, prev, fn);
			if (!d)
				return JH_ENOMEM;
			if (!inner) {
				d->cost[0] += cost[0];
				d->cost[1] += cost[1];
			}
			d->calls += calls;
		}
		prev = pos;
	}
	if ((prev & w->mask) == w->part) {
		w->self[prev >> w->mask][0] += cost[0];
		w->self[prev >> w->mask][1] += cost[1];
		w->has_self[prev >> w->mask] = 1;
	}
	return 0;
}

static void *walk(void *arg)
{
	struct cg_walk *w = arg;
	const struct cg *c = w->c;
	/* the arrays per position are of this walker's positions only */
	size_t nf = (c->nframes >> w->mask) + 1;
	w->self = calloc(nf, sizeof(*w->self));
	w->has_self = calloc(nf, 1);
	w->pend = malloc(nf * sizeof(*w->pend));
	w->older = calloc(nf, 1);
	w->seen = calloc(c->nfns + 1, sizeof(*w->seen));
	if (!w->self || !w->has_self || !w->pend || !w->older || !w->seen ||
	    pairtab_init(&w->index, sizeof(struct pairtab_key))) {
		w->rc = JH_ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < nf; i++)
		w->pend[i][0].callee = w->pend[i][1].callee = UINT32_MAX;
	for (size_t pi = 0; pi < w->ps->n && !w->rc; pi++)
		if (w->ps->p[pi].v != 0)
			w->rc = walk_path(w, pi);
	/* the sums left into the table */
	for (size_t pos = w->part; pos < c->nframes && !w->rc; pos += w->mask + 1) {
		size_t at = pos >> w->mask;
		for (int k = 0; k < 2; k++)
			store_pend(w, &w->pend[at][k]);
		if (w->has_self[at]) {
			int64_t id = find_ent(c, &w->t, &w->index, (uint32_t)pos, CG_SELF);
			if (id < 0)
				w->rc = (int)id;
			else {
				w->t.ents[id].cost[0] = w->self[at][0];
				w->t.ents[id].cost[1] = w->self[at][1];
			}
		}
	}
	return NULL;
}

static void walk_release(struct cg_walk *w)
{
	free(w->self);
	free(w->has_self);
	free(w->pend);
	free(w->older);
	free(w->seen);
	pairtab_release(&w->index);
	free(w->t.ents);
	memset(&w->t, 0, sizeof(w->t));
}

int cgcost_sum(struct cg *c)
{
	struct cg_paths ps = { .c = c };
	idmap_init(&ps.index);
	int rc = group_paths(c, &ps);
	bool two = (ps.n >= CG_SPLIT_MIN || jh_threads_forced()) && jh_threads() > 1;
	struct cg_walk w[2] = { { .c = c, .ps = &ps, .part = 0, .mask = two ? 1 : 0 },
				{ .c = c, .ps = &ps, .part = 1, .mask = 1 } };
	if (!rc)
		jh_run_two(walk, &w[0], two ? walk : NULL, &w[1], two);
	rc = rc ? rc : w[0].rc ? w[0].rc : w[1].rc;
	/* the second walker's entries after the first's: none is in both */
	if (!rc && w[1].t.nents &&
	    jh_grow(&w[0].t.ents, &w[0].t.cap_ents, w[0].t.nents + w[1].t.nents, sizeof(*w[0].t.ents)))
		rc = JH_ENOMEM;
	if (!rc && w[1].t.nents) {
		memcpy(w[0].t.ents + w[0].t.nents, w[1].t.ents, w[1].t.nents * sizeof(*w[1].t.ents));
		w[0].t.nents += w[1].t.nents;
	}
	c->t = (struct cg_table){ w[0].t.ents, w[0].t.nents, w[0].t.cap_ents };
	w[0].t.ents = NULL;
	for (int k = 0; k < 2; k++)
		walk_release(&w[k]);
	free(ps.p);
	free(ps.other);
	idmap_release(&ps.index);
	return rc;
}

