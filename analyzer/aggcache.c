/* Aggregates kept by their options (see aggcache.h). */
#include <stdlib.h>
#include <string.h>
#include "analyzer/aggcache.h"

static bool same_re(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_options(const struct agg_options *k, const struct agg_options *ao)
{
	return k->value == ao->value && k->gran == ao->gran && k->full_names == ao->full_names &&
	       k->keep_allocator == ao->keep_allocator && same_re(k->focus, ao->focus) &&
	       same_re(k->ignore, ao->ignore) && same_re(k->retain, ao->retain) &&
	       same_re(k->exclude, ao->exclude) && same_re(k->allocator, ao->allocator) &&
	       same_re(k->tagfocus, ao->tagfocus) && same_re(k->tagignore, ao->tagignore) &&
	       k->one_thread == ao->one_thread &&
	       (!k->one_thread || k->thread_uid == ao->thread_uid) &&
	       k->series == ao->series && (!k->series || (k->dump == ao->dump &&
	       k->dump_diff == ao->dump_diff && (!k->dump_diff || k->base_dump == ao->base_dump)));
}

struct aggregate *aggcache_find(struct aggcache *c, const struct agg_options *ao)
{
	for (size_t i = 0; i < c->n; i++) {
		if (same_options(&c->e[i].key, ao)) {
			struct aggcache_entry hit = c->e[i];
			memmove(c->e + 1, c->e, i * sizeof(*c->e));
			c->e[0] = hit;
			return &c->e[0].agg;
		}
	}
	return NULL;
}

static void entry_release(struct aggcache_entry *e)
{
	aggregate_release(&e->agg);
	for (int i = 0; i < AGGCACHE_NRES; i++)
		free(e->res[i]);
}

void aggcache_clear(struct aggcache *c)
{
	for (size_t i = 0; i < c->n; i++)
		entry_release(&c->e[i]);
	c->n = 0;
}

void aggcache_keep(struct aggcache *c, struct aggregate *a, const struct agg_options *ao)
{
	struct aggcache_entry e = { .agg = *a, .key = *ao };
	const char *res[AGGCACHE_NRES] = { ao->focus, ao->ignore, ao->retain, ao->exclude,
					   ao->allocator, ao->tagfocus, ao->tagignore };
	for (int i = 0; i < AGGCACHE_NRES; i++)
		if (res[i] && !(e.res[i] = strdup(res[i]))) {
			entry_release(&e);
			return;
		}
	e.key.focus = e.res[0];
	e.key.ignore = e.res[1];
	e.key.retain = e.res[2];
	e.key.exclude = e.res[3];
	e.key.allocator = e.res[4];
	e.key.tagfocus = e.res[5];
	e.key.tagignore = e.res[6];
	if (c->n == AGGCACHE_SIZE)
		entry_release(&c->e[--c->n]);
	memmove(c->e + 1, c->e, c->n * sizeof(*c->e));
	c->e[0] = e;
	c->n++;
}
