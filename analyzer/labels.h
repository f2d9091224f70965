/*
 * labels: where a sample came from, as sets of KEY=VALUE pairs (pprof's
 * Sample.label with key and str), interned so that a sample holds one
 * number: its set's id.
 *
 * The pairs are string ids of the profile's string table; a set holds
 * its pairs sorted by key, one value per key.  Id 0 is the empty set
 * (every sample of a dump read without --label or --label-from-path),
 * so that a profile without labels is the same as before labels existed.
 * Two samples with the same stack and different sets are different
 * samples (pprof's rule), summed together only by reports that do not
 * look at labels.
 */
#ifndef JHEAP_LABELS_H
#define JHEAP_LABELS_H

#include <stddef.h>
#include <stdint.h>
#include "lib/idmap.h"

struct pf_label {
	uint32_t key, value;     /* string ids */
};

struct labeltab {
	struct pf_label *pairs;  size_t npairs, cap_pairs;
	struct labelset { uint32_t first, n; } *sets;  size_t nsets, cap_sets;
	struct idmap index;
};

int labeltab_init(struct labeltab *t);
void labeltab_release(struct labeltab *t);

/* The id of the set of the N pairs at PAIRS (any order; a key given twice
 * keeps its last value), added when new; 0 for none.  Returns the id or
 * a negative JH_ code. */
int64_t labeltab_intern(struct labeltab *t, const struct pf_label *pairs, size_t n);

/* The pairs of set ID, sorted by key, and their count in *N. */
static inline const struct pf_label *labeltab_get(const struct labeltab *t, uint32_t id,
						  size_t *n)
{
	if (id >= t->nsets) {
		*n = 0;
		return NULL;
	}
	*n = t->sets[id].n;
	return t->pairs + t->sets[id].first;
}

#endif
