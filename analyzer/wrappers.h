/*
 * wrappers: the program's likely malloc wrappers, found in an aggregate so
 * that a report can say in one line how to charge their bytes to their
 * callers (--allocator=RE, analyzer/aggregate.h).
 *
 * Programs allocate through wrappers of their own (nginx's ngx_alloc and
 * its pools, PostgreSQL's palloc over the unnamed AllocSetAlloc, Perl's
 * Perl_safesysmalloc, MariaDB's my_malloc, CPython's _PyMem_RawMalloc,
 * node's NodeArrayBufferAllocator), and a report of them puts most bytes
 * on the wrapper: the first screen names the wrapper, not the code that
 * wanted the memory.  What makes a function F such a wrapper, measured on
 * the stacks after the allocator cut (values of the report's kind):
 *
 *   - it matters: F is the leaf of at least WRAP_MIN_SHARE of the bytes;
 *   - it is innermost above the allocator for most of its bytes, so it
 *     does little else: its flat is at least WRAP_MIN_INNER of its
 *     cumulative value;
 *   - it serves many callers: at least WRAP_MIN_CALLERS distinct calling
 *     functions each pass it WRAP_MIN_CALLER_SHARE of its bytes (two
 *     are not enough: w_basic's leaf_alloc, a test's allocation site
 *     with two callers, is an answer).  A
 *     wrapper that other wrappers call (ngx_memalign under the unnamed
 *     ngx_palloc_block, node's NodeArrayBufferAllocator under
 *     Heap::AllocateExternalBackingStore) passes the test through its
 *     callers: when callers that could be wrappers too bring
 *     WRAP_MIN_THROUGH of its bytes, F is one when those of them that
 *     turn out to be (in the next rounds) bring WRAP_MIN_RESOLVED;
 *   - its name says it allocates ("alloc", "memalign", "strdup", "mem_get",
 *     any case), or it has none (module+0xSTART: a stripped static helper,
 *     whose shape alone must decide).  A named function with the same
 *     shape that is named for what it builds (Redis's _sdsnewlen,
 *     PostgreSQL's makeTargetEntry) is an answer, not a wrapper; so are
 *     the C++ library's containers (std::, __gnu_cxx::).
 *
 * Once wrappers are found they are cut as --allocator would cut them,
 * and the next leaves are tested the same way (palloc above AllocSetAlloc,
 * ngx_pcalloc above ngx_palloc_large), up to WRAP_MAX_ROUNDS times.
 *
 * The rule only suggests: the report itself is left as jeprof computes it
 * (cutting by itself would move bytes between rows of every report that
 * meets a function of that shape, and no one could compare it with
 * jeprof's any more); the one-line hint makes the cut one paste away.
 */
#ifndef JHEAP_WRAPPERS_H
#define JHEAP_WRAPPERS_H

#include <stddef.h>
#include "analyzer/aggregate.h"

#define WRAP_MIN_SHARE 0.02
#define WRAP_MIN_INNER 0.9
#define WRAP_MIN_CALLERS 3
#define WRAP_MIN_CALLER_SHARE 0.01
#define WRAP_MIN_THROUGH 0.75
#define WRAP_MIN_RESOLVED 0.5
#define WRAP_MAX_ROUNDS 8
#define WRAP_MAX 16

struct wrappers {
	char *names[WRAP_MAX];  /* short names, as --allocator matches them */
	double bytes[WRAP_MAX]; /* the value each was the leaf of, before any cut */
	size_t n;
	double share;           /* of the aggregate's flat total whose leaf
	                           is one of them, before any cut */
};

/* Called with a line on each function judged (JHEAP_DEBUG=wrappers). */
typedef void (*wrappers_trace_fn)(void *ctx, const char *line);

/* Finds the likely malloc wrappers in aggregate A of P (built with
 * function granularity and short names), for the value V.  W is filled
 * (names owned by W; n may be 0).  TRACE, when not NULL, hears why each
 * candidate was taken or not.  Returns 0 or JH_ENOMEM. */
int wrappers_find(struct wrappers *w, const struct aggregate *a, const struct profile *p,
		  enum pf_value v, wrappers_trace_fn trace, void *tctx);
void wrappers_release(struct wrappers *w);

/* Whether NAME, a function's short name, may be a wrapper: named for
 * allocating, or unnamed (module+0xSTART). */
bool wrappers_name_fits(const char *name);

/* The --allocator pattern that cuts W's functions, "^(a|b\+0x10)$" with
 * every metacharacter escaped, after USER's own pattern when there is one
 * ("USER|^(...)$"), into BUF.  Returns the length, or -1 when it does not
 * fit. */
int wrappers_pattern(const struct wrappers *w, const char *user, char *buf, size_t len);

#endif
