/*
 * parse_split: a large heap_v2 body parsed in two threads, with the
 * result of one.
 *
 * A body of 4 MiB or more (parse_split_options.min) on a machine with two
 * cores is cut at the first stack line after its middle.  This thread
 * parses the first half into the profile; a second thread parses the
 * second half, from the cut on, into a profile of its own.  Each half's
 * parser reports through a sink of this file (struct parse_sink,
 * analyzer/parser.h): the first half's passes everything on to the
 * caller, its progress counting both halves' bytes; the second half's
 * keeps its error and warnings, and asks it to stop when the first
 * failed.  The second half also keeps "t*" lines after a sample's first
 * apart instead of adding them.  Once both are done, replay()
 * adds the second profile into the first as if one parser had gone on
 * reading: every new location, sample and thread gets the id it would
 * have had, values are summed in the same order (to the last bit), and
 * the second half's messages get their line numbers.  When the first
 * half finds the maps before the cut, it reads on to the end itself and
 * the second half is dropped.
 *
 * It saves about 20 ms of a 96 ms run on the benchmark's second dump and
 * 40 ms of 118 ms on a 200k-stack parse.  tests/unit/test_parse_split.c
 * splits dumps at every record and compares the model with one parse.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/errors.h"
#include "analyzer/parser.h"
#include "lib/threads.h"

/* The second half of a split heap_v2 body: its parser and profile, and
 * what the first half replays from it once both are done. */
struct split {
	const char *end;        /* of the whole buffer */
	const struct parse_sink *caller; /* the first half's own sink */
	struct parse_sink first_sink, second_sink;
	struct parser ps;
	struct profile p;
	int rc;
	/* its error without "NAME:LINE: " and the line relative to the split */
	char msg[512];
	unsigned long err_line;
	/* warnings, likewise, in order */
	struct split_warning { unsigned long line; char *msg; } *warns;
	size_t nwarns, cap_warns;
	bool warn_oom;
	bool truncated;         /* it found the file cut short (note_truncated) */
	/* "t*" lines after the first one of a sample: applied in this order
	 * after the first ones, so that every sum is made in the order the
	 * sequential parser makes it */
	struct split_add { uint32_t sample; double v[PF_NVALUES]; } *adds;
	size_t nadds, cap_adds;
	atomic_size_t done;     /* bytes read, for the first half's progress */
	atomic_bool cancel;     /* the first half failed: stop early */
	/* parse_options.core_idle, called by the half done first */
	void (*core_idle)(void *ctx);
	void *ctx;
	atomic_bool half_done;
};

static void split_half_done(struct split *sp)
{
	if (!atomic_exchange(&sp->half_done, true) && sp->core_idle)
		sp->core_idle(sp->ctx);
}

/* The second half's sink: its messages are kept, with their lines
 * counted from the split, for the first half to pass on once it knows
 * where the split is (parse_v2_split); CTX is the split. */
static void second_error(void *ctx, unsigned long line, const char *msg, char *err,
			 size_t errlen)
{
	struct split *sp = ctx;
	sp->err_line = line;
	jh_err(err, errlen, 0, "%s", msg);
}

static void second_warning(void *ctx, unsigned long line, const char *msg)
{
	struct split *sp = ctx;
	struct split_warning w = { line, strdup(msg) };
	if (!w.msg || JH_PUSH(sp->warns, sp->nwarns, sp->cap_warns, w)) {
		free(w.msg);
		sp->warn_oom = true;
	}
}

static void second_truncated(void *ctx)
{
	struct split *sp = ctx;
	sp->truncated = true;
}

static bool second_progress(void *ctx, size_t done, size_t total)
{
	struct split *sp = ctx;
	atomic_store_explicit(&sp->done, done, memory_order_relaxed);
	return atomic_load_explicit(&sp->cancel, memory_order_relaxed);
}

/* The first half's sink: the caller's, with the progress of both halves
 * out of the whole body; CTX is the split. */
static void first_error(void *ctx, unsigned long line, const char *msg, char *err, size_t errlen)
{
	struct split *sp = ctx;
	sp->caller->error(sp->caller->ctx, line, msg, err, errlen);
}

static void first_warning(void *ctx, unsigned long line, const char *msg)
{
	struct split *sp = ctx;
	sp->caller->warning(sp->caller->ctx, line, msg);
}

static void first_truncated(void *ctx)
{
	struct split *sp = ctx;
	sp->caller->truncated(sp->caller->ctx);
}

static bool first_progress(void *ctx, size_t done, size_t total)
{
	struct split *sp = ctx;
	size_t second = atomic_load_explicit(&sp->done, memory_order_relaxed);
	return sp->caller->progress(sp->caller->ctx, done + second,
				    total + (size_t)(sp->end - sp->ps.buf));
}

void split_drop(struct parser *ps)
{
	struct split *sp = ps->sp;
	ps->end = sp->end;
	ps->sink = sp->caller;
	ps->sp = NULL;
}

/* The first "t*" line of a new sample is its value; any later one is
 * kept apart: replay() adds them after the first half's values, as the
 * sequential parser would. */
int split_add_counts(struct parser *ps, const double v[PF_NVALUES])
{
	struct split *sp = ps->sp;
	if (ps->cur_fresh) {
		memcpy(ps->p->samples[ps->cur].v, v, sizeof(ps->p->samples[ps->cur].v));
		ps->cur_fresh = false;
		return 0;
	}
	struct split_add a = { .sample = (uint32_t)ps->cur };
	memcpy(a.v, v, sizeof(a.v));
	return JH_PUSH(sp->adds, sp->nadds, sp->cap_adds, a);
}

/* Bodies below this many bytes are parsed in one thread. */
#define PARSE_SPLIT_MIN ((size_t)4 << 20)

/* A stack line ('@' right after a newline) at or after the middle. */
const char *split_point(const struct parser *ps)
{
	const char *body = ps->pos, *end = ps->end, *from;
	if (body >= end || ps->symbolized)
		return NULL;
	const struct parse_split_options *so = ps->o ? ps->o->split : NULL;
	if (so && so->at) {
		if (so->at >= (size_t)(end - ps->buf))
			return NULL;
		from = ps->buf + so->at;
		if (from < body)
			from = body;
	} else {
		if (jh_threads() < 2)
			return NULL;
		size_t min = PARSE_SPLIT_MIN;
		const char *env = getenv("JHEAP_PARSE_SPLIT_MIN");
		uint64_t v;
		if (so && so->min)
			min = so->min;
		else if (env && read_u64(&env, env + strlen(env), &v) == 1 && !*env)
			min = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
		if ((size_t)(end - body) < min)
			return NULL;
		from = body + (end - body) / 2;
	}
	/* body[-1] is the header line's newline; a record starts after a
	 * line at most, so the search stops there (a file of zeros after its
	 * header is not read to its end) */
	size_t left = (size_t)(end - (from - 1));
	if (left > (size_t)PARSE_MAX_LINE + 2)
		left = (size_t)PARSE_MAX_LINE + 2;
	const char *q = memmem(from - 1, left, "\n@", 2);
	return q ? q + 1 : NULL;
}

/* The body up to the split, in the caller's thread: when it fails or
 * finds the maps before the split, the second half is cancelled. */
struct first_half {
	struct parser *ps;
	size_t body;            /* bytes of the whole body, reserved for first */
	int rc;
	bool whole;             /* the split stands: the second half is used */
};

static void *first_half(void *arg)
{
	struct first_half *h = arg;
	struct parser *ps = h->ps;
	struct split *sp = ps->sp;
	/* room for both halves: the second is replayed into this profile */
	reserve_body(ps->p, h->body);
	h->rc = v2_body(ps);
	split_half_done(sp);
	/* v2_body() drops the split (split_drop) when the maps begin before
	 * the cut */
	h->whole = ps->sp != NULL;
	if (h->whole)
		split_drop(ps);
	if (h->rc || !h->whole)
		atomic_store(&sp->cancel, true);
	return NULL;
}

/* The body from the split on, in a thread of its own (or after the first
 * half when none can be started). */
static void *second_half(void *arg)
{
	struct split *sp = arg;
	if (atomic_load(&sp->cancel))
		return NULL;
	reserve_body(&sp->p, (size_t)(sp->end - sp->ps.buf));
	sp->rc = v2_body(&sp->ps);
	split_half_done(sp);
	return NULL;
}

static void split_free(struct split *sp)
{
	parser_free(&sp->ps);
	profile_release(&sp->p);
	for (size_t i = 0; i < sp->nwarns; i++)
		free(sp->warns[i].msg);
	free(sp->warns);
	free(sp->adds);
	free(sp);
}

/* Samples [lo, hi) of the second half's profile SRC: their stacks
 * rewritten in DST's location ids (LOCID), their hashes, and the id of
 * each in DST as the first half left it (UINT32_MAX: absent). */
struct replay_part {
	const struct profile *dst;
	struct profile *src;
	const uint32_t *locid;
	uint64_t *hash;
	uint32_t *sid;
	size_t lo, hi;
};

/* Second halves with fewer samples are looked up in one thread. */
#define REPLAY_SPLIT_MIN 8192

static void *replay_find(void *arg)
{
	struct replay_part *r = arg;
	const struct profile *src = r->src;
	/* each sample's stack is its own stretch of src->stacks */
	for (size_t i = r->lo; i < r->hi; i++) {
		const struct pf_sample *s = &src->samples[i];
		uint32_t *st = s->depth ? src->stacks + s->stack0 : NULL;
		for (uint32_t j = 0; j < s->depth; j++)
			st[j] = r->locid[st[j]];
		r->hash[i] = profile_stack_hash(st, s->depth);
	}
	/* the index slots are cache misses: ask for them a few samples ahead */
	enum { AHEAD = 8 };
	for (size_t i = r->lo; i < r->hi && i < r->lo + AHEAD; i++)
		profile_sample_prefetch(r->dst, r->hash[i]);
	for (size_t i = r->lo; i < r->hi; i++) {
		const struct pf_sample *s = &src->samples[i];
		if (i + AHEAD < r->hi)
			profile_sample_prefetch(r->dst, r->hash[i + AHEAD]);
		r->sid[i] = profile_sample_find(r->dst, s->depth ? src->stacks + s->stack0 : NULL,
						s->depth, r->hash[i]);
	}
	return NULL;
}

/* Adds the second half's profile SRC into DST as if the sequential parser
 * had gone on reading: every new location, sample and thread gets the id
 * it would have had (first appearance order), and values are summed in the
 * same order.  SRC's stacks are rewritten in DST's location ids.  FORCED
 * (a split the caller asked for, in tests): its samples are looked up in
 * two threads whatever their number. */
static int replay(struct profile *dst, struct split *sp, bool forced)
{
	struct profile *src = &sp->p;
	int rc = JH_ENOMEM;
	uint32_t *locid = malloc((src->nlocs + 1) * sizeof(*locid));
	uint32_t *thrid = malloc((src->nthreads + 1) * sizeof(*thrid));
	uint32_t *sid = malloc((src->nsamples + 1) * sizeof(*sid));
	uint64_t *hash = malloc((src->nsamples + 1) * sizeof(*hash));
	if (!locid || !thrid || !sid || !hash ||
	    profile_reserve(dst, src->nlocs, src->nsamples, src->nstacks, src->ntvals))
		goto out;
	/* SRC's locations are distinct, and so are its samples, and the
	 * location ids map one to one: none can match another one appended
	 * here.  So every lookup is made in DST as the first half left it,
	 * before any append, and the appends skip DST's indexes (which catch
	 * up if anything looks them up later). */
	for (size_t i = 0; i < src->nlocs; i++)
		locid[i] = profile_location_find(dst, src->locs[i].addr, src->locs[i].leaf,
						 UINT32_MAX);
	for (size_t i = 0; i < src->nlocs; i++) {
		if (locid[i] != UINT32_MAX)
			continue;
		int64_t id = profile_location_append(dst, src->locs[i].addr, src->locs[i].leaf,
						     UINT32_MAX);
		if (id < 0)
			goto out;
		locid[i] = (uint32_t)id;
	}
	for (size_t i = 0; i < src->nthreads; i++) {
		int64_t id = profile_thread(dst, src->threads[i].uid);
		if (id < 0)
			goto out;
		thrid[i] = (uint32_t)id;
	}
	/* the second half's samples in DST's terms, and which DST has, in
	 * two threads for a large half (only DST's index is read) */
	struct replay_part parts[2] = {
		{ dst, src, locid, hash, sid, 0, src->nsamples / 2 },
		{ dst, src, locid, hash, sid, src->nsamples / 2, src->nsamples },
	};
	jh_run_two(replay_find, &parts[0], replay_find, &parts[1],
		   forced ? src->nsamples >= 2
			  : src->nsamples >= REPLAY_SPLIT_MIN && jh_threads() > 1);
	for (size_t i = 0; i < src->nsamples; i++) {
		const struct pf_sample *s = &src->samples[i];
		if (sid[i] == UINT32_MAX) {
			int64_t id = profile_sample_append(dst, s->depth ? src->stacks + s->stack0 : NULL,
							   s->depth);
			if (id < 0)
				goto out;
			sid[i] = (uint32_t)id;
		}
		for (int j = 0; j < PF_NVALUES; j++)
			dst->samples[sid[i]].v[j] += s->v[j];
	}
	for (size_t i = 0; i < sp->nadds; i++)
		for (int j = 0; j < PF_NVALUES; j++)
			dst->samples[sid[sp->adds[i].sample]].v[j] += sp->adds[i].v[j];
	for (size_t i = 0; i < src->ntvals; i++) {
		const struct pf_thread_value *tv = &src->tvals[i];
		if (profile_thread_add(dst, sid[tv->sample], thrid[tv->thread], tv->v))
			goto out;
	}
	for (size_t i = 0; i < src->nmaps; i++) {
		struct pf_mapping m = src->maps[i];
		int64_t id = strtab_intern_n(&dst->strs, src->strs.ents[m.path].s,
					     src->strs.ents[m.path].n);
		if (id < 0)
			goto out;
		m.path = (uint32_t)id;
		if (profile_mapping(dst, &m) < 0)
			goto out;
	}
	dst->has_alloc |= src->has_alloc;
	dst->has_maps |= src->has_maps;
	rc = 0;
out:
	free(locid);
	free(thrid);
	free(sid);
	free(hash);
	return rc;
}

/* This thread reads up to CUT, a second one from CUT on into a profile of
 * its own, which is then replayed into ours. */
int parse_v2_split(struct parser *ps, const char *cut)
{
	size_t body = (size_t)(ps->end - ps->pos);
	struct split *sp = calloc(1, sizeof(*sp));
	if (!sp || profile_init(&sp->p)) {
		if (sp)
			profile_release(&sp->p);
		free(sp);
		reserve_body(ps->p, body);
		return v2_body(ps);
	}
	sp->end = ps->end;
	sp->caller = ps->sink;
	sp->first_sink = (struct parse_sink){
		.error = first_error, .warning = ps->sink->warning ? first_warning : NULL,
		.truncated = first_truncated, .progress = ps->sink->progress ? first_progress : NULL,
		.ctx = sp,
	};
	sp->second_sink = (struct parse_sink){
		.error = second_error, .warning = second_warning, .truncated = second_truncated,
		.progress = second_progress, .ctx = sp,
	};
	sp->ps = (struct parser){
		.p = &sp->p, .name = ps->name, .buf = cut, .end = ps->end, .pos = cut,
		.err = sp->msg, .errlen = sizeof(sp->msg), .uk = ps->uk, .rate = ps->rate,
		.cur = -1, .sp = sp, .second = true, .sink = &sp->second_sink,
	};
	atomic_init(&sp->done, 0);
	atomic_init(&sp->cancel, false);
	atomic_init(&sp->half_done, false);
	if (ps->o) {
		sp->core_idle = ps->o->core_idle;
		sp->ctx = ps->o->ctx;
	}
	ps->end = cut;
	ps->sp = sp;
	ps->sink = &sp->first_sink;
	struct first_half first = { .ps = ps, .body = body };
	jh_run_two(first_half, &first, second_half, sp, true);
	int rc = first.rc;
	bool whole = first.whole;
	if (!rc && whole) {
		unsigned long base = ps->lineno;
		ps->lineno = base + sp->ps.lineno;
		bool forced = ps->o && ps->o->split && ps->o->split->at;
		if (replay(ps->p, sp, forced) || sp->warn_oom) {
			rc = perr(ps, JH_ENOMEM, "out of memory");
		} else {
			/* the second half's messages, with their lines in the file */
			for (size_t i = 0; i < sp->nwarns && ps->sink->warning; i++)
				ps->sink->warning(ps->sink->ctx, base + sp->warns[i].line, sp->warns[i].msg);
			if (sp->truncated)
				ps->sink->truncated(ps->sink->ctx);
			if (sp->rc) {
				ps->sink->error(ps->sink->ctx, base + sp->err_line, sp->msg, ps->err,
						ps->errlen);
				rc = sp->rc;
			}
		}
	}
	if (ps->o && ps->o->split && ps->o->split->done)
		*ps->o->split->done = whole;
	split_free(sp);
	return rc;
}
