/*
 * aggcache: the last few aggregates of one model, kept with the options
 * they were built with, so that moving between a few settings (the
 * shell's commands: a focus and none, two values, a thread and all) does
 * not sum the profile again.  The least recently used one goes first.
 * Only aggregates of the one model belong here: clear it when the model
 * changes.
 */
#ifndef JHEAP_AGGCACHE_H
#define JHEAP_AGGCACHE_H

#include <stddef.h>
#include "analyzer/aggregate.h"

/* How many are kept: each costs a few MB. */
#define AGGCACHE_SIZE 4

/* The regular expressions of struct agg_options: focus, ignore, retain,
 * exclude, allocator, tagfocus, tagignore. */
#define AGGCACHE_NRES 7

/* An aggregate and what it was built with (res: copies of its regular
 * expressions, which key points to). */
struct aggcache_entry {
	struct aggregate agg;
	struct agg_options key;
	char *res[AGGCACHE_NRES];
};

struct aggcache {
	struct aggcache_entry e[AGGCACHE_SIZE];   /* the most recently used first */
	size_t n;
};

/* The kept aggregate built with options equal to AO (the same regular
 * expressions by text), moved to the front, or NULL.  The cache owns it. */
struct aggregate *aggcache_find(struct aggcache *c, const struct agg_options *ao);

/* Keeps A (built with AO) in front; the cache owns it from now on, and
 * releases it at once when it cannot copy AO's expressions. */
void aggcache_keep(struct aggcache *c, struct aggregate *a, const struct agg_options *ao);

/* Releases every kept aggregate; C is then empty (and may be reused). */
void aggcache_clear(struct aggcache *c);

#endif
