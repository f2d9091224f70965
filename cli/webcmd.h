/*
 * webcmd: the server's own command line, as the web UI's "copy as command
 * line" needs it.  The page (web/app.js) writes the command from the
 * view, its URL's parameters (cli/webparams.h) and what this gives:
 *
 *   args    the options that hold for every view served and that no URL
 *           parameter changes, each only when it is not the default:
 *           --show_bytes, --full-names, --keep-allocator-frames,
 *           --nodecount, --nodefraction, --edgefraction, --maxdegree,
 *           --drop_negative, --no-symbolize, --lib_prefix,
 *           --debuginfo-dir, --perf-map, --add_lib, --source-dir,
 *           --label-from-path, --strict and --seconds;
 *   inputs  BINARY, the PROFILEs, the --base profiles and the --label
 *           options in an order that gives each label the profiles and
 *           base profiles it was given for (a series puts the dumps it
 *           shows in their place).
 * So the copied command writes what the page shows; options that change
 * nothing shown (--no-cache, --quiet, --http, --no_browser) are left out.
 */
#ifndef JHEAP_WEBCMD_H
#define JHEAP_WEBCMD_H

#include <stdio.h>
#include "cli/options.h"

/* Writes ,"args":[...],"inputs":[...] (JSON members, strings) for C. */
void webcmd_json(const struct cli *c, FILE *f);

#endif
