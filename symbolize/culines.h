/*
 * culines: one unit's line table, as a cuindex answers from it.
 *
 * The table is decoded whole by linetab.c, or one sequence at a time as
 * pcs need them (when an earlier run described the table's sequences:
 * cuindex_seqs), or, for the units linetab.c declines, read through
 * libdw's dwarf_getsrclines; the answers are the same.  A table whose
 * sequences cannot each be decoded alone with the same answers (one out of
 * address order, two that overlap) is decoded whole.
 * tests/unit/test_linetab.c compares the line answers both ways for every
 * unit of the fixtures, of the installed debug files and of the benchmark
 * program, at each row and each end of every sequence.  Only rows that can
 * describe real code are kept: those inside the unit's valid ranges
 * (rows of functions the linker discarded restart at 0).
 *
 * Embedded in struct cuindex (cuindex.c); the file names it returns live
 * until culines_release().
 */
#ifndef JHEAP_CULINES_H
#define JHEAP_CULINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include "symbolize/cuindex.h"
#include "symbolize/linetab.h"

struct culines {
	Dwarf_Die cudie;
	const struct cuindex_range *valid;  /* borrowed from the index */
	size_t nvalid;
	const char *names_dir;   /* what the table's file names were built with */
	/* Decoded by linetab.c when own, else libdw's rows and (read on
	 * first need) libdw's file table. */
	bool own;
	struct linetab lt;
	struct culines_lrow *rows;
	size_t nrows;
	Dwarf_Files *files;
	size_t nfiles;
	int files_state;         /* 0 not read, 1 read, -1 unreadable */
	/* The table's sequences (cuindex_seqs).  lazy: lt holds only the
	 * header and file names, and a sequence's rows are decoded into
	 * seqrows the first time a pc needs them. */
	struct cuindex_seq *seqs;
	size_t nseqs;
	bool lazy;
	struct culines_seqrows *seqrows;
	/* a lazy table given up on (a sequence not as described): its file
	 * names, which callers may still hold, until the table is released */
	struct linetab lt_old;
};

/* Reads the line table of the unit whose CU DIE is CUDIE into L (zeroed
 * by the caller): decoded whole, or given SEQS[0..nseqs) (sorted and
 * apart), only its header and file names, its sequences decoded as pcs
 * need them.  VALID[0..nvalid) are the ranges that can hold code (kept
 * by pointer: they must outlive L).  NAMES_DIR is the comp_dir the DWARF
 * 2-4 file names are built with (cumap_names_dir).  A table
 * neither linetab.c nor libdw can read has no rows.  Returns 0, or -1
 * out of memory (release L then). */
int culines_read(struct culines *l, Dwarf_Die *cudie, const struct cuindex_range *valid,
		 size_t nvalid, const char *names_dir, const struct cuindex_seq *seqs,
		 size_t nseqs);

/* Frees what L holds. */
void culines_release(struct culines *l);

/* The row for PC: see cuindex_line(). */
int culines_line(struct culines *l, uint64_t pc, struct cuindex_line *out);

/* File number IDX of the unit's file table: see cuindex_file(). */
const char *culines_file(struct culines *l, uint64_t idx);

/* Whether SEQS[0..n) are in the order culines keeps them: see
 * cuindex_seqs_ordered(). */
bool culines_seqs_ordered(const struct cuindex_seq *seqs, size_t n);

/* ON != 0: tables read from now on go through libdw (cuindex_set_libdw_lines). */
void culines_set_libdw(int on);

#endif
