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
	uint64_t *hashes;  /* 0 marks an empty slot (real hashes are forced non-zero) */
	uint32_t *ids;
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

#endif
