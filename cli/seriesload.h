/*
 * seriesload: which dumps a report of a series loads, for driver_load().
 *
 *   --timeline   every dump given, in order, with each one's values kept
 *                (analyzer/growth.h) for the rows;
 *   --growth     the dumps of the regular series (interval and manual
 *                dumps, and names that do not say), in order, with their
 *                values; the dump at exit, peak and high-water dumps are
 *                left out and listed, unless --all-dumps;
 *   --peak       the one dump with the most bytes in use (objects with
 *                --inuse_objects): each dump is read once for its totals,
 *                then only that one is loaded, and a note on standard
 *                error says which it is.
 *
 * Every one of them first refuses what is not one series: fewer than two
 * dumps, names of two processes, one sequence number twice
 * (series_plan(), exit status 2), and, as each dump is read, dumps of two
 * programs or processes by their maps (series_note_dump(), status 1).
 */
#ifndef JHEAP_SERIESLOAD_H
#define JHEAP_SERIESLOAD_H

#include <stddef.h>
#include "analyzer/series.h"
#include "cli/options.h"

struct driver;

enum seriesload_kind {
	SERIESLOAD_NONE = 0,   /* no series: the profiles are summed */
	SERIESLOAD_ALL,        /* --timeline */
	SERIESLOAD_GROWTH,     /* --growth */
	SERIESLOAD_PEAK,       /* --peak */
};

struct seriesload {
	enum seriesload_kind kind;
	struct series ser;     /* the dumps (with --peak every one given), in order */
	struct series left;    /* --growth: the dumps left out */
	const char **paths;    /* the paths to load, NULL-terminated; they point
	                          into the caller's */
	size_t n;
	size_t peak;           /* --peak: the chosen dump in ser */
};

/* What C asks for. */
enum seriesload_kind seriesload_kind(const struct cli *c);

/* Plans the load of the N PATHS for C's kind of series into SL (with
 * --peak, reads each dump through R for its totals).  Prints what goes
 * wrong and returns an exit status. */
int seriesload_plan(struct driver *r, const struct cli *c, const char *const *paths, size_t n,
		    struct seriesload *sl);

void seriesload_release(struct seriesload *sl);

#endif
