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
 * The line table is decoded by linetab.c, with libdw's dwarf_getsrclines
 * answering for the units linetab.c declines; the answers are the same.
 * Names, demangling and string ownership are the caller's business
 * (symcache.c).  File names it returns point into the index's own file
 * table or into libdw's data: they live until cuindex_free() of the index
 * they came from (for the indexes of a map: until cuindex_map_free), so a
 * caller copies what it keeps beyond that.
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

/* ---- the units of one Dwarf: which unit holds an address ----
 *
 * A unit's ranges are those of its CU DIE (DW_AT_low_pc/high_pc or
 * DW_AT_ranges) and those .debug_aranges lists for it (clang writes none;
 * a section libdw cannot read adds none), so that either one leaving code
 * out loses nothing.  Units with neither fall back to the function ranges
 * of a walk. */
struct cuindex_map;

/* Read the unit headers of DW (borrowed; it must outlive the map) and their
 * ranges, keeping those that start inside VALID (see cuindex_new; copied).
 * Unit indexes are built on first use.  Returns NULL when out of memory;
 * the caller frees the map with cuindex_map_free(). */
struct cuindex_map *cuindex_map_new(Dwarf *dw, const struct cuindex_range *valid,
				    size_t nvalid);
/* cuindex_map_new, with ARANGES false taking every unit's ranges from its
 * DIE alone, not .debug_aranges (tests compare the two). */
struct cuindex_map *cuindex_map_new_opts(Dwarf *dw, const struct cuindex_range *valid,
					 size_t nvalid, bool aranges);

/* One unit range of a map: [lo, hi) and the offset of the unit's DIE. */
struct cuindex_maprange {
	uint64_t lo, hi, cuoff;
};

/* The map's unit ranges in its search order: writes at most MAX to OUT and
 * returns how many there are. */
size_t cuindex_map_ranges(const struct cuindex_map *map, struct cuindex_maprange *out,
			  size_t max);

/* The Dwarf the map reads. */
Dwarf *cuindex_map_dwarf(const struct cuindex_map *map);

/* Frees the map and every unit index it built; NULL is a no-op. */
void cuindex_map_free(struct cuindex_map *map);

/* ---- a map kept from an earlier run ----
 *
 * Making a map reads every unit's DIE and .debug_aranges and sorts the
 * ranges: milliseconds for a large program, spent again by each thread.
 * A map can instead be described (its units' DIE offsets and its ranges)
 * and made again from that description for the same DWARF and VALID
 * ranges, reading nothing until a unit is used. */

/* Writes the DIE offsets of MAP's units (increasing) to OUT, at most MAX,
 * and returns how many there are; 0 when the map cannot be described (it
 * has split-DWARF units, whose DIEs are in other files). */
size_t cuindex_map_units(const struct cuindex_map *map, uint64_t *out, size_t max);

/* Whether UNITS[0..nunits) and RANGES[0..nranges) are a description a
 * map gives: units increasing, ranges in search order (by lo, hi, unit),
 * none reversed, each of one of the units. */
bool cuindex_map_desc_ok(const uint64_t *units, size_t nunits,
			 const struct cuindex_maprange *ranges, size_t nranges);

/* A map of DW made from UNITS[0..nunits) and RANGES[0..nranges), as
 * cuindex_map_units and cuindex_map_ranges gave them for a map of the
 * same DWARF and VALID: the same answers, each unit's DIE read on first
 * use (a unit whose offset does not hold a unit DIE then has no index).
 * Returns NULL when out of memory or when the description is not one a
 * map gives (units not increasing, ranges out of order, a range of an
 * unknown unit: !cuindex_map_desc_ok). */
struct cuindex_map *cuindex_map_new_known(Dwarf *dw, const struct cuindex_range *valid,
					  size_t nvalid, const uint64_t *units, size_t nunits,
					  const struct cuindex_maprange *ranges, size_t nranges);

/* Indexes of the units whose ranges hold PC, building them as needed: at
 * most MAX written to OUT (owned by the map), the unit starting nearest
 * below PC first.  Returns how many. */
size_t cuindex_map_find(struct cuindex_map *map, uint64_t pc, struct cuindex **out,
			size_t max);

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

/* What a unit is known to hold, from an earlier run on the same DWARF:
 * its top-level function ranges (cuindex_tops) and its line table's
 * sequences (cuindex_seqs; may be none). */
struct cuindex_unitinfo {
	const struct cuindex_top *tops;
	size_t ntops;
	const struct cuindex_seq *seqs;
	size_t nseqs;
};

/* Gives the unit whose CU DIE is at offset CUOFF what U says (copied).
 * Lookups in that unit then index only the function holding the pc and
 * decode only the line-table sequence holding it; a pc that several
 * functions hold, a DIE that is not a top-level function of the unit, or
 * many lookups in one unit fall back to the full index, a sequence that
 * does not decode as described to the whole table.  Returns 0, or -1 (and
 * nothing changes) when no unit starts at CUOFF, the unit is a split-DWARF
 * one, it has ranges already, the ranges or sequences are not sorted and
 * apart, or out of memory. */
int cuindex_map_set_unit(struct cuindex_map *map, uint64_t cuoff,
			 const struct cuindex_unitinfo *u);

/* Calls FN with the CU offset, top-level ranges and sequences of every
 * unit of the map that has a full index built, until FN returns non-zero
 * (returned); -1 when out of memory. */
int cuindex_map_each_full(struct cuindex_map *map,
			  int (*fn)(void *arg, uint64_t cuoff, const struct cuindex_unitinfo *u),
			  void *arg);

/* DW_AT_comp_dir of the unit, or NULL. */
const char *cuindex_comp_dir(const struct cuindex *ci);

/* The CU DIE the index was built from. */
Dwarf_Die *cuindex_cudie(struct cuindex *ci);

#endif
