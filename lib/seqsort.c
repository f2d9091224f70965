/* Multikey quicksort of number sequences (see seqsort.h). */
#include "lib/seqsort.h"
#include <stdbool.h>
#include "lib/threads.h"

/* Groups this small are sorted by insertion, comparing whole sequences. */
#define SMALL 12
/* Arrays of this many items or more are sorted in two threads; at most
 * this many parts are made for them. */
#define SEQSORT_SPLIT_MIN 65536
#define SEQSORT_TASKS 200

/* What a sort reads: the sequences, and how many of their elements a
 * key holds (W, each in BITS bits). */
struct ctx {
	const uint32_t *syms;
	unsigned w, bits;
};

/* The element at depth D of item IT, plus one; 0 past its end, so that a
 * sequence comes before the longer ones it begins. */
static inline uint64_t sym_at(const struct seqsort_item *it, size_t d, const uint32_t *syms)
{
	return d < it->len ? (uint64_t)syms[it->off + d] + 1 : 0;
}

/* Whether the items whose keys are K have all ended (the key's last
 * element is past their end): they are equal. */
static inline bool ended(const struct ctx *c, uint64_t k)
{
	return !(k & (((uint64_t)1 << c->bits) - 1));
}

/* Each item's key: its elements at depths D to D + W - 1, the first in
 * the highest bits, so that keys compare as those elements do. */
static void load_keys(struct seqsort_item *a, size_t n, size_t d, const struct ctx *c)
{
	/* the sequences lie anywhere: start loading a few items ahead */
	enum { AHEAD = 16 };
	const uint32_t *syms = c->syms;
	for (size_t i = 0; i < n; i++) {
		if (i + AHEAD < n && d < a[i + AHEAD].len)
			__builtin_prefetch(&syms[a[i + AHEAD].off + d]);
		uint64_t k = 0;
		if (a[i].len >= d + c->w) {
			/* the common case: no end inside the key */
			const uint32_t *x = syms + a[i].off + d;
			for (unsigned j = 0; j < c->w; j++)
				k = k << c->bits | ((uint64_t)x[j] + 1);
		} else {
			for (unsigned j = 0; j < c->w; j++)
				k = k << c->bits | sym_at(&a[i], d + j, syms);
		}
		a[i].key = k;
	}
}

/* Compares two items whose first D elements are equal. */
static int cmp_from(const struct seqsort_item *a, const struct seqsort_item *b, size_t d,
		    const uint32_t *syms)
{
	const uint32_t *x = syms + a->off, *y = syms + b->off;
	size_t n = a->len < b->len ? a->len : b->len;
	for (; d < n; d++)
		if (x[d] != y[d])
			return x[d] < y[d] ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void insertion(struct seqsort_item *a, size_t n, size_t d, const uint32_t *syms)
{
	for (size_t i = 1; i < n; i++) {
		struct seqsort_item t = a[i];
		size_t j = i;
		while (j > 0 && cmp_from(&t, &a[j - 1], d, syms) < 0) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = t;
	}
}

static void swap(struct seqsort_item *a, size_t i, size_t j)
{
	struct seqsort_item t = a[i];
	a[i] = a[j];
	a[j] = t;
}

/* Equal sequences, ordered by id: a heap sort, in place and bounded
 * whatever the ids' order (groups of equal stacks are small, but a
 * hostile profile could make one large). */
static void sift(struct seqsort_item *a, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && a[c + 1].id > a[c].id)
			c++;
		if (a[i].id >= a[c].id)
			return;
		swap(a, i, c);
		i = c;
	}
}

static void by_id(struct seqsort_item *a, size_t n)
{
	if (n <= SMALL) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && a[j].id < a[j - 1].id; j--)
				swap(a, j, j - 1);
		return;
	}
	for (size_t i = n / 2; i-- > 0;)
		sift(a, i, n);
	for (size_t i = n; i-- > 1;) {
		swap(a, 0, i);
		sift(a, 0, i);
	}
}

static uint64_t median3(uint64_t x, uint64_t y, uint64_t z)
{
	if (x < y)
		return y < z ? y : x < z ? z : x;
	return x < z ? x : y < z ? z : y;
}

/* Sorts A[0..n), whose sequences agree on their first D elements and
 * whose keys are their elements at depth D. */
static void mkqs(struct seqsort_item *a, size_t n, size_t d, const struct ctx *c)
{
	while (n > 1) {
		if (n <= SMALL) {
			insertion(a, n, d, c->syms);
			return;
		}
		uint64_t pv = median3(a[0].key, a[n / 2].key, a[n - 1].key);
		/* three ways: [0, lt) below, [lt, gt) equal, [gt, n) above */
		size_t lt = 0, i = 0, gt = n;
		while (i < gt) {
			uint64_t s = a[i].key;
			if (s < pv)
				swap(a, lt++, i++);
			else if (s > pv)
				swap(a, i, --gt);
			else
				i++;
		}
		size_t nlt = lt, neq = gt - lt, ngt = n - gt;
		struct seqsort_item *lo = a, *eq = a + lt, *hi = a + gt;
		/* recurse into the two smaller parts (each at most half of n),
		 * go on with the largest */
		if (neq >= nlt && neq >= ngt) {
			mkqs(lo, nlt, d, c);
			mkqs(hi, ngt, d, c);
			if (ended(c, pv)) {
				by_id(eq, neq);
				return;
			}
			a = eq;
			n = neq;
			d += c->w;
			load_keys(a, n, d, c);
		} else {
			if (ended(c, pv)) {
				by_id(eq, neq);
			} else {
				load_keys(eq, neq, d + c->w, c);
				mkqs(eq, neq, d + c->w, c);
			}
			if (nlt >= ngt) {
				mkqs(hi, ngt, d, c);
				a = lo;
				n = nlt;
			} else {
				mkqs(lo, nlt, d, c);
				a = hi;
				n = ngt;
			}
		}
	}
}

/* A part of the array left to sort: its items agree on their first D
 * elements and their keys are loaded. */
struct task {
	struct seqsort_item *a;
	size_t n, d;
};

/* The parts one thread sorts. */
struct bin {
	struct task t[SEQSORT_TASKS];
	size_t nt, items;
	const struct ctx *c;
};

static void *run_bin(void *arg)
{
	struct bin *b = arg;
	for (size_t i = 0; i < b->nt; i++)
		mkqs(b->t[i].a, b->t[i].n, b->t[i].d, b->c);
	return NULL;
}

/* The two-thread sort: the largest part is partitioned as mkqs() would
 * until no part holds most of the items (stacks share their first frames,
 * so the first steps split nothing), then the parts go to two threads,
 * the largest first to the one with fewer items.  The parts are disjoint
 * ranges of the array, each sorted as one thread would sort it: the
 * result is the same. */
static void sort_two(struct seqsort_item *items, size_t n, const struct ctx *c)
{
	struct task t[SEQSORT_TASKS];
	size_t nt = 1;
	t[0] = (struct task){ items, n, 0 };
	for (int step = 0; step < 64 && nt + 3 <= SEQSORT_TASKS; step++) {
		size_t big = 0;
		for (size_t i = 1; i < nt; i++)
			if (t[i].n > t[big].n)
				big = i;
		struct task b = t[big];
		if (b.n <= n / 2 + n / 8 || b.n <= SMALL)
			break;
		uint64_t pv = median3(b.a[0].key, b.a[b.n / 2].key, b.a[b.n - 1].key);
		size_t lt = 0, i = 0, gt = b.n;
		while (i < gt) {
			uint64_t sv = b.a[i].key;
			if (sv < pv)
				swap(b.a, lt++, i++);
			else if (sv > pv)
				swap(b.a, i, --gt);
			else
				i++;
		}
		t[big] = t[--nt];
		if (lt)
			t[nt++] = (struct task){ b.a, lt, b.d };
		if (b.n > gt)
			t[nt++] = (struct task){ b.a + gt, b.n - gt, b.d };
		if (gt > lt) {
			if (ended(c, pv)) {
				by_id(b.a + lt, gt - lt);
			} else {
				load_keys(b.a + lt, gt - lt, b.d + c->w, c);
				t[nt++] = (struct task){ b.a + lt, gt - lt, b.d + c->w };
			}
		}
	}
	struct bin bins[2] = { { .c = c }, { .c = c } };
	bool used[SEQSORT_TASKS] = { false };
	for (size_t k = 0; k < nt; k++) {
		size_t big = SIZE_MAX;
		for (size_t i = 0; i < nt; i++)
			if (!used[i] && (big == SIZE_MAX || t[i].n > t[big].n))
				big = i;
		used[big] = true;
		struct bin *to = bins[0].items <= bins[1].items ? &bins[0] : &bins[1];
		to->t[to->nt++] = t[big];
		to->items += t[big].n;
	}
	jh_run_two(run_bin, &bins[0], run_bin, &bins[1], true);
}

void seqsort(struct seqsort_item *items, size_t n, const uint32_t *syms, uint32_t nsyms)
{
	/* four elements a key when each, plus one, fits in 16 bits, else two */
	struct ctx c = { syms, 2, 32 };
	if (nsyms < UINT16_MAX)
		c = (struct ctx){ syms, 4, 16 };
	load_keys(items, n, 0, &c);
	/* JHEAP_THREADS set: small arrays too, for the tests */
	if ((n >= SEQSORT_SPLIT_MIN || (jh_threads_forced() && n > SMALL)) && jh_threads() > 1)
		sort_two(items, n, &c);
	else
		mkqs(items, n, 0, &c);
}
