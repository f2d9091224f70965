/*
 * subcmd: jheap's subcommands, `jheap record`, `jheap dump` and `jheap ctl`,
 * and the small option tables they share the parsing of.
 *
 * A word is a subcommand only as the very first argument; anywhere else,
 * and written with a path ("./dump"), it is a profile file's name.
 *
 * cli/main.c hands every command line here first.  `jheap record` sets the
 * environment and execs the program (cli/record.c); `jheap ctl` talks to
 * its control socket (cli/control.h); `jheap dump PID REPORT-OPTIONS`
 * asks for a dump and hands back the ordinary command line
 * `jheap REPORT-OPTIONS DUMP`, so the report is made by the same analysis
 * as any other (cli/dump.c).  They sit above the pipeline.
 */
#ifndef JHEAP_SUBCMD_H
#define JHEAP_SUBCMD_H

#include <stddef.h>
#include <stdio.h>

/* When ARGV is a subcommand's line, runs it and returns its exit status.
 * Returns -1 when ARGV is an analysis command line: the caller goes on
 * with *ARGCP and *ARGVP, which `jheap dump PID --text` has rewritten to
 * analyze the new dump ("jheap --text DUMP"); the new vector lives until
 * the program exits. */
int subcmd_main(int *argcp, char ***argvp);

/* One option of a subcommand.  Keep each table in step with its
 * subcommand's section of man/jheap.1: tests/t0010 compares them. */
struct subopt {
	const char *name;     /* long name, without the dashes */
	char short_name;      /* 0 when none */
	int id;
	const char *arg;      /* metavariable, or NULL for a flag; "[NAME]" for
	                         a value that may be left out (--opt=NAME only) */
	const char *help;
};

/* Matches ARGV[*I] against TABLE (N entries): --name, --name=value,
 * --name value, -c, -c value; '-' and '_' alike in names.  Returns 1 with
 * *OPT and *VAL set (*I moved past a separate value), 0 when ARGV[*I] is
 * not an option of TABLE, or JH_EUSAGE with a message (a missing value, a
 * value given to a flag). */
int subopt_match(const struct subopt *table, size_t n, int argc, char **argv, int *i,
		 const struct subopt **opt, const char **val, char *err, size_t errlen);

/* Writes TABLE as the "Options:" part of a --help text. */
void subopt_help(FILE *out, const struct subopt *table, size_t n);

/* Parses a size: a number of bytes with an optional K, M, G or T suffix
 * (powers of 1024, "KiB" and "KB" alike).  Returns 0 or -1. */
int subopt_size(const char *s, unsigned long long *out);

/* The base-2 logarithm of V rounded down (V > 0). */
int subopt_lg(unsigned long long v);

/* jheap record (cli/record.c), jheap dump and jheap ctl (cli/dump.c):
 * ARGV[0] is the subcommand's word. */
int record_main(int argc, char **argv);
int dump_main(int argc, char **argv, int *new_argc, char ***new_argv);
int ctl_main(int argc, char **argv);

#endif
