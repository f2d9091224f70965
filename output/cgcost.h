/*
 * cgcost: the costs of a --callgrind file (output/callgrind.c): every
 * entry, a position (function, file, line) with its self cost or a call
 * from it into a function, and the sums of the samples' values through
 * it, as struct cg holds them for the writer.
 *
 * The samples are grouped by call path (the positions of their stacks
 * after the allocator cut): a path's value is its samples' added up, so
 * that with --base the two sides of a path are net values.  Each path
 * then gives its leaf position's self entry its value, and each call
 * from a position into the next position's function its value (0 for
 * the inner instances under recursion) and its objects as the call
 * count.  Every sum is added up in path order, path after path, as one
 * pass would: the two threads of a large profile (lib/threads.h) each
 * take the entries of half the positions, and the paths are grouped by
 * hashing them, so the file is the same with one thread or two.
 */
#ifndef JHEAP_CGCOST_H
#define JHEAP_CGCOST_H

#include <stdint.h>
#include "analyzer/strtab.h"
#include "lib/idmap.h"
#include "output/output.h"

#define CG_SELF UINT32_MAX

struct cg_fn {
	uint32_t name, file;     /* string ids in cg.strs */
	int64_t start_line;      /* smallest known declaration line, 0 unknown */
	uint32_t rank;           /* position in the output */
};

/* One frame of a location: function, and the file and line of the
 * position inside it. */
struct cg_frame {
	uint32_t fn, file;
	int32_t line;
};

/* A self cost (callee CG_SELF) or a call, at one position of FN. */
struct cg_ent {
	uint32_t fn, file;
	int32_t line;
	uint32_t callee;
	double cost[2];
	double calls;
};

/* A position of a location, with its function. */
struct cg_lp {
	uint32_t pos, fn;
};

/* The entries: every (position, callee) met, with its sums. */
struct cg_table {
	struct cg_ent *ents;
	size_t nents, cap_ents;
};

struct cg {
	const struct report *r;
	struct strtab strs;
	struct cg_fn *fns;
	size_t nfns, cap_fns;
	struct idmap fn_index;
	struct cg_frame *frames; /* distinct positions */
	size_t nframes, cap_frames;
	struct idmap frame_index;
	uint32_t *lf;            /* the locations' positions, innermost first */
	size_t nlf, cap_lf;
	uint32_t *loc_frame0;    /* per location: lf[loc_frame0[l] ..] */
	struct cg_lp *lpf;       /* lf's positions with their functions, side by side */
	uint32_t fr_alloc, fr_none;  /* the positions of the pseudo frames */
	struct cg_table t;
	uint32_t *srank;         /* per string: its place in byte order */
	int nevents;
};

/* The entries of C's samples into c->t (its ents; no table to look them
 * up afterwards): c->frames, c->lf, c->loc_frame0, c->lpf and the
 * pseudo frames must be made.  Returns 0 or JH_ENOMEM. */
int cgcost_sum(struct cg *c);

#endif
