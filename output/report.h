/*
 * report: output/'s one entry point.  Every format, the text table
 * included, is written from a model and an aggregate by report_write(),
 * one switch over the formats as pprof's internal/report/report.go has;
 * the command line and the shell (through cli/driver.c) and the web UI
 * call it.  The writers of each format are output/output.h's.
 *
 * A report reads the model and the aggregate and changes neither: both
 * are const here.  Which values it shows (a thread's share with
 * --thread=N, the value, the filters) was settled when the aggregate was
 * built; a writer reads a sample's values only through
 * aggregate_values() and aggregate_base().  Errors come back as a negative JH_ code with a
 * message; the lines jeprof prints beside a report ("Dropping nodes with
 * <= ...") go to the caller's note callback.
 */
#ifndef JHEAP_REPORT_H
#define JHEAP_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "analyzer/aggregate.h"
#include "analyzer/profile.h"
#include "output/text.h"

enum report_format {
	REPORT_TEXT = 0,     /* jeprof's --text table (--growth: its table) */
	REPORT_COLLAPSED,    /* folded stacks */
	REPORT_FLAMEGRAPH,   /* an interactive SVG flame graph */
	REPORT_DOT,          /* the call graph in graphviz's language */
	REPORT_SVG,          /* the call graph rendered by graphviz */
	REPORT_PDF,
	REPORT_PNG,
	REPORT_GIF,
	REPORT_PS,
	REPORT_PROTO,        /* gzipped pprof profile.proto */
	REPORT_SPEEDSCOPE,
	REPORT_CALLGRIND,
	REPORT_RAW,          /* jeprof's symbolized profile */
	REPORT_TRACES,       /* every stack with its value */
	REPORT_TREE,         /* callers and callees (--peek: of some functions) */
	REPORT_LIST,         /* annotated source */
	REPORT_DISASM,       /* annotated machine code */
	REPORT_WEBLIST,      /* annotated source and code as an HTML page */
	REPORT_JSON_TOP,     /* the web UI's data: the text table (output/json.h) */
	REPORT_JSON_FLAME,   /* the web UI's data: the call tree */
};

struct disasm_cache;
struct growth;

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
	bool nodefraction_set;       /* given: the text table drops rows too */
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
	const struct growth *series; /* with growth: the series, for the text table */
	const char *const *source_dirs; /* --source-dir, NULL-terminated, may be NULL */
	struct disasm_cache *disasm_cache; /* objdump's answers kept between reports, or NULL */
	/* A line jeprof prints on standard error beside the report (without
	 * its newline); NULL: none is wanted. */
	void (*note)(void *ctx, const char *line);
	void *ctx;
};

/* Writes R in format FMT to OUT.  Returns 0, or a negative JH_ code with a
 * message in ERR: JH_EUSAGE when R asks for something FMT cannot give
 * (--raw of several profiles), JH_EIO for a write or a helper program
 * (graphviz, objdump) that failed, JH_ENOMEM. */
int report_write(FILE *out, enum report_format fmt, const struct report *r, char *err,
		 size_t errlen);

#endif
