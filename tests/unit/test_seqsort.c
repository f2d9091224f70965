/*
 * lib/seqsort.h: the multikey quicksort gives exactly the order of a
 * plain comparison sort (element by element, a prefix first, equal
 * sequences by id) on random sequences of every shape its branches see:
 * long shared beginnings, many equal sequences, empty ones, large
 * groups of one length, and small and large alphabets.
 */
#include <stdint.h>
#include "lib/array.h"
#include "lib/seqsort.h"
#include "unit.h"

static const uint32_t *g_syms;

static int cmp_plain(const void *x, const void *y)
{
	const struct seqsort_item *a = x, *b = y;
	for (uint32_t i = 0; i < a->len && i < b->len; i++)
		if (g_syms[a->off + i] != g_syms[b->off + i])
			return g_syms[a->off + i] < g_syms[b->off + i] ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* N sequences of up to MAXLEN elements below ALPHA, the first SHARED
 * elements of each from one common sequence; ids shuffled.  seqsort is
 * told the elements are below LIMIT (>= ALPHA): at 65535 and above a key
 * holds two elements, below it four. */
static int one_case_limit(size_t n, uint32_t maxlen, uint32_t alpha, uint32_t shared,
			  uint32_t limit)
{
	uint32_t *syms = malloc((n * maxlen + 1) * sizeof(*syms));
	struct seqsort_item *a = malloc((n + 1) * sizeof(*a)), *b = malloc((n + 1) * sizeof(*b));
	uint32_t common[64];
	for (uint32_t i = 0; i < 64; i++)
		common[i] = next() % alpha;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t len = maxlen ? next() % (maxlen + 1) : 0;
		a[i] = (struct seqsort_item){ (uint32_t)o, len, (uint32_t)i, 0 };
		for (uint32_t k = 0; k < len; k++)
			syms[o++] = k < shared && k < 64 ? common[k] : next() % alpha;
	}
	/* shuffle the ids so that equal sequences are not in id order */
	for (size_t i = n; i > 1; i--) {
		size_t j = next() % i;
		uint32_t t = a[i - 1].id;
		a[i - 1].id = a[j].id;
		a[j].id = t;
	}
	memcpy(b, a, n * sizeof(*a));
	g_syms = syms;
	jh_qsort(b, n, sizeof(*b), cmp_plain);
	seqsort(a, n, syms, limit);
	int same = 1;
	for (size_t i = 0; i < n; i++)
		same &= a[i].id == b[i].id;
	free(syms);
	free(a);
	free(b);
	return same;
}

static int one_case(size_t n, uint32_t maxlen, uint32_t alpha, uint32_t shared)
{
	return one_case_limit(n, maxlen, alpha, shared, alpha) &&
	       one_case_limit(n, maxlen, alpha, shared, alpha < 65535 ? 65535 : UINT32_MAX);
}

TEST(same_order_as_a_comparison_sort)
{
	CHECK(one_case(0, 5, 10, 0));
	CHECK(one_case(1, 5, 10, 0));
	CHECK(one_case(11, 4, 3, 0));
	CHECK(one_case(1000, 6, 2, 0));        /* many equal sequences */
	CHECK(one_case(1000, 0, 2, 0));        /* all empty */
	CHECK(one_case(5000, 30, 1000, 20));   /* long shared beginnings */
	CHECK(one_case(5000, 30, 3, 25));
	CHECK(one_case(20000, 12, 50000, 0));
	CHECK(one_case(3000, 40, 1, 0));       /* one symbol: only lengths differ */
	/* lengths around a key's four and two elements */
	for (uint32_t len = 1; len <= 9; len++)
		CHECK(one_case(2000, len, 3, len > 2 ? len - 2 : 0));
	CHECK(one_case(5000, 30, 65534, 20));  /* the largest with four a key */
	CHECK(one_case(5000, 30, 65535, 20));
}

TEST(large_values_and_equal_groups)
{
	/* symbols near UINT32_MAX still sort after smaller ones, and a large
	 * group of equal sequences comes out by id */
	uint32_t syms[] = { UINT32_MAX - 1, 0, UINT32_MAX - 2, 7 };
	struct seqsort_item a[200];
	for (uint32_t i = 0; i < 200; i++)
		a[i] = (struct seqsort_item){ i % 4, 1, 199 - i, 0 };
	seqsort(a, 200, syms, UINT32_MAX);
	int ok = 1;
	for (uint32_t i = 1; i < 200; i++) {
		uint32_t x = syms[a[i - 1].off], y = syms[a[i].off];
		ok &= x < y || (x == y && a[i - 1].id < a[i].id);
	}
	CHECK(ok);
	CHECK_INT(syms[a[0].off], 0);
	CHECK_INT(syms[a[199].off], UINT32_MAX - 1);
}

/* The two-thread sort (JHEAP_THREADS=2 makes small arrays take it):
 * the same order. */
TEST(two_threads_same_order)
{
	setenv("JHEAP_THREADS", "2", 1);
	CHECK(one_case(5000, 30, 1000, 20));
	CHECK(one_case(3000, 12, 3, 5));
	CHECK(one_case(20000, 12, 50000, 0));
	CHECK(one_case(1000, 6, 2, 0));
	unsetenv("JHEAP_THREADS");
}

int main(void)
{
	RUN(same_order_as_a_comparison_sort);
	RUN(large_values_and_equal_groups);
	RUN(two_threads_same_order);
	return UNIT_END();
}
