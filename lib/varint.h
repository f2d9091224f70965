/*
 * varint: base-128 numbers, the one codec for the formats that use them:
 * protocol buffers' varints for pprof's profile.proto (read by
 * analyzer/pprof.c, written by output/pbenc.c) and DWARF's LEB128, whose
 * unsigned form is the same encoding (read by symbolize/linetab.c and
 * symbolize/fdetab.c).
 *
 * A varint holds a uint64 seven bits a byte, the lowest first, with the
 * high bit set on every byte but the last: 1 to 10 bytes (protobuf.dev,
 * "Encoding"; DWARF 5, section 7.6).  A signed LEB128 is the same bytes,
 * the last byte's bit 6 giving the sign to extend.  Readers stop after ten
 * bytes, as libdw does, and refuse a longer number.  Header-only;
 * tests/unit/test_pbenc.c checks both directions on the encoding guide's
 * examples and the edges, and the signed form on DWARF's examples.
 */
#ifndef JHEAP_VARINT_H
#define JHEAP_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* Number of bytes the varint of V takes (1 to 10). */
static inline size_t varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes V's varint at P, which has room for varint_size(V) bytes;
 * returns that size. */
static inline size_t varint_put(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* The bytes of one base-128 number at *P, which must end before END: sets
 * *V to its low 64 bits and *BITS to the bits it held (7 a byte), and
 * moves *P past it.  Returns 0, or -1 (P unmoved) when it runs to END or
 * past ten bytes. */
static inline int varint_bytes(const unsigned char **p, const unsigned char *end, uint64_t *v,
			       unsigned *bits)
{
	const unsigned char *q = *p;
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (q >= end)
			return -1;
		unsigned char b = *q++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			*bits = shift + 7;
			*p = q;
			return 0;
		}
	}
	return -1;
}

/* Reads the varint (unsigned LEB128) at *P into *V as varint_bytes() does.
 * Bits past the 64th (of a tenth byte above 1) are dropped. */
static inline int varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned bits;
	return varint_bytes(p, end, v, &bits);
}

/* Reads DWARF's signed LEB128 at *P: the last byte's bit 6 is the sign,
 * extended above the number's bits. */
static inline int varint_get_sleb(const unsigned char **p, const unsigned char *end, int64_t *v)
{
	uint64_t r;
	unsigned bits;
	if (varint_bytes(p, end, &r, &bits))
		return -1;
	if (bits < 64 && (r >> (bits - 1)) & 1)
		r |= ~(uint64_t)0 << bits;
	*v = (int64_t)r;
	return 0;
}

#endif
