/*
 * --traces: every stack with its value, in the layout of pprof's -traces.
 *
 *   File: PROGRAM                      the program's base name (no line when unknown)
 *   Type: inuse_space                  the chosen value
 *   -----------+-------------------------------------------------------
 *       thread:  t1 worker             with --thread only: the thread's label
 *          2.0   cache_store_value     the value, then the leaf frame
 *                cache_insert          its callers, one a line, outward
 *                ...
 *   -----------+-------------------------------------------------------
 *                                      (one block a stack, a separator last)
 *
 * Rules:
 *  - the frames are a stack's display keys as --text and --collapsed see
 *    them: allocator frames cut, inline levels as frames of their own
 *    ("make_buf (inline)"), the granularity (--lines, --files,
 *    --addresses) and the filters applied; a stack that --focus, --ignore,
 *    --retain or --exclude leave empty is left out;
 *  - stacks with the same frames are one block, their values summed, and
 *    blocks whose value is 0 are left out (with --base the value is the
 *    change, so stacks that did not change are left out);
 *  - blocks are sorted by value, largest first, then by their frames
 *    from the leaf out, in byte order of the names: the same bytes on
 *    every run;
 *  - values are printed as --text prints them: MB with one decimal,
 *    or bytes (--show_bytes) or objects as integers;
 *  - a stack that is only allocator frames shows one frame, "[allocator]"
 *    ("[no frames]" for a stack without any), as --collapsed does.
 * pprof prints one block per sample of the file, in the file's order,
 * each value in a unit of its own (kB, MB), and a sample per thread label.
 */
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/seqsort.h"
#include "output/obuf.h"
#include "output/output.h"
#include "output/parwrite.h"

struct trace {
	uint32_t key0, nkeys;       /* keys[key0 ..], leaf first */
	double value;
};

struct traces {
	uint32_t *keys;
	size_t nkeys, cap_keys;
	struct trace *t;
	size_t n, cap;
	const struct aggregate *a;
	uint32_t *rank;             /* per key id: its place in byte order of the names */
};

/* key ids that stand for the two pseudo frames (no real key is that large) */

#define KEY_ALLOCATOR_ONLY UINT32_MAX
#define KEY_NO_FRAMES (UINT32_MAX - 1)

static const char *key_name(const struct traces *ts, uint32_t key)
{
	if (key == KEY_ALLOCATOR_ONLY)
		return "[allocator]";
	if (key == KEY_NO_FRAMES)
		return "[no frames]";
	return strtab_get(&ts->a->keys, key);
}

/* Where a key's place is in ts->rank: its id, and for the pseudo frames
 * the two places after the keys. */
static size_t rank_index(const struct traces *ts, uint32_t key)
{
	if (key == KEY_ALLOCATOR_ONLY)
		return ts->a->keys.len;
	if (key == KEY_NO_FRAMES)
		return ts->a->keys.len + 1;
	return key;
}

static int cmp_key_names(const void *x, const void *y, void *arg)
{
	const struct traces *ts = arg;
	size_t n = ts->a->keys.len, a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	const char *na = a < n ? strtab_get(&ts->a->keys, (uint32_t)a) : a == n ? "[allocator]" : "[no frames]";
	const char *nb = b < n ? strtab_get(&ts->a->keys, (uint32_t)b) : b == n ? "[allocator]" : "[no frames]";
	int c = strcmp(na, nb);
	return c ? c : (a < b ? -1 : a > b);
}

/* ts->rank: every key's place in byte order of the names, sorted once,
 * so that stacks compare by numbers. */
static int rank_keys(struct traces *ts)
{
	size_t n = ts->a->keys.len + 2;
	uint32_t *order = malloc(n * sizeof(*order));
	ts->rank = malloc(n * sizeof(*ts->rank));
	if (!order || !ts->rank) {
		free(order);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	jh_qsort_r(order, n, sizeof(*order), cmp_key_names, ts);
	for (size_t i = 0; i < n; i++)
		ts->rank[order[i]] = (uint32_t)i;
	free(order);
	return 0;
}

/* A trace's place in the report: its value, largest first, then its
 * place in the order of the frames (leaf first, by rank). */
struct place {
	double value;
	uint32_t pos, id;
};

static int cmp_places(const void *x, const void *y)
{
	const struct place *a = x, *b = y;
	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Merges the stacks with the same keys (their values added in the order
 * they came) and sorts the traces by value, then frame by frame from the
 * leaf in byte order of the names (a stack before the longer stacks it
 * starts): the frames' ranks are sorted as sequences once
 * (lib/seqsort.h; equal ones side by side, in the order they came), then
 * the traces by value and that place, so the comparison sort never reads
 * a frame.  Traces of value 0 are left out. */
static int sort_traces(struct traces *ts)
{
	uint32_t *sym = malloc((ts->nkeys + 1) * sizeof(*sym));
	struct seqsort_item *it = malloc((ts->n + 1) * sizeof(*it));
	struct place *pl = malloc((ts->n + 1) * sizeof(*pl));
	struct trace *sorted = NULL;
	if (!sym || !it || !pl) {
		free(sym);
		free(it);
		free(pl);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < ts->nkeys; i++)
		sym[i] = ts->rank[rank_index(ts, ts->keys[i])];
	for (size_t i = 0; i < ts->n; i++)
		it[i] = (struct seqsort_item){ ts->t[i].key0, ts->t[i].nkeys, (uint32_t)i, 0 };
	seqsort(it, ts->n, sym, (uint32_t)(ts->a->keys.len + 2));
	size_t m = 0;
	for (size_t i = 0; i < ts->n;) {
		const struct trace *first = &ts->t[it[i].id];
		double v = first->value;
		size_t j = i + 1;
		for (; j < ts->n; j++) {
			const struct trace *t = &ts->t[it[j].id];
			if (t->nkeys != first->nkeys ||
			    memcmp(sym + t->key0, sym + first->key0, t->nkeys * sizeof(*sym)))
				break;
			v += t->value;
		}
		if (v != 0)
			pl[m++] = (struct place){ v, (uint32_t)i, it[i].id };
		i = j;
	}
	free(sym);
	free(it);
	jh_qsort(pl, m, sizeof(*pl), cmp_places);
	if (!(sorted = malloc((m + 1) * sizeof(*sorted)))) {
		free(pl);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < m; i++) {
		sorted[i] = ts->t[pl[i].id];
		sorted[i].value = pl[i].value;
	}
	free(ts->t);
	ts->t = sorted;
	ts->n = m;
	ts->cap = m + 1;
	free(pl);
	return 0;
}

struct collector {
	struct traces *ts;
	const struct report *r;
};

static int add_stack(void *ctx, uint32_t sample, const uint32_t *keys, size_t n, double v)
{
	struct collector *c = ctx;
	struct traces *ts = c->ts;
	uint32_t pseudo;
	if (n == 0 && c->r->a->filtered)
		return 0;   /* the filters dropped it */
	if (n == 0) {
		pseudo = c->r->p->samples[sample].depth ? KEY_ALLOCATOR_ONLY : KEY_NO_FRAMES;
		keys = &pseudo;
		n = 1;
	}
	struct trace t = { (uint32_t)ts->nkeys, (uint32_t)n, v };
	if (ts->nkeys + n > UINT32_MAX || ts->n >= UINT32_MAX - 1 ||
	    jh_grow(&ts->keys, &ts->cap_keys, ts->nkeys + n, sizeof(*ts->keys)) ||
	    JH_PUSH(ts->t, ts->n, ts->cap, t))
		return JH_ENOMEM;
	memcpy(ts->keys + ts->nkeys, keys, n * sizeof(*keys));
	ts->nkeys += n;
	return 0;
}

/* One trace per distinct stack of keys, its values added up in sample
 * order, sorted by value. */
static int collect(struct traces *ts, const struct report *r)
{
	struct collector c = { ts, r };
	int rc = rank_keys(ts);
	if (!rc)
		rc = aggregate_each_stack(r->a, r->p, r->value, add_stack, &c);
	return rc ? rc : sort_traces(ts);
}

const char *output_value_name(enum pf_value v)
{
	static const char *const names[] = { "inuse_objects", "inuse_space", "alloc_objects",
					     "alloc_space", "churn_objects", "churn_space" };
	return v >= 0 && v < PF_NALL_VALUES ? names[v] : "?";
}

void output_labels(FILE *out, const struct report *r)
{
	const char *prog = r->program ? r->program : "";
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	if (*base)
		fprintf(out, "File: %s\n", base);
	fprintf(out, "Type: %s\n", output_value_name(r->value));
}

static const char separator[] = "-----------+-------------------------------------------------------";

struct writer {
	const struct traces *ts;
	const struct report *r;
};

/* Traces [FROM, TO), a block each (parwrite_fn: on a large profile two
 * threads make the blocks, a gigabyte of them for the benchmark's
 * 1,000,000 stacks). */
static int write_traces(void *ctx, int who, size_t from, size_t to, struct obuf *o)
{
	const struct writer *w = ctx;
	const struct traces *ts = w->ts;
	const struct report *r = w->r;
	for (size_t i = from; i < to; i++) {
		const struct trace *t = &ts->t[i];
		if (i + 8 < to) {
			const uint32_t *later = ts->keys + ts->t[i + 8].key0;
			__builtin_prefetch(later);
			__builtin_prefetch(later + 16);
		}
		obuf_write(o, separator, sizeof(separator) - 1);
		obuf_putc(o, '\n');
		if (r->thread) {
			obuf_puts(o, "    thread:  ");   /* "%10s:  %s\n" */
			obuf_puts(o, r->thread);
			obuf_putc(o, '\n');
		}
		char v[64];
		text_format_value(v, sizeof(v), t->value, r->units);
		/* "%10s   %s\n" */
		size_t vl = strlen(v);
		for (size_t k = vl; k < 10; k++)
			obuf_putc(o, ' ');
		obuf_write(o, v, vl);
		obuf_write(o, "   ", 3);
		const char *name = key_name(ts, ts->keys[t->key0]);
		obuf_puts(o, name);
		obuf_putc(o, '\n');
		for (uint32_t k = 1; k < t->nkeys; k++) {
			obuf_write(o, "             ", 13);   /* "%10s   " of "" */
			uint32_t key = ts->keys[t->key0 + k];
			if (key < ts->a->keys.len)
				obuf_write(o, ts->a->keys.ents[key].s, ts->a->keys.ents[key].n);
			else
				obuf_puts(o, key_name(ts, key));
			obuf_putc(o, '\n');
		}
	}
	return 0;
}

int output_traces(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct traces ts = { .a = r->a };
	int rc = collect(&ts, r);
	if (!rc) {
		output_labels(out, r);
		struct writer w = { &ts, r };
		rc = parwrite(out, ts.n, 0, write_traces, &w);
		if (!rc)
			fprintf(out, "%s\n", separator);
	}
	free(ts.keys);
	free(ts.t);
	free(ts.rank);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}
