/*
 * aggregate: flat and cumulative values per display key (function, line,
 * file or address), after allocator frames are cut, as jeprof's
 * ReduceProfile computes them: flat goes to a stack's first key, cum counts
 * every distinct key of a stack once, even under recursion.  Keys use
 * jeprof's short names (analyzer/names.h).
 *
 * A profile of 32,768 samples or more is summed in two fixed halves, the
 * second in its own thread when there are two cores; each sum is the first
 * half's plus the second's with one thread or two, so the report is the
 * same on every machine (tests/unit/test_aggregate.c checks both against a
 * plain re-computation).  With --focus or --ignore each location carries
 * the filter flags of its keys, or'ed, so a stack the filters leave out is
 * known from a byte a frame before any key is copied.
 */
#ifndef JHEAP_AGGREGATE_H
#define JHEAP_AGGREGATE_H

#include <stdbool.h>
#include "analyzer/profile.h"
#include "analyzer/strtab.h"

struct growth;

enum granularity {
	GRAN_FUNCTIONS = 0,
	GRAN_LINES,
	GRAN_FILES,
	GRAN_ADDRESSES,
};

struct agg_options {
	enum pf_value value;
	enum granularity gran;
	bool full_names;         /* demangled full names instead of jeprof's short ones */
	bool keep_allocator;     /* do not cut allocator frames */
	/* --allocator: the program's own allocation functions (PCRE2 on the
	 * short function name, and on the full one too when the pattern
	 * holds '<' or '(': agg_wants_full), NULL when unused.  A stack is cut through its
	 * innermost frame that matches, and the run of matching or allocator
	 * frames above it, so the bytes go to the functions that call them. */
	const char *allocator;
	/* jeprof's filters, Perl-compatible regular expressions (PCRE2), NULL
	 * when unused.  Applied after the allocator cut, in jeprof's order:
	 * retain/exclude drop single frames by name, then focus keeps and
	 * ignore drops whole stacks with a frame whose name, file:line or
	 * address matches.  Names are jeprof's short ones; a pattern with
	 * '<' or '(' is matched against the full name as well (a short name
	 * has neither template arguments nor a parameter list, so
	 * "vec<.*>::" would silently match nothing there), either one
	 * matching. */
	const char *focus, *ignore, *retain, *exclude;
	/* --thread=N: the aggregate is of thread THREAD_UID's share of each
	 * sample (its values from p->tvals, already net of any --base), read
	 * without writing the model; a thread the profile does not have gives
	 * an aggregate of nothing.  False: every thread's, the samples' own
	 * values. */
	bool one_thread;
	int64_t thread_uid;
	/* --tagfocus and --tagignore, pprof's: "KEY=RE" keeps (drops) the
	 * samples with a label KEY whose value matches RE, a bare "RE" those
	 * with any label whose value matches; NULL when unused.  A view, as
	 * a thread is: the dropped samples count as zero. */
	const char *tagfocus, *tagignore;
	/* A dump of a series instead of the samples' own values: dump DUMP of
	 * SERIES, and with DUMP_DIFF the change since dump BASE_DUMP, whose
	 * values are the base (analyzer/dumpview.h); a view, read without
	 * writing the model.  NULL: the samples' own. */
	const struct growth *series;
	size_t dump, base_dump;
	bool dump_diff;
};

struct agg_row {
	uint32_t key;            /* string id in aggregate.keys */
	double flat, cum;
};

/* Per location: the display keys of its frames, innermost first (one
 * per frame), and how many of them, from the innermost, are cut when the
 * location is the first a report shows of a stack: the allocator's
 * leading frames (none with --keep-allocator-frames), or, in a location
 * with a frame that --allocator matches, every frame through the
 * innermost such frame and the run of matching or allocator frames
 * above it. */
struct agg_locinfo {
	uint32_t key0, nkeys;    /* into aggregate.lockeys */
	uint32_t nalloc;         /* frames cut, innermost first */
};

/* Whether every frame of the location is the allocator's. */
static inline bool agg_all_allocator(const struct agg_locinfo *li)
{
	return li->nalloc && li->nalloc == li->nkeys;
}

struct aggregate {
	struct strtab keys;
	struct agg_row *rows;    /* index = key id (row 0 unused: the empty key) */
	size_t nrows;
	struct agg_locinfo *locinfo;
	uint32_t *lockeys;
	uint8_t *keyflags;       /* per lockeys entry: AGG_F_* */
	uint8_t *goruntime;      /* per location, 1 when one of its frames is
	                            Go's runtime; NULL when none is */
	uint8_t *usermatch;      /* with --allocator, per location: 1 when one
	                            of its frames matches (the cut starts at
	                            the innermost such location), else NULL */
	uint8_t *locflags;       /* with filters, per location: the AGG_F_* of its
	                            keys but those dropped, or'ed, and AGG_F_DROP
	                            when some key is dropped */
	size_t nlockeys, cap_lockeys, cap_keyflags;
	uint32_t max_nkeys;      /* the most keys of one location */
	bool filtered;           /* some filter is set */
	bool want_focus;
	char errmsg[512];        /* why aggregate_build failed (a regex) */
	uint8_t unmatched;       /* AGG_RE_* of the patterns given that matched
	                            no frame of the profile */
	double total;            /* sum over every sample, before any cutting */
	double flat_total;       /* sum of flat: the 100% of the percentages */
	uint32_t *order;         /* row ids sorted for printing */
	size_t norder;
	/* with agg_options.one_thread: per sample, the thread's values (no
	 * base); NULL: the samples' own.  Read them with aggregate_values(). */
	double (*values)[PF_NVALUES];
	/* with a dump of a series as the base (agg_options.dump_diff): per
	 * sample, the base dump's values; NULL: the samples' own base, or
	 * none with values */
	double (*bases)[PF_NVALUES];
	/* with --tagfocus or --tagignore: per sample, 1 when it is kept;
	 * NULL: every sample is */
	uint8_t *keep;
};

/* The values of sample S (PF_NVALUES of them) as aggregate A sees P: a
 * thread's share with --thread=N, else the sample's own.  Every writer
 * reads sample values through this and aggregate_base(), so that a view
 * of the model never has to change the model. */
/* PF_NVALUES zeros: the base of a thread's share. */
extern const double aggregate_no_base[PF_NVALUES];

static inline const double *aggregate_values(const struct aggregate *a, const struct profile *p,
					     uint32_t s)
{
	if (a->keep && !a->keep[s])
		return aggregate_no_base;
	return a->values ? a->values[s] : p->samples[s].v;
}

/* The --base share of sample S as A sees P (pf_sample.base): none in a
 * thread's share, whose values are net of the base already; the base
 * dump's values in a view of two dumps of a series. */
static inline const double *aggregate_base(const struct aggregate *a, const struct profile *p,
					   uint32_t s)
{
	if (a->keep && !a->keep[s])
		return aggregate_no_base;
	if (a->bases)
		return a->bases[s];
	return a->values ? aggregate_no_base : p->samples[s].base;
}

enum { AGG_F_DROP = 1, AGG_F_FOCUS = 2, AGG_F_IGNORE = 4 };

/* The patterns of struct agg_options, as bits of aggregate.unmatched. */
enum {
	AGG_RE_FOCUS = 1, AGG_RE_IGNORE = 2, AGG_RE_RETAIN = 4, AGG_RE_EXCLUDE = 8,
	AGG_RE_ALLOCATOR = 16,
};

/* Whether pattern RE is also matched against full names: it holds '<' or
 * '(', which only full names have. */
bool agg_wants_full(const char *re);

/* Computes the aggregate of P's samples (of one thread's share of them
 * with o->one_thread); P is only read, so any number of aggregates of
 * one model may exist side by side.  Returns 0, JH_ENOMEM, JH_EUSAGE
 * for a bad regular expression or JH_ELIMIT for a match PCRE2 could not
 * finish (message in a->errmsg for both). */
int aggregate_build(struct aggregate *a, const struct profile *p, const struct agg_options *o);
void aggregate_release(struct aggregate *a);

/* Fills a->order with every row whose flat or cum is nonzero, sorted by
 * flat (or cum) descending, then key in byte order. */
int aggregate_sort(struct aggregate *a, bool by_cum);

/* The short or full name of function F as a report shows it. */
const char *aggregate_func_name(const struct profile *p, uint32_t func, bool full,
				char *buf, size_t len);

/* The allocator cut of sample S: the leading run of allocator frames,
 * from the leaf up to the first frame that is not the allocator's, goes;
 * nothing above it does (an allocator that calls back into the program,
 * as malloc_stats_print does, keeps the program's frames; jeprof's "cut
 * up to the outermost match" would lose them).  With --allocator the run
 * starts at the innermost location with a matching frame instead, every
 * location below it going too.  A stack that the cut would take whole is
 * kept whole when it has a frame of Go's runtime (names_is_go_runtime()),
 * as pprof and Go's profile writer keep the runtime's own allocations.
 * Returns the index of the
 * first location a report shows (the stack's depth when every frame is
 * the allocator's), and in *SKIP (when not NULL) how many of that
 * location's frames, innermost first, are cut; 0 and 0 with the cut off.
 * Every writer that walks locations itself starts there. */
uint32_t aggregate_stack_start(const struct aggregate *a, const struct profile *p,
			       uint32_t sample, uint32_t *skip);

/* Whether --focus/--ignore leave out a stack whose kept keys carry the
 * flags SEEN (the AGG_F_* of each key, or'ed). */
static inline bool aggregate_drops(const struct aggregate *a, uint8_t seen)
{
	return (a->want_focus && !(seen & AGG_F_FOCUS)) || (seen & AGG_F_IGNORE);
}

/* Where the report of sample SAMPLE starts: aggregate_stack_start(),
 * and *SKIP (when not NULL) with it, unless --focus/--ignore drop the
 * stack; then, as when every frame is the allocator's, the stack's depth
 * (nothing of it is shown).  A writer that walks locations itself and
 * applies the filters starts there. */
uint32_t aggregate_stack_begin(const struct aggregate *a, const struct profile *p,
			       uint32_t sample, uint32_t *skip);

/* Keys of sample S after allocator frames are cut and the filters applied,
 * leaf first, into *out (grown as needed); returns their count (0 when the
 * filters drop the whole stack) or a negative code. */
int64_t aggregate_stack_keys(const struct aggregate *a, const struct profile *p,
			     uint32_t sample, uint32_t **out, size_t *cap);

/* aggregate_stack_keys(), but each key as its index in a->lockeys (the
 * key is a->lockeys[index]), for a writer that needs the frame each key
 * came from: the location whose keys hold the index, and the line of it
 * (index - key0). */
int64_t aggregate_stack_entries(const struct aggregate *a, const struct profile *p,
				uint32_t sample, uint32_t **out, size_t *cap);

/* Called by aggregate_each_stack() with a sample, its keys (as
 * aggregate_stack_keys() gives them; N may be 0) and its value. */
typedef int (*aggregate_stack_fn)(void *ctx, uint32_t sample, const uint32_t *keys, size_t n,
				  double value);

/* Calls FN for every sample of P whose value V (aggregate_values()) is
 * not 0, in sample order;
 * stops at the first nonzero return of FN and returns it, or a negative
 * code of its own (out of memory). */
int aggregate_each_stack(const struct aggregate *a, const struct profile *p, enum pf_value v,
			 aggregate_stack_fn fn, void *ctx);

#endif
