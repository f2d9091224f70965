/*
 * driver: the stages of a jheap run, shared by the one-shot command line
 * (cli/main.c) and the interactive shell (cli/shell.c), so that a shell
 * command and the option it stands for give the same bytes:
 *
 *   driver_load()   parse every profile (each into a model of its own,
 *                   fetched first when it is a URL: cli/remote.h), label
 *                   it (cli/inlabels.h), merge them (--base with a
 *                   negative sign), take a server's /pprof/symbol names,
 *                   symbolize and fold by symbol: the model, once; many
 *                   profiles (a fleet's) are streamed instead, each
 *                   symbolized and folded in by symbol, then released
 *                   (cli/fleet.h);
 *   driver_write()  aggregate with the options of one report (value,
 *                   granularity, filters, thread, ...) and write it with
 *                   report_write() (output/report.h), the one entry point
 *                   of every format.
 *
 * The driver is where messages are printed (errors, warnings, the progress
 * line on stderr) and where exit statuses are chosen; the stages below it
 * return negative codes with a message.
 *
 * For the shell it keeps the last DRIVER_AGGS (four) aggregates of the
 * whole profile, keyed by their options (value, granularity, names,
 * filters), so that moving between a few settings does not sum the profile
 * again, and objdump's answers (struct disasm_cache, output/disasm.h) for
 * the next disasm or weblist.  JHEAP_DEBUG=time prints each stage's wall
 * time (parse, symbolize, aggregate, write) with its CPU time and page
 * faults, to see where a slow run goes; JHEAP_DEBUG=cache what the
 * persistent symbol cache did.
 */
#ifndef JHEAP_DRIVER_H
#define JHEAP_DRIVER_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "analyzer/aggregate.h"
#include "analyzer/growth.h"
#include "analyzer/profile.h"
#include "cli/options.h"
#include "cli/remote.h"
#include "symbolize/diskcache.h"
#include "symbolize/symcache.h"

enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };

struct symbolize_preload;
struct disasm_cache;

/* How many aggregates the driver keeps: a shell session moves between a
 * few settings (a focus and none, two values) and each costs a few MB. */
#define DRIVER_AGGS 4

/* An aggregate of the whole profile and what it was built with (res:
 * copies of its regular expressions, which key points to). */
struct driver_agg {
	struct aggregate agg;
	struct agg_options key;
	char *res[7];
};

struct driver {
	struct cli cli;          /* the command line */
	bool degraded;           /* the result is incomplete: exit status 1 */
	/* the progress line: only on a terminal, after a second, not --quiet */
	bool tty, shown;
	struct timespec start;
	struct timespec progress_from; /* the start, or of the shell's command */
	double progress_after;   /* seconds; JHEAP_PROGRESS_AFTER, default 1 */
	struct growth *growth;   /* --growth: the series, else NULL */
	bool debug_time;         /* JHEAP_DEBUG=time: stage times on stderr */
	struct timespec mark;    /* end of the previous timed stage */
	double mark_cpu;         /* process CPU seconds at the mark */
	long mark_flt;           /* minor page faults at the mark */
	/* what to open beside the parse once it leaves a core idle: the
	 * binary in pre_sc, its persistent cache from pre_dc (see
	 * symbolize_preload_start); pre, once started */
	struct symcache *pre_sc;
	struct diskcache *pre_dc;
	const char *pre_binary;
	struct symbolize_preload *pre;

	/* The model, once driver_load() has made it. */
	const char *binary;      /* BINARY as typed, or NULL */
	const char *const *paths; /* the PROFILE arguments, NULL-terminated */
	size_t npaths;
	char **shown_paths;      /* paths as reports name them (a URL's saved
	                            copy), NULL-terminated, malloc'd */
	struct profile p;
	bool loaded;
	size_t nbases;           /* --base profiles merged into p */
	bool ranges;             /* p has the function ranges --disasm needs */
	bool want_ranges;        /* load them whatever the report (the shell's
	                            disasm and weblist come later: a few ms now
	                            rather than loading again then) */
	bool by_address;         /* p was folded for --addresses */
	bool noted;              /* the notes about stripped objects are out */
	struct remote_options remote; /* for PROFILEs that are URLs */
	struct growth g;
	struct symcache *sc;     /* the symbol caches, kept for a reload */
	struct diskcache *dc;
	bool caches_open;
	/* the last aggregates of the whole profile, for the shell's next
	 * commands: the most recently used first */
	struct driver_agg aggs[DRIVER_AGGS];
	size_t naggs;
	struct disasm_cache *disasm_cache; /* objdump's answers, for the shell's next disasm */
};

/* Sets D up for a run (the terminal, JHEAP_PROGRESS_AFTER, JHEAP_DEBUG)
 * with the parsed command line in d->cli. */
void driver_init(struct driver *d);
/* Frees the model and the caches; d->cli stays (cli_release frees it). */
void driver_release(struct driver *d);

/* Parses PATHS (NPATHS profiles, NULL-terminated) and O's --base
 * profiles, merges and symbolizes them with BINARY (or NULL) and the load
 * options of O (--no-symbolize, --lib_prefix, --debuginfo-dir, --growth,
 * --drop_negative; --disasm's function ranges).  Prints what goes wrong
 * and returns an exit status; on success the model replaces the one
 * before, on failure the one before stays. */
int driver_load(struct driver *d, const char *binary, const char *const *paths,
		size_t npaths, const struct cli *o);

/* Whether O's report needs the function ranges of --disasm in the model. */
bool driver_needs_ranges(const struct cli *o);

/* Whether the model was loaded with what O's report needs (the same
 * number of --base profiles; the ranges of --disasm); when not, call
 * driver_load() again with O first. */
bool driver_loaded_for(const struct driver *d, const struct cli *o);

/* Writes the report O asks for (o->mode, with every --thread in turn) to
 * OUT.  Prints what goes wrong; returns an exit status.  O may be any
 * struct cli, not D's own (the shell's settings, a web request's copy):
 * only its report settings are read.  Not thread-safe: D keeps the last
 * aggregates and objdump's answers, so callers on several threads (the
 * web UI) hold one lock around it. */
int driver_write(struct driver *d, const struct cli *o, FILE *out);

/* driver_write() into the file PATH, refusing to write over an input. */
int driver_write_file(struct driver *d, const struct cli *o, const char *path);

/* --web, --weblist and the shell's viewers: writes O's report to PATH, or
 * to a new temporary file when PATH is NULL, and opens it in the browser
 * (cli/browser.h).  Returns an exit status. */
int driver_show(struct driver *d, const struct cli *o, const char *path);

/* The persistent symbol cache for --symbols, or NULL (with a warning when
 * it cannot be used). */
struct diskcache *driver_open_cache(struct driver *d, const struct symcache *sc);

/* The progress line on a terminal (after JHEAP_PROGRESS_AFTER seconds,
 * not with --quiet): "jheap: " and FMT, over the line before; and its
 * clearing, before other messages or at the end. */
__attribute__((format(printf, 2, 3)))
void driver_progress(struct driver *d, const char *fmt, ...);
void driver_progress_clear(struct driver *d);

/* Prints "jheap: warning: MSG" unless --quiet (after clearing the progress
 * line); CTX is the driver. */
void driver_warn(void *ctx, const char *msg);
/* Diagnostics of the persistent cache (JHEAP_DEBUG=cache); CTX is the driver. */
void driver_note(void *ctx, const char *msg);

/* JHEAP_DEBUG=time: prints the time since the last mark under WHAT and
 * moves the mark to now; driver_mark() only moves it, and starts the
 * progress line's delay again (the shell, before a command, so that
 * waiting for the user is not counted). */
void driver_stage_done(struct driver *d, const char *what);
void driver_mark(struct driver *d);

/* Whether JHEAP_DEBUG names WHAT. */
bool driver_debug_on(const char *what);

#endif
