/*
 * driver: the stages of a jheap run, shared by the one-shot command line
 * (cli/main.c) and the interactive shell (cli/shell.c), so that a shell
 * command and the option it stands for give the same bytes:
 *
 *   driver_load()   (cli/load.c) parse every profile (each into a model
 *                   of its own, fetched first when it is a URL:
 *                   cli/remote.h), label it (cli/inlabels.h), merge them
 *                   (--base with a negative sign), take a server's
 *                   /pprof/symbol names, symbolize and fold by symbol:
 *                   the model, once; many profiles (a fleet's) are
 *                   streamed instead, each symbolized and folded in by
 *                   symbol, then released (cli/fleet.h);
 *   driver_write()  (cli/driver.c) aggregate with the options of one
 *                   report (value, granularity, filters, thread, ...) and
 *                   write it with report_write() (output/report.h), the
 *                   one entry point of every format.
 *
 * The two files share a private header, cli/load.h.
 *
 * The driver is where messages are printed (errors here; warnings,
 * notes, the progress line and stage times through its console,
 * cli/console.h) and where exit statuses are chosen; the stages below it
 * return negative codes with a message.
 *
 * struct driver holds one part per concern, and each function of
 * driver.c takes the parts it uses: the inputs (what the model is loaded
 * from, for a reload), the symbolization (the symbol caches, kept for a
 * reload), the model with what it was loaded for, the analysis (the last
 * AGGCACHE_SIZE aggregates of the model, analyzer/aggcache.h, so that
 * moving between a few settings does not sum the profile again), the
 * output (objdump's answers for the next disasm or weblist,
 * output/disasm.h) and the console.  JHEAP_DEBUG=cache prints what the
 * persistent symbol cache did.
 */
#ifndef JHEAP_DRIVER_H
#define JHEAP_DRIVER_H

#include <stdbool.h>
#include <stdio.h>
#include "analyzer/aggcache.h"
#include "analyzer/aggregate.h"
#include "analyzer/forks.h"
#include "analyzer/growth.h"
#include "analyzer/leaksum.h"
#include "analyzer/profile.h"
#include "cli/console.h"
#include "cli/options.h"
#include "cli/remote.h"
#include "cli/seriesload.h"
#include "symbolize/diskcache.h"
#include "symbolize/symcache.h"

enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };

struct symbolize_preload;
struct disasm_cache;

/* What the model is loaded from, kept for a reload. */
struct driver_inputs {
	const char *binary;             /* BINARY as typed, or NULL */
	const char *const *paths;       /* the PROFILE arguments, NULL-terminated */
	size_t npaths;
	char **shown_paths;             /* the paths as reports name them (a URL's
	                                   saved copy), NULL-terminated, malloc'd */
	size_t nbases;                  /* --base profiles merged into the model */
	struct remote_options remote;   /* for PROFILEs that are URLs */
	struct forks forks;             /* the layouts of the profiles being summed */
};

/* The symbol caches, opened before the dumps are read and kept for a
 * reload; and what to open beside the parse once it leaves a core idle
 * (the binary in pre_sc, its persistent cache from pre_dc:
 * symbolize_preload_start), pre once started. */
struct driver_symbols {
	struct symcache *sc;
	struct diskcache *dc;
	bool open;
	struct symcache *pre_sc;
	struct diskcache *pre_dc;
	const char *pre_binary;
	struct symbolize_preload *pre;
};

/* The model, once driver_load() has made it, and what it was made for. */
struct driver_model {
	struct profile p;
	bool loaded;
	bool ranges;             /* p has the function ranges --disasm needs */
	bool want_ranges;        /* load them whatever the report (the shell's
	                            disasm and weblist come later: a few ms now
	                            rather than loading again then) */
	bool by_address;         /* p was folded for --addresses */
	struct growth g;
	struct growth *growth;   /* --growth: &g, the series, else NULL */
	/* a series (--timeline, --growth, --peak): its dumps (g holds the
	 * values of each with SERIESLOAD_ALL and _GROWTH), and what was
	 * loaded for which kind */
	struct seriesload sl;
	enum seriesload_kind loaded_kind;
	bool series_of_one;      /* a series may have one dump (the web UI's
	                            live series starts so) */
	bool series_threads;     /* keep each dump's per-thread values (the
	                            web UI's thread of one dump) */
	/* the model is one dump taken at exit (prof_final): the reports say
	 * what that means, with jemalloc's leak summary when there is one */
	bool exit_dump, exit_noted, has_leak;
	const char *exit_path;    /* that dump */
	struct leaksum leak;
};

/* What reports keep between them. */
struct driver_output {
	struct disasm_cache *disasm_cache; /* objdump's answers, for the shell's next disasm */
	bool noted;              /* the notes about stripped objects are out */
	bool in_shell;           /* the shell runs: hints name its commands */
};

struct driver {
	struct cli cli;          /* the command line */
	bool degraded;           /* the result is incomplete: exit status 1 */
	struct console con;
	struct driver_inputs in;
	struct driver_symbols sym;
	struct driver_model model;
	struct aggcache aggs;    /* the last aggregates of the model */
	struct driver_output out;
};

/* Sets D up for a run (the console: the terminal, --quiet,
 * JHEAP_PROGRESS_AFTER, JHEAP_DEBUG) with the parsed command line in
 * d->cli. */
void driver_init(struct driver *d);
/* Frees the model and the caches; d->cli stays (cli_release frees it). */
void driver_release(struct driver *d);

/* ---- the load stage: cli/load.c ---- */

/* Parses PATHS (NPATHS profiles, NULL-terminated) and O's --base
 * profiles, merges and symbolizes them with BINARY (or NULL) and the load
 * options of O (--no-symbolize, --lib_prefix, --debuginfo-dir, --growth,
 * --drop_negative; --disasm's function ranges).  With --timeline,
 * --growth or --peak the PATHS are a series (cli/seriesload.h): ordered,
 * checked, and the dumps it asks for loaded, with each one's values for
 * --timeline and --growth (d->g, d->sl).  Prints what goes wrong
 * and returns an exit status; on success the model replaces the one
 * before, on failure the one before stays. */
int driver_load(struct driver *d, const char *binary, const char *const *paths,
		size_t npaths, const struct cli *o);

/* driver_load() again, of the profiles loaded last, with O's --base
 * profiles and load options; the function ranges stay when the model had
 * them.  Returns an exit status; on failure the model before stays. */
int driver_reload(struct driver *d, const struct cli *o);

/* The model driver_load() made (NULL before).  The driver owns it; it
 * stays until the next driver_load() or driver_release(). */
const struct profile *driver_profile(const struct driver *d);

/* Reads the dump PATH alone into ONE (initialized here; the caller
 * releases it), as driver_load() reads each, and notes it as dump K of
 * SER (series_note_dump).  Prints what goes wrong; returns an exit
 * status. */
int driver_read_dump(struct driver *d, const char *path, struct profile *one,
		     struct series *ser, size_t k);

/* Whether O's report needs the function ranges of --disasm in the model. */
bool driver_needs_ranges(const struct cli *o);

/* Whether P lacks the values V needs (allocation counts for the alloc_
 * and churn values), with the command line's message in MSG. */
bool driver_value_missing(const struct profile *p, enum pf_value v, char *msg, size_t len);

/* Whether the model was loaded with what O's report needs (the same
 * number of --base profiles; the ranges of --disasm); when not, call
 * driver_load() again with O first. */
bool driver_loaded_for(const struct driver *d, const struct cli *o);

/* The persistent symbol cache for --symbols, or NULL (with a warning when
 * it cannot be used). */
struct diskcache *driver_open_cache(struct driver *d, const struct symcache *sc);

/* ---- the write stage: cli/driver.c ---- */

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

/* ---- the console, for both stages ---- */

/* Callbacks for the stages below (a warn or note function and its ctx):
 * console_warn() and "jheap: cache: MSG" (JHEAP_DEBUG=cache; in
 * cli/load.c, beside the symbol caches) on D's console; CTX is the
 * driver. */
void driver_warn(void *ctx, const char *msg);
void driver_note(void *ctx, const char *msg);

/* console_stage_done() and console_mark() of D's console. */
void driver_stage_done(struct driver *d, const char *what);
void driver_mark(struct driver *d);

/* Whether JHEAP_DEBUG names WHAT (console_debug_on()). */
bool driver_debug_on(const char *what);

#endif
