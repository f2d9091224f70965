/*
 * fleet: many profiles summed by symbol one at a time, as a fleet's dumps
 * come (a thousand dumps of a hundred processes, two releases).
 *
 * The driver's usual load keeps every profile merged by address until
 * all are read, then symbolizes and folds the whole: fine for a few
 * profiles, but a hundred processes each with its own address layout
 * make a hundred copies of every stack, and memory grows with the
 * fleet.  Here each profile is parsed, labelled (cli/inlabels.h), looked
 * up through the caches and folded into the total by its frames
 * (analyzer/merge.h: struct symmerge), then released: memory holds the
 * total and one dump.  A code place (a file and an offset in it) seen in
 * one dump is not symbolized again in the next, whatever the process, so
 * after the first dumps of each build nothing is looked up at all.
 *
 * It is used when the inputs are many: at least FLEET_MIN of them
 * (PROFILEs and --base profiles together; JHEAP_STREAM_MIN sets another
 * count), none a URL, and no option that needs them all at once
 * (--growth, --add_lib) or each one's values (--timeline: the driver
 * does not ask).  The report is the one the usual load gives,
 * up to the last bits of a sum of fractions (values of one stack in
 * different processes are added in input order).  A progress bar shows
 * on a terminal.
 *
 * Unreadable inputs: whenever several inputs are given (this path or
 * the usual one), a profile that cannot be read is named in a warning
 * and skipped, and the exit status is 1 (the report is of the others);
 * with --strict the run stops there instead.  One profile alone that
 * cannot be read is an error, as always.
 */
#ifndef JHEAP_FLEET_H
#define JHEAP_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include "analyzer/profile.h"
#include "cli/driver.h"
#include "cli/inlabels.h"
#include "symbolize/symbolize.h"

#define FLEET_MIN 16

/* Whether the NPATHS profiles of PATHS and C's --base profiles are
 * streamed. */
bool fleet_wanted(const struct cli *c, const char *const *paths, size_t npaths);

/* Whether an input that cannot be read is skipped rather than fatal:
 * several inputs and no --strict. */
bool fleet_skips(const struct cli *c, size_t npaths);

/* Reads PATHS (ARGS0: the index of PATHS[0] in c->args, for --label) and
 * C's --base profiles into DST one at a time: labelled by IL, symbolized
 * with SO (its warnings given once each), added by symbol (--base ones
 * negated).  *ST gathers the symbolization's findings; SHOWN[i] gets
 * PATHS[i] (malloc'd, NULL for a skipped one).  Prints what goes wrong
 * and returns an exit status; a skipped input sets r->degraded. */
int fleet_load(struct driver *r, struct profile *dst, const char *const *paths, size_t npaths,
	       size_t args0, const struct cli *c, struct inlabels *il,
	       const struct symbolize_options *so, struct symbolize_stats *st, char **shown);

#endif
