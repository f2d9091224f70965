/*
 * The flame graph's data: the call tree of the report as JSON.
 *
 *   {"value":"inuse_space","companion":"inuse_objects","diff":false,
 *    "total":V,"total_before":B,"threshold":T,"merged":K,
 *    "names":["main",...],
 *    "nodes":[[NAME,PARENT,V,CV,B,CB,M],...]}
 *
 * A node's NAME indexes "names" (-1 for the root), PARENT is the index of
 * its parent node (-1 for the root), which comes before it: the nodes are
 * in depth-first order with children in byte order of their names, as the
 * stacks of --collapsed are.  V is the cumulative value chosen (with
 * --base the "after" side, base plus change, as --collapsed's second
 * number), CV the companion value of the same stacks (objects beside
 * bytes), B and CB the base's values (0 without --base).  M > 0 marks a
 * node that stands for M sibling frames each under T, merged with their
 * subtrees (T = the larger total / JSON_FLAME_MERGE; K such nodes in all).
 *
 * Stacks are the report's: allocator frames cut, the filters and the
 * granularity applied (aggregate_stack_keys), the values the aggregate
 * sees (aggregate_values: a thread's share with --thread, nothing of the
 * samples --tagfocus and --tagignore leave out), a stack the cut leaves
 * empty under "[allocator]", the same rules as output/stacks.c, so the
 * sums of the leaves' paths are --collapsed's lines with the same
 * options.
 *
 * How the tree is built (a million stacks in a few tenths of a second):
 * only the nodes shown and their small children are made, one level at a
 * time.  The stacks are read once, from their root end and only as deep
 * as ROOT_KEYS (collect); then every stack still going steps one key
 * deeper a level, and a stack in a node under the threshold stops there,
 * since that node is merged whole.  The stacks are in two fixed halves
 * (the samples' first half and second half), each stepped by a worker of
 * its own (the second in a thread of its own on two cores) into a small
 * table of the level's nodes, then the two tables are joined into the
 * tree in order: a node's sums are the first half's plus the second's
 * whatever the number of threads, so the page is the same on every
 * machine.
 */
#include <math.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/threads.h"
#include "output/json.h"
#include "output/stacks.h"

#define KEY_ALLOC (UINT32_MAX - 1)
#define KEY_NOFRAMES (UINT32_MAX - 2)

/* Keys kept per stack from its root end: deeper ones are asked again. */
#define ROOT_KEYS 16

struct fnode {
	uint32_t key, parent;
	uint32_t child, next;      /* first child, next sibling (UINT32_MAX: none) */
	double v[2], b[2];         /* chosen and companion values; the base's */
	uint32_t merged;           /* frames merged into this node */
	int32_t out;               /* index in the output, -1 before */
};

struct ftree {
	struct fnode *n;
	size_t len, cap;
	const struct report *r;
	double threshold;
};

static bool small(const struct fnode *nd, double threshold)
{
	return fabs(nd->v[0]) < threshold && fabs(nd->b[0]) < threshold;
}

/* ---- a level's nodes: (parent, key) -> its index in the level ------- */

struct slot {
	uint32_t parent, key;
	uint32_t node;             /* index in the level + 1, 0: empty */
};

struct lnode {
	uint32_t parent, key;
};

/* The nodes one level makes, looked up by their parent (a node of the
 * tree, of the level before) and key: small enough to stay in the cache,
 * where a table of the whole tree would not. */
struct level {
	struct slot *slots;        /* open addressing, the pair beside the index
	                              so that a probe reads nothing else */
	size_t nslots;
	struct lnode *nodes;
	size_t n, cap;
	double (*acc)[4];          /* each node's sums: chosen, companion, and
	                              the base's two */
	size_t cap_acc;
};

static uint64_t slot_hash(uint32_t parent, uint32_t key)
{
	/* splitmix64's finalizer: every input bit reaches the low bits that
	 * pick the slot */
	uint64_t x = (uint64_t)parent << 32 | key;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A table of NSLOTS (a power of two) for the nodes made so far. */
static int level_rehash(struct level *l, size_t nslots)
{
	struct slot *s = nslots == l->nslots ? l->slots : malloc(nslots * sizeof(*s));
	if (!s)
		return JH_ENOMEM;
	memset(s, 0, nslots * sizeof(*s));
	for (size_t i = 0; i < l->n; i++) {
		size_t h = slot_hash(l->nodes[i].parent, l->nodes[i].key) & (nslots - 1);
		while (s[h].node)
			h = (h + 1) & (nslots - 1);
		s[h] = (struct slot){ l->nodes[i].parent, l->nodes[i].key, (uint32_t)i + 1 };
	}
	if (s != l->slots)
		free(l->slots);
	l->slots = s;
	l->nslots = nslots;
	return 0;
}

/* Empties L for a level of about MADE nodes (what the level before made). */
static int level_begin(struct level *l, size_t made)
{
	size_t want = 1024;
	while (want < made * 2 && want < ((size_t)1 << 40))
		want *= 2;
	l->n = 0;
	return level_rehash(l, want);
}

/* The node KEY under PARENT, made (with zero sums) when missing; its
 * index in the level, or -1. */
static int64_t level_child(struct level *l, uint32_t parent, uint32_t key)
{
	if ((l->n + 1) * 2 > l->nslots && level_rehash(l, l->nslots * 2))
		return -1;
	size_t h = slot_hash(parent, key) & (l->nslots - 1);
	for (; l->slots[h].node; h = (h + 1) & (l->nslots - 1))
		if (l->slots[h].parent == parent && l->slots[h].key == key)
			return l->slots[h].node - 1;
	if (JH_PUSH(l->nodes, l->n, l->cap, ((struct lnode){ parent, key })) ||
	    jh_grow(&l->acc, &l->cap_acc, l->n, sizeof(*l->acc)))
		return -1;
	memset(l->acc[l->n - 1], 0, sizeof(*l->acc));
	l->slots[h] = (struct slot){ parent, key, (uint32_t)l->n };
	return (int64_t)l->n - 1;
}

static void level_release(struct level *l)
{
	free(l->slots);
	free(l->nodes);
	free(l->acc);
	memset(l, 0, sizeof(*l));
}

/* ---- the stacks ------------------------------------------------------ */

static enum pf_value companion(enum pf_value v)
{
	/* objects and bytes of one kind are neighbours (profile.h) */
	return (enum pf_value)(pf_value_is_objects(v) ? v + 1 : v - 1);
}

/* The values of sample SI as the aggregate sees it (chosen after,
 * companion after, chosen before, companion before): a thread's share
 * with --thread, none for a sample --tagfocus or --tagignore leaves out;
 * false when the stack is left out. */
static bool sample_values(const struct report *r, uint32_t si, double v[2], double b[2])
{
	const double *now = aggregate_values(r->a, r->p, si);
	const double *was = aggregate_base(r->a, r->p, si);
	enum pf_value cv = companion(r->value);
	b[0] = r->diff ? pf_value_of(was, r->value) : 0;
	b[1] = r->diff ? pf_value_of(was, cv) : 0;
	v[0] = pf_value_of(now, r->value) + b[0];
	v[1] = pf_value_of(now, cv) + b[1];
	return v[0] != 0 || b[0] != 0;
}

/* The stacks being added, level by level; stack K (a position, not a
 * sample id) of either half. */
struct active {
	uint32_t *sample;          /* sample ids */
	uint32_t *nkeys;           /* each stack's number of keys (1 for a
	                              stack the cut leaves empty; ROOT_KEYS + 1:
	                              more, counted when a level gets there) */
	uint32_t *root;            /* the key at depth D of stack K at
	                              root[D * stride + K], D < ROOT_KEYS: a
	                              level reads one array in order */
	size_t stride;
	uint32_t *node;            /* where each stack is: a node of the tree,
	                              or, while a level is made, of the level */
	double (*val)[2];          /* each stack's chosen and companion values
	                              (with --base the "after" side), read in
	                              the order of the stacks rather than from
	                              the samples at every level */
	double (*bval)[2];         /* the base's, with --base; else NULL */
	uint32_t *one;             /* one_keys() */
};

/* The keys of sample SI that aggregate_stack_keys() gives, but from the
 * root end and only the first ROOT_KEYS of them, into ROOT[D * STRIDE]
 * for depth D (ONE: one_keys()): the rest of a stack is read only if a
 * level needs it, and most stacks stop in a small node well before their
 * leaf.  Returns the number of keys when at most ROOT_KEYS, ROOT_KEYS + 1
 * for more, 0 when the stack has none or the filters drop it. */
static uint32_t root_keys(const struct aggregate *a, const struct profile *p,
			  const uint32_t *one, uint32_t si, uint32_t *root, size_t stride)
{
	const struct pf_sample *s = &p->samples[si];
	uint32_t skip;
	uint32_t start = aggregate_stack_begin(a, p, si, &skip);
	if (start >= s->depth)
		return 0;
	const uint32_t *st = p->stacks + s->stack0;
	uint32_t n = 0;
	for (uint32_t i = s->depth; i-- > start;) {
		uint32_t loc = st[i];
		if (one[loc] != UINT32_MAX && i != start) {
			if (n == ROOT_KEYS)
				return ROOT_KEYS + 1;
			root[(size_t)n++ * stride] = one[loc];
			continue;
		}
		const struct agg_locinfo *li = &a->locinfo[loc];
		uint32_t lo = li->key0 + (i == start ? skip : 0);
		bool some = a->filtered && (a->locflags[loc] & AGG_F_DROP);
		for (uint32_t k = li->key0 + li->nkeys; k-- > lo;) {
			if (some && (a->keyflags[k] & AGG_F_DROP))
				continue;
			if (n == ROOT_KEYS)
				return ROOT_KEYS + 1;
			root[(size_t)n++ * stride] = a->lockeys[k];
		}
	}
	return n;
}

/* Per location of P, its one key when it has exactly one that the
 * filters keep (most have: no inlined frames), else UINT32_MAX: a step
 * of root_keys() then reads one small array. */
static uint32_t *one_keys(const struct aggregate *a, const struct profile *p)
{
	uint32_t *one = malloc((p->nlocs + 1) * sizeof(*one));
	for (size_t loc = 0; one && loc < p->nlocs; loc++) {
		const struct agg_locinfo *li = &a->locinfo[loc];
		bool some = a->filtered && (a->locflags[loc] & AGG_F_DROP);
		one[loc] = li->nkeys == 1 && !some ? a->lockeys[li->key0] : UINT32_MAX;
	}
	return one;
}

/* ---- a worker: one half of the stacks -------------------------------- */

struct worker {
	const struct report *r;
	struct active *ac;
	size_t from, to;           /* its samples, and its stacks' positions
	                              from FROM on */
	uint32_t *idx;             /* the positions of its stacks still going */
	size_t n;
	double sum[2][2];          /* collect: its stacks' values summed */
	uint32_t d;                /* the level being made */
	struct level lv;           /* the nodes its stacks made in it */
	uint32_t *map;             /* each of those: its index in the tree's
	                              level (join()) */
	size_t cap_map;
	/* the level before, as join() left it */
	size_t prev_base;          /* the tree's index of its first node */
	const uint8_t *shown;      /* per node of it, in the tree's level */
	uint32_t *keys;            /* aggregate_stack_keys(), past ROOT_KEYS */
	size_t cap;
	int rc;
};

/* collect() of one half: the samples [FROM, TO) at positions FROM on. */
static void *collect_half(void *arg)
{
	struct worker *w = arg;
	const struct report *r = w->r;
	struct active *ac = w->ac;
	for (size_t si = w->from; si < w->to; si++) {
		double v[2], b[2];
		if (!sample_values(r, (uint32_t)si, v, b))
			continue;
		size_t k = w->from + w->n;
		uint32_t *rk = ac->root + k;
		uint32_t n = root_keys(r->a, r->p, ac->one, (uint32_t)si, rk, ac->stride);
		if (n == 0 && r->a->filtered)
			continue;
		w->idx[w->n++] = (uint32_t)k;
		ac->sample[k] = (uint32_t)si;
		ac->nkeys[k] = n ? n : 1;
		if (!n)
			rk[0] = r->p->samples[si].depth ? KEY_ALLOC : KEY_NOFRAMES;
		ac->val[k][0] = v[0];
		ac->val[k][1] = v[1];
		if (ac->bval) {
			ac->bval[k][0] = b[0];
			ac->bval[k][1] = b[1];
		}
		for (int j = 0; j < 2; j++) {
			w->sum[0][j] += v[j];
			w->sum[1][j] += b[j];
		}
	}
	return NULL;
}

/* The stacks of the report in the two halves W, their first keys from the
 * root, and their values summed at the root T->n[0]. */
static int collect(struct ftree *t, struct active *ac, struct worker w[2])
{
	const struct report *r = t->r;
	size_t ns = r->p->nsamples;
	ac->sample = malloc((ns + 1) * sizeof(uint32_t));
	ac->nkeys = malloc((ns + 1) * sizeof(uint32_t));
	ac->node = calloc(ns + 1, sizeof(uint32_t));
	ac->stride = ns + 1;
	ac->root = malloc((ns + 1) * ROOT_KEYS * sizeof(uint32_t));
	ac->val = malloc((ns + 1) * sizeof(*ac->val));
	ac->bval = r->diff ? malloc((ns + 1) * sizeof(*ac->bval)) : NULL;
	ac->one = one_keys(r->a, r->p);
	w[0].idx = malloc((ns / 2 + 1) * sizeof(uint32_t));
	w[1].idx = malloc((ns - ns / 2 + 1) * sizeof(uint32_t));
	if (!ac->sample || !ac->nkeys || !ac->node || !ac->root || !ac->val ||
	    (r->diff && !ac->bval) || !ac->one || !w[0].idx || !w[1].idx)
		return JH_ENOMEM;
	w[0].from = 0;
	w[0].to = w[1].from = ns / 2;
	w[1].to = ns;
	jh_run_two(collect_half, &w[0], collect_half, &w[1],
		   jh_threads() > 1 && (ns >= 32768 || jh_threads_forced()));
	for (int j = 0; j < 2; j++) {
		t->n[0].v[j] = w[0].sum[0][j] + w[1].sum[0][j];
		t->n[0].b[j] = w[0].sum[1][j] + w[1].sum[1][j];
	}
	return 0;
}

/* One level of the worker's stacks: each that goes on from the level
 * before (longer, and in a node shown) steps to its key at depth D, into
 * the worker's table of the level. */
static void *worker_level(void *arg)
{
	struct worker *w = arg;
	const struct report *r = w->r;
	struct active *ac = w->ac;
	uint32_t d = w->d;
	w->rc = level_begin(&w->lv, w->lv.n);
	/* neighbouring stacks often take the same step */
	uint32_t last_node = UINT32_MAX, last_key = 0;
	int64_t last = -1;
	size_t o = 0;
	for (size_t i = 0; i < w->n && !w->rc; i++) {
		uint32_t k = w->idx[i], key;
		if (d) {
			/* where the level before left it, in the tree */
			uint32_t at = w->map[ac->node[k]];
			if (ac->nkeys[k] <= d || !w->shown[at])
				continue;
			ac->node[k] = (uint32_t)(w->prev_base + at);
		}
		w->idx[o++] = k;
		if (d < ROOT_KEYS) {
			key = ac->root[(size_t)d * ac->stride + k];
		} else {
			int64_t nk = aggregate_stack_keys(r->a, r->p, ac->sample[k], &w->keys, &w->cap);
			if (nk < 0) {
				w->rc = (int)nk;
				break;
			}
			key = w->keys[nk - 1 - d];
			ac->nkeys[k] = (uint32_t)nk;   /* counted now */
		}
		int64_t c = last;
		if (ac->node[k] != last_node || key != last_key || last < 0) {
			c = level_child(&w->lv, ac->node[k], key);
			if (c < 0) {
				w->rc = JH_ENOMEM;
				break;
			}
			last_node = ac->node[k];
			last_key = key;
			last = c;
		}
		double *sum = w->lv.acc[c];
		sum[0] += ac->val[k][0];
		sum[1] += ac->val[k][1];
		if (ac->bval) {
			sum[2] += ac->bval[k][0];
			sum[3] += ac->bval[k][1];
		}
		ac->node[k] = (uint32_t)c;
	}
	w->n = o;
	return NULL;
}

/* Joins the two workers' tables of a level into the tree: the first's
 * nodes, then the second's that the first did not make, each with the
 * first's sums plus the second's; each worker's MAP says where its nodes
 * went (an index in the level), SHOWN which of the level's are shown.
 * G is the tree's table of the level. */
static int join(struct ftree *t, struct worker w[2], struct level *g, uint8_t **shown,
		size_t *cap_shown)
{
	int rc = level_begin(g, w[0].lv.n + w[1].lv.n);
	for (int h = 0; h < 2 && !rc; h++) {
		if (jh_grow(&w[h].map, &w[h].cap_map, w[h].lv.n + 1, sizeof(*w[h].map)))
			return JH_ENOMEM;
		for (size_t i = 0; i < w[h].lv.n; i++) {
			int64_t c = level_child(g, w[h].lv.nodes[i].parent, w[h].lv.nodes[i].key);
			if (c < 0)
				return JH_ENOMEM;
			w[h].map[i] = (uint32_t)c;
			for (int j = 0; j < 4; j++)
				g->acc[c][j] += w[h].lv.acc[i][j];
		}
	}
	if (rc || jh_grow(shown, cap_shown, g->n + 1, 1) ||
	    jh_grow(&t->n, &t->cap, t->len + g->n, sizeof(*t->n)))
		return rc ? rc : JH_ENOMEM;
	size_t base = t->len;
	for (size_t i = 0; i < g->n; i++) {
		struct fnode nd = { .key = g->nodes[i].key, .parent = g->nodes[i].parent,
				    .child = UINT32_MAX, .next = UINT32_MAX, .out = -1,
				    .v = { g->acc[i][0], g->acc[i][1] }, .b = { g->acc[i][2], g->acc[i][3] } };
		t->n[t->len++] = nd;
		(*shown)[i] = !small(&nd, t->threshold);
	}
	for (int h = 0; h < 2; h++) {
		w[h].prev_base = base;
		w[h].shown = *shown;
	}
	return 0;
}

/* The tree, one level at a time, until no stack goes on. */
static int build_levels(struct ftree *t, struct worker w[2])
{
	struct level g = { 0 };
	uint8_t *shown = NULL;
	size_t cap_shown = 0;
	int rc = 0;
	for (uint32_t d = 0; !rc; d++) {
		size_t going = w[0].n + w[1].n;
		for (int h = 0; h < 2; h++)
			w[h].d = d;
		jh_run_two(worker_level, &w[0], worker_level, &w[1],
			   jh_threads() > 1 && (going >= 32768 || jh_threads_forced()));
		rc = w[0].rc ? w[0].rc : w[1].rc;
		if (rc || (!w[0].n && !w[1].n))
			break;
		rc = join(t, w, &g, &shown, &cap_shown);
	}
	level_release(&g);
	free(shown);
	return rc;
}

static const char *node_name(const struct ftree *t, const struct fnode *nd)
{
	if (nd->key == KEY_ALLOC)
		return STACKS_ALLOCATOR_ONLY;
	if (nd->key == KEY_NOFRAMES)
		return STACKS_NO_FRAMES;

	return strtab_get(&t->r->a->keys, nd->key);
}

static int cmp_children(const void *x, const void *y, void *arg)
{
	const struct ftree *t = arg;
	const struct fnode *a = &t->n[*(const uint32_t *)x], *b = &t->n[*(const uint32_t *)y];
	return strcmp(node_name(t, a), node_name(t, b));
}

/* Links each node's children in byte order of their names. */
static int link_children(struct ftree *t)
{
	size_t *count = calloc(t->len + 1, sizeof(*count)), *first = calloc(t->len + 1, sizeof(*first));
	uint32_t *kids = malloc((t->len + 1) * sizeof(*kids));
	if (!count || !first || !kids) {
		free(count);
		free(first);
		free(kids);
		return JH_ENOMEM;
	}
	for (size_t i = 1; i < t->len; i++)
		count[t->n[i].parent]++;
	size_t o = 0;
	for (size_t i = 0; i < t->len; i++) {
		first[i] = o;
		o += count[i];
		count[i] = 0;
	}
	for (size_t i = 1; i < t->len; i++) {
		uint32_t p = t->n[i].parent;
		kids[first[p] + count[p]++] = (uint32_t)i;
	}
	for (size_t i = 0; i < t->len; i++) {
		if (!count[i])
			continue;
		jh_qsort_r(kids + first[i], count[i], sizeof(*kids), cmp_children, t);
		t->n[i].child = kids[first[i]];
		for (size_t k = 0; k + 1 < count[i]; k++)
			t->n[kids[first[i] + k]].next = kids[first[i] + k + 1];
	}
	free(count);
	free(first);
	free(kids);
	return 0;
}

static int write_tree(FILE *out, struct ftree *t, double threshold, size_t *nmerged)
{
	/* merged nodes are appended to t: at most one per node */
	size_t room = t->len * 2 + 1;
	if (jh_grow(&t->n, &t->cap, room, sizeof(*t->n)))
		return JH_ENOMEM;
	uint32_t *order = malloc(room * sizeof(*order)), *name_out = calloc(room, sizeof(*name_out));
	uint32_t *stack = NULL, *kids = NULL, *ids = NULL;
	size_t nstack = 0, cap = 0, nkids = 0, capkids = 0, norder = 0;
	int rc = !order || !name_out ? JH_ENOMEM : 0;
	if (!rc)
		rc = JH_PUSH(stack, nstack, cap, 0u);
	/* depth first, children in order; the small ones merged into one
	 * node that comes after its siblings */
	while (!rc && nstack) {
		uint32_t i = stack[--nstack];
		t->n[i].out = (int32_t)norder;
		order[norder++] = i;
		uint32_t m = UINT32_MAX;
		nkids = 0;
		for (uint32_t c = t->n[i].child; c != UINT32_MAX && !rc; c = t->n[c].next) {
			if (!small(&t->n[c], threshold)) {
				rc = JH_PUSH(kids, nkids, capkids, c);
				continue;
			}
			if (m == UINT32_MAX) {
				struct fnode nd = { .key = UINT32_MAX, .parent = i, .child = UINT32_MAX,
						    .next = UINT32_MAX, .out = -1 };
				t->n[t->len++] = nd;
				m = (uint32_t)t->len - 1;
				(*nmerged)++;
			}
			for (int j = 0; j < 2; j++) {
				t->n[m].v[j] += t->n[c].v[j];
				t->n[m].b[j] += t->n[c].b[j];
			}
			t->n[m].merged++;
		}
		if (m != UINT32_MAX && !rc)
			rc = JH_PUSH(stack, nstack, cap, m);
		for (size_t k = nkids; k-- > 0 && !rc;)
			rc = JH_PUSH(stack, nstack, cap, kids[k]);
	}
	/* each key's name once, numbered in the order of first use; a key
	 * names one string, so the key is the name */
	size_t nkeys = t->r->a->keys.len;
	ids = malloc((nkeys + 3) * sizeof(*ids));
	if (!rc && !ids)
		rc = JH_ENOMEM;
	for (size_t k = 0; k < nkeys + 3 && !rc; k++)
		ids[k] = UINT32_MAX;
	uint32_t nnames = 0;
	if (!rc)
		fputs("\"names\":[", out);
	for (size_t k = 1; k < norder && !rc; k++) {
		const struct fnode *nd = &t->n[order[k]];
		if (nd->merged)
			continue;
		size_t id = nd->key == KEY_ALLOC ? nkeys : nd->key == KEY_NOFRAMES ? nkeys + 1
			: nd->key < nkeys ? nd->key : nkeys + 2;
		if (ids[id] == UINT32_MAX) {
			ids[id] = nnames++;
			if (nnames > 1)
				fputc(',', out);
			json_str(out, node_name(t, nd));
		}
		name_out[order[k]] = ids[id];
	}
	if (!rc)
		fputs("],\n\"nodes\":[", out);
	/* one row at a time into BUF: a write per row, not per number */
	char buf[8 * JSON_NUM_MAX];
	for (size_t k = 0; k < norder && !rc; k++) {
		const struct fnode *nd = &t->n[order[k]];
		size_t o = 0;
		memcpy(buf, k ? ",\n[" : "\n[", 3);
		o += k ? 3 : 2;
		o += json_num_buf(buf + o, k == 0 || nd->merged ? -1 : (double)name_out[order[k]]);
		buf[o++] = ',';
		o += json_num_buf(buf + o, k ? t->n[nd->parent].out : -1);
		buf[o++] = ',';
		const double num[4] = { nd->v[0], nd->v[1], nd->b[0], nd->b[1] };
		for (int j = 0; j < 4; j++) {
			o += json_num_buf(buf + o, num[j]);
			buf[o++] = ',';
		}
		o += json_num_buf(buf + o, nd->merged);
		buf[o++] = ']';
		fwrite(buf, 1, o, out);
	}
	if (!rc)
		fputs("]", out);
	free(name_out);
	free(order);
	free(stack);
	free(kids);
	free(ids);
	return rc;
}

int output_json_flame(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct ftree t = { .r = r };
	struct fnode root = { .key = UINT32_MAX, .parent = UINT32_MAX, .child = UINT32_MAX,
			      .next = UINT32_MAX, .out = -1 };
	struct active ac = { 0 };
	struct worker w[2] = { { .r = r, .ac = &ac }, { .r = r, .ac = &ac } };
	int rc = JH_PUSH(t.n, t.len, t.cap, root);
	if (!rc)
		rc = collect(&t, &ac, w);
	t.threshold = fmax(fabs(t.n[0].v[0]), fabs(t.n[0].b[0])) / JSON_FLAME_MERGE;
	if (!rc)
		rc = build_levels(&t, w);
	for (int h = 0; h < 2; h++) {
		free(w[h].idx);
		free(w[h].map);
		free(w[h].keys);
		level_release(&w[h].lv);
	}
	free(ac.sample);
	free(ac.nkeys);
	free(ac.node);
	free(ac.root);
	free(ac.val);
	free(ac.bval);
	free(ac.one);
	if (!rc)
		rc = link_children(&t);
	size_t nmerged = 0;
	if (!rc) {
		fputs("{\"value\":", out);
		json_str(out, output_value_name(r->value));
		fputs(",\"companion\":", out);
		json_str(out, output_value_name(companion(r->value)));
		fprintf(out, ",\"diff\":%s,\"total\":", r->diff ? "true" : "false");
		json_num(out, t.n[0].v[0]);
		fputs(",\"total_before\":", out);
		json_num(out, t.n[0].b[0]);
		fputs(",\"threshold\":", out);
		json_num(out, t.threshold);
		fputs(",\n", out);
		rc = write_tree(out, &t, t.threshold, &nmerged);
		if (!rc)
			fprintf(out, ",\n\"merged\":%zu}\n", nmerged);
	}
	free(t.n);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}
