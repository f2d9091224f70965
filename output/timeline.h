/*
 * timeline: the reports of a series of dumps in time (analyzer/series.h)
 * and of the dump a process writes at exit.
 *
 * --timeline, one row per dump, oldest first:
 *
 *   Timeline of inuse_space over 4 dumps (MB; when: seconds after the first dump, from the files' times)
 *         when     inuse_space     change  allocated  dump                        grew most
 *        0.000             5.1                  12.3  w.123.0.m0.heap (manual)    +5.1 main
 *        0.210            45.1      +40.0       52.3  w.123.1.p0.heap (peak)      +40.0 spike
 *        0.455             5.1      -40.0       52.4  w.123.2.m1.heap (manual)
 *        0.460             5.1        0.0       52.4  w.123.3.f.heap (at exit)
 *   Peak: 45.1 MB in w.123.1.p0.heap, dump 2 of 4 (--peak reports it)
 *
 * "when" is on the series' clock (series_when: seconds, the sequence
 * number or the position, and the header says which); "change" is the
 * difference to the row before; "allocated" is the dump's allocated total
 * (alloc_space, or alloc_objects for a count), only when the dumps have
 * allocated counts (prof_accum) and the value is an in-use one; "grew most"
 * is the call site (--functions, --lines, ...; with --cum every caller)
 * whose value rose most since the row before (the largest, in the first),
 * empty when none rose.  Values are in --text's units.
 *
 * The dump at exit (prof_final, ".f."): what it holds was never freed.
 * output_exit_note() writes the line that says so under a --text report,
 * with jemalloc's own leak summary (prof_leak) when one was found.
 */
#ifndef JHEAP_TIMELINE_H
#define JHEAP_TIMELINE_H

#include <stdbool.h>
#include <stdio.h>
#include "analyzer/growth.h"
#include "analyzer/leaksum.h"
#include "analyzer/series.h"
#include "output/output.h"

/* --timeline for the series S (totals filled), whose values per dump G
 * holds, with R's aggregate, value and units; CUM: "grew most" among
 * every caller.  Returns 0 or a negative code with a message. */
int output_timeline(FILE *out, const struct series *s, const struct growth *g,
		    const struct report *r, bool cum, char *err, size_t errlen);

/* The lines under a report of the dump at exit PATH: what it shows was
 * never freed; LS, when not NULL, is jemalloc's leak summary for it.
 * NOTE: as notes on standard error ("jheap: note: ..."), beside a report
 * of another format. */
void output_exit_note(FILE *out, const char *path, const struct leaksum *ls, bool note);

#endif
