/*
 * addr: every conversion between the address spaces an object file adds.
 *
 *   addr  - the runtime address written in the dump (a return address for
 *           every frame but the leaf)
 *   pc    - the lookup address: addr - 1 for callers (the call instruction),
 *           addr for the leaf; the model's (addr_pc() in
 *           analyzer/profile.h), since outputs show it too
 *   rel   - the file offset: pc - map_start + map_offset
 *   vaddr - the ELF link-time address: rel - p_offset + p_vaddr of the
 *           PT_LOAD segment that holds rel
 */
#ifndef JHEAP_ADDR_H
#define JHEAP_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbolize/symcache.h"

static inline uint64_t addr_rel(uint64_t pc, uint64_t map_start, uint64_t map_offset)
{
	return pc - map_start + map_offset;
}

/* Link-time address of file offset REL, through the PT_LOAD segment that
 * holds it (executable segments preferred).  Returns 0, or -1 when no
 * segment holds REL (the binary does not match the mapping). */
int addr_rel_to_vaddr(const struct symsegment *segs, size_t n, uint64_t rel, uint64_t *vaddr);

/* File offset of link-time address VADDR, through the PT_LOAD segment
 * whose file bytes hold it (executable segments preferred).  Returns 0,
 * or -1 when none does. */
int addr_vaddr_to_rel(const struct symsegment *segs, size_t n, uint64_t vaddr, uint64_t *rel);

/* Whether a mapping of LEN bytes at file offset OFFSET fits the ELF's
 * segments: some PT_LOAD starts at OFFSET's page and is at least as large,
 * as the loader would have mapped it.  Used to tell a BINARY that does not
 * match the dump. */
bool addr_mapping_fits(const struct symsegment *segs, size_t n, uint64_t offset,
		       uint64_t len, bool exec);

#endif
