/* libwshared.so: the shared library of the w_shlib workload.  Built
 * -O0 -g -fPIC -shared; w_shlib links it with -L<dir> -lwshared
 * -Wl,-rpath,<dir>.  Its functions allocate known amounts and keep the
 * blocks until exit (see the table in w_shlib_main.c). */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *wshared_keep[64];
int wshared_nkeep;

static void hold(void *p)
{
	if (!p)
		abort();
	wshared_keep[wshared_nkeep++] = p;
}

/* n x malloc(20000) -> 20480 usable bytes each. */
NOINLINE void wshared_alloc_blocks(int n)
{
	for (int i = 0; i < n; i++)
		hold(malloc(20000));
}

/* A library-internal (static) function: its name comes only from the
 * library's own symbol table or DWARF, never from .dynsym. */
static NOINLINE void wshared_inner(int n)
{
	for (int i = 0; i < n; i++)
		hold(malloc(40000));
}

/* 10 x malloc(40000) -> 40960 usable bytes each, through wshared_inner. */
NOINLINE void wshared_alloc_nested(void)
{
	wshared_inner(10);
}
