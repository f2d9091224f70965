/*
 * lib/pairtab.h: every pair put is found again with its id and its own
 * fields, through the table's growth from 4,096 slots to hundreds of
 * thousands; a pair never put is not found (its slot is empty, all
 * zeros); pairs of 0 and of UINT32_MAX are keys like any other; the
 * slots visited one by one hold each entry once.
 */
#include <stdint.h>
#include "lib/errors.h"
#include "lib/pairtab.h"
#include "unit.h"

/* A caller's slot: the key, then its own fields. */
struct slot {
	struct pairtab_key k;
	uint32_t last;
	double w;
};

/* N distinct pairs in a scrambled order (I -> I * 7919 mod N is a
 * permutation when N is no multiple of 7919): a few callers with many
 * callees each, and the extremes. */
static void make_pairs(uint32_t (*p)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = i * 7919 % n;
		p[i][0] = (uint32_t)(k / 97);
		p[i][1] = (uint32_t)(k % 97) * 65537u;
	}
	p[0][0] = p[0][1] = 0;
	if (n > 1)
		p[1][0] = p[1][1] = UINT32_MAX;
}

/* Puts N pairs with ids 0..N-1 and their fields, as a caller does:
 * probe, put, probe again to fill the fields. */
static int put_all(struct pairtab *t, uint32_t (*p)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct slot *s = pairtab_probe(t, p[i][0], p[i][1]);
		if (s->k.id || s->last || s->w != 0)
			return 0;   /* not empty, or not all zeros */
		if (pairtab_put(t, s, p[i][0], p[i][1], (uint32_t)i))
			return 0;
		s = pairtab_probe(t, p[i][0], p[i][1]);
		s->last = (uint32_t)i * 3;
		s->w = (double)i / 2;
	}
	return 1;
}

/* T with N pairs made and put (the pairs returned, the caller frees
 * them); the test program stops with a message when that fails. */
static uint32_t (*filled(struct pairtab *t, size_t n))[2]
{
	uint32_t (*p)[2] = malloc(n * sizeof(*p));
	if (p)
		make_pairs(p, n);
	if (p && !pairtab_init(t, sizeof(struct slot)) && t->cap == 4096 && put_all(t, p, n) &&
	    t->len == n)
		return p;
	fprintf(stderr, "%s:%d: the table of %zu pairs could not be filled\n", __FILE__, __LINE__, n);
	exit(1);
}

TEST(finds_every_pair_through_growth)
{
	size_t n = 300000;
	struct pairtab t;
	uint32_t (*p)[2] = filled(&t, n);
	CHECK(t.cap >= 2 * n && t.cap < 4 * n);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		const struct slot *s = pairtab_probe(&t, p[i][0], p[i][1]);
		bad += s->k.id != i + 1 || s->k.a != p[i][0] || s->k.b != p[i][1] ||
		       s->last != i * 3 || s->w != (double)i / 2;
	}
	CHECK_INT(bad, 0);
	pairtab_release(&t);
	CHECK(t.slots == NULL && t.cap == 0 && t.len == 0);
	free(p);
}

TEST(absent_pairs_are_not_found)
{
	size_t n = 5000;
	struct pairtab t;
	uint32_t (*p)[2] = filled(&t, n);
	/* callees that are no multiple of 65537, callers past the last */
	size_t found = 0;
	for (uint32_t i = 0; i < 20000; i++) {
		const struct slot *s = pairtab_probe(&t, i % 60, i * 65537u + 1);
		const struct slot *u = pairtab_probe(&t, (uint32_t)(n / 97) + 1 + i, 0);
		found += s->k.id || s->last || u->k.id || u->last;
	}
	CHECK_INT(found, 0);
	pairtab_release(&t);
	free(p);
}

TEST(every_entry_once_in_the_slots)
{
	size_t n = 10000;
	uint32_t (*p)[2] = malloc(n * sizeof(*p));
	uint8_t *seen = calloc(n, 1);
	struct pairtab t;
	make_pairs(p, n);
	CHECK_INT(pairtab_init(&t, sizeof(struct pairtab_key)), 0);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(pairtab_put(&t, pairtab_probe(&t, p[i][0], p[i][1]), p[i][0], p[i][1],
				      (uint32_t)i), 0);
	size_t entries = 0, wrong = 0;
	for (size_t i = 0; i < t.cap; i++) {
		const struct pairtab_key *k = pairtab_at(&t, i);
		if (!k->id)
			continue;
		entries++;
		uint32_t id = k->id - 1;
		wrong += id >= n || seen[id] || p[id][0] != k->a || p[id][1] != k->b;
		if (id < n)
			seen[id] = 1;
	}
	CHECK_INT(entries, n);
	CHECK_INT(wrong, 0);
	pairtab_release(&t);
	pairtab_release(&t);   /* released twice: nothing to free */
	free(seen);
	free(p);
}

int main(void)
{
	RUN(finds_every_pair_through_growth);
	RUN(absent_pairs_are_not_found);
	RUN(every_entry_once_in_the_slots);
	return UNIT_END();
}
