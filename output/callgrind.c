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

struct cg {
	const struct report *r;
	struct strtab strs;
	struct cg_fn *fns;
	size_t nfns, cap_fns;
	struct idmap fn_index;
	struct cg_frame *frames;
	size_t nframes, cap_frames;
	uint32_t *loc_frame0;    /* per location: frames[loc_frame0[l] ..] */
	struct cg_ent *ents;
	size_t nents, cap_ents;
	struct idmap ent_index;
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
		c->loc_frame0[i] = (uint32_t)c->nframes;
		if (!l->nlines) {
			snprintf(name, sizeof(name), "0x%016llx", (unsigned long long)l->addr);
			int64_t f = fn_id(c, name, "??", 0), u = intern(c, "??");
			struct cg_frame fr = { (uint32_t)f, (uint32_t)u, 0 };
			if (f < 0 || u < 0 || JH_PUSH(c->frames, c->nframes, c->cap_frames, fr))
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
			if (f < 0 || u < 0 || JH_PUSH(c->frames, c->nframes, c->cap_frames, fr))
				return JH_ENOMEM;
		}
	}
	c->loc_frame0[p->nlocs] = (uint32_t)c->nframes;
	return 0;
}

struct ent_key { const struct cg *c; const struct cg_ent *e; };

static int ent_eq(const void *ctx, uint32_t id)
{
	const struct ent_key *k = ctx;
	const struct cg_ent *a = &k->c->ents[id], *b = k->e;
	return a->fn == b->fn && a->file == b->file && a->line == b->line && a->callee == b->callee;
}

/* Adds COST (and CALLS) at position FR, for the call to CALLEE or the
 * self cost when CALLEE is CG_SELF. */
static int add_ent(struct cg *c, const struct cg_frame *fr, uint32_t callee,
		   const double cost[2], double calls)
{
	struct cg_ent e = { fr->fn, fr->file, fr->line, callee, { 0, 0 }, 0 };
	uint64_t h = jh_hash_bytes(&e.fn, sizeof(e.fn), 0);
	h = jh_hash_bytes(&e.file, sizeof(e.file), h);
	h = jh_hash_bytes(&e.line, sizeof(e.line), h);
	h = jh_mix64(jh_hash_bytes(&e.callee, sizeof(e.callee), h));
	struct ent_key k = { c, &e };
	uint32_t id = idmap_find(&c->ent_index, h, ent_eq, &k);
	if (id == UINT32_MAX) {
		if (JH_PUSH(c->ents, c->nents, c->cap_ents, e) ||
		    idmap_put(&c->ent_index, h, (uint32_t)(c->nents - 1)))
			return JH_ENOMEM;
		id = (uint32_t)(c->nents - 1);
	}
	c->ents[id].cost[0] += cost[0];
	c->ents[id].cost[1] += cost[1];
	c->ents[id].calls += calls;
	return 0;
}

static enum pf_value objects_of(enum pf_value v)
{
	return pf_value_is_objects(v) ? v : (enum pf_value)(v - 1);
}

/* A distinct call path (the frames of one or more samples, leaf first)
 * and the sums of its samples. */
struct cg_path {
	uint32_t frame0, nframes;   /* into cg_paths.frames */
	double v, objects;
};

struct cg_paths {
	struct cg_path *p;
	size_t n, cap;
	struct cg_frame *frames;
	size_t nframes, cap_frames;
	struct idmap index;
	const struct cg_frame *key;  /* the path being looked up */
	size_t nkey;
};

static int path_eq(const void *ctx, uint32_t id)
{
	const struct cg_paths *ps = ctx;
	const struct cg_path *p = &ps->p[id];
	return p->nframes == ps->nkey &&
	       !memcmp(ps->frames + p->frame0, ps->key, ps->nkey * sizeof(*ps->key));
}

static int path_add(struct cg_paths *ps, const struct cg_frame *st, size_t n, double v,
		    double objects)
{
	uint64_t h = jh_mix64(jh_hash_bytes(st, n * sizeof(*st), 0));
	ps->key = st;
	ps->nkey = n;
	uint32_t id = idmap_find(&ps->index, h, path_eq, ps);
	if (id == UINT32_MAX) {
		if (jh_grow(&ps->frames, &ps->cap_frames, ps->nframes + n, sizeof(*st)))
			return JH_ENOMEM;
		memcpy(ps->frames + ps->nframes, st, n * sizeof(*st));
		struct cg_path np = { (uint32_t)ps->nframes, (uint32_t)n, 0, 0 };
		ps->nframes += n;
		if (JH_PUSH(ps->p, ps->n, ps->cap, np) ||
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
	struct cg_frame *st = NULL;
	size_t cap = 0;
	int64_t f_alloc = fn_id(c, STACKS_ALLOCATOR_ONLY, "??", 0);
	int64_t f_none = fn_id(c, STACKS_NO_FRAMES, "??", 0);
	int64_t u = intern(c, "??");
	int rc = f_alloc < 0 || f_none < 0 || u < 0 ? JH_ENOMEM : 0;
	for (size_t si = 0; si < p->nsamples && !rc; si++) {
		const struct pf_sample *s = &p->samples[si];
		const double *sv = aggregate_values(a, p, (uint32_t)si);
		double v = pf_value_of(sv, c->r->value);
		if (v == 0)
			continue;
		/* the stack after the outermost allocator location */
		size_t n = 0;
		uint32_t skip;
		uint32_t start = aggregate_stack_start(a, p, (uint32_t)si, &skip);
		for (uint32_t i = start; i < s->depth; i++, skip = 0) {
			uint32_t loc = p->stacks[s->stack0 + i];
			size_t f0 = c->loc_frame0[loc] + skip, nf = c->loc_frame0[loc + 1] - f0;
			if (jh_grow(&st, &cap, n + nf, sizeof(*st))) {
				rc = JH_ENOMEM;
				break;
			}
			memcpy(st + n, c->frames + f0, nf * sizeof(*st));
			n += nf;
		}
		if (rc)
			break;
		if (n == 0) {
			/* keep the cost in the totals, as --text's Total line does */
			if (jh_grow(&st, &cap, 1, sizeof(*st))) {
				rc = JH_ENOMEM;
				break;
			}
			st[0] = (struct cg_frame){ (uint32_t)(s->depth ? f_alloc : f_none), (uint32_t)u, 0 };
			n = 1;
		}
		rc = path_add(ps, st, n, v, pf_value_of(sv, objects_of(c->r->value)));
	}
	free(st);
	return rc;
}

static int add_paths(struct cg *c, const struct cg_paths *ps)
{
	uint32_t *seen = calloc(c->nfns + 1, sizeof(*seen));
	if (!seen)
		return JH_ENOMEM;
	int rc = 0;
	for (size_t pi = 0; pi < ps->n && !rc; pi++) {
		const struct cg_path *path = &ps->p[pi];
		const struct cg_frame *st = ps->frames + path->frame0;
		size_t n = path->nframes;
		if (path->v == 0)
			continue;
		double cost[2] = { path->v, 0 };
		if (c->nevents == 2 && path->v < 0) {
			cost[0] = 0;
			cost[1] = -path->v;
		}
		rc = add_ent(c, &st[0], CG_SELF, cost, 0);
		/* Under recursion only the call into the outermost instance of
		 * a function carries the cost (inner ones get 0), so that the
		 * calls into a function add up to its cum, as in --text:
		 * readers sum them for the inclusive cost. */
		uint32_t stamp = (uint32_t)pi + 1;
		seen[st[n - 1].fn] = stamp;
		for (size_t i = n - 1; i-- > 0 && !rc;) {
			bool inner = seen[st[i].fn] == stamp;
			seen[st[i].fn] = stamp;
			double none[2] = { 0, 0 };
			rc = add_ent(c, &st[i + 1], st[i].fn, inner ? none : cost,
				     fabs(path->objects));
		}
	}
	free(seen);
	return rc;
}

static int add_samples(struct cg *c)
{
	struct cg_paths ps = { 0 };
	idmap_init(&ps.index);
	int rc = build_paths(c, &ps);
	if (!rc)
		rc = add_paths(c, &ps);
	free(ps.p);
	free(ps.frames);
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
	int d = strcmp(strtab_get(&c->strs, e->file), strtab_get(&c->strs, f->file));
	if (d)
		return d;
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
	idmap_init(&c.ent_index);
	uint32_t *order = NULL;
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
	idmap_release(&c.fn_index);
	idmap_release(&c.ent_index);
	strtab_release(&c.strs);
	return rc;
}
