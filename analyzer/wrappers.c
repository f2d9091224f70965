#include "analyzer/wrappers.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/strtab.h"
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"
#include "lib/idmap.h"

/* 1 for a name that says it allocates, 2 for none (module+0xSTART), 0
 * otherwise. */
static int name_kind(const char *name);

bool wrappers_name_fits(const char *name)
{
	return name_kind(name) != 0;
}

static int name_kind(const char *name)
{
	static const char *const words[] = { "alloc", "memalign", "strdup", "strndup", "mem_get" };
	if (!name[0] || name[0] == '[' || !strncmp(name, "0x", 2) || !strncmp(name, "std::", 5) ||
	    !strncmp(name, "__gnu_cxx::", 11))
		return 0;
	/* module+0xSTART: unnamed code (no space; the module's name first) */
	const char *plus = strstr(name, "+0x");
	if (plus && plus > name && !strchr(name, ' ')) {
		const char *h = plus + 3;
		while (isxdigit((unsigned char)*h))
			h++;
		if (!*h && h > plus + 3)
			return 2;
	}
	for (const char *s = name; *s; s++)
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (!strncasecmp(s, words[i], strlen(words[i])))
				return 1;
	return 0;
}

/* What is known of one function (a base name: a key without " (inline)"). */
enum { W_NONE, W_YES, W_THROUGH, W_NO };
#define NVIA 4
struct fn {
	uint8_t fits, state;       /* name_kind(); W_* */
	uint8_t nvia;
	uint32_t via[NVIA];        /* W_THROUGH: the callers that may be wrappers */
	double via_v[NVIA];        /* and the bytes each brings */
	double judged;             /* its flat in the round it was judged */
	uint32_t seen;             /* the last sample that added to cum */
	double flat, cum, flat0;   /* this round's; flat0 of the first round */
};

/* A (candidate, caller) pair of pass 2 and the bytes through it. */
struct edge {
	uint32_t callee, caller;
	double v;
};

struct finder {
	const struct aggregate *a;
	struct strtab names;       /* base names */
	uint32_t *base;            /* key id -> base name id */
	struct fn *fn;             /* per base name id */
	size_t nfn;
	double total, total0;
	int round;
	/* pass 2 */
	struct edge *edges;
	size_t nedges, cap_edges;
	struct idmap index;
	const struct edge *want;   /* for edge_eq */
	/* the stacks after the allocator cut and the filters, as base name
	 * ids, gathered once for the rounds after the first: stack I is
	 * ids[off[I]..off[I + 1]), of value val[I] */
	uint32_t *ids;
	size_t nids, cap_ids;
	size_t *off;
	double *val;
	size_t nstacks, cap_off, cap_val;
	wrappers_trace_fn trace;   /* JHEAP_DEBUG=wrappers */
	void *tctx;
};

static bool is_cut(const struct fn *f)
{
	return f->state == W_YES || f->state == W_THROUGH;
}

/* The first of KEYS that is not cut (N when every one is). */
static size_t first_kept(const struct finder *fd, const uint32_t *keys, size_t n)
{
	size_t i = 0;
	while (i < n && is_cut(&fd->fn[keys[i]]))
		i++;
	return i;
}

static int gather(void *ctx, uint32_t sample, const uint32_t *keys, size_t n, double v)
{
	(void)sample;
	struct finder *fd = ctx;
	if (v <= 0 || !n)
		return 0;
	if (jh_grow(&fd->ids, &fd->cap_ids, fd->nids + n, sizeof(*fd->ids)) ||
	    jh_grow(&fd->off, &fd->cap_off, fd->nstacks + 2, sizeof(*fd->off)) ||
	    jh_grow(&fd->val, &fd->cap_val, fd->nstacks + 1, sizeof(*fd->val)))
		return JH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		fd->ids[fd->nids + i] = fd->base[keys[i]];
	fd->off[fd->nstacks] = fd->nids;
	fd->val[fd->nstacks++] = v;
	fd->nids += n;
	fd->off[fd->nstacks] = fd->nids;
	return 0;
}

static void first_sums(struct finder *fd)
{
	const struct aggregate *a = fd->a;
	for (size_t r = 1; r < a->nrows; r++) {
		struct fn *f = &fd->fn[fd->base[a->rows[r].key]];
		if (a->rows[r].flat > 0) {
			f->flat += a->rows[r].flat;
			fd->total += a->rows[r].flat;
		}
		if (a->rows[r].cum > 0)
			f->cum += a->rows[r].cum;
	}
}

static void pass_sums(struct finder *fd, uint32_t sample, const uint32_t *keys, size_t n, double v)
{
	size_t i = first_kept(fd, keys, n);
	if (i == n || v <= 0)
		return;
	uint32_t stamp = sample + 1;
	struct fn *leaf = &fd->fn[keys[i]];
	leaf->flat += v;
	fd->total += v;
	for (size_t j = i; j < n; j++) {
		struct fn *f = &fd->fn[keys[j]];
		if (f->seen != stamp) {
			f->seen = stamp;
			f->cum += v;
		}
	}
}

static uint64_t edge_hash(uint32_t callee, uint32_t caller)
{
	return jh_mix64((uint64_t)callee << 32 | caller);
}

static int edge_eq(const void *ctx, uint32_t id)
{
	const struct finder *fd = ctx;
	return fd->edges[id].callee == fd->want->callee && fd->edges[id].caller == fd->want->caller;
}

static bool candidate(const struct finder *fd, const struct fn *f)
{
	return f->state == W_NONE && f->fits && f->flat > 0 &&
	       f->flat >= WRAP_MIN_SHARE * fd->total0 && f->flat >= WRAP_MIN_INNER * f->cum;
}

static int pass_callers(struct finder *fd, const uint32_t *keys, size_t n, double v)
{
	size_t i = first_kept(fd, keys, n);
	if (i == n || v <= 0)
		return 0;
	uint32_t leaf = keys[i];
	if (!candidate(fd, &fd->fn[leaf]))
		return 0;
	/* the first function above the leaf that is neither the leaf again
	 * (an inline copy, recursion) nor cut */
	size_t j = i + 1;
	while (j < n && (keys[j] == leaf || is_cut(&fd->fn[keys[j]])))
		j++;
	if (j == n)
		return 0;   /* the stack ends there: no caller known */
	struct edge want = { leaf, keys[j], 0 };
	fd->want = &want;
	uint64_t h = edge_hash(want.callee, want.caller);
	uint32_t id = idmap_find(&fd->index, h, edge_eq, fd);
	if (id == UINT32_MAX) {
		id = (uint32_t)fd->nedges;
		if (JH_PUSH(fd->edges, fd->nedges, fd->cap_edges, want) || idmap_put(&fd->index, h, id))
			return JH_ENOMEM;
	}
	fd->edges[id].v += v;
	return 0;
}

static int cmp_edge(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	if (a->callee != b->callee)
		return a->callee < b->callee ? -1 : 1;
	if (a->v != b->v)
		return a->v > b->v ? -1 : 1;
	return a->caller < b->caller ? -1 : a->caller > b->caller;
}

/* Judges every candidate of this round from its callers; returns how
 * many were cut. */
static size_t judge(struct finder *fd)
{
	size_t cut = 0;
	jh_qsort(fd->edges, fd->nedges, sizeof(*fd->edges), cmp_edge);
	for (size_t e = 0; e < fd->nedges;) {
		uint32_t callee = fd->edges[e].callee;
		struct fn *f = &fd->fn[callee];
		size_t many = 0, first = e;
		for (; e < fd->nedges && fd->edges[e].callee == callee; e++)
			if (fd->edges[e].v >= WRAP_MIN_CALLER_SHARE * f->flat)
				many++;
		const struct edge *top = &fd->edges[first];
		/* the bytes that come through callers that could be wrappers
		 * too, the largest first (the edges are sorted so) */
		double through = 0;
		f->nvia = 0;
		f->judged = f->flat;
		for (size_t k = first; k < e; k++) {
			const struct fn *c = &fd->fn[fd->edges[k].caller];
			if (!c->fits || c->state == W_NO)
				continue;
			through += fd->edges[k].v;
			if (f->nvia < NVIA) {
				f->via[f->nvia] = fd->edges[k].caller;
				f->via_v[f->nvia++] = fd->edges[k].v;
			}
		}
		if (fd->trace) {
			char msg[700];
			snprintf(msg, sizeof(msg), "round %d: %.200s: %.1f%% flat, %.1f%% of its cum; %zu callers with %g%% or more of it, the first %.200s with %.1f%%; %.1f%% through callers that may be wrappers",
				 fd->round + 1, strtab_get(&fd->names, callee), 100 * f->flat / fd->total0,
				 100 * f->flat / f->cum, many, 100 * WRAP_MIN_CALLER_SHARE,
				 strtab_get(&fd->names, top->caller), 100 * top->v / f->flat,
				 100 * through / f->flat);
			fd->trace(fd->tctx, msg);
		}
		if (many >= WRAP_MIN_CALLERS) {
			f->state = W_YES;
			cut++;
		} else if (through >= WRAP_MIN_THROUGH * f->flat) {
			f->state = W_THROUGH;
			cut++;
		} else {
			f->state = W_NO;
		}
	}
	/* a candidate whose every stack ends at it has no caller to judge */
	for (size_t k = 0; k < fd->nfn; k++)
		if (candidate(fd, &fd->fn[k]))
			fd->fn[k].state = W_NO;
	return cut;
}

/* A function whose bytes come through callers that may be wrappers is
 * one when those that are bring WRAP_MIN_RESOLVED of its bytes, down the
 * chain. */
static void resolve(struct finder *fd)
{
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t k = 0; k < fd->nfn; k++) {
			struct fn *f = &fd->fn[k];
			if (f->state != W_THROUGH)
				continue;
			double yes = 0, open = 0;
			for (uint8_t i = 0; i < f->nvia; i++) {
				uint8_t st = fd->fn[f->via[i]].state;
				if (st == W_YES)
					yes += f->via_v[i];
				else if (st == W_THROUGH)
					open += f->via_v[i];
			}
			if (yes >= WRAP_MIN_RESOLVED * f->judged) {
				f->state = W_YES;
				changed = true;
			} else if (yes + open < WRAP_MIN_RESOLVED * f->judged) {
				f->state = W_NO;
				changed = true;
			}
		}
	}
	/* a chain that only leads to itself proves nothing */
	for (size_t k = 0; k < fd->nfn; k++)
		if (fd->fn[k].state == W_THROUGH)
			fd->fn[k].state = W_NO;
}

static int base_names(struct finder *fd)
{
	const struct aggregate *a = fd->a;
	if (strtab_init(&fd->names) || !(fd->base = calloc(a->nrows + 1, sizeof(*fd->base))))
		return JH_ENOMEM;
	for (size_t k = 0; k < a->nrows; k++) {
		const struct strtab_ent *e = &a->keys.ents[k];
		size_t n = e->n;
		if (n > 9 && !memcmp(e->s + n - 9, " (inline)", 9))
			n -= 9;
		int64_t id = strtab_intern_n(&fd->names, e->s, n);
		if (id < 0)
			return JH_ENOMEM;
		fd->base[k] = (uint32_t)id;
	}
	fd->nfn = fd->names.len;
	if (!(fd->fn = calloc(fd->nfn + 1, sizeof(*fd->fn))))
		return JH_ENOMEM;
	for (size_t i = 0; i < fd->nfn; i++)
		fd->fn[i].fits = (uint8_t)name_kind(strtab_get(&fd->names, (uint32_t)i));
	return 0;
}

struct found { uint32_t id; double bytes; const char *name; };

static int cmp_found(const void *x, const void *y)
{
	const struct found *a = x, *b = y;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int collect(struct finder *fd, struct wrappers *w)
{
	struct found *f = calloc(fd->nfn + 1, sizeof(*f));
	size_t n = 0;
	double held = 0;
	if (!f)
		return JH_ENOMEM;
	for (size_t k = 0; k < fd->nfn; k++)
		if (fd->fn[k].state == W_YES)
			f[n++] = (struct found){ (uint32_t)k, fd->fn[k].flat0,
						 strtab_get(&fd->names, (uint32_t)k) };
	jh_qsort(f, n, sizeof(*f), cmp_found);
	int rc = 0;
	for (size_t i = 0; i < n && w->n < WRAP_MAX; i++) {
		if (!(w->names[w->n] = strdup(f[i].name))) {
			rc = JH_ENOMEM;
			break;
		}
		w->bytes[w->n++] = f[i].bytes;
		held += f[i].bytes;   /* the share of the pattern's names only */
	}
	w->share = fd->total0 > 0 ? held / fd->total0 : 0;
	free(f);
	return rc;
}

/* Whether some row could make a candidate of the first round: its
 * function (of one or two keys, inlined or not) leaf of WRAP_MIN_SHARE,
 * and a name that fits.  Most reports have none, and cost no more. */
static bool any_candidate(const struct aggregate *a)
{
	double total = 0;
	for (size_t r = 1; r < a->nrows; r++)
		if (a->rows[r].flat > 0)
			total += a->rows[r].flat;
	for (size_t r = 1; r < a->nrows; r++) {
		if (!(a->rows[r].flat >= WRAP_MIN_SHARE / 2 * total) || total <= 0)
			continue;
		const struct strtab_ent *e = &a->keys.ents[a->rows[r].key];
		char name[4096];
		size_t n = e->n < sizeof(name) ? e->n : sizeof(name) - 1;
		memcpy(name, e->s, n);
		name[n] = '\0';
		if (n > 9 && !strcmp(name + n - 9, " (inline)"))
			name[n - 9] = '\0';
		if (name_kind(name))
			return true;
	}
	return false;
}

int wrappers_find(struct wrappers *w, const struct aggregate *a, const struct profile *p,
		  enum pf_value v, wrappers_trace_fn trace, void *tctx)
{
	memset(w, 0, sizeof(*w));
	if (!any_candidate(a))
		return 0;
	struct finder fd = { .a = a, .trace = trace, .tctx = tctx };
	idmap_init(&fd.index);
	int rc = base_names(&fd);
	for (fd.round = 0; !rc && fd.round < WRAP_MAX_ROUNDS; fd.round++) {
		fd.total = 0;
		for (size_t k = 0; k < fd.nfn; k++) {
			fd.fn[k].flat = fd.fn[k].cum = 0;
			fd.fn[k].seen = 0;
		}
		/* the first round's sums are the aggregate's own rows (a
		 * function's cum as the sum of its keys' is at least its true
		 * cum, so the test is, if anything, stricter): a report
		 * without a candidate costs no pass over the stacks */
		if (fd.round) {
			for (size_t k = 0; k < fd.nstacks; k++)
				pass_sums(&fd, (uint32_t)k, fd.ids + fd.off[k], fd.off[k + 1] - fd.off[k],
					  fd.val[k]);
		} else {
			first_sums(&fd);
		}
		if (!fd.round) {
			fd.total0 = fd.total;
			for (size_t k = 0; k < fd.nfn; k++)
				fd.fn[k].flat0 = fd.fn[k].flat;
		}
		bool any = false;
		for (size_t k = 0; k < fd.nfn && !any; k++)
			any = candidate(&fd, &fd.fn[k]);
		if (!any)
			break;
		fd.nedges = 0;
		idmap_release(&fd.index);
		idmap_init(&fd.index);
		if (!fd.round && (rc = aggregate_each_stack(a, p, v, gather, &fd)))
			break;
		for (size_t k = 0; k < fd.nstacks && !rc; k++)
			rc = pass_callers(&fd, fd.ids + fd.off[k], fd.off[k + 1] - fd.off[k], fd.val[k]);
		if (rc)
			break;
		if (!judge(&fd))
			break;
	}
	if (!rc) {
		resolve(&fd);
		rc = collect(&fd, w);
	}
	idmap_release(&fd.index);
	free(fd.edges);
	free(fd.ids);
	free(fd.off);
	free(fd.val);
	free(fd.fn);
	free(fd.base);
	strtab_release(&fd.names);
	if (rc)
		wrappers_release(w);
	return rc;
}

void wrappers_release(struct wrappers *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->names[i]);
	memset(w, 0, sizeof(*w));
}

int wrappers_pattern(const struct wrappers *w, const char *user, char *buf, size_t len)
{
	size_t n = 0;
#define PUT(c) do { if (n + 1 >= len) return -1; buf[n++] = (c); } while (0)
	if (user && *user) {
		for (const char *s = user; *s; s++)
			PUT(*s);
		PUT('|');
	}
	PUT('^');
	PUT('(');
	for (size_t i = 0; i < w->n; i++) {
		if (i)
			PUT('|');
		for (const char *s = w->names[i]; *s; s++) {
			unsigned char c = (unsigned char)*s;
			if (c <= 0x20 || c >= 0x7f) {
				/* a byte, as PCRE2 reads it: nothing a terminal
				 * obeys, and no space, which ends a word in the
				 * shell */
				PUT('\\');
				PUT('x');
				PUT("0123456789abcdef"[c >> 4]);
				PUT("0123456789abcdef"[c & 15]);
				continue;
			}
			if (strchr("\\^$.|?*+()[]{}", c))
				PUT('\\');
			PUT(*s);
		}
	}
	PUT(')');
	PUT('$');
#undef PUT
	buf[n] = '\0';
	return (int)n;
}
