/* The stages of a run: load once (parse, merge, symbolize), then write any
 * number of reports from the model in memory (see driver.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/aggregate.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "analyzer/merge.h"
#include "analyzer/parse.h"
#include "analyzer/threadview.h"
#include "cli/addlib.h"
#include "cli/browser.h"
#include "cli/driver.h"
#include "cli/fleet.h"
#include "cli/inlabels.h"
#include "cli/remote.h"
#include "cli/url.h"
#include "output/disasm.h"
#include "output/outfile.h"
#include "output/report.h"
#include "symbolize/symbolize.h"
#include "symbolize/unnamed.h"

static void drop_cached(struct driver *r);

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

bool driver_debug_on(const char *what)
{
	const char *d = getenv("JHEAP_DEBUG");
	return d && strstr(d, what);
}

void driver_init(struct driver *d)
{
	d->tty = isatty(STDERR_FILENO);
	const char *after = getenv("JHEAP_PROGRESS_AFTER");
	d->progress_after = after && *after ? atof(after) : 1.0;
	clock_gettime(CLOCK_MONOTONIC, &d->start);
	d->mark = d->start;
	d->progress_from = d->start;
	d->debug_time = driver_debug_on("time");
}

static double cpu_seconds(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
	       (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

/* JHEAP_DEBUG=time: the wall time since the previous stage ended, and
 * the CPU time (all threads) and minor page faults it took. */
void driver_stage_done(struct driver *r, const char *what)
{
	if (!r->debug_time)
		return;
	struct timespec now;
	struct rusage ru;
	clock_gettime(CLOCK_MONOTONIC, &now);
	getrusage(RUSAGE_SELF, &ru);
	double cpu = cpu_seconds(&ru);
	fprintf(stderr, "jheap: time: %-10s %8.3f s (%.3f s in all), cpu %.3f s, %ld page faults\n",
		what, seconds_between(&r->mark, &now), seconds_between(&r->start, &now),
		cpu - r->mark_cpu, ru.ru_minflt - r->mark_flt);
	r->mark = now;
	r->mark_cpu = cpu;
	r->mark_flt = ru.ru_minflt;
}

void driver_mark(struct driver *r)
{
	struct rusage ru;
	clock_gettime(CLOCK_MONOTONIC, &r->mark);
	r->progress_from = r->mark;
	getrusage(RUSAGE_SELF, &ru);
	r->mark_cpu = cpu_seconds(&ru);
	r->mark_flt = ru.ru_minflt;
}

static void progress_clear(struct driver *r)
{
	if (r->shown) {
		fputs("\r\033[K", stderr);
		r->shown = false;
	}
}

__attribute__((format(printf, 2, 3)))
static void progress_show(struct driver *r, const char *fmt, ...)
{
	if (!r->tty || r->cli.quiet)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&r->progress_from, &now) < r->progress_after)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("\r\033[Kjheap: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	r->shown = true;
}

void driver_progress(struct driver *r, const char *fmt, ...)
{
	if (!r->tty || r->cli.quiet)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&r->progress_from, &now) < r->progress_after)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("\r\033[Kjheap: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	r->shown = true;
}

void driver_progress_clear(struct driver *r)
{
	progress_clear(r);
}

static void parse_progress(void *ctx, const char *name, size_t done, size_t total)
{
	progress_show(ctx, "parsing %s: %zu of %zu MB", name, done >> 20, total >> 20);
}

static void symbolize_progress(void *ctx, size_t modules, size_t done, size_t total)
{
	progress_show(ctx, "symbolizing: %zu of %zu addresses (%zu objects)", done, total, modules);
}

/* Prints "jheap: MSG" unless --quiet: what a fetch did. */
static void info_cb(void *ctx, const char *msg)
{
	struct driver *r = ctx;
	progress_clear(r);
	if (!r->cli.quiet)
		fprintf(stderr, "jheap: %s\n", msg);
}

static void fetch_progress(void *ctx, const char *what)
{
	progress_show(ctx, "%s", what);
}

/* Prints "jheap: note: MSG" unless --quiet. */
static void note_line(void *ctx, const char *msg)
{
	struct driver *r = ctx;
	progress_clear(r);
	if (!r->cli.quiet)
		fprintf(stderr, "jheap: note: %s\n", msg);
}

/* A BINARY given with a symbolized profile: the profile's names win. */
static void note_presym(struct driver *r, const char *binary)
{
	if (r->cli.quiet)
		return;
	progress_clear(r);
	fprintf(stderr, "jheap: note: the profile is symbolized: the names in it are used, '%s' only names the addresses it leaves unknown\n",
		binary);
}

void driver_warn(void *ctx, const char *msg)
{
	struct driver *r = ctx;
	progress_clear(r);
	if (r->cli.quiet)
		return;
	/* a warning quotes the input: one line, no terminal escapes */
	fputs("jheap: warning: ", stderr);
	escape_fputs(msg, false, stderr);
	fputc('\n', stderr);
}

void driver_note(void *ctx, const char *msg)
{
	struct driver *r = ctx;
	progress_clear(r);
	fprintf(stderr, "jheap: cache: %s\n", msg);
}

/* The persistent symbol cache, or NULL when --no-cache, --no-symbolize or
 * when the folder cannot be used: then WHY says so (else it is ""), for a
 * warning the caller gives when it is time (the run goes on). */
static struct diskcache *open_cache_quiet(struct driver *r, const struct symcache *sc,
					  char *why, size_t whylen)
{
	const struct cli *c = &r->cli;
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
	struct diskcache *dc = open_cache_quiet(r, sc, why, sizeof(why));
	if (why[0])
		driver_warn(r, why);
	return dc;
}

/* parse_options.core_idle: the parse has a core to spare from now on. */
static void core_idle(void *ctx)
{
	struct driver *r = ctx;
	if (r->pre_sc && !r->pre)
		r->pre = symbolize_preload_start(r->pre_sc, r->pre_dc, r->pre_binary);
}

static const char *program_name(const struct profile *p, const char *binary);

static void free_shown(struct driver *r)
{
	for (size_t i = 0; r->shown_paths && r->shown_paths[i]; i++)
		free(r->shown_paths[i]);
	free(r->shown_paths);
	r->shown_paths = NULL;
}

/* Reads PATH (a file, "-" or a URL) and merges it into DST with SIGN.
 * *SHOWN, when SHOWN is not NULL, gets the name reports give PATH: a
 * URL's saved copy (which --raw reads again), or the URL without user
 * information when it was not saved; else PATH; malloc'd. */
static int load(struct driver *r, struct profile *dst, const char *path, double sign,
		char **shown, struct inlabels *il, size_t index, bool skip)
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
		? remote_load(&one, path, &r->remote, &po, saved, sizeof(saved), err, sizeof(err))
		: parse_file(&one, strcmp(path, "-") ? path : "/dev/stdin", &po, err, sizeof(err));
	progress_clear(r);
	if (truncated)
		r->degraded = true;   /* the report is of what the file holds: exit status 1 */
	if (rc && skip && rc != JH_ENOMEM) {
		/* one of several: the report is of the others (cli/fleet.h) */
		char msg[1200];
		snprintf(msg, sizeof(msg), "skipping %s (--strict stops here instead)", err);
		driver_warn(r, msg);
		r->degraded = true;
		profile_release(&one);
		return EXIT_OK;
	}
	if (!rc)
		rc = inlabels_apply(il, sign < 0, index, path, &one, err, sizeof(err));
	if (!rc && shown && !(*shown = strdup(saved[0] ? saved : name)))
		rc = jh_err(err, sizeof(err), JH_ENOMEM, "out of memory");
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
		driver_warn(r, msg);
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
	default: return "--alloc_space";
	}
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
 * for a reload.  Returns 0 or EXIT_DATA. */
static int open_caches(struct driver *r, const struct cli *c, char *why, size_t whylen)
{
	why[0] = '\0';
	if (r->caches_open)
		return EXIT_OK;
	r->sc = symcache_new(&(struct symcache_options){ .debuginfo_dirs = c->debuginfo_dirs });
	if (!r->sc) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	r->dc = open_cache_quiet(r, r->sc, why, whylen);
	r->caches_open = true;
	return EXIT_OK;
}

/* The symbolizer's options for a load, and the names of JIT code in *PM
 * (--perf-map, else the first dump's own perf map).  Returns an exit
 * status. */
static int symbolize_setup(struct driver *r, const char *binary, const char *const *paths,
			   size_t npaths, const struct cli *c, struct symbolize_options *so,
			   struct perfmap **pm)
{
	char err[1024];
	*so = (struct symbolize_options){
		.binary = binary, .lib_prefixes = c->lib_prefixes,
		.cache = r->dc, .note = driver_debug_on("cache") ? driver_note : NULL,
		.no_symbolize = c->no_symbolize, .warn = driver_warn, .ctx = r,
		.progress = symbolize_progress,
		.symcache_opts = { .debuginfo_dirs = c->debuginfo_dirs },
		.ranges = driver_needs_ranges(c) || r->want_ranges,
	};
	*pm = NULL;
	if (!c->no_symbolize && c->perf_map &&
	    perfmap_open(c->perf_map, (uid_t)-1, pm, err, sizeof(err))) {
		fprintf(stderr, "jheap: --perf-map: %s\n", err);
		return EXIT_DATA;
	}
	if (!c->no_symbolize && !c->perf_map && npaths && !remote_is_url(paths[0])) {
		char why[1200];
		if (perfmap_for_dump(paths[0], pm, why, sizeof(why)) == JH_ENOMEM) {
			fprintf(stderr, "jheap: out of memory\n");
			return EXIT_DATA;
		}
		if (why[0])
			driver_warn(r, why);
	}
	so->perfmap = *pm;
	return EXIT_OK;
}

int driver_load(struct driver *r, const char *binary, const char *const *paths,
		size_t npaths, const struct cli *c)
{
	char err[1024];
	struct profile p;
	struct perfmap *pm = NULL;
	if (profile_init(&p)) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	int rc = EXIT_OK;
	/* the names reports give the profiles (load()) */
	char **shown = calloc(npaths + 1, sizeof(*shown));
	if (!shown) {
		fprintf(stderr, "jheap: out of memory\n");
		profile_release(&p);
		return EXIT_DATA;
	}
	if (c->growth) {
		growth_release(&r->g);
		growth_init(&r->g);
		r->growth = &r->g;
	}
	r->remote = (struct remote_options){
		.binary = binary, .seconds = c->seconds, .lib_prefixes = c->lib_prefixes,
		.note = info_cb, .warn = driver_warn, .progress = fetch_progress, .ctx = r,
	};
	char cache_why[1200];
	bool first = !r->caches_open;
	rc = open_caches(r, c, cache_why, sizeof(cache_why));
	if (rc)
		goto out;
	if (first && !c->no_symbolize && binary) {
		r->pre_sc = r->sc;
		r->pre_dc = r->dc;
		r->pre_binary = binary;
	}
	/* where each input's samples came from (cli/inlabels.h); PATHS[0]
	 * is c->args[args0] when PATHS are the command line's */
	struct inlabels il;
	if (inlabels_init(&il, c, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		rc = EXIT_USAGE;
		goto out;
	}
	size_t args0 = c->nargs;
	for (size_t i = 0; i < c->nargs; i++)
		if (c->args + i == (const char **)paths)
			args0 = i;
	bool skip = fleet_skips(c, npaths);
	struct symbolize_options so;
	rc = symbolize_setup(r, binary, paths, npaths, c, &so, &pm);
	bool streamed = !rc && fleet_wanted(c, paths, npaths);
	struct symbolize_stats st;
	if (streamed)
		rc = fleet_load(r, &p, paths, npaths, args0, c, &il, &so, &st, shown);
	for (size_t i = 0; i < npaths && !rc && !streamed; i++) {
		rc = load(r, &p, paths[i], 1, &shown[i], &il, args0 + i, skip);
		if (!rc && c->growth && growth_snapshot(&r->g, &p)) {
			fprintf(stderr, "jheap: out of memory\n");
			rc = EXIT_DATA;
		}
	}
	for (size_t i = 0; i < c->nbases && !rc && !streamed; i++)
		rc = load(r, &p, c->bases[i], -1, NULL, &il, i, skip);
	inlabels_release(&il);
	/* the names of the profiles read, skipped ones left out */
	size_t nshown = 0;
	for (size_t i = 0; i < npaths; i++)
		if (shown[i])
			shown[nshown++] = shown[i];
	for (size_t i = nshown; i <= npaths; i++)
		shown[i] = NULL;
	if (!rc && !nshown && skip && r->degraded) {
		fprintf(stderr, "jheap: none of the profiles could be read\n");
		rc = EXIT_DATA;
	}
	symbolize_preload_finish(r->pre);
	r->pre = NULL;
	r->pre_sc = NULL;
	/* names from the server of the first URL, for files not here */
	const char *url = rc || binary || c->no_symbolize ? NULL
		: remote_first_url(paths, npaths, (const char *const *)c->bases, c->nbases);
	if (url && remote_symbols(&p, url, &r->remote, err, sizeof(err))) {
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
		driver_warn(r, cache_why);
	for (size_t i = 0; i < c->nadd_libs; i++) {
		size_t moved;
		if (addlib_apply(&p, c->add_libs[i], &moved, err, sizeof(err))) {
			fprintf(stderr, "jheap: %s\n", err);
			rc = EXIT_DATA;
			goto out;
		}
		if (!moved) {
			snprintf(err, sizeof(err), "--add_lib: no address of the profile that a mapping leaves uncovered lies in '%s'",
				 c->add_libs[i]);
			driver_warn(r, err);
		}
	}
	if ((c->value == PF_ALLOC_SPACE || c->value == PF_ALLOC_OBJECTS) && !p.has_alloc &&
	    p.nsamples) {
		fprintf(stderr, "jheap: %s: the profile has no allocation counts (the program ran without MALLOC_CONF=prof_accum:true); use --inuse_space or --inuse_objects\n",
			value_option(c->value));
		rc = EXIT_DATA;
		goto out;
	}
	uint32_t *remap = NULL;
	int src = streamed ? 0 : symbolize_profile(&p, r->sc, &so, &st, err, sizeof(err));
	perfmap_free(pm);
	pm = NULL;
	if (src ||
	    (!streamed && profile_fold_by_symbol(&p, c->gran == GRAN_ADDRESSES, &remap) &&
	     jh_err(err, sizeof(err), JH_ENOMEM, "out of memory")) ||
	    (c->growth && growth_finish(&r->g, &p, remap) && jh_err(err, sizeof(err), JH_ENOMEM, "out of memory"))) {
		fprintf(stderr, "jheap: %s\n", err);
		rc = EXIT_DATA;
		free(remap);
		goto out;
	}
	free(remap);
	driver_stage_done(r, "symbolize");
	if (c->drop_negative)
		drop_negative(&p);
	if (c->growth && c->mode != MODE_TEXT)
		growth_apply(&r->g, &p);
	if (st.binary_mismatch || st.resource_failed)
		r->degraded = true;
	if (binary && st.pcs_presym)
		note_presym(r, binary);
	/* a stripped program that passes the call check is the right one:
	 * a note says how to get its names */
	if (st.main_pcs && !st.main_resolved && !c->no_symbolize && !st.binary_mismatch &&
	    st.main_calls.verdict != CALLCHECK_MATCH && !st.main_stripped) {
		const char *name = binary;
		if (p.main_mapping != UINT32_MAX && p.maps[p.main_mapping].object)
			name = strtab_get(&p.strs, p.maps[p.main_mapping].object);
		fprintf(stderr, "jheap: warning: none of the %zu addresses in the main program resolve to a function in '%s': is it the binary that wrote the dump?\n",
			st.main_pcs, name ? name : "?");
		r->degraded = true;
	}
	progress_clear(r);
	/* the new model replaces the one before */
	drop_cached(r);
	if (r->loaded)
		profile_release(&r->p);
	r->p = p;
	r->loaded = true;
	r->binary = binary;
	r->paths = paths;
	r->npaths = npaths;
	free_shown(r);
	r->shown_paths = shown;
	shown = NULL;
	r->nbases = c->nbases;
	r->ranges = so.ranges;
	r->by_address = c->gran == GRAN_ADDRESSES;
	r->noted = c->no_symbolize;
	return EXIT_OK;
out:
	perfmap_free(pm);
	if (shown)
		for (size_t i = 0; i < npaths; i++)
			free(shown[i]);
	free(shown);
	profile_release(&p);
	return rc;
}

bool driver_needs_ranges(const struct cli *o)
{
	return o->mode == MODE_DISASM || o->mode == MODE_WEBLIST;
}

bool driver_loaded_for(const struct driver *d, const struct cli *o)
{
	return d->loaded && d->nbases == o->nbases && (d->ranges || !driver_needs_ranges(o)) &&
	       d->by_address == (o->gran == GRAN_ADDRESSES);
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
	case MODE_JSON_TOP: return REPORT_JSON_TOP;
	case MODE_JSON_FLAME: return REPORT_JSON_FLAME;
	}
	return REPORT_TEXT;
}

/* report.note: jeprof's lines beside a report, unless --quiet. */
static void report_note(void *ctx, const char *line)
{
	struct driver *r = ctx;
	progress_clear(r);
	if (!r->cli.quiet)
		fprintf(stderr, "%s\n", line);
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
	if (c->mode != MODE_TEXT && c->mode != MODE_DOT && c->mode != MODE_COLLAPSED &&
	    c->mode != MODE_CALLGRIND && c->mode != MODE_TRACES && c->mode != MODE_TREE) {
		fprintf(stderr, "jheap: --thread='*' writes one report per thread and works with --text, --traces, --tree, --dot, --collapsed and --callgrind; pick one thread for this format\n");
		return EXIT_USAGE;
	}
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

static bool same_re(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The kept aggregate built with the options of AO, moved to the front,
 * or NULL. */
static struct aggregate *cached_for(struct driver *r, const struct agg_options *ao)
{
	for (size_t i = 0; i < r->naggs; i++) {
		const struct agg_options *k = &r->aggs[i].key;
		if (k->value == ao->value && k->gran == ao->gran && k->full_names == ao->full_names &&
		    k->keep_allocator == ao->keep_allocator && same_re(k->focus, ao->focus) &&
		    same_re(k->ignore, ao->ignore) && same_re(k->retain, ao->retain) &&
		    same_re(k->exclude, ao->exclude) && same_re(k->allocator, ao->allocator) &&
		    same_re(k->tagfocus, ao->tagfocus) && same_re(k->tagignore, ao->tagignore) &&
		    k->one_thread == ao->one_thread &&
		    (!k->one_thread || k->thread_uid == ao->thread_uid)) {
			struct driver_agg hit = r->aggs[i];
			memmove(r->aggs + 1, r->aggs, i * sizeof(*r->aggs));
			r->aggs[0] = hit;
			return &r->aggs[0].agg;
		}
	}
	return NULL;
}

static void agg_release(struct driver_agg *e)
{
	aggregate_release(&e->agg);
	for (int i = 0; i < 7; i++)
		free(e->res[i]);
}

static void drop_cached(struct driver *r)
{
	for (size_t i = 0; i < r->naggs; i++)
		agg_release(&r->aggs[i]);
	r->naggs = 0;
}

/* The aggregate of the whole model for AO (a thread's share of it too) is
 * kept, in front of the others (the least recently used one goes), so
 * that the shell's next report with the same value, granularity, filters
 * and thread is written without summing again. */
static void keep_cached(struct driver *r, struct aggregate *a, const struct agg_options *ao)
{
	struct driver_agg e = { .agg = *a, .key = *ao };
	const char *res[7] = { ao->focus, ao->ignore, ao->retain, ao->exclude, ao->allocator,
			       ao->tagfocus, ao->tagignore };
	for (int i = 0; i < 7; i++)
		if (res[i] && !(e.res[i] = strdup(res[i]))) {
			agg_release(&e);
			return;
		}
	e.key.focus = e.res[0];
	e.key.ignore = e.res[1];
	e.key.retain = e.res[2];
	e.key.exclude = e.res[3];
	e.key.allocator = e.res[4];
	e.key.tagfocus = e.res[5];
	e.key.tagignore = e.res[6];
	if (r->naggs == DRIVER_AGGS)
		agg_release(&r->aggs[--r->naggs]);
	memmove(r->aggs + 1, r->aggs, r->naggs * sizeof(*r->aggs));
	r->aggs[0] = e;
	r->naggs++;
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
	};
	struct aggregate own, *a = &own, *kept;
	bool cacheable = p == &r->p && !r->growth;
	if (cacheable && (kept = cached_for(r, &ao))) {
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
	if (!r->disasm_cache && driver_needs_ranges(c))
		r->disasm_cache = disasm_cache_new();   /* NULL: objdump runs each time */
	/* once per model: which stripped objects hold unnamed code */
	if (!r->noted && unnamed_notes(p, a, c->value, r->sc, note_line, r) >= 0)
		r->noted = true;
	struct report rep = {
		.p = p, .a = a, .value = c->value, .units = text_units(c->value, c->show_bytes),
		.gran = c->gran, .full_names = c->full_names, .keep_allocator = c->keep_allocator,
		.diff = r->nbases > 0, .no_symbolize = c->no_symbolize,
		.nodecount = c->nodecount, .nodefraction = c->nodefraction,
		.edgefraction = c->edgefraction, .maxdegree = c->maxdegree,
		.program = program_name(p, r->binary), .profile_paths = (const char *const *)r->shown_paths,
		.thread = thread, .list = c->list, .disasm = c->disasm, .peek = c->peek,
		.weblist = c->weblist, .growth = r->growth != NULL,
		.series = c->mode == MODE_TEXT ? r->growth : NULL,
		.nodefraction_set = c->nodefraction_set,
		.source_dirs = (const char *const *)c->source_dirs,
		.disasm_cache = r->disasm_cache, .note = report_note, .ctx = r,
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
	if (a == &own) {
		if (cacheable)
			keep_cached(r, a, &ao);
		else
			aggregate_release(a);
	}
	return rc;
}

int driver_write(struct driver *d, const struct cli *o, FILE *out)
{
	if (!d->loaded) {
		fprintf(stderr, "jheap: no profile is loaded\n");
		return EXIT_DATA;
	}
	int rc = report(d, o, &d->p, out);
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
	if (!d->cli.quiet)
		fprintf(stderr, "jheap: opening %s\n", path);
	if (browser_open(path, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		return EXIT_DATA;
	}
	return EXIT_OK;
}

void driver_release(struct driver *d)
{
	if (d->caches_open) {
		diskcache_free(d->dc);
		symcache_free(d->sc);
	}
	d->dc = NULL;
	d->sc = NULL;
	d->caches_open = false;
	growth_release(&d->g);
	d->growth = NULL;
	drop_cached(d);
	disasm_cache_free(d->disasm_cache);
	d->disasm_cache = NULL;
	if (d->loaded)
		profile_release(&d->p);
	d->loaded = false;
	free_shown(d);
	driver_stage_done(d, "free");
}
