/*
 * Unit tests for symbolize/cuindex.c and cumap.c on the fixtures of
 * tests/unit/build-fixtures.sh (see tests/unit/symfixtures.h): a unit
 * indexed sparsely, from what the persistent cache gives a later run
 * (its top-level functions and line-table sequences), answers as the
 * whole index does; the unit map made from a cache's description, or
 * from .debug_aranges, finds the unit the full walk finds.
 *
 *   test_cuindex [FIXTURE_DIR]
 */
#include "symbolize/symcache.h"
#include "tests/unit/unit.h"
#include "tests/unit/symfixtures.h"

/* ---- sparse unit indexes (what the persistent cache gives a later run) ---- */

struct unitvec {
	struct {
		uint64_t cuoff;
		struct cuindex_top *tops;
		size_t n;
		struct cuindex_seq *seqs;
		size_t nseqs;
	} *u;
	size_t n, cap;
	size_t nseqs;          /* units given sequences */
};

static int collect_unit(void *arg, uint64_t cuoff, const struct cumap_unitinfo *ui)
{
	const struct cuindex_top *tops = ui->tops;
	size_t n = ui->ntops;
	struct unitvec *v = arg;
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->u = realloc(v->u, v->cap * sizeof *v->u);
	}
	v->u[v->n].cuoff = cuoff;
	v->u[v->n].tops = malloc(n * sizeof *tops);
	memcpy(v->u[v->n].tops, tops, n * sizeof *tops);
	v->u[v->n].n = n;
	v->u[v->n].seqs = malloc((ui->nseqs + 1) * sizeof *ui->seqs);
	if (ui->nseqs)
		memcpy(v->u[v->n].seqs, ui->seqs, ui->nseqs * sizeof *ui->seqs);
	v->u[v->n].nseqs = ui->nseqs;
	v->nseqs += ui->nseqs > 0;
	v->n++;
	return 0;
}

static int count_unit(void *arg, uint64_t cuoff, const struct cumap_unitinfo *u)
{
	(void)cuoff;
	(void)u;
	(*(size_t *)arg)++;
	return 0;
}

static size_t installed;

static void install_units(void *arg, struct cumap *map)
{
	const struct unitvec *v = arg;
	for (size_t i = 0; i < v->n; i++) {
		struct cumap_unitinfo u = { v->u[i].tops, v->u[i].n, v->u[i].seqs, v->u[i].nseqs };
		installed += cumap_set_unit(map, v->u[i].cuoff, &u) == 0;
	}
}

static int same_result(const struct symresult *a, const struct symresult *b)
{
	if (a->status != b->status || a->nframes != b->nframes)
		return 0;
	for (unsigned k = 0; k < a->nframes; k++) {
		const struct symframe *x = &a->frames[k], *y = &b->frames[k];
		if (strcmp(str(x->name), str(y->name)) || strcmp(str(x->linkage), str(y->linkage))
		    || strcmp(str(x->file), str(y->file)) || strcmp(str(x->decl_file), str(y->decl_file))
		    || x->line != y->line || x->column != y->column || x->decl_line != y->decl_line
		    || x->inlined != y->inlined)
			return 0;
	}
	return 1;
}

/* Every address of FILE's code, looked up with full unit indexes and then
 * in fresh caches told the units' top-level functions (one cache per
 * function, so each builds a partial index): the same answers, and no
 * full index built for an address inside one function.  Returns the
 * number of partial lookups compared (0 when FILE is absent). */
static size_t check_sparse(const char *file, int split)
{
	if (!exists(fxpath(file)))
		return 0;
	char err[512];
	struct symcache *full = symcache_new(NULL);
	struct symmodule *m = symcache_module(full, fxpath(file), err, sizeof err);
	CHECK(m != NULL);
	if (!m) {
		symcache_free(full);
		return 0;
	}
	size_t nseg;
	const struct symsegment *seg = symmodule_segments(m, &nseg);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < nseg; i++)
		if (seg[i].flags & PF_X) {
			if (seg[i].vaddr < lo)
				lo = seg[i].vaddr;
			if (seg[i].vaddr + seg[i].memsz > hi)
				hi = seg[i].vaddr + seg[i].memsz;
		}
	CHECK(lo < hi && hi - lo < (64u << 20));
	struct symresult r;
	for (uint64_t a = lo; a < hi; a++)
		symmodule_lookup(m, a, &r);
	struct unitvec v = { 0 };
	symmodule_each_unit(m, collect_unit, &v);
	/* a split-DWARF unit's DIEs live in its .dwo: never offered */
	if (split) {
		CHECK_INT(v.n, 0);
	} else {
		CHECK(v.n > 0);
		/* and the sparse lookups below read those units' line tables
		 * by sequence */
		CHECK(v.nseqs > 0);
	}
	size_t compared = 0, outside = 0;
	for (size_t i = 0; i < v.n; i++)
		for (size_t k = 0; k < v.u[i].n; k++) {
			const struct cuindex_top *t = &v.u[i].tops[k];
			struct symcache *sp = symcache_new(NULL);
			struct symmodule *s = symcache_module(sp, fxpath(file), err, sizeof err);
			installed = 0;
			symmodule_set_units_source(s, install_units, &v);
			for (uint64_t a = t->lo; a < t->hi; a++) {
				struct symresult x, y;
				symmodule_lookup(m, a, &x);
				symmodule_lookup(s, a, &y);
				if (!same_result(&x, &y)) {
					fprintf(stderr, "%s: %#llx differs sparse\n", file,
						(unsigned long long)a);
					CHECK(0);
					break;
				}
				compared++;
			}
			CHECK_INT(installed, v.n);
			size_t nfull = 0;
			symmodule_each_unit(s, count_unit, &nfull);
			CHECK_INT(nfull, 0);
			symcache_free(sp);
		}
	/* addresses outside every function (padding, PLT, start-up code): a
	 * partial index of no function, the same answers */
	if (v.n) {
		struct symcache *sp = symcache_new(NULL);
		struct symmodule *s = symcache_module(sp, fxpath(file), err, sizeof err);
		symmodule_set_units_source(s, install_units, &v);
		for (uint64_t a = lo; a < hi; a++) {
			int inside = 0;
			for (size_t i = 0; i < v.n && !inside; i++)
				for (size_t k = 0; k < v.u[i].n && !inside; k++)
					inside = a >= v.u[i].tops[k].lo && a < v.u[i].tops[k].hi;
			if (inside)
				continue;
			struct symresult x, y;
			symmodule_lookup(m, a, &x);
			symmodule_lookup(s, a, &y);
			outside++;
			if (!same_result(&x, &y)) {
				fprintf(stderr, "%s: %#llx differs outside\n", file, (unsigned long long)a);
				CHECK(0);
				break;
			}
		}
		symcache_free(sp);
	}
	/* every address in one cache: a partial index that meets an address
	 * several functions hold, or more than PARTIAL_MAX_TOPS functions,
	 * becomes a full one in place (its line table kept), same answers */
	size_t upgraded = 0, total_tops = 0;
	if (v.n) {
		struct symcache *sp = symcache_new(NULL);
		struct symmodule *s = symcache_module(sp, fxpath(file), err, sizeof err);
		symmodule_set_units_source(s, install_units, &v);
		for (uint64_t a = lo; a < hi; a++) {
			struct symresult x, y;
			symmodule_lookup(m, a, &x);
			symmodule_lookup(s, a, &y);
			if (!same_result(&x, &y)) {
				fprintf(stderr, "%s: %#llx differs in one sparse cache\n", file,
					(unsigned long long)a);
				CHECK(0);
				break;
			}
		}
		symmodule_each_unit(s, count_unit, &upgraded);
		symcache_free(sp);
		for (size_t i = 0; i < v.n; i++)
			total_tops += v.u[i].n;
		/* 16 functions in a unit (PARTIAL_MAX_TOPS) make it full */
		if (total_tops > 16 * v.n)
			CHECK(upgraded > 0);
	}
	for (size_t i = 0; i < v.n; i++) {
		free(v.u[i].tops);
		free(v.u[i].seqs);
	}
	free(v.u);
	symcache_free(full);
	return compared;
}

TEST(test_sparse_units)
{
	static const char *const files[] = { "c_O0", "c_O0_dw4", "c_nopie", "cxx_gcc",
					     "cxx_gcc4", "cxx_clang", "cxx_clang4", "lib.so",
					     "c_many" };
	size_t total = 0;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		total += check_sparse(files[i], 0);
	check_sparse("cxx_split", 1);
	CHECK(total > 1000);
}

/* A map with split-DWARF units cannot be described: their DIEs are in
 * other files. */
TEST(test_map_known_split)
{
	char err[512];
	struct symcache *sc = symcache_new(NULL);
	struct symmodule *m = symcache_module(sc, fxpath("cxx_split"), err, sizeof err);
	CHECK(m != NULL);
	struct symresult r;
	size_t nsym = 0;
	const struct symsegment *segs = m ? symmodule_segments(m, &nsym) : NULL;
	for (size_t i = 0; segs && i < nsym; i++)
		if (segs[i].flags & PF_X)
			symmodule_lookup(m, segs[i].vaddr + segs[i].memsz / 2, &r);
	const struct cumap *map = symmodule_map(m);
	CHECK(map != NULL);
	if (map)
		CHECK(cumap_units(map, NULL, 0) == 0);
	symcache_free(sc);
}

/* What a lookup of PC in MAP sees, as DIE offsets: each candidate unit's
 * CU DIE, its scope chain and its line row, into OUT (at most MAX). */
static size_t map_answer(struct cumap *map, uint64_t pc, uint64_t *out, size_t max)
{
	struct cuindex *cands[8];
	size_t nc = cumap_find(map, pc, cands, 8), n = 0;
	for (size_t i = 0; i < nc && n + 4 < max; i++) {
		uint32_t chain[CUINDEX_MAX_CHAIN];
		size_t k = cuindex_lookup(cands[i], pc, chain, CUINDEX_MAX_CHAIN);
		struct cuindex_line ln = { 0 };
		out[n++] = dwarf_dieoffset(cuindex_cudie(cands[i]));
		out[n++] = k;
		for (size_t j = 0; j < k && n + 3 < max; j++)
			out[n++] = dwarf_dieoffset(cuindex_scope_die(cands[i], chain[j]));
		out[n++] = cuindex_line(cands[i], pc, &ln) == 0 ? (uint64_t)ln.line : UINT64_MAX;
	}
	return n;
}

/* A map made from another's description (cumap_new_known) against
 * the map read from the DWARF: the same ranges, and at both ends and the
 * middle of every range the same units, scopes and lines.  Also the
 * descriptions it must refuse.  Returns the addresses compared. */
static size_t check_map_known(Dwarf *dw, struct cumap *a,
			      const struct cuindex_range *valid, size_t nvalid)
{
	size_t nu = cumap_units(a, NULL, 0), nr = cumap_ranges(a, NULL, 0);
	uint64_t *units = calloc(nu + 1, sizeof *units);
	struct cumap_range *ra = calloc(nr + 1, sizeof *ra), *rk = calloc(nr + 1, sizeof *rk);
	size_t compared = 0;
	CHECK(units && ra && rk);
	if (!units || !ra || !rk || !nu)
		goto out;
	cumap_units(a, units, nu);
	cumap_ranges(a, ra, nr);
	struct cumap *k = cumap_new_known(dw, valid, nvalid, units, nu, ra, nr);
	CHECK(k != NULL);
	if (!k)
		goto out;
	CHECK(cumap_ranges(k, rk, nr) == nr && !memcmp(ra, rk, nr * sizeof *ra));
	uint64_t wa[512], wk[512];
	for (size_t i = 0; i < nr; i++) {
		uint64_t pcs[3] = { ra[i].lo, ra[i].lo + (ra[i].hi - ra[i].lo) / 2,
				    ra[i].hi > ra[i].lo ? ra[i].hi - 1 : ra[i].lo };
		for (int j = 0; j < 3; j++) {
			size_t x = map_answer(a, pcs[j], wa, 512), y = map_answer(k, pcs[j], wk, 512);
			int same = x == y && !memcmp(wa, wk, x * sizeof *wa);
			if (!same)
				fprintf(stderr, "  known map differs at %#llx\n", (unsigned long long)pcs[j]);
			CHECK(same);
			compared++;
		}
	}
	cumap_free(k);
	/* descriptions no map gives: refused */
	if (nu > 1) {
		uint64_t t = units[0];
		units[0] = units[1];
		units[1] = t;
		CHECK(!cumap_new_known(dw, valid, nvalid, units, nu, ra, nr));
		units[1] = units[0];
		units[0] = t;
	}
	if (nr > 1 && (ra[0].lo != ra[nr - 1].lo)) {
		struct cumap_range t = ra[0];
		ra[0] = ra[nr - 1];
		ra[nr - 1] = t;
		CHECK(!cumap_new_known(dw, valid, nvalid, units, nu, ra, nr));
		ra[nr - 1] = ra[0];
		ra[0] = t;
	}
	if (nr) {
		uint64_t t = ra[0].cuoff;
		ra[0].cuoff = units[nu - 1] + 1;
		CHECK(!cumap_new_known(dw, valid, nvalid, units, nu, ra, nr));
		ra[0].cuoff = t;
	}
	/* an offset that holds no unit DIE: that unit has no index, the
	 * others answer */
	units[0] += 1;
	for (size_t i = 0; i < nr; i++)
		if (ra[i].cuoff == units[0] - 1)
			ra[i].cuoff = units[0];
	k = cumap_new_known(dw, valid, nvalid, units, nu, ra, nr);
	CHECK(k != NULL);
	for (size_t i = 0; k && i < nr; i++) {
		struct cuindex *c[8];
		size_t n = cumap_find(k, ra[i].lo, c, 8);
		for (size_t j = 0; j < n; j++) {
			uint64_t off = dwarf_dieoffset(cuindex_cudie(c[j]));
			CHECK(off != units[0] && off != units[0] - 1);
		}
	}
	cumap_free(k);
out:
	free(units);
	free(ra);
	free(rk);
	return compared;
}

/* The unit map read with .debug_aranges against the map read from the CU
 * DIEs alone: the same ranges, in the same order, so every lookup sees the
 * same candidate units.  *WITH counts files with aranges, *RANGES the
 * map's ranges.  Returns 1 when FILE has DWARF. */
static int check_map_aranges(const char *path, size_t *with, size_t *ranges)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	int has = dw != NULL;
	if (dw) {
		/* the executable segments, as symcache gives them */
		struct cuindex_range valid[16];
		size_t nvalid = 0, nph = 0;
		elf_getphdrnum(elf, &nph);
		for (size_t i = 0; i < nph && nvalid < 16; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
				valid[nvalid++] = (struct cuindex_range){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz };
		}
		struct cumap *a = cumap_new_opts(dw, valid, nvalid, true);
		struct cumap *d = cumap_new_opts(dw, valid, nvalid, false);
		CHECK(a && d);
		if (a && d) {
			size_t na = cumap_ranges(a, NULL, 0), nd = cumap_ranges(d, NULL, 0);
			struct cumap_range *ra = calloc(na + 1, sizeof *ra);
			struct cumap_range *rd = calloc(nd + 1, sizeof *rd);
			CHECK(ra && rd);
			if (ra && rd) {
				cumap_ranges(a, ra, na);
				cumap_ranges(d, rd, nd);
				int same = na == nd && !memcmp(ra, rd, na * sizeof *ra);
				if (!same)
					fprintf(stderr, "  %s: %zu ranges from aranges, %zu from the DIEs\n",
						path, na, nd);
				CHECK(same);
			}
			Dwarf_Aranges *ar;
			size_t nar = 0;
			if (dwarf_getaranges(dw, &ar, &nar) == 0 && nar)
				(*with)++;
			*ranges += na;
			free(ra);
			free(rd);
			if (cumap_units(a, NULL, 0))
				CHECK(check_map_known(dw, a, valid, nvalid) == 3 * na);
		}
		cumap_free(a);
		cumap_free(d);
		dwarf_end(dw);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return has;
}

static int add_debug_file(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	static size_t files, with, ranges;
	if (!p) {
		printf("  map from aranges: %zu files (%zu with aranges), %zu ranges alike\n",
		       files, with, ranges);
		CHECK(with > 0);
		return 0;
	}
	if (flag == FTW_F && files < 400 && ends_with(p, ".debug"))
		files += (size_t)check_map_aranges(p, &with, &ranges);
	return 0;
}

/* The map with .debug_aranges (gcc writes them) against the map of the
 * DIEs alone: the aranges add no range the DIEs lack, on the fixtures (the
 * clang ones placed by their DIEs alone) and the system's separate debug
 * files when there are any. */
TEST(test_map_aranges)
{
	static const char *const files[] = { "c_O0", "c_O0_dw4", "c_nopie", "cxx_gcc",
					     "cxx_gcc4", "lib.so", "cxx_clang", "cxx_clang4" };
	size_t with = 0, ranges = 0, clang_ranges = 0;
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		size_t before = ranges;
		CHECK(check_map_aranges(fxpath(files[i]), &with, &ranges));
		if (!strncmp(files[i], "cxx_clang", 9))
			clang_ranges += ranges - before;
	}
	CHECK(with >= 6);        /* the gcc fixtures */
	CHECK(clang_ranges > 0); /* clang's: from the DIEs */
	if (exists("/usr/lib/debug/.build-id")) {
		nftw("/usr/lib/debug/.build-id", add_debug_file, 16, FTW_PHYS);
		add_debug_file(NULL, NULL, 0, NULL);
	}
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/jheap-fixtures.XXXXXX";
	int made;

	fixtures_find(argc, argv, tmp, &made);
	if (!fx[0]) {
		printf(FIXTURES_SKIP_LINE);
	} else {
		RUN(test_sparse_units);
		RUN(test_map_aranges);
		RUN(test_map_known_split);
	}
	fixtures_done(tmp, made);
	return UNIT_END();
}
