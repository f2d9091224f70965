/* jheap's entry point: the only place that prints errors and picks the exit
 * status (0 ok, 1 data error or degraded result, 2 usage error). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <math.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/aggregate.h"
#include "analyzer/cli.h"
#include "analyzer/growth.h"
#include "analyzer/parse.h"
#include "analyzer/profile.h"
#include "analyzer/threadview.h"
#include "analyzer/util.h"
#include "cli/fdlimit.h"
#include "cli/sigbus.h"
#include "output/outfile.h"
#include "output/output.h"
#include "output/text.h"
#include "symbolize/maps.h"
#include "symbolize/symbolize.h"

#ifndef JHEAP_VERSION
#define JHEAP_VERSION "0.1.0"
#endif

enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };

struct run {
	struct cli cli;
	bool degraded;
	/* the progress line: only on a terminal, after a second, not --quiet */
	bool tty, shown;
	struct timespec start;
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
};

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

/* JHEAP_DEBUG=time: the wall time since the previous stage ended, and
 * the CPU time (all threads) and minor page faults it took. */
static void stage_done(struct run *r, const char *what)
{
	if (!r->debug_time)
		return;
	struct timespec now;
	struct rusage ru;
	clock_gettime(CLOCK_MONOTONIC, &now);
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	fprintf(stderr, "jheap: time: %-10s %8.3f s (%.3f s in all), cpu %.3f s, %ld page faults\n",
		what, seconds_between(&r->mark, &now), seconds_between(&r->start, &now),
		cpu - r->mark_cpu, ru.ru_minflt - r->mark_flt);
	r->mark = now;
	r->mark_cpu = cpu;
	r->mark_flt = ru.ru_minflt;
}

static void progress_clear(struct run *r)
{
	if (r->shown) {
		fputs("\r\033[K", stderr);
		r->shown = false;
	}
}

__attribute__((format(printf, 2, 3)))
static void progress_show(struct run *r, const char *fmt, ...)
{
	if (!r->tty || r->cli.quiet)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&r->start, &now) < r->progress_after)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("\r\033[Kjheap: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	r->shown = true;
}

static void parse_progress(void *ctx, const char *name, size_t done, size_t total)
{
	progress_show(ctx, "parsing %s: %zu of %zu MB", name, done >> 20, total >> 20);
}

static void symbolize_progress(void *ctx, size_t modules, size_t done, size_t total)
{
	progress_show(ctx, "symbolizing: %zu of %zu addresses (%zu objects)", done, total, modules);
}

static void warn_cb(void *ctx, const char *msg)
{
	struct run *r = ctx;
	progress_clear(r);
	if (r->cli.quiet)
		return;
	/* a warning quotes the input: one line, no terminal escapes */
	fputs("jheap: warning: ", stderr);
	escape_fputs(msg, false, stderr);
	fputc('\n', stderr);
}

/* JHEAP_DEBUG=cache: what the persistent symbol cache did, per object. */
static void note_cb(void *ctx, const char *msg)
{
	struct run *r = ctx;
	progress_clear(r);
	fprintf(stderr, "jheap: cache: %s\n", msg);
}

/* The persistent symbol cache, or NULL when --no-cache, --no-symbolize or
 * when the folder cannot be used: then WHY says so (else it is ""), for a
 * warning the caller gives when it is time (the run goes on). */
static struct diskcache *open_cache_quiet(struct run *r, const struct symcache *sc,
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

/* open_cache_quiet(), warning at once. */
static struct diskcache *open_cache(struct run *r, const struct symcache *sc)
{
	char why[1200];
	struct diskcache *dc = open_cache_quiet(r, sc, why, sizeof(why));
	if (why[0])
		warn_cb(r, why);
	return dc;
}

static bool debug_on(const char *what)
{
	const char *d = getenv("JHEAP_DEBUG");
	return d && strstr(d, what);
}

/* 1 when PATH starts with the ELF magic, 0 when not, -1 (errno set) when it
 * cannot be read. */
static int is_elf(const char *path)
{
	if (!strcmp(path, "-"))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	unsigned char b[4] = { 0 };
	ssize_t n = read(fd, b, 4);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	return n == 4 && !memcmp(b, "\177ELF", 4);
}

/* parse_options.core_idle: the parse has a core to spare from now on. */
static void core_idle(void *ctx)
{
	struct run *r = ctx;
	if (r->pre_sc && !r->pre)
		r->pre = symbolize_preload_start(r->pre_sc, r->pre_dc, r->pre_binary);
}

static int load(struct run *r, struct profile *dst, const char *path, double sign)
{
	struct profile one;
	char err[1024];
	if (profile_init(&one)) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	struct parse_options po = { .warn = warn_cb, .ctx = r, .progress = parse_progress,
				    .core_idle = core_idle };
	int rc = parse_file(&one, strcmp(path, "-") ? path : "/dev/stdin", &po, err, sizeof(err));
	progress_clear(r);
	if (rc) {
		fprintf(stderr, "jheap: %s\n", err);
		profile_release(&one);
		return EXIT_DATA;
	}
	if (sign < 0 && r->cli.thread && one.nsamples && !one.ntvals) {
		/* its values cannot be taken from each thread's share */
		fprintf(stderr, "jheap: --thread: the --base profile '%s' has no per-thread values (%s): it cannot be subtracted thread by thread; leave out --thread or --base\n",
			path, one.format == PF_FMT_PPROF ? "a pprof profile" : "no 't' lines");
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

/* True when -o names one of the input files (the same inode), which
 * opening it for writing would destroy. */
static bool output_is_input(const struct cli *c)
{
	struct stat o;
	if (stat(c->output, &o))
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

static int write_report(struct run *r, const struct report *rep, FILE *out)
{
	char err[1024] = "";
	int rc = 0;
	switch (r->cli.mode) {
	case MODE_TEXT: {
		struct text_options to = { .units = rep->units, .nodecount = rep->nodecount,
					   .thread = rep->thread, .nodelimit = -1 };
		if (r->cli.nodefraction_set) {
			/* jeprof's limit and note, as for call graphs */
			char v[64];
			to.nodelimit = trunc(r->cli.nodefraction * fabs(rep->a->flat_total));
			text_format_value(v, sizeof(v), to.nodelimit, rep->units);
			progress_clear(r);
			if (!r->cli.quiet)
				fprintf(stderr, "Dropping nodes with <= %s %s\n", v, text_unit_name(rep->units));
		}
		text_write(out, rep->a, &to);
		break;
	}
	case MODE_COLLAPSED: rc = output_collapsed(out, rep, err, sizeof(err)); break;
	case MODE_FLAMEGRAPH: rc = output_flamegraph(out, rep, err, sizeof(err)); break;
	case MODE_DOT: rc = output_dot(out, rep, err, sizeof(err)); break;
	case MODE_SVG: rc = output_graphviz(out, rep, "svg", err, sizeof(err)); break;
	case MODE_PDF: rc = output_graphviz(out, rep, "pdf", err, sizeof(err)); break;
	case MODE_PNG: rc = output_graphviz(out, rep, "png", err, sizeof(err)); break;
	case MODE_PROTO: rc = output_proto(out, rep, err, sizeof(err)); break;
	case MODE_SPEEDSCOPE: rc = output_speedscope(out, rep, err, sizeof(err)); break;
	case MODE_CALLGRIND: rc = output_callgrind(out, rep, err, sizeof(err)); break;
	case MODE_RAW: rc = output_raw(out, rep, err, sizeof(err)); break;
	case MODE_LIST: rc = output_list(out, rep, err, sizeof(err)); break;
	case MODE_DISASM: rc = output_disasm(out, rep, err, sizeof(err)); break;
	case MODE_SYMBOLS: break;
	}
	if (rc) {
		fprintf(stderr, "jheap: %s\n", err);
		return rc == JH_EUSAGE ? EXIT_USAGE : EXIT_DATA;
	}
	return EXIT_OK;
}

static int report_one(struct run *r, struct profile *p, const char *binary,
		      const char *const *paths, const char *thread, FILE *out);

/* --thread=N: the samples' values replaced by thread N's share (TV holds
 * its values) for one report of the whole profile, then put back. */
static int report_thread(struct run *r, struct profile *p, const struct threadview *tv,
			 const char *binary, const char *const *paths, const char *label, FILE *out)
{
	double (*saved)[2][PF_NVALUES] = malloc((p->nsamples + 1) * sizeof(*saved));
	if (!saved) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		memcpy(saved[i][0], p->samples[i].v, sizeof(saved[i][0]));
		memcpy(saved[i][1], p->samples[i].base, sizeof(saved[i][1]));
		memset(p->samples[i].v, 0, sizeof(p->samples[i].v));
		memset(p->samples[i].base, 0, sizeof(p->samples[i].base));
	}
	for (size_t i = tv->first[0]; i < tv->first[1]; i++) {
		const struct pf_thread_value *t = &p->tvals[tv->vals[i]];
		for (int j = 0; j < PF_NVALUES; j++)
			p->samples[t->sample].v[j] += t->v[j];
	}
	int rc = report_one(r, p, binary, paths, label, out);
	for (size_t i = 0; i < p->nsamples; i++) {
		memcpy(p->samples[i].v, saved[i][0], sizeof(saved[i][0]));
		memcpy(p->samples[i].base, saved[i][1], sizeof(saved[i][1]));
	}
	free(saved);
	return rc;
}

/* jemalloc's dump names are <prefix>.<pid>.<seq>.<kind><n>.heap; returns
 * <seq>, or -1 when PATH does not look like one. */
static long long dump_sequence(const char *path)
{
	const char *end = strrchr(path, '/');
	end = end ? end + 1 : path;
	size_t n = strlen(end);
	if (n < 5 || strcmp(end + n - 5, ".heap"))
		return -1;
	/* walk back over ".<kind><n>" to ".<seq>" */
	const char *dot[3] = { NULL, NULL, NULL };
	int found = 0;
	for (const char *q = end + n - 5; q > end && found < 3; q--)
		if (q[-1] == '.')
			dot[found++] = q;
	if (found < 2)
		return -1;
	const char *seq = dot[1];
	char *stop;
	long long v = strtoll(seq, &stop, 10);
	return stop > seq && *stop == '.' ? v : -1;
}

static int cmp_sequence(const void *a, const void *b)
{
	long long x = dump_sequence(*(const char *const *)a), y = dump_sequence(*(const char *const *)b);
	return x < y ? -1 : x > y;
}

/* Without --thread, one report of the whole profile.  With --thread=N,
 * the samples' values are replaced by that thread's share (already net
 * of --base: thread values merge with the base's sign); with '*', each
 * thread's share is reported from a profile of its own
 * (analyzer/threadview.c), which keeps 200,000 threads linear. */
static int report(struct run *r, struct profile *p, const char *binary,
		  const char *const *paths, FILE *out)
{
	struct cli *c = &r->cli;
	if (!c->thread)
		return report_one(r, p, binary, paths, NULL, out);
	bool all = !strcmp(c->thread, "*");
	if (all && c->mode != MODE_TEXT && c->mode != MODE_DOT && c->mode != MODE_COLLAPSED &&
	    c->mode != MODE_CALLGRIND) {
		fprintf(stderr, "jheap: --thread='*' writes one report per thread and works with --text, --dot, --collapsed and --callgrind; pick one thread for this format\n");
		return EXIT_USAGE;
	}
	int64_t uid = strtoll(c->thread, NULL, 10);
	struct threadview tv;
	if (threadview_init(&tv, p, all ? NULL : &uid)) {
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
		const struct pf_thread *t = &p->threads[tv.ids[k]];
		char label[300];
		const char *name = strtab_get(&p->strs, t->name);
		snprintf(label, sizeof(label), "t%lld%s%s", (long long)t->uid, *name ? " " : "", name);
		if (k && c->mode == MODE_TEXT)
			fputc('\n', out);
		if (all) {
			struct profile one;
			rc = threadview_build(&tv, k, &one) ? (fprintf(stderr, "jheap: out of memory\n"), EXIT_DATA)
							    : report_one(r, &one, binary, paths, label, out);
			profile_release(&one);
		} else {
			rc = report_thread(r, p, &tv, binary, paths, label, out);
		}
	}
	threadview_release(&tv);
	return rc;
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

static int report_one(struct run *r, struct profile *p, const char *binary,
		      const char *const *paths, const char *thread, FILE *out)
{
	struct cli *c = &r->cli;
	struct agg_options ao = {
		.value = c->value, .gran = c->gran, .full_names = c->full_names,
		.keep_allocator = c->keep_allocator, .focus = c->focus, .ignore = c->ignore,
		.retain = c->retain, .exclude = c->exclude,
	};
	struct aggregate a;
	int brc = aggregate_build(&a, p, &ao);
	if (brc || aggregate_sort(&a, c->cum)) {
		fprintf(stderr, "jheap: %s\n", brc == JH_EUSAGE || brc == JH_ELIMIT ? a.errmsg : "out of memory");
		aggregate_release(&a);
		return brc == JH_EUSAGE ? EXIT_USAGE : EXIT_DATA;
	}
	stage_done(r, "aggregate");
	struct report rep = {
		.p = p, .a = &a, .value = c->value, .units = text_units(c->value, c->show_bytes),
		.gran = c->gran, .full_names = c->full_names, .keep_allocator = c->keep_allocator,
		.diff = c->nbases > 0, .no_symbolize = c->no_symbolize,
		.nodecount = c->nodecount, .nodefraction = c->nodefraction,
		.edgefraction = c->edgefraction, .maxdegree = c->maxdegree,
		.program = program_name(p, binary), .profile_paths = paths,
		.thread = thread, .list = c->list, .disasm = c->disasm, .growth = r->growth != NULL,
		.source_dirs = (const char *const *)c->source_dirs,
	};
	int rc;
	if (r->growth && c->mode == MODE_TEXT)
		rc = growth_write_text(out, r->growth, p, &a, c->value, rep.units, c->nodecount)
			? (fprintf(stderr, "jheap: out of memory\n"), EXIT_DATA) : EXIT_OK;
	else
		rc = write_report(r, &rep, out);
	aggregate_release(&a);
	return rc;
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') || c == '_';
}


/* The first word "0x<hex>" of LINE (jeprof's /\b(0x[0-9a-f]+)\b/i), or NULL. */
static const char *find_hex_token(const char *line)
{
	for (const char *s = line; *s; s++) {
		if (s[0] != '0' || (s[1] | 32) != 'x' || jh_hexval(s[2]) < 0 || (s > line && is_alnum(s[-1])))
			continue;
		const char *e = s + 2;
		while (jh_hexval(*e) >= 0)
			e++;
		if (!is_alnum(*e))
			return s;
	}
	return NULL;
}

/* --symbols: jeprof's PrintSymbols.  Standard input holds maps lines and
 * lines with a "0x..." address (looked up as given, without the -1 of
 * return addresses); one line per address is printed: the short name of
 * its outermost function, or the address as 16 hex digits when unknown. */
static int run_symbols(struct run *r, const char *binary)
{
	struct profile p;
	char err[1024], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint32_t *order = NULL;
	size_t norder = 0, cap_order = 0;
	int rc = EXIT_OK;
	if (profile_init(&p))
		return EXIT_DATA;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		const char *hex = find_hex_token(line);
		if (hex) {
			uint64_t a = strtoull(hex, NULL, 16);
			int64_t id = profile_location(&p, a, true, UINT32_MAX);
			if (id < 0 || JH_PUSH(order, norder, cap_order, (uint32_t)id))
				goto oom;
			continue;
		}
		struct maps_line ml;
		if (maps_parse_line(line, (size_t)n - (line[n - 1] == '\n'), &ml, err, sizeof(err)))
			continue;
		struct pf_mapping m = { .start = ml.start, .limit = ml.end, .offset = ml.offset,
					.exec = ml.exec, .deleted = ml.deleted,
					.kind = ml.pathlen ? (ml.path[0] == '[' ? PF_MAP_SPECIAL : PF_MAP_FILE) : PF_MAP_ANON };
		int64_t sid = strtab_intern_n(&p.strs, ml.path, ml.pathlen);
		if (sid < 0)
			goto oom;
		m.path = (uint32_t)sid;
		if (profile_mapping(&p, &m) < 0)
			goto oom;
		p.has_maps = true;
	}
	free(line);
	line = NULL;
	if (profile_resolve_mappings(&p))
		goto oom;
	struct symcache *sc = symcache_new(&(struct symcache_options){
		.debuginfo_dirs = r->cli.debuginfo_dirs });
	if (!sc)
		goto oom;
	struct diskcache *dc = open_cache(r, sc);
	struct symbolize_options so = { .binary = binary, .lib_prefixes = r->cli.lib_prefixes,
					.cache = dc, .note = debug_on("cache") ? note_cb : NULL,
					.warn = warn_cb, .ctx = r,
					.symcache_opts = { .debuginfo_dirs = r->cli.debuginfo_dirs } };
	struct symbolize_stats st;
	if (symbolize_profile(&p, sc, &so, &st, err, sizeof(err))) {
		diskcache_free(dc);
		symcache_free(sc);
		goto oom;
	}
	char buf[4096];
	for (size_t i = 0; i < norder; i++) {
		const struct pf_location *l = &p.locs[order[i]];
		if (l->sym == PF_SYM_UNKNOWN || !l->nlines) {
			printf("0x%016llx\n", (unsigned long long)l->addr);
			continue;
		}
		const struct pf_line *outer = &p.lines[l->line0 + l->nlines - 1];
		escape_fputs(aggregate_func_name(&p, outer->function, r->cli.full_names, buf, sizeof(buf)),
			     false, stdout);
		putchar('\n');
	}
	diskcache_free(dc);
	symcache_free(sc);
	goto out;
oom:
	fprintf(stderr, "jheap: out of memory\n");
	rc = EXIT_DATA;
out:
	free(line);
	free(order);
	profile_release(&p);
	return rc;
}

static int run(struct run *r, int argc, char **argv)
{
	struct cli *c = &r->cli;
	char err[1024];
	if (cli_parse(c, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\nTry 'jheap --help' for more information.\n", err);
		return EXIT_USAGE;
	}
	if (c->help) {
		cli_help(stdout);
		return EXIT_OK;
	}
	if (c->version) {
		printf("jheap %s\n", JHEAP_VERSION);
		return EXIT_OK;
	}
	/* [BINARY] PROFILE...: a binary is told from a profile by its content */
	const char *binary = NULL;
	size_t first = 0;
	for (size_t i = 0; i < c->nargs; i++) {
		int e = is_elf(c->args[i]);
		if (e < 0) {
			fprintf(stderr, "jheap: cannot open '%s': %s\n", c->args[i], strerror(errno));
			return EXIT_DATA;
		}
		if (e && i == 0) {
			binary = c->args[0];
			first = 1;
		} else if (e) {
			fprintf(stderr, "jheap: '%s' is an ELF file, not a heap profile; only the first argument may be the program\n",
				c->args[i]);
			return EXIT_USAGE;
		}
	}
	if (c->mode == MODE_SYMBOLS)
		return run_symbols(r, binary);
	if (first >= c->nargs) {
		fprintf(stderr, "jheap: no profile given\nUsage: jheap [OPTIONS] [BINARY] PROFILE...\n");
		return EXIT_USAGE;
	}
	struct profile p;
	if (profile_init(&p)) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	int rc = EXIT_OK;
	struct growth g;
	growth_init(&g);
	if (c->growth) {
		if (c->nbases || c->thread) {
			fprintf(stderr, "jheap: --growth reads a series of dumps of one process; it does not combine with --base or --thread\n");
			rc = EXIT_USAGE;
			goto out;
		}
		if (c->mode == MODE_RAW || c->mode == MODE_LIST) {
			fprintf(stderr, "jheap: --growth works with --text, --collapsed, --flamegraph, --proto, --dot, --callgrind and --speedscope\n");
			rc = EXIT_USAGE;
			goto out;
		}
		if (c->nargs - first < 2) {
			fprintf(stderr, "jheap: --growth needs at least two dumps, oldest first\n");
			rc = EXIT_USAGE;
			goto out;
		}
		r->growth = &g;
		/* a glob sorts a.10.i10 before a.2.i2: order jemalloc's dumps by
		 * their sequence number when every name carries one */
		bool all = true;
		for (size_t i = first; i < c->nargs; i++)
			all &= dump_sequence(c->args[i]) >= 0;
		if (all)
			jh_qsort(c->args + first, c->nargs - first, sizeof(*c->args), cmp_sequence);
	}
	/* The symbol caches exist before the dumps are read so that the
	 * binary and its persistent cache can be opened beside the parse. */
	struct symcache *sc = symcache_new(&(struct symcache_options){
		.debuginfo_dirs = c->debuginfo_dirs });
	if (!sc) {
		fprintf(stderr, "jheap: out of memory\n");
		rc = EXIT_DATA;
		goto out;
	}
	char cache_why[1200];
	struct diskcache *dc = open_cache_quiet(r, sc, cache_why, sizeof(cache_why));
	if (!c->no_symbolize && binary) {
		r->pre_sc = sc;
		r->pre_dc = dc;
		r->pre_binary = binary;
	}
	for (size_t i = first; i < c->nargs && !rc; i++) {
		rc = load(r, &p, c->args[i], 1);
		if (!rc && c->growth && growth_snapshot(&g, &p)) {
			fprintf(stderr, "jheap: out of memory\n");
			rc = EXIT_DATA;
		}
	}
	for (size_t i = 0; i < c->nbases && !rc; i++)
		rc = load(r, &p, c->bases[i], -1);
	symbolize_preload_finish(r->pre);
	r->pre = NULL;
	r->pre_sc = NULL;
	/* each file's values are bounded as it is read; so are their sums,
	 * so that no report prints a wrapped number */
	if (!rc && profile_check_magnitude(&p, 0x1p62, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		rc = EXIT_DATA;
	}
	if (rc)
		goto out_caches;
	stage_done(r, "parse");
	if (cache_why[0])
		warn_cb(r, cache_why);
	if ((c->value == PF_ALLOC_SPACE || c->value == PF_ALLOC_OBJECTS) && !p.has_alloc &&
	    p.nsamples) {
		fprintf(stderr, "jheap: %s: the profile has no allocation counts (the program ran without MALLOC_CONF=prof_accum:true); use --inuse_space or --inuse_objects\n",
			value_option(c->value));
		rc = EXIT_DATA;
		goto out_caches;
	}
	struct symbolize_options so = {
		.binary = binary, .lib_prefixes = c->lib_prefixes,
		.cache = dc, .note = debug_on("cache") ? note_cb : NULL,
		.no_symbolize = c->no_symbolize, .warn = warn_cb, .ctx = r,
		.progress = symbolize_progress,
		.symcache_opts = { .debuginfo_dirs = c->debuginfo_dirs },
		.ranges = c->mode == MODE_DISASM,
	};
	struct symbolize_stats st;
	uint32_t *remap = NULL;
	if (symbolize_profile(&p, sc, &so, &st, err, sizeof(err)) ||
	    (profile_fold_by_symbol(&p, &remap) && jh_err(err, sizeof(err), JH_ENOMEM, "out of memory")) ||
	    (c->growth && growth_finish(&g, &p, remap) && jh_err(err, sizeof(err), JH_ENOMEM, "out of memory"))) {
		fprintf(stderr, "jheap: %s\n", err);
		rc = EXIT_DATA;
	} else {
		stage_done(r, "symbolize");
		if (c->drop_negative)
			drop_negative(&p);
		if (c->growth && c->mode != MODE_TEXT)
			growth_apply(&g, &p);
		if (st.binary_mismatch || st.resource_failed)
			r->degraded = true;
		if (st.main_pcs && !st.main_resolved && !c->no_symbolize) {
			const char *name = binary;
			if (!name && p.main_mapping != UINT32_MAX)
				name = strtab_get(&p.strs, p.maps[p.main_mapping].object);
			fprintf(stderr, "jheap: warning: none of the %zu addresses in the main program resolve to a function in '%s': is it the binary that wrote the dump?\n",
				st.main_pcs, name ? name : "?");
			r->degraded = true;
		}
		progress_clear(r);
		struct outfile of = { .f = stdout };
		if (c->output && output_is_input(c)) {
			fprintf(stderr, "jheap: refusing to write the report over the input '%s'\n", c->output);
			rc = EXIT_USAGE;
		} else if (c->output && outfile_open(&of, c->output, err, sizeof(err))) {
			fprintf(stderr, "jheap: %s\n", err);
			rc = EXIT_DATA;
		} else {
			rc = report(r, &p, binary, (const char *const *)c->args + first, of.f);
			stage_done(r, "write");
			/* -o FILE replaces FILE only with a whole report */
			if (c->output && rc == EXIT_OK && outfile_commit(&of, err, sizeof(err))) {
				fprintf(stderr, "jheap: %s\n", err);
				rc = EXIT_DATA;
			} else if (c->output && rc != EXIT_OK) {
				outfile_abort(&of);
			}
		}
	}
	free(remap);
out_caches:
	diskcache_free(dc);
	symcache_free(sc);
out:
	growth_release(&g);
	r->growth = NULL;
	profile_release(&p);
	stage_done(r, "free");
	if (!rc && r->degraded)
		rc = EXIT_DATA;
	return rc;
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	fdlimit_raise();
	sigbus_install();
	r.tty = isatty(STDERR_FILENO);
	const char *after = getenv("JHEAP_PROGRESS_AFTER");
	r.progress_after = after && *after ? atof(after) : 1.0;
	clock_gettime(CLOCK_MONOTONIC, &r.start);
	r.mark = r.start;
	r.debug_time = debug_on("time");
	int rc = run(&r, argc, argv);
	cli_release(&r.cli);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "jheap: error writing the report: %s\n", strerror(errno));
		rc = EXIT_DATA;
	}
	return rc;
}
