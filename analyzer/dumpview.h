/*
 * dumpview: one dump of a series as the values an aggregate reads, so
 * that a view of a dump (the web UI's timeline) reads the model without
 * changing it, as --thread does.
 *
 * The series' values (analyzer/growth.h) give each sample's values in
 * each dump; the aggregate of dump D takes them as the samples' values,
 * and with a second dump B as the base, the change from B to D as the
 * values and B's values as the base: what --base B D gives.  With one
 * thread, the thread's share of each sample in dump D (less its share in
 * B, with no base: thread values are net of the base, as --thread with
 * --base gives), from the dumps' own per-thread values
 * (growth.keep_threads).
 */
#ifndef JHEAP_DUMPVIEW_H
#define JHEAP_DUMPVIEW_H

#include "analyzer/aggregate.h"

/* Fills A->values (and A->bases with a base dump) for the dump O asks for
 * (o->series, o->dump, o->dump_diff, o->base_dump, o->one_thread).
 * Returns 0 or JH_ENOMEM. */
int dumpview_values(struct aggregate *a, const struct profile *p, const struct agg_options *o);

/* Whether dump DUMP of G has values of the thread with uid UID of P (a
 * per-thread value in some sample); with *NTHREADS the number of its
 * threads. */
bool dumpview_has_thread(const struct growth *g, const struct profile *p, size_t dump,
			 int64_t uid, size_t *nthreads);

#endif
