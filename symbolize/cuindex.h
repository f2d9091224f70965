/*
 * cuindex: an address index over one DWARF compilation unit.
 *
 * Built once, the first time any address of the unit is asked for: one walk
 * of the unit's DIE tree collects every DW_TAG_subprogram and
 * DW_TAG_inlined_subroutine with code ranges into a table sorted by start
 * address, and the unit's line table is copied into a compact sorted array.
 * After that each address is a binary search plus a short walk up a
 * containment chain, instead of the full tree walk dwarf_getscopes does per
 * address.
 *
 * Class bodies are skipped in C and C++ units: their compilers define a
 * member function outside its class (DW_AT_specification), and class
 * bodies are most of a C++ unit's DIEs.  In every other language's units
 * they are walked, as rustc up to 1.63 defines each method with its code
 * inside its type's DIE.
 *
 * The line table is culines.c's: decoded by linetab.c, with libdw's
 * dwarf_getsrclines answering for the units linetab.c declines; the
 * answers are the same.  Which unit holds an address is the unit map's
 * business (cumap.h).  Names, demangling and string ownership are the
 * caller's (symcache.c).  File names it returns point into the index's
 * own file table or into libdw's data: they live until cuindex_free() of
 * the index they came from (for the indexes of a map: until cumap_free),
 * so a caller copies what it keeps beyond that.
 */
#ifndef JHEAP_CUINDEX_H
#define JHEAP_CUINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>

struct cuindex;

/* A half-open address range [lo, hi) in the unit's DWARF address space. */
struct cuindex_range {
	uint64_t lo, hi;
};

/* Line-table answer for one address.  file lives as long as the index. */
struct cuindex_line {
	const char *file;
	int line;
	int column;
};

/* Deepest inline nesting a lookup reports; deeper chains are cut at the
 * outer end (real code stays far below this). */
#define CUINDEX_MAX_CHAIN 128

/* Index the unit whose CU DIE is CUDIE (copied).  VALID lists the address
 * ranges that can hold code (the executable PT_LOAD segments, in DWARF
 * addresses); a function range starting outside all of them is dropped, so
 * the zero-based leftovers of functions the linker discarded cannot shadow
 * real code.  NVALID == 0 accepts every range.  VALID is copied.
 * Returns NULL when out of memory or when the unit cannot be read; the
 * caller owns the result and frees it with cuindex_free(). */
struct cuindex *cuindex_new(Dwarf_Die *cudie, const struct cuindex_range *valid,
			    size_t nvalid);
/* cuindex_free(NULL) is a no-op. */
void cuindex_free(struct cuindex *ci);

/* Scopes (function and inlined-call DIEs) containing PC, innermost first,
 * ending at the enclosing DW_TAG_subprogram.  Writes at most MAX scope ids
 * into CHAIN and returns how many; 0 when no function of this unit covers
 * PC. */
size_t cuindex_lookup(const struct cuindex *ci, uint64_t pc, uint32_t *chain,
		      size_t max);

/* The DIE of scope ID (owned by the index). */
Dwarf_Die *cuindex_scope_die(struct cuindex *ci, uint32_t id);

/* A pointer-sized slot per scope that the index never looks at; the caller
 * uses it to cache what it derived from the scope (names).  Starts NULL. */
void **cuindex_scope_slot(struct cuindex *ci, uint32_t id);

/* Line-table row for PC: the last row at or below PC in its sequence.
 * Returns 0 and fills *out, or -1 when no row covers PC.  An index given
 * its line table's sequences decodes the one holding PC here, once. */
int cuindex_line(struct cuindex *ci, uint64_t pc, struct cuindex_line *out);

/* Name of file number IDX of the unit's file table (as DW_AT_call_file and
 * DW_AT_decl_file number them), or NULL.  Lives as long as the index. */
const char *cuindex_file(struct cuindex *ci, uint64_t idx);

/* Whether CI's line table was decoded by linetab.c (1) or read through
 * libdw (0); for tests. */
int cuindex_lines_own(const struct cuindex *ci);

/* ON != 0: indexes built from now on read every line table through libdw,
 * as before linetab.c; for tests and timing.  Not thread-safe: set it while
 * no index is being built. */
void cuindex_set_libdw_lines(int on);

/* ---- top-level functions: a unit indexed sparsely ----
 *
 * Building a unit's index walks every DIE of it, namespaces and all.  A
 * later run that needs a few new addresses of the same DWARF (the
 * persistent cache stores this) can instead be told where the unit's
 * top-level functions are and index only the one holding each address,
 * with the same answers. */

/* One address range of a function no other function of its unit encloses,
 * and the offset of the function's DIE. */
struct cuindex_top {
	uint64_t lo, hi;
	uint64_t die;
};

/* The top-level ranges of a full index, sorted by lo: writes at most MAX
 * to OUT and returns how many there are (0 for a partial index). */
size_t cuindex_tops(const struct cuindex *ci, struct cuindex_top *out, size_t max);

/* ---- line-table sequences: a unit's lines decoded sparsely ----
 *
 * Decoding a unit's whole line table costs far more than the few rows a
 * new address needs.  A table whose sequences can each be decoded alone
 * into exactly the rows the whole table has there (see linetab_seq) is
 * described by where each sequence starts, and an index given that
 * decodes only the sequence holding each pc it is asked about. */

/* A sequence holding the rows for [lo, hi), its end row at hi, its first
 * opcode OFF bytes into the unit's line table.  TRAIL 1: it has rows at hi
 * too, which answer from hi up to the next sequence (the whole sorted
 * table puts them after the end row); 2: it has, but the last of them is
 * the table's highest row, which is made an end (no line from hi on).
 * lo == hi without TRAIL: only an end row, no line from hi on. */
struct cuindex_seq {
	uint64_t lo, hi;
	uint32_t off, trail;
};

/* Whether SEQS[0..n) are in the order cuindex_seqs gives: each lo <= hi,
 * each lo at or past the previous hi, TRAIL at most 2. */
bool cuindex_seqs_ordered(const struct cuindex_seq *seqs, size_t n);

/* The sequences of CI's line table that hold valid rows, in the order a
 * lookup searches them (by lo, apart): writes at most MAX to OUT and
 * returns how many there are; 0 when the table cannot be read by sequence
 * (read by libdw, a sequence out of order, sequences that overlap, rows
 * partly outside the valid ranges). */
size_t cuindex_seqs(const struct cuindex *ci, struct cuindex_seq *out, size_t max);

/* cuindex_new, the line table read by sequence as SEQS[0..n) (from
 * cuindex_seqs on the same DWARF) describe it; for tests. */
struct cuindex *cuindex_new_seqs(Dwarf_Die *cudie, const struct cuindex_range *valid,
				 size_t nvalid, const struct cuindex_seq *seqs, size_t n);

/* Whether CI reads its line table by sequence (and has not had to give
 * that up for a sequence that did not decode as described); for tests. */
int cuindex_lines_lazy(const struct cuindex *ci);

/* ---- what the unit map (cumap.c) builds indexes with ---- */

/* Whether [lo, hi) is a non-empty range starting inside one of V[0..n)
 * (n == 0: any non-empty range): the test every function range, line
 * row and unit range passes to count as code. */
int cuindex_range_in(const struct cuindex_range *v, size_t n, uint64_t lo, uint64_t hi);

/* cuindex_new_seqs (SEQS may be NULL), the unit's DWARF 2-4 file names
 * built with *NAMES_DIR (the comp_dir of the first unit that read the
 * same line table, as libdw does), or with the unit's own comp_dir when
 * NAMES_DIR is NULL.  PARTIAL: an index that holds no function yet, for
 * cuindex_add_top. */
struct cuindex *cuindex_new_unit(Dwarf_Die *cudie, const struct cuindex_range *valid,
				 size_t nvalid, const char *const *names_dir,
				 const struct cuindex_seq *seqs, size_t nseqs, bool partial);

/* Adds the function whose DIE is at OFF in DW (a top-level
 * DW_TAG_subprogram of the unit, as cuindex_tops gave it) with everything
 * inlined into it, to a partial index.  Returns 0, or -1 when the DIE is
 * not such a function or out of memory (the index is then unchanged or
 * must be dropped). */
int cuindex_add_top(struct cuindex *ci, Dwarf *dw, uint64_t off);

/* Turns partial index CI into a full one, in place: the scopes are read
 * again from the whole unit, the line table and its file names stay (so
 * nothing the caller got from it goes away, and the table is not decoded
 * twice).  Returns 0, or -1 when out of memory (CI must then be freed). */
int cuindex_make_full(struct cuindex *ci);

/* Whether CI is a partial index, with *NADDED (when not NULL) the number
 * of functions added to it. */
bool cuindex_partial(const struct cuindex *ci, size_t *nadded);

/* Range I of the index's outermost intervals (those no other interval
 * encloses), in address order, into *OUT: true, or false when there are
 * not that many. */
bool cuindex_outer_range(const struct cuindex *ci, size_t i, struct cuindex_range *out);

/* CI's line-table sequences as cuindex_seqs gives them, without a copy:
 * *N of them, owned by CI. */
const struct cuindex_seq *cuindex_seq_list(const struct cuindex *ci, size_t *n);

/* DW_AT_comp_dir of the unit, or NULL. */
const char *cuindex_comp_dir(const struct cuindex *ci);

/* The CU DIE the index was built from. */
Dwarf_Die *cuindex_cudie(struct cuindex *ci);

#endif
