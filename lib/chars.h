/*
 * chars: hex digits and UTF-8 sequences, byte by byte.  Header-only.
 */
#ifndef JHEAP_CHARS_H
#define JHEAP_CHARS_H

#include <stddef.h>
#include <stdint.h>

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

#endif
