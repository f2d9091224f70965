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
#include "lib/threads.h"
#include "output/obuf.h"
#include "output/output.h"
#include "output/parwrite.h"

/*
 * How the 1,000,000 stacks of the benchmark's dump (make bench: 33 million
 * frames, 1.2 GB of text) become a report in little more time than the
 * bytes take to reach the kernel:
 *  - every frame is stored once, as its key's rank in byte order of the
 *    names (rank_keys), so that stacks compare and sort as numbers and
 *    the writer maps a rank back to its key;
 *  - two threads each turn half of the samples into frames, into one
 *    array where each half has a stretch as large as its samples could
 *    need: nothing is grown or copied, the room left unused is never
 *    touched (as output/stacks.c does);
 *  - the stacks are sorted as sequences in two threads (lib/seqsort.h),
 *    equal neighbours found by a hash of their frames before any frame is
 *    compared, and the blocks ordered by value with a radix sort (stable,
 *    so equal values keep the sequences' order) instead of a comparison
 *    sort;
 *  - two threads make the text (output/parwrite.h).
 */

struct trace {
	uint32_t sym0, nsyms;       /* syms[sym0 ..]: the frames' ranks, leaf first */
	double value;
	uint64_t hash;              /* of the ranks: stacks that differ, told apart
	                               (almost always) without reading them */
};

/* A block of the report: its value (the sum of its stacks'), its place
 * in the order of the frames (pos) and its first stack (id). */
struct place {
	double value;
	uint32_t pos, id;
};

struct traces {
	uint32_t *syms;             /* every stack's frames, as ranks */
	struct trace *t;
	size_t n, cap;
	const struct aggregate *a;
	/* the frames' names: a key's id, and the pseudo frames after the
	 * keys (RANK_ALLOCATOR_ONLY, RANK_NO_FRAMES) */
	uint32_t *rank;             /* per name: its place in byte order */
	uint32_t *key_of;           /* per place: the name */
	/* per place: its frame line as the report writes it after a block's
	 * first, 13 spaces, the name and a newline, at lines + line_at[place]
	 * (the next place's line starts where it ends) */
	char *lines;
	size_t *line_at;
	struct place *pl;           /* the blocks, in the report's order */
	size_t npl;
};

/* The names of the two pseudo frames, after the keys. */
#define RANK_ALLOCATOR_ONLY(a) ((a)->keys.len)
#define RANK_NO_FRAMES(a) ((a)->keys.len + 1)

/* A frame after a block's first: "%10s   %s\n" with an empty value. */
#define INDENT 13

static int cmp_key_names(const void *x, const void *y, void *arg)
{
	const struct traces *ts = arg;
	size_t n = ts->a->keys.len, a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	const char *na = a < n ? strtab_get(&ts->a->keys, (uint32_t)a) : a == n ? "[allocator]" : "[no frames]";
	const char *nb = b < n ? strtab_get(&ts->a->keys, (uint32_t)b) : b == n ? "[allocator]" : "[no frames]";
	int c = strcmp(na, nb);
	return c ? c : (a < b ? -1 : a > b);
}

/* The name of the frame at place PLACE, and its length in *LEN. */
static const char *place_name(const struct traces *ts, size_t place, size_t *len)
{
	const struct strtab *keys = &ts->a->keys;
	uint32_t key = ts->key_of[place];
	const char *name = key < keys->len ? keys->ents[key].s
			   : key == RANK_ALLOCATOR_ONLY(ts->a) ? "[allocator]" : "[no frames]";
	*len = key < keys->len ? keys->ents[key].n : strlen(name);
	return name;
}

/* ts->lines: each place's frame line made once, so that a frame of the
 * report (33 million of them on the benchmark's 1,000,000 stacks) is one
 * copy. */
static int make_lines(struct traces *ts, size_t n)
{
	size_t total = 0, len;
	if (!(ts->line_at = malloc((n + 1) * sizeof(*ts->line_at))))
		return JH_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ts->line_at[i] = total;
		place_name(ts, i, &len);
		total += INDENT + len + 1;
	}
	ts->line_at[n] = total;
	if (!(ts->lines = malloc(total + 1)))
		return JH_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char *l = ts->lines + ts->line_at[i];
		const char *name = place_name(ts, i, &len);
		memset(l, ' ', INDENT);
		memcpy(l + INDENT, name, len);
		l[INDENT + len] = '\n';
	}
	return 0;
}

/* ts->rank and ts->key_of: every key's place in byte order of the names,
 * sorted once, so that stacks compare by numbers. */
static int rank_keys(struct traces *ts)
{
	size_t n = ts->a->keys.len + 2;
	ts->key_of = malloc(n * sizeof(*ts->key_of));
	ts->rank = malloc(n * sizeof(*ts->rank));
	if (!ts->key_of || !ts->rank)
		return JH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		ts->key_of[i] = (uint32_t)i;
	jh_qsort_r(ts->key_of, n, sizeof(*ts->key_of), cmp_key_names, ts);
	for (size_t i = 0; i < n; i++)
		ts->rank[ts->key_of[i]] = (uint32_t)i;
	return make_lines(ts, n);
}

/* One half of the samples made into stacks. */
struct half {
	const struct report *r;
	const uint32_t *rank;
	size_t from, to;            /* samples */
	uint32_t *syms;             /* the whole array */
	size_t nsyms, cap_syms;     /* the next frame, the end of the stretch */
	bool fixed;                 /* the stretch cannot grow */
	struct trace *t;
	size_t n, cap;
	int rc;
};

/* Sample SI as a stack of ranks, when its value is not 0 and the filters
 * keep it (as aggregate_each_stack() and aggregate_stack_keys() see
 * it); a stack left without a frame of its own shows one pseudo frame. */
static int add_sample(struct half *h, uint32_t si, uint32_t **keys, size_t *cap)
{
	const struct report *r = h->r;
	const struct aggregate *a = r->a;
	double v = pf_value_of(aggregate_values(a, r->p, si), r->value);
	if (v == 0)
		return 0;
	int64_t n = aggregate_stack_keys(a, r->p, si, keys, cap);
	if (n < 0)
		return (int)n;
	if (n == 0 && a->filtered)
		return 0;   /* the filters dropped it */
	size_t need = h->nsyms + (size_t)n + 1;
	if (need >= UINT32_MAX || h->n >= UINT32_MAX - 1 ||
	    (need > h->cap_syms &&
	     (h->fixed || jh_grow(&h->syms, &h->cap_syms, need, sizeof(*h->syms)))))
		return JH_ENOMEM;
	uint32_t *o = h->syms + h->nsyms;
	uint64_t hash = 0;
	if (n == 0) {
		o[0] = h->rank[r->p->samples[si].depth ? RANK_ALLOCATOR_ONLY(a) : RANK_NO_FRAMES(a)];
		hash = o[0];
		n = 1;
	} else {
		const uint32_t *k = *keys;
		for (int64_t j = 0; j < n; j++) {
			o[j] = h->rank[k[j]];
			hash = (hash << 7 | hash >> 57) ^ o[j];
		}
	}
	struct trace t = { (uint32_t)h->nsyms, (uint32_t)n, v, hash };
	h->nsyms += (size_t)n;
	return JH_PUSH(h->t, h->n, h->cap, t);
}

static void *collect_half(void *arg)
{
	struct half *h = arg;
	uint32_t *keys = NULL;
	size_t cap = 0;
	/* a stack a sample at most: no growth (the pages never used are
	 * never touched) */
	if (jh_grow(&h->t, &h->cap, h->to - h->from + 1, sizeof(*h->t))) {
		h->rc = JH_ENOMEM;
		return NULL;
	}
	for (size_t si = h->from; si < h->to && !h->rc; si++)
		h->rc = add_sample(h, (uint32_t)si, &keys, &cap);
	free(keys);
	return NULL;
}

/* Profiles of this many samples or more are made into stacks in two
 * halves, the second in a thread of its own when there are two cores. */
#define TRACES_SPLIT_MIN 65536

/* Every sample with a value as a stack of ranks, in sample order, into
 * ts->syms and ts->t. */
static int collect_stacks(struct traces *ts, const struct report *r)
{
	size_t ns = r->p->nsamples;
	bool two = (ns >= TRACES_SPLIT_MIN || jh_threads_forced()) && jh_threads() > 1;
	struct half h[2];
	for (int k = 0; k < 2; k++)
		h[k] = (struct half){ .r = r, .rank = ts->rank, .from = ns, .to = ns };
	h[0].from = 0;
	h[0].to = h[1].from = two ? ns / 2 : ns;
	if (two) {
		/* each half's stretch: at most max_nkeys keys a location, or
		 * one pseudo frame; else one thread and an array that grows */
		size_t room[2] = { 0, 0 };
		for (int k = 0; k < 2; k++)
			for (size_t i = h[k].from; i < h[k].to; i++) {
				size_t d = r->p->samples[i].depth;
				room[k] += d ? d * r->a->max_nkeys + 1 : 1;
			}
		/* malloc'd, not a big array (lib/bigarray.h): huge pages made
		 * --traces slower, 2.12 s against 1.62 s (medians of 7 runs
		 * on synth1m written to a file, make bench), the kernel
		 * looking for them while the page cache fills with the
		 * output */
		uint32_t *syms = room[0] + room[1] + 1 < UINT32_MAX
			? malloc((room[0] + room[1] + 1) * sizeof(*syms)) : NULL;
		if (syms) {
			for (int k = 0; k < 2; k++) {
				h[k].syms = syms;
				h[k].fixed = true;
			}
			h[0].cap_syms = h[1].nsyms = room[0] + 1;
			h[1].cap_syms = room[0] + room[1] + 1;
		} else {
			two = false;
			h[0].to = h[1].from = ns;
		}
	}
	jh_run_two(collect_half, &h[0], two ? collect_half : NULL, &h[1], two);
	int rc = h[0].rc ? h[0].rc : h[1].rc;
	/* the second half's stacks after the first's */
	if (!rc && h[1].n && jh_grow(&h[0].t, &h[0].cap, h[0].n + h[1].n, sizeof(*h[0].t)))
		rc = JH_ENOMEM;
	if (!rc && h[1].n) {
		memcpy(h[0].t + h[0].n, h[1].t, h[1].n * sizeof(*h[1].t));
		h[0].n += h[1].n;
	}
	free(h[1].t);
	ts->syms = h[0].syms;
	ts->t = h[0].t;
	ts->n = h[0].n;
	ts->cap = h[0].cap;
	return rc;
}

/* A value's key for the radix sort: the larger the value, the smaller the
 * key (a double's bits as an unsigned number, the sign bit turned so that
 * negative values come after the positive ones). */
static uint64_t desc_key(double v)
{
	uint64_t b;
	memcpy(&b, &v, sizeof(b));
	b = b >> 63 ? ~b : b | (uint64_t)1 << 63;
	return ~b;
}

/* Sorts PL[0..n) by value, largest first, keeping the order of equal
 * values: a radix sort, a byte of the key a pass, least significant
 * first, leaving out the bytes that every key shares (the low bytes of
 * values that are whole numbers).  Returns 0 or JH_ENOMEM. */
static int sort_by_value(struct place *pl, size_t n)
{
	if (n < 2)
		return 0;
	size_t (*count)[256] = calloc(8, sizeof(*count));
	struct place *tmp = malloc(n * sizeof(*tmp));
	if (!count || !tmp) {
		free(count);
		free(tmp);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = desc_key(pl[i].value);
		for (int b = 0; b < 8; b++)
			count[b][(k >> (8 * b)) & 0xff]++;
	}
	struct place *from = pl, *to = tmp;
	for (int b = 0; b < 8; b++) {
		size_t *c = count[b], sum = 0;
		if (c[(desc_key(pl[0].value) >> (8 * b)) & 0xff] == n)
			continue;   /* every key has this byte */
		for (int d = 0; d < 256; d++) {
			size_t x = c[d];
			c[d] = sum;
			sum += x;
		}
		for (size_t i = 0; i < n; i++)
			to[c[(desc_key(from[i].value) >> (8 * b)) & 0xff]++] = from[i];
		struct place *s = from;
		from = to;
		to = s;
	}
	if (from != pl)
		memcpy(pl, from, n * sizeof(*pl));
	free(count);
	free(tmp);
	return 0;
}

/* Merges the stacks with the same frames (their values added in the
 * order they came) and orders them by value, then frame by frame from
 * the leaf in byte order of the names (a stack before the longer stacks
 * it starts): the frames' ranks are sorted as sequences once
 * (lib/seqsort.h; equal ones side by side, in the order they came), then
 * the blocks by value, so no comparison reads a name.  Blocks of value 0
 * are left out. */
static int sort_traces(struct traces *ts, uint32_t nranks)
{
	struct seqsort_item *it = malloc((ts->n + 1) * sizeof(*it));
	struct place *pl = malloc((ts->n + 1) * sizeof(*pl));
	if (!it || !pl) {
		free(it);
		free(pl);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < ts->n; i++)
		it[i] = (struct seqsort_item){ ts->t[i].sym0, ts->t[i].nsyms, (uint32_t)i, 0 };
	seqsort(it, ts->n, ts->syms, nranks);
	size_t m = 0;
	for (size_t i = 0; i < ts->n;) {
		const struct trace *first = &ts->t[it[i].id];
		double v = first->value;
		size_t j = i + 1;
		for (; j < ts->n; j++) {
			if (j + 8 < ts->n)
				__builtin_prefetch(&ts->t[it[j + 8].id]);
			const struct trace *t = &ts->t[it[j].id];
			if (t->hash != first->hash || t->nsyms != first->nsyms ||
			    memcmp(ts->syms + t->sym0, ts->syms + first->sym0,
				   t->nsyms * sizeof(*ts->syms)))
				break;
			v += t->value;
		}
		if (v != 0)
			pl[m++] = (struct place){ v, (uint32_t)i, it[i].id };
		i = j;
	}
	free(it);
	int rc = sort_by_value(pl, m);
	if (rc) {
		free(pl);
		return rc;
	}
	ts->pl = pl;
	ts->npl = m;
	return 0;
}

/* One block per distinct stack of keys, its values added up in sample
 * order, sorted by value. */
static int collect(struct traces *ts, const struct report *r)
{
	int rc = rank_keys(ts);
	if (!rc)
		rc = collect_stacks(ts, r);
	return rc ? rc : sort_traces(ts, (uint32_t)(ts->a->keys.len + 2));
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
static const char separator_line[] = "-----------+-------------------------------------------------------\n";

struct writer {
	const struct traces *ts;
	const struct report *r;
};

/* Blocks [FROM, TO), a block each (parwrite_fn: on a large profile two
 * threads make the blocks, a gigabyte of them for the benchmark's
 * 1,000,000 stacks). */
static int write_traces(void *ctx, int who, size_t from, size_t to, struct obuf *o)
{
	(void)who;
	const struct writer *w = ctx;
	const struct traces *ts = w->ts;
	const struct report *r = w->r;
	for (size_t i = from; i < to; i++) {
		const struct place *pl = &ts->pl[i];
		const struct trace *t = &ts->t[pl->id];
		if (i + 16 < to)
			__builtin_prefetch(&ts->t[ts->pl[i + 16].id]);
		if (i + 8 < to) {
			const uint32_t *later = ts->syms + ts->t[ts->pl[i + 8].id].sym0;
			__builtin_prefetch(later);
			__builtin_prefetch(later + 16);
		}
		obuf_write(o, separator_line, sizeof(separator_line) - 1);
		if (r->thread) {
			obuf_puts(o, "    thread:  ");   /* "%10s:  %s\n" */
			obuf_puts(o, r->thread);
			obuf_putc(o, '\n');
		}
		char v[64];
		text_format_value(v, sizeof(v), pl->value, r->units);
		/* "%10s   %s\n" */
		size_t vl = strlen(v);
		for (size_t k = vl; k < 10; k++)
			obuf_putc(o, ' ');
		obuf_write(o, v, vl);
		obuf_write(o, "   ", 3);
		const uint32_t *f = ts->syms + t->sym0;
		const size_t *at = ts->line_at;
		obuf_write(o, ts->lines + at[f[0]] + INDENT, at[f[0] + 1] - at[f[0]] - INDENT);
		for (uint32_t k = 1; k < t->nsyms; k++)
			obuf_write(o, ts->lines + at[f[k]], at[f[k] + 1] - at[f[k]]);
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
		rc = parwrite(out, ts.npl, 0, write_traces, &w);
		if (!rc)
			fprintf(out, "%s\n", separator);
	}
	free(ts.syms);
	free(ts.t);
	free(ts.rank);
	free(ts.key_of);
	free(ts.lines);
	free(ts.line_at);
	free(ts.pl);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}
