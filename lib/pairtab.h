/*
 * pairtab: an open-addressing hash table keyed by a pair of 32-bit ids
 * (a caller and its callee, a position and the function it calls), for
 * tables looked up tens of millions of times on a large profile, mostly
 * as cache misses.
 *
 * The contract:
 *  - every slot begins with struct pairtab_key: the pair (A, B) and the
 *    id of the caller's entry + 1, 0 marking an empty slot; the caller
 *    may put fields of its own after the key (an entry's sums), declared
 *    in a struct whose first member is the key, so that a lookup reads
 *    one slot and nothing else;
 *  - empty slots are all zeros: a new entry's own fields start at 0;
 *  - the caller keeps its entries and gives each its id (below
 *    UINT32_MAX); the table only finds them;
 *  - linear probing from jh_mix64(A << 32 | B), at most half full,
 *    4,096 slots at first, doubled when half full: putting an entry may
 *    move every slot, so a slot pointer is good only until the next put;
 *  - the order of the slots is the hash's: nothing shown may depend on
 *    it (the ids are the order).
 * Not for use by two threads at once.
 */
#ifndef JHEAP_PAIRTAB_H
#define JHEAP_PAIRTAB_H

#include <stddef.h>
#include <stdint.h>
#include "lib/hash.h"

struct pairtab_key {
	uint32_t a, b;
	uint32_t id;             /* the entry's id + 1; 0: an empty slot */
};

struct pairtab {
	unsigned char *slots;    /* cap slots of size bytes, cap a power of two */
	size_t cap, len, size;
};

/* An empty table of slots of SLOT_SIZE bytes (at least a struct
 * pairtab_key, its first member).  Returns 0 or JH_ENOMEM (T is then
 * empty and may be released). */
int pairtab_init(struct pairtab *t, size_t slot_size);

/* Frees T's slots; T zeroed (all zeros) is a table released already. */
void pairtab_release(struct pairtab *t);

/* Records that (A, B) is entry ID at SLOT, the empty slot pairtab_probe()
 * gave for (A, B), and grows T when it is half full (then every slot
 * pointer is stale: probe again).  Returns 0, or JH_ENOMEM when the
 * entry is recorded but T could not grow. */
int pairtab_put(struct pairtab *t, void *slot, uint32_t a, uint32_t b, uint32_t id);

static inline size_t pairtab_home(const struct pairtab *t, uint32_t a, uint32_t b)
{
	return (size_t)(jh_mix64((uint64_t)a << 32 | b) & (t->cap - 1));
}

/* Slot I of T, 0 <= I < t->cap (to visit every entry). */
static inline void *pairtab_at(const struct pairtab *t, size_t i)
{
	return t->slots + i * t->size;
}

/* The slot of (A, B) in T, or the empty slot where it would go (its id
 * 0).  T must be initialized. */
static inline void *pairtab_probe(const struct pairtab *t, uint32_t a, uint32_t b)
{
	size_t mask = t->cap - 1;
	for (size_t i = pairtab_home(t, a, b);; i = (i + 1) & mask) {
		struct pairtab_key *k = pairtab_at(t, i);
		if (!k->id || (k->a == a && k->b == b))
			return k;
	}
}

/* Starts loading the slot where a lookup of (A, B) begins, for callers
 * that know their next keys a little ahead. */
static inline void pairtab_prefetch(const struct pairtab *t, uint32_t a, uint32_t b)
{
	__builtin_prefetch(pairtab_at(t, pairtab_home(t, a, b)));
}

#endif
