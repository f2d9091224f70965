/*
 * growth: the values of each dump of a time series of one process
 * (analyzer/series.h orders and checks the dumps; --timeline reads the
 * values per dump, --growth their fit).  Each call site's value in each
 * dump is fitted with a least-squares line; a site that grows steadily (a
 * leak) has a positive slope and a fit near 1, a large but stable cache has
 * a slope near 0, and a spike that is freed again fits badly.
 */
#ifndef JHEAP_GROWTH_H
#define JHEAP_GROWTH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "analyzer/aggregate.h"
#include "analyzer/profile.h"

struct series;

/* A thread's values in one sample of one dump. */
struct growth_tval {
	uint32_t sample, thread;  /* of the profile, as p->tvals' */
	double v[PF_NVALUES];
};

struct growth {
	size_t ndumps;
	double **snap;        /* per dump: the profile's running sums after it was merged */
	size_t *nsnap;        /* samples in each snapshot */
	double *v;            /* [sample][dump][PF_NVALUES]: each dump's own values */
	size_t nsamples;
	/* for the reports, set by the caller: the dumps fitted (in order) and
	 * those given but left out (--growth fits regular dumps only), or
	 * NULL */
	const struct series *series, *left;
	/* With keep_threads (set before the first snapshot): each dump's own
	 * per-thread values, tv[tv0[k] .. tv0[k + 1]) for dump k, so that a
	 * view of one dump can show one thread (the web UI's timeline) */
	bool keep_threads;
	struct growth_tval *tv;
	size_t ntv, cap_tv;
	size_t *tv0;          /* ndumps + 1 of them */
	double *tv_prev;      /* p->tvals' values at the last snapshot */
	size_t ntv_prev;
};

void growth_init(struct growth *g);
void growth_release(struct growth *g);

/* Records P's values right after dump number g->ndumps was merged into it. */
int growth_snapshot(struct growth *g, const struct profile *p);

/* Turns the snapshots into per-dump values, following REMAP (old sample id
 * -> new, from profile_fold_by_symbol; NULL when unchanged). */
int growth_finish(struct growth *g, const struct profile *p, const uint32_t *remap);

/* Replaces each sample's values by its fitted growth over the series
 * (slope times the number of intervals, negative growth as 0), so any
 * output format can show where memory grows. */
void growth_apply(const struct growth *g, struct profile *p);

/* Sample SAMPLE's value V in dump DUMP (after growth_finish); V may be a
 * derived value (pf_value_of). */
double growth_value(const struct growth *g, size_t sample, size_t dump, enum pf_value v);

/* The per-thread values of dump DUMP (after growth_finish, with
 * keep_threads; none without), *N of them. */
const struct growth_tval *growth_thread_values(const struct growth *g, size_t dump, size_t *n);

/* Least-squares fit of Y[0..n) against 0..n-1: slope and R^2 (0 when Y is
 * constant). */
void growth_fit(const double *y, size_t n, double *slope, double *r2);

#endif
