/*
 * callforms.c: calls in every form a compiler emits, for the call-check
 * tests (tests/t0232-changed-binaries.sh): direct calls, calls through a
 * pointer in a register (r8-r15 too, under register pressure), through a
 * table in memory (base + index * scale + displacement), through the GOT
 * (-fno-plt), through retpoline thunks (-mindirect-branch=thunk), tail
 * calls that are jumps, not calls.  Built freestanding so that it links
 * for AArch64 too without a C library.
 */
typedef long (*fn)(long);

__attribute__((noinline)) long f0(long x) { return x + 1; }
__attribute__((noinline)) long f1(long x) { return x * 3; }
__attribute__((noinline)) long f2(long x) { return x ^ 5; }
extern long ext(long x);
/* defined nowhere: a call through the GOT (-fno-plt) or the PLT */
extern long elsewhere(long x);

volatile fn table[3] = { f0, f1, f2 };
struct obj { long pad[40]; fn cb; } objs[4];

__attribute__((noinline)) long through_table(long i, long x)
{
	return table[i % 3](x) + table[(i + 1) % 3](x + 1);
}

__attribute__((noinline)) long through_struct(struct obj *o, long x)
{
	return o->cb(x) + o[1].cb(x);
}

__attribute__((noinline)) long pressure(fn a, fn b, fn c, fn d, fn e, fn g, long x)
{
	long r = 0;
	for (long i = 0; i < x; i++)
		r += a(i) * b(r) + c(i) - d(r) + e(i) * g(r) + ext(i);
	return r;
}

__attribute__((noinline)) long tail(long x)
{
	return f1(x);   /* a jump at -O2 */
}

long entry(long x)
{
	for (int i = 0; i < 4; i++)
		objs[i].cb = table[i % 3];
	return through_table(x, x) + through_struct(objs, x) + pressure(f0, f1, f2, f0, f1, f2, x) +
	       tail(x) + ext(x) + elsewhere(x);
}

long ext(long x)
{
	return x - 1;
}
