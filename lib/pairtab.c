/* A hash table keyed by a pair of 32-bit ids (see pairtab.h). */
#include <string.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/pairtab.h"

#define PAIRTAB_FIRST 4096

static int grow(struct pairtab *t, size_t ncap)
{
	unsigned char *ns = jh_zalloc(ncap, t->size);
	if (!ns)
		return JH_ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		const struct pairtab_key *k = pairtab_at(t, i);
		if (!k->id)
			continue;
		size_t j = (size_t)(jh_mix64((uint64_t)k->a << 32 | k->b) & (ncap - 1));
		while (((const struct pairtab_key *)(ns + j * t->size))->id)
			j = (j + 1) & (ncap - 1);
		memcpy(ns + j * t->size, k, t->size);
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

int pairtab_init(struct pairtab *t, size_t slot_size)
{
	*t = (struct pairtab){ .size = slot_size };
	return grow(t, PAIRTAB_FIRST);
}

void pairtab_release(struct pairtab *t)
{
	free(t->slots);
	*t = (struct pairtab){ 0 };
}

int pairtab_put(struct pairtab *t, void *slot, uint32_t a, uint32_t b, uint32_t id)
{
	struct pairtab_key *k = slot;
	k->a = a;
	k->b = b;
	k->id = id + 1;
	t->len++;
	if (2 * t->len >= t->cap)
		return grow(t, 2 * t->cap);
	return 0;
}
