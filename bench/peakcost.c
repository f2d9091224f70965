/* peakcost: what one look at the heap's size costs the control library's
 * peak watch (preload/peaks.c), the two ways jemalloc offers, measured in
 * a process that allocated from eight threads (so eight arenas hold
 * statistics).  Run under Debian's libjemalloc with MALLOC_CONF=
 * prof:true,prof_stats:true; prints two lines "NAME MICROSECONDS":
 *   stats      mallctl("epoch") then mallctl("stats.allocated")
 *   profstats  the profiler's own live counts, prof.stats.bins.<i>.live
 *              and prof.stats.lextents.<j>.live, summed over every size
 *              class (needs prof_stats:true from the start), by mib
 * Part of make bench (bench/peaks.sh). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef int (*nametomib_fn)(const char *, size_t *, size_t *);
typedef int (*bymib_fn)(const size_t *, size_t, void *, size_t *, void *, size_t);

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	void *p[2000];
	for (int i = 0; i < 2000; i++)
		p[i] = malloc((size_t)(i % 200) * 40 + 8);
	for (int i = 0; i < 2000; i += 2)
		free(p[i]);
	return arg;
}

int main(void)
{
	mallctl_fn m = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	nametomib_fn n2m = (nametomib_fn)dlsym(RTLD_DEFAULT, "mallctlnametomib");
	bymib_fn bym = (bymib_fn)dlsym(RTLD_DEFAULT, "mallctlbymib");
	if (!m || !n2m || !bym)
		return 1;
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	const int N = 20000;
	uint64_t e = 1;
	size_t al = 0, sz = sizeof(al), esz = sizeof(e);
	double t0 = now();
	for (int i = 0; i < N; i++) {
		m("epoch", &e, &esz, &e, sizeof(e));
		m("stats.allocated", &al, &sz, NULL, 0);
	}
	printf("stats %.2f\n", (now() - t0) / N * 1e6);
	unsigned nb = 0, nl = 0;
	sz = sizeof(nb);
	m("arenas.nbins", &nb, &sz, NULL, 0);
	m("arenas.nlextents", &nl, &sz, NULL, 0);
	size_t mb[5], ml[5], lb = 5, ll = 5;
	if (n2m("prof.stats.bins.0.live", mb, &lb) || n2m("prof.stats.lextents.0.live", ml, &ll)) {
		printf("profstats n/a\n");
		return 0;
	}
	uint64_t live[2], sum = 0;
	size_t lsz = sizeof(live);
	const int M = 2000;
	t0 = now();
	for (int i = 0; i < M; i++) {
		for (unsigned b = 0; b < nb; b++) {
			mb[3] = b;
			if (!bym(mb, lb, live, &lsz, NULL, 0))
				sum += live[1];
		}
		for (unsigned b = 0; b < nl; b++) {
			ml[3] = b;
			if (!bym(ml, ll, live, &lsz, NULL, 0))
				sum += live[1];
		}
	}
	printf("profstats %.2f\n", (now() - t0) / M * 1e6);
	return sum == 0 ? 0 : 0;
}
