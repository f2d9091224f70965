/*
 * stacks: a report's samples as whole call stacks, root first, for the
 * flame-graph outputs (--collapsed, --flamegraph).
 *
 * Each sample's display keys (aggregate_stack_keys: allocator frames cut,
 * inline levels expanded, granularity applied) are reversed to root first,
 * every key is given a sanitized name that is safe in folded-stack text,
 * and samples whose stacks have the same names are merged.
 *
 * A frame is a symbol: a number whose order is the order of the names
 * (with STACKS_TEXT, a name followed by ';' and the same name ending the
 * line are two symbols), so that the stacks sort as numbers (lib/seqsort.h)
 * and nothing is mapped back afterwards; stacks_name() gives its name.
 * Two frames of one position in two stacks are the same name exactly when
 * they are the same symbol.
 */
#ifndef JHEAP_STACKS_H
#define JHEAP_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include "analyzer/strtab.h"
#include "output/output.h"

/* Frame names of stacks that have no frame of their own after the cut:
 * every location was an allocator frame, or the sample had no frames. */
#define STACKS_ALLOCATOR_ONLY "[allocator]"
#define STACKS_NO_FRAMES "[no frames]"

struct stack {
	uint32_t frame0, nframes;   /* stacks.frames[frame0 ..], root first */
	double value;               /* the chosen value; with --base the "after" side */
	double before;              /* with --base: the base profiles' value, else 0 */
};

struct stacks {
	struct strtab names;        /* sanitized frame names */
	uint32_t *symname;          /* per symbol: its name's id in names */
	size_t nsyms;
	uint32_t *frames;           /* symbols */
	size_t nframes, cap_frames;
	struct stack *s;
	size_t n, cap;
	double total, total_before; /* sums of value and before over all stacks */
};

/* The order of stacks_build():
 *   STACKS_TREE  frame by frame in byte order of the names, a stack before
 *                the longer stacks it is a prefix of: a depth-first walk of
 *                the call tree with children sorted by name (--flamegraph);
 *   STACKS_TEXT  in byte order of the folded line "root;...;leaf"
 *                (--collapsed), which differs where a name is a prefix of
 *                another ("f" and "f2": "f2;g" sorts before "f;g"). */
enum stacks_order { STACKS_TREE, STACKS_TEXT };

/* Builds the stacks of R: one per distinct sequence of names, sorted by
 * ORDER.  Stacks whose value and before are both 0 are
 * left out, and so are those that --focus, --ignore, --retain or
 * --exclude drop or leave without a frame.  Returns 0 or JH_ENOMEM; call stacks_release() afterwards in
 * both cases. */
int stacks_build(struct stacks *st, const struct report *r, enum stacks_order order);
void stacks_release(struct stacks *st);

/* The name of symbol SYM (a frame). */
static inline const char *stacks_name(const struct stacks *st, uint32_t sym)
{
	return strtab_get(&st->names, st->symname[sym]);
}

/* Writes NAME made safe for folded stacks into OUT (OUTLEN > 0 bytes,
 * always terminated): ';' becomes ':' (as stackcollapse-perf.pl does),
 * control characters, invalid UTF-8 and U+2028/U+2029 become '?', a space
 * before a trailing number becomes '_' (flamegraph.pl would read the
 * number as a count), and an empty name becomes "??". */
void stacks_sanitize(const char *name, char *out, size_t outlen);

#endif
