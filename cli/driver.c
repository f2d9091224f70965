/* The write stage of a run: any number of reports written from the model
 * in memory that the load stage (cli/load.c) made once; and the driver's
 * life cycle and console callbacks (see driver.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/aggcache.h"
#include "analyzer/aggregate.h"
#include "analyzer/forks.h"
#include "analyzer/threadview.h"
#include "cli/browser.h"
#include "cli/console.h"
#include "cli/driver.h"
#include "cli/hints.h"
#include "cli/load.h"
#include "lib/errors.h"
#include "output/disasm.h"
#include "output/outfile.h"
#include "output/report.h"
#include "output/timeline.h"
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

void driver_note_line(void *ctx, const char *msg)
{
	console_note(ctx, msg);
}

void driver_warn_line(void *ctx, const char *msg)
{
	console_warn(ctx, msg);
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

const char *driver_program_name(const struct profile *p, const char *binary)
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
	if (!r->out.noted && unnamed_notes(p, a, c->value, r->sym.sc, driver_note_line, &r->con) >= 0)
		r->out.noted = true;
	struct report rep = {
		.p = p, .a = a, .value = c->value, .units = text_units(c->value, c->show_bytes),
		.gran = c->gran, .full_names = c->full_names, .keep_allocator = c->keep_allocator,
		.diff = r->in.nbases > 0 || c->series_diff, .no_symbolize = c->no_symbolize,
		.nodecount = c->nodecount, .nodefraction = c->nodefraction,
		.edgefraction = c->edgefraction, .maxdegree = c->maxdegree,
		.program = driver_program_name(p, r->in.binary),
		.profile_paths = (const char *const *)r->in.shown_paths,
		.thread = thread, .list = c->list, .disasm = c->disasm, .peek = c->peek,
		.weblist = c->weblist, .growth = r->model.growth && !c->series_view, .cum = c->cum,
		.series = c->mode == MODE_TEXT && !c->series_view ? r->model.growth
			: c->mode == MODE_TIMELINE && r->model.loaded_kind == SERIESLOAD_ALL ? &r->model.g : NULL,
		.dumps = r->model.loaded_kind == SERIESLOAD_ALL ? &r->model.sl.ser : NULL,
		.nodefraction_set = c->nodefraction_set,
		.source_dirs = (const char *const *)c->source_dirs,
		.disasm_cache = r->out.disasm_cache, .note = report_note, .warn = driver_warn_line,
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
	driver_free_shown(&d->in);
	driver_stage_done(d, "free");
}
