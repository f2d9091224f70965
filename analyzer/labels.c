/* Interned sets of sample labels (see labels.h). */
#include <stdlib.h>
#include <string.h>
#include "analyzer/labels.h"
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"

int labeltab_init(struct labeltab *t)
{
	memset(t, 0, sizeof(*t));
	idmap_init(&t->index);
	/* set 0: no labels */
	struct labelset none = { 0, 0 };
	return JH_PUSH(t->sets, t->nsets, t->cap_sets, none);
}

void labeltab_release(struct labeltab *t)
{
	free(t->pairs);
	free(t->sets);
	idmap_release(&t->index);
	memset(t, 0, sizeof(*t));
}

struct set_key {
	const struct labeltab *t;
	const struct pf_label *pairs;
	size_t n;
};

static int set_eq(const void *ctx, uint32_t id)
{
	const struct set_key *k = ctx;
	const struct labelset *s = &k->t->sets[id];
	return s->n == k->n && !memcmp(k->t->pairs + s->first, k->pairs, k->n * sizeof(*k->pairs));
}

int64_t labeltab_intern(struct labeltab *t, const struct pf_label *pairs, size_t n)
{
	if (!n)
		return 0;
	/* sorted by key (insertion: sets are small), the last value of a
	 * key kept */
	struct pf_label *s = malloc(n * sizeof(*s));
	if (!s)
		return JH_ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < m && s[j].key < pairs[i].key)
			j++;
		if (j < m && s[j].key == pairs[i].key) {
			s[j].value = pairs[i].value;
			continue;
		}
		memmove(s + j + 1, s + j, (m - j) * sizeof(*s));
		s[j] = pairs[i];
		m++;
	}
	uint64_t h = jh_mix64(jh_hash_bytes(s, m * sizeof(*s), 0));
	struct set_key k = { t, s, m };
	uint32_t id = idmap_find(&t->index, h, set_eq, &k);
	if (id != UINT32_MAX) {
		free(s);
		return id;
	}
	int rc = 0;
	if (t->nsets >= UINT32_MAX - 1 || t->npairs + m >= UINT32_MAX ||
	    jh_grow(&t->pairs, &t->cap_pairs, t->npairs + m, sizeof(*t->pairs)))
		rc = JH_ENOMEM;
	struct labelset set = { (uint32_t)t->npairs, (uint32_t)m };
	if (!rc) {
		if (m)
			memcpy(t->pairs + t->npairs, s, m * sizeof(*s));
		t->npairs += m;
		rc = JH_PUSH(t->sets, t->nsets, t->cap_sets, set);
	}
	free(s);
	if (rc || idmap_put(&t->index, h, (uint32_t)(t->nsets - 1)))
		return JH_ENOMEM;
	return (int64_t)(t->nsets - 1);
}
