/*
 * hash: hashes for in-memory tables and checksums.  Header-only.
 */
#ifndef JHEAP_HASH_H
#define JHEAP_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* X with its bits mixed (MurmurHash3's final step): a hash of a 64-bit
 * key. */
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
