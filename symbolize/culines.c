/*
 * culines: one unit's line table, decoded whole, by sequence or through
 * libdw.  See culines.h.
 */
#include "symbolize/culines.h"
#include "lib/array.h"

#include <stdlib.h>
#include <string.h>

/* More rows than this and the table is refused (bounded memory), as a
 * unit with more function ranges is (cuindex.c). */
#define CULINES_MAX_ROWS (1u << 26)

/* A row of a line table read through libdw (units linetab.c declines);
 * the libdw row is read again only for the answer. */
struct culines_lrow {
	uint64_t addr;
	Dwarf_Line *line;
	int end;
};

/* A lazy table's decoded sequence. */
struct culines_seqrows {
		struct linetab_row *rows;   /* NULL until decoded */
	size_t n;
};

/* culines_set_libdw: every unit's lines through libdw. */
static int culines_libdw;

void culines_set_libdw(int on)
{
	culines_libdw = on;
}

/* Whether a line-table row at A can describe real code.  Rows of discarded
 * functions restart at 0; an end row sits one past its code, hence the +1. */
static int culines_row_valid(const struct culines *cl, uint64_t a, bool end)
{
	if (!end)
		return cuindex_range_in(cl->valid, cl->nvalid, a, a + 1);
	return a == 0 || cuindex_range_in(cl->valid, cl->nvalid, a - 1, a);
}

/* Whether [lo, hi) lies inside one valid range. */
static bool culines_inside(const struct culines *cl, uint64_t lo, uint64_t hi)
{
	if (cl->nvalid == 0)
		return true;
	for (size_t i = 0; i < cl->nvalid; i++)
		if (lo >= cl->valid[i].lo && hi <= cl->valid[i].hi)
			return true;
	return false;
}

/* Whether [lo, hi) meets a valid range. */
static bool culines_meets(const struct culines *cl, uint64_t lo, uint64_t hi)
{
	if (cl->nvalid == 0)
		return true;
	for (size_t i = 0; i < cl->nvalid; i++)
		if (lo < cl->valid[i].hi && cl->valid[i].lo < hi)
			return true;
	return false;
}

/* A sequence with rows (not only an end row). */
static bool culines_seq_rows(const struct cuindex_seq *q)
{
	return q->lo < q->hi || q->trail;
}

/* A kept sequence and its place in the program. */
struct culines_seqsort {
	struct cuindex_seq q;
	size_t prog;
};

/* By lo, then hi, then a sequence of only an end row first, then program
 * order: among sequences at one address the one a lookup lands on (the
 * last) is then the one whose rows the sorted table puts last. */
static int culines_seqsort_cmp(const void *a, const void *b)
{
	const struct culines_seqsort *x = a, *y = b;

	if (x->q.lo != y->q.lo)
		return x->q.lo < y->q.lo ? -1 : 1;
	if (x->q.hi != y->q.hi)
		return x->q.hi < y->q.hi ? -1 : 1;
	if (culines_seq_rows(&x->q) != culines_seq_rows(&y->q))
		return culines_seq_rows(&x->q) ? 1 : -1;
	return x->prog < y->prog ? -1 : x->prog > y->prog;
}

bool culines_seqs_ordered(const struct cuindex_seq *seqs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (seqs[i].lo > seqs[i].hi || seqs[i].trail > 2 || (i && seqs[i].lo < seqs[i - 1].hi))
			return false;
	return true;
}

/* From the sequences linetab found (program order), those a lookup can
 * decode alone with the answer the whole valid table gives.  The whole
 * table is sorted by address, an end row before other rows at its
 * address, then program order; the last row at or below a pc answers
 * (none when it is an end row).  That row is in the sequence a lookup
 * lands on (the last starting at or below the pc) when:
 *  - each sequence is wholly valid or wholly not (rows are kept one by
 *    one; a sequence partly valid would not start where its valid rows
 *    do), the invalid ones dropped;
 *  - sorted, each starts at or past where the one before ends;
 *  - where one with rows at its end (TRAIL) ends just where the next one
 *    starts, with rows, the next one comes later in the program, so that
 *    its rows sort after the trailing ones.
 * Anything else and the unit has no sequences. */
static int culines_keep_seqs(struct culines *cl)
{
	const struct linetab_seq *ls = cl->lt.seqs;
	size_t n = 0, forced = SIZE_MAX;
	uint64_t top = 0;

	if (!cl->lt.nseqs)
		return 0;
	/* linetab makes the table's highest row an end, as libdw does: a
	 * trailing row, when the highest sequence has any (the last in the
	 * program of those that end highest) */
	for (size_t i = 0; i < cl->lt.nseqs; i++)
		if (ls[i].hi >= top) {
			if (ls[i].hi > top)
				forced = SIZE_MAX;
			top = ls[i].hi;
			if (ls[i].trail)
				forced = i;
		}
	struct culines_seqsort *v = malloc(cl->lt.nseqs * sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < cl->lt.nseqs; i++) {
		struct cuindex_seq q = { ls[i].lo, ls[i].hi, ls[i].off, ls[i].trail };
		bool valid;
		if (q.lo == q.hi) {
			bool end = culines_row_valid(cl, q.hi, true);
			bool rows = q.trail && culines_row_valid(cl, q.hi, false);
			if (q.trail && end != rows)
				goto none;
			valid = end || rows;
		} else if (culines_inside(cl, q.lo, q.hi)) {
			valid = true;
		} else if (!culines_meets(cl, q.lo, q.hi)) {
			valid = false;
		} else {
			goto none;
		}
		if (valid)
			v[n++] = (struct culines_seqsort){ q, i };
	}
	jh_qsort(v, n, sizeof *v, culines_seqsort_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct culines_seqsort *a = k ? &v[k - 1] : NULL, *b = &v[i];
		/* an end row alone where another sequence ends changes
		 * nothing (end rows sort first), and a lookup must not land
		 * on it rather than on that sequence's trailing rows */
		if (a && !culines_seq_rows(&b->q) && a->q.hi == b->q.lo)
			continue;
		if (a && (a->q.hi > b->q.lo ||
			  (a->q.hi == b->q.lo && a->q.trail && a->prog > b->prog)))
			goto none;
		v[k++] = *b;
	}
	n = k;
	if (!n)
		goto none;
	/* that row kept: it must be in the last sequence, which then answers
	 * nothing past its end */
	if (forced != SIZE_MAX && culines_row_valid(cl, ls[forced].hi, false)) {
		if (v[n - 1].prog != forced || v[n - 1].q.lo == v[n - 1].q.hi)
			goto none;
		v[n - 1].q.trail = 2;
	}
	cl->seqs = malloc(n * sizeof *cl->seqs);
	if (!cl->seqs) {
		free(v);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		cl->seqs[i] = v[i].q;
	cl->nseqs = n;
none:
	free(v);
	return 0;
}

/* The unit's line table through linetab.c, keeping the valid rows. */
static int culines_read_own_lines(struct culines *cl, const char *names_dir)
{
	if (linetab_read(&cl->lt, &cl->cudie, names_dir) != 0)
		return -1;
	int rc = culines_keep_seqs(cl);
	/* what the table keeps of them is in cl->seqs */
	free(cl->lt.seqs);
	cl->lt.seqs = NULL;
	cl->lt.nseqs = 0;
	if (rc) {
		linetab_release(&cl->lt);
		return -1;
	}
	struct linetab_row *rows = cl->lt.rows;
	size_t n = 0;
	for (size_t i = 0; i < cl->lt.nrows; i++)
		if (culines_row_valid(cl, rows[i].addr, rows[i].end))
			rows[n++] = rows[i];
	/* the decoder sized the array for the program, not for what is kept */
	if (n == 0) {
		free(rows);
		cl->lt.rows = NULL;
	} else if ((rows = realloc(rows, n * sizeof *rows))) {
		cl->lt.rows = rows;
	}
	cl->lt.nrows = n;
	cl->own = true;
	return 0;
}

/* NAMES_DIR: the comp_dir the table's DWARF 2-4 file names are built
 * with (see cumap_names_dir). */
static int culines_read_lines(struct culines *cl, const char *names_dir)
{
	Dwarf_Lines *lines;
	size_t n;

	if (!culines_libdw && culines_read_own_lines(cl, names_dir) == 0)
		return 0;
	/* What linetab.c declines, libdw reads (or refuses) as it always has. */
	if (dwarf_getsrclines(&cl->cudie, &lines, &n) != 0 || n == 0)
		return 0;
	if (n > CULINES_MAX_ROWS)
		return -1;
	cl->rows = malloc(n * sizeof *cl->rows);
	if (!cl->rows)
		return -1;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool end = false;
		if (!l || dwarf_lineaddr(l, &a) != 0)
			continue;
		dwarf_lineendsequence(l, &end);
		if (!culines_row_valid(cl, a, end))
			continue;
		struct culines_lrow *r = &cl->rows[cl->nrows++];
		r->addr = a;
		r->line = l;
		r->end = end;
	}
	return 0;
}

/* Only the header and file names of the line table, for the sequences
 * SEQS[0..n) (sorted and apart) to be decoded as pcs need them.  Returns
 * 0, or -1 when linetab.c cannot read the table (or out of memory). */
static int culines_open_lines(struct culines *cl, const char *names_dir,
			      const struct cuindex_seq *seqs, size_t n)
{
	if (culines_libdw || linetab_open(&cl->lt, &cl->cudie, names_dir) != 0)
		return -1;
	cl->seqs = malloc(n * sizeof *cl->seqs);
	cl->seqrows = calloc(n, sizeof *cl->seqrows);
	if (!cl->seqs || !cl->seqrows) {
		free(cl->seqs);
		free(cl->seqrows);
		cl->seqs = NULL;
		cl->seqrows = NULL;
		linetab_release(&cl->lt);
		return -1;
	}
	memcpy(cl->seqs, seqs, n * sizeof *seqs);
	cl->nseqs = n;
	cl->own = cl->lazy = true;
	return 0;
}

/* Decodes sequence I of a lazy table into seqrows[i]: its valid rows in
 * the whole table's order (the end row before the rows at its address).
 * Returns 0, or -1 when it does not decode as it was described (then
 * nothing is kept). */
static int culines_decode_seq(struct culines *cl, size_t i)
{
	const struct cuindex_seq *q = &cl->seqs[i];
	struct linetab_row *r;
	size_t n, k = 0;

	if (linetab_seq(&cl->lt, q->off, &r, &n))
		return -1;
	/* a first row at lo, an end row at hi, rows before it at hi only
	 * when it trails */
	bool trail = n >= 2 && r[n - 2].addr == q->hi;
	if (n < 1 || r[0].addr != q->lo || r[n - 1].addr != q->hi || !r[n - 1].end
	    || trail != (q->trail != 0)) {
		free(r);
		return -1;
	}
	size_t t = n - 1;
	while (t > 0 && r[t - 1].addr == q->hi)
		t--;
	struct linetab_row end = r[n - 1];
	memmove(&r[t + 1], &r[t], (n - 1 - t) * sizeof *r);
	r[t] = end;
	for (size_t j = 0; j < n; j++)
		if (culines_row_valid(cl, r[j].addr, r[j].end))
			r[k++] = r[j];
	cl->seqrows[i] = (struct culines_seqrows){ r, k };
	return 0;
}

/* A lazy table turned into a whole one, when a sequence did not decode as
 * described: linetab.c reads it all, or libdw.  The lazy table's file
 * names stay until the table is released. */
static int culines_lines_whole(struct culines *cl)
{
	cl->lt_old = cl->lt;
	memset(&cl->lt, 0, sizeof cl->lt);
	for (size_t i = 0; i < cl->nseqs; i++)
		free(cl->seqrows[i].rows);
	free(cl->seqrows);
	free(cl->seqs);
	cl->seqrows = NULL;
	cl->seqs = NULL;
	cl->nseqs = 0;
	cl->own = cl->lazy = false;
	return culines_read_lines(cl, cl->names_dir);
}

/* The answer of sorted ROWS[0..n) (names from CI's file table) for PC. */
static int culines_rows_line(const struct culines *cl, const struct linetab_row *rows,
			     size_t n, uint64_t pc, struct cuindex_line *out)
{
	size_t lo = jh_upper_bound_u64(rows, n, sizeof *rows, offsetof(struct linetab_row, addr), pc);

	/* the same choice as below */
	if (lo == 0 || rows[lo - 1].end)
		return -1;
	const struct linetab_row *r = &rows[lo - 1];
	out->file = r->file < cl->lt.nfiles ? cl->lt.files[r->file] : NULL;
	out->line = r->line;
	out->column = r->column;
	return 0;
}

/* culines_line on a lazy table: the sequence holding pc, decoded now if
 * it has not been.  Outside every sequence the whole table's answer is
 * an end row or nothing: no line either way. */
static int culines_line_lazy(struct culines *cl, uint64_t pc, struct cuindex_line *out)
{
	size_t lo = jh_upper_bound_u64(cl->seqs, cl->nseqs, sizeof *cl->seqs,
				       offsetof(struct cuindex_seq, lo), pc);
	if (lo == 0 || (pc >= cl->seqs[lo - 1].hi && cl->seqs[lo - 1].trail != 1))
		return -1;
	size_t i = lo - 1;
	if (!cl->seqrows[i].rows && culines_decode_seq(cl, i)) {
		if (culines_lines_whole(cl))
			return -1;
		return culines_line(cl, pc, out);
	}
	return culines_rows_line(cl, cl->seqrows[i].rows, cl->seqrows[i].n, pc, out);
}

/* culines_line on a table linetab.c decoded. */
static int culines_line_own(const struct culines *cl, uint64_t pc, struct cuindex_line *out)
{
	return culines_rows_line(cl, cl->lt.rows, cl->lt.nrows, pc, out);
}

int culines_line(struct culines *cl, uint64_t pc, struct cuindex_line *out)
{
	if (cl->lazy)
		return culines_line_lazy(cl, pc, out);
	if (cl->own)
		return culines_line_own(cl, pc, out);
	size_t lo = jh_upper_bound_u64(cl->rows, cl->nrows, sizeof *cl->rows,
				       offsetof(struct culines_lrow, addr), pc);
	/* lo - 1 is the last row at or below pc; with several rows at one
	 * address that is the last of them, as llvm-symbolizer and addr2line
	 * choose. */
	if (lo == 0 || cl->rows[lo - 1].end)
		return -1;
	Dwarf_Line *l = cl->rows[lo - 1].line;
	int line = 0, col = 0;
	dwarf_lineno(l, &line);
	dwarf_linecol(l, &col);
	out->file = dwarf_linesrc(l, NULL, NULL);
	out->line = line;
	out->column = col;
	return 0;
}

const char *culines_file(struct culines *cl, uint64_t idx)
{
	if (cl->own)
		return idx < cl->lt.nfiles ? cl->lt.files[idx] : NULL;
	if (cl->files_state == 0)
		cl->files_state = dwarf_getsrcfiles(&cl->cudie, &cl->files,
						    &cl->nfiles) == 0 ? 1 : -1;
	if (cl->files_state < 0 || idx >= cl->nfiles)
		return NULL;
	return dwarf_filesrc(cl->files, idx, NULL, NULL);
}


int culines_read(struct culines *cl, Dwarf_Die *cudie, const struct cuindex_range *valid,
		 size_t nvalid, const char *names_dir, const struct cuindex_seq *seqs,
		 size_t nseqs)
{
	cl->cudie = *cudie;
	cl->valid = valid;
	cl->nvalid = nvalid;
	cl->names_dir = names_dir;
	if (nseqs && culines_open_lines(cl, names_dir, seqs, nseqs) == 0)
		return 0;
	return culines_read_lines(cl, names_dir);
}

void culines_release(struct culines *cl)
{
	free(cl->rows);
	linetab_release(&cl->lt);
	for (size_t i = 0; cl->seqrows && i < cl->nseqs; i++)
		free(cl->seqrows[i].rows);
	free(cl->seqrows);
	free(cl->seqs);
	linetab_release(&cl->lt_old);
}
