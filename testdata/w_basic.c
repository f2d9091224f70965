/* w_basic: a C workload with a known call tree and known allocation sizes.
 *
 * Built -O0 -g (PIE, and a second time -no-pie -fno-pie as w_basic_nopie)
 * and run under jemalloc with prof:true,prof_final:true.  Every block stays
 * allocated until exit (pointers kept in keep[]), so the exit-time dump
 * (prof_final) sees them; only transient() frees what it allocates.
 * The program prints nothing: stdio buffers would add libc allocations.
 *
 * jemalloc records usable sizes (size classes), not the requested sizes.
 *
 * function        call                       count  usable  in-use bytes
 * --------------  -------------------------  -----  ------  ------------
 * alloc_malloc    malloc(10000)                100   10240       1024000
 * alloc_calloc    calloc(20, 50)                40    1024         40960
 * alloc_realloc   realloc(malloc(100), 200000)  10  229376       2293760
 * alloc_memalign  posix_memalign(, 64, 3000)    20    3072         61440
 * alloc_aligned   aligned_alloc(4096, 16384)     4   16384         65536
 * recurse         malloc(2000), 4 per level,    12    2048         24576
 *                 3 levels (recurse(3))
 * transient       malloc(200000) then free      50  229376             0
 * leaf_alloc      malloc(5000)                 100    5120        512000
 *   via caller_a  leaf_alloc(30)                30    5120        153600
 *   via caller_b  leaf_alloc(70)                70    5120        358400
 * many_small      malloc(64)                 10000      64        640000
 * main            malloc(300000)                 1  327680        327680
 * --------------  -------------------------  -----  ------  ------------
 * total in use                               10287             4989952
 *
 * Flat (the function is the leaf, allocator frames removed) = the in-use
 * column; caller_a/caller_b have flat 0 and the cum shown; main's cum is the
 * total.  recurse: flat = cum = 24576 (cum counts a node once per stack).
 *
 * Outside main, every dump also holds one 81920-byte object that libstdc++
 * allocates when it is loaded (its exception emergency pool; Debian's
 * libjemalloc.so.2 links libstdc++), under _dl_init: Total = 5071872 B,
 * 10288 objects.
 *
 * With prof_accum:true (alloc_space / alloc_objects), everything above plus:
 *   alloc_realloc   also the 10 malloc(100) blocks (112 B) that realloc freed:
 *                   20 objects, 2293760 + 1120 = 2294880 bytes
 *   transient       50 objects, 50 * 229376 = 11468800 bytes
 *   total           10347 objects, 16459872 bytes
 */
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

void *keep[10400];
int nkeep;

static void hold(void *p)
{
	if (!p)
		abort();
	keep[nkeep++] = p;
}

NOINLINE void alloc_malloc(void)
{
	for (int i = 0; i < 100; i++)
		hold(malloc(10000));
}

NOINLINE void alloc_calloc(void)
{
	for (int i = 0; i < 40; i++)
		hold(calloc(20, 50));
}

NOINLINE void alloc_realloc(void)
{
	for (int i = 0; i < 10; i++) {
		void *p = malloc(100);
		memset(p, 1, 100);
		hold(realloc(p, 200000));
	}
}

NOINLINE void alloc_memalign(void)
{
	for (int i = 0; i < 20; i++) {
		void *p = NULL;
		if (posix_memalign(&p, 64, 3000) != 0)
			abort();
		hold(p);
	}
}

NOINLINE void alloc_aligned(void)
{
	for (int i = 0; i < 4; i++)
		hold(aligned_alloc(4096, 16384));
}

NOINLINE void recurse(int depth)
{
	for (int i = 0; i < 4; i++)
		hold(malloc(2000));
	if (depth > 1)
		recurse(depth - 1);
}

NOINLINE void transient(void)
{
	for (int i = 0; i < 50; i++) {
		char *volatile p = malloc(200000);
		p[0] = 1;
		free(p);
	}
}

NOINLINE void leaf_alloc(int n)
{
	for (int i = 0; i < n; i++)
		hold(malloc(5000));
}

NOINLINE void caller_a(void)
{
	leaf_alloc(30);
}

NOINLINE void caller_b(void)
{
	leaf_alloc(70);
}

NOINLINE void many_small(void)
{
	for (int i = 0; i < 10000; i++)
		hold(malloc(64));
}

int main(void)
{
	alloc_malloc();
	alloc_calloc();
	alloc_realloc();
	alloc_memalign();
	alloc_aligned();
	recurse(3);
	transient();
	caller_a();
	caller_b();
	many_small();
	hold(malloc(300000));
	return 0;
}
