/* w_threads: a pthreads workload.  Built -O0 -g -pthread.  Prints nothing.
 *
 * main starts NTHREADS workers one at a time; worker k (k = 1..4) names
 * itself "worker-k" through mallctl("thread.prof.name"), allocates its
 * blocks and signals main, which only then starts the next worker.  So the
 * workers get jemalloc thread uids 1..4 in order (main is uid 0), and each
 * uid's amounts are known.  The blocks are kept until exit.  The workers
 * are joined, and their pointers stay in keep[].
 *
 * mallctl is looked up with dlsym: the program is not linked against
 * jemalloc, which is LD_PRELOADed.  Without jemalloc the names are skipped.
 *
 * thread (uid)     function  call            count  usable  in-use bytes
 * ---------------  --------  --------------  -----  ------  ------------
 * main (t0)        main      malloc(12000)       5   12288         61440
 * worker-1 (t1)    worker    malloc(8000)       10    8192         81920
 * worker-2 (t2)    worker    malloc(8000)       20    8192        163840
 * worker-3 (t3)    worker    malloc(8000)       30    8192        245760
 * worker-4 (t4)    worker    malloc(8000)       40    8192        327680
 * ---------------  --------  --------------  -----  ------  ------------
 * worker (all four threads, its flat = cum)    100              819200
 *
 * Whatever else libc allocates in main's thread (pthread_create's thread
 * control blocks and TLS) is not under worker.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define NTHREADS 4

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

void *keep[NTHREADS + 1][64];

static mallctl_fn get_mallctl(void)
{
	return (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
}

NOINLINE void *worker(void *arg)
{
	int k = (int)(long)arg;
	char name[32];
	const char *namep = name;
	mallctl_fn ctl = get_mallctl();

	snprintf(name, sizeof name, "worker-%d", k);
	if (ctl)
		ctl("thread.prof.name", NULL, NULL, (void *)&namep, sizeof namep);
	for (int i = 0; i < 10 * k; i++)
		if (!(keep[k][i] = malloc(8000)))
			abort();
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	for (int i = 0; i < 5; i++)
		if (!(keep[0][i] = malloc(12000)))
			abort();
	for (int k = 1; k <= NTHREADS; k++) {
		if (pthread_create(&t[k - 1], NULL, worker, (void *)(long)k) != 0)
			abort();
		/* Join before starting the next one: thread uids follow k. */
		pthread_join(t[k - 1], NULL);
	}
	return 0;
}
