/* The load stage of a run: the profiles parsed (fetched first when they
 * are URLs), labelled and merged, the symbol caches opened beside the
 * parse, the model symbolized and folded by symbol, once; many profiles
 * streamed instead (cli/fleet.h).  driver.h declares it (driver_load(),
 * driver_reload(), driver_read_dump(), ...); cli/driver.c writes the
 * reports from the model made here. */
#include <stdlib.h>

#include "analyzer/aggcache.h"
#include "analyzer/forks.h"
#include "analyzer/merge.h"
#include "analyzer/parse.h"
#include "cli/console.h"
#include "cli/driver.h"
#include "cli/fleet.h"
#include "cli/hints.h"
#include "cli/inlabels.h"
#include "cli/load.h"
#include "cli/remote.h"
#include "cli/url.h"
#include "lib/errors.h"
#include "symbolize/addlib.h"
#include "symbolize/symbolize.h"

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

void driver_free_shown(struct driver_inputs *in)
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
	hints_forks(&r->in.forks, driver_note_line, &r->con);
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
	const char *was = driver_program_name(dst, NULL), *base = driver_program_name(&one, NULL);
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
		.no_symbolize = c->no_symbolize, .warn = driver_warn_line, .ctx = &r->con,
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
		.note = fetch_info, .warn = driver_warn_line, .progress = fetch_progress, .ctx = &r->con,
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
	driver_free_shown(&r->in);
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
