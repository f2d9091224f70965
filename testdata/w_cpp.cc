// w_cpp: a C++ workload, built -O2 -g, so that inline frames, template
// instances and demangling are exercised.  Known call tree and sizes; every
// block stays allocated until exit.  Prints nothing.
//
// function                          call                     count usable  in-use bytes
// --------------------------------  -----------------------  ----- ------  ------------
// ns::Holder<Widget>::add           new Widget (240 B)         200    256         51200
// fill_buffers                      make_buf(4000), an          64   4096        262144
//   (make_buf: always_inline)       always_inline helper
//                                   doing new char[4000]
// make_ints                         new int[2500] (10000 B)     30  10240        307200
// grow_vector                       g_vec.push_back x 100000     1 524288        524288
//   (through std::vector<int>::     final capacity 131072
//    _M_realloc_insert)             ints; earlier buffers
//                                   freed while growing
// --------------------------------  -----------------------  ----- ------  ------------
// total in use (under main)                                    295            1144832
//
// ns::Holder<Widget>::add is a noinline member of a class template in
// namespace ns; its symbol is _ZN2ns6HolderI6WidgetE3addEi.  fill_buffers'
// allocation happens in the inlined make_buf, so its pc has an inline frame
// make_buf inside fill_buffers.  grow_vector's leaf in the binary is the
// out-of-line template instance std::vector<int>::_M_realloc_insert (with
// the allocator's allocate() inlined into it).
//
// With prof_accum:true, grow_vector's stack also holds every buffer the
// vector outgrew: capacities 1, 2, 4, ..., 131072 ints, i.e. 18 objects of
// usable sizes 8, 8, 16, 32, ..., 524288 = 1048576 bytes in all; the other
// rows are unchanged (total 312 objects, 1669120 bytes).
#include <cstddef>
#include <new>
#include <vector>

#define NOINLINE __attribute__((noinline))

struct Widget {
	char data[240];
};

// Global, not static: the compiler must not drop the stores (or the
// allocations) as dead.
void *keep[400];
int nkeep;

static void hold(void *p)
{
	keep[nkeep++] = p;
}

namespace ns {
template <typename T> class Holder {
public:
	NOINLINE void add(int n);
};

template <typename T> void Holder<T>::add(int n)
{
	for (int i = 0; i < n; i++) {
		T *t = new T;
		t->data[0] = static_cast<char>(i);
		hold(t);
	}
}
} // namespace ns

template class ns::Holder<Widget>;

static inline __attribute__((always_inline)) char *make_buf(std::size_t n)
{
	char *p = new char[n];
	p[0] = 1;
	return p;
}

NOINLINE void fill_buffers()
{
	for (int i = 0; i < 64; i++)
		hold(make_buf(4000));
}

NOINLINE void make_ints()
{
	for (int i = 0; i < 30; i++) {
		int *p = new int[2500];
		p[0] = i;
		hold(p);
	}
}

// The vector is built in static storage by placement new and never
// destroyed: a plain global would be destroyed by an atexit handler that
// runs before jemalloc's final dump, and its buffer would not be in use.
alignas(std::vector<int>) unsigned char g_vec_storage[sizeof(std::vector<int>)];
std::vector<int> *g_vec;

NOINLINE void grow_vector()
{
	g_vec = new (g_vec_storage) std::vector<int>;
	for (int i = 0; i < 100000; i++)
		g_vec->push_back(i);
}

int main()
{
	ns::Holder<Widget> h;
	h.add(200);
	fill_buffers();
	make_ints();
	grow_vector();
	return static_cast<int>(g_vec->size() != 100000);
}
