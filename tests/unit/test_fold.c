/* profile_fold_by_symbol() against a plain re-computation: every sample's
 * stack mapped to the first location with the same frames, samples with
 * equal stacks summed into the first of them (in sample order), thread
 * values summed per (sample, thread) (as equal per-thread pairs are summed
 * into one, the sums are compared).  Random profiles where few stacks
 * change (the fold compares those with every sample) and where many do
 * (it indexes them), with and without the sample index made beforehand
 * (a split parse leaves it partly unmade). */
#include "analyzer/profile.h"
#include "tests/unit/unit.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* frames of location L: NF distinct "frame sets", one or two lines */
static int frame_of(const struct profile *p, uint32_t l)
{
	const struct pf_location *x = &p->locs[l];
	if (!x->nlines)
		return -1 - (int)l;     /* unknown: never folds */
	const struct pf_line *a = &p->lines[x->line0];
	return (int)(a->function * 100 + a->line * 10 + x->nlines);
}

/* The reference: sample ids in the order their canonical stacks first
 * appear, each with its summed values. */
struct ref {
	size_t n;
	uint32_t *stack[4096];
	uint32_t depth[4096];
	double v[4096][PF_NVALUES], base[4096][PF_NVALUES];
	uint32_t remap[4096];
};

static void reference(const struct profile *p, struct ref *r)
{
	uint32_t canon[4096];
	for (uint32_t l = 0; l < p->nlocs; l++) {
		canon[l] = l;
		for (uint32_t m = 0; m < l; m++)
			if (frame_of(p, m) == frame_of(p, l) && canon[m] == m) {
				canon[l] = m;
				break;
			}
	}
	r->n = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pf_sample *s = &p->samples[i];
		uint32_t st[64];
		for (uint32_t j = 0; j < s->depth; j++)
			st[j] = canon[p->stacks[s->stack0 + j]];
		size_t k;
		for (k = 0; k < r->n; k++)
			if (r->depth[k] == s->depth && !memcmp(r->stack[k], st, s->depth * sizeof(*st)))
				break;
		if (k == r->n) {
			r->stack[k] = malloc((s->depth + 1) * sizeof(*st));
			memcpy(r->stack[k], st, s->depth * sizeof(*st));
			r->depth[k] = s->depth;
			memset(r->v[k], 0, sizeof(r->v[k]));
			memset(r->base[k], 0, sizeof(r->base[k]));
			r->n++;
		}
		for (int j = 0; j < PF_NVALUES; j++) {
			r->v[k][j] += s->v[j];
			r->base[k][j] += s->base[j];
		}
		r->remap[i] = (uint32_t)k;
	}
}

/* A profile of NLOCS locations over NFRAMES frame sets (fewer frame sets:
 * more folding), NSAMPLES stacks, thread values on some; CHANGE of 1000
 * locations get frames at all (the others are unknown and never fold). */
static void make(struct profile *p, int nlocs, int nframes, int nsamples, int change)
{
	profile_init(p);
	for (int l = 0; l < nlocs; l++) {
		int64_t id = profile_location(p, 0x1000 + 16 * (uint64_t)l, false, UINT32_MAX);
		if ((int)(next() % 1000) >= change)
			continue;
		int f = (int)(next() % (uint64_t)nframes);
		p->locs[id].line0 = (uint32_t)p->nlines;
		p->locs[id].nlines = 1 + (uint32_t)(f & 1);
		for (uint32_t k = 0; k < p->locs[id].nlines; k++) {
			struct pf_line ln = { .function = (uint32_t)(f / 2 + 1), .file = 1,
					      .line = (int32_t)(f % 7 + k), .inlined = k == 0 && f & 1 };
			profile_add_line(p, &ln);
		}
	}
	int64_t t1 = profile_thread(p, 1), t2 = profile_thread(p, 2);
	for (int i = 0; i < nsamples; i++) {
		uint32_t st[64];
		size_t d = 1 + next() % 6;
		for (size_t j = 0; j < d; j++)
			st[j] = (uint32_t)(next() % (uint64_t)nlocs);
		int64_t id = profile_sample(p, st, d);
		double v[PF_NVALUES];
		for (int j = 0; j < PF_NVALUES; j++) {
			v[j] = (double)(next() % 1000);
			p->samples[id].v[j] += v[j];
			p->samples[id].base[j] += (double)(j);
		}
		profile_thread_add(p, (uint32_t)id, (uint32_t)(i & 1 ? t1 : t2), v);
	}
}

static void check_fold(int nlocs, int nframes, int nsamples, int change, bool drop_index)
{
	struct profile p;
	make(&p, nlocs, nframes, nsamples, change);
	static struct ref r;
	reference(&p, &r);
	/* thread totals per (new sample, thread) */
	static double tv[4096][3][PF_NVALUES];
	memset(tv, 0, sizeof(tv));
	for (size_t i = 0; i < p.ntvals; i++)
		for (int j = 0; j < PF_NVALUES; j++)
			tv[r.remap[p.tvals[i].sample]][p.tvals[i].thread][j] += p.tvals[i].v[j];
	if (drop_index) {
		/* as a split parse leaves it: only part of the samples indexed */
		idmap_release(&p.sample_index);
		idmap_init(&p.sample_index);
	}
	size_t nold = p.nsamples;
	uint32_t *remap = NULL;
	CHECK_INT(profile_fold_by_symbol(&p, false, &remap), 0);
	CHECK_INT(p.nsamples, r.n);
	for (size_t k = 0; k < r.n && k < p.nsamples && !unit_cur_failed; k++) {
		const struct pf_sample *s = &p.samples[k];
		CHECK_INT(s->depth, r.depth[k]);
		CHECK(!memcmp(p.stacks + s->stack0, r.stack[k], r.depth[k] * sizeof(uint32_t)));
		for (int j = 0; j < PF_NVALUES; j++) {
			CHECK(s->v[j] == r.v[k][j]);
			CHECK(s->base[j] == r.base[k][j]);
		}
	}
	if (remap)
		for (size_t i = 0; i < nold && !unit_cur_failed; i++)
			CHECK_INT(remap[i], r.remap[i]);
	/* the thread values: the same sums per (sample, thread) */
	static double got[4096][3][PF_NVALUES];
	memset(got, 0, sizeof(got));
	for (size_t i = 0; i < p.ntvals; i++)
		for (int j = 0; j < PF_NVALUES; j++)
			got[p.tvals[i].sample][p.tvals[i].thread][j] += p.tvals[i].v[j];
	CHECK(!memcmp(got, tv, sizeof(got)));
	/* the sample index works again after the fold */
	for (size_t k = 0; k < p.nsamples && !unit_cur_failed; k++) {
		const struct pf_sample *s = &p.samples[k];
		uint32_t st[64];
		memcpy(st, p.stacks + s->stack0, s->depth * sizeof(*st));
		CHECK_INT(profile_sample(&p, st, s->depth), (int64_t)k);
	}
	for (size_t k = 0; k < r.n; k++)
		free(r.stack[k]);
	free(remap);
	profile_release(&p);
}

TEST(few_changed_stacks)
{
	/* one in a hundred locations has frames: few stacks change */
	for (int round = 0; round < 40 && !unit_cur_failed; round++)
		check_fold(400, 4, 2000, 10, round & 1);
}

TEST(many_changed_stacks)
{
	for (int round = 0; round < 40 && !unit_cur_failed; round++)
		check_fold(200, 6 + round % 20, 1500, 700 + round * 5, round & 1);
}

TEST(nothing_folds)
{
	/* every location its own frames: no sample changes */
	check_fold(50, 1000000, 300, 1000, false);
}

int main(void)
{
	RUN(few_changed_stacks);
	RUN(many_changed_stacks);
	RUN(nothing_folds);
	return UNIT_END();
}
