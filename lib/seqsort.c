/* Multikey quicksort of number sequences (see seqsort.h). */
#include "lib/seqsort.h"

/* Groups this small are sorted by insertion, comparing whole sequences. */
#define SMALL 12

/* The element at depth D of item IT, plus one; 0 past its end, so that a
 * sequence comes before the longer ones it begins. */
static inline uint32_t sym_at(const struct seqsort_item *it, size_t d, const uint32_t *syms)
{
	return d < it->len ? syms[it->off + d] + 1 : 0;
}

/* Each item's key: its element at depth D. */
static void load_keys(struct seqsort_item *a, size_t n, size_t d, const uint32_t *syms)
{
	/* the sequences lie anywhere: start loading a few items ahead */
	enum { AHEAD = 16 };
	for (size_t i = 0; i < n; i++) {
		if (i + AHEAD < n && d < a[i + AHEAD].len)
			__builtin_prefetch(&syms[a[i + AHEAD].off + d]);
		a[i].key = sym_at(&a[i], d, syms);
	}
}

/* Compares two items whose first D elements are equal. */
static int cmp_from(const struct seqsort_item *a, const struct seqsort_item *b, size_t d,
		    const uint32_t *syms)
{
	const uint32_t *x = syms + a->off, *y = syms + b->off;
	size_t n = a->len < b->len ? a->len : b->len;
	for (; d < n; d++)
		if (x[d] != y[d])
			return x[d] < y[d] ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void insertion(struct seqsort_item *a, size_t n, size_t d, const uint32_t *syms)
{
	for (size_t i = 1; i < n; i++) {
		struct seqsort_item t = a[i];
		size_t j = i;
		while (j > 0 && cmp_from(&t, &a[j - 1], d, syms) < 0) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = t;
	}
}

static void swap(struct seqsort_item *a, size_t i, size_t j)
{
	struct seqsort_item t = a[i];
	a[i] = a[j];
	a[j] = t;
}

/* Equal sequences, ordered by id: a heap sort, in place and bounded
 * whatever the ids' order (groups of equal stacks are small, but a
 * hostile profile could make one large). */
static void sift(struct seqsort_item *a, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && a[c + 1].id > a[c].id)
			c++;
		if (a[i].id >= a[c].id)
			return;
		swap(a, i, c);
		i = c;
	}
}

static void by_id(struct seqsort_item *a, size_t n)
{
	if (n <= SMALL) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && a[j].id < a[j - 1].id; j--)
				swap(a, j, j - 1);
		return;
	}
	for (size_t i = n / 2; i-- > 0;)
		sift(a, i, n);
	for (size_t i = n; i-- > 1;) {
		swap(a, 0, i);
		sift(a, 0, i);
	}
}

static uint32_t median3(uint32_t x, uint32_t y, uint32_t z)
{
	if (x < y)
		return y < z ? y : x < z ? z : x;
	return x < z ? x : y < z ? z : y;
}

/* Sorts A[0..n), whose sequences agree on their first D elements and
 * whose keys are their elements at depth D. */
static void mkqs(struct seqsort_item *a, size_t n, size_t d, const uint32_t *syms)
{
	while (n > 1) {
		if (n <= SMALL) {
			insertion(a, n, d, syms);
			return;
		}
		uint32_t pv = median3(a[0].key, a[n / 2].key, a[n - 1].key);
		/* three ways: [0, lt) below, [lt, gt) equal, [gt, n) above */
		size_t lt = 0, i = 0, gt = n;
		while (i < gt) {
			uint32_t s = a[i].key;
			if (s < pv)
				swap(a, lt++, i++);
			else if (s > pv)
				swap(a, i, --gt);
			else
				i++;
		}
		size_t nlt = lt, neq = gt - lt, ngt = n - gt;
		struct seqsort_item *lo = a, *eq = a + lt, *hi = a + gt;
		/* recurse into the two smaller parts (each at most half of n),
		 * go on with the largest */
		if (neq >= nlt && neq >= ngt) {
			mkqs(lo, nlt, d, syms);
			mkqs(hi, ngt, d, syms);
			if (pv == 0) {
				by_id(eq, neq);
				return;
			}
			a = eq;
			n = neq;
			d++;
			load_keys(a, n, d, syms);
		} else {
			if (pv == 0) {
				by_id(eq, neq);
			} else {
				load_keys(eq, neq, d + 1, syms);
				mkqs(eq, neq, d + 1, syms);
			}
			if (nlt >= ngt) {
				mkqs(hi, ngt, d, syms);
				a = lo;
				n = nlt;
			} else {
				mkqs(lo, nlt, d, syms);
				a = hi;
				n = ngt;
			}
		}
	}
}

void seqsort(struct seqsort_item *items, size_t n, const uint32_t *syms)
{
	load_keys(items, n, 0, syms);
	mkqs(items, n, 0, syms);
}
