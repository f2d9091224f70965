/*
 * linetab: one compilation unit's .debug_line program, decoded without libdw.
 *
 * elfutils 0.188's dwarf_getsrclines mallocs a node per row, sorts the rows
 * with qsort and joins every file name of the unit; on a large C++ unit that
 * is most of the time spent reading it.  This decoder reads the same bytes
 * into compact 16-byte rows (put in libdw's order by linesort.c) and builds
 * the same file names, about four times faster, so that its answers are
 * the ones libdw gives: the same rows in the same order (by address, an end
 * of sequence before a row at the same address, otherwise program order;
 * the last row marked as an end, as libdw does), and file names joined by
 * the same rules.
 *
 * It reads only what it can read exactly that way.  Anything else (DWARF
 * versions outside 2..5, VLIW headers, DW_LNE_define_file, forms and
 * opcodes libdw handles other than the standard says, compressed or
 * missing sections, relocatable objects, split DWARF, supplementary string
 * forms, values libdw's row fields cannot hold, malformed or truncated
 * data) makes linetab_read decline, and the caller reads the unit through
 * libdw, which is always right, only slower.  tests/unit/test_linetab.c
 * compares the two on every unit of the fixtures and on damaged copies,
 * and the answers by sequence with the whole table's (culines.h).
 */
#ifndef JHEAP_LINETAB_H
#define JHEAP_LINETAB_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>

/* The file index of a row whose file number is past the end of the file
 * table (libdw names no file for it). */
#define LINETAB_NOFILE 0x7fff

/* One row of the line table: 16 bytes. */
struct linetab_row {
	uint64_t addr;
	int32_t line;
	uint16_t column;
	uint16_t file : 15;    /* index into linetab.files, or LINETAB_NOFILE */
	uint16_t end : 1;      /* an end of sequence */
};

/* One sequence of a unit's program, to be decoded alone later
 * (linetab_open, linetab_seq): its first row is at lo (hi when it has
 * only its end row), its end row at hi, and its first opcode is OFF bytes
 * into the unit's table (counted from the unit's DW_AT_stmt_list
 * offset).  TRAIL: rows before the end row sit at hi too; sorted, they
 * come after it, so they answer for addresses past the sequence. */
struct linetab_seq {
	uint64_t lo, hi;
	uint32_t off, trail;
};

struct ltlazy;

struct linetab {
	struct linetab_row *rows;  /* nrows, sorted as libdw sorts them */
	size_t nrows;
	/* linetab_read: the program's sequences in program order, when each
	 * one decoded alone gives its rows as they are in the table: every
	 * sequence ends with DW_LNE_end_sequence, no row steps back to a
	 * lower address, nothing follows the last one.  NULL (nseqs 0) when
	 * the program is not like that. */
	struct linetab_seq *seqs;
	size_t nseqs;
	struct ltlazy *lazy;       /* linetab_open's state for linetab_seq */
	/* nfiles names, numbered as DW_AT_decl_file, DW_AT_call_file and the
	 * rows number them (file 0 included: "???" before DWARF 5, the
	 * primary source file in DWARF 5).  Fewer than LINETAB_NOFILE. */
	const char **files;
	size_t nfiles;
	const char *why;           /* why linetab_read declined (static text) */
};

/* Decode the line table of the unit whose CU DIE is CUDIE, its file names
 * joined with COMP_DIR (the unit's DW_AT_comp_dir as dwarf_attr and
 * dwarf_formstring give it, or NULL) where DWARF 2 to 4 call for it.
 * Returns 0 and fills *LT, which the caller releases with linetab_release();
 * or -1 when the unit has to be read through libdw instead (then LT->why
 * says why and there is nothing to release).  The rows are owned by LT; a
 * name in files lives until linetab_release() or until the unit's Dwarf
 * (whose section data absolute names point into) is closed, whichever
 * comes first. */
int linetab_read(struct linetab *lt, Dwarf_Die *cudie, const char *comp_dir);

/* linetab_read without running the program: the header and file names
 * only (rows stay NULL), for linetab_seq to decode sequences one at a
 * time.  The same returns and release. */
int linetab_open(struct linetab *lt, Dwarf_Die *cudie, const char *comp_dir);

/* Decodes the one sequence of LT (from linetab_open) whose first opcode
 * is OFF bytes into the unit, as linetab_read gave it in seqs: its rows in
 * program order (sorted but for the end row, which sorts before rows at
 * its address) into *ROWS, malloc'd for the caller to free, and *N.
 * Returns 0, or -1 when it cannot give exactly the rows linetab_read
 * gives: OFF outside the program, no end of sequence, a row that steps
 * back, or anything linetab_read declines. */
int linetab_seq(const struct linetab *lt, uint64_t off, struct linetab_row **rows, size_t *n);

/* Frees what linetab_read gave LT and clears it; a cleared LT is a no-op. */
void linetab_release(struct linetab *lt);

#endif
