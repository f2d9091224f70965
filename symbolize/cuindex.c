/*
 * cuindex: one walk over a compilation unit's DIEs, then binary searches.
 * See cuindex.h for the contract.
 */
#include "symbolize/cuindex.h"
#include "symbolize/linetab.h"
#include "analyzer/array.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* DIE trees deeper than this are not descended further (real code nests a
 * few dozen levels at most; the bound keeps the walk's stack fixed). */
#define WALK_MAX_DEPTH 512
/* A unit with more function ranges than this is refused (bounded memory). */
#define MAX_IVALS (1u << 26)

struct scope {
	Dwarf_Die die;
	void *slot;
	int32_t parent;    /* enclosing scope id, -1 at the top */
	uint16_t depth;    /* number of enclosing scopes */
	uint16_t tag;
};

/* One address range of a scope.  up is the nearest earlier interval (in
 * sorted order) that contains this one: the containment tree a lookup climbs
 * when the interval it lands on ends before the pc. */
struct ival {
	uint64_t lo, hi;
	uint32_t scope;
	uint32_t depth;
	int32_t up;
};

/* A row of a line table read through libdw (units linetab.c declines);
 * the libdw row is read again only for the answer. */
struct lrow {
	uint64_t addr;
	Dwarf_Line *line;
	int end;
};

/* cuindex_set_libdw_lines: every unit's lines through libdw. */
static int cuindex_libdw_lines;

struct cuindex {
	Dwarf_Die cudie;
	struct scope *scopes;
	size_t nscopes, capscopes;
	struct ival *ivals;
	size_t nivals, capivals;
	uint64_t *maxhi;       /* maxhi[i] = max(ivals[0..i].hi) */
	size_t *top;           /* indices of intervals without an enclosing one */
	size_t ntop;
	/* The line table: decoded by linetab.c when lines_own, else libdw's
	 * rows and (read on first need) libdw's file table. */
	bool lines_own;
	struct linetab lt;
	struct lrow *rows;
	size_t nrows;
	Dwarf_Files *files;
	size_t nfiles;
	int files_state;       /* 0 not read, 1 read, -1 unreadable */
	struct cuindex_range *valid;
	size_t nvalid;
	const char *comp_dir;
	bool types;            /* cuindex_lang_types */
	/* A partial index holds only the functions added by cuindex_add_top
	 * (their DIE offsets here), not the whole unit. */
	bool partial;
	uint64_t *tops_added;
	size_t ntops_added;
	/* The line table's sequences (cuindex_seqs).  lines_lazy: lt holds
	 * only the header and file names, and a sequence's rows are decoded
	 * into seqrows the first time a pc needs them. */
	struct cuindex_seq *seqs;
	size_t nseqs;
	bool lines_lazy;
	struct seqrows {
		struct linetab_row *rows;   /* NULL until decoded */
		size_t n;
	} *seqrows;
	const char *names_dir; /* what the table's file names were built with */
	/* a lazy table given up on (a sequence not as described): its file
	 * names, which callers may still hold, until the index is freed */
	struct linetab lt_old;
};

/* Grow *P (an array of elements of size ELSZ with capacity *CAP) to hold at
 * least NEED elements.  Returns 0, or -1 when out of memory or too big. */
static int cuindex_grow(void **p, size_t *cap, size_t need, size_t elsz)
{
	if (need > *cap && need > MAX_IVALS)
		return -1;
	return jh_grow(p, cap, need, elsz) ? -1 : 0;
}

/* Whether [lo, hi) is a non-empty range starting inside one of V[0..n). */
static int cuindex_in(const struct cuindex_range *v, size_t n, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return 0;
	if (n == 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (lo >= v[i].lo && lo < v[i].hi)
			return 1;
	return 0;
}

static int cuindex_valid(const struct cuindex *ci, uint64_t lo, uint64_t hi)
{
	return cuindex_in(ci->valid, ci->nvalid, lo, hi);
}

static int64_t cuindex_push_range(struct cuindex *ci, int64_t id, Dwarf_Die *die,
				  int tag, int32_t parent, uint64_t lo, uint64_t hi)
{
	uint16_t depth = parent >= 0 ? ci->scopes[parent].depth + 1 : 0;

	if (!cuindex_valid(ci, lo, hi))
		return id;
	if (id < 0) {
		if (cuindex_grow((void **)&ci->scopes, &ci->capscopes,
				 ci->nscopes + 1, sizeof *ci->scopes))
			return -2;
		id = (int64_t)ci->nscopes++;
		struct scope *s = &ci->scopes[id];
		s->die = *die;
		s->slot = NULL;
		s->parent = parent;
		s->depth = depth;
		s->tag = (uint16_t)tag;
	}
	if (cuindex_grow((void **)&ci->ivals, &ci->capivals, ci->nivals + 1,
			 sizeof *ci->ivals))
		return -2;
	struct ival *v = &ci->ivals[ci->nivals++];
	v->lo = lo;
	v->hi = hi;
	v->scope = (uint32_t)id;
	v->depth = depth;
	v->up = -1;
	return id;
}

struct pcattrs {
	Dwarf_Attribute low, high;
	int has_low, has_high, has_ranges;
};

static int cuindex_pc_attr(Dwarf_Attribute *a, void *arg)
{
	struct pcattrs *p = arg;

	switch (dwarf_whatattr(a)) {
	case DW_AT_low_pc:
		p->low = *a;
		p->has_low = 1;
		break;
	case DW_AT_high_pc:
		p->high = *a;
		p->has_high = 1;
		break;
	case DW_AT_ranges:
		p->has_ranges = 1;
		break;
	}
	return DWARF_CB_OK;
}

static int cuindex_is_addr_form(unsigned form)
{
	switch (form) {
	case DW_FORM_addr:
	case DW_FORM_addrx:
	case DW_FORM_addrx1:
	case DW_FORM_addrx2:
	case DW_FORM_addrx3:
	case DW_FORM_addrx4:
	case DW_FORM_GNU_addr_index:
		return 1;
	default:
		return 0;
	}
}

/* Record DIE as a scope if it has code ranges.  Returns the new scope id,
 * -1 when the DIE has no usable range, -2 when out of memory.  The common
 * low_pc/high_pc pair is read in one pass over the attributes (dwarf_ranges
 * would look each attribute up again); DW_AT_ranges goes to dwarf_ranges,
 * which knows DWARF 4 .debug_ranges and DWARF 5 rnglists alike. */
static int64_t cuindex_add_scope(struct cuindex *ci, Dwarf_Die *die, int tag,
				 int32_t parent)
{
	struct pcattrs p = { .has_low = 0 };
	int64_t id = -1;

	if (dwarf_getattrs(die, cuindex_pc_attr, &p, 0) < 0)
		return -1;
	if (p.has_low && p.has_high) {
		Dwarf_Addr lo, hi;
		Dwarf_Word len;
		if (dwarf_formaddr(&p.low, &lo) != 0)
			return -1;
		if (cuindex_is_addr_form(dwarf_whatform(&p.high))) {
			if (dwarf_formaddr(&p.high, &hi) != 0)
				return -1;
		} else if (dwarf_formudata(&p.high, &len) == 0) {
			hi = lo + len;
		} else {
			return -1;
		}
		return cuindex_push_range(ci, id, die, tag, parent, lo, hi);
	}
	if (!p.has_ranges)
		return -1;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		id = cuindex_push_range(ci, id, die, tag, parent, lo, hi);
		if (id == -2)
			return -2;
	}
	return id;
}

/* Whether the unit's functions can be defined inside type DIEs.  C and
 * C++ compilers put a member function's definition at namespace level
 * (with DW_AT_specification), so their class bodies, most of a C++
 * unit's DIEs, are not walked.  Other languages may nest it: rustc up to
 * 1.63 wrote a method with its code as a child of its type's
 * DW_TAG_structure_type (or enumeration or union type), as llvm-symbolizer
 * finds it.  A unit without a language (dwz's partial units of shared
 * types) is taken as C. */
static bool cuindex_lang_types(Dwarf_Die *cudie)
{
	switch (dwarf_srclang(cudie)) {
	case -1:
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_ObjC:
	case DW_LANG_ObjC_plus_plus:
	case DW_LANG_Mips_Assembler:
		return false;
	default:
		return true;
	}
}

/* Tags whose children can hold code scopes: type DIEs too when TYPES
 * (cuindex_lang_types). */
static int cuindex_descend(int tag, bool types)
{
	switch (tag) {
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_common_block:
	case DW_TAG_entry_point:
		return 1;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_interface_type:
		return types;
	default:
		return 0;
	}
}

struct walkframe {
	Dwarf_Die die;
	int32_t scope;
};

/* Walks the children of PARENT (and below), SCOPE being the scope that
 * encloses them (-1: none). */
static int cuindex_walk_children(struct cuindex *ci, Dwarf_Die *parent, int32_t scope)
{
	struct walkframe *stack = malloc(WALK_MAX_DEPTH * sizeof *stack);
	size_t sp = 0;
	Dwarf_Die child;

	if (!stack)
		return -1;
	if (dwarf_child(parent, &child) == 0) {
		stack[0].die = child;
		stack[0].scope = scope;
		sp = 1;
	}
	while (sp > 0) {
		struct walkframe *f = &stack[sp - 1];
		int tag = dwarf_tag(&f->die);
		int32_t inner = f->scope;
		int descend;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			int64_t id = cuindex_add_scope(ci, &f->die, tag, f->scope);
			if (id == -2) {
				free(stack);
				return -1;
			}
			if (id >= 0)
				inner = (int32_t)id;
			/* Without code of its own (a declaration, an abstract
			 * instance, a copy the linker discarded) nothing below
			 * has any either. */
			descend = id >= 0;
		} else {
			descend = cuindex_descend(tag, ci->types);
		}
		if (descend && sp < WALK_MAX_DEPTH && dwarf_haschildren(&f->die) > 0
		    && dwarf_child(&f->die, &child) == 0) {
			stack[sp].die = child;
			stack[sp].scope = inner;
			sp++;
			continue;
		}
		while (sp > 0) {
			Dwarf_Die next;
			if (dwarf_siblingof(&stack[sp - 1].die, &next) == 0) {
				stack[sp - 1].die = next;
				break;
			}
			sp--;
		}
	}
	free(stack);
	return 0;
}

static int cuindex_walk(struct cuindex *ci)
{
	return cuindex_walk_children(ci, &ci->cudie, -1);
}

static int cuindex_ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return x->scope < y->scope ? -1 : x->scope > y->scope;
}

struct sortkey {
	uint64_t lo;
	uint64_t idx;
};

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)

/* Sort the intervals by start.  Big units take a stable LSD radix sort on
 * (lo - min lo): the walk produced them in DIE pre-order, so among equal
 * starts an enclosing scope stays before what it encloses, the order the
 * link sweep needs.  qsort's merge sort on the full records was a fifth of
 * the build time of a large unit. */
static int cuindex_sort(struct cuindex *ci)
{
	size_t n = ci->nivals;

	if (n < 256) {
		jh_qsort(ci->ivals, n, sizeof *ci->ivals, cuindex_ival_cmp);
		return 0;
	}
	struct sortkey *k = malloc(n * sizeof *k), *t = malloc(n * sizeof *t);
	size_t *count = malloc(RADIX_SIZE * sizeof *count);
	struct ival *out = malloc(n * sizeof *out);
	if (!k || !t || !count || !out) {
		free(k);
		free(t);
		free(count);
		free(out);
		return -1;
	}
	uint64_t min = UINT64_MAX, max = 0;
	for (size_t i = 0; i < n; i++) {
		if (ci->ivals[i].lo < min)
			min = ci->ivals[i].lo;
		if (ci->ivals[i].lo > max)
			max = ci->ivals[i].lo;
	}
	for (size_t i = 0; i < n; i++) {
		k[i].lo = ci->ivals[i].lo - min;
		k[i].idx = i;
	}
	for (unsigned shift = 0; shift < 64 && ((max - min) >> shift) != 0; shift += RADIX_BITS) {
		memset(count, 0, RADIX_SIZE * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(k[i].lo >> shift) & (RADIX_SIZE - 1)]++;
		size_t sum = 0;
		for (size_t d = 0; d < RADIX_SIZE; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			t[count[(k[i].lo >> shift) & (RADIX_SIZE - 1)]++] = k[i];
		struct sortkey *swap = k;
		k = t;
		t = swap;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = ci->ivals[k[i].idx];
	free(ci->ivals);
	ci->ivals = out;
	ci->capivals = n;
	free(k);
	free(t);
	free(count);
	return 0;
}

/* Sort the intervals and link each to the nearest earlier one containing
 * it (a stack sweep: O(n) after the sort). */
static int cuindex_link(struct cuindex *ci)
{
	size_t n = ci->nivals;

	free(ci->maxhi);
	free(ci->top);
	ci->maxhi = NULL;
	ci->top = NULL;
	ci->ntop = 0;
	if (n == 0)
		return 0;
	if (cuindex_sort(ci))
		return -1;
	int32_t *stk = malloc(n * sizeof *stk);
	ci->maxhi = malloc(n * sizeof *ci->maxhi);
	ci->top = malloc(n * sizeof *ci->top);
	if (!stk || !ci->maxhi || !ci->top) {
		free(stk);
		return -1;
	}
	size_t sp = 0;
	uint64_t mx = 0;
	for (size_t i = 0; i < n; i++) {
		struct ival *v = &ci->ivals[i];
		while (sp > 0 && ci->ivals[stk[sp - 1]].hi < v->hi)
			sp--;
		v->up = sp > 0 ? stk[sp - 1] : -1;
		if (v->up < 0)
			ci->top[ci->ntop++] = i;
		stk[sp++] = (int32_t)i;
		if (v->hi > mx)
			mx = v->hi;
		ci->maxhi[i] = mx;
	}
	free(stk);
	return 0;
}

/* Whether a line-table row at A can describe real code.  Rows of discarded
 * functions restart at 0; an end row sits one past its code, hence the +1. */
static int cuindex_row_valid(const struct cuindex *ci, uint64_t a, bool end)
{
	if (!end)
		return cuindex_valid(ci, a, a + 1);
	return a == 0 || cuindex_valid(ci, a - 1, a);
}

/* Whether [lo, hi) lies inside one valid range. */
static bool cuindex_inside(const struct cuindex *ci, uint64_t lo, uint64_t hi)
{
	if (ci->nvalid == 0)
		return true;
	for (size_t i = 0; i < ci->nvalid; i++)
		if (lo >= ci->valid[i].lo && hi <= ci->valid[i].hi)
			return true;
	return false;
}

/* Whether [lo, hi) meets a valid range. */
static bool cuindex_meets(const struct cuindex *ci, uint64_t lo, uint64_t hi)
{
	if (ci->nvalid == 0)
		return true;
	for (size_t i = 0; i < ci->nvalid; i++)
		if (lo < ci->valid[i].hi && ci->valid[i].lo < hi)
			return true;
	return false;
}

/* A sequence with rows (not only an end row). */
static bool cuindex_seq_rows(const struct cuindex_seq *q)
{
	return q->lo < q->hi || q->trail;
}

/* A kept sequence and its place in the program. */
struct seqsort {
	struct cuindex_seq q;
	size_t prog;
};

/* By lo, then hi, then a sequence of only an end row first, then program
 * order: among sequences at one address the one a lookup lands on (the
 * last) is then the one whose rows the sorted table puts last. */
static int cuindex_seqsort_cmp(const void *a, const void *b)
{
	const struct seqsort *x = a, *y = b;

	if (x->q.lo != y->q.lo)
		return x->q.lo < y->q.lo ? -1 : 1;
	if (x->q.hi != y->q.hi)
		return x->q.hi < y->q.hi ? -1 : 1;
	if (cuindex_seq_rows(&x->q) != cuindex_seq_rows(&y->q))
		return cuindex_seq_rows(&x->q) ? 1 : -1;
	return x->prog < y->prog ? -1 : x->prog > y->prog;
}

bool cuindex_seqs_ordered(const struct cuindex_seq *seqs, size_t n)
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
static int cuindex_keep_seqs(struct cuindex *ci)
{
	const struct linetab_seq *ls = ci->lt.seqs;
	size_t n = 0, forced = SIZE_MAX;
	uint64_t top = 0;

	if (!ci->lt.nseqs)
		return 0;
	/* linetab makes the table's highest row an end, as libdw does: a
	 * trailing row, when the highest sequence has any (the last in the
	 * program of those that end highest) */
	for (size_t i = 0; i < ci->lt.nseqs; i++)
		if (ls[i].hi >= top) {
			if (ls[i].hi > top)
				forced = SIZE_MAX;
			top = ls[i].hi;
			if (ls[i].trail)
				forced = i;
		}
	struct seqsort *v = malloc(ci->lt.nseqs * sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < ci->lt.nseqs; i++) {
		struct cuindex_seq q = { ls[i].lo, ls[i].hi, ls[i].off, ls[i].trail };
		bool valid;
		if (q.lo == q.hi) {
			bool end = cuindex_row_valid(ci, q.hi, true);
			bool rows = q.trail && cuindex_row_valid(ci, q.hi, false);
			if (q.trail && end != rows)
				goto none;
			valid = end || rows;
		} else if (cuindex_inside(ci, q.lo, q.hi)) {
			valid = true;
		} else if (!cuindex_meets(ci, q.lo, q.hi)) {
			valid = false;
		} else {
			goto none;
		}
		if (valid)
			v[n++] = (struct seqsort){ q, i };
	}
	jh_qsort(v, n, sizeof *v, cuindex_seqsort_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct seqsort *a = k ? &v[k - 1] : NULL, *b = &v[i];
		/* an end row alone where another sequence ends changes
		 * nothing (end rows sort first), and a lookup must not land
		 * on it rather than on that sequence's trailing rows */
		if (a && !cuindex_seq_rows(&b->q) && a->q.hi == b->q.lo)
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
	if (forced != SIZE_MAX && cuindex_row_valid(ci, ls[forced].hi, false)) {
		if (v[n - 1].prog != forced || v[n - 1].q.lo == v[n - 1].q.hi)
			goto none;
		v[n - 1].q.trail = 2;
	}
	ci->seqs = malloc(n * sizeof *ci->seqs);
	if (!ci->seqs) {
		free(v);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		ci->seqs[i] = v[i].q;
	ci->nseqs = n;
none:
	free(v);
	return 0;
}

/* The unit's line table through linetab.c, keeping the valid rows. */
static int cuindex_read_own_lines(struct cuindex *ci, const char *names_dir)
{
	if (linetab_read(&ci->lt, &ci->cudie, names_dir) != 0)
		return -1;
	int rc = cuindex_keep_seqs(ci);
	/* what the index keeps of them is in ci->seqs */
	free(ci->lt.seqs);
	ci->lt.seqs = NULL;
	ci->lt.nseqs = 0;
	if (rc) {
		linetab_release(&ci->lt);
		return -1;
	}
	struct linetab_row *rows = ci->lt.rows;
	size_t n = 0;
	for (size_t i = 0; i < ci->lt.nrows; i++)
		if (cuindex_row_valid(ci, rows[i].addr, rows[i].end))
			rows[n++] = rows[i];
	/* the decoder sized the array for the program, not for what is kept */
	if (n == 0) {
		free(rows);
		ci->lt.rows = NULL;
	} else if ((rows = realloc(rows, n * sizeof *rows))) {
		ci->lt.rows = rows;
	}
	ci->lt.nrows = n;
	ci->lines_own = true;
	return 0;
}

/* NAMES_DIR: the comp_dir the table's DWARF 2-4 file names are built
 * with (see cuindex_map_names_dir). */
static int cuindex_read_lines(struct cuindex *ci, const char *names_dir)
{
	Dwarf_Lines *lines;
	size_t n;

	if (!cuindex_libdw_lines && cuindex_read_own_lines(ci, names_dir) == 0)
		return 0;
	/* What linetab.c declines, libdw reads (or refuses) as it always has. */
	if (dwarf_getsrclines(&ci->cudie, &lines, &n) != 0 || n == 0)
		return 0;
	if (n > MAX_IVALS)
		return -1;
	ci->rows = malloc(n * sizeof *ci->rows);
	if (!ci->rows)
		return -1;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool end = false;
		if (!l || dwarf_lineaddr(l, &a) != 0)
			continue;
		dwarf_lineendsequence(l, &end);
		if (!cuindex_row_valid(ci, a, end))
			continue;
		struct lrow *r = &ci->rows[ci->nrows++];
		r->addr = a;
		r->line = l;
		r->end = end;
	}
	return 0;
}

/* Only the header and file names of the line table, for the sequences
 * SEQS[0..n) (sorted and apart) to be decoded as pcs need them.  Returns
 * 0, or -1 when linetab.c cannot read the table (or out of memory). */
static int cuindex_open_lines(struct cuindex *ci, const char *names_dir,
			      const struct cuindex_seq *seqs, size_t n)
{
	if (cuindex_libdw_lines || linetab_open(&ci->lt, &ci->cudie, names_dir) != 0)
		return -1;
	ci->seqs = malloc(n * sizeof *ci->seqs);
	ci->seqrows = calloc(n, sizeof *ci->seqrows);
	if (!ci->seqs || !ci->seqrows) {
		free(ci->seqs);
		free(ci->seqrows);
		ci->seqs = NULL;
		ci->seqrows = NULL;
		linetab_release(&ci->lt);
		return -1;
	}
	memcpy(ci->seqs, seqs, n * sizeof *seqs);
	ci->nseqs = n;
	ci->lines_own = ci->lines_lazy = true;
	return 0;
}

/* An index of the unit with its line table (or, given SEQS, the means to
 * decode it by sequence) and no functions yet; NAMES_DIR as for
 * cuindex_read_lines, NULL: the unit's own comp_dir. */
static struct cuindex *cuindex_alloc(Dwarf_Die *cudie, const struct cuindex_range *valid,
				     size_t nvalid, const char *const *names_dir,
				     const struct cuindex_seq *seqs, size_t nseqs)
{
	struct cuindex *ci = calloc(1, sizeof *ci);

	if (!ci)
		return NULL;
	ci->cudie = *cudie;
	ci->types = cuindex_lang_types(cudie);
	Dwarf_Attribute a;
	ci->comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	if (nvalid > 0) {
		ci->valid = malloc(nvalid * sizeof *valid);
		if (!ci->valid)
			goto fail;
		memcpy(ci->valid, valid, nvalid * sizeof *valid);
		ci->nvalid = nvalid;
	}
	ci->names_dir = names_dir ? *names_dir : ci->comp_dir;
	if (nseqs && cuindex_open_lines(ci, ci->names_dir, seqs, nseqs) == 0)
		return ci;
	if (cuindex_read_lines(ci, ci->names_dir))
		goto fail;
	return ci;
fail:
	cuindex_free(ci);
	return NULL;
}

static struct cuindex *cuindex_build(Dwarf_Die *cudie, const struct cuindex_range *valid,
				     size_t nvalid, const char *const *names_dir,
				     const struct cuindex_seq *seqs, size_t nseqs)
{
	struct cuindex *ci = cuindex_alloc(cudie, valid, nvalid, names_dir, seqs, nseqs);

	if (ci && (cuindex_walk(ci) || cuindex_link(ci))) {
		cuindex_free(ci);
		return NULL;
	}
	return ci;
}

struct cuindex *cuindex_new_seqs(Dwarf_Die *cudie, const struct cuindex_range *valid,
				 size_t nvalid, const struct cuindex_seq *seqs, size_t n)
{
	if (!cuindex_seqs_ordered(seqs, n))
		return NULL;
	return cuindex_build(cudie, valid, nvalid, NULL, seqs, n);
}

int cuindex_lines_lazy(const struct cuindex *ci)
{
	return ci->lines_lazy;
}

struct cuindex *cuindex_new(Dwarf_Die *cudie, const struct cuindex_range *valid,
			    size_t nvalid)
{
	return cuindex_build(cudie, valid, nvalid, NULL, NULL, 0);
}

void cuindex_set_libdw_lines(int on)
{
	cuindex_libdw_lines = on;
}

int cuindex_lines_own(const struct cuindex *ci)
{
	return ci->lines_own;
}

/* Adds the function whose DIE is at OFF (a top-level DW_TAG_subprogram of
 * the unit, as cuindex_tops gave it) with everything inlined into it, to a
 * partial index.  Returns 0, or -1 when the DIE is not such a function or
 * out of memory (the index is then unchanged or must be dropped). */
static int cuindex_add_top(struct cuindex *ci, Dwarf *dw, uint64_t off)
{
	Dwarf_Die die, cu;

	for (size_t i = 0; i < ci->ntops_added; i++)
		if (ci->tops_added[i] == off)
			return 0;
	if (!dwarf_offdie(dw, off, &die) || dwarf_tag(&die) != DW_TAG_subprogram
	    || !dwarf_diecu(&die, &cu, NULL, NULL)
	    || dwarf_dieoffset(&cu) != dwarf_dieoffset(&ci->cudie))
		return -1;
	uint64_t *t = realloc(ci->tops_added, (ci->ntops_added + 1) * sizeof *t);
	if (!t)
		return -1;
	ci->tops_added = t;
	t[ci->ntops_added++] = off;
	int64_t id = cuindex_add_scope(ci, &die, DW_TAG_subprogram, -1);
	if (id == -2)
		return -1;
	if (id >= 0 && dwarf_haschildren(&die) > 0
	    && cuindex_walk_children(ci, &die, (int32_t)id))
		return -1;
	return cuindex_link(ci);
}

/* Turns partial index CI into a full one, in place: the scopes are read
 * again from the whole unit, the line table and its file names stay (so
 * nothing the caller got from it goes away, and the table is not decoded
 * twice).  Returns 0, or -1 when out of memory (CI must then be freed). */
static int cuindex_make_full(struct cuindex *ci)
{
	free(ci->scopes);
	free(ci->ivals);
	free(ci->tops_added);
	ci->scopes = NULL;
	ci->ivals = NULL;
	ci->tops_added = NULL;
	ci->nscopes = ci->capscopes = ci->nivals = ci->capivals = ci->ntops_added = 0;
	ci->partial = false;
	return cuindex_walk(ci) || cuindex_link(ci) ? -1 : 0;
}

size_t cuindex_tops(const struct cuindex *ci, struct cuindex_top *out, size_t max)
{
	size_t n = 0;

	if (ci->partial)
		return 0;
	for (size_t i = 0; i < ci->nivals; i++) {
		const struct ival *v = &ci->ivals[i];
		if (ci->scopes[v->scope].parent >= 0)
			continue;
		if (n < max)
			out[n] = (struct cuindex_top){
				v->lo, v->hi, dwarf_dieoffset(&ci->scopes[v->scope].die) };
		n++;
	}
	return n;
}

void cuindex_free(struct cuindex *ci)
{
	if (!ci)
		return;
	free(ci->scopes);
	free(ci->ivals);
	free(ci->maxhi);
	free(ci->top);
	free(ci->rows);
	linetab_release(&ci->lt);
	free(ci->valid);
	free(ci->tops_added);
	for (size_t i = 0; ci->seqrows && i < ci->nseqs; i++)
		free(ci->seqrows[i].rows);
	free(ci->seqrows);
	free(ci->seqs);
	linetab_release(&ci->lt_old);
	free(ci);
}

size_t cuindex_lookup(const struct cuindex *ci, uint64_t pc, uint32_t *chain,
		      size_t max)
{
	/* first interval starting above pc */
	size_t lo = jh_upper_bound_u64(ci->ivals, ci->nivals, sizeof *ci->ivals,
				       offsetof(struct ival, lo), pc);
	if (lo == 0)
		return 0;
	int64_t k = (int64_t)lo - 1;
	while (k >= 0 && ci->ivals[k].hi <= pc)
		k = ci->ivals[k].up;
	if (k < 0) {
		/* Only reached when ranges overlap without nesting (broken
		 * DWARF): scan back while anything earlier can still reach pc. */
		for (int64_t j = (int64_t)lo - 1; j >= 0 && ci->maxhi[j] > pc; j--)
			if (ci->ivals[j].hi > pc) {
				k = j;
				break;
			}
		if (k < 0)
			return 0;
	}
	size_t n = 0;
	int64_t s = ci->ivals[k].scope;
	while (s >= 0 && n < max) {
		chain[n++] = (uint32_t)s;
		if (ci->scopes[s].tag == DW_TAG_subprogram)
			break;
		s = ci->scopes[s].parent;
	}
	return n;
}

Dwarf_Die *cuindex_scope_die(struct cuindex *ci, uint32_t id)
{
	return &ci->scopes[id].die;
}

void **cuindex_scope_slot(struct cuindex *ci, uint32_t id)
{
	return &ci->scopes[id].slot;
}

size_t cuindex_seqs(const struct cuindex *ci, struct cuindex_seq *out, size_t max)
{
	for (size_t i = 0; i < ci->nseqs && i < max; i++)
		out[i] = ci->seqs[i];
	return ci->nseqs;
}

/* Decodes sequence I of a lazy table into seqrows[i]: its valid rows in
 * the whole table's order (the end row before the rows at its address).
 * Returns 0, or -1 when it does not decode as it was described (then
 * nothing is kept). */
static int cuindex_decode_seq(struct cuindex *ci, size_t i)
{
	const struct cuindex_seq *q = &ci->seqs[i];
	struct linetab_row *r;
	size_t n, k = 0;

	if (linetab_seq(&ci->lt, q->off, &r, &n))
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
		if (cuindex_row_valid(ci, r[j].addr, r[j].end))
			r[k++] = r[j];
	ci->seqrows[i] = (struct seqrows){ r, k };
	return 0;
}

/* A lazy table turned into a whole one, when a sequence did not decode as
 * described: linetab.c reads it all, or libdw.  The lazy table's file
 * names stay until the index is freed. */
static int cuindex_lines_whole(struct cuindex *ci)
{
	ci->lt_old = ci->lt;
	memset(&ci->lt, 0, sizeof ci->lt);
	for (size_t i = 0; i < ci->nseqs; i++)
		free(ci->seqrows[i].rows);
	free(ci->seqrows);
	free(ci->seqs);
	ci->seqrows = NULL;
	ci->seqs = NULL;
	ci->nseqs = 0;
	ci->lines_own = ci->lines_lazy = false;
	return cuindex_read_lines(ci, ci->names_dir);
}

/* The answer of sorted ROWS[0..n) (names from CI's file table) for PC. */
static int cuindex_rows_line(const struct cuindex *ci, const struct linetab_row *rows,
			     size_t n, uint64_t pc, struct cuindex_line *out)
{
	size_t lo = jh_upper_bound_u64(rows, n, sizeof *rows, offsetof(struct linetab_row, addr), pc);

	/* the same choice as below */
	if (lo == 0 || rows[lo - 1].end)
		return -1;
	const struct linetab_row *r = &rows[lo - 1];
	out->file = r->file < ci->lt.nfiles ? ci->lt.files[r->file] : NULL;
	out->line = r->line;
	out->column = r->column;
	return 0;
}

/* cuindex_line on a lazy table: the sequence holding pc, decoded now if
 * it has not been.  Outside every sequence the whole table's answer is
 * an end row or nothing: no line either way. */
static int cuindex_line_lazy(struct cuindex *ci, uint64_t pc, struct cuindex_line *out)
{
	size_t lo = jh_upper_bound_u64(ci->seqs, ci->nseqs, sizeof *ci->seqs,
				       offsetof(struct cuindex_seq, lo), pc);
	if (lo == 0 || (pc >= ci->seqs[lo - 1].hi && ci->seqs[lo - 1].trail != 1))
		return -1;
	size_t i = lo - 1;
	if (!ci->seqrows[i].rows && cuindex_decode_seq(ci, i)) {
		if (cuindex_lines_whole(ci))
			return -1;
		return cuindex_line(ci, pc, out);
	}
	return cuindex_rows_line(ci, ci->seqrows[i].rows, ci->seqrows[i].n, pc, out);
}

/* cuindex_line on a table linetab.c decoded. */
static int cuindex_line_own(const struct cuindex *ci, uint64_t pc, struct cuindex_line *out)
{
	return cuindex_rows_line(ci, ci->lt.rows, ci->lt.nrows, pc, out);
}

int cuindex_line(struct cuindex *ci, uint64_t pc, struct cuindex_line *out)
{
	if (ci->lines_lazy)
		return cuindex_line_lazy(ci, pc, out);
	if (ci->lines_own)
		return cuindex_line_own(ci, pc, out);
	size_t lo = jh_upper_bound_u64(ci->rows, ci->nrows, sizeof *ci->rows,
				       offsetof(struct lrow, addr), pc);
	/* lo - 1 is the last row at or below pc; with several rows at one
	 * address that is the last of them, as llvm-symbolizer and addr2line
	 * choose. */
	if (lo == 0 || ci->rows[lo - 1].end)
		return -1;
	Dwarf_Line *l = ci->rows[lo - 1].line;
	int line = 0, col = 0;
	dwarf_lineno(l, &line);
	dwarf_linecol(l, &col);
	out->file = dwarf_linesrc(l, NULL, NULL);
	out->line = line;
	out->column = col;
	return 0;
}

const char *cuindex_file(struct cuindex *ci, uint64_t idx)
{
	if (ci->lines_own)
		return idx < ci->lt.nfiles ? ci->lt.files[idx] : NULL;
	if (ci->files_state == 0)
		ci->files_state = dwarf_getsrcfiles(&ci->cudie, &ci->files,
						    &ci->nfiles) == 0 ? 1 : -1;
	if (ci->files_state < 0 || idx >= ci->nfiles)
		return NULL;
	return dwarf_filesrc(ci->files, idx, NULL, NULL);
}

const char *cuindex_comp_dir(const struct cuindex *ci)
{
	return ci->comp_dir;
}

Dwarf_Die *cuindex_cudie(struct cuindex *ci)
{
	return &ci->cudie;
}

/* ---- the unit map ---- */

/* Units walked only to find where their code is (no CU ranges, no aranges);
 * the bound keeps a file of many code-less units cheap. */
#define MAX_RANGELESS_WALKS 4096

struct cuent {
	Dwarf_Die cudie;
	Dwarf_Off off;
	struct cuindex *ci;
	int state;         /* 0 not built, 1 built, -1 failed */
	bool placed;       /* has ranges in the map */
	bool split;        /* a skeleton's split unit: DIEs in another file */
	bool die_unread;   /* cuindex_map_new_known: cudie not read yet */
	/* cuindex_map_set_unit: the unit's top-level functions, sorted by
	 * lo, and maxhi[i] = max(tops[0..i].hi); its line table's sequences */
	struct cuindex_top *tops;
	uint64_t *topmaxhi;
	size_t ntops;
	struct cuindex_seq *seqs;
	size_t nseqs;
};

/* A partial index that has had this many functions added becomes a full
 * one: each addition re-sorts the unit's intervals. */
#define PARTIAL_MAX_TOPS 16

struct curange {
	uint64_t lo, hi;
	uint32_t cu;
};

struct cuindex_map {
	Dwarf *dw;
	struct cuent *cus;
	size_t ncus;
	struct curange *ranges;
	size_t nranges, capranges;
	uint64_t *maxhi;
	struct cuindex_range *valid;
	size_t nvalid;
	bool no_aranges;   /* every unit's ranges from its DIE (tests) */
	/* cuindex_map_names_dir: the comp_dir of the first unit that read
	 * each line table, sorted by the table's offset */
	struct stmtdir { uint64_t off; const char *dir; } *stmts;
	size_t nstmts, capstmts;
};

/* The comp_dir to build the DWARF 2-4 file names of CUDIE's line table
 * with, into *DIR.  libdw reads a table once per offset, with the comp_dir
 * of the unit that asked first; units sharing a DW_AT_stmt_list (dwz's
 * partial units share their CU's) then get those names.  The map does the
 * same, in the order units are read, so the answers stay libdw's without
 * reading every unit's DIE up front.  Returns 0, or -1 out of memory. */
static int cuindex_map_names_dir(struct cuindex_map *map, Dwarf_Die *cudie, const char **dir)
{
	Dwarf_Attribute a;
	Dwarf_Word off;

	*dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	if (!dwarf_attr(cudie, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off) != 0)
		return 0;
	size_t lo = jh_lower_bound_u64(map->stmts, map->nstmts, sizeof *map->stmts,
				       offsetof(struct stmtdir, off), off);
	if (lo < map->nstmts && map->stmts[lo].off == off) {
		*dir = map->stmts[lo].dir;
		return 0;
	}
	if (cuindex_grow((void **)&map->stmts, &map->capstmts, map->nstmts + 1,
			 sizeof *map->stmts))
		return -1;
	memmove(&map->stmts[lo + 1], &map->stmts[lo], (map->nstmts - lo) * sizeof *map->stmts);
	map->stmts[lo] = (struct stmtdir){ off, *dir };
	map->nstmts++;
	return 0;
}

static int cuindex_map_add(struct cuindex_map *map, uint64_t lo, uint64_t hi, size_t cu)
{
	if (cuindex_grow((void **)&map->ranges, &map->capranges, map->nranges + 1,
			 sizeof *map->ranges))
		return -1;
	map->ranges[map->nranges++] = (struct curange){ lo, hi, (uint32_t)cu };
	map->cus[cu].placed = true;
	return 0;
}

/* Reads the CU DIE of a unit of a known map: it must be the first DIE of
 * a compile or partial unit.  Returns 0, or -1 when it is not. */
static int cuindex_map_read_die(struct cuindex_map *map, struct cuent *c)
{
	Dwarf_Die d, first;

	if (!c->die_unread)
		return 0;
	c->die_unread = false;
	if (!dwarf_offdie(map->dw, c->off, &d) || !dwarf_diecu(&d, &first, NULL, NULL) ||
	    dwarf_dieoffset(&first) != c->off)
		return -1;
	int tag = dwarf_tag(&first);
	if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit)
		return -1;
	c->cudie = first;
	return 0;
}

static struct cuindex *cuindex_map_unit(struct cuindex_map *map, size_t cu)
{
	struct cuent *c = &map->cus[cu];

	const char *dir;

	if (c->state == 0) {
		c->ci = cuindex_map_read_die(map, c) || cuindex_map_names_dir(map, &c->cudie, &dir)
			? NULL
			: cuindex_build(&c->cudie, map->valid, map->nvalid, &dir, c->seqs, c->nseqs);
		c->state = c->ci ? 1 : -1;
	}
	return c->ci;
}

/* The index of unit CU to look PC up in.  A unit with known top-level
 * functions gets a partial index holding the one function whose ranges
 * hold PC (none: the unit has no function there); when several do, or
 * after PARTIAL_MAX_TOPS functions, it becomes the full index.  The
 * answers are the same either way: the enclosing-scope chain of PC lies
 * inside the top-level function that holds it. */
static struct cuindex *cuindex_map_unit_at(struct cuindex_map *map, size_t cu, uint64_t pc)
{
	struct cuent *c = &map->cus[cu];

	if (!c->ntops || c->state < 0 || (c->state == 1 && !c->ci->partial))
		return cuindex_map_unit(map, cu);
	if (c->state == 0) {
		const char *dir;
		c->ci = cuindex_map_read_die(map, c) || cuindex_map_names_dir(map, &c->cudie, &dir)
			? NULL
			: cuindex_alloc(&c->cudie, map->valid, map->nvalid, &dir, c->seqs, c->nseqs);
		if (!c->ci) {
			c->state = -1;
			return NULL;
		}
		c->ci->partial = true;
		c->state = 1;
	}
	size_t hit = 0, nhit = 0;
	size_t lo = jh_upper_bound_u64(c->tops, c->ntops, sizeof *c->tops,
				       offsetof(struct cuindex_top, lo), pc);
	for (size_t j = lo; j-- > 0 && c->topmaxhi[j] > pc;)
		if (c->tops[j].hi > pc && (nhit == 0 || c->tops[j].die != c->tops[hit].die)) {
			hit = j;
			nhit++;
		}
	if (nhit == 0)
		return c->ci;
	if (nhit == 1 && c->ci->ntops_added < PARTIAL_MAX_TOPS
	    && cuindex_add_top(c->ci, map->dw, c->tops[hit].die) == 0)
		return c->ci;
	if (cuindex_make_full(c->ci)) {
		cuindex_free(c->ci);
		c->ci = NULL;
		c->state = -1;
	}
	return c->ci;
}

static size_t cuindex_map_by_offset(const struct cuindex_map *map, Dwarf_Off off)
{
	size_t lo = jh_lower_bound_u64(map->cus, map->ncus, sizeof *map->cus,
				       offsetof(struct cuent, off), off);

	return lo < map->ncus && map->cus[lo].off == off ? lo : SIZE_MAX;
}

/* Ranges from .debug_aranges for every unit it lists with valid code.
 * gcc writes the same ranges here as on the CU DIE (checked on the
 * fixtures, the bench program and 3,288 units of Debian's debug files);
 * they are read besides the DIE's so that a unit whose DIE or aranges
 * leave some of its code out is still found there (llvm-symbolizer and
 * libdw's dwarf_addrdie take a listed unit's aranges alone).  A section
 * libdw cannot read (rustc 1.63 writes terminators in the middle of a
 * unit's list) adds nothing. */
static int cuindex_map_aranges(struct cuindex_map *map)
{
	Dwarf_Aranges *ar;
	size_t nar;

	if (dwarf_getaranges(map->dw, &ar, &nar) != 0)
		return 0;
	for (size_t i = 0; i < nar; i++) {
		Dwarf_Addr a;
		Dwarf_Word len;
		Dwarf_Off off;
		Dwarf_Arange *one = dwarf_onearange(ar, i);
		if (!one || dwarf_getarangeinfo(one, &a, &len, &off) != 0)
			continue;
		size_t cu = cuindex_map_by_offset(map, off);
		if (cu == SIZE_MAX || map->cus[cu].split
		    || !cuindex_in(map->valid, map->nvalid, a, a + len))
			continue;
		if (cuindex_map_add(map, a, a + len, cu))
			return -1;
	}
	return 0;
}

/* Units in neither the aranges nor with ranges on their DIE: walked for
 * their functions' ranges. */
static int cuindex_map_rangeless(struct cuindex_map *map)
{
	size_t walks = 0;

	for (size_t cu = 0; cu < map->ncus && walks < MAX_RANGELESS_WALKS; cu++) {
		if (map->cus[cu].placed)
			continue;
		walks++;
		struct cuindex *ci = cuindex_map_unit(map, cu);
		for (size_t i = 0; ci && i < ci->ntop; i++) {
			const struct ival *v = &ci->ivals[ci->top[i]];
			if (cuindex_map_add(map, v->lo, v->hi, cu))
				return -1;
		}
	}
	return 0;
}

static int cuindex_range_cmp(const void *a, const void *b)
{
	const struct curange *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

/* map->maxhi for the sorted ranges.  Returns 0, or -1 out of memory. */
static int cuindex_map_maxhi(struct cuindex_map *map)
{
	map->maxhi = malloc((map->nranges + 1) * sizeof *map->maxhi);
	if (!map->maxhi)
		return -1;
	uint64_t mx = 0;
	for (size_t i = 0; i < map->nranges; i++) {
		if (map->ranges[i].hi > mx)
			mx = map->ranges[i].hi;
		map->maxhi[i] = mx;
	}
	return 0;
}

static int cuindex_map_read(struct cuindex_map *map)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	size_t cap = 0, missing = 0;

	while (dwarf_get_units(map->dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		bool split = false;
		if (type == DW_UT_skeleton && dwarf_tag(&subdie) == DW_TAG_compile_unit) {
			cudie = subdie;
			split = true;
		} else if (type != DW_UT_compile && type != DW_UT_partial) {
			continue;
		}
		if (cuindex_grow((void **)&map->cus, &cap, map->ncus + 1, sizeof *map->cus))
			return -1;
		size_t i = map->ncus++;
		memset(&map->cus[i], 0, sizeof map->cus[i]);
		map->cus[i].split = split;
		map->cus[i].cudie = cudie;
		map->cus[i].off = dwarf_dieoffset(&cudie);
	}
	if (!map->no_aranges && cuindex_map_aranges(map))
		return -1;
	/* every unit's DIE: what the aranges leave out (clang writes none) */
	for (size_t i = 0; i < map->ncus; i++) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&map->cus[i].cudie, off, &base, &lo, &hi)) > 0)
			if (cuindex_in(map->valid, map->nvalid, lo, hi)
			    && cuindex_map_add(map, lo, hi, i))
				return -1;
		if (!map->cus[i].placed)
			missing++;
	}
	if (missing && cuindex_map_rangeless(map))
		return -1;
	if (map->nranges == 0)
		return 0;
	jh_qsort(map->ranges, map->nranges, sizeof *map->ranges, cuindex_range_cmp);
	/* a range both the aranges and the DIE give is kept once */
	size_t n = 1;
	for (size_t i = 1; i < map->nranges; i++)
		if (cuindex_range_cmp(&map->ranges[i], &map->ranges[n - 1]) != 0)
			map->ranges[n++] = map->ranges[i];
	map->nranges = n;
	return cuindex_map_maxhi(map);
}

/* An empty map of DW with its copy of VALID, or NULL out of memory. */
static struct cuindex_map *cuindex_map_alloc(Dwarf *dw, const struct cuindex_range *valid,
					     size_t nvalid)
{
	struct cuindex_map *map = calloc(1, sizeof *map);

	if (!map)
		return NULL;
	map->dw = dw;
	if (nvalid > 0) {
		map->valid = malloc(nvalid * sizeof *valid);
		if (!map->valid) {
			free(map);
			return NULL;
		}
		memcpy(map->valid, valid, nvalid * sizeof *valid);
		map->nvalid = nvalid;
	}
	return map;
}

struct cuindex_map *cuindex_map_new(Dwarf *dw, const struct cuindex_range *valid,
				    size_t nvalid)
{
	return cuindex_map_new_opts(dw, valid, nvalid, true);
}

struct cuindex_map *cuindex_map_new_opts(Dwarf *dw, const struct cuindex_range *valid,
					 size_t nvalid, bool aranges)
{
	struct cuindex_map *map = cuindex_map_alloc(dw, valid, nvalid);

	if (!map)
		return NULL;
	map->no_aranges = !aranges;
	if (cuindex_map_read(map)) {
		cuindex_map_free(map);
		return NULL;
	}
	return map;
}

Dwarf *cuindex_map_dwarf(const struct cuindex_map *map)
{
	return map->dw;
}

size_t cuindex_map_units(const struct cuindex_map *map, uint64_t *out, size_t max)
{
	for (size_t i = 0; i < map->ncus; i++)
		if (map->cus[i].split)
			return 0;
	for (size_t i = 0; i < map->ncus && i < max; i++)
		out[i] = map->cus[i].off;
	return map->ncus;
}

bool cuindex_map_desc_ok(const uint64_t *units, size_t nunits,
			 const struct cuindex_maprange *ranges, size_t nranges)
{
	for (size_t i = 1; i < nunits; i++)
		if (units[i] <= units[i - 1])
			return false;
	for (size_t i = 0; i < nranges; i++) {
		const struct cuindex_maprange *r = &ranges[i], *q = r - 1;
		/* a unit's ranges mostly follow each other: one search each run */
		if (!i || r->cuoff != q->cuoff) {
			size_t u = jh_lower_bound_u64(units, nunits, sizeof *units, 0, r->cuoff);
			if (u == nunits || units[u] != r->cuoff)
				return false;
		}
		if (r->lo > r->hi)
			return false;
		if (i && (q->lo != r->lo ? q->lo > r->lo : q->hi != r->hi ? q->hi > r->hi
			  : q->cuoff > r->cuoff))
			return false;
	}
	return true;
}

struct cuindex_map *cuindex_map_new_known(Dwarf *dw, const struct cuindex_range *valid,
					  size_t nvalid, const uint64_t *units, size_t nunits,
					  const struct cuindex_maprange *ranges, size_t nranges)
{
	if (!cuindex_map_desc_ok(units, nunits, ranges, nranges))
		return NULL;
	struct cuindex_map *map = cuindex_map_alloc(dw, valid, nvalid);

	if (!map)
		return NULL;
	map->cus = calloc(nunits + 1, sizeof *map->cus);
	map->ranges = malloc((nranges + 1) * sizeof *map->ranges);
	if (!map->cus || !map->ranges)
		goto fail;
	map->capranges = nranges + 1;
	for (size_t i = 0; i < nunits; i++) {
		map->cus[i].off = units[i];
		map->cus[i].die_unread = true;
	}
	map->ncus = nunits;
	/* the unit of each range: there (cuindex_map_desc_ok) */
	for (size_t i = 0; i < nranges; i++) {
		uint32_t cu = i && ranges[i].cuoff == ranges[i - 1].cuoff
			? map->ranges[i - 1].cu
			: (uint32_t)cuindex_map_by_offset(map, ranges[i].cuoff);
		map->ranges[i] = (struct curange){ ranges[i].lo, ranges[i].hi, cu };
	}
	map->nranges = nranges;
	if (cuindex_map_maxhi(map))
		goto fail;
	return map;
fail:
	cuindex_map_free(map);
	return NULL;
}

size_t cuindex_map_ranges(const struct cuindex_map *map, struct cuindex_maprange *out,
			  size_t max)
{
	for (size_t i = 0; i < map->nranges && i < max; i++)
		out[i] = (struct cuindex_maprange){ map->ranges[i].lo, map->ranges[i].hi,
						    map->cus[map->ranges[i].cu].off };
	return map->nranges;
}

void cuindex_map_free(struct cuindex_map *map)
{
	if (!map)
		return;
	for (size_t i = 0; i < map->ncus; i++) {
		cuindex_free(map->cus[i].ci);
		free(map->cus[i].tops);
		free(map->cus[i].topmaxhi);
		free(map->cus[i].seqs);
	}
	free(map->cus);
	free(map->stmts);
	free(map->ranges);
	free(map->maxhi);
	free(map->valid);
	free(map);
}

size_t cuindex_map_find(struct cuindex_map *map, uint64_t pc, struct cuindex **out,
			size_t max)
{
	size_t n = 0;
	size_t lo = jh_upper_bound_u64(map->ranges, map->nranges, sizeof *map->ranges,
				       offsetof(struct curange, lo), pc);
	/* Units overlap only in broken or hand-made DWARF; maxhi bounds the
	 * walk back to the ranges that can still reach pc. */
	for (size_t j = lo; j-- > 0 && map->maxhi[j] > pc && n < max;) {
		if (map->ranges[j].hi <= pc)
			continue;
		struct cuindex *ci = cuindex_map_unit_at(map, map->ranges[j].cu, pc);
		size_t k;
		for (k = 0; k < n && out[k] != ci; k++)
			;
		if (ci && k == n)
			out[n++] = ci;
	}
	return n;
}

int cuindex_map_set_unit(struct cuindex_map *map, uint64_t cuoff,
			 const struct cuindex_unitinfo *u)
{
	const struct cuindex_top *tops = u->tops;
	size_t n = u->ntops, ns = u->nseqs;
	size_t cu = cuindex_map_by_offset(map, cuoff);
	if (cu == SIZE_MAX || map->cus[cu].split || map->cus[cu].ntops || !n)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (tops[i].lo >= tops[i].hi || (i && tops[i].lo < tops[i - 1].lo))
			return -1;
	if (!cuindex_seqs_ordered(u->seqs, ns))
		return -1;
	struct cuent *c = &map->cus[cu];
	c->tops = malloc(n * sizeof *c->tops);
	c->topmaxhi = malloc(n * sizeof *c->topmaxhi);
	c->seqs = ns ? malloc(ns * sizeof *c->seqs) : NULL;
	if (!c->tops || !c->topmaxhi || (ns && !c->seqs)) {
		free(c->tops);
		free(c->topmaxhi);
		free(c->seqs);
		c->tops = NULL;
		c->topmaxhi = NULL;
		c->seqs = NULL;
		return -1;
	}
	memcpy(c->tops, tops, n * sizeof *tops);
	if (ns)
		memcpy(c->seqs, u->seqs, ns * sizeof *c->seqs);
	c->nseqs = ns;
	uint64_t mx = 0;
	for (size_t i = 0; i < n; i++) {
		if (tops[i].hi > mx)
			mx = tops[i].hi;
		c->topmaxhi[i] = mx;
	}
	c->ntops = n;
	return 0;
}

int cuindex_map_each_full(struct cuindex_map *map,
			  int (*fn)(void *arg, uint64_t cuoff, const struct cuindex_unitinfo *u),
			  void *arg)
{
	struct cuindex_top *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; map && i < map->ncus && !rc; i++) {
		struct cuent *c = &map->cus[i];
		if (c->state != 1 || c->ci->partial || c->split)
			continue;
		size_t n = cuindex_tops(c->ci, NULL, 0);
		if (!n)
			continue;
		if (n > cap) {
			free(buf);
			cap = n;
			buf = malloc(cap * sizeof *buf);
			if (!buf)
				return -1;
		}
		cuindex_tops(c->ci, buf, n);
		struct cuindex_unitinfo u = { buf, n, c->ci->seqs, c->ci->nseqs };
		rc = fn(arg, c->off, &u);
	}
	free(buf);
	return rc;
}
