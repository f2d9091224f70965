#include "analyzer/idmap.h"
#include "analyzer/util.h"

void idmap_init(struct idmap *m)
{
	memset(m, 0, sizeof(*m));
}

void idmap_release(struct idmap *m)
{
	free(m->hashes);
	free(m->ids);
	memset(m, 0, sizeof(*m));
}

static uint64_t fix(uint64_t h)
{
	h = jh_mix64(h);
	return h ? h : 1;
}

uint32_t idmap_find(const struct idmap *m, uint64_t hash, idmap_eq_fn eq, const void *ctx)
{
	if (!m->cap)
		return UINT32_MAX;
	hash = fix(hash);
	size_t mask = m->cap - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		if (!m->hashes[i])
			return UINT32_MAX;
		if (m->hashes[i] == hash && eq(ctx, m->ids[i]))
			return m->ids[i];
	}
}

static void insert(uint64_t *hashes, uint32_t *ids, size_t cap, uint64_t h, uint32_t id)
{
	size_t mask = cap - 1;
	size_t i = h & mask;
	while (hashes[i])
		i = (i + 1) & mask;
	hashes[i] = h;
	ids[i] = id;
}

int idmap_put(struct idmap *m, uint64_t hash, uint32_t id)
{
	if ((m->len + 1) * 4 >= m->cap * 3) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		uint64_t *nh = calloc(ncap, sizeof(*nh));
		uint32_t *ni = malloc(ncap * sizeof(*ni));
		if (!nh || !ni) {
			free(nh);
			free(ni);
			return JH_ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->hashes[i])
				insert(nh, ni, ncap, m->hashes[i], m->ids[i]);
		free(m->hashes);
		free(m->ids);
		m->hashes = nh;
		m->ids = ni;
		m->cap = ncap;
	}
	insert(m->hashes, m->ids, m->cap, fix(hash), id);
	m->len++;
	return 0;
}
