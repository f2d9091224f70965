#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/addlib.h"
#include "lib/errors.h"

int addlib_apply(struct profile *p, const char *path, size_t *moved, char *err, size_t errlen)
{
	*moved = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return jh_err(err, errlen, JH_EIO, "--add_lib: cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return jh_err(err, errlen, JH_EIO, "--add_lib: '%s' is not a regular file", path);
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t phnum = 0;
	int rc = 0;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &phnum)) {
		rc = jh_err(err, errlen, JH_EFORMAT, "--add_lib: '%s' is not an ELF object file", path);
		goto out;
	}
	int64_t sid = strtab_intern(&p->strs, path);
	if (sid < 0) {
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	size_t segments = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    !ph.p_memsz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			continue;
		struct pf_mapping m = { .start = ph.p_vaddr, .limit = ph.p_vaddr + ph.p_memsz,
					.offset = ph.p_offset, .path = (uint32_t)sid,
					.kind = PF_MAP_FILE, .exec = true };
		int64_t n = profile_cover_unmapped(p, &m);
		if (n < 0) {
			rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
			goto out;
		}
		*moved += (size_t)n;
		segments++;
	}
	if (!segments)
		rc = jh_err(err, errlen, JH_EFORMAT, "--add_lib: '%s' has no executable segment", path);
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}
