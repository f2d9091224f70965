#include <elf.h>
#include <pthread.h>
#include <unistd.h>

#include "analyzer/names.h"
#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "lib/threads.h"
#include "symbolize/addr.h"
#include "symbolize/objchoice.h"
#include "symbolize/sigframe.h"
#include "symbolize/debuginfod.h"
#include "symbolize/symbolize.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

struct ctx {
	struct profile *p;
	struct symcache *sc;
	const struct symbolize_options *o;
	struct symbolize_stats *st;
	bool cache_warned;
	struct strmemo *memo;    /* string pointer -> id, NULL until needed */
	int memo_bits;           /* it has 1 << memo_bits slots */
};

/* A direct-mapped memo of the strings just interned, by address: the
 * answers of one object share their strings (the cache file's table,
 * libdw's .debug_str), so most frames find theirs here without hashing
 * the text.  A pointer seen before is the same string, as every answer
 * lives until write_group() is done.  Sized to the addresses, up to
 * STRMEMO_BITS: it is cleared up front. */
#define STRMEMO_BITS 14
#define STRMEMO_MIN_BITS 8
struct strmemo {
	const char *s;
	uint32_t id;
};

/* Formats a message for one of the caller's callbacks (NULL: dropped). */
__attribute__((format(printf, 3, 4)))
static void say(const struct ctx *c, void (*to)(void *, const char *), const char *fmt, ...)
{
	if (!to)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	to(c->o->ctx, msg);
}
#define warn(c, ...) say((c), (c)->o->warn, __VA_ARGS__)
#define note(c, ...) say((c), (c)->o->note, __VA_ARGS__)

static int64_t intern(struct ctx *c, const char *s)
{
	return s ? strtab_intern(&c->p->strs, s) : 0;
}

/* intern() through the memo, for strings that outlive the ctx's use. */
static int64_t intern_memo(struct ctx *c, const char *s)
{
	if (!s)
		return 0;
	if (!c->memo && !(c->memo = jh_zalloc((size_t)1 << c->memo_bits, sizeof(*c->memo))))
		return intern(c, s);
	struct strmemo *m = &c->memo[((uintptr_t)s * 0x9e3779b97f4a7c15ULL) >> (64 - c->memo_bits)];
	if (m->s == s)
		return m->id;
	int64_t id = intern(c, s);
	if (id >= 0) {
		m->s = s;
		m->id = (uint32_t)id;
	}
	return id;
}

/* Gives location L the single frame NAME (no file, no line). */
static int set_named(struct ctx *c, struct pf_location *l, const char *name,
		     enum pf_sym_state state)
{
	int64_t n = intern(c, name);
	if (n < 0)
		return (int)n;
	int64_t f = profile_function(c->p, (uint32_t)n, 0, 0, 0);
	if (f < 0)
		return (int)f;
	struct pf_line ln = { .function = (uint32_t)f };
	int64_t id = profile_add_line(c->p, &ln);
	if (id < 0)
		return (int)id;
	l->line0 = (uint32_t)id;
	l->nlines = 1;
	l->sym = (uint8_t)state;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* "libfoo.so.1+0x1a2b", "[vdso]+0x9f0", or the raw pc.  FUNC is the file
 * offset where the function that holds the pc starts (from its call-frame
 * entry), which names it instead of the pc, or NO_FUNC: every pc of one
 * unnamed function is then one row, as a named one is. */
#define NO_FUNC UINT64_MAX
static int set_unknown(struct ctx *c, struct pf_location *l, uint64_t func)
{
	char buf[600];
	uint64_t pc = addr_pc(l->addr, l->leaf);
	if (l->mapping == UINT32_MAX) {
		snprintf(buf, sizeof(buf), "0x%016llx", (unsigned long long)pc);
	} else {
		const struct pf_mapping *m = &c->p->maps[l->mapping];
		const char *path = strtab_get(&c->p->strs, m->path);
		const char *name = m->kind == PF_MAP_ANON ? "[anon]" : base_name(path);
		uint64_t off = m->kind == PF_MAP_FILE ? addr_rel(pc, m->start, m->offset)
						      : pc - m->start;
		snprintf(buf, sizeof(buf), "%s+0x%llx", name,
			 (unsigned long long)(func != NO_FUNC ? func : off));
	}
	c->st->pcs_unknown++;
	return set_named(c, l, buf, PF_SYM_UNKNOWN);
}

static int set_frames(struct ctx *c, struct pf_location *l, const struct symresult *r)
{
	uint32_t first = (uint32_t)c->p->nlines;
	for (unsigned i = 0; i < r->nframes; i++) {
		const struct symframe *f = &r->frames[i];
		int64_t name = intern_memo(c, f->name ? f->name : "??");
		int64_t sys = intern_memo(c, f->linkage);
		int64_t file = intern_memo(c, f->file);
		int64_t dfile = f->decl_file ? intern_memo(c, f->decl_file) : file;
		if (name < 0 || sys < 0 || file < 0 || dfile < 0)
			return JH_ENOMEM;
		int64_t fn = profile_function(c->p, (uint32_t)name, (uint32_t)sys,
					      (uint32_t)dfile, f->decl_line);
		if (fn < 0)
			return (int)fn;
		struct pf_line ln = {
			.function = (uint32_t)fn, .file = (uint32_t)file,
			.line = f->line, .column = f->column, .inlined = f->inlined,
		};
		if (profile_add_line(c->p, &ln) < 0)
			return JH_ENOMEM;
	}
	l->line0 = first;
	l->nlines = r->nframes;
	l->sym = r->status == SYM_DWARF ? PF_SYM_DWARF : PF_SYM_SYMTAB;
	if (r->status == SYM_DWARF)
		c->st->pcs_dwarf++;
	else
		c->st->pcs_symtab++;
	return 0;
}

/* Names from a symbolized profile: "outer--inlined--innermost"
 * (names_split_inline()), stored innermost first.  A mangled name (some
 * writers, ClickHouse among them, give inline frames their linkage
 * names) is demangled, and keeps its mangled form as the linkage name. */
static int set_presym(struct ctx *c, struct pf_location *l, uint32_t names)
{
	const char *s = strtab_get(&c->p->strs, names);
	struct names_part parts[256];
	size_t n = names_split_inline(s, strlen(s), parts, 256);
	if (n > 256)
		n = 256;
	uint32_t first = (uint32_t)c->p->nlines;
	for (size_t i = n; i-- > 0;) {
		int64_t name = strtab_intern_n(&c->p->strs, parts[i].s, parts[i].n);
		if (name < 0)
			return (int)name;
		int64_t sys = 0;
		if (parts[i].n > 2 && parts[i].s[0] == '_' &&
		    (parts[i].s[1] == 'Z' || parts[i].s[1] == 'R')) {
			char *dm = symcache_demangle(strtab_get(&c->p->strs, (uint32_t)name));
			if (dm) {
				sys = name;
				name = strtab_intern(&c->p->strs, dm);
				free(dm);
				if (name < 0)
					return (int)name;
			}
		}
		int64_t fn = profile_function(c->p, (uint32_t)name, (uint32_t)sys, 0, 0);
		if (fn < 0)
			return (int)fn;
		struct pf_line ln = { .function = (uint32_t)fn, .inlined = i != 0 };
		if (profile_add_line(c->p, &ln) < 0)
			return JH_ENOMEM;
	}
	l->line0 = first;
	l->nlines = (uint32_t)n;
	l->sym = PF_SYM_PRESYM;
	c->st->pcs_presym++;
	return 0;
}

/* --lib_prefix: PREFIX/full/path, then with leading folders dropped one at
 * a time, for each prefix in turn; the original path last. */
static const char *find_library(struct ctx *c, const char *path, char *buf, size_t len)
{
	if (!c->o->lib_prefixes)
		return path;
	for (const char *const *pp = c->o->lib_prefixes; *pp; pp++) {
		const char *tail = path;
		while (tail && *tail) {
			snprintf(buf, len, "%s/%s", *pp, *tail == '/' ? tail + 1 : tail);
			if (!access(buf, R_OK))
				return buf;
			tail = strchr(tail + 1, '/');
		}
	}
	return path;
}

/* Sorts IDS[0..n) by (mapping, pc) of their locations, equal keys in
 * their order (a stable radix sort, sixteen bits a pass, passes whose
 * digit is the same everywhere skipped: a profile's pcs share their high
 * bits).  Returns 0 or JH_ENOMEM. */
static int sort_by_pc(const struct profile *p, uint32_t *ids, size_t n)
{
	struct key { uint64_t pc; uint32_t mapping, id; } *a = malloc((n + 1) * sizeof(*a)),
							  *b = malloc((n + 1) * sizeof(*b));
	size_t *count = malloc(65536 * sizeof(*count));
	if (!a || !b || !count) {
		free(a);
		free(b);
		free(count);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pf_location *l = &p->locs[ids[i]];
		a[i] = (struct key){ addr_pc(l->addr, l->leaf), l->mapping, ids[i] };
	}
	/* digits 0-3: the pc, low first; 4-5: the mapping */
	for (int d = 0; d < 6 && n > 1; d++) {
		int shift = 16 * (d & 3);
#define DIGIT(k) ((unsigned)((d < 4 ? (k).pc : (uint64_t)(k).mapping) >> shift) & 0xffff)
		unsigned first = DIGIT(a[0]);
		size_t same = 1;
		while (same < n && DIGIT(a[same]) == first)
			same++;
		if (same == n)
			continue;
		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[DIGIT(a[i])]++;
		for (size_t v = 0, sum = 0; v < 65536; v++) {
			size_t c = count[v];
			count[v] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[DIGIT(a[i])]++] = a[i];
#undef DIGIT
		struct key *t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = a[i].id;
	free(a);
	free(b);
	free(count);
	return 0;
}

/* The locations ids[lo..hi) of one mapping, and what the serial first pass
 * decided about it. */
struct group {
	uint32_t mapping;
	size_t lo, hi;
	const char *obj;      /* the object to read, NULL: name frames module+offset */
	struct symcache *sc;  /* the symcache of the worker that looks up its
				 first addresses: the one that has read its
				 DWARF when the persistent cache is saved */
	struct dcmodule *dcm; /* its persistent cache, NULL: none */
	uint8_t *nocall;      /* per location (from lo): 1 for a return address
				 that follows no call in the object, whose
				 name is not taken from it; NULL: none */
};

/* Whether location L's address, as the dump gives it, is a return address
 * (the instruction after a call): every frame of a gperftools dump, every
 * frame but the first of a jemalloc one; none of a pprof file, whose
 * addresses are lookup pcs already. */
static bool is_return_address(const struct profile *p, const struct pf_location *l)
{
	/* a gperftools stack's first frame has no leaf flag; a signal
	 * trampoline and the pc it interrupted do (mark_sigframes) */
	return p->format != PF_FMT_PPROF && !l->leaf;
}

/* Before anything is looked up: the return addresses into a signal
 * trampoline (symbolize/sigframe.h), and the interrupted pcs above them,
 * become lookup pcs as they are (profile_exact_pcs).  The objects are
 * those prepare_group() opens first. */
static int mark_sigframes(struct ctx *c)
{
	struct profile *p = c->p;
	if (p->format == PF_FMT_PPROF || c->o->no_symbolize || !p->nlocs)
		return 0;
	size_t n = p->nlocs;
	uint8_t *tramp = calloc(n, 1);
	struct symmodule **mods = calloc(p->nmaps + 1, sizeof(*mods));
	uint8_t *tried = calloc(p->nmaps + 1, 1);
	int rc = tramp && mods && tried ? 0 : JH_ENOMEM;
	bool any = false, vdso = false;
	int machine = EM_NONE;
	for (size_t i = 0; !rc && i < n; i++) {
		const struct pf_location *l = &p->locs[i];
		if (l->leaf || l->mapping == UINT32_MAX || l->sym != PF_SYM_NOTYET)
			continue;
		const struct pf_mapping *m = &p->maps[l->mapping];
		if (m->kind == PF_MAP_VDSO) {
			/* decided below, by the machine */
			tramp[i] = 2;
			vdso = true;
			continue;
		}
		if (m->kind != PF_MAP_FILE || !m->exec)
			continue;
		if (!tried[l->mapping]) {
			char buf[4096], err[512];
			const char *path = strtab_get(&p->strs, m->path);
			const char *obj = m->is_main && c->o->binary ? c->o->binary
				: find_library(c, path, buf, sizeof(buf));
			tried[l->mapping] = 1;
			mods[l->mapping] = symcache_module(c->sc, obj, err, sizeof(err));
			if (mods[l->mapping] && machine == EM_NONE)
				machine = symmodule_machine(mods[l->mapping]);
		}
		if (sigframe_at(mods[l->mapping], addr_rel(l->addr, m->start, m->offset))) {
			tramp[i] = 1;
			any = true;
		}
	}
	/* On AArch64 the kernel's trampoline is the vdso's
	 * __kernel_rt_sigreturn, and nothing else there calls out; x86-64's
	 * C libraries bring their own (and its vdso has a function that
	 * calls back into the program) */
	for (size_t i = 0; vdso && i < n; i++) {
		if (tramp[i] != 2)
			continue;
		tramp[i] = machine == EM_AARCH64;
		any |= tramp[i];
	}
	if (!rc && any) {
		int64_t k = profile_exact_pcs(p, tramp, n);
		if (k < 0)
			rc = (int)k;
		else
			c->st->sigframes = (size_t)k;
	}
	free(tramp);
	free(mods);
	free(tried);
	return rc;
}

/* First pass, serial: choose the object file of the group's mapping, open
 * it in the main cache, check that it is the code that wrote the dump,
 * record the build id.  Sets g->obj when the addresses of the group can
 * be looked up. */
static int prepare_group(struct ctx *c, struct group *g, const uint32_t *ids)
{
	struct profile *p = c->p;
	uint32_t mi = g->mapping;
	struct pf_mapping *m = mi == UINT32_MAX ? NULL : &p->maps[mi];
	g->obj = NULL;
	if (!m || m->kind != PF_MAP_FILE || c->o->no_symbolize)
		return 0;
	/* the return addresses, as file offsets, for the call check */
	uint64_t *rels = malloc((g->hi - g->lo + 1) * sizeof(*rels));
	if (!rels)
		return JH_ENOMEM;
	size_t nrels = 0;
	for (size_t i = g->lo; i < g->hi; i++) {
		const struct pf_location *l = &p->locs[ids[i]];
		if (is_return_address(p, l))
			rels[nrels++] = addr_rel(l->addr, m->start, m->offset);
	}
	char buf[4096];
	const char *path = strtab_get(&p->strs, m->path);
	bool given = m->is_main && c->o->binary;
	const char *obj = given ? c->o->binary : find_library(c, path, buf, sizeof(buf));
	struct objchoice cd;
	int rc = objchoice_pick(c->sc, m, path, obj, given, rels, nrels, &cd);
	free(rels);
	if (rc)
		return rc;
	if (cd.warning[0])
		warn(c, "%s", cd.warning);
	if (cd.partial[0])
		warn(c, "%s", cd.partial);
	if (cd.failed)
		c->st->modules_failed++;
	if (cd.mismatch)
		c->st->binary_mismatch = true;
	if (m->is_main)
		c->st->main_calls = cd.cc;
	if (cd.obj && cd.follows) {
		/* the return addresses that follow no call are not named
		 * from this file */
		g->nocall = calloc(g->hi - g->lo + 1, 1);
		for (size_t i = g->lo, k = 0; g->nocall && i < g->hi; i++)
			if (is_return_address(p, &p->locs[ids[i]]))
				g->nocall[i - g->lo] = !cd.follows[k++];
	}
	obj = cd.obj;
	objchoice_release(&cd);
	if (!obj)
		return 0;
	struct symmodule *mod = cd.mod;
	int64_t objid = intern(c, obj);
	if (objid < 0)
		return JH_ENOMEM;
	m->object = (uint32_t)objid;
	obj = strtab_get(&p->strs, m->object);
	c->st->modules++;
	size_t blen = 0;
	const unsigned char *bid = symmodule_build_id(mod, &blen);
	if (bid && blen && blen <= 64) {
		char hex[130];
		jh_hex(hex, bid, blen);
		int64_t b = intern(c, hex);
		if (b < 0)
			return JH_ENOMEM;
		m->build_id = (uint32_t)b;
	}
	g->obj = obj;
	if (c->o->cache) {
		g->dcm = diskcache_module(c->o->cache, mod, obj);
		if (g->dcm)
			note(c, "%s: %s", obj, dcmodule_state(g->dcm));
	}
	return 0;
}

/* A contiguous part of a group, looked up by one worker. */
struct job {
	const struct group *g;
	size_t lo, hi;
};

/* Second pass, one per thread, each with its own cache (a symcache is not
 * thread-safe): look up every address of its jobs into res[].  The results
 * depend only on the address and the object, so the order in which
 * workers run does not matter. */
struct worker {
	struct symcache *sc;
	const struct profile *p;
	const uint32_t *ids;
	struct symresult *res;
	uint64_t (*ranges)[3];    /* --disasm: vaddr, function lo, hi per address */
	uint64_t *vaddrs;         /* the link-time address of each, for the cache */
	uint64_t *funcs;          /* for each that nothing names, the file offset
				     of its function's start, or NO_FUNC */
	uint8_t *live;            /* 1: looked up live, to be added to the cache;
				     2: answered by the cache; 0: neither (no
				     object, or outside its segments) */
	struct job *jobs;
	size_t njobs, cap_jobs, load;
	struct ctx *c;            /* for progress, on the main thread only */
	bool main;
};

static void lookup_job(struct worker *w, const struct job *j)
{
	const struct profile *p = w->p;
	const struct pf_mapping *m = &p->maps[j->g->mapping];
	char err[512];
	struct symmodule *mod = symcache_module(w->sc, j->g->obj, err, sizeof(err));
	if (j->g->dcm) {
		symmodule_set_map_source(mod, dcmodule_new_map, j->g->dcm);
		symmodule_set_units_source(mod, dcmodule_install_units, j->g->dcm);
	}
	size_t nseg = 0;
	const struct symsegment *segs = mod ? symmodule_segments(mod, &nseg) : NULL;
	bool identity = m->start == 0 && m->offset == 0 && m->limit == UINT64_MAX;
	for (size_t i = j->lo; i < j->hi; i++) {
		const struct pf_location *l = &p->locs[w->ids[i]];
		uint64_t pc = addr_pc(l->addr, l->leaf), vaddr;
		struct symresult *r = &w->res[i];
		memset(r, 0, sizeof(*r));
		if (w->main && !((i - j->lo) & 4095) && i > j->lo && w->c->o->progress)
			w->c->o->progress(w->c->o->ctx, w->c->st->modules, i - j->lo, j->hi - j->lo);
		if (!mod)
			continue;
		if (identity && symmodule_elf_type(mod) == ET_EXEC)
			vaddr = pc;
		else if (addr_rel_to_vaddr(segs, nseg, addr_rel(pc, m->start, m->offset), &vaddr))
			continue;
		w->vaddrs[i] = vaddr;
		if (j->g->dcm && dcmodule_lookup(j->g->dcm, vaddr, r)) {
			w->live[i] = 2;
		} else {
			symmodule_lookup(mod, vaddr, r);
			w->live[i] = 1;
		}
		/* not cached: the same from the file, warm or cold */
		uint64_t lo, hi, rel;
		if ((r->status == SYM_NONE || !r->nframes) && !symmodule_fde_range(mod, vaddr, &lo, &hi)) {
			if (identity && symmodule_elf_type(mod) == ET_EXEC)
				w->funcs[i] = lo;
			else if (!addr_vaddr_to_rel(segs, nseg, lo, &rel))
				w->funcs[i] = rel;
		}
		if (w->ranges) {
			w->ranges[i][0] = vaddr;
			if (symmodule_symbol_range(mod, vaddr, &w->ranges[i][1], &w->ranges[i][2]))
				w->ranges[i][1] = w->ranges[i][2] = 0;
		}
	}
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	const struct symbolize_options *o = w->c->o;
	size_t done = 0, total = 0;
	for (size_t k = 0; k < w->njobs; k++)
		total += w->jobs[k].hi - w->jobs[k].lo;
	if (w->main && o->progress)
		o->progress(o->ctx, w->c->st->modules, 0, total);
	for (size_t k = 0; k < w->njobs; k++) {
		lookup_job(w, &w->jobs[k]);
		done += w->jobs[k].hi - w->jobs[k].lo;
		/* the main thread reports its own share, one line per job */
		if (w->main && o->progress)
			o->progress(o->ctx, w->c->st->modules, done, total);
	}
	return NULL;
}

/* Third pass, serial: write the frames of group G into the model. */
static int write_group(struct ctx *c, const struct group *g, const uint32_t *ids,
		       const struct symresult *res, const uint64_t *funcs, uint64_t (*ranges)[3])
{
	struct profile *p = c->p;
	struct pf_mapping *m = g->mapping == UINT32_MAX ? NULL : &p->maps[g->mapping];
	size_t resolved = 0;
	for (size_t i = g->lo; i < g->hi; i++) {
		struct pf_location *l = &p->locs[ids[i]];
		const struct symresult *r = &res[i];
		if (ranges && g->obj) {
			l->vaddr = ranges[i][0];
			l->func_lo = ranges[i][1];
			l->func_hi = ranges[i][2];
		}
		const char *jit;
		if (!g->obj && (!m || m->kind == PF_MAP_ANON) && c->o->perfmap && !c->o->no_symbolize &&
		    (jit = perfmap_lookup(c->o->perfmap, addr_pc(l->addr, l->leaf)))) {
			/* JIT-compiled code, named by its runtime's perf map */
			if (set_named(c, l, jit, PF_SYM_SYMTAB))
				return JH_ENOMEM;
			c->st->pcs_jit++;
			continue;
		}
		if (!g->obj || r->status == SYM_NONE || !r->nframes ||
		    (g->nocall && g->nocall[i - g->lo])) {
			bool named = g->obj && !(g->nocall && g->nocall[i - g->lo]);
			if (set_unknown(c, l, named ? funcs[i] : NO_FUNC))
				return JH_ENOMEM;
			continue;
		}
		if (set_frames(c, l, r))
			return JH_ENOMEM;
		resolved++;
		m->has_functions = true;
		if (r->status == SYM_DWARF) {
			m->has_filenames = true;
			if (r->frames[0].line)
				m->has_line_numbers = true;
			if (r->nframes > 1)
				m->has_inline_frames = true;
		}
	}
	if (m && m->is_main) {
		c->st->main_pcs += g->hi - g->lo;
		c->st->main_resolved += resolved;
	}
	return 0;
}

/* Counts the group's cache hits and hands its live answers to its cache. */
static int cache_group(struct ctx *c, const struct group *g, const uint64_t *vaddrs,
		       const uint8_t *live, const struct symresult *res)
{
	if (!g->dcm)
		return 0;
	size_t added = 0, hits = 0;
	for (size_t i = g->lo; i < g->hi; i++) {
		if (live[i] == 2) {
			hits++;
		} else if (live[i] == 1) {
			if (dcmodule_add(g->dcm, vaddrs[i], &res[i]))
				return JH_ENOMEM;
			added++;
		}
	}
	note(c, "%s: %zu addresses from the cache, %zu looked up", g->obj, hits, added);
	return 0;
}

static int add_job(struct worker *w, const struct group *g, size_t lo, size_t hi)
{
	struct job j = { g, lo, hi };
	if (JH_PUSH(w->jobs, w->njobs, w->cap_jobs, j))
		return JH_ENOMEM;
	w->load += hi - lo;
	return 0;
}

/* Warns about the debug files that were left out because they are not
 * regular files, once per object, and about files that could not be
 * opened for lack of descriptors or memory (the names are then
 * incomplete: st->resource_failed). */
static void report_skipped(struct ctx *c, const struct group *groups, size_t ngroups,
			   const struct worker *w, int nw)
{
	for (size_t k = 0; k < ngroups; k++) {
		const char *msg = NULL;
		for (int i = 0; i < nw && !msg && groups[k].obj; i++)
			msg = symmodule_skipped(symcache_find_module(w[i].sc, groups[k].obj));
		if (msg)
			warn(c, "%s: %s", groups[k].obj, msg);
	}
	bool failed = symcache_resource_failed(c->sc);
	for (int i = 0; i < nw; i++)
		failed |= symcache_resource_failed(w[i].sc);
	if (failed && !c->st->resource_failed)
		warn(c, "some object or debug files could not be opened (too many open files, or out of memory): frames in them are not named; the report is incomplete (raise the limit with ulimit -n)");
	c->st->resource_failed |= failed;
}

/* Below this many addresses a second thread costs more than it saves. */
#define PARALLEL_MIN 4096
/* A group this large is split between the workers, each taking a
 * contiguous range of addresses so that they index different CUs. */
#define SPLIT_MIN 1024

/* Symbolizes the locations ids[0..n), sorted by mapping and pc. */
static int symbolize_ids(struct ctx *c, const uint32_t *ids, size_t n)
{
	struct profile *p = c->p;
	struct group *groups = NULL;
	size_t ngroups = 0, cap_groups = 0;
	struct symresult *res = calloc(n + 1, sizeof(*res));
	uint64_t (*ranges)[3] = c->o->ranges ? calloc(n + 1, sizeof(*ranges)) : NULL;
	uint64_t *vaddrs = calloc(n + 1, sizeof(*vaddrs));
	uint64_t *funcs = malloc((n + 1) * sizeof(*funcs));
	uint8_t *live = calloc(n + 1, 1);
	struct worker w[2];
	int nw = 1, rc = JH_ENOMEM;
	memset(w, 0, sizeof(w));
	if (!res || !vaddrs || !funcs || !live || (c->o->ranges && !ranges))
		goto out;
	for (size_t i = 0; i < n; i++)
		funcs[i] = NO_FUNC;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint32_t mi = p->locs[ids[i]].mapping;
		while (j < n && p->locs[ids[j]].mapping == mi)
			j++;
		struct group g = { .mapping = mi, .lo = i, .hi = j };
		if (JH_PUSH(groups, ngroups, cap_groups, g))
			goto out;
		i = j;
	}
	for (size_t k = 0; k < ngroups; k++)
		if (prepare_group(c, &groups[k], ids))
			goto out;
	/* JHEAP_THREADS=1 or 2 overrides the choice even for a few addresses
	 * (tests compare both) */
	if (jh_threads_forced() || n >= PARALLEL_MIN)
		nw = jh_threads();
	for (int k = 0; k < nw; k++) {
		w[k].sc = k == 0 ? c->sc : symcache_new(&c->o->symcache_opts);
		w[k].p = p;
		w[k].ids = ids;
		w[k].res = res;
		w[k].ranges = ranges;
		w[k].vaddrs = vaddrs;
		w[k].funcs = funcs;
		w[k].live = live;
		w[k].c = c;
		w[k].main = k == 0;
		if (!w[k].sc) {
			nw = k;
			break;
		}
	}
	if (nw < 1)
		goto out;
	/* jobs: big groups split in halves, small ones to the less loaded */
	for (size_t k = 0; k < ngroups; k++) {
		struct group *g = &groups[k];
		size_t len = g->hi - g->lo;
		struct worker *first = &w[nw == 2 && w[1].load < w[0].load];
		if (!g->obj)
			continue;
		if (nw == 2 && len >= SPLIT_MIN) {
			size_t mid = g->lo + len / 2;
			first = &w[0];
			if (add_job(&w[0], g, g->lo, mid) || add_job(&w[1], g, mid, g->hi))
				goto out;
		} else if (add_job(first, g, g->lo, g->hi)) {
			goto out;
		}
		g->sc = first->sc;
	}
	jh_run_two(worker_run, &w[0], nw == 2 ? worker_run : NULL, &w[1], true);
	rc = 0;
	report_skipped(c, groups, ngroups, w, nw);
	for (size_t k = 0; k < ngroups && !rc; k++)
		rc = write_group(c, &groups[k], ids, res, funcs, ranges);
	/* the answers' strings go with the workers' symcaches below */
	free(c->memo);
	c->memo = NULL;
	/* the persistent cache learns this run's live answers while the
	 * workers' symcaches, which own their strings, are still there */
	for (size_t k = 0; k < ngroups && !rc; k++)
		rc = cache_group(c, &groups[k], vaddrs, live, res);
	for (size_t k = 0; k < ngroups && !rc; k++) {
		const struct group *g = &groups[k];
		char err[1024];
		/* and the units the workers indexed in full, and the unit map */
		for (int i = 0; i < nw && g->dcm && !rc; i++) {
			struct symmodule *wm = symcache_find_module(w[i].sc, g->obj);
			rc = symmodule_each_unit(wm, dcmodule_add_unit, g->dcm);
			if (!rc)
				rc = dcmodule_add_map(g->dcm, symmodule_map(wm));
		}
		if (!rc && g->dcm && dcmodule_save(c->o->cache, g->dcm,
					    symcache_module(g->sc, g->obj, err, sizeof(err)),
					    err, sizeof(err))) {
			if (!c->cache_warned)
				warn(c, "symbol cache: %s (--no-cache skips the cache)", err);
			c->cache_warned = true;
		}
	}
out:
	free(c->memo);
	c->memo = NULL;
	for (int k = 0; k < 2; k++) {
		if (k > 0)
			symcache_free(w[k].sc);
		free(w[k].jobs);
	}
	for (size_t k = 0; k < ngroups; k++)
		free(groups[k].nocall);
	free(groups);
	free(res);
	free(ranges);
	free(vaddrs);
	free(funcs);
	free(live);
	return rc;
}

struct symbolize_preload {
	pthread_t thread;
	struct symcache *sc;
	struct diskcache *dc;
	const char *binary;
};

static void *preload_run(void *arg)
{
	struct symbolize_preload *pl = arg;
	char err[512];
	struct symmodule *mod = symcache_module(pl->sc, pl->binary, err, sizeof(err));
	if (mod && pl->dc)
		diskcache_module(pl->dc, mod, pl->binary);
	return NULL;
}

struct symbolize_preload *symbolize_preload_start(struct symcache *sc, struct diskcache *dc,
						  const char *binary)
{
	struct symbolize_preload *pl = sc && binary ? malloc(sizeof(*pl)) : NULL;
	if (!pl)
		return NULL;
	*pl = (struct symbolize_preload){ .sc = sc, .dc = dc, .binary = binary };
	if (pthread_create(&pl->thread, NULL, preload_run, pl)) {
		free(pl);
		return NULL;
	}
	return pl;
}

void symbolize_preload_finish(struct symbolize_preload *pl)
{
	if (!pl)
		return;
	pthread_join(pl->thread, NULL);
	free(pl);
}

int symbolize_profile(struct profile *p, struct symcache *sc,
		      const struct symbolize_options *o, struct symbolize_stats *st,
		      char *err, size_t errlen)
{
	struct ctx c = { .p = p, .sc = sc, .o = o, .st = st, .memo_bits = STRMEMO_BITS };
	memset(st, 0, sizeof(*st));
	/* No maps but a BINARY: look addresses up in it directly, as jeprof's
	 * fallback entry does.  Only a non-PIE program has known addresses
	 * without maps, and only those inside its segments are its own. */
	if (!p->has_maps && o->binary && !o->no_symbolize) {
		char merr[512];
		struct symmodule *mod = symcache_module(sc, o->binary, merr, sizeof(merr));
		size_t nseg = 0;
		const struct symsegment *segs = mod ? symmodule_segments(mod, &nseg) : NULL;
		if (!mod) {
			warn(&c, "%s", merr);
		} else if (symmodule_elf_type(mod) != ET_EXEC) {
			warn(&c, "the dump has no MAPPED_LIBRARIES section and '%s' is position-independent: its load address is unknown, so no address can be symbolized",
			     o->binary);
		} else {
			int64_t path = intern(&c, o->binary);
			if (path < 0)
				return jh_err(err, errlen, JH_ENOMEM, "out of memory");
			struct pf_mapping m = { .start = 0, .limit = UINT64_MAX, .offset = 0,
						.path = (uint32_t)path, .exec = true, .is_main = true };
			int64_t id = profile_mapping(p, &m);
			if (id < 0)
				return jh_err(err, errlen, JH_ENOMEM, "out of memory");
			p->main_mapping = (uint32_t)id;
			for (size_t i = 0; i < p->nlocs; i++) {
				uint64_t pc = addr_pc(p->locs[i].addr, p->locs[i].leaf);
				for (size_t s = 0; s < nseg; s++)
					if (p->locs[i].mapping == UINT32_MAX && (segs[s].flags & PF_X) &&
					    pc >= segs[s].vaddr && pc - segs[s].vaddr < segs[s].memsz)
						p->locs[i].mapping = (uint32_t)id;
			}
		}
	}
	if (mark_sigframes(&c))
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	uint32_t *ids = malloc((p->nlocs + 1) * sizeof(*ids));
	if (!ids)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	size_t n = 0;
	st->pcs = p->nlocs;
	for (size_t i = 0; i < p->nlocs; i++) {
		struct pf_location *l = &p->locs[i];
		if (l->sym != PF_SYM_NOTYET)
			continue;
		if (p->npresyms) {
			uint32_t names = profile_presym_find(p, addr_pc(l->addr, l->leaf));
			/* jeprof --raw names a gperftools stack's first address
			 * as it is, not at the call */
			if (!names && p->format == PF_FMT_GPERF)
				names = profile_presym_find(p, l->addr);
			if (names) {
				if (set_presym(&c, l, names))
					goto oom;
				continue;
			}
		}
		ids[n++] = (uint32_t)i;
	}
	/* a few strings per address */
	c.memo_bits = STRMEMO_MIN_BITS;
	while (c.memo_bits < STRMEMO_BITS && ((size_t)1 << c.memo_bits) < 4 * n)
		c.memo_bits++;
	if (sort_by_pc(p, ids, n) || symbolize_ids(&c, ids, n))
		goto oom;
	free(ids);
	if (st->main_pcs && !st->main_resolved && p->main_mapping < p->nmaps &&
	    p->maps[p->main_mapping].object)
		st->main_stripped = symmodule_stripped(symcache_find_module(
			sc, strtab_get(&p->strs, p->maps[p->main_mapping].object)));
	size_t left;
	double budget;
	if (debuginfod_budget_spent(&left, &budget))
		warn(&c, "debuginfod: the %g s budget for this run is spent (JHEAP_DEBUGINFOD_BUDGET): %zu lookups were cancelled or not made",
		     budget, left);
	return 0;
oom:
	free(ids);
	return jh_err(err, errlen, JH_ENOMEM, "out of memory while symbolizing");
}
