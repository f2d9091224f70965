/* Small helpers shared by every module: growable arrays, error messages,
 * hashing.  Header-only so that nothing here needs its own object file. */
#ifndef JHEAP_UTIL_H
#define JHEAP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyzer/escape.h"

/* Error codes returned by library-style functions (negative). */
enum {
	JH_OK = 0,
	JH_ENOMEM = -1,   /* out of memory */
	JH_EIO = -2,      /* cannot read or write a file */
	JH_EFORMAT = -3,  /* malformed input */
	JH_ELIMIT = -4,   /* input exceeds a documented limit */
	JH_EUSAGE = -5,   /* the caller asked for something impossible */
};

/* Writes a message into a caller-supplied buffer; returns CODE so that
 * "return jh_err(err, len, JH_EFORMAT, ...)" reads naturally.  Control
 * characters (from the input a message quotes) are escaped: a message is
 * one line, and no escape sequence reaches the terminal. */
__attribute__((format(printf, 4, 5)))
static inline int jh_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		char msg[4096];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		escape_into(err, errlen, msg, strlen(msg));
	}
	return code;
}

/* How many threads a stage should use: 2 on a machine with two cores or
 * more, else 1; JHEAP_THREADS=1 or 2 overrides it (the tests compare
 * both). */
static inline int jh_threads(void)
{
	const char *force = getenv("JHEAP_THREADS");
	if (force && *force)
		return atoi(force) >= 2 ? 2 : 1;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
}

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

/* Big arrays: those that grow to many megabytes on a large dump (a
 * profile's samples, stacks and per-thread values).  Every 4 KiB page of
 * fresh memory costs a page fault on its first write, thousands of them
 * for such arrays; past JH_BIG_MIN bytes an array gets a mapping of its
 * own with transparent huge pages (one fault per 2 MiB), grown by mremap,
 * which moves page tables instead of copying.  Smaller ones, or when the
 * mapping fails, are malloc'd.  A header before the elements says which,
 * so such an array is freed with jh_big_free() and grown with
 * jh_big_grow() only. */
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

/* 64-bit FNV-1a followed by a final mix; good enough for in-memory tables. */
static inline uint64_t jh_hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	if (!h)
		h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* A faster hash for tables and checksums: eight bytes per multiply.
 * Hashing A then B with the first result as H equals hashing A and B
 * together when A's length is a multiple of 8.  Not for anything whose
 * value is shown (flame graph colours keep jh_hash_bytes). */
static inline uint64_t jh_hash_fast(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	if (!h)
		h = 0x9e3779b97f4a7c15ULL;
	for (; n >= 8; n -= 8, s += 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; n; n--, s++)
		h = (h ^ *s) * 0x100000001b3ULL;
	return h;
}

static inline uint64_t jh_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

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

/* Value of the hex digit C, or -1. */
static inline int jh_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Writes the N bytes at P as 2N lowercase hex digits and a NUL into DST
 * (which holds 2N+1 bytes), as build ids are spelled. */
static inline void jh_hex(char *dst, const void *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		dst[2 * i] = digits[b[i] >> 4];
		dst[2 * i + 1] = digits[b[i] & 15];
	}
	dst[2 * n] = '\0';
}

/* Length (1 to 4) of the valid UTF-8 sequence at S, which has N bytes
 * left, or 0 when S does not start one: overlong forms, surrogates and
 * code points past U+10FFFF are invalid (RFC 3629).  Reading stops at the
 * first byte that is not a continuation, so a NUL-terminated string is
 * safe with N = 4. */
static inline size_t jh_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	uint32_t cp, min;
	size_t len;
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
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
