/*
 * cuindex: one walk over a compilation unit's DIEs, then binary searches.
 * See cuindex.h for the contract.
 */
#include "symbolize/cuindex.h"
#include "symbolize/culines.h"
#include "lib/array.h"

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

struct cuindex {
	Dwarf_Die cudie;
	struct scope *scopes;
	size_t nscopes, capscopes;
	struct ival *ivals;
	size_t nivals, capivals;
	uint64_t *maxhi;       /* maxhi[i] = max(ivals[0..i].hi) */
	size_t *top;           /* indices of intervals without an enclosing one */
	size_t ntop;
	struct culines lines;  /* the unit's line table */
	struct cuindex_range *valid;
	size_t nvalid;
	const char *comp_dir;
	bool types;            /* cuindex_lang_types */
	/* A partial index holds only the functions added by cuindex_add_top
	 * (their DIE offsets here), not the whole unit. */
	bool partial;
	uint64_t *tops_added;
	size_t ntops_added;
};

/* Grow *P (an array of elements of size ELSZ with capacity *CAP) to hold at
 * least NEED elements.  Returns 0, or -1 when out of memory or too big. */
static int cuindex_grow(void **p, size_t *cap, size_t need, size_t elsz)
{
	if (need > *cap && need > MAX_IVALS)
		return -1;
	return jh_grow(p, cap, need, elsz) ? -1 : 0;
}

int cuindex_range_in(const struct cuindex_range *v, size_t n, uint64_t lo, uint64_t hi)
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
	return cuindex_range_in(ci->valid, ci->nvalid, lo, hi);
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

/* An index of the unit with its line table (or, given SEQS, the means to
 * decode it by sequence) and no functions yet; NAMES_DIR as for
 * cuindex_new_unit. */
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
	if (culines_read(&ci->lines, cudie, ci->valid, ci->nvalid,
	    names_dir ? *names_dir : ci->comp_dir, seqs, nseqs))
		goto fail;
	return ci;
fail:
	cuindex_free(ci);
	return NULL;
}

struct cuindex *cuindex_new_unit(Dwarf_Die *cudie, const struct cuindex_range *valid,
				 size_t nvalid, const char *const *names_dir,
				 const struct cuindex_seq *seqs, size_t nseqs, bool partial)
{
	struct cuindex *ci = cuindex_alloc(cudie, valid, nvalid, names_dir, seqs, nseqs);

	if (ci && partial)
		ci->partial = true;
	else if (ci && (cuindex_walk(ci) || cuindex_link(ci))) {
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
	return cuindex_new_unit(cudie, valid, nvalid, NULL, seqs, n, false);
}

int cuindex_lines_lazy(const struct cuindex *ci)
{
	return ci->lines.lazy;
}

struct cuindex *cuindex_new(Dwarf_Die *cudie, const struct cuindex_range *valid,
			    size_t nvalid)
{
	return cuindex_new_unit(cudie, valid, nvalid, NULL, NULL, 0, false);
}

void cuindex_set_libdw_lines(int on)
{
	culines_set_libdw(on);
}

int cuindex_lines_own(const struct cuindex *ci)
{
	return ci->lines.own;
}

int cuindex_add_top(struct cuindex *ci, Dwarf *dw, uint64_t off)
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

int cuindex_make_full(struct cuindex *ci)
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
	culines_release(&ci->lines);
	free(ci->valid);
	free(ci->tops_added);
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
	for (size_t i = 0; i < ci->lines.nseqs && i < max; i++)
		out[i] = ci->lines.seqs[i];
	return ci->lines.nseqs;
}

const struct cuindex_seq *cuindex_seq_list(const struct cuindex *ci, size_t *n)
{
	*n = ci->lines.nseqs;
	return ci->lines.seqs;
}

bool cuindex_seqs_ordered(const struct cuindex_seq *seqs, size_t n)
{
	return culines_seqs_ordered(seqs, n);
}

int cuindex_line(struct cuindex *ci, uint64_t pc, struct cuindex_line *out)
{
	return culines_line(&ci->lines, pc, out);
}

const char *cuindex_file(struct cuindex *ci, uint64_t idx)
{
	return culines_file(&ci->lines, idx);
}

bool cuindex_partial(const struct cuindex *ci, size_t *nadded)
{
	if (nadded)
		*nadded = ci->ntops_added;
	return ci->partial;
}

bool cuindex_outer_range(const struct cuindex *ci, size_t i, struct cuindex_range *out)
{
	if (i >= ci->ntop)
		return false;
			const struct ival *v = &ci->ivals[ci->top[i]];
	*out = (struct cuindex_range){ v->lo, v->hi };
	return true;
}

const char *cuindex_comp_dir(const struct cuindex *ci)
{
	return ci->comp_dir;
}

Dwarf_Die *cuindex_cudie(struct cuindex *ci)
{
	return &ci->cudie;
}
