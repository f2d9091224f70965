/*
 * webui: jheap --http=[HOST]:PORT, the web UI (pprof's -http).
 *
 * The profile is loaded and symbolized once (driver_load); every view is
 * a report of the loaded model written by the same code as the command
 * line (driver_write with a copy of the command line's settings and the
 * URL's parameters, cli/webparams.h), one request at a time under a lock,
 * into memory, and served by cli/httpd.c:
 *
 *   /ui/ /ui/top /ui/flamegraph /ui/peek /ui/source /ui/disasm /ui/timeline
 *        the page (web/index.html; its script draws the view)
 *   /data/top     the --text table as JSON (output/json_top.c)
 *   /data/flame   the call tree as JSON (output/json_flame.c)
 *   /data/graph   the call graph as --svg writes it
 *   /data/peek /data/source /data/disasm   --peek, --list, --weblist of f
 *   /data/timeline /data/growth   each dump's totals; the --growth table
 *   /data/info    the program, inputs, threads, what the model has
 *   POST /api/dump   with --pid: a dump now (jheap dump PID)
 *
 * A series of dumps (cli/webseries.h) is loaded as --growth loads it, so
 * each dump's values are known: a view of dump D (or of D against B) is
 * written with the samples' values set to that dump's (or to the change,
 * with B as the base) and put back after, under the lock.
 */
#ifndef JHEAP_WEBUI_H
#define JHEAP_WEBUI_H

#include <stddef.h>
#include "cli/driver.h"

/* Loads PATHS (NPATHS profiles, or with --pid the process's dumps) with
 * BINARY and serves the UI until SIGINT, SIGTERM or SIGHUP.  Prints what
 * goes wrong; returns an exit status.  After a served session those
 * signals stay blocked: the caller is expected to exit. */
int webui_run(struct driver *d, const char *binary, const char *const *paths, size_t npaths);

#endif
