#include "analyzer/strtab.h"
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"

#define BLOCK_SIZE (256 * 1024)

struct strtab_block {
	struct strtab_block *next;
	size_t used, size;
	char data[];
};

struct key {
	const struct strtab *t;
	const char *s;
	size_t n;
};

static int key_eq(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;
	return k->t->ents[id].n == k->n && !memcmp(k->t->ents[id].s, k->s, k->n);
}

static char *alloc_bytes(struct strtab *t, size_t n)
{
	struct strtab_block *b = t->blocks;
	if (!b || b->size - b->used < n) {
		size_t size = n > BLOCK_SIZE ? n : BLOCK_SIZE;
		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		b->next = t->blocks;
		t->blocks = b;
	}
	char *p = b->data + b->used;
	b->used += n;
	return p;
}

int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	idmap_init(&t->index);
	return strtab_intern_n(t, "", 0) < 0 ? JH_ENOMEM : 0;
}

void strtab_release(struct strtab *t)
{
	while (t->blocks) {
		struct strtab_block *b = t->blocks;
		t->blocks = b->next;
		free(b);
	}
	free(t->ents);
	idmap_release(&t->index);
	memset(t, 0, sizeof(*t));
}

uint32_t strtab_find(const struct strtab *t, const char *s)
{
	struct key k = { t, s, strlen(s) };
	return idmap_find(&t->index, jh_hash_fast(s, k.n, 0), key_eq, &k);
}

int64_t strtab_intern_n(struct strtab *t, const char *s, size_t n)
{
	struct key k = { t, s, n };
	uint64_t h = jh_hash_fast(s, n, 0);
	uint32_t id = idmap_find(&t->index, h, key_eq, &k);
	if (id != UINT32_MAX)
		return id;
	if (n >= UINT32_MAX || t->len >= UINT32_MAX - 1)
		return JH_ELIMIT;
	if (jh_grow(&t->ents, &t->cap, t->len + 1, sizeof(*t->ents)))
		return JH_ENOMEM;
	char *p = alloc_bytes(t, n + 1);
	if (!p)
		return JH_ENOMEM;
	memcpy(p, s, n);
	p[n] = 0;
	id = (uint32_t)t->len;
	t->ents[id].s = p;
	t->ents[id].n = (uint32_t)n;
	if (idmap_put(&t->index, h, id))
		return JH_ENOMEM;
	t->len++;
	return id;
}

int64_t strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_n(t, s, strlen(s));
}
