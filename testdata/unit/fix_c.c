/* Fixture for tests/unit/test_symcache.c, built by tests/unit/build-fixtures.sh.
 * The test finds lines by their MARK comments: keep them on the lines they name. */
#include <stdio.h>
#include <stdlib.h>

int c_leaf(int x) { /* MARK:c_leaf_decl */
	int y = x * 3; /* MARK:c_leaf_body */
	if (y > 100)
		y -= 7;
	return y + 1;
}

static int c_static(int x) /* MARK:c_static_decl */
{
	return c_leaf(x) + 2;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", c_static(argc));
	return 0;
}
