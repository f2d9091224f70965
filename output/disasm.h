/*
 * disasm: the machine code of the functions a regular expression names,
 * from binutils' objdump, with the values of the profile per instruction;
 * for --disasm's text and --weblist's page (output/weblist.c).
 *
 * The routines are given as data: objdump's instructions with their flat
 * and cumulative values and, from objdump -l --inlines, each instruction's
 * source positions, innermost first (--weblist puts an instruction under
 * the line of its outermost position in the routine's file).  objdump's
 * answers can be kept in a struct disasm_cache, which the driver holds for
 * the shell's next disasm or weblist; an entry is used only while the
 * object file keeps its device, inode, size and modification time.
 */
#ifndef JHEAP_DISASM_H
#define JHEAP_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "output/output.h"

/* A source position objdump gives: FILE[0..flen) (not NUL-terminated,
 * inside the routine's text) and LINE. */
struct disasm_pos {
	const char *file;
	size_t flen;
	uint32_t line;
};

/* One line of objdump's listing: an instruction, or a "file:line"
 * marker of -l that the instructions after it belong to. */
struct disasm_insn {
	uint64_t addr;             /* link-time address (0 for a marker) */
	const char *text;          /* the instruction, or the marker as objdump wrote it */
	bool marker;
	double flat, cum;          /* the values of the pcs it holds */
	uint32_t pos0, npos;       /* its source positions, routine.pos[pos0 ..], innermost
	                              first: the line-table row, then each call site it is
	                              inlined at (none before the first marker) */
};

/* One function's symbol range in an object file. */
struct disasm_routine {
	uint32_t name;             /* as --disasm shows it: string id in the profile */
	char *short_name;          /* the function's short name (names_short) */
	uint32_t object;           /* the object file, string id */
	uint64_t lo, hi;
	double flat, cum;          /* the values of the pcs in [lo, hi) */
	char *text;                /* objdump's output, which ins and pos point into */
	struct disasm_insn *ins;
	size_t nins;
	struct disasm_pos *pos;
	size_t npos;
};

struct disasm_set {
	struct disasm_routine *r;  /* sorted by name, object, address */
	size_t n;
	size_t done;               /* the first DONE have their code */
};

/* The routines whose function matches RE (--OPT=RE, named so in messages)
 * and holds a value of R, each disassembled by objdump (or taken from
 * r->disasm_cache).  Returns 0, or a negative JH_ code with a message:
 * then set->done routines were disassembled before the failure.  Call
 * disasm_set_release() in both cases. */
int disasm_collect(const struct report *r, const char *opt, const char *re,
		   struct disasm_set *set, char *err, size_t errlen);
void disasm_set_release(struct disasm_set *set);

/* objdump's answers kept between reports (the shell's commands), checked
 * against the object file's identity and time before each use. */
struct disasm_cache *disasm_cache_new(void);
void disasm_cache_free(struct disasm_cache *c);

#endif
