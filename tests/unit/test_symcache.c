/*
 * Unit tests for symbolize/symcache.c: the frames of addresses in object
 * files compiled at test time by tests/unit/build-fixtures.sh (see
 * tests/unit/symfixtures.h): C (DWARF 4 and 5, PIE or not), C++ from gcc
 * and clang with inlining and split DWARF, stripped objects, separate
 * debug files and the installed libc.  The unit indexes and the unit map
 * behind those lookups are test_cuindex.c's.
 *
 *   test_symcache [FIXTURE_DIR]     the tests (symfixtures.h)
 *   test_symcache --lookup FILE [DEBUGDIR...] < addresses
 *                                   print the frames of each hex address the
 *                                   way llvm-symbolizer --inlining does (for
 *                                   cross-checks and timing).
 */
#include "symbolize/symcache.h"
#include "tests/unit/unit.h"
#include "tests/unit/symfixtures.h"

#include <time.h>

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

/* ---- the lookup mode ---- */

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


int main(int argc, char **argv)
{
	char tmp[] = "/tmp/jheap-fixtures.XXXXXX";
	int made;

	if (argc >= 3 && !strcmp(argv[1], "--lookup")) {
		elf_version(EV_CURRENT);
		return lookup_mode(argc, argv);
	}
	fixtures_find(argc, argv, tmp, &made);
	RUN(test_errors);
	if (!fx[0]) {
		printf(FIXTURES_SKIP_LINE);
	} else {
		RUN(test_c_dwarf5);
		RUN(test_c_dwarf4);
		RUN(test_c_exec);
		RUN(test_cxx_gcc);
		RUN(test_cxx_gcc_dwarf4);
		RUN(test_cxx_clang);
		RUN(test_cxx_clang_dwarf4);
		RUN(test_cxx_split_dwarf);
		RUN(test_stripped);
		RUN(test_separate_debug);
		RUN(test_libc);
	}
	fixtures_done(tmp, made);
	return UNIT_END();
}
