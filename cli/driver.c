/* The stages of a run: load once (parse, merge, symbolize), then write any
 * number of reports from the model in memory (see driver.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/aggcache.h"
#include "analyzer/aggregate.h"
#include "analyzer/forks.h"
#include "analyzer/merge.h"
#include "analyzer/parse.h"
#include "analyzer/threadview.h"
#include "symbolize/addlib.h"
#include "cli/browser.h"
#include "cli/console.h"
#include "cli/driver.h"
#include "cli/fleet.h"
#include "cli/hints.h"
#include "cli/inlabels.h"
#include "cli/remote.h"
#include "cli/url.h"
#include "lib/errors.h"
#include "output/disasm.h"
#include "output/outfile.h"
#include "output/report.h"
#include "output/timeline.h"
#include "symbolize/symbolize.h"
#include "symbolize/unnamed.h"

bool driver_debug_on(const char *what)
{
	return console_debug_on(what);
}

void driver_init(struct driver *d)
{
	console_init(&d->con, d->cli.quiet);
}

void driver_stage_done(struct driver *d, const char *what)
{
	console_stage_done(&d->con, what);
}

void driver_mark(struct driver *d)
{
	console_mark(&d->con);
}

void driver_warn(void *ctx, const char *msg)
{
	struct driver *d = ctx;
	console_warn(&d->con, msg);
}

/* What the persistent cache did (JHEAP_DEBUG=cache); CTX is the console. */
static void cache_note(void *ctx, const char *msg)
{
	console_clear(ctx);
	fprintf(stderr, "jheap: cache: %s\n", msg);
}

void driver_note(void *ctx, const char *msg)
{
	struct driver *d = ctx;
	cache_note(&d->con, msg);
}

/* The parse's callbacks: CTX is the driver. */
static void parse_progress(void *ctx, const char *name, size_t done, size_t total)
{
	struct driver *d = ctx;
	console_progress(&d->con, "parsing %s: %zu of %zu MB", name, done >> 20, total >> 20);
}

/* The other stages': CTX is the console. */
static void symbolize_progress(void *ctx, size_t modules, size_t done, size_t total)
{
	console_progress(ctx, "symbolizing: %zu of %zu addresses (%zu objects)", done, total, modules);
}

static void fetch_progress(void *ctx, const char *what)
{
	console_progress(ctx, "%s", what);
}

/* What a fetch did. */
static void fetch_info(void *ctx, const char *msg)
{
	console_info(ctx, msg);
}

static void note_line(void *ctx, const char *msg)
{
	console_note(ctx, msg);
}

static void warn_line(void *ctx, const char *msg)
{
	console_warn(ctx, msg);
}

/* A BINARY given with a symbolized profile: the profile's names win. */
static void note_presym(struct console *con, const char *binary)
{
	if (con->quiet)
		return;
	console_clear(con);
	fprintf(stderr, "jheap: note: the profile is symbolized: the names in it are used, '%s' only names the addresses it leaves unknown\n",
		binary);
}

/* The persistent symbol cache, or NULL when --no-cache, --no-symbolize or
 * when the folder cannot be used: then WHY says so (else it is ""), for a
 * warning the caller gives when it is time (the run goes on). */
static struct diskcache *open_cache_quiet(const struct cli *c, const struct symcache *sc,
					  char *why, size_t whylen)
{
	why[0] = '\0';
	if (c->no_cache || c->no_symbolize)
		return NULL;
	char err[1024];
	struct diskcache *dc = diskcache_new(NULL, symcache_debuginfo_dirs(sc), err, sizeof(err));
	if (!dc)
		snprintf(why, whylen, "symbol cache not used: %s (--no-cache skips it)", err);
	return dc;
}

struct diskcache *driver_open_cache(struct driver *r, const struct symcache *sc)
{
	char why[1200];
	struct diskcache *dc = open_cache_quiet(&r->cli, sc, why, sizeof(why));
	if (why[0])
		console_warn(&r->con, why);
	return dc;
}

/* parse_options.core_idle: the parse has a core to spare from now on. */
static void core_idle(void *ctx)
{
	struct driver_symbols *sym = &((struct driver *)ctx)->sym;
	if (sym->pre_sc && !sym->pre)
		sym->pre = symbolize_preload_start(sym->pre_sc, sym->pre_dc, sym->pre_binary);
}

static const char *program_name(const struct profile *p, const char *binary);

static void free_shown(struct driver_inputs *in)
{
	for (size_t i = 0; in->shown_paths && in->shown_paths[i]; i++)
		free(in->shown_paths[i]);
	free(in->shown_paths);
	in->shown_paths = NULL;
}

/* The notes about the profiles summed that are of one process image;
 * the list is emptied for the next load. */
static void forks_note(struct driver *r)
{
	hints_forks(&r->in.forks, note_line, &r->con);
	forks_release(&r->in.forks);
	forks_init(&r->in.forks);
}

/* What load() does beside reading and merging; zero: nothing. */
struct load_how {
	struct series *ser;     /* a series' dump: noted as dump K of SER */
	size_t k;
	struct inlabels *il;    /* labels: the input's index in the command line */
	size_t index;
	bool skip;              /* one of several: when it cannot be read, a
	                           warning and the others (cli/fleet.h) */
};

/* Reads PATH (a file, "-" or a URL) and merges it into DST with SIGN,
 * as HOW says.  *SHOWN, when SHOWN is not NULL, gets the name reports
 * give PATH: a URL's saved copy (which --raw reads again), or the URL
 * without user information when it was not saved; else PATH; malloc'd;
 * NULL for a skipped one. */
static int load(struct driver *r, struct profile *dst, const char *path, double sign,
		char **shown, const struct load_how *how)
{
	struct profile one;
	char err[1024], saved[4096] = "";
	bool url = remote_is_url(path);
	char name[URL_MAX];   /* PATH in messages: a URL without user information */
	if (url)
		url_redact(name, sizeof(name), path);
	else
		snprintf(name, sizeof(name), "%s", path);
	if (shown)
		*shown = NULL;
	if (profile_init(&one)) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	bool truncated = false;
	struct parse_options po = { .warn = driver_warn, .ctx = r, .progress = parse_progress,
				    .core_idle = core_idle, .truncated = &truncated };
	int rc = url
		? remote_load(&one, path, &r->in.remote, &po, saved, sizeof(saved), err, sizeof(err))
		: parse_file(&one, strcmp(path, "-") ? path : "/dev/stdin", &po, err, sizeof(err));
	console_clear(&r->con);
	if (truncated)
		r->degraded = true;   /* the report is of what the file holds: exit status 1 */
	if (rc && how->skip && rc != JH_ENOMEM) {
		/* one of several: the report is of the others (cli/fleet.h) */
		char msg[1200];
		snprintf(msg, sizeof(msg), "skipping %s (--strict stops here instead)", err);
		console_warn(&r->con, msg);
		r->degraded = true;
		profile_release(&one);
		return EXIT_OK;
	}
	if (!rc && how->il)
		rc = inlabels_apply(how->il, sign < 0, how->index, path, &one, err, sizeof(err));
	if (!rc && shown && !(*shown = strdup(saved[0] ? saved : name)))
		rc = jh_err(err, sizeof(err), JH_ENOMEM, "out of memory");
	/* a series: of one program and process, as each dump comes */
	if (!rc && how->ser)
		rc = series_note_dump(how->ser, how->k, &one, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "jheap: %s\n", err);
		profile_release(&one);
		return EXIT_DATA;
	}
	if (sign < 0 && r->cli.thread && one.nsamples && !one.ntvals) {
		/* its values cannot be taken from each thread's share */
		fprintf(stderr, "jheap: --thread: the --base profile '%s' has no per-thread values (%s): it cannot be subtracted thread by thread; leave out --thread or --base\n",
			name, one.format == PF_FMT_PPROF ? "a pprof profile" : "no 't' lines");
		profile_release(&one);
		return EXIT_DATA;
	}
	const char *was = program_name(dst, NULL), *base = program_name(&one, NULL);
	if (sign < 0 && *was && *base && strcmp(was, base)) {
		char msg[URL_MAX + 2400];
		snprintf(msg, sizeof(msg), "the base profile '%s' is of '%s', the profile of '%s': the difference is between two programs",
			 name, base, was);
		console_warn(&r->con, msg);
	}
	/* a sum (not a series' dump) may count a fork's memory twice */
	if (sign > 0 && !how->ser && forks_add(&r->in.forks, &one, name)) {
		fprintf(stderr, "jheap: out of memory\n");
		profile_release(&one);
		return EXIT_DATA;
	}
	if (sign > 0 && dst->format == PF_FMT_NONE && !dst->nsamples && !dst->nmaps &&
	    !dst->npresyms) {
		/* the first profile: take it as it is rather than copy it */
		profile_release(dst);
		*dst = one;
		return EXIT_OK;
	}
	rc = profile_merge(dst, &one, sign, err, sizeof(err));
	profile_release(&one);
	if (rc) {
		fprintf(stderr, "jheap: %s\n", err);
		return EXIT_DATA;
	}
	return EXIT_OK;
}

/* True when PATH names one of the input files of C (the same inode),
 * which opening it for writing would destroy. */
static bool output_is_input(const struct cli *c, const char *path)
{
	struct stat o;
	if (stat(path, &o))
		return false;
	for (size_t i = 0; i < c->nargs; i++) {
		struct stat s;
		if (!stat(c->args[i], &s) && s.st_dev == o.st_dev && s.st_ino == o.st_ino)
			return true;
	}
	for (size_t i = 0; i < c->nbases; i++) {
		struct stat s;
		if (!stat(c->bases[i], &s) && s.st_dev == o.st_dev && s.st_ino == o.st_ino)
			return true;
	}
	return false;
}

static const char *value_option(enum pf_value v)
{
	switch (v) {
	case PF_INUSE_OBJECTS: return "--inuse_objects";
	case PF_INUSE_SPACE: return "--inuse_space";
	case PF_ALLOC_OBJECTS: return "--alloc_objects";
	case PF_CHURN_OBJECTS: return "--churn_objects";
	case PF_CHURN_SPACE: return "--churn";
	default: return "--alloc_space";
	}
}

bool driver_value_missing(const struct profile *p, enum pf_value v, char *msg, size_t len)
{
	if (v < PF_ALLOC_OBJECTS || p->has_alloc || !p->nsamples)
		return false;
	snprintf(msg, len, "%s: the profile has no allocation counts (the program ran without MALLOC_CONF=prof_accum:true%s); use --inuse_space or --inuse_objects",
		 value_option(v), v >= PF_CHURN_OBJECTS
		 ? ": what was allocated and freed again is the allocated counts minus those in use; jheap record --accum keeps them" : "");
	return true;
}

static void drop_negative(struct profile *p)
{
	for (size_t i = 0; i < p->nsamples; i++)
		for (int j = 0; j < PF_NVALUES; j++)
			if (p->samples[i].v[j] < 0)
				p->samples[i].v[j] = 0;
}

/* The symbol caches exist before the dumps are read so that the binary
 * and its persistent cache can be opened beside the parse; they are kept
 * for a reload.  Returns 0 or EXIT_DATA; WHY as open_cache_quiet(). */
static int open_caches(struct driver_symbols *sym, const struct cli *c, char *why, size_t whylen)
{
	why[0] = '\0';
	if (sym->open)
		return EXIT_OK;
	sym->sc = symcache_new(&(struct symcache_options){ .debuginfo_dirs = c->debuginfo_dirs });
	if (!sym->sc) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	sym->dc = open_cache_quiet(c, sym->sc, why, whylen);
	sym->open = true;
	return EXIT_OK;
}

/* The symbolizer's options for a load, with the names of JIT code in *PM
 * (--perf-map, else the first dump's own perf map, of PATHS; NULL when
 * none).  Returns an exit status. */
static int symbolize_setup(struct driver *r, const char *binary, const char *const *paths,
			   size_t npaths, const struct cli *c, struct symbolize_options *so,
			   struct perfmap **pm)
{
	char err[1200];
	*so = (struct symbolize_options){
		.binary = binary, .lib_prefixes = c->lib_prefixes,
		.cache = r->sym.dc, .note = console_debug_on("cache") ? cache_note : NULL,
		.no_symbolize = c->no_symbolize, .warn = warn_line, .ctx = &r->con,
		.progress = symbolize_progress,
		.symcache_opts = { .debuginfo_dirs = c->debuginfo_dirs },
		.ranges = driver_needs_ranges(c) || r->model.want_ranges,
	};
	*pm = NULL;
	if (!c->no_symbolize && c->perf_map &&
	    perfmap_open(c->perf_map, (uid_t)-1, pm, err, sizeof(err))) {
		fprintf(stderr, "jheap: --perf-map: %s\n", err);
		return EXIT_DATA;
	}
	if (!c->no_symbolize && !c->perf_map && npaths && !remote_is_url(paths[0])) {
		err[0] = '\0';
		if (perfmap_for_dump(paths[0], pm, err, sizeof(err)) == JH_ENOMEM) {
			fprintf(stderr, "jheap: out of memory\n");
			return EXIT_DATA;
		}
		if (err[0])
			console_warn(&r->con, err);
	}
	so->perfmap = *pm;
	return EXIT_OK;
}

/* Parses PATHS and C's --base profiles into P, with the binary opened
 * beside the parse; SHOWN[i] gets the name reports give PATHS[i]
 * (load(); NULL for one skipped, and the names left are moved up).  For
 * a series whose values are kept (G not NULL), each PATH is noted in SER
 * and G gets a snapshot after it.  Many profiles are streamed instead
 * (cli/fleet.h): each symbolized with SO as it comes (*ST its findings)
 * and folded in by symbol; *STREAMED says so.  Returns an exit status. */
static int parse_all(struct driver *r, struct profile *p, const char *const *paths,
		     size_t npaths, char **shown, const struct cli *c, struct series *ser,
		     struct growth *g, const struct symbolize_options *so,
		     struct symbolize_stats *st, bool *streamed)
{
	char err[1024];
	*streamed = false;
	/* where each input's samples came from (cli/inlabels.h); PATHS[0]
	 * is c->args[args0] when PATHS are the command line's */
	struct inlabels il;
	if (inlabels_init(&il, c, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		return EXIT_USAGE;
	}
	size_t args0 = c->nargs;
	for (size_t i = 0; i < c->nargs; i++)
		if (c->args + i == (const char **)paths)
			args0 = i;
	struct load_how how = { .il = &il, .skip = fleet_skips(c, npaths) };
	int rc = EXIT_OK;
	*streamed = !g && fleet_wanted(c, paths, npaths);
	if (*streamed)
		rc = fleet_load(r, p, paths, npaths, args0, c, &il, so, st, shown);
	for (size_t i = 0; i < npaths && !rc && !*streamed; i++) {
		how.ser = g ? ser : NULL;
		how.k = i;
		how.index = args0 + i;
		rc = load(r, p, paths[i], 1, &shown[i], &how);
		if (!rc && g && growth_snapshot(g, p)) {
			fprintf(stderr, "jheap: out of memory\n");
			rc = EXIT_DATA;
		}
	}
	how.ser = NULL;
	for (size_t i = 0; i < c->nbases && !rc && !*streamed; i++) {
		how.index = i;
		rc = load(r, p, c->bases[i], -1, NULL, &how);
	}
	inlabels_release(&il);
	/* the names of the profiles read, skipped ones left out */
	size_t nshown = 0;
	for (size_t i = 0; i < npaths; i++)
		if (shown[i])
			shown[nshown++] = shown[i];
	for (size_t i = nshown; i <= npaths; i++)
		shown[i] = NULL;
	if (!rc && !nshown && how.skip && r->degraded) {
		fprintf(stderr, "jheap: none of the profiles could be read\n");
		rc = EXIT_DATA;
	}
	if (!rc) {
		forks_note(r);
	} else {
		forks_release(&r->in.forks);
		forks_init(&r->in.forks);
	}
	symbolize_preload_finish(r->sym.pre);
	r->sym.pre = NULL;
	r->sym.pre_sc = NULL;
	return rc;
}

/* --add_lib: the addresses no mapping covers, looked up in each FILE. */
static int add_libs(struct console *con, struct profile *p, const struct cli *c)
{
	char err[1024];
	for (size_t i = 0; i < c->nadd_libs; i++) {
		size_t moved;
		if (addlib_apply(p, c->add_libs[i], &moved, err, sizeof(err))) {
			fprintf(stderr, "jheap: %s\n", err);
			return EXIT_DATA;
		}
		if (!moved) {
			snprintf(err, sizeof(err), "--add_lib: no address of the profile that a mapping leaves uncovered lies in '%s'",
				 c->add_libs[i]);
			console_warn(con, err);
		}
	}
	return EXIT_OK;
}

/* Symbolizes P with the caches of R and SO, folds it by symbol (by
 * address for --addresses) and finishes the series' values G (when not
 * NULL); a STREAMED P is symbolized and folded already (*ST holds what
 * that found).  Prints what the run should know (a wrong binary, a
 * symbolized profile's names); returns an exit status. */
static int symbolize_model(struct driver *r, struct profile *p, const char *binary,
			   const struct cli *c, struct growth *g, const struct symbolize_options *so,
			   struct symbolize_stats *st, bool streamed)
{
	char err[1024];
	uint32_t *remap = NULL;
	if ((!streamed && symbolize_profile(p, r->sym.sc, so, st, err, sizeof(err))) ||
	    (!streamed && profile_fold_by_symbol(p, c->gran == GRAN_ADDRESSES, &remap) &&
	     jh_err(err, sizeof(err), JH_ENOMEM, "out of memory")) ||
	    (g && growth_finish(g, p, remap) &&
	     jh_err(err, sizeof(err), JH_ENOMEM, "out of memory"))) {
		fprintf(stderr, "jheap: %s\n", err);
		free(remap);
		return EXIT_DATA;
	}
	free(remap);
	driver_stage_done(r, "symbolize");
	if (c->drop_negative)
		drop_negative(p);
	if (g && c->growth && c->mode != MODE_TEXT)
		growth_apply(g, p);
	if (st->binary_mismatch || st->resource_failed)
		r->degraded = true;
	if (binary && st->pcs_presym)
		note_presym(&r->con, binary);
	/* a stripped program that passes the call check is the right one:
	 * a note says how to get its names */
	if (st->main_pcs && !st->main_resolved && !c->no_symbolize && !st->binary_mismatch &&
	    st->main_calls.verdict != CALLCHECK_MATCH && !st->main_stripped) {
		/* the file looked in; none: it could not be opened, which a
		 * warning said already */
		const char *name = binary;
		if (p->main_mapping != UINT32_MAX && p->maps[p->main_mapping].object)
			name = strtab_get(&p->strs, p->maps[p->main_mapping].object);
		if (name) {
			char msg[4400];
			snprintf(msg, sizeof(msg), "none of the %zu addresses in the main program resolve to a function in '%s': is it the binary that wrote the dump?",
				 st->main_pcs, name);
			console_warn(&r->con, msg);
		}
		r->degraded = true;
	}
	console_clear(&r->con);
	return EXIT_OK;
}

int driver_read_dump(struct driver *r, const char *path, struct profile *one,
		     struct series *ser, size_t k)
{
	if (profile_init(one)) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	struct load_how how = { .ser = ser, .k = k };
	int rc = load(r, one, path, 1, NULL, &how);
	if (rc) {
		profile_release(one);
		profile_init(one);
	}
	return rc;
}

int driver_load(struct driver *r, const char *binary, const char *const *paths,
		size_t npaths, const struct cli *c)
{
	char err[1024];
	struct profile p;
	/* a series: the dumps to load, in order (seriesload.h) */
	struct seriesload sl = { 0 };
	const char *const *all = paths;
	size_t nall = npaths;
	bool values = false;   /* keep each dump's values */
	if (seriesload_kind(c) != SERIESLOAD_NONE) {
		int prc = seriesload_plan(r, c, paths, npaths, &sl);
		if (prc) {
			seriesload_release(&sl);
			return prc;
		}
		paths = sl.paths;
		npaths = sl.n;
		values = sl.kind != SERIESLOAD_PEAK;
	}
	if (profile_init(&p)) {
		fprintf(stderr, "jheap: out of memory\n");
		seriesload_release(&sl);
		return EXIT_DATA;
	}
	/* the names reports give the profiles (load()) */
	char **shown = calloc(npaths + 1, sizeof(*shown));
	if (!shown) {
		fprintf(stderr, "jheap: out of memory\n");
		profile_release(&p);
		seriesload_release(&sl);
		return EXIT_DATA;
	}
	/* each dump's values, kept when the load succeeds */
	struct growth g;
	growth_init(&g);
	g.keep_threads = r->model.series_threads;
	struct perfmap *pm = NULL;
	r->in.remote = (struct remote_options){
		.binary = binary, .seconds = c->seconds, .lib_prefixes = c->lib_prefixes,
		.note = fetch_info, .warn = warn_line, .progress = fetch_progress, .ctx = &r->con,
	};
	char cache_why[1200];
	bool first = !r->sym.open;
	int rc = open_caches(&r->sym, c, cache_why, sizeof(cache_why));
	if (rc)
		goto out;
	if (first && !c->no_symbolize && binary) {
		r->sym.pre_sc = r->sym.sc;
		r->sym.pre_dc = r->sym.dc;
		r->sym.pre_binary = binary;
	}
	struct symbolize_options so;
	struct symbolize_stats st;
	bool streamed = false;
	rc = symbolize_setup(r, binary, paths, npaths, c, &so, &pm);
	if (!rc)
		rc = parse_all(r, &p, paths, npaths, shown, c, &sl.ser, values ? &g : NULL, &so, &st,
			       &streamed);
	/* names from the server of the first URL, for files not here */
	const char *url = rc || binary || c->no_symbolize ? NULL
		: remote_first_url(paths, npaths, (const char *const *)c->bases, c->nbases);
	if (url && remote_symbols(&p, url, &r->in.remote, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		rc = EXIT_DATA;
	}
	/* each file's values are bounded as it is read; so are their sums,
	 * so that no report prints a wrapped number */
	if (!rc && profile_check_magnitude(&p, 0x1p62, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		rc = EXIT_DATA;
	}
	if (rc)
		goto out;
	driver_stage_done(r, "parse");
	if (cache_why[0])
		console_warn(&r->con, cache_why);
	if ((rc = add_libs(&r->con, &p, c)))
		goto out;
	if (driver_value_missing(&p, c->value, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		rc = EXIT_DATA;
		goto out;
	}
	if ((rc = symbolize_model(r, &p, binary, c, values ? &g : NULL, &so, &st, streamed)))
		goto out;
	perfmap_free(pm);
	/* the new model replaces the one before */
	aggcache_clear(&r->aggs);
	if (r->model.loaded)
		profile_release(&r->model.p);
	r->model.p = p;
	r->model.loaded = true;
	r->model.ranges = so.ranges;
	r->model.by_address = c->gran == GRAN_ADDRESSES;
	r->in.binary = binary;
	free_shown(&r->in);
	r->in.shown_paths = shown;
	r->in.nbases = c->nbases;
	r->out.noted = c->no_symbolize;
	/* the series now loaded, with each dump's totals */
	seriesload_release(&r->model.sl);
	r->model.sl = sl;
	r->model.loaded_kind = sl.kind;
	r->in.paths = all;
	r->in.npaths = nall;
	growth_release(&r->model.g);
	r->model.g = g;
	r->model.growth = c->growth ? &r->model.g : NULL;
	if (values) {
		series_totals(&r->model.sl.ser, &r->model.g);
		r->model.g.series = &r->model.sl.ser;
		r->model.g.left = &r->model.sl.left;
	}
	/* one dump taken at exit */
	struct dumpname dn;
	dumpname_parse(npaths == 1 ? paths[0] : "", &dn);
	r->model.exit_dump = npaths == 1 && !c->nbases && dn.jemalloc && dn.kind == 'f';
	r->model.exit_noted = false;
	r->model.exit_path = r->model.exit_dump ? paths[0] : NULL;
	r->model.has_leak = r->model.exit_dump && leaksum_find(paths[0], &r->model.leak) == 1;
	return EXIT_OK;
out:
	perfmap_free(pm);
	growth_release(&g);
	seriesload_release(&sl);
	for (size_t i = 0; i < npaths; i++)
		free(shown[i]);
	free(shown);
	profile_release(&p);
	return rc;
}

int driver_reload(struct driver *d, const struct cli *o)
{
	/* the function ranges stay; O's mode stays too (a timeline loads
	 * a series) */
	bool want = d->model.want_ranges;
	d->model.want_ranges = want || d->model.ranges;
	int rc = driver_load(d, d->in.binary, d->in.paths, d->in.npaths, o);
	d->model.want_ranges = want;
	return rc;
}

const struct profile *driver_profile(const struct driver *d)
{
	return d->model.loaded ? &d->model.p : NULL;
}

bool driver_needs_ranges(const struct cli *o)
{
	return o->mode == MODE_DISASM || o->mode == MODE_WEBLIST;
}

bool driver_loaded_for(const struct driver *d, const struct cli *o)
{
	enum seriesload_kind k = seriesload_kind(o);
	/* the dumps of a timeline, all of them, serve a plain report too */
	bool dumps = d->model.loaded_kind == k ||
		     (k == SERIESLOAD_NONE && d->model.loaded_kind == SERIESLOAD_ALL);
	return d->model.loaded && dumps && d->in.nbases == o->nbases &&
	       (d->model.ranges || !driver_needs_ranges(o)) &&
	       d->model.by_address == (o->gran == GRAN_ADDRESSES);
}

/* The format of mode M (MODE_SYMBOLS is no report: run_symbols). */
static enum report_format format_of(enum output_mode m)
{
	switch (m) {
	case MODE_TEXT: case MODE_SYMBOLS: return REPORT_TEXT;
	case MODE_COLLAPSED: return REPORT_COLLAPSED;
	case MODE_FLAMEGRAPH: return REPORT_FLAMEGRAPH;
	case MODE_DOT: return REPORT_DOT;
	case MODE_SVG: case MODE_WEB: return REPORT_SVG;
	case MODE_PDF: return REPORT_PDF;
	case MODE_PNG: return REPORT_PNG;
	case MODE_GIF: return REPORT_GIF;
	case MODE_PS: return REPORT_PS;
	case MODE_PROTO: return REPORT_PROTO;
	case MODE_SPEEDSCOPE: return REPORT_SPEEDSCOPE;
	case MODE_CALLGRIND: return REPORT_CALLGRIND;
	case MODE_RAW: return REPORT_RAW;
	case MODE_LIST: return REPORT_LIST;
	case MODE_DISASM: return REPORT_DISASM;
	case MODE_TRACES: return REPORT_TRACES;
	case MODE_TREE: return REPORT_TREE;
	case MODE_WEBLIST: return REPORT_WEBLIST;
	case MODE_TIMELINE: return REPORT_TIMELINE;
	case MODE_JSON_TOP: return REPORT_JSON_TOP;
	case MODE_JSON_FLAME: return REPORT_JSON_FLAME;
	}
	return REPORT_TEXT;
}

/* Prints "jheap: MSG" unless --quiet. */
static void hint_line(void *ctx, const char *msg)
{
	console_info(ctx, msg);
}

/* report.note: jeprof's lines beside a report, unless --quiet. */
static void report_note(void *ctx, const char *line)
{
	console_line(ctx, line);
}

static int report_one(struct driver *r, const struct cli *c, const struct profile *p,
		      const char *thread, const int64_t *uid, FILE *out);

/* "t3" or "t3 NAME": how reports name thread T. */
static void thread_label(const struct profile *p, const struct pf_thread *t, char *buf,
			 size_t len)
{
	const char *name = strtab_get(&p->strs, t->name);
	snprintf(buf, len, "t%lld%s%s", (long long)t->uid, *name ? " " : "", name);
}

/* --thread=N: one report of thread N's share of the whole profile, a
 * view that the aggregate takes from the per-thread values (already net
 * of --base: thread values merge with the base's sign); the model is not
 * touched. */
static int report_thread(struct driver *r, const struct cli *c, const struct profile *p,
			 FILE *out)
{
	int64_t uid = strtoll(c->thread, NULL, 10);
	for (size_t i = 0; i < p->nthreads; i++) {
		if (p->threads[i].uid != uid)
			continue;
		char label[300];
		thread_label(p, &p->threads[i], label, sizeof(label));
		return report_one(r, c, p, label, &uid, out);
	}
	fprintf(stderr, "jheap: the profile has no thread %s (%zu threads%s)\n", c->thread,
		p->nthreads, p->nthreads ? "; try --thread='*'" : "");
	return EXIT_DATA;
}

/* --thread='*': one report per thread, each from a small profile of the
 * thread's own (analyzer/threadview.h: linear in threads). */
static int report_threads(struct driver *r, const struct cli *c, const struct profile *p,
			  FILE *out)
{
	struct threadview tv;
	if (threadview_init(&tv, p, NULL)) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	int rc = EXIT_OK;
	if (!tv.n) {
		fprintf(stderr, "jheap: the profile has no thread %s (%zu threads%s)\n", c->thread,
			p->nthreads, p->nthreads ? "; try --thread='*'" : "");
		rc = EXIT_DATA;
	}
	for (size_t k = 0; k < tv.n && rc == EXIT_OK; k++) {
		char label[300];
		thread_label(p, &p->threads[tv.ids[k]], label, sizeof(label));
		if (k && (c->mode == MODE_TEXT || c->mode == MODE_TREE))
			fputc('\n', out);
		struct profile one;
		rc = threadview_build(&tv, k, &one) ? (fprintf(stderr, "jheap: out of memory\n"), EXIT_DATA)
						    : report_one(r, c, &one, label, NULL, out);
		profile_release(&one);
	}
	threadview_release(&tv);
	return rc;
}

/* Without --thread, one report of the whole profile; else one of a
 * thread's share, or one per thread. */
static int report(struct driver *r, const struct cli *c, const struct profile *p, FILE *out)
{
	if (!c->thread)
		return report_one(r, c, p, NULL, NULL, out);
	if (!strcmp(c->thread, "*"))
		return report_threads(r, c, p, out);
	return report_thread(r, c, p, out);
}

/* The program's name as reports show it: BINARY as typed, else the main
 * executable from the dump, else a symbolized profile's "binary=". */
static const char *program_name(const struct profile *p, const char *binary)
{
	if (binary)
		return binary;
	if (p->main_mapping != UINT32_MAX)
		return strtab_get(&p->strs, p->maps[p->main_mapping].path);
	return strtab_get(&p->strs, p->presym_binary);
}

/* One report of P (the model, or a thread's profile of --thread='*')
 * labelled THREAD; with UID, of that thread's share of the model. */
static int report_one(struct driver *r, const struct cli *c, const struct profile *p,
		      const char *thread, const int64_t *uid, FILE *out)
{
	struct agg_options ao = {
		.value = c->value, .gran = c->gran, .full_names = c->full_names,
		.keep_allocator = c->keep_allocator, .focus = c->focus, .ignore = c->ignore,
		.retain = c->retain, .exclude = c->exclude, .allocator = c->allocator,
		.tagfocus = c->tagfocus, .tagignore = c->tagignore,
		.one_thread = uid != NULL, .thread_uid = uid ? *uid : 0,
		.series = c->series_view ? &r->model.g : NULL, .dump = c->series_dump,
		.dump_diff = c->series_diff, .base_dump = c->series_base,
	};
	struct aggregate own, *a = &own, *kept;
	bool cacheable = p == &r->model.p && (!r->model.growth || c->series_view);
	if (cacheable && (kept = aggcache_find(&r->aggs, &ao))) {
		a = kept;
		if (aggregate_sort(a, c->cum)) {
			fprintf(stderr, "jheap: out of memory\n");
			return EXIT_DATA;
		}
	} else {
		int brc = aggregate_build(a, p, &ao);
		if (brc || aggregate_sort(a, c->cum)) {
			fprintf(stderr, "jheap: %s\n", brc == JH_EUSAGE || brc == JH_ELIMIT ? a->errmsg : "out of memory");
			aggregate_release(a);
			return brc == JH_EUSAGE ? EXIT_USAGE : EXIT_DATA;
		}
	}
	driver_stage_done(r, "aggregate");
	/* of the model (a thread's share too), not of each thread of '*' */
	bool hints = p == &r->model.p;
	if (hints)
		hints_patterns(a, c, r->out.in_shell, hint_line, &r->con);
	if (!r->out.disasm_cache && driver_needs_ranges(c))
		r->out.disasm_cache = disasm_cache_new();   /* NULL: objdump runs each time */
	/* once per model: which stripped objects hold unnamed code */
	if (!r->out.noted && unnamed_notes(p, a, c->value, r->sym.sc, note_line, &r->con) >= 0)
		r->out.noted = true;
	struct report rep = {
		.p = p, .a = a, .value = c->value, .units = text_units(c->value, c->show_bytes),
		.gran = c->gran, .full_names = c->full_names, .keep_allocator = c->keep_allocator,
		.diff = r->in.nbases > 0 || c->series_diff, .no_symbolize = c->no_symbolize,
		.nodecount = c->nodecount, .nodefraction = c->nodefraction,
		.edgefraction = c->edgefraction, .maxdegree = c->maxdegree,
		.program = program_name(p, r->in.binary),
		.profile_paths = (const char *const *)r->in.shown_paths,
		.thread = thread, .list = c->list, .disasm = c->disasm, .peek = c->peek,
		.weblist = c->weblist, .growth = r->model.growth && !c->series_view, .cum = c->cum,
		.series = c->mode == MODE_TEXT && !c->series_view ? r->model.growth
			: c->mode == MODE_TIMELINE && r->model.loaded_kind == SERIESLOAD_ALL ? &r->model.g : NULL,
		.dumps = r->model.loaded_kind == SERIESLOAD_ALL ? &r->model.sl.ser : NULL,
		.nodefraction_set = c->nodefraction_set,
		.source_dirs = (const char *const *)c->source_dirs,
		.disasm_cache = r->out.disasm_cache, .note = report_note, .warn = warn_line,
		.ctx = &r->con,
	};
	char err[1024] = "";
	int rc = EXIT_OK;
	if (c->mode != MODE_SYMBOLS) {
		int wrc = report_write(out, format_of(c->mode), &rep, err, sizeof(err));
		if (wrc) {
			fprintf(stderr, "jheap: %s\n", err);
			rc = wrc == JH_EUSAGE ? EXIT_USAGE : EXIT_DATA;
		}
	}
	if (hints && rc == EXIT_OK && c->mode != MODE_SYMBOLS && c->mode != MODE_RAW && !fflush(out) &&
	    hints_wrappers(p, a, c, r->in.nbases > 0, r->out.in_shell, hint_line, &r->con))
		rc = (fprintf(stderr, "jheap: out of memory\n"), EXIT_DATA);
	if (a == &own) {
		if (cacheable)
			aggcache_keep(&r->aggs, a, &ao);
		else
			aggregate_release(a);
	}
	return rc;
}

int driver_write(struct driver *d, const struct cli *o, FILE *out)
{
	char err[512];
	if (cli_check_report(o, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		return EXIT_USAGE;
	}
	if (!d->model.loaded) {
		fprintf(stderr, "jheap: no profile is loaded\n");
		return EXIT_DATA;
	}
	int rc = report(d, o, &d->model.p, out);
	/* a dump at exit: what it shows was never freed */
	const struct driver_model *m = &d->model;
	bool inuse = o->value == PF_INUSE_SPACE || o->value == PF_INUSE_OBJECTS;
	if (rc == EXIT_OK && m->exit_dump && inuse && o->mode == MODE_TEXT) {
		output_exit_note(out, m->exit_path, m->has_leak ? &m->leak : NULL, false);
	} else if (rc == EXIT_OK && m->exit_dump && inuse && !m->exit_noted && !d->con.quiet &&
		   o->mode != MODE_TIMELINE) {
		console_clear(&d->con);
		output_exit_note(stderr, m->exit_path, m->has_leak ? &m->leak : NULL, true);
		d->model.exit_noted = true;
	}
	driver_stage_done(d, "write");
	return rc;
}

int driver_write_file(struct driver *d, const struct cli *o, const char *path)
{
	char err[1200];
	struct outfile of;
	if (output_is_input(o, path)) {
		fprintf(stderr, "jheap: refusing to write the report over the input '%s'\n", path);
		return EXIT_USAGE;
	}
	if (outfile_open(&of, path, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		return EXIT_DATA;
	}
	int rc = driver_write(d, o, of.f);
	/* PATH is replaced only by a whole report */
	if (rc == EXIT_OK && outfile_commit(&of, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		rc = EXIT_DATA;
	} else if (rc != EXIT_OK) {
		outfile_abort(&of);
	}
	return rc;
}

int driver_show(struct driver *d, const struct cli *o, const char *path)
{
	char tmp[4096], err[1024];
	int rc;
	if (path) {
		rc = driver_write_file(d, o, path);
	} else {
		const char *suffix = o->mode == MODE_WEBLIST ? "html" : "svg";
		int fd = browser_temp_file(suffix, tmp, sizeof(tmp), err, sizeof(err));
		FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!out) {
			if (fd >= 0)
				close(fd);
			fprintf(stderr, "jheap: %s\n", fd < 0 ? err : strerror(errno));
			return EXIT_DATA;
		}
		rc = driver_write(d, o, out);
		if (fclose(out) && !rc) {
			fprintf(stderr, "jheap: cannot write '%s': %s\n", tmp, strerror(errno));
			rc = EXIT_DATA;
		}
		path = tmp;
	}
	if (rc)
		return rc;
	if (!d->con.quiet)
		fprintf(stderr, "jheap: opening %s\n", path);
	if (browser_open(path, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		return EXIT_DATA;
	}
	return EXIT_OK;
}

void driver_release(struct driver *d)
{
	if (d->sym.open) {
		diskcache_free(d->sym.dc);
		symcache_free(d->sym.sc);
	}
	d->sym = (struct driver_symbols){ 0 };
	growth_release(&d->model.g);
	d->model.growth = NULL;
	forks_release(&d->in.forks);
	seriesload_release(&d->model.sl);
	d->model.loaded_kind = SERIESLOAD_NONE;
	aggcache_clear(&d->aggs);
	disasm_cache_free(d->out.disasm_cache);
	d->out.disasm_cache = NULL;
	if (d->model.loaded)
		profile_release(&d->model.p);
	d->model.loaded = false;
	free_shown(&d->in);
	driver_stage_done(d, "free");
}
