/*
 * hints: what a report says beside its table to take the user further.
 *
 * The program's likely malloc wrappers (analyzer/wrappers.h), in one line
 * under the report with the --allocator option that charges their bytes
 * to their callers, ready to paste:
 *
 *   jheap: hint: 85.1% of the bytes are allocated through 6 functions that look like malloc wrappers (postgres+0x5c7730, palloc, ...); to charge their callers: --allocator='^(postgres\+0x5c7730|palloc|...)$'
 *
 * In the shell the same line ends with the shell's own command,
 * allocator=RE.  Only for reports by function with short names (the
 * names --allocator matches), without --keep-allocator-frames, and not
 * of a difference (--base): a base's negative values say nothing about
 * who allocates.
 *
 * A pattern (--focus, --ignore, --retain, --exclude,
 * --allocator) that matched no frame: a warning naming the option and the
 * pattern, as a typo would otherwise empty or leave unchanged the report
 * without a word.  The exit status stays 0: one pattern is often used on
 * many profiles, and some lack what it names.  (--list, --disasm and
 * --peek say so themselves, as errors: they have nothing to show.)
 *
 * Profiles summed that are of one process image: a note that what was
 * allocated before fork is counted once per process.
 */
#ifndef JHEAP_HINTS_H
#define JHEAP_HINTS_H

#include <stdbool.h>
#include "analyzer/aggregate.h"
#include "analyzer/forks.h"
#include "cli/options.h"

/* Below this share of the bytes in wrappers, no hint. */
#define HINTS_MIN_SHARE 0.05

/* Writes the hint for aggregate A of P, built with C's options, through
 * LINE (a whole line without "jheap: "), when there is one to give; DIFF
 * for a report with --base; SHELL for the shell's form.  Returns 0, or
 * JH_ENOMEM. */
int hints_wrappers(const struct profile *p, const struct aggregate *a, const struct cli *c,
		  bool diff, bool shell, void (*line)(void *ctx, const char *msg), void *ctx);

/* The warnings for A's patterns that matched nothing, through LINE (a
 * whole line without "jheap: "), with C's options named as on the
 * command line or, with SHELL, as the shell's settings. */
void hints_patterns(const struct aggregate *a, const struct cli *c, bool shell,
		    void (*line)(void *ctx, const char *msg), void *ctx);

/* The notes for the profiles of F (those of one sum) that are of one
 * process image (analyzer/forks.h), one per group, through LINE (a whole
 * line without "jheap: note: "): a parent and its children by fork, or
 * one pid twice.  Groups F. */
void hints_forks(struct forks *f, void (*line)(void *ctx, const char *msg), void *ctx);

#endif
