/* w_churn: much short-lived allocation, for --churn against heaptrack's
 * temporary allocations (tests/t0420-series.sh).  Built -O0 -g.
 *
 * function   what                                          churn (freed again)
 * ---------  --------------------------------------------  -------------------
 * temp_a     100000 times malloc(96) and free at once      100000 objects, 9.6 MB
 * temp_b      40000 times malloc(64) and free at once       40000 objects, 2.6 MB
 * keep_c       1000 times malloc(4096), kept to the end     none (4 MiB leaked)
 *
 * heaptrack counts an allocation freed before the next one is made as
 * temporary: temp_a's and temp_b's, none of keep_c's.  96 and 64 are
 * jemalloc size classes, so jemalloc's bytes are the bytes asked for.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *kept[1000];
static volatile char sink;

NOINLINE void temp_a(void)
{
	for (int i = 0; i < 100000; i++) {
		char *p = malloc(96);
		p[0] = (char)i;
		sink = p[0];
		free(p);
	}
}

NOINLINE void temp_b(void)
{
	for (int i = 0; i < 40000; i++) {
		char *p = malloc(64);
		p[0] = (char)i;
		sink = p[0];
		free(p);
	}
}

NOINLINE void keep_c(void)
{
	for (int i = 0; i < 1000; i++)
		kept[i] = malloc(4096);
}

int main(void)
{
	keep_c();
	temp_a();
	temp_b();
	return 0;
}
