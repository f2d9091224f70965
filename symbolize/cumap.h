/*
 * cumap: the units of one DWARF, and which of them holds an address.
 *
 * The map knows each unit's address ranges and builds the unit's index
 * (cuindex.h) the first time an address in it is asked for.  A unit's
 * ranges are those of its CU DIE (DW_AT_low_pc/high_pc or DW_AT_ranges)
 * and those .debug_aranges lists for it (clang writes none; a section
 * libdw cannot read, such as rustc 1.63's with terminators in the middle
 * of a unit's list, adds none), so that either one leaving code out loses
 * nothing: llvm-symbolizer and eu-addr2line trust a listed unit's aranges
 * alone.  Units with neither fall back to the function ranges of a walk.
 * tests/t0227 damages .debug_aranges three ways.
 *
 * What an earlier run learnt of the same DWARF (the persistent cache,
 * diskcache.h, keeps it) can make a map without reading every unit
 * header, and index only the function and decode only the line-table
 * sequence that hold a new address; each unit's DIE is then read when the
 * unit is first used.  A map with split-DWARF units is not described
 * (cumap_units), so a later run never reads every unit header looking for
 * a .dwo that could be a FIFO.  tests/unit/test_symcache.c compares the
 * map made from a description with the one read from the DWARF at every
 * range of the fixtures and of the installed debug files.
 */
#ifndef JHEAP_CUMAP_H
#define JHEAP_CUMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include "symbolize/cuindex.h"

struct cumap;

/* Read the unit headers of DW (borrowed; it must outlive the map) and their
 * ranges, keeping those that start inside VALID (see cuindex_new; copied).
 * Unit indexes are built on first use.  Returns NULL when out of memory;
 * the caller frees the map with cumap_free(). */
struct cumap *cumap_new(Dwarf *dw, const struct cuindex_range *valid,
			size_t nvalid);
/* cumap_new, with ARANGES false taking every unit's ranges from its
 * DIE alone, not .debug_aranges (tests compare the two). */
struct cumap *cumap_new_opts(Dwarf *dw, const struct cuindex_range *valid,
			     size_t nvalid, bool aranges);

/* One unit range of a map: [lo, hi) and the offset of the unit's DIE. */
struct cumap_range {
	uint64_t lo, hi, cuoff;
};

/* The map's unit ranges in its search order: writes at most MAX to OUT and
 * returns how many there are. */
size_t cumap_ranges(const struct cumap *map, struct cumap_range *out,
		    size_t max);

/* The Dwarf the map reads. */
Dwarf *cumap_dwarf(const struct cumap *map);

/* Frees the map and every unit index it built; NULL is a no-op. */
void cumap_free(struct cumap *map);

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
size_t cumap_units(const struct cumap *map, uint64_t *out, size_t max);

/* Whether UNITS[0..nunits) and RANGES[0..nranges) are a description a
 * map gives: units increasing, ranges in search order (by lo, hi, unit),
 * none reversed, each of one of the units. */
bool cumap_desc_ok(const uint64_t *units, size_t nunits,
		   const struct cumap_range *ranges, size_t nranges);

/* A map of DW made from UNITS[0..nunits) and RANGES[0..nranges), as
 * cumap_units and cumap_ranges gave them for a map of the
 * same DWARF and VALID: the same answers, each unit's DIE read on first
 * use (a unit whose offset does not hold a unit DIE then has no index).
 * Returns NULL when out of memory or when the description is not one a
 * map gives (units not increasing, ranges out of order, a range of an
 * unknown unit: !cumap_desc_ok). */
struct cumap *cumap_new_known(Dwarf *dw, const struct cuindex_range *valid,
			      size_t nvalid, const uint64_t *units, size_t nunits,
			      const struct cumap_range *ranges, size_t nranges);

/* Indexes of the units whose ranges hold PC, building them as needed: at
 * most MAX written to OUT (owned by the map), the unit starting nearest
 * below PC first.  Returns how many. */
size_t cumap_find(struct cumap *map, uint64_t pc, struct cuindex **out,
		  size_t max);

/* What a unit is known to hold, from an earlier run on the same DWARF:
 * its top-level function ranges (cuindex_tops) and its line table's
 * sequences (cuindex_seqs; may be none). */
struct cumap_unitinfo {
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
int cumap_set_unit(struct cumap *map, uint64_t cuoff,
		   const struct cumap_unitinfo *u);

/* Calls FN with the CU offset, top-level ranges and sequences of every
 * unit of the map that has a full index built, until FN returns non-zero
 * (returned); -1 when out of memory. */
int cumap_each_full(struct cumap *map,
		    int (*fn)(void *arg, uint64_t cuoff, const struct cumap_unitinfo *u),
		    void *arg);

#endif
