/*
 * changing.c: a program built twice for tests/t0232-changed-binaries.sh,
 * once as it ran and once changed, to see that jheap takes no names from
 * code that did not run.
 *
 *   -DCHANGE_EARLY  code added at the top of main, the first function:
 *                   everything after it moves, so most return addresses
 *                   of a dump of the original follow no call in this
 *                   build
 *   -DCHANGE_LATE   code added at the top of the last function, late_b:
 *                   only the return address in late_b moves
 *
 * Built at -O0, where gcc keeps the functions in the order of this file.
 *
 * Each function below main allocates BYTES_x once per call and keeps it.
 */
#include <stdlib.h>
#include <string.h>

#define BYTES_A 40960
#define BYTES_B 81920
#define BYTES_C 122880
#define BYTES_D 163840
#define BYTES_LATE 204800

static void *keep[64];
static int nkeep;

#if defined(CHANGE_EARLY) || defined(CHANGE_LATE)
/* the added code: large enough that what follows it moves by more than a
 * call instruction */
#define ADDED                                                              \
	do {                                                               \
		volatile unsigned long v = 1;                              \
		for (int k = 0; k < 8; k++)                                \
			v = v * 2654435761u + (unsigned long)k * 40503u;   \
		if (v == 42)                                               \
			nkeep = 0;                                         \
	} while (0)
#endif

void alloc_a(void);
void alloc_b(void);
void alloc_c(void);
void alloc_d(void);
void late_a(void);
void late_b(void);

/* first, so that the code after it is every other function */
int main(void)
{
#ifdef CHANGE_EARLY
	ADDED;
#endif
	alloc_a();
	alloc_b();
	alloc_c();
	alloc_d();
	late_a();
	return 0;
}

__attribute__((noinline)) static void hold(void *p)
{
	if (nkeep < 64)
		keep[nkeep++] = p;
}

__attribute__((noinline)) void alloc_a(void) { hold(memset(malloc(BYTES_A), 1, BYTES_A)); }
__attribute__((noinline)) void alloc_b(void) { hold(memset(malloc(BYTES_B), 2, BYTES_B)); }
__attribute__((noinline)) void alloc_c(void) { hold(memset(malloc(BYTES_C), 3, BYTES_C)); }
__attribute__((noinline)) void alloc_d(void) { hold(memset(malloc(BYTES_D), 4, BYTES_D)); }

__attribute__((noinline)) void late_b(void)
{
#ifdef CHANGE_LATE
	ADDED;
#endif
	hold(memset(malloc(BYTES_LATE), 5, BYTES_LATE));
}

__attribute__((noinline)) void late_a(void)
{
	late_b();
}

