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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analyzer/strtab.h"
#include "lib/array.h"
#include "lib/errors.h"
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

/* The frames one of two threads writes when a profile's samples are
 * made into stacks in two halves (stacks_build(), and --speedscope's
 * own stacks): both halves write into one array, each into a stretch
 * sized beforehand, so that joining them copies nothing.  With one
 * half, its stretch is an array that grows. */
struct stacks_stretch {
	uint32_t *frames;           /* the whole array */
	size_t n, cap;              /* the next frame, the end of the stretch */
	bool fixed;                 /* the stretch cannot grow */
};

/* Room for NEED frames in all in S: grown when it may, JH_ENOMEM past
 * its fixed end or at UINT32_MAX frames; else 0. */
static inline int stacks_stretch_need(struct stacks_stretch *s, size_t need)
{
	if (need >= UINT32_MAX || (need > s->cap && (s->fixed ||
	    jh_grow(&s->frames, &s->cap, need, sizeof(*s->frames)))))
		return JH_ENOMEM;
	return 0;
}

/* How two threads share making the stacks of P's samples: returns
 * whether two do, the first taking samples [0, *MID) and the second
 * [*MID, nsamples), each writing into ST[k], two stretches of one array
 * with room for every frame (at most A->max_nkeys a location, or one
 * pseudo frame a sample).  Two do when there are two cores and 65,536
 * samples or more (any number with JHEAP_THREADS set) and the array
 * could be had; else *MID is nsamples and both ST are empty (all zeros).
 * Afterwards stacks_stretch_join() gives the frames of both. */
bool stacks_halves(const struct aggregate *a, const struct profile *p, size_t *mid,
		   struct stacks_stretch st[2]);

/* The frames of both halves (FIRST, SECOND) as one array, now the
 * caller's: into *FRAMES, *N (the next frame) and *CAP, FIRST's array up
 * to the end of SECOND's stretch when TWO, else FIRST's. */
static inline void stacks_stretch_join(const struct stacks_stretch *first,
				       const struct stacks_stretch *second, bool two,
				       uint32_t **frames, size_t *n, size_t *cap)
{
	*frames = first->frames;
	*n = two ? second->n : first->n;
	*cap = two ? second->cap : first->cap;
}

/* Writes NAME made safe for folded stacks into OUT (OUTLEN > 0 bytes,
 * always terminated): ';' becomes ':' (as stackcollapse-perf.pl does),
 * control characters, invalid UTF-8 and U+2028/U+2029 become '?', a space
 * before a trailing number becomes '_' (flamegraph.pl would read the
 * number as a count), and an empty name becomes "??". */
void stacks_sanitize(const char *name, char *out, size_t outlen);

#endif
