/*
 * cli: the command line.  One table describes every option; --help is
 * printed from it and a test checks the man page against it.
 */
#ifndef JHEAP_CLI_H
#define JHEAP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "analyzer/aggregate.h"

enum output_mode {
	MODE_TEXT = 0,
	MODE_COLLAPSED,
	MODE_FLAMEGRAPH,
	MODE_DOT,
	MODE_SVG,
	MODE_PDF,
	MODE_PNG,
	MODE_PROTO,
	MODE_SPEEDSCOPE,
	MODE_CALLGRIND,
	MODE_RAW,
	MODE_SYMBOLS,
	MODE_LIST,
	MODE_DISASM,
};

struct cli {
	enum output_mode mode;
	enum pf_value value;
	bool show_bytes, cum, full_names, keep_allocator, drop_negative, quiet;
	bool no_symbolize, no_cache, growth;
	enum granularity gran;
	long nodecount;                 /* -1 when not given */
	double nodefraction, edgefraction;
	bool nodefraction_set;           /* given on the command line */
	long maxdegree;
	const char *output;             /* -o FILE, or NULL for stdout */
	const char *thread;             /* --thread=N or '*', or NULL */
	const char *focus, *ignore, *retain, *exclude; /* regular expressions */
	const char **debuginfo_dirs;    /* NULL-terminated */
	const char **lib_prefixes;      /* NULL-terminated */
	const char **bases;             /* NULL-terminated */
	const char **source_dirs;       /* NULL-terminated */
	const char *list;               /* --list=RE */
	const char *disasm;             /* --disasm=RE */
	const char **args;              /* positionals: [BINARY] PROFILE... */
	size_t nargs, ndebug, nprefix, nbases, nsource;
	bool help, version;
};

/* Parses ARGV into C.  Returns 0, or JH_EUSAGE with a message in err.
 * Arrays in C point into ARGV or are malloc'd; free them with cli_release. */
int cli_parse(struct cli *c, int argc, char **argv, char *err, size_t errlen);
void cli_release(struct cli *c);

/* Writes the usage text (generated from the option table). */
void cli_help(FILE *out);

/* Writes one option's line of a --help text: "-c, --name ARG" or
 * "    --name=ARG" padded to WIDTH, then HELP (the subcommands' help uses
 * it too). */
void cli_help_line(FILE *out, char short_name, const char *name, const char *arg,
		   const char *help, int width);

/* Long option names compare with '-' and '_' alike, so both jeprof's
 * --show_bytes and --show-bytes work. */
bool cli_name_eq(const char *a, size_t alen, const char *b);

#endif
