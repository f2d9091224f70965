/*
 * --callgrind: the profile in valgrind's callgrind format, for KCachegrind
 * and callgrind_annotate (jeprof's sub PrintCallgrind in bin/jeprof.in,
 * /usr/bin/jeprof, for what jeprof writes).
 *
 * Every frame of the unreduced stacks (allocator frames cut, inline levels
 * expanded) is a position "function, file, line".  A sample's value is the
 * self cost of its leaf position and the inclusive cost of every call from
 * a frame to the one below it, so KCachegrind shows flat and cumulative
 * values (under recursion, only the call into the outermost instance of a
 * function carries the cost, so that the calls into a function add up to
 * its cumulative value as in --text); the call count of an arc is the number of objects allocated
 * through it.  Functions are keyed by their name (short as in --text, or
 * full with --full-names) and the file that declares them, and an inlined
 * function is the function itself, not "name (inline)".  Unlike jeprof,
 * file names come from the model, so "??" and "(discriminator N)" do not
 * break the lines, and the order is fixed: functions by file then name,
 * positions by file then line.
 *
 * With --base a value can be negative, which the format cannot carry; the
 * file then has two events, the increase and the decrease of each stack.
 *
 * The entries' sums are made in output/cgcost.c; here the positions, the
 * order and the text.  On the benchmark's 1,000,000 stacks (make bench)
 * the entries are sorted by function with a counting sort, then within
 * each function, and the file is written through an obuf.
 */
#include <errno.h>
#include <math.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"
#include "lib/threads.h"
#include "output/cgcost.h"
#include "output/obuf.h"
#include "output/output.h"
#include "output/stacks.h"

static int64_t intern(struct cg *c, const char *s)
{
	/* a name is one line; an empty name would read as a back reference */
	char buf[4096];
	size_t n = 0;
	for (; s[n] && n < sizeof(buf) - 1; n++) {
		unsigned char ch = (unsigned char)s[n];
		buf[n] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	buf[n] = 0;
	return strtab_intern(&c->strs, n ? buf : "??");
}

struct fn_key { const struct cg *c; uint32_t name, file; };

static int fn_eq(const void *ctx, uint32_t id)
{
	const struct fn_key *k = ctx;
	return k->c->fns[id].name == k->name && k->c->fns[id].file == k->file;
}

static int64_t fn_id(struct cg *c, const char *name, const char *file, int64_t start_line)
{
	int64_t n = intern(c, name), f = intern(c, file);
	if (n < 0 || f < 0)
		return JH_ENOMEM;
	struct fn_key k = { c, (uint32_t)n, (uint32_t)f };
	uint64_t h = jh_mix64(((uint64_t)k.name << 32) | k.file);
	uint32_t id = idmap_find(&c->fn_index, h, fn_eq, &k);
	if (id != UINT32_MAX) {
		struct cg_fn *fn = &c->fns[id];
		if (start_line > 0 && (fn->start_line == 0 || start_line < fn->start_line))
			fn->start_line = start_line;
		return id;
	}
	struct cg_fn fn = { k.name, k.file, start_line > 0 ? start_line : 0, 0 };
	if (JH_PUSH(c->fns, c->nfns, c->cap_fns, fn) ||
	    idmap_put(&c->fn_index, h, (uint32_t)(c->nfns - 1)))
		return JH_ENOMEM;
	return (int64_t)(c->nfns - 1);
}

static int frame_eq(const void *ctx, uint32_t id)
{
	const struct cg *c = ctx;
	const struct cg_frame *a = &c->frames[id], *b = &c->frames[c->nframes];
	return a->fn == b->fn && a->file == b->file && a->line == b->line;
}

/* Appends position FR to the current location's, as the id of the same
 * position met before or a new one. */
static int push_frame(struct cg *c, const struct cg_frame *fr)
{
	if (JH_PUSH(c->frames, c->nframes, c->cap_frames, *fr))
		return JH_ENOMEM;
	c->nframes--;   /* the probe, just past the end */
	uint64_t h = jh_mix64(((uint64_t)fr->fn << 32 | fr->file) ^ (uint32_t)fr->line * 0x9e3779b97f4a7c15ULL);
	uint32_t id = idmap_find(&c->frame_index, h, frame_eq, c);
	if (id == UINT32_MAX) {
		id = (uint32_t)c->nframes++;
		if (idmap_put(&c->frame_index, h, id))
			return JH_ENOMEM;
	}
	return JH_PUSH(c->lf, c->nlf, c->cap_lf, id);
}

/* The frames of every location, innermost first. */
static int build_frames(struct cg *c)
{
	const struct profile *p = c->r->p;
	c->loc_frame0 = malloc((p->nlocs + 1) * sizeof(*c->loc_frame0));
	if (!c->loc_frame0)
		return JH_ENOMEM;
	char name[4096];
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		if (c->nlf >= UINT32_MAX - 1)
			return JH_ENOMEM;
		c->loc_frame0[i] = (uint32_t)c->nlf;
		if (!l->nlines) {
			snprintf(name, sizeof(name), "0x%016llx", (unsigned long long)l->addr);
			int64_t f = fn_id(c, name, "??", 0), u = intern(c, "??");
			struct cg_frame fr = { (uint32_t)f, (uint32_t)u, 0 };
			if (f < 0 || u < 0 || push_frame(c, &fr))
				return JH_ENOMEM;
			continue;
		}
		for (uint32_t j = 0; j < l->nlines; j++) {
			const struct pf_line *ln = &p->lines[l->line0 + j];
			const struct pf_function *func = &p->funcs[ln->function];
			const char *lfile = strtab_get(&p->strs, ln->file);
			const char *ffile = strtab_get(&p->strs, func->filename);
			if (!*ffile)
				ffile = *lfile ? lfile : "??";
			const char *fname = aggregate_func_name(p, ln->function, c->r->full_names,
								name, sizeof(name));
			int64_t f = fn_id(c, fname, ffile, func->start_line);
			int64_t u = intern(c, *lfile ? lfile : ffile);
			struct cg_frame fr = { (uint32_t)f, (uint32_t)u,
					       *lfile && ln->line > 0 ? ln->line : 0 };
			if (f < 0 || u < 0 || push_frame(c, &fr))
				return JH_ENOMEM;
		}
	}
	c->loc_frame0[p->nlocs] = (uint32_t)c->nlf;
	return 0;
}

/* The positions of the two pseudo frames (see sample_path()). */
static int pseudo_frames(struct cg *c)
{
	int64_t f_alloc = fn_id(c, STACKS_ALLOCATOR_ONLY, "??", 0);
	int64_t f_none = fn_id(c, STACKS_NO_FRAMES, "??", 0);
	int64_t u = intern(c, "??");
	if (f_alloc < 0 || f_none < 0 || u < 0)
		return JH_ENOMEM;
	struct cg_frame fa = { (uint32_t)f_alloc, (uint32_t)u, 0 };
	struct cg_frame fn = { (uint32_t)f_none, (uint32_t)u, 0 };
	size_t was = c->nlf;
	if (push_frame(c, &fa) || push_frame(c, &fn))
		return JH_ENOMEM;
	c->fr_alloc = c->lf[was];
	c->fr_none = c->lf[was + 1];
	c->nlf = was;
	if (!(c->lpf = malloc((c->nlf + 1) * sizeof(*c->lpf))))
		return JH_ENOMEM;
	for (size_t k = 0; k < c->nlf; k++)
		c->lpf[k] = (struct cg_lp){ c->lf[k], c->frames[c->lf[k]].fn };
	return 0;
}

static int cmp_fns(const void *x, const void *y, void *arg)
{
	const struct cg *c = arg;
	const struct cg_fn *f = &c->fns[*(const uint32_t *)x], *g = &c->fns[*(const uint32_t *)y];
	int d = strcmp(strtab_get(&c->strs, f->file), strtab_get(&c->strs, g->file));
	if (!d)
		d = strcmp(strtab_get(&c->strs, f->name), strtab_get(&c->strs, g->name));
	return d;
}

static int cmp_strs(const void *x, const void *y, void *arg)
{
	const struct cg *c = arg;
	return strcmp(strtab_get(&c->strs, *(const uint32_t *)x),
		      strtab_get(&c->strs, *(const uint32_t *)y));
}

/* c->srank: every string's place in byte order, so that the entries
 * sort by numbers (a million of them, a strcmp on every tie). */
static int rank_strings(struct cg *c)
{
	size_t n = c->strs.len;
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	c->srank = malloc((n + 1) * sizeof(*c->srank));
	if (!order || !c->srank) {
		free(order);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	jh_qsort_r(order, n, sizeof(*order), cmp_strs, c);
	for (size_t i = 0; i < n; i++)
		c->srank[order[i]] = (uint32_t)i;
	free(order);
	return 0;
}

/* An entry's place within its function: positions in the function's own
 * file first, then file, line, self before calls, callee. */
struct ent_key {
	uint64_t k;              /* other file, file's rank, line */
	uint32_t callee;         /* 0: self, else the callee's rank + 1 */
	uint32_t id;
};

static bool key_less(const struct ent_key *a, const struct ent_key *b)
{
	return a->k != b->k ? a->k < b->k : a->callee < b->callee;
}

static int cmp_keys(const void *x, const void *y)
{
	const struct ent_key *a = x, *b = y;
	return key_less(a, b) ? -1 : key_less(b, a);
}

/* Sorts the entries by function (their rank), then as struct ent_key
 * says: a counting sort by function, then each function's few entries
 * by a number (a comparison sort of all of them cost a quarter of a
 * second on the benchmark's 640,000 entries). */
static int sort_ents(struct cg *c)
{
	struct cg_table *t = &c->t;
	uint32_t *start = calloc(c->nfns + 2, sizeof(*start));
	struct ent_key *keys = malloc((t->nents + 1) * sizeof(*keys));
	struct cg_ent *sorted = malloc((t->nents + 1) * sizeof(*sorted));
	if (!start || !keys || !sorted) {
		free(start);
		free(keys);
		free(sorted);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < t->nents; i++)
		start[c->fns[t->ents[i].fn].rank + 1]++;
	for (size_t f = 1; f <= c->nfns; f++)
		start[f] += start[f - 1];
	for (size_t i = 0; i < t->nents; i++) {
		const struct cg_ent *e = &t->ents[i];
		const struct cg_fn *fn = &c->fns[e->fn];
		uint64_t other = e->file != fn->file;
		struct ent_key k = { other << 63 | (uint64_t)c->srank[e->file] << 32 |
					     ((uint32_t)e->line ^ 0x80000000u),
				     e->callee == CG_SELF ? 0 : c->fns[e->callee].rank + 1, (uint32_t)i };
		keys[start[fn->rank]++] = k;
	}
	/* start[f] is now where function f + 1 starts */
	for (size_t f = 0, from = 0; f < c->nfns; from = start[f++]) {
		size_t n = start[f] - from;
		struct ent_key *a = keys + from;
		if (n > 16) {
			qsort(a, n, sizeof(*a), cmp_keys);
			continue;
		}
		for (size_t i = 1; i < n; i++) {
			struct ent_key x = a[i];
			size_t j = i;
			for (; j > 0 && key_less(&x, &a[j - 1]); j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
	}
	for (size_t i = 0; i < t->nents; i++)
		sorted[i] = t->ents[keys[i].id];
	free(t->ents);
	t->ents = sorted;
	t->cap_ents = t->nents + 1;
	free(start);
	free(keys);
	return 0;
}

/* Writes "KEY=(id) name" the first time a string is used and "KEY=(id)"
 * afterwards.  IDS holds the compressed id of each string, 0 when unused. */
static void write_name(struct obuf *o, const char *key, const struct cg *c, uint32_t s,
		       uint32_t *ids, uint32_t *next)
{
	bool first = !ids[s];
	if (first)
		ids[s] = ++*next;
	obuf_puts(o, key);
	obuf_write(o, "=(", 2);
	obuf_u64(o, ids[s]);
	obuf_putc(o, ')');
	if (first) {
		obuf_putc(o, ' ');
		obuf_puts(o, strtab_get(&c->strs, s));
	}
	obuf_putc(o, '\n');
}

static void write_costs(struct obuf *o, const struct cg *c, const double cost[2])
{
	obuf_i64(o, llround(cost[0]));
	if (c->nevents == 2) {
		obuf_putc(o, ' ');
		obuf_i64(o, llround(cost[1]));
	}
	obuf_putc(o, '\n');
}

static const char *value_name(enum pf_value v, const char **what)
{
	switch (v) {
	case PF_INUSE_OBJECTS: *what = "objects in use"; return "inuse_objects";
	case PF_INUSE_SPACE: *what = "bytes in use"; return "inuse_space";
	case PF_ALLOC_OBJECTS: *what = "objects allocated"; return "alloc_objects";
	case PF_CHURN_OBJECTS: *what = "objects allocated and freed again"; return "churn_objects";
	case PF_CHURN_SPACE: *what = "bytes allocated and freed again"; return "churn_space";
	default: *what = "bytes allocated"; return "alloc_space";
	}
}

static void write_header(FILE *out, struct cg *c)
{
	const struct report *r = c->r;
	const char *what, *ev = value_name(r->value, &what);
	fputs("# callgrind format\nversion: 1\ncreator: jheap\n", out);
	if (r->program && *r->program) {
		int64_t id = intern(c, r->program);
		fprintf(out, "cmd: %s\n", id < 0 ? "?" : strtab_get(&c->strs, (uint32_t)id));
	}
	if (r->profile_paths && r->profile_paths[0]) {
		fputs("desc: Profile:", out);
		for (size_t i = 0; r->profile_paths[i]; i++) {
			int64_t id = intern(c, r->profile_paths[i]);
			fprintf(out, " %s", id < 0 ? "?" : strtab_get(&c->strs, (uint32_t)id));
		}
		fputc('\n', out);
	}
	if (r->thread)
		fprintf(out, "desc: Thread: %s\n", r->thread);
	fputs("positions: line\n", out);
	if (c->nevents == 2) {
		fprintf(out, "event: %s_increase : %s, increase over --base\n", ev, what);
		fprintf(out, "event: %s_decrease : %s, decrease from --base\n", ev, what);
		fprintf(out, "events: %s_increase %s_decrease\n", ev, ev);
	} else {
		fprintf(out, "event: %s : %s\n", ev, what);
		fprintf(out, "events: %s\n", ev);
	}
	/* the sum of the self costs as written, so that the file adds up */
	double sum[2] = { 0, 0 };
	for (size_t i = 0; i < c->t.nents; i++)
		if (c->t.ents[i].callee == CG_SELF)
			for (int k = 0; k < 2; k++)
				sum[k] += (double)llround(c->t.ents[i].cost[k]);
	fprintf(out, "summary: %lld", (long long)llround(sum[0]));
	if (c->nevents == 2)
		fprintf(out, " %lld", (long long)llround(sum[1]));
	fputc('\n', out);
}

static int write_body(FILE *out, struct cg *c)
{
	uint32_t *fl_ids = calloc(c->strs.len + 1, sizeof(*fl_ids));
	uint32_t *fn_ids = calloc(c->strs.len + 1, sizeof(*fn_ids));
	struct obuf *o = malloc(sizeof(*o));
	if (!fl_ids || !fn_ids || !o) {
		free(fl_ids);
		free(fn_ids);
		free(o);
		return JH_ENOMEM;
	}
	obuf_init(o, out);
	uint32_t nfl = 0, nfn = 0, cur_fn = UINT32_MAX, cur_file = 0;
	for (size_t i = 0; i < c->t.nents; i++) {
		const struct cg_ent *e = &c->t.ents[i];
		const struct cg_fn *fn = &c->fns[e->fn];
		if (e->fn != cur_fn) {
			if (cur_fn != UINT32_MAX)
				obuf_putc(o, '\n');
			/* fl= before every fn=: an earlier fi= must not leak into
			 * the next function */
			write_name(o, "fl", c, fn->file, fl_ids, &nfl);
			write_name(o, "fn", c, fn->name, fn_ids, &nfn);
			cur_fn = e->fn;
			cur_file = fn->file;
		}
		if (e->file != cur_file) {
			write_name(o, "fi", c, e->file, fl_ids, &nfl);
			cur_file = e->file;
		}
		if (e->callee != CG_SELF) {
			const struct cg_fn *callee = &c->fns[e->callee];
			write_name(o, "cfl", c, callee->file, fl_ids, &nfl);
			write_name(o, "cfn", c, callee->name, fn_ids, &nfn);
			double calls = llround(e->calls) > 0 ? (double)llround(e->calls) : 1;
			obuf_write(o, "calls=", 6);
			obuf_f0(o, calls);
			obuf_putc(o, ' ');
			obuf_i64(o, callee->start_line);
			obuf_putc(o, '\n');
		}
		obuf_i64(o, e->line);
		obuf_putc(o, ' ');
		write_costs(o, c, e->cost);
	}
	obuf_flush(o);
	free(o);
	free(fl_ids);
	free(fn_ids);
	return 0;
}

int output_callgrind(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct cg c = { .r = r, .nevents = r->diff ? 2 : 1 };
	int rc = strtab_init(&c.strs);
	idmap_init(&c.fn_index);
	idmap_init(&c.frame_index);
	uint32_t *order = NULL;
	if (!rc)
		rc = build_frames(&c);
	if (!rc)
		rc = pseudo_frames(&c);
	if (!rc)
		rc = cgcost_sum(&c);
	if (!rc && !(order = malloc((c.nfns + 1) * sizeof(*order))))
		rc = JH_ENOMEM;
	if (!rc) {
		for (size_t i = 0; i < c.nfns; i++)
			order[i] = (uint32_t)i;
		jh_qsort_r(order, c.nfns, sizeof(*order), cmp_fns, &c);
		for (size_t i = 0; i < c.nfns; i++)
			c.fns[order[i]].rank = (uint32_t)i;
		rc = rank_strings(&c);
	}
	if (!rc) {
		rc = sort_ents(&c);
	}
	if (!rc) {
		write_header(out, &c);
		fputc('\n', out);
		rc = write_body(out, &c);
	}
	if (rc)
		rc = jh_err(err, errlen, rc, "out of memory");
	else if (ferror(out))
		rc = jh_err(err, errlen, JH_EIO, "cannot write the callgrind file: %s", strerror(errno));
	free(order);
	free(c.loc_frame0);
	free(c.lpf);
	free(c.frames);
	free(c.fns);
	free(c.t.ents);
	free(c.lf);
	free(c.srank);
	idmap_release(&c.fn_index);
	idmap_release(&c.frame_index);
	strtab_release(&c.strs);
	return rc;
}
