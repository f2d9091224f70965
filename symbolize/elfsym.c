#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/elfsym.h"
#include "lib/array.h"

/* ---- the ELF symbol table ----
 *
 * libdwfl picks the table (.symtab of the file or of its debug file, else
 * .dynsym, plus MiniDebugInfo), but its address search scans every symbol
 * per call and names aliases by table order; a sorted copy answers in
 * O(log n) and prefers the public name among aliases. */

static int sym_cmp(const void *a, const void *b)
{
	const struct elfsym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int read_syms(struct elfsyms *t, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	size_t k = 0;

	if (n <= 1)
		return -1;
	t->syms = malloc((size_t)n * sizeof *t->syms);
	if (!t->syms)
		return -1;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx,
							   NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		if (!name || !name[0] || shndx == SHN_UNDEF
		    || (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
			continue;
		t->syms[k].value = addr;
		t->syms[k].size = sym.st_size;
		t->syms[k].name = name;
		t->syms[k].bind = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
		t->syms[k].label = type == STT_NOTYPE && sym.st_size == 0;
		t->syms[k].shndx = shndx;
		k++;
	}
	t->n = k;
	if (k == 0)
		return -1;
	jh_qsort(t->syms, k, sizeof *t->syms, sym_cmp);
	t->maxend = malloc(k * sizeof *t->maxend);
	if (!t->maxend)
		return -1;
	uint64_t mx = 0;
	for (size_t i = 0; i < k; i++) {
		uint64_t end = t->syms[i].value + (t->syms[i].size ? t->syms[i].size : 1);
		if (end > mx)
			mx = end;
		t->maxend[i] = mx;
	}
	return 0;
}

/* Among aliases: global over weak over local, a size over none, no
 * "@VERSION", fewer leading underscores, shorter, then byte order. */
static int sym_better(const struct elfsym *a, const struct elfsym *b)
{
	if (a->bind != b->bind)
		return a->bind > b->bind;
	if (!a->size != !b->size)
		return a->size != 0;
	int av = strchr(a->name, '@') != NULL, bv = strchr(b->name, '@') != NULL;
	if (av != bv)
		return !av;
	size_t au = strspn(a->name, "_"), bu = strspn(b->name, "_");
	if (au != bu)
		return au < bu;
	size_t al = strlen(a->name), bl = strlen(b->name);
	if (al != bl)
		return al < bl;
	return strcmp(a->name, b->name) < 0;
}

/* Index of the ELF section holding module address A, or -1. */
static int64_t section_of(Dwfl_Module *mod, uint64_t a)
{
	Dwarf_Addr adj = a, bias = 0;
	Elf_Scn *scn = dwfl_module_address_section(mod, &adj, &bias);
	return scn ? (int64_t)elf_ndxscn(scn) : -1;
}

/* The raw name of the symbol whose [value, value + size) holds module
 * address A (a sizeless symbol only at its exact address); among nested
 * symbols the one starting last.  NULL when none covers A. */
static const struct elfsym *find(struct elfsyms *t, Dwfl_Module *mod, uint64_t a)
{
	const struct elfsym *best = NULL;
	size_t lo = 0, hi, steps = 0;

	if (t->state == 0)
		t->state = read_syms(t, mod) == 0 ? 1 : -1;
	if (t->state < 0)
		return NULL;
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].value <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > 0 && t->maxend[j] > a && steps < 4096; steps++) {
		const struct elfsym *s = &t->syms[j];
		if (best && s->value < best->value)
			break;
		if (a - s->value < s->size || (s->size == 0 && a == s->value))
			if (!best || sym_better(s, best))
				best = s;
	}
	if (!best && lo > 0 && lo < t->n && t->syms[lo - 1].label &&
	    section_of(mod, a) == (int64_t)t->syms[lo - 1].shndx) {
		/* An assembler label (untyped, size 0, such as ld.so's
		 * _dl_start_user) covers the code up to the next symbol of its
		 * section, but only when nothing sized lies between it and A:
		 * a pc after the end of a sized function is a gap, not the
		 * label's, and stays unnamed. */
		const struct elfsym *label = &t->syms[lo - 1];
		bool clean = true;
		for (size_t j = lo - 1; j-- > 0 && t->maxend[j] > label->value;)
			if (t->syms[j].size)
				clean = false;
		for (size_t j = lo - 1; j-- > 0 && t->syms[j].value == label->value;)
			if (t->syms[j].size)
				clean = false;
		if (clean)
			best = label;
	}
	return best;
}

const char *elfsyms_lookup(struct elfsyms *t, Dwfl_Module *mod, uint64_t a)
{
	const struct elfsym *s = find(t, mod, a);
	return s ? s->name : NULL;
}

int elfsyms_range(struct elfsyms *t, Dwfl_Module *mod, uint64_t a, uint64_t *lo, uint64_t *hi)
{
	const struct elfsym *s = find(t, mod, a);
	if (!s)
		return -1;
	*lo = s->value;
	*hi = s->size ? s->value + s->size : a + 1;
	if (!s->size) {
		/* a label: up to the next symbol */
		for (size_t i = 0; i < t->n; i++)
			if (t->syms[i].value > s->value) {
				*hi = t->syms[i].value;
				break;
			}
	}
	return 0;
}

void elfsyms_release(struct elfsyms *t)
{
	free(t->syms);
	free(t->maxend);
	memset(t, 0, sizeof(*t));
}
