/* Fixture shared library for tests/unit/test_symcache.c: exported functions,
 * a static one that only .symtab names, and calls through the PLT. */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static int lib_hidden(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n = n * 33 + *s;
	return n;
}

int lib_exported(const char *s)
{
	printf("%s\n", s);
	return lib_hidden(s) + (int)strlen(s);
}

int lib_other(int x)
{
	return x * 7 + lib_exported("x");
}
