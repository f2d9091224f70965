/*
 * array: growable arrays as (pointer, length, capacity) triples, zeroed
 * allocation, sorting that accepts an empty array, and binary searches
 * over records sorted by a 64-bit key.  Header-only.
 */
#ifndef JHEAP_ARRAY_H
#define JHEAP_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/errors.h"

/* Zeroed memory for N elements of SIZE that is read before it is written
 * (hash tables, sums): calloc's fresh pages would be mapped to the zero
 * page by the first read and copied by the first write, two page faults
 * and, with another thread running, a TLB shootdown.  Writing the zeros
 * here takes one fault a page. */
static inline void *jh_zalloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t bytes = n * size;
	void *p = malloc(bytes ? bytes : 1);
	/* hides P's origin from the compiler, which would otherwise turn
	 * malloc and memset back into calloc */
	__asm__("" : "+r"(p));
	if (p)
		memset(p, 0, bytes);
	return p;
}

/* Grows *ARR (of element size ELEM) so that it holds at least NEED elements.
 * Returns 0, or JH_ENOMEM leaving the array as it was. */
static inline int jh_grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	void **arr = arrp;
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return JH_ENOMEM;
		ncap *= 2;
	}
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return JH_ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Appends one element to a (ptr, len, cap) triple; evaluates to 0 or JH_ENOMEM. */
#define JH_PUSH(ptr, len, cap, val) \
	(jh_grow(&(ptr), &(cap), (len) + 1, sizeof(*(ptr))) ? JH_ENOMEM : \
	 ((ptr)[(len)++] = (val), 0))

/* qsort_r and qsort that accept an empty array given as NULL (passing NULL
 * to the C library's is undefined even with a zero count). */
static inline void jh_qsort_r(void *base, size_t n, size_t size,
			      int (*cmp)(const void *, const void *, void *), void *arg)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, arg);
}

static inline void jh_qsort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* Lower bound in N records of SIZE bytes sorted by the uint64_t at byte
 * OFF of each: the first index whose key is not below KEY (N: none). */
static inline size_t jh_lower_bound_u64(const void *base, size_t n, size_t size, size_t off,
					uint64_t key)
{
	const char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, b + mid * size + off, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Upper bound in the same: the first index whose key is above KEY (N:
 * none), so that the index before it is the last record at or below KEY. */
static inline size_t jh_upper_bound_u64(const void *base, size_t n, size_t size, size_t off,
					uint64_t key)
{
	return key == UINT64_MAX ? n : jh_lower_bound_u64(base, n, size, off, key + 1);
}

#endif
