/* text: jeprof's --text table (sub PrintText in jemalloc's bin/jeprof.in,
 * /usr/bin/jeprof; its numbers: Unparse, UnparseAlt, Percent, Units).
 * The README's "How jheap differs from jeprof" says where it does. */
#ifndef JHEAP_TEXT_H
#define JHEAP_TEXT_H

#include <stdbool.h>
#include <stdio.h>
#include "analyzer/aggregate.h"

enum units { UNITS_MB = 0, UNITS_BYTES, UNITS_OBJECTS };

struct text_options {
	enum units units;
	long nodecount;          /* rows at most; <= 0 for all */
	double nodelimit;        /* hide rows whose |cum| is at most this; < 0 for none */
	const char *thread;      /* "t3" for a thread's report, or NULL */
};

/* The units a value is printed in: objects for counts, else MB or B. */
enum units text_units(enum pf_value v, bool show_bytes);
const char *text_unit_name(enum units u);
/* Formats V as jeprof's Unparse does: "%.1f" of MiB, or a truncated integer. */
void text_format_value(char *buf, size_t len, double v, enum units u);
/* The same, but "." for 0 (jeprof's UnparseAlt: the columns of --list,
 * --disasm and --weblist). */
void text_format_value_alt(char *buf, size_t len, double v, enum units u);
/* "%.1f" of X into BUF as printf writes it (the exact value rounded, ties
 * to even), without printf's slow path, but a value that rounds to zero
 * is "0.0", never printf's "-0.0"; returns the length, or -1 when X is
 * not finite, |X| >= 1e17 or LEN < 24 (then call snprintf). */
int text_fixed1(char *buf, size_t len, double x);
/* V, or +0 when printf would show it with DECIMALS decimals as a zero
 * ("-0.0", "-0" from a small negative value of a difference): what every
 * writer passes to a "%.Nf". */
double text_shown(double v, int decimals);
/* jeprof's Percent(): "%.1f%%"; "n/a" when the total is 0, where jeprof
 * prints nan, +inf or -inf (no output of jheap prints those). */
void text_format_percent(char *buf, size_t len, double v, double total);

/* Writes the table for A (already sorted with aggregate_sort). */
void text_write(FILE *out, const struct aggregate *a, const struct text_options *o);

#endif
