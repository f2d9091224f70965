// Fixture for tests/unit/test_symcache.c, built by tests/unit/build-fixtures.sh
// with g++ and clang++ at -O2.  The test finds lines by their MARK comments.
#include <cstdio>
#include <cstdlib>

static inline __attribute__((always_inline)) int helper_inner(int v) // MARK:inner_decl
{
	volatile int acc = v;
	for (int i = 0; i < 4; i++)
		acc = acc * 31 + i; // MARK:inner_body
	return acc;
}

static inline __attribute__((always_inline)) int helper_outer(int v) // MARK:outer_decl
{
	return helper_inner(v ^ 5) + 1; // MARK:outer_call
}

namespace ns {

__attribute__((cold, noinline)) void report(const char *what)
{
	std::fprintf(stderr, "bad value: %s\n", what);
}

template <typename T> struct Holder {
	T total;
	__attribute__((noinline)) void add(T v);
	__attribute__((noinline)) void check(T v);
};

template <typename T> void Holder<T>::add(T v) // MARK:add_decl
{
	total += helper_outer((int)v); // MARK:add_call
}

template <typename T> void Holder<T>::check(T v)
{
	if (__builtin_expect(v == 12345, 0)) {
		report("12345");
		std::abort();
	}
	total -= v;
}

template struct Holder<int>;
template struct Holder<long>;

} // namespace ns

int main(int argc, char **argv)
{
	(void)argv;
	ns::Holder<int> h{0};
	ns::Holder<long> l{0};
	h.add(argc);
	h.check(argc);
	l.add(argc);
	std::printf("%d %ld\n", h.total, l.total);
	return 0;
}
