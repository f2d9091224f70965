/*
 * output: the writers of each format, which report_write()
 * (output/report.h, the one entry point for callers outside output/)
 * picks from.  Every format reads the same model and aggregate.
 *
 * The driver parses, merges and symbolizes (cli/load.c), aggregates
 * (cli/driver.c), then hands a struct report to report_write().  A writer never
 * symbolizes and never changes the model.  Each returns 0, or a negative
 * JH_ code with a message in err (for example graphviz missing); the
 * caller prints it.
 */
#ifndef JHEAP_OUTPUT_H
#define JHEAP_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "analyzer/aggregate.h"
#include "analyzer/profile.h"
#include "output/report.h"
#include "output/text.h"

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
