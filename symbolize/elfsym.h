/*
 * elfsym: a module's ELF symbol table (.symtab of the file or of its debug
 * file, else .dynsym), sorted once for O(log n) address lookups.  It names
 * an address only when a symbol's [value, value + size) covers it, or an
 * assembler label starts the code it is in; never the nearest unrelated
 * symbol.
 */
#ifndef JHEAP_ELFSYM_H
#define JHEAP_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

/* A function symbol of the module's symbol table (module addresses). */
struct elfsym {
	uint64_t value, size;
	const char *name;         /* libdwfl's string, lives as long as the Dwfl */
	int bind;                 /* 2 global, 1 weak, 0 local */
	bool label;               /* STT_NOTYPE with size 0: an assembler label */
	uint32_t shndx;           /* its section */
};

struct elfsyms {
	int state;                /* 0 not read, 1 read, -1 none */
	struct elfsym *syms;
	uint64_t *maxend;         /* largest end among syms[0..i] */
	size_t n;
};

/* The raw name (libdwfl's string, valid while the Dwfl lives) of the symbol
 * of MOD that covers module address A, reading the table into T on first
 * use; NULL when nothing covers A. */
const char *elfsyms_lookup(struct elfsyms *t, Dwfl_Module *mod, uint64_t a);

/* [*lo, *hi) of that symbol (a label reaches the next symbol); 0, or -1
 * when nothing covers A. */
int elfsyms_range(struct elfsyms *t, Dwfl_Module *mod, uint64_t a, uint64_t *lo, uint64_t *hi);

/* Frees what T holds; T may be all zero. */
void elfsyms_release(struct elfsyms *t);

#endif
