/*
 * idmap: an open-addressing hash index from a 64-bit hash to a uint32 id.
 *
 * The table stores only (hash, id); the caller keeps the records and says
 * whether a record matches through an equality callback, so one index can
 * serve strings, address vectors or tuples without copying keys.
 */
#ifndef JHEAP_IDMAP_H
#define JHEAP_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	/* One word a slot, tag << 32 | id, where the tag is 32 bits of the
	 * mixed hash (never 0: 0 marks an empty slot) and also picks the
	 * slot: a probe reads one word, and growing needs no hashes. */
	uint64_t *slots;
	size_t cap, len;
};

/* Returns nonzero when record ID equals the key the caller is looking for. */
typedef int (*idmap_eq_fn)(const void *ctx, uint32_t id);

void idmap_init(struct idmap *m);
void idmap_release(struct idmap *m);

/* Looks HASH up; returns the id of the first record for which EQ says yes,
 * or UINT32_MAX. */
uint32_t idmap_find(const struct idmap *m, uint64_t hash, idmap_eq_fn eq, const void *ctx);

/* Records that HASH maps to ID (the caller has checked it is absent).
 * Returns 0 or JH_ENOMEM. */
int idmap_put(struct idmap *m, uint64_t hash, uint32_t id);

/* Makes room for N entries in all, so that putting them does not grow the
 * table step by step.  Returns 0 or JH_ENOMEM (the map is then unchanged). */
int idmap_reserve(struct idmap *m, size_t n);

/* Starts loading the slot where a lookup of HASH begins, for callers that
 * know their next keys a little ahead. */
void idmap_prefetch(const struct idmap *m, uint64_t hash);

#endif
