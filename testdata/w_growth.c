/* w_growth: a process that writes a series of dumps (mallctl "prof.dump"
 * after each of STEPS steps), for the --growth tests.  Built -O0 -g.
 *
 * function     behaviour                                     in-use per dump
 * -----------  --------------------------------------------  ---------------
 * build_cache  before step 0: 64 blocks of 131072 B, kept     8 MiB, constant
 * leak_step    every step: 4 blocks of 16384 B, never freed   65536 B * (k+1)
 * spike        steps 3 and 4 only: 32 blocks of 262144 B,     8 MiB in dumps
 *              freed at the end of step 4                     3 and 4, else 0
 *
 * So leak_step grows steadily (slope 65536 B per dump, a perfect fit),
 * build_cache is large but flat, and spike is large but not growing.
 * mallctl is found with dlsym, since jemalloc is LD_PRELOADed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define STEPS 10

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
static void *keep[4096];
static int nkeep;
static void *spikes[32];

NOINLINE void build_cache(void)
{
	for (int i = 0; i < 64; i++)
		keep[nkeep++] = malloc(131072);
}

NOINLINE void leak_step(void)
{
	for (int i = 0; i < 4; i++)
		keep[nkeep++] = malloc(16384);
}

NOINLINE void spike(int step)
{
	if (step == 3)
		for (int i = 0; i < 32; i++)
			spikes[i] = malloc(262144);
	if (step == 5)
		for (int i = 0; i < 32; i++)
			free(spikes[i]);
}

int main(void)
{
	mallctl_fn mallctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	if (!mallctl)
		return 1;
	build_cache();
	for (int step = 0; step < STEPS; step++) {
		spike(step);
		leak_step();
		mallctl("prof.dump", NULL, NULL, NULL, 0);
	}
	return 0;
}
