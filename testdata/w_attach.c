/* w_attach: threads that allocate and free without pause and check their
 * own data, for the tests of attaching to a running process (t0840).
 * Built -O2 -g -pthread.
 *
 *   w_attach [THREADS [busy]]   (default 4 threads)
 *   w_attach stats               one thread, asleep inside jemalloc
 *   w_attach vfork               one thread, waiting for a vfork child
 *
 * Each thread keeps 256 blocks of 16 bytes to 16 KiB (now and then 64
 * KiB), each filled with a pattern drawn from its own seed; before a block
 * is freed (and at the end, every block still kept) its bytes are checked
 * against the pattern.  The allocations are made in churn_alloc, so a
 * sampled dump names it.  After every thread has made its first 10,000
 * allocations the program prints "ready".  SIGUSR1 ends it: every thread
 * checks and frees what it keeps and prints "thread N: OPS allocations,
 * BAD bad blocks"; the program prints "ok" and exits 0 when no block was
 * bad, else "corrupt" and exits 1.  SIGUSR2 is counted and otherwise
 * ignored (the tests send it while jheap holds a thread).  The main thread
 * waits in pthread_join (a futex wait) meanwhile; with "busy" it is the
 * last of the THREADS itself, so that every thread is always running,
 * much of the time inside the allocator.
 *
 * "w_attach stats" has no other thread: it calls jemalloc's
 * malloc_stats_print (found with dlsym: jemalloc is preloaded; built with
 * -DJEMALLOC_MANGLE and a prefixed jemalloc's header, that one's) with a
 * callback that prints "in stats" and sleeps in pause() until SIGUSR1,
 * so its only thread waits with jemalloc's frames (and its stats lock)
 * below it; then it prints "ok" and exits 0.
 *
 * "w_attach vfork": its one thread vforks a child that prints "child PID"
 * and sleeps; the parent waits for it in the kernel, in a sleep no signal
 * but SIGKILL interrupts (state D).  When the child is killed the parent
 * prints "ok" and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define SLOTS 256
#define MAXTHREADS 64

static volatile sig_atomic_t stop, usr2;
static volatile int started;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct block {
	uint64_t *p;
	size_t words;
	uint64_t seed;
	double sum;               /* of the words' low halves, in SSE registers */
};

struct worker {
	int id;
	unsigned long ops, bad;
	struct block b[SLOTS];
};

static uint64_t next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* The words are checked twice: against the seed's sequence, and by a
 * sum in floating point, whose running value lives in an SSE register
 * through the loop (so a thread given back with other SSE registers than
 * it had would count its block as bad). */
static void fill(struct block *b)
{
	uint64_t s = b->seed;
	double sum = 0;
	for (size_t i = 0; i < b->words; i++) {
		b->p[i] = next(&s);
		sum += (double)(uint32_t)b->p[i] * 0.5;
	}
	b->sum = sum;
}

static int check(const struct block *b)
{
	uint64_t s = b->seed;
	double sum = 0;
	for (size_t i = 0; i < b->words; i++) {
		if (b->p[i] != next(&s))
			return 1;
		sum += (double)(uint32_t)b->p[i] * 0.5;
	}
	return sum != b->sum;
}

NOINLINE void *churn_alloc(size_t bytes)
{
	void *p = malloc(bytes);
	__asm__ volatile("" ::: "memory");
	return p;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t r = 0x9e3779b97f4a7c15ULL * (uint64_t)(w->id + 1);
	bool told = false;
	while (!stop) {
		struct block *b = &w->b[next(&r) % SLOTS];
		if (b->p) {
			w->bad += (unsigned long)check(b);
			free(b->p);
		}
		uint64_t x = next(&r);
		size_t bytes = x % 97 == 0 ? 65536 : 16 + (size_t)(x >> 8) % 16384;
		b->words = bytes / 8;
		b->seed = next(&r) | 1;
		b->p = churn_alloc(b->words * 8);
		if (!b->p) {
			w->bad++;
			b->words = 0;
			continue;
		}
		fill(b);
		if (++w->ops == 10000 && !told) {
			told = true;
			pthread_mutex_lock(&lock);
			started++;
			pthread_mutex_unlock(&lock);
		}
	}
	for (int i = 0; i < SLOTS; i++)
		if (w->b[i].p) {
			w->bad += (unsigned long)check(&w->b[i]);
			free(w->b[i].p);
		}
	return NULL;
}

static void on_usr1(int sig)
{
	stop = 1;
}

static void on_usr2(int sig)
{
	usr2++;
}

static void stats_cb(void *arg, const char *s)
{
	static bool once;
	if (once)
		return;
	once = true;
	if (write(1, "in stats\n", 9) != 9)
		return;
	while (!stop)
		pause();
}

static int in_stats(void)
{
#ifdef JEMALLOC_MANGLE
	/* built with a prefixed jemalloc's header, linked in */
	malloc_stats_print(stats_cb, NULL, NULL);
#else
	void (*print)(void (*)(void *, const char *), void *, const char *) =
		(void (*)(void (*)(void *, const char *), void *, const char *))dlsym(RTLD_DEFAULT, "malloc_stats_print");
	if (!print) {
		printf("no malloc_stats_print\n");
		return 2;
	}
	print(stats_cb, NULL, NULL);
#endif
	printf("ok\n");
	return 0;
}

static int in_vfork(void)
{
	pid_t c = vfork();
	if (c == 0) {
		/* only system calls here: the parent's memory is shared */
		char line[32];
		int n = snprintf(line, sizeof(line), "child %d\n", (int)syscall(SYS_getpid));
		if (write(1, line, (size_t)n) != n)
			_exit(1);
		struct timespec t = { 600, 0 };
		syscall(SYS_nanosleep, &t, NULL);
		_exit(0);
	}
	printf("ok\n");
	return c > 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	bool busy = argc > 2 && !strcmp(argv[2], "busy");
	if (n < 1 || n > MAXTHREADS)
		n = 4;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	if (argc > 1 && !strcmp(argv[1], "stats"))
		return in_stats();
	if (argc > 1 && !strcmp(argv[1], "vfork"))
		return in_vfork();
	static struct worker w[MAXTHREADS];
	pthread_t t[MAXTHREADS];
	for (int i = 0; i < n; i++) {
		w[i].id = i;
		if (busy && i == n - 1)
			break;
		if (pthread_create(&t[i], NULL, work, &w[i])) {
			perror("pthread_create");
			return 2;
		}
	}
	for (;;) {
		pthread_mutex_lock(&lock);
		int k = started;
		pthread_mutex_unlock(&lock);
		if (k == n - busy || stop)
			break;
		usleep(1000);
	}
	printf("ready\n");
	fflush(stdout);
	if (busy)
		work(&w[n - 1]);
	unsigned long bad = 0;
	for (int i = 0; i < n; i++) {
		if (!busy || i < n - 1)
			pthread_join(t[i], NULL);
		printf("thread %d: %lu allocations, %lu bad blocks\n", i, w[i].ops, w[i].bad);
		bad += w[i].bad;
	}
	printf("%s\n", bad ? "corrupt" : "ok");
	return bad ? 1 : 0;
}
