/* w_shlib: main program of the shared-library workload (w_shlib_lib.c is
 * libwshared.so).  Built -O0 -g, linked with -L<dir> -lwshared
 * -Wl,-rpath,<dir>.  Every block stays allocated until exit; prints nothing.
 *
 * function              object         call             count  usable  in-use bytes
 * --------------------  -------------  ---------------  -----  ------  ------------
 * wshared_alloc_blocks  libwshared.so  malloc(20000)       25   20480        512000
 * wshared_inner         libwshared.so  malloc(40000)       10   40960        409600
 *   (static, called by wshared_alloc_nested: flat 0, cum 409600)
 * main_local_alloc      w_shlib        malloc(50000)        8   57344        458752
 * --------------------  -------------  ---------------  -----  ------  ------------
 * total in use (main's cum)                                43               1380352
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void wshared_alloc_blocks(int n);
void wshared_alloc_nested(void);

void *keep[8];

NOINLINE void main_local_alloc(void)
{
	for (int i = 0; i < 8; i++)
		if (!(keep[i] = malloc(50000)))
			abort();
}

int main(void)
{
	wshared_alloc_blocks(25);
	wshared_alloc_nested();
	main_local_alloc();
	return 0;
}
