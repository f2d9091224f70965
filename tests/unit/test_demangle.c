/*
 * Unit tests for symcache_demangle (symbolize/demangle.c).
 *
 * The Rust names are real rustc output (rustc 1.95, -C symbol-mangling-version
 * =v0 and =legacy) for tests/unit/build-fixtures.sh's tiny crate and for the
 * standard library.  With a fixture dir (argv[1] or $JHEAP_FIXTURES) holding
 * rust_syms.txt, the names the local rustc produces are checked as well.
 */
#include "symbolize/symcache.h"
#include "tests/unit/unit.h"

static void check_dem(const char *mangled, const char *want, const char *file, int line)
{
	char *got = symcache_demangle(mangled);

	if (want == NULL ? got != NULL : (got == NULL || strcmp(got, want) != 0)) {
		fprintf(stderr, "%s:%d: demangle(%s): expected \"%s\", got \"%s\"\n", file,
			line, mangled ? mangled : "NULL", want ? want : "(null)",
			got ? got : "(null)");
		unit_cur_failed = 1;
	}
	free(got);
}

#define DEM(m, w) check_dem((m), (w), __FILE__, __LINE__)

TEST(test_cxx)
{
	DEM("_ZN2ns6HolderIiE3addEi", "ns::Holder<int>::add(int)");
	DEM("_Z1fv", "f()");
	DEM("_ZL10helper_mixi", "helper_mix(int)");
	DEM("_ZNSt6vectorIiSaIiEE9push_backEOi",
	    "std::vector<int, std::allocator<int> >::push_back(int&&)");
	DEM("_ZSt4cout", "std::cout");
	/* gcc's clone suffixes stay visible */
	DEM("_Z3fooi.isra.0", "foo(int) [clone .isra.0]");
	DEM("_ZN2ns6HolderIiE5checkEi.cold", "ns::Holder<int>::check(int) [clone .cold]");
	/* symbol versions are not part of the name */
	DEM("_ZdlPv@@GLIBCXX_3.4", "operator delete(void*)");
	DEM("_ZdlPv@GLIBCXX_3.4", "operator delete(void*)");
}

TEST(test_rust_legacy)
{
	/* the hash is dropped */
	DEM("_ZN7rustlib3foo17ha8cdb6de94c7b1a0E", "rustlib::foo");
	DEM("_ZN7rustlib5inner10S$LT$T$GT$3get17h744c054ab09f03feE",
	    "rustlib::inner::S<T>::get");
	DEM("_ZN7rustlib6use_it17h63a2477048d23242E", "rustlib::use_it");
	DEM("_ZN7rustlib3foo17ha8cdb6de94c7b1a0E.llvm.12345", "rustlib::foo");
}

TEST(test_rust_v0)
{
	DEM("_RNvCsk9YK71EFBWQ_7rustlib3foo", "rustlib::foo");
	DEM("_RNvMNtCsk9YK71EFBWQ_7rustlib5innerINtB2_1SmE3getB4_",
	    "<rustlib::inner::S<u32>>::get");
	DEM("_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle",
	    "<str>::trim_start_matches::<&str>");
	DEM("_RNvCs1234_7mycrate3foo", "mycrate::foo");
}

TEST(test_not_mangled)
{
	DEM(NULL, NULL);
	DEM("", NULL);
	DEM("malloc", NULL);
	DEM("main", NULL);
	DEM("memcpy@@GLIBC_2.14", NULL);
	DEM("foo__bar", NULL);          /* no other scheme may claim C names */
	DEM("_D3foo3barFZv", NULL);     /* D is not asked for */
	DEM("_Z", NULL);
	DEM("_R", NULL);
	DEM("_Zinvalid", NULL);
	DEM("RNvCs1234_7mycrate3foo", NULL);
}

TEST(test_hostile)
{
	/* deep nesting is refused by libiberty's recursion limit, not a crash */
	size_t n = 200000;
	char *s = malloc(n + 8);
	if (!s) {
		CHECK(0);
		return;
	}
	memcpy(s, "_Z1f", 4);
	memset(s + 4, 'P', n);
	memcpy(s + 4 + n, "v", 2);
	char *r = symcache_demangle(s);
	free(r);
	free(s);
}

static char fixdir[1024];

/* Every name the local rustc wrote for the fixture crate demangles into it. */
TEST(test_local_rustc)
{
	char path[1100], line[4096];
	int n = 0;

	snprintf(path, sizeof path, "%s/rust_syms.txt", fixdir);
	FILE *f = fixdir[0] ? fopen(path, "r") : NULL;
	if (!f) {
		fprintf(stderr, "SKIP test_local_rustc: no rust_syms.txt\n");
		return;
	}
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *d = symcache_demangle(line);
		if (!d || !(strncmp(d, "rustlib::", 9) == 0 || strncmp(d, "<rustlib::", 10) == 0)
		    || strstr(d, "17h")) {
			fprintf(stderr, "demangle(%s) = %s\n", line, d ? d : "(null)");
			CHECK(0);
		}
		free(d);
		n++;
	}
	fclose(f);
	CHECK(n >= 4);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("JHEAP_FIXTURES");
	if (dir)
		snprintf(fixdir, sizeof fixdir, "%s", dir);
	RUN(test_cxx);
	RUN(test_rust_legacy);
	RUN(test_rust_v0);
	RUN(test_not_mangled);
	RUN(test_hostile);
	RUN(test_local_rustc);
	return UNIT_END();
}
