/*
 * unsample: jeprof's AdjustSamples (sub AdjustSamples in jemalloc's
 * bin/jeprof.in, installed as /usr/bin/jeprof), applied to one (objects,
 * bytes) pair.  All arithmetic is in doubles and nothing is rounded, so
 * totals match jeprof's to the last bit (tests/unit/test_parse.c,
 * tests/t0200-jheap-vs-jeprof.sh).
 */
#ifndef JHEAP_UNSAMPLE_H
#define JHEAP_UNSAMPLE_H

enum unsample_kind {
	UNSAMPLE_NONE = 0,
	UNSAMPLE_V1,   /* gperftools heap/N: ratio < 1 -> divide by ratio */
	UNSAMPLE_V2,   /* Poisson: scale by 1 / (1 - exp(-ratio)) */
};

/* Adjusts *objs and *bytes in place for sampling rate R (bytes). A pair with
 * zero objects is left unchanged (jeprof's v1 divides by zero there). */
void unsample_pair(enum unsample_kind kind, double rate, double *objs, double *bytes);

#endif
