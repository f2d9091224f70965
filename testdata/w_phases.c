/* w_phases N1 N2: two phases that allocate and keep N1 and N2 blocks.
 * Built -O0 -g; used by the --base tests: two runs of the same binary (two
 * processes, two ASLR layouts) with the same N1 cancel in phase1, and
 * phase2 shows exactly the difference in blocks times the block size.
 *
 * function  call            usable  in-use bytes
 * --------  --------------  ------  ------------
 * phase1    malloc(10000)    10240  N1 * 10240
 * phase2    malloc(3000)      3072  N2 * 3072
 * stable    calloc(1, 50000) 57344  57344 (always one block)
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *keep[100000];
static int nkeep;

NOINLINE void phase1(int n)
{
	for (int i = 0; i < n && nkeep < 100000; i++)
		keep[nkeep++] = malloc(10000);
}

NOINLINE void phase2(int n)
{
	for (int i = 0; i < n && nkeep < 100000; i++)
		keep[nkeep++] = malloc(3000);
}

NOINLINE void stable(void)
{
	keep[nkeep++] = calloc(1, 50000);
}

int main(int argc, char **argv)
{
	stable();
	phase1(argc > 1 ? atoi(argv[1]) : 10);
	phase2(argc > 2 ? atoi(argv[2]) : 10);
	return 0;
}
