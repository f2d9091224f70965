/*
 * threads: the thread policy and the one way jheap runs work in two
 * threads.
 *
 * A stage that pays for a second thread (the parse of a large heap_v2
 * body, the replay of its second half, the aggregate's sums and short
 * names, the symbolizer's lookups) splits its work into two halves whose
 * results it joins in a fixed order, so that the output is the same with
 * one thread or two.  How many to use is decided here: two on a machine
 * with two cores or more; JHEAP_THREADS=1 or 2 overrides it, which the
 * tests use to compare both.
 */
#ifndef JHEAP_THREADS_H
#define JHEAP_THREADS_H

#include <stdbool.h>

/* How many threads a stage should use: 1 or 2. */
int jh_threads(void);

/* Whether JHEAP_THREADS sets the number: a stage that splits only large
 * inputs then splits small ones too, so that tests can compare one
 * thread with two on small inputs. */
bool jh_threads_forced(void);

/* Runs FIRST(A) in this thread and SECOND(B) in a second one, and returns
 * when both are done.  With TWO false, or when no thread can be started,
 * SECOND(B) runs in this thread after FIRST(A); SECOND NULL: FIRST(A)
 * only.  The halves return their results through A and B (the return
 * values are ignored). */
void jh_run_two(void *(*first)(void *), void *a, void *(*second)(void *), void *b, bool two);

#endif
