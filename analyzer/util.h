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
 * "return jh_err(err, len, JH_EFORMAT, ...)" reads naturally. */
__attribute__((format(printf, 4, 5)))
static inline int jh_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
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

static inline uint64_t jh_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
