/*
 * bigarray: the arrays that grow to many megabytes on a large dump (a
 * profile's samples, stacks and per-thread values).  Every 4 KiB page of
 * fresh memory costs a page fault on its first write, thousands of them
 * for such arrays; past JH_BIG_MIN bytes (4 MiB) an array gets a mapping
 * of its own with transparent huge pages (one fault per 2 MiB), grown by
 * mremap, which moves page tables instead of copying.  Smaller ones, or
 * when the mapping fails, are malloc'd.  A header before the elements
 * says which, so such an array is freed with jh_big_free() and grown with
 * jh_big_grow() only.  The parser sizes them from the body's length
 * before it starts (reserve_body in analyzer/parse.c).  A 40 MB dump then
 * takes about 2,800 page faults instead of 11,000; on the benchmark's
 * second dump (make bench) they save about 13 ms of a 96 ms run.
 * Header-only; tests/unit/test_bigarray.c checks that the elements
 * survive every kind of growth.
 */
#ifndef JHEAP_BIGARRAY_H
#define JHEAP_BIGARRAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "lib/errors.h"

#define JH_BIG_MIN ((size_t)4 << 20)
#define JH_BIG_ALIGN ((size_t)2 << 20)   /* a huge page */

struct jh_big {
	size_t mapped;   /* length of the mapping, 0 when malloc'd */
	size_t pad;      /* keeps the elements 16-byte aligned */
};

/* LEN bytes (a multiple of JH_BIG_ALIGN) of fresh memory aligned to
 * JH_BIG_ALIGN, so that all of it can be huge pages, or NULL. */
static inline void *jh_big_map(size_t len)
{
	if (len > SIZE_MAX - JH_BIG_ALIGN)
		return NULL;
	size_t span = len + JH_BIG_ALIGN;
	char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *a = (char *)(((uintptr_t)m + JH_BIG_ALIGN - 1) & ~(uintptr_t)(JH_BIG_ALIGN - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (a + len < m + span)
		munmap(a + len, (size_t)(m + span - (a + len)));
	/* best effort: without it this is an ordinary mapping */
	madvise(a, len, MADV_HUGEPAGE);
	return a;
}

/* Frees a big array (NULL: nothing). */
static inline void jh_big_free(void *arr)
{
	if (!arr)
		return;
	struct jh_big *h = (struct jh_big *)arr - 1;
	if (h->mapped)
		munmap(h, h->mapped);
	else
		free(h);
}

/* jh_grow() for a big array *ARRP whose first USED elements are in use.
 * Returns 0, or JH_ENOMEM leaving the array as it was. */
static inline int jh_big_grow(void *arrp, size_t *cap, size_t used, size_t need, size_t elem)
{
	void **arr = arrp;
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > (SIZE_MAX / 2 - 2 * JH_BIG_ALIGN) / elem)
			return JH_ENOMEM;
		ncap *= 2;
	}
	struct jh_big *h = *arr ? (struct jh_big *)*arr - 1 : NULL, *n = NULL;
	size_t bytes = sizeof(*h) + ncap * elem;
	if (bytes >= JH_BIG_MIN) {
		size_t len = (bytes + JH_BIG_ALIGN - 1) & ~(JH_BIG_ALIGN - 1);
		if (h && h->mapped) {
			/* in place, else onto an aligned stretch (the move keeps
			 * the huge pages whole) */
			void *m = mremap(h, h->mapped, len, 0);
			if (m == MAP_FAILED && (m = jh_big_map(len))) {
				void *to = m;
				m = mremap(h, h->mapped, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
				if (m == MAP_FAILED)
					munmap(to, len);
			}
			n = m == MAP_FAILED ? NULL : m;
		} else if ((n = jh_big_map(len)) && h) {
			memcpy(n + 1, h + 1, used * elem);
			free(h);
		}
		if (n) {
			n->mapped = len;
			*arr = n + 1;
			*cap = (len - sizeof(*n)) / elem;
			return 0;
		}
	}
	/* a mapping that cannot grow is copied to the heap */
	size_t mapped = h ? h->mapped : 0;
	n = h && !mapped ? realloc(h, bytes) : malloc(bytes);
	if (!n)
		return JH_ENOMEM;
	if (mapped) {
		memcpy(n + 1, h + 1, used * elem);
		munmap(h, mapped);
	}
	n->mapped = 0;
	*arr = n + 1;
	*cap = ncap;
	return 0;
}

/* JH_PUSH() for a big array. */
#define JH_BIG_PUSH(ptr, len, cap, val) \
	(jh_big_grow(&(ptr), &(cap), (len), (len) + 1, sizeof(*(ptr))) ? JH_ENOMEM : \
	 ((ptr)[(len)++] = (val), 0))

#endif
