/*
 * linesort: a decoded line program's rows in libdw's order.  See
 * linesort.h.
 */
#include "symbolize/linesort.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* libdw's order: by address, an end of sequence first, then program order. */
static inline bool linesort_before(const struct linetab_row *a, const struct linetab_row *b)
{
	return a->addr < b->addr || (a->addr == b->addr && a->end && !b->end);
}

/* Sorts the N rows of R, which come as NRUN runs each in order, run k
 * starting at RUN[k] (RUN[nrun] == N), into order in R, stably: bottom-up
 * merges of neighbouring runs, the left one first on ties.  TMP holds N
 * rows; RUN is used up. */
static void linesort_merge(struct linetab_row *r, size_t n, size_t *run, size_t nrun,
			   struct linetab_row *tmp)
{
	struct linetab_row *src = r, *dst = tmp;

	while (nrun > 1) {
		size_t k, out = 0;
		for (k = 0; k + 1 < nrun; k += 2) {
			size_t i = run[k], m = run[k + 1], b = run[k + 2], o = i, j = m;
			while (i < m && j < b)
				dst[o++] = linesort_before(&src[j], &src[i]) ? src[j++] : src[i++];
			memcpy(dst + o, src + i, (m - i) * sizeof *dst);
			memcpy(dst + o + (m - i), src + j, (b - j) * sizeof *dst);
			run[out++] = run[k];
		}
		if (k < nrun) {
			memcpy(dst + run[k], src + run[k], (n - run[k]) * sizeof *dst);
			run[out++] = run[k];
		}
		run[out] = n;
		nrun = out;
		struct linetab_row *t = src;
		src = dst;
		dst = t;
	}
	if (src != r)
		memcpy(r, src, n * sizeof *r);
}

struct linesort_blocks {
	const struct linetab_row *r;
	const size_t *start;     /* block k is rows start[k] .. start[k + 1] - 1 */
};

/* Blocks by their first row, then by place in the program. */
static int linesort_block_cmp(const void *a, const void *b, void *arg)
{
	const struct linesort_blocks *x = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct linetab_row *ri = &x->r[x->start[i]], *rj = &x->r[x->start[j]];

	if (linesort_before(ri, rj))
		return -1;
	if (linesort_before(rj, ri))
		return 1;
	return i < j ? -1 : i > j;
}

static int linesort_index_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	return i < j ? -1 : i > j;
}

/* The rows come in blocks already in order: a sequence, or the part of
 * one before a step back.  Blocks are ordered by their first rows; those
 * that overlap (a sequence's last row and its end row share an address,
 * which puts the end first; functions the linker discarded all start at
 * 0) form a cluster that is merged, in program order; clusters are apart
 * and simply follow one another.  A plain merge sort of the blocks took
 * as long as decoding the program. */
int linesort(struct linetab_row **rows, size_t n)
{
	struct linetab_row *r = *rows, *dst = NULL, *tmp = NULL;
	size_t *start = NULL, *order = NULL, *run = NULL;
	size_t nblk = 0, cap = 0, tmpcap = 0, o = 0;
	bool sorted = true;

	for (size_t i = 0; i < n; i++) {
		if (i > 0 && linesort_before(&r[i], &r[i - 1]))
			sorted = false;
		else if (i > 0 && !r[i - 1].end)
			continue;
		if (nblk + 2 > cap) {
			size_t ncap = cap ? cap * 2 : 64;
			size_t *t = realloc(start, ncap * sizeof *t);
			if (!t)
				goto fail;
			start = t;
			cap = ncap;
		}
		start[nblk++] = i;
	}
	if (sorted) {
		free(start);
		return 0;
	}
	start[nblk] = n;
	struct linesort_blocks x = { r, start };
	if (!(order = malloc(nblk * sizeof *order)) || !(run = malloc((nblk + 1) * sizeof *run))
	    || !(dst = malloc(n * sizeof *dst)))
		goto fail;
	for (size_t k = 0; k < nblk; k++)
		order[k] = k;
	qsort_r(order, nblk, sizeof *order, linesort_block_cmp, &x);
	for (size_t k = 0, e; k < nblk; k = e) {
		const struct linetab_row *maxlast = &r[start[order[k] + 1] - 1];
		size_t len = start[order[k] + 1] - start[order[k]];
		for (e = k + 1; e < nblk && !linesort_before(maxlast, &r[start[order[e]]]); e++) {
			const struct linetab_row *last = &r[start[order[e] + 1] - 1];
			if (linesort_before(maxlast, last))
				maxlast = last;
			len += start[order[e] + 1] - start[order[e]];
		}
		if (e == k + 1) {
			memcpy(dst + o, r + start[order[k]], len * sizeof *dst);
			o += len;
			continue;
		}
		/* a cluster: its blocks in program order, then merged */
		qsort(order + k, e - k, sizeof *order, linesort_index_cmp);
		size_t c = 0;
		for (size_t b = k; b < e; b++) {
			size_t blen = start[order[b] + 1] - start[order[b]];
			run[b - k] = c;
			memcpy(dst + o + c, r + start[order[b]], blen * sizeof *dst);
			c += blen;
		}
		run[e - k] = len;
		if (len > tmpcap) {
			struct linetab_row *t = realloc(tmp, len * sizeof *t);
			if (!t)
				goto fail;
			tmp = t;
			tmpcap = len;
		}
		linesort_merge(dst + o, len, run, e - k, tmp);
		o += len;
	}
	*rows = dst;
	free(r);
	free(start);
	free(order);
	free(run);
	free(tmp);
	return 0;
fail:
	free(start);
	free(order);
	free(run);
	free(dst);
	free(tmp);
	return -1;
}
