/*
 * unnamed: which objects leave a report's code without names because
 * they are stripped, and how to get the names.
 *
 * A stripped program is the program that ran all the same: its unnamed
 * code is shown as module+0xSTART, one row per function, and a note says
 * how much of the report that is and where its names are (its debug
 * file, found by build id, from the distribution's debug package, a
 * --debuginfo-dir or a debuginfod server).  On Debian the note names the
 * package, PKG-dbgsym, after the package dpkg's database says installed
 * the object (symbolize/dpkgowner.h), and the archive line that makes
 * it installable.
 */
#ifndef JHEAP_UNNAMED_H
#define JHEAP_UNNAMED_H

#include "analyzer/aggregate.h"
#include "analyzer/profile.h"
#include "symbolize/symcache.h"

/* A stripped object is named in a note when its unnamed code is the leaf
 * of at least this share of the report. */
#define UNNAMED_NOTE_SHARE 0.10

/* Calls SAY once per stripped object (symmodule_stripped(), opened in SC)
 * whose code without names holds the report's leaf (the first location
 * A shows of a stack) for at least UNNAMED_NOTE_SHARE of value V, with a
 * line naming it, the share and how to get its names; the largest
 * first.  Returns how many, or JH_ENOMEM. */
int unnamed_notes(const struct profile *p, const struct aggregate *a, enum pf_value v,
		  struct symcache *sc, void (*say)(void *ctx, const char *line), void *ctx);

#endif
