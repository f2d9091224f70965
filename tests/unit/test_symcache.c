/*
 * Unit tests for symbolize/symcache.c and cuindex.c against object files
 * compiled at test time by tests/unit/build-fixtures.sh.
 *
 *   test_symcache [FIXTURE_DIR]     run the tests on the fixtures in
 *                                   FIXTURE_DIR or $JHEAP_FIXTURES, else in a
 *                                   temporary dir.  Run from the repository
 *                                   root, missing or stale fixtures are built
 *                                   there first; SKIP when there are none.
 *   test_symcache --lookup FILE [DEBUGDIR...] < addresses
 *                                   print the frames of each hex address the
 *                                   way llvm-symbolizer --inlining does (for
 *                                   cross-checks and timing).
 */
#include "symbolize/symcache.h"
#include "tests/unit/unit.h"

#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char fx[1024];

static const char *str(const char *s)
{
	return s ? s : "(null)";
}

static const char *fxpath(const char *name)
{
	static char buf[8][4096];
	static int i;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof buf[i], "%s/%s", fx, name);
	return buf[i];
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* Symbol NAME's value and size from .symtab (or .dynsym) of PATH. */
static int find_sym(const char *path, const char *name, uint64_t *val, uint64_t *size)
{
	int fd = open(path, O_RDONLY), found = 0;
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	for (int pass = 0; elf && pass < 2 && !found; pass++) {
		Elf_Scn *scn = NULL;
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh)
			    || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; d && i < n; i++) {
				GElf_Sym s;
				const char *nm;
				if (gelf_getsym(d, (int)i, &s) && s.st_value
				    && (nm = elf_strptr(elf, sh.sh_link, s.st_name))
				    && strcmp(nm, name) == 0) {
					*val = s.st_value;
					*size = s.st_size;
					found = 1;
					break;
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static int find_section(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY), found = 0;
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *nm;
			if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(elf, shstrndx, sh.sh_name))
			    && strcmp(nm, name) == 0) {
				*addr = sh.sh_addr;
				*size = sh.sh_size;
				found = 1;
				break;
			}
		}
	elf_end(elf);
	close(fd);
	return found;
}

/* Line number of the line of fixture source SRC holding "MARK:<mark>". */
static int mark_line(const char *src, const char *mark)
{
	char line[1024], want[128];
	int n = 0, found = 0;
	FILE *f = fopen(fxpath(src), "r");
	snprintf(want, sizeof want, "MARK:%s", mark);
	while (f && fgets(line, sizeof line, f)) {
		n++;
		char *p = strstr(line, want);
		if (p && !(p[strlen(want)] >= 'a' && p[strlen(want)] <= 'z')
		    && p[strlen(want)] != '_') {
			found = n;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);
	return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- tests ---- */

TEST(test_errors)
{
	struct symcache *sc = symcache_new(NULL);
	char err[512], err2[512];

	CHECK(sc != NULL);
	CHECK(symcache_module(sc, "/nonexistent/x.so", err, sizeof err) == NULL);
	CHECK_STR(err, "cannot open '/nonexistent/x.so': No such file or directory");
	err2[0] = '\0';
	CHECK(symcache_module(sc, "/nonexistent/x.so", err2, sizeof err2) == NULL);
	CHECK_STR(err2, err);

	char want[5000];
	if (!fx[0])
		goto out;
	snprintf(want, sizeof want, "'%s' is not an ELF file", fxpath("notelf.txt"));
	CHECK(symcache_module(sc, fxpath("notelf.txt"), err, sizeof err) == NULL);
	CHECK_STR(err, want);
	CHECK(symcache_module(sc, fxpath("notelf.txt"), err2, sizeof err2) == NULL);
	CHECK_STR(err2, want);
	CHECK(symcache_module(sc, fx, err, sizeof err) == NULL);
	/* a folder is never opened (lib/safefile.c) */
	CHECK(strstr(err, "is not a regular file (a folder)") != NULL);
out:;
	struct symresult r;
	symmodule_lookup(NULL, 0x1000, &r);
	CHECK_INT(r.status, SYM_NONE);
	symcache_free(sc);
	symcache_free(NULL);
}

static void check_c(const char *file, int elf_type)
{
	struct symcache *sc = symcache_new(NULL);
	char err[512];
	struct symmodule *m = symcache_module(sc, fxpath(file), err, sizeof err);
	int decl = mark_line("fix_c.c", "c_leaf_decl");
	int body = mark_line("fix_c.c", "c_leaf_body");
	uint64_t addr = 0, size = 0;

	CHECK(m != NULL);
	CHECK(decl > 0 && body == decl + 1);
	CHECK(find_sym(fxpath(file), "c_leaf", &addr, &size) && size > 0);
	if (!m || !size)
		goto out;
	CHECK_INT(symmodule_elf_type(m), elf_type);
	size_t nseg;
	const struct symsegment *seg = symmodule_segments(m, &nseg);
	int nx = 0;
	for (size_t i = 0; i < nseg; i++)
		nx += !!(seg[i].flags & PF_X);
	CHECK(nseg >= 2 && nx == 1 && seg[0].offset == 0);
	CHECK(addr >= seg[0].vaddr);
	CHECK_STR(symmodule_debug_path(m), fxpath(file));
	size_t bl;
	CHECK(symmodule_build_id(m, &bl) != NULL && bl == 20);

	struct symresult r, r2;
	symmodule_lookup(m, addr, &r);
	CHECK_INT(r.status, SYM_DWARF);
	CHECK_INT(r.nframes, 1);
	if (r.nframes == 1) {
		CHECK_STR(r.frames[0].name, "c_leaf");
		CHECK_STR(r.frames[0].linkage, "c_leaf");
		CHECK(ends_with(r.frames[0].file, "/fix_c.c"));
		CHECK_INT(r.frames[0].line, decl);
		CHECK(ends_with(r.frames[0].decl_file, "/fix_c.c"));
		CHECK_INT(r.frames[0].decl_line, decl);
		CHECK_INT(r.frames[0].inlined, 0);
	}
	symmodule_lookup(m, addr, &r2);
	CHECK(r2.frames == r.frames && r2.status == r.status);

	int saw_body = 0;
	for (uint64_t pc = addr; pc < addr + size; pc++) {
		symmodule_lookup(m, pc, &r);
		if (r.status != SYM_DWARF || r.nframes != 1
		    || !r.frames[0].name || strcmp(r.frames[0].name, "c_leaf")
		    || r.frames[0].line < decl || r.frames[0].line > decl + 5) {
			fprintf(stderr, "%s: pc %#llx: bad answer\n", file, (unsigned long long)pc);
			CHECK(0);
			break;
		}
		saw_body |= r.frames[0].line == body;
		/* one copy of each string */
		CHECK(r.frames[0].name == r2.frames[0].name);
	}
	CHECK(saw_body);
	if (find_sym(fxpath(file), "c_static", &addr, &size)) {
		symmodule_lookup(m, addr + size - 1, &r);
		CHECK_INT(r.status, SYM_DWARF);
		CHECK(r.nframes == 1 && r.frames[0].name && !strcmp(r.frames[0].name, "c_static"));
	} else {
		CHECK(0);
	}
out:
	symcache_free(sc);
}

TEST(test_c_dwarf5) { check_c("c_O0", ET_DYN); }
TEST(test_c_dwarf4) { check_c("c_O0_dw4", ET_DYN); }
TEST(test_c_exec) { check_c("c_nopie", ET_EXEC); }

static const struct symframe *frame_named(const struct symresult *r, unsigned i, const char *name)
{
	return i < r->nframes && r->frames[i].name && !strcmp(r->frames[i].name, name)
	       ? &r->frames[i] : NULL;
}

/* Every pc of ns::Holder<int>::add: the real function outermost, and the
 * two always_inline helpers inlined into it with their call lines. */
static void check_cxx_module(struct symmodule *m, const char *symfile, const char *label)
{
	uint64_t addr, size;
	int inner_decl = mark_line("fix_cxx.cc", "inner_decl");
	int inner_body = mark_line("fix_cxx.cc", "inner_body");
	int outer_decl = mark_line("fix_cxx.cc", "outer_decl");
	int outer_call = mark_line("fix_cxx.cc", "outer_call");
	int add_call = mark_line("fix_cxx.cc", "add_call");
	int saw3 = 0, saw_body = 0, bad = 0;

	CHECK(find_sym(symfile, "_ZN2ns6HolderIiE3addEi", &addr, &size) && size > 0);
	for (uint64_t pc = addr; pc < addr + size && !bad; pc++) {
		struct symresult r;
		symmodule_lookup(m, pc, &r);
		unsigned n = r.nframes;
		const struct symframe *out = n ? &r.frames[n - 1] : NULL;
		if (r.status != SYM_DWARF || !frame_named(&r, n - 1, "ns::Holder<int>::add(int)")
		    || strcmp(out->linkage, "_ZN2ns6HolderIiE3addEi") || out->inlined
		    || !ends_with(out->file, "/fix_cxx.cc")) {
			fprintf(stderr, "%s: pc %#llx: status %d, %u frames, outer %s\n", label,
				(unsigned long long)pc, r.status, n, out ? str(out->name) : "-");
			bad = 1;
			break;
		}
		if (n >= 3) {
			/* gcc gives static functions no linkage name, so only
			 * clang's names carry the parameters (addr2line and
			 * llvm-symbolizer print the same). */
			const struct symframe *in = frame_named(&r, 0, "helper_inner(int)");
			const struct symframe *mid = frame_named(&r, 1, "helper_outer(int)");
			if (!in)
				in = frame_named(&r, 0, "helper_inner");
			if (!mid)
				mid = frame_named(&r, 1, "helper_outer");
			if (!in || !mid || !in->inlined || !mid->inlined || mid->line != outer_call
			    || out->line != add_call || in->decl_line != inner_decl
			    || mid->decl_line != outer_decl || !ends_with(in->file, "/fix_cxx.cc")) {
				fprintf(stderr, "%s: pc %#llx: bad inline chain: %s:%d / %s:%d / %d\n",
					label, (unsigned long long)pc, str(r.frames[0].name),
					r.frames[0].line, str(r.frames[1].name), r.frames[1].line, out->line);
				bad = 1;
			}
			saw3 = 1;
			saw_body |= in && in->line == inner_body;
		}
	}
	CHECK(!bad);
	CHECK(saw3);
	CHECK(saw_body);

	/* gcc moves the unlikely branch of check() into check.cold, which
	 * only DW_AT_ranges ties to its function. */
	if (find_sym(symfile, "_ZN2ns6HolderIiE5checkEi.cold", &addr, &size)) {
		struct symresult r;
		symmodule_lookup(m, addr, &r);
		CHECK_INT(r.status, SYM_DWARF);
		CHECK(r.nframes >= 1 && frame_named(&r, r.nframes - 1, "ns::Holder<int>::check(int)"));
	}
	if (find_sym(symfile, "_ZN2ns6HolderIlE3addEl", &addr, &size)) {
		struct symresult r;
		symmodule_lookup(m, addr + size / 2, &r);
		CHECK(r.nframes >= 1 && frame_named(&r, r.nframes - 1, "ns::Holder<long>::add(long)"));
	} else {
		CHECK(0);
	}
}

static void check_cxx(const char *file)
{
	if (!exists(fxpath(file))) {
		fprintf(stderr, "SKIP %s: not built\n", file);
		return;
	}
	struct symcache *sc = symcache_new(NULL);
	char err[512];
	struct symmodule *m = symcache_module(sc, fxpath(file), err, sizeof err);
	CHECK(m != NULL);
	if (m)
		check_cxx_module(m, fxpath(file), file);
	symcache_free(sc);
}

TEST(test_cxx_gcc) { check_cxx("cxx_gcc"); }
TEST(test_cxx_gcc_dwarf4) { check_cxx("cxx_gcc4"); }
TEST(test_cxx_clang) { check_cxx("cxx_clang"); }
TEST(test_cxx_clang_dwarf4) { check_cxx("cxx_clang4"); }
TEST(test_cxx_split_dwarf) { check_cxx("cxx_split"); check_cxx("cxx_clang_split"); }

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

TEST(test_stripped)
{
	struct symcache *sc = symcache_new(NULL);
	char err[512];
	uint64_t addr = 0, size = 0, plt = 0, pltsize = 0;
	struct symresult r;

	/* strip -s: only .dynsym is left */
	struct symmodule *m = symcache_module(sc, fxpath("lib_s.so"), err, sizeof err);
	CHECK(m != NULL);
	CHECK(symmodule_debug_path(m) == NULL);
	CHECK_INT(symmodule_elf_type(m), ET_DYN);
	CHECK(find_sym(fxpath("lib_s.so"), "lib_exported", &addr, &size) && size > 1);
	symmodule_lookup(m, addr + size - 1, &r);
	CHECK_INT(r.status, SYM_SYMTAB);
	CHECK_INT(r.nframes, 1);
	if (r.nframes == 1) {
		CHECK_STR(r.frames[0].name, "lib_exported");
		CHECK_STR(r.frames[0].linkage, "lib_exported");
		CHECK(r.frames[0].file == NULL && r.frames[0].line == 0);
	}
	/* the padding after it is nobody's, though lib_exported is nearest */
	uint64_t other = 0, osize = 0;
	CHECK(find_sym(fxpath("lib_s.so"), "lib_other", &other, &osize));
	if (addr + size < other) {
		symmodule_lookup(m, addr + size, &r);
		CHECK_INT(r.status, SYM_NONE);
	}
	/* a static function only .symtab named: nothing covers it now */
	CHECK(find_sym(fxpath("lib.so"), "lib_hidden", &addr, &size) && size > 0);
	symmodule_lookup(m, addr, &r);
	CHECK_INT(r.status, SYM_NONE);
	CHECK_INT(r.nframes, 0);
	CHECK(find_section(fxpath("lib_s.so"), ".plt", &plt, &pltsize) && pltsize > 0);
	symmodule_lookup(m, plt + 4, &r);
	CHECK_INT(r.status, SYM_NONE);
	symmodule_lookup(m, plt + 4, &r);
	CHECK_INT(r.status, SYM_NONE);

	/* the same library with everything */
	m = symcache_module(sc, fxpath("lib.so"), err, sizeof err);
	CHECK(m != NULL);
	symmodule_lookup(m, addr, &r);
	CHECK_INT(r.status, SYM_DWARF);
	CHECK(r.nframes >= 1 && frame_named(&r, r.nframes - 1, "lib_hidden"));
	symmodule_lookup(m, plt + 4, &r);
	CHECK_INT(r.status, SYM_NONE);

	/* strip --strip-debug keeps .symtab: demangled name, raw linkage */
	m = symcache_module(sc, fxpath("cxx_nodebug"), err, sizeof err);
	CHECK(m != NULL);
	CHECK(symmodule_debug_path(m) == NULL);
	CHECK(find_sym(fxpath("cxx_nodebug"), "_ZN2ns6HolderIiE3addEi", &addr, &size));
	symmodule_lookup(m, addr + 1, &r);
	CHECK_INT(r.status, SYM_SYMTAB);
	CHECK(r.nframes == 1 && frame_named(&r, 0, "ns::Holder<int>::add(int)"));
	if (r.nframes == 1)
		CHECK_STR(r.frames[0].linkage, "_ZN2ns6HolderIiE3addEi");
	symcache_free(sc);
}

static void check_debug_dir(const char *file, const char *dir, const char *want_debug)
{
	const char *dirs[] = { dir, NULL };
	struct symcache_options o = { dirs };
	struct symcache *sc = symcache_new(&o);
	char err[512];
	struct symmodule *m = symcache_module(sc, fxpath(file), err, sizeof err);

	CHECK(m != NULL);
	if (!m) {
		symcache_free(sc);
		return;
	}
	if (want_debug)
		CHECK_STR(symmodule_debug_path(m), want_debug);
	else
		CHECK(symmodule_debug_path(m) != NULL);
	check_cxx_module(m, fxpath("cxx_gcc"), file);
	symcache_free(sc);
}

TEST(test_separate_debug)
{
	char id[128] = "", want[8192];
	FILE *f = fopen(fxpath("cxx_gcc.buildid"), "r");
	if (f) {
		if (!fgets(id, sizeof id, f))
			id[0] = '\0';
		fclose(f);
		id[strcspn(id, "\n")] = '\0';
	}
	CHECK(strlen(id) == 40);

	/* without the dirs the debug files are not found */
	struct symcache *sc = symcache_new(NULL);
	char err[512];
	struct symmodule *m = symcache_module(sc, fxpath("cxx_link"), err, sizeof err);
	uint64_t addr, size;
	struct symresult r;
	CHECK(m && symmodule_debug_path(m) == NULL);
	CHECK(find_sym(fxpath("cxx_gcc"), "_ZN2ns6HolderIiE3addEi", &addr, &size));
	symmodule_lookup(m, addr, &r);
	CHECK_INT(r.status, SYM_SYMTAB);
	size_t bl;
	const unsigned char *b = symmodule_build_id(m, &bl);
	char hex[128] = "";
	for (size_t i = 0; b && i < bl && i < 60; i++)
		sprintf(hex + 2 * i, "%02x", b[i]);
	CHECK_STR(hex, id);
	symcache_free(sc);

	/* build id under DIR/.build-id */
	snprintf(want, sizeof want, "%s/bid/.build-id/%.2s/%s.debug", fx, id, id + 2);
	check_debug_dir("cxx_nodebug", fxpath("bid"), want);
	/* .gnu_debuglink in DIR */
	check_debug_dir("cxx_link", fxpath("dl"), fxpath("dl/cxx_link.debug"));
	/* DIR/<path of the object> */
	snprintf(want, sizeof want, "%s/sys%s/cxx_link", fx, fx);
	check_debug_dir("cxx_link", fxpath("sys"), want);
}

TEST(test_libc)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct symcache *sc = symcache_new(NULL);
	char err[512], dbg[512];
	struct symmodule *m = symcache_module(sc, libc, err, sizeof err);
	size_t bl;
	const unsigned char *b = m ? symmodule_build_id(m, &bl) : NULL;

	if (!m || !b || bl < 2) {
		fprintf(stderr, "SKIP test_libc: no %s with a build id\n", libc);
		goto out;
	}
	int n = snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%02x/", b[0]);
	for (size_t i = 1; i < bl; i++)
		n += snprintf(dbg + n, sizeof dbg - n, "%02x", b[i]);
	snprintf(dbg + n, sizeof dbg - n, ".debug");
	if (!exists(dbg)) {
		fprintf(stderr, "SKIP test_libc: %s missing (libc6-dbg)\n", dbg);
		goto out;
	}
	CHECK(symmodule_debug_path(m) != NULL);
	uint64_t addr, size;
	struct symresult r;
	CHECK(find_sym(libc, "malloc", &addr, &size));
	symmodule_lookup(m, addr + 4, &r);
	CHECK_INT(r.status, SYM_DWARF);
	CHECK(r.nframes >= 1);
	if (r.nframes >= 1) {
		const struct symframe *f = &r.frames[r.nframes - 1];
		CHECK(f->name && strstr(f->name, "malloc"));
		CHECK(ends_with(r.frames[0].file, ".c") && r.frames[0].line > 0);
	}
	if (find_sym(symmodule_debug_path(m), "__libc_start_call_main", &addr, &size)) {
		symmodule_lookup(m, addr + size / 2, &r);
		CHECK_INT(r.status, SYM_DWARF);
		CHECK(r.nframes >= 1
		      && frame_named(&r, r.nframes - 1, "__libc_start_call_main")
		      && r.frames[0].line > 0);
	} else {
		CHECK(0);
	}
out:
	symcache_free(sc);
}

/* ---- fixtures and the lookup mode ---- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static int build_fixtures(const char *dir)
{
	const char *script = "tests/unit/build-fixtures.sh";
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 1);
		execlp("sh", "sh", script, dir, (char *)NULL);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int lookup_mode(int argc, char **argv)
{
	struct symcache_options o = { (const char *const *)argv + 3 };
	struct symcache *sc = symcache_new(&o);
	char err[512], line[256];
	struct symmodule *m = symcache_module(sc, argv[2], err, sizeof err);
	struct timespec t0, t1;
	double spent = 0;
	unsigned long n = 0;

	(void)argc;
	if (!m) {
		fprintf(stderr, "%s\n", err);
		symcache_free(sc);
		return 1;
	}
	while (fgets(line, sizeof line, stdin)) {
		uint64_t a = strtoull(line, NULL, 16);
		struct symresult r;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		symmodule_lookup(m, a, &r);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		spent += (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		n++;
		if (r.nframes == 0)
			printf("??\n??:0:0\n");
		for (unsigned i = 0; i < r.nframes; i++)
			printf("%s\n%s:%d:%d\n", r.frames[i].name ? r.frames[i].name : "??",
			       r.frames[i].file ? r.frames[i].file : "??",
			       r.frames[i].line, r.frames[i].column);
		printf("\n");
	}
	fprintf(stderr, "%lu lookups in %.3f ms\n", n, spent * 1e3);
	symcache_free(sc);
	return 0;
}

/* Whether DIR needs (re)building: no stamp, or a fixture source newer. */
static int fixtures_stale(const char *dir)
{
	static const char *const srcs[] = {
		"tests/unit/build-fixtures.sh", "testdata/unit/fix_c.c",
		"testdata/unit/fix_cxx.cc", "testdata/unit/fix_lib.c",
		"testdata/unit/fix_many.c",
	};
	char stamp[1100];
	struct stat st, ss;

	snprintf(stamp, sizeof stamp, "%s/.built", dir);
	if (stat(stamp, &st) != 0)
		return 1;
	for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
		if (stat(srcs[i], &ss) == 0 && ss.st_mtime > st.st_mtime)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/jheap-fixtures.XXXXXX";
	int made = 0;

	elf_version(EV_CURRENT);
	if (argc >= 3 && !strcmp(argv[1], "--lookup"))
		return lookup_mode(argc, argv);
	if (argc > 1)
		snprintf(fx, sizeof fx, "%s", argv[1]);
	else if (getenv("JHEAP_FIXTURES"))
		snprintf(fx, sizeof fx, "%s", getenv("JHEAP_FIXTURES"));
	else if (mkdtemp(tmp)) {
		made = 1;
		snprintf(fx, sizeof fx, "%s", tmp);
	}
	/* A named dir is built (or rebuilt after a source change) when the
	 * script is at hand, i.e. when run from the repository root. */
	if (fx[0] && exists("tests/unit/build-fixtures.sh") && fixtures_stale(fx)
	    && build_fixtures(fx) != 0)
		fprintf(stderr, "building fixtures into %s failed\n", fx);
	if (fx[0] && !exists(fxpath("c_O0")))
		fx[0] = '\0';
	RUN(test_errors);
	if (!fx[0]) {
		printf("SKIP: no fixtures (run tests/unit/build-fixtures.sh DIR; pass DIR)\n");
	} else {
		RUN(test_c_dwarf5);
		RUN(test_c_dwarf4);
		RUN(test_c_exec);
		RUN(test_cxx_gcc);
		RUN(test_cxx_gcc_dwarf4);
		RUN(test_cxx_clang);
		RUN(test_cxx_clang_dwarf4);
		RUN(test_cxx_split_dwarf);
		RUN(test_sparse_units);
		RUN(test_map_aranges);
		RUN(test_map_known_split);
		RUN(test_stripped);
		RUN(test_separate_debug);
		RUN(test_libc);
	}
	if (made)
		nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return UNIT_END();
}
