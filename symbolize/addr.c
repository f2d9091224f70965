#include <elf.h>
#include "symbolize/addr.h"

/* The PT_LOAD segment that holds X, a file offset (BY_OFFSET) or a
 * link-time address whose bytes are in the file; executable ones
 * preferred.  -1 when none does. */
static int segment_of(const struct symsegment *segs, size_t n, uint64_t x, bool by_offset)
{
	int best = -1;
	for (size_t i = 0; i < n; i++) {
		const struct symsegment *s = &segs[i];
		uint64_t start = by_offset ? s->offset : s->vaddr;
		uint64_t len = by_offset && s->memsz > s->filesz ? s->memsz : s->filesz;
		if (x < start || x - start >= len)
			continue;
		if (best < 0 || ((s->flags & PF_X) && !(segs[best].flags & PF_X)))
			best = (int)i;
	}
	return best;
}

int addr_rel_to_vaddr(const struct symsegment *segs, size_t n, uint64_t rel, uint64_t *vaddr)
{
	int k = segment_of(segs, n, rel, true);
	if (k < 0)
		return -1;
	*vaddr = rel - segs[k].offset + segs[k].vaddr;
	return 0;
}

int addr_vaddr_to_rel(const struct symsegment *segs, size_t n, uint64_t vaddr, uint64_t *rel)
{
	int k = segment_of(segs, n, vaddr, false);
	if (k < 0)
		return -1;
	*rel = vaddr - segs[k].vaddr + segs[k].offset;
	return 0;
}

bool addr_mapping_fits(const struct symsegment *segs, size_t n, uint64_t offset,
		       uint64_t len, bool exec)
{
	const uint64_t page = 4096;
	for (size_t i = 0; i < n; i++) {
		const struct symsegment *s = &segs[i];
		if (exec && !(s->flags & PF_X))
			continue;
		uint64_t seg_off = s->offset & ~(page - 1);
		/* the loader maps whole pages; large pages round further, so
		 * accept any page-aligned start inside the segment */
		if (offset < seg_off || offset > s->offset + s->filesz)
			continue;
		uint64_t seg_end = (s->offset + s->filesz + page - 1) & ~(page - 1);
		if (offset + len <= seg_end + 2 * 1024 * 1024)
			return true;
	}
	return false;
}
