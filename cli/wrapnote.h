/*
 * wrapnote: the one line under a report that names the program's likely
 * malloc wrappers (analyzer/wrappers.h) and gives the --allocator option
 * that charges their bytes to their callers, ready to paste:
 *
 *   jheap: hint: 85.1% of the bytes are allocated through 6 functions that look like malloc wrappers (postgres+0x5c7730, palloc, ...); to charge their callers: --allocator='^(postgres\+0x5c7730|palloc|...)$'
 *
 * In the shell the same line ends with the shell's own command,
 * allocator=RE.  Only for reports by function with short names (the
 * names --allocator matches), without --keep-allocator-frames, and not
 * of a difference (--base): a base's negative values say nothing about
 * who allocates.
 */
#ifndef JHEAP_WRAPNOTE_H
#define JHEAP_WRAPNOTE_H

#include <stdbool.h>
#include "analyzer/aggregate.h"
#include "cli/options.h"

/* Below this share of the bytes in wrappers, no hint. */
#define WRAPNOTE_MIN_SHARE 0.05

/* Writes the hint for aggregate A of P, built with C's options, through
 * LINE (a whole line without "jheap: "), when there is one to give; DIFF
 * for a report with --base; SHELL for the shell's form.  Returns 0, or
 * JH_ENOMEM. */
int wrapnote_hint(const struct profile *p, const struct aggregate *a, const struct cli *c,
		  bool diff, bool shell, void (*line)(void *ctx, const char *msg), void *ctx);

#endif
