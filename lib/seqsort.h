/*
 * seqsort: many sequences of numbers sorted in lexicographic order, as
 * the stack outputs sort a million stacks of frame ranks.
 *
 * A comparison sort of stacks re-reads the frames two stacks share (the
 * root side of a call tree, often most of each stack) at every one of its
 * n log n comparisons; this sort (Bentley and Sedgewick's multikey
 * quicksort) partitions on one element at a time and goes one element
 * deeper only inside a group that agrees so far, so each element of a
 * shared beginning is read once in all, not per comparison: each item
 * keeps the element it is being sorted on beside it, so the partitions
 * read the items in order and only a step deeper reads the sequences.
 * On the benchmark's 1,000,000 stacks (make bench) it replaced qsort_r
 * calls that took a third of --collapsed, --flamegraph and --speedscope.
 * A key holds several elements at once (four when every element fits in
 * 16 bits, else two), so that a step goes that many elements deeper: on
 * the same stacks that halved the sort again.
 *
 * The order is total and fixed: element by element as unsigned numbers,
 * a sequence before the longer ones it begins, and equal sequences by
 * their id, so the result does not depend on the algorithm (nor on the
 * threads: a large array is cut into parts that two threads sort, each
 * as one thread would, lib/threads.h).  Recursion goes at most log2(n)
 * deep, whatever the sequences.
 */
#ifndef JHEAP_SEQSORT_H
#define JHEAP_SEQSORT_H

#include <stddef.h>
#include <stdint.h>

/* A sequence: SYMS[off .. off+len) of the array given to seqsort(), and
 * the caller's id for it (unique, the tie-break); key is seqsort's own
 * (the elements it is sorting on, read once per depth). */
struct seqsort_item {
	uint32_t off, len, id;
	uint64_t key;
};

/* Sorts ITEMS[0..n) by their sequences in SYMS, then by id.  Every
 * element must be below NSYMS, and NSYMS at most UINT32_MAX. */
void seqsort(struct seqsort_item *items, size_t n, const uint32_t *syms, uint32_t nsyms);

#endif
