/* --list=RE: for each function whose name matches, its source lines with
 * the flat and cumulative values attributed to each line (jeprof's
 * PrintListing layout).  Lines come from the model's frames: the leaf
 * frame's line for flat, every frame of the function in a stack (once per
 * stack) for cum; the source text is read from the path in the DWARF line
 * table, relocated with --source-dir. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "analyzer/names.h"
#include "analyzer/util.h"
#include "output/output.h"

struct cell {                 /* one (routine, line) */
	uint32_t routine, line;
	double flat, cum;
	uint32_t stamp;
};

struct routine {              /* one (short name, file) */
	uint32_t name, file;      /* string ids in the profile */
	int first;                /* declared line, 0 unknown */
	double flat, cum;
	uint32_t stamp;
};

struct lister {
	const struct report *r;
	const struct profile *p;
	struct routine *routines;
	size_t nroutines, cap_routines;
	struct cell *cells;
	size_t ncells, cap_cells;
	int32_t *func_routine;    /* function id -> routine id, -1 no match, -2 unknown */
	pcre2_code *re;
	pcre2_match_data *md;
};

static bool re_match(struct lister *ls, const char *s)
{
	return pcre2_match(ls->re, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, ls->md, NULL) >= 0;
}

/* The routine of function F (and file FILE), created on first use. */
static int32_t routine_of(struct lister *ls, uint32_t f, uint32_t file)
{
	if (ls->func_routine[f] == -1)
		return -1;
	const struct profile *p = ls->p;
	if (ls->func_routine[f] == -2) {
		char buf[4096];
		const char *full = strtab_get(&p->strs, p->funcs[f].name);
		names_short(full, buf, sizeof(buf));
		if (!re_match(ls, full) && !re_match(ls, buf)) {
			ls->func_routine[f] = -1;
			return -1;
		}
		ls->func_routine[f] = -3; /* matches; routines are per file */
	}
	char buf[4096];
	names_short(strtab_get(&p->strs, p->funcs[f].name), buf, sizeof(buf));
	uint32_t sid = strtab_find(&p->strs, buf);
	if (!file)
		file = p->funcs[f].filename;
	for (size_t i = 0; i < ls->nroutines; i++)
		if (ls->routines[i].file == file &&
		    !strcmp(strtab_get(&p->strs, ls->routines[i].name), buf))
			return (int32_t)i;
	struct routine rt = { .name = sid == UINT32_MAX ? p->funcs[f].name : sid, .file = file,
			      .first = (int)p->funcs[f].start_line };
	if (JH_PUSH(ls->routines, ls->nroutines, ls->cap_routines, rt))
		return -4;
	return (int32_t)ls->nroutines - 1;
}

static struct cell *cell_of(struct lister *ls, uint32_t routine, int line)
{
	for (size_t i = 0; i < ls->ncells; i++)
		if (ls->cells[i].routine == routine && ls->cells[i].line == (uint32_t)line)
			return &ls->cells[i];
	struct cell c = { .routine = routine, .line = (uint32_t)line };
	if (JH_PUSH(ls->cells, ls->ncells, ls->cap_cells, c))
		return NULL;
	return &ls->cells[ls->ncells - 1];
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
		double v = s->v[ls->r->value];
		if (v == 0)
			continue;
		/* the filters of the report apply to --list too */
		int64_t nk = aggregate_stack_keys(a, p, (uint32_t)si, &keys, &cap);
		if (nk <= 0) {
			rc = nk < 0 ? (int)nk : 0;
			continue;
		}
		uint32_t skip;
		uint32_t start = aggregate_stack_start(a, p, (uint32_t)si, &skip);
		bool leaf = true;
		uint32_t stamp = (uint32_t)si + 1;
		for (uint32_t i = start; i < s->depth && !rc; i++, skip = 0) {
			const struct pf_location *l = &p->locs[p->stacks[s->stack0 + i]];
			for (uint32_t j = skip; j < l->nlines; j++, leaf = false) {
				const struct pf_line *ln = &p->lines[l->line0 + j];
				int32_t rt = routine_of(ls, ln->function, ln->file);
				if (rt == -4)
					rc = JH_ENOMEM;
				if (rt < 0)
					continue;
				struct routine *R = &ls->routines[rt];
				struct cell *c = cell_of(ls, (uint32_t)rt, ln->line);
				if (!c) {
					rc = JH_ENOMEM;
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

/* Opens the source file PATH, trying each --source-dir with the whole
 * path, then with leading folders dropped one at a time. */
static FILE *open_source(const struct report *r, const char *path)
{
	char buf[4096];
	if (r->source_dirs) {
		for (const char *const *d = r->source_dirs; *d; d++) {
			for (const char *tail = path; tail && *tail; tail = strchr(tail + 1, '/')) {
				snprintf(buf, sizeof(buf), "%s/%s", *d, *tail == '/' ? tail + 1 : tail);
				FILE *f = fopen(buf, "r");
				if (f)
					return f;
			}
		}
	}
	return fopen(path, "r");
}

static void value_alt(char *buf, size_t len, double v, enum units u)
{
	if (v == 0)
		snprintf(buf, len, ".");
	else
		text_format_value(buf, len, v, u);
}

static int cmp_routines(const void *x, const void *y, void *arg)
{
	const struct lister *ls = arg;
	const struct routine *a = x, *b = y;
	int c = strcmp(strtab_get(&ls->p->strs, a->name), strtab_get(&ls->p->strs, b->name));
	return c ? c : strcmp(strtab_get(&ls->p->strs, a->file), strtab_get(&ls->p->strs, b->file));
}

static void print_routine(FILE *out, struct lister *ls, size_t ri, struct routine *R)
{
	const struct profile *p = ls->p;
	enum units u = ls->r->units;
	const char *file = strtab_get(&p->strs, R->file);
	char f1[64], f2[64];
	text_format_value(f1, sizeof(f1), R->flat, u);
	text_format_value(f2, sizeof(f2), R->cum, u);
	fprintf(out, "ROUTINE ====================== %s in %s\n", strtab_get(&p->strs, R->name),
		*file ? file : "??");
	fprintf(out, "%6s %6s Total %s (flat / cumulative)\n", f1, f2, text_unit_name(u));
	int first = R->first, last = 0;
	for (size_t i = 0; i < ls->ncells; i++) {
		const struct cell *c = &ls->cells[i];
		if (c->routine != ri || !c->line)
			continue;
		if (!first || (int)c->line < first)
			first = (int)c->line;
		if ((int)c->line > last)
			last = (int)c->line;
	}
	if (last < first)
		last = first;
	FILE *src = *file ? open_source(ls->r, file) : NULL;
	if (!src) {
		/* no source: the lines with values, without text */
		fprintf(out, "    (source not found: %s; see --source-dir)\n", *file ? file : "??");
		for (int line = first; line <= last; line++)
			for (size_t i = 0; i < ls->ncells; i++) {
				const struct cell *c = &ls->cells[i];
				if (c->routine == ri && (int)c->line == line) {
					value_alt(f1, sizeof(f1), c->flat, u);
					value_alt(f2, sizeof(f2), c->cum, u);
					fprintf(out, "%6s %6s %4d\n", f1, f2, line);
				}
			}
		return;
	}
	char *text = NULL;
	size_t cap = 0;
	int line = 0;
	while (getline(&text, &cap, src) > 0) {
		line++;
		if (line < first - 5)
			continue;
		if (line > last + 5)
			break;
		if (line == first)
			fputs("---\n", out);
		double fl = 0, cu = 0;
		for (size_t i = 0; i < ls->ncells; i++)
			if (ls->cells[i].routine == ri && (int)ls->cells[i].line == line) {
				fl += ls->cells[i].flat;
				cu += ls->cells[i].cum;
			}
		value_alt(f1, sizeof(f1), fl, u);
		value_alt(f2, sizeof(f2), cu, u);
		size_t n = strlen(text);
		fprintf(out, "%6s %6s %4d: %.*s\n", f1, f2, line,
			(int)(n && text[n - 1] == '\n' ? n - 1 : n), text);
		if (line == last)
			fputs("---\n", out);
	}
	free(text);
	fclose(src);
}

int output_list(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct lister ls = { .r = r, .p = r->p };
	int code;
	PCRE2_SIZE off;
	ls.re = pcre2_compile((PCRE2_SPTR)r->list, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (!ls.re) {
		PCRE2_UCHAR msg[200];
		pcre2_get_error_message(code, msg, sizeof(msg));
		return jh_err(err, errlen, JH_EUSAGE, "--list: bad regular expression '%s': %s",
			      r->list, (const char *)msg);
	}
	ls.md = pcre2_match_data_create(4, NULL);
	ls.func_routine = malloc((r->p->nfuncs + 1) * sizeof(*ls.func_routine));
	int rc = ls.md && ls.func_routine ? 0 : JH_ENOMEM;
	for (size_t i = 0; !rc && i < r->p->nfuncs; i++)
		ls.func_routine[i] = -2;
	if (!rc)
		rc = collect(&ls);
	if (!rc) {
		/* sort the routines by name, keeping the cells' routine ids valid */
		size_t n = ls.nroutines;
		struct routine *sorted = malloc((n + 1) * sizeof(*sorted));
		if (!sorted) {
			rc = JH_ENOMEM;
		} else {
			for (size_t i = 0; i < n; i++) {
				sorted[i] = ls.routines[i];
				sorted[i].stamp = (uint32_t)i; /* original id */
			}
			jh_qsort_r(sorted, n, sizeof(*sorted), cmp_routines, &ls);
			for (size_t i = 0; i < n; i++)
				print_routine(out, &ls, sorted[i].stamp, &sorted[i]);
			free(sorted);
			if (!n)
				rc = jh_err(err, errlen, JH_EFORMAT,
					    "--list: no function matching '%s' holds any %s", r->list,
					    r->units == UNITS_OBJECTS ? "objects" : "memory");
		}
	}
	if (rc == JH_ENOMEM)
		jh_err(err, errlen, rc, "out of memory");
	free(ls.routines);
	free(ls.cells);
	free(ls.func_routine);
	pcre2_match_data_free(ls.md);
	pcre2_code_free(ls.re);
	return rc;
}
