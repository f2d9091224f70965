/*
 * --callgrind: the profile in valgrind's callgrind format, for KCachegrind
 * and callgrind_annotate (jeprof's sub PrintCallgrind in bin/jeprof.in,
 * /usr/bin/jeprof, for what jeprof writes).
 *
 * Every frame of the unreduced stacks (allocator frames cut, inline levels
 * expanded) is a position "function, file, line".  A sample's value is the
 * self cost of its leaf position and the inclusive cost of every call from
 * a frame to the one below it, so KCachegrind shows flat and cumulative
 * values (under recursion, only the call into the outermost instance of a
 * function carries the cost, so that the calls into a function add up to
 * its cumulative value as in --text); the call count of an arc is the number of objects allocated
 * through it.  Functions are keyed by their name (short as in --text, or
 * full with --full-names) and the file that declares them, and an inlined
 * function is the function itself, not "name (inline)".  Unlike jeprof,
 * file names come from the model, so "??" and "(discriminator N)" do not
 * break the lines, and the order is fixed: functions by file then name,
 * positions by file then line.
 *
 * With --base a value can be negative, which the format cannot carry; the
 * file then has two events, the increase and the decrease of each stack.
 */
#include <errno.h>
#include <math.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"
#include "output/output.h"
#include "output/stacks.h"

#define CG_SELF UINT32_MAX

struct cg_fn {
	uint32_t name, file;     /* string ids in cg.strs */
	int64_t start_line;      /* smallest known declaration line, 0 unknown */
	uint32_t rank;           /* position in the output */
};

/* One frame of a location: function, and the file and line of the
 * position inside it. */
struct cg_frame {
	uint32_t fn, file;
	int32_t line;
};

/* A self cost (callee CG_SELF) or a call, at one position of FN. */
struct cg_ent {
	uint32_t fn, file;
	int32_t line;
	uint32_t callee;
	double cost[2];
	double calls;
};

/* A slot of the entry table: open addressing on (position, callee),
 * at most half full, the key beside the entry's id so that a lookup
 * reads one slot (tens of millions of lookups on a large profile). */
struct cg_slot {
	uint32_t frame;          /* the position: an id in cg.frames */
	uint32_t callee;
	uint32_t id;             /* + 1; 0: an empty slot */
};

struct cg {
	const struct report *r;
	struct strtab strs;
	struct cg_fn *fns;
	size_t nfns, cap_fns;
	struct idmap fn_index;
	struct cg_frame *frames; /* distinct positions */
	size_t nframes, cap_frames;
	struct idmap frame_index;
	uint32_t *lf;            /* the locations' positions, innermost first */
	size_t nlf, cap_lf;
	uint32_t *loc_frame0;    /* per location: lf[loc_frame0[l] ..] */
	struct cg_ent *ents;
	size_t nents, cap_ents;
	struct cg_slot *slots;   /* nslots, a power of two */
	size_t nslots;
	uint32_t *srank;         /* per string: its place in byte order */
	int nevents;
};

static int64_t intern(struct cg *c, const char *s)
{
	/* a name is one line; an empty name would read as a back reference */
	char buf[4096];
	size_t n = 0;
	for (; s[n] && n < sizeof(buf) - 1; n++) {
		unsigned char ch = (unsigned char)s[n];
		buf[n] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	buf[n] = 0;
	return strtab_intern(&c->strs, n ? buf : "??");
}

struct fn_key { const struct cg *c; uint32_t name, file; };

static int fn_eq(const void *ctx, uint32_t id)
{
	const struct fn_key *k = ctx;
	return k->c->fns[id].name == k->name && k->c->fns[id].file == k->file;
}

static int64_t fn_id(struct cg *c, const char *name, const char *file, int64_t start_line)
{
	int64_t n = intern(c, name), f = intern(c, file);
	if (n < 0 || f < 0)
		return JH_ENOMEM;
	struct fn_key k = { c, (uint32_t)n, (uint32_t)f };
	uint64_t h = jh_mix64(((uint64_t)k.name << 32) | k.file);
	uint32_t id = idmap_find(&c->fn_index, h, fn_eq, &k);
	if (id != UINT32_MAX) {
		struct cg_fn *fn = &c->fns[id];
		if (start_line > 0 && (fn->start_line == 0 || start_line < fn->start_line))
			fn->start_line = start_line;
		return id;
	}
	struct cg_fn fn = { k.name, k.file, start_line > 0 ? start_line : 0, 0 };
	if (JH_PUSH(c->fns, c->nfns, c->cap_fns, fn) ||
	    idmap_put(&c->fn_index, h, (uint32_t)(c->nfns - 1)))
		return JH_ENOMEM;
	return (int64_t)(c->nfns - 1);
}

static int frame_eq(const void *ctx, uint32_t id)
{
	const struct cg *c = ctx;
	const struct cg_frame *a = &c->frames[id], *b = &c->frames[c->nframes];
	return a->fn == b->fn && a->file == b->file && a->line == b->line;
}

/* Appends position FR to the current location's, as the id of the same
 * position met before or a new one. */
static int push_frame(struct cg *c, const struct cg_frame *fr)
{
	if (JH_PUSH(c->frames, c->nframes, c->cap_frames, *fr))
		return JH_ENOMEM;
	c->nframes--;   /* the probe, just past the end */
	uint64_t h = jh_mix64(((uint64_t)fr->fn << 32 | fr->file) ^ (uint32_t)fr->line * 0x9e3779b97f4a7c15ULL);
	uint32_t id = idmap_find(&c->frame_index, h, frame_eq, c);
	if (id == UINT32_MAX) {
		id = (uint32_t)c->nframes++;
		if (idmap_put(&c->frame_index, h, id))
			return JH_ENOMEM;
	}
	return JH_PUSH(c->lf, c->nlf, c->cap_lf, id);
}

/* The frames of every location, innermost first. */
static int build_frames(struct cg *c)
{
	const struct profile *p = c->r->p;
	c->loc_frame0 = malloc((p->nlocs + 1) * sizeof(*c->loc_frame0));
	if (!c->loc_frame0)
		return JH_ENOMEM;
	char name[4096];
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		if (c->nlf >= UINT32_MAX - 1)
			return JH_ENOMEM;
		c->loc_frame0[i] = (uint32_t)c->nlf;
		if (!l->nlines) {
			snprintf(name, sizeof(name), "0x%016llx", (unsigned long long)l->addr);
			int64_t f = fn_id(c, name, "??", 0), u = intern(c, "??");
			struct cg_frame fr = { (uint32_t)f, (uint32_t)u, 0 };
			if (f < 0 || u < 0 || push_frame(c, &fr))
				return JH_ENOMEM;
			continue;
		}
		for (uint32_t j = 0; j < l->nlines; j++) {
			const struct pf_line *ln = &p->lines[l->line0 + j];
			const struct pf_function *func = &p->funcs[ln->function];
			const char *lfile = strtab_get(&p->strs, ln->file);
			const char *ffile = strtab_get(&p->strs, func->filename);
			if (!*ffile)
				ffile = *lfile ? lfile : "??";
			const char *fname = aggregate_func_name(p, ln->function, c->r->full_names,
								name, sizeof(name));
			int64_t f = fn_id(c, fname, ffile, func->start_line);
			int64_t u = intern(c, *lfile ? lfile : ffile);
			struct cg_frame fr = { (uint32_t)f, (uint32_t)u,
					       *lfile && ln->line > 0 ? ln->line : 0 };
			if (f < 0 || u < 0 || push_frame(c, &fr))
				return JH_ENOMEM;
		}
	}
	c->loc_frame0[p->nlocs] = (uint32_t)c->nlf;
	return 0;
}

static size_t slot_of(uint32_t frame, uint32_t callee, size_t mask)
{
	return (size_t)(jh_mix64((uint64_t)frame << 32 | callee) & mask);
}

static int grow_slots(struct cg *c)
{
	size_t ncap = c->nslots ? 2 * c->nslots : 4096;
	struct cg_slot *ns = ncap <= SIZE_MAX / 4 ? jh_zalloc(ncap, sizeof(*ns)) : NULL;
	if (!ns)
		return JH_ENOMEM;
	for (size_t i = 0; i < c->nslots; i++) {
		const struct cg_slot *e = &c->slots[i];
		if (!e->id)
			continue;
		size_t j = slot_of(e->frame, e->callee, ncap - 1);
		while (ns[j].id)
			j = (j + 1) & (ncap - 1);
		ns[j] = *e;
	}
	free(c->slots);
	c->slots = ns;
	c->nslots = ncap;
	return 0;
}

/* The id of the entry at position FRAME (an id in c->frames) for the
 * call to CALLEE, or of its self cost when CALLEE is CG_SELF; added when
 * new.  Returns the id or JH_ENOMEM. */
static int64_t find_ent(struct cg *c, uint32_t frame, uint32_t callee)
{
	size_t mask = c->nslots - 1, i = slot_of(frame, callee, mask);
	struct cg_slot *sl;
	for (;; i = (i + 1) & mask) {
		sl = &c->slots[i];
		if (!sl->id || (sl->frame == frame && sl->callee == callee))
			break;
	}
	if (sl->id)
		return sl->id - 1;
	const struct cg_frame *fr = &c->frames[frame];
	struct cg_ent e = { fr->fn, fr->file, fr->line, callee, { 0, 0 }, 0 };
	if (c->nents >= UINT32_MAX - 1 || JH_PUSH(c->ents, c->nents, c->cap_ents, e))
		return JH_ENOMEM;
	*sl = (struct cg_slot){ frame, callee, (uint32_t)c->nents };
	if (2 * c->nents >= c->nslots && grow_slots(c))
		return JH_ENOMEM;
	return (int64_t)c->nents - 1;
}

static void add_cost(struct cg *c, uint32_t id, const double cost[2], double calls)
{
	c->ents[id].cost[0] += cost[0];
	c->ents[id].cost[1] += cost[1];
	c->ents[id].calls += calls;
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
	uint32_t fr_alloc, fr_none;  /* the positions of the pseudo frames */
	int rc;
};

/* The positions of sample SI's path, leaf first, into *ST: the stack
 * after the allocator cut, or a pseudo frame when nothing is left (the
 * cost stays in the totals, as --text's Total line keeps it).  Returns
 * their count, or 0 when out of memory. */
static size_t sample_path(const struct cg_paths *ps, uint32_t si, uint32_t **st, size_t *cap)
{
	const struct cg *c = ps->c;
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
		(*st)[0] = s->depth ? ps->fr_alloc : ps->fr_none;
		n = 1;
	}
	return n;
}

static int path_eq(const void *ctx, uint32_t id)
{
	struct cg_paths *ps = (struct cg_paths *)ctx;
	size_t n = sample_path(ps, ps->p[id].sample, &ps->other, &ps->cap_other);
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
	int64_t f_alloc = fn_id(c, STACKS_ALLOCATOR_ONLY, "??", 0);
	int64_t f_none = fn_id(c, STACKS_NO_FRAMES, "??", 0);
	int64_t u = intern(c, "??");
	int rc = f_alloc < 0 || f_none < 0 || u < 0 ? JH_ENOMEM : 0;
	if (!rc) {
		struct cg_frame fa = { (uint32_t)f_alloc, (uint32_t)u, 0 };
		struct cg_frame fn = { (uint32_t)f_none, (uint32_t)u, 0 };
		size_t was = c->nlf;
		rc = push_frame(c, &fa) || push_frame(c, &fn) ? JH_ENOMEM : 0;
		if (!rc) {
			ps->fr_alloc = c->lf[was];
			ps->fr_none = c->lf[was + 1];
		}
		c->nlf = was;
	}
	if (!rc && idmap_reserve(&ps->index, p->nsamples))
		rc = JH_ENOMEM;
	for (size_t si = 0; si < p->nsamples && !rc; si++) {
		const double *sv = aggregate_values(a, p, (uint32_t)si);
		double v = pf_value_of(sv, c->r->value);
		if (v == 0)
			continue;
		size_t n = sample_path(ps, (uint32_t)si, &st, &cap);
		rc = n ? path_add(ps, (uint32_t)si, st, n, v, pf_value_of(sv, objects_of(c->r->value))) : JH_ENOMEM;
	}
	free(st);
	return rc;
}

/* Each path's entries are looked up in three passes, so that the cache
 * misses of a path (most lookups of a large profile miss) overlap
 * instead of coming one after the other: the slots are prefetched, then
 * the entries found (and theirs prefetched), then the costs added in
 * the order one pass would add them. */
static int add_paths(struct cg *c, const struct cg_paths *ps)
{
	uint32_t *seen = calloc(c->nfns + 1, sizeof(*seen));
	uint32_t *ids = NULL;
	size_t cap = 0;
	/* per position: its self entry + 1, its last call's entry + 1 and
	 * that call's callee */
	uint32_t *memo_self = calloc(c->nframes + 1, sizeof(uint32_t));
	uint32_t *memo_ent = calloc(c->nframes + 1, sizeof(uint32_t));
	uint32_t *memo_callee = calloc(c->nframes + 1, sizeof(uint32_t));
	if (!seen || !memo_self || !memo_ent || !memo_callee) {
		free(seen);
		free(memo_self);
		free(memo_ent);
		free(memo_callee);
		return JH_ENOMEM;
	}
	int rc = 0;
	const struct cg_frame *fr = c->frames;
	uint32_t *st = NULL;
	size_t cap_st = 0;
	for (size_t pi = 0; pi < ps->n && !rc; pi++) {
		const struct cg_path *path = &ps->p[pi];
		if (path->v == 0)
			continue;
		size_t n = sample_path(ps, path->sample, &st, &cap_st);
		if (!n) {
			rc = JH_ENOMEM;
			break;
		}
		if (jh_grow(&ids, &cap, n, sizeof(*ids))) {
			rc = JH_ENOMEM;
			break;
		}
		double cost[2] = { path->v, 0 };
		if (c->nevents == 2 && path->v < 0) {
			cost[0] = 0;
			cost[1] = -path->v;
		}
		/* ids[n - 1]: the self cost; ids[i]: the call from st[i + 1]
		 * to st[i]'s function.  A position (a call site's line)
		 * almost always calls one function: the last entry of each
		 * position is kept, and the table is searched only when the
		 * callee differs */
		int64_t id = 0;
		for (size_t i = n; id >= 0 && i-- > 0;) {
			uint32_t pos = i == n - 1 ? st[0] : st[i + 1];
			uint32_t callee = i == n - 1 ? CG_SELF : fr[st[i]].fn;
			uint32_t *me = i == n - 1 ? &memo_self[pos] : &memo_ent[pos];
			if (*me && (i == n - 1 || memo_callee[pos] == callee)) {
				id = *me - 1;
			} else {
				id = find_ent(c, pos, callee);
				*me = (uint32_t)id + 1;
				if (i != n - 1)
					memo_callee[pos] = callee;
			}
			ids[i] = (uint32_t)id;
			__builtin_prefetch(&c->ents[id]);
		}
		if (id < 0) {
			rc = (int)id;
			break;
		}
		add_cost(c, ids[n - 1], cost, 0);
		/* Under recursion only the call into the outermost instance of
		 * a function carries the cost (inner ones get 0), so that the
		 * calls into a function add up to its cum, as in --text:
		 * readers sum them for the inclusive cost. */
		uint32_t stamp = (uint32_t)pi + 1;
		seen[fr[st[n - 1]].fn] = stamp;
		for (size_t i = n - 1; i-- > 0;) {
			uint32_t fn = fr[st[i]].fn;
			bool inner = seen[fn] == stamp;
			seen[fn] = stamp;
			double none[2] = { 0, 0 };
			add_cost(c, ids[i], inner ? none : cost, fabs(path->objects));
		}
	}
	free(st);
	free(ids);
	free(seen);
	free(memo_self);
	free(memo_ent);
	free(memo_callee);
	return rc;
}

static int add_samples(struct cg *c)
{
	struct cg_paths ps = { .c = c };
	idmap_init(&ps.index);
	int rc = build_paths(c, &ps);
	if (!rc)
		rc = add_paths(c, &ps);
	free(ps.p);
	free(ps.other);
	idmap_release(&ps.index);
	return rc;
}

static int cmp_fns(const void *x, const void *y, void *arg)
{
	const struct cg *c = arg;
	const struct cg_fn *f = &c->fns[*(const uint32_t *)x], *g = &c->fns[*(const uint32_t *)y];
	int d = strcmp(strtab_get(&c->strs, f->file), strtab_get(&c->strs, g->file));
	if (!d)
		d = strcmp(strtab_get(&c->strs, f->name), strtab_get(&c->strs, g->name));
	return d;
}

static int cmp_strs(const void *x, const void *y, void *arg)
{
	const struct cg *c = arg;
	return strcmp(strtab_get(&c->strs, *(const uint32_t *)x),
		      strtab_get(&c->strs, *(const uint32_t *)y));
}

/* c->srank: every string's place in byte order, so that the entries
 * sort by numbers (a million of them, a strcmp on every tie). */
static int rank_strings(struct cg *c)
{
	size_t n = c->strs.len;
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	c->srank = malloc((n + 1) * sizeof(*c->srank));
	if (!order || !c->srank) {
		free(order);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	jh_qsort_r(order, n, sizeof(*order), cmp_strs, c);
	for (size_t i = 0; i < n; i++)
		c->srank[order[i]] = (uint32_t)i;
	free(order);
	return 0;
}

/* Entries by function, then positions in the function's own file first,
 * then file, line, self before calls, callee. */
static int cmp_ents(const void *x, const void *y, void *arg)
{
	const struct cg *c = arg;
	const struct cg_ent *e = x, *f = y;
	const struct cg_fn *fe = &c->fns[e->fn], *ff = &c->fns[f->fn];
	if (fe->rank != ff->rank)
		return fe->rank < ff->rank ? -1 : 1;
	bool oe = e->file != fe->file, of = f->file != ff->file;
	if (oe != of)
		return oe ? 1 : -1;
	if (e->file != f->file)
		return c->srank[e->file] < c->srank[f->file] ? -1 : 1;
	if (e->line != f->line)
		return e->line < f->line ? -1 : 1;
	if (e->callee != f->callee) {
		if (e->callee == CG_SELF || f->callee == CG_SELF)
			return e->callee == CG_SELF ? -1 : 1;
		return c->fns[e->callee].rank < c->fns[f->callee].rank ? -1 : 1;
	}
	return 0;
}

/* Writes "KEY=(id) name" the first time a string is used and "KEY=(id)"
 * afterwards.  IDS holds the compressed id of each string, 0 when unused. */
static void write_name(FILE *out, const char *key, const struct cg *c, uint32_t s,
		       uint32_t *ids, uint32_t *next)
{
	if (ids[s]) {
		fprintf(out, "%s=(%u)\n", key, ids[s]);
		return;
	}
	ids[s] = ++*next;
	fprintf(out, "%s=(%u) %s\n", key, ids[s], strtab_get(&c->strs, s));
}

static void write_costs(FILE *out, const struct cg *c, const double cost[2])
{
	fprintf(out, "%lld", (long long)llround(cost[0]));
	if (c->nevents == 2)
		fprintf(out, " %lld", (long long)llround(cost[1]));
	fputc('\n', out);
}

static const char *value_name(enum pf_value v, const char **what)
{
	switch (v) {
	case PF_INUSE_OBJECTS: *what = "objects in use"; return "inuse_objects";
	case PF_INUSE_SPACE: *what = "bytes in use"; return "inuse_space";
	case PF_ALLOC_OBJECTS: *what = "objects allocated"; return "alloc_objects";
	case PF_CHURN_OBJECTS: *what = "objects allocated and freed again"; return "churn_objects";
	case PF_CHURN_SPACE: *what = "bytes allocated and freed again"; return "churn_space";
	default: *what = "bytes allocated"; return "alloc_space";
	}
}

static void write_header(FILE *out, struct cg *c)
{
	const struct report *r = c->r;
	const char *what, *ev = value_name(r->value, &what);
	fputs("# callgrind format\nversion: 1\ncreator: jheap\n", out);
	if (r->program && *r->program) {
		int64_t id = intern(c, r->program);
		fprintf(out, "cmd: %s\n", id < 0 ? "?" : strtab_get(&c->strs, (uint32_t)id));
	}
	if (r->profile_paths && r->profile_paths[0]) {
		fputs("desc: Profile:", out);
		for (size_t i = 0; r->profile_paths[i]; i++) {
			int64_t id = intern(c, r->profile_paths[i]);
			fprintf(out, " %s", id < 0 ? "?" : strtab_get(&c->strs, (uint32_t)id));
		}
		fputc('\n', out);
	}
	if (r->thread)
		fprintf(out, "desc: Thread: %s\n", r->thread);
	fputs("positions: line\n", out);
	if (c->nevents == 2) {
		fprintf(out, "event: %s_increase : %s, increase over --base\n", ev, what);
		fprintf(out, "event: %s_decrease : %s, decrease from --base\n", ev, what);
		fprintf(out, "events: %s_increase %s_decrease\n", ev, ev);
	} else {
		fprintf(out, "event: %s : %s\n", ev, what);
		fprintf(out, "events: %s\n", ev);
	}
	/* the sum of the self costs as written, so that the file adds up */
	double sum[2] = { 0, 0 };
	for (size_t i = 0; i < c->nents; i++)
		if (c->ents[i].callee == CG_SELF)
			for (int k = 0; k < 2; k++)
				sum[k] += (double)llround(c->ents[i].cost[k]);
	fputs("summary: ", out);
	write_costs(out, c, sum);
}

static int write_body(FILE *out, struct cg *c)
{
	uint32_t *fl_ids = calloc(c->strs.len + 1, sizeof(*fl_ids));
	uint32_t *fn_ids = calloc(c->strs.len + 1, sizeof(*fn_ids));
	if (!fl_ids || !fn_ids) {
		free(fl_ids);
		free(fn_ids);
		return JH_ENOMEM;
	}
	uint32_t nfl = 0, nfn = 0, cur_fn = UINT32_MAX, cur_file = 0;
	for (size_t i = 0; i < c->nents; i++) {
		const struct cg_ent *e = &c->ents[i];
		const struct cg_fn *fn = &c->fns[e->fn];
		if (e->fn != cur_fn) {
			if (cur_fn != UINT32_MAX)
				fputc('\n', out);
			/* fl= before every fn=: an earlier fi= must not leak into
			 * the next function */
			write_name(out, "fl", c, fn->file, fl_ids, &nfl);
			write_name(out, "fn", c, fn->name, fn_ids, &nfn);
			cur_fn = e->fn;
			cur_file = fn->file;
		}
		if (e->file != cur_file) {
			write_name(out, "fi", c, e->file, fl_ids, &nfl);
			cur_file = e->file;
		}
		if (e->callee != CG_SELF) {
			const struct cg_fn *callee = &c->fns[e->callee];
			write_name(out, "cfl", c, callee->file, fl_ids, &nfl);
			write_name(out, "cfn", c, callee->name, fn_ids, &nfn);
			double calls = llround(e->calls) > 0 ? (double)llround(e->calls) : 1;
			fprintf(out, "calls=%.0f %lld\n", calls, (long long)callee->start_line);
		}
		fprintf(out, "%d ", e->line);
		write_costs(out, c, e->cost);
	}
	free(fl_ids);
	free(fn_ids);
	return 0;
}

int output_callgrind(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct cg c = { .r = r, .nevents = r->diff ? 2 : 1 };
	int rc = strtab_init(&c.strs);
	idmap_init(&c.fn_index);
	idmap_init(&c.frame_index);
	uint32_t *order = NULL;
	if (!rc && grow_slots(&c))
		rc = JH_ENOMEM;
	if (!rc)
		rc = build_frames(&c);
	if (!rc)
		rc = add_samples(&c);
	if (!rc && !(order = malloc((c.nfns + 1) * sizeof(*order))))
		rc = JH_ENOMEM;
	if (!rc) {
		for (size_t i = 0; i < c.nfns; i++)
			order[i] = (uint32_t)i;
		jh_qsort_r(order, c.nfns, sizeof(*order), cmp_fns, &c);
		for (size_t i = 0; i < c.nfns; i++)
			c.fns[order[i]].rank = (uint32_t)i;
		rc = rank_strings(&c);
	}
	if (!rc) {
		jh_qsort_r(c.ents, c.nents, sizeof(*c.ents), cmp_ents, &c);
		write_header(out, &c);
		fputc('\n', out);
		rc = write_body(out, &c);
	}
	if (rc)
		rc = jh_err(err, errlen, rc, "out of memory");
	else if (ferror(out))
		rc = jh_err(err, errlen, JH_EIO, "cannot write the callgrind file: %s", strerror(errno));
	free(order);
	free(c.loc_frame0);
	free(c.frames);
	free(c.fns);
	free(c.ents);
	free(c.lf);
	free(c.slots);
	free(c.srank);
	idmap_release(&c.fn_index);
	idmap_release(&c.frame_index);
	strtab_release(&c.strs);
	return rc;
}
