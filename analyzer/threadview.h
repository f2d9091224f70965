/*
 * threadview: each thread's share of a profile as a small profile of its
 * own, for --thread='*'.
 *
 * A report per thread over the whole profile would cost every thread the
 * whole profile's locations, names and samples: 200,000 threads took 17 s
 * where 5,000 took 0.03 s.  Here the per-thread values are grouped by
 * thread once, and each thread's profile holds only the samples it has
 * values in and the locations, lines, functions, mappings and strings
 * those reach, so that all the reports together cost what the profile's
 * per-thread values and their stacks do.
 */
#ifndef JHEAP_THREADVIEW_H
#define JHEAP_THREADVIEW_H

#include <stddef.h>
#include <stdint.h>
#include "analyzer/profile.h"

struct threadview {
	const struct profile *p;
	uint32_t *ids;            /* the threads, in uid order */
	size_t n;
	size_t *first;            /* per thread k: its values are vals[first[k] .. first[k+1]) */
	uint32_t *vals;           /* p->tvals indices grouped by thread */
	uint32_t stamp;           /* of the thread being built */
	/* what the thread being built has copied so far: id in its profile,
	 * valid where *_seen is the stamp */
	uint32_t *loc_seen, *loc_id, *fn_seen, *fn_id, *map_seen, *map_id, *str_seen, *str_id,
		 *smp_seen, *smp_id;
};

/* Groups P's per-thread values by thread, for all its threads (ONE_UID
 * NULL) or the one whose uid is *ONE_UID.  Returns 0 or JH_ENOMEM.  P must
 * not change until threadview_release(). */
int threadview_init(struct threadview *tv, const struct profile *p, const int64_t *one_uid);

/* Fills OUT (not initialized yet) with thread K's share of the profile
 * (in uid order): its samples, with the thread's values and no base, and
 * what they refer to.  Returns 0 or JH_ENOMEM; OUT must be released
 * either way. */
int threadview_build(struct threadview *tv, size_t k, struct profile *out);

void threadview_release(struct threadview *tv);

#endif
