/*
 * options: the command line of a report, read into struct cli.  One
 * table (cli/options.c) describes every option; --help is printed from
 * it, and tests/t0010-options-doc.sh checks --help and the man page
 * against it.
 */
#ifndef JHEAP_OPTIONS_H
#define JHEAP_OPTIONS_H

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
	MODE_TRACES,     /* every stack with its value (pprof's -traces) */
	MODE_TREE,       /* each function with its callers and callees (pprof's -tree, -peek) */
	MODE_WEB,        /* the call graph as SVG, opened in a browser */
	MODE_WEBLIST,    /* --weblist=RE: the annotated source as HTML, opened in a browser */
	MODE_GIF,        /* the call graph rendered by graphviz */
	MODE_PS,
	MODE_TIMELINE,   /* one row per dump of a series (output/timeline.h) */
	MODE_JSON_TOP,   /* hidden: the web UI's Top data (output/json.h) */
	MODE_JSON_FLAME, /* hidden: the web UI's flame graph data */
};

struct cli {
	enum output_mode mode;
	enum pf_value value;
	bool show_bytes, cum, full_names, keep_allocator, drop_negative, quiet;
	bool no_symbolize, no_cache, growth;
	bool peak;                      /* --peak: report the largest dump of a series */
	bool all_dumps;                 /* --all-dumps: --growth fits every kind of dump */
	enum granularity gran;
	long nodecount;                 /* -1 when not given */
	double nodefraction, edgefraction;
	bool nodefraction_set;           /* given on the command line */
	long maxdegree;
	long seconds;                   /* --seconds: for URLs (cli/url.h) */
	const char *output;             /* -o FILE, or NULL for stdout */
	const char *thread;             /* --thread=N or '*', or NULL */
	const char *focus, *ignore, *retain, *exclude; /* regular expressions */
	const char *allocator;   /* --allocator: the program's own allocator functions */
	const char **debuginfo_dirs;    /* NULL-terminated */
	const char **lib_prefixes;      /* NULL-terminated */
	const char *perf_map;           /* --perf-map=FILE, or NULL */
	const char **bases;             /* NULL-terminated */
	const char **source_dirs;       /* NULL-terminated */
	const char *list;               /* --list=RE */
	const char *disasm;             /* --disasm=RE */
	const char *peek;               /* --peek=RE: the --tree entries of matching functions */
	const char *weblist;            /* --weblist=RE */
	const char **add_libs;          /* --add_lib, NULL-terminated */
	const char **args;              /* positionals: [BINARY] PROFILE... */
	size_t nargs, ndebug, nprefix, nbases, nsource, nadd_libs;
	bool mode_set;                  /* an output format was given */
	bool interactive;               /* --interactive: the shell even without a terminal */
	bool help, version;
	const char *http;               /* --http=[HOST]:PORT: the web UI (cli/webui.h) */
	bool no_browser;                /* --no_browser */
	const char *pid;                /* --pid=PID: the web UI's live timeline */
	bool strict;                    /* --strict: an unreadable profile stops the run */
	/* --label KEY=VALUE, for the PROFILEs from args[from_arg] on and the
	 * --base profiles from bases[from_base] on (those after it) */
	struct cli_label { const char *kv; size_t from_arg, from_base; } *labels;
	size_t nlabels;
	const char *label_from_path;    /* --label-from-path=RE */
	const char *tagfocus, *tagignore; /* [KEY=]RE on the samples' labels */
	/* not an option: the web UI's view of one dump of the loaded series
	 * (series_dump; with series_diff the change since series_base), a
	 * view of the aggregate (analyzer/dumpview.h) */
	bool series_view, series_diff;
	size_t series_dump, series_base;
};

/* Parses ARGV into C.  Returns 0, or JH_EUSAGE with a message in err.
 * Arrays in C point into ARGV or are malloc'd; free them with cli_release.
 * One option's own value is checked here (a number, a thread, one format,
 * one value, one granularity); which options combine, by cli_check(). */
int cli_parse(struct cli *c, int argc, char **argv, char *err, size_t errlen);

/* The one place for the rules of which options combine.
 * cli_check_report(): those of one report's settings, which the shell
 * and the web UI change (--thread='*' and the formats it works with).
 * cli_check(): the whole command line with NPROFILES profiles (the
 * arguments after BINARY): --pid and --no_browser go with --http, which
 * takes no output format, -o, --growth or --interactive, and either
 * profiles or --pid=PID alone; else a profile is given; --interactive
 * takes no output format, -o or --growth; --growth takes no --base or
 * --thread, not every format, and two dumps or more; then
 * cli_check_report().
 * Each returns 0 or JH_EUSAGE with the message (tests/t0012 is their
 * table of valid and invalid command lines). */
int cli_check_report(const struct cli *c, char *err, size_t errlen);
int cli_check(const struct cli *c, size_t nprofiles, char *err, size_t errlen);
void cli_release(struct cli *c);

/* Writes the usage text (generated from the option table). */
void cli_help(FILE *out);

/* Edits (insertions, deletions, substitutions, swaps of neighbours) that
 * turn A (N bytes) into B (M bytes), '-' and '_' alike, or LIMIT + 1 when
 * more than LIMIT. */
size_t cli_edit_distance(const char *a, size_t n, const char *b, size_t m, size_t limit);

/* The long option nearest to NAME (LEN bytes, without dashes), for a "did
 * you mean" hint: the one fewest edits away ('-' and '_' alike), or NULL
 * when none is close. */
const char *cli_nearest_option(const char *name, size_t len);

/* Applies one long option NAME (without dashes, '-' and '_' alike) with
 * VALUE (NULL when it takes none) to C, as on the command line; VALUE must
 * outlive C.  Only the settings of a report are taken (value, granularity,
 * filters, thread, node limits, sorting): the shell's "option=value"
 * commands.  Returns 0, JH_EUSAGE with a message (unknown option, not a
 * setting, a value missing or not wanted, a bad number) or JH_ENOMEM. */
int cli_apply(struct cli *c, const char *name, char *value, char *err, size_t errlen);

/* The usage line and help text of the long option NAME, or NULL. */
const char *cli_option_help(const char *name, const char **arg);

/* Calls FN with the name of every option cli_apply() takes, for completion. */
void cli_each_setting(void (*fn)(void *ctx, const char *name, bool takes_value), void *ctx);
/* Writes one option's line of a --help text: "-c, --name ARG" or
 * "    --name=ARG" padded to WIDTH, then HELP (the subcommands' help uses
 * it too). */
void cli_help_line(FILE *out, char short_name, const char *name, const char *arg,
		   const char *help, int width);

/* Long option names compare with '-' and '_' alike, so both jeprof's
 * --show_bytes and --show-bytes work. */
bool cli_name_eq(const char *a, size_t alen, const char *b);

#endif
