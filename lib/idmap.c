#include "lib/idmap.h"
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"

/* Tags are 32 bits and pick the slot, so a table never has more slots. */
#define IDMAP_MAX_CAP ((uint64_t)1 << 32)

void idmap_init(struct idmap *m)
{
	memset(m, 0, sizeof(*m));
}

void idmap_release(struct idmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static uint64_t tag(uint64_t h)
{
	h = jh_mix64(h) >> 32;
	return h ? h : 1;
}

uint32_t idmap_find(const struct idmap *m, uint64_t hash, idmap_eq_fn eq, const void *ctx)
{
	if (!m->cap)
		return UINT32_MAX;
	uint64_t t = tag(hash);
	size_t mask = m->cap - 1;
	for (size_t i = t & mask;; i = (i + 1) & mask) {
		uint64_t s = m->slots[i];
		if (!s)
			return UINT32_MAX;
		if (s >> 32 == t && eq(ctx, (uint32_t)s))
			return (uint32_t)s;
	}
}

void idmap_prefetch(const struct idmap *m, uint64_t hash)
{
	if (m->cap)
		__builtin_prefetch(&m->slots[tag(hash) & (m->cap - 1)]);
}

static void insert(uint64_t *slots, size_t cap, uint64_t s)
{
	size_t mask = cap - 1;
	size_t i = (s >> 32) & mask;
	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = s;
}

/* Rebuilds the table with NCAP slots (a power of two, above the entries). */
static int resize(struct idmap *m, size_t ncap)
{
	if (ncap > IDMAP_MAX_CAP)
		return JH_ENOMEM;
	uint64_t *ns = jh_zalloc(ncap, sizeof(*ns));
	if (!ns)
		return JH_ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i])
			insert(ns, ncap, m->slots[i]);
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

/* Slots for N entries at a load of at most 3/4, as idmap_put() keeps it. */
static size_t cap_for(size_t n)
{
	size_t cap = 64;
	while ((n + 1) * 4 >= cap * 3) {
		if (cap >= IDMAP_MAX_CAP || cap > SIZE_MAX / 2)
			return SIZE_MAX;
		cap *= 2;
	}
	return cap;
}

int idmap_reserve(struct idmap *m, size_t n)
{
	size_t cap = cap_for(n);
	if (cap == SIZE_MAX)
		return JH_ENOMEM;
	return cap > m->cap ? resize(m, cap) : 0;
}

int idmap_put(struct idmap *m, uint64_t hash, uint32_t id)
{
	if ((m->len + 1) * 4 >= m->cap * 3 && resize(m, m->cap ? m->cap * 2 : 64))
		return JH_ENOMEM;
	insert(m->slots, m->cap, tag(hash) << 32 | id);
	m->len++;
	return 0;
}
