#include <elf.h>
#include "symbolize/addr.h"

int addr_rel_to_vaddr(const struct symsegment *segs, size_t n, uint64_t rel, uint64_t *vaddr)
{
	int best = -1;
	for (size_t i = 0; i < n; i++) {
		const struct symsegment *s = &segs[i];
		if (rel < s->offset || rel - s->offset >= (s->filesz > s->memsz ? s->filesz : s->memsz))
			continue;
		if (best < 0 || ((s->flags & PF_X) && !(segs[best].flags & PF_X)))
			best = (int)i;
	}
	if (best < 0)
		return -1;
	*vaddr = rel - segs[best].offset + segs[best].vaddr;
	return 0;
}

int addr_vaddr_to_rel(const struct symsegment *segs, size_t n, uint64_t vaddr, uint64_t *rel)
{
	int best = -1;
	for (size_t i = 0; i < n; i++) {
		const struct symsegment *s = &segs[i];
		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		if (best < 0 || ((s->flags & PF_X) && !(segs[best].flags & PF_X)))
			best = (int)i;
	}
	if (best < 0)
		return -1;
	*rel = vaddr - segs[best].vaddr + segs[best].offset;
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
