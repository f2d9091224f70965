#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/fdetab.h"
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/varint.h"

/* What an FDE needs from its CIE: how its addresses are encoded. */
struct cie_enc {
	uint64_t off;
	uint8_t enc;          /* DW_EH_PE_*, or DW_EH_PE_omit: not understood */
};

struct reader {
	bool big_endian;
	int addr_size;
};

static uint64_t read_fixed(const struct reader *r, const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[r->big_endian ? n - 1 - i : i] << (8 * i);
	return v;
}

/* A value of encoding ENC at *P (below END), moving *P past it; FIELD is
 * the link-time address of *P, for pc-relative values when APPLY.
 * Returns 0, or -1 for an encoding not known or a value cut short. */
static int read_encoded(const struct reader *r, const uint8_t **p, const uint8_t *end,
			uint8_t enc, uint64_t field, bool apply, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	int n = 0;
	bool sign = false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: n = r->addr_size; break;
	case DW_EH_PE_udata2: n = 2; break;
	case DW_EH_PE_udata4: n = 4; break;
	case DW_EH_PE_udata8: n = 8; break;
	case DW_EH_PE_sdata2: n = 2; sign = true; break;
	case DW_EH_PE_sdata4: n = 4; sign = true; break;
	case DW_EH_PE_sdata8: n = 8; sign = true; break;
	case DW_EH_PE_uleb128:
		if (varint_get(&q, end, &v))
			return -1;
		break;
	case DW_EH_PE_sleb128: {
		int64_t sv;
		if (varint_get_sleb(&q, end, &sv))
			return -1;
		v = (uint64_t)sv;
		break;
	}
	default:
		return -1;
	}
	if (n) {
		if (end - q < n)
			return -1;
		v = read_fixed(r, q, n);
		if (sign && n < 8 && (v >> (8 * n - 1)) & 1)
			v |= ~(uint64_t)0 << (8 * n);
		q += n;
	}
	if (apply) {
		switch (enc & 0x70) {
		case DW_EH_PE_absptr: break;
		case DW_EH_PE_pcrel: v += field; break;
		default: return -1;
		}
	}
	*p = q;
	*out = v;
	return 0;
}

/* The encoding of the addresses of the FDEs of CIE E. */
static uint8_t cie_encoding(const struct reader *r, const Dwarf_CIE *e)
{
	const char *a = e->augmentation;
	if (!a || !*a)
		return DW_EH_PE_absptr;
	if (a[0] != 'z' || !e->augmentation_data)
		return DW_EH_PE_omit;
	const uint8_t *d = e->augmentation_data, *end = d + e->augmentation_data_size;
	uint8_t enc = DW_EH_PE_absptr;
	for (a++; *a; a++) {
		uint64_t skip;
		switch (*a) {
		case 'L':
			if (d >= end)
				return DW_EH_PE_omit;
			d++;
			break;
		case 'P': {
			if (d >= end)
				return DW_EH_PE_omit;
			uint8_t penc = *d++;
			if (read_encoded(r, &d, end, penc & 0x7f, 0, false, &skip))
				return DW_EH_PE_omit;
			break;
		}
		case 'R':
			if (d >= end)
				return DW_EH_PE_omit;
			enc = *d++;
			break;
		case 'S':
		case 'B':
			break;
		default:
			/* a letter not known: 'R' came first or never */
			return enc;
		}
	}
	return enc;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi > y->hi) - (x->hi < y->hi);
}

/* Adds the FDEs of section SCN (.eh_frame when EH) to T. */
static int read_section(struct fdetab *t, size_t *cap, const unsigned char *ident,
			const struct reader *r, Elf_Scn *scn, bool eh)
{
	GElf_Shdr sh;
	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return 0;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return 0;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return 0;
	struct cie_enc *cies = NULL;
	size_t ncies = 0, capcies = 0, last = 0;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int rc = 0;
	while (dwarf_next_cfi(ident, d, eh, off, &next, &e) == 0) {
		if (dwarf_cfi_cie_p(&e)) {
			struct cie_enc c = { off, cie_encoding(r, &e.cie) };
			if (JH_PUSH(cies, ncies, capcies, c)) {
				rc = JH_ENOMEM;
				break;
			}
		} else {
			/* the CIE: usually the one before, else by search (CIEs
			 * come in offset order) */
			size_t lo = 0, hi = ncies;
			if (last < ncies && cies[last].off == e.fde.CIE_pointer) {
				lo = last;
			} else {
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;
					if (cies[mid].off < e.fde.CIE_pointer)
						lo = mid + 1;
					else
						hi = mid;
				}
			}
			uint64_t start, len;
			const uint8_t *p = e.fde.start, *end = e.fde.end;
			if (lo < ncies && cies[lo].off == e.fde.CIE_pointer && cies[lo].enc != DW_EH_PE_omit) {
				uint8_t enc = cies[lo].enc;
				uint64_t field = sh.sh_addr + (uint64_t)(p - (const uint8_t *)d->d_buf);
				last = lo;
				if (!read_encoded(r, &p, end, enc, field, true, &start) &&
				    !read_encoded(r, &p, end, enc & 0x0f, 0, false, &len) && len &&
				    start + len > start) {
					struct fde_range fr = { start, start + len };
					if (JH_PUSH(t->v, t->n, *cap, fr)) {
						rc = JH_ENOMEM;
						break;
					}
				}
			}
		}
		if (next == (Dwarf_Off)-1 || next <= off)
			break;
		off = next;
	}
	free(cies);
	return rc;
}

static void read_table(struct fdetab *t, Elf *elf)
{
	size_t cap = 0, shstrndx, nident;
	const char *ident = elf_getident(elf, &nident);
	if (!ident || nident < EI_NIDENT || elf_getshdrstrndx(elf, &shstrndx))
		return;
	struct reader r = { ident[EI_DATA] == ELFDATA2MSB, ident[EI_CLASS] == ELFCLASS64 ? 8 : 4 };
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (!name)
			continue;
		bool eh = !strcmp(name, ".eh_frame");
		if ((eh || !strcmp(name, ".debug_frame")) &&
		    read_section(t, &cap, (const unsigned char *)ident, &r, scn, eh))
			break;
	}
	if (t->n)
		jh_qsort(t->v, t->n, sizeof(*t->v), range_cmp);
}

int fdetab_find(struct fdetab *t, Elf *elf, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	if (t->state == 0) {
		read_table(t, elf);
		t->state = t->n ? 1 : -1;
	}
	if (t->state < 0)
		return -1;
	/* the last entry starting at or before VADDR; entries do not nest,
	 * but a few before it are looked at in case some do */
	size_t a = 0, b = t->n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (t->v[mid].lo <= vaddr)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t j = a, steps = 0; j-- > 0 && steps < 8; steps++)
		if (vaddr < t->v[j].hi) {
			*lo = t->v[j].lo;
			*hi = t->v[j].hi;
			return 0;
		}
	return -1;
}

void fdetab_release(struct fdetab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
