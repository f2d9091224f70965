/*
 * objcheck: what jheap's symbolizer sees of an object file's code, for
 * tests that compare it with binutils and LLVM.
 *
 *   objcheck fdes FILE    one line "LO HI" (hex, link-time) per call-frame
 *                         entry symbolize/fdetab.c finds, in its order
 *   objcheck calls FILE   for each hex link-time address on standard
 *                         input, "ADDR 1" when the code before it ends
 *                         with a call instruction (symbolize/callcheck.c),
 *                         else "ADDR 0"
 *
 * An object without program headers (a .o file) gets one executable
 * segment per code section, at the section's address.
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/callcheck.h"
#include "symbolize/fdetab.h"

static int segments(Elf *elf, struct symsegment *segs, size_t max, size_t *n)
{
	size_t phnum = 0;
	*n = 0;
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && *n < max; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			segs[(*n)++] = (struct symsegment){ ph.p_offset, ph.p_filesz, ph.p_vaddr,
							    ph.p_memsz, ph.p_flags };
		}
	}
	if (*n)
		return 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) && *n < max;) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_type == SHT_PROGBITS)
			segs[(*n)++] = (struct symsegment){ sh.sh_offset, sh.sh_size, sh.sh_addr,
							    sh.sh_size, PF_X | PF_R };
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "fdes") && strcmp(argv[1], "calls"))) {
		fprintf(stderr, "usage: objcheck fdes|calls FILE\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	int fd = open(argv[2], O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh)) {
		fprintf(stderr, "objcheck: cannot read '%s'\n", argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "fdes")) {
		struct fdetab t = { 0 };
		uint64_t lo, hi;
		fdetab_find(&t, elf, 0, &lo, &hi);
		for (size_t i = 0; i < t.n; i++)
			printf("%llx %llx\n", (unsigned long long)t.v[i].lo, (unsigned long long)t.v[i].hi);
		fdetab_release(&t);
		elf_end(elf);
		close(fd);
		return 0;
	}
	size_t size = 0, nsegs = 0;
	const uint8_t *image = (const uint8_t *)elf_rawfile(elf, &size);
	struct symsegment segs[64];
	segments(elf, segs, 64, &nsegs);
	char line[256];
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t a = strtoull(line, NULL, 16);
		int yes = 0;
		for (size_t i = 0; i < nsegs; i++) {
			const struct symsegment *s = &segs[i];
			if (!(s->flags & PF_X) || a < s->vaddr || a - s->vaddr > s->filesz)
				continue;
			uint64_t off = a - s->vaddr + s->offset;
			size_t len = off < 15 ? (size_t)off : 15;
			if (off <= size)
				yes = callcheck_follows_call(eh.e_machine, image + off - len, len, a,
							     segs, nsegs) == 1;
			break;
		}
		printf("%llx %d\n", (unsigned long long)a, yes);
	}
	elf_end(elf);
	close(fd);
	return 0;
}
