/*
 * --tree and --peek=RE: each function with its callers and its callees, in
 * the layout of pprof's -tree and -peek.
 *
 *   File: PROGRAM
 *   Type: inuse_space
 *   Showing nodes accounting for 2.6 MB, 100% of 2.6 MB total
 *   ----------------------------------------------------------+-------------
 *         flat  flat%   sum%        cum   cum%   calls calls% + context
 *   ----------------------------------------------------------+-------------
 *                                                2.0   100% |   cache_insert
 *          2.0 74.46% 74.46%        2.0 74.46%                | cache_store_value
 *   ----------------------------------------------------------+-------------
 *   ...                                        (callers above, callees below)
 *
 * Rules:
 *  - the entries are --text's rows: the same keys (inline levels as
 *    "name (inline)", the granularity and filters applied), the same flat
 *    and cum, in the same order (flat, or cum with --cum, then the name in
 *    byte order), and --nodecount=N keeps the first N; pprof's own default
 *    trimming (80 nodes, nodes under 0.5% and edges under 0.1% of the
 *    total) is not applied;
 *  - an edge is two neighbouring keys of a stack (caller, callee), after
 *    the allocator cut and the filters, weighted by the stack's value and
 *    counted once per stack however often recursion repeats it; a key
 *    calling itself is no edge (pprof's rules);
 *  - callers above the entry and callees below it are sorted by |weight|,
 *    then by the caller's name, then by the callee's; an edge whose
 *    weights add up to 0 is left out;
 *  - flat%, sum% and cum% are of --text's 100% (the sum of flat), calls%
 *    of the entry's cum, all in pprof's form ("%5.2f%%", "  100%" from
 *    99.95 to 100.05, "%5.2g%%" under 1); values as --text prints them;
 *  - --peek=RE shows only the entries whose name matches RE (a
 *    Perl-compatible regular expression; sum% adds up the entries shown;
 *    a pattern with '<' or '(' also matches their functions' full names,
 *    as --focus does); none matching is an error;
 *  - pprof's legend line ends in two stray tabs; this one does not.
 *
 * On a large profile (make bench: 1,000,000 stacks, 100 MB of report)
 * two threads sum the edges, each those of half the callers, so that
 * every edge's weight is added up in sample order as one thread would,
 * and the entries are written in chunks by two threads
 * (output/parwrite.h).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <math.h>
#include <pcre2.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/idmap.h"
#include "lib/pairtab.h"
#include "lib/threads.h"
#include "output/obuf.h"
#include "output/output.h"
#include "output/parwrite.h"

struct edge {
	uint32_t caller, callee;
	double w;
	uint32_t last;              /* by_locations(): the last sample that added to it, + 1 */
};

struct tree {
	const struct report *r;
	uint32_t *rank;                   /* per key: its place in byte order */
	uint8_t *shown;                   /* per key: an entry of the report */
	struct edge *e;                   /* every edge */
	size_t n;
	uint32_t *by_caller, *by_callee;  /* edge ids grouped by key */
	uint32_t *caller0, *callee0;      /* per key: first of its group, + one past the end */
	double *sum;                      /* per entry: sum% of the entries shown up to it */
};

/* The edge table (lib/pairtab.h): keyed by (caller, callee), each slot holding
 * the edge's sums itself, so that a lookup reads one slot (a large
 * profile has hundreds of thousands of edges, looked up tens of millions
 * of times, mostly cache misses).  At most half full. */
struct eslot {
	struct pairtab_key k;       /* (caller, callee) and the edge's id + 1 */
	uint32_t last;              /* the last sample that added to it, + 1 */
	double w;
};

/* The edges whose caller & MASK is PART, summed by one thread over every
 * sample, so that each edge's weight is added up in sample order, as one
 * thread alone would (two threads take a caller each of two). */
struct tpart {
	const struct tree *t;
	uint32_t part, mask;
	struct pairtab slots;       /* struct eslot */
	struct edge *e;
	size_t n, cap;
	int rc;
};

static int add_edge(struct tpart *t, uint32_t caller, uint32_t callee, uint32_t sample, double w)
{
	struct eslot *e = pairtab_probe(&t->slots, caller, callee);
	if (!e->k.id) {
		struct edge ne = { caller, callee, 0, 0 };
		if (t->n >= UINT32_MAX - 1 || JH_PUSH(t->e, t->n, t->cap, ne))
			return JH_ENOMEM;
		if (pairtab_put(&t->slots, e, caller, callee, (uint32_t)t->n - 1))
			return JH_ENOMEM;
		/* the table may have moved: find the slot again */
		return add_edge(t, caller, callee, sample, w);
	}
	if (e->last == sample + 1)
		return 0;   /* once per stack */
	e->last = sample + 1;
	e->w += w;
	return 0;
}

/* Only the edges of the entries shown are summed: --peek and
 * --nodecount show a few of the keys, and a shell's answer must not wait
 * for the edges of all the others. */
static int add_stack(struct tpart *t, uint32_t sample, const uint32_t *keys, size_t n, double v)
{
	const uint8_t *shown = t->t->shown;
	/* the stack's slots first, so that their cache misses overlap */
	for (size_t i = 0; i + 1 < n; i++)
		if ((keys[i + 1] & t->mask) == t->part)
			pairtab_prefetch(&t->slots, keys[i + 1], keys[i]);
	for (size_t i = 0; i + 1 < n; i++)
		if ((keys[i + 1] & t->mask) == t->part && keys[i] != keys[i + 1] &&
		    (shown[keys[i]] | shown[keys[i + 1]]) &&
		    add_edge(t, keys[i + 1], keys[i], sample, v))
			return JH_ENOMEM;
	return 0;
}

/* The id of edge (CALLER, CALLEE) of T, added when new; UINT32_MAX when
 * it is no edge of T's (another thread's caller, a key calling itself,
 * neither end shown); JH_ENOMEM. */
static int64_t edge_id(struct tpart *t, uint32_t caller, uint32_t callee)
{
	const uint8_t *shown = t->t->shown;
	if ((caller & t->mask) != t->part || caller == callee || !(shown[caller] | shown[callee]))
		return UINT32_MAX;
	const struct pairtab_key *e = pairtab_probe(&t->slots, caller, callee);
	if (e->id)
		return e->id - 1;
	if (add_edge(t, caller, callee, UINT32_MAX - 1, 0))
		return JH_ENOMEM;
	return (int64_t)t->n - 1;
}

static void add_once(struct tpart *t, uint32_t id, uint32_t stamp, double v)
{
	struct edge *e = &t->e[id];
	if (e->last != stamp) {   /* once per stack */
		e->last = stamp;
		e->w += v;
	}
}

/* Without filters a stack's keys are its locations' keys, whole but for
 * the allocator cut of the first: each edge inside a location is found
 * once beforehand (INNER, per lockeys entry: the edge from the next
 * entry to it), and the edge from a location to the one it calls is
 * kept per calling location (a call site calls one function, almost
 * always), so that a stack costs a few reads per location, not a table
 * lookup per pair of keys.  The edges and their sums are those of
 * add_stack(), each added up in sample order. */
static int by_locations(struct tpart *t)
{
	const struct report *r = t->t->r;
	const struct aggregate *a = r->a;
	const struct profile *p = r->p;
	uint32_t *inner = malloc((a->nlockeys + 1) * sizeof(*inner));
	uint32_t (*memo)[2] = malloc((p->nlocs + 1) * sizeof(*memo));   /* callee key, edge id */
	int rc = inner && memo ? 0 : JH_ENOMEM;
	for (size_t l = 0; l < p->nlocs && !rc; l++) {
		const struct agg_locinfo *li = &a->locinfo[l];
		memo[l][0] = memo[l][1] = UINT32_MAX;
		for (uint32_t j = 0; j < li->nkeys && !rc; j++) {
			int64_t id = j + 1 < li->nkeys
				? edge_id(t, a->lockeys[li->key0 + j + 1], a->lockeys[li->key0 + j])
				: UINT32_MAX;
			if (id < 0)
				rc = (int)id;
			inner[li->key0 + j] = (uint32_t)id;
		}
	}
	for (size_t si = 0; si < p->nsamples && !rc; si++) {
		double v = pf_value_of(aggregate_values(a, p, (uint32_t)si), r->value);
		if (v == 0)
			continue;
		const struct pf_sample *s = &p->samples[si];
		const uint32_t *st = p->stacks + s->stack0;
		uint32_t skip, stamp = (uint32_t)si + 1, last = UINT32_MAX;
		uint32_t i = aggregate_stack_start(a, p, (uint32_t)si, &skip);
		for (uint32_t k = i; k < s->depth; k++)
			__builtin_prefetch(&a->locinfo[st[k]]);
		for (; i < s->depth; i++, skip = 0) {
			uint32_t loc = st[i];
			const struct agg_locinfo *li = &a->locinfo[loc];
			if (skip >= li->nkeys)
				continue;
			/* the call into the location below: its outermost key */
			if (last != UINT32_MAX) {
				uint32_t caller = a->lockeys[li->key0 + skip];
				if (memo[loc][0] != last) {
					int64_t id = edge_id(t, caller, last);
					if (id < 0) {
						rc = (int)id;
						break;
					}
					memo[loc][0] = last;
					memo[loc][1] = (uint32_t)id;
				}
				if (memo[loc][1] != UINT32_MAX)
					add_once(t, memo[loc][1], stamp, v);
			}
			for (uint32_t e = li->key0 + skip; e + 1 < li->key0 + li->nkeys; e++)
				if (inner[e] != UINT32_MAX)
					add_once(t, inner[e], stamp, v);
			last = a->lockeys[li->key0 + li->nkeys - 1];
		}
	}
	free(inner);
	free(memo);
	return rc;
}

static void *sum_part(void *arg)
{
	struct tpart *t = arg;
	const struct report *r = t->t->r;
	uint32_t *keys = NULL;
	size_t cap = 0;
	if (pairtab_init(&t->slots, sizeof(struct eslot))) {
		t->rc = JH_ENOMEM;
		return NULL;
	}
	if (!r->a->filtered) {
		t->rc = by_locations(t);
		pairtab_release(&t->slots);
		return NULL;
	}
	for (size_t si = 0; si < r->p->nsamples && !t->rc; si++) {
		double v = pf_value_of(aggregate_values(r->a, r->p, (uint32_t)si), r->value);
		if (v == 0)
			continue;
		int64_t n = aggregate_stack_keys(r->a, r->p, (uint32_t)si, &keys, &cap);
		t->rc = n < 0 ? (int)n : add_stack(t, (uint32_t)si, keys, (size_t)n, v);
	}
	free(keys);
	for (size_t i = 0; !t->rc && i < t->slots.cap; i++) {
		const struct eslot *e = pairtab_at(&t->slots, i);
		if (e->k.id)
			t->e[e->k.id - 1].w = e->w;
	}
	pairtab_release(&t->slots);
	return NULL;
}

/* Profiles of this many samples or more are summed by two threads. */
#define TREE_SPLIT_MIN 65536

static int collect(struct tree *t)
{
	size_t ns = t->r->p->nsamples;
	bool two = (ns >= TREE_SPLIT_MIN || jh_threads_forced()) && jh_threads() > 1;
	struct tpart h[2] = { { .t = t, .part = 0, .mask = two ? 1 : 0 },
			      { .t = t, .part = 1, .mask = 1 } };
	jh_run_two(sum_part, &h[0], two ? sum_part : NULL, &h[1], two);
	int rc = h[0].rc ? h[0].rc : h[1].rc;
	/* the second thread's edges after the first's */
	if (!rc && h[1].n && jh_grow(&h[0].e, &h[0].cap, h[0].n + h[1].n, sizeof(*h[0].e)))
		rc = JH_ENOMEM;
	if (!rc && h[1].n) {
		memcpy(h[0].e + h[0].n, h[1].e, h[1].n * sizeof(*h[1].e));
		h[0].n += h[1].n;
	}
	free(h[1].e);
	t->e = h[0].e;
	t->n = h[0].n;
	return rc;
}

/* Groups the edges by caller and by callee (a counting sort by key id). */
static int group(struct tree *t)
{
	size_t nk = t->r->a->keys.len;
	t->by_caller = malloc((t->n + 1) * sizeof(uint32_t));
	t->by_callee = malloc((t->n + 1) * sizeof(uint32_t));
	t->caller0 = calloc(nk + 2, sizeof(uint32_t));
	t->callee0 = calloc(nk + 2, sizeof(uint32_t));
	if (!t->by_caller || !t->by_callee || !t->caller0 || !t->callee0)
		return JH_ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		t->caller0[t->e[i].caller + 1]++;
		t->callee0[t->e[i].callee + 1]++;
	}
	for (size_t k = 1; k <= nk; k++) {
		t->caller0[k] += t->caller0[k - 1];
		t->callee0[k] += t->callee0[k - 1];
	}
	uint32_t *fill_r = malloc((nk + 1) * sizeof(uint32_t)), *fill_e = malloc((nk + 1) * sizeof(uint32_t));
	if (!fill_r || !fill_e) {
		free(fill_r);
		free(fill_e);
		return JH_ENOMEM;
	}
	memcpy(fill_r, t->caller0, nk * sizeof(uint32_t));
	memcpy(fill_e, t->callee0, nk * sizeof(uint32_t));
	for (size_t i = 0; i < t->n; i++) {
		t->by_caller[fill_r[t->e[i].caller]++] = (uint32_t)i;
		t->by_callee[fill_e[t->e[i].callee]++] = (uint32_t)i;
	}
	free(fill_r);
	free(fill_e);
	return 0;
}

static int cmp_edges(const void *x, const void *y, void *arg)
{
	const struct tree *t = arg;
	const struct edge *a = &t->e[*(const uint32_t *)x], *b = &t->e[*(const uint32_t *)y];
	if (fabs(a->w) != fabs(b->w))
		return fabs(a->w) > fabs(b->w) ? -1 : 1;
	/* names in byte order, by their ranks */
	if (a->caller != b->caller)
		return t->rank[a->caller] < t->rank[b->caller] ? -1 : 1;
	if (a->callee != b->callee)
		return t->rank[a->callee] < t->rank[b->callee] ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int cmp_keys(const void *x, const void *y, void *arg)
{
	const struct strtab *k = arg;
	return strcmp(strtab_get(k, *(const uint32_t *)x), strtab_get(k, *(const uint32_t *)y));
}

/* t->rank: every key's place in byte order of the names (keys are
 * distinct names), so that the edges sort by numbers. */
static int rank_keys(struct tree *t)
{
	const struct strtab *k = &t->r->a->keys;
	uint32_t *order = malloc((k->len + 1) * sizeof(*order));
	t->rank = malloc((k->len + 1) * sizeof(*t->rank));
	if (!order || !t->rank) {
		free(order);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < k->len; i++)
		order[i] = (uint32_t)i;
	jh_qsort_r(order, k->len, sizeof(*order), cmp_keys, (void *)k);
	for (size_t i = 0; i < k->len; i++)
		t->rank[order[i]] = (uint32_t)i;
	free(order);
	return 0;
}

/* pprof's percentage: "  100%" near 100, two decimals from 1, else two
 * significant digits. */
static void percent(char *buf, size_t len, double v, double total)
{
	double ratio = total != 0 ? fabs(v / total) * 100 : 0;
	if (ratio >= 99.95 && ratio <= 100.05)
		snprintf(buf, len, "  100%%");
	else if (ratio >= 1.0)
		snprintf(buf, len, "%5.2f%%", ratio);
	else
		snprintf(buf, len, "%5.2g%%", ratio);
}

/* S right-aligned in WIDTH columns, as printf's "%WIDTHs". */
static void put_padded(struct obuf *o, const char *s, size_t width)
{
	size_t n = strlen(s);
	for (; n < width; width--)
		obuf_putc(o, ' ');
	obuf_write(o, s, n);
}

/* The edges of one entry (EDGES[0..n) of the key), sorted, one a line;
 * the name is the other end's. */
static int write_edges(struct obuf *o, const struct tree *t, const uint32_t *ids, size_t n,
		       bool callers, double cum)
{
	uint32_t *sorted = malloc((n + 1) * sizeof(*sorted));
	if (!sorted)
		return JH_ENOMEM;
	memcpy(sorted, ids, n * sizeof(*sorted));
	jh_qsort_r(sorted, n, sizeof(*sorted), cmp_edges, (void *)t);
	for (size_t i = 0; i < n; i++) {
		const struct edge *e = &t->e[sorted[i]];
		if (e->w == 0)
			continue;
		char v[64], pc[32];
		text_format_value(v, sizeof(v), e->w, t->r->units);
		percent(pc, sizeof(pc), e->w, cum);
		put_padded(o, v, 50);
		obuf_putc(o, ' ');
		obuf_puts(o, pc);
		obuf_write(o, " |   ", 5);
		obuf_puts(o, strtab_get(&t->r->a->keys, callers ? e->caller : e->callee));
		obuf_putc(o, '\n');
	}
	free(sorted);
	return 0;
}

/* The number of entries --nodecount leaves. */
static size_t entries(const struct report *r)
{
	size_t n = r->a->norder;
	if (r->nodecount > 0 && (size_t)r->nodecount < n)
		n = (size_t)r->nodecount;
	return n;
}

/* With a --peek pattern that holds '<' or '(' (agg_wants_full), the keys
 * of the frames whose function's full name matches RE, as 1 in a byte per
 * key (NULL when out of memory): a short name has neither template
 * arguments nor a parameter list.  Each function is tried once. */
static uint8_t *full_matches(const struct report *r, pcre2_code *re, pcre2_match_data *md)
{
	const struct aggregate *a = r->a;
	const struct profile *p = r->p;
	uint8_t *keys = calloc(a->keys.len + 1, 1), *fn = calloc(p->nfuncs + 1, 1);
	if (!keys || !fn) {
		free(keys);
		free(fn);
		return NULL;
	}
	for (size_t l = 0; l < p->nlocs && a->locinfo; l++) {
		const struct pf_location *loc = &p->locs[l];
		const struct agg_locinfo *li = &a->locinfo[l];
		for (uint32_t j = 0; j < loc->nlines && j < li->nkeys; j++) {
			uint32_t f = p->lines[loc->line0 + j].function;
			if (f >= p->nfuncs)
				continue;
			if (!fn[f]) {
				const char *full = strtab_get(&p->strs, p->funcs[f].name);
				fn[f] = pcre2_match(re, (PCRE2_SPTR)full, PCRE2_ZERO_TERMINATED, 0, 0, md,
						    NULL) >= 0 ? 2 : 1;
			}
			if (fn[f] == 2)
				keys[a->lockeys[li->key0 + j]] = 1;
		}
	}
	free(fn);
	return keys;
}

/* Marks the entries the report shows: the first ones, those matching
 * RE (--peek) when it is given, by their shown name or, for a pattern
 * with '<' or '(', their full name too.  Returns how many. */
static size_t mark_shown(struct tree *t, pcre2_code *re, pcre2_match_data *md)
{
	const struct aggregate *a = t->r->a;
	size_t n = 0;
	uint8_t *full = re && agg_wants_full(t->r->peek) ? full_matches(t->r, re, md) : NULL;
	for (size_t i = 0; i < entries(t->r); i++) {
		uint32_t key = a->order[i];
		const char *name = strtab_get(&a->keys, key);
		if (re && !(full && full[key]) &&
		    pcre2_match(re, (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) < 0)
			continue;
		t->shown[key] = 1;
		n++;
	}
	free(full);
	return n;
}

static const char separator[] =
	"----------------------------------------------------------+-------------";

/* Entries [FROM, TO) of the report, each with its callers and callees
 * (parwrite_fn). */
static int write_entries(void *ctx, int who, size_t from, size_t to, struct obuf *o)
{
	const struct tree *t = ctx;
	const struct report *r = t->r;
	const struct aggregate *a = r->a;
	double total = a->flat_total;
	for (size_t i = from; i < to; i++) {
		uint32_t key = a->order[i];
		const struct agg_row *row = &a->rows[key];
		if (!t->shown[key])
			continue;
		obuf_puts(o, separator);
		obuf_putc(o, '\n');
		if (write_edges(o, t, t->by_callee + t->callee0[key],
				t->callee0[key + 1] - t->callee0[key], true, row->cum))
			return JH_ENOMEM;
		char f[64], fp[32], sp[32], c[64], cp[32];
		text_format_value(f, sizeof(f), row->flat, r->units);
		text_format_value(c, sizeof(c), row->cum, r->units);
		percent(fp, sizeof(fp), row->flat, total);
		percent(sp, sizeof(sp), t->sum[i], total);
		percent(cp, sizeof(cp), row->cum, total);
		put_padded(o, f, 10);
		obuf_putc(o, ' ');
		obuf_puts(o, fp);
		obuf_putc(o, ' ');
		obuf_puts(o, sp);
		obuf_putc(o, ' ');
		put_padded(o, c, 10);
		obuf_putc(o, ' ');
		obuf_puts(o, cp);
		obuf_puts(o, "                | ");
		obuf_puts(o, strtab_get(&a->keys, key));
		obuf_putc(o, '\n');
		if (write_edges(o, t, t->by_caller + t->caller0[key],
				t->caller0[key + 1] - t->caller0[key], false, row->cum))
			return JH_ENOMEM;
	}
	return 0;
}

static int write_tree(FILE *out, struct tree *t, size_t matched, char *err, size_t errlen)
{
	const struct report *r = t->r;
	const struct aggregate *a = r->a;
	size_t shown = entries(r);
	double total = a->flat_total, flat_shown = 0;
	for (size_t i = 0; i < shown; i++)
		flat_shown += a->rows[a->order[i]].flat;
	char v1[64], v2[64], pc[32];
	output_labels(out, r);
	text_format_value(v1, sizeof(v1), flat_shown, r->units);
	text_format_value(v2, sizeof(v2), total, r->units);
	percent(pc, sizeof(pc), flat_shown, total);
	fprintf(out, "Showing nodes accounting for %s %s, %s of %s %s total\n", v1,
		text_unit_name(r->units), pc + strspn(pc, " "), v2, text_unit_name(r->units));
	if (shown < a->norder)
		fprintf(out, "Showing top %zu nodes out of %zu\n", shown, a->norder);
	fprintf(out, "%s\n", separator);
	fprintf(out, "      flat  flat%%   sum%%        cum   cum%%   calls calls%% + context\n");
	/* sum% adds up the entries shown, as pprof's */
	if (!(t->sum = malloc((shown + 1) * sizeof(*t->sum))))
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	double sum = 0;
	for (size_t i = 0; i < shown; i++) {
		uint32_t key = a->order[i];
		if (t->shown[key])
			sum += a->rows[key].flat;
		t->sum[i] = sum;
	}
	if (parwrite(out, shown, 0, write_entries, t))
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	if (shown)
		fprintf(out, "%s\n", separator);
	if (r->peek && !matched)
		return jh_err(err, errlen, JH_EUSAGE, "--peek: no function matches '%s'", r->peek);
	return 0;
}

int output_tree(FILE *out, const struct report *r, char *err, size_t errlen)
{
	pcre2_code *re = NULL;
	pcre2_match_data *md = NULL;
	if (r->peek) {
		int code;
		PCRE2_SIZE off;
		re = pcre2_compile((PCRE2_SPTR)r->peek, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
		if (!re) {
			PCRE2_UCHAR msg[200];
			pcre2_get_error_message(code, msg, sizeof(msg));
			return jh_err(err, errlen, JH_EUSAGE, "--peek: bad regular expression '%s' at offset %zu: %s",
				      r->peek, (size_t)off, (const char *)msg);
		}
		if (!(md = pcre2_match_data_create(4, NULL))) {
			pcre2_code_free(re);
			return jh_err(err, errlen, JH_ENOMEM, "out of memory");
		}
	}
	struct tree t = { .r = r };
	size_t matched = 0;
	int rc = (t.shown = calloc(r->a->keys.len + 1, 1)) ? 0 : JH_ENOMEM;
	if (!rc) {
		matched = mark_shown(&t, re, md);
		rc = collect(&t);
	}
	if (!rc)
		rc = group(&t);
	if (!rc)
		rc = rank_keys(&t);
	if (rc)
		rc = jh_err(err, errlen, rc, "out of memory");
	else
		rc = write_tree(out, &t, matched, err, errlen);
	free(t.sum);
	free(t.rank);
	free(t.shown);
	free(t.e);
	free(t.by_caller);
	free(t.by_callee);
	free(t.caller0);
	free(t.callee0);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	if (!rc && ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return rc;
}
