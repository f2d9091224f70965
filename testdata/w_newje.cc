// w_newje: a C++ program whose operator new is libstdc++'s, over a
// jemalloc linked in statically under the je_ prefix, built without its
// C++ operators (tests/tools/build-jemalloc-je.sh: --disable-cxx).  malloc
// and its kin are defined here and forward to je_*, so every C++
// allocation goes operator new (libstdc++.so) -> malloc (here) -> je_malloc.
// No allocator library is mapped and jemalloc defines no operator new:
// only its name tells jheap that libstdc++'s operator new is an allocator
// frame (tests/t0225-operator-new.sh).
//
// function       call                      count  usable  in-use bytes
// -------------  ------------------------  -----  ------  ------------
// make_widgets   new Widget*[64] (512 B)       1     512           512
//                new Widget (4000 B)          50    4096        204800
// make_array     new char[300000]              1  327680        327680
//
// Writes a heap dump of the blocks in use (je_mallctl "prof.dump") to
// argv[1] and prints its name; run with JE_MALLOC_CONF=prof:true,
// lg_prof_sample:0 so that every allocation is in it.
#include <cstdio>
#include <cstring>
#include <jemalloc/jemalloc.h>

extern "C" {
void *malloc(size_t n) { return je_malloc(n); }
void free(void *p) { je_free(p); }
void *calloc(size_t n, size_t s) { return je_calloc(n, s); }
void *realloc(void *p, size_t n) { return je_realloc(p, n); }
void *memalign(size_t a, size_t n) { return je_memalign(a, n); }
int posix_memalign(void **r, size_t a, size_t n) { return je_posix_memalign(r, a, n); }
void *aligned_alloc(size_t a, size_t n) { return je_aligned_alloc(a, n); }
void *valloc(size_t n) { return je_valloc(n); }
size_t malloc_usable_size(void *p) { return je_malloc_usable_size(p); }
}

struct Widget {
	char data[4000];
};

__attribute__((noinline)) Widget **make_widgets(int n)
{
	Widget **w = new Widget *[64];
	for (int i = 0; i < n; i++)
		w[i] = new Widget();
	return w;
}

__attribute__((noinline)) char *make_array(size_t n)
{
	char *a = new char[n];
	memset(a, 1, n);
	return a;
}

int main(int argc, char **argv)
{
	Widget **w = make_widgets(50);
	char *a = make_array(300000);
	const char *name = argc > 1 ? argv[1] : "w_newje.heap";
	if (je_mallctl("prof.dump", NULL, NULL, &name, sizeof(name))) {
		fprintf(stderr, "w_newje: prof.dump failed (JE_MALLOC_CONF=prof:true?)\n");
		return 1;
	}
	printf("%s\n", name);
	delete[] a;
	for (int i = 0; i < 50; i++)
		delete w[i];
	delete[] w;
	return 0;
}
