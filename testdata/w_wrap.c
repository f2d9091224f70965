/* w_wrap: a program that allocates through wrappers of its own, for the
 * tests of the malloc-wrapper hint (tests/t0235).  Built -O0 -g
 * -rdynamic, and stripped: xmalloc is exported (its name stays in
 * .dynsym, as nginx's ngx_alloc does), pool_grab is static (stripped, it
 * has no name: w_wrap+0xSTART, as nginx's ngx_palloc_large).
 *
 * function      allocates                      calls  size  usable  bytes
 * ------------  -----------------------------  -----  ----  ------  ------
 * make_users    pool_grab -> xmalloc              100  4000    4096  409600
 * make_orders   pool_grab -> xmalloc               50  8000    8192  409600
 * make_sessions pool_grab -> xmalloc               20 12000   12288  245760
 * make_index    xmalloc                            40  6000    6144  245760
 * make_cache    xmalloc                            25 10000   10240  256000
 * str_new       malloc (from make_names,          300   100     112   33600
 *               make_labels and make_tags,
 *               100 each: a constructor named
 *               for what it builds, not a wrapper)
 * parse_config  malloc                              1 65536   65536   65536
 *
 * Nothing is freed; with lg_prof_sample:0 the dump holds these figures
 * exactly (jemalloc's usable sizes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static void *keep[1000];
static int nkeep;

static void hold(void *p)
{
	if (!p) {
		fprintf(stderr, "w_wrap: out of memory\n");
		exit(1);
	}
	keep[nkeep++] = p;
}

NOINLINE void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	return p;
}

NOINLINE static void *pool_grab(size_t n)
{
	void *p = xmalloc(n);
	memset(p, 0, n);
	return p;
}

NOINLINE void make_users(void)
{
	for (int i = 0; i < 100; i++)
		hold(pool_grab(4000));
}

NOINLINE void make_orders(void)
{
	for (int i = 0; i < 50; i++)
		hold(pool_grab(8000));
}

NOINLINE void make_sessions(void)
{
	for (int i = 0; i < 20; i++)
		hold(pool_grab(12000));
}

NOINLINE void make_index(void)
{
	for (int i = 0; i < 40; i++)
		hold(xmalloc(6000));
}

NOINLINE void make_cache(void)
{
	for (int i = 0; i < 25; i++)
		hold(xmalloc(10000));
}

NOINLINE char *str_new(const char *s)
{
	char *p = malloc(100);
	if (p)
		snprintf(p, 100, "%s", s);
	return p;
}

NOINLINE void make_names(void)
{
	for (int i = 0; i < 100; i++)
		hold(str_new("name"));
}

NOINLINE void make_labels(void)
{
	for (int i = 0; i < 100; i++)
		hold(str_new("label"));
}

NOINLINE void make_tags(void)
{
	for (int i = 0; i < 100; i++)
		hold(str_new("tag"));
}

NOINLINE void parse_config(void)
{
	hold(malloc(65536));
}

int main(void)
{
	parse_config();
	make_users();
	make_orders();
	make_sessions();
	make_index();
	make_cache();
	make_names();
	make_labels();
	make_tags();
	printf("%d blocks\n", nkeep);
	return 0;
}
