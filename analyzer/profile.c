#include <math.h>
#include "analyzer/profile.h"
#include "lib/array.h"
#include "lib/bigarray.h"
#include "lib/errors.h"
#include "lib/hash.h"

int profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	idmap_init(&p->loc_index);
	idmap_init(&p->sample_index);
	idmap_init(&p->func_index);
	idmap_init(&p->map_index);
	idmap_init(&p->thread_index);
	idmap_init(&p->presym_index);
	p->main_mapping = UINT32_MAX;
	p->period = 1;
	if (labeltab_init(&p->labels))
		return JH_ENOMEM;
	return strtab_init(&p->strs);
}

void profile_release(struct profile *p)
{
	strtab_release(&p->strs);
	free(p->maps);
	free(p->locs);
	free(p->lines);
	free(p->funcs);
	jh_big_free(p->samples);
	jh_big_free(p->stacks);
	free(p->threads);
	jh_big_free(p->tvals);
	free(p->presyms);
	idmap_release(&p->loc_index);
	idmap_release(&p->sample_index);
	idmap_release(&p->func_index);
	idmap_release(&p->map_index);
	idmap_release(&p->thread_index);
	idmap_release(&p->presym_index);
	labeltab_release(&p->labels);
	memset(p, 0, sizeof(*p));
}

/* --- locations --- */

struct loc_key { const struct profile *p; uint64_t addr; bool leaf; uint32_t mapping; };

static uint64_t loc_hash(uint64_t addr, bool leaf, uint32_t mapping)
{
	return addr * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)mapping << 1) ^ leaf;
}

static int loc_eq(const void *ctx, uint32_t id)
{
	const struct loc_key *k = ctx;
	const struct pf_location *l = &k->p->locs[id];
	return l->addr == k->addr && l->leaf == k->leaf && l->mapping == k->mapping;
}

/* Indexes the locations profile_location_append() added since. */
static int index_locations(struct profile *p)
{
	if (idmap_reserve(&p->loc_index, p->nlocs))
		return JH_ENOMEM;
	for (size_t i = p->loc_index.len; i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		if (idmap_put(&p->loc_index, loc_hash(l->addr, l->leaf, l->mapping), (uint32_t)i))
			return JH_ENOMEM;
	}
	return 0;
}

uint32_t profile_location_find(const struct profile *p, uint64_t addr, bool leaf,
			       uint32_t mapping)
{
	struct loc_key k = { p, addr, leaf, mapping };
	return idmap_find(&p->loc_index, loc_hash(addr, leaf, mapping), loc_eq, &k);
}

int64_t profile_location_append(struct profile *p, uint64_t addr, bool leaf, uint32_t mapping)
{
	if (p->nlocs >= UINT32_MAX - 1)
		return JH_ELIMIT;
	struct pf_location l = { .addr = addr, .mapping = mapping, .leaf = leaf };
	int64_t id = (int64_t)p->nlocs;
	if (JH_PUSH(p->locs, p->nlocs, p->cap_locs, l))
		return JH_ENOMEM;
	return id;
}

int64_t profile_location(struct profile *p, uint64_t addr, bool leaf, uint32_t mapping)
{
	/* the index holds locations 0 .. len-1, in order */
	if (p->loc_index.len < p->nlocs && index_locations(p))
		return JH_ENOMEM;
	uint32_t found = profile_location_find(p, addr, leaf, mapping);
	if (found != UINT32_MAX)
		return found;
	int64_t id = profile_location_append(p, addr, leaf, mapping);
	if (id < 0)
		return id;
	if (idmap_put(&p->loc_index, loc_hash(addr, leaf, mapping), (uint32_t)id))
		return JH_ENOMEM;
	return id;
}

/* --- samples --- */

struct sample_key { const struct profile *p; const uint32_t *locs; size_t n; uint32_t labels; };

static int sample_eq(const void *ctx, uint32_t id)
{
	const struct sample_key *k = ctx;
	const struct pf_sample *s = &k->p->samples[id];
	/* an empty stack ("@" alone) may come before any stack array exists */
	return s->depth == k->n && s->labels == k->labels &&
	       (!k->n || !memcmp(k->p->stacks + s->stack0, k->locs, k->n * sizeof(uint32_t)));
}

uint64_t profile_stack_hash(const uint32_t *locs, size_t n)
{
	return jh_hash_fast(locs, n * sizeof(uint32_t), 0);
}

/* A sample's hash in the index: its stack's, and its labels' when it has
 * some (a profile without labels hashes as before they existed). */
static uint64_t sample_hash(const uint32_t *locs, size_t n, uint32_t labels)
{
	uint64_t h = profile_stack_hash(locs, n);
	return labels ? h ^ jh_mix64(0x6c6162656c73ULL + labels) : h;
}

/* Indexes the samples profile_sample_append() added since. */
static int index_samples(struct profile *p)
{
	if (idmap_reserve(&p->sample_index, p->nsamples))
		return JH_ENOMEM;
	for (size_t i = p->sample_index.len; i < p->nsamples; i++) {
		const struct pf_sample *s = &p->samples[i];
		uint64_t h = sample_hash(s->depth ? p->stacks + s->stack0 : NULL, s->depth, s->labels);
		if (idmap_put(&p->sample_index, h, (uint32_t)i))
			return JH_ENOMEM;
	}
	return 0;
}

uint32_t profile_sample_find(const struct profile *p, const uint32_t *locs, size_t n,
			     uint64_t hash)
{
	struct sample_key k = { p, locs, n, 0 };
	return idmap_find(&p->sample_index, hash, sample_eq, &k);
}

void profile_sample_prefetch(const struct profile *p, uint64_t hash)
{
	idmap_prefetch(&p->sample_index, hash);
}

int64_t profile_sample_append(struct profile *p, const uint32_t *locs, size_t n)
{
	if (p->nsamples >= UINT32_MAX - 1 || n >= UINT32_MAX || p->nstacks + n >= UINT32_MAX)
		return JH_ELIMIT;
	if (jh_big_grow(&p->stacks, &p->cap_stacks, p->nstacks, p->nstacks + n, sizeof(uint32_t)))
		return JH_ENOMEM;
	struct pf_sample s = { .stack0 = (uint32_t)p->nstacks, .depth = (uint32_t)n };
	int64_t id = (int64_t)p->nsamples;
	if (JH_BIG_PUSH(p->samples, p->nsamples, p->cap_samples, s))
		return JH_ENOMEM;
	if (n)
		memcpy(p->stacks + p->nstacks, locs, n * sizeof(uint32_t));
	p->nstacks += n;
	return id;
}

/* profile_sample_labeled() with the sample's hash H (sample_hash()). */
static int64_t sample_with_hash(struct profile *p, const uint32_t *locs, size_t n,
				uint32_t labels, uint64_t h)
{
	/* the index holds samples 0 .. len-1, in order */
	if (p->sample_index.len < p->nsamples && index_samples(p))
		return JH_ENOMEM;
	struct sample_key k = { p, locs, n, labels };
	uint32_t found = idmap_find(&p->sample_index, h, sample_eq, &k);
	if (found != UINT32_MAX)
		return found;
	int64_t id = profile_sample_append(p, locs, n);
	if (id < 0)
		return id;
	p->samples[id].labels = labels;
	if (idmap_put(&p->sample_index, h, (uint32_t)id))
		return JH_ENOMEM;
	return id;
}

int64_t profile_sample_labeled(struct profile *p, const uint32_t *locs, size_t n,
			       uint32_t labels)
{
	return sample_with_hash(p, locs, n, labels, sample_hash(locs, n, labels));
}

int64_t profile_sample(struct profile *p, const uint32_t *locs, size_t n)
{
	return profile_sample_labeled(p, locs, n, 0);
}

int64_t profile_sample_hashed(struct profile *p, const uint32_t *locs, size_t n, uint64_t hash)
{
	/* a sample without labels hashes as its stack */
	return sample_with_hash(p, locs, n, 0, hash);
}

int profile_reserve(struct profile *p, size_t nlocs, size_t nsamples, size_t nstacks,
		    size_t ntvals)
{
	if (jh_grow(&p->locs, &p->cap_locs, p->nlocs + nlocs, sizeof(*p->locs)) ||
	    jh_big_grow(&p->samples, &p->cap_samples, p->nsamples, p->nsamples + nsamples,
			sizeof(*p->samples)) ||
	    jh_big_grow(&p->stacks, &p->cap_stacks, p->nstacks, p->nstacks + nstacks,
			sizeof(*p->stacks)) ||
	    jh_big_grow(&p->tvals, &p->cap_tvals, p->ntvals, p->ntvals + ntvals,
			sizeof(*p->tvals)))
		return JH_ENOMEM;
	return 0;
}

int profile_reserve_sample_index(struct profile *p, size_t nsamples)
{
	return idmap_reserve(&p->sample_index, nsamples);
}

int profile_set_labels(struct profile *p, const struct pf_label *pairs, size_t n)
{
	if (!n)
		return 0;
	/* each set the samples have, joined with PAIRS, found once */
	size_t nsets = p->labels.nsets;
	int64_t *joined = calloc(nsets + 1, sizeof(*joined));
	struct pf_label *buf = NULL;
	size_t cap = 0;
	int rc = joined ? 0 : JH_ENOMEM;
	for (size_t i = 0; i < p->nsamples && !rc; i++) {
		uint32_t old = p->samples[i].labels;
		if (old >= nsets)
			old = 0;
		if (!joined[old]) {
			size_t k = 0;
			const struct pf_label *own = labeltab_get(&p->labels, old, &k);
			if (jh_grow(&buf, &cap, k + n, sizeof(*buf))) {
				rc = JH_ENOMEM;
				break;
			}
			if (k)
				memcpy(buf, own, k * sizeof(*buf));
			memcpy(buf + k, pairs, n * sizeof(*buf));
			int64_t id = labeltab_intern(&p->labels, buf, k + n);
			if (id < 0) {
				rc = (int)id;
				break;
			}
			joined[old] = id + 1;
		}
		p->samples[i].labels = (uint32_t)(joined[old] - 1);
	}
	free(joined);
	free(buf);
	/* the index hashed the samples without their labels: made again */
	idmap_release(&p->sample_index);
	idmap_init(&p->sample_index);
	return rc;
}

/* --- threads --- */

struct thread_key { const struct profile *p; int64_t uid; };

static int thread_eq(const void *ctx, uint32_t id)
{
	const struct thread_key *k = ctx;
	return k->p->threads[id].uid == k->uid;
}

int64_t profile_thread(struct profile *p, int64_t uid)
{
	struct thread_key k = { p, uid };
	uint64_t h = (uint64_t)uid * 0x9e3779b97f4a7c15ULL + 7;
	uint32_t id = idmap_find(&p->thread_index, h, thread_eq, &k);
	if (id != UINT32_MAX)
		return id;
	struct pf_thread t = { .uid = uid };
	id = (uint32_t)p->nthreads;
	if (JH_PUSH(p->threads, p->nthreads, p->cap_threads, t) ||
	    idmap_put(&p->thread_index, h, id))
		return JH_ENOMEM;
	return id;
}

int profile_thread_add(struct profile *p, uint32_t sample, uint32_t thread,
		       const double v[PF_NVALUES])
{
	/* A thread usually has one line per stack, and a repeated uid follows
	 * its first line closely, so a short backward scan finds it. */
	for (size_t i = p->ntvals, n = 0; i-- > 0 && n < 64; n++) {
		struct pf_thread_value *tv = &p->tvals[i];
		if (tv->sample != sample)
			break;
		if (tv->thread == thread) {
			for (int j = 0; j < PF_NVALUES; j++)
				tv->v[j] += v[j];
			return 0;
		}
	}
	struct pf_thread_value tv = { .sample = sample, .thread = thread };
	memcpy(tv.v, v, sizeof(tv.v));
	return JH_BIG_PUSH(p->tvals, p->ntvals, p->cap_tvals, tv);
}

/* --- mappings --- */

struct map_key { const struct profile *p; const struct pf_mapping *m; };

static int map_eq(const void *ctx, uint32_t id)
{
	const struct map_key *k = ctx;
	const struct pf_mapping *a = &k->p->maps[id], *b = k->m;
	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->path == b->path && a->exec == b->exec && a->kind == b->kind;
}

int64_t profile_mapping(struct profile *p, const struct pf_mapping *m)
{
	struct map_key k = { p, m };
	uint64_t h = jh_mix64(m->start) ^ jh_mix64(m->limit + m->offset) ^ m->path;
	uint32_t id = idmap_find(&p->map_index, h, map_eq, &k);
	if (id != UINT32_MAX)
		return id;
	id = (uint32_t)p->nmaps;
	if (JH_PUSH(p->maps, p->nmaps, p->cap_maps, *m) || idmap_put(&p->map_index, h, id))
		return JH_ENOMEM;
	return id;
}

enum pf_map_kind profile_map_kind(const char *path, size_t len)
{
	if (!len)
		return PF_MAP_ANON;
	if (len == 6 && !memcmp(path, "[vdso]", 6))
		return PF_MAP_VDSO;
	/* [heap], [stack], [vvar], [vsyscall], [anon:NAME] */
	if (path[0] == '[')
		return PF_MAP_SPECIAL;
	return PF_MAP_FILE;
}

uint32_t profile_find_mapping(const struct profile *p, uint64_t addr)
{
	uint32_t best = UINT32_MAX;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct pf_mapping *m = &p->maps[i];
		if (addr < m->start || addr >= m->limit)
			continue;
		if (m->exec)
			return (uint32_t)i;
		if (best == UINT32_MAX)
			best = (uint32_t)i;
	}
	return best;
}

int64_t profile_cover_unmapped(struct profile *p, const struct pf_mapping *m)
{
	int64_t id = profile_mapping(p, m);
	if (id < 0)
		return id;
	int64_t moved = 0;
	for (size_t i = 0; i < p->nlocs; i++) {
		struct pf_location *l = &p->locs[i];
		if ((l->mapping != UINT32_MAX && p->maps[l->mapping].exec) ||
		    l->addr < m->start || l->addr >= m->limit)
			continue;
		l->mapping = (uint32_t)id;
		moved++;
	}
	if (moved) {
		/* the location index's keys include the mapping */
		idmap_release(&p->loc_index);
		idmap_init(&p->loc_index);
		if (index_locations(p))
			return JH_ENOMEM;
	}
	return moved;
}

/* Calls FN(P, STACK, J, CTX) for each entry J of every stack that is a
 * signal trampoline's (SIGFRAME[0..n)) or the interrupted pc after one. */
static int each_exact(struct profile *p, const uint8_t *sigframe, size_t n,
		      int (*fn)(struct profile *, uint32_t *, uint32_t, void *), void *ctx)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pf_sample *x = &p->samples[i];
		uint32_t *st = p->stacks + x->stack0;
		for (uint32_t j = 0; j < x->depth; j++) {
			if (st[j] >= n || !sigframe[st[j]] || p->locs[st[j]].leaf)
				continue;
			int rc = fn(p, st, j, ctx);
			if (!rc && j + 1 < x->depth && !p->locs[st[j + 1]].leaf)
				rc = fn(p, st, j + 1, ctx);
			if (rc)
				return rc;
			j++;
		}
	}
	return 0;
}

struct exact_count { uint32_t *refs, *exact; };

static int count_exact(struct profile *p, uint32_t *st, uint32_t j, void *ctx)
{
	struct exact_count *k = ctx;
	k->exact[st[j]]++;
	return 0;
}

/* For entry J: the location that replaces it (exact[] now holds the new
 * id + 1 of a location that must be split, 0 for one flipped whole). */
static int rewrite_exact(struct profile *p, uint32_t *st, uint32_t j, void *ctx)
{
	struct exact_count *k = ctx;
	if (k->exact[st[j]])
		st[j] = k->exact[st[j]] - 1;
	return 0;
}

int64_t profile_exact_pcs(struct profile *p, const uint8_t *sigframe, size_t n)
{
	if (n > p->nlocs)
		n = p->nlocs;
	struct exact_count k = { calloc(n + 1, sizeof(uint32_t)), calloc(n + 1, sizeof(uint32_t)) };
	uint8_t *flip = calloc(n + 1, 1);
	int64_t changed = 0;
	int rc = k.refs && k.exact && flip ? 0 : JH_ENOMEM;
	for (size_t i = 0; !rc && i < p->nstacks; i++)
		if (p->stacks[i] < n)
			k.refs[p->stacks[i]]++;
	if (!rc)
		rc = each_exact(p, sigframe, n, count_exact, &k);
	/* A location found only where a signal frame makes it exact becomes
	 * exact itself; one also found elsewhere (a return address there)
	 * is split: a new exact location for those entries. */
	bool split = false;
	for (size_t i = 0; !rc && i < n; i++) {
		if (!k.exact[i])
			continue;
		changed += k.exact[i];
		if (k.exact[i] == k.refs[i]) {
			flip[i] = 1;
			k.exact[i] = 0;
			continue;
		}
		struct pf_location l = p->locs[i];
		int64_t id = profile_location_append(p, l.addr, true, l.mapping);
		if (id < 0)
			rc = (int)id;
		else
			k.exact[i] = (uint32_t)id + 1;
		split = true;
	}
	/* the leaf flags tell which entries are exact until all are found */
	if (!rc && split)
		rc = each_exact(p, sigframe, n, rewrite_exact, &k);
	for (size_t i = 0; !rc && i < n; i++)
		if (flip[i])
			p->locs[i].leaf = true;
	if (!rc && changed) {
		/* both indexes' keys changed */
		idmap_release(&p->loc_index);
		idmap_init(&p->loc_index);
		idmap_release(&p->sample_index);
		idmap_init(&p->sample_index);
		if (index_locations(p) || index_samples(p))
			rc = JH_ENOMEM;
	}
	free(k.refs);
	free(k.exact);
	free(flip);
	return rc ? rc : changed;
}

static int looks_like_shared_object(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *so = strstr(base, ".so");
	return so && (so[3] == 0 || so[3] == '.');
}

int profile_resolve_mappings(struct profile *p)
{
	/* Sorted index of executable mappings for a binary search per address;
	 * the maps of a process rarely exceed a few thousand lines. */
	size_t n = 0;
	uint32_t *ex = malloc((p->nmaps ? p->nmaps : 1) * sizeof(*ex));
	for (size_t i = 0; ex && i < p->nmaps; i++)
		if (p->maps[i].exec)
			ex[n++] = (uint32_t)i;
	/* maps text is address-ordered already; fall back to a linear search
	 * when it is not. */
	bool sorted = true;
	for (size_t i = 1; i < n; i++)
		if (p->maps[ex[i]].start < p->maps[ex[i - 1]].limit)
			sorted = false;
	for (size_t i = 0; i < p->nlocs; i++) {
		struct pf_location *l = &p->locs[i];
		uint32_t found = UINT32_MAX;
		if (ex && sorted) {
			size_t lo = 0, hi = n;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (p->maps[ex[mid]].limit <= l->addr)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < n && p->maps[ex[lo]].start <= l->addr)
				found = ex[lo];
		}
		if (found == UINT32_MAX)
			found = profile_find_mapping(p, l->addr);
		l->mapping = found;
	}
	free(ex);
	/* Rebuild the location index, whose keys include the mapping. */
	idmap_release(&p->loc_index);
	idmap_init(&p->loc_index);
	if (index_locations(p))
		return JH_ENOMEM;
	/* The main executable: the first file-backed executable mapping that
	 * is not a shared object; /proc maps lists the program before its
	 * libraries, and a PIE still has a non-.so name. */
	p->main_mapping = UINT32_MAX;
	for (size_t i = 0; i < p->nmaps; i++) {
		struct pf_mapping *m = &p->maps[i];
		if (m->exec && m->kind == PF_MAP_FILE &&
		    !looks_like_shared_object(strtab_get(&p->strs, m->path))) {
			p->main_mapping = (uint32_t)i;
			break;
		}
	}
	for (size_t i = 0; i < p->nmaps; i++)
		p->maps[i].is_main = p->main_mapping != UINT32_MAX &&
			p->maps[i].path == p->maps[p->main_mapping].path &&
			p->maps[i].kind == PF_MAP_FILE;
	return 0;
}

/* --- functions and lines --- */

struct func_key { const struct profile *p; struct pf_function f; };

static int func_eq(const void *ctx, uint32_t id)
{
	const struct func_key *k = ctx;
	const struct pf_function *a = &k->p->funcs[id];
	return a->name == k->f.name && a->system_name == k->f.system_name &&
	       a->filename == k->f.filename && a->start_line == k->f.start_line;
}

int64_t profile_function(struct profile *p, uint32_t name, uint32_t system_name,
			 uint32_t filename, int64_t start_line)
{
	struct func_key k = { p, { name, system_name, filename, start_line } };
	uint64_t h = jh_mix64(((uint64_t)name << 32 | system_name) ^
			      jh_mix64((uint64_t)filename << 32 ^ (uint64_t)start_line));
	uint32_t id = idmap_find(&p->func_index, h, func_eq, &k);
	if (id != UINT32_MAX)
		return id;
	id = (uint32_t)p->nfuncs;
	if (JH_PUSH(p->funcs, p->nfuncs, p->cap_funcs, k.f) || idmap_put(&p->func_index, h, id))
		return JH_ENOMEM;
	return id;
}

int64_t profile_add_line(struct profile *p, const struct pf_line *l)
{
	if (p->nlines >= UINT32_MAX - 1)
		return JH_ELIMIT;
	size_t id = p->nlines;
	if (JH_PUSH(p->lines, p->nlines, p->cap_lines, *l))
		return JH_ENOMEM;
	return (int64_t)id;
}

/* --- presymbols --- */

struct presym_key { const struct profile *p; uint64_t addr; };

static int presym_eq(const void *ctx, uint32_t id)
{
	const struct presym_key *k = ctx;
	return k->p->presyms[id].addr == k->addr;
}

int profile_presym(struct profile *p, uint64_t addr, uint32_t names)
{
	struct presym_key k = { p, addr };
	uint32_t id = idmap_find(&p->presym_index, addr, presym_eq, &k);
	if (id != UINT32_MAX) {
		p->presyms[id].names = names;
		return 0;
	}
	struct pf_presym ps = { addr, names };
	id = (uint32_t)p->npresyms;
	if (JH_PUSH(p->presyms, p->npresyms, p->cap_presyms, ps) ||
	    idmap_put(&p->presym_index, addr, id))
		return JH_ENOMEM;
	return 0;
}

uint32_t profile_presym_find(const struct profile *p, uint64_t addr)
{
	struct presym_key k = { p, addr };
	uint32_t id = idmap_find(&p->presym_index, addr, presym_eq, &k);
	return id == UINT32_MAX ? 0 : p->presyms[id].names;
}

/* --- folding by symbol --- */

struct symloc_key { const struct profile *p; uint32_t loc; bool by_address; };

void profile_code_place(const struct profile *p, const struct pf_location *l, uint32_t *space,
			uint64_t *off)
{
	const struct pf_mapping *m = l->mapping < p->nmaps ? &p->maps[l->mapping] : NULL;
	if (m && m->kind == PF_MAP_FILE) {
		*space = m->path << 1 | l->leaf;
		*off = l->addr - m->start + m->offset;
	} else {
		*space = UINT32_MAX - 1 + l->leaf;
		*off = l->addr;
	}
}

static int symloc_eq(const void *ctx, uint32_t id)
{
	const struct symloc_key *k = ctx;
	const struct pf_location *a = &k->p->locs[id], *b = &k->p->locs[k->loc];
	if (a->nlines != b->nlines)
		return 0;
	if (k->by_address) {
		uint32_t sa, sb;
		uint64_t oa, ob;
		profile_code_place(k->p, a, &sa, &oa);
		profile_code_place(k->p, b, &sb, &ob);
		if (sa != sb || oa != ob)
			return 0;
	}
	for (uint32_t i = 0; i < a->nlines; i++) {
		const struct pf_line *x = &k->p->lines[a->line0 + i], *y = &k->p->lines[b->line0 + i];
		if (x->function != y->function || x->file != y->file || x->line != y->line ||
		    x->column != y->column || x->inlined != y->inlined)
			return 0;
	}
	return 1;
}

static uint64_t symloc_hash(const struct profile *p, const struct pf_location *l, bool by_address)
{
	uint64_t h = l->nlines;
	if (by_address) {
		uint32_t space;
		uint64_t off;
		profile_code_place(p, l, &space, &off);
		h = jh_mix64(h ^ space) ^ jh_mix64(off);
	}
	for (uint32_t i = 0; i < l->nlines; i++) {
		const struct pf_line *x = &p->lines[l->line0 + i];
		h = jh_mix64(h ^ ((uint64_t)x->function << 32 | x->file)) ^
		    ((uint64_t)(uint32_t)x->line << 1 | x->inlined);
	}
	return h;
}

struct tv_key { const struct pf_thread_value *tv; uint32_t sample, thread; };

static int tv_eq(const void *ctx, uint32_t id)
{
	const struct tv_key *k = ctx;
	return k->tv[id].sample == k->sample && k->tv[id].thread == k->thread;
}

/* After samples merged (old id I is now REMAP[I]): thread values of one
 * sample and thread are summed into one.  Returns 0 or JH_ENOMEM. */
static int fold_thread_values(struct profile *p, const uint32_t *remap)
{
	struct idmap tvi;
	idmap_init(&tvi);
	size_t n = 0;
	for (size_t i = 0; i < p->ntvals; i++) {
		struct pf_thread_value tv = p->tvals[i];
		tv.sample = remap[tv.sample];
		struct tv_key k = { p->tvals, tv.sample, tv.thread };
		uint64_t h = (uint64_t)tv.sample << 32 | tv.thread;
		uint32_t id = idmap_find(&tvi, h, tv_eq, &k);
		if (id != UINT32_MAX) {
			for (int j = 0; j < PF_NVALUES; j++)
				p->tvals[id].v[j] += tv.v[j];
			continue;
		}
		p->tvals[n] = tv;
		if (idmap_put(&tvi, h, (uint32_t)n)) {
			idmap_release(&tvi);
			return JH_ENOMEM;
		}
		n++;
	}
	p->ntvals = n;
	idmap_release(&tvi);
	return 0;
}

/* Changed samples, at most, that profile_fold_by_symbol() compares with
 * every sample rather than index them all. */
#define FOLD_SCAN_MAX 16

/* A sample's stack, for a sample other than SELF that is not DEAD.  (A
 * changed sample not yet rewritten holds a location that folded away, so
 * it equals no rewritten stack.) */
struct live_key {
	const struct profile *p;
	const uint32_t *locs;
	size_t n;
	uint32_t self, labels;
	const bool *dead;
};

static int live_eq(const void *ctx, uint32_t id)
{
	const struct live_key *k = ctx;
	const struct pf_sample *s = &k->p->samples[id];
	return id != k->self && !k->dead[id] && s->depth == k->n && s->labels == k->labels &&
	       (!k->n || !memcmp(k->p->stacks + s->stack0, k->locs, k->n * sizeof(uint32_t)));
}

int profile_fold_by_symbol(struct profile *p, bool by_address, uint32_t **remap_out)
{
	int rc = JH_ENOMEM;
	if (remap_out)
		*remap_out = NULL;
	uint32_t *canon = malloc((p->nlocs + 1) * sizeof(*canon));
	struct idmap index;
	idmap_init(&index);
	if (!canon)
		return JH_ENOMEM;
	bool changed = false;
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		canon[i] = (uint32_t)i;
		if (!l->nlines)
			continue;
		struct symloc_key k = { p, (uint32_t)i, by_address };
		uint64_t h = symloc_hash(p, l, by_address);
		uint32_t id = idmap_find(&index, h, symloc_eq, &k);
		if (id != UINT32_MAX) {
			canon[i] = id;
			changed = true;
		} else if (idmap_put(&index, h, (uint32_t)i)) {
			goto out;
		}
	}
	rc = 0;
	if (!changed)
		goto out;
	rc = JH_ENOMEM;
	/* The stacks are rewritten in place over the canonical locations.
	 * Only a sample whose stack changed can now equal another one; it
	 * is looked up among all samples (the index holds them under their
	 * hashes; a changed sample's old entry can only match a stack equal
	 * to its new one, a true duplicate), and the lower id of two equal
	 * samples keeps both: the order a full rebuild would give. */
	size_t nold = p->nsamples, ntouched = 0;
	uint32_t *remap = malloc((nold + 1) * sizeof(*remap));
	uint32_t *touched = malloc((nold + 1) * sizeof(*touched));
	bool *dead = calloc(nold + 1, sizeof(*dead));
	if (!remap || !touched || !dead)
		goto fail;
	/* the index must hold every sample under its old stack before the
	 * stacks change; with a few changed samples, scanning is cheaper
	 * than indexing (a split parse leaves part of the index unmade) */
	bool use_index = p->sample_index.len >= nold;
	for (size_t i = 0; i < nold; i++) {
		struct pf_sample *x = &p->samples[i];
		const uint32_t *st = p->stacks + x->stack0;
		remap[i] = (uint32_t)i;
		for (uint32_t j = 0; j < x->depth; j++)
			if (canon[st[j]] != st[j]) {
				touched[ntouched++] = (uint32_t)i;
				break;
			}
	}
	if (!use_index && ntouched > FOLD_SCAN_MAX) {
		if (index_samples(p))
			goto fail;
		use_index = true;
	}
	size_t ndead = 0;
	for (size_t t = 0; t < ntouched; t++) {
		uint32_t i = touched[t];
		struct pf_sample *x = &p->samples[i];
		uint32_t *st = p->stacks + x->stack0;
		for (uint32_t j = 0; j < x->depth; j++)
			st[j] = canon[st[j]];
		struct live_key k = { p, st, x->depth, i, x->labels, dead };
		uint64_t h = 0;
		uint32_t y = UINT32_MAX;
		if (use_index) {
			h = sample_hash(x->depth ? st : NULL, x->depth, x->labels);
			y = idmap_find(&p->sample_index, h, live_eq, &k);
		} else {
			for (uint32_t c = 0; c < nold && y == UINT32_MAX; c++)
				if (live_eq(&k, c))
					y = c;
		}
		if (y == UINT32_MAX) {
			if (use_index && idmap_put(&p->sample_index, h, i))
				goto fail;
			continue;
		}
		/* the lower id keeps the values of both */
		uint32_t keep = y < i ? y : i, drop = y < i ? i : y;
		for (int j = 0; j < PF_NVALUES; j++) {
			p->samples[keep].v[j] += p->samples[drop].v[j];
			p->samples[keep].base[j] += p->samples[drop].base[j];
		}
		dead[drop] = true;
		remap[drop] = keep;
		ndead++;
		if (use_index && keep == i && idmap_put(&p->sample_index, h, i))
			goto fail;
	}
	/* the index is made again from the samples when next needed */
	idmap_release(&p->sample_index);
	idmap_init(&p->sample_index);
	if (ndead) {
		/* old ids to new: a dropped sample to its keeper's new id (its
		 * keeper has the lower id, so is renumbered first) */
		size_t n = 0;
		for (size_t i = 0; i < nold; i++) {
			if (dead[i]) {
				remap[i] = remap[remap[i]];
				continue;
			}
			p->samples[n] = p->samples[i];
			remap[i] = (uint32_t)n++;
		}
		p->nsamples = n;
	}
	/* per-thread values: the same (sample, thread) may now appear twice */
	if (ndead && fold_thread_values(p, remap))
		goto fail;
	rc = 0;
	if (remap_out) {
		*remap_out = remap;
		remap = NULL;
	}
fail:
	free(remap);
	free(touched);
	free(dead);
out:
	free(canon);
	idmap_release(&index);
	return rc;
}

double profile_total(const struct profile *p, enum pf_value v)
{
	double t = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		t += pf_value_of(p->samples[i].v, v);
	return t;
}

int profile_check_magnitude(const struct profile *p, double max, char *err, size_t errlen)
{
	double sum[PF_NVALUES] = { 0 }, tsum[PF_NVALUES] = { 0 };
	for (size_t i = 0; i < p->nsamples; i++)
		for (int j = 0; j < PF_NVALUES; j++)
			sum[j] += fabs(p->samples[i].v[j]) + fabs(p->samples[i].base[j]);
	for (size_t i = 0; i < p->ntvals; i++)
		for (int j = 0; j < PF_NVALUES; j++)
			tsum[j] += fabs(p->tvals[i].v[j]);
	for (int j = 0; j < PF_NVALUES; j++)
		if (!(sum[j] <= max) || !(tsum[j] <= max))
			return jh_err(err, errlen, -1,
				      "the profiles' values add up to more than %.0f %s: not a real heap",
				      max, j == PF_INUSE_OBJECTS || j == PF_ALLOC_OBJECTS ? "objects" : "bytes");
	return 0;
}
