/*
 * fdetab: the functions an object's call-frame information describes.
 *
 * Every function the compiler emitted has a frame description entry (FDE)
 * in .eh_frame, stripped binary or not: the unwinder needs it.  Its
 * [initial_location, initial_location + address_range) is the function's
 * code, so a pc that no symbol names still has a function, known by where
 * it starts.  The entries are read once per object (libdw's
 * dwarf_next_cfi walks them; their pointer encodings are decoded here)
 * into a sorted table for O(log n) lookups.  .debug_frame is read too
 * when the file itself has one.  The entries are the ones readelf lists
 * (tests/t0232 compares them on Debian's objects).  The table is read
 * from the object on each run, never kept in the persistent cache
 * (diskcache.h), so warm and cold runs agree.
 */
#ifndef JHEAP_FDETAB_H
#define JHEAP_FDETAB_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

struct fdetab {
	int state;                   /* 0 not read, 1 read, -1 nothing */
	struct fde_range { uint64_t lo, hi; } *v;
	size_t n;
};

/* The link-time range [*lo, *hi) of the FDE of ELF that holds VADDR,
 * reading the table into T on first use.  0, or -1 when none holds it. */
int fdetab_find(struct fdetab *t, Elf *elf, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

/* Frees what T holds; T may be all zero. */
void fdetab_release(struct fdetab *t);

#endif
