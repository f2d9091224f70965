// Fixture for tests/t0227-dwarf-layouts.sh: methods of a struct, a class
// and a union, each with a chain of always_inline helpers inlined into it.
// Built with gcc (which writes .debug_aranges, then damaged on purpose)
// and through clang's IR with the methods' definitions moved into their
// types' DIEs and the unit said to be Rust, as rustc up to 1.63 wrote it.
extern "C" int printf(const char *, ...);

__attribute__((noinline)) int sink(int v)
{
	static volatile int seen;
	seen += v;
	return seen;
}

static inline __attribute__((always_inline)) int step_c(int v)
{
	return sink(v * 3) + 1;
}

static inline __attribute__((always_inline)) int step_b(int v)
{
	return step_c(v + 2) * 5;
}

static inline __attribute__((always_inline)) int step_a(int v)
{
	return step_b(v ^ 7) - sink(v);
}

struct Counter {
	int total;
	__attribute__((noinline)) void add(int v) { total += step_a(v); }
};

class Meter {
public:
	int peak;
	__attribute__((noinline)) int measure(int v) { return peak = step_b(v) + sink(peak); }
};

union Cell {
	int i;
	float f;
	__attribute__((noinline)) int bump(int v) { return i = step_c(i + v); }
};

int main(int argc, char **argv)
{
	(void)argv;
	Counter c{0};
	Meter m{0};
	Cell x{0};
	c.add(argc);
	int r = m.measure(argc) + x.bump(argc);
	printf("%d %d\n", c.total, r);
	return 0;
}
