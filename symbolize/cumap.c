/*
 * cumap: the units of one DWARF and their ranges, each unit indexed on
 * first use.  See cumap.h.
 */
#include "symbolize/cumap.h"
#include "lib/array.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* More units or ranges than this and the map is refused (bounded memory),
 * as a unit with more function ranges is (cuindex.c). */
#define MAX_MAP_ENTRIES (1u << 26)

/* Grow *P (an array of elements of size ELSZ with capacity *CAP) to hold at
 * least NEED elements.  Returns 0, or -1 when out of memory or too big. */
static int cumap_grow(void **p, size_t *cap, size_t need, size_t elsz)
{
	if (need > *cap && need > MAX_MAP_ENTRIES)
		return -1;
	return jh_grow(p, cap, need, elsz) ? -1 : 0;
}

/* Units walked only to find where their code is (no CU ranges, no aranges);
 * the bound keeps a file of many code-less units cheap. */
#define MAX_RANGELESS_WALKS 4096

struct cuent {
	Dwarf_Die cudie;
	Dwarf_Off off;
	struct cuindex *ci;
	int state;         /* 0 not built, 1 built, -1 failed */
	bool placed;       /* has ranges in the map */
	bool split;        /* a skeleton's split unit: DIEs in another file */
	bool die_unread;   /* cumap_new_known: cudie not read yet */
	/* cumap_set_unit: the unit's top-level functions, sorted by
	 * lo, and maxhi[i] = max(tops[0..i].hi); its line table's sequences */
	struct cuindex_top *tops;
	uint64_t *topmaxhi;
	size_t ntops;
	struct cuindex_seq *seqs;
	size_t nseqs;
};

/* A partial index that has had this many functions added becomes a full
 * one: each addition re-sorts the unit's intervals. */
#define PARTIAL_MAX_TOPS 16

struct curange {
	uint64_t lo, hi;
	uint32_t cu;
};

struct cumap {
	Dwarf *dw;
	struct cuent *cus;
	size_t ncus;
	struct curange *ranges;
	size_t nranges, capranges;
	uint64_t *maxhi;
	struct cuindex_range *valid;
	size_t nvalid;
	bool no_aranges;   /* every unit's ranges from its DIE (tests) */
	/* cumap_names_dir: the comp_dir of the first unit that read
	 * each line table, sorted by the table's offset */
	struct stmtdir { uint64_t off; const char *dir; } *stmts;
	size_t nstmts, capstmts;
};

/* The comp_dir to build the DWARF 2-4 file names of CUDIE's line table
 * with, into *DIR.  libdw reads a table once per offset, with the comp_dir
 * of the unit that asked first; units sharing a DW_AT_stmt_list (dwz's
 * partial units share their CU's) then get those names.  The map does the
 * same, in the order units are read, so the answers stay libdw's without
 * reading every unit's DIE up front.  Returns 0, or -1 out of memory. */
static int cumap_names_dir(struct cumap *map, Dwarf_Die *cudie, const char **dir)
{
	Dwarf_Attribute a;
	Dwarf_Word off;

	*dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	if (!dwarf_attr(cudie, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off) != 0)
		return 0;
	size_t lo = jh_lower_bound_u64(map->stmts, map->nstmts, sizeof *map->stmts,
				       offsetof(struct stmtdir, off), off);
	if (lo < map->nstmts && map->stmts[lo].off == off) {
		*dir = map->stmts[lo].dir;
		return 0;
	}
	if (cumap_grow((void **)&map->stmts, &map->capstmts, map->nstmts + 1,
		       sizeof *map->stmts))
		return -1;
	memmove(&map->stmts[lo + 1], &map->stmts[lo], (map->nstmts - lo) * sizeof *map->stmts);
	map->stmts[lo] = (struct stmtdir){ off, *dir };
	map->nstmts++;
	return 0;
}

static int cumap_add(struct cumap *map, uint64_t lo, uint64_t hi, size_t cu)
{
	if (cumap_grow((void **)&map->ranges, &map->capranges, map->nranges + 1,
		       sizeof *map->ranges))
		return -1;
	map->ranges[map->nranges++] = (struct curange){ lo, hi, (uint32_t)cu };
	map->cus[cu].placed = true;
	return 0;
}

/* Reads the CU DIE of a unit of a known map: it must be the first DIE of
 * a compile or partial unit.  Returns 0, or -1 when it is not. */
static int cumap_read_die(struct cumap *map, struct cuent *c)
{
	Dwarf_Die d, first;

	if (!c->die_unread)
		return 0;
	c->die_unread = false;
	if (!dwarf_offdie(map->dw, c->off, &d) || !dwarf_diecu(&d, &first, NULL, NULL) ||
	    dwarf_dieoffset(&first) != c->off)
		return -1;
	int tag = dwarf_tag(&first);
	if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit)
		return -1;
	c->cudie = first;
	return 0;
}

static struct cuindex *cumap_unit(struct cumap *map, size_t cu)
{
	struct cuent *c = &map->cus[cu];

	const char *dir;

	if (c->state == 0) {
		c->ci = cumap_read_die(map, c) || cumap_names_dir(map, &c->cudie, &dir)
			? NULL
			: cuindex_new_unit(&c->cudie, map->valid, map->nvalid, &dir, c->seqs,
					   c->nseqs, false);
		c->state = c->ci ? 1 : -1;
	}
	return c->ci;
}

/* The index of unit CU to look PC up in.  A unit with known top-level
 * functions gets a partial index holding the one function whose ranges
 * hold PC (none: the unit has no function there); when several do, or
 * after PARTIAL_MAX_TOPS functions, it becomes the full index.  The
 * answers are the same either way: the enclosing-scope chain of PC lies
 * inside the top-level function that holds it. */
static struct cuindex *cumap_unit_at(struct cumap *map, size_t cu, uint64_t pc)
{
	struct cuent *c = &map->cus[cu];

	if (!c->ntops || c->state < 0 || (c->state == 1 && !cuindex_partial(c->ci, NULL)))
		return cumap_unit(map, cu);
	if (c->state == 0) {
		const char *dir;
		c->ci = cumap_read_die(map, c) || cumap_names_dir(map, &c->cudie, &dir)
			? NULL
			: cuindex_new_unit(&c->cudie, map->valid, map->nvalid, &dir, c->seqs,
					   c->nseqs, true);
		if (!c->ci) {
			c->state = -1;
			return NULL;
		}
		c->state = 1;
	}
	size_t hit = 0, nhit = 0;
	size_t lo = jh_upper_bound_u64(c->tops, c->ntops, sizeof *c->tops,
				       offsetof(struct cuindex_top, lo), pc);
	for (size_t j = lo; j-- > 0 && c->topmaxhi[j] > pc;)
		if (c->tops[j].hi > pc && (nhit == 0 || c->tops[j].die != c->tops[hit].die)) {
			hit = j;
			nhit++;
		}
	if (nhit == 0)
		return c->ci;
	size_t added = 0;
	cuindex_partial(c->ci, &added);
	if (nhit == 1 && added < PARTIAL_MAX_TOPS
	    && cuindex_add_top(c->ci, map->dw, c->tops[hit].die) == 0)
		return c->ci;
	if (cuindex_make_full(c->ci)) {
		cuindex_free(c->ci);
		c->ci = NULL;
		c->state = -1;
	}
	return c->ci;
}

static size_t cumap_by_offset(const struct cumap *map, Dwarf_Off off)
{
	size_t lo = jh_lower_bound_u64(map->cus, map->ncus, sizeof *map->cus,
				       offsetof(struct cuent, off), off);

	return lo < map->ncus && map->cus[lo].off == off ? lo : SIZE_MAX;
}

/* Ranges from .debug_aranges for every unit it lists with valid code.
 * gcc writes the same ranges here as on the CU DIE (checked on the
 * fixtures, the bench program and 3,288 units of Debian's debug files);
 * they are read besides the DIE's so that a unit whose DIE or aranges
 * leave some of its code out is still found there (llvm-symbolizer and
 * libdw's dwarf_addrdie take a listed unit's aranges alone).  A section
 * libdw cannot read (rustc 1.63 writes terminators in the middle of a
 * unit's list) adds nothing. */
static int cumap_aranges(struct cumap *map)
{
	Dwarf_Aranges *ar;
	size_t nar;

	if (dwarf_getaranges(map->dw, &ar, &nar) != 0)
		return 0;
	for (size_t i = 0; i < nar; i++) {
		Dwarf_Addr a;
		Dwarf_Word len;
		Dwarf_Off off;
		Dwarf_Arange *one = dwarf_onearange(ar, i);
		if (!one || dwarf_getarangeinfo(one, &a, &len, &off) != 0)
			continue;
		size_t cu = cumap_by_offset(map, off);
		if (cu == SIZE_MAX || map->cus[cu].split
		    || !cuindex_range_in(map->valid, map->nvalid, a, a + len))
			continue;
		if (cumap_add(map, a, a + len, cu))
			return -1;
	}
	return 0;
}

/* Units in neither the aranges nor with ranges on their DIE: walked for
 * their functions' ranges. */
static int cumap_rangeless(struct cumap *map)
{
	size_t walks = 0;

	for (size_t cu = 0; cu < map->ncus && walks < MAX_RANGELESS_WALKS; cu++) {
		if (map->cus[cu].placed)
			continue;
		walks++;
		struct cuindex *ci = cumap_unit(map, cu);
		struct cuindex_range r;
		for (size_t i = 0; ci && cuindex_outer_range(ci, i, &r); i++)
			if (cumap_add(map, r.lo, r.hi, cu))
				return -1;
	}
	return 0;
}

static int cumap_range_cmp(const void *a, const void *b)
{
	const struct curange *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

/* map->maxhi for the sorted ranges.  Returns 0, or -1 out of memory. */
static int cumap_maxhi(struct cumap *map)
{
	map->maxhi = malloc((map->nranges + 1) * sizeof *map->maxhi);
	if (!map->maxhi)
		return -1;
	uint64_t mx = 0;
	for (size_t i = 0; i < map->nranges; i++) {
		if (map->ranges[i].hi > mx)
			mx = map->ranges[i].hi;
		map->maxhi[i] = mx;
	}
	return 0;
}

static int cumap_read(struct cumap *map)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	size_t cap = 0, missing = 0;

	while (dwarf_get_units(map->dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		bool split = false;
		if (type == DW_UT_skeleton && dwarf_tag(&subdie) == DW_TAG_compile_unit) {
			cudie = subdie;
			split = true;
		} else if (type != DW_UT_compile && type != DW_UT_partial) {
			continue;
		}
		if (cumap_grow((void **)&map->cus, &cap, map->ncus + 1, sizeof *map->cus))
			return -1;
		size_t i = map->ncus++;
		memset(&map->cus[i], 0, sizeof map->cus[i]);
		map->cus[i].split = split;
		map->cus[i].cudie = cudie;
		map->cus[i].off = dwarf_dieoffset(&cudie);
	}
	if (!map->no_aranges && cumap_aranges(map))
		return -1;
	/* every unit's DIE: what the aranges leave out (clang writes none) */
	for (size_t i = 0; i < map->ncus; i++) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&map->cus[i].cudie, off, &base, &lo, &hi)) > 0)
			if (cuindex_range_in(map->valid, map->nvalid, lo, hi)
			    && cumap_add(map, lo, hi, i))
				return -1;
		if (!map->cus[i].placed)
			missing++;
	}
	if (missing && cumap_rangeless(map))
		return -1;
	if (map->nranges == 0)
		return 0;
	jh_qsort(map->ranges, map->nranges, sizeof *map->ranges, cumap_range_cmp);
	/* a range both the aranges and the DIE give is kept once */
	size_t n = 1;
	for (size_t i = 1; i < map->nranges; i++)
		if (cumap_range_cmp(&map->ranges[i], &map->ranges[n - 1]) != 0)
			map->ranges[n++] = map->ranges[i];
	map->nranges = n;
	return cumap_maxhi(map);
}

/* An empty map of DW with its copy of VALID, or NULL out of memory. */
static struct cumap *cumap_alloc(Dwarf *dw, const struct cuindex_range *valid,
				 size_t nvalid)
{
	struct cumap *map = calloc(1, sizeof *map);

	if (!map)
		return NULL;
	map->dw = dw;
	if (nvalid > 0) {
		map->valid = malloc(nvalid * sizeof *valid);
		if (!map->valid) {
			free(map);
			return NULL;
		}
		memcpy(map->valid, valid, nvalid * sizeof *valid);
		map->nvalid = nvalid;
	}
	return map;
}

struct cumap *cumap_new(Dwarf *dw, const struct cuindex_range *valid,
			size_t nvalid)
{
	return cumap_new_opts(dw, valid, nvalid, true);
}

struct cumap *cumap_new_opts(Dwarf *dw, const struct cuindex_range *valid,
			     size_t nvalid, bool aranges)
{
	struct cumap *map = cumap_alloc(dw, valid, nvalid);

	if (!map)
		return NULL;
	map->no_aranges = !aranges;
	if (cumap_read(map)) {
		cumap_free(map);
		return NULL;
	}
	return map;
}

Dwarf *cumap_dwarf(const struct cumap *map)
{
	return map->dw;
}

size_t cumap_units(const struct cumap *map, uint64_t *out, size_t max)
{
	for (size_t i = 0; i < map->ncus; i++)
		if (map->cus[i].split)
			return 0;
	for (size_t i = 0; i < map->ncus && i < max; i++)
		out[i] = map->cus[i].off;
	return map->ncus;
}

bool cumap_desc_ok(const uint64_t *units, size_t nunits,
		   const struct cumap_range *ranges, size_t nranges)
{
	for (size_t i = 1; i < nunits; i++)
		if (units[i] <= units[i - 1])
			return false;
	for (size_t i = 0; i < nranges; i++) {
		const struct cumap_range *r = &ranges[i], *q = r - 1;
		/* a unit's ranges mostly follow each other: one search each run */
		if (!i || r->cuoff != q->cuoff) {
			size_t u = jh_lower_bound_u64(units, nunits, sizeof *units, 0, r->cuoff);
			if (u == nunits || units[u] != r->cuoff)
				return false;
		}
		if (r->lo > r->hi)
			return false;
		if (i && (q->lo != r->lo ? q->lo > r->lo : q->hi != r->hi ? q->hi > r->hi
			  : q->cuoff > r->cuoff))
			return false;
	}
	return true;
}

struct cumap *cumap_new_known(Dwarf *dw, const struct cuindex_range *valid,
			      size_t nvalid, const uint64_t *units, size_t nunits,
			      const struct cumap_range *ranges, size_t nranges)
{
	if (!cumap_desc_ok(units, nunits, ranges, nranges))
		return NULL;
	struct cumap *map = cumap_alloc(dw, valid, nvalid);

	if (!map)
		return NULL;
	map->cus = calloc(nunits + 1, sizeof *map->cus);
	map->ranges = malloc((nranges + 1) * sizeof *map->ranges);
	if (!map->cus || !map->ranges)
		goto fail;
	map->capranges = nranges + 1;
	for (size_t i = 0; i < nunits; i++) {
		map->cus[i].off = units[i];
		map->cus[i].die_unread = true;
	}
	map->ncus = nunits;
	/* the unit of each range: there (cumap_desc_ok) */
	for (size_t i = 0; i < nranges; i++) {
		uint32_t cu = i && ranges[i].cuoff == ranges[i - 1].cuoff
			? map->ranges[i - 1].cu
			: (uint32_t)cumap_by_offset(map, ranges[i].cuoff);
		map->ranges[i] = (struct curange){ ranges[i].lo, ranges[i].hi, cu };
	}
	map->nranges = nranges;
	if (cumap_maxhi(map))
		goto fail;
	return map;
fail:
	cumap_free(map);
	return NULL;
}

size_t cumap_ranges(const struct cumap *map, struct cumap_range *out,
		    size_t max)
{
	for (size_t i = 0; i < map->nranges && i < max; i++)
		out[i] = (struct cumap_range){ map->ranges[i].lo, map->ranges[i].hi,
						    map->cus[map->ranges[i].cu].off };
	return map->nranges;
}

void cumap_free(struct cumap *map)
{
	if (!map)
		return;
	for (size_t i = 0; i < map->ncus; i++) {
		cuindex_free(map->cus[i].ci);
		free(map->cus[i].tops);
		free(map->cus[i].topmaxhi);
		free(map->cus[i].seqs);
	}
	free(map->cus);
	free(map->stmts);
	free(map->ranges);
	free(map->maxhi);
	free(map->valid);
	free(map);
}

size_t cumap_find(struct cumap *map, uint64_t pc, struct cuindex **out,
		  size_t max)
{
	size_t n = 0;
	size_t lo = jh_upper_bound_u64(map->ranges, map->nranges, sizeof *map->ranges,
				       offsetof(struct curange, lo), pc);
	/* Units overlap only in broken or hand-made DWARF; maxhi bounds the
	 * walk back to the ranges that can still reach pc. */
	for (size_t j = lo; j-- > 0 && map->maxhi[j] > pc && n < max;) {
		if (map->ranges[j].hi <= pc)
			continue;
		struct cuindex *ci = cumap_unit_at(map, map->ranges[j].cu, pc);
		size_t k;
		for (k = 0; k < n && out[k] != ci; k++)
			;
		if (ci && k == n)
			out[n++] = ci;
	}
	return n;
}

int cumap_set_unit(struct cumap *map, uint64_t cuoff,
		   const struct cumap_unitinfo *u)
{
	const struct cuindex_top *tops = u->tops;
	size_t n = u->ntops, ns = u->nseqs;
	size_t cu = cumap_by_offset(map, cuoff);
	if (cu == SIZE_MAX || map->cus[cu].split || map->cus[cu].ntops || !n)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (tops[i].lo >= tops[i].hi || (i && tops[i].lo < tops[i - 1].lo))
			return -1;
	if (!cuindex_seqs_ordered(u->seqs, ns))
		return -1;
	struct cuent *c = &map->cus[cu];
	c->tops = malloc(n * sizeof *c->tops);
	c->topmaxhi = malloc(n * sizeof *c->topmaxhi);
	c->seqs = ns ? malloc(ns * sizeof *c->seqs) : NULL;
	if (!c->tops || !c->topmaxhi || (ns && !c->seqs)) {
		free(c->tops);
		free(c->topmaxhi);
		free(c->seqs);
		c->tops = NULL;
		c->topmaxhi = NULL;
		c->seqs = NULL;
		return -1;
	}
	memcpy(c->tops, tops, n * sizeof *tops);
	if (ns)
		memcpy(c->seqs, u->seqs, ns * sizeof *c->seqs);
	c->nseqs = ns;
	uint64_t mx = 0;
	for (size_t i = 0; i < n; i++) {
		if (tops[i].hi > mx)
			mx = tops[i].hi;
		c->topmaxhi[i] = mx;
	}
	c->ntops = n;
	return 0;
}

int cumap_each_full(struct cumap *map,
		    int (*fn)(void *arg, uint64_t cuoff, const struct cumap_unitinfo *u),
		    void *arg)
{
	struct cuindex_top *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; map && i < map->ncus && !rc; i++) {
		struct cuent *c = &map->cus[i];
		if (c->state != 1 || cuindex_partial(c->ci, NULL) || c->split)
			continue;
		size_t n = cuindex_tops(c->ci, NULL, 0);
		if (!n)
			continue;
		if (n > cap) {
			free(buf);
			cap = n;
			buf = malloc(cap * sizeof *buf);
			if (!buf)
				return -1;
		}
		cuindex_tops(c->ci, buf, n);
		struct cumap_unitinfo u = { buf, n, NULL, 0 };
		u.seqs = cuindex_seq_list(c->ci, &u.nseqs);
		rc = fn(arg, c->off, &u);
	}
	free(buf);
	return rc;
}
