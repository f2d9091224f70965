/* --list=RE: for each function whose name matches, its source lines with
 * the flat and cumulative values attributed to each line (jeprof's
 * PrintListing layout).  Lines come from the model's frames: the leaf
 * frame's line for flat, every frame of the function in a stack (once per
 * stack) for cum; the source text is read from the path in the DWARF line
 * table, relocated with --source-dir.
 *
 * Source files are local files: only regular files of at most
 * LIST_MAX_SOURCE bytes are read, and a path that only the profile file
 * names (a pprof profile's locations, not an object file's DWARF) is read
 * only under a --source-dir folder, so that a crafted profile cannot show
 * /etc/shadow.  Every (routine, line) cell is found through a hash index
 * and printed from one sorted pass: a function of 60,000 lines costs no
 * more per line than one of 60. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "lib/array.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "lib/hash.h"
#include "analyzer/names.h"
#include "lib/pattern.h"
#include "lib/safefile.h"
#include "output/list.h"
#include "output/output.h"

/* The largest source file read (a bigger one is named and skipped). */
#define LIST_MAX_SOURCE ((uint64_t)64 << 20)

struct cell {                 /* one (routine, line) */
	uint32_t routine, line;
	double flat, cum;
	uint32_t stamp;
};

struct routine {              /* one (short name, file) */
	uint32_t name;            /* string id in lister.names */
	uint32_t file;            /* string id in the profile */
	int64_t first;            /* declared line, 0 unknown */
	double flat, cum;
	uint32_t stamp;
	bool trusted;             /* some frame of it came from an object file's DWARF */
};

struct lister {
	const struct report *r;
	const struct profile *p;
	struct strtab names;      /* the routines' short names */
	struct routine *routines;
	size_t nroutines, cap_routines;
	struct idmap routine_index;
	struct cell *cells;
	size_t ncells, cap_cells;
	struct idmap cell_index;
	int32_t *func_name;       /* function id -> short name id, -1 no match, -2 unknown */
	int32_t *func_routine;    /* function id -> the routine it was last found in, -1 none */
	uint8_t *loc_match;       /* location id -> LOC_* */
	struct pattern *re;
	char **dirs;              /* the --source-dir folders made canonical (NULL: missing) */
	size_t ndirs;
	char *err;
	size_t errlen;
};

enum { LOC_UNKNOWN, LOC_YES, LOC_NO };

struct rkey { const struct lister *ls; uint32_t name, file; };
struct ckey { const struct lister *ls; uint32_t routine, line; };

static uint64_t pair_hash(uint32_t a, uint32_t b)
{
	return jh_mix64((uint64_t)a << 32 | b);
}

static int routine_eq(const void *ctx, uint32_t id)
{
	const struct rkey *k = ctx;
	return k->ls->routines[id].name == k->name && k->ls->routines[id].file == k->file;
}

static int cell_eq(const void *ctx, uint32_t id)
{
	const struct ckey *k = ctx;
	return k->ls->cells[id].routine == k->routine && k->ls->cells[id].line == k->line;
}

/* The short name id of function F when it matches, -1 when it does not,
 * or a negative JH_ code (< -1) with the message in ls->err. */
static int64_t matched_name(struct lister *ls, uint32_t f)
{
	if (ls->func_name[f] != -2)
		return ls->func_name[f];
	char buf[4096];
	const char *full = strtab_get(&ls->p->strs, ls->p->funcs[f].name);
	names_short(full, buf, sizeof(buf));
	int m = pattern_match(ls->re, full, ls->err, ls->errlen);
	if (m == 0)
		m = pattern_match(ls->re, buf, ls->err, ls->errlen);
	if (m < 0)
		return m;
	if (!m) {
		ls->func_name[f] = -1;
		return -1;
	}
	int64_t id = strtab_intern(&ls->names, buf);
	if (id < 0 || id > INT32_MAX)
		return jh_err(ls->err, ls->errlen, JH_ENOMEM, "out of memory");
	ls->func_name[f] = (int32_t)id;
	return id;
}

/* The routine of function F in FILE (0: the function's own file), made
 * on first use; -1 when F does not match, or a JH_ code below -1. */
static int64_t routine_of(struct lister *ls, uint32_t f, uint32_t file, bool trusted)
{
	int64_t name = matched_name(ls, f);
	if (name < 0)
		return name;
	const struct profile *p = ls->p;
	if (!file)
		file = p->funcs[f].filename;
	/* a function's frames are in one file but for rare exceptions */
	int32_t last = ls->func_routine[f];
	if (last >= 0 && ls->routines[last].file == file) {
		ls->routines[last].trusted |= trusted;
		return last;
	}
	struct rkey k = { ls, (uint32_t)name, file };
	uint64_t h = pair_hash(k.name, k.file);
	uint32_t id = idmap_find(&ls->routine_index, h, routine_eq, &k);
	if (id == UINT32_MAX) {
		struct routine rt = { .name = k.name, .file = file, .first = p->funcs[f].start_line };
		if (JH_PUSH(ls->routines, ls->nroutines, ls->cap_routines, rt) ||
		    idmap_put(&ls->routine_index, h, (uint32_t)ls->nroutines - 1))
			return jh_err(ls->err, ls->errlen, JH_ENOMEM, "out of memory");
		id = (uint32_t)ls->nroutines - 1;
	}
	ls->routines[id].trusted |= trusted;
	ls->func_routine[f] = (int32_t)id;
	return id;
}

static struct cell *cell_of(struct lister *ls, uint32_t routine, uint32_t line)
{
	struct ckey k = { ls, routine, line };
	uint64_t h = pair_hash(routine, line);
	uint32_t id = idmap_find(&ls->cell_index, h, cell_eq, &k);
	if (id != UINT32_MAX)
		return &ls->cells[id];
	struct cell c = { .routine = routine, .line = line };
	if (JH_PUSH(ls->cells, ls->ncells, ls->cap_cells, c) ||
	    idmap_put(&ls->cell_index, h, (uint32_t)ls->ncells - 1))
		return NULL;
	return &ls->cells[ls->ncells - 1];
}

/* Whether location L holds a frame of a matching function: 1, 0, or a
 * negative JH_ code (< -1) with the message in ls->err.  Known once per
 * location, so that a stack's frames of other functions cost one look
 * each. */
static int loc_matches(struct lister *ls, uint32_t l)
{
	if (ls->loc_match[l] != LOC_UNKNOWN)
		return ls->loc_match[l] == LOC_YES;
	const struct pf_location *loc = &ls->p->locs[l];
	int yes = 0;
	for (uint32_t j = 0; j < loc->nlines && !yes; j++) {
		int64_t name = matched_name(ls, ls->p->lines[loc->line0 + j].function);
		if (name < -1)
			return (int)name;
		yes = name >= 0;
	}
	ls->loc_match[l] = yes ? LOC_YES : LOC_NO;
	return yes;
}

/* Whether a frame of the stack of sample S from location START on
 * matches: 1, 0, or a JH_ code. */
static int stack_matches(struct lister *ls, const struct pf_sample *s, uint32_t start)
{
	for (uint32_t i = start; i < s->depth; i++) {
		int m = loc_matches(ls, ls->p->stacks[s->stack0 + i]);
		if (m)
			return m;
	}
	return 0;
}

static int collect(struct lister *ls)
{
	const struct profile *p = ls->p;
	const struct aggregate *a = ls->r->a;
	uint32_t *keys = NULL;
	size_t cap = 0;
	int rc = 0;
	for (size_t si = 0; si < p->nsamples && !rc; si++) {
		const struct pf_sample *s = &p->samples[si];
		double v = aggregate_values(a, p, (uint32_t)si)[ls->r->value];
		if (v == 0)
			continue;
		uint32_t skip;
		uint32_t start = aggregate_stack_start(a, p, (uint32_t)si, &skip);
		/* the filters of the report apply to --list too: asked only
		 * of a stack with a matching frame */
		if (a->filtered) {
			int m = stack_matches(ls, s, start);
			if (m <= 0) {
				rc = m;
				continue;
			}
			int64_t nk = aggregate_stack_keys(a, p, (uint32_t)si, &keys, &cap);
			if (nk <= 0) {
				rc = nk < 0 ? jh_err(ls->err, ls->errlen, JH_ENOMEM, "out of memory") : 0;
				continue;
			}
		}
		uint32_t stamp = (uint32_t)si + 1;
		for (uint32_t i = start; i < s->depth && !rc; i++, skip = 0) {
			if (!loc_matches(ls, p->stacks[s->stack0 + i]))
				continue;
			const struct pf_location *l = &p->locs[p->stacks[s->stack0 + i]];
			for (uint32_t j = skip; j < l->nlines; j++) {
				bool leaf = i == start && j == skip;
				const struct pf_line *ln = &p->lines[l->line0 + j];
				int64_t rt = routine_of(ls, ln->function, ln->file, l->sym != PF_SYM_PROFILE);
				if (rt < -1) {
					rc = (int)rt;
					break;
				}
				if (rt < 0)
					continue;
				struct routine *R = &ls->routines[rt];
				struct cell *c = cell_of(ls, (uint32_t)rt, ln->line > 0 ? (uint32_t)ln->line : 0);
				if (!c) {
					rc = jh_err(ls->err, ls->errlen, JH_ENOMEM, "out of memory");
					break;
				}
				if (leaf) {
					c->flat += v;
					R->flat += v;
				}
				if (c->stamp != stamp) {
					c->stamp = stamp;
					c->cum += v;
				}
				if (R->stamp != stamp) {
					R->stamp = stamp;
					R->cum += v;
				}
			}
		}
	}
	free(keys);
	return rc;
}

/* Whether PATH (canonical) is DIR (canonical) or inside it. */
static bool inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Reads CAND into *buf when it is there: 1 read, 0 not there (try the
 * next), -1 there but not read (why says so).  An untrusted candidate
 * must resolve, through its links, inside the source folder DIR. */
static int try_source(const char *cand, const char *dir, bool trusted, char **buf, size_t *len,
		      char *why, size_t whylen)
{
	if (!trusted) {
		char *canon = dir ? realpath(cand, NULL) : NULL;
		bool ok = canon && inside(canon, dir);
		free(canon);
		if (!ok)
			return 0;
	}
	int rc = safefile_read(cand, LIST_MAX_SOURCE, buf, len, why, whylen);
	if (!rc)
		return 1;
	return rc == JH_EIO && (errno == ENOENT || errno == ENOTDIR) ? 0 : -1;
}

/* The source text of PATH: each --source-dir with the whole path, then
 * with leading folders dropped one at a time; then PATH itself, when the
 * routine's file came from DWARF or lies in a --source-dir.  Returns 0
 * with *buf, or -1 with the reason in why. */
static int read_source(const struct lister *ls, const char *path, bool trusted, char **buf,
		       size_t *len, char *why, size_t whylen)
{
	char cand[PATH_MAX];
	for (size_t i = 0; i < ls->ndirs; i++) {
		const char *d = ls->r->source_dirs[i];
		for (const char *tail = path; tail && *tail; tail = strchr(tail + 1, '/')) {
			if (snprintf(cand, sizeof(cand), "%s/%s", d, *tail == '/' ? tail + 1 : tail) >=
			    (int)sizeof(cand))
				continue;
			int r = try_source(cand, ls->dirs[i], trusted, buf, len, why, whylen);
			if (r)
				return r > 0 ? 0 : -1;
		}
	}
	for (size_t i = 0; i < ls->ndirs && !trusted; i++) {
		int r = path[0] == '/' ? try_source(path, ls->dirs[i], false, buf, len, why, whylen) : 0;
		if (r)
			return r > 0 ? 0 : -1;
	}
	if (!trusted) {
		snprintf(why, whylen, "'%s' is named by the profile file, not by an object file's debug information: read only under --source-dir",
			 path);
		return -1;
	}
	int r = try_source(path, NULL, true, buf, len, why, whylen);
	if (!r)
		snprintf(why, whylen, "'%s' not found; see --source-dir", path);
	return r > 0 ? 0 : -1;
}

static int cmp_routines(const void *x, const void *y, void *arg)
{
	const struct lister *ls = arg;
	const struct routine *a = &ls->routines[*(const uint32_t *)x];
	const struct routine *b = &ls->routines[*(const uint32_t *)y];
	int c = strcmp(strtab_get(&ls->names, a->name), strtab_get(&ls->names, b->name));
	return c ? c : strcmp(strtab_get(&ls->p->strs, a->file), strtab_get(&ls->p->strs, b->file));
}

static int cmp_cells(const void *x, const void *y, void *arg)
{
	const struct lister *ls = arg;
	const struct cell *a = &ls->cells[*(const uint32_t *)x], *b = &ls->cells[*(const uint32_t *)y];
	if (a->routine != b->routine)
		return a->routine < b->routine ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Routine R, whose cells are C[0..n) sorted by line, to SINK. */
static void walk_routine(struct lister *ls, const struct routine *R, const uint32_t *c, size_t n,
			 const struct list_sink *sink)
{
	const struct profile *p = ls->p;
	const char *file = strtab_get(&p->strs, R->file);
	sink->routine(sink->ctx, strtab_get(&ls->names, R->name), *file ? file : "??", R->flat,
		      R->cum);
	/* the cells with a line, from the first one with a line */
	size_t k = 0;
	while (k < n && !ls->cells[c[k]].line)
		k++;
	int64_t first = R->first > 0 ? R->first : 0, last = 0;
	if (k < n) {
		int64_t lo = ls->cells[c[k]].line, hi = ls->cells[c[n - 1]].line;
		if (!first || lo < first)
			first = lo;
		last = hi;
	}
	if (last < first)
		last = first;
	char *text = NULL, why[PATH_MAX + 200];
	size_t len = 0;
	if (!*file || read_source(ls, file, R->trusted, &text, &len, why, sizeof(why))) {
		/* no source: the lines with values, without text */
		sink->missing(sink->ctx, *file ? why : "no file name known");
		for (; k < n; k++) {
			const struct cell *cl = &ls->cells[c[k]];
			sink->line(sink->ctx, cl->line, cl->flat, cl->cum, NULL, 0);
		}
		return;
	}
	int64_t line = 0;
	for (char *s = text, *end = text + len; s < end && line <= last + 5;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		char *e = nl ? nl : end;
		line++;
		if (line >= first - 5) {
			if (line == first)
				sink->fence(sink->ctx);
			double fl = 0, cu = 0;
			while (k < n && ls->cells[c[k]].line < line)
				k++;
			for (; k < n && ls->cells[c[k]].line == line; k++) {
				fl += ls->cells[c[k]].flat;
				cu += ls->cells[c[k]].cum;
			}
			char save = *e;
			*e = '\0';
			sink->line(sink->ctx, line, fl, cu, s, (size_t)(e - s));
			*e = save;
			if (line == last)
				sink->fence(sink->ctx);
		}
		s = nl ? nl + 1 : end;
	}
	free(text);
}

/* The source folders made canonical, for the inside() test. */
static int canon_dirs(struct lister *ls)
{
	const char *const *d = ls->r->source_dirs;
	while (d && d[ls->ndirs])
		ls->ndirs++;
	ls->dirs = calloc(ls->ndirs + 1, sizeof(*ls->dirs));
	if (!ls->dirs)
		return JH_ENOMEM;
	for (size_t i = 0; i < ls->ndirs; i++)
		ls->dirs[i] = realpath(d[i], NULL);
	return 0;
}

static int walk_all(struct lister *ls, const struct list_sink *sink)
{
	size_t nr = ls->nroutines, nc = ls->ncells;
	uint32_t *ro = malloc((nr + 1) * sizeof(*ro)), *co = malloc((nc + 1) * sizeof(*co));
	size_t *from = malloc((nr + 1) * sizeof(*from));
	if (!ro || !co || !from) {
		free(ro);
		free(co);
		free(from);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		ro[i] = (uint32_t)i;
	for (size_t i = 0; i < nc; i++)
		co[i] = (uint32_t)i;
	jh_qsort_r(ro, nr, sizeof(*ro), cmp_routines, ls);
	jh_qsort_r(co, nc, sizeof(*co), cmp_cells, ls);
	/* each routine's cells are one stretch of co */
	for (size_t i = 0, k = 0; i <= nr; i++) {
		while (k < nc && ls->cells[co[k]].routine < i)
			k++;
		from[i] = k;
	}
	for (size_t i = 0; i < nr; i++)
		walk_routine(ls, &ls->routines[ro[i]], co + from[ro[i]], from[ro[i] + 1] - from[ro[i]],
			     sink);
	free(ro);
	free(co);
	free(from);
	return 0;
}

int list_walk(const struct report *r, const char *opt, const char *re,
	      const struct list_sink *sink, char *err, size_t errlen)
{
	struct lister ls = { .r = r, .p = r->p, .err = err, .errlen = errlen };
	idmap_init(&ls.routine_index);
	idmap_init(&ls.cell_index);
	int rc = strtab_init(&ls.names) ? JH_ENOMEM : 0;
	if (!rc)
		rc = pattern_compile(&ls.re, opt, re, err, errlen);
	if (!rc && (!(ls.func_name = malloc((r->p->nfuncs + 1) * sizeof(*ls.func_name))) ||
		    !(ls.func_routine = malloc((r->p->nfuncs + 1) * sizeof(*ls.func_routine))) ||
		    !(ls.loc_match = calloc(r->p->nlocs + 1, 1)) || canon_dirs(&ls)))
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < r->p->nfuncs; i++) {
		ls.func_name[i] = -2;
		ls.func_routine[i] = -1;
	}
	if (!rc)
		rc = collect(&ls);
	if (!rc && walk_all(&ls, sink))
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
	if (!rc && !ls.nroutines)
		rc = jh_err(err, errlen, JH_EFORMAT, "--%s: no function matching '%s' holds any %s",
			    opt, re, r->units == UNITS_OBJECTS ? "objects" : "memory");
	strtab_release(&ls.names);
	idmap_release(&ls.routine_index);
	idmap_release(&ls.cell_index);
	free(ls.routines);
	free(ls.cells);
	free(ls.func_name);
	free(ls.func_routine);
	free(ls.loc_match);
	for (size_t i = 0; i < ls.ndirs; i++)
		free(ls.dirs[i]);
	free(ls.dirs);
	pattern_free(ls.re);
	return rc;
}

/* --list's text: jeprof's PrintListing layout. */
struct text_sink {
	FILE *out;
	enum units u;
};

static void text_routine(void *ctx, const char *name, const char *file, double flat, double cum)
{
	struct text_sink *t = ctx;
	char f1[64], f2[64];
	text_format_value(f1, sizeof(f1), flat, t->u);
	text_format_value(f2, sizeof(f2), cum, t->u);
	fputs("ROUTINE ====================== ", t->out);
	escape_fputs(name, false, t->out);
	fputs(" in ", t->out);
	escape_fputs(file, false, t->out);
	fprintf(t->out, "\n%6s %6s Total %s (flat / cumulative)\n", f1, f2, text_unit_name(t->u));
}

static void text_missing(void *ctx, const char *why)
{
	struct text_sink *t = ctx;
	char shown[PATH_MAX + 200];
	escape_into(shown, sizeof(shown), why, strlen(why));
	fprintf(t->out, "    (source not shown: %s)\n", shown);
}

static void text_line(void *ctx, int64_t n, double flat, double cum, const char *text, size_t len)
{
	struct text_sink *t = ctx;
	char f1[64], f2[64];
	(void)len;
	text_format_value_alt(f1, sizeof(f1), flat, t->u);
	text_format_value_alt(f2, sizeof(f2), cum, t->u);
	if (!text) {
		fprintf(t->out, "%6s %6s %4lld\n", f1, f2, (long long)n);
		return;
	}
	fprintf(t->out, "%6s %6s %4lld: ", f1, f2, (long long)n);
	escape_fputs(text, true, t->out);
	fputc('\n', t->out);
}

static void text_fence(void *ctx)
{
	struct text_sink *t = ctx;
	fputs("---\n", t->out);
}

int output_list(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct text_sink t = { out, r->units };
	struct list_sink sink = { &t, text_routine, text_missing, text_line, text_fence };
	return list_walk(r, "list", r->list, &sink, err, errlen);
}
