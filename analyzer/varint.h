/*
 * varint: protocol buffers' base-128 varints, both ways, for pprof's
 * profile.proto (read by analyzer/pprof.c, written by output/pbenc.c).
 *
 * A varint holds a uint64 seven bits a byte, the lowest first, with the
 * high bit set on every byte but the last: 1 to 10 bytes (protobuf.dev,
 * "Encoding").  Header-only; tests/unit/test_pbenc.c checks both
 * directions on the encoding guide's examples and the edges.
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

/* Reads the varint at *P, which must end before END, into *V and moves *P
 * past it.  Returns 0, or -1 when it runs to END or past ten bytes.  Bits
 * past the 64th (of a tenth byte above 1) are dropped. */
static inline int varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (*p >= end)
			return -1;
		unsigned char b = *(*p)++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

#endif
