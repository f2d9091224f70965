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
#include "lib/hash.h"
#include "lib/idmap.h"
#include "output/output.h"

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

/* Frame by frame from the leaf, in byte order of the names; a stack
 * before the longer stacks it starts. */
static int cmp_frames(const struct traces *ts, const struct trace *x, const struct trace *y)
{
	uint32_t n = x->nkeys < y->nkeys ? x->nkeys : y->nkeys;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = ts->keys[x->key0 + i], b = ts->keys[y->key0 + i];
		if (a != b)
			return ts->rank[rank_index(ts, a)] < ts->rank[rank_index(ts, b)] ? -1 : 1;
	}
	return x->nkeys < y->nkeys ? -1 : x->nkeys > y->nkeys;
}

static int cmp_by_frames(const void *x, const void *y, void *arg)
{
	int c = cmp_frames(arg, x, y);
	if (c)
		return c;
	const struct trace *a = x, *b = y;
	return a->key0 < b->key0 ? -1 : a->key0 > b->key0;
}

static int cmp_by_value(const void *x, const void *y, void *arg)
{
	const struct trace *a = x, *b = y;
	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	return cmp_by_frames(x, y, arg);
}

struct stack_key {
	const struct traces *ts;
	const uint32_t *keys;
	uint32_t n;
};

static int stack_eq(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	const struct trace *t = &k->ts->t[id];
	return t->nkeys == k->n && !memcmp(k->ts->keys + t->key0, k->keys, k->n * sizeof(*k->keys));
}

struct collector {
	struct traces *ts;
	const struct report *r;
	struct idmap index;
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
	struct stack_key k = { ts, keys, (uint32_t)n };
	uint64_t h = jh_hash_fast(keys, n * sizeof(*keys), 0);
	uint32_t id = idmap_find(&c->index, h, stack_eq, &k);
	if (id != UINT32_MAX) {
		ts->t[id].value += v;
		return 0;
	}
	struct trace t = { (uint32_t)ts->nkeys, (uint32_t)n, v };
	if (jh_grow(&ts->keys, &ts->cap_keys, ts->nkeys + n, sizeof(*ts->keys)) ||
	    JH_PUSH(ts->t, ts->n, ts->cap, t) || idmap_put(&c->index, h, (uint32_t)(ts->n - 1)))
		return JH_ENOMEM;
	memcpy(ts->keys + ts->nkeys, keys, n * sizeof(*keys));
	ts->nkeys += n;
	return 0;
}

/* One trace per distinct stack of keys (found by hashing them), its
 * values added up in sample order, sorted by value. */
static int collect(struct traces *ts, const struct report *r)
{
	struct collector c = { ts, r, { 0 } };
	idmap_init(&c.index);
	int rc = rank_keys(ts);
	if (!rc)
		rc = aggregate_each_stack(r->a, r->p, r->value, add_stack, &c);
	idmap_release(&c.index);
	if (rc)
		return rc;
	size_t m = 0;
	for (size_t i = 0; i < ts->n; i++)
		if (ts->t[i].value != 0)
			ts->t[m++] = ts->t[i];
	ts->n = m;
	jh_qsort_r(ts->t, ts->n, sizeof(*ts->t), cmp_by_value, ts);
	return 0;
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

int output_traces(FILE *out, const struct report *r, char *err, size_t errlen)
{
	static const char separator[] = "-----------+-------------------------------------------------------";
	struct traces ts = { .a = r->a };
	int rc = collect(&ts, r);
	if (rc) {
		free(ts.keys);
		free(ts.t);
		free(ts.rank);
		return jh_err(err, errlen, rc, "out of memory");
	}
	output_labels(out, r);
	for (size_t i = 0; i < ts.n; i++) {
		const struct trace *t = &ts.t[i];
		fprintf(out, "%s\n", separator);
		if (r->thread)
			fprintf(out, "%10s:  %s\n", "thread", r->thread);
		char v[64];
		text_format_value(v, sizeof(v), t->value, r->units);
		fprintf(out, "%10s   %s\n", v, key_name(&ts, ts.keys[t->key0]));
		for (uint32_t k = 1; k < t->nkeys; k++) {
			fputs("             ", out);   /* "%10s   " of "" */
			fputs(key_name(&ts, ts.keys[t->key0 + k]), out);
			fputc('\n', out);
		}
	}
	fprintf(out, "%s\n", separator);
	free(ts.keys);
	free(ts.t);
	free(ts.rank);
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}
