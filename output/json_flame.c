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
 * granularity applied (aggregate_stack_keys), a stack the cut leaves
 * empty under "[allocator]", the same rules as output/stacks.c, so the
 * sums of the leaves' paths are --collapsed's lines.
 */
#include <math.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/threads.h"
#include "output/json.h"
#include "output/stacks.h"

#define KEY_ALLOC (UINT32_MAX - 1)
#define KEY_NOFRAMES (UINT32_MAX - 2)

struct fnode {
	uint32_t key, parent;
	uint32_t child, next;      /* first child, next sibling (UINT32_MAX: none) */
	double v[2], b[2];         /* chosen and companion values; the base's */
	uint32_t merged;           /* frames merged into this node */
	int32_t out;               /* index in the output, -1 before */
};

struct slot {
	uint32_t parent, key;
	uint32_t node;             /* node index + 1, 0: empty */
};

struct ftree {
	struct fnode *n;
	size_t len, cap;
	struct slot *slots;        /* open addressing, the pair beside the node
	                              so that a probe reads no node */
	size_t nslots;
	const struct report *r;
	double threshold;
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

static int grow_slots(struct ftree *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	struct slot *s = calloc(n, sizeof(*s));
	if (!s)
		return JH_ENOMEM;
	for (size_t i = 1; i < t->len; i++) {
		size_t h = slot_hash(t->n[i].parent, t->n[i].key) & (n - 1);
		while (s[h].node)
			h = (h + 1) & (n - 1);
		s[h] = (struct slot){ t->n[i].parent, t->n[i].key, (uint32_t)i + 1 };
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

/* The child KEY of PARENT, made when missing; its index or -1. */
static int64_t child(struct ftree *t, uint32_t parent, uint32_t key)
{
	if ((t->len + 1) * 2 > t->nslots && grow_slots(t))
		return -1;
	size_t h = slot_hash(parent, key) & (t->nslots - 1);
	for (; t->slots[h].node; h = (h + 1) & (t->nslots - 1))
		if (t->slots[h].parent == parent && t->slots[h].key == key)
			return t->slots[h].node - 1;
	struct fnode nd = { .key = key, .parent = parent, .child = UINT32_MAX,
			    .next = UINT32_MAX, .out = -1 };
	if (JH_PUSH(t->n, t->len, t->cap, nd))
		return -1;
	t->slots[h] = (struct slot){ parent, key, (uint32_t)t->len };
	return (int64_t)t->len - 1;
}

static enum pf_value companion(enum pf_value v)
{
	switch (v) {
	case PF_INUSE_SPACE: return PF_INUSE_OBJECTS;
	case PF_INUSE_OBJECTS: return PF_INUSE_SPACE;
	case PF_ALLOC_SPACE: return PF_ALLOC_OBJECTS;
	default: return PF_ALLOC_SPACE;
	}
}

/* The values of sample SI (chosen after, companion after, chosen before,
 * companion before); false when the stack is left out. */
static bool sample_values(const struct ftree *t, uint32_t si, double v[2], double b[2])
{
	const struct report *r = t->r;
	const struct pf_sample *s = &r->p->samples[si];
	enum pf_value cv = companion(r->value);
	b[0] = r->diff ? s->base[r->value] : 0;
	b[1] = r->diff ? s->base[cv] : 0;
	v[0] = s->v[r->value] + b[0];
	v[1] = s->v[cv] + b[1];
	return v[0] != 0 || b[0] != 0;
}

static bool small(const struct fnode *nd, double threshold)
{
	return fabs(nd->v[0]) < threshold && fabs(nd->b[0]) < threshold;
}

/* Keys kept per stack from its root end: deeper ones are asked again. */
#define ROOT_KEYS 16

/* The stacks still being added, level by level (run_levels). */
struct active {
	uint32_t *sample;          /* sample ids */
	uint32_t *nkeys;           /* each stack's number of keys (1 for a
	                              stack the cut leaves empty) */
	uint32_t *root;            /* the key at depth D of stack K at
	                              root[D * stride + K], D < ROOT_KEYS: a
	                              level reads one array in order */
	size_t stride;
	uint32_t *node;            /* where each stack is in the tree */
	size_t n;
};

/* One half of collect(): the samples [FROM, TO) written from position
 * FROM on; N of them kept, their values summed in SUM. */
struct half {
	struct ftree *t;
	struct active *ac;
	size_t from, to, n;
	double sum[2][2];
	uint32_t *keys;
	size_t cap;
	int rc;
};

static void *collect_half(void *arg)
{
	struct half *h = arg;
	const struct report *r = h->t->r;
	struct active *ac = h->ac;
	for (size_t si = h->from; si < h->to; si++) {
		double v[2], b[2];
		if (!sample_values(h->t, (uint32_t)si, v, b))
			continue;
		int64_t n = aggregate_stack_keys(r->a, r->p, (uint32_t)si, &h->keys, &h->cap);
		if (n < 0) {
			h->rc = (int)n;
			return NULL;
		}
		if (n == 0 && r->a->filtered)
			continue;
		size_t k = h->from + h->n++;
		uint32_t *rk = ac->root + k;
		ac->sample[k] = (uint32_t)si;
		ac->nkeys[k] = n ? (uint32_t)n : 1;
		if (!n)
			rk[0] = r->p->samples[si].depth ? KEY_ALLOC : KEY_NOFRAMES;
		for (int64_t d = 0; d < n && d < ROOT_KEYS; d++)
			rk[(size_t)d * ac->stride] = h->keys[n - 1 - d];
		for (int j = 0; j < 2; j++) {
			h->sum[0][j] += v[j];
			h->sum[1][j] += b[j];
		}
	}
	return NULL;
}

/* The stacks of the report, their first keys from the root and their
 * values summed at the root: in two halves (the second in a thread of
 * its own when there are two cores), joined in order, the first half's
 * sums plus the second's whatever the number of threads, so the page is
 * the same on every machine. */
static int collect(struct ftree *t, struct active *ac)
{
	const struct report *r = t->r;
	size_t ns = r->p->nsamples;
	ac->sample = malloc((ns + 1) * sizeof(uint32_t));
	ac->nkeys = malloc((ns + 1) * sizeof(uint32_t));
	ac->node = calloc(ns + 1, sizeof(uint32_t));
	ac->stride = ns + 1;
	ac->root = malloc((ns + 1) * ROOT_KEYS * sizeof(uint32_t));
	if (!ac->sample || !ac->nkeys || !ac->node || !ac->root)
		return JH_ENOMEM;
	struct half h[2] = { { .t = t, .ac = ac, .from = 0, .to = ns / 2 },
			     { .t = t, .ac = ac, .from = ns / 2, .to = ns } };
	jh_run_two(collect_half, &h[0], collect_half, &h[1], jh_threads() > 1 && (ns >= 32768 || jh_threads_forced()));
	free(h[0].keys);
	free(h[1].keys);
	if (h[0].rc || h[1].rc)
		return h[0].rc ? h[0].rc : h[1].rc;
	/* the second half's stacks follow the first's */
	size_t at = h[0].n, from = h[1].from, n = h[1].n;
	memmove(ac->sample + at, ac->sample + from, n * sizeof(uint32_t));
	memmove(ac->nkeys + at, ac->nkeys + from, n * sizeof(uint32_t));
	for (size_t d = 0; d < ROOT_KEYS; d++)
		memmove(ac->root + d * ac->stride + at, ac->root + d * ac->stride + from, n * sizeof(uint32_t));
	ac->n = at + n;
	for (int j = 0; j < 2; j++) {
		t->n[0].v[j] = h[0].sum[0][j] + h[1].sum[0][j];
		t->n[0].b[j] = h[0].sum[1][j] + h[1].sum[1][j];
	}
	return 0;
}

/* The stacks are parted in two at the first level where no node holds
 * more than three quarters of them, if there is one before MAX_SPLIT. */
#define MAX_SPLIT 12
#define ANCHOR (UINT32_MAX - 5)     /* a part's stand-in for a node of the tree */

/* Takes levels D0, D0+1, ... of the stacks IDX[0..*N) in T (each stack at
 * ac->node[k] of T) until none goes on or level DMAX; *N is left as the
 * number still going, first in IDX. */
static int run_levels(struct ftree *t, struct active *ac, uint32_t *idx, size_t *np,
		      uint32_t d0, uint32_t dmax, uint32_t **keys, size_t *cap)
{
	const struct report *r = t->r;
	size_t n = *np;
	int rc = 0;
	for (uint32_t d = d0; n && d < dmax && !rc; d++) {
		/* neighbouring stacks often take the same step */
		uint32_t last_node = UINT32_MAX, last_key = 0;
		int64_t last = -1;
		for (size_t i = 0; i < n; i++) {
			uint32_t k = idx[i], key;
			if (d < ROOT_KEYS) {
				key = ac->root[(size_t)d * ac->stride + k];
			} else {
				int64_t nk = aggregate_stack_keys(r->a, r->p, ac->sample[k], keys, cap);
				if (nk < 0) {
					rc = (int)nk;
					break;
				}
				key = (*keys)[nk - 1 - d];
			}
			int64_t c = last;
			if (ac->node[k] != last_node || key != last_key || last < 0) {
				c = child(t, ac->node[k], key);
				if (c < 0) {
					rc = JH_ENOMEM;
					break;
				}
				last_node = ac->node[k];
				last_key = key;
				last = c;
			}
			double v[2], b[2];
			sample_values(t, ac->sample[k], v, b);
			struct fnode *nd = &t->n[c];
			nd->v[0] += v[0];
			nd->v[1] += v[1];
			nd->b[0] += b[0];
			nd->b[1] += b[1];
			ac->node[k] = (uint32_t)c;
		}
		/* the stacks that go on: longer, and in a node shown */
		size_t o = 0;
		for (size_t i = 0; i < n && !rc; i++) {
			uint32_t k = idx[i];
			if (ac->nkeys[k] > d + 1 && !small(&t->n[ac->node[k]], t->threshold))
				idx[o++] = k;
		}
		n = o;
	}
	*np = n;
	return rc;
}

/* One of the two parts of the deeper levels: a tree of its own under
 * stand-ins for the nodes of the main tree its stacks are in (key ANCHOR,
 * the main tree's node as parent).  The two parts hold the stacks of
 * disjoint nodes, so their subtrees never meet. */
struct part {
	uint32_t depth;            /* the level it starts at */
	struct ftree t;
	struct active *ac;
	uint32_t *idx;
	size_t n;
	uint32_t *keys;
	size_t cap;
	int rc;
};

static void *run_part(void *arg)
{
	struct part *pt = arg;
	pt->rc = run_levels(&pt->t, pt->ac, pt->idx, &pt->n, pt->depth, UINT32_MAX, &pt->keys,
			    &pt->cap);
	return NULL;
}

/* Moves the nodes of part PT (but its stand-ins) into T. */
static int graft(struct ftree *t, struct part *pt)
{
	uint32_t *to = malloc((pt->t.len + 1) * sizeof(*to));
	if (!to)
		return JH_ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < pt->t.len && !rc; i++) {
		if (pt->t.n[i].key == ANCHOR) {
			to[i] = pt->t.n[i].parent;
			continue;
		}
		struct fnode nd = pt->t.n[i];
		nd.parent = to[nd.parent];
		rc = JH_PUSH(t->n, t->len, t->cap, nd);
		to[i] = (uint32_t)t->len - 1;
	}
	free(to);
	return rc;
}

/* The tree, one level at a time: every stack still going steps to its
 * key at depth D; then the stacks in nodes under the threshold stop,
 * since those nodes are merged whole.  Only the nodes shown and their
 * small children are made, and each step looks up a small table, so a
 * change of view costs about one pass over the stacks.  Once they spread
 * over the nodes of a level, the stacks are parted by node into two of
 * about the same size, each built in a tree of its own (the second in a
 * thread of its own when there are two cores) and grafted on in order:
 * every node's sum is of the same stacks in the same order either way. */
static int build_levels(struct ftree *t, struct active *ac, uint32_t **keys, size_t *cap)
{
	uint32_t *idx = malloc((ac->n + 1) * sizeof(*idx));
	if (!idx)
		return JH_ENOMEM;
	size_t n = ac->n;
	for (size_t k = 0; k < n; k++)
		idx[k] = (uint32_t)k;
	/* one level at a time until the stacks spread over the nodes */
	int rc = 0;
	uint32_t d = 0;
	size_t lo = 0, hi = 0;
	bool spread = false;
	while (!rc && n && !spread && d < MAX_SPLIT) {
		rc = run_levels(t, ac, idx, &n, d, d + 1, keys, cap);
		d++;
		lo = t->len;
		hi = 0;
		for (size_t i = 0; i < n; i++) {
			uint32_t nd = ac->node[idx[i]];
			lo = nd < lo ? nd : lo;
			hi = nd + 1 > hi ? nd + 1 : hi;
		}
		/* the most stacks in one node of this level */
		size_t most = 0, run = 0;
		uint32_t *cnt = n ? calloc(hi - lo + 1, sizeof(*cnt)) : NULL;
		if (n && !cnt)
			rc = JH_ENOMEM;
		for (size_t i = 0; i < n && cnt; i++) {
			run = ++cnt[ac->node[idx[i]] - lo];
			most = run > most ? run : most;
		}
		free(cnt);
		spread = n >= 2 && most * 4 <= n * 3;
	}
	if (!rc && n && !spread)
		rc = run_levels(t, ac, idx, &n, d, UINT32_MAX, keys, cap);
	/* the stacks going on are all in nodes of level D - 1: [lo, hi) */
	if (!rc && n) {
		size_t span = hi - lo;
		uint32_t *count = calloc(span + 1, sizeof(*count));
		uint8_t *side = calloc(span + 1, 1);
		struct part pt[2] = { { .depth = d, .t = { .r = t->r, .threshold = t->threshold }, .ac = ac },
				      { .depth = d, .t = { .r = t->r, .threshold = t->threshold }, .ac = ac } };
		pt[0].idx = malloc((n + 1) * sizeof(uint32_t));
		pt[1].idx = malloc((n + 1) * sizeof(uint32_t));
		rc = count && side && pt[0].idx && pt[1].idx ? 0 : JH_ENOMEM;
		/* nodes in order, to the first part until it holds half the stacks */
		for (size_t i = 0; i < n && !rc; i++)
			count[ac->node[idx[i]] - lo]++;
		size_t sum = 0;
		for (size_t c = 0; c < span && !rc; c++) {
			side[c] = sum * 2 >= n;
			sum += count[c];
		}
		/* each part's stand-ins, then its stacks moved onto them */
		uint32_t *local = rc ? NULL : malloc((span + 1) * sizeof(*local));
		if (!rc && !local)
			rc = JH_ENOMEM;
		for (size_t c = 0; c < span && !rc; c++) {
			if (!count[c])
				continue;
			struct part *p = &pt[side[c]];
			struct fnode a = { .key = ANCHOR, .parent = (uint32_t)(lo + c), .child = UINT32_MAX,
					   .next = UINT32_MAX, .out = -1 };
			local[c] = (uint32_t)p->t.len;
			rc = JH_PUSH(p->t.n, p->t.len, p->t.cap, a);
		}
		for (size_t i = 0; i < n && !rc; i++) {
			uint32_t k = idx[i], c = ac->node[k] - (uint32_t)lo;
			struct part *p = &pt[side[c]];
			ac->node[k] = local[c];
			p->idx[p->n++] = k;
		}
		if (!rc) {
			jh_run_two(run_part, &pt[0], run_part, &pt[1], jh_threads() > 1 && (n >= 32768 || jh_threads_forced()));
			rc = pt[0].rc ? pt[0].rc : pt[1].rc;
		}
		for (int h = 0; h < 2 && !rc; h++)
			rc = graft(t, &pt[h]);
		for (int h = 0; h < 2; h++) {
			free(pt[h].t.n);
			free(pt[h].t.slots);
			free(pt[h].idx);
			free(pt[h].keys);
		}
		free(local);
		free(count);
		free(side);
	}
	free(idx);
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
	size_t nstack = 0, cap = 0, nkids = 0, capkids = 0, nids = 0, capids = 0, norder = 0;
	struct strtab seen;
	int rc = !order || !name_out || strtab_init(&seen) ? JH_ENOMEM : 0;
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
	uint32_t nnames = 0;
	if (!rc)
		fputs("\"names\":[", out);
	for (size_t k = 1; k < norder && !rc; k++) {
		const struct fnode *nd = &t->n[order[k]];
		if (nd->merged)
			continue;
		const char *name = node_name(t, nd);
		int64_t id = strtab_intern(&seen, name);
		if (id < 0) {
			rc = JH_ENOMEM;
			break;
		}
		while (nids <= (size_t)id && !rc)
			rc = JH_PUSH(ids, nids, capids, UINT32_MAX);
		if (rc)
			break;
		if (ids[id] == UINT32_MAX) {
			ids[id] = nnames++;
			if (nnames > 1)
				fputc(',', out);
			json_str(out, name);
		}
		name_out[order[k]] = ids[id];
	}
	if (!rc)
		fputs("],\n\"nodes\":[", out);
	for (size_t k = 0; k < norder && !rc; k++) {
		const struct fnode *nd = &t->n[order[k]];
		fputs(k ? ",\n[" : "\n[", out);
		if (k == 0 || nd->merged)
			fputs("-1", out);
		else
			fprintf(out, "%u", name_out[order[k]]);
		fprintf(out, ",%d,", k ? t->n[nd->parent].out : -1);
		json_num(out, nd->v[0]);
		fputc(',', out);
		json_num(out, nd->v[1]);
		fputc(',', out);
		json_num(out, nd->b[0]);
		fputc(',', out);
		json_num(out, nd->b[1]);
		fprintf(out, ",%u]", nd->merged);
	}
	if (!rc)
		fputs("]", out);
	if (order && name_out)
		strtab_release(&seen);
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
	uint32_t *keys = NULL;
	size_t cap = 0;
	struct fnode root = { .key = UINT32_MAX, .parent = UINT32_MAX, .child = UINT32_MAX,
			      .next = UINT32_MAX, .out = -1 };
	struct active ac = { 0 };
	int rc = JH_PUSH(t.n, t.len, t.cap, root);
	if (!rc)
		rc = collect(&t, &ac);
	t.threshold = fmax(fabs(t.n[0].v[0]), fabs(t.n[0].b[0])) / JSON_FLAME_MERGE;
	if (!rc)
		rc = build_levels(&t, &ac, &keys, &cap);
	free(keys);
	free(t.slots);
	free(ac.sample);
	free(ac.nkeys);
	free(ac.node);
	free(ac.root);
	t.slots = NULL;
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
