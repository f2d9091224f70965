/*
 * output: every report format reads the same model and aggregate.
 *
 * The driver (cli/driver.c) parses, merges, symbolizes and aggregates,
 * then hands a struct report to one of these writers.  A writer never
 * symbolizes and never changes the model.  Each returns 0, or a negative
 * JH_ code with a message in err (for example graphviz missing); the
 * driver prints it.
 */
#ifndef JHEAP_OUTPUT_H
#define JHEAP_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "analyzer/aggregate.h"
#include "analyzer/profile.h"
#include "output/text.h"

struct disasm_cache;

struct report {
	const struct profile *p;
	const struct aggregate *a;   /* built for value and gran below, allocator frames cut */
	enum pf_value value;         /* the chosen sample value (--inuse_space ...) */
	enum units units;            /* how text-like outputs print values */
	enum granularity gran;
	bool full_names;             /* --full-names */
	bool keep_allocator;         /* --keep-allocator-frames */
	bool diff;                   /* --base was given: samples carry base[] too */
	bool no_symbolize;           /* --no-symbolize */
	long nodecount;              /* -1: the format's default (dot: 80, text: all) */
	double nodefraction;         /* default 0.005 */
	double edgefraction;         /* default 0.001 */
	long maxdegree;              /* default 8 */
	const char *program;         /* BINARY as typed, else the main executable's
	                                path from the dump, else "binary=" of a
	                                symbolized profile; may be "" */
	const char *const *profile_paths; /* the PROFILE arguments, NULL-terminated */
	const char *thread;          /* "t3" when reporting one thread, else NULL */
	const char *list;            /* --list=RE */
	const char *disasm;          /* --disasm=RE */
	const char *peek;            /* --peek=RE: --tree of the matching entries */
	const char *weblist;         /* --weblist=RE */
	bool growth;                 /* --growth: sample values are fitted growth over a series */
	bool cum;                    /* --cum: rank by cumulative values (--growth's table too) */
	const char *const *source_dirs; /* --source-dir, NULL-terminated, may be NULL */
	struct disasm_cache *disasm_cache; /* objdump's answers kept between reports, or NULL */
};

int output_collapsed(FILE *out, const struct report *r, char *err, size_t errlen);
int output_flamegraph(FILE *out, const struct report *r, char *err, size_t errlen);
int output_dot(FILE *out, const struct report *r, char *err, size_t errlen);
/* --svg, --pdf, --png: the dot text rendered by graphviz's "dot -TFORMAT",
 * run with execvp and an argument vector (never a shell). */
int output_graphviz(FILE *out, const struct report *r, const char *format,
		    char *err, size_t errlen);
int output_proto(FILE *out, const struct report *r, char *err, size_t errlen);
int output_speedscope(FILE *out, const struct report *r, char *err, size_t errlen);
int output_callgrind(FILE *out, const struct report *r, char *err, size_t errlen);
int output_raw(FILE *out, const struct report *r, char *err, size_t errlen);
/* --list=RE: annotated source of every function matching r->list. */
int output_list(FILE *out, const struct report *r, char *err, size_t errlen);
/* --disasm=RE: annotated machine code (objdump) of the matching functions. */
int output_disasm(FILE *out, const struct report *r, char *err, size_t errlen);
/* --traces: every stack with its value (output/traces.c has the rules). */
int output_traces(FILE *out, const struct report *r, char *err, size_t errlen);
/* --tree, --peek=RE: each function's callers and callees (output/tree.c). */
int output_tree(FILE *out, const struct report *r, char *err, size_t errlen);
/* --weblist=RE: --list's annotated source as an HTML page (output/weblist.c). */
int output_weblist(FILE *out, const struct report *r, char *err, size_t errlen);

struct growth;
/* --growth's table (output/growth.c): R's call sites ranked by steady
 * growth over the series G. */
int output_growth(FILE *out, const struct growth *g, const struct report *r, char *err,
		  size_t errlen);

/* "inuse_space" and so on: the name pprof gives value V. */
const char *output_value_name(enum pf_value v);
/* pprof's first report lines: "File: " and the program's base name (when
 * known), "Type: " and the value's name. */
void output_labels(FILE *out, const struct report *r);

#endif
