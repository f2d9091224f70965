/* Adding one profile into another: by address, or by symbol one profile
 * at a time (see merge.h). */
#include "analyzer/merge.h"
#include "lib/array.h"
#include "lib/bigarray.h"
#include "lib/errors.h"
#include "lib/hash.h"

/* S's values into D with SIGN; a subtracted (--base) sample's values
 * become D's base share, positive (pf_sample.base). */
static void add_values(struct pf_sample *d, const struct pf_sample *s, double sign)
{
	for (int j = 0; j < PF_NVALUES; j++) {
		d->v[j] += sign * s->v[j];
		d->base[j] += sign < 0 ? -sign * s->v[j] : sign * s->base[j];
	}
}

static uint32_t copy_str(struct profile *dst, const struct profile *src, uint32_t id, int *rc)
{
	if (!id)
		return 0;
	int64_t r = strtab_intern(&dst->strs, strtab_get(&src->strs, id));
	if (r < 0) {
		*rc = (int)r;
		return 0;
	}
	return (uint32_t)r;
}

/* Lines of SRC's location L, with their functions, for DST's location ID. */
static int copy_lines(struct profile *dst, const struct profile *src, const struct pf_location *l,
		      uint32_t id)
{
	int rc = 0;
	uint32_t first = (uint32_t)dst->nlines;
	for (uint32_t k = 0; k < l->nlines; k++) {
		struct pf_line ln = src->lines[l->line0 + k];
		const struct pf_function *f = &src->funcs[ln.function];
		uint32_t name = copy_str(dst, src, f->name, &rc);
		uint32_t sys = copy_str(dst, src, f->system_name, &rc);
		uint32_t file = copy_str(dst, src, f->filename, &rc);
		ln.file = copy_str(dst, src, ln.file, &rc);
		int64_t fn = rc ? -1 : profile_function(dst, name, sys, file, f->start_line);
		if (fn < 0)
			return JH_ENOMEM;
		ln.function = (uint32_t)fn;
		if (profile_add_line(dst, &ln) < 0)
			return JH_ENOMEM;
	}
	struct pf_location *d = &dst->locs[id];
	d->line0 = first;
	d->nlines = l->nlines;
	d->sym = l->sym;
	return 0;
}

/* The id in DST of SRC's label set ID (its strings copied), or a
 * negative JH_ code. */
static int64_t copy_labels(struct profile *dst, const struct profile *src, uint32_t id)
{
	size_t n = 0;
	const struct pf_label *a = labeltab_get(&src->labels, id, &n);
	if (!n)
		return 0;
	struct pf_label *pairs = malloc(n * sizeof(*pairs));
	if (!pairs)
		return JH_ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		pairs[i].key = copy_str(dst, src, a[i].key, &rc);
		pairs[i].value = copy_str(dst, src, a[i].value, &rc);
	}
	int64_t r = rc ? rc : labeltab_intern(&dst->labels, pairs, n);
	free(pairs);
	return r;
}

/* SRC's label sets as DST's, each found once. */
struct labelmap {
	int64_t *ids;            /* per SRC set: DST's + 1, 0 not yet */
	size_t n;
};

static int64_t labelmap_get(struct labelmap *lm, struct profile *dst, const struct profile *src,
			    uint32_t id)
{
	if (!id)
		return 0;
	if (!lm->ids) {
		lm->n = src->labels.nsets;
		if (!(lm->ids = calloc(lm->n + 1, sizeof(*lm->ids))))
			return JH_ENOMEM;
	}
	if (id >= lm->n)
		return 0;
	if (!lm->ids[id]) {
		int64_t r = copy_labels(dst, src, id);
		if (r < 0)
			return r;
		lm->ids[id] = r + 1;
	}
	return lm->ids[id] - 1;
}

int profile_merge(struct profile *dst, const struct profile *src, double sign,
		  char *err, size_t errlen)
{
	int rc = 0;
	struct labelmap lm = { 0 };
	uint32_t *mapid = calloc(src->nmaps + 1, sizeof(*mapid));
	uint32_t *locid = calloc(src->nlocs + 1, sizeof(*locid));
	uint32_t *thrid = calloc(src->nthreads + 1, sizeof(*thrid));
	uint32_t *stack = NULL;
	size_t cap_stack = 0;
	if (!mapid || !locid || !thrid)
		goto oom;
	for (size_t i = 0; i < src->nmaps; i++) {
		struct pf_mapping m = src->maps[i];
		m.path = copy_str(dst, src, m.path, &rc);
		m.object = copy_str(dst, src, m.object, &rc);
		m.build_id = copy_str(dst, src, m.build_id, &rc);
		int64_t id = profile_mapping(dst, &m);
		if (id < 0 || rc)
			goto oom;
		mapid[i] = (uint32_t)id;
		if (src->main_mapping == i && dst->main_mapping == UINT32_MAX)
			dst->main_mapping = (uint32_t)id;
		if (m.is_main)
			dst->maps[id].is_main = true;
	}
	for (size_t i = 0; i < src->nlocs; i++) {
		const struct pf_location *l = &src->locs[i];
		uint32_t m = l->mapping == UINT32_MAX ? UINT32_MAX : mapid[l->mapping];
		int64_t id = profile_location(dst, l->addr, l->leaf, m);
		if (id < 0)
			goto oom;
		locid[i] = (uint32_t)id;
		/* a location that came symbolized (a pprof input) keeps its lines */
		if (l->nlines && dst->locs[id].sym == PF_SYM_NOTYET && !dst->locs[id].nlines &&
		    copy_lines(dst, src, l, (uint32_t)id))
			goto oom;
	}
	for (size_t i = 0; i < src->nthreads; i++) {
		int64_t id = profile_thread(dst, src->threads[i].uid);
		if (id < 0)
			goto oom;
		thrid[i] = (uint32_t)id;
		if (!dst->threads[id].name)
			dst->threads[id].name = copy_str(dst, src, src->threads[i].name, &rc);
		for (int j = 0; j < PF_NVALUES; j++)
			dst->threads[id].v[j] += sign * src->threads[i].v[j];
	}
	uint32_t *sid = calloc(src->nsamples + 1, sizeof(*sid));
	if (!sid)
		goto oom;
	for (size_t i = 0; i < src->nsamples; i++) {
		const struct pf_sample *s = &src->samples[i];
		if (jh_grow(&stack, &cap_stack, s->depth + 1, sizeof(*stack))) {
			free(sid);
			goto oom;
		}
		for (uint32_t j = 0; j < s->depth; j++)
			stack[j] = locid[src->stacks[s->stack0 + j]];
		int64_t lab = labelmap_get(&lm, dst, src, s->labels);
		int64_t id = lab < 0 ? lab : profile_sample_labeled(dst, stack, s->depth, (uint32_t)lab);
		if (id < 0) {
			free(sid);
			goto oom;
		}
		sid[i] = (uint32_t)id;
		add_values(&dst->samples[id], s, sign);
	}
	for (size_t i = 0; i < src->ntvals; i++) {
		const struct pf_thread_value *tv = &src->tvals[i];
		double v[PF_NVALUES];
		for (int j = 0; j < PF_NVALUES; j++)
			v[j] = sign * tv->v[j];
		if (profile_thread_add(dst, sid[tv->sample], thrid[tv->thread], v)) {
			free(sid);
			goto oom;
		}
	}
	free(sid);
	for (size_t i = 0; i < src->npresyms; i++) {
		uint32_t names = copy_str(dst, src, src->presyms[i].names, &rc);
		if (rc || profile_presym(dst, src->presyms[i].addr, names))
			goto oom;
	}
	if (!dst->presym_binary)
		dst->presym_binary = copy_str(dst, src, src->presym_binary, &rc);
	if (dst->format == PF_FMT_NONE) {
		dst->format = src->format;
		dst->period = src->period;
	}
	dst->has_alloc |= src->has_alloc;
	dst->has_maps |= src->has_maps;
	for (int j = 0; j < PF_NVALUES; j++)
		dst->header_total[j] += sign * src->header_total[j];
	free(mapid);
	free(locid);
	free(thrid);
	free(stack);
	free(lm.ids);
	return rc;
oom:
	free(mapid);
	free(locid);
	free(thrid);
	free(stack);
	free(lm.ids);
	return jh_err(err, errlen, JH_ENOMEM, "out of memory while merging profiles");
}


/* --- by symbol, one profile at a time --- */

/* A code place in the total's terms: the file (its path's string id in
 * the total, shifted, with the leaf flag) and the offset there. */
struct place {
	uint32_t space;
	uint64_t off;
	uint32_t loc;            /* the total's location it led to */
};

struct symmerge {
	struct profile *dst;
	bool by_address;
	bool started;            /* a profile was added: dst's header is set */
	struct place *places;    /* the code places seen, and where they led */
	size_t nplaces, cap_places;
	struct idmap place_index;
	struct idmap loc_index;  /* dst's locations with lines, by their frames */
	struct place *locplace;  /* per dst location: its code place */
	size_t cap_locplace;
	struct idmap tv_index;   /* (dst sample, dst thread) -> dst->tvals */
	/* the profile being added */
	const struct profile *cur;
	uint32_t *mapid;         /* its mapping -> dst's */
	uint32_t *space;         /* its mapping -> the space of its places */
	uint32_t *locid;         /* its location -> dst's, UINT32_MAX not yet */
	size_t nlocid;
	struct pf_line *tmp;     /* one location's lines in dst's terms */
	size_t cap_tmp;
	uint32_t *stack;
	size_t cap_stack;
};

struct symmerge *symmerge_new(struct profile *dst, bool by_address)
{
	struct symmerge *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->dst = dst;
	m->by_address = by_address;
	idmap_init(&m->place_index);
	idmap_init(&m->loc_index);
	idmap_init(&m->tv_index);
	return m;
}

static void forget_cur(struct symmerge *m)
{
	free(m->mapid);
	free(m->space);
	free(m->locid);
	m->mapid = m->space = m->locid = NULL;
	m->nlocid = 0;
	m->cur = NULL;
}

/* The same mapping in another layout: the same file, offset and size. */
static bool same_mapping(const struct pf_mapping *a, const struct pf_mapping *b)
{
	return a->path == b->path && a->offset == b->offset && a->kind == b->kind &&
	       a->limit - a->start == b->limit - b->start;
}

void symmerge_finish(struct symmerge *m)
{
	struct profile *dst = m->dst;
	for (size_t i = 0; i < dst->nmaps; i++) {
		struct pf_mapping *a = &dst->maps[i];
		if (a->object)
			continue;
		for (size_t j = 0; j < dst->nmaps; j++) {
			const struct pf_mapping *b = &dst->maps[j];
			if (j == i || !b->object || !same_mapping(a, b))
				continue;
			a->object = b->object;
			a->build_id = b->build_id;
			a->has_functions = b->has_functions;
			a->has_filenames = b->has_filenames;
			a->has_line_numbers = b->has_line_numbers;
			a->has_inline_frames = b->has_inline_frames;
			break;
		}
	}
}

void symmerge_free(struct symmerge *m)
{
	if (!m)
		return;
	forget_cur(m);
	free(m->places);
	free(m->locplace);
	free(m->tmp);
	free(m->stack);
	idmap_release(&m->place_index);
	idmap_release(&m->loc_index);
	idmap_release(&m->tv_index);
	free(m);
}

/* Mappings of SRC in dst's terms, once per profile. */
static int start_cur(struct symmerge *m, const struct profile *src)
{
	if (m->cur == src) {
		/* the symbolizer may have added locations (signal frames) */
		if (src->nlocs > m->nlocid) {
			uint32_t *l = realloc(m->locid, (src->nlocs + 1) * sizeof(*l));
			if (!l)
				return JH_ENOMEM;
			memset(l + m->nlocid, 0xff, (src->nlocs + 1 - m->nlocid) * sizeof(*l));
			m->locid = l;
			m->nlocid = src->nlocs;
		}
		return 0;
	}
	forget_cur(m);
	struct profile *dst = m->dst;
	m->mapid = malloc((src->nmaps + 1) * sizeof(*m->mapid));
	m->space = malloc((src->nmaps + 1) * sizeof(*m->space));
	m->locid = malloc((src->nlocs + 1) * sizeof(*m->locid));
	if (!m->mapid || !m->space || !m->locid)
		return JH_ENOMEM;
	memset(m->locid, 0xff, (src->nlocs + 1) * sizeof(*m->locid));
	m->nlocid = src->nlocs;
	int rc = 0;
	for (size_t i = 0; i < src->nmaps; i++) {
		struct pf_mapping mp = src->maps[i];
		mp.path = copy_str(dst, src, mp.path, &rc);
		mp.object = copy_str(dst, src, mp.object, &rc);
		mp.build_id = copy_str(dst, src, mp.build_id, &rc);
		int64_t id = rc ? rc : profile_mapping(dst, &mp);
		if (id < 0)
			return JH_ENOMEM;
		m->mapid[i] = (uint32_t)id;
		if (mp.is_main)
			dst->maps[id].is_main = true;
		m->space[i] = mp.kind == PF_MAP_FILE && mp.path < UINT32_MAX / 2 ? mp.path << 1
			: UINT32_MAX;
	}
	m->cur = src;
	return 0;
}

/* The code place of SRC's location L in dst's terms; false when it is
 * no file's (anonymous memory: another process has other code there) or
 * the profile names its own addresses (a symbolized profile). */
static bool place_of(const struct symmerge *m, const struct profile *src,
		     const struct pf_location *l, struct place *pl)
{
	if (src->npresyms || l->mapping >= src->nmaps || m->space[l->mapping] == UINT32_MAX)
		return false;
	const struct pf_mapping *mp = &src->maps[l->mapping];
	pl->space = m->space[l->mapping] | l->leaf;
	pl->off = l->addr - mp->start + mp->offset;
	return true;
}

static uint64_t place_hash(const struct place *pl)
{
	return jh_mix64((uint64_t)pl->space * 0x9e3779b97f4a7c15ULL ^ pl->off);
}

struct place_key { const struct symmerge *m; const struct place *pl; };

static int place_eq(const void *ctx, uint32_t id)
{
	const struct place_key *k = ctx;
	const struct place *a = &k->m->places[id];
	return a->space == k->pl->space && a->off == k->pl->off;
}

static uint32_t find_place(const struct symmerge *m, const struct place *pl)
{
	struct place_key k = { m, pl };
	uint32_t id = idmap_find(&m->place_index, place_hash(pl), place_eq, &k);
	return id == UINT32_MAX ? UINT32_MAX : m->places[id].loc;
}

static int add_place(struct symmerge *m, const struct place *pl, uint32_t loc)
{
	struct place p = *pl;
	p.loc = loc;
	if (m->nplaces >= UINT32_MAX - 1 || JH_PUSH(m->places, m->nplaces, m->cap_places, p) ||
	    idmap_put(&m->place_index, place_hash(pl), (uint32_t)(m->nplaces - 1)))
		return JH_ENOMEM;
	return 0;
}

int64_t symmerge_known(struct symmerge *m, struct profile *src)
{
	if (start_cur(m, src))
		return JH_ENOMEM;
	int64_t left = 0;
	for (size_t i = 0; i < src->nlocs; i++) {
		struct pf_location *l = &src->locs[i];
		if (l->sym != PF_SYM_NOTYET)
			continue;
		struct place pl;
		uint32_t loc = place_of(m, src, l, &pl) ? find_place(m, &pl) : UINT32_MAX;
		if (loc == UINT32_MAX) {
			left++;
			continue;
		}
		m->locid[i] = loc;
		l->sym = PF_SYM_ELSEWHERE;
	}
	return left;
}

/* A dst location's frames: hash and equality over dst's ids (the lines
 * in m->tmp while one is looked up), with its place under by_address. */
static uint64_t frames_hash(const struct pf_line *ln, uint32_t n, const struct place *pl)
{
	uint64_t h = n;
	if (pl)
		h = jh_mix64(h ^ pl->space) ^ jh_mix64(pl->off);
	for (uint32_t i = 0; i < n; i++)
		h = jh_mix64(h ^ ((uint64_t)ln[i].function << 32 | ln[i].file)) ^
		    ((uint64_t)(uint32_t)ln[i].line << 1 | ln[i].inlined);
	return h;
}

struct frames_key {
	const struct symmerge *m;
	const struct pf_line *ln;
	uint32_t n;
	const struct place *pl;
};

static int frames_eq(const void *ctx, uint32_t id)
{
	const struct frames_key *k = ctx;
	const struct profile *dst = k->m->dst;
	const struct pf_location *l = &dst->locs[id];
	if (l->nlines != k->n)
		return 0;
	if (k->pl && (k->m->locplace[id].space != k->pl->space || k->m->locplace[id].off != k->pl->off))
		return 0;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct pf_line *x = &dst->lines[l->line0 + i], *y = &k->ln[i];
		if (x->function != y->function || x->file != y->file || x->line != y->line ||
		    x->column != y->column || x->inlined != y->inlined)
			return 0;
	}
	return 1;
}

/* The dst location of SRC's location I, added when new. */
static int64_t dst_location(struct symmerge *m, const struct profile *src, uint32_t i)
{
	struct profile *dst = m->dst;
	const struct pf_location *l = &src->locs[i];
	struct place pl = { 0, 0, 0 };
	bool has_place = place_of(m, src, l, &pl);
	uint32_t dmap = l->mapping < src->nmaps ? m->mapid[l->mapping] : UINT32_MAX;
	int64_t id;
	if (!l->nlines) {
		/* no frames: one location per address, as a merge by
		 * address keeps them */
		id = profile_location(dst, l->addr, l->leaf, dmap);
		if (id < 0)
			return id;
		if ((size_t)id == dst->nlocs - 1 && !dst->locs[id].nlines)
			dst->locs[id].sym = l->sym;
	} else {
		if (jh_grow(&m->tmp, &m->cap_tmp, l->nlines, sizeof(*m->tmp)))
			return JH_ENOMEM;
		int rc = 0;
		for (uint32_t k = 0; k < l->nlines; k++) {
			struct pf_line ln = src->lines[l->line0 + k];
			const struct pf_function *f = &src->funcs[ln.function];
			uint32_t name = copy_str(dst, src, f->name, &rc);
			uint32_t sys = copy_str(dst, src, f->system_name, &rc);
			uint32_t file = copy_str(dst, src, f->filename, &rc);
			ln.file = copy_str(dst, src, ln.file, &rc);
			int64_t fn = rc ? -1 : profile_function(dst, name, sys, file, f->start_line);
			if (fn < 0)
				return JH_ENOMEM;
			ln.function = (uint32_t)fn;
			m->tmp[k] = ln;
		}
		const struct place *kp = m->by_address ? &pl : NULL;
		if (kp && !has_place) {
			pl.space = UINT32_MAX - 1 + l->leaf;
			pl.off = l->addr;
		}
		uint64_t h = frames_hash(m->tmp, l->nlines, kp);
		struct frames_key fk = { m, m->tmp, l->nlines, kp };
		uint32_t found = idmap_find(&m->loc_index, h, frames_eq, &fk);
		if (found != UINT32_MAX) {
			id = found;
		} else {
			id = profile_location_append(dst, l->addr, l->leaf, dmap);
			if (id < 0)
				return id;
			struct pf_location *d = &dst->locs[id];
			d->line0 = (uint32_t)dst->nlines;
			d->nlines = l->nlines;
			d->sym = l->sym;
			d->vaddr = l->vaddr;
			d->func_lo = l->func_lo;
			d->func_hi = l->func_hi;
			for (uint32_t k = 0; k < l->nlines; k++)
				if (profile_add_line(dst, &m->tmp[k]) < 0)
					return JH_ENOMEM;
			if (jh_grow(&m->locplace, &m->cap_locplace, dst->nlocs, sizeof(*m->locplace)))
				return JH_ENOMEM;
			m->locplace[id] = pl;
			if (idmap_put(&m->loc_index, h, (uint32_t)id))
				return JH_ENOMEM;
		}
	}
	/* a location that came with its frames (a pprof input's) is not
	 * looked up by its place first: its place may be known already */
	if (has_place && find_place(m, &pl) == UINT32_MAX && add_place(m, &pl, (uint32_t)id))
		return JH_ENOMEM;
	return id;
}

struct tvm_key { const struct profile *p; uint32_t sample, thread; };

static int tvm_eq(const void *ctx, uint32_t id)
{
	const struct tvm_key *k = ctx;
	return k->p->tvals[id].sample == k->sample && k->p->tvals[id].thread == k->thread;
}

/* Adds V to thread THREAD's share of SAMPLE in dst, one entry each. */
static int add_tval(struct symmerge *m, uint32_t sample, uint32_t thread, const double *v)
{
	struct profile *dst = m->dst;
	struct tvm_key k = { dst, sample, thread };
	uint64_t h = jh_mix64((uint64_t)sample << 32 | thread);
	uint32_t id = idmap_find(&m->tv_index, h, tvm_eq, &k);
	if (id == UINT32_MAX) {
		struct pf_thread_value tv = { .sample = sample, .thread = thread };
		if (dst->ntvals >= UINT32_MAX - 1 ||
		    JH_BIG_PUSH(dst->tvals, dst->ntvals, dst->cap_tvals, tv) ||
		    idmap_put(&m->tv_index, h, (uint32_t)(dst->ntvals - 1)))
			return JH_ENOMEM;
		id = (uint32_t)(dst->ntvals - 1);
	}
	for (int j = 0; j < PF_NVALUES; j++)
		dst->tvals[id].v[j] += v[j];
	return 0;
}

int symmerge_add(struct symmerge *m, const struct profile *src, double sign)
{
	struct profile *dst = m->dst;
	int rc = start_cur(m, src);
	struct labelmap lm = { 0 };
	uint32_t *thrid = calloc(src->nthreads + 1, sizeof(*thrid));
	uint32_t *sid = calloc(src->nsamples + 1, sizeof(*sid));
	if (rc || !thrid || !sid)
		goto oom;
	for (size_t i = 0; i < src->nlocs; i++) {
		if (m->locid[i] != UINT32_MAX)
			continue;
		int64_t id = dst_location(m, src, (uint32_t)i);
		if (id < 0)
			goto oom;
		m->locid[i] = (uint32_t)id;
	}
	/* what the symbolizer found of each mapping's file */
	for (size_t i = 0; i < src->nmaps; i++) {
		const struct pf_mapping *sm = &src->maps[i];
		struct pf_mapping *dm = &dst->maps[m->mapid[i]];
		if (sm->object && !dm->object)
			dm->object = copy_str(dst, src, sm->object, &rc);
		if (sm->build_id && !dm->build_id)
			dm->build_id = copy_str(dst, src, sm->build_id, &rc);
		dm->has_functions |= sm->has_functions;
		dm->has_filenames |= sm->has_filenames;
		dm->has_line_numbers |= sm->has_line_numbers;
		dm->has_inline_frames |= sm->has_inline_frames;
	}
	for (size_t i = 0; i < src->nthreads; i++) {
		int64_t id = profile_thread(dst, src->threads[i].uid);
		if (id < 0)
			goto oom;
		thrid[i] = (uint32_t)id;
		if (!dst->threads[id].name)
			dst->threads[id].name = copy_str(dst, src, src->threads[i].name, &rc);
		for (int j = 0; j < PF_NVALUES; j++)
			dst->threads[id].v[j] += sign * src->threads[i].v[j];
	}
	for (size_t i = 0; i < src->nsamples; i++) {
		const struct pf_sample *s = &src->samples[i];
		if (jh_grow(&m->stack, &m->cap_stack, s->depth + 1, sizeof(*m->stack)))
			goto oom;
		for (uint32_t j = 0; j < s->depth; j++)
			m->stack[j] = m->locid[src->stacks[s->stack0 + j]];
		int64_t lab = labelmap_get(&lm, dst, src, s->labels);
		int64_t id = lab < 0 ? lab : profile_sample_labeled(dst, m->stack, s->depth, (uint32_t)lab);
		if (id < 0)
			goto oom;
		sid[i] = (uint32_t)id;
		add_values(&dst->samples[id], s, sign);
	}
	for (size_t i = 0; i < src->ntvals; i++) {
		const struct pf_thread_value *tv = &src->tvals[i];
		double v[PF_NVALUES];
		for (int j = 0; j < PF_NVALUES; j++)
			v[j] = sign * tv->v[j];
		if (add_tval(m, sid[tv->sample], thrid[tv->thread], v))
			goto oom;
	}
	if (!m->started) {
		dst->format = src->format;
		dst->period = src->period;
		if (src->main_mapping < src->nmaps)
			dst->main_mapping = m->mapid[src->main_mapping];
		m->started = true;
	}
	if (!dst->presym_binary)
		dst->presym_binary = copy_str(dst, src, src->presym_binary, &rc);
	dst->has_alloc |= src->has_alloc;
	dst->has_maps |= src->has_maps;
	for (int j = 0; j < PF_NVALUES; j++)
		dst->header_total[j] += sign * src->header_total[j];
	free(thrid);
	free(sid);
	free(lm.ids);
	forget_cur(m);
	return rc;
oom:
	free(thrid);
	free(sid);
	free(lm.ids);
	forget_cur(m);
	return JH_ENOMEM;
}
