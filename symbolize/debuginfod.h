/*
 * debuginfod: separate debug files fetched by build id from the servers
 * in DEBUGINFOD_URLS, through elfutils' libdebuginfod (loaded with
 * dlopen when the variable is set, as libdwfl does: jheap does not
 * depend on it), within one time budget for the whole run.  It is the
 * client the debuginfod servers are made for, and its progress callback
 * is what lets a lookup be cancelled when the budget is spent.
 *
 * A server that never answers would otherwise hold every lookup for
 * DEBUGINFOD_TIMEOUT (90 s by default), once per object file.  The
 * budget (JHEAP_DEBUGINFOD_BUDGET seconds, default 30) counts the
 * time spent in every lookup of the run; once it is spent, the current
 * transfer is cancelled (libdebuginfod asks about progress every second)
 * and no other lookup is made.  Thread-safe.
 */
#ifndef JHEAP_DEBUGINFOD_H
#define JHEAP_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>

/* The debug file with build id BID[0..len) from debuginfod: an open
 * descriptor (close-on-exec) with *PATH a malloc'd copy of its path in
 * debuginfod's cache, or -1 (not configured, not found, budget spent). */
int debuginfod_find(const unsigned char *bid, size_t len, char **path);

/* Whether the budget ran out during this run, and how many lookups were
 * then left out or cancelled (for one warning at the end). */
bool debuginfod_budget_spent(size_t *skipped, double *budget);

#endif
