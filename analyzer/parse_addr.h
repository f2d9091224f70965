/*
 * parse_addr: one address of a stack line, read from its hex text.
 * Internal to the parser (included by analyzer/parse.c alone).
 *
 * Addresses are most of a dump's bytes: a token of up to 15 digits is
 * read eight bytes at a time (each byte of a 64-bit word tested and
 * turned into its digit's value at once), anything else byte by byte
 * through a table; both give the value, the end and the messages of a
 * plain loop over jh_hexval() (tests/unit/test_parse_fast.c compares
 * them on every token shape).  On the benchmark's second dump the
 * word-at-a-time reading took 6% off the parse.
 */
#ifndef JHEAP_PARSE_ADDR_H
#define JHEAP_PARSE_ADDR_H

#include <stdint.h>
#include <string.h>
#include "analyzer/parser.h"

/* jh_hexval() plus one as a table (0: not a hex digit): addresses are most
 * of a dump's bytes. */
static const unsigned char hex_table[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
	['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
	['F'] = 16,
};

/* Eight bytes at a time (SWAR: the eight bytes of a 64-bit word, the
 * first in the lowest).  BYTES_HIGH is each byte's high bit, the flag of
 * a test of each byte. */
#define BYTES_ONE 0x0101010101010101ULL
#define BYTES_HIGH 0x8080808080808080ULL

/* Per byte of X: whether its low seven bits are N or more (N <= 0x80):
 * each byte's high bit is set before N is taken away, so that no byte
 * borrows from the next. */
static inline uint64_t bytes_ge(uint64_t x, unsigned n)
{
	return ((x | BYTES_HIGH) - n * BYTES_ONE) & BYTES_HIGH;
}

/* Per byte of X: its high bit when it is a hex digit, 0-9, a-f or A-F. */
static inline uint64_t bytes_hex(uint64_t x)
{
	uint64_t digit = bytes_ge(x, '0') & ~bytes_ge(x, '9' + 1);
	uint64_t lower = x | 0x2020202020202020ULL;   /* 'A'-'F' as 'a'-'f' */
	uint64_t letter = bytes_ge(lower, 'a') & ~bytes_ge(lower, 'f' + 1);
	return (digit | letter) & ~x & BYTES_HIGH;
}

/* The value of the first N (1 to 8) hex digits of X. */
static inline uint64_t bytes_hex_value(uint64_t x, unsigned n)
{
	/* each digit's value in its byte: '0'-'9' are 0x30-0x39, the letters
	 * 0x41-0x46 and 0x61-0x66 (bit 6 set: add 9) */
	uint64_t t = (x & 0x0f0f0f0f0f0f0f0fULL) + 9 * ((x >> 6) & BYTES_ONE);
	/* the first digit in the highest byte, the N digits at the bottom */
	t = __builtin_bswap64(t) >> (8 * (8 - n));
	t = (t | t >> 4) & 0x00ff00ff00ff00ffULL;
	t = (t | t >> 8) & 0x0000ffff0000ffffULL;
	return (t | t >> 16) & 0xffffffffULL;
}

/* One address "0x1a2b" (the 0x is optional, as in jeprof). */
static inline int read_addr(struct parser *ps, const char **s, const char *e, uint64_t *out)
{
	const char *q = *s;
	if (e - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	/* up to 15 digits and a delimiter, read 16 bytes at a time, when
	 * that many are in the buffer (past E: the digits must end by E);
	 * anything else goes the byte-by-byte way below */
	if (ps->end - q >= 16) {
		uint64_t w0, w1;
		memcpy(&w0, q, 8);
		memcpy(&w1, q + 8, 8);
		uint64_t not0 = bytes_hex(w0) ^ BYTES_HIGH, not1 = bytes_hex(w1) ^ BYTES_HIGH;
		unsigned n = not0 ? (unsigned)__builtin_ctzll(not0) / 8
			 : not1 ? 8 + (unsigned)__builtin_ctzll(not1) / 8 : 16;
		if (n && n < 16 && q + n <= e && (q + n == e || q[n] == ' ' || q[n] == '\t')) {
			*out = n <= 8 ? bytes_hex_value(w0, n)
				      : bytes_hex_value(w0, 8) << (4 * (n - 8)) | bytes_hex_value(w1, n - 8);
			*s = q + n;
			return 0;
		}
	}
	uint64_t v = 0;
	const char *digits = q;
	int d;
	bool long_addr = false;
	while (q < e && (d = hex_table[(unsigned char)*q] - 1) >= 0) {
		if (v >> 60) {
			long_addr = true;
			break;
		}
		v = v << 4 | (uint64_t)d;
		q++;
	}
	if (long_addr || q == digits || (q < e && *q != ' ' && *q != '\t')) {
		/* the token, up to 40 bytes of it */
		const char *w = *s;
		while (w < e && *w != ' ' && *w != '\t')
			w++;
		int n = (int)(w - *s > 40 ? 40 : w - *s);
		if (long_addr)
			return perr(ps, JH_EFORMAT, "address '%.*s' is longer than 64 bits", n, *s);
		return perr(ps, JH_EFORMAT, "expected a hex address, found '%.*s'", n, *s);
	}
	*s = q;
	*out = v;
	return 0;
}

#endif
