/* aggregate_build() against a plain re-computation: a generated profile
 * of 50,000 samples (above AGG_SPLIT_MIN, so it is summed in two halves)
 * with inline chains (some of five to eight levels), recursion, allocator frames, names that shorten
 * alike and zero values.  With whole-number values every order of
 * addition gives the exact sum, so the rows must equal the reference
 * exactly; with fractional values one thread and two must still give
 * the same bits. */
#include <math.h>
#include <stdint.h>
#include "analyzer/aggregate.h"
#include "analyzer/names.h"
#include "unit.h"

#define NFUNCS 900
#define NLOCS 6000
#define NSAMPLES 50000

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Function f: every third one an allocator entry point, the rest C++
 * names of which three at a time shorten to the same "nsA::Cls::fnA". */
static void func_name(int f, char *buf, size_t n)
{
	if (f % 97 == 0)
		snprintf(buf, n, "%s", f % 2 ? "malloc" : "je_prof_backtrace");
	else if (f % 7 == 3)
		snprintf(buf, n, "x%d", f);           /* shorter than eight bytes */
	else if (f % 7 == 5)
		snprintf(buf, n, "\xc3\xa9t\xc3\xa9%d", f);  /* bytes above 0x7f */
	else if (f % 7 == 6)   /* the same first 24 bytes and more */
		snprintf(buf, n, "a_long_name_shared_by_many_functions_%d", f);
	else
		snprintf(buf, n, "ns%d::Cls<T%d>::fn%d(int)%s", f / 3, f % 3, f / 3,
			 f % 2 ? " const" : "");
}

static bool func_alloc(int f)
{
	return f % 97 == 0;
}

/* The program's own allocator functions of --allocator=USER_RE: the
 * "x%d" names whose number ends in 0 or 5. */
#define USER_RE "^x[0-9]*[05]$"
static bool func_user(int f)
{
	return !func_alloc(f) && f % 7 == 3 && f % 5 == 0;
}

/* The key a report shows for function F, inlined or not. */
static void func_key(int f, bool inlined, char *buf, size_t n)
{
	char full[128], shown[128];
	func_name(f, full, sizeof(full));
	if (func_alloc(f) || f % 7 == 3 || f % 7 == 5 || f % 7 == 6)
		snprintf(shown, sizeof(shown), "%s", full);
	else
		snprintf(shown, sizeof(shown), "ns%d::Cls::fn%d", f / 3, f / 3);
	snprintf(buf, n, "%s%s", shown, inlined ? " (inline)" : "");
}

struct gen {
	struct profile p;
	int nlines[NLOCS];
	int funcs[NLOCS][8];     /* innermost first */
};

static void build(struct gen *g, bool whole)
{
	uint64_t s = 0x2545f4914f6cdd1dULL;
	profile_init(&g->p);
	uint32_t fn[NFUNCS];
	for (int f = 0; f < NFUNCS; f++) {
		char name[128];
		func_name(f, name, sizeof(name));
		uint32_t id = (uint32_t)strtab_intern(&g->p.strs, name);
		uint32_t file = (uint32_t)strtab_intern(&g->p.strs, f % 2 ? "a.cc" : "b.h");
		fn[f] = (uint32_t)profile_function(&g->p, id, 0, file, f);
	}
	uint32_t file = (uint32_t)strtab_intern(&g->p.strs, "a.cc");
	for (int i = 0; i < NLOCS; i++) {
		int64_t id = profile_location(&g->p, 0x1000 + 16 * (uint64_t)i, false, UINT32_MAX);
		struct pf_location *l = &g->p.locs[id];
		l->line0 = (uint32_t)g->p.nlines;
		g->nlines[i] = 1 + (int)(rnd(&s) % 4 == 0) + (int)(rnd(&s) % 8 == 0);
		/* now and then more inline levels than the summing copies at
		 * once (KEY_CHUNK) */
		if (rnd(&s) % 32 == 0)
			g->nlines[i] = 5 + (int)(rnd(&s) % 4);
		for (int j = 0; j < g->nlines[i]; j++) {
			/* allocator functions mostly on their own, as in real stacks */
			int f = (int)(rnd(&s) % NFUNCS);
			if (func_alloc(f) && rnd(&s) % 4)
				f++;
			g->funcs[i][j] = f;
			struct pf_line ln = { .function = fn[f], .file = file, .line = j + 1,
					      .inlined = j + 1 < g->nlines[i] };
			profile_add_line(&g->p, &ln);
		}
		l->nlines = (uint32_t)g->nlines[i];
	}
	for (int k = 0; k < NSAMPLES; k++) {
		uint32_t st[40];
		size_t n = 1 + rnd(&s) % 40;
		for (size_t i = 0; i < n; i++)
			/* repeats (recursion) from a small pool now and then */
			st[i] = (uint32_t)(rnd(&s) % 7 == 0 ? rnd(&s) % 50 : rnd(&s) % NLOCS);
		int64_t id = profile_sample(&g->p, st, n);
		double v = (double)(rnd(&s) % 5000);
		if (rnd(&s) % 10 == 0)
			v = 0;
		if (!whole)
			v = v * 1.000001 + 0.3;
		g->p.samples[id].v[PF_INUSE_SPACE] += v;
	}
}

struct ref { char key[160]; double flat, cum; uint32_t stamp; };

/* Whether frame J of location L is cut once the cut has reached it: an
 * allocator frame, or with USER one of the program's own. */
static bool cut_frame(const struct gen *g, uint32_t l, int j, bool user)
{
	return func_alloc(g->funcs[l][j]) || (user && func_user(g->funcs[l][j]));
}

/* 1 + the innermost frame of location L that is the program's own
 * allocator's, or 0: a location with one is cut through it first. */
static int user_from(const struct gen *g, uint32_t l)
{
	for (int j = 0; j < g->nlines[l]; j++)
		if (func_user(g->funcs[l][j]))
			return j + 1;
	return 0;
}

/* The reference: per sample, the leading run of allocator frames cut
 * (from the leaf up to the first other frame, inline frames one by one),
 * flat to the innermost kept frame's key, cum once per key.  With USER,
 * the cut starts at the innermost location with a frame of func_user(),
 * and a location with such a frame is cut through the innermost one
 * before the run of allocator and func_user() frames goes on. */
static void reference(const struct gen *g, struct ref *refs, size_t *nref, double *flat_total,
		      bool user)
{
	const struct profile *p = &g->p;
	static int slot[NFUNCS][2];  /* (function, inlined): index in refs + 1 */
	memset(slot, 0, sizeof(slot));
	*nref = 0;
	*flat_total = 0;
	for (size_t si = 0; si < p->nsamples; si++) {
		const struct pf_sample *sm = &p->samples[si];
		double v = sm->v[PF_INUSE_SPACE];
		if (v == 0)
			continue;
		uint32_t start = 0;
		int skip = 0;
		/* the innermost location with a frame of the program's own
		 * allocator */
		for (uint32_t i = 0; user && i < sm->depth; i++)
			if (user_from(g, p->stacks[sm->stack0 + i])) {
				start = i;
				break;
			}
		while (start < sm->depth) {
			uint32_t l = p->stacks[sm->stack0 + start];
			skip = user ? user_from(g, l) : 0;
			while (skip < g->nlines[l] && cut_frame(g, l, skip, user))
				skip++;
			if (skip < g->nlines[l])
				break;
			start++;
		}
		bool first = true;
		for (uint32_t i = start; i < sm->depth; i++, skip = 0) {
			uint32_t l = p->stacks[sm->stack0 + i];
			for (int j = skip; j < g->nlines[l]; j++) {
				int f = g->funcs[l][j], inl = j + 1 < g->nlines[l];
				if (!slot[f][inl]) {
					char key[160];
					func_key(f, inl, key, sizeof(key));
					size_t r = 0;
					while (r < *nref && strcmp(refs[r].key, key))
						r++;
					if (r == *nref) {
						memset(&refs[r], 0, sizeof(refs[r]));
						snprintf(refs[r].key, sizeof(refs[r].key), "%s", key);
						(*nref)++;
					}
					slot[f][inl] = (int)r + 1;
				}
				size_t r = (size_t)slot[f][inl] - 1;
				if (first) {
					refs[r].flat += v;
					*flat_total += v;
					first = false;
				}
				if (refs[r].stamp != si + 1) {
					refs[r].stamp = (uint32_t)si + 1;
					refs[r].cum += v;
				}
			}
		}
	}
}

static int agg(struct aggregate *a, const struct profile *p, const char *threads,
	       const char *focus, const char *allocator)
{
	struct agg_options o = { .value = PF_INUSE_SPACE, .gran = GRAN_FUNCTIONS, .focus = focus,
				 .allocator = allocator };
	setenv("JHEAP_THREADS", threads, 1);
	int rc = aggregate_build(a, p, &o);
	unsetenv("JHEAP_THREADS");
	return rc;
}

static bool same_rows(const struct aggregate *a, const struct aggregate *b)
{
	if (a->nrows != b->nrows || memcmp(&a->total, &b->total, sizeof(double)) ||
	    memcmp(&a->flat_total, &b->flat_total, sizeof(double)))
		return false;
	for (size_t r = 0; r < a->nrows; r++)
		if (strcmp(strtab_get(&a->keys, a->rows[r].key), strtab_get(&b->keys, b->rows[r].key)) ||
		    memcmp(&a->rows[r].flat, &b->rows[r].flat, sizeof(double)) ||
		    memcmp(&a->rows[r].cum, &b->rows[r].cum, sizeof(double)))
			return false;
	return true;
}

/* The aggregate of G in one and two threads against the reference, with
 * or without --allocator=USER_RE. */
static void check_exact(struct gen *g, bool user)
{
	static struct ref refs[NFUNCS * 2];
	size_t nref;
	double flat_total;
	reference(g, refs, &nref, &flat_total, user);
	for (int t = 1; t <= 2; t++) {
		struct aggregate a;
		CHECK_INT(agg(&a, &g->p, t == 1 ? "1" : "2", NULL, user ? USER_RE : NULL), 0);
		CHECK(a.flat_total == flat_total);
		size_t matched = 0, bad = 0;
		for (size_t r = 1; r < a.nrows; r++) {
			const char *key = strtab_get(&a.keys, a.rows[r].key);
			size_t k = 0;
			while (k < nref && strcmp(refs[k].key, key))
				k++;
			if (k == nref) {
				/* a key no kept frame has: nothing may be summed into it */
				if (a.rows[r].flat != 0 || a.rows[r].cum != 0)
					bad++;
				continue;
			}
			matched++;
			if (a.rows[r].flat != refs[k].flat || a.rows[r].cum != refs[k].cum) {
				if (bad++ < 5)
					printf("  %s: flat %.17g cum %.17g, expected %.17g %.17g\n", key,
					       a.rows[r].flat, a.rows[r].cum, refs[k].flat, refs[k].cum);
			}
		}
		printf("  threads %d: %zu rows, %zu reference keys\n", t, a.nrows, nref);
		CHECK_INT(bad, 0);
		CHECK_INT(matched, nref);
		/* the report's order: value down, then the key in byte order */
		for (int by_cum = 0; by_cum < 2; by_cum++) {
			CHECK_INT(aggregate_sort(&a, by_cum), 0);
			size_t nonzero = 0, unordered = 0;
			for (size_t r = 1; r < a.nrows; r++)
				nonzero += a.rows[r].flat != 0 || a.rows[r].cum != 0;
			for (size_t i = 1; i < a.norder; i++) {
				const struct agg_row *x = &a.rows[a.order[i - 1]], *y = &a.rows[a.order[i]];
				double vx = by_cum ? x->cum : x->flat, vy = by_cum ? y->cum : y->flat;
				int c = strcmp(strtab_get(&a.keys, x->key), strtab_get(&a.keys, y->key));
				unordered += vx < vy || (vx == vy && c >= 0);
			}
			CHECK_INT(a.norder, nonzero);
			CHECK_INT(unordered, 0);
		}
		aggregate_release(&a);
	}
}

TEST(whole_values_exact)
{
	static struct gen g;
	build(&g, true);
	CHECK(g.p.nsamples >= 40000);
	check_exact(&g, false);
	profile_release(&g.p);
}

/* --allocator: the program's own allocator functions move the cut; the
 * stacks that have one change (checked: the rows differ from the plain
 * ones), and every row is the reference's. */
TEST(user_allocator_exact)
{
	static struct gen g;
	build(&g, true);
	size_t with = 0;
	for (size_t l = 0; l < g.p.nlocs; l++)
		for (int j = 0; j < g.nlines[l]; j++)
			with += func_user(g.funcs[l][j]);
	CHECK(with > 50);
	check_exact(&g, true);
	struct aggregate a, b;
	CHECK_INT(agg(&a, &g.p, "1", NULL, NULL), 0);
	CHECK_INT(agg(&b, &g.p, "1", NULL, USER_RE), 0);
	CHECK(!same_rows(&a, &b));
	aggregate_release(&a);
	aggregate_release(&b);
	profile_release(&g.p);
}

TEST(fractional_values_same_bits)
{
	static struct gen g;
	build(&g, false);
	const char *focus[] = { NULL, "fn1[0-9]" };
	for (int k = 0; k < 2; k++) {
		struct aggregate a, b;
		CHECK_INT(agg(&a, &g.p, "1", focus[k], k ? USER_RE : NULL), 0);
		CHECK_INT(agg(&b, &g.p, "2", focus[k], k ? USER_RE : NULL), 0);
		CHECK(same_rows(&a, &b));
		CHECK(a.flat_total > 0 && a.flat_total <= a.total);
		aggregate_release(&a);
		aggregate_release(&b);
	}
	profile_release(&g.p);
}

/* --thread=N is a view: aggregates of two threads' shares and of the
 * whole profile, built from one model in any order, leave the model as it
 * was and each equals the aggregate of a model holding only that share
 * (the way --thread was once written, the reference here). */
TEST(thread_views_leave_the_model)
{
	static struct gen g;
	build(&g, true);
	struct profile *p = &g.p;
	int64_t t1 = profile_thread(p, 7), t2 = profile_thread(p, 9);
	CHECK(t1 >= 0 && t2 >= 0);
	for (size_t i = 0; i < p->nsamples; i++) {
		double v = p->samples[i].v[PF_INUSE_SPACE];
		double a[PF_NVALUES] = { 0 }, b[PF_NVALUES] = { 0 };
		a[PF_INUSE_SPACE] = i % 3 ? floor(v / 4) : 0;
		b[PF_INUSE_SPACE] = v - a[PF_INUSE_SPACE];
		if (i % 3)
			CHECK_INT(profile_thread_add(p, (uint32_t)i, (uint32_t)t1, a), 0);
		CHECK_INT(profile_thread_add(p, (uint32_t)i, (uint32_t)t2, b), 0);
	}
	size_t bytes = p->nsamples * sizeof(*p->samples);
	struct pf_sample *before = malloc(bytes);
	memcpy(before, p->samples, bytes);
	struct agg_options o = { .value = PF_INUSE_SPACE, .gran = GRAN_FUNCTIONS };
	struct agg_options o7 = o, o9 = o, o99 = o;
	o7.one_thread = o9.one_thread = o99.one_thread = true;
	o7.thread_uid = 7;
	o9.thread_uid = 9;
	o99.thread_uid = 99;
	struct aggregate whole, a7, a9, a99, again;
	CHECK_INT(aggregate_build(&whole, p, &o), 0);
	CHECK_INT(aggregate_build(&a7, p, &o7), 0);
	CHECK_INT(aggregate_build(&a9, p, &o9), 0);
	CHECK_INT(aggregate_build(&a99, p, &o99), 0);
	CHECK_INT(aggregate_build(&again, p, &o), 0);
	CHECK(!memcmp(before, p->samples, bytes));
	CHECK(same_rows(&whole, &again));
	CHECK(a7.total > 0 && a9.total > a7.total);
	CHECK(a7.total + a9.total == whole.total);
	CHECK(a99.total == 0 && a99.flat_total == 0);
	CHECK(aggregate_values(&a7, p, 1)[PF_INUSE_SPACE] ==
	      floor(before[1].v[PF_INUSE_SPACE] / 4));
	CHECK(aggregate_values(&a7, p, 3)[PF_INUSE_SPACE] == 0);
	CHECK(aggregate_base(&a7, p, 1)[PF_INUSE_SPACE] == 0);
	CHECK(aggregate_values(&whole, p, 1) == p->samples[1].v);
	/* the reference: the model's values replaced by each thread's */
	const struct aggregate *views[2] = { &a7, &a9 };
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < p->nsamples; i++)
			p->samples[i].v[PF_INUSE_SPACE] = 0;
		for (size_t i = 0; i < p->ntvals; i++)
			if (p->tvals[i].thread == (uint32_t)(k ? t2 : t1))
				p->samples[p->tvals[i].sample].v[PF_INUSE_SPACE] +=
					p->tvals[i].v[PF_INUSE_SPACE];
		struct aggregate ref;
		CHECK_INT(aggregate_build(&ref, p, &o), 0);
		CHECK(same_rows(views[k], &ref));
		aggregate_release(&ref);
	}
	memcpy(p->samples, before, bytes);
	aggregate_release(&whole);
	aggregate_release(&a7);
	aggregate_release(&a9);
	aggregate_release(&a99);
	aggregate_release(&again);
	free(before);
	profile_release(p);
}

int main(void)
{
	RUN(whole_values_exact);
	RUN(user_allocator_exact);
	RUN(fractional_values_same_bits);
	RUN(thread_views_leave_the_model);
	return UNIT_END();
}
