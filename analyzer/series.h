/*
 * series: the dumps of one process in time order (from jheap record
 * --every or --peaks, jemalloc's lg_prof_interval, or taken by hand), read
 * as a whole: each dump's totals, the peak, which call sites grow steadily
 * over the regular dumps (analyzer/growth.h fits the lines), and which
 * grew most from one dump to the next.  --timeline, --peak and --growth
 * print it (cli/driver.c, output/timeline.c, output/growth.c), and the web
 * UI's timeline reads the same numbers.
 *
 * A series is refused, with a message naming the files, when the names say
 * its dumps are of different processes (jemalloc's PREFIX.PID differ), when
 * two have one sequence number, or when their maps say they are of
 * different programs, or of different processes of one program (it is
 * loaded at another address): nothing is dropped silently.
 *
 * Order: by the sequence number in the names when every name has one (a
 * shell's glob puts x.10.i10 before x.2.i2), else as given.  When: the
 * files' modification times, when every dump has one, they do not go back
 * in that order and are not all the same (jemalloc writes a dump in one
 * go); else the sequence numbers; else the position.  series_clock says
 * which, and every report says it too.
 */
#ifndef JHEAP_SERIES_H
#define JHEAP_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analyzer/aggregate.h"
#include "analyzer/dumpname.h"
#include "analyzer/growth.h"
#include "analyzer/profile.h"

struct series_dump {
	const char *path;            /* as given; not owned */
	struct dumpname name;        /* points into path */
	double mtime;                /* seconds since the epoch; < 0 unknown */
	double total[PF_NVALUES];    /* unsampled sums (series_totals, or the caller) */
	bool has_alloc;              /* its allocated counts are not all 0 (prof_accum) */
	char *program;               /* its main executable, from its maps; malloc'd, NULL unknown */
	uint64_t program_base;       /* where that is loaded (start - offset); 0 unknown */
};

enum series_clock {
	SERIES_TIME = 0,    /* the files' modification times */
	SERIES_SEQ,         /* the sequence numbers in their names */
	SERIES_ORDER,       /* the position in the series */
};

struct series {
	struct series_dump *dumps;
	size_t n;
	enum series_clock clock;
};

void series_init(struct series *s);
void series_release(struct series *s);

/* Sets S up from the N PATHS (MTIMES[i]: each file's modification time in
 * seconds since the epoch, or -1 when unknown; MTIMES may be NULL): names
 * read, put in order, the clock chosen.  Returns 0, JH_ENOMEM, or
 * JH_EUSAGE with a message naming the files when their names are of
 * different processes or two have one sequence number. */
int series_plan(struct series *s, const char *const *paths, const double *mtimes, size_t n,
		char *err, size_t errlen);

/* Moves the dumps of S that are not of a regular series (the dump at exit,
 * peak and high-water dumps: dumpname_regular()) to OTHER (initialized
 * here), keeping the order of both.  Returns 0 or JH_ENOMEM. */
int series_split_irregular(struct series *s, struct series *other);

/* Records what dump K's own model ONE says of its program (the main
 * executable and where it is loaded, from the maps; whether it has
 * allocated counts), and compares it with the dumps noted before.
 * Returns 0, JH_ENOMEM, or JH_EFORMAT with a message naming both files
 * when they are of different programs or different processes. */
int series_note_dump(struct series *s, size_t k, const struct profile *one, char *err,
		     size_t errlen);

/* Fills each dump's totals from G's values (G holds the dumps of S in
 * order). */
void series_totals(struct series *s, const struct growth *g);

/* The dump with the largest total of value V (the first of equals). */
size_t series_peak(const struct series *s, enum pf_value v);

/* When dump K was taken, on S's clock: seconds after the first dump,
 * the sequence number, or K. */
double series_when(const struct series *s, size_t k);

/* Each display key's value V in each dump of G: *OUT gets a malloc'd
 * array of a->keys.len rows of g->ndumps values (row KEY at
 * KEY * g->ndumps).  A stack's value goes to its first key (the leaf,
 * after the allocator cut and the filters of A), or with CUM to every
 * key of it once, however often the key repeats (recursion).  Returns 0
 * or a negative code. */
int series_key_values(const struct growth *g, const struct profile *p,
		      const struct aggregate *a, enum pf_value v, bool cum, double **out);

/* A call site's steady growth over the dumps: the least-squares line
 * through its values (growth_fit), and where it started and ended. */
struct series_site {
	uint32_t key;                /* in a->keys */
	double slope, r2, first, last;
	double score;                /* slope times fit when it grows, else the slope */
};

/* The call sites of A ranked by steady growth of value V over G's dumps
 * (series_key_values with CUM): by score, then the last value, then the
 * name in byte order.  Sites that are 0 in every dump are left out.
 * *OUT is malloc'd (*N entries).  Returns 0 or a negative code. */
int series_rank(const struct growth *g, const struct profile *p, const struct aggregate *a,
		enum pf_value v, bool cum, struct series_site **out, size_t *n);

/* One dump's line of the timeline. */
struct series_row {
	double value;                /* the dump's total of V */
	double change;               /* since the dump before (0 for the first) */
	uint32_t grew_key;           /* the site that grew most since the dump
	                                before (for the first, the largest; of
	                                equal rises the one with the least in
	                                the dump, then by name); 0 when none grew */
	double grew_by;
};

/* The timeline of S (whose totals are filled) by value V: for each dump
 * its total, the change, and the call site of A that grew most (by
 * series_key_values with CUM).  *OUT is malloc'd (s->n rows).  Returns 0
 * or a negative code. */
int series_timeline(const struct series *s, const struct growth *g, const struct profile *p,
		    const struct aggregate *a, enum pf_value v, bool cum, struct series_row **out);

#endif
